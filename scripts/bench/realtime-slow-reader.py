#!/usr/bin/env python3
"""A slow reader catching up: COUNT events of about SIZE bytes are recorded for one user, who
then connects with ?since= on a socket with a small receive buffer and reads at about RATE bytes
per second. Counts the events received, in order, before the stream ended or the last arrived.

usage: realtime-slow-reader.py PORT ADMIN_PASSWORD [COUNT SIZE RATE]   (4000 4000 3000000)
Prints JSON: expected, received, in_order, ended_by (complete | closed), seconds,
resync (whether a {"type":"resync"} frame came).
"""
import asyncio
import json
import socket
import sys
import time

from realtime_ws import HTTP, WebSocket


async def main():
    port, password = int(sys.argv[1]), sys.argv[2]
    count, size, rate = (int(a) for a in (sys.argv[3:6] + ["4000", "4000", "3000000"][len(sys.argv[3:6]):]))
    http = await HTTP.connect(port)
    status, body = await http.request("POST", "/api/v1/auth/login", {"login": "boss", "password": password})
    if status != 200:
        raise SystemExit(f"admin login answered {status}")
    token, uid = body["token"], body["user"]["id"]
    blob = "x" * size
    first = None
    for n in range(count):
        status, body = await http.request("POST", "/api/v1/bench/events", {"users": [uid], "data": {"n": n, "blob": blob}},
                                          token=token)
        if status != 201:
            raise SystemExit(f"recording event {n} answered {status}")
        first = body["id"] if first is None else first
    # The hub delivers live events to nobody here; give it a moment to move past them so they
    # all come as replay (it polls every second).
    await asyncio.sleep(1.5)

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
    sock.connect(("127.0.0.1", port))
    reader, writer = await asyncio.open_connection(sock=sock, limit=16384)
    ws = WebSocket(reader, writer)
    key = "dGhlIHNhbXBsZSBub25jZQ=="
    writer.write((f"GET /api/v1/realtime?token={token}&since={first - 1} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    head = await reader.readuntil(b"\r\n\r\n")
    if int(head.split(b" ", 2)[1]) != 101:
        raise SystemExit(f"upgrade answered {head.split(b' ', 2)[1]}")

    received, in_order, resync, read_bytes = 0, True, False, 0
    start = time.monotonic()
    ended_by = "complete"
    while received < count:
        try:
            text = await ws.recv()
        except (asyncio.IncompleteReadError, ConnectionError):
            text = None  # dropped inside a frame
        if text is None:
            ended_by = "closed"
            break
        event = json.loads(text)
        if event.get("type") == "resync":
            resync = True
            continue
        if event.get("data", {}).get("n") != received:
            in_order = False
        received += 1
        read_bytes += len(text)
        # Pace to RATE: sleep whenever ahead of schedule.
        ahead = start + read_bytes / rate - time.monotonic()
        if ahead > 0:
            await asyncio.sleep(ahead)
    seconds = time.monotonic() - start
    ws.close()
    http.close()
    print(json.dumps({"expected": count, "received": received, "in_order": in_order, "ended_by": ended_by,
                      "resync": resync, "seconds": round(seconds, 2)}))


if __name__ == "__main__":
    asyncio.run(main())
