#!/usr/bin/env python3
"""Browser tests: the real binary on a free loopback port, driven by headless Chromium.

Run by `make test` (through `make test-browser`). Each test gets a fresh data directory and
server. Ends with the line `N passed, N failed`; exits non-zero when any test failed.
"""
import argparse
import datetime
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.error
import urllib.request
import zlib

from axe_selenium_python import Axe
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


class Server:
    """sgem-server on 127.0.0.1 with a temporary data directory."""

    def __init__(self, binary, extra=()):
        self.dir = tempfile.mkdtemp(prefix="sgem-browser-")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc = subprocess.Popen(
            [binary, "serve", "--host", "127.0.0.1", "--port", str(self.port), "--data-dir", self.dir,
             "--log-level", "warning", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # Every stdout line is kept (the first-run setup URL is printed there) by a reader thread.
        self.lines = []
        self.changed = threading.Condition()
        threading.Thread(target=self._read_stdout, daemon=True).start()
        if not self.wait_line(lambda l: "listening on" in l, timeout=20):
            if self.proc.poll() is not None:
                raise RuntimeError("server exited: " + self.proc.stderr.read())
            raise RuntimeError("server did not start: " + "".join(self.lines))
        self.url = f"http://127.0.0.1:{self.port}"

    def _read_stdout(self):
        for line in self.proc.stdout:
            with self.changed:
                self.lines.append(line)
                self.changed.notify_all()
        with self.changed:
            self.changed.notify_all()

    def wait_line(self, predicate, timeout=10):
        """The first stdout line matching `predicate`, waiting for it (None when none comes)."""
        deadline = time.time() + timeout
        with self.changed:
            while True:
                found = next((l for l in self.lines if predicate(l)), None)
                left = deadline - time.time()
                if found or left <= 0 or self.proc.poll() is not None:
                    return found
                self.changed.wait(left)

    def admin(self, *args, stdin=None):
        return subprocess.run([self.binary_path(), "admin", *args, "--data-dir", self.dir],
                              input=stdin, capture_output=True, text=True, timeout=60)

    def binary_path(self):
        return self.proc.args[0]

    def restart(self):
        """Stops the server and starts it again on the same port and data directory."""
        self.proc.terminate()
        self.proc.wait(timeout=15)
        args = self.proc.args
        with self.changed:
            self.lines = []
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        threading.Thread(target=self._read_stdout, daemon=True).start()
        if not self.wait_line(lambda l: "listening on" in l, timeout=20):
            raise RuntimeError("server did not start again: " + "".join(self.lines))

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def browser(lang="en-US"):
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1200,900", f"--lang={lang}", "--no-first-run", "--disable-extensions"):
        options.add_argument(arg)
    options.add_experimental_option("prefs", {"intl.accept_languages": lang})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(shutil.which("chromedriver") or "/usr/bin/chromedriver")
    return webdriver.Chrome(service=service, options=options)


def wait_for(driver, condition, timeout=10):
    # Screens redraw lists wholesale, so an element found a moment ago may be replaced: retry.
    return WebDriverWait(driver, timeout, ignored_exceptions=(NoSuchElementException, StaleElementReferenceException)).until(
        lambda d: condition(d))


def click_when_there(driver, css, timeout=10):
    """Clicks the first element matching `css` once it exists; a redraw between finding and
    clicking (a live update) just means finding it again."""
    def attempt(d):
        found = d.find_elements(By.CSS_SELECTOR, css)
        if not found:
            return False
        found[0].click()
        return True
    wait_for(driver, attempt, timeout)


def severe_logs(driver):
    return [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def script_errors(driver):
    """SEVERE console entries other than the network log of an expected 4xx answer: uncaught
    exceptions, failed module loads, CSP violations."""
    return [e for e in severe_logs(driver) if "Failed to load resource: the server responded with a status of 4" not in e.get("message", "")]


ADMIN_PASSWORD = "correct-horse-battery"


def png_bytes(width=8, height=8, rgb=(220, 60, 40)):
    """A small valid PNG, built by hand so the test needs no imaging library."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def create_admin(server, name="Ada Admin"):
    out = server.admin("create-user", "--username", "admin", "--email", "admin@example.com", "--name", name,
                       "--role", "admin", "--password-stdin", "--password-hash-log-n", "10", stdin=ADMIN_PASSWORD + "\n")
    assert out.returncode == 0, out.stderr
    return name


def login(d, server, username, password):
    """Opens the console, logs in through the form and waits for the shell to show the user."""
    if not d.current_url.startswith(server.url):
        d.get(server.url + "/")
    wait_for(d, lambda d: d.find_elements(By.ID, "login-form"))
    d.find_element(By.ID, "login-name").send_keys(username)
    d.find_element(By.ID, "login-password").send_keys(password)
    d.find_element(By.ID, "login-submit").click()
    # On a phone the name itself is hidden (the picture stays), so read its text content.
    wait_for(d, lambda d: d.find_element(By.ID, "me").is_displayed() and d.find_elements(By.ID, "me-name"))
    return d.find_element(By.ID, "me-name").get_attribute("textContent")


def screen(d, name):
    """Waits until the screen `name` is the one drawn in <main>."""
    try:
        wait_for(d, lambda d: d.find_element(By.ID, "main").get_attribute("data-screen") == name)
    except Exception:
        raise AssertionError(f"not on {name}: {d.current_url} shows {d.find_element(By.ID, 'main').text[:300]!r}")


def shot(d, ctx, name):
    os.makedirs(ctx["shots"], exist_ok=True)
    d.execute_script("window.scrollTo(0, 0)")
    d.save_screenshot(os.path.join(ctx["shots"], name + ".png"))


def fetch_json(d, path):
    """GET an API path with the browser's own session cookie."""
    return d.execute_async_script("""
        const done = arguments[arguments.length - 1];
        fetch(arguments[0], {credentials: 'same-origin'}).then(r => r.json()).then(done, e => done({error: String(e)}));
    """, path)


EMPLOYEE_PASSWORD = "employee-password-1"


def create_employee(server, username="eve", name="Eve Employee"):
    out = server.admin("create-user", "--username", username, "--email", f"{username}@example.com", "--name", name,
                       "--role", "employee", "--password-stdin", "--password-hash-log-n", "10", stdin=EMPLOYEE_PASSWORD + "\n")
    assert out.returncode == 0, out.stderr
    return name


def choose_own_password(d, password):
    """On "Choose your own password" (after logging in with a generated or reset password):
    chooses `password` and waits for Home. Returns it."""
    screen(d, "choose-password")
    d.find_element(By.ID, "pw-new").send_keys(password)
    d.find_element(By.ID, "pw-confirm").send_keys(password)
    d.find_element(By.ID, "pw-submit").click()
    screen(d, "home")
    return password


class Api:
    """The JSON API with a bearer token, to prepare data a test is not about."""

    def __init__(self, server, login_name, password):
        self.base = server.url + "/api/v1"
        self.token = None
        status, session = self.call("POST", "/auth/login", {"login": login_name, "password": password})
        assert status == 200, (status, session)
        self.token = session["token"]
        self.user = session["user"]

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method)
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_header("Authorization", "Bearer " + self.token)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                raw = response.read()
                return response.status, (json.loads(raw) if raw else None)
        except urllib.error.HTTPError as error:
            raw = error.read()
            try:
                return error.code, json.loads(raw)
            except ValueError:
                return error.code, raw.decode(errors="replace")


def active_id(d):
    return d.execute_script("return document.activeElement && document.activeElement.id")


def text_content(el):
    return el.get_attribute("textContent")


def horizontal_overflow(d):
    return d.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth")


@test
def console_loads_under_its_csp_without_errors(ctx):
    d = ctx["browser"]()
    try:
        d.get(ctx["server"].url + "/")
        wait_for(d, lambda d: d.find_elements(By.ID, "login-form"))
        # The module scripts ran (the login screen replaced the loading line), so the CSP
        # allowed our own assets, and nothing was blocked or failed.
        assert d.find_element(By.TAG_NAME, "h1").text == "Log in"
        assert d.title == "Log in · Company console", d.title
        # Logged out, the sections stay hidden.
        assert not d.find_element(By.ID, "sidebar").is_displayed()
        errors = severe_logs(d)
        assert not errors, errors
        shot(d, ctx, "login-desktop")
    finally:
        d.quit()


@test
def csp_blocks_injected_inline_script(ctx):
    d = ctx["browser"]()
    try:
        d.get(ctx["server"].url + "/")
        wait_for(d, lambda d: d.find_elements(By.ID, "login-form"))
        # Inject an inline script the way an XSS would; the CSP must refuse to run it.
        d.execute_script("""
            const s = document.createElement('script');
            s.textContent = 'window.__pwned = true';
            document.body.appendChild(s);
        """)
        seen = []
        wait_for(d, lambda d: seen.extend(d.get_log("browser")) or any(
            "Content Security Policy" in e.get("message", "") for e in seen))
        assert d.execute_script("return window.__pwned === true") is False, "inline script ran despite CSP"
    finally:
        d.quit()


@test
def language_is_the_browsers_before_login_and_follows_the_account_after(ctx):
    server = ctx["server"]
    create_admin(server)
    d = ctx["browser"]("es-ES")
    d.get(server.url + "/")
    wait_for(d, lambda d: d.find_elements(By.ID, "login-form"))
    assert d.find_element(By.TAG_NAME, "h1").text == "Iniciar sesión"
    assert d.find_element(By.TAG_NAME, "html").get_attribute("lang") == "es"
    # A wrong password is explained in Spanish.
    d.find_element(By.ID, "login-name").send_keys("admin")
    d.find_element(By.ID, "login-password").send_keys("not-the-password")
    d.find_element(By.ID, "login-submit").click()
    wait_for(d, lambda d: "no son correctos" in d.find_element(By.CSS_SELECTOR, "#login-form .notice").text)
    d.find_element(By.ID, "login-password").send_keys(ADMIN_PASSWORD)
    d.find_element(By.ID, "login-submit").click()
    # The account has no language of its own (the company's English is only its default): the
    # first login keeps the browser's Spanish and makes it the account's.
    screen(d, "home")
    wait_for(d, lambda d: fetch_json(d, "/api/v1/me").get("language") == "es")
    assert fetch_json(d, "/api/v1/me").get("languageChosen") is True
    assert d.find_element(By.TAG_NAME, "html").get_attribute("lang") == "es"
    assert d.find_element(By.ID, "logout").text == "Cerrar sesión"
    # English, chosen in the top bar: an admin screen (the translation settings) in English…
    Select(d.find_element(By.ID, "lang")).select_by_value("en")
    wait_for(d, lambda d: fetch_json(d, "/api/v1/me").get("language") == "en")
    d.get(server.url + "/#/admin/translation")
    screen(d, "admin-translation")
    wait_for(d, lambda d: d.find_element(By.TAG_NAME, "h1").text == "Translation")
    assert d.find_element(By.ID, "logout").text == "Log out"
    # …and Spanish again, chosen once in the top bar: the account's setting from now on.
    Select(d.find_element(By.ID, "lang")).select_by_value("es")
    wait_for(d, lambda d: d.find_element(By.TAG_NAME, "h1").text == "Traducción")
    wait_for(d, lambda d: fetch_json(d, "/api/v1/me").get("language") == "es")
    nav = [a.text for a in d.find_elements(By.CSS_SELECTOR, "#sidebar a")]
    assert nav[:8] == ["Inicio", "Directorio", "Vacaciones", "Calendario del equipo", "Avisos", "Chat", "Empresa", "Mi perfil"], nav
    assert "Usuarios" in nav and "Solicitudes de vacaciones" in nav, nav
    assert d.find_element(By.ID, "logout").text == "Cerrar sesión"
    shot(d, ctx, "translation-es")
    d.refresh()
    screen(d, "admin-translation")
    wait_for(d, lambda d: d.find_element(By.TAG_NAME, "h1").text == "Traducción")
    # A second browser (a fresh profile, in English) logs in as the same person: Spanish.
    second = ctx["browser"]("en-US")
    second.get(server.url + "/")
    wait_for(second, lambda d: d.find_elements(By.ID, "login-form"))
    assert second.find_element(By.TAG_NAME, "h1").text == "Log in"
    login(second, server, "admin", ADMIN_PASSWORD)
    screen(second, "home")
    wait_for(second, lambda d: d.find_element(By.ID, "logout").text == "Cerrar sesión")
    assert second.find_element(By.TAG_NAME, "html").get_attribute("lang") == "es"
    assert second.find_element(By.TAG_NAME, "h1").text.startswith("Hola, "), second.find_element(By.TAG_NAME, "h1").text
    errors = script_errors(d) + script_errors(second)
    assert not errors, errors


@test
def phone_width_layout_has_no_horizontal_scroll(ctx):
    server = ctx["server"]
    create_admin(server)
    d = ctx["browser"]()
    try:
        d.set_window_size(375, 740)
        d.get(server.url + "/")
        wait_for(d, lambda d: d.find_elements(By.ID, "login-form"))
        assert horizontal_overflow(d) <= 0
        shot(d, ctx, "login-phone")
        login(d, server, "admin", ADMIN_PASSWORD)
        screen(d, "home")
        # On a phone the sections sit behind the menu button.
        assert not d.find_element(By.ID, "sidebar").is_displayed()
        toggle = d.find_element(By.ID, "menu-toggle")
        toggle.click()
        wait_for(d, lambda d: d.find_element(By.ID, "sidebar").is_displayed())
        assert toggle.get_attribute("aria-expanded") == "true"
        shot(d, ctx, "menu-phone")
        d.find_element(By.CSS_SELECTOR, "#sidebar a[href='#/profile']").click()
        screen(d, "profile")
        assert not d.find_element(By.ID, "sidebar").is_displayed(), "the menu stays open after choosing a section"
        d.set_window_size(360, 740)
        for route, name in (("#/profile", "profile"), ("#/admin/users", "admin-users"), ("#/directory", "directory"),
                            ("#/home", "home"), ("#/notices", "notices"), ("#/company", "company"),
                            ("#/admin/settings", "admin-settings"), ("#/admin/audit", "admin-audit"), ("#/person?id=1", "person")):
            d.get(server.url + "/" + route)
            screen(d, name)
            wait_for(d, lambda d: d.find_elements(By.CSS_SELECTOR, "main h2, main .person, main .person-card, main .audit-entry, main .notice.bad"))
            overflow = horizontal_overflow(d)
            assert overflow <= 0, f"{route} is {overflow}px wider than a phone screen"
            shot(d, ctx, f"{name}-phone")
        errors = script_errors(d)
        assert not errors, errors
    finally:
        d.quit()


@test
def login_shows_my_name_and_wrong_password_in_words(ctx):
    server = ctx["server"]
    name = create_admin(server, "Ada Lovelace")
    d = ctx["browser"]()
    try:
        d.get(server.url + "/#/profile")
        wait_for(d, lambda d: d.find_elements(By.ID, "login-form"))
        d.find_element(By.ID, "login-name").send_keys("admin")
        d.find_element(By.ID, "login-password").send_keys("wrong-password-here")
        d.find_element(By.ID, "login-submit").click()
        message = wait_for(d, lambda d: d.find_element(By.CSS_SELECTOR, "#login-form .notice.bad").text or None)
        assert message == "The username, email or password is wrong.", message
        assert "{" not in d.find_element(By.ID, "main").text, "raw JSON on the screen"
        shot(d, ctx, "login-error")
        # Login by email, in another case, lands on the page first asked for.
        d.find_element(By.ID, "login-name").clear()
        shown = login(d, server, "ADMIN@example.com", ADMIN_PASSWORD)
        assert shown == name, shown
        screen(d, "profile")
        assert d.find_element(By.ID, "profile-displayName").get_attribute("value") == name
        # The session survives a reload; logging out ends it.
        d.refresh()
        screen(d, "profile")
        d.find_element(By.ID, "logout").click()
        wait_for(d, lambda d: d.find_elements(By.ID, "login-form"))
        assert d.find_element(By.CSS_SELECTOR, "#login-form .notice").text == "You have logged out."
        assert d.execute_script("return localStorage.getItem('sgem.csrf')") is None
        me = fetch_json(d, "/api/v1/me")
        assert me.get("error", {}).get("code") == "unauthenticated", me
    finally:
        d.quit()


@test
def throttled_login_says_how_long_to_wait_in_words(ctx):
    server = ctx["server"]
    create_admin(server)
    d = ctx["browser"]()
    try:
        d.get(server.url + "/")
        wait_for(d, lambda d: d.find_elements(By.ID, "login-form"))
        # Fail until the server throttles the account (it answers 429 with Retry-After).
        statuses = d.execute_async_script("""
            const done = arguments[arguments.length - 1];
            (async () => {
                const seen = [];
                for (let i = 0; i < 10 && !seen.includes(429); i++) {
                    const r = await fetch('/api/v1/auth/login', {method: 'POST', headers: {'Content-Type': 'application/json'},
                        body: JSON.stringify({login: 'admin', password: 'wrong-password-' + i})});
                    seen.push(r.status);
                }
                return seen;
            })().then(done, e => done(String(e)));
        """)
        assert statuses[-1] == 429 and set(statuses[:-1]) == {401}, statuses
        d.find_element(By.ID, "login-name").send_keys("admin")
        d.find_element(By.ID, "login-password").send_keys(ADMIN_PASSWORD)
        d.find_element(By.ID, "login-submit").click()
        message = wait_for(d, lambda d: d.find_element(By.CSS_SELECTOR, "#login-form .notice.bad").text or None)
        assert re.fullmatch(r"Too many attempts\. Try again in \d+ seconds\.", message), message
        assert not d.find_elements(By.ID, "me-name")
    finally:
        d.quit()


@test
def profile_edit_and_avatar_show_in_directory(ctx):
    server = ctx["server"]
    create_admin(server)
    image = os.path.join(server.dir, "face.png")
    with open(image, "wb") as f:
        f.write(png_bytes())
    d = ctx["browser"]()
    try:
        login(d, server, "admin", ADMIN_PASSWORD)
        d.get(server.url + "/#/profile")
        screen(d, "profile")
        fields = {"displayName": "Grace Hopper", "position": "Rear Admiral", "phone": "+34 600 123 456",
                  "twitter": "@grace_h", "linkedin": "grace-hopper", "status": "In the lab today"}
        for key, value in fields.items():
            el = wait_for(d, lambda d: d.find_element(By.ID, "profile-" + key))
            el.clear()
            el.send_keys(value)
        # A bad phone number is refused next to the field, in words.
        phone = d.find_element(By.ID, "profile-phone")
        phone.clear()
        phone.send_keys("call me maybe")
        d.find_element(By.ID, "profile-save").click()
        problem = wait_for(d, lambda d: d.find_element(By.ID, "profile-phone-error").text or None)
        assert problem == "Use digits, spaces and + ( ) - . only.", problem
        assert phone.get_attribute("aria-invalid") == "true"
        phone.clear()
        phone.send_keys(fields["phone"])
        d.find_element(By.ID, "profile-save").click()
        wait_for(d, lambda d: d.find_element(By.CSS_SELECTOR, "#profile-form .notice.ok").text == "Your profile has been saved.")
        assert not d.find_element(By.ID, "profile-phone-error").is_displayed()
        wait_for(d, lambda d: d.find_element(By.ID, "me-name").text == "Grace Hopper")
        # Upload the picture; the profile shows it at once.
        d.find_element(By.ID, "avatar-file").send_keys(image)
        img = wait_for(d, lambda d: d.find_element(By.CSS_SELECTOR, "#profile-picture img"))
        me = fetch_json(d, "/api/v1/me")
        assert me["avatarUrl"] and me["position"] == "Rear Admiral" and me["twitter"] == "grace_h", me
        assert img.get_attribute("src") == server.url + me["avatarUrl"]
        wait_for(d, lambda d: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth", img) == 8)
        shot(d, ctx, "profile-desktop")
        # The directory shows the same new picture, loaded, and the contact links.
        d.find_element(By.CSS_SELECTOR, "#sidebar a[href='#/directory']").click()
        screen(d, "directory")
        card = wait_for(d, lambda d: d.find_element(By.CSS_SELECTOR, f"#dir-list li[data-user-id='{me['id']}']"))
        pic = card.find_element(By.CSS_SELECTOR, "img.avatar")
        assert pic.get_attribute("src") == server.url + me["avatarUrl"], pic.get_attribute("src")
        wait_for(d, lambda d: d.execute_script("return arguments[0].complete && arguments[0].naturalWidth", pic) > 0)
        assert card.find_element(By.CSS_SELECTOR, "h2").text == "Grace Hopper"
        assert card.find_element(By.CSS_SELECTOR, ".position").text == "Rear Admiral"
        assert card.find_element(By.CSS_SELECTOR, "a.phone").get_attribute("href") == "tel:+34600123456"
        assert card.find_element(By.CSS_SELECTOR, "a.email").get_attribute("href") == "mailto:admin@example.com"
        twitter = card.find_element(By.CSS_SELECTOR, "a.twitter")
        assert twitter.get_attribute("href") == "https://x.com/grace_h"
        assert twitter.get_attribute("rel") == "noopener noreferrer"
        assert card.find_element(By.CSS_SELECTOR, "a.linkedin").get_attribute("href") == "https://www.linkedin.com/in/grace-hopper"
        assert d.find_element(By.ID, "dir-counts").text == "1 person, 1 active"
        shot(d, ctx, "directory-desktop")
        # Change the password: a wrong current one is refused next to its field.
        d.get(server.url + "/#/profile")
        screen(d, "profile")
        wait_for(d, lambda d: d.find_elements(By.ID, "pw-current"))
        d.find_element(By.ID, "pw-current").send_keys("not-my-password")
        d.find_element(By.ID, "pw-new").send_keys("a-brand-new-secret")
        d.find_element(By.ID, "pw-confirm").send_keys("a-brand-new-secret")
        d.find_element(By.ID, "pw-submit").click()
        problem = wait_for(d, lambda d: d.find_element(By.ID, "pw-current-error").text or None)
        assert problem == "This is not your current password.", problem
        d.find_element(By.ID, "pw-current").clear()
        d.find_element(By.ID, "pw-current").send_keys(ADMIN_PASSWORD)
        d.find_element(By.ID, "pw-submit").click()
        wait_for(d, lambda d: d.find_element(By.CSS_SELECTOR, "#password-form .notice.ok").text.startswith("Your password has been changed."))
        assert d.find_element(By.ID, "pw-new").get_attribute("value") == ""
        # Removing the picture falls back to initials everywhere.
        d.get(server.url + "/#/profile")
        screen(d, "profile")
        wait_for(d, lambda d: d.find_element(By.ID, "avatar-remove").is_displayed())
        remove = d.find_element(By.ID, "avatar-remove")
        # Bring it to mid-screen: WebDriver scrolls elements to the top edge, under the sticky bar.
        d.execute_script("arguments[0].scrollIntoView({block: 'center'})", remove)
        remove.click()
        wait_for(d, lambda d: d.find_element(By.CSS_SELECTOR, "#profile-picture .initials").text == "GH")
        assert fetch_json(d, "/api/v1/me")["avatarUrl"] is None
        errors = script_errors(d)
        assert not errors, errors
    finally:
        d.quit()


@test
def admin_creates_a_user_who_then_logs_in(ctx):
    server = ctx["server"]
    create_admin(server)
    d = ctx["browser"]()
    try:
        login(d, server, "admin", ADMIN_PASSWORD)
        d.find_element(By.CSS_SELECTOR, "#sidebar a[href='#/admin/users']").click()
        screen(d, "admin-users")
        wait_for(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#admin-users li[data-username='admin']"))
        # The last admin cannot demote themself; the refusal is in words.
        own = Select(d.find_element(By.CSS_SELECTOR, "#admin-users li[data-username='admin'] select"))
        own.select_by_value("employee")
        message = wait_for(d, lambda d: d.find_element(By.CSS_SELECTOR, "main section .notice.bad").text or None)
        assert message.startswith("The company must keep at least one active administrator"), message
        wait_for(d, lambda d: Select(d.find_element(By.CSS_SELECTOR, "#admin-users li[data-username='admin'] select")).first_selected_option.get_attribute("value") == "admin")
        # Create a user without a password: the generated one is shown once.
        d.find_element(By.ID, "new-username").send_keys("linus")
        d.find_element(By.ID, "new-email").send_keys("linus@example.com")
        d.find_element(By.ID, "new-displayName").send_keys("Linus Torvalds")
        d.find_element(By.ID, "new-submit").click()
        secret = wait_for(d, lambda d: d.find_element(By.ID, "secret-password").get_attribute("value") or None)
        assert len(secret) >= 10, secret
        wait_for(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#admin-users li[data-username='linus']"))
        assert d.find_element(By.ID, "admin-counts").text == "2 people, 2 active"
        # Creating the same username again is refused next to the field.
        d.find_element(By.ID, "new-username").send_keys("linus")
        d.find_element(By.ID, "new-email").send_keys("other@example.com")
        d.find_element(By.ID, "new-submit").click()
        taken = wait_for(d, lambda d: d.find_element(By.ID, "new-username-error").text or None)
        assert taken == "That username is already taken.", taken
        shot(d, ctx, "admin-users-desktop")
        # Reset the password: a new temporary one replaces the first, shown once.
        d.find_element(By.CSS_SELECTOR, "#admin-users li[data-username='linus'] button[data-action='reset']").click()
        wait_for(d, lambda d: d.find_element(By.CSS_SELECTOR, "#admin-users li[data-username='linus'] button[data-action='reset-yes']")).click()
        wait_for(d, lambda d: d.find_element(By.ID, "secret-title").text == "Temporary password for Linus Torvalds")
        first, secret = secret, d.find_element(By.ID, "secret-password").get_attribute("value")
        assert len(secret) >= 10 and secret != first, (first, secret)
        # Deactivate (after confirming) and reactivate: the row and the message follow.
        row = "#admin-users li[data-username='linus']"
        d.find_element(By.CSS_SELECTOR, row + " button[data-action='deactivate']").click()
        # The question shows in the row, no browser dialog; "Cancel" keeps the account.
        assert d.find_element(By.CSS_SELECTOR, row + " .confirm-question").text == "Deactivate Linus Torvalds? They will be logged out at once."
        d.find_element(By.CSS_SELECTOR, row + " button[data-action='deactivate-no']").click()
        assert d.find_element(By.CSS_SELECTOR, row + " .badge").text == "Active"
        d.find_element(By.CSS_SELECTOR, row + " button[data-action='deactivate']").click()
        d.find_element(By.CSS_SELECTOR, row + " button[data-action='deactivate-yes']").click()
        wait_for(d, lambda d: d.find_element(By.CSS_SELECTOR, row + " .badge").text == "Inactive")
        assert d.find_element(By.CSS_SELECTOR, "main section .notice.ok").text == "Linus Torvalds has been deactivated."
        assert d.find_element(By.ID, "admin-counts").text == "2 people, 1 active"
        d.find_element(By.CSS_SELECTOR, row + " button[data-action='activate']").click()
        wait_for(d, lambda d: d.find_element(By.CSS_SELECTOR, row + " .badge").text == "Active")
        # Edit the user's details inline; only changed fields are sent, the list redraws.
        d.find_element(By.CSS_SELECTOR, row + " button[data-action='edit']").click()
        position = wait_for(d, lambda d: d.find_element(By.CSS_SELECTOR, row + " form input[data-field='position']"))
        position.clear()
        position.send_keys("Kernel maintainer")
        os.makedirs(ctx["shots"], exist_ok=True)
        d.find_element(By.CSS_SELECTOR, row).screenshot(os.path.join(ctx["shots"], "admin-edit-row.png"))
        d.find_element(By.CSS_SELECTOR, row + " form button[data-action='save']").click()
        wait_for(d, lambda d: d.find_element(By.CSS_SELECTOR, "main section .notice.ok").text == "Linus Torvalds has been updated.")
        assert not d.find_elements(By.CSS_SELECTOR, row + " form"), "the edit form closes after saving"
        # The directory finds the new colleague by a prefix of a name word, and filters by status.
        d.find_element(By.CSS_SELECTOR, "#sidebar a[href='#/directory']").click()
        screen(d, "directory")
        wait_for(d, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#dir-list .person")) == 2)
        d.find_element(By.ID, "dir-search").send_keys("torv")
        wait_for(d, lambda d: [e.text for e in d.find_elements(By.CSS_SELECTOR, "#dir-list .person h2")] == ["Linus Torvalds"])
        assert "Kernel maintainer" in d.find_element(By.CSS_SELECTOR, "#dir-list .person").text, "edited position shows in the directory"
        Select(d.find_element(By.ID, "dir-status")).select_by_value("inactive")
        wait_for(d, lambda d: d.find_element(By.CSS_SELECTOR, "#dir-list .empty").text == "Nobody matches this search.")
        assert d.find_element(By.ID, "dir-counts").text == "2 people, 2 active"
        d.find_element(By.ID, "logout").click()
        wait_for(d, lambda d: d.find_elements(By.ID, "login-form"))
        shown = login(d, server, "linus", secret)
        assert shown == "Linus Torvalds", shown
        # The reset password is not his own: he chooses one first, then lands on Home.
        secret = choose_own_password(d, "linus own password")
        # An employee sees no administration.
        assert not d.find_elements(By.CSS_SELECTOR, "#sidebar a[href='#/admin/users']")
        d.get(server.url + "/#/admin/users")
        wait_for(d, lambda d: d.find_element(By.TAG_NAME, "h1").text == "There is no such page.")
        # Deactivated from the command line while logged in: the next request ends the session
        # and the console says why; logging in again is refused in words.
        out = server.admin("deactivate", "linus")
        assert out.returncode == 0, out.stderr
        d.find_element(By.CSS_SELECTOR, "#sidebar a[href='#/profile']").click()
        wait_for(d, lambda d: d.find_elements(By.ID, "login-form"))
        assert d.find_element(By.CSS_SELECTOR, "#login-form .notice").text == "Your session has ended. Please log in again."
        d.find_element(By.ID, "login-name").send_keys("linus")
        d.find_element(By.ID, "login-password").send_keys(secret)
        d.find_element(By.ID, "login-submit").click()
        message = wait_for(d, lambda d: d.find_element(By.CSS_SELECTOR, "#login-form .notice.bad").text or None)
        assert message == "This account has been deactivated. Ask an administrator to reactivate it.", message
        errors = script_errors(d)
        assert not errors, errors
    finally:
        d.quit()


@test
def a_reset_person_chooses_their_own_password_first_and_the_login_screen_says_whom_to_ask(ctx):
    server = ctx["server"]
    create_admin(server)
    create_employee(server)
    out = server.admin("reset-password", "eve", "--random-password")
    assert out.returncode == 0, out.stderr
    temporary = re.search(r"^password: (\S+)$", out.stdout, re.M).group(1)
    d = ctx["browser"]()
    d.get(server.url + "/")
    # No e-mail: the login screen names an admin to ask (a display name, never a login).
    wait_for(d, lambda d: d.find_element(By.ID, "login-forgot").text == "Forgot your password? Ask an admin to reset it: Ada Admin.")
    login(d, server, "eve", temporary)
    screen(d, "choose-password")
    assert d.find_element(By.TAG_NAME, "h1").text == "Choose your own password"
    assert not d.find_element(By.ID, "pw-current").is_displayed(), "the temporary password just typed is not asked again"
    assert not d.find_element(By.ID, "sidebar").is_displayed(), "nothing else to go to yet"
    # Any other address comes back here.
    d.get(server.url + "/#/directory")
    screen(d, "choose-password")
    problems = axe_problems(d, "choose your own password")
    assert not problems, problems
    # On a phone: no menu to open (nothing else to go to), nothing wider than the screen.
    d.set_window_size(390, 844)
    wait_for(d, lambda d: horizontal_overflow(d) <= 0)
    assert not d.find_element(By.ID, "menu-toggle").is_displayed()
    assert d.find_element(By.ID, "logout").is_displayed(), "logging out stays possible"
    # After a reload the console no longer knows the temporary password: it asks for it.
    d.refresh()
    screen(d, "choose-password")
    wait_for(d, lambda d: d.find_element(By.ID, "pw-current").is_displayed())
    d.find_element(By.ID, "pw-current").send_keys(temporary)
    d.find_element(By.ID, "pw-new").send_keys("my own password")
    d.find_element(By.ID, "pw-confirm").send_keys("my own typo")
    d.find_element(By.ID, "pw-submit").click()
    wait_for(d, lambda d: d.find_element(By.ID, "pw-confirm-error").is_displayed())
    confirm = d.find_element(By.ID, "pw-confirm")
    confirm.clear()
    confirm.send_keys("my own password")
    d.find_element(By.ID, "pw-submit").click()
    screen(d, "home")
    assert d.find_element(By.ID, "menu-toggle").is_displayed(), "the menu is back"
    me = fetch_json(d, "/api/v1/me")
    assert me.get("mustChangePassword") is False, me
    # The new password is the one that logs in now.
    Api(server, "eve", "my own password")
    errors = script_errors(d)
    assert not errors, errors


@test
def a_spanish_browsers_first_login_keeps_spanish_and_the_admin_offers_languages(ctx):
    server = ctx["server"]
    create_admin(server)
    api = Api(server, "admin", ADMIN_PASSWORD)
    # Ana has no language of her own: the company's (English) is only her default.
    status, created = api.call("POST", "/admin/users", {"username": "ana", "email": "ana@example.com", "displayName": "Ana Ruiz",
                                                       "password": "password-of-ana"})
    assert status == 201 and created["user"]["language"] == "en", (status, created)
    d = ctx["browser"]("es-ES")
    d.get(server.url + "/")
    wait_for(d, lambda d: d.find_element(By.ID, "login-forgot").text
             == "¿Has olvidado tu contraseña? Pide a un administrador que la restablezca: Ada Admin.")
    login(d, server, "ana", "password-of-ana")
    screen(d, "home")
    wait_for(d, lambda d: fetch_json(d, "/api/v1/me").get("language") == "es")
    assert d.find_element(By.TAG_NAME, "html").get_attribute("lang") == "es"
    assert d.find_element(By.ID, "logout").text == "Cerrar sesión"
    # Her profile offers what the console speaks first, and says the rest stays in English.
    d.get(server.url + "/#/profile")
    screen(d, "profile")
    groups = [g.get_attribute("label") for g in d.find_elements(By.CSS_SELECTOR, "#profile-language optgroup")]
    assert groups == ["La consola lo habla", "Mensajes traducidos; las pantallas siguen en inglés"], groups
    assert Select(d.find_element(By.ID, "profile-language")).first_selected_option.get_attribute("value") == "es"
    assert "las pantallas siguen en inglés" in d.find_element(By.ID, "profile-language-hint").text
    # An admin creating someone may give a language; left alone, the browser's is taken at the first login.
    admin = ctx["browser"]()
    login(admin, server, "admin", ADMIN_PASSWORD)
    admin.get(server.url + "/#/admin/users")
    screen(admin, "admin-users")
    language = Select(admin.find_element(By.ID, "new-language"))
    assert language.first_selected_option.text == "Their browser's, at the first login"
    admin.find_element(By.ID, "new-username").send_keys("luis")
    admin.find_element(By.ID, "new-email").send_keys("luis@example.com")
    language.select_by_value("es")
    admin.find_element(By.ID, "new-submit").click()
    wait_for(admin, lambda d: d.find_elements(By.CSS_SELECTOR, "#admin-users li[data-username='luis']"))
    status, users = api.call("GET", "/users?q=luis")
    assert status == 200 and users["items"][0]["language"] == "es", users
    errors = script_errors(d) + script_errors(admin)
    assert not errors, errors


@test
def first_run_through_the_setup_link(ctx):
    server = ctx["server"]
    line = server.wait_line(lambda l: "/setup#token=" in l, timeout=10)
    assert line, "the server printed no setup link: " + "".join(server.lines)
    token = re.search(r"/setup#token=(\S+)", line).group(1)
    link = server.url + "/setup#token=" + token
    d = ctx["browser"]()
    d.get(link)
    wait_for(d, lambda d: d.find_elements(By.ID, "setup-form"))
    # The token is read, then taken out of the address bar.
    assert d.current_url == server.url + "/setup", d.current_url
    assert d.find_element(By.TAG_NAME, "h1").text == "Create the first administrator"
    problems = axe_problems(d, "setup form")
    assert not problems, "\n".join(problems)
    d.find_element(By.ID, "setup-username").send_keys("boss")
    d.find_element(By.ID, "setup-email").send_keys("boss@example.com")
    d.find_element(By.ID, "setup-displayName").send_keys("Bea Boss")
    d.find_element(By.ID, "setup-password").send_keys("short")
    d.find_element(By.ID, "setup-submit").click()
    problem = wait_for(d, lambda d: d.find_element(By.ID, "setup-password-error").text or None)
    assert problem == "At least 10 characters.", problem
    assert active_id(d) == "setup-password", active_id(d)
    # Changing the field clears its problem.
    d.find_element(By.ID, "setup-password").send_keys("-and-now-long-enough")
    assert not d.find_element(By.ID, "setup-password-error").is_displayed()
    shot(d, ctx, "setup")
    d.find_element(By.ID, "setup-submit").click()
    # Logged in at once, on Home, at the console's usual address.
    screen(d, "home")
    assert d.current_url == server.url + "/#/home", d.current_url
    assert d.find_element(By.ID, "me-name").get_attribute("textContent") == "Bea Boss"
    steps = wait_for(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#home-checklist li.step"))
    assert [s.get_attribute("data-done") for s in steps] == ["false", "false", "false", "false"]
    assert "Fill in the company profile" in steps[0].text
    shot(d, ctx, "home-checklist")
    me = fetch_json(d, "/api/v1/me")
    assert me["role"] == "admin" and me["username"] == "boss", me
    # The link works once: opened again it says so, with a way to log in.
    d.get(link)
    wait_for(d, lambda d: d.find_elements(By.ID, "setup-closed"))
    assert d.find_element(By.TAG_NAME, "h1").text == "This server is already set up"
    assert d.find_element(By.ID, "setup-login").get_attribute("href") == server.url + "/#/login"
    assert fetch_json(d, "/api/v1/auth/setup") == {"open": False}
    errors = script_errors(d)
    assert not errors, errors


@test
def an_admin_invites_someone_who_signs_up_by_the_link_in_another_browser(ctx):
    server = ctx["server"]
    create_admin(server)
    api = Api(server, "admin", ADMIN_PASSWORD)
    status, _ = api.call("PUT", "/admin/company", {"name": "Acme Ltd"})
    assert status == 200, status
    d = ctx["browser"]()
    login(d, server, "admin", ADMIN_PASSWORD)
    d.find_element(By.CSS_SELECTOR, "#sidebar a[href='#/admin/users']").click()
    screen(d, "admin-users")
    wait_for(d, lambda d: d.find_element(By.ID, "invite-none").is_displayed())
    # Out of the limits: said next to the field, nothing made.
    days = d.find_element(By.ID, "invite-days")
    days.clear()
    days.send_keys("45")
    d.find_element(By.ID, "invite-submit").click()
    problem = wait_for(d, lambda d: d.find_element(By.ID, "invite-days-error").text or None)
    assert problem == "A whole number from 1 to 30.", problem
    days.clear()
    days.send_keys("3")
    d.find_element(By.ID, "invite-note").send_keys("Marta, new in sales")
    d.find_element(By.ID, "invite-submit").click()
    url = wait_for(d, lambda d: d.find_element(By.ID, "invite-url").get_attribute("value") or None)
    assert url.startswith(server.url + "/join#invite="), url
    assert d.find_element(By.ID, "invite-link-title").text == "Your invitation link: copy it now, it is shown only once"
    row = wait_for(d, lambda d: d.find_element(By.CSS_SELECTOR, "#invite-list li.invite-row"))
    assert "Marta, new in sales" in row.text and "0 of 1 used" in row.text, row.text
    problems = axe_problems(d, "users screen with an invitation link")
    assert not problems, "\n".join(problems)
    shot(d, ctx, "admin-invites")
    # On a phone the link, its copy button and the list fit the width.
    d.set_window_size(390, 844)
    assert horizontal_overflow(d) <= 0, horizontal_overflow(d)
    d.find_element(By.ID, "invites").screenshot(os.path.join(ctx["shots"], "admin-invites-phone.png"))
    d.set_window_size(1200, 900)

    # The invited person, on a Spanish phone: the company's name, the role, the browser's language.
    e = ctx["browser"]("es-ES")
    e.set_window_size(390, 844)
    e.get(url)
    screen(e, "join")
    assert e.current_url == server.url + "/#/join", "the token leaves the address bar: " + e.current_url
    wait_for(e, lambda e: e.find_element(By.ID, "join-title").text == "Te han invitado a unirte a Acme Ltd")
    assert e.find_element(By.ID, "join-role").text == "Tu cuenta será de empleado."
    assert Select(e.find_element(By.ID, "join-language")).first_selected_option.get_attribute("value") == "es"
    assert horizontal_overflow(e) <= 0, horizontal_overflow(e)
    problems = axe_problems(e, "join (invitation, es, phone)")
    assert not problems, "\n".join(problems)
    e.find_element(By.ID, "join-displayName").send_keys("Marta García")
    e.find_element(By.ID, "join-username").send_keys("marta")
    e.find_element(By.ID, "join-email").send_keys("marta@example.com")
    e.find_element(By.ID, "join-password").send_keys("marta's own password")
    e.find_element(By.ID, "join-confirm").send_keys("marta's own passwort")
    e.find_element(By.ID, "join-submit").click()
    mismatch = wait_for(e, lambda e: e.find_element(By.ID, "join-confirm-error").text or None)
    assert mismatch == "Las dos contraseñas no coinciden.", mismatch
    e.find_element(By.ID, "join-confirm").clear()
    e.find_element(By.ID, "join-confirm").send_keys("marta's own password")
    shot(e, ctx, "join-phone-es")
    e.find_element(By.ID, "join-submit").click()
    screen(e, "home")
    assert e.find_element(By.ID, "me-name").get_attribute("textContent") == "Marta García"
    me = fetch_json(e, "/api/v1/me")
    assert me["role"] == "employee" and me["language"] == "es" and me["mustChangePassword"] is False, me

    # Used up: gone from the live list; opened again, the link says so in words.
    d.refresh()
    screen(d, "admin-users")
    wait_for(d, lambda d: d.find_element(By.ID, "invite-none").is_displayed())
    f = ctx["browser"]()
    f.get(url)
    wait_for(f, lambda f: f.find_elements(By.ID, "join-invalid"))
    assert f.find_element(By.ID, "join-invalid-title").text == "This invitation link does not work"

    # A second link, revoked after an inline confirmation, stops working at once.
    d.find_element(By.ID, "invite-submit").click()
    second = wait_for(d, lambda d: (d.find_element(By.ID, "invite-url").get_attribute("value") or "") != url
                      and d.find_element(By.ID, "invite-url").get_attribute("value"))
    click_when_there(d, "#invite-list li.invite-row button[data-action='revoke-invite']")
    question = d.find_element(By.CSS_SELECTOR, "#invite-list li.invite-row .confirm-question")
    assert question.text == "Revoke this link? Nobody can use it after this.", question.text
    d.find_element(By.CSS_SELECTOR, "#invite-list li.invite-row button[data-action='revoke-invite-yes']").click()
    wait_for(d, lambda d: d.find_element(By.ID, "invite-none").is_displayed())
    f.get(second)
    wait_for(f, lambda f: f.find_elements(By.ID, "join-invalid"))
    errors = script_errors(d) + script_errors(e) + script_errors(f)
    assert not errors, errors


@test
def the_login_screen_offers_sign_up_to_the_companys_domain(ctx):
    server = ctx["server"]
    create_admin(server)
    api = Api(server, "admin", ADMIN_PASSWORD)
    status, _ = api.call("PUT", "/admin/settings", {"registration": "domain", "registrationDomain": "acme.test"})
    assert status == 200, status
    d = ctx["browser"]()
    d.get(server.url + "/")
    offer = wait_for(d, lambda d: d.find_element(By.ID, "login-signup") if d.find_element(By.ID, "login-signup").is_displayed() else None)
    assert offer.text == "New here? Anyone with an @acme.test address can create an account. Create an account", offer.text
    d.find_element(By.ID, "login-create-account").click()
    screen(d, "join")
    assert d.find_element(By.ID, "join-domain").text == "Anyone with an email address at acme.test can create an account here."
    problems = axe_problems(d, "join (domain only)")
    assert not problems, "\n".join(problems)
    d.find_element(By.ID, "join-displayName").send_keys("Olga Outsider")
    d.find_element(By.ID, "join-username").send_keys("olga")
    d.find_element(By.ID, "join-email").send_keys("olga@elsewhere.test")
    d.find_element(By.ID, "join-password").send_keys("olga's long password")
    d.find_element(By.ID, "join-confirm").send_keys("olga's long password")
    d.find_element(By.ID, "join-submit").click()
    problem = wait_for(d, lambda d: d.find_element(By.ID, "join-email-error").text or None)
    assert problem == "Use your address ending in @acme.test.", problem
    email = d.find_element(By.ID, "join-email")
    email.clear()
    email.send_keys("olga@acme.test")
    d.find_element(By.ID, "join-submit").click()
    screen(d, "home")
    assert d.find_element(By.ID, "me-name").get_attribute("textContent") == "Olga Outsider"
    # Closed again: the sign-up screen says how to get in instead.
    status, _ = api.call("PUT", "/admin/settings", {"registration": "closed"})
    assert status == 200, status
    e = ctx["browser"]()
    e.get(server.url + "/#/join")
    wait_for(e, lambda e: e.find_elements(By.ID, "join-closed"))
    assert e.find_element(By.ID, "join-closed-title").text == "Sign-up is closed"
    problems = axe_problems(e, "join (closed)")
    assert not problems, "\n".join(problems)
    errors = script_errors(d) + script_errors(e)
    assert not errors, errors


@test
def admin_fills_the_company_profile_and_changes_a_setting(ctx):
    server = ctx["server"]
    create_admin(server)
    d = ctx["browser"]()
    login(d, server, "admin", ADMIN_PASSWORD)
    screen(d, "home")
    step = wait_for(d, lambda d: d.find_element(By.CSS_SELECTOR, "#home-checklist li[data-step='company']"))
    assert step.get_attribute("data-done") == "false"
    step.find_element(By.TAG_NAME, "a").click()
    screen(d, "company")
    wait_for(d, lambda d: d.find_element(By.ID, "company-edit")).click()
    values = {"name": "Acme Ibérica", "phone": "+34 910 000 000", "email": "not-an-email", "website": "acme.example"}
    for key, value in values.items():
        el = d.find_element(By.ID, "company-edit-" + key)
        el.clear()
        el.send_keys(value)
    d.find_element(By.ID, "company-edit-address").send_keys("Calle Mayor 1\n28013 Madrid")
    d.find_element(By.ID, "company-save").click()
    # The server's 422 shows next to the field, which gets the focus; typing clears it.
    wait_for(d, lambda d: d.find_element(By.ID, "company-edit-email-error").is_displayed())
    assert active_id(d) == "company-edit-email", active_id(d)
    assert d.find_element(By.ID, "company-edit-email").get_attribute("aria-invalid") == "true"
    email = d.find_element(By.ID, "company-edit-email")
    email.clear()
    email.send_keys("hola@acme.example")
    assert not d.find_element(By.ID, "company-edit-email-error").is_displayed()
    d.find_element(By.ID, "company-save").click()
    wait_for(d, lambda d: d.find_element(By.ID, "company-status").text == "The company profile has been saved.")
    assert d.find_element(By.ID, "company-name").text == "Acme Ibérica"
    assert d.find_element(By.ID, "company-phone").get_attribute("href") == "tel:+34910000000"
    assert d.find_element(By.ID, "company-email").get_attribute("href") == "mailto:hola@acme.example"
    site = d.find_element(By.ID, "company-website")
    assert site.get_attribute("href") == "https://acme.example/" and site.get_attribute("rel") == "noopener noreferrer"
    assert text_content(d.find_element(By.ID, "company-address")) == "Calle Mayor 1\n28013 Madrid"
    shot(d, ctx, "company")
    # Settings: Saturday becomes a working day, registration opens to our domain.
    d.get(server.url + "/#/admin/settings")
    screen(d, "admin-settings")
    saturday = wait_for(d, lambda d: d.find_element(By.ID, "settings-day-6"))
    assert not saturday.is_selected() and d.find_element(By.ID, "settings-day-1").is_selected()
    saturday.click()
    assert not d.find_element(By.ID, "settings-registrationDomain").is_displayed()
    Select(d.find_element(By.ID, "settings-registration")).select_by_value("domain")
    d.find_element(By.ID, "settings-registrationDomain").send_keys("acme.example")
    zone = d.find_element(By.ID, "settings-timeZone")
    zone.clear()
    zone.send_keys("Mars/Olympus_Mons")
    d.find_element(By.ID, "settings-save").click()
    wait_for(d, lambda d: d.find_element(By.ID, "settings-timeZone-error").is_displayed())
    assert active_id(d) == "settings-timeZone", active_id(d)
    zone.clear()
    zone.send_keys("Europe/Madrid")
    assert not d.find_element(By.ID, "settings-timeZone-error").is_displayed()
    d.find_element(By.ID, "settings-save").click()
    wait_for(d, lambda d: d.find_element(By.ID, "settings-status").text == "The settings have been saved.")
    shot(d, ctx, "settings")
    settings = fetch_json(d, "/api/v1/admin/settings")
    assert settings["workingDays"] == [1, 2, 3, 4, 5, 6], settings
    assert settings["registration"] == "domain" and settings["registrationDomain"] == "acme.example", settings
    assert settings["timeZone"] == "Europe/Madrid" and settings["updatedAt"], settings
    d.refresh()
    screen(d, "admin-settings")
    assert wait_for(d, lambda d: d.find_element(By.ID, "settings-day-6")).is_selected()
    assert d.find_element(By.ID, "settings-registrationDomain").get_attribute("value") == "acme.example"
    # Home ticks the two steps done.
    d.get(server.url + "/#/home")
    screen(d, "home")
    wait_for(d, lambda d: d.find_element(By.CSS_SELECTOR, "#home-checklist li[data-step='company']").get_attribute("data-done") == "true")
    assert d.find_element(By.CSS_SELECTOR, "#home-checklist li[data-step='settings']").get_attribute("data-done") == "true"
    assert d.find_element(By.CSS_SELECTOR, "#home-checklist li[data-step='team']").get_attribute("data-done") == "false"
    errors = script_errors(d)
    assert not errors, errors


@test
def a_notice_posted_by_an_admin_is_badged_read_and_counted(ctx):
    server = ctx["server"]
    create_admin(server)
    create_employee(server)
    admin = ctx["browser"]()
    login(admin, server, "admin", ADMIN_PASSWORD)
    admin.get(server.url + "/#/notices")
    screen(admin, "notices")
    title = "Office closed on Friday"
    wait_for(admin, lambda d: d.find_element(By.ID, "notice-compose")).click()
    admin.find_element(By.ID, "notice-new-title").send_keys(title)
    admin.find_element(By.ID, "notice-new-body").send_keys("Line one\nThe plan: https://example.com/plan. Thanks\n<b>not bold</b>")
    admin.find_element(By.ID, "notice-new-pinned").click()
    admin.find_element(By.ID, "notice-new-submit").click()
    wait_for(admin, lambda d: d.find_element(By.ID, "notices-status").text == "Your notice has been posted.")
    item = wait_for(admin, lambda d: d.find_element(By.CSS_SELECTOR, "#notices-list li.notice-item"))
    assert item.find_element(By.CSS_SELECTOR, ".notice-title").text == title
    assert re.fullmatch(r"Read by 0 of [1-9]\d*", item.find_element(By.CSS_SELECTOR, ".read-by").text), item.text

    employee = ctx["browser"]()
    login(employee, server, "eve", EMPLOYEE_PASSWORD)
    screen(employee, "home")
    badge = wait_for(employee, lambda d: d.find_element(By.CSS_SELECTOR, "#sidebar a[data-page='notices'] #nav-unread"))
    assert text_content(badge.find_element(By.CSS_SELECTOR, ".sr-only")) == ", 1 unread"
    pinned = wait_for(employee, lambda d: d.find_element(By.CSS_SELECTOR, "#home-pinned li.notice-item"))
    assert pinned.find_element(By.CSS_SELECTOR, ".badge.unread").text == "New"
    assert not employee.find_elements(By.ID, "home-checklist"), "only admins get the first steps"
    shot(employee, ctx, "home-employee")
    pinned.find_element(By.CSS_SELECTOR, ".notice-title a").click()
    screen(employee, "notices")
    body = wait_for(employee, lambda d: d.find_element(By.CSS_SELECTOR, "#notice .notice-body"))
    assert text_content(body) == "Line one\nThe plan: https://example.com/plan. Thanks\n<b>not bold</b>"
    assert not body.find_elements(By.TAG_NAME, "b"), "a notice body is never HTML"
    links = body.find_elements(By.TAG_NAME, "a")
    assert [a.get_attribute("href") for a in links] == ["https://example.com/plan"], [a.get_attribute("href") for a in links]
    assert links[0].get_attribute("rel") == "noopener noreferrer"
    assert not employee.find_elements(By.ID, "notice-edit"), "employees do not edit notices"
    # Opening it read it: the badge goes.
    wait_for(employee, lambda d: not d.find_elements(By.ID, "nav-unread"))
    shot(employee, ctx, "notice-employee")

    admin.refresh()
    screen(admin, "notices")
    wait_for(admin, lambda d: re.fullmatch(r"Read by 1 of [1-9]\d*", d.find_element(By.CSS_SELECTOR, "#notices-list .read-by").text))
    # Edit, then delete (after confirming).
    admin.find_element(By.CSS_SELECTOR, "#notices-list .notice-title a").click()
    wait_for(admin, lambda d: d.find_element(By.ID, "notice-edit")).click()
    edited = wait_for(admin, lambda d: d.find_element(By.ID, "notice-edit-form-title"))
    edited.clear()
    edited.send_keys("Office closed on Friday afternoon")
    admin.find_element(By.ID, "notice-edit-form-submit").click()
    wait_for(admin, lambda d: d.find_element(By.CSS_SELECTOR, "#notice h1").text == "Office closed on Friday afternoon")
    admin.find_element(By.ID, "notice-delete").click()
    wait_for(admin, lambda d: d.find_element(By.ID, "notice-delete-yes")).click()
    wait_for(admin, lambda d: d.find_element(By.CSS_SELECTOR, "#notices-list .empty").text == "There are no notices yet.")
    # Twenty at a time, newest first; "Show older notices" brings the rest, then goes away.
    api = Api(server, "admin", ADMIN_PASSWORD)
    for i in range(23):
        assert api.call("POST", "/admin/notices", {"title": f"Notice {i:02d}", "body": "Text"})[0] == 201
    admin.refresh()
    screen(admin, "notices")
    titles = lambda: [e.text for e in admin.find_elements(By.CSS_SELECTOR, "#notices-list .notice-title")]
    wait_for(admin, lambda d: len(titles()) == 20)
    assert titles()[:2] == ["Notice 22", "Notice 21"], titles()
    admin.find_element(By.ID, "notices-older").click()
    wait_for(admin, lambda d: len(titles()) == 23)
    assert titles()[-1] == "Notice 00" and len(set(titles())) == 23, titles()
    wait_for(admin, lambda d: not d.find_element(By.ID, "notices-older").is_displayed())
    errors = script_errors(admin) + script_errors(employee)
    assert not errors, errors


@test
def person_page_shows_a_colleague_and_an_admin_edits_them(ctx):
    server = ctx["server"]
    create_admin(server)
    create_employee(server)
    image = os.path.join(server.dir, "eve.png")
    with open(image, "wb") as f:
        f.write(png_bytes(rgb=(30, 120, 200)))
    d = ctx["browser"]()
    login(d, server, "admin", ADMIN_PASSWORD)
    d.get(server.url + "/#/directory")
    screen(d, "directory")
    assert d.find_element(By.ID, "dir-status").is_displayed(), "admins keep the status filter"
    wait_for(d, lambda d: d.find_element(By.XPATH, "//a[contains(@class,'person-link') and text()='Eve Employee']")).click()
    screen(d, "person")
    wait_for(d, lambda d: d.find_element(By.ID, "person-name").text == "Eve Employee")
    assert d.find_element(By.ID, "person-role").text == "Employee"
    assert d.find_element(By.ID, "person-active").text == "Active"
    d.find_element(By.ID, "person-edit").click()
    position = wait_for(d, lambda d: d.find_element(By.ID, "person-edit-position"))
    position.send_keys("Lead designer")
    d.find_element(By.ID, "person-edit-bio").send_keys("Loves type.\nRides bikes.")
    d.find_element(By.ID, "person-avatar-file").send_keys(image)
    wait_for(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#person-picture img"))
    shot(d, ctx, "person-edit")
    save = d.find_element(By.ID, "person-save")
    d.execute_script("arguments[0].scrollIntoView({block: 'center'})", save)
    save.click()
    wait_for(d, lambda d: d.find_element(By.ID, "person-position").text == "Lead designer")
    assert d.find_element(By.ID, "person-status").text == "Eve Employee has been updated."
    assert text_content(d.find_element(By.ID, "person-bio")) == "Loves type.\nRides bikes."
    eve = fetch_json(d, "/api/v1/users/" + d.execute_script("return new URLSearchParams(location.hash.split('?')[1]).get('id')"))
    assert eve["position"] == "Lead designer" and eve["avatarUrl"], eve
    # An employee opens colleagues too, sees no status filter and cannot edit.
    e = ctx["browser"]()
    login(e, server, "eve", EMPLOYEE_PASSWORD)
    e.get(server.url + "/#/directory")
    screen(e, "directory")
    wait_for(e, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#dir-list .person")) == 2)
    assert not e.find_elements(By.ID, "dir-status") or not e.find_element(By.ID, "dir-status").is_displayed()
    e.find_element(By.XPATH, "//a[contains(@class,'person-link') and text()='Eve Employee']").click()
    screen(e, "person")
    wait_for(e, lambda d: d.find_element(By.ID, "person-position").text == "Lead designer")
    assert not e.find_elements(By.ID, "person-edit")
    assert not e.find_elements(By.ID, "person-role"), "the role is for admins to see"
    shot(e, ctx, "person-employee")
    errors = script_errors(d) + script_errors(e)
    assert not errors, errors


@test
def audit_log_pages_back_and_filters_by_event_and_person(ctx):
    server = ctx["server"]
    create_admin(server)
    api = Api(server, "admin", ADMIN_PASSWORD)
    for i in range(55):
        status, created = api.call("POST", "/admin/users", {"username": f"user{i:02d}", "email": f"user{i:02d}@example.com",
                                                           "displayName": f"User {i:02d}", "role": "employee"})
        assert status == 201, (status, created)
    d = ctx["browser"]()
    login(d, server, "admin", ADMIN_PASSWORD)
    d.get(server.url + "/#/admin/audit")
    screen(d, "admin-audit")
    rows = lambda: d.find_elements(By.CSS_SELECTOR, "#audit-list li.audit-entry")
    wait_for(d, lambda d: len(rows()) == 50)
    # Newest first, in words, with the instant in the <time> and the reader's format on screen.
    newest = rows()[0]
    assert newest.get_attribute("data-event") == "login.success", newest.get_attribute("data-event")
    assert newest.find_element(By.CSS_SELECTOR, ".audit-event").text == "Logged in"
    assert "By: Ada Admin (@admin)" in newest.text, newest.text
    stamp = newest.find_element(By.TAG_NAME, "time")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", stamp.get_attribute("datetime")), stamp.get_attribute("datetime")
    assert "T" not in stamp.text and stamp.text, stamp.text
    ids = [int(r.get_attribute("data-audit-id")) for r in rows()]
    assert ids == sorted(ids, reverse=True), ids
    # "Older" brings the rest (58 events in all), then there is nothing older.
    d.find_element(By.ID, "audit-older").click()
    wait_for(d, lambda d: len(rows()) == 58)
    wait_for(d, lambda d: not d.find_element(By.ID, "audit-older").is_displayed())
    ids = [int(r.get_attribute("data-audit-id")) for r in rows()]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == 58, ids
    # Filter by kind of event, named in words.
    events = Select(d.find_element(By.ID, "audit-event"))
    assert "Account created" in [o.text for o in events.options]
    events.select_by_visible_text("Logged in")
    wait_for(d, lambda d: {r.get_attribute("data-event") for r in rows()} == {"login.success"} and len(rows()) == 2)
    # And by person, picked from the directory: what happened to User 07.
    events.select_by_value("")
    Select(d.find_element(By.ID, "audit-person")).select_by_visible_text("User 07 (@user07)")
    wait_for(d, lambda d: len(rows()) == 1 and rows()[0].get_attribute("data-event") == "user.create")
    assert "Concerning: User 07 (@user07)" in rows()[0].text, rows()[0].text
    assert "By: Ada Admin (@admin)" in rows()[0].text, rows()[0].text
    shot(d, ctx, "audit")
    errors = script_errors(d)
    assert not errors, errors


@test
def company_news_and_personal_updates_sit_under_their_own_tabs_and_the_badge_counts_news(ctx):
    server = ctx["server"]
    admin_api, eve_api = admin_and_eve(server)
    status, _ = admin_api.call("POST", "/admin/notices", {"title": "Office closed on Friday", "body": "Enjoy the long weekend."})
    assert status == 201, status
    # A decision on Eve's request is personal news for her; her own request is none.
    start = first_monday(datetime.date.today().year + 1, 3)
    request = ask_for_days(eve_api, start, start + datetime.timedelta(days=1))
    assert admin_api.call("POST", f"/admin/holidays/{request['id']}/approve", {"note": "Have fun"})[0] == 200

    eve = ctx["browser"]()
    login(eve, server, "eve", EMPLOYEE_PASSWORD)
    screen(eve, "home")
    # Home: "Updates for you" holds the decision in words; the badge counts company news only.
    mine = wait_for(eve, lambda d: d.find_element(By.CSS_SELECTOR, "#home-mine li.notice-item"))
    assert "Ada Admin approved your vacation request" in mine.text and start.isoformat() not in mine.text, mine.text
    assert mine.find_element(By.CSS_SELECTOR, ".badge.unread").text == "New"
    badge = wait_for(eve, lambda d: d.find_element(By.CSS_SELECTOR, "#sidebar a[data-page='notices'] #nav-unread"))
    assert text_content(badge.find_element(By.CSS_SELECTOR, ".sr-only")) == ", 1 unread"
    assert [e.text for e in eve.find_elements(By.CSS_SELECTOR, "#home-recent .notice-title")] == ["Office closed on Friday"]
    problems = axe_problems(eve, "home with updates for you")

    # The notices screen opens on company news; "For you" has the decision.
    eve.get(server.url + "/#/notices")
    screen(eve, "notices")
    wait_for(eve, lambda d: d.find_element(By.ID, "notices-list").get_attribute("aria-busy") == "false"
             and d.find_elements(By.CSS_SELECTOR, "#notices-list .notice-item"))
    assert eve.find_element(By.ID, "notices-tab-news").get_attribute("aria-current") == "page"
    assert [e.text for e in eve.find_elements(By.CSS_SELECTOR, "#notices-list .notice-title")] == ["Office closed on Friday"]
    wait_for(eve, lambda d: d.find_elements(By.CSS_SELECTOR, "#notices-tab-mine .nav-badge[data-count='1']"))
    problems += axe_problems(eve, "notices, company news")
    eve.find_element(By.ID, "notices-tab-mine").click()
    wait_for(eve, lambda d: d.find_element(By.ID, "notices-tab-mine").get_attribute("aria-current") == "page")
    item = wait_for(eve, lambda d: d.find_element(By.CSS_SELECTOR, "#notices-list li.notice-item"))
    assert item.find_element(By.CSS_SELECTOR, ".notice-title").text == "Vacation request approved", item.text
    assert "from " in item.text and "2 working days" in item.text and start.isoformat() not in item.text, item.text
    assert "Office closed on Friday" not in eve.find_element(By.ID, "notices-list").text
    problems += axe_problems(eve, "notices, for you")
    shot(eve, ctx, "notices-for-you")
    # "Mark all as read" on this tab reads the personal updates only: the news badge stays.
    eve.find_element(By.ID, "notices-read-all").click()
    wait_for(eve, lambda d: not d.find_elements(By.CSS_SELECTOR, "#notices-list .badge.unread"))
    wait_for(eve, lambda d: not d.find_elements(By.CSS_SELECTOR, "#notices-tab-mine .nav-badge"))
    assert eve.find_elements(By.CSS_SELECTOR, "#notices-tab-news .nav-badge[data-count='1']")
    assert eve.find_elements(By.CSS_SELECTOR, "#sidebar #nav-unread")
    assert not problems, "\n".join(problems)
    no_script_errors(eve)


@test
def the_audit_log_filters_by_kind_and_shows_a_settings_change_in_words(ctx):
    server = ctx["server"]
    create_admin(server)
    api = Api(server, "admin", ADMIN_PASSWORD)
    assert api.call("PUT", "/admin/settings", {"registration": "open"})[0] == 200
    assert api.call("POST", "/admin/notices", {"title": "Hello", "body": "x"})[0] == 201
    d = ctx["browser"]()
    login(d, server, "admin", ADMIN_PASSWORD)
    d.get(server.url + "/#/admin/audit")
    screen(d, "admin-audit")
    rows = lambda: d.find_elements(By.CSS_SELECTOR, "#audit-list li.audit-entry")
    wait_for(d, lambda d: d.find_element(By.ID, "audit-list").get_attribute("aria-busy") == "false" and rows())
    kinds = Select(d.find_element(By.ID, "audit-kind"))
    assert [o.text for o in kinds.options] == ["All kinds", "People", "Sign-ins", "Settings", "Company", "Holidays", "Notices",
                                               "Translation", "Invites"], [o.text for o in kinds.options]
    kinds.select_by_visible_text("Settings")
    wait_for(d, lambda d: {r.get_attribute("data-event") for r in rows()} == {"settings.update"})
    entry = rows()[0]
    assert entry.find_element(By.CSS_SELECTOR, ".audit-event").text == "Company settings changed"
    assert "By: Ada Admin (@admin)" in entry.text and "registration: closed → open" in entry.text, entry.text
    # The event list follows the kind.
    assert [o.text for o in Select(d.find_element(By.ID, "audit-event")).options] == ["Everything", "Company settings changed"]
    problems = axe_problems(d, "audit log filtered by kind")
    kinds.select_by_visible_text("Notices")
    wait_for(d, lambda d: {r.get_attribute("data-event") for r in rows()} == {"notice.posted"})
    assert rows()[0].find_element(By.CSS_SELECTOR, ".audit-event").text == "Notice posted"
    shot(d, ctx, "audit-kinds")
    assert not problems, "\n".join(problems)
    no_script_errors(d)


@test
def installable_manifest_service_worker_and_offline_page(ctx):
    server = ctx["server"]
    d = ctx["browser"]()
    d.get(server.url + "/")
    wait_for(d, lambda d: d.find_elements(By.ID, "login-form"))
    head = d.execute_script("""return {
        manifest: document.querySelector('link[rel=manifest]')?.getAttribute('href'),
        touch: document.querySelector('link[rel=apple-touch-icon]')?.getAttribute('href'),
        theme: document.querySelector('meta[name=theme-color]')?.content};""")
    assert head == {"manifest": "/manifest.webmanifest", "touch": "/assets/icons/apple-touch-icon.png", "theme": "#2463eb"}, head
    manifest = fetch_json(d, "/manifest.webmanifest")
    assert manifest["start_url"] == "/#/home" and manifest["display"] == "standalone", manifest
    assert manifest["name"] and manifest["short_name"] == "Console" and manifest["theme_color"], manifest
    icons = {(i["sizes"], i.get("purpose", "any")): i["src"] for i in manifest["icons"]}
    assert {("192x192", "any"), ("512x512", "any"), ("512x512", "maskable")} <= set(icons), icons
    # Every icon is a real PNG of its size, served by the binary.
    for (sizes, _), src in list(icons.items()) + [(("180x180", "any"), head["touch"])]:
        width = d.execute_async_script("""
            const done = arguments[arguments.length - 1];
            const img = new Image();
            img.onload = () => done(img.naturalWidth + 'x' + img.naturalHeight);
            img.onerror = () => done('error');
            img.src = arguments[0];""", src)
        assert width == sizes, (src, width)
    # The service worker takes the whole console and keeps the offline page, never the API.
    scope = d.execute_async_script("""
        const done = arguments[arguments.length - 1];
        navigator.serviceWorker.ready.then(r => done(r.scope), e => done(String(e)));""")
    assert scope == server.url + "/", scope
    wait_for(d, lambda d: d.execute_async_script("""
        const done = arguments[arguments.length - 1];
        caches.match('/assets/offline.html').then(r => done(Boolean(r)), () => done(false));"""))
    cached = d.execute_async_script("""
        const done = arguments[arguments.length - 1];
        (async () => {
            const urls = [];
            for (const name of await caches.keys()) for (const r of await (await caches.open(name)).keys()) urls.push(r.url);
            return urls;
        })().then(done, e => done([String(e)]));""")
    assert cached and not [u for u in cached if "/api/" in u], cached
    csp = d.execute_async_script("""
        const done = arguments[arguments.length - 1];
        fetch('/sw.js', {cache: 'no-store'}).then(r => done([r.headers.get('Content-Type'), r.headers.get('Content-Security-Policy')]));""")
    assert csp[0].startswith("text/javascript") and "worker-src 'self'" in csp[1] and "manifest-src 'self'" in csp[1], csp
    # The server goes away. (CDP's Network.emulateNetworkConditions only takes the page
    # offline, not its service worker, whose fetches still reach the server; an unreachable
    # server is what the worker really meets on a phone out of coverage.)
    wait_for(d, lambda d: d.execute_script("return Boolean(navigator.serviceWorker.controller)"))
    server.proc.terminate()
    server.proc.wait(timeout=15)
    d.refresh()
    wait_for(d, lambda d: d.find_element(By.TAG_NAME, "h1").text == "You are offline")
    problems = axe_problems(d, "offline page")
    assert not problems, "\n".join(problems)
    assert d.find_element(By.CSS_SELECTOR, "a.button").get_attribute("href") == server.url + "/#/home"
    shot(d, ctx, "offline")
    # Network entries are expected now (the server is gone); scripts must not have failed.
    errors = [e for e in script_errors(d) if e.get("source") != "network"]
    assert not errors, errors


def brand_and_title(d):
    return d.execute_script("return [document.getElementById('brand-name').textContent, document.title]")


@test
def the_header_title_and_installed_app_carry_the_companys_name(ctx):
    server = ctx["server"]
    create_admin(server)
    d = ctx["browser"]()
    d.get(server.url + "/")
    wait_for(d, lambda d: d.find_elements(By.ID, "login-form"))
    # Before anyone names the company: a neutral name, in the reader's language.
    assert brand_and_title(d) == ["Company console", "Log in · Company console"], brand_and_title(d)
    unnamed = fetch_json(d, "/manifest.webmanifest")
    assert (unnamed["name"], unnamed["short_name"]) == ("Company console", "Console"), unnamed
    admin_api = Api(server, "admin", ADMIN_PASSWORD)
    name = 'Acme <i>"Tools"</i> & Sons'
    status, _ = admin_api.call("PUT", "/admin/company", {"name": name})
    assert status == 200, status
    # The next load (the login screen too) says the name, as text, and so does the installed app.
    d.get(server.url + "/")
    wait_for(d, lambda d: d.find_elements(By.ID, "login-form"))
    assert brand_and_title(d) == [name, "Log in · " + name], brand_and_title(d)
    assert not d.find_elements(By.CSS_SELECTOR, ".brand i"), "the name was read as markup"
    named = fetch_json(d, "/manifest.webmanifest")
    assert (named["name"], named["short_name"]) == (name, "Acme"), named
    login(d, server, "admin", ADMIN_PASSWORD)
    screen(d, "home")
    wait_for(d, lambda d: brand_and_title(d) == [name, "Home · " + name])
    # An admin renames the company on its screen: the header and the title follow at once.
    d.get(server.url + "/#/company")
    screen(d, "company")
    wait_for(d, lambda d: d.find_element(By.ID, "company-edit")).click()
    field = d.find_element(By.ID, "company-edit-name")
    field.clear()
    field.send_keys("Bravo Ibérica")
    d.find_element(By.ID, "company-save").click()
    wait_for(d, lambda d: d.find_element(By.ID, "company-status").text == "The company profile has been saved.")
    assert brand_and_title(d) == ["Bravo Ibérica", "Company · Bravo Ibérica"], brand_and_title(d)
    assert fetch_json(d, "/manifest.webmanifest")["name"] == "Bravo Ibérica"
    # In Spanish the page's words change and the name stays.
    Select(d.find_element(By.ID, "lang")).select_by_value("es")
    wait_for(d, lambda d: brand_and_title(d) == ["Bravo Ibérica", "Empresa · Bravo Ibérica"])
    errors = script_errors(d)
    assert not errors, errors


def noisy_png(width, height):
    """A PNG of random pixels: it does not compress, so it is as large as a phone's photo."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    noise = os.urandom(width * height * 3)
    row = width * 3
    raw = b"".join(b"\x00" + noise[y * row:(y + 1) * row] for y in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b""))


def rotated_jpeg(d, width, height):
    """A JPEG drawn in the page, `width` × `height` as stored, with EXIF orientation 6 (a phone held
    upright: shown turned a quarter clockwise, so `height` wide and `width` high)."""
    encoded = d.execute_async_script("""
        const [w, h, done] = arguments;
        const canvas = document.createElement('canvas');
        canvas.width = w; canvas.height = h;
        const g = canvas.getContext('2d');
        g.fillStyle = '#2463eb'; g.fillRect(0, 0, w, h);
        g.fillStyle = '#e34'; g.fillRect(0, 0, w / 4, h);
        canvas.toBlob(async (blob) => {
          const jpeg = new Uint8Array(await blob.arrayBuffer());
          // APP1 "Exif": a big-endian TIFF header and one IFD entry, Orientation (0x0112) = 6.
          const tiff = [0x4d, 0x4d, 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0];
          const body = [0x45, 0x78, 0x69, 0x66, 0, 0, ...tiff];
          const app1 = [0xff, 0xe1, (body.length + 2) >> 8, (body.length + 2) & 255, ...body];
          const out = new Uint8Array(jpeg.length + app1.length);
          out.set(jpeg.subarray(0, 2)); out.set(app1, 2); out.set(jpeg.subarray(2), 2 + app1.length);
          let text = ''; for (const b of out) text += String.fromCharCode(b);
          done(btoa(text));
        }, 'image/jpeg', 0.9);
    """, width, height)
    import base64
    return base64.b64decode(encoded)


def avatar_size_and_type(d):
    """The uploaded avatar as the server keeps it: [width, height, content type]."""
    return d.execute_async_script("""
        const done = arguments[arguments.length - 1];
        (async () => {
          const me = await (await fetch('/api/v1/me', {credentials: 'same-origin'})).json();
          const r = await fetch(me.avatarUrl, {credentials: 'same-origin'});
          const bitmap = await createImageBitmap(await r.blob());
          return [bitmap.width, bitmap.height, r.headers.get('Content-Type')];
        })().then(done, (e) => done(String(e)));
    """)


@test
def a_large_phone_photo_is_made_smaller_upright_before_it_is_sent(ctx):
    server = ctx["server"]
    create_admin(server)
    big = os.path.join(server.dir, "photo.png")
    with open(big, "wb") as f:
        f.write(noisy_png(1800, 1350))
    assert os.path.getsize(big) > 2 * 1024 * 1024 + 100_000, "the picture must be over the server's limit"
    not_image = os.path.join(server.dir, "notes.png")
    with open(not_image, "w") as f:
        f.write("these are my notes, not a picture\n")
    d = ctx["browser"]()
    login(d, server, "admin", ADMIN_PASSWORD)
    d.get(server.url + "/#/profile")
    screen(d, "profile")
    # Over 2 MiB as chosen: the browser makes it 1024 px on its longest side, and it goes up.
    wait_for(d, lambda d: d.find_element(By.ID, "avatar-file")).send_keys(big)
    wait_for(d, lambda d: d.find_element(By.CSS_SELECTOR, ".picture-card .notice").text == "Your new picture is up.", timeout=30)
    width, height, kind = avatar_size_and_type(d)
    assert (width, height) == (1024, 768), (width, height)
    assert kind in ("image/webp", "image/jpeg"), kind
    # A photo taken upright (stored sideways, with EXIF orientation 6) stays upright.
    photo = os.path.join(server.dir, "upright.jpg")
    with open(photo, "wb") as f:
        f.write(rotated_jpeg(d, 2000, 1500))
    d.find_element(By.ID, "avatar-file").send_keys(photo)
    wait_for(d, lambda d: avatar_size_and_type(d)[:2] == [768, 1024], timeout=30)
    # A file that is no picture is refused in words, before anything is sent.
    d.find_element(By.ID, "avatar-file").send_keys(not_image)
    wait_for(d, lambda d: "not a picture" in d.find_element(By.CSS_SELECTOR, ".picture-card .notice.bad").text)
    problems = axe_problems(d, "profile")
    assert not problems, problems
    errors = script_errors(d)
    assert not errors, errors


def rt_offline_shown(d):
    return d.find_element(By.ID, "rt-status").text == "Offline, reconnecting…"


@test
def a_home_opened_while_the_server_is_down_fills_in_once_it_is_back_and_a_phone_keeps_log_out(ctx):
    server = ctx["server"]
    create_admin(server)
    admin_api = Api(server, "admin", ADMIN_PASSWORD)
    status, _ = admin_api.call("POST", "/admin/notices", {"title": "Welcome back", "body": "The office is open."})
    assert status == 201, status
    d = ctx["browser"]()
    d.set_window_size(390, 844)
    login(d, server, "admin", ADMIN_PASSWORD)
    screen(d, "home")
    wait_for(d, lambda d: "Welcome back" in d.find_element(By.ID, "home-notices").text)
    wait_for(d, realtime_open)
    # Someone else is halfway through their profile in another browser when the server goes.
    other = ctx["browser"]()
    login(other, server, "admin", ADMIN_PASSWORD)
    other.get(server.url + "/#/profile")
    screen(other, "profile")
    wait_for(other, realtime_open)
    d.get(server.url + "/#/directory")
    screen(d, "directory")
    server.proc.terminate()
    server.proc.wait(timeout=15)
    wait_for(d, rt_offline_shown, timeout=15)
    wait_for(other, rt_offline_shown, timeout=15)
    status_field = other.find_element(By.ID, "profile-status")
    status_field.clear()
    status_field.send_keys("half typed")
    # Home, opened now, cannot load its notices; "Log out" stays on the phone's screen.
    d.execute_script("location.hash = '#/home'")
    screen(d, "home")
    wait_for(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#home-notices .notice.bad"))
    box = d.execute_script("""
        const r = document.getElementById('logout').getBoundingClientRect();
        return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: innerWidth, height: innerHeight,
                status: document.getElementById('rt-status').getBoundingClientRect().width};""")
    assert d.find_element(By.ID, "logout").is_displayed()
    assert box["left"] >= 0 and box["right"] <= box["width"] and box["top"] >= 0 and box["bottom"] <= box["height"], box
    assert box["status"] > 0, "the offline status is shown"
    assert horizontal_overflow(d) <= 0
    shot(d, ctx, "home-offline-phone")
    # The server comes back on the same port and data: Home fills in by itself.
    server.restart()
    wait_for(d, lambda d: "Welcome back" in d.find_element(By.ID, "home-notices").text, timeout=45)
    wait_for(d, lambda d: d.find_element(By.ID, "rt-status").text == "")
    assert not d.find_elements(By.CSS_SELECTOR, "#home-notices .notice.bad")
    # What the other person was typing is still there once their stream is back.
    wait_for(other, lambda d: d.find_element(By.ID, "rt-status").text == "", timeout=45)
    assert other.find_element(By.ID, "profile-status").get_attribute("value") == "half typed"
    errors = [e for b in (d, other) for e in script_errors(b) if e.get("source") != "network"]
    assert not errors, errors


@test
def spanish_writes_month_names_in_lower_case_and_counts_with_its_plural_rules(ctx):
    server = ctx["server"]
    admin_api, eve_api = admin_and_eve(server)
    year = datetime.datetime.now(datetime.timezone.utc).year + 1
    start = first_monday(year, 12)
    ask_for_days(eve_api, start, start + datetime.timedelta(days=2))
    d = ctx["browser"]("es-ES")
    login(d, server, "admin", ADMIN_PASSWORD)
    Select(d.find_element(By.ID, "lang")).select_by_value("es")
    d.get(server.url + f"/#/calendar?month={year}-12")
    screen(d, "calendar")
    month = wait_for(d, lambda d: d.find_element(By.ID, "cal-month"))
    assert month.text == f"diciembre de {year}", month.text
    assert d.execute_script("return getComputedStyle(arguments[0]).textTransform", month) == "none"
    # One request, one waiting: said in the singular.
    d.get(server.url + f"/#/admin/holidays?status=pending&year={year}")
    screen(d, "admin-holidays")
    wait_for(d, lambda d: d.find_element(By.ID, "ah-count").text == "1 mostrada, 1 pendiente")
    d.get(server.url + "/#/home")
    screen(d, "home")
    count = wait_for(d, lambda d: d.find_element(By.ID, "home-pending-words"))
    assert count.text == "solicitud espera tu decisión.", count.text
    badge = d.find_element(By.CSS_SELECTOR, "#nav-pending-holidays .sr-only")
    assert text_content(badge) == ", 1 solicitud pendiente de decisión", text_content(badge)
    # The console's own words choose their form too: one character, many characters.
    assert d.execute_script("return import('/assets/i18n.js').then(m => [m.t('field.tooLong', {n: 1}), m.t('field.tooLong', {n: 100})])") == [
        "Como máximo 1 carácter.", "Como máximo 100 caracteres."]
    problems = axe_problems(d, "home (es)")
    assert not problems, problems
    errors = script_errors(d)
    assert not errors, errors


def axe_problems(d, where):
    """Serious and critical axe-core violations on the page as it is now."""
    axe = Axe(d)
    axe.inject()
    results = axe.run(options='{"resultTypes": ["violations"]}')
    bad = [v for v in results["violations"] if v.get("impact") in ("serious", "critical")]
    return [f"{where}: {v['id']} ({v['impact']}): {v['help']} — " + "; ".join(n["target"][0] for n in v["nodes"][:3]) for v in bad]


@test
def every_screen_passes_an_automated_accessibility_check(ctx):
    server = ctx["server"]
    create_admin(server)
    create_employee(server)
    api = Api(server, "admin", ADMIN_PASSWORD)
    # Content on every screen, so the check sees real lists and cards, not empty states only.
    api.call("PUT", "/admin/company", {"name": "Acme", "phone": "+34 910 000 000", "email": "hola@acme.example",
                                       "website": "https://acme.example", "address": "Calle Mayor 1\n28013 Madrid"})
    api.call("POST", "/admin/notices", {"title": "Welcome", "body": "Read https://example.com first.", "pinned": True})
    api.call("POST", "/admin/notices", {"title": "Lunch on Friday", "body": "In the kitchen.", "pinned": False})
    status, _ = api.call("PUT", "/admin/settings", {"timeZone": "Europe/Madrid"})
    assert status == 200, status
    status, users = api.call("GET", "/users?status=all")
    eve = next(u for u in users["items"] if u["username"] == "eve")
    # A holiday request waiting for a decision, and a public holiday, for the holiday screens: next
    # year's, so the request is still ahead (it can be cancelled) whatever day the test runs.
    first = first_monday(datetime.date.today().year + 1, 3)
    year = first.year
    status, request = Api(server, "eve", EMPLOYEE_PASSWORD).call("POST", "/holidays", {
        "start": first.isoformat(), "end": (first + datetime.timedelta(days=4)).isoformat(), "halfStart": True, "note": "Beach"})
    assert status == 201, (status, request)
    api.call("POST", "/admin/public-holidays", {"date": f"{year}-12-25", "name": "Christmas Day"})
    d = ctx["browser"]()
    problems = []
    d.get(server.url + "/")
    wait_for(d, lambda d: d.find_elements(By.ID, "login-form"))
    problems += axe_problems(d, "login")
    d.get(server.url + "/setup")
    wait_for(d, lambda d: d.find_elements(By.ID, "setup-closed"))
    problems += axe_problems(d, "setup (closed)")
    d.get(server.url + "/")
    login(d, server, "admin", ADMIN_PASSWORD)
    screens = [
        ("#/home", "home", "#home-notices[aria-busy='false']"),
        ("#/notices", "notices", "#notices-list[aria-busy='false']"),
        ("#/company", "company", "#company-card"),
        ("#/admin/settings", "admin-settings", "#settings-form"),
        ("#/admin/audit", "admin-audit", "#audit-list[aria-busy='false']"),
        ("#/directory", "directory", "#dir-list[aria-busy='false']"),
        (f"#/person?id={eve['id']}", "person", "#person-card"),
        ("#/profile", "profile", "#profile-form"),
        ("#/admin/users", "admin-users", "#admin-users li"),
        ("#/admin/translation", "admin-translation", "#translation-form"),
        (f"#/holidays?year={year}", "holidays", "#hol-requests[aria-busy='false']"),
        ("#/calendar", "calendar", "#cal-body[aria-busy='false']"),
        ("#/admin/holidays", "admin-holidays", "#ah-list[aria-busy='false']"),
        (f"#/admin/holidays?user={eve['id']}", "admin-holidays", "#ah-person[aria-busy='false']"),
        ("#/admin/leave", "admin-leave", "#lt-list[aria-busy='false']"),
        (f"#/admin/holidays?id={request['id']}", "admin-holidays", "#ah-detail[aria-busy='false']"),
    ]
    for route, name, ready in screens:
        d.get(server.url + "/" + route)
        screen(d, name)
        wait_for(d, lambda d: d.find_elements(By.CSS_SELECTOR, ready))
        problems += axe_problems(d, route)
        if name == "home":
            # Company, settings, team and a notice are all there: no first steps left to show.
            assert not d.find_elements(By.ID, "home-checklist"), "the checklist stays after every step is done"
            assert [e.text for e in d.find_elements(By.CSS_SELECTOR, "#home-pinned .notice-title")] == ["Welcome"]
            assert [e.text for e in d.find_elements(By.CSS_SELECTOR, "#home-recent .notice-title")] == ["Lunch on Friday"]
    # The forms that open on demand, and one notice.
    d.get(server.url + "/#/company")
    screen(d, "company")
    wait_for(d, lambda d: d.find_element(By.ID, "company-edit")).click()
    wait_for(d, lambda d: d.find_elements(By.ID, "company-form"))
    problems += axe_problems(d, "company edit")
    d.get(server.url + f"/#/person?id={eve['id']}")
    screen(d, "person")
    wait_for(d, lambda d: d.find_element(By.ID, "person-edit")).click()
    wait_for(d, lambda d: d.find_elements(By.ID, "person-form"))
    problems += axe_problems(d, "person edit")
    d.get(server.url + "/#/notices")
    screen(d, "notices")
    wait_for(d, lambda d: d.find_element(By.CSS_SELECTOR, "#notices-list .notice-title a")).click()
    wait_for(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#notice .notice-body"))
    problems += axe_problems(d, "notice")
    # The employee's Home, with the unread badge in the navigation.
    d.find_element(By.ID, "logout").click()
    login(d, server, "eve", EMPLOYEE_PASSWORD)
    screen(d, "home")
    wait_for(d, lambda d: d.find_elements(By.ID, "nav-unread"))
    problems += axe_problems(d, "home (employee)")
    d.get(server.url + f"/#/holidays?year={year}")
    screen(d, "holidays")
    wait_for(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#hol-requests[aria-busy='false'] [data-action='cancel']"))[0].click()
    problems += axe_problems(d, "my holidays (employee, confirming a cancel)")
    d.get(server.url + "/#/calendar")
    screen(d, "calendar")
    wait_for(d, lambda d: d.find_element(By.ID, "cal-feed")).click()
    wait_for(d, lambda d: d.find_elements(By.ID, "cal-feed-url"))
    problems += axe_problems(d, "team calendar (employee, with the feed link)")
    d.get(server.url + "/#/home")
    screen(d, "home")
    # The skip link is the first thing the keyboard reaches and moves focus to the content.
    first = d.execute_script("""return [...document.querySelectorAll('a[href], button, input, select, textarea, [tabindex]')]
        .find(el => el.tabIndex >= 0 && !el.hidden).id""")
    assert first == "skip", first
    assert d.execute_script("return document.getElementById('skip').getBoundingClientRect().bottom") <= 0, "hidden until focused"
    d.execute_script("document.getElementById('skip').focus()")
    assert d.execute_script("return document.getElementById('skip').getBoundingClientRect().top") >= 0, "shown when focused"
    d.switch_to.active_element.send_keys(Keys.ENTER)
    assert active_id(d) == "main", active_id(d)
    assert d.execute_script("return location.hash") == "#/home"
    assert not problems, "\n".join(problems)


# --- Chat (issue 8) ---------------------------------------------------------------------------

def no_script_errors(*drivers):
    errors = [e for d in drivers for e in script_errors(d)]
    assert not errors, errors


def messages_text(d):
    """The texts of the message bodies shown in the open chat, in order."""
    return d.execute_script("""return [...document.querySelectorAll('#chat-messages .msg .msg-body')]
        .map(el => el.textContent);""")


def system_lines(d):
    """The words of the system lines (who came and went) shown in the open chat, in order."""
    return d.execute_script("""return [...document.querySelectorAll('#chat-messages .msg-system .system-text')]
        .map(el => el.textContent);""")


def send_message(d, text):
    box = wait_for(d, lambda d: d.find_element(By.ID, "chat-input"))
    # Shift+Enter is a new line in the composer; Enter sends.
    box.send_keys((Keys.SHIFT + Keys.ENTER + Keys.NULL).join(text.split("\n")))
    box.send_keys(Keys.ENTER)


def open_chat_from_list(d, name):
    link = wait_for(d, lambda d: next((a for a in d.find_elements(By.CSS_SELECTOR, "#chat-list .chat-item-name a") if a.text == name), None))
    link.click()
    screen(d, "chat")
    wait_for(d, lambda d: d.find_element(By.ID, "chat-title").text == name)


def two_employees(server):
    create_admin(server)
    create_employee(server, "eve", "Eve Employee")
    create_employee(server, "bob", "Bob Builder")
    return Api(server, "eve", EMPLOYEE_PASSWORD), Api(server, "bob", EMPLOYEE_PASSWORD)


def realtime_open(d):
    """True once the page's realtime socket is open."""
    return d.execute_script("return import('/assets/realtime.js').then(m => m.connected())")


def eve_and_bob_on_the_chat_list(ctx, bob_language=None):
    """Two employees logged in, each in a browser; Bob on his (empty) chat list, his stream open.
    With `bob_language` ("es"), Bob's account and browser speak it."""
    server = ctx["server"]
    eve_api, bob_api = two_employees(server)
    if bob_language:
        status, _ = bob_api.call("PATCH", "/me", {"language": bob_language})
        assert status == 200, status
    eve, bob = ctx["browser"](), ctx["browser"]({"es": "es-ES"}.get(bob_language, "en-US"))
    login(eve, server, "eve", EMPLOYEE_PASSWORD)
    login(bob, server, "bob", EMPLOYEE_PASSWORD)
    bob.get(server.url + "/#/chat")
    screen(bob, "chat")
    wait_for(bob, lambda d: d.find_elements(By.ID, "chat-empty"))
    wait_for(bob, realtime_open)
    return server, eve_api, bob_api, eve, bob


def direct_chat(eve_api, bob_api):
    status, chat = eve_api.call("POST", "/chats/direct", {"userId": bob_api.user["id"]})
    assert status in (200, 201), (status, chat)
    return chat


@test
def two_employees_chat_live_in_two_browsers(ctx):
    server, eve_api, bob_api, eve, bob = eve_and_bob_on_the_chat_list(ctx)
    # Eve starts the direct chat from the directory.
    eve.get(server.url + "/#/directory")
    screen(eve, "directory")
    wait_for(eve, lambda d: d.find_element(By.CSS_SELECTOR, f'.person[data-user-id="{bob_api.user["id"]}"] [data-action="message"]')).click()
    screen(eve, "chat")
    wait_for(eve, lambda d: d.find_element(By.ID, "chat-title").text == "Bob Builder")
    send_message(eve, "Hello Bob")
    wait_for(eve, lambda d: messages_text(d) == ["Hello Bob"] and not d.find_elements(By.CSS_SELECTOR, "#chat-messages .pending"))
    assert eve.find_element(By.CSS_SELECTOR, "#chat-messages .day").text == "Today"
    # Bob's list shows the new chat with its unread badge, live; so does the navigation.
    wait_for(bob, lambda d: d.find_element(By.CSS_SELECTOR, "#chat-list .chat-item.is-unread .badge.unread").get_attribute("data-count") == "1")
    assert "Hello Bob" in bob.find_element(By.CSS_SELECTOR, "#chat-list .chat-preview").text
    wait_for(bob, lambda d: d.find_elements(By.ID, "nav-chat-unread"))
    open_chat_from_list(bob, "Eve Employee")
    wait_for(bob, lambda d: messages_text(d) == ["Hello Bob"])
    # Once read, the badge goes.
    wait_for(bob, lambda d: not d.find_elements(By.ID, "nav-chat-unread"))
    send_message(bob, "Hi Eve\nsecond line")
    wait_for(eve, lambda d: messages_text(d) == ["Hello Bob", "Hi Eve\nsecond line"])
    # Eve edits her message; Bob sees the new text marked as edited.
    mine = eve.find_element(By.CSS_SELECTOR, "#chat-messages .msg.mine")
    mine.find_element(By.CSS_SELECTOR, '[data-action="edit"]').click()
    editor = wait_for(eve, lambda d: d.find_element(By.ID, "chat-edit-input"))
    editor.clear()
    editor.send_keys("Hello Bob, welcome")
    eve.find_element(By.ID, "chat-edit-save").click()
    wait_for(bob, lambda d: messages_text(d)[0] == "Hello Bob, welcome" and d.find_elements(By.CSS_SELECTOR, "#chat-messages .edited"))
    # And deletes it: shown as deleted on both sides, its text gone.
    eve.find_element(By.CSS_SELECTOR, '#chat-messages .msg.mine [data-action="delete"]').click()
    wait_for(eve, lambda d: d.find_element(By.CSS_SELECTOR, '#chat-messages [data-action="confirm-delete"]')).click()
    wait_for(bob, lambda d: d.find_elements(By.CSS_SELECTOR, "#chat-messages .msg.is-deleted"))
    assert "welcome" not in bob.find_element(By.ID, "chat-messages").text
    assert bob.find_element(By.CSS_SELECTOR, "#chat-messages .msg.is-deleted .msg-body").text == "This message was deleted."
    shot(bob, ctx, "chat-direct")
    no_script_errors(eve, bob)


@test
def a_group_is_created_a_member_added_and_mentioned_live(ctx):
    server, eve_api, bob_api, eve, bob = eve_and_bob_on_the_chat_list(ctx)
    eve.get(server.url + "/#/chat?view=new")
    screen(eve, "chat")
    wait_for(eve, lambda d: d.find_element(By.ID, "group-name")).send_keys("Design")
    eve.find_element(By.ID, "group-description").send_keys("Pixels and people")
    eve.find_element(By.ID, "group-tags").send_keys("design, ui")
    eve.find_element(By.ID, "group-create").click()
    wait_for(eve, lambda d: d.find_element(By.ID, "chat-title").text == "Design")
    assert "1 member" in eve.find_element(By.ID, "chat-subtitle").text
    # Group info: Eve is its admin, adds Bob and makes him an admin too.
    eve.find_element(By.ID, "chat-info-link").click()
    wait_for(eve, lambda d: d.find_element(By.ID, "info-title").text == "Design")
    assert eve.find_element(By.ID, "info-tags").text.split() == ["#design", "#ui"]
    Select(wait_for(eve, lambda d: d.find_element(By.ID, "info-add-user").find_element(By.XPATH, "option[text()='Bob Builder']") and d.find_element(By.ID, "info-add-user"))).select_by_visible_text("Bob Builder")
    eve.find_element(By.ID, "info-add").click()
    row = f'#info-members .member[data-user-id="{bob_api.user["id"]}"]'
    click_when_there(eve, row + ' [data-action="grant"]')
    wait_for(eve, lambda d: d.find_element(By.CSS_SELECTOR, row + " .badge.role").text == "Admin")
    # Bob's list gets the group live, without a reload.
    wait_for(bob, lambda d: any(a.text == "Design" for a in d.find_elements(By.CSS_SELECTOR, "#chat-list .chat-item-name a")))
    # A mention of Bob: badged in his list, highlighted for him in the chat.
    eve.find_element(By.ID, "info-back").click()
    send_message(eve, "@bob please look at this")
    wait_for(bob, lambda d: d.find_elements(By.CSS_SELECTOR, "#chat-list .badge.mention"))
    open_chat_from_list(bob, "Design")
    wait_for(bob, lambda d: d.find_element(By.CSS_SELECTOR, "#chat-messages mark.mention-me").text == "@bob")
    assert bob.find_element(By.CSS_SELECTOR, "#chat-messages .msg-sender").text == "Eve Employee"
    # Bob leaves; Eve's info shows one member again, live.
    eve.find_element(By.ID, "chat-info-link").click()
    wait_for(eve, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#info-members .member")) == 2)
    bob.find_element(By.ID, "chat-info-link").click()
    wait_for(bob, lambda d: d.find_element(By.ID, "info-leave")).click()
    # Leaving asks first, in place.
    wait_for(bob, lambda d: d.find_element(By.CSS_SELECTOR, '[data-action="leave-yes"]').is_displayed())
    bob.find_element(By.CSS_SELECTOR, '[data-action="leave-yes"]').click()
    wait_for(bob, lambda d: d.execute_script("return location.hash") == "#/chat")
    wait_for(eve, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#info-members .member")) == 1)
    shot(eve, ctx, "chat-group-info")
    no_script_errors(eve, bob)


@test
def a_reload_or_a_server_restart_in_the_middle_loses_nothing(ctx):
    server = ctx["server"]
    eve_api, bob_api = two_employees(server)
    chat = direct_chat(eve_api, bob_api)
    eve, bob = ctx["browser"](), ctx["browser"]()
    login(eve, server, "eve", EMPLOYEE_PASSWORD)
    login(bob, server, "bob", EMPLOYEE_PASSWORD)
    for d in (eve, bob):
        d.get(server.url + f"/#/chat?id={chat['id']}")
        screen(d, "chat")
        wait_for(d, realtime_open)
    # Eve sends and reloads at once: whatever the server had not answered yet is sent again
    # after the reload with the same client id, so each message is there exactly once.
    for n in range(1, 4):
        send_message(eve, f"message {n}")
    eve.refresh()
    screen(eve, "chat")
    wanted = ["message 1", "message 2", "message 3"]
    wait_for(eve, lambda d: messages_text(d) == wanted and not d.find_elements(By.CSS_SELECTOR, "#chat-messages .pending"))
    wait_for(bob, lambda d: messages_text(d) == wanted)
    # A message the server never got (its request blocked) waits in this browser; after a
    # reload it is sent again, once.
    eve.execute_cdp_cmd("Network.enable", {})
    eve.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/api/v1/chats/*/messages"]})
    send_message(eve, "message 4")
    wait_for(eve, lambda d: d.execute_script("return Object.keys(localStorage).some(k => k.startsWith('sgem.pending.') && localStorage[k].includes('message 4'))"))
    assert eve.find_elements(By.CSS_SELECTOR, "#chat-messages .msg.pending")
    eve.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
    eve.refresh()
    screen(eve, "chat")
    wanted.append("message 4")
    wait_for(eve, lambda d: messages_text(d) == wanted and not d.find_elements(By.CSS_SELECTOR, "#chat-messages .pending"))
    wait_for(bob, lambda d: messages_text(d) == wanted)
    status, stored = bob_api.call("GET", f"/chats/{chat['id']}/messages")
    assert [m["body"] for m in stored["items"]] == wanted, stored
    # The server restarts: Bob's console says it is offline, reconnects by itself and gets what
    # was sent while it was away.
    server.proc.terminate()
    server.proc.wait(timeout=15)
    wait_for(bob, lambda d: d.find_element(By.ID, "rt-status").text == "Offline, reconnecting…", timeout=15)
    server.restart()
    eve_api = Api(server, "eve", EMPLOYEE_PASSWORD)
    status, _ = eve_api.call("POST", f"/chats/{chat['id']}/messages", {"body": "sent during the gap", "clientId": "gap-1"})
    assert status == 201, status
    wait_for(bob, lambda d: messages_text(d) == wanted + ["sent during the gap"], timeout=40)
    wait_for(bob, lambda d: d.find_element(By.ID, "rt-status").text == "")
    errors = [e for d in (eve, bob) for e in script_errors(d) if e.get("source") != "network"]
    assert not errors, errors


@test
def a_message_body_with_html_stays_inert_text(ctx):
    server = ctx["server"]
    eve_api, bob_api = two_employees(server)
    chat = direct_chat(eve_api, bob_api)
    payloads = ['<img src=x onerror="window.__xss=1">', "<script>window.__xss=2</script>", "<b>bold</b> & 'quotes'"]
    for i, body in enumerate(payloads):
        status, _ = eve_api.call("POST", f"/chats/{chat['id']}/messages", {"body": body, "clientId": f"x{i}"})
        assert status == 201, status
    bob = ctx["browser"]()
    login(bob, server, "bob", EMPLOYEE_PASSWORD)
    bob.get(server.url + "/#/chat")
    screen(bob, "chat")
    wait_for(bob, lambda d: "<b>bold</b>" in d.find_element(By.CSS_SELECTOR, "#chat-list .chat-preview").text)
    open_chat_from_list(bob, "Eve Employee")
    wait_for(bob, lambda d: messages_text(d) == payloads)
    assert not bob.find_elements(By.CSS_SELECTOR, "#chat-messages img, #chat-messages script, #chat-messages b")
    # Search shows the snippet as text too.
    bob.get(server.url + "/#/chat?view=search&q=bold")
    wait_for(bob, lambda d: d.find_elements(By.CSS_SELECTOR, "#search-results .snippet"))
    snippet = bob.find_element(By.CSS_SELECTOR, "#search-results .snippet")
    assert "<b>" in snippet.text and not snippet.find_elements(By.CSS_SELECTOR, "b"), snippet.get_attribute("innerHTML")
    assert bob.execute_script("return window.__xss === undefined")
    no_script_errors(bob)


def record_notifications(d):
    """The browser's permission granted; the page's Notification records what it is asked to show."""
    d.execute_script("""
        window.__shown = [];
        window.Notification = class {
            static get permission() { return 'granted'; }
            static requestPermission() { return Promise.resolve('granted'); }
            constructor(title, options) { window.__shown.push([title, options.body]); }
            addEventListener() {}
            close() {}
        };""")


def bob_with_notifications_on(ctx):
    server = ctx["server"]
    eve_api, bob_api = two_employees(server)
    status, _ = bob_api.call("PATCH", "/me", {"notificationsEnabled": True})
    assert status == 200, status
    bob = ctx["browser"]()
    login(bob, server, "bob", EMPLOYEE_PASSWORD)
    screen(bob, "home")
    wait_for(bob, realtime_open)
    record_notifications(bob)
    return server, eve_api, bob_api, bob


@test
def notices_arrive_live_with_a_browser_notification(ctx):
    server, eve_api, bob_api, bob = bob_with_notifications_on(ctx)
    admin_api = Api(server, "admin", ADMIN_PASSWORD)
    status, _ = admin_api.call("POST", "/admin/notices", {"title": "Office closed on Friday", "body": "Heating repairs."})
    assert status == 201, status
    # Home lists it and the navigation badges it, without a reload.
    wait_for(bob, lambda d: d.find_elements(By.ID, "nav-unread"))
    wait_for(bob, lambda d: "Office closed on Friday" in d.find_element(By.ID, "home-notices").text)
    wait_for(bob, lambda d: d.execute_script("return window.__shown") == [["New notice", "Office closed on Friday"]])
    # The notice board follows too.
    bob.get(server.url + "/#/notices")
    screen(bob, "notices")
    wait_for(bob, lambda d: "Office closed on Friday" in d.find_element(By.ID, "notices-list").text)
    admin_api.call("POST", "/admin/notices", {"title": "New coffee machine", "body": "Second floor."})
    wait_for(bob, lambda d: "New coffee machine" in d.find_element(By.ID, "notices-list").text)
    no_script_errors(bob)


@test
def a_new_message_mentioning_me_raises_a_browser_notification(ctx):
    server, eve_api, bob_api, bob = bob_with_notifications_on(ctx)
    chat = direct_chat(eve_api, bob_api)
    eve_api.call("POST", f"/chats/{chat['id']}/messages", {"body": "Coffee @bob?", "clientId": "n1"})
    wait_for(bob, lambda d: d.execute_script("return window.__shown") == [["Eve Employee mentioned you", "Coffee @bob?"]])
    wait_for(bob, lambda d: d.find_elements(By.ID, "nav-chat-unread"))
    # Not for the chat in front of me.
    bob.get(server.url + f"/#/chat?id={chat['id']}")
    wait_for(bob, lambda d: messages_text(d) == ["Coffee @bob?"])
    wait_for(bob, realtime_open)
    record_notifications(bob)
    eve_api.call("POST", f"/chats/{chat['id']}/messages", {"body": "Downstairs", "clientId": "n2"})
    wait_for(bob, lambda d: messages_text(d) == ["Coffee @bob?", "Downstairs"])
    # Elsewhere in the console, the next one is announced (and only that one).
    bob.find_element(By.ID, "chat-back").click()
    wait_for(bob, lambda d: d.find_elements(By.CSS_SELECTOR, "#chat-list .chat-item"))
    eve_api.call("POST", f"/chats/{chat['id']}/messages", {"body": "Later then", "clientId": "n3"})
    wait_for(bob, lambda d: d.execute_script("return window.__shown") == [["New message from Eve Employee", "Later then"]])
    no_script_errors(bob)


@test
def history_loads_upward_and_a_public_group_is_joined_then_left_by_removal(ctx):
    server = ctx["server"]
    eve_api, bob_api = two_employees(server)
    status, group = eve_api.call("POST", "/chats", {"name": "Announcements", "description": "Company-wide", "public": True, "memberIds": []})
    assert status == 201, (status, group)
    for n in range(1, 66):
        status, _ = eve_api.call("POST", f"/chats/{group['id']}/messages", {"body": f"note {n}", "clientId": f"h{n}"})
        assert status == 201, status
    bob = ctx["browser"]()
    login(bob, server, "bob", EMPLOYEE_PASSWORD)
    # Bob finds the public group and joins it.
    bob.get(server.url + "/#/chat?view=public")
    screen(bob, "chat")
    wait_for(bob, lambda d: d.find_element(By.CSS_SELECTOR, f'#public-list [data-chat-id="{group["id"]}"] [data-action="join"]')).click()
    wait_for(bob, lambda d: d.find_elements(By.ID, "chat-title") and d.find_element(By.ID, "chat-title").text == "Announcements")
    # The latest 50 first, at the bottom (the line saying Bob joined and 49 notes); scrolling to
    # the top brings the older ones above (the group's creation line and the first 16 notes).
    wait_for(bob, lambda d: len(messages_text(d)) == 49)
    assert messages_text(bob)[0] == "note 17" and messages_text(bob)[-1] == "note 65"
    assert len(bob.find_elements(By.CSS_SELECTOR, "#chat-messages .msg, #chat-messages .msg-system")) == 50
    assert system_lines(bob) == ["You joined the group"]
    assert bob.execute_script("const s = document.getElementById('chat-scroll'); return s.scrollHeight - s.scrollTop - s.clientHeight") < 80
    bob.execute_script("document.getElementById('chat-scroll').scrollTop = 0")
    wait_for(bob, lambda d: len(messages_text(d)) == 65)
    assert messages_text(bob) == [f"note {n}" for n in range(1, 66)]
    assert system_lines(bob) == ["Eve Employee created the group", "You joined the group"]
    # Where the reader was stays on screen: the view did not jump to the new top.
    assert bob.execute_script("return document.getElementById('chat-scroll').scrollTop") > 0
    assert not bob.find_element(By.ID, "chat-older").is_displayed()
    # A search result far back in the history opens the chat on that message.
    bob.get(server.url + "/#/chat?view=search&q=note%203")
    result = wait_for(bob, lambda d: next((r for r in d.find_elements(By.CSS_SELECTOR, "#search-results .result")
                                            if r.find_element(By.CSS_SELECTOR, ".snippet").text == "note 3"), None))
    result.find_element(By.CSS_SELECTOR, ".result-head a").click()
    found = wait_for(bob, lambda d: d.find_element(By.CSS_SELECTOR, "#chat-messages .msg.found"))
    assert found.find_element(By.CSS_SELECTOR, ".msg-body").text == "note 3"
    assert bob.execute_script("""const r = arguments[0].getBoundingClientRect(), s = document.getElementById('chat-scroll').getBoundingClientRect();
        return r.top >= s.top && r.bottom <= s.bottom""", found)
    wait_for(bob, realtime_open)
    # Eve removes Bob: his open chat says so at once and stops taking messages.
    status, _ = eve_api.call("DELETE", f"/chats/{group['id']}/members/{bob_api.user['id']}")
    assert status == 204, status
    wait_for(bob, lambda d: d.find_element(By.ID, "chat-status").text == "You are no longer a member of this chat.")
    assert not bob.find_element(By.ID, "chat-input").is_enabled()
    no_script_errors(bob)


@test
def a_deactivated_account_is_taken_to_the_login_screen_by_its_stream(ctx):
    server = ctx["server"]
    eve_api, bob_api = two_employees(server)
    admin_api = Api(server, "admin", ADMIN_PASSWORD)
    bob = ctx["browser"]()
    login(bob, server, "bob", EMPLOYEE_PASSWORD)
    bob.get(server.url + "/#/chat")
    screen(bob, "chat")
    wait_for(bob, realtime_open)
    status, _ = admin_api.call("PATCH", f"/admin/users/{bob_api.user['id']}", {"active": False})
    assert status == 200, status
    # The server closes the socket; the reconnects are refused; the console finds out why.
    wait_for(bob, lambda d: d.find_elements(By.ID, "login-form"), timeout=20)
    assert "session has ended" in bob.find_element(By.CSS_SELECTOR, "#main").text
    assert not realtime_open(bob)


@test
def new_message_starts_chats_and_system_lines_say_who_came_and_went_in_each_readers_language(ctx):
    server, eve_api, bob_api, eve, bob = eve_and_bob_on_the_chat_list(ctx, bob_language="es")
    create_employee(server, "carla", "Carla Cook")
    carla_id = Api(server, "carla", EMPLOYEE_PASSWORD).user["id"]
    bob_id = bob_api.user["id"]

    # "New message": a person found by name opens the direct chat, with no system line in it.
    eve.get(server.url + "/#/chat")
    screen(eve, "chat")
    wait_for(eve, lambda d: d.find_element(By.ID, "chat-new")).click()
    wait_for(eve, lambda d: d.find_element(By.ID, "direct-filter")).send_keys("bob")
    wait_for(eve, lambda d: [li.get_attribute("data-user-id") for li in d.find_elements(By.CSS_SELECTOR, "#direct-people .member")] == [str(bob_id)])
    eve.find_element(By.CSS_SELECTOR, f'#direct-people [data-user-id="{bob_id}"] [data-action="message"]').click()
    wait_for(eve, lambda d: d.find_elements(By.ID, "chat-title") and d.find_element(By.ID, "chat-title").text == "Bob Builder")
    assert system_lines(eve) == []

    # And a new group with two people: the creation line, in each reader's language.
    eve.get(server.url + "/#/chat?view=new")
    wait_for(eve, lambda d: d.find_element(By.ID, "group-name")).send_keys("Lunch")
    for uid in (bob_id, carla_id):
        wait_for(eve, lambda d: d.find_element(By.ID, f"group-member-{uid}")).click()
    eve.find_element(By.ID, "group-create").click()
    wait_for(eve, lambda d: d.find_elements(By.ID, "chat-title") and d.find_element(By.ID, "chat-title").text == "Lunch")
    wait_for(eve, lambda d: system_lines(d) == ["You created the group"])
    group_id = int(eve.execute_script("return new URLSearchParams(location.hash.split('?')[1]).get('id')"))
    item = f'#chat-list .chat-item[data-chat-id="{group_id}"]'
    wait_for(bob, lambda d: d.find_element(By.CSS_SELECTOR, item + " .chat-preview").text == "Eve Employee creó el grupo")
    assert not bob.find_elements(By.CSS_SELECTOR, item + " .badge.unread"), "a system line is never unread"
    open_chat_from_list(bob, "Lunch")
    wait_for(bob, lambda d: system_lines(d) == ["Eve Employee creó el grupo"])
    wait_for(bob, realtime_open)

    # Removing a member asks first, in place; nothing happens until it is confirmed.
    eve.find_element(By.ID, "chat-info-link").click()
    row = f'#info-members .member[data-user-id="{carla_id}"]'
    wait_for(eve, lambda d: d.find_element(By.CSS_SELECTOR, row + ' [data-action="remove"]')).click()
    sure = wait_for(eve, lambda d: d.find_element(By.CSS_SELECTOR, row + ' [data-action="remove-yes"]'))
    assert sure.is_displayed() and "Carla Cook" in eve.find_element(By.CSS_SELECTOR, row + " .confirm-question").text
    assert len(eve.find_elements(By.CSS_SELECTOR, "#info-members .member")) == 3, "not removed before the confirmation"
    eve.find_element(By.CSS_SELECTOR, row + ' [data-action="remove-no"]').click()
    assert len(eve.find_elements(By.CSS_SELECTOR, "#info-members .member")) == 3
    eve.find_element(By.CSS_SELECTOR, row + ' [data-action="remove"]').click()
    wait_for(eve, lambda d: d.find_element(By.CSS_SELECTOR, row + ' [data-action="remove-yes"]')).click()
    wait_for(eve, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#info-members .member")) == 2)
    wait_for(bob, lambda d: system_lines(d) == ["Eve Employee creó el grupo", "Eve Employee quitó a Carla Cook"])
    click_when_there(eve, f'#info-members .member[data-user-id="{bob_id}"] [data-action="grant"]')
    wait_for(bob, lambda d: system_lines(d)[-1:] == ["Eve Employee te hizo admin"])
    assert not bob.find_elements(By.CSS_SELECTOR, '#chat-messages .msg-system [data-action]'), "no edit, delete or translate on a line"
    eve.find_element(By.ID, "info-back").click()
    wait_for(eve, lambda d: system_lines(d) == ["You created the group", "You removed Carla Cook", "You made Bob Builder an admin"])
    wait_for(eve, realtime_open)

    # Leaving asks first too; the others see the line live.
    bob.find_element(By.ID, "chat-info-link").click()
    wait_for(bob, lambda d: d.find_element(By.ID, "info-leave")).click()
    wait_for(bob, lambda d: d.find_element(By.CSS_SELECTOR, '[data-action="leave-yes"]').is_displayed())
    assert bob.find_element(By.CSS_SELECTOR, "#info-actions .confirm-question").text.startswith("¿Salir de este grupo?")
    bob.find_element(By.CSS_SELECTOR, '[data-action="leave-yes"]').click()
    wait_for(bob, lambda d: d.execute_script("return location.hash") == "#/chat")
    wait_for(eve, lambda d: system_lines(d)[-1:] == ["Bob Builder left the group"])
    assert [m.value_of_css_property("text-align") for m in eve.find_elements(By.CSS_SELECTOR, "#chat-messages .msg-system")] == ["center"] * 4
    problems = axe_problems(eve, "chat with system lines")
    shot(eve, ctx, "chat-system-lines")
    # At phone width: the lines and the "New message" screen fit without sideways scrolling.
    # (axe runs at desktop width, as for the other chat screens: the phone header is not this test's.)
    eve.set_window_size(390, 800)
    wait_for(eve, lambda d: horizontal_overflow(d) <= 0)
    shot(eve, ctx, "chat-system-lines-phone")
    eve.get(server.url + "/#/chat?view=new")
    wait_for(eve, lambda d: d.find_elements(By.CSS_SELECTOR, "#direct-people .member"))
    assert horizontal_overflow(eve) <= 0
    shot(eve, ctx, "chat-new-message-phone")
    eve.set_window_size(1200, 900)
    problems += axe_problems(eve, "new message")
    assert not problems, "\n".join(problems)
    no_script_errors(eve, bob)


@test
def chat_screens_pass_an_automated_accessibility_check(ctx):
    server = ctx["server"]
    eve_api, bob_api = two_employees(server)
    status, group = eve_api.call("POST", "/chats", {"name": "Design", "description": "Pixels", "tags": ["ui"], "public": True,
                                                    "memberIds": [bob_api.user["id"]]})
    assert status == 201, (status, group)
    bob_api.call("POST", f"/chats/{group['id']}/messages", {"body": "@eve have a look at https://example.com", "clientId": "a1"})
    eve_api.call("POST", f"/chats/{group['id']}/messages", {"body": "Looking now", "clientId": "a2"})
    eve_api.call("PUT", f"/contacts/{bob_api.user['id']}")
    d = ctx["browser"]()
    login(d, server, "eve", EMPLOYEE_PASSWORD)
    problems = []
    for where, hash_, ready in [
        ("chat list", "#/chat", "#chat-list .chat-item"),
        ("chat view", f"#/chat?id={group['id']}", "#chat-messages .msg"),
        ("group info", f"#/chat?id={group['id']}&info=1", "#info-members .member"),
        ("new group", "#/chat?view=new", "#group-members li"),
        ("public groups", "#/chat?view=public", "#public-list .chat-item"),
        ("contacts", "#/chat?view=contacts", "#contacts-list .member"),
        ("search", "#/chat?view=search&q=look", "#search-results .result"),
    ]:
        d.get(server.url + "/" + hash_)
        screen(d, "chat")
        wait_for(d, lambda d: d.find_elements(By.CSS_SELECTOR, ready))
        problems += axe_problems(d, where)
        shot(d, ctx, "chat-" + where.replace(" ", "-"))
    d.set_window_size(375, 740)
    d.get(server.url + f"/#/chat?id={group['id']}")
    wait_for(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#chat-messages .msg"))
    assert horizontal_overflow(d) <= 0
    shot(d, ctx, "chat-phone")
    assert not problems, "\n".join(problems)


# --- Holidays (issue 9) -----------------------------------------------------------------------

def set_date(d, element_id, value):
    """Picks a date in an <input type=date> the way the picker does (its typing differs by locale)."""
    d.execute_script("""const e = document.getElementById(arguments[0]); e.value = arguments[1];
        e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true}));""",
                     element_id, value)


def days_text(n):
    """A number of days as the English console writes it: "1 day", "4 days", "19.5 days"."""
    value = f"{n:g}"
    return f"{value} day" if n == 1 else f"{value} days"


def admin_and_eve(server):
    """An admin and the employee Eve, each with an API session."""
    create_admin(server)
    create_employee(server)
    return Api(server, "admin", ADMIN_PASSWORD), Api(server, "eve", EMPLOYEE_PASSWORD)


@test
def an_employee_asks_for_days_with_a_half_day_and_an_admin_approves_live(ctx):
    server = ctx["server"]
    create_admin(server)
    create_employee(server)
    create_employee(server, "bob", "Bob Builder")
    admin_api = Api(server, "admin", ADMIN_PASSWORD)
    bob_api = Api(server, "bob", EMPLOYEE_PASSWORD)
    # A leave over two weeks from a fixed reference, the first Monday of March next year, so the
    # count never depends on the day the test runs: Monday to the Wednesday after, the last
    # morning only, is 7.5 working days, all in one year.
    first = first_monday(datetime.date.today().year + 1, 3)
    year = first.year
    start, end = first.isoformat(), (first + datetime.timedelta(days=9)).isoformat()
    # Bob is already away on some of those days (approved), so the admin sees him as "also away".
    status, bobs = bob_api.call("POST", "/holidays", {"start": start, "end": (first + datetime.timedelta(days=3)).isoformat()})
    assert status == 201, (status, bobs)
    status, _ = admin_api.call("POST", f"/admin/holidays/{bobs['id']}/approve", {})
    assert status == 200, status

    admin = ctx["browser"]()
    login(admin, server, "admin", ADMIN_PASSWORD)
    screen(admin, "home")
    wait_for(admin, lambda d: d.find_element(By.ID, "home-pending-count").text == "0")
    wait_for(admin, realtime_open)

    eve = ctx["browser"]()
    login(eve, server, "eve", EMPLOYEE_PASSWORD)
    open_my_holidays(eve, server, year)
    assert text_content(eve.find_element(By.ID, "hol-summary-remaining")) == "23 days"
    # The form explains problems next to the field, focused, and forgets them once the field changes.
    set_date(eve, "hol-start", start)
    set_date(eve, "hol-end", (first - datetime.timedelta(days=1)).isoformat())
    eve.find_element(By.ID, "hol-submit").click()
    wait_for(eve, lambda d: d.find_element(By.ID, "hol-end-error").is_displayed())
    assert eve.find_element(By.ID, "hol-end-error").text == "The last day cannot be before the first day."
    assert active_id(eve) == "hol-end", active_id(eve)
    set_date(eve, "hol-end", end)
    assert not eve.find_element(By.ID, "hol-end-error").is_displayed()
    # Back at midday on the last day: a half day.
    eve.find_element(By.ID, "hol-halfEnd").click()
    eve.find_element(By.ID, "hol-note").send_keys("Family visit")
    # The form counts the working days as the dates are picked (the server's count must agree).
    wait_for(eve, lambda d: d.find_element(By.ID, "hol-count").text.startswith("That is "))
    counted = eve.find_element(By.ID, "hol-count").text
    wait_for(eve, realtime_open)
    eve.find_element(By.ID, "hol-submit").click()
    wait_for(eve, lambda d: "has been sent" in d.find_element(By.ID, "hol-form-status").text)
    wait_for(eve, lambda d: d.find_elements(By.CSS_SELECTOR, "#hol-requests [data-status='pending']"))
    eve_api = Api(server, "eve", EMPLOYEE_PASSWORD)
    mine = eve_api.call("GET", f"/holidays?year={year}")[1]
    request = next(r for r in mine["requests"] if r["start"] == start)
    assert request["halfEnd"] is True and request["days"] == 7.5, request
    assert counted == f"That is {days_text(request['days'])} of work.", (counted, request["days"])
    item = eve.find_element(By.CSS_SELECTOR, f"#hol-requests [data-request-id='{request['id']}']")
    assert "until midday on the last day" in item.text and "Waiting for a decision" in item.text, item.text
    assert days_text(request["days"]) in item.text, item.text
    # The same dates again overlap: said in words, on the first day's field.
    set_date(eve, "hol-start", start)
    set_date(eve, "hol-end", start)
    eve.find_element(By.ID, "hol-submit").click()
    wait_for(eve, lambda d: d.find_element(By.ID, "hol-start-error").is_displayed())
    assert "overlap" in eve.find_element(By.ID, "hol-start-error").text
    assert active_id(eve) == "hol-start", active_id(eve)

    # The admin's Home counted it live, and the request opens from there.
    wait_for(admin, lambda d: d.find_element(By.ID, "home-pending-count").text == "1")
    assert admin.find_element(By.ID, "home-pending-words").text == "request is waiting for your decision."
    shot(admin, ctx, "holiday-home-admin-pending")
    # Bob also asks for a day in Eve's second week: it waits, and the admin sees it beside his approved days.
    bobs_pending = ask_for_days(bob_api, first + datetime.timedelta(days=7), first + datetime.timedelta(days=7))
    wait_for(admin, lambda d: d.find_element(By.ID, "nav-pending-holidays"))
    admin.find_element(By.ID, "home-pending-link").click()
    screen(admin, "admin-holidays")
    # The most urgent decision leads the list: Eve's starts first.
    wait_for(admin, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#ah-list li[data-status='pending']")) == 2)
    order = [li.get_attribute("data-request-id") for li in admin.find_elements(By.CSS_SELECTOR, "#ah-list [data-request-id]")]
    assert order[:2] == [str(request["id"]), str(bobs_pending["id"])], order
    click_when_there(admin, f"#ah-list [data-request-id='{request['id']}'] a")
    wait_for(admin, lambda d: d.find_elements(By.CSS_SELECTOR, "#ah-detail[aria-busy='false'] #ah-approve"))
    assert admin.find_element(By.ID, "ah-title").text == "Request from Eve Employee"
    away = admin.find_element(By.ID, "ah-also-away")
    approved = away.find_element(By.CSS_SELECTOR, f"[data-request-id='{bobs['id']}']").text
    assert "Bob Builder" in approved and "Approved" in approved, approved
    waiting = away.find_element(By.CSS_SELECTOR, f"[data-request-id='{bobs_pending['id']}'][data-status='pending']").text
    assert "Bob Builder" in waiting and "Waiting for a decision" in waiting, waiting
    assert not admin.find_elements(By.ID, "ah-over-limit"), "no limit is set, so no warning"
    remaining_before = admin.find_element(By.ID, "ah-summary-remaining").text
    assert remaining_before == days_text(23 - request["days"]), remaining_before
    shot(admin, ctx, "holiday-request-admin")
    admin.find_element(By.ID, "ah-note").send_keys("Have a good time")
    admin.find_element(By.ID, "ah-approve").click()
    wait_for(admin, lambda d: d.find_element(By.ID, "ah-done").text.endswith("is approved."))
    wait_for(admin, lambda d: d.find_element(By.ID, "ah-request").get_attribute("data-status") == "approved")
    assert "Approved" in admin.find_element(By.ID, "ah-history").text

    # Eve sees the decision live: the status, the remaining days and a notice about it.
    wait_for(eve, lambda d: d.find_elements(By.CSS_SELECTOR, f"#hol-requests [data-request-id='{request['id']}'][data-status='approved']"))
    wait_for(eve, lambda d: "Approved" in d.find_element(By.ID, "hol-live").text)
    assert text_content(eve.find_element(By.ID, "hol-summary-remaining")) == days_text(23 - request["days"])
    assert text_content(eve.find_element(By.ID, "hol-summary-approved")) == days_text(request["days"])
    assert "Have a good time" in eve.find_element(By.CSS_SELECTOR, f"#hol-requests [data-request-id='{request['id']}']").text
    shot(eve, ctx, "holiday-mine-approved")
    eve.get(server.url + "/#/notices?tab=mine")
    screen(eve, "notices")
    wait_for(eve, lambda d: d.find_elements(By.CSS_SELECTOR, "#notices-list .notice-item"))
    holiday_notices = [e.text for e in eve.find_elements(By.CSS_SELECTOR, "#notices-list .notice-item") if "For you" in e.text]
    assert holiday_notices, eve.find_element(By.ID, "notices-list").text
    # A day off today (to the next working day, so there is one), approved: the directory, her
    # page and a chat with her say she is away until its last day.
    today = datetime.datetime.now(datetime.timezone.utc).date()
    back = today + datetime.timedelta(days={5: 2, 6: 1}.get(today.weekday(), 0))  # Saturday, Sunday: to Monday
    day_off = ask_for_days(eve_api, today, back)
    assert admin_api.call("POST", f"/admin/holidays/{day_off['id']}/approve", {})[0] == 200
    until = back.isoformat()
    eve.get(server.url + "/#/directory")
    screen(eve, "directory")
    wait_for(eve, lambda d: d.find_elements(By.CSS_SELECTOR, "#dir-list[aria-busy='false'] .person"))
    card = eve.find_element(By.CSS_SELECTOR, f"#dir-list [data-user-id='{request['userId']}']")
    badge = card.find_element(By.CSS_SELECTOR, ".badge.away")
    assert badge.get_attribute("data-until") == until and badge.text.startswith("Away until"), badge.text
    admin.get(server.url + f"/#/person?id={request['userId']}")
    screen(admin, "person")
    wait_for(admin, lambda d: d.find_element(By.ID, "person-away").get_attribute("data-until") == until)
    # From her page, an admin opens her holidays year by year.
    admin.find_element(By.ID, "person-holidays").click()
    screen(admin, "admin-holidays")
    wait_for(admin, lambda d: d.find_elements(By.CSS_SELECTOR, f"#ah-person-list [data-request-id='{day_off['id']}'][data-status='approved']"))
    shot(eve, ctx, "holiday-directory-away")
    # A chat with her says so beside her name.
    status, chat = admin_api.call("POST", "/chats/direct", {"userId": request["userId"]})
    assert status in (200, 201), (status, chat)
    admin.get(server.url + f"/#/chat?id={chat['id']}")
    screen(admin, "chat")
    wait_for(admin, lambda d: d.find_element(By.ID, "chat-away").get_attribute("data-until") == until)
    # The team calendar of that March shows both absences, on a phone as a list without sideways scrolling.
    eve.set_window_size(375, 740)
    eve.get(server.url + f"/#/calendar?month={year}-03")
    screen(eve, "calendar")
    wait_for(eve, lambda d: d.find_elements(By.CSS_SELECTOR, "#cal-body[aria-busy='false']"))
    names = eve.find_element(By.ID, "cal-list").text
    assert "Eve Employee" in names and "Bob Builder" in names, names
    assert horizontal_overflow(eve) <= 0
    shot(eve, ctx, "holiday-calendar-phone")
    # Month by month.
    this_month = eve.find_element(By.ID, "cal-month").text
    eve.find_element(By.ID, "cal-next").click()
    wait_for(eve, lambda d: d.find_elements(By.CSS_SELECTOR, "#cal-body[aria-busy='false']") and d.find_element(By.ID, "cal-month").text != this_month)
    eve.find_element(By.ID, "cal-prev").click()
    wait_for(eve, lambda d: d.find_element(By.ID, "cal-month").text == this_month)
    no_script_errors(admin, eve)


@test
def holiday_screens_in_spanish_and_the_admin_lists(ctx):
    server = ctx["server"]
    admin_api, eve_api = admin_and_eve(server)
    year = datetime.datetime.now(datetime.timezone.utc).year + 1
    status, _ = admin_api.call("POST", "/admin/public-holidays", {"date": f"{year}-01-06", "name": "Reyes"})
    assert status == 201, status
    d = ctx["browser"]("es-ES")
    login(d, server, "admin", ADMIN_PASSWORD)
    Select(d.find_element(By.ID, "lang")).select_by_value("es")
    d.get(server.url + f"/#/admin/leave?year={year}")
    screen(d, "admin-leave")
    wait_for(d, lambda d: "Reyes" in d.find_element(By.ID, "ph-list").text)
    assert d.find_element(By.TAG_NAME, "h1").text == "Festivos y tipos de ausencia"
    # A new kind of leave that needs no approval: a request of it is approved at once.
    d.find_element(By.ID, "lt-name").send_keys("Mudanza")
    assert d.find_element(By.ID, "lt-key").get_attribute("value") == "mudanza"
    d.find_element(By.ID, "lt-new-approval").click()
    d.find_element(By.ID, "lt-add").click()
    wait_for(d, lambda d: "Mudanza" in d.find_element(By.ID, "lt-list").text)
    assert "se aprueba al momento" in d.find_element(By.CSS_SELECTOR, "#lt-list [data-key='mudanza']").text
    shot(d, ctx, "holiday-admin-leave-es")
    # Someone's own number of days is one choice away.
    wait_for(d, lambda d: d.find_elements(By.CSS_SELECTOR, f"#al-person option[value='{eve_api.user['id']}']"))
    Select(d.find_element(By.ID, "al-person")).select_by_value(str(eve_api.user["id"]))
    assert d.find_element(By.ID, "al-open").get_attribute("href").endswith(f"#/admin/holidays?user={eve_api.user['id']}&year={year}")
    assert not d.find_elements(By.CSS_SELECTOR, "#lt-list [data-key='vacation'] [data-action='delete']"), "holiday stays"
    status, moved = eve_api.call("POST", "/holidays", {"start": f"{year}-01-05", "end": f"{year}-01-07", "type": "mudanza"})
    assert status == 201 and moved["status"] == "approved", (status, moved)
    # The public holiday does not count: 2 working days of 3 (unless the 5th or 7th is a weekend day).
    expected = sum(1 for day in (5, 7) if datetime.date(year, 1, day).isoweekday() <= 5)
    assert moved["days"] == expected, moved
    # An admin knows the working week, so the form counts the working days as the dates are picked.
    d.get(server.url + f"/#/holidays?year={year}")
    screen(d, "holidays")
    wait_for(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#hol-requests[aria-busy='false']"))
    set_date(d, "hol-start", f"{year}-01-05")
    set_date(d, "hol-end", f"{year}-01-07")
    d.find_element(By.ID, "hol-halfStart").click()
    counted = expected - (0.5 if datetime.date(year, 1, 5).isoweekday() <= 5 else 0)
    words = f"{counted:g}".replace(".", ",") + (" día" if counted == 1 else " días")
    wait_for(d, lambda d: d.find_element(By.ID, "hol-count").text == f"Son {words} de trabajo.")
    d.get(server.url + f"/#/admin/holidays?user={eve_api.user['id']}&year={year}")
    screen(d, "admin-holidays")
    wait_for(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#ah-person[aria-busy='false']"))
    assert "Aprobada" in d.find_element(By.ID, "ah-person-list").text
    # An allowance of its own for that year.
    field_el = d.find_element(By.ID, "ah-allowance")
    field_el.clear()
    field_el.send_keys("25.5")
    d.find_element(By.ID, "ah-allowance-save").click()
    wait_for(d, lambda d: d.find_element(By.ID, "ah-person-done").text)
    wait_for(d, lambda d: text_content(d.find_element(By.ID, "ah-person-summary-allowance")) == "25,5 días")
    assert eve_api.call("GET", f"/holidays?year={year}")[1]["allowance"] == 25.5
    shot(d, ctx, "holiday-person-years-es")
    d.get(server.url + "/#/admin/holidays")
    screen(d, "admin-holidays")
    wait_for(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#ah-list[aria-busy='false']"))
    Select(d.find_element(By.ID, "ah-year")).select_by_value(str(year))
    wait_for(d, lambda d: d.find_elements(By.CSS_SELECTOR, f"#ah-list [data-request-id='{moved['id']}']"))
    csv = d.find_element(By.ID, "ah-csv").get_attribute("href")
    assert csv.endswith(f"/api/v1/admin/holidays.csv?year={year}"), csv
    exported = d.execute_async_script("""const done = arguments[arguments.length - 1];
        fetch(arguments[0], {credentials: 'same-origin'}).then(r => r.text()).then(done, e => done(String(e)));""", csv)
    assert "mudanza" in exported or "Mudanza" in exported, exported[:300]
    # The calendar feed link, copied from the team calendar.
    d.get(server.url + "/#/calendar")
    screen(d, "calendar")
    wait_for(d, lambda d: d.find_element(By.ID, "cal-feed")).click()
    wait_for(d, lambda d: d.find_elements(By.ID, "cal-feed-url"))
    feed = d.find_element(By.ID, "cal-feed-url").get_attribute("value")
    assert "/holidays/calendar.ics?token=" in feed, feed
    assert d.find_element(By.ID, "cal-feed").text == "Obtener un enlace nuevo"
    no_script_errors(d)


def first_monday(year, month):
    """The first Monday of a month: a Monday–Wednesday from it holds three working days."""
    day = datetime.date(year, month, 1)
    return day + datetime.timedelta(days=(7 - day.weekday()) % 7)


def ask_for_days(api, start, end, **extra):
    """A holiday request filed through the API (the test is about what happens to it next)."""
    status, request = api.call("POST", "/holidays", {"start": start.isoformat(), "end": end.isoformat(), **extra})
    assert status == 201, (status, request)
    return request


def open_my_holidays(d, server, year):
    d.get(server.url + f"/#/holidays?year={year}")
    screen(d, "holidays")
    wait_for(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#hol-requests[aria-busy='false']"))


def open_request(d, server, request_id):
    """An admin's detail of one request, drawn."""
    d.get(server.url + f"/#/admin/holidays?id={request_id}")
    screen(d, "admin-holidays")
    wait_for(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#ah-detail[aria-busy='false'] #ah-request"))


def my_request_shows(d, request_id, status, words):
    """My holidays lists the request with `status` and every one of `words` in its text."""
    def shown(d):
        found = d.find_elements(By.CSS_SELECTOR, f"#hol-requests [data-request-id='{request_id}'][data-status='{status}']")
        return found and all(w in found[0].text for w in words)
    wait_for(d, shown)


def decide_in_detail(d, action, note=None, done_words=None):
    if note:
        d.find_element(By.ID, "ah-note").send_keys(note)
    click_when_there(d, f"#ah-{action}")
    wait_for(d, lambda d: d.find_element(By.ID, "ah-done").text.endswith(done_words))


def stop_stream(d):
    """The page stops hearing live events, as when its connection has dropped unnoticed."""
    d.execute_script("return import('/assets/realtime.js').then(m => m.stop())")


@test
def an_admin_rejects_with_a_note_approves_and_reopens_and_the_employee_sees_each(ctx):
    server = ctx["server"]
    _, eve_api = admin_and_eve(server)
    year = datetime.date.today().year + 1
    march, may = first_monday(year, 3), first_monday(year, 5)
    refused = ask_for_days(eve_api, march, march + datetime.timedelta(days=2))
    granted = ask_for_days(eve_api, may, may + datetime.timedelta(days=2))
    eve = ctx["browser"]()
    login(eve, server, "eve", EMPLOYEE_PASSWORD)
    open_my_holidays(eve, server, year)
    my_request_shows(eve, refused["id"], "pending", ["Waiting for a decision"])
    wait_for(eve, realtime_open)
    admin = ctx["browser"]()
    login(admin, server, "admin", ADMIN_PASSWORD)

    open_request(admin, server, refused["id"])
    decide_in_detail(admin, "reject", "The team is short that week", "is rejected.")
    # The detail says so at once and draws the request again from the server a moment later.
    wait_for(admin, lambda d: "Not approved" in d.find_element(By.ID, "ah-request").text
             and d.find_element(By.ID, "ah-final").is_displayed())
    my_request_shows(eve, refused["id"], "rejected", ["Not approved", "Note from the administrator", "The team is short that week"])
    wait_for(eve, lambda d: "Not approved" in d.find_element(By.ID, "hol-live").text)

    open_request(admin, server, granted["id"])
    decide_in_detail(admin, "approve", done_words="is approved.")
    my_request_shows(eve, granted["id"], "approved", ["Approved"])
    decide_in_detail(admin, "reopen", "Let us talk about the dates first", "waits for a decision again.")
    wait_for(admin, lambda d: d.find_elements(By.ID, "ah-approve") and d.find_elements(By.ID, "ah-reject"))
    my_request_shows(eve, granted["id"], "pending", ["Waiting for a decision", "Let us talk about the dates first"])
    wait_for(eve, lambda d: "Waiting for a decision" in d.find_element(By.ID, "hol-live").text)
    # The refused request stays as it was.
    my_request_shows(eve, refused["id"], "rejected", ["The team is short that week"])
    no_script_errors(admin, eve)


@test
def over_the_absence_limit_the_admin_is_warned_and_an_approval_reaches_the_employees_home_live(ctx):
    server = ctx["server"]
    eve_api, bob_api = two_employees(server)
    admin_api = Api(server, "admin", ADMIN_PASSWORD)
    status, _ = admin_api.call("PUT", "/admin/settings", {"maxSimultaneousAbsences": 1})
    assert status == 200, status
    today = datetime.datetime.now(datetime.timezone.utc).date()
    end = today + datetime.timedelta(days=3)
    bobs = ask_for_days(bob_api, today, end)
    assert admin_api.call("POST", f"/admin/holidays/{bobs['id']}/approve", {})[0] == 200
    eves = ask_for_days(eve_api, today, end)
    # Cleo asks for the same days too: her request waits, so it is listed with its status and not counted.
    create_employee(server, "cleo", "Cleo Clerk")
    cleos = ask_for_days(Api(server, "cleo", EMPLOYEE_PASSWORD), today, end)
    # Eve's Home lists her request, waiting.
    eve = ctx["browser"]()
    login(eve, server, "eve", EMPLOYEE_PASSWORD)
    screen(eve, "home")
    wait_for(eve, lambda d: d.find_elements(By.CSS_SELECTOR, f"#home-my-requests [data-request-id='{eves['id']}'][data-status='pending']"))
    assert "Waiting for a decision" in eve.find_element(By.ID, "home-my-requests").text
    remaining_before = eve.find_element(By.ID, "home-remaining").text
    wait_for(eve, realtime_open)

    admin = ctx["browser"]()
    login(admin, server, "admin", ADMIN_PASSWORD)
    open_request(admin, server, eves["id"])
    assert "Bob Builder" in admin.find_element(By.ID, "ah-also-away").text
    waiting = admin.find_element(By.CSS_SELECTOR, f"#ah-also-away [data-request-id='{cleos['id']}'][data-status='pending']").text
    assert "Cleo Clerk" in waiting and "Waiting for a decision" in waiting, waiting
    assert admin.find_element(By.ID, "ah-over-limit").text == (
        "Careful: approving this request would put more people away at the same time than the company allows (1 person at most). "
        "Only approved leave is counted; requests still waiting are listed below with their status.")
    problems = axe_problems(admin, "a request's detail with the warning and a pending overlap")
    assert not problems, "\n".join(problems)
    shot(admin, ctx, "holiday-request-over-limit")
    # Approved anyway: Eve's Home follows at once.
    decide_in_detail(admin, "approve", done_words="is approved.")
    wait_for(eve, lambda d: d.find_elements(By.CSS_SELECTOR, f"#home-my-requests [data-request-id='{eves['id']}'][data-status='approved']"))
    assert "Approved" in eve.find_element(By.ID, "home-my-requests").text
    assert eve.find_element(By.ID, "home-remaining").text == remaining_before, "approving moves pending days to approved"
    no_script_errors(admin, eve)


@test
def too_many_days_and_a_request_changed_meanwhile_are_said_in_words(ctx):
    server = ctx["server"]
    admin_api, eve_api = admin_and_eve(server)
    year = datetime.date.today().year + 1
    status, _ = admin_api.call("PUT", f"/admin/users/{eve_api.user['id']}/allowances/{year}", {"days": 2})
    assert status == 204, status
    eve = ctx["browser"]()
    login(eve, server, "eve", EMPLOYEE_PASSWORD)
    open_my_holidays(eve, server, year)
    # Three working days with two left: said on the dates, with what is left.
    monday = first_monday(year, 3)
    tuesday = monday + datetime.timedelta(days=1)
    set_date(eve, "hol-start", monday.isoformat())
    set_date(eve, "hol-end", (monday + datetime.timedelta(days=2)).isoformat())
    eve.find_element(By.ID, "hol-submit").click()
    wait_for(eve, lambda d: d.find_element(By.ID, "hol-start-error").is_displayed())
    assert eve.find_element(By.ID, "hol-start-error").text == f"You do not have enough days left in {year} for this request: 2 days left."
    assert active_id(eve) == "hol-start", active_id(eve)
    assert not eve.find_elements(By.CSS_SELECTOR, "#hol-requests [data-request-id]"), "nothing was filed"

    # A request decided while the page had not heard (its stream down): Cancel says in words
    # that it changed, and the list then shows it as it is.
    transition = "This request can no longer be changed that way. Its status has changed; the page now shows it."
    one_day, other_day = ask_for_days(eve_api, monday, monday), ask_for_days(eve_api, tuesday, tuesday)
    open_my_holidays(eve, server, year)
    my_request_shows(eve, other_day["id"], "pending", ["Waiting for a decision"])
    stop_stream(eve)
    assert admin_api.call("POST", f"/admin/holidays/{other_day['id']}/reject", {})[0] == 200
    click_when_there(eve, f"#hol-requests [data-request-id='{other_day['id']}'] [data-action='cancel']")
    click_when_there(eve, f"#hol-requests [data-request-id='{other_day['id']}'] [data-action='cancel-yes']")
    wait_for(eve, lambda d: d.find_element(By.ID, "hol-list-status").text == transition)
    my_request_shows(eve, other_day["id"], "rejected", ["Not approved"])

    # The same for an admin deciding a request its owner has just cancelled.
    admin = ctx["browser"]()
    login(admin, server, "admin", ADMIN_PASSWORD)
    open_request(admin, server, one_day["id"])
    stop_stream(admin)
    assert eve_api.call("POST", f"/holidays/{one_day['id']}/cancel")[0] == 200
    admin.find_element(By.ID, "ah-approve").click()
    wait_for(admin, lambda d: d.find_element(By.ID, "ah-done").text == transition)
    wait_for(admin, lambda d: d.find_element(By.ID, "ah-request").get_attribute("data-status") == "cancelled")
    assert "Cancelled" in admin.find_element(By.ID, "ah-request").text
    assert not admin.find_elements(By.ID, "ah-approve")
    no_script_errors(admin, eve)


@test
def leave_types_are_edited_and_deleted_and_a_public_holiday_is_removed(ctx):
    server = ctx["server"]
    create_admin(server)
    admin_api = Api(server, "admin", ADMIN_PASSWORD)
    year = datetime.date.today().year + 1
    for key, name in (("sick", "Sick leave"), ("training", "Training")):
        status, _ = admin_api.call("POST", "/admin/leave-types", {"key": key, "name": name, "countsAgainstAllowance": True, "needsApproval": True})
        assert status == 201, status
    status, _ = admin_api.call("POST", "/admin/public-holidays", {"date": f"{year}-05-01", "name": "Labour Day"})
    assert status == 201, status
    d = ctx["browser"]()
    login(d, server, "admin", ADMIN_PASSWORD)
    d.get(server.url + f"/#/admin/leave?year={year}")
    screen(d, "admin-leave")
    wait_for(d, lambda d: "Labour Day" in d.find_element(By.ID, "ph-list").text and "Training" in d.find_element(By.ID, "lt-list").text)

    # The public holidays come first on the page.
    click_when_there(d, f"#ph-list [data-date='{year}-05-01'] [data-action='delete']")
    click_when_there(d, f"#ph-list [data-date='{year}-05-01'] [data-action='delete-yes']")
    wait_for(d, lambda d: d.find_element(By.ID, "ph-status").text == "Labour Day has been removed.")
    wait_for(d, lambda d: d.find_element(By.ID, "ph-list").text == f"No public holidays in {year} yet.")

    sick = d.find_element(By.CSS_SELECTOR, "#lt-list [data-key='sick']")
    type_id = sick.get_attribute("data-id")
    sick.find_element(By.CSS_SELECTOR, "[data-action='edit']").click()
    name = wait_for(d, lambda d: d.find_element(By.ID, f"lt-edit-{type_id}-name"))
    name.clear()
    name.send_keys("Sick day")
    d.find_element(By.ID, f"lt-edit-{type_id}-counts").click()
    d.find_element(By.ID, f"lt-edit-{type_id}-approval").click()
    d.find_element(By.ID, f"lt-edit-{type_id}-save").click()
    wait_for(d, lambda d: d.find_element(By.ID, "lt-status").text == "Sick day has been saved.")
    wait_for(d, lambda d: "Sick day" in d.find_element(By.CSS_SELECTOR, "#lt-list [data-key='sick']").text)
    assert "Does not count against the year's days · approved at once" in d.find_element(By.CSS_SELECTOR, "#lt-list [data-key='sick']").text

    click_when_there(d, "#lt-list [data-key='training'] [data-action='delete']")
    click_when_there(d, "#lt-list [data-key='training'] [data-action='delete-yes']")
    wait_for(d, lambda d: d.find_element(By.ID, "lt-status").text == "Training has been deleted.")
    wait_for(d, lambda d: not d.find_elements(By.CSS_SELECTOR, "#lt-list [data-key='training']"))

    # All of it holds after a reload.
    d.refresh()
    screen(d, "admin-leave")
    wait_for(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#lt-list[aria-busy='false'] [data-key='sick']"))
    assert "Training" not in d.find_element(By.ID, "lt-list").text and "Sick day" in d.find_element(By.ID, "lt-list").text
    wait_for(d, lambda d: d.find_element(By.ID, "ph-list").text == f"No public holidays in {year} yet.")
    no_script_errors(d)


import feed_tests  # noqa: E402,F401  the company feed's tests register themselves with @test
import translation_tests  # noqa: E402,F401  (its tests join TESTS; it uses the helpers above)
import push_tests  # noqa: E402,F401  (Web Push: the service worker, the device switch, a chat's level)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--only", help="run the tests whose name matches this regular expression (a part of the name is enough)")
    parser.add_argument("--shots", default="bench-results/screenshots")
    args = parser.parse_args()
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"browser tests: no binary at {args.binary}")
    passed = failed = 0
    for fn in TESTS:
        if args.only and not re.search(args.only, fn.__name__):
            continue
        server = None
        opened = []

        def open_browser(lang="en-US"):
            # Every browser a test opens is closed after it, passed or failed.
            opened.append(browser(lang))
            return opened[-1]

        started = time.time()
        try:
            # Cheap password hashes keep logins fast; the cost is a setting, not a code path. The
            # feed and translation stand-ins listen on 127.0.0.1, which outbound calls may not
            # reach unless allowed.
            server = Server(os.path.abspath(args.binary), extra=["--password-hash-log-n", "10", "--outbound-allow", "127.0.0.1"])
            fn({"server": server, "browser": open_browser, "shots": args.shots})
            passed += 1
            print(f"PASS {fn.__name__} ({time.time() - started:.1f}s)", flush=True)
        except Exception:
            failed += 1
            print(f"FAIL {fn.__name__}", flush=True)
            traceback.print_exc()
        finally:
            for b in opened:
                try:
                    b.quit()
                except Exception:  # already closed by the test
                    pass
            if server:
                server.stop()
    print(f"browser: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
