#!/usr/bin/env python3
"""How many spellings of 127.0.0.1 a company feed URL reaches (issue 15): a feed stand-in on
127.0.0.1, port 0, and a server whose six feeds name it as `2130706433`, `0x7f000001`, `127.1`,
`0`, `localhost` and `[::ffff:127.0.0.1]`, each on its own path. After the round at start, prints
`internal spellings fetched: N of 6` (what the stand-in was asked) and each feed's status.

    python3 scripts/outbound-spellings.py --binary .build/debug/sgem-server [--allow 127.0.0.1]
(`--allow LIST` starts the server with `--outbound-allow LIST`: the deliberate exception.)
"""
import argparse
import http.server
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklib import Server  # noqa: E402

SPELLINGS = ["2130706433", "0x7f000001", "127.1", "0", "localhost", "[::ffff:127.0.0.1]"]
RSS = b'<?xml version="1.0"?><rss version="2.0"><channel><title>Inside</title><item><title>internal</title></item></channel></rss>'


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=".build/debug/sgem-server")
    parser.add_argument("--allow", help="passed to the server as --outbound-allow")
    args = parser.parse_args()
    asked = set()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            asked.add(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "application/rss+xml")
            self.send_header("Content-Length", str(len(RSS)))
            self.end_headers()
            self.wfile.write(RSS)

        def log_message(self, *_):
            pass

    stub = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=stub.serve_forever, daemon=True).start()
    port = stub.server_address[1]
    urls = [f"http://{host}:{port}/s{i}" for i, host in enumerate(SPELLINGS)]
    serve_args = ["--outbound-allow", args.allow] if args.allow else []
    server = Server(args.binary, "outbound", serve_args=serve_args, prepare=[(["migrate"], None), (["admin", "company", "feeds", "set", *urls], None)])
    try:
        deadline = time.time() + 30
        while True:
            shown = subprocess.run([args.binary, "admin", "company", "feeds", "--data-dir", server.data, "--log-level", "error"],
                                   capture_output=True, text=True).stdout
            if "pending" not in shown.lower() or time.time() > deadline:
                break
            time.sleep(0.5)
        print(shown.strip())
        print(f"internal spellings fetched: {len(asked)} of {len(SPELLINGS)}")
    finally:
        server.stop()
        stub.shutdown()


if __name__ == "__main__":
    main()
