"""Render argmax/argmin: axis reductions that carry a (value, index) pair.

The input is viewed as (kept dims..., reduced dims...) through strides, as in
:mod:`clnp._kernels.reduction`; the index of an element is its C-order position within the
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
    One work-item per (``vec`` adjacent outputs, chunk), adjacent items on adjacent outputs
    (searches over outer axes read rows together; CPUs take a cache line of outputs per item,
    GPUs one).
``clnp_<op>_rows``
    One work-item per (output, chunk), each a sequential run: CPUs, rows along the innermost
    axes (no work-group overhead per row).
``clnp_<op>_final``
    Work-group ``o`` combines the ``parts`` partial results of output ``o`` (two-stage
    search).

Arguments of ``_local``/``_column``/``_rows``: ``n_out, parts, chunk, nred, d_out...,
d_red..., x, x_off, s_out..., s_red..., pv, pi``: ``pi`` (int64) receives the index of each (output, chunk) at
``o * parts + chunk`` (the final result when ``parts == 1``) and ``pv`` its value in the
:func:`partial_dtype` (only written when ``parts > 1``). ``_final``: ``n_out, parts, pv, pi, y``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import ctypes as C
from .reduction import red_offset
from .._runtime.dtypes import HALF, kind as dkind

OPS = ("argmax", "argmin")
KINDS = ("local", "column", "rows", "final")


@dataclass(frozen=True)
class ArgReduceSpec:
    dtype: np.dtype          # input dtype
    ndim_out: int            # kept dims after collapsing (at least 1: pad with a unit dim)
    ndim_red: int            # reduced dims after collapsing (at least 1)
    group: int               # work-group size of the ``_local`` kernels (power of two)
    index: str = "long"      # C type of offsets and counters: 'int' when they fit in 31 bits
    mode: str = "group"      # ``_local`` layout: group | blocked
    vec: int = 1             # ``_column``: adjacent outputs per work-item


def partial_dtype(dtype: np.dtype) -> np.dtype:
    """Dtype of the partial values of a two-stage search (the compute type of ``dtype``)."""
    if dkind(dtype) == "b":
        return np.dtype(np.int32)
    if dtype in HALF:
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
    lines = [f"// clnp argmax/argmin of {spec.dtype} ({spec.mode}, group {spec.group}, "
             f"vec {spec.vec})"]
    if C.uses_fp64([spec.dtype]):
        lines.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    for op in OPS:
        lines.append(_better(spec.dtype, acc, op))
    for op in OPS:
        lines.append(_local_kernel(spec, acc, op))
        lines.append(_column_kernel(spec, acc, op))
        lines.append(_column_kernel(spec, acc, op, rows=True))
        lines.append(_final_kernel(spec, acc, op))
    return "\n".join(lines)


def _better(dtype: np.dtype, acc: str, op: str) -> str:
    """``clnp_<op>_better(a, ia, b, ib)``: whether (b, ib) replaces the current (a, ia).
    NaN tests are spelled ``x != x`` (the kernels are built without fast-math options)."""
    cmp = ">" if op == "argmax" else "<"
    head = [f"inline int clnp_{op}_better({acc} a, long ia, {acc} b, long ib) {{",
            "  if (ib < 0) return 0;",
            "  if (ia < 0) return 1;"]
    if dkind(dtype) == "c":
        # NumPy: lexicographic order; a NaN in either part is extreme (the first one wins)
        body = ["  const int nb = b.x != b.x || b.y != b.y, na = a.x != a.x || a.y != a.y;",
                "  if (nb) return !na || ib < ia;",
                "  if (na) return 0;",
                f"  if (b.x {cmp} a.x || (b.x == a.x && b.y {cmp} a.y)) return 1;",
                "  return b.x == a.x && b.y == a.y && ib < ia;"]
    elif dkind(dtype) == "f":
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
    if dkind(dtype) == "f":
        return f"({vi} < 0) | (e {cmp} {v}) | ((e != e) & ({v} == {v}))"
    if dkind(dtype) == "c":
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
        # indices in the offsets' type: 32-bit selects where offsets fit (twice the lanes)
        lines.append(f"  {acc} v{u} = ({acc})0; {idx} vi{u} = -1;")

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
        out.append(f"      v{u} = t ? e : v{u}; vi{u} = t ? ({idx})({r}) : vi{u}; }}")
        return out

    lines.append(f"  {idx} r = {start};")
    if unroll > 1 and dkind(spec.dtype) != "c":
        lines += _vector_block_loop(spec, acc, op, stop)
        lines += _block_loop(spec, acc, op, stop)
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
    lines.append(f"  {acc} v = v0; long vi = vi0;")
    return lines


_BLOCK = 16


def _block_loop(spec: ArgReduceSpec, acc: str, op: str, stop: str) -> list[str]:
    """Blocks of a sequential run into (v0, vi0): the block's extreme value first (four
    independent compare-and-select chains, no indices), and only when it beats (v0, vi0) a
    scan of the block for its first occurrence. The extreme of a block can only be replaced
    by a later block's strictly better one, so the first occurrence still wins."""
    idx, B = spec.index, _BLOCK
    cmp = ">" if op == "argmax" else "<"
    nan = dkind(spec.dtype) == "f"

    def load(k: str) -> str:
        return C.load(spec.dtype, "x", f"q + ({k}) * sr0")

    def pick(y: str, m: str) -> str:
        return f"({y} {cmp} {m}) | ({y} != {y})" if nan else f"{y} {cmp} {m}"
    lines = [f"  for (; r + {B - 1} < {stop}; r += {B}) {{",
             f"    const {idx} q = base + r * sr0;"]
    lines += [f"    {acc} m{u} = {load(str(u))};" for u in range(4)]
    for t in range(4, B):
        u = t % 4
        lines.append(f"    {{ const {acc} y = {load(str(t))}; m{u} = ({pick('y', f'm{u}')}) ? "
                     f"y : m{u}; }}")
    lines += [f"    m0 = ({pick('m1', 'm0')}) ? m1 : m0;",
              f"    m2 = ({pick('m3', 'm2')}) ? m3 : m2;",
              f"    const {acc} e = ({pick('m2', 'm0')}) ? m2 : m0;",
              f"    if ({_later_better(spec.dtype, op, 'v0', 'vi0', 'r')}) {{",
              f"      for (int k = 0; k < {B}; k++) {{",
              f"        const {acc} y = {load('k')};",
              f"        if ({'(y == e) | (y != y)' if nan else 'y == e'}) {{ v0 = e; "
              f"vi0 = r + k; break; }}",
              "      }", "    }", "  }"]
    return lines


def _vector_block_loop(spec: ArgReduceSpec, acc: str, op: str, stop: str) -> list[str]:
    """:func:`_block_loop` for unit strides (checked at run time) in explicit 32-byte vectors
    (compilers do not vectorise a select chain themselves): four vectors per block."""
    t = spec.dtype
    if t.kind not in "fiu" or t in HALF:
        return []
    w = min(16, 32 // t.itemsize)
    idx, B, vt = spec.index, 4 * w, C.compute_ctype(t, w)
    cmp = ">" if op == "argmax" else "<"
    nan = t.kind == "f"

    def pick(y: str, m: str) -> str:
        return f"({y} {cmp} {m}) | ({y} != {y})" if nan else f"{y} {cmp} {m}"
    lines = ["  if (sr0 == 1) {",
             f"    for (; r + {B - 1} < {stop}; r += {B}) {{",
             f"      __global const {C.storage_ctype(t)} *q = x + base + r;",
             f"      {vt} m0 = vload{w}(0, q), m1 = vload{w}(1, q);",
             f"      {{ const {vt} y = vload{w}(2, q); m0 = select(m0, y, {pick('y', 'm0')}); }}",
             f"      {{ const {vt} y = vload{w}(3, q); m1 = select(m1, y, {pick('y', 'm1')}); }}",
             f"      m0 = select(m0, m1, {pick('m1', 'm0')});",
             f"      {acc} e = m0.s0;"]
    for k in range(1, w):
        lines.append(f"      e = ({pick(f'm0.s{k:x}', 'e')}) ? m0.s{k:x} : e;")
    lines += [f"      if ({_later_better(t, op, 'v0', 'vi0', 'r')}) {{",
              f"        for (int k = 0; k < {B}; k++) {{",
              f"          const {acc} y = q[k];",
              f"          if ({'(y == e) | (y != y)' if nan else 'y == e'}) {{ v0 = e; "
              f"vi0 = r + k; break; }}",
              "        }", "      }", "    }", "  }"]
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


def _column_kernel(spec: ArgReduceSpec, acc: str, op: str, rows: bool = False) -> str:
    """Item ``gid`` searches chunk ``gid / nb`` of outputs ``(gid % nb) * vec ...`` (clamped
    at the end; only real outputs are stored). ``rows``: the ``_rows`` kernel, one output
    per item (a sequential run each)."""
    idx, v = spec.index, 1 if rows else spec.vec
    if v == 1:
        lines = [f"__kernel void {kernel_name(op, 'rows' if rows else 'column')}(" +
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
    lines = [f"__kernel void {kernel_name(op, 'column')}(" +
             ",\n    ".join(_params(spec, acc)) + ")\n{",
             f"  const {idx} gid = get_global_id(0);",
             f"  const {idx} nb = (n_out + {v - 1}) / {v};",
             "  if (gid >= nb * parts) return;",
             f"  const {idx} o0 = (gid % nb) * {v}, part = gid / nb;"]
    for k in range(v):
        lines += [f"  {idx} base{k} = xo;", "  {",
                  f"    {idx} rem = min(o0 + {k}, n_out - 1);"]
        for d in reversed(range(spec.ndim_out)):
            lines.append(f"    base{k} += (rem % do{d}) * so{d}; rem /= do{d};" if d else
                         f"    base{k} += rem * so0;")
        lines += ["  }", f"  {acc} v{k} = ({acc})0; {idx} vi{k} = -1;"]
    lines += [f"  const {idx} lo = part * chunk, hi = min(lo + chunk, nred);",
              f"  for ({idx} r = lo; r < hi; r++) {{"]
    lines += red_offset(spec, "r", "q", "0")
    for k in range(v):
        cond = _later_better(spec.dtype, op, f"v{k}", f"vi{k}", "r")
        lines += [f"    {{ const {acc} e = {C.load(spec.dtype, 'x', f'base{k} + q')};",
                  f"      const int t = {cond};",
                  f"      v{k} = t ? e : v{k}; vi{k} = t ? r : vi{k}; }}"]
    lines.append("  }")
    for k in range(v):
        guard = f"if (o0 + {k} < n_out) " if k else ""
        lines += [f"  {guard}{{ pi[(o0 + {k}) * parts + part] = vi{k};",
                  f"    if (parts > 1) pv[(o0 + {k}) * parts + part] = v{k}; }}"]
    lines.append("}")
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
