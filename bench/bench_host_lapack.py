"""clnp.linalg on the CPU device: NumPy's LAPACK on the buffers' host memory against clnp's
OpenCL kernels on the same cores (issue #25, item 2), with NumPy itself as the reference.

    python bench/bench_host_lapack.py [--sizes 64 256 512] [--reps 5]
                                      [--csv bench/results/host-lapack-pocl-cpu.csv]

Each decomposition runs three ways in one process, taking turns: ``clnp`` with the host path
(the default, ``CLNP_HOST_LAPACK`` unset), ``clnp kernels`` (``CLNP_HOST_LAPACK=0``), and
``numpy`` on a host array. Times are medians of ``--reps`` after a warm-up call (which builds
the kernels), each clnp call finished by reading one element back.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import clnp  # noqa: E402
from bench_core import append_csv  # noqa: E402
from clnp._routines import host_lapack  # noqa: E402

OPS = {
    "svd": (lambda xp, a: xp.linalg.svd(a), "general"),
    "eigh": (lambda xp, a: xp.linalg.eigh(a), "symmetric"),
    "eig": (lambda xp, a: xp.linalg.eig(a), "general"),
}


def _time(fn, reps: int) -> float:
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[64, 256, 512])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--dtype", default="float64")
    ap.add_argument("--csv", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "results", "host-lapack-pocl-cpu.csv"))
    args = ap.parse_args()
    dev = clnp.default_device()
    if not dev.shares_host_memory:
        sys.exit(f"{dev} does not share host memory: nothing to compare")
    rng = np.random.default_rng(0)
    rows = []
    for n in args.sizes:
        g = rng.standard_normal((n, n)).astype(args.dtype)
        mats = {"general": g, "symmetric": (g + g.T) / 2}
        for name, (op, kind) in OPS.items():
            a = mats[kind]
            x = clnp.asarray(a, device=dev)

            def run_clnp(host: str) -> float:
                os.environ[host_lapack.ENV] = host
                try:
                    return _time(lambda: float(op(clnp, x)[0].reshape(-1)[0].real), args.reps)
                finally:
                    os.environ.pop(host_lapack.ENV, None)
            t = {"clnp": run_clnp("1"), "clnp kernels": run_clnp("0"),
                 "numpy": _time(lambda: op(np, a), args.reps)}
            for impl, secs in t.items():
                rows.append({"op": name, "n": n, "dtype": args.dtype, "impl": impl,
                             "median_s": f"{secs:.6f}", "reps": args.reps,
                             "vs_numpy": f"{t['numpy'] / secs:.3f}", "device": dev.key})
            print(f"{name:5s} n={n:4d}: host LAPACK {t['clnp'] * 1e3:9.2f} ms, kernels "
                  f"{t['clnp kernels'] * 1e3:9.2f} ms, numpy {t['numpy'] * 1e3:9.2f} ms "
                  f"(kernels / host {t['clnp kernels'] / t['clnp']:.1f}x)")
    append_csv(args.csv, rows)
    print("appended to", args.csv)


if __name__ == "__main__":
    main()
