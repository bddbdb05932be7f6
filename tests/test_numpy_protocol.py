"""``__array_ufunc__`` / ``__array_function__``: NumPy functions on clnp arrays run in clnp."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
from npcheck import check


@pytest.fixture
def ab(device, rng):
    a = rng.standard_normal((4, 5))
    b = rng.standard_normal((4, 5))
    return a, b, clnp.asarray(a, device=device), clnp.asarray(b, device=device)


# ------------------------------------------------------------------ ufuncs
@pytest.mark.parametrize("name", ["exp", "sin", "sqrt", "absolute", "negative", "floor",
                                  "isnan", "rint", "fabs", "square", "sign", "log1p"])
def test_unary_ufuncs(ab, name):
    a, _, A, _ = ab
    x = np.abs(a) if name in ("sqrt", "log1p") else a
    X = clnp.abs(A) if name in ("sqrt", "log1p") else A
    check(getattr(np, name)(X), getattr(np, name)(x))


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "true_divide", "power",
                                  "arctan2", "maximum", "fmax", "fmin", "hypot", "less",
                                  "equal", "logaddexp", "copysign", "floor_divide",
                                  "remainder", "fmod"])
def test_binary_ufuncs(ab, name):
    a, b, A, B = ab
    x = np.abs(a) if name == "power" else a
    X = clnp.abs(A) if name == "power" else A
    f = getattr(np, name)
    check(f(X, B), f(x, b))
    check(f(X, b), f(x, b))           # NumPy operand uploaded to the device
    check(f(x, B), f(x, b))
    check(f(X, 2.0), f(x, 2.0))


def test_operators_and_scalars(ab):
    a, b, A, B = ab
    check(b + A, b + a)
    check(b * A, b * a)
    check(b < A, b < a)
    check(np.float64(2.5) * A, np.float64(2.5) * a)
    check(np.float32(2.5) + A, np.float32(2.5) + a)
    a32 = a.astype(np.float32)
    A32 = clnp.asarray(a32, device=A.device)
    check(np.float64(2.0) * A32, np.float64(2.0) * a32, rtol=1e-6)   # NumPy scalars are strong
    check(np.add(A, [1.0, 2.0, 3.0, 4.0, 5.0]), np.add(a, [1.0, 2.0, 3.0, 4.0, 5.0]))


def test_ufunc_multiple_outputs_and_gufuncs(ab, device):
    a, b, A, B = ab
    check(np.divmod(A, 0.3), np.divmod(a, 0.3))
    check(np.matmul(A, B.T), a @ b.T)
    check(np.vecdot(A, B), np.vecdot(a, b))
    v = np.arange(5.0)
    check(np.matvec(A, clnp.asarray(v, device=device)), np.matvec(a, v))
    check(np.vecmat(clnp.asarray(v[:4], device=device), A), np.vecmat(v[:4], a))


def test_ufunc_keywords(ab, device):
    a, b, A, B = ab
    check(np.add(A, B, dtype=np.float32), np.add(a, b, dtype=np.float32), rtol=1e-6)
    out = clnp.empty((4, 5), device=device)
    assert np.multiply(A, B, out=out) is out
    check(out, a * b)
    q, r = clnp.empty((4, 5), device=device), clnp.empty((4, 5), device=device)
    res = np.divmod(A, 0.7, out=(q, r))
    assert res[0] is q and res[1] is r
    check(q, np.floor_divide(a, 0.7))
    o = np.zeros((4, 5))
    np.multiply(a, b, out=o, where=a > 0)
    out = clnp.zeros((4, 5), device=device)
    np.multiply(A, B, out=out, where=A > 0)
    check(out, o)
    out = clnp.zeros((2, 4, 5), device=device)
    np.add(A, 1.0, out=out)                      # broadcast into out, as NumPy does
    check(out, np.broadcast_to(a + 1.0, (2, 4, 5)))


def test_ufunc_out_errors(ab, device):
    a, b, A, B = ab
    with pytest.raises(TypeError, match="out= must be a clnp array"):
        np.add(A, B, out=np.empty((4, 5)))
    host = np.zeros((4, 5))
    with pytest.raises(TypeError, match="out= must be a clnp array"):
        host += A
    assert (host == 0).all()
    o = clnp.zeros((4, 5), dtype=clnp.int64, device=device)
    with pytest.raises(TypeError, match="cannot cast"):
        np.add(A, B, out=o)
    assert not bool(clnp.any(o))
    np.add(A, B, out=o, casting="unsafe")
    check(o, (a + b).astype(np.int64))


def test_ufunc_methods(ab):
    a, b, A, B = ab
    check(np.add.reduce(A), np.add.reduce(a))
    check(np.add.reduce(A, axis=1, keepdims=True), np.add.reduce(a, axis=1, keepdims=True))
    check(np.add.reduce(A, axis=None), np.add.reduce(a, axis=None))
    check(np.multiply.reduce(A, axis=(0, 1)), np.multiply.reduce(a, axis=(0, 1)))
    check(np.maximum.reduce(A, axis=1), np.maximum.reduce(a, axis=1))
    check(np.minimum.reduce(A, axis=1, initial=-0.5), np.minimum.reduce(a, axis=1, initial=-0.5))
    check(np.maximum.reduce(A[:, :0], axis=1, initial=0.5),
          np.maximum.reduce(a[:, :0], axis=1, initial=0.5))
    check(np.add.reduce(A, initial=10.0), np.add.reduce(a, initial=10.0))
    check(np.logical_and.reduce(A > -1, axis=0), np.logical_and.reduce(a > -1, axis=0))
    check(np.logical_or.reduce(A > 1), np.logical_or.reduce(a > 1))
    check(np.add.reduce(A > 0, axis=0, dtype=np.int32),
          np.add.reduce(a > 0, axis=0, dtype=np.int32))
    check(np.add.accumulate(A), np.add.accumulate(a))
    check(np.multiply.accumulate(A, axis=1), np.multiply.accumulate(a, axis=1))
    check(np.subtract.outer(A[0], B[:, 0]), np.subtract.outer(a[0], b[:, 0]))
    check(np.multiply.outer(A[0], [1.0, 2.0]), np.multiply.outer(a[0], [1.0, 2.0]))
    check(np.greater.outer(A[:2], B[0]), np.greater.outer(a[:2], b[0]))


def test_ufunc_methods_of_clnp_ufuncs(ab):
    # every method of a ufunc clnp has runs through clnp.<name>'s own method (issue #12)
    a, b, A, B = ab
    check(np.subtract.reduce(A), np.subtract.reduce(a))
    check(np.subtract.accumulate(A, axis=1), np.subtract.accumulate(a, axis=1))
    check(np.add.reduceat(A, [0, 2, 1], axis=1), np.add.reduceat(a, [0, 2, 1], axis=1))
    check(np.add.reduce(A, where=A > 0), np.add.reduce(a, where=a > 0))
    h = a.copy()
    np.add.at(A, [0, 0, 2], 1.0)
    np.add.at(h, [0, 0, 2], 1.0)
    check(A, h)


def test_ufunc_not_supported(ab):
    _, _, A, _ = ab
    with pytest.raises(TypeError, match=r"numpy.isnat is not implemented"):
        np.isnat(A)
    check(np.cbrt(A), np.cbrt(np.asarray(A)))       # a clnp function since issue #12
    with pytest.raises(TypeError, match="not supported"):
        np.matmul(A, A.T, axes=[(0, 1), (0, 1), (0, 1)])


# ------------------------------------------------------------------ functions
def test_reductions(ab, device):
    a, _, A, _ = ab
    check(np.sum(A), np.sum(a))
    check(np.sum(A, 1), np.sum(a, 1))
    check(np.sum(A, axis=0, keepdims=True), np.sum(a, axis=0, keepdims=True))
    check(np.mean(A, axis=0), np.mean(a, axis=0))
    check(np.mean(A, axis=0, dtype=np.float32), np.mean(a, axis=0, dtype=np.float32),
          rtol=1e-6)
    check(np.std(A, axis=1, ddof=1), np.std(a, axis=1, ddof=1))
    check(np.var(A, 0, None, None, 1), np.var(a, 0, None, None, 1))
    check(np.var(A, correction=1), np.var(a, correction=1))
    check(np.max(A, axis=1), np.max(a, axis=1))
    check(np.amin(A), np.amin(a))
    check(np.prod(A, axis=0), np.prod(a, axis=0))
    check(np.argmax(A, axis=1), np.argmax(a, axis=1))
    check(np.argmin(A), np.argmin(a))
    check(np.all(A > -5), np.all(a > -5))
    check(np.any(A > 5, axis=0), np.any(a > 5, axis=0))
    check(np.count_nonzero(A > 0, axis=1), np.count_nonzero(a > 0, axis=1))
    check(np.cumsum(A, axis=1), np.cumsum(a, axis=1))
    check(np.cumprod(A, 0), np.cumprod(a, 0))
    check(np.median(A, axis=0), np.median(a, axis=0))
    check(np.percentile(A, [10, 90]), np.percentile(a, [10, 90]))
    check(np.nanmean(A), np.nanmean(a))
    out = clnp.empty((5,), device=device)
    assert np.sum(A, axis=0, out=out) is out
    check(out, np.sum(a, axis=0))
    out = clnp.empty((4,), device=device)
    assert np.median(A, axis=1, out=out) is out
    check(out, np.median(a, axis=1))


def test_shape_functions(ab):
    a, b, A, B = ab
    check(np.concatenate([A, b]), np.concatenate([a, b]))
    check(np.concatenate((A, B), axis=1), np.concatenate((a, b), axis=1))
    check(np.concatenate([A, B], axis=None), np.concatenate([a, b], axis=None))
    check(np.concatenate([A, B], dtype=np.float32), np.concatenate([a, b], dtype=np.float32))
    check(np.stack([A, B], axis=1), np.stack([a, b], axis=1))
    check(np.vstack([A, B]), np.vstack([a, b]))
    check(np.hstack([A, b]), np.hstack([a, b]))
    check(np.reshape(A, (5, 4)), np.reshape(a, (5, 4)))
    check(np.reshape(A, shape=(-1,)), np.reshape(a, shape=(-1,)))
    check(np.transpose(A), np.transpose(a))
    check(np.ravel(A), np.ravel(a))
    check(np.expand_dims(A, 0), np.expand_dims(a, 0))
    check(np.squeeze(A[None]), np.squeeze(a[None]))
    check(np.moveaxis(A, 0, 1), np.moveaxis(a, 0, 1))
    check(np.swapaxes(A, 0, 1), np.swapaxes(a, 0, 1))
    check(np.flip(A, axis=0), np.flip(a, axis=0))
    check(np.roll(A, 2, axis=1), np.roll(a, 2, axis=1))
    check(np.tile(A, 2), np.tile(a, 2))
    check(np.repeat(A, 2, axis=0), np.repeat(a, 2, axis=0))
    check(np.broadcast_to(A[0], (3, 5)), np.broadcast_to(a[0], (3, 5)))
    check(np.broadcast_arrays(A, B[0]), np.broadcast_arrays(a, b[0]))
    check(np.split(A, 5, axis=1), np.split(a, 5, axis=1))
    check(np.atleast_3d(A), np.atleast_3d(a))
    check(np.meshgrid(A[0], B[0]), np.meshgrid(a[0], b[0]))
    check(np.meshgrid(A[0], B[0], indexing="ij"), np.meshgrid(a[0], b[0], indexing="ij"))
    check(np.pad(A, 1, mode="edge"), np.pad(a, 1, mode="edge"))
    check(np.tril(A, -1), np.tril(a, -1))
    check(np.triu(A), np.triu(a))
    assert np.shape(A) == (4, 5) and np.ndim(A) == 2 and np.size(A) == 20


def test_elementwise_functions(ab, device):
    a, b, A, B = ab
    check(np.where(A > 0, A, 0.0), np.where(a > 0, a, 0.0))
    check(np.where(A > 0, A, b), np.where(a > 0, a, b))
    check(np.where(A > 0), np.where(a > 0))
    check(np.where(A), np.where(a))                # non-boolean condition
    check(np.clip(A, -0.5, 0.5), np.clip(a, -0.5, 0.5))
    check(np.clip(A, min=0), np.clip(a, min=0))
    check(np.round(A, 2), np.round(a, 2))
    check(np.around(A), np.around(a))
    check(np.real(A), np.real(a))
    check(np.imag(A * 1j), np.imag(a * 1j))
    check(np.isclose(A, b), np.isclose(a, b))
    check(np.nan_to_num(A), np.nan_to_num(a))
    check(np.interp(A, [-1, 0, 1.0], [0, 1, 0.0]), np.interp(a, [-1, 0, 1.0], [0, 1, 0.0]))
    check(np.zeros_like(A), np.zeros_like(a))
    check(np.full_like(A, 3.0), np.full_like(a, 3.0))
    check(np.ones_like(A, dtype=np.int32), np.ones_like(a, dtype=np.int32))
    assert np.allclose(A, a) is True and np.array_equal(A, b) is False
    assert np.iscomplexobj(A) is False and np.isrealobj(A) is True


def test_sorting_searching_sets(ab, device):
    a, b, A, B = ab
    check(np.sort(A, axis=0), np.sort(a, axis=0))
    check(np.argsort(A, kind="stable"), np.argsort(a, kind="stable"))
    check(np.unique(clnp.asarray([3, 1, 3], device=device)), np.unique([3, 1, 3]))
    check(np.unique(clnp.asarray([3, 1, 3], device=device), return_counts=True),
          np.unique([3, 1, 3], return_counts=True))
    check(np.searchsorted(clnp.arange(5.0, device=device), [1.5, 3.0]),
          np.searchsorted(np.arange(5.0), [1.5, 3.0]))
    check(np.isin(clnp.asarray([1, 2, 3], device=device), [2]), np.isin([1, 2, 3], [2]))
    check(np.nonzero(A > 0), np.nonzero(a > 0))
    check(np.argwhere(A > 0), np.argwhere(a > 0))
    check(np.take(A, [0, 2], axis=1), np.take(a, [0, 2], axis=1))
    check(np.take_along_axis(A, np.argsort(A, axis=1), axis=1),
          np.take_along_axis(a, np.argsort(a, axis=1), axis=1))
    check(np.diff(A, axis=0), np.diff(a, axis=0))
    check(np.histogram(A, bins=4), np.histogram(a, bins=4))
    check(np.bincount(clnp.asarray([0, 2, 2], device=device)), np.bincount([0, 2, 2]))


def test_linear_algebra_functions(ab):
    a, b, A, B = ab
    check(np.dot(A, B.T), np.dot(a, b.T), rtol=1e-10)
    check(np.tensordot(A, B, axes=([1], [1])), np.tensordot(a, b, axes=([1], [1])), rtol=1e-10)
    check(np.outer(A[0], B[0]), np.outer(a[0], b[0]))
    check(np.inner(A, B), np.inner(a, b), rtol=1e-10)
    check(np.einsum("ij,kj->ik", A, B), np.einsum("ij,kj->ik", a, b), rtol=1e-10)
    check(np.trace(A), np.trace(a))
    check(np.diag(A), np.diag(a))
    check(np.cov(A), np.cov(a), rtol=1e-10)
    check(np.corrcoef(A, B), np.corrcoef(a, b), rtol=1e-10)
    if hasattr(clnp, "linalg") and hasattr(clnp.linalg, "norm"):
        check(np.linalg.norm(A), np.linalg.norm(a), rtol=1e-10)
        check(np.linalg.norm(A, axis=1), np.linalg.norm(a, axis=1), rtol=1e-10)
    if hasattr(clnp, "fft") and hasattr(clnp.fft, "fft"):
        check(np.fft.fft(A, axis=1), np.fft.fft(a, axis=1), rtol=1e-10)


def test_function_errors(ab, device):
    a, _, A, _ = ab
    with pytest.raises(TypeError, match=r"numpy.isnat is not implemented by clnp.*"
                                        r"numpy.asarray\(x\)"):
        np.isnat(A)
    assert np.einsum_path("ij,jk", A, A.T)[0] == np.einsum_path("ij,jk", a, a.T)[0]
    check(np.gradient(A), np.gradient(a))            # a clnp function since issue #12
    check(np.sum(A, where=A > 0), np.sum(a, where=a > 0))
    check(np.reshape(A, (5, 4), order="F"), np.reshape(a, (5, 4), order="F"))
    with pytest.raises(TypeError, match="out= must be a clnp array"):
        np.sum(A, axis=0, out=np.empty(5))
    check(np.take(A, [7, -12], mode="wrap"), np.take(a, [7, -12], mode="wrap"))
    check(np.take(A, [7, -12], mode="clip"), np.take(a, [7, -12], mode="clip"))
    with pytest.raises(TypeError, match="either both or neither"):
        np.where(A > 0, A)
    with pytest.raises(TypeError, match="structured"):
        np.sort(A, order="x")
    with pytest.raises(TypeError, match="got both"):
        np.var(A, ddof=1, correction=1)
    # a type clnp does not know: NumPy asks it, then gives up
    masked = np.ma.masked_array(a)
    with pytest.raises(TypeError):
        np.concatenate([A, masked])


def test_host_conversion_untouched(ab):
    a, _, A, _ = ab
    h = np.asarray(A)
    assert type(h) is np.ndarray
    np.testing.assert_array_equal(h, a)
    np.testing.assert_allclose(A, a)        # NumPy's testing converts clnp arrays itself
    assert type(np.array(A)) is np.ndarray
