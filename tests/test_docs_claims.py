"""What docs/numpy-migration.md and docs/design.md say clnp refuses, raises or lacks, and the
NumPy spellings they say work, checked against the code.

Each check is registered with a quote from the page it backs. The quote must still be on the
page (so rewording a claim means looking at its check), and the check fails when the claim
stops being true: a limit that goes away, or a spelling that stops working. A paragraph, list
item or table row of either page that speaks of raising, refusing or lacking something must
hold one of the quotes (or be listed in NOT_CLAIMS with the reason), so a new limit written
into the pages without a check fails here too.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import warnings

import ml_dtypes
import numpy
import pytest

import clnp
from conftest import env_importing_this_checkout
import clnp_grad as cg

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MIGRATION = "docs/numpy-migration.md"
DESIGN = "docs/design.md"
PAGES = (MIGRATION, DESIGN)

CLAIMS: list = []


def claim(page: str, *quotes: str):
    """Register the decorated check as backing ``quotes`` of ``page``."""
    def register(check):
        CLAIMS.append(pytest.param(page, quotes, check, id=f"{page}:{check.__name__}"))
        return check
    return register


def f32(values):
    return clnp.asarray(values, dtype=clnp.float32)


SINGULAR = [[1.0, 2.0], [2.0, 4.0]]
NOT_PD = [[1.0, 2.0], [2.0, 1.0]]


# ----------------------------------------------------------------- numpy-migration.md: limits
@claim(MIGRATION, "a `ValueError` names both devices otherwise")
def mixing_devices_raises_naming_both():
    # in a child process, where POCL_DEVICES gives two PoCL CPU devices on any machine
    script = textwrap.dedent("""
        import clnp
        devs = clnp.devices()
        if len(devs) < 2:
            print("SKIP", clnp.devices())
            raise SystemExit
        a, b = clnp.ones(3, device=devs[0]), clnp.ones(3, device=devs[1])
        try:
            a + b
        except ValueError as e:
            print("MESSAGE", e)
            print("DEVICES", devs[0], "|", devs[1])
    """)
    env = env_importing_this_checkout(POCL_DEVICES="pthread pthread")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    if out.stdout.startswith("SKIP"):
        pytest.skip(f"needs two devices: {out.stdout}")
    assert "MESSAGE" in out.stdout, f"mixing devices did not raise ValueError: {out.stdout}"
    message = out.stdout.split("MESSAGE", 1)[1].split("\nDEVICES", 1)[0]
    first, second = out.stdout.split("DEVICES ", 1)[1].strip().split(" | ")
    assert first in message and second in message


@claim(MIGRATION, "float64 raises `UnsupportedDtypeError`",
       "the default floating dtype is float32")
def float64_unsupported_without_fp64():
    device = clnp.default_device()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(device, "has_fp64", False)        # the same device, as one without fp64
        with pytest.raises(clnp.UnsupportedDtypeError, match="float64"):
            clnp.asarray(numpy.arange(3.0), device=device)
        with pytest.raises(clnp.UnsupportedDtypeError):
            clnp.zeros(3, dtype=clnp.float64, device=device)
        assert clnp.asarray([1.0], device=device).dtype == clnp.float32


@claim(MIGRATION, "raises `OverflowError` (`int8_array + 300`)")
@claim(DESIGN, "dtype raises `OverflowError` (NumPy 2)")
def out_of_range_python_int_overflows():
    with pytest.raises(OverflowError, match="300"):
        clnp.asarray([1, 2], dtype=clnp.int8) + 300
    assert (clnp.asarray([1, 2], dtype=clnp.int8) + 100).dtype == clnp.int8   # weak scalar


@claim(MIGRATION, "A cast across kinds (int32 `+= 1.5`, float32 `*= 1j`) raises `TypeError`")
@claim(DESIGN, "a cast across kinds (`int32 += 1.5`, `float32 *= 1j`) raises `TypeError`")
def inplace_cross_kind_raises_before_writing():
    a = clnp.asarray([1, 2], dtype=clnp.int32)
    with pytest.raises(TypeError, match=r"int32"):
        a += 1.5
    assert a.tolist() == [1, 2], "nothing is written before the error"
    b = f32([1.0])
    with pytest.raises(TypeError, match="float32"):
        b *= 1j


@claim(MIGRATION, "Bad arguments raise before any kernel is built, with NumPy's exception "
                  "classes where NumPy has one")
def bad_arguments_raise_numpys_classes():
    x = f32([1.0, 2.0, 3.0])
    with pytest.raises(IndexError):
        x[3]
    with pytest.raises(ValueError, match="reshape"):
        clnp.reshape(x, (2, 2))
    with pytest.raises(TypeError):
        clnp.bitwise_and(x, x)
    with pytest.raises(OverflowError):
        clnp.asarray([1], dtype=clnp.uint8) + 256


@claim(MIGRATION, "`DeviceMemoryError` (a `MemoryError`) reports a failed allocation, with the "
                  "byte count")
@claim(DESIGN, "Allocation failures raise `DeviceMemoryError` (a `MemoryError`), naming the "
               "bytes, the device")
def allocation_failure_raises_device_memory_error():
    device = clnp.default_device()
    n = device.max_alloc // 4 + 1024                # above the largest single allocation
    with pytest.raises(clnp.DeviceMemoryError) as info:
        clnp.empty((n,), dtype=clnp.float32, device=device)
    assert isinstance(info.value, MemoryError)
    assert str(4 * n) in str(info.value) and str(device) in str(info.value)


@claim(MIGRATION, "`KernelBuildError` carries the OpenCL source and build log")
@claim(DESIGN, "Build failures raise `KernelBuildError` with `.source` and `.log`")
def build_failure_raises_kernel_build_error():
    broken = "__kernel void docs_claims_broken(__global float *y) { y[0] = no_such_name; }\n"
    with pytest.raises(clnp.KernelBuildError) as info:
        clnp.default_device().build(broken)
    assert info.value.source == broken and "no_such_name" in info.value.log


@claim(MIGRATION, "`numpy.f(x)` for a NumPy function clnp does not implement raises `TypeError`",
       "such as `numpy.asmatrix`, download `x`")
@claim(DESIGN, "`numpy.<f>(x)` for a NumPy function clnp lacks raises `TypeError` naming it",
       "a NumPy function clnp lacks raises `TypeError` naming it and how to compute it on the "
       "host")
def missing_numpy_function_raises_type_error():
    x = f32([[1.0, 2.0], [3.0, 4.0]])
    for call, name in ((lambda: numpy.busday_count(x, x), "busday_count"),   # __array_function__
                       (lambda: numpy.isnat(x), "isnat")):                     # __array_ufunc__
        with pytest.raises(TypeError, match=rf"numpy\.{name}.*numpy\.asarray"):
            call()
    assert not hasattr(clnp, "busday_count") and not hasattr(clnp, "asmatrix")
    # asmatrix does not dispatch: it downloads, as it converts any array-like
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)   # NumPy's, about matrix
        assert isinstance(numpy.asmatrix(x), numpy.matrix)


@claim(MIGRATION, "a missing function `numpy.f(x)`")
def missing_function_workaround_runs():
    ticks = clnp.asarray([0, numpy.iinfo(numpy.int64).min])       # the second is NaT
    got = clnp.asarray(numpy.isnat(numpy.asarray(ticks).astype("datetime64[s]")))
    assert isinstance(got, clnp.ndarray) and got.tolist() == [False, True]


@claim(MIGRATION, "`solve` and `cholesky` on singular or non-positive-definite input raise "
                  "`clnp.linalg.LinAlgError`, a subclass of `numpy.linalg.LinAlgError`")
@claim(DESIGN, "Eager `linalg` calls raise `clnp.linalg.LinAlgError` (a "
               "`numpy.linalg.LinAlgError`)")
def eager_linalg_raises_linalg_error():
    assert issubclass(clnp.linalg.LinAlgError, numpy.linalg.LinAlgError)
    for call in (lambda: clnp.linalg.inv(f32(SINGULAR)),
                 lambda: clnp.linalg.solve(f32(SINGULAR), f32([1.0, 1.0])),
                 lambda: clnp.linalg.cholesky(f32(NOT_PD))):
        with pytest.raises(numpy.linalg.LinAlgError):     # NumPy's except clause catches it
            call()


@claim(MIGRATION, "so there the result holds `inf` or `NaN`, as in JAX",
       "check `np.all(np.isfinite(r))` on the result: nothing raises there")
@claim(DESIGN, "under transformations and `jit` failures are NaN/inf as in JAX")
def linalg_under_jit_gives_non_finite():
    for r in (cg.jit(clnp.linalg.inv)(f32(SINGULAR)),
              cg.jit(clnp.linalg.cholesky)(f32(NOT_PD)),
              cg.vmap(clnp.linalg.inv)(f32([SINGULAR]))):
        assert not bool(clnp.all(clnp.isfinite(r)))


@claim(MIGRATION, "`float(x)`, `int(x)` and `complex(x)` take 0-d arrays only")
def scalar_conversion_needs_0d():
    for convert in (float, int, complex):
        with pytest.raises(TypeError, match="0-dimensional"):
            convert(f32([1.0]))
        assert convert(f32(1.0)) == 1
    assert f32([2.0]).item() == 2.0


@claim(MIGRATION, "`clnp.asarray([\"a\"])`, `dtype=object` or `datetime64` raise a TypeError")
def non_numeric_dtypes_raise():
    for call in (lambda: clnp.asarray(["a"]),
                 lambda: clnp.zeros(3, dtype=object),
                 lambda: clnp.asarray(numpy.array(["2020-01-01"], dtype="datetime64[D]"))):
        with pytest.raises(TypeError, match="clnp arrays cannot hold"):
            call()


@claim(MIGRATION, "a clnp operand flagged for writing raises TypeError")
def nested_iters_refuses_writing():
    x = f32([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(TypeError, match="nested_iters"):
        clnp.nested_iters([x], [[0], [1]], op_flags=[["readwrite"]])
    outer, inner = clnp.nested_iters([x], [[0], [1]])          # read-only works
    assert [float(v) for _ in outer for v in inner] == [1.0, 2.0, 3.0, 4.0]


@claim(MIGRATION, "its binary mode is gone, as in NumPy 2")
def fromstring_has_no_binary_mode():
    with pytest.raises(TypeError, match="sep"):
        clnp.fromstring(b"\x00\x01", dtype=clnp.int8)
    assert clnp.fromstring("1 2", dtype=clnp.int8, sep=" ").tolist() == [1, 2]


@claim(MIGRATION, "refuses structured ones with a TypeError")
def fromregex_refuses_structured_dtypes():
    import io
    with pytest.raises(TypeError, match="structured"):
        clnp.fromregex(io.StringIO("1 2\n"), r"(\d+) (\d+)",
                       [("a", numpy.int64), ("b", numpy.int64)])
    got = clnp.fromregex(io.StringIO("1 2\n3 4\n"), r"(\d+) \d+", numpy.int64)
    assert got.tolist() == [1, 3]


@claim(MIGRATION, "There is no `.base` attribute (and no `.data`, `.ctypes`, "
                  "`getfield`/`setfield`/`setflags`)",
       "no equivalent; views share the buffer of the array they were taken from")
def no_base_data_ctypes():
    x = f32([1.0, 2.0])
    for name in ("base", "data", "ctypes", "getfield", "setfield", "setflags"):
        assert not hasattr(x, name), name
    view = x[:1]
    view[0] = 5.0                                   # the shared buffer, without a .base
    assert x.tolist() == [5.0, 2.0]


@claim(MIGRATION, "reproducible for a seed, but different from NumPy's")
def random_streams_differ_from_numpys():
    clnp.random.seed(0)
    first = clnp.random.rand(4).tolist()
    clnp.random.seed(0)
    assert clnp.random.rand(4).tolist() == first
    assert first != numpy.random.RandomState(0).rand(4).tolist()


@claim(MIGRATION, "the missing ones are those of the four matrix-product functions")
def ufunc_methods_of_clnp():
    x = f32([[1.0, 2.0], [3.0, 4.0]])
    assert clnp.add.reduce(x, axis=0).tolist() == [4.0, 6.0]
    v = clnp.zeros(3, dtype=clnp.float32)
    clnp.add.at(v, clnp.asarray([0, 0, 2]), 1)
    assert v.tolist() == [2.0, 0.0, 1.0]
    for f in (clnp.matmul, clnp.vecdot, clnp.matvec, clnp.vecmat):
        assert not hasattr(f, "reduce") and not hasattr(f, "at"), f


# ----------------------------------------------------------------- numpy-migration.md: works
@claim(MIGRATION, "`numpy.asarray(x, copy=False)` raises `ValueError` where there can be no view",
       "On other devices (GPUs) it is a copy, and a read-only one")
def numpy_asarray_views_and_copies():
    d = clnp.default_device()
    x = f32([1.0, 2.0])
    with pytest.raises(ValueError, match="copy"):
        numpy.asarray(x, dtype=numpy.float64, copy=False)
    saved = d.shares_host_memory
    d.shares_host_memory = False                  # what a GPU does
    try:
        h = numpy.asarray(x)
        assert not h.flags.writeable
        with pytest.raises(ValueError, match="not host memory"):
            numpy.asarray(x, copy=False)
    finally:
        d.shares_host_memory = saved
    if saved:
        numpy.asarray(x)[0] = 5.0
        assert float(x[0]) == 5.0


@claim(MIGRATION, "positional `axis` (`np.sum(x, 0)`, `np.roll(x, 1, 0)`)",
       "a Python type as the dtype (`np.zeros((3, 3), int)`)",
       "Python scalars and lists as operands (`np.sqrt(2)`, `np.maximum([1, 2], 0)`)",
       "`out=` (`np.add(a, b, out=a)`)", "(`np.std(x, ddof=1)`), `np.round(x, 2)`",
       "`x.T` of any rank")
def numpy_signatures_work():
    x = f32([[1.0, 2.0], [3.0, 4.0]])
    assert clnp.sum(x, 0).tolist() == [4.0, 6.0]
    assert clnp.roll(x, 1, 0).tolist() == [[3.0, 4.0], [1.0, 2.0]]
    assert clnp.zeros((3, 3), int).dtype == numpy.zeros((3, 3), int).dtype
    assert float(clnp.sqrt(2)) == pytest.approx(2 ** 0.5)
    assert clnp.maximum([1, 2], 0).tolist() == [1, 2]
    a, b = f32([1.0, 2.0]), f32([3.0, 4.0])
    assert clnp.add(a, b, out=a) is a and a.tolist() == [4.0, 6.0]
    assert float(clnp.std(x, ddof=1)) == pytest.approx(numpy.std(numpy.asarray(x), ddof=1))
    assert float(clnp.std(x, correction=1)) == float(clnp.std(x, ddof=1))
    assert clnp.round(f32([1.234, 5.678]), 2).tolist() == pytest.approx([1.23, 5.68])
    assert clnp.zeros((2, 3, 4)).T.shape == (4, 3, 2)
    assert clnp.zeros((2, 3, 4)).mT.shape == (2, 4, 3)


@claim(MIGRATION, "(`np.histogram(x, bins=\"auto\")`)")
def histogram_auto_bins_work():
    data = [1.0, 2.0, 2.0, 3.0, 5.0, 7.0, 7.5]
    counts, edges = clnp.histogram(f32(data), bins="auto")
    ref_counts, ref_edges = numpy.histogram(numpy.asarray(data, dtype=numpy.float32), "auto")
    assert counts.tolist() == ref_counts.tolist()
    assert edges.tolist() == pytest.approx(ref_edges.tolist())


@claim(MIGRATION, "float32 `+=` float64 and int32 `+=` int64 compute in the promoted dtype and "
                  "cast back into `a`")
@claim(DESIGN, "casts back into `x` within a kind (`float32 += float64`, `int32 += int64`)")
def inplace_same_kind_works():
    if not clnp.default_device().supports(clnp.float64):
        pytest.skip("the default device has no float64")
    a = f32([1.0, 2.0])
    a += clnp.asarray([0.5, 0.5], dtype=clnp.float64)
    assert a.dtype == clnp.float32 and a.tolist() == [1.5, 2.5]
    i = clnp.asarray([1, 2], dtype=clnp.int32)
    i += clnp.asarray([1, 1], dtype=clnp.int64)
    assert i.dtype == clnp.int32 and i.tolist() == [2, 3]


@claim(MIGRATION, "`f\"{x:.2f}\"` and `format(x, \".3f\")` format a 0-d array")
def format_of_0d_works():
    x = f32(3.14159)
    assert f"{x:.2f}" == "3.14" and format(x, ".3f") == "3.142"


@claim(MIGRATION, "`numpy.add.at(x, i, 1)` and `numpy.add.reduceat(x, i)`")
def numpy_ufunc_methods_on_clnp_arrays():
    v = clnp.zeros(3, dtype=clnp.float32)
    numpy.add.at(v, [0, 0, 2], 1)
    assert isinstance(v, clnp.ndarray) and v.tolist() == [2.0, 0.0, 1.0]
    got = numpy.add.reduceat(f32([1.0, 2.0, 3.0, 4.0]), [0, 2])
    assert isinstance(got, clnp.ndarray) and got.tolist() == [3.0, 7.0]
    assert numpy.add.outer(f32([1.0, 2.0]), f32([10.0])).tolist() == [[11.0], [12.0]]


# ----------------------------------------------------------------------------- design.md
@claim(DESIGN, "`clnp.linalg`'s decompositions, `vector_norm` and `matrix_norm` raise "
               "`TypeError` (`norm`, `matmul`, `tensordot`, `vecdot`, `cross`, `outer`, "
               "`trace` work)",
       "`clnp.fft` widens to float32 (complex64 results)",
       "draw float32/float64 only and refuse both dtypes",
       "bitwise ops refuse them as they refuse every float")
def sixteen_bit_float_limits():
    for dtype in (ml_dtypes.bfloat16, clnp.float16):
        m = clnp.asarray([[2.0, 1.0], [1.0, 3.0]], dtype=dtype)
        v = clnp.asarray([1.0, 2.0, 3.0], dtype=dtype)
        for f in ("inv", "cholesky", "qr", "svd", "eigh", "det", "solve", "vector_norm",
                  "matrix_norm"):
            args = (m, m) if f == "solve" else (m,)
            with pytest.raises(TypeError, match="not supported"):
                getattr(clnp.linalg, f)(*args)
        assert float(clnp.linalg.norm(m)) == pytest.approx(15 ** 0.5, rel=1e-2)
        assert (m @ m).dtype == dtype and clnp.tensordot(m, m, axes=1).dtype == dtype
        assert clnp.vecdot(v, v).dtype == dtype and clnp.linalg.cross(v, v).dtype == dtype
        assert clnp.linalg.outer(v, v).dtype == dtype and float(clnp.linalg.trace(m)) == 5.0
        assert clnp.fft.fft(v).dtype == clnp.complex64
        with pytest.raises(TypeError, match="float32 or float64"):
            clnp.random.default_rng(0).standard_normal(3, dtype=dtype)
        with pytest.raises(TypeError, match="float32 or float64"):
            cg.random.normal(cg.random.key(0), (3,), dtype=dtype)
        with pytest.raises(TypeError, match="integer or boolean"):
            clnp.bitwise_and(v, v)


@claim(DESIGN, "Ops NumPy refuses for a dtype raise `TypeError` naming the function and the "
               "dtype: `bool - bool`, `negative(bool)`, bitwise ops on floats",
       "`bool + bool` is logical or and `maximum(bool, bool)` works")
def bool_ops_follow_numpy():
    t, f = clnp.asarray([True, False]), clnp.asarray([True, True])
    for call, name in ((lambda: t - f, "subtract"), (lambda: clnp.negative(t), "negative"),
                       (lambda: clnp.bitwise_xor(f32([1.0]), f32([1.0])), "bitwise_xor")):
        with pytest.raises(TypeError, match=name):
            call()
    assert (t + f).tolist() == [True, True] and (t + f).dtype == clnp.bool
    assert clnp.maximum(t, clnp.asarray([False, False])).tolist() == [True, False]
    assert (f32([2.0, 3.0]) * t).tolist() == [2.0, 0.0]


@claim(DESIGN, "integer `reciprocal` is a `TypeError`, integer `x ** -1` raises `ValueError`")
def integer_reciprocal_and_negative_power():
    with pytest.raises(TypeError, match="reciprocal"):
        clnp.reciprocal(clnp.asarray([2]))
    with pytest.raises(ValueError, match="negative"):
        clnp.asarray([2]) ** -1
    assert clnp.sin(clnp.asarray([0], dtype=clnp.int8)).dtype == clnp.float16


@claim(DESIGN, "Comparisons with out-of-range Python ints (`uint8_array < 300`) give NumPy's "
               "exact answer; other ops raise `OverflowError`")
def out_of_range_comparisons_are_exact():
    u = clnp.asarray([1, 255], dtype=clnp.uint8)
    assert (u < 300).tolist() == [True, True] and (u == -1).tolist() == [False, False]
    with pytest.raises(OverflowError):
        u + 300


@claim(DESIGN, "`floor_divide(±inf, finite) = ±inf` and `finite // ±inf` gives a signed zero")
def floor_divide_special_cases():
    got = clnp.floor_divide(f32([numpy.inf, -numpy.inf, 1.0, -1.0]),
                            f32([2.0, 2.0, numpy.inf, numpy.inf]))
    host = numpy.asarray(got)
    assert host[:2].tolist() == [numpy.inf, -numpy.inf]
    assert host[2:].tolist() == [0.0, -0.0] and numpy.signbit(host[3])


@claim(DESIGN, "`np.sum(x, 0)` works written against clnp directly, as through `numpy.sum`")
def positional_axis_directly_and_through_numpy():
    x = f32([[1.0, 2.0], [3.0, 4.0]])
    assert clnp.sum(x, 0).tolist() == numpy.sum(x, 0).tolist() == [4.0, 6.0]


# --------------------------------------------------------------- the pages against the checks
# Paragraphs that use the words below without stating a limit of the API, and why.
NOT_CLAIMS = {
    MIGRATION: {
        "This page covers three things: what behaves differently and why, what is missing":
            "the page's outline; the missing names are the generated section, which "
            "tests/test_docs.py::test_generated_coverage_is_current checks",
        "## What is missing": "a heading",
    },
    DESIGN: {
        "whatever it cannot express (dtype conversions, float16 scalar rounding, out-of-range "
        "Python ints, another interpreter such as a transformation) returns to the general "
        "route, which also raises the errors":
            "how the fast path hands over to the general route; the errors themselves are "
            "the claims checked above",
    },
}

LIMIT_WORDS = re.compile(r"\brais(?:e|es|ed|ing)\b|\brefus|\bnot supported\b|\bunsupported\b"
                         r"|\bdo(?:es)? not work\b|\bcannot\b|\bno equivalent\b|\bis an error\b"
                         r"|\bnot implemented\b|\bmissing\b|\bthere is no\b|\bdo(?:es)? not get\b"
                         r"|\bkeyword-only\b|\buntil #\d+", re.I)
FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.M | re.S)
GENERATED = re.compile(r"<!-- BEGIN numpy-coverage.*?<!-- END numpy-coverage -->", re.S)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _page(page: str) -> str:
    return open(os.path.join(ROOT, page), encoding="utf-8").read()


def _blocks(text: str) -> list[str]:
    """Paragraphs, list items, table rows and headings, each on one line."""
    text = FENCE.sub("", GENERATED.sub("", text))
    blocks: list[str] = []
    current: list[str] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith(("- ", "|", "#")):
            if current:
                blocks.append(_flat(" ".join(current)))
            current = [line] if line.strip() else []
        else:
            current.append(line)
    if current:
        blocks.append(_flat(" ".join(current)))
    return blocks


_PASSED: set = set()


@pytest.mark.parametrize("page,quotes,check", CLAIMS)
def test_claim(page, quotes, check):
    text = _flat(_page(page))
    for quote in quotes:
        assert _flat(quote) in text, (
            f"{page} no longer says {quote!r}: update or remove its check, {check.__name__}, "
            f"in tests/test_docs_claims.py")
    if check not in _PASSED:                        # a check backing both pages runs once
        check()
        _PASSED.add(check)


def _unchecked(text: str, quotes: list[str]) -> list[str]:
    """The passages of ``text`` that state a limit and hold none of ``quotes``."""
    quotes = [_flat(q) for q in quotes]
    return [b for b in _blocks(text) if LIMIT_WORDS.search(b) and not any(q in b for q in quotes)]


@pytest.mark.parametrize("page", PAGES)
def test_every_limit_on_the_page_has_a_check(page):
    quotes = [q for p, qs, _ in (c.values for c in CLAIMS) if p == page for q in qs]
    unchecked = _unchecked(_page(page), quotes + list(NOT_CLAIMS[page]))
    assert not unchecked, (
        f"{page}: these passages state a limit (raises, refuses, missing, ...) that no check in "
        "tests/test_docs_claims.py quotes; add a check with @claim, or list the passage in "
        "NOT_CLAIMS with the reason:\n\n" + "\n\n".join(unchecked))


def test_the_block_check_sees_an_unchecked_limit():
    """The checker itself: a limit nobody quotes is reported, a quoted one (even wrapped
    across lines) is not, and code blocks are not prose."""
    text = ("Intro.\n\n- `f(x)` raises `TypeError`\n  on bools.\n- `g` works.\n\n"
            "```python\nraise ValueError\n```\n| `h` | is not supported |\n")
    assert _unchecked(text, []) == ["- `f(x)` raises `TypeError` on bools.",
                                    "| `h` | is not supported |"]
    assert _unchecked(text, ["raises `TypeError` on bools"]) == ["| `h` | is not supported |"]
