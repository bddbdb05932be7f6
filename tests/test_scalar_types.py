"""dtype objects, scalar types and dtype utilities are NumPy's (``clnp.float32 is
numpy.float32``, as in CuPy), with NumPy's semantics; dtypes no OpenCL device holds raise
clear errors (issue #12 item 3)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import clnp

SCALARS = ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "complex64", "complex128", "byte", "ubyte",
           "short", "ushort", "intc", "uintc", "int_", "uint", "intp", "uintp", "long",
           "ulong", "longlong", "ulonglong", "half", "single", "double", "csingle", "cdouble"]
ABSTRACT = ["generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact",
            "floating", "complexfloating"]


@pytest.mark.parametrize("name", SCALARS + ABSTRACT + ["dtype", "True_", "False_"])
def test_names_are_numpys(name):
    assert getattr(clnp, name) is getattr(np, name)


def test_scalar_construction_and_arrays(device):
    assert clnp.float32(3) == np.float32(3) and type(clnp.float32(3)) is np.float32
    assert clnp.ubyte(300 % 256) == 44
    x = clnp.zeros(3, dtype=clnp.float32, device=device)
    assert x.dtype == clnp.float32 and x.dtype == np.dtype("float32")
    assert isinstance(x.dtype, clnp.dtype)
    assert clnp.asarray([1, 2], dtype=clnp.ushort, device=device).dtype == np.uint16
    assert clnp.arange(3, dtype=clnp.intc, device=device).dtype == np.intc
    assert clnp.bool is np.bool_
    y = clnp.asarray(clnp.float32(2.5), device=device)
    assert y.dtype == np.float32 and float(y) == 2.5
    assert clnp.isdtype(clnp.float32, "real floating")
    assert clnp.finfo(clnp.float32).eps == np.finfo(np.float32).eps
    assert clnp.iinfo(clnp.int16).max == 32767


def test_issubdtype(device):
    x = clnp.arange(3, device=device)
    assert clnp.issubdtype(x.dtype, clnp.integer)
    assert clnp.issubdtype(x.dtype, clnp.signedinteger)
    assert not clnp.issubdtype(x.dtype, clnp.floating)
    assert clnp.issubdtype(clnp.float32, clnp.inexact)
    assert clnp.issubdtype(np.dtype("complex64"), clnp.complexfloating)


NUMERIC = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("a,b", list(itertools.combinations_with_replacement(NUMERIC, 2)))
def test_promote_types_and_result_type(a, b):
    assert clnp.promote_types(a, b) == np.promote_types(a, b)
    assert clnp.promote_types(getattr(np, a if a != "bool" else "bool_"), b) == \
        np.promote_types(a, b)
    assert clnp.result_type(np.dtype(a), np.dtype(b)) == np.result_type(a, b)


@pytest.mark.parametrize("dtype,scalar", [("int8", 1), ("uint8", 3), ("int16", 2.0),
                                          ("float32", 2.0), ("float16", 1j),
                                          ("float32", 1j), ("bool", 1), ("bool", 1.5),
                                          ("int64", 1.0), ("complex64", 2.0)])
def test_result_type_nep50_weak_scalars(device, dtype, scalar):
    """Python scalars are weak (NEP 50): they take the array's kind when they can."""
    arr = clnp.zeros(2, dtype=dtype, device=device)
    assert clnp.result_type(arr, scalar) == np.result_type(np.zeros(2, dtype), scalar)
    assert clnp.result_type(dtype, scalar) == np.result_type(np.dtype(dtype), scalar)


def test_min_scalar_type_common_type_typecodes(device):
    for v in (0, 255, 256, -1, -129, 1.5, 1e300, 2 ** 40, 1 + 1j):
        assert clnp.min_scalar_type(v) == np.min_scalar_type(v)
    x32 = clnp.ones(2, dtype=clnp.float32, device=device)
    xi = clnp.arange(2, device=device)
    xc = clnp.ones(2, dtype=clnp.complex64, device=device)
    for args in ((x32,), (xi,), (x32, xc), (xi, xc), (clnp.ones(1, dtype=clnp.float16,
                                                                device=device),)):
        assert clnp.common_type(*args) is np.common_type(*(a.to_numpy() for a in args))
    assert clnp.typename("f") == np.typename("f")
    assert clnp.mintypecode(["d", "f"]) == np.mintypecode(["d", "f"])
    assert clnp.sctypeDict["float32"] is np.float32
    assert "object" not in clnp.sctypeDict and "str" not in clnp.sctypeDict
    assert set(clnp.typecodes["AllFloat"]) == set("efdFD")
    assert np.float64 in clnp.ScalarType and float in clnp.ScalarType


@pytest.mark.parametrize("make,word", [
    (lambda d: clnp.asarray(["a", "b"], device=d), "string"),
    (lambda d: clnp.asarray(np.array(["a"]), device=d), "string"),
    (lambda d: clnp.zeros(3, dtype=object, device=d), "Python objects"),
    (lambda d: clnp.asarray([object()], device=d), "Python objects"),
    (lambda d: clnp.asarray(np.array(["2020-01-01"], "datetime64[D]"), device=d), "datetime"),
    (lambda d: clnp.zeros(2, dtype="timedelta64[s]", device=d), "datetime"),
    (lambda d: clnp.asarray(np.zeros(2, "i4,f4"), device=d), "structured"),
    (lambda d: clnp.arange(3, device=d).astype("U3"), "string"),
    (lambda d: clnp.promote_types("U1", "int8"), "string"),
])
def test_non_device_dtypes_raise_clearly(device, make, word):
    with pytest.raises(TypeError, match=word) as info:
        make(device)
    assert "clnp" in str(info.value)


@pytest.mark.parametrize("name", ["datetime64", "timedelta64", "str_", "bytes_", "object_",
                                  "void", "longdouble"])
def test_missing_types_explain(name):
    with pytest.raises(AttributeError, match="OpenCL|cannot hold"):
        getattr(clnp, name)
    assert not hasattr(clnp, name)
