"""What the eager ``LinAlgError`` check costs: ``inv``, ``solve`` and ``cholesky`` with and
without the read-back of the kernels' status flags, beside NumPy.

    python bench/bench_linalg_check.py [--device SPEC] [--sizes 64,512] [--reps 9]
                                       [--csv bench/results/linalg-check-<dev>.csv]

Columns (median milliseconds per call, after warm-up, the runs of the three clnp columns
interleaved; each call of the first two waits for its result, as a checked call must):

* ``checked``: the namespace call (``clnp.linalg.inv(x)``): kernels, then one blocking read
  of the status array (one int per matrix) and the test on the host.
* ``unchecked``: the same primitive bound directly (what a traced call runs), then
  ``queue.finish()``: the same kernels and the same wait, no read.
* ``unchecked_async``: the unchecked call issued ``--burst`` times before one
  ``queue.finish()``, per call: what a pipeline of calls costs when nothing waits for each
  result (the check also takes that overlap away).
* ``numpy``: ``numpy.linalg`` on the host (LAPACK), for scale.

``check_cost = checked - unchecked`` is the price of the read itself (noisy where the kernels
take long: it is the difference of two medians); the script also prints the read alone, on
an idle queue. ``checked / unchecked_async`` includes the lost overlap.
"""
from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import time
from typing import Any, Callable

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import clnp  # noqa: E402
from clnp._core.prims import primitive  # noqa: E402
from clnp._runtime.device import select_device  # noqa: E402


def _medians_ms(fns: list[tuple[Callable[[], Any], int]], reps: int) -> list[float]:
    """Median milliseconds per call of each ``(fn, calls per run)``; the runs of all of them
    are interleaved, so a change of machine load (the machine is shared) hits them alike."""
    for fn, _ in fns:
        fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(reps):
        for (fn, per), ts in zip(fns, times):
            t = time.perf_counter()
            fn()
            ts.append((time.perf_counter() - t) / per)
    return [statistics.median(ts) * 1e3 for ts in times]


def _cases(n: int, device: Any, dtype: np.dtype) -> list[tuple[str, Callable, Callable,
                                                                Callable]]:
    """(name, checked call, unchecked call, numpy call) per function."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(dtype)
    spd = (a @ a.T + n * np.eye(n)).astype(dtype)
    b = rng.standard_normal((n, 1)).astype(dtype)
    A, S, B = (clnp.asarray(v, device=device) for v in (a, spd, b))
    la, bind = clnp.linalg, lambda name, *args, **kw: primitive(name).bind(*args, **kw)

    def solve_unchecked() -> Any:
        lu, piv = bind("lu", A)
        return bind("lu_solve", lu, piv, B)

    return [("inv", lambda: la.inv(A), lambda: bind("inv", A), lambda: np.linalg.inv(a)),
            ("solve", lambda: la.solve(A, B), solve_unchecked, lambda: np.linalg.solve(a, b)),
            ("cholesky", lambda: la.cholesky(S), lambda: bind("cholesky", S, upper=False),
             lambda: np.linalg.cholesky(spd))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--sizes", default="64,512")
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--burst", type=int, default=8)
    ap.add_argument("--csv", default=None)
    args = ap.parse_args()
    device = select_device(args.device) if args.device else clnp.default_device()
    dtype = np.dtype(np.float64 if device.has_fp64 else np.float32)
    q = device.queue
    print(f"device: {device}  dtype: {dtype}")
    flag = clnp.zeros((1,), dtype=clnp.int32, device=device)
    q.finish()
    (t_read,) = _medians_ms([(lambda: flag.to_numpy(), 1)], max(args.reps, 101))
    print(f"one status read-back (1 int32, idle queue): {t_read * 1e3:.1f} us")
    print(f"{'function':<10}{'n':>6}{'checked':>10}{'unchecked':>11}{'async':>9}"
          f"{'numpy':>9}{'check_cost':>12}{'chk/async':>11}   (ms per call)")
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        for name, checked, unchecked, ref in _cases(n, device, dtype):
            def sync(fn: Callable = unchecked) -> None:
                fn()
                q.finish()

            def burst(fn: Callable = unchecked) -> None:
                for _ in range(args.burst):
                    fn()
                q.finish()
            t_chk, t_un, t_as = _medians_ms(
                [(checked, 1), (sync, 1), (burst, args.burst)], args.reps)
            # NumPy apart: its BLAS threads keep spinning after a call, which would slow
            # whichever clnp call comes next on the CPU device
            (t_np,) = _medians_ms([(ref, 1)], args.reps)
            row = dict(function=name, n=n, dtype=dtype.name, checked_ms=round(t_chk, 4),
                       unchecked_ms=round(t_un, 4), unchecked_async_ms=round(t_as, 4),
                       numpy_ms=round(t_np, 4), check_cost_ms=round(t_chk - t_un, 4),
                       checked_over_async=round(t_chk / t_as, 3))
            rows.append(row)
            print(f"{name:<10}{n:>6}{t_chk:>10.3f}{t_un:>11.3f}{t_as:>9.3f}{t_np:>9.3f}"
                  f"{t_chk - t_un:>12.3f}{t_chk / t_as:>11.2f}")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
