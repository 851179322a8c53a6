// The team calendar (#/calendar?month=YYYY-MM): who is away in a month. A month grid of weeks on
// wide screens, a list of people and their dates on a phone; previous and next month; public
// holidays marked. Admins also see pending requests (marked as such). A button gives me the
// private address of my calendar feed (POST /me/calendar-token), with Copy. Live on holiday.updated.
import { get, post } from "../api.js";
import { t, lang, calendarDate } from "../i18n.js";
import { h, notice, failure, copyButton, errorText } from "../dom.js";
import { parseDate, today, addDays, isoWeekday, publicHolidays, statusBadge, leaveTypes, typeName, dateRange } from "./holidays-common.js";

function monthParam(params) {
  const m = /^(\d{4})-(\d{2})$/.exec(params.get("month") ?? "");
  if (m && Number(m[2]) >= 1 && Number(m[2]) <= 12) return { y: Number(m[1]), m: Number(m[2]) };
  const now = today();
  return { y: Number(now.slice(0, 4)), m: Number(now.slice(5, 7)) };
}

const pad = (n) => String(n).padStart(2, "0");
const monthKey = ({ y, m }) => `${y}-${pad(m)}`;
function shift({ y, m }, by) {
  const index = y * 12 + (m - 1) + by;
  return { y: Math.floor(index / 12), m: (index % 12) + 1 };
}
function lastDay({ y, m }) { return new Date(Date.UTC(y, m, 0)).getUTCDate(); }

function monthTitle({ y, m }) {
  return new Intl.DateTimeFormat(lang(), { month: "long", year: "numeric", timeZone: "UTC" }).format(new Date(Date.UTC(y, m - 1, 1)));
}

function weekdayShort() {
  const format = new Intl.DateTimeFormat(lang(), { weekday: "short", timeZone: "UTC" });
  const long = new Intl.DateTimeFormat(lang(), { weekday: "long", timeZone: "UTC" });
  return [1, 2, 3, 4, 5, 6, 7].map((i) => ({ short: format.format(new Date(Date.UTC(2024, 0, i))), long: long.format(new Date(Date.UTC(2024, 0, i))) }));
}

function personLabel(item) {
  return item.displayName || t("chat.someone");
}

/// The month as a table of weeks (Monday first); each day lists who is away.
function grid(month, items, holidays) {
  const first = `${monthKey(month)}-01`;
  const last = `${monthKey(month)}-${pad(lastDay(month))}`;
  const names = weekdayShort();
  const rows = [];
  let day = addDays(first, 1 - isoWeekday(first));
  const now = today();
  while (day <= last) {
    const cells = [];
    for (let i = 0; i < 7; i++, day = addDays(day, 1)) {
      const inMonth = day >= first && day <= last;
      if (!inMonth) { cells.push(h("td.cal-out", {})); continue; }
      const away = items.filter((it) => it.start <= day && it.end >= day);
      const holiday = holidays.get(day);
      cells.push(h("td" + (day === now ? ".cal-today" : "") + (holiday ? ".cal-public" : ""), { dataset: { date: day } },
        h("span.cal-day", {}, h("span.sr-only", {}, calendarDate(day, "full")), h("span", { "aria-hidden": "true" }, String(Number(day.slice(8))))),
        holiday ? h("span.cal-holiday", {}, holiday) : null,
        away.length ? h("ul.cal-names", {}, ...away.map((it) => h("li" + (it.status === "pending" ? ".cal-pending" : ""), { dataset: { userId: it.userId } },
          personLabel(it), it.status === "pending" ? h("span.sr-only", {}, ` (${t("hol.status.pending")})`) : null))) : null));
    }
    rows.push(h("tr", {}, ...cells));
  }
  return h("table.cal-grid", { id: "cal-grid" },
    h("caption.sr-only", {}, t("cal.gridCaption", { month: monthTitle(month) })),
    h("thead", {}, h("tr", {}, ...names.map((n) => h("th", { scope: "col", abbr: n.long }, n.short)))),
    h("tbody", {}, ...rows));
}

/// The same month as a list: each absence with its dates (for phones and screen readers).
function list(items, holidays, types) {
  const entries = [...items].sort((a, b) => a.start.localeCompare(b.start) || personLabel(a).localeCompare(personLabel(b)));
  const publicEntries = [...holidays.entries()].sort();
  return h("div.cal-list", { id: "cal-list" },
    entries.length
      ? h("ul.hol-list", {}, ...entries.map((it) => h("li.hol-item", { dataset: { userId: it.userId, status: it.status } },
        h("div.hol-item-head", {}, h("strong.hol-who", {}, personLabel(it)),
          h("span.hol-dates", {}, dateRange(it)),
          it.status === "pending" ? statusBadge("pending") : null),
        it.type ? h("p.meta", {}, typeName(it.type, types)) : null)))
      : h("p.empty", { id: "cal-empty" }, t("cal.nobody")),
    publicEntries.length
      ? h("p.meta", {}, t("cal.public") + ": " + publicEntries.map(([date, name]) => `${calendarDate(date)} (${name})`).join(", "))
      : null);
}

/// "Get my calendar link": a private address calendar apps subscribe to; asking again replaces it.
function feedCard() {
  const status = notice();
  const slot = h("div", { id: "cal-feed-slot" });
  const button = h("button.secondary", { type: "button", id: "cal-feed" }, t("cal.feed"));
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const { url } = await post("/me/calendar-token");
      const input = h("input.secret-value", { id: "cal-feed-url", readonly: true, value: url, "aria-label": t("cal.feedUrl") });
      slot.replaceChildren(h("div.secret-row", {}, input, copyButton(url, input)), h("p.hint", {}, t("cal.feedHint")));
      button.textContent = t("cal.feedAgain");
      status.set();
    } catch (error) {
      status.set("bad", errorText(error));
    } finally {
      button.disabled = false;
    }
  });
  return h("section.card", { "aria-labelledby": "cal-feed-title" },
    h("h2", { id: "cal-feed-title" }, t("cal.feedTitle")), h("p.muted", {}, t("cal.feedIntro")), h("div.actions", {}, button), slot, status);
}

export async function render(root, ctx) {
  const month = monthParam(ctx.params);
  const prev = shift(month, -1);
  const next = shift(month, 1);
  const body = h("div", { id: "cal-body", "aria-busy": "true" });
  // (DOM append would write a null out as text, hence the filter.)
  root.append(...[
    h("div.page-head", {}, h("h1", {}, t("cal.title")),
      ctx.hasPage("holidays") ? h("p", {}, h("a", { href: "#/holidays" }, t("cal.toMine"))) : null),
    h("div.cal-nav", {},
      h("a.button.secondary", { href: `#/calendar?month=${monthKey(prev)}`, id: "cal-prev", "aria-label": t("cal.prevNamed", { month: monthTitle(prev) }) }, "‹ " + t("cal.prev")),
      h("h2.cal-month", { id: "cal-month", "aria-live": "polite" }, monthTitle(month)),
      h("a.button.secondary", { href: `#/calendar?month=${monthKey(next)}`, id: "cal-next", "aria-label": t("cal.nextNamed", { month: monthTitle(next) }) }, t("cal.next") + " ›")),
    ctx.isAdmin ? h("p.hint", {}, t("cal.adminHint")) : null,
    body, feedCard()].filter(Boolean));

  const from = `${monthKey(month)}-01`;
  const to = `${monthKey(month)}-${pad(lastDay(month))}`;
  const holidaysOf = publicHolidays();
  const typesPromise = leaveTypes();
  async function load() {
    try {
      const [result, publicList, types] = await Promise.all([
        get(`/holidays/calendar?from=${from}&to=${to}`),
        holidaysOf(month.y),
        typesPromise,
      ]);
      if (!ctx.alive()) return;
      const items = (Array.isArray(result.items) ? result.items : []).filter((it) => parseDate(it.start) && parseDate(it.end));
      const holidays = new Map(publicList.filter((p) => p.date >= from && p.date <= to).map((p) => [p.date, p.name]));
      body.replaceChildren(h("div.cal-wide", {}, grid(month, items, holidays)), list(items, holidays, types));
      body.setAttribute("aria-busy", "false");
    } catch (error) {
      if (ctx.alive()) body.replaceChildren(failure(error, t("err.network")));
    }
  }
  await load();
  const offs = [ctx.realtime?.on("holiday.updated", () => { if (ctx.alive()) load(); }),
    ctx.realtime?.on("resync", () => { if (ctx.alive()) load(); })];
  return () => offs.forEach((off) => off?.());
}
