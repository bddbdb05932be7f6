"""Side-by-side eager benchmarks: clnp vs NumPy vs a hand-written PyOpenCL kernel.

    python bench/bench_core.py [--device SPEC] [--n 16777216] [--csv bench/results/core-<dev>.csv]

Every workload runs for every peer in the same process; the table reports median wall times
(after warm-up, device queues drained inside the timed region) and the ratio to clnp
(>1 means the peer is slower). The hand-written kernels are what a careful PyOpenCL user would
write: one work-item per element on GPUs, float8 vectors on CPU devices (PoCL does not vectorise
math across work-items).
"""
from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import time
from typing import Callable

import numpy as np
import pyopencl as cl

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import clnp  # noqa: E402

HAND_SRC = """
__kernel void add_s(__global const float *a, __global const float *b, __global float *c)
{ const size_t i = get_global_id(0); c[i] = a[i] + b[i]; }
__kernel void add_v(__global const float *a, __global const float *b, __global float *c)
{ const size_t i = get_global_id(0); vstore8(vload8(i, a) + vload8(i, b), i, c); }
__kernel void sin_s(__global const float *a, __global float *c)
{ const size_t i = get_global_id(0); c[i] = sin(a[i]); }
__kernel void sin_v(__global const float *a, __global float *c)
{ const size_t i = get_global_id(0); vstore8(sin(vload8(i, a)), i, c); }
__kernel void sum_stage(__global const float *a, __global float *out, const uint n,
                        __local float *scratch)
{
  const uint lid = get_local_id(0), gsz = get_global_size(0);
  float acc = 0.0f;
  for (uint i = get_global_id(0); i < n; i += gsz) acc += a[i];
  scratch[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] += scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) out[get_group_id(0)] = scratch[0];
}
"""


def timeit(fn: Callable[[], object], sync: Callable[[], None], reps: int, warm: int = 2) -> float:
    for _ in range(warm):
        fn()
    sync()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def timeit_batched(fn: Callable[[], object], sync: Callable[[], None], inner: int,
                   reps: int = 5) -> float:
    """Per-call time of ``fn`` issued ``inner`` times back to back (dispatch overhead)."""
    for _ in range(inner):
        fn()
    sync()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        sync()
        times.append((time.perf_counter() - t) / inner)
    return statistics.median(times)


class Hand:
    """Hand-written PyOpenCL kernels on the same device, context and queue as clnp."""

    def __init__(self, dev: clnp.Device):
        self.dev = dev
        self.q = dev.queue
        self.prg = cl.Program(dev.context, HAND_SRC).build()
        self.vec = dev.is_cpu
        self.k_add = self.prg.add_v if self.vec else self.prg.add_s
        self.k_sin = self.prg.sin_v if self.vec else self.prg.sin_s
        self.k_sum = self.prg.sum_stage

    def buf(self, host: np.ndarray) -> cl.Buffer:
        return cl.Buffer(self.dev.context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                         hostbuf=host)

    def gsize(self, n: int) -> tuple[int]:
        return ((n // 8) if self.vec else n,)

    def add(self, a, b, c, n):
        self.k_add(self.q, self.gsize(n), None, a, b, c)

    def sin(self, a, c, n):
        self.k_sin(self.q, self.gsize(n), None, a, c)

    def sum(self, a, partial, n, groups, L):
        self.k_sum(self.q, (groups * L,), (L,), a, partial, np.uint32(n),
                   cl.LocalMemory(4 * L))
        self.k_sum(self.q, (L,), (L,), partial, partial, np.uint32(groups),
                   cl.LocalMemory(4 * L))


def run(device: clnp.Device, n: int, reps: int) -> list[dict]:
    rng = np.random.default_rng(0)
    a_h = rng.standard_normal(n, dtype=np.float32)
    b_h = rng.standard_normal(n, dtype=np.float32)
    a, b = clnp.asarray(a_h, device=device), clnp.asarray(b_h, device=device)
    hand = Hand(device)
    ha, hb, hc = hand.buf(a_h), hand.buf(b_h), hand.buf(np.empty_like(a_h))
    L = 64 if device.is_cpu else 256
    groups = 4 * device.compute_units if device.is_cpu else 1024
    hp = hand.buf(np.zeros(groups, np.float32))
    sync = device.synchronize
    nosync = (lambda: None)
    rows = []

    def row(name, size, clnp_t, numpy_t, hand_t):
        rows.append({"workload": name, "n": size, "device": str(device), "clnp_ms": clnp_t * 1e3,
                     "numpy_ms": numpy_t * 1e3, "hand_ms": hand_t * 1e3,
                     "numpy_over_clnp": numpy_t / clnp_t, "hand_over_clnp": hand_t / clnp_t})

    # correctness of what is timed, once
    np.testing.assert_allclose(np.asarray(a + b), a_h + b_h, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(clnp.sin(a)), np.sin(a_h), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(clnp.sum(a)), float(a_h.sum(dtype=np.float64)),
                               rtol=1e-3, atol=1e-1)
    row("a + b", n, timeit(lambda: a + b, sync, reps), timeit(lambda: a_h + b_h, nosync, reps),
        timeit(lambda: hand.add(ha, hb, hc, n), sync, reps))
    row("sin(a)", n, timeit(lambda: clnp.sin(a), sync, reps),
        timeit(lambda: np.sin(a_h), nosync, reps), timeit(lambda: hand.sin(ha, hc, n), sync, reps))
    row("sum(a)", n, timeit(lambda: clnp.sum(a), sync, reps),
        timeit(lambda: a_h.sum(), nosync, reps),
        timeit(lambda: hand.sum(ha, hp, n, groups, L), sync, reps))
    m = 1000
    sa, sb = clnp.asarray(a_h[:m], device=device), clnp.asarray(b_h[:m], device=device)
    sha, shb, shc = hand.buf(a_h[:m]), hand.buf(b_h[:m]), hand.buf(np.empty(m, np.float32))
    ha_np, hb_np = a_h[:m].copy(), b_h[:m].copy()
    row("a + b per op (1000 el.)", m, timeit_batched(lambda: sa + sb, sync, 2000),
        timeit_batched(lambda: ha_np + hb_np, nosync, 2000),
        timeit_batched(lambda: hand.k_add(hand.q, (m // 8 if hand.vec else m,), None,
                                          sha, shb, shc), sync, 2000))
    return rows


def write_csv(path: str, rows: list[dict]) -> None:
    """Write benchmark rows (dicts with the same keys) to ``path``."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print("wrote", path)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--device", default=None, help="clnp device spec (default: clnp's default)")
    p.add_argument("--n", type=int, default=1 << 24)
    p.add_argument("--reps", type=int, default=9)
    p.add_argument("--csv", default=None)
    args = p.parse_args()
    device = clnp._runtime.select_device(args.device) if args.device else clnp.default_device()
    rows = run(device, args.n, args.reps)
    print(f"device: {device!r}")
    print(f"{'workload':28s} {'clnp ms':>10s} {'NumPy ms':>10s} {'hand ms':>10s} "
          f"{'NumPy/clnp':>11s} {'hand/clnp':>10s}")
    for r in rows:
        print(f"{r['workload']:28s} {r['clnp_ms']:10.4f} {r['numpy_ms']:10.4f} "
              f"{r['hand_ms']:10.4f} {r['numpy_over_clnp']:11.2f} {r['hand_over_clnp']:10.2f}")
    if args.csv:
        write_csv(args.csv, rows)


if __name__ == "__main__":
    main()
