#!/usr/bin/env python3
"""A push service stand-in for push.sh: answers every POST 201 (HTTP/1.1, keep-alive) and counts
them; GET /_stats answers {"count", "first", "last"} (times of the first and last push, seconds).
Prints `listening on http://127.0.0.1:PORT` first. It does not decrypt (check-push.py does that):
the benchmark measures the server, not the stand-in.
"""
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

state = {"count": 0, "first": None, "last": None}
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):  # noqa: N802 - http.server's naming
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        now = time.time()
        with lock:
            state["count"] += 1
            state["first"] = state["first"] or now
            state["last"] = now
        self.send_response(201)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):  # noqa: N802
        with lock:
            body = json.dumps(state).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


if __name__ == "__main__":
    httpd = Server(("127.0.0.1", 0), Handler)
    print(f"listening on http://127.0.0.1:{httpd.server_address[1]}", flush=True)
    httpd.serve_forever()
