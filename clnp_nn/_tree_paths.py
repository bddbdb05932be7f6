"""Dotted paths of pytree leaves (``layers.0.weight``) and a JSON form of a tree's structure.

Checkpoints name every leaf by its path and store the structure next to the arrays, so a file
can be read back without the original Python objects (plain containers), or poured into a
template tree (``like``) leaf by leaf by path.
"""
from __future__ import annotations

import dataclasses
from typing import Any
from clnp._core.dtypes import kind as dkind

__all__ = ["leaf_paths", "structure_to_json", "structure_from_json"]


def _child_names(d: Any) -> list[str]:
    """The path component of each child of the PyTreeDef node ``d``."""
    k = dkind(d)
    n = len(d.children)
    if k is dict:
        return [str(key) for key in d.aux]
    if isinstance(k, type) and issubclass(k, tuple) and hasattr(k, "_fields"):
        return list(k._fields)
    if isinstance(k, type) and dataclasses.is_dataclass(k):
        # plain dataclasses and dataclass-based registered classes (clnp_nn modules): the
        # children are the non-static fields, in declaration order
        names = [f.name for f in dataclasses.fields(k) if not f.metadata.get("static")]
        if len(names) == n:
            return names
    return [str(i) for i in range(n)]


def leaf_paths(treedef: Any) -> list[str]:
    """The dotted path of every leaf of ``treedef``, in leaf order ('' for a bare leaf)."""
    out: list[str] = []

    def rec(d: Any, prefix: tuple[str, ...]) -> None:
        if dkind(d) == "leaf":
            out.append(".".join(prefix))
            return
        for name, c in zip(_child_names(d), d.children):
            rec(c, prefix + (name,))
    rec(treedef, ())
    return out


def _json_scalar(v: Any) -> bool:
    return v is None or isinstance(v, (bool, int, float, str))


def structure_to_json(treedef: Any) -> Any:
    """A JSON-able description of ``treedef``: node kinds, dict keys, field names. Classes
    are recorded by name only (they are never imported back)."""
    k = treedef.kind
    if k == "leaf":
        return {"t": "leaf"}
    children = [structure_to_json(c) for c in treedef.children]
    if k is type(None):
        return {"t": "none"}
    if k is dict:
        keys = list(treedef.aux)
        for key in keys:
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                raise TypeError(f"dict key {key!r} of type {type(key).__name__} cannot be "
                                f"saved: checkpoint keys must be str or int")
        return {"t": "dict", "keys": keys, "c": children}
    if k is list or k is tuple:
        return {"t": k.__name__, "c": children}
    name = f"{getattr(k, '__module__', '?')}.{getattr(k, '__qualname__', str(k))}"
    return {"t": "node", "class": name, "names": _child_names(treedef), "c": children}


def structure_from_json(js: Any, leaves: list[Any]) -> Any:
    """Rebuild plain containers from :func:`structure_to_json`'s description: dicts, lists
    and tuples as they were, other nodes (namedtuples, dataclasses, registered classes) as
    dicts of their children by name."""
    it = iter(leaves)

    def rec(n: Any) -> Any:
        t = n["t"]
        if t == "leaf":
            return next(it)
        if t == "none":
            return None
        kids = [rec(c) for c in n["c"]]
        if t == "dict":
            return dict(zip(n["keys"], kids))
        if t == "list":
            return kids
        if t == "tuple":
            return tuple(kids)
        return dict(zip(n["names"], kids))
    return rec(js)

