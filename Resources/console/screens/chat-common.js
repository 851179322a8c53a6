// What the chat screens share: people by id (the directory once, then one person at a time for
// anyone it did not list), a chat's name and picture, message bodies as text with @mentions and
// links, search snippets as text, and the pending messages kept across a reload.
import { get, post } from "../api.js";
import { t, lang } from "../i18n.js";
import { h, avatar, initials } from "../dom.js";

export const maxBody = 4000;
export const limits = { name: 100, description: 1000, tags: 10, tag: 32 };

/// People by id for one screen: everyone in the directory, then whoever else is asked for.
export function people() {
  const known = new Map();
  const asked = new Map();
  let everyone = null;
  const all = () => {
    everyone ??= get("/users").then((r) => {
      for (const u of r.items ?? []) known.set(u.id, u);
      return r.items ?? [];
    }, () => []);
    return everyone;
  };
  const one = async (id) => {
    await all();
    if (known.has(id)) return known.get(id);
    if (!asked.has(id)) {
      asked.set(id, get(`/users/${encodeURIComponent(id)}`).then((u) => { known.set(id, u); return u; },
        () => ({ id, username: "", displayName: t("chat.someone") })));
    }
    return asked.get(id);
  };
  return {
    all,
    one,
    /// Resolves every id, so later name(id) calls answer at once.
    async load(ids) { await Promise.all([...new Set(ids)].map(one)); },
    name(id) { const u = known.get(id); return u ? (u.displayName || u.username) : t("chat.someone"); },
    user(id) { return known.get(id) ?? { id, username: "", displayName: t("chat.someone") }; },
  };
}

/// The people a message needs named: its sender, and for a system line the people it concerns.
export function messagePeople(m) {
  return [m?.senderId, ...(m?.kind === "system" ? (m.system?.actorId !== undefined ? [m.system.actorId] : []).concat(m.system?.userIds ?? []) : [])]
    .filter((x) => x !== undefined && x !== null);
}

const systemKeys = {
  "chat.created": ["chat.sys.createdMe", null, "chat.sys.created"],
  "member.added": ["chat.sys.addedByMe", "chat.sys.addedMe", "chat.sys.added"],
  "member.removed": ["chat.sys.removedByMe", "chat.sys.removedMe", "chat.sys.removed"],
  "member.left": ["chat.sys.leftMe", null, "chat.sys.left"],
  "admin.granted": ["chat.sys.grantedByMe", "chat.sys.grantedMe", "chat.sys.granted"],
  "admin.revoked": ["chat.sys.revokedByMe", "chat.sys.revokedMe", "chat.sys.revoked"],
  "chat.renamed": ["chat.sys.renamedByMe", null, "chat.sys.renamed"],
};

/// A system line in plain words for the reader: "Ana added Bob", "You left the group",
/// "Ana made you an admin" (names from `who`, which must have loaded messagePeople(m)).
export function systemText(m, me, who) {
  const line = m?.system ?? {};
  const actor = Number(line.actorId);
  const users = (line.userIds ?? []).map(Number);
  const keys = systemKeys[line.event];
  if (!keys) return t("chat.sys.changed");
  // Joining a public group is adding oneself.
  if (line.event === "member.added" && users.length === 1 && users[0] === actor) {
    return actor === me.id ? t("chat.sys.joinedMe") : t("chat.sys.joined", { actor: who.name(actor) });
  }
  const [byMe, toMe, plain] = keys;
  const names = users.map((id) => (id === me.id ? t("chat.sys.you") : who.name(id)));
  const list = new Intl.ListFormat(lang(), { type: "conjunction" }).format(names);
  const params = { actor: who.name(actor), users: list, name: line.name ?? "" };
  if (actor === me.id) return t(byMe, params);
  if (toMe && users.length === 1 && users[0] === me.id) return t(toMe, params);
  return t(plain, params);
}

/// The other person of a direct chat (or null).
export function otherMember(chat, me) {
  const other = (chat.members ?? []).find((m) => m.userId !== me.id);
  return other ? other.userId : null;
}

/// What a chat is called: the group's name, or the other person's name.
export function chatName(chat, me, who) {
  if (chat.kind === "group") return chat.name || t("chat.unnamed");
  const other = otherMember(chat, me);
  return other === null ? t("chat.justYou") : who.name(other);
}

/// A chat's picture: the other person's for a direct chat, the group's initials otherwise.
export function chatPicture(chat, me, who, size = "sm") {
  if (chat.kind === "direct") {
    const other = otherMember(chat, me);
    if (other !== null) return avatar(who.user(other), size);
  }
  return h(`span.avatar.${size}.initials.group.hue-${Number(chat.id) % 8}`, { "aria-hidden": "true" }, initials(chat.name));
}

export function isAdminOf(chat, me) {
  return (chat.members ?? []).some((m) => m.userId === me.id && m.admin);
}

const mentionOrURL = /(\bhttps?:\/\/[^\s<>"']+)|(^|[^\w@])@([a-z0-9._-]{3,32})/gi;

/// A message body as nodes (never HTML): line breaks kept by CSS, http(s) links, and
/// @username highlighted, strongly when it names the reader.
export function bodyNodes(body, me) {
  const source = String(body ?? "");
  const out = [];
  let last = 0;
  for (const match of source.matchAll(mentionOrURL)) {
    if (match[1]) {
      const raw = match[1].replace(/[.,;:!?)\]]+$/, "");
      let url = null;
      try { url = new URL(raw); } catch { /* stays text */ }
      if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) continue;
      if (match.index > last) out.push(source.slice(last, match.index));
      out.push(h("a", { href: url.href, rel: "noopener noreferrer", target: "_blank" }, raw));
      last = match.index + raw.length;
    } else {
      const start = match.index + match[2].length;
      const name = match[3].replace(/[.\-_]+$/, "");
      if (start > last) out.push(source.slice(last, start));
      const mine = name.toLowerCase() === String(me.username).toLowerCase();
      out.push(mine ? h("mark.mention-me", {}, "@" + name) : h("span.mention", {}, "@" + name));
      last = start + 1 + name.length;
    }
  }
  if (last < source.length) out.push(source.slice(last));
  return out;
}

/// A search snippet as text: the server marks the matched words between « and »; those become
/// <mark> elements, and nothing in the snippet is ever interpreted as HTML.
export function snippetNodes(snippet) {
  const source = String(snippet ?? "");
  const out = [];
  let last = 0;
  for (const match of source.matchAll(/«([^«»]*)»/g)) {
    if (match.index > last) out.push(source.slice(last, match.index));
    out.push(h("mark", {}, match[1]));
    last = match.index + match[0].length;
  }
  if (last < source.length) out.push(source.slice(last));
  return out;
}

/// "14:05" for today, the day otherwise (chat lists).
export function shortTime(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  const today = new Date();
  if (d.toDateString() === today.toDateString()) return new Intl.DateTimeFormat(lang(), { timeStyle: "short" }).format(d);
  return new Intl.DateTimeFormat(lang(), { day: "numeric", month: "short" }).format(d);
}

export function clockTime(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? "" : new Intl.DateTimeFormat(lang(), { timeStyle: "short" }).format(d);
}

/// The local calendar day of a timestamp, as a key and as words ("Today", "Monday, 30 November").
export function dayKey(iso) {
  const d = new Date(iso);
  return `${d.getFullYear()}-${d.getMonth()}-${d.getDate()}`;
}

export function dayLabel(iso) {
  const d = new Date(iso);
  const today = new Date();
  const yesterday = new Date(today.getFullYear(), today.getMonth(), today.getDate() - 1);
  if (d.toDateString() === today.toDateString()) return t("chat.today");
  if (d.toDateString() === yesterday.toDateString()) return t("chat.yesterday");
  const sameYear = d.getFullYear() === today.getFullYear();
  return new Intl.DateTimeFormat(lang(), { weekday: "long", day: "numeric", month: "long", year: sameYear ? undefined : "numeric" }).format(d);
}

/// A client id for a message, so a retry returns the first message instead of a copy.
export function newClientId() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

const pendingPrefix = "sgem.pending.";
const pendingKey = (box) => pendingPrefix + box;

/// Messages written but not yet acknowledged, per person and chat ("userId.chatId"), kept in this
/// browser so a reload in the middle sends them again (with the same client id) instead of
/// losing them. Logging out forgets them all.
export const pending = {
  forgetAll() {
    try {
      for (const key of Object.keys(localStorage)) if (key.startsWith(pendingPrefix)) localStorage.removeItem(key);
    } catch { /* nothing stored */ }
  },
  list(chatId) {
    try { return JSON.parse(localStorage.getItem(pendingKey(chatId)) || "[]").filter((p) => p && p.clientId && typeof p.body === "string"); } catch { return []; }
  },
  save(chatId, items) {
    try {
      if (items.length) localStorage.setItem(pendingKey(chatId), JSON.stringify(items));
      else localStorage.removeItem(pendingKey(chatId));
    } catch { /* without storage they last this page only */ }
  },
  add(chatId, item) { this.save(chatId, [...this.list(chatId).filter((p) => p.clientId !== item.clientId), item]); },
  remove(chatId, clientId) { this.save(chatId, this.list(chatId).filter((p) => p.clientId !== clientId)); },
};

/// Opens (creating once) the direct chat with `userId`, then shows it.
export async function openDirect(userId, navigate) {
  const chat = await post("/chats/direct", { userId: Number(userId) });
  navigate(`#/chat?id=${encodeURIComponent(chat.id)}`);
  return chat;
}

/// The chat section's own links, on top of every chat screen.
export function chatTabs(current) {
  const tabs = [["list", "#/chat", "chat.tab.chats"], ["public", "#/chat?view=public", "chat.tab.public"],
    ["contacts", "#/chat?view=contacts", "chat.tab.contacts"], ["new", "#/chat?view=new", "chat.tab.new"]];
  return h("nav.chat-tabs", { "aria-label": t("chat.tabs") },
    h("ul", {}, ...tabs.map(([id, href, key]) => h("li", {}, h("a", { href, id: `chat-tab-${id}`, "aria-current": id === current ? "page" : null }, t(key))))));
}
