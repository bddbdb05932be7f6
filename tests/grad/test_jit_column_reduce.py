"""clnp_grad.jit: reductions over the outer axis of a row-major array (column sums such as a
bias gradient), which CPU devices run with several neighbouring outputs per work-item
(``FusedReduceSpec.kvec``) and GPUs with one item per output and part, numbered part-major
(``FusedReduceSpec.cols``; the ``gpu`` layout forces it on any device): whole and ragged
output counts, side outputs, max, split walks, integer and bool values, against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad as cg
from clnp_grad._jit import executable


@pytest.fixture(autouse=True, params=[None, "gpu"], ids=["auto", "gpu"])
def layout(request, monkeypatch):
    monkeypatch.setattr(executable, "COLUMN_LAYOUT", request.param)
    return request.param


def _np(x):
    return clnp.asnumpy(x)


def _sources(jf, *args):
    return "\n".join(jf.lower(*args).kernel_sources())


@pytest.mark.parametrize("shape", [(256, 1024), (70, 37), (5, 33), (3, 2, 48)])
def test_relu_grad_and_bias_sum(device, shape, layout):
    """The backward of ``relu(a)``: the masked gradient (a side output) and its sum over the
    leading axes, one fused reduction."""
    rng = np.random.default_rng(0)
    a_h = rng.standard_normal(shape).astype(np.float32)
    a_h[0, :4] = 0.0                      # zeros take the middle branch
    g_h = rng.standard_normal(shape).astype(np.float32)
    a, g = clnp.asarray(a_h, device=device), clnp.asarray(g_h, device=device)
    axes = tuple(range(len(shape) - 1))

    def f(a, g):
        d = g * clnp.where(a > 0, 1.0, clnp.where(a == 0, 0.5, 0.0))
        return d, clnp.sum(d, axis=axes)
    jf = cg.jit(f)
    d, s = jf(a, g)
    mask = np.where(a_h > 0, 1.0, np.where(a_h == 0, 0.5, 0.0)).astype(np.float32)
    np.testing.assert_allclose(_np(d), g_h * mask, rtol=1e-6)
    np.testing.assert_allclose(_np(s), (g_h * mask).sum(axes), rtol=1e-5, atol=1e-5)
    d2, s2 = jf(a, g)          # the bound replay gives the same
    np.testing.assert_array_equal(_np(s2), _np(s))
    if device.is_cpu and shape[-1] >= 32 and layout is None:
        assert "acc0[16]" in _sources(jf, a, g)
    if (layout == "gpu" or not device.is_cpu) and shape[-1] >= 32:
        assert "part = gid / n_out" in _sources(jf, a, g)


def test_column_max_and_mean_together(device):
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((300, 45)).astype(np.float32)
    x = clnp.asarray(xs, device=device)
    jf = cg.jit(lambda x: (clnp.max(x * 2.0, axis=0), clnp.mean(x, axis=0)))
    m, mu = jf(x)
    np.testing.assert_allclose(_np(m), (xs * 2).max(0), rtol=1e-6)
    np.testing.assert_allclose(_np(mu), xs.mean(0), rtol=1e-5, atol=1e-6)


def test_long_columns_split_into_parts(device):
    """Few outputs and a long walk: the walk is split and the partial sums reduced."""
    rng = np.random.default_rng(2)
    xs = rng.standard_normal((20000, 40)).astype(np.float32)
    x = clnp.asarray(xs, device=device)
    jf = cg.jit(lambda x: clnp.sum(x * x, axis=0))
    ref = (xs.astype(np.float64) ** 2).sum(0)
    np.testing.assert_allclose(_np(jf(x)), ref, rtol=1e-4)


def test_integer_and_bool_columns(device):
    rng = np.random.default_rng(3)
    xs = rng.integers(-50, 50, (130, 64)).astype(np.int32)
    x = clnp.asarray(xs, device=device)
    jf = cg.jit(lambda x: (clnp.sum(x * 3, axis=0), clnp.sum(x > 7, axis=0)))
    s, c = jf(x)
    np.testing.assert_array_equal(_np(s), (xs * 3).sum(0))
    np.testing.assert_array_equal(_np(c), (xs > 7).sum(0))


@pytest.mark.parametrize("shape", [(256, 64), (70, 37), (3, 5, 48)])
def test_gelu_backward_walks_on_vectors(device, shape, layout):
    """A GELU's backward and its bias gradient (no bool values in the body): CPU devices walk
    the 16 neighbouring outputs of an item as one vector (``FusedReduceSpec.kmodes``), a
    per-row operand (constant along the kept axis) splatted, the side output stored with one
    vector store; ragged output counts take the last block's overlap. Against NumPy, and the
    replay."""
    rng = np.random.default_rng(7)
    x_h = rng.standard_normal(shape).astype(np.float32)
    g_h = rng.standard_normal(shape).astype(np.float32)
    s_h = rng.standard_normal(shape[:-1] + (1,)).astype(np.float32)
    x, g, sc = (clnp.asarray(v, device=device) for v in (x_h, g_h, s_h))
    axes = tuple(range(len(shape) - 1))

    def f(x, g, sc):
        d = g * (clnp.exp(-(x * x) * 0.5) * 0.3989423 * x + 0.5) * sc
        return d, clnp.sum(d, axis=axes)
    jf = cg.jit(f)
    d_ref = g_h * (np.exp(-(x_h * x_h) * 0.5) * np.float32(0.3989423) * x_h + 0.5) * s_h
    for _ in range(2):
        d, s = jf(x, g, sc)
        np.testing.assert_allclose(_np(d), d_ref, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(_np(s), d_ref.sum(axes), rtol=1e-4, atol=1e-4)
    if device.is_cpu and layout is None and shape[-1] >= 32:
        assert "vstore16(va0, 0, acc0)" in _sources(jf, x, g, sc)


def test_broadcast_operand_along_columns(device):
    """An operand constant along the kept axis (a per-row scale), and a transposed input
    (whose walk is unit-stride: the one-output-per-item layout)."""
    rng = np.random.default_rng(4)
    xs = rng.standard_normal((64, 90)).astype(np.float32)
    ws = rng.standard_normal((64, 1)).astype(np.float32)
    x, w = clnp.asarray(xs, device=device), clnp.asarray(ws, device=device)
    jf = cg.jit(lambda x, w: (clnp.sum(x * w, axis=0), clnp.sum(x.T * 2.0, axis=0)))
    a, b = jf(x, w)
    np.testing.assert_allclose(_np(a), (xs * ws).sum(0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_np(b), (xs.T * 2).sum(0), rtol=1e-5, atol=1e-5)


def test_gpu_partials_finished_in_kernel(device, monkeypatch, layout):
    """GPU layouts (forced on any device as a 132-unit GPU): reductions split into parts
    finish in the same kernel (the last part of each output combines the partials): one
    kernel per fused reduction, right on every call (the counters reset), for column sums with
    a side output, long rows in work-groups, a full sum, max, and integers."""
    monkeypatch.setattr(device, "is_cpu", False)
    monkeypatch.setattr(device, "compute_units", 132)
    rng = np.random.default_rng(5)

    def relu_bias(a, g):
        d = g * (a > 0)
        return d, clnp.sum(d, axis=0)

    def rows(x):
        y = x * 2.0
        return clnp.sum(y, axis=1), clnp.max(y, axis=1)

    def full(x):
        return clnp.sum(clnp.exp(x * 0.01))

    def ints(k):
        return clnp.sum(k * 3, axis=0)
    cases = [(relu_bias, [(256, 1024), (256, 1024)], np.float32,
              lambda a, g: (g * (a > 0), (g * (a > 0)).sum(0))),
             (rows, [(4, 40000)], np.float32, lambda x: ((x * 2).sum(1), (x * 2).max(1))),
             (full, [(100000,)], np.float32, lambda x: np.exp(x * 0.01).sum()),
             (ints, [(3000, 40)], np.int32, lambda k: (k * 3).sum(0))]
    for fn, shapes, dt, ref in cases:
        jf = cg.jit(fn)
        for call in range(4):
            hs = [(rng.standard_normal(s) * 10).astype(dt) for s in shapes]
            args = [clnp.asarray(h, device=device) for h in hs]
            got = jf(*args)
            want = ref(*[h.astype(np.float64) if dt != np.int32 else h for h in hs])
            for g_, w_ in zip(got if isinstance(got, tuple) else (got,),
                              want if isinstance(want, tuple) else (want,)):
                np.testing.assert_allclose(_np(g_), w_, rtol=2e-5, atol=1e-3)
        srcs = jf.lower(*args).kernel_sources()
        assert len(srcs) == 1 and "atomic_inc(&cnt[o])" in srcs[0], (fn.__name__, len(srcs))


@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("op, dtype, axes", [
    ("sum", "float32", (0, 1)), ("sum", "float32", (0,)), ("max", "float32", (1, 2)),
    ("min", "int32", (0, 2)), ("prod", "float64", (2,)), ("any", "bool", (0,)),
    ("all", "bool", (0, 1, 2)), ("sum", "int64", (0, 1, 2))])
def test_lone_reductions(device, monkeypatch, fused, op, dtype, axes, layout):
    """A reduction of an argument, nothing fused into it: the fused reduction (GPUs'
    default, ``executable.LONE_REDUCTIONS_FUSED``) and the eager one (CPUs') agree with
    NumPy."""
    if dtype == "float64" and not device.has_fp64:
        pytest.skip("no float64")
    monkeypatch.setattr(executable, "LONE_REDUCTIONS_FUSED", fused)
    rng = np.random.default_rng(7)
    h = rng.standard_normal((40, 33, 6)) * 3
    h = (h > 0.5) if dtype == "bool" else (np.abs(h) * 0.2 + 0.9 if op == "prod" else h)
    h = h.astype(dtype)
    x = clnp.asarray(h, device=device)
    f = cg.jit(lambda x: getattr(clnp, op)(x, axis=axes))
    want = getattr(np, op)(h, axis=axes)
    for _ in range(3):
        got = _np(f(x))
        if dtype.startswith("float"):
            np.testing.assert_allclose(got, want, rtol=1e-4 if dtype == "float32" else 1e-10)
        else:
            np.testing.assert_array_equal(got, want)
