"""Render the sort program: a stable LSD radix sort on order-preserving unsigned keys, plus the
kernels that turn its permutation into sort/argsort/unique/isin results.

One program per :class:`SortSpec` (key width x index width x device style) holds every kernel;
the input dtype is a *runtime* argument of the key kernel, so a device compiles at most a
couple of sort programs whatever dtypes it sorts (PoCL spends 0.3-1 s per program and per
first launch of each kernel).

Keys. ``clnp_sort_keys`` maps each element to an unsigned integer whose unsigned order is the
NumPy order of the values: integers flip the sign bit; floats flip every bit of negatives and
the sign bit of positives, with ``-0.0`` folded onto ``+0.0`` and every NaN onto the largest
key (NaNs sort last); complex values split into components sorted one after another (least
significant first), the last one being the NumPy NaN class. ``desc`` inverts the value bits,
which turns the stable ascending sort into a stable descending one (ties keep their input
order, NaNs come first). The row number of batched rows goes into the high key bits (or is a
component of its own), so one flat sort sorts every row at once. The kernel also reduces the
minimum and maximum key per work-group: the passes sort ``key - min``, and the host skips
the digits above the top bit of ``max - min``.

Passes. One digit per pass over tiles of ``tile`` keys: ``clnp_sort_hist`` counts digits per
tile into ``hist[digit * ntiles + tile]``, ``clnp_sort_scan`` turns that into exclusive offsets
(one work-group, as the array is short; on GPUs it goes block by block through local memory),
``clnp_sort_scatter`` moves keys and payload (the index into the input) to their place,
stably. Two device styles:

``group == 1`` (CPUs)
    8-bit digits; one work-item per tile walks it in order with 256 private counters.
``group > 1`` (GPUs)
    4-bit digits; a work-group per tile reads it in coalesced rounds of ``group`` keys and
    ranks each key among the round's equal digits with an inclusive scan of one-hot byte
    counters packed into a ``uint4`` (16 digits x 8 bits; ``group <= 128`` keeps them from
    carrying), so equal digits keep their order.

Set functions. ``clnp_sort_flags`` marks the first element of each run of equal sorted keys
(NaNs distinct unless asked otherwise); ``clnp_sort_count`` + ``clnp_sort_scan`` +
``clnp_sort_compact`` number the runs, record where each starts and scatter the run number
of every element to its input position (the inverse indices); ``clnp_sort_uniq`` derives first
indices and counts; ``clnp_sort_isin`` reads the membership of ``x1`` elements off runs of the
concatenation ``(x2, x1)`` (a run holds an ``x2`` element iff it starts with one).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

# Value families of the key kernel (its ``kind`` argument) and their key widths in bits.
KINDS = {"bool": (0, 8), "uint8": (1, 8), "int8": (2, 8), "uint16": (3, 16),
         "int16": (4, 16), "float16": (5, 16), "uint32": (6, 32), "int32": (7, 32),
         "float32": (8, 32), "uint64": (9, 64), "int64": (10, 64), "float64": (11, 64),
         "complex64": (12, 64), "complex128": (13, 64), "bfloat16": (14, 16)}
# Key components (the key kernel's ``comp`` argument).
COMP_MAIN, COMP_REAL, COMP_CLASS, COMP_ROW = 0, 1, 2, 3


@dataclass(frozen=True)
class SortSpec:
    key: str          # 'uint' | 'ulong': key C type
    index: str        # 'uint' | 'ulong': payload/index C type (holds every flat position)
    group: int        # work-items per tile (1: sequential tiles, CPU style)
    lsize: int        # work-group size of the element-wise kernels and the key reduction
    scan_group: int   # work-items of the single-group scan (1: sequential)
    scan_chunk: int = 1   # entries per work-item and block of that scan (local memory)

    @property
    def bits(self) -> int:
        return 8 if self.group == 1 else 4


def _np(ctype: str) -> np.dtype:
    return np.dtype(np.uint32 if ctype == "uint" else np.uint64)


@lru_cache(maxsize=None)
def render_sort(spec: SortSpec) -> tuple[str, dict[str, list]]:
    """Return ``(source, {kernel name: scalar_arg_dtypes})`` of the sort program."""
    K, P = spec.key, spec.index
    G, R = spec.group, 1 << spec.bits
    kt, it, i32 = _np(K), _np(P), np.dtype(np.int32)
    wide = K == "ulong"
    src: list[str] = [
        f"// clnp sort program: keys {K}, indices {P}, group {G}, {spec.bits}-bit digits",
        f"typedef {K} key_t;",
        f"typedef {P} idx_t;",
        f"#define RADIX {R}",
        f"#define DMASK {R - 1}",
        _KEY_HELPERS,
    ]
    args: dict[str, list] = {}

    # ------------------------------------------------------------------ keys
    cases = [
        "case 0: v = xb[q] != 0; break;",
        "case 1: v = xb[q]; break;",
        "case 2: v = (uchar)(xb[q] ^ 0x80); break;",
        "case 3: v = ((__global const ushort *)xb)[q]; break;",
        "case 4: v = (ushort)(((__global const ushort *)xb)[q] ^ 0x8000); break;",
        "case 5: v = clnp_fkey16(((__global const ushort *)xb)[q]); break;",
        "case 6: v = ((__global const uint *)xb)[q]; break;",
        "case 7: v = ((__global const uint *)xb)[q] ^ 0x80000000u; break;",
        "case 8: v = clnp_fkey32(((__global const uint *)xb)[q]); break;",
        "case 14: v = clnp_fkeybf16(((__global const ushort *)xb)[q]); break;",
    ]
    if wide:
        cases += [
            "case 9: v = ((__global const ulong *)xb)[q]; break;",
            "case 10: v = ((__global const ulong *)xb)[q] ^ 0x8000000000000000ul; break;",
            "case 11: v = clnp_fkey64(((__global const ulong *)xb)[q]); break;",
            "case 12: { const uint re = ((__global const uint *)xb)[2 * q],\n"
            "                         im = ((__global const uint *)xb)[2 * q + 1];\n"
            "      v = comp == 2 ? (ulong)(clnp_nan32(re) * 2 + clnp_nan32(im))\n"
            "                    : ((ulong)clnp_fkey32(re) << 32) | clnp_fkey32(im);\n"
            "      break; }",
            "case 13: { const ulong re = ((__global const ulong *)xb)[2 * q],\n"
            "                          im = ((__global const ulong *)xb)[2 * q + 1];\n"
            "      v = comp == 2 ? (ulong)(clnp_nan64(re) * 2 + clnp_nan64(im))\n"
            "                    : clnp_fkey64(comp == 1 ? re : im);\n"
            "      break; }",
        ]
    L = spec.lsize
    src.append(f"""
// keys[i] = key of x[xo + p] (p = perm[i], or i), with the row p / rowlen above row_shift;
// part[2g], part[2g + 1] = smallest and largest key of work-group g.
__kernel __attribute__((reqd_work_group_size({L}, 1, 1)))
void clnp_sort_keys(const idx_t n, __global const uchar *xb, const idx_t xo,
    __global const idx_t *perm, const int use_perm, const int kind, const int comp,
    const key_t desc, const idx_t rowlen, const int row_shift, __global key_t *keys,
    __global key_t *part)
{{
  __local key_t lo_min[{L}], lo_max[{L}];
  const size_t lid = get_local_id(0), gsz = get_global_size(0);
  key_t kmax = 0, kmin = ~(key_t)0;
  for (size_t i = get_global_id(0); i < n; i += gsz) {{
    const idx_t p = use_perm ? perm[i] : (idx_t)i;
    const size_t q = xo + p;
    key_t v = 0;
    if (comp != 3) {{
      switch (kind) {{
      {chr(10).join('      ' + c for c in cases).strip()}
      }}
      v ^= desc;
    }}
    if (row_shift >= 0) v |= (key_t)(p / rowlen) << row_shift;
    keys[i] = v;
    kmin = min(kmin, v);
    kmax = max(kmax, v);
  }}
  lo_min[lid] = kmin;
  lo_max[lid] = kmax;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = {L // 2}; s > 0; s >>= 1) {{
    if (lid < s) {{
      lo_min[lid] = min(lo_min[lid], lo_min[lid + s]);
      lo_max[lid] = max(lo_max[lid], lo_max[lid + s]);
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
  if (lid == 0) {{
    part[2 * get_group_id(0)] = lo_min[0];
    part[2 * get_group_id(0) + 1] = lo_max[0];
  }}
}}""")
    args["clnp_sort_keys"] = [it, None, it, None, i32, i32, i32, kt, it, i32, None, None]

    # ------------------------------------------------------------------ radix passes
    tiles = ("  const idx_t t = get_group_id(0);\n"
             "  const idx_t lo = t * tile, hi = min(lo + tile, n);\n")
    if G == 1:
        src.append(f"""
__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void clnp_sort_hist(const idx_t n, const idx_t tile, const idx_t ntiles, const int shift,
    const key_t kmin, __global const key_t *keys, __global idx_t *hist)
{{
{tiles}  idx_t cnt[RADIX];
  for (int d = 0; d < RADIX; d++) cnt[d] = 0;
  for (idx_t i = lo; i < hi; i++) cnt[(uint)((keys[i] - kmin) >> shift) & DMASK]++;
  for (int d = 0; d < RADIX; d++) hist[d * ntiles + t] = cnt[d];
}}

__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void clnp_sort_scatter(const idx_t n, const idx_t tile, const idx_t ntiles, const int shift,
    const key_t kmin, __global const key_t *kin, __global const idx_t *pin, const int use_perm,
    __global const idx_t *hist, __global key_t *kout, __global idx_t *pout)
{{
{tiles}  idx_t run[RADIX];
  for (int d = 0; d < RADIX; d++) run[d] = hist[d * ntiles + t];
  for (idx_t i = lo; i < hi; i++) {{
    const key_t k = kin[i];
    const idx_t p = run[(uint)((k - kmin) >> shift) & DMASK]++;
    kout[p] = k;
    pout[p] = use_perm ? pin[i] : i;
  }}
}}""")
    else:
        src.append(f"""
__kernel __attribute__((reqd_work_group_size({G}, 1, 1)))
void clnp_sort_hist(const idx_t n, const idx_t tile, const idx_t ntiles, const int shift,
    const key_t kmin, __global const key_t *keys, __global idx_t *hist)
{{
  __local uint cnt[RADIX];
  const uint lid = get_local_id(0);
{tiles}  if (lid < RADIX) cnt[lid] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (idx_t i = lo + lid; i < hi; i += {G})
    atomic_inc(&cnt[(uint)((keys[i] - kmin) >> shift) & DMASK]);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid < RADIX) hist[lid * ntiles + t] = cnt[lid];
}}

inline uint clnp_byte(const uint4 v, const uint d)
{{
  const uint w = d < 8 ? (d < 4 ? v.s0 : v.s1) : (d < 12 ? v.s2 : v.s3);
  return (w >> ((d & 3) * 8)) & 0xFF;
}}

__kernel __attribute__((reqd_work_group_size({G}, 1, 1)))
void clnp_sort_scatter(const idx_t n, const idx_t tile, const idx_t ntiles, const int shift,
    const key_t kmin, __global const key_t *kin, __global const idx_t *pin, const int use_perm,
    __global const idx_t *hist, __global key_t *kout, __global idx_t *pout)
{{
  __local uint4 sc[{G}];
  __local idx_t run[RADIX];
  const uint lid = get_local_id(0);
{tiles}  if (lid < RADIX) run[lid] = hist[lid * ntiles + t];
  for (idx_t base = lo; base < hi; base += {G}) {{
    const idx_t i = base + lid;
    const int valid = i < hi;
    const key_t k = valid ? kin[i] : 0;
    const uint d = (uint)((k - kmin) >> shift) & DMASK;
    const uint bit = valid ? 1u << ((d & 3) * 8) : 0u;
    uint4 v = (uint4)(d < 4 ? bit : 0u, d - 4 < 4 ? bit : 0u, d - 8 < 4 ? bit : 0u,
                      d >= 12 ? bit : 0u);
    sc[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = 1; off < {G}; off <<= 1) {{
      if (lid >= off) v += sc[lid - off];
      barrier(CLK_LOCAL_MEM_FENCE);
      sc[lid] = v;
      barrier(CLK_LOCAL_MEM_FENCE);
    }}
    if (valid) {{
      const idx_t p = run[d] + clnp_byte(v, d) - 1;
      kout[p] = k;
      pout[p] = use_perm ? pin[i] : i;
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < RADIX) run[lid] += clnp_byte(sc[{G - 1}], lid);
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
}}""")
    args["clnp_sort_hist"] = [it, it, it, i32, kt, None, None]
    args["clnp_sort_scatter"] = [it, it, it, i32, kt, None, None, i32, None, None, None]

    S, CH = spec.scan_group, spec.scan_chunk
    if S == 1:
        src.append("""
// exclusive scan of a[0 .. m) in place, a[m] = total (one work-item)
__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void clnp_sort_scan(const idx_t m, __global idx_t *a)
{
  idx_t acc = 0;
  for (idx_t i = 0; i < m; i++) { const idx_t v = a[i]; a[i] = acc; acc += v; }
  a[m] = acc;
}""")
    else:
        src.append(f"""
// exclusive scan of a[0 .. m) in place, a[m] = total (one work-group): blocks of {CH * S}
// entries are loaded coalesced to local memory, where each item scans {CH} adjacent ones
__kernel __attribute__((reqd_work_group_size({S}, 1, 1)))
void clnp_sort_scan(const idx_t m, __global idx_t *a)
{{
  __local idx_t buf[{CH * S}], part[{S}];
  const uint lid = get_local_id(0);
  idx_t carry = 0;
  for (idx_t base = 0; base < m; base += {CH * S}) {{
    for (uint j = 0; j < {CH}; j++) {{
      const idx_t i = base + j * {S} + lid;
      buf[j * {S} + lid] = i < m ? a[i] : 0;
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
    idx_t s = 0;
    for (uint j = 0; j < {CH}; j++) s += buf[lid * {CH} + j];
    part[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = 1; off < {S}; off <<= 1) {{
      const idx_t v = lid >= off ? part[lid - off] : 0;
      barrier(CLK_LOCAL_MEM_FENCE);
      part[lid] += v;
      barrier(CLK_LOCAL_MEM_FENCE);
    }}
    idx_t acc = carry + part[lid] - s;
    for (uint j = 0; j < {CH}; j++) {{
      const idx_t v = buf[lid * {CH} + j];
      buf[lid * {CH} + j] = acc;
      acc += v;
    }}
    carry += part[{S - 1}];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint j = 0; j < {CH}; j++) {{
      const idx_t i = base + j * {S} + lid;
      if (i < m) a[i] = buf[j * {S} + lid];
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
  if (lid == 0) a[m] = carry;
}}""")
    args["clnp_sort_scan"] = [it, None]

    # ------------------------------------------------------------------ results
    gid = "  const size_t i = get_global_id(0);\n  if (i >= n) return;\n"
    src.append(f"""
// dst[i] = src[so + idx[i]] for elements of ``size`` bytes (16: two ulongs)
__kernel void clnp_sort_take(const idx_t n, const int size, __global const uchar *src,
    const idx_t so, __global const idx_t *idx, __global uchar *dst)
{{
{gid}  const size_t q = so + idx[i];
  switch (size) {{
  case 1: dst[i] = src[q]; break;
  case 2: ((__global ushort *)dst)[i] = ((__global const ushort *)src)[q]; break;
  case 4: ((__global uint *)dst)[i] = ((__global const uint *)src)[q]; break;
  case 8: ((__global ulong *)dst)[i] = ((__global const ulong *)src)[q]; break;
  default:
    ((__global ulong *)dst)[2 * i] = ((__global const ulong *)src)[2 * q];
    ((__global ulong *)dst)[2 * i + 1] = ((__global const ulong *)src)[2 * q + 1];
  }}
}}

// out[i] = position of the i-th sorted element within its row
__kernel void clnp_sort_rowpos(const idx_t n, __global const idx_t *perm, const int use_perm,
    const idx_t rowlen, __global long *out)
{{
{gid}  out[i] = (long)((use_perm ? perm[i] : (idx_t)i) % rowlen);
}}

// f[i] = the sorted key i starts a run of equal values
__kernel void clnp_sort_flags(const idx_t n, __global const key_t *keys, const key_t nan_key,
    const int nan_distinct, __global uchar *f)
{{
{gid}  const key_t k = keys[i];
  f[i] = i == 0 || k != keys[i - 1] || (nan_distinct && k == nan_key);
}}
""")
    args["clnp_sort_take"] = [it, i32, None, it, None, None]
    args["clnp_sort_rowpos"] = [it, None, i32, it, None]
    args["clnp_sort_flags"] = [it, None, kt, i32, None]

    # run numbering: items of a tile own contiguous sub-runs (sequential on CPUs)
    sub = (f"  const uint lid = get_local_id(0);\n{tiles}"
           f"  const idx_t sub = (tile + {G - 1}) / {G};\n"
           "  const idx_t b0 = min(lo + lid * sub, hi), b1 = min(b0 + sub, hi);\n"
           "  idx_t c = 0;\n"
           "  for (idx_t i = b0; i < b1; i++) c += f[i];\n")
    src.append(f"""
// sums[t] = number of run starts in tile t
__kernel __attribute__((reqd_work_group_size({G}, 1, 1)))
void clnp_sort_count(const idx_t n, const idx_t tile, __global const uchar *f,
    __global idx_t *sums)
{{
  __local idx_t part[{G}];
{sub}  part[lid] = c;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) {{
    for (uint j = 1; j < {G}; j++) c += part[j];
    sums[t] = c;
  }}
}}

// starts[r] = sorted position where run r starts; inv[perm[i]] = run of sorted element i
__kernel __attribute__((reqd_work_group_size({G}, 1, 1)))
void clnp_sort_compact(const idx_t n, const idx_t tile, __global const uchar *f,
    __global const idx_t *sums, __global const idx_t *perm, const int use_perm,
    __global idx_t *starts, __global long *inv, const int want_inv)
{{
  __local idx_t part[{G}];
{sub}  part[lid] = c;
  barrier(CLK_LOCAL_MEM_FENCE);
  idx_t r = sums[t];
  for (uint j = 0; j < lid; j++) r += part[j];
  for (idx_t i = b0; i < b1; i++) {{
    if (f[i]) starts[r++] = i;
    if (want_inv) inv[use_perm ? perm[i] : i] = (long)r - 1;
  }}
}}

// per run r: first input index, and count
__kernel void clnp_sort_uniq(const idx_t n, const idx_t total, __global const idx_t *starts,
    __global const idx_t *perm, const int use_perm, __global idx_t *firsts,
    __global long *index, __global long *counts)
{{
{gid}  const idx_t s = starts[i], e = i + 1 < n ? starts[i + 1] : total;
  const idx_t p = use_perm ? perm[s] : s;
  firsts[i] = p;
  index[i] = (long)p;
  counts[i] = (long)(e - s);
}}

// out[j] = x1[j] equals some x2 element (run of element m + j starts with an x2 element)
__kernel void clnp_sort_isin(const idx_t n, const idx_t m, __global const long *inv,
    __global const idx_t *starts, __global const idx_t *perm, const int use_perm,
    const int invert, __global uchar *out)
{{
{gid}  const idx_t s = starts[inv[m + i]];
  out[i] = ((use_perm ? perm[s] : s) < m) != invert;
}}""")
    args["clnp_sort_count"] = [it, it, None, None]
    args["clnp_sort_compact"] = [it, it, None, None, None, i32, None, None, i32]
    args["clnp_sort_uniq"] = [it, it, None, None, i32, None, None, None]
    args["clnp_sort_isin"] = [it, it, None, None, None, i32, i32, None]
    return "\n".join(src), args


_KEY_HELPERS = """
// order-preserving keys of IEEE bit patterns: -0.0 -> +0.0, every NaN -> the largest key
inline uint clnp_fkey16(uint b)
{
  if ((b & 0x7FFFu) > 0x7C00u) return 0xFFFFu;
  if (b == 0x8000u) b = 0;
  return (b & 0x8000u) ? (~b & 0xFFFFu) : (b | 0x8000u);
}
inline uint clnp_fkeybf16(uint b)
{
  if ((b & 0x7FFFu) > 0x7F80u) return 0xFFFFu;
  if (b == 0x8000u) b = 0;
  return (b & 0x8000u) ? (~b & 0xFFFFu) : (b | 0x8000u);
}
inline uint clnp_fkey32(uint b)
{
  if ((b & 0x7FFFFFFFu) > 0x7F800000u) return 0xFFFFFFFFu;
  if (b == 0x80000000u) b = 0;
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
inline uint clnp_nan32(uint b) { return (b & 0x7FFFFFFFu) > 0x7F800000u; }
inline ulong clnp_fkey64(ulong b)
{
  if ((b & 0x7FFFFFFFFFFFFFFFul) > 0x7FF0000000000000ul) return 0xFFFFFFFFFFFFFFFFul;
  if (b == 0x8000000000000000ul) b = 0;
  return (b & 0x8000000000000000ul) ? ~b : (b | 0x8000000000000000ul);
}
inline ulong clnp_nan64(ulong b) { return (b & 0x7FFFFFFFFFFFFFFFul) > 0x7FF0000000000000ul; }
"""
