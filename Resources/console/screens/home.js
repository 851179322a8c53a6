// Home: personal updates ("Updates for you", unread first), pinned company notices, then the
// most recent ones. For an admin of a company that has just
// started, a short checklist of first steps (each ticked from what the server says, each linking
// to its screen), gone once everything is done. With the holidays module: for an admin, how many
// holiday requests wait for a decision; for everyone, their days left and their requests still
// to come with their status. Both follow holiday.updated live. Under the notices, the newest
// entries of the company's feeds (its blog, its news account), and for an admin a note for each
// feed that could not be read.
import { get, ApiError } from "../api.js";
import { t, tn } from "../i18n.js";
import { h, failure } from "../dom.js";
import { summary } from "./notices.js";
import { days, dateRange, statusBadge, today, thisYear } from "./holidays-common.js";
import { feedEntry, reason } from "./feed-common.js";

const recentCount = 5;
const feedCount = 8;

/// The admin's first steps, each {key, route, done}; failures count as "not done yet".
async function firstSteps() {
  const quiet = (promise) => promise.catch(() => null);
  const [company, settings, users, notices] = await Promise.all([
    quiet(get("/company")),
    quiet(get("/admin/settings")),
    quiet(get("/users?status=all&limit=1")),
    quiet(get("/notices?limit=200")),
  ]);
  return [
    { key: "company", route: "#/company", done: Boolean(company?.name?.trim()) },
    { key: "settings", route: "#/admin/settings", done: Boolean(settings?.updatedAt) },
    { key: "team", route: "#/admin/users", done: Number(users?.total) > 1 },
    { key: "notice", route: "#/notices", done: Boolean(notices?.items?.some((n) => n.kind === "company")) },
  ];
}

function checklist(steps) {
  const left = steps.filter((s) => !s.done).length;
  return h("section.card.checklist", { id: "home-checklist", "aria-labelledby": "checklist-title" },
    h("h2", { id: "checklist-title" }, t("home.checklist.title")),
    h("p.muted", {}, t("home.checklist.intro", { left, total: steps.length })),
    h("ol.steps", {}, ...steps.map((step) => h("li.step" + (step.done ? ".done" : ""), { dataset: { step: step.key, done: String(step.done) } },
      h("span.tick", { "aria-hidden": "true" }, step.done ? "✓" : ""),
      h("span.sr-only", {}, step.done ? t("home.checklist.done") + ": " : t("home.checklist.todo") + ": "),
      h("a", { href: step.route }, t("home.checklist." + step.key))))));
}

export async function render(root, ctx) {
  const name = ctx.me.displayName || ctx.me.username;
  root.append(h("div.page-head", {}, h("h1", {}, t("home.hello", { name }))));
  const checklistSlot = h("div", { id: "home-checklist-slot" });
  const holidaySlot = h("div", { id: "home-holidays-slot" });
  root.append(checklistSlot, holidaySlot);
  const content = h("div", { id: "home-notices", "aria-busy": "true" });
  const feedSlot = h("div", { id: "home-feed-slot" });
  root.append(content, feedSlot);

  const stepsPromise = ctx.isAdmin ? firstSteps() : Promise.resolve(null);
  const holidays = ctx.hasPage("holidays");
  await Promise.all([loadNotices(ctx, content), holidays ? loadHolidays(ctx, holidaySlot) : null, loadFeed(ctx, feedSlot)]);
  const steps = await stepsPromise;
  if (!ctx.alive()) return null;
  if (steps && steps.some((s) => !s.done)) checklistSlot.replaceChildren(checklist(steps));
  // A notice posted while Home is open shows up at once; so does a holiday request or decision
  // (which also brings its notice for the person concerned).
  const offs = [
    ctx.realtime?.on("notice.created", () => { if (ctx.alive()) loadNotices(ctx, content); }),
    ctx.realtime?.on("notices.read", () => { if (ctx.alive()) loadNotices(ctx, content); }),
    holidays ? ctx.realtime?.on("holiday.updated", () => { if (ctx.alive()) { loadHolidays(ctx, holidaySlot); loadNotices(ctx, content); } }) : null,
    holidays ? ctx.realtime?.on("resync", () => { if (ctx.alive()) loadHolidays(ctx, holidaySlot); }) : null,
  ];
  return () => offs.forEach((off) => off?.());
}

let holidaySequence = 0;

/// The holidays card: pending requests for an admin, my days left and coming requests for all.
async function loadHolidays(ctx, slot) {
  const mine = ++holidaySequence;
  const quiet = (promise) => promise.catch(() => null);
  const [pending, my] = await Promise.all([
    ctx.isAdmin && ctx.hasPage("admin-holidays") ? quiet(get("/admin/holidays?status=pending")) : null,
    quiet(get(`/holidays?year=${thisYear()}`)),
  ]);
  if (mine !== holidaySequence || !ctx.alive()) return;
  const cards = [];
  if (pending) {
    const n = (Array.isArray(pending.items) ? pending.items : []).filter((r) => r.status === "pending").length;
    cards.push(h("section.card.home-pending", { "aria-labelledby": "home-pending-title" },
      h("h2", { id: "home-pending-title" }, t("home.pendingTitle")),
      h("p", {}, h("strong.big-number", { id: "home-pending-count", dataset: { count: n } }, String(n)), " ",
        h("span", { id: "home-pending-words" }, tn("home.pendingWords", n))),
      h("p", {}, h("a", { href: "#/admin/holidays?status=pending&year=", id: "home-pending-link" }, t("home.pendingLink")))));
  }
  if (my) {
    const sum = my.summary ?? my;
    const coming = (Array.isArray(my.requests) ? my.requests : [])
      .filter((r) => (r.status === "pending" || r.status === "approved") && r.end >= today())
      .sort((a, b) => a.start.localeCompare(b.start));
    cards.push(h("section.card", { "aria-labelledby": "home-my-holidays-title" },
      h("h2", { id: "home-my-holidays-title" }, t("home.myHolidays")),
      h("p", { id: "home-remaining" }, t("home.remaining", { days: days(sum.remainingDays), left: sum.remainingDays, year: sum.year ?? thisYear() })),
      coming.length ? h("ul.plain-list", { id: "home-my-requests" }, ...coming.map((r) => h("li", { dataset: { requestId: r.id, status: r.status } },
        dateRange(r), " ", statusBadge(r.status)))) : null,
      h("p", {}, h("a", { href: "#/holidays" }, t("home.toHolidays")))));
  }
  slot.replaceChildren(...cards);
}

async function loadNotices(ctx, content) {
  let result;
  let mine;
  try {
    // Company news in "Pinned" and "Latest notices"; personal updates in "Updates for you".
    [result, mine] = ctx.hasPage("notices")
      ? await Promise.all([get("/notices?limit=50&kind=company"), get(`/notices?limit=${mineCount * 4}&kind=holiday`)])
      : [{ items: [] }, { items: [] }];
  } catch (error) {
    if (!ctx.alive()) return;
    content.replaceChildren(failure(error instanceof ApiError ? error : null, t("err.network")));
    return;
  }
  if (!ctx.alive()) return;

  const items = Array.isArray(result.items) ? result.items : [];
  const pinned = items.filter((n) => n.pinned);
  const recent = items.filter((n) => !n.pinned).slice(0, recentCount);
  const sections = [];
  if (pinned.length) {
    sections.push(h("section.card", { "aria-labelledby": "home-pinned-title" },
      h("h2", { id: "home-pinned-title" }, t("home.pinned")),
      h("ul.notice-list", { id: "home-pinned" }, ...pinned.map((n) => summary(n, { heading: "h3" })))));
  }
  sections.push(h("section.card", { "aria-labelledby": "home-recent-title" },
    h("h2", { id: "home-recent-title" }, t("home.recent")),
    recent.length
      ? h("ul.notice-list", { id: "home-recent" }, ...recent.map((n) => summary(n, { heading: "h3" })))
      : h("p.empty", { id: "home-empty" }, t(pinned.length ? "home.noMore" : "home.empty")),
    h("p", {}, h("a", { href: "#/notices" }, t("home.allNotices")))));
  const updates = updatesForYou(mine);
  if (updates) sections.unshift(updates);
  content.replaceChildren(...sections);
  content.setAttribute("aria-busy", "false");
}

// --- Updates for you: personal notices (holiday decisions), unread first ---
const mineCount = 5;

/// The card of personal updates, unread first then newest, or nothing when there are none.
function updatesForYou(page) {
  const items = (Array.isArray(page?.items) ? page.items : [])
    .slice().sort((a, b) => Number(a.read) - Number(b.read) || b.id - a.id).slice(0, mineCount);
  if (!items.length) return null;
  return h("section.card", { "aria-labelledby": "home-mine-title" },
    h("h2", { id: "home-mine-title" }, t("home.mine")),
    h("ul.notice-list", { id: "home-mine" }, ...items.map((n) => summary(n, { heading: "h3" }))),
    h("p", {}, h("a", { href: "#/notices?tab=mine", id: "home-mine-all" }, t("home.allMine"))));
}

/// The company's feed under the notices: nothing when it has no entries (and, for an admin, no
/// broken feed to mention). A failure to load it leaves Home as it is.
async function loadFeed(ctx, slot) {
  const quiet = (promise) => promise.catch(() => null);
  const [feed, feeds] = await Promise.all([
    quiet(get(`/company/feed?limit=${feedCount}`)),
    ctx.isAdmin ? quiet(get("/admin/company/feeds")) : null,
  ]);
  if (!ctx.alive()) return;
  const items = Array.isArray(feed?.items) ? feed.items : [];
  const broken = (Array.isArray(feeds?.items) ? feeds.items : []).filter((f) => f.status === "error");
  if (!items.length && !broken.length) { slot.replaceChildren(); return; }
  slot.replaceChildren(h("section.card.home-feed", { id: "home-feed", "aria-labelledby": "home-feed-title" },
    h("h2", { id: "home-feed-title" }, t("feed.title")),
    items.length ? h("ul.feed-list", { id: "home-feed-list" }, ...items.map(feedEntry)) : null,
    ...broken.map((f) => h("p.hint.feed-broken", { dataset: { url: f.url } },
      t("feed.broken", { feed: f.title || f.url, why: reason(f.error) }), " ",
      h("a", { href: "#/admin/settings" }, t("feed.toSettings"))))));
}
