"""Row fusion: reductions over trailing axes and the elementwise code around them, in one group.

After ``fusion.partition`` has made its groups, a reduction group over the trailing axes of its
shape ``S`` (the *rows*) absorbs, one by one, the groups that read its values and live on the
same rows:

- reductions of ``S`` over the same axes (softmax's sum of ``exp(x - max)``, layernorm's sum of
  squares of ``x - mean``);
- elementwise groups of shape ``S`` (softmax's division, layernorm's normalisation);
- elementwise groups of a *per-row* shape: ``S`` without its reduced axes, or with them of
  size 1 (``mean / n``, ``log(sum) + max``);
- views that keep a per-row value per-row (``reshape`` between ``(n,)`` and ``(n, 1)``,
  ``broadcast_to`` along the rows, ``stop_gradient``): inside the group they are aliases.

The result is one ``rows`` group whose kernel walks each row several times in one launch
(``rowcodegen``): one pass per level of dependent reductions, then the stores. A value of the
group that another step reads (or a graph output) is stored on the way; nothing else is.

Legality, checked for every absorbed group: every operand it reads is broadcast onto ``S`` by
the usual rules, except that a value of the kept shape ``K`` (no reduced axes) is read only by
equations of that shape, per row (a full-shape equation reads per-row values in their keepdims
form; the executable reads an outside array of shape ``K`` per row); and no outside step both
depends on the row group and feeds it (that would be a cycle between steps).

A reduction over the rows and some kept axes too (a loss ``sum(f(x) * w)``) joins as each row's
part, reduced in the kernel, and a reduction of the parts after it; its result is not
available inside the group. A reduction of per-row values over kept axes only (a loss's mean
over rows) does not join: it is a fused reduction of its own over the per-row values the
kernel stores, which takes its consumers as its epilogue (``fusion._reduce_epilogues``).

The absorbed groups are kept (``Group.sub``, in a dependency order): the executable falls back
to them where the row kernel does not apply (empty shapes, complex values, a few long
rows that the reduction would split across work-items).
"""
from __future__ import annotations

from typing import Any

from .._ir import Eqn, Var

ROW_OPS = frozenset({"sum", "prod", "max", "min"})
_ALIAS_VIEWS = frozenset({"reshape", "broadcast_to", "stop_gradient"})


def _trailing(shape: tuple[int, ...], axes: tuple[int, ...]) -> bool:
    nd = len(shape)
    return bool(axes) and tuple(sorted(axes)) == tuple(range(nd - len(axes), nd)) and \
        len(axes) < nd


class _Rows:
    """The row space of a seed reduction: full shape ``S``, kept shape ``K``."""

    def __init__(self, shape: tuple[int, ...], axes: tuple[int, ...]):
        self.S = shape
        self.nk = len(shape) - len(axes)
        self.K = shape[:self.nk]
        self.aligned = self.K + (1,) * len(axes)

    def per_row(self, shape: tuple[int, ...]) -> bool:
        return shape in (self.K, self.aligned)

    def unaligned(self, shape: tuple[int, ...]) -> bool:
        """Per-row without the reduced axes, and not the same as the keepdims form."""
        return shape == self.K and shape != self.aligned and not _scalar_like(shape)


def _scalar_like(shape: tuple[int, ...]) -> bool:
    return all(d == 1 for d in shape)


def fuse_rows(groups: list[Any], owner: dict[int, Any], outs: set[int]) -> list[Any]:
    """Merge row-fusable groups (module docstring); ``owner`` is updated for the merged
    members. Returns the new group list (not yet ordered)."""
    from .fusion import Group

    readers: dict[int, set[int]] = {}
    deps: dict[int, set[int]] = {}
    for grp in groups:
        d = deps.setdefault(grp.index, set())
        for e in grp.gemm + grp.eqns + grp.reds:
            for x in e.inputs:
                if isinstance(x, Var) and x.n in owner and owner[x.n] is not grp:
                    readers.setdefault(x.n, set()).add(grp.index)
                    d.add(owner[x.n].index)
    for n in outs:
        readers.setdefault(n, set()).add(-1)
    comp: dict[int, set[int]] = {grp.index: {grp.index} for grp in groups}

    def reaches(starts: set[int], targets: set[int]) -> bool:
        """Whether a group of ``starts`` depends (transitively, through merged components)
        on a group of ``targets``."""
        stack, seen = list(starts), set()
        while stack:
            i = stack.pop()
            if i in seen:
                continue
            seen.add(i)
            if i in targets:
                return True
            for j in comp[i]:
                seen.add(j)
                if j in targets:
                    return True
                stack.extend(deps.get(j, ()))
        return False

    merged: set[int] = set()
    result: list[Any] = []
    next_index = max((grp.index for grp in groups), default=-1) + 1
    for seed in groups:
        if seed.index in merged or seed.kind != "reduce" or not _trailing(seed.shape, seed.axes) \
                or any(r.params["op"] not in ROW_OPS for r in seed.reds):
            continue
        rows = _Rows(seed.shape, seed.axes)
        if any(rows.unaligned(tuple(x.aval.shape)) and not
               rows.unaligned(tuple(e.out_binders[0].aval.shape))
               for e in seed.eqns for x in e.inputs if isinstance(x, Var)):
            continue      # a value of the kept shape read along the rows: no per-row reads
        members = set(seed.members)
        read_by = _through_views(
            {x.n for e in seed.eqns + seed.reds for x in e.inputs if isinstance(x, Var)}, owner)
        parts = [seed]
        part_ix = {seed.index}
        outer: dict[int, tuple[int, ...]] = {}     # results finished by a later reduction
        changed = True
        while changed:
            changed = False
            for h in groups:
                if h.index in merged or h.index in part_ix:
                    continue
                reads = {x.n for e in h.gemm + h.eqns + h.reds for x in e.inputs
                         if isinstance(x, Var)}
                # a consumer of the row group's values, or a producer of values it reads
                if not (reads & members or h.members & read_by) or reads & outer.keys() or \
                        not _absorbable(h, rows, seed.axes, members):
                    continue
                wider = h.kind == "reduce" and (h.shape != rows.S or
                                                tuple(h.axes) != tuple(seed.axes))
                if wider and {r.out_binders[0].n for r in h.reds} & read_by:
                    continue      # the group would need the finished result inside
                # views between a producer and the group come with it
                take, have = [h], members | h.members
                grown = True
                while grown:
                    grown = False
                    for v in groups:
                        if v.kind == "view" and v.index not in merged and \
                                v.index not in part_ix and v not in take and \
                                getattr(v.eqns[0].inputs[0], "n", None) not in outer and \
                                v.members & read_by and _absorbable(v, rows, seed.axes, have):
                            take.append(v)
                            have |= v.members
                            grown = True
                merged_ix = part_ix | {t.index for t in take}
                outside = set()
                for i in merged_ix:
                    for j in deps[i]:
                        if j not in merged_ix:
                            outside |= comp[j]
                if outside and reaches(outside - merged_ix, merged_ix):
                    continue      # an outside step both after and before the group: a cycle
                read_by |= _through_views(reads, owner)
                if wider:
                    rest = tuple(a for a in h.axes if a < rows.nk)
                    outer.update({r.out_binders[0].n: rest for r in h.reds})
                parts += take
                part_ix |= merged_ix
                members |= have
                changed = True
        if len(parts) == 1:
            continue
        escapes = {n for n in members if readers.get(n, set()) - part_ix or n in outs}
        shapes = {b.n: tuple(b.aval.shape) for p in parts for e in p.eqns + p.reds
                  for b in e.out_binders}
        if any(shapes[n] != rows.S and not rows.per_row(shapes[n]) and n not in outer
               for n in escapes):
            continue      # a value of another shape (inlined into the seed) is stored
        grp = Group("rows", shape=seed.shape, axes=tuple(seed.axes), index=next_index)
        next_index += 1
        grp.sub = _dependency_order(parts, owner)
        for p in parts:
            merged.add(p.index)
            for n in p.members:
                owner[n] = grp
        grp.members = members
        alias: dict[int, Any] = {}
        for p in grp.sub:
            if p.kind == "view":
                e = p.eqns[0]
                grp.views.append(e)
                alias[e.out_binders[0].n] = _root(e.inputs[0], alias)
        for p in grp.sub:
            if p.kind == "view":
                continue
            grp.eqns += [_substituted(e, alias) for e in p.eqns]
            grp.reds += [_substituted(e, alias) for e in p.reds]
        grp.escapes = escapes
        grp.alias = alias
        grp.outer = outer
        deps[grp.index] = set().union(*(deps[i] for i in part_ix)) - part_ix
        comp[grp.index] = set(part_ix)
        for i in part_ix:
            comp[i] = set(part_ix) | {grp.index}
        result.append(grp)
    return [grp for grp in groups if grp.index not in merged] + result


def _through_views(ns: set[int], owner: dict[int, Any]) -> set[int]:
    """``ns`` and the values the views among them are views of (a producer reached through
    a view is absorbed first, then the view)."""
    out, stack = set(), list(ns)
    while stack:
        n = stack.pop()
        if n in out:
            continue
        out.add(n)
        grp = owner.get(n)
        if grp is not None and grp.kind == "view":
            stack += [x.n for x in grp.eqns[0].inputs if isinstance(x, Var)]
    return out


def _root(x: Any, alias: dict[int, Any]) -> Any:
    while isinstance(x, Var) and x.n in alias:
        x = alias[x.n]
    return x


def _substituted(e: Eqn, alias: dict[int, Any]) -> Eqn:
    ins = [_root(x, alias) for x in e.inputs]
    if all(a is b for a, b in zip(ins, e.inputs)):
        return e
    return Eqn(e.prim, ins, e.params, e.out_binders)


def _absorbable(h: Any, rows: _Rows, axes: tuple[int, ...], members: set[int]) -> bool:
    from .fusion import is_elementwise

    if h.kind == "reduce":
        # the same rows, or a reduction over them and some kept axes too (a loss): each row's
        # part is reduced in the kernel, the parts by a reduction after it; or a reduction of
        # per-row values over kept axes: the values are stored, then reduced
        if any(r.params["op"] not in ROW_OPS for r in h.reds):
            return False
        if h.shape == rows.S:
            if not set(axes) <= set(h.axes):
                return False
        else:
            # a reduction of per-row values over kept axes (a loss's mean over rows) stays a
            # fused reduction of its own: it reads the per-row values the kernel stores, and
            # takes its consumers as its epilogue (fusion._reduce_epilogues), where the
            # reduction after the row kernel and its consumers were two kernels
            return False
        return all(_reads_ok(e, rows, members | h.members) for e in h.eqns)
    if h.kind == "ew":
        if h.shape != rows.S and not rows.per_row(h.shape):
            return False
        return all(is_elementwise(e) and _reads_ok(e, rows, members | h.members)
                   for e in h.eqns)
    if h.kind == "view":
        e = h.eqns[0]
        x = e.inputs[0]
        if e.prim.name not in _ALIAS_VIEWS or not isinstance(x, Var) or x.n not in members:
            return False
        si, so = tuple(x.aval.shape), tuple(e.out_binders[0].aval.shape)
        if e.prim.name == "stop_gradient":
            return True
        if e.prim.name == "reshape":
            return rows.per_row(si) and rows.per_row(so)
        # broadcast_to: a keepdims per-row value along its rows
        return (si == rows.aligned or _scalar_like(si)) and \
            (so == rows.S or so == rows.aligned) and len(si) <= len(so)
    return False


def _reads_ok(e: Eqn, rows: _Rows, members: set[int]) -> bool:
    """Whether equation ``e``'s operands broadcast onto the row space as their own
    broadcasting says (the module docstring's rule)."""
    out = tuple(e.out_binders[0].aval.shape)
    if out != rows.S and not rows.per_row(out):
        return False
    for x in e.inputs:
        if not isinstance(x, Var):
            continue
        sx = tuple(x.aval.shape)
        if _scalar_like(sx):
            continue
        if rows.unaligned(out):
            if sx != rows.K:
                return False
        elif rows.unaligned(sx):
            return False          # read along the row by broadcasting, not per row
    return True


def _dependency_order(parts: list[Any], owner: dict[int, Any]) -> list[Any]:
    ix = {p.index for p in parts}
    own: dict[int, int] = {}
    for p in parts:
        for n in p.members:
            own[n] = p.index
    deps = {p.index: {own[x.n] for e in p.gemm + p.eqns + p.reds for x in e.inputs
                      if isinstance(x, Var) and x.n in own and own[x.n] != p.index}
            for p in parts}
    order, done, pending = [], set(), list(parts)
    while pending:
        for i, p in enumerate(pending):
            if deps[p.index] <= done:
                order.append(p)
                done.add(p.index)
                del pending[i]
                break
        else:   # pragma: no cover - the parts come from an acyclic step graph
            raise RuntimeError("jit: row fusion found a dependency cycle")
    assert {p.index for p in order} == ix
    return order

