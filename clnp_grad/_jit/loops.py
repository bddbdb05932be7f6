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

from clnp._array import Array, c_strides
from clnp._codegen import ctypes as C
from clnp._codegen.elementwise import Instr, instructions, prelude
from clnp._eager import contiguous_copy
from clnp._runtime import Device, launch

from .._ir import Graph, Lit, Var
from .fusion import is_elementwise

_ALIASES = frozenset({"broadcast_to", "reshape", "stop_gradient"})   # no data movement here


class _NotElementwise(Exception):
    """The loop does not have the form this module compiles."""


@dataclass(frozen=True)
class _Block:
    """One graph rendered as C lines: ``inputs`` are the C names its in_binders read,
    ``outs`` the C expressions of its outputs after ``lines``."""
    lines: tuple[str, ...]
    outs: tuple[str, ...]
    instrs: tuple[Instr, ...]


class _Program:
    """What a loop kernel reads: buffers (loop inputs, then graph constants), and scalar
    literals; built while translating the graphs."""

    def __init__(self, shape: tuple[int, ...]):
        self.shape = shape
        self.buffers: list[tuple[Any, np.dtype, bool]] = []   # (value, dtype, is field)
        self.literals: list[tuple[Any, np.dtype]] = []
        self.const_names: dict[int, str] = {}                  # graph const Var id -> C name

    def is_field(self, shape: tuple[int, ...]) -> bool:
        if shape == ():
            return False
        if shape != self.shape:
            raise _NotElementwise(f"a value of shape {shape} beside {self.shape}")
        return True

    def buffer(self, value: Any, dtype: np.dtype, shape: tuple[int, ...]) -> str:
        k = len(self.buffers)
        self.buffers.append((value, dtype, self.is_field(tuple(shape))))
        return f"b{k}"

    def literal(self, value: Any, dtype: np.dtype) -> str:
        k = len(self.literals)
        self.literals.append((value, dtype))
        return f"l{k}"


def _translate(g: Graph, in_names: Sequence[str], prog: _Program, tag: str) -> _Block:
    """``g`` as SSA lines over ``in_names`` (C names of its inputs, in in_binders order)."""
    names: dict[int, str] = {v.n: nm for v, nm in zip(g.in_binders, in_names)}
    for v in g.in_binders:
        prog.is_field(tuple(v.aval.shape))
    for n, c in g.consts.items():
        if not isinstance(c, Array):
            raise _NotElementwise("a non-array constant")
        if n not in prog.const_names:
            prog.const_names[n] = prog.buffer(c, c.dtype, tuple(c.shape)) + "v"
        names[n] = prog.const_names[n]
    # value ids for ``instructions``: every name read, then one per instruction
    leaves: list[str] = []
    dtypes: list[np.dtype] = []
    vid: dict[Any, int] = {}

    def leaf(key: Any, cname: str, d: np.dtype) -> int:
        if key not in vid:
            vid[key] = len(leaves)
            leaves.append(cname)
            dtypes.append(d)
        return vid[key]

    pending: list[tuple] = []
    for e in g.eqns:
        out = e.out_binders[0]
        prog.is_field(tuple(out.aval.shape))
        name = e.prim.name
        if name in _ALIASES and len(e.inputs) == 1 and isinstance(e.inputs[0], Var):
            src = e.inputs[0]
            if tuple(src.aval.shape) != () and tuple(src.aval.shape) != tuple(out.aval.shape):
                raise _NotElementwise(f"{name} of a non-scalar")
            pending.append(("alias", src, out))
            continue
        if not is_elementwise(e):
            raise _NotElementwise(f"primitive {name}")
        if name == "full":
            d = np.dtype(e.params["dtype"])
            lit = ("lit", len(pending))
            pending.append(("copy", ((lit, e.params["value"], d),), (d,), d, d, out))
            continue
        if name in ("convert_element_type", "copy"):
            src = e.inputs[0]
            d = np.dtype(e.params.get("dtype", src.aval.dtype))
            pending.append(("copy", (src,), (d,), d, d, out))
            continue
        p = e.params
        ads = tuple(np.dtype(a) for a in p["arg_dtypes"])
        args = tuple(((("lit", id(e), i), x.value, ad) if isinstance(x, Lit) else x)
                     for i, (x, ad) in enumerate(zip(e.inputs, ads)))
        pending.append((name, args, ads, np.dtype(p["dtype"]), np.dtype(p["out_dtype"]), out))
    # leaves first (inputs, constants, literals), then the instructions in order
    alias: dict[int, int] = {}
    for item in pending:
        if item[0] == "alias":
            _, src, out = item
            alias[out.n] = alias.get(src.n, src.n)
            continue
        for a in item[1]:
            if isinstance(a, tuple):
                key, value, d = a
                leaf(key, prog.literal(value, d), d)
            else:
                n = alias.get(a.n, a.n)
                if n in names:
                    leaf(n, names[n], a.aval.dtype)
    n_in = len(leaves)
    body: list[Instr] = []

    def ref(a: Any) -> int:
        if isinstance(a, tuple):
            return vid[a[0]]
        n = alias.get(a.n, a.n)
        if n not in vid:
            raise _NotElementwise("a value read before it is computed")
        return vid[n]
    for item in pending:
        if item[0] == "alias":
            continue
        op, args, ads, d, od, out = item
        ids = tuple(ref(a) for a in args)
        vid[out.n] = n_in + len(body)
        body.append(Instr(op, ids, ads, d, od))
        dtypes.append(od)
    lines = [f"const {C.compute_ctype(d)} {tag}{k} = {cname};"
             for k, (cname, d) in enumerate(zip(leaves, dtypes))]
    lines += _renamed(instructions(tuple(body), dtypes, n_in, 1), tag)
    outs: list[str] = []
    for o in g.outs:
        if isinstance(o, Lit):
            raise _NotElementwise("a literal output")
        n = alias.get(o.n, o.n)
        if n in vid:
            outs.append(f"{tag}{vid[n]}")
        elif n in names:
            outs.append(names[n])
        else:
            raise _NotElementwise("an output that is not computed")
    return _Block(tuple(lines), tuple(outs), tuple(body))


def _renamed(lines: list[str], tag: str) -> list[str]:
    """``instructions`` names values ``v<k>``; give this block's its own prefix, so that the
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
    source: str

    def run(self, device: Device, consts: Sequence[Array], carry: Sequence[Array],
            length: int = 0) -> list[Array]:
        n = math.prod(self.prog.shape)
        ins = [_contiguous(a) for a in list(consts) + list(carry)]
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
        # through the runtime's launch, so that a jit capture of this step records it
        launch(device, self.kernel, (-(-n // L) * L,), (L,), *args)
        return outs


def _contiguous(a: Array) -> Array:
    if a._strides != c_strides(a._shape):
        return contiguous_copy(a)
    return a


def _render(prog: _Program, n_consts: int, carry_dtypes: Sequence[np.dtype],
            carry_fields: Sequence[bool], cond: _Block | None, body: _Block) -> tuple:
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
             "  const int gid = (int)get_global_id(0);",
             "  if (gid >= n) return;"]
    for k, (_, d, field) in enumerate(prog.buffers):
        lines.append(f"  const {C.compute_ctype(d)} b{k}v = "
                     f"{C.load(d, f'a{k}', f'o{k} + ' + ('gid' if field else '0'))};")
    for j, d in enumerate(carry_dtypes):
        lines.append(f"  {C.compute_ctype(d)} c{j} = b{n_consts + j}v;")
    head = "  for (int it = 0; it < length; ++it) {" if cond is None else "  for (;;) {"
    lines.append(head)
    if cond is not None:
        lines += ["    {"] + ["      " + s for s in cond.lines]
        lines += [f"      if (!({cond.outs[0]})) break;", "    }"]
    for j, d in enumerate(carry_dtypes):
        lines.append(f"    {C.compute_ctype(d)} n{j};")
    lines += ["    {"] + ["      " + s for s in body.lines]
    lines += [f"      n{j} = {o};" for j, o in enumerate(body.outs)] + ["    }"]
    lines += [f"    c{j} = n{j};" for j in range(len(carry_dtypes))] + ["  }"]
    for j, (d, field) in enumerate(zip(carry_dtypes, carry_fields)):
        val = C.convert(f"c{j}", d, d, 1, to_storage=True)
        st = C.store(d, f"r{j}", "gid", val, 1)
        lines.append(f"  {st}" if field else f"  if (gid == 0) {st}")
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
        names = [prog.buffer(None, a._dtype, a._shape) + "v" for a in args]
        consts, carry = names[:num_consts], [f"c{j}" for j in range(len(args) - num_consts)]
        carry_args = list(args[num_consts:])
        cblock = None
        if cond is not None:
            cblock = _translate(cond, consts + carry, prog, "p")
            if tuple(cond.outs[0].aval.shape) != ():
                return None
            if _depends_on_field(cond, prog):
                return None
        bblock = _translate(body, consts + carry, prog, "q")
    except _NotElementwise:
        return None
    if len(bblock.outs) != len(carry_args):
        return None
    device = args[0]._device
    dts = [a._dtype for a in carry_args]
    fields = [a._shape != () for a in carry_args]
    for d in dts + [d for _, d, _ in prog.buffers]:
        if d.kind == "c" or not device.supports(d):
            return None
    src, name, argtypes = _render(prog, num_consts, dts, fields, cblock, bblock)
    kernel = device.kernel(("jit-loop", src), lambda: (src, name, argtypes))
    lk = LoopKernel(kernel, prog, num_consts, tuple((a._shape, a._dtype) for a in carry_args),
                    cond is None, src)
    cache[sig] = lk
    return lk


def _depends_on_field(g: Graph, prog: _Program) -> bool:
    """Whether the predicate reads a field value: each work-item would then stop at its own
    iteration, and the uniform carries would differ between work-items."""
    field = {v.n for v in g.in_binders if tuple(v.aval.shape) != ()}
    field |= {n for n, c in g.consts.items() if tuple(c.shape) != ()}
    for e in g.eqns:
        if any(isinstance(x, Var) and x.n in field for x in e.inputs):
            field.update(v.n for v in e.out_binders)
    return any(isinstance(o, Var) and o.n in field for o in g.outs)
