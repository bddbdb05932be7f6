"""``__getitem__``/``__setitem__`` with NumPy semantics, ``take`` and ``take_along_axis``.

Basic indexing (integers, slices, ``...``, ``None``) returns a view (one ``slice`` and at most
one ``reshape`` primitive, no kernel). Advanced indexing (integer and boolean arrays, and Python
bools) binds ``gather``; assignment through advanced indices scatters. Following NumPy, when any
advanced index is present the integers count as advanced indices too, and the broadcast index
dimensions replace the indexed block when all advanced indices are adjacent in the key, or go
first otherwise.

Host synchronisation: index arrays that come from the host (lists, NumPy arrays) are checked
on the host and need no device read. Device integer index arrays are wrapped and checked by
the offsets kernel, and its out-of-range flag is read back (one synchronisation: NumPy raises
IndexError for an out-of-range index, before anything is written). Boolean masks have a
data-dependent result shape, so they go through ``nonzero``, which reads the mask to the host;
``x[mask] = scalar`` instead runs as one ``where`` kernel with no host read. Under
transformations (tracers) nothing is read: negative indices wrap and nothing is checked.
"""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from .._core import dtypes as dt
from .._core.array import Array
from .._core.checks import check_array, check_scalar_fits, is_array, normalize_axis
from .._core.prims import primitive
from .._core.dtypes import kind as dkind
from .._core import attached as _attached

__all__ = ["take", "take_along_axis"]

_VALID = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer "
          "or boolean arrays are valid indices")

# Entry kinds of a normalised key. 'iarr'/'barr' are device arrays, 'hiarr'/'hbarr' host
# (NumPy) arrays that never need a device read; 'bool' is a Python-level boolean scalar.
_ADVANCED = ("bool", "iarr", "barr", "hiarr", "hbarr")


def _classify(k: Any) -> tuple[str, Any]:
    """One key entry -> (kind, payload); IndexError for anything NumPy would reject."""
    if k is None:
        return "none", None
    if k is Ellipsis:
        return "ellipsis", None
    if isinstance(k, slice):
        return "slice", k
    if isinstance(k, (bool, np.bool_)):
        return "bool", bool(k)
    if is_array(k):
        kind = dkind(k.dtype)
        if kind == "b":
            if k.ndim == 0:
                # a 0-d mask adds an axis of length 1 or 0: a data-dependent shape
                return "bool", bool(k)
            return "barr", k
        if kind in "iu":
            if k.ndim == 0 and isinstance(k, Array):
                return "int", operator.index(k)   # NumPy treats 0-d integer arrays as ints
            return "iarr", k
        raise IndexError(f"arrays used as indices must be of integer or boolean type; got "
                         f"{k.dtype}")
    if isinstance(k, (list, tuple, np.ndarray)):
        try:
            host = np.asarray(k)
        except ValueError:
            raise IndexError(f"{_VALID}; got a ragged sequence") from None
        if host.size == 0 and dkind(host.dtype) == "f":
            host = host.astype(np.int64)   # [] is an empty integer index, as in NumPy
        if dkind(host.dtype) == "b":
            return ("bool", bool(host)) if host.ndim == 0 else ("hbarr", host)
        if dkind(host.dtype) in "iu":
            return ("int", int(host)) if host.ndim == 0 else ("hiarr", host)
        raise IndexError(f"arrays used as indices must be of integer or boolean type; got "
                         f"{host.dtype}")
    try:
        return "int", operator.index(k)
    except TypeError:
        raise IndexError(f"{_VALID}; got {type(k).__name__}") from None


def _consumed(kind: str, k: Any) -> int:
    if kind in ("int", "slice", "iarr", "hiarr"):
        return 1
    if kind in ("barr", "hbarr"):
        return k.ndim
    return 0


def _normalize(x: Any, key: Any) -> list[tuple[str, Any]]:
    """The key as a list of classified entries with the ellipsis expanded."""
    if not isinstance(key, tuple):
        key = (key,)
    entries = [_classify(k) for k in key]
    n_ell = sum(1 for kind, _ in entries if kind == "ellipsis")
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(_consumed(kind, k) for kind, k in entries)
    if consumed > x.ndim:
        raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional, but "
                         f"{consumed} were indexed")
    fill = [("slice", slice(None))] * (x.ndim - consumed)
    if n_ell:
        # an ellipsis that stands for no dims stays as a marker: NumPy counts it as separating
        # advanced indices (x[m, ..., 0] puts the broadcast dims first)
        i = next(i for i, (kind, _) in enumerate(entries) if kind == "ellipsis")
        return entries[:i] + (fill or [("ellipsis", None)]) + entries[i + 1:]
    return entries + fill


class _Plan:
    """A view of ``x`` holding every basic index, plus the advanced entries on its dims."""
    __slots__ = ("view", "adv", "advanced", "adjacent", "insert_at")

    def __init__(self, view: Any, adv: list, advanced: bool, adjacent: bool, insert_at: int):
        self.view, self.adv, self.advanced = view, adv, advanced
        self.adjacent, self.insert_at = adjacent, insert_at


def _plan(x: Any, key: Any) -> _Plan:
    """Apply every basic index of ``key`` as one view; record the advanced entries, whether
    they are adjacent in the key and where NumPy puts their broadcast dims."""
    entries = _normalize(x, key)
    advanced = any(kind in _ADVANCED for kind, _ in entries)
    starts: list[int] = []
    steps: list[int] = []
    sliced: list[int] = []
    view_shape: list[int] = []
    # (kind, payload, first view dim, first axis of x) for each advanced entry except ints
    adv: list[tuple[str, Any, int, int]] = []
    adv_pos: list[int] = []   # key positions of all advanced entries, ints included
    dim = 0
    for pos, (kind, k) in enumerate(entries):
        if kind == "ellipsis":
            continue
        if kind == "none":
            view_shape.append(1)
        elif kind == "bool":
            adv.append((kind, k, len(view_shape), dim))
            adv_pos.append(pos)
            view_shape.append(1)
        elif kind == "slice":
            n = x.shape[dim]
            start, stop, step = k.indices(n)
            length = len(range(start, stop, step))
            starts.append(start if length else 0)
            steps.append(step)
            sliced.append(length)
            view_shape.append(length)
            dim += 1
        elif kind == "int":
            n = x.shape[dim]
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {dim} with size {n}")
            starts.append(k % n)
            steps.append(1)
            sliced.append(1)
            if advanced:
                adv_pos.append(pos)
            dim += 1
        else:
            kd = _consumed(kind, k)
            if kind in ("barr", "hbarr"):
                for j in range(kd):
                    # NumPy lets an empty mask dim stand against any axis (it selects nothing)
                    if k.shape[j] != x.shape[dim + j] and k.shape[j] != 0:
                        raise IndexError(
                            f"boolean index did not match indexed array along axis {dim + j}; "
                            f"size of axis is {x.shape[dim + j]} but size of corresponding "
                            f"boolean axis is {k.shape[j]}")
            adv.append((kind, k, len(view_shape), dim))
            adv_pos.append(pos)
            for j in range(kd):
                starts.append(0)
                steps.append(1)
                sliced.append(x.shape[dim + j])
                view_shape.append(x.shape[dim + j])
            dim += kd
    y = x
    if tuple(sliced) != x.shape or any(starts) or any(s != 1 for s in steps):
        y = primitive("slice").bind(x, starts=tuple(starts), steps=tuple(steps),
                                    shape=tuple(sliced))
    if tuple(view_shape) != y.shape:
        y = primitive("reshape").bind(y, shape=tuple(view_shape))
    adjacent = adv_pos == list(range(adv_pos[0], adv_pos[0] + len(adv_pos))) if adv_pos \
        else True
    insert_at = 0
    if adv_pos and adjacent:
        insert_at = sum(1 for kind, _ in entries[:adv_pos[0]] if kind in ("slice", "none"))
    return _Plan(y, adv, advanced, adjacent, insert_at)


def _upload_index(host: np.ndarray, device: Any) -> Any:
    from .creation import asarray
    return asarray(np.asarray(host, dtype=np.int64, order="C"), device=device)


class _Indices:
    """Integer index arrays for the view dims ``dims``, the x axis of each (for messages), and
    whether they are all known to be in bounds (host-checked or produced by ``nonzero``)."""
    __slots__ = ("arrays", "dims", "axes", "in_bounds")

    def __init__(self, arrays: list, dims: list[int], axes: list[int], in_bounds: bool):
        self.arrays, self.dims, self.axes, self.in_bounds = arrays, dims, axes, in_bounds


def _index_arrays(plan: _Plan) -> _Indices:
    """Turn the plan's advanced entries into integer index arrays.

    Host arrays are checked and wrapped on the host (no device read); device integer arrays
    are wrapped and checked by the offsets kernel (one flag read). As in NumPy, when the
    broadcast index shape is empty nothing is selected and nothing raises."""
    y = plan.view
    device = y.device
    items: list[tuple[Any, int, int, bool]] = []   # (array, x axis, size, known in bounds)
    dims: list[int] = []
    for kind, k, vdim, axis in plan.adv:
        if kind in ("iarr", "barr") and k.device is not device:
            raise ValueError(f"index array is on {k.device}, the indexed array on {device}; "
                             f"move one with to_device()")
        if kind == "bool":
            items.append((np.zeros(1 if k else 0, np.int64), axis, 1, True))
            dims.append(vdim)
        elif kind == "hbarr":
            for j, a in enumerate(np.nonzero(k)):
                items.append((a, axis + j, y.shape[vdim + j], True))
                dims.append(vdim + j)
        elif kind == "barr":
            for j, a in enumerate(primitive("nonzero").bind(k)):
                items.append((a, axis + j, y.shape[vdim + j], True))
                dims.append(vdim + j)
        else:
            items.append((k, axis, y.shape[vdim], False))
            dims.append(vdim)
    shapes = [a.shape for a, *_ in items]
    from .._core.eager import broadcast_shapes
    try:
        bshape = broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together "
                         "with shapes " + " ".join(str(s) for s in shapes)) from None
    empty = math.prod(bshape) == 0
    arrays: list[Any] = []
    in_bounds = True
    for a, axis, n, ok in items:
        if isinstance(a, np.ndarray):
            if not ok and a.size and not empty:
                _check_host_bounds(a, axis, n, "")
            arrays.append(_upload_index(a, device))
        else:
            in_bounds = in_bounds and ok
            arrays.append(a)
    return _Indices(arrays, dims, [axis for _, axis, _, _ in items], in_bounds or empty)


def _check_host_bounds(a: np.ndarray, axis: int, n: int, prefix: str) -> None:
    lo, hi = int(a.min()), int(a.max())
    if lo < -n or hi >= n:
        raise IndexError(f"{prefix}index {lo if lo < -n else hi} is out of bounds for axis "
                         f"{axis} with size {n}")


def _bind_indexed(name: str, axes: list[int], fn: Any, *args: Any, **params: Any) -> Any:
    """Run a gather/scatter, re-raising an out-of-range index with the user's axis."""
    from .._core.eager import IndexOutOfBounds
    try:
        return fn(*args, **params)
    except IndexOutOfBounds as e:
        raise IndexError(f"{name}index {e.value} is out of bounds for axis {axes[e.j]} with "
                         f"size {e.size}") from None


def _gather_order(plan: _Plan, dims: list[int]) -> Any:
    """The view with the advanced dims first (in key order), the others after."""
    from .manipulation import permute_dims
    y = plan.view
    rest = [d for d in range(y.ndim) if d not in dims]
    return permute_dims(y, tuple(dims) + tuple(rest))


def _bool_only(plan: _Plan) -> Any:
    """Advanced indices that are only Python bools (and ints): still a view, with one axis of
    length 1 (all True) or 0 (any False) at NumPy's position."""
    y = plan.view
    bool_dims = {vdim for _, _, vdim, _ in plan.adv}
    keep = [n for d, n in enumerate(y.shape) if d not in bool_dims]
    pos = plan.insert_at if plan.adjacent else 0
    shape = tuple(keep[:pos]) + (1,) + tuple(keep[pos:])
    y = primitive("reshape").bind(y, shape=shape)
    if all(k for _, k, _, _ in plan.adv):
        return y
    return primitive("slice").bind(y, starts=(0,) * y.ndim, steps=(1,) * y.ndim,
                                   shape=tuple(0 if d == pos else n for d, n in enumerate(shape)))


def _move_block(out: Any, nb: int, plan: _Plan) -> Any:
    """Move the leading ``nb`` broadcast dims of a gather result to NumPy's position."""
    if not plan.adjacent or plan.insert_at == 0:
        return out
    from .manipulation import permute_dims
    lead = plan.insert_at
    perm = tuple(range(nb, nb + lead)) + tuple(range(nb)) + tuple(range(nb + lead, out.ndim))
    return permute_dims(out, perm)


def getitem(x: Any, key: Any) -> Any:
    """``x[key]`` with NumPy semantics: a view for basic indices, a new array (gather) for
    advanced ones. Boolean masks read the mask to the host (data-dependent shape)."""
    plan = _plan(x, key)
    if not plan.advanced:
        return plan.view
    if all(kind == "bool" for kind, *_ in plan.adv):
        return _bool_only(plan)
    ind = _index_arrays(plan)
    out = _bind_indexed("", ind.axes, primitive("gather").bind, _gather_order(plan, ind.dims),
                        *ind.arrays, in_bounds=ind.in_bounds)
    nb = out.ndim - (plan.view.ndim - len(ind.dims))
    return _move_block(out, nb, plan)


def _value_for(x: Any, value: Any) -> Any:
    """The assigned value as a device array on x's device or a validated Python scalar
    (NumPy's casting: floats truncate into integer arrays, complex into real raises)."""
    from .._core.checks import unwrap_scalar
    if isinstance(value, np.ndarray) and value.ndim:
        from .creation import asarray
        value = asarray(value, device=x.device)
    value = unwrap_scalar(value)
    if isinstance(value, (list, tuple)):
        from .creation import asarray
        value = asarray(value, dtype=x.dtype, device=x.device)
    if is_array(value):
        if dkind(value.dtype) == "c" and dkind(x.dtype) != "c":
            raise TypeError(f"__setitem__: cannot assign a {value.dtype} value to a {x.dtype} "
                            f"array (take real() or abs() first)")
        if value.device is not x.device:
            raise ValueError(f"__setitem__: value is on {value.device}, the array on "
                             f"{x.device}; move one with to_device()")
        return value
    if not isinstance(value, (bool, int, float, complex)):
        raise TypeError(f"__setitem__: value must be an array or a Python scalar; got "
                        f"{type(value).__name__}")
    if isinstance(value, complex) and dkind(x.dtype) == "b":
        value = bool(value)           # NumPy's: a bool array takes any scalar's truth value
    if isinstance(value, complex) and dkind(x.dtype) != "c":
        raise TypeError(f"__setitem__: cannot assign a complex value to a {x.dtype} array")
    if isinstance(value, float) and dkind(x.dtype) in "iu":
        if math.isnan(value):
            raise ValueError(f"__setitem__: cannot convert float NaN to {x.dtype}")
        if math.isinf(value):
            raise OverflowError(f"__setitem__: cannot convert float {value} to {x.dtype}")
        value = int(value)
    if isinstance(value, float) and dkind(x.dtype) == "b":
        value = bool(value)
    if isinstance(value, int) and not isinstance(value, bool) and dkind(x.dtype) == "b":
        value = bool(value)
    check_scalar_fits(value, x.dtype, "__setitem__")
    return value


def _check_value_shape(value: Any, shape: tuple[int, ...]) -> None:
    if not is_array(value):
        return
    from .._core.eager import broadcast_shapes
    try:
        ok = broadcast_shapes(value.shape, shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"shape mismatch: value array of shape {value.shape} could not be "
                         f"broadcast to indexing result of shape {shape}")


def setitem(x: Any, key: Any, value: Any) -> None:
    """``x[key] = value`` in place (NumPy semantics). Every check (index bounds, value shape
    and dtype) runs before anything is written, so a failing assignment leaves ``x`` unchanged.
    Repeated integer indices keep the last of their values in C order, as NumPy's do, on every
    device."""
    if not isinstance(x, Array):
        raise TypeError("in-place assignment on a traced value: use x = x.at[idx].set(v) "
                        "style updates inside transformations")
    value = _value_for(x, value)
    from .._core.eager import copy_into, ew_apply
    from .._routines.scatter import scatter_into
    plan = _plan(x, key)
    if not plan.advanced or all(kind == "bool" for kind, *_ in plan.adv):
        view = _bool_only(plan) if plan.advanced else plan.view
        _check_value_shape(value, view.shape)
        copy_into(view, value, None if is_array(value) else x.dtype)
        return
    y = plan.view
    if len(plan.adv) == 1 and plan.adv[0][0] in ("barr", "hbarr") and plan.adv[0][1].size \
            and (not is_array(value) or value.size == 1 and value.ndim <= 1):
        # x[mask] = scalar: one where kernel, no host read of the mask
        kind, mask, vdim, _ = plan.adv[0]
        if kind == "hbarr":
            from .creation import asarray
            mask = asarray(mask, device=x.device)
        if is_array(value) and value.ndim:
            value = primitive("reshape").bind(value, shape=())
        m = primitive("reshape").bind(mask, shape=mask.shape + (1,) * (y.ndim - vdim - mask.ndim))
        d = x.dtype
        ew_apply("where", [m, value, y], d, d, [dt.bool_, d, d], out=y)
        return
    ind = _index_arrays(plan)
    arrays, dims = ind.arrays, ind.dims
    from .._core.eager import broadcast_shapes
    bshape = broadcast_shapes(*(a.shape for a in arrays))
    yg = _gather_order(plan, dims)
    rest = yg.shape[len(dims):]
    nb = len(bshape)
    lead = plan.insert_at if plan.adjacent else 0
    res_shape = rest[:lead] + bshape + rest[lead:]
    _check_value_shape(value, res_shape)
    if is_array(value) and lead:
        from .manipulation import broadcast_to, permute_dims
        v = broadcast_to(value, res_shape)
        perm = tuple(range(lead, lead + nb)) + tuple(range(lead)) + \
            tuple(range(lead + nb, len(res_shape)))
        value = permute_dims(v, perm)
    _bind_indexed("", ind.axes, scatter_into, yg, arrays, value, in_bounds=ind.in_bounds)


def _take_along(x: Any, ax: int, idx: Any, in_bounds: bool, fname: str) -> Any:
    """Gather ``idx`` (any shape) along axis ``ax`` of ``x``: the result has shape
    ``x.shape[:ax] + idx.shape + x.shape[ax + 1:]``."""
    from .manipulation import permute_dims
    y = permute_dims(x, (ax,) + tuple(d for d in range(x.ndim) if d != ax))
    out = _bind_indexed(f"{fname}: ", [ax], primitive("gather").bind, y, idx,
                        in_bounds=in_bounds)
    if ax == 0:
        return out
    nb = idx.ndim
    perm = tuple(range(nb, nb + ax)) + tuple(range(nb)) + tuple(range(nb + ax, out.ndim))
    return permute_dims(out, perm)


def _index_operand(indices: Any, x: Any, fname: str, n: int, axis: int) -> tuple[Any, bool]:
    """Indices as a device integer array, and whether they are known to be in bounds (host
    data is checked on the host; device arrays are checked by the offsets kernel)."""
    # NumPy's classes: take casts the indices (TypeError), take_along_axis indexes (IndexError)
    bad = IndexError if fname == "take_along_axis" else TypeError
    if is_array(indices):
        if dkind(indices.dtype) not in "iu":
            raise bad(f"{fname}: indices must have an integer dtype; got {indices.dtype}")
        if indices.device is not x.device:
            raise ValueError(f"{fname}: indices are on {indices.device}, x on {x.device}")
        return indices, False
    host = np.asarray(indices)
    if host.size == 0 and dkind(host.dtype) == "f":
        host = host.astype(np.int64)
    if dkind(host.dtype) not in "iu":
        if dkind(host.dtype) not in "biufc":      # not numbers at all (a dict, strings)
            raise TypeError(f"{fname}: indices must be an integer array; got "
                            f"{type(indices).__name__}")
        raise bad(f"{fname}: indices must have an integer dtype; got {host.dtype}")
    if host.size:
        _check_host_bounds(host, axis, n, f"{fname}: ")
    return _upload_index(host, x.device), True


def take(x: Any, indices: Any, /, *, axis: int | None = None) -> Any:
    """Elements of ``x`` at integer ``indices`` along ``axis``.

    Parameters
    ----------
    x : array
        Input array.
    indices : array
        Integer indices; negative ones count from the end.
    axis : int, optional
        The axis (the flattened array when None, as NumPy).
    out : array, optional
        NumPy's output array: the result is written to it and returned.
    mode : {'raise', 'wrap', 'clip'}, default 'raise'
        NumPy's handling of out-of-range indices: raise IndexError, wrap around, or clip to
        the valid range.

    Returns
    -------
    array
        A new array of shape ``x.shape[:axis] + indices.shape + x.shape[axis + 1:]``.

    Raises
    ------
    IndexError
        An index out of range (for device indices the check reads one flag back).
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.take(clnp.asarray([10, 20, 30]), clnp.asarray([2, 0])))
    [30 10]
    >>> print(clnp.take(clnp.asarray([[1, 2], [3, 4]]), clnp.asarray([1]), axis=1))
    [[2]
     [4]]
    """
    check_array(x, "take")
    if axis is None:
        if x.ndim != 1:
            from .manipulation import reshape
            x = reshape(x, (-1,))
        axis = 0
    if x.ndim == 0:
        raise ValueError("take: x must have at least one dimension")
    ax = normalize_axis(axis, x.ndim, "take")
    idx, in_bounds = _index_operand(indices, x, "take", x.shape[ax], ax)
    return _take_along(x, ax, idx, in_bounds, "take")


def take_along_axis(x: Any, indices: Any, /, *, axis: int = -1) -> Any:
    """Pick values from ``x`` at ``indices`` along ``axis``.

    Parameters
    ----------
    x : array
        Input array.
    indices : array
        Integer indices with ``x``'s number of dimensions, broadcasting with ``x`` on
        the other axes.
    axis : int, default -1
        The axis.

    Returns
    -------
    array
        The picked values.

    Raises
    ------
    IndexError
        An index out of range (one flag read for device indices).
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([[3, 1], [2, 5]])
    >>> print(clnp.take_along_axis(x, clnp.argsort(x, axis=1), axis=1))
    [[1 3]
     [2 5]]
    """
    check_array(x, "take_along_axis")
    if x.ndim == 0:
        raise ValueError("take_along_axis: x must have at least one dimension")
    ax = normalize_axis(axis, x.ndim, "take_along_axis")
    idx, in_bounds = _index_operand(indices, x, "take_along_axis", x.shape[ax], ax)
    if idx.ndim != x.ndim:
        raise ValueError(f"take_along_axis: indices (shape {idx.shape}) and x (shape "
                         f"{x.shape}) must have the same number of dimensions")
    from .._core.eager import broadcast_shapes
    other_x = tuple(1 if d == ax else n for d, n in enumerate(x.shape))
    other_i = tuple(1 if d == ax else n for d, n in enumerate(idx.shape))
    try:
        bshape = broadcast_shapes(other_x, other_i)
    except ValueError:
        raise ValueError(f"take_along_axis: indices of shape {idx.shape} do not broadcast with "
                         f"x of shape {x.shape} outside axis {ax}") from None
    from .creation import arange
    from .manipulation import broadcast_to
    arrays = []
    for d in range(x.ndim):
        if d == ax:
            arrays.append(idx)
        else:
            shape = [1] * x.ndim
            shape[d] = bshape[d]
            arrays.append(primitive("reshape").bind(arange(bshape[d], device=x.device),
                                                    shape=tuple(shape)))
    xb = broadcast_to(x, tuple(n if d == ax else bshape[d] for d, n in enumerate(x.shape)))
    return _bind_indexed("take_along_axis: ", list(range(x.ndim)), primitive("gather").bind, xb,
                         *arrays, in_bounds=in_bounds)

# the core's methods implemented here (clnp/_core/attached.py)
_attached.attach(getitem=getitem, setitem=setitem)
