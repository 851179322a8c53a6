// The company's card: name, phone, email, website and address, with links to call, write or
// visit. Admins edit every field (PUT /admin/company); problems show next to their field.
import { get, put } from "../api.js";
import { t } from "../i18n.js";
import { h, field, notice, failure, when, submitForm, setCompanyName } from "../dom.js";
import { telURL, mailtoURL, webURL } from "../links.js";

const companyFields = ["name", "phone", "email", "website", "address"];

function contactRow(label, content) {
  return [h("dt", {}, label), h("dd", {}, content)];
}

function card(company) {
  const facts = [];
  const tel = telURL(company.phone);
  if (company.phone) facts.push(contactRow(t("company.phone"), tel ? h("a", { href: tel, id: "company-phone" }, company.phone) : company.phone));
  const mail = mailtoURL(company.email);
  if (company.email) facts.push(contactRow(t("company.email"), mail ? h("a", { href: mail, id: "company-email" }, company.email) : company.email));
  const web = webURL(company.website);
  if (company.website) {
    facts.push(contactRow(t("company.website"), web
      ? h("a", { href: web, id: "company-website", rel: "noopener noreferrer", target: "_blank" }, company.website)
      : company.website));
  }
  if (company.address) facts.push(contactRow(t("company.address"), h("span.text", { id: "company-address" }, company.address)));
  const empty = !company.name && facts.length === 0;
  return h("section.card.company-card", { id: "company-card", "aria-labelledby": "company-name" },
    h("h2", { id: "company-name" }, company.name || t("company.unnamed")),
    empty ? h("p.muted", {}, t("company.empty")) : h("dl.facts", {}, ...facts),
    company.updatedAt ? h("p.hint", {}, t("company.updated"), " ", when(company.updatedAt)) : null);
}

function editForm(company, onSaved, onCancel) {
  const input = (name, attrs = {}) => h("input", { id: "company-edit-" + name, name, value: company[name] ?? "", ...attrs });
  const fields = {
    name: field(t("company.name"), input("name", { maxlength: 200, autocomplete: "organization" })),
    phone: field(t("company.phone"), input("phone", { type: "tel", maxlength: 40, autocomplete: "tel" })),
    email: field(t("company.email"), input("email", { type: "email", maxlength: 254, autocomplete: "email" })),
    website: field(t("company.website"), input("website", { type: "url", maxlength: 500, placeholder: "https://example.com", autocapitalize: "none" })),
    address: field(t("company.address"), h("textarea", { id: "company-edit-address", name: "address", rows: 4, maxlength: 1000, value: company.address ?? "" }),
      t("company.addressHint")),
  };
  const status = notice();
  const save = h("button", { type: "submit", id: "company-save" }, t("company.save"));
  const cancel = h("button.secondary", { type: "button", id: "company-cancel" }, t("admin.cancel"));
  const form = h("form.card", { id: "company-form", novalidate: true, "aria-labelledby": "company-form-title" },
    h("h2", { id: "company-form-title" }, t("company.edit")),
    h("div.grid", {}, fields.name.wrap, fields.phone.wrap, fields.email.wrap, fields.website.wrap),
    fields.address.wrap, status, h("div.actions", {}, save, cancel));
  cancel.addEventListener("click", onCancel);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {};
    for (const name of companyFields) body[name] = fields[name].input.value.trim();
    // "acme.example" is what people type; the server wants the full address.
    if (body.website && !/^[a-z][a-z0-9+.-]*:/i.test(body.website) && webURL(body.website)) body.website = "https://" + body.website;
    const sent = await submitForm({ button: save, fields, status }, () => put("/admin/company", body));
    if (sent.ok) {
      setCompanyName(sent.result?.name);
      onSaved(sent.result);
    }
  });
  setTimeout(() => fields.name.input.focus(), 0);
  return form;
}

export async function render(root, ctx) {
  let company;
  try {
    company = await get("/company");
  } catch (error) {
    if (ctx.alive()) root.append(h("h1", {}, t("company.title")), failure(error, t("err.network")));
    return;
  }
  if (!ctx.alive()) return;
  const status = notice();
  status.id = "company-status";
  const slot = h("div", { id: "company-slot" });
  const edit = ctx.isAdmin ? h("button.secondary", { type: "button", id: "company-edit" }, t("company.edit")) : null;

  function show() {
    slot.replaceChildren(card(company));
    if (edit) edit.hidden = false;
  }
  if (edit) {
    edit.addEventListener("click", () => {
      edit.hidden = true;
      status.set();
      slot.replaceChildren(editForm(company, (updated) => {
        company = updated;
        show();
        status.set("ok", t("company.saved"));
        edit.focus();
      }, () => { show(); edit.focus(); }));
    });
  }
  root.append(h("div.page-head", {}, h("h1", {}, t("company.title")), edit), status, slot);
  show();
}
