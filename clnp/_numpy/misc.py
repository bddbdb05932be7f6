"""NumPy's layout and settings helpers: ``asfortranarray``, ``require``, ``einsum_path``,
``getbufsize``/``setbufsize`` and ``geterrcall``/``seterrcall``.

clnp arrays are strided views, so a Fortran-ordered array is a real layout here (a C copy of
the transpose, viewed transposed back). ``einsum_path`` only plans: it needs the operands'
shapes, never their values, so it asks NumPy's planner with stand-ins of those shapes (zero
strides, no memory) and returns NumPy's exact answer. The buffer size and error callback are
recorded like :func:`clnp.seterr`'s settings: device kernels have no ufunc buffers and never
call back on floating-point errors.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .._core.checks import is_array
from .._core.namespace import namespace as _xp
from .array_likes import _arr

__all__ = ["asfortranarray", "require", "einsum_path", "getbufsize", "setbufsize",
           "geterrcall", "seterrcall"]

_SETTINGS: dict[str, Any] = {"bufsize": 8192, "errcall": None}


def asfortranarray(a: Any, dtype: Any = None, *, like: Any = None) -> Any:
    """An array laid out in Fortran (column-major) order (NumPy's ``asfortranarray``).

    Parameters
    ----------
    a : array_like
        Input.
    dtype : dtype, optional
        Result dtype.
    like : None
        Accepted for NumPy compatibility.

    Returns
    -------
    Array
        ``a`` itself when it is already Fortran-contiguous (or has at most one dimension
        longer than 1), else a copy whose strides are column-major; at least 1-D, as in
        NumPy.

    Examples
    --------
    >>> import clnp as np
    >>> f = np.asfortranarray(np.ones((2, 3)))
    >>> tuple(s // f.itemsize for s in f.strides), np.isfortran(f)
    ((1, 2), True)
    """
    xp = _xp()
    x = _arr(a, None, dtype)
    if x.ndim == 0:
        x = xp.reshape(x, (1,))     # NumPy: the result has at least one dimension
    if _is_f(x):
        return x
    rev = tuple(reversed(range(x.ndim)))
    return xp.permute_dims(xp.asarray(xp.permute_dims(x, rev), copy=True), rev)


def _is_f(x: Any) -> bool:
    acc = 1
    for n, s in zip(x.shape, x._strides):
        if n > 1 and s != acc:
            return False
        acc *= n
    return True


def require(a: Any, dtype: Any = None, requirements: Any = None, *, like: Any = None) -> Any:
    """An array meeting ``requirements`` (NumPy's ``require``).

    Parameters
    ----------
    a : array_like
        Input.
    dtype : dtype, optional
        Result dtype.
    requirements : str or sequence of str, optional
        'C'/'C_CONTIGUOUS', 'F'/'F_CONTIGUOUS', 'A'/'ALIGNED', 'W'/'WRITEABLE',
        'O'/'OWNDATA' (a copy), 'E'/'ENSUREARRAY'.
    like : None
        Accepted for NumPy compatibility.

    Returns
    -------
    Array
        ``a`` or a copy that meets the requirements (device arrays are always aligned and
        writeable).

    Raises
    ------
    ValueError
        For both 'C' and 'F', or an unknown requirement.

    Examples
    --------
    >>> import clnp as np
    >>> x = np.ones((3, 4))[:, ::2]
    >>> np.require(x, requirements="C").flags["C_CONTIGUOUS"]
    True
    """
    xp = _xp()
    names = {"C": "C", "C_CONTIGUOUS": "C", "CONTIGUOUS": "C", "F": "F", "F_CONTIGUOUS": "F",
             "FORTRAN": "F", "A": "A", "ALIGNED": "A", "W": "W", "WRITEABLE": "W", "O": "O",
             "OWNDATA": "O", "E": "E", "ENSUREARRAY": "E"}
    reqs = [] if not requirements else [requirements] if isinstance(requirements, str) \
        else list(requirements)
    got = set()
    for r in reqs:
        key = names.get(str(r).upper())
        if key is None:
            raise ValueError(f"require: unknown requirement {r!r}")
        got.add(key)
    if {"C", "F"} <= got:
        raise ValueError("require: cannot specify both 'C' and 'F' order")
    x = _arr(a, None, dtype)
    if "O" in got:
        x = xp.asarray(x, copy=True) if "F" not in got else x
    if "C" in got and not x.is_contiguous:
        x = xp.asarray(x, copy=True)
    if "F" in got:
        x = asfortranarray(x) if not ("O" in got and _is_f(x)) else \
            asfortranarray(xp.asarray(x, copy=True))
    return x


def einsum_path(subscripts: str, *operands: Any, optimize: Any = "greedy",
                einsum_call: bool = False) -> tuple[list[Any], str]:
    """The contraction order ``einsum`` would use, and a report (NumPy's ``einsum_path``).

    Parameters
    ----------
    subscripts : str
        Einstein summation subscripts.
    *operands : array_like
        The operands (only their shapes are used; device arrays are not read).
    optimize : {bool, 'greedy', 'optimal'} or list, optional
        The path strategy, or an explicit path.
    einsum_call : bool, optional
        NumPy-internal; accepted as NumPy does.

    Returns
    -------
    path : list
        ``['einsum_path', (i, j), ...]``.
    string : str
        NumPy's printable report.

    Examples
    --------
    >>> import clnp as np
    >>> a, b, c = np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5))
    >>> np.einsum_path("ij,jk,kl", a, b, c)[0]
    ['einsum_path', (1, 2), (0, 1)]
    """
    stand_ins = [np.broadcast_to(np.zeros((), dtype=o.dtype), o.shape) if is_array(o)
                 else o for o in operands]
    return np.einsum_path(subscripts, *stand_ins, optimize=optimize, einsum_call=einsum_call)


def getbufsize() -> int:
    """The recorded ufunc buffer size (NumPy's ``getbufsize``; no effect on device kernels).

    Returns
    -------
    int
        The size in elements (8192 unless :func:`setbufsize` changed it).

    Examples
    --------
    >>> import clnp as np
    >>> np.getbufsize()
    8192
    """
    return int(_SETTINGS["bufsize"])


def setbufsize(size: int) -> int:
    """Record the ufunc buffer size and return the previous one (NumPy's ``setbufsize``;
    device kernels have no such buffers).

    Parameters
    ----------
    size : int
        A positive size in elements.

    Returns
    -------
    int
        The previous size.

    Raises
    ------
    ValueError
        When ``size`` is not positive.

    Examples
    --------
    >>> import clnp as np
    >>> old = np.setbufsize(4096)
    >>> np.getbufsize(), np.setbufsize(old)
    (4096, 4096)
    """
    size = int(size)
    if size <= 0:
        raise ValueError(f"setbufsize: buffer size must be positive; got {size}")
    old = _SETTINGS["bufsize"]
    _SETTINGS["bufsize"] = size
    return int(old)


def geterrcall() -> Callable[..., Any] | Any:
    """The recorded floating-point error callback (NumPy's ``geterrcall``).

    Returns
    -------
    callable or None
        What :func:`seterrcall` recorded (device kernels never call it).

    Examples
    --------
    >>> import clnp as np
    >>> np.geterrcall() is None
    True
    """
    return _SETTINGS["errcall"]


def seterrcall(func: Any) -> Any:
    """Record a floating-point error callback and return the previous one (NumPy's
    ``seterrcall``; device kernels follow IEEE 754 silently and never call it).

    Parameters
    ----------
    func : callable, object with a ``write`` method, or None
        The callback.

    Returns
    -------
    callable or None
        The previous callback.

    Raises
    ------
    ValueError
        When ``func`` is neither callable nor has ``write``.

    Examples
    --------
    >>> import clnp as np
    >>> old = np.seterrcall(print)
    >>> np.geterrcall() is print, np.seterrcall(old) is print
    (True, True)
    """
    if func is not None and not callable(func) and not callable(getattr(func, "write", None)):
        raise ValueError("seterrcall: only callable can be used as callback")
    old = _SETTINGS["errcall"]
    _SETTINGS["errcall"] = func
    return old
