// Small DOM helpers. Everything is built with createElement and textContent, so data from the
// server is never parsed as HTML.
import { t, fieldProblem } from "./i18n.js";

/// h("p.note", {id: "x", onclick: fn}, "text", child, ...) → an element.
export function h(tag, attrs = {}, ...children) {
  const [name, ...classes] = tag.split(".");
  const el = document.createElement(name || "div");
  if (classes.length) el.className = classes.join(" ");
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key === "value" || key === "checked") el[key] = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

let uid = 0;

/// A labelled form field with a slot for its problem: {wrap, input, error}.
export function field(label, input, hint) {
  const id = input.id || `f${++uid}`;
  input.id = id;
  const error = h("p.field-error", { id: `${id}-error`, role: "alert", hidden: true });
  const hintEl = hint ? h("p.hint", { id: `${id}-hint` }, hint) : null;
  const describedBy = [hintEl && `${id}-hint`, `${id}-error`].filter(Boolean).join(" ");
  input.setAttribute("aria-describedby", describedBy);
  const wrap = input.type === "checkbox"
    ? h("div.field.check", {}, input, h("label", { for: id }, label), hintEl, error)
    : h("div.field", {}, h("label", { for: id }, label), input, hintEl, error);
  return { wrap, input, error };
}

/// Shows each `details.fields` problem next to its field (by name); clears the others.
export function showFieldErrors(fields, problems = {}) {
  for (const [name, f] of Object.entries(fields)) {
    const problem = problems[name];
    f.error.textContent = problem ? fieldProblem(problem) : "";
    f.error.hidden = !problem;
    if (problem) f.input.setAttribute("aria-invalid", "true");
    else f.input.removeAttribute("aria-invalid");
  }
  const first = Object.keys(problems).map((n) => fields[n]).find(Boolean);
  if (first) first.input.focus();
}

/// A status line: set(kind, text) with kind "ok", "bad" or "" (neutral); set() hides it.
export function notice() {
  const el = h("p.notice", { role: "status", "aria-live": "polite", hidden: true });
  el.set = (kind, text) => {
    el.className = "notice" + (kind ? " " + kind : "");
    el.textContent = text ?? "";
    el.hidden = !text;
  };
  return el;
}

/// The first letters of up to two words of a name, for a picture placeholder.
export function initials(name) {
  const words = String(name ?? "").trim().split(/\s+/).filter(Boolean);
  const letters = words.slice(0, 2).map((w) => Array.from(w)[0].toUpperCase());
  return letters.join("") || "?";
}

/// A user's picture, or their initials on a colour derived from the id when there is none.
export function avatar(user, size = "md") {
  if (user.avatarUrl) {
    return h("img.avatar." + size, { src: user.avatarUrl, alt: "", width: 96, height: 96, loading: "lazy", decoding: "async" });
  }
  return h(`span.avatar.${size}.initials.hue-${Number(user.id) % 8}`, { "aria-hidden": "true" }, initials(user.displayName || user.username));
}

/// A button that copies `text` to the clipboard and says so.
export function copyButton(text, input) {
  const button = h("button.secondary", { type: "button" }, t("admin.copy"));
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // No clipboard API (plain http on a LAN name): select the text so the user can copy it.
      if (input) { input.focus(); input.select(); }
      try { document.execCommand("copy"); } catch { /* the text stays selected */ }
    }
    button.textContent = t("admin.copied");
  });
  return button;
}
