#!/usr/bin/env python3
"""Seeds push.sh's group: push_seed.py BASE_URL TOKEN N [STUB_URL]. N employees (POST
/admin/users) in one group the admin made; with STUB_URL each member logs in once, subscribes
one device at STUB_URL/push/<n> (one key pair for all: the server encrypts for each anyway) and
sets the group to `all`, so every message is one push per member. Nobody keeps a stream open:
they are all offline. Prints the group's id.
"""
import base64
import os
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import ApiClient  # noqa: E402

PASSWORD = "bench password for push members"
# A valid P-256 point (RFC 8291's example receiver) and a 16-byte auth secret.
P256DH = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
AUTH = base64.urlsafe_b64encode(b"bench-push-auth!").rstrip(b"=").decode()


def main():
    base, token, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    stub = sys.argv[4] if len(sys.argv) > 4 else None
    failures = []

    def member(i):
        api = ApiClient(base, failures)
        name = f"member{i:04d}"
        made = api.call("POST", "/api/v1/admin/users", {"username": name, "email": f"{name}@example.com", "displayName": f"Member {i}",
                                                        "role": "employee", "password": PASSWORD}, token)
        session = api.call("POST", "/api/v1/auth/login", {"login": name, "password": PASSWORD}) if stub and made else None
        api.close()
        return (made or {}).get("user", {}).get("id"), (session or {}).get("token")

    with ThreadPoolExecutor(8) as pool:
        members = list(pool.map(member, range(n)))
    if failures:
        sys.exit(f"seeding: {len(failures)} failed calls, first: {failures[0]}")
    api = ApiClient(base, failures)
    group = api.call("POST", "/api/v1/chats", {"name": "Everyone", "memberIds": [uid for uid, _ in members]}, token)
    if not group:
        sys.exit(f"seeding: {failures[0]}")
    if stub:
        def subscribe(indexed):
            i, (_, member_token) = indexed
            client = ApiClient(base, failures)
            client.call("POST", "/api/v1/me/push-subscriptions", {"endpoint": f"{stub}/push/{i}", "keys": {"p256dh": P256DH, "auth": AUTH}},
                        member_token)
            client.call("PUT", f"/api/v1/chats/{group['id']}/notifications", {"level": "all"}, member_token)
            client.close()
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(subscribe, enumerate(members)))
        if failures:
            sys.exit(f"seeding: {len(failures)} failed calls, first: {failures[0]}")
    print(group["id"])


if __name__ == "__main__":
    main()
