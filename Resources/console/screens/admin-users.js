// Admin: every user, creating users (a generated password is shown once), editing their details,
// changing roles, deactivating and reactivating, resetting passwords, and inviting people
// (screens/admin-invites.js).
import { get, post, patch } from "../api.js";
import { t, counts as countsText, takenProblems } from "../i18n.js";
import { h, field, showFieldErrors, notice, avatar, copyButton, errorText, submitForm, languageSelect, confirmInline } from "../dom.js";
import { invitesSection } from "./admin-invites.js";

export function render(root, ctx) {
  const status = notice();
  const secretSlot = h("div", { id: "secret-slot" });
  const list = h("ul.admin-list", { id: "admin-users" });
  const counts = h("p.counts", { id: "admin-counts" });

  /// Shows a password once, with a copy button, until the admin dismisses it.
  function showSecret(heading, password) {
    const input = h("input.secret-value", { id: "secret-password", value: password, readonly: true, spellcheck: "false", "aria-label": heading });
    const done = h("button.secondary", { type: "button" }, t("admin.dismiss"));
    const panel = h("section.card.secret", { role: "alert", "aria-labelledby": "secret-title" },
      h("h2", { id: "secret-title" }, heading),
      h("p.hint", {}, t("admin.generatedHint")),
      h("div.secret-row", {}, input, copyButton(password, input)),
      h("div.actions", {}, done));
    done.addEventListener("click", () => secretSlot.replaceChildren());
    secretSlot.replaceChildren(panel);
    input.focus();
    input.select();
  }

  async function change(user, body, message) {
    try {
      const updated = await patch(`/admin/users/${user.id}`, body);
      status.set("ok", message(updated));
      if (updated.id === ctx.me.id) {
        ctx.setMe({ ...ctx.me, ...updated });
        // No longer an admin: this screen is not theirs any more.
        if (updated.role !== "admin") { ctx.navigate("#/directory"); return; }
      }
    } catch (error) {
      status.set("bad", errorText(error));
    }
    await load();
  }

  function row(user) {
    const name = user.displayName || user.username;
    const isMe = user.id === ctx.me.id;
    const role = h("select", { "aria-label": `${t("admin.role")}: ${name}`, dataset: { action: "role" } },
      h("option", { value: "employee" }, t("admin.role.employee")),
      h("option", { value: "admin" }, t("admin.role.admin")));
    role.value = user.role;
    role.addEventListener("change", () => change(user, { role: role.value },
      (u) => t("admin.roleChanged", { name, role: t("admin.role." + u.role) })));

    const activate = () => change(user, { active: !user.active }, (u) => t(u.active ? "admin.activated" : "admin.deactivated", { name }));
    let toggle;
    if (user.active) {
      toggle = confirmInline({ label: t("admin.deactivate"), question: t("admin.deactivateConfirm", { name }), yes: t("admin.deactivateYes"),
        action: "deactivate", onConfirm: async () => { await activate(); return false; } });
    } else {
      toggle = [h("button.secondary", { type: "button", dataset: { action: "activate" }, onclick: activate }, t("admin.activate"))];
    }

    const reset = confirmInline({ label: t("admin.resetPassword"), question: t("admin.resetConfirm", { name }), yes: t("admin.resetYes"),
      action: "reset", danger: false, onConfirm: async () => {
        try {
          const { password } = await post(`/admin/users/${user.id}/password-reset`);
          status.set();
          showSecret(t("admin.resetDone", { name }), password);
        } catch (error) {
          status.set("bad", errorText(error));
        }
        return false;
      } });

    const edit = h("button.secondary", { type: "button", dataset: { action: "edit" } }, t("admin.edit"));
    const item = h("li.admin-row" + (user.active ? "" : ".inactive"), { dataset: { userId: user.id, username: user.username } },
      avatar(user, "sm"),
      h("div.admin-who", {},
        h("strong", {}, name, isMe ? h("span.muted", {}, ` (${t("admin.you")})`) : null),
        h("span.muted", {}, `@${user.username} · ${user.email}`)),
      h("span.badge." + (user.active ? "on" : "off"), {}, user.active ? t("dir.active") : t("dir.inactive")),
      h("div.admin-actions", {}, edit, role, ...toggle, ...reset));
    edit.addEventListener("click", () => {
      if (item.querySelector("form")) return;
      item.append(editForm(user, () => item.querySelector("form")?.remove()));
    });
    return item;
  }

  /// An inline form for a user's details; only changed fields are sent.
  function editForm(user, close) {
    const name = user.displayName || user.username;
    const input = (key, attrs = {}) => h("input", { value: user[key] ?? "", dataset: { field: key }, ...attrs });
    const edits = {
      displayName: field(t("admin.displayName"), input("displayName", { maxlength: 100 })),
      email: field(t("admin.email"), input("email", { type: "email", required: true })),
      position: field(t("profile.position"), input("position", { maxlength: 100 })),
      phone: field(t("profile.phone"), input("phone", { type: "tel", maxlength: 40 })),
    };
    const formStatus = notice();
    const save = h("button", { type: "submit", dataset: { action: "save" } }, t("admin.save"));
    const cancel = h("button.secondary", { type: "button" }, t("admin.cancel"));
    const form = h("form.admin-edit", { novalidate: true, "aria-label": t("admin.editTitle", { name }) },
      h("div.grid", {}, ...Object.values(edits).map((f) => f.wrap)),
      formStatus, h("div.actions", {}, save, cancel));
    cancel.addEventListener("click", close);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const body = {};
      for (const [key, f] of Object.entries(edits)) {
        const value = f.input.value.trim();
        if (value !== (user[key] ?? "")) body[key] = value;
      }
      if (!Object.keys(body).length) { close(); return; }
      const sent = await submitForm({ button: save, fields: edits, status: formStatus, problems: takenProblems },
        () => patch(`/admin/users/${user.id}`, body));
      if (!sent.ok) return;
      const updated = sent.result;
      if (updated.id === ctx.me.id) ctx.setMe({ ...ctx.me, ...updated });
      // Redraw first, so the message comes with the closed form and the new details.
      await load();
      status.set("ok", t("admin.saved", { name: updated.displayName || updated.username }));
    });
    setTimeout(() => edits.displayName.input.focus(), 0);
    return form;
  }

  // The list comes a page at a time; "Show more" asks for the next one from where the last ended.
  const PAGE = 100;
  let shown = 0;
  let nextAfter = null;
  const more = h("button.secondary", { type: "button", id: "admin-more", hidden: true }, t("admin.more"));
  const shownNote = h("p.muted", { id: "admin-shown", hidden: true });

  async function fetchPage(after) {
    const params = new URLSearchParams({ status: "all", limit: String(PAGE) });
    if (after !== null) params.set("after", String(after));
    return get("/users?" + params);
  }

  function showPaging(total) {
    more.hidden = nextAfter === null;
    shownNote.hidden = nextAfter === null;
    shownNote.textContent = t("admin.shown", { shown, total });
  }

  let sequence = 0;
  /// Reloads the list from the start, as many pages as were shown before (at least one).
  async function load() {
    const mine = ++sequence;
    const wanted = Math.max(PAGE, shown);
    try {
      let result = await fetchPage(null);
      const items = [...result.items];
      while (result.nextAfter !== null && items.length < wanted) {
        result = await fetchPage(result.nextAfter);
        items.push(...result.items);
      }
      if (mine !== sequence || !ctx.alive()) return;
      counts.textContent = countsText(result.total, result.active);
      list.replaceChildren(...items.map(row));
      shown = items.length;
      nextAfter = result.nextAfter;
      showPaging(result.total);
    } catch (error) {
      if (mine === sequence && ctx.alive()) status.set("bad", errorText(error));
    }
  }

  more.addEventListener("click", async () => {
    const mine = ++sequence;
    more.disabled = true;
    try {
      const result = await fetchPage(nextAfter);
      if (mine !== sequence || !ctx.alive()) return;
      counts.textContent = countsText(result.total, result.active);
      list.append(...result.items.map(row));
      shown += result.items.length;
      nextAfter = result.nextAfter;
      showPaging(result.total);
    } catch (error) {
      if (mine === sequence && ctx.alive()) status.set("bad", errorText(error));
    } finally {
      more.disabled = false;
    }
  });

  // The create form.
  const fields = {
    username: field(t("admin.username"), h("input", { id: "new-username", required: true, maxlength: 32, autocapitalize: "none", spellcheck: "false", autocomplete: "off" }), t("field.username")),
    email: field(t("admin.email"), h("input", { id: "new-email", type: "email", required: true })),
    displayName: field(t("admin.displayName"), h("input", { id: "new-displayName", maxlength: 100, autocomplete: "off" })),
    role: field(t("admin.role"), h("select", { id: "new-role" },
      h("option", { value: "employee" }, t("admin.role.employee")), h("option", { value: "admin" }, t("admin.role.admin")))),
    // Left on the first choice, the account follows its browser's language at the first login.
    language: field(t("admin.language"), languageSelect({ id: "new-language" }, "", { auto: t("admin.languageAuto") }), t("lang.restEnglish")),
    password: field(t("admin.password"), h("input", { id: "new-password", type: "password", autocomplete: "new-password", minlength: 10 }), t("admin.passwordHint")),
  };
  const createStatus = notice();
  const submit = h("button", { type: "submit", id: "new-submit" }, t("admin.createSubmit"));
  // Someone else's details: the browser must not offer the admin's own (autocomplete off on the form).
  const form = h("form.card", { id: "create-user-form", novalidate: true, autocomplete: "off", "aria-labelledby": "create-title" },
    h("h2", { id: "create-title" }, t("admin.create")),
    h("div.grid", {}, ...Object.values(fields).map((f) => f.wrap)),
    createStatus, h("div.actions", {}, submit));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {
      username: fields.username.input.value.trim().toLowerCase(),
      email: fields.email.input.value.trim(),
      role: fields.role.input.value,
    };
    const displayName = fields.displayName.input.value.trim();
    if (displayName) body.displayName = displayName;
    if (fields.password.input.value) body.password = fields.password.input.value;
    if (fields.language.input.value) body.language = fields.language.input.value;
    const problems = {};
    if (!body.username) problems.username = "is required";
    if (!body.email) problems.email = "is required";
    showFieldErrors(fields, problems);
    if (Object.keys(problems).length) { createStatus.set(); return; }
    const sent = await submitForm({ button: submit, fields, status: createStatus, problems: takenProblems }, () => post("/admin/users", body));
    if (!sent.ok) return;
    const result = sent.result;
    const name = result.user.displayName || result.user.username;
    form.reset();
    createStatus.set("ok", t("admin.created", { name }));
    if (result.password) showSecret(t("admin.generated", { name: result.user.username }), result.password);
    await load();
  });

  root.append(
    h("div.page-head", {}, h("h1", {}, t("admin.title")), counts),
    secretSlot, form, invitesSection(ctx),
    h("section.card", { "aria-labelledby": "list-title" }, h("h2", { id: "list-title" }, t("admin.list")), status, list,
      shownNote, h("div.actions", {}, more)));
  load();
}
