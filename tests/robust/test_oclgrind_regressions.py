"""Regression tests for the Oclgrind findings (docs/robustness.md), on every device.

The races themselves are caught by ``test_oclgrind.py`` (its fast subset, run in CI, covers
both fixed kernels: ``indexing`` in both layouts, ``linalg`` in the GPU layouts); this test
holds the results of the rewritten compare-and-swap loop on real devices. The linalg kernels'
results in the GPU layouts are held by tests/test_linalg.py::test_work_group_variant.
"""
from __future__ import annotations

import numpy as np
import pytest

import clnp


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_scatter_add_cas_from_any_start(device, dtype):
    """The compare-and-swap add starts from a guess (the bits of 0) and must reach NumPy's
    sums whatever the target holds: non-zero, -0.0, inf, NaN, and repeated indices."""
    if not device.supports(np.dtype(dtype)):
        pytest.skip("no fp64")
    target = np.array([0.0, -0.0, 1.5, np.inf, np.nan, -2.0, 0.0], dtype=dtype)
    idx = np.array([0, 1, 1, 2, 3, 4, 5, 5, 5, 2, 0], np.int64)
    vals = np.arange(1, 12, dtype=dtype) * (1 if dtype.startswith("f") else (1 - 0.5j))
    x = clnp.asarray(target, device=device)
    clnp.add.at(x, clnp.asarray(idx, device=device), clnp.asarray(vals, device=device))
    want = target.copy()
    np.add.at(want, idx, vals)
    np.testing.assert_allclose(x.to_numpy(), want, rtol=1e-6)
    # -0.0 + 0.0 stays a signed zero as NumPy computes it
    z = clnp.asarray(np.array([-0.0], dtype=dtype), device=device)
    clnp.add.at(z, clnp.asarray(np.array([0, 0], np.int64), device=device),
                clnp.asarray(np.array([-0.0, -0.0], dtype=dtype), device=device))
    assert np.signbit(z.to_numpy().real[0])
