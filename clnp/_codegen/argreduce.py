"""Render argmax/argmin: axis reductions that carry a (value, index) pair.

The input is viewed as (kept dims..., reduced dims...) through strides, as in
:mod:`clnp._codegen.reduction`; the index of an element is its C-order position within the
reduced dims. The combine keeps NumPy's answer whatever the order of evaluation: the larger
(argmax) or smaller (argmin) value wins, NaN wins over every number (complex: a NaN in either
part), and ties go to the smaller index, so the first occurrence (the first NaN) is returned.
An index of -1 marks "no element yet" (an empty chunk), which loses to everything.

One program per spec holds every kernel either op needs, so one build serves both ops, all
three work mappings and the second stage (``<op>`` is ``argmax`` or ``argmin``):

``clnp_<op>_local``
    Work-group ``g`` searches chunk ``g % parts`` of output ``g / parts``; items read
    interleaved elements (``group``: coalesced on GPUs) or one contiguous run each
    (``blocked``: CPUs) and combine through local memory.
``clnp_<op>_column``
    One work-item per (output, chunk), adjacent items on adjacent outputs (searches over outer
    axes read rows together).
``clnp_<op>_final``
    Work-group ``o`` combines the ``parts`` partial results of output ``o`` (two-stage
    search).

Arguments of ``_local``/``_column``: ``n_out, parts, chunk, nred, d_out..., d_red..., x, x_off,
s_out..., s_red..., pv, pi``: ``pi`` (int64) receives the index of each (output, chunk) at
``o * parts + chunk`` (the final result when ``parts == 1``) and ``pv`` its value in the
:func:`partial_dtype` (only written when ``parts > 1``). ``_final``: ``n_out, parts, pv, pi, y``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import ctypes as C

OPS = ("argmax", "argmin")
KINDS = ("local", "column", "final")


@dataclass(frozen=True)
class ArgReduceSpec:
    dtype: np.dtype          # input dtype
    ndim_out: int            # kept dims after collapsing (at least 1: pad with a unit dim)
    ndim_red: int            # reduced dims after collapsing (at least 1)
    group: int               # work-group size of the ``_local`` kernels (power of two)
    index: str = "long"      # C type of offsets and counters: 'int' when they fit in 31 bits
    mode: str = "group"      # ``_local`` layout: group | blocked


def partial_dtype(dtype: np.dtype) -> np.dtype:
    """Dtype of the partial values of a two-stage search (the compute type of ``dtype``)."""
    if dtype.kind == "b":
        return np.dtype(np.int32)
    if dtype == np.float16:
        return np.dtype(np.float32)
    return dtype


def kernel_name(op: str, kind: str) -> str:
    return f"clnp_{op}_{kind}"


def render_argreduce(spec: ArgReduceSpec, op: str, kind: str) -> tuple[str, str, list]:
    """Return ``(source, kernel name, scalar_arg_dtypes)`` of kernel ``kind`` of ``op``; the
    source (the same for every op and kind of ``spec``) holds all of them."""
    if op not in OPS or kind not in KINDS:
        raise ValueError(f"unknown argreduce kernel {op}/{kind}")
    it = np.dtype(np.int64 if spec.index == "long" else np.int32)
    if kind == "final":
        argtypes: list = [it, it, None, None, None]
    else:
        nd = spec.ndim_out + spec.ndim_red
        argtypes = [it] * (4 + nd) + [None, it] + [it] * nd + [None, None]
    return _source(spec), kernel_name(op, kind), argtypes


def _source(spec: ArgReduceSpec) -> str:
    acc = C.compute_ctype(spec.dtype)
    lines = [f"// clnp argmax/argmin of {spec.dtype} ({spec.mode}, group {spec.group})"]
    if C.uses_fp64([spec.dtype]):
        lines.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    for op in OPS:
        lines.append(_better(spec.dtype, acc, op))
    for op in OPS:
        lines.append(_local_kernel(spec, acc, op))
        lines.append(_column_kernel(spec, acc, op))
        lines.append(_final_kernel(spec, acc, op))
    return "\n".join(lines)


def _better(dtype: np.dtype, acc: str, op: str) -> str:
    """``clnp_<op>_better(a, ia, b, ib)``: whether (b, ib) replaces the current (a, ia).
    NaN tests are spelled ``x != x`` (the kernels are built without fast-math options)."""
    cmp = ">" if op == "argmax" else "<"
    head = [f"inline int clnp_{op}_better({acc} a, long ia, {acc} b, long ib) {{",
            "  if (ib < 0) return 0;",
            "  if (ia < 0) return 1;"]
    if dtype.kind == "c":
        # NumPy: lexicographic order; a NaN in either part is extreme (the first one wins)
        body = ["  const int nb = b.x != b.x || b.y != b.y, na = a.x != a.x || a.y != a.y;",
                "  if (nb) return !na || ib < ia;",
                "  if (na) return 0;",
                f"  if (b.x {cmp} a.x || (b.x == a.x && b.y {cmp} a.y)) return 1;",
                "  return b.x == a.x && b.y == a.y && ib < ia;"]
    elif dtype.kind == "f":
        body = ["  if (b != b) return a == a || ib < ia;",
                "  if (a != a) return 0;",
                f"  return b {cmp} a || (b == a && ib < ia);"]
    else:
        body = [f"  return b {cmp} a || (b == a && ib < ia);"]
    return "\n".join(head + body + ["}"])


def _later_better(dtype: np.dtype, op: str, v: str, vi: str, r: str) -> str:
    """Condition for element ``e`` (index ``r``) to replace (v, vi) when it comes later than
    every element seen (a sequential run): ties keep the earlier element."""
    cmp = ">" if op == "argmax" else "<"
    # bitwise, not short-circuit, operators: no branches; ``e != e`` rather than isnan(),
    # which PoCL does not inline (argmax ran 3x slower with it)
    if dtype.kind == "f":
        return f"({vi} < 0) | (e {cmp} {v}) | ((e != e) & ({v} == {v}))"
    if dtype.kind == "c":
        return f"clnp_{op}_better({v}, {vi}, e, (long)({r}))"
    return f"({vi} < 0) | (e {cmp} {v})"


def _params(spec: ArgReduceSpec, acc: str) -> list[str]:
    idx = spec.index
    p = [f"const {idx} n_out", f"const {idx} parts", f"const {idx} chunk", f"const {idx} nred"]
    p += [f"const {idx} do{d}" for d in range(spec.ndim_out)]
    p += [f"const {idx} dr{d}" for d in range(spec.ndim_red)]
    p += [f"__global const {C.storage_ctype(spec.dtype)} *restrict x", f"const {idx} xo"]
    p += [f"const {idx} so{d}" for d in range(spec.ndim_out)]
    p += [f"const {idx} sr{d}" for d in range(spec.ndim_red)]
    p += [f"__global {acc} *pv", "__global long *pi"]
    return p


def _base(spec: ArgReduceSpec, o: str) -> list[str]:
    """Statements computing ``base``, the input offset of output ``o``."""
    idx = spec.index
    lines = [f"  {idx} rem = {o}, base = xo;"]
    for d in reversed(range(spec.ndim_out)):
        lines.append(f"  base += (rem % do{d}) * so{d}; rem /= do{d};" if d else
                     "  base += rem * so0;")
    return lines


def _search_loop(spec: ArgReduceSpec, acc: str, op: str, start: str, stop: str,
                 step: str) -> list[str]:
    """Statements folding elements ``start, start + step, ... < stop`` into (v, vi)."""
    idx = spec.index
    # sequential runs keep independent (value, index) pairs for interleaved elements, which
    # hides the latency of the compare-and-select chain; they are merged by index at the end
    unroll = 4 if step == "1" and spec.ndim_red == 1 else 1
    lines = []
    for u in range(unroll):
        lines.append(f"  {acc} v{u} = ({acc})0; long vi{u} = -1;")

    def fold(u: int, r: str) -> list[str]:
        out = []
        if spec.ndim_red == 1:
            out.append(f"    {{ const {idx} p = base + ({r}) * sr0;")
        else:
            out.append(f"    {{ {idx} rr = {r}, p = base;")
            for d in reversed(range(spec.ndim_red)):
                out.append(f"      p += (rr % dr{d}) * sr{d}; rr /= dr{d};" if d else
                           "      p += rr * sr0;")
        out.append(f"      const {acc} e = {C.load(spec.dtype, 'x', 'p')};")
        cond = _later_better(spec.dtype, op, f"v{u}", f"vi{u}", r)
        out.append(f"      const int t = {cond};")
        out.append(f"      v{u} = t ? e : v{u}; vi{u} = t ? (long)({r}) : vi{u}; }}")
        return out

    lines.append(f"  {idx} r = {start};")
    if unroll > 1:
        lines.append(f"  for (; r + {unroll - 1} < {stop}; r += {unroll}) {{")
        for u in range(unroll):
            lines += fold(u, f"r + {u}" if u else "r")
        lines.append("  }")
    lines.append(f"  for (; r < {stop}; r += {step}) {{")
    lines += fold(0, "r")
    lines.append("  }")
    for u in range(1, unroll):
        lines.append(f"  if (clnp_{op}_better(v0, vi0, v{u}, vi{u})) {{ v0 = v{u}; "
                     f"vi0 = vi{u}; }}")
    lines.append("  {acc} v = v0; long vi = vi0;".replace("{acc}", acc))
    return lines


def _local_kernel(spec: ArgReduceSpec, acc: str, op: str) -> str:
    idx, g = spec.index, spec.group
    lines = [f"__kernel __attribute__((reqd_work_group_size({g}, 1, 1)))",
             f"void {kernel_name(op, 'local')}(" + ",\n    ".join(_params(spec, acc)) + ")\n{",
             f"  __local {acc} sv[{g}];", f"  __local long si[{g}];",
             f"  const {idx} grp = get_group_id(0), lid = get_local_id(0);",
             f"  const {idx} o = grp / parts, part = grp % parts;"]
    lines += _base(spec, "o")
    lines += [f"  const {idx} lo = part * chunk, hi = min(lo + chunk, nred);"]
    if spec.mode == "blocked":
        # CPU drivers run a group's items one after another: give each a contiguous run
        lines += [f"  const {idx} run = (hi - lo + {g - 1}) / {g};",
                  f"  const {idx} b0 = min(lo + lid * run, hi), b1 = min(b0 + run, hi);"]
        lines += _search_loop(spec, acc, op, "b0", "b1", "1")
    else:
        lines += _search_loop(spec, acc, op, "lo + lid", "hi", str(g))
    lines += _tree(g, op)
    lines += ["  if (lid == 0) {", "    pi[grp] = si[0];",
              "    if (parts > 1) pv[grp] = sv[0];", "  }", "}"]
    return "\n".join(lines)


def _tree(g: int, op: str) -> list[str]:
    """Combine the items' (v, vi) through local memory into ``sv[0], si[0]``."""
    lines = ["  sv[lid] = v; si[lid] = vi;", "  barrier(CLK_LOCAL_MEM_FENCE);"]
    s = g // 2
    while s >= 1:
        lines.append(f"  if (lid < {s} && clnp_{op}_better(sv[lid], si[lid], sv[lid + {s}], "
                     f"si[lid + {s}])) {{ sv[lid] = sv[lid + {s}]; si[lid] = si[lid + {s}]; }}")
        lines.append("  barrier(CLK_LOCAL_MEM_FENCE);")
        s //= 2
    return lines


def _column_kernel(spec: ArgReduceSpec, acc: str, op: str) -> str:
    idx = spec.index
    lines = [f"__kernel void {kernel_name(op, 'column')}(" +
             ",\n    ".join(_params(spec, acc)) + ")\n{",
             f"  const {idx} gid = get_global_id(0);",
             "  if (gid >= n_out * parts) return;",
             f"  const {idx} o = gid % n_out, part = gid / n_out;"]
    lines += _base(spec, "o")
    lines += [f"  const {idx} lo = part * chunk, hi = min(lo + chunk, nred);"]
    lines += _search_loop(spec, acc, op, "lo", "hi", "1")
    lines += ["  pi[o * parts + part] = vi;",
              "  if (parts > 1) pv[o * parts + part] = v;", "}"]
    return "\n".join(lines)


def _final_kernel(spec: ArgReduceSpec, acc: str, op: str) -> str:
    idx, g = spec.index, spec.group
    lines = [f"__kernel __attribute__((reqd_work_group_size({g}, 1, 1)))",
             f"void {kernel_name(op, 'final')}(const {idx} n_out, const {idx} parts,",
             f"    __global const {acc} *pv, __global const long *pi, __global long *y)", "{",
             f"  __local {acc} sv[{g}];", f"  __local long si[{g}];",
             f"  const {idx} o = get_group_id(0), lid = get_local_id(0);",
             f"  {acc} v = ({acc})0;", "  long vi = -1;",
             f"  for ({idx} k = lid; k < parts; k += {g}) {{",
             f"    const {acc} e = pv[o * parts + k];",
             "    const long ie = pi[o * parts + k];",
             f"    if (clnp_{op}_better(v, vi, e, ie)) {{ v = e; vi = ie; }}",
             "  }"]
    lines += _tree(g, op)
    lines += ["  if (lid == 0) y[o] = si[0];", "}"]
    return "\n".join(lines)
