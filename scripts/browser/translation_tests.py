"""Browser tests of translation (issue 10), against a small LibreTranslate stand-in.

run.py imports this file once its helpers exist, and the helpers and the one list of tests are
taken from it: from __main__ when it runs as the script, from `run` when something imports it.
"""
import json
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

run = sys.modules["run"] if "run" in sys.modules else sys.modules["__main__"]
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

LANGUAGES = [{"code": "en", "name": "English", "targets": ["es", "fr", "de"]},
             {"code": "es", "name": "Spanish", "targets": ["en", "fr", "de"]},
             {"code": "fr", "name": "French", "targets": ["en", "es", "de"]},
             {"code": "de", "name": "German", "targets": ["en", "es", "fr"]}]


class LibreTranslateStub:
    """LibreTranslate's two calls on 127.0.0.1: POST /translate answers "[<target>] " + q, as
    if detected Spanish (a text with UNTRANSLATABLE in it gets LibreTranslate's 400 instead);
    GET /languages lists four languages. Counts the calls it answers."""

    def __init__(self):
        self.calls = {"translate": 0, "languages": 0}
        self.requests = []
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def answer(self, status, body):
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_GET(self):
                if urllib.parse.urlsplit(self.path).path != "/languages":
                    return self.answer(404, {"error": "Not Found"})
                stub.count("languages", None)
                self.answer(200, LANGUAGES)

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if urllib.parse.urlsplit(self.path).path != "/translate":
                    return self.answer(404, {"error": "Not Found"})
                if "json" in (self.headers.get("Content-Type") or ""):
                    body = json.loads(raw or b"{}")
                else:  # LibreTranslate takes a form as well
                    body = {k: v[0] for k, v in urllib.parse.parse_qs(raw.decode()).items()}
                stub.count("translate", body)
                q, target = body.get("q", ""), body.get("target", "")
                if "UNTRANSLATABLE" in json.dumps(q):
                    return self.answer(400, {"error": "Cannot translate text"})
                text = [f"[{target}] {x}" for x in q] if isinstance(q, list) else f"[{target}] {q}"
                self.answer(200, {"translatedText": text, "detectedLanguage": {"language": "es", "confidence": 90}})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def count(self, what, body):
        with self.lock:
            self.calls[what] += 1
            if body is not None:
                self.requests.append(body)

    def translations(self):
        with self.lock:
            return self.calls["translate"]

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def message_item(d, text):
    """The open chat's message whose shown body is `text` (None while there is none)."""
    for item in d.find_elements(By.CSS_SELECTOR, "#chat-messages .msg"):
        bodies = item.find_elements(By.CSS_SELECTOR, ".msg-body")
        if bodies and run.text_content(bodies[0]) == text:
            return item
    return None


def click_action(d, text, action):
    """Clicks the `action` button of the message showing `text`, finding both again after a redraw."""
    def attempt(d):
        item = message_item(d, text)
        if not item:
            return False
        item.find_element(By.CSS_SELECTOR, f'[data-action="{action}"]').click()
        return True
    run.wait_for(d, attempt)


def shown_translation(d, text):
    """(its mark, its lang) for the message showing `text` as a translation; None while none does."""
    item = message_item(d, text)
    marks = item.find_elements(By.CSS_SELECTOR, ".msg-body.translated + .msg-translated") if item else []
    if not marks:
        return None
    return run.text_content(marks[0]), item.find_element(By.CSS_SELECTOR, ".msg-body").get_attribute("lang")


def shown_original(d, text):
    """True while a message shows `text` with no translation mark."""
    item = message_item(d, text)
    return bool(item) and not item.find_elements(By.CSS_SELECTOR, ".msg-translated")


def admin_sets_libretranslate(ctx, server, stub):
    d = ctx["browser"]()
    run.login(d, server, "admin", run.ADMIN_PASSWORD)
    d.get(server.url + "/#/admin/translation")
    run.screen(d, "admin-translation")
    run.wait_for(d, lambda d: d.find_elements(By.ID, "translation-form"))
    # Not set up yet, and said so; "Off" needs no details.
    assert d.find_element(By.ID, "translation-ready").text.startswith("Not set up yet"), d.find_element(By.ID, "translation-ready").text
    Select(d.find_element(By.ID, "translation-provider")).select_by_value("none")
    assert not d.find_element(By.ID, "translation-url").is_displayed()
    Select(d.find_element(By.ID, "translation-provider")).select_by_value("libretranslate")
    url = run.wait_for(d, lambda d: d.find_element(By.ID, "translation-url"))
    assert url.is_displayed()
    assert "LibreTranslate server" in d.find_element(By.ID, "translation-url-hint").text
    url.clear()
    url.send_keys(stub.url)
    d.find_element(By.ID, "translation-save").click()
    run.wait_for(d, lambda d: d.find_element(By.ID, "translation-status").text == "The translation settings have been saved.")
    assert d.find_element(By.ID, "translation-key-state").text == "No key is saved."
    assert not d.find_element(By.ID, "translation-ready").is_displayed()
    assert not d.find_element(By.ID, "translation-remove-key").is_displayed()
    view = run.fetch_json(d, "/api/v1/admin/translation")
    assert view["provider"] == "libretranslate" and view["url"].rstrip("/") == stub.url and view["apiKeySet"] is False, view
    # A key is write-only: saved, said so, never shown again; then removed.
    d.find_element(By.ID, "translation-apiKey").send_keys("stub-key")
    d.find_element(By.ID, "translation-save").click()
    run.wait_for(d, lambda d: d.find_element(By.ID, "translation-key-state").text == "A key is saved.")
    assert d.find_element(By.ID, "translation-apiKey").get_attribute("value") == ""
    view = run.fetch_json(d, "/api/v1/admin/translation")
    assert view["apiKeySet"] is True and "stub-key" not in json.dumps(view), view
    d.find_element(By.ID, "translation-remove-key").click()
    run.wait_for(d, lambda d: d.find_element(By.ID, "translation-status").text == "The key has been removed.")
    assert run.fetch_json(d, "/api/v1/admin/translation")["apiKeySet"] is False
    # A live check of the saved settings, reported as a success.
    before = stub.translations() + stub.calls["languages"]
    d.find_element(By.ID, "translation-test").click()
    run.wait_for(d, lambda d: d.find_element(By.ID, "translation-test-ok").is_displayed()
                 or d.find_element(By.ID, "translation-test-problem").is_displayed())
    ok = d.find_element(By.ID, "translation-test-ok")
    assert ok.text.startswith("The connection works."), (ok.text, d.find_element(By.ID, "translation-test-problem").text)
    assert ok.get_attribute("role") == "status"
    assert not d.find_element(By.ID, "translation-test-problem").is_displayed()
    assert stub.translations() + stub.calls["languages"] > before, stub.calls
    problems = run.axe_problems(d, "settings with translation")
    run.shot(d, ctx, "translation-settings")
    return d, problems


@run.test
def an_employee_translates_a_message_a_notice_and_a_whole_chat_live(ctx):
    server = ctx["server"]
    stub = LibreTranslateStub()
    try:
        eve_api, bob_api = run.two_employees(server)
        admin_api = run.Api(server, "admin", run.ADMIN_PASSWORD)
        admin, problems = admin_sets_libretranslate(ctx, server, stub)

        chat = run.direct_chat(eve_api, bob_api)
        for client_id, body in [("t0", "UNTRANSLATABLE señal"), ("t1", "¿Comemos juntos?")]:
            status, _ = bob_api.call("POST", f"/chats/{chat['id']}/messages", {"body": body, "clientId": client_id})
            assert status == 201, status
        status, notice = admin_api.call("POST", "/admin/notices", {"title": "Comida el viernes", "body": "En la cocina.", "pinned": False})
        assert status == 201, (status, notice)

        # Eve translates one message, sees it marked, and goes back to the original.
        eve = ctx["browser"]()
        run.login(eve, server, "eve", run.EMPLOYEE_PASSWORD)
        eve.get(server.url + f"/#/chat?id={chat['id']}")
        run.screen(eve, "chat")
        run.wait_for(eve, lambda d: message_item(d, "¿Comemos juntos?"))
        assert not eve.find_element(By.ID, "chat-translate-on").is_selected()
        click_action(eve, "¿Comemos juntos?", "translate")
        assert run.wait_for(eve, lambda d: shown_translation(d, "[en] ¿Comemos juntos?")) == ("Translated from Spanish", "en")
        click_action(eve, "[en] ¿Comemos juntos?", "show-original")
        run.wait_for(eve, lambda d: shown_original(d, "¿Comemos juntos?"))
        # The translation is kept: one click shows it again, without asking the provider.
        asked = stub.translations()
        click_action(eve, "¿Comemos juntos?", "show-translation")
        run.wait_for(eve, lambda d: shown_translation(d, "[en] ¿Comemos juntos?"))
        assert stub.translations() == asked
        # A text the service cannot translate: said in words next to the message, which stays as written.
        click_action(eve, "UNTRANSLATABLE señal", "translate")
        problem = run.wait_for(eve, lambda d: message_item(d, "UNTRANSLATABLE señal").find_element(By.CSS_SELECTOR, ".translation-problem"))
        assert problem.text == "The translation service could not translate this text.", problem.text
        problems += run.axe_problems(eve, "chat with a translated message")

        # A notice, translated and back.
        eve.get(server.url + f"/#/notices?id={notice['id']}")
        run.screen(eve, "notices")
        run.click_when_there(eve, "#notice-translate")
        run.wait_for(eve, lambda d: d.find_element(By.CSS_SELECTOR, "#notice h1").text == "[en] Comida el viernes")
        assert eve.find_element(By.CSS_SELECTOR, "#notice .notice-body").text == "[en] En la cocina."
        assert eve.find_element(By.CSS_SELECTOR, "#notice .translated-mark").text == "Translated from Spanish"
        problems += run.axe_problems(eve, "translated notice")
        run.shot(eve, ctx, "translation-notice")
        eve.find_element(By.CSS_SELECTOR, '#notice-translate[data-action="show-original"]').click()
        run.wait_for(eve, lambda d: d.find_element(By.CSS_SELECTOR, "#notice h1").text == "Comida el viernes")
        assert eve.find_element(By.CSS_SELECTOR, "#notice .notice-body").text == "En la cocina."
        assert not eve.find_elements(By.CSS_SELECTOR, "#notice .translated-mark")
        # The list has the same button on each notice.
        eve.get(server.url + "/#/notices")
        run.screen(eve, "notices")
        run.click_when_there(eve, f"#notice-translate-{notice['id']}")
        run.wait_for(eve, lambda d: d.find_element(By.CSS_SELECTOR, f'[data-notice-id="{notice["id"]}"] .notice-title a').text
                     == "[en] Comida el viernes")

        # Bob (in Spanish) has the chat open too; Eve turns on "this chat in my language".
        status, _ = bob_api.call("PATCH", "/me", {"language": "es"})
        assert status == 200, status
        bob = ctx["browser"]()
        run.login(bob, server, "bob", run.EMPLOYEE_PASSWORD)
        bob.get(server.url + f"/#/chat?id={chat['id']}")
        run.screen(bob, "chat")
        run.wait_for(bob, lambda d: message_item(d, "¿Comemos juntos?"))
        assert bob.find_element(By.CSS_SELECTOR, "label[for=chat-translate-on]").text == "Ver este chat en mi idioma"
        run.wait_for(bob, run.realtime_open)
        eve.get(server.url + f"/#/chat?id={chat['id']}")
        run.screen(eve, "chat")
        run.wait_for(eve, lambda d: message_item(d, "¿Comemos juntos?"))
        run.wait_for(eve, run.realtime_open)
        assert Select(eve.find_element(By.ID, "chat-translate-target")).first_selected_option.get_attribute("value") == "en"
        eve.find_element(By.ID, "chat-translate-on").click()
        run.wait_for(eve, lambda d: d.find_element(By.ID, "chat-status").text.startswith("Messages in this chat now show in English."))
        assert run.fetch_json(eve, f"/api/v1/chats/{chat['id']}/translation") == {"enabled": True, "target": "en"}
        status, _ = bob_api.call("POST", f"/chats/{chat['id']}/messages", {"body": "Nos vemos mañana", "clientId": "t2"})
        assert status == 201, status
        # Eve sees the translation arrive in place; Bob (who did not ask) keeps the original.
        assert run.wait_for(eve, lambda d: shown_translation(d, "[en] Nos vemos mañana"), timeout=20) == ("Translated from Spanish", "en")
        run.wait_for(bob, lambda d: "Nos vemos mañana" in run.messages_text(d))
        assert not bob.find_elements(By.CSS_SELECTOR, "#chat-messages .msg-translated")
        assert "[en] Nos vemos mañana" not in bob.find_element(By.ID, "chat-messages").text
        # Asked to translate his own Spanish into Spanish, Bob is told it already is.
        click_action(bob, "Nos vemos mañana", "translate")
        run.wait_for(bob, lambda d: message_item(d, "Nos vemos mañana").find_element(By.CSS_SELECTOR, ".translation-note").text
                     == "Ya está en español.")
        assert not bob.find_elements(By.CSS_SELECTOR, "#chat-messages .msg-translated")
        # "Show original" works on a chat translation too.
        click_action(eve, "[en] Nos vemos mañana", "show-original")
        run.wait_for(eve, lambda d: shown_original(d, "Nos vemos mañana"))
        problems += run.axe_problems(eve, "chat shown in my language")
        run.shot(eve, ctx, "translation-chat")
        # The choice is the account's: after a reload the switch is on and the list comes translated.
        eve.refresh()
        run.screen(eve, "chat")
        run.wait_for(eve, lambda d: shown_translation(d, "[en] Nos vemos mañana"))
        assert eve.find_element(By.ID, "chat-translate-on").is_selected()
        # Turned off, the originals are back.
        eve.find_element(By.ID, "chat-translate-on").click()
        run.wait_for(eve, lambda d: shown_original(d, "Nos vemos mañana") and not d.find_elements(By.CSS_SELECTOR, "#chat-messages .msg-translated"))
        assert run.fetch_json(eve, f"/api/v1/chats/{chat['id']}/translation")["enabled"] is False
        eve.set_window_size(375, 740)
        assert run.horizontal_overflow(eve) <= 0
        run.no_script_errors(admin, eve, bob)
        assert not problems, "\n".join(problems)
    finally:
        stub.stop()
