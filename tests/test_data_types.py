"""Data types: astype, can_cast, result_type, finfo, iinfo, isdtype, the inspection API's
dtype listing, and devices without fp64.

The astype matrix (14 x 14 pairs) runs as one fused kernel per source dtype: one ``copy``
instruction per target dtype, the instruction ``astype`` itself binds, so each pair goes through
the same conversion code; a sample of pairs then goes through ``astype`` proper.
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import clnp
from clnp._core import dtypes as dt
from clnp._core.array import Array
from clnp._kernels.elementwise import Instr
from clnp._core.eager import run_elementwise

xp = pytest.importorskip("array_api_strict")

ALL14 = list(dt.ALL)          # the standard's 13 dtypes, float16 and bfloat16
STRICT = [d for d in ALL14 if d not in dt.HALF]


def supported(device):
    return [d for d in ALL14 if device.supports(d)]


def xp_dtype(d):
    return getattr(xp, np.dtype(d).name)


def sample(d):
    """Values of dtype ``d`` exercising rounding, truncation, signs and extremes."""
    if dt.kind(d) == "b":
        return np.array([True, False, True, True], d)
    if dt.kind(d) in "iu":
        info = np.iinfo(d)
        vals = [0, 1, 2, 100, 127, 255, 256, 1000, 65504, 65505, 2 ** 31 + 5, 2 ** 53 + 1,
                int(info.max), int(info.min)]
        if dt.kind(d) == "i":
            vals += [-1, -2, -128, -129, -65505]
        return np.array([v for v in vals if info.min <= v <= info.max], d)
    real = [0.0, -0.0, 0.5, 1.5, 2.5, -2.5, -0.7, 3.9, 127.9, 255.5, 1e-3, 65504.0, 65520.0,
            1 / 3, 1.00048828125, 1.0004882812500002, 3e38, 1e-8, 2.0 ** 40, np.inf, -np.inf,
            np.nan]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if dt.kind(d) == "f":
            return np.array(real, d)
        return np.array([complex(v, w) for v, w in zip(real, real[::-1])], d)


def defined(src_vals, dst):
    """Elements whose cast the standard defines: everything except float -> integer casts of
    NaN, infinities and values whose truncation is outside the target's range."""
    if dt.kind(dst) not in "iu" or dt.kind(src_vals.dtype) not in "fc":
        return np.ones(src_vals.shape, bool)
    v = np.real(src_vals).astype(np.float64)
    info = np.iinfo(dst)
    with np.errstate(invalid="ignore"):
        t = np.trunc(v)
        return np.isfinite(v) & (t >= float(info.min)) & (t <= float(info.max))


def expected_cast(vals, dst):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return vals.astype(dst)


def assert_cast(got, vals, dst, what):
    exp = expected_cast(vals, dst)
    assert got.dtype == dst, what
    m = defined(vals, dst)
    g, e = got[m], exp[m]
    if dt.kind(dst) in "fc":
        for part in ((np.real, np.imag) if dt.kind(dst) == "c" else (lambda z: z,)):
            gp, ep = part(g), part(e)
            same = (gp == ep) & (np.signbit(gp) == np.signbit(ep)) | (np.isnan(gp) &
                                                                     np.isnan(ep))
            assert same.all(), f"{what}: {vals[m][~same]} -> {gp[~same]}, NumPy {ep[~same]}"
    else:
        assert (g == e).all(), f"{what}: {vals[m][g != e]} -> {g[g != e]}, NumPy {e[g != e]}"


VECTORISABLE = [d for d in ALL14 if dt.kind(d) in "iu" or d.name in ("float32", "float64")]


@pytest.mark.parametrize("src", ALL14, ids=lambda d: d.name)
def test_astype_every_pair(src, device):
    """src -> every dtype through fused kernels of ``copy`` instructions (the cast astype
    runs): one for all targets (scalar code), and for int/float32/float64 sources one more
    over those targets, which runs the vectorised casts on the first 32 elements."""
    if not device.supports(src):
        pytest.skip(f"{device} has no {src}")
    vals = sample(src)
    if src in VECTORISABLE:
        vals = np.concatenate([np.resize(vals, 32), vals])
    x = clnp.asarray(vals, device=device)
    runs = [supported(device)]
    if src in VECTORISABLE:
        # float -> uint32/uint64 casts are scalar-only; leave them out so the kernel vectorises
        runs.append([d for d in VECTORISABLE if device.supports(d) and not (
            dt.kind(src) == "f" and d.name in ("uint32", "uint64"))])
    for dsts in runs:
        body = tuple(Instr("copy", (0,), (d,), d, d) for d in dsts)
        outs = [Array.empty(x.shape, d, device) for d in dsts]
        run_elementwise(body, [x], [src], outs)
        for d, o in zip(dsts, outs):
            assert_cast(o.to_numpy(), vals, d, f"{src} -> {d}")


PAIRS = [("float64", "int32"), ("float32", "uint8"), ("complex128", "float32"),
         ("complex64", "complex128"), ("float32", "bool"), ("bool", "float16"),
         ("int64", "uint8"), ("float64", "float16"), ("float16", "float64"),
         ("uint64", "float64"), ("int8", "complex64"), ("float16", "int16")]


@pytest.mark.parametrize("src,dst", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_astype_function(src, dst, device):
    src, dst = np.dtype(src), np.dtype(dst)
    if not (device.supports(src) and device.supports(dst)):
        pytest.skip("needs fp64")
    vals = sample(src)
    x = clnp.asarray(vals, device=device)
    y = clnp.astype(x, dst)
    assert y.dtype == dst and y.shape == x.shape
    assert_cast(y.to_numpy(), vals, dst, f"astype {src} -> {dst}")
    # strided input, method spelling
    z = x[::-2].astype(dst)
    assert_cast(z.to_numpy(), vals[::-2], dst, f"astype {src}[::-2] -> {dst}")


def test_astype_float_to_integer_truncates_and_wraps_negatives(device):
    d = np.float32
    x = clnp.asarray(np.array([-2.7, -0.5, 0.5, 2.7, 255.9, -1.0, -200.7], d), device=device)
    np.testing.assert_array_equal(clnp.astype(x, clnp.int16).to_numpy(),
                                  [-2, 0, 0, 2, 255, -1, -200])
    # negative -> unsigned goes through a signed integer (NumPy on x86): -1 -> 255
    np.testing.assert_array_equal(clnp.astype(x, clnp.uint8).to_numpy(),
                                  [254, 0, 0, 2, 255, 255, 56])


def test_astype_copy_semantics(device):
    x = clnp.asarray(np.arange(4, dtype=np.float32), device=device)
    assert clnp.astype(x, clnp.float32, copy=False) is x
    y = clnp.astype(x, clnp.float32)
    assert y is not x
    x[0] = 100.0
    assert float(y[0]) == 0.0
    with pytest.raises(TypeError):
        clnp.astype(x, "not a dtype")
    with pytest.raises(TypeError):
        clnp.astype(object(), clnp.float32)


def test_astype_rejects_unsupported_dtypes(device):
    x = clnp.asarray(np.arange(3, dtype=np.int32), device=device)
    for bad in (np.dtype("datetime64[s]"), np.dtype("U3"), object):
        with pytest.raises(TypeError):
            clnp.astype(x, bad)


# ------------------------------------------------------------------------------ promotion
def test_can_cast_matches_array_api_strict_and_numpy(device):
    for a, b in itertools.product(STRICT, STRICT):
        got = clnp.can_cast(a, b)
        assert isinstance(got, bool)
        if xp.can_cast(xp_dtype(a), xp_dtype(b)):
            assert got, (a, b)
        else:   # the standard leaves cross-kind casts open; clnp follows NumPy's safe casting
            assert got == np.can_cast(a, b, casting="safe"), (a, b)
    x = clnp.asarray(np.zeros(2, np.int8), device=device)
    assert clnp.can_cast(x, clnp.int16) and not clnp.can_cast(x, clnp.uint8)
    assert clnp.can_cast(clnp.float16, clnp.float32) and not clnp.can_cast(clnp.float32,
                                                                           clnp.float16)


def test_result_type_matches_array_api_strict_and_numpy(device):
    for a, b in itertools.product(ALL14, ALL14):
        if dt.bfloat16 in (a, b):
            continue      # JAX's rules: tests/test_bfloat16.py
        got = clnp.result_type(a, b)
        if a in STRICT and b in STRICT:
            try:
                ref = xp.result_type(xp_dtype(a), xp_dtype(b))
            except TypeError:
                ref = None
            if ref is not None:
                assert got.name == str(ref).rsplit(".", 1)[-1], (a, b)
                continue
        assert got == np.result_type(a, b), (a, b)
    x = clnp.asarray(np.zeros(2, np.int8), device=device)
    y = clnp.asarray(np.zeros(2, np.uint8), device=device)
    assert clnp.result_type(x, y) == clnp.int16
    assert clnp.result_type(x, y, clnp.float32) == clnp.float32
    assert clnp.result_type(clnp.int8) == clnp.int8


@pytest.mark.parametrize("dtype,scalar,expected", [
    ("int8", 1, "int8"), ("int8", 1.0, "float64"), ("uint8", True, "uint8"),
    ("float32", 1.0, "float32"), ("float32", 1j, "complex64"), ("float16", 2.5, "float16"),
    ("bool", 1, "int64"), ("complex64", 1.0, "complex64"), ("float64", 1j, "complex128")])
def test_result_type_with_python_scalars(dtype, scalar, expected):
    assert clnp.result_type(np.dtype(dtype), scalar) == np.dtype(expected)
    assert clnp.result_type(scalar, np.dtype(dtype)) == np.dtype(expected)
    assert np.result_type(np.dtype(dtype), scalar) == np.dtype(expected)   # NEP 50 agrees


def test_result_type_errors():
    with pytest.raises(ValueError):
        clnp.result_type()
    with pytest.raises(ValueError):
        clnp.result_type(1, 2.0)
    with pytest.raises(OverflowError):
        clnp.result_type(clnp.uint8, -1)
    with pytest.raises(TypeError):
        clnp.result_type(clnp.int8, "x")


# ------------------------------------------------------------------------------ finfo / iinfo
@pytest.mark.parametrize("d", [dt.float16, dt.float32, dt.float64, dt.complex64,
                               dt.complex128], ids=lambda d: d.name)
def test_finfo(d, device):
    for arg in ([d] + ([clnp.zeros((2,), dtype=d, device=device)]
                       if device.supports(d) else [])):
        f = clnp.finfo(arg)
        ref = np.finfo(d)
        assert type(f.bits) is int and f.bits == ref.bits
        for name in ("eps", "max", "min", "smallest_normal"):
            v = getattr(f, name)
            assert type(v) is float and v == float(getattr(ref, name)), name
        assert f.dtype == np.dtype(ref.dtype)            # complex64 -> float32
    if d in STRICT:
        s = xp.finfo(xp_dtype(d))
        f = clnp.finfo(d)
        assert (f.bits, f.eps, f.max, f.min, f.smallest_normal) == \
            (s.bits, s.eps, s.max, s.min, s.smallest_normal)


@pytest.mark.parametrize("d", dt.INTEGER, ids=lambda d: d.name)
def test_iinfo(d, device):
    for arg in (d, clnp.zeros((2,), dtype=d, device=device)):
        i = clnp.iinfo(arg)
        s = xp.iinfo(xp_dtype(d))
        assert type(i.max) is int and type(i.min) is int and type(i.bits) is int
        assert (i.bits, i.max, i.min) == (s.bits, s.max, s.min)
        assert i.dtype == d


def test_finfo_iinfo_reject_other_kinds():
    for bad in (clnp.int32, clnp.bool):
        with pytest.raises((TypeError, ValueError)):
            clnp.finfo(bad)
    for bad in (clnp.float32, clnp.complex64, clnp.bool):
        with pytest.raises((TypeError, ValueError)):
            clnp.iinfo(bad)


# ------------------------------------------------------------------------------ isdtype
KIND_NAMES = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
              "complex floating", "numeric"]


def test_isdtype_kinds_match_array_api_strict():
    for d in STRICT:
        for k in KIND_NAMES:
            assert clnp.isdtype(d, k) == xp.isdtype(xp_dtype(d), k), (d, k)
        for other in STRICT:
            assert clnp.isdtype(d, other) == (d == other)
    for k1, k2 in itertools.combinations(KIND_NAMES, 2):
        for d in STRICT:
            assert clnp.isdtype(d, (k1, k2)) == xp.isdtype(xp_dtype(d), (k1, k2))
    assert clnp.isdtype(clnp.float32, (clnp.int8, "real floating"))
    assert clnp.isdtype(clnp.float16, "real floating") and clnp.isdtype(clnp.float16,
                                                                        "numeric")
    assert not clnp.isdtype(clnp.bool, "numeric")


def test_isdtype_errors(device):
    with pytest.raises(ValueError, match="foo"):
        clnp.isdtype(clnp.float32, "foo")
    with pytest.raises(TypeError):
        clnp.isdtype(clnp.float32, 1)
    with pytest.raises(TypeError):
        clnp.isdtype(clnp.zeros((1,), device=device), "numeric")   # an array, not a dtype
    with pytest.raises(TypeError):
        clnp.isdtype("float32", "numeric")


# ------------------------------------------------------------------------------ inspection
def test_info_dtypes_by_kind(device):
    info = clnp.__array_namespace_info__()
    sinfo = xp.__array_namespace_info__()
    fp64 = device.has_fp64
    for kind in [None] + KIND_NAMES + [("bool", "integral"), ("real floating",
                                                              "complex floating")]:
        got = info.dtypes(device=device, kind=kind)
        ref = sinfo.dtypes(kind=kind)
        names = [n for n in ref if fp64 or n not in ("float64", "complex128")]
        assert sorted(got) == sorted(names), kind
        for n, d in got.items():
            assert d == np.dtype(n) and d == getattr(clnp, n)
    with pytest.raises(ValueError):
        info.dtypes(kind="foo")
    defaults = info.default_dtypes(device=device)
    assert defaults["integral"] == clnp.int64 and defaults["indexing"] == clnp.int64
    assert defaults["real floating"] == (clnp.float64 if fp64 else clnp.float32)
    assert defaults["complex floating"] == (clnp.complex128 if fp64 else clnp.complex64)


# ------------------------------------------------------------------------------ no fp64
@pytest.fixture
def no_fp64(device, monkeypatch):
    """The same device pretending to lack cl_khr_fp64 (restored after the test)."""
    monkeypatch.setattr(device, "has_fp64", False)
    return device


def test_float64_unsupported_without_fp64(no_fp64):
    device = no_fp64
    assert not device.supports(clnp.float64) and not device.supports(clnp.complex128)
    assert issubclass(clnp.UnsupportedDtypeError, TypeError)
    with pytest.raises(clnp.UnsupportedDtypeError, match="float64"):
        clnp.asarray(np.arange(3.0), device=device)
    with pytest.raises(clnp.UnsupportedDtypeError, match="complex128"):
        clnp.zeros((3,), dtype=clnp.complex128, device=device)
    x = clnp.asarray(np.arange(4, dtype=np.float32), device=device)
    with pytest.raises(clnp.UnsupportedDtypeError, match="float64"):
        clnp.astype(x, clnp.float64)
    info = clnp.__array_namespace_info__()
    assert "float64" not in info.dtypes(device=device)
    assert "complex128" not in info.dtypes(device=device)
    assert info.default_dtypes(device=device)["real floating"] == clnp.float32
    # Python (and NumPy double) scalars and integer division fall back to single precision
    assert clnp.asarray(1.5, device=device).dtype == clnp.float32
    assert (x + 1.5).dtype == clnp.float32
    assert (x * np.float64(2.0)).dtype == clnp.float32
    i = clnp.asarray(np.arange(1, 5, dtype=np.int32), device=device)
    r = i / i
    assert r.dtype == clnp.float32
    np.testing.assert_array_equal(r.to_numpy(), np.ones(4, np.float32))
    assert clnp.sin(i).dtype == clnp.float32


def test_finfo_iinfo_have_numpys_attributes():
    """Every attribute of numpy.finfo/iinfo, with NumPy's values; NumPy's ValueError for a
    dtype of the other kind (found by tests/test_hypothesis_types.py)."""
    for d in (dt.float16, dt.float32, dt.float64, dt.complex64, dt.complex128):
        f, ref = clnp.finfo(d), np.finfo(d)
        for name in ("bits", "eps", "epsneg", "max", "min", "tiny", "smallest_normal",
                     "smallest_subnormal", "resolution", "precision", "nmant", "nexp",
                     "maxexp", "minexp", "machep", "negep", "iexp", "dtype"):
            assert getattr(f, name) == getattr(ref, name), (d, name)
    for d in dt.INTEGER:
        assert (clnp.iinfo(d).kind, clnp.iinfo(d).bits) == (np.iinfo(d).kind, np.iinfo(d).bits)
    with pytest.raises(ValueError):
        clnp.finfo(clnp.int32)
    with pytest.raises(ValueError):
        clnp.iinfo(clnp.float32)


def test_result_type_numpy_scalars_are_strong():
    """numpy.float64/complex128 subclass Python's float/complex but are strong under NEP 50:
    result_type and the complex-order ufuncs that use it promote to them (found by
    tests/test_hypothesis_types.py: maximum(float32 array, numpy.complex128) was complex64)."""
    x, n = clnp.asarray([1.0], dtype=clnp.float32), np.asarray([1.0], dtype=np.float32)
    for s in (np.float64(2), np.complex128(1j), np.float16(1), 2.0, 1j):
        assert clnp.result_type(x, s) == np.result_type(n, s), s
        assert clnp.maximum(x, s).dtype == np.maximum(n, s).dtype, s
