// The notice board in two tabs: company news (#/notices) and personal updates such as holiday
// decisions ("For you", #/notices?tab=mine), each a list (pinned first, then newest; "Older"
// pages back) with its own "Mark all as read"; one notice opened (#/notices?id=N, which marks it
// read). Admins post, edit and delete company notices and see how many of the people concerned
// have read each one. The list follows notice.created and notices.read from the realtime stream.
import { get, post, patch, del } from "../api.js";
import { t, tn } from "../i18n.js";
import { h, field, showFieldErrors, notice, richText, when, failure, errorText, submitForm, confirmInline } from "../dom.js";
import { translationLanguages, translateButton, translatedMark, targetLang } from "./translation-common.js";

const pageSize = 20;
const excerptChars = 240;
const limits = { title: 200, body: 20000 };

/// Who wrote what: display names by user id, each asked for once per screen.
function authorNames() {
  const cache = new Map();
  return (id) => {
    if (id === null || id === undefined) return Promise.resolve(null);
    if (!cache.has(id)) cache.set(id, get(`/users/${encodeURIComponent(id)}`).then((u) => u.displayName || u.username, () => null));
    return cache.get(id);
  };
}

/// "Read by 1 of 5", for admins, on company notices.
export function readBy(item) {
  if (item.kind !== "company" || typeof item.readCount !== "number" || typeof item.audienceCount !== "number") return null;
  const text = item.audienceCount === 0 ? t("notices.noAudience") : t("notices.readBy", { read: item.readCount, total: item.audienceCount });
  return h("p.read-by", { dataset: { noticeId: item.id } }, text);
}

/// The badges of a notice: pinned, unread, personal (a holiday decision).
export function badges(item) {
  return [
    item.pinned ? h("span.badge.pinned", {}, t("notices.pinned")) : null,
    item.read ? null : h("span.badge.unread", {}, t("notices.unread")),
    item.kind === "holiday" ? h("span.badge.role", {}, t("notices.kind.holiday")) : null,
  ].filter(Boolean);
}

function excerpt(body) {
  const text = String(body ?? "");
  return text.length > excerptChars ? text.slice(0, excerptChars).trimEnd() + "…" : text;
}

/// One notice in a list: its title links to the notice, then date, badges and the first lines.
export function summary(item, { heading = "h2", showReadBy = false } = {}) {
  return h("li.notice-item" + (item.read ? "" : ".is-unread"), { dataset: { noticeId: item.id } },
    h("div.notice-head", {},
      h(heading + ".notice-title", {}, h("a", { href: `#/notices?id=${encodeURIComponent(item.id)}` }, item.title)),
      ...badges(item)),
    h("p.meta", {}, when(item.createdAt)),
    richText(excerpt(item.body), "p.text.excerpt"),
    showReadBy ? readBy(item) : null);
}

/// "Translate" for a notice on screen: its title (in `title`) and its text (the element `text`,
/// drawn again by `makeText`) in the reader's language, marked as a translation after `markAfter`,
/// with the original one click away.
function translateNotice(item, { id, title, text, makeText, markAfter }) {
  let shown = text;
  let mark = null;
  return translateButton({
    id,
    label: t("translation.noticeLabel"),
    request: () => post(`/notices/${encodeURIComponent(item.id)}/translation`, {}),
    show: (result) => {
      const language = result ? targetLang(result) : null;
      title.textContent = result ? result.title : item.title;
      if (language) title.setAttribute("lang", language);
      else title.removeAttribute("lang");
      const next = makeText(result ? result.text : item.body);
      if (language) next.setAttribute("lang", language);
      shown.replaceWith(next);
      shown = next;
      mark?.remove();
      mark = result ? translatedMark(result) : null;
      if (mark) markAfter.after(mark);
    },
  });
}

/// The title/body/pinned form, for posting and for editing.
function noticeForm({ id, initial = {}, submitLabel, onSubmit, onCancel }) {
  const fields = {
    title: field(t("notices.form.title"), h("input", { id: `${id}-title`, maxlength: limits.title, required: true, value: initial.title ?? "" })),
    body: field(t("notices.form.body"), h("textarea", { id: `${id}-body`, rows: 6, maxlength: limits.body, required: true, value: initial.body ?? "" }),
      t("notices.form.bodyHint")),
    pinned: field(t("notices.form.pinned"), h("input", { id: `${id}-pinned`, type: "checkbox", checked: Boolean(initial.pinned) }),
      t("notices.form.pinnedHint")),
  };
  const status = notice();
  const submit = h("button", { type: "submit", id: `${id}-submit` }, submitLabel);
  const cancel = onCancel ? h("button.secondary", { type: "button", id: `${id}-cancel` }, t("admin.cancel")) : null;
  const form = h("form", { id, novalidate: true },
    fields.title.wrap, fields.body.wrap, fields.pinned.wrap, status, h("div.actions", {}, submit, cancel));
  if (cancel) cancel.addEventListener("click", onCancel);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {
      title: fields.title.input.value.trim(),
      body: fields.body.input.value.replace(/\s+$/, ""),
      pinned: fields.pinned.input.checked,
    };
    const problems = {};
    if (!body.title) problems.title = "is required";
    if (!body.body.trim()) problems.body = "is required";
    if (showFieldErrors(fields, problems)) { status.set("bad", t("err.validation_failed")); return; }
    const sent = await submitForm({ button: submit, fields, status }, () => onSubmit(body));
    if (sent.ok) status.set();
  });
  return { form, fields, status };
}

/// The two tabs: which kind each lists, its route and its name.
const tabs = [
  { id: "news", kind: "company", route: "#/notices", key: "notices.tab.news" },
  { id: "mine", kind: "holiday", route: "#/notices?tab=mine", key: "notices.tab.mine" },
];

/// The tab bar, each tab with its unread count in words for a screen reader.
function tabBar(current, unreadByKind) {
  return h("nav.tabs", { "aria-label": t("notices.tabs") },
    h("ul", {}, ...tabs.map((tab) => {
      const n = Number(unreadByKind?.[tab.kind]) || 0;
      return h("li", {}, h("a", { href: tab.route, id: `notices-tab-${tab.id}`, "aria-current": tab.id === current.id ? "page" : null },
        t(tab.key), n ? h("span.nav-badge", { dataset: { count: n } }, h("span", { "aria-hidden": "true" }, String(n)),
          h("span.sr-only", {}, ", " + tn("notices.unreadCount", n))) : null));
    })));
}

async function renderList(root, ctx) {
  const tab = tabs.find((x) => x.id === ctx.params.get("tab")) ?? tabs[0];
  const tabSlot = h("div", { id: "notices-tabs" }, tabBar(tab, null));
  const names = authorNames();
  const status = notice();
  status.id = "notices-status";
  const flash = ctx.takeFlash();
  if (flash) status.set("ok", t(flash));
  const unreadLine = h("p.counts", { id: "notices-unread", "aria-live": "polite" });
  const readAll = h("button.secondary", { type: "button", id: "notices-read-all", disabled: true }, t("notices.readAll"));
  const list = h("ul.notice-list", { id: "notices-list", "aria-busy": "true" });
  const older = h("button.secondary", { type: "button", id: "notices-older", hidden: true }, t("notices.older"));
  let nextBefore = null;
  let unread = 0;
  const offer = translationLanguages();
  let translating = false;

  function showUnread(count) {
    unread = count;
    unreadLine.textContent = count ? tn("notices.unreadCount", count) : t("notices.allRead");
    readAll.disabled = count === 0;
  }

  function item(n) {
    const li = summary(n, { showReadBy: ctx.isAdmin });
    if (n.authorId !== null && n.authorId !== undefined && n.kind === "company") {
      const by = h("span.author");
      li.querySelector(".meta").append(by);
      names(n.authorId).then((name) => { if (name) by.textContent = " · " + t("notices.by", { name }); });
    }
    if (translating) {
      const head = li.querySelector(".notice-head");
      li.append(translateNotice(n, { id: `notice-translate-${n.id}`, title: head.querySelector("a"), text: li.querySelector(".excerpt"),
        makeText: (body) => richText(excerpt(body), "p.text.excerpt"), markAfter: li.querySelector(".meta") }));
    }
    return li;
  }

  async function load(before) {
    const params = new URLSearchParams({ limit: String(pageSize), kind: tab.kind });
    if (before !== null) params.set("before", String(before));
    const result = await get("/notices?" + params);
    translating = (await offer).available;
    if (!ctx.alive()) return;
    const items = Array.isArray(result.items) ? result.items : [];
    if (before === null) list.replaceChildren();
    list.append(...items.map(item));
    if (before === null && items.length === 0) list.append(h("li.empty", {}, t(tab.kind === "holiday" ? "notices.emptyMine" : "notices.empty")));
    list.setAttribute("aria-busy", "false");
    // The server's cursor (null at the end); without one, a full page means there may be more.
    nextBefore = "nextBefore" in result ? result.nextBefore : (items.length === pageSize ? items[items.length - 1].id : null);
    older.hidden = nextBefore === null;
    showUnread(Number(result.unreadByKind?.[tab.kind] ?? result.unreadCount) || 0);
    tabSlot.replaceChildren(tabBar(tab, result.unreadByKind));
  }

  async function reload() {
    try {
      await load(null);
    } catch (error) {
      if (ctx.alive()) status.set("bad", errorText(error));
    }
  }

  readAll.addEventListener("click", async () => {
    readAll.disabled = true;
    try {
      await post("/notices/read-all?kind=" + tab.kind);
      status.set("ok", t("notices.allMarked"));
      await reload();
      ctx.refreshUnread();
    } catch (error) {
      status.set("bad", errorText(error));
      readAll.disabled = unread === 0;
    }
  });
  older.addEventListener("click", async () => {
    older.disabled = true;
    try { await load(nextBefore); } catch (error) { status.set("bad", errorText(error)); } finally { older.disabled = false; }
  });

  root.append(h("div.page-head", {}, h("h1", {}, t("notices.title")), unreadLine), tabSlot);
  const actions = h("div.actions.list-actions", {}, readAll);
  if (ctx.isAdmin && tab.kind === "company") {
    // The form waits behind a button, so the notices stay at the top of the page.
    const compose = h("button", { type: "button", id: "notice-compose", "aria-expanded": "false", "aria-controls": "notice-new-card" },
      t("notices.new"));
    const card = h("section.card", { id: "notice-new-card", "aria-labelledby": "notice-new-heading", hidden: true });
    const toggle = (open) => {
      card.hidden = !open;
      compose.hidden = open;
      compose.setAttribute("aria-expanded", String(open));
      if (open) composer.fields.title.input.focus();
      else compose.focus();
    };
    const composer = noticeForm({
      id: "notice-new",
      submitLabel: t("notices.post"),
      onCancel: () => toggle(false),
      onSubmit: async (body) => {
        await post("/admin/notices", body);
        composer.form.reset();
        toggle(false);
        status.set("ok", t("notices.posted"));
        await reload();
      },
    });
    card.append(h("h2", { id: "notice-new-heading" }, t("notices.new")), composer.form);
    compose.addEventListener("click", () => toggle(true));
    actions.prepend(compose);
    root.append(actions, card);
  } else {
    root.append(actions);
  }
  root.append(h("section", { "aria-label": t("notices.title") }, status, list, h("div.actions", {}, older)));
  await reload();
  // A notice posted while the list is open shows up at once (the first page is read again).
  // Marking read in another tab of the browser shows here too.
  const offs = [
    ctx.realtime?.on("notice.created", () => { if (ctx.alive()) reload(); }),
    ctx.realtime?.on("notices.read", () => { if (ctx.alive()) reload(); }),
  ];
  return () => offs.forEach((off) => off?.());
}

async function renderOne(root, ctx, id) {
  const back = h("p.back", {}, h("a", { href: "#/notices", id: "notice-back" }, t("notices.back")));
  let item;
  try {
    item = await get(`/notices/${encodeURIComponent(id)}`);
  } catch (error) {
    if (ctx.alive()) root.append(back, failure(error, t("err.network")));
    return;
  }
  if (!ctx.alive()) return;
  // Back to the tab the notice belongs to.
  if (item.kind === "holiday") back.firstChild.setAttribute("href", "#/notices?tab=mine");
  if (!item.read) {
    // Opening a notice is reading it.
    try {
      await post(`/notices/${encodeURIComponent(id)}/read`);
      item.read = true;
      ctx.refreshUnread();
    } catch { /* it stays unread; the notice still shows */ }
  }
  const status = notice();
  const article = h("article.card.notice-full", { id: "notice", dataset: { noticeId: item.id } });
  const names = authorNames();
  const translating = (await translationLanguages()).available;
  if (!ctx.alive()) return;

  function draw() {
    const meta = h("p.meta", {}, when(item.createdAt),
      item.editedAt ? h("span", {}, ` · ${t("notices.edited")} `, when(item.editedAt)) : null);
    const by = h("span.author");
    meta.append(by);
    if (item.kind === "company") names(item.authorId).then((name) => { if (name) by.textContent = " · " + t("notices.by", { name }); });
    const heading = h("h1", {}, item.title);
    const head = h("div.notice-head", {}, heading, ...badges(item));
    const body = richText(item.body, "div.text.notice-body");
    const children = [head, meta, body];
    if (translating) {
      children.push(translateNotice(item, { id: "notice-translate", title: heading, text: body,
        makeText: (text) => richText(text, "div.text.notice-body"), markAfter: meta }));
    }
    if (ctx.isAdmin && item.kind === "company") {
      const edit = h("button.secondary", { type: "button", id: "notice-edit" }, t("admin.edit"));
      const remove = confirmInline({ label: t("notices.delete"), question: t("notices.deleteConfirm", { title: item.title }),
        yes: t("notices.deleteYes"), action: "delete", onConfirm: async () => {
          try {
            await del(`/admin/notices/${encodeURIComponent(item.id)}`);
            ctx.refreshUnread();
            ctx.navigate("#/notices");
            return true;
          } catch (error) {
            status.set("bad", errorText(error));
            return false;
          }
        } });
      remove[0].id = "notice-delete";
      remove[2].id = "notice-delete-yes";
      edit.addEventListener("click", () => editing());
      children.push(readBy(item), status, h("div.actions", {}, edit, ...remove));
    }
    article.replaceChildren(...children);
  }

  function editing() {
    const editor = noticeForm({
      id: "notice-edit-form",
      initial: item,
      submitLabel: t("admin.save"),
      onCancel: () => { draw(); },
      onSubmit: async (body) => {
        const changed = {};
        for (const key of Object.keys(body)) if (body[key] !== item[key]) changed[key] = body[key];
        if (Object.keys(changed).length) item = { ...item, ...(await patch(`/admin/notices/${encodeURIComponent(item.id)}`, changed)) };
        draw();
        status.set("ok", t("notices.saved"));
      },
    });
    article.replaceChildren(h("h1", {}, t("notices.editTitle")), editor.form);
    editor.fields.title.input.focus();
  }

  draw();
  root.append(back, article);
}

export async function render(root, ctx) {
  const id = ctx.params.get("id");
  if (id && /^\d+$/.test(id)) return renderOne(root, ctx, id);
  return renderList(root, ctx);
}
