// The console's shell: who is logged in, the navigation (the pages the server's modules
// registered, plus the sections still to come), the unread-notices badge, the language (the
// account's own once logged in) and hash routing. Each screen is an ES module under screens/
// exporting render(root, ctx) → optional cleanup. /setup shows the first-run form instead.
// Logged in, one realtime stream (realtime.js) feeds the screens (ctx.realtime), the notice and
// chat badges, and the browser notifications the account asked for.
import { get, post, patch, csrfToken, setCsrfToken, setUnauthenticatedHandler, setPasswordChangeHandler } from "./api.js";
import { t, lang, setLang, onLangChange, supported, tn, browserLanguage } from "./i18n.js";
import { h, avatar, setTitle, setCompanyName } from "./dom.js";
import * as realtime from "./realtime.js";

// Every section of the product. A page a module registers with the same id replaces the
// placeholder, so sections light up as their modules land without touching this list.
// A section with a `family` is a further screen of that module: it has no placeholder of its own,
// and lights up (with its own script) once the module registers the family's page.
const sections = [
  { id: "home", route: "#/home", key: "nav.home", order: 5 },
  { id: "directory", route: "#/directory", key: "nav.directory", order: 10 },
  { id: "holidays", route: "#/holidays", key: "nav.holidays", order: 20 },
  { id: "calendar", route: "#/calendar", key: "nav.calendar", order: 22, family: "holidays", script: "/assets/screens/holidays-calendar.js" },
  { id: "admin-holidays", route: "#/admin/holidays", key: "nav.adminHolidays", order: 104, adminOnly: true, family: "holidays",
    script: "/assets/screens/admin-holidays.js" },
  { id: "admin-leave", route: "#/admin/leave", key: "nav.adminLeave", order: 106, adminOnly: true, family: "holidays",
    script: "/assets/screens/admin-leave.js" },
  { id: "notices", route: "#/notices", key: "nav.notices", order: 30 },
  { id: "chat", route: "#/chat", key: "nav.chat", order: 40 },
  { id: "company", route: "#/company", key: "nav.company", order: 50 },
  { id: "profile", route: "#/profile", key: "nav.profile", order: 90 },
  { id: "admin-users", route: "#/admin/users", key: "nav.adminUsers", order: 100, adminOnly: true },
  { id: "admin-settings", route: "#/admin/settings", key: "nav.adminSettings", order: 110, adminOnly: true },
  { id: "admin-audit", route: "#/admin/audit", key: "nav.adminAudit", order: 120, adminOnly: true },
  { id: "admin-translation", route: "#/admin/translation", key: "nav.adminTranslation", order: 130, adminOnly: true },
];
const soonScript = "/assets/screens/soon.js";
const loginScript = "/assets/screens/login.js";
const setupScript = "/assets/screens/setup.js";
const joinScript = "/assets/screens/join.js";
const joinRoute = "#/join";
const firstPasswordScript = "/assets/screens/first-password.js";
const firstPasswordRoute = "#/choose-password";
const home = "#/home";
const unreadRefreshMs = 60_000;

const state = {
  me: null,
  pages: [],          // merged sections, sorted
  flash: null,        // a one-time message for the login screen
  returnTo: null,     // where to go after logging in
  cleanup: null,
  generation: 0,      // bumps on every render so late async work can tell it is stale
  unread: 0,          // unread notices, shown on "Notices"
  unreadTimer: null,
  setup: false,       // on /setup: the first-run form instead of the routes
  setupToken: null,   // the one-time token read from /setup#token=…, kept in memory only
  inviteToken: null,  // an invitation's token read from /join#invite=…, kept in memory only
  chatUnread: 0,      // chats with unread messages, shown on "Chat"
  pendingHolidays: 0, // holiday requests waiting for a decision, shown to admins on "Holiday requests"
  chatTimer: null,
  temporaryPassword: null, // typed at login when the account must choose its own: not asked twice
  typed: false,       // the person has typed into the current screen since it was drawn
};
const chatRefreshDelayMs = 400;
const notificationChars = 140;

const $ = (id) => document.getElementById(id);

function title(page) {
  if (page.title) return lang() === "es" && page.titleES ? page.titleES : page.title;
  return t(page.key);
}

function mergePages(registered) {
  const byId = new Map(sections.filter((s) => !s.family).map((s) => [s.id, { ...s, script: soonScript, soon: true }]));
  const usable = registered.filter((p) => typeof p.route === "string" && p.route.startsWith("#/") && typeof p.script === "string" && p.script.startsWith("/assets/"));
  for (const p of usable) {
    const base = byId.get(p.id) ?? sections.find((s) => s.id === p.id) ?? {};
    byId.set(p.id, { ...base, ...p, soon: false });
  }
  for (const s of sections.filter((s) => s.family && !byId.has(s.id))) {
    if (usable.some((p) => p.id === s.family)) byId.set(s.id, { ...s, soon: false });
  }
  return [...byId.values()].sort((a, b) => a.order - b.order || a.id.localeCompare(b.id));
}

async function loadPages() {
  try {
    const { items } = await get("/console/pages");
    return mergePages(Array.isArray(items) ? items : []);
  } catch {
    return mergePages([]);
  }
}

function isAdmin() { return state.me?.role === "admin"; }

/// Logged in with a password an admin generated or reset: only "Choose your own password" works.
function mustChoosePassword() { return Boolean(state.me?.mustChangePassword); }

function translateStatic() {
  for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  $("sidebar").setAttribute("aria-label", t("app.sections"));
  $("lang").value = lang();
  setCompanyName();
}

function drawHeader() {
  const me = state.me;
  const meLink = $("me");
  document.body.classList.toggle("signed-in", Boolean(me));
  $("logout").hidden = !me;
  $("menu-toggle").hidden = !me || mustChoosePassword();
  meLink.hidden = !me;
  if (me) {
    // Until the person chooses a password the picture would be refused: initials instead.
    meLink.replaceChildren(avatar(mustChoosePassword() ? { ...me, avatarUrl: null } : me, "xs"), h("span", { id: "me-name" }, me.displayName || me.username));
    meLink.title = t("app.signedInAs", { name: me.displayName || me.username });
  } else {
    meLink.replaceChildren();
  }
}

function drawNav(current) {
  const nav = $("nav");
  const adminNav = $("nav-admin");
  const sidebar = $("sidebar");
  sidebar.hidden = !state.me || mustChoosePassword();
  const link = (page) => h("li", {}, h("a", {
    href: page.route,
    "aria-current": page.route === current ? "page" : null,
    dataset: { page: page.id },
  }, title(page), page.id === "notices" && !page.soon ? unreadBadge() : null,
    page.id === "chat" && !page.soon ? chatBadge() : null,
    page.id === "admin-holidays" && !page.soon ? countBadge("nav-pending-holidays", state.pendingHolidays, "nav.pendingHolidays") : null));
  nav.replaceChildren(...state.pages.filter((p) => !p.adminOnly && p.inNavigation !== false).map(link));
  const adminPages = isAdmin() ? state.pages.filter((p) => p.adminOnly) : [];
  adminNav.replaceChildren(...adminPages.map(link));
  adminNav.hidden = adminPages.length === 0;
  $("nav-admin-title").hidden = adminPages.length === 0;
}

/// The count on "Notices".
function unreadBadge() {
  return countBadge("nav-unread", state.unread, "nav.unread");
}

/// Asks the server how much company news is unread and redraws the badge when it changed
/// (personal updates, such as holiday decisions, show on Home and under "For you" instead).
function refreshUnread() {
  return refreshCount("notices", "unread", "/notices?limit=1&kind=company",
    (r) => Number(r?.unreadByKind?.company ?? r?.unreadCount) || 0);
}

/// The count on "Chat": chats with something unread.
function chatBadge() {
  return countBadge("nav-chat-unread", state.chatUnread, "nav.unreadChats");
}

/// A count badge in the navigation: the digits for the eye, the words for a screen reader.
function countBadge(id, count, key) {
  if (!count) return null;
  const words = tn(key, count);
  return h("span.nav-badge", { id, title: words },
    h("span", { "aria-hidden": "true" }, count > 99 ? "99+" : String(count)),
    h("span.sr-only", {}, ", " + words));
}

/// Asks the server for a badge's count (when its page exists) and redraws it when it changed.
async function refreshCount(pageId, stateKey, path, countOf) {
  if (!state.me || mustChoosePassword() || !state.pages.some((p) => p.id === pageId && !p.soon)) return;
  try {
    const count = countOf(await get(path, { quiet401: true }));
    if (count !== state[stateKey]) {
      state[stateKey] = count;
      drawNav(currentRoute());
    }
  } catch { /* the badge keeps its last value */ }
}

function refreshChatUnread() {
  return refreshCount("chat", "chatUnread", "/chats", (r) => (Array.isArray(r?.items) ? r.items : []).filter((c) => c.unreadCount > 0).length);
}

/// The count on "Holiday requests" (admins): requests waiting for a decision.
function refreshPendingHolidays() {
  if (!isAdmin()) return Promise.resolve();
  return refreshCount("admin-holidays", "pendingHolidays", "/admin/holidays?status=pending",
    (r) => (Array.isArray(r?.items) ? r.items : []).filter((x) => x.status === "pending").length);
}

function chatUnreadSoon() {
  clearTimeout(state.chatTimer);
  state.chatTimer = setTimeout(refreshChatUnread, chatRefreshDelayMs);
}

/// A browser notification, when the account wants them, this browser allows them, and the
/// reader is not already looking at it.
async function notify(title, body, tag, route) {
  if (!("Notification" in window) || Notification.permission !== "granted" || !state.me) return;
  if (state.me.notificationsEnabled === undefined) {
    try { state.me = { ...state.me, ...(await get("/me", { quiet401: true })) }; } catch { return; }
  }
  if (!state.me.notificationsEnabled) return;
  if (!document.hidden && location.hash === route) return;
  try {
    const n = new Notification(title, { body: String(body ?? "").slice(0, notificationChars), tag, lang: lang() });
    n.addEventListener("click", () => { window.focus(); location.hash = route; n.close(); });
  } catch { /* some browsers only notify from a service worker */ }
}

async function senderName(id) {
  try { const u = await get(`/users/${encodeURIComponent(id)}`, { quiet401: true }); return u.displayName || u.username; } catch { return t("chat.someone"); }
}

function listenLive() {
  realtime.on("notice.created", ({ data }) => {
    refreshUnread();
    const n = data?.notice;
    // A notice deleted since is replayed without its title: nothing to show.
    if (n && !n.deleted) notify(t("notify.notice"), n.title, `notice-${n.id}`, `#/notices?id=${n.id}`);
  });
  for (const type of ["message.created", "message.deleted", "chat.created", "chat.deleted", "member.added", "member.removed", "resync"]) {
    realtime.on(type, chatUnreadSoon);
  }
  realtime.on("message.created", async ({ data }) => {
    const m = data?.message;
    // Who came and went (a system line) is no news to notify about.
    if (!m || !state.me || m.senderId === state.me.id || m.deleted || m.kind === "system") return;
    const name = await senderName(m.senderId);
    const mentioned = Array.isArray(m.mentions) && m.mentions.includes(state.me.id);
    notify(t(mentioned ? "notify.mention" : "notify.message", { name }), m.body, `message-${m.id}`, `#/chat?id=${m.chatId}`);
  });
  realtime.on("resync", () => { refreshUnread(); refreshPendingHolidays(); });
  realtime.on("notices.read", () => refreshUnread());
  realtime.on("holiday.updated", () => refreshPendingHolidays());
  realtime.on("reconnected", reloadScreen);
  realtime.onStatus((online) => {
    const el = $("rt-status");
    el.textContent = online || !state.me ? "" : t("app.offline");
  });
}

/// The stream runs while someone is logged in.
function startLive() {
  if (state.me && !mustChoosePassword()) realtime.start();
  else realtime.stop();
}

function startUnreadTimer() {
  clearInterval(state.unreadTimer);
  state.unreadTimer = state.me && !mustChoosePassword() ? setInterval(refreshUnread, unreadRefreshMs) : null;
}

/// Logged in, the account's language drives the console (not remembered as this device's choice).
/// An account without a language of its own keeps the browser's until `adoptLanguage` gives it one.
function followAccountLanguage(user) {
  if (!user || user.languageChosen === false) return;
  if (supported(user.language) && user.language !== lang()) setLang(user.language, { remember: false });
}

/// An account without a language of its own takes the browser's when the console speaks it, else
/// the company's default (what the server gave it), and keeps it: the first login never flips
/// a Spanish browser to the company's English. Waits until the password is the person's own.
async function adoptLanguage() {
  const me = state.me;
  if (!me || mustChoosePassword() || me.languageChosen !== false) { followAccountLanguage(me); return; }
  try {
    state.me = { ...me, ...(await patch("/me", { language: browserLanguage() ?? me.language })) };
  } catch { /* chosen at the next login */ }
  followAccountLanguage(state.me);
}

function setMenu(open) {
  $("menu-toggle").setAttribute("aria-expanded", String(open));
  $("sidebar").classList.toggle("open", open);
}

/// Replaces the logged-in user (after a profile change) and redraws what shows it.
function setMe(user) {
  state.me = user;
  drawHeader();
  drawNav(currentRoute());
  followAccountLanguage(user);
}

function currentRoute() {
  const hash = location.hash || "";
  return hash.startsWith("#/") ? hash.split("?")[0] : "";
}

function routeParams() {
  const hash = location.hash || "";
  const at = hash.indexOf("?");
  return new URLSearchParams(at >= 0 ? hash.slice(at + 1) : "");
}

/// The stream is back after a drop (the server restarted, the network returned): what the screen
/// failed to load, or missed, loads now. A screen the person has typed into keeps its forms and
/// reloads only what it shows (its "resync" listeners); any other is drawn again from the server.
function reloadScreen() {
  if (!state.me || state.setup || mustChoosePassword()) return;
  if (state.typed) { realtime.announce("resync"); return; }
  render({ reload: true });
}

/// Draws the screen of the current route; `reload` draws the same screen again without moving focus.
async function render({ reload = false } = {}) {
  if (state.setup) { await renderSetup(); return; }
  const route = currentRoute();
  if (!state.me && route !== "#/login" && route !== joinRoute) {
    if (route && route !== "#/login") state.returnTo = route;
    location.replace("#/login");
    return;
  }
  if (mustChoosePassword() && route !== firstPasswordRoute) {
    location.replace(firstPasswordRoute);
    return;
  }
  if (state.me && (route === "" || route === "#/login" || route === joinRoute || (route === firstPasswordRoute && !mustChoosePassword()))) {
    location.replace(state.returnTo || home);
    state.returnTo = null;
    return;
  }
  setMenu(false);
  drawHeader();
  drawNav(route);
  if (state.cleanup) { try { state.cleanup(); } catch { /* a screen's cleanup must not break navigation */ } }
  state.cleanup = null;
  const generation = ++state.generation;
  state.typed = false;
  const main = $("main");
  const page = route === "#/login" ? { id: "login", script: loginScript, key: "login.title" }
    : route === joinRoute ? { id: "join", script: joinScript, key: "join.title" }
    : route === firstPasswordRoute ? { id: "choose-password", script: firstPasswordScript, key: "firstPassword.title" }
    : state.pages.find((p) => p.route === route);
  if (!page || (page.adminOnly && !isAdmin())) {
    setTitle(t("app.notFound"));
    main.replaceChildren(h("h1", {}, t("app.notFound")), h("p", {}, h("a", { href: home }, t("soon.back"))));
    return;
  }
  setTitle(title(page));
  let module;
  try {
    module = await importScreen(page.script);
  } catch {
    if (generation === state.generation) main.replaceChildren(h("p.notice.bad", { role: "alert" }, t("app.loadFailed")));
    return;
  }
  if (generation !== state.generation) return;
  main.replaceChildren();
  main.dataset.screen = page.id;
  const ctx = {
    me: state.me,
    page: { ...page, title: title(page) },
    params: routeParams(),
    isAdmin: isAdmin(),
    alive: () => generation === state.generation,
    setMe,
    login,
    refreshUnread,
    realtime,
    refreshChatBadge: chatUnreadSoon,
    hasPage: (id) => state.pages.some((p) => p.id === id && !p.soon),
    navigate: (hash) => { location.hash = hash; },
    takeFlash: () => { const f = state.flash; state.flash = null; return f; },
    inviteToken: state.inviteToken,
    joined,
    takeTemporaryPassword: () => { const p = state.temporaryPassword; state.temporaryPassword = null; return p; },
    passwordChosen,
  };
  try {
    state.cleanup = (await module.render(main, ctx)) ?? null;
  } catch (error) {
    console.warn("screen failed", page.id, error);
    if (generation === state.generation) main.replaceChildren(h("p.notice.bad", { role: "alert" }, t("app.loadFailed")));
  }
  // Move focus to the new content for screen readers, unless a screen already chose a field (or,
  // drawn again, the person is elsewhere on the page).
  const lost = document.activeElement === document.body || !main.contains(document.activeElement);
  if (generation === state.generation && lost && (!reload || document.activeElement === document.body)) {
    main.focus({ preventScroll: true });
  }
  refreshUnread();
  chatUnreadSoon();
  refreshPendingHolidays();
}

const failedImports = new Map(); // script → failures so far

/// A screen's module. A browser remembers a failed import (the server was away) for the page's
/// life, so a retry asks under an address of its own.
async function importScreen(script) {
  const failures = failedImports.get(script) ?? 0;
  try {
    return await import(failures ? `${script}?retry=${failures}` : script);
  } catch (error) {
    failedImports.set(script, failures + 1);
    throw error;
  }
}

/// The first-run page: its own screen, whatever the session; on success the new admin is
/// logged in and lands on Home.
async function renderSetup() {
  const generation = ++state.generation;
  const main = $("main");
  drawHeader();
  $("sidebar").hidden = true;
  setTitle(t("setup.title"));
  const module = await import(setupScript);
  if (generation !== state.generation) return;
  main.replaceChildren();
  main.dataset.screen = "setup";
  await module.render(main, {
    alive: () => generation === state.generation,
    token: state.setupToken,
    started: startSession,
  });
}

/// Logs in; on success remembers the CSRF token and opens where the user was going (first
/// "Choose your own password" when an admin generated or reset it).
async function login(loginName, password) {
  const session = await post("/auth/login", { login: loginName, password });
  setCsrfToken(session.csrfToken);
  state.me = session.user;
  if (mustChoosePassword()) {
    state.temporaryPassword = password;
    location.hash = firstPasswordRoute;
    return;
  }
  await adoptLanguage();
  startUnreadTimer();
  startLive();
  const target = state.returnTo || home;
  state.returnTo = null;
  location.hash = target;
}

/// The person chose their own password: the console opens up, in their language, on Home.
async function passwordChosen() {
  state.me = { ...state.me, mustChangePassword: false };
  state.temporaryPassword = null;
  await adoptLanguage();
  startUnreadTimer();
  startLive();
  state.returnTo = null;
  location.hash = home;
}

/// Signed up (by invitation or open registration): the new account is logged in and lands on Home.
async function joined(session) {
  setCsrfToken(session.csrfToken);
  state.me = session.user;
  state.inviteToken = null;
  await adoptLanguage();
  startUnreadTimer();
  startLive();
  state.returnTo = null;
  location.hash = home;
}

/// After the first-run form: the session it returned, the console's usual address, Home.
async function startSession(session) {
  setCsrfToken(session.csrfToken);
  state.me = session.user;
  state.setup = false;
  state.setupToken = null;
  // The operator set the server up in this language: make it the account's too.
  if (session.user.language !== lang()) {
    try { state.me = await patch("/me", { language: lang() }); } catch { /* stays the server's default */ }
  }
  startUnreadTimer();
  startLive();
  history.replaceState(null, "", "/" + home);
  await render();
}

/// The language switch: logged in, it is the account's setting (saved with PATCH /me), so
/// another browser logging in as the same person speaks it too.
async function chooseLanguage(code) {
  setLang(code);
  if (!state.me || state.me.language === code) return;
  try {
    state.me = await patch("/me", { language: code });
  } catch { /* switched here; the account keeps its language until the next try */ }
}

async function logout() {
  // Pushes on this device belong to this person: the next one to use it must not see them.
  try {
    const push = await import("./push.js");
    if (push.pushSupported() && (await push.pushState()) === "on") await push.disablePush();
  } catch { /* nothing subscribed, or the server is away: the session still ends */ }
  try { await post("/auth/logout"); } catch { /* the session is forgotten here either way */ }
  // Unsent chat messages belong to this person: the next one to log in here must not send them.
  try { (await import("./screens/chat-common.js")).pending.forgetAll(); } catch { /* no chat screens */ }
  setCsrfToken(null);
  state.me = null;
  state.temporaryPassword = null;
  state.unread = 0;
  state.chatUnread = 0;
  state.pendingHolidays = 0;
  startUnreadTimer();
  startLive();
  state.flash = "login.loggedOut";
  location.hash = "#/login";
}

setUnauthenticatedHandler(() => {
  if (!state.me) return;
  state.me = null;
  startLive();
  state.flash = "login.expired";
  const route = currentRoute();
  if (route && route !== "#/login" && route !== firstPasswordRoute) state.returnTo = route;
  location.hash = "#/login";
});

// An admin reset the password while this console was open (or in another tab): only the form works now.
setPasswordChangeHandler(() => {
  if (!state.me || mustChoosePassword()) return;
  state.me = { ...state.me, mustChangePassword: true };
  startUnreadTimer();
  startLive();
  render();
});

/// Reads the one-time token from /setup#token=… and takes it out of the address bar (and history).
function readSetupToken() {
  if (location.pathname !== "/setup") return;
  state.setup = true;
  const params = new URLSearchParams((location.hash || "").replace(/^#/, ""));
  state.setupToken = params.get("token") || null;
  history.replaceState(null, "", "/setup");
}

/// Reads an invitation's token from /join#invite=… and opens the sign-up screen at the console's
/// usual address, the token out of the address bar (and history).
function readInviteToken() {
  if (location.pathname !== "/join") return;
  const params = new URLSearchParams((location.hash || "").replace(/^#/, ""));
  state.inviteToken = params.get("invite") || null;
  history.replaceState(null, "", "/" + joinRoute);
}

function registerServiceWorker() {
  // Only where the browser allows it (HTTPS, or localhost); the console works the same without.
  if (!("serviceWorker" in navigator) || !window.isSecureContext) return;
  navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(() => { /* no offline page, nothing else lost */ });
  // A click on a push whose window could not be navigated by the worker opens its path here.
  navigator.serviceWorker.addEventListener("message", (event) => {
    const url = event.data?.type === "open" ? event.data.url : null;
    if (typeof url === "string" && url.startsWith("#/")) location.hash = url;
  });
}

async function boot() {
  readSetupToken();
  readInviteToken();
  translateStatic();
  $("lang").addEventListener("change", (e) => chooseLanguage(e.target.value));
  // The skip link moves focus to the content without touching the route in the address.
  $("skip").addEventListener("click", (e) => {
    e.preventDefault();
    $("main").focus();
    $("main").scrollIntoView();
  });
  $("logout").addEventListener("click", logout);
  $("menu-toggle").addEventListener("click", () => setMenu($("menu-toggle").getAttribute("aria-expanded") !== "true"));
  $("sidebar").addEventListener("click", (e) => { if (e.target.closest("a")) setMenu(false); });
  onLangChange(() => { translateStatic(); render(); });
  window.addEventListener("hashchange", () => render());
  $("main").addEventListener("input", (e) => { if (e.target.closest("input, textarea, select, [contenteditable]")) state.typed = true; });
  document.addEventListener("visibilitychange", () => { if (!document.hidden) refreshUnread(); });

  const [pages] = await Promise.all([
    loadPages(),
    // Without a CSRF token this browser has no usable session, so skip the round trip (and
    // the 401 it would log) and go straight to the login screen.
    csrfToken()
      ? get("/me", { quiet401: true }).then((me) => { state.me = me; }).catch((e) => { if (e.status === 401) setCsrfToken(null); })
      : Promise.resolve(),
  ]);
  state.pages = pages;
  await adoptLanguage();
  startUnreadTimer();
  listenLive();
  startLive();
  registerServiceWorker();
  await render();
}

boot();
