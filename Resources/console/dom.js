// Small DOM helpers. Everything is built with createElement and textContent, so data from the
// server is never parsed as HTML.
import { t, fieldProblem, dateTime, calendarDate, languages, messageLanguages } from "./i18n.js";
import { put, del } from "./api.js";
import { twitterURL, linkedinURL, telURL, mailtoURL } from "./links.js";

// The company's name: the server writes it into the page (application-name, empty before an
// admin gives one); a change on the Company screen shows at once through setCompanyName.
let companyName = (() => {
  const given = document.querySelector('meta[name="application-name"]')?.getAttribute("content")?.trim() ?? "";
  return given.includes("{{") ? "" : given;
})();
let titleText = "";

/// The company's name, or "Company console" in the reader's language before it has one.
export function brandName() { return companyName || t("app.brand"); }

/// The page's title: "Holidays · Acme Ltd" (just the name without `text`).
export function setTitle(text) {
  titleText = text ?? "";
  document.title = titleText ? `${titleText} · ${brandName()}` : brandName();
}

/// Shows the company's name in the header and the page's title (after a change, a new language).
export function setCompanyName(name) {
  if (name !== undefined) companyName = String(name ?? "").trim();
  const brand = document.getElementById("brand-name");
  if (brand) brand.textContent = brandName();
  setTitle(titleText);
}

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

/// An action that asks once more in place instead of a browser dialog: the button, then the
/// question with "yes" and "keep" buttons beside it. `onConfirm` returns true when it is done (the
/// row or screen usually redraws) or false to offer the button again. Returns the elements to place.
export function confirmInline({ label, question, yes, action, ariaLabel, danger = true, small = false, onConfirm }) {
  const size = small ? ".small" : "";
  const ask = h(`button.secondary${size}${danger ? ".danger" : ""}`, { type: "button", dataset: { action }, "aria-label": ariaLabel }, label);
  const sure = h(`button${size}${danger ? ".danger-solid" : ""}`, { type: "button", dataset: { action: `${action}-yes` }, hidden: true }, yes);
  const keep = h(`button.secondary${size}`, { type: "button", dataset: { action: `${action}-no` }, hidden: true }, t("admin.cancel"));
  const prompt = h("span.confirm-question", { role: "status", hidden: true }, question);
  const asking = (on) => { ask.hidden = on; sure.hidden = !on; keep.hidden = !on; prompt.hidden = !on; };
  ask.addEventListener("click", () => { asking(true); sure.focus(); });
  keep.addEventListener("click", () => { asking(false); ask.focus(); });
  sure.addEventListener("click", async () => {
    sure.disabled = true;
    let done = false;
    try { done = await onConfirm(); } finally { sure.disabled = false; }
    if (!done) asking(false);
  });
  return [ask, prompt, sure, keep];
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
  // A problem shown for a field goes away as soon as the person changes the field.
  const clear = () => {
    if (error.hidden) return;
    error.hidden = true;
    error.textContent = "";
    input.removeAttribute("aria-invalid");
  };
  input.addEventListener("input", clear);
  input.addEventListener("change", clear);
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
  // Focus the first invalid field in the form's own order (not the order the server listed them).
  const first = Object.entries(fields).find(([name]) => problems[name])?.[1];
  if (first) first.input.focus();
  return Boolean(first);
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

/// A language list: first what the console speaks, then the languages only messages are
/// translated into (their screens stay in English, which the groups' names say). `current` is
/// kept even when it is in neither list; `auto` adds a first, empty choice with that label.
export function languageSelect(attrs, current, { auto } = {}) {
  const option = ([code, label]) => h("option", { value: code, lang: code }, label);
  const known = [...languages, ...messageLanguages].some(([c]) => c === current);
  const select = h("select", attrs,
    auto ? h("option", { value: "" }, auto) : null,
    h("optgroup", { label: t("lang.console") }, ...languages.map(option)),
    h("optgroup", { label: t("lang.messagesOnly") }, ...messageLanguages.map(option),
      current && !known ? option([current, current]) : null));
  select.value = current ?? "";
  return select;
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

/// Plain text as nodes: line breaks kept (the element gets `white-space: pre-wrap` from .text),
/// and http(s) URLs made into links that open apart from the console. Nothing is parsed as HTML.
export function richText(text, tag = "p.text") {
  const el = h(tag);
  const source = String(text ?? "");
  const pattern = /\bhttps?:\/\/[^\s<>"']+/gi;
  let last = 0;
  for (const match of source.matchAll(pattern)) {
    // Sentence punctuation after a URL belongs to the sentence.
    const raw = match[0].replace(/[.,;:!?)\]]+$/, "");
    const start = match.index;
    let url = null;
    try { url = new URL(raw); } catch { /* not a URL after all: stays text */ }
    if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) continue;
    if (start > last) el.append(document.createTextNode(source.slice(last, start)));
    el.append(h("a", { href: url.href, rel: "noopener noreferrer", target: "_blank" }, raw));
    last = start + raw.length;
  }
  if (last < source.length) el.append(document.createTextNode(source.slice(last)));
  return el;
}

/// A <time> with the reader's local date and time, the exact instant in its datetime attribute.
export function when(iso) {
  return h("time", { datetime: iso }, dateTime(iso));
}

/// "Away until 5 Dec 2026" for someone on approved leave today (a user's `away`), else null.
export function awayBadge(away, id) {
  if (!away?.until) return null;
  return h("span.badge.away", { id, dataset: { until: away.until } }, t("person.away", { until: calendarDate(away.until) }));
}

/// A page-level message that cannot be used (a failed load), as an alert.
export function failure(error, fallback) {
  return h("p.notice.bad", { role: "alert" }, error && error.describe ? error.describe() : fallback);
}

/// An error in words for people: the server's, or "cannot be reached".
export function errorText(error) {
  return error && typeof error.describe === "function" ? error.describe() : t("err.network");
}

/// Sends a form: the button waits; on failure a 422's problems (plus `problems(error)`, for
/// codes such as email_taken) show next to their fields, the first one focused, and the error in
/// words (`describe(error)`, errorText by default) goes to `status`. Resolves to {ok, result} or
/// {ok: false, error}.
export async function submitForm({ button, fields, status, problems, describe = errorText }, send) {
  button.disabled = true;
  try {
    const result = await send();
    showFieldErrors(fields, {});
    return { ok: true, result };
  } catch (error) {
    showFieldErrors(fields, { ...(error?.fields ?? {}), ...(problems ? problems(error) : {}) });
    status.set("bad", describe(error));
    return { ok: false, error };
  } finally {
    button.disabled = false;
  }
}

/// Links to reach someone: email, phone, and their X and LinkedIn profiles (safe URLs only).
export function contactLinks(user, name) {
  const outside = (href, label, text, cls) => h("a." + cls, { href, target: "_blank", rel: "noopener noreferrer", "aria-label": label, title: label }, text);
  const links = [];
  const mail = mailtoURL(user.email);
  if (mail) links.push(h("a.contact.email", { href: mail, "aria-label": t("dir.email", { name }) }, user.email));
  const tel = telURL(user.phone);
  if (tel) links.push(h("a.contact.phone", { href: tel, "aria-label": t("dir.call", { name }) }, user.phone));
  const tw = twitterURL(user.twitter);
  if (tw) links.push(outside(tw, t("dir.twitter", { name }), "@" + user.twitter.replace(/^@/, ""), "contact.twitter"));
  const li = linkedinURL(user.linkedin);
  if (li) links.push(outside(li, t("dir.linkedin", { name }), "LinkedIn", "contact.linkedin"));
  return links;
}

const maxPictureBytes = 2 * 1024 * 1024;  // the server's limit, which stays
const maxPictureSide = 1024;
const pictureQualities = [0.85, 0.7, 0.5];

/// Thrown by `smallerPicture`: `key` says why in words.
class PictureProblem extends Error {
  constructor(key) { super(key); this.key = key; }
}

/// The canvas's bytes as `type` (null when the browser cannot write that type).
function encode(canvas, type, quality) {
  return new Promise((resolve) => canvas.toBlob((blob) => resolve(blob && blob.type === type ? blob : null), type, quality));
}

/// A phone's photo as the server takes it: turned upright (EXIF orientation), at most
/// `maxPictureSide` pixels on its longest side, written as WebP (JPEG where the browser cannot
/// write WebP), which also leaves out the photo's metadata (such as where it was taken).
export async function smallerPicture(file) {
  let bitmap;
  try {
    bitmap = await createImageBitmap(file, { imageOrientation: "from-image" });
  } catch {
    throw new PictureProblem("profile.notImage");
  }
  const scale = Math.min(1, maxPictureSide / Math.max(bitmap.width, bitmap.height));
  const canvas = document.createElement("canvas");
  canvas.width = Math.max(1, Math.round(bitmap.width * scale));
  canvas.height = Math.max(1, Math.round(bitmap.height * scale));
  const g = canvas.getContext("2d");
  g.fillStyle = "#fff";  // JPEG has no transparency: white behind it rather than black
  g.fillRect(0, 0, canvas.width, canvas.height);
  g.imageSmoothingQuality = "high";
  g.drawImage(bitmap, 0, 0, canvas.width, canvas.height);
  bitmap.close();
  for (const quality of pictureQualities) {
    const blob = (await encode(canvas, "image/webp", quality)) ?? (await encode(canvas, "image/jpeg", quality));
    if (!blob) throw new PictureProblem("profile.notImage");
    if (blob.size <= maxPictureBytes) return blob;
  }
  throw new PictureProblem("profile.tooBig");
}

/// Choose/remove controls for a picture at `path` (PUT uploads, DELETE removes); `changed(url)`
/// hears the new avatarUrl (null once removed). {controls, status} to place in a screen.
export function pictureControls({ path, idPrefix, hasPicture, chooseLabel, uploaded, removed, changed }) {
  const status = notice();
  // Any picture the browser can read: phones offer their photos under image/*.
  const file = h("input.visually-hidden", { id: `${idPrefix}-file`, type: "file", accept: "image/*" });
  const choose = h("label.button", { for: `${idPrefix}-file` }, chooseLabel);
  const remove = h("button.secondary", { type: "button", id: `${idPrefix}-remove`, hidden: !hasPicture }, t("profile.remove"));
  const show = (url) => { remove.hidden = !url; changed(url); };
  file.addEventListener("change", async () => {
    const chosen = file.files && file.files[0];
    file.value = "";
    if (!chosen) return;
    status.set("", t("profile.preparing"));
    let picture;
    try {
      picture = await smallerPicture(chosen);
    } catch (error) {
      status.set("bad", t(error instanceof PictureProblem ? error.key : "profile.notImage"));
      return;
    }
    status.set("", t("profile.uploading"));
    try {
      const { avatarUrl } = await put(path, picture);
      show(avatarUrl);
      status.set("ok", uploaded);
    } catch (error) {
      status.set("bad", errorText(error));
    }
  });
  remove.addEventListener("click", async () => {
    try {
      await del(path);
      show(null);
      status.set("ok", removed);
    } catch (error) {
      status.set("bad", errorText(error));
    }
  });
  return { controls: h("div.actions", {}, file, choose, remove), status };
}
