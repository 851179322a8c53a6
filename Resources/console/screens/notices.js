// Placeholder until this screen lands (issue 7).
export { render } from "./soon.js";
