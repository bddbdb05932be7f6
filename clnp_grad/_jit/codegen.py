"""Fused reduction kernels: an elementwise program evaluated inside the reduction loop.

A reduction group (see ``fusion``) computes its elementwise body at every element of the input
index space, writes the body values that other steps need (*side outputs*) on the way, and folds
one or more body values into accumulators (softmax's ``sum(exp(x - m))``, layernorm's
``sum((x - mu) ** 2)``, ``max`` and ``sum`` of one input together). The op templates, dtype
conversions, loads and stores all come from ``clnp._kernels`` (``instructions``, ``prelude``,
``ctypes``) and the combine templates from ``clnp._kernels.reduction``: one source of C per op.

The index space is (kept dims..., reduced dims...), collapsed; every array operand and side
output has its own strides over both, so broadcasting (``x - m`` with ``m`` kept per row) and
transposed operands cost nothing. Sizes and strides are kernel arguments. Layouts:

``serial``  one work-item per (output, part) walks its chunk of the reduced range in order; with
            ``vec > 1`` (CPU devices; one reduced dim, operands unit-stride or constant along it)
            the walk reads ``vec`` elements at a time into vector accumulators, since PoCL
            vectorises neither transcendental functions nor loops across work-items.
``group``   GPUs: a work-group per (output, part), its items interleaved over the chunk
            (coalesced when the reduced dim is unit-stride), combined in local memory.

With ``kvec > 1`` (CPU devices, one kept dim; a column sum such as a bias gradient
``sum(g * (a > 0), axis=0)``), a serial item owns ``kvec`` consecutive outputs and walks the
reduced range once for all of them, the outputs in a rolled inner loop: each step reads
neighbouring elements of a row instead of one element per row of a column, which at a
power-of-two row length would map every row to the same cache set. The last block of outputs
moves back inside the kept range (``n_out >= kvec``): the overlap is computed twice,
identically.

With ``cols`` (GPUs, column reductions), serial items are numbered part-major: neighbouring
work-items own neighbouring outputs of one part, so each step of their walks reads one
coalesced stretch of a row.

With ``partial`` the kernel stores each (output, part)'s accumulator to a scratch array of the
accumulator dtype, ``[n_out, parts]``; the executable reduces it with the eager reduction.
With ``finish`` as well (GPUs), the kernel finishes the outputs itself, as the eager ``group``
reductions' ``fused`` mode does: each (output, part) stores its accumulators to the scratch
arrays ``p<m>``, fences, and counts itself on ``cnt[o]``; the part that counts last combines the
``parts`` partials of its output in order (so the result does not depend on arrival order),
stores the output and resets the counter for the next launch. A bias gradient, a column sum
over 256 rows in 16 parts, is then one launch instead of two.

With ``post``, an elementwise program runs where each output is finished (after its store;
in ``finish`` kernels, by the part that finishes it) on the reduction results in their output
dtype and on operands ``e<k>`` of the output's shape, storing its values to ``t<j>``: the
SGD update of a bias, ``b - lr * sum(g, axis=0)``, in the bias gradient's kernel.

Sample (sum of ``exp(a0 - a1)`` over rows, float32, serial, vec 8)::

    __kernel void clnp_jr_sub_exp(const long n_out, const long parts, const long R, ...)
    {  ... for (; r + 8 <= r1; r += 8) { const float8 v0 = vload8(0, a0 + b0 + r);
           const float8 v1 = (float8)(a1[b1]); const float8 v2 = v0 - v1;
           const float8 v3 = clnp_vm_exp_float8(v2); va0 = (va0) + (v3); } ... }
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from clnp._kernels import ctypes as C
from clnp._kernels.elementwise import Instr, Operand, carry_step, instructions, prelude
from clnp._kernels.reduction import (_LIMITS, _REDUCE, ATOMICS64, shared_load, shared_store,
                                     uses_atomics64)


_HELPER = re.compile(r"clnp_(\w+?)_\{T\}")


@dataclass(frozen=True)
class FusedReduceSpec:
    inputs: tuple[Operand, ...]
    body: tuple[Instr, ...]
    reds: tuple[tuple[str, int, np.dtype, np.dtype], ...]   # (op, value id, acc, out dtype)
    sides: tuple[tuple[int, np.dtype], ...]                 # (value id, storage dtype)
    nk: int                  # collapsed kept dims (>= 1)
    nr: int                  # collapsed reduced dims (>= 1)
    mode: str = "serial"     # serial | group
    group: int = 1           # work-group size (group mode)
    vec: int = 1             # serial: elements per vector step (nr == 1)
    rmodes: tuple[str, ...] = ()   # per array operand then side output: unit | bcast | any
    partial: bool = False    # store accumulators to [n_out, parts] scratch (acc dtype)
    kvec: int = 1            # serial: consecutive outputs per item (nk == 1, module docstring)
    cols: bool = False       # serial: items ordered part-major (module docstring)
    finish: bool = False     # partial: the last part of each output finishes it (docstring)
    # epilogue on the finished outputs (module docstring): its operands (("red", m): the
    # m-th reduction's result; else an Operand read at the output's kept index), its SSA
    # program over them, and its stored values (value id, storage dtype)
    post_inputs: tuple = ()
    post: tuple[Instr, ...] = ()
    post_outs: tuple[tuple[int, np.dtype], ...] = ()
    # kvec kernels whose body runs on vectors of kvec lanes (the outputs): per array operand
    # then side output, "unit" (neighbouring outputs at neighbouring addresses: one vload)
    # or "bcast" (one value for all of them); empty: the rolled scalar loop
    kmodes: tuple[str, ...] = ()

    def post_dtypes(self) -> list[np.dtype]:
        ins = [self.reds[src[1]][3] if isinstance(src, tuple) else src.dtype
               for src in self.post_inputs]
        return ins + [i.out_dtype for i in self.post]

    @property
    def name(self) -> str:
        ops = [i.op for i in self.body] + [r[0] for r in self.reds]
        return "clnp_jr_" + "_".join(ops)[:60]


def neutral(op: str, acc: np.dtype) -> str:
    n = _REDUCE[op][1]
    ct = C.compute_ctype(acc)
    if n in ("MIN", "MAX"):
        return _LIMITS[ct][0 if n == "MIN" else 1]
    return f"(({ct}){n})"


def _combine(op: str, acc: np.dtype, a: str, b: str, w: int = 1) -> str:
    return _REDUCE[op][0].format(a=a, b=b, T=C.compute_ctype(acc, w))


def _kept_index(nk: int, var: str) -> list[str]:
    """Decompose flat index ``var`` into i0..i{nk-1} over dims k0..k{nk-1} (C order)."""
    lines = [f"long rem_k = {var};"]
    for d in reversed(range(nk)):
        lines.append(f"const long i{d} = " + ("rem_k;" if d == 0 else
                                               f"rem_k % k{d}; rem_k /= k{d};"))
    return lines


def _red_offset(prefix: str, nr: int) -> str:
    if nr == 1:
        return f"r * {prefix}_0"
    return " + ".join(f"j{d} * {prefix}_{d}" for d in range(nr))


def render_fused_reduce(spec: FusedReduceSpec) -> tuple[str, str, list]:
    """``(source, kernel name, scalar argument dtypes)`` of ``spec`` (module docstring)."""
    params, argtypes = _signature(spec)
    dtypes = _dtypes(spec)
    arrays = [k for k, op in enumerate(spec.inputs) if not op.scalar]
    lines = [f"__kernel void {spec.name}(" + ",\n    ".join(params) + ")\n{"]
    if spec.kvec > 1:
        lines += _kvec_body(spec, dtypes, arrays)
    elif spec.mode == "group":
        lines += ["  const long gid = get_group_id(0);", "  const int lid = get_local_id(0);"]
    else:
        lines += ["  const long gid = get_global_id(0);",
                  "  if (gid >= n_out * parts) return;"]
    if spec.kvec == 1:
        lines += _serial_or_group_body(spec, dtypes, arrays)
    lines.append("}")
    return "\n".join(_head([spec], "\n".join(lines)) + lines), spec.name, argtypes


def _dtypes(spec: FusedReduceSpec) -> list[np.dtype]:
    """The dtypes of the program's values: operands, then the body's results."""
    return [o.dtype for o in spec.inputs] + [i.out_dtype for i in spec.body]


def _head(specs: list[FusedReduceSpec], text: str) -> list[str]:
    """The lines before the kernel(s) of ``specs`` whose code is ``text``: a title, pragmas and
    the helper functions their ops call (each once)."""
    body = tuple(i for sp in specs for i in sp.body + sp.post)
    dtypes = [d for sp in specs for d in _dtypes(sp) + [r[2] for r in sp.reds] +
              [r[3] for r in sp.reds] + sp.post_dtypes()]
    helpers = tuple(dict.fromkeys((h, C.compute_ctype(acc)) for sp in specs
                                  for op, _, acc, _ in sp.reds
                                  for h in _HELPER.findall(_REDUCE[op][0])))
    head = prelude("// clnp jit fused reduction: " + "; ".join(", ".join(
        [i.op for i in sp.body] + [r[0] for r in sp.reds] + [i.op for i in sp.post])
        for sp in specs), body, dtypes, text, 4 if any(sp.vec > 1 for sp in specs) else 1,
        helpers)
    if any(sp.finish and uses_atomics64(r[2] for r in sp.reds) for sp in specs):
        head.insert(1, ATOMICS64)
    return head


def _signature(spec: FusedReduceSpec) -> tuple[list[str], list]:
    """The kernel's parameter declarations and their argument dtypes (None: a buffer)."""
    nk, nr = spec.nk, spec.nr
    L = np.dtype(np.int64)
    params = ["const long n_out", "const long parts", "const long R", "const long chunk"]
    argtypes: list = [L, L, L, L]
    params += [f"const long k{d}" for d in range(nk)] + [f"const long q{d}" for d in range(nr)]
    argtypes += [L] * (nk + nr)
    for k, op in enumerate(spec.inputs):
        if op.scalar:
            params.append(f"const {C.compute_ctype(op.dtype)} a{k}")
            argtypes.append(C.scalar_arg_dtype(op.dtype))
            continue
        params.append(f"__global const {C.storage_ctype(op.dtype)} *restrict a{k}")
        params += [f"const long o{k}"] + [f"const long ak{k}_{d}" for d in range(nk)] + \
            [f"const long ar{k}_{d}" for d in range(nr)]
        argtypes += [None] + [L] * (1 + nk + nr)
    for j, (_, dt) in enumerate(spec.sides):
        params.append(f"__global {C.storage_ctype(dt)} *s{j}")
        params += [f"const long so{j}"] + [f"const long sk{j}_{d}" for d in range(nk)] + \
            [f"const long sr{j}_{d}" for d in range(nr)]
        argtypes += [None] + [L] * (1 + nk + nr)
    for m, (_, _, acc, out) in enumerate(spec.reds):
        dt = acc if spec.partial and not spec.finish else out
        params.append(f"__global {C.storage_ctype(dt)} *r{m}")
        params += [f"const long ro{m}"] + [f"const long rk{m}_{d}" for d in range(nk)]
        argtypes += [None] + [L] * (1 + nk)
    if spec.finish:
        params += [f"__global {C.storage_ctype(acc)} *p{m}"
                   for m, (_, _, acc, _) in enumerate(spec.reds)]
        params.append("__global volatile uint *cnt")
        argtypes += [None] * (len(spec.reds) + 1)
    for k, src in enumerate(spec.post_inputs):
        if isinstance(src, tuple):
            continue
        if src.scalar:
            params.append(f"const {C.compute_ctype(src.dtype)} e{k}")
            argtypes.append(C.scalar_arg_dtype(src.dtype))
            continue
        params.append(f"__global const {C.storage_ctype(src.dtype)} *restrict e{k}")
        params += [f"const long eo{k}"] + [f"const long ek{k}_{d}" for d in range(nk)]
        argtypes += [None] + [L] * (1 + nk)
    for j, (_, dt) in enumerate(spec.post_outs):
        params.append(f"__global {C.storage_ctype(dt)} *t{j}")
        params += [f"const long to{j}"] + [f"const long tk{j}_{d}" for d in range(nk)]
        argtypes += [None] + [L] * (1 + nk)
    return params, argtypes


def horizontal_ok(spec: FusedReduceSpec) -> bool:
    """Whether ``spec`` can be a member of a horizontal kernel (``render_horizontal_reduce``):
    one output, one reduction, no partials, no vector outputs, no epilogue."""
    return spec.kvec == 1 and not spec.partial and len(spec.reds) == 1 and not spec.post \
        and not spec.cols


def render_horizontal_reduce(specs: tuple[FusedReduceSpec, ...]) -> tuple[str, str, list]:
    """One kernel for several independent reductions to one output each (``horizontal_ok``;
    all ``serial`` or all ``group`` of one size, of one accumulator dtype): member ``j`` is
    work-group ``j`` (``group``) or work-item ``j`` (``serial``), and runs its own kernel's
    code as a function taking ``gid = 0``. The arguments are the members' in order. The
    28 sums of squares of a gradient-norm clip, or the finiteness checks of every gradient,
    are then one launch instead of one each (``clnp_grad._jit.fusion``, horizontal
    reductions).

    Examples
    --------
    >>> import numpy as np
    >>> from clnp._kernels.elementwise import Instr, Operand
    >>> from clnp_grad._jit.codegen import FusedReduceSpec, render_horizontal_reduce
    >>> f32 = np.dtype(np.float32)
    >>> sq = FusedReduceSpec((Operand(f32),), (Instr("multiply", (0, 0), (f32, f32), f32, f32),),
    ...                      (("sum", 1, f32, f32),), (), 1, 1, "group", 64)
    >>> src, name, types = render_horizontal_reduce((sq, sq))
    >>> name, len(types)
    ('clnp_jh_2_multiply_sum', 26)
    """
    group = specs[0].mode == "group"
    acc = specs[0].reds[0][2]
    params: list[str] = []
    argtypes: list = []
    funcs: list[str] = []
    calls: list[str] = []
    for j, sp in enumerate(specs):
        ps, ts = _signature(sp)
        names = [re.search(r"(\w+)$", p).group(1) for p in ps]
        params += [p[: len(p) - len(n)] + f"h{j}_{n}" for p, n in zip(ps, names)]
        argtypes += ts
        extra = ["const long gid"] + (["const int lid", f"__local {C.compute_ctype(acc)} *hloc"]
                                      if group else [])
        body = _serial_or_group_body(sp, _dtypes(sp), [k for k, op in enumerate(sp.inputs)
                                                       if not op.scalar], local="hloc")
        funcs += [f"void clnp_hred{j}(" + ",\n    ".join(ps + extra) + ")\n{"] + body + ["}"]
        args = [f"h{j}_{n}" for n in names] + ["0"] + (["lid", "hloc"] if group else [])
        calls.append(f"  {'if' if j == 0 else 'else if'} (h == {j}) clnp_hred{j}("
                     + ", ".join(args) + ");")
    name = f"clnp_jh_{len(specs)}_" + "_".join(
        [i.op for i in specs[0].body] + [specs[0].reds[0][0]])[:50]
    kernel = [f"__kernel void {name}(" + ",\n    ".join(params) + ")\n{"]
    if group:
        kernel += ["  const long h = get_group_id(0);", "  const int lid = get_local_id(0);",
                   f"  __local {C.compute_ctype(acc)} hloc[{specs[0].group}];"]
    else:
        kernel += ["  const long h = get_global_id(0);"]
    kernel += calls + ["}"]
    lines = funcs + kernel
    return "\n".join(_head(list(specs), "\n".join(lines)) + lines), name, argtypes


def _serial_or_group_body(spec: FusedReduceSpec, dtypes: list[np.dtype],
                          arrays: list[int], local: str | None = None) -> list[str]:
    """The kernel body after ``gid`` (one output per item, or per work-group); ``local``:
    the name of the work-group's local array where it is not declared here (a member of a
    horizontal kernel, one reduction)."""
    nk, group = spec.nk, spec.mode == "group"
    lines = ["  const long part = gid / n_out, o = gid - part * n_out;" if spec.cols else
             "  const long o = gid / parts, part = gid - o * parts;"]
    lines += ["  " + s for s in _kept_index(nk, "o")]
    for k in arrays:
        lines.append(f"  const long b{k} = o{k} + " +
                     " + ".join(f"i{d} * ak{k}_{d}" for d in range(nk)) + ";")
    for j in range(len(spec.sides)):
        lines.append(f"  const long sb{j} = so{j} + " +
                     " + ".join(f"i{d} * sk{j}_{d}" for d in range(nk)) + ";")
    for m, (op, _, acc, _) in enumerate(spec.reds):
        lines.append(f"  {C.compute_ctype(acc)} acc{m} = {neutral(op, acc)};")
    lines.append("  const long rlo = part * chunk, rhi = min(R, rlo + chunk);")
    lines.append("  long r = rlo" + (" + lid;" if group else ";"))
    if spec.vec > 1 and spec.nr > 1:
        lines += ["  " + s for s in _row_vector_walk(spec, dtypes, arrays)]
        lines += ["  " + s for s in _stores(spec)]
        return lines
    if spec.vec > 1:
        lines += ["  " + s for s in _vector_loop(spec, dtypes, arrays)]
    step = f"r += {spec.group}" if group else "++r"
    carry = not group and spec.nr > 1
    if carry:
        # the reduced indices decomposed once, then stepped with a carry: a div/mod per dim
        # and element cost more than the element's own work on CPUs
        lines += ["  " + s for s in _reduced_index(spec.nr, const=False)]
    lines.append(f"  for (; r < rhi; {step}) {{")
    lines += ["    " + s for s in _element(spec, dtypes, arrays, 1, stepped=carry)]
    if carry:
        lines.append("    " + carry_step("j", "q", spec.nr))
    lines.append("  }")
    if group:
        lines += ["  " + s for s in _group_combine(spec, local)]
    lines += ["  " + s for s in _stores(spec)]
    if group:
        lines.append("  }")
    return lines


def _kvec_body(spec: FusedReduceSpec, dtypes: list[np.dtype], arrays: list[int]) -> list[str]:
    """The whole body of a ``kvec`` kernel (module docstring): ``kvec`` consecutive outputs
    per item, their accumulators in private arrays."""
    KV = spec.kvec
    lines = ["  const long gid = get_global_id(0);",
             f"  const long nq = (n_out + {KV - 1}) / {KV};",
             "  if (gid >= nq * parts) return;",
             "  const long ov = gid / parts, part = gid - ov * parts;",
             f"  const long i0 = min(ov * {KV}, n_out - {KV});"]
    for k in arrays:
        lines.append(f"  const long b{k} = o{k} + i0 * ak{k}_0;")
    for j in range(len(spec.sides)):
        lines.append(f"  const long sb{j} = so{j} + i0 * sk{j}_0;")
    for m, (op, _, acc, _) in enumerate(spec.reds):
        lines.append(f"  {C.compute_ctype(acc)} acc{m}[{KV}];")
        if spec.kmodes:
            vt = C.compute_ctype(acc, KV)
            lines.append(f"  {vt} va{m} = ({vt})({neutral(op, acc)});")
        else:
            lines.append(f"  for (int q = 0; q < {KV}; ++q) acc{m}[q] = {neutral(op, acc)};")
    lines += ["  const long rlo = part * chunk, rhi = min(R, rlo + chunk);",
              "  for (long r = rlo; r < rhi; ++r) {"]
    if spec.nr > 1:
        lines += ["    " + s for s in _reduced_index(spec.nr, const=True)]
    if spec.kmodes:
        lines += ["    " + s for s in _kept_vector_element(spec, dtypes, arrays)]
        lines.append("  }")
        # the lanes to the private arrays the stores and the epilogue read
        lines += [f"  vstore{KV}(va{m}, 0, acc{m});" for m in range(len(spec.reds))]
    else:
        lines.append(f"    for (int q = 0; q < {KV}; ++q) {{")
        lines += ["      " + s for s in _element(spec, dtypes, arrays, 1, lane="q")]
        lines += ["    }", "  }"]
    for m, (_, _, acc, dt) in enumerate(spec.reds):
        lines.append(f"  for (int q = 0; q < {KV}; ++q)")
        if spec.partial:
            lines.append("    " + C.store(acc, f"r{m}", f"ro{m} + (i0 + q) * parts + part",
                                          f"acc{m}[q]"))
        else:
            lines.append("    " + C.store(dt, f"r{m}", f"ro{m} + (i0 + q) * rk{m}_0",
                                          C.convert(f"acc{m}[q]", acc, dt, to_storage=True)))
    if spec.post:
        lines.append(f"  for (int q = 0; q < {KV}; ++q)")
        lines += ["  " + x for x in _post(spec, lambda m: f"acc{m}[q]",
                                          lambda p: f"(i0 + q) * {p}_0")]
    return lines


def _kept_vector_element(spec: FusedReduceSpec, dtypes: list[np.dtype],
                         arrays: list[int]) -> list[str]:
    """One step of a ``kvec`` walk on vectors of ``kvec`` lanes, the item's neighbouring
    outputs (``spec.kmodes``): a row's stretch read with one vector load per operand, the
    body's vector code (the same templates as the scalar loop's, ``can_vectorize``), the side
    outputs stored with one vector store, the lanes added to vector accumulators. A GELU's
    backward with its bias gradient, ``sum(g * gelu'(x), axis=0)`` over a (2048, 256) float32
    activation, read one element at a time in the rolled loop: 5.6 ms a launch on the 2-core
    machine, PoCL vectorising neither the loop nor its ``exp``."""
    return _vector_step(spec, dtypes, arrays, spec.kvec, spec.kmodes,
                        lambda k, unit: f"b{k} + {_red_offset(f'ar{k}', spec.nr)}",
                        lambda j: f"sb{j} + {_red_offset(f'sr{j}', spec.nr)}",
                        lambda m: f"va{m}")


def _vector_step(spec: FusedReduceSpec, dtypes: list[np.dtype], arrays: list[int], w: int,
                 modes: tuple[str, ...], at, side_at, acc) -> list[str]:
    """Operands loaded at ``at(k, unit)`` (``modes[k]`` "bcast": one value splatted to the
    ``w`` lanes; else ``w`` consecutive elements), the body on ``w`` lanes, side outputs
    stored at ``side_at(j)``, each reduction's value combined into ``acc(m)``."""
    out: list[str] = []
    for k, op in enumerate(spec.inputs):
        ct = C.compute_ctype(op.dtype, w)
        if op.scalar:
            expr = C.splat(op.dtype, f"a{k}", w)
        elif modes[arrays.index(k)] == "bcast":
            expr = C.splat(op.dtype, C.load(op.dtype, f"a{k}", at(k, False)), w)
        else:
            expr = C.load(op.dtype, f"a{k}", at(k, True), w)
        out.append(f"const {ct} v{k} = {expr};")
    out += instructions(spec.body, dtypes, len(spec.inputs), w)
    for j, (vid, dt) in enumerate(spec.sides):
        val = C.convert(f"v{vid}", dtypes[vid], dt, w, to_storage=True)
        out.append(C.store(dt, f"s{j}", side_at(j), val, w))
    for m, (op, vid, acc_dt, _) in enumerate(spec.reds):
        v = C.convert(f"v{vid}", dtypes[vid], acc_dt, w)
        out.append(f"{acc(m)} = {_combine(op, acc_dt, acc(m), v, w)};")
    return out


def _reduced_index(nr: int, const: bool) -> list[str]:
    """Decompose the reduced position ``r`` into ``j0..j{nr-1}`` over dims ``q0..`` (C
    order); ``const`` where the walk does not step them afterwards."""
    decl = "const long" if const else "long"
    return ["long rem_r = r;"] + [f"{decl} j{d} = " + ("rem_r;" if d == 0 else
                                                       f"rem_r % q{d}; rem_r /= q{d};")
                                  for d in reversed(range(nr))]


def _element(spec: FusedReduceSpec, dtypes: list[np.dtype], arrays: list[int],
             w: int, lane: str = "", stepped: bool = False) -> list[str]:
    """One step of the walk at reduced index ``r`` (``w`` elements when vectorised); with
    ``lane`` (``kvec`` kernels), at kept index ``i0 + lane`` into accumulator arrays, the
    reduced indices already decomposed (``stepped``: likewise, kept by the caller)."""
    out: list[str] = []
    if spec.nr > 1 and w == 1 and not lane and not stepped:
        out += _reduced_index(spec.nr, const=True)
    for k, op in enumerate(spec.inputs):
        ct = C.compute_ctype(op.dtype, w)
        if op.scalar:
            expr = C.splat(op.dtype, f"a{k}", w)
        elif w > 1 and spec.rmodes[arrays.index(k)] == "bcast":
            expr = C.splat(op.dtype, C.load(op.dtype, f"a{k}", f"b{k}"), w)
        elif w > 1:
            expr = C.load(op.dtype, f"a{k}", f"b{k} + r", w)
        else:
            at = f" + {lane} * ak{k}_0" if lane else ""
            expr = C.load(op.dtype, f"a{k}", f"b{k}{at} + {_red_offset(f'ar{k}', spec.nr)}")
        out.append(f"const {ct} v{k} = {expr};")
    out += instructions(spec.body, dtypes, len(spec.inputs), w)
    for j, (vid, dt) in enumerate(spec.sides):
        val = C.convert(f"v{vid}", dtypes[vid], dt, w, to_storage=True)
        pos = f"sb{j} + r" if w > 1 else f"sb{j} + {_red_offset(f'sr{j}', spec.nr)}"
        if lane:
            pos += f" + {lane} * sk{j}_0"
        out.append(C.store(dt, f"s{j}", pos, val, w))
    for m, (op, vid, acc, _) in enumerate(spec.reds):
        v = C.convert(f"v{vid}", dtypes[vid], acc, w)
        a = f"va{m}" if w > 1 else f"acc{m}[{lane}]" if lane else f"acc{m}"
        out.append(f"{a} = {_combine(op, acc, a, v, w)};")
    return out


def _row_element(spec: FusedReduceSpec, dtypes: list[np.dtype], arrays: list[int],
                 w: int) -> list[str]:
    """``_element`` inside a row of the innermost reduced dim: unit-stride operands at
    ``ob{k} + t``, operands constant along the row at ``ob{k}``, folded into the row's own
    accumulators (``vr``/``sr``)."""
    return _vector_step(spec, dtypes, arrays, w, spec.rmodes,
                        lambda k, unit: f"ob{k} + t" if unit else f"ob{k}",
                        lambda j: f"osb{j} + t",
                        lambda m: f"vr{m}" if w > 1 else f"sr{m}")


def _row_vector_walk(spec: FusedReduceSpec, dtypes: list[np.dtype],
                     arrays: list[int]) -> list[str]:
    """The serial walk over several reduced dims, vectorised along the innermost one (every
    operand unit-stride or constant along it): the chunk is cut into stretches of one row,
    each read ``vec`` elements at a time with a scalar tail, the outer indices stepped with a
    carry between stretches. A batch norm's per-channel sums over (N, H, W) walked one
    element at a time, PoCL vectorising neither the walk nor across work-items."""
    w, nr = spec.vec, spec.nr
    last = nr - 1
    out = []
    for m, (op, _, acc, _) in enumerate(spec.reds):
        out.append(f"{C.compute_ctype(acc, w)} va{m} = ({C.compute_ctype(acc, w)})"
                   f"({neutral(op, acc)});")
    out += _reduced_index(nr, const=False)
    out.append("while (r < rhi) {")
    out.append(f"  const long span = min(q{last} - j{last}, rhi - r);")
    for k in arrays:
        out.append(f"  const long ob{k} = b{k} + {_red_offset(f'ar{k}', nr)};")
    for j in range(len(spec.sides)):
        out.append(f"  const long osb{j} = sb{j} + {_red_offset(f'sr{j}', nr)};")
    # each row folds into fresh accumulators, added to the walk's once per row: a float sum
    # then adds at most a row's worth of terms per lane before a partial sum, where one
    # running sum over a batch norm's N*H*W terms lost ~6 bits (eager sums are pairwise)
    out.append("  long t = 0;")
    for m, (op, _, acc, _) in enumerate(spec.reds):
        ct = C.compute_ctype(acc, w)
        out.append(f"  {ct} vr{m} = ({ct})({neutral(op, acc)});")
        out.append(f"  {C.compute_ctype(acc)} sr{m} = {neutral(op, acc)};")
    out.append(f"  for (; t + {w} <= span; t += {w}) {{")
    out += ["    " + s for s in _row_element(spec, dtypes, arrays, w)]
    out.append("  }")
    out.append("  for (; t < span; ++t) {")
    out += ["    " + s for s in _row_element(spec, dtypes, arrays, 1)]
    out.append("  }")
    for m, (op, _, acc, _) in enumerate(spec.reds):
        out.append(f"  va{m} = {_combine(op, acc, f'va{m}', f'vr{m}', w)};")
        out.append(f"  acc{m} = {_combine(op, acc, f'acc{m}', f'sr{m}')};")
    out.append(f"  r += span; j{last} += span;")
    out.append(f"  if (j{last} == q{last}) {{ j{last} = 0; {carry_step('j', 'q', last)} }}")
    out.append("}")
    return out + _fold_lanes(spec, w)


def _fold_lanes(spec: FusedReduceSpec, w: int) -> list[str]:
    """Each reduction's vector accumulator ``va<m>`` folded into its scalar ``acc<m>``."""
    lanes = "0123456789abcdef"
    return [f"acc{m} = {_combine(op, acc, f'acc{m}', f'va{m}.s{lanes[i]}')};"
            for m, (op, _, acc, _) in enumerate(spec.reds) for i in range(w)]


def _vector_loop(spec: FusedReduceSpec, dtypes: list[np.dtype], arrays: list[int]) -> list[str]:
    w = spec.vec
    out = []
    for m, (op, _, acc, _) in enumerate(spec.reds):
        out.append(f"{C.compute_ctype(acc, w)} va{m} = ({C.compute_ctype(acc, w)})"
                   f"({neutral(op, acc)});")
    out.append(f"for (; r + {w} <= rhi; r += {w}) {{")
    out += ["  " + s for s in _element(spec, dtypes, arrays, w)]
    out.append("}")
    return out + _fold_lanes(spec, w)


def _group_combine(spec: FusedReduceSpec, local: str | None = None) -> list[str]:
    """Tree reduction of the work-group's accumulators in local memory; item 0 goes on.
    ``local``: the array to use for the one reduction, declared by the caller."""
    G = spec.group
    out = []
    for m, (_, _, acc, _) in enumerate(spec.reds):
        if local is not None:
            out.append(f"__local {C.compute_ctype(acc)} *loc{m} = {local};")
        else:
            out.append(f"__local {C.compute_ctype(acc)} loc{m}[{G}];")
        out.append(f"loc{m}[lid] = acc{m};")
    out.append("barrier(CLK_LOCAL_MEM_FENCE);")
    out.append(f"for (int h = {G // 2}; h > 0; h >>= 1) {{")
    out.append("  if (lid < h) {")
    for m, (op, _, acc, _) in enumerate(spec.reds):
        out.append(f"    loc{m}[lid] = {_combine(op, acc, f'loc{m}[lid]', f'loc{m}[lid + h]')};")
    out.append("  }")
    out.append("  barrier(CLK_LOCAL_MEM_FENCE);")
    out.append("}")
    out.append("if (lid == 0) {")
    for m in range(len(spec.reds)):
        out.append(f"  acc{m} = loc{m}[0];")
    return out


def _stores(spec: FusedReduceSpec) -> list[str]:
    out = []
    if spec.finish:
        return _finish(spec)
    for m, (_, _, acc, dt) in enumerate(spec.reds):
        if spec.partial:
            out.append(C.store(acc, f"r{m}", f"ro{m} + o * parts + part", f"acc{m}"))
            continue
        out.append(_final_store(spec, m))
    return out + _post(spec, lambda m: f"acc{m}", _kept_offset(spec.nk))


def _kept_offset(nk: int):
    """``pos(prefix)``: the offset of the output at kept indices ``i0..`` with strides
    ``prefix_0..``."""
    return lambda p: " + ".join(f"i{d} * {p}_{d}" for d in range(nk))


def _post(spec: FusedReduceSpec, acc, pos) -> list[str]:
    """The epilogue at the output just finished (module docstring): ``acc(m)`` names the
    m-th accumulator, ``pos(prefix)`` the kept offset with strides ``prefix_<d>``."""
    if not spec.post:
        return []
    dtypes = spec.post_dtypes()
    out = ["{"]
    for k, src in enumerate(spec.post_inputs):
        if isinstance(src, tuple):
            _, _, a, dt = spec.reds[src[1]]
            # rounded to the result's dtype, as a separate kernel would read the stored value
            expr = C.convert(acc(src[1]), a, dt)
        elif src.scalar:
            expr = f"e{k}"
        else:
            expr = C.load(src.dtype, f"e{k}", f"eo{k} + {pos(f'ek{k}')}")
        out.append(f"  const {C.compute_ctype(dtypes[k])} v{k} = {expr};")
    out += ["  " + x for x in instructions(spec.post, dtypes, len(spec.post_inputs), 1)]
    for j, (vid, dt) in enumerate(spec.post_outs):
        val = C.convert(f"v{vid}", dtypes[vid], dt, to_storage=True)
        out.append("  " + C.store(dt, f"t{j}", f"to{j} + {pos(f'tk{j}')}", val))
    return out + ["}"]


def _final_store(spec: FusedReduceSpec, m: int) -> str:
    _, _, acc, dt = spec.reds[m]
    pos = f"ro{m} + " + _kept_offset(spec.nk)(f"rk{m}")
    return C.store(dt, f"r{m}", pos, C.convert(f"acc{m}", acc, dt, to_storage=True))


def _finish(spec: FusedReduceSpec) -> list[str]:
    """Store this part's accumulators; the last part of the output to count itself combines
    all of them in order and stores the output (module docstring)."""
    out = [shared_store(acc, f"p{m}", "o * parts + part", f"acc{m}")
           for m, (_, _, acc, _) in enumerate(spec.reds)]
    out += ["mem_fence(CLK_GLOBAL_MEM_FENCE);",
            "if (atomic_inc(&cnt[o]) == (uint)(parts - 1)) {",
            "  mem_fence(CLK_GLOBAL_MEM_FENCE);"]
    for m, (op, _, acc, _) in enumerate(spec.reds):
        ct = C.compute_ctype(acc)
        out += [f"  acc{m} = {neutral(op, acc)};",
                f"  for (long q = 0; q < parts; ++q) {{ const {ct} pv = "
                f"{shared_load(acc, f'p{m}', 'o * parts + q')}; "
                f"acc{m} = {_combine(op, acc, f'acc{m}', 'pv')}; }}"]
    out += ["  " + _final_store(spec, m) for m in range(len(spec.reds))]
    out += ["  " + x for x in _post(spec, lambda m: f"acc{m}", _kept_offset(spec.nk))]
    out += ["  atomic_xchg(&cnt[o], 0u);", "}"]
    return out
