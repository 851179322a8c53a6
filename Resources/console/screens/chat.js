// Chat (#/chat): the list of my chats, most recent activity first, with the last message and
// unread and mention badges, kept up to date from the realtime stream; a search box over my
// messages. The other chat screens share the route and are chosen by its parameters:
// ?id=N (one chat), ?id=N&info=1 (group info), ?view=new|public|contacts|search.
import { get } from "../api.js";
import { t, tn } from "../i18n.js";
import { h, failure } from "../dom.js";
import { people, chatName, chatPicture, shortTime, chatTabs, messagePeople, systemText } from "./chat-common.js";
import { pushSupported, pushHint } from "../push.js";

const refreshDelayMs = 250;
const listEvents = ["message.created", "message.updated", "message.deleted", "chat.created", "chat.updated", "chat.deleted",
  "member.added", "member.removed", "resync"];

function preview(chat, me, who) {
  const last = chat.lastMessage;
  if (!last) return h("p.chat-preview.muted", {}, t("chat.noMessages"));
  // Who came and went, in words: "Ana added Bob".
  if (last.kind === "system") return h("p.chat-preview.system", {}, systemText(last, me, who));
  const sender = last.senderId === me.id ? t("chat.you") : (chat.kind === "group" ? who.name(last.senderId) : null);
  const text = last.deleted ? t("chat.deleted") : String(last.body ?? "").replace(/\s+/g, " ");
  return h("p.chat-preview" + (last.deleted ? ".deleted" : ""), {}, sender ? sender + ": " : "", text);
}

function badges(chat) {
  const out = [];
  if (chat.mentionCount > 0) {
    out.push(h("span.badge.mention", { title: tn("chat.mentions", chat.mentionCount), dataset: { count: chat.mentionCount } },
      h("span", { "aria-hidden": "true" }, "@"), h("span.sr-only", {}, tn("chat.mentions", chat.mentionCount))));
  }
  if (chat.unreadCount > 0) {
    out.push(h("span.badge.unread.count", { title: tn("nav.unread", chat.unreadCount), dataset: { count: chat.unreadCount } },
      h("span", { "aria-hidden": "true" }, chat.unreadCount > 99 ? "99+" : String(chat.unreadCount)),
      h("span.sr-only", {}, tn("nav.unread", chat.unreadCount))));
  }
  return out;
}

function row(chat, me, who) {
  const name = chatName(chat, me, who);
  const at = chat.lastMessage?.createdAt ?? chat.createdAt;
  return h("li.chat-item" + (chat.unreadCount > 0 ? ".is-unread" : ""), { dataset: { chatId: chat.id } },
    chatPicture(chat, me, who),
    h("div.chat-item-main", {},
      h("div.chat-item-head", {},
        h("h2.chat-item-name", {}, h("a", { href: `#/chat?id=${encodeURIComponent(chat.id)}` }, name)),
        at ? h("time.chat-item-time", { datetime: at }, shortTime(at)) : null),
      h("div.chat-item-foot", {}, preview(chat, me, who), ...badges(chat))));
}

function searchForm(ctx, value = "") {
  const input = h("input", { id: "chat-search", type: "search", name: "q", maxlength: 200, value, placeholder: t("chat.searchPlaceholder"),
    "aria-label": t("chat.search") });
  const form = h("form.toolbar", { id: "chat-search-form", role: "search" }, input,
    h("button.secondary", { type: "submit", id: "chat-search-go" }, t("chat.search")));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const q = input.value.trim();
    if (q) ctx.navigate(`#/chat?view=search&q=${encodeURIComponent(q)}`);
  });
  return form;
}

/// "Turn on notifications", when the account wants them and this browser has not been asked.
function notificationOffer(ctx) {
  if (pushSupported()) return pushHint(ctx);
  if (!("Notification" in window) || Notification.permission !== "default" || !ctx.me.notificationsEnabled) return null;
  const button = h("button.secondary", { type: "button", id: "chat-notify" }, t("chat.notifyOn"));
  const wrap = h("p.notify-offer", {}, h("span", {}, t("chat.notifyWhy")), " ", button);
  button.addEventListener("click", async () => {
    try { await Notification.requestPermission(); } catch { /* the browser said no */ }
    wrap.remove();
  });
  return wrap;
}

async function renderList(root, ctx) {
  const who = people();
  const list = h("ul.chat-list", { id: "chat-list", "aria-busy": "true" });
  const problem = h("div", { id: "chat-problem" });
  const start = h("a.button", { href: "#/chat?view=new", id: "chat-new" }, t("chat.newMessage"));
  root.append(h("div.page-head", {}, h("h1", {}, t("chat.title")), start), chatTabs("list"), searchForm(ctx), notificationOffer(ctx), problem, list);

  let sequence = 0;
  async function load() {
    const mine = ++sequence;
    try {
      const { items } = await get("/chats");
      const chats = Array.isArray(items) ? items : [];
      await who.load(chats.flatMap((c) => [...(c.members ?? []).map((m) => m.userId), ...messagePeople(c.lastMessage)]));
      if (mine !== sequence || !ctx.alive()) return;
      problem.replaceChildren();
      list.replaceChildren(...chats.map((c) => row(c, ctx.me, who)));
      if (!chats.length) list.append(h("li.empty", { id: "chat-empty" }, t("chat.empty")));
      list.setAttribute("aria-busy", "false");
    } catch (error) {
      if (mine !== sequence || !ctx.alive()) return;
      problem.replaceChildren(failure(error, t("err.network")));
    }
  }
  let timer = null;
  const soon = () => { clearTimeout(timer); timer = setTimeout(load, refreshDelayMs); };
  const off = listEvents.map((type) => ctx.realtime.on(type, soon));
  await load();
  return () => { clearTimeout(timer); off.forEach((f) => f()); };
}

export async function render(root, ctx) {
  const params = ctx.params;
  if (params.has("id")) {
    const module = params.get("info") ? await import("./chat-info.js") : await import("./chat-room.js");
    return module.render(root, ctx);
  }
  const view = params.get("view");
  if (view === "new" || view === "public" || view === "contacts" || view === "search") {
    const module = await import("./chat-more.js");
    return module.render(root, ctx, view, { searchForm: (value) => searchForm(ctx, value) });
  }
  return renderList(root, ctx);
}
