"""Transformations nested three and four deep, against JAX (issue #26).

Every composition ``T1(T2(T3(f)))`` of jit, grad, vmap, value_and_grad and jacrev is applied
to one function with lax control flow inside (``fori_loop``, ``cond`` and ``scan``), in clnp_grad
and in JAX on the same values. Where JAX computes a result, clnp_grad must compute the same
one; where JAX refuses the composition (grad of a non-scalar, say), clnp_grad must refuse it
with the same exception type. ``jit(grad(jit(f)))`` raised "a traced value reached eager
evaluation" before this module existed.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import clnp
import clnp_grad as cg

jax = pytest.importorskip("jax")
jnp = jax.numpy

TRANSFORMS = ("jit", "grad", "vmap", "value_and_grad", "jacrev")


def make_f(xp, lax):
    """A function of a vector to a scalar with a loop, a branch and a scan in it."""
    def f(x):
        y = lax.fori_loop(0, 3, lambda i, c: c * 0.9 + xp.sin(x) * 0.1, x)
        s = lax.cond(xp.sum(y) > 0, lambda v: xp.sum(v * v), lambda v: xp.sum(xp.cos(v)), y)

        def step(c, yi):
            return c * 0.5 + yi * yi, c
        c, _ = lax.scan(step, s * 0.1, y)
        return c + s
    return f


def compose(module, names, f):
    """``names[0](names[1](...(f)))`` with the transformations of ``module``."""
    for name in reversed(names):
        f = getattr(module, name)(f)
    return f


def example(names) -> np.ndarray:
    """An input for the composition: a leading batch axis of 2 per vmap in it."""
    x = np.linspace(-0.7, 0.9, 4).astype(np.float32)
    for k in range(names.count("vmap")):
        x = np.stack([x, x * (0.5 + 0.25 * k)])
    return x


def assert_same(got, want) -> None:
    got_leaves, want_leaves = cg.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    assert cg.tree_structure(got) == cg.tree_structure(
        jax.tree_util.tree_map(np.asarray, want))
    for g, w in zip(got_leaves, want_leaves):
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("names", list(itertools.product(TRANSFORMS, repeat=3)),
                         ids=lambda names: "-".join(names))
def test_three_deep_matches_jax(names, device):
    x = example(names)
    try:
        want = compose(jax, names, make_f(jnp, jax.lax))(jnp.asarray(x))
    except TypeError:
        with pytest.raises(TypeError):
            compose(cg, names, make_f(clnp, cg.lax))(clnp.asarray(x, device=device))
        return
    got = compose(cg, names, make_f(clnp, cg.lax))(clnp.asarray(x, device=device))
    assert_same(got, want)


@pytest.mark.parametrize("names", [("jit", "grad", "jit"), ("vmap", "jit", "grad", "jit"),
                                   ("jit", "value_and_grad", "jit"),
                                   ("grad", "jit", "grad", "jit")],
                         ids=lambda names: "-".join(names))
def test_the_issues_compositions(names, device):
    """The compositions issue #26 names, and a second derivative through two jits."""
    if names[0] == "grad":
        x = np.float32(0.3)

        def f(xp):
            return lambda s: xp.sum(xp.sin(s * xp.asarray([1.0, 2.0, 3.0])) * s)
    else:
        x = example(names)

        def f(xp):
            return lambda v: xp.sum(xp.sin(v) * v)
    want = compose(jax, names, f(jnp))(jnp.asarray(x))
    got = compose(cg, names, f(clnp))(clnp.asarray(x, device=device))
    assert_same(got, want)


def test_eye_inside_jit(device):
    """clnp.eye wrote through a reshaped view; under jit that write went missing."""
    out = cg.jit(lambda a: a + clnp.eye(3, 4, k=1, device=device))(
        clnp.ones((3, 4), device=device))
    np.testing.assert_array_equal(np.asarray(out), 1 + np.eye(3, 4, k=1))


def test_write_through_a_view_inside_jit_is_refused(device):
    def f(a):
        flat = clnp.reshape(a, (-1,))
        flat[0] = 5.0
        return a
    with pytest.raises(TypeError, match="cannot write through a view of a traced array"):
        cg.jit(f)(clnp.ones((2, 2), device=device))


def test_jacrev_and_jacfwd_of_pytree_outputs(device):
    def f(xp):
        return lambda v: (xp.sum(v) * v, {"a": xp.sin(v[:2])})
    x = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    for name in ("jacrev", "jacfwd"):
        want = getattr(jax, name)(f(jnp))(jnp.asarray(x))
        got = getattr(cg, name)(f(clnp))(clnp.asarray(x, device=device))
        assert_same(got, want)
    want = jax.jacrev(lambda a, b: jnp.sum(a * b) * a, argnums=(0, 1))(x, x)
    got = cg.jacrev(lambda a, b: clnp.sum(a * b) * a, argnums=(0, 1))(
        clnp.asarray(x, device=device), clnp.asarray(x, device=device))
    assert_same(got, want)
