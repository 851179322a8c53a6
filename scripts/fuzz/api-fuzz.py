#!/usr/bin/env python3
"""API fuzz: schemathesis (PyPI) generates requests from the OpenAPI document the binary serves
and checks every answer against it. Run by `make test` (through `make test-api-fuzz`).

The binary is given (`--binary .build/release/sgem-server`); nothing is built here. It is started
on a free loopback port with a fresh data directory, an admin and an employee are created, and
schemathesis runs in passes: unauthenticated, as the employee, as the admin, then the operations
that end sessions or change accounts, ordered so that none of them spoils a later pass (see
PASSES). The target: no generated input gets a 5xx or an answer the document does not describe.
Known server bugs may be listed, each with its reason, in known-failures.json beside this file;
the integrator empties it as they are fixed.

Ends with `api-fuzz: N passed, N failed` (passes); exits non-zero when any pass failed.
"""
import argparse
import base64
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from translate_stub import Stub  # noqa: E402  (scripts/translate_stub.py: LibreTranslate's shapes)

PASSWORDS = {"admin": "correct-horse-battery", "employee": "employee-horse-battery"}
ROLES = {"admin": "admin", "employee": "employee"}

# The checks every pass runs, and why each is fair against what the document declares:
# - not_a_server_error: the target; no input a client can send deserves a 5xx.
# - response_schema_conformance: every declared response has a schema (`default` is the contract's
#   Error shape), so any JSON answer must match the schema of its status.
# - content_type_conformance: every declared response names its media type (JSON, text/plain for
#   /metrics); an error answered as HTML or text would be caught here.
# - status_code_conformance: every operation declares `default` (check-openapi.py insists), so the
#   document allows any status and this only bites if an operation ever drops `default`. Kept, cheap.
# - response_headers_conformance: only headers the document declares; cheap.
# - unsupported_method: the contract answers a method the route lacks with 405 and `Allow`.
# - allow_header_conformance: an OPTIONS answer's `Allow` lists the documented methods (HEAD implied).
# Left out on purpose: negative_data_rejection and positive_data_acceptance judge how strictly the
# server validates input against the document's input schemas (a valid-looking id that does not
# exist is a legitimate 404, a taken username a 409), which is not what this test is for;
# use_after_free, ensure_resource_availability and object_level_authorization need API links and
# several identities the document does not declare.
CHECKS = ["not_a_server_error", "response_schema_conformance", "content_type_conformance",
          "status_code_conformance", "response_headers_conformance", "unsupported_method",
          "allow_header_conformance"]
# With credentials: an operation that declares security must refuse a request without them.
AUTHENTICATED_CHECKS = CHECKS + ["ignored_auth"]

LOGOUT = "POST /api/v1/auth/logout"
PASSWORD_CHANGE = "PUT /api/v1/me/password"
ADMIN_USER_CHANGE = "PATCH /api/v1/admin/users/{id}"
PASSWORD_RESET = "POST /api/v1/admin/users/{id}/password-reset"
# Generated provider settings (none, a key-less DeepL, a URL nobody answers) would turn every later
# translation into the contract's 502/503/504: they run last, after everything that translates.
TRANSLATION_SETTINGS = "PUT /api/v1/admin/translation"


@dataclass
class Pass:
    """One schemathesis run: who it runs as, and which operations (all but `exclude`, or `only`)."""
    name: str
    user: str | None
    exclude: list = field(default_factory=list)
    only: list = field(default_factory=list)


# Order matters. Each session is opened before any fuzzing (the login fuzz locks the loopback
# address out of logins for a while, and wrong current passwords lock the account), and the
# operations that can end a session run after every pass that needs that session:
# - logout ends the session it is sent with: its own pass, after the others of that user;
# - PUT /me/password with a wrong current password locks the account's logins (with the right one,
#   which the fuzz cannot guess, it would end the other sessions): run as the employee only, the
#   admin's handler being the same;
# - PATCH /admin/users/{id} can deactivate or demote users (the admin too, once the fuzz has made
#   someone else an admin) and deactivation ends sessions: after the employee's passes;
# - a password reset ends the target's sessions, the admin's own included: last.
# Registration is opened before the unauthenticated pass so that POST /auth/register is exercised.
PASSES = [
    Pass("unauthenticated", None),
    Pass("employee", "employee", exclude=[LOGOUT]),
    Pass("employee logout", "employee", only=[LOGOUT]),
    Pass("admin", "admin", exclude=[LOGOUT, PASSWORD_CHANGE, ADMIN_USER_CHANGE, PASSWORD_RESET, TRANSLATION_SETTINGS]),
    Pass("admin user changes", "admin", only=[ADMIN_USER_CHANGE]),
    Pass("admin logout", "admin", only=[LOGOUT]),
    Pass("admin password reset", "admin", only=[PASSWORD_RESET]),
    Pass("admin translation settings", "admin", only=[TRANSLATION_SETTINGS]),
]


class Server:
    """sgem-server on 127.0.0.1 with a fresh data directory; its log goes to a file (a pipe nobody
    reads could stall it)."""

    def __init__(self, binary, work):
        self.binary = binary
        self.data = os.path.join(work, "data")
        self.log_path = os.path.join(work, "server.log")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.log = open(self.log_path, "w")
        # Logins must be fast (scrypt log2 N 10 instead of 17); warnings and errors are kept so a
        # 5xx can be matched to its log line by request id.
        self.proc = subprocess.Popen(
            [binary, "serve", "--host", "127.0.0.1", "--port", str(self.port), "--data-dir", self.data,
             "--log-level", "warning", "--password-hash-log-n", "10",
             # The translation stand-in listens on 127.0.0.1, which outbound calls may not reach unless allowed.
             "--outbound-allow", "127.0.0.1"],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 20
        while "listening on" not in self.log_tail():
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("server did not start: " + self.log_tail())
            time.sleep(0.05)  # polling the log file for the start-up line; there is nothing to block on
        self.url = f"http://127.0.0.1:{self.port}"

    def admin(self, *args, stdin=None):
        out = subprocess.run([self.binary, "admin", *args, "--data-dir", self.data, "--password-hash-log-n", "10"],
                             input=stdin, capture_output=True, text=True, timeout=60)
        if out.returncode != 0:
            raise RuntimeError(f"admin {' '.join(args)}: {out.stderr.strip()}")
        return out.stdout

    def request(self, method, path, body=None, token=None):
        """One request; returns (status, parsed JSON or None). Sent from 127.0.0.2 so that the
        fuzz's failed logins from 127.0.0.1 do not throttle the harness's own."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30, source_address=("127.0.0.2", 0))
        headers = {}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if token:
            headers["Authorization"] = "Bearer " + token
        try:
            conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
            resp = conn.getresponse()
            raw = resp.read()
        finally:
            conn.close()
        try:
            return resp.status, json.loads(raw) if raw else None
        except ValueError:
            return resp.status, None

    def alive(self):
        return self.proc.poll() is None

    def log_tail(self, lines=20):
        self.log.flush()
        with open(self.log_path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])

    def log_lines_with(self, needle):
        self.log.flush()
        with open(self.log_path, errors="replace") as f:
            return [line.rstrip() for line in f if needle in line]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def login(server, user):
    status, body = server.request("POST", "/api/v1/auth/login", {"login": user, "password": PASSWORDS[user]})
    if status != 200:
        raise RuntimeError(f"login as {user}: {status} {body}")
    return body["token"]


def session_works(server, user, token):
    status, body = server.request("GET", "/api/v1/me", token=token)
    return status == 200 and body.get("role") == ROLES[user] and body.get("active") is True


def restore(server, user):
    """Puts `user` back as it was (active, its role, its password) and opens a new session; for a
    pass whose session an earlier pass ended after all. Says so, since it means PASSES' ordering
    did not hold."""
    server.admin("activate", user)
    server.admin("set-role", user, ROLES[user])
    server.admin("reset-password", user, "--password-stdin", stdin=PASSWORDS[user] + "\n")
    token = login(server, user)
    # A reset password must be replaced before anything else answers: the same one will do.
    status, body = server.request("PUT", "/api/v1/me/password", {"currentPassword": PASSWORDS[user], "newPassword": PASSWORDS[user]},
                                  token=token)
    if status != 204:
        raise RuntimeError(f"choosing {user}'s own password again: {status} {body}")
    return token


def decode(content):
    if not content:
        return ""
    if "$base64" in content:
        return base64.b64decode(content["$base64"]).decode("utf-8", errors="replace")
    return content.get("string", "")


def short(text, limit=600):
    text = text.replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} chars)"


@dataclass
class Failure:
    pass_name: str
    operation: str
    check: str
    title: str
    message: str
    request: str
    response: str
    request_id: str | None
    known: str | None = None


def errors_from(ndjson_path):
    """The errors in a schemathesis NDJSON event stream (a network error, a timeout, the server
    going away, with the last requests before it), each as one line."""
    errors = []
    with open(ndjson_path) as f:
        for line in f:
            error = json.loads(line).get("NonFatalError")
            if error:
                value = error.get("value", {})
                errors.append(f"{error.get('label', '?')}: {value.get('type', '?')}: {value.get('message', '')}")
    return errors


def failures_from(ndjson_path, pass_name):
    """Every failed check in a schemathesis NDJSON event stream, with the request and the answer
    that failed it; one entry per distinct (operation, check, message)."""
    seen = {}
    with open(ndjson_path) as f:
        for line in f:
            event = json.loads(line)
            finished = event.get("ScenarioFinished")
            if not finished:
                continue
            recorder = finished.get("recorder", {})
            for case_id, checks in recorder.get("checks", {}).items():
                for check in checks:
                    if check.get("status") != "failure":
                        continue
                    info = check.get("failure_info", {}).get("failure", {})
                    operation = info.get("operation") or recorder.get("label", "?")
                    key = (operation, check["name"], info.get("message", ""))
                    if key in seen:
                        continue
                    interaction = recorder.get("interactions", {}).get(case_id) or {}
                    req = interaction.get("request") or {}
                    resp = interaction.get("response") or {}
                    body = decode(req.get("body"))
                    request = f"{req.get('method', '?')} {req.get('uri', '?')}" + (f" body: {short(body, 300)}" if body else "")
                    headers = resp.get("headers") or {}
                    request_id = (headers.get("x-request-id") or [None])[0]
                    response = (f"{resp.get('status_code', '?')} {(headers.get('content-type') or [''])[0]} "
                                f"{short(decode(resp.get('content')), 400)}") if resp else "(no response)"
                    seen[key] = Failure(pass_name, operation, check["name"], info.get("title", ""),
                                        info.get("message", "").strip(), request, response, request_id)
    return list(seen.values())


def load_known(path):
    """The allow-list: entries {operation, check, message (a substring of the failure's message),
    reason}. Each names a real server bug that is still to be fixed."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        entries = json.load(f)
    for e in entries:
        missing = [k for k in ("operation", "check", "message", "reason") if not e.get(k)]
        if missing:
            sys.exit(f"api-fuzz: {path}: entry {e} lacks {missing}")
    return entries


def mark_known(failures, known):
    used = set()
    for failure in failures:
        for i, e in enumerate(known):
            if e["operation"] == failure.operation and e["check"] == failure.check and e["message"] in failure.message:
                failure.known = e["reason"]
                used.add(i)
                break
    return [e for i, e in enumerate(known) if i not in used]


def run_pass(p, server, token, work, args):
    """Runs schemathesis for one pass; returns (report dict, failures, errors)."""
    report_dir = os.path.join(work, p.name.replace(" ", "-"))
    os.makedirs(report_dir)
    command = [sys.executable, "-m", "schemathesis.cli", "run", server.url + "/api/v1/openapi.json",
               "--checks", ",".join((AUTHENTICATED_CHECKS if token else CHECKS) + args.also_check),
               "--max-examples", str(args.max_examples), "--seed", str(args.seed),
               # One worker: the run is reproducible and leaves the second core to the server.
               "--workers", "1",
               # No example database: each run starts from the seed alone, not from past runs.
               "--generation-database", "none",
               # The credentials are ours (or none); generated cookie or bearer values would mix
               # cookie authentication (and its CSRF rule) into passes that mean to be bearer-only.
               "--generation-with-security-parameters", "false",
               "--request-timeout", "20", "--no-color",
               "--report", "ndjson,json", "--report-dir", report_dir]
    if token:
        command += ["--header", f"Authorization: Bearer {token}"]
    for name in p.only:
        command += ["--include-name", name]
    for name in p.exclude:
        command += ["--exclude-name", name]
    started = time.time()
    with open(os.path.join(report_dir, "schemathesis.log"), "w") as log:
        # cwd: schemathesis writes its own files (reports, caches) where it runs, never in the repo.
        out = subprocess.run(command, cwd=report_dir, stdout=log, stderr=subprocess.STDOUT, timeout=args.pass_timeout)
    elapsed = time.time() - started
    reports = [f for f in os.listdir(report_dir) if f.startswith("json-")]
    ndjsons = [f for f in os.listdir(report_dir) if f.startswith("ndjson-")]
    if not reports or not ndjsons:
        with open(os.path.join(report_dir, "schemathesis.log")) as f:
            raise RuntimeError(f"schemathesis exited {out.returncode} without a report:\n{f.read()[-3000:]}")
    with open(os.path.join(report_dir, reports[0])) as f:
        report = json.load(f)
    report["elapsed"] = elapsed
    report["returncode"] = out.returncode
    events = os.path.join(report_dir, ndjsons[0])
    errors = errors_from(events)
    if report.get("errors") and not errors:
        errors = [json.dumps(e) for e in report["errors"]]
    return report, failures_from(events, p.name), errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", required=True, help="the sgem-server binary to test")
    parser.add_argument("--max-examples", type=int, default=100, help="generated cases per operation and phase")
    parser.add_argument("--seed", type=int, default=6, help="schemathesis seed (the run is reproducible)")
    parser.add_argument("--pass-timeout", type=int, default=300, help="seconds one pass may take")
    parser.add_argument("--known", default=os.path.join(HERE, "known-failures.json"), help="allow-list of known failures")
    parser.add_argument("--also-check", type=lambda v: [c for c in v.split(",") if c], default=[],
                        help="more schemathesis checks, comma-separated, for exploring (make test runs without)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (reports, logs)")
    args = parser.parse_args()

    known = load_known(args.known)
    work = tempfile.mkdtemp(prefix="sgem-api-fuzz-")
    server = None
    passed = failed = 0
    all_failures = []
    started = time.time()
    try:
        server = Server(args.binary, work)
        server.admin("create-user", "--username", "admin", "--email", "admin@example.com", "--name", "Ada Admin",
                     "--role", "admin", "--password-stdin", stdin=PASSWORDS["admin"] + "\n")
        server.admin("create-user", "--username", "employee", "--email", "employee@example.com", "--name", "Emil Employee",
                     "--role", "employee", "--password-stdin", stdin=PASSWORDS["employee"] + "\n")
        # Translation through a local LibreTranslate stand-in, so translating answers 200 (a
        # provider's failures are the contract's 5xx, tested in the Swift suite).
        stub = Stub().start()
        server.admin("translation", "set", "url", stub.url)
        # One session per pass, all opened before the first pass (see PASSES).
        tokens = [login(server, p.user) if p.user else None for p in PASSES]
        status, _ = server.request("PUT", "/api/v1/admin/settings", {"registration": "open"}, token=login(server, "admin"))
        if status != 200:
            raise RuntimeError(f"opening registration: {status}")

        for p, token in zip(PASSES, tokens):
            notes = []
            if token and not session_works(server, p.user, token):
                notes.append("its session was ended by an earlier pass; restored the account and logged in again")
                token = restore(server, p.user)
            report, failures, errors = run_pass(p, server, token, work, args)
            all_failures += failures
            if not server.alive():
                notes.append(f"THE SERVER EXITED (status {server.proc.returncode}); the end of its log:\n"
                             + server.log_tail())
            if report["returncode"] not in (0, 1):
                notes.append(f"schemathesis exited {report['returncode']}")
            mark_known(failures, known)
            new = [f for f in failures if not f.known]
            ok = server.alive() and not errors and report["returncode"] in (0, 1) and not new
            cases = report.get("test_cases", {}).get("generated", 0)
            ops = report.get("operations", {}).get("tested", 0)
            print(f"{'PASS' if ok else 'FAIL'} {p.name}: {ops} operations, {cases} cases, "
                  f"{len(new)} failures, {len(failures) - len(new)} known, {len(errors)} errors ({report['elapsed']:.0f} s)")
            for e in errors:
                print("  error: " + e.replace("\n", "\n    "))
            for note in notes:
                print(f"  note: {note}")
            passed, failed = (passed + 1, failed) if ok else (passed, failed + 1)
            if not server.alive():
                left = len(PASSES) - PASSES.index(p) - 1
                failed += left
                print(f"FAIL {left} passes not run: the server is gone")
                break

        # An entry is only stale if every pass ran.
        stale = mark_known(all_failures, known) if server.alive() else []
        for f in all_failures:
            if f.known:
                # Known ones in a line each: the details are in the allow-list's reason.
                print(f"KNOWN [{f.pass_name}] {f.operation}: {f.check}: {f.known}")
                continue
            print(f"\nFAILURE [{f.pass_name}] {f.operation}: {f.check} ({f.title})")
            print("  " + f.message.replace("\n", "\n  "))
            print(f"  request:  {f.request}")
            print(f"  response: {f.response}")
            if f.request_id and f.response.startswith("5"):
                for line in server.log_lines_with(f.request_id):
                    print(f"  server log: {line}")
        for e in stale:
            print(f"\nnote: known failure no longer seen, remove it from {os.path.basename(args.known)}: "
                  f"{e['operation']} {e['check']} '{e['message']}'")
    except Exception as e:  # noqa: BLE001 - the harness itself failing is a failed run, said plainly
        failed += 1
        print(f"FAIL api-fuzz harness: {e}")
        if server:
            print(server.log_tail())
    finally:
        if server:
            server.stop()
        if args.keep or failed:
            print(f"\nreports and logs: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"\n(seed {args.seed}, {args.max_examples} examples per operation, {time.time() - started:.0f} s)")
    print(f"api-fuzz: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
