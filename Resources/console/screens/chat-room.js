// One chat (#/chat?id=N): the history (older pages load as you scroll up, or with the button),
// day separators, who wrote what in groups, @mentions of me highlighted, edited and deleted
// messages shown as such; a composer that sends each message with a client id, retries it on
// a network failure (a retry returns the first message, never a copy) and keeps it in this
// browser until the server has it, so a reload in the middle loses nothing; edit and delete my
// own messages (and, for group admins, delete anyone's). Live from the realtime stream.
// Translation, when the server has a provider: any message translated on demand (and back to
// the original), and the reader's own switch to see the whole chat in their language, its
// translations arriving live as `message.updated` events.
import { get, post, put, patch, del } from "../api.js";
import { t, tn, dateTime } from "../i18n.js";
import { h, notice, failure, errorText, awayBadge, setTitle } from "../dom.js";
import { people, chatName, chatPicture, otherMember, isAdminOf, bodyNodes, dayKey, dayLabel, clockTime, newClientId, pending, maxBody,
  messagePeople, systemText } from "./chat-common.js";
import { translationLanguages, languageName, translationProblem, translatedMark, targetLang, alreadyIn } from "./translation-common.js";

const pageSize = 50;
const nearTopPx = 120;
const nearBottomPx = 80;
const retryDelaysMs = [1_000, 2_000, 4_000, 8_000, 15_000];
const maxRevealPages = 20;       // how far back a search result is looked for

/// The provider's languages as options, named in the reader's language, with `chosen` among them.
function languageChoices(languages, chosen) {
  const list = languages.map((l) => ({ code: l.code, name: languageName(l.code, l.name) }));
  if (chosen && !list.some((l) => l.code === chosen)) list.push({ code: chosen, name: languageName(chosen) });
  list.sort((a, b) => a.name.localeCompare(b.name));
  return list.map((l) => h("option", { value: l.code }, l.name));
}

export async function render(root, ctx) {
  const chatId = Number(ctx.params.get("id"));
  const back = h("p.back", {}, h("a", { href: "#/chat", id: "chat-back" }, t("chat.back")));
  if (!Number.isInteger(chatId) || chatId <= 0) {
    root.append(back, h("h1", {}, t("app.notFound")));
    return null;
  }
  const who = people();
  let chat;
  let first;
  let offer;
  let chosen;
  try {
    [chat, first, offer, chosen] = await Promise.all([get(`/chats/${chatId}`), get(`/chats/${chatId}/messages?limit=${pageSize}`),
      translationLanguages(), get(`/chats/${chatId}/translation`).catch(() => null)]);
    await who.load([...(chat.members ?? []).map((m) => m.userId), ...(first.items ?? []).flatMap(messagePeople)]);
  } catch (error) {
    if (!ctx.alive()) return null;
    root.append(back, h("h1", {}, t("chat.title")), failure(error, t("err.network")));
    return null;
  }
  if (!ctx.alive()) return null;
  const me = ctx.me;
  const box = `${me.id}.${chatId}`;   // this person's unsent messages in this chat

  const messages = new Map();       // id → message
  const outbox = [];                // {clientId, body, state: "sending"|"failed", error}
  let hasOlder = (first.items ?? []).length >= pageSize;
  let loadingOlder = false;
  let editing = null;               // {id, editor, status}
  let confirming = null;            // id of the message whose deletion is being confirmed
  let lastReadSent = 0;
  let gone = null;                  // why the chat can no longer be used
  let revealed = null;              // the message a search result pointed at
  // This chat in my language: the switch's state, and the language it translates into.
  const auto = { enabled: offer.available && Boolean(chosen?.enabled), target: chosen?.target || me.language || "en" };
  const asked = new Map();          // id → {body, busy, result, error}: translations asked for one by one
  const originals = new Set();      // ids whose translation the reader put aside for the original
  for (const m of first.items ?? []) messages.set(m.id, m);

  const title = h("h1.chat-title", { id: "chat-title" });
  const subtitle = h("p.chat-subtitle.muted", { id: "chat-subtitle" });
  const picture = h("div.chat-picture");
  const head = h("div.chat-head", {}, picture, h("div.chat-head-main", {}, title, subtitle));
  const older = h("button.secondary.older", { type: "button", id: "chat-older" }, t("chat.older"));
  const log = h("ol.messages", { id: "chat-messages", "aria-labelledby": "chat-title" });
  const scroller = h("div.chat-scroll", { id: "chat-scroll", tabindex: "0", "aria-label": t("chat.history") }, older, log);
  const announce = h("p.sr-only", { id: "chat-announce", "aria-live": "polite" });
  const status = notice();
  status.id = "chat-status";
  const input = h("textarea", { id: "chat-input", rows: 2, maxlength: maxBody, placeholder: t("chat.write"), "aria-label": t("chat.message"),
    "aria-describedby": "chat-keys", title: t("chat.keysHint") });
  const send = h("button", { type: "submit", id: "chat-send" }, t("chat.send"));
  const composer = h("form.composer", { id: "chat-composer" }, input, send, h("span.sr-only", { id: "chat-keys" }, t("chat.keysHint")));
  const autoSwitch = h("input", { type: "checkbox", id: "chat-translate-on", checked: auto.enabled });
  const autoLanguage = h("select", { id: "chat-translate-target", "aria-label": t("translation.chatLanguage") },
    ...languageChoices(offer.languages, auto.target));
  autoLanguage.value = auto.target;
  const autoBar = h("div.chat-translate", { id: "chat-translate", hidden: !offer.available },
    h("span.check-item", {}, autoSwitch, h("label", { for: autoSwitch.id }, t("translation.chatSwitch"))), autoLanguage);
  root.append(h("section.chat-room", { "aria-labelledby": "chat-title" }, back, head, autoBar, scroller, announce, status, composer));

  function drawHead() {
    const name = chatName(chat, me, who);
    title.textContent = name;
    setTitle(name);
    picture.replaceChildren(chatPicture(chat, me, who, "sm"));
    if (chat.kind === "group") {
      subtitle.replaceChildren(tn("chat.memberCount", (chat.members ?? []).length), " · ",
        h("a", { href: `#/chat?id=${chatId}&info=1`, id: "chat-info-link" }, t("chat.info")));
    } else {
      const other = otherMember(chat, me);
      // Someone on leave today says so beside their name ("Away until …").
      const away = other === null ? null : awayBadge((chat.members ?? []).find((m) => m.userId === other)?.away ?? who.user(other).away, "chat-away");
      subtitle.replaceChildren(...(other === null ? [] : [h("a", { href: `#/person?id=${encodeURIComponent(other)}`, id: "chat-person-link" },
        t("chat.profileOf", { name: who.name(other) }))]), ...(away ? [" ", away] : []));
    }
  }

  const sorted = () => [...messages.values()].sort((a, b) => a.id - b.id);
  const atBottom = () => scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < nearBottomPx;
  const toBottom = () => { scroller.scrollTop = scroller.scrollHeight; };

  /// The translation of `m` there is to show: the one asked for (while the body is the one it
  /// translated), else the chat's, while the switch is on and it is in the chosen language.
  function translationOf(m) {
    if (m.deleted) return null;
    const mine = asked.get(m.id);
    if (mine?.result && mine.body === m.body) return mine.result;
    const theirs = m.translation;
    if (!auto.enabled || !theirs || typeof theirs.text !== "string") return null;
    return !theirs.target || theirs.target === auto.target ? theirs : null;
  }

  const translationShown = (m) => (originals.has(m.id) ? null : translationOf(m));

  /// "Translate", "Show original" or "Show translation", and a translation problem in words.
  function translateAction(m) {
    if (!offer.available) return [];
    const known = translationOf(m);
    const state = asked.get(m.id);
    const action = known ? (originals.has(m.id) ? "show-translation" : "show-original") : "translate";
    const busy = action === "translate" && Boolean(state?.busy);
    const words = { "show-translation": t("translation.showTranslation"), "show-original": t("translation.showOriginal"),
      translate: busy ? t("translation.translating") : t("translation.translate") }[action];
    const button = h("button.link.translate-action", { type: "button", dataset: { action }, "aria-disabled": busy ? "true" : null,
      "aria-label": action === "translate" ? t("translation.translateLabel") : null }, words);
    button.addEventListener("click", () => {
      if (action === "translate") { if (!busy) translate(m); return; }
      if (action === "show-original") originals.add(m.id);
      else originals.delete(m.id);
      draw();
    });
    const problem = action === "translate" && state?.error ? h("span.translation-problem", {}, state.error) : null;
    const note = action === "translate" && state?.note ? h("span.translation-note", {}, state.note) : null;
    return [button, problem, note];
  }

  async function translate(m) {
    const body = m.body;
    asked.set(m.id, { body, busy: true });
    originals.delete(m.id);
    draw();
    try {
      const result = await post(`/messages/${m.id}/translation`, {});
      const same = alreadyIn(result);
      asked.set(m.id, same ? { body, note: same } : { body, result });
      if (same) announce.textContent = same;
    } catch (error) {
      const problem = translationProblem(error);
      asked.set(m.id, { body, error: problem });
      announce.textContent = problem;
    }
    if (ctx.alive()) draw();
  }

  async function chooseAuto(enabled, target) {
    const before = { ...auto };
    try {
      await put(`/chats/${chatId}/translation`, { enabled, target });
    } catch (error) {
      autoSwitch.checked = before.enabled;
      autoLanguage.value = before.target;
      status.set("bad", translationProblem(error));
      return;
    }
    if (!ctx.alive()) return;
    auto.enabled = enabled;
    auto.target = target;
    status.set("ok", enabled ? t("translation.chatOn", { language: languageName(target) }) : t("translation.chatOff"));
    draw();
    // The newest page again, with the translations that are ready; the rest follow live.
    if (enabled) resync();
  }
  autoSwitch.addEventListener("change", () => chooseAuto(autoSwitch.checked, autoLanguage.value));
  autoLanguage.addEventListener("change", () => {
    if (auto.enabled) chooseAuto(true, autoLanguage.value);
    else auto.target = autoLanguage.value;
  });

  function actions(m) {
    if (m.deleted || gone) return null;
    const mine = m.senderId === me.id;
    const canDelete = mine || (chat.kind === "group" && isAdminOf(chat, me));
    if (confirming === m.id) {
      const yes = h("button.link.danger", { type: "button", dataset: { action: "confirm-delete" } }, t("chat.deleteYes"));
      const no = h("button.link", { type: "button", dataset: { action: "cancel-delete" } }, t("admin.cancel"));
      yes.addEventListener("click", () => remove(m.id));
      no.addEventListener("click", () => { confirming = null; draw(); });
      return h("div.msg-actions", {}, h("span", {}, t("chat.deleteConfirm")), yes, no);
    }
    const buttons = translateAction(m);
    if (mine) {
      const edit = h("button.link", { type: "button", dataset: { action: "edit" }, "aria-label": t("chat.editLabel") }, t("admin.edit"));
      edit.addEventListener("click", () => startEdit(m));
      buttons.push(edit);
    }
    if (canDelete) {
      const remove = h("button.link.danger", { type: "button", dataset: { action: "delete" }, "aria-label": t("chat.deleteLabel") }, t("chat.delete"));
      remove.addEventListener("click", () => { confirming = m.id; draw(); });
      buttons.push(remove);
    }
    return buttons.some(Boolean) ? h("div.msg-actions", {}, ...buttons) : null;
  }

  /// A system line: who came and went, centred and quiet, in words; nothing to edit, delete or translate.
  function systemItem(m) {
    return h("li.msg-system" + (m.id === revealed ? ".found" : ""), { dataset: { messageId: m.id, kind: "system" }, id: `msg-${m.id}` },
      h("p", {}, h("span.system-text", {}, systemText(m, me, who)), " · ",
        h("time", { datetime: m.createdAt, title: dateTime(m.createdAt) }, clockTime(m.createdAt))));
  }

  function messageItem(m, showSender) {
    if (m.kind === "system") return systemItem(m);
    const mine = m.senderId === me.id;
    const mentioned = !m.deleted && Array.isArray(m.mentions) && m.mentions.includes(me.id);
    const cls = "li.msg" + (mine ? ".mine" : "") + (m.deleted ? ".is-deleted" : "") + (mentioned ? ".mentions-me" : "");
    let body;
    const translated = editing?.id === m.id ? null : translationShown(m);
    if (m.deleted) body = h("p.msg-body.deleted", {}, t("chat.deletedMessage"));
    else if (editing && editing.id === m.id) body = editing.form;
    else if (translated) body = [h("p.msg-body.translated", { lang: targetLang(translated) }, ...bodyNodes(translated.text, me)),
      translatedMark(translated, "p.msg-translated")];
    else body = h("p.msg-body", {}, ...bodyNodes(m.body, me));
    return h(cls + (m.id === revealed ? ".found" : ""), { dataset: { messageId: m.id }, id: `msg-${m.id}` },
      showSender ? h("p.msg-sender", {}, who.name(m.senderId)) : null,
      h("div.bubble", {}, body,
        h("p.msg-meta", {},
          h("time", { datetime: m.createdAt, title: dateTime(m.createdAt) }, clockTime(m.createdAt)),
          m.editedAt && !m.deleted ? h("span.edited", { title: dateTime(m.editedAt) }, " · " + t("chat.edited")) : null)),
      actions(m));
  }

  function outboxItem(item) {
    const retry = h("button.link", { type: "button", dataset: { action: "retry" } }, t("chat.retry"));
    const discard = h("button.link.danger", { type: "button", dataset: { action: "discard" } }, t("chat.discard"));
    retry.addEventListener("click", () => { item.state = "sending"; item.error = null; draw(); deliverLater(item); });
    discard.addEventListener("click", () => { pending.remove(box, item.clientId); outbox.splice(outbox.indexOf(item), 1); draw(); });
    return h("li.msg.mine.pending" + (item.state === "failed" ? ".failed" : ""), { dataset: { clientId: item.clientId } },
      h("div.bubble", {}, h("p.msg-body", {}, ...bodyNodes(item.body, me)),
        h("p.msg-meta", {}, item.state === "failed" ? (item.error || t("chat.notSent")) : t("chat.sending"))),
      item.state === "failed" ? h("div.msg-actions", {}, retry, discard) : null);
  }

  function draw({ keep = "auto" } = {}) {
    const wasAtBottom = atBottom();
    const fromBottom = scroller.scrollHeight - scroller.scrollTop;
    const nodes = [];
    let day = null;
    let sender = null;
    for (const m of sorted()) {
      const key = dayKey(m.createdAt);
      if (key !== day) {
        nodes.push(h("li.day", { role: "separator", "aria-label": dayLabel(m.createdAt) }, h("span", { "aria-hidden": "true" }, dayLabel(m.createdAt))));
        day = key;
        sender = null;
      }
      const showSender = chat.kind === "group" && m.senderId !== me.id && m.senderId !== sender;
      nodes.push(messageItem(m, showSender));
      // After a system line the next message names its sender again.
      sender = m.kind === "system" ? null : m.senderId;
    }
    for (const item of outbox) nodes.push(outboxItem(item));
    if (!nodes.length) nodes.push(h("li.empty", { id: "chat-room-empty" }, t("chat.startHere")));
    const focused = document.activeElement && log.contains(document.activeElement) ? document.activeElement : null;
    const focusedAction = focused?.dataset?.action;
    // A translate button keeps the focus as it turns into "Show original" and back.
    const focusedTranslation = focused?.classList.contains("translate-action") ? focused.closest("[data-message-id]")?.dataset.messageId : null;
    log.replaceChildren(...nodes);
    older.hidden = !hasOlder;
    if (editing) editing.editor.focus();
    else if (focusedAction === "delete" && confirming) log.querySelector(`[data-message-id="${confirming}"] [data-action="cancel-delete"]`)?.focus();
    else if (focusedTranslation) log.querySelector(`[data-message-id="${focusedTranslation}"] .translate-action`)?.focus();
    if (keep === "older") scroller.scrollTop = scroller.scrollHeight - fromBottom;
    else if (keep === "bottom" || wasAtBottom) toBottom();
  }

  function upsert(m) {
    if (!m || m.chatId !== chatId && m.chatId !== undefined) return;
    const old = messages.get(m.id);
    const merged = { ...(old ?? {}), ...m };
    if (merged.deleted) delete merged.body;
    // An edit without its translation: the old translation no longer says what the message does.
    if (old && !("translation" in m) && "body" in m && m.body !== old.body) delete merged.translation;
    messages.set(m.id, merged);
  }

  async function loadOlder() {
    if (!hasOlder || loadingOlder) return;
    const firstId = sorted()[0]?.id;
    if (firstId === undefined) return;
    loadingOlder = true;
    older.disabled = true;
    try {
      const page = await get(`/chats/${chatId}/messages?before=${firstId}&limit=${pageSize}`);
      const items = page.items ?? [];
      await who.load(items.flatMap(messagePeople));
      if (!ctx.alive()) return;
      items.forEach(upsert);
      hasOlder = items.length >= pageSize;
      draw({ keep: "older" });
    } catch (error) {
      status.set("bad", errorText(error));
    } finally {
      loadingOlder = false;
      older.disabled = false;
    }
  }

  async function markRead() {
    if (document.hidden || gone) return;
    const newest = sorted().at(-1);
    if (!newest || newest.id <= lastReadSent) return;
    lastReadSent = newest.id;
    try {
      await post(`/chats/${chatId}/read`, { messageId: newest.id });
      ctx.refreshChatBadge?.();
    } catch { lastReadSent = 0; }
  }

  // Sending: one message at a time, in the order written.
  let queue = Promise.resolve();
  function deliverLater(item) { queue = queue.then(() => deliver(item)); }

  async function deliver(item) {
    for (let attempt = 0; ; attempt++) {
      if (!ctx.alive() || !outbox.includes(item)) return;
      try {
        const message = await post(`/chats/${chatId}/messages`, { body: item.body, clientId: item.clientId });
        pending.remove(box, item.clientId);
        outbox.splice(outbox.indexOf(item), 1);
        upsert(message);
        draw({ keep: "bottom" });
        markRead();
        return;
      } catch (error) {
        const transient = error.status === 0 || error.status >= 500 || error.status === 429;
        if (!transient || attempt >= retryDelaysMs.length) {
          item.state = "failed";
          item.error = transient ? t("chat.notSent") : errorText(error);
          // Refused for good (not a member any more, too long): nothing to send again later.
          if (!transient) pending.remove(box, item.clientId);
          draw();
          return;
        }
        const wait = error.retryAfter ? error.retryAfter * 1000 : retryDelaysMs[attempt];
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  function write(body) {
    const item = { clientId: newClientId(), body, state: "sending", error: null };
    pending.add(box, { clientId: item.clientId, body });
    outbox.push(item);
    draw({ keep: "bottom" });
    deliverLater(item);
  }

  function startEdit(m) {
    const editor = h("textarea", { rows: 2, maxlength: maxBody, value: m.body ?? "", "aria-label": t("chat.editLabel"), id: "chat-edit-input" });
    const save = h("button", { type: "submit", id: "chat-edit-save" }, t("admin.save"));
    const cancel = h("button.secondary", { type: "button", id: "chat-edit-cancel" }, t("admin.cancel"));
    const form = h("form.edit-form", {}, editor, h("div.actions", {}, save, cancel));
    const stop = () => { editing = null; draw(); log.querySelector(`[data-message-id="${m.id}"] [data-action="edit"]`)?.focus(); };
    cancel.addEventListener("click", stop);
    editor.addEventListener("keydown", (e) => { if (e.key === "Escape") { e.preventDefault(); stop(); } });
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const body = editor.value;
      if (!body.trim()) return;
      if (body === m.body) { stop(); return; }
      save.disabled = true;
      try {
        upsert(await patch(`/messages/${m.id}`, { body }));
        stop();
      } catch (error) {
        save.disabled = false;
        status.set("bad", errorText(error));
      }
    });
    editing = { id: m.id, form, editor };
    confirming = null;
    draw();
  }

  async function remove(id) {
    try {
      await del(`/messages/${id}`);
      upsert({ id, chatId, deleted: true });
      confirming = null;
      draw();
      status.set("ok", t("chat.deletedDone"));
    } catch (error) {
      status.set("bad", errorText(error));
    }
  }

  async function reveal(id) {
    for (let pages = 0; !messages.has(id) && hasOlder && pages < maxRevealPages && ctx.alive(); pages++) await loadOlder();
    const found = log.querySelector(`#msg-${id}`);
    if (!found) return;
    revealed = id;
    found.classList.add("found");
    found.scrollIntoView({ block: "center" });
  }

  function close(reason) {
    gone = reason;
    status.set("bad", t(reason));
    input.disabled = true;
    send.disabled = true;
    autoBar.hidden = true;
    editing = null;
    draw();
  }

  composer.addEventListener("submit", (event) => {
    event.preventDefault();
    const body = input.value;
    if (!body.trim() || gone) return;
    input.value = "";
    status.set();
    write(body);
    input.focus();
  });
  input.addEventListener("keydown", (event) => {
    // Enter sends; Shift+Enter is a new line; nothing while an input method is composing.
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      composer.requestSubmit();
    }
  });
  older.addEventListener("click", loadOlder);
  scroller.addEventListener("scroll", () => { if (scroller.scrollTop < nearTopPx) loadOlder(); });

  // Live.
  async function refreshChat() {
    try {
      chat = await get(`/chats/${chatId}`);
      await who.load((chat.members ?? []).map((m) => m.userId));
      if (ctx.alive()) { drawHead(); draw(); }
    } catch (error) {
      if (error.status === 404 && ctx.alive()) close("chat.noLongerMember");
    }
  }
  async function resync() {
    try {
      const page = await get(`/chats/${chatId}/messages?limit=${pageSize}`);
      const items = page.items ?? [];
      await who.load(items.flatMap(messagePeople));
      if (!ctx.alive()) return;
      const newest = sorted().at(-1)?.id ?? 0;
      // Further behind than one page: start again from the newest page.
      if (items.length >= pageSize && items[0].id > newest + 1) { messages.clear(); hasOlder = true; }
      items.forEach(upsert);
      draw();
      markRead();
    } catch (error) {
      if (error.status === 404 && ctx.alive()) close("chat.noLongerMember");
    }
    refreshChat();
  }
  const forThisChat = (data) => Number(data?.chatId ?? data?.message?.chatId ?? data?.chat?.id) === chatId;
  const off = [
    ctx.realtime.on("message.created", async ({ data }) => {
      if (!forThisChat(data) || gone) return;
      const m = data.message;
      await who.load(messagePeople(m));
      if (!ctx.alive()) return;
      const isNew = !messages.has(m.id);
      upsert(m);
      // (My own message may arrive before the POST's answer; that answer has the same id, so
      // it replaces the pending copy instead of adding one.)
      if (isNew && m.kind === "system") announce.textContent = systemText(m, me, who);
      else if (isNew && m.senderId !== me.id) {
        announce.textContent = t("chat.announce", { name: who.name(m.senderId), body: String(m.body ?? "").slice(0, 200) });
      }
      draw();
      markRead();
    }),
    // An edit, or (for a reader with this chat in their language) a message with its translation.
    ctx.realtime.on("message.updated", ({ data }) => { if (forThisChat(data)) { upsert(data.message ?? data); draw(); } }),
    ctx.realtime.on("message.deleted", ({ data }) => {
      if (!forThisChat(data)) return;
      upsert({ ...data.message, deleted: true });
      if (editing?.id === data.message.id) editing = null;
      draw();
    }),
    ctx.realtime.on("chat.updated", ({ data }) => { if (forThisChat(data)) refreshChat(); }),
    ctx.realtime.on("member.added", ({ data }) => { if (forThisChat(data)) refreshChat(); }),
    ctx.realtime.on("member.removed", ({ data }) => {
      if (!forThisChat(data)) return;
      if (Number(data.userId) === me.id) close("chat.noLongerMember");
      else refreshChat();
    }),
    ctx.realtime.on("chat.deleted", ({ data }) => { if (forThisChat(data)) close("chat.wasDeleted"); }),
    ctx.realtime.on("resync", () => { if (!gone) resync(); }),
  ];
  const onVisible = () => { if (!document.hidden) markRead(); };
  document.addEventListener("visibilitychange", onVisible);

  drawHead();
  draw({ keep: "bottom" });
  // Messages this browser wrote but the server had not acknowledged when the page went away.
  for (const saved of pending.list(box)) {
    const item = { clientId: saved.clientId, body: saved.body, state: "sending", error: null };
    outbox.push(item);
    deliverLater(item);
  }
  if (outbox.length) draw({ keep: "bottom" });
  markRead();
  input.focus();
  // Opened from a search result (&at=M): bring that message into view.
  const at = Number(ctx.params.get("at"));
  if (Number.isInteger(at) && at > 0) reveal(at);
  return () => { off.forEach((f) => f()); document.removeEventListener("visibilitychange", onVisible); };
}
