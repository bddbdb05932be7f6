"""Row kernels: reductions over each row and the elementwise code around them in one launch.

A ``rows`` group (``rows.fuse_rows``) is one SSA program over the row space ``(kept...,
reduced...)``. Each value is either *per element* (it varies along the row) or *per row*
(operands constant along the row, reduction results, and everything computed from them only).
A per-row value has a *stage*: 0 for operands, one more than the pass computing it for a
reduction result, the largest of its arguments' otherwise. The kernel, for its row:

1. loads its per-row operands once (``u<k>``);
2. for each pass ``p`` (one per stage that has a reduction or a stored per-element value):
   evaluates the per-row code of stage ``<= p`` once, then walks the row, evaluating only the
   per-element code that the pass's reductions and stores need (the row is read again, from
   cache: no intermediate array), then combines its accumulators into per-row values;
3. evaluates the remaining per-row code and stores the per-row outputs.

Softmax is three passes (``max``; ``sum(exp(x - m))``; ``exp(x - m) / s`` stored), layernorm
three (``sum(x)``; ``sum((x - mu)^2)``; the normalised row stored), logsumexp two.

Layouts: ``serial``, one work-item per row (CPU devices), with ``vec > 1`` walking ``vec``
elements at a time with vector loads and accumulators (one reduced dim, per-element operands
unit-stride) since PoCL vectorises neither transcendental functions nor loops across
work-items; ``group``, one work-group per row (GPUs): its items interleave over the row
(coalesced), each pass's accumulators are combined in local memory and read back by every item.

Every op's C comes from the op table (``clnp._kernels.elementwise.instructions``), loads, stores
and conversions from ``clnp._kernels.ctypes``, combines from ``clnp._kernels.reduction``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from clnp._kernels import ctypes as C
from clnp._kernels.elementwise import Instr, Operand, can_vectorize, instructions, prelude
from clnp._kernels.reduction import _REDUCE

from .codegen import _HELPER, _combine, _kept_index, _red_offset, _reduced_index, neutral

_V = re.compile(r"\bv(\d+)\b")


@dataclass(frozen=True)
class RowSpec:
    inputs: tuple[Operand, ...]
    roles: tuple[str, ...]          # per input: elem | row (arrays), scalar, red
    body: tuple[Instr, ...]
    reds: tuple[tuple[str, int, np.dtype, np.dtype], ...]   # (op, body value id, acc, out)
    red_ids: tuple[int, ...]        # the input standing for each reduction's result
    elem_outs: tuple[tuple[int, np.dtype], ...]   # (value id, storage dtype), full shape
    row_outs: tuple[tuple[int, np.dtype], ...]    # (value id, storage dtype), per row
    nk: int
    nr: int
    mode: str = "serial"            # serial | group
    group: int = 1
    vec: int = 1

    @property
    def name(self) -> str:
        ops = [i.op for i in self.body] + [r[0] for r in self.reds]
        return "clnp_jrow_" + "_".join(ops)[:60]


class _Plan:
    """Per-value facts of a spec: dtypes, per-element or per-row, stage, passes."""

    def __init__(self, spec: RowSpec):
        n_in = len(spec.inputs)
        self.n_in = n_in
        self.dtypes = [o.dtype for o in spec.inputs] + [i.out_dtype for i in spec.body]
        self.elem = [r == "elem" for r in spec.roles] + [False] * len(spec.body)
        for j, ins in enumerate(spec.body):
            self.elem[n_in + j] = any(self.elem[a] for a in ins.args)
        red_of = {vid: m for m, vid in enumerate(spec.red_ids)}
        self.stage: list[int] = [0] * len(self.dtypes)
        # reduction results are inputs whose stage comes from a later body value: settle the
        # stages in rounds (each round fixes at least one more level of reductions)
        for _ in range(len(spec.reds) + 1):
            for j, ins in enumerate(spec.body):
                self.stage[n_in + j] = max((self.stage[a] for a in ins.args), default=0)
            for vid, m in red_of.items():
                self.stage[vid] = self.stage[spec.reds[m][1]] + 1
        self.red_pass = [self.stage[r[1]] for r in spec.reds]
        self.out_pass = [self.stage[v] for v, _ in spec.elem_outs]
        self.passes = sorted(set(self.red_pass) | set(self.out_pass))
        roots = [r[1] for r in spec.reds] + [v for v, _ in spec.elem_outs] + \
            [v for v, _ in spec.row_outs]
        self.needed = self.closure(spec, roots, through_rows=True)

    def closure(self, spec: RowSpec, roots: list[int], through_rows: bool,
                stop: frozenset[int] = frozenset()) -> set[int]:
        """Value ids ``roots`` depend on; per-row values end the walk unless
        ``through_rows``, and so do the values in ``stop`` (read back, not computed)."""
        seen: set[int] = set()
        stack = list(roots)
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            if v >= self.n_in and v not in stop and (through_rows or self.elem[v]):
                stack.extend(spec.body[v - self.n_in].args)
        return seen

    def stored_before(self, spec: RowSpec, p: int) -> dict[int, int]:
        """Per-element values an earlier pass stored exactly (storage type = compute
        type), by value id: their output index. Pass ``p`` reads them back instead of
        computing them again (softmax's last pass: ``exp(x - m)``, stored by the pass that
        summed it, divided by the sum), and the row's work-item reads what it wrote."""
        out: dict[int, int] = {}
        for j, (vid, dt) in enumerate(spec.elem_outs):
            if self.out_pass[j] < p and vid >= self.n_in and self.elem[vid] and \
                    dt == self.dtypes[vid] and C.storage_ctype(dt) == C.compute_ctype(dt):
                out.setdefault(vid, j)
        return out


def render_rows(spec: RowSpec) -> tuple[str, str, list]:
    """``(source, kernel name, scalar argument dtypes)`` of ``spec`` (module docstring)."""
    P = _Plan(spec)
    nk, nr = spec.nk, spec.nr
    L = np.dtype(np.int64)
    group = spec.mode == "group"
    params = ["const long n_out", "const long R"]
    params += [f"const long k{d}" for d in range(nk)] + [f"const long q{d}" for d in range(nr)]
    argtypes: list = [L, L] + [L] * (nk + nr)
    arrays = [k for k, r in enumerate(spec.roles) if r in ("elem", "row")]
    for k, (op, role) in enumerate(zip(spec.inputs, spec.roles)):
        if role == "scalar":
            params.append(f"const {C.compute_ctype(op.dtype)} a{k}")
            argtypes.append(C.scalar_arg_dtype(op.dtype))
        elif role != "red":
            params.append(f"__global const {C.storage_ctype(op.dtype)} *restrict a{k}")
            params += [f"const long o{k}"] + [f"const long ak{k}_{d}" for d in range(nk)] + \
                [f"const long ar{k}_{d}" for d in range(nr)]
            argtypes += [None] + [L] * (1 + nk + nr)
    for j, (_, dt) in enumerate(spec.elem_outs):
        params.append(f"__global {C.storage_ctype(dt)} *s{j}")
        params += [f"const long so{j}"] + [f"const long sk{j}_{d}" for d in range(nk)] + \
            [f"const long sr{j}_{d}" for d in range(nr)]
        argtypes += [None] + [L] * (1 + nk + nr)
    for j, (_, dt) in enumerate(spec.row_outs):
        params.append(f"__global {C.storage_ctype(dt)} *w{j}")
        params += [f"const long wo{j}"] + [f"const long wk{j}_{d}" for d in range(nk)]
        argtypes += [None] + [L] * (1 + nk)

    lines = [f"__kernel void {spec.name}(" + ",\n    ".join(params) + ")\n{"]
    if group:
        lines += ["  const long o = get_group_id(0);", "  const int lid = get_local_id(0);"]
        lines += [f"  __local {C.compute_ctype(acc)} loc{m}[{spec.group}];"
                  for m, (_, _, acc, _) in enumerate(spec.reds)]
    else:
        lines += ["  const long o = get_global_id(0);", "  if (o >= n_out) return;"]
    lines += ["  " + s for s in _kept_index(nk, "o")]
    for k in arrays:
        lines.append(f"  const long b{k} = o{k} + " +
                     " + ".join(f"i{d} * ak{k}_{d}" for d in range(nk)) + ";")
    for j in range(len(spec.elem_outs)):
        lines.append(f"  const long sb{j} = so{j} + " +
                     " + ".join(f"i{d} * sk{j}_{d}" for d in range(nk)) + ";")
    for k, (op, role) in enumerate(zip(spec.inputs, spec.roles)):
        if k not in P.needed:
            continue
        ct = C.compute_ctype(op.dtype)
        if role == "row":
            lines.append(f"  const {ct} u{k} = {C.load(op.dtype, f'a{k}', f'b{k}')};")
        elif role == "scalar":
            lines.append(f"  const {ct} u{k} = a{k};")
    done: set[int] = set()
    for p in P.passes:
        lines += ["  " + s for s in _row_code(spec, P, p, done)]
        lines += ["  " + s for s in _pass(spec, P, p)]
    lines += ["  " + s for s in _row_code(spec, P, None, done)]
    stores = []
    for j, (vid, dt) in enumerate(spec.row_outs):
        pos = f"wo{j} + " + " + ".join(f"i{d} * wk{j}_{d}" for d in range(nk))
        stores.append(C.store(dt, f"w{j}", pos,
                              C.convert(f"u{vid}", P.dtypes[vid], dt, to_storage=True)))
    if group and stores:
        lines.append("  if (lid == 0) {")
        lines += ["    " + s for s in stores]
        lines.append("  }")
    else:
        lines += ["  " + s for s in stores]
    lines.append("}")
    text = "\n".join(lines)
    head = prelude("// clnp jit row kernel: " + ", ".join(
        [i.op for i in spec.body] + [r[0] for r in spec.reds]), spec.body,
        P.dtypes + [r[2] for r in spec.reds] + [r[3] for r in spec.reds], text,
        4 if spec.vec > 1 else 1,
        tuple((h, C.compute_ctype(acc)) for op, _, acc, _ in spec.reds
              for h in _HELPER.findall(_REDUCE[op][0])))
    return "\n".join(head + lines), spec.name, argtypes


def _row_code(spec: RowSpec, P: _Plan, p: int | None, done: set[int]) -> list[str]:
    """Per-row instructions of stage ``<= p`` (all remaining ones for None) not yet
    emitted, as scalars named ``u<id>``."""
    out = []
    for j, ins in enumerate(spec.body):
        vid = P.n_in + j
        if vid in done or P.elem[vid] or vid not in P.needed or \
                (p is not None and P.stage[vid] > p):
            continue
        done.add(vid)
        out += [_V.sub(r"u\1", s) for s in instructions((ins,), P.dtypes, vid, 1)]
    return out


def _pass(spec: RowSpec, P: _Plan, p: int) -> list[str]:
    """The walk over the row for pass ``p``, then its reductions' per-row results."""
    reds = [m for m, q in enumerate(P.red_pass) if q == p]
    outs = [j for j, q in enumerate(P.out_pass) if q == p]
    out: list[str] = []
    group = spec.mode == "group"
    for m in reds:
        op, _, acc, _ = spec.reds[m]
        out.append(f"{C.compute_ctype(acc)} acc{m} = {neutral(op, acc)};")
    # the pass's reductions and stores whose code is vector-safe walk the row with vectors;
    # the others (a bool mask, say) walk it again with scalars rather than slow them all
    reuse = P.stored_before(spec, p)
    stop = frozenset(reuse)
    walks: dict[bool, tuple[list[int], list[int]]] = {}
    for m in reds:
        w = _width(spec, P, P.closure(spec, [spec.reds[m][1]], False, stop), [m], [], reuse)
        walks.setdefault(w > 1, ([], []))[0].append(m)
    for j in outs:
        w = _width(spec, P, P.closure(spec, [spec.elem_outs[j][0]], False, stop), [], [j],
                   reuse)
        walks.setdefault(w > 1, ([], []))[1].append(j)
    for vector in (True, False):
        if vector not in walks:
            continue
        wr, wo = walks[vector]
        roots = [spec.reds[m][1] for m in wr] + [spec.elem_outs[j][0] for j in wo]
        need = P.closure(spec, roots, False, stop)
        w = _width(spec, P, need, wr, wo, reuse) if vector else 1
        out += _walk(spec, P, need, wr, wo, w, reuse)
    if group and reds:
        G = spec.group
        for m in reds:
            out.append(f"loc{m}[lid] = acc{m};")
        out.append("barrier(CLK_LOCAL_MEM_FENCE);")
        out.append(f"for (int h = {G // 2}; h > 0; h >>= 1) {{")
        out.append("  if (lid < h) {")
        for m in reds:
            op, _, acc, _ = spec.reds[m]
            comb = _combine(op, acc, f"loc{m}[lid]", f"loc{m}[lid + h]")
            out.append(f"    loc{m}[lid] = {comb};")
        out.append("  }")
        out.append("  barrier(CLK_LOCAL_MEM_FENCE);")
        out.append("}")
        for m in reds:
            out.append(f"acc{m} = loc{m}[0];")
    for m in reds:
        _, _, acc, od = spec.reds[m]
        vid = spec.red_ids[m]
        out.append(f"const {C.compute_ctype(od)} u{vid} = {C.convert(f'acc{m}', acc, od)};")
    return out


def _walk(spec: RowSpec, P: _Plan, need: set[int], reds: list[int], outs: list[int],
          w: int, reuse: dict[int, int]) -> list[str]:
    """One walk over the row, ``w`` elements at a time then scalars (the work-group's items
    interleaved in the group layout), for reductions ``reds`` and stores ``outs``."""
    group = spec.mode == "group"
    out = ["{", "  long r = " + ("lid;" if group else "0;")]
    if w > 1:
        for m in reds:
            op, _, acc, _ = spec.reds[m]
            vt = C.compute_ctype(acc, w)
            out.append(f"  {vt} va{m} = ({vt})({neutral(op, acc)});")
        out.append(f"  for (; r + {w} <= R; r += {w}) {{")
        out += ["    " + s for s in _element(spec, P, need, reds, outs, w, reuse)]
        out.append("  }")
        lanes = "0123456789abcdef"
        for m in reds:
            op, _, acc, _ = spec.reds[m]
            for i in range(w):
                out.append(f"  acc{m} = {_combine(op, acc, f'acc{m}', f'va{m}.s{lanes[i]}')};")
    step = f"r += {spec.group}" if group else "++r"
    out.append(f"  for (; r < R; {step}) {{")
    out += ["    " + s for s in _element(spec, P, need, reds, outs, 1, reuse)]
    out.append("  }")
    out.append("}")
    return out


def _width(spec: RowSpec, P: _Plan, need: set[int], reds: list[int], outs: list[int],
           reuse: dict[int, int]) -> int:
    """Vector width of one pass: ``spec.vec`` allows vectors (layout and strides), the
    pass's own per-element ops must be vector-safe (``can_vectorize``: bools only where an
    op's vector form takes masks, no float16-only templates or scalar-only casts), its
    accumulators real or integer; 64 bytes of its widest value."""
    if spec.vec <= 1:
        return 1
    f32 = np.dtype(np.float32)
    ops = tuple(ins for j, ins in enumerate(spec.body)
                if P.n_in + j in need and P.elem[P.n_in + j] and P.n_in + j not in reuse)
    ds = [d if i in need else f32 for i, d in enumerate(P.dtypes)]
    accs = [spec.reds[m][2] for m in reds]
    if not can_vectorize(ops, ds) or any(a.kind not in "fiu" or a.itemsize < 4 and
                                         a.kind == "f" for a in accs):
        return 1
    widest = max([P.dtypes[i].itemsize for i in need] + [a.itemsize for a in accs] +
                 [spec.elem_outs[j][1].itemsize for j in outs] + [1])
    return max(1, min(spec.vec, 64 // widest))


def _element(spec: RowSpec, P: _Plan, need: set[int], reds: list[int], outs: list[int],
             w: int, reuse: dict[int, int]) -> list[str]:
    """One step of a pass at reduced index ``r`` (``w`` elements when vectorised); the
    values in ``reuse`` are read back from the outputs an earlier pass stored them in."""
    out: list[str] = []
    if spec.nr > 1 and w == 1:
        out += _reduced_index(spec.nr, const=True)
    for v in sorted(need):
        if P.elem[v] and v >= P.n_in and v not in reuse:
            continue
        ct = C.compute_ctype(P.dtypes[v], w)
        if v in reuse:       # stored by an earlier pass at this very position
            j = reuse[v]
            pos = f"sb{j} + r" if w > 1 else f"sb{j} + {_red_offset(f'sr{j}', spec.nr)}"
            expr = C.load(spec.elem_outs[j][1], f"s{j}", pos, w)
        elif P.elem[v]:      # a per-element operand
            op = spec.inputs[v]
            if w > 1:
                expr = C.load(op.dtype, f"a{v}", f"b{v} + r", w)
            else:
                expr = C.load(op.dtype, f"a{v}", f"b{v} + {_red_offset(f'ar{v}', spec.nr)}")
        else:                # a per-row value, splat
            expr = C.splat(P.dtypes[v], f"u{v}", w)
        out.append(f"const {ct} v{v} = {expr};")
    for j, ins in enumerate(spec.body):
        vid = P.n_in + j
        if vid in need and P.elem[vid] and vid not in reuse:
            out += instructions((ins,), P.dtypes, vid, w)
    for j in outs:
        vid, dt = spec.elem_outs[j]
        val = C.convert(f"v{vid}", P.dtypes[vid], dt, w, to_storage=True)
        pos = f"sb{j} + r" if w > 1 else f"sb{j} + {_red_offset(f'sr{j}', spec.nr)}"
        out.append(C.store(dt, f"s{j}", pos, val, w))
    for m in reds:
        op, vid, acc, _ = spec.reds[m]
        v = C.convert(f"v{vid}", P.dtypes[vid], acc, w)
        a = f"va{m}" if w > 1 else f"acc{m}"
        out.append(f"{a} = {_vector_combine(op, acc, a, v, w)};")
    return out


def _vector_combine(op: str, acc: np.dtype, a: str, b: str, w: int) -> str:
    """``op``'s combine on ``w``-wide accumulators: the reduction template for sums and
    products and for scalars; lanewise ``max``/``min`` that propagate NaN as NumPy does
    (the scalar helper's rule) for vectors."""
    if w == 1 or op in ("sum", "prod"):
        return _combine(op, acc, a, b, w)
    if acc.kind in "iu":
        return f"{op}({a}, {b})"
    cmp = ">" if op == "max" else "<"
    return (f"select(select({a}, {b}, ({b}) {cmp} ({a})), ({a}) + ({b}), "
            f"(({a}) != ({a})) | (({b}) != ({b})))")
