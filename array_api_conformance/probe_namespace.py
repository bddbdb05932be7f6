#!/usr/bin/env python
"""List what the Array API test suite touches on the namespace while it loads.

Runs ``run.sh --collect-only`` with a logging proxy around a working namespace
(default array_api_strict) and prints every namespace attribute, info-object
method, array attribute and call used at suite import time (conftest) and at
test collection time (test-module import, parametrization). Anything listed
must exist in clnp (and behave) or collection errors out / tests get
mis-parametrized.

Experiments (hide names to see what collection really needs):
    CLNP_PROBE_HIDE=name,...   the proxy raises AttributeError for these names
    CLNP_PROBE_ONLY=name,...   ... for every non-dunder name except these

Usage:
    python array_api_conformance/probe_namespace.py [--target array_api_strict] [run.sh args...]
    (default run.sh args: --full)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", default="array_api_strict")
    ns, rest = ap.parse_known_args()
    rest = rest or ["--full"]
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "probe.json")
        env = dict(os.environ, ARRAY_API_TESTS_MODULE="array_api_conformance._probe_xp",
                   CLNP_PROBE_TARGET=ns.target, CLNP_PROBE_LOG=log)
        cmd = [os.path.join(HERE, "run.sh"), "--collect-only", "-q",
               "-p", "array_api_conformance.probe_plugin", *rest]
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        tail = p.stdout.strip().splitlines()[-1:] if p.stdout.strip() else []
        print(f"# collect-only rc={p.returncode}: {' '.join(tail)}")
        if p.returncode not in (0, 5):
            print(p.stdout[-3000:], p.stderr[-3000:], file=sys.stderr)
        with open(log) as f:
            data = json.load(f)
    for kind, title in (("namespace", "namespace attributes (xp.<name>)"),
                        ("info", "__array_namespace_info__() attributes"),
                        ("array", "array attributes (public)"),
                        ("calls", "calls made")):
        print(f"\n## {title}")
        for name, phases in sorted(data[kind].items()):
            print(f"  {name:60s} [{', '.join(phases)}]")


if __name__ == "__main__":
    main()
