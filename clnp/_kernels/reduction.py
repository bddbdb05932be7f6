"""Render axis reductions: one kernel serves every shape of a given (op, dtypes, ndim) spec.

The input is viewed as (kept dims..., reduced dims...) through strides, so no transpose is
materialised. The reduced index range of each output is split into ``parts`` chunks; with
``parts > 1`` the partial results go to a scratch array ``[n_out, parts]`` that a second launch
reduces (two-stage reduction). Ways to map the work onto work-items (``ReduceSpec.mode``):

``group``
    Work-group ``g`` computes chunk ``g % parts`` of output ``g / parts``; its items read
    interleaved elements (coalesced on GPUs) and combine through local memory. With
    ``vec > 1``, runs of unit stride (checked at run time) are read as aligned ``vec``-wide
    vectors, four per item in flight (GPUs need many bytes in flight per item).
``blocked``
    The same, but each item reads one contiguous run: CPU drivers run a work-group's items one
    after another, so interleaved reads would stream every cache line once per item.
``column``
    One work-item per (``vec`` adjacent outputs, chunk), adjacent items on adjacent outputs:
    reductions over outer axes (``sum(x, axis=0)`` of a C-ordered matrix) then read rows.
    GPUs use ``vec == 1`` (coalescing does the rest); CPUs a cache line's worth per item.
``group`` with ``fused``
    GPUs, two-stage reductions in one launch: every work-group stores its partial result to
    ``pbuf`` and counts itself done on ``cnt[o]``; the last group of output ``o`` combines
    the ``parts`` partials in a fixed order (so results do not depend on arrival order),
    writes the output and resets the counter. Saves the second kernel, whose launch alone
    costs several microseconds on GPU drivers. Extra arguments: ``pbuf, cnt``.
``gcolumn``
    GPUs, reductions over outer axes: work-group ``g`` owns ``lanes * vec`` adjacent outputs
    (``vec``-wide vector loads where the planner found them aligned) and splits the reduced
    range among its ``group / lanes`` rows of items, which combine through local memory: one
    launch reads long columns with enough rows in flight.
``rows``
    CPUs, for rows of up to a few thousand elements along the innermost axes: one work-item
    per (``vec`` adjacent outputs, chunk) that reduces them one after another, each a
    sequential run (no work-group overhead per row, and one input stream at a time where
    ``column`` would interleave ``vec`` rows).
``tile``
    CPUs, when the innermost kept dim is contiguous: one work-item per (``vec`` adjacent
    outputs along that dim, chunk), with ``vec`` accumulators in a private array, so each
    reduced step reads ``vec`` contiguous elements (a kilobyte: whole cache lines and few
    pages per row, where ``column``'s one line per row and item crosses a page every time).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import ctypes as C
from .._runtime.dtypes import HALF, kind as dkind

# op -> (combine template over acc values a, b; neutral element template)
_REDUCE = {
    "sum": ("({a}) + ({b})", "0"),
    "prod": ("({a}) * ({b})", "1"),
    "max": ("clnp_maximum_{T}({a}, {b})", "MIN"),
    "min": ("clnp_minimum_{T}({a}, {b})", "MAX"),
    "any": ("(({a}) || ({b}))", "0"),
    "all": ("(({a}) && ({b}))", "1"),
}

_LIMITS = {
    "char": ("CHAR_MIN", "CHAR_MAX"), "short": ("SHRT_MIN", "SHRT_MAX"),
    "int": ("INT_MIN", "INT_MAX"), "long": ("LONG_MIN", "LONG_MAX"),
    "uchar": ("0", "UCHAR_MAX"), "ushort": ("0", "USHRT_MAX"), "uint": ("0", "UINT_MAX"),
    "ulong": ("0", "ULONG_MAX"), "float": ("-INFINITY", "INFINITY"),
    "double": ("-INFINITY", "INFINITY"),
}


@dataclass(frozen=True)
class ReduceSpec:
    op: str                  # sum | prod | max | min | any | all
    in_dtype: np.dtype
    acc_dtype: np.dtype      # accumulation (and partial-result) dtype
    out_dtype: np.dtype
    ndim_out: int            # kept dims (collapsed)
    ndim_red: int            # reduced dims (collapsed)
    group: int               # work-group size (power of two; ``column``: any)
    index: str = "long"
    mode: str = "group"      # group | blocked | column | rows | tile (module docstring)
    vec: int = 1             # column, rows, tile, gcolumn: adjacent outputs per work-item;
    #                          group: vector width of unit-stride runs
    lanes: int = 1           # gcolumn: items across outputs in a work-group
    fused: bool = False      # group: the last work-group of an output combines the partials


FUSED_OPS = ("sum", "prod", "max", "min")


def fusable(op: str, acc_dtype: np.dtype, extensions: Any = ()) -> bool:
    """Whether ``op`` accumulating in ``acc_dtype`` has a ``fused`` kernel on a device with
    ``extensions``: real and integer accumulators whose partials cross work-groups through
    atomics (:func:`shared_store`)."""
    return op in FUSED_OPS and shares(acc_dtype, extensions)


# Kernels whose work-groups hand values to one another (the last group of an output combining
# the others' partials: ``fused`` reductions here, ``finish`` in clnp_grad.jit's fused
# reductions) store and read those values with atomic operations, and reset their counters
# with one: OpenCL 1.2 orders nothing between work-groups but atomics, and Oclgrind reports
# plain accesses there as data races. 8-byte values need cl_khr_int64_base_atomics.
ATOMICS64 = "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable"
_WORD = {4: {"f": "float", "i": "int", "u": "uint"}, 8: {"f": "double", "i": "long",
                                                          "u": "ulong"}}


def shares(dtype: np.dtype, extensions: Any = ()) -> bool:
    """Whether values of ``dtype`` can be handed between work-groups on a device with
    ``extensions`` (4-byte reals and integers; 8-byte ones with 64-bit atomics)."""
    d = np.dtype(dtype)
    return dkind(d) in "fiu" and (d.itemsize == 4 or (
        d.itemsize == 8 and "cl_khr_int64_base_atomics" in extensions))


def shared_store(dtype: np.dtype, ptr: str, idx: str, value: str) -> str:
    """``ptr[idx] = value`` as an atomic exchange (another work-group reads it)."""
    d = np.dtype(dtype)
    t = _WORD[d.itemsize][dkind(d)]
    if d.itemsize == 4:
        return f"atomic_xchg((volatile __global {t} *)({ptr} + {idx}), ({t})({value}));"
    return f"atom_xchg((volatile __global long *)({ptr} + {idx}), as_long(({t})({value})));"


def shared_load(dtype: np.dtype, ptr: str, idx: str) -> str:
    """``ptr[idx]`` read atomically (an addition of zero): a value another work-group
    stored with :func:`shared_store`."""
    d = np.dtype(dtype)
    t = _WORD[d.itemsize][dkind(d)]
    if d.itemsize == 4:
        return f"as_{t}(atomic_add((volatile __global int *)({ptr} + {idx}), 0))"
    return f"as_{t}(atom_add((volatile __global long *)({ptr} + {idx}), 0L))"


def uses_atomics64(dtypes: Any) -> bool:
    """Whether values of any of ``dtypes`` handed between work-groups need 64-bit atomics
    (a program using them enables :data:`ATOMICS64`)."""
    return any(np.dtype(d).itemsize == 8 and dkind(np.dtype(d)) in "fiu" for d in dtypes)


_BOOL = np.dtype(np.bool_)
_F32 = np.dtype(np.float32)
_I64, _U64 = np.dtype(np.int64), np.dtype(np.uint64)


def family(spec: ReduceSpec) -> tuple[ReduceSpec, ...]:
    """The specs rendered into one program together with ``spec``.

    A PoCL build costs about the same for one kernel as for six, so every reduction the
    namespace issues by default for one input dtype and layout (sum/prod in the default
    accumulator, max/min, any/all) shares a program; other specs get a program of their own.
    """
    t = spec.in_dtype
    half = t in HALF
    acc = {"b": _I64, "i": _I64, "u": _U64}.get(t.kind, _F32 if half else t)
    mm = _F32 if half else t
    variants = [("sum", acc, t if half else acc), ("prod", acc, t if half else acc),
                ("any", _BOOL, _BOOL), ("all", _BOOL, _BOOL)]
    if t.kind != "c":
        variants += [("max", mm, t), ("min", mm, t)]
    if spec.fused:
        variants = [v for v in variants if fusable(v[0], v[1])]
    specs = tuple(ReduceSpec(op, t, a, o, spec.ndim_out, spec.ndim_red, spec.group, spec.index,
                             spec.mode, spec.vec, spec.lanes, spec.fused)
                  for op, a, o in variants)
    return specs if spec in specs else (spec,)


def render_reduction(spec: ReduceSpec) -> tuple[str, str, list]:
    """Return ``(source, name, scalar_arg_dtypes)``; the source holds the kernels of the
    whole :func:`family` of ``spec`` (named ``clnp_reduce_<op>``).

    Arguments: ``n_out, parts, chunk, nred, d_out..., d_red..., in, in_off, s_out..., s_red...,
    out, out_off`` (the output is dense in kept-dims order, or [n_out, parts] for partials).
    """
    specs = family(spec)
    helpers: list[tuple[str, str]] = []
    kernels: list[str] = []
    argtypes: list = []
    for s in specs:
        src, hs, args = _render_kernel(s)
        helpers += [h for h in hs if h not in helpers]
        kernels.append(src)
        if s == spec:
            argtypes = args
    dtypes = [d for s in specs for d in (s.in_dtype, s.acc_dtype, s.out_dtype)]
    # the header must not name ``spec.op``: siblings find the program by its source text
    lines = [f"// clnp reductions of {spec.in_dtype}: {', '.join(s.op for s in specs)}"]
    if C.uses_fp64(dtypes):
        lines.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    if any(s.fused for s in specs) and uses_atomics64(s.acc_dtype for s in specs):
        lines.append(ATOMICS64)
    if helpers:
        from .helpers import render_helpers
        lines.append(render_helpers(helpers))
    body = "\n".join(kernels)
    # conversions to float16 may call rounding helpers of the elementwise renderer
    from .elementwise import _LOCAL_HELPERS
    lines += [src for (n, t), src in _LOCAL_HELPERS.items() if f"clnp_{n}_{t}(" in body]
    lines.append(body)
    return "\n".join(lines), f"clnp_reduce_{spec.op}", argtypes


def _render_kernel(spec: ReduceSpec) -> tuple[str, list[tuple[str, str]], list]:
    """One reduction kernel: ``(source, helpers it needs, scalar_arg_dtypes)``."""
    idx, g = spec.index, spec.group
    acc = C.compute_ctype(spec.acc_dtype)
    comb, neutral = _REDUCE[spec.op]
    if spec.acc_dtype.kind == "c":
        if spec.op == "prod":
            comb = "clnp_cmul_{T}({a}, {b})"
        neutral = f"(({acc})(({C.real_ctype(spec.acc_dtype)}){neutral}, 0))"
    elif neutral in ("MIN", "MAX"):
        neutral = _LIMITS[acc][0 if neutral == "MIN" else 1]
    if spec.acc_dtype.kind in "iub" and spec.op in ("max", "min"):
        comb = "max({a}, {b})" if spec.op == "max" else "min({a}, {b})"
    combine = comb.replace("{T}", acc)
    it = np.dtype(np.int64 if idx == "long" else np.int32)
    params = [f"const {idx} n_out", f"const {idx} parts", f"const {idx} chunk", f"const {idx} nred"]
    params += [f"const {idx} do{d}" for d in range(spec.ndim_out)]
    params += [f"const {idx} dr{d}" for d in range(spec.ndim_red)]
    params += [f"__global const {C.storage_ctype(spec.in_dtype)} *restrict x", f"const {idx} xo"]
    params += [f"const {idx} so{d}" for d in range(spec.ndim_out)]
    params += [f"const {idx} sr{d}" for d in range(spec.ndim_red)]
    params += [f"__global {C.storage_ctype(spec.out_dtype)} *y", f"const {idx} yo"]
    argtypes: list = [it] * (4 + spec.ndim_out + spec.ndim_red) + [None, it]
    argtypes += [it] * (spec.ndim_out + spec.ndim_red) + [None, it]
    if spec.fused:
        params += [f"__global {acc} *pbuf", "__global volatile uint *cnt"]
        argtypes += [None, None]

    helpers = []
    if "clnp_" in combine:
        helpers.append((combine.split("(")[0][len("clnp_"):].rsplit("_", 1)[0], acc))
    lines = [f"// {spec.op}: {spec.in_dtype} -> {spec.out_dtype} (accumulating in "
             f"{spec.acc_dtype}; {spec.mode})"]
    name = f"clnp_reduce_{spec.op}"
    if spec.mode in ("column", "tile", "gcolumn"):
        body = {"column": _column_body, "tile": _tile_body, "gcolumn": _gcolumn_body}[spec.mode]
        lines += body(spec, acc, neutral, combine, params, name)
        return "\n".join(lines), helpers, argtypes
    rows = spec.mode == "rows"
    if rows:
        lines += [f"__kernel void {name}(" + ",\n    ".join(params) + ")\n{",
                  f"  const {idx} gid = get_global_id(0);",
                  f"  const {idx} nb = (n_out + {spec.vec - 1}) / {spec.vec};",
                  "  if (gid >= nb * parts) return;",
                  f"  const {idx} part = gid / nb, o0 = (gid % nb) * {spec.vec};",
                  f"  const {idx} b0 = part * chunk, b1 = min(b0 + chunk, nred);",
                  f"  for (int k = 0; k < {spec.vec} && o0 + k < n_out; k++) {{",
                  f"  const {idx} o = o0 + k, grp = o * parts + part;"]
        lines += _base_offset(spec, "o", "base")
        start, stop, step = "b0", "b1", "1"
    else:
        lines += [f"__kernel __attribute__((reqd_work_group_size({g}, 1, 1)))\n"
                  f"void {name}(" + ",\n    ".join(params) + ")\n{",
                  f"  __local {acc} scratch[{g}];",
                  *(["  __local int last;"] if spec.fused else []),
                  f"  const {idx} grp = get_group_id(0);",
                  f"  const {idx} lid = get_local_id(0);",
                  f"  const {idx} o = grp / parts, part = grp % parts;"]
        lines += _base_offset(spec, "o", "base")
        lines += [f"  const {idx} lo = part * chunk;",
                  f"  const {idx} hi = min(lo + chunk, nred);"]
        if spec.mode == "blocked":
            lines += [f"  const {idx} run = (hi - lo + {g - 1}) / {g};",
                      f"  const {idx} b0 = min(lo + lid * run, hi), b1 = min(b0 + run, hi);"]
            start, stop, step = "b0", "b1", "1"
        else:
            start, stop, step = "lo + lid", "hi", str(g)

    def element(r: str, out: list[str]) -> str:
        """The value of reduced element ``r`` (statements it needs go to ``out``, opening a
        block that the caller closes when ``ndim_red > 1``)."""
        if spec.ndim_red == 1:
            p = f"base + ({r}) * sr0"
        else:
            out.append(f"    {{ {idx} rr = {r}, p = base;")
            for d in reversed(range(spec.ndim_red)):
                out.append(f"      p += (rr % dr{d}) * sr{d}; rr /= dr{d};" if d else
                           "      p += rr * sr0;")
            p = "p"
        return C.convert(C.load(spec.in_dtype, "x", p), spec.in_dtype, spec.acc_dtype)

    if spec.mode in ("blocked", "rows") and spec.ndim_red > 1:
        lines += _runs_loop(spec, acc, neutral, combine, element)
        unroll = 4
    elif spec.mode == "group" and spec.vec > 1:
        unroll = 4
        lines += [f"  {acc} a{u} = {neutral};" for u in range(4)]
        lines += _vector_group_loop(spec, combine, element)
        lines.append("  else {")
        lines += _strided_loop(spec, acc, neutral, combine, element, start, stop, step, 1,
                               declare=False)
        lines.append("  }")
    else:
        # independent accumulators hide the latency of the combine on sequential runs
        unroll = 4 if step == "1" and spec.ndim_red == 1 else 1
        lines += _strided_loop(spec, acc, neutral, combine, element, start, stop, step,
                               unroll)
    total = "a0"
    for u in range(1, unroll):
        total = combine.format(a=total, b=f"a{u}")
    if rows:
        res = C.convert(f"({total})", spec.acc_dtype, spec.out_dtype, to_storage=True)
        lines += ["  " + C.store(spec.out_dtype, "y", "yo + grp", res), "  }", "}"]
        return "\n".join(lines), helpers, argtypes
    lines.append(f"  scratch[lid] = {total};")
    lines += _tree(g, acc, combine)
    res = C.convert("scratch[0]", spec.acc_dtype, spec.out_dtype, to_storage=True)
    if spec.fused:
        # release: the partial is stored and fenced before the count; the group that counts
        # last reads every partial of its output (volatile: not from a stale cache)
        pv = shared_load(spec.acc_dtype, "pbuf", "o * parts + i")
        lines += ["  if (lid == 0) {",
                  "    " + shared_store(spec.acc_dtype, "pbuf", "grp", "scratch[0]"),
                  "    mem_fence(CLK_GLOBAL_MEM_FENCE);",
                  "    last = atomic_inc(&cnt[o]) == (uint)(parts - 1);",
                  "  }",
                  "  barrier(CLK_LOCAL_MEM_FENCE);",
                  "  if (!last) return;",
                  "  mem_fence(CLK_GLOBAL_MEM_FENCE);",
                  f"  {{ {acc} a = {neutral};",
                  f"    for ({idx} i = lid; i < parts; i += {g}) "
                  f"a = {combine.format(a='a', b=pv)};",
                  "    scratch[lid] = a; }"]
        lines += _tree(g, acc, combine)
        lines += ["  if (lid == 0) {",
                  "    " + C.store(spec.out_dtype, "y", "yo + o", res),
                  "    atomic_xchg(&cnt[o], 0u);",
                  "  }", "}"]
        return "\n".join(lines), helpers, argtypes
    lines.append("  if (lid == 0) {")
    lines.append("    " + C.store(spec.out_dtype, "y", "yo + grp", res))
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines), helpers, argtypes


def _tree(g: int, acc: str, combine: str) -> list[str]:
    """Combine ``scratch[0 .. g)`` into ``scratch[0]`` (a barrier first: the values were just
    stored by every item)."""
    lines = ["  barrier(CLK_LOCAL_MEM_FENCE);"]
    step = g // 2
    while step >= 1:
        lines.append(f"  if (lid < {step}) {{ {acc} b = scratch[lid + {step}]; "
                     f"scratch[lid] = {combine.format(a='scratch[lid]', b='b')}; }}")
        lines.append("  barrier(CLK_LOCAL_MEM_FENCE);")
        step //= 2
    return lines


def _strided_loop(spec: ReduceSpec, acc: str, neutral: str, combine: str, element,
                  start: str, stop: str, step: str, unroll: int,
                  declare: bool = True) -> list[str]:
    """Fold elements ``start, start + step, ... < stop`` into ``a0 .. a<unroll - 1>``."""
    lines = [f"  {acc} a{u} = {neutral};" for u in range(unroll)] if declare else []
    lines.append(f"  {spec.index} r = {start};")
    if unroll > 1:
        lines.append(f"  for (; r + {unroll - 1} < {stop}; r += {unroll}) {{")
        for u in range(unroll):
            val = element(f"r + {u}", lines)
            lines.append(f"    a{u} = {combine.format(a=f'a{u}', b=val)};")
        lines.append("  }")
    lines.append(f"  for (; r < {stop}; r += {step}) {{")
    val = element("r", lines)
    lines.append(f"    a0 = {combine.format(a='a0', b=val)};")
    if spec.ndim_red > 1:
        lines.append("    }")
    lines.append("  }")
    return lines


def _runs_loop(spec: ReduceSpec, acc: str, neutral: str, combine: str, element) -> list[str]:
    """Fold the run ``[b0, b1)`` of a multi-dim reduced range into ``a0 .. a3``, one
    innermost-dim segment at a time: the index is decomposed once per segment, not per
    element (axes (0, 2) of a C-ordered 3-d array: segments are rows)."""
    idx, L = spec.index, spec.ndim_red - 1
    lines = [f"  {acc} a{u} = {neutral};" for u in range(4)]
    lines += [f"  for ({idx} r = b0; r < b1; ) {{",
              f"    {idx} rr = r / dr{L};",
              f"    const {idx} j = r - rr * dr{L}, n = min(dr{L} - j, b1 - r);",
              f"    {idx} p = base + j * sr{L};"]
    for d in reversed(range(L)):
        lines.append(f"    p += (rr % dr{d}) * sr{d}; rr /= dr{d};" if d else
                     "    p += rr * sr0;")
    val = (lambda t: C.convert(C.load(spec.in_dtype, "x", f"p + ({t}) * sr{L}"),
                               spec.in_dtype, spec.acc_dtype))
    lines.append(f"    {idx} t = 0;")
    lines.append("    for (; t + 3 < n; t += 4) {")
    for u in range(4):
        lines.append(f"      a{u} = {combine.format(a=f'a{u}', b=val(f't + {u}'))};")
    lines.append("    }")
    lines.append(f"    for (; t < n; t++) a0 = {combine.format(a='a0', b=val('t'))};")
    lines += ["    r += n;", "  }"]
    return lines


def _base_offset(spec: ReduceSpec, o: str, base: str) -> list[str]:
    """Statements computing the input offset ``base`` of output index ``o``."""
    idx = spec.index
    lines = [f"  {idx} rem_{base} = {o}, {base} = xo;"]
    for d in reversed(range(spec.ndim_out)):
        # the outermost index is already in range: no modulo
        lines.append(f"  {base} += (rem_{base} % do{d}) * so{d}; rem_{base} /= do{d};" if d else
                     f"  {base} += rem_{base} * so0;")
    return lines


def _column_body(spec: ReduceSpec, acc: str, neutral: str, combine: str, params: list[str],
                 name: str) -> list[str]:
    """The ``column`` kernel: item ``gid`` reduces chunk ``gid / nb`` of outputs
    ``(gid % nb) * vec ...`` (clamped at the end; only real outputs are stored)."""
    idx, v = spec.index, spec.vec
    lines = [f"__kernel void {name}(" + ",\n    ".join(params) + ")\n{",
             f"  const {idx} gid = get_global_id(0);",
             f"  const {idx} nb = (n_out + {v - 1}) / {v};",
             "  if (gid >= nb * parts) return;",
             f"  const {idx} o0 = (gid % nb) * {v}, part = gid / nb;"]
    for k in range(v):
        lines += _base_offset(spec, f"min(o0 + {k}, n_out - 1)", f"base{k}")
        lines.append(f"  {acc} a{k} = {neutral};")
    lines.append(f"  const {idx} lo = part * chunk;")
    lines.append(f"  const {idx} hi = min(lo + chunk, nred);")
    lines.append(f"  for ({idx} r = lo; r < hi; r++) {{")
    lines += red_offset(spec, "r", "q", "0")
    for k in range(v):
        val = C.convert(C.load(spec.in_dtype, "x", f"base{k} + q"), spec.in_dtype,
                        spec.acc_dtype)
        lines.append(f"    a{k} = {combine.format(a=f'a{k}', b=val)};")
    lines.append("  }")
    for k in range(v):
        res = C.convert(f"a{k}", spec.acc_dtype, spec.out_dtype, to_storage=True)
        store = C.store(spec.out_dtype, "y", f"yo + (o0 + {k}) * parts + part", res)
        lines.append(f"  if (o0 + {k} < n_out) {store}" if k else f"  {store}")
    lines.append("}")
    return lines


def _tile_body(spec: ReduceSpec, acc: str, neutral: str, combine: str, params: list[str],
               name: str) -> list[str]:
    """The ``tile`` kernel: item ``gid`` reduces chunk ``gid / (n_outer * nb)`` of the ``vec``
    outputs starting at column ``c0`` of outer output row ``ob`` (the innermost kept dim has
    ``do<last>`` outputs, stride 1; a row's last block may be partial)."""
    idx, v, last = spec.index, spec.vec, spec.ndim_out - 1
    load = (lambda p: C.convert(C.load(spec.in_dtype, "x", p), spec.in_dtype,
                                spec.acc_dtype))
    lines = [f"__kernel void {name}(" + ",\n    ".join(params) + ")\n{",
             f"  const {idx} gid = get_global_id(0);",
             f"  const {idx} nb = (do{last} + {v - 1}) / {v}, nblk = (n_out / do{last}) * nb;",
             "  if (gid >= nblk * parts) return;",
             f"  const {idx} blk = gid % nblk, part = gid / nblk;",
             f"  const {idx} c0 = (blk % nb) * {v}, o = (blk / nb) * do{last} + c0;",
             f"  const {idx} valid = min(({idx}){v}, do{last} - c0);"]
    lines += _base_offset(spec, "o", "base")
    lines += [f"  {acc} a[{v}];",
              f"  for (int k = 0; k < {v}; k++) a[k] = {neutral};",
              f"  const {idx} lo = part * chunk, hi = min(lo + chunk, nred);",
              f"  for ({idx} r = lo; r < hi; r++) {{"]
    lines += red_offset(spec, "r", "q", "base")
    # a full block has a constant trip count: the compiler vectorises it
    lines += [f"    if (valid == {v}) {{",
              f"      for (int k = 0; k < {v}; k++) a[k] = "
              f"{combine.format(a='a[k]', b=load('q + k'))};",
              "    } else {",
              f"      for (int k = 0; k < valid; k++) a[k] = "
              f"{combine.format(a='a[k]', b=load('q + k'))};",
              "    }", "  }"]
    res = C.convert("a[k]", spec.acc_dtype, spec.out_dtype, to_storage=True)
    lines += ["  for (int k = 0; k < valid; k++) {",
              "    " + C.store(spec.out_dtype, "y", "yo + (o + k) * parts + part", res),
              "  }", "}"]
    return lines


def vector_ok(dtype: np.dtype) -> bool:
    """Whether reductions of ``dtype`` may load whole vectors (plain numeric storage)."""
    return dkind(dtype) in "fiu" and dtype not in HALF


def red_offset(spec: Any, e: str, p: str, init: str) -> list[str]:
    """Statements declaring ``p``, the offset of reduced element ``e`` plus ``init`` (any
    spec with ``index`` and ``ndim_red``: the argreduce kernels use it too)."""
    idx = spec.index
    if spec.ndim_red == 1:
        return [f"    const {idx} {p} = {init} + ({e}) * sr0;"]
    lines = [f"    {idx} {p} = {init}, {p}_r = {e};"]
    for d in reversed(range(spec.ndim_red)):
        lines.append(f"    {p} += ({p}_r % dr{d}) * sr{d}; {p}_r /= dr{d};" if d else
                     f"    {p} += {p}_r * sr0;")
    return lines


def _vector_group_loop(spec: ReduceSpec, combine: str, element) -> list[str]:
    """The ``group`` items' fold of ``[lo, hi)`` into ``a0 .. a3`` by aligned vectors, when the
    innermost reduced dim has unit stride (and, with more reduced dims, whole vectors per
    run): a scalar head up to the first aligned element, vectors interleaved over the items
    (four loads in flight each), a scalar tail. Followed by the caller's ``else`` branch."""
    idx, g, w, L = spec.index, spec.group, spec.vec, spec.ndim_red - 1
    vt = f"{C.storage_ctype(spec.in_dtype)}{w}"
    one = spec.ndim_red == 1
    if one:
        cond, head = "sr0 == 1", f"({w} - (base + lo) % {w}) % {w}"
    else:
        conds = [f"sr{L} == 1", f"dr{L} % {w} == 0", f"base % {w} == 0"]
        conds += [f"sr{d} % {w} == 0" for d in range(L)]
        cond, head = " && ".join(conds), f"({w} - lo % {w}) % {w}"
    lines = [f"  if ({cond}) {{",
             f"    const {idx} h = min(({idx})({head}), hi - lo), n = hi - lo - h;",
             f"    const {idx} nv = n / {w}, t0 = lo + h + nv * {w};"]
    for guard, r, a in ((f"lid < h", "lo + lid", "a0"), ("lid < hi - t0", "t0 + lid", "a1")):
        body: list[str] = []
        val = element(r, body)
        lines += [f"    if ({guard}) {{"] + body + [f"    {a} = {combine.format(a=a, b=val)};"]
        lines += ["    }"] * (2 if spec.ndim_red > 1 else 1)

    def load(k: str, u: int) -> list[str]:
        if one:
            return [f"    const {vt} v{u} = xv[{k}];"]
        out = red_offset(spec, f"lo + h + ({k}) * {w}", f"p{u}", "base")
        return out + [f"    const {vt} v{u} = *(__global const {vt} *)(x + p{u});"]

    def fold(u: int) -> list[str]:
        out = []
        for c in range(w):
            val = C.convert(f"v{u}.s{c:x}", spec.in_dtype, spec.acc_dtype)
            a = f"a{(u * w + c) % 4}"
            out.append(f"    {a} = {combine.format(a=a, b=val)};")
        return out
    if one:
        lines.append(f"    __global const {vt} *xv = (__global const {vt} *)(x + base + lo + h);")
    lines += [f"    {idx} k = lid;", f"    for (; k + {3 * g} < nv; k += {4 * g}) {{"]
    for u in range(4):
        lines += load(f"k + {u * g}" if u else "k", u)
    for u in range(4):
        lines += fold(u)
    lines += ["    }", f"    for (; k < nv; k += {g}) {{"]
    lines += load("k", 0) + fold(0) + ["    }", "  }"]
    return lines


def _gcolumn_body(spec: ReduceSpec, acc: str, neutral: str, combine: str, params: list[str],
                  name: str) -> list[str]:
    """The ``gcolumn`` kernel: group ``gid`` reduces chunk ``gid / nblk`` of outputs
    ``(gid % nblk) * lanes * vec ...``; item ``lid`` takes outputs ``(lid % lanes) * vec ...``
    of them and every ``group / lanes``-th reduced element from ``lid / lanes`` on, four in
    flight. ``vec > 1``: the planner checked that a vector of outputs is contiguous and
    aligned (``n_out`` a multiple of ``vec``)."""
    idx, g, w, lanes = spec.index, spec.group, spec.vec, spec.lanes
    rows = g // lanes
    vt = f"{C.storage_ctype(spec.in_dtype)}{w}"
    lines = [f"__kernel __attribute__((reqd_work_group_size({g}, 1, 1)))\n"
             f"void {name}(" + ",\n    ".join(params) + ")\n{",
             f"  __local {acc} scratch[{g * w}];",
             f"  const {idx} gid = get_group_id(0), lid = get_local_id(0);",
             f"  const {idx} nblk = (n_out + {lanes * w - 1}) / {lanes * w};",
             f"  const {idx} part = gid / nblk, rl = lid / {lanes};",
             f"  const {idx} o0 = ((gid % nblk) * {lanes} + lid % {lanes}) * {w};"]
    # items past the end read the last vector (``n_out`` is a multiple of ``vec``)
    lines += _base_offset(spec, f"min(o0, n_out - {w})", "base")
    lines += [f"  {acc} a{u}_{c} = {neutral};" for u in range(4) for c in range(w)]
    lines += [f"  const {idx} lo = part * chunk, hi = min(lo + chunk, nred);",
              f"  {idx} r = lo + rl;"]

    def step(u: int, r: str) -> list[str]:
        out = red_offset(spec, r, f"q{u}", "base")
        if w == 1:
            vals = [C.load(spec.in_dtype, "x", f"q{u}")]
        else:
            out.append(f"    const {vt} v{u} = *(__global const {vt} *)(x + q{u});")
            vals = [f"v{u}.s{c:x}" for c in range(w)]
        for c, v in enumerate(vals):
            a = f"a{u}_{c}"
            val = C.convert(v, spec.in_dtype, spec.acc_dtype)
            out.append(f"    {a} = {combine.format(a=a, b=val)};")
        return out
    lines.append(f"  for (; r + {3 * rows} < hi; r += {4 * rows}) {{")
    for u in range(4):
        lines += step(u, f"r + {u * rows}" if u else "r")
    lines += ["  }", f"  for (; r < hi; r += {rows}) {{"] + step(0, "r") + ["  }"]
    for c in range(w):
        total = f"a0_{c}"
        for u in range(1, 4):
            total = combine.format(a=total, b=f"a{u}_{c}")
        lines.append(f"  scratch[lid * {w} + {c}] = {total};")
    lines.append("  barrier(CLK_LOCAL_MEM_FENCE);")
    s = rows // 2
    while s >= 1:
        lines.append(f"  if (rl < {s}) {{")
        for c in range(w):
            here, there = f"scratch[lid * {w} + {c}]", f"scratch[(lid + {s * lanes}) * {w} + {c}]"
            lines.append(f"    {here} = {combine.format(a=here, b=there)};")
        lines += ["  }", "  barrier(CLK_LOCAL_MEM_FENCE);"]
        s //= 2
    lines.append("  if (rl == 0) {")
    for c in range(w):
        res = C.convert(f"scratch[lid * {w} + {c}]", spec.acc_dtype, spec.out_dtype,
                        to_storage=True)
        store = C.store(spec.out_dtype, "y", f"yo + (o0 + {c}) * parts + part", res)
        lines.append(f"    if (o0 + {c} < n_out) {store}")
    lines += ["  }", "}"]
    return lines
