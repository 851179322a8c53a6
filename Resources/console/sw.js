// The console's service worker (scope: the whole console). It keeps a copy of the shell so the
// installed app opens with its own look, and shows an offline page when the network is gone.
// Network first: a fresh answer always wins and refreshes the copy, so updates arrive at once.
// API answers (/api/…) are never cached, nor is anything but a same-origin GET.
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
