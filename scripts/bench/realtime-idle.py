#!/usr/bin/env python3
"""Resident memory of idle realtime WebSockets.

usage: realtime-idle.py PORT ADMIN_PASSWORD PID COUNT
Logs in as boss, opens 20 warm-up streams, reads VmRSS; opens COUNT more (each upgraded and
answered a {"type":"ping"}, so the server holds it subscribed), waits a second, reads VmRSS
again and checks every stream is still open. Prints JSON: idle_kib, loaded_kib, delta_kib,
per_connection_bytes, opened, still_open.
"""
import asyncio
import json
import sys

from idle_conns import rss_kib
from realtime_ws import HTTP, WebSocket


async def main():
    port, password, pid, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    http = await HTTP.connect(port)
    status, body = await http.request("POST", "/api/v1/auth/login", {"login": "boss", "password": password})
    if status != 200:
        raise SystemExit(f"login answered {status}")
    path = f"/api/v1/realtime?token={body['token']}"
    warm = [await WebSocket.connect(port, path) for _ in range(20)]
    await asyncio.gather(*(ws.ready() for ws in warm))
    await asyncio.sleep(1)
    idle = rss_kib(pid)
    sockets = []
    for i in range(0, count, 100):
        batch = [await WebSocket.connect(port, path) for _ in range(min(100, count - i))]
        await asyncio.gather(*(ws.ready() for ws in batch))
        sockets += batch
    await asyncio.sleep(1)
    loaded = rss_kib(pid)
    # Still open: each answers another ping.
    still = sum(1 for r in await asyncio.gather(*(asyncio.wait_for(ws.ready(), 10) for ws in sockets), return_exceptions=True)
                if r is None)
    for ws in sockets + warm:
        ws.close()
    http.close()
    delta = loaded - idle
    print(json.dumps({"idle_kib": idle, "loaded_kib": loaded, "delta_kib": delta,
                      "per_connection_bytes": delta * 1024 / max(1, len(sockets)),
                      "opened": len(sockets), "still_open": still}))


if __name__ == "__main__":
    asyncio.run(main())
