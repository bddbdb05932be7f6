"""Pytrees: nested containers whose leaves are arrays (or anything that is not a container).

Containers: tuple, list, dict (keys sorted), namedtuple, ``None`` (an empty node), dataclasses
(fields in declaration order; ``metadata={"static": True}`` fields are part of the structure),
and types registered with :func:`register_pytree_node`.
"""
from __future__ import annotations

import dataclasses
from functools import partial
from operator import itemgetter
from typing import Any, Callable, Hashable, Iterable, NamedTuple

from clnp._runtime.generated import GeneratedSource

__all__ = ["PyTreeDef", "register_pytree_node", "tree_flatten", "tree_unflatten", "tree_map",
           "tree_leaves", "tree_structure"]

_REGISTRY: dict[type, tuple[Callable[[Any], tuple[Iterable[Any], Hashable]],
                            Callable[[Hashable, Iterable[Any]], Any]]] = {}


def register_pytree_node(cls: type, flatten: Callable[[Any], tuple[Iterable[Any], Hashable]],
                         unflatten: Callable[[Hashable, Iterable[Any]], Any]) -> None:
    """Make instances of ``cls`` pytree nodes, so the transformations see through them.

    Parameters
    ----------
    cls : type
        The container type.
    flatten : callable
        ``flatten(x) -> (children, aux)``: the children (pytrees) and hashable static data.
    unflatten : callable
        ``unflatten(aux, children) -> x``.

    Returns
    -------
    None

    Examples
    --------
    >>> import clnp_grad as cg
    >>> class Point:
    ...     def __init__(self, x, y):
    ...         self.x, self.y = x, y
    >>> cg.register_pytree_node(Point, lambda p: ((p.x, p.y), None),
    ...                         lambda aux, children: Point(*children))
    >>> p = cg.tree_map(lambda v: v * 10, Point(1, 2))
    >>> p.x, p.y
    (10, 20)
    """
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
# PyTreeDef(kind, aux, children) without NamedTuple's Python-level __new__
_new_def, _DEF = tuple.__new__, PyTreeDef


def _leaf_types() -> frozenset[type]:
    import numpy as np
    from clnp._core.array import Array
    return frozenset({Array, np.ndarray, float, int, bool, complex})


# types that are never containers, answered before the container checks (a jitted call
# flattens its arguments every time: dataclasses.is_dataclass alone costs ~0.5 us a leaf)
_LEAVES = _leaf_types()


def _node(x: Any) -> tuple[Any, Hashable, list[Any]] | None:
    """(kind, aux, children) for a container, None for a leaf."""
    t = type(x)
    if t in _LEAVES and t not in _REGISTRY:
        return None
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
    """Flatten a pytree into its leaves, in a fixed order, and its structure.

    Lists, tuples, named tuples, dicts (in sorted key order), None and registered nodes are
    containers; everything else is a leaf.

    Parameters
    ----------
    tree : pytree
        Nested containers of leaves.

    Returns
    -------
    leaves : list
        The leaves, depth first.
    treedef : PyTreeDef
        The structure, for :func:`tree_unflatten`.

    Raises
    ------
    TypeError
        Dict keys that cannot be sorted.

    Examples
    --------
    >>> import clnp_grad as cg
    >>> leaves, treedef = cg.tree_flatten({"b": [1, 2], "a": (3,)})
    >>> leaves
    [3, 1, 2]
    >>> treedef
    dict(tuple(*), list(*, *))
    """
    leaves: list[Any] = []
    append, node, make = leaves.append, _node, _new_def

    # a jitted call flattens its arguments on every call (a training state of modules and
    # optimizer states: ~150 nodes), so the loop avoids generator and NamedTuple overheads
    def rec(x: Any) -> PyTreeDef:
        n = node(x)
        if n is None:
            append(x)
            return _LEAF
        kind, aux, children = n
        return make(_DEF, (kind, aux, tuple([rec(c) for c in children])))
    return leaves, rec(tree)


def unflattener(treedef: PyTreeDef) -> Callable[[list], Any]:
    """``tree_unflatten(treedef, ·)`` made once for many calls: a function of a flat tuple or
    list of leaves (or one leaf) that builds the tree without walking the structure (a
    jitted call's outputs, on every call). For nested structures it is generated code, one
    expression building the whole tree (the character transformer's step returns 92 leaves
    in modules and optimizer states: 225 us walked against 143 us on the 2-core machine,
    ``bench/bench_pytree.py``).

    Examples
    --------
    >>> import clnp_grad as cg
    >>> from clnp_grad._tree import unflattener
    >>> unflattener(cg.tree_structure((1, 2)))([10, 20])
    (10, 20)
    >>> unflattener(cg.tree_structure({"a": 1, "b": [2, None]}))([5, 6])
    {'a': 5, 'b': [6, None]}
    """
    k, _, subs = treedef
    if k == "leaf":
        return itemgetter(0)
    if (k is tuple or k is list) and all(c[0] == "leaf" for c in subs):
        return k
    built = _generated_unflatten(treedef)
    return built if built is not None else partial(tree_unflatten, treedef)


def _generated_unflatten(treedef: PyTreeDef) -> Callable[[list], Any] | None:
    """Source for one expression of ``treedef``'s tree over the leaves ``L``, compiled; None
    where a node kind has no expression here."""
    code = GeneratedSource()
    const = code.const
    leaf = iter(range(1 << 30))

    def expr(d: PyTreeDef) -> str | None:
        k, aux, subs = d
        if k == "leaf":
            return f"L[{next(leaf)}]"
        parts = [expr(c) for c in subs]
        if any(p is None for p in parts):
            return None
        items = ", ".join(parts)       # type: ignore[arg-type]
        if k in _REGISTRY:
            return f"{const(_REGISTRY[k][1])}({const(aux)}, [{items}])"
        if k is type(None):
            return "None"
        if k is tuple:
            return f"({items},)" if parts else "()"
        if k is list:
            return f"[{items}]"
        if k is dict:
            keys = const(aux)
            return "{" + ", ".join(f"{keys}[{i}]: {p}" for i, p in enumerate(parts)) + "}"
        if isinstance(k, type) and issubclass(k, tuple):       # namedtuple
            return f"{const(k)}({items})"
        if isinstance(k, type) and dataclasses.is_dataclass(k):
            return f"{const(_dataclass_of)}({const(k)}, {const(aux)}, [{items}])"
        return None
    body = expr(treedef)
    if body is None:
        return None
    return code.function(f"def build(L):\n    return {body}\n", "build", "unflatten")


def flattener(treedef: PyTreeDef) -> Callable[[Any], list | None] | None:
    """The leaves of a tree *of structure* ``treedef``, by code generated for it: a function
    returning the leaves (in ``tree_flatten``'s order) of a tree that has exactly that
    structure, and None for any other tree (the caller then flattens it generally). A jitted
    call flattens its arguments on every call: for the training states of the digits CNN
    and the character transformer the walk took 214-271 us on the 2-core machine, this
    code 87-119 us (``bench/bench_pytree.py``).

    What is checked: every container's exact type, length and dict keys, and every
    registered node's auxiliary data (a module's static fields). What is not: the leaves'
    own types (a container where the structure has a leaf comes back as a leaf), which
    the caller checks. None where ``treedef`` has a node kind the generated code does not
    know.

    Examples
    --------
    >>> import clnp_grad as cg
    >>> from clnp_grad._tree import flattener
    >>> f = flattener(cg.tree_structure({"b": [1, 2], "a": (3,)}))
    >>> f({"a": (30,), "b": [10, 20]})
    [30, 10, 20]
    >>> f({"a": (30,), "b": [10]}) is None, f({"a": (1,), "c": [1, 2]}) is None
    (True, True)
    """
    code = GeneratedSource()
    const = code.const
    lines: list[str] = []
    leaves: list[str] = []

    def walk(d: PyTreeDef, v: str) -> bool:
        k, aux, subs = d
        if k == "leaf":
            leaves.append(v)
            return True
        n = len(subs)
        if k is type(None):
            lines.append(f"if {v} is not None: return None")
            return True
        if k in _REGISTRY:
            c, a = code.fresh("c"), code.fresh("a")
            lines.append(f"if type({v}) is not {const(k)}: return None")
            lines.append(f"{c}, {a} = {const(_REGISTRY[k][0])}({v})")
            lines.append(f"if {a} != {const(aux)} or len({c}) != {n}: return None")
            kids = [f"{c}[{i}]" for i in range(n)]
        elif k is tuple or k is list or k is dict:
            lines.append(f"if type({v}) is not {k.__name__} or len({v}) != {n}: return None")
            kids = ([f"{v}[{i}]" for i in range(n)] if k is not dict else
                    [f"{v}[{const(key)}]" for key in aux])
        elif isinstance(k, type) and issubclass(k, tuple):            # namedtuple
            lines.append(f"if type({v}) is not {const(k)} or len({v}) != {n}: return None")
            kids = [f"{v}[{i}]" for i in range(n)]
        elif isinstance(k, type) and dataclasses.is_dataclass(k):
            dyn, static = aux
            lines.append(f"if type({v}) is not {const(k)}: return None")
            if static:
                got = ", ".join(f"({name!r}, {v}.{name})" for name, _ in static)
                lines.append(f"if ({got},) != {const(static)}: return None")
            kids = [f"{v}.{name}" for name in dyn]
        else:
            return False
        for kid, sub in zip(kids, subs):
            if sub[0] == "leaf":
                leaves.append(kid)
                continue
            name = code.fresh("v")
            lines.append(f"{name} = {kid}")
            if not walk(sub, name):
                return False
        return True
    if treedef[0] == "leaf" or not walk(treedef, "x"):
        return None
    body = "\n        ".join(lines)
    src = (f"def flat(x):\n    try:\n        {body}\n"
           f"        return [{', '.join(leaves)}]\n"
           f"    except (KeyError, IndexError, TypeError, ValueError):\n        return None\n")
    return code.function(src, "flat", "flatten")


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a pytree from its structure and leaves (the inverse of :func:`tree_flatten`).

    Parameters
    ----------
    treedef : PyTreeDef
        A structure from :func:`tree_flatten` or :func:`tree_structure`.
    leaves : iterable
        Exactly ``treedef.num_leaves`` leaves.

    Returns
    -------
    pytree
        The tree of ``treedef``'s structure holding ``leaves``.

    Raises
    ------
    TypeError
        ``treedef`` is not a PyTreeDef.
    ValueError
        Fewer or more leaves than the structure has.

    Examples
    --------
    >>> import clnp_grad as cg
    >>> treedef = cg.tree_structure({"b": [1, 2], "a": (3,)})
    >>> cg.tree_unflatten(treedef, [10, 20, 30])
    {'a': (10,), 'b': [20, 30]}
    """
    if not isinstance(treedef, PyTreeDef):
        raise TypeError(f"tree_unflatten: treedef must be a PyTreeDef (from tree_flatten or "
                        f"tree_structure); got {type(treedef).__name__}")
    it = iter(leaves)

    registry = _REGISTRY

    def rec(d: PyTreeDef) -> Any:
        k, aux, subs = d
        if k == "leaf":
            leaf = next(it, _SENTINEL)
            if leaf is _SENTINEL:
                raise ValueError(f"tree_unflatten: fewer leaves than the structure "
                                 f"{treedef} has ({treedef.num_leaves})")
            return leaf
        children = [rec(c) for c in subs]
        reg = registry.get(k)
        if reg is not None:
            return reg[1](aux, children)
        if k is type(None):
            return None
        if k is tuple or k is list:
            return k(children)
        if k is dict:
            return dict(zip(aux, children))
        if isinstance(k, type) and issubclass(k, tuple):
            return k(*children)
        return _dataclass_of(k, aux, children)
    out = rec(treedef)
    if next(it, _SENTINEL) is not _SENTINEL:
        raise ValueError("tree_unflatten: more leaves than the structure has")
    return out


_SENTINEL = object()


def _dataclass_of(cls: type, aux: Any, children: list) -> Any:
    """A dataclass node from its dynamic fields' children and ``aux`` (the dynamic field
    names, then the static fields' (name, value) pairs), as ``_node`` split it."""
    dyn, static = aux
    obj = object.__new__(cls)
    for name, v in list(zip(dyn, children)) + list(static):
        object.__setattr__(obj, name, v)
    return obj


def tree_leaves(tree: Any) -> list[Any]:
    """The leaves of ``tree`` in :func:`tree_flatten`'s order.

    Parameters
    ----------
    tree : pytree
        Nested containers of leaves.

    Returns
    -------
    list
        The leaves (None is an empty container, not a leaf).

    Raises
    ------
    TypeError
        Dict keys that cannot be sorted.

    Examples
    --------
    >>> import clnp_grad as cg
    >>> cg.tree_leaves([1, {"a": 2, "b": None}, (3,)])
    [1, 2, 3]
    """
    return tree_flatten(tree)[0]


def tree_structure(tree: Any) -> PyTreeDef:
    """The structure of ``tree``, without its leaves.

    Parameters
    ----------
    tree : pytree
        Nested containers of leaves.

    Returns
    -------
    PyTreeDef
        Hashable and comparable; ``num_leaves`` counts the leaves.

    Raises
    ------
    TypeError
        Dict keys that cannot be sorted.

    Examples
    --------
    >>> import clnp_grad as cg
    >>> cg.tree_structure([1, {"a": 2}])
    list(*, dict(*))
    >>> cg.tree_structure([1, {"a": 2}]).num_leaves
    2
    """
    return tree_flatten(tree)[1]


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any) -> Any:
    """Apply ``f`` to every leaf of ``tree`` (and the matching leaves of ``rest``).

    Parameters
    ----------
    f : callable
        ``f(leaf, *rest_leaves)``.
    tree : pytree
        The tree whose structure the result has.
    *rest : pytree
        Trees of the same structure as ``tree``.

    Returns
    -------
    pytree
        ``tree``'s structure holding ``f``'s results.

    Raises
    ------
    TypeError
        ``f`` is not callable.
    ValueError
        A tree in ``rest`` has a different structure (the message says where).

    Examples
    --------
    >>> import clnp_grad as cg
    >>> cg.tree_map(lambda a, b: a + b, {"x": 1, "y": (2, 3)}, {"x": 10, "y": (20, 30)})
    {'x': 11, 'y': (22, 33)}
    """
    if not callable(f):
        raise TypeError(f"tree_map: f must be callable; got {type(f).__name__}")
    leaves, treedef = tree_flatten(tree)
    others = []
    for r in rest:
        rl, rd = tree_flatten(r)
        if rd != treedef:
            where = structure_difference(treedef, rd, "tree", f"rest[{len(others)}]")
            raise ValueError(f"tree_map: structures differ: {where}")
        others.append(rl)
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


# ------------------------------------------------------------------------------ messages
def _keys(tree: PyTreeDef) -> list[str]:
    """The path component of each child of ``tree``: ``['w']``, ``.mu``, ``[0]``."""
    k = tree.kind
    if k is dict:
        return [f"[{key!r}]" for key in tree.aux]
    if isinstance(k, type) and hasattr(k, "_fields"):
        return [f".{f}" for f in k._fields]
    if isinstance(k, type) and isinstance(tree.aux, tuple) and len(tree.aux) == 2 and \
            isinstance(tree.aux[0], tuple) and k not in (tuple, list) and \
            len(tree.aux[0]) == len(tree.children):
        return [f".{f}" for f in tree.aux[0]]   # dataclass fields
    return [f"[{i}]" for i in range(len(tree.children))]


def leaf_paths(tree: PyTreeDef, prefix: str = "") -> list[str]:
    """A readable path per leaf of ``tree``, in leaf order, for error messages:
    ``params['layers'][0].weight`` (``prefix`` alone for a bare leaf).

    Examples
    --------
    >>> from clnp_grad._tree import leaf_paths, tree_structure
    >>> leaf_paths(tree_structure({"b": [1, 2], "a": 3}), "params")
    ["params['a']", "params['b'][0]", "params['b'][1]"]
    """
    if tree.kind == "leaf":
        return [prefix]
    out: list[str] = []
    for key, c in zip(_keys(tree), tree.children):
        out += leaf_paths(c, prefix + key)
    return out


def _brief(tree: PyTreeDef) -> str:
    """A few words for one node: ``a dict with keys ['b', 'w']``, ``a list of 2``."""
    k = tree.kind
    if k == "leaf":
        return "a leaf"
    if k is type(None):
        return "None"
    if k is dict:
        keys = list(tree.aux)
        shown = ", ".join(map(repr, keys[:8])) + (f", ... ({len(keys)} keys)"
                                                   if len(keys) > 8 else "")
        return f"a dict with keys [{shown}]"
    name = getattr(k, "__name__", str(k))
    return f"a {name} of {len(tree.children)}"


def structure_difference(a: PyTreeDef, b: PyTreeDef, a_name: str = "a",
                         b_name: str = "b") -> str | None:
    """Where the structures ``a`` and ``b`` first differ, in a few words naming both (None
    when they are equal): ``"updates['layer'] is a dict with keys ['b', 'w'], params['layer']
    is a dict with keys ['w'] (keys only in updates: ['b'])"``.

    Examples
    --------
    >>> from clnp_grad._tree import structure_difference, tree_structure
    >>> a, b = tree_structure({"w": 1, "b": 2}), tree_structure({"w": 1})
    >>> print(structure_difference(a, b, "updates", "params"))
    updates is a dict with keys ['b', 'w'], params is a dict with keys ['w'] (keys only in ...
    >>> structure_difference(a, a) is None
    True
    """
    def rec(x: PyTreeDef, y: PyTreeDef, path: str) -> str | None:
        if x.kind != y.kind or x.aux != y.aux or len(x.children) != len(y.children):
            text = f"{a_name}{path} is {_brief(x)}, {b_name}{path} is {_brief(y)}"
            if x.kind is dict and y.kind is dict:
                only_a = [key for key in x.aux if key not in y.aux]
                only_b = [key for key in y.aux if key not in x.aux]
                extra = [f"keys only in {n}: {ks[:8]}" for n, ks in ((a_name, only_a),
                                                                    (b_name, only_b)) if ks]
                if extra:
                    text += f" ({'; '.join(extra)})"
            elif x.aux != y.aux and x.kind == y.kind:
                text += f" (static data {x.aux!r} and {y.aux!r})"
            return text
        for key, cx, cy in zip(_keys(x), x.children, y.children):
            found = rec(cx, cy, path + key)
            if found:
                return found
        return None
    return rec(a, b, "")
