"""Pytrees: nested containers whose leaves are arrays (or anything that is not a container).

Containers: tuple, list, dict (keys sorted), namedtuple, ``None`` (an empty node), dataclasses
(fields in declaration order; ``metadata={"static": True}`` fields are part of the structure),
and types registered with :func:`register_pytree_node`.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Hashable, Iterable, NamedTuple

__all__ = ["PyTreeDef", "register_pytree_node", "tree_flatten", "tree_unflatten", "tree_map",
           "tree_leaves", "tree_structure"]

_REGISTRY: dict[type, tuple[Callable[[Any], tuple[Iterable[Any], Hashable]],
                            Callable[[Hashable, Iterable[Any]], Any]]] = {}


def register_pytree_node(cls: type, flatten: Callable[[Any], tuple[Iterable[Any], Hashable]],
                         unflatten: Callable[[Hashable, Iterable[Any]], Any]) -> None:
    """Make ``cls`` a pytree node: ``flatten(x) -> (children, aux)`` with hashable ``aux``,
    ``unflatten(aux, children) -> x``."""
    _REGISTRY[cls] = (flatten, unflatten)


class PyTreeDef(NamedTuple):
    """The structure of a pytree: a node type, its hashable auxiliary data and children."""
    kind: Any
    aux: Hashable
    children: tuple["PyTreeDef", ...]

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)

    def __repr__(self) -> str:
        if self.kind == "leaf":
            return "*"
        name = getattr(self.kind, "__name__", str(self.kind))
        return f"{name}({', '.join(map(repr, self.children))})"


_LEAF = PyTreeDef("leaf", None, ())


def _node(x: Any) -> tuple[Any, Hashable, list[Any]] | None:
    """(kind, aux, children) for a container, None for a leaf."""
    t = type(x)
    if x is None:
        return (type(None), None, [])
    if t in _REGISTRY:
        children, aux = _REGISTRY[t][0](x)
        return (t, aux, list(children))
    if t is tuple or t is list:
        return (t, None, list(x))
    if t is dict:
        keys = tuple(sorted(x))
        return (dict, keys, [x[k] for k in keys])
    if isinstance(x, tuple) and hasattr(t, "_fields"):  # namedtuple
        return (t, None, list(x))
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        dyn, static = [], []
        for f in dataclasses.fields(x):
            (static if f.metadata.get("static") else dyn).append(f.name)
        aux = (tuple(dyn), tuple((n, getattr(x, n)) for n in static))
        return (t, aux, [getattr(x, n) for n in dyn])
    return None


def tree_flatten(tree: Any) -> tuple[list[Any], PyTreeDef]:
    """Leaves in a fixed order, and the structure to rebuild the tree with."""
    leaves: list[Any] = []

    def rec(x: Any) -> PyTreeDef:
        n = _node(x)
        if n is None:
            leaves.append(x)
            return _LEAF
        kind, aux, children = n
        return PyTreeDef(kind, aux, tuple(rec(c) for c in children))
    return leaves, rec(tree)


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Inverse of :func:`tree_flatten`."""
    it = iter(leaves)

    def rec(d: PyTreeDef) -> Any:
        if d.kind == "leaf":
            return next(it)
        children = [rec(c) for c in d.children]
        k = d.kind
        if k is type(None):
            return None
        if k in _REGISTRY:
            return _REGISTRY[k][1](d.aux, children)
        if k is tuple or k is list:
            return k(children)
        if k is dict:
            return dict(zip(d.aux, children))
        if isinstance(k, type) and issubclass(k, tuple):
            return k(*children)
        dyn, static = d.aux
        obj = object.__new__(k)
        for name, v in list(zip(dyn, children)) + list(static):
            object.__setattr__(obj, name, v)
        return obj
    out = rec(treedef)
    if next(it, _SENTINEL) is not _SENTINEL:
        raise ValueError("tree_unflatten: more leaves than the structure has")
    return out


_SENTINEL = object()


def tree_leaves(tree: Any) -> list[Any]:
    """The leaves of ``tree``."""
    return tree_flatten(tree)[0]


def tree_structure(tree: Any) -> PyTreeDef:
    """The structure of ``tree``."""
    return tree_flatten(tree)[1]


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any) -> Any:
    """Apply ``f`` leafwise to ``tree`` (and to the same-structured trees in ``rest``)."""
    leaves, treedef = tree_flatten(tree)
    others = []
    for r in rest:
        rl, rd = tree_flatten(r)
        if rd != treedef:
            raise ValueError(f"tree_map: structures differ: {treedef} and {rd}")
        others.append(rl)
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])
