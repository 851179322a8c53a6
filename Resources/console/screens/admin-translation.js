// Admin: translation (the translation module's page, #/admin/translation), saved on its own with
// PUT /admin/translation: the provider, its address, a write-only key, the time limit, and a live
// "Test connection" that says in words what is wrong.
import { get, post, put } from "../api.js";
import { t } from "../i18n.js";
import { h, field, showFieldErrors, notice, failure, submitForm, errorText } from "../dom.js";

const providers = ["libretranslate", "deepl", "yandex", "none"];

/// The server's words about a time limit in milliseconds, in seconds for the form.
function timeoutProblem(message) {
  const range = /from (\d+) to (\d+)/.exec(String(message ?? ""));
  return range ? t("translation.timeoutRange", { min: Number(range[1]) / 1000, max: Number(range[2]) / 1000 }) : t("translation.timeoutProblem");
}

/// Why translation cannot run with the saved settings `view`, in words; null when it can.
function setupProblem(view) {
  if (view.provider === "none") return t("translation.off");
  if (view.provider === "libretranslate" && !view.url) return t("translation.needsURL");
  if (view.apiKeyNeedsReentry) return t("translation.keyLost");
  if ((view.provider === "deepl" || view.provider === "yandex") && !view.apiKeySet) {
    return t("translation.needsKey", { provider: t("translation.provider." + view.provider) });
  }
  return view.ready === false ? t("translation.notReady") : null;
}

/// The translation settings: their own form, saved apart from the company's.
function translationForm(initial) {
  let view = initial;
  const provider = h("select", { id: "translation-provider" },
    ...providers.map((p) => h("option", { value: p }, t("translation.provider." + p))));
  provider.value = providers.includes(view.provider) ? view.provider : "none";
  const fields = {
    provider: field(t("translation.provider"), provider),
    url: field(t("translation.url"), h("input", { id: "translation-url", type: "url", inputmode: "url", value: view.url ?? "", maxlength: 2048,
      autocapitalize: "none", spellcheck: "false" }), t("translation.urlHint." + provider.value)),
    apiKey: field(t("translation.apiKey"), h("input", { id: "translation-apiKey", type: "password", autocomplete: "new-password",
      spellcheck: "false", maxlength: 500 }), t("translation.keyHint")),
    timeoutMs: field(t("translation.timeout"), h("input", { id: "translation-timeout", type: "number", inputmode: "decimal", step: "any", min: 0.5,
      value: Number.isFinite(view.timeoutMs) ? view.timeoutMs / 1000 : "" }), t("translation.timeoutHint")),
  };
  const urlHint = fields.url.wrap.querySelector(".hint");
  const keyState = h("span", { id: "translation-key-state" });
  const removeKey = h("button.secondary.small", { type: "button", id: "translation-remove-key" }, t("translation.removeKey"));
  const keyLine = h("p.hint.actions", {}, keyState, removeKey);
  fields.apiKey.input.after(keyLine);
  fields.apiKey.input.setAttribute("aria-describedby", `${fields.apiKey.input.getAttribute("aria-describedby")} translation-key-state`);
  const details = h("div", { id: "translation-details" }, fields.url.wrap, fields.apiKey.wrap, fields.timeoutMs.wrap);
  const status = notice();
  status.id = "translation-status";
  const readiness = h("p.notice", { id: "translation-ready" });
  const save = h("button", { type: "submit", id: "translation-save" }, t("translation.save"));
  const test = h("button.secondary", { type: "button", id: "translation-test", "aria-describedby": "translation-test-hint" }, t("translation.test"));
  const tested = notice();
  tested.id = "translation-test-ok";
  const problem = h("p.notice.bad", { id: "translation-test-problem", role: "alert", hidden: true });
  const form = h("form.card", { id: "translation-form", novalidate: true, "aria-labelledby": "translation-heading" },
    h("h2", { id: "translation-heading" }, t("translation.settings")), h("p.muted", {}, t("translation.settingsIntro")),
    readiness, fields.provider.wrap, details, status, h("div.actions", {}, save, test),
    h("p.hint", { id: "translation-test-hint" }, t("translation.testHint")), tested, problem);

  function showProvider() {
    const chosen = provider.value;
    details.hidden = chosen === "none";
    urlHint.textContent = t("translation.urlHint." + chosen);
    fields.url.input.placeholder = chosen === "libretranslate" ? "https://translate.example.com" : "";
  }
  function showKey() {
    // A key saved under another secret key file cannot be used: say so rather than "no key".
    keyState.textContent = view.apiKeyNeedsReentry ? t("translation.keyLost")
      : view.apiKeySet ? t("translation.keySaved") : t("translation.noKey");
    removeKey.hidden = !view.apiKeySet;
    const problem = setupProblem(view);
    readiness.textContent = problem ?? "";
    readiness.hidden = !problem;
  }
  provider.addEventListener("change", showProvider);
  showProvider();
  showKey();

  const saved = (next, words) => {
    view = next;
    fields.apiKey.input.value = "";
    showKey();
    status.set("ok", words);
  };
  const problems = (error) => (error?.fields?.timeoutMs ? { timeoutMs: timeoutProblem(error.fields.timeoutMs) } : {});
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const seconds = fields.timeoutMs.input.value.trim();
    const timeoutMs = seconds === "" ? view.timeoutMs : Math.round(Number(seconds) * 1000);
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      showFieldErrors(fields, { timeoutMs: t("translation.timeoutProblem") });
      status.set("bad", t("err.validation_failed"));
      return;
    }
    const body = { provider: provider.value, url: fields.url.input.value.trim(), timeoutMs };
    // Write-only: a key typed here replaces the saved one; an empty field keeps it.
    if (fields.apiKey.input.value) body.apiKey = fields.apiKey.input.value;
    const sent = await submitForm({ button: save, fields, status, problems }, () => put("/admin/translation", body));
    if (sent.ok) saved(sent.result, t("translation.saved"));
  });
  removeKey.addEventListener("click", async () => {
    const sent = await submitForm({ button: removeKey, fields, status, problems },
      () => put("/admin/translation", { provider: view.provider, url: view.url ?? "", timeoutMs: view.timeoutMs, apiKey: null }));
    if (!sent.ok) return;
    saved(sent.result, t("translation.keyRemoved"));
    fields.apiKey.input.focus();
  });
  test.addEventListener("click", async () => {
    test.disabled = true;
    test.textContent = t("translation.testing");
    tested.set();
    problem.hidden = true;
    try {
      const answer = await post("/admin/translation/test");
      const words = [t(answer?.ok ? "translation.testOk" : "translation.testBad"), answer?.message].filter(Boolean).join(" ");
      if (answer?.ok) tested.set("ok", words);
      else { problem.textContent = words; problem.hidden = false; }
    } catch (error) {
      problem.textContent = [t("translation.testBad"), errorText(error)].join(" ");
      problem.hidden = false;
    } finally {
      test.disabled = false;
      test.textContent = t("translation.test");
    }
  });
  return form;
}

export async function render(root, ctx) {
  root.append(h("div.page-head", {}, h("h1", {}, t("translation.pageTitle")), h("p.muted", {}, t("translation.pageIntro"))));
  let view;
  try {
    view = await get("/admin/translation");
  } catch (error) {
    if (ctx.alive()) root.append(failure(error, t("err.network")));
    return;
  }
  if (ctx.alive()) root.append(translationForm(view));
}
