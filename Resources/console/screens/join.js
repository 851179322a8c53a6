// Sign-up (#/join): with an invitation link (/join#invite=…) it names the company and the role the
// link gives; without one it is open only when the company lets people sign up (perhaps only
// with an address at its domain, which it says). The new account is logged in at once.
import { get, post, ApiError } from "../api.js";
import { t, takenProblems, languages, browserLanguage, lang, calendarDate } from "../i18n.js";
import { h, field, showFieldErrors, notice, errorText, brandName } from "../dom.js";

/// A card that says why nobody can sign up here, and what to do instead.
function cannotJoin(root, id, titleKey, textKey) {
  root.replaceChildren(h("div.center", {}, h("section.card.login", { id, "aria-labelledby": `${id}-title` },
    h("h1", { id: `${id}-title` }, t(titleKey)),
    h("p", {}, t(textKey)),
    h("p", {}, h("a.button", { href: "#/login", id: "join-to-login" }, t("join.toLogin"))))));
}

export async function render(root, ctx) {
  const token = ctx.inviteToken;
  let invite = null;
  let policy = null;
  try {
    if (token) invite = await get(`/invites/${encodeURIComponent(token)}`);
    else policy = await get("/auth/registration");
  } catch (error) {
    if (!ctx.alive()) return;
    if (error instanceof ApiError && error.code === "invite_not_found") {
      cannotJoin(root, "join-invalid", "join.invalidTitle", "join.invalid");
    } else {
      root.replaceChildren(h("div.center", {}, h("section.card.login", {}, h("h1", {}, t("join.title")),
        h("p.notice.bad", { role: "alert" }, errorText(error)))));
    }
    return;
  }
  if (!ctx.alive()) return;
  if (!invite && policy.mode === "closed") {
    cannotJoin(root, "join-closed", "join.closedTitle", "join.closed");
    return;
  }

  const company = (invite ?? policy).companyName || brandName();
  const heading = invite ? t("join.invited", { company }) : t("join.titleCompany", { company });
  const intro = [];
  if (invite) {
    intro.push(h("p", { id: "join-role" }, t(invite.role === "admin" ? "join.roleAdmin" : "join.roleEmployee")));
    intro.push(h("p.muted", { id: "join-expires" }, t("join.expires", { date: calendarDate(invite.expiresAt.slice(0, 10)) })));
  } else if (policy.mode === "domain") {
    intro.push(h("p", { id: "join-domain" }, t("join.domainOnly", { domain: policy.domain })));
  } else {
    intro.push(h("p.muted", {}, t("join.openIntro")));
  }

  const languageInput = h("select", { id: "join-language", autocomplete: "language" },
    ...languages.map(([code, label]) => h("option", { value: code, lang: code }, label)));
  languageInput.value = browserLanguage() ?? lang();
  const fields = {
    displayName: field(t("join.name"), h("input", { id: "join-displayName", required: true, maxlength: 100, autocomplete: "name" })),
    username: field(t("admin.username"), h("input", { id: "join-username", required: true, maxlength: 32, autocomplete: "username",
      autocapitalize: "none", spellcheck: "false" }), t("field.username")),
    email: field(t("admin.email"), h("input", { id: "join-email", type: "email", required: true, maxlength: 254, autocomplete: "email" }),
      policy?.mode === "domain" ? t("join.emailAt", { domain: policy.domain }) : null),
    password: field(t("login.password"), h("input", { id: "join-password", type: "password", required: true, minlength: 10,
      autocomplete: "new-password" }), t("field.passwordShort")),
    confirm: field(t("join.confirm"), h("input", { id: "join-confirm", type: "password", required: true, autocomplete: "new-password" })),
    language: field(t("join.language"), languageInput, t("join.languageHint")),
  };
  const status = notice();
  const submit = h("button", { type: "submit", id: "join-submit" }, t("join.submit"));
  const form = h("form.card.login", { id: "join-form", novalidate: true, "aria-labelledby": "join-title" },
    h("h1", { id: "join-title" }, heading),
    ...intro,
    ...Object.values(fields).map((f) => f.wrap),
    status,
    h("div.actions", {}, submit),
    h("p.hint", {}, t("join.haveAccount"), " ", h("a", { href: "#/login", id: "join-login" }, t("join.logIn"))));

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {
      displayName: fields.displayName.input.value.trim(),
      username: fields.username.input.value.trim().toLowerCase(),
      email: fields.email.input.value.trim(),
      password: fields.password.input.value,
      language: languageInput.value,
    };
    if (invite) body.invite = token;
    const problems = {};
    if (!body.displayName) problems.displayName = "is required";
    if (!body.username) problems.username = "is required";
    if (!body.email) problems.email = "is required";
    if ([...body.password].length < 10) problems.password = "must be at least 10 characters";
    else if (fields.confirm.input.value !== body.password) problems.confirm = t("join.mismatch");
    if (showFieldErrors(fields, problems)) { status.set("bad", t("err.validation_failed")); return; }
    submit.disabled = true;
    status.set("", t("join.busy"));
    try {
      const session = await post("/auth/register", body);
      await ctx.joined(session);
    } catch (error) {
      if (!ctx.alive()) return;
      submit.disabled = false;
      if (error instanceof ApiError && error.code === "invite_not_found") {
        cannotJoin(root, "join-invalid", "join.invalidTitle", "join.invalid");
        return;
      }
      const outside = error?.code === "registration_closed" && policy?.mode === "domain"
        ? { email: t("join.emailAt", { domain: policy.domain }) } : {};
      showFieldErrors(fields, { ...(error?.fields ?? {}), ...takenProblems(error), ...outside });
      status.set("bad", errorText(error));
      status.setAttribute("role", "alert");
    }
  });
  root.append(h("div.center", {}, form));
  fields.displayName.input.focus();
}
