"""Every elementwise op of the table (``clnp._kernels.op_table.OPS``) against its NumPy reference.

Kernel builds dominate the run time (PoCL: ~0.5 s each), so the dtype sweep evaluates an op for
*all* its dtypes in one fused kernel (the same instructions the public function would run, as
``resolve`` computes them, through ``_eager.run_elementwise``): one program per op for the
vectorisable dtypes (bfloat16 among them: the vector path and its scalar tail are covered) and
one for the rest (bool, float16, complex); special values run through the same kernels. The
public functions are then exercised on one dtype per op in strided layouts (transposed,
broadcast and negative-step views share one 2-D strided kernel) and with Python scalars, and
for their error behaviour (no kernel at all).
"""
from __future__ import annotations

import warnings
import zlib

import numpy as np
import pytest

import clnp
from clnp._core import dtypes as dt
from clnp._kernels import op_table as _ops
from clnp._core.array import Array
from clnp._kernels.elementwise import Instr
from clnp._core.eager import run_elementwise
from clnp._array_api.elementwise import resolve

array_api_strict = pytest.importorskip("array_api_strict")

RECS = [r for r in _ops.OPS.values() if r.name != "copy"]
IDS = [r.name for r in RECS]
N = 37                       # > every vector width, with a scalar tail
# ops whose template is IEEE-exact: the result must equal NumPy's bit for bit
EXACT = {"abs", "negative", "positive", "square", "reciprocal", "sqrt", "ceil", "floor",
         "trunc", "round", "add", "subtract", "multiply", "divide", "copysign", "maximum",
         "minimum", "clip", "where", "nextafter", "signbit", "isfinite", "isinf", "isnan",
         "sign", "conj", "real", "imag", "floor_divide", "remainder", "equal", "not_equal",
         "less", "less_equal", "greater", "greater_equal"}
# the sign of a zero result is left unspecified by the standard
ZERO_SIGN_FREE = {"maximum", "minimum", "clip"}

SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.5,
            np.pi / 2, 0.1, 1e-30, 1e30, 100.0]


def accepted(rec, device):
    return [d for d in dt.ALL if rec.accepts(d) and device.supports(d)]


def groups(rec, device):
    """Dtype groups that share one fused kernel: vectorisable ones apart when ``rec.vec``."""
    ds = accepted(rec, device)
    if not rec.vec:
        return [tuple(ds)]
    # int8/uint8 compute in float16 in the float functions: scalar code, so not with these;
    # bfloat16 takes the vector path (float lanes) unless the op has a bfloat16-only template
    vec = tuple(d for d in ds if (d.kind in "iu" or d.name in ("float32", "float64") or
                                  d.name == "bfloat16" and "bfloat16" not in rec.c) and
                not (rec.float_only and d.itemsize == 1))
    rest = tuple(d for d in ds if d not in vec)
    return [g for g in (vec, rest) if g]


def random_inputs(rec, d, n, seed):
    rng = np.random.default_rng(seed)
    lo, hi = rec.domain
    nin = rec.nin

    def one(k):
        if d.kind == "b":
            return rng.random(n) < 0.5
        if d.kind in "iu":
            info = np.iinfo(d)
            a, b = max(int(np.floor(lo)), int(info.min)), min(int(np.ceil(hi)), int(info.max))
            return rng.integers(a, b + 1, n).astype(d)
        v = rng.uniform(lo, hi, n)
        if d.kind == "c":
            v = v + 1j * rng.uniform(lo, hi, n)
        return v.astype(d)
    args = [one(k) for k in range(nin)]
    if rec.name == "where":
        args[0] = rng.random(n) < 0.5
    if rec.name == "clip":           # lower bounds below upper ones, as people use clip
        args[1], args[2] = np.minimum(args[1], args[2]), np.maximum(args[1], args[2])
    return args


def special_inputs(rec, d, seed):
    """The special values (unary) or all their pairs (binary), in dtype ``d``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = np.array(SPECIALS, d)
    if rec.nin == 1:
        return [s]
    a, b = (g.ravel() for g in np.meshgrid(s, s, indexing="ij"))
    if rec.nin == 2:
        return [a, b]
    rng = np.random.default_rng(seed)
    if rec.name == "where":
        return [rng.random(a.size) < 0.5, a, b]
    return [a, np.minimum(b, np.array(-1, d)), np.maximum(b, np.array(1, d))]   # clip


def instr_params(rec, arrays):
    """(compute dtype, result dtype, argument dtypes), exactly as the public function."""
    if rec.name == "where":
        d = arrays[1].dtype
        return d, d, (dt.bool_, d, d)
    if rec.name == "clip":
        d = arrays[0].dtype
        return d, d, (d, d, d)
    return resolve(rec, tuple(arrays))


def fused_eval(rec, device, inputs, step=1):
    """Evaluate ``rec`` once per entry of ``inputs`` (dtype -> list of host operands) in one
    fused kernel (on ``[::step]`` views of the operands); returns {dtype: host result}."""
    args, in_dtypes, body, outs = [], [], [], []
    n_in = sum(len(v) for v in inputs.values())
    for d, host in inputs.items():
        arrs = [clnp.asarray(h, device=device)[::step] for h in host]
        compute, out, arg_dtypes = instr_params(rec, arrs)
        ids = tuple(range(len(args), len(args) + len(arrs)))
        args += arrs
        in_dtypes += [a.dtype for a in arrs]
        body.append((ids, arg_dtypes, compute, out))
        outs.append(Array.empty(arrs[0].shape, out, device))
    assert len(args) == n_in
    instrs = tuple(Instr(rec.name, ids, tuple(ad), c, o) for ids, ad, c, o in body)
    run_elementwise(instrs, args, in_dtypes, outs)
    return {d: o.to_numpy() for d, o in zip(inputs, outs)}


def reference(rec, host):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if rec.name == "clip":
            return np.minimum(np.maximum(host[0], host[1]), host[2])
        return np.asarray(rec.ref(*host))


def spec_overrides(rec, host, expected):
    """Where NumPy and the standard disagree, the standard's special cases win."""
    if rec.name == "floor_divide" and dt.kind(expected.dtype) == "f":
        x1, x2 = host[0].astype(np.float64), host[1].astype(np.float64)
        with np.errstate(all="ignore"):
            q = x1 / x2
        infin = np.isinf(x1) & np.isfinite(x2) & (x2 != 0)       # +-inf // finite: +-inf
        zero = np.isfinite(x1) & (x1 != 0) & np.isinf(x2)        # finite // +-inf: +-0
        expected = expected.copy()
        expected[infin] = q[infin]
        expected[zero] = np.copysign(0.0, q[zero])
    if rec.name == "sign" and dt.kind(expected.dtype) == "f":   # ml_dtypes: sign(-0) == -0
        expected = np.where(host[0] == 0, np.zeros((), expected.dtype), expected)
    if rec.name == "nextafter":       # x1 == x2 gives x2 (NumPy's float16 loop gives x1)
        expected = np.where(host[0] == host[1], host[1], expected)
    return expected


def tolerance(d):
    return {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-5, "float64": 1e-12,
            "complex64": 1e-4, "complex128": 1e-10}.get(np.dtype(d).name, 0.0)


def assert_matches(rec, got, expected, what, exact=False):
    """Same dtype and shape; NaN where NumPy has NaN; infinities and zeros (with their sign)
    exactly; other values within the dtype's tolerance (exactly for IEEE-exact ops)."""
    assert got.dtype == expected.dtype, f"{what}: dtype {got.dtype}, NumPy {expected.dtype}"
    assert got.shape == expected.shape, f"{what}: shape {got.shape}, NumPy {expected.shape}"
    if got.dtype.kind == "c":
        assert_matches(rec, got.real, expected.real, what + " (real part)", exact)
        assert_matches(rec, got.imag, expected.imag, what + " (imag part)", exact)
        return
    if dt.kind(got.dtype) != "f":
        bad = got != expected
    else:
        g, e = got.astype(np.float64), expected.astype(np.float64)
        rtol = 0.0 if exact else tolerance(got.dtype)
        with np.errstate(all="ignore"):
            close = np.abs(g - e) <= rtol * np.maximum(np.abs(e), 1.0)
        special = np.isinf(e) | (e == 0) | np.isinf(g)
        same = np.where(special, g == e, close)
        if rec.name not in ZERO_SIGN_FREE:
            same &= ~((e == 0) & (np.signbit(g) != np.signbit(e)))
        bad = ~(same | (np.isnan(g) & np.isnan(e)))
    if bad.any():
        i = np.flatnonzero(bad)[:5]
        raise AssertionError(f"{what}: {bad.sum()} of {bad.size} differ; got {got.ravel()[i]}, "
                             f"NumPy {expected.ravel()[i]} at flat indices {i}")


def strict_dtype(rec, host):
    """array_api_strict's result dtype name, or None where strict rejects the dtypes."""
    xp = array_api_strict
    try:
        xs = [xp.asarray(h) for h in host]
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            if rec.name == "clip":
                r = xp.clip(xs[0], xs[1], xs[2])
            else:
                r = getattr(xp, rec.name)(*xs)
    except (TypeError, ValueError):
        return None
    return str(r.dtype).rsplit(".", 1)[-1]


# ------------------------------------------------------------------------------ dtype sweep
@pytest.mark.parametrize("rec", RECS, ids=IDS)
def test_all_dtypes_match_numpy(rec, device):
    """Every accepted dtype, contiguous length-37 inputs (vector part and scalar tail):
    values and result dtypes match NumPy, and array_api_strict where it defines the dtype."""
    for g in groups(rec, device):
        inputs = {d: random_inputs(rec, d, N, zlib.crc32(rec.name.encode())) for d in g}
        got = fused_eval(rec, device, inputs)
        for d in g:
            host = inputs[d]
            exp = reference(rec, host)
            assert_matches(rec, got[d], exp, f"{rec.name}({d})", exact=rec.name in EXACT and
                           d.kind != "c")
            sd = strict_dtype(rec, host)
            if sd is not None and d not in dt.HALF:
                assert got[d].dtype.name == sd, f"{rec.name}({d}): strict gives {sd}"


@pytest.mark.parametrize("rec", [r for r in RECS if any(k in r.c for k in ("f", "float"))],
                         ids=lambda r: r.name)
def test_special_values(rec, device):
    """NaN, +-inf, +-0 and friends (all pairs for binary ops) in every real floating dtype, in
    the same fused kernels as the sweep (so through the vector path too): NumPy's results,
    with the standard's special cases where NumPy differs."""
    for g in groups(rec, device):
        floats = [d for d in g if dt.kind(d) == "f"]
        if not floats:
            continue
        n = len(special_inputs(rec, floats[0], 0)[0])
        inputs = {}
        for d in g:
            if dt.kind(d) == "f":
                inputs[d] = special_inputs(rec, d, 0)
            else:            # other dtypes ride along so the kernel is the sweep's
                inputs[d] = random_inputs(rec, d, n, 0)
        got = fused_eval(rec, device, inputs)
        for d in floats:
            exp = spec_overrides(rec, inputs[d], reference(rec, inputs[d]))
            assert_matches(rec, got[d], exp, f"{rec.name}({d}) on special values",
                           exact=rec.name in EXACT)


VECTOR_MATH = [r for r in RECS if r.vec and "clnp_vm_" in r.c.get("f", "") + r.c.get("float", "")]


@pytest.mark.parametrize("rec", VECTOR_MATH, ids=lambda r: r.name)
def test_vector_path_equals_scalar_path(rec, device):
    """Math builtins give bit-identical results in the vectorised contiguous kernel and in the
    scalar (strided) one, also for a value whose vector neighbours are huge or infinite
    (PoCL's float sin/cos/tan vectors take a slow path that corrupted such neighbours)."""
    g = groups(rec, device)[0]
    victims = [1e-30, 1e-40, -0.0, 0.3, -2.5, 1e-10, 0.99, 1e3, 5e6, np.nan]
    poisons = [np.inf, -np.inf, np.nan, 1e30, 1e10, 3e7, 1.0]
    rows = [[v, p] + [v] * 14 for v in victims for p in poisons]
    # and plenty of ordinary values (the implementations differ in the last bit for a few %)
    rng = np.random.default_rng(17)
    rows += list((rng.uniform(-4, 4, (64, 16)) * 10.0 ** rng.integers(-3, 2, (64, 1))))
    n = len(rows) * 16
    inputs = {}
    for d in g:
        if dt.kind(d) == "f":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                x = np.array(rows, d).ravel()
            inputs[d] = [x] + [np.full(n, 0.75, d)] * (rec.nin - 1)
        else:
            inputs[d] = random_inputs(rec, d, n, 5)
    vector = fused_eval(rec, device, inputs)
    strided = fused_eval(rec, device, {d: [np.repeat(h, 2) for h in v]
                                       for d, v in inputs.items()}, step=2)
    for d in g:
        if dt.kind(d) != "f":
            continue
        a, b = vector[d], strided[d]
        same = (a == b) & (np.signbit(a) == np.signbit(b)) | (np.isnan(a) & np.isnan(b))
        assert same.all(), (f"{rec.name}({d}): vector path {a[~same][:4]} != scalar path "
                            f"{b[~same][:4]} for {inputs[d][0][~same][:4]}")


# ------------------------------------------------------------------------------ public API
def representative(rec, device):
    """The dtype the public-function tests use for ``rec`` (double where it applies)."""
    for d in (dt.float64, dt.float32, dt.int64, dt.bool_):
        if rec.accepts(d) and device.supports(d) and (d.kind != "f" or
                                                      any(k in rec.c for k in ("f", "float"))):
            return d
    return accepted(rec, device)[0]


def call(rec, *args):
    if rec.name == "clip":
        return clnp.clip(*args)
    return getattr(clnp, rec.name)(*args)


@pytest.mark.parametrize("rec", RECS, ids=IDS)
def test_public_strided_layouts(rec, device):
    """Transposed views, broadcasting ((3, 1) with (4,)) and negative-step slices with an
    offset: all one 2-D strided kernel per op."""
    d = representative(rec, device)
    base = random_inputs(rec, d, 48, 7)
    views = []
    # a transposed (4, 3) view of a (3, 4) array
    views.append(([b[:12].reshape(3, 4).T for b in base],
                  lambda xs: [x.T for x in xs], [b[:12].reshape(3, 4) for b in base]))
    # x[::-1, 1::2] of a (4, 12) array: negative step, offset, not collapsible
    views.append(([b.reshape(4, 12)[::-1, 1::2] for b in base],
                  lambda xs: [x[::-1, 1::2] for x in xs], [b.reshape(4, 12) for b in base]))
    for expected_host, make, host_base in views:
        xs = make([clnp.asarray(h, device=device) for h in host_base])
        got = call(rec, *xs)
        assert isinstance(got, Array) and got.device is device
        assert_matches(rec, got.to_numpy(), reference(rec, expected_host),
                       f"{rec.name}({d}) strided")
    if rec.nin >= 2:
        # broadcasting: first operand (3, 1), the others (4,) [where: condition (3, 1)]
        host = [base[0][:3].reshape(3, 1)] + [b[:4] for b in base[1:]]
        got = call(rec, *[clnp.asarray(h, device=device) for h in host])
        assert got.shape == (3, 4)
        assert_matches(rec, got.to_numpy(), reference(rec, host), f"{rec.name}({d}) broadcast")


@pytest.mark.parametrize("name", ["add", "sin", "equal", "where"])
def test_shapes_zero_d_empty_and_contiguous(name, device):
    """0-d, empty and multi-dimensional contiguous operands (one contiguous kernel each)."""
    rec = _ops.OPS[name]
    d = representative(rec, device)
    for shape in [(), (0,), (7,), (3, 4), (2, 0, 3)]:
        n = int(np.prod(shape))
        host = [h.reshape(shape) for h in random_inputs(rec, d, n, 3)]
        got = call(rec, *[clnp.asarray(h, device=device) for h in host])
        assert got.shape == shape
        assert_matches(rec, got.to_numpy(), reference(rec, host), f"{name} shape {shape}")


# ------------------------------------------------------------------------------ scalars
BINARY = [r for r in RECS if r.nin == 2]


def scalar_for(rec, d):
    """A Python scalar of the array's kind inside the op's domain."""
    if d.kind == "b":
        return True
    if d.kind in "iu":
        return 2 if rec.name not in ("floor_divide", "remainder") else 3
    if d.kind == "c":
        return 1.5 - 0.5j
    return 1.5 if rec.domain[1] > 1.5 else 0.5


@pytest.mark.parametrize("rec", BINARY, ids=lambda r: r.name)
def test_python_scalar_right(rec, device):
    """``f(x, scalar)``: the scalar takes the array's dtype (NEP 50 weak scalar)."""
    d = representative(rec, device)
    host = random_inputs(rec, d, 9, 11)[0]
    s = scalar_for(rec, d)
    got = call(rec, clnp.asarray(host, device=device), s)
    assert_matches(rec, got.to_numpy(), reference(rec, [host, s]), f"{rec.name}({d}, {s!r})")


ASYMMETRIC = ["subtract", "divide", "pow", "floor_divide", "remainder", "atan2", "less",
              "bitwise_left_shift", "copysign"]


@pytest.mark.parametrize("name", ASYMMETRIC)
def test_python_scalar_left(name, device):
    rec = _ops.OPS[name]
    d = representative(rec, device)
    host = random_inputs(rec, d, 9, 13)[1]
    s = scalar_for(rec, d)
    got = call(rec, s, clnp.asarray(host, device=device))
    assert_matches(rec, got.to_numpy(), reference(rec, [s, host]), f"{name}({s!r}, {d})")


@pytest.mark.parametrize("adtype,scalar", [
    ("bool", 3), ("bool", 2.5), ("int8", 100), ("int8", 2.5), ("uint8", True), ("int16", 1j),
    ("float16", 0.1), ("float16", 70000), ("float32", 1e-3), ("float32", 2 + 1j),
    ("complex64", 2.5), ("uint64", 2 ** 64 - 1)])
def test_weak_scalar_promotion(adtype, scalar, device):
    """Result dtype and values of ``x + scalar`` and ``scalar * x`` follow NumPy 2 (NEP 50)."""
    d = np.dtype(adtype)
    host = np.array([0, 1, 1, 0, 1], d) if d.kind == "b" else np.arange(5).astype(d)
    x = clnp.asarray(host, device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exp1, exp2 = host + scalar, scalar * host
    if exp1.dtype == dt.complex128 and not device.has_fp64:
        pytest.skip("needs complex128")
    r1, r2 = x + scalar, scalar * x
    assert r1.dtype == exp1.dtype and r2.dtype == exp2.dtype
    rec = _ops.OPS["add"]
    assert_matches(rec, r1.to_numpy(), exp1, f"{adtype} + {scalar!r}")
    assert_matches(rec, r2.to_numpy(), exp2, f"{scalar!r} * {adtype}")


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "floor_divide",
                                  "bitwise_and", "pow", "bitwise_left_shift"])
def test_out_of_range_int_scalar_overflows(name, device):
    """A Python int outside the integer array's range: OverflowError (NumPy 2), either side."""
    x = clnp.asarray(np.arange(4, dtype=np.uint8), device=device)
    fn = getattr(clnp, name)
    for s in (256, -1):
        with pytest.raises(OverflowError, match=f"{s}.*uint8"):
            fn(x, s)
        with pytest.raises(OverflowError, match=f"{s}.*uint8"):
            fn(s, x)


@pytest.mark.parametrize("name", ["less", "greater_equal", "equal", "not_equal"])
def test_out_of_range_int_scalar_comparisons(name, device):
    """Comparisons with an out-of-range Python int are answered exactly, as in NumPy 2."""
    host = np.array([0, 5, 255], np.uint8)
    x = clnp.asarray(host, device=device)
    fn, ref = getattr(clnp, name), getattr(np, name)
    for s in (300, -1, 2 ** 70):
        np.testing.assert_array_equal(fn(x, s).to_numpy(), ref(host, s))
        np.testing.assert_array_equal(fn(s, x).to_numpy(), ref(s, host))


def test_integer_pow_negative_scalar_exponent_raises(device):
    x = clnp.asarray(np.arange(1, 4, dtype=np.int32), device=device)
    with pytest.raises(ValueError, match="negative"):
        clnp.pow(x, -1)
    with pytest.raises(ValueError, match="negative"):
        x ** -2


def test_float_functions_take_out_of_range_ints(device):
    """NumPy evaluates divide/atan2 of integer arrays in floating point: a large int is fine."""
    host = np.array([1, 2, 3], np.int8)
    x = clnp.asarray(host, device=device)
    for name in ("divide", "atan2"):
        got = getattr(clnp, name)(x, 1000)
        exp = getattr(np, {"atan2": "arctan2"}.get(name, name))(host, 1000)
        assert got.dtype == exp.dtype
        np.testing.assert_allclose(got.to_numpy(), exp, rtol=2e-3)


# ------------------------------------------------------------------------------ errors
def _rejected(rec):
    return [d for d in dt.ALL if not rec.accepts(d)]


@pytest.mark.parametrize("rec", [r for r in RECS if _rejected(r) and not r.extra.get("truthy")],
                         ids=lambda r: r.name)
def test_dtype_outside_category_raises(rec, device):
    """TypeError naming the function and the dtype, before any kernel is built."""
    from clnp._kernels.op_table import BOOL_INT8, BOOL_LOGICAL
    from clnp._array_api.ufunc import _COMPLEX_ORDER
    ok = clnp.asarray(np.zeros(3, representative(rec, device)), device=device)
    # NumPy's bool loops (add of bools is logical_or, less of bools runs in int8) and its
    # complex order are the NumPy layer's, outside the table's categories
    numpy_loops = ({dt.bool_} if rec.name in BOOL_LOGICAL or rec.name in BOOL_INT8 else set()) \
        | ({dt.complex64, dt.complex128} if rec.name in _COMPLEX_ORDER else set())
    bad = [clnp.asarray(np.zeros(3, d), device=device) for d in _rejected(rec)
           if device.supports(d) and d not in numpy_loops]
    kernels_before = len(device._kernels)
    for x in bad:
        with pytest.raises(TypeError, match=rf"{rec.name}.*{x.dtype.name}"):
            call(rec, *[x] * rec.nin)
        if rec.nin == 2 and not rec.accepts(dt.promote(ok.dtype, x.dtype)):
            # the bad dtype on either side (bool masks promote away: x * mask is fine)
            with pytest.raises(TypeError, match=rf"{rec.name}.*{x.dtype.name}"):
                call(rec, ok, x)
            with pytest.raises(TypeError, match=rf"{rec.name}.*{x.dtype.name}"):
                call(rec, x, ok)
    assert len(device._kernels) == kernels_before


@pytest.mark.parametrize("rec", [r for r in RECS if r.extra.get("truthy")], ids=lambda r: r.name)
def test_logical_ops_count_non_zero_as_true(rec, device):
    """NumPy's logical ops take every dtype (non-zero is true); the standard's are boolean."""
    hs = [np.asarray([0.0, 2.5, -1.0, 0.0], np.float32), np.asarray([3, 0, 0, 7], np.int32)]
    xs = [clnp.asarray(h, device=device) for h in hs]
    got = call(rec, *xs[:rec.nin])
    np.testing.assert_array_equal(got.to_numpy(), rec.ref(*hs[:rec.nin]))
    if rec.nin == 2:
        np.testing.assert_array_equal(call(rec, xs[0], 0).to_numpy(), rec.ref(hs[0], 0))


def test_where_non_bool_condition_counts_non_zero(device):
    # NumPy: a numeric condition selects where it is non-zero (issue #12)
    h = np.asarray([0.0, 2.0, -1.0, 0.0], np.float32)
    x = clnp.asarray(h, device=device)
    np.testing.assert_array_equal(clnp.where(x, x, 5.0).to_numpy(), np.where(h, h, 5.0))
    with pytest.raises(TypeError, match="both or neither"):
        clnp.where(x, x)


def test_unsupported_operands_raise_type_error(device):
    x = clnp.zeros((3,), dtype=clnp.float32, device=device)
    with pytest.raises(TypeError, match="add.*str"):
        clnp.add(x, "1")
    with pytest.raises(TypeError, match="add.*object"):
        clnp.add(x, object())


def test_scalar_only_calls_compute_like_numpy():
    # NumPy computes np.add(1, 2) and np.sin(1.0) in the default dtypes (issue #12)
    r = clnp.add(1, 2)
    assert r.shape == () and r.dtype == np.int64 and int(r) == 3
    s = clnp.sin(1.0)
    assert s.shape == () and s.dtype == clnp.default_device().default_float
    np.testing.assert_allclose(float(s), np.sin(1.0), rtol=1e-6)


def test_incompatible_shapes_raise_value_error(device):
    x = clnp.zeros((3,), dtype=clnp.float32, device=device)
    y = clnp.zeros((4,), dtype=clnp.float32, device=device)
    with pytest.raises(ValueError, match=r"\(3,\).*\(4,\)"):
        clnp.add(x, y)


def test_numpy_aliases_are_the_same_functions():
    for alias, name in [("absolute", "abs"), ("arccos", "acos"), ("arctan2", "atan2"),
                        ("power", "pow"), ("invert", "bitwise_invert"),
                        ("left_shift", "bitwise_left_shift"), ("conjugate", "conj"),
                        ("true_divide", "divide"), ("mod", "remainder")]:
        assert getattr(clnp, alias) is getattr(clnp, name)


def test_every_standard_elementwise_function_exists():
    names = ("abs acos acosh add asin asinh atan atan2 atanh bitwise_and bitwise_left_shift "
             "bitwise_invert bitwise_or bitwise_right_shift bitwise_xor ceil clip conj copysign "
             "cos cosh divide equal exp expm1 floor floor_divide greater greater_equal hypot "
             "imag isfinite isinf isnan less less_equal log log1p log2 log10 logaddexp "
             "logical_and logical_not logical_or logical_xor maximum minimum multiply negative "
             "nextafter not_equal positive pow real reciprocal remainder round sign signbit sin "
             "sinh square sqrt subtract tan tanh trunc").split()
    for n in names:
        assert callable(getattr(clnp, n)), n
        assert n in _ops.OPS, n
        assert getattr(clnp, n).__doc__


def test_fused_float16_intermediates_round_like_numpy(device):
    """In a fused program (as ``clnp_grad.jit`` renders) a float16 result feeding another op
    is rounded to float16 first, as NumPy rounds every float16 result; a float64 -> float16
    cast rounds once (no double rounding through float)."""
    h = np.float16
    a = np.array([1.0, 2.0, 1000.0, -3.0], h)
    b = np.array([0.0004, 0.0009, 0.3, 0.0001], h)
    c = np.array([1.00048828125, 1.0004882812500002, 0.1, 65519.99])   # float64
    x, y, z = (clnp.asarray(v, device=device) for v in (a, b, c))
    f16, f64 = dt.float16, dt.float64
    body = (Instr("add", (0, 1), (f16, f16), f16, f16),           # v3 = a + b   (float16)
            Instr("copy", (2,), (f16,), f16, f16),                # v4 = float16(c)
            Instr("subtract", (3, 0), (f16, f16), f16, f16),      # v5 = v3 - a  -> out 0
            Instr("multiply", (4, 1), (f16, f16), f16, f16))      # v6 = v4 * b  -> out 1
    if not device.has_fp64:
        pytest.skip("needs float64 input")
    outs = [Array.empty((4,), f16, device), Array.empty((4,), f16, device)]
    run_elementwise(body, [x, y, z], [f16, f16, f64], outs)
    np.testing.assert_array_equal(outs[0].to_numpy(), (a + b) - a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(outs[1].to_numpy(), c.astype(h) * b)
