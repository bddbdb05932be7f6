"""Render the ``rng_bits`` kernels: Philox4x32-10 blocks turned into random values.

Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3",
SC'11) maps a 128-bit counter and a 64-bit key to 128 random bits with ten rounds of two
32x32->64-bit multiplications; it is the Random123 ``philox4x32_10`` function bit for bit
(``tests/test_random.py`` checks its known-answer vectors). Work-item ``g`` encrypts counter
``counter + g`` (128-bit wrap-around) and turns the four words into ``per_block(dtype, dist)``
consecutive output values, so one launch of ``n`` values consumes ``blocks(dtype, dist, n)``
counters and the next launch starts after them.

Distributions (``dist``), for output ``value = loc + scale * base``:

``uniform``  base in [0, 1): float32 ``(w >> 8) * 2**-24`` (four per block), float64
             ``(x >> 11) * 2**-53`` of a 64-bit word ``x`` made of two words (two per block).
``normal``   Box-Muller on pairs ``(u1, u2)``: ``u1`` in (0, 1] from a whole 32-bit (float32)
             or 64-bit (float64, 53 bits kept) word, ``r = sqrt(-2 log u1)``, angle
             ``pi * u2`` with ``u2`` in [0, 2) from 24 (53) bits: four (float32) or two
             (float64) per block.
``exponential``  ``-log(1 - u)``: through ``2 atanh(-u / (2 - u))`` for ``u < 1/8`` and with
             ``1 - u`` made from the complemented word above, so that small and large values
             keep full relative precision.

``integers`` ``loc + floor(x * span / 2**64)`` for 64-bit words ``x`` (two per block), for
             ``span`` (``scale``, the number of values) up to 2**32: multiply-shift instead of
             modulo, so the probability of any value differs from ``1/span`` by less than
             ``span / 2**64 <= 2**-32`` relatively (detecting that would take ~2**64 draws),
             and no data-dependent rejection loop: every value costs a fixed share of a
             block, which keeps streams counter-addressable.
``integers128``  the same with the block's 128 bits (one per block) for larger spans (0
             stands for 2**64, the whole 64-bit range): relative deviation below ``2**-64``.
``bits``     raw words: uint32 four per block, uint64 (``w0 << 32 | w1``) two per block.

The logarithm, square root and sin/cos are written out here (``_math_helpers``): PoCL's
builtins are scalar library calls; these vectorise and stay within a few ulp.

Arguments: ``k0, k1, c_lo, c_hi, loc, scale, out``; ``loc``/``scale`` are the output's C
type for floats and ``ulong`` for integers (``loc`` as two's complement). There is no bounds
test: the launcher runs whole work-groups and gives ``out`` room for every value they write
(see ``padded_len``). One program per output dtype holds every distribution's kernel.

Keyed kernels (``RngSpec(dtype, keyed=True)``, the ``random_bits`` primitive of
``clnp_grad.random``) read the key from a device array instead, so that it can be a traced
value: arguments ``keys, kstride, c_lo, c_hi, row, loc, scale, out``. Work-item ``(g, b)``
uses row ``b`` of ``keys`` (``kstride`` uint words: the key, then for ``kstride == 4`` a
64-bit counter offset, low word first, added to ``c``) and writes from ``out + row * b``.
The values of a row are the unkeyed kernel's for the same key and counter.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import ctypes as C

# Philox4x32 multipliers and Weyl key increments (Salmon et al. 2011, Random123)
PHILOX_M0, PHILOX_M1 = 0xD2511F53, 0xCD9E8D57
PHILOX_W0, PHILOX_W1 = 0x9E3779B9, 0xBB67AE85
PHILOX_ROUNDS = 10

FLOAT_DISTS = ("uniform", "normal", "exponential")


@dataclass(frozen=True)
class RngSpec:
    dtype: np.dtype          # output dtype
    keyed: bool = False      # key (and counter offset) read from a device array, per row


def dists_for(dtype: np.dtype) -> tuple[str, ...]:
    """Distributions a kernel of output ``dtype`` offers."""
    if dtype.kind == "f" and dtype.itemsize >= 4:
        return FLOAT_DISTS
    if dtype.kind in "iub":
        ints = ("integers", "integers128")
        return ints + ("bits",) if dtype.name in ("uint32", "uint64") else ints
    return ()


def per_block(dtype: np.dtype, dist: str) -> int:
    """Output values made from one 128-bit Philox block."""
    if dist == "integers128":
        return 1
    if dist == "integers":
        return 2
    return 4 if dtype.itemsize == 4 else 2


def blocks(dtype: np.dtype, dist: str, n: int) -> int:
    """Counters consumed by ``n`` values."""
    p = per_block(dtype, dist)
    return -(-n // p)


def padded_len(dtype: np.dtype, dist: str, n: int, group: int) -> tuple[int, int]:
    """(work-items, output elements written) of a launch for ``n`` values in work-groups of
    ``group`` items: whole groups, so that the kernel needs no bounds test."""
    items = -(-blocks(dtype, dist, n) // group) * group
    return items, items * per_block(dtype, dist)


def philox_source() -> str:
    """C macro ``CLNP_PHILOX10(w0, w1, w2, w3, k0, k1)``: Philox4x32-10 in place on the four
    uint counter words (``w0`` least significant) under key ``(k0, k1)``."""
    rounds = []
    for r in range(PHILOX_ROUNDS):
        if r:
            rounds.append(f"    k0_ += 0x{PHILOX_W0:08X}u; k1_ += 0x{PHILOX_W1:08X}u; \\")
        rounds.append("    CLNP_PHILOX_ROUND(w0, w1, w2, w3, k0_, k1_); \\")
    body = "\n".join(rounds)
    # Scalar words and 32x32->64-bit products rather than uint4 and mul_hi: PoCL vectorises
    # across work-items, and that form runs ~9x faster there (GPUs emit one wide multiply
    # either way).
    return f"""#define CLNP_PHILOX_ROUND(w0, w1, w2, w3, k0, k1) {{ \\
    const ulong p0 = (ulong)0x{PHILOX_M0:08X}u * w0, p1 = (ulong)0x{PHILOX_M1:08X}u * w2; \\
    w0 = (uint)(p1 >> 32) ^ w1 ^ k0; w2 = (uint)(p0 >> 32) ^ w3 ^ k1; \\
    w1 = (uint)p1; w3 = (uint)p0; }}
#define CLNP_PHILOX10(w0, w1, w2, w3, k0, k1) {{ \\
    uint k0_ = (k0), k1_ = (k1); \\
{body}
  }}"""


def _float_body(dtype: np.dtype, dist: str) -> tuple[str, int]:
    """Statements computing ``v0..v{per-1}`` (base values) from the block ``w0..w3``."""
    if dtype.itemsize == 4:
        if dist == "uniform":
            return "\n".join(f"  const float v{j} = (float)(w{j} >> 8) * 0x1p-24f;"
                             for j in range(4)), 4
        if dist == "normal":
            lines = []
            for j in (0, 2):
                lines.append(f"""  const float u{j} = ((float)w{j} + 0.5f) * 0x1p-32f;
  const float rad{j} = clnp_rng_sqrt_f(-2.0f * clnp_rng_log_f(u{j}));
  float s{j}, c{j};
  CLNP_RNG_SINCOSPI_F(w{j + 1} >> 8, s{j}, c{j});
  const float v{j} = rad{j} * c{j}, v{j + 1} = rad{j} * s{j};""")
            return "\n".join(lines), 4
        return "\n".join(f"  const float v{j} = clnp_rng_exp_f(w{j});" for j in range(4)), 4
    words = ["(((ulong)w0 << 32) | w1)", "(((ulong)w2 << 32) | w3)"]
    if dist == "uniform":
        return "\n".join(f"  const double v{j} = (double)({x} >> 11) * 0x1p-53;"
                         for j, x in enumerate(words)), 2
    if dist == "normal":
        return (f"""  const double u0 = ((double)({words[0]} >> 11) + 0.5) * 0x1p-53;
  const double rad = clnp_rng_sqrt_d(-2.0 * clnp_rng_log_d(u0));
  double s0, c0;
  CLNP_RNG_SINCOSPI_D({words[1]} >> 11, s0, c0);
  const double v0 = rad * c0, v1 = rad * s0;"""), 2
    return "\n".join(f"  const double v{j} = clnp_rng_exp_d({x});"
                     for j, x in enumerate(words)), 2


def _poly(var: str, coeffs: list[float], suffix: str) -> str:
    """Horner form of sum(c_k var**k)."""
    out = repr(coeffs[-1]) + suffix
    for c in reversed(coeffs[:-1]):
        out = f"{c!r}{suffix} + {var} * ({out})"
    return out


def _math_helpers(t: str) -> str:
    """The logarithm, square root and sin/cos(pi t) the transforms need, written out: PoCL's
    builtin ``log``/``cospi``/``sqrt`` are scalar library calls that cost 3-15x more than these,
    which vectorise; on GPUs they are a few FMAs either way. Arguments are the transforms'
    own: positive normal numbers for the logarithm, angles as integers."""
    f = t == "float"
    sfx, sx, ui, bits, mant, bias, one = (
        ("f", "f", "uint", 23, "0x007FFFFFu", 127, "0x3F800000u") if f else
        ("", "d", "ulong", 52, "0x000FFFFFFFFFFFFFul", 1023, "0x3FF0000000000000ul"))
    asu, asf = ("as_uint", "as_float") if f else ("as_ulong", "as_double")
    # log(m) = 2 atanh(s) = 2 (s + s^3/3 + ...), |s| <= 0.1716: 5 terms for float, 11 double
    # (the exponential's |s| <= 1/15 needs fewer)
    log_c = [2.0 / (2 * k + 1) for k in range(5 if f else 11)]
    sin_c = [(-1) ** k / math.factorial(2 * k + 1) for k in range(5 if f else 9)]
    cos_c = [(-1) ** k / math.factorial(2 * k) for k in range(6 if f else 10)]
    if f:
        ln2 = "e * 0.693147181f"
    else:   # ln2 in two parts (fdlibm): e * LN2_HI is exact
        ln2 = "e * 6.93147180369123816490e-01 + (e * 1.90821492927058770002e-10"
    tail = "" if f else ")"
    newton = "\n".join(f"  y = y * (1.5{sfx} - h * y * y);" for _ in range(3 if f else 4))
    # angle j / 2**(bits+1) half-turns in [0, 2): quadrant q = round(2 t), r = t - q / 2
    jb = 24 if f else 53
    jt = "uint" if f else "ulong"
    it = "int" if f else "long"
    return f"""/* e log(2) + log((1 + s) / (1 - s)) for s = num / den, |s| <= 0.1716 */
inline {t} clnp_rng_log_parts_{sx}({t} e, {t} num, {t} den)
{{
  const {t} s = num / den, s2 = s * s;
  return {ln2} + s * ({_poly("s2", log_c, sfx)}){tail};
}}

/* x = m 2**e with m in (sqrt(1/2), sqrt(2)]: log(m) = 2 atanh((m - 1) / (m + 1)) */
#define CLNP_RNG_FREXP_{sx.upper()}(x, m, e) {{ \\
    const {ui} b_ = {asu}(x); \\
    e = (int)(b_ >> {bits}) - {bias}; \\
    m = {asf}((b_ & {mant}) | {one}); \\
    const int big_ = m > 1.4142135623730951{sfx}; \\
    m = big_ ? 0.5{sfx} * m : m; e += big_; }}

/* log(x) for a positive normal x */
inline {t} clnp_rng_log_{sx}({t} x)
{{
  {t} m; int e;
  CLNP_RNG_FREXP_{sx.upper()}(x, m, e);
  return clnp_rng_log_parts_{sx}(({t})e, m - 1.0{sfx}, m + 1.0{sfx});
}}

/* sqrt(x), x >= 0: Newton steps on the reciprocal square root from a bit-trick guess
   (within 3.5%), then one residual correction of x * rsqrt(x) */
inline {t} clnp_rng_sqrt_{sx}({t} x)
{{
  {t} y = {asf}({"0x5F3759DFu" if f else "0x5FE6EB50C7B537A9ul"} - ({asu}(x) >> 1));
  const {t} h = 0.5{sfx} * x;
{newton}
  const {t} r = x * y;
  return x > 0.0{sfx} ? r + 0.5{sfx} * y * (x - r * r) : 0.0{sfx};
}}

/* -log(1 - u) for u = (x + 1/2) 2**-B of a B-bit word x. For u < 1/8, log(1 - u) =
   2 atanh(-u / (2 - u)) keeps small results exact; above, 1 - u comes exactly from the
   complemented word. Selects, not branches, so that PoCL still vectorises. */
inline {t} clnp_rng_exp_{sx}({jt} x)
{{
  const int lower = x < {"0x20000000u" if f else "0x2000000000000000ul"};
  const {t} u = (({t})(x{"" if f else " >> 11"}) + 0.5{sfx}) * 0x1p-{32 if f else 53}{sfx};
  const {t} up = (({t})((~x){"" if f else " >> 11"}) + 0.5{sfx}) * 0x1p-{32 if f else 53}{sfx};
  {t} m; int e;
  CLNP_RNG_FREXP_{sx.upper()}(up, m, e);
  return -clnp_rng_log_parts_{sx}(lower ? 0.0{sfx} : ({t})e, lower ? -u : m - 1.0{sfx},
                                 lower ? 2.0{sfx} - u : m + 1.0{sfx});
}}

/* (sin, cos)(pi j / 2**{jb - 1}) for a {jb}-bit integer j: quadrant by integer rounding, the
   remaining angle in [-pi/4, pi/4] by Taylor polynomials */
#define CLNP_RNG_SINCOSPI_{sx.upper()}(j_, sn, cs) {{ \\
    const {jt} j = (j_), q = (j + (({jt})1 << {jb - 3})) >> {jb - 2}; \\
    const {t} x = ({t})(({it})j - ({it})(q << {jb - 2})) * {math.pi / 2 ** (jb - 1)!r}{sfx}; \\
    const {t} x2 = x * x; \\
    const {t} ps = x * ({_poly("x2", sin_c, sfx)}); \\
    const {t} pc = {_poly("x2", cos_c, sfx)}; \\
    const {t} s1 = (q & 1) ? pc : ps, c1 = (q & 1) ? -ps : pc; \\
    sn = (q & 2) ? -s1 : s1; cs = (q & 2) ? -c1 : c1; }}"""


def _write(per: int) -> str:
    """Store ``r0..r{per-1}`` at ``out[per*g + j]``: unconditionally, since the output buffer
    is padded to whole work-groups of blocks (a store under a bounds test, or an early return,
    keeps PoCL from vectorising across work-items: 5x slower)."""
    return "\n".join(f"  out[{per} * g + {j}] = r{j};" for j in range(per))


def render_rng(spec: RngSpec, dist: str) -> tuple[str, str, list]:
    """(source, kernel name, scalar argument dtypes) of the ``dist`` kernel of ``spec``; the
    source is the same for every ``dist`` of a dtype (one program per dtype)."""
    d = spec.dtype
    if dist not in dists_for(d):
        raise ValueError(f"rng_bits: no {dist!r} kernel for {d}")
    st = C.storage_ctype(d)
    u64, u32 = np.dtype(np.uint64), np.dtype(np.uint32)
    lines = [f"// clnp {'random_bits' if spec.keyed else 'rng_bits'} (Philox4x32-10) of {d}"]
    if C.uses_fp64([d]):
        lines.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    lines.append(philox_source())
    head = "const uint k0, const uint k1, const ulong c_lo, const ulong c_hi, "
    pre = """  const ulong g = get_global_id(0);
  /* block counter: counter + g, wrapping at 2**128 */
  const ulong ctr_lo = c_lo + g, ctr_hi = c_hi + (ctr_lo < g);"""
    if spec.keyed:
        head = ("__global const uint *keys, const uint kstride, const ulong c_lo, "
                "const ulong c_hi, const ulong row, ")
        # the offset words are masked rather than read under a branch, so that every load
        # stays in bounds for kstride == 2 and the kernel stays branch-free (vectorisable)
        pre = """  const ulong g = get_global_id(0), b = get_global_id(1);
  __global const uint *kb = keys + kstride * b;
  const uint k0 = kb[0], k1 = kb[1], m = kstride > 2 ? 0xFFFFFFFFu : 0u;
  const ulong off = ((ulong)(kb[kstride - 1] & m) << 32) | (kb[kstride - 2] & m);
  out += row * b;
  /* block counter: counter + off + g, wrapping at 2**128 */
  const ulong c1 = c_lo + off, ctr_lo = c1 + g;
  const ulong ctr_hi = c_hi + (c1 < off) + (ctr_lo < g);"""
    pre += """
  uint w0 = (uint)ctr_lo, w1 = (uint)(ctr_lo >> 32), w2 = (uint)ctr_hi, w3 = (uint)(ctr_hi >> 32);
  CLNP_PHILOX10(w0, w1, w2, w3, k0, k1);"""
    if d.kind == "f":
        t = st
        lines.append(_math_helpers(t))
        argtypes = [u32, u32, u64, u64, d, d, None]
        for name in FLOAT_DISTS:
            body, per = _float_body(d, name)
            res = "\n".join(f"  const {t} r{j} = loc + scale * v{j};" for j in range(per))
            lines.append(f"""__kernel void clnp_rng_{name}({head}const {t} loc, const {t} scale,
    __global {st} *out)
{{
{pre}
{body}
{res}
{_write(per)}
}}""")
    else:
        argtypes = [u32, u32, u64, u64, u64, u64, None]
        lines.append(f"""__kernel void clnp_rng_integers({head}const ulong loc, const ulong span,
    __global {st} *out)
{{
{pre}
  /* span <= 2**32: floor(x * span / 2**64) of 64-bit words x = (w0, w1), (w2, w3) by
     schoolbook multiplication with 32x32->64-bit products (they vectorise on CPUs) */
  const {st} r0 = ({st})(loc + (((ulong)w0 * span + (((ulong)w1 * span) >> 32)) >> 32));
  const {st} r1 = ({st})(loc + (((ulong)w2 * span + (((ulong)w3 * span) >> 32)) >> 32));
{_write(2)}
}}""")
        lines.append(f"""__kernel void clnp_rng_integers128({head}const ulong loc, const ulong span,
    __global {st} *out)
{{
{pre}
  /* floor(x * span / 2**128) for x = w0 w1 w2 w3 (most significant first) and
     span = s1 2**32 + s0, by 32-bit columns with 32x32->64-bit products (64-bit mul_hi
     does not vectorise); span == 0 stands for 2**64: the top 64 bits */
  const ulong s0 = span & 0xFFFFFFFFul, s1 = span >> 32;
  ulong p, q, t, c;
  p = (ulong)w3 * s0; c = p >> 32;
  p = (ulong)w2 * s0; q = (ulong)w3 * s1;
  t = (p & 0xFFFFFFFFul) + (q & 0xFFFFFFFFul) + c; c = (p >> 32) + (q >> 32) + (t >> 32);
  p = (ulong)w1 * s0; q = (ulong)w2 * s1;
  t = (p & 0xFFFFFFFFul) + (q & 0xFFFFFFFFul) + c; c = (p >> 32) + (q >> 32) + (t >> 32);
  p = (ulong)w0 * s0; q = (ulong)w1 * s1;
  t = (p & 0xFFFFFFFFul) + (q & 0xFFFFFFFFul) + c; c = (p >> 32) + (q >> 32) + (t >> 32);
  const ulong v = span == 0 ? (((ulong)w0 << 32) | w1) : (ulong)w0 * s1 + c;
  const {st} r0 = ({st})(loc + v);
{_write(1)}
}}""")
        if "bits" in dists_for(d):
            if d.itemsize == 4:
                body, per = "\n".join(f"  const uint r{j} = w{j};" for j in range(4)), 4
            else:
                body, per = ("  const ulong r0 = ((ulong)w0 << 32) | w1;\n"
                             "  const ulong r1 = ((ulong)w2 << 32) | w3;"), 2
            lines.append(f"""__kernel void clnp_rng_bits({head}const ulong loc, const ulong span,
    __global {st} *out)
{{
{pre}
{body}
{_write(per)}
}}""")
    if spec.keyed:   # (keys, kstride, c_lo, c_hi, row) for (k0, k1, c_lo, c_hi)
        argtypes = [None, u32, u64, u64, u64] + argtypes[4:]
    return "\n\n".join(lines), f"clnp_rng_{dist}", argtypes
