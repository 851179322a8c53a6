// The team directory: everyone, with picture, position and ways to reach them; prefix search
// (debounced); for admins a status filter (employees see active colleagues); the company's
// total and active counts. A name opens that person's page.
import { get } from "../api.js";
import { t, counts as countsText } from "../i18n.js";
import { h, avatar, notice, contactLinks, errorText, awayBadge } from "../dom.js";
import { openDirect } from "./chat-common.js";

const debounceMs = 250;

/// "Message": opens (creating once) the direct chat with this colleague.
function messageButton(user, name, ctx, problem) {
  const button = h("button.secondary.small", { type: "button", dataset: { action: "message" }, "aria-label": t("dir.messageNamed", { name }) }, t("dir.message"));
  button.addEventListener("click", async () => {
    button.disabled = true;
    try { await openDirect(user.id, ctx.navigate); } catch (error) { problem.set("bad", errorText(error)); button.disabled = false; }
  });
  return button;
}

function card(user, ctx, problem) {
  const name = user.displayName || user.username;
  const contacts = contactLinks(user, name);

  const badges = [h("span.badge." + (user.active ? "on" : "off"), {}, user.active ? t("dir.active") : t("dir.inactive"))];
  if (user.role === "admin") badges.push(h("span.badge.role", {}, t("dir.admin")));
  const away = awayBadge(user.away);
  if (away) badges.push(away);

  return h("li.person" + (user.active ? "" : ".inactive"), { dataset: { userId: user.id } },
    avatar(user, "md"),
    h("div.person-main", {},
      h("div.person-head", {}, h("h2.person-name", {}, h("a.person-link", { href: `#/person?id=${encodeURIComponent(user.id)}` }, name)), ...badges),
      user.position ? h("p.position", {}, user.position) : null,
      user.status ? h("p.status-line", {}, user.status) : null,
      contacts.length ? h("p.contacts", {}, ...contacts) : null,
      ctx.hasPage("chat") && user.active && user.id !== ctx.me.id ? h("p.person-actions", {}, messageButton(user, name, ctx, problem)) : null));
}

export function render(root, ctx) {
  const search = h("input", { id: "dir-search", type: "search", placeholder: t("dir.search"), "aria-label": t("dir.search") });
  // Employees see active colleagues only (the server refuses them the others).
  const status = h("select", { id: "dir-status" },
    ...["all", "active", "inactive"].map((s) => h("option", { value: s }, t("dir.status." + s))));
  if (!ctx.isAdmin) status.value = "active";
  const counts = h("p.counts", { id: "dir-counts", "aria-live": "polite" });
  const list = h("ul.people", { id: "dir-list" });
  const problem = notice();
  root.append(
    h("div.page-head", {}, h("h1", {}, t("dir.title")), counts),
    h("div.toolbar", {}, search, ctx.isAdmin ? h("label.inline", {}, h("span", {}, t("dir.status")), status) : null),
    problem, list);

  let sequence = 0;
  let timer = null;
  async function load() {
    const mine = ++sequence;
    const params = new URLSearchParams({ q: search.value.trim(), status: status.value });
    try {
      const result = await get("/users?" + params);
      // A slower, older answer must not overwrite a newer one.
      if (mine !== sequence || !ctx.alive()) return;
      problem.set();
      counts.textContent = countsText(result.total, result.active);
      list.replaceChildren(...result.items.map((u) => card(u, ctx, problem)));
      if (result.items.length === 0) list.append(h("li.empty", {}, t("dir.empty")));
      list.setAttribute("aria-busy", "false");
    } catch (error) {
      if (mine !== sequence || !ctx.alive()) return;
      problem.set("bad", error.describe());
    }
  }
  search.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(load, debounceMs);
  });
  status.addEventListener("change", load);
  list.setAttribute("aria-busy", "true");
  load();
  return () => clearTimeout(timer);
}
