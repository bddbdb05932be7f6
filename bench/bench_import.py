"""The wall time of ``import clnp`` in a fresh interpreter, beside ``import numpy``, and
optionally beside an older checkout measured in the same run (issue #23: the layout move must
not make start-up worse).

    python bench/bench_import.py [--reps 21] [--modules clnp clnp_grad clnp_nn]
                                 [--compare OLD_ROOT --compare-label before]
                                 [--label after] [--csv bench/results/import-time.csv]

Each repetition starts a new ``python -c`` child with the checkout first on ``sys.path`` and
``CLNP_DEVICE`` unset, and the child times its own import with ``time.perf_counter`` (the
interpreter's start-up is not counted; ``import numpy`` is timed the same way in its own child,
as the reference every clnp user pays anyway). The checkouts' children are interleaved, so a
change in the machine's load reaches every column alike; the figures are medians, with the
interquartile range beside them. Python's bytecode caches are written by one discarded run
each (``PYTHONDONTWRITEBYTECODE`` is dropped from the children's environment: without ``.pyc``
files every run compiles clnp's sources again, which no installed user pays), and the child's
CPU time over the import (``cpu_s``: its threads' user + system time) is recorded beside the
wall time, which moves with the machine's load.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_core import append_csv  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# the child: the checkout first on sys.path, then its own import timed
CHILD = ("import sys, time; sys.path.insert(0, {root!r}); t0 = time.perf_counter(); "
         "c0 = time.process_time(); import {module}; "
         "print(time.perf_counter() - t0, time.process_time() - c0)")


def _time_import(module: str, root: str) -> tuple[float, float]:
    """Wall and CPU seconds a fresh interpreter spends in ``import module`` with ``root``
    first on the path."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("CLNP_DEVICE", "PYTHONDONTWRITEBYTECODE")}
    r = subprocess.run([sys.executable, "-c", CHILD.format(root=root, module=module)],
                       capture_output=True, text=True, env=env, cwd=root, check=True)
    wall, cpu = r.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def _quartiles(xs: list[float]) -> tuple[float, float, float]:
    q1, q2, q3 = statistics.quantiles(xs, n=4)
    return q1, q2, q3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--label", default="this checkout")
    ap.add_argument("--compare", metavar="OLD_ROOT", help="another checkout to time alongside")
    ap.add_argument("--compare-label", default="compared checkout")
    ap.add_argument("--modules", nargs="+", default=["clnp"],
                    help="packages to time, each in its own fresh interpreter")
    ap.add_argument("--csv", default=os.path.join(ROOT, "bench", "results", "import-time.csv"))
    args = ap.parse_args()
    runs = [("numpy", "numpy", ROOT)]
    for module in args.modules:
        runs.append((args.label, module, ROOT))
        if args.compare:
            runs.append((args.compare_label, module, os.path.abspath(args.compare)))
    for _, module, root in runs:          # bytecode caches written, libraries paged in
        _time_import(module, root)
    times: dict[tuple[str, str], list[float]] = {(label, m): [] for label, m, _ in runs}
    cpus: dict[tuple[str, str], list[float]] = {(label, m): [] for label, m, _ in runs}
    for _ in range(args.reps):
        for label, module, root in runs:
            wall, cpu = _time_import(module, root)
            times[label, module].append(wall)
            cpus[label, module].append(cpu)
    numpy_median = statistics.median(times["numpy", "numpy"])
    rows = []
    for label, module, root in runs:
        q1, q2, q3 = _quartiles(times[label, module])
        rows.append({"label": label, "module": module, "reps": args.reps,
                     "median_s": f"{q2:.4f}", "q1_s": f"{q1:.4f}", "q3_s": f"{q3:.4f}",
                     "cpu_median_s": f"{statistics.median(cpus[label, module]):.4f}",
                     "vs_numpy": f"{q2 / numpy_median:.2f}",
                     "python": platform.python_version(), "machine": platform.processor()
                     or platform.machine()})
        print(f"{label:>20}: import {module:<5} median {q2 * 1e3:7.1f} ms "
              f"(IQR {q1 * 1e3:.1f}-{q3 * 1e3:.1f}), "
              f"CPU {statistics.median(cpus[label, module]) * 1e3:.1f} ms, "
              f"{q2 / numpy_median:.2f}x numpy")
    append_csv(args.csv, rows)
    print("appended to", args.csv)


if __name__ == "__main__":
    main()
