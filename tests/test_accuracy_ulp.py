"""Accuracy: every floating-point function of clnp within its ULP bound, on every device.

The measurement is ``tools/ulp.py`` (its docstring gives the references, the ULP metric and
the sampled points; ``docs/reliability.md`` its table, measured with 200000 points). Here each
function runs once per dtype on ``N`` points of the same sampling plus its special inputs
(zeros, infinities, NaN), whose prescribed results must be NumPy's exactly.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import clnp
import clnp_grad as cg

from conftest import DEVICES

_PATH = Path(__file__).resolve().parents[1] / "tools" / "ulp.py"
_spec = importlib.util.spec_from_file_location("clnp_tools_ulp", _PATH)
ulp = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = ulp            # dataclasses look their module up
_spec.loader.exec_module(ulp)

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
