"""NumPy's ``poly*`` functions on the device: ``polyval``, ``polyfit``, ``roots``,
``poly``, ``polyadd``, ``polysub``, ``polymul``, ``polydiv``, ``polyder`` and ``polyint``.

Coefficients are 1-D arrays, highest power first, as in NumPy. Evaluation is Horner's rule
with clnp ops, fitting is a scaled least-squares solve (``clnp.linalg.lstsq``), ``roots`` the
eigenvalues of the companion matrix (``clnp.linalg.eigvals``). Trimming leading zeros
(``roots``, ``polydiv``'s remainder) reads the short coefficient vector from the device.
``numpy.poly1d`` is a host object and is not provided.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .._core import dtypes as dt
from .._core.checks import is_array
from .._core.namespace import namespace as _xp
from .array_likes import _arr, _device_of, _inexact
from .._runtime.user_frames import user_stacklevel

__all__ = ["polyval", "polyfit", "roots", "poly", "polyadd", "polysub", "polymul",
           "polydiv", "polyder", "polyint"]


def _coeffs(p: Any, dev: Any, fname: str) -> Any:
    c = _xp().reshape(_arr(p, dev), (-1,)) if np.ndim(p) == 0 and not is_array(p) \
        else _arr(p, dev)
    if c.ndim != 1:
        raise ValueError(f"{fname}: coefficients must be 1-D; got shape {c.shape}")
    return c


def polyval(p: Any, x: Any) -> Any:
    """Evaluate the polynomial with coefficients ``p`` (highest power first) at ``x``
    (NumPy's ``polyval``; Horner's rule).

    Parameters
    ----------
    p : 1-D array_like
        Coefficients.
    x : array_like
        Points.

    Returns
    -------
    Array
        Of ``x``'s shape and the promoted dtype.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.polyval([3, 0, 1], [5, 1])))
    [76  4]
    """
    xp = _xp()
    dev = _device_of(p, x)
    c = _coeffs(p, dev, "polyval")
    xa = _arr(x, dev)
    d = xp.result_type(c, xa)
    c, xa = xp.astype(c, d), xp.astype(xa, d)
    y = xp.zeros(xa.shape, dtype=d, device=xa.device)
    for i in range(c.shape[0]):
        y = y * xa + c[i]
    return y


def polyadd(a1: Any, a2: Any) -> Any:
    """Sum of two polynomials (NumPy's ``polyadd``).

    Parameters
    ----------
    a1, a2 : 1-D array_like
        Coefficients, highest power first.

    Returns
    -------
    Array
        The sum's coefficients.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.polyadd([1, 2], [9, 5, 4])))
    [9 6 6]
    """
    return _addsub(a1, a2, 1)


def polysub(a1: Any, a2: Any) -> Any:
    """Difference of two polynomials (NumPy's ``polysub``).

    Parameters
    ----------
    a1, a2 : 1-D array_like
        Coefficients, highest power first.

    Returns
    -------
    Array
        ``a1 - a2``'s coefficients.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.polysub([2, 10, -2], [3, 10, -4])))
    [-1  0  2]
    """
    return _addsub(a1, a2, -1)


def _addsub(a1: Any, a2: Any, sign: int) -> Any:
    xp = _xp()
    dev = _device_of(a1, a2)
    x, y = _coeffs(a1, dev, "polyadd"), _coeffs(a2, dev, "polyadd")
    d = xp.result_type(x, y)
    x, y = xp.astype(x, d), xp.astype(y, d)
    n = max(x.shape[0], y.shape[0])

    def pad(v: Any) -> Any:
        k = n - v.shape[0]
        return v if k == 0 else xp.concat([xp.zeros((k,), dtype=d, device=v.device), v])
    return pad(x) + pad(y) if sign > 0 else pad(x) - pad(y)


def polymul(a1: Any, a2: Any) -> Any:
    """Product of two polynomials (NumPy's ``polymul``: their convolution).

    Parameters
    ----------
    a1, a2 : 1-D array_like
        Coefficients, highest power first.

    Returns
    -------
    Array
        The product's coefficients (leading zeros of the inputs dropped first, as NumPy;
        that reads the inputs' nonzero extent from the device).

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.polymul([1, 2, 3], [9, 5, 1])))
    [ 9 23 38 17  3]
    """
    from .interpolation import convolve
    from .selection import trim_zeros
    xp = _xp()
    dev = _device_of(a1, a2)

    def lead(c: Any) -> Any:
        # NumPy goes through poly1d, which drops leading zeros (keeping one zero)
        t = trim_zeros(c, "f")
        return t if t.shape[0] else xp.zeros((1,), dtype=c.dtype, device=c.device)
    c1, c2 = _coeffs(a1, dev, "polymul"), _coeffs(a2, dev, "polymul")  # both checked first
    return convolve(lead(c1), lead(c2))


def polydiv(u: Any, v: Any) -> tuple[Any, Any]:
    """Quotient and remainder of polynomial division (NumPy's ``polydiv``).

    Parameters
    ----------
    u : 1-D array_like
        Dividend, highest power first.
    v : 1-D array_like
        Divisor.

    Returns
    -------
    q, r : Array
        Quotient and remainder (floating point; the remainder's leading zeros removed).

    Raises
    ------
    ZeroDivisionError
        When ``v`` is all zeros.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> q, r = np.polydiv([3.0, 5.0, 2.0], [2.0, 1.0])
    >>> print(numpy.asarray(q), numpy.asarray(r))
    [1.5  1.75] [0.25]
    """
    xp = _xp()
    dev = _device_of(u, v)
    uu, vv = _inexact(_coeffs(u, dev, "polydiv")), _inexact(_coeffs(v, dev, "polydiv"))
    d = xp.result_type(uu, vv)
    # as NumPy, the reciprocal of the leading coefficient is taken in v's own dtype (a
    # float32 v scales a float64 u by a float32-rounded 1/v[0])
    scale = 1.0 / vv[0]
    uu, vv = xp.astype(uu, d), xp.astype(vv, d)
    m, n = uu.shape[0] - 1, vv.shape[0] - 1
    if not bool(xp.any(vv != 0)):
        raise ZeroDivisionError("polydiv: division by the zero polynomial")
    q = xp.zeros((max(m - n + 1, 1),), dtype=d, device=uu.device)
    r = xp.asarray(uu, copy=True)
    for k in range(0, m - n + 1):
        dk = scale * r[k]
        q[k] = dk
        r[k:k + n + 1] = r[k:k + n + 1] - dk * vv
    host = np.asarray(r.to_numpy())
    start = 0
    while start < host.shape[0] - 1 and np.allclose(host[start], 0, rtol=1e-14):
        start += 1
    return q, r[start:]


def polyder(p: Any, m: int = 1) -> Any:
    """The ``m``-th derivative of a polynomial (NumPy's ``polyder``).

    Parameters
    ----------
    p : 1-D array_like
        Coefficients, highest power first.
    m : int, optional
        Order of the derivative.

    Returns
    -------
    Array
        The derivative's coefficients (empty when everything differentiates away, as NumPy).

    Raises
    ------
    ValueError
        When ``m`` is negative.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.polyder([1, 1, 1, 1])))
    [3 2 1]
    """
    xp = _xp()
    m = operator.index(m)
    if m < 0:
        raise ValueError("polyder: order of derivative must be positive (see polyint)")
    c = _coeffs(p, None, "polyder")
    for _ in range(m):
        n = max(c.shape[0] - 1, 0)
        # NumPy multiplies by a default-int arange: float32 coefficients give float64
        c = c[:-1] * xp.arange(n, 0, -1, dtype=_int_arange_dtype(c), device=c.device)
    return c


def _int_arange_dtype(c: Any) -> np.dtype:
    """The default int where the promotion with ``c`` stays on the device (int64 promotes
    float32 to float64, which a device without fp64 lacks: then ``c``'s own dtype)."""
    r = np.promote_types(c.dtype, dt.int64)
    return dt.int64 if c.device.supports(r) else (c.dtype if c.dtype.kind != "b"
                                                  else dt.int32)


def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    """The ``m``-th antiderivative of a polynomial (NumPy's ``polyint``).

    Parameters
    ----------
    p : 1-D array_like
        Coefficients, highest power first.
    m : int, optional
        Order of the antiderivative.
    k : scalar or sequence of ``m`` scalars, optional
        Integration constants (default zeros).

    Returns
    -------
    Array
        Floating-point coefficients.

    Raises
    ------
    ValueError
        When ``m`` is negative or ``k`` has the wrong length.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.polyint([3.0, 2.0, 1.0])))
    [1. 1. 1. 0.]
    """
    xp = _xp()
    m = operator.index(m)
    if m < 0:
        raise ValueError("polyint: order of integral must be positive (see polyder)")
    ks = np.zeros(m) if k is None else np.atleast_1d(np.asarray(k, dtype=float))
    if ks.size == 1 and m > 1:
        ks = np.full(m, ks[0])
    if ks.size < m:
        raise ValueError("polyint: k must be a scalar or a rank-1 array of length 1 or >m.")
    c = _coeffs(p, None, "polyint")
    if m == 0:
        return c
    c = _inexact(c)
    for i in range(m):
        n = c.shape[0]
        c = c / xp.arange(n, 0, -1, dtype=_int_arange_dtype(c), device=c.device)
        c = xp.concat([c,
                       xp.full((1,), ks[i], dtype=c.dtype, device=c.device)])
    return c


def polyfit(x: Any, y: Any, deg: int, rcond: Any = None, full: bool = False, w: Any = None,
            cov: Any = False) -> Any:
    """Least-squares polynomial fit (NumPy's ``polyfit``).

    Parameters
    ----------
    x : 1-D array_like
        Sample points.
    y : 1-D or 2-D array_like
        Values (several data sets as columns).
    deg : int
        Degree.
    rcond : float, optional
        Relative cut-off for small singular values (default ``len(x) * eps``).
    full : bool, optional
        Also return residuals, rank, singular values and rcond.
    w : 1-D array_like, optional
        Weights on the unsquared residuals.
    cov : bool or 'unscaled', optional
        Also return the covariance of the estimate.

    Returns
    -------
    Array or tuple
        Coefficients, highest power first (and the extras of ``full`` / ``cov``).

    Raises
    ------
    ValueError
        When ``deg`` is negative or the shapes do not fit.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> x = np.asarray([0.0, 1.0, 2.0, 3.0])
    >>> print(numpy.round(numpy.asarray(np.polyfit(x, 2 * x * x - 1, 2)), 3) + 0.0)
    [ 2.  0. -1.]
    """
    xp = _xp()
    order = operator.index(deg) + 1
    dev = _device_of(x, y, w)
    xa, ya = _arr(x, dev), _arr(y, dev)         # shapes checked before any kernel runs
    if xa.ndim == 1 and ya.ndim in (1, 2) and xa.shape[0] != ya.shape[0]:
        raise TypeError(f"polyfit: expected x and y to have same length; got shapes "
                        f"{tuple(xa.shape)} and {tuple(ya.shape)}")
    xa, ya = _inexact(xa), _inexact(ya)
    d = xp.result_type(xa, ya)
    xa, ya = xp.astype(xa, d), xp.astype(ya, d)
    if deg < 0:
        raise ValueError("polyfit: expected deg >= 0")
    if xa.ndim != 1:
        raise TypeError("polyfit: expected 1D vector for x")
    if xa.size == 0:
        raise TypeError("polyfit: expected non-empty vector for x")
    if ya.ndim < 1 or ya.ndim > 2:
        raise TypeError("polyfit: expected 1D or 2D array for y")
    if xa.shape[0] != ya.shape[0]:
        raise TypeError("polyfit: expected x and y to have same length")
    if rcond is None:
        rcond = xa.shape[0] * float(np.finfo(np.dtype(d)).eps)
    from .math import vander
    lhs = vander(xa, order)
    rhs = ya
    if w is not None:
        wa = xp.astype(_arr(w, dev), d)
        if wa.ndim != 1 or wa.shape[0] != ya.shape[0]:
            raise TypeError("polyfit: expected a 1-d w of y's length")
        lhs = lhs * wa[:, None]
        rhs = rhs * (wa if rhs.ndim == 1 else wa[:, None])
    scale = xp.sqrt(xp.sum(lhs * lhs, axis=0))
    scale = xp.where(scale == 0, xp.ones_like(scale), scale)
    lhs = lhs / scale
    c, resids, rank, s = xp.linalg.lstsq(lhs, rhs, rcond=rcond)
    c = (c.T / scale).T
    if int(rank) != order and not full:
        import warnings
        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning,
                      stacklevel=user_stacklevel())
    if full:
        return c, resids, rank, s, rcond
    if cov:
        vbase = xp.linalg.inv(lhs.T @ lhs)
        vbase = vbase / (scale[:, None] * scale[None, :])
        if cov == "unscaled":
            fac: Any = 1.0
        else:
            if xa.shape[0] <= order:
                raise ValueError("polyfit: the number of data points must exceed order to "
                                 "scale the covariance matrix")
            fac = resids / (xa.shape[0] - order)
        if ya.ndim == 1:
            return c, vbase * fac
        return c, vbase[:, :, None] * fac
    return c


def roots(p: Any) -> Any:
    """The roots of a polynomial (NumPy's ``roots``: eigenvalues of the companion matrix).

    Parameters
    ----------
    p : 1-D array_like
        Coefficients, highest power first.

    Returns
    -------
    Array
        The roots (complex when any is; real otherwise).

    Raises
    ------
    ValueError
        When ``p`` is not 1-D.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.round(numpy.sort(numpy.asarray(np.roots([1.0, -3.0, 2.0]))), 4))
    [1. 2.]
    """
    xp = _xp()
    c = _coeffs(p, None, "roots")
    host = np.asarray(c.to_numpy())
    nz = np.nonzero(host)[0]
    fl = c.device.default_float
    if nz.size == 0:
        return xp.zeros((0,), dtype=fl, device=c.device)
    trailing = host.shape[0] - nz[-1] - 1
    c = _inexact(c[int(nz[0]):int(nz[-1]) + 1])
    n = c.shape[0]
    if n > 1:
        comp = xp.concat([xp.reshape(-c[1:] / c[0], (1, n - 1)),
                          xp.eye(n - 2, n - 1, dtype=c.dtype, device=c.device)], axis=0)
        r = xp.linalg.eigvals(comp)
        rh = np.asarray(r.to_numpy())
        # NumPy returns real roots when LAPACK's imaginary parts are exactly zero; clnp's
        # eigensolver leaves rounding noise there, so "zero" is within a few ulps
        tol = 64 * np.finfo(rh.real.dtype).eps * max(1.0, float(np.abs(rh).max(initial=0)))
        if rh.dtype.kind == "c" and c.dtype.kind != "c" and np.all(np.abs(rh.imag) <= tol):
            r = xp.real(r)
    else:
        r = xp.zeros((0,), dtype=c.dtype if c.dtype.kind in "fc" else fl, device=c.device)
    if trailing:
        r = xp.concat([r, xp.zeros((int(trailing),), dtype=r.dtype, device=c.device)])
    return r


def poly(seq_of_zeros: Any) -> Any:
    """The coefficients of the monic polynomial with the given roots, or of a square
    matrix's characteristic polynomial (NumPy's ``poly``).

    Parameters
    ----------
    seq_of_zeros : 1-D array_like or square 2-D array_like
        Roots, or a matrix (its eigenvalues are used).

    Returns
    -------
    Array
        Coefficients, highest power first (real when the complex roots pair up).

    Raises
    ------
    ValueError
        When the input is neither 1-D nor square 2-D.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.poly([1.0, 2.0])))
    [ 1. -3.  2.]
    """
    from .interpolation import convolve
    xp = _xp()
    z = _arr(seq_of_zeros)
    real_matrix = False
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] != 0:
        real_matrix = z.dtype.kind != "c"    # its characteristic polynomial is real
        z = xp.linalg.eigvals(_inexact(z))
    elif z.ndim == 1:
        pass
    elif z.ndim == 0:
        z = xp.reshape(z, (1,))     # NumPy: atleast_1d, one zero
    else:
        raise ValueError("poly: input must be 1d or non-empty square 2d array.")
    if z.shape[0] == 0:
        return 1.0                  # NumPy returns the Python float for no zeros
    z = _inexact(z)
    a = xp.ones((1,), dtype=z.dtype, device=z.device)
    for k in range(z.shape[0]):
        a = convolve(a, xp.concat([xp.ones((1,), dtype=z.dtype, device=z.device),
                                   xp.reshape(-z[k], (1,))]))
    if a.dtype.kind == "c" and real_matrix:
        a = xp.real(a)
    elif a.dtype.kind == "c":
        host = np.asarray(z.to_numpy())
        pos = np.sort_complex(host[host.imag > 0])
        neg = np.sort_complex(np.conjugate(host[host.imag < 0]))
        if pos.shape == neg.shape and np.all(pos == neg):
            a = xp.real(a)
    return a
