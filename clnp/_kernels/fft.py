"""Render the FFT program: Stockham autosort mixed-radix passes plus the kernels around them.

One program per real dtype (``float`` or ``double``) holds every kernel an FFT needs, so a
process builds at most two FFT programs (PoCL then compiles each kernel at its first launch,
so kernels a process never uses cost nothing). Lengths, strides and directions are kernel
arguments. Work buffers are dense rows of ``P`` complex values, one row per transform; every
kernel runs on a 3-D range (item within the row, two batch dims), so no item divides its
index (divisions made these kernels 4x slower on PoCL).

``clnp_fft_r{2,3,4,5,7,8}``
    One Stockham pass of radix ``R`` over every row: item ``(j, row)``, ``j < Q = P / R``,
    reads ``src[j + r*Q]``, multiplies by the twiddles ``w^(k*r)`` (``k = j % Ns``,
    ``Ns`` = product of the radices of the passes before), does an ``R``-point DFT and writes
    ``dst[(j - k)*R + k + r*Ns]``. After the last pass the row holds the DFT in natural order
    (no bit reversal). Twiddles come from a table ``tab[m] = exp(-2 pi i m / TN)`` computed
    in double precision on the host (accurate to the last bit in float32; no accumulated
    products); a pass of ``L = Ns*R`` points reads ``tab[k*r*tstep]`` with ``tstep = TN/L``.
``clnp_fft_gather<mode><c|r>``
    Reads the transformed axis of the input (complex ``c`` or real ``r``; any strides, two
    batch dims), pads with zeros or truncates, and writes the work rows. Modes: 0 plain,
    1 the Hermitian completion of a half spectrum (c2r), 2 real input packed in pairs
    (``z_j = x_2j + i x_2j+1``, r2c of even length), 3 a half spectrum folded into the
    spectrum of the pairs (c2r of even length). Modes 0 and 1 optionally multiply by a chirp
    (Bluestein). Modes are separate kernels: a branch on a mode argument kept PoCL from
    vectorising across work-items (2-4x slower).
``clnp_fft_scatter<mode>``
    Work rows to the output (any strides) times a real scale. Modes: 0 complex, 1 real part
    (both optionally times a chirp first), 2 the spectrum of the pairs unfolded into the half
    spectrum of the real signal (r2c), 3 the pairs unpacked into reals (c2r).
``clnp_fft_cmul``
    ``w[row, j] *= f[j]`` (conjugated for inverse transforms): Bluestein's convolution.

``dir`` is +1 for the forward transform (exponent sign -1) and -1 for the inverse; tables
hold forward values and are conjugated on the fly for the inverse.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

RADICES = (2, 3, 4, 5, 7, 8)


@dataclass(frozen=True)
class FftSpec:
    dtype: np.dtype          # real dtype of the computation: float32 or float64


def _ctypes(spec: FftSpec) -> tuple[str, str]:
    return ("double", "double2") if spec.dtype == np.float64 else ("float", "float2")


def _lit(v: float, real: str) -> str:
    s = repr(float(v))
    return s if real == "double" else s + "f"


def _butterfly(R: int, real: str) -> list[str]:
    """C lines computing ``y0..y{R-1}``, the ``R``-point DFT of ``v0..v{R-1}`` with exponent
    sign ``-d`` (``d`` = dir as a real)."""
    if R == 2:
        return ["const cplx_t y0 = v0 + v1, y1 = v0 - v1;"]
    if R == 4:
        return _radix4("v0", "v1", "v2", "v3", "y0", "y1", "y2", "y3")
    if R == 8:
        h = _lit(math.sqrt(0.5), real)
        return (_radix4("v0", "v2", "v4", "v6", "e0", "e1", "e2", "e3") +
                _radix4("v1", "v3", "v5", "v7", "o0", "o1", "o2", "o3") + [
            f"const cplx_t w1 = (cplx_t)(o1.x + d * o1.y, o1.y - d * o1.x) * {h};",
            "const cplx_t w2 = (cplx_t)(d * o2.y, -d * o2.x);",
            f"const cplx_t w3 = (cplx_t)(-o3.x + d * o3.y, -o3.y - d * o3.x) * {h};",
            "const cplx_t y0 = e0 + o0, y4 = e0 - o0, y1 = e1 + w1, y5 = e1 - w1;",
            "const cplx_t y2 = e2 + w2, y6 = e2 - w2, y3 = e3 + w3, y7 = e3 - w3;"])
    # odd radix: pair r with R - r so cosines and sines are shared by outputs q and R - q
    h = (R - 1) // 2
    lines = ["const cplx_t y0 = " + " + ".join(f"v{r}" for r in range(R)) + ";"]
    for r in range(1, h + 1):
        lines.append(f"const cplx_t a{r} = v{r} + v{R - r}, b{r} = v{r} - v{R - r};")
    for q in range(1, h + 1):
        c = " + ".join(f"a{r} * {_lit(math.cos(2 * math.pi * r * q / R), real)}"
                       for r in range(1, h + 1))
        s = " + ".join(f"b{r} * {_lit(math.sin(2 * math.pi * r * q / R), real)}"
                       for r in range(1, h + 1))
        lines += [f"const cplx_t c{q} = v0 + {c};", f"const cplx_t s{q} = {s};",
                  f"const cplx_t t{q} = (cplx_t)(d * s{q}.y, -d * s{q}.x);",
                  f"const cplx_t y{q} = c{q} + t{q}, y{R - q} = c{q} - t{q};"]
    return lines


def _radix4(a: str, b: str, c: str, e: str, y0: str, y1: str, y2: str, y3: str) -> list[str]:
    p = y0 + "_"
    return [f"const cplx_t {p}0 = {a} + {c}, {p}1 = {a} - {c}, {p}2 = {b} + {e}, "
            f"{p}3 = {b} - {e};",
            f"const cplx_t {p}r = (cplx_t)(d * {p}3.y, -d * {p}3.x);",
            f"const cplx_t {y0} = {p}0 + {p}2, {y2} = {p}0 - {p}2, {y1} = {p}1 + {p}r, "
            f"{y3} = {p}1 - {p}r;"]


def _pass_kernel(R: int, real: str) -> str:
    loads = "\n".join(f"  cplx_t v{r} = src[j + {r} * Q];" if r else "  cplx_t v0 = src[j];"
                      for r in range(R))
    tw = "\n".join(f"    v{r} = cm(v{r}, tw(tab, {r} * t, d));" for r in range(1, R))
    body = "\n".join("  " + line for line in _butterfly(R, real))
    stores = "\n".join(f"  dst[o + {r} * Ns] = y{r};" for r in range(R))
    return f"""
__kernel void clnp_fft_r{R}(const int rows, const int Q, const int Ns, const int tstep,
    const int dir, __global const cplx_t *src, __global cplx_t *dst,
    __global const cplx_t *tab)
{{
  const int j = get_global_id(0);
  const long row = get_global_id(1);
  if (j >= Q || row >= rows) return;
  src += row * (long)(Q * {R});
  dst += row * (long)(Q * {R});
  const int k = j % Ns;
  const real_t d = (real_t)dir;
{loads}
  if (Ns > 1) {{
    const int t = k * tstep;
{tw}
  }}
{body}
  const int o = (j - k) * {R} + k;
{stores}
}}"""


_COMMON = """
typedef {real} real_t;
typedef {cplx} cplx_t;

inline cplx_t cm(const cplx_t a, const cplx_t b)
{{
  return (cplx_t)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}}

/* table entry m for direction d: the forward value, conjugated for the inverse */
inline cplx_t tw(__global const cplx_t *tab, const int m, const real_t d)
{{
  const cplx_t w = tab[m];
  return (cplx_t)(w.x, d * w.y);
}}

__kernel void clnp_fft_cmul(const int rows, const int M, const int dir, __global cplx_t *w,
    __global const cplx_t *f)
{{
  const int j = get_global_id(0), b = get_global_id(1);
  if (j >= M || b >= rows) return;
  const long i = (long)b * M + j;
  w[i] = cm(w[i], tw(f, j, (real_t)dir));
}}
"""


# gather bodies: set ``v`` (zero-initialised) for item ``j`` of row ``b``; ``LD(i)`` loads
# input element ``i`` of the row (complex, or real with a zero imaginary part)
_GATHER = {
    0: """  if (j < m) v = LD(j);""",
    1: """  /* X[n - k] = conj(X[k]); only the real parts of X[0] and X[n/2] count (as NumPy) */
  if (j < n) {
    const int k = (2 * j <= n) ? j : n - j;
    if (k < m) v = LD(k);
    if (k == 0 || 2 * k == n) v.y = (real_t)0;
    if (k != j) v.y = -v.y;
  }""",
    2: """  const int i = 2 * j;
  if (i < m) v.x = x[base + i * sa];
  if (i + 1 < m) v.y = x[base + (i + 1) * sa];""",
    3: """  /* Z[j] = (X[j] + conj(X[P-j])) + i (X[j] - conj(X[P-j])) u^j: its length-P transform
     holds the even samples in the real parts and the odd samples in the imaginary parts */
  const int k = Pw - j;
  cplx_t a = j < m ? LD(j) : v;
  cplx_t c = k < m ? LD(k) : v;
  if (j == 0) { a.y = (real_t)0; c.y = (real_t)0; }
  const cplx_t e = (cplx_t)(a.x + c.x, a.y - c.y);
  const cplx_t o = cm((cplx_t)(a.x - c.x, a.y + c.y), tw(tab, j, d));
  v = (cplx_t)(e.x - o.y, e.y + o.x);""",
}
GATHER_KINDS = ("gather0c", "gather0r", "gather1c", "gather2r", "gather3c")

# scatter bodies: the output value ``v`` of item ``k`` (mode 3 writes and returns itself)
_SCATTER = {
    0: """  cplx_t v = row[k];
  if (chirp) v = cm(v, tw(tab, k, d));""",
    1: """  cplx_t v = row[k];
  if (chirp) v = cm(v, tw(tab, k, d));""",
    2: """  /* X[k] = E[k] + u^k O[k], E = (Z[k] + conj(Z[P-k]))/2, O = (Z[k] - conj(Z[P-k]))/2i */
  const cplx_t z = row[k == Pw ? 0 : k];
  const cplx_t zp = row[k == 0 ? 0 : Pw - k];
  const cplx_t e = (cplx_t)(z.x + zp.x, z.y - zp.y) * (real_t)0.5;
  const cplx_t o = (cplx_t)(z.y + zp.y, zp.x - z.x) * (real_t)0.5;
  const cplx_t v = e + cm(tw(tab, k, d), o);""",
    3: """  const cplx_t u = row[k >> 1];
  y[a] = scale * ((k & 1) ? u.y : u.x);""",
}
SCATTER_KINDS = ("scatter0", "scatter1", "scatter2", "scatter3")


def _gather_kernel(kind: str) -> str:
    mode, cplx_in = int(kind[6]), kind[7] == "c"
    xt = "cplx_t" if cplx_in else "real_t"
    ld = "x[base + (i) * sa]" if cplx_in else "(cplx_t)(x[base + (i) * sa], (real_t)0)"
    return f"""
#define LD(i) ({ld})
__kernel void clnp_fft_{kind}(const int d1, const int Pw, const int n, const int m,
    const long s0, const long s1, const long sa, __global const {xt} *x, const long xo,
    __global const cplx_t *tab, const int chirp, const int dir, __global cplx_t *w)
{{
  const int j = get_global_id(0), b1 = get_global_id(1), b0 = get_global_id(2);
  if (j >= Pw || b1 >= d1) return;
  const long base = xo + b0 * s0 + b1 * s1;
  const real_t d = (real_t)dir;
  cplx_t v = (cplx_t)((real_t)0, (real_t)0);
{_GATHER[mode]}
{"  if (chirp && j < n) v = cm(v, tw(tab, j, d));" if mode < 2 else ""}
  w[((long)b0 * d1 + b1) * Pw + j] = v;
}}
#undef LD
"""


def _scatter_kernel(kind: str) -> str:
    mode = int(kind[7])
    yt = "cplx_t" if mode in (0, 2) else "real_t"
    store = {0: "y[a] = v * scale;", 1: "y[a] = v.x * scale;", 2: "y[a] = v * scale;",
             3: ""}[mode]
    return f"""
__kernel void clnp_fft_{kind}(const int d1, const int Pw, const int nout, const long s0,
    const long s1, const long sa, __global const cplx_t *w, __global const cplx_t *tab,
    const int chirp, const int dir, const real_t scale, __global {yt} *y, const long yo)
{{
  const int k = get_global_id(0), b1 = get_global_id(1), b0 = get_global_id(2);
  if (k >= nout || b1 >= d1) return;
  const long a = yo + b0 * s0 + b1 * s1 + k * sa;
  __global const cplx_t *row = w + ((long)b0 * d1 + b1) * Pw;
  const real_t d = (real_t)dir;
{_SCATTER[mode]}
  {store}
}}
"""

_I32, _I64 = np.dtype(np.int32), np.dtype(np.int64)
_ARGS = {
    "gather": [_I32] * 4 + [_I64] * 3 + [None, _I64, None, _I32, _I32, None],
    "scatter": [_I32] * 3 + [_I64] * 3 + [None, None, _I32, _I32, "real", None, _I64],
    "cmul": [_I32, _I32, _I32, None, None],
}


def render_source(spec: FftSpec) -> str:
    real, cplx = _ctypes(spec)
    parts = [f"// clnp FFT program ({real})"]
    if real == "double":
        parts.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    parts.append(_COMMON.format(real=real, cplx=cplx))
    parts += [_gather_kernel(k) for k in GATHER_KINDS]
    parts += [_scatter_kernel(k) for k in SCATTER_KINDS]
    parts += [_pass_kernel(R, real) for R in RADICES]
    return "\n".join(parts)


def render_fft(spec: FftSpec, kind: str) -> tuple[str, str, list]:
    """``(source, kernel name, scalar arg dtypes)`` of kernel ``kind``: one of
    :data:`GATHER_KINDS`, :data:`SCATTER_KINDS`, ``cmul`` or ``r<R>`` (``R`` in
    :data:`RADICES`). Every kind of a spec shares one source (one program build)."""
    if kind.startswith("r") and kind[1:].isdigit() and int(kind[1:]) in RADICES:
        args = [_I32] * 5 + [None, None, None]
    elif kind in _ARGS or kind in GATHER_KINDS or kind in SCATTER_KINDS:
        base = "gather" if kind in GATHER_KINDS else "scatter" if kind in SCATTER_KINDS \
            else kind
        args = [spec.dtype if a == "real" else a for a in _ARGS[base]]
    else:
        raise ValueError(f"unknown FFT kernel {kind!r}")
    return render_source(spec), f"clnp_fft_{kind}", args
