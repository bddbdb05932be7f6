"""Differentiation and batching of dot_general (matmul, tensordot, vecdot) against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad as cg


@pytest.fixture
def f64(device):
    if not device.has_fp64:
        pytest.skip("float64 comparison")
    return device


def test_matmul_grads(f64, rng):
    A, B, C = rng.random((3, 4)), rng.random((2, 4, 5)), rng.random((2, 3, 5))
    a, b, c = (clnp.asarray(v, device=f64) for v in (A, B, C))
    ga, gb = cg.grad(lambda a, b: clnp.sum((a @ b) * c), argnums=(0, 1))(a, b)
    np.testing.assert_allclose(np.asarray(ga), (C @ B.transpose(0, 2, 1)).sum(0), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gb), A.T @ C, rtol=1e-12)
    # 1-D operands and transposed views
    v = clnp.asarray(rng.random(4), device=f64)
    gv = cg.grad(lambda v: clnp.sum(a.T.T @ v) ** 2)(v)
    np.testing.assert_allclose(np.asarray(gv), 2 * (A @ np.asarray(v)).sum() * A.sum(0),
                               rtol=1e-12)


def test_tensordot_vecdot_grads_and_jvp(f64, rng):
    T, B = rng.random((2, 3, 4)), rng.random((5, 4))
    t, b = clnp.asarray(T, device=f64), clnp.asarray(B, device=f64)
    g = cg.grad(lambda t: clnp.sum(clnp.tensordot(t, b, axes=([2], [1])) ** 2))(t)
    np.testing.assert_allclose(np.asarray(g), 2 * np.tensordot(T, B, axes=([2], [1])) @ B,
                               rtol=1e-12)
    A = rng.random((3, 4))
    a = clnp.asarray(A, device=f64)
    r = (A * A).sum(-1)
    gv = cg.grad(lambda v: clnp.sum(clnp.vecdot(v, a) ** 2))(a)
    np.testing.assert_allclose(np.asarray(gv), 2 * r[:, None] * A, rtol=1e-12)
    tan = clnp.asarray(rng.random((3, 4)), device=f64)
    _, t_out = cg.jvp(lambda a: a @ a.T, (a,), (tan,))
    Th = np.asarray(tan)
    np.testing.assert_allclose(np.asarray(t_out), Th @ A.T + A @ Th.T, rtol=1e-12)


def test_vmap_matmul(device, rng):
    X, B = rng.random((6, 3, 4)).astype(np.float32), rng.random((4, 5)).astype(np.float32)
    x, b = clnp.asarray(X, device=device), clnp.asarray(B, device=device)
    np.testing.assert_allclose(np.asarray(cg.vmap(lambda m: m @ b)(x)), X @ B, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(cg.vmap(lambda m: b.T @ m.T)(x)),
                               np.swapaxes(X @ B, 1, 2), rtol=1e-5)
    Y = rng.random((6, 4, 2)).astype(np.float32)
    y = clnp.asarray(Y, device=device)
    np.testing.assert_allclose(np.asarray(cg.vmap(lambda p, q: p @ q)(x, y)), X @ Y, rtol=1e-5)
