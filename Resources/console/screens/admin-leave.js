// Admin › Public holidays and leave types (#/admin/leave?year=Y): the company's public holidays
// of a year (add, delete), the kinds of leave (add; rename and change whether each counts against
// the allowance and needs approval; delete), and the CSV export of a year's requests.
import { get, post, patch, del } from "../api.js";
import { t, calendarDate } from "../i18n.js";
import { h, field, showFieldErrors, notice, submitForm, confirmInline } from "../dom.js";
import { parseDate, yearTabs, yearParam, typeName, holidayError } from "./holidays-common.js";

const nameLimit = 100;

/// A lowercase code from a name, starting with a letter: "Sick leave" → "sick_leave".
function keyFrom(name) {
  return name.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^[^a-z]+|_+$/g, "").slice(0, 32);
}

/// Delete with a second click to confirm.
function confirmDelete(label, confirmText, onDelete) {
  return confirmInline({ label: t("leave.delete"), question: confirmText, yes: t("leave.deleteYes"), action: "delete",
    ariaLabel: t("leave.deleteNamed", { name: label }), small: true, onConfirm: onDelete });
}

function publicSection(ctx, year) {
  const status = notice();
  status.id = "ph-status";
  const list = h("ul.plain-list.rows", { id: "ph-list", "aria-busy": "true" });
  const fields = {
    date: field(t("leave.phDate"), h("input", { id: "ph-date", type: "date", required: true, min: `${year}-01-01`, max: `${year}-12-31` })),
    name: field(t("leave.phName"), h("input", { id: "ph-name", maxlength: nameLimit, required: true })),
  };
  const add = h("button", { type: "submit", id: "ph-add" }, t("leave.phAdd"));
  const form = h("form", { id: "ph-form", novalidate: true }, h("div.grid", {}, fields.date.wrap, fields.name.wrap), h("div.actions", {}, add));

  async function load() {
    try {
      const r = await get(`/public-holidays?year=${year}`);
      if (!ctx.alive()) return;
      const items = (Array.isArray(r?.items) ? r.items : []).sort((a, b) => String(a.date).localeCompare(String(b.date)));
      list.replaceChildren(...items.map((p) => h("li.row", { dataset: { id: p.id, date: p.date } },
        h("span.row-main", {}, h("span", {}, h("strong", {}, calendarDate(p.date)), " · ", p.name)),
        h("span.actions", {}, ...confirmDelete(`${calendarDate(p.date)} ${p.name}`, t("leave.phConfirm"), async () => {
          try {
            await del(`/admin/public-holidays/${encodeURIComponent(p.id)}`);
            status.set("ok", t("leave.phDeleted", { name: p.name }));
            load();
            return true;
          } catch (error) {
            status.set("bad", holidayError(error));
            return false;
          }
        })))));
      if (!items.length) list.append(h("li.empty", {}, t("leave.phNone", { year })));
      list.setAttribute("aria-busy", "false");
    } catch (error) {
      if (ctx.alive()) status.set("bad", holidayError(error));
    }
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { date: fields.date.input.value, name: fields.name.input.value.trim() };
    const problems = {};
    if (!parseDate(body.date)) problems.date = t(body.date ? "hol.field.date" : "field.required");
    if (!body.name) problems.name = t("field.required");
    if (showFieldErrors(fields, problems)) { status.set("bad", t("err.validation_failed")); return; }
    const sent = await submitForm({ button: add, fields, status, describe: holidayError }, () => post("/admin/public-holidays", body));
    if (!sent.ok) return;
    form.reset();
    status.set("ok", t("leave.phAdded", { name: body.name, date: calendarDate(body.date) }));
    load();
    fields.date.input.focus();
  });
  load();
  return h("section.card", { id: "ph-card", "aria-labelledby": "ph-title" },
    h("h2", { id: "ph-title" }, t("leave.phTitle", { year })), h("p.muted", {}, t("leave.phIntro")),
    list, h("h3", {}, t("leave.phNew")), form, status);
}

function flagBoxes(prefix, type = {}) {
  return {
    countsAgainstAllowance: field(t("leave.counts"), h("input", { id: `${prefix}-counts`, type: "checkbox", checked: type.countsAgainstAllowance ?? true }), t("leave.countsHint")),
    needsApproval: field(t("leave.approval"), h("input", { id: `${prefix}-approval`, type: "checkbox", checked: type.needsApproval ?? true }), t("leave.approvalHint")),
  };
}

function typesSection(ctx) {
  const status = notice();
  status.id = "lt-status";
  const list = h("ul.plain-list.rows", { id: "lt-list", "aria-busy": "true" });

  function flags(type) {
    return [type.countsAgainstAllowance ? t("leave.countsYes") : t("leave.countsNo"), type.needsApproval ? t("leave.approvalYes") : t("leave.approvalNo")].join(" · ");
  }

  function editForm(type, row) {
    const prefix = `lt-edit-${type.id}`;
    const fields = { name: field(t("leave.name"), h("input", { id: `${prefix}-name`, maxlength: nameLimit, value: type.name ?? "" })), ...flagBoxes(prefix, type) };
    const save = h("button.small", { type: "submit", id: `${prefix}-save` }, t("admin.save"));
    const cancel = h("button.secondary.small", { type: "button" }, t("admin.cancel"));
    const form = h("form.hol-edit", { novalidate: true, "aria-label": t("leave.editNamed", { name: typeName(type.key, [type]) }) },
      fields.name.wrap, fields.countsAgainstAllowance.wrap, fields.needsApproval.wrap, h("div.actions", {}, save, cancel));
    cancel.addEventListener("click", () => load());
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const body = {
        name: fields.name.input.value.trim(),
        countsAgainstAllowance: fields.countsAgainstAllowance.input.checked,
        needsApproval: fields.needsApproval.input.checked,
      };
      if (showFieldErrors(fields, body.name ? {} : { name: t("field.required") })) return;
      const sent = await submitForm({ button: save, fields, status, describe: holidayError },
        () => patch(`/admin/leave-types/${encodeURIComponent(type.id)}`, body));
      if (!sent.ok) return;
      status.set("ok", t("leave.saved", { name: body.name }));
      load();
    });
    row.replaceChildren(form);
    fields.name.input.focus();
  }

  async function load() {
    try {
      const r = await get("/leave-types");
      if (!ctx.alive()) return;
      const items = Array.isArray(r?.items) ? r.items : [];
      list.replaceChildren(...items.map((type) => {
        const label = typeName(type.key, [type]);
        const edit = h("button.secondary.small", { type: "button", dataset: { action: "edit" }, "aria-label": t("leave.editNamed", { name: label }) }, t("admin.edit"));
        const row = h("li.row", { dataset: { id: type.id, key: type.key } },
          h("span.row-main", {}, h("strong", {}, label), h("span.meta", {}, flags(type))),
          // The built-in holiday type stays (the server refuses to delete it).
          h("span.actions", {}, edit, ...(type.key === "vacation" ? [] : confirmDelete(label, t("leave.typeConfirm"), async () => {
            try {
              await del(`/admin/leave-types/${encodeURIComponent(type.id)}`);
              status.set("ok", t("leave.typeDeleted", { name: label }));
              load();
              return true;
            } catch (error) {
              status.set("bad", holidayError(error));
              return false;
            }
          }))));
        edit.addEventListener("click", () => editForm(type, row));
        return row;
      }));
      list.setAttribute("aria-busy", "false");
    } catch (error) {
      if (ctx.alive()) status.set("bad", holidayError(error));
    }
  }

  const fields = {
    name: field(t("leave.name"), h("input", { id: "lt-name", maxlength: nameLimit, required: true }), t("leave.nameHint")),
    key: field(t("leave.key"), h("input", { id: "lt-key", maxlength: 32, autocapitalize: "none", spellcheck: "false" }), t("leave.keyHint")),
    ...flagBoxes("lt-new"),
  };
  let keyTouched = false;
  fields.key.input.addEventListener("input", () => { keyTouched = fields.key.input.value !== ""; });
  fields.name.input.addEventListener("input", () => { if (!keyTouched) fields.key.input.value = keyFrom(fields.name.input.value); });
  const add = h("button", { type: "submit", id: "lt-add" }, t("leave.add"));
  const form = h("form", { id: "lt-form", novalidate: true },
    h("div.grid", {}, fields.name.wrap, fields.key.wrap), fields.countsAgainstAllowance.wrap, fields.needsApproval.wrap, h("div.actions", {}, add));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {
      name: fields.name.input.value.trim(),
      key: fields.key.input.value.trim() || keyFrom(fields.name.input.value),
      countsAgainstAllowance: fields.countsAgainstAllowance.input.checked,
      needsApproval: fields.needsApproval.input.checked,
    };
    const problems = {};
    if (!body.name) problems.name = t("field.required");
    else if (!body.key) problems.key = t("leave.keyProblem");
    if (showFieldErrors(fields, problems)) { status.set("bad", t("err.validation_failed")); return; }
    const sent = await submitForm({ button: add, fields, status, describe: holidayError }, () => post("/admin/leave-types", body));
    if (!sent.ok) return;
    form.reset();
    keyTouched = false;
    status.set("ok", t("leave.added", { name: body.name }));
    load();
  });
  load();
  return h("section.card", { id: "lt-card", "aria-labelledby": "lt-title" },
    h("h2", { id: "lt-title" }, t("leave.typesTitle")), h("p.muted", {}, t("leave.typesIntro")),
    list, h("h3", {}, t("leave.newType")), form, status);
}

/// Allowances: the company's default lives in Settings; a person's own number of days for a year
/// is set on their holiday years, opened from here.
function allowancesSection(ctx, year) {
  const person = h("select", { id: "al-person" }, h("option", { value: "" }, t("leave.choosePerson")));
  // The link appears once someone is chosen.
  const open = h("a.button.secondary", { id: "al-open", href: "#/admin/holidays", hidden: true }, t("leave.openPerson"));
  const update = () => {
    open.href = `#/admin/holidays?user=${encodeURIComponent(person.value)}&year=${year}`;
    open.hidden = !person.value;
  };
  person.addEventListener("change", update);
  get("/users?status=all&limit=200").then((r) => {
    if (!ctx.alive()) return;
    person.append(...(r?.items ?? []).map((u) => h("option", { value: String(u.id) }, `${u.displayName || u.username} (@${u.username})`)));
  }, () => {});
  return h("section.card", { id: "al-card", "aria-labelledby": "al-title" },
    h("h2", { id: "al-title" }, t("leave.allowancesTitle")),
    h("p.muted", {}, t("leave.allowancesIntro"), " ", ctx.hasPage("admin-settings") ? h("a", { href: "#/admin/settings" }, t("leave.toSettings")) : null),
    h("div.toolbar", {}, h("div.field", {}, h("label", { for: "al-person" }, t("leave.person")), person), h("p.actions", {}, open)));
}

export function render(root, ctx) {
  const year = yearParam(ctx.params);
  root.append(
    h("div.page-head", {}, h("h1", {}, t("leave.title")),
      h("p", {}, h("a.button.secondary", { id: "leave-csv", download: "", href: `/api/v1/admin/holidays.csv?year=${year}` }, t("ah.csv", { year })))),
    yearTabs("#/admin/leave", year, { label: t("hol.years") }),
    publicSection(ctx, year),
    typesSection(ctx),
    allowancesSection(ctx, year));
  if (!ctx.hasPage("admin-holidays")) return null;
  root.querySelector(".page-head").append(h("p", {}, h("a", { href: "#/admin/holidays" }, t("leave.toRequests"))));
  return null;
}
