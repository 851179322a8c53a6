// The rest of the chat section, on #/chat?view=…: "new" starts a conversation: a person chosen
// from the directory (their direct chat, opened or made once) or a new group (name, description,
// tags, public, members chosen from the directory); "public" lists the public groups to open or
// join; "contacts" is my list of people (add from the directory, message, remove); "search"
// finds my messages, each result with its snippet shown as text and a link to its chat.
import { get, post, put, del } from "../api.js";
import { t, tn } from "../i18n.js";
import { h, notice, avatar, failure, errorText, submitForm } from "../dom.js";
import { people, chatName, chatPicture, snippetNodes, shortTime, openDirect, chatTabs } from "./chat-common.js";
import { groupFields, groupBody } from "./chat-info.js";

async function renderNew(root, ctx) {
  const who = people();
  const fields = groupFields({}, "group");
  const filter = h("input", { id: "group-filter", type: "search", placeholder: t("chat.filterPeople"), "aria-label": t("chat.filterPeople") });
  const choices = h("ul.choices", { id: "group-members" });
  const chosen = new Set();
  const status = notice();
  const create = h("button", { type: "submit", id: "group-create" }, t("chat.createGroup"));
  const form = h("form.card", { id: "group-form", novalidate: true, "aria-labelledby": "group-form-title" },
    h("h2", { id: "group-form-title" }, t("chat.newGroup")),
    fields.name.wrap, fields.description.wrap, fields.tags.wrap, fields.public.wrap,
    h("fieldset.group", {}, h("legend", {}, t("chat.members")), filter, choices),
    status, h("div.actions", {}, create));
  // A person: search the directory, then "Message" opens (or makes) the direct chat.
  const personFilter = h("input", { id: "direct-filter", type: "search", maxlength: 100, placeholder: t("chat.findPerson"),
    "aria-label": t("chat.findPerson"), "aria-controls": "direct-people" });
  const personList = h("ul.members", { id: "direct-people", "aria-live": "polite" });
  const directStatus = notice();
  directStatus.id = "direct-status";
  const direct = h("section.card", { id: "direct-card", "aria-labelledby": "direct-title" },
    h("h2", { id: "direct-title" }, t("chat.messagePerson")), personFilter, personList, directStatus);
  root.append(h("div.page-head", {}, h("h1", {}, t("chat.newMessage"))), chatTabs("new"), direct,
    h("p.muted", { id: "group-intro" }, t("chat.orNewGroup")), form);

  const everyone = (await who.all()).filter((u) => u.id !== ctx.me.id && u.active !== false);
  if (!ctx.alive()) return null;
  const plainText = (s) => String(s ?? "").normalize("NFD").replace(/\p{M}/gu, "").toLocaleLowerCase();
  const maxShown = 20;
  function drawPeople() {
    const q = plainText(personFilter.value.trim());
    const shown = everyone.filter((u) => !q || plainText(u.displayName).includes(q) || plainText(u.username).includes(q)).slice(0, maxShown);
    personList.replaceChildren(...shown.map((u) => {
      const name = u.displayName || u.username;
      const open = h("button.secondary.small", { type: "button", dataset: { action: "message", userId: u.id }, "aria-label": t("chat.messageNamed", { name }) },
        t("chat.message"));
      open.addEventListener("click", async () => {
        open.disabled = true;
        try { await openDirect(u.id, ctx.navigate); } catch (error) { directStatus.set("bad", errorText(error)); open.disabled = false; }
      });
      return h("li.member", { dataset: { userId: u.id } }, avatar(u, "sm"),
        h("div.member-main", {}, h("span", {}, name), u.position ? h("span.muted", {}, " · " + u.position) : null),
        h("div.member-actions", {}, open));
    }));
    if (!shown.length) personList.append(h("li.empty", {}, t("dir.empty")));
  }
  personFilter.addEventListener("input", drawPeople);
  drawPeople();
  function drawChoices() {
    const q = filter.value.trim().toLocaleLowerCase();
    const plain = (s) => String(s ?? "").normalize("NFD").replace(/\p{M}/gu, "").toLocaleLowerCase();
    const shown = everyone.filter((u) => !q || plain(u.displayName).includes(plain(q)) || plain(u.username).includes(plain(q)) || chosen.has(u.id));
    choices.replaceChildren(...shown.map((u) => {
      const box = h("input", { type: "checkbox", id: `group-member-${u.id}`, value: u.id, checked: chosen.has(u.id) });
      box.addEventListener("change", () => { if (box.checked) chosen.add(u.id); else chosen.delete(u.id); });
      return h("li.check-item", {}, box, h("label", { for: box.id }, avatar(u, "xs"), " ", u.displayName || u.username));
    }));
    if (!shown.length) choices.append(h("li.empty", {}, t("dir.empty")));
  }
  filter.addEventListener("input", drawChoices);
  drawChoices();
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { ...groupBody(fields), memberIds: [...chosen] };
    if (!body.name) { status.set("bad", t("err.validation_failed")); fields.name.error.textContent = t("field.required"); fields.name.error.hidden = false; fields.name.input.focus(); return; }
    const sent = await submitForm({ button: create, fields, status }, () => post("/chats", body));
    if (sent.ok) ctx.navigate(`#/chat?id=${encodeURIComponent(sent.result.id)}`);
  });
  personFilter.focus();
  return null;
}

async function renderPublic(root, ctx) {
  const who = people();
  const list = h("ul.chat-list", { id: "public-list", "aria-busy": "true" });
  const status = notice();
  root.append(h("div.page-head", {}, h("h1", {}, t("chat.title"))), chatTabs("public"),
    h("h2", {}, t("chat.publicGroups")), status, list);
  async function load() {
    let items;
    try {
      ({ items } = await get("/chats/public"));
    } catch (error) {
      if (ctx.alive()) list.replaceChildren(h("li", {}, failure(error, t("err.network"))));
      return;
    }
    if (!ctx.alive()) return;
    list.replaceChildren(...(items ?? []).map((chat) => {
      const member = typeof chat.member === "boolean" ? chat.member : (chat.members ?? []).some((m) => m.userId === ctx.me.id);
      const open = member
        ? h("a.button.secondary", { href: `#/chat?id=${encodeURIComponent(chat.id)}`, dataset: { action: "open" } }, t("chat.open"))
        : h("button", { type: "button", dataset: { action: "join" }, "aria-label": t("chat.joinNamed", { name: chat.name }) }, t("chat.join"));
      if (!member) {
        open.addEventListener("click", async () => {
          open.disabled = true;
          try {
            await post(`/chats/${chat.id}/join`);
            ctx.navigate(`#/chat?id=${encodeURIComponent(chat.id)}`);
          } catch (error) {
            status.set("bad", errorText(error));
            open.disabled = false;
          }
        });
      }
      return h("li.chat-item", { dataset: { chatId: chat.id } }, chatPicture(chat, ctx.me, who),
        h("div.chat-item-main", {},
          h("div.chat-item-head", {}, h("h3.chat-item-name", {}, chat.name), h("span.muted", {}, tn("chat.memberCount", (chat.members ?? []).length))),
          chat.description ? h("p.chat-preview", {}, chat.description) : null,
          chat.tags?.length ? h("p.tags", {}, ...chat.tags.map((tag) => h("span.badge.tag", {}, "#" + tag))) : null),
        open);
    }));
    if (!items?.length) list.append(h("li.empty", { id: "public-empty" }, t("chat.noPublic")));
    list.setAttribute("aria-busy", "false");
  }
  const off = ["chat.created", "chat.updated", "chat.deleted", "member.added", "member.removed", "resync"].map((type) => ctx.realtime.on(type, load));
  await load();
  return () => off.forEach((f) => f());
}

async function renderContacts(root, ctx) {
  const who = people();
  const list = h("ul.members", { id: "contacts-list", "aria-busy": "true" });
  const status = notice();
  status.id = "contacts-status";
  const select = h("select", { id: "contacts-add-user", "aria-label": t("chat.choosePerson") });
  const add = h("button", { type: "submit", id: "contacts-add" }, t("chat.addContact"));
  const form = h("form.toolbar", { id: "contacts-add-form" }, select, add);
  root.append(h("div.page-head", {}, h("h1", {}, t("chat.title"))), chatTabs("contacts"), h("h2", {}, t("chat.contacts")), form, status, list);

  async function load() {
    let items;
    try {
      [{ items }] = await Promise.all([get("/contacts"), who.all()]);
    } catch (error) {
      if (ctx.alive()) list.replaceChildren(h("li", {}, failure(error, t("err.network"))));
      return;
    }
    if (!ctx.alive()) return;
    const contacts = (items ?? []).map((c) => ({ id: c.userId, fallback: { ...c, id: c.userId } }));
    await who.load(contacts.map((c) => c.id));
    const ids = new Set(contacts.map((c) => c.id));
    list.replaceChildren(...contacts.map((c) => {
      const user = who.name(c.id) === t("chat.someone") ? c.fallback : who.user(c.id);
      const name = user.displayName || user.username;
      const message = h("button.secondary.small", { type: "button", dataset: { action: "message" } }, t("chat.message"));
      const remove = h("button.secondary.small.danger", { type: "button", dataset: { action: "remove" }, "aria-label": t("chat.removeContactNamed", { name }) }, t("chat.removeContact"));
      message.addEventListener("click", () => openDirect(c.id, ctx.navigate).catch((e) => status.set("bad", errorText(e))));
      remove.addEventListener("click", async () => {
        remove.disabled = true;
        try { await del(`/contacts/${c.id}`); status.set("ok", t("chat.contactRemoved", { name })); await load(); } catch (e) { status.set("bad", errorText(e)); remove.disabled = false; }
      });
      return h("li.member", { dataset: { userId: c.id } }, avatar(user, "sm"),
        h("div.member-main", {}, h("a.person-link", { href: `#/person?id=${encodeURIComponent(c.id)}` }, name),
          user.position ? h("span.muted", {}, " · " + user.position) : null),
        h("div.member-actions", {}, message, remove));
    }));
    if (!contacts.length) list.append(h("li.empty", { id: "contacts-empty" }, t("chat.noContacts")));
    list.setAttribute("aria-busy", "false");
    const everyone = await who.all();
    select.replaceChildren(h("option", { value: "" }, t("chat.choosePerson")),
      ...everyone.filter((u) => u.id !== ctx.me.id && !ids.has(u.id)).map((u) => h("option", { value: u.id }, u.displayName || u.username)));
  }
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const userId = Number(select.value);
    if (!userId) return;
    const sent = await submitForm({ button: add, fields: {}, status }, () => put(`/contacts/${userId}`));
    if (sent.ok) { status.set("ok", t("chat.contactAdded", { name: who.name(userId) })); await load(); }
  });
  await load();
  return null;
}

async function renderSearch(root, ctx, { searchForm }) {
  const q = (ctx.params.get("q") ?? "").trim();
  const who = people();
  const list = h("ul.results", { id: "search-results", "aria-busy": "true" });
  const summary = h("p.muted", { id: "search-summary", "aria-live": "polite" });
  root.append(h("div.page-head", {}, h("h1", {}, t("chat.searchTitle"))), chatTabs("search"), searchForm(q), summary, list);
  if (!q) { list.setAttribute("aria-busy", "false"); return null; }
  let items;
  let chats;
  try {
    [{ items }, { items: chats }] = await Promise.all([get(`/search/messages?${new URLSearchParams({ q, limit: "50" })}`), get("/chats")]);
    await who.load([...(items ?? []).map((r) => r.message?.senderId), ...(chats ?? []).flatMap((c) => (c.members ?? []).map((m) => m.userId))].filter((x) => x != null));
  } catch (error) {
    if (ctx.alive()) list.replaceChildren(h("li", {}, failure(error, t("err.network"))));
    return null;
  }
  if (!ctx.alive()) return null;
  const byId = new Map((chats ?? []).map((c) => [c.id, c]));
  summary.textContent = tn("chat.results", (items ?? []).length);
  list.replaceChildren(...(items ?? []).map((r) => {
    const chat = byId.get(r.chatId ?? r.message?.chatId);
    const where = chat ? chatName(chat, ctx.me, who) : t("chat.title");
    const m = r.message ?? {};
    return h("li.result", { dataset: { messageId: m.id } },
      h("p.result-head", {},
        h("a", { href: `#/chat?id=${encodeURIComponent(r.chatId ?? m.chatId)}&at=${encodeURIComponent(m.id)}` }, where), " · ",
        h("span", {}, m.senderId === ctx.me.id ? t("chat.you") : who.name(m.senderId)), " · ",
        m.createdAt ? h("time", { datetime: m.createdAt }, shortTime(m.createdAt)) : null),
      h("p.snippet", {}, ...snippetNodes(r.snippet ?? m.body ?? "")));
  }));
  if (!items?.length) list.append(h("li.empty", { id: "search-empty" }, t("chat.noResults", { q })));
  list.setAttribute("aria-busy", "false");
  return null;
}

export function render(root, ctx, view, helpers) {
  if (view === "new") return renderNew(root, ctx);
  if (view === "public") return renderPublic(root, ctx);
  if (view === "contacts") return renderContacts(root, ctx);
  return renderSearch(root, ctx, helpers);
}
