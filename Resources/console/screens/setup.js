// First run (/setup#token=…): the form that creates the first administrator with the one-time
// token the server printed. When the server is already set up, a plain message and a way to
// log in instead.
import { get, post, ApiError } from "../api.js";
import { t, takenProblems } from "../i18n.js";
import { h, field, showFieldErrors, notice, errorText } from "../dom.js";

function closed(root, messageKey) {
  root.append(h("div.center", {}, h("section.card.login", { id: "setup-closed" },
    h("h1", {}, t("setup.closedTitle")),
    h("p", {}, t(messageKey)),
    h("p", {}, h("a.button", { href: "/#/login", id: "setup-login" }, t("setup.toLogin"))))));
}

export async function render(root, ctx) {
  let open = false;
  try {
    open = Boolean((await get("/auth/setup")).open);
  } catch { /* unknown: the form explains a refusal if it comes */ open = true; }
  if (!ctx.alive()) return;
  if (!open) { closed(root, "setup.closed"); return; }
  if (!ctx.token) { closed(root, "setup.noToken"); return; }

  const fields = {
    username: field(t("admin.username"), h("input", { id: "setup-username", required: true, maxlength: 32, autocomplete: "username",
      autocapitalize: "none", spellcheck: "false" }), t("field.username")),
    email: field(t("admin.email"), h("input", { id: "setup-email", type: "email", required: true, maxlength: 254, autocomplete: "email" })),
    displayName: field(t("setup.name"), h("input", { id: "setup-displayName", maxlength: 100, autocomplete: "name" })),
    password: field(t("login.password"), h("input", { id: "setup-password", type: "password", required: true, minlength: 10,
      autocomplete: "new-password" }), t("field.passwordShort")),
  };
  const status = notice();
  const submit = h("button", { type: "submit", id: "setup-submit" }, t("setup.submit"));
  const form = h("form.card.login", { id: "setup-form", novalidate: true, "aria-labelledby": "setup-title" },
    h("h1", { id: "setup-title" }, t("setup.title")),
    h("p.muted", {}, t("setup.intro")),
    fields.username.wrap, fields.email.wrap, fields.displayName.wrap, fields.password.wrap,
    status, h("div.actions", {}, submit));

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {
      token: ctx.token,
      username: fields.username.input.value.trim().toLowerCase(),
      email: fields.email.input.value.trim(),
      password: fields.password.input.value,
    };
    const displayName = fields.displayName.input.value.trim();
    if (displayName) body.displayName = displayName;
    const problems = {};
    if (!body.username) problems.username = "is required";
    if (!body.email) problems.email = "is required";
    if ([...body.password].length < 10) problems.password = "must be at least 10 characters";
    if (showFieldErrors(fields, problems)) { status.set("bad", t("err.validation_failed")); return; }
    submit.disabled = true;
    try {
      const session = await post("/auth/setup", body);
      await ctx.started(session);
    } catch (error) {
      if (!ctx.alive()) return;
      if (error instanceof ApiError && error.code === "setup_closed") {
        root.replaceChildren();
        closed(root, "setup.closed");
        return;
      }
      showFieldErrors(fields, { ...(error?.fields ?? {}), ...takenProblems(error) });
      status.set("bad", errorText(error));
      submit.disabled = false;
    }
  });
  root.append(h("div.center", {}, form));
  fields.username.input.focus();
}
