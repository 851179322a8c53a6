#!/usr/bin/env python3
"""Web Push end to end against the real binary: a stub push service on loopback receives what the
server pushes, decrypts each payload with http_ece (RFC 8188/8291, PyPI) as a browser would, and
verifies the VAPID token (RFC 8292) with cryptography (PyPI). Checks a message, a mention, a
holiday request and its decision, and a company notice: payload JSON, the reader's language and
the URL a click opens. Run by `make test` (target test-push). Ends with `push: N passed, N failed`.
"""
import base64
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import http_ece
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklib import Checks, Server  # noqa: E402

PASSWORD = "correct horse battery"
CONTACT = "mailto:ops@example.com"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class PushService:
    """Keeps every POST it receives (path, headers, body) and answers 201."""

    def __init__(self):
        self.received = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's naming
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with outer.lock:
                    outer.received.append((self.path, dict(self.headers), body))
                self.send_response(201)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def to(self, name):
        with self.lock:
            return [r for r in self.received if r[0] == f"/push/{name}"]

    def wait(self, name, count, seconds=20):
        deadline = time.time() + seconds
        while time.time() < deadline:
            if len(self.to(name)) >= count:
                return self.to(name)
            time.sleep(0.05)
        raise AssertionError(f"{name} received {len(self.to(name))} pushes, expected {count}")


class Device:
    """A browser's subscription keys."""

    def __init__(self):
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.auth = os.urandom(16)

    def subscription(self, endpoint):
        point = self.key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        return {"endpoint": endpoint, "keys": {"p256dh": b64url(point), "auth": b64url(self.auth)}}

    def open(self, body):
        return json.loads(http_ece.decrypt(body, private_key=self.key, auth_secret=self.auth, version="aes128gcm"))


def verify_vapid(headers, port, server_key):
    auth = headers.get("Authorization", "")
    assert auth.startswith("vapid t="), auth
    token, key = auth[len("vapid t="):].split(", k=")
    assert key == server_key, "k= is the key GET /push/key gives"
    head, claims, signature = token.split(".")
    assert json.loads(unb64url(head))["alg"] == "ES256"
    claims = json.loads(unb64url(claims))
    assert claims["aud"] == f"http://127.0.0.1:{port}", claims
    assert claims["sub"] == CONTACT, claims
    assert time.time() < claims["exp"] <= time.time() + 24 * 3600, claims
    raw = unb64url(signature)
    assert len(raw) == 64
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(key))
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    try:
        public.verify(der, f"{head}.{token.split('.')[1]}".encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise AssertionError("the VAPID signature does not verify") from None
    assert headers.get("Content-Encoding") == "aes128gcm" and int(headers.get("TTL", "0")) > 0
    assert headers.get("Urgency") in ("very-low", "low", "normal", "high")


def main():
    stub = PushService()
    server = Server(sys.argv[1], "push", serve_args=["--outbound-allow", "127.0.0.1"], prepare=[
        (["migrate"], None),
        (["admin", "create-user", "--username", "boss", "--email", "boss@example.com", "--role", "admin", "--password-stdin"],
         PASSWORD + "\n"),
    ])
    base = f"http://127.0.0.1:{server.port}/api/v1"
    checks = Checks("push")
    check = checks.check

    def call(method, path, token=None, body=None):
        req = urllib.request.Request(base + path, method=method, data=None if body is None else json.dumps(body).encode())
        if body is not None:
            req.add_header("Content-Type", "application/json")
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                payload = r.read()
                return r.status, (json.loads(payload) if payload else None)
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    try:
        boss = call("POST", "/auth/login", body={"login": "boss", "password": PASSWORD})[1]["token"]
        tokens, ids = {"boss": boss}, {}
        for name, display in [("ana", "Ana"), ("bob", "Bob")]:
            st, r = call("POST", "/admin/users", boss, {"username": name, "email": f"{name}@example.com", "displayName": display,
                                                        "role": "employee", "password": f"password-of-{name}"})
            assert st == 201, (st, r)
            session = call("POST", "/auth/login", body={"login": name, "password": f"password-of-{name}"})[1]
            tokens[name] = session["token"]
            ids[name] = call("GET", "/me", tokens[name])[1]["id"]
        assert call("PATCH", "/me", tokens["ana"], {"language": "es"})[0] == 200
        assert call("PUT", "/admin/settings", boss, {"pushContact": CONTACT})[0] == 200
        server_key = call("GET", "/push/key", tokens["ana"])[1]["publicKey"]
        devices = {}
        for name in ("ana", "boss"):
            devices[name] = Device()
            st, r = call("POST", "/me/push-subscriptions", tokens[name], devices[name].subscription(f"http://127.0.0.1:{stub.port}/push/{name}"))
            assert st == 201, (st, r)

        def key_is_a_point():
            point = unb64url(server_key)
            assert len(point) == 65 and point[0] == 4
            ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
        check("GET /push/key is an uncompressed P-256 point", key_is_a_point)

        st, direct = call("POST", "/chats/direct", tokens["bob"], {"userId": ids["ana"]})
        assert st == 201, st

        def message():
            assert call("POST", f"/chats/{direct['id']}/messages", tokens["bob"], {"body": "¿Comemos a la una?"})[0] == 201
            path, headers, body = stub.wait("ana", 1)[0]
            verify_vapid(headers, stub.port, server_key)
            payload = devices["ana"].open(body)
            assert payload == {"type": "message", "title": "Bob", "body": "¿Comemos a la una?", "url": f"#/chat?id={direct['id']}",
                               "tag": f"chat-{direct['id']}"}, payload
        check("a direct message: decrypted by http_ece, VAPID verified, url opens the chat", message)

        def mention():
            st, group = call("POST", "/chats", tokens["bob"], {"name": "Equipo", "memberIds": [ids["ana"]]})
            assert st == 201, st
            assert call("POST", f"/chats/{group['id']}/messages", tokens["bob"], {"body": "Nobody named here"})[0] == 201
            assert call("POST", f"/chats/{group['id']}/messages", tokens["bob"], {"body": "@ana mira esto"})[0] == 201
            pushes = stub.wait("ana", 2)
            payload = devices["ana"].open(pushes[1][2])
            assert payload["type"] == "mention" and payload["title"] == "Bob te ha mencionado en Equipo", payload
            assert payload["body"] == "@ana mira esto" and payload["url"] == f"#/chat?id={group['id']}"
            assert pushes[1][1].get("Urgency") == "high"
        check("a mention in a group (mentions only by default), in Spanish", mention)

        def holiday():
            st, request = call("POST", "/holidays", tokens["ana"], {"start": "2031-03-10", "end": "2031-03-12"})
            assert st == 201, (st, request)
            waiting = devices["boss"].open(stub.wait("boss", 1)[0][2])
            assert waiting == {"type": "holiday", "title": "Ana asks for time off", "body": "from 10 March 2031 to 12 March 2031",
                               "url": "#/admin/holidays", "tag": f"holiday-{request['id']}"}, waiting
            assert call("POST", f"/admin/holidays/{request['id']}/approve", boss, {})[0] == 200
            decision = devices["ana"].open(stub.wait("ana", 3)[2][2])
            assert decision["title"] == "Tu solicitud de vacaciones ha sido aprobada", decision
            assert decision["body"] == "del 10 de marzo de 2031 al 12 de marzo de 2031" and decision["url"] == "#/holidays"
        check("a holiday request reaches the admin, the decision the employee, in each one's language", holiday)

        def notice():
            st, posted = call("POST", "/admin/notices", boss, {"title": "Oficina cerrada el viernes", "body": "Reparaciones."})
            assert st == 201, st
            payload = devices["ana"].open(stub.wait("ana", 4)[3][2])
            assert payload == {"type": "notice", "title": "Nuevo aviso", "body": "Oficina cerrada el viernes",
                               "url": f"#/notices?id={posted['id']}", "tag": f"notice-{posted['id']}"}, payload
            assert len(stub.to("boss")) == 1, "the author is not pushed"
            assert stub.to("bob") == [], "the sender is never pushed"
        check("a company notice reaches everyone but its author", notice)
    finally:
        server.stop()
        stub.httpd.shutdown()
    checks.finish()


if __name__ == "__main__":
    main()
