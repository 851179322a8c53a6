// "Choose your own password": where a person whose password an admin generated or reset lands
// after logging in. Nothing else answers until they do (403 password_change_required); then Home.
import { t } from "../i18n.js";
import { h } from "../dom.js";
import { passwordForm } from "./profile.js";

export function render(root, ctx) {
  // The temporary password just typed on the login screen, when this page follows it: not asked twice.
  const { form, focus } = passwordForm({
    heading: t("firstPassword.title"), headingLevel: "h1", intro: t("firstPassword.intro"),
    currentLabel: t("firstPassword.temporary"), submitLabel: t("firstPassword.submit"),
    knownCurrent: ctx.takeTemporaryPassword(),
    done: async (status) => {
      status.set("ok", t("firstPassword.done"));
      await ctx.passwordChosen();
    },
  });
  form.classList.add("login");
  root.append(h("div.center", {}, form));
  focus();
}
