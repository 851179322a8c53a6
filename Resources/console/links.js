// Safe outside links from profile data: only https URLs on the expected hosts, or URLs built
// from a handle with every character encoded. Anything else yields null and is not linked.

/// https://x.com/<handle> for a Twitter/X handle (with or without "@").
export function twitterURL(handle) {
  const h = String(handle ?? "").trim().replace(/^@/, "");
  return /^[A-Za-z0-9_]{1,15}$/.test(h) ? "https://x.com/" + encodeURIComponent(h) : null;
}

/// A LinkedIn profile: an https URL on linkedin.com as given, or /in/<name> for a bare name.
export function linkedinURL(value) {
  const v = String(value ?? "").trim();
  if (!v) return null;
  if (/^https:\/\//i.test(v)) {
    try {
      const url = new URL(v);
      const host = url.hostname.toLowerCase();
      if (url.protocol === "https:" && (host === "linkedin.com" || host.endsWith(".linkedin.com"))) return url.href;
    } catch { /* not a URL */ }
    return null;
  }
  return /^[A-Za-z0-9_-]{3,100}$/.test(v) ? "https://www.linkedin.com/in/" + encodeURIComponent(v) : null;
}

/// tel: with only the characters a dialler uses.
export function telURL(phone) {
  const digits = String(phone ?? "").replace(/[^0-9+]/g, "");
  return /\d/.test(digits) ? "tel:" + digits : null;
}

/// mailto: for an address, encoded so it cannot add headers.
export function mailtoURL(email) {
  const e = String(email ?? "").trim();
  return /^[^\s@]+@[^\s@]+$/.test(e) ? "mailto:" + encodeURIComponent(e).replace(/%40/g, "@") : null;
}

/// A website: an http(s) URL as given, or https:// in front of a bare host name; else null.
export function webURL(value) {
  const v = String(value ?? "").trim();
  if (!v || /\s/.test(v)) return null;
  const candidate = /^[a-z][a-z0-9+.-]*:/i.test(v) ? v : "https://" + v;
  try {
    const url = new URL(candidate);
    if ((url.protocol === "https:" || url.protocol === "http:") && url.hostname.includes(".")) return url.href;
  } catch { /* not a URL */ }
  return null;
}
