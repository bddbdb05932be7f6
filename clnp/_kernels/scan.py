"""Render inclusive scans (cumulative sum/product) along one axis, and stream compaction.

The input is viewed as rows: the kept dims (collapsed, sizes and strides as kernel arguments)
select a row, the scanned axis has length ``L`` and stride ``sx``; the output is addressed the
same way with its own strides, shifted by one element along the axis when ``init`` asks for the
identity as the first value (``include_initial``). One program per (op, dtype) layout holds:

``clnp_scan_<op>_rows``
    Work-group ``g`` scans chunk ``g % parts`` of row ``g / parts`` in tiles of ``group * k``
    elements staged in local memory (coalesced loads and stores): each item scans ``k``
    consecutive elements sequentially, the items' totals are scanned in local memory, and a
    running carry joins the tiles (work-efficient: O(1) combines per element). With
    ``parts > 1`` the chunk starts from the inclusive total of the chunks before it, read
    from ``carry`` at ``row * parts + chunk - 1``.
``clnp_scan_<op>_totals``
    Work-group per (row, chunk): the chunk's total into ``tot[row * parts + chunk]``.
``clnp_scan_<op>_carry``
    One item per row: the inclusive scan of its chunk totals, in place.
``clnp_scan_<op>_column``, ``clnp_scan_<op>_coltotals``
    The same with one work-item per (row, chunk) scanning (totalling) its chunk sequentially,
    adjacent items on adjacent rows: many short rows, or rows along an outer axis (adjacent
    items then read adjacent elements).
``clnp_compact`` (int64 sum programs only)
    Stream compaction for ``nonzero``: from the inclusive scan of 0/1 flags, element ``i``
    with a flag writes its coordinates (C order over ``dims``) to ``y[d * count + pos]``.

Rows split into chunks take three launches (totals, carry, scan), others one. Values are
combined in the compute type (float for float16); the first element of a run is taken as is,
not combined with the identity, and float sums start from -0.0 where they must, so special
values (-0.0, infinities) come out as successive additions/multiplications give them (up to
the order of the additions, which differs from a sequential loop for long rows).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import ctypes as C
from .._runtime.dtypes import kind as dkind

KINDS = ("rows", "totals", "carry", "column", "coltotals")


@dataclass(frozen=True)
class ScanSpec:
    op: str                  # sum | prod | a reorderable table op (maximum, bitwise_or, ...)
    dtype: np.dtype          # input and output dtype
    ndim: int                # collapsed kept dims (at least 1: pad with a unit dim)
    group: int               # work-group size of ``rows``/``totals`` (power of two)
    k: int                   # elements per item per tile in ``rows``
    index: str = "long"      # C type of offsets and counters


def acc_dtype(dtype: np.dtype) -> np.dtype:
    """Dtype of chunk totals (the compute type of ``dtype``: float for float16, int for
    bool, whose C compute type the kernels use)."""
    if dtype.name in ("float16", "bfloat16"):
        return np.dtype(np.float32)
    return np.dtype(np.int32) if dkind(dtype) == "b" else dtype


def kernel_name(spec: ScanSpec, kind: str) -> str:
    return "clnp_compact" if kind == "compact" else f"clnp_scan_{spec.op}_{kind}"


def has_compact(spec: ScanSpec) -> bool:
    return spec.op == "sum" and spec.dtype == np.int64


def render_scan(spec: ScanSpec, kind: str) -> tuple[str, str, list]:
    """Return ``(source, kernel name, scalar_arg_dtypes)`` for kernel ``kind`` (one of
    :data:`KINDS`, or ``compact``); the source is the same for every kind of ``spec``."""
    if kind not in KINDS and not (kind == "compact" and has_compact(spec)):
        raise ValueError(f"unknown scan kernel {kind} for {spec}")
    it = np.dtype(np.int64 if spec.index == "long" else np.int32)
    nd = spec.ndim
    row_args = [it] * nd + [None, it] + [it] * nd + [it]       # do..., x, xo, so..., sx
    out_args = [None, it] + [it] * nd + [it]                    # y, yo, yso..., sy
    argtypes: list = {
        "rows": [it] * 5 + row_args + out_args + [None],
        "totals": [it] * 4 + row_args + [None],
        "carry": [it, it, None],
        "column": [it] * 5 + row_args + out_args + [None],
        "coltotals": [it] * 4 + row_args + [None],
        "compact": [np.dtype(np.int64), np.dtype(np.int32), None, None, np.dtype(np.int64),
                    None],
    }[kind]
    return _source(spec), kernel_name(spec, kind), argtypes


class _Ops:
    """C spellings of the scan's combine, identities and element access."""

    def __init__(self, spec: ScanSpec):
        self.spec = spec
        d = spec.dtype
        self.acc = acc = C.compute_ctype(d)
        self.helpers: list[tuple[str, str]] = []
        if spec.op not in ("sum", "prod"):
            # a reorderable table op: its own C template combines, its identity (the
            # type's limits for maximum/minimum) pads the tiles
            from .fold import apply_op
            self._comb = apply_op(spec.op, d, "{a}", "{b}")
            self.neutral = self.init = f"(({acc}){_identity_literal(spec.op, d)})"
            return
        if dkind(d) == "c":
            r = C.real_ctype(d)
            if spec.op == "prod":
                self.helpers.append(("cmul", acc))
                self._comb = f"clnp_cmul_{acc}({{a}}, {{b}})"
                self.neutral = self.init = f"(({acc})(({r})1, ({r})0))"
            else:
                self._comb = "({a}) + ({b})"
                # -0.0 + z == z for every z, where +0.0 would turn a -0.0 part into +0.0
                self.neutral = f"(({acc})(-({r})0, -({r})0))"
                self.init = f"(({acc})(({r})0, ({r})0))"
        else:
            self._comb = "({a}) + ({b})" if spec.op == "sum" else "({a}) * ({b})"
            one = "1" if spec.op == "prod" else "0"
            self.init = f"(({acc}){one})"
            self.neutral = f"(-({acc})0)" if dkind(d) == "f" and spec.op == "sum" else self.init

    def comb(self, a: str, b: str) -> str:
        return self._comb.format(a=a, b=b)

    def load(self, off: str) -> str:
        return C.load(self.spec.dtype, "x", off)

    def store(self, off: str, value: str) -> str:
        return C.store(self.spec.dtype, "y", off, C.convert(value, self.spec.dtype,
                                                             self.spec.dtype, to_storage=True))


_LIMITS = {"char": ("CHAR_MIN", "CHAR_MAX"), "short": ("SHRT_MIN", "SHRT_MAX"),
           "int": ("INT_MIN", "INT_MAX"), "long": ("LONG_MIN", "LONG_MAX"),
           "uchar": ("0", "UCHAR_MAX"), "ushort": ("0", "USHRT_MAX"), "uint": ("0", "UINT_MAX"),
           "ulong": ("0", "ULONG_MAX"), "float": ("-INFINITY", "INFINITY"),
           "double": ("-INFINITY", "INFINITY")}


def _identity_literal(op: str, d: np.dtype) -> str:
    """C literal of ``op``'s identity in ``d``'s compute type."""
    from . import op_table as _ops
    ident = _ops.OPS[op].identity
    if op in ("maximum", "minimum"):
        lo, hi = _LIMITS[C.compute_ctype(d)]
        return lo if op == "maximum" else hi
    if ident is None:
        raise ValueError(f"{op} has no identity to scan with")
    if isinstance(ident, float) and ident == float("-inf"):
        return "-INFINITY"
    if ident == -1 and dkind(d) == "u":
        return "~0"
    return str(int(ident))


def _source(spec: ScanSpec) -> str:
    ops = _Ops(spec)
    if spec.op not in ("sum", "prod"):
        from .elementwise import Instr, prelude
        text = "\n".join([_rows_kernel(spec, ops), _totals_kernel(spec, ops),
                          _carry_kernel(spec, ops), _column_kernel(spec, ops),
                          _coltotals_kernel(spec, ops)])
        body = (Instr(spec.op, (0, 1), (spec.dtype,) * 2, spec.dtype, spec.dtype),)
        head = prelude(f"// clnp scans: {spec.op} of {spec.dtype} (group {spec.group}, "
                       f"k {spec.k})", body, [spec.dtype], text, 1)
        return "\n".join(head + [text])
    lines = [f"// clnp scans: {spec.op} of {spec.dtype} (group {spec.group}, k {spec.k})"]
    if C.uses_fp64([spec.dtype]):
        lines.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    if ops.helpers:
        from .helpers import render_helpers
        lines.append(render_helpers(ops.helpers))
    lines += [_rows_kernel(spec, ops), _totals_kernel(spec, ops), _carry_kernel(spec, ops),
              _column_kernel(spec, ops), _coltotals_kernel(spec, ops)]
    if has_compact(spec):
        lines.append(_COMPACT)
    return "\n".join(lines)


def _row_params(spec: ScanSpec) -> list[str]:
    idx, nd = spec.index, spec.ndim
    return ([f"const {idx} do{d}" for d in range(nd)] +
            [f"__global const {C.storage_ctype(spec.dtype)} *restrict x", f"const {idx} xo"] +
            [f"const {idx} so{d}" for d in range(nd)] + [f"const {idx} sx"])


def _out_params(spec: ScanSpec) -> list[str]:
    idx, nd = spec.index, spec.ndim
    return ([f"__global {C.storage_ctype(spec.dtype)} *y", f"const {idx} yo"] +
            [f"const {idx} yso{d}" for d in range(nd)] + [f"const {idx} sy"])


def _bases(spec: ScanSpec, o: str, out: bool = True) -> list[str]:
    """Statements computing ``xb`` (and ``yb``): the input (output) offset of row ``o``."""
    idx = spec.index
    lines = [f"  {idx} rem = {o}, xb = xo" + (", yb = yo;" if out else ";")]
    for d in reversed(range(spec.ndim)):
        q = f"rem % do{d}" if d else "rem"
        lines.append(f"  {{ const {idx} q = {q}; xb += q * so{d};" +
                     (f" yb += q * yso{d};" if out else "") +
                     (f" rem /= do{d}; }}" if d else " }"))
    return lines


def _header(name: str, params: list[str], group: int | None = None) -> list[str]:
    attr = (f"__kernel __attribute__((reqd_work_group_size({group}, 1, 1)))\n"
            if group else "__kernel ")
    return [f"{attr}void {name}(" + ",\n    ".join(params) + ")\n{"]


def _rows_kernel(spec: ScanSpec, ops: _Ops) -> str:
    idx, g, k, acc = spec.index, spec.group, spec.k, ops.acc
    tile = g * k
    params = ([f"const {idx} n_rows", f"const {idx} parts", f"const {idx} chunk",
               f"const {idx} L", f"const {idx} init"] + _row_params(spec) + _out_params(spec) +
              [f"__global const {acc} *carry"])
    lines = _header(kernel_name(spec, "rows"), params, g)
    # the tile goes through local memory so that global reads and writes are coalesced
    # (item i touches elements i, i + group, ...) while each item scans k consecutive
    # elements; one pad slot per 32 keeps the strided local accesses free of bank conflicts
    lines += [f"  __local {acc} sh[{g}];",
              f"  __local {acc} tile[{tile + tile // 32}];",
              f"  const {idx} grp = get_group_id(0), lid = get_local_id(0);",
              f"  const {idx} o = grp / parts, part = grp % parts;"]
    lines += _bases(spec, "o")
    lines += [f"  const {idx} lo = part * chunk, hi = min(lo + chunk, L);",
              "  int hc = part > 0;   // whether c holds a carry",
              f"  {acc} c = hc ? carry[o * parts + part - 1] : {ops.neutral};",
              f"  if (init && part == 0 && lid == 0) {ops.store('yb', ops.init)}",
              f"  for ({idx} t = lo; t < hi; t += {tile}) {{",
              f"    for (int j = 0; j < {k}; j++) {{",
              f"      const int q = j * {g} + (int)lid;",
              f"      if (t + q < hi) tile[q + (q >> 5)] = {ops.load('xb + (t + q) * sx')};",
              "    }",
              "    barrier(CLK_LOCAL_MEM_FENCE);",
              f"    const int q0 = (int)lid * {k};",
              f"    {acc} s = {ops.neutral};",
              f"    for (int j = 0; j < {k}; j++) {{",
              "      const int q = q0 + j;",
              f"      if (t + q < hi) {{ s = j ? {ops.comb('s', 'tile[q + (q >> 5)]')} : "
              "tile[q + (q >> 5)]; tile[q + (q >> 5)] = s; }",
              "    }",
              "    sh[lid] = s;",
              "    barrier(CLK_LOCAL_MEM_FENCE);",
              f"    for (int d = 1; d < {g}; d <<= 1) {{",
              f"      const {acc} u = lid >= d ? sh[lid - d] : s;",
              "      barrier(CLK_LOCAL_MEM_FENCE);",
              f"      if (lid >= d) sh[lid] = {ops.comb('u', 'sh[lid]')};",
              "      barrier(CLK_LOCAL_MEM_FENCE);",
              "    }",
              "    if (lid || hc) {",
              f"      const {acc} pre = lid ? (hc ? {ops.comb('c', 'sh[lid - 1]')} : sh[lid - 1])"
              " : c;",
              f"      for (int j = 0; j < {k}; j++) {{",
              "        const int q = q0 + j;",
              f"        if (t + q < hi) tile[q + (q >> 5)] = "
              f"{ops.comb('pre', 'tile[q + (q >> 5)]')};",
              "      }",
              "    }",
              "    barrier(CLK_LOCAL_MEM_FENCE);",
              f"    for (int j = 0; j < {k}; j++) {{",
              f"      const int q = j * {g} + (int)lid;",
              "      if (t + q < hi) " + ops.store("yb + (t + q + init) * sy",
                                              "tile[q + (q >> 5)]"),
              "    }",
              f"    c = hc ? {ops.comb('c', f'sh[{g - 1}]')} : sh[{g - 1}];",
              "    hc = 1;",
              "    barrier(CLK_LOCAL_MEM_FENCE);   // sh and tile are rewritten by the next tile",
              "  }",
              "}"]
    return "\n".join(lines)


def _totals_kernel(spec: ScanSpec, ops: _Ops) -> str:
    idx, g, acc = spec.index, spec.group, ops.acc
    params = ([f"const {idx} n_rows", f"const {idx} parts", f"const {idx} chunk",
               f"const {idx} L"] + _row_params(spec) + [f"__global {acc} *tot"])
    lines = _header(kernel_name(spec, "totals"), params, g)
    lines += [f"  __local {acc} sh[{g}];",
              f"  const {idx} grp = get_group_id(0), lid = get_local_id(0);",
              f"  const {idx} o = grp / parts, part = grp % parts;"]
    lines += _bases(spec, "o", out=False)
    lines += [f"  const {idx} lo = part * chunk, hi = min(lo + chunk, L);",
              f"  {acc} s = {ops.neutral};",
              f"  for ({idx} r = lo + lid; r < hi; r += {g}) {{",
              f"    const {acc} e = {ops.load('xb + r * sx')};",
              f"    s = r == lo + lid ? e : {ops.comb('s', 'e')};",
              "  }",
              "  sh[lid] = s;",
              "  barrier(CLK_LOCAL_MEM_FENCE);"]
    s = g // 2
    while s >= 1:
        lines.append(f"  if (lid < {s}) sh[lid] = {ops.comb('sh[lid]', f'sh[lid + {s}]')};")
        lines.append("  barrier(CLK_LOCAL_MEM_FENCE);")
        s //= 2
    lines += ["  if (lid == 0) tot[grp] = sh[0];", "}"]
    return "\n".join(lines)


def _carry_kernel(spec: ScanSpec, ops: _Ops) -> str:
    idx, acc = spec.index, ops.acc
    return "\n".join(_header(kernel_name(spec, "carry"),
                             [f"const {idx} n_rows", f"const {idx} parts",
                              f"__global {acc} *tot"]) + [
        f"  const {idx} o = get_global_id(0);",
        "  if (o >= n_rows) return;",
        f"  {acc} c = tot[o * parts];",
        f"  for ({idx} j = 1; j < parts; j++) {{",
        f"    c = {ops.comb('c', 'tot[o * parts + j]')};",
        "    tot[o * parts + j] = c;",
        "  }",
        "}"])


def _column_kernel(spec: ScanSpec, ops: _Ops) -> str:
    idx, acc = spec.index, ops.acc
    params = ([f"const {idx} n_rows", f"const {idx} parts", f"const {idx} chunk",
               f"const {idx} L", f"const {idx} init"] + _row_params(spec) + _out_params(spec) +
              [f"__global const {acc} *carry"])
    lines = _header(kernel_name(spec, "column"), params)
    lines += [f"  const {idx} gid = get_global_id(0);", "  if (gid >= n_rows * parts) return;",
              f"  const {idx} o = gid % n_rows, part = gid / n_rows;"]
    lines += _bases(spec, "o")
    lines += [f"  const {idx} lo = part * chunk, hi = min(lo + chunk, L);",
              "  int hc = part > 0;",
              f"  {acc} c = hc ? carry[o * parts + part - 1] : {ops.neutral};",
              f"  if (init && part == 0) {ops.store('yb', ops.init)}",
              f"  for ({idx} r = lo; r < hi; r++) {{",
              f"    const {acc} e = {ops.load('xb + r * sx')};",
              f"    c = hc ? {ops.comb('c', 'e')} : e;",
              "    hc = 1;",
              "    " + ops.store("yb + (r + init) * sy", "c"),
              "  }",
              "}"]
    return "\n".join(lines)


def _coltotals_kernel(spec: ScanSpec, ops: _Ops) -> str:
    idx, acc = spec.index, ops.acc
    params = ([f"const {idx} n_rows", f"const {idx} parts", f"const {idx} chunk",
               f"const {idx} L"] + _row_params(spec) + [f"__global {acc} *tot"])
    lines = _header(kernel_name(spec, "coltotals"), params)
    lines += [f"  const {idx} gid = get_global_id(0);", "  if (gid >= n_rows * parts) return;",
              f"  const {idx} o = gid % n_rows, part = gid / n_rows;"]
    lines += _bases(spec, "o", out=False)
    lines += [f"  const {idx} lo = part * chunk, hi = min(lo + chunk, L);",
              f"  {acc} s = {ops.neutral};",
              f"  for ({idx} r = lo; r < hi; r++) {{",
              f"    const {acc} e = {ops.load('xb + r * sx')};",
              f"    s = r == lo ? e : {ops.comb('s', 'e')};",
              "  }",
              "  tot[o * parts + part] = s;",
              "}"]
    return "\n".join(lines)


_COMPACT = """__kernel void clnp_compact(const long n, const int nd, __global const long *dims,
    __global const long *incl, const long count, __global long *y)
{
  const long i = get_global_id(0);
  if (i >= n) return;
  const long s = incl[i];
  if (s == (i ? incl[i - 1] : 0)) return;
  long rem = i;
  for (int d = nd - 1; d >= 0; d--) {
    const long m = dims[d];
    y[d * count + s - 1] = rem % m;
    rem /= m;
  }
}"""
