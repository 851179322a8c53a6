// My profile: the picture (upload, remove), my details (PATCH /me) and my password.
import { get, patch, put } from "../api.js";
import { t, dateTime } from "../i18n.js";
import { h, field, showFieldErrors, notice, avatar, errorText, submitForm, pictureControls, languageSelect } from "../dom.js";
import { deviceSwitch } from "../push.js";

const profileFields = ["displayName", "position", "phone", "twitter", "linkedin", "bio", "status", "country", "language", "notificationsEnabled"];

function pictureSection(me, ctx) {
  const picture = h("div.picture", { id: "profile-picture" }, avatar(me, "lg"));
  const { controls, status } = pictureControls({
    path: "/me/avatar", idPrefix: "avatar", hasPicture: Boolean(me.avatarUrl), chooseLabel: t("profile.upload"),
    uploaded: t("profile.uploaded"), removed: t("profile.removed"),
    changed: (url) => {
      me.avatarUrl = url;
      picture.replaceChildren(avatar(me, "lg"));
      ctx.setMe(me);
    },
  });
  return h("section.card.picture-card", { "aria-labelledby": "picture-title" },
    h("h2", { id: "picture-title" }, t("profile.picture")),
    h("div.picture-row", {}, picture, h("div", {}, h("p.hint", {}, t("profile.pictureHint")), controls)),
    status);
}

function detailsSection(me, ctx) {
  const text = (name, attrs = {}) => h("input", { name, id: "profile-" + name, value: me[name] ?? "", ...attrs });
  const language = languageSelect({ name: "language", id: "profile-language" }, me.language || "en");
  const fields = {
    displayName: field(t("profile.displayName"), text("displayName", { required: true, maxlength: 100, autocomplete: "name" })),
    position: field(t("profile.position"), text("position", { maxlength: 100, autocomplete: "organization-title" })),
    phone: field(t("profile.phone"), text("phone", { type: "tel", maxlength: 40, autocomplete: "tel" })),
    twitter: field(t("profile.twitter"), text("twitter", { maxlength: 16, placeholder: "@handle", autocapitalize: "none" })),
    linkedin: field(t("profile.linkedin"), text("linkedin", { maxlength: 200, placeholder: "https://www.linkedin.com/in/…", autocapitalize: "none" })),
    status: field(t("profile.status"), text("status", { maxlength: 140 }), t("profile.statusHint")),
    country: field(t("profile.country"), text("country", { maxlength: 64, autocomplete: "country-name" })),
    language: field(t("profile.language"), language, `${t("profile.languageHint")} ${t("lang.restEnglish")}`),
    bio: field(t("profile.bio"), h("textarea", { name: "bio", id: "profile-bio", rows: 4, maxlength: 2000, value: me.bio ?? "" })),
    notificationsEnabled: field(t("profile.notifications"),
      h("input", { type: "checkbox", name: "notificationsEnabled", id: "profile-notificationsEnabled", checked: me.notificationsEnabled !== false })),
  };
  const email = h("input", { id: "profile-email", value: me.email ?? "", readonly: true, type: "email" });
  const status = notice();
  const save = h("button", { type: "submit", id: "profile-save" }, t("profile.save"));
  const form = h("form.card", { id: "profile-form", novalidate: true, "aria-labelledby": "details-title" },
    h("h2", { id: "details-title" }, t("profile.details")),
    h("div.grid", {},
      fields.displayName.wrap, fields.position.wrap,
      field(t("profile.email"), email, t("profile.emailHint")).wrap, fields.phone.wrap,
      fields.twitter.wrap, fields.linkedin.wrap,
      fields.country.wrap, fields.language.wrap),
    fields.status.wrap, fields.bio.wrap, fields.notificationsEnabled.wrap,
    status, h("div.actions", {}, save));

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {};
    for (const name of profileFields) {
      const input = fields[name].input;
      body[name] = input.type === "checkbox" ? input.checked : input.value.trim();
    }
    if (!body.displayName) { showFieldErrors(fields, { displayName: "is required" }); return; }
    const sent = await submitForm({ button: save, fields, status }, () => patch("/me", body));
    if (!sent.ok) return;
    const updated = sent.result;
    Object.assign(me, updated);
    for (const name of profileFields) {
      const input = fields[name].input;
      if (input.type === "checkbox") input.checked = updated[name] !== false;
      else input.value = updated[name] ?? "";
    }
    ctx.setMe(me);
    status.set("ok", t("profile.saved"));
  });
  return form;
}

/// A form to choose a new password (PUT /me/password): the current one (unless `knownCurrent`
/// is given), the new one twice. `done` runs after the server took it. Profile and the first
/// login's "Choose your own password" share it.
export function passwordForm({ heading, headingLevel = "h2", intro, currentLabel = t("profile.currentPassword"),
  submitLabel = t("profile.changePassword"), knownCurrent = null, done }) {
  const fields = {
    currentPassword: field(currentLabel, h("input", { type: "password", id: "pw-current", autocomplete: "current-password", required: true })),
    newPassword: field(t("profile.newPassword"), h("input", { type: "password", id: "pw-new", autocomplete: "new-password", minlength: 10, required: true }), t("field.passwordShort")),
    confirm: field(t("profile.confirmPassword"), h("input", { type: "password", id: "pw-confirm", autocomplete: "new-password", required: true })),
  };
  if (knownCurrent) fields.currentPassword.wrap.hidden = true;
  const status = notice();
  const submit = h("button", { type: "submit", id: "pw-submit" }, submitLabel);
  const form = h("form.card", { id: "password-form", novalidate: true, "aria-labelledby": "password-title" },
    h(headingLevel, { id: "password-title" }, heading),
    intro ? h("p.muted", {}, intro) : null,
    h("input.visually-hidden", { type: "text", autocomplete: "username", tabindex: -1, "aria-hidden": "true" }),
    fields.currentPassword.wrap, fields.newPassword.wrap, fields.confirm.wrap, status, h("div.actions", {}, submit));

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const current = knownCurrent ?? fields.currentPassword.input.value;
    const next = fields.newPassword.input.value;
    const problems = {};
    if (!current) problems.currentPassword = "is required";
    if ([...next].length < 10) problems.newPassword = "must be at least 10 characters";
    else if (next !== fields.confirm.input.value) problems.confirm = t("field.passwordMismatch");
    showFieldErrors(fields, problems);
    if (Object.keys(problems).length) { status.set(); return; }
    const sent = await submitForm({ button: submit, fields, status }, () => put("/me/password", { currentPassword: current, newPassword: next }));
    if (!sent.ok) {
      // The temporary password the console remembered was refused: ask for it.
      if (knownCurrent && sent.error?.fields?.currentPassword) { knownCurrent = null; fields.currentPassword.wrap.hidden = false; }
      return;
    }
    for (const f of Object.values(fields)) f.input.value = "";
    await done(status);
  });
  return { form, focus: () => (knownCurrent ? fields.newPassword : fields.currentPassword).input.focus() };
}

function passwordSection() {
  return passwordForm({ heading: t("profile.password"), done: (status) => status.set("ok", t("profile.passwordChanged")) }).form;
}

export async function render(root, ctx) {
  // Fresh from the server: another tab may have changed it.
  let me;
  try {
    me = await get("/me");
  } catch (error) {
    if (ctx.alive()) root.append(h("p.notice.bad", { role: "alert" }, errorText(error)));
    return;
  }
  if (!ctx.alive()) return;
  const facts = [t("profile.role." + me.role), "@" + me.username];
  if (me.lastLoginAt) facts.push(t("profile.lastLogin", { when: dateTime(me.lastLoginAt) }));
  root.append(
    h("div.page-head", {}, h("h1", {}, t("profile.title")), h("p.muted", {}, facts.join(" · "))),
    h("div.profile", {}, pictureSection(me, ctx), detailsSection(me, ctx), deviceSwitch({ enabled: me.notificationsEnabled !== false }), passwordSection()));
}
