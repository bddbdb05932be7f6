"""clnp_grad.jit vs clnp eager vs peers: fused elementwise chain, softmax/layernorm, an MLP SGD
step, per-call overhead and cold compile time.

    python bench/bench_jit.py [--reps 5] [--quick] [--csv bench/results/jit-pocl-cpu.csv]

Runs on clnp's default device (``CLNP_DEVICE`` picks it). Every peer runs in this process,
side by side, on the same data; times are medians of ``--reps`` runs after warm-up calls, with
``clnp.synchronize()`` (or a read of the result / ``block_until_ready``) inside each timed
region. Results are checked against NumPy before anything is timed.

1. ew_chain ``exp(sin(x)*2 + cos(x)) / (1 + x*x) - 0.5*tanh(x)``, 2^24 float32: clnp eager,
   clnp jit, NumPy, a hand-written float8 PyOpenCL kernel (same context and queue as clnp; on
   CPU devices also a float16 one), JAX jit when ``import jax`` works, timed round-robin
   (each repetition runs every peer once).
2. softmax and layernorm over (8192, 1024) (4096x1024 with --quick), forward and
   forward+backward (``value_and_grad(lambda x: sum(f(x) * w))``): eager vs jit, with kernel
   counts: jit from ``len(jf.lower(x).kernel_sources())``; eager as the number of non-view
   equations in ``clnp_grad.make_ir`` (each launches at least one kernel eagerly).
3. MLP 784-1024-1024-10, batch 256, one SGD step ``step(params, x, y) -> (loss, new_params)``:
   jit of the whole step vs eager value_and_grad + update vs NumPy hand backprop vs PyTorch
   CPU (when installed) vs JAX jit (when installed).
4. Per-call overhead on 1000 float32 elements: ``jit(lambda x: x + 1.0)`` vs a raw PyOpenCL
   launch with preallocated buffers vs eager ``x + 1.0``: 2000 calls, ``finish`` every 100,
   median of the 20 per-call throughputs, in microseconds.
5. Cold compile of the MLP step: a fresh child process with empty ``CLNP_CACHE_DIR`` and
   ``POCL_CACHE_DIR``, timed inside the child from before ``import clnp`` to after the first
   call's result is read; then a second child with the same (now warm) cache directories.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402
import pyopencl as cl  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import clnp  # noqa: E402
import clnp_grad  # noqa: E402
from clnp._routines.dot_general import tensor_cores  # noqa: E402

from bench_core import timeit, write_csv  # noqa: E402
# the MLP problem, its loss and the PyTorch loss are bench_grad's: one definition
from bench_grad import NAMES, make_problem, mlp_loss, torch_loss  # noqa: E402

try:  # optional peers; never installed by this script
    import torch  # type: ignore
except Exception:  # pragma: no cover
    torch = None
try:
    import jax  # type: ignore
    import jax.numpy as jnp  # type: ignore
    JAX_DEV = jax.devices()[0].platform          # "cpu", or "gpu" with JAX_PLATFORMS=cuda
except Exception:  # pragma: no cover
    jax = jnp = None
    JAX_DEV = "cpu"
try:  # GPU-only peer
    import cupy  # type: ignore
except Exception:  # pragma: no cover
    cupy = None

# On a GPU device the peers run on the GPU too: torch on CUDA, JAX as JAX_PLATFORMS says.
TORCH_DEV = "cpu"

ROWS: list[dict] = []
VIEWS = {"reshape", "transpose", "broadcast_to", "slice", "stop_gradient"}


def row(bench: str, impl: str, value: float, unit: str = "ms", note: str = "") -> None:
    ROWS.append({"benchmark": bench, "impl": impl, "ms_or_us": round(value, 4), "unit": unit,
                 "ratio_note": note})
    print(f"  {bench:<34} {impl:<34} {value:10.3f} {unit:<3} {note}", flush=True)


def sync() -> None:
    clnp.synchronize()


def ms(fn: Callable[[], object], reps: int, s: Callable[[], None] = sync, warm: int = 2) -> float:
    return 1e3 * timeit(fn, s, reps, warm)


def nosync() -> None:
    pass


def ms_interleaved(cases: dict[str, tuple[Callable[[], object], Callable[[], None]]],
                   reps: int, warm: int = 2) -> dict[str, float]:
    """Median ms of each ``fn(); sync()`` in ``cases``, timed round-robin: every repetition
    runs each case once, so load from other processes on a shared machine falls on all of
    them alike rather than on whichever ran during a busy second."""
    for fn, s in cases.values():
        for _ in range(warm):
            fn()
        s()
    times: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(reps):
        for k, (fn, s) in cases.items():
            t = time.perf_counter()
            fn()
            s()
            times[k].append(time.perf_counter() - t)
    return {k: 1e3 * statistics.median(v) for k, v in times.items()}


def jsync(out: list) -> Callable[[], None]:
    return lambda: jax.block_until_ready(out[0])


def tsync() -> None:
    if TORCH_DEV == "cuda":
        torch.cuda.synchronize()


# ------------------------------------------------------------------------- 1. ew_chain
HAND_CHAIN = """
__kernel void chain8(__global const float8 *x, __global float8 *y) {
    size_t i = get_global_id(0);
    float8 v = x[i];
    y[i] = exp(sin(v) * 2.0f + cos(v)) / (1.0f + v * v) - 0.5f * tanh(v);
}
__kernel void chain16(__global const float16 *x, __global float16 *y) {
    size_t i = get_global_id(0);
    float16 v = x[i];
    y[i] = exp(sin(v) * 2.0f + cos(v)) / (1.0f + v * v) - 0.5f * tanh(v);
}
__kernel void add1(__global const float *x, __global float *y, const int n) {
    int i = get_global_id(0);
    if (i < n) y[i] = x[i] + 1.0f;
}
__kernel void add1x4(__global const float4 *x, __global float4 *y) {
    size_t i = get_global_id(0);
    y[i] = x[i] + 1.0f;
}
"""


def chain(ns: Any, x: Any) -> Any:
    return ns.exp(ns.sin(x) * 2 + ns.cos(x)) / (1 + x * x) - 0.5 * ns.tanh(x)


def bench_chain(dev: Any, prg: Any, reps: int) -> None:
    n = 1 << 24
    bench = "ew_chain 2^24 f32"
    print(f"\n== {bench}: exp(sin(x)*2+cos(x))/(1+x*x)-0.5*tanh(x)")
    xh = np.random.default_rng(0).uniform(-3, 3, n).astype(np.float32)
    ref = chain(np, xh)
    x = clnp.asarray(xh)
    eager = lambda: chain(clnp, x)                           # noqa: E731
    jf = clnp_grad.jit(lambda x: chain(clnp, x))
    np.testing.assert_allclose(np.asarray(jf(x)), ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(eager()), ref, rtol=1e-4, atol=1e-5)
    nk = len(jf.lower(x).kernel_sources())

    mf = cl.mem_flags
    bx = cl.Buffer(dev.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=xh)
    by = cl.Buffer(dev.context, mf.READ_WRITE, 4 * n)
    q = dev.queue
    # the hand kernel at float8 (the baseline) and, on CPUs, at float16 (one AVX-512
    # register, where PoCL's math builtins run twice as many lanes per instruction)
    hands = {}
    for width in (8, 16) if dev.is_cpu else (8,):
        k = cl.Kernel(prg, f"chain{width}")
        k.set_args(bx, by)
        hands[width] = (lambda k=k, w=width:
                        cl.enqueue_nd_range_kernel(q, k, (n // w,), None))
        hands[width]()
        yh = np.empty_like(xh)
        cl.enqueue_copy(q, yh, by)
        q.finish()
        np.testing.assert_allclose(yh, ref, rtol=1e-4, atol=1e-5)

    cases = {"eager": (eager, sync), "jit": (lambda: jf(x), sync),
             "numpy": (lambda: chain(np, xh), nosync)}
    cases.update({f"hand{w}": (h, q.finish) for w, h in hands.items()})
    if jax is not None:
        jj = jax.jit(lambda x: chain(jnp, x))
        xj = jnp.asarray(xh)
        out = [None]

        def run() -> None:
            out[0] = jj(xj)
        cases["jax"] = (run, jsync(out))
    t = ms_interleaved(cases, reps)
    t_jit = t["jit"]
    row(bench, "clnp eager", t["eager"], note=f"eager/jit={t['eager'] / t_jit:.2f}")
    row(bench, f"clnp jit ({nk} kernel{'s' if nk != 1 else ''})", t_jit)
    row(bench, "numpy", t["numpy"], note=f"numpy/jit={t['numpy'] / t_jit:.2f}")
    row(bench, "hand PyOpenCL float8", t["hand8"], note=f"hand/jit={t['hand8'] / t_jit:.2f}")
    if 16 in hands:
        row(bench, "hand PyOpenCL float16", t["hand16"],
            note=f"hand16/jit={t['hand16'] / t_jit:.2f}")
    if jax is not None:
        row(bench, f"jax jit ({JAX_DEV})", t["jax"], note=f"jax/jit={t['jax'] / t_jit:.2f}")
    else:
        row(bench, "jax jit", float("nan"), note="skipped: jax not installed")
    if not dev.is_cpu:
        chain_pipelined(bench, cases, reps, prg, q, n)
    if torch is not None and TORCH_DEV == "cuda":
        xt = torch.tensor(xh, device="cuda")
        t_t = ms(lambda: chain(torch, xt), reps, tsync)
        row(bench, "torch cuda eager", t_t, note=f"torch/jit={t_t / t_jit:.2f}")
    if cupy is not None and not dev.is_cpu:
        xc = cupy.asarray(xh)
        ck = cupy.ElementwiseKernel("float32 x", "float32 y",
                                    "y = expf(sinf(x) * 2.0f + cosf(x)) / (1.0f + x * x)"
                                    " - 0.5f * tanhf(x)", "chain_ck")
        np.testing.assert_allclose(cupy.asnumpy(ck(xc)), ref, rtol=1e-4, atol=1e-5)
        t_c = ms(lambda: ck(xc), reps, cupy.cuda.Device().synchronize)
        row(bench, "cupy ElementwiseKernel", t_c, note=f"cupy/jit={t_c / t_jit:.2f}")


# calls enqueued back to back per wait in the pipelined chain measurement
PIPELINED_CALLS = 20


def chain_pipelined(bench: str, cases: dict, reps: int, prg: Any, q: Any, n: int) -> None:
    """The chain's device throughput on a GPU: ``PIPELINED_CALLS`` calls enqueued back to
    back, then one wait, per repetition (round robin over the peers). A wait after every
    call adds the runtime's wake-up latency to a 0.05-0.1 ms kernel: jax.jit's chain took
    0.16 ms a call that way on the H200 alone, 0.06 ms pipelined, and 0.8 ms between the
    other peers of the synced round robin (a probe in the thirteenth session). The copy
    ``y = x + 1`` (a hand OpenCL kernel on float4 elements, 128 MB moved) is the bandwidth
    reference: 3.7 TB/s on the H200, 77 % of the HBM's nominal 4.8."""
    # float4 elements: the scalar add1 moved 2.2 TB/s on the H200 where this moves 3.7
    copy = cl.Kernel(prg, "add1x4")
    bx, by = (cl.Buffer(q.context, cl.mem_flags.READ_WRITE, 4 * n) for _ in range(2))
    copy.set_args(bx, by)
    pipe = {k: cases[k] for k in ("jit", "hand8", "jax") if k in cases}
    pipe["copy"] = (lambda: cl.enqueue_nd_range_kernel(q, copy, (n // 4,), None), q.finish)

    def many(fn: Callable[[], object]) -> Callable[[], None]:
        def run() -> None:
            for _ in range(PIPELINED_CALLS):
                fn()
        return run
    t = ms_interleaved({k: (many(fn), s) for k, (fn, s) in pipe.items()}, reps)
    t = {k: v / PIPELINED_CALLS for k, v in t.items()}
    floor = t["copy"]
    for k, name in (("jit", "clnp jit"), ("hand8", "hand PyOpenCL float8"),
                    ("jax", f"jax jit ({JAX_DEV})"), ("copy", "copy y = x + 1 (hand)")):
        if k in t:
            row(bench, f"{name}, pipelined", t[k],
                note=f"{2 * 4 * n / (t[k] * 1e-3) / 1e12:.2f} TB/s moved; "
                     f"copy/this={floor / t[k]:.2f}")


# --------------------------------------------------------------- 2. softmax / layernorm
def softmax(x: Any) -> Any:
    m = clnp.max(x, axis=1, keepdims=True)
    e = clnp.exp(x - m)
    return e / clnp.sum(e, axis=1, keepdims=True)


def layernorm(x: Any) -> Any:
    mu = clnp.mean(x, axis=1, keepdims=True)
    d = x - mu
    var = clnp.mean(d * d, axis=1, keepdims=True)
    return d / clnp.sqrt(var + 1e-5)


def np_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def np_layernorm(x: np.ndarray) -> np.ndarray:
    d = x - x.mean(axis=1, keepdims=True)
    return d / np.sqrt((d * d).mean(axis=1, keepdims=True) + 1e-5)


def eager_kernels(f: Callable, *args: Any) -> int:
    g = clnp_grad.make_ir(f)(*args)
    return sum(1 for e in g.eqns if e.prim.name not in VIEWS)


@contextlib.contextmanager
def rows_off() -> Any:
    """jit without row fusion (the A/B of clnp_grad/_jit/rows.py), for this block."""
    from clnp_grad._jit import fusion
    saved = fusion.fuse_rows
    fusion.fuse_rows = lambda groups, owner, outs: groups
    try:
        yield
    finally:
        fusion.fuse_rows = saved


def bench_rowwise(reps: int, quick: bool) -> None:
    shape = (4096, 1024) if quick else (8192, 1024)
    rng = np.random.default_rng(1)
    xh = rng.standard_normal(shape).astype(np.float32)
    wh = rng.standard_normal(shape).astype(np.float32)
    x, w = clnp.asarray(xh), clnp.asarray(wh)
    for name, f, nf in (("softmax", softmax, np_softmax), ("layernorm", layernorm, np_layernorm)):
        bench = f"{name} {shape[0]}x{shape[1]}"
        print(f"\n== {bench}")
        # forward
        jf = clnp_grad.jit(f)
        ref = nf(xh)
        np.testing.assert_allclose(np.asarray(jf(x)), ref, rtol=2e-4, atol=2e-5)
        np.testing.assert_allclose(np.asarray(f(x)), ref, rtol=2e-4, atol=2e-5)
        k_e, k_j = eager_kernels(f, x), len(jf.lower(x).kernel_sources())
        t_e = ms(lambda: f(x), reps)
        t_j = ms(lambda: jf(x), reps)
        row(bench + " fwd", f"clnp eager ({k_e} kernels)", t_e, note=f"eager/jit={t_e / t_j:.2f}")
        row(bench + " fwd", f"clnp jit ({k_j} kernels)", t_j)
        # A/B in this run: the same jit without row fusion (clnp_grad/_jit/rows.py)
        with rows_off():
            jo = clnp_grad.jit(f)
            np.testing.assert_allclose(np.asarray(jo(x)), ref, rtol=2e-4, atol=2e-5)
            k_o = len(jo.lower(x).kernel_sources())
            t_o = ms(lambda: jo(x), reps)
        row(bench + " fwd", f"clnp jit, row fusion off ({k_o} kernels)", t_o,
            note=f"off/on={t_o / t_j:.2f}")
        # forward + backward
        loss = (lambda f: lambda x: clnp.sum(f(x) * w))(f)
        vg = clnp_grad.value_and_grad(loss)
        jvg = clnp_grad.jit(vg)
        lv_e, g_e = vg(x)
        lv_j, g_j = jvg(x)
        g_e, g_j = np.asarray(g_e), np.asarray(g_j)
        scale = float(np.abs(g_e).max())
        np.testing.assert_allclose(float(lv_j), float(lv_e), rtol=1e-3, atol=1e-2)
        np.testing.assert_allclose(g_j, g_e, rtol=1e-3, atol=1e-4 * scale)
        k_e, k_j = eager_kernels(vg, x), len(jvg.lower(x).kernel_sources())
        t_e = ms(lambda: vg(x), reps)
        t_j = ms(lambda: jvg(x), reps)
        row(bench + " fwd+bwd", f"clnp eager ({k_e} kernels)", t_e,
            note=f"eager/jit={t_e / t_j:.2f}")
        row(bench + " fwd+bwd", f"clnp jit ({k_j} kernels)", t_j)
        with rows_off():
            jo = clnp_grad.jit(vg)
            jo(x)
            k_o = len(jo.lower(x).kernel_sources())
            t_o = ms(lambda: jo(x), reps)
        row(bench + " fwd+bwd", f"clnp jit, row fusion off ({k_o} kernels)", t_o,
            note=f"off/on={t_o / t_j:.2f}")


# ------------------------------------------------------------------------------ 3. MLP
LR = 0.01


def clnp_step(p: dict, x: Any, y: Any) -> tuple:
    loss, g = clnp_grad.value_and_grad(lambda p: mlp_loss(clnp, p, x, y))(p)
    return loss, {k: p[k] - LR * g[k] for k in p}


def np_step(p: dict, x: np.ndarray, y: np.ndarray) -> tuple:
    a1 = x @ p["w1"] + p["b1"]
    h1 = np.maximum(a1, 0.0)
    a2 = h1 @ p["w2"] + p["b2"]
    h2 = np.maximum(a2, 0.0)
    z = h2 @ p["w3"] + p["b3"]
    m = z.max(axis=1, keepdims=True)
    e = np.exp(z - m)
    s = e.sum(axis=1, keepdims=True)
    b = x.shape[0]
    loss = np.mean(m[:, 0] + np.log(s[:, 0]) - (z * y).sum(axis=1))
    dz = (e / s - y) / b
    g = {"w3": h2.T @ dz, "b3": dz.sum(0)}
    dh = (dz @ p["w3"].T) * (a2 > 0)
    g["w2"], g["b2"] = h1.T @ dh, dh.sum(0)
    dh = (dh @ p["w2"].T) * (a1 > 0)
    g["w1"], g["b1"] = x.T @ dh, dh.sum(0)
    return loss, {k: p[k] - np.float32(LR) * g[k] for k in p}


def bench_mlp(reps: int) -> None:
    batch = 256
    bench = "MLP 784-1024-1024-10 b256 SGD step"
    print(f"\n== {bench}")
    ph, xh, yh = make_problem(batch)
    p = {k: clnp.asarray(v) for k, v in ph.items()}
    x, y = clnp.asarray(xh), clnp.asarray(yh)
    jstep = clnp_grad.jit(clnp_step)
    ref_loss, ref_p = np_step(ph, xh, yh)
    for name, (l, q) in (("jit", jstep(p, x, y)), ("eager", clnp_step(p, x, y))):
        np.testing.assert_allclose(float(l), ref_loss, rtol=1e-4, err_msg=f"{name}: loss")
        for k in NAMES:
            np.testing.assert_allclose(np.asarray(q[k]), ref_p[k], rtol=1e-3, atol=1e-5,
                                       err_msg=f"{name}: {k}")
    nk = len(jstep.lower(p, x, y).kernel_sources())
    k_e = eager_kernels(clnp_step, p, x, y)
    t_j = ms(lambda: jstep(p, x, y), reps)
    t_e = ms(lambda: clnp_step(p, x, y), reps)
    t_np = ms(lambda: np_step(ph, xh, yh), reps, nosync)
    row(bench, f"clnp jit ({nk} kernels)", t_j)
    row(bench, f"clnp eager vg+update ({k_e} prims)", t_e, note=f"eager/jit={t_e / t_j:.2f}")
    row(bench, "numpy hand backprop", t_np, note=f"numpy/jit={t_np / t_j:.2f}")
    t_tf = None
    if tensor_cores(x.device):
        # JAX's default float32 products on NVIDIA GPUs are TF32 (jax.default_matmul_precision):
        # clnp's TF32 tensor-core products are the like-for-like figure beside it
        with clnp.matmul_precision("tf32"):
            l_tf, _ = jstep(p, x, y)
            np.testing.assert_allclose(float(l_tf), ref_loss, rtol=1e-2, err_msg="tf32: loss")
            nk_tf = len(jstep.lower(p, x, y).kernel_sources())
            t_tf = ms(lambda: jstep(p, x, y), reps)
        row(bench, f"clnp jit, matmul precision tf32 ({nk_tf} kernels)", t_tf,
            note=f"highest/tf32={t_j / t_tf:.2f}")
    if torch is not None:
        tp = {k: torch.tensor(v, requires_grad=True, device=TORCH_DEV) for k, v in ph.items()}
        tx, ty = torch.tensor(xh, device=TORCH_DEV), torch.tensor(yh, device=TORCH_DEV)

        def tstep() -> Any:
            for v in tp.values():
                v.grad = None
            loss = torch_loss(tp, tx, ty)
            loss.backward()
            with torch.no_grad():
                new = {k: v - LR * v.grad for k, v in tp.items()}
            return loss.item(), new
        l_t, q_t = tstep()
        np.testing.assert_allclose(l_t, ref_loss, rtol=1e-4, err_msg="torch: loss")
        np.testing.assert_allclose(q_t["w1"].detach().cpu().numpy(), ref_p["w1"], rtol=1e-3,
                                   atol=1e-5)
        t_t = ms(tstep, reps, tsync, warm=3)
        row(bench, f"torch {torch.__version__} {TORCH_DEV} eager", t_t,
            note=f"torch/jit={t_t / t_j:.2f}")
    else:
        row(bench, "torch cpu", float("nan"), note="skipped: torch not installed")
    if jax is not None:
        def jstep_jax(p: dict, x: Any, y: Any) -> tuple:
            l, g = jax.value_and_grad(lambda p: mlp_loss(jnp, p, x, y))(p)
            return l, {k: p[k] - LR * g[k] for k in p}
        jj = jax.jit(jstep_jax)
        jp = {k: jnp.asarray(v) for k, v in ph.items()}
        jx, jy = jnp.asarray(xh), jnp.asarray(yh)
        out = [None]

        def run() -> None:
            out[0] = jj(jp, jx, jy)
        t_x = ms(run, reps, jsync(out))
        if JAX_DEV == "cpu":
            row(bench, f"jax jit ({JAX_DEV})", t_x, note=f"jax/jit={t_x / t_j:.2f}")
        else:
            note = f"jax/jit(tf32)={t_x / t_tf:.2f}" if t_tf else f"jax/jit={t_x / t_j:.2f}"
            row(bench, f"jax jit ({JAX_DEV}), default precision (TF32)", t_x, note=note)
            with jax.default_matmul_precision("float32"):
                jj32 = jax.jit(jstep_jax)

                def run32() -> None:
                    out[0] = jj32(jp, jx, jy)
                t_x32 = ms(run32, reps, jsync(out))
            row(bench, f"jax jit ({JAX_DEV}), precision float32", t_x32,
                note=f"jax/jit={t_x32 / t_j:.2f}")
    else:
        row(bench, "jax jit", float("nan"), note="skipped: jax not installed")


# ---------------------------------------------------------------- 3b. loop in one kernel
def bench_loop(reps: int) -> None:
    """Mandelbrot escape counts, 64 iterations of a fori_loop over 2^20 points: the loop in
    one kernel vs the same loop run from the host (one compiled body per iteration) vs
    NumPy."""
    from clnp_grad import lax
    n, iters = 1 << 20, 64
    bench = f"fori_loop mandelbrot 2^20 x{iters}"
    print(f"\n== {bench}")
    ch = np.random.default_rng(4).uniform(-2, 0.5, n).astype(np.float32)

    def mandel(c: Any) -> Any:
        def body(i: Any, st: Any) -> Any:
            zr, zi, cnt = st
            zr2, zi2 = zr * zr - zi * zi + c, 2.0 * zr * zi + 0.25
            inside = zr2 * zr2 + zi2 * zi2 < 4.0
            return (clnp.where(inside, zr2, zr), clnp.where(inside, zi2, zi),
                    cnt + clnp.astype(inside, clnp.int32))
        z = clnp.zeros_like(c)
        return lax.fori_loop(0, iters, body, (z, z, clnp.zeros(c.shape, dtype=clnp.int32)))[2]

    def mandel_np(c: np.ndarray) -> np.ndarray:
        zr = zi = np.zeros_like(c)
        cnt = np.zeros(c.shape, np.int32)
        for _ in range(iters):
            zr2 = zr * zr - zi * zi + c
            zi2 = np.float32(2) * zr * zi + np.float32(0.25)
            inside = zr2 * zr2 + zi2 * zi2 < 4
            zr, zi, cnt = np.where(inside, zr2, zr), np.where(inside, zi2, zi), cnt + inside
        return cnt
    c = clnp.asarray(ch)
    jm = clnp_grad.jit(mandel)
    ref = mandel_np(ch)
    agree = float(np.mean(np.asarray(jm(c)) == ref))   # float32 orbits may part near 4.0
    if agree < 0.999:
        raise AssertionError(f"mandelbrot: only {agree:.4f} of the counts match NumPy")
    t_k = ms(lambda: jm(c), reps)
    os.environ["CLNP_LOOP_KERNELS"] = "0"    # read when a loop is first staged
    jh = clnp_grad.jit(mandel)
    np.testing.assert_array_equal(np.asarray(jh(c)), np.asarray(jm(c)))
    t_h = ms(lambda: jh(c), reps)
    os.environ.pop("CLNP_LOOP_KERNELS")
    t_np = ms(lambda: mandel_np(ch), max(1, reps // 2), nosync, warm=1)
    row(bench, "clnp jit, loop in one kernel", t_k)
    row(bench, "clnp jit, host loop of compiled bodies", t_h, note=f"host/kernel={t_h / t_k:.2f}")
    row(bench, "numpy", t_np, note=f"numpy/kernel={t_np / t_k:.2f}")


# -------------------------------------------------------------------- 4. per-call overhead
def per_call_us(fn: Callable[[], object], finish: Callable[[], None], calls: int = 2000,
                every: int = 100) -> float:
    """Median over calls//every batches of (time of ``every`` calls + one finish) / every."""
    for _ in range(every):          # warm-up, untimed
        fn()
    finish()
    times = []
    for _ in range(calls // every):
        t = time.perf_counter()
        for _ in range(every):
            fn()
        finish()
        times.append((time.perf_counter() - t) / every)
    return 1e6 * statistics.median(times)


def bench_overhead(dev: Any, prg: Any) -> None:
    bench = "per-call x+1.0, 1000 f32"
    print(f"\n== {bench} (2000 calls, finish every 100)")
    n = 1000
    xh = np.arange(n, dtype=np.float32)
    x = clnp.asarray(xh)
    jf = clnp_grad.jit(lambda x: x + 1.0)
    np.testing.assert_array_equal(np.asarray(jf(x)), xh + 1)
    mf = cl.mem_flags
    bin_ = cl.Buffer(dev.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=xh)
    bout = cl.Buffer(dev.context, mf.READ_WRITE, 4 * n)
    knl = cl.Kernel(prg, "add1")
    q = dev.queue

    def raw() -> None:
        knl(q, (1024,), None, bin_, bout, np.int32(n))
    raw()
    out = np.empty_like(xh)
    cl.enqueue_copy(q, out, bout)
    q.finish()
    np.testing.assert_array_equal(out, xh + 1)
    t_j = per_call_us(lambda: jf(x), sync)
    t_r = per_call_us(raw, q.finish)
    t_e = per_call_us(lambda: x + 1.0, sync)
    row(bench, "clnp jit", t_j, "us", note=f"jit/raw={t_j / t_r:.2f}")
    row(bench, "raw PyOpenCL launch", t_r, "us")
    row(bench, "clnp eager", t_e, "us", note=f"eager/raw={t_e / t_r:.2f}")


# ---------------------------------------------------------------------- 5. cold compile
CHILD = r"""
import time
t0 = time.perf_counter()
import sys, json
sys.path.insert(0, {root!r})
import clnp, clnp_grad
import numpy as np
t_imp = time.perf_counter()
LAYERS = (784, 1024, 1024, 10)
rng = np.random.default_rng(0)
ph = {{}}
for i, (m, n) in enumerate(zip(LAYERS[:-1], LAYERS[1:]), start=1):
    ph[f"w{{i}}"] = (rng.standard_normal((m, n)) * np.sqrt(2.0 / m)).astype(np.float32)
    ph[f"b{{i}}"] = (rng.standard_normal(n) * 0.01).astype(np.float32)
xh = rng.standard_normal((256, 784)).astype(np.float32)
yh = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 256)]

def mlp_loss(p, x, y):
    h = clnp.maximum(x @ p["w1"] + p["b1"], 0.0)
    h = clnp.maximum(h @ p["w2"] + p["b2"], 0.0)
    z = h @ p["w3"] + p["b3"]
    m = clnp.max(z, axis=1, keepdims=True)
    lse = m[:, 0] + clnp.log(clnp.sum(clnp.exp(z - m), axis=1))
    return clnp.mean(lse - clnp.sum(z * y, axis=1))

def clnp_step(p, x, y):
    loss, g = clnp_grad.value_and_grad(lambda p: mlp_loss(p, x, y))(p)
    return loss, {{k: p[k] - 0.01 * g[k] for k in p}}

p = {{k: clnp.asarray(v) for k, v in ph.items()}}
x, y = clnp.asarray(xh), clnp.asarray(yh)
clnp.synchronize()
t_data = time.perf_counter()
jstep = clnp_grad.jit(clnp_step)
loss, newp = jstep(p, x, y)
lv = float(loss)
w = np.asarray(newp["w1"])
t1 = time.perf_counter()
loss, newp = jstep(p, x, y)
float(loss)
t2 = time.perf_counter()
print(json.dumps({{"total": t1 - t0, "import": t_imp - t0, "first_call": t1 - t_data,
                   "second_call": t2 - t1, "loss": lv}}))
"""


def run_child(env: dict) -> dict:
    here = os.path.dirname(os.path.abspath(__file__))
    code = CHILD.format(root=os.path.dirname(here))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f"child failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def bench_cold() -> None:
    bench = "MLP step first call (cold compile)"
    print(f"\n== {bench}")
    with tempfile.TemporaryDirectory() as cc, tempfile.TemporaryDirectory() as pc:
        env = dict(os.environ, CLNP_CACHE_DIR=cc, POCL_CACHE_DIR=pc)
        cold = run_child(env)
        warm = run_child(env)
    row(bench, "fresh process, empty caches", 1e3 * cold["total"],
        note=f"import {1e3 * cold['import']:.0f} ms, first call {1e3 * cold['first_call']:.0f} "
             f"ms, 2nd call {1e3 * cold['second_call']:.1f} ms")
    row(bench, "fresh process, warm disk caches", 1e3 * warm["total"],
        note=f"cold/warm={cold['total'] / warm['total']:.2f}; import "
             f"{1e3 * warm['import']:.0f} ms, first call {1e3 * warm['first_call']:.0f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=None, help="timed runs per figure (median)")
    ap.add_argument("--quick", action="store_true", help="smaller softmax/layernorm, fewer reps")
    ap.add_argument("--csv", default=None, help="output CSV (default bench/results/jit-<dev>.csv)")
    ap.add_argument("--only", default=None, help="comma-separated sections: chain, rowwise, mlp, "
                    "loop, overhead, cold (default: all)")
    ap.add_argument("--update", action="store_true",
                    help="keep the existing CSV's rows of benchmarks not measured in this run "
                    "(with --only: refresh one section's rows in place)")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None
    want = lambda name: only is None or name in only   # noqa: E731
    reps = args.reps or (3 if args.quick else 7)
    global TORCH_DEV
    dev = clnp.default_device()
    tag = "pocl-cpu" if dev.is_cpu else "gpu"
    if not dev.is_cpu and torch is not None and torch.cuda.is_available():
        TORCH_DEV = "cuda"
    path = args.csv or os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                                    f"jit-{tag}.csv")
    print(f"device: {dev}; reps={reps}; torch={getattr(torch, '__version__', None)}; "
          f"jax={getattr(jax, '__version__', None)}")
    prg = cl.Program(dev.context, HAND_CHAIN).build()
    if want("chain"):
        bench_chain(dev, prg, reps)
    if want("rowwise"):
        bench_rowwise(reps, args.quick)
    if want("mlp"):
        bench_mlp(reps)
    if want("loop"):
        bench_loop(reps)
    if want("overhead"):
        bench_overhead(dev, prg)
    if want("cold"):
        bench_cold()
    rows = ROWS
    if args.update and os.path.exists(path):
        import csv
        fresh = {r["benchmark"] for r in ROWS}
        with open(path, newline="") as f:
            old = list(csv.DictReader(f))
        # this run's rows take the place of the first old row of their benchmark
        rows, done = [], set()
        for r in old:
            b = r["benchmark"]
            if b not in fresh:
                rows.append(r)
            elif b not in done:
                rows += [n for n in ROWS if n["benchmark"] == b]
                done.add(b)
        rows += [n for n in ROWS if n["benchmark"] not in done]
    write_csv(path, rows)


if __name__ == "__main__":
    main()
