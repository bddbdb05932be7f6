"""Broadcast elementwise layers, clnp jit beside PyTorch in one run: ``relu(x * p + 0.5)``
with ``p`` a row (``p[j]``, shape (n,)) and a column (``s[i]``, shape (n, 1)) of an (n, n)
``x``, in float32, float16 and bfloat16 storage.

    python bench/bench_broadcast.py [--n 4096] [--reps 7]

On CPU devices these are the strided kernels that walk the innermost dim in stretches per
work-item; a column operand (innermost stride 0) makes the stretch compute in vectors, a
splat of one load (``clnp._core.eager._unit_pattern``). Times are medians of ``--reps`` runs
after warm-up, with ``clnp.synchronize()`` inside each timed region; results are checked
against NumPy before anything is timed. The ratio column is PyTorch time / clnp time.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import clnp as xp  # noqa: E402
import clnp_grad as cg  # noqa: E402

from bench_core import timeit  # noqa: E402

try:  # optional peer; never installed by this script
    import torch  # type: ignore
except Exception:  # pragma: no cover
    torch = None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
    n, reps = args.n, args.reps
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    f = cg.jit(lambda x, p: xp.maximum(x * p + 0.5, 0))
    print(f"relu(x * p + 0.5), x ({n}, {n}), on {xp.default_device()}")
    for dt in ("float32", "float16", "bfloat16"):
        x = xp.asarray(a).astype(dt)
        for name, pb in (("row p[j]", b), ("column s[i]", b[:, None])):
            p = xp.asarray(pb).astype(dt)
            want = np.maximum(np.asarray(x).astype(np.float32) *
                              np.asarray(p).astype(np.float32) + 0.5, 0)
            np.testing.assert_allclose(np.asarray(f(x, p)).astype(np.float32), want,
                                       rtol=1e-2, atol=1e-2)
            ms = 1e3 * timeit(lambda: f(x, p), xp.synchronize, reps)
            line = f"  {name:<12} {dt:<9} clnp jit {ms:9.3f} ms"
            if torch is not None:
                tdt = getattr(torch, dt)
                tx = torch.from_numpy(a).to(tdt)
                tp = torch.from_numpy(np.ascontiguousarray(pb)).to(tdt)
                tms = 1e3 * timeit(lambda: torch.relu(tx * tp + 0.5), lambda: None, reps)
                line += f"   torch cpu {tms:9.3f} ms   torch/clnp = {tms / ms:.2f}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
