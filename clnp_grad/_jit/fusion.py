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

The result is a list of ``Group``s in a dependency order; ``executable`` turns each into a
launchable step.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from clnp import _ops
from clnp._custom_kernels import fusable_op

from .._ir import Eqn, Graph, Var

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


@dataclass
class Group:
    """One step of the executable. ``kind``: ``ew`` (fused elementwise), ``reduce`` (fused
    reduction with an elementwise body), ``view`` or ``opaque`` (one equation each)."""
    kind: str
    eqns: list[Eqn] = field(default_factory=list)
    shape: tuple[int, ...] = ()
    axes: tuple[int, ...] = ()          # reduce: reduced axes of ``shape``
    reds: list[Eqn] = field(default_factory=list)
    sealed: bool = False
    members: set[int] = field(default_factory=set)     # Var ids computed here
    escapes: set[int] = field(default_factory=set)     # members others read (materialised)
    index: int = 0


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
    return _order(groups, owner)


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


def _order(groups: list[Group], owner: dict[int, Group]) -> list[Group]:
    """Groups in a dependency order (Kahn's algorithm, ties broken by creation order)."""
    deps: dict[int, set[int]] = {grp.index: set() for grp in groups}
    for grp in groups:
        for e in grp.eqns + grp.reds:
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
    for e in grp.eqns + grp.reds:
        for x in e.inputs:
            if isinstance(x, Var):
                if x.n in grp.members or x.n in seen:
                    continue
                seen.add(x.n)
            out.append(x)
    return out
