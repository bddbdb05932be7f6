"""Accuracy: every floating-point function of clnp within its ULP bound, on every device.

The measurement is ``tools/ulp.py`` (its docstring gives the references, the ULP metric and
the sampled points; ``docs/reliability.md`` its table, measured with 200000 points). Here each
function runs once per dtype on ``N`` points of the same sampling plus its special inputs
(zeros, infinities, NaN), whose prescribed results must be NumPy's exactly.
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import DEVICES, load_tool

import clnp
import clnp_grad as cg

ulp = load_tool("ulp")

N = 3000


def _cases():
    out = []
    for dev in DEVICES:
        for name, fn in ulp.FUNCTIONS.items():
            for d in ulp.real_dtypes(dev) + (ulp.complex_dtypes(dev) if fn.complex else []):
                out.append(pytest.param(dev, name, d, id=f"{dev.key}-{name}-{d.name}"))
    return out


@pytest.mark.parametrize("device, name, dtype", _cases())
def test_within_ulp_bound(device, name, dtype):
    r = ulp.measure(name, dtype, device, n=N, seed=1)
    assert r.points > N // 2
    assert r.ok, (f"{name} {dtype.name} on {device.key}: {r.max_ulp:.3f} ulp at "
                  f"{r.worst_input}, bound {r.bound} ({r.source})")
    if dtype.kind == "f":
        bad = ulp.special_mismatches(name, dtype, device)
        assert not bad, f"{name} {dtype.name}: (inputs, clnp, NumPy) {bad}"


def test_ulp_error_metric():
    """The metric itself: a correctly rounded result is <= 0.5 ulp, the next float 1 ulp
    further, overflow to the right infinity exact, NaN or a wrong infinity infinite."""
    d = np.dtype(np.float32)
    r = np.array([1 / 3, 1e-45 * 0.9, 2.0 ** -130 / 3, 5e38, -5e38, 1.5])
    with np.errstate(over="ignore"):
        y = r.astype(d)                                   # 5e38 -> inf
    e = ulp.ulp_error(y, r, d)
    assert (e[:3] <= 0.5).all() and e[3] == 0 and e[4] == 0 and e[5] == 0
    y2 = np.nextafter(y[:3], np.float32(np.inf))
    assert np.allclose(ulp.ulp_error(y2, r[:3], d) - e[:3], 1.0)
    bad = np.array([np.nan, np.inf, -np.inf, np.inf], d)
    assert np.isinf(ulp.ulp_error(bad, np.array([1.0, 1.0, 5e38, 1e38]), d)).all()
    # an exact result 0.51 ulp past the largest float rounds to inf: inf is exact, the largest
    # float 0.51 ulp off (the top binade's ulp continued), a result far past it is far off
    top, u = float(np.finfo(d).max), 2.0 ** 104
    e = ulp.ulp_error(np.array([np.inf, np.finfo(d).max, np.finfo(d).max], d),
                      np.array([top + 0.51 * u, top + 0.51 * u, 2 * top]), d)
    assert e[0] == 0 and abs(e[1] - 0.51) < 1e-6 and e[2] > 1e6
    # complex: normwise, in ulp of the larger component
    rc = np.array([1 + 1e-20j])
    yc = np.array([1 + 0j], np.complex64)
    assert ulp.ulp_error(yc, rc, np.dtype(np.complex64))[0] < 1e-6


def _jit_outputs(x):
    s, c = clnp.sin(x), clnp.cos(x)
    return (s, c, clnp.tan(x), clnp.tanh(s), clnp.exp(c), clnp.log1p(clnp.abs(s)),
            clnp.atan2(s, c), clnp.hypot(s, x), clnp.sqrt(clnp.abs(x)), clnp.asinh(x),
            clnp.expm1(s), clnp.pow(clnp.abs(x), c))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_jit_fused_kernels_use_the_same_templates(device, dtype):
    """A jitted chain of math functions (one fused kernel) is bit-identical to eager clnp:
    the fused kernel is generated from the same op-table templates. Large arguments are
    included (float sin/cos/tan vectors with such lanes take a lane-wise path)."""
    if not device.supports(getattr(clnp, dtype)):
        pytest.skip(f"{device.key} has no {dtype}")
    fn = ulp.FUNCTIONS["sin"]
    xs = ulp.sample(fn, np.dtype(dtype), 4001, seed=3)[0]
    x = clnp.asarray(xs, device=device)
    eager = _jit_outputs(x)
    fused = cg.jit(_jit_outputs)(x)
    for i, (a, b) in enumerate(zip(eager, fused)):
        np.testing.assert_array_equal(clnp.asnumpy(b), clnp.asnumpy(a), err_msg=f"output {i}")


def _below(t: float, dtype: np.dtype) -> np.ndarray:
    """The 64 floats just below ``t`` and points log-spaced down to ``t - 1e-5 t``."""
    d = np.dtype(dtype)
    top = d.type(t)
    last = [top]
    for _ in range(63):
        last.append(np.nextafter(last[-1], d.type(0)))
    far = (t - np.logspace(-14, -5, 192) * t).astype(d)
    return np.unique(np.concatenate([np.array(last, d), far]))


_LN_MAX = {d: float(np.log(np.finfo(d).max.astype(np.longdouble))) for d in ("float32", "float64")}
_EDGES = (("exp", lambda d: _LN_MAX[d]), ("expm1", lambda d: _LN_MAX[d]),
          ("exp2", lambda d: float(np.log2(np.finfo(d).max.astype(np.longdouble)))),
          ("sinh", lambda d: _LN_MAX[d] + np.log(2.0)), ("cosh", lambda d: _LN_MAX[d] + np.log(2.0)))


@pytest.mark.parametrize("name, edge", _EDGES, ids=[e[0] for e in _EDGES])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_below_overflow_threshold(device, name, edge, dtype):
    """Just below the overflow threshold the result is finite and within the bound, in scalar
    code and in vectors whose other lanes are ordinary (PoCL's double exp gave inf for
    x in [709.7827111564, 709.782712893384), its double sinh/cosh NaN just below 710.4758600;
    the guards in clnp/_kernels/elementwise.py). Both signs for sinh/cosh."""
    if not device.supports(getattr(clnp, dtype)):
        pytest.skip(f"{device.key} has no {dtype}")
    d = np.dtype(dtype)
    x = _below(edge(dtype), d)
    if name in ("sinh", "cosh"):
        x = np.concatenate([x, -x])
    # one edge point among 15 ordinary ones in each vector, then everything in the tail
    mixed = np.full((x.size, 16), 0.5, d)
    mixed[:, 3] = x
    x_all = np.concatenate([x, mixed.ravel(), x[:7]])
    fn = ulp.FUNCTIONS[name]
    r = ulp.reference(fn, (x_all,), d)
    y = ulp.evaluate(fn, (x_all,), device)
    err = ulp.ulp_error(y, r, d)
    b, src = ulp.bound(name, d, device)
    i = int(np.argmax(err))
    assert err[i] <= b + 1e-3, f"{name}({x_all[i]!r}) = {y[i]!r}: {err[i]:.3f} ulp > {b} ({src})"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pow_below_overflow_threshold(device, dtype):
    """pow with results just below the largest finite value is finite and within pow's bound,
    in scalar code and among ordinary vector lanes; a negative base with an odd integer
    exponent keeps its sign, and true overflows stay inf."""
    if not device.supports(getattr(clnp, dtype)):
        pytest.skip(f"{device.key} has no {dtype}")
    d = np.dtype(dtype)
    top = float(np.log2(np.finfo(d).max.astype(np.longdouble)))
    rng = np.random.default_rng(5)
    la = rng.uniform(top / 8, top / 1.5, 96)                  # log2 of the bases
    a = np.exp2(la).astype(d)
    b = ((top - np.logspace(-7, -3, 96)) / np.log2(a.astype(np.float64))).astype(d)
    a = np.concatenate([a, -(2.0 ** np.arange(16, 16 + 12 * 5, 5)).astype(d),
                        np.array([2.0 ** (top / 2 + 1), 3.0], d)])
    b = np.concatenate([b, np.floor(top / np.arange(16, 16 + 12 * 5, 5) - 1e-9).astype(d),
                        np.array([2.0, 2.5], d)])
    b[96:108] = np.where(b[96:108] % 2 == 0, b[96:108] - 1, b[96:108])    # odd exponents
    mixed_a, mixed_b = np.full((a.size, 16), 1.5, d), np.full((b.size, 16), 0.5, d)
    mixed_a[:, 5], mixed_b[:, 5] = a, b
    xa = np.concatenate([a, mixed_a.ravel(), a[:7]])
    xb = np.concatenate([b, mixed_b.ravel(), b[:7]])
    fn = ulp.FUNCTIONS["pow"]
    r = ulp.reference(fn, (xa, xb), d)
    y = ulp.evaluate(fn, (xa, xb), device)
    # (2^(top/2 + 1))^2 overflows: inf, as the reference beyond the largest finite value
    assert np.isinf(y[a.size - 2]) and r[a.size - 2] > np.finfo(d).max
    err = ulp.ulp_error(y, r, d)
    bnd, src = ulp.bound("pow", d, device)
    i = int(np.argmax(err))
    assert err[i] <= bnd + 1e-3, \
        f"pow({xa[i]!r}, {xb[i]!r}) = {y[i]!r}: {err[i]:.3f} ulp > {bnd} ({src})"


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_exp_real_axis_below_overflow(device, dtype):
    """exp(x + 0j) just below the overflow threshold is finite (the real-axis branch of cexp
    called PoCL's double exp directly), with the imaginary part's signed zero kept."""
    if not device.supports(getattr(clnp, dtype)):
        pytest.skip(f"{device.key} has no {dtype}")
    d = np.dtype(dtype)
    rd = np.finfo(d).dtype
    x = _below(_LN_MAX[rd.name], rd)
    z = np.concatenate([x + 0j, x - 0j]).astype(d)
    z.imag[x.size:] = -0.0
    y = clnp.asnumpy(clnp.exp(clnp.asarray(z, device=device)))
    r = ulp.reference(ulp.FUNCTIONS["exp"], (z.real.copy(),), rd)
    err = ulp.ulp_error(y.real.copy(), r, rd)
    assert err.max() <= ulp.SPEC[rd.name]["exp"] + 1e-3, (z[np.argmax(err)], err.max())
    np.testing.assert_array_equal(np.signbit(y.imag), np.signbit(z.imag))
    assert (y.imag == 0).all()
