"""matmul / tensordot / vecdot / ``@`` and the NumPy spellings (dot, inner, outer, vdot) against
NumPy, on every device: shapes (vector promotion, batch broadcasting, edge sizes of the
kernel's tiles, K = 0), every numeric dtype, operands read in place through their strides,
split-K, the local-memory (GPU) kernel run on any device, and the error contract."""
from __future__ import annotations

import array_api_strict as xps
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import clnp
import clnp._routines.dot_general as _linalg

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "float32", "float64", "complex64", "complex128"]


def _supported(device, dtype):
    return device.supports(np.dtype(dtype))


def _data(rng, shape, dtype):
    d = np.dtype(dtype)
    if d.kind in "iu":
        info = np.iinfo(d)
        # large values: products and sums wrap around
        return rng.integers(max(info.min, -2 ** 40), min(info.max, 2 ** 40), shape,
                            dtype=d, endpoint=True)
    if d.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(d)
    return rng.standard_normal(shape).astype(d)


def _tol(dtype, k):
    d = np.dtype(dtype)
    if d.kind in "iu":
        return 0.0
    eps = {"float16": 1e-3, "float32": 1e-6, "complex64": 1e-6}.get(d.name, 1e-14)
    return 10 * eps * max(k, 1) ** 0.5


def _check(r, expected, k=1, dtype=None):
    """``r`` (clnp) equals the NumPy ``expected`` in shape and dtype, and in value within
    the accumulation error of a length-``k`` product sum."""
    assert isinstance(r, clnp.Array)
    assert r.shape == expected.shape, (r.shape, expected.shape)
    assert r.dtype == (dtype or expected.dtype), (r.dtype, expected.dtype)
    got = r.to_numpy()
    if got.dtype.kind in "iu":
        np.testing.assert_array_equal(got, expected)
    else:
        tol = _tol(got.dtype, k)
        scale = max(1.0, float(np.abs(expected).max())) if expected.size else 1.0
        np.testing.assert_allclose(got.astype(np.complex128), expected.astype(np.complex128),
                                   rtol=tol, atol=tol * scale)


def _ref_matmul(a, b):
    """NumPy's matmul computed in float64/complex128 (int: NumPy's own wrapping product)."""
    if a.dtype.kind in "iu":
        return np.matmul(a, b)
    wide = np.complex128 if np.result_type(a, b).kind == "c" else np.float64
    return np.matmul(a.astype(wide), b.astype(wide)).astype(np.result_type(a, b))


SHAPES = [
    ((5,), (5,)),                     # inner product -> 0-d
    ((5,), (5, 3)),                   # prepended 1 removed
    ((4, 5), (5,)),                   # appended 1 removed
    ((5,), (2, 5, 3)),                # vector against a stack
    ((2, 4, 5), (5,)),
    ((1, 1), (1, 1)),
    ((7, 63), (63, 65)),              # not multiples of any tile size
    ((65, 130), (130, 7)),
    ((130, 1), (1, 130)),             # K = 1: outer product
    ((3, 1, 4, 5), (2, 5, 7)),        # broadcast batch
    ((2, 1, 5, 6), (1, 3, 6, 7)),     # two batch dims that do not merge
    ((2, 3, 2, 4, 5), (3, 1, 5, 6)),  # three batch dims (copied to a merged layout)
    ((2, 3, 4, 5), (5, 6)),           # shared right operand: batch folds into M
    ((3, 0), (0, 4)),                 # K = 0: zeros
    ((0, 3), (3, 4)),                 # empty result
    ((2, 0, 3), (3, 4)),
    ((0,), (0,)),
]


@pytest.mark.parametrize("sa,sb", SHAPES, ids=[f"{a}@{b}" for a, b in SHAPES])
def test_matmul_shapes(device, rng, sa, sb):
    dtype = device.default_float
    a, b = _data(rng, sa, dtype), _data(rng, sb, dtype)
    r = clnp.matmul(clnp.asarray(a, device=device), clnp.asarray(b, device=device))
    _check(r, _ref_matmul(a, b), k=sa[-1])


@pytest.mark.parametrize("dtype", INTS + FLOATS)
def test_matmul_dtypes(device, rng, dtype):
    if not _supported(device, dtype):
        pytest.skip(f"{dtype} not supported on {device}")
    for sa, sb in [((7, 19), (19, 17)), ((3, 2, 9), (9,)), ((33,), (33,))]:
        a, b = _data(rng, sa, dtype), _data(rng, sb, dtype)
        x, y = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
        _check(x @ y, _ref_matmul(a, b), k=sa[-1])


def test_matmul_integer_wraparound(device):
    a = np.full((3, 40), 100, np.int8)
    b = np.full((40, 2), 7, np.int8)
    r = clnp.matmul(clnp.asarray(a, device=device), clnp.asarray(b, device=device))
    np.testing.assert_array_equal(r.to_numpy(), a @ b)     # 28000 wraps to 96 in int8
    u = np.array([[2 ** 63 + 5, 3]], np.uint64)
    v = np.array([[2], [2 ** 62]], np.uint64)
    r = clnp.asarray(u, device=device) @ clnp.asarray(v, device=device)
    np.testing.assert_array_equal(r.to_numpy(), u @ v)


@pytest.mark.parametrize("d1,d2", [("int8", "uint8"), ("int16", "float32"),
                                   ("float32", "float64"), ("float16", "float32"),
                                   ("int64", "complex64"), ("uint32", "int32"),
                                   ("float32", "complex128")])
def test_matmul_promotion(device, rng, d1, d2):
    if not (_supported(device, d1) and _supported(device, d2)):
        pytest.skip("dtype not supported on this device")
    a, b = _data(rng, (4, 6), d1), _data(rng, (6, 3), d2)
    if a.dtype.kind in "iu" and b.dtype.kind not in "iu":
        a = (a % 8).astype(a.dtype)               # exact in the floating result
    if "float16" in (d1, d2):    # not an array_api_strict dtype
        want = np.result_type(a, b)
    else:
        want = xps.matmul(xps.asarray(a), xps.asarray(b)).dtype._np_dtype
    r = clnp.matmul(clnp.asarray(a, device=device), clnp.asarray(b, device=device))
    assert r.dtype == want
    _check(r, _ref_matmul(a, b).astype(r.dtype), k=6)


def _views(x):
    """Views of a 2-D clnp array with the NumPy views that mirror them."""
    return {
        "T": (x.T, lambda h: h.T),
        "step": (x[::2, ::3], lambda h: h[::2, ::3]),
        "negative": (x[::-1, ::-2], lambda h: h[::-1, ::-2]),
        "offset": (x[3:, 1:-1], lambda h: h[3:, 1:-1]),
    }


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_matmul_strided_operands(device, rng, dtype):
    ha, hb = _data(rng, (70, 70), dtype), _data(rng, (70, 70), dtype)
    a, b = clnp.asarray(ha, device=device), clnp.asarray(hb, device=device)
    va, vb = _views(a), _views(b)
    for ka, (xa, fa) in va.items():
        for kb, (xb, fb) in vb.items():
            na, nb = fa(ha), fb(hb)
            if na.shape[1] != nb.shape[0]:
                nb = nb[:na.shape[1]] if nb.shape[0] > na.shape[1] else nb
                xb = xb[:na.shape[1]]
            if na.shape[1] != nb.shape[0]:
                continue
            _check(xa @ xb, _ref_matmul(na, nb), k=na.shape[1])
    # the operands were read in place: nothing was copied into them
    np.testing.assert_array_equal(a.to_numpy(), ha)


def test_matmul_batched_views(device, rng):
    h = _data(rng, (3, 9, 8), "float64" if device.has_fp64 else "float32")
    x = clnp.asarray(h, device=device)
    _check(x.mT @ x, _ref_matmul(h.transpose(0, 2, 1), h), k=9)
    _check(x @ x.mT, _ref_matmul(h, h.transpose(0, 2, 1)), k=8)
    _check(x[::-1, 1:, ::2] @ x[0, 1:5, ::-3], _ref_matmul(h[::-1, 1:, ::2], h[0, 1:5, ::-3]),
           k=4)
    bx = clnp.broadcast_to(x[:1], (4, 3, 9, 8))
    _check(bx.mT @ x, _ref_matmul(np.broadcast_to(h[:1], (4, 3, 9, 8)).transpose(0, 1, 3, 2),
                                  h), k=9)
    v = clnp.asarray(h[0, 0], device=device)
    _check(x @ v, _ref_matmul(h, h[0, 0]), k=8)
    _check(v @ x.mT, _ref_matmul(h[0, 0], h.transpose(0, 2, 1)), k=8)


def test_matmul_float32_512(device, rng):
    a = rng.random((512, 512), dtype=np.float32)
    b = rng.random((512, 512), dtype=np.float32)
    r = (clnp.asarray(a, device=device) @ clnp.asarray(b, device=device)).to_numpy()
    exact = a.astype(np.float64) @ b.astype(np.float64)
    # float32 accumulation of 512 positive terms of size ~0.25: a few ulp of the result
    np.testing.assert_allclose(r, exact, rtol=2e-5)


def test_split_k(device, rng):
    """Few outputs and a long K: the K range is split and the partials summed."""
    for dtype in ["float32", "int8", "int64"]:
        a, b = _data(rng, (3, 5000), dtype), _data(rng, (5000, 2), dtype)
        x, y = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
        _check(x @ y, _ref_matmul(a, b), k=5000)
    v = _data(rng, (100_000,), "float32")
    _check(clnp.matmul(clnp.asarray(v, device=device), clnp.asarray(v, device=device)),
           _ref_matmul(v, v), k=100_000)


@pytest.fixture
def gpu_kernel(monkeypatch):
    monkeypatch.setattr(_linalg, "_FORCE_KIND", "gpu")


@pytest.mark.parametrize("dtype", ["float32", "int32", "complex64"])
def test_local_memory_kernel(device, rng, gpu_kernel, dtype):
    """The GPU (local-memory tiled) kernel, run on whatever device is present."""
    cases = [((7, 63), (63, 65)), ((65, 130), (130, 7)), ((3, 1, 4, 5), (2, 5, 7)),
             ((5,), (5, 3)), ((4, 5), (5,)), ((2, 2000), (2000, 3))]
    for sa, sb in cases:
        a, b = _data(rng, sa, dtype), _data(rng, sb, dtype)
        x, y = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
        _check(x @ y, _ref_matmul(a, b), k=sa[-1])
    h = _data(rng, (40, 33), dtype)
    x = clnp.asarray(h, device=device)
    _check(x.T @ x[::-1], _ref_matmul(h.T, h[::-1]), k=40)
    _check(x[:, ::2] @ x.T[::2], _ref_matmul(h[:, ::2], h.T[::2]), k=17)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_local_memory_kernel_few_tiles_split_k(device, rng, gpu_kernel, monkeypatch, dtype):
    """The GPU kernel as a many-unit GPU runs products with a short side: the small
    configuration's tiles and K split into short chunks (their partials summed)."""
    if dtype == "float64" and not device.has_fp64:
        pytest.skip("no fp64")
    monkeypatch.setattr(device, "compute_units", 132)
    for sa, sb in [((256, 1024), (1024, 10)), ((256, 1000), (1000, 10)),
                   ((10, 256), (256, 1024))]:
        a, b = _data(rng, sa, dtype), _data(rng, sb, dtype)
        x, y = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
        _check(x @ y, _ref_matmul(a, b), k=sa[-1])
        _check(y.T @ x.T, _ref_matmul(b.T, a.T), k=sa[-1])


def test_local_memory_kernel_thin_products(device, rng, gpu_kernel, monkeypatch):
    """Products with a short side or a short K chunk take their configuration's tile over
    four times the items (``_thin``), and compute the same products."""
    monkeypatch.setattr(device, "compute_units", 132)
    plans = []
    run = _linalg._run

    def recording_run(*a, **kw):
        plans.append(run(*a, **kw))
        return plans[-1]
    monkeypatch.setattr(_linalg, "_run", recording_run)
    base = _linalg.gemm_config(device, np.dtype("float32"), small=True)
    for sa, sb, thin in [((256, 10), (10, 1024), True), ((256, 1024), (1024, 10), True),
                         ((10, 256), (256, 1024), True), ((256, 300), (300, 512), False)]:
        a, b = _data(rng, sa, "float32"), _data(rng, sb, "float32")
        x, y = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
        _check(x @ y, _ref_matmul(a, b), k=sa[-1])
        spec = plans[-1].spec
        assert (spec.lx, spec.tm) == ((2 * base["lx"], base["tm"] // 2) if thin else
                                      (base["lx"], base["tm"])), (sa, sb, spec)
        assert spec.lx * spec.tn == base["lx"] * base["tn"]      # the same tile


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_cpu_kernel_other_vector_widths(device, rng, monkeypatch, dtype):
    """The CPU kernel with the vector widths of other CPUs (AVX-512: 64 bytes, SSE/NEON: 16)."""
    for width in (16, 4):
        monkeypatch.setattr(device, "preferred_vector_width",
                            dict(device.preferred_vector_width, float=width))
        monkeypatch.setattr(_linalg, "_FORCE_KIND", "cpu")
        for sa, sb in [((7, 63), (63, 65)), ((3, 40), (40, 2)), ((20, 9), (9, 33))]:
            a, b = _data(rng, sa, dtype), _data(rng, sb, dtype)
            x, y = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
            _check(x @ y, _ref_matmul(a, b), k=sa[-1])
            _check(x @ clnp.asarray(b.T.copy(), device=device).T, _ref_matmul(a, b),
                   k=sa[-1])


def test_matmul_operator(device, rng):
    a, b = _data(rng, (4, 4), "float32"), _data(rng, (4, 4), "float32")
    x, y = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
    _check(x @ y, _ref_matmul(a, b), k=4)
    assert x.__matmul__("3") is NotImplemented
    z = x
    z @= y
    assert z is x
    _check(x, _ref_matmul(a, b), k=4)
    x @= x                       # the product is computed before x is written
    _check(x, _ref_matmul(_ref_matmul(a, b), _ref_matmul(a, b)), k=16)
    with pytest.raises(ValueError, match=r"\(4, 4\).*\(4, 2\)"):
        x @= clnp.ones((4, 2), dtype=clnp.float32, device=device)
    with pytest.raises(TypeError, match="dtype"):
        x @= clnp.ones((4, 4), dtype=clnp.complex64, device=device)
    np.testing.assert_allclose(x.to_numpy(), _ref_matmul(_ref_matmul(a, b),
                                                         _ref_matmul(a, b)), rtol=1e-5)


def test_complex_not_conjugated(device):
    a = np.array([[1j, 2], [3, 4 - 1j]], np.complex64)
    x = clnp.asarray(a, device=device)
    _check(x @ x, a @ a, k=2)
    _check(clnp.tensordot(x, x, axes=1), np.tensordot(a, a, axes=1), k=2)


# ------------------------------------------------------------------------------ dot_general
DOT_GENERAL = [
    # (lhs shape, rhs shape, ((lc, rc), (lb, rb)), einsum spelling)
    ((3, 4, 5), (5, 3, 6), (((0,), (1,)), ((2,), (0,))), "kmb,bkn->bmn"),
    ((2, 3, 4, 5), (4, 2, 5, 3), (((1, 3), (3, 2)), ((0, 2), (1, 0))), "bkcl,cblk->bc"),
    ((4, 2, 7), (7, 2, 3, 2), (((2,), (0,)), ((1,), (1,))), "mbk,kbnp->bmnp"),
    ((6, 5), (5, 6), (((0, 1), (1, 0)), ((), ())), "kl,lk->"),
]


@pytest.mark.parametrize("sa,sb,dn,spec", DOT_GENERAL, ids=[c[3] for c in DOT_GENERAL])
def test_dot_general_primitive(device, rng, sa, sb, dn, spec):
    """Batch dims anywhere, several contracting dims (the layouts vmap and grad rules bind)."""
    from clnp._core.prims import primitive
    f = device.default_float
    a, b = _data(rng, sa, f), _data(rng, sb, f)
    r = primitive("dot_general").bind(clnp.asarray(a, device=device),
                                      clnp.asarray(b, device=device), dimension_numbers=dn,
                                      preferred_element_type=np.dtype(f))
    _check(r, np.einsum(spec, a, b), k=30)


# ------------------------------------------------------------------------------ tensordot
TENSORDOT = [((3, 4), (5, 2), 0), ((3, 4, 5), (5, 2), 1), ((3, 4, 5), (4, 5, 6), 2),
             ((3, 4, 5), (5, 3, 2), ((0, 2), (1, 0))), ((3, 4, 5), (5, 2, 2), ([-1], [-3])),
             ((3, 4), (2,), ((), ())), ((3, 4, 5), (5, 3, 4), ((2, 0, 1), (0, 1, 2))),
             ((2, 3), (2, 3), 2)]


@pytest.mark.parametrize("sa,sb,axes", TENSORDOT)
def test_tensordot(device, rng, sa, sb, axes):
    f = device.default_float
    a, b = _data(rng, sa, f), _data(rng, sb, f)
    r = clnp.tensordot(clnp.asarray(a, device=device), clnp.asarray(b, device=device),
                       axes=axes)
    _check(r, np.tensordot(a, b, axes=axes), k=60)


def test_tensordot_dtypes(device, rng):
    for d1, d2 in [("int8", "int8"), ("uint16", "int32"), ("float32", "complex64")]:
        a, b = _data(rng, (3, 4, 5), d1), _data(rng, (4, 5, 2), d2)
        r = clnp.tensordot(clnp.asarray(a, device=device), clnp.asarray(b, device=device))
        _check(r, np.tensordot(a, b).astype(np.result_type(a, b))
               if a.dtype.kind in "iu" and b.dtype.kind in "iu"
               else np.tensordot(a.astype(np.complex128), b.astype(np.complex128)).astype(
                   np.result_type(a, b)), k=20)


def test_tensordot_errors(device):
    x = clnp.ones((2, 3, 4), device=device)
    y = clnp.ones((3, 4, 5), device=device)
    with pytest.raises(ValueError, match=r"\(2, 3, 4\).*\(3, 4, 5\)"):
        clnp.tensordot(x, y, axes=1)
    with pytest.raises(ValueError, match="nonnegative"):
        clnp.tensordot(x, y, axes=-1)
    with pytest.raises(ValueError, match="out of bounds"):
        clnp.tensordot(x, y, axes=((3,), (0,)))
    with pytest.raises(ValueError, match="same length"):
        clnp.tensordot(x, y, axes=((1, 2), (0,)))
    with pytest.raises(ValueError, match="repeated"):
        clnp.tensordot(x, y, axes=((1, 1), (0, 0)))
    with pytest.raises(ValueError):
        clnp.tensordot(x, y, axes=4)
    with pytest.raises(TypeError, match="bool"):
        clnp.tensordot(x > 0, y, axes=2)


# ------------------------------------------------------------------------------ vecdot
@pytest.mark.parametrize("sa,sb,axis", [((5,), (5,), -1), ((3, 5), (5,), -1),
                                        ((2, 1, 5), (4, 5), -1), ((5, 3), (2, 5, 3), -2),
                                        ((0,), (0,), -1), ((4, 0), (4, 0), -2)])
def test_vecdot(device, rng, sa, sb, axis):
    for dtype in [device.default_complex, "int16", "float32"]:
        a, b = _data(rng, sa, dtype), _data(rng, sb, dtype)
        r = clnp.vecdot(clnp.asarray(a, device=device), clnp.asarray(b, device=device),
                        axis=axis)
        if a.dtype.kind in "iu":
            want = np.sum(a * b, axis=axis, dtype=a.dtype)
        else:
            want = np.vecdot(a.astype(np.complex128), b.astype(np.complex128),
                             axis=axis).astype(a.dtype)
        _check(r, want, k=sa[axis])


def test_vecdot_conjugates_x1(device):
    x1 = clnp.asarray([1j, 2j, 3j], device=device)
    x2 = clnp.asarray([1, 2j, 3], device=device)
    assert complex(clnp.vecdot(x1, x2)) == pytest.approx(4 - 10j)
    assert complex(clnp.vdot(x1, x2)) == pytest.approx(4 - 10j)


def test_vecdot_errors(device):
    x = clnp.ones((3, 4), device=device)
    with pytest.raises(ValueError, match="negative"):
        clnp.vecdot(x, x, axis=0)
    with pytest.raises(ValueError, match="out of bounds"):
        clnp.vecdot(x, x, axis=-3)
    with pytest.raises(ValueError, match=r"\(3, 4\).*\(3, 1\)"):
        clnp.vecdot(x, clnp.ones((3, 1), device=device))     # contracted axis not broadcast
    with pytest.raises(ValueError, match=r"\(3, 4\).*\(2, 4\)"):
        clnp.vecdot(x, clnp.ones((2, 4), device=device))
    with pytest.raises(TypeError, match="bool"):
        clnp.vecdot(x > 0, x)


# ------------------------------------------------------------------------------ errors
def test_matmul_errors(device):
    x = clnp.ones((3, 4), device=device)
    with pytest.raises(ValueError, match=r"\(3, 4\).*\(3, 4\)"):
        clnp.matmul(x, x)
    with pytest.raises(ValueError, match=r"\(4,\).*\(3, 4\)"):
        clnp.matmul(clnp.ones(4, device=device), x)
    with pytest.raises(ValueError, match=r"\(3, 4\).*\(3,\)"):
        clnp.matmul(x, clnp.ones(3, device=device))
    with pytest.raises(ValueError, match=r"\(2, 3, 4\).*\(3, 4, 2\)"):
        clnp.matmul(clnp.ones((2, 3, 4), device=device), clnp.ones((3, 4, 2), device=device))
    with pytest.raises(ValueError, match="at least one dimension"):
        clnp.matmul(clnp.asarray(1.0, device=device), x)
    with pytest.raises(TypeError, match="matmul.*bool"):
        clnp.matmul(x > 0, x.T)
    with pytest.raises(TypeError, match="matmul.*bool"):
        x @ (x.T > 0)
    with pytest.raises(TypeError, match="clnp array"):
        clnp.matmul(x, object())
    with pytest.raises(TypeError):
        x @ "a"
    with pytest.raises(ValueError, match="at least one dimension"):
        x @ 3               # NumPy: ValueError, a scalar has no dimension to contract


# ------------------------------------------------------------------------------ NumPy names
def test_numpy_aliases(device, rng):
    f = device.default_float
    a3, b3 = _data(rng, (2, 3, 4), f), _data(rng, (5, 4, 6), f)
    a2, v4 = _data(rng, (3, 4), f), _data(rng, (4,), f)
    X = lambda h: clnp.asarray(h, device=device)  # noqa: E731
    _check(clnp.dot(X(a3), X(b3)), np.dot(a3, b3), k=4)
    _check(clnp.dot(X(a2), X(v4)), np.dot(a2, v4), k=4)
    _check(clnp.dot(X(v4), X(v4)), np.dot(v4, v4), k=4)
    _check(clnp.dot(X(a2), X(np.asarray(2.0))), np.dot(a2, 2.0))
    _check(clnp.inner(X(a3), X(a2)), np.inner(a3, a2), k=4)
    _check(clnp.inner(X(v4), X(v4)), np.inner(v4, v4), k=4)
    _check(clnp.outer(X(a2), X(v4)), np.outer(a2, v4))
    c = _data(rng, (2, 3), device.default_complex)
    _check(clnp.vdot(X(c), X(c[::-1])), np.vdot(c, c[::-1]), k=6)
    m = _data(rng, (2, 1, 3, 4), device.default_complex)
    _check(clnp.matvec(X(m), X(c[:, None, :1].repeat(4, -1))),
           np.matvec(m, c[:, None, :1].repeat(4, -1)), k=4)
    _check(clnp.vecmat(X(c), X(m[0])), np.vecmat(c, m[0]), k=3)
    with pytest.raises(ValueError, match="not aligned"):
        clnp.dot(X(a2), X(a2))
    with pytest.raises(ValueError, match="different sizes"):
        clnp.vdot(X(a2), X(v4))


# ------------------------------------------------------------------------------ properties
@st.composite
def _matmul_shapes(draw):
    m, k, n = (draw(st.integers(1, 9)) for _ in range(3))
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    b1 = [draw(st.sampled_from([1, n_])) for n_ in batch]
    b2 = [draw(st.sampled_from([1, n_])) for n_ in batch]
    b1 = b1[draw(st.integers(0, len(b1))):]
    sa = tuple(b1) + (m, k) if draw(st.booleans()) else (k,)
    sb = tuple(b2) + (k, n) if draw(st.booleans()) else (k,)
    return sa, sb, draw(st.booleans()), draw(st.booleans())


@settings(max_examples=40, deadline=None)
@given(case=_matmul_shapes())
def test_matmul_property(case):
    sa, sb, ta, tb = case
    device = clnp.default_device()
    rng = np.random.default_rng(0)
    dtype = device.default_float
    a, b = _data(rng, sa, dtype), _data(rng, sb, dtype)
    x, y = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
    if ta and a.ndim >= 2:                       # the same values through a transposed view
        x = clnp.asarray(np.ascontiguousarray(np.swapaxes(a, -1, -2)), device=device).mT
    if tb and b.ndim >= 2:
        y = clnp.asarray(np.ascontiguousarray(np.swapaxes(b, -1, -2)), device=device).mT
    _check(clnp.matmul(x, y), _ref_matmul(a, b), k=sa[-1])


@pytest.mark.skipif(len(clnp.devices()) < 2, reason="needs two OpenCL devices "
                    "(e.g. POCL_DEVICES='pthread pthread')")
def test_operands_on_different_devices():
    d0, d1 = clnp.devices()[:2]
    x, y = clnp.ones((2, 2), device=d0), clnp.ones((2, 2), device=d1)
    for f in (clnp.matmul, clnp.tensordot, clnp.vecdot):
        with pytest.raises(ValueError, match="different devices"):
            f(x, y)


@pytest.mark.parametrize("which", ["left", "right", "both"])
def test_unplannable_operand_alone_is_copied(device, which):
    """An operand whose contracted (or free) dims do not merge is copied to a dense layout;
    the other operand is read in place where it plans (one copy launch, not two), and the
    product is NumPy's. The weight gradient of a transposed attention output: contracting
    (B, T) of a (B, T, C) view with strides (T*C, 1, T)."""
    from clnp._core.capture import capture
    from clnp._core.prims import primitive
    rng = np.random.default_rng(5)
    ah, bh = (rng.standard_normal((6, 8, 5)).astype(np.float32) for _ in range(2))

    def transposed_view(h):     # (6, 8, 5) values, strides (40, 1, 8)
        return clnp.permute_dims(clnp.asarray(np.ascontiguousarray(h.transpose(0, 2, 1)),
                                              device=device), (0, 2, 1))
    a = transposed_view(ah) if which in ("left", "both") else clnp.asarray(ah, device=device)
    b = transposed_view(bh) if which in ("right", "both") else clnp.asarray(bh, device=device)
    dn = (((0, 1), (0, 1)), ((), ()))
    out, rep = capture(lambda x, y: primitive("dot_general").bind(
        x, y, dimension_numbers=dn, preferred_element_type=None), [a, b], device)
    np.testing.assert_allclose(clnp.asnumpy(out), np.einsum("bti,btj->ij", ah, bh),
                               rtol=1e-4, atol=1e-4)
    assert rep.n_launches <= (3 if which == "both" else 2), rep.n_launches
