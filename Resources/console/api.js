// The one way the console talks to the server: JSON in and out, the session cookie, the CSRF
// token on unsafe methods, and errors turned into ApiError values with words for people.
import { t, inWords } from "./i18n.js";

const csrfKey = "sgem.csrf";
const unsafe = new Set(["POST", "PUT", "PATCH", "DELETE"]);
let onUnauthenticated = () => {};
let onPasswordChange = () => {};

/// An error answer from the server (or no answer at all: status 0).
export class ApiError extends Error {
  constructor(status, code, message, details = {}, retryAfter = null) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details ?? {};
    this.retryAfter = retryAfter;
  }

  /// The field problems of a 422, by field name.
  get fields() { return this.details.fields ?? {}; }

  /// What to tell the user, in their language; never raw JSON.
  describe() {
    if (this.status === 0) return t("err.network");
    if (this.code === "rate_limited") {
      return this.retryAfter ? t("err.rate_limited", { when: inWords(this.retryAfter) }) : t("err.rate_limited_plain");
    }
    const key = "err." + this.code;
    const text = t(key);
    if (text !== key) return text;
    if (this.status >= 500) return t("err.internal");
    return t("err.unknown", { status: this.status });
  }
}

export function csrfToken() {
  try { return localStorage.getItem(csrfKey); } catch { return null; }
}

export function setCsrfToken(token) {
  try {
    if (token) localStorage.setItem(csrfKey, token);
    else localStorage.removeItem(csrfKey);
  } catch { /* without storage the session lasts this page only */ }
}

/// Called when the session is gone (401, or a CSRF failure): the shell shows the login screen.
export function setUnauthenticatedHandler(fn) { onUnauthenticated = fn; }

/// Called on 403 password_change_required: the shell shows "Choose your own password".
export function setPasswordChangeHandler(fn) { onPasswordChange = fn; }

/// Calls `path` under /api/v1. `body` is sent as JSON unless it is a Blob (sent raw with its
/// type). Resolves to the parsed JSON (null for 204); rejects with ApiError.
export async function api(method, path, body, { raw = false, quiet401 = false } = {}) {
  const headers = { Accept: "application/json" };
  let payload;
  if (body instanceof Blob) {
    payload = body;
    headers["Content-Type"] = body.type || "application/octet-stream";
  } else if (body !== undefined) {
    payload = JSON.stringify(body);
    headers["Content-Type"] = "application/json";
  }
  if (unsafe.has(method)) {
    const token = csrfToken();
    if (token) headers["X-CSRF-Token"] = token;
  }
  let res;
  try {
    res = await fetch("/api/v1" + path, { method, headers, body: payload, credentials: "same-origin", cache: "no-store" });
  } catch {
    throw new ApiError(0, "network", "network error");
  }
  if (res.ok) {
    if (raw) return res;
    if (res.status === 204) return null;
    const type = res.headers.get("Content-Type") || "";
    return type.includes("json") ? res.json() : null;
  }
  let error = {};
  try { error = (await res.json()).error ?? {}; } catch { /* not JSON: keep the status */ }
  const retry = Number.parseInt(res.headers.get("Retry-After") ?? "", 10);
  const err = new ApiError(res.status, error.code || "http_" + res.status, error.message || res.statusText, error.details,
                           Number.isFinite(retry) ? retry : null);
  const sessionGone = res.status === 401 && path !== "/auth/login";
  if ((sessionGone && !quiet401) || err.code === "csrf_failed") {
    setCsrfToken(null);
    onUnauthenticated(err);
  }
  if (err.code === "password_change_required") onPasswordChange(err);
  throw err;
}

export const get = (path, opts) => api("GET", path, undefined, opts);
export const post = (path, body, opts) => api("POST", path, body, opts);
export const put = (path, body, opts) => api("PUT", path, body, opts);
export const patch = (path, body, opts) => api("PATCH", path, body, opts);
export const del = (path, opts) => api("DELETE", path, undefined, opts);
