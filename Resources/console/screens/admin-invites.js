// The Users screen's "Invite people": make an invitation link (role, days, uses, note), shown once
// with a copy button; the links that still work, with their uses and expiry, each revocable.
import { get, post, del } from "../api.js";
import { t, calendarDate } from "../i18n.js";
import { h, field, notice, copyButton, errorText, submitForm, confirmInline } from "../dom.js";

/// The section, loading its list; `ctx` is the screen's.
export function invitesSection(ctx) {
  const status = notice();
  const linkSlot = h("div", { id: "invite-link-slot" });
  const list = h("ul.admin-list", { id: "invite-list" });
  const empty = h("p.muted", { id: "invite-none", hidden: true }, t("invites.none"));
  const day = (iso) => calendarDate(String(iso).slice(0, 10));

  const fields = {
    role: field(t("invites.role"), h("select", { id: "invite-role" },
      h("option", { value: "employee" }, t("admin.role.employee")), h("option", { value: "admin" }, t("admin.role.admin")))),
    expiresInDays: field(t("invites.days"), h("input", { id: "invite-days", type: "number", min: 1, max: 30, step: 1, value: "7",
      inputmode: "numeric", required: true })),
    maxUses: field(t("invites.uses"), h("input", { id: "invite-uses", type: "number", min: 1, max: 500, step: 1, value: "1",
      inputmode: "numeric", required: true })),
    note: field(t("invites.note"), h("input", { id: "invite-note", maxlength: 200, autocomplete: "off" }), t("invites.noteHint")),
  };
  const formStatus = notice();
  const submit = h("button", { type: "submit", id: "invite-submit" }, t("invites.submit"));
  const form = h("form", { id: "invite-form", novalidate: true, autocomplete: "off", "aria-label": t("invites.title") },
    h("div.grid", {}, ...Object.values(fields).map((f) => f.wrap)),
    formStatus, h("div.actions", {}, submit));

  /// The new link, once, with a copy button, until the admin dismisses it.
  function showLink(invite) {
    const input = h("input.secret-value", { id: "invite-url", value: invite.url, readonly: true, spellcheck: "false",
      "aria-label": t("invites.created") });
    const done = h("button.secondary", { type: "button" }, t("admin.dismiss"));
    const panel = h("section.card.secret", { role: "status", "aria-labelledby": "invite-link-title" },
      h("h3", { id: "invite-link-title" }, t("invites.created")),
      h("p.hint", {}, t("invites.createdHint", { date: day(invite.expiresAt), uses: invite.maxUses })),
      h("div.secret-row", {}, input, copyButton(invite.url, input)),
      h("div.actions", {}, done));
    done.addEventListener("click", () => { linkSlot.replaceChildren(); submit.focus(); });
    linkSlot.replaceChildren(panel);
    input.focus();
    input.select();
  }

  function row(invite) {
    const what = invite.note || `#${invite.id}`;
    const revoke = confirmInline({ label: t("invites.revoke"), question: t("invites.revokeConfirm"), yes: t("invites.revokeYes"),
      action: "revoke-invite", ariaLabel: t("invites.revokeLabel", { what }), small: true, onConfirm: async () => {
        try {
          await del(`/admin/invites/${invite.id}`);
          status.set("ok", t("invites.revoked"));
          await load();
          return true;
        } catch (error) {
          status.set("bad", errorText(error));
          return false;
        }
      } });
    return h("li.admin-row.invite-row", { dataset: { inviteId: invite.id } },
      h("span.badge", {}, t("admin.role." + invite.role)),
      h("div.admin-who", {},
        h("strong", {}, invite.note || t("invites.title")),
        h("span.muted", {}, `${t("invites.usage", { uses: invite.uses, max: invite.maxUses })} · ${t("invites.until", { date: day(invite.expiresAt) })}`)),
      h("div.admin-actions", {}, ...revoke));
  }

  let sequence = 0;
  async function load() {
    const mine = ++sequence;
    try {
      const { items } = await get("/admin/invites");
      if (mine !== sequence || !ctx.alive()) return;
      list.replaceChildren(...items.map(row));
      empty.hidden = items.length > 0;
    } catch (error) {
      if (mine === sequence && ctx.alive()) status.set("bad", errorText(error));
    }
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const number = (input) => (input.value.trim() === "" ? null : Number(input.value));
    const body = { role: fields.role.input.value, expiresInDays: number(fields.expiresInDays.input), maxUses: number(fields.maxUses.input) };
    const note = fields.note.input.value.trim();
    if (note) body.note = note;
    const sent = await submitForm({ button: submit, fields, status: formStatus }, () => post("/admin/invites", body));
    if (!sent.ok) return;
    formStatus.set();
    fields.note.input.value = "";
    showLink(sent.result);
    await load();
  });

  load();
  return h("section.card", { id: "invites", "aria-labelledby": "invites-title" },
    h("h2", { id: "invites-title" }, t("invites.title")),
    h("p.muted", {}, t("invites.intro")),
    form, linkSlot,
    h("h3", { id: "invites-live-title" }, t("invites.live")),
    status, empty, list);
}
