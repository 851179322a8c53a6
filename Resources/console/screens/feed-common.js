// The company feed, shared by Home and the Settings screen: entries as safe links, and each feed's
// last fetch in words. Feed text only ever reaches the page through textContent (h()), and a link
// is made only from an absolute http(s) URL, opened in a new tab without access to this one.
import { t, tn, fieldProblem } from "../i18n.js";
import { h, when } from "../dom.js";

/// Whether `url` may be a link: an absolute http or https URL (the server checked it already).
export function safeURL(url) {
  return typeof url === "string" && /^https?:\/\/[^\s]+$/i.test(url) ? url : null;
}

/// One entry: its title (a link when it has a safe URL), then its source and date.
export function feedEntry(item) {
  const url = safeURL(item.url);
  const title = url
    ? h("a.feed-link", { href: url, target: "_blank", rel: "noopener noreferrer" }, item.title, h("span.sr-only", {}, " " + t("feed.newTab")))
    : h("span.feed-title", {}, item.title);
  return h("li.feed-item", {}, title,
    h("p.meta", {}, item.source, item.publishedAt ? [" · ", when(item.publishedAt)] : null));
}

// The server explains a failed fetch in English; these put the common reasons in the reader's
// language. Anything else is shown as the server wrote it.
const reasons = [
  [/^the server could not be reached/, () => t("feed.why.unreachable")],
  [/^the server's name could not be found/, () => t("feed.why.name")],
  [/^the server took too long/, () => t("feed.why.slow")],
  [/^the server answered (\d+)/, (m) => t("feed.why.status", { status: m[1] })],
  [/^the feed is larger than/, () => t("feed.why.large")],
  [/^the feed is not well-formed XML/, () => t("feed.why.malformed")],
  [/^the document is not an RSS or Atom feed|^the RSS feed has no/, () => t("feed.why.notFeed")],
  [/^the secure connection failed/, () => t("feed.why.tls")],
  [/^the server redirected/, () => t("feed.why.redirect")],
  [/^this address is inside the company's network/, () => t("feed.why.internal")],
];

/// The words of the first of `patterns` matching `message`, else `otherwise(message)`.
function translated(patterns, message, otherwise = (text) => text) {
  const text = String(message ?? "");
  for (const [re, make] of patterns) {
    const m = text.match(re);
    if (m) return make(m);
  }
  return otherwise(text);
}

/// Why a feed could not be read, in the reader's language where the reason is a known one.
export function reason(error) {
  return translated(reasons, error);
}

/// A feed's state in words: waiting for its first read, read (when, how many entries), or not
/// readable (why, and since when the entries shown are from).
export function feedState(feed) {
  if (feed.status === "pending") return h("span.feed-state", {}, t("feed.state.pending"));
  if (feed.status === "ok") {
    return h("span.feed-state", {}, tn("feed.state.ok", feed.entryCount ?? 0), " ", feed.lastFetchedAt ? when(feed.lastFetchedAt) : null);
  }
  return h("span.feed-state.bad", {}, t("feed.state.error", { why: reason(feed.error) }),
    feed.lastSuccessAt ? [" ", t("feed.state.lastGood"), " ", when(feed.lastSuccessAt)] : null);
}

const urlProblems = [
  [/^must be an http:\/\/ or https:\/\/ address/, () => t("feed.problem.scheme")],
  [/^must not contain a user name or password/, () => t("feed.problem.credentials")],
  [/^is not a valid web address/, () => t("feed.problem.invalid")],
  [/^must list at most (\d+) feeds/, (m) => t("feed.problem.tooMany", { n: m[1] })],
];

/// A refused feed address in the reader's language.
export function urlProblem(message) {
  return translated(urlProblems, message, fieldProblem);
}
