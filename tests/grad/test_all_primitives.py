"""Every primitive, from the op table and the primitive registry: JVP against central
differences and VJP by the inner-product identity ``Re<ct, J t> == Re<J^T ct, t>`` (float64),
and a completeness check that each registered primitive has JVP and VJP rules or is
explicitly non-differentiable."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad as cg
from clnp._kernels import op_table as _ops
from clnp._core.prims import PRIMITIVES, primitive
from clnp_grad import _ad
from clnp_grad import _rules as R

EPS = 1e-6
SHAPE = (3, 4)     # one shape (and a broadcast (4,)) for every case: kernels are shared


def _f64(device):
    if not device.has_fp64:
        pytest.skip("finite-difference checks need float64")


def _direction(rng, a):
    t = rng.standard_normal(a.shape)
    return t + 1j * rng.standard_normal(a.shape) if np.iscomplexobj(a) else t


def check_grads(f, args, device, rng, rtol=1e-5, atol=1e-6):
    """JVP of ``f`` at host arrays ``args`` == central differences along a random direction;
    its VJP satisfies ``Re<ct, J t> == Re<J^T ct, t>`` (JAX's convention for complex)."""
    xs = [clnp.asarray(a, device=device) for a in args]
    ts_h = [_direction(rng, a) for a in args]
    out, t_out = cg.jvp(f, xs, [clnp.asarray(t, device=device) for t in ts_h])
    plus = f(*[clnp.asarray(a + EPS * t, device=device) for a, t in zip(args, ts_h)])
    minus = f(*[clnp.asarray(a - EPS * t, device=device) for a, t in zip(args, ts_h)])
    fd = (np.asarray(plus) - np.asarray(minus)) / (2 * EPS)
    jt = np.asarray(t_out)
    np.testing.assert_allclose(jt, fd, rtol=rtol, atol=atol)
    out2, f_vjp = cg.vjp(f, *xs)
    np.testing.assert_allclose(np.asarray(out2), np.asarray(out), rtol=1e-12, atol=1e-12)
    ct_h = _direction(rng, np.asarray(out))
    cts = f_vjp(clnp.asarray(ct_h, device=device))
    lhs = np.real(np.sum(ct_h * jt))
    rhs = sum(np.real(np.sum(np.asarray(c) * t)) for c, t in zip(cts, ts_h))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-9, atol=1e-9)


# ------------------------------------------------------------------------------ elementwise
def _shrunk(rec):
    """The op's domain without its outer 5%: derivatives blow up at some domain edges."""
    lo, hi = rec.domain
    w = 0.05 * (hi - lo)
    return lo + w, hi - w


# kinks or poles at zero: draw magnitudes away from it (either sign)
AWAY_FROM_ZERO = {"abs", "sign", "copysign", "divide", "atan2", "hypot"}
# piecewise constant between integers (round: between half-integers too)
STEPS = {"ceil", "floor", "trunc", "round"}


def _ew_args(name, rec, rng):
    shapes = [SHAPE] + [SHAPE[-1:]] * (rec.nin - 1)
    lo, hi = _shrunk(rec)
    if name in AWAY_FROM_ZERO:
        return [rng.uniform(0.5, 0.9 * hi, s) * rng.choice([-1.0, 1.0], s) for s in shapes]
    if name in STEPS:
        return [rng.integers(-5, 5, SHAPE) + rng.uniform(0.1, 0.4, SHAPE)]
    if name in ("floor_divide", "remainder"):   # x / y stays away from integers
        y = rng.uniform(0.5, 2.0, shapes[1]) * rng.choice([-1.0, 1.0], shapes[1])
        return [y * (rng.integers(-4, 4, SHAPE) + rng.uniform(0.1, 0.4, SHAPE)), y]
    if name == "clip":
        lo_b = rng.uniform(0.5, 1.0, shapes[1])
        hi_b = lo_b + 1.5
        x = rng.uniform(0.0, 3.0, SHAPE)
        near = (np.abs(x - lo_b) < 0.1) | (np.abs(x - hi_b) < 0.1)
        return [np.where(near, lo_b + 0.7, x), lo_b, hi_b]
    return [rng.uniform(lo, hi, s) for s in shapes]


def _ew_fn(name, device):
    if name == "where":
        cond = clnp.asarray(np.arange(12).reshape(SHAPE) % 3 == 0, device=device)
        return lambda x, y: clnp.where(cond, x, y)
    if name == "copy":
        return lambda x: clnp.asarray(x, copy=True)
    return getattr(clnp, name)


FLOAT_OPS = sorted(n for n, rec in _ops.OPS.items()
                   if rec.out != "bool" and rec.accepts(np.dtype(np.float64)))
# d nextafter(x, y) / dx is 1 wherever it is defined (the result is x moved by one ulp)
KNOWN_BAD: dict[str, str] = {}     # op name -> reason, for ops whose rule is known wrong


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN_BAD[n]))
    if n in KNOWN_BAD else n for n in FLOAT_OPS])
def test_elementwise(name, device, rng):
    _f64(device)
    rec = _ops.OPS[name]
    args = _ew_args(name, rec, rng)
    if name == "where":
        args = args[1:]
    check_grads(_ew_fn(name, device), args, device, rng)


# ------------------------------------------------------------------------------ structural
def _rand(rng, shape, lo=0.5, hi=2.0):
    return rng.uniform(lo, hi, shape)


def _complex(rng, shape):
    return rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)


def _scatter(device):
    idx = clnp.asarray([2, 0, 2], device=device)
    return lambda x, v: primitive("scatter_add").bind(x, v, idx, in_bounds=False)


def _unique(x):
    return clnp.unique_values(x)


def _distinct(rng, shape):
    """Values with no ties (max/min/sort/unique stay differentiable)."""
    return rng.permutation(np.prod(shape)).reshape(shape) * 0.25 + _rand(rng, shape, 0, 0.1)


# name -> (primitives it covers, function, argument builder)
STRUCTURAL = {
    "sum": ({"reduce"}, lambda x: clnp.sum(x * x, axis=1), lambda r: [_rand(r, SHAPE)]),
    "prod": ({"reduce"}, lambda x: clnp.prod(x, axis=0), lambda r: [_rand(r, SHAPE)]),
    "max": ({"reduce"}, lambda x: clnp.max(x, axis=1), lambda r: [_distinct(r, SHAPE)]),
    "min": ({"reduce"}, lambda x: clnp.min(x), lambda r: [_distinct(r, SHAPE)]),
    "reshape": ({"reshape"}, lambda x: clnp.reshape(x, (2, 6)) * 2.0,
                lambda r: [_rand(r, SHAPE)]),
    "transpose": ({"transpose"}, lambda x: clnp.permute_dims(x, (1, 0)) ** 2,
                  lambda r: [_rand(r, SHAPE)]),
    "broadcast_to": ({"broadcast_to"}, lambda x: clnp.broadcast_to(x, (2,) + SHAPE) ** 2,
                     lambda r: [_rand(r, SHAPE[-1:])]),
    "slice": ({"slice"}, lambda x: x[1:, ::-2] ** 2, lambda r: [_rand(r, SHAPE)]),
    "concatenate": ({"concatenate"}, lambda x, y: clnp.concat([x, y * y], axis=0),
                    lambda r: [_rand(r, SHAPE), _rand(r, SHAPE)]),
    "gather": ({"gather"}, lambda x: x[clnp.asarray([2, 0, 2], device=x.device)] ** 2,
               lambda r: [_rand(r, SHAPE)]),
    "dot_general": ({"dot_general"}, lambda x, y: clnp.matmul(x, y.T),
                    lambda r: [_rand(r, SHAPE), _rand(r, SHAPE)]),
    "cumsum": ({"cumsum"}, lambda x: clnp.cumulative_sum(x * x, axis=1, include_initial=True),
               lambda r: [_rand(r, SHAPE)]),
    "cumprod": ({"cumprod"}, lambda x: clnp.cumulative_prod(x, axis=1),
                lambda r: [np.where(np.arange(12).reshape(SHAPE) % 5 == 1, 0.0,
                                    _rand(r, SHAPE))]),
    "sort": ({"sort"}, lambda x: clnp.sort(x, axis=0, descending=True) * x,
             lambda r: [_distinct(r, SHAPE)]),
    "unique": ({"unique"}, _unique, lambda r: [_distinct(r, SHAPE)]),
    "fft_c2c": ({"fft"}, lambda x: clnp.fft.fft(x, n=6, axis=0),
                lambda r: [_complex(r, SHAPE)]),
    "fft_r2c": ({"fft"}, lambda x: clnp.fft.rfft(x, n=6), lambda r: [_rand(r, SHAPE)]),
    "fft_c2r": ({"fft"}, lambda x: clnp.fft.irfft(x, n=5), lambda r: [_complex(r, SHAPE)]),
    "convert_element_type": ({"convert_element_type"},
                             lambda x: clnp.astype(x, clnp.complex128) * (1 + 2j),
                             lambda r: [_rand(r, SHAPE)]),
    "clip_scalar": ({"clip"}, lambda x: clnp.clip(x, 0.8, 1.6),
                    lambda r: [np.where(np.arange(12).reshape(SHAPE) % 2 == 0, 0.3, 1.2)
                               + _rand(r, SHAPE, 0, 0.1)]),
}


@pytest.mark.parametrize("case", sorted(STRUCTURAL))
def test_structural(case, device, rng):
    _f64(device)
    _, f, build = STRUCTURAL[case]
    check_grads(f, build(rng), device, rng)


def test_scatter_add(device, rng):
    _f64(device)
    check_grads(_scatter(device), [_rand(rng, SHAPE), _rand(rng, (3, 4))], device, rng)


def test_convert_element_type_narrowing(device, rng):
    """float64 -> float32 -> float64: tangents and cotangents are rounded like the values."""
    _f64(device)
    a, t, c = (rng.standard_normal(SHAPE) for _ in range(3))

    def f(x):
        return clnp.astype(clnp.astype(x, clnp.float32), clnp.float64)
    x = clnp.asarray(a, device=device)
    _, jt = cg.jvp(f, (x,), (clnp.asarray(t, device=device),))
    np.testing.assert_array_equal(np.asarray(jt), t.astype(np.float32).astype(np.float64))
    (g,) = cg.vjp(f, x)[1](clnp.asarray(c, device=device))
    np.testing.assert_array_equal(np.asarray(g), c.astype(np.float32).astype(np.float64))


def test_prod_with_a_zero(device, rng):
    _f64(device)
    check_grads(lambda x: clnp.prod(x, axis=1), [np.where(np.arange(12).reshape(SHAPE) == 5,
                                                          0.0, _rand(rng, SHAPE))], device, rng)


def test_abs_of_complex(device, rng):
    """A real function of a complex input: JVP Re(conj(sign(x)) t), VJP ct * conj(sign(x))."""
    _f64(device)
    check_grads(clnp.abs, [_complex(rng, SHAPE)], device, rng)


# ------------------------------------------------------------------------------ completeness
# Primitives whose outputs carry no derivative: integer or boolean results, or values made
# from nothing differentiable. Each must be one the interpreters treat as such
# (_rules.NON_DIFFERENTIABLE, or a table op with a bool output / integer-only category).
NON_DIFFERENTIABLE = {
    "argmax", "argmin", "argsort", "searchsorted", "nonzero",     # integer indices
    "isin",                                                       # booleans
    "iota", "full", "rng_bits",              # no array inputs: never see a traced value
    "random_bits",                           # keys carry no derivative
    "axis_index",                            # an integer index (collectives, issue #11)
    "stop_gradient",                                              # zero by definition
    # comparisons, predicates and logical/bitwise ops of the table
    "equal", "not_equal", "greater", "greater_equal", "less", "less_equal", "isfinite",
    "isinf", "isnan", "signbit", "logical_and", "logical_or", "logical_xor", "logical_not",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_invert", "bitwise_left_shift",
    "bitwise_right_shift",
}
LINALG = {"cholesky", "det", "eig", "eigh", "inv", "lu", "lu_solve", "qr", "slogdet", "svd"}


def _has_rules(name):
    from clnp_grad._core import HIGHER_ORDER
    if ("jvp", name) in HIGHER_ORDER and ("vjp", name) in HIGHER_ORDER:
        return True     # higher-order primitives (jit, cond, while, scan) transform their bodies
    return (name in R.JVP and name in R.VJP) or R.differentiable_op(name)


def _covered():
    names = {n for n in FLOAT_OPS}
    for prims, _, _ in STRUCTURAL.values():
        names |= prims
    return names | {"scatter_add"}


def _completeness_params():
    out = []
    for n in sorted(PRIMITIVES):
        if n in LINALG and not _has_rules(n):
            out.append(pytest.param(n, marks=pytest.mark.xfail(
                strict=True, reason="linalg rules in progress")))
        else:
            out.append(n)
    return out


@pytest.mark.parametrize("name", _completeness_params())
def test_every_primitive_has_rules(name):
    if name in NON_DIFFERENTIABLE:
        assert name in R.NON_DIFFERENTIABLE or _ad._ZERO_OUTPUT_OPS(primitive(name)), \
            f"{name} is listed as non-differentiable but the interpreters would differentiate it"
        return
    assert _has_rules(name), f"primitive {name!r} has neither JVP/VJP rules nor is listed " \
                             f"as non-differentiable"
    if name not in LINALG and name not in CHECKED_ELSEWHERE:   # linalg: test_linalg_grad.py
        assert name in _covered(), f"primitive {name!r} has rules but no numerical check here"


# higher-order primitives and custom kernels: their rules are checked against finite
# differences (or, for custom kernels, shown to refuse) in their own test modules
CHECKED_ELSEWHERE = {"jit": "test_jit.py", "cond": "test_lax.py", "while": "test_lax.py",
                     "scan": "test_lax.py", "elementwise_kernel": "../test_custom_kernels.py",
                     "raw_kernel": "../test_custom_kernels.py",
                     **{c: "../parallel/test_collectives_vmap.py" for c in (
                         "psum", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute",
                         "all_to_all")},
                     # clnp_nn's kernels (registered when clnp_nn is imported)
                     "nn_im2col": "../nn/test_functional.py",
                     "nn_col2im": "../nn/test_functional.py",
                     "nn_erf": "../nn/test_functional.py",
                     # clnp_nn.parallel's pmap (registered when it is imported)
                     "pmap": "../parallel/test_pmap_transforms.py",
                     **{f"nn_max_pool2d{s}": "../nn/test_max_pool2d.py"
                        for s in ("", "_weight", "_grad", "_tangent")}}


def test_non_differentiable_primitives_give_zero(device, rng):
    """Integer/boolean results inside a differentiated function contribute nothing; the
    float path around them is differentiated as usual."""
    _f64(device)
    a = _distinct(rng, SHAPE)
    x = clnp.asarray(a, device=device)
    srt = clnp.asarray(np.sort(a[0]), device=device)

    def f(x):
        idx = clnp.astype(clnp.argmax(x, axis=1) + clnp.argmin(x, axis=1), clnp.float64)
        order = clnp.astype(clnp.argsort(x, axis=1), clnp.float64)
        pos = clnp.astype(clnp.searchsorted(srt, x[0]), clnp.float64)
        mask = clnp.astype(clnp.isin(x, x[0]) | (x > 1.0) & ~clnp.isnan(x), clnp.float64)
        pos_part = clnp.sum(x[x > 1.0])                 # nonzero + gather: differentiable
        return (clnp.sum(x * (order + mask)) + clnp.sum(idx) + clnp.sum(pos) + pos_part
                + clnp.sum(cg.stop_gradient(x) * x))
    g = np.asarray(cg.grad(f)(x))
    order = np.argsort(a, axis=1, kind="stable")
    mask = (np.isin(a, a[0]) | (a > 1.0)).astype(float)
    expect = order + mask + (a > 1.0) + a
    np.testing.assert_allclose(g, expect, rtol=1e-12)
    _, t = cg.jvp(lambda x: clnp.astype(clnp.argsort(x), clnp.float64) + clnp.astype(
        x > 1.0, clnp.float64), (x,), (x,))
    np.testing.assert_array_equal(np.asarray(t), 0.0)


# vmap never sees them with a batched value
NO_ARRAY_INPUTS = {"iota", "full", "rng_bits", "axis_index"}


@pytest.mark.parametrize("name", sorted(set(PRIMITIVES) - NO_ARRAY_INPUTS))
def test_every_primitive_has_a_batching_rule(name):
    from clnp_grad._core import HIGHER_ORDER
    from clnp_grad._vmap import BATCH
    assert name in BATCH or name in _ops.OPS or ("vmap", name) in HIGHER_ORDER, \
        f"primitive {name!r} has no batching rule"


def test_data_dependent_shapes_refuse_vmap(device):
    x = clnp.asarray([[0.0, 1.0], [2.0, 2.0]], device=device)
    with pytest.raises(NotImplementedError, match="vmap cannot batch nonzero"):
        cg.vmap(clnp.nonzero)(x)
    with pytest.raises(NotImplementedError, match="vmap cannot batch unique"):
        cg.vmap(clnp.unique_values)(x)
