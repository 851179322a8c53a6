// Every string the console shows, in English and Spanish. Screens call t("key", {name: value});
// "{name}" placeholders are filled with plain text (the DOM helpers escape by construction).
const strings = {
  en: {
    "app.name": "sgem",
    "app.skip": "Skip to content",
    "app.menu": "Menu",
    "app.sections": "Sections",
    "app.admin": "Administration",
    "app.language": "Language",
    "app.logout": "Log out",
    "app.loading": "Loading…",
    "app.signedInAs": "Signed in as {name}",
    "app.notFound": "There is no such page.",
    "app.loadFailed": "This screen could not be loaded. Reload the page to try again.",

    "nav.directory": "Team directory",
    "nav.holidays": "Holidays",
    "nav.notices": "Notices",
    "nav.chat": "Chat",
    "nav.company": "Company",
    "nav.profile": "My profile",
    "nav.adminUsers": "Users",
    "nav.adminSettings": "Settings",
    "nav.adminAudit": "Audit log",

    "soon.title": "{section} is coming soon",
    "soon.body": "This part of the console is on its way. Everything else keeps working in the meantime.",
    "soon.back": "Go to the team directory",

    "login.title": "Log in",
    "login.intro": "Use your username or email address and your password.",
    "login.login": "Username or email",
    "login.password": "Password",
    "login.submit": "Log in",
    "login.busy": "Logging in…",
    "login.expired": "Your session has ended. Please log in again.",
    "login.loggedOut": "You have logged out.",

    "err.network": "The server cannot be reached. Check your connection and try again.",
    "err.invalid_credentials": "The username, email or password is wrong.",
    "err.account_inactive": "This account has been deactivated. Ask an administrator to reactivate it.",
    "err.rate_limited": "Too many attempts. Try again {when}.",
    "err.rate_limited_plain": "Too many attempts. Try again in a moment.",
    "err.unauthenticated": "You need to log in.",
    "err.session_expired": "Your session has ended. Please log in again.",
    "err.csrf_failed": "Your session needs to be refreshed. Please log in again.",
    "err.forbidden": "You are not allowed to do that.",
    "err.not_found": "That no longer exists.",
    "err.username_taken": "That username is already taken.",
    "err.email_taken": "That email address is already in use.",
    "err.last_admin": "The company must keep at least one active administrator, so this change is not allowed.",
    "err.validation_failed": "Some fields need attention.",
    "err.payload_too_large": "The file is too large. The limit is 2 MiB.",
    "err.unsupported_media_type": "The picture must be a PNG, JPEG or WebP image.",
    "err.registration_closed": "Registration is closed. Ask an administrator for an account.",
    "err.bad_request": "The request was not understood.",
    "err.invalid_json": "The request was not understood.",
    "err.unavailable": "The server is busy. Try again shortly.",
    "err.internal": "Something went wrong on the server. Try again, and tell an administrator if it keeps happening.",
    "err.unknown": "Something went wrong (error {status}).",

    "field.required": "This field is required.",
    "field.tooLong": "At most {n} characters.",
    "field.passwordShort": "At least 10 characters.",
    "field.passwordMismatch": "The two passwords differ.",
    "field.currentPassword": "This is not your current password.",
    "field.phone": "Use digits, spaces and + ( ) - . only.",
    "field.twitter": "A handle of 1 to 15 letters, digits or _.",
    "field.linkedin": "An https:// address or a profile name.",
    "field.email": "Enter a valid email address.",
    "field.username": "3 to 32 of a–z, 0–9, '.', '_' and '-'.",
    "field.oneLine": "Keep it on one line.",
    "field.displayName": "1 to 100 characters on one line.",
    "field.language": "Pick a language.",

    "dir.title": "Team directory",
    "dir.search": "Search by name, username or email",
    "dir.status": "Show",
    "dir.status.all": "Everyone",
    "dir.status.active": "Active",
    "dir.status.inactive": "Inactive",
    "dir.counts": "{total}, {active}",
    "dir.total.one": "{n} person",
    "dir.total.other": "{n} people",
    "dir.activeCount.one": "{n} active",
    "dir.activeCount.other": "{n} active",
    "dir.empty": "Nobody matches this search.",
    "dir.active": "Active",
    "dir.inactive": "Inactive",
    "dir.admin": "Admin",
    "dir.email": "Email {name}",
    "dir.call": "Call {name}",
    "dir.twitter": "{name} on X (Twitter)",
    "dir.linkedin": "{name} on LinkedIn",

    "profile.title": "My profile",
    "profile.details": "Details",
    "profile.displayName": "Display name",
    "profile.position": "Position",
    "profile.phone": "Phone",
    "profile.email": "Email",
    "profile.emailHint": "Only an administrator can change your email address.",
    "profile.twitter": "X (Twitter) handle",
    "profile.linkedin": "LinkedIn profile",
    "profile.bio": "About me",
    "profile.status": "Status",
    "profile.statusHint": "A short line your colleagues see, such as “In the office on Tuesdays”.",
    "profile.country": "Country",
    "profile.language": "Language",
    "profile.languageHint": "Messages are translated into this language for you.",
    "profile.notifications": "Send me notifications",
    "profile.save": "Save profile",
    "profile.saved": "Your profile has been saved.",
    "profile.picture": "Picture",
    "profile.pictureHint": "PNG, JPEG or WebP, at most 2 MiB.",
    "profile.upload": "Choose a picture",
    "profile.uploading": "Uploading…",
    "profile.uploaded": "Your new picture is up.",
    "profile.remove": "Remove picture",
    "profile.removed": "Your picture has been removed.",
    "profile.tooBig": "The file is too large. The limit is 2 MiB.",
    "profile.password": "Password",
    "profile.currentPassword": "Current password",
    "profile.newPassword": "New password",
    "profile.confirmPassword": "New password again",
    "profile.changePassword": "Change password",
    "profile.passwordChanged": "Your password has been changed. Your other sessions have been logged out.",
    "profile.lastLogin": "Last login: {when}",
    "profile.role.admin": "Administrator",
    "profile.role.employee": "Employee",

    "admin.title": "Users",
    "admin.create": "Create a user",
    "admin.username": "Username",
    "admin.email": "Email",
    "admin.displayName": "Display name",
    "admin.role": "Role",
    "admin.role.admin": "Administrator",
    "admin.role.employee": "Employee",
    "admin.password": "Password (optional)",
    "admin.passwordHint": "Leave empty to generate one.",
    "admin.createSubmit": "Create user",
    "admin.created": "{name} has been created.",
    "admin.generated": "Password for {name}",
    "admin.generatedHint": "It is shown only once. Copy it and pass it on safely.",
    "admin.copy": "Copy",
    "admin.copied": "Copied.",
    "admin.dismiss": "Done",
    "admin.list": "All users",
    "admin.user": "User",
    "admin.state": "State",
    "admin.actions": "Actions",
    "admin.deactivate": "Deactivate",
    "admin.activate": "Reactivate",
    "admin.resetPassword": "Reset password",
    "admin.resetConfirm": "Give {name} a new temporary password? Their sessions will end.",
    "admin.deactivateConfirm": "Deactivate {name}? They will be logged out at once.",
    "admin.resetDone": "Temporary password for {name}",
    "admin.roleChanged": "{name} is now: {role}.",
    "admin.deactivated": "{name} has been deactivated.",
    "admin.activated": "{name} has been reactivated.",
    "admin.you": "you",
    "admin.edit": "Edit",
    "admin.editTitle": "Edit {name}",
    "admin.save": "Save",
    "admin.cancel": "Cancel",
    "admin.saved": "{name} has been updated.",
    "admin.more": "Show more users",
    "admin.shown": "Showing {shown} of {total} users.",
  },
  es: {
    "app.name": "sgem",
    "app.skip": "Saltar al contenido",
    "app.menu": "Menú",
    "app.sections": "Secciones",
    "app.admin": "Administración",
    "app.language": "Idioma",
    "app.logout": "Cerrar sesión",
    "app.loading": "Cargando…",
    "app.signedInAs": "Sesión de {name}",
    "app.notFound": "Esa página no existe.",
    "app.loadFailed": "No se pudo cargar esta pantalla. Recarga la página para intentarlo de nuevo.",

    "nav.directory": "Directorio",
    "nav.holidays": "Vacaciones",
    "nav.notices": "Avisos",
    "nav.chat": "Chat",
    "nav.company": "Empresa",
    "nav.profile": "Mi perfil",
    "nav.adminUsers": "Usuarios",
    "nav.adminSettings": "Ajustes",
    "nav.adminAudit": "Auditoría",

    "soon.title": "{section} llegará pronto",
    "soon.body": "Esta parte de la consola está en camino. Mientras tanto, todo lo demás sigue funcionando.",
    "soon.back": "Ir al directorio",

    "login.title": "Iniciar sesión",
    "login.intro": "Usa tu nombre de usuario o tu correo y tu contraseña.",
    "login.login": "Usuario o correo",
    "login.password": "Contraseña",
    "login.submit": "Entrar",
    "login.busy": "Entrando…",
    "login.expired": "Tu sesión ha terminado. Vuelve a iniciar sesión.",
    "login.loggedOut": "Has cerrado la sesión.",

    "err.network": "No se puede contactar con el servidor. Revisa tu conexión e inténtalo de nuevo.",
    "err.invalid_credentials": "El usuario, el correo o la contraseña no son correctos.",
    "err.account_inactive": "Esta cuenta está desactivada. Pide a un administrador que la reactive.",
    "err.rate_limited": "Demasiados intentos. Vuelve a intentarlo {when}.",
    "err.rate_limited_plain": "Demasiados intentos. Vuelve a intentarlo en un momento.",
    "err.unauthenticated": "Tienes que iniciar sesión.",
    "err.session_expired": "Tu sesión ha terminado. Vuelve a iniciar sesión.",
    "err.csrf_failed": "Hay que renovar tu sesión. Vuelve a iniciar sesión.",
    "err.forbidden": "No tienes permiso para hacer eso.",
    "err.not_found": "Eso ya no existe.",
    "err.username_taken": "Ese nombre de usuario ya está en uso.",
    "err.email_taken": "Esa dirección de correo ya está en uso.",
    "err.last_admin": "La empresa debe conservar al menos un administrador activo, así que este cambio no está permitido.",
    "err.validation_failed": "Algunos campos necesitan tu atención.",
    "err.payload_too_large": "El archivo es demasiado grande. El límite es de 2 MiB.",
    "err.unsupported_media_type": "La imagen debe ser PNG, JPEG o WebP.",
    "err.registration_closed": "El registro está cerrado. Pide una cuenta a un administrador.",
    "err.bad_request": "No se entendió la petición.",
    "err.invalid_json": "No se entendió la petición.",
    "err.unavailable": "El servidor está ocupado. Inténtalo de nuevo en breve.",
    "err.internal": "Algo falló en el servidor. Inténtalo de nuevo y avisa a un administrador si se repite.",
    "err.unknown": "Algo salió mal (error {status}).",

    "field.required": "Este campo es obligatorio.",
    "field.tooLong": "Como máximo {n} caracteres.",
    "field.passwordShort": "Al menos 10 caracteres.",
    "field.passwordMismatch": "Las dos contraseñas no coinciden.",
    "field.currentPassword": "Esta no es tu contraseña actual.",
    "field.phone": "Usa solo dígitos, espacios y + ( ) - .",
    "field.twitter": "Un usuario de 1 a 15 letras, dígitos o _.",
    "field.linkedin": "Una dirección https:// o un nombre de perfil.",
    "field.email": "Escribe un correo válido.",
    "field.username": "De 3 a 32 caracteres entre a–z, 0–9, '.', '_' y '-'.",
    "field.oneLine": "Escríbelo en una sola línea.",
    "field.displayName": "De 1 a 100 caracteres en una sola línea.",
    "field.language": "Elige un idioma.",

    "dir.title": "Directorio",
    "dir.search": "Buscar por nombre, usuario o correo",
    "dir.status": "Mostrar",
    "dir.status.all": "Todos",
    "dir.status.active": "Activos",
    "dir.status.inactive": "Inactivos",
    "dir.counts": "{total}, {active}",
    "dir.total.one": "{n} persona",
    "dir.total.other": "{n} personas",
    "dir.activeCount.one": "{n} activa",
    "dir.activeCount.other": "{n} activas",
    "dir.empty": "Nadie coincide con esta búsqueda.",
    "dir.active": "Activo",
    "dir.inactive": "Inactivo",
    "dir.admin": "Admin",
    "dir.email": "Escribir a {name}",
    "dir.call": "Llamar a {name}",
    "dir.twitter": "{name} en X (Twitter)",
    "dir.linkedin": "{name} en LinkedIn",

    "profile.title": "Mi perfil",
    "profile.details": "Datos",
    "profile.displayName": "Nombre visible",
    "profile.position": "Puesto",
    "profile.phone": "Teléfono",
    "profile.email": "Correo",
    "profile.emailHint": "Solo un administrador puede cambiar tu correo.",
    "profile.twitter": "Usuario de X (Twitter)",
    "profile.linkedin": "Perfil de LinkedIn",
    "profile.bio": "Sobre mí",
    "profile.status": "Estado",
    "profile.statusHint": "Una línea breve que ven tus compañeros, como «En la oficina los martes».",
    "profile.country": "País",
    "profile.language": "Idioma",
    "profile.languageHint": "Los mensajes se te traducen a este idioma.",
    "profile.notifications": "Enviarme notificaciones",
    "profile.save": "Guardar perfil",
    "profile.saved": "Tu perfil se ha guardado.",
    "profile.picture": "Foto",
    "profile.pictureHint": "PNG, JPEG o WebP, como máximo 2 MiB.",
    "profile.upload": "Elegir una foto",
    "profile.uploading": "Subiendo…",
    "profile.uploaded": "Tu nueva foto ya está puesta.",
    "profile.remove": "Quitar la foto",
    "profile.removed": "Se ha quitado tu foto.",
    "profile.tooBig": "El archivo es demasiado grande. El límite es de 2 MiB.",
    "profile.password": "Contraseña",
    "profile.currentPassword": "Contraseña actual",
    "profile.newPassword": "Contraseña nueva",
    "profile.confirmPassword": "Repite la contraseña nueva",
    "profile.changePassword": "Cambiar la contraseña",
    "profile.passwordChanged": "Tu contraseña ha cambiado. Se han cerrado tus otras sesiones.",
    "profile.lastLogin": "Último acceso: {when}",
    "profile.role.admin": "Administrador",
    "profile.role.employee": "Empleado",

    "admin.title": "Usuarios",
    "admin.create": "Crear un usuario",
    "admin.username": "Usuario",
    "admin.email": "Correo",
    "admin.displayName": "Nombre visible",
    "admin.role": "Rol",
    "admin.role.admin": "Administrador",
    "admin.role.employee": "Empleado",
    "admin.password": "Contraseña (opcional)",
    "admin.passwordHint": "Déjala vacía para generar una.",
    "admin.createSubmit": "Crear usuario",
    "admin.created": "Se ha creado a {name}.",
    "admin.generated": "Contraseña de {name}",
    "admin.generatedHint": "Solo se muestra una vez. Cópiala y entrégala de forma segura.",
    "admin.copy": "Copiar",
    "admin.copied": "Copiada.",
    "admin.dismiss": "Hecho",
    "admin.list": "Todos los usuarios",
    "admin.user": "Usuario",
    "admin.state": "Estado",
    "admin.actions": "Acciones",
    "admin.deactivate": "Desactivar",
    "admin.activate": "Reactivar",
    "admin.resetPassword": "Restablecer contraseña",
    "admin.resetConfirm": "¿Dar a {name} una contraseña temporal nueva? Se cerrarán sus sesiones.",
    "admin.deactivateConfirm": "¿Desactivar a {name}? Su sesión se cerrará al momento.",
    "admin.resetDone": "Contraseña temporal de {name}",
    "admin.roleChanged": "{name} ahora es: {role}.",
    "admin.deactivated": "Se ha desactivado a {name}.",
    "admin.activated": "Se ha reactivado a {name}.",
    "admin.you": "tú",
    "admin.edit": "Editar",
    "admin.editTitle": "Editar a {name}",
    "admin.save": "Guardar",
    "admin.cancel": "Cancelar",
    "admin.saved": "Se ha actualizado a {name}.",
    "admin.more": "Mostrar más usuarios",
    "admin.shown": "Se muestran {shown} de {total} usuarios.",
  },
};

/// The languages the console speaks.
export const languages = [["en", "English"], ["es", "Español"]];

const storageKey = "sgem.lang";

function initialLanguage() {
  let saved = null;
  try { saved = localStorage.getItem(storageKey); } catch { /* storage may be disabled */ }
  if (saved && strings[saved]) return saved;
  const preferred = (navigator.languages && navigator.languages[0]) || navigator.language || "en";
  return preferred.toLowerCase().startsWith("es") ? "es" : "en";
}

let current = initialLanguage();
const listeners = new Set();

export function lang() { return current; }

/// Switches the language, remembers it and tells every listener (the shell redraws).
export function setLang(code) {
  if (!strings[code] || code === current) return;
  current = code;
  try { localStorage.setItem(storageKey, code); } catch { /* not remembered, still switched */ }
  document.documentElement.lang = code;
  for (const fn of listeners) fn(code);
}

export function onLangChange(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/// The string for `key` in the current language, with `{name}` placeholders filled.
export function t(key, params = {}) {
  const template = strings[current][key] ?? strings.en[key] ?? key;
  return template.replace(/\{(\w+)\}/g, (m, name) => (name in params ? String(params[name]) : m));
}

/// The plural form of `key` for `n` ("key.one", "key.other"), with `{n}` filled.
export function tn(key, n) {
  const form = new Intl.PluralRules(current).select(n);
  const exact = `${key}.${form}`;
  return t(exact in strings[current] ? exact : `${key}.other`, { n });
}

/// "2 people, 1 active": the directory's counts.
export function counts(total, active) {
  return t("dir.counts", { total: tn("dir.total", total), active: tn("dir.activeCount", active) });
}

/// "in 5 minutes" / "dentro de 5 minutos" for a number of seconds from now.
export function inWords(seconds) {
  const rtf = new Intl.RelativeTimeFormat(current, { numeric: "auto" });
  if (seconds < 90) return rtf.format(Math.max(1, Math.round(seconds)), "second");
  if (seconds < 90 * 60) return rtf.format(Math.ceil(seconds / 60), "minute");
  return rtf.format(Math.ceil(seconds / 3600), "hour");
}

/// A timestamp as a readable local date and time.
export function dateTime(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  return new Intl.DateTimeFormat(current, { dateStyle: "medium", timeStyle: "short" }).format(d);
}

// The server explains field problems in English; these turn the known ones into the reader's
// language. Anything unrecognised is shown as the server wrote it.
const fieldPatterns = [
  [/^is required|^must not be empty/, () => t("field.required")],
  [/^must be at most (\d+) characters/, (m) => t("field.tooLong", { n: m[1] })],
  [/at least 10 characters/, () => t("field.passwordShort")],
  [/^is not your current password/, () => t("field.currentPassword")],
  [/^must be a phone number/, () => t("field.phone")],
  [/^must be a handle/, () => t("field.twitter")],
  [/^must be an https URL/, () => t("field.linkedin")],
  [/^must be an email address/, () => t("field.email")],
  [/^must be 3 to 32/, () => t("field.username")],
  [/^must be 1 to 100 characters/, () => t("field.displayName")],
  [/^must be one line|on one line/, () => t("field.oneLine")],
  [/^must be an ISO 639-1/, () => t("field.language")],
];

export function fieldProblem(message) {
  const text = String(message ?? "");
  for (const [re, make] of fieldPatterns) {
    const m = text.match(re);
    if (m) return make(m);
  }
  return text;
}

document.documentElement.lang = current;
