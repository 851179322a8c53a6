// The console's service worker (scope: the whole console). It keeps a copy of the shell so the
// installed app opens with its own look, and shows an offline page when the network is gone.
// Network first: a fresh answer always wins and refreshes the copy, so updates arrive at once.
// API answers (/api/…) are never cached, nor is anything but a same-origin GET.
// Pushes (Web Push) arrive here: each is shown as a notification unless a console window has
// the focus (the person is looking at it), and a click opens the push's console path.
const CACHE = "sgem-shell-v1";
const OFFLINE = "/assets/offline.html";
const SHELL = [
  "/", OFFLINE, "/assets/app.css", "/assets/app.js", "/assets/api.js", "/assets/i18n.js", "/assets/dom.js",
  "/assets/links.js", "/assets/favicon.svg", "/assets/icons/icon-192.png", "/manifest.webmanifest",
];

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(caches.keys()
    .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
    .then(() => self.clients.claim()));
});

function cacheable(request, url) {
  return request.method === "GET" && url.origin === self.location.origin && !url.pathname.startsWith("/api/");
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (!cacheable(request, url)) return; // the browser handles it, untouched
  event.respondWith((async () => {
    try {
      const response = await fetch(request);
      if (response.ok && response.type === "basic") {
        const copy = response.clone();
        event.waitUntil(caches.open(CACHE).then((cache) => cache.put(request, copy)));
      }
      return response;
    } catch {
      const cache = await caches.open(CACHE);
      if (request.mode === "navigate") return (await cache.match(OFFLINE)) ?? Response.error();
      return (await cache.match(request)) ?? Response.error();
    }
  })());
});

/// The push's JSON ({type, title, body, url, tag}); nothing when it does not parse.
function pushed(event) {
  try { return event.data ? event.data.json() : null; } catch { return null; }
}

self.addEventListener("push", (event) => {
  const data = pushed(event);
  if (!data || typeof data.title !== "string") return;
  event.waitUntil((async () => {
    const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
    if (windows.some((w) => w.focused)) return;
    await self.registration.showNotification(data.title, {
      body: typeof data.body === "string" ? data.body : "",
      tag: typeof data.tag === "string" ? data.tag : undefined,
      data: { url: typeof data.url === "string" && data.url.startsWith("#/") ? data.url : "#/" },
      icon: "/assets/icons/icon-192.png",
      badge: "/assets/icons/icon-192.png",
    });
  })());
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const target = new URL("/" + (event.notification.data?.url ?? "#/"), self.location.origin).href;
  event.waitUntil((async () => {
    const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
    const open = windows.find((w) => new URL(w.url).origin === self.location.origin);
    if (open) {
      await open.focus();
      try { await open.navigate(target); } catch { open.postMessage({ type: "open", url: event.notification.data?.url }); }
      return;
    }
    await self.clients.openWindow(target);
  })());
});
