"""Mixed precision (clnp_nn.amp) vs float32, side by side in one run, with PyTorch as the
peer for the same 16-bit-vs-float32 comparison.

    python bench/bench_amp.py [--reps 5] [--quick] [--large] [--csv bench/results/amp-pocl-cpu.csv]

Runs on clnp's default device (``CLNP_DEVICE`` picks it); PyTorch runs on CUDA when that
device is a GPU and PyTorch sees one (float32 matmuls at full float32: PyTorch's default
``allow_tf32=False`` and clnp's default precision), else on the CPU. Times are medians of ``--reps``
runs after warm-up calls, with ``clnp.synchronize()`` inside each timed region; results are
checked against NumPy (float32) before anything is timed.

1. A bandwidth-bound layer: ``relu(x * scale + shift)`` over (4096, 4096) activations
   ((2048, 2048) with --quick), jitted, float32 vs float16 and bfloat16 storage (16-bit
   storage halves the bytes moved; arithmetic is float32 either way). PyTorch CPU: the same
   expression in float32, float16 and bfloat16.
2. A layer-norm forward over the same activations (reductions accumulate in float32).
3. One MLP training step, 784-1024-1024-10, batch 256 (jit of value_and_grad + adam +
   apply_updates): float32 vs ``get_policy("params=float32,compute=float16,output=float32")``
   with a DynamicLossScale, all_finite and select_tree, and vs ``compute=bfloat16`` (no loss
   scaling needed: bfloat16 has float32's range). PyTorch: float32 vs
   ``torch.autocast(device, dtype=...)`` with float16 and bfloat16.
4. With ``--large``: the same step for a 4096-4096-4096-10 MLP at batch 4096, compute-bound
   on a GPU (float16 products run on tensor cores where clnp finds them).

The ratio column is float32 time / AMP time: above 1 means AMP is faster.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Any, Callable

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import clnp as xp  # noqa: E402
import clnp_grad as cg  # noqa: E402
import clnp_grad.random as jr  # noqa: E402
from clnp_nn import amp, optim  # noqa: E402

from bench_core import timeit, write_csv  # noqa: E402

try:  # optional peer; never installed by this script
    import torch  # type: ignore
except Exception:  # pragma: no cover
    torch = None

ROWS: list[dict] = []

# PyTorch runs where clnp runs: CUDA when clnp's default device is a GPU and PyTorch sees one
TDEV = "cuda" if (torch is not None and not xp.default_device().is_cpu and
                  torch.cuda.is_available()) else "cpu"


def tsync() -> None:
    if TDEV == "cuda":
        torch.cuda.synchronize()


def row(bench: str, impl: str, ms: float, note: str = "") -> None:
    ROWS.append({"benchmark": bench, "impl": impl, "ms": round(ms, 4), "note": note})
    print(f"  {bench:<28} {impl:<30} {ms:10.3f} ms  {note}", flush=True)


def clms(fn: Callable[[], object], reps: int) -> float:
    return 1e3 * timeit(fn, xp.synchronize, reps)


def tms(fn: Callable[[], object], reps: int) -> float:
    return 1e3 * timeit(fn, tsync, reps)


def bench_layer(name: str, f: Callable[[Any, Any], Any], f_np: Callable[[Any, tuple], Any],
                tf: Callable[[tuple], Any], shape: tuple, reps: int) -> None:
    print(f"\n== {name} {shape}")
    rng = np.random.default_rng(0)
    xh = rng.standard_normal(shape).astype(np.float32)
    ph = rng.standard_normal(shape[-1]).astype(np.float32)
    jf = cg.jit(f)
    ref = np.asarray(f_np(np, (xh, ph)))
    times = {}
    for dt in (xp.float32, xp.float16, xp.bfloat16):
        x, p = xp.asarray(xh.astype(dt)), xp.asarray(ph.astype(dt))
        out = xp.asnumpy(xp.astype(jf(x, p), xp.float32))
        tol = {xp.float32: 1e-4, xp.float16: 2e-2, xp.bfloat16: 8e-2}[dt]
        np.testing.assert_allclose(out, ref, rtol=tol, atol=4 * tol)
        times[dt] = clms(lambda: jf(x, p), reps)
    row(name, "clnp jit float32", times[xp.float32])
    for dt in (xp.float16, xp.bfloat16):
        n = np.dtype(dt).name
        row(name, f"clnp jit {n} storage", times[dt],
            f"float32/{n} = {times[xp.float32] / times[dt]:.2f}")
    if torch is not None:
        tt = {}
        for tdt in (torch.float32, torch.float16, torch.bfloat16):
            args = (torch.from_numpy(xh).to(TDEV, tdt), torch.from_numpy(ph).to(TDEV, tdt))
            tt[tdt] = tms(lambda: tf(args), reps)
        row(name, f"torch {TDEV} float32", tt[torch.float32])
        for tdt in (torch.float16, torch.bfloat16):
            n = str(tdt).split(".")[-1]
            row(name, f"torch {TDEV} {n}", tt[tdt],
                f"float32/{n} = {tt[torch.float32] / tt[tdt]:.2f}")


def _affine(x: Any, p: Any) -> Any:
    return xp.maximum(x * p + 0.5, 0)


def _affine_np(ns: Any, args: tuple) -> Any:
    x, p = args
    return ns.maximum(x * p + 0.5, 0)


def _layernorm(x: Any, w: Any) -> Any:
    # d * d, not d ** 2: inside jit a float power is ~40x slower on PoCL CPU (measured)
    xf = xp.astype(x, xp.float32)
    m = xp.mean(xf, axis=-1, keepdims=True)
    d = xf - m
    v = xp.mean(d * d, axis=-1, keepdims=True)
    return xp.astype(d / xp.sqrt(v + 1e-5), x.dtype) * w


def _layernorm_np(ns: Any, args: tuple) -> Any:
    x, w = args
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / ns.sqrt(v + 1e-5) * w


def bench_mlp(reps: int, sizes: list[int], batch: int) -> None:
    name = f"MLP {'-'.join(map(str, sizes))} b{batch} adam step"
    print(f"\n== {name}")
    rng = np.random.default_rng(0)
    xh = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    nc = sizes[-1]
    yh = np.eye(nc, dtype=np.float32)[rng.integers(0, nc, batch)]
    key = jr.key(0)
    params = []
    for fi, fo in zip(sizes[:-1], sizes[1:]):
        key, kw = jr.split(key)
        b = 1 / math.sqrt(fi)
        params.append({"w": jr.uniform(kw, (fi, fo), dtype=xp.float32, minval=-b, maxval=b),
                       "b": xp.zeros(fo, dtype=xp.float32)})
    x, y = xp.asarray(xh), xp.asarray(yh)
    opt = optim.adam(1e-3)

    def make(policy: amp.Policy) -> Callable:
        def loss_fn(p: Any, xb: Any, yb: Any, ls: Any) -> Any:
            p, h = policy.cast_to_compute((p, xb))
            for layer in p[:-1]:
                h = xp.maximum(h @ layer["w"] + layer["b"], 0)
            logits = xp.astype(h @ p[-1]["w"] + p[-1]["b"], xp.float32)
            m = xp.max(logits, axis=-1, keepdims=True)
            lse = xp.log(xp.sum(xp.exp(logits - m), axis=-1, keepdims=True)) + m
            return ls.scale(-xp.mean(xp.sum(yb * (logits - lse), axis=-1)))

        @cg.jit
        def step(p: Any, s: Any, ls: Any, xb: Any, yb: Any) -> Any:
            loss, g = cg.value_and_grad(loss_fn)(p, xb, yb, ls)
            g = ls.unscale(policy.cast_to_param(g))
            fin = amp.all_finite(g)
            u, s2 = opt.update(g, s, p)
            p, s = amp.select_tree(fin, (optim.apply_updates(p, u), s2), (p, s))
            return loss, p, s, ls.adjust(fin)
        return step

    times = {}
    for label, policy, ls in (("float32", amp.get_policy("float32"), amp.NoOpLossScale()),
                              ("amp f16 compute", amp.get_policy(
                                  "params=float32,compute=float16,output=float32"),
                               amp.DynamicLossScale(2.0 ** 15)),
                              ("amp bf16 compute", amp.get_policy(
                                  "params=float32,compute=bfloat16,output=float32"),
                               amp.NoOpLossScale())):
        step = make(policy)
        st = [params, opt.init(params), ls]
        loss, *_ = step(st[0], st[1], st[2], x, y)
        assert np.isfinite(float(loss))

        def run() -> None:
            _, st[0], st[1], st[2] = step(st[0], st[1], st[2], x, y)
        times[label] = clms(run, reps)
    row(name, "clnp jit float32", times["float32"])
    row(name, "clnp jit AMP (f16 compute)", times["amp f16 compute"],
        f"float32/AMP = {times['float32'] / times['amp f16 compute']:.2f}")
    row(name, "clnp jit AMP (bf16 compute)", times["amp bf16 compute"],
        f"float32/AMP = {times['float32'] / times['amp bf16 compute']:.2f}")
    if torch is not None:
        layers: list = []
        for a, b in zip(sizes[:-1], sizes[1:]):
            layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
        model = torch.nn.Sequential(*layers[:-1]).to(TDEV)
        topt = torch.optim.Adam(model.parameters(), lr=1e-3)
        xt, yt = torch.from_numpy(xh).to(TDEV), torch.from_numpy(yh.argmax(1)).to(TDEV)

        def tstep(dtype: Any = None) -> None:
            topt.zero_grad()
            if dtype is None:
                loss = torch.nn.functional.cross_entropy(model(xt), yt)
            else:
                with torch.autocast(TDEV, dtype=dtype):
                    loss = torch.nn.functional.cross_entropy(model(xt), yt)
            loss.backward()
            topt.step()
        t32 = tms(tstep, reps)
        row(name, f"torch {TDEV} float32", t32)
        for dtype in (torch.float16, torch.bfloat16):
            try:
                t16 = tms(lambda: tstep(dtype), reps)
            except Exception as e:  # noqa: BLE001 - reported, not fatal
                print(f"  torch autocast {dtype} failed: {e}")
                continue
            row(name, f"torch {TDEV} autocast {str(dtype).split('.')[-1]}", t16,
                f"float32/autocast = {t32 / t16:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--csv", default="")
    ap.add_argument("--large", action="store_true",
                    help="also a 4096-4096-4096-10 MLP at batch 4096 (GPUs)")
    a = ap.parse_args()
    print("device:", xp.default_device())
    shape = (2048, 2048) if a.quick else (4096, 4096)
    bench_layer("relu(x*p+0.5)", _affine, _affine_np, lambda t: torch.relu(t[0] * t[1] + 0.5),
                shape, a.reps)
    bench_layer("layernorm fwd", _layernorm, _layernorm_np,
                lambda t: torch.nn.functional.layer_norm(t[0], t[0].shape[-1:], t[1]), shape,
                a.reps)
    bench_mlp(a.reps, [784, 1024, 1024, 10], 256)
    if a.large:
        # compute-bound: where 16-bit storage and float16 tensor cores can pay on a GPU
        bench_mlp(a.reps, [4096, 4096, 4096, 10], 4096)
    if a.csv:
        write_csv(a.csv, ROWS)


if __name__ == "__main__":
    main()
