// Admin: the company's settings in plain words (holiday allowance, working days, who may sign
// up, default language, time zone, how many may be away at once, carrying days over), saved
// together with PUT /admin/settings; problems show next to their field. Then the company feeds
// shown on Home, one address per line, with each one's last read in words. Translation has its
// own screen (admin-translation.js).
import { get, put } from "../api.js";
import { t, lang } from "../i18n.js";
import { h, field, showFieldErrors, notice, failure, when, submitForm, languageSelect } from "../dom.js";
import { feedState, urlProblem } from "./feed-common.js";

// Offered as suggestions when the browser cannot list every IANA zone.
const commonZones = ["UTC", "Europe/Madrid", "Europe/Lisbon", "Europe/London", "Europe/Paris", "Europe/Berlin", "Europe/Rome",
  "Europe/Amsterdam", "Atlantic/Canary", "America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles",
  "America/Mexico_City", "America/Bogota", "America/Lima", "America/Santiago", "America/Argentina/Buenos_Aires",
  "America/Sao_Paulo", "Asia/Tokyo", "Asia/Shanghai", "Asia/Kolkata", "Asia/Dubai", "Australia/Sydney", "Africa/Casablanca"];

function zones() {
  try {
    const all = Intl.supportedValuesOf("timeZone");
    if (Array.isArray(all) && all.length) return ["UTC", ...all.filter((z) => z !== "UTC")];
  } catch { /* older browsers */ }
  return commonZones;
}

/// Weekday names in the reader's language, Monday (ISO 1) to Sunday (ISO 7).
function weekdayNames() {
  const format = new Intl.DateTimeFormat(lang(), { weekday: "long", timeZone: "UTC" });
  // 2024-01-01 was a Monday.
  return [1, 2, 3, 4, 5, 6, 7].map((iso) => format.format(new Date(Date.UTC(2024, 0, iso))));
}

function monthNames() {
  const format = new Intl.DateTimeFormat(lang(), { month: "long", timeZone: "UTC" });
  return Array.from({ length: 12 }, (_, m) => format.format(new Date(Date.UTC(2024, m, 1))));
}

/// A group of controls with one legend and one problem slot, usable by showFieldErrors.
function group(legend, controls, hint, id) {
  const error = h("p.field-error", { id: `${id}-error`, role: "alert", hidden: true });
  const hintEl = hint ? h("p.hint", { id: `${id}-hint` }, hint) : null;
  const wrap = h("fieldset.field.group", { id, "aria-describedby": [hintEl && `${id}-hint`, `${id}-error`].filter(Boolean).join(" ") },
    h("legend", {}, legend), h("div.group-controls", {}, ...controls), hintEl, error);
  const first = controls.map((c) => c.querySelector?.("input, select") ?? c).find(Boolean);
  const clear = () => { error.hidden = true; error.textContent = ""; first.removeAttribute("aria-invalid"); };
  wrap.addEventListener("change", clear);
  wrap.addEventListener("input", clear);
  return { wrap, input: first, error };
}

function numberInput(id, value, attrs = {}) {
  return h("input", { id, type: "number", inputmode: "numeric", step: 1, min: 0, value: value ?? "", ...attrs });
}

/// The number in a number input: null when empty, the raw text when it is not a whole number
/// (the server then explains the problem next to the field).
function numberValue(input) {
  const raw = input.value.trim();
  if (raw === "") return null;
  return /^-?\d+$/.test(raw) ? Number(raw) : raw;
}

function settingsForm(settings) {
  const days = weekdayNames();
  const dayBoxes = days.map((name, i) => {
    const iso = i + 1;
    const id = `settings-day-${iso}`;
    const box = h("input", { type: "checkbox", id, value: String(iso), checked: settings.workingDays?.includes(iso) });
    return h("span.check-item", {}, box, h("label", { for: id }, name));
  });
  const registration = h("select", { id: "settings-registration" },
    ...["closed", "open", "domain"].map((r) => h("option", { value: r }, t("settings.registration." + r))));
  registration.value = settings.registration ?? "closed";
  const language = languageSelect({ id: "settings-defaultLanguage" }, settings.defaultLanguage || "en");
  const zoneList = h("datalist", { id: "settings-zones" }, ...zones().map((z) => h("option", { value: z })));
  const [expiresMonth, expiresDay] = (settings.carryOverExpires ?? "").split("-").map((p) => p ? Number(p) : null);
  const month = h("select", { id: "settings-carryOverExpires", "aria-label": t("settings.expiresMonth") },
    h("option", { value: "" }, t("settings.expiresNever")),
    ...monthNames().map((name, i) => h("option", { value: String(i + 1) }, name)));
  month.value = expiresMonth ? String(expiresMonth) : "";
  const day = h("select", { id: "settings-carryOverExpires-day", "aria-label": t("settings.expiresDay") },
    ...Array.from({ length: 31 }, (_, i) => h("option", { value: String(i + 1) }, String(i + 1))));
  day.value = String(expiresDay ?? 31);
  day.disabled = !month.value;
  month.addEventListener("change", () => { day.disabled = !month.value; });

  const fields = {
    defaultAllowanceDays: field(t("settings.allowance"), numberInput("settings-defaultAllowanceDays", settings.defaultAllowanceDays, { max: 366, required: true }),
      t("settings.allowanceHint")),
    workingDays: group(t("settings.workingDays"), dayBoxes, t("settings.workingDaysHint"), "settings-workingDays"),
    registration: field(t("settings.registration"), registration),
    registrationDomain: field(t("settings.domain"), h("input", { id: "settings-registrationDomain", value: settings.registrationDomain ?? "",
      maxlength: 253, placeholder: "example.com", autocapitalize: "none", spellcheck: "false" }), t("settings.domainHint")),
    defaultLanguage: field(t("settings.language"), language, t("settings.languageHint")),
    timeZone: field(t("settings.timeZone"), h("input", { id: "settings-timeZone", list: "settings-zones", value: settings.timeZone ?? "UTC",
      maxlength: 64, autocapitalize: "none", spellcheck: "false", autocomplete: "off" }), t("settings.timeZoneHint")),
    maxSimultaneousAbsences: field(t("settings.maxAway"), numberInput("settings-maxSimultaneousAbsences", settings.maxSimultaneousAbsences, { min: 1, max: 10000 }),
      t("settings.maxAwayHint")),
    carryOverMaxDays: field(t("settings.carryOver"), numberInput("settings-carryOverMaxDays", settings.carryOverMaxDays, { max: 366 }),
      t("settings.carryOverHint")),
    carryOverExpires: group(t("settings.expires"), [month, day], t("settings.expiresHint"), "settings-expires"),
    pushContact: field(t("settings.pushContact"), h("input", { id: "settings-pushContact", value: settings.pushContact ?? "", maxlength: 200,
      placeholder: "mailto:it@example.com", autocapitalize: "none", spellcheck: "false" }), t("settings.pushContactHint")),
  };
  const domainWrap = fields.registrationDomain.wrap;
  const showDomain = () => { domainWrap.hidden = registration.value !== "domain"; };
  registration.addEventListener("change", showDomain);
  showDomain();

  const status = notice();
  status.id = "settings-status";
  const stamp = h("p.hint", { id: "settings-updated" });
  const showStamp = (s) => stamp.replaceChildren(...(s.updatedAt ? [t("settings.updated"), " ", when(s.updatedAt)] : [t("settings.neverChanged")]));
  showStamp(settings);
  const save = h("button", { type: "submit", id: "settings-save" }, t("settings.save"));
  const form = h("form", { id: "settings-form", novalidate: true },
    h("section.card", { "aria-labelledby": "settings-holidays" }, h("h2", { id: "settings-holidays" }, t("settings.section.holidays")),
      fields.defaultAllowanceDays.wrap, fields.workingDays.wrap, fields.maxSimultaneousAbsences.wrap,
      fields.carryOverMaxDays.wrap, fields.carryOverExpires.wrap),
    h("section.card", { "aria-labelledby": "settings-people" }, h("h2", { id: "settings-people" }, t("settings.section.people")),
      fields.registration.wrap, domainWrap, fields.defaultLanguage.wrap, fields.timeZone.wrap, zoneList, fields.pushContact.wrap),
    status, h("div.actions", {}, save), stamp);

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = {
      defaultAllowanceDays: numberValue(fields.defaultAllowanceDays.input),
      workingDays: dayBoxes.map((b) => b.querySelector("input")).filter((b) => b.checked).map((b) => Number(b.value)),
      registration: registration.value,
      registrationDomain: registration.value === "domain" ? fields.registrationDomain.input.value.trim() || null : (settings.registrationDomain ?? null),
      defaultLanguage: language.value,
      timeZone: fields.timeZone.input.value.trim(),
      maxSimultaneousAbsences: numberValue(fields.maxSimultaneousAbsences.input),
      carryOverMaxDays: numberValue(fields.carryOverMaxDays.input) ?? 0,
      carryOverExpires: month.value ? `${month.value.padStart(2, "0")}-${day.value.padStart(2, "0")}` : null,
      pushContact: fields.pushContact.input.value.trim() || null,
    };
    const problems = {};
    if (body.defaultAllowanceDays === null) problems.defaultAllowanceDays = "is required";
    if (!body.timeZone) problems.timeZone = "is required";
    if (body.registration === "domain" && !body.registrationDomain) problems.registrationDomain = "is required";
    if (showFieldErrors(fields, problems)) { status.set("bad", t("err.validation_failed")); return; }
    const sent = await submitForm({ button: save, fields, status }, () => put("/admin/settings", body));
    if (!sent.ok) return;
    settings = sent.result;
    showStamp(settings);
    status.set("ok", t("settings.saved"));
  });
  return form;
}

/// How often, and how many times, the feed list is read again while a feed waits for its first read.
const feedRecheckMs = 1500;
const feedRechecks = 40;

/// The company feeds: a textarea of addresses saved with PUT /admin/company/feeds, and the list
/// of feeds with their state, read again while any waits for its first read.
function feedsForm(initial, ctx) {
  const textarea = h("textarea", { id: "feeds-urls", rows: 4, spellcheck: "false", autocapitalize: "none", autocomplete: "off",
    placeholder: "https://example.com/feed.xml", value: initial.map((f) => f.url).join("\n") });
  const urls = field(t("feed.urls"), textarea, t("feed.urlsHint"));
  const list = h("ul.plain-list.feed-states", { id: "feeds-list", "aria-live": "polite" });
  let timer = null;
  let rechecks = 0;
  const show = (feeds) => {
    list.replaceChildren(...(feeds.length
      ? feeds.map((f) => h("li.feed-status", { dataset: { url: f.url, status: f.status } },
        h("span.feed-url", {}, f.title ? `${f.title} (${f.url})` : f.url), " ", feedState(f)))
      : [h("li.muted", { id: "feeds-none" }, t("feed.none"))]));
    clearTimeout(timer);
    if (feeds.some((f) => f.status === "pending") && rechecks < feedRechecks) {
      rechecks += 1;
      timer = setTimeout(async () => {
        if (!ctx.alive()) return;
        try { show((await get("/admin/company/feeds")).items ?? []); } catch { /* shown at the next save */ }
      }, feedRecheckMs);
    }
  };
  show(initial);

  const status = notice();
  status.id = "feeds-status";
  const save = h("button", { type: "submit", id: "feeds-save" }, t("feed.save"));
  const form = h("form", { id: "feeds-form", novalidate: true },
    h("section.card", { "aria-labelledby": "feeds-title" }, h("h2", { id: "feeds-title" }, t("feed.settingsTitle")),
      h("p.hint", {}, t("feed.settingsIntro")), urls.wrap, list, status, h("div.actions", {}, save)));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const lines = textarea.value.split("\n").map((l) => l.trim()).filter(Boolean);
    // The server names problems by position ("urls[2]"): show them by line.
    const byLine = (error) => {
      const fields = error?.fields ?? {};
      const problems = Object.entries(fields).map(([key, problem]) => {
        const m = /^urls\[(\d+)\]$/.exec(key);
        return m ? t("feed.line", { n: Number(m[1]) + 1, problem: urlProblem(problem) }) : urlProblem(problem);
      });
      return problems.length ? { urls: problems.join(" ") } : {};
    };
    const sent = await submitForm({ button: save, fields: { urls }, status, problems: byLine },
      () => put("/admin/company/feeds", { urls: lines }));
    if (!sent.ok) return;
    textarea.value = (sent.result.items ?? []).map((f) => f.url).join("\n");
    rechecks = 0;
    show(sent.result.items ?? []);
    status.set("ok", t("feed.saved"));
  });
  return form;
}

export async function render(root, ctx) {
  root.append(h("div.page-head", {}, h("h1", {}, t("settings.title")), h("p.muted", {}, t("settings.intro"))));
  let settings, feeds;
  try {
    [settings, feeds] = await Promise.all([get("/admin/settings"), get("/admin/company/feeds")]);
  } catch (error) {
    if (ctx.alive()) root.append(failure(error, t("err.network")));
    return;
  }
  if (!ctx.alive()) return;
  root.append(settingsForm(settings), feedsForm(feeds.items ?? [], ctx));
}
