// The console's entry module. It draws the navigation from the pages the server's modules
// registered and shows whether the server is healthy. Feature screens arrive with their modules.
const strings = {
  en: { welcome: "Welcome to sgem-server", intro: "Your company's directory, holidays, notices and chat live here. The screens arrive with the feature modules.", healthy: "Server is healthy.", unhealthy: "Server is not answering." },
  es: { welcome: "Bienvenido a sgem-server", intro: "El directorio, las vacaciones, los avisos y el chat de tu empresa viven aquí. Las pantallas llegan con los módulos.", healthy: "El servidor funciona.", unhealthy: "El servidor no responde." },
};
const lang = (navigator.language || "en").slice(0, 2) === "es" ? "es" : "en";
const t = (key) => strings[lang][key] ?? strings.en[key] ?? key;

function translatePage() {
  document.documentElement.lang = lang;
  for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
}

async function drawNavigation() {
  const nav = document.getElementById("nav");
  try {
    const res = await fetch("/api/v1/console/pages", { headers: { Accept: "application/json" } });
    if (!res.ok) return;
    const { items } = await res.json();
    nav.replaceChildren(...items.map((page) => {
      const a = document.createElement("a");
      a.href = page.route;
      a.textContent = lang === "es" ? page.titleES : page.title;
      return a;
    }));
  } catch { /* navigation stays empty; the status line says why */ }
}

async function showHealth() {
  const el = document.getElementById("health");
  try {
    const res = await fetch("/healthz");
    const ok = res.ok && (await res.json()).status === "ok";
    el.textContent = ok ? t("healthy") : t("unhealthy");
    el.className = "status " + (ok ? "ok" : "bad");
  } catch {
    el.textContent = t("unhealthy");
    el.className = "status bad";
  }
}

translatePage();
drawNavigation();
showHealth();
