"""NumPy's index helpers on the device: ``unravel_index``, ``ravel_multi_index``,
``indices``, ``ix_``, the ``*_indices`` family, ``fill_diagonal`` and ``put_along_axis``.

Index arithmetic runs as clnp elementwise ops on the device. The triangle and diagonal index
sets depend only on their integer parameters; they are computed on the host and uploaded once.
Bounds checks that NumPy makes (``unravel_index``, ``ravel_multi_index(mode='raise')``) read
one flag back from the device when the indices live there (none under transformations).
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable, Sequence

import numpy as np

from .._core import dtypes as dt
from .._core.checks import is_array, normalize_axis
from .._core.namespace import namespace as _xp
from .array_likes import _arr, _device_of
from .._core.prims import in_transformation
from .._core.dtypes import kind as dkind

__all__ = ["unravel_index", "ravel_multi_index", "indices", "ix_", "diag_indices",
           "diag_indices_from", "tril_indices", "triu_indices", "tril_indices_from",
           "triu_indices_from", "mask_indices", "fill_diagonal", "put_along_axis"]


def _dims(shape: Any, fname: str) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        dims = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"{fname}: the shape must be a sequence of integers; got "
                        f"{shape!r}") from None
    if any(n < 0 for n in dims):
        raise ValueError(f"{fname}: dimensions must be non-negative; got {dims}")
    return dims


def _int_index(a: Any, fname: str, what: str) -> Any:
    x = _arr(a, _device_of(a))
    if dkind(x.dtype) not in "iu":
        if dkind(x.dtype) == "f" and x.size == 0:
            return _xp().astype(x, dt.int64)
        raise TypeError(f"{fname}: {what} must be integers; got dtype {x.dtype}")
    return _xp().astype(x, dt.int64)


def _check_range(x: Any, lo: int, hi: int, fname: str, msg: str) -> None:
    """Raise ValueError when an element of ``x`` is outside [lo, hi) (one device read)."""
    if in_transformation() or x.size == 0:
        return
    xp = _xp()
    if bool(xp.any((x < lo) | (x >= hi))):
        raise ValueError(f"{fname}: {msg}")


def unravel_index(indices: Any, shape: Any, order: str = "C") -> tuple[Any, ...]:
    """Convert flat indices into a tuple of coordinate arrays (NumPy's ``unravel_index``).

    Parameters
    ----------
    indices : Array or array_like of int
        Flat indices into an array of ``shape``.
    shape : tuple of int
        The shape of the array.
    order : {'C', 'F'}, optional
        Row-major (C) or column-major (Fortran) index order.

    Returns
    -------
    tuple of Array
        One int64 array per dimension, each of the shape of ``indices``.

    Raises
    ------
    ValueError
        When an index is out of range for ``shape`` or ``order`` is unknown.
    TypeError
        When ``indices`` are not integers.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> r, c = np.unravel_index([22, 41, 37], (7, 6))
    >>> print(numpy.asarray(r), numpy.asarray(c))
    [3 6 6] [4 5 1]
    """
    if order not in ("C", "F"):
        raise ValueError(f"unravel_index: order must be 'C' or 'F'; got {order!r}")
    dims = _dims(shape, "unravel_index")
    idx = _int_index(indices, "unravel_index", "indices")
    _check_range(idx, 0, math.prod(dims), "unravel_index",
                 f"an index is out of bounds for an array of size {math.prod(dims)}")
    out: list[Any] = []
    rest = idx
    for n in (reversed(dims) if order == "C" else dims):
        out.append(rest % n if n else rest * 0)
        rest = rest // n if n else rest
    return tuple(reversed(out)) if order == "C" else tuple(out)


def ravel_multi_index(multi_index: Any, dims: Any, mode: Any = "raise",
                      order: str = "C") -> Any:
    """Convert a tuple of coordinate arrays into flat indices (NumPy's
    ``ravel_multi_index``).

    Parameters
    ----------
    multi_index : tuple of array_like of int
        One integer array per dimension (broadcast together).
    dims : tuple of int
        The shape of the array the indices address.
    mode : {'raise', 'wrap', 'clip'} or tuple of them, optional
        What to do with out-of-range coordinates, per dimension.
    order : {'C', 'F'}, optional
        Row-major or column-major flattening.

    Returns
    -------
    Array
        int64 flat indices, of the broadcast shape of ``multi_index``.

    Raises
    ------
    ValueError
        When a coordinate is out of range with mode 'raise', or the lengths differ.
    TypeError
        When ``multi_index`` is not a sequence of integer arrays.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.ravel_multi_index(([3, 6, 6], [4, 5, 1]), (7, 6))))
    [22 41 37]
    """
    shape = _dims(dims, "ravel_multi_index")
    if order not in ("C", "F"):
        raise ValueError(f"ravel_multi_index: order must be 'C' or 'F'; got {order!r}")
    if not (isinstance(multi_index, (tuple, list, np.ndarray)) or is_array(multi_index)):
        raise TypeError(f"ravel_multi_index: multi_index must be a tuple of integer arrays; "
                        f"got {type(multi_index).__name__}")
    if len(multi_index) != len(shape):
        raise ValueError(f"ravel_multi_index: parameter multi_index must be a sequence of "
                         f"length {len(shape)}; got {len(multi_index)}")
    modes = (mode,) * len(shape) if isinstance(mode, str) else tuple(mode)
    if len(modes) != len(shape) or any(m not in ("raise", "wrap", "clip") for m in modes):
        raise ValueError(f"ravel_multi_index: mode must be 'raise', 'wrap' or 'clip' (or one "
                         f"per dimension); got {mode!r}")
    xp = _xp()
    dev = _device_of(*multi_index)
    coords = xp.broadcast_arrays(*[_int_index(_arr(m, dev), "ravel_multi_index",
                                              "multi_index") for m in multi_index])
    fixed = []
    for c, n, m in zip(coords, shape, modes):
        if m == "wrap":
            c = c % n if n else c
        elif m == "clip":
            c = xp.clip(c, 0, max(n - 1, 0))
        else:
            _check_range(c, 0, n, "ravel_multi_index", "invalid entry in coordinates array")
        fixed.append(c)
    order_ = range(len(shape)) if order == "C" else reversed(range(len(shape)))
    flat = None
    for i in order_:
        flat = fixed[i] if flat is None else flat * shape[i] + fixed[i]
    if flat is None:
        raise ValueError("ravel_multi_index: dims must have at least one dimension")
    return flat


def indices(dimensions: Sequence[int], dtype: Any = int, sparse: bool = False, *,
            device: Any = None) -> Any:
    """An array representing the indices of a grid (NumPy's ``indices``).

    Parameters
    ----------
    dimensions : sequence of int
        The shape of the grid.
    dtype : dtype, optional
        Integer type of the result (default int64).
    sparse : bool, optional
        Return a tuple of broadcastable arrays instead of one stacked array.
    device : Device, optional
        Where to create the result.

    Returns
    -------
    Array or tuple of Array
        Shape ``(len(dimensions),) + dimensions``, or the sparse tuple.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.indices((2, 3))))
    [[[0 0 0]
      [1 1 1]]
    <BLANKLINE>
     [[0 1 2]
      [0 1 2]]]
    """
    xp = _xp()
    dims = _dims(dimensions, "indices")
    d = dt.as_dtype(dtype)
    parts = []
    for i, n in enumerate(dims):
        shp = [1] * len(dims)
        shp[i] = n
        parts.append(xp.reshape(xp.arange(n, dtype=d, device=device), tuple(shp)))
    if sparse:
        return tuple(parts)
    if not dims:
        return xp.zeros((0,), dtype=d, device=device)
    return xp.stack([xp.broadcast_to(p, dims) for p in parts])


def ix_(*args: Any, device: Any = None) -> tuple[Any, ...]:
    """Open mesh from sequences, for cross-product indexing (NumPy's ``ix_``).

    Parameters
    ----------
    *args : 1-D array_like
        Integer or boolean sequences (booleans become their nonzero positions).
    device : Device, optional
        Where host sequences go (default: the device of the first clnp argument, else the
        default device).

    Returns
    -------
    tuple of Array
        Array ``k`` has shape ``(1, ..., n_k, ..., 1)``.

    Raises
    ------
    ValueError
        When an argument is not 1-D.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> a = np.arange(12).reshape(3, 4)
    >>> print(numpy.asarray(a[np.ix_([0, 2], [1, 3])]))
    [[ 1  3]
     [ 9 11]]
    """
    xp = _xp()
    dev = device or _device_of(*args)
    out = []
    nd = len(args)
    for k, a in enumerate(args):
        x = _arr(a, dev)
        if x.ndim != 1:
            raise ValueError(f"ix_: cross index must be 1 dimensional; argument {k} has "
                             f"shape {x.shape}")
        if x.size == 0 and not is_array(a):
            x = xp.astype(x, dt.int64)
        if x.dtype == dt.bool_:
            (x,) = xp.nonzero(x)
        shp = [1] * nd
        shp[k] = x.shape[0]
        out.append(xp.reshape(x, tuple(shp)))
    return tuple(out)


def _upload_pair(r: np.ndarray, c: np.ndarray, device: Any) -> tuple[Any, Any]:
    xp = _xp()
    return (xp.asarray(r.astype(np.int64), device=device),
            xp.asarray(c.astype(np.int64), device=device))


def diag_indices(n: int, ndim: int = 2, *, device: Any = None) -> tuple[Any, ...]:
    """Indices of the main diagonal of an ``n x n x ...`` array (NumPy's ``diag_indices``).

    Parameters
    ----------
    n : int
        The size along each dimension.
    ndim : int, optional
        The number of dimensions.
    device : Device, optional
        Where to create the indices.

    Returns
    -------
    tuple of Array
        ``ndim`` copies of ``arange(n)``.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> a = np.zeros((3, 3), dtype=int)
    >>> a[np.diag_indices(3)] = 7
    >>> print(numpy.asarray(a))
    [[7 0 0]
     [0 7 0]
     [0 0 7]]
    """
    idx = _xp().arange(operator.index(n), dtype=dt.int64, device=device)
    return (idx,) * operator.index(ndim)


def diag_indices_from(arr: Any) -> tuple[Any, ...]:
    """Indices of the main diagonal of ``arr``, whose dimensions must all be equal.

    Parameters
    ----------
    arr : Array
        At least 2-D, all dimensions of one length.

    Returns
    -------
    tuple of Array
        As :func:`diag_indices`.

    Raises
    ------
    ValueError
        When ``arr`` is not at least 2-D or its dimensions differ.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> r, c = np.diag_indices_from(np.ones((2, 2)))
    >>> print(numpy.asarray(r), numpy.asarray(c))
    [0 1] [0 1]
    """
    a = _arr(arr)
    if a.ndim < 2:
        raise ValueError(f"diag_indices_from: input array must be at least 2-d; got shape "
                         f"{a.shape}")
    if len(set(a.shape)) != 1:
        raise ValueError(f"diag_indices_from: all dimensions of input must be of equal "
                         f"length; got shape {a.shape}")
    return diag_indices(a.shape[0], a.ndim, device=a.device)


def tril_indices(n: int, k: int = 0, m: int | None = None, *,
                 device: Any = None) -> tuple[Any, Any]:
    """Indices of the lower triangle of an ``(n, m)`` array (NumPy's ``tril_indices``).

    Parameters
    ----------
    n : int
        Rows.
    k : int, optional
        Diagonal offset.
    m : int, optional
        Columns (default ``n``).
    device : Device, optional
        Where to create the indices.

    Returns
    -------
    tuple of Array
        Row and column indices, in row-major order.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> r, c = np.tril_indices(3)
    >>> print(numpy.asarray(r), numpy.asarray(c))
    [0 1 1 2 2 2] [0 0 1 0 1 2]
    """
    return _upload_pair(*np.tril_indices(n, k, m), device)


def triu_indices(n: int, k: int = 0, m: int | None = None, *,
                 device: Any = None) -> tuple[Any, Any]:
    """Indices of the upper triangle of an ``(n, m)`` array (NumPy's ``triu_indices``).

    Parameters
    ----------
    n : int
        Rows.
    k : int, optional
        Diagonal offset.
    m : int, optional
        Columns (default ``n``).
    device : Device, optional
        Where to create the indices.

    Returns
    -------
    tuple of Array
        Row and column indices, in row-major order.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> r, c = np.triu_indices(3, 1)
    >>> print(numpy.asarray(r), numpy.asarray(c))
    [0 0 1] [1 2 2]
    """
    return _upload_pair(*np.triu_indices(n, k, m), device)


def _from(arr: Any, fname: str) -> Any:
    a = _arr(arr)
    if a.ndim != 2:
        raise ValueError(f"{fname}: input array must be 2-d; got shape {a.shape}")
    return a


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """Indices of the lower triangle of the 2-D array ``arr``.

    Parameters
    ----------
    arr : Array
        A 2-D array.
    k : int, optional
        Diagonal offset.

    Returns
    -------
    tuple of Array
        As :func:`tril_indices` for ``arr``'s shape.

    Raises
    ------
    ValueError
        When ``arr`` is not 2-D.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> a = np.arange(4).reshape(2, 2)
    >>> print(numpy.asarray(a[np.tril_indices_from(a)]))
    [0 2 3]
    """
    a = _from(arr, "tril_indices_from")
    return tril_indices(a.shape[-2], k, a.shape[-1], device=a.device)


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """Indices of the upper triangle of the 2-D array ``arr``.

    Parameters
    ----------
    arr : Array
        A 2-D array.
    k : int, optional
        Diagonal offset.

    Returns
    -------
    tuple of Array
        As :func:`triu_indices` for ``arr``'s shape.

    Raises
    ------
    ValueError
        When ``arr`` is not 2-D.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> a = np.arange(4).reshape(2, 2)
    >>> print(numpy.asarray(a[np.triu_indices_from(a)]))
    [0 1 3]
    """
    a = _from(arr, "triu_indices_from")
    return triu_indices(a.shape[-2], k, a.shape[-1], device=a.device)


def mask_indices(n: int, mask_func: Callable[..., Any], k: Any = 0) -> tuple[Any, Any]:
    """Indices where ``mask_func(ones((n, n)), k)`` is nonzero (NumPy's ``mask_indices``).

    Parameters
    ----------
    n : int
        The size of the square array.
    mask_func : callable
        Such as ``clnp.triu`` or ``clnp.tril``.
    k : scalar, optional
        Passed to ``mask_func``.

    Returns
    -------
    tuple of Array
        Row and column indices (the count is read from the device).

    Examples
    --------
    >>> import numpy, clnp as np
    >>> r, c = np.mask_indices(2, np.triu)
    >>> print(numpy.asarray(r), numpy.asarray(c))
    [0 0 1] [0 1 1]
    """
    xp = _xp()
    m = mask_func(xp.ones((n, n), dtype=dt.int64), k)
    return xp.nonzero(_arr(m) != 0)


def fill_diagonal(a: Any, val: Any, wrap: bool = False) -> None:
    """Fill the main diagonal of ``a`` in place (NumPy's ``fill_diagonal``).

    Parameters
    ----------
    a : Array
        At least 2-D; for more than 2 dimensions all must be equal.
    val : scalar or array_like
        Values, repeated cyclically along the diagonal.
    wrap : bool, optional
        For tall matrices, restart the diagonal every ``ncols + 1`` rows.

    Returns
    -------
    None
        ``a`` is modified.

    Raises
    ------
    ValueError
        When ``a`` has fewer than 2 dimensions or unequal ones (beyond 2-D).

    Examples
    --------
    >>> import numpy, clnp as np
    >>> a = np.zeros((3, 3), dtype=int)
    >>> np.fill_diagonal(a, [1, 2])
    >>> print(numpy.asarray(a))
    [[1 0 0]
     [0 2 0]
     [0 0 1]]
    """
    if not is_array(a):
        raise TypeError(f"fill_diagonal: a must be a clnp array (it is modified in place); "
                        f"got {type(a).__name__}")
    if a.ndim < 2:
        raise ValueError(f"fill_diagonal: array must be at least 2-d; got shape {a.shape}")
    shape = a.shape
    if a.ndim == 2:
        step = shape[1] + 1
        end = None if wrap else shape[1] * shape[1]
    else:
        if len(set(shape)) != 1:
            raise ValueError(f"fill_diagonal: all dimensions of input must be of equal "
                             f"length; got shape {shape}")
        step = 1 + int(np.cumprod(shape[:-1]).sum())
        end = None
    flat = np.arange(math.prod(shape))[:end:step]
    _put_flat(a, flat, val, "fill_diagonal")


def _put_flat(a: Any, flat: Any, val: Any, fname: str) -> None:
    """``a.flat[flat] = val`` with ``val`` repeated cyclically (host or device indices)."""
    xp = _xp()
    n = flat.shape[0] if not is_array(flat) else flat.size
    if n == 0:
        return
    v = xp.reshape(_arr(val, a.device, a.dtype if not is_array(val) else None), (-1,))
    if v.size == 0:
        return
    if v.dtype != a.dtype:
        v = xp.astype(v, a.dtype)
    if v.size != n:
        v = xp.take(v, xp.arange(n, dtype=dt.int64, device=a.device) % v.size)
    if is_array(flat):
        coords = unravel_index(flat, a.shape)
    else:
        coords = tuple(np.unravel_index(flat, a.shape))
    a[coords] = v


def put_along_axis(arr: Any, indices: Any, values: Any, axis: int | None) -> None:
    """Put values into ``arr`` at ``indices`` along ``axis`` (NumPy's ``put_along_axis``).

    Parameters
    ----------
    arr : Array
        The destination, modified in place.
    indices : array_like of int
        Of ``arr``'s number of dimensions (broadcast against it off ``axis``).
    values : array_like
        Broadcast against ``indices``.
    axis : int or None
        The axis; None works on the flattened ``arr`` (``indices`` 1-D).

    Returns
    -------
    None
        ``arr`` is modified.

    Raises
    ------
    ValueError
        When ``indices`` has the wrong number of dimensions.
    IndexError
        When ``indices`` are not integers (as NumPy).

    Examples
    --------
    >>> import numpy, clnp as np
    >>> a = np.asarray([[10, 30, 20], [60, 40, 50]])
    >>> np.put_along_axis(a, np.argmax(a, axis=1, keepdims=True), 99, axis=1)
    >>> print(numpy.asarray(a))
    [[10 99 20]
     [99 40 50]]
    """
    xp = _xp()
    if not is_array(arr):
        raise TypeError(f"put_along_axis: arr must be a clnp array; got {type(arr).__name__}")
    # the values first: junk must fail before any index work on the device
    values = _arr(values, arr.device, arr.dtype if not is_array(values) else None)
    idx = _arr(indices, arr.device)
    if idx.dtype.kind not in "iu" and not (idx.dtype.kind == "f" and idx.size == 0):
        # NumPy's class: the indices index arr (take_along_axis raises the same)
        raise IndexError(f"put_along_axis: indices must have an integer dtype; got {idx.dtype}")
    idx = _int_index(idx, "put_along_axis", "indices")
    if axis is None:
        if idx.ndim != 1:
            raise ValueError(f"put_along_axis: when axis=None, indices must be 1-D; got "
                             f"shape {idx.shape}")
        flat = idx % max(arr.size, 1)
        vals = xp.broadcast_to(values, idx.shape)
        a_coords = unravel_index(flat, arr.shape)
        arr[a_coords] = xp.astype(vals, arr.dtype)
        return
    ax = normalize_axis(axis, arr.ndim, "put_along_axis")
    if idx.ndim != arr.ndim:
        raise ValueError(f"put_along_axis: indices and arr must have the same number of "
                         f"dimensions; got {idx.ndim} and {arr.ndim}")
    shape = list(xp.broadcast_shapes(
        tuple(1 if i == ax else n for i, n in enumerate(arr.shape)),
        tuple(1 if i == ax else n for i, n in enumerate(idx.shape))))
    shape[ax] = idx.shape[ax]
    idx = xp.broadcast_to(idx, tuple(shape))
    idx = xp.where(idx < 0, idx + arr.shape[ax], idx)
    key = []
    for i in range(arr.ndim):
        if i == ax:
            key.append(idx)
        else:
            s = [1] * arr.ndim
            s[i] = shape[i]
            key.append(xp.broadcast_to(xp.reshape(xp.arange(shape[i], dtype=dt.int64,
                                                            device=arr.device), tuple(s)),
                                       tuple(shape)))
    vals = xp.broadcast_to(values, tuple(shape))
    arr[tuple(key)] = xp.astype(vals, arr.dtype)
