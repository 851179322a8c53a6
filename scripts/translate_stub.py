#!/usr/bin/env python3
"""A LibreTranslate stand-in for the API fuzz, the browser tests and the translation benchmark.

Speaks LibreTranslate's real shapes: `POST /translate` with a JSON body `{q, source, target,
format, api_key}` answers `{"translatedText": "[<target>] <q>", "detectedLanguage": {"language":
<detected>, "confidence": 90}}` (the detected language only when `source` is "auto");
`GET /languages` lists a few languages. It counts what it is asked: `GET /_stats` answers
`{"calls": N, "byTarget": {...}}` and `POST /_reset` sets them to zero.

asyncio with keep-alive, so a benchmark's thousands of calls a second are not held up here.

    python3 scripts/translate_stub.py [--port 0] [--detected en]
prints `listening on http://127.0.0.1:PORT` and serves until killed. From Python:
`stub = Stub(detected="en"); stub.start()` runs it on a thread; `stub.url`, `stub.stats()`.
The server must be started with `--outbound-allow 127.0.0.1` (or `127.0.0.1:PORT`) to reach it:
outbound calls to internal addresses are refused otherwise.
"""
import argparse
import asyncio
import json
import threading

LANGUAGES = [
    {"code": "en", "name": "English", "targets": ["de", "es", "fr", "it", "pt"]},
    {"code": "es", "name": "Spanish", "targets": ["de", "en", "fr", "it", "pt"]},
    {"code": "fr", "name": "French", "targets": ["de", "en", "es", "it", "pt"]},
    {"code": "de", "name": "German", "targets": ["en", "es", "fr", "it", "pt"]},
    {"code": "it", "name": "Italian", "targets": ["de", "en", "es", "fr", "pt"]},
    {"code": "pt", "name": "Portuguese", "targets": ["de", "en", "es", "fr", "it"]},
]
MAX_BODY = 1 << 20


class Stub:
    def __init__(self, host="127.0.0.1", port=0, detected="en"):
        self.host, self.port, self.detected = host, port, detected
        self.calls = 0
        self.by_target = {}
        self.lock = threading.Lock()
        self.ready = threading.Event()
        self.loop = None

    @property
    def url(self):
        return f"http://{self.host}:{self.port}"

    def stats(self):
        with self.lock:
            return {"calls": self.calls, "byTarget": dict(self.by_target)}

    def reset(self):
        with self.lock:
            self.calls = 0
            self.by_target = {}

    def start(self):
        """Serves on a daemon thread; returns once listening."""
        threading.Thread(target=lambda: asyncio.run(self.serve()), daemon=True).start()
        self.ready.wait(10)
        return self

    async def serve(self, announce=False):
        self.loop = asyncio.get_running_loop()
        server = await asyncio.start_server(self.connection, self.host, self.port, backlog=1024)
        self.port = server.sockets[0].getsockname()[1]
        if announce:
            print(f"listening on {self.url}", flush=True)
        self.ready.set()
        async with server:
            await server.serve_forever()

    def answer(self, method, path, body):
        if method == "POST" and path == "/translate":
            try:
                request = json.loads(body or b"{}")
                text, target = request["q"], request["target"]
                source = request.get("source", "auto")
            except (ValueError, KeyError, TypeError):
                return 400, {"error": "Invalid request: missing q or target"}
            if not isinstance(text, str) or not isinstance(target, str):
                return 400, {"error": "Invalid request: q and target must be strings"}
            with self.lock:
                self.calls += 1
                self.by_target[target] = self.by_target.get(target, 0) + 1
            out = {"translatedText": f"[{target}] {text}"}
            if source == "auto":
                out["detectedLanguage"] = {"language": self.detected, "confidence": 90}
            return 200, out
        if method == "GET" and path == "/languages":
            return 200, LANGUAGES
        if method == "GET" and path == "/_stats":
            return 200, self.stats()
        if method == "POST" and path == "/_reset":
            self.reset()
            return 200, {"ok": True}
        return 404, {"error": "Not found"}

    async def connection(self, reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = (lines[0].split(" ", 2) + ["", ""])[:3]
                length = 0
                close = False
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    name = name.strip().lower()
                    if name == "content-length":
                        length = int(value.strip() or 0)
                    elif name == "connection" and value.strip().lower() == "close":
                        close = True
                if length > MAX_BODY:
                    return
                body = await reader.readexactly(length) if length else b""
                status, payload = self.answer(method, target.split("?", 1)[0], body)
                data = json.dumps(payload).encode()
                reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[status]
                writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
                             f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
                await writer.drain()
                if close:
                    return
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
            return
        finally:
            writer.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--detected", default="en", help="the language reported for source auto")
    args = parser.parse_args()
    try:
        asyncio.run(Stub(args.host, args.port, args.detected).serve(announce=True))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
