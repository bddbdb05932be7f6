"""Soak (issue #13 item 3), bounded: a mix of eager operations (22 kinds: elementwise in
three dtypes, reductions, scans, sort, manipulation, basic/boolean/integer indexing and
assignment, GEMM, FFT, random, host transfers) and jitted calls (a fused chain with a
reduction, a GEMM with an epilogue, a gradient) over five shapes, on every device. After a
warm-up round, device memory in use, pooled memory, the kernel, program, FFT-plan, jit and
eager-body caches, live Python objects and resident memory must stay within
``tools/soak.py``'s ``BOUNDS`` of their warm values, and results must still be NumPy's at
every checkpoint.

CI runs 11000 eager operations and 1500 jitted calls per device; ``-m slow`` runs the full
soak, 10^6 and 10^4 (as ``python tools/soak.py --eager 1000000 --jit 10000``, which prints
the figures; docs/robustness.md has them).
"""
from __future__ import annotations

import pytest
from conftest import load_tool

import clnp


@pytest.fixture(scope="module")
def soak():
    return load_tool("soak")


def _flat(soak, device, n_eager, n_jit):
    rows = soak.run(n_eager, n_jit, checkpoints=4, device=device)
    assert [r[0] for r in rows][-1] == f"jit {n_jit}"
    bad = soak.violations(rows)
    assert not bad, "\n".join(bad)


def test_soak_bounded(soak, device):
    """Every measure flat over 11000 eager ops (each kind on each shape 100 times) and 1500
    jitted calls."""
    _flat(soak, device, 11_000, 1500)


@pytest.mark.slow
def test_soak_long(soak, device):
    """Every measure flat over 10^6 eager ops and 10^4 jitted calls (``-m slow``)."""
    _flat(soak, device, 1_000_000, 10_000)


def test_soak_catches_growth(soak, device, monkeypatch):
    """An op that keeps its results (device memory, Python objects) and one that builds a new
    kernel per call (a fresh ElementwiseKernel name) are reported, so the bounds can fail."""
    kept = []
    counter = iter(range(10**9))

    def fresh_kernel(x, i, g):
        k = clnp.ElementwiseKernel("float32 x", "float32 z", "z = x + 1",
                                   f"soak_leak_{next(counter)}")
        return k(x)

    monkeypatch.setattr(soak, "SHAPES", soak.SHAPES[:2])       # few compiles: 2 per shape
    monkeypatch.setattr(soak, "EAGER", soak.EAGER[:2] + [
        ("keep", lambda x, i, g: kept.append(x + 1)), ("fresh_kernel", fresh_kernel)])
    rows = soak.run(8, 0, checkpoints=2, device=device)
    bad = " ".join(soak.violations(rows))
    for measure in ("in_use_B", "kernels", "programs"):
        assert measure + " grew" in bad, bad
    assert len(kept) == 4           # 2 in the warm-up round, 2 after
