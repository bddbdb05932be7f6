"""vmap against an explicit Python loop over the batch; composition with grad."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad as cg

FUNCS = {
    "elementwise": lambda x, w: clnp.sin(x) * w + 1.0,
    "reduce_axis": lambda x, w: clnp.sum(x * w, axis=0) + clnp.max(x, axis=1, keepdims=True),
    "mean_var": lambda x, w: clnp.mean(x) + clnp.var(x, axis=1),
    "reshape_T": lambda x, w: clnp.reshape(x.T, (-1,)) * 2.0,
    "slicing": lambda x, w: x[1:, ::-1] + x[0],
    "concat": lambda x, w: clnp.concat([x, w[None, :]], axis=0),
    "broadcast": lambda x, w: clnp.broadcast_to(w, (2, 3, 4)) * x,
    "where": lambda x, w: clnp.where(x > 0, x, w),
    "astype": lambda x, w: clnp.astype(x, clnp.float32),
    "stack_expand": lambda x, w: clnp.stack([x, clnp.expand_dims(w, axis=0) + x]),
    "cumsum": lambda x, w: clnp.cumulative_sum(x, axis=1),
}


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_vmap_matches_loop(name, device, rng):
    f = FUNCS[name]
    dt = clnp.float64 if device.has_fp64 else clnp.float32
    xs = clnp.asarray(rng.standard_normal((5, 3, 4)), dtype=dt, device=device)
    w = clnp.asarray(rng.standard_normal(4), dtype=dt, device=device)
    got = cg.vmap(f, in_axes=(0, None))(xs, w)
    ref = np.stack([np.asarray(f(xs[i], w)) for i in range(5)])
    np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-6, atol=1e-6)


def test_in_out_axes_and_nesting(device, rng):
    a = rng.standard_normal((3, 5))
    x = clnp.asarray(a, dtype=clnp.float32, device=device)
    got = cg.vmap(lambda r: r * 2.0, in_axes=1, out_axes=1)(x)
    np.testing.assert_allclose(np.asarray(got), a * 2, rtol=1e-6)
    got2 = cg.vmap(cg.vmap(lambda v: v * v + 1.0))(x)
    np.testing.assert_allclose(np.asarray(got2), a * a + 1, rtol=1e-6)
    outer = cg.vmap(lambda u: cg.vmap(lambda v: u * v)(x[0]))(x[:, 0])
    np.testing.assert_allclose(np.asarray(outer), np.outer(a[:, 0], a[0]), rtol=1e-6)
    const = cg.vmap(lambda r: clnp.sum(r) * 0.0 + clnp.ones(2, device=device), in_axes=None,
                    axis_size=4)(x)
    assert const.shape == (4, 2)


def test_per_example_gradients(device, rng):
    if not device.has_fp64:
        pytest.skip("float64 comparison")
    X = clnp.asarray(rng.standard_normal((6, 3)), device=device)
    y = clnp.asarray(rng.standard_normal(6), device=device)
    w = clnp.asarray(rng.standard_normal(3), device=device)

    def loss(w, x, t):
        return (clnp.sum(x * w) - t) ** 2
    per = cg.vmap(cg.grad(loss), in_axes=(None, 0, 0))(w, X, y)
    Xh, yh, wh = np.asarray(X), np.asarray(y), np.asarray(w)
    ref = 2 * (Xh @ wh - yh)[:, None] * Xh
    np.testing.assert_allclose(np.asarray(per), ref, rtol=1e-12)
    # grad of vmap: the gradient of the summed per-example losses
    total = cg.grad(lambda w: clnp.sum(cg.vmap(loss, in_axes=(None, 0, 0))(w, X, y)))(w)
    np.testing.assert_allclose(np.asarray(total), ref.sum(0), rtol=1e-12)


def test_vmap_errors(device):
    x = clnp.ones((3, 2), device=device)
    with pytest.raises(ValueError, match="different sizes"):
        cg.vmap(lambda a, b: a + b)(x, clnp.ones((4, 2), device=device))
    with pytest.raises(ValueError, match="out of range"):
        cg.vmap(lambda a: a, in_axes=2)(x)
    with pytest.raises(ValueError, match="axis_size"):
        cg.vmap(lambda a: a, in_axes=None)(x)
    with pytest.raises(ValueError, match="in_axes has 1 entries for 2"):
        cg.vmap(lambda a, b: a, in_axes=(0,))(x, x)
    with pytest.raises(cg.ConcretizationError):
        cg.vmap(lambda a: a * 2 if clnp.sum(a) > 0 else a)(x)
