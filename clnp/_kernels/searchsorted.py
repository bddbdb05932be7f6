"""Render ``searchsorted``: one work-item per search value, a binary search over a sorted 1-d
array (strided, optionally read through a ``sorter`` permutation).

Order is NumPy's sort order: NaN after every number (complex: lexicographic with NumPy's NaN
rules), so results agree with ``sort``. ``side`` is a kernel argument (``right``: 0 or 1) and
so is the presence of a sorter, so one kernel serves every call of a dtype.

Arguments: ``n2, m, right, x1, x1_off, x1_stride, sorter, sorter_off, sorter_stride,
has_sorter, x2, x2_off, y`` (``x2`` dense, ``y`` int64 dense; sorter entries are clamped to
``[0, m)`` so that a bad sorter never reads outside ``x1``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import ctypes as C


@dataclass(frozen=True)
class SearchSpec:
    dtype: np.dtype          # dtype of both the sorted array and the search values


def _less(dtype: np.dtype, t: str) -> str:
    """``clnp_ss_less(a, b)``: a sorts strictly before b (NumPy's LT/CLT)."""
    head = f"inline int clnp_ss_less({t} a, {t} b) {{\n"
    if dtype.kind == "f":
        body = "  return a < b || (b != b && a == a);\n"
    elif dtype.kind == "c":
        body = ("  if (a.x < b.x) return a.y == a.y || b.y != b.y;\n"
                "  if (a.x > b.x) return b.y != b.y && a.y == a.y;\n"
                "  if (a.x == b.x || (a.x != a.x && b.x != b.x))\n"
                "    return a.y < b.y || (b.y != b.y && a.y == a.y);\n"
                "  return b.x != b.x;\n")
    else:
        body = "  return a < b;\n"
    return head + body + "}"


def render_searchsorted(spec: SearchSpec) -> tuple[str, str, list]:
    d = spec.dtype
    t, st = C.compute_ctype(d), C.storage_ctype(d)
    i64 = np.dtype(np.int64)
    lines = [f"// clnp searchsorted of {d}"]
    if C.uses_fp64([d]):
        lines.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    lines.append(_less(d, t))
    lines.append(f"""__kernel void clnp_searchsorted(const long n2, const long m, const int right,
    __global const {st} *x1, const long x1o, const long x1s,
    __global const long *sorter, const long so, const long ss, const int has_sorter,
    __global const {st} *x2, const long x2o, __global long *y)
{{
  const long gid = get_global_id(0);
  if (gid >= n2) return;
  const {t} v = {C.load(d, 'x2', 'x2o + gid')};
  long lo = 0, hi = m;
  while (lo < hi) {{
    const long mid = lo + (hi - lo) / 2;
    const long j = has_sorter ? clamp(sorter[so + mid * ss], (long)0, m - 1) : mid;
    const {t} a = {C.load(d, 'x1', 'x1o + j * x1s')};
    /* left: the first i with !(x1[i] < v); right: the first i with v < x1[i] */
    const int go = right ? !clnp_ss_less(v, a) : clnp_ss_less(a, v);
    if (go) lo = mid + 1; else hi = mid;
  }}
  y[gid] = lo;
}}""")
    argtypes = [i64, i64, np.dtype(np.int32), None, i64, i64, None, i64, i64,
                np.dtype(np.int32), None, i64, None]
    return "\n".join(lines), "clnp_searchsorted", argtypes
