"""Operators of ``clnp.Array``: forward, reflected and in-place dunders, comparisons, ``__eq__``
with foreign objects, and NumPy arrays/scalars on either side.

Array-array cases use transposed (2-D strided) operands and array-scalar cases contiguous 1-D
ones in each op's representative dtype, the layouts tests/test_ops_table.py compiles anyway,
so this file adds few kernels.
"""
from __future__ import annotations

import operator
import warnings

import numpy as np
import pytest

import clnp
from clnp._kernels import op_table as _ops

# (dunder, operator function, op name, dtype)
BINARY = [
    ("__add__", operator.add, "add", "float64"),
    ("__sub__", operator.sub, "subtract", "float64"),
    ("__mul__", operator.mul, "multiply", "float64"),
    ("__truediv__", operator.truediv, "divide", "float64"),
    ("__floordiv__", operator.floordiv, "floor_divide", "float64"),
    ("__mod__", operator.mod, "remainder", "float64"),
    ("__pow__", operator.pow, "pow", "float64"),
    ("__and__", operator.and_, "bitwise_and", "int64"),
    ("__or__", operator.or_, "bitwise_or", "int64"),
    ("__xor__", operator.xor, "bitwise_xor", "int64"),
    ("__lshift__", operator.lshift, "bitwise_left_shift", "int64"),
    ("__rshift__", operator.rshift, "bitwise_right_shift", "int64"),
]
INPLACE = {"__add__": operator.iadd, "__sub__": operator.isub, "__mul__": operator.imul,
           "__truediv__": operator.itruediv, "__floordiv__": operator.ifloordiv,
           "__mod__": operator.imod, "__pow__": operator.ipow, "__and__": operator.iand,
           "__or__": operator.ior, "__xor__": operator.ixor, "__lshift__": operator.ilshift,
           "__rshift__": operator.irshift}
COMPARE = [("__eq__", operator.eq), ("__ne__", operator.ne), ("__lt__", operator.lt),
           ("__le__", operator.le), ("__gt__", operator.gt), ("__ge__", operator.ge)]


def _dtype(d, device):
    d = np.dtype(d)
    if d == np.float64 and not device.has_fp64:
        return np.dtype(np.float32)
    return d


def _host(name, d, shape, seed):
    rng = np.random.default_rng(seed)
    if d.kind in "iu":
        lo, hi = (0, 8) if "shift" in name else (1, 20)
        return rng.integers(lo, hi, shape).astype(d)
    lo, hi = (0.5, 3.0) if name == "pow" else (-10.0, 10.0)
    return rng.uniform(lo, hi, shape).astype(d)


def _ref(fn, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args)


def _close(got, exp):
    assert isinstance(got, clnp.Array), type(got)
    g = got.to_numpy()
    assert g.dtype == np.asarray(exp).dtype, (g.dtype, np.asarray(exp).dtype)
    np.testing.assert_allclose(g, exp, rtol=1e-6, atol=0)


def test_dunders_come_from_the_op_table():
    for rec in _ops.OPS.values():
        for d in rec.dunder:
            assert hasattr(clnp.Array, d), d
            if rec.nin == 2 and rec.out != "bool":
                assert hasattr(clnp.Array, "__r" + d[2:]), d
                assert hasattr(clnp.Array, "__i" + d[2:]), d


@pytest.mark.parametrize("dunder,fn,name,dtype", BINARY, ids=[b[0] for b in BINARY])
def test_binary_forward_reflected_inplace(dunder, fn, name, dtype, device):
    d = _dtype(dtype, device)
    a, b = _host(name, d, (3, 4), 1), _host(name, d, (3, 4), 2)
    x, y = clnp.asarray(a, device=device).T, clnp.asarray(b, device=device).T
    _close(fn(x, y), _ref(fn, a.T, b.T))
    _close(getattr(x, dunder)(y), _ref(fn, a.T, b.T))
    # Python scalars on either side (the reflected dunder for the left one)
    s = 2 if d.kind in "iu" else 1.5
    v = clnp.asarray(a[0], device=device)
    _close(fn(v, s), _ref(fn, a[0], s))
    _close(fn(s, v), _ref(fn, s, a[0]))
    _close(getattr(v, "__r" + dunder[2:])(s), _ref(fn, s, a[0]))
    # in place: same object, same dtype, NumPy's values
    z = clnp.asarray(a, device=device).T
    zid = id(z)
    z = INPLACE[dunder](z, y)
    assert id(z) == zid and z.dtype == d
    _close(z, _ref(fn, a.T, b.T).astype(d))
    w = clnp.asarray(a[0], device=device)
    w = INPLACE[dunder](w, s)
    _close(w, _ref(fn, a[0], s).astype(d))


@pytest.mark.parametrize("dunder,fn", COMPARE, ids=[c[0] for c in COMPARE])
def test_comparisons_return_bool_arrays(dunder, fn, device):
    d = _dtype("float64", device)
    a, b = _host("x", d, (3, 4), 3), _host("x", d, (3, 4), 4)
    b[0, 0] = a[0, 0]
    x, y = clnp.asarray(a, device=device).T, clnp.asarray(b, device=device).T
    r = fn(x, y)
    assert r.dtype == clnp.bool and r.shape == (4, 3)
    np.testing.assert_array_equal(r.to_numpy(), fn(a.T, b.T))
    # a scalar on the left goes through the reflected comparison (2 < x is x > 2)
    np.testing.assert_array_equal(fn(1.5, clnp.asarray(a[0], device=device)).to_numpy(),
                                  fn(1.5, a[0]))


def test_unary_operators(device):
    d = _dtype("float64", device)
    a = _host("x", d, (3, 4), 5)
    x = clnp.asarray(a, device=device).T
    _close(-x, -a.T)
    _close(+x, +a.T)
    _close(abs(x), np.abs(a.T))
    i = np.arange(-6, 6, dtype=np.int64).reshape(3, 4)
    np.testing.assert_array_equal((~clnp.asarray(i, device=device).T).to_numpy(), ~i.T)
    m = i > 0
    np.testing.assert_array_equal((~clnp.asarray(m, device=device).T).to_numpy(), ~m.T)


def test_boolean_operators(device):
    m1 = np.array([[True, False, True, False]] * 3)
    m2 = np.array([[True, True, False, False]] * 3)
    x, y = clnp.asarray(m1, device=device).T, clnp.asarray(m2, device=device).T
    for fn in (operator.and_, operator.or_, operator.xor):
        r = fn(x, y)
        assert r.dtype == clnp.bool
        np.testing.assert_array_equal(r.to_numpy(), fn(m1.T, m2.T))


def test_inplace_casts_within_a_kind_or_raises(device):
    x = clnp.asarray(np.arange(4, dtype=np.int32), device=device)
    before = x.to_numpy()
    with pytest.raises(TypeError, match="int32.*float"):
        x += 1.5
    with pytest.raises(TypeError, match="int32.*float64"):
        x /= 2
    with pytest.raises(TypeError, match="int32.*complex"):
        x *= 1j
    np.testing.assert_array_equal(x.to_numpy(), before)   # nothing was written
    x += clnp.asarray(np.ones(4, np.int64), device=device)   # int64 -> int32: same kind
    assert x.dtype == clnp.int32
    np.testing.assert_array_equal(x.to_numpy(), before + 1)
    f = clnp.asarray(np.arange(4, dtype=np.float32), device=device)
    f *= 2           # a weak Python scalar keeps float32
    assert f.dtype == clnp.float32
    np.testing.assert_array_equal(f.to_numpy(), np.arange(4, dtype=np.float32) * 2)


def test_inplace_broadcasts_only_the_right_operand(device):
    d = _dtype("float64", device)
    a = np.arange(12, dtype=d).reshape(3, 4)
    x = clnp.asarray(a, device=device)
    x += clnp.asarray(np.arange(4, dtype=d), device=device)
    np.testing.assert_array_equal(x.to_numpy(), a + np.arange(4, dtype=d))
    y = clnp.asarray(np.arange(4, dtype=d), device=device)
    with pytest.raises(ValueError, match=r"\(3, 4\).*\(4,\)"):
        y += x
    np.testing.assert_array_equal(y.to_numpy(), np.arange(4, dtype=d))
    with pytest.raises(ValueError, match=r"\(5,\)"):
        x += clnp.asarray(np.ones(5, d), device=device)


@pytest.mark.parametrize("case", ["shift_right", "shift_left", "reversed", "same"])
def test_inplace_on_overlapping_views_matches_numpy(case, device):
    d = _dtype("float64", device)
    a = np.arange(1, 11, dtype=d)
    x = clnp.asarray(a, device=device)
    if case == "shift_right":
        x[1:] += x[:-1]
        a[1:] += a[:-1]
    elif case == "shift_left":
        x[:-1] *= x[1:]
        a[:-1] *= a[1:]
    elif case == "reversed":
        x -= x[::-1]
        a -= a[::-1]
    else:
        x += x
        a += a
    np.testing.assert_array_equal(x.to_numpy(), a)


def test_eq_with_foreign_objects(device):
    x = clnp.asarray(np.arange(3.0), device=device)
    assert x.__eq__(None) is NotImplemented
    assert x.__eq__("abc") is NotImplemented
    assert x.__lt__(object()) is NotImplemented
    assert x.__add__("a") is NotImplemented
    assert (x == None) is False  # noqa: E711  (Python's fallback for NotImplemented)
    assert (x != None) is True  # noqa: E711
    assert (x == "abc") is False
    with pytest.raises(TypeError):
        x < "abc"  # noqa: B015
    with pytest.raises(TypeError):
        x + "a"


def test_numpy_arrays_on_either_side(device):
    d = _dtype("float64", device)
    a = np.arange(4, dtype=d)
    b = np.linspace(1, 2, 4).astype(d)
    x = clnp.asarray(a, device=device)
    for r, exp in ((x + b, a + b), (b + x, b + a), (x - b, a - b), (b - x, b - a),
                   (b < x, b < a), (x == b, a == b)):
        assert isinstance(r, clnp.Array) and r.device is device
        np.testing.assert_array_equal(r.to_numpy(), exp)
    x += b
    np.testing.assert_array_equal(x.to_numpy(), a + b)


def test_numpy_scalars_are_strongly_typed(device):
    x = clnp.asarray(np.arange(4, dtype=np.float32), device=device)
    h = np.arange(4, dtype=np.float32)
    r = x * np.float32(3)
    assert r.dtype == (h * np.float32(3)).dtype == np.float32
    i = clnp.asarray(np.arange(4, dtype=np.int8), device=device)
    r = np.int16(300) + i
    assert r.dtype == np.int16
    np.testing.assert_array_equal(r.to_numpy(), np.int16(300) + np.arange(4, dtype=np.int8))
    if device.has_fp64:
        r = x + np.float64(0.5)
        assert r.dtype == (h + np.float64(0.5)).dtype == np.float64
        np.testing.assert_array_equal(r.to_numpy(), h + np.float64(0.5))


def test_divmod(device):
    d = _dtype("float64", device)
    a = np.array([-7.0, -1.5, 3.0, 7.5], d)
    x = clnp.asarray(a, device=device)
    q, r = divmod(x, 2)
    np.testing.assert_array_equal(q.to_numpy(), a // 2)
    np.testing.assert_array_equal(r.to_numpy(), a % 2)
    q, r = divmod(5, x)
    np.testing.assert_array_equal(q.to_numpy(), 5 // a)
    np.testing.assert_array_equal(r.to_numpy(), 5 % a)


def test_integer_operator_semantics(device):
    a = np.array([-7, -3, 0, 5, 7], np.int64)
    x = clnp.asarray(a, device=device)
    np.testing.assert_array_equal((x // 2).to_numpy(), a // 2)        # floors
    np.testing.assert_array_equal((x % -3).to_numpy(), a % -3)       # sign of the divisor
    r = x / 2
    assert r.dtype == (a / 2).dtype
    np.testing.assert_array_equal(r.to_numpy(), a / 2)
    np.testing.assert_array_equal((x ** 2).to_numpy(), a ** 2)
    np.testing.assert_array_equal((x << 3).to_numpy(), a << 3)
    np.testing.assert_array_equal((x >> 1).to_numpy(), a >> 1)


def test_square_by_pow_is_numpys_square(device):
    """``x ** 2`` gives NumPy's ``x * x`` bit for bit (OpenCL's pow may be 16 ulp off), and
    the special values stay right; other exponents still go through pow."""
    rng = np.random.default_rng(4)
    xs = np.concatenate([rng.standard_normal(97) * 1e3,
                         [0.0, -0.0, np.inf, -np.inf, np.nan]]).astype(np.float32)
    x = clnp.asarray(xs, device=device)
    np.testing.assert_array_equal(np.asarray(x ** 2), xs ** 2)
    np.testing.assert_array_equal(np.asarray(clnp.pow(x, 2.0)), np.power(xs, np.float32(2)))
    pos = np.abs(xs[:97]) + 1
    np.testing.assert_allclose(np.asarray(clnp.asarray(pos, device=device) ** 2.5), pos ** 2.5,
                               rtol=1e-5)
