"""clnp_grad.jit row kernels: reductions over the trailing axes and the elementwise code
around them in one kernel (clnp_grad/_jit/rows.py, rowcodegen.py), against NumPy and eager
clnp, in every layout: ``vector`` (the CPU default), ``serial`` (scalar, one work-item per
row) and ``group`` (the GPU layout, one work-group per row), forced on whatever device runs."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad as cg
from clnp_grad._jit import executable

# the fusion groups' kernels: small steps would be one whole-step kernel
pytestmark = pytest.mark.usefixtures("general_path")

LAYOUTS = [None, "serial", "group"]


@pytest.fixture(params=LAYOUTS, ids=["auto", "serial", "group"])
def layout(request, monkeypatch):
    monkeypatch.setattr(executable, "ROW_LAYOUT", request.param)
    return request.param


def _np(x):
    return clnp.asnumpy(x)


def _softmax(x, keepdims=True):
    if keepdims:
        m = clnp.max(x, axis=-1, keepdims=True)
        e = clnp.exp(x - m)
        return e / clnp.sum(e, axis=-1, keepdims=True)
    m = clnp.max(x, axis=-1)
    e = clnp.exp(x - m[..., None])
    return e / clnp.sum(e, axis=-1)[..., None]


def _layernorm(x, w, b):
    mu = clnp.mean(x, axis=-1, keepdims=True)
    d = x - mu
    var = clnp.mean(d * d, axis=-1, keepdims=True)
    return d / clnp.sqrt(var + 1e-5) * w + b


def _logsumexp(x):
    m = clnp.max(x, axis=-1, keepdims=True)
    return clnp.log(clnp.sum(clnp.exp(x - m), axis=-1)) + m[..., 0]


def np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def np_layernorm(x, w, b):
    d = x - x.mean(-1, keepdims=True)
    return d / np.sqrt((d * d).mean(-1, keepdims=True) + 1e-5) * w + b


def np_logsumexp(x):
    m = x.max(-1, keepdims=True)
    return np.log(np.exp(x - m).sum(-1)) + m[..., 0]


def _dtypes(device):
    return [np.float32] + ([np.float64] if device.has_fp64 else [])


def _tol(d):
    return {"rtol": 2e-5, "atol": 2e-6} if d == np.float32 else {"rtol": 1e-12, "atol": 1e-13}


# rows not a multiple of the vector width, one row, many short rows, a 3-d batch
SHAPES = [(37, 130), (1, 7), (1000, 3), (3, 5, 33)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_forward_one_kernel_matches_numpy(device, layout, shape):
    for d in _dtypes(device):
        rng = np.random.default_rng(sum(shape))
        xs = (rng.standard_normal(shape) * 3).astype(d)
        ws = rng.standard_normal(shape[-1:]).astype(d)
        bs = rng.standard_normal(shape[-1:]).astype(d)
        x, w, b = (clnp.asarray(a, device=device) for a in (xs, ws, bs))
        for f, args, ref in ((_softmax, (x,), np_softmax(xs)),
                             (lambda x: _softmax(x, keepdims=False), (x,), np_softmax(xs)),
                             (_layernorm, (x, w, b), np_layernorm(xs, ws, bs)),
                             (_logsumexp, (x,), np_logsumexp(xs))):
            jf = cg.jit(f)
            got = jf(*args)
            assert got.dtype == d and got.shape == ref.shape
            np.testing.assert_allclose(_np(got), ref, **_tol(d))
            np.testing.assert_allclose(_np(jf(*args)), ref, **_tol(d))     # replayed
            assert len(jf.lower(*args).kernel_sources()) == 1


def test_new_data_and_weak_scalars_rebind(device, layout):
    xs = np.random.default_rng(0).standard_normal((20, 50)).astype(np.float32)
    jf = cg.jit(lambda x, t: _softmax(x * t))
    x = clnp.asarray(xs, device=device)
    for t, data in ((1.0, xs), (0.25, xs[::-1].copy()), (3.0, xs * 2)):
        got = jf(clnp.asarray(data, device=device), t)
        np.testing.assert_allclose(_np(got), np_softmax(data * np.float32(t)), rtol=2e-5,
                                   atol=2e-6)
    assert len(jf._cache) == 1 and len(jf.lower(x, 1.0).kernel_sources()) == 1


def test_reduction_results_and_rows_as_outputs(device, layout):
    xs = np.random.default_rng(1).standard_normal((33, 70)).astype(np.float32)
    x = clnp.asarray(xs, device=device)

    def f(x):
        m = clnp.max(x, axis=-1, keepdims=True)
        e = clnp.exp(x - m)
        s = clnp.sum(e, axis=-1)
        return e / s[:, None], m, s, clnp.sum(e, axis=0)    # the last: read outside
    jf = cg.jit(f)
    y, m, s, c = jf(x)
    e = np.exp(xs - xs.max(-1, keepdims=True))
    np.testing.assert_allclose(_np(y), e / e.sum(-1, keepdims=True), rtol=2e-5, atol=2e-6)
    np.testing.assert_array_equal(_np(m), xs.max(-1, keepdims=True))
    np.testing.assert_allclose(_np(s), e.sum(-1), rtol=2e-5)
    np.testing.assert_allclose(_np(c), e.sum(0), rtol=2e-5)
    # the row kernel, plus the column sum of its stored exp
    assert len(jf.lower(x).kernel_sources()) == 2


def test_not_fused_where_illegal(device, layout):
    """A per-row value read along the row (square input, no keepdims), a consumer needing a
    value computed from the row group by an outside step (a cycle), NaN rows, integers, a
    strided argument, and few long rows (split across work-items instead)."""
    xs = np.random.default_rng(2).standard_normal((9, 9)).astype(np.float32)
    x = clnp.asarray(xs, device=device)
    jf = cg.jit(lambda x: x - clnp.max(x, axis=1))             # broadcast along the row
    np.testing.assert_allclose(_np(jf(x)), xs - xs.max(1), rtol=1e-6)

    def g(x):
        m = clnp.max(x, axis=1, keepdims=True)
        z = clnp.sum(x - m, axis=0)                            # an outside reduction
        return clnp.exp(x - m) + z
    np.testing.assert_allclose(_np(cg.jit(g)(x)), np.exp(xs - xs.max(1, keepdims=True)) +
                               (xs - xs.max(1, keepdims=True)).sum(0), rtol=2e-5, atol=2e-5)

    xn = xs.copy()
    xn[3, 4] = np.nan
    got = _np(cg.jit(_softmax)(clnp.asarray(xn, device=device)))
    with np.errstate(invalid="ignore"):
        ref = np_softmax(xn)
    np.testing.assert_allclose(got, ref, rtol=2e-5, atol=2e-6)
    assert np.isnan(got[3]).all() and not np.isnan(np.delete(got, 3, 0)).any()

    xi = np.arange(-40, 41, dtype=np.int32).reshape(9, 9) * 7
    ji = cg.jit(lambda x: (x - clnp.max(x, axis=1, keepdims=True)) *
                clnp.sum(x, axis=1, keepdims=True))
    np.testing.assert_array_equal(_np(ji(clnp.asarray(xi, device=device))),
                                  (xi - xi.max(1, keepdims=True)) * xi.sum(1, keepdims=True))

    big = np.random.default_rng(3).standard_normal((40, 30)).astype(np.float32)
    xt = clnp.asarray(big, device=device).T                   # rows of stride 30
    np.testing.assert_allclose(_np(cg.jit(_softmax)(xt)), np_softmax(big.T), rtol=2e-5,
                               atol=2e-6)

    long = np.random.default_rng(4).standard_normal((2, 20000)).astype(np.float32)
    jl = cg.jit(_softmax)
    np.testing.assert_allclose(_np(jl(clnp.asarray(long, device=device))), np_softmax(long),
                               rtol=2e-5, atol=1e-8)


def test_two_reduced_axes_and_strided_broadcast(device, layout):
    """Reductions over the last two axes with an operand varying along only one of them
    (two reduced dims that do not collapse)."""
    xs = np.random.default_rng(5).standard_normal((4, 6, 10)).astype(np.float32)
    ws = np.random.default_rng(6).standard_normal((6, 1)).astype(np.float32)
    x, w = clnp.asarray(xs, device=device), clnp.asarray(ws, device=device)

    def f(x, w):
        m = clnp.max(x * w, axis=(1, 2), keepdims=True)
        return x * w - m + clnp.mean(x, axis=(1, 2), keepdims=True)
    jf = cg.jit(f)
    ref = xs * ws - (xs * ws).max((1, 2), keepdims=True) + xs.mean((1, 2), keepdims=True)
    np.testing.assert_allclose(_np(jf(x, w)), ref, rtol=2e-5, atol=2e-6)
    assert len(jf.lower(x, w).kernel_sources()) == 1


def test_gradients_through_row_kernels(device, layout):
    xs = np.random.default_rng(7).standard_normal((21, 45)).astype(np.float32)
    ws = np.random.default_rng(8).standard_normal((21, 45)).astype(np.float32)
    x, w = clnp.asarray(xs, device=device), clnp.asarray(ws, device=device)
    g1 = clnp.asarray(np.ones(45, np.float32), device=device)
    g0 = clnp.asarray(np.zeros(45, np.float32), device=device)
    for f in (_softmax, lambda x: _layernorm(x, g1, g0), _logsumexp):
        wf = w if f is not _logsumexp else w[:, 0]
        vg = cg.value_and_grad(lambda x, f=f, wf=wf: clnp.sum(f(x) * wf))
        v_ref, g_ref = vg(x)
        jvg = cg.jit(vg)
        v, g = jvg(x)
        assert abs(float(v) - float(v_ref)) <= 1e-4 * max(1.0, abs(float(v_ref)))
        np.testing.assert_allclose(_np(g), _np(g_ref), rtol=2e-4, atol=2e-5)


def test_wider_reductions_finish_the_rows_parts(device, layout):
    """A reduction over the rows and some kept axes too (a loss) is reduced per row in the
    row kernel, then over the kept axes by one small reduction."""
    for d in _dtypes(device):
        xs = np.random.default_rng(9).standard_normal((3, 5, 33)).astype(d)
        x = clnp.asarray(xs, device=device)

        def f(x):
            y = _softmax(x)
            return (clnp.sum(y * x), clnp.max(y * x, axis=(0, 2)), clnp.mean(x * y, axis=(1, 2)),
                    y)
        jf = cg.jit(f)
        got = jf(x)
        got = jf(x)
        y = np_softmax(xs)
        refs = ((y * xs).sum(), (y * xs).max((0, 2)), (xs * y).mean((1, 2)), y)
        for a, r in zip(got, refs):
            assert a.shape == r.shape and a.dtype == d
            np.testing.assert_allclose(_np(a), r, **_tol(d))
        # the row kernel, a finishing reduction per wider result, the mean's division
        assert len(jf.lower(x).kernel_sources()) == 5


def test_reductions_of_per_row_values(device, layout):
    """A reduction over rows of a per-row value (a loss over logsumexp, weighted by an array
    of the kept shape, read per row) joins as the per-row values and a reduction after."""
    xs = np.random.default_rng(10).standard_normal((4, 6, 19)).astype(np.float32)
    vs = np.random.default_rng(11).standard_normal((4, 6)).astype(np.float32)
    x, v = clnp.asarray(xs, device=device), clnp.asarray(vs, device=device)

    def f(x, v):
        l = _logsumexp(x) * v
        return clnp.sum(l), clnp.max(l, axis=0), l
    jf = cg.jit(f)
    jf(x, v)
    s, m, l = jf(x, v)
    ref = np_logsumexp(xs) * vs
    np.testing.assert_allclose(_np(l), ref, rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(_np(s), ref.sum(), rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(_np(m), ref.max(0), rtol=2e-5, atol=2e-6)
    assert len(jf.lower(x, v).kernel_sources()) == 3


def test_masks_and_ties(device, layout):
    """Comparisons converted to numbers (the max's gradient, tie counts) walk the rows in
    vectors as 0/1 lanes; rows with tied maxima make them matter."""
    xs = np.round(np.random.default_rng(12).standard_normal((23, 77)) * 1.5).astype(np.float32)
    ws = np.random.default_rng(13).standard_normal((23, 77)).astype(np.float32)
    x, w = clnp.asarray(xs, device=device), clnp.asarray(ws, device=device)

    def ties(x):
        m = clnp.max(x, axis=-1, keepdims=True)
        return clnp.sum(clnp.astype(x == m, clnp.float32), axis=-1), \
            clnp.astype(x >= m - 1, clnp.int32) * 3 + clnp.astype(x < m, clnp.int32)
    jt = cg.jit(ties)
    n, k = jt(x)
    m = xs.max(-1, keepdims=True)
    assert (xs == m).sum(-1).max() > 1          # the data has tied maxima
    np.testing.assert_array_equal(_np(n), (xs == m).sum(-1).astype(np.float32))
    np.testing.assert_array_equal(_np(k), (xs >= m - 1).astype(np.int32) * 3 + (xs < m))
    assert len(jt.lower(x).kernel_sources()) == 1

    loss = lambda x: clnp.sum((x - clnp.max(x, axis=-1, keepdims=True)) ** 2 * w)
    vg = cg.value_and_grad(loss)
    v_ref, g_ref = vg(x)
    v, g = cg.jit(vg)(x)
    d = xs - m
    mask = (xs == m) / (xs == m).sum(-1, keepdims=True)
    g_np = 2 * d * ws - mask * (2 * d * ws).sum(-1, keepdims=True)
    np.testing.assert_allclose(_np(g_ref), g_np, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(_np(g), g_np, rtol=2e-5, atol=2e-5)
    assert abs(float(v) - float(v_ref)) <= 1e-4 * abs(float(v_ref))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16bit_rows_take_one_kernel(device, layout, dtype):
    """float16 and bfloat16 rows are float lanes in the row kernel (loads and stores
    convert): softmax, layernorm and logsumexp are one kernel each, within a 16-bit ulp of
    eager clnp, which rounds after every op as NumPy (ml_dtypes) does; their gradients too."""
    dt16 = clnp.float16 if dtype == "float16" else clnp.bfloat16
    tol = 2e-3 if dtype == "float16" else 1.6e-2
    xs = np.random.default_rng(14).standard_normal((6, 40)).astype(np.float32)
    x = clnp.astype(clnp.asarray(xs, device=device), dt16)
    w = clnp.astype(clnp.asarray(np.linspace(0.5, 1.5, 40, dtype=np.float32), device=device),
                    dt16)
    b = clnp.astype(clnp.asarray(np.linspace(-1, 1, 40, dtype=np.float32), device=device),
                    dt16)
    for f, args in ((_softmax, (x,)), (_layernorm, (x, w, b)), (_logsumexp, (x,))):
        jf = cg.jit(f)
        got = jf(*args)
        assert got.dtype == dt16
        np.testing.assert_allclose(_np(got).astype(np.float32),
                                   _np(f(*args)).astype(np.float32), rtol=tol, atol=tol)
        assert len(jf.lower(*args).kernel_sources()) == 1
    loss = lambda x: clnp.sum(clnp.astype(_softmax(x) * w, clnp.float32) ** 2)
    g_ref = _np(cg.grad(loss)(x)).astype(np.float32)
    g = _np(cg.jit(cg.grad(loss))(x)).astype(np.float32)
    np.testing.assert_allclose(g, g_ref, rtol=4 * tol, atol=4 * tol * np.abs(g_ref).max())


def test_fallbacks_run_the_absorbed_groups(device, layout):
    """Where the row kernel does not apply (complex values, empty rows or no rows) the
    absorbed groups run as their own kernels, with the same results."""
    rng = np.random.default_rng(14)
    zs = (rng.standard_normal((6, 40)) + 1j * rng.standard_normal((6, 40))).astype(np.complex64)
    z = clnp.asarray(zs, device=device)
    jz = cg.jit(lambda z: z - clnp.sum(z, axis=-1, keepdims=True) / z.shape[-1])
    np.testing.assert_allclose(_np(jz(z)), zs - zs.mean(-1, keepdims=True), rtol=1e-5,
                               atol=1e-5)
    assert len(jz.lower(z).kernel_sources()) > 1
    for shape in ((0, 5), (3, 0)):
        e = clnp.asarray(np.zeros(shape, np.float32), device=device)
        jl = cg.jit(lambda x: clnp.sum(x, axis=-1) - clnp.max(clnp.exp(x) + 1, axis=-1,
                                                               initial=0.0))
        ref = np.zeros(shape, np.float32).sum(-1) - np.max(np.exp(np.zeros(shape)) + 1, axis=-1,
                                                             initial=0.0)
        np.testing.assert_array_equal(_np(jl(e)), ref.astype(np.float32))


def test_later_pass_reads_back_a_stored_value(device, layout, rng):
    """Softmax keeping ``exp(x - m)`` (its derivative's operand): the pass that sums the
    exponentials stores them, and the pass that divides reads them back instead of computing
    exp again (rowcodegen ``stored_before``); both outputs equal NumPy's in every layout."""
    def f(x):
        m = clnp.max(x, axis=-1, keepdims=True)
        e = clnp.exp(x - m)
        return e, e / clnp.sum(e, axis=-1, keepdims=True)
    xh = rng.standard_normal((6, 37)).astype(np.float32)
    x = clnp.asarray(xh, device=device)
    jf = cg.jit(f)
    e, s = jf(x)
    eh = np.exp(xh - xh.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(_np(e), eh, rtol=1e-6)
    np.testing.assert_allclose(_np(s), eh / eh.sum(axis=-1, keepdims=True), rtol=2e-6)
    (src,) = jf.lower(x).kernel_sources()
    # the division's pass: the last walk over the row, after the sum's result u<k>
    last_walk = src[src.rindex("long r = "):]
    assert " / " in last_walk and "exp" not in last_walk
    assert src.count("exp") >= 1
