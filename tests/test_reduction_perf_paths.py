"""Every work mapping of the reductions and argmax/argmin against NumPy: the ``tile`` mode
(partial last blocks, two-stage), ``column`` with several outputs per item, the split of
several reduced axes around kept ones, multi-dim reduced runs, forced GPU layouts on any
device, NaN propagation, empty axes and keepdims. Also the guard of the vectorised float
sin/cos/tan against huge arguments (a fast path that must stay correct)."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
from clnp._core import eager as _eager
from clnp._routines import search as _eager_search

_OPS = ("sum", "prod", "max", "min")


def _check(got, want, dtype) -> None:
    got = clnp.asnumpy(got)
    assert got.shape == np.shape(want)
    if np.dtype(dtype).kind == "f":
        rtol = 1e-4 if np.dtype(dtype) == np.float32 else 1e-10
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(got, want)


def _data(rng, dtype, shape):
    if np.dtype(dtype).kind == "f":
        # prod of many values stays finite when they lie around 1
        return rng.uniform(0.9, 1.1, shape).astype(dtype) * rng.choice([-1, 1], shape)
    return rng.integers(-3, 4, shape).astype(dtype)


def _dtypes(device):
    return ["float32", "int32"] + (["float64"] if device.has_fp64 else [])


@pytest.fixture
def plans(monkeypatch):
    """Records every reduction plan (mode, group, parts, vec) the planner returns."""
    seen: list[tuple] = []
    orig = _eager.reduce_plan

    def spy(*args, **kwargs):
        p = orig(*args, **kwargs)
        seen.append(p)
        return p
    monkeypatch.setattr(_eager, "reduce_plan", spy)
    return seen


@pytest.mark.parametrize("shape, axis", [((300, 1000), 0), ((7, 20, 130), 1), ((100, 40), 0),
                                         ((1000, 8), 1), ((3000,), 0)])
def test_axis_reductions(device, rng, shape, axis, plans):
    for dtype in _dtypes(device):
        a = _data(rng, dtype, shape)
        x = clnp.asarray(a, device=device)
        for op in _OPS:
            _check(getattr(clnp, op)(x, axis=axis), getattr(np, op)(a, axis=axis), dtype)
    if device.is_cpu and shape == (300, 1000):
        assert ("tile" in {p[0] for p in plans}) and max(p[2] for p in plans) > 1


def test_tile_other_dtypes(device, rng):
    """Accumulators of other sizes in the ``tile`` private array: complex, int8 extremes,
    float16 (accumulated in float32)."""
    c = (rng.standard_normal((70, 300)) + 1j * rng.standard_normal((70, 300)))
    c = (c / np.abs(c)).astype(np.complex64)
    x = clnp.asarray(c, device=device)
    np.testing.assert_allclose(clnp.asnumpy(clnp.sum(x, axis=0)), c.sum(axis=0), rtol=1e-4,
                               atol=1e-4)
    np.testing.assert_allclose(clnp.asnumpy(clnp.prod(x, axis=0)), c.prod(axis=0), rtol=1e-3,
                               atol=1e-3)
    i8 = rng.integers(-128, 128, (90, 500)).astype(np.int8)
    y = clnp.asarray(i8, device=device)
    np.testing.assert_array_equal(clnp.asnumpy(clnp.max(y, axis=0)), i8.max(axis=0))
    np.testing.assert_array_equal(clnp.asnumpy(clnp.sum(y, axis=0)), i8.sum(axis=0))
    h = rng.standard_normal((80, 200)).astype(np.float16)
    z = clnp.asarray(h, device=device)
    np.testing.assert_allclose(clnp.asnumpy(clnp.sum(z, axis=0)).astype(np.float64),
                               h.astype(np.float64).sum(axis=0), rtol=2e-3, atol=2e-2)


def test_any_all_columns(device, rng):
    a = rng.random((200, 333)) < 0.01
    a[:, 5] = True
    x = clnp.asarray(a, device=device)
    for op in ("any", "all"):
        for axis in (0, 1):
            np.testing.assert_array_equal(clnp.asnumpy(getattr(clnp, op)(x, axis=axis)),
                                          getattr(np, op)(a, axis=axis))
    np.testing.assert_array_equal(clnp.asnumpy(clnp.any(x[::-1, ::2], axis=0)),
                                  np.any(a[::-1, ::2], axis=0))


@pytest.mark.parametrize("shape, axes", [((6, 50, 70), (0, 2)), ((3, 4, 5, 66), (0, 2)),
                                         ((3, 4, 5, 66), (1, 3)), ((40, 3, 300), (0, 2)),
                                         ((50, 90, 4), (0, 2))])
def test_several_axes(device, rng, shape, axes):
    a = rng.standard_normal(shape).astype(np.float32)
    x = clnp.asarray(a, device=device)
    for op in ("sum", "max"):
        _check(getattr(clnp, op)(x, axis=axes), getattr(np, op)(a, axis=axes), a.dtype)
        _check(getattr(clnp, op)(x, axis=axes, keepdims=True),
               getattr(np, op)(a, axis=axes, keepdims=True), a.dtype)
    # a strided view: the reduced dims do not collapse into one run
    v, w = x[:, ::2], a[:, ::2]
    _check(clnp.sum(v, axis=tuple(i for i in range(1, v.ndim))),
           np.sum(w, axis=tuple(i for i in range(1, w.ndim))), a.dtype)
    _check(clnp.mean(x, axis=axes), np.mean(a, axis=axes), a.dtype)


def test_nan_propagation(device, rng):
    a = rng.standard_normal((260, 300)).astype(np.float32)
    a[17, 3] = np.nan
    a[200, 299] = np.nan
    x = clnp.asarray(a, device=device)
    for op in ("sum", "max", "min", "prod"):
        for axis in (0, 1, None):
            got = clnp.asnumpy(getattr(clnp, op)(x, axis=axis))
            want = getattr(np, op)(a, axis=axis)
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    flat = np.zeros(300_001, np.float32)
    flat[299_999] = np.nan
    assert np.isnan(float(clnp.max(clnp.asarray(flat, device=device))))
    assert np.isnan(float(clnp.sum(clnp.asarray(flat, device=device))))


def test_large_two_stage(device, rng, plans):
    a = rng.standard_normal((64, 8192)).astype(np.float32)
    x = clnp.asarray(a, device=device)
    _check(clnp.sum(x, axis=1), a.sum(axis=1, dtype=np.float64), a.dtype)
    _check(clnp.sum(x, axis=0), a.sum(axis=0, dtype=np.float64), a.dtype)
    np.testing.assert_allclose(float(clnp.sum(x)), a.sum(dtype=np.float64), rtol=1e-4)
    assert max(p[2] for p in plans) > 1


def test_empty_axes_and_keepdims(device):
    for shape, axis in (((0, 5), 0), ((0, 5), 1), ((4, 0, 3), (0, 1)), ((4, 0, 3), 2)):
        a = np.zeros(shape, np.float32)
        x = clnp.asarray(a, device=device)
        for op in ("sum", "prod"):
            for kd in (False, True):
                got = getattr(clnp, op)(x, axis=axis, keepdims=kd)
                _check(got, getattr(np, op)(a, axis=axis, keepdims=kd), np.float32)
    x = clnp.asarray(np.zeros((0, 5), np.float32), device=device)
    with pytest.raises(ValueError):
        clnp.max(x, axis=0)


@pytest.mark.parametrize("plan", [("group", 16, 3, 1), ("blocked", 16, 2, 1),
                                  ("column", 64, 3, 4), ("column", 64, 2, 1),
                                  ("rows", 16, 2, 3), ("tile", 16, 3, 32)])
def test_forced_plans(device, rng, monkeypatch, plan):
    """Every mode on every device, whichever the planner would pick (tile needs a
    contiguous innermost kept dim: shapes below have one)."""
    mode = plan[0]

    def forced(device, n_out, nred, inner, so, *args, **kwargs):
        if mode == "tile" and so != 1:    # the second stage's partials are [n_out, parts]
            return "column", 64, 1, 1
        return plan
    monkeypatch.setattr(_eager, "reduce_plan", forced)
    a = rng.standard_normal((45, 70)).astype(np.float32)
    x = clnp.asarray(a, device=device)
    _check(clnp.sum(x, axis=0), a.sum(axis=0), a.dtype)
    _check(clnp.max(x, axis=0), a.max(axis=0), a.dtype)
    if plan[0] != "tile":
        b = rng.standard_normal((5, 6, 70)).astype(np.float32)
        y = clnp.asarray(b, device=device)
        _check(clnp.sum(y[:, ::2], axis=(1, 2)), b[:, ::2].sum(axis=(1, 2)), b.dtype)
        _check(clnp.sum(x, axis=1), a.sum(axis=1), a.dtype)


@pytest.mark.parametrize("shape, axis", [((300, 70), 0), ((70, 300), 1), ((3, 260, 20), 1),
                                         ((5000,), None), ((33, 40), 0), ((2, 3001), 1)])
def test_argmax_argmin_layouts(device, rng, shape, axis):
    for dtype in ("float32", "int32", "int8") + (("float64",) if device.has_fp64 else ()):
        a = rng.integers(-5, 6, shape).astype(dtype)    # many ties: the first one wins
        if dtype.startswith("float"):
            a.reshape(-1)[rng.integers(0, a.size, 3)] = np.nan
        x = clnp.asarray(a, device=device)
        for f in ("argmax", "argmin"):
            np.testing.assert_array_equal(clnp.asnumpy(getattr(clnp, f)(x, axis=axis)),
                                          getattr(np, f)(a, axis=axis))


def test_argmax_first_occurrence_across_blocks(device):
    a = np.zeros(1000, np.float32)
    a[[40, 700]] = 5.0                    # a tie in different blocks: the first wins
    a[[41, 999]] = -5.0
    x = clnp.asarray(a, device=device)
    assert int(clnp.argmax(x)) == 40 and int(clnp.argmin(x)) == 41
    a[[900, 950, 3]] = np.nan             # NaN beats every number; the first NaN wins
    x = clnp.asarray(a, device=device)
    assert int(clnp.argmax(x)) == 3 and int(clnp.argmin(x)) == 3
    b = np.full((3, 2000), np.nan, np.float32)
    np.testing.assert_array_equal(clnp.asnumpy(clnp.argmax(clnp.asarray(b, device=device),
                                                            axis=1)), [0, 0, 0])


def test_argmax_shares_the_reduction_planner(device, monkeypatch):
    seen = []
    orig = _eager_search.reduce_plan

    def spy(*args, **kwargs):
        seen.append(orig(*args, **kwargs))
        return seen[-1]
    monkeypatch.setattr(_eager_search, "reduce_plan", spy)
    a = np.arange(600, dtype=np.float32).reshape(100, 6)
    x = clnp.asarray(a, device=device)
    assert clnp.asnumpy(clnp.argmax(x, axis=0)).tolist() == [99] * 6
    assert clnp.asnumpy(clnp.argmin(x.T, axis=1)).tolist() == [0] * 6
    assert len(seen) == 2


def test_vector_trig_with_huge_arguments(device, rng):
    """Huge, infinite and NaN lanes next to ordinary ones in the same vector: PoCL's vector
    sin/cos/tan corrupt the other lanes of such a vector, so the guarded path must take over
    exactly there."""
    a = rng.standard_normal(4099).astype(np.float32)
    idx = rng.integers(0, a.size, 300)
    a[idx] = rng.choice(np.array([1e6, -3e7, 2.0 ** 23 + 1, 1e30, -1e38, np.inf, -np.inf,
                                  np.nan, 1e5, 100001.0], np.float32), 300)
    a[:8] = [1e-30, 1e30, 0.5, -0.5, 1e-30, 3.0, 1e10, 2.0]
    x = clnp.asarray(a, device=device)
    with np.errstate(invalid="ignore"):
        for f in ("sin", "cos", "tan"):
            got = clnp.asnumpy(getattr(clnp, f)(x))
            want = getattr(np, f)(a.astype(np.float64)).astype(np.float32)
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            ok = np.isfinite(want)
            np.testing.assert_allclose(got[ok], want[ok], rtol=1e-6, atol=1e-6)


def test_fused_single_launch(device, rng, monkeypatch):
    """GPU plans reduce in one launch: each work-group stores its partial and the last one
    to finish combines them. Forced on any device (the GPU plans run on CPU drivers too).
    Repeated calls check that the counters are left at zero; equal results, that the combine
    order does not depend on which group finishes last."""
    from clnp._kernels.reduction import ReduceSpec
    monkeypatch.setattr(device, "is_cpu", False)
    a = rng.standard_normal(300_001).astype(np.float32)
    x = clnp.asarray(a, device=device)
    sums = [float(clnp.sum(x)) for _ in range(3)]
    assert sums[0] == sums[1] == sums[2]
    np.testing.assert_allclose(sums[0], a.sum(dtype=np.float64), rtol=1e-4)
    _check(clnp.max(x), a.max(), a.dtype)
    _check(clnp.min(x[1:]), a[1:].min(), a.dtype)
    b = rng.standard_normal((3, 100_000)).astype(np.float32)
    _check(clnp.sum(clnp.asarray(b, device=device), axis=1), b.sum(axis=1, dtype=np.float64),
           b.dtype)
    i = rng.integers(-5, 5, 200_000).astype(np.int32)
    assert int(clnp.sum(clnp.asarray(i, device=device))) == int(i.sum())
    assert any(isinstance(k, ReduceSpec) and k.fused for k in device._kernels)
