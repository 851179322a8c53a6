// Notifications on this device with the console closed (Web Push): subscribing the browser with
// the server's key (GET /push/key), telling the server (POST /me/push-subscriptions), and the
// reverse. The service worker (sw.js) shows what arrives. Profile's switch and Chat's hint use it.
import { get, post, del } from "./api.js";
import { t } from "./i18n.js";
import { h } from "./dom.js";

/// Whether this browser can receive pushes here (a secure page with a service worker).
export function pushSupported() {
  return window.isSecureContext && "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;
}

function keyBytes(base64url) {
  const text = atob(base64url.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((base64url.length + 3) % 4));
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

async function registration() {
  const found = await navigator.serviceWorker.getRegistration("/");
  return found ?? navigator.serviceWorker.register("/sw.js", { scope: "/" });
}

/// "unsupported", "denied", "on" or "off" for this device.
export async function pushState() {
  if (!pushSupported()) return "unsupported";
  if (Notification.permission === "denied") return "denied";
  try {
    const reg = await registration();
    const sub = await reg.pushManager.getSubscription();
    return sub && Notification.permission === "granted" ? "on" : "off";
  } catch {
    return "unsupported";
  }
}

/// Asks the browser, subscribes it and tells the server; returns the new state.
export async function enablePush() {
  if (!pushSupported()) return "unsupported";
  const permission = await Notification.requestPermission();
  if (permission !== "granted") return permission === "denied" ? "denied" : "off";
  const reg = await registration();
  await navigator.serviceWorker.ready;
  const { publicKey } = await get("/push/key");
  let sub = await reg.pushManager.getSubscription();
  // A subscription made with another key (the server's key changed) is replaced.
  const current = sub?.options?.applicationServerKey;
  if (sub && current && btoa(String.fromCharCode(...new Uint8Array(current))) !== btoa(String.fromCharCode(...keyBytes(publicKey)))) {
    await sub.unsubscribe();
    sub = null;
  }
  sub ??= await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(publicKey) });
  const json = sub.toJSON();
  await post("/me/push-subscriptions", { endpoint: json.endpoint, keys: { p256dh: json.keys.p256dh, auth: json.keys.auth } });
  return "on";
}

/// Unsubscribes this device here and on the server.
export async function disablePush() {
  if (!pushSupported()) return "unsupported";
  const reg = await registration();
  const sub = await reg.pushManager.getSubscription();
  if (sub) {
    try {
      const { items } = await get("/me/push-subscriptions");
      const mine = (items ?? []).find((s) => s.endpoint === sub.endpoint);
      if (mine) await del(`/me/push-subscriptions/${mine.id}`);
    } finally {
      await sub.unsubscribe();
    }
  }
  return "off";
}

/// Profile's "Notify me on this device" switch, with what it means in plain words.
export function deviceSwitch({ enabled }) {
  const box = h("input", { type: "checkbox", id: "push-device", disabled: true, "aria-describedby": "push-device-state" });
  const state = h("p.hint", { id: "push-device-state", "aria-live": "polite" });
  const wrap = h("section.card", { id: "push-card", "aria-labelledby": "push-title" },
    h("h2", { id: "push-title" }, t("push.title")),
    h("div.check-item", {}, box, h("label", { for: box.id }, t("push.device"))), state);
  function show(s) {
    box.checked = s === "on";
    box.disabled = s === "unsupported" || s === "denied" || s === "busy";
    state.textContent = s === "busy" ? t("push.busy") : t("push.state." + s) + (s === "on" && !enabled ? " " + t("push.allOff") : "");
  }
  box.addEventListener("change", async () => {
    const want = box.checked;
    show("busy");
    try { show(want ? await enablePush() : await disablePush()); } catch { show("failed"); pushState().then((s) => { if (s !== "off") show(s); }); }
  });
  pushState().then(show);
  return wrap;
}

/// Chat's hint: offers pushes on this device while it has none and the browser was not refused.
export function pushHint(ctx) {
  if (!pushSupported() || !ctx.me.notificationsEnabled || localStorage.getItem("sgem.pushHintDismissed")) return null;
  const yes = h("button.secondary", { type: "button", id: "chat-push-on" }, t("push.device"));
  const no = h("button.link", { type: "button", id: "chat-push-dismiss" }, t("push.notNow"));
  const wrap = h("p.notify-offer", { id: "chat-push-hint", hidden: true }, h("span", {}, t("push.hint")), " ", yes, " ", no);
  pushState().then((s) => { wrap.hidden = s !== "off"; });
  yes.addEventListener("click", async () => {
    yes.disabled = true;
    let s = "failed";
    try { s = await enablePush(); } catch { /* said below */ }
    if (s === "on") wrap.remove();
    else { wrap.replaceChildren(h("span", {}, t("push.state." + s))); }
  });
  no.addEventListener("click", () => { localStorage.setItem("sgem.pushHintDismissed", "1"); wrap.remove(); });
  return wrap;
}
