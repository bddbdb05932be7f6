"""Render the dense linear algebra program: factorizations and eigen/singular value solvers.

One program per (dtype, work-group size) holds every kernel (PoCL then compiles each kernel at
its first launch, so the kernels a process never uses cost nothing). Each kernel runs one
work-group per matrix of a batch (``get_group_id(1)``) over a private dense work area in global
memory; sizes, offsets and strides are kernel arguments, so one kernel serves every shape and
layout (transposed or broadcast inputs are read in place).

The work-group size ``LS`` is a compile-time constant. On CPUs clnp uses ``LS = 1``: a
work-group never spans cores there, so one item per matrix loses no parallelism, needs no
barriers, and its inner loops (unit stride) vectorize. GPUs use a larger group: the loops
``PFOR(i, a, b)`` split their range among the group's items, ``BAR()`` separates phases and
reductions go through local memory. Every barrier is reached under uniform control flow.

Kernels (``T`` the element type, ``RT`` its real type; matrices are addressed as
``X + X_off + b0 * X_sb0 + b1 * X_sb1 + row * X_sr + col * X_sc`` with the batch index ``b``
split as ``b0 = b / nb1``, ``b1 = b % nb1``):

``clnp_la_chol``   Cholesky, right-looking, on the upper factor ``U`` (rows contiguous).
                   Reads the lower (``upper=0``) or upper triangle; writes ``L = U^H`` or
                   ``U`` with explicit zeros. A matrix that is not positive definite (or holds
                   NaN) gets an all-NaN factor.

Every factorization and solver also writes one ``int`` per matrix to ``info`` (the status
LAPACK returns, which the eager namespace reads back once to raise ``LinAlgError``): Cholesky
``2`` for a pivot <= 0 (``| 1`` for a NaN/inf one), LU the 1-based index of the first zero
pivot, ``eigh`` 1 when the QL iteration did not converge, ``svd`` 1 for NaN singular values,
``eig`` 1 for NaN or inf input.
``clnp_la_getrf``  LU with partial pivoting (``|re| + |im|`` pivots, whole-row swaps, as
                   LAPACK); also writes ``det``, the sign and ``log|det|`` from the diagonal
                   and the pivot parity.
``clnp_la_getrs``  Solves ``A X = B`` from the LU factors (``B`` or, with ``ident``, the
                   identity); every item owns whole right-hand-side columns (no barriers).
``clnp_la_qr``     Householder QR (LAPACK's ``geqr2``/``ung2r``: real ``beta`` so ``R`` has a
                   real diagonal), column-major work copy; writes ``R`` (``rr`` rows) and ``Q``
                   (``qc`` columns).
``clnp_la_eigh``   Hermitian eigensolver: Householder tridiagonalization (lower triangle, as
                   ``zhetd2``; real tridiagonal), ``Q`` formed explicitly, then the implicit QL
                   algorithm with Wilkinson shifts (EISPACK ``tql2``), its Givens rotations
                   applied to the rows of ``Q^T`` by the whole group. Eigenvalues ascending.
``clnp_la_svd``    One-sided (Hestenes) Jacobi SVD on the tall orientation (``A^H`` when
                   ``m < n``) with round-robin pair ordering (``K / 2`` disjoint pairs per
                   round). Singular values descending; the left factor (normalized columns) is
                   passed through a Householder QR, which re-orthogonalizes it, completes the
                   basis for ``full`` and replaces the columns of zero singular values.
``clnp_la_lupanel``, ``clnp_la_luswap``, ``clnp_la_lutrsm``, ``clnp_la_lustat``
                   The kernels of the blocked LU (a host loop over panels of columns, with
                   the trailing update by the GEMM kernel): panel factorization (one group
                   per matrix), its row swaps on the other columns and the block row of
                   ``U`` (each item owning ``chunk`` columns), the determinant.
``clnp_la_cholpanel``, ``clnp_la_cholfin``
                   Blocked Cholesky (lower, GEMM trailing update): diagonal block and the
                   rows below it; the output with zeros (NaN for a failed matrix).
``clnp_la_rhsswap``, ``clnp_la_trblk``
                   Blocked solve from LU factors: pivots on the right-hand sides, then the
                   diagonal blocks of ``L``/``U`` (the off-diagonal blocks by GEMM).
``clnp_la_eig``    (complex only) General eigensolver: Householder Hessenberg reduction,
                   single-shift complex QR (Wilkinson shifts, exceptional shifts every 10
                   iterations) to Schur form ``T`` with Schur vectors ``Z``, eigenvectors of
                   ``T`` by back substitution (``ztrevc``), ``V = Z X`` normalized to unit norm
                   with the largest component real.

Matrices are scaled by ``1 / max|a_ij|`` in the eigen and singular value kernels (and the
values scaled back), so entries near the overflow threshold do not overflow sums of squares.
Iteration counts are bounded (NaN input terminates with NaN output).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LINALG_DTYPES = tuple(np.dtype(n) for n in ("float32", "float64", "complex64", "complex128"))


@dataclass(frozen=True)
class LinalgSpec:
    dtype: np.dtype          # one of LINALG_DTYPES
    group: int               # work-group size LS (a power of two)


_I32, _I64 = np.dtype(np.int32), np.dtype(np.int64)

# Argument layout per kernel: i = int, l = long, M = strided matrix (buffer + 5 longs),
# V = strided vector (buffer + 4 longs), B = plain buffer.
_SIGS = {
    "chol": "iiilMMBB",
    "getrf": "iiMBBBBBB",
    "getrs": "iiiiMVMB",
    "lupanel": "iiiBB",
    "luswap": "iiiiBB",
    "lutrsm": "iiiiB",
    "lustat": "iBBBBBB",
    "rhsswap": "iiiiVB",
    "cholpanel": "iiiBB",
    "cholfin": "iiiBBM",
    "trblk": "iiiiiiiMB",
    "qr": "iiiiiilMMMB",
    "eigh": "iiillMVMBBB",
    "svd": "iiiiillMVMMBBB",
    "eig": "iiilMVMBB",
}
KERNELS = tuple(_SIGS)


def kernel_argtypes(kernel: str) -> list:
    out: list = []
    for ch in _SIGS[kernel]:
        out += {"i": [_I32], "l": [_I64], "M": [None] + [_I64] * 5, "V": [None] + [_I64] * 4,
                "B": [None]}[ch]
    return out


def render_linalg(spec: LinalgSpec, kernel: str) -> tuple[str, str, list]:
    """``(source, kernel name, scalar arg dtypes)``; every kernel of a spec shares one
    source (one program build per dtype and group size)."""
    if kernel not in _SIGS or (kernel == "eig" and spec.dtype.kind != "c"):
        raise ValueError(f"unknown linalg kernel {kernel!r} for {spec.dtype}")
    return render_source(spec), f"clnp_la_{kernel}", kernel_argtypes(kernel)


def render_source(spec: LinalgSpec) -> str:
    d = np.dtype(spec.dtype)
    if d not in LINALG_DTYPES:
        raise ValueError(f"linalg kernels do not support {d}")
    g = int(spec.group)
    if g < 1 or g & (g - 1):
        raise ValueError(f"work-group size must be a power of two; got {g}")
    double = d in (np.float64, np.complex128)
    cplx = d.kind == "c"
    real = "double" if double else "float"
    T = real + ("2" if cplx else "")
    head = [f"// clnp linalg program ({d}, LS={g})"]
    if double:
        head.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    head += [
        f"#define LS {g}",
        f"#define CPLX {int(cplx)}",
        f"typedef {T} T;",
        f"typedef {real} RT;",
        f"#define EPS {'DBL_EPSILON' if double else 'FLT_EPSILON'}",
        f"#define SAFMIN {'DBL_MIN' if double else 'FLT_MIN'}",
        f"#define BIGNUM {'1e250' if double else '1e30f'}",
    ]
    return "\n".join(head) + _PRELUDE + _COMMON + _KERNELS + (_EIG if cplx else "")


_PRELUDE = r"""
#if CPLX
inline T la_mul(T a, T b) { return (T)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
inline T la_conj(T a) { return (T)(a.x, -a.y); }
inline RT la_re(T a) { return a.x; }
inline RT la_im(T a) { return a.y; }
inline RT la_abs2(T a) { return a.x * a.x + a.y * a.y; }
inline RT la_abs(T a) { return hypot(a.x, a.y); }
inline RT la_abs1(T a) { return fabs(a.x) + fabs(a.y); }
inline RT la_amax(T a) { return fmax(fabs(a.x), fabs(a.y)); }
inline T la_fromr(RT r) { return (T)(r, (RT)0); }
inline int la_iszero(T a) { return a.x == 0 && a.y == 0; }
inline int la_isnan(T a) { return isnan(a.x) || isnan(a.y); }
inline T la_divr(T a, RT r) { return (T)(a.x / r, a.y / r); }
inline T la_div(T a, T b) {
  /* Smith's algorithm: no overflow for large |b| */
  if (fabs(b.x) >= fabs(b.y)) {
    const RT r = b.y / b.x, den = b.x + b.y * r;
    return (T)((a.x + a.y * r) / den, (a.y - a.x * r) / den);
  }
  const RT r = b.x / b.y, den = b.x * r + b.y;
  return (T)((a.x * r + a.y) / den, (a.y * r - a.x) / den);
}
inline T la_sqrt(T z) {
  const RT r = hypot(z.x, z.y);
  if (r == 0) return (T)(0, 0);
  const RT a = sqrt((r + fabs(z.x)) * (RT)0.5);
  if (z.x >= 0) return (T)(a, z.y / (2 * a));
  return (T)(fabs(z.y) / (2 * a), copysign(a, z.y));
}
#else
inline T la_mul(T a, T b) { return a * b; }
inline T la_conj(T a) { return a; }
inline RT la_re(T a) { return a; }
inline RT la_im(T a) { return (RT)0; }
inline RT la_abs2(T a) { return a * a; }
inline RT la_abs(T a) { return fabs(a); }
inline RT la_abs1(T a) { return fabs(a); }
inline RT la_amax(T a) { return fabs(a); }
inline T la_fromr(RT r) { return r; }
inline int la_iszero(T a) { return a == 0; }
inline int la_isnan(T a) { return isnan(a); }
inline T la_div(T a, T b) { return a / b; }
inline T la_divr(T a, RT r) { return a / r; }
#endif
#define CZERO la_fromr((RT)0)
#define CONE la_fromr((RT)1)

/* the launch always uses LS items per group: lets GPU compilers budget registers */
#define KATTR __attribute__((reqd_work_group_size(LS, 1, 1)))
#define PFOR(i, a, b) for (int i = (a) + lid; i < (b); i += LS)
#if LS > 1
#define BAR() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
#else
#define BAR()
#endif

#define MAT_IN(X) __global const T *X, const long X##_off, const long X##_sb0, \
    const long X##_sb1, const long X##_sr, const long X##_sc
#define MAT_OUT(X) __global T *X, const long X##_off, const long X##_sb0, \
    const long X##_sb1, const long X##_sr, const long X##_sc
#define VEC(TY, X) __global TY *X, const long X##_off, const long X##_sb0, \
    const long X##_sb1, const long X##_s
#define AT(X) (X + X##_off + (long)b0 * X##_sb0 + (long)b1 * X##_sb1)
#define PROLOGUE const int lid = get_local_id(0); const int b = get_group_id(1); \
    const int b0 = b / nb1, b1 = b - b0 * nb1
"""

_COMMON = r"""
/* ---- group reductions: every item calls them (uniform control flow). Their first barrier
   also fences global memory: callers read global data before the reduction and overwrite it
   after (la_larfg reads x[0] that item 0 then replaces; la_lu_panel reads the pivot column
   that the row swap then rewrites), and a local fence alone leaves those reads and writes
   unordered between items (a data race under Oclgrind, tests/robust/test_oclgrind.py). */
inline RT la_gsum(RT v, __local RT *red, const int lid) {
#if LS > 1
  red[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  for (int s = LS / 2; s > 0; s >>= 1) {
    if (lid < s) red[lid] += red[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  v = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
#endif
  return v;
}

inline RT la_gmax(RT v, __local RT *red, const int lid) {
#if LS > 1
  red[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  for (int s = LS / 2; s > 0; s >>= 1) {
    if (lid < s) red[lid] = fmax(red[lid], red[lid + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  v = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
#endif
  return v;
}

/* index of the largest v (the smallest index among ties); n when no item has one */
inline int la_gargmax(RT v, int idx, __local RT *red, __local int *ired, const int lid) {
#if LS > 1
  red[lid] = v;
  ired[lid] = idx;
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  for (int s = LS / 2; s > 0; s >>= 1) {
    if (lid < s) {
      const RT o = red[lid + s];
      const int oi = ired[lid + s];
      if (o > red[lid] || (o == red[lid] && oi < ired[lid])) { red[lid] = o; ired[lid] = oi; }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  idx = ired[0];
  barrier(CLK_LOCAL_MEM_FENCE);
#endif
  return idx;
}

/* powers of two s1, s2 with mx * s1 * s2 in [1, 2) (two factors: 2^-e alone overflows for
   subnormal mx); 1 and 1 when mx is 0 or not finite. Returns 2^e (1 in those cases). */
inline RT la_pow2(const RT mx, RT *s1, RT *s2) {
  if (!(mx > 0) || !isfinite(mx)) { *s1 = 1; *s2 = 1; return 1; }
  const int e = ilogb(mx);
  *s1 = ldexp((RT)1, -(e / 2));
  *s2 = ldexp((RT)1, -(e - e / 2));
  return ldexp((RT)1, e);
}

/* max |a_ij| of a strided matrix (rows [0, m), columns [0, n); lower triangle only when
   tri) as power-of-two scale factors (la_pow2); returns the factor that undoes them */
inline RT la_scale_of(__global const T *x, const long sr, const long sc, const int m,
                      const int n, const int tri, __local RT *red, const int lid, RT *s1,
                      RT *s2) {
  RT mx = 0;
  for (int i = 0; i < m; ++i) {
    const int je = tri ? i + 1 : n;
    PFOR(j, 0, je) mx = fmax(mx, la_amax(x[i * sr + j * sc]));
  }
  mx = la_gmax(mx, red, lid);
  return la_pow2(mx, s1, s2);
}

/* Householder reflector (LAPACK zlarfg) for the contiguous vector x[0..len): afterwards
   x[0] = beta (real), x[1..] = v (v_0 = 1 implicit) and H^H x_old = beta e_1 with
   H = I - tau v v^H. Returns tau (every item gets it). */
inline T la_larfg(const int len, __global T *x, __local RT *red, const int lid) {
  const T alpha = x[0];
  RT mx = 0;
  PFOR(i, 1, len) mx = fmax(mx, la_amax(x[i]));
  mx = la_gmax(mx, red, lid);
  RT s1, s2;
  const RT big = la_pow2(mx, &s1, &s2);
  RT ss = 0;
  PFOR(i, 1, len) ss += la_abs2(x[i] * s1 * s2);
  ss = la_gsum(ss, red, lid);
  const RT xnorm = (mx > 0 && isfinite(mx)) ? big * sqrt(ss) : mx;
  T tau = CZERO;
  if (!(xnorm == 0 && la_im(alpha) == 0)) {
    const RT beta = -copysign(hypot(la_abs(alpha), xnorm), la_re(alpha));
    tau = (la_fromr(beta) - alpha) * ((RT)1 / beta);
    const T scal = la_div(CONE, alpha - la_fromr(beta));
    PFOR(i, 1, len) x[i] = la_mul(x[i], scal);
    if (lid == 0) x[0] = la_fromr(beta);
  }
  BAR();
  return tau;
}

/* columns [c0, c1) of the column-major block at a (column c at a + c * lda, rows [0, len))
   times (I - tau v v^H) from the left; v[0] = 1 implicit. No barrier. */
inline void la_reflect_cols(const int len, __global const T *v, const T tau, __global T *a,
                            const int lda, const int c0, const int c1, const int lid) {
  if (la_iszero(tau)) return;
  PFOR(c, c0, c1) {
    __global T *col = a + (long)c * lda;
    T s = col[0];
    for (int r = 1; r < len; ++r) s += la_mul(la_conj(v[r]), col[r]);
    s = la_mul(tau, s);
    col[0] -= s;
    for (int r = 1; r < len; ++r) col[r] -= la_mul(v[r], s);
  }
}

/* Householder QR of the column-major m x n matrix a (LAPACK geqr2) */
inline void la_geqrf(const int m, const int n, __global T *a, const int lda, __global T *tau,
                     __local RT *red, const int lid) {
  const int k = min(m, n);
  for (int j = 0; j < k; ++j) {
    __global T *col = a + (long)j * lda + j;
    const T t = la_larfg(m - j, col, red, lid);
    if (lid == 0) tau[j] = t;
    la_reflect_cols(m - j, col, la_conj(t), col, lda, 1, n - j, lid);
    BAR();
  }
}

/* the first qc columns of Q = H_0 ... H_{k-1} into the column-major q (LAPACK ung2r) */
inline void la_orgqr(const int m, const int k, const int qc, __global const T *a, const int lda,
                     __global const T *tau, __global T *q, const int ldq, const int lid) {
  for (int c = 0; c < qc; ++c) PFOR(r, 0, m) q[(long)c * ldq + r] = (r == c) ? CONE : CZERO;
  BAR();
  for (int j = k - 1; j >= 0; --j) {
    la_reflect_cols(m - j, a + (long)j * lda + j, tau[j], q + j, ldq, j, qc, lid);
    BAR();
  }
}

/* position of player t in round r of a round-robin over N players (N even) */
inline int la_rr(const int t, const int r, const int N) {
  return t == 0 ? 0 : 1 + (t - 1 + r) % (N - 1);
}

/* sort key: ascending order with NaN last (desc: descending with NaN last) */
inline RT la_key(RT v, const int desc) {
  if (isnan(v)) return INFINITY;
  return desc ? -v : v;
}
"""

_KERNELS = r"""
__kernel KATTR void clnp_la_chol(const int n, const int nb1, const int upper, const long ws,
                           MAT_IN(X), MAT_OUT(O), __global T *work, __global int *info)
{
  PROLOGUE;
  __local int bad;
  __global const T *x = AT(X);
  __global T *o = AT(O);
  __global T *w = work + (long)b * ws;
  /* w's upper triangle: U-side view of the chosen triangle of x */
  for (int i = 0; i < n; ++i) {
    PFOR(j, i, n) w[i * n + j] = upper ? x[i * X_sr + j * X_sc] : la_conj(x[j * X_sr + i * X_sc]);
  }
  if (lid == 0) bad = 0;
  BAR();
  for (int k = 0; k < n; ++k) {
    if (lid == 0) {
      const RT dk = la_re(w[k * n + k]);
      if (!(dk > 0) || !isfinite(dk)) bad |= dk <= 0 ? 2 : 1;
      else w[k * n + k] = la_fromr(sqrt(dk));
    }
    BAR();
    const RT inv = (RT)1 / la_re(w[k * n + k]);
    PFOR(j, k + 1, n) w[k * n + j] *= inv;
    BAR();
    for (int i = k + 1; i < n; ++i) {
      const T u = la_conj(w[k * n + i]);
      PFOR(j, i, n) w[i * n + j] -= la_mul(u, w[k * n + j]);
    }
    BAR();
  }
  const int failed = bad;
  if (lid == 0) info[b] = failed;
  const T nanv = la_fromr(NAN);
  for (int i = 0; i < n; ++i) {
    PFOR(j, 0, n) {
      T v;
      if (failed) v = nanv;
      else if (upper) v = j >= i ? w[i * n + j] : CZERO;
      else v = j <= i ? la_conj(w[j * n + i]) : CZERO;
      o[i * O_sr + j * O_sc] = v;
    }
  }
}

/* LU with partial pivoting of the columns [c0, c1) of the dense n x n matrix w, rows
   [c0, n) (LAPACK getf2 on a panel): pivots ("|re| + |im|", first maximum) and their row
   swaps stay inside the panel; pv[j] gets the pivot row of column j. */
inline void la_lu_panel(const int n, const int c0, const int c1, __global T *w,
                        __global int *pv, __local RT *red, __local int *ired, const int lid) {
  for (int k = c0; k < c1; ++k) {
    RT best = -1;
    int bi = n;
    PFOR(i, k, n) {
      /* a NaN candidate is a pivot (LAPACK keeps a NaN one): NaN input gives a NaN result,
         not a zero pivot that would report the matrix singular */
      const RT a0 = la_abs1(w[i * n + k]), a = isnan(a0) ? INFINITY : a0;
      if (a > best) { best = a; bi = i; }
    }
    bi = la_gargmax(best, bi, red, ired, lid);
    if (bi >= n) bi = k;
    if (lid == 0) pv[k] = bi;
    if (bi != k) {
      PFOR(j, c0, c1) {
        const T t = w[k * n + j];
        w[k * n + j] = w[bi * n + j];
        w[bi * n + j] = t;
      }
    }
    BAR();
    const T dk = w[k * n + k];
    if (!la_iszero(dk)) PFOR(i, k + 1, n) w[i * n + k] = la_div(w[i * n + k], dk);
    BAR();
#if LS == 1
    for (int i = k + 1; i < n; ++i) {
      const T l = w[i * n + k];
      PFOR(j, k + 1, c1) w[i * n + j] -= la_mul(l, w[k * n + j]);
    }
#else
    /* rows x columns split over the items: a tall panel has few columns */
    const int cols = c1 - k - 1, cnt = (n - k - 1) * cols;
    for (int t = lid; t < cnt; t += LS) {
      const int i = k + 1 + t / cols, j = k + 1 + t % cols;
      w[i * n + j] -= la_mul(w[i * n + k], w[k * n + j]);
    }
#endif
    BAR();
  }
}

/* det, sign and log|det| from the LU diagonal and the pivot parity (item 0) */
inline void la_lu_stats(const int n, __global const T *w, __global const int *pv,
                        __global T *det, __global T *sgn, __global RT *lad,
                        __global int *info) {
  T dt = CONE, sg = CONE;
  RT la = 0;
  int odd = 0, zero = 0;
  for (int k = 0; k < n; ++k) {
    if (pv[k] != k) odd ^= 1;
    const T dk = w[k * n + k];
    if (!zero && la_iszero(dk)) zero = k + 1;
    const RT a = la_abs(dk);
    dt = la_mul(dt, dk);
    la += log(a);
    sg = a == 0 ? CZERO : la_mul(sg, dk * ((RT)1 / a));
  }
  if (odd) { dt = -dt; sg = -sg; }
  *det = dt;
  *sgn = sg;
  *lad = la;
  *info = zero;
}

__kernel KATTR void clnp_la_getrf(const int n, const int nb1, MAT_IN(X), __global T *lu,
                                  __global int *piv, __global T *det, __global T *sgn,
                                  __global RT *lad, __global int *info)
{
  PROLOGUE;
  __local RT red[LS];
  __local int ired[LS];
  __global const T *x = AT(X);
  __global T *w = lu + (long)b * n * n;
  __global int *pv = piv + (long)b * n;
  for (int i = 0; i < n; ++i) PFOR(j, 0, n) w[i * n + j] = x[i * X_sr + j * X_sc];
  BAR();
  la_lu_panel(n, 0, n, w, pv, red, ired, lid);
  if (lid == 0) la_lu_stats(n, w, pv, det + b, sgn + b, lad + b, info + b);
}

/* ---- blocked LU (clnp's host loop: panel, swaps, block row of U, GEMM update) on the dense
   batch lu (n x n per matrix); kb = panel width at column k */
__kernel KATTR void clnp_la_lupanel(const int n, const int k, const int kb, __global T *lu,
                                    __global int *piv)
{
  const int lid = get_local_id(0);
  const int b = get_group_id(1);
  __local RT red[LS];
  __local int ired[LS];
  la_lu_panel(n, k, k + kb, lu + (long)b * n * n, piv + (long)b * n, red, ired, lid);
}

/* the panel's row swaps applied to every column outside it; item t owns `chunk` columns */
__kernel KATTR void clnp_la_luswap(const int n, const int k, const int kb, const int chunk,
                                   __global T *lu, __global const int *piv)
{
  const int t = get_global_id(0);
  const int b = get_group_id(1);
  __global T *w = lu + (long)b * n * n;
  __global const int *pv = piv + (long)b * n;
  const int q0 = t * chunk, q1 = min(q0 + chunk, n - kb);
  for (int j = k; j < k + kb; ++j) {
    const int p = pv[j];
    if (p == j) continue;
    for (int q = q0; q < q1; ++q) {
      const int c = q < k ? q : q + kb;
      const T tmp = w[j * n + c];
      w[j * n + c] = w[p * n + c];
      w[p * n + c] = tmp;
    }
  }
}

/* U12 = L11^-1 A12 (L11 unit lower kb x kb at (k, k)) for the columns right of the panel */
__kernel KATTR void clnp_la_lutrsm(const int n, const int k, const int kb, const int chunk,
                                   __global T *lu)
{
  const int t = get_global_id(0);
  const int b = get_group_id(1);
  __global T *w = lu + (long)b * n * n;
  const int c0 = k + kb + t * chunk, c1 = min(c0 + chunk, n);
  for (int i = k + 1; i < k + kb; ++i) {
    for (int r = k; r < i; ++r) {
      const T l = w[i * n + r];
      for (int c = c0; c < c1; ++c) w[i * n + c] -= la_mul(l, w[r * n + c]);
    }
  }
}

__kernel KATTR void clnp_la_lustat(const int n, __global const T *lu, __global const int *piv,
                                   __global T *det, __global T *sgn, __global RT *lad,
                                   __global int *info)
{
  const int b = get_group_id(1);
  if (get_local_id(0) == 0)
    la_lu_stats(n, lu + (long)b * n * n, piv + (long)b * n, det + b, sgn + b, lad + b,
                info + b);
}

/* ---- blocked Cholesky (lower factor in the dense n x n work w, row-major): the diagonal
   block [k, k + kb) factored by item 0's group, then the rows below solved against it
   (L21 = A21 L11^-H, rows in parallel); failures or flag[b]: 2 for a pivot <= 0 (not
   positive definite), 1 for a NaN/inf one */
__kernel KATTR void clnp_la_cholpanel(const int n, const int k, const int kb, __global T *lu,
                                      __global int *flag)
{
  const int lid = get_local_id(0);
  const int b = get_group_id(1);
  __local int bad;
  __global T *w = lu + (long)b * n * n;
  const int k1 = k + kb;
  if (lid == 0) bad = 0;
  BAR();
  for (int j = k; j < k1; ++j) {
    if (lid == 0) {
      const RT dj = la_re(w[j * n + j]);
      if (!(dj > 0) || !isfinite(dj)) bad |= dj <= 0 ? 2 : 1;
      else w[j * n + j] = la_fromr(sqrt(dj));
    }
    BAR();
    const RT inv = (RT)1 / la_re(w[j * n + j]);
    PFOR(i, j + 1, k1) w[i * n + j] *= inv;
    BAR();
    for (int i = j + 1; i < k1; ++i) {
      const T l = w[i * n + j];
      PFOR(c, j + 1, i + 1) w[i * n + c] -= la_mul(l, la_conj(w[c * n + j]));
    }
    BAR();
  }
  PFOR(r, k1, n) {
    __global T *row = w + (long)r * n;
    for (int j = k; j < k1; ++j) {
      T v = row[j];
      for (int i = k; i < j; ++i) v -= la_mul(row[i], la_conj(w[j * n + i]));
      row[j] = v * ((RT)1 / la_re(w[j * n + j]));
    }
  }
  if (lid == 0 && bad) flag[b] |= bad;
}

/* the factor written out: L (or U = L^H when upper) with zeros, all NaN where flag is set */
__kernel KATTR void clnp_la_cholfin(const int n, const int nb1, const int upper,
                                    __global const T *lu, __global const int *flag,
                                    MAT_OUT(O))
{
  PROLOGUE;
  __global const T *w = lu + (long)b * n * n;
  __global T *o = AT(O);
  const int failed = flag[b];
  const T nanv = la_fromr(NAN);
  for (int i = 0; i < n; ++i) {
    PFOR(j, 0, n) {
      T v;
      if (failed) v = nanv;
      else if (upper) v = j >= i ? la_conj(w[j * n + i]) : CZERO;
      else v = j <= i ? w[i * n + j] : CZERO;
      o[i * O_sr + j * O_sc] = v;
    }
  }
}

/* ---- blocked solve from LU factors: b is dense n x k per matrix (the output) */
/* row swaps of the right-hand sides; item t owns `chunk` columns */
__kernel KATTR void clnp_la_rhsswap(const int n, const int k, const int nb1, const int chunk,
                                    VEC(const int, P), __global T *out)
{
  const int t = get_global_id(0);
  const int b = get_group_id(1);
  const int b0 = b / nb1, b1 = b - b0 * nb1;
  __global const int *pv = AT(P);
  __global T *w = out + (long)b * n * k;
  const int c0 = t * chunk, c1 = min(c0 + chunk, k);
  for (int r = 0; r < n; ++r) {
    const int p = pv[r * P_s];
    if (p == r) continue;
    for (int c = c0; c < c1; ++c) {
      const T tmp = w[r * k + c];
      w[r * k + c] = w[p * k + c];
      w[p * k + c] = tmp;
    }
  }
}

/* rows [i0, i1) of X solved against the diagonal block of L (unit lower, upper = 0) or U
   (upper = 1); the off-diagonal blocks were applied by GEMM */
__kernel KATTR void clnp_la_trblk(const int n, const int k, const int nb1, const int i0,
                                  const int i1, const int upper, const int chunk, MAT_IN(L),
                                  __global T *out)
{
  const int t = get_global_id(0);
  const int b = get_group_id(1);
  const int b0 = b / nb1, b1 = b - b0 * nb1;
  __global const T *lu = AT(L);
  __global T *w = out + (long)b * n * k;
  const int c0 = t * chunk, c1 = min(c0 + chunk, k);
  if (!upper) {
    for (int i = i0 + 1; i < i1; ++i) {
      for (int r = i0; r < i; ++r) {
        const T l = lu[i * L_sr + r * L_sc];
        for (int c = c0; c < c1; ++c) w[i * k + c] -= la_mul(l, w[r * k + c]);
      }
    }
  } else {
    for (int i = i1 - 1; i >= i0; --i) {
      for (int r = i + 1; r < i1; ++r) {
        const T u = lu[i * L_sr + r * L_sc];
        for (int c = c0; c < c1; ++c) w[i * k + c] -= la_mul(u, w[r * k + c]);
      }
      const T d = lu[i * L_sr + i * L_sc];
      for (int c = c0; c < c1; ++c) w[i * k + c] = la_div(w[i * k + c], d);
    }
  }
}

__kernel KATTR void clnp_la_getrs(const int n, const int k, const int nb1, const int ident,
                            MAT_IN(L), VEC(const int, P), MAT_IN(X), __global T *out)
{
  PROLOGUE;
  __global const T *lu = AT(L);
  __global const int *pv = AT(P);
  __global const T *x = AT(X);
  __global T *w = out + (long)b * n * k;
  /* every item owns whole columns of the right-hand side: no barrier anywhere */
  for (int i = 0; i < n; ++i) {
    if (ident) { PFOR(j, 0, k) w[i * k + j] = i == j ? CONE : CZERO; }
    else { PFOR(j, 0, k) w[i * k + j] = x[i * X_sr + j * X_sc]; }
  }
  for (int r = 0; r < n; ++r) {
    const int p = pv[r * P_s];
    if (p != r) {
      PFOR(j, 0, k) {
        const T t = w[r * k + j];
        w[r * k + j] = w[p * k + j];
        w[p * k + j] = t;
      }
    }
  }
  for (int c = 0; c < n; ++c) {
    for (int i = c + 1; i < n; ++i) {
      const T l = lu[i * L_sr + c * L_sc];
      if (!la_iszero(l)) PFOR(j, 0, k) w[i * k + j] -= la_mul(l, w[c * k + j]);
    }
  }
  for (int c = n - 1; c >= 0; --c) {
    const T d = lu[c * L_sr + c * L_sc];
    PFOR(j, 0, k) w[c * k + j] = la_div(w[c * k + j], d);
    for (int i = 0; i < c; ++i) {
      const T u = lu[i * L_sr + c * L_sc];
      if (!la_iszero(u)) PFOR(j, 0, k) w[i * k + j] -= la_mul(u, w[c * k + j]);
    }
  }
}

__kernel KATTR void clnp_la_qr(const int m, const int n, const int nb1, const int qc, const int rr,
                         const int want_q, const long ws, MAT_IN(X), MAT_OUT(Q), MAT_OUT(R),
                         __global T *work)
{
  PROLOGUE;
  __local RT red[LS];
  const int k = min(m, n);
  __global const T *x = AT(X);
  __global T *a = work + (long)b * ws;
  __global T *q = a + (long)m * n;
  __global T *tau = q + (long)m * qc;
  for (int c = 0; c < n; ++c) PFOR(r, 0, m) a[(long)c * m + r] = x[r * X_sr + c * X_sc];
  BAR();
  la_geqrf(m, n, a, m, tau, red, lid);
  __global T *ro = AT(R);
  for (int i = 0; i < rr; ++i)
    PFOR(j, 0, n) ro[i * R_sr + j * R_sc] = j >= i ? a[(long)j * m + i] : CZERO;
  /* no barrier inside a conditional (PoCL mishandles them): qc = 0 when Q is not wanted */
  la_orgqr(m, want_q ? k : 0, want_q ? qc : 0, a, m, tau, q, m, lid);
  __global T *qo = AT(Q);
  for (int r = 0; r < (want_q ? m : 0); ++r)
    PFOR(c, 0, qc) qo[r * Q_sr + c * Q_sc] = q[(long)c * m + r];
}

__kernel KATTR void clnp_la_eigh(const int n, const int nb1, const int want_v, const long ws,
                           const long rws, MAT_IN(X), VEC(RT, E), MAT_OUT(V),
                           __global T *work, __global RT *rwork, __global int *info)
{
  PROLOGUE;
  __local RT red[LS];
  __local int sh_go, sh_m, sh_ilo;
  int nan_in = 0, stuck = 0;   /* item 0's: NaN input, an eigenvalue that did not converge */
  __global const T *x = AT(X);
  __global T *w = work + (long)b * ws;     /* n x n, the full Hermitian matrix */
  __global T *zt = w + (long)n * n;        /* n x n, Q^T: row c = column c of Q */
  __global T *vv = zt + (long)n * n;       /* n, the current reflector */
  __global T *xw = vv + n;                 /* n */
  __global T *tau = xw + n;                /* n */
  __global RT *d = rwork + (long)b * rws;  /* diagonal, then eigenvalues */
  __global RT *e = d + n;                  /* sub-diagonal: e[i] couples i and i + 1 */
  __global RT *cs = e + n;
  __global RT *sn = cs + n;
  RT s1, s2;
  const RT back = la_scale_of(x, X_sr, X_sc, n, n, 1, red, lid, &s1, &s2);
  for (int i = 0; i < n; ++i) {
    PFOR(j, 0, n) {
      T v = j <= i ? x[i * X_sr + j * X_sc] : la_conj(x[j * X_sr + i * X_sc]);
      if (i == j) v = la_fromr(la_re(v));
      w[i * n + j] = v * s1 * s2;
    }
  }
  BAR();
  /* tridiagonalization: reflector j acts on rows/columns j + 1 .. n - 1 */
  for (int j = 0; j < n - 1; ++j) {
    const int p = n - j - 1;
    __global T *a22 = w + (long)(j + 1) * n + j + 1;
    PFOR(r, 0, p) vv[r] = w[(j + 1 + r) * n + j];
    BAR();
    const T t = la_larfg(p, vv, red, lid);
    if (lid == 0) {
      tau[j] = t;
      e[j] = la_re(vv[0]);
      d[j] = la_re(w[j * n + j]);
      vv[0] = CONE;
    }
    BAR();
    /* (unconditional: with tau = 0 every update below is zero) */
    {
      /* x = tau A22 v (A22 Hermitian: (A v)_c = sum_r conj(A_rc) v_r) */
#if LS == 1
      /* row by row: unit-stride axpys that vectorize */
      PFOR(c, 0, p) xw[c] = CZERO;
      for (int r = 0; r < p; ++r) {
        const T vr = vv[r];
        __global const T *row = a22 + (long)r * n;
        PFOR(c, 0, p) xw[c] += la_mul(la_conj(row[c]), vr);
      }
#else
      /* one dot product per item: accumulating xw[c] across a serial loop around the split
         loop is miscompiled by PoCL's work-group vectorizer */
      PFOR(c, 0, p) {
        __global const T *row = a22 + (long)c * n;
        T acc = CZERO;
        for (int r = 0; r < p; ++r) acc += la_mul(row[r], vv[r]);
        xw[c] = acc;
      }
#endif
      T s = CZERO;
      PFOR(c, 0, p) {
        const T xc = la_mul(t, xw[c]);
        xw[c] = xc;
        s += la_mul(la_conj(xc), vv[c]);
      }
#if CPLX
      s = (T)(la_gsum(s.x, red, lid), la_gsum(s.y, red, lid));
#else
      s = la_gsum(s, red, lid);
#endif
      /* w = x - (tau / 2) (x^H v) v; A22 -= v w^H + w v^H */
      const T alpha = la_mul(t, s) * (RT)-0.5;
      PFOR(c, 0, p) xw[c] += la_mul(alpha, vv[c]);
      BAR();
      for (int r = 0; r < p; ++r) {
        const T vr = vv[r], wr = xw[r];
        __global T *row = a22 + (long)r * n;
        PFOR(c, 0, p) row[c] -= la_mul(vr, la_conj(xw[c])) + la_mul(wr, la_conj(vv[c]));
      }
    }
    /* keep v in column j for forming Q */
    PFOR(r, 1, p) w[(j + 1 + r) * n + j] = vv[r];
    BAR();
  }
  if (lid == 0 && n > 0) {
    d[n - 1] = la_re(w[(n - 1) * n + n - 1]);
    e[n - 1] = 0;
  }
  /* (barriers never sit inside a conditional: PoCL mishandles them; loops run 0 times) */
  for (int c = 0; c < (want_v ? n : 0); ++c)
    PFOR(r, 0, n) zt[(long)c * n + r] = r == c ? CONE : CZERO;
  BAR();
  for (int j = want_v ? n - 2 : -1; j >= 0; --j) {
    const int p = n - j - 1;
    PFOR(r, 1, p) vv[r] = w[(j + 1 + r) * n + j];
    BAR();
    la_reflect_cols(p, vv, tau[j], zt + j + 1, n, j + 1, n, lid);
    BAR();
  }
  BAR();
  /* NaN anywhere: every eigenvalue is NaN, skip the iteration */
  if (lid == 0) {
    for (int i = 0; i < n; ++i) nan_in |= isnan(d[i]) || isnan(e[i]);
    if (nan_in) for (int i = 0; i < n; ++i) { d[i] = NAN; e[i] = 0; }
  }
  BAR();
  /* implicit QL with Wilkinson shifts (tql2); item 0 runs the scalar recurrence, the group
     applies the rotations of each sweep to the rows of Q^T */
  for (int l = 0; l < n; ++l) {
    int iter = 0;
    for (;;) {
      if (lid == 0) {
        int m = l;
        for (; m < n - 1; ++m) {
          const RT dd = fabs(d[m]) + fabs(d[m + 1]);
          if (fabs(e[m]) <= EPS * dd) break;
        }
        const int go = m != l && iter < 30;
        if (m != l && iter >= 30 && !nan_in) stuck = 1;
        int ilo = m;
        if (go) {
          RT g = (d[l + 1] - d[l]) / (2 * e[l]);
          RT r = hypot(g, (RT)1);
          g = d[m] - d[l] + e[l] / (g + copysign(r, g));
          RT s = 1, c = 1, p = 0;
          int early = 0;
          for (int i = m - 1; i >= l; --i) {
            const RT f = s * e[i], bb = c * e[i];
            r = hypot(f, g);
            e[i + 1] = r;
            if (r == 0) { d[i + 1] -= p; e[m] = 0; early = 1; break; }
            s = f / r;
            c = g / r;
            g = d[i + 1] - p;
            r = (d[i] - g) * s + 2 * c * bb;
            p = s * r;
            d[i + 1] = g + p;
            g = c * r - bb;
            cs[i] = c;
            sn[i] = s;
            ilo = i;
          }
          if (!early) { d[l] -= p; e[l] = g; e[m] = 0; }
        }
        sh_go = go;
        sh_m = m;
        sh_ilo = ilo;
      }
      BAR();
      const int go = sh_go, mm = sh_m, ilo = sh_ilo;
      BAR();
      if (!go) break;
      ++iter;
      if (want_v) {
        for (int i = mm - 1; i >= ilo; --i) {
          const RT c = cs[i], s = sn[i];
          __global T *z0 = zt + (long)i * n;
          __global T *z1 = z0 + n;
          PFOR(k, 0, n) {
            const T f = z1[k], zi = z0[k];
            z1[k] = zi * s + f * c;
            z0[k] = zi * c - f * s;
          }
        }
      }
      BAR();
    }
  }
  /* ascending order: rank of each eigenvalue (ties by index), stored in sn */
  PFOR(i, 0, n) {
    const RT ki = la_key(d[i], 0);
    int rk = 0;
    for (int j = 0; j < n; ++j) {
      const RT kj = la_key(d[j], 0);
      rk += kj < ki || (kj == ki && j < i);
    }
    sn[rk] = (RT)i;
  }
  BAR();
  if (lid == 0) info[b] = stuck;
  __global RT *eo = AT(E);
  PFOR(c, 0, n) eo[c * E_s] = d[(int)sn[c]] * back;
  if (want_v) {
    __global T *vo = AT(V);
    for (int r = 0; r < n; ++r)
      PFOR(c, 0, n) vo[r * V_sr + c * V_sc] = zt[(long)(int)sn[c] * n + r];
  }
}

__kernel KATTR void clnp_la_svd(const int m, const int n, const int nb1, const int want_uv,
                          const int full, const long ws, const long rws, MAT_IN(X), VEC(RT, S),
                          MAT_OUT(U), MAT_OUT(VH), __global T *work, __global RT *rwork,
                          __global int *info)
{
  PROLOGUE;
  __local RT red[LS];
  __local int sh_rot;
  const int trans = m < n;
  const int M = trans ? n : m, K = trans ? m : n;
  const int qc = full ? M : K;
  __global const T *x = AT(X);
  __global T *wt = work + (long)b * ws;     /* K x M: row c = column c of the tall matrix */
  __global T *vt = wt + (long)K * M;        /* K x K: row c = column c of V */
  __global T *pt = vt + (long)K * K;        /* K x M: sorted normalized columns */
  __global T *qt = pt + (long)K * M;        /* qc x M */
  __global T *tau = qt + (long)qc * M;      /* K */
  __global RT *sig = rwork + (long)b * rws; /* K */
  __global RT *perm = sig + K;              /* K */
  RT s1, s2;
  const RT back = la_scale_of(x, X_sr, X_sc, m, n, 0, red, lid, &s1, &s2);
  for (int c = 0; c < K; ++c) {
    PFOR(r, 0, M) wt[(long)c * M + r] = (trans ? la_conj(x[c * X_sr + r * X_sc])
                                               : x[r * X_sr + c * X_sc]) * s1 * s2;
  }
  for (int c = 0; c < (want_uv ? K : 0); ++c)
    PFOR(r, 0, K) vt[(long)c * K + r] = r == c ? CONE : CZERO;
  BAR();
  const RT tol = sqrt((RT)M) * EPS;
  const int N2 = K + (K & 1);
  for (int sweep = 0; sweep < 60 && K > 1; ++sweep) {
    if (lid == 0) sh_rot = 0;
    BAR();
    int rotated = 0;
    for (int rnd = 0; rnd < N2 - 1; ++rnd) {
      PFOR(pi, 0, N2 / 2) {
        const int a = la_rr(pi, rnd, N2), a2 = la_rr(N2 - 1 - pi, rnd, N2);
        if (a < K && a2 < K) {
          const int p = min(a, a2), q = max(a, a2);
          __global T *wp = wt + (long)p * M;
          __global T *wq = wt + (long)q * M;
          RT al = 0, be = 0;
          T g = CZERO;
          for (int r = 0; r < M; ++r) {
            const T xp = wp[r], xq = wq[r];
            al += la_abs2(xp);
            be += la_abs2(xq);
            g += la_mul(la_conj(xp), xq);
          }
          const RT ag = la_abs(g), nrm = sqrt(al) * sqrt(be);
          /* columns whose squared norm underflows count as zero; a sweep makes progress
             while some rotation has K |cos| |sin| > tol (LAPACK dgesvj): the residue of a
             rank-deficient column stays parallel to another one while it shrinks by eps
             per sweep, so |cos| alone would never converge */
          if (al > SAFMIN && be > SAFMIN && ag > tol * nrm) {
            const T ph = la_divr(g, ag);
            const RT zeta = (be - al) / (2 * ag);
            const RT t = (zeta >= 0 ? (RT)1 : (RT)-1) / (fabs(zeta) + hypot((RT)1, zeta));
            const RT c = (RT)1 / hypot((RT)1, t), s = c * t;
            if ((RT)K * (ag / nrm) * fabs(s) > tol) rotated = 1;
            const T se = ph * s, sce = la_conj(ph) * s;
            for (int r = 0; r < M; ++r) {
              const T xp = wp[r], xq = wq[r];
              wp[r] = xp * c - la_mul(sce, xq);
              wq[r] = la_mul(se, xp) + xq * c;
            }
            if (want_uv) {
              __global T *vp = vt + (long)p * K;
              __global T *vq = vt + (long)q * K;
              for (int r = 0; r < K; ++r) {
                const T xp = vp[r], xq = vq[r];
                vp[r] = xp * c - la_mul(sce, xq);
                vq[r] = la_mul(se, xp) + xq * c;
              }
            }
          }
        }
      }
      BAR();
    }
    if (rotated) sh_rot = 1;
    BAR();
    const int any = sh_rot;
    BAR();
    if (!any) break;
  }
  PFOR(c, 0, K) {
    __global const T *wc = wt + (long)c * M;
    RT s2 = 0;
    for (int r = 0; r < M; ++r) s2 += la_abs2(wc[r]);
    sig[c] = sqrt(s2);
  }
  BAR();
  if (lid == 0) {   /* NaN singular values: LAPACK's SVD reports no convergence */
    int bad = 0;
    for (int c = 0; c < K; ++c) bad |= isnan(sig[c]);
    info[b] = bad;
  }
  PFOR(i, 0, K) {
    const RT ki = la_key(sig[i], 1);
    int rk = 0;
    for (int j = 0; j < K; ++j) {
      const RT kj = la_key(sig[j], 1);
      rk += kj < ki || (kj == ki && j < i);
    }
    perm[rk] = (RT)i;
  }
  BAR();
  __global RT *so = AT(S);
  PFOR(j, 0, K) so[j * S_s] = sig[(int)perm[j]] * back;
  /* the vectors; every loop runs 0 times without want_uv (no barrier in a conditional) */
  const int Kv = want_uv ? K : 0, qv = want_uv ? qc : 0;
  for (int j = 0; j < Kv; ++j) {
    const int c = (int)perm[j];
    const RT sj = sig[c];
    const RT f = sj > 0 ? (RT)1 / sj : (RT)0;
    PFOR(r, 0, M) pt[(long)j * M + r] = wt[(long)c * M + r] * f;
  }
  BAR();
  /* Q R of the normalized columns: Q re-orthogonalizes them, completes the basis and stands
     in for the columns of zero singular values (sorted last); R's diagonal is +-1 there */
  la_geqrf(M, Kv, pt, M, tau, red, lid);
  la_orgqr(M, Kv, qv, pt, M, tau, qt, M, lid);
  for (int j = 0; j < Kv; ++j) {
    const RT rj = la_re(pt[(long)j * M + j]);
    if (rj < 0) PFOR(r, 0, M) qt[(long)j * M + r] = -qt[(long)j * M + r];
  }
  BAR();
  __global T *uo = AT(U);
  __global T *ho = AT(VH);
  if (!want_uv) return;
  if (!trans) {
    for (int r = 0; r < M; ++r) PFOR(j, 0, qc) uo[r * U_sr + j * U_sc] = qt[(long)j * M + r];
    for (int j = 0; j < K; ++j) {
      const long src = (long)(int)perm[j] * K;
      PFOR(c, 0, K) ho[j * VH_sr + c * VH_sc] = la_conj(vt[src + c]);
    }
  } else {
    for (int r = 0; r < K; ++r)
      PFOR(j, 0, K) uo[r * U_sr + j * U_sc] = vt[(long)(int)perm[j] * K + r];
    for (int j = 0; j < qc; ++j)
      PFOR(c, 0, M) ho[j * VH_sr + c * VH_sc] = la_conj(qt[(long)j * M + c]);
  }
}
"""

_EIG = r"""
/* Givens rotation (c real, s complex) with [c s; -conj(s) c] [x; y] = [r; 0] */
inline void la_givens(const T x, const T y, RT *c, T *s) {
  const RT ny = la_abs(y);
  if (ny == 0) { *c = 1; *s = CZERO; return; }
  const RT nx = la_abs(x);
  if (nx == 0) { *c = 0; *s = la_conj(y) * ((RT)1 / ny); return; }
  const RT nrm = hypot(nx, ny);
  *c = nx / nrm;
  *s = la_mul(x * ((RT)1 / nx), la_conj(y)) * ((RT)1 / nrm);
}

__kernel KATTR void clnp_la_eig(const int n, const int nb1, const int want_v, const long ws,
                          MAT_IN(X), VEC(T, E), MAT_OUT(V), __global T *work,
                          __global int *info)
{
  PROLOGUE;
  __local RT red[LS];
  __local int sh_l;
  __local T sh_mu, sh_s;
  __local RT sh_c;
  __global const T *x = AT(X);
  __global T *h = work + (long)b * ws;     /* n x n Hessenberg, then Schur form T */
  __global T *zt = h + (long)n * n;        /* n x n, Z^T: row c = Schur vector c */
  __global T *vs = zt + (long)n * n;       /* n x n: reflector j in row j, then X^T */
  __global T *vt = vs + (long)n * n;       /* n x n: row k = eigenvector k */
  __global T *tau = vt + (long)n * n;      /* n */
  __global T *sv = tau + n;                /* n */
  RT s1, s2;
  const RT back = la_scale_of(x, X_sr, X_sc, n, n, 0, red, lid, &s1, &s2);
  for (int i = 0; i < n; ++i) PFOR(j, 0, n) h[i * n + j] = x[i * X_sr + j * X_sc] * s1 * s2;
  BAR();
  /* Hessenberg reduction: H <- H_j^H H H_j, reflector j on rows/columns j + 1 .. n - 1 */
  for (int j = 0; j < n - 2; ++j) {
    const int p = n - j - 1;
    __global T *v = vs + (long)j * n;
    PFOR(r, 0, p) v[r] = h[(j + 1 + r) * n + j];
    BAR();
    const T t = la_larfg(p, v, red, lid);
    if (lid == 0) tau[j] = t;
    PFOR(r, 0, p) h[(j + 1 + r) * n + j] = r == 0 ? v[0] : CZERO;
    BAR();
    /* (unconditional: with tau = 0 the updates are zero; no barrier in a conditional) */
    {
      PFOR(r, 0, n) {
        __global T *row = h + (long)r * n + j + 1;
        T s = row[0];
        for (int c = 1; c < p; ++c) s += la_mul(row[c], v[c]);
        s = la_mul(s, t);
        row[0] -= s;
        for (int c = 1; c < p; ++c) row[c] -= la_mul(s, la_conj(v[c]));
      }
      BAR();
      const T tc = la_conj(t);
#if LS == 1
      PFOR(c, j + 1, n) sv[c] = h[(j + 1) * n + c];
      for (int r = 1; r < p; ++r) {
        const T vr = la_conj(v[r]);
        __global const T *row = h + (long)(j + 1 + r) * n;
        PFOR(c, j + 1, n) sv[c] += la_mul(vr, row[c]);
      }
      PFOR(c, j + 1, n) sv[c] = la_mul(tc, sv[c]);
#else
      /* one column per item (see the note in clnp_la_eigh) */
      PFOR(c, j + 1, n) {
        T acc = h[(j + 1) * n + c];
        for (int r = 1; r < p; ++r) acc += la_mul(la_conj(v[r]), h[(j + 1 + r) * n + c]);
        sv[c] = la_mul(tc, acc);
      }
#endif
      for (int r = 0; r < p; ++r) {
        const T vr = r == 0 ? CONE : v[r];
        __global T *row = h + (long)(j + 1 + r) * n;
        PFOR(c, j + 1, n) row[c] -= la_mul(vr, sv[c]);
      }
      BAR();
    }
  }
  for (int c = 0; c < (want_v ? n : 0); ++c)
    PFOR(r, 0, n) zt[(long)c * n + r] = r == c ? CONE : CZERO;
  BAR();
  for (int j = want_v ? n - 3 : -1; j >= 0; --j) {
    la_reflect_cols(n - j - 1, vs + (long)j * n, tau[j], zt + j + 1, n, j + 1, n, lid);
    BAR();
  }
  /* NaN anywhere: every eigenvalue is NaN, skip the iteration */
  if (lid == 0) {
    int nan_in = 0, inf_in = 0;
    for (long i = 0; i < (long)n * n; ++i) {
      nan_in |= la_isnan(h[i]);
      inf_in |= !isfinite(h[i].x) || !isfinite(h[i].y);
    }
    if (nan_in) for (int k = 0; k < n; ++k) h[k * n + k] = la_fromr(NAN);
    sh_l = nan_in;
    info[b] = inf_in;   /* NaN or inf input (NumPy refuses both) */
  }
  BAR();
  int hi = sh_l ? 0 : n - 1, iter = 0;
  BAR();
  /* single-shift QR to Schur form (rotations over whole rows/columns: T stays complete) */
  while (hi > 0) {
    if (lid == 0) {
      int l = hi;
      for (; l > 0; --l) {
        const RT tst = la_abs1(h[l * n + l - 1]);
        const RT ref = la_abs1(h[(l - 1) * n + l - 1]) + la_abs1(h[l * n + l]);
        if (tst <= EPS * ref || tst <= SAFMIN) { h[l * n + l - 1] = CZERO; break; }
      }
      if (l < hi && iter >= 60) { h[hi * n + hi - 1] = CZERO; l = hi; }
      sh_l = l;
      if (l < hi) {
        T mu;
        if ((iter + 1) % 10 == 0) {
          mu = h[hi * n + hi] + la_fromr((RT)0.75 * la_abs1(h[hi * n + hi - 1]));
        } else {
          const T a = h[(hi - 1) * n + hi - 1], bq = h[(hi - 1) * n + hi];
          const T c = h[hi * n + hi - 1], dd = h[hi * n + hi];
          const T hm = (a + dd) * (RT)0.5, df = (a - dd) * (RT)0.5;
          const T disc = la_sqrt(la_mul(df, df) + la_mul(bq, c));
          const T e1 = hm + disc, e2 = hm - disc;
          mu = la_abs1(e1 - dd) < la_abs1(e2 - dd) ? e1 : e2;
        }
        sh_mu = mu;
      }
    }
    BAR();
    const int l = sh_l;
    const T mu = sh_mu;
    BAR();
    /* a converged block runs the chase 0 times (no barrier in a conditional) */
    const int kend = l == hi ? l : hi;
    for (int k = l; k < kend; ++k) {
      if (lid == 0) {
        const T xx = k == l ? h[l * n + l] - mu : h[k * n + k - 1];
        const T yy = k == l ? h[(l + 1) * n + l] : h[(k + 1) * n + k - 1];
        RT c;
        T s;
        la_givens(xx, yy, &c, &s);
        sh_c = c;
        sh_s = s;
      }
      BAR();
      const RT c = sh_c;
      const T s = sh_s, s_ = la_conj(s);
      PFOR(j, k > l ? k - 1 : l, n) {
        const T a0 = h[k * n + j], a1 = h[(k + 1) * n + j];
        h[k * n + j] = a0 * c + la_mul(s, a1);
        h[(k + 1) * n + j] = a1 * c - la_mul(s_, a0);
      }
      BAR();
      if (k > l && lid == 0) h[(k + 1) * n + k - 1] = CZERO;
      PFOR(i, 0, min(k + 2, hi) + 1) {
        const T a0 = h[i * n + k], a1 = h[i * n + k + 1];
        h[i * n + k] = a0 * c + la_mul(a1, s_);
        h[i * n + k + 1] = a1 * c - la_mul(a0, s);
      }
      if (want_v) {
        __global T *z0 = zt + (long)k * n;
        __global T *z1 = z0 + n;
        PFOR(i, 0, n) {
          const T a0 = z0[i], a1 = z1[i];
          z0[i] = a0 * c + la_mul(a1, s_);
          z1[i] = a1 * c - la_mul(a0, s);
        }
      }
      BAR();
    }
    if (l == hi) { --hi; iter = 0; }
    else ++iter;
  }
  BAR();
  __global T *eo = AT(E);
  PFOR(k, 0, n) eo[k * E_s] = h[k * n + k] * back;
  /* eigenvectors of T by back substitution (ztrevc), one per item; without want_v the loops
     run 0 times (no early return ahead of a barrier) */
  const int nv = want_v ? n : 0;
  const RT smlnum = SAFMIN * ((RT)n / EPS);
  PFOR(k, 0, nv) {
    __global T *xk = vs + (long)k * n;
    const T lam = h[k * n + k];
    const RT smin = fmax(EPS * la_abs1(lam), smlnum);
    for (int j = k + 1; j < n; ++j) xk[j] = CZERO;
    xk[k] = CONE;
    for (int j = k - 1; j >= 0; --j) {
      T s = CZERO;
      for (int i = j + 1; i <= k; ++i) s += la_mul(h[j * n + i], xk[i]);
      T dd = h[j * n + j] - lam;
      if (la_abs1(dd) < smin) dd = la_fromr(smin);
      const T xj = -la_div(s, dd);
      xk[j] = xj;
      const RT ax = la_abs1(xj);
      if (ax > BIGNUM) {
        const RT f = (RT)1 / ax;
        for (int i = j; i <= k; ++i) xk[i] = xk[i] * f;
      }
    }
  }
  BAR();
  /* V = Z X, each column scaled to unit norm with its largest component real positive */
  PFOR(k, 0, nv) {
    __global const T *xk = vs + (long)k * n;
    __global T *vk = vt + (long)k * n;
    for (int r = 0; r < n; ++r) vk[r] = CZERO;
    for (int i = 0; i <= k; ++i) {
      const T xi = xk[i];
      __global const T *zi = zt + (long)i * n;
      for (int r = 0; r < n; ++r) vk[r] += la_mul(zi[r], xi);
    }
    RT mx = 0, s2 = 0;
    int im = 0;
    for (int r = 0; r < n; ++r) mx = fmax(mx, la_amax(vk[r]));
    RT f1, f2;
    const RT big = la_pow2(mx, &f1, &f2);
    RT best = -1;
    for (int r = 0; r < n; ++r) {
      const RT a2 = la_abs2(vk[r] * f1 * f2);
      s2 += a2;
      if (a2 > best) { best = a2; im = r; }
    }
    const RT nrm = sqrt(s2) * big;
    const T top = vk[im];
    const RT at = la_abs(top);
    T f = la_fromr((RT)1 / nrm);
    if (at > 0) f = la_mul(f, la_conj(top) * ((RT)1 / at));
    for (int r = 0; r < n; ++r) vk[r] = la_mul(vk[r], f);
  }
  BAR();
  __global T *vo = AT(V);
  for (int r = 0; r < nv; ++r) PFOR(k, 0, n) vo[r * V_sr + k * V_sc] = vt[(long)k * n + r];
}
"""
