"""Tests for the OpenCL C helper library ``clnp._kernels.helpers``.

The helpers are compiled directly with PyOpenCL on the first available device (three programs:
all integer types, float + float2, double + double2; per C type one kernel per result kind,
an ``op`` argument selecting the helper) and compared with NumPy, with mpmath (high-precision references where NumPy itself
is inaccurate), and with the special-case tables of the Array API standard (2025.12), which win
where NumPy disagrees.
"""
from __future__ import annotations

import functools
import itertools
import math
import re
import warnings

import numpy as np
import pytest

cl = pytest.importorskip("pyopencl")

from clnp._kernels import helpers as H  # noqa: E402
from clnp._kernels.helpers import HELPER_NAMES, helper_name, render_helpers  # noqa: E402

NP = {"char": np.int8, "short": np.int16, "int": np.int32, "long": np.int64,
      "uchar": np.uint8, "ushort": np.uint16, "uint": np.uint32, "ulong": np.uint64,
      "float": np.float32, "double": np.float64, "float2": np.complex64,
      "double2": np.complex128}
INTS = ("char", "short", "int", "long", "uchar", "ushort", "uint", "ulong")
SIGNED = ("char", "short", "int", "long")
BINARY = {"floordiv", "remainder", "ipow", "shl", "shr", "maximum", "minimum", "logaddexp",
          "cmul", "cdiv", "cpow"}
REAL_OUT = {"cabs", "carg"}
INT_OUT = {"isinf_c", "isnan_c", "isfinite_c"}
GROUPS = {"int": INTS, "float": ("float", "float2"), "double": ("double", "double2")}

pi = math.pi
inf = math.inf
nan = math.nan


def _out_ctype(name: str, t: str) -> str:
    if name in REAL_OUT:
        return t[:-1]
    if name in INT_OUT:
        return "int"
    return t


def _group(t: str) -> str:
    return "int" if t in INTS else ("float" if t.startswith("float") else "double")


# ------------------------------------------------------------------------------------------
# OpenCL plumbing (one context, three programs, all cached at module scope)

@functools.lru_cache(maxsize=None)
def _cl():
    """The first test device (CLNP_TEST_DEVICES narrows it), through clnp's own context so the
    programs get clnp's build options (correctly rounded fp32 divide/sqrt)."""
    from conftest import DEVICES
    d = DEVICES[0]
    return d.context, d.queue, d.cl_device


def _options() -> list[str]:
    from conftest import DEVICES
    return list(DEVICES[0].default_build_options)


def _has_fp64() -> bool:
    return "cl_khr_fp64" in _cl()[2].extensions


def _ops(t: str) -> dict[str, list[str]]:
    """Helpers for C type ``t`` grouped by result kind ('same', 'real', 'int')."""
    kinds: dict[str, list[str]] = {}
    for n in sorted(HELPER_NAMES):
        if t in H.HELPER_TYPES[n]:
            kind = "real" if n in REAL_OUT else ("int" if n in INT_OUT else "same")
            kinds.setdefault(kind, []).append(n)
    return kinds


@functools.lru_cache(maxsize=None)
def _program(group: str):
    """One program per group; per C type one kernel per result kind, ``op`` selecting the
    helper (PoCL compiles a work-group function per kernel and local size on first launch,
    so few kernels and a fixed local size keep a cold run fast)."""
    if group == "double" and not _has_fp64():
        pytest.skip("device lacks cl_khr_fp64")
    ctx = _cl()[0]
    need = [(n, t) for t in GROUPS[group] for names in _ops(t).values() for n in names]
    src = ["#pragma OPENCL EXTENSION cl_khr_fp64 : enable" if group == "double" else "",
           render_helpers(need)]
    for t in GROUPS[group]:
        for kind, names in _ops(t).items():
            o = _out_ctype(names[0], t)
            cases = "\n".join(
                f"        case {k}: r[i] = {helper_name(n, t)}"
                f"({'a[i], b[i]' if n in BINARY else 'a[i]'}); break;"
                for k, n in enumerate(names))
            src.append(f"""
__kernel void k_{kind}_{t}(__global const {t} *a, __global const {t} *b, __global {o} *r,
                           const int op, const ulong n) {{
    size_t i = get_global_id(0);
    if (i >= n) return;
    switch (op) {{
{cases}
    }}
}}""")
    return cl.Program(ctx, "\n".join(src)).build(options=_options())


@functools.lru_cache(maxsize=None)
def _kernel(t: str, name: str):
    for kind, names in _ops(t).items():
        if name in names:
            return cl.Kernel(_program(_group(t)), f"k_{kind}_{t}"), names.index(name)
    raise KeyError((name, t))


_LOCAL = 64


def run(name: str, t: str, *args) -> np.ndarray:
    """Apply helper ``name`` for C type ``t`` elementwise to (broadcast) arrays."""
    ctx, queue, _ = _cl()
    kernel, op = _kernel(t, name)
    arrs = [np.ascontiguousarray(a) for a in
            np.broadcast_arrays(*[np.asarray(a, dtype=NP[t]) for a in args])]
    shape = arrs[0].shape
    arrs = [a.reshape(-1) for a in arrs]
    n = arrs[0].size
    out = np.empty(n, NP[_out_ctype(name, t)])
    if n == 0:
        return out.reshape(shape)
    mf = cl.mem_flags
    bufs = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a) for a in arrs]
    if len(bufs) == 1:
        bufs.append(bufs[0])
    obuf = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
    gsize = -(-n // _LOCAL) * _LOCAL
    kernel(queue, (gsize,), (_LOCAL,), *bufs, obuf, np.int32(op), np.uint64(n))
    cl.enqueue_copy(queue, out, obuf)
    return out.reshape(shape)


def cplx(re_, im_, dtype) -> np.ndarray:
    """Complex array built component-wise (keeps signed zeros and NaNs exactly)."""
    re_, im_ = np.broadcast_arrays(np.asarray(re_, dtype=float), np.asarray(im_, dtype=float))
    z = np.empty(re_.shape, dtype)
    z.real, z.imag = re_, im_
    return z


def same_value(got, want, *, check_zero_sign=True) -> np.ndarray:
    """Elementwise: equal, both NaN, and (optionally) zeros of the same sign."""
    got, want = np.asarray(got), np.asarray(want)
    if np.iscomplexobj(got) or np.iscomplexobj(want):
        return (same_value(got.real, want.real, check_zero_sign=check_zero_sign)
                & same_value(np.imag(got), np.imag(want), check_zero_sign=check_zero_sign))
    with np.errstate(invalid="ignore"):
        ok = (got == want) | (np.isnan(got) & np.isnan(want))
    if check_zero_sign:
        ok &= ~((want == 0) & (np.signbit(got) != np.signbit(want)))
    return ok


def assert_same(got, want, inputs=(), *, check_zero_sign=True, what=""):
    ok = same_value(got, want, check_zero_sign=check_zero_sign)
    if not ok.all():
        bad = np.nonzero(~np.asarray(ok).reshape(-1))[0][:20]
        rows = [tuple(np.asarray(x).reshape(-1)[i] for x in (*inputs, got, want)) for i in bad]
        raise AssertionError(f"{what}: {int((~ok).sum())} mismatches (inputs..., got, want):\n"
                             + "\n".join(map(repr, rows)))


def assert_close_parts(got, want, rtol, inputs=(), what=""):
    """Per component: infinities/NaNs/zero signs where ``want`` is not finite must match
    exactly; finite components within ``rtol`` of the element's largest finite component."""
    got = np.asarray(got, dtype=np.complex128)
    want = np.asarray(want, dtype=np.complex128)
    parts = [(got.real, want.real), (got.imag, want.imag)]
    with np.errstate(invalid="ignore"):
        scale = np.maximum(np.where(np.isfinite(want.real), np.abs(want.real), 0),
                           np.where(np.isfinite(want.imag), np.abs(want.imag), 0))
        ok = np.ones(got.shape, bool)
        for g, w in parts:
            fin = np.isfinite(w)
            ok &= np.where(fin, np.abs(g - w) <= rtol * scale, same_value(g, w))
    if not ok.all():
        bad = np.nonzero(~ok)[0][:10]
        rows = [tuple(np.asarray(x)[i] for x in (*inputs, got, want)) for i in bad]
        raise AssertionError(f"{what}: {int((~ok).sum())} mismatches:\n"
                             + "\n".join(map(repr, rows)))


def assert_crel(got, want, rtol, inputs=(), what=""):
    """Norm-wise relative error |got - want| / |want| <= rtol (complex or real)."""
    got = np.asarray(got, dtype=np.complex128)
    want = np.asarray(want, dtype=np.complex128)
    with np.errstate(invalid="ignore", divide="ignore"):
        err = np.abs(got - want) / np.abs(want)
    ok = (err <= rtol) | (got == want)
    if not ok.all():
        bad = np.nonzero(~ok)[0][:10]
        rows = [tuple(np.asarray(x)[i] for x in (*inputs, got, want, err)) for i in bad]
        raise AssertionError(f"{what}: max rel err {np.nanmax(err):.3g} > {rtol:.3g}:\n"
                             + "\n".join(map(repr, rows)))


COMPLEX_TYPES = [pytest.param("float2", id="complex64"), pytest.param("double2", id="complex128")]
REAL_TYPES = [pytest.param("float", id="float32"), pytest.param("double", id="float64")]


def _skip_fp64(t):
    if t.startswith("double") and not _has_fp64():
        pytest.skip("device lacks cl_khr_fp64")


# ------------------------------------------------------------------------------------------
# interface / rendering

def test_helper_name():
    assert helper_name("floordiv", "int") == "clnp_floordiv_int"
    assert helper_name("cexp", "double2") == "clnp_cexp_double2"


def test_helper_names_cover_required_set():
    required = {"floordiv", "remainder", "ipow", "cmul", "cdiv", "cabs", "carg", "cexp", "clog",
                "csqrt", "cpow", "csin", "ccos", "ctan", "csinh", "ccosh", "ctanh", "casin",
                "cacos", "catan", "casinh", "cacosh", "catanh", "cexpm1", "clog1p", "clog2",
                "clog10", "csquare", "creciprocal", "csign", "cconj", "sign", "maximum",
                "minimum", "logaddexp", "isinf_c", "isnan_c", "isfinite_c", "shl", "shr"}
    assert isinstance(HELPER_NAMES, frozenset)
    assert required <= HELPER_NAMES
    for n in ("floordiv", "remainder", "sign", "maximum", "minimum"):
        assert set(H.HELPER_TYPES[n]) == set(INTS) | {"float", "double"}
    for n in ("ipow", "shl", "shr"):
        assert set(H.HELPER_TYPES[n]) == set(INTS)
    assert set(H.HELPER_TYPES["logaddexp"]) == {"float", "double"}
    for n in required - {"floordiv", "remainder", "sign", "maximum", "minimum", "logaddexp",
                         "ipow", "shl", "shr"}:
        assert set(H.HELPER_TYPES[n]) == {"float2", "double2"}, n


_DEF_RE = re.compile(r"^inline\s+\w+\s+(clnp_\w+)\s*\(", re.M)


def _definitions(src: str) -> list[str]:
    return _DEF_RE.findall(src)


def test_render_dedup_and_dependency_order():
    need = [("cpow", "double2"), ("clog", "double2"), ("cpow", "double2"), ("cacosh", "float2"),
            ("floordiv", "int"), ("floordiv", "int"), ("casin", "float2")]
    src = render_helpers(need)
    defs = _definitions(src)
    assert len(defs) == len(set(defs))
    for n, t in need:
        assert helper_name(n, t) in defs
    assert "clnp_cexp_double2" in defs and "clnp_cmul_double2" in defs
    # every clnp_ function referenced in a definition is defined before it
    chunks = re.split(r"(?=^inline\s)", src, flags=re.M)
    defined: set[str] = set()
    for chunk in chunks:
        m = _DEF_RE.match(chunk)
        if not m:
            continue
        for ref in set(re.findall(r"\bclnp_\w+(?=\s*\()", chunk)) - {m.group(1)}:
            assert ref in defined, f"{m.group(1)} uses {ref} before its definition"
        defined.add(m.group(1))
    assert "#include" not in src and "printf" not in src


def test_render_float_only_emits_no_double():
    need = [(n, "float2") for n in sorted(HELPER_NAMES) if "float2" in H.HELPER_TYPES[n]]
    need += [(n, "float") for n in sorted(HELPER_NAMES) if "float" in H.HELPER_TYPES[n]]
    src = render_helpers(need)
    assert not re.search(r"\bdouble\d?\b", src)
    # float templates use float literals only (no implicit promotion to double)
    code = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
    lits = re.findall(r"(?<![\w.])(\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+)(?![\w.])", code)
    assert lits == [], lits[:5]


def test_render_errors_and_empty():
    assert render_helpers([]) == ""
    with pytest.raises(KeyError):
        render_helpers([("no_such_helper", "int")])
    with pytest.raises(TypeError):
        render_helpers([("cexp", "float")])
    with pytest.raises(TypeError):
        render_helpers([("ipow", "double")])


def test_all_helpers_build_and_run():
    """Every (helper, type) compiles and runs on a few ordinary values."""
    for group, types in GROUPS.items():
        if group == "double" and not _has_fp64():
            continue
        for t in types:
            for n in sorted(HELPER_NAMES):
                if t not in H.HELPER_TYPES[n]:
                    continue
                args = [np.array([1, 2, 3])] * (2 if n in BINARY else 1)
                if t in ("float2", "double2"):
                    args = [cplx([0.5, 1.5, -2.0], [0.25, -1.0, 3.0], NP[t])] * len(args)
                r = run(n, t, *args)
                assert r.shape == (3,)


# ------------------------------------------------------------------------------------------
# integers

def _int_samples(t, rng):
    ii = np.iinfo(NP[t])
    sp = {ii.min, ii.min + 1, 0, 1, 2, 3, 7, ii.max, ii.max - 1, ii.max // 2}
    if ii.min:
        sp |= {-1, -2, -7}
    sp = np.array(sorted(sp), dtype=NP[t])
    a, b = (x.ravel() for x in np.meshgrid(sp, sp))
    r1 = rng.integers(ii.min, ii.max, 3000, dtype=NP[t], endpoint=True)
    r2 = rng.integers(ii.min, ii.max, 3000, dtype=NP[t], endpoint=True)
    r3 = rng.integers(max(ii.min, -40), 40, 3000, dtype=NP[t])
    return sp, np.concatenate([a, r1, r1]), np.concatenate([b, r2, r3])


@pytest.mark.parametrize("t", INTS)
def test_int_floordiv_remainder_minmax_sign(t):
    rng = np.random.default_rng(10)
    _, a, b = _int_samples(t, rng)
    with np.errstate(all="ignore"):
        for name, ref in (("floordiv", np.floor_divide), ("remainder", np.remainder),
                          ("maximum", np.maximum), ("minimum", np.minimum)):
            np.testing.assert_array_equal(run(name, t, a, b), ref(a, b), err_msg=name)
        np.testing.assert_array_equal(run("sign", t, a), np.sign(a))
    ii = np.iinfo(NP[t])
    # documented edge cases: x // 0 == 0, x % 0 == 0, MIN // -1 wraps, MIN % -1 == 0
    assert (run("floordiv", t, [5, 0, ii.max], 0) == 0).all()
    assert (run("remainder", t, [5, 0, ii.max], 0) == 0).all()
    if t in SIGNED:
        assert run("floordiv", t, [ii.min], [-1])[0] == ii.min
        assert run("remainder", t, [ii.min], [-1])[0] == 0
        np.testing.assert_array_equal(run("floordiv", t, [-7, 7, -7, 7], [2, -2, -2, 2]),
                                      [-4, -4, 3, 3])
        np.testing.assert_array_equal(run("remainder", t, [-7, 7, -7, 7], [2, -2, -2, 2]),
                                      [1, -1, -1, 1])


@pytest.mark.parametrize("t", INTS)
def test_int_shifts(t):
    rng = np.random.default_rng(11)
    sp, a, _ = _int_samples(t, rng)
    ii = np.iinfo(NP[t])
    counts = np.concatenate([np.arange(-3 if ii.min else 0, ii.bits + 4).astype(NP[t]), sp])
    x, c = (v.ravel() for v in np.meshgrid(np.concatenate([sp, a[-60:]]), counts))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(run("shl", t, x, c), np.left_shift(x, c))
        np.testing.assert_array_equal(run("shr", t, x, c), np.right_shift(x, c))
    # documented: counts >= bits -> 0 (or -1 for negative >>); negative counts likewise
    assert run("shl", t, [1], [ii.bits])[0] == 0
    if t in SIGNED:
        np.testing.assert_array_equal(run("shr", t, [-5, 5, -5, 5], [ii.bits, ii.bits, -1, -1]),
                                      [-1, 0, -1, 0])
        assert run("shl", t, [5], [-1])[0] == 0
        assert run("shr", t, [ii.min], [ii.bits - 1])[0] == -1
        assert run("shl", t, [-1], [ii.bits - 1])[0] == ii.min


@pytest.mark.parametrize("t", INTS)
def test_int_ipow(t):
    rng = np.random.default_rng(12)
    sp, a, _ = _int_samples(t, rng)
    ii = np.iinfo(NP[t])
    bases = np.concatenate([sp, a[-30:], rng.integers(max(ii.min, -5), 6, 30).astype(NP[t])])
    exps = np.concatenate([np.arange(0, 70, dtype=NP[t]), np.array([ii.max, ii.max - 1], NP[t])])
    x, e = (v.ravel() for v in np.meshgrid(bases, exps))
    np.testing.assert_array_equal(run("ipow", t, x, e), np.power(x, e))
    if t in SIGNED:
        # negative exponents (NumPy raises): 1 -> 1, -1 -> +-1, anything else -> 0
        got = run("ipow", t, [1, -1, -1, 2, -2, 0, ii.max, ii.min], [-3, -3, -4, -1, -2, -1, -1, -5])
        np.testing.assert_array_equal(got, [1, -1, 1, 0, 0, 0, 0, 0])
        with pytest.raises(ValueError):
            np.power(NP[t](2), NP[t](-1))


# ------------------------------------------------------------------------------------------
# real floating point

def _real_samples(t, rng, n=6000):
    dt = NP[t]
    fi = np.finfo(dt)
    sp = np.array([0., -0., 1., -1., 0.5, -2.5, 3., -7., 1e20, -1e-20, fi.max, -fi.max,
                   fi.tiny, -fi.tiny, fi.smallest_subnormal, -fi.smallest_subnormal,
                   inf, -inf, nan], dt)
    a, b = (x.ravel() for x in np.meshgrid(sp, sp))
    r1 = (rng.standard_normal(n) * 10.0 ** rng.integers(-5, 6, n)).astype(dt)
    r2 = (rng.standard_normal(n) * 10.0 ** rng.integers(-5, 6, n)).astype(dt)
    r3 = np.round(rng.standard_normal(n) * 20).astype(dt)     # many exact multiples
    r4 = np.round(rng.standard_normal(n) * 5).astype(dt)
    return np.concatenate([a, r1, r3]), np.concatenate([b, r2, r4])


def _is_spec_floordiv_case(a, b):
    """Where the standard's floor_divide special cases deliberately differ from NumPy."""
    return (np.isinf(a) & np.isfinite(b) & (b != 0)) | (np.isfinite(a) & (a != 0) & np.isinf(b))


@pytest.mark.parametrize("t", REAL_TYPES)
def test_real_floordiv_remainder_vs_numpy(t):
    _skip_fp64(t)
    a, b = _real_samples(t, np.random.default_rng(20))
    with np.errstate(all="ignore"):
        keep = ~_is_spec_floordiv_case(a, b)
        assert_same(run("floordiv", t, a, b)[keep], np.floor_divide(a, b)[keep],
                    (a[keep], b[keep]), what="floordiv")
        assert_same(run("remainder", t, a, b), np.remainder(a, b), (a, b), what="remainder")


def _spec_table_floor_divide():
    """floor_divide special cases of the 2025.12 standard, as (x1, x2, expected)."""
    pos = [0.5, 1.0, 3.0, 1e30]
    neg = [-v for v in pos]
    rows = []
    rows += [(nan, x, nan) for x in [1.0, 0.0, inf, nan]] + [(x, nan, nan) for x in [1.0, -0.0, inf]]
    rows += [(x, y, nan) for x in (inf, -inf) for y in (inf, -inf)]
    rows += [(x, y, nan) for x in (0.0, -0.0) for y in (0.0, -0.0)]
    rows += [(0.0, y, 0.0) for y in pos + [inf]] + [(-0.0, y, -0.0) for y in pos + [inf]]
    rows += [(0.0, y, -0.0) for y in neg + [-inf]] + [(-0.0, y, 0.0) for y in neg + [-inf]]
    rows += [(x, 0.0, inf) for x in pos + [inf]] + [(x, -0.0, -inf) for x in pos + [inf]]
    rows += [(x, 0.0, -inf) for x in neg + [-inf]] + [(x, -0.0, inf) for x in neg + [-inf]]
    # NumPy returns NaN for these four ...
    rows += [(inf, y, inf) for y in pos] + [(inf, y, -inf) for y in neg]
    rows += [(-inf, y, -inf) for y in pos] + [(-inf, y, inf) for y in neg]
    # ... and -1.0 for the -0 cases below
    rows += [(x, inf, 0.0) for x in pos] + [(x, -inf, -0.0) for x in pos]
    rows += [(x, inf, -0.0) for x in neg] + [(x, -inf, 0.0) for x in neg]
    # remaining: floor of the quotient, sign rules
    rows += [(7.0, 2.0, 3.0), (-7.0, 2.0, -4.0), (7.0, -2.0, -4.0), (-7.0, -2.0, 3.0),
             (1.0, 3.0, 0.0), (-1.0, -3.0, 0.0), (-1.0, 3.0, -1.0), (1.0, -3.0, -1.0),
             (1e-30, 1e30, 0.0), (-1e-30, 1e30, -1.0), (1.0, 0.1, 9.0), (1e30, 1e-30, inf),
             (-1e30, 1e-30, -inf)]
    assert all(isinstance(r[2], float) for r in rows)
    return rows


@pytest.mark.parametrize("t", REAL_TYPES)
def test_floordiv_array_api_special_cases(t):
    """The standard wins over NumPy: inf // finite is a signed infinity (NumPy: NaN) and
    5 // -inf == -0, -5 // inf == -0 (NumPy: -1.0)."""
    _skip_fp64(t)
    rows = _spec_table_floor_divide()
    if t == "double":
        rows = [(a, b, r) if not (abs(a) == 1e30 and abs(b) == 1e-30) else (a * 1e278, b, r)
                for a, b, r in rows]
    a, b, want = (np.array(c, NP[t]) for c in zip(*rows))
    assert_same(run("floordiv", t, a, b), want, (a, b), what="floor_divide spec")
    # and the NumPy deviations are real (guards the table against NumPy changing)
    with np.errstate(all="ignore"):
        assert np.isnan(np.floor_divide(NP[t](inf), NP[t](2)))
        assert np.floor_divide(NP[t](-5), NP[t](inf)) == -1


@pytest.mark.parametrize("t", REAL_TYPES)
def test_remainder_array_api_special_cases(t):
    _skip_fp64(t)
    pos, neg = [0.5, 3.0, 1e30], [-0.5, -3.0, -1e30]
    rows = [(nan, 1.0, nan), (1.0, nan, nan), (inf, inf, nan), (-inf, inf, nan),
            (inf, -inf, nan), (-inf, -inf, nan), (0.0, 0.0, nan), (-0.0, 0.0, nan),
            (0.0, -0.0, nan), (-0.0, -0.0, nan)]
    rows += [(0.0, y, 0.0) for y in pos + [inf]] + [(-0.0, y, 0.0) for y in pos + [inf]]
    rows += [(0.0, y, -0.0) for y in neg + [-inf]] + [(-0.0, y, -0.0) for y in neg + [-inf]]
    rows += [(x, z, nan) for x in pos + neg + [inf, -inf] for z in (0.0, -0.0)]
    rows += [(x, y, nan) for x in (inf, -inf) for y in pos + neg]
    rows += [(x, inf, x) for x in pos] + [(x, -inf, -inf) for x in pos]
    rows += [(x, inf, inf) for x in neg] + [(x, -inf, x) for x in neg]
    rows += [(7.0, 2.0, 1.0), (-7.0, 2.0, 1.0), (7.0, -2.0, -1.0), (-7.0, -2.0, -1.0),
             (6.0, 3.0, 0.0), (-6.0, 3.0, 0.0), (6.0, -3.0, -0.0), (-6.0, -3.0, -0.0),
             (5.5, 2.0, 1.5), (-5.5, 2.0, 0.5)]
    a, b, want = (np.array(c, NP[t]) for c in zip(*rows))
    assert_same(run("remainder", t, a, b), want, (a, b), what="remainder spec")


@pytest.mark.parametrize("t", REAL_TYPES)
def test_real_sign_maximum_minimum(t):
    _skip_fp64(t)
    a, b = _real_samples(t, np.random.default_rng(21), n=2000)
    assert_same(run("sign", t, a), np.sign(a), (a,), what="sign")   # sign(-0) == +0
    # NaN-propagating; the sign of a zero result is unspecified
    assert_same(run("maximum", t, a, b), np.maximum(a, b), (a, b), check_zero_sign=False,
                what="maximum")
    assert_same(run("minimum", t, a, b), np.minimum(a, b), (a, b), check_zero_sign=False,
                what="minimum")
    got = run("maximum", t, [nan, 1.0, nan, -inf], [1.0, nan, nan, nan])
    assert np.isnan(got).all()
    assert_same(run("sign", t, [-0.0, 0.0, nan, -inf, inf, -1e-40]),
                np.array([0.0, 0.0, nan, -1.0, 1.0, -1.0]), what="sign spec")


@pytest.mark.parametrize("t", REAL_TYPES)
def test_logaddexp(t):
    _skip_fp64(t)
    dt = NP[t]
    eps = np.finfo(dt).eps
    rng = np.random.default_rng(22)
    a = (rng.standard_normal(5000) * 10.0 ** rng.integers(-3, 4, 5000)).astype(dt)
    b = (rng.standard_normal(5000) * 10.0 ** rng.integers(-3, 4, 5000)).astype(dt)
    got, want = run("logaddexp", t, a, b), np.logaddexp(a.astype(np.float64), b)
    # cancellation near 0 makes the error absolute in max(|a|, |b|)
    tol = 4 * eps * (np.abs(want) + np.maximum(np.abs(a), np.abs(b)))
    assert (np.abs(got - want) <= tol).all()
    big = np.array([1e30 if t == "float" else 1e300], dt)[0]
    x = np.array([inf, inf, -inf, 3.0, inf, -inf, nan, 1.0, nan, -inf, big, -big, 0.0], dt)
    y = np.array([inf, -inf, -inf, inf, 2.0, 5.0, 1.0, nan, nan, nan, big, -big, 0.0], dt)
    want = np.array([inf, inf, -inf, inf, inf, 5.0, nan, nan, nan, nan, big, -big,
                     math.log(2)], dt)
    got = run("logaddexp", t, x, y)
    assert_same(got[:10], want[:10], (x, y), what="logaddexp special")
    np.testing.assert_allclose(got[10:], want[10:], rtol=4 * eps)


# ------------------------------------------------------------------------------------------
# complex: arithmetic

def _cplx_random(t, rng, n, lo=-3, hi=2):
    mag = 10.0 ** rng.uniform(lo, hi, n)
    return (mag * np.exp(1j * rng.uniform(-pi, pi, n))).astype(NP[t])


def _eps(t):
    return float(np.finfo(NP[t]).eps)


@pytest.mark.parametrize("t", COMPLEX_TYPES)
def test_complex_arithmetic_vs_numpy(t):
    _skip_fp64(t)
    rng = np.random.default_rng(30)
    z, w = _cplx_random(t, rng, 4000), _cplx_random(t, rng, 4000)
    z[:4] = cplx([1.0, 0.0, -2.0, 3.0], [0.0, 1.0, 0.0, -4.0], NP[t])
    zz, ww = z.astype(np.complex128), w.astype(np.complex128)
    e = _eps(t)
    assert_crel(run("cmul", t, z, w), zz * ww, 2 * e, (z, w), "cmul")
    assert_crel(run("cdiv", t, z, w), zz / ww, 4 * e, (z, w), "cdiv")
    assert_crel(run("csquare", t, z), zz * zz, 2 * e, (z,), "csquare")
    assert_crel(run("creciprocal", t, z), 1 / zz, 4 * e, (z,), "creciprocal")
    assert_crel(run("cabs", t, z), np.abs(zz), 2 * e, (z,), "cabs")
    assert_crel(run("carg", t, z), np.angle(zz), 2 * e, (z,), "carg")
    assert_same(run("cconj", t, z), np.conj(z), (z,), what="cconj")
    # the same dtype NumPy results, exactly where NumPy uses the same formula
    assert_same(run("cdiv", t, z, w), z / w, (z, w), what="cdiv == numpy")
    assert_same(run("creciprocal", t, z), np.reciprocal(z), (z,), what="reciprocal == numpy")


@pytest.mark.parametrize("t", COMPLEX_TYPES)
def test_no_fp_contraction(t):
    """z * conj(z) has an exactly zero imaginary part (an FMA-contracted kernel would not)."""
    _skip_fp64(t)
    z = _cplx_random(t, np.random.default_rng(31), 2000, -1, 1)
    r = run("cmul", t, z, np.conj(z))
    assert (r.imag == 0).all()
    assert (run("csquare", t, z).real == (z.real * z.real - z.imag * z.imag)).all()


@pytest.mark.parametrize("t", COMPLEX_TYPES)
def test_complex_arithmetic_special(t):
    _skip_fp64(t)
    dt = NP[t]
    # all-NaN -> NaN + NaN j (the only complex special case the standard fixes)
    n2 = cplx(nan, nan, dt)
    for name in ("cmul", "cdiv"):
        r = run(name, t, n2, n2)
        assert np.isnan(r.real) and np.isnan(r.imag)
    # division by zero, reciprocal of zero (as 1.0 / x), of infinities, of huge values
    assert_same(run("cdiv", t, cplx(1.0, 0.0, dt), cplx(0.0, 0.0, dt)), cplx(inf, nan, dt))
    z = cplx([0.0, -0.0, inf, -inf, 1.0, 0.0, 2.0], [0.0, 0.0, 1.0, 0.0, 0.0, -inf, 2.0], dt)
    want = cplx([inf, inf, 0.0, -0.0, 1.0, 0.0, 0.25], [nan, nan, -0.0, -0.0, -0.0, 0.0, -0.25], dt)
    assert_same(run("creciprocal", t, z), want, (z,), what="creciprocal special")
    big = np.finfo(dt).max / 2
    r = run("cdiv", t, cplx(big, big, dt), cplx(big, big, dt))
    assert_crel(r, np.array([1.0 + 0j]), 2 * _eps(t))
    # cabs: the hypot special cases of the standard's abs
    re_ = [inf, -inf, nan, 1.0, 0.0, -0.0, 3.0, nan, 1.0, nan]
    im_ = [nan, 2.0, inf, -inf, -5.0, nan, 0.0, 1.0, nan, nan]
    want = np.array([inf, inf, inf, inf, 5.0, nan, 3.0, nan, nan, nan])
    assert_same(run("cabs", t, cplx(re_, im_, dt)), want.astype(np.finfo(dt).dtype), what="cabs")
    # predicates
    zs = cplx([1.0, inf, 1.0, nan, -inf, 0.0], [2.0, 0.0, nan, 0.0, inf, -inf], dt)
    np.testing.assert_array_equal(run("isinf_c", t, zs), [0, 1, 0, 0, 1, 1])
    np.testing.assert_array_equal(run("isnan_c", t, zs), [0, 0, 1, 1, 0, 0])
    np.testing.assert_array_equal(run("isfinite_c", t, zs), [1, 0, 0, 0, 0, 0])


@pytest.mark.parametrize("t", COMPLEX_TYPES)
def test_csign(t):
    _skip_fp64(t)
    dt = NP[t]
    z = _cplx_random(t, np.random.default_rng(32), 2000, -30, 30)
    assert_crel(run("csign", t, z), z.astype(np.complex128) / np.abs(z.astype(np.complex128)),
                2 * _eps(t), (z,), "csign")
    fi = np.finfo(dt)
    re_ = [0.0, -0.0, 0.0, -0.0, nan, 1.0, nan, inf, fi.max, fi.smallest_subnormal, inf, 0.0, -3.0]
    im_ = [0.0, 0.0, -0.0, -0.0, 1.0, nan, nan, nan, fi.max, fi.smallest_subnormal, 2.0, -inf, 4.0]
    s = math.sqrt(0.5)
    want = cplx([0.0, 0.0, 0.0, 0.0, nan, nan, nan, nan, s, s, 1.0, 0.0, -0.6],
                [0.0, 0.0, 0.0, 0.0, nan, nan, nan, nan, s, s, 0.0, -1.0, 0.8], dt)
    got = run("csign", t, cplx(re_, im_, dt))
    assert_same(got[:8], want[:8], what="csign special")
    assert_crel(got[8:], want[8:], 2 * _eps(t), what="csign scaled")


@pytest.mark.parametrize("t", COMPLEX_TYPES)
def test_cpow(t):
    _skip_fp64(t)
    dt = NP[t]
    rng = np.random.default_rng(33)
    z = _cplx_random(t, rng, 3000, -2, 2)
    w = _cplx_random(t, rng, 3000, -2, 0.5)
    w[:600] = rng.integers(-12, 13, 600)                   # integral exponents (fast path)
    w[600:900] = rng.uniform(-3, 3, 300)                   # real exponents
    zz, ww = z.astype(np.complex128), w.astype(np.complex128)
    with np.errstate(all="ignore"):
        want = zz ** ww
    # error grows with |w log z| (the conditioning of exp)
    cond = 1 + np.abs(ww * np.log(zz)) + np.abs(ww)
    got = run("cpow", t, z, w)
    err = np.abs(got - want) / np.abs(want)
    assert (err <= 8 * _eps(t) * cond).all(), np.max(err / cond)
    # exact small integer powers, 0 and 1 exponents, zero base (NumPy's rules)
    zs = cplx([1.0, 1.0, 2.0, 0.0, 0.0, 0.0, nan, 3.0, 0.0], [1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 4.0, 0.0], dt)
    ws = cplx([2.0, 3.0, -1.0, 2.0, -1.0, 0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0], dt)
    want = cplx([0.0, -2.0, 0.5, 0.0, nan, nan, 1.0, 3.0, 1.0], [2.0, 2.0, 0.0, 0.0, nan, nan, 0.0, 4.0, 0.0], dt)
    assert_same(run("cpow", t, zs, ws), want, (zs, ws), what="cpow special")
    with np.errstate(all="ignore"):
        assert_same(np.power(zs, ws), want, check_zero_sign=False, what="numpy cpow special")


# ------------------------------------------------------------------------------------------
# complex: elementary functions

FUNCS = {
    "cexp": np.exp, "clog": np.log, "csqrt": np.sqrt, "csin": np.sin, "ccos": np.cos,
    "ctan": np.tan, "csinh": np.sinh, "ccosh": np.cosh, "ctanh": np.tanh, "casin": np.arcsin,
    "cacos": np.arccos, "catan": np.arctan, "casinh": np.arcsinh, "cacosh": np.arccosh,
    "catanh": np.arctanh, "cexpm1": np.expm1, "clog1p": np.log1p, "clog2": np.log2,
    "clog10": np.log10,
}
ODD = ("csin", "ctan", "csinh", "ctanh", "casin", "catan", "casinh", "catanh")


@pytest.mark.parametrize("t", COMPLEX_TYPES)
def test_complex_functions_vs_numpy(t):
    """Moderate inputs against NumPy (complex128 reference), norm-wise relative error."""
    _skip_fp64(t)
    rng = np.random.default_rng(40)
    z = _cplx_random(t, rng, 3000, -1, 1.5)
    # points on the axes and near the unit circle too
    z[:200] = rng.uniform(-5, 5, 200)
    z[200:400] = 1j * rng.uniform(-5, 5, 200)
    z[400:600] = np.exp(1j * rng.uniform(-pi, pi, 200))
    e = _eps(t)
    for name, f in FUNCS.items():
        zz = z.astype(np.complex128)
        if name in ("cexp", "cexpm1", "csin", "ccos", "csinh", "ccosh"):
            zz = (zz * 0.3).astype(NP[t]).astype(np.complex128)   # keep |Re|, |Im| <= ~10
        if name == "clog1p":                                      # NumPy's log1p: log(1 + z)
            zz = zz[np.abs(zz) > 0.5]
        got = run(name, t, zz.astype(NP[t]))
        assert_crel(got, f(zz), 8 * e, (zz,), name)


def _mp_ref(fn, z, prec=400):
    """mpmath reference; ``prec`` bits must cover the cancellation in mpmath's own formulas
    (e.g. asinh(z) = log(z + sqrt(z^2 + 1)) loses ~log2(1/|z|) bits for tiny z)."""
    mpmath = pytest.importorskip("mpmath")
    f = getattr(mpmath, fn)
    with mpmath.workprec(prec):
        return np.array([complex(f(mpmath.mpc(c.real, c.imag)))
                         for c in np.asarray(z, complex)])


_MP = {"cexp": "exp", "clog": "log", "csqrt": "sqrt", "csin": "sin", "ccos": "cos", "ctan": "tan",
       "csinh": "sinh", "ccosh": "cosh", "ctanh": "tanh", "casin": "asin", "cacos": "acos",
       "catan": "atan", "casinh": "asinh", "cacosh": "acosh", "catanh": "atanh",
       "cexpm1": "expm1", "clog1p": "log1p"}


@pytest.mark.parametrize("t", COMPLEX_TYPES)
def test_complex_functions_hard_regions(t):
    """High-precision references for tiny |z|, |z| ~ 1, z ~ 1, z ~ i and huge |z|, where the
    naive formulas (and NumPy's log1p) cancel or overflow."""
    _skip_fp64(t)
    dt = NP[t]
    rng = np.random.default_rng(41)
    n = 120
    lo = -25 if t == "double2" else -12

    def around(c, lo_, hi_):
        return (c + 10.0 ** rng.uniform(lo_, hi_, n) * np.exp(1j * rng.uniform(-pi, pi, n))).astype(dt)

    tiny = around(0, lo, -2)
    regions = {
        "tiny": tiny,
        "circle": (np.exp(1j * rng.uniform(-pi, pi, n)) * (1 + rng.normal(0, 1e-6, n))).astype(dt),
        "circle-1": (np.exp(1j * rng.uniform(-pi, pi, n)) * (1 + rng.normal(0, 1e-6, n)) - 1).astype(dt),
        "near1": around(1, lo + 8, -1), "near-1": around(-1, lo + 8, -1),
        "nearI": around(1j, lo + 8, -1),
        "huge": around(0, 8, 30 if t == "double2" else 15),
    }
    e = _eps(t)
    for name, fn in _MP.items():
        for label, z in regions.items():
            if label == "huge" and name in ("cexp", "cexpm1", "csin", "ccos", "ctan", "csinh",
                                            "ccosh", "ctanh"):
                continue
            got = run(name, t, z)
            assert_crel(got, _mp_ref(fn, z), 8 * e, (z,), f"{name} {label}")


@pytest.mark.parametrize("t", COMPLEX_TYPES)
def test_complex_functions_extreme_finite(t):
    """Overflow/underflow avoidance: huge and subnormal inputs, large real parts of exp."""
    _skip_fp64(t)
    dt = NP[t]
    fi = np.finfo(dt)
    e = _eps(t)
    big, sub = float(fi.max) / 2, float(fi.smallest_subnormal) * 12345
    lmax = math.log(float(fi.max))
    # exp(x) overflows but one component of the result does not (clear of the boundary)
    cases = {
        "csqrt": cplx([big, -big, big, sub, -sub, 0.0], [big, big, -1.0, sub, 3 * sub, sub], dt),
        "clog": cplx([big, fi.max, sub, sub, 1.0], [big, fi.max, 0.0, sub, sub], dt),
        "cexp": cplx([lmax + 1, lmax + 1, lmax + 3, lmax - 3], [1.4, 0.2, 0.5, 3.0], dt),
        "ccosh": cplx([lmax + 1, -lmax - 2, lmax + 3], [1.4, 3.0, -1.0], dt),
        "csinh": cplx([lmax + 1, -lmax - 2, lmax + 3], [0.2, 3.0, -1.0], dt),
        "ctanh": cplx([50.0, -50.0, 500.0], [0.5, 3.0, 1e-3], dt),
        "casinh": cplx([big, sub, -big], [big, sub, 1.0], dt),
        "cacos": cplx([big, sub, -big], [big, sub, 1.0], dt),
        "catanh": cplx([big, sub, -big, 1.0], [big, sub, 1.0, sub], dt),
        "cexpm1": cplx([sub, -sub, lmax + 2], [sub, 0.0, 0.5], dt),
        "clog1p": cplx([sub, big, -1.0], [sub, big, sub], dt),
    }
    for name, z in cases.items():
        with np.errstate(over="ignore"):
            want = _mp_ref(_MP[name], z, prec=2400).astype(dt)
        assert_close_parts(run(name, t, z), want, 8 * e, (z,), name)


def _special_grid(t):
    dt = NP[t]
    big = 1e30 if t == "float2" else 1e300
    sub = float(np.finfo(dt).smallest_subnormal)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, big, -big, sub, inf, -inf, nan]
    a, b = zip(*itertools.product(vals, vals))
    return cplx(a, b, dt)


# where NumPy (glibc / NumPy's own formulas) and the standard or this library legitimately
# differ on the special-value grid: sign-unspecified results, and NumPy deviations from the
# standard (tanh(inf + yj) imaginary zero sign, expm1 special cases, log1p of tiny values).
_NUMPY_GRID_SKIP = {
    "cexpm1": lambda z: ~(np.isfinite(z.real) & np.isfinite(z.imag)) | (np.abs(z.real) > 100),
    "clog1p": lambda z: np.abs(z) < 1e-3,
}


@pytest.mark.parametrize("t", COMPLEX_TYPES)
def test_complex_special_grid_vs_numpy(t):
    """All pairs of {0, -0, 1, -1, 0.5, -2.5, huge, -huge, subnormal, inf, -inf, nan}: NaN
    positions and values agree with NumPy; signs of infinities/zeros where the standard
    leaves them unspecified are not compared."""
    _skip_fp64(t)
    z = _special_grid(t)
    for name, f in FUNCS.items():
        keep = ~_NUMPY_GRID_SKIP.get(name, lambda z: np.zeros(z.shape, bool))(z)
        zk = z[keep]
        with np.errstate(all="ignore"):
            want = f(zk)
        got = run(name, t, zk)
        tiny = 2 * float(np.finfo(NP[t]).smallest_subnormal)
        for part in ("real", "imag"):
            g, w = getattr(got, part), getattr(want, part)
            with np.errstate(invalid="ignore"):
                nan_ok = np.isnan(g) == np.isnan(w)
                # signs of zeros and infinities may differ (unspecified / checked elsewhere)
                zi = ((g == 0) & (w == 0)) | (np.isinf(g) & np.isinf(w))
                close = np.isclose(g, w, rtol=8 * _eps(t), atol=tiny)
                ok = nan_ok & (np.isnan(w) | zi | close)
            assert ok.all(), (name, part, list(zip(zk[~ok], got[~ok], want[~ok]))[:8])


@pytest.mark.parametrize("t", COMPLEX_TYPES)
def test_complex_symmetries(t):
    """f(conj z) == conj f(z) for every function (cut functions included, thanks to signed
    zeros) and f(-z) == -f(z) for the odd ones, exactly (zero signs included), on finite
    inputs."""
    _skip_fp64(t)
    z = _special_grid(t)
    z = z[np.isfinite(z.real) & np.isfinite(z.imag)]
    z = np.concatenate([z, _cplx_random(t, np.random.default_rng(42), 300, -3, 2)])
    for name in FUNCS:
        fz = run(name, t, z)
        assert_same(run(name, t, np.conj(z)), np.conj(fz), (z,), what=f"{name} conj")
        if name in ODD:
            assert_same(run(name, t, -z), -fz, (z,), what=f"{name} odd")
        if name == "ccosh":
            assert_same(run(name, t, -z), fz, (z,), what="ccosh even")


# ---- the standard's complex special-case tables (2025.12), b >= 0 as listed there

_TOK = {"0": 0.0, "+0": 0.0, "-0": -0.0, "1": 1.0, "-1": -1.0, "inf": inf, "+inf": inf,
        "-inf": -inf, "nan": nan, "pi": pi, "pi/2": pi / 2, "-pi/2": -pi / 2, "pi/4": pi / 4,
        "3pi/4": 3 * pi / 4}


def _expect(tok):
    """(value, sign_unspecified) for a token; a leading '±' marks an unspecified sign."""
    if tok.startswith("±"):
        return _TOK[tok[1:]], True
    return _TOK[tok], False


def _spec_tables(t):
    big = 1e30 if t == "float2" else 1e300
    sub = float(np.finfo(NP[t]).smallest_subnormal)
    POS = [0.75, 2.5, big, sub]
    NZF = [0.75, -2.5, big, -big, sub]
    FIN = [0.0, -0.0] + NZF
    Z = [0.0, -0.0]
    ANY = FIN + [inf, -inf, nan]
    NOT0 = NZF + [inf, -inf, nan]

    def cis(r):
        return lambda a, b: (r * math.cos(b) if r else math.copysign(0.0, math.cos(b)),
                             r * math.sin(b) if r else math.copysign(0.0, math.sin(b)))

    def cis_m1(r):
        return lambda a, b: (r * math.cos(b) - 1 if r else -1.0,
                             r * math.sin(b) if r else math.copysign(0.0, math.sin(b)))

    NN = ("nan", "nan")
    return {
        "cacos": [
            (Z, [0.0], ("pi/2", "-0")), (Z, [nan], ("pi/2", "nan")),
            (FIN, [inf], ("pi/2", "-inf")), (NZF, [nan], NN),
            ([-inf], POS, ("pi", "-inf")), ([inf], POS, ("+0", "-inf")),
            ([-inf], [inf], ("3pi/4", "-inf")), ([inf], [inf], ("pi/4", "-inf")),
            ([inf, -inf], [nan], ("nan", "±inf")), ([nan], FIN, NN),
            ([nan], [inf], ("nan", "-inf")), ([nan], [nan], NN)],
        "cacosh": [
            (Z, [0.0], ("+0", "pi/2")), (FIN, [inf], ("+inf", "pi/2")), (NZF, [nan], NN),
            ([0.0], [nan], ("nan", "±pi/2")), ([-inf], POS, ("+inf", "pi")),
            ([inf], POS, ("+inf", "+0")), ([-inf], [inf], ("+inf", "3pi/4")),
            ([inf], [inf], ("+inf", "pi/4")), ([inf, -inf], [nan], ("+inf", "nan")),
            ([nan], FIN, NN), ([nan], [inf], ("+inf", "nan")), ([nan], [nan], NN)],
        "casinh": [
            ([0.0], [0.0], ("+0", "+0")), (POS, [inf], ("+inf", "pi/2")), (FIN, [nan], NN),
            ([inf], POS, ("+inf", "+0")), ([inf], [inf], ("+inf", "pi/4")),
            ([nan], [0.0], ("nan", "+0")), ([nan], NZF, NN), ([nan], [inf], ("±inf", "nan")),
            ([nan], [nan], NN)],
        "catanh": [
            ([0.0], [0.0], ("+0", "+0")), ([0.0], [nan], ("+0", "nan")),
            ([1.0], [0.0], ("+inf", "+0")), (POS, [inf], ("+0", "pi/2")), (NZF, [nan], NN),
            ([inf], POS, ("+0", "pi/2")), ([inf], [inf], ("+0", "pi/2")),
            ([inf], [nan], ("+0", "nan")), ([nan], FIN, NN), ([nan], [inf], ("±0", "pi/2")),
            ([nan], [nan], NN)],
        "ccosh": [
            ([0.0], [0.0], ("1", "+0")), ([0.0], [inf], ("nan", "±0")),
            ([0.0], [nan], ("nan", "±0")), (NZF, [inf], NN), (NZF, [nan], NN),
            ([inf], [0.0], ("+inf", "+0")), ([inf], NZF, cis(inf)),
            ([inf], [inf], ("±inf", "nan")), ([inf], [nan], ("+inf", "nan")),
            ([nan], Z, ("nan", "±0")), ([nan], NZF, NN), ([nan], [nan], NN)],
        "cexp": [
            (Z, [0.0], ("1", "+0")), (FIN, [inf], NN), (FIN, [nan], NN),
            ([inf], [0.0], ("+inf", "+0")), ([-inf], FIN, cis(0.0)), ([inf], NZF, cis(inf)),
            ([-inf], [inf], ("±0", "±0")), ([inf], [inf], ("±inf", "nan")),
            ([-inf], [nan], ("±0", "±0")), ([inf], [nan], ("±inf", "nan")),
            ([nan], [0.0], ("nan", "+0")), ([nan], NOT0, NN), ([nan], [nan], NN)],
        "cexpm1": [
            (Z, [0.0], ("+0", "+0")),
            (FIN, [inf], NN), (FIN, [nan], NN), ([inf], [0.0], ("+inf", "+0")),
            ([-inf], FIN, cis_m1(0.0)), ([inf], NZF, cis_m1(inf)),
            ([-inf], [inf], ("-1", "±0")), ([inf], [inf], ("±inf", "nan")),
            ([-inf], [nan], ("-1", "±0")), ([inf], [nan], ("±inf", "nan")),
            ([nan], [0.0], ("nan", "+0")), ([nan], NOT0, NN), ([nan], [nan], NN)],
        "clog": [
            ([-0.0], [0.0], ("-inf", "pi")), ([0.0], [0.0], ("-inf", "+0")),
            (FIN, [inf], ("+inf", "pi/2")), (FIN, [nan], NN), ([-inf], POS, ("+inf", "pi")),
            ([inf], POS, ("+inf", "+0")), ([-inf], [inf], ("+inf", "3pi/4")),
            ([inf], [inf], ("+inf", "pi/4")), ([inf, -inf], [nan], ("+inf", "nan")),
            ([nan], FIN, NN), ([nan], [inf], ("+inf", "nan")), ([nan], [nan], NN)],
        "clog1p": [
            ([-1.0], [0.0], ("-inf", "+0")), (FIN, [inf], ("+inf", "pi/2")), (FIN, [nan], NN),
            ([-inf], POS, ("+inf", "pi")), ([inf], POS, ("+inf", "+0")),
            ([-inf], [inf], ("+inf", "3pi/4")), ([inf], [inf], ("+inf", "pi/4")),
            ([inf, -inf], [nan], ("+inf", "nan")), ([nan], FIN, NN),
            ([nan], [inf], ("+inf", "nan")), ([nan], [nan], NN)],
        "csinh": [
            ([0.0], [0.0], ("+0", "+0")), ([0.0], [inf], ("±0", "nan")),
            ([0.0], [nan], ("±0", "nan")), (POS, [inf], NN), (POS, [nan], NN),
            ([inf], [0.0], ("+inf", "+0")), ([inf], POS, cis(inf)),
            ([inf], [inf], ("±inf", "nan")), ([inf], [nan], ("±inf", "nan")),
            ([nan], [0.0], ("nan", "+0")), ([nan], NZF, NN), ([nan], [nan], NN)],
        "csqrt": [
            (Z, [0.0], ("+0", "+0")), (ANY, [inf], ("+inf", "+inf")), (FIN, [nan], NN),
            ([-inf], POS, ("+0", "+inf")), ([inf], POS, ("+inf", "+0")),
            ([-inf], [nan], ("nan", "±inf")), ([inf], [nan], ("+inf", "nan")),
            ([nan], FIN + [nan], NN)],
        "ctanh": [
            ([0.0], [0.0], ("+0", "+0")), (NZF, [inf], NN), ([0.0], [inf], ("+0", "nan")),
            (NZF, [nan], NN), ([0.0], [nan], ("+0", "nan")), ([inf], POS, ("1", "+0")),
            ([inf], [inf], ("1", "±0")), ([inf], [nan], ("1", "±0")),
            ([nan], [0.0], ("nan", "+0")), ([nan], NOT0, NN), ([nan], [nan], NN)],
        "csign": [
            (Z, Z, ("+0", "+0")), (ANY, [nan], NN), ([nan], ANY, NN)],
    }


@pytest.mark.parametrize("t", COMPLEX_TYPES)
def test_complex_array_api_special_cases(t):
    """Every complex special case listed by the standard, with strict signs of zeros and
    infinities except where it says 'sign unspecified' (and where it gives cis forms, the
    exact IEEE products)."""
    _skip_fp64(t)
    dt = NP[t]
    failures = []
    for name, rows in _spec_tables(t).items():
        zs, expects = [], []
        for a_vals, b_vals, exp in rows:
            for a, b in itertools.product(a_vals, b_vals):
                zs.append((a, b))
                expects.append(exp)
        z = cplx([p[0] for p in zs], [p[1] for p in zs], dt)
        got = run(name, t, z)
        tol = 8 * _eps(t)
        for zi, exp, g in zip(z, expects, got):
            a, b = float(zi.real), float(zi.imag)       # the values as rounded to the dtype
            if callable(exp):
                want = [(np.asarray(v, np.finfo(dt).dtype), False) for v in exp(a, b)]
            else:
                want = [_expect(tok) for tok in exp]
            for part, (w, unspecified) in zip((g.real, g.imag), want):
                if math.isnan(w):
                    ok = math.isnan(part)
                elif unspecified:
                    ok = abs(part) == abs(w) or math.isclose(abs(part), abs(w), rel_tol=tol)
                elif w == 0 or math.isinf(w):
                    ok = part == w and math.copysign(1, part) == math.copysign(1, w)
                else:
                    ok = math.isclose(part, w, rel_tol=tol)
                if not ok:
                    failures.append((name, complex(a, b), (a, b), complex(g), exp))
                    break
    assert not failures, "\n".join(map(repr, failures[:30]))


@pytest.mark.parametrize("t", COMPLEX_TYPES)
def test_numpy_deviations_from_standard_are_real(t):
    """Documents where the spec (followed here) and NumPy/glibc differ, so that the special
    tables above are known to assert the standard rather than NumPy."""
    _skip_fp64(t)
    dt = NP[t]
    with np.errstate(all="ignore"):
        assert np.signbit(np.tanh(cplx(inf, 2.0, dt)).imag)          # NumPy: 1 - 0j
        assert np.isnan(np.expm1(cplx(inf, 0.0, dt)).imag)           # NumPy: inf + nan j
        assert np.sign(cplx(inf, nan, dt)) == 1                       # NumPy: 1 + 0j
    got = run("ctanh", t, cplx(inf, 2.0, dt))
    assert got.real == 1 and got.imag == 0 and not np.signbit(got.imag)
    got = run("cexpm1", t, cplx(inf, 0.0, dt))
    assert got.real == inf and got.imag == 0
    got = run("csign", t, cplx(inf, nan, dt))
    assert np.isnan(got.real) and np.isnan(got.imag)


def test_warnings_are_not_errors():
    # the module must import and render without emitting warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        render_helpers([(n, t) for n in sorted(HELPER_NAMES) for t in H.HELPER_TYPES[n]])
