// One person (#/person?id=N): picture, name, position, status, bio, country and ways to reach
// them. Admins also see role and whether the account is active, and edit every profile field
// and the picture (PATCH /admin/users/{id}, PUT/DELETE /admin/users/{id}/avatar).
import { get, patch } from "../api.js";
import { t, takenProblems } from "../i18n.js";
import { h, field, showFieldErrors, notice, avatar, failure, contactLinks, pictureControls, submitForm, errorText, awayBadge, setTitle } from "../dom.js";
import { openDirect } from "./chat-common.js";
const languages = [["en", "English"], ["es", "Español"], ["ca", "Català"], ["de", "Deutsch"], ["fr", "Français"],
  ["it", "Italiano"], ["nl", "Nederlands"], ["pt", "Português"]];
// Every profile field an admin may change, with its input's attributes.
const editable = [
  ["displayName", "profile.displayName", { maxlength: 100, required: true }],
  ["email", "admin.email", { type: "email", maxlength: 254 }],
  ["position", "profile.position", { maxlength: 100 }],
  ["phone", "profile.phone", { type: "tel", maxlength: 40 }],
  ["twitter", "profile.twitter", { maxlength: 16, placeholder: "@handle", autocapitalize: "none" }],
  ["linkedin", "profile.linkedin", { maxlength: 200, autocapitalize: "none" }],
  ["country", "profile.country", { maxlength: 64 }],
  ["status", "profile.status", { maxlength: 140 }],
];

function profileCard(user, ctx) {
  const name = user.displayName || user.username;
  const badges = [];
  if (ctx.isAdmin || !user.active) badges.push(h("span.badge." + (user.active ? "on" : "off"), { id: "person-active" }, user.active ? t("dir.active") : t("dir.inactive")));
  if (ctx.isAdmin) badges.push(h("span.badge.role", { id: "person-role" }, t("profile.role." + user.role)));
  else if (user.role === "admin") badges.push(h("span.badge.role", {}, t("dir.admin")));
  const away = awayBadge(user.away, "person-away");
  if (away) badges.push(away);
  const facts = [];
  if (user.country) facts.push(h("dt", {}, t("profile.country")), h("dd", { id: "person-country" }, user.country));
  const links = contactLinks(user, name);
  if (links.length) facts.push(h("dt", {}, t("person.contact")), h("dd.contacts", {}, ...links));
  return h("section.card.person-card", { id: "person-card", "aria-labelledby": "person-name" },
    h("div.person-top", {},
      h("div", { id: "person-picture" }, avatar(user, "lg")),
      h("div.person-main", {},
        h("h1", { id: "person-name" }, name),
        h("p.muted", {}, "@" + user.username),
        user.position ? h("p.position", { id: "person-position" }, user.position) : null,
        h("div.person-head", {}, ...badges))),
    user.status ? h("p.status-line", { id: "person-status" }, user.status) : null,
    user.bio ? h("p.text", { id: "person-bio" }, user.bio) : null,
    facts.length ? h("dl.facts", {}, ...facts) : null);
}

function pictureEditor(user, onChange) {
  const { controls, status } = pictureControls({
    path: `/admin/users/${encodeURIComponent(user.id)}/avatar`, idPrefix: "person-avatar", hasPicture: Boolean(user.avatarUrl),
    chooseLabel: t("person.upload"), uploaded: t("person.pictureSet"), removed: t("person.pictureRemoved"),
    changed: (avatarUrl) => onChange({ ...user, avatarUrl }),
  });
  return h("div", {}, h("p.hint", {}, t("profile.pictureHint")), controls, status);
}

function editForm(user, onSaved, onCancel) {
  const fields = {};
  for (const [key, label, attrs] of editable) {
    fields[key] = field(t(label), h("input", { id: "person-edit-" + key, value: user[key] ?? "", dataset: { field: key }, ...attrs }));
  }
  const language = h("select", { id: "person-edit-language", dataset: { field: "language" } },
    ...languages.concat(languages.some(([c]) => c === user.language) || !user.language ? [] : [[user.language, user.language]])
      .map(([code, label]) => h("option", { value: code, lang: code }, label)));
  language.value = user.language || "en";
  fields.language = field(t("profile.language"), language);
  fields.bio = field(t("profile.bio"), h("textarea", { id: "person-edit-bio", rows: 4, maxlength: 2000, value: user.bio ?? "", dataset: { field: "bio" } }));
  const status = notice();
  const save = h("button", { type: "submit", id: "person-save" }, t("admin.save"));
  const cancel = h("button.secondary", { type: "button", id: "person-cancel" }, t("admin.cancel"));
  const name = user.displayName || user.username;
  const form = h("form.card", { id: "person-form", novalidate: true, "aria-labelledby": "person-form-title" },
    h("h2", { id: "person-form-title" }, t("admin.editTitle", { name })),
    h("h3", {}, t("profile.picture")), pictureEditor(user, (u) => { user = u; onSaved(u, false); }),
    h("h3", {}, t("profile.details")),
    h("div.grid", {}, ...editable.map(([key]) => fields[key].wrap), fields.language.wrap),
    fields.bio.wrap, status, h("div.actions", {}, save, cancel));
  cancel.addEventListener("click", onCancel);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {};
    for (const [key, f] of Object.entries(fields)) {
      const value = f.input.value.trim();
      if (value !== (user[key] ?? "")) body[key] = value;
    }
    if (body.displayName === "") { showFieldErrors(fields, { displayName: "is required" }); return; }
    if (!Object.keys(body).length) { onCancel(); return; }
    const sent = await submitForm({ button: save, fields, status, problems: takenProblems },
      () => patch(`/admin/users/${encodeURIComponent(user.id)}`, body));
    if (sent.ok) onSaved(sent.result, true);
  });
  setTimeout(() => fields.displayName.input.focus(), 0);
  return form;
}

export async function render(root, ctx) {
  const id = ctx.params.get("id") ?? "";
  const back = h("p.back", {}, h("a", { href: "#/directory" }, t("person.back")));
  if (!/^\d+$/.test(id)) {
    root.append(back, h("h1", {}, t("app.notFound")));
    return;
  }
  let user;
  try {
    user = await get(`/users/${id}`);
  } catch (error) {
    if (ctx.alive()) root.append(back, h("h1", {}, t("person.title")), failure(error, t("err.network")));
    return;
  }
  if (!ctx.alive()) return;
  const status = notice();
  status.id = "person-status";
  const slot = h("div", { id: "person-slot" });
  const edit = ctx.isAdmin ? h("button.secondary", { type: "button", id: "person-edit" }, t("admin.edit")) : null;
  const editSlot = h("div", { id: "person-edit-slot" });
  // A colleague's page opens (creating once) the direct chat with them.
  const message = ctx.hasPage("chat") && user.id !== ctx.me.id && user.active
    ? h("button", { type: "button", id: "person-message" }, t("person.message")) : null;
  message?.addEventListener("click", async () => {
    message.disabled = true;
    try { await openDirect(user.id, ctx.navigate); } catch (error) { status.set("bad", errorText(error)); message.disabled = false; }
  });

  function show() {
    slot.replaceChildren(profileCard(user, ctx));
    setTitle(user.displayName || user.username);
  }
  function saved(updated, close) {
    user = { ...user, ...updated };
    show();
    if (user.id === ctx.me.id) ctx.setMe({ ...ctx.me, ...user });
    if (close) {
      editSlot.replaceChildren();
      edit.hidden = false;
      status.set("ok", t("admin.saved", { name: user.displayName || user.username }));
      edit.focus();
    }
  }
  if (edit) {
    edit.addEventListener("click", () => {
      edit.hidden = true;
      status.set();
      editSlot.replaceChildren(editForm(user, saved, () => { editSlot.replaceChildren(); edit.hidden = false; edit.focus(); }));
    });
  }
  // Admins reach the person's holidays year by year (and their allowance) from here.
  const holidays = ctx.isAdmin && ctx.hasPage("admin-holidays")
    ? h("a.button.secondary", { id: "person-holidays", href: `#/admin/holidays?user=${encodeURIComponent(user.id)}` }, t("person.holidays")) : null;
  root.append(...[back, slot, status, edit || message || holidays ? h("div.actions", {}, message, edit, holidays) : null, editSlot].filter(Boolean));
  show();
}
