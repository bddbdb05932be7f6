"""Partition a staged Graph into fusion groups (XLA's loop and input fusion, greedily).

Walking the equations in order:

- An elementwise equation (an op-table primitive, ``convert_element_type``, ``copy``, ``full``)
  joins an open elementwise group of its own output shape that produces one of its operands,
  else opens a new group (loop fusion). Broadcast operands are read in place with stride 0.
- A ``reduce`` takes the open elementwise group producing its operand as its body (input
  fusion); further reductions of the same body over the same axes join it (multi-output:
  ``mean`` and ``mean`` of squares in one pass).
- Views (``reshape``, ``transpose``, ``broadcast_to``, ``slice``, ``stop_gradient``) are
  metadata on a materialised value; every other primitive (``dot_general``, sort, fft, linalg,
  gather, scans, control flow, custom kernels) is an opaque step run by its eager kernels.
- A value of a group that anything outside it uses is materialised (the kernel writes it), and
  the group is *sealed*: nothing joins it afterwards. Sealing is what keeps the step graph
  acyclic: a group can only grow while no other step depends on it.
- GEMM epilogues: an elementwise group of a ``dot_general``'s output shape that is the only
  reader of the product (directly, or through a transpose of its last two dims) takes the
  product in: one ``gemm`` group, whose kernel evaluates the group on each product value before
  storing it (``executable`` falls back to two steps where the planned launch cannot take it).

- Row fusion (``rows.fuse_rows``): a reduction over the trailing axes and the groups on the
  same rows (further reductions, elementwise groups of the full or a per-row shape, per-row
  views) become one ``rows`` group: one kernel walking each row.
- Reduction epilogues: a connected part of an elementwise group of a reduction's output shape
  that reads the results of one ``reduce`` group (and otherwise values computed before it)
  joins that group as its ``post`` program, evaluated on each output where the reduction
  finishes it: a bias gradient and the optimizer's update of the bias in one kernel.

The result is a list of ``Group``s in a dependency order; ``executable`` turns each into a
launchable step.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from clnp._kernels import op_table as _ops
from clnp._routines.custom_kernels import fusable_op

from .._ir import Eqn, Graph, Lit, Var
from .rows import fuse_rows

VIEWS = frozenset({"reshape", "transpose", "broadcast_to", "slice", "stop_gradient"})


def is_elementwise(e: Eqn) -> bool:
    name = e.prim.name
    if name in _ops.OPS and "dtype" in e.params:
        return True
    if name == "full":
        return True
    if name == "elementwise_kernel":     # a user's ElementwiseKernel of the fusable form
        return fusable_op(e.params) is not None
    return name in ("convert_element_type", "copy") and len(e.inputs) == 1


def op_signature(e: Eqn) -> tuple[str, tuple, Any, Any]:
    """``(op, arg_dtypes, dtype, out_dtype)`` of an op-table or fusable user-kernel equation:
    the fields of its ``Instr``."""
    p = e.params
    if e.prim.name == "elementwise_kernel":
        d = p["out_dtypes"][0]
        return fusable_op(p), tuple(p["in_dtypes"]), d, d
    return e.prim.name, tuple(p["arg_dtypes"]), p["dtype"], p["out_dtype"]


def instruction_of(e: Eqn) -> tuple[str, tuple, tuple, Any, Any]:
    """``(op, operands, arg_dtypes, dtype, out_dtype)`` of an elementwise equation as one
    ``Instr`` of a fused program: operands are the equation's Vars and Lits (a ``full``'s
    value as a Lit). Every fused kernel (the groups' and the whole-step kernel's) translates
    equations here, so each op's C comes from the op table the same way.

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> from clnp_grad._jit.fusion import instruction_of
    >>> g = cg.make_ir(lambda x: x ** 2)(clnp.asarray([1.0, 2.0], dtype=clnp.float32))
    >>> op, args, _, _, _ = instruction_of(g.eqns[0])
    >>> op, len(args)            # x ** 2 as x * x, as NumPy rounds it
    ('multiply', 2)
    """
    name = e.prim.name
    if name == "full":
        d = e.params["dtype"]
        return "copy", (Lit(e.params["value"]),), (d,), d, d
    if name in ("convert_element_type", "copy"):
        src = e.inputs[0]
        d = e.params.get("dtype", src.aval.dtype)
        return "copy", (src,), (d,), d, d
    op, arg_dtypes, dtype, out_dtype = op_signature(e)
    x = e.inputs[0]
    if name == "pow" and isinstance(e.inputs[1], Lit) and e.inputs[1].value == 2 and \
            not isinstance(e.inputs[1].value, bool) and isinstance(x, Var):
        # x ** 2 as x * x, as NumPy computes it: exact rounding, and far cheaper than the
        # pow builtin (PoCL has no vector pow: a layer norm with ** 2 ran 40x slower than
        # with x * x)
        d0 = arg_dtypes[0]
        return "multiply", (x, x), (d0, d0), e.params["dtype"], e.params["out_dtype"]
    return op, tuple(e.inputs), tuple(arg_dtypes), dtype, out_dtype


@dataclass
class Group:
    """One step of the executable. ``kind``: ``ew`` (fused elementwise), ``reduce`` (fused
    reduction with an elementwise body), ``rows`` (reductions over trailing axes and the
    elementwise code around them, one kernel walking each row: see ``rows``), ``gemm`` (a
    product with the group ``eqns`` as its epilogue; ``gemm`` holds the ``dot_general`` and,
    when the group reads the product transposed, the ``transpose``), ``view`` or ``opaque``
    (one equation each)."""
    kind: str
    eqns: list[Eqn] = field(default_factory=list)
    shape: tuple[int, ...] = ()
    axes: tuple[int, ...] = ()          # reduce: reduced axes of ``shape``
    reds: list[Eqn] = field(default_factory=list)
    sealed: bool = False
    members: set[int] = field(default_factory=set)     # Var ids computed here
    escapes: set[int] = field(default_factory=set)     # members others read (materialised)
    index: int = 0
    gemm: list[Eqn] = field(default_factory=list)
    # rows (``rows.fuse_rows``): the absorbed groups in a dependency order, the absorbed
    # views' equations, and each view output's Var id -> the value it aliases
    sub: list[Group] = field(default_factory=list)
    views: list[Eqn] = field(default_factory=list)
    alias: dict[int, Any] = field(default_factory=dict)
    # rows: reduction results over more axes than the rows (Var id -> the kept axes that a
    # reduction of the per-row parts finishes)
    outer: dict[int, tuple[int, ...]] = field(default_factory=dict)
    # reduce: elementwise equations on the reductions' results (their output shape), in
    # order: evaluated where each output is finished
    post: list[Eqn] = field(default_factory=list)


def partition(g: Graph) -> list[Group]:
    groups: list[Group] = []
    owner: dict[int, Group] = {}        # Var id -> group computing it
    open_ew: dict[tuple[int, ...], Group] = {}

    def new(kind: str, **kw: Any) -> Group:
        grp = Group(kind, index=len(groups), **kw)
        groups.append(grp)
        return grp

    def use_outside(x: Any, user: Group | None) -> None:
        """``x`` is read by ``user`` (None: a graph output): materialise it if another group
        computes it, and seal that group."""
        if not isinstance(x, Var):
            return
        grp = owner.get(x.n)
        if grp is not None and grp is not user:
            grp.escapes.add(x.n)
            grp.sealed = True

    for e in g.eqns:
        name = e.prim.name
        out = e.out_binders[0] if e.out_binders else None
        if is_elementwise(e):
            # at most one open elementwise group per shape: an equation joins it whether or
            # not it reads its values (independent same-shape chains share one kernel)
            shape = out.aval.shape
            target = open_ew.get(shape)
            if target is None or target.sealed or target.kind != "ew":
                target = open_ew[shape] = new("ew", shape=shape)
            for x in e.inputs:
                use_outside(x, target)
            target.eqns.append(e)
            target.members.add(out.n)
            owner[out.n] = target
        elif name == "reduce" and isinstance(e.inputs[0], Var):
            x = e.inputs[0]
            src = owner.get(x.n)
            axes = tuple(e.params["axes"])
            if src is not None and not src.sealed and src.shape == x.aval.shape and (
                    src.kind == "ew" or (src.kind == "reduce" and src.axes == axes)):
                src.kind, src.axes = "reduce", axes
                target = src
            else:
                use_outside(x, None)
                target = new("reduce", shape=x.aval.shape, axes=axes)
            target.reds.append(e)
            owner[out.n] = target
            target.members.add(out.n)
            target.escapes.add(out.n)      # a reduction result is always stored
        else:
            kind = "view" if name in VIEWS else "opaque"
            grp = new(kind, eqns=[e])
            for x in e.inputs:
                use_outside(x, grp)
            for b in e.out_binders:
                owner[b.n] = grp
                grp.members.add(b.n)
                grp.escapes.add(b.n)
            grp.sealed = True
    for x in g.outs:
        use_outside(x, None)
    outs = {x.n for x in g.outs if isinstance(x, Var)}
    groups = _inline_small(groups, owner, outs)
    groups = _gemm_epilogues(groups, owner, outs)
    groups = fuse_rows(groups, owner, outs)
    groups = _reduce_epilogues(groups, owner, outs)
    groups = _horizontal_reductions(groups, owner)
    return _order(groups, owner)


# Horizontal reductions: members reduce at most this many elements each
HORIZONTAL_MAX = 1 << 18


def _horizontal_reductions(groups: list[Group], owner: dict[int, Group]) -> list[Group]:
    """Join reductions to one value each (every axis reduced, one reduction, nothing else
    stored) that do not depend on each other into ``hreduce`` groups, built as one kernel
    where their layouts agree (``executable._build_hreduce``): a gradient-norm clip's sums of
    squares over each parameter, or the finiteness checks of each gradient, one launch
    instead of one per parameter (XLA's horizontal fusion does the same). A joined group runs
    where its last member could, so the members' inputs live until then; these are
    reductions of a step's gradients or parameters, which live that long anyway."""
    cands = [g for g in groups if g.kind == "reduce" and len(g.reds) == 1 and not g.post and
             len(g.axes) == len(g.shape) and g.escapes == {g.reds[0].out_binders[0].n} and
             0 < math.prod(g.shape) <= HORIZONTAL_MAX]
    if len(cands) < 2:
        return groups
    deps = _group_deps(groups, owner)
    sets: list[list[Group]] = []
    for c in cands:
        for s in sets:
            # s is one node of deps already: joining c must not make a cycle through it
            head = s[0].index
            if not _reaches(deps, c.index, head) and not _reaches(deps, head, c.index):
                s.append(c)
                deps[head] |= deps.pop(c.index)
                for d in deps.values():
                    if c.index in d:
                        d.discard(c.index)
                        d.add(head)
                deps[head].discard(head)
                break
        else:
            sets.append([c])
    gone: set[int] = set()
    for s in sets:
        if len(s) < 2:
            continue
        h = Group("hreduce", eqns=[e for m in s for e in m.eqns],
                  reds=[e for m in s for e in m.reds],
                  members=set().union(*(m.members for m in s)),
                  escapes=set().union(*(m.escapes for m in s)), index=s[0].index, sub=s,
                  sealed=True)
        for n in h.members:
            owner[n] = h
        gone |= {m.index for m in s[1:]}
        groups[next(i for i, g in enumerate(groups) if g is s[0])] = h
    return [g for g in groups if g.index not in gone]


def _broadcasts_to(small: tuple[int, ...], big: tuple[int, ...]) -> bool:
    if len(small) > len(big):
        return False
    return all(a in (1, b) for a, b in zip(small[::-1], big[::-1]))


def _inline_small(groups: list[Group], owner: dict[int, Group], outs: set[int]
                  ) -> list[Group]:
    """Recompute small elementwise groups inside their one consumer (consumer fusion).

    A per-row value (layernorm's ``mean / n``, ``rsqrt(var + eps)``) is an elementwise group
    of its own shape; when every value it materialises is read only by elementwise equations
    of one larger group whose shape it broadcasts to, it is cheaper to evaluate it again at
    each element of that group (its operands are read with stride 0) than to launch a kernel
    and store it. This is what brings softmax, layernorm and logsumexp to three kernels."""
    readers: dict[int, set[int]] = {}
    by_index = {grp.index: grp for grp in groups}
    for grp in groups:
        for e in grp.eqns:
            for x in e.inputs:
                if isinstance(x, Var) and owner.get(x.n) is not grp:
                    readers.setdefault(x.n, set()).add(grp.index)
        for e in grp.reds:     # a reduction reading another group's value: not inlinable
            for x in e.inputs:
                if isinstance(x, Var) and owner.get(x.n) is not grp:
                    readers.setdefault(x.n, set()).add(-1)
    merged: set[int] = set()
    for h in groups:
        if h.kind != "ew" or not h.escapes or h.escapes & outs:
            continue
        users: set[int] = set()
        for n in h.escapes:
            users |= readers.get(n, {-1})
        if len(users) != 1 or -1 in users:
            continue
        gi = next(iter(users))
        tgt = by_index[gi]
        if tgt.kind not in ("ew", "reduce") or gi in merged or tgt.index < h.index or \
                not _broadcasts_to(h.shape, tgt.shape) or math.prod(h.shape) > \
                math.prod(tgt.shape):
            continue
        tgt.eqns = h.eqns + tgt.eqns
        tgt.members |= h.members
        for n in h.members:
            owner[n] = tgt
        merged.add(h.index)
    return [grp for grp in groups if grp.index not in merged]


def _group_deps(groups: list[Group], owner: dict[int, Group]) -> dict[int, set[int]]:
    """Each group's index -> the indices of the groups computing values it reads."""
    return {grp.index: {owner[x.n].index for e in grp.gemm + grp.eqns + grp.reds + grp.post
                        for x in e.inputs if isinstance(x, Var) and x.n in owner and
                        owner[x.n] is not grp} for grp in groups}


def _reaches(deps: dict[int, set[int]], src: int, dst: int) -> bool:
    """Whether group ``src`` depends on group ``dst`` (transitively) under ``deps``."""
    stack, seen = [src], set()
    while stack:
        i = stack.pop()
        if i == dst:
            return True
        if i not in seen:
            seen.add(i)
            stack.extend(deps.get(i, ()))
    return False


def _is_matrix_product(e: Eqn, transposed: bool = False) -> bool:
    """Whether ``e`` is a ``dot_general`` of two arrays with at least one free dim in all: a
    matrix product, batched or not, a matrix-vector or vector-matrix product (M or N is 1:
    the gradient of a linear model's weights, ``g @ X``, with the SGD update as its
    epilogue), or a product whose free dims the GEMM merges (``(B, T, C) @ (C, D)``: B and
    T are its M; ``epilogue_plan`` refuses dims that do not merge). A dot of two vectors has
    no free dim and stays a product of its own. Read ``transposed`` (its last two dims
    swapped), it must have at most one free dim on each side: then the swap is the product
    of the swapped operands."""
    if e.prim.name != "dot_general" or not all(isinstance(a, Var) for a in e.inputs):
        return False
    (lc, rc), (lb, rb) = e.params["dimension_numbers"]
    lhs, rhs = e.inputs
    free = (len(lhs.aval.shape) - len(lc) - len(lb), len(rhs.aval.shape) - len(rc) - len(rb))
    return sum(free) >= 1 and (max(free) <= 1 or not transposed)


def _gemm_epilogues(groups: list[Group], owner: dict[int, Group], outs: set[int]
                    ) -> list[Group]:
    """Give each ``dot_general`` whose only reader is one elementwise group of its output's
    shape that group as its epilogue (see the module docstring). A product read through a
    transpose of its last two dims is the product of the swapped operands, read directly."""
    readers: dict[int, set[int]] = {}
    for grp in groups:
        for e in grp.eqns + grp.reds:
            for x in e.inputs:
                if isinstance(x, Var) and owner.get(x.n) is not grp:
                    readers.setdefault(x.n, set()).add(grp.index)
    for n in outs:
        readers.setdefault(n, set()).add(-1)
    deps = _group_deps(groups, owner)

    def reaches(src: int, dst: int) -> bool:
        return _reaches(deps, src, dst)

    merged: set[int] = set()
    for h in groups:
        if h.kind != "ew" or not h.escapes:
            continue
        for x in [x for e in h.eqns for x in e.inputs]:
            if not isinstance(x, Var) or x.aval.shape != h.shape or \
                    x.aval.dtype.kind != "f" or readers.get(x.n) != {h.index}:
                continue
            src = owner.get(x.n)
            if src is None or src.index in merged or src.kind not in ("opaque", "view"):
                continue
            chain = [src]
            e = src.eqns[0]
            if e.prim.name == "transpose":
                y = e.inputs[0]
                prod = owner.get(y.n) if isinstance(y, Var) else None
                perm = tuple(e.params["perm"])
                nd = len(perm)
                if prod is None or prod.kind != "opaque" or prod.index in merged or \
                        readers.get(y.n) != {src.index} or nd < 2 or \
                        perm != tuple(range(nd - 2)) + (nd - 1, nd - 2):
                    continue
                chain.insert(0, prod)
                e = prod.eqns[0]
            if not _is_matrix_product(e, transposed=len(chain) == 2) or \
                    e.out_binders[0].aval.dtype != x.aval.dtype or \
                    any(isinstance(a, Var) and a.aval.dtype != x.aval.dtype
                        for a in e.inputs):
                continue
            if any(reaches(d, h.index) for c in chain for d in deps[c.index]):
                continue        # the product needs this group's values: a cycle
            h.kind = "gemm"
            h.gemm = [c.eqns[0] for c in chain]
            gone = {c.index for c in chain}
            for c in chain:
                merged.add(c.index)
                for n in c.members:
                    owner[n] = h
                    h.members.add(n)
                deps[h.index] |= deps[c.index]
            for d in deps.values():     # whatever depended on the product depends on h
                if d & gone:
                    d -= gone
                    d.add(h.index)
            deps[h.index] -= gone | {h.index}
            break
    return [grp for grp in groups if grp.index not in merged]


def _components(eqns: list[Eqn]) -> list[list[Eqn]]:
    """``eqns`` split into the parts that share no value (each in the original order)."""
    parent = list(range(len(eqns)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i
    made = {b.n: i for i, e in enumerate(eqns) for b in e.out_binders}
    for i, e in enumerate(eqns):
        for x in e.inputs:
            j = made.get(x.n) if isinstance(x, Var) else None
            if j is not None:
                parent[find(i)] = find(j)
    parts: dict[int, list[Eqn]] = {}
    for i, e in enumerate(eqns):
        parts.setdefault(find(i), []).append(e)
    return list(parts.values())


def _reduce_epilogues(groups: list[Group], owner: dict[int, Group], outs: set[int]
                      ) -> list[Group]:
    """Move the parts of elementwise groups that finish one reduction's results into that
    reduction's group as its ``post`` program (module docstring)."""
    deps = _group_deps(groups, owner)

    def reaches(src: int, dst: int) -> bool:
        return _reaches(deps, src, dst)

    gone: set[int] = set()
    for h in groups:
        if h.kind != "ew":
            continue
        for comp in _components(h.eqns):
            made = {b.n for e in comp for b in e.out_binders}
            srcs = list({owner[x.n].index: owner[x.n] for e in comp for x in e.inputs
                         if isinstance(x, Var) and x.n not in made and x.n in owner}.values())
            reds = [g for g in srcs if g.kind == "reduce"]
            if len(reds) != 1:
                continue
            r = reds[0]
            results = {e.out_binders[0].n for e in r.reds}
            read = {x.n for e in comp for x in e.inputs if isinstance(x, Var) and
                    owner.get(x.n) is r}
            if not r.reds or not read <= results or \
                    r.reds[0].out_binders[0].aval.shape != h.shape or \
                    any(reaches(g.index, r.index) for g in srcs if g is not r):
                continue
            r.post += comp
            for e in comp:
                h.eqns.remove(e)
                for b in e.out_binders:
                    owner[b.n] = r
                    r.members.add(b.n)
                    h.members.discard(b.n)
                    if b.n in h.escapes:
                        h.escapes.discard(b.n)
                        r.escapes.add(b.n)
            deps[r.index] |= {g.index for g in srcs if g is not r}
        if not h.eqns:
            gone.add(h.index)
            for d in deps.values():
                d.discard(h.index)
    return [grp for grp in groups if grp.index not in gone]


def _order(groups: list[Group], owner: dict[int, Group]) -> list[Group]:
    """Groups in a dependency order (Kahn's algorithm, ties broken by creation order)."""
    deps: dict[int, set[int]] = {grp.index: set() for grp in groups}
    for grp in groups:
        for e in grp.gemm + grp.eqns + grp.reds + grp.post:
            for x in e.inputs:
                if isinstance(x, Var):
                    src = owner.get(x.n)
                    if src is not None and src is not grp:
                        deps[grp.index].add(src.index)
    done: set[int] = set()
    order: list[Group] = []
    pending = list(groups)
    while pending:
        for i, grp in enumerate(pending):
            if deps[grp.index] <= done:
                order.append(grp)
                done.add(grp.index)
                del pending[i]
                break
        else:   # pragma: no cover - sealing rules out cycles
            raise RuntimeError("jit: fusion produced a dependency cycle")
    return order


def external_inputs(grp: Group) -> list[Any]:
    """Operands a group reads from outside (Vars, in first-use order, and Lits)."""
    seen: set[Any] = set()
    out: list[Any] = []
    for e in grp.eqns + grp.reds + grp.post:
        for x in e.inputs:
            if isinstance(x, Var):
                if x.n in grp.members or x.n in seen:
                    continue
                seen.add(x.n)
            out.append(x)
    return out
