"""Collective primitives over a named mapped axis: ``psum``, ``pmax``, ``pmin``, ``all_gather``,
``psum_scatter``, ``ppermute``, ``all_to_all`` and ``axis_index`` (JAX's ``jax.lax`` names).

A collective is written for one participant of a mapped axis, but means something only where
that axis exists: inside ``vmap(..., axis_name=...)`` (the batching rule sees every participant
at once, as the batch axis) or inside ``clnp_nn.parallel.pmap`` (which splits its traced
program at each collective and combines the devices' shards there). The axis environment
(``axis_frame``, clnp_grad/_axes.py) records which names are bound and their sizes.

Every collective's meaning is written once, as a function of the *stacked* participants
(``stacked_*``: an array whose leading axis indexes the participants, in any namespace with
NumPy's names), so ``vmap``'s batching rule and ``pmap``'s host-side combination share it.
Derivatives: each collective is linear except ``pmax``/``pmin``; the transpose of ``psum`` is
``psum``, of ``all_gather`` ``psum_scatter`` (and back), of ``ppermute`` the inverse permutation,
of ``all_to_all`` the swapped ``all_to_all``.
"""
from __future__ import annotations

from typing import Any, Callable, Hashable, Iterator, NamedTuple, Sequence

import numpy as np

import clnp as xp
from clnp._core.prims import def_impl, primitive, set_interpreter

from . import _rules as R
from ._axes import AxisFrame, axis_frame, lookup_axis  # noqa: F401  (the axis environment)
from ._core import HIGHER_ORDER

COLLECTIVES = ("psum", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute", "all_to_all",
               "axis_index")


def axis_size(axis_name: Hashable) -> int:
    """Number of participants of the mapped axis ``axis_name`` (JAX's ``psum(1, name)``).

    Parameters
    ----------
    axis_name : hashable
        The name given to ``clnp_nn.parallel.pmap`` or ``clnp_grad.vmap`` (``axis_name=``).

    Returns
    -------
    int
        The size of the mapped axis (a Python int, known while tracing).

    Raises
    ------
    NameError
        ``axis_name`` is not bound by an enclosing ``pmap``/``vmap``.

    Examples
    --------
    >>> import numpy, clnp, clnp_grad as cg
    >>> from clnp_nn.parallel import axis_size
    >>> f = cg.vmap(lambda v: v / axis_size("i"), axis_name="i")
    >>> print(numpy.asarray(f(clnp.asarray([3.0, 6.0]))))
    [1.5 3. ]
    """
    return lookup_axis(axis_name, "axis_size").size


# ------------------------------------------------------------ stacked semantics (one source)
def _shape_of(v: Any) -> tuple[int, ...]:
    return tuple(v.shape)


def stacked_psum(ns: Any, v: Any) -> Any:
    r = ns.sum(v, axis=0, dtype=v.dtype)
    return ns.broadcast_to(ns.expand_dims(r, axis=0), _shape_of(v))


def stacked_pmax(ns: Any, v: Any) -> Any:
    return ns.broadcast_to(ns.max(v, axis=0, keepdims=True), _shape_of(v))


def stacked_pmin(ns: Any, v: Any) -> Any:
    return ns.broadcast_to(ns.min(v, axis=0, keepdims=True), _shape_of(v))


def stacked_all_gather(ns: Any, v: Any, *, axis: int, tiled: bool) -> Any:
    n, s = v.shape[0], _shape_of(v)[1:]
    g = ns.moveaxis(v, 0, axis)
    if tiled:
        g = ns.reshape(g, s[:axis] + (n * s[axis],) + s[axis + 1:])
    return ns.broadcast_to(ns.expand_dims(g, axis=0), (n,) + _shape_of(g))


def stacked_psum_scatter(ns: Any, v: Any, *, scatter_dimension: int, tiled: bool) -> Any:
    n, s = v.shape[0], _shape_of(v)[1:]
    d = scatter_dimension
    r = ns.sum(v, axis=0, dtype=v.dtype)
    if tiled:
        r = ns.reshape(r, s[:d] + (n, s[d] // n) + s[d + 1:])
    return ns.moveaxis(r, d, 0)


def stacked_ppermute(ns: Any, v: Any, *, perm: tuple[tuple[int, int], ...]) -> Any:
    n = v.shape[0]
    src = [0] * n
    has = [False] * n
    for s, d in perm:
        src[d], has[d] = s, True
    if all(has) and src == list(range(n)):
        return v
    if ns is np:
        out = np.zeros_like(v)
        for s, d in perm:
            out[d] = v[s]
        return out
    taken = ns.take(v, ns.asarray(src, dtype=ns.int32, device=v.device), axis=0)
    if all(has):
        return taken
    mask = ns.reshape(ns.asarray(has, device=v.device), (n,) + (1,) * (v.ndim - 1))
    return ns.where(mask, taken, ns.zeros((), dtype=v.dtype, device=v.device))


def stacked_all_to_all(ns: Any, v: Any, *, split_axis: int, concat_axis: int,
                       tiled: bool) -> Any:
    n, s = v.shape[0], _shape_of(v)[1:]
    sa, ca = split_axis, concat_axis
    if not tiled:
        return ns.moveaxis(ns.moveaxis(v, sa + 1, 0), 1, ca + 1)
    k = s[sa] // n
    u = ns.reshape(v, (n,) + s[:sa] + (n, k) + s[sa + 1:])
    u = ns.moveaxis(u, sa + 1, 0)                 # (i, j, chunk...)
    q = s[:sa] + (k,) + s[sa + 1:]                # one chunk's shape
    u = ns.moveaxis(u, 1, ca + 1)                 # (i, q[:ca], j, q[ca:])
    return ns.reshape(u, (n,) + q[:ca] + (n * q[ca],) + q[ca + 1:])


STACKED: dict[str, Callable[..., Any]] = {
    "psum": stacked_psum, "pmax": stacked_pmax, "pmin": stacked_pmin,
    "all_gather": stacked_all_gather, "psum_scatter": stacked_psum_scatter,
    "ppermute": stacked_ppermute, "all_to_all": stacked_all_to_all,
}


def _param_dict(params: dict) -> dict:
    return {k: v for k, v in params.items() if k != "axis_name"}


def result_shape(name: str, shape: tuple[int, ...], n: int, params: dict) -> tuple[int, ...]:
    """Shape of one participant's result of collective ``name`` on an input of ``shape``."""
    if name in ("psum", "pmax", "pmin", "ppermute"):
        return tuple(shape)
    if name == "all_gather":
        a = params["axis"]
        if params["tiled"]:
            return shape[:a] + (n * shape[a],) + shape[a + 1:]
        return shape[:a] + (n,) + shape[a:]
    if name == "psum_scatter":
        d = params["scatter_dimension"]
        if params["tiled"]:
            return shape[:d] + (shape[d] // n,) + shape[d + 1:]
        return shape[:d] + shape[d + 1:]
    if name == "all_to_all":
        sa, ca = params["split_axis"], params["concat_axis"]
        if params["tiled"]:
            out = list(shape)
            out[sa] //= n
            out[ca] *= n
            return tuple(out)
        rest = shape[:sa] + shape[sa + 1:]
        return rest[:ca] + (n,) + rest[ca:]
    raise KeyError(name)


# --------------------------------------------------------------------- primitives and impls
def _placeholder(name: str) -> Callable[..., Any]:
    """Eager implementation: valid only while a mapped axis of that name is being traced
    (``pmap`` staging, or ``jit`` staging a body inside ``vmap``), where values only give
    shapes; the mapped program computes the real result."""
    def impl(x: Any, *, axis_name: Hashable, **params: Any) -> Any:
        frame = lookup_axis(axis_name, name)
        shape = result_shape(name, tuple(x.shape), frame.size, params)
        if shape == tuple(x.shape):
            return x
        return xp.zeros(shape, dtype=x.dtype, device=x.device)
    impl.__name__ = f"_{name}_impl"
    return impl


for _n in COLLECTIVES[:-1]:
    def_impl(_n)(_placeholder(_n))


@def_impl("axis_index")
def _axis_index_impl(*, axis_name: Hashable, device: Any = None) -> Any:
    lookup_axis(axis_name, "axis_index")
    return xp.zeros((), dtype=xp.int32, device=device)


# ---------------------------------------------------------------------------- public API
def _names(axis_name: Any) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _check_array(x: Any, what: str) -> None:
    if not (hasattr(x, "shape") and hasattr(x, "dtype")):
        raise TypeError(f"{what}: expected an array; got {type(x).__name__}")


def _single(axis_name: Any, what: str) -> Hashable:
    names = _names(axis_name)
    if len(names) != 1:
        raise NotImplementedError(f"{what}: one axis name at a time; got {axis_name!r}")
    return names[0]


def _norm_axis(a: int, ndim: int, what: str, arg: str, shape: tuple) -> int:
    if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
        raise TypeError(f"{what}: {arg} must be an int; got {a!r}")
    if not -ndim <= a < ndim:
        raise ValueError(f"{what}: {arg}={a} is out of range for an input of shape {shape}")
    return int(a) % ndim


def _tree_apply(x: Any, f: Callable[[Any], Any]) -> Any:
    from ._tree import tree_map
    return tree_map(f, x)


def _reduce_coll(prim_name: str, x: Any, axis_name: Any) -> Any:
    def one(v: Any) -> Any:
        if isinstance(v, (bool, int, float, complex)) and prim_name == "psum":
            n = 1
            for nm in _names(axis_name):
                n *= axis_size(nm)
            return v * n
        _check_array(v, prim_name)
        if prim_name == "psum" and v.dtype == xp.bool:
            raise TypeError(f"psum: boolean arrays cannot be summed; cast to an integer dtype "
                            f"first (got shape {tuple(v.shape)})")
        for nm in _names(axis_name):
            lookup_axis(nm, prim_name)
            v = primitive(prim_name).bind(v, axis_name=nm)
        return v
    return _tree_apply(x, one)


def psum(x: Any, axis_name: Any) -> Any:
    """Sum of ``x`` over every participant of the mapped axis ``axis_name``.

    Parameters
    ----------
    x : array or pytree of arrays
        The values to sum; a Python number gives ``x * axis size``.
    axis_name : hashable or tuple of hashables
        The name given to ``clnp_nn.parallel.pmap`` or ``clnp_grad.vmap``
        (``axis_name=``); a tuple of names sums over each.

    Returns
    -------
    array or pytree of arrays
        The sum, the same on every participant, with ``x``'s shape and dtype.

    Raises
    ------
    NameError
        ``axis_name`` is not bound by an enclosing ``pmap``/``vmap``.
    TypeError
        A leaf of ``x`` is not an array or a number, or is a boolean array.

    Examples
    --------
    >>> import numpy, clnp, clnp_grad as cg
    >>> f = cg.vmap(lambda v: cg.psum(v, "i"), axis_name="i")
    >>> print(numpy.asarray(f(clnp.asarray([0.0, 1.0, 2.0]))))
    [3. 3. 3.]
    """
    return _reduce_coll("psum", x, axis_name)


def pmax(x: Any, axis_name: Any) -> Any:
    """Elementwise maximum of ``x`` over the participants of ``axis_name``.

    Parameters
    ----------
    x : array or pytree of arrays
        The values to compare.
    axis_name : hashable or tuple of hashables
        The name given to ``clnp_nn.parallel.pmap`` or ``clnp_grad.vmap``
        (``axis_name=``); a tuple of names reduces over each.

    Returns
    -------
    array or pytree of arrays
        The maximum, the same on every participant. Its derivative goes to the participants
        holding the maximum, split evenly among ties.

    Raises
    ------
    NameError
        ``axis_name`` is not bound by an enclosing ``pmap``/``vmap``.
    TypeError
        A leaf of ``x`` is not an array.

    Examples
    --------
    >>> import numpy, clnp, clnp_grad as cg
    >>> f = cg.vmap(lambda v: cg.pmax(v, "i"), axis_name="i")
    >>> print(numpy.asarray(f(clnp.asarray([1.0, 5.0, 2.0]))))
    [5. 5. 5.]
    """
    return _reduce_coll("pmax", x, axis_name)


def pmin(x: Any, axis_name: Any) -> Any:
    """Elementwise minimum of ``x`` over the participants of ``axis_name`` (as ``pmax``).

    Parameters
    ----------
    x : array or pytree of arrays
        The values to compare.
    axis_name : hashable or tuple of hashables
        The name given to ``clnp_nn.parallel.pmap`` or ``clnp_grad.vmap``
        (``axis_name=``); a tuple of names reduces over each.

    Returns
    -------
    array or pytree of arrays
        The minimum, the same on every participant (derivatives as for ``pmax``).

    Raises
    ------
    NameError
        ``axis_name`` is not bound by an enclosing ``pmap``/``vmap``.
    TypeError
        A leaf of ``x`` is not an array.

    Examples
    --------
    >>> import numpy, clnp, clnp_grad as cg
    >>> f = cg.vmap(lambda v: cg.pmin(v, "i"), axis_name="i")
    >>> print(numpy.asarray(f(clnp.asarray([1.0, 5.0, 2.0]))))
    [1. 1. 1.]
    """
    return _reduce_coll("pmin", x, axis_name)


def pmean(x: Any, axis_name: Any) -> Any:
    """Mean of ``x`` over the participants of ``axis_name``: ``psum(x) / axis size``.

    Parameters
    ----------
    x : array or pytree of arrays
        The values to average.
    axis_name : hashable or tuple of hashables
        The name given to ``clnp_nn.parallel.pmap`` or ``clnp_grad.vmap``
        (``axis_name=``); a tuple of names averages over all of them.

    Returns
    -------
    array or pytree of arrays
        The mean, the same on every participant.

    Raises
    ------
    NameError
        ``axis_name`` is not bound by an enclosing ``pmap``/``vmap``.
    TypeError
        A leaf of ``x`` is not an array or a number, or is a boolean array.

    Examples
    --------
    Data-parallel gradient averaging: each participant's gradients, replaced by their mean.

    >>> import numpy, clnp, clnp_grad as cg
    >>> grads = {"w": clnp.asarray([1.0, 5.0, 3.0])}      # one entry per participant
    >>> f = cg.vmap(lambda g: cg.pmean(g, "batch"), axis_name="batch")
    >>> print(numpy.asarray(f(grads)["w"]))
    [3. 3. 3.]
    """
    n = 1
    for nm in _names(axis_name):
        n *= axis_size(nm)
    return _tree_apply(psum(x, axis_name), lambda v: v / n)


def all_gather(x: Any, axis_name: Any, *, axis: int = 0, tiled: bool = False) -> Any:
    """Every participant's ``x``, stacked along a new axis ``axis`` (``tiled=True``:
    concatenated along the existing axis ``axis``); the same on every participant.

    Parameters
    ----------
    x : array or pytree of arrays
        This participant's values.
    axis_name : hashable
        One mapped axis name (from ``pmap``/``vmap``).
    axis : int, default 0
        Where the participants' values go: a new axis, or with ``tiled`` an existing one.
    tiled : bool, default False
        Concatenate along ``axis`` instead of stacking.

    Returns
    -------
    array or pytree of arrays
        ``x``'s shape with a new axis of the axis size at ``axis`` (``tiled``: axis ``axis``
        multiplied by it).

    Raises
    ------
    NameError
        ``axis_name`` is not bound by an enclosing ``pmap``/``vmap``.
    NotImplementedError
        A tuple of several axis names.
    TypeError
        A leaf of ``x`` is not an array, or ``axis`` is not an int.
    ValueError
        ``axis`` is out of range, or ``tiled`` with a 0-d input.

    Examples
    --------
    >>> import numpy, clnp, clnp_grad as cg
    >>> f = cg.vmap(lambda v: cg.all_gather(v, "i"), axis_name="i")
    >>> print(numpy.asarray(f(clnp.asarray([0.0, 1.0]))))
    [[0. 1.]
     [0. 1.]]
    """
    nm = _single(axis_name, "all_gather")

    def one(v: Any) -> Any:
        _check_array(v, "all_gather")
        lookup_axis(nm, "all_gather")
        nd = v.ndim if tiled else v.ndim + 1
        if tiled and v.ndim == 0:
            raise ValueError("all_gather: tiled=True needs an input with at least one axis")
        a = _norm_axis(axis, nd, "all_gather", "axis", tuple(v.shape))
        return primitive("all_gather").bind(v, axis_name=nm, axis=a, tiled=bool(tiled))
    return _tree_apply(x, one)


def psum_scatter(x: Any, axis_name: Any, *, scatter_dimension: int = 0,
                 tiled: bool = False) -> Any:
    """``psum`` of ``x``, of which participant ``i`` keeps block ``i`` along
    ``scatter_dimension``.

    Parameters
    ----------
    x : array or pytree of arrays
        This participant's values.
    axis_name : hashable
        One mapped axis name (from ``pmap``/``vmap``).
    scatter_dimension : int, default 0
        The axis split among the participants.
    tiled : bool, default False
        ``False``: that axis has the axis size and is removed; ``True``: it is divided into
        axis-size blocks.

    Returns
    -------
    array or pytree of arrays
        This participant's block of the sum.

    Raises
    ------
    NameError
        ``axis_name`` is not bound by an enclosing ``pmap``/``vmap``.
    NotImplementedError
        A tuple of several axis names.
    TypeError
        A leaf of ``x`` is not an array, or ``scatter_dimension`` is not an int.
    ValueError
        ``scatter_dimension`` is out of range, or the scattered axis does not match (or
        divide by) the number of participants.

    Examples
    --------
    A reduce-scatter (ZeRO-style): two participants' gradients of 4 entries are summed, and
    each keeps its block of 2.

    >>> import numpy, clnp, clnp_grad as cg
    >>> grads = clnp.asarray([[1.0, 2.0, 3.0, 4.0], [10.0, 20.0, 30.0, 40.0]])
    >>> f = cg.vmap(lambda g: cg.psum_scatter(g, "i", tiled=True), axis_name="i")
    >>> print(numpy.asarray(f(grads)))
    [[11. 22.]
     [33. 44.]]
    """
    nm = _single(axis_name, "psum_scatter")

    def one(v: Any) -> Any:
        _check_array(v, "psum_scatter")
        n = lookup_axis(nm, "psum_scatter").size
        d = _norm_axis(scatter_dimension, v.ndim, "psum_scatter", "scatter_dimension",
                       tuple(v.shape))
        size = v.shape[d]
        if (size % n if tiled else size != n):
            need = f"a multiple of {n}" if tiled else str(n)
            raise ValueError(f"psum_scatter: axis {d} of the input (shape {tuple(v.shape)}) "
                             f"must have size {need}, the size of axis {nm!r}")
        return primitive("psum_scatter").bind(v, axis_name=nm, scatter_dimension=d,
                                              tiled=bool(tiled))
    return _tree_apply(x, one)


def ppermute(x: Any, axis_name: Any, perm: Sequence[tuple[int, int]]) -> Any:
    """Send participant ``src``'s ``x`` to participant ``dst`` for each ``(src, dst)`` in
    ``perm``; a participant that receives nothing gets zeros.

    Parameters
    ----------
    x : array or pytree of arrays
        This participant's values.
    axis_name : hashable
        One mapped axis name (from ``pmap``/``vmap``).
    perm : sequence of (int, int)
        ``(source, destination)`` pairs of participant indices; each source and each
        destination at most once.

    Returns
    -------
    array or pytree of arrays
        The values received, of ``x``'s shape and dtype.

    Raises
    ------
    NameError
        ``axis_name`` is not bound by an enclosing ``pmap``/``vmap``.
    NotImplementedError
        A tuple of several axis names.
    TypeError
        ``perm`` is not a sequence of pairs, or a leaf of ``x`` is not an array.
    ValueError
        An index outside ``[0, axis size)``, or a repeated source or destination.

    Examples
    --------
    A ring shift over 3 participants: participant ``k`` sends to ``k + 1`` (mod 3).

    >>> import numpy, clnp, clnp_grad as cg
    >>> ring = [(k, (k + 1) % 3) for k in range(3)]
    >>> f = cg.vmap(lambda v: cg.ppermute(v, "i", ring), axis_name="i")
    >>> print(numpy.asarray(f(clnp.asarray([0.0, 1.0, 2.0]))))
    [2. 0. 1.]
    """
    nm = _single(axis_name, "ppermute")
    n = lookup_axis(nm, "ppermute").size
    try:
        pairs = tuple((int(s), int(d)) for s, d in perm)
    except (TypeError, ValueError):
        raise TypeError(f"ppermute: perm must be a sequence of (source, destination) pairs; "
                        f"got {perm!r}") from None
    for s, d in pairs:
        if not (0 <= s < n and 0 <= d < n):
            raise ValueError(f"ppermute: pair ({s}, {d}) is outside the axis {nm!r} of size {n}")
    if len({s for s, _ in pairs}) != len(pairs) or len({d for _, d in pairs}) != len(pairs):
        raise ValueError(f"ppermute: perm {list(pairs)} repeats a source or a destination")

    def one(v: Any) -> Any:
        _check_array(v, "ppermute")
        return primitive("ppermute").bind(v, axis_name=nm, perm=pairs)
    return _tree_apply(x, one)


def all_to_all(x: Any, axis_name: Any, split_axis: int, concat_axis: int, *,
               tiled: bool = False) -> Any:
    """Participant ``i`` receives block ``i`` (along ``split_axis``) of every participant's
    ``x``, joined along ``concat_axis`` in participant order.

    Parameters
    ----------
    x : array or pytree of arrays
        This participant's values.
    axis_name : hashable
        One mapped axis name (from ``pmap``/``vmap``).
    split_axis : int
        The axis split into one block per participant.
    concat_axis : int
        The axis the received blocks are joined along.
    tiled : bool, default False
        ``False``: ``split_axis`` has the axis size and is removed, and a new axis is
        inserted at ``concat_axis``; ``True``: ``split_axis`` is divided into blocks and they
        are concatenated.

    Returns
    -------
    array or pytree of arrays
        The blocks received from every participant.

    Raises
    ------
    NameError
        ``axis_name`` is not bound by an enclosing ``pmap``/``vmap``.
    NotImplementedError
        A tuple of several axis names.
    TypeError
        A leaf of ``x`` is not an array, or an axis is not an int.
    ValueError
        Axes out of range, or ``split_axis`` not matching the number of participants.

    Examples
    --------
    Two participants exchange blocks: participant ``i`` gets block ``i`` of each (a block
    transpose).

    >>> import numpy, clnp, clnp_grad as cg
    >>> x = clnp.asarray([[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]])
    >>> f = cg.vmap(lambda v: cg.all_to_all(v, "i", 0, 0, tiled=True), axis_name="i")
    >>> print(numpy.asarray(f(x)))
    [[0. 1. 4. 5.]
     [2. 3. 6. 7.]]
    """
    nm = _single(axis_name, "all_to_all")

    def one(v: Any) -> Any:
        _check_array(v, "all_to_all")
        n = lookup_axis(nm, "all_to_all").size
        shape = tuple(v.shape)
        sa = _norm_axis(split_axis, v.ndim, "all_to_all", "split_axis", shape)
        ca = _norm_axis(concat_axis, v.ndim, "all_to_all", "concat_axis", shape)
        if (shape[sa] % n if tiled else shape[sa] != n):
            need = f"a multiple of {n}" if tiled else str(n)
            raise ValueError(f"all_to_all: split_axis {sa} of the input (shape {shape}) must "
                             f"have size {need}, the size of axis {nm!r}")
        return primitive("all_to_all").bind(v, axis_name=nm, split_axis=sa, concat_axis=ca,
                                            tiled=bool(tiled))
    return _tree_apply(x, one)


def axis_index(axis_name: Any) -> Any:
    """This participant's index (int32, 0-d) along the mapped axis ``axis_name``.

    Parameters
    ----------
    axis_name : hashable
        One mapped axis name (from ``pmap``/``vmap``).

    Returns
    -------
    array
        A 0-d int32 array: ``k`` on participant ``k``.

    Raises
    ------
    NameError
        ``axis_name`` is not bound by an enclosing ``pmap``/``vmap``.
    NotImplementedError
        A tuple of several axis names.

    Examples
    --------
    >>> import numpy, clnp, clnp_grad as cg
    >>> f = cg.vmap(lambda v: v * cg.axis_index("i"), axis_name="i")   # participant k: v * k
    >>> print(numpy.asarray(f(clnp.asarray([1.0, 1.0, 1.0]))))
    [0. 1. 2.]
    """
    nm = _single(axis_name, "axis_index")
    lookup_axis(nm, "axis_index")
    return primitive("axis_index").bind(axis_name=nm)


# ------------------------------------------------------------------ differentiation rules
def _bind(name: str, x: Any, params: dict) -> Any:
    return primitive(name).bind(x, **params)


def _linear(name: str) -> None:
    R.JVP[name] = lambda primals, tangents, out, **p: _bind(name, tangents[0], p)


for _n in ("psum", "all_gather", "psum_scatter", "ppermute", "all_to_all"):
    _linear(_n)

R.VJP["psum"] = lambda ct, primals, out, **p: (_bind("psum", ct, p),)
R.VJP["all_gather"] = lambda ct, primals, out, *, axis_name, axis, tiled: (
    _bind("psum_scatter", ct, dict(axis_name=axis_name, scatter_dimension=axis, tiled=tiled)),)
R.VJP["psum_scatter"] = lambda ct, primals, out, *, axis_name, scatter_dimension, tiled: (
    _bind("all_gather", ct, dict(axis_name=axis_name, axis=scatter_dimension, tiled=tiled)),)
R.VJP["ppermute"] = lambda ct, primals, out, *, axis_name, perm: (
    _bind("ppermute", ct, dict(axis_name=axis_name, perm=tuple((d, s) for s, d in perm))),)
R.VJP["all_to_all"] = lambda ct, primals, out, *, axis_name, split_axis, concat_axis, tiled: (
    _bind("all_to_all", ct, dict(axis_name=axis_name, split_axis=concat_axis,
                                 concat_axis=split_axis, tiled=tiled)),)


def _select_weights(x: Any, out: Any, axis_name: Hashable) -> Any:
    """Where each participant attains the extremum, split evenly among ties."""
    hit = xp.astype(x == out, x.dtype)
    return hit / _bind("psum", hit, dict(axis_name=axis_name))


def _extremum_rules(name: str) -> None:
    def jvp(primals: tuple, tangents: tuple, out: Any, *, axis_name: Hashable) -> Any:
        w = _select_weights(primals[0], out, axis_name)
        return _bind("psum", tangents[0] * w, dict(axis_name=axis_name))

    def vjp(ct: Any, primals: tuple, out: Any, *, axis_name: Hashable) -> tuple:
        w = _select_weights(primals[0], out, axis_name)
        return (_bind("psum", ct, dict(axis_name=axis_name)) * w,)
    R.JVP[name], R.VJP[name] = jvp, vjp


_extremum_rules("pmax")
_extremum_rules("pmin")
R.NON_DIFFERENTIABLE.add("axis_index")


# ------------------------------------------------------------------------ batching rules
_AXIS_PARAMS = {"all_gather": ("axis",), "psum_scatter": ("scatter_dimension",),
                "all_to_all": ("split_axis", "concat_axis")}


def _vmap_rule(name: str) -> Callable[..., Any]:
    def rule(interp: Any, args: tuple, params: dict) -> Any:
        from ._vmap import BatchTracer, _materialize
        v, batched = interp.lift(args[0])
        mine = params["axis_name"] == getattr(interp, "axis_name", None)
        with set_interpreter(interp.prev):
            if mine:     # the vmapped axis is the collective's: all participants are here
                v = _materialize(v, batched, interp.size)
                out = STACKED[name](xp, v, **_param_dict(params))
                return BatchTracer(interp, out)
            if not batched:
                return primitive(name).bind(v, **params)
            p = dict(params)
            for k in _AXIS_PARAMS.get(name, ()):
                p[k] = p[k] + 1     # our batch axis leads; the collective's axes shift
            return BatchTracer(interp, primitive(name).bind(v, **p))
    return rule


def _vmap_axis_index(interp: Any, args: tuple, params: dict) -> Any:
    from ._vmap import BatchTracer
    with set_interpreter(interp.prev):
        if params["axis_name"] == getattr(interp, "axis_name", None):
            return BatchTracer(interp, xp.arange(interp.size, dtype=xp.int32,
                                                 device=getattr(interp, "device", None)))
        return primitive("axis_index").bind(**params)


for _n in COLLECTIVES[:-1]:
    HIGHER_ORDER[("vmap", _n)] = _vmap_rule(_n)
HIGHER_ORDER[("vmap", "axis_index")] = _vmap_axis_index

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute",
           "all_to_all", "axis_index", "axis_size", "axis_frame", "lookup_axis", "STACKED",
           "COLLECTIVES", "result_shape"]
