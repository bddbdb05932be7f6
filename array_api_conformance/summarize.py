#!/usr/bin/env python
"""Summarize a pytest-json-report file from array_api_conformance/run.sh.

Usage:
    python array_api_conformance/summarize.py REPORT.json [--by-function] [--no-failures]

Prints overall passed/failed/skipped/xfailed/xpassed/error totals, a per-file
breakdown (per test function with --by-function), collection errors, and the
node ids of failing/erroring tests (one per line, usable as xfails.txt lines).
"""
import argparse
import json
import sys
from collections import Counter, defaultdict

OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")


def _key(nodeid, by_function):
    path, _, rest = nodeid.partition("::")
    if not by_function:
        return path
    func = rest.split("[", 1)[0]
    return f"{path}::{func}" if func else path


def _table(rows, title):
    width = max([len(title)] + [len(k) for k in rows]) + 2
    header = title.ljust(width) + "".join(o.rjust(9) for o in OUTCOMES) + "    total"
    lines = [header, "-" * len(header)]
    total = Counter()
    for k in sorted(rows):
        c = rows[k]
        total.update(c)
        lines.append(k.ljust(width) + "".join(str(c.get(o, 0)).rjust(9) for o in OUTCOMES)
                     + str(sum(c.values())).rjust(9))
    lines.append("-" * len(header))
    lines.append("TOTAL".ljust(width) + "".join(str(total.get(o, 0)).rjust(9) for o in OUTCOMES)
                 + str(sum(total.values())).rjust(9))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report", help="pytest-json-report file (--json-report-file=...)")
    ap.add_argument("--by-function", action="store_true",
                    help="break down per test function instead of per file")
    ap.add_argument("--no-failures", action="store_true",
                    help="do not list failing node ids")
    ns = ap.parse_args(argv)

    with open(ns.report) as f:
        report = json.load(f)

    tests = report.get("tests", [])
    rows = defaultdict(Counter)
    failing = []
    for t in tests:
        outcome = t.get("outcome", "unknown")
        # a test that passed its call but errored in setup/teardown is reported as "error"
        rows[_key(t["nodeid"], ns.by_function)][outcome] += 1
        if outcome in ("failed", "error"):
            failing.append((outcome, t["nodeid"]))

    info = report.get("clnp_conformance", {})  # written by seed_random.py
    env = report.get("environment", {})
    module = info.get("module") or env.get("array_api_tests_module") or "?"
    totals = Counter(t.get("outcome", "unknown") for t in tests)
    print(f"report: {ns.report}")
    print(f"module: {module} {info.get('module_version') or ''}   "
          f"api_version: {info.get('api_version', '?')}   "
          f"suite: {(info.get('suite_commit') or '?')[:8]}   "
          f"spec: {(info.get('spec_commit') or '?')[:8]}")
    print(f"exitcode: {report.get('exitcode')}   duration: {report.get('duration', 0):.1f}s")
    print("totals: " + ", ".join(f"{o}={totals.get(o, 0)}" for o in OUTCOMES)
          + f", total={len(tests)}")
    print()
    print(_table(rows, "test function" if ns.by_function else "file"))

    coll_errors = [c for c in report.get("collectors", []) if c.get("outcome") == "failed"]
    if coll_errors:
        print(f"\ncollection errors ({len(coll_errors)}):")
        for c in coll_errors:
            msg = (c.get("longrepr") or "").strip().splitlines()
            print(f"  {c.get('nodeid')}: {msg[-1] if msg else ''}")

    if not ns.no_failures:
        print(f"\nfailing node ids ({len(failing)}):")
        for outcome, nodeid in failing:
            print(nodeid if outcome == "failed" else f"{nodeid}    [{outcome}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
