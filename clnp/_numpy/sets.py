"""NumPy's 1-D set functions on the device: ``intersect1d``, ``union1d``, ``setdiff1d``,
``setxor1d`` and ``ediff1d``.

They follow NumPy's algorithms (sort, compare neighbours, select) with clnp's sort, unique
and isin kernels. The result's length depends on the data, so each reads one count back from
the device (the boolean selection), as ``unique`` does.
"""
from __future__ import annotations

from typing import Any

from .._core.namespace import namespace as _xp

from .array_likes import _arr, _device_of

__all__ = ["intersect1d", "union1d", "setdiff1d", "setxor1d", "ediff1d"]


def _flat(a: Any, dev: Any) -> Any:
    return _xp().reshape(_arr(a, dev), (-1,))


def _pair(ar1: Any, ar2: Any) -> tuple[Any, Any]:
    dev = _device_of(ar1, ar2)
    xp = _xp()
    a, b = _flat(ar1, dev), _flat(ar2, dev)
    d = xp.result_type(a, b)
    return xp.astype(a, d), xp.astype(b, d)


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False,
                return_indices: bool = False) -> Any:
    """The sorted unique values in both arrays (NumPy's ``intersect1d``).

    Parameters
    ----------
    ar1, ar2 : array_like
        Flattened if not 1-D.
    assume_unique : bool, optional
        Both inputs are already unique (skips the ``unique`` step).
    return_indices : bool, optional
        Also return the indices into ``ar1`` and ``ar2`` of the common values (their first
        occurrences).

    Returns
    -------
    Array or tuple of Array
        The intersection, and with ``return_indices`` the two index arrays.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> v, i, j = np.intersect1d([1, 3, 4, 3], [3, 1, 2, 1], return_indices=True)
    >>> print(numpy.asarray(v), numpy.asarray(i), numpy.asarray(j))
    [1 3] [0 1] [1 0]
    """
    xp = _xp()
    a, b = _pair(ar1, ar2)
    if not assume_unique:
        if return_indices:
            a, ind1 = xp.unique(a, return_index=True)
            b, ind2 = xp.unique(b, return_index=True)
        else:
            a, b = xp.unique(a), xp.unique(b)
    aux = xp.concat([a, b])
    if return_indices:
        order = xp.argsort(aux, stable=True)
        aux = xp.take(aux, order)
    else:
        aux = xp.sort(aux)
    mask = aux[1:] == aux[:-1]
    common = aux[:-1][mask]
    if not return_indices:
        return common
    i1 = order[:-1][mask]
    i2 = order[1:][mask] - a.shape[0]
    if not assume_unique:
        i1, i2 = xp.take(ind1, i1), xp.take(ind2, i2)
    return common, i1, i2


def union1d(ar1: Any, ar2: Any) -> Any:
    """The sorted unique values in either array (NumPy's ``union1d``).

    Parameters
    ----------
    ar1, ar2 : array_like
        Flattened if not 1-D.

    Returns
    -------
    Array
        The union.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.union1d([-1, 0, 1], [-2, 0, 2])))
    [-2 -1  0  1  2]
    """
    a, b = _pair(ar1, ar2)
    return _xp().unique(_xp().concat([a, b]))


def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False) -> Any:
    """The unique values of ``ar1`` not in ``ar2`` (NumPy's ``setdiff1d``).

    Parameters
    ----------
    ar1, ar2 : array_like
        Flattened if not 1-D.
    assume_unique : bool, optional
        Both inputs are already unique (``ar1``'s order is then kept).

    Returns
    -------
    Array
        The difference, sorted unless ``assume_unique``.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.setdiff1d([1, 2, 3, 2, 4, 1], [3, 4, 5, 6])))
    [1 2]
    """
    xp = _xp()
    dev = _device_of(ar1, ar2)
    a, b = _flat(ar1, dev), _flat(ar2, dev)    # the result keeps ar1's dtype, as NumPy's
    if not assume_unique:
        a, b = xp.unique(a), xp.unique(b)
    return a[xp.isin(a, b, invert=True)]


def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False) -> Any:
    """The sorted unique values in exactly one of the arrays (NumPy's ``setxor1d``).

    Parameters
    ----------
    ar1, ar2 : array_like
        Flattened if not 1-D.
    assume_unique : bool, optional
        Both inputs are already unique.

    Returns
    -------
    Array
        The symmetric difference.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.setxor1d([1, 2, 3, 2, 4], [2, 3, 5, 7, 5])))
    [1 4 5 7]
    """
    xp = _xp()
    a, b = _pair(ar1, ar2)
    if not assume_unique:
        a, b = xp.unique(a), xp.unique(b)
    aux = xp.sort(xp.concat([a, b]))
    if aux.shape[0] == 0:
        return aux
    t = xp.asarray([True], device=aux.device)
    flag = xp.concat([t, aux[1:] != aux[:-1], t])
    return aux[flag[1:] & flag[:-1]]


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    """Differences between consecutive elements of the flattened array, with optional
    values before and after (NumPy's ``ediff1d``).

    Parameters
    ----------
    ary : array_like
        Flattened.
    to_end, to_begin : array_like, optional
        Appended / prepended (cast to ``ary``'s dtype, which must be safe).

    Returns
    -------
    Array
        The differences.

    Raises
    ------
    TypeError
        When ``to_begin`` or ``to_end`` cannot be cast safely to ``ary``'s dtype.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.ediff1d([1, 2, 4, 7, 0], to_begin=-99, to_end=[88, 99])))
    [-99   1   2   3  -7  88  99]
    """
    import numpy as np
    xp = _xp()
    dev = _device_of(ary, to_end, to_begin)
    a = _flat(ary, dev)
    parts = [a[1:] - a[:-1]]
    for pos, extra in (("to_begin", to_begin), ("to_end", to_end)):
        if extra is None:
            continue
        e = _flat(extra, dev)
        if not np.can_cast(e.dtype, a.dtype, casting="same_kind"):
            raise TypeError(f"ediff1d: dtype of `{pos}` must be compatible with input `ary` "
                            f"under the `same_kind` rule; got {e.dtype} for {a.dtype}")
        e = xp.astype(e, a.dtype)
        parts = [e] + parts if pos == "to_begin" else parts + [e]
    return xp.concat(parts) if len(parts) > 1 else parts[0]
