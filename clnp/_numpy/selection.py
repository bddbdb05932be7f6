"""NumPy's selection and editing functions on the device: ``partition``, ``argpartition``,
``select``, ``choose``, ``piecewise``, ``put``, ``place``, ``putmask``, ``copyto``,
``insert``, ``delete``, ``append``, ``resize``, ``trim_zeros``, ``extract``, ``compress``,
``lexsort`` and ``sort_complex``.

Value work is clnp ops (gather, scatter, ``where``, sort). Index sets given on the host
(``insert``/``delete`` positions) are worked out on the host, like NumPy does, and become
one gather. Results whose size depends on data (``extract``, ``compress`` with a device
condition, ``trim_zeros``, ``place``) read that size back from the device.

``partition``/``argpartition`` return a full (stable) sort along the axis: NumPy leaves the
order within each side of ``kth`` unspecified, and a sorted array meets its contract.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

import numpy as np

from .._core import dtypes as dt
from .._core.checks import is_array, normalize_axis
from .._core.namespace import namespace as _xp
from .array_likes import _arr, _device_of
from .._core.dtypes import kind as dkind

__all__ = ["partition", "argpartition", "select", "choose", "piecewise", "put", "place",
           "putmask", "copyto", "insert", "delete", "append", "resize", "trim_zeros",
           "extract", "compress", "lexsort", "sort_complex"]


def _kth(kth: Any, n: int, fname: str, size: int = 1) -> None:
    """``kth`` must be integers inside the axis (NumPy checks nothing on an empty array)."""
    ks = np.atleast_1d(np.asarray(kth.to_numpy() if is_array(kth) else kth))
    if dkind(ks.dtype) not in "iu":
        raise TypeError(f"{fname}: kth must be integers; got {ks.dtype}")
    if size and ks.size and (ks.min() < -n or ks.max() >= n):
        raise ValueError(f"{fname}: kth(={ks.tolist()}) out of bounds ({n})")


def _sort_axis(a: Any, axis: Any, fname: str) -> tuple[Any, int]:
    x = _arr(a)
    if axis is None:
        return _xp().reshape(x, (-1,)), 0
    if x.ndim == 0:
        raise ValueError(f"{fname}: axis {axis} is out of bounds for a 0-d array")
    return x, normalize_axis(axis, x.ndim, fname)


def partition(a: Any, kth: Any, axis: int | None = -1, kind: str = "introselect",
              order: Any = None) -> Any:
    """A copy of ``a`` with the element at ``kth`` where sorting would put it, smaller ones
    before and larger ones after (NumPy's ``partition``).

    Parameters
    ----------
    a : array_like
        Input.
    kth : int or sequence of int
        Positions to place.
    axis : int or None, optional
        The axis (None: the flattened array).
    kind : {'introselect'}, optional
        Accepted for NumPy compatibility.
    order : None
        Structured dtypes do not exist on a device.

    Returns
    -------
    Array
        A partitioned copy (fully sorted along ``axis``: a valid partition).

    Raises
    ------
    ValueError
        When ``kth`` is out of bounds or ``order`` is given.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> p = np.partition([3, 4, 2, 1], 2)
    >>> print(int(p[2]), sorted(numpy.asarray(p[:2]).tolist()))
    3 [1, 2]
    """
    if order is not None:
        raise ValueError("partition: order= needs a structured dtype, which clnp has not")
    x, ax = _sort_axis(a, axis, "partition")
    _kth(kth, x.shape[ax], "partition", x.size)
    return _xp().sort(x, axis=ax)


def argpartition(a: Any, kth: Any, axis: int | None = -1, kind: str = "introselect",
                 order: Any = None) -> Any:
    """Indices that partition ``a`` around ``kth`` (NumPy's ``argpartition``).

    Parameters
    ----------
    a : array_like
        Input.
    kth : int or sequence of int
        Positions to place.
    axis : int or None, optional
        The axis (None: the flattened array).
    kind : {'introselect'}, optional
        Accepted for NumPy compatibility.
    order : None
        Structured dtypes do not exist on a device.

    Returns
    -------
    Array
        int64 indices (a stable argsort along ``axis``: a valid partition).

    Raises
    ------
    ValueError
        When ``kth`` is out of bounds or ``order`` is given.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> x = np.asarray([3, 4, 2, 1])
    >>> print(int(x[np.argpartition(x, 1)][1]))
    2
    """
    if order is not None:
        raise ValueError("argpartition: order= needs a structured dtype, which clnp has not")
    x, ax = _sort_axis(a, axis, "argpartition")
    _kth(kth, x.shape[ax], "argpartition", x.size)
    return _xp().argsort(x, axis=ax, stable=True)


def _weak_kind(v: Any) -> Any:
    """``v``, or for a Python scalar a zero of its type: it promotes the same way, and a value
    out of the other operands' range is no error (NumPy's ``result_type`` looks at kinds)."""
    return type(v)(0) if type(v) in (bool, int, float, complex) else v


def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Any:
    """Elements from ``choicelist`` where the first true condition of ``condlist`` holds
    (NumPy's ``select``).

    Parameters
    ----------
    condlist : sequence of bool array_like
        Conditions, checked in order.
    choicelist : sequence of array_like
        One choice per condition.
    default : scalar or array_like, optional
        Where no condition holds.

    Returns
    -------
    Array
        Of the broadcast shape and the common dtype of choices and default.

    Raises
    ------
    ValueError
        When the lists' lengths differ or are empty.
    TypeError
        When a condition is not boolean.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> x = np.arange(6)
    >>> print(numpy.asarray(np.select([x < 3, x > 3], [x, x ** 2], 42)))
    [ 0  1  2 42 16 25]
    """
    xp = _xp()
    for seq, what in ((condlist, "condlist"), (choicelist, "choicelist")):
        if not isinstance(seq, (list, tuple)) and not is_array(seq) and \
                not isinstance(seq, np.ndarray):
            raise TypeError(f"select: {what} must be a list of arrays; got "
                            f"{type(seq).__name__}")
    if len(condlist) != len(choicelist):
        raise ValueError(f"select: list of cases must be same length as list of conditions; "
                         f"got {len(condlist)} and {len(choicelist)}")
    if len(condlist) == 0:
        raise ValueError("select: select with an empty condition list is not possible")
    dev = _device_of(*condlist, *choicelist, default)
    conds = [_arr(c, dev) for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype != dt.bool_:
            raise TypeError(f"select: invalid entry {i} in condlist: should be boolean "
                            f"ndarray; got {c.dtype}")
    choices = [c if is_array(c) else (c if np.ndim(c) == 0 and not isinstance(c, np.ndarray)
                                      else _arr(c, dev)) for c in choicelist]
    d0 = default if is_array(default) or np.ndim(default) == 0 else _arr(default, dev)
    # as NumPy's result_type, a Python scalar promotes by its kind, whatever its value
    ops = [_weak_kind(c) for c in choices] + [_weak_kind(d0)]
    if all(type(v) in (bool, int, float, complex) for v in ops):
        # Python scalars alone take NumPy's default dtypes (the device's where it lacks one)
        rdt = np.result_type(*ops)
        d = dev if dev is not None else conds[0].device
        if not d.supports(rdt):
            rdt = d.default_float if rdt.kind == "f" else d.default_complex
    else:
        rdt = xp.result_type(*ops)
    if is_array(d0):
        out = xp.astype(d0, rdt)
    else:
        # NumPy fills with the default cast unsafely (-1 into uint8 is 255)
        with np.errstate(all="ignore"):
            fill = np.asarray(d0).astype(rdt)
        out = xp.asarray(fill, device=dev)
    for i, c, v in zip(range(len(conds) - 1, -1, -1), reversed(conds), reversed(choices)):
        # NumPy copies each choice in under same_kind casting, a Python scalar as the array
        # NumPy makes of it (an int as int64: refused into uint8)
        src = v.dtype if is_array(v) else np.asarray(v).dtype
        if not np.can_cast(src, rdt, "same_kind"):
            raise TypeError(f"select: choice {i}: cannot cast array data from {src!r} to "
                            f"{rdt!r} according to the rule 'same_kind'")
        v = xp.astype(v, rdt) if is_array(v) else xp.asarray(np.asarray(v).astype(rdt),
                                                              device=dev)
        out = xp.where(c, v, out)
    shape = xp.broadcast_shapes(*[c.shape for c in conds],
                                *[getattr(c, "shape", ()) for c in choices],
                                getattr(d0, "shape", ()))
    return xp.broadcast_to(out, shape) if out.shape != shape else out


def choose(a: Any, choices: Sequence[Any], out: Any = None, mode: str = "raise") -> Any:
    """Build an array from an index array and choices (NumPy's ``choose``).

    Parameters
    ----------
    a : array_like of int
        Which choice each element takes.
    choices : sequence of array_like
        Broadcast with ``a``.
    out : Array, optional
        Where to write the result.
    mode : {'raise', 'wrap', 'clip'}, optional
        Out-of-range indices raise, wrap around, or clip.

    Returns
    -------
    Array
        The chosen elements.

    Raises
    ------
    ValueError
        When an index is out of range with mode 'raise', or mode is unknown.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> choices = [[0, 1, 2, 3], [10, 11, 12, 13], [20, 21, 22, 23]]
    >>> print(numpy.asarray(np.choose([2, 0, 1, 0], choices)))
    [20  1 12  3]
    """
    from .array_likes import _finish
    from .._core.prims import in_transformation
    xp = _xp()
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"choose: mode must be 'raise', 'wrap' or 'clip'; got {mode!r}")
    dev = _device_of(a, *choices)
    idx = _arr(a, dev)
    if dkind(idx.dtype) not in "iu":
        raise TypeError(f"choose: a must be integers; got {idx.dtype}")
    n = len(choices)
    if n == 0:
        raise ValueError("choose: choices must not be empty")
    cs = [_arr(c, dev) for c in choices]
    rdt = xp.result_type(*cs)
    bs = xp.broadcast_arrays(idx, *[xp.astype(c, rdt) for c in cs])
    idx, cs = xp.astype(bs[0], dt.int64), bs[1:]
    if mode == "wrap":
        idx = idx % n
    elif mode == "clip":
        idx = xp.clip(idx, 0, n - 1)
    elif not in_transformation() and idx.size and bool(xp.any((idx < 0) | (idx >= n))):
        raise ValueError("choose: invalid entry in choice array")
    stacked = xp.stack(cs)
    res = xp.take_along_axis(stacked, xp.expand_dims(idx, axis=0), axis=0)[0]
    return _finish(res, out, "choose")


def piecewise(x: Any, condlist: Any, funclist: Sequence[Any], *args: Any, **kw: Any) -> Any:
    """Evaluate a piecewise-defined function (NumPy's ``piecewise``).

    Parameters
    ----------
    x : array_like
        The domain.
    condlist : list of bool arrays or bool scalars
        One condition per piece; with ``len(funclist) == len(condlist) + 1`` the extra
        function covers where no condition holds.
    funclist : list of callables or scalars
        A callable gets the 1-D array of ``x``'s selected elements (plus ``*args, **kw``)
        and returns values for them; a scalar is a constant.
    *args, **kw
        Passed to the callables.

    Returns
    -------
    Array
        Of ``x``'s shape and dtype; elements no condition covers are 0.

    Raises
    ------
    ValueError
        When the lengths of ``condlist`` and ``funclist`` do not match.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> x = np.linspace(-2.5, 2.5, 6)
    >>> print(numpy.asarray(np.piecewise(x, [x < 0, x >= 0], [-1, 1])))
    [-1. -1. -1.  1.  1.  1.]
    """
    xp = _xp()
    dev = _device_of(x, condlist)
    xa = _arr(x, dev)
    n2 = len(funclist)
    if isinstance(condlist, (bool, np.bool_)) or is_array(condlist) and condlist.ndim == 0 \
            or (not isinstance(condlist, list) and not is_array(condlist)
                and np.ndim(condlist) == 0):
        condlist = [condlist]
    if is_array(condlist) and condlist.ndim == xa.ndim + 1 or isinstance(condlist, list):
        conds = [xp.broadcast_to(_arr(c, dev), xa.shape) if (is_array(c) or np.ndim(c) == 0)
                 else _arr(c, dev) for c in condlist]
    else:
        conds = [_arr(condlist, dev)]
    conds = [xp.astype(c, dt.bool_) if c.dtype != dt.bool_ else c for c in conds]
    n = len(conds)
    if n == n2 - 1:
        anyc = conds[0]
        for c in conds[1:]:
            anyc = anyc | c
        conds.append(~anyc)
        n += 1
    elif n != n2:
        raise ValueError(f"piecewise: with {n} condition(s), either {n} or {n + 1} functions "
                         f"are expected; got {n2}")
    y = xp.zeros(xa.shape, dtype=xa.dtype, device=xa.device)
    for c, f in zip(conds, funclist):
        c = xp.broadcast_to(c, xa.shape)
        if not callable(f):
            y = xp.where(c, xp.asarray(f, dtype=xa.dtype, device=xa.device), y)
            continue
        if xa.ndim == 0:
            if bool(c):
                y = xp.astype(_arr(f(xa, *args, **kw), xa.device), xa.dtype)
            continue
        vals = f(xa[c], *args, **kw)
        if np.ndim(vals) == 0 and not is_array(vals):
            y = xp.where(c, xp.asarray(vals, dtype=xa.dtype, device=xa.device), y)
        else:
            y[c] = xp.astype(_arr(vals, xa.device), xa.dtype)
    return y


def _cycled(v: Any, n: int, dtype: Any, device: Any) -> Any:
    xp = _xp()
    v = xp.reshape(_arr(v, device, None if is_array(v) else dtype), (-1,))
    v = xp.astype(v, dtype) if v.dtype != dtype else v
    if v.size == n:
        return v
    return xp.take(v, xp.arange(n, dtype=dt.int64, device=device) % v.size)


def _need_array(a: Any, fname: str, what: str = "a") -> None:
    if not is_array(a):
        raise TypeError(f"{fname}: {what} must be a clnp array (it is modified in place); "
                        f"got {type(a).__name__}")


def _mask_and_values(a: Any, mask: Any, values: Any, fname: str, what: str) -> tuple[Any, Any]:
    """``mask`` and ``values`` of place/putmask as device arrays, checked before anything
    runs: the mask's size, and NumPy's rule for array values (a 'safe' cast to ``a``'s
    dtype; Python scalars and lists take ``a``'s dtype)."""
    m = _arr(mask, a.device)
    if m.size != a.size:
        raise ValueError(f"{fname}: mask and data must be the same size; got mask of shape "
                         f"{tuple(m.shape)} and {what} of shape {tuple(a.shape)}")
    if (is_array(values) or isinstance(values, np.ndarray)) and \
            not np.can_cast(values.dtype, a.dtype, "safe"):
        raise TypeError(f"{fname}: cannot cast values of dtype {values.dtype} to {what}'s "
                        f"dtype {a.dtype} according to the rule 'safe'")
    v = _arr(values, a.device, None if is_array(values) else a.dtype)
    return m, v


def put(a: Any, ind: Any, v: Any, mode: str = "raise") -> None:
    """Replace elements of ``a`` at flat indices (NumPy's ``put``).

    Parameters
    ----------
    a : Array
        The destination, modified in place.
    ind : array_like of int
        Flat indices into ``a``.
    v : array_like
        Values, repeated cyclically to the length of ``ind``.
    mode : {'raise', 'wrap', 'clip'}, optional
        What out-of-range indices do.

    Returns
    -------
    None
        ``a`` is modified.

    Raises
    ------
    IndexError
        When an index is out of range with mode 'raise'.

    Notes
    -----
    Repeated indices keep the last of their values, as in NumPy, on every device.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> a = np.arange(5)
    >>> np.put(a, [0, 2], [-44, -55])
    >>> print(numpy.asarray(a))
    [-44   1 -55   3   4]
    """
    from .index_helpers import unravel_index
    from .._core.prims import in_transformation
    xp = _xp()
    _need_array(a, "put")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"put: mode must be 'raise', 'wrap' or 'clip'; got {mode!r}")
    # the values first: junk must fail before the indices are checked on the device
    vals = xp.reshape(_arr(v, a.device, None if is_array(v) else a.dtype), (-1,))
    idx = xp.reshape(_arr(ind, a.device), (-1,))
    if idx.size == 0:
        return
    if dkind(idx.dtype) not in "iu":
        raise TypeError(f"put: indices must be integers; got {idx.dtype}")
    idx = xp.astype(idx, dt.int64)
    n = a.size
    if n == 0:
        raise IndexError("put: cannot replace in an empty array")
    if mode == "wrap":
        idx = idx % n
    elif mode == "clip":
        idx = xp.clip(idx, 0, n - 1)
    else:
        if not in_transformation() and bool(xp.any((idx < -n) | (idx >= n))):
            raise IndexError(f"put: index out of range for array of size {n}")
        idx = xp.where(idx < 0, idx + n, idx)
    if vals.size == 0:
        return
    a[unravel_index(idx, a.shape)] = _cycled(vals, idx.size, a.dtype, a.device)


def place(arr: Any, mask: Any, vals: Any) -> None:
    """Put ``vals`` into ``arr`` where ``mask`` is true, in order, repeating ``vals``
    (NumPy's ``place``).

    Parameters
    ----------
    arr : Array
        The destination, modified in place.
    mask : array_like of bool
        Of ``arr``'s size.
    vals : array_like
        Values; the first N are used for N true elements, repeated if fewer.

    Returns
    -------
    None
        ``arr`` is modified (the number of true elements is read from the device).

    Raises
    ------
    ValueError
        When ``vals`` is empty but ``mask`` selects something, or the sizes differ.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> a = np.arange(6)
    >>> np.place(a, a > 2, [44, 55])
    >>> print(numpy.asarray(a))
    [ 0  1  2 44 55 44]
    """
    xp = _xp()
    _need_array(arr, "place", "arr")
    m, v = _mask_and_values(arr, mask, vals, "place", "arr")
    m = xp.reshape(xp.astype(m, dt.bool_), arr.shape)
    count = int(xp.count_nonzero(m))
    if count == 0:
        return
    v = xp.reshape(v, (-1,))
    if v.size == 0:
        raise ValueError("place: cannot insert from an empty array!")
    arr[m] = _cycled(v, count, arr.dtype, arr.device)


def putmask(a: Any, mask: Any, values: Any) -> None:
    """Set ``a.flat[n] = values[n % len(values)]`` where ``mask.flat[n]`` (NumPy's
    ``putmask``).

    Parameters
    ----------
    a : Array
        The destination, modified in place.
    mask : array_like of bool
        Of ``a``'s shape.
    values : array_like
        Repeated to ``a``'s size, in flat order.

    Returns
    -------
    None
        ``a`` is modified (one ``where`` kernel, no host read).

    Raises
    ------
    ValueError
        When ``mask`` and ``a`` differ in size.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> a = np.arange(5)
    >>> np.putmask(a, a > 1, [-33, -44])
    >>> print(numpy.asarray(a))
    [  0   1 -33 -44 -33]
    """
    xp = _xp()
    _need_array(a, "putmask")
    m, v = _mask_and_values(a, mask, values, "putmask", "a")
    v = xp.reshape(v, (-1,))
    if v.size == 0 or a.size == 0:
        return
    full = xp.reshape(_cycled(v, a.size, a.dtype, a.device), a.shape)
    a[...] = xp.where(xp.reshape(xp.astype(m, dt.bool_), a.shape), full, a)


def copyto(dst: Any, src: Any, casting: str = "same_kind", where: Any = True) -> None:
    """Copy ``src`` into ``dst``, broadcasting, where ``where`` holds (NumPy's ``copyto``).

    Parameters
    ----------
    dst : Array
        The destination, modified in place.
    src : array_like
        Broadcast to ``dst``'s shape.
    casting : {'no', 'equiv', 'safe', 'same_kind', 'unsafe'}, optional
        Which casts are allowed (NumPy's rules).
    where : bool array_like, optional
        Which elements to copy.

    Returns
    -------
    None
        ``dst`` is modified.

    Raises
    ------
    TypeError
        When the cast is not allowed by ``casting``.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> a = np.zeros(3)
    >>> np.copyto(a, [1.0, 2.0, 3.0], where=[True, False, True])
    >>> print(numpy.asarray(a))
    [1. 0. 3.]
    """
    xp = _xp()
    _need_array(dst, "copyto", "dst")
    if is_array(src) or isinstance(src, np.ndarray):
        s = _arr(src, dst.device)
        if not np.can_cast(s.dtype, dst.dtype, casting=casting):
            raise TypeError(f"copyto: cannot cast array data from {s.dtype} to {dst.dtype} "
                            f"according to the rule {casting!r}")
    else:
        s = _arr(src, dst.device)
        probe = np.asarray(src)
        if probe.ndim and not np.can_cast(probe.dtype, dst.dtype, casting=casting):
            raise TypeError(f"copyto: cannot cast array data from {probe.dtype} to "
                            f"{dst.dtype} according to the rule {casting!r}")
    try:                                   # the shapes, before the cast runs a kernel
        ok = xp.broadcast_shapes(s.shape, dst.shape) == tuple(dst.shape)
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"copyto: could not broadcast src of shape {tuple(s.shape)} into dst "
                         f"of shape {tuple(dst.shape)}")
    s = xp.broadcast_to(xp.astype(s, dst.dtype), dst.shape)
    if where is True:
        dst[...] = s
        return
    w = xp.broadcast_to(_arr(where, dst.device), dst.shape)
    dst[...] = xp.where(w, s, dst)


def _positions(obj: Any, n: int, fname: str) -> tuple[np.ndarray, bool]:
    """Host int64 positions from ``obj`` (slice, int, sequence, bool mask, clnp array),
    and whether ``obj`` was a scalar."""
    if isinstance(obj, slice):
        return np.arange(*obj.indices(n), dtype=np.int64), False
    host = np.asarray(obj.to_numpy() if is_array(obj) else obj)
    if host.dtype == bool:
        if fname == "insert":
            raise IndexError("insert: boolean indices are not supported; use "
                             "np.nonzero(mask)[0] instead")
        if host.shape != (n,):
            raise ValueError(f"{fname}: boolean array argument obj to delete must be one "
                             f"dimensional and match the axis length of {n}")
        return np.nonzero(host)[0].astype(np.int64), False
    if host.size == 0:
        return host.astype(np.int64).reshape(-1), False
    if dkind(host.dtype) not in "iu":
        raise IndexError(f"{fname}: arrays used as indices must be of integer (or boolean) "
                         f"type; got {host.dtype}")
    if host.ndim > 1:
        raise ValueError(f"{fname}: index array argument obj must be one dimensional or "
                         f"scalar; got shape {host.shape}")
    return host.astype(np.int64), host.ndim == 0


def _axis_of(arr: Any, axis: Any, fname: str) -> tuple[Any, int]:
    xp = _xp()
    a = _arr(arr)
    if axis is None:
        return xp.reshape(a, (-1,)), 0
    if a.ndim == 0:
        raise ValueError(f"{fname}: axis {axis} is out of bounds for a 0-d array")
    return a, normalize_axis(axis, a.ndim, fname)


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Any:
    """Insert ``values`` before the positions ``obj`` along ``axis`` (NumPy's ``insert``).

    Parameters
    ----------
    arr : array_like
        Input (flattened when ``axis`` is None).
    obj : int, slice or sequence of int
        Positions before which to insert.
    values : array_like
        Cast to ``arr``'s dtype and broadcast as in NumPy.
    axis : int or None, optional
        The axis.

    Returns
    -------
    Array
        A new array (one concatenation and one gather).

    Raises
    ------
    IndexError
        When a position is out of bounds.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.insert([1, 2, 3], [1, 1], [8, 9])))
    [1 8 9 2 3]
    >>> print(numpy.asarray(np.insert(np.zeros((2, 2), dtype=int), 1, 5, axis=1)))
    [[0 5 0]
     [0 5 0]]
    """
    xp = _xp()
    a, ax = _axis_of(arr, axis, "insert")
    n = a.shape[ax]
    pos, scalar = _positions(obj, n, "insert")
    vals = _arr(values, a.device, None if is_array(values) else a.dtype)
    vals = xp.astype(vals, a.dtype) if vals.dtype != a.dtype else vals
    while vals.ndim < a.ndim:
        vals = xp.expand_dims(vals, axis=0)
    if pos.size == 1:
        p = int(pos.reshape(-1)[0])
        if p < -n or p > n:
            raise IndexError(f"insert: index {p} is out of bounds for axis {ax} with size {n}")
        p = p + n if p < 0 else p
        if scalar:
            vals = xp.moveaxis(vals, 0, ax)
        shape = list(a.shape)
        shape[ax] = vals.shape[ax]
        vals = xp.broadcast_to(vals, tuple(shape))
        lo = [slice(None)] * a.ndim
        hi = [slice(None)] * a.ndim
        lo[ax], hi[ax] = slice(None, p), slice(p, None)
        return xp.concat([a[tuple(lo)], vals, a[tuple(hi)]], axis=ax)
    if ((pos < -n) | (pos > n)).any():
        bad = int(pos[(pos < -n) | (pos > n)][0])
        raise IndexError(f"insert: index {bad} is out of bounds for axis {ax} with size {n}")
    pos = np.where(pos < 0, pos + n, pos)
    k = pos.size
    order = np.argsort(pos, kind="stable")
    newpos = pos.copy()
    newpos[order] += np.arange(k)
    total = n + k
    old = np.ones(total, bool)
    old[newpos] = False
    src = np.empty(total, np.int64)
    src[old] = np.arange(n)
    src[newpos] = n + np.arange(k)
    shape = list(a.shape)
    shape[ax] = k
    vals = xp.broadcast_to(vals, tuple(shape))
    both = xp.concat([a, vals], axis=ax)
    return xp.take(both, xp.asarray(src, device=a.device), axis=ax)


def delete(arr: Any, obj: Any, axis: int | None = None) -> Any:
    """A new array without the entries ``obj`` along ``axis`` (NumPy's ``delete``).

    Parameters
    ----------
    arr : array_like
        Input (flattened when ``axis`` is None).
    obj : int, slice, sequence of int or bool mask
        What to remove.
    axis : int or None, optional
        The axis.

    Returns
    -------
    Array
        A new array (one gather).

    Raises
    ------
    IndexError
        When an index is out of bounds.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.delete(np.arange(12).reshape(3, 4), [0, 2], axis=1)))
    [[ 1  3]
     [ 5  7]
     [ 9 11]]
    """
    xp = _xp()
    a, ax = _axis_of(arr, axis, "delete")
    n = a.shape[ax]
    pos, _ = _positions(obj, n, "delete")
    pos = pos.reshape(-1)
    if ((pos < -n) | (pos >= n)).any():
        bad = int(pos[(pos < -n) | (pos >= n)][0])
        raise IndexError(f"delete: index {bad} is out of bounds for axis {ax} with size {n}")
    keep = np.ones(n, bool)
    keep[pos] = False
    if keep.all():
        return xp.asarray(a, copy=True)
    return xp.take(a, xp.asarray(np.nonzero(keep)[0].astype(np.int64), device=a.device),
                   axis=ax)


def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    """``values`` appended to the end of ``arr`` (NumPy's ``append``).

    Parameters
    ----------
    arr, values : array_like
        Flattened when ``axis`` is None, else of the same number of dimensions.
    axis : int or None, optional
        The axis.

    Returns
    -------
    Array
        A new array.

    Raises
    ------
    ValueError
        When the shapes do not fit along ``axis``.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.append([1, 2, 3], [[4, 5, 6], [7, 8, 9]])))
    [1 2 3 4 5 6 7 8 9]
    """
    xp = _xp()
    dev = _device_of(arr, values)
    a, v = _arr(arr, dev), _arr(values, dev)
    if axis is None:
        a, v = xp.reshape(a, (-1,)), xp.reshape(v, (-1,))
        axis = 0
    else:
        axis = normalize_axis(axis, a.ndim, "append")     # before the casts build kernels
    if a.ndim != v.ndim:
        raise ValueError(f"append: all the input arrays must have same number of dimensions, "
                         f"but arr has {a.ndim} and values has {v.ndim}")
    d = xp.result_type(a, v)
    return xp.concat([xp.astype(a, d), xp.astype(v, d)], axis=axis)


def resize(a: Any, new_shape: Any) -> Any:
    """A new array of ``new_shape`` filled with repeated copies of ``a`` (NumPy's
    ``resize``).

    Parameters
    ----------
    a : array_like
        Input, read in flat order.
    new_shape : int or tuple of int
        The result's shape.

    Returns
    -------
    Array
        A new array (zeros when ``a`` is empty).

    Raises
    ------
    ValueError
        When a dimension is negative.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.resize([[0, 1], [2, 3]], (2, 3))))
    [[0 1 2]
     [3 0 1]]
    """
    xp = _xp()
    x = _arr(a)
    shape = (operator.index(new_shape),) if isinstance(new_shape, (int, np.integer)) \
        else tuple(operator.index(s) for s in new_shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"resize: all elements of `new_shape` must be non-negative; got "
                         f"{shape}")
    total = math.prod(shape)
    if x.size == 0 or total == 0:
        return xp.zeros(shape, dtype=x.dtype, device=x.device)
    flat = xp.reshape(x, (-1,))
    reps = -(-total // x.size)
    if reps > 1:
        flat = xp.tile(flat, (reps,))
    return xp.reshape(flat[:total], shape)


def trim_zeros(filt: Any, trim: str = "fb", axis: Any = None) -> Any:
    """``filt`` without its leading and/or trailing zeros (NumPy's ``trim_zeros``).

    Parameters
    ----------
    filt : array_like
        Input.
    trim : str, optional
        'f' trims the front, 'b' the back, 'fb' both.
    axis : int or sequence of int, optional
        Axes to trim (default all): a slice along an axis is trimmed when it is all zeros.

    Returns
    -------
    Array
        A view of ``filt`` (the extent is read from the device).

    Raises
    ------
    ValueError
        When ``trim`` has other letters.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.trim_zeros([0, 0, 1, 2, 0, 3, 0])))
    [1 2 0 3]
    """
    xp = _xp()
    t = trim.lower()
    if not set(t) <= {"f", "b"}:
        raise ValueError(f"trim_zeros: unexpected character(s) in `trim`: {trim!r}")
    x = _arr(filt)
    if x.ndim == 0:
        return x
    axes = range(x.ndim) if axis is None else \
        [normalize_axis(ax, x.ndim, "trim_zeros") for ax in np.atleast_1d(axis)]
    nz = x != 0
    key = [slice(None)] * x.ndim
    for ax in axes:
        others = tuple(i for i in range(x.ndim) if i != ax)
        line = np.asarray((xp.any(nz, axis=others) if others else nz).to_numpy())
        where = np.nonzero(line)[0]
        if where.size == 0:
            key[ax] = slice(0, 0)
            continue
        start = int(where[0]) if "f" in t else 0
        stop = int(where[-1]) + 1 if "b" in t else x.shape[ax]
        key[ax] = slice(start, stop)
    return x[tuple(key)]


def extract(condition: Any, arr: Any) -> Any:
    """The elements of ``arr`` (flattened) where ``condition`` (flattened) is nonzero
    (NumPy's ``extract``).

    Parameters
    ----------
    condition : array_like
        Nonzero or True where to take.
    arr : array_like
        Values.

    Returns
    -------
    Array
        1-D (its length is read from the device).

    Examples
    --------
    >>> import numpy, clnp as np
    >>> a = np.arange(12).reshape(3, 4)
    >>> print(numpy.asarray(np.extract(a % 3 == 0, a)))
    [0 3 6 9]
    """
    xp = _xp()
    dev = _device_of(condition, arr)
    c, a = _arr(condition, dev), _arr(arr, dev)      # both converted before any kernel
    (idx,) = xp.nonzero(xp.reshape(c, (-1,)))
    return xp.take(xp.reshape(a, (-1,)), idx)


def compress(condition: Any, a: Any, axis: int | None = None, out: Any = None) -> Any:
    """Slices of ``a`` along ``axis`` where ``condition`` is true (NumPy's ``compress``).

    Parameters
    ----------
    condition : 1-D array_like of bool
        May be shorter than the axis (the rest is dropped).
    a : array_like
        Input (flattened when ``axis`` is None).
    axis : int or None, optional
        The axis.
    out : Array, optional
        Where to write the result.

    Returns
    -------
    Array
        The selected slices.

    Raises
    ------
    ValueError
        When ``condition`` is not 1-D.
    IndexError
        When ``condition`` is longer than the axis and true beyond it.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> a = np.asarray([[1, 2], [3, 4], [5, 6]])
    >>> print(numpy.asarray(np.compress([False, True, True], a, axis=0)))
    [[3 4]
     [5 6]]
    """
    from .array_likes import _finish
    xp = _xp()
    x, ax = _axis_of(a, axis, "compress")
    c = _arr(condition, x.device)
    if c.ndim != 1:
        raise ValueError(f"compress: condition must be a 1-d array; got shape {c.shape}")
    (idx,) = xp.nonzero(c)
    n = x.shape[ax]
    if idx.size and int(idx[-1]) >= n:
        raise IndexError(f"compress: index {int(idx[-1])} is out of bounds for axis {ax} "
                         f"with size {n}")
    return _finish(xp.take(x, idx, axis=ax), out, "compress")


def lexsort(keys: Any, axis: int = -1) -> Any:
    """Indices that sort by several keys, the last key primary (NumPy's ``lexsort``).

    Parameters
    ----------
    keys : sequence of array_like, or 2-D array_like
        The keys (rows of a 2-D array), all of one shape.
    axis : int, optional
        The axis to sort along.

    Returns
    -------
    Array
        int64 indices (stable argsorts, one per key).

    Raises
    ------
    TypeError
        When no key is given.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> surnames = [1, 2, 1, 0]
    >>> first = [4, 3, 2, 1]
    >>> print(numpy.asarray(np.lexsort((first, surnames))))
    [3 2 0 1]
    """
    xp = _xp()
    if is_array(keys) or isinstance(keys, np.ndarray):
        k_all = _arr(keys)
        if k_all.ndim == 0:
            raise TypeError("lexsort: need sequence of keys with len > 0")
        ks = [k_all[i] for i in range(k_all.shape[0])]
    else:
        dev = _device_of(*keys)
        ks = [_arr(k, dev) for k in keys]
    if not ks:
        raise TypeError("lexsort: need sequence of keys with len > 0")
    shape = ks[0].shape
    if any(k.shape != shape for k in ks):
        raise ValueError("lexsort: all keys need to be the same shape")
    if len(shape) == 0:
        return xp.zeros((), dtype=dt.int64, device=ks[0].device)
    ax = normalize_axis(axis, len(shape), "lexsort")
    order = xp.argsort(ks[0], axis=ax, stable=True)
    for k in ks[1:]:
        sub = xp.take_along_axis(k, order, axis=ax)
        order = xp.take_along_axis(order, xp.argsort(sub, axis=ax, stable=True), axis=ax)
    return order


def sort_complex(a: Any) -> Any:
    """``a`` sorted by real part, then imaginary part, as complex (NumPy's
    ``sort_complex``).

    Parameters
    ----------
    a : array_like
        Input (sorted along the last axis).

    Returns
    -------
    Array
        complex64 for 8/16-bit integers, else complex128 (as NumPy: float32 too).

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.sort_complex([5, 3, 6, 2, 1])))
    [1.+0.j 2.+0.j 3.+0.j 5.+0.j 6.+0.j]
    """
    xp = _xp()
    x = _arr(a)
    if dkind(x.dtype) != "c":
        small = dkind(x.dtype) in "iu" and x.dtype.itemsize <= 2      # NumPy's 'bhBH'
        cd = dt.complex64 if small else dt.complex128
        if not x.device.supports(cd):
            cd = dt.complex64
        x = xp.astype(x, cd)
    return xp.sort(x, axis=-1)
