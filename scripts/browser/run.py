#!/usr/bin/env python3
"""Browser tests: the real binary on a free loopback port, driven by headless Chromium.

Run by `make test` (through `make test-browser`). Each test gets a fresh data directory and
server. Ends with the line `N passed, N failed`; exits non-zero when any test failed.
"""
import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import traceback

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

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
    return WebDriverWait(driver, timeout).until(lambda d: condition(d))


def severe_logs(driver):
    return [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


@test
def console_loads_under_its_csp_without_errors(ctx):
    d = ctx["browser"]()
    try:
        d.get(ctx["server"].url + "/")
        assert d.title == "sgem-server", d.title
        status = wait_for(d, lambda d: d.find_element(By.ID, "health") if "ok" in d.find_element(By.ID, "health").get_attribute("class") else None)
        assert status.text == "Server is healthy.", status.text
        # The module script ran (it replaced the placeholder), so CSP allowed our own assets,
        # and nothing was blocked or failed.
        errors = severe_logs(d)
        assert not errors, errors
        os.makedirs(ctx["shots"], exist_ok=True)
        d.save_screenshot(os.path.join(ctx["shots"], "console-home.png"))
    finally:
        d.quit()


@test
def csp_blocks_injected_inline_script(ctx):
    d = ctx["browser"]()
    try:
        d.get(ctx["server"].url + "/")
        wait_for(d, lambda d: "ok" in d.find_element(By.ID, "health").get_attribute("class"))
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
def console_speaks_spanish(ctx):
    d = ctx["browser"]("es-ES")
    try:
        d.get(ctx["server"].url + "/")
        wait_for(d, lambda d: "ok" in d.find_element(By.ID, "health").get_attribute("class"))
        assert d.find_element(By.TAG_NAME, "h1").text == "Bienvenido a sgem-server"
        assert d.find_element(By.ID, "health").text == "El servidor funciona."
        assert d.find_element(By.TAG_NAME, "html").get_attribute("lang") == "es"
    finally:
        d.quit()


@test
def phone_width_layout_has_no_horizontal_scroll(ctx):
    d = ctx["browser"]()
    try:
        d.set_window_size(375, 740)
        d.get(ctx["server"].url + "/")
        wait_for(d, lambda d: "ok" in d.find_element(By.ID, "health").get_attribute("class"))
        overflow = d.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"page is {overflow}px wider than a phone screen"
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
            server = Server(os.path.abspath(args.binary))
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
