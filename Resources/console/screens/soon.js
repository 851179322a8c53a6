// The polite placeholder for a section whose module has not arrived yet.
import { t } from "../i18n.js";
import { h } from "../dom.js";

export function render(root, ctx) {
  root.append(h("section.card.soon", {},
    h("h1", {}, t("soon.title", { section: ctx.page.title })),
    h("p", {}, t("soon.body")),
    h("p", {}, h("a", { href: "#/home" }, t("soon.back")))));
}
