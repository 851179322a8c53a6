"""Helpers shared by the benchmark scripts' Python parts: result rows and JSON files.

A result file is bench-results/NAME.json: {"benchmark": NAME, "rows": [...], ...details}.
Each row is one line of summary.md: benchmark, sgem, reference, ratio, target, pass
(true / false / null when the row has no target and is only context).
"""
import json
import os
import time


def fmt(value, digits=None):
    """A figure for the table: thousands separated, a sensible number of decimals."""
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    if digits is None:
        digits = 0 if abs(value) >= 100 else (1 if abs(value) >= 10 else 2)
    return f"{value:,.{digits}f}"


def ratio(a, b):
    return None if a is None or not b else a / b


def row(benchmark, sgem, reference, ratio_value, target, passed, unit=""):
    suffix = f" {unit}" if unit else ""
    return {
        "benchmark": benchmark,
        "sgem": fmt(sgem) + (suffix if sgem is not None else ""),
        "reference": reference if isinstance(reference, str) else fmt(reference) + (suffix if reference is not None else ""),
        "ratio": "—" if ratio_value is None else f"{ratio_value:.2f}×",
        "target": target,
        "pass": passed,
    }


def write_result(results_dir, name, payload):
    payload = {"benchmark": name, "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **payload}
    path = os.path.join(results_dir, f"{name}.json")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(payload, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
    return path


def verdict(rows):
    """PASS when every row with a target passed, FAIL otherwise."""
    judged = [r["pass"] for r in rows if r["pass"] is not None]
    return "PASS" if all(judged) else "FAIL"
