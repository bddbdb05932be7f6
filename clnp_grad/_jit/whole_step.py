"""Whole-step kernels: a small jitted step compiled into one kernel and one launch.

A step whose values are all small (a logistic-regression update on a 64x16 batch, the
tail of an optimizer on a few vectors) spends its time in launches, not arithmetic: on
PoCL each launch costs 2-9 us of enqueue and thread hand-off, and the fused kernels'
argument lists add ~0.1 us per scalar argument (measured: 32 ``long`` arguments 3.9-6.3 us
against 1.6-2.2 us for one). A whole-step kernel runs every equation of the staged graph in
one work-group, in program order:

- *blocks*: an elementwise block (consecutive elementwise equations of one shape, fused as
  an SSA program over ``for (i = lid; i < n; i += L)``, in vectors where the operands are
  dense on CPUs), a reduction (``reduce``) or a product (``dot_general``), each a loop over
  its outputs that walks the reduced or contracted range serially (eight outputs per walk
  on CPUs); GPUs (``L > 1``) split the walk of an output over several work-items and
  combine their accumulators in local memory, in a fixed order;
- views (``reshape``, ``transpose``, ``broadcast_to``, ``slice``, ``stop_gradient``) are
  strides over a stored value, read in place; a reshape that no strides express becomes a
  copy block;
- between blocks a barrier orders the stores before the loads of the next block (one
  work-group, so no launch boundary is needed); on CPU devices ``L = 1`` and the kernel is
  a sequential program, which PoCL runs on one core without work-item loops.

Values that a later block, a view or the caller reads are stored: the step's outputs to
fresh buffers, the rest to one scratch buffer that the step keeps. Shapes, strides and
constants are compiled into the source, so the only arguments are buffers. Every op's C comes
from the op table through ``clnp._kernels.elementwise.instructions`` (and the reductions'
combines from ``clnp._kernels.reduction``), as in the other fused kernels.

A graph qualifies when every equation is one of those kinds (``eqn_work``) and no value is
empty or complex. ``clnp_grad._jit.executable`` picks the pieces of a step to run so: runs
of groups whose work (elements computed, plus reduced or contracted elements) stays within
``CPU_WORK_MAX`` / ``GPU_WORK_MAX`` (``work_limit``), where one core or one work-group is
faster than several launches (``bench/bench_whole_step.py``; bench/NOTES.md).
``WHOLE_STEP`` forces the choice (tests).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from clnp._core.array import c_strides
from clnp._core.eager import reshape_strides, strides_broadcast_to
from clnp._kernels import ctypes as C
from clnp._kernels.elementwise import Instr, can_vectorize, instructions, prelude
from clnp._kernels.reduction import _REDUCE

from .._ir import Graph, Lit, Var
from .codegen import neutral
from .fusion import VIEWS, instruction_of, is_elementwise

# None: pieces of steps by their work (``work_limit``); True: any size, and single groups
# too; False: none (tests)
WHOLE_STEP: bool | None = None
# Work (elements computed, plus reduced or contracted elements) of the largest step run as
# one kernel: one core or one work-group against 2-20 us per launch saved (the crossings
# bench/bench_whole_step.py measured: between 303,170 and 415,368 on PoCL, between 415,368
# and 1.6 M on the H200)
CPU_WORK_MAX = 1 << 18
GPU_WORK_MAX = 1 << 19
# work-items of the one work-group on GPUs (CPU devices run one)
GROUP_MAX = 256
# None: the work-group by device (``group_size``); an int forces it (tests run the GPU form,
# barriers and the split walks of reductions, on PoCL)
GROUP: int | None = None
_ALIGN = 64           # bytes: each stored value's start in the scratch buffer
# outputs a CPU work-item computes together in a reduction or product (independent chains)
_UNROLL = 8
_NAME = "clnp_whole_step"
_HELPER = re.compile(r"clnp_(\w+?)_\{T\}")     # helpers a combine template calls


@dataclass(frozen=True)
class _Layout:
    """Where a value's elements are: stored value ``base`` (a Var number), element
    ``offset`` and ``strides`` over ``shape``."""
    base: int
    offset: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]


@dataclass
class _Block:
    kind: str                         # "ew" | "reduce" | "dot"
    shape: tuple[int, ...] = ()       # ew: the index space
    eqns: list[Any] = field(default_factory=list)
    members: set[int] = field(default_factory=set)     # ew: values computed here


@dataclass
class WholeStepPlan:
    """The kernel of a whole step: ``source`` with parameters for ``inputs`` (Var numbers of
    the graph's inputs and constants, read), ``outputs`` (the Vars the kernel stores for the
    caller) and, with ``scratch_nbytes > 0``, one scratch buffer; launched as one work-group
    of ``group`` work-items."""
    source: str
    name: str
    inputs: list[int]
    outputs: list[Var]
    scratch_nbytes: int
    group: int
    work: int


def work_limit(is_cpu: bool) -> float:
    """The most work a whole-step kernel takes on a CPU or GPU device: ``CPU_WORK_MAX`` /
    ``GPU_WORK_MAX``; unbounded when ``WHOLE_STEP`` forces whole steps, zero when it turns
    them off.

    Examples
    --------
    >>> from clnp_grad._jit import whole_step
    >>> whole_step.work_limit(True) == whole_step.CPU_WORK_MAX
    True
    """
    if WHOLE_STEP is False:
        return 0
    if WHOLE_STEP:
        return math.inf
    return CPU_WORK_MAX if is_cpu else GPU_WORK_MAX


def group_size(is_cpu: bool, max_work_group_size: int) -> int:
    """Work-items of a whole-step kernel's one work-group: one on CPU devices (the kernel is
    then a sequential program), else up to ``GROUP_MAX``; ``GROUP`` overrides.

    Examples
    --------
    >>> from clnp_grad._jit.whole_step import group_size
    >>> group_size(True, 4096), group_size(False, 1024), group_size(False, 64)
    (1, 256, 64)
    """
    if GROUP is not None:
        return min(GROUP, max_work_group_size)
    return 1 if is_cpu else min(GROUP_MAX, max_work_group_size)


def eqn_work(e: Any) -> int | None:
    """The work one equation adds to a whole step (elements computed, plus reduced or
    contracted elements; views none), or None when a whole-step kernel cannot run it.

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> from clnp_grad._jit.whole_step import eqn_work
    >>> x = clnp.ones((8, 4), dtype=clnp.float32)
    >>> g = cg.make_ir(lambda x: clnp.sort(clnp.sum(x @ x.T, axis=0)))(x)
    >>> [e.prim.name for e in g.eqns], [eqn_work(e) for e in g.eqns]
    (['transpose', 'dot_general', 'reduce', 'sort'], [0, 256, 64, None])
    """
    if not all(_value_ok(v) for v in list(e.out_binders) +
               [x for x in e.inputs if isinstance(x, Var)]):
        return None
    name = e.prim.name
    out = e.out_binders[0]
    if name in VIEWS:
        return 0 if isinstance(e.inputs[0], Var) else None
    if is_elementwise(e):
        if name == "elementwise_kernel" and len(e.out_binders) != 1:
            return None
        return math.prod(out.aval.shape)
    if name == "reduce" and e.params.get("op") in _REDUCE and isinstance(e.inputs[0], Var):
        return math.prod(e.inputs[0].aval.shape)
    if name == "dot_general" and len(e.inputs) == 2 and \
            all(isinstance(x, Var) for x in e.inputs):
        lhs, rhs = e.inputs
        d = out.aval.dtype
        if lhs.aval.dtype == rhs.aval.dtype == d and d.kind in "fiu":
            (lc, _), _ = e.params["dimension_numbers"]
            k = math.prod(lhs.aval.shape[a] for a in lc)
            return math.prod(out.aval.shape) * max(k, 1)
    return None


def _value_ok(v: Var) -> bool:
    """Whether a whole-step kernel holds value ``v``: not complex, not empty, indexable
    with ``int``."""
    shape = v.aval.shape
    return v.aval.dtype.kind != "c" and 0 not in shape and math.prod(shape) < 1 << 31


def subgraph(eqns: list[Any], needed: set[int]) -> Graph:
    """The equations ``eqns`` (in program order) of a larger graph as a graph of their own:
    its inputs are the Vars they read and do not define (in first-use order), its outputs
    the Vars they define whose numbers are in ``needed`` (read after them, or returned).

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> from clnp_grad._jit.whole_step import subgraph
    >>> x = clnp.ones(4, dtype=clnp.float32)
    >>> g = cg.make_ir(lambda x: clnp.sin(x * 2) + 1)(x)
    >>> s = subgraph(g.eqns[:2], {g.eqns[1].out_binders[0].n})
    >>> len(s.in_binders), len(s.eqns), len(s.outs)
    (1, 2, 1)
    """
    defined: set[int] = set()
    ins: list[Var] = []
    seen: set[int] = set()
    for e in eqns:
        for x in e.inputs:
            if isinstance(x, Var) and x.n not in defined and x.n not in seen:
                seen.add(x.n)
                ins.append(x)
        defined.update(b.n for b in e.out_binders)
    outs = [b for e in eqns for b in e.out_binders if b.n in needed]
    return Graph(ins, list(eqns), outs, {})


class _Unsupported(Exception):
    """The graph has something a whole-step kernel does not run."""


def plan(graph: Graph, *, has_fp64: bool, group: int) -> WholeStepPlan | None:
    """The whole-step kernel of ``graph``, or None when the graph does not qualify (its
    size is the caller's to bound: ``work_limit``).

    Parameters
    ----------
    graph : Graph
        The staged (simplified) step, or a piece of one (``subgraph``).
    has_fp64 : bool
        Whether the device computes float64.
    group : int
        Work-items of the kernel's one work-group (``group_size``).

    Returns
    -------
    WholeStepPlan or None
        The kernel's source and its parameters, or None (module docstring: what
        qualifies).

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> from clnp_grad._jit import whole_step
    >>> x = clnp.asarray([1.0, 2.0, 3.0], dtype=clnp.float32)
    >>> g = cg.make_ir(lambda x: clnp.sum(clnp.exp(x) * 2.0))(x)
    >>> p = whole_step.plan(g, has_fp64=False, group=1)
    >>> p.name, len(p.inputs), len(p.outputs), p.work
    ('clnp_whole_step', 1, 1, 9)
    """
    try:
        builder = _Builder(graph, has_fp64)
        builder.partition()
        return render_whole_step(builder, group) if builder.blocks else None
    except _Unsupported:
        return None


class _Builder:
    def __init__(self, graph: Graph, has_fp64: bool):
        self.g = graph
        self.layout: dict[int, _Layout] = {}    # readable values (stored, or views of them)
        self.defined_in: dict[int, int] = {}    # value -> index of the ew block computing it
        self.blocks: list[_Block] = []
        self.work = 0
        self.copies: dict[int, Var] = {}        # a view output -> its copy's Var
        self.eqn_block: dict[int, int] = {}     # id(eqn) -> its block (views have none)
        self.inputs: list[int] = []
        for v in graph.in_binders:
            if not _value_ok(v):
                raise _Unsupported
            self.inputs.append(v.n)
            self.layout[v.n] = _Layout(v.n, 0, v.aval.shape, c_strides(v.aval.shape))
        for n, c in graph.consts.items():
            if not hasattr(c, "_buf"):       # a host array: the general path uploads it
                raise _Unsupported
            shape = tuple(c.shape)
            self.inputs.append(n)
            self.layout[n] = _Layout(n, 0, shape, c_strides(shape))
        self.fp64 = has_fp64

    # -- partition into blocks
    def partition(self) -> None:
        open_ew: _Block | None = None
        for e in self.g.eqns:
            work = eqn_work(e)       # None: an equation no block runs
            if work is None:
                raise _Unsupported
            self.work += work
            name = e.prim.name
            if name in VIEWS:
                if not self._view(e):       # a reshape no strides express: a copy
                    open_ew = self._elementwise(e, open_ew, copy=True)
                    self.work += math.prod(e.out_binders[0].aval.shape)
            elif is_elementwise(e):
                open_ew = self._elementwise(e, open_ew)
            else:               # a reduce or a dot_general (eqn_work)
                open_ew = None
                self._contraction("reduce" if name == "reduce" else "dot", e)
        outs = [x for x in self.g.outs if isinstance(x, Var)]
        produced = {b.n for e in self.g.eqns for b in e.out_binders}
        for x in outs:
            lay = self.layout.get(x.n)
            if x.n in produced and lay is not None and lay.base != x.n:
                # an output that is a view: the caller gets its own copy
                self.copies[x.n] = x
        for x in self.copies.values():
            blk = _Block("ew", shape=x.aval.shape)
            blk.eqns.append(("copy_out", x))
            self.blocks.append(blk)
            self.work += math.prod(x.aval.shape)

    def _readable(self, x: Any, blk: _Block | None, shape: tuple[int, ...]) -> bool:
        """Whether elementwise block ``blk`` over ``shape`` can read ``x`` where it is."""
        if not isinstance(x, Var):
            return True
        if blk is not None and x.n in blk.members:
            return x.aval.shape == shape            # a register of the same element
        lay = self.layout.get(x.n)
        if lay is None:
            raise _Unsupported                      # a value of an unsupported producer
        return blk is None or lay.base not in blk.members

    def _elementwise(self, e: Any, blk: _Block | None, copy: bool = False) -> _Block:
        out = e.out_binders[0]
        shape = out.aval.shape
        ins = [x for x in e.inputs if isinstance(x, Var)]
        if blk is None or blk.shape != shape or \
                not all(self._readable(x, blk, shape) for x in ins):
            for x in ins:
                if not self._readable(x, None, shape):
                    raise _Unsupported
            blk = _Block("ew", shape=shape)
            self.blocks.append(blk)
        blk.eqns.append(("copy", e) if copy else ("ew", e))
        self.eqn_block[id(e)] = len(self.blocks) - 1
        blk.members.add(out.n)
        self.defined_in[out.n] = len(self.blocks) - 1
        self.layout[out.n] = _Layout(out.n, 0, shape, c_strides(shape))
        return blk

    def _view(self, e: Any) -> bool:
        x, out = e.inputs[0], e.out_binders[0]
        if not isinstance(x, Var) or x.n not in self.layout:
            raise _Unsupported
        src = self.layout[x.n]
        p, name = e.params, e.prim.name
        if name == "stop_gradient":
            lay = src
        elif name == "reshape":
            shape = tuple(p["shape"])
            st = reshape_strides(src.shape, src.strides, shape)
            if st is None:
                return False
            lay = _Layout(src.base, src.offset, shape, st)
        elif name == "transpose":
            perm = tuple(p["perm"])
            lay = _Layout(src.base, src.offset, tuple(src.shape[k] for k in perm),
                          tuple(src.strides[k] for k in perm))
        elif name == "broadcast_to":
            shape = tuple(p["shape"])
            lay = _Layout(src.base, src.offset, shape, _broadcast(src, shape))
        else:    # slice
            off = src.offset + sum(s * st for s, st in zip(p["starts"], src.strides))
            lay = _Layout(src.base, off, tuple(p["shape"]),
                          tuple(st * k for st, k in zip(src.strides, p["steps"])))
        self.layout[out.n] = lay
        return True

    def _contraction(self, kind: str, e: Any) -> None:
        for x in e.inputs:
            if not self._readable(x, None, ()):
                raise _Unsupported
        out = e.out_binders[0]
        blk = _Block(kind, shape=out.aval.shape, eqns=[e])
        self.blocks.append(blk)
        self.eqn_block[id(e)] = len(self.blocks) - 1
        self.layout[out.n] = _Layout(out.n, 0, out.aval.shape, c_strides(out.aval.shape))

    # -- storage
    def _stored(self) -> tuple[set[int], list[Var]]:
        """Values written to memory (read outside their block, by a view, or returned) and
        the Vars returned to the caller that the kernel writes."""
        stored = {blk.eqns[0].out_binders[0].n for blk in self.blocks
                  if blk.kind != "ew"}
        for e in self.g.eqns:
            reader = self.eqn_block.get(id(e))      # None: a view
            for x in e.inputs:
                if not isinstance(x, Var) or x.n not in self.layout:
                    continue
                base = self.layout[x.n].base
                home = self.defined_in.get(base)
                if home is not None and (reader != home or base != x.n):
                    stored.add(base)
        for x in self.copies.values():
            stored.add(self.layout[x.n].base)
        returned: list[Var] = []
        for x in self.g.outs:
            if isinstance(x, Var) and x not in returned and (
                    x.n in self.defined_in or x.n in self.copies or x.n in stored):
                returned.append(x)
                if x.n not in self.copies:
                    stored.add(x.n)
        return stored, returned

def render_whole_step(b: "_Builder", group: int) -> WholeStepPlan:
    """The source of the whole-step kernel of the partitioned graph ``b``, run by one
    work-group of ``group`` work-items.

    Parameters
    ----------
    b : _Builder
        The graph's blocks and value layouts (``plan`` makes it).
    group : int
        Work-items of the work-group; above 1 the blocks are separated by barriers.

    Returns
    -------
    WholeStepPlan
        Source and parameters: the graph's arrays (read), the returned values, and a scratch
        buffer when values cross blocks.

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> from clnp_grad._jit import whole_step
    >>> x = clnp.asarray([[1.0, 2.0], [3.0, 4.0]], dtype=clnp.float32)
    >>> b = whole_step._Builder(cg.make_ir(lambda x: clnp.sum(x @ x, axis=0))(x), False)
    >>> b.partition()
    >>> p = whole_step.render_whole_step(b, 64)
    >>> p.source.count("barrier(CLK_GLOBAL"), p.scratch_nbytes   # two blocks; x @ x stored
    (1, 64)
    >>> p.source.count("barrier(CLK_LOCAL")     # each block's walks split over work-items
    2
    """
    stored, returned = b._stored()
    avals = {v.n: v.aval for v in b.g.in_binders}
    for n, c in b.g.consts.items():
        avals[n] = _AvalOf(tuple(c.shape), c.dtype)
    for e in b.g.eqns:
        for o in e.out_binders:
            avals[o.n] = o.aval
    params: list[str] = []
    ptr: dict[int, str] = {}
    for k, n in enumerate(b.inputs):
        d = avals[n].dtype
        params.append(f"__global const {C.storage_ctype(d)} *restrict in{k}")
        ptr[n] = f"in{k}"
    for k, x in enumerate(returned):
        params.append(f"__global {C.storage_ctype(x.aval.dtype)} *out{k}")
        ptr[x.n] = f"out{k}"
    lines: list[str] = []
    scratch = 0
    for n in sorted(stored):
        if n in ptr:
            continue
        a = avals[n]
        lines.append(f"  __global {C.storage_ctype(a.dtype)} *t{n} = "
                     f"(__global {C.storage_ctype(a.dtype)} *)(scratch + {scratch});")
        ptr[n] = f"t{n}"
        scratch += -(-max(math.prod(a.shape), 1) * a.dtype.itemsize // _ALIGN) * _ALIGN
    if scratch:
        params.append("__global uchar *scratch")
    r = _Renderer(b, ptr, stored, avals, group)
    for i, blk in enumerate(b.blocks):
        if i and group > 1:
            lines.append("  barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);")
        lines += r.block(blk)
    head = ["  const int lid = get_local_id(0);"]
    head += [f"  __local {ct} red_{ct}[{group}];" for ct in sorted(r.local_types)]
    text = "\n".join(head + lines)
    dtypes = [a.dtype for a in avals.values()]
    if any(d.name == "float64" for d in dtypes) and not b.fp64:
        raise _Unsupported
    title = f"// clnp whole step: {len(b.blocks)} blocks, work {b.work}"
    # one work-item (CPU devices): scalar transcendentals through the vector forms, as the
    # eager kernels do there, so a vector loop and its scalar tail compute the same values
    pre = prelude(title, tuple(r.instrs), r.all_dtypes + dtypes, text, 4 if group == 1 else 1,
                  tuple(sorted(r.helpers)))
    src = "\n".join(pre + [f"__kernel __attribute__((reqd_work_group_size({group}, 1, 1)))",
                           f"void {_NAME}(" + ",\n    ".join(params) + ")", "{", text, "}"])
    return WholeStepPlan(src, _NAME, list(b.inputs), returned, scratch, group,
                         b.work)


@dataclass(frozen=True)
class _AvalOf:
    shape: tuple[int, ...]
    dtype: np.dtype


def _broadcast(src: _Layout, shape: tuple[int, ...]) -> tuple[int, ...]:
    return strides_broadcast_to(src.shape, src.strides, shape)


def _dense(strides: tuple[int, ...], shape: tuple[int, ...]) -> bool:
    """Whether ``strides`` walk ``shape`` in C order, element after element (dims of one
    element aside): a flat index then addresses it."""
    return all(s == c for s, c, n in zip(strides, c_strides(shape), shape) if n > 1)


def literal(value: Any, d: np.dtype) -> str:
    """``value`` as a C expression of ``d``'s compute type, exactly (floats in hexadecimal),
    as the kernels' scalar arguments would carry it.

    Examples
    --------
    >>> import numpy as np
    >>> from clnp_grad._jit.whole_step import literal
    >>> literal(0.1, np.dtype(np.float32)), literal(-3, np.dtype(np.int64))
    ('((float)(0x1.99999a0000000p-4f))', '((long)(-3L))')
    """
    x = np.asarray(value, C.scalar_arg_dtype(d))[()]
    ct = C.compute_ctype(d)
    if x.dtype.kind == "f":
        f = float(x)
        if math.isnan(f):
            text = "NAN"
        elif math.isinf(f):
            text = "INFINITY" if f > 0 else "(-INFINITY)"
        else:
            text = f.hex() + ("f" if x.dtype.itemsize == 4 else "")
    elif x.dtype.kind in "iu":
        i = int(x)
        suffix = ("U" if x.dtype.kind == "u" else "") + ("L" if x.dtype.itemsize == 8 else "")
        if x.dtype == np.int64 and i == -(1 << 63):
            text = "(-9223372036854775807L - 1)"
        elif x.dtype == np.int32 and i == -(1 << 31):
            text = "(-2147483647 - 1)"
        else:
            text = f"{i}{suffix}"
    else:
        text = str(int(x))
    return f"(({ct})({text}))"


class _Renderer:
    def __init__(self, b: _Builder, ptr: dict[int, str], stored: set[int], avals: dict,
                 group: int):
        self.b, self.ptr, self.stored, self.avals, self.group = b, ptr, stored, avals, group
        self.instrs: list[Instr] = []
        self.all_dtypes: list[np.dtype] = []
        self.local_types: set[str] = set()
        self.helpers: set[tuple[str, str]] = set()    # (helper, C type) the combines call

    def _addr(self, lay: _Layout, shape: tuple[int, ...], idx: list[str] | None,
              flat: str) -> str:
        """The element of ``lay`` broadcast to ``shape`` at multi-index ``idx`` (or the flat
        C-order index ``flat`` when the layout is ``shape``'s contiguous one)."""
        st = _broadcast(lay, shape)
        if _dense(st, shape):
            return f"{lay.offset} + {flat}" if lay.offset else flat
        terms = [f"{i} * {s}" for i, s in zip(idx or [], st) if s]
        if lay.offset:
            terms.insert(0, str(lay.offset))
        return " + ".join(terms) or "0"

    def _load(self, x: Var, shape: tuple[int, ...], idx: list[str] | None, flat: str) -> str:
        lay = self.b.layout[x.n]
        return C.load(x.aval.dtype, self.ptr[lay.base], self._addr(lay, shape, idx, flat))

    def block(self, blk: _Block) -> list[str]:
        if blk.kind == "ew":
            return self._ew(blk)
        return self._contraction(blk)

    def _ew(self, blk: _Block) -> list[str]:
        shape = blk.shape
        n = max(math.prod(shape), 1)
        idx = [f"i{d}" for d in range(len(shape))]
        # operands read from memory or written as literals, in first-use order:
        # ("var", x) broadcast to the block's shape, ("flat", x) element i of x in C order
        # (a reshape no strides express), ("lit", Lit, dtype)
        ext: list[tuple] = []
        ext_ids: dict[tuple, int] = {}

        def operand(key: tuple) -> tuple:
            if key not in ext_ids:
                ext_ids[key] = len(ext)
                ext.append(key)
            return key
        pending: list[tuple] = []
        for tag, e in blk.eqns:
            if tag == "copy_out":        # e: a returned view, copied to its own buffer
                d = e.aval.dtype
                pending.append(("copy", (operand(("var", e)),), (d,), d, d, e, True))
                continue
            out = e.out_binders[0]
            if tag == "copy":
                d = out.aval.dtype
                pending.append(("copy", (operand(("flat", e.inputs[0])),), (d,), d, d, out,
                                False))
                continue
            name, args, ads, d, od = instruction_of(e)
            ids = []
            for x, ad in zip(args, ads):
                if isinstance(x, Lit):
                    ids.append(operand(("lit", x, ad)))
                elif x.n in blk.members:
                    ids.append(("v", x.n))
                else:
                    ids.append(operand(("var", x)))
            pending.append((name, tuple(ids), ads, d, od, out, False))
        dtypes = [key[2] if key[0] == "lit" else key[1].aval.dtype for key in ext]
        n_in = len(ext)
        vid: dict[tuple, int] = {}
        body: list[Instr] = []
        for j, (name, ids, ads, d, od, out, _) in enumerate(pending):
            args = tuple(vid[k] if k[0] == "v" else ext_ids[k] for k in ids)
            body.append(Instr(name, args, tuple(ads), d, od))
            vid[("v", out.n)] = n_in + j
        values = dtypes + [i.out_dtype for i in body]
        stores = [(n_in + j, od, out) for j, (_, _, _, _, od, out, copy_out)
                  in enumerate(pending) if out.n in self.stored or copy_out]
        lines: list[str] = []
        start = "lid"
        w = self._width(ext, shape, body, values)
        if w > 1:
            # one work-item (CPU): whole vectors of the dense operands, then a scalar tail
            n_vec = n - n % w
            lines += self._ew_vector(ext, shape, body, values, stores, w, n_vec)
            start = str(n_vec)
        strided = any(k[0] == "var" and self._needs_index(k[1], shape) for k in ext)
        lines.append(f"  for (int i = {start}; i < {n}; i += {self.group}) {{")
        if strided:
            lines += _decompose("i", idx, shape)
        for k, key in enumerate(ext):
            if key[0] == "lit":
                _, lit, ad = key
                lines.append(f"    const {C.compute_ctype(ad)} v{k} = {literal(lit.value, ad)};")
                continue
            x = key[1]
            lay = self.b.layout[x.n]
            if key[0] == "var":
                pos = self._addr(lay, shape, idx, "i")
            else:
                names = [f"f{k}_{d}" for d in range(len(lay.shape))]
                lines += _decompose("i", names, lay.shape, tag=f"f{k}")
                pos = self._addr(lay, lay.shape, names, "i")
            d = x.aval.dtype
            lines.append(f"    const {C.compute_ctype(d)} v{k} = "
                         f"{C.load(d, self.ptr[lay.base], pos)};")
        lines += ["    " + s for s in instructions(tuple(body), values, n_in, 1)]
        for vid_, od, out in stores:
            lines.append("    " + C.store(od, self.ptr[out.n], "i",
                                          C.convert(f"v{vid_}", od, od, to_storage=True)))
        lines.append("  }")
        self.instrs += body
        self.all_dtypes += values
        return lines

    def _width(self, ext: list[tuple], shape: tuple[int, ...], body: list[Instr],
               values: list[np.dtype]) -> int:
        """Lanes of the vector loop of an elementwise block: one work-item (CPU devices),
        every array operand dense over the block or one element broadcast, every op
        vector-safe (``can_vectorize``), at least two whole vectors; else 1 (scalars)."""
        if self.group != 1:
            return 1
        for key in ext:
            if key[0] == "flat":
                return 1
            if key[0] == "var":
                st = _broadcast(self.b.layout[key[1].n], shape)
                if not _dense(st, shape) and any(st):
                    return 1
        if not can_vectorize(tuple(body), values):
            return 1
        w = max(1, min(8, 32 // max(C.compute_itemsize(d) for d in values)))
        return w if w > 1 and math.prod(shape) >= 2 * w else 1

    def _ew_vector(self, ext: list[tuple], shape: tuple[int, ...], body: list[Instr],
                   values: list[np.dtype], stores: list[tuple], w: int,
                   n_vec: int) -> list[str]:
        lines = [f"  for (int i = 0; i < {n_vec}; i += {w}) {{"]
        for k, key in enumerate(ext):
            if key[0] == "lit":
                _, lit, ad = key
                lines.append(f"    const {C.compute_ctype(ad, w)} v{k} = "
                             f"{C.splat(ad, literal(lit.value, ad), w)};")
                continue
            x = key[1]
            d = x.aval.dtype
            lay = self.b.layout[x.n]
            ptr = self.ptr[lay.base]
            if any(_broadcast(lay, shape)):        # dense (``_width``)
                pos = f"{lay.offset} + i" if lay.offset else "i"
                expr = C.load(d, ptr, pos, w)
            else:       # one element, broadcast (a view with every stride 0 included)
                expr = C.splat(d, C.load(d, ptr, str(lay.offset)), w)
            lines.append(f"    const {C.compute_ctype(d, w)} v{k} = {expr};")
        lines += ["    " + s for s in instructions(tuple(body), values, len(ext), w)]
        for vid_, od, out in stores:
            lines.append("    " + C.store(od, self.ptr[out.n], "i",
                                          C.convert(f"v{vid_}", od, od, w, to_storage=True),
                                          w))
        lines.append("  }")
        return lines

    def _needs_index(self, x: Var, shape: tuple[int, ...]) -> bool:
        return not _dense(_broadcast(self.b.layout[x.n], shape), shape)

    def _contraction(self, blk: _Block) -> list[str]:
        e = blk.eqns[0]
        out = e.out_binders[0]
        oshape = out.aval.shape
        n_out = max(math.prod(oshape), 1)
        if blk.kind == "reduce":
            x = e.inputs[0]
            axes = tuple(sorted(a % max(len(x.aval.shape), 1) for a in e.params["axes"]))
            kept = [d for d in range(len(x.aval.shape)) if d not in axes]
            acc = np.dtype(e.params["acc_dtype"])
            odt = np.dtype(e.params["out_dtype"])
            op = e.params["op"]
            red = [x.aval.shape[d] for d in axes]
            lay = self.b.layout[x.n]
            st = lay.strides

            def element(o_idx: list[str], r_idx: list[str]) -> str:
                terms = [str(lay.offset)] if lay.offset else []
                terms += [f"{i} * {st[d]}" for i, d in zip(o_idx, kept) if st[d]]
                terms += [f"{j} * {st[d]}" for j, d in zip(r_idx, axes) if st[d]]
                v = C.load(x.aval.dtype, self.ptr[lay.base], " + ".join(terms) or "0")
                return C.convert(v, x.aval.dtype, acc)
        else:
            lhs, rhs = e.inputs
            (lc, rc), (lb, rb) = e.params["dimension_numbers"]
            ls, rs = lhs.aval.shape, rhs.aval.shape
            lf = [d for d in range(len(ls)) if d not in lc and d not in lb]
            rf = [d for d in range(len(rs)) if d not in rc and d not in rb]
            acc = odt = out.aval.dtype
            op = "sum"
            red = [ls[d] for d in lc]
            ll, rl = self.b.layout[lhs.n], self.b.layout[rhs.n]

            def element(o_idx: list[str], r_idx: list[str]) -> str:
                nb = len(lb)
                bi, li, ri = o_idx[:nb], o_idx[nb:nb + len(lf)], o_idx[nb + len(lf):]
                lt = [str(ll.offset)] if ll.offset else []
                lt += [f"{i} * {ll.strides[d]}" for i, d in zip(bi, lb) if ll.strides[d]]
                lt += [f"{i} * {ll.strides[d]}" for i, d in zip(li, lf) if ll.strides[d]]
                lt += [f"{j} * {ll.strides[d]}" for j, d in zip(r_idx, lc) if ll.strides[d]]
                rt = [str(rl.offset)] if rl.offset else []
                rt += [f"{i} * {rl.strides[d]}" for i, d in zip(bi, rb) if rl.strides[d]]
                rt += [f"{i} * {rl.strides[d]}" for i, d in zip(ri, rf) if rl.strides[d]]
                rt += [f"{j} * {rl.strides[d]}" for j, d in zip(r_idx, rc) if rl.strides[d]]
                a = C.load(lhs.aval.dtype, self.ptr[ll.base], " + ".join(lt) or "0")
                b = C.load(rhs.aval.dtype, self.ptr[rl.base], " + ".join(rt) or "0")
                return f"({a}) * ({b})"
        n_red = math.prod(red)
        ct = C.compute_ctype(acc)
        comb, init = _REDUCE[op][0], neutral(op, acc)
        if acc.kind in "iub" and op in ("max", "min"):
            comb = "max({a}, {b})" if op == "max" else "min({a}, {b})"
        self.helpers.update((h, ct) for h in _HELPER.findall(comb))
        comb = comb.replace("{T}", ct)
        parts = 1
        if self.group > 1 and 2 * n_out <= self.group and n_red > 1:
            parts = min(self.group // n_out, 1 << (n_red - 1).bit_length())
            parts = 1 << (parts.bit_length() - 1)
        o_idx = [f"o{d}" for d in range(len(oshape))]
        r_idx = [f"j{d}" for d in range(len(red))]
        lines: list[str] = []
        target = self.ptr[out.n]
        if self.group == 1 and n_out >= 2 * _UNROLL and n_red >= 4:
            # one work-item: _UNROLL outputs at a time, so the walk carries that many
            # independent accumulator chains (one chain waits an add's latency per element)
            lines += _unrolled(n_out, oshape, tuple(red), ct, init, comb, element,
                               lambda v, o: C.store(odt, target, o, C.convert(
                                   v, acc, odt, to_storage=True)))
            n_done = n_out - n_out % _UNROLL
            if n_done == n_out:
                self.all_dtypes += [acc, odt]
                return lines
            lines.append(f"  for (int o = {n_done}; o < {n_out}; o += 1) {{")
            start, step = "0", "1"
        elif parts == 1:
            lines.append(f"  for (int o = lid; o < {n_out}; o += {self.group}) {{")
            start, step = "0", "1"
        else:
            lines += ["  {", f"    const int o = lid / {parts}, part = lid % {parts};",
                      f"    {ct} acc = {init};", f"    if (o < {n_out}) {{"]
            start, step = "part", str(parts)
        lines += _decompose("o", o_idx, oshape)
        if parts == 1:
            lines.append(f"    {ct} acc = {init};")
        lines.append(f"    for (int r = {start}; r < {n_red}; r += {step}) {{")
        lines += ["  " + s for s in _decompose("r", r_idx, tuple(red))]
        lines.append(f"      acc = {comb.format(a='acc', b=element(o_idx, r_idx))};")
        lines.append("    }")
        store = C.store(odt, target, "o", C.convert("acc", acc, odt, to_storage=True))
        if parts == 1:
            lines += [f"    {store}", "  }"]
        else:
            self.local_types.add(ct)
            lines += ["    }", f"    red_{ct}[lid] = acc;", "    barrier(CLK_LOCAL_MEM_FENCE);",
                      f"    if (o < {n_out} && part == 0) {{",
                      f"      for (int q = 1; q < {parts}; ++q) "
                      f"acc = {comb.format(a='acc', b=f'red_{ct}[lid + q]')};",
                      f"      {store}", "    }", "  }"]
        self.all_dtypes += [acc, odt]
        return lines


def _unrolled(n_out: int, oshape: tuple[int, ...], red: tuple[int, ...], ct: str,
              init: str, comb: str, element: Any, store: Any) -> list[str]:
    """The outputs ``[0, n_out - n_out % _UNROLL)`` of a reduction or product on one
    work-item, ``_UNROLL`` at a time: each output's index and accumulator before the walk,
    then one walk over the reduced range updating all of them."""
    n_done = n_out - n_out % _UNROLL
    lines = [f"  for (int o = 0; o < {n_done}; o += {_UNROLL}) {{"]
    names = []
    for u in range(_UNROLL):
        nm = [f"o{d}_{u}" for d in range(len(oshape))]
        names.append(nm)
        lines += _decompose(f"(o + {u})", nm, oshape, tag=f"o{u}")
        lines.append(f"    {ct} acc{u} = {init};")
    r_idx = [f"j{d}" for d in range(len(red))]
    lines.append(f"    for (int r = 0; r < {math.prod(red)}; ++r) {{")
    lines += ["  " + x for x in _decompose("r", r_idx, red)]
    for u in range(_UNROLL):
        lines.append(f"      acc{u} = {comb.format(a=f'acc{u}', b=element(names[u], r_idx))};")
    lines.append("    }")
    lines += [f"    {store(f'acc{u}', f'o + {u}')}" for u in range(_UNROLL)]
    lines.append("  }")
    return lines


def _decompose(var: str, names: list[str], shape: tuple[int, ...],
               tag: str = "") -> list[str]:
    """``const int name_d`` lines: C-order multi-index of flat ``var`` over ``shape``."""
    if not names:
        return []
    if len(names) == 1:
        return [f"    const int {names[0]} = {var};"]
    rem = f"rem_{tag or var}"
    lines = [f"    int {rem} = {var};"]
    for d in reversed(range(len(shape))):
        lines.append(f"    const int {names[d]} = " + (
            f"{rem};" if d == 0 else f"{rem} % {shape[d]}; {rem} /= {shape[d]};"))
    return lines
