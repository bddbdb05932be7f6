"""NumPy's window functions on the device: ``hamming``, ``hanning``, ``blackman``,
``bartlett`` and ``kaiser``, computed from ``arange`` with elementwise ops in the device's
default float type (float64 where the device has it, as NumPy)."""
from __future__ import annotations

import math
import operator
from typing import Any

from .._core.namespace import namespace as _xp

__all__ = ["hamming", "hanning", "blackman", "bartlett", "kaiser"]


def _n(M: Any, device: Any, fname: str) -> tuple[Any, int]:
    """``arange(M)`` centred (``n - (M-1)/2``) in the default float type, or None for
    M < 2 (an empty or one-element window)."""
    try:
        m = operator.index(M)
    except TypeError:
        if isinstance(M, float) and M.is_integer():
            m = int(M)
        else:
            raise TypeError(f"{fname}: M must be an integer; got {M!r}") from None
    xp = _xp()
    dev = device or xp.default_device()
    return xp.arange(m, dtype=dev.default_float, device=dev), m


def _small(m: int, device: Any) -> Any:
    xp = _xp()
    dev = device or xp.default_device()
    return xp.ones((max(m, 0),), dtype=dev.default_float, device=dev)


def _cosine(M: Any, coeffs: tuple[float, ...], device: Any, fname: str) -> Any:
    xp = _xp()
    n, m = _n(M, device, fname)
    if m < 2:
        return _small(m, device)
    x = n * (2.0 * math.pi / (m - 1))
    w = xp.full_like(n, coeffs[0])
    for k, c in enumerate(coeffs[1:], start=1):
        w = w + c * xp.cos(k * x)
    return w


def hamming(M: int, *, device: Any = None) -> Any:
    """The Hamming window (NumPy's ``hamming``).

    Parameters
    ----------
    M : int
        Number of points (an empty array when < 1).
    device : Device, optional
        Where to create the window.

    Returns
    -------
    Array
        ``0.54 - 0.46 cos(2 pi n / (M - 1))``, maximum 1 in the middle.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.round(numpy.asarray(np.hamming(5)), 4))
    [0.08 0.54 1.   0.54 0.08]
    """
    return _cosine(M, (0.54, -0.46), device, "hamming")


def hanning(M: int, *, device: Any = None) -> Any:
    """The Hann window (NumPy's ``hanning``).

    Parameters
    ----------
    M : int
        Number of points (an empty array when < 1).
    device : Device, optional
        Where to create the window.

    Returns
    -------
    Array
        ``0.5 - 0.5 cos(2 pi n / (M - 1))``.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.round(numpy.asarray(np.hanning(5)), 4))
    [0.  0.5 1.  0.5 0. ]
    """
    return _cosine(M, (0.5, -0.5), device, "hanning")


def blackman(M: int, *, device: Any = None) -> Any:
    """The Blackman window (NumPy's ``blackman``).

    Parameters
    ----------
    M : int
        Number of points (an empty array when < 1).
    device : Device, optional
        Where to create the window.

    Returns
    -------
    Array
        ``0.42 - 0.5 cos(2 pi n/(M-1)) + 0.08 cos(4 pi n/(M-1))``.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.round(numpy.asarray(np.blackman(5)), 4))
    [-0.    0.34  1.    0.34 -0.  ]
    """
    return _cosine(M, (0.42, -0.5, 0.08), device, "blackman")


def bartlett(M: int, *, device: Any = None) -> Any:
    """The Bartlett (triangular) window (NumPy's ``bartlett``).

    Parameters
    ----------
    M : int
        Number of points (an empty array when < 1).
    device : Device, optional
        Where to create the window.

    Returns
    -------
    Array
        ``1 - |2n/(M-1) - 1|``.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.bartlett(5)))
    [0.  0.5 1.  0.5 0. ]
    """
    xp = _xp()
    n, m = _n(M, device, "bartlett")
    if m < 2:
        return _small(m, device)
    return 1.0 - xp.abs(n * (2.0 / (m - 1)) - 1.0)


def kaiser(M: int, beta: float, *, device: Any = None) -> Any:
    """The Kaiser window (NumPy's ``kaiser``).

    Parameters
    ----------
    M : int
        Number of points (an empty array when < 1).
    beta : float
        Shape parameter.
    device : Device, optional
        Where to create the window.

    Returns
    -------
    Array
        ``i0(beta sqrt(1 - (2n/(M-1) - 1)^2)) / i0(beta)``.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.round(numpy.asarray(np.kaiser(4, 5.0)), 4))
    [0.0367 0.7753 0.7753 0.0367]
    """
    from .math import i0
    xp = _xp()
    n, m = _n(M, device, "kaiser")
    if m < 2:
        return _small(m, device)
    alpha = (m - 1) / 2.0
    r = (n - alpha) / alpha
    arg = beta * xp.sqrt(xp.clip(1.0 - r * r, 0.0, None))
    return i0(arg) / i0(xp.full((), float(beta), dtype=n.dtype, device=n.device))
