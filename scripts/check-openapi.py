#!/usr/bin/env python3
"""Validates the OpenAPI document the binary serves against the OpenAPI 3 schema, and checks
that every route the server answers is in it. Run by `make test`.
Ends with `openapi: N passed, N failed`.
"""
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

from openapi_spec_validator import validate


def main():
    binary = sys.argv[1]
    data = tempfile.mkdtemp(prefix="sgem-openapi-")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([binary, "serve", "--host", "127.0.0.1", "--port", str(port), "--data-dir", data,
                             "--log-level", "warning", "--bench-module"], stdout=subprocess.PIPE, text=True)
    passed = failed = 0
    try:
        deadline = time.time() + 20
        while "listening on" not in proc.stdout.readline():
            if time.time() > deadline or proc.poll() is not None:
                sys.exit("openapi: server did not start")
        doc = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/openapi.json", timeout=10))
        checks = []

        def check(name, fn):
            nonlocal passed, failed
            try:
                fn()
                passed += 1
                print(f"PASS {name}")
            except Exception as e:  # noqa: BLE001 - report any failure as a failed check
                failed += 1
                print(f"FAIL {name}: {e}")

        check("document validates against the OpenAPI 3.0 schema", lambda: validate(doc))

        def every_operation_has_responses_and_unique_ids():
            ids = [op["operationId"] for path in doc["paths"].values() for op in path.values()]
            assert len(ids) == len(set(ids)), "duplicate operationId"
            for path, ops in doc["paths"].items():
                for method, op in ops.items():
                    assert op.get("summary"), f"{method} {path} has no summary"
                    assert "default" in op["responses"], f"{method} {path} lacks the error response"
        check("every operation has a summary, unique id and the error shape", every_operation_has_responses_and_unique_ids)

        def contract_paths_present():
            expected = ["/healthz", "/readyz", "/metrics", "/api/v1/openapi.json", "/api/v1/auth/login",
                        "/api/v1/auth/logout", "/api/v1/auth/register", "/api/v1/me", "/api/v1/me/password",
                        "/api/v1/me/avatar", "/api/v1/users", "/api/v1/users/{id}", "/api/v1/users/{id}/avatar",
                        "/api/v1/admin/users", "/api/v1/admin/users/{id}", "/api/v1/admin/users/{id}/password-reset",
                        "/api/v1/admin/audit", "/api/v1/admin/settings", "/api/v1/bench/writes"]
            missing = [p for p in expected if p not in doc["paths"]]
            assert not missing, f"missing {missing}"
        check("the contract's paths are documented", contract_paths_present)
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        shutil.rmtree(data, ignore_errors=True)
    print(f"openapi: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
