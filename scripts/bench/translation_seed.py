#!/usr/bin/env python3
"""Seeds the translation benchmark: 50 readers in 5 languages (10 each: es, fr, de, it, pt), one
group of them with the benchmark's admin as its creator, and — with `--translated` — each reader
reading it in their language (PUT /chats/{id}/translation). Prints the chat id.

usage: translation_seed.py BASE_URL ADMIN_TOKEN [--translated]
"""
import json
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

LANGUAGES = ["es", "fr", "de", "it", "pt"]
READERS = 50
PASSWORD = "bench reader password"


def call(base, method, path, token, body=None):
    """One API call; a 503 `busy` (the password-hashing queue, at logins) is retried after its Retry-After."""
    for attempt in range(20):
        request = urllib.request.Request(base + "/api/v1" + path, method=method,
                                         data=None if body is None else json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json", **({"Authorization": "Bearer " + token} if token else {})})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                raw = response.read()
                return json.loads(raw) if raw else None
        except urllib.error.HTTPError as error:
            if error.code != 503 or attempt == 19:
                raise
            time.sleep(float(error.headers.get("Retry-After") or 1))


def main():
    base, admin = sys.argv[1], sys.argv[2]
    translated = "--translated" in sys.argv[3:]

    def reader(n):
        name = f"reader{n:02d}"
        created = call(base, "POST", "/admin/users", admin, {
            "username": name, "email": f"{name}@example.com", "displayName": f"Reader {n}", "role": "employee",
            "password": PASSWORD, "language": LANGUAGES[n % len(LANGUAGES)]})
        token = call(base, "POST", "/auth/login", None, {"login": name, "password": PASSWORD})["token"]
        return created["user"]["id"], token

    with ThreadPoolExecutor(4) as pool:
        readers = list(pool.map(reader, range(READERS)))
    chat = call(base, "POST", "/chats", admin, {"name": "Everyone", "memberIds": [uid for uid, _ in readers]})["id"]
    if translated:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda r: call(base, "PUT", f"/chats/{chat}/translation", r[1], {"enabled": True}), readers))
    print(chat)


if __name__ == "__main__":
    main()
