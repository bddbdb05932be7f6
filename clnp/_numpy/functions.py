"""NumPy names beyond the Array API standard, composed from clnp functions (no kernels of
their own), with NumPy's signatures and semantics so that ``import clnp as np`` runs NumPy
code.

Every function takes array-likes (clnp arrays, NumPy arrays, nested sequences, scalars);
host data is uploaded to the device of the first clnp array argument (the default device
when there is none). Results are clnp arrays; where NumPy returns a NumPy scalar, clnp
returns a 0-d array (predicates such as :func:`allclose` and :func:`array_equal` return a
Python ``bool``). Views NumPy returns (``diagonal``, ``split``) are copies or views here as
noted. Data-dependent sizes (``bincount``, ``histogram`` ranges, ``argwhere``) read a few
values back from the device.
"""
from __future__ import annotations

import builtins
import math
import operator
import warnings
from typing import Any, Sequence

import numpy as np

from .._runtime import dtypes as dt
from .._core.checks import is_array, normalize_axes, normalize_axis
from .._runtime.dtypes import kind as dkind

__all__ = [
    "logspace", "geomspace", "pad", "percentile", "quantile", "median", "average",
    "nanmean", "nansum", "nanmax", "nanmin", "nanprod", "nanstd", "nanvar", "nanargmax",
    "nanargmin", "nanmedian", "nanpercentile", "nanquantile", "nancumsum", "nancumprod",
    "bincount", "histogram", "histogram_bin_edges", "argwhere", "flatnonzero", "diag",
    "diagonal", "trace",
    "allclose", "isclose", "array_equal", "around", "round_", "fix", "ravel", "swapaxes",
    "transpose", "atleast_1d", "atleast_2d", "atleast_3d", "vstack", "hstack", "dstack",
    "column_stack", "split", "array_split", "hsplit", "vsplit", "dsplit", "ptp", "ndim",
    "shape", "size", "copy", "identity", "tri", "ascontiguousarray", "asanyarray", "isscalar",
    "iscomplexobj", "isrealobj", "real_if_close", "nan_to_num", "interp", "convolve", "cov",
    "corrcoef", "einsum", "amax", "amin", "fmax", "fmin", "fmod", "exp2", "rint", "fabs",
    "degrees", "radians", "deg2rad", "rad2deg", "heaviside", "float_power", "logaddexp2",
    "divmod", "errstate", "seterr", "geterr",
]



def _xp() -> Any:
    import clnp
    return clnp


def _device_of(*objs: Any) -> Any:
    """The device of the first clnp array among ``objs`` (searching into sequences)."""
    for o in objs:
        if is_array(o):
            return o.device
        if isinstance(o, (list, tuple)):
            d = _device_of(*o)
            if d is not None:
                return d
    return None


def _arr(a: Any, device: Any = None, dtype: Any = None) -> Any:
    """``a`` as a clnp array (clnp arrays stay on their device, host data is uploaded)."""
    xp = _xp()
    if is_array(a):
        return a if dtype is None else xp.astype(a, dt.as_dtype(dtype))
    return xp.asarray(a, dtype=dtype, device=device)


def _default_float(device: Any) -> np.dtype:
    return (device or _xp().default_device()).default_float


def _inexact(a: Any) -> Any:
    """Integer and boolean arrays as the device's default float (NumPy's float64)."""
    if dkind(a.dtype) in "fc":
        return a
    return _xp().astype(a, a.device.default_float)


def _check_real(a: Any, fname: str) -> None:
    if dkind(a.dtype) not in "biuf":
        raise TypeError(f"{fname} requires real numeric input; got {a.dtype}")


def _finish(res: Any, out: Any, fname: str) -> Any:
    """Write ``res`` into ``out`` (a clnp array of the result's shape) when given."""
    if out is None:
        return res
    if not is_array(out):
        raise TypeError(f"{fname}: out must be a clnp array; got {type(out).__name__}")
    if tuple(out.shape) != tuple(res.shape):
        raise ValueError(f"{fname}: out has shape {out.shape} but the result has shape "
                         f"{res.shape}")
    out[...] = res
    return out


# --------------------------------------------------------------------- creation
def _linspace_any(start: Any, stop: Any, num: int, endpoint: bool, axis: int,
                  device: Any) -> Any:
    """NumPy's linspace for scalar or array bounds (in the default float type)."""
    xp = _xp()
    scalar = all(not is_array(v) and np.ndim(v) == 0 for v in (start, stop))
    if scalar:
        s = start.item() if isinstance(start, np.generic) else start
        e = stop.item() if isinstance(stop, np.generic) else stop
        if isinstance(s, bool) or isinstance(e, bool):
            s, e = int(s), int(e)
        return xp.linspace(s, e, num, endpoint=endpoint, device=device)
    device = device or _device_of(start, stop)
    s, e = _inexact(_arr(start, device)), _inexact(_arr(stop, device))
    s, e = xp.broadcast_arrays(s, e)
    div = (num - 1) if endpoint else num
    shape = (num,) + (1,) * s.ndim
    t = xp.reshape(xp.arange(num, dtype=s.dtype, device=s.device), shape)
    step = (e - s) / div if div > 0 else (e - s) * 0.0
    y = t * step + s
    if endpoint and num > 1:
        y[-1, ...] = e
    return xp.moveaxis(y, 0, axis) if axis != 0 else y


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0,
             dtype: Any = None, axis: int = 0, *, device: Any = None) -> Any:
    """``num`` samples evenly spaced on a log scale: ``base ** linspace(start, stop, num)``.

    Parameters
    ----------
    start : float or array_like
        ``base ** start`` is the first sample.
    stop : float or array_like
        ``base ** stop`` is the last sample (or the excluded end).
    num : int, default 50
        Number of samples.
    endpoint : bool, default True
        Include ``stop``.
    base : float, default 10.0
        The base of the log space.
    dtype : dtype, optional
        The result dtype.
    axis : int, default 0
        Where the samples run when ``start``/``stop`` are arrays.
    device : Device, optional
        Where the result lives (default: the default device).

    Returns
    -------
    array
        The samples.

    Raises
    ------
    ValueError
        ``num`` is negative.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.logspace(0, 3, 4))
    [   1.   10.  100. 1000.]
    """
    xp = _xp()
    y = _linspace_any(start, stop, num, endpoint, axis, device)
    if is_array(base) or np.ndim(base) > 0:
        b = _arr(base, y.device)
        b = xp.expand_dims(b, axis=axis) if b.ndim else b
        res = xp.pow(b, y)
    else:
        res = xp.pow(base.item() if isinstance(base, np.generic) else base, y)
    return res if dtype is None else xp.astype(res, dt.as_dtype(dtype))


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0, *, device: Any = None) -> Any:
    """``num`` samples evenly spaced on a log scale whose ends are exactly ``start`` and ``stop``.

    Parameters
    ----------
    start : float
        The first sample, non-zero.
    stop : float
        The last sample, non-zero, of ``start``'s sign.
    num : int, default 50
        Number of samples.
    endpoint : bool, default True
        Include ``stop``.
    dtype : dtype, optional
        The result dtype.
    axis : int, default 0
        The sample axis.
    device : Device, optional
        Where the result lives (default: the default device).

    Returns
    -------
    array
        The samples (a geometric progression).

    Raises
    ------
    ValueError
        A zero bound.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.geomspace(1, 1000, 4))
    [   1.   10.  100. 1000.]
    """
    xp = _xp()
    vals = []
    for v, name in ((start, "start"), (stop, "stop")):
        if is_array(v) or np.ndim(v) != 0:
            raise TypeError(f"geomspace: {name} must be a real scalar in clnp; got "
                            f"{type(v).__name__}")
        v = v.item() if isinstance(v, np.generic) else v
        if isinstance(v, complex):
            raise TypeError("geomspace: complex bounds are not supported by clnp")
        vals.append(float(v))
    s, e = vals
    if s == 0 or e == 0:
        raise ValueError("Geometric sequence cannot include zero")
    sign = math.copysign(1.0, s)
    s, e = s / sign, e / sign
    log_s = math.log10(s)
    log_e = math.log10(e) if e > 0 else math.nan
    res = logspace(log_s, log_e, num, endpoint=endpoint, base=10.0, device=device)
    if num > 0:
        res[0] = s
        if num > 1 and endpoint:
            res[-1] = e
    if sign < 0:
        res = -res
    if axis not in (0, -1):
        raise ValueError(f"geomspace: axis {axis} is out of bounds for the 1-D result")
    return res if dtype is None else xp.astype(res, dt.as_dtype(dtype))


def identity(n: int, dtype: Any = None, *, device: Any = None) -> Any:
    """The ``n x n`` identity matrix (``numpy.identity``).

    Parameters
    ----------
    n : int
        Size.
    dtype : dtype, optional
        The dtype (default: the default float).
    device : Device, optional
        Where the result lives (default: the default device).

    Returns
    -------
    array
        The identity.

    Raises
    ------
    ValueError
        A negative ``n``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.identity(2, dtype=clnp.int32))
    [[1 0]
     [0 1]]
    """
    return _xp().eye(operator.index(n), dtype=dtype, device=device)


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = float, *,
        device: Any = None) -> Any:
    """An ``N x M`` array with ones at and below the ``k``-th diagonal (``numpy.tri``).

    Parameters
    ----------
    N : int
        Rows.
    M : int, optional
        Columns (default: ``N``).
    k : int, default 0
        The diagonal.
    dtype : dtype, default float
        The dtype.
    device : Device, optional
        Where the result lives (default: the default device).

    Returns
    -------
    array
        Ones at and below the diagonal, zeros elsewhere.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.tri(2, 3, dtype=clnp.int32))
    [[1 0 0]
     [1 1 0]]
    """
    xp = _xp()
    N = operator.index(N)
    M = N if M is None else operator.index(M)
    k = operator.index(k)
    from .._array_api.creation import _device
    dev = _device(device)
    d = dev.default_float if dtype is float or dtype is None else dt.as_dtype(dtype)
    i = xp.reshape(xp.arange(N, device=dev), (N, 1))
    j = xp.reshape(xp.arange(M, device=dev), (1, M))
    return xp.astype(xp.greater_equal(i + k, j), d)


def copy(a: Any, order: str = "K", subok: bool = False) -> Any:
    """A new array with a copy of the data of ``a`` (``numpy.copy``).

    Parameters
    ----------
    a : array_like
        Input array.
    order : str, default 'K'
        Accepted for NumPy compatibility (copies are C-ordered).
    subok : bool, default False
        Accepted for NumPy compatibility.

    Returns
    -------
    array
        The copy.

    Examples
    --------
    >>> import clnp
    >>> a = clnp.asarray([1, 2])
    >>> b = clnp.copy(a)
    >>> b[0] = 9
    >>> a.tolist()
    [1, 2]
    """
    if is_array(a):
        return _xp().asarray(a, copy=True)
    return _arr(a)


def asanyarray(a: Any, dtype: Any = None, order: Any = None, *, device: Any = None,
               copy: bool | None = None, like: Any = None) -> Any:
    """``a`` as a clnp array (``numpy.asanyarray``; clnp has no array subclasses).

    Parameters
    ----------
    a : array_like
        Input array.
    dtype : dtype, optional
        The dtype.
    order : str, optional
        Accepted for NumPy compatibility.
    device : Device, optional
        Where the result lives (default: the default device).
    copy : bool, optional
        As for :func:`asarray`.
    like : object, optional
        Accepted for NumPy compatibility.

    Returns
    -------
    array
        As :func:`asarray` returns it.

    Raises
    ------
    ValueError
        Ragged sequences.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.asanyarray([1, 2]))
    [1 2]
    """
    return _xp().asarray(a, dtype=dtype, device=device, copy=copy)


def ascontiguousarray(a: Any, dtype: Any = None, *, like: Any = None) -> Any:
    """``a`` as a C-contiguous clnp array of at least one dimension (``numpy.ascontiguousarray``).

    Parameters
    ----------
    a : array_like
        Input array.
    dtype : dtype, optional
        The dtype.
    like : object, optional
        Accepted for NumPy compatibility.

    Returns
    -------
    array
        ``a`` itself when it is already contiguous and of the dtype, else a copy.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.ones((2, 3)).T
    >>> clnp.ascontiguousarray(x).is_contiguous
    True
    """
    xp = _xp()
    x = _arr(a, dtype=dtype)
    if x.ndim == 0:
        return xp.reshape(x, (1,))
    if getattr(x, "is_contiguous", True):
        return x
    return xp.reshape(x, x.shape, copy=True)


# --------------------------------------------------------------------- shape queries
def ndim(a: Any) -> int:
    """Number of dimensions of ``a`` (``numpy.ndim``).

    Parameters
    ----------
    a : array_like
        Input array.

    Returns
    -------
    int
        ``a.ndim``.

    Examples
    --------
    >>> import clnp
    >>> clnp.ndim(clnp.ones((2, 3))), clnp.ndim([1, 2])
    (2, 1)
    """
    return a.ndim if is_array(a) else np.ndim(a)


def shape(a: Any) -> tuple[int, ...]:
    """Shape of ``a`` (``numpy.shape``).

    Parameters
    ----------
    a : array_like
        Input array.

    Returns
    -------
    tuple of int
        ``a.shape``.

    Examples
    --------
    >>> import clnp
    >>> clnp.shape(clnp.ones((2, 3)))
    (2, 3)
    """
    return tuple(a.shape) if is_array(a) else np.shape(a)


def size(a: Any, axis: int | None = None) -> int:
    """Number of elements of ``a``, or along ``axis`` (``numpy.size``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int, optional
        An axis.

    Returns
    -------
    int
        The count.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> clnp.size(clnp.ones((2, 3))), clnp.size(clnp.ones((2, 3)), axis=1)
    (6, 3)
    """
    if not is_array(a):
        return np.size(a, axis)
    if axis is None:
        return math.prod(a.shape)
    return a.shape[normalize_axis(axis, a.ndim, "size")]


def isscalar(element: Any) -> bool:
    """Whether ``element`` is a scalar type (``numpy.isscalar``).

    Parameters
    ----------
    element : object
        Anything.

    Returns
    -------
    bool
        True for Python and NumPy scalars; arrays, including 0-d clnp arrays, are not
        scalars.

    Examples
    --------
    >>> import clnp
    >>> clnp.isscalar(3.0), clnp.isscalar(clnp.asarray(3.0))
    (True, False)
    """
    return np.isscalar(element)


def iscomplexobj(x: Any) -> bool:
    """Whether ``x`` has a complex dtype, whatever its values (``numpy.iscomplexobj``).

    Parameters
    ----------
    x : array_like
        Input.

    Returns
    -------
    bool


    Examples
    --------
    >>> import clnp
    >>> clnp.iscomplexobj(clnp.asarray([1 + 0j])), clnp.iscomplexobj(clnp.asarray([1.0]))
    (True, False)
    """
    if is_array(x):
        return dkind(x.dtype) == "c"
    return np.iscomplexobj(x)


def isrealobj(x: Any) -> bool:
    """Whether ``x`` does not have a complex dtype (``numpy.isrealobj``).

    Parameters
    ----------
    x : array_like
        Input.

    Returns
    -------
    bool


    Examples
    --------
    >>> import clnp
    >>> clnp.isrealobj(clnp.asarray([1.0]))
    True
    """
    return not iscomplexobj(x)


# --------------------------------------------------------------------- manipulation
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


# --------------------------------------------------------------------- reductions
def amax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
    """Maximum along ``axis`` (``numpy.amax``; NaN propagates).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    out : array, optional
        A clnp array that receives the result.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    **kw
        NumPy's ``initial``/``where`` keywords where supported.

    Returns
    -------
    array
        The maxima.

    Raises
    ------
    ValueError
        A zero-size reduction without ``initial``.
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.amax(clnp.asarray([[1, 5], [7, 2]]), axis=0))
    [7 5]
    """
    _no_extra(kw, "amax")
    return _finish(_xp().max(_arr(a), axis=_ax(axis), keepdims=keepdims), out, "amax")


def amin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
    """Minimum along ``axis`` (``numpy.amin``; NaN propagates).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    out : array, optional
        A clnp array that receives the result.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    **kw
        NumPy's ``initial``/``where`` keywords where supported.

    Returns
    -------
    array
        The minima.

    Raises
    ------
    ValueError
        A zero-size reduction without ``initial``.
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.amin(clnp.asarray([[1, 5], [7, 2]]), axis=1))
    [1 2]
    """
    _no_extra(kw, "amin")
    return _finish(_xp().min(_arr(a), axis=_ax(axis), keepdims=keepdims), out, "amin")


def _no_extra(kw: dict, fname: str) -> None:
    for k, v in kw.items():
        if k in ("initial", "where") and v is not np._NoValue and not (k == "where" and
                                                                      v is True):
            raise TypeError(f"{fname}: {k}= is not supported by clnp")
        if k not in ("initial", "where"):
            raise TypeError(f"{fname}() got an unexpected keyword argument '{k}'")


def _ax(axis: Any) -> Any:
    return tuple(axis) if isinstance(axis, list) else axis


def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """Range of values, ``max - min``, along ``axis`` (``numpy.ptp``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    out : array, optional
        A clnp array that receives the result.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.

    Returns
    -------
    array
        The ranges.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.ptp(clnp.asarray([[1, 5], [2, 9]]), axis=1))
    [4 7]
    """
    xp = _xp()
    x = _arr(a)
    axis = _ax(axis)
    if x.dtype == dt.bool_:           # NumPy: boolean subtract is not supported
        raise TypeError("ptp: max - min is not supported for dtype bool (cast to an integer "
                        "dtype first)")
    res = xp.subtract(xp.max(x, axis=axis, keepdims=keepdims),
                      xp.min(x, axis=axis, keepdims=keepdims))
    return _finish(res, out, "ptp")


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *,
            keepdims: bool = False) -> Any:
    """Weighted average along ``axis``: ``sum(a * w) / sum(w)`` (``numpy.average``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    weights : array_like, optional
        Weights of ``a``'s shape, or 1-D along a single ``axis`` (default: all ones).
    returned : bool, default False
        Also return the sum of the weights.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.

    Returns
    -------
    array or tuple
        The average, or ``(average, sum of weights)`` with ``returned``.

    Raises
    ------
    ZeroDivisionError
        The weights sum to zero (one value read back from the device), or, without
        weights, the result is empty (as in NumPy).
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.average(clnp.asarray([1.0, 2.0, 4.0]), weights=clnp.asarray([2.0, 1.0, 1.0])))
    2.0
    """
    xp = _xp()
    x = _arr(a)
    axis = _ax(axis)
    if weights is None:
        avg = xp.mean(x, axis=axis, keepdims=keepdims)
        if avg.size == 0:
            # NumPy divides x.size by the result's size for the weight sum, and fails alike
            raise ZeroDivisionError("average: the result is empty (division by zero)")
        n = math.prod(x.shape) // max(math.prod(avg.shape), 1) if x.ndim else 1
        scl = xp.full(avg.shape, n, dtype=avg.dtype, device=x.device)
        return (avg, scl) if returned else avg
    w = _arr(weights, x.device)
    if dkind(x.dtype) in "biu":
        rd = dt.promote(dt.promote(x.dtype, w.dtype), x.device.default_float) \
            if dkind(w.dtype) not in "c" else dt.promote(w.dtype, x.device.default_complex)
    else:
        rd = dt.promote(x.dtype, w.dtype)
    axes = None if axis is None else normalize_axes(axis, x.ndim, "average")
    if tuple(x.shape) != tuple(w.shape):
        if axes is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        if tuple(w.shape) != tuple(x.shape[ax] for ax in axes):
            raise ValueError("Shape of weights must be consistent with shape of a along "
                             "specified axis.")
        w = xp.permute_dims(w, tuple(int(i) for i in np.argsort(axes)))
        w = xp.reshape(w, tuple(s if ax in axes else 1 for ax, s in enumerate(x.shape)))
        w = xp.broadcast_to(w, x.shape)
    w = xp.astype(w, rd)
    scl = xp.sum(w, axis=axis, keepdims=keepdims)
    if bool(xp.any(xp.equal(scl, 0))):
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    avg = xp.sum(xp.multiply(xp.astype(x, rd), w), axis=axis, keepdims=keepdims) / scl
    if returned:
        if tuple(scl.shape) != tuple(avg.shape):
            scl = xp.asarray(xp.broadcast_to(scl, avg.shape), copy=True)
        return avg, scl
    return avg


def _sorted_slices(x: Any, axis: Any, fname: str, what: str) -> tuple[Any, tuple[int, ...],
                                                                        tuple]:
    """The values of each reduction slice of ``x`` over ``axis``, sorted along the last dim
    (with :func:`_reduce_axes`' kept and keepdims shapes); ValueError for empty slices."""
    xp = _xp()
    if x.ndim == 0:
        x = xp.reshape(x, (1,))
        axis = None if axis is None else 0
    flat, kshape, keep = _reduce_axes(x, axis, fname)
    if flat.shape[-1] == 0:
        raise ValueError(f"{fname}: cannot compute {what} of an empty array")
    return xp.sort(flat, axis=-1), kshape, keep


def _reduce_axes(x: Any, axis: Any, fname: str) -> tuple[Any, tuple[int, ...], tuple]:
    """``x`` with the reduced axes moved last and merged: (array of shape kept + (N,),
    kept shape, keepdims shape)."""
    xp = _xp()
    axes = normalize_axes(_ax(axis), x.ndim, fname)
    kept = [d for d in range(x.ndim) if d not in axes]
    moved = xp.permute_dims(x, tuple(kept) + tuple(sorted(axes)))
    kshape = tuple(x.shape[d] for d in kept)
    n = math.prod(x.shape[d] for d in axes)
    keep = tuple(1 if d in axes else x.shape[d] for d in range(x.ndim))
    return xp.reshape(moved, kshape + (n,)), kshape, keep


_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _quantile(a: Any, q: Any, axis: Any, method: str, keepdims: bool, fname: str,
              percent: bool, nan: bool, out: Any = None, interpolation: Any = None,
              weights: Any = None) -> Any:
    if weights is not None:
        raise TypeError(f"{fname}: weights= is not supported by clnp")
    xp = _xp()
    x = _arr(a)
    if dkind(x.dtype) in "cb":          # NumPy refuses both
        raise TypeError(f"{fname}: a must be an array of real numbers; got dtype {x.dtype}")
    _check_real(x, fname)
    if interpolation is not None:
        method = interpolation
    if method not in _METHODS:
        raise ValueError(f"{fname}: method {method!r} is not supported by clnp; use one of "
                         f"{_METHODS}")
    weak_q = type(q) in (int, float)
    qh = q.to_numpy() if is_array(q) else np.asarray(q)
    if dkind(qh.dtype) not in "biuf":
        raise TypeError(f"{fname}: q must be real numbers; got {qh.dtype}")
    if percent:
        qh = np.true_divide(qh, 100)
    if qh.ndim and qh.size:
        valid = bool(np.all((qh >= 0) & (qh <= 1)))
    else:
        valid = bool(np.all(0 <= qh) and np.all(qh <= 1)) if qh.size else True
    if not valid:
        raise ValueError("Percentiles must be in the range [0, 100]" if percent else
                         "Quantiles must be in the range [0, 1]")
    if nan and x.size == 0:
        # empty slices give NaN, and no slices NumPy's own shape and dtype (its nan-quantiles
        # of no slices drop q's dims): NumPy's answer on an empty host array (no values to
        # move; its "All-NaN slice" warning left out, as clnp's nanmedian does)
        ref_fn = np.nanpercentile if percent else np.nanquantile
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            ref = ref_fn(np.empty(x.shape, x.dtype), q.to_numpy() if is_array(q) else q,
                         axis=_ax(axis), method=method, keepdims=keepdims)
        ref = np.asarray(ref)
        if ref.dtype == dt.float64 and not x.device.has_fp64:
            ref = ref.astype(x.device.default_float)
        return _finish(xp.asarray(ref, device=x.device), out, fname)
    srt, kshape, keep = _sorted_slices(x, axis, fname, "a quantile")   # NaNs sort last
    n = srt.shape[-1]
    dev = x.device
    floating = dkind(x.dtype) == "f"
    nq = qh.size
    bshape = kshape + (nq,)
    # The index arithmetic runs on the host when every slice has n values (no kernels to
    # build), on the device when NaN-skipping gives each slice its own count.
    if nan and floating:
        m: Any = xp
        count = xp.sum(xp.logical_not(xp.isnan(srt)), axis=-1, keepdims=True)
        last: Any = xp.subtract(count, 1)
        top: Any = xp.clip(last, 0, None)
    else:
        m, last, top = np, n - 1, n - 1
    # NumPy's virtual index (n - 1) * q; integer q with the linear method indexes exactly
    int_q = dkind(qh.dtype) in "iub" and not percent
    qd = dt.int64 if int_q else (dt.float64 if dev.has_fp64 else dt.float32)
    qv = np.ravel(qh).astype(qd)
    vi = m.multiply(qv if m is np else xp.asarray(qv, device=dev), last)

    def dev_array(v: Any, dtype: Any) -> Any:
        v = m.astype(v, dtype)
        return xp.asarray(v, device=dev) if m is np else v

    def rows(v: Any) -> Any:
        v = dev_array(m.minimum(m.clip(m.astype(v, dt.int64), 0, None), top), dt.int64)
        return xp.broadcast_to(v if v.ndim == len(bshape) else
                               xp.reshape(v, (1,) * len(kshape) + (nq,)), bshape)

    if method in ("lower", "higher", "nearest") or (method == "linear" and int_q):
        pick = {"lower": m.floor, "higher": m.ceil, "nearest": m.round}.get(method)
        res = xp.take_along_axis(srt, rows(vi if pick is None else pick(vi)), axis=-1)
    else:
        if method == "midpoint":
            vi = m.multiply(m.add(m.floor(vi), m.ceil(vi)), 0.5)
            gamma = m.where(m.equal(m.remainder(vi, 1), 0), 0.0, 0.5)
        prev = m.floor(vi)
        if method == "linear":
            gamma = m.subtract(vi, prev)
        a_lo = xp.take_along_axis(srt, rows(prev), axis=-1)
        a_hi = xp.take_along_axis(srt, rows(m.add(prev, 1)), axis=-1)
        # a Python-scalar q keeps a float input's dtype (NumPy's weak promotion)
        rd = (x.dtype if weak_q else dt.promote(x.dtype, qd)) if floating else \
            dev.default_float
        a_lo, a_hi = xp.astype(a_lo, rd), xp.astype(a_hi, rd)
        upper = dev_array(m.greater_equal(gamma, 0.5), dt.bool_)
        g, g1 = dev_array(gamma, rd), dev_array(m.subtract(1, gamma), rd)
        # NumPy's _lerp: from the nearer end, so that gamma = 1 gives exactly a_hi
        diff = xp.subtract(a_hi, a_lo)
        res = xp.where(upper, xp.subtract(a_hi, xp.multiply(diff, g1)),
                       xp.add(a_lo, xp.multiply(diff, g)))
    if floating:
        bad = xp.equal(count, 0) if nan else xp.isnan(srt[..., -1:])
        res = xp.where(bad, xp.asarray(math.nan, dtype=res.dtype, device=dev), res)
    # NumPy puts the dimensions of q first
    res = xp.moveaxis(res, -1, 0)
    tail = keep if keepdims and x.ndim else kshape    # a 0-d input keeps no dims
    res = xp.reshape(res, tuple(qh.shape) + tuple(tail))
    return _finish(res, out, fname)


def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, weights: Any = None,
             interpolation: Any = None) -> Any:
    """The ``q``-th quantiles of ``a`` along ``axis`` (``numpy.quantile``).

    Parameters
    ----------
    a : array_like
        Input array.
    q : float or array_like
        The quantiles, in [0, 1].
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    out : array, optional
        A clnp array that receives the result.
    overwrite_input : bool, default False
        Accepted for NumPy compatibility (the input is never modified).
    method : str, default 'linear'
        ``linear``, ``lower``, ``higher``, ``nearest`` or ``midpoint``.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    weights : array_like, optional
        Weights per element (``method='inverted_cdf'`` only, as in NumPy).
    interpolation : str, optional
        NumPy's deprecated name for ``method``.

    Returns
    -------
    array
        The quantiles; the dimensions of ``q`` come first. NaN in a slice gives NaN.

    Raises
    ------
    ValueError
        ``q`` outside [0, 1], or an unknown method.
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([1.0, 2.0, 3.0, 4.0])
    >>> float(clnp.quantile(x, 0.5))
    2.5
    >>> print(clnp.quantile(x, clnp.asarray([0.0, 1.0])))
    [1. 4.]
    """
    return _quantile(a, q, axis, method, keepdims, "quantile", False, False, out,
                     interpolation, weights)


def percentile(a: Any, q: Any, axis: Any = None, out: Any = None,
               overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
               *, weights: Any = None, interpolation: Any = None) -> Any:
    """The ``q``-th percentiles of ``a`` along ``axis`` (``numpy.percentile``).

    Parameters
    ----------
    a : array_like
        Input array.
    q : float or array_like
        The percentiles, in [0, 100].
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    out : array, optional
        A clnp array that receives the result.
    overwrite_input : bool, default False
        Accepted for NumPy compatibility (the input is never modified).
    method : str, default 'linear'
        ``linear``, ``lower``, ``higher``, ``nearest`` or ``midpoint``.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    weights : array_like, optional
        Weights per element (``method='inverted_cdf'`` only, as in NumPy).
    interpolation : str, optional
        NumPy's deprecated name for ``method``.

    Returns
    -------
    array
        The percentiles; the dimensions of ``q`` come first.

    Raises
    ------
    ValueError
        ``q`` outside [0, 100], or an unknown method.
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.percentile(clnp.asarray([1.0, 2.0, 3.0, 4.0, 5.0]), 25))
    2.0
    """
    return _quantile(a, q, axis, method, keepdims, "percentile", True, False, out,
                     interpolation, weights)


def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None,
                overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
                *, weights: Any = None, interpolation: Any = None) -> Any:
    """:func:`quantile` ignoring NaNs (``numpy.nanquantile``).

    Parameters
    ----------
    a : array_like
        Input array.
    q : float or array_like
        The quantiles, in [0, 1].
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    out : array, optional
        A clnp array that receives the result.
    overwrite_input : bool, default False
        Accepted for NumPy compatibility (the input is never modified).
    method : str, default 'linear'
        ``linear``, ``lower``, ``higher``, ``nearest`` or ``midpoint``.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    weights : array_like, optional
        Weights per element (``method='inverted_cdf'`` only, as in NumPy).
    interpolation : str, optional
        NumPy's deprecated name for ``method``.

    Returns
    -------
    array
        The quantiles; all-NaN slices give NaN.

    Raises
    ------
    ValueError
        ``q`` outside [0, 1], or an unknown method.
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.nanquantile(clnp.asarray([1.0, float("nan"), 3.0]), 0.5))
    2.0
    """
    return _quantile(a, q, axis, method, keepdims, "nanquantile", False, True, out,
                     interpolation, weights)


def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False, *, weights: Any = None,
                  interpolation: Any = None) -> Any:
    """:func:`percentile` ignoring NaNs (``numpy.nanpercentile``).

    Parameters
    ----------
    a : array_like
        Input array.
    q : float or array_like
        The percentiles, in [0, 100].
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    out : array, optional
        A clnp array that receives the result.
    overwrite_input : bool, default False
        Accepted for NumPy compatibility (the input is never modified).
    method : str, default 'linear'
        ``linear``, ``lower``, ``higher``, ``nearest`` or ``midpoint``.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    weights : array_like, optional
        Weights per element (``method='inverted_cdf'`` only, as in NumPy).
    interpolation : str, optional
        NumPy's deprecated name for ``method``.

    Returns
    -------
    array
        The percentiles; all-NaN slices give NaN.

    Raises
    ------
    ValueError
        ``q`` outside [0, 100], or an unknown method.
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.nanpercentile(clnp.asarray([1.0, float("nan"), 3.0]), 100))
    3.0
    """
    return _quantile(a, q, axis, method, keepdims, "nanpercentile", True, True, out,
                     interpolation, weights)


def _median(a: Any, axis: Any, keepdims: bool, fname: str, nan: bool) -> Any:
    xp = _xp()
    x = _arr(a)
    _check_real(x, fname)
    floating = dkind(x.dtype) == "f"
    rd = x.dtype if floating else x.device.default_float
    if x.ndim == 0:
        keepdims = False        # NumPy: a 0-d input has a 0-d median, keepdims or not
    flat, kshape, keep = _reduce_axes(x if x.ndim else xp.reshape(x, (1,)),
                                      axis if x.ndim or axis is None else 0, fname)
    if flat.shape[-1] == 0:     # NumPy: the mean of nothing, NaN (with a RuntimeWarning)
        return xp.full(keep if keepdims else kshape, math.nan, dtype=rd, device=x.device)
    srt, kshape, keep = _sorted_slices(x, axis, fname, "the median")
    n = srt.shape[-1]
    if nan and floating:
        cnt = xp.sum(xp.logical_not(xp.isnan(srt)), axis=-1, keepdims=True)
        lo = xp.clip(xp.floor_divide(xp.subtract(cnt, 1), 2), 0, None)
        hi = xp.floor_divide(cnt, 2)
        hi = xp.minimum(hi, xp.clip(xp.subtract(cnt, 1), 0, None))
        a_lo = xp.astype(xp.take_along_axis(srt, lo, axis=-1), rd)
        a_hi = xp.astype(xp.take_along_axis(srt, hi, axis=-1), rd)
        res = xp.where(xp.equal(lo, hi), a_lo, xp.divide(xp.add(a_lo, a_hi), 2))
        res = xp.where(xp.equal(cnt, 0), math.nan, res)
    else:
        if n % 2:
            res = xp.astype(srt[..., n // 2:n // 2 + 1], rd)
        else:
            pair = xp.astype(srt[..., n // 2 - 1:n // 2 + 1], rd)
            res = xp.divide(xp.add(pair[..., :1], pair[..., 1:]), 2)
        if floating:
            res = xp.where(xp.isnan(srt[..., -1:]), math.nan, res)
    return xp.reshape(res, keep if keepdims else kshape)


def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Any:
    """Median along ``axis`` (``numpy.median``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    out : array, optional
        A clnp array that receives the result.
    overwrite_input : bool, default False
        Accepted for NumPy compatibility (the input is never modified).
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.

    Returns
    -------
    array
        The middle element of each sorted slice, or the mean of the two middle ones; NaN
        in a slice gives NaN.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.median(clnp.asarray([[1.0, 9.0, 2.0], [4.0, 3.0, 5.0]]), axis=1))
    [2. 4.]
    """
    return _finish(_median(a, axis, keepdims, "median", False), out, "median")


def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Any:
    """Median along ``axis`` ignoring NaNs (``numpy.nanmedian``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    out : array, optional
        A clnp array that receives the result.
    overwrite_input : bool, default False
        Accepted for NumPy compatibility (the input is never modified).
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.

    Returns
    -------
    array
        The medians; all-NaN slices give NaN.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.nanmedian(clnp.asarray([1.0, float("nan"), 3.0, 8.0])))
    3.0
    """
    return _finish(_median(a, axis, keepdims, "nanmedian", True), out, "nanmedian")


def _check_axes(x: Any, axis: Any, fname: str = "") -> None:
    """An out-of-range axis raises AxisError before the NaN mask below builds a kernel (the
    public function's wrapper names it in the message)."""
    if axis is not None:
        normalize_axes(_ax(axis), x.ndim, fname or "axis")


def _nan_filled(x: Any, value: float) -> Any:
    xp = _xp()
    if dkind(x.dtype) not in "fc":
        return x
    return xp.where(xp.isnan(x), value, x)


def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
           keepdims: bool = False, **kw: Any) -> Any:
    """Sum treating NaNs as zero (``numpy.nansum``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    dtype : dtype, optional
        The accumulator and result dtype.
    out : array, optional
        A clnp array that receives the result.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    **kw
        NumPy's ``initial``/``where`` keywords where supported.

    Returns
    -------
    array
        The reduced array.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.nansum(clnp.asarray([1.0, float("nan"), 3.0])))
    4.0
    """
    _no_extra(kw, "nansum")
    x = _arr(a)
    _check_axes(x, axis)
    res = _xp().sum(_nan_filled(x, 0), axis=_ax(axis), dtype=dtype, keepdims=keepdims)
    return _finish(res, out, "nansum")


def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, **kw: Any) -> Any:
    """Product treating NaNs as one (``numpy.nanprod``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    dtype : dtype, optional
        The accumulator and result dtype.
    out : array, optional
        A clnp array that receives the result.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    **kw
        NumPy's ``initial``/``where`` keywords where supported.

    Returns
    -------
    array
        The reduced array.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.nanprod(clnp.asarray([2.0, float("nan"), 3.0])))
    6.0
    """
    _no_extra(kw, "nanprod")
    x = _arr(a)
    _check_axes(x, axis)
    res = _xp().prod(_nan_filled(x, 1), axis=_ax(axis), dtype=dtype, keepdims=keepdims)
    return _finish(res, out, "nanprod")


def nancumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative sum treating NaNs as zero (``numpy.nancumsum``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int, optional
        The axis (the flattened array when None).
    dtype : dtype, optional
        The accumulator and result dtype.
    out : array, optional
        A clnp array that receives the result.

    Returns
    -------
    array
        The running sums.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.nancumsum(clnp.asarray([1.0, float("nan"), 3.0])))
    [1. 1. 4.]
    """
    x = _arr(a)
    _check_axes(x, axis)
    return _finish(_xp().cumsum(_nan_filled(x, 0), axis=axis, dtype=dtype), out,
                   "nancumsum")


def nancumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative product treating NaNs as one (``numpy.nancumprod``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int, optional
        The axis (the flattened array when None).
    dtype : dtype, optional
        The accumulator and result dtype.
    out : array, optional
        A clnp array that receives the result.

    Returns
    -------
    array
        The running products.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.nancumprod(clnp.asarray([2.0, float("nan"), 3.0])))
    [2. 2. 6.]
    """
    x = _arr(a)
    _check_axes(x, axis)
    return _finish(_xp().cumprod(_nan_filled(x, 1), axis=axis, dtype=dtype), out,
                   "nancumprod")


def _nanextreme(a: Any, axis: Any, keepdims: bool, op: str) -> Any:
    xp = _xp()
    x = _arr(a)
    _check_axes(x, axis)
    axis = _ax(axis)
    if dkind(x.dtype) != "f":
        return getattr(xp, op)(x, axis=axis, keepdims=keepdims)
    mask = xp.isnan(x)
    fill = -math.inf if op == "max" else math.inf
    res = getattr(xp, op)(xp.where(mask, fill, x), axis=axis, keepdims=keepdims)
    return xp.where(xp.all(mask, axis=axis, keepdims=keepdims), math.nan, res)


def nanmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
           **kw: Any) -> Any:
    """Maximum ignoring NaNs (``numpy.nanmax``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    out : array, optional
        A clnp array that receives the result.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    **kw
        NumPy's ``initial``/``where`` keywords where supported.

    Returns
    -------
    array
        The maxima; all-NaN slices give NaN.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.nanmax(clnp.asarray([1.0, float("nan"), 3.0])))
    3.0
    """
    _no_extra(kw, "nanmax")
    return _finish(_nanextreme(a, axis, keepdims, "max"), out, "nanmax")


def nanmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
           **kw: Any) -> Any:
    """Minimum ignoring NaNs (``numpy.nanmin``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    out : array, optional
        A clnp array that receives the result.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    **kw
        NumPy's ``initial``/``where`` keywords where supported.

    Returns
    -------
    array
        The minima; all-NaN slices give NaN.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.nanmin(clnp.asarray([4.0, float("nan"), 3.0])))
    3.0
    """
    _no_extra(kw, "nanmin")
    return _finish(_nanextreme(a, axis, keepdims, "min"), out, "nanmin")


def _nanarg(a: Any, axis: Any, keepdims: bool, op: str) -> Any:
    xp = _xp()
    x = _arr(a)
    _check_axes(x, axis)
    if dkind(x.dtype) != "f":
        return getattr(xp, op)(x, axis=axis, keepdims=keepdims)
    mask = xp.isnan(x)
    if bool(xp.any(xp.all(mask, axis=axis))):
        raise ValueError("All-NaN slice encountered")
    fill = -math.inf if op == "argmax" else math.inf
    return getattr(xp, op)(xp.where(mask, fill, x), axis=axis, keepdims=keepdims)


def nanargmax(a: Any, axis: int | None = None, out: Any = None, *,
              keepdims: bool = False) -> Any:
    """Index of the maximum ignoring NaNs (``numpy.nanargmax``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int, optional
        The axis (the flattened array when None).
    out : array, optional
        A clnp array that receives the result.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.

    Returns
    -------
    array
        Indices of the default index dtype.

    Raises
    ------
    ValueError
        An all-NaN slice (one value read back from the device).
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> int(clnp.nanargmax(clnp.asarray([1.0, float("nan"), 3.0])))
    2
    """
    return _finish(_nanarg(a, axis, keepdims, "argmax"), out, "nanargmax")


def nanargmin(a: Any, axis: int | None = None, out: Any = None, *,
              keepdims: bool = False) -> Any:
    """Index of the minimum ignoring NaNs (``numpy.nanargmin``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int, optional
        The axis (the flattened array when None).
    out : array, optional
        A clnp array that receives the result.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.

    Returns
    -------
    array
        Indices of the default index dtype.

    Raises
    ------
    ValueError
        An all-NaN slice (one value read back from the device).
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> int(clnp.nanargmin(clnp.asarray([float("nan"), 5.0, 3.0])))
    2
    """
    return _finish(_nanarg(a, axis, keepdims, "argmin"), out, "nanargmin")


def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, **kw: Any) -> Any:
    """Mean ignoring NaNs (``numpy.nanmean``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    dtype : dtype, optional
        The accumulator and result dtype.
    out : array, optional
        A clnp array that receives the result.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    **kw
        NumPy's ``initial``/``where`` keywords where supported.

    Returns
    -------
    array
        The means; all-NaN slices give NaN.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.nanmean(clnp.asarray([1.0, float("nan"), 3.0])))
    2.0
    """
    _no_extra(kw, "nanmean")
    xp = _xp()
    x = _arr(a)
    _check_axes(x, axis)
    axis = _ax(axis)
    if dkind(x.dtype) not in "fc":
        res = xp.mean(x, axis=axis, keepdims=keepdims)
        return _finish(res if dtype is None else xp.astype(res, dt.as_dtype(dtype)), out,
                       "nanmean")
    mask = xp.isnan(x)
    tot = xp.sum(xp.where(mask, 0, x), axis=axis, dtype=dtype, keepdims=keepdims)
    cnt = xp.sum(xp.logical_not(mask), axis=axis, keepdims=keepdims)
    res = xp.divide(tot, xp.astype(cnt, tot.dtype))
    return _finish(res, out, "nanmean")


def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0,
           keepdims: bool = False, *, correction: Any = None, **kw: Any) -> Any:
    """Variance ignoring NaNs (``numpy.nanvar``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    dtype : dtype, optional
        The accumulator and result dtype.
    out : array, optional
        A clnp array that receives the result.
    ddof : float, default 0
        Degrees of freedom removed from the count.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    correction : float, optional
        The Array API's name for ``ddof``.
    **kw
        NumPy's ``initial``/``where`` keywords where supported.

    Returns
    -------
    array
        The variances; slices with no more than ``ddof`` values give NaN.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.nanvar(clnp.asarray([1.0, float("nan"), 3.0])))
    1.0
    """
    _no_extra(kw, "nanvar")
    xp = _xp()
    x = _arr(a)
    _check_axes(x, axis)
    axis = _ax(axis)
    if correction is not None:
        ddof = correction
    if dkind(x.dtype) not in "fc":
        res = xp.var(x, axis=axis, correction=ddof, keepdims=keepdims)
        return _finish(res, out, "nanvar")
    mask = xp.isnan(x)
    xz = xp.where(mask, 0, x)
    if dtype is not None:
        xz = xp.astype(xz, dt.as_dtype(dtype))
    cnt = xp.sum(xp.logical_not(mask), axis=axis, keepdims=True)
    avg = xp.divide(xp.sum(xz, axis=axis, keepdims=True), xp.astype(cnt, xz.dtype))
    dev = xp.where(mask, 0, xp.subtract(xz, avg))
    sq = xp.real(xp.multiply(dev, xp.conj(dev))) if dkind(x.dtype) == "c" else \
        xp.multiply(dev, dev)
    var = xp.sum(sq, axis=axis, keepdims=keepdims)
    dof = xp.subtract(xp.sum(xp.logical_not(mask), axis=axis, keepdims=keepdims), ddof)
    res = xp.divide(var, xp.astype(dof, var.dtype))
    res = xp.where(xp.less_equal(dof, 0), math.nan, res)
    return _finish(res, out, "nanvar")


def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0,
           keepdims: bool = False, *, correction: Any = None, **kw: Any) -> Any:
    """Standard deviation ignoring NaNs: ``sqrt(nanvar(...))`` (``numpy.nanstd``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    dtype : dtype, optional
        The accumulator and result dtype.
    out : array, optional
        A clnp array that receives the result.
    ddof : float, default 0
        Degrees of freedom removed from the count.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    correction : float, optional
        The Array API's name for ``ddof``.
    **kw
        NumPy's ``initial``/``where`` keywords where supported.

    Returns
    -------
    array
        The standard deviations.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.nanstd(clnp.asarray([1.0, float("nan"), 3.0])))
    1.0
    """
    res = _xp().sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims,
                            correction=correction, **kw))
    return _finish(res, out, "nanstd")


# --------------------------------------------------------------------- counting
def bincount(x: Any, /, weights: Any = None, minlength: int = 0) -> Any:
    """Number of occurrences of each value in the non-negative integer array ``x``, or the
    sum of ``weights`` per value (``numpy.bincount``). The result has ``max(x) + 1`` bins, at
    least ``minlength``.

    Computed without scatter-add: a stable sort of ``x`` and ``searchsorted`` of every bin
    value give the bin boundaries; weighted sums are differences of the prefix sums of the
    weights in sorted order (so the rounding error of a bin is relative to the running
    total, as in ``numpy.histogram`` with explicit edges). Memory is O(len(x) + bins). Reads
    ``min(x)`` and ``max(x)`` back from the device.

    Parameters
    ----------
    x : array_like
        One-dimensional array of non-negative integers (boolean and integer dtypes other
        than uint64).
    weights : array_like, optional
        Real weights of ``x``'s shape.
    minlength : int, default 0
        The minimum number of bins.

    Returns
    -------
    array
        The counts (int64), or the sums of the weights (the device's default float dtype),
        shape ``(max(max(x) + 1, minlength),)``. An empty ``x`` gives ``minlength`` int64
        zeros whatever the weights, as in NumPy.

    Raises
    ------
    TypeError
        ``x`` is not of an integer dtype that casts safely to int64, or ``weights`` is
        complex.
    ValueError
        ``x`` is not one-dimensional or has negative values, ``minlength`` is negative, or
        ``weights`` has another shape.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.bincount(clnp.asarray([0, 1, 1, 3])))
    [1 2 0 1]
    >>> w = clnp.asarray([0.5, 1.0, 0.25], dtype=clnp.float32)
    >>> print(clnp.bincount(clnp.asarray([0, 1, 1]), weights=w, minlength=4))
    [0.5  1.25 0.   0.  ]
    """
    xp = _xp()
    if not is_array(x) and np.size(x) == 0 and np.ndim(x) == 1:
        x = np.zeros(0, dtype=np.int64)
    v = _arr(x)
    if v.ndim != 1:
        raise ValueError(f"bincount: x must be 1-D; got shape {v.shape}")
    if dkind(v.dtype) not in "biu" or v.dtype == dt.uint64:
        raise TypeError(f"Cannot cast array data from dtype('{v.dtype}') to "
                        f"dtype('int64') according to the rule 'safe'")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    n = v.shape[0]
    if n == 0:
        # NumPy returns int64 zeros for an empty x without looking at the weights
        return xp.zeros((minlength,), dtype=dt.int64, device=v.device)
    w = None
    if weights is not None:
        w = _arr(weights, v.device)
        if tuple(w.shape) != tuple(v.shape):
            raise ValueError(f"bincount: weights of shape {w.shape} do not match x of shape "
                             f"{v.shape}")
        if dkind(w.dtype) == "c":
            raise TypeError("bincount: complex weights are not supported")
    wd = v.device.default_float
    v = xp.astype(v, dt.int64)
    lo, hi = (int(t) for t in xp.stack([xp.min(v), xp.max(v)]).tolist())
    if lo < 0:
        raise ValueError("'list' argument must have no negative elements")
    nbins = builtins.max(hi + 1, minlength)
    bins = xp.arange(nbins, dtype=dt.int64, device=v.device)
    if w is None:
        right = xp.searchsorted(xp.sort(v), bins, side="right")
        return xp.diff(right, prepend=xp.zeros((1,), dtype=right.dtype, device=v.device))
    order = xp.argsort(v, stable=True)
    sv = xp.take(v, order)
    right = xp.searchsorted(sv, bins, side="right")
    cw = xp.cumulative_sum(xp.take(xp.astype(w, wd), order), include_initial=True)
    return xp.diff(xp.take(cw, right), prepend=xp.zeros((1,), dtype=wd, device=v.device))


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None,
                        weights: Any = None) -> Any:
    """The bin edges ``numpy.histogram`` uses (``numpy.histogram_bin_edges``).

    Parameters
    ----------
    a : array_like
        Input data of a real dtype (flattened).
    bins : int, sequence of scalars, array or str, default 10
        A number of equal-width bins over ``range``, a monotonically increasing array of
        edges, or the name of NumPy's estimator of the bin width: ``'auto'``, ``'fd'``,
        ``'doane'``, ``'scott'``, ``'stone'``, ``'rice'``, ``'sturges'``, ``'sqrt'``
        (computed from the data's statistics on the device; see ``clnp._numpy.histogram_bins``).
    range : (float, float), optional
        The lower and upper edge (default ``(a.min(), a.max())``).
    weights : array_like, optional
        Only checked for its shape (NumPy's estimators do not take weights).

    Returns
    -------
    array
        The ``nbins + 1`` edges, floating point.

    Raises
    ------
    TypeError
        ``a`` is not real, ``bins`` has an unsupported type, or an estimator is named with
        ``weights``.
    ValueError
        ``bins`` is not positive, not increasing, or an unknown estimator; ``range`` is
        reversed or not finite; ``weights`` has another shape.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([1.0, 2.0, 2.0, 3.0, 4.0], dtype=clnp.float32)
    >>> print(clnp.histogram_bin_edges(x, bins=4))
    [1.   1.75 2.5  3.25 4.  ]
    >>> print(clnp.histogram_bin_edges(x, bins=2, range=(0, 4)))
    [0. 2. 4.]
    """
    xp = _xp()
    x = xp.reshape(_arr(a), (-1,))
    _check_real(x, "histogram_bin_edges")
    if weights is not None and tuple(_arr(weights, x.device).shape) != tuple(_arr(a).shape):
        raise ValueError("weights should have the same shape as a.")
    return _bin_edges(x, bins, range, weights is not None)


def _bin_edges(x: Any, bins: Any, range: Any, weighted: bool) -> Any:
    xp = _xp()
    dev = x.device
    estimator = None
    if isinstance(bins, str):
        from .histogram_bins import ESTIMATORS
        if bins not in ESTIMATORS:
            raise ValueError(f"{bins!r} is not a valid estimator for `bins` (one of "
                             f"{', '.join(repr(e) for e in ESTIMATORS)})")
        if weighted:
            raise TypeError("Automated estimation of the number of bins is not supported "
                            "for weighted data")
        estimator, bins = bins, 1
    if is_array(bins) or np.ndim(bins) == 1:
        edges_h = bins.to_numpy() if is_array(bins) else np.asarray(bins)
        if np.any(edges_h[:-1] > edges_h[1:]):
            raise ValueError("`bins` must increase monotonically, when an array")
        edges = _arr(edges_h, dev)
    elif np.ndim(bins) == 0:
        try:
            nb = operator.index(bins)
        except TypeError:
            raise TypeError("`bins` must be an integer, a string, or an array") from None
        if nb < 1:
            raise ValueError("`bins` must be positive, when an integer")
        if range is not None:
            first, last = range
            first = first.item() if isinstance(first, np.generic) else first
            last = last.item() if isinstance(last, np.generic) else last
            if first > last:
                raise ValueError("max must be larger than min in range parameter.")
            if not (np.isfinite(first) and np.isfinite(last)):
                raise ValueError(f"supplied range of [{first}, {last}] is not finite")
        elif x.shape[0] == 0:
            first, last = 0, 1
        else:
            mm = xp.stack([xp.min(x), xp.max(x)]).to_numpy()
            first, last = mm[0], mm[1]
            if not (np.isfinite(first) and np.isfinite(last)):
                raise ValueError(f"autodetected range of [{first}, {last}] is not finite")
        if first == last:
            first, last = first - 0.5, last + 0.5
        if estimator is not None:
            from .histogram_bins import n_equal_bins
            nb = n_equal_bins(x, estimator, first, last)
        host_a = np.empty(0, dtype=x.dtype)
        bin_type = np.result_type(first, last, host_a)
        if np.issubdtype(bin_type, np.integer) or bin_type == np.bool_:
            bin_type = np.result_type(bin_type, float)
        if not dev.supports(np.dtype(bin_type)):
            bin_type = np.float32
        edges_h = np.linspace(first, last, nb + 1, endpoint=True, dtype=bin_type)
        edges = _arr(edges_h, dev)
    else:
        raise ValueError("`bins` must be 1d, when an array")
    if edges.shape[0] < 2:
        raise ValueError("histogram: bins needs at least two edges")
    return edges


def histogram(a: Any, bins: Any = 10, range: Any = None, density: Any = None,
              weights: Any = None) -> tuple[Any, Any]:
    """Histogram of ``a`` over ``bins`` (``numpy.histogram``).

    Bins are half-open ``[e_i, e_{i+1})`` except the last, which includes its right edge;
    values outside are ignored.

    Parameters
    ----------
    a : array_like
        Input data of a real dtype (flattened).
    bins : int, sequence of scalars, array or str, default 10
        A number of equal-width bins over ``range``, a monotonically increasing array of
        edges, or the name of one of NumPy's bin-width estimators (``'auto'``, ``'fd'``,
        ``'doane'``, ``'scott'``, ``'stone'``, ``'rice'``, ``'sturges'``, ``'sqrt'``; see
        :func:`histogram_bin_edges`).
    range : (float, float), optional
        The lower and upper edge (default ``(a.min(), a.max())``).
    density : bool, optional
        Normalise to a probability density (the integral over the range is 1).
    weights : array_like, optional
        A weight per element of ``a``; bins hold the sums of the weights.

    Returns
    -------
    hist : array
        The counts (int64), the summed weights, or the density (default float dtype).
    bin_edges : array
        The ``len(hist) + 1`` edges.

    Raises
    ------
    TypeError
        ``a`` is not real, ``bins`` has an unsupported type, or an estimator is named with
        ``weights``.
    ValueError
        ``bins`` is not positive, not increasing, or an unknown estimator; ``range`` is
        reversed or not finite; ``weights`` has another shape.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([1.0, 2.0, 2.0, 3.0, 4.0], dtype=clnp.float32)
    >>> hist, edges = clnp.histogram(x, bins=3)
    >>> print(hist, edges)
    [1 2 2] [1. 2. 3. 4.]
    >>> print(clnp.histogram(x, bins=clnp.asarray([0.0, 2.0, 4.0], dtype=clnp.float32))[0])
    [1 4]
    """
    xp = _xp()
    x = xp.reshape(_arr(a), (-1,))
    _check_real(x, "histogram")
    dev = x.device
    w = None
    if weights is not None:
        w = _arr(weights, dev)
        if tuple(w.shape) != tuple(_arr(a, dev).shape):
            raise ValueError("weights should have the same shape as a.")
        w = xp.reshape(w, (-1,))
    edges = _bin_edges(x, bins, range, w is not None)
    cd = dt.promote(x.dtype, edges.dtype)
    xs = xp.astype(x, cd)
    e = xp.astype(edges, cd)
    if w is None:
        srt = xp.sort(xs)
        cum = xp.concat([xp.searchsorted(srt, e[:-1], side="left"),
                         xp.searchsorted(srt, e[-1:], side="right")])
        hist = xp.diff(cum)
    else:
        order = xp.argsort(xs, stable=True)
        srt = xp.take(xs, order)
        cum = xp.concat([xp.searchsorted(srt, e[:-1], side="left"),
                         xp.searchsorted(srt, e[-1:], side="right")])
        cw = xp.cumulative_sum(xp.take(w, order), include_initial=True)
        hist = xp.diff(xp.take(cw, cum))
    if density:
        # as NumPy: the widths are differences in the edges' dtype, then widened (float32
        # edges give float32-rounded widths); the total is summed in the counts' dtype
        fd = dev.default_float
        db = xp.astype(xp.diff(edges), fd)
        total = xp.sum(hist)
        if dkind(hist.dtype) not in "fc":
            hist, total = xp.astype(hist, fd), xp.astype(total, fd)
        return hist / db / total, edges
    return hist, edges


def argwhere(a: Any) -> Any:
    """Indices of the non-zero elements, one row per element (``numpy.argwhere``).

    Parameters
    ----------
    a : array_like
        Input array.

    Returns
    -------
    array
        Integer array of shape ``(N, a.ndim)`` (the count is read back to the host).

    Examples
    --------
    >>> import clnp
    >>> print(clnp.argwhere(clnp.asarray([[0, 1], [1, 0]])))
    [[0 1]
     [1 0]]
    """
    xp = _xp()
    x = _arr(a)
    if x.ndim == 0:
        return argwhere(xp.reshape(x, (1,)))[:, :0]
    return xp.stack(xp.nonzero(x), axis=1)


def flatnonzero(a: Any) -> Any:
    """Indices of the non-zero elements of the flattened array (``numpy.flatnonzero``).

    Parameters
    ----------
    a : array_like
        Input array.

    Returns
    -------
    array
        1-D integer array.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.flatnonzero(clnp.asarray([[0, 1], [1, 0]])))
    [1 2]
    """
    xp = _xp()
    return xp.nonzero(xp.reshape(_arr(a), (-1,)))[0]


# --------------------------------------------------------------------- diagonals
def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The ``offset``-th diagonal of the 2-D sub-arrays on ``axis1`` and ``axis2``.

    Parameters
    ----------
    a : array_like
        Input array.
    offset : int, default 0
        The diagonal (above the main one when positive).
    axis1 : int, default 0
        First axis of the 2-D sub-arrays.
    axis2 : int, default 1
        Second axis.

    Returns
    -------
    array
        A new array (NumPy returns a read-only view): ``axis1`` and ``axis2`` are
        removed and the diagonal is the last axis.

    Raises
    ------
    ValueError
        ``axis1`` equals ``axis2``, or ``a`` has fewer than two dimensions.
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.diagonal(clnp.asarray([[1, 2], [3, 4]])))
    [1 4]
    """
    xp = _xp()
    x = _arr(a)
    if x.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    i = normalize_axis(axis1, x.ndim, "diagonal")
    j = normalize_axis(axis2, x.ndim, "diagonal")
    if i == j:
        raise ValueError("axis1 and axis2 cannot be the same")
    offset = operator.index(offset)
    rest = [d for d in range(x.ndim) if d not in (i, j)]
    moved = xp.permute_dims(x, tuple(rest) + (i, j))
    n1, n2 = x.shape[i], x.shape[j]
    length = builtins.max(0, builtins.min(n1, n2 - offset) if offset >= 0
                          else builtins.min(n1 + offset, n2))
    r = np.arange(length) + builtins.max(-offset, 0)
    c = np.arange(length) + builtins.max(offset, 0)
    if length == 0:
        return xp.zeros(tuple(x.shape[d] for d in rest) + (0,), dtype=x.dtype,
                        device=x.device)
    return moved[..., r, c]


def diag(v: Any, k: int = 0) -> Any:
    """Extract a diagonal, or build a diagonal array (``numpy.diag``).

    Parameters
    ----------
    v : array_like
        1-D: the diagonal to place; 2-D: the array to read from.
    k : int, default 0
        The diagonal (above the main one when positive).

    Returns
    -------
    array
        For 1-D ``v`` a 2-D array with ``v`` on the ``k``-th diagonal; for 2-D ``v`` its
        ``k``-th diagonal.

    Raises
    ------
    ValueError
        ``v`` is neither 1-D nor 2-D.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.diag(clnp.asarray([1, 2])))
    [[1 0]
     [0 2]]
    >>> print(clnp.diag(clnp.asarray([[1, 2], [3, 4]]), k=1))
    [2]
    """
    xp = _xp()
    x = _arr(v)
    k = operator.index(k)
    if x.ndim == 1:
        n = x.shape[0]
        m = n + abs(k)
        out = xp.zeros((m, m), dtype=x.dtype, device=x.device)
        if n:
            out[np.arange(n) + builtins.max(-k, 0), np.arange(n) + builtins.max(k, 0)] = x
        return out
    if x.ndim == 2:
        return diagonal(x, k)
    raise ValueError("Input must be 1- or 2-d.")


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: Any = None) -> Any:
    """Sum along the ``offset``-th diagonals (``numpy.trace``).

    Parameters
    ----------
    a : array_like
        Input array.
    offset : int, default 0
        The diagonal.
    axis1 : int, default 0
        First axis of the 2-D sub-arrays.
    axis2 : int, default 1
        Second axis.
    dtype : dtype, optional
        The accumulator dtype (default: integers in the default integer type).
    out : array, optional
        A clnp array that receives the result.

    Returns
    -------
    array
        The sums, with ``axis1`` and ``axis2`` removed.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> int(clnp.trace(clnp.asarray([[1, 2], [3, 4]])))
    5
    """
    res = _xp().sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)
    return _finish(res, out, "trace")


# --------------------------------------------------------------------- comparisons
def isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Any:
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (``numpy.isclose``).

    Parameters
    ----------
    a, b : array_like
        The arrays to compare (they broadcast).
    rtol : float, default 1e-05
        Relative tolerance.
    atol : float, default 1e-08
        Absolute tolerance.
    equal_nan : bool, default False
        NaNs compare equal.

    Returns
    -------
    array
        Booleans; infinities are close only to themselves, NaN to nothing unless
        ``equal_nan``.

    Raises
    ------
    ValueError
        Shapes that do not broadcast.

    Examples
    --------
    >>> import clnp
    >>> a = clnp.asarray([1.0, float("nan")])
    >>> print(clnp.isclose(a, a + 1e-9, equal_nan=True))
    [ True  True]
    """
    xp = _xp()
    dev = _device_of(a, b)
    x = a if isinstance(a, (int, float, complex)) and not isinstance(a, bool) else \
        _arr(a, dev)
    y = b if isinstance(b, (int, float, complex)) and not isinstance(b, bool) else \
        _arr(b, dev)
    if not is_array(x) and not is_array(y):
        x = _arr(x, dev)
    if is_array(y):
        if dkind(y.dtype) not in "fc":
            y = xp.astype(y, y.device.default_float)
    elif isinstance(y, int):
        y = float(y)
    from .._array_api.elementwise import _check_operands
    _check_operands("isclose", [x, y])          # shapes and devices before any kernel
    for t, name in ((rtol, "rtol"), (atol, "atol")):
        if is_array(t) or np.ndim(t):
            raise TypeError(f"isclose: {name} must be a scalar in clnp")
    rtol = float(rtol)
    atol = float(atol)
    ay = xp.abs(y) if is_array(y) else abs(y)
    tol = xp.add(xp.multiply(ay, rtol), atol) if is_array(ay) else atol + rtol * ay
    fin = xp.isfinite(y) if is_array(y) else math.isfinite(abs(y))
    res = xp.logical_or(xp.logical_and(xp.less_equal(xp.abs(xp.subtract(x, y)), tol), fin),
                        xp.equal(x, y))
    if equal_nan:
        nx = xp.isnan(x) if is_array(x) else bool(np.isnan(x))
        ny = xp.isnan(y) if is_array(y) else bool(np.isnan(y))
        res = xp.logical_or(res, xp.logical_and(nx, ny) if is_array(nx) or is_array(ny)
                            else bool(nx and ny))
    return res


def allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """Whether every element pair is close (``numpy.allclose``).

    Parameters
    ----------
    a, b : array_like
        The arrays to compare (they broadcast).
    rtol : float, default 1e-05
        Relative tolerance.
    atol : float, default 1e-08
        Absolute tolerance.
    equal_nan : bool, default False
        NaNs compare equal.

    Returns
    -------
    bool
        A Python bool (one value read back from the device).

    Raises
    ------
    ValueError
        Shapes that do not broadcast.

    Examples
    --------
    >>> import clnp
    >>> clnp.allclose(clnp.asarray([1.0, 2.0]), clnp.asarray([1.0, 2.0 + 1e-9]))
    True
    """
    return bool(_xp().all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> bool:
    """Whether the arrays have the same shape and elements (``numpy.array_equal``).

    Parameters
    ----------
    a1, a2 : array_like
        The arrays.
    equal_nan : bool, default False
        NaNs compare equal.

    Returns
    -------
    bool
        A Python bool.

    Examples
    --------
    >>> import clnp
    >>> a = clnp.asarray([1, 2])
    >>> clnp.array_equal(a, clnp.asarray([1, 2])), clnp.array_equal(a, clnp.asarray([1]))
    (True, False)
    """
    xp = _xp()
    dev = _device_of(a1, a2)
    try:
        x, y = _arr(a1, dev), _arr(a2, dev)
    except (TypeError, ValueError):
        return False
    if tuple(x.shape) != tuple(y.shape):
        return False
    eq = xp.equal(x, y)
    if equal_nan and (dkind(x.dtype) in "fc" or dkind(y.dtype) in "fc"):
        nx = xp.isnan(x) if dkind(x.dtype) in "fc" else xp.zeros(x.shape, dtype=dt.bool_,
                                                               device=x.device)
        ny = xp.isnan(y) if dkind(y.dtype) in "fc" else xp.zeros(y.shape, dtype=dt.bool_,
                                                               device=y.device)
        if not bool(xp.all(xp.equal(nx, ny))):
            return False
        eq = xp.logical_or(eq, nx)
    return bool(xp.all(eq))


# --------------------------------------------------------------------- rounding
def around(a: Any, decimals: int = 0, out: Any = None) -> Any:
    """Round to ``decimals`` decimal places, ties to even (``numpy.around``, ``numpy.round``).

    Parameters
    ----------
    a : array_like
        Input array.
    decimals : int, default 0
        Decimal places (negative: to tens, hundreds...).
    out : array, optional
        A clnp array that receives the result.

    Returns
    -------
    array
        ``rint(a * 10**decimals) / 10**decimals`` in double precision, as NumPy computes
        it; integers are returned unchanged for ``decimals >= 0``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.around(clnp.asarray([0.5, 1.5, 2.675]), 2))
    [0.5  1.5  2.68]
    >>> print(clnp.around(clnp.asarray([0.5, 1.5, 2.5])))
    [0. 2. 2.]
    """
    xp = _xp()
    x = _arr(a)
    decimals = operator.index(decimals)
    if dkind(x.dtype) == "b":
        raise TypeError("around: boolean input is not supported")
    if decimals == 0 and dkind(x.dtype) in "fc":
        return _finish(xp.round(x), out, "around")
    if dkind(x.dtype) in "iu":
        if decimals >= 0:
            return _finish(xp.asarray(x, copy=True), out, "around")
        work = x.device.default_float
    else:
        work = x.dtype
    wide = dt.promote(work, x.device.default_complex if work.kind == "c"
                      else x.device.default_float)
    f = float(10.0 ** abs(decimals))
    y = xp.astype(x, wide)
    y = xp.astype(y * f if decimals >= 0 else y / f, work)
    y = xp.round(y)
    y = xp.astype(y, wide)
    y = xp.astype(y / f if decimals >= 0 else y * f, work)
    if dkind(x.dtype) in "iu":
        y = xp.astype(y, x.dtype)
    return _finish(y, out, "around")


round_ = around


def fix(x: Any, out: Any = None) -> Any:
    """Round toward zero (``numpy.fix``).

    Parameters
    ----------
    x : array_like
        Input array.
    out : array, optional
        A clnp array that receives the result.

    Returns
    -------
    array
        The rounded values, of ``x``'s dtype.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.fix(clnp.asarray([-1.5, 1.5])))
    [-1.  1.]
    """
    return _finish(_xp().trunc(_arr(x)), out, "fix")


def real_if_close(a: Any, tol: float = 100) -> Any:
    """The real part when every imaginary part is within ``tol`` epsilons of zero.

    Parameters
    ----------
    a : array_like
        Input array.
    tol : float, default 100
        Tolerance in machine epsilons of the dtype.

    Returns
    -------
    array
        The real part, or ``a`` unchanged.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.real_if_close(clnp.asarray([2.0 + 0j, 1.0 + 0j])))
    [2. 1.]
    """
    xp = _xp()
    x = _arr(a)
    if dkind(x.dtype) != "c":
        return x
    if tol > 1:
        tol = float(dt.finfo(x.dtype).eps) * tol
    if bool(xp.all(xp.less(xp.abs(xp.imag(x)), tol))):
        return xp.real(x)
    return x


def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: Any = None,
               neginf: Any = None) -> Any:
    """Replace NaN and infinities by finite numbers (``numpy.nan_to_num``).

    Parameters
    ----------
    x : array_like
        Input array (complex: per component).
    copy : bool, default True
        False writes into a clnp ``x``.
    nan : float, default 0.0
        The value for NaN.
    posinf : float, optional
        For +inf (default: the largest finite value).
    neginf : float, optional
        For -inf (default: the most negative finite value).

    Returns
    -------
    array
        The replaced array.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.nan_to_num(clnp.asarray([float("nan"), float("inf"), 1.0]), posinf=9.0))
    [0. 9. 1.]
    """
    xp = _xp()
    arr = _arr(x)
    if dkind(arr.dtype) not in "fc":
        return xp.asarray(arr, copy=True) if copy and arr is x else arr
    rdt = np.dtype(dt.finfo(arr.dtype).dtype)
    maxf = float(dt.finfo(rdt).max) if posinf is None else posinf
    minf = float(dt.finfo(rdt).min) if neginf is None else neginf

    def fix_real(d: Any) -> Any:
        d = xp.where(xp.isnan(d), nan, d)
        d = xp.where(xp.logical_and(xp.isinf(d), xp.greater(d, 0)), maxf, d)
        return xp.where(xp.logical_and(xp.isinf(d), xp.less(d, 0)), minf, d)

    if dkind(arr.dtype) == "c":
        res = xp.add(fix_real(xp.real(arr)), xp.multiply(fix_real(xp.imag(arr)), 1j))
        res = xp.astype(res, arr.dtype)
    else:
        res = fix_real(arr)
    if not copy and arr is x:
        x[...] = res
        return x
    return res


# --------------------------------------------------------------------- elementwise extras
def _nan_ignoring(x1: Any, x2: Any, op: str) -> Any:
    xp = _xp()
    m = getattr(xp, op)(x1, x2)
    if dkind(m.dtype) != "f":
        return m
    # both operands in the result's float dtype: a bool or integer operand (NumPy promotes
    # it against a float scalar) has no NaN, and isnan refuses booleans
    a, b = (xp.astype(v, m.dtype) if is_array(v) and v.dtype != m.dtype else
            v if is_array(v) else _arr(v, m.device, m.dtype) for v in (x1, x2))
    return xp.where(xp.isnan(b), a, xp.where(xp.isnan(a), b, m))


def fmax(x1: Any, x2: Any, /) -> Any:
    """Elementwise maximum that ignores NaN: NaN only when both are NaN (``numpy.fmax``)."""
    return _nan_ignoring(x1, x2, "maximum")


def fmin(x1: Any, x2: Any, /) -> Any:
    """Elementwise minimum that ignores NaN (``numpy.fmin``)."""
    return _nan_ignoring(x1, x2, "minimum")


def fmod(x1: Any, x2: Any, /) -> Any:
    """Remainder of division with the sign of the dividend, C's ``fmod``
    (``numpy.fmod``)."""
    xp = _xp()
    dev = _device_of(x1, x2)
    a, b = (v if isinstance(v, (int, float)) else _arr(v, dev) for v in (x1, x2))
    r = xp.remainder(xp.abs(a) if is_array(a) else abs(a), xp.abs(b) if is_array(b) else abs(b))
    if dkind(r.dtype) == "f":
        return xp.copysign(r, xp.astype(a, r.dtype) if is_array(a) else float(a))
    return xp.where(xp.less(a, 0), xp.negative(r), r)


def exp2(x: Any, /) -> Any:
    """``2 ** x`` elementwise (``numpy.exp2``); integers compute in the default float."""
    xp = _xp()
    return xp.pow(2.0, _inexact(_arr(x)))


def rint(x: Any, /) -> Any:
    """Round to the nearest integer, ties to even (``numpy.rint``)."""
    xp = _xp()
    x = _arr(x)
    return xp.round(x if dkind(x.dtype) in "fc" else _inexact(x))


def fabs(x: Any, /) -> Any:
    """Absolute value of real input as floating point (``numpy.fabs``)."""
    x = _arr(x)
    if dkind(x.dtype) == "c":
        raise TypeError("fabs: complex input is not supported (use abs)")
    return _xp().abs(_inexact(x))


def degrees(x: Any, /) -> Any:
    """Radians to degrees (``numpy.degrees``)."""
    return _inexact(_arr(x)) * (180.0 / math.pi)


def radians(x: Any, /) -> Any:
    """Degrees to radians (``numpy.radians``)."""
    return _inexact(_arr(x)) * (math.pi / 180.0)


rad2deg = degrees
deg2rad = radians


def heaviside(x1: Any, x2: Any, /) -> Any:
    """Heaviside step: 0 for ``x1 < 0``, ``x2`` at 0, 1 for ``x1 > 0``, NaN for NaN
    (``numpy.heaviside``); integers compute in the default float."""
    xp = _xp()
    x = _inexact(_arr(x1, _device_of(x2)))
    d = x.dtype
    if is_array(x2) or isinstance(x2, (np.ndarray, np.generic)):
        h0 = _inexact(_arr(x2, x.device))
        d = dt.promote(d, h0.dtype)
    else:
        h0 = x2
    zero = xp.zeros((), dtype=d, device=x.device)
    h = xp.where(xp.less(x, 0), zero, xp.where(xp.greater(x, 0), zero + 1, h0))
    return xp.where(xp.isnan(x), math.nan, h)


def float_power(x1: Any, x2: Any, /) -> Any:
    """``x1 ** x2`` in double (or complex double) precision (``numpy.float_power``)."""
    xp = _xp()
    dev = _device_of(x1, x2)
    c = any(iscomplexobj(v) if is_array(v) else isinstance(v, complex) for v in (x1, x2))
    d = (dev or xp.default_device()).default_complex if c else _default_float(dev)
    a = _arr(x1, dev, d) if is_array(x1) or not isinstance(x1, (int, float, complex)) else x1
    b = _arr(x2, dev, d) if is_array(x2) or not isinstance(x2, (int, float, complex)) else x2
    if not is_array(a) and not is_array(b):
        a = _arr(a, dev, d)
    return xp.pow(a, b)


def logaddexp2(x1: Any, x2: Any, /) -> Any:
    """``log2(2**x1 + 2**x2)`` without overflow (``numpy.logaddexp2``).

    NumPy's algorithm: ``max + log2(1 + 2**-|x1 - x2|)``, exactly ``x1 + 1`` where
    ``x1 == x2``. (Through ``logaddexp`` of ``x * ln 2`` the rounding of the scaled inputs
    cost up to 128 ulp where the result is near 0; ``tools/ulp.py`` measures it.)
    """
    xp = _xp()
    a = _inexact(x1) if is_array(x1) else x1
    b = _inexact(x2) if is_array(x2) else x2
    if not is_array(a) and not is_array(b):
        a = _inexact(_arr(a))
    half = xp.result_type(a, b) == dt.float16
    if half:       # as NumPy: in float, rounded once (float16 steps would cancel badly)
        a, b = (xp.astype(v, dt.float32) if is_array(v) else v for v in (a, b))
    d = xp.negative(xp.abs(xp.subtract(a, b)))
    r = xp.add(xp.maximum(a, b), xp.multiply(xp.log1p(xp.exp2(d)), 1.0 / math.log(2.0)))
    r = xp.where(xp.equal(a, b), xp.add(a, 1.0), r)
    return xp.astype(r, dt.float16) if half else r


def divmod(x1: Any, x2: Any, /) -> tuple[Any, Any]:
    """``(floor_divide(x1, x2), remainder(x1, x2))`` (``numpy.divmod``).

    Parameters
    ----------
    x1 : array
        Dividend.
    x2 : array
        Divisor.

    Returns
    -------
    tuple of array
        The quotients and remainders.

    Raises
    ------
    TypeError
        Neither argument is an array.

    Examples
    --------
    >>> import clnp
    >>> q, r = clnp.divmod(clnp.asarray([7, -7]), 3)
    >>> print(q, r)
    [ 2 -3] [1 2]
    """
    xp = _xp()
    return xp.floor_divide(x1, x2), xp.remainder(x1, x2)


# --------------------------------------------------------------------- interpolation
def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Any:
    """One-dimensional piecewise-linear interpolation (``numpy.interp``).

    Parameters
    ----------
    x : array_like
        Where to evaluate.
    xp : array_like
        Increasing x-coordinates of the data points.
    fp : array_like
        The y-coordinates (complex: per component).
    left : float, optional
        Value below ``xp[0]`` (default ``fp[0]``).
    right : float, optional
        Value above ``xp[-1]`` (default ``fp[-1]``).
    period : float, optional
        Makes ``xp`` periodic.

    Returns
    -------
    array
        The interpolated values, in the default float.

    Raises
    ------
    ValueError
        ``xp`` and ``fp`` of different lengths, or empty.

    Examples
    --------
    >>> import clnp
    >>> xp, fp = clnp.asarray([0.0, 1.0, 2.0]), clnp.asarray([0.0, 2.0, 4.0])
    >>> print(clnp.interp(clnp.asarray([0.5, 1.5, 3.0]), xp, fp))
    [1. 3. 4.]
    """
    ns = _xp()
    dev = _device_of(x, xp, fp)
    fd = _default_float(dev)
    # every operand converted and checked before a kernel runs
    fpa, xv, xpa = _arr(fp, dev), _arr(x, dev), _arr(xp, dev)
    for v, what in ((xv, "x"), (xpa, "xp")):
        if dkind(v.dtype) == "c":
            raise TypeError(f"interp: {what} must be real; got dtype {v.dtype}")
    if xpa.ndim != 1 or fpa.ndim != 1:
        raise ValueError(f"interp: xp and fp must be 1-D; got shapes {tuple(xpa.shape)} and "
                         f"{tuple(fpa.shape)}")
    if xpa.shape[0] != fpa.shape[0]:
        raise ValueError(f"interp: fp and xp are not of the same length: shapes "
                         f"{tuple(fpa.shape)} and {tuple(xpa.shape)}")
    if dkind(fpa.dtype) == "c":
        re = interp(x, xp, ns.real(fpa), None if left is None else np.real(left),
                    None if right is None else np.real(right), period)
        im = interp(x, xp, ns.imag(fpa), None if left is None else np.imag(left),
                    None if right is None else np.imag(right), period)
        return ns.add(re, ns.multiply(im, 1j))
    xv, xpa, fpa = (ns.astype(v, fd) for v in (xv, xpa, fpa))
    if xpa.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period = abs(float(period))
        left = right = None
        xv = ns.remainder(xv, period)
        xpa = ns.remainder(xpa, period)
        order = ns.argsort(xpa)
        xpa, fpa = ns.take(xpa, order), ns.take(fpa, order)
        xpa = ns.concat([xpa[-1:] - period, xpa, xpa[0:1] + period])
        fpa = ns.concat([fpa[-1:], fpa, fpa[0:1]])
    n = xpa.shape[0]
    lval = fpa[0] if left is None else float(left)
    rval = fpa[-1] if right is None else float(right)
    if n == 1:
        res = ns.where(ns.less(xv, xpa[0]), lval,
                       ns.where(ns.greater(xv, xpa[0]), rval, fpa[0]))
        return ns.astype(res, fd)
    shp = xv.shape
    xf = ns.reshape(xv, (-1,))
    j = ns.subtract(ns.searchsorted(xpa, xf, side="right"), 1)
    j = ns.clip(j, 0, n - 2)
    x0, x1 = ns.take(xpa, j), ns.take(xpa, j + 1)
    f0, f1 = ns.take(fpa, j), ns.take(fpa, j + 1)
    slope = (f1 - f0) / (x1 - x0)
    res = slope * (xf - x0) + f0
    alt = slope * (xf - x1) + f1
    res = ns.where(ns.isnan(res), alt, res)
    res = ns.where(ns.logical_and(ns.isnan(res), ns.equal(f0, f1)), f0, res)
    res = ns.where(ns.equal(xf, x0), f0, res)
    res = ns.where(ns.equal(xf, xpa[-1]), fpa[-1], res)
    res = ns.where(ns.less(xf, xpa[0]), lval, res)
    res = ns.where(ns.greater(xf, xpa[-1]), rval, res)
    res = ns.where(ns.isnan(xf), xf, res)
    return ns.reshape(ns.astype(res, fd), shp)


def _matmul(a: Any, b: Any) -> Any:
    """``a @ b`` through ``clnp.matmul`` when the namespace has it, else broadcast products."""
    xp = _xp()
    mm = getattr(xp, "matmul", None)
    if mm is not None and dkind(a.dtype) != "b":
        return mm(a, b)
    if b.ndim == 1:
        return xp.sum(a * b, axis=-1)
    return xp.sum(xp.expand_dims(a, axis=-1) * xp.expand_dims(b, axis=-3), axis=-2)


def convolve(a: Any, v: Any, mode: str = "full") -> Any:
    """Discrete linear convolution of two 1-D sequences (``numpy.convolve``).

    Parameters
    ----------
    a : array_like
        First 1-D input.
    v : array_like
        Second 1-D input.
    mode : {'full', 'same', 'valid'}, default 'full'
        Output length ``N + M - 1``, ``max(N, M)`` (centred), or ``max(N, M) - min(N, M)
        + 1``.

    Returns
    -------
    array
        The convolution, evaluated directly in bounded memory (the sliding-window matrix
        is gathered in chunks).

    Raises
    ------
    ValueError
        Empty inputs, inputs that are not 1-D, or an unknown mode.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.convolve(clnp.asarray([1.0, 2.0, 3.0]), clnp.asarray([0.0, 1.0, 0.5])))
    [0.  1.  2.5 4.  1.5]
    """
    xp = _xp()
    dev = _device_of(a, v)
    x, k = _arr(a, dev), _arr(v, dev)
    if x.ndim > 1 or k.ndim > 1:
        raise ValueError("object too deep for desired array")
    x, k = xp.reshape(x, (-1,)), xp.reshape(k, (-1,))
    if x.shape[0] == 0:
        raise ValueError("a cannot be empty")
    if k.shape[0] == 0:
        raise ValueError("v cannot be empty")
    if k.shape[0] > x.shape[0]:
        x, k = k, x
    n, m = x.shape[0], k.shape[0]
    rd = dt.promote(x.dtype, k.dtype)
    work = dt.int64 if rd.kind == "b" else rd
    x, k = xp.astype(x, work), xp.astype(xp.flip(k), work)
    if mode == "full":
        start, length = 0, n + m - 1
    elif mode == "same":
        start, length = (m - 1) // 2, n
    elif mode == "valid":
        start, length = m - 1, n - m + 1
    else:
        raise ValueError(f"mode must be one of 'full', 'same', or 'valid' (got {mode!r})")
    xpad = pad(x, (m - 1, m - 1)) if m > 1 else x
    cols = xp.reshape(xp.arange(m, dtype=dt.int64, device=x.device), (1, m))
    chunk = builtins.max(1, (1 << 22) // m)
    parts = []
    for s in builtins.range(start, start + length, chunk):
        e = builtins.min(s + chunk, start + length)
        rows = xp.reshape(xp.arange(s, e, dtype=dt.int64, device=x.device), (e - s, 1))
        window = xp.take(xpad, xp.reshape(rows + cols, (-1,)))
        parts.append(_matmul(xp.reshape(window, (e - s, m)), k))
    res = parts[0] if len(parts) == 1 else xp.concat(parts)
    if rd.kind == "b":
        res = xp.not_equal(res, 0)
    return res


# --------------------------------------------------------------------- statistics
def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None,
        fweights: Any = None, aweights: Any = None, *, dtype: Any = None) -> Any:
    """Covariance matrix (``numpy.cov``).

    Parameters
    ----------
    m : array_like
        Variables as rows (columns with ``rowvar=False``), observations along the other
        axis.
    y : array_like, optional
        More variables.
    rowvar : bool, default True
        Rows are variables.
    bias : bool, default False
        Normalise by ``N`` instead of ``N - 1``.
    ddof : int, optional
        Normalise by ``N - ddof``.
    fweights : array_like, optional
        Integer frequency weights of the observations.
    aweights : array_like, optional
        Observation weights.
    dtype : dtype, optional
        The result dtype.

    Returns
    -------
    array
        The covariance matrix (0-d for a single variable).

    Raises
    ------
    ValueError
        Negative frequency weights.
    RuntimeError
        Weights whose length differs from the number of observations (as NumPy).

    Examples
    --------
    >>> import clnp
    >>> print(clnp.cov(clnp.asarray([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])))
    [[ 1. -1.]
     [-1.  1.]]
    """
    xp = _xp()
    dev = _device_of(m, y)
    X = _arr(m, dev)
    if X.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is None:
        dtype = dt.promote(X.dtype, _default_float(X.device))
        if y is not None:
            dtype = dt.promote(dtype, _arr(y, X.device).dtype)
    dtype = dt.as_dtype(dtype)
    X = xp.astype(X, dtype)
    one_d = X.ndim < 2
    if one_d:
        X = xp.reshape(X, (1, -1))
    if not rowvar and not one_d:        # NumPy: a (1, n) matrix is n variables, once each
        X = xp.permute_dims(X, (1, 0))
    if X.shape[0] == 0:
        return xp.reshape(xp.zeros((0,), dtype=dtype, device=X.device), (0, 0))
    if y is not None:
        Y = _arr(y, X.device)
        if Y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
        Y = xp.astype(Y, dtype)
        if Y.ndim < 2:
            Y = xp.reshape(Y, (1, -1))
        if not rowvar and Y.shape[0] != 1:
            Y = xp.permute_dims(Y, (1, 0))
        X = xp.concat([X, Y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    n = X.shape[1]
    w = None
    if fweights is not None:
        fw = _arr(fweights, X.device)
        if dkind(fw.dtype) not in "iub":
            raise TypeError("fweights must be integer")
        if fw.ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if fw.shape[0] != n:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if bool(xp.any(xp.less(fw, 0))):
            raise ValueError("fweights cannot be negative")
        w = xp.astype(fw, dt.float64 if X.device.has_fp64 else dt.float32)
    aw = None
    if aweights is not None:
        aw = _arr(aweights, X.device)
        if aw.ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if aw.shape[0] != n:
            raise RuntimeError("incompatible numbers of samples and aweights")
        if bool(xp.any(xp.less(aw, 0))):
            raise ValueError("aweights cannot be negative")
        aw = xp.astype(aw, dt.float64 if X.device.has_fp64 else dt.float32)
        w = aw if w is None else w * aw
    avg, w_sum = average(X, axis=1, weights=w, returned=True)
    if w is None:
        fact: Any = n - ddof
    else:
        w_sum0 = float(w_sum[0])
        if ddof == 0:
            fact = w_sum0
        elif aw is None:
            fact = w_sum0 - ddof
        else:
            fact = w_sum0 - ddof * float(xp.sum(w * aw)) / w_sum0
    if fact <= 0:
        fact = 0.0
    X = X - xp.expand_dims(avg, axis=1)
    XT = xp.permute_dims(X if w is None else X * w, (1, 0))
    c = _matmul(X, xp.conj(XT) if dkind(XT.dtype) == "c" else XT)
    c = c * (1.0 / fact if fact else math.inf)
    return xp.squeeze(c) if 1 in c.shape else c


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Any:
    """Pearson correlation coefficients (``numpy.corrcoef``).

    Parameters
    ----------
    x : array_like
        Variables as rows (columns with ``rowvar=False``).
    y : array_like, optional
        More variables.
    rowvar : bool, default True
        Rows are variables.
    dtype : dtype, optional
        The result dtype.

    Returns
    -------
    array
        :func:`cov` normalised by the standard deviations, the real part clipped to [-1,
        1].

    Examples
    --------
    >>> import clnp
    >>> print(clnp.corrcoef(clnp.asarray([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])))
    [[ 1. -1.]
     [-1.  1.]]
    """
    xp = _xp()
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = diagonal(c)
    std = xp.sqrt(xp.real(d)) if dkind(d.dtype) == "c" else xp.sqrt(d)
    c = c / xp.reshape(std, (-1, 1))
    c = c / xp.reshape(std, (1, -1))
    if dkind(c.dtype) == "c":
        return xp.add(xp.clip(xp.real(c), -1, 1), xp.multiply(xp.imag(c), 1j))
    return xp.clip(c, -1, 1)


# --------------------------------------------------------------------- einsum
def _einsum_parse(subscripts: str, shapes: list) -> tuple[list[list[str]], list[str]]:
    """Per-operand label lists and output labels. Ellipsis dims get private labels
    ``"\0NNNN"`` (the N-th dim from the right), so they broadcast right-aligned."""
    sub = subscripts.replace(" ", "")
    explicit = "->" in sub
    lhs, rhs = sub.split("->", 1) if explicit else (sub, "")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: {len(terms)} operand terms in {subscripts!r} but "
                         f"{len(shapes)} operands")
    for ch in lhs.replace(",", "").replace(".", "") + rhs.replace(".", ""):
        if not ch.isalpha():
            raise ValueError(f"einsum: invalid subscript {ch!r} in {subscripts!r}")
    ell_n = 0
    labels: list[list[str]] = []
    for term, shp in zip(terms, shapes):
        pre, post, k = term, "", 0
        if "..." in term:
            pre, post = term.split("...", 1)
            k = len(shp) - len(pre) - len(post)
        if "." in pre or "." in post:
            raise ValueError(f"einsum: invalid ellipsis in {term!r}")
        if k < 0 or ("..." not in term and len(term) != len(shp)):
            raise ValueError(f"einsum: term {term!r} does not match an operand of "
                             f"{len(shp)} dimensions")
        ell_n = builtins.max(ell_n, k)
        labels.append(list(pre) + [f"\0{j:04d}" for j in builtins.range(k, 0, -1)]
                      + list(post))
    ell = [f"\0{j:04d}" for j in builtins.range(ell_n, 0, -1)]
    if explicit:
        if "..." in rhs:
            pre, post = rhs.split("...", 1)
            if "." in pre or "." in post:
                raise ValueError(f"einsum: invalid ellipsis in {rhs!r}")
            out = list(pre) + ell + list(post)
        elif ell_n:
            raise ValueError("output has more dimensions than subscripts given in einstein "
                             "sum, but no '...' ellipsis provided to broadcast the extra "
                             "dimensions.")
        else:
            out = list(rhs)
        for s in out:
            if not s.startswith("\0") and not any(s in lab for lab in labels):
                raise ValueError(f"einsum: output subscript {s!r} does not appear in the "
                                 f"inputs")
        if len(set(out)) != len(out):
            raise ValueError(f"einsum: output subscript repeated in {subscripts!r}")
    else:
        counts: dict[str, int] = {}
        for lab in labels:
            for s in lab:
                counts[s] = counts.get(s, 0) + 1
        out = ell + sorted(s for s, c in counts.items() if c == 1 and not s.startswith("\0"))
    return labels, out


def einsum(subscripts: Any, *operands: Any, out: Any = None, dtype: Any = None,
           order: str = "K", casting: str = "safe", optimize: Any = False) -> Any:
    """Einstein summation over a subscript string such as ``'ij,jk->ik'`` (``numpy.einsum``).

    Parameters
    ----------
    subscripts : str
        Labels per operand, optionally ``->`` and the output labels; ``...`` broadcasts;
        repeated labels in one operand take diagonals.
    *operands : array_like
        The operands.
    out : array, optional
        A clnp array that receives the result.
    dtype : dtype, optional
        The computation dtype.
    order, casting, optimize
        Accepted for NumPy compatibility.

    Returns
    -------
    array
        The result; operands are contracted pairwise with ``matmul`` after summing
        labels needed by no one else, so no intermediate is larger than an operand or a
        pairwise product.

    Raises
    ------
    ValueError
        Malformed subscripts, or labels whose sizes disagree.

    Examples
    --------
    >>> import clnp
    >>> a = clnp.asarray([[1.0, 2.0], [3.0, 4.0]])
    >>> print(clnp.einsum("ij,jk->ik", a, a))
    [[ 7. 10.]
     [15. 22.]]
    >>> float(clnp.einsum("ii", a))
    5.0
    """
    xp = _xp()
    if not isinstance(subscripts, str):
        raise TypeError("einsum: clnp supports only the subscript-string form "
                        "einsum('ij,jk->ik', a, b)")
    if not operands:
        raise ValueError("No input operands")
    dev = _device_of(*operands)
    ops = [_arr(o, dev) for o in operands]
    if dtype is not None:
        ops = [xp.astype(o, dt.as_dtype(dtype)) for o in ops]
    labels, out_labels = _einsum_parse(subscripts, [o.shape for o in ops])
    sizes: dict[str, int] = {}
    for o, lab in zip(ops, labels):
        for s, n in zip(lab, o.shape):
            if sizes.get(s, 1) not in (1, n) and n != 1:
                raise ValueError(f"einsum: operands could not be broadcast: label "
                                 f"{s.replace(chr(0), '...')!r} has sizes {sizes[s]} and "
                                 f"{n}")
            sizes[s] = builtins.max(sizes.get(s, 1), n)
    rd = ops[0].dtype
    for o in ops[1:]:
        rd = dt.promote(rd, o.dtype)
    terms = []
    for o, lab in zip(ops, labels):
        o = xp.astype(o, rd) if o.dtype != rd else o
        lab = list(lab)
        while len(set(lab)) != len(lab):          # repeated label: take the diagonal
            s = next(c for c in lab if lab.count(c) > 1)
            i = lab.index(s)
            j = lab.index(s, i + 1)
            o = diagonal(o, 0, i, j)
            lab = [c for k, c in enumerate(lab) if k not in (i, j)] + [s]
        terms.append((o, lab))

    def needed(exclude: list[int]) -> set[str]:
        need = set(out_labels)
        for k, (_, lab) in enumerate(terms):
            if k not in exclude:
                need.update(lab)
        return need

    # sum labels that only one operand has and the output does not need
    for k in builtins.range(len(terms)):
        o, lab = terms[k]
        need = needed([k])
        axes = tuple(i for i, s in enumerate(lab) if s not in need)
        if axes:
            o = xp.sum(o, axis=axes) if dkind(o.dtype) != "b" else xp.any(o, axis=axes)
            lab = [s for i, s in enumerate(lab) if i not in axes]
        terms[k] = (o, lab)
    a, la = terms[0]
    for k in builtins.range(1, len(terms)):
        b, lb = terms[k]
        need = set(out_labels)
        for _, lab in terms[k + 1:]:
            need.update(lab)
        a, la = _contract(a, la, b, lb, need, sizes)
    # labels left over (needed by nobody) are summed; then order as the output
    extra = tuple(i for i, s in enumerate(la) if s not in out_labels)
    if extra:
        a = xp.sum(a, axis=extra) if dkind(a.dtype) != "b" else xp.any(a, axis=extra)
        la = [s for i, s in enumerate(la) if i not in extra]
    missing = [s for s in out_labels if s not in la]
    if missing:
        raise ValueError(f"einsum: output labels {missing} are not in the inputs")
    a = xp.permute_dims(a, tuple(la.index(s) for s in out_labels))
    a = xp.broadcast_to(a, tuple(sizes[s] for s in out_labels))
    return _finish(a if a.dtype == rd else xp.astype(a, rd), out, "einsum")


def _contract(a: Any, la: list, b: Any, lb: list, need: set, sizes: dict) -> tuple[Any, list]:
    """Contract two labelled operands: shared labels still needed are batch dimensions,
    shared labels no longer needed are summed (through matmul)."""
    xp = _xp()
    batch = [s for s in la if s in lb and s in need]
    contr = [s for s in la if s in lb and s not in need]
    fa = [s for s in la if s not in lb]
    fb = [s for s in lb if s not in la]

    def arrange(x: Any, lab: list, order: list) -> Any:
        x = xp.permute_dims(x, tuple(lab.index(s) for s in order))
        return xp.broadcast_to(x, tuple(sizes[s] if s in batch or s in contr else n
                                        for s, n in zip(order, x.shape)))

    A = arrange(a, la, batch + fa + contr)
    B = arrange(b, lb, batch + contr + fb)
    nb = math.prod(sizes[s] for s in batch)
    nfa = math.prod(A.shape[len(batch):len(batch) + len(fa)])
    nfb = math.prod(B.shape[len(batch) + len(contr):])
    nc = math.prod(sizes[s] for s in contr)
    A2 = xp.reshape(A, (nb, nfa, nc))
    B2 = xp.reshape(B, (nb, nc, nfb))
    if dkind(A2.dtype) == "b":
        C = xp.any(xp.logical_and(xp.expand_dims(A2, axis=3), xp.expand_dims(B2, axis=1)),
                   axis=2)
    else:
        C = _matmul(A2, B2)
    shape = tuple(sizes[s] for s in batch) + tuple(A.shape[len(batch):len(batch) + len(fa)]) \
        + tuple(B.shape[len(batch) + len(contr):])
    return xp.reshape(C, shape), batch + fa + fb


# --------------------------------------------------------------------- floating-point errors
_ERR = {"divide": "warn", "over": "warn", "under": "ignore", "invalid": "warn"}


def seterr(all: Any = None, divide: Any = None, over: Any = None, under: Any = None,
           invalid: Any = None) -> dict[str, str]:
    """Record floating-point error settings and return the previous ones (``numpy.seterr``).

    A no-op for computation: device kernels follow IEEE 754 silently and never warn or raise
    on division by zero, overflow, underflow or invalid operations.

    Parameters
    ----------
    all, divide, over, under, invalid : str, optional
        NumPy's modes (``ignore``, ``warn``, ``raise``, ``call``, ``print``, ``log``).

    Returns
    -------
    dict
        The previous settings.

    Raises
    ------
    ValueError
        An unknown mode.

    Examples
    --------
    >>> import clnp
    >>> old = clnp.seterr(divide="ignore")
    >>> clnp.geterr()["divide"]
    'ignore'
    >>> _ = clnp.seterr(**old)
    """
    old = dict(_ERR)
    for k, v in (("divide", divide), ("over", over), ("under", under), ("invalid", invalid)):
        v = v if v is not None else all
        if v is not None:
            if v not in ("ignore", "warn", "raise", "call", "print", "log"):
                raise ValueError(f"seterr: invalid setting {v!r} for {k}")
            _ERR[k] = v
    return old


def geterr() -> dict[str, str]:
    """The settings recorded by :func:`seterr` (``numpy.geterr``).

    Returns
    -------
    dict
        Mode per error kind; they do not affect device computation.

    Examples
    --------
    >>> import clnp
    >>> sorted(clnp.geterr())
    ['divide', 'invalid', 'over', 'under']
    """
    return dict(_ERR)


class errstate:
    """Context manager and decorator setting floating-point error handling for a block
    (``numpy.errstate``). A no-op for computation: clnp device kernels never raise or warn
    on floating-point errors; the settings are only recorded (see :func:`seterr`)."""

    def __init__(self, *, call: Any = None, all: Any = None, divide: Any = None,
                 over: Any = None, under: Any = None, invalid: Any = None):
        self._kw = dict(all=all, divide=divide, over=over, under=under, invalid=invalid)
        self._old: list[dict[str, str]] = []

    def __enter__(self) -> "errstate":
        self._old.append(seterr(**self._kw))
        return self

    def __exit__(self, *exc: Any) -> None:
        _ERR.update(self._old.pop())

    def __call__(self, func: Any) -> Any:
        """Use the error settings as a decorator: ``func`` runs with them in force.

        Parameters
        ----------
        func : callable
            The function to wrap.

        Returns
        -------
        callable
            A wrapper with ``func``'s name and docstring.

        Examples
        --------
        >>> import clnp
        >>> @clnp.errstate(divide="ignore")
        ... def inverse(x):
        ...     return clnp.geterr()["divide"], 1 / x
        >>> setting, y = inverse(clnp.asarray([0.0]))
        >>> setting, y.tolist()
        ('ignore', [inf])
        """
        import functools

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)
        return wrapper
