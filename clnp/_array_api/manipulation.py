"""Manipulation functions of the standard; views where the layout allows, copies otherwise."""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

import numpy as np

from .._core import dtypes as dt
from .._core.checks import (check_array, is_array, normalize_axes, normalize_axis,
                            normalize_shape, ints_of_array, shape_from_array)
from .._core.prims import primitive
from .._core.dtypes import kind as dkind
from .._core.namespace import namespace as _namespace

__all__ = ["broadcast_shapes", "broadcast_arrays", "broadcast_to", "concat", "expand_dims", "flip",
           "moveaxis", "permute_dims", "repeat", "reshape", "roll", "squeeze", "stack", "tile",
           "unstack", "concatenate"]


def _bshapes(*shapes):
    from .._core.eager import broadcast_shapes
    return broadcast_shapes(*shapes)


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape that results from broadcasting ``shapes`` together.

    Parameters
    ----------
    *shapes : tuple of int
        The shapes.

    Returns
    -------
    tuple of int
        The broadcast shape.

    Raises
    ------
    ValueError
        The shapes are incompatible (the message names them).

    Examples
    --------
    >>> import clnp
    >>> clnp.broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    for s in shapes:
        if not isinstance(s, (tuple, list)):
            raise TypeError(f"broadcast_shapes: expected shape tuples; got {type(s).__name__}")
    return _bshapes(*(tuple(operator.index(n) for n in s) for s in shapes))


def broadcast_to(x: Any, /, shape: Sequence[int]) -> Any:
    """Broadcast ``x`` to ``shape``: a view whose broadcast dimensions have stride 0.

    Parameters
    ----------
    x : array
        Input array.
    shape : tuple of int
        The target shape.
    subok : bool, optional
        Accepted for NumPy (clnp has no array subclasses).

    Returns
    -------
    array
        A view of ``x`` (treat it as read-only, as NumPy does).

    Raises
    ------
    ValueError
        ``x``'s shape does not broadcast to ``shape`` (the message names both).

    Examples
    --------
    >>> import clnp
    >>> print(clnp.broadcast_to(clnp.asarray([1, 2]), (2, 2)))
    [[1 2]
     [1 2]]
    """
    check_array(x, "broadcast_to")
    shape = normalize_shape(shape, "broadcast_to")
    if len(shape) < x.ndim or any(
            s != 1 and s != t for s, t in zip(x.shape, shape[len(shape) - x.ndim:])):
        raise ValueError(f"broadcast_to: cannot broadcast shape {x.shape} to shape {shape}")
    if shape == x.shape:
        return x
    return primitive("broadcast_to").bind(x, shape=shape)


def broadcast_arrays(*arrays: Any) -> tuple[Any, ...]:
    """Broadcast every input against the others.

    Parameters
    ----------
    *arrays : array
        Arrays of broadcast-compatible shapes.

    Returns
    -------
    tuple of array
        Views of the inputs, all of the broadcast shape (treat them as read-only).

    Raises
    ------
    ValueError
        The shapes are incompatible (the message names them).

    Examples
    --------
    >>> import clnp
    >>> a, b = clnp.broadcast_arrays(clnp.asarray([[1], [2]]), clnp.asarray([10, 20, 30]))
    >>> a.shape, b.shape
    ((2, 3), (2, 3))
    """
    for a in arrays:
        check_array(a, "broadcast_arrays", "arrays")
    shape = _bshapes(*(a.shape for a in arrays))
    return tuple(broadcast_to(a, shape) for a in arrays)


def reshape(x: Any, /, shape: Sequence[int], *, copy: bool | None = None) -> Any:
    """Give ``x`` a new shape with the same number of elements.

    Parameters
    ----------
    x : array
        Input array.
    shape : int, tuple of int, or a 0-d or 1-d integer array
        The new shape; one dimension may be -1. An array (clnp or NumPy) is read on the
        host, as NumPy reads it through ``__index__``.
    copy : bool, optional
        True copies; False raises when a view is impossible; None makes a view whenever
        the strides allow it.
    order : {'C'}, optional
        Only C order (NumPy's default); other orders raise ValueError (transpose first to
        reshape in Fortran order).

    Returns
    -------
    array
        A view when the strides allow it, else a copy.

    Raises
    ------
    ValueError
        The sizes differ, or ``copy=False`` and the strides need a copy.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.reshape(clnp.arange(6), (2, -1)))
    [[0 1 2]
     [3 4 5]]
    """
    check_array(x, "reshape")
    if is_array(shape) or isinstance(shape, np.ndarray):
        shape = shape_from_array(shape, "reshape")      # NumPy's 0-d or 1-d array shape
    elif not isinstance(shape, (tuple, list)):
        shape = (shape,)
    try:
        shape = list(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"reshape: shape must be an int or a sequence of ints; got "
                        f"{shape!r}") from None
    if shape.count(-1) > 1:
        raise ValueError("reshape: can only specify one unknown dimension (-1)")
    if any(n < -1 for n in shape):
        raise ValueError(f"reshape: invalid shape {tuple(shape)}")
    if -1 in shape:
        known = math.prod(n for n in shape if n != -1)
        if known == 0 or x.size % known:
            raise ValueError(f"reshape: cannot reshape array of shape {x.shape} "
                             f"(size {x.size}) into shape {tuple(shape)}")
        shape[shape.index(-1)] = x.size // known
    shp = tuple(shape)
    if math.prod(shp) != x.size:
        raise ValueError(f"reshape: cannot reshape array of shape {x.shape} (size {x.size}) "
                         f"into shape {shp}")
    from .._core.array import Array
    if isinstance(x, Array):
        from .._core.eager import try_view_reshape
        if copy is False and try_view_reshape(x, shp) is None:
            raise ValueError(f"reshape: copy=False but shape {x.shape} with strides "
                             f"{x.strides} cannot be reshaped to {shp} without copying")
        if copy:
            return primitive("reshape").bind(primitive("copy").bind(x), shape=shp)
    if shp == x.shape and not copy:
        return x
    return primitive("reshape").bind(x, shape=shp)


def permute_dims(x: Any, /, axes: Sequence[int]) -> Any:
    """Permute the axes of ``x``.

    Parameters
    ----------
    x : array
        Input array.
    axes : tuple of int
        A permutation of ``range(x.ndim)``.

    Returns
    -------
    array
        A view of ``x``.

    Raises
    ------
    ValueError
        ``axes`` is not a permutation of the axes.
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> clnp.permute_dims(clnp.ones((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    check_array(x, "permute_dims")
    perm = tuple(normalize_axis(a, x.ndim, "permute_dims") for a in axes)
    if sorted(perm) != list(range(x.ndim)):
        raise ValueError(f"permute_dims: axes {tuple(axes)} are not a permutation of "
                         f"{x.ndim} dimensions")
    if perm == tuple(range(x.ndim)):
        return x
    return primitive("transpose").bind(x, perm=perm)


def matrix_transpose(x: Any, /) -> Any:
    """Transpose the last two axes of ``x``.

    Parameters
    ----------
    x : array
        Array of at least two dimensions.

    Returns
    -------
    array
        A view of ``x``.

    Raises
    ------
    ValueError
        ``x`` has fewer than two dimensions.

    Examples
    --------
    >>> import clnp
    >>> clnp.matrix_transpose(clnp.ones((5, 2, 3))).shape
    (5, 3, 2)
    """
    check_array(x, "matrix_transpose")
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: x must have at least 2 dimensions; got shape "
                         f"{x.shape}")
    perm = list(range(x.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return primitive("transpose").bind(x, perm=tuple(perm))


def expand_dims(x: Any, /, axis: int | tuple[int, ...] = 0) -> Any:
    """Insert size-one dimensions at ``axis`` (positions in the result).

    Parameters
    ----------
    x : array
        Input array.
    axis : int or tuple of int, default 0
        Where the new dimensions go.

    Returns
    -------
    array
        A view of ``x`` with ``ndim + len(axis)`` dimensions.

    Raises
    ------
    ValueError
        A repeated axis.
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> clnp.expand_dims(clnp.asarray([1, 2]), axis=0).shape
    (1, 2)
    """
    check_array(x, "expand_dims")
    axes = axis if isinstance(axis, tuple) else (axis,)
    nd = x.ndim + len(axes)
    pos = normalize_axes(axes, nd, "expand_dims")
    shape, it = [], iter(x.shape)
    for i in range(nd):
        shape.append(1 if i in pos else next(it))
    return reshape(x, tuple(shape))


def squeeze(x: Any, /, axis: int | tuple[int, ...] | None = None) -> Any:
    """Remove size-one dimensions.

    Parameters
    ----------
    x : array
        Input array.
    axis : int or tuple of int, optional
        The dimensions to remove (all size-one ones when None, as NumPy does).

    Returns
    -------
    array
        A view of ``x``.

    Raises
    ------
    ValueError
        A named axis does not have size one.

    Examples
    --------
    >>> import clnp
    >>> clnp.squeeze(clnp.ones((1, 3, 1)), axis=0).shape
    (3, 1)
    """
    check_array(x, "squeeze")
    if axis is None:
        axes = tuple(i for i, n in enumerate(x.shape) if n == 1)
    else:
        axes = normalize_axes(axis, x.ndim, "squeeze")
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"squeeze: cannot squeeze axis {a} of size {x.shape[a]} "
                             f"(shape {x.shape})")
    return reshape(x, tuple(n for i, n in enumerate(x.shape) if i not in axes))


def flip(x: Any, /, *, axis: int | tuple[int, ...] | None = None) -> Any:
    """Reverse the order of elements along ``axis``.

    Parameters
    ----------
    x : array
        Input array.
    axis : int or tuple of int, optional
        The axes (all of them when None).

    Returns
    -------
    array
        A view of ``x``.

    Raises
    ------
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.flip(clnp.asarray([[1, 2], [3, 4]]), axis=1))
    [[2 1]
     [4 3]]
    """
    check_array(x, "flip")
    axes = normalize_axes(axis, x.ndim, "flip")
    if not axes or x.size == 0:
        return x
    starts = tuple(n - 1 if i in axes else 0 for i, n in enumerate(x.shape))
    steps = tuple(-1 if i in axes else 1 for i in range(x.ndim))
    return primitive("slice").bind(x, starts=starts, steps=steps, shape=x.shape)


def moveaxis(x: Any, source: int | tuple[int, ...], destination: int | tuple[int, ...], /) -> Any:
    """Move axes ``source`` to positions ``destination``.

    Parameters
    ----------
    x : array
        Input array.
    source : int or tuple of int
        The axes to move.
    destination : int or tuple of int
        Their positions in the result.

    Returns
    -------
    array
        A view of ``x``.

    Raises
    ------
    ValueError
        Repeated axes, or ``source`` and ``destination`` of different lengths.
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> clnp.moveaxis(clnp.ones((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    check_array(x, "moveaxis")
    src = normalize_axes(source, x.ndim, "moveaxis")
    dst = normalize_axes(destination, x.ndim, "moveaxis")
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source {source} and destination {destination} must have "
                         f"the same number of elements")
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute_dims(x, tuple(order))


def concat(arrays: Sequence[Any], /, *, axis: int | None = 0) -> Any:
    """Join a sequence of arrays along an existing axis (``concatenate`` is NumPy's name).

    Parameters
    ----------
    arrays : sequence of array
        Arrays of the same shape except along ``axis``.
    axis : int or None, default 0
        The axis; None flattens the arrays first.
    out : array, optional
        NumPy's output array: the result is written to it and returned.
    dtype : dtype, optional
        NumPy's result dtype: the arrays are cast to it first, under ``casting``.
    casting : {'no', 'equiv', 'safe', 'same_kind', 'unsafe'}, default 'same_kind'
        NumPy's casting rule for ``dtype``; a cast it forbids raises TypeError.

    Returns
    -------
    array
        The joined array, of the promoted dtype.

    Raises
    ------
    ValueError
        Shapes that differ outside ``axis``, zero-dimensional arrays, or an empty
        sequence.
    TypeError
        Dtypes that do not promote.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.concat([clnp.asarray([1, 2]), clnp.asarray([3])]))
    [1 2 3]
    """
    arrays = list(arrays)
    if not arrays:
        raise ValueError("concat: need at least one array")
    for a in arrays:
        check_array(a, "concat", "arrays")
    if axis is None:
        arrays = [reshape(a, (-1,)) for a in arrays]
        axis = 0
    nd = arrays[0].ndim
    if nd == 0:
        raise ValueError("concat: zero-dimensional arrays cannot be concatenated")
    ax = normalize_axis(axis, nd, "concat")
    for a in arrays[1:]:
        if a.ndim != nd or any(m != n for i, (m, n) in enumerate(zip(a.shape, arrays[0].shape))
                               if i != ax):
            raise ValueError(f"concat: shapes {arrays[0].shape} and {a.shape} differ outside "
                             f"axis {ax}")
        if a.device is not arrays[0].device:
            raise ValueError(f"concat: arrays are on different devices ({a.device} and "
                             f"{arrays[0].device})")
    res = arrays[0].dtype
    for a in arrays[1:]:
        res = dt.promote(res, a.dtype)
    return primitive("concatenate").bind(*arrays, axis=ax, dtype=res)


concatenate = concat


def stack(arrays: Sequence[Any], /, *, axis: int = 0) -> Any:
    """Join arrays of equal shape along a new axis.

    Parameters
    ----------
    arrays : sequence of array
        Arrays of one shape.
    axis : int, default 0
        The new axis' position in the result.
    out : array, optional
        NumPy's output array: the result is written to it and returned.
    dtype : dtype, optional
        NumPy's result dtype: the arrays are cast to it first, under ``casting``.
    casting : {'no', 'equiv', 'safe', 'same_kind', 'unsafe'}, default 'same_kind'
        NumPy's casting rule for ``dtype``; a cast it forbids raises TypeError.

    Returns
    -------
    array
        Array with one more dimension, of the promoted dtype.

    Raises
    ------
    ValueError
        The shapes differ, or the sequence is empty.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.stack([clnp.asarray([1, 2]), clnp.asarray([3, 4])], axis=1))
    [[1 3]
     [2 4]]
    """
    arrays = list(arrays)
    if not arrays:
        raise ValueError("stack: need at least one array")
    for a in arrays:
        check_array(a, "stack", "arrays")
        if a.shape != arrays[0].shape:
            raise ValueError(f"stack: all arrays must have the same shape; got "
                             f"{arrays[0].shape} and {a.shape}")
    ax = normalize_axis(axis, arrays[0].ndim + 1, "stack")
    return concat([expand_dims(a, axis=ax) for a in arrays], axis=ax)


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    """Split ``x`` into a tuple of arrays along ``axis``.

    Parameters
    ----------
    x : array
        Input array.
    axis : int, default 0
        The axis to split along.

    Returns
    -------
    tuple of array
        ``x.shape[axis]`` views.

    Raises
    ------
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> a, b = clnp.unstack(clnp.asarray([[1, 2], [3, 4]]))
    >>> print(b)
    [3 4]
    """
    check_array(x, "unstack")
    if x.ndim == 0:
        raise ValueError("unstack: x must have at least one dimension")
    ax = normalize_axis(axis, x.ndim, "unstack")
    idx = (slice(None),) * ax
    return tuple(x[idx + (i,)] for i in range(x.shape[ax]))


def roll(x: Any, /, shift: int | tuple[int, ...], *,
         axis: int | tuple[int, ...] | None = None) -> Any:
    """Roll elements along ``axis`` by ``shift``.

    Parameters
    ----------
    x : array
        Input array.
    shift : int, tuple of int, or a 0-d or 1-d integer array
        The shifts; they broadcast against ``axis``, and shifts naming the same axis add
        up (as in NumPy). An array (clnp or NumPy) is read on the host.
    axis : int or tuple of int, optional
        The axes (the flattened array when None).

    Returns
    -------
    array
        A new array.

    Raises
    ------
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.roll(clnp.arange(5), 2))
    [3 4 0 1 2]
    >>> print(clnp.roll(clnp.arange(6).reshape(2, 3), clnp.asarray([1, 1]), axis=(0, 1)))
    [[5 3 4]
     [2 0 1]]
    """
    check_array(x, "roll")
    if is_array(shift) or isinstance(shift, np.ndarray):
        shift = tuple(ints_of_array(shift, "roll", "shift"))   # NumPy's array of shifts
    shifts = tuple(shift) if isinstance(shift, (tuple, list)) else (shift,)
    try:
        shifts = tuple(operator.index(s) for s in shifts)
    except TypeError:
        raise TypeError(f"roll: shift must be an int or a tuple of ints; got {shift!r}") from None
    if axis is None:
        flat = reshape(x, (-1,))
        return reshape(roll(flat, sum(shifts), axis=0), x.shape)
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    if len(shifts) != len(axes) and 1 not in (len(shifts), len(axes)):
        raise ValueError(f"roll: shift {shift} and axis {axis} must have the same length (or "
                         f"one of them must be a single value)")
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(axes) == 1:
        axes = axes * len(shifts)
    total = [0] * x.ndim
    for s, a in zip(shifts, axes):
        total[normalize_axis(a, x.ndim, "roll")] += s
    out = x
    for a, s in enumerate(total):
        n = x.shape[a]
        if n == 0 or s % n == 0:
            continue
        s %= n
        pre = (slice(None),) * a
        out = concat([out[pre + (slice(n - s, None),)], out[pre + (slice(0, n - s),)]], axis=a)
    return out if out is not x else primitive("copy").bind(x)


def repeat(x: Any, repeats: Any, /, *, axis: int | None = None) -> Any:
    """Repeat each element ``repeats`` times along ``axis``.

    Parameters
    ----------
    x : array
        Input array.
    repeats : int or 1-D integer array
        One count for all elements, or one per element along the axis (an array
        ``repeats`` is read to the host: the result shape depends on it).
    axis : int, optional
        The axis (the flattened array when None).

    Returns
    -------
    array
        The repeated array.

    Raises
    ------
    ValueError
        Negative counts, or a count array of the wrong length.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.repeat(clnp.asarray([1, 2]), 2))
    [1 1 2 2]
    >>> print(clnp.repeat(clnp.asarray([1, 2]), clnp.asarray([1, 3])))
    [1 2 2 2]
    """
    check_array(x, "repeat")
    if axis is None:
        x = reshape(x, (-1,))
        axis = 0
    ax = normalize_axis(axis, x.ndim, "repeat")
    n = x.shape[ax]
    if not isinstance(repeats, int) or isinstance(repeats, bool):
        import numpy as np
        if is_array(repeats):
            if dkind(repeats.dtype) not in "iu":
                raise TypeError(f"repeat: repeats must have an integer dtype; got "
                                f"{repeats.dtype}")
            host = repeats.to_numpy()
        else:
            host = np.asarray(repeats)
            if dkind(host.dtype) not in "iu" and host.size:
                raise TypeError(f"repeat: repeats must be integers; got {host.dtype}")
        if host.ndim > 1 or (host.ndim == 1 and host.shape[0] not in (1, n)):
            raise ValueError(f"repeat: repeats of shape {host.shape} does not match the "
                             f"length {n} of axis {ax}")
        if host.size == 1:
            repeats = int(host.reshape(()))
        else:
            reps = host.astype(np.int64).reshape(-1)
            if (reps < 0).any():
                raise ValueError("repeat: repeats must be non-negative")
            from .creation import asarray
            take = _namespace().take     # indexing: later in this layer
            idx = asarray(np.repeat(np.arange(n), reps), device=x.device)
            return take(x, idx, axis=ax)
    r = operator.index(repeats)
    if r < 0:
        raise ValueError(f"repeat: repeats must be non-negative; got {r}")
    y = expand_dims(x, axis=ax + 1)
    shape = list(y.shape)
    shape[ax + 1] = r
    y = broadcast_to(y, tuple(shape))
    out_shape = list(x.shape)
    out_shape[ax] = n * r
    return reshape(y, tuple(out_shape), copy=True)


def tile(x: Any, repetitions: tuple[int, ...], /) -> Any:
    """Construct an array by repeating ``x`` ``repetitions`` times along each axis.

    Parameters
    ----------
    x : array
        Input array.
    repetitions : int, tuple of int, or a 0-d or 1-d integer array
        Repetitions per axis; the shorter of ``x.shape`` and ``repetitions`` is padded
        with leading ones. An array (clnp or NumPy) is read on the host.

    Returns
    -------
    array
        The tiled array.

    Raises
    ------
    ValueError
        A negative repetition.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.tile(clnp.asarray([1, 2]), (2, 2)))
    [[1 2 1 2]
     [1 2 1 2]]
    >>> print(clnp.tile(clnp.asarray([1, 2]), clnp.asarray(2)))
    [1 2 1 2]
    """
    check_array(x, "tile")
    if is_array(repetitions) or isinstance(repetitions, np.ndarray):
        repetitions = ints_of_array(repetitions, "tile", "repetitions")  # NumPy's reps array
    if not isinstance(repetitions, (tuple, list)):
        repetitions = (repetitions,)
    try:
        reps = tuple(operator.index(r) for r in repetitions)
    except TypeError:
        raise TypeError(f"tile: repetitions must be an int or a sequence of ints; got "
                        f"{repetitions!r}") from None
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: repetitions must be non-negative; got {reps}")
    nd = max(len(reps), x.ndim)
    reps = (1,) * (nd - len(reps)) + reps
    x = reshape(x, (1,) * (nd - x.ndim) + x.shape)
    inter = []
    for r, n in zip(reps, x.shape):
        inter += [r, n]
    y = reshape(x, tuple(v for n in x.shape for v in (1, n)))
    y = broadcast_to(y, tuple(inter))
    return reshape(y, tuple(r * n for r, n in zip(reps, x.shape)), copy=True)
