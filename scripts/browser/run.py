#!/usr/bin/env python3
"""Browser tests: the real binary on a free loopback port, driven by headless Chromium.

Run by `make test` (through `make test-browser`). Each test gets a fresh data directory and
server. Ends with the line `N passed, N failed`; exits non-zero when any test failed.
"""
import argparse
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import traceback
import zlib

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
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
        deadline = time.time() + 20
        line = ""
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if "listening on" in line:
                break
            if self.proc.poll() is not None:
                raise RuntimeError("server exited: " + self.proc.stderr.read())
        else:
            raise RuntimeError("server did not start: " + line)
        self.url = f"http://127.0.0.1:{self.port}"

    def admin(self, *args, stdin=None):
        return subprocess.run([self.binary_path(), "admin", *args, "--data-dir", self.dir],
                              input=stdin, capture_output=True, text=True, timeout=60)

    def binary_path(self):
        return self.proc.args[0]

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
    wait_for(d, lambda d: d.find_element(By.ID, "main").get_attribute("data-screen") == name)


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
        assert d.title == "Log in · sgem", d.title
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
def console_speaks_spanish_and_remembers_the_choice(ctx):
    server = ctx["server"]
    create_admin(server)
    d = ctx["browser"]("es-ES")
    try:
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
        screen(d, "directory")
        nav = [a.text for a in d.find_elements(By.CSS_SELECTOR, "#sidebar a")]
        assert nav[:6] == ["Directorio", "Vacaciones", "Avisos", "Chat", "Empresa", "Mi perfil"], nav
        assert "Usuarios" in nav, nav
        assert d.find_element(By.ID, "logout").text == "Cerrar sesión"
        shot(d, ctx, "directory-es")
        # Switch to English: the screen redraws at once and the choice survives a reload.
        Select(d.find_element(By.ID, "lang")).select_by_value("en")
        wait_for(d, lambda d: d.find_element(By.TAG_NAME, "h1").text == "Team directory")
        assert d.find_element(By.TAG_NAME, "html").get_attribute("lang") == "en"
        d.refresh()
        screen(d, "directory")
        assert d.find_element(By.TAG_NAME, "h1").text == "Team directory"
        assert d.find_element(By.ID, "logout").text == "Log out"
        # A section still to come says so politely, in the chosen language.
        d.get(server.url + "/#/holidays")
        screen(d, "holidays")
        assert d.find_element(By.TAG_NAME, "h1").text == "Holidays is coming soon"
    finally:
        d.quit()


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
        screen(d, "directory")
        wait_for(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#dir-list .person"))
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
        for route, name in (("#/profile", "profile"), ("#/admin/users", "admin-users"), ("#/directory", "directory")):
            d.get(server.url + "/" + route)
            screen(d, name)
            wait_for(d, lambda d: d.find_elements(By.CSS_SELECTOR, "main h2, main .person"))
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
        WebDriverWait(d, 10).until(EC.alert_is_present()).accept()
        wait_for(d, lambda d: d.find_element(By.ID, "secret-title").text == "Temporary password for Linus Torvalds")
        first, secret = secret, d.find_element(By.ID, "secret-password").get_attribute("value")
        assert len(secret) >= 10 and secret != first, (first, secret)
        # Deactivate (after confirming) and reactivate: the row and the message follow.
        row = "#admin-users li[data-username='linus']"
        d.find_element(By.CSS_SELECTOR, row + " button[data-action='deactivate']").click()
        WebDriverWait(d, 10).until(EC.alert_is_present()).accept()
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
        screen(d, "directory")
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


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--only", help="run the tests whose name contains this")
    parser.add_argument("--shots", default="bench-results/screenshots")
    args = parser.parse_args()
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"browser tests: no binary at {args.binary}")
    passed = failed = 0
    for fn in TESTS:
        if args.only and args.only not in fn.__name__:
            continue
        server = None
        started = time.time()
        try:
            # Cheap password hashes keep logins fast; the cost is a setting, not a code path.
            server = Server(os.path.abspath(args.binary), extra=["--password-hash-log-n", "10"])
            fn({"server": server, "browser": browser, "shots": args.shots})
            passed += 1
            print(f"PASS {fn.__name__} ({time.time() - started:.1f}s)", flush=True)
        except Exception:
            failed += 1
            print(f"FAIL {fn.__name__}", flush=True)
            traceback.print_exc()
        finally:
            if server:
                server.stop()
    print(f"browser: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
