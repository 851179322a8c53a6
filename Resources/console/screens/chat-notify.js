// The reader's push level for one chat (PUT /chats/{id}/notifications), shown in the chat's info.
import { put } from "../api.js";
import { t } from "../i18n.js";
import { h, notice, errorText } from "../dom.js";

export function levelSection(chat) {
  const select = h("select", { id: "info-notify-level", "aria-describedby": "info-notify-hint" },
    ...["all", "mentions", "none"].map((level) => h("option", { value: level, selected: chat.notifications === level }, t("push.level." + level))));
  const status = notice();
  select.addEventListener("change", async () => {
    select.disabled = true;
    try {
      await put(`/chats/${chat.id}/notifications`, { level: select.value });
      chat.notifications = select.value;
      status.set("ok", t("push.levelSaved"));
    } catch (error) {
      select.value = chat.notifications;
      status.set("bad", errorText(error));
    }
    select.disabled = false;
  });
  return h("section.card", { id: "info-notify", "aria-labelledby": "info-notify-title" },
    h("h2", { id: "info-notify-title" }, h("label", { for: select.id }, t("push.levelTitle"))),
    select, h("p.hint", { id: "info-notify-hint" }, t("push.levelHint")), status);
}
