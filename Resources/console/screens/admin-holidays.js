// Admin › Holiday requests. Three views on one route:
//   #/admin/holidays            every request, filtered by status, year, person and type, pending first
//                               (the soonest first: the most urgent decision leads);
//   #/admin/holidays?id=N       one request: its history, the person's year and remaining days, their
//                               other requests, who else is away or waiting to be then, each with its
//                               status (a warning when approving passes the company's limit), and
//                               Approve / Reject / Reopen / Cancel with an optional note;
//   #/admin/holidays?user=N     one person's holidays year by year, with that year's allowance override.
// Live: holiday.updated redraws what is shown.
import { get, post, put } from "../api.js";
import { t, tn, calendarDate } from "../i18n.js";
import { h, field, showFieldErrors, notice, failure, when, submitForm, setTitle } from "../dom.js";
import {
  statuses, thisYear, days, dateRange, leaveTypes, typeName, statusBadge, summaryList, yearTabs, yearParam,
  requestItem, holidayError, noteLimit,
} from "./holidays-common.js";

const peopleLimit = 200;
const route = "#/admin/holidays";
// The list's filters as last chosen, so "Back to all requests" returns to the same list.
let listQuery = "";

/// Names by user id, each asked for once per screen.
function names() {
  const cache = new Map();
  return (id) => {
    if (id === null || id === undefined) return Promise.resolve(null);
    if (!cache.has(id)) cache.set(id, get(`/users/${encodeURIComponent(id)}`).then((u) => u.displayName || u.username, () => t("chat.someone")));
    return cache.get(id);
  };
}

function select(id, options, value) {
  const el = h("select", { id }, ...options.map(([v, label]) => h("option", { value: v }, label)));
  el.value = value ?? "";
  return el;
}

// --- The list -----------------------------------------------------------------------------------

async function listView(root, ctx, types) {
  const params = ctx.params;
  const now = thisYear();
  const asked = Number(params.get("year"));
  const years = [...new Set([now - 2, now - 1, now, now + 1, ...(Number.isInteger(asked) && asked > 1970 ? [asked] : [])])].sort((a, b) => a - b);
  const status = select("ah-status", [["", t("ah.any")], ...statuses.map((s) => [s, t("hol.status." + s)])], params.get("status") ?? "");
  // Any year unless chosen, so a request waiting for next year is never out of sight.
  const year = select("ah-year", [["", t("ah.anyYear")], ...years.map((y) => [String(y), String(y)])], params.get("year") ?? "");
  const person = select("ah-user", [["", t("ah.everyone")]], "");
  const type = select("ah-type", [["", t("ah.anyType")], ...types.map((ty) => [ty.key, typeName(ty.key, types)])], params.get("type") ?? "");
  const csv = h("a.button.secondary", { id: "ah-csv", download: "" }, "");
  const problem = notice();
  const list = h("ul.hol-list.card-list", { id: "ah-list", "aria-busy": "true" });
  const count = h("p.counts", { id: "ah-count", "aria-live": "polite" });
  root.append(
    h("div.page-head", {}, h("h1", {}, t("ah.title")), count),
    h("div.toolbar.filters", {},
      ...[["ah-status", "ah.status", status], ["ah-year", "ah.year", year], ["ah-user", "ah.person", person], ["ah-type", "ah.type", type]]
        .map(([id, key, control]) => h("div.field", {}, h("label", { for: id }, t(key)), control))),
    h("p.actions", {}, csv, ctx.hasPage("admin-leave") ? h("a", { href: "#/admin/leave" }, t("ah.toLeave")) : null),
    problem, list);

  const showCsv = () => {
    const y = year.value || String(now);
    csv.href = `/api/v1/admin/holidays.csv?year=${encodeURIComponent(y)}`;
    csv.textContent = t("ah.csv", { year: y });
  };
  let sequence = 0;
  async function load() {
    const mine = ++sequence;
    showCsv();
    const query = new URLSearchParams();
    if (status.value) query.set("status", status.value);
    if (year.value) query.set("year", year.value);
    if (person.value) query.set("userId", person.value);
    if (type.value) query.set("type", type.value);
    // The address keeps the choice (without a new history entry or a redraw).
    listQuery = new URLSearchParams({ status: status.value, year: year.value, userId: person.value, type: type.value }).toString();
    history.replaceState(null, "", `${route}?${listQuery}`);
    try {
      const result = await get("/admin/holidays?" + query);
      if (mine !== sequence || !ctx.alive()) return;
      const items = Array.isArray(result.items) ? result.items : [];
      list.replaceChildren(...items.map((r) => requestItem(r, types, {
        who: r.displayName || r.user?.displayName || t("chat.someone"),
        link: `${route}?id=${encodeURIComponent(r.id)}`,
      })));
      if (!items.length) list.append(h("li.empty", {}, t("ah.empty")));
      const pending = items.filter((r) => r.status === "pending").length;
      count.textContent = t("ah.count", { shown: items.length, pending });
      list.setAttribute("aria-busy", "false");
      problem.set();
    } catch (error) {
      if (mine === sequence && ctx.alive()) problem.set("bad", holidayError(error));
    }
  }
  for (const control of [status, year, person, type]) control.addEventListener("change", load);
  const people = await get(`/users?status=all&limit=${peopleLimit}`).catch(() => null);
  if (!ctx.alive()) return null;
  person.append(...(people?.items ?? []).map((u) => h("option", { value: String(u.id) }, `${u.displayName || u.username} (@${u.username})`)));
  person.value = params.get("userId") ?? "";
  await load();
  return [ctx.realtime?.on("holiday.updated", () => { if (ctx.alive()) load(); })];
}

// --- One request ----------------------------------------------------------------------------------

function historyList(history, nameOf) {
  const items = (Array.isArray(history) ? history : []).map((step) => {
    const by = h("span", {}, "");
    nameOf(step.byUserId).then((name) => { by.textContent = name ? t("ah.by", { name }) : ""; });
    const what = step.from ? t("ah.step", { from: t("hol.status." + step.from), to: t("hol.status." + step.to) }) : t("ah.stepNew", { to: t("hol.status." + step.to) });
    return h("li", { dataset: { to: step.to } },
      h("strong", {}, what), " ", by, " · ", when(step.at),
      step.note ? h("p.text", {}, step.note) : null);
  });
  return h("ol.history", { id: "ah-history" }, ...items);
}

/// The decision controls a request's status allows, with one optional note. `onStale(message)`
/// when the request changed meanwhile (the page had not heard yet): the screen shows it as it is.
function decisionForm(request, name, onDone, onStale) {
  const note = field(t("ah.note", { name }), h("textarea", { id: "ah-note", rows: 2, maxlength: noteLimit }), t("ah.noteHint"));
  const status = notice();
  status.id = "ah-status-line";
  const actions = {
    pending: [["approve", "ah.approve", ""], ["reject", "ah.reject", ".danger-solid"]],
    approved: [["reopen", "ah.reopen", ".secondary"], ["cancel", "ah.cancelRequest", ".secondary.danger"]],
  }[request.status] ?? [];
  if (!actions.length) {
    return h("section.card", { "aria-labelledby": "ah-decide-title" }, h("h2", { id: "ah-decide-title" }, t("ah.decide")), h("p.muted", { id: "ah-final" }, t("ah.final")));
  }
  const buttons = actions.map(([action, key, cls]) => {
    const button = h("button" + cls, { type: "button", id: `ah-${action}`, dataset: { action } }, t(key));
    button.addEventListener("click", async () => {
      for (const b of buttons) b.disabled = true;
      const text = note.input.value.trim();
      try {
        // Cancelling takes no note (the owner's action, which admins may also take).
        const path = action === "cancel" ? `/holidays/${request.id}/cancel` : `/admin/holidays/${request.id}/${action}`;
        const updated = await post(path, action === "cancel" ? undefined : (text ? { note: text } : {}));
        onDone(updated, t("ah.done." + action, { dates: dateRange(request) }));
      } catch (error) {
        if (error?.code === "invalid_transition") { onStale(holidayError(error)); return; }
        showFieldErrors({ note }, error?.fields ?? {});
        status.set("bad", holidayError(error));
        for (const b of buttons) b.disabled = false;
      }
    });
    return button;
  });
  return h("section.card", { id: "ah-decide", "aria-labelledby": "ah-decide-title" },
    h("h2", { id: "ah-decide-title" }, t("ah.decide")), note.wrap, status, h("div.actions", {}, ...buttons));
}

/// Someone else away, or waiting to be, on the request's days: who, when (a link to that
/// request) and its status in words.
function awayItem(a) {
  const dates = a.start === a.end ? calendarDate(a.start) : `${calendarDate(a.start)} – ${calendarDate(a.end)}`;
  return h("li", { dataset: { userId: a.userId, requestId: a.requestId, status: a.status } },
    h("strong", {}, a.displayName || t("chat.someone")), " · ",
    a.requestId ? h("a", { href: `${route}?id=${encodeURIComponent(a.requestId)}` }, dates) : dates, " ",
    statusBadge(a.status));
}

/// The warning when approving would pass the company's limit, naming the limit when known.
function overLimitWords(limit) {
  return Number.isInteger(limit) ? t("ah.overLimit", { limit: tn("ah.people", limit) }) : t("ah.overLimitPlain");
}

async function detailView(root, ctx, types, id) {
  const nameOf = names();
  const slot = h("div", { id: "ah-detail", "aria-busy": "true" });
  const done = notice();
  done.id = "ah-done";
  root.append(h("p.back", {}, h("a", { href: `${route}?${listQuery}` }, t("ah.back"))), done, slot);

  async function load() {
    let d;
    try {
      d = await get(`/admin/holidays/${encodeURIComponent(id)}`);
    } catch (error) {
      if (ctx.alive()) slot.replaceChildren(h("h1", {}, t("ah.request")), failure({ describe: () => holidayError(error) }));
      return;
    }
    if (!ctx.alive()) return;
    const r = d.request ?? {};
    const user = d.user ?? {};
    const name = user.displayName || user.username || t("chat.someone");
    setTitle(t("ah.requestOf", { name }));
    const year = Number(String(r.start ?? "").slice(0, 4)) || thisYear();
    const facts = [
      [t("ah.dates"), dateRange(r)],
      [t("ah.days"), days(r.days)],
      [t("ah.type"), typeName(r.type, types)],
      [t("ah.status"), statusBadge(r.status)],
      [t("ah.asked"), when(r.createdAt)],
    ];
    if (r.note) facts.push([t("hol.form.note"), h("span.text", {}, r.note)]);
    if (r.decidedAt) facts.push([t("ah.decided"), when(r.decidedAt)]);
    if (r.decisionNote) facts.push([t("hol.decisionNote"), h("span.text", {}, r.decisionNote)]);
    const alsoAway = Array.isArray(d.alsoAway) ? d.alsoAway : [];
    const others = Array.isArray(d.otherRequests) ? d.otherRequests : [];
    slot.replaceChildren(...[
      h("div.page-head", {}, h("h1", { id: "ah-title" }, t("ah.requestOf", { name })),
        h("p", {}, h("a", { href: `${route}?user=${encodeURIComponent(user.id ?? r.userId)}&year=${year}`, id: "ah-history-link" }, t("ah.personHistory", { name })))),
      h("section.card", { id: "ah-request", "aria-labelledby": "ah-title", dataset: { status: r.status } },
        h("dl.facts", {}, ...facts.flatMap(([label, value]) => [h("dt", {}, label), h("dd", {}, value)]))),
      d.overLimit ? h("p.notice.bad", { id: "ah-over-limit", role: "alert" }, overLimitWords(d.maxSimultaneousAbsences)) : null,
      h("section.card", { "aria-labelledby": "ah-away-title" },
        h("h2", { id: "ah-away-title" }, t("ah.alsoAway")),
        alsoAway.length
          ? h("ul.plain-list", { id: "ah-also-away" }, ...alsoAway.map(awayItem))
          : h("p.muted", { id: "ah-nobody-away" }, t("ah.nobodyAway"))),
      decisionForm(r, name, (updated, message) => { done.set("ok", message); load(); }, (message) => { done.set("bad", message); load(); }),
      h("section.card", { "aria-labelledby": "ah-year-title" },
        h("h2", { id: "ah-year-title" }, t("ah.theirYear", { name, year: d.summary?.year ?? year })),
        summaryList(d.summary, "ah-summary"),
        h("h3", {}, t("ah.otherRequests")),
        others.length
          ? h("ul.hol-list", { id: "ah-others" }, ...others.map((o) => requestItem(o, types, { link: `${route}?id=${encodeURIComponent(o.id)}` })))
          : h("p.muted", {}, t("ah.noOthers"))),
      h("section.card", { "aria-labelledby": "ah-history-title" }, h("h2", { id: "ah-history-title" }, t("ah.history")), historyList(r.history, nameOf)),
    ].filter(Boolean));
    slot.setAttribute("aria-busy", "false");
  }
  await load();
  return [ctx.realtime?.on("holiday.updated", ({ data } = {}) => {
    const changed = data?.request?.id ?? data?.id;
    if (ctx.alive() && (changed === undefined || String(changed) === String(id))) load();
  })];
}

// --- One person's years ---------------------------------------------------------------------------

function allowanceForm(userId, year, summary, onSaved) {
  const input = h("input", { id: "ah-allowance", type: "number", inputmode: "decimal", min: 0, max: 366, step: 0.5, value: summary?.allowance ?? "" });
  const fields = { days: field(t("ah.allowance", { year }), input, t("ah.allowanceHint")) };
  const status = notice();
  status.id = "ah-allowance-status";
  const save = h("button", { type: "submit", id: "ah-allowance-save" }, t("ah.allowanceSave"));
  const form = h("form", { id: "ah-allowance-form", novalidate: true }, fields.days.wrap, status, h("div.actions", {}, save));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const raw = input.value.trim();
    const value = Number(raw);
    if (raw === "" || !Number.isFinite(value) || value < 0 || value > 366 || (value * 2) % 1 !== 0) {
      showFieldErrors(fields, { days: t("ah.allowanceProblem") });
      status.set("bad", t("err.validation_failed"));
      return;
    }
    const sent = await submitForm({ button: save, fields, status, describe: holidayError },
      () => put(`/admin/users/${encodeURIComponent(userId)}/allowances/${year}`, { days: value }));
    if (sent.ok) onSaved(t("ah.allowanceSaved", { year, days: days(value) }));
  });
  return form;
}

async function personView(root, ctx, types, userId) {
  const year = yearParam(ctx.params);
  const slot = h("div", { id: "ah-person", "aria-busy": "true" });
  const done = notice();
  done.id = "ah-person-done";
  let user;
  try {
    user = await get(`/users/${encodeURIComponent(userId)}`);
  } catch (error) {
    if (ctx.alive()) root.append(h("p.back", {}, h("a", { href: route }, t("ah.back"))), h("h1", {}, t("ah.personTitle")), failure(error));
    return null;
  }
  if (!ctx.alive()) return null;
  const name = user.displayName || user.username;
  setTitle(t("ah.personHolidays", { name }));
  root.append(
    h("p.back", {}, h("a", { href: route }, t("ah.back")), " · ", h("a", { href: `#/person?id=${encodeURIComponent(userId)}` }, t("ah.toPerson", { name }))),
    h("div.page-head", {}, h("h1", {}, t("ah.personHolidays", { name })), user.active === false ? h("span.badge.off", {}, t("dir.inactive")) : null),
    yearTabs(route, year, { extra: `user=${encodeURIComponent(userId)}&`, label: t("hol.years") }),
    done, slot);

  async function load() {
    let result;
    try {
      result = await get(`/users/${encodeURIComponent(userId)}/holidays?year=${year}`);
    } catch (error) {
      if (ctx.alive()) slot.replaceChildren(failure({ describe: () => holidayError(error) }));
      return;
    }
    if (!ctx.alive()) return;
    const summary = result.summary ?? result;
    const requests = Array.isArray(result.requests) ? result.requests : [];
    slot.replaceChildren(
      h("section.card", { "aria-labelledby": "ah-person-sum" },
        h("h2", { id: "ah-person-sum" }, t("ah.theirYear", { name, year })),
        summaryList(summary, "ah-person-summary"),
        allowanceForm(userId, year, summary, (message) => { done.set("ok", message); load(); })),
      h("section.card", { "aria-labelledby": "ah-person-requests" },
        h("h2", { id: "ah-person-requests" }, t("ah.theirRequests", { name, year })),
        requests.length
          ? h("ul.hol-list", { id: "ah-person-list" }, ...requests.map((r) => requestItem(r, types, { link: `${route}?id=${encodeURIComponent(r.id)}` })))
          : h("p.muted", {}, t("hol.none", { year }))));
    slot.setAttribute("aria-busy", "false");
  }
  await load();
  return [ctx.realtime?.on("holiday.updated", () => { if (ctx.alive()) load(); })];
}

export async function render(root, ctx) {
  const types = await leaveTypes();
  if (!ctx.alive()) return null;
  const id = ctx.params.get("id");
  const user = ctx.params.get("user");
  let offs = null;
  if (id && /^\d+$/.test(id)) offs = await detailView(root, ctx, types, id);
  else if (user && /^\d+$/.test(user)) offs = await personView(root, ctx, types, user);
  else offs = await listView(root, ctx, types);
  return () => (offs ?? []).forEach((off) => off?.());
}
