"""``__getitem__``/``__setitem__`` (NumPy semantics), ``take`` and ``take_along_axis``."""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from . import _dtypes as dt
from ._array import Array
from ._helpers import check_array, check_scalar_fits, is_array, normalize_axis
from ._prims import primitive

__all__ = ["take", "take_along_axis"]


def _as_index_array(k: Any, device: Any) -> Any:
    """Lists and NumPy arrays used as indices become device arrays."""
    if isinstance(k, (list, np.ndarray)) and not isinstance(k, bool):
        from ._creation_functions import asarray
        host = np.asarray(k)
        if host.dtype.kind not in "biu" and host.size:
            raise IndexError(f"arrays used as indices must be of integer or boolean type; got "
                             f"{host.dtype}")
        if host.size == 0 and host.dtype.kind == "f":
            host = host.astype(np.int64)
        return asarray(host, device=device)
    return k


def _expand_key(x: Any, key: Any) -> tuple[list, bool]:
    """Normalise ``key`` to a list of per-item entries; report whether any is advanced."""
    if not isinstance(key, tuple):
        key = (key,)
    key = [_as_index_array(k, x.device) for k in key]
    advanced = False
    consumed = 0
    n_ellipsis = 0
    for k in key:
        if k is Ellipsis:
            n_ellipsis += 1
        elif k is None:
            pass
        elif is_array(k):
            if k.dtype == dt.bool_:
                consumed += max(k.ndim, 0)
                advanced = True
            elif k.dtype.kind in "iu":
                consumed += 1
                advanced = True
            else:
                raise IndexError(f"arrays used as indices must be of integer or boolean type; "
                                 f"got {k.dtype}")
        elif isinstance(k, bool):
            advanced = True
        elif isinstance(k, slice):
            consumed += 1
        else:
            try:
                operator.index(k)
            except TypeError:
                raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and "
                                 f"integer or boolean arrays are valid indices; got "
                                 f"{type(k).__name__}") from None
            consumed += 1
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > x.ndim:
        raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional, but "
                         f"{consumed} were indexed")
    out: list = []
    for k in key:
        if k is Ellipsis:
            out += [slice(None)] * (x.ndim - consumed)
        else:
            out.append(k)
    if n_ellipsis == 0:
        out += [slice(None)] * (x.ndim - consumed)
    return out, advanced


def _basic(x: Any, key: list) -> tuple[Any, list]:
    """Apply ints, slices and None as a view; advanced entries become full slices that are
    reported (with their positions in the result) for the gather step."""
    starts, steps, shape = [], [], []
    final_shape: list[int] = []
    adv: list[tuple[int, Any]] = []
    dim = 0
    for k in key:
        if k is None:
            final_shape.append(1)
            continue
        if is_array(k) or isinstance(k, bool):
            if isinstance(k, bool) or k.dtype == dt.bool_:
                kd = 0 if isinstance(k, bool) else k.ndim
                if not isinstance(k, bool) and k.shape != x.shape[dim:dim + kd]:
                    raise IndexError(f"boolean index of shape {k.shape} does not match the "
                                     f"indexed dimensions {x.shape[dim:dim + kd]}")
                adv.append((len(final_shape), k))
                for _ in range(kd):
                    starts.append(0), steps.append(1), shape.append(x.shape[dim])
                    final_shape.append(x.shape[dim])
                    dim += 1
                continue
            adv.append((len(final_shape), k))
            starts.append(0), steps.append(1), shape.append(x.shape[dim])
            final_shape.append(x.shape[dim])
            dim += 1
            continue
        n = x.shape[dim]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            length = len(range(start, stop, step))
            starts.append(start if length else 0), steps.append(step), shape.append(length)
            final_shape.append(length)
        else:
            i = operator.index(k)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {dim} with size {n}")
            starts.append(i % n), steps.append(1), shape.append(1)
        dim += 1
    if tuple(shape) != x.shape or any(s != 0 for s in starts) or any(s != 1 for s in steps):
        x = primitive("slice").bind(x, starts=tuple(starts), steps=tuple(steps), shape=tuple(shape))
    if tuple(final_shape) != x.shape:
        from ._manipulation_functions import reshape
        x = reshape(x, tuple(final_shape))
    return x, adv


def _advanced_plan(x: Any, adv: list) -> tuple[Any, list, list[int], bool]:
    """Turn boolean entries into integer index arrays; return (x, index arrays, their dims,
    whether those dims are adjacent)."""
    arrays, dims = [], []
    for pos, k in adv:
        if isinstance(k, bool):
            raise IndexError("a Python bool as index is only supported without other advanced "
                             "indices")
        if k.dtype == dt.bool_:
            nz = primitive("nonzero").bind(k)
            for j, a in enumerate(nz):
                arrays.append(a)
                dims.append(pos + j)
        else:
            arrays.append(k)
            dims.append(pos)
    adjacent = dims == list(range(dims[0], dims[0] + len(dims))) if dims else True
    return x, arrays, dims, adjacent


def getitem(x: Any, key: Any) -> Any:
    key_list, advanced = _expand_key(x, key)
    if not advanced:
        return _basic(x, key_list)[0]
    if any(isinstance(k, bool) for k in key_list):
        return _bool_scalar_index(x, key_list)
    y, adv = _basic(x, key_list)
    y, arrays, dims, adjacent = _advanced_plan(y, adv)
    from ._manipulation_functions import permute_dims
    rest = [d for d in range(y.ndim) if d not in dims]
    y = permute_dims(y, tuple(dims) + tuple(rest))
    out = primitive("gather").bind(y, *arrays)
    if adjacent and dims[0] > 0:
        nb = out.ndim - len(rest)
        lead = dims[0]
        perm = tuple(range(nb, nb + lead)) + tuple(range(nb)) + tuple(range(nb + lead, out.ndim))
        out = permute_dims(out, perm)
    return out


def _bool_scalar_index(x: Any, key_list: list) -> Any:
    """``x[True]`` / ``x[False]`` / ``x[..., True]``: a new axis of length 1 or 0."""
    from ._manipulation_functions import expand_dims
    if sum(isinstance(k, bool) for k in key_list) > 1 or any(
            is_array(k) for k in key_list):
        raise IndexError("combining Python bool indices with other advanced indices is not "
                         "supported")
    pos = next(i for i, k in enumerate(key_list) if isinstance(k, bool))
    flag = key_list[pos]
    rest = [k for k in key_list if not isinstance(k, bool)]
    y = _basic(x, rest)[0] if rest else x
    # the new axis sits where the bool was, counted among result dims
    res_pos = sum(1 for k in key_list[:pos] if k is None or isinstance(k, slice))
    y = expand_dims(y, axis=res_pos)
    if flag:
        return y
    return primitive("slice").bind(y, starts=(0,) * y.ndim, steps=(1,) * y.ndim,
                                   shape=tuple(0 if i == res_pos else n for i, n in
                                               enumerate(y.shape)))


def _value_for(x: Any, value: Any) -> Any:
    from ._helpers import unwrap_scalar
    value = unwrap_scalar(value)
    if isinstance(value, (list, tuple)):
        from ._creation_functions import asarray
        value = asarray(value, dtype=x.dtype, device=x.device)
    if is_array(value):
        if value.device is not x.device:
            raise ValueError(f"__setitem__: value is on {value.device}, array on {x.device}")
        return value
    if not isinstance(value, (bool, int, float, complex)):
        raise TypeError(f"__setitem__: value must be an array or a Python scalar; got "
                        f"{type(value).__name__}")
    if isinstance(value, complex) and x.dtype.kind != "c":
        raise TypeError(f"__setitem__: cannot assign a complex value to a {x.dtype} array")
    if isinstance(value, float) and x.dtype.kind in "iub" and not value.is_integer():
        raise TypeError(f"__setitem__: cannot assign float {value} to a {x.dtype} array")
    if isinstance(value, float) and x.dtype.kind in "iu":
        value = int(value)
    check_scalar_fits(value, x.dtype, "__setitem__")
    return value


def setitem(x: Any, key: Any, value: Any) -> None:
    if not isinstance(x, Array):
        raise TypeError("in-place assignment on a traced value: use x = x.at[idx].set(v) "
                        "style updates inside transformations")
    value = _value_for(x, value)
    from ._eager import broadcast_shapes, copy_into, scatter_into
    key_list, advanced = _expand_key(x, key)
    if not advanced:
        view = _basic(x, key_list)[0]
        if is_array(value):
            if broadcast_shapes(value.shape, view.shape) != view.shape:
                raise ValueError(f"could not broadcast value of shape {value.shape} into "
                                 f"indexed shape {view.shape}")
        copy_into(view, value, x.dtype if not is_array(value) else None)
        return
    y, adv = _basic(x, key_list)
    y, arrays, dims, adjacent = _advanced_plan(y, adv)
    from ._manipulation_functions import permute_dims
    rest = [d for d in range(y.ndim) if d not in dims]
    y = permute_dims(y, tuple(dims) + tuple(rest))
    if is_array(value):
        bshape = broadcast_shapes(*(a.shape for a in arrays))
        nb = len(bshape)
        res_shape = bshape + y.shape[len(dims):]
        if adjacent and dims[0] > 0:
            # NumPy's result layout puts the index dims at dims[0]; bring value to gather order
            lead = dims[0]
            full = y.shape[len(dims):len(dims) + lead] + bshape + y.shape[len(dims) + lead:]
            if broadcast_shapes(value.shape, full) != full:
                raise ValueError(f"shape mismatch: value array of shape {value.shape} could "
                                 f"not be broadcast to indexing result of shape {full}")
            from ._manipulation_functions import broadcast_to
            v = broadcast_to(value, full)
            perm = tuple(range(lead, lead + nb)) + tuple(range(lead)) + \
                tuple(range(lead + nb, len(full)))
            value = permute_dims(v, perm)
        elif broadcast_shapes(value.shape, res_shape) != res_shape:
            raise ValueError(f"shape mismatch: value array of shape {value.shape} could not be "
                             f"broadcast to indexing result of shape {res_shape}")
    scatter_into(y, arrays, value)


def take(x: Any, indices: Any, /, *, axis: int | None = None) -> Any:
    """Elements of ``x`` at integer ``indices`` along ``axis`` (x must be 1-D when axis is
    None)."""
    check_array(x, "take")
    indices = _as_index_array(indices, x.device)
    check_array(indices, "take", "indices")
    if indices.dtype.kind not in "iu":
        raise TypeError(f"take: indices must have an integer dtype; got {indices.dtype}")
    if axis is None:
        if x.ndim != 1:
            from ._manipulation_functions import reshape
            x = reshape(x, (-1,))
        axis = 0
    ax = normalize_axis(axis, x.ndim, "take")
    return getitem(x, (slice(None),) * ax + (indices,))


def take_along_axis(x: Any, indices: Any, /, *, axis: int = -1) -> Any:
    """Pick values from ``x`` at ``indices`` along ``axis`` (indices broadcast with x on the
    other axes)."""
    check_array(x, "take_along_axis")
    check_array(indices, "take_along_axis", "indices")
    if indices.dtype.kind not in "iu":
        raise TypeError(f"take_along_axis: indices must be integers; got {indices.dtype}")
    if indices.ndim != x.ndim:
        raise ValueError(f"take_along_axis: indices (shape {indices.shape}) and x (shape "
                         f"{x.shape}) must have the same number of dimensions")
    ax = normalize_axis(axis, x.ndim, "take_along_axis")
    from ._creation_functions import arange
    from ._manipulation_functions import reshape
    key = []
    for d in range(x.ndim):
        if d == ax:
            key.append(indices)
        else:
            shape = [1] * x.ndim
            shape[d] = x.shape[d]
            key.append(reshape(arange(x.shape[d], device=x.device), tuple(shape)))
    from ._eager import broadcast_shapes
    other = [n for d, n in enumerate(x.shape) if d != ax]
    ishape = [n for d, n in enumerate(indices.shape) if d != ax]
    broadcast_shapes(tuple(other), tuple(ishape))
    return getitem(x, tuple(key))
