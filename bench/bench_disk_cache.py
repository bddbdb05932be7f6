"""Start-up cost of program builds, with and without clnp's disk cache of program binaries.

    python bench/bench_disk_cache.py [--reps 3] [--device SPEC]
                                     [--csv bench/results/disk-cache-<dev>.csv]

Each measurement is a fresh child Python process running the same workload through the public
API (elementwise expressions and a reduction in float32 and float64, a matmul, a cumulative
sum: a dozen or so distinct programs), timed from before ``import clnp`` to the end of the work
with the queue drained (``work_s`` leaves the import out). Cache directories are fresh temp dirs:

* ``cold``: empty ``CLNP_CACHE_DIR`` and empty ``POCL_CACHE_DIR``: every program is compiled.
* ``clnp-warm``: the ``CLNP_CACHE_DIR`` the cold run filled, a fresh ``POCL_CACHE_DIR``:
  what clnp's cache alone saves (PoCL's own cache cannot hide the cost).
* ``pocl-warm``: ``CLNP_DISK_CACHE=0``, the ``POCL_CACHE_DIR`` the cold run filled: what PoCL's
  own kernel cache gives without clnp's.
* ``both-warm``: both directories from the cold run (a user's second session).

Every repetition starts from new empty directories. The child also reports a checksum of its
results, which must agree between all runs (binaries loaded from disk compute the same), and
the counters of ``clnp._runtime.program_cache``. Times are medians over ``--reps``.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import time
t0 = time.perf_counter()
import json, sys
import numpy as np
import clnp
from clnp._runtime import program_cache as _program_cache
t_import = time.perf_counter() - t0
dev = clnp.default_device()
rng = np.random.default_rng(0)
out = []
for dt in ("float32", "float64"):
    if not dev.supports(np.dtype(dt)):
        continue
    a = clnp.asarray(rng.standard_normal((64, 64)).astype(dt), device=dev)
    b = clnp.asarray(rng.standard_normal((64, 64)).astype(dt), device=dev)
    out += [a * b + 1, clnp.sin(a) * clnp.exp(b * 0.1), clnp.sqrt(clnp.abs(a)) - b,
            clnp.where(a > b, a, b), clnp.sum(a * a), clnp.max(b, axis=0), a @ b,
            clnp.cumulative_sum(a, axis=1)]
clnp.synchronize()
t_end = time.perf_counter() - t0
check = float(sum(float(np.sum(np.asarray(x, dtype=np.float64))) for x in out))
print(json.dumps({"import_s": t_import, "total_s": t_end, "work_s": t_end - t_import,
                  "programs": len(dev._programs), "stats": _program_cache.stats,
                  "device": str(dev), "check": check}))
"""


def child(env: dict[str, str]) -> dict:
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True,
                       cwd=ROOT)
    wall = time.perf_counter() - t
    if r.returncode != 0:
        raise SystemExit(f"child failed ({r.returncode}):\n{r.stderr}")
    res = json.loads(r.stdout.strip().splitlines()[-1])
    res["process_s"] = wall
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--device", default=None)
    ap.add_argument("--csv", default=None)
    args = ap.parse_args(argv)

    base = dict(os.environ)
    for k in ("CLNP_DEBUG", "CLNP_DISK_CACHE", "PYOPENCL_NO_CACHE"):
        base.pop(k, None)
    base["PYTHONPATH"] = os.pathsep.join([ROOT] + ([base["PYTHONPATH"]]
                                                   if base.get("PYTHONPATH") else []))
    if args.device:
        base["CLNP_DEVICE"] = args.device

    runs = ("cold", "clnp-warm", "pocl-warm", "both-warm")
    results: dict[str, list[dict]] = {r: [] for r in runs}
    checks = set()
    with tempfile.TemporaryDirectory(prefix="clnp-bench-cache-") as tmp:
        for rep in range(args.reps):
            d = os.path.join(tmp, str(rep))
            clnp_dir, pocl_dir = os.path.join(d, "clnp"), os.path.join(d, "pocl")
            for p in (clnp_dir, pocl_dir):
                os.makedirs(p)
            envs = {
                "cold": dict(base, CLNP_CACHE_DIR=clnp_dir, POCL_CACHE_DIR=pocl_dir),
                "clnp-warm": dict(base, CLNP_CACHE_DIR=clnp_dir,
                                  POCL_CACHE_DIR=tempfile.mkdtemp(dir=d)),
                "pocl-warm": dict(base, CLNP_CACHE_DIR=clnp_dir, CLNP_DISK_CACHE="0",
                                  POCL_CACHE_DIR=pocl_dir),
                "both-warm": dict(base, CLNP_CACHE_DIR=clnp_dir, POCL_CACHE_DIR=pocl_dir),
            }
            for r in runs:
                res = child(envs[r])
                results[r].append(res)
                checks.add(round(res["check"], 6))
                print(f"rep {rep} {r:10s} total {res['total_s']:6.2f} s  work "
                      f"{res['work_s']:6.2f} s  (import {res['import_s']:.2f} s, process "
                      f"{res['process_s']:.2f} s)  programs {res['programs']}  "
                      f"{res['stats']}", flush=True)
    if len(checks) != 1:
        raise SystemExit(f"results differ between runs: {checks}")

    device = results["cold"][0]["device"]
    med = {r: {k: statistics.median(x[k] for x in results[r])
               for k in ("total_s", "work_s", "import_s", "process_s")} for r in runs}
    rows = []
    print(f"\n{device}, median of {args.reps}:")
    for r in runs:
        m, last = med[r], results[r][-1]
        row = {"run": r, "device": device, "reps": args.reps,
               "total_s": round(m["total_s"], 3), "work_s": round(m["work_s"], 3),
               "import_s": round(m["import_s"], 3), "process_s": round(m["process_s"], 3),
               "cold_over_this_total": round(med["cold"]["total_s"] / m["total_s"], 2),
               "cold_over_this_work": round(med["cold"]["work_s"] / m["work_s"], 2),
               "programs": last["programs"], "disk_hits": last["stats"]["hits"],
               "disk_stores": last["stats"]["stores"]}
        rows.append(row)
        print(f"  {r:10s} total {row['total_s']:6.2f} s  work {row['work_s']:6.2f} s  "
              f"cold/this: total {row['cold_over_this_total']:5.2f}x  work "
              f"{row['cold_over_this_work']:5.2f}x  (programs {row['programs']}, disk hits "
              f"{row['disk_hits']}, stores {row['disk_stores']})")
    path = args.csv or os.path.join(
        ROOT, "bench", "results",
        "disk-cache-" + ("pocl-cpu" if "pocl" in device else device.split()[0].replace(":", ""))
        + ".csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {os.path.relpath(path, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
