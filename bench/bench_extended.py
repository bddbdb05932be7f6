"""Side-by-side benchmarks of the larger library routines: clnp vs NumPy (and PyTorch CPU / JAX
when importable) in one process.

    python bench/bench_extended.py [--device SPEC] [--reps 9] [--quick]
                                   [--csv bench/results/extended-<dev>.csv]

Workloads (default sizes; --quick shrinks them):

- sort of 2^22 float32: clnp.sort vs numpy.sort(kind='stable') and numpy.sort (default kind)
- cumulative_sum of 2^24 float32: clnp.cumulative_sum vs numpy.cumsum
- rfft of 2^20 float32: clnp.fft.rfft vs numpy.fft.rfft
- solve of a 1024x1024 system, one right-hand-side vector: clnp.linalg.solve vs
  numpy.linalg.solve (float64; float32 when the device has no fp64)
- einsum 'bij,bjk->bik' (b=64, 128x128 float32) and 'ij,jk,kl->il' (512, float32):
  clnp.einsum vs numpy.einsum(optimize=True)

Every result is checked against NumPy once before timing. Times are medians of --reps runs after
warm-up, with the device queue drained (clnp.synchronize) inside the timed region; inputs are
already on the device. Ratios are peer time / clnp time (>1 means clnp is faster). A workload
whose clnp function is missing, raises, or gives a wrong answer is still written as a row, with
the reason in ``note`` and no clnp time.
"""
from __future__ import annotations

import argparse
import csv
import math
import os
import statistics
import sys
import time
import traceback
from typing import Callable

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import clnp  # noqa: E402

try:  # optional peers; never installed by this script
    import torch  # type: ignore
except Exception:  # pragma: no cover - depends on the machine
    torch = None
try:
    import jax  # type: ignore
    import jax.numpy as jnp  # type: ignore
    jax.config.update("jax_enable_x64", True)
except Exception:  # pragma: no cover
    jax = jnp = None


from bench_core import timeit, write_csv  # noqa: E402  (same protocol as the core bench)


def nosync() -> None:
    pass


def jax_block(x):
    return x.block_until_ready()


class Failed(Exception):
    pass


# ---------------------------------------------------------------- correctness checks
def check_close(got: np.ndarray, ref: np.ndarray, tol: float, what: str) -> str:
    """Max error relative to max |ref| (scale-aware, fine for FFTs and scans)."""
    got = np.asarray(got)
    if got.shape != ref.shape:
        raise Failed(f"{what}: shape {got.shape} != {ref.shape}")
    scale = float(np.max(np.abs(ref))) or 1.0
    err = float(np.max(np.abs(got.astype(ref.dtype) - ref))) / scale
    if not np.isfinite(err) or err > tol:
        raise Failed(f"{what}: max rel. error {err:.3g} > {tol:g}")
    return f"max err/max|ref| {err:.1e}"


# ---------------------------------------------------------------- workloads
def sizes(quick: bool) -> dict:
    if quick:
        return dict(sort=1 << 18, scan=1 << 20, fft=1 << 16, solve=256,
                    bmm=(16, 64), chain=128)
    return dict(sort=1 << 22, scan=1 << 24, fft=1 << 20, solve=1024, bmm=(64, 128), chain=512)


def workloads(device: clnp.Device, S: dict):
    """Yield (name, n, setup): setup() returns (peers, clnp_part); peers maps a peer name to
    (callable, sync); clnp_part() checks clnp against NumPy and returns (callable, note)."""
    rng = np.random.default_rng(0)
    fdt = np.float64 if device.has_fp64 else np.float32

    def to_dev(h):
        return clnp.asarray(h, device=device)

    # sort ------------------------------------------------------------------------------
    n = S["sort"]
    x_sort = rng.standard_normal(n, dtype=np.float32)

    def sort_setup(kind):
        def setup():
            peers = {"numpy": (lambda: np.sort(x_sort, kind=kind), nosync)}
            if torch is not None:
                xt = torch.from_numpy(x_sort)
                peers["torch"] = (lambda: torch.sort(xt, stable=kind == "stable"), nosync)
            if jnp is not None:
                xj = jnp.asarray(x_sort)
                peers["jax"] = (lambda: jax_block(jnp.sort(xj, stable=kind == "stable")), nosync)

            def clnp_part():
                xd = to_dev(x_sort)
                ref = np.sort(x_sort, kind="stable")
                got = np.asarray(clnp.sort(xd))
                if not np.array_equal(got, ref):
                    raise Failed(f"sort: {int(np.sum(got != ref))} elements differ from "
                                 "numpy.sort")
                return (lambda: clnp.sort(xd)), "exact match"
            return peers, clnp_part
        return setup

    yield "sort float32 (NumPy kind='stable')", n, sort_setup("stable")
    yield "sort float32 (NumPy default kind)", n, sort_setup(None)

    # cumulative sum --------------------------------------------------------------------
    n = S["scan"]
    x_scan = rng.standard_normal(n, dtype=np.float32)

    def scan_clnp():
        xd = to_dev(x_scan)
        ref = np.cumsum(x_scan, dtype=np.float64)
        got = np.asarray(clnp.cumulative_sum(xd))
        if got.dtype != np.float32:
            raise Failed(f"cumulative_sum: dtype {got.dtype}, expected float32")
        # float32 accumulation over 2^24 terms: judge against a float64 reference, relative to
        # the largest partial sum of |x| (NumPy's own sequential float32 scan is allowed too)
        scale = float(np.sum(np.abs(x_scan), dtype=np.float64))
        err = float(np.max(np.abs(got - ref))) / scale
        np_err = float(np.max(np.abs(np.cumsum(x_scan) - ref))) / scale
        if not err <= max(1e-5, 4 * np_err):
            raise Failed(f"cumulative_sum: err/sum|x| {err:.3g} (NumPy float32 {np_err:.3g})")
        return ((lambda: clnp.cumulative_sum(xd)),
                f"err/sum|x| {err:.1e} (NumPy f32 {np_err:.1e})")

    def scan_setup():
        peers = {"numpy": (lambda: np.cumsum(x_scan), nosync)}
        if torch is not None:
            xt = torch.from_numpy(x_scan)
            peers["torch"] = (lambda: torch.cumsum(xt, 0), nosync)
        if jnp is not None:
            xj = jnp.asarray(x_scan)
            peers["jax"] = (lambda: jax_block(jnp.cumsum(xj)), nosync)
        return peers, scan_clnp

    yield "cumulative_sum float32", n, scan_setup

    # rfft ------------------------------------------------------------------------------
    n = S["fft"]
    x_fft = rng.standard_normal(n, dtype=np.float32)

    def fft_clnp():
        xd = to_dev(x_fft)
        got = clnp.fft.rfft(xd)
        ref = np.fft.rfft(x_fft.astype(np.float64))
        note = check_close(np.asarray(got), ref, 1e-5, "rfft")
        return (lambda: clnp.fft.rfft(xd)), f"out {got.dtype}; {note}"

    def fft_setup():
        peers = {"numpy": (lambda: np.fft.rfft(x_fft), nosync)}
        if torch is not None:
            xt = torch.from_numpy(x_fft)
            peers["torch"] = (lambda: torch.fft.rfft(xt), nosync)
        if jnp is not None:
            xj = jnp.asarray(x_fft)
            peers["jax"] = (lambda: jax_block(jnp.fft.rfft(xj)), nosync)
        return peers, fft_clnp

    yield "rfft float32", n, fft_setup

    # solve -----------------------------------------------------------------------------
    n = S["solve"]
    A_h = rng.standard_normal((n, n)).astype(fdt) + np.eye(n, dtype=fdt) * math.sqrt(n)
    b_h = rng.standard_normal(n).astype(fdt)

    def solve_clnp():
        Ad, bd = to_dev(A_h), to_dev(b_h)
        got = np.asarray(clnp.linalg.solve(Ad, bd))
        ref = np.linalg.solve(A_h, b_h)
        if got.shape != ref.shape:
            raise Failed(f"linalg.solve: shape {got.shape} != {ref.shape}")
        eps = np.finfo(fdt).eps
        res = float(np.linalg.norm(A_h @ got - b_h) /
                    (np.linalg.norm(A_h) * np.linalg.norm(got) * eps * n))
        if not res < 10:
            raise Failed(f"linalg.solve: scaled residual {res:.3g} (>=10)")
        note = check_close(got, ref, 1e3 * n * eps, "linalg.solve")
        return ((lambda: clnp.linalg.solve(Ad, bd)),
                f"{np.dtype(fdt).name}; scaled residual {res:.2g}; {note}")

    def solve_setup():
        peers = {"numpy": (lambda: np.linalg.solve(A_h, b_h), nosync)}
        if torch is not None:
            At, bt = torch.from_numpy(A_h), torch.from_numpy(b_h)
            peers["torch"] = (lambda: torch.linalg.solve(At, bt), nosync)
        if jnp is not None:
            Aj, bj = jnp.asarray(A_h), jnp.asarray(b_h)
            peers["jax"] = (lambda: jax_block(jnp.linalg.solve(Aj, bj)), nosync)
        return peers, solve_clnp

    yield f"linalg.solve {np.dtype(fdt).name} ({n}x{n}, 1 rhs)", n, solve_setup

    # einsum ----------------------------------------------------------------------------
    def einsum_setup(spec, *hs):
        def clnp_part():
            ds = [to_dev(h) for h in hs]
            got = np.asarray(clnp.einsum(spec, *ds))
            ref = np.einsum(spec, *[h.astype(np.float64) for h in hs], optimize=True)
            note = check_close(got, ref, 1e-5, f"einsum {spec}")
            return (lambda: clnp.einsum(spec, *ds)), note

        def setup():
            peers = {"numpy": (lambda: np.einsum(spec, *hs, optimize=True), nosync)}
            if torch is not None:
                ts = [torch.from_numpy(h) for h in hs]
                peers["torch"] = (lambda: torch.einsum(spec, *ts), nosync)
            if jnp is not None:
                js = [jnp.asarray(h) for h in hs]
                peers["jax"] = (lambda: jax_block(jnp.einsum(spec, *js, optimize=True)), nosync)
            return peers, clnp_part
        return setup

    b, m = S["bmm"]
    ea = rng.standard_normal((b, m, m), dtype=np.float32)
    eb = rng.standard_normal((b, m, m), dtype=np.float32)
    yield (f"einsum 'bij,bjk->bik' float32 (b={b}, {m}x{m})", b * m * m,
           einsum_setup("bij,bjk->bik", ea, eb))
    m = S["chain"]
    c1, c2, c3 = (rng.standard_normal((m, m), dtype=np.float32) for _ in range(3))
    yield (f"einsum 'ij,jk,kl->il' float32 ({m})", m * m,
           einsum_setup("ij,jk,kl->il", c1, c2, c3))


def run(device: clnp.Device, reps: int, quick: bool) -> list[dict]:
    sync = lambda: clnp.synchronize(device)  # noqa: E731
    rows = []
    clnp_cache: dict[str, float] = {}   # the two sort rows share one clnp timing
    for name, n, setup in workloads(device, sizes(quick)):
        row = {"workload": name, "n": n, "device": str(device), "clnp_ms": "", "numpy_ms": "",
               "numpy_over_clnp": ""}
        if torch is not None:
            row.update(torch_ms="", torch_over_clnp="")
        if jax is not None:
            row.update(jax_ms="", jax_over_clnp="")
        row["note"] = ""
        peers, clnp_part = setup()
        try:
            clnp_fn, row["note"] = clnp_part()
        except Exception as e:   # missing function, error, or wrong answer: record, go on
            msg = f"{type(e).__name__}: {e}".replace("\n", " ")
            row["note"] = "clnp FAILED: " + msg[:300]
            print(f"[{name}] clnp failed:", file=sys.stderr)
            traceback.print_exc()
            clnp_fn = None
        t_clnp = None
        if clnp_fn is not None:
            key = name.split(" (NumPy")[0]
            if key not in clnp_cache:
                clnp_cache[key] = timeit(clnp_fn, sync, reps)
            t_clnp = clnp_cache[key]
            row["clnp_ms"] = t_clnp * 1e3
        for peer, (fn, psync) in peers.items():
            try:
                t = timeit(fn, psync, reps)
            except Exception as e:
                row["note"] += f"; {peer} failed: {type(e).__name__}: {e}"
                continue
            row[f"{peer}_ms"] = t * 1e3
            if t_clnp:
                row[f"{peer}_over_clnp"] = t / t_clnp
        rows.append(row)
        print(f"  done: {name}", file=sys.stderr, flush=True)
    return rows


def fmt(v, spec: str) -> str:
    width = spec.split(".")[0]
    return format(v, spec) if v != "" else format("-", ">" + width)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--device", default=None, help="clnp device spec (default: clnp's default)")
    p.add_argument("--reps", type=int, default=9)
    p.add_argument("--csv", default=None)
    p.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    args = p.parse_args()
    device = clnp._runtime.device.select_device(args.device) if args.device else clnp.default_device()
    rows = run(device, args.reps, args.quick)
    peers = ["numpy"] + (["torch"] if torch is not None else []) + \
        (["jax"] if jax is not None else [])
    print(f"device: {device!r}   reps: {args.reps}   fp64: {device.has_fp64}")
    head = f"{'workload':46s} {'clnp ms':>10s}"
    for pn in peers:
        head += f" {pn + ' ms':>10s} {pn + '/clnp':>11s}"
    print(head)
    for r in rows:
        line = f"{r['workload']:46s} {fmt(r['clnp_ms'], '10.3f')}"
        for pn in peers:
            line += f" {fmt(r[pn + '_ms'], '10.3f')} {fmt(r[pn + '_over_clnp'], '11.2f')}"
        print(line)
    for r in rows:
        if r["note"]:
            print(f"  {r['workload']}: {r['note']}")
    if args.csv:
        write_csv(args.csv, rows)


if __name__ == "__main__":
    main()
