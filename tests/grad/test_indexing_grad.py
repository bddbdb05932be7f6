"""Gradients through integer-array indexing (gather -> scatter-add), boolean masks and
``x[idx] = v`` on traced arrays; batching of gathers."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad as cg


@pytest.fixture
def f64(device):
    if not device.has_fp64:
        pytest.skip("finite differences need float64")
    return device


def fd_grad(fnp, A, eps=1e-6):
    g = np.zeros_like(A)
    for idx in np.ndindex(A.shape):
        E = np.zeros_like(A)
        E[idx] = eps
        g[idx] = (fnp(A + E) - fnp(A - E)) / (2 * eps)
    return g


def test_fancy_indexing_grads(f64, rng):
    A = rng.random((5, 3))
    a = clnp.asarray(A, device=f64)
    rows = [0, 2, 2, 4, -1]              # repeated indices must add up
    g = cg.grad(lambda a: clnp.sum(a[clnp.asarray(rows, device=f64)] ** 2))(a)
    ref = np.zeros_like(A)
    np.add.at(ref, rows, 2 * A[rows])
    np.testing.assert_allclose(np.asarray(g), ref, rtol=1e-12)
    g2 = cg.grad(lambda a: clnp.sum(clnp.take(a, clnp.asarray([1, 1, 0], device=f64),
                                              axis=1) ** 3))(a)
    ref2 = np.zeros_like(A)
    np.add.at(ref2, (slice(None), [1, 1, 0]), 3 * A[:, [1, 1, 0]] ** 2)
    np.testing.assert_allclose(np.asarray(g2), ref2, rtol=1e-12)
    g3 = cg.grad(lambda a: clnp.sum(clnp.sin(a[a > 0.5])))(a)
    np.testing.assert_allclose(np.asarray(g3), np.where(A > 0.5, np.cos(A), 0.0), rtol=1e-12)
    # jvp through a gather
    t = clnp.asarray(rng.random((5, 3)), device=f64)
    _, jt = cg.jvp(lambda a: a[clnp.asarray([4, 0], device=f64), 1:], (a,), (t,))
    np.testing.assert_allclose(np.asarray(jt), np.asarray(t)[[4, 0], 1:])


def test_setitem_on_tracers(f64, rng):
    A = rng.random((4, 3))
    a = clnp.asarray(A, device=f64)

    def f(x, xp):
        b = x * 2.0
        b[1] = x[0] ** 2
        b[:, 2] = 0.0
        ix = (lambda v: clnp.asarray(v, device=x.device)) if xp is clnp else np.asarray
        b[ix([3, 0]), ix([0, 1])] = x[2, :2] * 3.0
        b[b > 1.5] = -1.0
        return xp.sum(b ** 2)
    np.testing.assert_allclose(float(f(a, clnp)), f(A, np), rtol=1e-12)
    g = cg.grad(lambda x: f(x, clnp))(a)
    np.testing.assert_allclose(np.asarray(g), fd_grad(lambda X: f(X.copy(), np), A), atol=1e-6)
    # assigning into an argument rebinds the tracer only; the caller's array is untouched
    def h(x):
        x[0] = 1.0
        return clnp.sum(x ** 2)
    gh = cg.grad(h)(a)
    np.testing.assert_allclose(np.asarray(gh)[0], 0.0)
    np.testing.assert_allclose(np.asarray(gh)[1:], 2 * A[1:], rtol=1e-12)
    np.testing.assert_allclose(np.asarray(a), A)


def test_setitem_through_view_raises(device):
    a = clnp.ones((3, 2), device=device)

    def f(x):
        v = x[1]
        v[0] = 5.0
        return clnp.sum(x)
    with pytest.raises(TypeError, match="view of a traced array"):
        cg.grad(f)(a)


def test_vmap_gather(device, rng):
    X = rng.random((4, 6)).astype(np.float32)
    x = clnp.asarray(X, device=device)
    idx = np.array([[0, 5], [1, 1], [2, 3], [4, 0]])
    got = cg.vmap(lambda r, j: r[j])(x, clnp.asarray(idx, device=device))
    np.testing.assert_allclose(np.asarray(got), np.take_along_axis(X, idx, 1))
    got2 = cg.vmap(lambda r: r[clnp.asarray([3, 1], device=device)])(x)
    np.testing.assert_allclose(np.asarray(got2), X[:, [3, 1]])
    got3 = cg.vmap(lambda r: (r.__setitem__(0, 5.0), r)[1])(x)
    ref = X.copy()
    ref[:, 0] = 5.0
    np.testing.assert_allclose(np.asarray(got3), ref)
