#!/usr/bin/env python3
"""Resident memory of a server before and after holding idle keep-alive connections.

usage: idle_conns.py PORT COUNT PID [PID...]

1. Sends a few GET /healthz requests (fresh connections, closed), waits a second and reads the
   summed VmRSS of the PIDs: the idle figure.
2. Opens COUNT connections; on each sends one HTTP/1.1 GET /healthz, reads the whole response
   and keeps the socket open. Waits a second, reads VmRSS again, checks the sockets are still
   open (the server did not drop them), closes them.
Prints JSON: idle_kib, loaded_kib, delta_kib, opened, still_open, open_seconds, per_pid.
"""
import json
import resource
import socket
import sys
import time

REQUEST = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: sgem-bench\r\n\r\n"


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def read_response(sock):
    """Reads one response with a Content-Length body; returns the status code."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError("closed before the response headers")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
        if name.strip().lower() == b"connection" and value.strip().lower() == b"close":
            raise ConnectionError("server answered Connection: close")
    while len(body) < length:
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError("closed inside the response body")
        body += chunk
    return status


def request(port, keep=False):
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(REQUEST)
    status = read_response(sock)
    if status != 200:
        raise RuntimeError(f"GET /healthz answered {status}")
    if keep:
        return sock
    sock.close()
    return None


def still_open(sock):
    sock.setblocking(False)
    try:
        return sock.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


def main():
    port, count, pids = int(sys.argv[1]), int(sys.argv[2]), [int(p) for p in sys.argv[3:]]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = count + 256
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard) if hard != resource.RLIM_INFINITY else want, hard))

    for _ in range(20):
        request(port)
    time.sleep(1.0)
    idle = {pid: rss_kib(pid) for pid in pids}

    sockets, errors = [], []
    start = time.monotonic()
    for _ in range(count):
        try:
            sockets.append(request(port, keep=True))
        except (OSError, RuntimeError) as e:
            errors.append(str(e))
            if len(errors) >= 20:
                break
    open_seconds = time.monotonic() - start
    time.sleep(1.0)
    loaded = {pid: rss_kib(pid) for pid in pids}
    open_now = sum(1 for s in sockets if still_open(s))
    for s in sockets:
        s.close()

    idle_kib, loaded_kib = sum(idle.values()), sum(loaded.values())
    print(json.dumps({
        "idle_kib": idle_kib, "loaded_kib": loaded_kib, "delta_kib": loaded_kib - idle_kib,
        "requested": count, "opened": len(sockets), "still_open": open_now,
        "open_seconds": round(open_seconds, 3), "errors": errors[:5],
        "per_pid": {str(pid): {"idle_kib": idle[pid], "loaded_kib": loaded[pid]} for pid in pids},
    }))


if __name__ == "__main__":
    main()
