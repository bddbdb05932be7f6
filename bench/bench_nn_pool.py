"""clnp_nn max_pool2d vs the im2col + max composition it replaced and PyTorch, in one process.

    python bench/bench_nn_pool.py [--reps 200]

Shapes: the digits CNN's two pools (examples/digits_cnn.py, batch 64): ``(64, 32, 8, 8)`` and
``(64, 64, 4, 4)`` float32, 2x2 windows, stride 2. Cases, each checked against PyTorch before
it is timed:

- forward: ``max_pool2d(x, 2)``; clnp under ``clnp_grad.jit``.
- forward + backward: the gradient of ``sum(max_pool2d(x, 2) * ct)``; clnp as
  ``jit(grad(...))``, PyTorch as forward plus ``backward(ct)``.

"clnp" is ``clnp_nn.functional.max_pool2d`` (the ``nn_max_pool2d`` kernels); "composition"
is the code it replaced, rebuilt here from the same tree (the windows by ``nn_im2col`` with
``-inf`` padding, ``clnp.max`` over them, differentiated by the max reduction's rules and
``nn_col2im``). Times are medians of ``--reps`` runs after warm-up, with
``clnp.synchronize()`` inside each timed region; the three peers interleave within each
repetition so that load from other processes hits them alike. PyTorch runs on the CPU with
``torch.set_num_threads(os.cpu_count())``.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import clnp  # noqa: E402
import clnp_grad as cg  # noqa: E402
import clnp_nn.functional as F  # noqa: E402
from clnp_nn.functional.pooling import _window, _windows  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_nn_conv import race  # noqa: E402  (interleaved medians, synchronised)

SHAPES = [(64, 32, 8, 8), (64, 64, 4, 4)]


def composition(x: Any, kernel_size: int) -> Any:
    """max_pool2d as it was before its kernels: im2col (-inf padding) and clnp.max."""
    x4, k, s, p, d, out_hw = _window("max_pool2d", x, kernel_size, None, 0, 1)
    return clnp.permute_dims(clnp.max(_windows(x4, k, s, p, d, out_hw, -math.inf), axis=1),
                             (1, 0, 2, 3))


def bench_shape(shape: tuple, rng: np.random.Generator, reps: int) -> None:
    """Checks and times the cases on one input shape, printing a row per case."""
    import torch
    tf = torch.nn.functional
    x_np = rng.standard_normal(shape).astype(np.float32)
    ct_np = rng.standard_normal(shape[:2] + (shape[2] // 2, shape[3] // 2)).astype(
        np.float32)
    x, ct = clnp.asarray(x_np), clnp.asarray(ct_np)
    xt, ctt = torch.tensor(x_np, requires_grad=True), torch.tensor(ct_np)
    ref_y = tf.max_pool2d(xt, 2)
    ref_y.backward(ctt)
    fwd, bwd = {}, {}
    for name, pool in (("clnp", F.max_pool2d), ("composition", composition)):
        fwd[name] = cg.jit(lambda a, pool=pool: pool(a, 2))
        bwd[name] = cg.jit(cg.grad(lambda a, c, pool=pool: clnp.sum(pool(a, 2) * c)))
        np.testing.assert_array_equal(np.asarray(fwd[name](x)), ref_y.detach().numpy())
        np.testing.assert_allclose(np.asarray(bwd[name](x, ct)), xt.grad.numpy(),
                                   rtol=1e-6, atol=1e-6)

    def torch_bwd() -> Any:
        xt.grad = None
        tf.max_pool2d(xt, 2).backward(ctt)
        return xt.grad

    for case, cases in (
            ("forward", {"clnp": lambda: fwd["clnp"](x),
                         "composition": lambda: fwd["composition"](x),
                         "torch": lambda: tf.max_pool2d(xt.detach(), 2)}),
            ("forward + backward", {"clnp": lambda: bwd["clnp"](x, ct),
                                    "composition": lambda: bwd["composition"](x, ct),
                                    "torch": torch_bwd})):
        r = {k: v * 1e3 for k, v in race(cases, reps).items()}
        print(f"{str(shape) + ' ' + case:34s} {r['clnp']:9.3f} {r['composition']:12.3f} "
              f"{r['torch']:9.3f} {r['composition'] / r['clnp']:9.2f}x "
              f"{r['torch'] / r['clnp']:10.2f}x")



def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=200)
    args = ap.parse_args()
    import torch
    torch.set_num_threads(os.cpu_count() or 1)
    dev = clnp.default_device()
    print(f"device: {dev.key} ({dev.name}); torch {torch.__version__} on cpu "
          f"({torch.get_num_threads()} threads); load average {os.getloadavg()[0]:.2f}; "
          f"median of {args.reps}")
    print(f"{'case':34s} {'clnp ms':>9s} {'composition':>12s} {'torch ms':>9s} "
          f"{'comp/clnp':>10s} {'torch/clnp':>11s}")
    rng = np.random.default_rng(0)
    for shape in SHAPES:
        bench_shape(shape, rng, args.reps)

if __name__ == "__main__":
    main()
