"""Differential fuzzing against NumPy with Hypothesis: generated shapes (0 and 1 sizes
included), dtypes, strided, reversed and broadcast views, basic, advanced and boolean
indexing, indexing assignment, and in-place operations whose operands alias.

Each test runs ``CLNP_FUZZ_EXAMPLES`` examples (default 15: CI). The long run::

    python -m pytest -q tests/robust/test_fuzz.py -m fuzz_long

runs every test with 400 examples (``CLNP_FUZZ_EXAMPLES`` overrides that count too).
Examples are drawn on the default device; kernels compiled for one example serve the later
ones with the same dtypes and layout, which keeps the default run inside CI's budget.
"""
from __future__ import annotations

import operator
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import clnp

DEV = clnp.default_device()
EXAMPLES = int(os.environ.get("CLNP_FUZZ_EXAMPLES", "15"))
LONG = int(os.environ.get("CLNP_FUZZ_EXAMPLES", "400"))

DTYPES = [np.dtype(t) for t in ("bool", "int8", "uint8", "int16", "uint16", "int32",
                                "uint32", "int64", "uint64", "float32", "float64",
                                "complex64", "complex128")
          if DEV.supports(np.dtype(t))]
NUMERIC = [d for d in DTYPES if d.kind != "b"]


_COMMON = dict(deadline=None, database=None, suppress_health_check=list(HealthCheck))


def fuzz(*strategies):
    """The decorated body as two Hypothesis tests over ``strategies``: the CI run
    (``EXAMPLES`` examples) and the long run (``LONG``, only under ``-m fuzz_long``)."""
    def deco(body):
        short = settings(max_examples=EXAMPLES, **_COMMON)(given(*strategies)(body))
        long_run = settings(max_examples=LONG, **_COMMON)(given(*strategies)(body))

        @pytest.mark.fuzz_long
        def long(request):
            if "fuzz_long" not in (request.config.getoption("-m") or ""):
                pytest.skip("long fuzzing run: python -m pytest tests/robust/test_fuzz.py "
                            "-m fuzz_long")
            long_run()
        long.__doc__ = body.__doc__
        return short, long
    return deco


def values(dtype: np.dtype) -> st.SearchStrategy:
    """Small exact values: sums and products stay representable, so results match bit for
    bit whatever the evaluation order."""
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind == "u":
        return st.integers(0, 9)
    if dtype.kind == "i":
        return st.integers(-9, 9)
    if dtype.kind == "f":
        return st.integers(-8, 8).map(lambda v: v / 4)
    return st.builds(complex, st.integers(-4, 4), st.integers(-4, 4))


@st.composite
def viewed(draw, shape, dtype):
    """(numpy view, clnp view) of equal content: a contiguous array, or the same view (every
    other element, reversed axes, a transpose) taken of a larger base in both libraries."""
    kind = draw(st.sampled_from(["plain", "strided", "reversed", "transposed"]))
    if kind == "strided" and shape:
        base_shape = tuple(2 * s for s in shape)
        key = tuple(slice(None, None, 2) for _ in shape)
    elif kind == "transposed" and len(shape) >= 2:
        base_shape = shape[::-1]
        key = None
    else:
        base_shape, key = shape, None
    base = draw(hnp.arrays(dtype, base_shape, elements=values(dtype)))
    x = clnp.asarray(base)
    if kind == "strided" and shape:
        return base[key], x[key]
    if kind == "transposed" and len(shape) >= 2:
        return base.T, x.T
    if kind == "reversed" and shape:
        key = tuple(slice(None, None, -1) for _ in shape)
        return base[key], x[key]
    return base, x


shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


def same(got, want, dtype_too: bool = True) -> None:
    got_np = got.to_numpy() if hasattr(got, "to_numpy") else np.asarray(got)
    want = np.asarray(want)
    assert got_np.shape == want.shape, (got_np.shape, want.shape)
    if dtype_too:
        assert got_np.dtype == want.dtype, (got_np.dtype, want.dtype)
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got_np, want, rtol=1e-6, atol=0, equal_nan=True)
    else:
        np.testing.assert_array_equal(got_np, want)


def outcome(fn):
    """(result, None) or (None, exception) of ``fn()``, NumPy's warnings silenced."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return fn(), None
    except Exception as e:  # compared below: both libraries must fail alike
        return None, e


def agree(np_fn, cl_fn, dtype_too: bool = True) -> None:
    """NumPy and clnp give the same result, or both raise (clnp's exception an instance of
    NumPy's class, or of ValueError/IndexError/TypeError as NumPy's is)."""
    want, np_err = outcome(np_fn)
    got, cl_err = outcome(cl_fn)
    if np_err is not None:
        assert cl_err is not None, f"NumPy raised {np_err!r}, clnp returned {got!r}"
        bases = tuple(c for c in (ValueError, IndexError, TypeError) if isinstance(np_err, c))
        assert isinstance(cl_err, type(np_err)) or isinstance(cl_err, bases or Exception), \
            (np_err, cl_err)
        return
    if cl_err is not None:
        raise cl_err
    same(got, want, dtype_too)


BINARY = {"add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
          "maximum": None, "minimum": None, "equal": operator.eq, "less": operator.lt}


# ----------------------------------------------------------------------------- elementwise
@st.composite
def binary_case(draw):
    name = draw(st.sampled_from(sorted(BINARY)))
    # bool arithmetic is an Array API type error in clnp (NumPy computes logical or/and):
    # a documented difference (docs/robustness.md), so only numeric dtypes here
    dtype = draw(st.sampled_from(DTYPES if name == "equal" else NUMERIC))
    if name in ("maximum", "minimum", "less"):
        dtype = draw(st.sampled_from([d for d in NUMERIC if d.kind != "c"]))
    s1, s2 = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3,
                                                    min_side=0, max_side=4)).input_shapes
    return name, draw(viewed(s1, dtype)), draw(viewed(s2, dtype))


@fuzz(binary_case())
def _binary(case):
    name, (a, x), (b, y) = case
    op = BINARY[name]
    if op is None:
        agree(lambda: getattr(np, name)(a, b), lambda: getattr(clnp, name)(x, y))
    else:
        agree(lambda: op(a, b), lambda: op(x, y))


test_binary, test_binary_long = _binary


@fuzz(st.sampled_from([d for d in DTYPES if d.kind in "fc"]), shapes, st.data())
def _unary(dtype, shape, data):
    a, x = data.draw(viewed(shape, dtype))
    name = data.draw(st.sampled_from(["negative", "abs", "square", "exp", "sin", "sqrt"]))
    if name == "sqrt" and dtype.kind == "f":
        a, x = np.abs(a), clnp.abs(x)
    got, want = getattr(clnp, name)(x), getattr(np, name)(a)
    g = got.to_numpy()
    assert g.shape == want.shape and g.dtype == want.dtype
    np.testing.assert_allclose(g, want, rtol=2e-6 if dtype.itemsize <= 8 else 1e-14, atol=1e-6)


test_unary, test_unary_long = _unary


# ----------------------------------------------------------------------------- reductions
@st.composite
def axis_for(draw, ndim):
    if ndim == 0:
        return None
    return draw(st.one_of(st.none(), st.integers(-ndim, ndim - 1),
                          st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim,
                                   unique=True).map(tuple)))


@fuzz(st.sampled_from(DTYPES), shapes, st.data())
def _reduction(dtype, shape, data):
    a, x = data.draw(viewed(shape, dtype))
    axis = data.draw(axis_for(len(shape)))
    keepdims = data.draw(st.booleans())
    name = data.draw(st.sampled_from(["sum", "prod", "max", "min", "any", "all", "mean"]))
    if dtype.kind == "b" and name in ("sum", "prod", "mean"):
        name = "any"
    if dtype.kind == "c" and name in ("max", "min"):
        name = "sum"
    if name == "mean" and dtype.kind in "iu":
        name = "sum"
    # NumPy sums small integers in the default integer; the Array API (and clnp) too
    agree(lambda: getattr(np, name)(a, axis=axis, keepdims=keepdims),
          lambda: getattr(clnp, name)(x, axis=axis, keepdims=keepdims))


test_reduction, test_reduction_long = _reduction


# ----------------------------------------------------------------------------- manipulation
@fuzz(st.sampled_from(DTYPES), hnp.array_shapes(min_dims=1, max_dims=3, min_side=0,
                                                 max_side=4), st.data())
def _manipulation(dtype, shape, data):
    a, x = data.draw(viewed(shape, dtype))
    nd = len(shape)
    ax = data.draw(st.integers(-nd, nd - 1))
    name = data.draw(st.sampled_from(["reshape", "transpose", "flip", "roll", "concat",
                                      "stack", "expand_dims", "moveaxis", "repeat", "tile",
                                      "broadcast_to", "squeeze"]))
    if name == "reshape":
        agree(lambda: np.reshape(a, (-1,)), lambda: clnp.reshape(x, (-1,)))
    elif name == "transpose":
        perm = tuple(data.draw(st.permutations(range(nd))))
        agree(lambda: np.transpose(a, perm), lambda: clnp.permute_dims(x, perm))
    elif name == "flip":
        agree(lambda: np.flip(a, axis=ax), lambda: clnp.flip(x, axis=ax))
    elif name == "roll":
        k = data.draw(st.integers(-5, 5))
        agree(lambda: np.roll(a, k, axis=ax), lambda: clnp.roll(x, k, axis=ax))
    elif name == "concat":
        agree(lambda: np.concatenate([a, a[::-1]], axis=ax),
              lambda: clnp.concat([x, x[::-1]], axis=ax))
    elif name == "stack":
        agree(lambda: np.stack([a, a], axis=ax), lambda: clnp.stack([x, x], axis=ax))
    elif name == "expand_dims":
        agree(lambda: np.expand_dims(a, ax), lambda: clnp.expand_dims(x, axis=ax))
    elif name == "moveaxis":
        agree(lambda: np.moveaxis(a, ax, 0), lambda: clnp.moveaxis(x, ax, 0))
    elif name == "repeat":
        agree(lambda: np.repeat(a, 2, axis=ax), lambda: clnp.repeat(x, 2, axis=ax))
    elif name == "tile":
        agree(lambda: np.tile(a, (2,) * nd), lambda: clnp.tile(x, (2,) * nd))
    elif name == "broadcast_to":
        target = (2,) + tuple(1 if s == 1 else s for s in shape)
        agree(lambda: np.broadcast_to(a, target), lambda: clnp.broadcast_to(x, target))
    else:
        agree(lambda: np.squeeze(a, axis=ax), lambda: clnp.squeeze(x, axis=ax))


test_manipulation, test_manipulation_long = _manipulation


# ----------------------------------------------------------------------------- indexing
@st.composite
def basic_key(draw, shape):
    key = []
    for s in shape[:draw(st.integers(0, len(shape)))]:
        kind = draw(st.sampled_from(["int", "slice", "newaxis"]))
        if kind == "int" and s > 0:
            key.append(draw(st.integers(-s, s - 1)))
        elif kind == "newaxis":
            key.append(None)
            key.append(slice(None))
        else:
            start = draw(st.one_of(st.none(), st.integers(-s - 2, s + 2)))
            stop = draw(st.one_of(st.none(), st.integers(-s - 2, s + 2)))
            step = draw(st.sampled_from([None, 1, 2, -1, -2, 3]))
            key.append(slice(start, stop, step))
    if draw(st.booleans()):
        key.append(Ellipsis)
    return tuple(key)


@st.composite
def index_case(draw):
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5))
    a, x = draw(viewed(shape, dtype))
    kind = draw(st.sampled_from(["basic", "advanced", "boolean", "mixed"]))
    if kind == "basic":
        key = draw(basic_key(shape))
        return a, x, key, key
    if kind == "boolean":
        mask = draw(hnp.arrays(np.bool_, shape[:draw(st.integers(1, len(shape)))]))
        return a, x, mask, clnp.asarray(mask)
    n = shape[0]
    idx = draw(hnp.arrays(np.int64, draw(hnp.array_shapes(min_dims=1, max_dims=2,
                                                          min_side=0, max_side=4)),
                          elements=st.integers(-n, n - 1) if n else st.just(0)))
    if kind == "advanced":
        return a, x, idx, clnp.asarray(idx)
    rest = draw(basic_key(shape[1:]))
    return a, x, (idx,) + rest, (clnp.asarray(idx),) + rest


@fuzz(index_case())
def _getitem(case):
    a, x, key_np, key_cl = case
    agree(lambda: a[key_np], lambda: x[key_cl])


test_getitem, test_getitem_long = _getitem


@fuzz(index_case(), st.data())
def _setitem(case, data):
    a, x, key_np, key_cl = case
    a = a.copy()
    sel, err = outcome(lambda: a[key_np])
    if err is not None:
        return
    if data.draw(st.booleans()):
        value = data.draw(values(a.dtype))
        v_np, v_cl = value, value
    else:
        tail = sel.shape[data.draw(st.integers(0, sel.ndim)):]
        v_np = data.draw(hnp.arrays(a.dtype, tail, elements=values(a.dtype)))
        v_cl = clnp.asarray(v_np)
    if isinstance(key_np, np.ndarray) and key_np.dtype.kind == "i" and \
            len(np.unique(key_np % max(a.shape[0], 1))) < key_np.size:
        return          # repeated indices: which write lands is unspecified (NumPy: the last)
    if isinstance(key_np, tuple) and key_np and isinstance(key_np[0], np.ndarray) and \
            len(np.unique(key_np[0] % max(a.shape[0], 1))) < key_np[0].size:
        return
    a[key_np] = v_np
    x[key_cl] = v_cl
    same(x, a)


test_setitem, test_setitem_long = _setitem


# ----------------------------------------------------------------------------- aliasing
@fuzz(st.sampled_from(NUMERIC), st.integers(1, 12), st.data())
def _inplace_alias(dtype, n, data):
    """``a[s1] op= a[s2]`` with overlapping slices of one buffer: NumPy's result (the right
    operand read as it was before the statement)."""
    base = data.draw(hnp.arrays(dtype, (n, 3), elements=values(dtype)))
    x = clnp.asarray(base)
    k = data.draw(st.integers(0, n - 1))
    step = data.draw(st.sampled_from([1, -1]))
    left = slice(k, None) if step == 1 else slice(n - 1 - k, None, -1)
    right = slice(None, n - k) if step == 1 else slice(n - 1, k - 1 if k else None, -1)
    if data.draw(st.booleans()):       # also overlap along the second axis, transposed
        left, right = (left, slice(None)), (right, slice(None, None, -1))
    op = data.draw(st.sampled_from(["__iadd__", "__isub__", "__imul__"]))
    a = base.copy()
    getattr(a[left], op)(a[right])     # NumPy writes through the view
    v = x[left]
    getattr(v, op)(x[right])
    same(x, a)


test_inplace_alias, test_inplace_alias_long = _inplace_alias


def test_fuzz_reports_a_difference():
    """``agree`` fails when the libraries differ, so the fuzz tests can fail."""
    with pytest.raises(AssertionError):
        agree(lambda: np.arange(3), lambda: clnp.arange(1, 4))
    with pytest.raises(AssertionError):
        agree(lambda: np.arange(3)[5], lambda: clnp.arange(3)[1])
