"""Products in the host's BLAS (``clnp._routines.host_blas``) against clnp's GEMM kernel, on a
device that shares host memory (PoCL's CPU device), with NumPy's and ``jax.jit``'s products
on the same cores: where BLAS in place wins, which sets ``host_blas.MIN_WORK``.

    python bench/bench_host_blas.py [--calls 20] [--csv bench/results/host-blas-pocl-cpu.csv]

Each row is one float32 product ``(M x K) @ (K x N)``: the shapes of the MLP step of
``bench/bench_jit.py`` (784-1024-1024-10, batch 256, forward and backward), of the character
transformer's and the digits CNN's products, and squares. Per product, in turn in each of 7
rounds: clnp with the product forced into BLAS (``host_blas.FORCE = True``), clnp with it
forced onto the kernel (``FORCE = False``), ``numpy.matmul`` into a preallocated output, and
``jax.jit(jnp.matmul)``. A round makes ``--calls`` products back to back (clnp's calls are
not drained between products: a host product waits for the queue where a kernel would be
queued behind it, as inside a training step) and drains at the end; medians of the rounds.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import clnp  # noqa: E402
from bench_core import per_call_rounds, write_csv  # noqa: E402
from clnp._routines import host_blas  # noqa: E402

# (what, M, K, N, lhs transposed, rhs transposed)
SHAPES = [
    ("square", 64, 64, 64, False, False),
    ("square", 128, 128, 128, False, False),
    ("MLP fwd3 h2@W3", 256, 1024, 10, False, False),
    ("MLP dW3 h2.T@dz", 1024, 256, 10, True, False),
    ("MLP dh2 dz@W3.T", 256, 10, 1024, False, True),
    ("square", 192, 192, 192, False, False),
    ("square", 256, 256, 256, False, False),
    ("transformer qkv", 2048, 128, 384, False, False),
    ("transformer mlp", 2048, 128, 512, False, False),
    ("square", 384, 384, 384, False, False),
    ("MLP fwd1 x@W1", 256, 784, 1024, False, False),
    ("MLP dW1 x.T@dh", 784, 256, 1024, True, False),
    ("MLP fwd2 h1@W2", 256, 1024, 1024, False, False),
    ("MLP dh1 dh@W2.T", 256, 1024, 1024, False, True),
    ("square", 1024, 1024, 1024, False, False),
]


def _clnp(a: np.ndarray, b: np.ndarray, ta: bool, tb: bool, force: bool) -> Callable:
    """The clnp product, planned with ``host_blas.FORCE = force`` (plans are per geometry
    and per FORCE, so the two stay apart)."""
    A, B = clnp.asarray(a), clnp.asarray(b)
    A, B = (A.T if ta else A), (B.T if tb else B)

    def call() -> Any:
        old = host_blas.FORCE
        host_blas.FORCE = force
        try:
            return clnp.matmul(A, B)
        finally:
            host_blas.FORCE = old
    return call


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--csv", default=None)
    a = ap.parse_args()
    dev = clnp.default_device()
    if not dev.shares_host_memory:
        sys.exit(f"{dev} does not share host memory: products there never run in BLAS")
    import jax
    import jax.numpy as jnp
    jmm = jax.jit(jnp.matmul)
    rng = np.random.default_rng(0)
    rows = []
    for what, M, K, N, ta, tb in SHAPES:
        ah = rng.standard_normal((K, M) if ta else (M, K)).astype(np.float32)
        bh = rng.standard_normal((N, K) if tb else (K, N)).astype(np.float32)
        an, bn = (ah.T if ta else ah), (bh.T if tb else bh)
        out = np.empty((M, N), np.float32)
        ja, jb = jnp.asarray(an), jnp.asarray(bn)
        host, kernel = _clnp(ah, bh, ta, tb, True), _clnp(ah, bh, ta, tb, False)
        ref = an @ bn
        for fn in (host, kernel):
            np.testing.assert_allclose(np.asarray(fn()), ref, rtol=1e-4,
                                       atol=1e-4 * float(np.abs(ref).max()))
        drain = lambda _: dev.synchronize()  # noqa: E731
        med = per_call_rounds([
            ("host", host, drain), ("kernel", kernel, drain),
            ("numpy", lambda: np.matmul(an, bn, out=out), lambda _: None),
            ("jax", lambda: jmm(ja, jb), jax.block_until_ready)], a.calls)
        row = {"device": str(dev), "product": what, "M": M, "K": K, "N": N,
               "work": M * K * N, "host_us": round(med["host"], 1),
               "kernel_us": round(med["kernel"], 1), "numpy_us": round(med["numpy"], 1),
               "jax_us": round(med["jax"], 1),
               "host_gflops": round(2 * M * K * N / med["host"] / 1e3, 1),
               "kernel_gflops": round(2 * M * K * N / med["kernel"] / 1e3, 1),
               "picked": "host" if M * K * N >= host_blas.MIN_WORK else "kernel"}
        rows.append(row)
        print(row, flush=True)
    write_csv(a.csv or os.path.join(HERE, "results", "host-blas-pocl-cpu.csv"), rows)


if __name__ == "__main__":
    main()
