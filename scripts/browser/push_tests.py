"""Browser tests of notifications with the console closed (Web Push, issue 16): the service
worker shows a push delivered through the DevTools protocol (ServiceWorker.deliverPushMessage)
and its url is the one a click opens; Profile's device switch and a chat's level speak plain words.

run.py imports this file once its helpers exist; its tests join run's list.
"""
import json
import sys

run = sys.modules["run"] if "run" in sys.modules else sys.modules["__main__"]
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

test, wait_for, login, screen, Api = run.test, run.wait_for, run.login, run.screen, run.Api


def notifications(d):
    """The notifications the console's service worker shows now: title, body, tag and url."""
    return d.execute_async_script("""
        const done = arguments[arguments.length - 1];
        navigator.serviceWorker.ready
          .then(r => r.getNotifications())
          .then(list => done(list.map(n => ({title: n.title, body: n.body, tag: n.tag, url: n.data && n.data.url, lang: n.lang}))),
                e => done({error: String(e)}));
    """)


def deliver(d, origin, payload):
    """Delivers `payload` (JSON) to the console's service worker as a push; true when it went."""
    data = json.dumps(payload)
    d.execute_cdp_cmd("ServiceWorker.enable", {})
    # A fresh profile has one registration; its id is small. The first id the browser accepts is it.
    for registration in range(0, 8):
        try:
            d.execute_cdp_cmd("ServiceWorker.deliverPushMessage", {"origin": origin, "registrationId": str(registration), "data": data})
            return True
        except Exception:  # noqa: BLE001 - an unknown registration id: try the next
            continue
    return False


@test
def a_push_is_shown_by_the_service_worker_with_the_url_a_click_opens(ctx):
    server = ctx["server"]
    run.create_admin(server)
    run.create_employee(server, "lucia", "Lucía López")
    admin = Api(server, "admin", run.ADMIN_PASSWORD)
    lucia = Api(server, "lucia", run.EMPLOYEE_PASSWORD)
    assert lucia.call("PATCH", "/me", {"language": "es"})[0] == 200
    status, chat = admin.call("POST", "/chats/direct", {"userId": lucia.user["id"]})
    assert status == 201, status

    d = ctx["browser"]("es-ES")
    d.execute_cdp_cmd("Browser.grantPermissions", {"origin": server.url, "permissions": ["notifications"]})
    login(d, server, "lucia", run.EMPLOYEE_PASSWORD)
    d.get(server.url + "/#/profile")
    screen(d, "profile")
    # The switch is there, says where things stand in plain Spanish, and can be used.
    state = wait_for(d, lambda d: d.find_element(By.ID, "push-device-state").text or None)
    assert state.startswith("Desactivado") or state.startswith("Este navegador"), state
    assert "Avisarme en este dispositivo" in d.find_element(By.ID, "push-card").text
    problems = run.axe_problems(d, "profile with the device switch")
    assert not problems, problems

    # The chat's level, in its info: saved through the API.
    d.get(server.url + f"/#/chat?id={chat['id']}&info=1")
    level = Select(wait_for(d, lambda d: d.find_element(By.ID, "info-notify-level")))
    assert level.first_selected_option.get_attribute("value") == "all"
    level.select_by_value("mentions")
    wait_for(d, lambda d: d.find_element(By.ID, "info-notify").text.endswith("Guardado."))
    chats = lucia.call("GET", "/chats")[1]["items"]
    assert next(c for c in chats if c["id"] == chat["id"])["notifications"] == "mentions"

    # The console closed (nothing of it open in a window): a push is shown.
    wait_for(d, lambda d: d.execute_async_script(
        "const done = arguments[arguments.length - 1]; navigator.serviceWorker.ready.then(() => done(true), () => done(false));"))
    payload = {"type": "message", "title": "Ada Admin", "body": "¿Comemos a la una?", "url": f"#/chat?id={chat['id']}",
               "tag": f"chat-{chat['id']}"}
    # While a console window has the focus the person is looking at it: nothing is shown.
    assert deliver(d, server.url, {**payload, "tag": "while-looking", "title": "Not shown"})
    d.get("about:blank")
    assert deliver(d, server.url, payload), "the console's service worker took no push"
    d.get(server.url + "/#/home")
    shown = wait_for(d, lambda d: [n for n in notifications(d) if n["tag"] == payload["tag"]] or None)
    assert shown[0]["title"] == "Ada Admin" and shown[0]["body"] == "¿Comemos a la una?", shown
    assert shown[0]["url"] == f"#/chat?id={chat['id']}", shown
    assert not [n for n in notifications(d) if n["tag"] == "while-looking"], "a push was shown while the console had the focus"

    # Headless Chromium cannot click a notification (the DevTools protocol has no such command):
    # where a click leads is the url the notification carries, checked above.
    run.no_script_errors(d)
