"""OpenCL C helper functions for elementwise kernels.

Elementwise kernels are generated as text; whenever an operation needs more than a C operator
or an OpenCL builtin (NumPy's floor division, Python-style remainder, shifts without undefined
behaviour, complex arithmetic and the complex elementary functions with the C99 Annex G / Array
API special cases, ...) the kernel calls a helper named ``clnp_<helper>_<ctype>`` and asks
:func:`render_helpers` for the definitions::

    render_helpers([("floordiv", "int"), ("cexp", "double2")])

returns the C source of ``clnp_floordiv_int``, ``clnp_cexp_double2`` and of every helper they
call, each exactly once and in dependency order.  The caller is responsible for the
``cl_khr_fp64`` pragma when any ``double``/``double2`` helper is requested (helpers for
``double`` are only emitted when asked for, directly or through a dependency of a ``double``
helper).

C types: signed ``char short int long``, unsigned ``uchar ushort uint ulong``, real
``float double``, complex ``float2 double2`` (``.x`` is the real part, ``.y`` the imaginary
part).  All helpers are scalar ``inline`` functions in OpenCL C 1.2 (no recursion, no
``#include``, no ``printf``) and do not rely on ``-cl-fast-relaxed-math``.  Floating-point
helpers start with ``#pragma OPENCL FP_CONTRACT OFF`` so that the compiler does not fuse
``a*b - c*d`` into an FMA (OpenCL contracts by default): results then match NumPy's (e.g.
``z * conj(z)`` has an exactly zero imaginary part); helpers that want an FMA call ``fma``.

Semantics (NumPy 2 is the reference; the Array API standard (2025.12) special cases win where
they disagree):

``floordiv`` (all integer types, ``float``, ``double``)
    Integers: floor division, ``x // 0 == 0`` (NumPy), ``MIN // -1`` wraps to ``MIN`` (no trap).
    Floats: NumPy's ``divmod``-based algorithm (exact floor of the true quotient, e.g.
    ``-1e-300 // 1e300 == -1``) plus the standard's special cases: ``x // ±0`` is ``±inf``/NaN
    by the sign rules, ``±inf // finite`` is a signed infinity (NumPy: NaN) and
    ``finite // ±inf`` is a signed zero: ``5 // -inf == -0`` and ``-5 // inf == -0``
    (NumPy: -1.0).
``remainder`` (all integer types, ``float``, ``double``)
    Result has the sign of the divisor (Python ``%``); integers: ``x % 0 == 0``,
    ``MIN % -1 == 0``; floats: NumPy's algorithm, which matches every special case of the
    standard (``x % ±0`` and ``±inf % y`` are NaN, ``5 % -inf == -inf``, ``-0 % 3 == +0`` ...).
``ipow`` (all integer types)
    Power by squaring with wrap-around.  A negative exponent (where NumPy raises) gives 0,
    except for base 1 (-> 1) and base -1 (-> 1 or -1 by the exponent's parity).
``shl``, ``shr`` (all integer types)
    NumPy semantics without C undefined behaviour: a shift count outside ``[0, bits)``
    (negative counts included, as NumPy treats them as huge unsigned counts) gives 0, or -1
    for a right shift of a negative value.  Right shifts of negative values are arithmetic.
``sign`` (all integer types, ``float``, ``double``)
    -1/0/+1; floats: ``sign(±0) == +0`` (NumPy and the standard), ``sign(NaN)`` is NaN.
``maximum``, ``minimum`` (all integer types, ``float``, ``double``)
    NaN-propagating (either NaN -> NaN); the choice between ``-0`` and ``+0`` is unspecified.
``logaddexp`` (``float``, ``double``)
    ``log(exp(a) + exp(b))`` without overflow; ``(-inf, -inf) -> -inf``, ``(+inf, x) -> +inf``
    for any non-NaN x, NaN -> NaN.
Complex (``float2``, ``double2``)
    ``cmul`` (textbook formula, as NumPy), ``cdiv`` (Smith's algorithm, as NumPy), ``cabs``
    and ``carg`` (real results), ``cconj``, ``csquare`` (``cmul(z, z)``; NumPy may use an FMA),
    ``creciprocal`` (NumPy's algorithm, except ``1/0j == inf + nan j`` like ``cdiv``, where
    NumPy's ``reciprocal`` gives ``nan + nan j``), ``csign`` (``z/|z|``, 0 for 0, NaN + NaN j if either part is NaN;
    NumPy returns ``1 + 0j`` for ``inf + nan j``), ``cexp``, ``cexpm1``, ``clog``, ``clog1p``,
    ``clog2``, ``clog10``, ``csqrt``, ``cpow`` (NumPy's algorithm: ``z**0 == 1``,
    ``0**w`` is 0 for ``Re(w) > 0`` and NaN otherwise, integral real exponents in (-100, 100)
    by repeated multiplication, ``exp(w*log(z))`` otherwise), ``csin``, ``ccos``, ``ctan``,
    ``csinh``, ``ccosh``, ``ctanh``, ``casin``, ``cacos``, ``catan``, ``casinh``, ``cacosh``,
    ``catanh``: C99 Annex G special values as listed by the Array API standard (where the
    standard fixes a value that C99 leaves to ``sin(2y)``, e.g. ``tanh(+inf + 2j) == 1 + 0j``,
    the standard is followed; ``acosh(+0 + nan j) == nan + pi/2 j`` as in the standard).
    The inverse functions use the algorithm of Hull, Fairgrieve and Tang (ACM TOMS 23(3),
    1997) for casinh/cacos and the classical ``log1p`` formulation for catanh; ``clog`` and
    ``clog1p`` compute ``|z|^2 - 1`` with error-free transformations near the unit circle;
    ``cexpm1``/``clog1p`` are accurate for tiny ``|z|``.
``isinf_c``, ``isnan_c``, ``isfinite_c`` (``float2``, ``double2``): ``int`` results.
"""
from __future__ import annotations

import functools
import math
import re
import struct
from dataclasses import dataclass
from string import Template
from typing import Callable, Iterable

__all__ = ["render_helpers", "helper_name", "HELPER_NAMES", "HELPER_TYPES"]

SIGNED = ("char", "short", "int", "long")
UNSIGNED = ("uchar", "ushort", "uint", "ulong")
INTS = SIGNED + UNSIGNED
REALS = ("float", "double")
COMPLEX = ("float2", "double2")

_BITS = {"char": 8, "uchar": 8, "short": 16, "ushort": 16, "int": 32, "uint": 32,
         "long": 64, "ulong": 64}
# unsigned type wide enough that its arithmetic is never promoted to (signed) int
_WRAP = {t: ("ulong" if _BITS[t] == 64 else "uint") for t in INTS}
_REAL_OF = {"float2": "float", "double2": "double", "float": "float", "double": "double"}


def helper_name(name: str, ctype: str) -> str:
    """C function name of helper ``name`` for C type ``ctype``: ``clnp_<name>_<ctype>``."""
    return f"clnp_{name}_{ctype}"


# --------------------------------------------------------------------------------------------
# floating-point constants and literals

def _f32(v: float) -> float:
    return struct.unpack("f", struct.pack("f", v))[0]


@dataclass(frozen=True)
class _Real:
    R: str
    mant: int        # significand bits (incl. the implicit one)
    emax: int        # largest exponent: MAX = (2 - 2**(1-mant)) * 2**emax
    emin: int        # smallest normal exponent: MIN = 2**emin

    def lit(self, v: float) -> str:
        if math.isinf(v) or math.isnan(v):
            raise ValueError(v)
        if self.R == "float":
            return repr(_f32(v)) + "f"
        return repr(v)

    @property
    def eps(self) -> float:
        return 2.0 ** (1 - self.mant)

    @property
    def max(self) -> float:
        return (2.0 - 2.0 ** (1 - self.mant)) * 2.0 ** self.emax

    @functools.cached_property
    def consts(self) -> dict[str, str]:
        L, eps = self.lit, self.eps
        pio2_hi = _f32(math.pi / 2) if self.R == "float" else math.pi / 2
        pio2_lo = (math.pi / 2 - pio2_hi) if self.R == "float" else 6.123233995736766e-17
        # exp(x) is finite for x < EXP_OVF (double: 709.78, float: 88.72)
        exp_ovf = 709.0 if self.R == "double" else 88.0
        return {
            "R": self.R, "R4": self.R + "4",
            "INF": f"(({self.R})INFINITY)", "NAN": f"(({self.R})NAN)",
            "PI": L(math.pi), "PI_2": L(math.pi / 2), "PI_4": L(math.pi / 4),
            "PIO2_HI": L(pio2_hi), "PIO2_LO": L(pio2_lo),
            "LN2": L(math.log(2)), "LOG2E": L(1 / math.log(2)), "LOG10E": L(1 / math.log(10)),
            "EPS": L(eps), "RECIP_EPS": L(1 / eps), "TWO_OVER_EPS": L(2 / eps),
            "FOUR_OVER_EPS2": L(4 / eps / eps),
            "EPS2_128": L(eps * eps / 128), "EPS_128": L(eps / 128),
            "SQRT6EPS_4": L(math.sqrt(6 * eps) / 4), "SQRT3EPS_2": L(math.sqrt(3 * eps) / 2),
            "MAX": L(self.max), "MAX_4": L(self.max / 4), "MIN": L(2.0 ** self.emin),
            # powers of two >= 4 * sqrt(MIN) and >= sqrt(MIN) (Hull et al.'s thresholds)
            "FOUR_SQRT_MIN": L(2.0 ** (self.emin // 2 + 2)), "SQRT_MIN": L(2.0 ** (self.emin // 2 + 1)),
            # scale factors for subnormal inputs: 2**S and 2**-S (S even), and log(2**S)
            "UP": L(2.0 ** (2 * ((self.mant + 1) // 2))),
            "DOWN_HALF": L(2.0 ** -((self.mant + 1) // 2)),
            "UP_LOG": L(2 * ((self.mant + 1) // 2) * math.log(2)),
            "TINY": L(2.0 ** (self.emin + 2)),
            "EXP_OVF": L(exp_ovf),
            # |x| above which tanh(x) rounds to +-1 and cosh/sinh ~ exp(|x|)/2
            "TANH_BIG": L(22.0 if self.R == "double" else 10.0),
            # clog1p: below this |z|^2 cannot overflow
            "L1P_BIG": L(2.0 ** (self.emax // 2 - 12)),
        }


_REAL = {"float": _Real("float", 24, 127, -126), "double": _Real("double", 53, 1023, -1022)}

_FLOAT_LIT = re.compile(
    r"(?<![\w.])(0[xX][0-9a-fA-F]*\.?[0-9a-fA-F]*[pP][-+]?\d+|\d+\.\d*(?:[eE][-+]?\d+)?"
    r"|\d+[eE][-+]?\d+)(?![\w.])")


def _suffix_float_literals(src: str) -> str:
    """Give every unsuffixed floating literal an ``f`` suffix (single-precision templates)."""
    return _FLOAT_LIT.sub(lambda m: m.group(1) + "f", src)


# --------------------------------------------------------------------------------------------
# registry

@dataclass(frozen=True)
class _Helper:
    name: str
    types: tuple[str, ...]
    render: Callable[[str, dict[str, str]], str]   # (ctype, names) -> C source
    deps: tuple[tuple[str, str], ...]              # (helper, 'same' | 'real')
    public: bool = True


_REGISTRY: dict[str, _Helper] = {}


def _resolve(kind: str, ctype: str) -> str:
    return ctype if kind == "same" else _REAL_OF[ctype]


def _register(name: str, types: Iterable[str], render, deps=(), public=True) -> None:
    _REGISTRY[name] = _Helper(name, tuple(types), render, tuple(deps), public)


def _template(name: str, types: Iterable[str], body: str, deps=(), public=True) -> None:
    """Register a floating-point helper given as a ``string.Template`` text.

    Placeholders: ``${fn}`` (this helper's C name), ``${T}`` (the C type), ``${R}``/``${R4}``
    (its real type / 4-vector), the constants of :attr:`_Real.consts`, and one placeholder per
    dependency named after it (``${clog}`` -> ``clnp_clog_double2``).  Unsuffixed floating
    literals become ``float`` literals in the ``float``/``float2`` renderings.
    """
    tmpl_f = Template(_suffix_float_literals(body))
    tmpl_d = Template(body)

    def render(ctype: str, names: dict[str, str]) -> str:
        R = _REAL_OF[ctype]
        mapping = dict(_REAL[R].consts, T=ctype, **names)
        return (tmpl_f if R == "float" else tmpl_d).substitute(mapping)

    _register(name, types, render, deps, public)


def _dep_order(needed: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    order: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for root in needed:
        root = (str(root[0]), str(root[1]))
        if root in seen:
            continue
        # iterative post-order DFS (dependency graphs are tiny and acyclic)
        stack: list[tuple[tuple[str, str], bool]] = [(root, False)]
        while stack:
            key, expanded = stack.pop()
            if expanded:
                if key not in seen:
                    seen.add(key)
                    order.append(key)
                continue
            if key in seen:
                continue
            name, ctype = key
            h = _REGISTRY.get(name)
            if h is None:
                raise KeyError(f"unknown clnp helper {name!r}")
            if ctype not in h.types:
                raise TypeError(f"clnp helper {name!r} is not defined for C type {ctype!r} "
                                f"(defined for {', '.join(h.types)})")
            stack.append((key, True))
            for dname, kind in reversed(h.deps):
                dkey = (dname, _resolve(kind, ctype))
                if dkey not in seen:
                    stack.append((dkey, False))
    return order


def render_helpers(needed: Iterable[tuple[str, str]]) -> str:
    """C source defining every helper in ``needed`` plus its dependencies exactly once.

    ``needed`` holds ``(helper_name, ctype)`` pairs such as ``("floordiv", "int")`` or
    ``("cexp", "float2")``; duplicates are fine.  Definitions come in dependency order and are
    named ``clnp_<helper_name>_<ctype>``.  Raises ``KeyError`` for an unknown helper and
    ``TypeError`` for a C type the helper does not support.
    """
    parts = []
    for name, ctype in _dep_order(needed):
        h = _REGISTRY[name]
        names = {"fn": helper_name(name, ctype)}
        for dname, kind in h.deps:
            names[dname] = helper_name(dname, _resolve(kind, ctype))
        parts.append(h.render(ctype, names).strip("\n") + "\n")
    return "\n".join(parts)


# --------------------------------------------------------------------------------------------
# integer helpers

def _int_floordiv(t: str, n: dict[str, str]) -> str:
    if t in UNSIGNED:
        return f"""inline {t} {n['fn']}({t} a, {t} b) {{
    return b == 0 ? ({t})0 : ({t})(a / b);
}}"""
    u = _WRAP[t]
    return f"""inline {t} {n['fn']}({t} a, {t} b) {{
    /* NumPy: x // 0 == 0; MIN // -1 wraps to MIN (negate in unsigned arithmetic, no UB) */
    if (b == 0) return ({t})0;
    if (b == -1) return ({t})(({u})0 - ({u})a);
    {t} q = ({t})(a / b);
    if ((({t})(a % b) != 0) && ((a < 0) != (b < 0))) q -= 1;
    return q;
}}"""


def _int_remainder(t: str, n: dict[str, str]) -> str:
    if t in UNSIGNED:
        return f"""inline {t} {n['fn']}({t} a, {t} b) {{
    return b == 0 ? ({t})0 : ({t})(a % b);
}}"""
    return f"""inline {t} {n['fn']}({t} a, {t} b) {{
    /* Python semantics (sign of the divisor); x % 0 == 0 and x % -1 == 0 (no MIN % -1 UB) */
    if (b == 0 || b == -1) return ({t})0;
    {t} r = ({t})(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}}"""


def _int_ipow(t: str, n: dict[str, str]) -> str:
    u = _WRAP[t]
    neg = ""
    if t in SIGNED:
        neg = f"""    /* negative exponent (NumPy raises): 1 for base 1, +-1 for base -1, else 0 */
    if (b < 0) return a == 1 ? ({t})1 : (a == -1 ? ((b & 1) ? ({t})-1 : ({t})1) : ({t})0);
"""
    return f"""inline {t} {n['fn']}({t} a, {t} b) {{
{neg}    {u} base = ({u})a, r = 1, e = ({u})b;
    while (e != 0) {{
        if (e & 1) r *= base;
        e >>= 1;
        if (e != 0) base *= base;
    }}
    return ({t})r;
}}"""


def _int_shl(t: str, n: dict[str, str]) -> str:
    bits, u = _BITS[t], _WRAP[t]
    neg = "b < 0 || " if t in SIGNED else ""
    return f"""inline {t} {n['fn']}({t} a, {t} b) {{
    /* counts outside [0, {bits}) give 0 (NumPy); shift in unsigned arithmetic (no UB) */
    if ({neg}b >= {bits}) return ({t})0;
    return ({t})(({u})a << b);
}}"""


def _int_shr(t: str, n: dict[str, str]) -> str:
    bits = _BITS[t]
    if t in UNSIGNED:
        return f"""inline {t} {n['fn']}({t} a, {t} b) {{
    if (b >= {bits}) return ({t})0;
    return ({t})(a >> b);
}}"""
    return f"""inline {t} {n['fn']}({t} a, {t} b) {{
    /* counts outside [0, {bits}) give 0 or -1 by the sign of a (NumPy); arithmetic shift of a
       negative value written without implementation-defined behaviour */
    if (b < 0 || b >= {bits}) return a < 0 ? ({t})-1 : ({t})0;
    return a < 0 ? ({t})(~((~a) >> b)) : ({t})(a >> b);
}}"""


def _int_sign(t: str, n: dict[str, str]) -> str:
    if t in UNSIGNED:
        return f"inline {t} {n['fn']}({t} a) {{ return ({t})(a != 0); }}"
    return f"inline {t} {n['fn']}({t} a) {{ return ({t})((a > 0) - (a < 0)); }}"


def _int_minmax(fn: str):
    def render(t: str, n: dict[str, str]) -> str:
        return f"inline {t} {n['fn']}({t} a, {t} b) {{ return {fn}(a, b); }}"
    return render


_INT_RENDER = {"floordiv": _int_floordiv, "remainder": _int_remainder, "ipow": _int_ipow,
               "shl": _int_shl, "shr": _int_shr, "sign": _int_sign,
               "maximum": _int_minmax("max"), "minimum": _int_minmax("min")}

_REAL_SRC: dict[str, str] = {}

_REAL_SRC["floordiv"] = r"""
inline ${R} ${fn}(${R} a, ${R} b) {
    #pragma OPENCL FP_CONTRACT OFF
    if (isnan(a) || isnan(b)) return ${NAN};
    if (b == 0) return a / b;                  /* +-inf, or NaN for 0 // 0 */
    if (isinf(a)) return isinf(b) ? ${NAN} : a / b;   /* standard: +-inf (NumPy: NaN) */
    if (isinf(b)) return a / b;                /* standard: signed zero (NumPy: -1 or 0) */
    /* NumPy's npy_divmod: exact floor of the true quotient */
    ${R} m = fmod(a, b);
    ${R} d = (a - m) / b;
    if (m != 0 && ((b < 0) != (m < 0))) d -= 1;
    if (d == 0) return copysign((${R})0, a / b);
    ${R} f = floor(d);
    if (d - f > 0.5) f += 1;
    return f;
}
"""

_REAL_SRC["remainder"] = r"""
inline ${R} ${fn}(${R} a, ${R} b) {
    #pragma OPENCL FP_CONTRACT OFF
    /* NumPy's npy_remainder; it meets every special case of the standard */
    ${R} m = fmod(a, b);
    if (b == 0) return m;                      /* NaN */
    if (m != 0) {
        if ((b < 0) != (m < 0)) m += b;
    } else {
        m = copysign((${R})0, b);
    }
    return m;
}
"""

_REAL_SRC["sign"] = r"""
inline ${R} ${fn}(${R} a) {
    return a > 0 ? (${R})1 : (a < 0 ? (${R})-1 : (a == 0 ? (${R})0 : a));
}
"""

_REAL_SRC["maximum"] = r"""
inline ${R} ${fn}(${R} a, ${R} b) {
    /* x != x rather than isnan(): PoCL does not inline isnan, which made reductions 3x slower */
    if (a != a || b != b) return a + b;
    return a > b ? a : b;
}
"""

_REAL_SRC["minimum"] = r"""
inline ${R} ${fn}(${R} a, ${R} b) {
    /* x != x rather than isnan(): PoCL does not inline isnan, which made reductions 3x slower */
    if (a != a || b != b) return a + b;
    return a < b ? a : b;
}
"""

_REAL_SRC["logaddexp"] = r"""
inline ${R} ${fn}(${R} a, ${R} b) {
    #pragma OPENCL FP_CONTRACT OFF
    if (a == b) return a + ${LN2};            /* also (+-inf, +-inf) */
    ${R} d = a - b;
    if (d > 0) return a + log1p(exp(-d));
    if (d <= 0) return b + log1p(exp(d));
    return d;                                  /* NaN */
}
"""


def _register_scalar(name: str) -> None:
    """Register a helper defined for integer types (Python renderer in ``_INT_RENDER``)
    and/or real types (template in ``_REAL_SRC``)."""
    int_render = _INT_RENDER.get(name)
    real_src = _REAL_SRC.get(name)
    real_tmpl = None
    if real_src is not None:
        real_tmpl = {"float": Template(_suffix_float_literals(real_src)),
                     "double": Template(real_src)}

    def render(ctype: str, names: dict[str, str]) -> str:
        if ctype in INTS:
            return int_render(ctype, names)
        return real_tmpl[ctype].substitute(dict(_REAL[ctype].consts, T=ctype, **names))

    _register(name, (INTS if int_render else ()) + (REALS if real_src else ()), render)


for _name in ("floordiv", "remainder", "ipow", "shl", "shr", "sign", "maximum", "minimum",
              "logaddexp"):
    _register_scalar(_name)


# --------------------------------------------------------------------------------------------
# complex helpers

_template("cconj", COMPLEX, r"""
inline ${T} ${fn}(${T} z) { return (${T})(z.x, -z.y); }
""")

_template("isinf_c", COMPLEX, r"""
inline int ${fn}(${T} z) { return isinf(z.x) || isinf(z.y); }
""")

_template("isnan_c", COMPLEX, r"""
inline int ${fn}(${T} z) { return isnan(z.x) || isnan(z.y); }
""")

_template("isfinite_c", COMPLEX, r"""
inline int ${fn}(${T} z) { return isfinite(z.x) && isfinite(z.y); }
""")

_template("cabs", COMPLEX, r"""
inline ${R} ${fn}(${T} z) { return hypot(z.x, z.y); }
""")

_template("carg", COMPLEX, r"""
inline ${R} ${fn}(${T} z) { return atan2(z.y, z.x); }
""")

# NumPy's formula (no C99 Annex G infinity recovery)
_template("cmul", COMPLEX, r"""
inline ${T} ${fn}(${T} a, ${T} b) {
    #pragma OPENCL FP_CONTRACT OFF
    return (${T})(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
""")

_template("csquare", COMPLEX, r"""
inline ${T} ${fn}(${T} z) {
    #pragma OPENCL FP_CONTRACT OFF
    return (${T})(z.x * z.x - z.y * z.y, z.x * z.y + z.y * z.x);
}
""")

# Smith's algorithm, as NumPy
_template("cdiv", COMPLEX, r"""
inline ${T} ${fn}(${T} a, ${T} b) {
    #pragma OPENCL FP_CONTRACT OFF
    ${R} abr = fabs(b.x), abi = fabs(b.y);
    if (abr >= abi) {
        if (abr == 0 && abi == 0) return (${T})(a.x / abr, a.y / abi);
        ${R} rat = b.y / b.x;
        ${R} scl = 1.0 / (b.x + b.y * rat);
        return (${T})((a.x + a.y * rat) * scl, (a.y - a.x * rat) * scl);
    }
    ${R} rat = b.x / b.y;
    ${R} scl = 1.0 / (b.y + b.x * rat);
    return (${T})((a.x * rat + a.y) * scl, (a.y * rat - a.x) * scl);
}
""")

# NumPy's reciprocal (so 1/(1+0j) == 1-0j); 1/0 gives inf + nan j like cdiv (NumPy: nan + nan j)
_template("creciprocal", COMPLEX, r"""
inline ${T} ${fn}(${T} z) {
    #pragma OPENCL FP_CONTRACT OFF
    if (z.x == 0 && z.y == 0) return (${T})(${INF}, ${NAN});
    if (fabs(z.y) <= fabs(z.x)) {
        ${R} r = z.y / z.x, d = z.x + z.y * r;
        return (${T})(1 / d, -r / d);
    }
    ${R} r = z.x / z.y, d = z.x * r + z.y;
    return (${T})(r / d, -1 / d);
}
""")

_template("csign", COMPLEX, r"""
inline ${T} ${fn}(${T} z) {
    #pragma OPENCL FP_CONTRACT OFF
    ${R} x = z.x, y = z.y;
    if (isnan(x) || isnan(y)) return (${T})(${NAN}, ${NAN});
    if (x == 0 && y == 0) return (${T})(0, 0);
    if (isinf(x) || isinf(y)) {
        if (isinf(x) && isinf(y)) return (${T})(${NAN}, ${NAN});
        return isinf(x) ? (${T})(copysign((${R})1, x), copysign((${R})0, y))
                        : (${T})(copysign((${R})0, x), copysign((${R})1, y));
    }
    ${R} m = fmax(fabs(x), fabs(y));
    if (m > ${MAX_4}) { x *= 0.25; y *= 0.25; }
    else if (m < ${TINY}) { x *= ${UP}; y *= ${UP}; }
    ${R} h = hypot(x, y);
    return (${T})(x / h, y / h);
}
""")

_template("cexp", COMPLEX, r"""
inline ${T} ${fn}(${T} z) {
    #pragma OPENCL FP_CONTRACT OFF
    ${R} x = z.x, y = z.y;
    if (y == 0) {                             /* real axis, incl. +-inf and NaN real parts */
        if (x > ${EXP_OVF} && x < ${INF}) {   /* PoCL: exp(x) = inf below its limit */
            ${R} h = exp(0.5 * x);
            return (${T})(h * h, y);
        }
        return (${T})(exp(x), y);
    }
    if (isinf(x)) {
        if (isfinite(y)) {
            ${R} c;
            ${R} s = sincos(y, &c);
            return x > 0 ? (${T})(x * c, x * s)
                         : (${T})(copysign((${R})0, c), copysign((${R})0, s));
        }
        return x > 0 ? (${T})(x, y - y) : (${T})(0, copysign((${R})0, y));
    }
    if (isnan(x) || !isfinite(y)) return (${T})(${NAN}, ${NAN});
    ${R} c;
    ${R} s = sincos(y, &c);
    if (x > ${EXP_OVF}) {                     /* exp(x) may overflow although the result does not */
        ${R} h = exp(0.5 * x);
        return (${T})((h * c) * h, (h * s) * h);
    }
    ${R} e = exp(x);
    return (${T})(e * c, e * s);
}
""")

_template("cexpm1", COMPLEX, r"""
inline ${T} ${fn}(${T} z) {
    #pragma OPENCL FP_CONTRACT OFF
    ${R} x = z.x, y = z.y;
    if (y == 0) return (${T})(x == 0 ? 0 : expm1(x), y);   /* standard: (+-0 + 0j) -> +0 + 0j */
    if (!isfinite(x) || !isfinite(y) || x > ${EXP_OVF}) {
        ${T} e = ${cexp}(z);
        return (${T})(e.x - 1, e.y);
    }
    /* exp(z) - 1 = (expm1(x) cos y - 2 sin^2(y/2)) + i exp(x) sin y */
    ${R} c;
    ${R} s = sincos(y, &c);
    ${R} h = sin(0.5 * y);
    return (${T})(expm1(x) * c - 2 * h * h, exp(x) * s);
}
""", deps=[("cexp", "same")])

# |z|^2 - 1 for mx >= mn >= 0 near the unit circle, with error-free transformations
_template("k_x2y2m1", REALS, r"""
inline ${R} ${fn}(${R} mx, ${R} mn) {
    #pragma OPENCL FP_CONTRACT OFF
    ${R} p1 = mx * mx, e1 = fma(mx, mx, -p1);
    ${R} p2 = mn * mn, e2 = fma(mn, mn, -p2);
    ${R} s = p1 - 1, bb = s - p1;
    ${R} r1 = (p1 - (s - bb)) + (-1 - bb);
    ${R} t = s + p2;
    bb = t - s;
    ${R} r2 = (s - (t - bb)) + (p2 - bb);
    return t + (((r1 + r2) + e1) + e2);
}
""", public=False)

_template("clog", COMPLEX, r"""
inline ${T} ${fn}(${T} z) {
    #pragma OPENCL FP_CONTRACT OFF
    ${R} x = z.x, y = z.y;
    if (isnan(x) || isnan(y)) {
        if (isinf(x) || isinf(y)) return (${T})(${INF}, ${NAN});
        return (${T})(${NAN}, ${NAN});
    }
    ${R} ax = fabs(x), ay = fabs(y);
    ${R} mx = fmax(ax, ay), mn = fmin(ax, ay);
    ${R} re;
    if (isinf(mx)) re = ${INF};
    else if (mx == 0) re = -${INF};
    else if (mx > ${MAX_4}) re = log(hypot(0.5 * ax, 0.5 * ay)) + ${LN2};
    else if (mx < ${TINY}) re = log(hypot(ax * ${UP}, ay * ${UP})) - ${UP_LOG};
    else {
        ${R} h = hypot(ax, ay);
        if (h > 0.71 && h < 1.73) re = 0.5 * log1p(${k_x2y2m1}(mx, mn));
        else re = log(h);
    }
    return (${T})(re, atan2(y, x));
}
""", deps=[("k_x2y2m1", "real")])

_template("clog2", COMPLEX, r"""
inline ${T} ${fn}(${T} z) {
    ${T} w = ${clog}(z);
    return (${T})(w.x * ${LOG2E}, w.y * ${LOG2E});
}
""", deps=[("clog", "same")])

_template("clog10", COMPLEX, r"""
inline ${T} ${fn}(${T} z) {
    ${T} w = ${clog}(z);
    return (${T})(w.x * ${LOG10E}, w.y * ${LOG10E});
}
""", deps=[("clog", "same")])

_template("clog1p", COMPLEX, r"""
inline ${T} ${fn}(${T} z) {
    #pragma OPENCL FP_CONTRACT OFF
    ${R} x = z.x, y = z.y;
    if (!isfinite(x) || !isfinite(y)) return ${clog}((${T})(x + 1, y));
    if (y == 0 && x >= -1) return (${T})(log1p(x), y);
    /* for x <= -0.5 (and moderate |x|) 1 + x is exact and clog is accurate */
    if (x <= -0.5 || fmax(fabs(x), fabs(y)) > ${L1P_BIG}) return ${clog}((${T})(x + 1, y));
    /* |1 + z|^2 - 1 = 2x + x^2 + y^2 (>= -0.75 here) with error-free transformations */
    ${R} p1 = x * x, e1 = fma(x, x, -p1);
    ${R} p2 = y * y, e2 = fma(y, y, -p2);
    ${R} a = 2 * x;
    ${R} s = a + p1, bb = s - a;
    ${R} r1 = (a - (s - bb)) + (p1 - bb);
    ${R} t = s + p2;
    bb = t - s;
    ${R} r2 = (s - (t - bb)) + (p2 - bb);
    ${R} w = t + (((r1 + r2) + e1) + e2);
    return (${T})(0.5 * log1p(w), atan2(y, 1 + x));
}
""", deps=[("clog", "same")])

_template("csqrt", COMPLEX, r"""
inline ${T} ${fn}(${T} z) {
    #pragma OPENCL FP_CONTRACT OFF
    ${R} a = z.x, b = z.y;
    if (isinf(b)) return (${T})(${INF}, b);
    if (isnan(a)) return (${T})(a, a);
    if (isinf(a)) {
        if (a > 0) return (${T})(a, isnan(b) ? b : copysign((${R})0, b));
        return (${T})(isnan(b) ? b : (${R})0, copysign(${INF}, b));
    }
    if (isnan(b)) return (${T})(b, b);
    if (a == 0 && b == 0) return (${T})(0, b);
    ${R} post = 1;
    ${R} m = fmax(fabs(a), fabs(b));
    if (m > ${MAX_4}) { a *= 0.25; b *= 0.25; post = 2; }
    else if (m < ${TINY}) { a *= ${UP}; b *= ${UP}; post = ${DOWN_HALF}; }
    ${R} t = sqrt(0.5 * (fabs(a) + hypot(a, b)));
    if (a >= 0) return (${T})(t * post, (b / (2 * t)) * post);
    return (${T})((fabs(b) / (2 * t)) * post, copysign(t, b) * post);
}
""")

_template("cpow", COMPLEX, r"""
inline ${T} ${fn}(${T} a, ${T} b) {
    #pragma OPENCL FP_CONTRACT OFF
    ${R} br = b.x, bi = b.y;
    if (br == 0 && bi == 0) return (${T})(1, 0);
    if (a.x == 0 && a.y == 0) return br > 0 ? (${T})(0, 0) : (${T})(${NAN}, ${NAN});
    if (bi == 0 && br > -100 && br < 100 && br == rint(br)) {
        int n = (int)br;
        if (n == 1) return a;
        if (n == 2) return ${cmul}(a, a);
        if (n == 3) return ${cmul}(a, ${cmul}(a, a));
        int m = n < 0 ? -n : n;
        ${T} acc = (${T})(1, 0), p = a;
        for (;;) {
            if (m & 1) acc = ${cmul}(acc, p);
            m >>= 1;
            if (m == 0) break;
            p = ${cmul}(p, p);
        }
        return n < 0 ? ${cdiv}((${T})(1, 0), acc) : acc;
    }
    ${T} l = ${clog}(a);
    return ${cexp}((${T})(l.x * br - l.y * bi, l.x * bi + l.y * br));
}
""", deps=[("cmul", "same"), ("cdiv", "same"), ("clog", "same"), ("cexp", "same")])

_template("csinh", COMPLEX, r"""
inline ${T} ${fn}(${T} z) {
    #pragma OPENCL FP_CONTRACT OFF
    ${R} x = z.x, y = z.y;
    if (isfinite(x) && isfinite(y)) {
        if (y == 0) return (${T})(sinh(x), y);
        ${R} c;
        ${R} s = sincos(y, &c);
        if (fabs(x) < ${EXP_OVF}) return (${T})(sinh(x) * c, cosh(x) * s);
        ${R} h = exp(0.5 * fabs(x)), hh = 0.5 * h;
        return (${T})((copysign(hh, x) * c) * h, (hh * s) * h);
    }
    if (isinf(x)) {
        if (y == 0) return (${T})(x, y);
        if (isfinite(y)) {
            ${R} c;
            ${R} s = sincos(y, &c);
            return (${T})(x * c, ${INF} * s);
        }
        return (${T})(x, y - y);
    }
    if (isnan(x)) return y == 0 ? (${T})(x, y) : (${T})(x, x);
    return x == 0 ? (${T})(x, y - y) : (${T})(y - y, y - y);   /* x finite, y inf or NaN */
}
""")

_template("ccosh", COMPLEX, r"""
inline ${T} ${fn}(${T} z) {
    #pragma OPENCL FP_CONTRACT OFF
    ${R} x = z.x, y = z.y;
    if (isfinite(x) && isfinite(y)) {
        if (y == 0) return (${T})(cosh(x), copysign((${R})0, x) * y);
        ${R} c;
        ${R} s = sincos(y, &c);
        if (fabs(x) < ${EXP_OVF}) return (${T})(cosh(x) * c, sinh(x) * s);
        ${R} h = exp(0.5 * fabs(x)), hh = 0.5 * h;
        return (${T})((hh * c) * h, (copysign(hh, x) * s) * h);
    }
    if (isinf(x)) {
        if (y == 0) return (${T})(${INF}, copysign((${R})0, x) * y);
        if (isfinite(y)) {
            ${R} c;
            ${R} s = sincos(y, &c);
            return (${T})(${INF} * c, x * s);
        }
        return (${T})(${INF}, y - y);
    }
    if (isnan(x)) return y == 0 ? (${T})(x, y) : (${T})(x, x);
    /* x finite, y inf or NaN: NaN + 0j for x == 0 (sign unspecified; +0 as glibc) */
    return x == 0 ? (${T})(y - y, 0) : (${T})(y - y, y - y);
}
""")

_template("ctanh", COMPLEX, r"""
inline ${T} ${fn}(${T} z) {
    #pragma OPENCL FP_CONTRACT OFF
    ${R} x = z.x, y = z.y;
    if (isnan(x)) return y == 0 ? (${T})(x, y) : (${T})(x, x);
    if (isinf(x)) return (${T})(copysign((${R})1, x), copysign((${R})0, y));
    if (!isfinite(y)) return x == 0 ? (${T})(x, y - y) : (${T})(y - y, y - y);
    if (fabs(x) > ${TANH_BIG}) {
        ${R} e = exp(-fabs(x)), c;
        ${R} s = sincos(y, &c);
        return (${T})(copysign((${R})1, x), 4 * s * c * e * e);
    }
    /* Kahan: t = tan y, beta = 1 + t^2, s = sinh x, rho = sqrt(1 + s^2) */
    ${R} t = tan(y);
    ${R} beta = 1 + t * t;
    ${R} s = sinh(x);
    ${R} rho = sqrt(1 + s * s);
    ${R} den = 1 + beta * s * s;
    return (${T})((beta * rho * s) / den, t / den);
}
""")

_template("csin", COMPLEX, r"""
inline ${T} ${fn}(${T} z) { return ${csinh}(z.yx).yx; }
""", deps=[("csinh", "same")])

_template("ccos", COMPLEX, r"""
inline ${T} ${fn}(${T} z) { return ${ccosh}((${T})(-z.y, z.x)); }
""", deps=[("ccosh", "same")])

_template("ctan", COMPLEX, r"""
inline ${T} ${fn}(${T} z) { return ${ctanh}(z.yx).yx; }
""", deps=[("ctanh", "same")])

# f(a, b) = (hypot(a, b) - b) / 2 without cancellation; h = hypot(a, b)
_template("k_hf", REALS, r"""
inline ${R} ${fn}(${R} a, ${R} b, ${R} h) {
    #pragma OPENCL FP_CONTRACT OFF
    if (b < 0) return 0.5 * (h - b);
    if (b == 0) return 0.5 * a;
    return 0.5 * (a * a / (h + b));
}
""", public=False)

# Hull, Fairgrieve & Tang: for 0 <= x, y < 1/eps returns (Re casinh(x + iy), B, sqrtA2my2, ny)
# where B = y/A if usable (Im = asin(B)), else B = -1 and Im = atan2(ny, sqrtA2my2).
_template("k_hull", COMPLEX, r"""
inline ${R4} ${fn}(${R} x, ${R} y) {
    #pragma OPENCL FP_CONTRACT OFF
    ${R} Rp = hypot(x, y + 1), Sm = hypot(x, y - 1);
    ${R} A = 0.5 * (Rp + Sm);
    if (A < 1) A = 1;
    ${R} rx, sq = 0, ny = y, B = -1;
    if (A < 10) {
        if (y == 1 && x < ${EPS2_128}) {
            rx = sqrt(x);
        } else if (x >= ${EPS} * fabs(y - 1)) {
            ${R} am1 = ${k_hf}(x, 1 + y, Rp) + ${k_hf}(x, 1 - y, Sm);
            rx = log1p(am1 + sqrt(am1 * (A + 1)));
        } else if (y < 1) {
            rx = x / sqrt((1 - y) * (1 + y));
        } else {
            rx = log1p((y - 1) + sqrt((y - 1) * (y + 1)));
        }
    } else {
        rx = log(A + sqrt(A * A - 1));
    }
    if (y < ${FOUR_SQRT_MIN}) {
        sq = A * ${TWO_OVER_EPS};
        ny = y * ${TWO_OVER_EPS};
    } else {
        B = y / A;
        if (B > 0.6417) {
            B = -1;
            if (y == 1 && x < ${EPS_128}) {
                sq = sqrt(x) * sqrt(0.5 * (A + y));
            } else if (x >= ${EPS} * fabs(y - 1)) {
                ${R} amy = ${k_hf}(x, y + 1, Rp) + ${k_hf}(x, y - 1, Sm);
                sq = sqrt(amy * (A + y));
            } else if (y > 1) {
                sq = x * ${FOUR_OVER_EPS2} * y / sqrt((y + 1) * (y - 1));
                ny = y * ${FOUR_OVER_EPS2};
            } else {
                sq = sqrt((1 - y) * (1 + y));
            }
        }
    }
    return (${R4})(rx, B, sq, ny);
}
""", deps=[("k_hf", "real")], public=False)

_template("casinh", COMPLEX, r"""
inline ${T} ${fn}(${T} z) {
    #pragma OPENCL FP_CONTRACT OFF
    ${R} x = z.x, y = z.y, ax = fabs(x), ay = fabs(y);
    if (isnan(x) || isnan(y)) {
        if (isinf(x)) return (${T})(x, y + y);
        if (isinf(y)) return (${T})(y, x + x);
        if (y == 0) return (${T})(x + x, y);
        return (${T})(x + y, x + y);
    }
    if (ax > ${RECIP_EPS} || ay > ${RECIP_EPS}) {
        /* asinh(z) = log(2z) + O(1/z^2) (for Re z >= 0) */
        ${T} w = ${clog}(signbit(x) ? -z : z);
        return (${T})(copysign(w.x + ${LN2}, x), copysign(w.y, y));
    }
    if (ax < ${SQRT6EPS_4} && ay < ${SQRT6EPS_4}) return z;   /* incl. z == 0 */
    ${R4} h = ${k_hull}(ax, ay);
    ${R} ry = h.y >= 0 ? asin(h.y) : atan2(h.w, h.z);
    return (${T})(copysign(h.x, x), copysign(ry, y));
}
""", deps=[("clog", "same"), ("k_hull", "same")])

_template("casin", COMPLEX, r"""
inline ${T} ${fn}(${T} z) { return ${casinh}(z.yx).yx; }
""", deps=[("casinh", "same")])

_template("cacos", COMPLEX, r"""
inline ${T} ${fn}(${T} z) {
    #pragma OPENCL FP_CONTRACT OFF
    ${R} x = z.x, y = z.y, ax = fabs(x), ay = fabs(y);
    int sx = signbit(x), sy = signbit(y);
    if (isnan(x) || isnan(y)) {
        if (isinf(x)) return (${T})(y + y, -${INF});
        if (isinf(y)) return (${T})(x + x, -y);
        if (x == 0) return (${T})(${PI_2}, y + y);
        return (${T})(x + y, x + y);
    }
    if (ax > ${RECIP_EPS} || ay > ${RECIP_EPS}) {
        /* acos(z) = -+i log(2z) + O(1/z^2) */
        ${T} w = ${clog}(z);
        ${R} ry = w.x + ${LN2};
        return (${T})(fabs(w.y), sy ? ry : -ry);
    }
    if (x == 1 && y == 0) return (${T})(0, -y);
    if (ax < ${SQRT6EPS_4} && ay < ${SQRT6EPS_4}) return (${T})(${PIO2_HI} - (x - ${PIO2_LO}), -y);
    ${R4} h = ${k_hull}(ay, ax);
    ${R} rx;
    if (h.y >= 0) rx = acos(sx ? -h.y : h.y);
    else rx = atan2(h.z, sx ? -h.w : h.w);
    return (${T})(rx, sy ? h.x : -h.x);
}
""", deps=[("clog", "same"), ("k_hull", "same")])

_template("cacosh", COMPLEX, r"""
inline ${T} ${fn}(${T} z) {
    ${T} w = ${cacos}(z);
    if (isnan(w.x)) return (${T})(isnan(w.y) ? w.y : fabs(w.y), w.x);
    if (isnan(w.y)) return (${T})(w.y, w.x);   /* acosh(+-0 + nan j) = nan + pi/2 j (standard) */
    return (${T})(fabs(w.y), copysign(w.x, z.y));
}
""", deps=[("cacos", "same")])

_template("catanh", COMPLEX, r"""
inline ${T} ${fn}(${T} z) {
    #pragma OPENCL FP_CONTRACT OFF
    ${R} x = z.x, y = z.y, ax = fabs(x), ay = fabs(y);
    if (y == 0 && ax <= 1) return (${T})(atanh(x), y);
    if (x == 0) return (${T})(x, atan(y));
    if (isnan(x) || isnan(y)) {
        if (isinf(x)) return (${T})(copysign((${R})0, x), y + y);
        if (isinf(y)) return (${T})(copysign((${R})0, x), copysign(${PI_2}, y));
        return (${T})(x + y, x + y);
    }
    if (ax > ${RECIP_EPS} || ay > ${RECIP_EPS}) {
        /* atanh(z) = 1/z +- i pi/2 + O(1/z^3); Re(1/z) = x / |z|^2 computed with scaling */
        ${R} re;
        if (isinf(x) || isinf(y)) {
            re = copysign((${R})0, x);
        } else {
            int k = ilogb(fmax(ax, ay));
            ${R} xs = ldexp(x, -k), ys = ldexp(y, -k);
            re = ldexp(xs / (xs * xs + ys * ys), -k);
        }
        return (${T})(re, copysign(${PI_2}, y));
    }
    if (ax < ${SQRT3EPS_2} && ay < ${SQRT3EPS_2}) return z;
    ${R} rx, ry;
    if (ax == 1 && ay < ${EPS}) {
        rx = 0.5 * (${LN2} - log(ay));
    } else {
        ${R} d = ax - 1;
        ${R} ss = ay < ${SQRT_MIN} ? d * d : d * d + ay * ay;
        rx = 0.25 * log1p(4 * ax / ss);
    }
    if (ax == 1) ry = 0.5 * atan2((${R})2, -ay);
    else if (ay < ${EPS}) ry = 0.5 * atan2(2 * ay, (1 - ax) * (1 + ax));
    else ry = 0.5 * atan2(2 * ay, (1 - ax) * (1 + ax) - ay * ay);
    return (${T})(copysign(rx, x), copysign(ry, y));
}
""")

_template("catan", COMPLEX, r"""
inline ${T} ${fn}(${T} z) { return ${catanh}(z.yx).yx; }
""", deps=[("catanh", "same")])


HELPER_NAMES: frozenset[str] = frozenset(n for n, h in _REGISTRY.items() if h.public)
"""Public helper names (internal building blocks such as ``k_hull`` are rendered as
dependencies but not listed)."""

HELPER_TYPES: dict[str, tuple[str, ...]] = {n: h.types for n, h in _REGISTRY.items()
                                           if h.public}
"""The C types each public helper is defined for."""
