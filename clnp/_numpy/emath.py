"""NumPy's ``numpy.emath`` (``numpy.lib.scimath``) on the device: ``sqrt``, ``log``,
``log2``, ``log10``, ``logn``, ``power``, ``arccos``, ``arcsin`` and ``arctanh`` whose real
inputs outside the real domain give the complex result instead of ``nan``.

As in NumPy, the output dtype depends on the input's *values*: when any element of a real
input is outside the function's real domain (negative for the square root, logarithms and
``power``'s base; ``|x| > 1`` for ``arccos``, ``arcsin`` and ``arctanh``), the whole input is
converted to complex first (int8, int16, uint8, uint16 and float32 to complex64, the other
real dtypes to complex128, NumPy's rule) and the complex function applies; otherwise the real
function applies and the result has the dtype NumPy's ufunc gives (int32 -> float64,
float32 -> float32, ...). Deciding this reads one boolean back from the device for each real
input, so every call waits for the work producing its input (a synchronisation). Complex
inputs need no check. Devices without double precision cannot hold the complex128 results of
float64, float16, bool and wide integer inputs and raise clnp's UnsupportedDtypeError.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._core import dtypes as dt
from .._core.namespace import namespace as _xp
from .array_likes import _arr

__all__ = ["sqrt", "log", "log2", "log10", "logn", "power", "arccos", "arcsin", "arctanh"]

# NumPy's _tocomplex: these real dtypes go to complex64, every other one to complex128
_TO_COMPLEX64 = frozenset(np.dtype(t) for t in ("int8", "int16", "uint8", "uint16",
                                                "float32", "complex64"))


def _is_real(x: Any) -> bool:
    return np.dtype(x.dtype).kind in "biuf"


def _any(cond: Any) -> bool:
    """One boolean read back from the device (the synchronisation NumPy's rule needs)."""
    return bool(_xp().any(cond).to_numpy())


def _tocomplex(x: Any) -> Any:
    xp = _xp()
    # NumPy's complex128, or the device's widest complex where it has no fp64
    wide = x.device.default_complex
    target = dt.as_dtype(np.complex64) if np.dtype(x.dtype) in _TO_COMPLEX64 else wide
    return xp.astype(x, target)


def _fix_real_lt_zero(x: Any) -> Any:
    """``x`` as an array, complex when it is real with a negative element."""
    x = _arr(x)
    if _is_real(x) and np.dtype(x.dtype).kind in "if" and x.size and _any(_xp().less(x, 0)):
        return _tocomplex(x)
    return x


def _fix_int_lt_zero(p: Any) -> Any:
    """``p`` as an array, float64 when it is an integer array with a negative element (NumPy
    multiplies it by 1.0)."""
    p = _arr(p)
    if np.dtype(p.dtype).kind == "i" and p.size and _any(_xp().less(p, 0)):
        return _xp().astype(p, p.device.default_float)   # float64, or float32 without fp64
    return p


def _fix_real_abs_gt_1(x: Any) -> Any:
    """``x`` as an array, complex when it is real with an element of magnitude above 1."""
    x = _arr(x)
    if _is_real(x) and np.dtype(x.dtype).kind in "iuf" and x.size and \
            _any(_xp().greater(_xp().abs(x), 1)):
        return _tocomplex(x)
    return x


def sqrt(x: Any) -> Any:
    """Square root, complex for negative real input (NumPy's ``emath.sqrt``).

    Parameters
    ----------
    x : array_like
        Input. A real input with any negative element is converted to complex as a whole
        (one value read back from the device decides it).

    Returns
    -------
    Array
        The principal square root: real (NumPy's ufunc dtype) when every element is
        non-negative, else complex64 or complex128.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.emath.sqrt([-1.0, 4.0])))
    [0.+1.j 2.+0.j]
    >>> print(numpy.asarray(np.emath.sqrt([1.0, 4.0])))
    [1. 2.]
    """
    return _xp().sqrt(_fix_real_lt_zero(x))


def log(x: Any) -> Any:
    """Natural logarithm, complex for negative real input (NumPy's ``emath.log``).

    Parameters
    ----------
    x : array_like
        Input. A real input with any negative element is converted to complex as a whole
        (one value read back from the device decides it).

    Returns
    -------
    Array
        ``log(x)``: real when every element is non-negative (``log(0)`` is ``-inf``), else
        complex, with ``log(-r) = log(r) + pi*j``.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.emath.log([-1.0, 1.0])).round(4))
    [0.+3.1416j 0.+0.j    ]
    """
    return _xp().log(_fix_real_lt_zero(x))


def log2(x: Any) -> Any:
    """Base-2 logarithm, complex for negative real input (NumPy's ``emath.log2``).

    Parameters
    ----------
    x : array_like
        Input. A real input with any negative element is converted to complex as a whole
        (one value read back from the device decides it).

    Returns
    -------
    Array
        ``log2(x)``: real when every element is non-negative, else complex.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.emath.log2([4.0, 8.0])))
    [2. 3.]
    >>> print(numpy.asarray(np.emath.log2(-1.0)).imag.round(6))
    4.53236
    """
    return _xp().log2(_fix_real_lt_zero(x))


def log10(x: Any) -> Any:
    """Base-10 logarithm, complex for negative real input (NumPy's ``emath.log10``).

    Parameters
    ----------
    x : array_like
        Input. A real input with any negative element is converted to complex as a whole
        (one value read back from the device decides it).

    Returns
    -------
    Array
        ``log10(x)``: real when every element is non-negative, else complex.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.emath.log10([10.0, 100.0])))
    [1. 2.]
    >>> print(numpy.asarray(np.emath.log10(-10.0)).real.round(6))
    1.0
    """
    return _xp().log10(_fix_real_lt_zero(x))


def logn(n: Any, x: Any) -> Any:
    """Logarithm of ``x`` to base ``n``, complex for negative real input (NumPy's
    ``emath.logn``).

    Parameters
    ----------
    n : array_like
        The base (broadcast against ``x``); complex when real with a negative element.
    x : array_like
        The values; complex when real with a negative element.

    Returns
    -------
    Array
        ``log(x) / log(n)`` with the conversions of :func:`log`, in the dtype NumPy's
        division of the two gives.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.emath.logn(2, [4.0, 8.0])))
    [2. 3.]
    >>> print(numpy.asarray(np.emath.logn(2, -8.0)).real.round(6))
    3.0
    """
    xp = _xp()
    x = _fix_real_lt_zero(x)
    n = _fix_real_lt_zero(n)
    return xp.divide(xp.log(x), xp.log(n))


def power(x: Any, p: Any) -> Any:
    """``x`` to the power ``p``, complex for a negative real base (NumPy's ``emath.power``).

    Parameters
    ----------
    x : array_like
        The base; a real base with any negative element is converted to complex as a whole
        (even for integer powers, as in NumPy).
    p : array_like
        The exponent (broadcast against ``x``); an integer exponent with a negative element
        becomes float64, so ``power(2, -2)`` is ``0.25``.

    Returns
    -------
    Array
        ``x ** p`` in the dtype NumPy's ``power`` gives for the converted operands.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.emath.power([2.0, 4.0], 2)))
    [ 4. 16.]
    >>> print(numpy.asarray(np.emath.power(-4.0, 0.5)).imag)
    2.0
    >>> print(numpy.asarray(np.emath.power(2, -2)))
    0.25
    """
    x = _fix_real_lt_zero(x)
    p = _fix_int_lt_zero(p)
    return _xp().pow(x, p)


def arccos(x: Any) -> Any:
    """Inverse cosine, complex for real input of magnitude above 1 (NumPy's
    ``emath.arccos``).

    Parameters
    ----------
    x : array_like
        Input. A real input with any element of magnitude above 1 is converted to complex as
        a whole (one value read back from the device decides it).

    Returns
    -------
    Array
        The principal value: real in ``[0, pi]`` when every ``|x| <= 1``, else complex.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.emath.arccos([1.0, -1.0])).round(4))
    [0.     3.1416]
    >>> print(numpy.asarray(np.emath.arccos(2.0)).imag.round(6))
    -1.316958
    """
    return _xp().acos(_fix_real_abs_gt_1(x))


def arcsin(x: Any) -> Any:
    """Inverse sine, complex for real input of magnitude above 1 (NumPy's
    ``emath.arcsin``).

    Parameters
    ----------
    x : array_like
        Input. A real input with any element of magnitude above 1 is converted to complex as
        a whole (one value read back from the device decides it).

    Returns
    -------
    Array
        The principal value: real in ``[-pi/2, pi/2]`` when every ``|x| <= 1``, else
        complex.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.emath.arcsin([0.0, 1.0])).round(4))
    [0.     1.5708]
    >>> print(numpy.asarray(np.emath.arcsin(2.0)).real.round(6))
    1.570796
    """
    return _xp().asin(_fix_real_abs_gt_1(x))


def arctanh(x: Any) -> Any:
    """Inverse hyperbolic tangent, complex for real input of magnitude above 1 (NumPy's
    ``emath.arctanh``).

    Parameters
    ----------
    x : array_like
        Input. A real input with any element of magnitude above 1 is converted to complex as
        a whole (one value read back from the device decides it); ``arctanh(1)`` is ``inf``.

    Returns
    -------
    Array
        The principal value: real when every ``|x| <= 1``, else complex.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.emath.arctanh([0.0, 0.5])).round(6))
    [0.       0.549306]
    >>> print(numpy.asarray(np.emath.arctanh(2.0)).imag.round(6))
    1.570796
    """
    return _xp().atanh(_fix_real_abs_gt_1(x))
