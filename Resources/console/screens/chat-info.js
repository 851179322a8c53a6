// A chat's information (#/chat?id=N&info=1): for a group its name, description, tags and
// whether it is public, and its members with their admin badges. Group admins edit the group,
// add and remove members, grant and revoke admin, and delete the group; every member may leave.
// A direct chat shows the other person. Live: redrawn when the chat or its members change.
import { get, post, put, patch, del } from "../api.js";
import { t, tn } from "../i18n.js";
import { h, field, notice, avatar, failure, errorText, submitForm, awayBadge, setTitle, confirmInline } from "../dom.js";
import { people, chatName, isAdminOf, limits } from "./chat-common.js";
import { levelSection } from "./chat-notify.js";

export function tagList(text) {
  return [...new Set(String(text ?? "").split(",").map((s) => s.trim()).filter(Boolean))];
}

/// The group fields (name, description, tags, public), for creating and for editing.
export function groupFields(initial = {}, idPrefix = "group") {
  return {
    name: field(t("chat.group.name"), h("input", { id: `${idPrefix}-name`, maxlength: limits.name, required: true, value: initial.name ?? "" })),
    description: field(t("chat.group.description"), h("textarea", { id: `${idPrefix}-description`, rows: 3, maxlength: limits.description, value: initial.description ?? "" })),
    tags: field(t("chat.group.tags"), h("input", { id: `${idPrefix}-tags`, maxlength: 400, value: (initial.tags ?? []).join(", ") }), t("chat.group.tagsHint")),
    public: field(t("chat.group.public"), h("input", { id: `${idPrefix}-public`, type: "checkbox", checked: Boolean(initial.public) }), t("chat.group.publicHint")),
  };
}

export function groupBody(fields) {
  return {
    name: fields.name.input.value.trim(),
    description: fields.description.input.value.trim(),
    tags: tagList(fields.tags.input.value),
    public: fields.public.input.checked,
  };
}

export async function render(root, ctx) {
  const chatId = Number(ctx.params.get("id"));
  const back = h("p.back", {}, h("a", { href: `#/chat?id=${chatId}`, id: "info-back" }, t("chat.backToChat")));
  const who = people();
  const me = ctx.me;
  const status = notice();
  status.id = "info-status";
  const slot = h("div", { id: "info-slot" });
  root.append(back, slot, status);
  let chat = null;
  let editing = false;
  let confirmDelete = false;

  async function load() {
    try {
      chat = await get(`/chats/${chatId}`);
      await Promise.all([who.all(), who.load((chat.members ?? []).map((m) => m.userId))]);
    } catch (error) {
      if (!ctx.alive()) return;
      slot.replaceChildren(h("h1", {}, t("chat.info")), failure(error, t("err.network")));
      chat = null;
      return;
    }
    if (ctx.alive()) draw();
  }

  // Every change: the button waits, the outcome is said, the screen shows the chat as it is now.
  async function act(button, call, done) {
    if (button) button.disabled = true;
    try {
      await call();
      if (done) status.set("ok", done);
      await load();
    } catch (error) {
      status.set("bad", error?.code === "last_admin" ? t("err.last_admin_chat") : errorText(error));
      if (button) button.disabled = false;
    }
  }

  /// A confirmed change: true once done (the screen then shows the chat as it is now).
  async function attempt(call, done) {
    try {
      await call();
    } catch (error) {
      status.set("bad", error?.code === "last_admin" ? t("err.last_admin_chat") : errorText(error));
      return false;
    }
    if (done) status.set("ok", done);
    await load();
    return true;
  }

  function memberRow(member, amAdmin) {
    const user = who.user(member.userId);
    const name = who.name(member.userId);
    const self = member.userId === me.id;
    const buttons = [];
    if (amAdmin && !self) {
      const toggle = h("button.secondary.small", { type: "button", dataset: { action: member.admin ? "revoke" : "grant" } },
        member.admin ? t("chat.revokeAdmin") : t("chat.grantAdmin"));
      toggle.addEventListener("click", () => act(toggle,
        () => (member.admin ? del : put)(`/chats/${chatId}/admins/${member.userId}`),
        t(member.admin ? "chat.revoked" : "chat.granted", { name })));
      // Removing someone asks first, in place.
      const remove = confirmInline({ label: t("chat.removeMember"), question: t("chat.removeConfirm", { name }), yes: t("chat.removeYes"),
        action: "remove", ariaLabel: t("chat.removeMemberNamed", { name }), small: true,
        onConfirm: () => attempt(() => del(`/chats/${chatId}/members/${member.userId}`), t("chat.removed", { name })) });
      buttons.push(toggle, ...remove);
    }
    return h("li.member", { dataset: { userId: member.userId } },
      avatar(user, "sm"),
      h("div.member-main", {},
        h("a.person-link", { href: `#/person?id=${encodeURIComponent(member.userId)}` }, name),
        self ? h("span.muted", {}, " " + t("chat.youMark")) : null,
        member.admin ? h("span.badge.role", {}, t("chat.admin")) : null,
        awayBadge(member.away ?? user.away)),
      buttons.length ? h("div.member-actions", {}, ...buttons) : null);
  }

  function addMemberForm() {
    const inGroup = new Set((chat.members ?? []).map((m) => m.userId));
    const select = h("select", { id: "info-add-user", "aria-label": t("chat.choosePerson") }, h("option", { value: "" }, t("chat.choosePerson")));
    who.all().then((everyone) => {
      for (const u of everyone) if (!inGroup.has(u.id) && u.active !== false) select.append(h("option", { value: u.id }, u.displayName || u.username));
    });
    const add = h("button", { type: "submit", id: "info-add" }, t("chat.addMember"));
    const form = h("form.toolbar", { id: "info-add-form" }, select, add);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const userId = Number(select.value);
      if (!userId) return;
      act(add, () => post(`/chats/${chatId}/members`, { userId }), t("chat.added", { name: who.name(userId) }));
    });
    return form;
  }

  function editForm() {
    const fields = groupFields(chat, "info-edit");
    const save = h("button", { type: "submit", id: "info-save" }, t("admin.save"));
    const cancel = h("button.secondary", { type: "button", id: "info-cancel" }, t("admin.cancel"));
    const formStatus = notice();
    const form = h("form.card", { id: "info-form", novalidate: true, "aria-labelledby": "info-form-title" },
      h("h2", { id: "info-form-title" }, t("chat.editGroup")),
      fields.name.wrap, fields.description.wrap, fields.tags.wrap, fields.public.wrap, formStatus, h("div.actions", {}, save, cancel));
    cancel.addEventListener("click", () => { editing = false; draw(); });
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const body = groupBody(fields);
      if (!body.name) { formStatus.set("bad", t("field.required")); fields.name.input.focus(); return; }
      const sent = await submitForm({ button: save, fields, status: formStatus }, () => patch(`/chats/${chatId}`, body));
      if (sent.ok) { editing = false; status.set("ok", t("chat.groupSaved")); await load(); }
    });
    setTimeout(() => fields.name.input.focus(), 0);
    return form;
  }

  function draw() {
    const amAdmin = chat.kind === "group" && isAdminOf(chat, me);
    const name = chatName(chat, me, who);
    setTitle(name);
    const members = [...(chat.members ?? [])].sort((a, b) => Number(b.admin) - Number(a.admin) || who.name(a.userId).localeCompare(who.name(b.userId)));
    const parts = [h("div.page-head", {}, h("h1", { id: "info-title" }, name),
      chat.kind === "group" ? h("p.muted", {}, chat.public ? t("chat.publicGroup") : t("chat.privateGroup")) : null)];
    if (chat.kind === "group") {
      const facts = [];
      if (chat.description) facts.push(h("p.text", { id: "info-description" }, chat.description));
      if (chat.tags?.length) facts.push(h("p.tags", { id: "info-tags" }, ...chat.tags.map((tag) => h("span.badge.tag", {}, "#" + tag))));
      parts.push(h("section.card", { "aria-labelledby": "info-about" }, h("h2", { id: "info-about" }, t("chat.about")),
        ...(facts.length ? facts : [h("p.muted", {}, t("chat.noDescription"))]),
        amAdmin && !editing ? h("div.actions", {}, editButton()) : null));
      if (editing) parts.push(editForm());
    }
    parts.push(h("section.card", { "aria-labelledby": "info-members-title" },
      h("h2", { id: "info-members-title" }, tn("chat.memberCount", members.length)),
      h("ul.members", { id: "info-members" }, ...members.map((m) => memberRow(m, amAdmin))),
      amAdmin ? addMemberForm() : null));
    parts.push(levelSection(chat));
    if (chat.kind === "group") {
      // Leaving asks first, in place.
      const leave = confirmInline({ label: t("chat.leave"), question: t("chat.leaveConfirm"), yes: t("chat.leaveYes"), action: "leave",
        onConfirm: async () => {
          try { await post(`/chats/${chatId}/leave`); } catch (error) { status.set("bad", errorText(error)); return false; }
          ctx.navigate("#/chat");
          return true;
        } });
      leave[0].id = "info-leave";
      const buttons = [...leave];
      if (amAdmin) {
        if (confirmDelete) {
          const yes = h("button.danger", { type: "button", id: "info-delete-yes" }, t("chat.deleteGroupYes"));
          const no = h("button.secondary", { type: "button", id: "info-delete-no" }, t("admin.cancel"));
          yes.addEventListener("click", async () => {
            yes.disabled = true;
            try { await del(`/chats/${chatId}`); ctx.navigate("#/chat"); } catch (error) { status.set("bad", errorText(error)); yes.disabled = false; }
          });
          no.addEventListener("click", () => { confirmDelete = false; draw(); });
          buttons.push(h("span", {}, t("chat.deleteGroupConfirm")), yes, no);
          setTimeout(() => no.focus(), 0);
        } else {
          const remove = h("button.secondary.danger", { type: "button", id: "info-delete" }, t("chat.deleteGroup"));
          remove.addEventListener("click", () => { confirmDelete = true; draw(); });
          buttons.push(remove);
        }
      }
      parts.push(h("div.actions", { id: "info-actions" }, ...buttons));
    }
    slot.replaceChildren(...parts);
  }

  function editButton() {
    const button = h("button.secondary", { type: "button", id: "info-edit" }, t("chat.editGroup"));
    button.addEventListener("click", () => { editing = true; draw(); });
    return button;
  }

  const forThisChat = (data) => Number(data?.chatId ?? data?.chat?.id) === chatId;
  const reload = ({ data }) => { if (forThisChat(data)) load(); };
  const off = [
    ctx.realtime.on("chat.updated", reload),
    ctx.realtime.on("member.added", reload),
    ctx.realtime.on("member.removed", ({ data }) => {
      if (!forThisChat(data)) return;
      if (Number(data.userId) === me.id) ctx.navigate("#/chat");
      else load();
    }),
    ctx.realtime.on("chat.deleted", ({ data }) => { if (forThisChat(data)) ctx.navigate("#/chat"); }),
    ctx.realtime.on("resync", () => load()),
  ];
  await load();
  return () => off.forEach((f) => f());
}
