"""NumPy's shape and predicate helpers: ``fliplr``, ``flipud``, ``rot90``, ``rollaxis``,
``row_stack``, ``block``, ``diagflat``, ``apply_along_axis``, ``apply_over_axes``,
``array_equiv``, ``asarray_chkfinite``, ``iterable``, ``shares_memory``,
``may_share_memory``, ``isfortran``, ``iscomplex``, ``isreal``, ``isposinf``, ``isneginf``
and ``angle``.

Reorderings are views (flip, transpose) or one concatenation. ``apply_along_axis`` and
``apply_over_axes`` call the user's function from the host, one call per slice, as NumPy
does.
"""
from __future__ import annotations

import itertools
import math
from typing import Any, Callable, Sequence

import numpy as np

from .._core import dtypes as dt
from .._core.checks import is_array, normalize_axis
from .._core.namespace import namespace as _xp
from .array_likes import _arr, _device_of, _finish
from .._core.dtypes import kind as dkind

__all__ = ["fliplr", "flipud", "rot90", "rollaxis", "row_stack", "block", "diagflat",
           "apply_along_axis", "apply_over_axes", "array_equiv", "asarray_chkfinite",
           "iterable", "shares_memory", "may_share_memory", "isfortran", "iscomplex",
           "isreal", "isposinf", "isneginf", "angle"]


def fliplr(m: Any) -> Any:
    """Reverse the columns (axis 1) of an array of at least 2 dimensions (a view).

    Parameters
    ----------
    m : array_like
        At least 2-D.

    Returns
    -------
    Array
        A view.

    Raises
    ------
    ValueError
        When ``m`` has fewer than 2 dimensions.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.fliplr([[1, 2], [3, 4]])))
    [[2 1]
     [4 3]]
    """
    x = _arr(m)
    if x.ndim < 2:
        raise ValueError(f"fliplr: input must be >= 2-d; got shape {x.shape}")
    return _xp().flip(x, axis=1)


def flipud(m: Any) -> Any:
    """Reverse the rows (axis 0) of an array of at least 1 dimension (a view).

    Parameters
    ----------
    m : array_like
        At least 1-D.

    Returns
    -------
    Array
        A view.

    Raises
    ------
    ValueError
        When ``m`` is 0-d.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.flipud([1, 2, 3])))
    [3 2 1]
    """
    x = _arr(m)
    if x.ndim < 1:
        raise ValueError(f"flipud: input must be >= 1-d; got shape {x.shape}")
    return _xp().flip(x, axis=0)


def rot90(m: Any, k: int = 1, axes: Sequence[int] = (0, 1)) -> Any:
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (NumPy's ``rot90``; a view).

    Parameters
    ----------
    m : array_like
        At least 2-D.
    k : int, optional
        Number of rotations (counter-clockwise from the first axis towards the second).
    axes : (int, int), optional
        The plane.

    Returns
    -------
    Array
        A view.

    Raises
    ------
    ValueError
        When the axes are equal, out of range, or not two.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.rot90([[1, 2], [3, 4]])))
    [[2 4]
     [1 3]]
    """
    xp = _xp()
    x = _arr(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("rot90: len(axes) must be 2")
    if x.ndim < 2:
        raise ValueError(f"rot90: input must be >= 2-d; got shape {x.shape}")
    a0 = normalize_axis(axes[0], x.ndim, "rot90")
    a1 = normalize_axis(axes[1], x.ndim, "rot90")
    if a0 == a1:
        raise ValueError("rot90: axes must be different")
    k %= 4
    if k == 0:
        return x[...]
    if k == 2:
        return xp.flip(xp.flip(x, axis=a0), axis=a1)
    perm = list(range(x.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return xp.permute_dims(xp.flip(x, axis=a1), tuple(perm))
    return xp.flip(xp.permute_dims(x, tuple(perm)), axis=a1)


def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    """Roll ``axis`` backwards until it lies before ``start`` (NumPy's ``rollaxis``; a view).

    Parameters
    ----------
    a : array_like
        Input.
    axis : int
        The axis to move.
    start : int, optional
        The position it ends before.

    Returns
    -------
    Array
        A view.

    Raises
    ------
    ValueError
        When ``start`` is out of range.

    Examples
    --------
    >>> import clnp as np
    >>> np.rollaxis(np.ones((3, 4, 5, 6)), 3, 1).shape
    (3, 6, 4, 5)
    """
    x = _arr(a)
    n = x.ndim
    axis = normalize_axis(axis, n, "rollaxis")
    if not -n <= start <= n:
        raise ValueError(f"rollaxis: 'start' arg requires {-n} <= start < {n + 1}, but "
                         f"{start} was passed in")
    if start < 0:
        start += n
    if axis < start:
        start -= 1
    if axis == start:
        return x[...]
    axes = list(range(n))
    axes.remove(axis)
    axes.insert(start, axis)
    return _xp().permute_dims(x, tuple(axes))


def row_stack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> Any:
    """Stack arrays vertically (NumPy's deprecated alias of ``vstack``).

    Parameters
    ----------
    tup : sequence of array_like
        The arrays.
    dtype : dtype, optional
        Result dtype.
    casting : str, optional
        As for ``vstack``.

    Returns
    -------
    Array
        ``vstack(tup)``.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.row_stack([[1, 2], [3, 4]])))
    [[1 2]
     [3 4]]
    """
    from .manipulation import vstack
    return vstack(tup, dtype=dtype, casting=casting)


def _block(arrays: Any, depth: int, list_depth: int, ndim: int, dev: Any) -> Any:
    """The blocks of the lists ``depth`` levels down, joined along axis ``depth -
    list_depth`` (the innermost lists along the last axis, whatever the blocks' ndim), each
    block first given ``ndim`` dimensions."""
    xp = _xp()
    if isinstance(arrays, tuple):
        raise TypeError("block: arrays is a tuple; only lists can be used to arrange blocks")
    if isinstance(arrays, list):
        if not arrays:
            raise ValueError("block: lists cannot be empty")
        parts = [_block(a, depth + 1, list_depth, ndim, dev) for a in arrays]
        parts = [xp.reshape(p, (1,) * (ndim - p.ndim) + p.shape) if p.ndim < ndim else p
                 for p in parts]
        return xp.concat(parts, axis=depth - list_depth)
    return _arr(arrays, dev)


def _list_depth(x: Any) -> int:
    if not isinstance(x, list):
        return 0
    return 1 + _list_depth(x[0]) if x else 1


def block(arrays: Any) -> Any:
    """Assemble an array from nested lists of blocks (NumPy's ``block``).

    Parameters
    ----------
    arrays : nested list of array_like
        The innermost lists are joined along the last axis, the next along the one before.

    Returns
    -------
    Array
        The assembled array.

    Raises
    ------
    ValueError
        When a list is empty or the nesting depths differ.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> a = np.eye(2, dtype=int)
    >>> print(numpy.asarray(np.block([[a, 2 * a], [3 * a, 4 * a]])))
    [[1 0 2 0]
     [0 1 0 2]
     [3 0 4 0]
     [0 3 0 4]]
    """
    if isinstance(arrays, tuple):
        raise TypeError("block: arrays is a tuple; only lists can be used to arrange blocks")
    depth = _list_depth(arrays)

    def check(x: Any, d: int) -> None:
        if isinstance(x, list):
            for y in x:
                check(y, d + 1)
        elif d != depth:
            raise ValueError(f"block: list depths are mismatched; expected {depth}, got {d}")
    check(arrays, 0)
    xp = _xp()
    dev = _device_of(arrays)
    nd = 0
    stack = [arrays]
    while stack:
        y = stack.pop()
        if isinstance(y, list):
            stack.extend(y)
        else:
            nd = max(nd, int(np.ndim(y)) if not is_array(y) else y.ndim)
    res = _block(arrays, 0, depth, max(depth, nd), dev)
    return res if depth else xp.asarray(res, copy=True)


def diagflat(v: Any, k: int = 0) -> Any:
    """A 2-D array with the flattened input on diagonal ``k`` (NumPy's ``diagflat``).

    Parameters
    ----------
    v : array_like
        Flattened.
    k : int, optional
        Diagonal offset.

    Returns
    -------
    Array
        Square, of side ``v.size + |k|``.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.diagflat([[1, 2]], 1)))
    [[0 1 0]
     [0 0 2]
     [0 0 0]]
    """
    from .diagonals import diag
    return diag(_xp().reshape(_arr(v), (-1,)), k)


def apply_along_axis(func1d: Callable[..., Any], axis: int, arr: Any, *args: Any,
                     **kwargs: Any) -> Any:
    """Apply ``func1d`` to the 1-D slices of ``arr`` along ``axis`` (NumPy's
    ``apply_along_axis``; one host call per slice).

    Parameters
    ----------
    func1d : callable
        Takes a 1-D array, returns a scalar or an array of one fixed shape.
    axis : int
        The axis the slices run along.
    arr : array_like
        Input.
    *args, **kwargs
        Passed to ``func1d``.

    Returns
    -------
    Array
        The results, with ``axis`` replaced by the result's dimensions.

    Raises
    ------
    ValueError
        When ``arr`` has a zero-length dimension other than ``axis``.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> b = np.asarray([[1, 2, 3], [4, 5, 6]])
    >>> print(numpy.asarray(np.apply_along_axis(lambda r: r[0] + r[-1], 1, b)))
    [ 4 10]
    """
    xp = _xp()
    x = _arr(arr)
    ax = normalize_axis(axis, x.ndim, "apply_along_axis")
    moved = xp.moveaxis(x, ax, -1)
    outer = moved.shape[:-1]
    if math.prod(outer) == 0:
        raise ValueError("apply_along_axis: cannot apply_along_axis when any iteration "
                         "dimensions are 0")
    res = [_arr(func1d(moved[idx], *args, **kwargs), x.device)
           for idx in itertools.product(*map(range, outer))]
    out = xp.reshape(xp.stack(res), outer + res[0].shape)
    k = res[0].ndim
    if k == 0:
        return out
    # NumPy puts the result's dimensions where the axis was
    src = list(range(len(outer), len(outer) + k))
    dst = list(range(ax, ax + k))
    return xp.moveaxis(out, src, dst)


def apply_over_axes(func: Callable[..., Any], a: Any, axes: Any) -> Any:
    """Apply ``func(a, axis)`` repeatedly over ``axes`` (NumPy's ``apply_over_axes``).

    Parameters
    ----------
    func : callable
        Called as ``func(a, axis)``; returns an array of ``a``'s or one fewer dimensions.
    a : array_like
        Input.
    axes : int or sequence of int
        The axes, in order.

    Returns
    -------
    Array
        Of ``a``'s number of dimensions.

    Raises
    ------
    ValueError
        When ``func`` returns an array of another number of dimensions.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> a = np.arange(24).reshape(2, 3, 4)
    >>> print(numpy.asarray(np.apply_over_axes(np.sum, a, [0, 2])))
    [[[ 60]
      [ 92]
      [124]]]
    """
    xp = _xp()
    val = _arr(a)
    n = val.ndim
    for axis in np.atleast_1d(axes):
        ax = int(axis) + n if axis < 0 else int(axis)
        res = _arr(func(val, ax), val.device)
        if res.ndim == val.ndim:
            val = res
        elif res.ndim == val.ndim - 1:
            val = xp.expand_dims(res, axis=ax)
        else:
            raise ValueError("apply_over_axes: function is not returning an array of the "
                             "correct shape")
    return val


def array_equiv(a1: Any, a2: Any) -> bool:
    """True when the arrays have broadcastable shapes and equal elements (NumPy's
    ``array_equiv``).

    Parameters
    ----------
    a1, a2 : array_like
        Inputs.

    Returns
    -------
    bool
        The answer (one device read).

    Examples
    --------
    >>> import clnp as np
    >>> np.array_equiv([1, 2], [[1, 2], [1, 2]]), np.array_equiv([1, 2], [[1, 2, 1, 2]])
    (True, False)
    """
    xp = _xp()
    dev = _device_of(a1, a2)
    x, y = _arr(a1, dev), _arr(a2, dev)
    try:
        xp.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        return False
    return bool(xp.all(x == y))


def asarray_chkfinite(a: Any, dtype: Any = None, order: Any = None) -> Any:
    """``asarray`` that raises on NaN or infinity (NumPy's ``asarray_chkfinite``).

    Parameters
    ----------
    a : array_like
        Input.
    dtype : dtype, optional
        Result dtype.
    order : {'C', None}, optional
        Only C order exists on a device.

    Returns
    -------
    Array
        ``a`` as an array.

    Raises
    ------
    ValueError
        When ``a`` has a NaN or an infinity.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.asarray_chkfinite([1, 2])))
    [1 2]
    """
    xp = _xp()
    x = _arr(a, None, dtype)
    if dkind(x.dtype) in "fc" and x.size and not bool(xp.all(xp.isfinite(x))):
        raise ValueError("asarray_chkfinite: array must not contain infs or NaNs")
    return x


def iterable(y: Any) -> bool:
    """Whether ``iter(y)`` works (NumPy's ``iterable``; a 0-d array is not iterable).

    Parameters
    ----------
    y : object
        Anything.

    Returns
    -------
    bool
        The answer.

    Examples
    --------
    >>> import clnp as np
    >>> np.iterable([1, 2]), np.iterable(2), np.iterable(np.asarray(2))
    (True, False, False)
    """
    if is_array(y):
        return y.ndim > 0
    try:
        iter(y)
    except TypeError:
        return False
    return True


def _span(a: Any) -> tuple[Any, int, int]:
    lo, hi = a._span()
    return a._buf, lo * a.dtype.itemsize, hi * a.dtype.itemsize


def _host_side(v: Any) -> np.ndarray | None:
    """``v`` as host memory NumPy can compare addresses of: a NumPy array itself, a clnp
    array of a device that shares host memory as its view (``numpy.asarray``, the same
    memory), else None (device memory is never a NumPy array's)."""
    if isinstance(v, np.ndarray):
        return v
    if is_array(v) and getattr(v.device, "shares_host_memory", False):
        try:
            return np.asarray(v)
        except TypeError:               # a traced value has no memory yet
            return None
    return None


def _mixed(a: Any, b: Any, fn: Callable[[Any, Any], Any]) -> bool | None:
    """NumPy's answer for a NumPy array against a clnp array (``numpy.asarray(x)`` of a CPU
    device's array is ``x``'s memory, so code that copies unless ``may_share_memory``, as
    scikit-learn's ``check_array``, must hear True); None when neither is a NumPy array."""
    if not (isinstance(a, np.ndarray) or isinstance(b, np.ndarray)):
        return None
    ha, hb = _host_side(a), _host_side(b)
    return False if ha is None or hb is None else bool(fn(ha, hb))


def may_share_memory(a: Any, b: Any, max_work: Any = None) -> bool:
    """Whether ``a`` and ``b`` might share memory: same buffer, overlapping byte ranges
    (NumPy's ``may_share_memory``). A NumPy array and a clnp array of a device that shares
    host memory are compared by address, as ``numpy.asarray(x)`` views ``x``'s memory.

    Parameters
    ----------
    a, b : object
        Arrays (anything else shares nothing with a clnp array).
    max_work : int, optional
        Accepted for NumPy compatibility.

    Returns
    -------
    bool
        The answer.

    Examples
    --------
    >>> import clnp as np
    >>> x = np.arange(10)
    >>> np.may_share_memory(x[:5], x[5:]), np.may_share_memory(x, x[::2])
    (False, True)
    """
    mixed = _mixed(a, b, np.may_share_memory)
    if mixed is not None:
        return mixed
    if not (is_array(a) and is_array(b)):
        return False
    if a.size == 0 or b.size == 0:
        return False
    ba, la, ha = _span(a)
    bb, lb, hb = _span(b)
    return ba is bb and la < hb and lb < ha


def shares_memory(a: Any, b: Any, max_work: Any = None) -> bool:
    """Whether ``a`` and ``b`` share an element of memory (NumPy's ``shares_memory``: an
    exact answer, found by comparing the byte offsets of both views' elements on the host
    when their ranges overlap). A NumPy array and a clnp array of a device that shares host
    memory are compared by address, as ``numpy.asarray(x)`` views ``x``'s memory.

    Parameters
    ----------
    a, b : object
        Arrays.
    max_work : int, optional
        Accepted for NumPy compatibility.

    Returns
    -------
    bool
        The answer.

    Examples
    --------
    >>> import clnp as np
    >>> x = np.arange(10)
    >>> np.shares_memory(x[::2], x[1::2]), np.shares_memory(x, x[3])
    (False, True)
    """
    mixed = _mixed(a, b, np.shares_memory)
    if mixed is not None:
        return mixed
    if not may_share_memory(a, b):
        return False

    def bytes_of(v: Any) -> set[int]:
        off = np.full((), v._offset, np.int64)
        for n, s in zip(v.shape, v._strides):
            off = np.add.outer(off, np.arange(n) * s)
        base = np.asarray(off).reshape(-1) * v.dtype.itemsize
        return set(np.add.outer(base, np.arange(v.dtype.itemsize)).reshape(-1).tolist())
    return bool(bytes_of(a) & bytes_of(b))


def isfortran(a: Any) -> bool:
    """True when ``a`` is Fortran-contiguous and not C-contiguous (NumPy's ``isfortran``).

    Parameters
    ----------
    a : Array
        Input.

    Returns
    -------
    bool
        The answer.

    Examples
    --------
    >>> import clnp as np
    >>> np.isfortran(np.ones((2, 3))), np.isfortran(np.ones((2, 3)).T)
    (False, True)
    """
    x = _arr(a)
    if x.ndim < 2 or x.is_contiguous:
        return False
    acc = 1
    for n, s in zip(x.shape, x._strides):
        if n > 1 and s != acc:
            return False
        acc *= n
    return True


def iscomplex(x: Any) -> Any:
    """Elementwise: the imaginary part is nonzero (NumPy's ``iscomplex``).

    Parameters
    ----------
    x : array_like
        Input.

    Returns
    -------
    Array
        bool, of ``x``'s shape.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.iscomplex([1 + 1j, 1 + 0j, 4.5])))
    [ True False False]
    """
    xp = _xp()
    a = _arr(x)
    if dkind(a.dtype) != "c":
        return xp.zeros(a.shape, dtype=dt.bool_, device=a.device)
    return xp.imag(a) != 0


def isreal(x: Any) -> Any:
    """Elementwise: the imaginary part is zero (NumPy's ``isreal``).

    Parameters
    ----------
    x : array_like
        Input.

    Returns
    -------
    Array
        bool, of ``x``'s shape.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.isreal([1 + 1j, 1 + 0j, 4.5])))
    [False  True  True]
    """
    xp = _xp()
    a = _arr(x)
    if dkind(a.dtype) != "c":
        return xp.ones(a.shape, dtype=dt.bool_, device=a.device)
    return xp.imag(a) == 0


def _isinf_sign(x: Any, out: Any, positive: bool, fname: str) -> Any:
    xp = _xp()
    a = _arr(x)
    if dkind(a.dtype) == "c":
        raise TypeError(f"{fname}: this operation is not supported for complex values "
                        f"because it would be ambiguous; got dtype {a.dtype}")
    if dkind(a.dtype) != "f":
        res = xp.zeros(a.shape, dtype=dt.bool_, device=a.device)
    else:
        res = xp.isinf(a) & ((a > 0) if positive else (a < 0))
    return _finish(res, out, fname)


def isposinf(x: Any, out: Any = None) -> Any:
    """Elementwise: positive infinity (NumPy's ``isposinf``).

    Parameters
    ----------
    x : array_like
        Real input.
    out : Array, optional
        Where to write the result.

    Returns
    -------
    Array
        bool.

    Raises
    ------
    TypeError
        For complex input.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.isposinf([-np.inf, 0.0, np.inf])))
    [False False  True]
    """
    return _isinf_sign(x, out, True, "isposinf")


def isneginf(x: Any, out: Any = None) -> Any:
    """Elementwise: negative infinity (NumPy's ``isneginf``).

    Parameters
    ----------
    x : array_like
        Real input.
    out : Array, optional
        Where to write the result.

    Returns
    -------
    Array
        bool.

    Raises
    ------
    TypeError
        For complex input.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.isneginf([-np.inf, 0.0, np.inf])))
    [ True False False]
    """
    return _isinf_sign(x, out, False, "isneginf")


def angle(z: Any, deg: bool = False) -> Any:
    """The counter-clockwise angle from the positive real axis (NumPy's ``angle``).

    Parameters
    ----------
    z : array_like
        Complex or real input.
    deg : bool, optional
        Degrees instead of radians.

    Returns
    -------
    Array
        Real floating point.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.angle([1.0, 1j, -1.0], deg=True)))
    [  0.  90. 180.]
    """
    xp = _xp()
    a = _arr(z)
    if dkind(a.dtype) == "c":
        re, im = xp.real(a), xp.imag(a)
        r = xp.atan2(im, re)
    else:
        # NumPy computes arctan2(0, z) with a weak Python 0: the result dtype is arctan2's
        # for z (float16 for 8-bit integers, float32 for 16-bit, float64 for bool and wider)
        r = xp.atan2(0, a)
    return r * (180.0 / math.pi) if deg else r
