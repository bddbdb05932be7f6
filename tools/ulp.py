"""Accuracy of clnp's floating-point functions in ULP, against a correctly rounded reference.

For each function (:data:`FUNCTIONS`) and dtype this module draws a documented set of points
(:func:`sample`: dense sampling of the function's domain plus its special regions: near 0,
subnormals, near domain edges and zeros, the whole exponent range, large arguments), evaluates
clnp's public function on a device, computes a reference at higher precision and reports the
largest error in units in the last place (:func:`measure`). Special inputs (zeros, infinities,
NaN) are checked separately as exact behaviour against NumPy (:func:`special_mismatches`).

References: float16 and float32 results against NumPy in float64 (its error, about 1 ulp of
float64, is 2^-29 ulp of float32); float64 results against NumPy in ``np.longdouble`` (x86
80-bit extended, 11 more bits: glibc's ``sinl`` etc. are within a few ulp of extended, i.e.
below 0.002 ulp of float64); ``erf`` and ``i0`` in float64 against mpmath at 40 digits (and
SciPy's float64 functions for float32). Complex results against NumPy in complex128
(complex64) or mpmath at 40 digits (complex128).

ULP: for a real reference ``r`` in the binade ``[2^e, 2^(e+1))`` of a format with ``p``
significand bits, ``ulp(r) = 2^(max(e, emin) - p + 1)`` (so subnormal results have the spacing
of the subnormals); the error is ``|y - r| / ulp(r)``. A correctly rounded result has error
<= 0.5. Complex results use a normwise metric: ``max(|dre|, |dim|) / ulp(max(|r.re|, |r.im|))``,
the error in units of the last place of the larger component, which does not blow up where one
component of the result cancels to nearly zero.

Bounds: :data:`SPEC` holds the OpenCL 3.0 C specification's full-profile tables ("Relative
Error as ULPs": *ULP values for single precision built-in math functions* and *... for
double precision ...*; half precision from the ``cl_khr_fp16`` extension). Functions the
specification does not define (``logaddexp``, ``i0``, complex functions) get clnp's own bound
in :data:`CLNP_BOUND`.

Run ``python tools/ulp.py --markdown`` to print the table (Markdown) for the default device
(``CLNP_DEVICE=nvidia:0`` or ``--device nvidia:0`` for another), ``python tools/ulp.py --write``
to rewrite that kind of device's table in ``docs/reliability.md``; ``-n``, ``--only`` and
``--dtypes`` narrow the run. The exit status is 1 when a function is outside its bound.
``tests/test_accuracy_ulp.py`` runs the same measurement with fewer points.
"""
from __future__ import annotations

import argparse
import math
import re
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

if __name__ == "__main__":      # run as a script: this checkout's clnp, not an installed one
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import clnp

# --------------------------------------------------------------------------------------------
# bounds

# OpenCL 3.0 C specification, section "Relative Error as ULPs", full profile; half precision:
# cl_khr_fp16, "Relative Error as ULPs". 0.5 = correctly rounded.
_CR = 0.5
SPEC: dict[str, dict[str, float]] = {
    "float32": {"divide": 2.5, "reciprocal": 2.5, "acos": 4, "asin": 4, "atan": 5, "atan2": 6,
                "acosh": 4, "asinh": 4, "atanh": 5, "cbrt": 2, "cos": 4, "cosh": 4,
                "degrees": 2, "erf": 16, "exp": 3, "exp2": 3, "expm1": 3, "hypot": 4,
                "log": 3, "log2": 3, "log10": 3, "log1p": 2, "pow": 16, "radians": 2,
                "sin": 4, "sinh": 4, "sqrt": 3, "tan": 5, "tanh": 5},
    "float64": {"divide": _CR, "reciprocal": _CR, "acos": 4, "asin": 4, "atan": 5,
                "atan2": 6, "acosh": 4, "asinh": 4, "atanh": 5, "cbrt": 2, "cos": 4,
                "cosh": 4, "degrees": 2, "erf": 16, "exp": 3, "exp2": 3, "expm1": 3,
                "hypot": 4, "log": 3, "log2": 3, "log10": 3, "log1p": 2, "pow": 16,
                "radians": 2, "sin": 4, "sinh": 4, "sqrt": _CR, "tan": 5, "tanh": 5},
    "float16": {"divide": _CR, "reciprocal": _CR, "acos": 2, "asin": 2, "atan": 2, "atan2": 2,
                "acosh": 2, "asinh": 2, "atanh": 2, "cbrt": 2, "cos": 2, "cosh": 2,
                "degrees": 2, "erf": 4, "exp": 2, "exp2": 2, "expm1": 2, "hypot": 2,
                "log": 2, "log2": 2, "log10": 2, "log1p": 2, "pow": 4, "radians": 2,
                "sin": 2, "sinh": 2, "sqrt": _CR, "tan": 2, "tanh": 2},
}
# Functions outside the OpenCL tables: clnp's bound (the table names the reason).
CLNP_BOUND: dict[str, float] = {
    # max(a, b) + log1p(exp(-|a - b|)), NumPy's formula: where the result cancels to nearly
    # 0 (a ~ b ~ -ln 2) its condition number, and so the relative error of any
    # fixed-precision evaluation (NumPy's: 60 ulp), grows without bound. The error is
    # therefore measured in ulp of max(|result|, |a|, |b|) (``Fn.input_scaled``).
    "logaddexp": 4,
    "logaddexp2": 4,
    # Cephes' Chebyshev series (NumPy's algorithm), ~2 ulp, times exp(|x|) / sqrt(|x|); above
    # |x| = 700 (float: 80) as two half exponentials, so that exp does not overflow first
    "i0": 6,
    "complex": 8,       # normwise, every complex function (a few real operations each)
}


_NUMPY_RELATIVE: set[str] = set()
# complex pow: exp(b log a) in any working precision has an error growing with |b log a|
# (NumPy's too), so it is held to 8 ulp or twice NumPy's error on the same points + 1 ulp
_NUMPY_RELATIVE_C = {"pow"}


def bound(name: str, dtype: np.dtype | str, device: Any = None) -> tuple[float, str]:
    """The ULP bound clnp holds ``name`` to in ``dtype`` and where it comes from.

    Parameters
    ----------
    name : str
        A key of :data:`FUNCTIONS`.
    dtype : dtype or str
        The result dtype (complex dtypes use the normwise metric).
    device : clnp.Device, optional
        Where float32 divide, reciprocal and sqrt run: when clnp builds with
        ``-cl-fp32-correctly-rounded-divide-sqrt`` there (``Device.default_build_options``) they
        are held to correct rounding, as NumPy's are.

    Returns
    -------
    (float, str)
        The bound in ULP and its source (``"OpenCL"``, ``"clnp"``, ``"correctly rounded"``;
        ``"NumPy"``: at least twice NumPy's own error + 1 ulp, which :func:`measure` adds).
    """
    d = np.dtype(dtype)
    if d.kind == "c":
        return CLNP_BOUND["complex"], ("NumPy" if name in _NUMPY_RELATIVE_C else "clnp")
    if (d == np.float32 and name in ("divide", "reciprocal", "sqrt") and device is not None
            and "-cl-fp32-correctly-rounded-divide-sqrt" in device.default_build_options):
        return _CR, "correctly rounded (build option)"
    if name in _NUMPY_RELATIVE:
        return CLNP_BOUND[name], "NumPy"
    table = SPEC[d.name]
    if name in table:
        return float(table[name]), "OpenCL"
    base = FUNCTIONS[name].spec
    if base in table:
        return float(table[base]), f"OpenCL ({base})"
    return float(CLNP_BOUND[name]), "clnp"


# --------------------------------------------------------------------------------------------
# ULP error

def ulp_of(r: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``ulp(r)`` in the format ``dtype`` for references ``r`` (held in a wider type)."""
    fi = np.finfo(dtype)
    p = fi.nmant + 1
    ar = np.abs(r)
    _, e = np.frexp(ar)                       # ar = m 2^e, 0.5 <= m < 1
    e = np.where(ar == 0, fi.minexp, np.maximum(e - 1, fi.minexp))
    return np.ldexp(np.ones_like(ar), (e - (p - 1)).astype(np.int32))


def ulp_error(y: np.ndarray, r: np.ndarray, dtype: np.dtype,
              scale: np.ndarray | None = None) -> np.ndarray:
    """Error of results ``y`` (of ``dtype``) against references ``r``, in ULP of ``dtype``
    (of ``max(|r|, scale)`` where ``scale`` is given).

    Where the reference rounds to an infinity, that infinity has error 0; a finite result
    there is measured in ulps of the largest binade (the format's ulp continued past its
    largest value: ``finfo.max`` for an exact result 0.6 ulp beyond it is a 0.6 ulp error,
    as the OpenCL bounds count it), and a NaN result where the reference is a number is an
    infinite error."""
    d = np.dtype(dtype)
    with np.errstate(all="ignore"):
        if d.kind == "c":
            rd = np.finfo(d).dtype
            big = np.maximum(np.abs(r.real), np.abs(r.imag))
            u = ulp_of(big, rd)
            parts = []
            for yc, rc in ((y.real, r.real), (y.imag, r.imag)):
                rcd = rc.astype(rd)
                e = np.abs(yc.astype(rc.dtype) - rc) / u
                # a component that overflows the format must be that infinity
                parts.append(np.where(np.isinf(rcd), np.where(yc == rcd, 0.0, np.inf), e))
            err = np.maximum(parts[0], parts[1])
            err = np.where(np.isnan(err), np.inf, err)
            return err.astype(np.float64)
        rr = r.astype(d)
        yw = y.astype(r.dtype)
        err = np.abs(yw - r) / ulp_of(r if scale is None else np.maximum(np.abs(r), scale), d)
        top = ulp_of(np.asarray(np.finfo(d).max, r.dtype), d)
        err = np.where(np.isinf(rr), np.where(y == rr, 0.0, np.abs(yw - r) / top), err)
        err = np.where(np.isnan(err), np.inf, err)
        return err.astype(np.float64)


# --------------------------------------------------------------------------------------------
# sampling

def _signed(rng: np.random.Generator, v: np.ndarray) -> np.ndarray:
    return np.where(rng.random(v.size) < 0.5, -v, v)


def logu(rng: np.random.Generator, n: int, lo: float, hi: float, signed: bool = False
         ) -> np.ndarray:
    """``n`` magnitudes log-uniform in ``[lo, hi]`` (``lo > 0``), random signs if ``signed``."""
    v = np.exp2(rng.uniform(math.log2(lo), math.log2(hi), n))
    return _signed(rng, v) if signed else v


def near(rng: np.random.Generator, n: int, c: np.ndarray | float, rel: float = 1.0
         ) -> np.ndarray:
    """Points approaching ``c`` from both sides at distances log-uniform in
    ``[2^-60, rel] * max(|c|, 1)``."""
    c = np.broadcast_to(np.asarray(c, np.float64), (n,))
    return c + _signed(rng, logu(rng, n, 2.0 ** -60, rel)) * np.maximum(np.abs(c), 1.0)


@dataclass(frozen=True)
class Domain:
    """Float64 sampling parts of one argument, as (weight, generator(rng, n, finfo))."""
    parts: tuple[tuple[float, Callable[..., np.ndarray]], ...]

    def draw(self, rng: np.random.Generator, n: int, fi: np.finfo) -> np.ndarray:
        w = np.array([p[0] for p in self.parts], float)
        counts = np.floor(w / w.sum() * n).astype(int)
        counts[0] += n - counts.sum()
        return np.concatenate([g(rng, int(k), fi) for (_, g), k in zip(self.parts, counts)])


def _tiny(fi):   # the smallest subnormal
    return float(fi.smallest_subnormal)


def _uni(a, b):
    return lambda rng, n, fi: rng.uniform(a(fi) if callable(a) else a,
                                          b(fi) if callable(b) else b, n)


def _log(lo, hi, signed=False):
    return lambda rng, n, fi: logu(rng, n, lo(fi) if callable(lo) else lo,
                                   hi(fi) if callable(hi) else hi, signed)


def _near(points, rel=1.0):
    def g(rng, n, fi):
        c = points(rng, n, fi) if callable(points) else np.asarray(points, float)
        if np.ndim(c) and np.size(c) != n:
            c = rng.choice(c, n)
        return near(rng, n, c, rel)
    return g


def _full(signed=True):
    return _log(_tiny, lambda fi: float(fi.max), signed)


def _pi_multiples(half: bool, kmax: float = 1e4):
    def g(rng, n, fi):
        k = np.round(logu(rng, n, 1, kmax, True))
        return (k + 0.5 if half else k) * np.pi
    return g


def _ln_max(fi):
    return math.log(float(fi.max))


def _ln_tiny(fi):
    return math.log(float(fi.smallest_subnormal))


def _edge(f):
    """The point ``f(finfo)``, for :func:`_near` (an overflow or underflow threshold)."""
    return lambda rng, n, fi: np.full(n, f(fi))


# --------------------------------------------------------------------------------------------
# functions

@dataclass(frozen=True)
class Fn:
    """One function under test.

    ``call`` runs clnp on device arrays; ``ref`` evaluates NumPy at higher precision (float64
    or longdouble inputs); ``mp`` (optional) is the mpmath function used instead of ``ref``
    for float64 results; ``domains`` sample each argument (``joint`` replaces them for
    arguments that must be drawn together); ``complex`` whether clnp has complex versions."""
    name: str
    nin: int
    call: Callable[..., Any]
    ref: Callable[..., np.ndarray]
    domains: tuple[Domain, ...] = ()
    joint: Callable[..., tuple[np.ndarray, ...]] | None = None
    spec: str | None = None
    mp: Callable[..., Any] | None = None
    ref32: Callable[..., np.ndarray] | None = None
    complex: bool = False
    complex_domain: tuple[float, float] = (-10.0, 10.0)
    input_scaled: bool = False    # error in ulp of max(|result|, |inputs|) (see CLNP_BOUND)
    note: str = ""
    extra: dict = field(default_factory=dict)


def _xp_fn(name: str) -> Callable[..., Any]:
    return lambda *a: getattr(clnp, name)(*a)


_SMALL = (1.0, _log(_tiny, 1e-3, True))                       # near 0, subnormals included
_MID = (1.0, _uni(-10, 10))


def _pow_joint(rng: np.random.Generator, n: int, fi: np.finfo) -> tuple[np.ndarray, np.ndarray]:
    """x log-uniform over the format, y chosen so that x**y covers the whole output range
    (5 % of the points just below the overflow threshold); a quarter of the points with x < 0
    and integer y; y == 2 and y == 0.5 included."""
    x = logu(rng, n, float(fi.smallest_normal), float(fi.max))
    t = rng.uniform(math.log2(float(fi.smallest_subnormal)), math.log2(float(fi.max)), n)
    lx = np.log2(x)
    y = np.where(np.abs(lx) > 1e-3, t / np.where(lx == 0, 1, lx), rng.uniform(-50, 50, n))
    q = rng.random(n)
    neg = q < 0.25
    y = np.where(neg, np.round(y), y)
    x = np.where(neg, -x, x)
    # results just below the overflow threshold
    edge = (q > 0.85) & (q <= 0.9)
    top = math.log2(float(fi.max))
    y = np.where(edge, (top - logu(rng, n, 2.0 ** -40, 1e-3)) / np.where(lx == 0, 1, lx), y)
    y = np.where((q > 0.9) & (q < 0.95), 2.0, y)
    y = np.where(q >= 0.95, 0.5, y)
    x = np.where(q >= 0.95, np.abs(x), x)
    return x, y


def _close_pairs(rng, n, fi):
    """Pairs (a, b) with b near a: logaddexp's a == b and cancellation regions."""
    a = np.concatenate([rng.uniform(-50, 50, n - n // 2), logu(rng, n // 2, 1e-6, 1e4, True)])
    return a, near(rng, n, a, 1e-2)


def _logaddexp_points(rng, n, fi):
    """Half the pairs close together (the result cancels where a ~ b ~ -ln 2), half
    uniform in [-100, 100]^2."""
    a, b = _close_pairs(rng, n // 2, fi)
    m = n - n // 2
    return np.concatenate([a, rng.uniform(-100, 100, m)]), np.concatenate(
        [b, rng.uniform(-100, 100, m)])


_SCALED_NOTE = "error in ulp of the largest magnitude of result, x1, x2"


FUNCTIONS: dict[str, Fn] = {}


def _add(fn: Fn) -> None:
    FUNCTIONS[fn.name] = fn


_add(Fn("sin", 1, _xp_fn("sin"), np.sin, (Domain((_MID, _SMALL, (1.0, _full()),
         (1.0, _log(1, 1e4, True)), (1.0, _near(_pi_multiples(False), 1e-4)))),),
        complex=True))
_add(Fn("cos", 1, _xp_fn("cos"), np.cos, (Domain((_MID, _SMALL, (1.0, _full()),
         (1.0, _log(1, 1e4, True)), (1.0, _near(_pi_multiples(True), 1e-4)))),),
        complex=True))
_add(Fn("tan", 1, _xp_fn("tan"), np.tan, (Domain((_MID, _SMALL, (1.0, _full()),
         (1.0, _log(1, 1e4, True)), (1.0, _near(_pi_multiples(True), 1e-4)),
         (1.0, _near(_pi_multiples(False), 1e-4)))),), complex=True))
_unit = Domain(((1.0, _uni(-1, 1)), _SMALL, (1.0, _near([-1.0, 1.0], 0.5))))
_add(Fn("asin", 1, _xp_fn("asin"), np.arcsin, (_unit,), complex=True))
_add(Fn("acos", 1, _xp_fn("acos"), np.arccos, (_unit,), complex=True))
_add(Fn("atan", 1, _xp_fn("atan"), np.arctan, (Domain((_MID, _SMALL, (1.0, _full()))),),
        complex=True))
_hyp = Domain((_MID, _SMALL, (1.0, _log(1e-3, _ln_max, True)),
               (0.3, _near(lambda rng, n, fi: _signed(rng, np.full(n, _ln_max(fi))), 1e-3)),
               # sinh/cosh's own overflow threshold, ln(max) + ln 2 (PoCL's double sinh and
               # cosh returned NaN in the last 1.5e-6 below it)
               (0.3, _near(lambda rng, n, fi: _signed(rng, np.full(
                   n, _ln_max(fi) + math.log(2.0))), 1e-6))))
_add(Fn("sinh", 1, _xp_fn("sinh"), np.sinh, (_hyp,), complex=True, complex_domain=(-5, 5)))
_add(Fn("cosh", 1, _xp_fn("cosh"), np.cosh, (_hyp,), complex=True, complex_domain=(-5, 5)))
_add(Fn("tanh", 1, _xp_fn("tanh"), np.tanh, (Domain((_MID, _SMALL, (1.0, _log(1e-3, 1e3, True)),
         (0.3, _full()))),), complex=True, complex_domain=(-5, 5)))
_add(Fn("asinh", 1, _xp_fn("asinh"), np.arcsinh, (Domain((_MID, _SMALL, (1.0, _full()))),),
        complex=True))
_add(Fn("acosh", 1, _xp_fn("acosh"), np.arccosh,
        (Domain(((1.0, _uni(1, 10)), (1.0, _near([1.0], 1.0)),
                 (1.0, _log(1, lambda fi: float(fi.max))))),), complex=True))
_add(Fn("atanh", 1, _xp_fn("atanh"), np.arctanh, (_unit,), complex=True))
_add(Fn("exp", 1, _xp_fn("exp"), np.exp, (Domain((_MID, _SMALL,
         (1.0, _uni(_ln_tiny, _ln_max)), (0.3, _near(_edge(_ln_max), 1e-6)),
         (0.3, _near(_edge(_ln_tiny), 1e-6)))),), complex=True, complex_domain=(-5, 5)))
_add(Fn("exp2", 1, _xp_fn("exp2"), np.exp2, (Domain((_MID, _SMALL, (1.0, _uni(
         lambda fi: math.log2(float(fi.smallest_subnormal)),
         lambda fi: math.log2(float(fi.max)))),
         (0.3, _near(_edge(lambda fi: math.log2(float(fi.max))), 1e-6)))),),
        note="clnp computes it as pow(2, x)"))
_add(Fn("expm1", 1, _xp_fn("expm1"), np.expm1, (Domain((_MID, _SMALL,
         (1.0, _uni(-40, _ln_max)), (0.3, _near(_edge(_ln_max), 1e-6)))),), complex=True,
        complex_domain=(-5, 5)))
_pos = Domain(((1.0, _uni(0, 10)), (1.0, _log(_tiny, 1e-3)), (1.0, _full(False)),
               (1.0, _near([1.0], 0.5))))
_add(Fn("log", 1, _xp_fn("log"), np.log, (_pos,), complex=True))
_add(Fn("log2", 1, _xp_fn("log2"), np.log2, (_pos,), complex=True))
_add(Fn("log10", 1, _xp_fn("log10"), np.log10, (_pos,), complex=True))
_add(Fn("log1p", 1, _xp_fn("log1p"), np.log1p, (Domain(((1.0, _uni(-1, 10)), _SMALL,
         (1.0, _full(False)), (1.0, _near([-1.0], 0.5)))),), complex=True))
_add(Fn("sqrt", 1, _xp_fn("sqrt"), np.sqrt, (_pos,), complex=True))
_add(Fn("cbrt", 1, _xp_fn("cbrt"), np.cbrt, (Domain((_MID, _SMALL, (1.0, _full()))),)))
_add(Fn("reciprocal", 1, _xp_fn("reciprocal"), np.reciprocal,
        (Domain((_MID, _SMALL, (1.0, _full()))),), spec="reciprocal", complex=True))
_add(Fn("divide", 2, _xp_fn("divide"), np.divide,
        (Domain((_MID, (1.0, _full()))), Domain((_MID, (1.0, _full())))), complex=True))
_add(Fn("pow", 2, _xp_fn("pow"), np.power, joint=_pow_joint, complex=True,
        complex_domain=(-3, 3)))
_add(Fn("atan2", 2, _xp_fn("atan2"), np.arctan2,
        (Domain((_MID, _SMALL, (1.0, _full()))), Domain((_MID, _SMALL, (1.0, _full()))))))
_add(Fn("hypot", 2, _xp_fn("hypot"), np.hypot,
        (Domain((_MID, _SMALL, (1.0, _full()))), Domain((_MID, _SMALL, (1.0, _full()))))))
_add(Fn("logaddexp", 2, _xp_fn("logaddexp"), np.logaddexp, joint=_logaddexp_points,
        input_scaled=True, note=_SCALED_NOTE))
_add(Fn("logaddexp2", 2, _xp_fn("logaddexp2"), np.logaddexp2, joint=_logaddexp_points,
        input_scaled=True, note=_SCALED_NOTE))
_add(Fn("degrees", 1, _xp_fn("degrees"), np.degrees,
        (Domain((_MID, _SMALL, (1.0, _log(_tiny, lambda fi: float(fi.max) / 60, True)))),)))
_add(Fn("radians", 1, _xp_fn("radians"), np.radians,
        (Domain((_MID, _SMALL, (1.0, _full()))),)))


def _i0_ref(x):
    import scipy.special
    return scipy.special.i0(x)


_add(Fn("i0", 1, _xp_fn("i0"), _i0_ref, (Domain((_MID, _SMALL,
         (1.0, _uni(-1, 1)), (1.0, _uni(lambda fi: -_ln_max(fi) - 5,
                                        lambda fi: _ln_max(fi) + 5)))),),
        mp=lambda x: __import__("mpmath").besseli(0, x)))


def _erf_call(x):
    import clnp_nn.functional as F
    return F.erf(x)


def _erf_ref(x):
    import scipy.special
    return scipy.special.erf(x)


_add(Fn("erf", 1, _erf_call, _erf_ref, (Domain((_MID, _SMALL, (1.0, _uni(-6, 6)),
         (0.3, _full()))),), mp=lambda x: __import__("mpmath").erf(x),
        note="clnp_nn.functional.erf"))


# --------------------------------------------------------------------------------------------
# measuring

def sample(fn: Fn, dtype: np.dtype, n: int, seed: int = 0) -> tuple[np.ndarray, ...]:
    """``n`` points (before filtering) for ``fn`` in real ``dtype``: float64 draws rounded to
    ``dtype``; points that do not fit the format, and points outside the function's domain
    (NaN reference), are dropped."""
    d = np.dtype(dtype)
    fi = np.finfo(d)
    rng = np.random.default_rng([seed, zlib_hash(fn.name), d.num])
    with np.errstate(all="ignore"):
        raw = fn.joint(rng, n, fi) if fn.joint else tuple(dom.draw(rng, n, fi)
                                                          for dom in fn.domains)
        xs = tuple(np.asarray(a, np.float64).astype(d) for a in raw)
    keep = np.ones(n, bool)
    for a in xs:
        keep &= np.isfinite(a)
    return tuple(a[keep] for a in xs)


def sample_complex(fn: Fn, dtype: np.dtype, n: int, seed: int = 0) -> tuple[np.ndarray, ...]:
    """``n`` complex points: real and imaginary parts each uniform in ``fn.complex_domain`` or
    log-uniform in ``[1e-6, 1e6]`` (in a quarter of the points, both signs)."""
    d = np.dtype(dtype)
    rng = np.random.default_rng([seed, zlib_hash(fn.name), d.num, 7])
    lo, hi = fn.complex_domain
    out = []
    for _ in range(fn.nin):
        parts = []
        for _k in range(2):
            v = rng.uniform(lo, hi, n)
            q = rng.random(n) < 0.25
            v = np.where(q, logu(rng, n, 1e-6, min(1e6, hi ** 6), True), v)
            parts.append(v)
        out.append((parts[0] + 1j * parts[1]).astype(d))
    return tuple(out)


def zlib_hash(s: str) -> int:
    import zlib
    return zlib.crc32(s.encode())


def reference(fn: Fn, xs: Sequence[np.ndarray], dtype: np.dtype) -> np.ndarray:
    """The reference values for inputs ``xs`` of result dtype ``dtype``, in a wider type."""
    d = np.dtype(dtype)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if d == np.complex128:
            return _mp_complex(fn, xs)
        if d.kind == "c":
            return np.asarray(fn.ref(*(x.astype(np.complex128) for x in xs)), np.complex128)
        if d == np.float64:
            if fn.mp is not None:
                import mpmath
                with mpmath.workdps(40):
                    f = np.frompyfunc(lambda *a: np.longdouble(mpmath.nstr(
                        fn.mp(*(mpmath.mpf(float(v)) for v in a)), 30)), fn.nin, 1)
                    return np.asarray(f(*xs), np.longdouble)
            return np.asarray(fn.ref(*(x.astype(np.longdouble) for x in xs)), np.longdouble)
        return np.asarray(fn.ref(*(x.astype(np.float64) for x in xs)), np.float64)


def reference_name(fn: Fn, dtype: np.dtype) -> str:
    """How :func:`reference` computes ``fn``'s reference for result dtype ``dtype``."""
    d = np.dtype(dtype)
    if d == np.complex128:
        return "mpmath, 40 digits"
    if d.kind == "c":
        return "NumPy complex128"
    if d == np.float64:
        return "mpmath, 40 digits" if fn.mp is not None else "NumPy longdouble"
    return "SciPy float64" if fn.ref in (_i0_ref, _erf_ref) else "NumPy float64"


def _mp_complex(fn: Fn, xs: Sequence[np.ndarray]) -> np.ndarray:
    """complex128 references from mpmath at 40 digits (NumPy's complex longdouble functions
    use textbook formulas: its log1p(z) computes 1 + z, 130 ulp off for |z| ~ 1e-6)."""
    import mpmath
    f = {"log2": lambda z: mpmath.log(z, 2), "reciprocal": lambda z: 1 / z,
         "divide": lambda a, b: a / b, "pow": mpmath.power}.get(fn.name)
    f = f or getattr(mpmath, fn.name)
    re = np.empty(xs[0].shape, np.longdouble)
    im = np.empty(xs[0].shape, np.longdouble)
    with mpmath.workdps(40):
        for i in range(xs[0].size):
            w = mpmath.mpc(f(*(mpmath.mpc(complex(x[i])) for x in xs)))
            re[i] = np.longdouble(mpmath.nstr(w.real, 30))
            im[i] = np.longdouble(mpmath.nstr(w.imag, 30))
    return re + np.clongdouble(1j) * im


@dataclass
class Result:
    """Largest error of one function in one dtype on one device."""
    name: str
    dtype: str
    device: str
    points: int
    max_ulp: float
    worst_input: tuple
    bound: float
    source: str
    numpy_ulp: float = math.nan    # NumPy's own error in the same dtype on the same points
    reference: str = ""            # :func:`reference_name`

    @property
    def ok(self) -> bool:
        # 1e-3 ulp: the reference's own error (see the module docstring)
        return self.max_ulp <= self.bound + 1e-3


def evaluate(fn: Fn, xs: Sequence[np.ndarray], device: Any) -> np.ndarray:
    """clnp's results for host inputs ``xs`` on ``device``, on the host."""
    args = [clnp.asarray(x, device=device) for x in xs]
    return np.asarray(fn.call(*args).to_numpy())


def measure(name: str, dtype: Any, device: Any, n: int = 20000, seed: int = 0) -> Result:
    """Largest ULP error of clnp's ``name`` in ``dtype`` on ``device`` over :func:`sample`
    (real dtypes) or :func:`sample_complex` (complex dtypes) points.

    Parameters
    ----------
    name : str
        A key of :data:`FUNCTIONS`.
    dtype : dtype
        float16, float32, float64, complex64 or complex128.
    device : clnp.Device
    n : int
        Points drawn (before the ones outside the domain are dropped).
    seed : int

    Returns
    -------
    Result
    """
    fn = FUNCTIONS[name]
    d = np.dtype(dtype)
    if d.kind == "c":
        xs = sample_complex(fn, d, n, seed)
    else:
        xs = sample(fn, d, n, seed)
    r = reference(fn, xs, d)
    ok = np.isfinite(r.real) & np.isfinite(r.imag) if d.kind == "c" else ~np.isnan(r)
    xs = tuple(x[ok] for x in xs)
    r = r[ok]
    y = evaluate(fn, xs, device)
    scale = None
    if fn.input_scaled:
        scale = np.max([np.abs(x.astype(r.dtype)) for x in xs], axis=0)
    err = ulp_error(y, r, d, scale)
    i = int(np.argmax(err)) if err.size else 0
    worst = tuple(x[i].item() for x in xs) if err.size else ()
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ny = np.asarray(fn.ref(*xs)).astype(d)
    nerr = ulp_error(ny, r, d, scale)
    nmax = float(nerr.max()) if nerr.size else 0.0
    b, src = bound(name, d, device)
    if src == "NumPy":
        b = max(b, 2 * nmax + 1.0)
    return Result(name, d.name, device.key, int(err.size), float(err.max()) if err.size else 0.0,
                  worst, b, src, nmax, reference_name(fn, d))


# special values: exact behaviour (C99 Annex F, as NumPy)
SPECIAL_VALUES = (0.0, -0.0, np.inf, -np.inf, np.nan)
_PARTNERS = (1.0, -1.0, 2.0, -2.0, 0.5)


def special_cases(fn: Fn, dtype: Any) -> tuple[np.ndarray, ...]:
    """The special inputs of ``fn``: :data:`SPECIAL_VALUES` (unary), or every pair of
    :data:`SPECIAL_VALUES` and ``(+-1, +-2, 0.5)`` with at least one special (binary)."""
    d = np.dtype(dtype)
    if fn.nin == 1:
        return (np.array(SPECIAL_VALUES, d),)
    s = np.array(SPECIAL_VALUES + _PARTNERS, d)
    a, b = (g.ravel() for g in np.meshgrid(s, s, indexing="ij"))
    keep = ~(np.isfinite(a) & (a != 0) & np.isfinite(b) & (b != 0))
    return a[keep], b[keep]


def _prescribed(v: np.ndarray) -> np.ndarray:
    """Results C99 Annex F prescribes exactly: zeros, infinities, NaN, +-1 and the multiples
    of pi/4 atan2 returns (as rounded to the dtype)."""
    with np.errstate(all="ignore"):
        k = np.array([1, np.pi / 4, np.pi / 2, 3 * np.pi / 4, np.pi], np.float64).astype(v.dtype)
        return (~np.isfinite(v)) | (v == 0) | np.isin(np.abs(v), k)


def special_mismatches(name: str, dtype: Any, device: Any) -> list[tuple]:
    """Special inputs (:func:`special_cases`) whose result C99 Annex F prescribes (zero,
    infinity, NaN, +-1, a multiple of pi/4 by NumPy's result) where clnp's result differs from
    NumPy's in the same dtype: another value, NaN-ness, or sign of zero.
    Returns ``[(inputs, clnp, numpy), ...]``."""
    fn = FUNCTIONS[name]
    d = np.dtype(dtype)
    xs = special_cases(fn, d)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.asarray(fn.ref(*xs)).astype(d)
    y = evaluate(fn, xs, device)
    bad = []
    for i in np.flatnonzero(_prescribed(want)):
        a, b = y[i], want[i]
        same = (np.isnan(a) and np.isnan(b)) or (a == b and np.signbit(a) == np.signbit(b))
        if not same:
            bad.append((tuple(x[i].item() for x in xs), a.item(), b.item()))
    return bad


def real_dtypes(device: Any) -> list[np.dtype]:
    """float16, float32 and float64 where the device has them (float16 is always there:
    clnp computes it in float and rounds each result)."""
    return [np.dtype(d) for d in ("float16", "float32", "float64")
            if device.supports(getattr(clnp, d))]


def complex_dtypes(device: Any) -> list[np.dtype]:
    return [np.dtype(d) for d in ("complex64", "complex128")
            if device.supports(getattr(clnp, d))]


# --------------------------------------------------------------------------------------------
# the table in docs/reliability.md



def _fmt(v: float) -> str:
    return "inf" if math.isinf(v) else (f"{v:.3f}" if v < 10 else f"{v:.1f}")


def table(results: list[Result]) -> str:
    """Markdown: one row per function and dtype."""
    order = {d: i for i, d in enumerate(("float16", "float32", "float64", "complex64",
                                         "complex128"))}
    rows = sorted(results, key=lambda r: (list(FUNCTIONS).index(r.name), order[r.dtype]))
    lines = [("| function | dtype | points | clnp max ULP | NumPy max ULP | bound | bound from "
              "| reference | clnp's worst input |"), "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        fn = FUNCTIONS[r.name]
        label = f"`{r.name}`" + (f" ({fn.note})" if fn.note else "")
        worst = ", ".join(f"{v:.9g}" for v in r.worst_input)
        flag = "" if r.ok else " **over**"
        lines.append(f"| {label} | {r.dtype} | {r.points} | {_fmt(r.max_ulp)}{flag} | "
                     f"{_fmt(r.numpy_ulp)} | {_fmt(r.bound)} | {r.source} | {r.reference} | "
                     f"{worst} |")
    return "\n".join(lines)


def run_all(device: Any, n: int, names: Sequence[str] | None = None,
            verbose: bool = True, dtypes: Sequence[str] | None = None) -> list[Result]:
    """Measure every function (or ``names``) in every dtype the device has (complex where clnp
    has it), or in those of ``dtypes`` the device has; progress on stderr if ``verbose``."""
    out = []
    for name in names or FUNCTIONS:
        fn = FUNCTIONS[name]
        dts = real_dtypes(device) + (complex_dtypes(device) if fn.complex else [])
        for d in dts:
            if dtypes and d.name not in dtypes:
                continue
            t = time.perf_counter()
            try:
                r = measure(name, d, device, n)
            except TypeError as e:         # no kernel for this dtype (e.g. erf in float16)
                if verbose:
                    print(f"{name:12s} {d.name:10s} n/a: {e}", file=sys.stderr)
                continue
            out.append(r)
            if verbose:
                print(f"{name:12s} {d.name:10s} {r.max_ulp:10.3f} ulp (bound {r.bound}) "
                      f"at {r.worst_input}  [{r.points} pts, {time.perf_counter() - t:.1f} s]"
                      + ("" if r.ok else "  OVER"), file=sys.stderr)
    return out


def write_doc(path: Path, text: str, block: str, title: str) -> None:
    """Replace the table between ``<!-- ulp-table:<block>:begin -->`` and ``...:end -->`` in
    ``path`` by ``text``; without such markers, append a section ``title`` holding them (so
    each kind of device, e.g. ``pocl`` or ``nvidia``, keeps its own table)."""
    begin, end = f"<!-- ulp-table:{block}:begin -->", f"<!-- ulp-table:{block}:end -->"
    doc = path.read_text()
    pat = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.DOTALL)
    if pat.search(doc):
        doc = pat.sub(lambda m: f"{begin}\n{text}\n{end}", doc)
    else:
        doc = doc.rstrip("\n") + f"\n\n### {title}\n\n{begin}\n{text}\n{end}\n"
    path.write_text(doc)


def header(device: Any, n: int, command: str, results: Sequence[Result]) -> str:
    """The paragraph above the table: device, driver, points, command, and the verdict."""
    cd = device.cl_device
    over = [f"{r.name} {r.dtype}" for r in results if not r.ok]
    verdict = ("Every row is within its bound." if not over else
               f"**Outside the bound: {', '.join(over)}.**")
    return (f"Measured on `{device.key}` ({device.name}; {device.platform_name}, "
            f"{cd.version.strip()}, driver {cd.driver_version.strip()}) on "
            f"{time.strftime('%Y-%m-%d', time.gmtime())}: {n} points drawn per function and "
            f"dtype (the points column counts those inside the function's domain), "
            f"`{command}`. {verdict}")


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: measure, print the Markdown table, optionally rewrite the docs' table.

    Returns 1 when a function is outside its bound (the table is printed and written anyway).
    """
    p = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        epilog="The device: --device, else CLNP_DEVICE (any spelling clnp.set_default_device "
               "takes, e.g. CLNP_DEVICE=nvidia:0), else clnp's default (the first GPU, else the "
               "first device).")
    p.add_argument("-n", type=int, default=200000, help="points per function and dtype "
                   "(default 200000)")
    p.add_argument("--device", default=None, help="device spec, e.g. pocl:0 or nvidia:0")
    p.add_argument("--only", nargs="*", help="function names (default: all)")
    p.add_argument("--dtypes", nargs="*", help="dtypes, e.g. float32 float64 (default: every "
                   "one the device has)")
    p.add_argument("--markdown", action="store_true", help="print only the Markdown table on "
                   "stdout (no progress lines on stderr)")
    p.add_argument("--write", action="store_true", help="rewrite this kind of device's "
                   "table in docs/reliability.md (markers ulp-table:<vendor>:begin/end; a new "
                   "section at the end where there is none)")
    a = p.parse_args(argv)
    dev = clnp._runtime.device.select_device(a.device) if a.device else clnp.default_device()
    res = run_all(dev, a.n, a.only, verbose=not a.markdown, dtypes=a.dtypes)
    cmd = ["python tools/ulp.py", f"-n {a.n}"]
    cmd += ["--only " + " ".join(a.only)] if a.only else []
    cmd += ["--dtypes " + " ".join(a.dtypes)] if a.dtypes else []
    cmd += ["--write"] if a.write else ["--markdown"]
    text = header(dev, a.n, " ".join(cmd), res) + "\n\n" + table(res)
    print(text)
    if a.write:
        write_doc(Path(__file__).resolve().parents[1] / "docs" / "reliability.md", text,
                  dev.vendor_key, f"Accuracy table: {dev.name}")
    return 0 if all(r.ok for r in res) else 1


if __name__ == "__main__":
    sys.exit(main())
