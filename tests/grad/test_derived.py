"""jacfwd/jacrev/hessian/linearize/custom_vjp/checkpoint against closed forms and NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad as cg


@pytest.fixture
def f64(device):
    if not device.has_fp64:
        pytest.skip("closed-form comparisons at 1e-12 need float64")
    return device


def test_jacobians(f64, rng):
    a = rng.uniform(0.5, 2.0, (3,))
    x = clnp.asarray(a, device=f64)

    def f(x):
        return clnp.stack([x[0] * x[1], clnp.sin(x[2]), clnp.sum(x ** 2)])
    expect = np.array([[a[1], a[0], 0], [0, 0, np.cos(a[2])], 2 * a])
    np.testing.assert_allclose(np.asarray(cg.jacfwd(f)(x)), expect, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(cg.jacrev(f)(x)), expect, rtol=1e-12)
    m = clnp.asarray(rng.standard_normal((2, 2)), device=f64)
    jf = cg.jacfwd(lambda m: m * 2.0)(m)
    assert jf.shape == (2, 2, 2, 2)
    np.testing.assert_allclose(np.asarray(jf), 2.0 * np.eye(4).reshape(2, 2, 2, 2))
    j0, j1 = cg.jacrev(lambda x, y: x * y, argnums=(0, 1))(x, x)
    np.testing.assert_allclose(np.asarray(j0), np.diag(a), rtol=1e-12)


def test_hessian_and_linearize(f64, rng):
    a = rng.uniform(0.5, 2.0, (3,))
    x = clnp.asarray(a, device=f64)
    h = cg.hessian(lambda x: clnp.sum(x ** 3) + x[0] * x[1])(x)
    expect = np.diag(6 * a)
    expect[0, 1] = expect[1, 0] = 1.0
    np.testing.assert_allclose(np.asarray(h), expect, rtol=1e-12, atol=1e-12)
    out, f_jvp = cg.linearize(clnp.exp, x)
    v = clnp.asarray([1.0, 0.0, -1.0], device=f64)
    np.testing.assert_allclose(np.asarray(f_jvp(v)), np.exp(a) * [1, 0, -1], rtol=1e-12)
    np.testing.assert_allclose(np.asarray(out), np.exp(a), rtol=1e-12)


def test_custom_vjp_and_checkpoint(f64, rng):
    a = rng.uniform(0.5, 2.0, (4,))
    x = clnp.asarray(a, device=f64)

    @cg.custom_vjp
    def clipped_identity(x):
        return x * 1.0
    clipped_identity.defvjp(lambda x: (x * 1.0, None),
                            lambda res, ct: (clnp.clip(ct, -0.5, 0.5),))
    g = cg.grad(lambda x: clnp.sum(clipped_identity(x) * 3.0))(x)
    np.testing.assert_allclose(np.asarray(g), 0.5)
    # eager call runs the function itself
    np.testing.assert_allclose(np.asarray(clipped_identity(x)), a)
    bad = cg.custom_vjp(lambda x: x * 1.0)
    bad.defvjp(lambda x: (x * 1.0, None), lambda res, ct: (ct, ct))
    with pytest.raises(ValueError, match="2 cotangents for 1 inputs"):
        cg.grad(lambda x: clnp.sum(bad(x)))(x)
    undefined = cg.custom_vjp(lambda x: x * 1.0)
    with pytest.raises(TypeError, match="defvjp"):
        cg.grad(lambda x: clnp.sum(undefined(x)))(x)

    def block(y):
        return clnp.sin(y) * clnp.exp(y)
    g1 = cg.grad(lambda x: clnp.sum(cg.checkpoint(block)(x)))(x)
    g2 = cg.grad(lambda x: clnp.sum(block(x)))(x)
    np.testing.assert_allclose(np.asarray(g1), np.asarray(g2), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(g1), (np.cos(a) + np.sin(a)) * np.exp(a), rtol=1e-12)


def test_custom_vjp_rule_is_batched_under_vmap(device):
    """grad(vmap(f)) uses f's custom rule (vmapped), not the derivative of f's body."""
    calls = []

    @cg.custom_vjp
    def f(x, w):
        return clnp.sin(x) * w

    def fwd(x, w):
        return f(x, w), (x, w)

    def bwd(res, ct):
        x, w = res
        calls.append(x.shape)
        return ct * clnp.cos(x) * w * 2.0, ct * clnp.sin(x)   # x's rule doubled on purpose
    f.defvjp(fwd, bwd)
    xh, wh = np.linspace(0.0, 1.0, 6).reshape(3, 2), np.array([1.5, -2.0])
    x = clnp.asarray(xh, dtype=clnp.float32, device=device)
    w = clnp.asarray(wh, dtype=clnp.float32, device=device)
    gx, gw = cg.grad(lambda x, w: clnp.sum(cg.vmap(f, in_axes=(0, None))(x, w)),
                     argnums=(0, 1))(x, w)
    np.testing.assert_allclose(np.asarray(gx), 2 * np.cos(xh) * wh, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(gw), np.sin(xh).sum(axis=0), rtol=1e-5)
    assert calls == [(2,)]            # one call of bwd, under vmap (per-example shapes)
    np.testing.assert_allclose(np.asarray(cg.vmap(f, in_axes=(0, None))(x, w)),
                               np.sin(xh) * wh, rtol=1e-5)
