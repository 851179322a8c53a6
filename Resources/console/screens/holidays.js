// My holidays (#/holidays?year=Y): the year's summary (allowance, carried over, approved,
// pending, remaining), a form to ask for days off (dates, leave type, a half day at either end, a
// note) that counts the working days as the dates are picked, and my requests of the year with
// their status and Cancel while it is allowed. Live: a decision on one of my requests redraws the
// screen and is said in words (holiday.updated on the realtime stream).
import { get, post } from "../api.js";
import { t, calendarDate } from "../i18n.js";
import { h, field, showFieldErrors, notice, failure, submitForm } from "../dom.js";
import {
  parseDate, today, days, dateRange, countWorkingDays, publicHolidays, leaveTypes, typeName, summaryList,
  yearTabs, yearParam, requestItem, holidayError, noteLimit,
} from "./holidays-common.js";

/// The company's working days (ISO weekdays), which the year view carries; null from a server
/// that does not say (the form then leaves the count to the server, and says so).
function workingDaysOf(mine) {
  return Array.isArray(mine?.workingDays) && mine.workingDays.every(Number.isInteger) ? mine.workingDays : null;
}

/// Cancel with a second click to confirm, so a slip of the finger changes nothing. A request
/// decided meanwhile (the page had not heard yet) is said so, and `onStale` shows it as it is.
function cancelButton(request, onCancelled, status, onStale) {
  const label = dateRange(request);
  const ask = h("button.secondary.small.danger", { type: "button", dataset: { action: "cancel" }, "aria-label": t("hol.cancelNamed", { dates: label }) },
    t("hol.cancel"));
  const yes = h("button.small.danger-solid", { type: "button", dataset: { action: "cancel-yes" }, hidden: true }, t("hol.cancelYes"));
  const keep = h("button.secondary.small", { type: "button", dataset: { action: "cancel-keep" }, hidden: true }, t("hol.cancelKeep"));
  const prompt = h("span.hol-confirm", { hidden: true }, t("hol.cancelConfirm"));
  const toggle = (asking) => { ask.hidden = asking; yes.hidden = !asking; keep.hidden = !asking; prompt.hidden = !asking; };
  ask.addEventListener("click", () => { toggle(true); yes.focus(); });
  keep.addEventListener("click", () => { toggle(false); ask.focus(); });
  yes.addEventListener("click", async () => {
    yes.disabled = true;
    try {
      await post(`/holidays/${encodeURIComponent(request.id)}/cancel`);
      status.set("ok", t("hol.cancelled", { dates: label }));
      onCancelled();
    } catch (error) {
      status.set("bad", holidayError(error));
      yes.disabled = false;
      toggle(false);
      if (error?.code === "invalid_transition") onStale();
    }
  });
  return [ask, prompt, yes, keep];
}

/// The owner may cancel a pending or approved request before its first day.
function cancellable(request) {
  return (request.status === "pending" || request.status === "approved") && request.start > today();
}

function requestForm(ctx, types, workingDays, holidaysOf, onSent) {
  const typeSelect = h("select", { id: "hol-type" },
    ...(types.length ? types : [{ key: "vacation" }]).map((ty) => h("option", { value: ty.key }, typeName(ty.key, types))));
  typeSelect.value = "vacation";
  const fields = {
    start: field(t("hol.form.start"), h("input", { id: "hol-start", type: "date", required: true })),
    end: field(t("hol.form.end"), h("input", { id: "hol-end", type: "date", required: true })),
    type: field(t("hol.form.type"), typeSelect),
    halfStart: field(t("hol.form.halfStart"), h("input", { id: "hol-halfStart", type: "checkbox" }), t("hol.form.halfStartHint")),
    halfEnd: field(t("hol.form.halfEnd"), h("input", { id: "hol-halfEnd", type: "checkbox" }), t("hol.form.halfEndHint")),
    note: field(t("hol.form.note"), h("textarea", { id: "hol-note", rows: 3, maxlength: noteLimit }), t("hol.form.noteHint")),
  };
  if (types.length < 2) fields.type.wrap.hidden = true;
  const count = h("p.hol-count", { id: "hol-count", "aria-live": "polite" });
  const status = notice();
  status.id = "hol-form-status";
  const submit = h("button", { type: "submit", id: "hol-submit" }, t("hol.form.submit"));
  const form = h("form.card", { id: "hol-form", novalidate: true, "aria-labelledby": "hol-form-title" },
    h("h2", { id: "hol-form-title" }, t("hol.form.title")),
    h("div.grid", {}, fields.start.wrap, fields.end.wrap),
    h("fieldset.group.hol-halves", {}, h("legend", {}, t("hol.form.halves")), fields.halfStart.wrap, fields.halfEnd.wrap),
    fields.type.wrap, fields.note.wrap, count, status, h("div.actions", {}, submit));

  const values = () => ({
    start: fields.start.input.value,
    end: fields.end.input.value,
    halfStart: fields.halfStart.input.checked,
    halfEnd: fields.halfEnd.input.checked,
  });
  let counting = 0;
  async function recount() {
    const mine = ++counting;
    const v = values();
    if (!parseDate(v.start) || !parseDate(v.end)) { count.textContent = workingDays ? "" : t("hol.form.countLater"); return; }
    if (v.end < v.start) { count.textContent = ""; return; }
    if (!workingDays) { count.textContent = t("hol.form.countLater"); return; }
    const years = [];
    for (let y = Number(v.start.slice(0, 4)); y <= Number(v.end.slice(0, 4)); y++) years.push(y);
    const lists = await Promise.all(years.map(holidaysOf));
    if (mine !== counting || !ctx.alive()) return;
    const holidays = new Set(lists.flat().map((p) => p.date));
    const n = countWorkingDays(v, workingDays, holidays);
    count.textContent = n === null ? "" : t("hol.form.count", { days: days(n) });
  }
  // Picking a first day after the last one moves the last day along, as people expect.
  fields.start.input.addEventListener("change", () => {
    const { start, end } = values();
    if (parseDate(start) && (!end || end < start)) fields.end.input.value = start;
  });
  for (const f of [fields.start, fields.end, fields.halfStart, fields.halfEnd]) {
    f.input.addEventListener("input", recount);
    f.input.addEventListener("change", recount);
  }
  recount();

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    status.set();
    const v = values();
    const body = { ...v, type: typeSelect.value, note: fields.note.input.value.trim() };
    const problems = {};
    if (!parseDate(body.start)) problems.start = t(body.start ? "hol.field.date" : "field.required");
    if (!parseDate(body.end)) problems.end = t(body.end ? "hol.field.date" : "field.required");
    else if (parseDate(body.start) && body.end < body.start) problems.end = t("hol.field.endBeforeStart");
    if (!problems.end && body.start === body.end && body.halfStart && body.halfEnd) problems.halfEnd = t("hol.field.bothHalves");
    if (showFieldErrors(fields, problems)) { status.set("bad", t("err.validation_failed")); return; }
    if (!body.note) delete body.note;
    // An overlap or a lack of days is about the dates: the words go there too, focused.
    const datesProblem = (error) => (error?.code === "holiday_overlap" || error?.code === "allowance_exceeded" ? { start: holidayError(error) } : {});
    const sent = await submitForm({ button: submit, fields, status, describe: holidayError, problems: datesProblem }, () => post("/holidays", body));
    if (!sent.ok) return;
    const created = sent.result;
    form.reset();
    typeSelect.value = "vacation";
    recount();
    status.set("ok", t(created.status === "approved" ? "hol.sentApproved" : "hol.sent", { dates: dateRange(created), days: days(created.days) }));
    onSent(created);
  });
  return form;
}

export async function render(root, ctx) {
  const year = yearParam(ctx.params);
  const holidaysOf = publicHolidays();
  const live = notice();
  live.id = "hol-live";
  const listStatus = notice();
  listStatus.id = "hol-list-status";
  const summarySlot = h("section.card", { id: "hol-summary-card", "aria-labelledby": "hol-summary-title" });
  const list = h("ul.hol-list", { id: "hol-requests", "aria-busy": "true" });
  const upcoming = h("div", { id: "hol-public-slot" });
  root.append(
    h("div.page-head", {}, h("h1", {}, t("hol.title")),
      ctx.hasPage("calendar") ? h("p", {}, h("a", { href: "#/calendar" }, t("hol.toCalendar"))) : null),
    yearTabs("#/holidays", year, { label: t("hol.years") }),
    live, summarySlot);

  let mine;
  let types;
  try {
    [mine, types] = await Promise.all([get(`/holidays?year=${year}`), leaveTypes()]);
  } catch (error) {
    if (ctx.alive()) root.append(failure({ describe: () => holidayError(error) }, t("err.network")));
    return null;
  }
  if (!ctx.alive()) return null;
  const workingDays = workingDaysOf(mine);

  let known = new Map();
  function draw(result) {
    summarySlot.replaceChildren(h("h2", { id: "hol-summary-title" }, t("hol.summaryTitle", { year })), summaryList(result.summary ?? result, "hol-summary"));
    const requests = Array.isArray(result.requests) ? result.requests : [];
    list.replaceChildren(...requests.map((r) => requestItem(r, types, {
      // My own cancel is said once, by the list's status line, not again as a change.
      actions: cancellable(r) ? cancelButton(r, () => { known.set(r.id, "cancelled"); reload(); }, listStatus, reload) : [],
    })));
    if (!requests.length) list.append(h("li.empty", {}, t("hol.none", { year })));
    list.setAttribute("aria-busy", "false");
    // Say what changed since the last drawing (a decision arriving live).
    const changes = requests.filter((r) => known.has(r.id) && known.get(r.id) !== r.status);
    if (changes.length) {
      live.set("ok", changes.map((r) => t("hol.nowStatus", { dates: dateRange(r), status: t("hol.status." + r.status) })).join(" "));
    }
    known = new Map(requests.map((r) => [r.id, r.status]));
  }

  async function reload() {
    try {
      const result = await get(`/holidays?year=${year}`);
      if (ctx.alive()) draw(result);
    } catch (error) {
      if (ctx.alive()) listStatus.set("bad", holidayError(error));
    }
  }

  async function showPublic() {
    const items = await holidaysOf(year);
    if (!ctx.alive() || !items.length) return;
    upcoming.replaceChildren(h("section.card", { "aria-labelledby": "hol-public-title" },
      h("h2", { id: "hol-public-title" }, t("hol.publicTitle", { year })),
      h("ul.plain-list", { id: "hol-public" }, ...items.map((p) => h("li", {}, h("span.hol-dates", {}, calendarDate(p.date)), " · ", p.name)))));
  }

  draw(mine);
  root.append(
    requestForm(ctx, types, workingDays, holidaysOf, (created) => {
      if (Number(created.start.slice(0, 4)) === year || Number(created.end.slice(0, 4)) === year) reload();
    }),
    h("section.card", { "aria-labelledby": "hol-requests-title" },
      h("h2", { id: "hol-requests-title" }, t("hol.requestsTitle", { year })), listStatus, list),
    upcoming);
  showPublic();

  const offs = [ctx.realtime?.on("holiday.updated", () => { if (ctx.alive()) reload(); }),
    ctx.realtime?.on("resync", () => { if (ctx.alive()) reload(); })];
  return () => offs.forEach((off) => off?.());
}
