"""The eager fast path (clnp._core.dispatch) must agree with the general route in every case it
takes, and hand every case it cannot express back to it (which raises the precise errors)."""
import numpy as np
import pytest

import clnp
from clnp._core import dispatch as _dispatch


@pytest.fixture
def data(device):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(24).astype(np.float32)
    b = rng.standard_normal(24).astype(np.float32)
    return a, b, clnp.asarray(a, device=device), clnp.asarray(b, device=device)


def test_fast_path_is_taken_and_agrees(device, data):
    a, b, x, y = data
    _dispatch._ENTRIES.clear()
    for _ in range(3):                      # first call builds the entry, later ones reuse it
        np.testing.assert_array_equal(np.asarray(x + y), a + b)
        np.testing.assert_array_equal(np.asarray(clnp.multiply(x, y)), a * b)
        np.testing.assert_array_equal(np.asarray(2.5 - x), np.float32(2.5) - a)
        np.testing.assert_array_equal(np.asarray(x < 0.5), a < 0.5)
        np.testing.assert_array_equal(np.asarray(-x), -a)
    assert any(e is not None for e in _dispatch._ENTRIES.values())


def test_views_with_offsets_and_strides(device, data):
    a, b, x, y = data
    # same shapes and strides, different offsets: one entry serves all of them
    for k in range(4):
        np.testing.assert_array_equal(np.asarray(x[k:k + 8] + y[8 - k:16 - k]),
                                      a[k:k + 8] + b[8 - k:16 - k])
    np.testing.assert_array_equal(np.asarray(x[::3] * y[1::3]), a[::3] * b[1::3])
    xm, am = clnp.reshape(x, (4, 6)), a.reshape(4, 6)
    np.testing.assert_array_equal(np.asarray(xm.T + xm.T), am.T + am.T)
    np.testing.assert_array_equal(np.asarray(xm + x[:6]), am + a[:6])        # broadcast
    np.testing.assert_array_equal(np.asarray(xm[1:, ::-2] - 1.0), am[1:, ::-2] - 1.0)


def test_python_int_bounds_fall_back(device):
    a = np.arange(-3, 5, dtype=np.int8)
    x = clnp.asarray(a, device=device)
    np.testing.assert_array_equal(np.asarray(x + 3), a + 3)          # builds the entry
    with pytest.raises(OverflowError, match="int8"):
        x + 300                                                       # same entry, out of range
    np.testing.assert_array_equal(np.asarray(x < 1000), a < 1000)     # compared exactly
    np.testing.assert_array_equal(np.asarray(x > -1000), a > -1000)
    with pytest.raises(ValueError, match="negative integer powers"):
        x ** -1


def test_dtype_conversions_and_errors_take_the_general_route(device, data):
    a, b, x, y = data
    i = clnp.asarray(np.arange(24, dtype=np.int32), device=device)
    np.testing.assert_allclose(np.asarray(x + i), a + np.arange(24, dtype=np.int32))
    with pytest.raises(ValueError, match=r"\(24,\).*\(5,\)|\(5,\).*\(24,\)"):
        x + clnp.ones(5, dtype=clnp.float32, device=device)
    with pytest.raises(TypeError, match="bitwise_and"):
        x & y
    assert (x == None) is False  # noqa: E711  (NotImplemented, then identity)
    e = clnp.empty((0,), dtype=clnp.float32, device=device)
    assert (e + e).shape == (0,)


def test_tracers_bypass_the_fast_path(device, data):
    clnp_grad = pytest.importorskip("clnp_grad")
    a, b, x, y = data
    g = clnp_grad.grad(lambda t: clnp.sum(t * y + t))(x)
    np.testing.assert_allclose(np.asarray(g), b + 1, rtol=1e-6)


def test_entry_table_is_bounded(device, data, monkeypatch):
    a, b, x, y = data
    monkeypatch.setattr("clnp._core.eager._PLANS_MAX", 3)
    _dispatch._ENTRIES.clear()
    for k in range(1, 8):
        np.testing.assert_array_equal(np.asarray(x[:k] + y[:k]), a[:k] + b[:k])
    assert len(_dispatch._ENTRIES) <= 3


def test_inplace_fast_path(device, data):
    a, b, x, y = data
    a, x = a.copy(), clnp.asarray(a, device=device)
    for _ in range(2):
        x += y
        a += b
        x *= 0.5
        a *= np.float32(0.5)
    np.testing.assert_allclose(np.asarray(x), a, rtol=1e-6)
    v, av = x[2:10], a[2:10]          # a view: the write goes to the parent's buffer
    v -= y[:8]
    av -= b[:8]
    np.testing.assert_allclose(np.asarray(x), a, rtol=1e-6)
    x += x[::-1]                      # overlapping operand: through a temporary
    a += a[::-1].copy()
    np.testing.assert_allclose(np.asarray(x), a, rtol=1e-6)
    with pytest.raises(TypeError, match="dtype"):
        i = clnp.asarray(np.arange(24, dtype=np.int32), device=device)
        i += x
    with pytest.raises(ValueError, match="broadcast"):
        x[:5] += y


def test_transposed_operands_tiled(device, rng=np.random.default_rng(3)):
    """2-D operations with a transposed operand (walked in blocks on CPU devices), with
    ragged edges, negative strides, broadcasting and in-place writes."""
    for m, n in ((70, 45), (33, 100)):
        a = rng.standard_normal((m, n)).astype(np.float32)
        b = rng.standard_normal((n, m)).astype(np.float32)
        x, y = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
        np.testing.assert_array_equal(np.asarray(x.T + y), a.T + b)
        np.testing.assert_array_equal(np.asarray(x.T[::-1] * y[::-1]), a.T[::-1] * b[::-1])
        np.testing.assert_array_equal(np.asarray(x.T - y[0]), a.T - b[0])
        np.testing.assert_allclose(np.asarray(clnp.exp(x.T)), np.exp(a.T), rtol=1e-6)
        y += x.T
        b += a.T
        np.testing.assert_array_equal(np.asarray(y), b)


def test_broadcast_operands_inner_stretch(device, rng=np.random.default_rng(4)):
    """Strided operations whose innermost dim is long (walked in stretches of it per
    work-item on CPU devices): a per-channel broadcast as in batch norm, tails of the
    stretch, negative strides, in-place writes, two outputs, and every dtype class."""
    for shape in ((3, 5, 70), (2, 4, 6, 33), (4, 129), (2, 3, 64)):
        c = shape[1] if len(shape) > 2 else shape[0]
        bshape = (1, c) + (1,) * (len(shape) - 2) if len(shape) > 2 else (c, 1)
        for dt in (np.float32, np.float64, np.float16, np.int32, np.uint8, np.int64,
                   np.complex64, np.bool_):
            if not device.supports(dt):
                continue
            a = (rng.standard_normal(shape) * 8).astype(dt)
            s = (rng.standard_normal(bshape) * 4).astype(dt)
            x, y = clnp.asarray(a, device=device), clnp.asarray(s, device=device)
            if dt is np.bool_:
                np.testing.assert_array_equal(np.asarray(x & y), a & s)
                np.testing.assert_array_equal(np.asarray(x[..., ::-1] | y), a[..., ::-1] | s)
                continue
            np.testing.assert_array_equal(np.asarray(x * y), a * s)
            np.testing.assert_array_equal(np.asarray(x[..., ::-1] + y), a[..., ::-1] + s)
        a = rng.standard_normal(shape).astype(np.float32)
        s = rng.standard_normal(bshape).astype(np.float32)
        x, y = clnp.asarray(a, device=device), clnp.asarray(s, device=device)
        np.testing.assert_allclose(np.asarray(clnp.exp(x - y)), np.exp(a - s), rtol=1e-6)
        q, r = clnp.divmod(x, y)
        np.testing.assert_allclose(np.asarray(q), np.floor_divide(a, s), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(r), np.mod(a, s), rtol=1e-5, atol=1e-6)
        x += y
        a += s
        np.testing.assert_array_equal(np.asarray(x), a)
        v = x[..., 1:-1]               # a strided view written in place
        v *= y
        a[..., 1:-1] *= s
        np.testing.assert_array_equal(np.asarray(x), a)


def _spy_unit(monkeypatch):
    """Record the innermost stride patterns plans pick (() where the stretch stays scalar)."""
    from clnp._core import eager as _eager
    seen: list = []
    real = _eager._unit_pattern

    def spy(cstr, n_arrays):
        seen.append(real(cstr, n_arrays))
        return seen[-1]
    monkeypatch.setattr(_eager, "_unit_pattern", spy)
    _eager._PLANS.clear()
    return seen


def _same_or_fma(device, got: np.ndarray, want: np.ndarray, scale: np.ndarray) -> None:
    """Bit-identical on CPUs; GPU compilers may contract ``x * p + c`` of 32/64-bit floats
    into one fused multiply-add (OpenCL C allows it): the product's rounding is skipped, an
    error of at most an ulp of the product and one of the sum (``scale``: |x * p| + |c|)."""
    if device.is_cpu or got.dtype.kind != "f" or got.dtype.itemsize < 4:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        ok = ~np.isnan(want)
        err = np.abs(got[ok].astype(np.float64) - want[ok])
        assert (err <= 2 * np.finfo(got.dtype).eps * np.abs(scale[ok])).all()


def test_broadcast_operands_inner_vectors(device, monkeypatch, rng=np.random.default_rng(5)):
    """The vector walk of an inner stretch (innermost strides 1 or 0, one 0 at least): a
    broadcast column s[i] or channel (splats), with a broadcast row p[j] in the same fused
    body (vector loads), tails shorter than a vector and than a stretch, NaN and signed
    zeros through maximum (vector selects must match the scalar tail), every dtype class,
    in place, jit and eager; a row alone and a negative innermost stride keep the scalar
    walk (and their results)."""
    import ml_dtypes
    import clnp_grad as cg
    seen = _spy_unit(monkeypatch)
    bf16 = np.dtype(ml_dtypes.bfloat16)
    relu = cg.jit(lambda x, p: clnp.maximum(x * p + 1, 0))
    affine = cg.jit(lambda x, p, c: x * p + c)
    for shape, bshapes in (((5, 37), ((37,), (5, 1))), ((3, 300), ((300,), (3, 1))),
                           ((2, 3, 40), ((1, 3, 1), (40,))), ((4, 33), ((33,), (4, 1)))):
        for dt in (np.float32, np.float64, np.float16, bf16, np.int32, np.uint8, np.bool_):
            if not device.supports(np.dtype(dt)):
                continue
            a = (rng.standard_normal(shape) * 8).astype(dt)
            if np.dtype(dt).kind == "f":
                a.flat[::7] = np.array([np.nan, 0.0, -0.0, -1.0], np.float32)[
                    np.arange(a.flat[::7].size) % 4].astype(dt)
            x = clnp.asarray(a, device=device)
            for bs in bshapes:
                s = (rng.standard_normal(bs) * 4).astype(dt)
                y = clnp.asarray(s, device=device)
                seen.clear()
                if dt is np.bool_:
                    np.testing.assert_array_equal(np.asarray(x & y), a & s)
                    continue
                np.testing.assert_array_equal(np.asarray(x * y), a * s)
                np.testing.assert_array_equal(np.asarray(clnp.maximum(y, x)), np.maximum(s, a))
                if np.dtype(dt).kind == "f" and dt is not np.float16:
                    # (0.0, -0.0) ties give the second operand, as NumPy's float32/float64
                    # (NumPy's float16 maximum gives the first: clnp differs there on every
                    # path, the contiguous one included)
                    np.testing.assert_array_equal(
                        np.signbit(np.asarray(clnp.maximum(x, y * 0)).astype(np.float32)),
                        np.signbit(np.maximum(a, s * 0).astype(np.float32)))
                if np.dtype(dt).kind == "f":
                    _same_or_fma(device, np.asarray(relu(x, y)),
                                 np.maximum(a * s + 1, 0).astype(dt),
                                 np.broadcast_to(np.abs(a * s) + 1, shape))
                if device.is_cpu:
                    # vectors where an operand is splatted (innermost stride 0); a row p[j]
                    # alone keeps the scalar stretch (see clnp._core.eager._unit_pattern)
                    assert any(seen) == (bs[-1] == 1), (shape, bs, dt, seen)
                seen.clear()
                np.testing.assert_array_equal(np.asarray(x[..., ::-1] - y), a[..., ::-1] - s)
                if device.is_cpu:
                    assert seen and not any(seen), (shape, bs, dt)
                z = clnp.asarray(a.copy(), device=device)
                z *= y                                      # in place: output aliases x
                np.testing.assert_array_equal(np.asarray(z), a * s)
                v = z[..., 1:]                              # a view with an offset
                v += y[..., 1:] if y.shape[-1] > 1 else y
                w = a * s
                w[..., 1:] += s[..., 1:] if s.shape[-1] > 1 else s
                np.testing.assert_array_equal(np.asarray(z), w)
            if dt is not np.bool_ and len(shape) == 2:
                # vector loads of x and of a broadcast row p[j], splats of a column c[i], in
                # one fused body
                p = (rng.standard_normal(shape[1]) * 4).astype(dt)
                c = (rng.standard_normal((shape[0], 1)) * 4).astype(dt)
                seen.clear()
                _same_or_fma(device, np.asarray(affine(x, clnp.asarray(p, device=device),
                                                       clnp.asarray(c, device=device))),
                             (a * p + c) if np.dtype(dt).kind != "f" else (a * p + c).astype(dt),
                             np.abs(a * p) + np.abs(c))
                if device.is_cpu:
                    assert (1, 1, 0) in seen, (shape, dt, seen)
