"""Every transformation takes Python scalars, NumPy values and pytrees (lists) of them, as
JAX does: a Python float is a weakly typed 0-d array of the default float dtype; integer
inputs to differentiation raise TypeError naming the argument. Values are checked against
the derivatives of f(x) = x**3 - 2x computed by hand (NumPy)."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad as cg


@pytest.fixture
def on(device):
    """Make ``device`` the default one (where Python scalars go) for the test."""
    prev = clnp.default_device()
    clnp.set_default_device(device)
    yield device
    clnp.set_default_device(prev)


def f(x):
    return x * x * x - 2 * x


def df(x):
    return 3 * x * x - 2


def d2f(x):
    return 6 * x


def _scalar(r, value, device):
    """``r`` is a 0-d array of the default float dtype holding ``value``."""
    assert isinstance(r, clnp.Array) and r.shape == ()
    assert r.dtype == device.default_float
    assert r.device is device
    np.testing.assert_allclose(float(r), value, rtol=1e-6)


def test_grad_and_value_and_grad(on):
    _scalar(cg.grad(f)(3.0), df(3.0), on)
    v, g = cg.value_and_grad(f)(1.5)
    _scalar(v, f(1.5), on)
    _scalar(g, df(1.5), on)
    g0, g1 = cg.grad(lambda a, b: a * b * b, argnums=(0, 1))(2.0, 3.0)
    _scalar(g0, 9.0, on)
    _scalar(g1, 12.0, on)
    # a non-differentiated argument may be a Python int
    _scalar(cg.grad(lambda x, k: x ** k)(2.0, 3), 12.0, on)


def test_vjp_and_jvp(on):
    out, f_vjp = cg.vjp(f, 2.0)
    _scalar(out, f(2.0), on)
    (ct,) = f_vjp(clnp.asarray(1.0, device=on))
    _scalar(ct, df(2.0), on)
    p, t = cg.jvp(f, (2.0,), (1.0,))
    _scalar(p, f(2.0), on)
    _scalar(t, df(2.0), on)
    # a Python tangent takes an array primal's dtype
    x32 = clnp.asarray(2.0, dtype=clnp.float32, device=on)
    p, t = cg.jvp(f, (x32,), (1.0,))
    assert t.dtype == clnp.float32
    np.testing.assert_allclose(float(t), df(2.0), rtol=1e-6)


def test_jacobians_hessian_linearize(on):
    _scalar(cg.jacfwd(f)(2.0), df(2.0), on)
    _scalar(cg.jacrev(f)(2.0), df(2.0), on)
    _scalar(cg.hessian(f)(2.0), d2f(2.0), on)
    out, f_jvp = cg.linearize(f, 2.0)
    _scalar(out, f(2.0), on)
    _scalar(f_jvp(1.0), df(2.0), on)


def test_jit_and_composition(on):
    _scalar(cg.jit(f)(2.0), f(2.0), on)
    _scalar(cg.grad(cg.jit(f))(2.0), df(2.0), on)
    _scalar(cg.jit(cg.grad(f))(2.0), df(2.0), on)
    _scalar(cg.grad(cg.grad(f))(2.0), d2f(2.0), on)


def test_vmap_scalar_needs_in_axes_none(on):
    xs = np.arange(4.0)
    r = cg.vmap(lambda x, s: x * s, in_axes=(0, None))(clnp.asarray(xs, device=on), 2.5)
    np.testing.assert_allclose(r.to_numpy(), xs * 2.5)
    # a NumPy array is mapped over like a clnp one
    r = cg.vmap(cg.grad(f))(xs)
    np.testing.assert_allclose(r.to_numpy(), df(xs), rtol=1e-6)
    with pytest.raises(ValueError, match="argument 1 is a Python scalar.*in_axes=None"):
        cg.vmap(lambda x, s: x * s)(clnp.asarray(xs, device=on), 2.5)


def test_scalars_are_weakly_typed(on):
    w = clnp.ones(3, dtype=clnp.float32, device=on)
    v, g = cg.value_and_grad(lambda s: clnp.sum(s * w))(2.0)
    assert v.dtype == clnp.float32                 # s * w stays float32, as in JAX
    assert g.dtype == on.default_float             # the gradient has the input's dtype
    np.testing.assert_allclose(float(g), 3.0)
    p, t = cg.jvp(lambda s: s * w, (2.0,), (1.0,))
    assert p.dtype == t.dtype == clnp.float32
    assert cg.jit(lambda s: s * w)(2.0).dtype == clnp.float32
    for jac in (cg.jacfwd, cg.jacrev):
        j = jac(lambda s: s * w)(2.0)
        assert j.shape == (3,)
        np.testing.assert_allclose(j.to_numpy(), np.ones(3))
    np.testing.assert_allclose(float(cg.hessian(lambda s: clnp.sum(s * s * w))(2.0)), 6.0)
    assert cg.grad(lambda s: cg.jit(lambda t: t * w)(s)[0])(2.0).dtype == on.default_float
    # an array argument is strongly typed: it promotes
    s64 = clnp.asarray(2.0, device=on)
    if on.has_fp64:
        assert cg.value_and_grad(lambda s: clnp.sum(s * w))(s64)[0].dtype == clnp.float64


def test_pytrees_of_scalars_and_numpy_values(on):
    g = cg.grad(lambda p: p[0] * p[1] + p[1])([2.0, 3.0])
    assert isinstance(g, list) and len(g) == 2
    _scalar(g[0], 3.0, on)
    _scalar(g[1], 3.0, on)
    g = cg.grad(lambda d: d["a"] * d["a"])({"a": 1.5})
    _scalar(g["a"], 3.0, on)
    g = cg.grad(lambda x: clnp.sum(x * x))(np.array([1.0, 2.0]))
    assert isinstance(g, clnp.Array) and g.device is on
    np.testing.assert_allclose(g.to_numpy(), [2.0, 4.0])


@pytest.mark.parametrize("transform", ["grad", "value_and_grad", "vjp", "jvp", "jacfwd",
                                       "jacrev", "hessian"])
def test_integer_inputs_raise_naming_the_argument(on, transform):
    def call(*args):
        if transform == "vjp":
            return cg.vjp(lambda a, b: a * b, *args)
        if transform == "jvp":
            return cg.jvp(lambda a, b: a * b, args, args)
        fn = getattr(cg, transform)
        return fn(lambda a, b: a * b, argnums=(0, 1))(*args)
    with pytest.raises(TypeError, match=r"argument 1 has dtype int64.*3\.0, not 3"):
        call(2.0, 3)
    with pytest.raises(TypeError, match="argument 0 has dtype bool"):
        call(True, 3.0)
