"""clnp_nn convolution and pooling vs PyTorch and JAX, side by side in one process.

    python bench/bench_nn_conv.py [--batch 16] [--channels 64] [--size 32] [--reps 7]

Runs on clnp's default device (``CLNP_DEVICE`` picks it); PyTorch runs on the CPU with
``torch.set_num_threads(os.cpu_count())``, or on CUDA (cuDNN) when clnp's device is a GPU
and PyTorch sees one, with TF32 off. JAX (when ``import jax`` works; else its columns stay
empty) runs on its default backend (``JAX_PLATFORMS=cuda`` on the GPU machine; the bench sets
``XLA_PYTHON_CLIENT_PREALLOCATE=false`` so that XLA leaves GPU memory to OpenCL), every
function under ``jax.jit`` with ``lax.conv_general_dilated`` (NCHW/OIHW) at
``Precision.HIGHEST``, so that all three compute in full float32. Each case is checked against
PyTorch before it is timed; times are medians of ``--reps`` runs after a warm-up call, with
``clnp.synchronize()`` (and ``torch.cuda.synchronize()``, ``jax.block_until_ready``) inside
each timed region, and the clnp, PyTorch and JAX runs of a case interleave so that load from
other processes hits them alike. Cases (3x3 convolution, stride 1, padding 1, float32):

1. ``conv2d`` forward.
2. ``conv2d`` forward + backward (data and weight gradients of ``0.5 * sum(y**2)``), clnp
   under ``jit``.
3. A ResNet-style block ``relu(bn(conv(relu(bn(conv(x))))) + x)`` forward + backward
   (training-mode batch norm without affine parameters: mean and biased variance over
   (0, 2, 3), eps 1e-5), clnp under ``jit``, JAX as ``jax.jit(jax.grad(block, argnums=(0, 1,
   2)))``.
4. Cases 1-3 again with Winograd F(2x2, 3x3) forced (``set_conv_algorithm("winograd")``).
5. The im2col and col2im kernels alone, against a device copy of the same number of bytes
   (their bandwidth floor).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any, Callable

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")   # before any jax import

import clnp  # noqa: E402
import clnp_grad as cg  # noqa: E402
import clnp_nn.functional as F  # noqa: E402
from clnp_nn.functional._kernels import col2im, im2col  # noqa: E402


SYNCS: list[Callable[[], None]] = [clnp.synchronize]


def timed(f: Callable[[], Any]) -> float:
    for s in SYNCS:
        s()
    t = time.perf_counter()
    f()
    for s in SYNCS:
        s()
    return time.perf_counter() - t


def race(cases: dict[str, Callable[[], Any]], reps: int) -> dict[str, float]:
    for f in cases.values():
        f()
    runs: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(reps):
        for k, f in cases.items():
            runs[k].append(timed(f))
    return {k: statistics.median(v) for k, v in runs.items()}


def jax_peer(x: np.ndarray, w1: np.ndarray, w2: np.ndarray) -> dict[str, Any] | None:
    """The JAX cases on its default device (None when jax is not importable): ``conv``
    (forward), ``conv_bwd`` (gradients of ``0.5 * sum(y**2)``), ``block`` (the ResNet block's
    gradients), each a no-argument callable that returns its result after
    ``jax.block_until_ready``."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    lax = jax.lax

    def conv(x: Any, w: Any) -> Any:
        return lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)),
                                        dimension_numbers=("NCHW", "OIHW", "NCHW"),
                                        precision=lax.Precision.HIGHEST)

    def bn(h: Any) -> Any:
        # training-mode batch norm without affine parameters, as F.batch_norm(training=True)
        mean = jnp.mean(h, axis=(0, 2, 3), keepdims=True)
        var = jnp.mean(jnp.square(h - mean), axis=(0, 2, 3), keepdims=True)
        return (h - mean) * lax.rsqrt(var + 1e-5)

    def loss(x: Any, w: Any) -> Any:
        y = conv(x, w)
        return 0.5 * jnp.sum(y * y)

    def block(x: Any, w1: Any, w2: Any) -> Any:
        h = jax.nn.relu(bn(conv(x, w1)))
        h = bn(conv(h, w2))
        return jnp.sum(jax.nn.relu(h + x))

    xj, w1j, w2j = (jnp.asarray(v) for v in (x, w1, w2))
    f_conv = jax.jit(conv)
    g_conv = jax.jit(jax.grad(loss, argnums=(0, 1)))
    g_block = jax.jit(jax.grad(block, argnums=(0, 1, 2)))
    return {"conv": lambda: jax.block_until_ready(f_conv(xj, w1j)),
            "conv_bwd": lambda: jax.block_until_ready(g_conv(xj, w1j)),
            "block": lambda: jax.block_until_ready(g_block(xj, w1j, w2j)),
            "device": jax.devices()[0].platform}


def torch_device(torch: Any) -> str:
    """PyTorch's device beside clnp's: "cuda" where clnp runs on a GPU and PyTorch sees one
    (TF32 off, its queue drained in every timed region), else "cpu" on every core."""
    torch.set_num_threads(os.cpu_count() or 1)
    if clnp.default_device().is_cpu or not torch.cuda.is_available():
        return "cpu"
    SYNCS.append(torch.cuda.synchronize)
    # full float32 as clnp computes it (PyTorch's cuDNN convolutions default to TF32)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    return "cuda"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--channels", type=int, default=64)
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--csv", default=None, help="also write the table as CSV")
    a = ap.parse_args()
    import torch
    tdev = torch_device(torch)
    TF = torch.nn.functional
    N, C, S = a.batch, a.channels, a.size
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, C, S, S)).astype(np.float32)
    w1 = (rng.standard_normal((C, C, 3, 3)) * 0.05).astype(np.float32)
    w2 = (rng.standard_normal((C, C, 3, 3)) * 0.05).astype(np.float32)
    xc, w1c, w2c = (clnp.asarray(v) for v in (x, w1, w2))
    xt, w1t, w2t = (torch.tensor(v, requires_grad=True, device=tdev) for v in (x, w1, w2))
    jx = jax_peer(x, w1, w2)
    ones, zeros = clnp.ones((C,), dtype=clnp.float32), clnp.zeros((C,), dtype=clnp.float32)
    print(f"device: {clnp.default_device()}; torch {torch.__version__} on {tdev} "
          f"({torch.get_num_threads()} CPU threads); "
          + (f"jax on {jx['device']}" if jx else "jax not importable (no JAX columns)")
          + f"; x {x.shape}, 3x3 conv, float32, median of {a.reps}")

    def c_loss(x, w1):
        y = F.conv2d(x, w1, padding=1)
        return 0.5 * clnp.sum(y * y)

    def c_block(x, w1, w2):
        h = F.relu(F.batch_norm(F.conv2d(x, w1, padding=1), zeros, ones, training=True)[0])
        h = F.batch_norm(F.conv2d(h, w2, padding=1), zeros, ones, training=True)[0]
        return clnp.sum(F.relu(h + x))

    def t_block(x, w1, w2):
        h = TF.relu(TF.batch_norm(TF.conv2d(x, w1, padding=1), None, None, training=True))
        h = TF.batch_norm(TF.conv2d(h, w2, padding=1), None, None, training=True)
        return TF.relu(h + x).sum()

    F.set_conv_algorithm("im2col")      # cases 1-3: im2col whatever a tuning cache says
    g_conv = cg.jit(cg.grad(c_loss, argnums=(0, 1)))
    g_block = cg.jit(cg.grad(c_block, argnums=(0, 1, 2)))

    def t_conv_bwd():
        xt.grad = w1t.grad = None
        (0.5 * TF.conv2d(xt, w1t, padding=1) ** 2).sum().backward()

    def t_block_bwd():
        xt.grad = w1t.grad = w2t.grad = None
        t_block(xt, w1t, w2t).backward()

    # correctness first
    np.testing.assert_allclose(np.asarray(F.conv2d(xc, w1c, padding=1)),
                               TF.conv2d(xt, w1t, padding=1).detach().cpu().numpy(), rtol=1e-3,
                               atol=1e-3)
    t_block_bwd()
    gb = g_block(xc, w1c, w2c)
    # float32 sums over N*H*W terms and ReLU kinks: against a float64 reference both clnp and
    # PyTorch float32 are off by ~1e-3 of the largest weight gradient at batch 64
    ref = w1t.grad.cpu().numpy()
    np.testing.assert_allclose(np.asarray(gb[1]), ref, rtol=1e-2, atol=5e-3 * np.abs(ref).max())
    if jx:
        np.testing.assert_allclose(np.asarray(jx["conv"]()),
                                   TF.conv2d(xt, w1t, padding=1).detach().cpu().numpy(),
                                   rtol=1e-3, atol=1e-3)
        np.testing.assert_allclose(np.asarray(jx["block"]()[1]), ref, rtol=1e-2,
                                   atol=5e-3 * np.abs(ref).max())

    def peers(case: dict[str, Callable[[], Any]], jax_case: str) -> dict[str, Callable[[], Any]]:
        if jx:
            case["jax"] = jx[jax_case]
        return case

    rows = []
    r = race(peers({"clnp": lambda: F.conv2d(xc, w1c, padding=1),
                    "torch": lambda: TF.conv2d(xt.detach(), w1t.detach(), padding=1)}, "conv"),
             a.reps)
    rows.append(("conv2d forward", r))
    r = race(peers({"clnp": lambda: g_conv(xc, w1c), "torch": t_conv_bwd}, "conv_bwd"), a.reps)
    rows.append(("conv2d forward+backward", r))
    r = race(peers({"clnp": lambda: g_block(xc, w1c, w2c), "torch": t_block_bwd}, "block"),
             a.reps)
    rows.append(("ResNet block forward+backward", r))
    prev = F.set_conv_algorithm("winograd")
    try:
        gw_conv = cg.jit(cg.grad(c_loss, argnums=(0, 1)))
        gw_block = cg.jit(cg.grad(c_block, argnums=(0, 1, 2)))
        np.testing.assert_allclose(np.asarray(gw_block(xc, w1c, w2c)[1]), ref, rtol=1e-2,
                                   atol=5e-3 * np.abs(ref).max())
        r = race(peers({"clnp": lambda: F.conv2d(xc, w1c, padding=1),
                        "torch": lambda: TF.conv2d(xt.detach(), w1t.detach(), padding=1)},
                       "conv"), a.reps)
        rows.append(("conv2d forward, Winograd", r))
        r = race(peers({"clnp": lambda: gw_conv(xc, w1c), "torch": t_conv_bwd}, "conv_bwd"),
                 a.reps)
        rows.append(("conv2d forward+backward, Winograd", r))
        r = race(peers({"clnp": lambda: gw_block(xc, w1c, w2c), "torch": t_block_bwd},
                       "block"), a.reps)
        rows.append(("ResNet block fwd+bwd, Winograd", r))
    finally:
        F.set_conv_algorithm(prev)
    geo = dict(kernel=(3, 3), stride=(1, 1), padding=(1, 1), dilation=(1, 1), out_hw=(S, S))
    cols = im2col(xc, **geo)
    r = race({"clnp": lambda: im2col(xc, **geo), "torch": lambda: cols + 0.0}, a.reps)
    rows.append(("im2col (vs clnp copy of its output)", r))
    r = race({"clnp": lambda: col2im(cols, in_hw=(S, S), **geo), "torch": lambda: cols + 0.0},
             a.reps)
    rows.append(("col2im (vs clnp copy of its input)", r))
    print(f"{'case':40s} {'clnp ms':>9s} {'peer ms':>9s} {'peer/clnp':>10s} {'jax ms':>9s} "
          f"{'jax/clnp':>9s}")
    for name, r in rows:
        jcols = (f" {r['jax'] * 1e3:9.3f} {r['jax'] / r['clnp']:8.2f}x" if "jax" in r else
                 f" {'-':>9s} {'-':>9s}")
        print(f"{name:40s} {r['clnp'] * 1e3:9.3f} {r['torch'] * 1e3:9.3f} "
              f"{r['torch'] / r['clnp']:9.2f}x" + jcols)
    if a.csv:
        import csv
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["case", "batch", "clnp_ms", f"torch_{tdev}_ms", "torch_over_clnp",
                        "jax_ms", "jax_over_clnp"])
            for name, r in rows:
                j = r.get("jax")
                w.writerow([name, N, round(r["clnp"] * 1e3, 4), round(r["torch"] * 1e3, 4),
                            round(r["torch"] / r["clnp"], 3),
                            "" if j is None else round(j * 1e3, 4),
                            "" if j is None else round(j / r["clnp"], 3)])


if __name__ == "__main__":
    main()
