#!/usr/bin/env python3
"""Validates the OpenAPI document the binary serves against the OpenAPI 3 schema, and checks
that every route the server answers is in it. Run by `make test`.
Ends with `openapi: N passed, N failed`.
"""
import json
import os
import sys
import urllib.request

from openapi_spec_validator import validate

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklib import Checks, Server  # noqa: E402


def main():
    server = Server(sys.argv[1], "openapi", serve_args=["--bench-module"])
    checks = Checks("openapi")
    check = checks.check
    try:
        doc = json.load(urllib.request.urlopen(f"http://127.0.0.1:{server.port}/api/v1/openapi.json", timeout=10))

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
                        "/api/v1/admin/audit", "/api/v1/admin/settings", "/api/v1/bench/writes",
                        "/api/v1/holidays", "/api/v1/holidays/{id}", "/api/v1/admin/holidays/{id}",
                        "/api/v1/holidays/calendar", "/api/v1/holidays/calendar.ics", "/api/v1/admin/holidays.csv"]
            missing = [p for p in expected if p not in doc["paths"]]
            assert not missing, f"missing {missing}"
        check("the contract's paths are documented", contract_paths_present)
    finally:
        server.stop()
    checks.finish()


if __name__ == "__main__":
    main()
