"""``Module``: immutable layers that are pytrees (Equinox's design), and the filters that split
a model into trainable and other parts.

A subclass declares its fields with annotations. Array fields (and sub-modules, tuples of
them, None) are the pytree's children; fields declared with :func:`static` are
hyper-parameters kept in the tree's structure (hashable, so ``jit`` keys its cache on them);
fields declared with :func:`buffer` are arrays that are leaves but not trained (BatchNorm's
running statistics). ``__init__`` assigns each field once; after that the module is frozen,
and "changing" a layer means building a new one (:meth:`Module.replace`).

Calling convention, the same for every layer: ``layer(x, *, key=None, training=True)``.
Layers without randomness or state ignore both keywords. Layers with randomness (Dropout,
attention dropout) need ``key`` when ``training``. Stateful layers (``stateful = True``:
BatchNorm, and any Sequential containing one) return ``(y, new_layer)`` in both modes, the
new layer carrying the updated state; the others return ``y``.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, ClassVar

import numpy as np

from clnp_grad import register_pytree_node
from clnp_grad._tree import PyTreeDef, _node
from clnp._core.dtypes import kind as dkind

__all__ = ["Module", "static", "buffer", "is_array", "is_inexact_array", "partition", "combine",
           "trainable_mask", "named_leaves"]


def static(default: Any = dataclasses.MISSING) -> Any:
    """Declare a hyper-parameter field: part of the pytree's structure (hashable), not a leaf.

    Parameters
    ----------
    default : optional
        The field's default value.

    Returns
    -------
    dataclasses.Field

    Raises
    ------
    None

    Examples
    --------
    >>> import clnp_nn as nn
    >>> class Scale(nn.Module):
    ...     factor: float = nn.static()
    ...     def __init__(self, factor):
    ...         self.factor = factor
    ...     def __call__(self, x, *, key=None, training=True):
    ...         return x * self.factor
    >>> Scale(3.0)(clnp.asarray([1.0])).tolist()
    [3.0]
    >>> cg.tree_leaves(Scale(3.0))
    []
    """
    return dataclasses.field(default=default, metadata={"static": True})


def buffer() -> Any:
    """Declare an array field that is a leaf but not a trainable parameter (PyTorch's
    buffers): :func:`trainable_mask` marks it False.

    Returns
    -------
    dataclasses.Field

    Raises
    ------
    None

    Examples
    --------
    >>> import clnp_nn as nn
    >>> class Counter(nn.Module):
    ...     count: object = nn.buffer()
    ...     def __init__(self):
    ...         self.count = clnp.zeros(1)
    >>> nn.trainable_mask(Counter()).count
    False
    """
    return dataclasses.field(metadata={"buffer": True})


class Module:
    """Base class of every layer: a frozen dataclass registered as a pytree.

    Subclasses annotate their fields, mark hyper-parameters with :func:`static` and
    non-trainable arrays with :func:`buffer`, and assign every field in ``__init__``.
    """

    stateful: ClassVar[bool] = False
    _dynamic: ClassVar[tuple[str, ...]] = ()
    _static: ClassVar[tuple[str, ...]] = ()
    _buffers: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        dataclasses.dataclass(cls, init=False, repr=False, eq=False)
        fields = dataclasses.fields(cls)
        cls._static = tuple(f.name for f in fields if f.metadata.get("static"))
        cls._dynamic = tuple(f.name for f in fields if not f.metadata.get("static"))
        cls._buffers = tuple(f.name for f in fields if f.metadata.get("buffer"))
        register_pytree_node(cls, _flatten, lambda aux, ch, cls=cls: _unflatten(cls, aux, ch))

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._dynamic and name not in self._static:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}; declare it as "
                                 f"an annotated class attribute")
        if name in self.__dict__:
            raise dataclasses.FrozenInstanceError(
                f"{type(self).__name__} is immutable: cannot assign {name!r} again. Build a new "
                f"layer with .replace({name}=...) instead")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"{type(self).__name__} is immutable")

    def replace(self, **changes: Any) -> "Module":
        """A copy with the given fields replaced (no checks: the caller keeps shapes
        consistent).

        Modules are immutable; this is how a training step or a surgery on a model builds the
        next one.

        Parameters
        ----------
        **changes
            New values by field name (parameters, buffers or static fields).

        Returns
        -------
        Module
            A new module of the same class; the fields not named are shared with ``self``.

        Raises
        ------
        AttributeError
            A name is not a field of the module.

        Examples
        --------
        >>> import clnp, clnp_grad as cg
        >>> import clnp_nn as nn
        >>> layer = nn.Linear(2, 1, key=cg.random.key(0))
        >>> frozen = layer.replace(bias=clnp.zeros(1, dtype=clnp.float32))
        >>> frozen.bias.tolist(), frozen.weight is layer.weight
        ([0.0], True)
        """
        for k in changes:
            if k not in self._dynamic and k not in self._static:
                raise AttributeError(f"{type(self).__name__}.replace: no field {k!r}")
        new = object.__new__(type(self))
        for k in self._dynamic + self._static:
            object.__setattr__(new, k, changes[k] if k in changes else getattr(self, k))
        return new

    def __repr__(self) -> str:
        parts = []
        for k in self._dynamic + self._static:
            v = getattr(self, k, "<unset>")
            parts.append(f"{k}={_short(v)}")
        return f"{type(self).__name__}({', '.join(parts)})"


def _short(v: Any) -> str:
    if hasattr(v, "shape") and hasattr(v, "dtype") and not isinstance(v, np.generic):
        kind = {"f": "f", "i": "i", "u": "u", "b": "bool", "c": "c"}[dkind(v.dtype)]
        bits = "" if kind == "bool" else str(8 * v.dtype.itemsize)
        return f"{kind}{bits}[{','.join(map(str, v.shape))}]"
    if isinstance(v, tuple) and v and all(isinstance(e, Module) for e in v):
        return "(" + ", ".join(_short(e) for e in v) + ")"
    return repr(v)


# A jitted training step flattens its state's modules and builds them again on every call
# (the digits CNN's state: 44 modules), so both read and write the instance dict directly:
# fields live there (``__setattr__`` stores them with ``object.__setattr__``)
def _flatten(m: Module) -> tuple[list[Any], Any]:
    d = m.__dict__
    try:
        return [d[k] for k in m._dynamic], tuple([(k, d[k]) for k in m._static])
    except KeyError:    # a field left at its class default
        return ([getattr(m, k) for k in m._dynamic],
                tuple([(k, getattr(m, k)) for k in m._static]))


def _unflatten(cls: type, aux: Any, children: Any) -> Module:
    obj = object.__new__(cls)
    d = obj.__dict__
    d.update(zip(cls._dynamic, children))
    d.update(aux)
    return obj


# ------------------------------------------------------------------------------ filters
def is_array(x: Any) -> bool:
    """Whether ``x`` is an array leaf (a clnp array or a traced one; not a NumPy array).

    Parameters
    ----------
    x : any
        A pytree leaf.

    Returns
    -------
    bool

    Raises
    ------
    None

    Examples
    --------
    >>> import clnp_nn as nn
    >>> nn.is_array(clnp.ones(2)), nn.is_array(3.0)
    (True, False)
    """
    return hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, (np.ndarray,
                                                                           np.generic))


def is_inexact_array(x: Any) -> bool:
    """Whether ``x`` is a floating (or complex) array leaf: what ``grad`` differentiates.

    Parameters
    ----------
    x : any
        A pytree leaf.

    Returns
    -------
    bool

    Raises
    ------
    None

    Examples
    --------
    >>> import clnp_nn as nn
    >>> nn.is_inexact_array(clnp.ones(2)), nn.is_inexact_array(clnp.arange(2))
    (True, False)
    """
    return is_array(x) and dkind(x.dtype) in "fc"


_LEAF = PyTreeDef("leaf", None, ())


def _flatten_none_leaf(tree: Any) -> tuple[list[Any], PyTreeDef]:
    """Like ``tree_flatten`` but None is a leaf: partitioned trees keep their skeleton."""
    leaves: list[Any] = []

    def rec(x: Any) -> PyTreeDef:
        if x is None:
            leaves.append(None)
            return _LEAF
        n = _node(x)
        if n is None:
            leaves.append(x)
            return _LEAF
        kind, aux, children = n
        return PyTreeDef(kind, aux, tuple(rec(c) for c in children))
    return leaves, rec(tree)


def _unflatten_none_leaf(treedef: PyTreeDef, leaves: list[Any]) -> Any:
    from clnp_grad import tree_unflatten
    return tree_unflatten(treedef, leaves)


def trainable_mask(tree: Any) -> Any:
    """A pytree like ``tree`` with True at every floating array that is a parameter, False
    at buffers (running statistics), non-float arrays and other leaves.

    Parameters
    ----------
    tree : pytree
        A model or any pytree containing modules.

    Returns
    -------
    pytree of bool
        Same skeleton as ``tree`` (None stays None), usable as ``partition``'s filter.

    Raises
    ------
    None

    Examples
    --------
    >>> import clnp_nn as nn
    >>> mask = nn.trainable_mask(nn.BatchNorm1d(2))
    >>> mask.weight, mask.running_mean
    (True, False)
    """
    def rec(x: Any, frozen: bool) -> Any:
        if x is None:
            return None
        if isinstance(x, Module):
            return _unflatten(type(x), tuple((k, getattr(x, k)) for k in x._static),
                              [rec(getattr(x, k), frozen or k in x._buffers)
                               for k in x._dynamic])
        n = _node(x)
        if n is None:
            return (not frozen) and is_inexact_array(x)
        kind, aux, children = n
        # one level: rebuild this container from its children's masks
        from clnp_grad import tree_unflatten
        return tree_unflatten(PyTreeDef(kind, aux, tuple(_LEAF for _ in children)),
                              [rec(c, frozen) for c in children])
    return rec(tree, False)


def partition(tree: Any, filter_spec: Any) -> tuple[Any, Any]:
    """Split ``tree`` in two trees of the same skeleton: leaves selected by ``filter_spec``
    in the first (None elsewhere), the others in the second (Equinox's ``partition``).

    Parameters
    ----------
    tree : pytree
        A module or any pytree.
    filter_spec : callable or pytree of bool
        ``filter_spec(leaf) -> bool`` (e.g. :func:`is_inexact_array`), or a mask of the same
        skeleton (e.g. :func:`trainable_mask`).

    Returns
    -------
    tuple of pytree
        ``(selected, rest)``; :func:`combine` merges them back.

    Raises
    ------
    ValueError
        If a mask's structure differs from the tree's.
    TypeError
        If ``filter_spec`` is neither callable nor a pytree.

    Examples
    --------
    >>> import clnp_nn as nn
    >>> model = nn.Sequential(nn.Linear(2, 2, key=cg.random.key(0)), nn.BatchNorm1d(2))
    >>> params, rest = nn.partition(model, nn.trainable_mask(model))
    >>> len(cg.tree_leaves(params)), len(cg.tree_leaves(rest))
    (4, 2)
    >>> params.layers[1].running_mean is None
    True
    """
    leaves, tdef = _flatten_none_leaf(tree)
    if callable(filter_spec) and not isinstance(filter_spec, Module):
        keep = [l is not None and bool(filter_spec(l)) for l in leaves]
    else:
        mask, mdef = _flatten_none_leaf(filter_spec)
        if mdef != tdef:
            raise ValueError(f"partition: the mask's structure {mdef} differs from the tree's "
                             f"{tdef}")
        keep = [bool(m) for m in mask]
    a = [l if k else None for l, k in zip(leaves, keep)]
    b = [None if k else l for l, k in zip(leaves, keep)]
    return _unflatten_none_leaf(tdef, a), _unflatten_none_leaf(tdef, b)


def combine(*trees: Any) -> Any:
    """Merge trees of one skeleton, taking at each leaf the first value that is not None
    (the inverse of :func:`partition`).

    Parameters
    ----------
    *trees : pytree
        At least one; all with the same skeleton.

    Returns
    -------
    pytree

    Raises
    ------
    ValueError
        If no tree is given or the skeletons differ.

    Examples
    --------
    >>> import clnp_nn as nn
    >>> model = nn.Sequential(nn.Linear(2, 2, key=cg.random.key(0)), nn.BatchNorm1d(2))
    >>> params, rest = nn.partition(model, nn.is_inexact_array)
    >>> nn.combine(params, rest).layers[1].running_var.tolist()
    [1.0, 1.0]
    """
    if not trees:
        raise ValueError("combine: needs at least one tree")
    flat = [_flatten_none_leaf(t) for t in trees]
    tdef = flat[0][1]
    for i, (_, d) in enumerate(flat[1:], 1):
        if d != tdef:
            raise ValueError(f"combine: tree {i} has structure {d}, tree 0 has {tdef}")
    out = [next((f[0][j] for f in flat if f[0][j] is not None), None)
           for j in range(len(flat[0][0]))]
    return _unflatten_none_leaf(tdef, out)


def named_leaves(tree: Any) -> list[tuple[str, Any]]:
    """``(dotted path, leaf)`` for every leaf, with PyTorch-style names
    (``layers.0.weight``).

    Parameters
    ----------
    tree : pytree
        A module or any pytree.

    Returns
    -------
    list of (str, leaf)

    Raises
    ------
    None

    Examples
    --------
    >>> import clnp_nn as nn
    >>> [path for path, _ in nn.named_leaves(nn.Linear(2, 2, key=cg.random.key(0)))]
    ['weight', 'bias']
    """
    out: list[tuple[str, Any]] = []

    def rec(x: Any, path: str) -> None:
        if isinstance(x, Module):
            for k in x._dynamic:
                rec(getattr(x, k), f"{path}.{k}" if path else k)
            return
        n = _node(x)
        if n is None:
            out.append((path, x))
            return
        kind, aux, children = n
        if kind is dict:
            names = [str(k) for k in aux]
        elif hasattr(kind, "_fields"):
            names = list(kind._fields)
        else:
            names = [str(i) for i in range(len(children))]
        for name, c in zip(names, children):
            rec(c, f"{path}.{name}" if path else name)
    rec(tree, "")
    return out
