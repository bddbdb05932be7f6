"""Render gather/scatter kernels driven by precomputed element offsets.

Integer-array indexing reduces to: for each index position ``b`` and each element ``r`` of
the trailing (un-indexed) dims, ``out[b, r] = x[xo + off[b] + roff(r)]`` (gather) or the
reverse assignment (scatter). ``off`` is an int64 array computed by the offsets kernel
(``render_offsets``), which also wraps negative indices and flags out-of-range ones.

Repeated indices in a scatter must leave the value NumPy leaves: the last one in C order. Items
writing the same target in parallel would race (a GPU keeps an arbitrary one), so the scatter
kernel writes only each target's winner, chosen one of two ways (its ``mode`` argument):

- ``SCATTER_TABLE``: ``clnp_scatter_winner`` first stores, per target, the largest index
  position naming it (``atomic_max`` into an int table over the targets' span, filled with
  -1); the scatter then writes position ``b`` only where the table holds ``b``.
- ``SCATTER_SORTED``: ``off`` arrives stably sorted with ``perm`` (sorted place -> position);
  the last place of each run of equal offsets writes, reading its values at ``perm[s]``.

``SCATTER_ALL`` writes every position (indices known to be distinct).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import ctypes as C
from .._runtime.dtypes import kind as dkind


@dataclass(frozen=True)
class IndexSpec:
    kind: str            # 'gather' | 'scatter' | 'scatter_add'
    dtype: np.dtype
    ndim_rest: int       # trailing dims (collapsed), addressed through strides


SCATTER_ALL, SCATTER_TABLE, SCATTER_SORTED = 0, 1, 2


# Atomic accumulation for scatter_add (repeated indices must add up). Floats use a
# compare-and-swap loop on their bit pattern; 64-bit types need cl_khr_int64_base_atomics.
# Every access to *p is the atomic itself: the loop starts from a guess (the bits of 0, right
# for a zero-filled target) and a failed swap returns the current bits for the next try. A
# plain first read of *p would race with the other items' swaps (Oclgrind reports it).
_CAS_ADD = """inline void clnp_atomic_add{s}(volatile __global {t} *p, {t} v) {{
    union {{ {u} u; {t} f; }} old, nw;
    old.u = 0;
    for (;;) {{
        nw.f = old.f + v;
        const {u} seen = {cas}((volatile __global {u} *)p, old.u, nw.u);
        if (seen == old.u) break;
        old.u = seen;
    }}
}}"""
_CAS_F = _CAS_ADD.format(s="f", t="float", u="uint", cas="atomic_cmpxchg")
_CAS_D = _CAS_ADD.format(s="d", t="double", u="ulong", cas="atom_cmpxchg")


def _complex_add(t: str, s: str) -> str:
    return (f"inline void clnp_atomic_add(volatile __global {t}2 *p, {t}2 v) {{\n"
            f"    clnp_atomic_add{s}((volatile __global {t} *)p, v.x);\n"
            f"    clnp_atomic_add{s}((volatile __global {t} *)p + 1, v.y);\n}}")


_ATOMIC_ADD = {
    **{t: f"inline void clnp_atomic_add(volatile __global {t} *p, {t} v) "
          f"{{ {'atomic_add' if t in ('int', 'uint') else 'atom_add'}(p, v); }}"
       for t in ("int", "uint", "long", "ulong")},
    "float": _CAS_F + "\ninline void clnp_atomic_add(volatile __global float *p, float v) "
                      "{ clnp_atomic_addf(p, v); }",
    "double": _CAS_D + "\ninline void clnp_atomic_add(volatile __global double *p, double v) "
                       "{ clnp_atomic_addd(p, v); }",
    "float2": _CAS_F + "\n" + _complex_add("float", "f"),
    "double2": _CAS_D + "\n" + _complex_add("double", "d"),
}


def scatter_add_supported(dtype: np.dtype, extensions: frozenset[str]) -> bool:
    """Whether ``dtype`` has an atomic add on a device with ``extensions``."""
    st = C.storage_ctype(dtype) if dkind(dtype) != "b" else "bool"
    if st not in _ATOMIC_ADD:
        return False
    return dtype.itemsize < 8 or dtype.name == "complex64" or \
        "cl_khr_int64_base_atomics" in extensions


def render_indexing(spec: IndexSpec) -> tuple[str, str, list]:
    """Arguments: ``n_b, n_rest, d_rest..., x, xo, s_rest..., off, y, yo``; the dense
    operand ``y`` is ``[n_b, n_rest]`` (output for gather, values for scatter)."""
    # gather and scatter move bits; scatter_add's dtypes all have atomic adds on their storage
    st = C.storage_ctype(spec.dtype) if spec.kind == "scatter_add" else C.bits_ctype(spec.dtype)
    nd = spec.ndim_rest
    params = ["const long n_b", "const long n_rest"] + [f"const long d{k}" for k in range(nd)]
    params += [f"__global {'const ' if spec.kind == 'gather' else ''}{st} *x", "const long xo"]
    params += [f"const long s{k}" for k in range(nd)]
    params += ["__global const long *off", f"__global {'const ' if spec.kind != 'gather' else ''}"
               f"{st} *y", "const long yo"]
    i64 = np.dtype(np.int64)
    argtypes: list = [i64, i64] + [i64] * nd + [None, i64] + [i64] * nd + [None, None, i64]
    if spec.kind == "scatter":
        params += ["const int mode", "__global const int *win", "const long lo",
                   "__global const long *perm"]
        argtypes += [np.dtype(np.int32), None, i64, None]
    name = f"clnp_{spec.kind}"
    lines = [f"// clnp {spec.kind} {spec.dtype}"]
    if C.uses_fp64([spec.dtype]):
        lines.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    if spec.kind == "scatter_add":
        if spec.dtype.itemsize >= 8 and spec.dtype.name != "complex64":
            lines.append("#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable")
        lines.append(_ATOMIC_ADD[st])
    lines.append(f"__kernel void {name}(" + ",\n    ".join(params) + ")\n{")
    lines.append("  const long gid = get_global_id(0);")
    lines.append("  if (gid >= n_b * n_rest) return;")
    lines.append("  const long b = gid / n_rest;")
    lines.append("  long rem = gid - b * n_rest, p = xo + off[b];")
    if spec.kind == "scatter":
        lines.append(f"  if (mode == {SCATTER_TABLE} && win[off[b] - lo] != b) return;")
        lines.append(f"  if (mode == {SCATTER_SORTED} && b + 1 < n_b && off[b + 1] == off[b]) "
                     f"return;")
        lines.append(f"  const long src = (mode == {SCATTER_SORTED} ? perm[b] : b) * n_rest "
                     f"+ (gid - b * n_rest);")
    for k in reversed(range(nd)):
        lines.append(f"  p += (rem % d{k}) * s{k}; rem /= d{k};")
    if spec.kind == "gather":
        lines.append("  y[yo + gid] = x[p];")
    elif spec.kind == "scatter_add":
        lines.append("  clnp_atomic_add(x + p, y[yo + gid]);")
    else:
        lines.append("  x[p] = y[yo + src];")
    lines.append("}")
    return "\n".join(lines), name, argtypes


def render_scatter_winner() -> tuple[str, str, list]:
    """The first pass of a ``SCATTER_TABLE`` scatter: ``win[off[b] - lo] = max(b)`` over the
    ``n`` index positions (``n`` < 2**31: the table is int, whose ``atomic_max`` is core
    OpenCL). Arguments: ``n, off, lo, win``."""
    i64 = np.dtype(np.int64)
    src = """// clnp scatter winner
__kernel void clnp_scatter_winner(const long n, __global const long *off, const long lo,
    __global int *win)
{
  const long gid = get_global_id(0);
  if (gid >= n) return;
  atomic_max(win + (off[gid] - lo), (int)gid);
}"""
    return src, "clnp_scatter_winner", [i64, None, i64, None]


@dataclass(frozen=True)
class OffsetsSpec:
    idx_dtypes: tuple[np.dtype, ...]   # one integer dtype per index array
    ndim: int                          # dims of the broadcast index shape (collapsed)


def render_offsets(spec: OffsetsSpec) -> tuple[str, str, list]:
    """Element offsets of integer-array indexing, with negative indices wrapped and bounds
    checked in the same pass.

    Arguments: ``n, d0..d{nd-1}``, then per index array ``j``: ``a_j, o_j, s_j_0..s_j_{nd-1},
    size_j, stride_j``; then ``off, flag``. Work-item ``g`` (over the dense broadcast index
    shape) writes ``off[g] = sum_j wrap(a_j[...]) * stride_j``. An index outside
    ``[-size_j, size_j)`` contributes offset 0, so nothing outside the array is addressed, and
    is reported in ``flag`` (four ints, zero until then, the launch's own): the first
    work-item to claim ``flag[0]`` (an atomic compare-and-swap of 0 for 1) stores ``j + 1`` to
    ``flag[1]`` and the index itself, as a long's low and high words, to ``flag[2]`` and
    ``flag[3]``. The report
    is whole without the index arrays, which a replayed call may have overwritten by the time
    its check reads the flag (``clnp._core.device_checks``). Unsigned indices do not wrap: one
    of 2**63 or more is negative as a long, and out of range.
    """
    nd, k = spec.ndim, len(spec.idx_dtypes)
    i64 = np.dtype(np.int64)
    params = ["const long n"] + [f"const long d{q}" for q in range(nd)]
    argtypes: list = [i64] + [i64] * nd
    for j, d in enumerate(spec.idx_dtypes):
        params += [f"__global const {C.storage_ctype(d)} *a{j}", f"const long o{j}"]
        params += [f"const long s{j}_{q}" for q in range(nd)]
        params += [f"const long size{j}", f"const long stride{j}"]
        argtypes += [None, i64] + [i64] * nd + [i64, i64]
    params += ["__global long *off", "__global int *flag"]
    argtypes += [None, None]
    name = "clnp_index_offsets"
    lines = [f"// clnp index offsets {', '.join(d.name for d in spec.idx_dtypes)} ndim={nd}",
             f"__kernel void {name}(" + ",\n    ".join(params) + ")\n{",
             "  const long gid = get_global_id(0);",
             "  if (gid >= n) return;",
             "  long rem = gid, acc = 0;"]
    for q in reversed(range(nd)):
        lines.append(f"  const long i{q} = rem % d{q}; rem /= d{q};")
    for j, d in enumerate(spec.idx_dtypes):
        pos = " + ".join([f"o{j}"] + [f"i{q} * s{j}_{q}" for q in range(nd)])
        lines.append(f"  {{ long v = (long)a{j}[{pos}];")
        if d.kind == "i":
            lines.append(f"    if (v < 0) v += size{j};")
        lines.append(f"    if (v < 0 || v >= size{j}) {{")
        lines.append(f"      if (atomic_cmpxchg(flag, 0, 1) == 0) {{ flag[1] = {j + 1}; "
                     f"const long w = (long)a{j}[{pos}]; flag[2] = (int)w; "
                     f"flag[3] = (int)(w >> 32); }}")
        lines.append("      v = 0; }")
        lines.append(f"    acc += v * stride{j}; }}")
    lines.append("  off[gid] = acc;")
    lines.append("}")
    return "\n".join(lines), name, argtypes
