"""``vmap``: vectorising a function over a batch axis with a batching interpreter.

A batched value always carries its batch axis first (``BatchTracer.value`` has shape
``(B,) + per-example shape``); unbatched values are constants. Batching rules rewrite each
primitive to act on the whole batch at once, so the per-example function runs one kernel per
primitive, not one per example.
"""
from __future__ import annotations

import operator
from contextlib import nullcontext
from typing import Any, Callable, Sequence

import clnp as xp
from clnp._kernels import op_table as _ops
from clnp._core.prims import Primitive, current_interpreter, primitive, set_interpreter

from ._args import check_callable, lift
from ._axes import axis_frame
from ._core import HIGHER_ORDER, Interpreter, Tracer, mark_view
from ._tree import leaf_paths, tree_flatten, tree_unflatten


class BatchTracer(Tracer):
    __slots__ = ("value",)

    def __init__(self, interp: "BatchInterpreter", value: Any):
        self._interp, self.value = interp, value

    @property
    def _value(self) -> Any:
        return self.value

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.value.shape[1:])


class BatchInterpreter(Interpreter):
    name = "vmap"
    kind = "vmap"

    def __init__(self, prev: Any, size: int, axis_name: Any = None):
        super().__init__(prev)
        self.size = size
        self.axis_name = axis_name   # collectives naming it act across the batch
        self.device: Any = None      # the batched arguments' (axis_index's arange lands there)

    def lift(self, x: Any) -> tuple[Any, bool]:
        if isinstance(x, BatchTracer) and x._interp is self:
            return x.value, True
        self.check_foreign(x)
        return x, False

    def process(self, prim: Primitive, args: tuple, params: dict) -> Any:
        hrule = HIGHER_ORDER.get(("vmap", prim.name))
        if hrule is not None:
            return hrule(self, args, params)
        vals, batched = zip(*(self.lift(a) for a in args)) if args else ((), ())
        if not any(batched):
            with set_interpreter(self.prev):
                return prim.bind(*vals, **params)
        rule = BATCH.get(prim.name)
        if rule is None and prim.name in _ops.OPS:
            rule = _batch_elementwise
        if rule is None:
            raise NotImplementedError(f"vmap has no batching rule for the primitive "
                                      f"'{prim.name}' yet")
        with set_interpreter(self.prev):
            out = rule(prim, vals, batched, self.size, **params)
        if prim.multiple_results:
            # absent results (qr(mode="r")'s Q, ...) stay None, not traced Nones
            return tuple(None if o is None else BatchTracer(self, o) for o in out)
        return mark_view(BatchTracer(self, out), prim)


def _bind(name: str, *args: Any, **params: Any) -> Any:
    return primitive(name).bind(*args, **params)


def _materialize(v: Any, batched: bool, size: int) -> Any:
    """An explicitly batched copy of ``v`` (broadcast along a new leading axis if needed)."""
    if batched:
        return v
    if not hasattr(v, "shape"):
        raise NotImplementedError("vmap: Python scalars cannot be batched here")
    return xp.broadcast_to(xp.reshape(v, (1,) + tuple(v.shape)), (size,) + tuple(v.shape))


def _batch_elementwise(prim: Primitive, vals: tuple, batched: tuple, size: int,
                       **params: Any) -> Any:
    """Pad batched operands with unit dims after the batch axis so that unbatched operands
    broadcast against the per-example dims, as they did in the unbatched program."""
    rank = max((len(v.shape) - (1 if b else 0)) for v, b in zip(vals, batched)
               if hasattr(v, "shape"))
    args = []
    for v, b in zip(vals, batched):
        if b and len(v.shape) - 1 < rank:
            v = xp.reshape(v, (v.shape[0],) + (1,) * (rank - len(v.shape) + 1) + tuple(v.shape[1:]))
        elif not b and hasattr(v, "shape") and len(v.shape) < rank + 1:
            pass  # broadcasts from the right against (B, ...)
        args.append(v)
    return prim.bind(*args, **params)


BATCH: dict[str, Callable[..., Any]] = {}


def _shift(axes: Sequence[int]) -> tuple[int, ...]:
    return tuple(a + 1 for a in axes)


BATCH["reduce"] = lambda prim, vals, b, n, *, axes, **p: prim.bind(vals[0], axes=_shift(axes),
                                                                   **p)
BATCH["reshape"] = lambda prim, vals, b, n, *, shape: prim.bind(vals[0], shape=(n,) + shape)
BATCH["transpose"] = lambda prim, vals, b, n, *, perm: prim.bind(vals[0],
                                                                 perm=(0,) + _shift(perm))
BATCH["slice"] = lambda prim, vals, b, n, *, starts, steps, shape: prim.bind(
    vals[0], starts=(0,) + tuple(starts), steps=(1,) + tuple(steps), shape=(n,) + tuple(shape))
BATCH["convert_element_type"] = lambda prim, vals, b, n, **p: prim.bind(vals[0], **p)
BATCH["copy"] = lambda prim, vals, b, n, **p: prim.bind(vals[0], **p)
BATCH["stop_gradient"] = lambda prim, vals, b, n, **p: prim.bind(vals[0], **p)
BATCH["cumsum"] = lambda prim, vals, b, n, *, axis, **p: prim.bind(vals[0], axis=axis + 1, **p)
BATCH["cumprod"] = lambda prim, vals, b, n, *, axis, **p: prim.bind(vals[0], axis=axis + 1, **p)


def _batch_broadcast(prim: Primitive, vals: tuple, b: tuple, n: int, *, shape: tuple) -> Any:
    v = vals[0]
    per = tuple(v.shape[1:])
    v = xp.reshape(v, (n,) + (1,) * (len(shape) - len(per)) + per)
    return prim.bind(v, shape=(n,) + tuple(shape))


BATCH["broadcast_to"] = _batch_broadcast


def _batch_concat(prim: Primitive, vals: tuple, b: tuple, n: int, *, axis: int,
                  **p: Any) -> Any:
    args = [_materialize(v, bb, n) for v, bb in zip(vals, b)]
    return prim.bind(*args, axis=axis + 1, **p)


BATCH["concatenate"] = _batch_concat


def _moveaxis(x: Any, src: int, dst: int) -> Any:
    return xp.moveaxis(x, src, dst) if src != dst else x


def vmap(fun: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0,
         axis_size: int | None = None, axis_name: Any = None) -> Callable[..., Any]:
    """Vectorise ``fun`` over an axis of its arguments (JAX's ``vmap``).

    Parameters
    ----------
    fun : callable
        Function written for one example.
    in_axes : int, None or tuple, default 0
        The batch axis of each positional argument: an int for all of them, or a tuple with
        one entry (int or None) per argument; None marks an unbatched argument.
    out_axes : int or tuple, default 0
        Where the batch axis goes in the results.
    axis_size : int, optional
        The batch size; required when no argument is batched.
    axis_name : hashable, optional
        Names the batch axis for collectives (``psum(x, axis_name)`` and the others of
        ``clnp_grad``), as in JAX.

    Returns
    -------
    callable
        The batched function: results carry the batch axis at ``out_axes``.

    Raises
    ------
    TypeError
        ``fun`` is not callable, an entry of ``in_axes``/``out_axes`` is not an int or None,
        or (when called) a batched argument holds something that is not an array.
    ValueError
        When called: batched arguments differ in size along their ``in_axes``, an axis is
        out of range, or ``in_axes``/``out_axes`` has the wrong number of entries.

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> dot = lambda x, y: clnp.sum(x * y)
    >>> X = clnp.asarray([[1.0, 2.0], [3.0, 4.0]])
    >>> print(cg.vmap(dot, in_axes=(0, None))(X, clnp.asarray([1.0, 1.0])))
    [3. 7.]
    """
    check_callable("vmap", fun)
    for name, axes_arg in (("in_axes", in_axes), ("out_axes", out_axes)):
        for ax in (axes_arg if isinstance(axes_arg, (tuple, list)) else (axes_arg,)):
            if ax is not None and (isinstance(ax, bool) or not isinstance(ax, int)):
                raise TypeError(f"vmap: {name} must be an int, None, or a tuple of them (one "
                                f"per {'argument' if name == 'in_axes' else 'output'}); got "
                                f"{axes_arg!r} (an axis per leaf of a pytree is not supported: "
                                f"one axis maps a whole argument)")
    if axis_size is not None:
        try:
            ok = not isinstance(axis_size, bool) and operator.index(axis_size) >= 0
        except TypeError:
            ok = False
        if not ok:
            raise TypeError(f"vmap: axis_size must be a non-negative int or None; got "
                            f"{axis_size!r}")

    def wrapped(*args: Any) -> Any:
        axes = in_axes if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(args)
        if len(axes) != len(args):
            raise ValueError(f"vmap: in_axes has {len(axes)} entries for {len(args)} "
                             f"arguments")
        flat_args, sizes = [], set()
        for pos, (a, ax) in enumerate(zip(args, axes)):
            leaves, tdef = tree_flatten(a)
            if ax is not None:
                if any(isinstance(v, (bool, int, float, complex)) for v in leaves):
                    raise ValueError(f"vmap: argument {pos} is a Python scalar (or holds one), "
                                     f"which has no axis {ax} to map over; pass in_axes=None "
                                     f"for it (it is then the same for every batch element)")
                leaves = lift(leaves)[0]        # NumPy arrays as clnp arrays
            flat_args.append((leaves, tdef, ax))
            if ax is not None:
                for k, leaf in enumerate(leaves):
                    if not (hasattr(leaf, "shape") and hasattr(leaf, "ndim")):
                        path = leaf_paths(tdef, f"argument {pos}")[k]
                        raise TypeError(f"vmap: {path} is a {type(leaf).__name__}, which has "
                                        f"no axis {ax} to map over; pass arrays (or pytrees "
                                        f"of arrays), or in_axes=None for it")
                    if not (-leaf.ndim <= ax < max(leaf.ndim, 1)) or leaf.ndim == 0:
                        raise ValueError(f"vmap: in_axes {ax} is out of range for an argument "
                                         f"of shape {leaf.shape}")
                    sizes.add(leaf.shape[ax])
        if len(sizes) > 1:
            raise ValueError(f"vmap: batched arguments have different sizes along in_axes: "
                             f"{sorted(sizes)}")
        size = sizes.pop() if sizes else axis_size
        if size is None:
            raise ValueError("vmap: no argument is batched; pass axis_size")
        interp = BatchInterpreter(current_interpreter(), size, axis_name)
        interp.device = next((getattr(leaf, "device", None) for leaves, _, ax in flat_args
                              if ax is not None for leaf in leaves), None)
        frame = axis_frame(axis_name, size, "vmap") if axis_name is not None else nullcontext()
        try:
            call_args = []
            for leaves, tdef, ax in flat_args:
                if ax is None:
                    call_args.append(tree_unflatten(tdef, leaves))
                else:
                    call_args.append(tree_unflatten(tdef, [
                        BatchTracer(interp, _moveaxis(leaf, ax % leaf.ndim, 0))
                        for leaf in leaves]))
            with frame, set_interpreter(interp):
                out = fun(*call_args)
        finally:
            interp.active = False
        o_flat, o_def = tree_flatten(out)
        oaxes = out_axes if isinstance(out_axes, (tuple, list)) else (out_axes,) * len(o_flat)
        if len(oaxes) != len(o_flat):
            raise ValueError(f"vmap: out_axes has {len(oaxes)} entries for {len(o_flat)} "
                             f"outputs (leaves of the result)")
        res = []
        for o, oax in zip(o_flat, oaxes):
            if isinstance(o, BatchTracer) and o._interp is interp:
                v = o.value
            else:
                v = _materialize(o, False, size)
            if oax is not None and not -v.ndim <= oax < v.ndim:
                raise ValueError(f"vmap: out_axes {oax} is out of range for an output of "
                                 f"shape {tuple(v.shape[1:])} ({v.ndim} dimensions with the "
                                 f"batch axis)")
            res.append(v if oax in (0, None) else _moveaxis(v, 0, oax % v.ndim))
        return tree_unflatten(o_def, res)
    wrapped.__name__ = f"vmap({getattr(fun, '__name__', 'f')})"
    return wrapped


def _batch_dot_general(prim: Primitive, vals: tuple, b: tuple, n: int, *,
                       dimension_numbers: Any, **p: Any) -> Any:
    (lc, rc), (lb, rb) = dimension_numbers
    lhs, rhs = vals
    up = lambda dims: tuple(d + 1 for d in dims)  # noqa: E731
    if b[0] and b[1]:
        dn = ((up(lc), up(rc)), ((0,) + up(lb), (0,) + up(rb)))
        return prim.bind(lhs, rhs, dimension_numbers=dn, **p)
    if b[0]:  # the vmap axis is lhs's first free dim
        out = prim.bind(lhs, rhs, dimension_numbers=((up(lc), tuple(rc)), (up(lb), tuple(rb))),
                        **p)
        return _moveaxis(out, len(lb), 0)
    lhs_free = lhs.ndim - len(lc) - len(lb)
    out = prim.bind(lhs, rhs, dimension_numbers=((tuple(lc), up(rc)), (tuple(lb), up(rb))), **p)
    return _moveaxis(out, len(lb) + lhs_free, 0)


BATCH["dot_general"] = _batch_dot_general


def _batch_gather(prim: Primitive, vals: tuple, b: tuple, n: int, **p: Any) -> Any:
    """Index the batch axis too: an iota over the batch joins the index arrays."""
    x = _materialize(vals[0], b[0], n)
    idx = []
    for v, bb in zip(vals[1:], b[1:]):
        idx.append(v if bb else xp.broadcast_to(xp.reshape(v, (1,) + tuple(v.shape)),
                                                (n,) + tuple(v.shape)))
    ndim = max(len(i.shape) for i in idx)
    idx = [xp.reshape(i, (n,) + (1,) * (ndim - len(i.shape)) + tuple(i.shape[1:])) for i in idx]
    bidx = xp.reshape(xp.arange(n, device=x.device), (n,) + (1,) * (ndim - 1))
    return prim.bind(x, bidx, *idx, **p)


BATCH["gather"] = _batch_gather
