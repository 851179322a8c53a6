"""What the release-binary checks (check-openapi.py, check-ical.py) share: a server on a free
loopback port with a fresh data directory, and named checks counted into `NAME: N passed, N failed`."""
import shutil
import socket
import subprocess
import sys
import tempfile
import time


class Server:
    """`binary serve` on 127.0.0.1 with a fresh data directory; `prepare` runs admin commands
    (each a list of words, optionally with `input`) on that directory before it starts."""

    def __init__(self, binary, label, serve_args=(), prepare=()):
        self.data = tempfile.mkdtemp(prefix=f"sgem-{label}-")
        self.label = label
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        flags = ["--data-dir", self.data, "--log-level", "warning"]
        for words, stdin in prepare:
            subprocess.run([binary, *words, *flags], input=stdin, text=True, check=True, stdout=subprocess.DEVNULL)
        self.proc = subprocess.Popen([binary, "serve", "--host", "127.0.0.1", "--port", str(self.port), *flags, *serve_args],
                                     stdout=subprocess.PIPE, text=True)
        deadline = time.time() + 20
        while "listening on" not in self.proc.stdout.readline():
            if time.time() > deadline or self.proc.poll() is not None:
                self.stop()
                sys.exit(f"{label}: server did not start")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=15)
        shutil.rmtree(self.data, ignore_errors=True)


class Checks:
    """Named checks: each prints PASS or FAIL with the reason; `finish` prints the tally and exits."""

    def __init__(self, label):
        self.label = label
        self.passed = self.failed = 0

    def check(self, name, fn):
        try:
            fn()
            self.passed += 1
            print(f"PASS {name}")
        except Exception as e:  # noqa: BLE001 - report any failure as a failed check
            self.failed += 1
            print(f"FAIL {name}: {e!r}")

    def finish(self):
        print(f"{self.label}: {self.passed} passed, {self.failed} failed")
        sys.exit(1 if self.failed else 0)
