// The login screen: username or email and password; errors in words; whom to ask about a
// forgotten password (there is no e-mail: an admin resets it); "Create an account" when the
// company lets people sign up (saying which addresses when only its domain's may).
import { get } from "../api.js";
import { t } from "../i18n.js";
import { h, notice } from "../dom.js";

export function render(root, ctx) {
  const flash = ctx.takeFlash();
  const status = notice();
  if (flash) status.set("", t(flash));
  const loginInput = h("input", { id: "login-name", name: "username", autocomplete: "username", required: true, autocapitalize: "none", spellcheck: "false" });
  const passwordInput = h("input", { id: "login-password", name: "password", type: "password", autocomplete: "current-password", required: true });
  const submit = h("button", { type: "submit", id: "login-submit" }, t("login.submit"));
  const forgotten = h("p.hint", { id: "login-forgot" }, t("login.forgot"));
  get("/auth/password-help", { quiet401: true }).then(({ adminName }) => {
    if (adminName && ctx.alive()) forgotten.textContent = t("login.forgotNamed", { name: adminName });
  }).catch(() => { /* the words without a name stay */ });
  const signUp = h("p.hint", { id: "login-signup", hidden: true });
  get("/auth/registration", { quiet401: true }).then(({ mode, domain }) => {
    if (!ctx.alive() || mode === "closed") return;
    signUp.replaceChildren(
      mode === "domain" ? t("login.createAccountDomain", { domain }) + " " : "",
      h("a", { href: "#/join", id: "login-create-account" }, t("login.createAccount")));
    signUp.hidden = false;
  }).catch(() => { /* no sign-up link: the login form still works */ });
  const form = h("form.card.login", { id: "login-form", novalidate: true },
    h("h1", {}, t("login.title")),
    h("p.muted", {}, t("login.intro")),
    status,
    h("div.field", {}, h("label", { for: "login-name" }, t("login.login")), loginInput),
    h("div.field", {}, h("label", { for: "login-password" }, t("login.password")), passwordInput),
    h("div.actions", {}, submit),
    forgotten,
    signUp);

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const name = loginInput.value.trim();
    if (!name || !passwordInput.value) {
      status.set("bad", t("field.required"));
      (name ? passwordInput : loginInput).focus();
      return;
    }
    submit.disabled = true;
    submit.textContent = t("login.busy");
    status.set("", "");
    try {
      await ctx.login(name, passwordInput.value);
    } catch (error) {
      if (!ctx.alive()) return;
      status.set("bad", error.describe ? error.describe() : t("err.network"));
      status.setAttribute("role", "alert");
      passwordInput.value = "";
      passwordInput.focus();
    } finally {
      submit.disabled = false;
      submit.textContent = t("login.submit");
    }
  });

  root.append(h("div.center", {}, form));
  loginInput.focus();
}
