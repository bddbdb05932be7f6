"""Assignment through index arrays with repeated indices keeps the last value in C order, as
NumPy does, on every device and through every path that scatters: ``a[idx] = v`` (one or
several index arrays, with slices, into strided views), ``put``, ``ndarray.put``,
``a.flat[idx] = v`` and ``put_along_axis``. Both of the scatter's ways of choosing each
target's winner (a table of positions, or a stable sort of the offsets when the targets span
far more than the index count) are compared with NumPy. Oclgrind's race check over the same
paths is tests/robust/test_oclgrind.py::test_scatter_repeated_indices_race_free.
"""
from __future__ import annotations

import numpy as np
import pytest

import clnp
from clnp._routines import scatter


@pytest.fixture(params=["table", "sorted"])
def winner_path(request, monkeypatch):
    if request.param == "sorted":
        monkeypatch.setattr(scatter, "SCATTER_TABLE_FLOOR", 0)
        monkeypatch.setattr(scatter, "SCATTER_TABLE_RATIO", 0)
    return request.param


def _idx(rng, n, size):
    """``n`` indices into ``size`` targets, most of them repeated many times."""
    return rng.integers(0, max(1, size // 4), n)


def test_put_last_wins_issue_example(device, winner_path):
    a = clnp.zeros(3, dtype=clnp.int64, device=device)
    clnp.put(a, [0, 0, 1], [5, 6, 7])
    h = np.zeros(3, np.int64)
    np.put(h, [0, 0, 1], [5, 6, 7])
    np.testing.assert_array_equal(a.to_numpy(), h)
    assert a.to_numpy()[0] == 6


@pytest.mark.parametrize("dtype", ["bool", "int8", "int32", "float32", "float64", "complex128"])
def test_setitem_1d(device, winner_path, dtype):
    if not device.supports(np.dtype(dtype)):
        pytest.skip(f"{device} has no {dtype}")
    rng = np.random.default_rng(1)
    h = (rng.standard_normal(40) * 5).astype(dtype)
    idx = _idx(rng, 300, 40)
    v = (rng.standard_normal(300) * 5 + 1).astype(dtype)
    x = clnp.asarray(h, device=device)
    x[clnp.asarray(idx, device=device)] = clnp.asarray(v, device=device)
    h[idx] = v
    np.testing.assert_array_equal(x.to_numpy(), h)


def test_setitem_rows_slices_and_views(device, winner_path):
    rng = np.random.default_rng(2)
    h = rng.standard_normal((12, 5, 3)).astype(np.float32)
    x = clnp.asarray(h, device=device)
    i, j = _idx(rng, 60, 12), rng.integers(0, 2, 60)
    keys = [lambda I, J: I,                                  # rows of 5x3
            lambda I, J: (I, J),                             # two arrays
            lambda I, J: (slice(None), J),                   # an array after a slice
            lambda I, J: (I, slice(1, 4), J)]                # arrays around a slice
    for key in keys:
        shape = h[key(i, j)].shape
        v = rng.standard_normal(shape).astype(np.float32)
        x[key(clnp.asarray(i, device=device), clnp.asarray(j, device=device))] = \
            clnp.asarray(v, device=device)
        h[key(i, j)] = v
        np.testing.assert_array_equal(x.to_numpy(), h)
    # a reversed, strided view of the target (negative offsets into its buffer)
    xv, hv = x[::-2], h[::-2]
    k = _idx(rng, 40, 6)
    v = rng.standard_normal((40, 5, 3)).astype(np.float32)
    xv[clnp.asarray(k, device=device)] = clnp.asarray(v, device=device)
    hv[k] = v
    np.testing.assert_array_equal(x.to_numpy(), h)


def test_setitem_scalar_and_broadcast_value(device, winner_path):
    h = np.zeros((6, 4), np.int32)
    x = clnp.asarray(h, device=device)
    idx = np.array([5, 1, 5, 5, 1])
    row = np.array([1, 2, 3, 4], np.int32)
    x[clnp.asarray(idx, device=device)] = clnp.asarray(row, device=device)
    h[idx] = row
    x[clnp.asarray(idx[::-1], device=device), 2] = 9
    h[idx[::-1], 2] = 9
    np.testing.assert_array_equal(x.to_numpy(), h)


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_put_and_method(device, winner_path, mode):
    rng = np.random.default_rng(3)
    h = np.arange(20, dtype=np.float64 if device.supports(np.dtype("float64")) else np.float32)
    x = clnp.asarray(h, device=device)
    idx = rng.integers(-60, 60, 200) if mode != "raise" else rng.integers(-20, 20, 200)
    v = rng.standard_normal(7).astype(h.dtype)
    clnp.put(x, clnp.asarray(idx, device=device), clnp.asarray(v, device=device), mode=mode)
    np.put(h, idx, v, mode=mode)
    np.testing.assert_array_equal(x.to_numpy(), h)
    x.put(idx[::-1], v * 2, mode=mode)
    h.put(idx[::-1], v * 2, mode=mode)
    np.testing.assert_array_equal(x.to_numpy(), h)


def test_flat_assignment(device, winner_path):
    rng = np.random.default_rng(4)
    h = rng.integers(0, 100, (4, 6)).astype(np.int64)
    x = clnp.asarray(h, device=device)
    idx = _idx(rng, 90, 24)
    v = np.arange(90, dtype=np.int64)
    x.flat[clnp.asarray(idx, device=device)] = clnp.asarray(v, device=device)
    h.flat[idx] = v
    np.testing.assert_array_equal(x.to_numpy(), h)
    # a non-contiguous array (written through a flat copy)
    xt, ht = x.T, h.T
    xt.flat[clnp.asarray(idx, device=device)] = clnp.asarray(v[::-1].copy(), device=device)
    ht.flat[idx] = v[::-1]
    np.testing.assert_array_equal(x.to_numpy(), h)


def test_put_along_axis(device, winner_path):
    rng = np.random.default_rng(5)
    h = rng.standard_normal((5, 7)).astype(np.float32)
    x = clnp.asarray(h, device=device)
    ia = rng.integers(0, 2, (5, 9))
    va = rng.standard_normal((5, 9)).astype(np.float32)
    clnp.put_along_axis(x, clnp.asarray(ia, device=device), clnp.asarray(va, device=device),
                        axis=1)
    np.put_along_axis(h, ia, va, axis=1)
    np.testing.assert_array_equal(x.to_numpy(), h)
    ib = rng.integers(0, 3, 30)
    vb = rng.standard_normal(30).astype(np.float32)
    clnp.put_along_axis(x, clnp.asarray(ib, device=device), clnp.asarray(vb, device=device),
                        axis=None)
    np.put_along_axis(h, ib, vb, axis=None)
    np.testing.assert_array_equal(x.to_numpy(), h)
