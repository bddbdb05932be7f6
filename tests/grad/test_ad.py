"""clnp_grad: JVP vs central differences and VJP by the inner-product identity, for every
differentiable elementwise op of the table and the structural primitives; composition; errors."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad as cg
from clnp._kernels import op_table as _ops
from clnp_grad import _rules as R

EPS = 1e-6


def _f64(device):
    if not device.has_fp64:
        pytest.skip("finite-difference checks need float64")


def _rand(rng, shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape)


def check_grads(f, args, device, rng, rtol=1e-6, atol=1e-7):
    """JVP == central differences along a random direction; <ct, J t> == <J^T ct, t>."""
    xs = [clnp.asarray(a, device=device) for a in args]
    ts_h = [rng.standard_normal(a.shape) for a in args]
    ts = [clnp.asarray(t, device=device) for t in ts_h]
    out, t_out = cg.jvp(f, xs, ts)
    plus = f(*[clnp.asarray(a + EPS * t, device=device) for a, t in zip(args, ts_h)])
    minus = f(*[clnp.asarray(a - EPS * t, device=device) for a, t in zip(args, ts_h)])
    fd = (np.asarray(plus) - np.asarray(minus)) / (2 * EPS)
    np.testing.assert_allclose(np.asarray(t_out), fd, rtol=1e-5, atol=1e-6)
    out2, f_vjp = cg.vjp(f, *xs)
    np.testing.assert_allclose(np.asarray(out2), np.asarray(out), rtol=rtol, atol=atol)
    ct_h = rng.standard_normal(np.shape(np.asarray(out)))
    cts = f_vjp(clnp.asarray(ct_h, device=device))
    lhs = float(np.sum(ct_h * np.asarray(t_out)))
    rhs = sum(float(np.sum(np.asarray(c) * t)) for c, t in zip(cts, ts_h))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-9, atol=1e-9)


ELEMENTWISE = sorted(n for n, rec in _ops.OPS.items()
                     if R.differentiable_op(n) and rec.nin <= 3 and n not in (
                         "floor_divide", "remainder", "nextafter", "sign", "ceil", "floor",
                         "trunc", "round", "where", "conj", "real", "imag", "copy"))


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_elementwise_rules(name, device, rng):
    _f64(device)
    rec = _ops.OPS[name]
    lo, hi = rec.domain
    if name in ("acos", "asin", "atanh"):
        lo, hi = -0.8, 0.8
    if name in ("log", "log2", "log10", "sqrt", "reciprocal", "acosh", "pow"):
        lo, hi = (1.2, 3.0)
    if name == "tan":
        lo, hi = -1.2, 1.2
    if name in ("maximum", "minimum", "clip", "hypot", "atan2", "copysign"):
        lo, hi = 0.3, 2.0  # avoid ties and zeros where the derivative jumps
    shapes = [(3, 4)] + [(4,)] * (rec.nin - 1)  # broadcasting exercises unbroadcast
    args = [_rand(rng, s, lo, hi) for s in shapes]
    if name == "clip":
        args = [_rand(rng, (3, 4), 0.0, 3.0), np.full((4,), 1.0), np.full((4,), 2.0)]
        args[0] = np.where(np.abs(args[0] - 1.0) < 0.05, 0.5, args[0])
        args[0] = np.where(np.abs(args[0] - 2.0) < 0.05, 2.5, args[0])
    fn = getattr(clnp, name)
    check_grads(lambda *a: fn(*a), args, device, rng)


STRUCTURAL = {
    "sum_axis": (lambda x: clnp.sum(x * x, axis=1), [(3, 4)]),
    "sum_all": (lambda x: clnp.sum(clnp.sin(x)), [(3, 4)]),
    "mean_keepdims": (lambda x: clnp.mean(x, axis=0, keepdims=True) * x, [(3, 4)]),
    "prod": (lambda x: clnp.prod(x, axis=0), [(3, 4)]),
    "max": (lambda x: clnp.max(x, axis=1), [(3, 4)]),
    "min_all": (lambda x: clnp.min(x), [(5,)]),
    "var_std": (lambda x: clnp.var(x, axis=0) + clnp.std(x, axis=1, keepdims=True), [(3, 4)]),
    "reshape_T": (lambda x: clnp.reshape(x.T, (2, 6)) * 2.0, [(3, 4)]),
    "slices": (lambda x: x[1:, ::-2] * x[:2, 1:3], [(3, 4)]),
    "step_slice": (lambda x: x[::3] + 1.0, [(10,)]),
    "expand_squeeze": (lambda x: clnp.squeeze(clnp.expand_dims(x, axis=1), axis=1) ** 2,
                       [(3, 4)]),
    "broadcast": (lambda x, y: clnp.broadcast_to(x, (2, 3, 4)) * y, [(3, 4), (2, 1, 4)]),
    "concat_stack": (lambda x, y: clnp.concat([x, clnp.sin(y)], axis=0) * 2.0,
                     [(2, 4), (3, 4)]),
    "stack": (lambda x, y: clnp.stack([x, y], axis=1), [(3,), (3,)]),
    "where": (lambda x, y: clnp.where(x > 0, x * y, y), [(3, 4), (3, 4)]),
    "astype_copy": (lambda x: clnp.astype(x, clnp.float64, copy=True) * x, [(4,)]),
    "shared_intermediate": (lambda x: (lambda y: y[:, 1:] * y[:, :3])(clnp.flip(x, axis=0)),
                            [(3, 4)]),
    "flip_roll": (lambda x: clnp.roll(clnp.flip(x, axis=0), 1, axis=1) * x, [(3, 4)]),
    "matrix_transpose": (lambda x: x.mT * x.mT, [(2, 3, 4)]),
}


@pytest.mark.parametrize("case", sorted(STRUCTURAL))
def test_structural_rules(case, device, rng):
    _f64(device)
    f, shapes = STRUCTURAL[case]
    args = [_rand(rng, s, 0.5, 2.0) for s in shapes]
    if case in ("max", "min_all"):
        args = [a + np.arange(a.size).reshape(a.shape) * 1e-2 for a in args]  # no ties
    if case == "where":
        args[0] = np.where(np.abs(args[0]) < 0.05, 0.5, _rand(rng, shapes[0]))
    check_grads(f, args, device, rng)


def test_grad_matches_analytic_and_argnums(device, rng):
    _f64(device)
    a = rng.uniform(0.5, 2.0, (5,))
    b = rng.uniform(0.5, 2.0, (5,))
    x, y = clnp.asarray(a, device=device), clnp.asarray(b, device=device)

    def f(x, y):
        return clnp.sum(clnp.log(x) * y + x * x)
    gx = cg.grad(f)(x, y)
    np.testing.assert_allclose(np.asarray(gx), b / a + 2 * a, rtol=1e-12)
    gx2, gy = cg.grad(f, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(np.asarray(gy), np.log(a), rtol=1e-12)
    v, g = cg.value_and_grad(f, argnums=1)(x, y)
    np.testing.assert_allclose(float(v), np.sum(np.log(a) * b + a * a), rtol=1e-12)
    (g3, aux) = cg.grad(lambda x: (clnp.sum(x ** 3), x * 2), has_aux=True)(x)
    np.testing.assert_allclose(np.asarray(g3), 3 * a ** 2, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(aux), 2 * a)


def test_pytree_arguments(device, rng):
    _f64(device)
    params = {"w": clnp.asarray(rng.standard_normal((3, 2)), device=device),
              "b": (clnp.asarray(rng.standard_normal(2), device=device), None)}
    x = clnp.asarray(rng.standard_normal((4, 3)), device=device)

    def loss(p, x):
        h = clnp.sum(x[:, :, None] * p["w"][None], axis=1) + p["b"][0]
        return clnp.mean(clnp.tanh(h) ** 2)
    g = cg.grad(loss)(params, x)
    assert set(g) == {"w", "b"} and g["b"][1] is None
    w = np.asarray(params["w"])
    h = np.asarray(x) @ w + np.asarray(params["b"][0])
    dh = 2 * np.tanh(h) * (1 - np.tanh(h) ** 2) / h.size
    np.testing.assert_allclose(np.asarray(g["w"]), np.asarray(x).T @ dh, rtol=1e-10)
    np.testing.assert_allclose(np.asarray(g["b"][0]), dh.sum(0), rtol=1e-10)


def test_higher_order(device):
    _f64(device)
    x = clnp.asarray(0.7, device=device)
    f = lambda t: clnp.sin(t) * t * t  # noqa: E731
    d1 = cg.grad(f)
    d2 = cg.grad(d1)
    d3 = cg.grad(d2)
    s, c, t = np.sin(0.7), np.cos(0.7), 0.7
    np.testing.assert_allclose(float(d1(x)), c * t * t + 2 * t * s, rtol=1e-12)
    np.testing.assert_allclose(float(d2(x)), -s * t * t + 4 * t * c + 2 * s, rtol=1e-12)
    np.testing.assert_allclose(float(d3(x)), -c * t * t - 6 * t * s + 6 * c, rtol=1e-12)
    # jvp of grad: the Hessian-vector product of sum(x**3) is 6 x v
    xv = clnp.asarray([1.0, 2.0], device=device)
    v = clnp.asarray([0.5, -1.0], device=device)
    _, hv = cg.jvp(cg.grad(lambda z: clnp.sum(z ** 3)), (xv,), (v,))
    np.testing.assert_allclose(np.asarray(hv), 6 * np.array([1.0, 2.0]) * [0.5, -1.0])


def test_stop_gradient_and_constants(device):
    _f64(device)
    x = clnp.asarray([1.0, 2.0], device=device)
    g = cg.grad(lambda x: clnp.sum(x * cg.stop_gradient(x)))(x)
    np.testing.assert_allclose(np.asarray(g), [1.0, 2.0])
    g0 = cg.grad(lambda x: clnp.sum(clnp.ones(2, device=device)) + 0.0 * clnp.sum(x))(x)
    np.testing.assert_allclose(np.asarray(g0), [0.0, 0.0])
    gi = cg.grad(lambda x: clnp.sum(clnp.astype(x > 1.5, clnp.float64) * x))(x)
    np.testing.assert_allclose(np.asarray(gi), [0.0, 1.0])


def test_errors(device):
    x = clnp.asarray([1.0, 2.0], dtype=clnp.float32, device=device)
    with pytest.raises(TypeError, match="scalar"):
        cg.grad(lambda x: x * 2)(x)
    with pytest.raises(TypeError, match="int32"):
        cg.grad(lambda x: clnp.sum(x))(clnp.asarray([1, 2], dtype=clnp.int32, device=device))
    with pytest.raises(ValueError, match="argnums"):
        cg.grad(lambda x: clnp.sum(x), argnums=3)(x)
    with pytest.raises(cg.ConcretizationError, match="clnp.where"):
        cg.grad(lambda x: clnp.sum(x) if clnp.sum(x) > 0 else -clnp.sum(x))(x)
    with pytest.raises(cg.ConcretizationError, match="float"):
        cg.grad(lambda x: float(clnp.sum(x)) * clnp.sum(x))(x)
    leaked = []
    cg.grad(lambda x: leaked.append(x * 2) or clnp.sum(x))(x)
    with pytest.raises(cg.LeakedTracerError, match="finished"):
        clnp.sum(leaked[0])
    with pytest.raises(ValueError, match="structures"):
        cg.jvp(lambda x: x, (x,), (x, x))


def test_tree_utilities():
    import dataclasses
    from collections import namedtuple
    P = namedtuple("P", "a b")

    @dataclasses.dataclass
    class D:
        x: object
        name: str = dataclasses.field(default="n", metadata={"static": True})
    tree = {"k": [1, (2, None)], "p": P(3, 4), "d": D(5)}
    leaves, td = cg.tree_flatten(tree)
    assert leaves == [5, 1, 2, 3, 4]
    back = cg.tree_unflatten(td, leaves)
    assert back["p"] == P(3, 4) and back["k"] == [1, (2, None)] and back["d"].x == 5
    assert back["d"].name == "n"
    doubled = cg.tree_map(lambda v: v * 2, tree)
    assert doubled["p"].b == 8 and cg.tree_leaves(doubled) == [10, 2, 4, 6, 8]
    with pytest.raises(ValueError, match="structures differ"):
        cg.tree_map(lambda a, b: a, [1, 2], [1])

    class Box:
        def __init__(self, v):
            self.v = v
    cg.register_pytree_node(Box, lambda b: ([b.v], None), lambda aux, ch: Box(ch[0]))
    assert cg.tree_map(lambda v: v + 1, [Box(1)])[0].v == 2


def test_abs_of_complex_follows_jax(device):
    """|z| is not holomorphic: jvp gives Re(conj(z)/|z| t), grad gives conj(z)/|z|."""
    if not device.has_fp64:
        pytest.skip("needs float64")
    zh = np.array([1 + 2j, -3 + 0.5j])
    th = np.array([1j, 2 - 1j])
    z, t = clnp.asarray(zh, device=device), clnp.asarray(th, device=device)
    _, tan = cg.jvp(lambda v: clnp.abs(v), (z,), (t,))
    np.testing.assert_allclose(np.asarray(tan), np.real(np.conj(zh) / np.abs(zh) * th))
    g = cg.grad(lambda v: clnp.sum(clnp.abs(v)))(z)
    np.testing.assert_allclose(np.asarray(g), np.conj(zh) / np.abs(zh))


def test_absent_results_stay_none_under_transforms(device):
    """qr(mode="r") has no Q: interpreters must pass the None through, not trace it."""
    seen = []

    def f(a):
        q, r = clnp._core.prims.primitive("qr").bind(a, mode="r")
        seen.append(q)
        return clnp.sum(r * r)

    a = clnp.asarray(np.random.default_rng(0).standard_normal((2, 4, 3)).astype(np.float32),
                     device=device)
    cg.vmap(f)(a)
    cg.jvp(f, (a[0],), (a[1],))
    assert seen == [None, None]


@pytest.mark.parametrize("name", ["maximum", "minimum", "clip", "copysign"])
def test_selecting_partials_keep_the_dtype(device, name):
    # the partials of ops that select an input are 0/1 masks; built from two Python floats
    # they were float64, so a float32 gradient ran in double precision and cast back
    x = clnp.asarray(np.array([-1.0, 0.0, 0.5, 2.0], np.float32), device=device)
    fns = {"maximum": lambda v: clnp.sum(clnp.maximum(v, 0.0) * 3.0),
           "minimum": lambda v: clnp.sum(clnp.minimum(v, 0.0) * 3.0),
           "clip": lambda v: clnp.sum(clnp.clip(v, -0.5, 1.0) * 3.0),
           "copysign": lambda v: clnp.sum(clnp.copysign(v, -1.0) * 3.0)}
    want = {"maximum": [0.0, 1.5, 3.0, 3.0], "minimum": [3.0, 1.5, 0.0, 0.0],
            "clip": [0.0, 3.0, 3.0, 0.0], "copysign": [3.0, -3.0, -3.0, -3.0]}
    g = cg.jit(cg.grad(fns[name]))
    assert "float64" not in g.lower(x).as_text()
    out = g(x)
    assert out.dtype == clnp.float32
    np.testing.assert_array_equal(np.asarray(out), np.array(want[name], np.float32))
