"""Loops whose body is elementwise in its carry, compiled into one kernel with the loop inside.

``lax.while_loop(cond, body, init)`` and a ``scan`` without ``xs`` or ``ys`` (what
``lax.fori_loop`` with Python int bounds becomes) normally run from the host: each iteration
launches the compiled body, and ``while_loop`` reads the predicate back. When every value of
the loop is either 0-d ("uniform": a counter, a bound, a scale) or of one shape ``S``
("field": the arrays being iterated), every equation is elementwise, and the predicate is
computed from uniform values only, each element's iterations are independent of the others'.
The loop then runs as one kernel with one work-item per element of ``S`` (the seed project
pytocl compiled Python loops the same way): uniform values are computed redundantly in
registers by every work-item, field values never leave them, and nothing is read back.

The equations are translated to the op table's ``Instr`` records and rendered with
``_codegen.elementwise.instructions``, so every op's C comes from the table, as in the fused
elementwise kernels.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from clnp._core.array import Array, c_strides
from clnp._kernels import ctypes as C
from clnp._kernels.elementwise import Instr, instructions, prelude
from clnp._core.eager import contiguous_copy
from clnp._runtime.device import Device, launch

from .._ir import Graph, Lit, Var
from .executable import check_devices
from .fusion import is_elementwise, op_signature
from clnp._core.dtypes import kind as dkind

_ALIASES = frozenset({"broadcast_to", "reshape", "stop_gradient"})   # no data movement here


class _NotElementwise(Exception):
    """The loop does not have the form this module compiles."""


@dataclass(frozen=True)
class _Block:
    """One graph rendered as C: ``uniform`` lines (0-d values, once per iteration and
    work-item), ``field`` lines (per element, inside the element loop; they may read the
    uniform values), and the C expression of each output with whether it is a field."""
    uniform: tuple[str, ...]
    field: tuple[str, ...]
    outs: tuple[tuple[str, bool], ...]
    instrs: tuple[Instr, ...]


class _Program:
    """What a loop kernel reads: buffers (loop inputs, then graph constants), and scalar
    literals; built while translating the graphs."""

    def __init__(self, shape: tuple[int, ...]):
        self.shape = shape
        self.buffers: list[tuple[Any, np.dtype, bool]] = []   # (value, dtype, is field)
        self.literals: list[tuple[Any, np.dtype]] = []
        self.const_names: dict[int, tuple[str, bool]] = {}     # graph const Var id -> name

    def is_field(self, shape: tuple[int, ...]) -> bool:
        if shape == ():
            return False
        if shape != self.shape:
            raise _NotElementwise(f"a value of shape {shape} beside {self.shape}")
        return True

    def buffer(self, value: Any, dtype: np.dtype, shape: tuple[int, ...]) -> tuple[str, bool]:
        """The C name a kernel reads buffer ``k`` by: its element (fields, inside the
        element loop) or its value loaded once (0-d)."""
        k = len(self.buffers)
        field = self.is_field(tuple(shape))
        self.buffers.append((value, dtype, field))
        return (C.load(dtype, f"a{k}", f"o{k} + base + e") if field else f"b{k}v"), field

    def literal(self, value: Any, dtype: np.dtype) -> str:
        k = len(self.literals)
        self.literals.append((value, dtype))
        return f"l{k}"


class _Part:
    """The SSA program of one kind of values (uniform or field) of a graph."""

    def __init__(self, tag: str):
        self.tag = tag
        self.leaves: list[str] = []
        self.dtypes: list[np.dtype] = []
        self.vid: dict[Any, int] = {}
        self.body: list[Instr] = []
        self.pending: list[tuple] = []

    def leaf(self, key: Any, cname: str, d: np.dtype) -> None:
        if key not in self.vid:
            self.vid[key] = len(self.leaves)
            self.leaves.append(cname)
            self.dtypes.append(d)

    def lines(self) -> list[str]:
        out = [f"const {C.compute_ctype(d)} {self.tag}{k} = {cname};"
               for k, (cname, d) in enumerate(zip(self.leaves, self.dtypes))]
        return out + _renamed(instructions(tuple(self.body), self.dtypes, len(self.leaves), 1),
                              self.tag)


def _translate(g: Graph, in_names: Sequence[tuple[str, bool]], prog: _Program,
               tag: str) -> _Block:
    """``g`` as C over ``in_names`` (the name of each input, in in_binders order, and
    whether it is a field)."""
    names: dict[int, tuple[str, bool]] = {v.n: nm for v, nm in zip(g.in_binders, in_names)}
    for v in g.in_binders:
        prog.is_field(tuple(v.aval.shape))
    for n, c in g.consts.items():
        if not isinstance(c, Array):
            raise _NotElementwise("a non-array constant")
        if n not in prog.const_names:
            prog.const_names[n] = prog.buffer(c, c.dtype, tuple(c.shape))
        names[n] = prog.const_names[n]
    alias: dict[int, int] = {}
    field_of: dict[int, bool] = {n: f for n, (_, f) in names.items()}
    parts = {False: _Part(tag + "u"), True: _Part(tag + "f")}
    for e in g.eqns:
        out = e.out_binders[0]
        field = prog.is_field(tuple(out.aval.shape))
        name = e.prim.name
        if name in _ALIASES and len(e.inputs) == 1 and isinstance(e.inputs[0], Var):
            src = e.inputs[0]
            if tuple(src.aval.shape) != () and tuple(src.aval.shape) != tuple(out.aval.shape):
                raise _NotElementwise(f"{name} of a non-scalar")
            alias[out.n] = alias.get(src.n, src.n)
            continue
        if not is_elementwise(e):
            raise _NotElementwise(f"primitive {name}")
        if name == "full":
            d = np.dtype(e.params["dtype"])
            item = ("copy", ((("lit", out.n), e.params["value"], d),), (d,), d, d, out)
        elif name in ("convert_element_type", "copy"):
            src = e.inputs[0]
            d = np.dtype(e.params.get("dtype", src.aval.dtype))
            item = ("copy", (src,), (d,), d, d, out)
        else:
            op, ads, d, od = op_signature(e)
            ads = tuple(np.dtype(a) for a in ads)
            args = tuple(((("lit", out.n, i), x.value, ad) if isinstance(x, Lit) else x)
                         for i, (x, ad) in enumerate(zip(e.inputs, ads)))
            item = (op, args, ads, np.dtype(d), np.dtype(od), out)
        parts[field].pending.append(item)
        field_of[out.n] = field
    # the uniform part first: the field part reads its results by name
    for field in (False, True):
        part = parts[field]
        for item in part.pending:
            for a in item[1]:
                if isinstance(a, tuple):
                    key, value, d = a
                    part.leaf(key, prog.literal(value, d), d)
                    continue
                n = alias.get(a.n, a.n)
                if n in names:
                    part.leaf(n, names[n][0], a.aval.dtype)
                elif field and not field_of.get(n, True):     # a uniform result
                    u = parts[False]
                    part.leaf(n, f"{u.tag}{u.vid[n]}", a.aval.dtype)
        n_in = len(part.leaves)
        for op, args, ads, d, od, out in part.pending:
            ids = []
            for a in args:
                key = a[0] if isinstance(a, tuple) else alias.get(a.n, a.n)
                if key not in part.vid:
                    raise _NotElementwise("a value read before it is computed")
                ids.append(part.vid[key])
            part.vid[out.n] = n_in + len(part.body)
            part.body.append(Instr(op, tuple(ids), ads, d, od))
            part.dtypes.append(od)
    outs: list[tuple[str, bool]] = []
    for o in g.outs:
        if isinstance(o, Lit):
            raise _NotElementwise("a literal output")
        n = alias.get(o.n, o.n)
        if n in names:
            outs.append(names[n])
            continue
        part = parts[field_of[n]]
        outs.append((f"{part.tag}{part.vid[n]}", field_of[n]))
    return _Block(tuple(parts[False].lines()), tuple(parts[True].lines()), tuple(outs),
                  tuple(parts[False].body) + tuple(parts[True].body))


def _renamed(lines: list[str], tag: str) -> list[str]:
    """``instructions`` names values ``v<k>``; give this part its own prefix, so that the
    predicate's and the body's values never clash with each other or the carries."""
    return [re.sub(r"\bv(\d+)\b", lambda m: f"{tag}{m.group(1)}", ln) for ln in lines]


@dataclass
class LoopKernel:
    """A compiled loop: the kernel, its buffers' order, literals and carry layout."""
    kernel: Any
    prog: _Program
    n_consts: int
    carry: tuple[tuple[tuple[int, ...], np.dtype], ...]
    counted: bool
    per_item: int
    source: str

    def run(self, device: Device, consts: Sequence[Array], carry: Sequence[Array],
            length: int = 0) -> list[Array]:
        n = math.prod(self.prog.shape)
        given = list(consts) + list(carry)
        # every array the kernel reads, the program's own constants included, before any copy
        check_devices(device, given + [v for v, _, _ in self.prog.buffers[len(given):]],
                      self.kernel)
        ins = [_contiguous(a) for a in given]
        outs = [Array.empty(shape, d, device) for shape, d in self.carry]
        args: list[Any] = [np.int32(n)]
        if self.counted:
            args.append(np.int32(length))
        for k, (value, d, _) in enumerate(self.prog.buffers):
            a = ins[k] if k < len(ins) else _contiguous(value)
            args += [a._buf, np.int32(a._offset)]
        for value, d in self.prog.literals:
            args.append(np.asarray(value, C.scalar_arg_dtype(d))[()])
        args += [o._buf for o in outs]
        L = 64 if device.is_cpu else 256
        items = -(-n // self.per_item)
        # through the runtime's launch, so that a jit capture of this step records it
        launch(device, self.kernel, (-(-items // L) * L,), (L,), *args)
        return outs


def _contiguous(a: Array) -> Array:
    if a._strides != c_strides(a._shape):
        return contiguous_copy(a)
    return a


def _render(prog: _Program, n_consts: int, carry_dtypes: Sequence[np.dtype],
            carry_fields: Sequence[bool], cond: _Block | None, body: _Block,
            K: int) -> tuple:
    """The kernel: each work-item owns ``K`` consecutive elements, keeps their field
    carries in private arrays, and per iteration computes the uniform values once, then
    the field values in a loop over its elements (on CPUs that inner loop is what the
    compiler vectorises; GPUs use K = 1)."""
    params = ["const int n"] + (["const int length"] if cond is None else [])
    argtypes: list[Any] = [np.int32] + ([np.int32] if cond is None else [])
    for k, (_, d, _) in enumerate(prog.buffers):
        params += [f"__global const {C.storage_ctype(d)} *restrict a{k}", f"const int o{k}"]
        argtypes += [None, np.int32]
    for k, (_, d) in enumerate(prog.literals):
        params.append(f"const {C.compute_ctype(d)} l{k}")
        argtypes.append(C.scalar_arg_dtype(d))
    for j, d in enumerate(carry_dtypes):
        params.append(f"__global {C.storage_ctype(d)} *r{j}")
        argtypes.append(None)
    lines = ["__kernel void clnp_loop(" + ",\n    ".join(params) + ")\n{",
             f"  const int base = (int)get_global_id(0) * {K};",
             "  if (base >= n) return;",
             f"  const int cnt = min({K}, n - base);"]
    for k, (_, d, field) in enumerate(prog.buffers):
        if not field:
            lines.append(f"  const {C.compute_ctype(d)} b{k}v = {C.load(d, f'a{k}', f'o{k}')};")
    for j, (d, field) in enumerate(zip(carry_dtypes, carry_fields)):
        ct, k = C.compute_ctype(d), n_consts + j
        if field:
            lines.append(f"  {ct} c{j}[{K}];")
            lines.append(f"  for (int e = 0; e < cnt; ++e) c{j}[e] = "
                         f"{C.load(d, f'a{k}', f'o{k} + base + e')};")
        else:
            lines.append(f"  {ct} c{j} = b{k}v;")
    lines.append("  for (int it = 0; it < length; ++it) {" if cond is None else "  for (;;) {")
    if cond is not None:
        lines += ["    {"] + ["      " + s for s in cond.uniform]
        lines += [f"      if (!({cond.outs[0][0]})) break;", "    }"]
    lines += ["    {"] + ["      " + s for s in body.uniform]
    uni = [j for j, f in enumerate(carry_fields) if not f]
    fld = [j for j, f in enumerate(carry_fields) if f]
    lines += [f"      const {C.compute_ctype(carry_dtypes[j])} n{j} = {body.outs[j][0]};"
              for j in uni]
    if fld:
        lines.append("      for (int e = 0; e < cnt; ++e) {")
        lines += ["        " + s for s in body.field]
        lines += [f"        const {C.compute_ctype(carry_dtypes[j])} n{j} = {body.outs[j][0]};"
                  for j in fld]
        lines += [f"        c{j}[e] = n{j};" for j in fld]
        lines.append("      }")
    lines += [f"      c{j} = n{j};" for j in uni] + ["    }", "  }"]
    for j, (d, field) in enumerate(zip(carry_dtypes, carry_fields)):
        if field:
            val = C.convert(f"c{j}[e]", d, d, 1, to_storage=True)
            lines.append(f"  for (int e = 0; e < cnt; ++e) "
                         f"{C.store(d, f'r{j}', 'base + e', val, 1)}")
        else:
            val = C.convert(f"c{j}", d, d, 1, to_storage=True)
            lines.append(f"  if (base == 0) {C.store(d, f'r{j}', '0', val, 1)}")
    lines.append("}")
    text = "\n".join(lines)
    instrs = (cond.instrs if cond is not None else ()) + body.instrs
    dts = [d for _, d, _ in prog.buffers] + list(carry_dtypes)
    head_lines = prelude("// clnp loop kernel: " + ", ".join(i.op for i in instrs), instrs,
                         dts, text, 1)
    return "\n".join(head_lines + lines), "clnp_loop", argtypes


def _signature(args: Sequence[Any]) -> tuple | None:
    if not args or not all(type(a) is Array for a in args):
        return None
    device = args[0]._device
    if any(a._device is not device for a in args):
        return None
    return tuple((a._shape, a._dtype) for a in args) + (device,)


def loop_kernel(owner: Graph, cond: Graph | None, body: Graph, num_consts: int,
                args: Sequence[Any]) -> LoopKernel | None:
    """The compiled loop for these graphs and argument types, or None when the loop does not
    have the elementwise form (then it runs from the host). Cached on ``owner``."""
    sig = _signature(args)
    if sig is None:
        return None
    cache = owner.__dict__.setdefault("_loop_kernels", {})
    if sig in cache:
        return cache[sig]
    cache[sig] = None
    shapes = {a._shape for a in args if a._shape != ()}
    if len(shapes) != 1:
        return None
    shape = shapes.pop()
    if math.prod(shape) == 0 or math.prod(shape) >= 2 ** 31:
        return None
    prog = _Program(shape)
    try:
        # the arguments' buffers change per call (None here); graph constants are kept
        names = [prog.buffer(None, a._dtype, a._shape) for a in args]
        carry_args = list(args[num_consts:])
        consts = names[:num_consts]
        carry = [(f"c{j}[e]" if a._shape != () else f"c{j}", a._shape != ())
                 for j, a in enumerate(carry_args)]
        cblock = None
        if cond is not None:
            cblock = _translate(cond, consts + carry, prog, "p")
            if tuple(cond.outs[0].aval.shape) != () or cblock.field or cblock.outs[0][1]:
                return None    # the predicate must not read a field
        bblock = _translate(body, consts + carry, prog, "q")
    except _NotElementwise:
        return None
    if len(bblock.outs) != len(carry_args):
        return None
    device = args[0]._device
    dts = [a._dtype for a in carry_args]
    fields = [a._shape != () for a in carry_args]
    for d in dts + [d for _, d, _ in prog.buffers]:
        if dkind(d) == "c" or not device.supports(d):
            return None
    # CPUs: 32 elements per work-item, whose inner loop the compiler vectorises (PoCL does
    # not vectorise a kernel-wide loop across work-items); GPUs: one element each
    K = 32 if device.is_cpu else 1
    src, name, argtypes = _render(prog, num_consts, dts, fields, cblock, bblock, K)
    kernel = device.kernel(("jit-loop", src), lambda: (src, name, argtypes))
    lk = LoopKernel(kernel, prog, num_consts, tuple((a._shape, a._dtype) for a in carry_args),
                    cond is None, K, src)
    cache[sig] = lk
    return lk
