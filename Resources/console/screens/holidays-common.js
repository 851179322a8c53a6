// What the holiday screens share: calendar dates (YYYY-MM-DD, never shifted by a time zone), the
// working-day count of a request, the summary of a year, a request in a list with its status
// badge, leave-type names, year tabs, and the API's holiday errors in plain words.
import { get } from "../api.js";
import { t, lang, calendarDate } from "../i18n.js";
import { h, errorText } from "../dom.js";

export const statuses = ["pending", "approved", "rejected", "cancelled"];
export const noteLimit = 2000;  // the server's bound on a note

/// "2026-12-02" → {y, m, d}; null when it is not a real date.
export function parseDate(text) {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(String(text ?? ""));
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return null;
  return { y, m: mo, d };
}

/// A UTC Date at midnight of a calendar date (only ever read back in UTC, so no day shifts).
export function utcDate(text) {
  const p = parseDate(text);
  return p ? new Date(Date.UTC(p.y, p.m - 1, p.d)) : null;
}

/// The calendar date of a UTC-midnight Date.
export function ymd(date) {
  return date.toISOString().slice(0, 10);
}

/// Today's calendar date where the reader is.
export function today() {
  const now = new Date();
  return ymd(new Date(Date.UTC(now.getFullYear(), now.getMonth(), now.getDate())));
}

export function thisYear() { return Number(today().slice(0, 4)); }

export function addDays(text, n) {
  const d = utcDate(text);
  d.setUTCDate(d.getUTCDate() + n);
  return ymd(d);
}

/// ISO weekday (Monday 1 … Sunday 7) of a calendar date.
export function isoWeekday(text) {
  return ((utcDate(text).getUTCDay() + 6) % 7) + 1;
}

/// "3–7 Dec 2026", "2 Dec 2026", with the half days said in words.
export function dateRange(request) {
  const same = request.start === request.end;
  const parts = [same ? calendarDate(request.start) : `${calendarDate(request.start)} – ${calendarDate(request.end)}`];
  if (request.halfStart && request.halfEnd && same) parts.push(t("hol.half.both"));
  else {
    if (request.halfStart) parts.push(t(same ? "hol.half.afternoon" : "hol.half.startAfternoon"));
    if (request.halfEnd) parts.push(t(same ? "hol.half.morning" : "hol.half.endMorning"));
  }
  return parts.join(", ");
}

/// A number of days as people write it: "1 day", "2.5 days", "0,5 días".
export function days(n) {
  const value = Number(n);
  const text = new Intl.NumberFormat(lang(), { maximumFractionDigits: 1 }).format(Number.isFinite(value) ? value : 0);
  return t(value === 1 ? "hol.days.one" : "hol.days.other", { n: text });
}

/// The working days of a request: the company's working days minus its public holidays, each
/// half day at either end counting half. `holidays` is a Set of YYYY-MM-DD.
export function countWorkingDays({ start, end, halfStart, halfEnd }, workingDays, holidays) {
  if (!parseDate(start) || !parseDate(end) || end < start) return null;
  const working = (day) => workingDays.includes(isoWeekday(day)) && !holidays.has(day);
  let total = 0;
  for (let day = start, guard = 0; day <= end && guard < 800; day = addDays(day, 1), guard++) {
    if (working(day)) total += 1;
  }
  if (halfStart && working(start)) total -= 0.5;
  if (halfEnd && working(end)) total -= 0.5;
  return Math.max(0, total);
}

/// Public holidays by year, each year asked for once per screen: a Set of dates and the list.
export function publicHolidays() {
  const cache = new Map();
  return (year) => {
    if (!cache.has(year)) {
      cache.set(year, get(`/public-holidays?year=${encodeURIComponent(year)}`).then(
        (r) => (Array.isArray(r?.items) ? r.items : []), () => { cache.delete(year); return []; }));
    }
    return cache.get(year);
  };
}

/// Leave types by key, for names; asked for once per screen.
export async function leaveTypes() {
  try {
    const r = await get("/leave-types");
    return Array.isArray(r?.items) ? r.items : [];
  } catch {
    return [];
  }
}

/// The name of a leave type key in the reader's words: the name an admin gave it; the built-in
/// "vacation" in the reader's language until an admin renames it.
export function typeName(key, types) {
  const found = types.find((ty) => ty.key === key);
  if (!key || (key === "vacation" && (!found?.name || defaultVacationNames.has(found.name)))) return t("hol.type.vacation");
  return found?.name || String(key);
}
const defaultVacationNames = new Set(["Vacation", "Vacations", "Holiday", "Holidays"]);

export function statusBadge(status) {
  const known = statuses.includes(status) ? status : "pending";
  return h(`span.badge.hol-${known}`, { dataset: { status: known } }, t("hol.status." + known));
}

/// The year's numbers: allowance, carried over, approved, pending, remaining.
export function summaryList(summary, id) {
  const row = (key, value, cls = "") => h("li.sum-item" + cls, { dataset: { key } },
    h("span.sum-label", {}, t("hol.sum." + key)), " ", h("strong.sum-value", { id: id ? `${id}-${key}` : null }, days(value)));
  return h("ul.summary", { id },
    row("allowance", summary?.allowance),
    row("carriedOver", summary?.carriedOver),
    row("approved", summary?.approvedDays),
    row("pending", summary?.pendingDays),
    row("remaining", summary?.remainingDays, ".sum-remaining"));
}

/// Links to the years around `year` (the current page keeps its address, with ?year=).
export function yearTabs(route, year, { extra = "", label }) {
  const now = thisYear();
  const years = [...new Set([now - 1, now, now + 1, year])].sort((a, b) => a - b);
  return h("nav.tabs", { "aria-label": label },
    h("ul", {}, ...years.map((y) => h("li", {}, h("a", {
      href: `${route}?${extra}year=${y}`,
      "aria-current": y === year ? "page" : null,
      dataset: { year: y },
    }, String(y))))));
}

/// The year asked for in the address, or this year.
export function yearParam(params) {
  const y = Number(params.get("year"));
  return Number.isInteger(y) && y >= 1970 && y <= 9999 ? y : thisYear();
}

/// One request in a list: dates, days, type, status, the note; `actions` beside it.
export function requestItem(request, types, { actions = [], who = null, link = null } = {}) {
  const title = link ? h("a", { href: link }, dateRange(request)) : dateRange(request);
  return h("li.hol-item", { dataset: { requestId: request.id, status: request.status } },
    h("div.hol-item-head", {},
      who ? h("strong.hol-who", {}, who) : null,
      h("span.hol-dates", {}, title),
      statusBadge(request.status)),
    h("p.meta", {}, `${days(request.days)} · ${typeName(request.type, types)}`),
    request.note ? h("p.text.hol-note", {}, request.note) : null,
    request.decisionNote ? h("p.text.hol-decision", {}, h("span.muted", {}, t("hol.decisionNote") + ": "), request.decisionNote) : null,
    actions.length ? h("div.actions.hol-actions", {}, ...actions) : null);
}

/// The holiday errors of the API in plain words; the rest as any other error.
export function holidayError(error) {
  switch (error?.code) {
    case "holiday_overlap": return t("hol.err.overlap");
    case "allowance_exceeded": {
      // The year the refusal speaks of: a request across New Year may fit one year and not the next.
      const left = error.details?.remainingDays ?? error.details?.remaining;
      const year = error.details?.year;
      if (left === undefined || left === null || !Number.isInteger(year)) return t("hol.err.allowance");
      return t("hol.err.allowanceLeft", { days: days(left), left, year });
    }
    case "invalid_transition": return t("hol.err.transition");
    case "forbidden": return t("hol.err.forbidden");
    default: return errorText(error);
  }
}
