"""NumPy's shape and type queries: ``ndim``, ``shape``, ``size``, ``isscalar``,
``iscomplexobj``, ``isrealobj``.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core.checks import is_array, normalize_axis
from .._core.dtypes import kind as dkind

__all__ = ["ndim", "shape", "size", "isscalar", "iscomplexobj", "isrealobj"]


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
