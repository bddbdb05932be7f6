"""Render gather/scatter kernels driven by precomputed element offsets.

Integer-array indexing reduces to: for each index position ``b`` and each element ``r`` of
the trailing (un-indexed) dims, ``out[b, r] = x[xo + off[b] + roff(r)]`` (gather) or the
reverse assignment (scatter). ``off`` is an int64 array computed with elementwise kernels.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import ctypes as C


@dataclass(frozen=True)
class IndexSpec:
    kind: str            # 'gather' | 'scatter'
    dtype: np.dtype
    ndim_rest: int       # trailing dims (collapsed), addressed through strides


def render_indexing(spec: IndexSpec) -> tuple[str, str, list]:
    """Arguments: ``n_b, n_rest, d_rest..., x, xo, s_rest..., off, y, yo``; the dense
    operand ``y`` is ``[n_b, n_rest]`` (output for gather, values for scatter)."""
    st = C.storage_ctype(spec.dtype)
    nd = spec.ndim_rest
    params = ["const long n_b", "const long n_rest"] + [f"const long d{k}" for k in range(nd)]
    params += [f"__global {'const ' if spec.kind == 'gather' else ''}{st} *x", "const long xo"]
    params += [f"const long s{k}" for k in range(nd)]
    params += ["__global const long *off", f"__global {'const ' if spec.kind == 'scatter' else ''}"
               f"{st} *y", "const long yo"]
    i64 = np.dtype(np.int64)
    argtypes: list = [i64, i64] + [i64] * nd + [None, i64] + [i64] * nd + [None, None, i64]
    name = f"clnp_{spec.kind}"
    lines = [f"// clnp {spec.kind} {spec.dtype}"]
    if C.uses_fp64([spec.dtype]):
        lines.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    lines.append(f"__kernel void {name}(" + ",\n    ".join(params) + ")\n{")
    lines.append("  const long gid = get_global_id(0);")
    lines.append("  if (gid >= n_b * n_rest) return;")
    lines.append("  const long b = gid / n_rest;")
    lines.append("  long rem = gid - b * n_rest, p = xo + off[b];")
    for k in reversed(range(nd)):
        lines.append(f"  p += (rem % d{k}) * s{k}; rem /= d{k};")
    if spec.kind == "gather":
        lines.append(f"  y[yo + gid] = x[p];")
    else:
        lines.append(f"  x[p] = y[yo + gid];")
    lines.append("}")
    return "\n".join(lines), name, argtypes
