"""Kernel bandwidth: clnp reductions and elementwise ops vs a copy kernel, hand-written PyOpenCL
kernels and NumPy, on one device.

    python bench/bench_kernels.py [--device SPEC] [--reps 7] [--stat median|min]
                                  [--csv bench/results/kernels-<dev>.csv]
    CLNP_DEVICE=gpu python bench/bench_kernels.py

Times are device times: the sum of the OpenCL profiling durations of every kernel a call
launches (clnp's launches are recorded on a profiling queue), so per-op Python overhead is not
counted; ``wall`` columns add it back (median wall time, queue drained). GB/s counts the bytes
an op must move at least (inputs read once, outputs written once; a copy: 8 bytes per float).
``of_copy`` is clnp's bandwidth as a fraction of the hand-written copy kernel's, timed in the
same repetition; ``hand/clnp`` > 1 means the hand-written kernel is slower. The hand-written
kernels come in a scalar and a vector (float4 on GPUs, float8 on CPUs) variant; the faster is
kept. ``--stat min`` reports the fastest repetition instead of the median.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Callable

import numpy as np
import pyopencl as cl

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import clnp  # noqa: E402
from bench.bench_core import SUM_STAGE_SRC, write_csv  # noqa: E402

HAND_SRC = """
__kernel void copy_s(__global const float *a, __global float *c)
{ const size_t i = get_global_id(0); c[i] = a[i]; }
__kernel void copy_v(__global const float *a, __global float *c)
{ const size_t i = get_global_id(0); vstoreW(vloadW(i, a), i, c); }
__kernel void add_s(__global const float *a, __global const float *b, __global float *c)
{ const size_t i = get_global_id(0); c[i] = a[i] + b[i]; }
__kernel void add_v(__global const float *a, __global const float *b, __global float *c)
{ const size_t i = get_global_id(0); vstoreW(vloadW(i, a) + vloadW(i, b), i, c); }
__kernel void sin_s(__global const float *a, __global float *c)
{ const size_t i = get_global_id(0); c[i] = sin(a[i]); }
__kernel void sin_v(__global const float *a, __global float *c)
{ const size_t i = get_global_id(0); vstoreW(sin(vloadW(i, a)), i, c); }
"""

_EVENTS: list = []
STAT = statistics.median


def instrument(device: clnp.Device) -> None:
    """Give ``device`` a profiling queue (before clnp creates its own) and record the event
    of every kernel launch (clnp's launch paths all end in ``pyopencl.Kernel.__call__``)."""
    if "queue" in device.__dict__:
        raise RuntimeError("instrument() must run before the device's first use")
    device.__dict__["queue"] = cl.CommandQueue(
        device.context, properties=cl.command_queue_properties.PROFILING_ENABLE)
    original = cl.Kernel.__call__

    def recording_call(self, *args, **kwargs):
        event = original(self, *args, **kwargs)
        _EVENTS.append(event)
        return event
    cl.Kernel.__call__ = recording_call


def clnp_once(fn: Callable[[], object], device: clnp.Device) -> tuple[float, float]:
    """(device seconds, wall seconds) of one call of ``fn``, queue drained."""
    _EVENTS.clear()
    t = time.perf_counter()
    fn()
    device.synchronize()
    wall = time.perf_counter() - t
    return sum(e.profile.end - e.profile.start for e in _EVENTS) * 1e-9, wall


def wall_once(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def events_once(fn: Callable[[], list]) -> float:
    """Device seconds of the events ``fn`` returns."""
    events = fn()
    events[-1].wait()
    return sum(e.profile.end - e.profile.start for e in events) * 1e-9


class Hand:
    """Hand-written kernels on clnp's context and (profiling) queue; each method enqueues one
    run and returns its events."""

    def __init__(self, dev: clnp.Device, n: int):
        self.dev, self.q, self.n = dev, dev.queue, n
        self.w = 8 if dev.is_cpu else 4
        src = SUM_STAGE_SRC + HAND_SRC.replace("vloadW", f"vload{self.w}").replace(
            "vstoreW", f"vstore{self.w}")
        self.prg = cl.Program(dev.context, src).build()
        self.variant: dict[str, str] = {}

    def buf(self, host: np.ndarray) -> cl.Buffer:
        return cl.Buffer(self.dev.context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                         hostbuf=host)

    def kernel(self, name: str, args: list) -> Callable[[], list]:
        """The faster (over three runs each) of the scalar and the vector kernel ``name``."""
        runs = {}
        for suffix, items in (("_s", self.n), ("_v", self.n // self.w)):
            k = cl.Kernel(self.prg, name + suffix)
            runs[suffix] = (lambda k=k, items=items: [k(self.q, (items,), None, *args)])
        best = min(runs, key=lambda v: min(events_once(runs[v]) for _ in range(3)))
        self.variant[name] = best
        return runs[best]

    def summation(self, a) -> Callable[[], list]:
        L = 64 if self.dev.is_cpu else 256
        groups = 4 * self.dev.compute_units if self.dev.is_cpu else 1024
        part = self.buf(np.zeros(groups, np.float32))
        k = cl.Kernel(self.prg, "sum_stage")
        return lambda: [k(self.q, (groups * L,), (L,), a, part, np.uint32(self.n),
                          cl.LocalMemory(4 * L)),
                        k(self.q, (L,), (L,), part, part, np.uint32(groups),
                          cl.LocalMemory(4 * L))]


def run(device: clnp.Device, reps: int, n: int) -> list[dict]:
    """Every workload's row; within a row each repetition times the copy kernel, clnp, NumPy
    and the hand-written kernel back to back, and the ratios are per repetition, so a load
    from other processes that changes between rows does not skew them."""
    rng = np.random.default_rng(0)
    m = int(round(np.sqrt(n)))
    a_h = rng.standard_normal(n, dtype=np.float32)
    b_h = rng.standard_normal(n, dtype=np.float32)
    a, b = clnp.asarray(a_h, device=device), clnp.asarray(b_h, device=device)
    hand = Hand(device, n)
    ha, hb, hc = hand.buf(a_h), hand.buf(b_h), hand.buf(np.empty_like(a_h))
    copy = hand.kernel("copy", [ha, hc])
    rows = []
    nan = float("nan")

    def row(name: str, size: int, nbytes: int, fn: Callable[[], object],
            np_fn: Callable[[], object], hand_fn: Callable[[], list] | None = None) -> None:
        for f in (fn, np_fn):
            f()
        device.synchronize()
        cp, dv, wl, nt, ht = [], [], [], [], []
        for _ in range(reps):
            cp.append(events_once(copy))
            t, w = clnp_once(fn, device)
            dv.append(t)
            wl.append(w)
            nt.append(wall_once(np_fn))
            ht.append(events_once(hand_fn) if hand_fn else nan)
        t, c = STAT(dv), STAT(cp)

        def ratio(xs: list[float], ys: list[float]) -> float:
            # medians: of the per-repetition ratios; minima: of the fastest runs
            if STAT is min:
                return min(xs) / min(ys)
            return statistics.median(x / y for x, y in zip(xs, ys))
        rows.append({
            "workload": name, "n": size, "device": str(device), "clnp_ms": t * 1e3,
            "clnp_wall_ms": STAT(wl) * 1e3, "numpy_ms": STAT(nt) * 1e3,
            "hand_ms": STAT(ht) * 1e3 if hand_fn else nan, "clnp_GBs": nbytes / t * 1e-9,
            "copy_GBs": 8 * n / c * 1e-9,
            "of_copy": nbytes / (8 * n) * ratio(cp, dv),
            "numpy_over_clnp": ratio(nt, dv), "numpy_over_clnp_wall": ratio(nt, wl),
            "hand_over_clnp": ratio(ht, dv) if hand_fn else nan,
            "ns_per_element": t / size * 1e9})

    def check(got, want, rtol=1e-5, atol=1e-6) -> None:
        np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=atol)

    # --- elementwise
    check(a + b, a_h + b_h)
    row("a + b", n, 12 * n, lambda: a + b, lambda: a_h + b_h, hand.kernel("add", [ha, hb, hc]))
    check(clnp.sin(a), np.sin(a_h))
    row("sin(a)", n, 8 * n, lambda: clnp.sin(a), lambda: np.sin(a_h),
        hand.kernel("sin", [ha, hc]))
    row("a[::2] + b[::2]", n // 2, 12 * (n // 2), lambda: a[::2] + b[::2],
        lambda: a_h[::2] + b_h[::2])
    A, B = clnp.reshape(a, (m, m)), clnp.reshape(b, (m, m))
    A_h, B_h = a_h[:m * m].reshape(m, m), b_h[:m * m].reshape(m, m)
    check(A.T + B, A_h.T + B_h)
    row("A.T + B", m * m, 12 * m * m, lambda: A.T + B, lambda: A_h.T + B_h)
    # --- reductions
    check(clnp.sum(a), a_h.sum(dtype=np.float64), rtol=1e-4, atol=1e-1)
    row("sum(a)", n, 4 * n, lambda: clnp.sum(a), lambda: a_h.sum(), hand.summation(ha))
    for ax in (0, 1):
        check(clnp.sum(A, axis=ax), A_h.sum(axis=ax, dtype=np.float64), 1e-4, 1e-3)
        row(f"sum(A, axis={ax})", m * m, 4 * m * m, lambda ax=ax: clnp.sum(A, axis=ax),
            lambda ax=ax: A_h.sum(axis=ax))
    k = int(round(n ** (1 / 3)))
    C3, C3_h = clnp.reshape(a[:k ** 3], (k, k, k)), a_h[:k ** 3].reshape(k, k, k)
    check(clnp.sum(C3, axis=(0, 2)), C3_h.sum(axis=(0, 2), dtype=np.float64), 1e-4, 1e-2)
    row("sum(C, axis=(0, 2))", k ** 3, 4 * k ** 3, lambda: clnp.sum(C3, axis=(0, 2)),
        lambda: C3_h.sum(axis=(0, 2)))
    row("max(a)", n, 4 * n, lambda: clnp.max(a), lambda: a_h.max())
    assert int(clnp.argmax(a)) == int(np.argmax(a_h))
    row("argmax(a)", n, 4 * n, lambda: clnp.argmax(a), lambda: np.argmax(a_h))
    for ax in (0, 1):
        check(clnp.argmax(A, axis=ax), np.argmax(A_h, axis=ax), 0, 0)
        row(f"argmax(A, axis={ax})", m * m, 4 * m * m, lambda ax=ax: clnp.argmax(A, axis=ax),
            lambda ax=ax: np.argmax(A_h, axis=ax))
    print("hand-written variants:", hand.variant)
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--device", default=None, help="clnp device spec (default: clnp's default, "
                                                  "which honours CLNP_DEVICE)")
    p.add_argument("--n", type=int, default=1 << 24)
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--stat", choices=("median", "min"), default="median")
    p.add_argument("--csv", default=None)
    args = p.parse_args()
    global STAT
    STAT = min if args.stat == "min" else statistics.median
    device = clnp._runtime.device.select_device(args.device) if args.device else clnp.default_device()
    instrument(device)
    rows = run(device, args.reps, args.n)
    print(f"device: {device!r}")
    print(f"{'workload':20s} {'clnp ms':>8s} {'wall ms':>8s} {'NumPy ms':>8s} {'hand ms':>8s} "
          f"{'GB/s':>6s} {'copy':>6s} {'of_copy':>7s} {'NumPy/clnp':>10s} {'hand/clnp':>9s} "
          f"{'ns/el':>6s}")
    for r in rows:
        print(f"{r['workload']:20s} {r['clnp_ms']:8.3f} {r['clnp_wall_ms']:8.3f} "
              f"{r['numpy_ms']:8.3f} {r['hand_ms']:8.3f} {r['clnp_GBs']:6.1f} "
              f"{r['copy_GBs']:6.1f} {r['of_copy']:7.2f} {r['numpy_over_clnp']:10.2f} "
              f"{r['hand_over_clnp']:9.2f} {r['ns_per_element']:6.3f}")
    if args.csv:
        write_csv(args.csv, rows)


if __name__ == "__main__":
    main()
