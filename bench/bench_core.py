"""The per-device peer table: clnp against NumPy, hand-written PyOpenCL, PyTorch and JAX.

    python bench/bench_core.py [--device SPEC] [--reps 9] [--quick] [--csv bench/results/core-<dev>.csv]

Every workload runs for every available peer in the same process: NumPy, a hand-written
PyOpenCL kernel on clnp's own device/context/queue (where one is meaningful), PyTorch on the
CPU (2.13.0, pinned) and JAX on its default backend; on a machine with CUDA also CuPy and
PyTorch-CUDA. Times are medians after warm-up, each peer's asynchronous work drained inside
the timed region; inputs already live where each peer computes. clnp's result is checked
against NumPy before timing. Ratios are peer time / clnp time: above 1 means clnp is faster.

The hand-written kernels are what a careful PyOpenCL user would write: one work-item per
element on GPUs, float8 vectors on CPU devices (PoCL does not vectorise across work-items).
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
import pyopencl as cl

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import clnp  # noqa: E402

# the hand-written two-stage sum (also used by bench_kernels.py)
SUM_STAGE_SRC = """
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

HAND_SRC = SUM_STAGE_SRC + """
__kernel void copy_v(__global const float *a, __global float *c)
{ const size_t i = get_global_id(0); vstore8(vload8(i, a), i, c); }
__kernel void copy_s(__global const float *a, __global float *c)
{ const size_t i = get_global_id(0); c[i] = a[i]; }
__kernel void add_s(__global const float *a, __global const float *b, __global float *c)
{ const size_t i = get_global_id(0); c[i] = a[i] + b[i]; }
__kernel void add_v(__global const float *a, __global const float *b, __global float *c)
{ const size_t i = get_global_id(0); vstore8(vload8(i, a) + vload8(i, b), i, c); }
__kernel void add2_s(__global const float *a, __global const float *b, __global float *c)
{ const size_t i = get_global_id(0); c[i] = a[2 * i] + b[2 * i]; }
__kernel void sin_s(__global const float *a, __global float *c)
{ const size_t i = get_global_id(0); c[i] = sin(a[i]); }
__kernel void sin_v(__global const float *a, __global float *c)
{ const size_t i = get_global_id(0); vstore8(sin(vload8(i, a)), i, c); }
"""

PEERS = ("numpy", "hand", "torch_cpu", "jax", "cupy", "torch_cuda")
PEER_NAMES = {"numpy": "NumPy", "hand": "hand PyOpenCL", "torch_cpu": "PyTorch CPU",
              "jax": "JAX", "cupy": "CuPy", "torch_cuda": "PyTorch CUDA"}


def timeit(fn: Callable[[], object], sync: Callable[[], None], reps: int, warm: int = 2) -> float:
    """Median seconds of ``fn(); sync()`` over ``reps`` runs after ``warm`` untimed ones."""
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
    """Per-call seconds of ``fn`` issued ``inner`` times back to back (dispatch overhead)."""
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


def per_call_rounds(runs: list[tuple[str, Callable[[], Any], Callable[[Any], Any]]],
                    calls: int, rounds: int = 7,
                    clock: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """Median microseconds per call of each run: the runs take turns, each round timing
    ``calls`` back-to-back calls of every run. ``runs`` are ``(name, fn, wait)``, where
    ``wait(result)`` waits for a call's result (a device drain, ``jax.block_until_ready``)
    before each timing and at its end."""
    times: dict[str, list[float]] = {name: [] for name, _, _ in runs}
    for _ in range(rounds):
        for name, fn, wait in runs:
            wait(fn())
            t0 = clock()
            for _ in range(calls):
                out = fn()
            wait(out)
            times[name].append((clock() - t0) / calls * 1e6)
    return {k: statistics.median(v) for k, v in times.items()}


def race_blocks(steps: dict[str, Callable[[], Any]], reps: int, block: int,
                timed: Callable[[Callable[[], Any]], float] | None = None) -> dict[str, float]:
    """Median step time of each peer: the peers take turns running ``block`` consecutive
    steps, the first of each turn untimed, until each has ``reps`` timed steps (``timed(f)``
    measures one, by default wall time around ``f()``, which waits for its own result). A
    step right after another framework's pays for that framework's worker threads still
    spinning (PyTorch's OpenMP threads, XLA's pool): 1.5-2 ms per step on the 2-core machine,
    whichever peer came next, when the peers alternated step by step. On the H200 a step of
    ~200 launches right after JAX's and PyTorch's took 5.4 ms, 3.5 ms in a row (the host's
    caches; the character transformer, thirteenth session)."""
    def wall(f: Callable[[], Any]) -> float:
        t = time.perf_counter()
        f()
        return time.perf_counter() - t
    timed = timed or wall
    runs: dict[str, list[float]] = {k: [] for k in steps}
    while any(len(v) < reps for v in runs.values()):
        for k, f in steps.items():
            f()
            for _ in range(min(block - 1, reps - len(runs[k]))):
                runs[k].append(timed(f))
    return {k: statistics.median(v) for k, v in runs.items()}


def cuda_sharing_device(script: str) -> clnp.Device:
    """The default device, or exit naming ``script`` and why where it cannot share memory
    with CUDA (the benches of issue #24 that need NVIDIA's OpenCL and the cuda extra)."""
    from clnp._runtime import cuda_memory
    d = clnp.default_device()
    why = cuda_memory.why_unsupported(d)
    if why is not None:
        sys.exit(f"{script}: {d} cannot share memory with CUDA: {why}")
    return d


def append_csv(path: str, rows: list[dict]) -> None:
    """Append benchmark rows (dicts with the same keys) to ``path``, with a header when the
    file is new: for figures that several invocations measure side by side (one process, then
    ``mpiexec``; clnp, then its peer)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    new = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        if new:
            w.writeheader()
        w.writerows(rows)


def write_csv(path: str, rows: list[dict]) -> None:
    """Write benchmark rows (dicts with the same keys) to ``path``."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print("wrote", path)


# ------------------------------------------------------------------------------ peers
class Hand:
    """Hand-written PyOpenCL kernels on the same device, context and queue as clnp."""

    def __init__(self, dev: clnp.Device):
        self.dev, self.q = dev, dev.queue
        self.prg = cl.Program(dev.context, HAND_SRC).build()
        self.vec = dev.is_cpu
        self.L = 64 if dev.is_cpu else 256
        self.groups = 4 * dev.compute_units if dev.is_cpu else 1024
        self.partial = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, 4 * self.groups)
        self._k: dict[str, cl.Kernel] = {}

    def k(self, name: str) -> cl.Kernel:
        """The kernel object, retrieved once (each retrieval makes a new cl_kernel)."""
        if name not in self._k:
            self._k[name] = cl.Kernel(self.prg, name)
        return self._k[name]

    def buf(self, host: np.ndarray) -> cl.Buffer:
        return cl.Buffer(self.dev.context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                         hostbuf=np.ascontiguousarray(host))

    def empty(self, n: int) -> cl.Buffer:
        return cl.Buffer(self.dev.context, cl.mem_flags.READ_WRITE, max(4 * n, 4))

    def ew(self, name: str, n: int, *bufs: cl.Buffer) -> None:
        if self.vec and n % 8 == 0:
            self.k(name + "_v")(self.q, (n // 8,), None, *bufs)
        else:
            self.k(name + "_s")(self.q, (n,), None, *bufs)

    def sum(self, a: cl.Buffer, n: int) -> None:
        L, g = self.L, self.groups
        self.k("sum_stage")(self.q, (g * L,), (L,), a, self.partial, np.uint32(n),
                            cl.LocalMemory(4 * L))
        self.k("sum_stage")(self.q, (L,), (L,), self.partial, self.partial, np.uint32(g),
                            cl.LocalMemory(4 * L))


def _torch(cuda: bool) -> Any:
    try:
        import torch
    except ImportError:
        return None
    if cuda and not torch.cuda.is_available():
        return None
    return torch


def _jax() -> Any:
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    return jax, jnp


def _cupy() -> Any:
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
    except Exception:      # not installed, or no CUDA device: the peer is simply absent
        return None
    return cupy


class Peers:
    """Uploaders and synchronisers for each available peer library."""

    def __init__(self, device: clnp.Device, which: tuple[str, ...]):
        self.device = device
        self.put: dict[str, Callable[[np.ndarray], Any]] = {"numpy": lambda a: a}
        self.sync: dict[str, Callable[[], None]] = {"numpy": lambda: None}
        self.mod: dict[str, Any] = {"numpy": np}
        self.note: dict[str, str] = {}
        t = _torch(False) if "torch_cpu" in which else None
        if t is not None:
            self.put["torch_cpu"], self.sync["torch_cpu"] = t.from_numpy, (lambda: None)
            self.mod["torch_cpu"] = t
            self.note["torch_cpu"] = f"torch {t.__version__}, {t.get_num_threads()} threads"
        j = _jax() if "jax" in which else None
        if j is not None:
            jax, jnp = j
            self._jax_last: list[Any] = []
            self.put["jax"] = lambda a: jax.device_put(jnp.asarray(a))
            self.sync["jax"] = self._jax_sync
            self.mod["jax"] = jnp
            self.note["jax"] = f"jax {jax.__version__} on {jax.default_backend()}"
        c = _cupy() if "cupy" in which else None
        if c is not None:
            self.put["cupy"], self.mod["cupy"] = c.asarray, c
            self.sync["cupy"] = lambda: c.cuda.Stream.null.synchronize()
            self.note["cupy"] = f"cupy {c.__version__}"
        tc = _torch(True) if "torch_cuda" in which else None
        if tc is not None:
            self.put["torch_cuda"] = lambda a: tc.from_numpy(a).cuda()
            self.sync["torch_cuda"], self.mod["torch_cuda"] = tc.cuda.synchronize, tc
            self.note["torch_cuda"] = f"torch {tc.__version__} on {tc.cuda.get_device_name()}"

    def _jax_sync(self) -> None:
        for r in self._jax_last:
            r.block_until_ready()
        self._jax_last.clear()

    def jax_keep(self, r: Any) -> Any:
        self._jax_last.append(r)
        return r


# ------------------------------------------------------------------------------ workloads
def _matmul(m: Any, a: Any, b: Any) -> Any:
    return m.matmul(a, b)


def workloads(n: int, quick: bool) -> list[dict]:
    """Each workload: name, size label, host inputs, the op per peer (given the peer's module
    and its inputs), the hand kernel (or None), flops or bytes for a rate column."""
    side = 2048 if quick else 4096
    gm = (512, 1024) if quick else (1024, 2048)
    w = [
        dict(name="a + b", n=n, shapes=[(n,), (n,)], op=lambda m, a, b: a + b,
             hand=lambda h, bufs, out: h.ew("add", n, *bufs, out), out=n, bytes=12 * n),
        dict(name="sin(a)", n=n, shapes=[(n,)], op=lambda m, a: m.sin(a),
             hand=lambda h, bufs, out: h.ew("sin", n, *bufs, out), out=n, bytes=8 * n),
        dict(name="sum(a)", n=n, shapes=[(n,)], op=lambda m, a: m.sum(a),
             hand=lambda h, bufs, out: h.sum(bufs[0], n), out=1, bytes=4 * n),
        dict(name="a[::2] + b[::2]", n=n // 2, shapes=[(n,), (n,)],
             op=lambda m, a, b: a[::2] + b[::2],
             hand=lambda h, bufs, out: h.k("add2_s")(h.q, (n // 2,), None, *bufs, out),
             out=n // 2, bytes=12 * (n // 2)),
        dict(name=f"sum(A, axis=0) {side}x{side}", n=side * side, shapes=[(side, side)],
             op=lambda m, a: m.sum(a, axis=0), hand=None, out=side, bytes=4 * side * side),
        dict(name=f"sum(A, axis=1) {side}x{side}", n=side * side, shapes=[(side, side)],
             op=lambda m, a: m.sum(a, axis=1), hand=None, out=side, bytes=4 * side * side),
        dict(name=f"A.T + B {side}x{side}", n=side * side, shapes=[(side, side), (side, side)],
             op=lambda m, a, b: a.T + b, hand=None, out=side * side, bytes=12 * side * side),
    ]
    for k in gm:
        w.append(dict(name=f"matmul {k}x{k} f32", n=k, shapes=[(k, k), (k, k)], op=_matmul,
                      hand=None, out=k * k, flops=2 * k ** 3))
    return w


def _peer_op(peers: Peers, p: str, op: Callable, xs: list[Any]) -> Callable[[], Any]:
    m = peers.mod[p]
    if p == "jax":
        return lambda: peers.jax_keep(op(m, *xs))
    if p in ("torch_cpu", "torch_cuda") and op is not _matmul:
        import torch
        tm = torch

        class _TorchNS:       # the few NumPy spellings the workloads use
            sin, matmul = tm.sin, tm.matmul

            @staticmethod
            def sum(a: Any, axis: Any = None) -> Any:
                return tm.sum(a) if axis is None else tm.sum(a, dim=axis)
        return lambda: op(_TorchNS, *xs)
    return lambda: op(m, *xs)


def run(device: clnp.Device, n: int, reps: int, quick: bool,
        which: tuple[str, ...] = PEERS) -> list[dict]:
    rng = np.random.default_rng(0)
    peers = Peers(device, which)
    hand = Hand(device) if "hand" in which else None
    csync = device.synchronize
    rows: list[dict] = []
    for w in workloads(n, quick):
        host = [rng.standard_normal(s, dtype=np.float32) for s in w["shapes"]]
        xs = [clnp.asarray(h, device=device) for h in host]
        want = w["op"](np, *host)
        got = np.asarray(w["op"](clnp, *xs))
        scale = float(np.max(np.abs(want))) if np.size(want) else 1.0
        tol = 1e-3 if "matmul" in w["name"] or "sum" in w["name"] else 1e-5
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale,
                                   err_msg=f"clnp's {w['name']} is wrong")
        r = {"device": str(device), "workload": w["name"], "n": w["n"],
             "clnp_ms": timeit(lambda: w["op"](clnp, *xs), csync, reps) * 1e3}
        for p in PEERS:
            ms = None
            if p == "hand":
                if hand is not None and w["hand"] is not None:
                    bufs = [hand.buf(h) for h in host]
                    out = hand.empty(w["out"])
                    ms = timeit(lambda: w["hand"](hand, bufs, out), csync, reps) * 1e3
            elif p in peers.put:
                px = [peers.put[p](h) for h in host]
                ms = timeit(_peer_op(peers, p, w["op"], px), peers.sync[p], reps) * 1e3
            r[f"{p}_ms"] = ms
        sec = r["clnp_ms"] / 1e3
        r["clnp_rate"] = (w["flops"] / sec / 1e9) if "flops" in w else w["bytes"] / sec / 1e9
        r["rate_unit"] = "GFLOP/s" if "flops" in w else "GB/s"
        rows.append(r)
    rows.append(_per_op_row(device, peers, hand, n))
    for r in rows:
        for p in PEERS:
            v = r.get(f"{p}_ms")
            r[f"{p}_over_clnp"] = None if v is None else v / r["clnp_ms"]
        r["peers"] = "; ".join(peers.note.values())
    return rows


def _per_op_row(device: clnp.Device, peers: Peers, hand: Hand | None, n: int) -> dict:
    """``a + b`` on 1000 elements issued back to back: the per-op dispatch cost."""
    m, inner = 1000, 2000
    rng = np.random.default_rng(1)
    ah, bh = rng.standard_normal(m, dtype=np.float32), rng.standard_normal(m, dtype=np.float32)
    a, b = clnp.asarray(ah, device=device), clnp.asarray(bh, device=device)
    r: dict[str, Any] = {"device": str(device), "workload": "a + b per op (1000 el.)", "n": m,
                         "clnp_ms": timeit_batched(lambda: a + b, device.synchronize, inner)
                         * 1e3}
    for p in PEERS:
        ms = None
        if p == "hand" and hand is not None:
            ha, hb, hc = hand.buf(ah), hand.buf(bh), hand.empty(m)
            k = hand.k("add_s")
            ms = timeit_batched(lambda: k(hand.q, (m,), None, ha, hb, hc),
                                device.synchronize, inner) * 1e3
        elif p in peers.put:
            x, y = peers.put[p](ah), peers.put[p](bh)
            f = (lambda: peers.jax_keep(x + y)) if p == "jax" else (lambda: x + y)
            ms = timeit_batched(f, peers.sync[p], inner) * 1e3
        r[f"{p}_ms"] = ms
    r["clnp_rate"], r["rate_unit"] = r["clnp_ms"] * 1e3, "us/op"
    return r


def print_table(rows: list[dict]) -> None:
    present = [p for p in PEERS if any(r.get(f"{p}_ms") is not None for r in rows)]
    head = f"{'workload':30s} {'clnp ms':>9s} {'rate':>14s}"
    for p in present:
        head += f" {PEER_NAMES[p] + '/clnp':>17s}"
    print(head)
    for r in rows:
        line = f"{r['workload']:30s} {r['clnp_ms']:9.4f} {r['clnp_rate']:8.1f} {r['rate_unit']:>5s}"
        for p in present:
            v = r.get(f"{p}_over_clnp")
            line += f" {'-' if v is None else format(v, '.2f'):>17s}"
        print(line)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--device", default=None, help="clnp device spec (default: clnp's default)")
    p.add_argument("--n", type=int, default=1 << 24)
    p.add_argument("--reps", type=int, default=9)
    p.add_argument("--quick", action="store_true", help="smaller matrices (a smoke run)")
    p.add_argument("--peers", default=",".join(PEERS), help="comma-separated subset of "
                   + ", ".join(PEERS))
    p.add_argument("--csv", default=None)
    args = p.parse_args()
    device = clnp._runtime.device.select_device(args.device) if args.device else clnp.default_device()
    rows = run(device, args.n, args.reps, args.quick, tuple(args.peers.split(",")))
    print(f"device: {device!r}")
    print(rows[0]["peers"])
    print_table(rows)
    if args.csv:
        write_csv(args.csv, rows)


if __name__ == "__main__":
    main()
