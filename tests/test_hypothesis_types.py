"""The types and the ndarray's methods of clnp against NumPy's over generated arguments
(issue #12): the companion of tests/test_hypothesis_namespace.py, whose helpers it imports
(specs, strategies, the comparison, the run settings).

``TYPE_SPECS`` has an entry for every type clnp shares with NumPy (tools/numpy_coverage.py's
"`numpy` types" section): the scalar types (constructed from Python values and clnp arrays,
as array dtypes, in arithmetic with arrays under NEP 50, casts), the abstract scalar classes
(``issubdtype``, ``isinstance``, refused as array dtypes), ``dtype`` (over generated dtype
specifications: its attributes, comparisons, arrays made with it), ``finfo``/``iinfo`` (every
attribute), and the classes (``broadcast``, ``errstate``, ``flatiter``, ``ndarray``,
``ndenumerate``, ``ndindex``, ``nditer``, ``ufunc``, ``vectorize``).

``ATTR_SPECS`` has an entry for every public attribute and method of ``numpy.ndarray`` that
``clnp.ndarray`` has, but those ``ATTR_EXCLUDED`` lists with the reason. Each example draws an
array (shapes with 0- and 1-sized axes, every device dtype) and shows it to the method as a
plain array or as a non-contiguous view (every other element, reversed, transposed) of a
larger base; a method that mirrors a function draws its arguments with that function's spec,
and the reductions, scans and takes also NumPy's ``out=`` (of the result's dtype or another)
and ``dtype=``; ``reshape``/``transpose`` also take their ints as separate arguments.
Methods that mutate (``fill``, ``put``, ``sort``, ``partition``, ``resize``, ``byteswap``
in place, ``flat`` assignment) compare the base afterwards as well as the result.

An example is an expression run once with ``lib = numpy`` and once with ``lib = clnp`` on the
same values; where NumPy raises, clnp must raise. Known deviations still open are strict
xfails in ``TYPE_XFAIL``/``ATTR_XFAIL``; documented differences are left out of the drawn
inputs, each with a comment. Both test sets run derandomized, ``CLNP_HYPO_EXAMPLES`` (default
4) examples per name in CI; ``-m hypo_long`` runs more:

    python -m pytest -q tests/test_hypothesis_types.py
    CLNP_HYPO_EXAMPLES=60 python -m pytest -q tests/test_hypothesis_types.py -m hypo_long
"""
from __future__ import annotations

import dataclasses
import pickle
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import clnp
import test_hypothesis_namespace as hn
from test_hypothesis_namespace import (ALL, BOOL, DEV, NONEMPTY, REAL, SHAPES, SHAPES1, Spec,
                                       arrays, call, elements)

LONG = hn.LONG


@dataclasses.dataclass(frozen=True)
class Form:
    """An expression over a library: ``fn(lib, *args, **kwargs)``, shown as ``text``."""
    fn: Callable
    text: str

    def __repr__(self) -> str:
        return self.text


def run_form(lib):
    """The callable ``check`` runs for ``lib``: the drawn call's first argument is a Form."""
    return lambda form, *a, **k: form.fn(lib, *a, **k)


def form_call(fn: Callable, text: str, *args, **kwargs):
    return call(Form(fn, text), *args, **kwargs)


def lib_type(lib, name: str):
    return getattr(lib, name)


# The dtypes an array of the default device holds (names), for the creation forms
DEVICE_DTYPES = [d for d in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                             "uint32", "uint64", "float16", "float32", "float64",
                             "complex64", "complex128") if DEV.supports(np.dtype(d))]


# --------------------------------------------------------------------------------------------
# the types


TYPE_SPECS: dict[str, Spec] = {}


def tspec(names: str, strategy, category: str, **kw) -> None:
    for name in names.split():
        assert name not in TYPE_SPECS, f"{name} specified twice"
        TYPE_SPECS[name] = Spec(strategy(name), category, same_error=True, **kw)


def python_value(d: np.dtype) -> st.SearchStrategy:
    """Python values to build a scalar of ``d`` from: in range and out of it (NumPy 2 raises
    OverflowError for an out-of-range Python int), floats with NaN and infinities, bools,
    and strings of numbers (valid or not for ``d``)."""
    ints = st.one_of(st.integers(-300, 300), st.sampled_from([2 ** 31, -2 ** 31 - 1, 2 ** 63,
                                                              -2 ** 63, 2 ** 64, 2 ** 70]))
    floats = st.one_of(st.floats(-300, 300), st.sampled_from([np.nan, np.inf, -np.inf, 1e300]))
    strings = st.sampled_from(["12", "-3", "1.5", "nan", "inf", "1e3", "0x10", "1+2j", "",
                               " 7 ", "abc"])
    if d.kind in "iu":
        # float -> int out of range is undefined in C: NumPy's result is the platform's
        floats = st.floats(-100, 100)
    return st.one_of(ints, floats, st.booleans(), strings,
                     st.builds(complex, st.floats(-3, 3), st.floats(-3, 3)))


def in_range(d: np.dtype, lo: int = -4, hi: int = 4) -> st.SearchStrategy:
    """A Python value every device dtype holds exactly, cast to ``d``'s Python kind."""
    lo = 0 if d.kind in "ub" else lo
    hi = 1 if d.kind == "b" else hi
    return elements(np.dtype(d) if d.kind != "b" else BOOL, lo, hi).map(
        {"b": bool, "i": int, "u": int, "f": float, "c": complex}[d.kind])


ARITH = {
    "x + T(s)": lambda x, s: x + s, "T(s) + x": lambda x, s: s + x,
    "x * T(s)": lambda x, s: x * s, "T(s) - x": lambda x, s: s - x,
    "x / T(s)": lambda x, s: x / s, "x > T(s)": lambda x, s: x > s,
    "T(s) == x": lambda x, s: s == x, "lib.maximum(x, T(s))": None,
}


def _arith(lib, name, op, x, s):
    t = lib_type(lib, name)(s)
    if op == "lib.maximum(x, T(s))":
        return lib.maximum(x, t)
    return ARITH[op](x, t)


@st.composite
def scalar_type_calls(draw, name: str):
    """One of the expressions a NumPy user writes with a scalar type ``T``."""
    d = np.dtype(getattr(np, name))
    on_device = DEV.supports(d)
    forms = ["T(v)", "lib.asarray(v, T)", "lib.dtype(T)", "issubdtype"]
    if on_device:
        forms += ["T(x)", "x.astype(T)", "arith", "creation", "x.dtype == T", "promotion"]
    form = draw(st.sampled_from(forms))
    if form == "T(v)":
        return form_call(lambda lib, v: lib_type(lib, name)(v), f"lib.{name}(v)",
                         draw(python_value(d)))
    if form == "lib.asarray(v, T)":
        v = draw(st.one_of(python_value(d).filter(lambda v: not isinstance(v, str)),
                           st.lists(in_range(d), max_size=3)))
        if not on_device:
            return form_call(lambda lib, v: np.dtype(lib_type(lib, name)).type(0).dtype,
                             f"lib.{name}(0).dtype", v)
        if d.kind in "iu" and isinstance(v, float) and (v != v or abs(v) > 100):
            v = 7.0   # float -> int out of range is undefined in C and in NumPy
        return form_call(lambda lib, v: lib.asarray(v, dtype=lib_type(lib, name)),
                         f"lib.asarray(v, dtype=lib.{name})", v)
    if form == "lib.dtype(T)":
        return form_call(lambda lib: _dtype_attrs(lib.dtype(lib_type(lib, name))),
                         f"attributes of lib.dtype(lib.{name})")
    if form == "issubdtype":
        other = draw(st.sampled_from(ABSTRACT + CONCRETE))
        kind = draw(st.sampled_from(ISDTYPE_KINDS))
        return form_call(lambda lib, o, k: (
            lib.issubdtype(lib_type(lib, name), lib_type(lib, o)),
            isinstance(lib_type(lib, name)(0), lib_type(lib, o)) if o in ABSTRACT else None,
            lib.isdtype(lib.dtype(lib_type(lib, name)), k)),
            f"lib.issubdtype(lib.{name}, lib.<o>), isinstance(lib.{name}(0), lib.<o>), "
            f"lib.isdtype(lib.dtype(lib.{name}), k)", other, kind)
    if form == "promotion":
        x = draw(arrays([np.dtype(t) for t in DEVICE_DTYPES], SHAPES))
        return form_call(lambda lib, x: (lib.result_type(x, lib_type(lib, name)),
                                         lib.promote_types(x.dtype, lib_type(lib, name)),
                                         lib.can_cast(x.dtype, lib_type(lib, name)),
                                         lib.asarray(lib_type(lib, name)(1)),
                                         lib.asarray([lib_type(lib, name)(1)] * 2)),
                         f"lib.result_type(x, lib.{name}), lib.promote_types(x.dtype, "
                         f"lib.{name}), lib.can_cast(x.dtype, lib.{name}), "
                         f"lib.asarray(lib.{name}(1)), lib.asarray([lib.{name}(1)] * 2)", x)
    if form == "T(x)":
        # NumPy casts an array (a 0-d one to a scalar); clnp's arrays go through __array__
        x = draw(arrays([t for t in ALL if t.kind not in "fc" or d.kind not in "ub"]
                        if d.kind in "iub" else ALL, SHAPES, 0 if d.kind == "u" else -4))
        return form_call(lambda lib, x: lib_type(lib, name)(x), f"lib.{name}(x)", x)
    if form == "x.astype(T)":
        x = draw(arrays(ALL, SHAPES, 0 if d.kind in "ub" else -4))
        return form_call(lambda lib, x: x.astype(lib_type(lib, name)), f"x.astype(lib.{name})",
                         x)
    if form == "arith":
        x = draw(arrays(ALL, SHAPES, 1, 4))
        s = draw(in_range(d, 1, 4))
        op = draw(st.sampled_from(sorted(ARITH)))
        return form_call(lambda lib, x, s: _arith(lib, name, op, x, s),
                         op.replace("T", f"lib.{name}"), x, s)
    if form == "creation":
        shape = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3))
        s = draw(in_range(d))
        return form_call(lambda lib, shape, s: (lib.zeros(shape, lib_type(lib, name)),
                                                lib.full(shape, s, dtype=lib_type(lib, name)),
                                                lib.arange(3, dtype=lib_type(lib, name))),
                         f"lib.zeros(shape, lib.{name}), lib.full(shape, s, lib.{name}), "
                         f"lib.arange(3, dtype=lib.{name})", shape, s)
    x = draw(arrays([np.dtype(t) for t in DEVICE_DTYPES], SHAPES))
    # clnp names its dtypes by size: an array asked for longlong (NumPy's 'q') has dtype
    # int64 ('l'), equal to it, whose .type is numpy.int64 (not numpy.longlong): compared
    # with ==, as dtypes are
    return form_call(lambda lib, x: (x.dtype == lib_type(lib, name),
                                     x.dtype.type is lib_type(lib, name),
                                     lib.asarray(x, lib_type(lib, name)).dtype
                                     == lib_type(lib, name)),
                     f"x.dtype == lib.{name}, x.dtype.type is lib.{name}, "
                     f"lib.asarray(x, lib.{name}).dtype == lib.{name}", x)


ISDTYPE_KINDS = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
                 "complex floating", "numeric", ("integral", "real floating")]
DTYPE_ATTRS = ("kind", "itemsize", "char", "name", "str", "num", "byteorder", "isnative",
               "alignment", "type", "descr", "shape", "ndim", "hasobject", "isbuiltin")


def _dtype_attrs(d) -> tuple:
    return tuple(getattr(d, a) if a != "type" else d.type.__name__ for a in DTYPE_ATTRS)


CONCRETE = ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float16", "float32", "float64", "complex64", "complex128"]
ABSTRACT = ["generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact",
            "floating", "complexfloating"]


@st.composite
def abstract_type_calls(draw, name: str):
    """The abstract scalar classes: ``issubdtype`` of dtypes, arrays' dtypes and classes;
    ``isinstance`` of scalars; no instances; refused as an array's dtype."""
    form = draw(st.sampled_from(["issubdtype", "isinstance", "construct", "as dtype"]))
    if form == "issubdtype":
        first = draw(st.one_of(DTYPE_SPECS_NATIVE, st.sampled_from(ABSTRACT).map(hn.Lib)))
        return form_call(lambda lib, a: (lib.issubdtype(a, lib_type(lib, name)),
                                         lib.issubdtype(lib_type(lib, name), a)),
                         f"lib.issubdtype(a, lib.{name}), lib.issubdtype(lib.{name}, a)",
                         first)
    if form == "isinstance":
        x = draw(arrays([np.dtype(t) for t in DEVICE_DTYPES], SHAPES))
        return form_call(lambda lib, x: (isinstance(x.dtype.type(0), lib_type(lib, name)),
                                         lib.issubdtype(x.dtype, lib_type(lib, name))),
                         f"isinstance(x.dtype.type(0), lib.{name}), "
                         f"lib.issubdtype(x.dtype, lib.{name})", x)
    if form == "construct":
        return form_call(lambda lib, v: lib_type(lib, name)(v), f"lib.{name}(v)",
                         draw(st.sampled_from([0, 1.5, True])))
    return form_call(lambda lib, v: lib.asarray(v, dtype=lib_type(lib, name)),
                     f"lib.asarray(v, dtype=lib.{name})", draw(st.sampled_from([[1, 2], 0.5])))


# Dtype specifications as NumPy users write them: type objects, Python types, names, codes
# with and without byte order, dtypes, and specifications NumPy refuses. Big-endian and
# non-numeric dtypes (strings, objects, datetimes, long double) are valid dtypes but not array
# dtypes on a device: they stay out of the creation form (documented: clnp refuses them,
# tests/test_scalar_types.py)
NATIVE_SPECS = ["f4", "<f4", "=i8", "|b1", "?", "b", "B", "h", "H", "i", "I", "l", "L", "q",
                "Q", "e", "f", "d", "F", "D", "float32", "float64", "int", "float", "complex",
                "bool", "int8", "uint16", "uint64", "c8", "c16", "i2", "u4", "intp", "uintp",
                "half", "single", "double", "longlong", "byte", "ubyte"]
OTHER_SPECS = [">i4", ">f8", "U5", "S3", "O", "M8[s]", "m8", "V4", "g", "G", "f3", "foo",
               "i9", "int128"]
DTYPE_SPECS_NATIVE = st.one_of(
    st.sampled_from(NATIVE_SPECS),
    st.sampled_from(CONCRETE).map(hn.Lib),
    st.sampled_from([int, float, complex, bool]),
    st.sampled_from(CONCRETE).map(np.dtype))
DTYPE_SPECS = st.one_of(DTYPE_SPECS_NATIVE, st.sampled_from(OTHER_SPECS + [None]))


def _device_dtype(spec) -> bool:
    try:
        d = np.dtype(spec if not isinstance(spec, hn.Lib) else getattr(np, spec.attr))
    except TypeError:
        return False
    return d.name in DEVICE_DTYPES and d.isnative


@st.composite
def dtype_calls(draw, name: str):
    """``dtype`` over generated specifications: its attributes, comparisons between dtypes
    and with specifications, arrays made with it, arrays' dtypes compared with it."""
    form = draw(st.sampled_from(["attributes", "compare", "arrays", "array dtype"]))
    if form == "attributes":
        return form_call(lambda lib, s: _dtype_attrs(lib.dtype(s)),
                         "attributes of lib.dtype(s)", draw(DTYPE_SPECS))
    if form == "compare":
        s1, s2 = draw(DTYPE_SPECS), draw(DTYPE_SPECS)
        return form_call(lambda lib, a, b: (lib.dtype(a) == lib.dtype(b),
                                            lib.dtype(a) != b, lib.dtype(a) == b),
                         "lib.dtype(a) == lib.dtype(b), lib.dtype(a) != b, lib.dtype(a) == b",
                         s1, s2)
    s = draw(DTYPE_SPECS_NATIVE.filter(_device_dtype))
    if form == "arrays":
        v = draw(st.lists(st.integers(0, 1), max_size=3))
        return form_call(lambda lib, s, v: (lib.asarray(v, dtype=lib.dtype(s)),
                                            lib.ones(2, lib.dtype(s)).dtype.str),
                         "lib.asarray(v, dtype=lib.dtype(s)), lib.ones(2, lib.dtype(s))"
                         ".dtype.str", s, v)
    x = draw(arrays([np.dtype(t) for t in DEVICE_DTYPES], SHAPES))
    return form_call(lambda lib, x, s: (x.dtype == lib.dtype(s), x.dtype == s,
                                        _dtype_attrs(x.dtype)),
                     "x.dtype == lib.dtype(s), x.dtype == s, attributes of x.dtype", x, s)


FINFO_ATTRS = ("bits", "eps", "epsneg", "max", "min", "tiny", "smallest_normal",
               "smallest_subnormal", "resolution", "precision", "dtype", "nmant", "nexp",
               "maxexp", "minexp", "machep", "negep", "iexp")
IINFO_ATTRS = ("bits", "min", "max", "dtype", "kind")


@st.composite
def info_calls(draw, name: str):
    """``finfo``/``iinfo`` of types, names, dtypes, Python types and scalars: every attribute
    (NumPy raises ValueError for the wrong kind; clnp must too)."""
    attrs = FINFO_ATTRS if name == "finfo" else IINFO_ATTRS
    arg = draw(st.one_of(
        DTYPE_SPECS_NATIVE, st.sampled_from(["f2", "float16", "c8", "complex128"]),
        st.sampled_from(CONCRETE).flatmap(lambda t: st.just(getattr(np, t)(1)))))
    # clnp's finfo/iinfo also take a clnp array (NumPy's refuse a NumPy array): not drawn
    return form_call(lambda lib, a: tuple(getattr(getattr(lib, name)(a), at) for at in attrs),
                     f"{attrs} of lib.{name}(a)", arg)


@st.composite
def broadcast_calls(draw, name: str):
    shapes = draw(st.one_of(
        hnp.mutually_broadcastable_shapes(num_shapes=draw(st.integers(1, 3)), max_dims=3,
                                          min_side=0, max_side=3).map(lambda r: r.input_shapes),
        st.lists(hnp.array_shapes(min_dims=1, max_dims=2, min_side=2, max_side=3),
                 min_size=2, max_size=2).map(tuple)))     # often not broadcastable
    xs = [draw(arrays(REAL, s)) for s in shapes]
    return form_call(lambda lib, *xs: (lambda b: (b.shape, b.nd, b.ndim, b.size, b.numiter,
                                                  b.index, list(b)))(lib.broadcast(*xs)),
                     "(shape, nd, ndim, size, numiter, index, list) of lib.broadcast(*xs)", *xs)


ERR_MODES = st.sampled_from(["ignore", "warn", "raise", "call", "print", "log", "bogus"])


@st.composite
def errstate_calls(draw, name: str):
    kw = draw(st.dictionaries(st.sampled_from(["all", "divide", "over", "under", "invalid"]),
                              ERR_MODES, max_size=2))

    def fn(lib, **kw):
        # from a known state: the harness runs NumPy under errstate(all="ignore")
        with lib.errstate(all="warn", under="ignore"):
            with lib.errstate(**kw):
                inside = lib.geterr()
            return inside, lib.geterr()

    return form_call(fn, "lib.geterr() inside and after lib.errstate(**kw)", **kw)


@st.composite
def flatiter_calls(draw, name: str):
    x = draw(arrays(ALL, SHAPES))
    return form_call(lambda lib, x: (isinstance(x.flat, lib.flatiter), list(x.flat),
                                     len(x.flat)),
                     "isinstance(x.flat, lib.flatiter), list(x.flat), len(x.flat)", x)


@st.composite
def ndarray_calls(draw, name: str):
    form = draw(st.sampled_from(["isinstance", "construct"]))
    if form == "isinstance":
        v = draw(st.one_of(arrays(ALL, SHAPES).map(lambda a: a.tolist()),
                           st.sampled_from([1, 2.5, True])))
        return form_call(lambda lib, v: (isinstance(lib.asarray(v), lib.ndarray),
                                         isinstance(v, lib.ndarray),
                                         isinstance(lib.zeros(2), lib.ndarray)),
                         "isinstance(lib.asarray(v), lib.ndarray), isinstance(v, lib.ndarray)",
                         v)
    shape = draw(st.one_of(st.integers(0, 4),
                           hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)))
    dt = draw(st.sampled_from([None] + DEVICE_DTYPES))
    # an uninitialised array: its shape, dtype and size compare, its values cannot
    return form_call(lambda lib, shape, dt: (lambda a: (a.shape, a.dtype, a.size))(
        lib.ndarray(shape, dt) if dt else lib.ndarray(shape)),
        "(shape, dtype, size) of lib.ndarray(shape, dtype)", shape, dt)


@st.composite
def iteration_calls(draw, name: str):
    if name == "ndindex":
        shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3))
        return draw(st.sampled_from([
            form_call(lambda lib, s: list(lib.ndindex(*s)), "list(lib.ndindex(*shape))", shape),
            form_call(lambda lib, s: list(lib.ndindex(s)), "list(lib.ndindex(shape))", shape)]))
    if name == "ndenumerate":
        x = draw(arrays(ALL, SHAPES))
        return form_call(lambda lib, x: list(lib.ndenumerate(x)), "list(lib.ndenumerate(x))",
                         x)
    # nditer: one array or two that broadcast, values as Python scalars
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, min_side=0,
                                                    max_side=3))
    x = draw(arrays(REAL, shapes.input_shapes[0]))
    if draw(st.booleans()):
        return form_call(lambda lib, x: [v.item() for v in lib.nditer(x)],
                         "[v.item() for v in lib.nditer(x)]", x)
    y = draw(arrays(REAL, shapes.input_shapes[1]))
    return form_call(lambda lib, x, y: [(a.item(), b.item()) for a, b in lib.nditer([x, y])],
                     "[(a.item(), b.item()) for a, b in lib.nditer([x, y])]", x, y)


UFUNC_NAMES = [n for n in hn.namespace() if isinstance(getattr(np, n, None), np.ufunc)
               and isinstance(getattr(clnp, n, None), clnp.ufunc)]


@st.composite
def ufunc_calls(draw, name: str):
    u = draw(st.sampled_from(UFUNC_NAMES + ["sum", "sort"]))
    # the identity compared as a value (NumPy's is a Python scalar or None)
    return form_call(lambda lib, u: (lambda f: (isinstance(f, lib.ufunc),) + (
        (f.nin, f.nout, f.nargs, f.identity, f.__name__) if isinstance(f, lib.ufunc) else ()))(
            getattr(lib, u)),
        "isinstance(lib.<u>, lib.ufunc), nin, nout, nargs, identity, __name__", u)


@st.composite
def vectorize_calls(draw, name: str):
    x = draw(arrays(REAL, SHAPES, -3, 3))
    y = draw(st.integers(-2, 2))
    kw = draw(st.sampled_from([{}, {"otypes": [float]}, {"otypes": "d"},
                               {"excluded": {1}}]))
    fn = hn.Py(lambda a, b: a * 2 + b if a > 0 else b, "lambda a, b: a * 2 + b if a > 0 else b")
    return form_call(lambda lib, f, x, y, kw: lib.vectorize(f, **kw)(x, y),
                     "lib.vectorize(f, **kw)(x, y)", fn, x, y, kw)


SCALAR_TYPES = [n for n in ("bool", "bool_", "byte", "ubyte", "short", "ushort", "intc",
                            "uintc", "int_", "uint", "intp", "uintp", "long", "ulong",
                            "longlong", "ulonglong", "int8", "int16", "int32", "int64",
                            "uint8", "uint16", "uint32", "uint64", "float16", "float32",
                            "float64", "half", "single", "double", "complex64", "complex128",
                            "csingle", "cdouble")]
tspec(" ".join(SCALAR_TYPES), scalar_type_calls, "scalar type")
tspec(" ".join(ABSTRACT), abstract_type_calls, "abstract scalar class")
tspec("dtype", dtype_calls, "dtype")
tspec("finfo iinfo", info_calls, "machine limits", tol=0)
tspec("broadcast", broadcast_calls, "class (broadcasting)")
tspec("errstate", errstate_calls, "class (error state)")
tspec("flatiter", flatiter_calls, "class (flat iterator)")
tspec("ndarray", ndarray_calls, "class (array)")
tspec("ndenumerate ndindex nditer", iteration_calls, "class (host iteration)")
tspec("ufunc", ufunc_calls, "class (ufunc)")
tspec("vectorize", vectorize_calls, "class (host function)")

# Known deviations the comparison found that are still open, as strict xfails (name: why)
TYPE_XFAIL: dict[str, str] = {}


def shared_types() -> list[str]:
    """Every type clnp shares with NumPy, as tools/numpy_coverage.py counts them."""
    _, kinds, _ = hn.numpy_coverage.numpy_split(np)
    return sorted(n for n in kinds if hasattr(clnp, n))


# --------------------------------------------------------------------------------------------
# the ndarray's attributes and methods


@dataclasses.dataclass(frozen=True)
class View:
    """How the method's array is shown: as it is, or as a non-contiguous view of a base."""
    kind: str        # "plain", "step" (every other element), "reverse" (last axis), "T"

    def of(self, base):
        if self.kind == "step":
            return base[(slice(None, None, 2),) * base.ndim]
        if self.kind == "reverse":
            return base[..., ::-1]
        if self.kind == "T":
            return base.T
        return base

    def base_for(self, a: np.ndarray) -> np.ndarray:
        """A base whose view is ``a``."""
        if self.kind == "step":
            base = np.ones(tuple(2 * s for s in a.shape), a.dtype)
            base[(slice(None, None, 2),) * a.ndim] = a
            return base
        if self.kind == "reverse":
            return np.ascontiguousarray(a[..., ::-1])
        if self.kind == "T":
            return np.ascontiguousarray(a.T)
        return a


VIEWS = st.sampled_from([View("plain"), View("plain"), View("step"), View("reverse"),
                         View("T")])


def method_form(name: str, *, attr: bool = False, mutates: bool = False):
    """``view.of(base).<name>(*args, **kw)`` (an attribute when ``attr``), and the base
    afterwards when the method mutates."""
    def fn(lib, base, view, *args, **kw):
        v = view.of(base)
        r = getattr(v, name) if attr else getattr(v, name)(*args, **kw)
        return (r, base) if mutates else r
    text = f"view.of(base).{name}" + ("" if attr else "(*args, **kw)") + (
        ", then base" if mutates else "")
    return Form(fn, text)


@st.composite
def on_array(draw, name: str, arr_or_call, *, attr=False, mutates=False, views=VIEWS):
    """A method call: the array (drawn, or the first argument of a function spec's call)
    shown through a view, the rest of the call as the method's arguments."""
    c = draw(arr_or_call)
    if not isinstance(c, hn.Call):
        c = call(c)
    a, rest = np.asarray(c.args[0]), c.args[1:]
    view = draw(views) if a.ndim else View("plain")
    return call(method_form(name, attr=attr, mutates=mutates), view.base_for(a), view, *rest,
                **c.kwargs)


ATTR_SPECS: dict[str, Spec] = {}


def mspec(names: str, strategy: Callable[[str], Any], category: str, **kw) -> None:
    for name in names.split():
        assert name not in ATTR_SPECS, f"{name} specified twice"
        ATTR_SPECS[name] = Spec(strategy(name), category, same_error=True, **kw)


def from_function(fname: str | None = None, **kw):
    """The method draws its call with the function spec of the same (or ``fname``'s) name."""
    return lambda name: on_array(name, hn.SPECS[fname or name].strategy, **kw)


ANY_ARRAY = arrays(ALL, SHAPES)

# methods that mirror a namespace function, whose array is the function's first argument
mspec("all any argmax argmin argsort clip conj conjugate cumprod cumsum diagonal dot max "
      "mean min nonzero prod ravel repeat reshape round searchsorted squeeze std sum swapaxes "
      "take trace transpose var", from_function(), "method (mirrors a function)")
for _n in ("clip", "mean", "std", "var", "round", "dot", "diagonal", "trace"):
    ATTR_SPECS[_n].tol = hn.SPECS[_n].tol


def out_form(name: str) -> Form:
    """``view.of(base).<name>(*args, out=out, **kw)`` into a fresh ``out`` of the given shape
    and dtype: whether the result is ``out``, and ``out``."""
    def fn(lib, base, view, shape, dtype, *args, **kw):
        out = lib.zeros(shape, dtype)
        r = getattr(view.of(base), name)(*args, out=out, **kw)
        return r is out, out
    return Form(fn, f"view.of(base).{name}(*args, out=lib.zeros(shape, dtype), **kw): "
                    "result is out, out")


@st.composite
def with_out_or_dtype(draw, name: str, *, dtype_kw: bool):
    """NumPy's ``out=`` (shaped and typed as NumPy's result, or of another device dtype)
    and, for the accumulating methods, ``dtype=``, on the function spec's calls."""
    c = draw(hn.SPECS[name].strategy)
    a, rest, kw = np.asarray(c.args[0]), c.args[1:], dict(c.kwargs)
    view = draw(VIEWS) if a.ndim else View("plain")
    form = draw(st.sampled_from(["out", "dtype"] if dtype_kw else ["out"]))
    if form == "dtype":
        # not bool: NumPy accumulates in bool as a logical or/and, clnp refuses dtype=bool
        # for sums and means (TypeError, tests/test_statistical.py)
        dtypes = [d for d in DEVICE_DTYPES if d != "bool"]
        if name in ("var", "std"):
            # NumPy's var/std in an integer dtype truncate the mean and each square before
            # summing, and in a real dtype drop only the mean's imaginary part; clnp casts
            # the input and computes (documented differences): no integer dtypes, and
            # complex ones only for complex data
            dtypes = [d for d in dtypes if np.dtype(d).kind in ("c" if a.dtype.kind == "c"
                                                                else "fc")]
        if name == "mean":
            # an integer accumulator wraps in NumPy: only those no sum here overflows
            dtypes = [d for d in dtypes if d not in ("int8", "int16", "uint8", "uint16",
                                                     "uint32", "uint64")]
        kw["dtype"] = draw(st.sampled_from(dtypes))
        return call(method_form(name), view.base_for(a), view, *rest, **kw)
    want, err = hn.outcome(lambda: getattr(a.copy(), name)(*rest, **kw))
    if err is not None or not isinstance(want, (np.ndarray, np.generic)):
        return call(method_form(name), view.base_for(a), view, *rest, **kw)
    dtype = np.asarray(want).dtype.name
    if name != "round" and draw(st.integers(0, 3)) == 0:
        # (round into another dtype: NumPy rounds in the out's dtype, clnp in the result's
        # and casts: float16 6.65 rounds to 6.6 in NumPy, 6.7 in clnp; not drawn)
        # another dtype, under NumPy's casting rule, where the values are defined: no
        # unsigned outs (a negative value wraps in C; NumPy reduces in the out's dtype), float
        # results only into floats, complexes and bools no wider than the result (NaN or a
        # negative float into an integer is undefined in C; a wider out would compare a
        # float32 computation at float64's tolerance)
        r = np.asarray(want).dtype
        real = lambda d: np.dtype(d).itemsize // (2 if np.dtype(d).kind == "c" else 1)  # noqa
        # (and no bool out for max/min of non-bools: NumPy then runs its bool loop, max of
        # [-1, 0] is True where clnp casts the maximum, 0, to False: open, roadmap #12)
        dtype = draw(st.sampled_from([d for d in DEVICE_DTYPES if np.dtype(d).kind != "u" and (
            r.kind not in "fc" or (np.dtype(d).kind in "fcb" and real(d) <= real(r))) and not (
                name in ("max", "min") and d == "bool" and r.kind != "b")]))
    if dtype not in DEVICE_DTYPES or (name == "round" and rest and rest[0] < 0):
        # round(-1) of integers into out: NumPy divides in float64 and refuses an int out
        return call(method_form(name), view.base_for(a), view, *rest, **kw)
    return call(out_form(name), view.base_for(a), view, np.shape(want), dtype, *rest, **kw)


for _n, _dt in (("sum", True), ("prod", True), ("mean", True), ("cumsum", True),
                ("cumprod", True), ("max", False), ("min", False), ("all", False),
                ("any", False), ("clip", False), ("take", False), ("round", False),
                ("argmax", False), ("argmin", False), ("std", True), ("var", True)):
    ATTR_SPECS[_n].strategy = st.one_of(ATTR_SPECS[_n].strategy,
                                        with_out_or_dtype(_n, dtype_kw=_dt))


@st.composite
def varargs(draw, name: str):
    """``x.reshape(2, 3)`` and ``x.transpose(1, 0)``: the shape or axes as separate ints."""
    c = draw(hn.SPECS[name].strategy)
    a, rest = np.asarray(c.args[0]), c.args[1:]
    if rest and isinstance(rest[0], tuple) and len(rest[0]) >= 1:
        rest = tuple(rest[0]) + rest[1:]
    view = draw(VIEWS) if a.ndim else View("plain")
    return call(method_form(name), view.base_for(a), view, *rest, **c.kwargs)


for _n in ("reshape", "transpose"):
    ATTR_SPECS[_n].strategy = st.one_of(ATTR_SPECS[_n].strategy, varargs(_n))
mspec("astype", from_function(), "method (cast)")
mspec("copy", lambda name: on_array(name, st.tuples(ANY_ARRAY, st.sampled_from(
    [{}, {"order": "C"}, {"order": "K"}])).map(lambda t: call(t[0], **t[1]))), "method (copy)")
mspec("flatten", lambda name: on_array(name, st.tuples(ANY_ARRAY, st.sampled_from(
    [{}, {"order": "C"}, {"order": "F"}])).map(lambda t: call(t[0], **t[1]))),
    "method (copy)")
mspec("argpartition", from_function(), "method (mirrors a function)",
      compare=lambda g, w, c: hn.partitioned(g, w, hn.call(c.args[2].of(c.args[1]),
                                                            *c.args[3:], **c.kwargs),
                                             indices=True))


def partitioned_in_place(got, want, c) -> None:
    r, base = got
    assert r is None, r
    a = c.args[2].of(c.args[1])                     # the array before: c holds NumPy values
    hn.partitioned(np.asarray(c.args[2].of(base)), c.args[2].of(want[1]),
                   hn.call(a, *c.args[3:], **c.kwargs))


mspec("partition", from_function(mutates=True), "method (in place)",
      compare=partitioned_in_place)
mspec("sort", from_function(mutates=True), "method (in place)")
mspec("put", from_function(mutates=True), "method (in place)")


@st.composite
def choose_method(draw):
    c = draw(hn.SPECS["choose"].strategy)
    return call(*c.args, **c.kwargs)


mspec("choose", lambda name: on_array(name, choose_method()), "method (mirrors a function)")


@st.composite
def compress_method(draw):
    c = draw(hn.SPECS["compress"].strategy)          # compress(condition, a, axis)
    return call(c.args[1], c.args[0], **c.kwargs)


mspec("compress", lambda name: on_array(name, compress_method()),
      "method (mirrors a function)")


@st.composite
def fill_call(draw):
    """In-range values, and values NumPy 2 refuses for the dtype (an out-of-range Python int:
    OverflowError; NaN into integers: ValueError; complex into reals: TypeError)."""
    a = draw(ANY_ARRAY)
    return call(a, draw(st.one_of(in_range(a.dtype), st.sampled_from(
        [300, -1, 2 ** 40, 2.7, -2.5, np.nan, 1e10, True, 1j, 1.5 + 0j]))))


mspec("fill", lambda name: on_array(name, fill_call(), mutates=True), "method (in place)")


@st.composite
def resize_method(draw):
    # ndarray.resize pads with zeros in place (numpy.resize repeats): refcheck=False, as the
    # harness holds references NumPy's check would count; views cannot be resized (both raise)
    a = draw(arrays(ALL, SHAPES))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=5))
    form = draw(st.sampled_from(["tuple", "ints"]))
    if form == "ints" and shape:
        return call(a, *shape, refcheck=False)
    return call(a, shape, refcheck=False)


# plain arrays only: NumPy refuses to resize a view (it does not own its data); clnp records
# no view's base (docs/api.md, `base`), so its resize of a view gives the view new memory and
# leaves the base as it was
mspec("resize", lambda name: on_array(name, resize_method(), mutates=True,
                                      views=st.just(View("plain"))), "method (in place)")


@st.composite
def item_call(draw):
    a = draw(arrays(ALL, SHAPES))
    form = draw(st.sampled_from(["none", "flat", "index"]))
    if form == "flat":
        return call(a, draw(st.integers(-a.size - 1, a.size)))
    if form == "index" and a.ndim:
        return call(a, *(draw(st.integers(-s, max(s - 1, 0))) for s in a.shape))
    return call(a)


def same_python(got, want, c) -> None:
    """Python scalars and lists: the same types (int, float, bool, complex) and values."""
    assert type(got) is type(want), f"{type(got)} where NumPy has {type(want)}"
    if isinstance(want, list):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same_python(g, w, c)
        return
    assert got == want or (got != got and want != want), f"{got!r} != NumPy's {want!r}"


mspec("item", lambda name: on_array(name, item_call()), "method (to Python)",
      compare=same_python)
mspec("tolist", lambda name: on_array(name, arrays(ALL, SHAPES, nan=True)),
      "method (to Python)", compare=same_python)
mspec("tobytes", lambda name: on_array(name, st.tuples(ANY_ARRAY, st.sampled_from(
    [{}, {"order": "C"}, {"order": "F"}, {"order": "A"}])).map(lambda t: call(t[0], **t[1]))),
    "method (to bytes)")


def unpickled(got, want, c) -> None:
    hn.same(pickle.loads(got), pickle.loads(want), 1.0, "pickle.loads(dumps())")


mspec("dumps", lambda name: on_array(name, ANY_ARRAY), "method (pickle)", compare=unpickled)


@st.composite
def byteswap_call(draw):
    a = draw(arrays(ALL, SHAPES, -100, 100))
    return call(a, **draw(st.sampled_from([{}, {"inplace": False}, {"inplace": True}])))


mspec("byteswap", lambda name: on_array(name, byteswap_call(), mutates=True),
      "method (bytes)")


@st.composite
def view_call(draw):
    a = draw(arrays(ALL, SHAPES1))
    target = draw(st.sampled_from([None] + DEVICE_DTYPES))
    return call(a, target) if target else call(a)


mspec("view", lambda name: on_array(name, view_call()), "method (reinterpret)")


ATTRS = "T mT real imag shape strides ndim size itemsize nbytes dtype"
mspec(ATTRS, lambda name: on_array(name, arrays(ALL, SHAPES), attr=True), "attribute")
ATTR_SPECS["mT"].strategy = on_array("mT", arrays(ALL, SHAPES1), attr=True)
# NumPy 2 reports strides of 0 for an array with no elements (they address nothing); clnp
# reports C strides: compared on arrays with elements
ATTR_SPECS["strides"].strategy = on_array("strides", arrays(ALL, NONEMPTY), attr=True)


def flags_form():
    def fn(lib, base, view):
        f = view.of(base).flags
        return (f.c_contiguous, f.f_contiguous, f["C_CONTIGUOUS"], f["F_CONTIGUOUS"],
                f.writeable, f.aligned)
    return Form(fn, "(c_contiguous, f_contiguous, ['C_CONTIGUOUS'], ['F_CONTIGUOUS'], "
                    "writeable, aligned) of view.of(base).flags")


@st.composite
def flags_call(draw):
    a = draw(arrays(ALL, SHAPES))
    view = draw(VIEWS) if a.ndim else View("plain")
    return call(flags_form(), view.base_for(a), view)


mspec("flags", lambda name: flags_call(), "attribute")


@st.composite
def flat_call(draw):
    """``x.flat``: iterated, indexed (ints, slices, index arrays) and assigned through."""
    a = draw(arrays(ALL, SHAPES))
    view = draw(VIEWS) if a.ndim else View("plain")
    n = a.size
    idx = draw(st.one_of(st.integers(-n - 1, n), st.builds(slice, st.integers(-n, n) | st.none(),
                                                           st.integers(-n, n) | st.none(),
                                                           st.sampled_from([None, 1, 2, -1])),
                         st.lists(st.integers(-n, max(n - 1, 0)), max_size=3).map(
                             lambda v: np.asarray(v, np.intp))))
    value = draw(in_range(a.dtype))
    write = draw(st.sampled_from(["none", "through flat", "into the read"]))

    def fn(lib, base, view, idx, value):
        f = view.of(base).flat
        read = f[idx]
        values = np.array(read)           # before any write: NumPy's read is a copy
        if write == "through flat":
            f[idx] = value
        elif write == "into the read" and isinstance(read, lib.ndarray):
            read[...] = value             # a copy in NumPy: the base must not change
        # a fresh iterator: NumPy's moves its position on some reads (x.flat[[1]])
        g = view.of(base).flat
        return (values, list(g), len(g)), base

    return call(Form(fn, f"r = x.flat[idx]; write {write}; r, list(x.flat), len(x.flat), "
                         "base"), view.base_for(a), view, idx, value)


mspec("flat", lambda name: flat_call(), "attribute (flat iterator)")

# names of ndarray's that no generated comparison can cover, with the reason
ATTR_EXCLUDED: dict[str, str] = {
    "device": "NumPy's is the string 'cpu', clnp's an OpenCL device object: nothing to "
              "compare (tests/test_array_object.py checks clnp's)",
    "to_device": "NumPy's accepts only 'cpu', clnp's an OpenCL device: tests/test_runtime.py "
                 "moves arrays between devices",
    "dump": "writes a pickle file: compared through files in tests/test_ndarray_methods.py "
            "(dumps, its in-memory twin, is compared here)",
    "tofile": "writes a file: compared through files in tests/test_ndarray_methods.py",
}

# Known bugs the comparison found that are still open, as strict xfails (name: why)
ATTR_XFAIL: dict[str, str] = {}


def shared_attrs() -> list[str]:
    """Every public attribute of numpy.ndarray that clnp.ndarray has (the coverage tool's
    ndarray section)."""
    return [n for n in hn.numpy_coverage.public(dir(np.ndarray)) if hasattr(clnp.ndarray, n)]


# --------------------------------------------------------------------------------------------
# tests


def test_every_type_is_covered():
    """Every type clnp shares with NumPy has a spec here (and the specs name nothing else)."""
    assert sorted(TYPE_SPECS) == shared_types(), (
        set(shared_types()) ^ set(TYPE_SPECS))


def test_every_ndarray_attribute_is_covered():
    """Every ndarray attribute clnp shares with NumPy has a spec or a justified exclusion."""
    names = set(shared_attrs())
    assert set(ATTR_SPECS) | set(ATTR_EXCLUDED) == names, (
        (set(ATTR_SPECS) | set(ATTR_EXCLUDED)) ^ names)
    assert not set(ATTR_SPECS) & set(ATTR_EXCLUDED)
    assert all(len(why) > 20 for why in ATTR_EXCLUDED.values())


def test_xfails_name_specs():
    assert set(TYPE_XFAIL) <= set(TYPE_SPECS) and set(ATTR_XFAIL) <= set(ATTR_SPECS)


def _params(specs, xfails):
    return [pytest.param(n, marks=pytest.mark.xfail(reason=xfails[n], strict=True))
            if n in xfails else n for n in sorted(specs)]


@pytest.mark.parametrize("name", _params(TYPE_SPECS, TYPE_XFAIL))
def test_type_matches_numpy(name):
    hn._run(name, hn.EXAMPLES, TYPE_SPECS, run_form)


@pytest.mark.parametrize("name", _params(ATTR_SPECS, ATTR_XFAIL))
def test_ndarray_attribute_matches_numpy(name):
    hn._run(name, hn.EXAMPLES, ATTR_SPECS, run_form)


@pytest.mark.hypo_long
@pytest.mark.parametrize("name", sorted(TYPE_SPECS))
def test_type_matches_numpy_long(name, request):
    if LONG not in (request.config.getoption("-m") or ""):
        pytest.skip("long run: python -m pytest tests/test_hypothesis_types.py -m hypo_long")
    hn._run(name, hn.LONG_EXAMPLES, TYPE_SPECS, run_form)


@pytest.mark.hypo_long
@pytest.mark.parametrize("name", sorted(ATTR_SPECS))
def test_ndarray_attribute_matches_numpy_long(name, request):
    if LONG not in (request.config.getoption("-m") or ""):
        pytest.skip("long run: python -m pytest tests/test_hypothesis_types.py -m hypo_long")
    hn._run(name, hn.LONG_EXAMPLES, ATTR_SPECS, run_form)
