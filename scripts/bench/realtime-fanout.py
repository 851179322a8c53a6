#!/usr/bin/env python3
"""Realtime fan-out: CLIENTS WebSocket clients (one user each) in groups of GROUP while RATE
events per second are sent to random groups for SECONDS; every delivery is timed from the 201
of the send that caused it (and from the send itself), and checked: each member of the group
gets each event exactly once, nobody else gets it.

usage: realtime_fanout.py PORT[,PORT…] ADMIN_PASSWORD MODE [CLIENTS GROUP RATE SECONDS]
  Several ports (instances on one database, instances.sh): client i connects to port i mod n,
  so each group's members are spread over the instances, and sender w sends through port w mod n;
  deliveries are then also timed apart by whether the client's instance made the send.
  MODE journal:  POST /api/v1/bench/events {users, data} (server run with --bench-module):
                 one durable journal append per send, the hub's path without messaging.
  MODE messages: POST /api/v1/chats/{id}/messages {body, clientId} into real groups
                 (POST /api/v1/chats), once the messaging module serves them.
Prints JSON: sent, errors, expected, delivered, lost, doubled, stray, p50/p99/max from the 201
and from the send, in milliseconds.
"""
import asyncio
import json
import random
import sys
import time

from realtime_ws import HTTP, WebSocket

SENDERS = 8


def server_lag(ports):
    """sgem_realtime_delivery_lag_seconds from the /metrics of every port, added up: count,
    mean and the share over 100 ms."""
    import urllib.request
    buckets, total, count = {}, 0.0, 0
    for port in ports:
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        for line in text.splitlines():
            if line.startswith("sgem_realtime_delivery_lag_seconds_bucket"):
                le = line.split('le="')[1].split('"')[0]
                buckets[le] = buckets.get(le, 0) + float(line.split()[-1])
            elif line.startswith("sgem_realtime_delivery_lag_seconds_sum"):
                total += float(line.split()[-1])
            elif line.startswith("sgem_realtime_delivery_lag_seconds_count"):
                count += int(float(line.split()[-1]))
    within = buckets.get("0.1", 0)
    return {"events": count, "mean_ms": total / count * 1000 if count else None,
            "over_100ms": count - within if count else None, "within_10ms": buckets.get("0.01")}


def percentile(values, p):
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


async def main():
    ports, password, mode = [int(p) for p in sys.argv[1].split(",")], sys.argv[2], sys.argv[3]
    port = ports[0]
    clients, group, rate, seconds = (int(a) for a in (sys.argv[4:8] + ["500", "10", "200", "10"][len(sys.argv[4:8]):]))
    http = await HTTP.connect(port)
    status, body = await http.request("POST", "/api/v1/auth/login", {"login": "boss", "password": password})
    if status != 200:
        raise SystemExit(f"admin login answered {status}")
    admin = body["token"]

    # One user per client, logged in.
    users = []
    for i in range(clients):
        name = f"fan{i}"
        status, body = await http.request("POST", "/api/v1/admin/users", {
            "username": name, "email": f"{name}@example.com", "displayName": name, "role": "employee",
            "password": f"password-of-{name}"}, token=admin)
        if status != 201:
            raise SystemExit(f"creating {name} answered {status}: {body}")
        uid = body["id"] if "id" in body else body["user"]["id"]
        status, body = await http.request("POST", "/api/v1/auth/login", {"login": name, "password": f"password-of-{name}"})
        if status != 200:
            raise SystemExit(f"login {name} answered {status}")
        users.append((uid, body["token"]))
    groups = [users[g:g + group] for g in range(0, clients, group)]

    chat_ids = []
    if mode == "messages":
        for members in groups:
            status, body = await http.request("POST", "/api/v1/chats", {
                "name": f"bench {len(chat_ids)}", "memberIds": [uid for uid, _ in members[1:]]}, token=members[0][1])
            if status != 201:
                raise SystemExit(f"creating a group answered {status}: {body}")
            chat_ids.append(body["id"])

    sockets = []
    for i, (uid, token) in enumerate(users):
        ws = await WebSocket.connect(ports[i % len(ports)], f"/api/v1/realtime?token={token}")
        sockets.append(ws)
    await asyncio.gather(*(ws.ready() for ws in sockets))

    total = rate * seconds
    targets = [random.randrange(len(groups)) for _ in range(total)]
    sent_at, acked_at = {}, {}
    received = [dict() for _ in sockets]   # client index -> {seq: [times]}
    stray = 0
    errors = 0
    done = asyncio.Event()

    def seq_of(event):
        data = event.get("data", {})
        if event.get("type") == "bench.event":
            return data.get("seq")
        if event.get("type") == "message.created":
            text = data.get("message", {}).get("body") or ""  # a system line has no body
            if text.startswith("bench "):
                return int(text.split(" ")[1])
        return None

    async def reader(index, ws):
        while True:
            text = await ws.recv()
            if text is None:
                return
            now = time.monotonic()
            seq = seq_of(json.loads(text))
            if seq is not None:
                received[index].setdefault(seq, []).append(now)

    readers = [asyncio.create_task(reader(i, ws)) for i, ws in enumerate(sockets)]

    async def sender(worker):
        nonlocal errors
        conn = await HTTP.connect(ports[worker % len(ports)])
        start = time.monotonic()
        for seq in range(worker, total, SENDERS):
            delay = start + seq / rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            g = targets[seq]
            sent_at[seq] = time.monotonic()
            if mode == "messages":
                status, _ = await conn.request("POST", f"/api/v1/chats/{chat_ids[g]}/messages",
                                               {"body": f"bench {seq}", "clientId": f"bench-{seq}"}, token=groups[g][0][1])
            else:
                status, _ = await conn.request("POST", "/api/v1/bench/events",
                                               {"users": [uid for uid, _ in groups[g]], "data": {"seq": seq, "group": g}},
                                               token=admin)
            acked_at[seq] = time.monotonic()
            if status != 201:
                errors += 1
        conn.close()

    await asyncio.gather(*(sender(w) for w in range(SENDERS)))
    expected = total * group
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and sum(len(r) for r in received) < expected:
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.2)  # let any duplicate or stray frame arrive before counting
    for r in readers:
        r.cancel()

    from_ack, from_send = [], []
    # Several instances: from the 201 to a client on the instance that made the send, and to one
    # on another instance (reached through the database's doorbell).
    from_ack_same, from_ack_other = [], []
    lost = doubled = delivered = 0
    index_of = {uid: i for i, (uid, _) in enumerate(users)}
    for seq in range(total):
        members = {index_of[uid] for uid, _ in groups[targets[seq]]}
        for i in range(len(sockets)):
            times = received[i].get(seq, [])
            if i not in members:
                stray += len(times)
                continue
            if not times:
                lost += 1
                continue
            delivered += 1
            doubled += len(times) - 1
            from_ack.append(max(0.0, times[0] - acked_at[seq]) * 1000)
            same = i % len(ports) == (seq % SENDERS) % len(ports)
            (from_ack_same if same else from_ack_other).append(from_ack[-1])
            from_send.append((times[0] - sent_at[seq]) * 1000)
    for ws in sockets:
        ws.close()
    # The server's own share: recording → frames handed to the sockets (a histogram).
    lag = server_lag(ports)
    http.close()
    print(json.dumps({
        "mode": mode, "instances": len(ports), "clients": clients, "group": group, "rate": rate, "seconds": seconds,
        "sent": total, "errors": errors, "expected": expected, "delivered": delivered, "lost": lost,
        "doubled": doubled, "stray": stray,
        "p50_from_201_ms": percentile(from_ack, 50), "p99_from_201_ms": percentile(from_ack, 99),
        "max_from_201_ms": max(from_ack) if from_ack else None,
        "p50_from_send_ms": percentile(from_send, 50), "p99_from_send_ms": percentile(from_send, 99),
        "p99_from_201_same_instance_ms": percentile(from_ack_same, 99) if len(ports) > 1 else None,
        "p99_from_201_other_instance_ms": percentile(from_ack_other, 99) if len(ports) > 1 else None,
        "server_lag": lag,
    }))


if __name__ == "__main__":
    asyncio.run(main())
