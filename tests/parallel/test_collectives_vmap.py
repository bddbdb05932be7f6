"""Collectives inside ``vmap(..., axis_name=...)`` on one device: every collective against
NumPy, their JVPs, and their VJPs against the transposed Jacobian built from the NumPy
oracle (so the transpose rules are checked independently of clnp)."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad as cg
from clnp_nn import parallel as P

import _parallel_oracle as _oracle

N = 3
CASES = {name: (f, ref) for name, f, ref in _oracle.cases(N)}
LINEAR = [n for n in CASES if not n.startswith(("pmax", "pmin", "axis_index"))]


def _stack_ref(ref, xs):
    return np.stack([np.asarray(o) for o in ref(list(xs))])


def _x(rng, device, dtype=np.float32):
    return rng.standard_normal((N, N, 2 * N)).astype(dtype)


@pytest.mark.parametrize("name", sorted(CASES))
def test_collective_matches_numpy(name, device, rng):
    f, ref = CASES[name]
    a = _x(rng, device)
    out = cg.vmap(f, axis_name="i")(clnp.asarray(a, device=device))
    expect = _stack_ref(ref, a)
    np.testing.assert_allclose(np.asarray(out), expect, rtol=1e-6, atol=1e-6)
    assert out.shape == expect.shape


def _jacobian(ref, shape):
    """The linear map ``ref`` (on the stacked participants) as a matrix."""
    size = int(np.prod(shape))
    cols = []
    for k in range(size):
        e = np.zeros(size)
        e[k] = 1.0
        cols.append(_stack_ref(ref, e.reshape(shape)).ravel())
    return np.stack(cols, axis=1)


@pytest.mark.parametrize("name", LINEAR)
def test_linear_collective_vjp_and_jvp(name, device, rng):
    if not device.has_fp64:
        pytest.skip("float64 reference")
    f, ref = CASES[name]
    a = _x(rng, device, np.float64)
    shape = a.shape
    jac = _jacobian(ref, shape)
    F = cg.vmap(f, axis_name="i")
    x = clnp.asarray(a, device=device)
    out, f_vjp = cg.vjp(F, x)
    ct = rng.standard_normal(out.shape)
    (g,) = f_vjp(clnp.asarray(ct, device=device))
    np.testing.assert_allclose(np.asarray(g).ravel(), jac.T @ ct.ravel(), rtol=1e-10,
                               atol=1e-12)
    t = rng.standard_normal(shape)
    _, tout = cg.jvp(F, (x,), (clnp.asarray(t, device=device),))
    np.testing.assert_allclose(np.asarray(tout).ravel(), jac @ t.ravel(), rtol=1e-10,
                               atol=1e-12)


@pytest.mark.parametrize("name", ["pmax", "pmin"])
def test_extremum_gradient_goes_to_the_winner(name, device, rng):
    f, _ = CASES[name]
    a = _x(rng, device)
    c = rng.standard_normal(a.shape).astype(np.float32)
    g = cg.grad(lambda x: clnp.sum(cg.vmap(f, axis_name="i")(x) * clnp.asarray(c, device=device)))(
        clnp.asarray(a, device=device))
    win = a == (a.max(0) if name == "pmax" else a.min(0))
    np.testing.assert_allclose(np.asarray(g), win * c.sum(0), rtol=1e-5, atol=1e-6)


def test_nested_vmap_names_and_python_scalars(device, rng):
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)

    def inner(v):      # v: (4,) ; sums over both named axes, counts participants
        return P.psum(v, "i") + P.psum(v, ("i", "j")) * 0 + P.psum(1, ("i", "j"))
    out = cg.vmap(cg.vmap(inner, axis_name="j"), axis_name="i")(clnp.asarray(a, device=device))
    np.testing.assert_allclose(np.asarray(out), np.broadcast_to(a.sum(0), a.shape) + 6,
                               rtol=1e-5)


def test_collective_under_jit_inside_vmap(device, rng):
    a = rng.standard_normal((N, 5)).astype(np.float32)
    f = cg.jit(lambda v: v - P.pmean(v, "i"))
    out = cg.vmap(f, axis_name="i")(clnp.asarray(a, device=device))
    np.testing.assert_allclose(np.asarray(out), a - a.mean(0), rtol=1e-5, atol=1e-6)


def test_errors(device):
    x = clnp.ones((N, 2), device=device)
    with pytest.raises(NameError, match="unbound axis name 'k'"):
        cg.vmap(lambda v: P.psum(v, "k"), axis_name="i")(x)
    with pytest.raises(NameError, match="unbound axis name 'i'"):
        P.psum(x, "i")
    with pytest.raises(ValueError, match="repeats a source or a destination"):
        cg.vmap(lambda v: P.ppermute(v, "i", [(0, 1), (2, 1)]), axis_name="i")(x)
    with pytest.raises(ValueError, match="outside the axis 'i' of size 3"):
        cg.vmap(lambda v: P.ppermute(v, "i", [(0, 3)]), axis_name="i")(x)
    with pytest.raises(ValueError, match="must have size 3"):
        cg.vmap(lambda v: P.psum_scatter(v, "i", scatter_dimension=0), axis_name="i")(x)
    with pytest.raises(ValueError, match="axis=3 is out of range"):
        cg.vmap(lambda v: P.all_gather(v, "i", axis=3), axis_name="i")(x)
    with pytest.raises(TypeError, match="boolean arrays cannot be summed"):
        cg.vmap(lambda v: P.psum(v > 0, "i"), axis_name="i")(x)


def test_collectives_in_control_flow_bodies(device, rng):
    from clnp_grad import lax
    a = rng.standard_normal((N, 2)).astype(np.float32)
    x = clnp.asarray(a, device=device)
    expect = a + 2 * a.sum(0)
    loops = {
        "fori_loop": lambda v: lax.fori_loop(0, 2, lambda i, c: c + P.psum(v, "i"), v),
        "scan": lambda v: lax.scan(lambda c, y: (c + P.psum(y, "i"), c), v,
                                   clnp.stack([v, v]))[0],
        "while_loop": lambda v: lax.while_loop(lambda c: c[1] < 2,
                                               lambda c: (c[0] + P.psum(v, "i"), c[1] + 1),
                                               (v, 0))[0],
    }
    for name, f in loops.items():
        np.testing.assert_allclose(np.asarray(cg.vmap(f, axis_name="i")(x)), expect,
                                   rtol=1e-5, err_msg=name)
    c = cg.vmap(lambda v: lax.cond(clnp.sum(v) > -1e9, lambda v: P.psum(v, "i"),
                                   lambda v: v, v), axis_name="i")(x)
    np.testing.assert_allclose(np.asarray(c), np.broadcast_to(a.sum(0), a.shape), rtol=1e-5)
