// Placeholder until the chat screens land (issue 8).
export { render } from "./soon.js";
