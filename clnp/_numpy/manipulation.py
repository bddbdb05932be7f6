"""NumPy's manipulation functions beyond the standard: ``ravel``, ``swapaxes``,
``transpose``, ``atleast_*d``, the ``*stack`` and ``*split`` families and ``pad``.
"""
from __future__ import annotations

import builtins
import operator
from typing import Any, Sequence

import numpy as np

from .._core import dtypes as dt
from .._core.checks import is_array, normalize_axis
from .._core.dtypes import kind as dkind
from .._core.namespace import namespace as _xp
from .array_likes import _arr, _device_of
from .queries import ndim, shape
from .reductions import median

__all__ = ["pad", "ravel", "swapaxes", "transpose", "atleast_1d", "atleast_2d", "atleast_3d",
           "vstack", "hstack", "dstack", "column_stack", "split", "array_split", "hsplit",
           "vsplit", "dsplit"]


def ravel(a: Any, order: str = "C") -> Any:
    """The flattened array, a view when possible (``numpy.ravel``).

    Parameters
    ----------
    a : array_like
        Input array.
    order : {'C', 'F'}, default 'C'
        Read in row-major or column-major order.

    Returns
    -------
    array
        1-D array.

    Raises
    ------
    ValueError
        An unknown order.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.ravel(clnp.asarray([[1, 2], [3, 4]]), order="F"))
    [1 3 2 4]
    """
    xp = _xp()
    x = _arr(a)
    if order == "F":
        x = xp.permute_dims(x, tuple(reversed(range(x.ndim))))
    elif order not in ("C", "A", "K", None):
        raise ValueError(f"ravel: order must be one of 'C', 'F', 'A', 'K'; got {order!r}")
    return xp.reshape(x, (-1,))


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    """``a`` with ``axis1`` and ``axis2`` interchanged, a view (``numpy.swapaxes``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis1 : int
        First axis.
    axis2 : int
        Second axis.

    Returns
    -------
    array
        A view of ``a``.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> clnp.swapaxes(clnp.ones((2, 3, 4)), 0, 2).shape
    (4, 3, 2)
    """
    xp = _xp()
    x = _arr(a)
    i, j = normalize_axis(axis1, x.ndim, "swapaxes"), normalize_axis(axis2, x.ndim, "swapaxes")
    perm = list(range(x.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return xp.permute_dims(x, tuple(perm))


def transpose(a: Any, axes: Sequence[int] | None = None) -> Any:
    """``a`` with its axes permuted, a view (``numpy.transpose``).

    Parameters
    ----------
    a : array_like
        Input array.
    axes : sequence of int, optional
        The permutation (reversed axes when None).

    Returns
    -------
    array
        A view of ``a``.

    Raises
    ------
    ValueError
        ``axes`` is not a permutation of the axes.

    Examples
    --------
    >>> import clnp
    >>> clnp.transpose(clnp.ones((2, 3, 4))).shape
    (4, 3, 2)
    """
    xp = _xp()
    x = _arr(a)
    if axes is None:
        return xp.permute_dims(x, tuple(reversed(range(x.ndim))))
    axes = tuple(axes)
    if len(axes) != x.ndim:
        raise ValueError(f"transpose: axes {axes} don't match array of shape {x.shape}")
    return xp.permute_dims(x, tuple(normalize_axis(a_, x.ndim, "transpose") for a_ in axes))


def _atleast(arys: tuple, n: int) -> Any:
    xp = _xp()
    dev = _device_of(*arys)
    res = []
    for a in arys:
        x = _arr(a, dev)
        if x.ndim < n:
            if n == 3 and x.ndim == 1:
                x = xp.reshape(x, (1, x.shape[0], 1))
            elif n == 3 and x.ndim == 2:
                x = xp.reshape(x, x.shape + (1,))
            else:
                x = xp.reshape(x, (1,) * (n - x.ndim) + tuple(x.shape))
        res.append(x)
    return res[0] if len(res) == 1 else tuple(res)


def atleast_1d(*arys: Any) -> Any:
    """Inputs as arrays with at least one dimension (``numpy.atleast_1d``).

    Parameters
    ----------
    *arys : array_like
        Inputs.

    Returns
    -------
    array or tuple of array
        One input gives one array, several give a tuple.

    Examples
    --------
    >>> import clnp
    >>> clnp.atleast_1d(clnp.asarray(5)).shape
    (1,)
    """
    return _atleast(arys, 1)


def atleast_2d(*arys: Any) -> Any:
    """Inputs as arrays with at least two dimensions (``numpy.atleast_2d``).

    Parameters
    ----------
    *arys : array_like
        Inputs.

    Returns
    -------
    array or tuple of array
        ``(N,)`` becomes ``(1, N)``.

    Examples
    --------
    >>> import clnp
    >>> clnp.atleast_2d(clnp.asarray([1, 2])).shape
    (1, 2)
    """
    return _atleast(arys, 2)


def atleast_3d(*arys: Any) -> Any:
    """Inputs as arrays with at least three dimensions (``numpy.atleast_3d``).

    Parameters
    ----------
    *arys : array_like
        Inputs.

    Returns
    -------
    array or tuple of array
        ``(N,)`` becomes ``(1, N, 1)`` and ``(M, N)`` becomes ``(M, N, 1)``.

    Examples
    --------
    >>> import clnp
    >>> clnp.atleast_3d(clnp.ones((2, 3))).shape
    (2, 3, 1)
    """
    return _atleast(arys, 3)


def _seq(tup: Any, fname: str) -> list:
    if is_array(tup) or isinstance(tup, np.ndarray):
        return [tup[i] for i in range(tup.shape[0])]
    if not isinstance(tup, (list, tuple)):
        raise TypeError(f"{fname}: arrays to stack must be passed as a sequence; got "
                        f"{type(tup).__name__}")
    return list(tup)


def _join(arrays: list, axis: int, dtype: Any, fname: str) -> Any:
    xp = _xp()
    if not arrays:
        raise ValueError(f"{fname}: need at least one array to concatenate")
    if dtype is not None:
        arrays = [xp.astype(a, dt.as_dtype(dtype)) for a in arrays]
    return xp.concat(arrays, axis=axis)


def _listify(x: Any) -> list:
    return list(x) if isinstance(x, tuple) else [x]


def vstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> Any:
    """Stack arrays vertically, row-wise (``numpy.vstack``): 1-D inputs become rows.

    Parameters
    ----------
    tup : sequence of array_like
        The arrays.
    dtype : dtype, optional
        The result dtype.
    casting : str, default 'same_kind'
        NumPy's casting rule for ``dtype``.

    Returns
    -------
    array
        The stacked array.

    Raises
    ------
    ValueError
        Shapes that do not match.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.vstack([clnp.asarray([1, 2]), clnp.asarray([3, 4])]))
    [[1 2]
     [3 4]]
    """
    arrs = _seq(tup, "vstack")
    dev = _device_of(*arrs)
    return _join(_listify(atleast_2d(*[_arr(a, dev) for a in arrs])) if arrs else [], 0,
                 dtype, "vstack")


def hstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> Any:
    """Stack arrays horizontally, column-wise (``numpy.hstack``): 1-D inputs are joined end to end.

    Parameters
    ----------
    tup : sequence of array_like
        The arrays.
    dtype : dtype, optional
        The result dtype.
    casting : str, default 'same_kind'
        NumPy's casting rule for ``dtype``.

    Returns
    -------
    array
        The stacked array.

    Raises
    ------
    ValueError
        Shapes that do not match.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.hstack([clnp.asarray([1, 2]), clnp.asarray([3])]))
    [1 2 3]
    """
    arrs = _seq(tup, "hstack")
    dev = _device_of(*arrs)
    arrs = _listify(atleast_1d(*[_arr(a, dev) for a in arrs])) if arrs else []
    return _join(arrs, 0 if arrs and arrs[0].ndim == 1 else 1, dtype, "hstack")


def dstack(tup: Any) -> Any:
    """Stack arrays depth-wise, along the third axis (``numpy.dstack``).

    Parameters
    ----------
    tup : sequence of array_like
        The arrays.

    Returns
    -------
    array
        Array of at least three dimensions.

    Raises
    ------
    ValueError
        Shapes that do not match.

    Examples
    --------
    >>> import clnp
    >>> clnp.dstack([clnp.asarray([1, 2]), clnp.asarray([3, 4])]).shape
    (1, 2, 2)
    """
    arrs = _seq(tup, "dstack")
    dev = _device_of(*arrs)
    return _join(_listify(atleast_3d(*[_arr(a, dev) for a in arrs])) if arrs else [], 2,
                 None, "dstack")


def column_stack(tup: Any) -> Any:
    """Stack 1-D arrays as columns of a 2-D array (``numpy.column_stack``).

    Parameters
    ----------
    tup : sequence of array_like
        1-D arrays (columns) or 2-D arrays (joined as they are).

    Returns
    -------
    array
        2-D array.

    Raises
    ------
    ValueError
        Lengths that differ.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.column_stack([clnp.asarray([1, 2]), clnp.asarray([3, 4])]))
    [[1 3]
     [2 4]]
    """
    xp = _xp()
    arrs = _seq(tup, "column_stack")
    dev = _device_of(*arrs)
    cols = []
    for a in arrs:
        x = _arr(a, dev)
        if x.ndim < 2:
            x = xp.reshape(x, (-1, 1))
        cols.append(x)
    return _join(cols, 1, None, "column_stack")


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """Split ``ary`` into sub-arrays (views) along ``axis``, unequal parts allowed.

    Parameters
    ----------
    ary : array
        Input array.
    indices_or_sections : int or sequence of int
        N parts (the first ``len % N`` one element longer), or the split points.
    axis : int, default 0
        The axis.

    Returns
    -------
    list of array
        Views of ``ary``.

    Raises
    ------
    ValueError
        A number of sections below 1.

    Examples
    --------
    >>> import clnp
    >>> [p.tolist() for p in clnp.array_split(clnp.arange(5), 2)]
    [[0, 1, 2], [3, 4]]
    """
    x = _arr(ary)
    ax = normalize_axis(axis, x.ndim, "array_split")
    n = x.shape[ax]
    if is_array(indices_or_sections):
        indices_or_sections = indices_or_sections.tolist()
    try:
        points = [operator.index(p) for p in indices_or_sections]
        bounds = [0] + points + [n]
    except TypeError:
        sections = operator.index(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.") from None
        each, extras = builtins.divmod(n, sections)
        sizes = [0] + extras * [each + 1] + (sections - extras) * [each]
        bounds = list(np.cumsum(sizes))
    pre = (slice(None),) * ax
    return [x[pre + (slice(int(bounds[i]), int(bounds[i + 1])),)]
            for i in range(len(bounds) - 1)]


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """Split ``ary`` into equal sub-arrays (views) along ``axis`` (``numpy.split``).

    Parameters
    ----------
    ary : array
        Input array.
    indices_or_sections : int or sequence of int
        A number of sections, or the split points.
    axis : int, default 0
        The axis.

    Returns
    -------
    list of array
        Views of ``ary``.

    Raises
    ------
    ValueError
        An integer number of sections that does not divide the axis.

    Examples
    --------
    >>> import clnp
    >>> [p.tolist() for p in clnp.split(clnp.arange(6), 3)]
    [[0, 1], [2, 3], [4, 5]]
    >>> [p.tolist() for p in clnp.split(clnp.arange(5), [1, 3])]
    [[0], [1, 2], [3, 4]]
    """
    x = _arr(ary)
    if isinstance(indices_or_sections, (int, np.integer)):
        ax = normalize_axis(axis, x.ndim, "split")
        if x.shape[ax] % int(indices_or_sections):
            raise ValueError("array split does not result in an equal division")
    return array_split(x, indices_or_sections, axis)


def hsplit(ary: Any, indices_or_sections: Any) -> list:
    """Split horizontally: along axis 1, or axis 0 for 1-D input (``numpy.hsplit``).

    Parameters
    ----------
    ary : array
        Input array.
    indices_or_sections : int or sequence of int
        A number of sections, or the split points.

    Returns
    -------
    list of array
        Views of ``ary``.

    Raises
    ------
    ValueError
        Sections that do not divide the axis, or 0-d input.

    Examples
    --------
    >>> import clnp
    >>> [p.shape for p in clnp.hsplit(clnp.ones((2, 4)), 2)]
    [(2, 2), (2, 2)]
    """
    x = _arr(ary)
    if x.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(x, indices_or_sections, 1 if x.ndim > 1 else 0)


def vsplit(ary: Any, indices_or_sections: Any) -> list:
    """Split vertically, along axis 0, arrays of at least 2 dimensions (``numpy.vsplit``).

    Parameters
    ----------
    ary : array
        Input array.
    indices_or_sections : int or sequence of int
        A number of sections, or the split points.

    Returns
    -------
    list of array
        Views of ``ary``.

    Raises
    ------
    ValueError
        Fewer than 2 dimensions, or sections that do not divide the axis.

    Examples
    --------
    >>> import clnp
    >>> [p.shape for p in clnp.vsplit(clnp.ones((4, 2)), 2)]
    [(2, 2), (2, 2)]
    """
    x = _arr(ary)
    if x.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(x, indices_or_sections, 0)


def dsplit(ary: Any, indices_or_sections: Any) -> list:
    """Split depth-wise, along axis 2, arrays of at least 3 dimensions (``numpy.dsplit``).

    Parameters
    ----------
    ary : array
        Input array.
    indices_or_sections : int or sequence of int
        A number of sections, or the split points.

    Returns
    -------
    list of array
        Views of ``ary``.

    Raises
    ------
    ValueError
        Fewer than 3 dimensions, or sections that do not divide the axis.

    Examples
    --------
    >>> import clnp
    >>> [p.shape for p in clnp.dsplit(clnp.ones((1, 2, 4)), 2)]
    [(1, 2, 2), (1, 2, 2)]
    """
    x = _arr(ary)
    if x.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(x, indices_or_sections, 2)


def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """Pad an array (``numpy.pad``).

    Parameters
    ----------
    array : array_like
        Input array.
    pad_width : int or sequence
        An int, ``(before, after)``, or one pair per axis.
    mode : str, default 'constant'
        ``constant``, ``edge``, ``reflect``, ``symmetric``, ``wrap``, ``empty``,
        ``linear_ramp``, ``maximum``, ``minimum``, ``mean`` or ``median`` (a callable mode
        is not supported).
    **kwargs
        ``constant_values`` (default 0) for ``constant``; ``reflect_type`` (only
        ``'even'``); ``end_values`` (default 0) for ``linear_ramp``; ``stat_length``
        (default: the whole axis) for the statistic modes.

    Returns
    -------
    array
        The padded array. Axes are padded in order, so corners take the later axis'
        constant, as in NumPy.

    Raises
    ------
    ValueError
        An unknown mode, negative widths, or keywords the mode does not take.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.pad(clnp.asarray([1, 2, 3]), 2, mode="edge"))
    [1 1 1 2 3 3 3]
    >>> print(clnp.pad(clnp.asarray([1, 2, 3]), (1, 0), constant_values=9))
    [9 1 2 3]
    """
    xp = _xp()
    x = _arr(array)
    modes = ("constant", "edge", "reflect", "symmetric", "wrap", "empty", "linear_ramp",
             "maximum", "minimum", "mean", "median")
    if callable(mode) or mode not in modes:
        raise ValueError(f"pad: mode {mode!r} is not supported by clnp; use one of {modes}")
    allowed = {"constant": {"constant_values"}, "reflect": {"reflect_type"},
               "symmetric": {"reflect_type"}, "linear_ramp": {"end_values"},
               **{m: {"stat_length"} for m in _PAD_STATS}}.get(mode, set())
    bad = set(kwargs) - allowed
    if bad:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {sorted(bad)}")
    if kwargs.get("reflect_type", "even") != "even":
        raise ValueError("pad: only reflect_type='even' is supported by clnp")
    pw = np.asarray(pad_width.tolist() if is_array(pad_width) else pad_width)
    if dkind(pw.dtype) not in "iu":
        raise TypeError("`pad_width` must be of integral type.")
    try:
        pairs = np.broadcast_to(pw.astype(np.int64), (x.ndim, 2))
    except ValueError:
        raise ValueError(f"pad: pad_width {pad_width!r} does not fit an array of "
                         f"{x.ndim} dimensions") from None
    if (pairs < 0).any():
        raise ValueError("index can't contain negative values")
    if mode in ("constant", "empty"):
        cv = kwargs.get("constant_values", 0)
        cv = cv.tolist() if is_array(cv) else cv
        cpairs = np.broadcast_to(np.asarray(cv, dtype=object), (x.ndim, 2)) \
            if np.ndim(cv) else np.full((x.ndim, 2), cv, dtype=object)
        out = x
        for ax in range(x.ndim):
            parts = []
            for side, (n, v) in enumerate(zip(pairs[ax], cpairs[ax])):
                if n == 0:
                    continue
                shp = list(out.shape)
                shp[ax] = int(n)
                v = np.asarray(v).astype(x.dtype).item()   # NumPy casts unsafely
                parts.append((side, xp.full(tuple(shp), v, dtype=x.dtype, device=x.device)))
            if parts:
                seq = [p for s, p in parts if s == 0] + [out] + [p for s, p in parts if s == 1]
                out = xp.concat(seq, axis=ax)
        return out
    out = x
    for ax in range(x.ndim):
        before, after = (int(v) for v in pairs[ax])
        if before == 0 and after == 0:
            continue
        n = out.shape[ax]
        if n == 0:
            raise ValueError(f"can't extend empty axis {ax} using modes other than "
                             f"'constant' or 'empty'")
        if mode in _PAD_STATS or mode == "linear_ramp":
            out = _pad_computed(out, ax, before, after, mode, kwargs)
            continue
        idx = np.pad(np.arange(n), (before, after), mode=mode)
        out = xp.take(out, idx, axis=ax)
    return out


_PAD_STATS = ("maximum", "minimum", "mean", "median")


def _pad_pairs(v: Any, ndim: int, what: str) -> np.ndarray:
    """A per-axis (before, after) table of ``v`` (a scalar, a pair, or a pair per axis)."""
    v = v.tolist() if is_array(v) else v
    try:
        return np.broadcast_to(np.asarray(v, dtype=object), (ndim, 2))
    except ValueError:
        raise ValueError(f"pad: {what} {v!r} does not fit an array of {ndim} "
                         f"dimensions") from None


def _pad_computed(out: Any, ax: int, before: int, after: int, mode: str,
                  kwargs: dict[str, Any]) -> Any:
    """``out`` padded along ``ax`` with a statistic of the edge (``maximum``, ``minimum``,
    ``mean``, ``median`` over ``stat_length`` values) or a linear ramp to ``end_values``:
    NumPy's values, computed on the device (integers rounded half to even, then cast)."""
    xp = _xp()
    n = out.shape[ax]
    parts = []
    if mode == "linear_ramp":
        ends = _pad_pairs(kwargs.get("end_values", 0), out.ndim, "end_values")[ax]
        fl = out.dtype if out.dtype.kind in "fc" else out.device.default_float
        for side, width in ((0, before), (1, after)):
            if width == 0:
                continue
            edge = xp.astype(xp.take(out, [0 if side == 0 else n - 1], axis=ax), fl)
            shape = [1] * out.ndim
            shape[ax] = width
            k = xp.reshape(xp.arange(width, dtype=fl, device=out.device), tuple(shape))
            end = float(ends[side])
            ramp = end + (edge - end) * (k / width)        # NumPy's linspace, endpoint off
            if side == 1:
                ramp = xp.flip(ramp, axis=ax)
            if out.dtype.kind in "iub":
                ramp = xp.floor(ramp)                     # NumPy's integer linspace floors
            parts.append((side, xp.astype(ramp, out.dtype)))
    else:
        lengths = _pad_pairs(kwargs.get("stat_length", None), out.ndim, "stat_length")[ax]
        stat = {"maximum": xp.max, "minimum": xp.min, "mean": xp.mean,
                "median": median}[mode]
        for side, width in ((0, before), (1, after)):
            if width == 0:
                continue
            m = n if lengths[side] is None else min(operator.index(lengths[side]), n)
            if m <= 0 and mode in ("maximum", "minimum"):
                raise ValueError("stat_length of 0 yields no value for padding")
            chunk = xp.take(out, list(range(m)) if side == 0 else list(range(n - m, n)),
                            axis=ax)
            if mode == "mean" and chunk.dtype.kind not in "fc":
                chunk = xp.astype(chunk, out.device.default_float)
            v = stat(chunk, axis=ax, keepdims=True)
            if out.dtype.kind in "iu" and v.dtype.kind == "f":
                v = xp.round(v)                           # NumPy rounds half to even
            shape = list(out.shape)
            shape[ax] = width
            parts.append((side, xp.broadcast_to(xp.astype(v, out.dtype), tuple(shape))))
    seq = [p for s_, p in parts if s_ == 0] + [out] + [p for s_, p in parts if s_ == 1]
    return xp.concat(seq, axis=ax)
