// Admin: the audit log, newest first, a page at a time ("Older"), filtered by kind (people,
// settings, holidays…), by one event and by person. Each entry says who did what, to whom and
// when, in words and in local time.
import { get } from "../api.js";
import { t, eventName } from "../i18n.js";
import { h, notice, when, errorText } from "../dom.js";

const pageSize = 50;
const peopleLimit = 200;

/// The kinds the filter offers: each the first words of the event names it keeps (the server
/// matches `holiday` with every `holiday.…`).
const kinds = [
  ["people", "user,role,password,avatar,setup"],
  ["signins", "login,logout"],
  ["settings", "settings"],
  ["company", "company"],
  ["holidays", "holiday"],
  ["notices", "notice"],
  ["translation", "translation"],
  ["invites", "invite"],
];

/// Whether `event` is of the kind whose words are `words`.
function ofKind(event, words) {
  return words.split(",").some((w) => event === w || event.startsWith(w + "."));
}

function person(id, username, names) {
  const name = names.get(id);
  if (name) return username ? `${name} (@${username})` : name;
  return username ? "@" + username : t("audit.someone");
}

function entry(item, names) {
  const facts = [];
  const fact = (label, value) => facts.push(h("span.audit-fact", {}, h("span.audit-label", {}, label + ": "), value));
  if (item.actorId !== null && item.actorId !== undefined) fact(t("audit.by"), person(item.actorId, item.actorUsername, names));
  if (item.targetId !== null && item.targetId !== undefined && item.targetId !== item.actorId) {
    fact(t("audit.concerning"), person(item.targetId, item.targetUsername, names));
  }
  // What was typed at a login (an unknown name has no account to show).
  if (item.login && String(item.event).startsWith("login.") && item.actorId == null) fact(t("audit.login"), item.login);
  if (item.ip) fact(t("audit.ip"), item.ip);
  if (item.detail) fact(t("audit.detail"), item.detail);
  return h("li.audit-entry", { dataset: { event: item.event, auditId: item.id } },
    h("div.audit-head", {}, h("strong.audit-event", {}, eventName(item.event)), h("span.muted", {}, when(item.at))),
    facts.length ? h("p.audit-facts", {}, ...facts) : null);
}

export async function render(root, ctx) {
  const status = notice();
  const kindSelect = h("select", { id: "audit-kind" }, h("option", { value: "" }, t("audit.allKinds")),
    ...kinds.map(([id, words]) => h("option", { value: words, dataset: { kind: id } }, t("audit.kind." + id))));
  const eventSelect = h("select", { id: "audit-event" }, h("option", { value: "" }, t("audit.allEvents")));
  let eventNames = [];
  const personSelect = h("select", { id: "audit-person" }, h("option", { value: "" }, t("audit.everyone")));
  const list = h("ol.audit-list", { id: "audit-list", "aria-busy": "true" });
  const older = h("button.secondary", { type: "button", id: "audit-older", hidden: true }, t("audit.older"));
  const names = new Map();
  let nextBefore = null;
  let sequence = 0;

  root.append(
    h("div.page-head", {}, h("h1", {}, t("audit.title")), h("p.muted", {}, t("audit.intro"))),
    h("div.toolbar.filters", {},
      h("div.field", {}, h("label", { for: "audit-kind" }, t("audit.filterKind")), kindSelect),
      h("div.field", {}, h("label", { for: "audit-event" }, t("audit.filterEvent")), eventSelect),
      h("div.field", {}, h("label", { for: "audit-person" }, t("audit.filterPerson")), personSelect)),
    status, list, h("div.actions", {}, older));

  async function load(before) {
    const mine = before === null ? ++sequence : sequence;
    const params = new URLSearchParams({ limit: String(pageSize) });
    if (before !== null) params.set("before", String(before));
    if (eventSelect.value || kindSelect.value) params.set("event", eventSelect.value || kindSelect.value);
    if (personSelect.value) params.set("userId", personSelect.value);
    try {
      const result = await get("/admin/audit?" + params);
      if (mine !== sequence || !ctx.alive()) return;
      const items = Array.isArray(result.items) ? result.items : [];
      if (before === null) list.replaceChildren();
      list.append(...items.map((item) => entry(item, names)));
      if (before === null && items.length === 0) list.append(h("li.empty", {}, t("audit.empty")));
      // The server's cursor (null at the end); without one, a full page means there may be more.
      nextBefore = "nextBefore" in result ? result.nextBefore : (items.length === pageSize ? items[items.length - 1].id : null);
      older.hidden = nextBefore === null;
      list.setAttribute("aria-busy", "false");
      status.set();
    } catch (error) {
      if (mine === sequence && ctx.alive()) status.set("bad", errorText(error));
    }
  }

  /// The events to choose from: those of the chosen kind (every one without a kind).
  function fillEvents() {
    const keep = eventSelect.value;
    const shown = eventNames.filter((e) => !kindSelect.value || ofKind(e, kindSelect.value))
      .map((e) => [e, eventName(e)])
      .sort((a, b) => a[1].localeCompare(b[1]));
    eventSelect.replaceChildren(h("option", { value: "" }, t("audit.allEvents")),
      ...shown.map(([e, label]) => h("option", { value: e }, label)));
    eventSelect.value = shown.some(([e]) => e === keep) ? keep : "";
  }

  kindSelect.addEventListener("change", () => { fillEvents(); load(null); });
  eventSelect.addEventListener("change", () => load(null));
  personSelect.addEventListener("change", () => load(null));
  older.addEventListener("click", async () => {
    older.disabled = true;
    await load(nextBefore);
    older.disabled = false;
  });

  const [events, people] = await Promise.all([
    get("/admin/audit/events").catch(() => null),
    get(`/users?status=all&limit=${peopleLimit}`).catch(() => null),
  ]);
  if (!ctx.alive()) return;
  eventNames = Array.isArray(events?.items) ? events.items.filter((e) => typeof e === "string") : [];
  fillEvents();
  for (const u of people?.items ?? []) {
    const name = u.displayName || u.username;
    names.set(u.id, name);
    personSelect.append(h("option", { value: String(u.id) }, `${name} (@${u.username})`));
  }
  await load(null);
}
