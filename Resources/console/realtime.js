// The console's one WebSocket to /api/v1/realtime (the session cookie authenticates it). It
// reconnects by itself with ?since=<last event id> after a drop, a network change or a laptop
// waking up, backing off while the server stays away; says so quietly ("Offline, reconnecting…")
// through onStatus; and hands every event to the screens that subscribed to its type. A fresh
// start (no since) or a server "resync" is announced as the "resync" event: screens reload what
// they show, since they may have missed something. Every later connection after a drop is also
// announced as "reconnected": what failed to load while the server was away can load now.
import { get } from "./api.js";

const firstDelayMs = 1_000;
const maxDelayMs = 30_000;
const offlineAfterMs = 2_500;    // a quick reconnect is not worth mentioning
const wakeCheckMs = 10_000;      // timers stop while a laptop sleeps: a late tick means it woke up
const wakeGapMs = 30_000;
const probeAfterFailures = 3;    // then ask /me whether the session itself has ended
const pingEveryMs = 25_000;      // browsers cannot send ping frames: a text {"type":"ping"} it is
const silentLimitMs = 10_000;    // no answer that long after a ping: the connection is dead
const stableAfterMs = 5_000;     // a socket closed sooner than this counts as a failed attempt

const listeners = new Map();     // type → Set of functions; "*" hears everything
const statusListeners = new Set();
let socket = null;
let running = false;
let lastId = null;
let failures = 0;
let retryTimer = null;
let offlineTimer = null;
let wakeTimer = null;
let lastTick = Date.now();
let online = false;
let pingTimer = null;
let lastHeard = 0;
let openedAt = 0;
let shownOffline = false;
let openedBefore = false;        // since start(): a later open is a reconnection

function emit(type, event) {
  for (const key of [type, "*"]) {
    for (const fn of listeners.get(key) ?? []) {
      try { fn(event); } catch (error) { console.warn("realtime listener failed", type, error); }
    }
  }
}

function notify(value) { for (const fn of statusListeners) fn(value); }

function goOnline() {
  clearTimeout(offlineTimer);
  offlineTimer = null;
  online = true;
  if (shownOffline) { shownOffline = false; notify(true); }
}

function goOffline() {
  online = false;
  if (offlineTimer !== null || shownOffline) return;
  // A quick reconnect is not worth mentioning: say so only once it has had its chance.
  offlineTimer = setTimeout(() => {
    offlineTimer = null;
    if (!online && running) { shownOffline = true; notify(false); }
  }, offlineAfterMs);
}

function address() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const since = lastId === null ? "" : `?since=${encodeURIComponent(lastId)}`;
  return `${scheme}//${location.host}/api/v1/realtime${since}`;
}

function connect() {
  clearTimeout(retryTimer);
  retryTimer = null;
  if (!running || socket) return;
  const resuming = lastId !== null;
  let ws;
  try {
    ws = new WebSocket(address());
  } catch {
    scheduleRetry();
    return;
  }
  socket = ws;
  ws.addEventListener("open", () => {
    if (socket !== ws) return;
    openedAt = lastHeard = Date.now();
    goOnline();
    // Without a since there is no telling what happened before: screens reload.
    if (!resuming) emit("resync", { type: "resync" });
    if (openedBefore) emit("reconnected", { type: "reconnected", resumed: resuming });
    openedBefore = true;
  });
  ws.addEventListener("message", (message) => {
    if (socket !== ws) return;
    lastHeard = Date.now();
    let event;
    try { event = JSON.parse(message.data); } catch { return; }
    if (!event || typeof event.type !== "string" || event.type === "pong") return;
    if (event.type === "resync") {
      lastId = null;
      emit("resync", event);
      return;
    }
    if (Number.isInteger(event.id)) {
      if (lastId !== null && event.id <= lastId) return;  // never twice
      lastId = event.id;
    }
    emit(event.type, event);
  });
  ws.addEventListener("close", () => {
    if (socket !== ws) return;
    socket = null;
    goOffline();
    // A server that keeps accepting and closing at once is backed off from like one refusing.
    if (openedAt && Date.now() - openedAt >= stableAfterMs) failures = 0;
    openedAt = 0;
    failures += 1;
    if (failures % probeAfterFailures === 0) {
      // A refused upgrade looks like any other drop; /me tells an ended session apart (its
      // 401 takes the shell to the login screen, which stops this client).
      get("/me", { quiet401: false }).catch(() => {});
    }
    scheduleRetry();
  });
}

function scheduleRetry() {
  if (!running || retryTimer !== null) return;
  const base = Math.min(maxDelayMs, firstDelayMs * 2 ** Math.max(0, failures - 1));
  const delay = base / 2 + Math.random() * base / 2;
  retryTimer = setTimeout(connect, failures <= 1 ? Math.min(delay, firstDelayMs) : delay);
}

/// Drops the current socket (if any) and connects again at once, resuming from the last id.
export function reconnectNow() {
  if (!running) return;
  const old = socket;
  socket = null;
  if (old) { try { old.close(); } catch { /* already closing */ } }
  failures = 0;
  connect();
}

/// Keeps the connection honest: a ping now and then, and a reconnect when nothing comes back.
function heartbeat() {
  if (!socket || socket.readyState !== WebSocket.OPEN) return;
  if (Date.now() - lastHeard > pingEveryMs + silentLimitMs) { reconnectNow(); return; }
  try { socket.send('{"type":"ping"}'); } catch { /* the close event follows */ }
}

function onWake() {
  const now = Date.now();
  const gap = now - lastTick;
  lastTick = now;
  if (gap > wakeGapMs) reconnectNow();
}

function onNetworkOnline() { if (!socket || socket.readyState !== WebSocket.OPEN) reconnectNow(); }
function onNetworkOffline() { goOffline(); }
function onVisible() { if (!document.hidden && running && !socket) reconnectNow(); }

/// Starts the stream (after login). Safe to call when already running.
export function start() {
  if (running) return;
  running = true;
  lastId = null;
  failures = 0;
  openedBefore = false;
  lastTick = Date.now();
  goOffline();
  wakeTimer = setInterval(onWake, wakeCheckMs);
  pingTimer = setInterval(heartbeat, pingEveryMs);
  window.addEventListener("online", onNetworkOnline);
  window.addEventListener("offline", onNetworkOffline);
  document.addEventListener("visibilitychange", onVisible);
  connect();
}

/// Stops the stream (logout, ended session) and forgets where it was.
export function stop() {
  running = false;
  clearTimeout(retryTimer);
  clearTimeout(offlineTimer);
  clearInterval(wakeTimer);
  clearInterval(pingTimer);
  retryTimer = offlineTimer = wakeTimer = pingTimer = null;
  window.removeEventListener("online", onNetworkOnline);
  window.removeEventListener("offline", onNetworkOffline);
  document.removeEventListener("visibilitychange", onVisible);
  const old = socket;
  socket = null;
  lastId = null;
  if (old) { try { old.close(); } catch { /* already closing */ } }
  online = false;
  if (shownOffline) { shownOffline = false; notify(true); }  // nothing to warn about once logged out
}

/// Hands a signal of the console's own (`{type}`) to the screens listening, as if it had come in.
export function announce(type) { emit(type, { type }); }

/// Calls fn(event) for each event of `type` ("message.created", …, "resync", "reconnected", or "*").
/// Returns the function that unsubscribes.
export function on(type, fn) {
  if (!listeners.has(type)) listeners.set(type, new Set());
  listeners.get(type).add(fn);
  return () => listeners.get(type)?.delete(fn);
}

/// Calls fn(online) when the stream goes away for more than a moment, and when it is back.
export function onStatus(fn) {
  statusListeners.add(fn);
  return () => statusListeners.delete(fn);
}

/// True while the socket is open.
export function connected() { return Boolean(socket && socket.readyState === WebSocket.OPEN); }

/// The id of the last event received (for tests and diagnostics).
export function lastEventId() { return lastId; }
