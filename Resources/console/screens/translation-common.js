// What the screens that translate share: which languages the server's provider offers (none
// when translation is switched off, or the module is not there), language names in the reader's
// language, the "Translated from Spanish" mark, a provider's failure in plain words, and a
// Translate / Show original button for one piece of content.
import { get } from "../api.js";
import { t, lang } from "../i18n.js";
import { h, errorText } from "../dom.js";

// The provider failures the contract names; each has words of its own.
const failures = new Set(["translation_disabled", "invalid_key", "blocked_key", "quota_exceeded", "text_too_long",
  "unprocessable", "unsupported_direction", "rate_limited", "provider_unavailable", "provider_timeout"]);

/// `{provider, languages, available}` from the server: provider "none" and no languages when
/// translation is off or cannot be asked about (then no translate action shows). A provider that
/// fails to list its languages is still there: its actions show, and its problems in words.
export async function translationLanguages() {
  try {
    const answer = await get("/translation/languages");
    const languages = Array.isArray(answer?.languages) ? answer.languages.filter((l) => typeof l?.code === "string" && l.code) : [];
    const provider = typeof answer?.provider === "string" ? answer.provider : "none";
    return { provider, languages, available: provider !== "none" };
  } catch (error) {
    const configured = failures.has(error?.code) && error.code !== "translation_disabled";
    return { provider: configured ? "unknown" : "none", languages: [], available: configured };
  }
}

/// A language's name in the console's language ("es" → "Spanish" / "español"); the provider's
/// name, then the code itself, when the browser does not know it.
export function languageName(code, fallback) {
  const text = String(code ?? "");
  if (!text) return fallback || "";
  try {
    const name = new Intl.DisplayNames([lang()], { type: "language" }).of(text);
    if (name && name !== text) return name;
  } catch { /* not a language tag the browser accepts */ }
  return fallback || text;
}

/// A translation problem in words: the provider failures have their own, anything else is the
/// console's usual error text.
export function translationProblem(error) {
  return error && failures.has(error.code) ? t("translation.err." + error.code) : errorText(error);
}

/// "Already in Spanish." when the provider found the text in the language asked for (the server
/// then answers with the original), else null.
export function alreadyIn(result) {
  return result?.source && result.source === result.target ? t("translation.same", { language: languageName(result.target) }) : null;
}

/// "Translated from Spanish" (or just "Translated" when the source is not known).
export function translatedMark(result, tag = "p.translated-mark") {
  const source = result?.source && result.source !== "auto" ? languageName(result.source) : "";
  return h(tag, {}, source ? t("translation.from", { language: source }) : t("translation.translated"));
}

/// The `lang` attribute for a translated text: its target language when it is a tag.
export function targetLang(result) {
  return /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/.test(String(result?.target ?? "")) ? result.target : null;
}

/// A button that translates one piece of content on demand and then switches between the
/// translation and the original; a problem shows in words beside it. `request()` resolves to
/// the translation; `show(result)` draws it, `show(null)` the original again.
export function translateButton({ request, show, label, id }) {
  const button = h("button.secondary.small", { type: "button", id, dataset: { action: "translate" }, "aria-label": label });
  const problem = h("span.translation-problem", { role: "alert" });  // or a .translation-note
  const wrap = h("div.translate-control", {}, button, problem);
  let result = null;
  let showing = false;
  const relabel = () => {
    button.textContent = showing ? t("translation.showOriginal") : (result ? t("translation.showTranslation") : t("translation.translate"));
    // The label names what the button acts on only while it asks for a translation.
    if (label && !result) button.setAttribute("aria-label", label);
    else button.removeAttribute("aria-label");
    button.dataset.action = showing ? "show-original" : (result ? "show-translation" : "translate");
  };
  button.addEventListener("click", async () => {
    if (result) {
      showing = !showing;
      show(showing ? result : null);
      relabel();
      return;
    }
    button.disabled = true;
    button.textContent = t("translation.translating");
    problem.textContent = "";
    try {
      const answer = await request();
      const same = alreadyIn(answer);
      problem.className = same ? "translation-note" : "translation-problem";
      if (same) problem.textContent = same;
      else { result = answer; showing = true; show(result); }
    } catch (error) {
      problem.className = "translation-problem";
      problem.textContent = translationProblem(error);
    } finally {
      button.disabled = false;
      relabel();
    }
  });
  relabel();
  return wrap;
}
