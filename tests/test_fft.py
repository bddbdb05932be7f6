"""clnp.fft against numpy.fft on every device: all functions, smooth and prime lengths
(Bluestein), padding/truncation, axes, norms, dtypes, strided inputs and errors."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import clnp

LENGTHS = [1, 2, 3, 5, 7, 8, 12, 15, 16, 17, 97, 100, 128, 1000, 1024, 4096]
NORMS = ["backward", "ortho", "forward"]


def _cdtypes(device):
    return [np.complex64] + ([np.complex128] if device.has_fp64 else [])


def _rdtypes(device):
    return [np.float32] + ([np.float64] if device.has_fp64 else [])


def _tol(dtype) -> float:
    return 1e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12


def check(got, want, dtype, tol=None):
    """``got`` (clnp) matches the float64 reference ``want`` relative to its largest value,
    and has the expected dtype."""
    assert isinstance(got, clnp.Array)
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    g = got.to_numpy()
    assert g.shape == want.shape, (g.shape, want.shape)
    scale = max(float(np.abs(want).max(initial=0.0)), 1e-30)
    err = float(np.abs(g - want).max(initial=0.0)) / scale
    assert err <= (tol or _tol(dtype)), err


def _complex_data(rng, shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


# ------------------------------------------------------------------------------ lengths
@pytest.mark.parametrize("n", LENGTHS)
def test_fft_ifft_lengths(device, rng, n):
    x = _complex_data(rng, (2, n))
    for d in _cdtypes(device):
        xd = clnp.asarray(x.astype(d), device=device)
        check(clnp.fft.fft(xd), np.fft.fft(x.astype(d).astype(np.complex128)), d)
        check(clnp.fft.ifft(xd), np.fft.ifft(x.astype(d).astype(np.complex128)), d)


@pytest.mark.parametrize("n", LENGTHS)
def test_real_transforms_lengths(device, rng, n):
    """rfft/ihfft of n reals and irfft/hfft to n reals (even n uses the packed half-length
    transform, odd n and n with large prime factors the full one)."""
    x = rng.standard_normal((2, n))
    h = _complex_data(rng, (2, n // 2 + 1))
    for d in _rdtypes(device):
        cd = np.result_type(d, np.complex64)
        xd = clnp.asarray(x.astype(d), device=device)
        hd = clnp.asarray(h.astype(cd), device=device)
        xr, hr = x.astype(d).astype(np.float64), h.astype(cd).astype(np.complex128)
        check(clnp.fft.rfft(xd), np.fft.rfft(xr), cd)
        check(clnp.fft.ihfft(xd), np.fft.ihfft(xr), cd)
        check(clnp.fft.irfft(hd, n=n), np.fft.irfft(hr, n=n), d)
        check(clnp.fft.hfft(hd, n=n), np.fft.hfft(hr, n=n), d)


def test_large_power_of_two(device, rng):
    n = 2 ** 18
    x = rng.standard_normal(n)
    xd = clnp.asarray(x.astype(np.float32), device=device)
    ref = np.fft.rfft(x.astype(np.float32).astype(np.float64))
    X = clnp.fft.rfft(xd)
    check(X, ref, np.complex64)
    check(clnp.fft.irfft(X, n=n), x.astype(np.float32).astype(np.float64), np.float32)
    c = x.astype(np.complex64)
    check(clnp.fft.fft(clnp.asarray(c, device=device)), np.fft.fft(c.astype(np.complex128)),
          np.complex64)


def test_large_prime_bluestein(device, rng):
    n = 4099     # prime: Bluestein with a power-of-two convolution of 16384 points
    x = _complex_data(rng, n)
    for d in _cdtypes(device):
        xd = clnp.asarray(x.astype(d), device=device)
        ref = x.astype(d).astype(np.complex128)
        check(clnp.fft.fft(xd), np.fft.fft(ref), d)
        check(clnp.fft.ifft(xd, norm="ortho"), np.fft.ifft(ref, norm="ortho"), d)


# ------------------------------------------------------------------------------ n, axis, norm
@pytest.mark.parametrize("n", [1, 4, 6, 9, 11, 20, 34])
def test_n_pad_truncate(device, rng, n):
    """``n`` below/above the axis length (10) truncates/zero-pads the input."""
    x = _complex_data(rng, (3, 10))
    xr = rng.standard_normal((3, 10))
    d = np.complex128 if device.has_fp64 else np.complex64
    rd = np.float64 if device.has_fp64 else np.float32
    tol = _tol(d)
    xd, xrd = clnp.asarray(x.astype(d), device=device), clnp.asarray(xr.astype(rd),
                                                                      device=device)
    x, xr = x.astype(d), xr.astype(rd)
    check(clnp.fft.fft(xd, n=n), np.fft.fft(x, n=n), d, tol)
    check(clnp.fft.ifft(xd, n=n, axis=0), np.fft.ifft(x, n=n, axis=0), d, tol)
    check(clnp.fft.rfft(xrd, n=n), np.fft.rfft(xr, n=n), d, tol)
    check(clnp.fft.ihfft(xrd, n=n, axis=0), np.fft.ihfft(xr, n=n, axis=0), d, tol)
    check(clnp.fft.irfft(xd, n=n), np.fft.irfft(x, n=n), rd, tol)
    check(clnp.fft.hfft(xd, n=n, axis=0), np.fft.hfft(x, n=n, axis=0), rd, tol)


@pytest.mark.parametrize("norm", NORMS)
def test_norms(device, rng, norm):
    x = _complex_data(rng, (4, 12))
    xr = rng.standard_normal((4, 12))
    d = np.complex128 if device.has_fp64 else np.complex64
    rd = np.float64 if device.has_fp64 else np.float32
    x, xr = x.astype(d), xr.astype(rd)
    xd, xrd = clnp.asarray(x, device=device), clnp.asarray(xr, device=device)
    for name in ("fft", "ifft", "fftn", "ifftn"):
        check(getattr(clnp.fft, name)(xd, norm=norm), getattr(np.fft, name)(x, norm=norm), d)
    for name in ("rfft", "ihfft", "rfftn"):
        check(getattr(clnp.fft, name)(xrd, norm=norm), getattr(np.fft, name)(xr, norm=norm), d)
    for name in ("irfft", "hfft", "irfftn"):
        check(getattr(clnp.fft, name)(xd, norm=norm), getattr(np.fft, name)(x, norm=norm), rd)
    # round trips with matching norms
    check(clnp.fft.ifft(clnp.fft.fft(xd, norm=norm), norm=norm), x, d)
    check(clnp.fft.irfft(clnp.fft.rfft(xrd, norm=norm), n=12, norm=norm), xr, rd)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2])
def test_axes_and_strides(device, rng, axis):
    """Any axis; transposed, stepped and reversed views are read in place."""
    base = _complex_data(rng, (6, 5, 8))
    d = np.complex128 if device.has_fp64 else np.complex64
    rd = np.float64 if device.has_fp64 else np.float32
    b = clnp.asarray(base.astype(d), device=device)
    br = clnp.asarray(base.real.astype(rd), device=device)
    views = [(b, base), (clnp.permute_dims(b, (2, 0, 1)), base.transpose(2, 0, 1)),
             (b[::2, :, ::-1], base[::2, :, ::-1]), (b[:, 1:4, 1::3], base[:, 1:4, 1::3])]
    for v, ref in views:
        ref = ref.astype(d)
        check(clnp.fft.fft(v, axis=axis), np.fft.fft(ref, axis=axis), d)
        check(clnp.fft.irfft(v, axis=axis, n=7), np.fft.irfft(ref, axis=axis, n=7), rd)
    for v, ref in [(br[::-1, ::2], base.real[::-1, ::2]),
                   (clnp.permute_dims(br, (1, 2, 0)), base.real.transpose(1, 2, 0))]:
        ref = ref.astype(rd)
        check(clnp.fft.rfft(v, axis=axis), np.fft.rfft(ref, axis=axis), d)
        check(clnp.fft.ihfft(v, axis=axis, n=9), np.fft.ihfft(ref, axis=axis, n=9), d)


def test_many_batch_dims(device, rng):
    """A view whose batch dims do not collapse to three strides (copied first)."""
    base = rng.standard_normal((3, 4, 5, 6, 7))
    rd = np.float64 if device.has_fp64 else np.float32
    v = clnp.asarray(base.astype(rd), device=device)[:, ::2, :, ::-1, 1:]
    ref = base.astype(rd)[:, ::2, :, ::-1, 1:]
    check(clnp.fft.rfft(v, axis=2), np.fft.rfft(ref, axis=2), np.result_type(rd, np.complex64))
    # two batch dims that do not merge, the outer one the longer
    c = _complex_data(rng, (9, 4, 2)).astype(np.result_type(rd, np.complex64))
    check(clnp.fft.ifft(clnp.asarray(c, device=device), axis=1), np.fft.ifft(c, axis=1),
          c.dtype)


# ------------------------------------------------------------------------------ n-dimensional
SA_CASES = [
    (None, None), (None, (0,)), (None, (-1, 0)), ((3, 7), (0, 2)), ((8, -1), (2, 1)),
    ((4, 5, 6), None), ((2, 9), (1, -1)), ((5,), (1,)),
]


@pytest.mark.parametrize("s,axes", SA_CASES)
def test_nd_transforms(device, rng, s, axes):
    x = _complex_data(rng, (4, 5, 6))
    xr = rng.standard_normal((4, 5, 6))
    d = np.complex128 if device.has_fp64 else np.complex64
    rd = np.float64 if device.has_fp64 else np.float32
    x, xr = x.astype(d), xr.astype(rd)
    xd, xrd = clnp.asarray(x, device=device), clnp.asarray(xr, device=device)
    npx = {"s": s, "axes": axes} if axes is not None or s is None else {
        "s": s, "axes": list(range(3 - len(s), 3))}
    kw = {"s": s, "axes": axes}
    check(clnp.fft.fftn(xd, **kw), np.fft.fftn(x, **npx), d)
    check(clnp.fft.ifftn(xd, norm="ortho", **kw), np.fft.ifftn(x, norm="ortho", **npx), d)
    check(clnp.fft.rfftn(xrd, **kw), np.fft.rfftn(xr, **npx), d)
    check(clnp.fft.irfftn(xd, norm="forward", **kw), np.fft.irfftn(x, norm="forward", **npx),
          rd)


# ------------------------------------------------------------------------------ dtypes
def test_dtypes(device, rng):
    x = rng.standard_normal(16)
    for rd in _rdtypes(device):
        cd = np.result_type(rd, np.complex64)
        xd = clnp.asarray(x.astype(rd), device=device)
        # real input to the complex transforms is promoted to the matching complex dtype
        check(clnp.fft.fft(xd), np.fft.fft(x.astype(rd).astype(np.float64)), cd)
        check(clnp.fft.ifftn(xd), np.fft.ifftn(x.astype(rd).astype(np.float64)), cd)
        check(clnp.fft.irfft(xd), np.fft.irfft(x.astype(rd).astype(np.float64)), rd)
        check(clnp.fft.hfft(clnp.fft.fft(xd)), np.fft.hfft(np.fft.fft(x.astype(rd))), rd,
              1e-4 if rd == np.float32 else None)
    h = clnp.asarray(x.astype(np.float16), device=device)
    check(clnp.fft.rfft(h), np.fft.rfft(x.astype(np.float16).astype(np.float64)),
          np.complex64)


def test_errors(device):
    i = clnp.asarray(np.arange(8), device=device)
    b = clnp.asarray(np.ones(8, bool), device=device)
    c = clnp.asarray(np.ones(8, np.complex64), device=device)
    f = clnp.asarray(np.ones((2, 8), np.float32), device=device)
    for name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn", "rfftn",
                 "irfftn"):
        for bad in (i, b):
            with pytest.raises(TypeError, match=f"{name}.*{bad.dtype}"):
                getattr(clnp.fft, name)(bad)
        with pytest.raises(TypeError, match=name):
            getattr(clnp.fft, name)(np.ones(8))
    for name in ("rfft", "ihfft", "rfftn"):
        with pytest.raises(TypeError, match=f"{name}.*complex64"):
            getattr(clnp.fft, name)(c)
    for name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
        for n in (0, -3):
            with pytest.raises(ValueError, match=name):
                getattr(clnp.fft, name)(f, n=n)
        with pytest.raises(TypeError, match=name):
            getattr(clnp.fft, name)(f, n=2.5)
        with pytest.raises(ValueError, match="norm"):
            getattr(clnp.fft, name)(f, norm="sideways")
        with pytest.raises(IndexError):
            getattr(clnp.fft, name)(f, axis=2)
    with pytest.raises(ValueError, match="irfft"):
        clnp.fft.irfft(clnp.asarray(np.ones((3, 1), np.complex64), device=device))
    with pytest.raises(ValueError, match="fftn"):
        clnp.fft.fftn(f, s=(2, 2), axes=(0,))
    with pytest.raises(ValueError, match="fftn"):
        clnp.fft.fftn(f, s=(0,), axes=(0,))
    with pytest.raises(IndexError):
        clnp.fft.rfftn(f, axes=(0, 5))
    for name in ("fftfreq", "rfftfreq"):
        with pytest.raises(ValueError, match=name):
            getattr(clnp.fft, name)(0, device=device)
        with pytest.raises(TypeError, match=name):
            getattr(clnp.fft, name)(4, dtype=clnp.int32, device=device)
        with pytest.raises(TypeError, match=name):
            getattr(clnp.fft, name)(4.5, device=device)


# ------------------------------------------------------------------------------ helpers
@pytest.mark.parametrize("n", [1, 2, 7, 8])
def test_fftfreq(device, n):
    for d in (1.0, 0.3):
        for dtype in _rdtypes(device):
            got = clnp.fft.fftfreq(n, d=d, dtype=dtype, device=device)
            assert got.device == device
            check(got, np.fft.fftfreq(n, d), dtype, 1e-6 if dtype == np.float32 else 1e-15)
            got = clnp.fft.rfftfreq(n, d=d, dtype=dtype, device=device)
            check(got, np.fft.rfftfreq(n, d), dtype, 1e-6 if dtype == np.float32 else 1e-15)
    assert clnp.fft.fftfreq(n, device=device).dtype == device.default_float


@pytest.mark.parametrize("axes", [None, 0, -1, (0, 2), (2, 1, 0)])
def test_shifts(device, rng, axes):
    x = rng.standard_normal((4, 5, 3)).astype(np.float32)
    xd = clnp.asarray(x, device=device)
    for name in ("fftshift", "ifftshift"):
        got = getattr(clnp.fft, name)(xd, axes=axes)
        assert got.dtype == xd.dtype
        np.testing.assert_array_equal(got.to_numpy(), getattr(np.fft, name)(x, axes=axes))
    np.testing.assert_array_equal(
        clnp.fft.ifftshift(clnp.fft.fftshift(xd, axes=axes), axes=axes).to_numpy(), x)


# ------------------------------------------------------------------------------ property
@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # device is stateless
@given(shape=st.lists(st.integers(1, 9), min_size=1, max_size=3), data=st.data())
def test_fft_property(device, shape, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16), label="seed"))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1), label="axis")
    n = data.draw(st.none() | st.integers(1, 24), label="n")
    norm = data.draw(st.sampled_from(NORMS), label="norm")
    name = data.draw(st.sampled_from(["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]),
                     label="name")
    if name in ("irfft", "hfft") and n is None and shape[axis] == 1:
        n = 1
    d = np.float64 if device.has_fp64 else np.float32
    real_in = name in ("rfft", "ihfft")
    x = rng.standard_normal(shape) if real_in else _complex_data(rng, shape)
    x = x.astype(d if real_in else np.result_type(d, np.complex64))
    got = getattr(clnp.fft, name)(clnp.asarray(x, device=device), n=n, axis=axis, norm=norm)
    want = getattr(np.fft, name)(x, n=n, axis=axis, norm=norm)
    check(got, want, want.dtype)
