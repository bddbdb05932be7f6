"""NumPy's numerical helpers on the device: ``digitize``, ``histogram2d``,
``histogramdd``, ``gradient``, ``correlate``, ``kron``, ``cross``, ``trapezoid``,
``unwrap``, ``vander``, ``sinc``, ``modf``, ``spacing``, ``gcd``, ``lcm``, ``frexp``,
``ldexp``, ``cbrt``, ``i0``, ``bitwise_count``, ``packbits`` and ``unpackbits``.

Most are compositions of clnp ops (so ``clnp_grad`` differentiates them). ``gcd``, ``lcm``,
``frexp``, ``ldexp``, ``cbrt``, ``i0`` and ``bitwise_count`` are one small generated kernel
each (OpenCL's builtins, or Cephes' Chebyshev series for ``i0`` as in NumPy), made with
:class:`clnp.ElementwiseKernel`. Histogram ranges and ``digitize``'s monotonicity check read a
few values back from the device.
"""
from __future__ import annotations

import builtins
import functools
import math
import operator
import warnings
from typing import Any

import numpy as np

from .._core import dtypes as dt
from .._core.checks import is_array, normalize_axis
from .._core.namespace import namespace as _xp
from .array_likes import _arr, _device_of, _finish, _host_scalar, _inexact
from .._core.dtypes import kind as dkind
from .._runtime.user_frames import user_stacklevel

__all__ = ["digitize", "histogram2d", "histogramdd", "gradient", "correlate", "kron",
           "cross", "trapezoid", "unwrap", "vander", "sinc", "modf", "spacing", "gcd", "lcm",
           "frexp", "ldexp", "cbrt", "i0", "bitwise_count", "packbits", "unpackbits"]


@functools.lru_cache(maxsize=None)
def _kernel(name: str) -> Any:
    from .._routines.custom_kernels import ElementwiseKernel
    gcd_c = ("T a = x < 0 ? -x : x; T b = y < 0 ? -y : y; "
             "while (b != 0) { T t = a % b; a = b; b = t; } ")
    specs = {
        "gcd": ("T x, T y", "T z", gcd_c + "z = a;"),
        "lcm": ("T x, T y", "T z", gcd_c + "z = a == 0 ? 0 : (T)((x / a) * y); "
                "z = z < 0 ? -z : z;"),
        "cbrt": ("T x", "T y", "y = cbrt(x);"),
        "frexp": ("T x", "T m, int32 e", "int ee = 0; m = frexp(x, &ee); "
                  "e = (isinf(x) || isnan(x)) ? 0 : ee;"),
        "ldexp": ("T x, int32 k", "T y", "y = ldexp(x, k);"),
        "popcount": ("T x", "uint8 y", "y = popcount(x < 0 ? -x : x);"),
        "i0": ("T x", "T y", _I0_C),
        "i0f": ("T x", "T y", _I0_C_F),
    }
    ins, outs, body = specs[name]
    pre = {"i0": _I0_PRE, "i0f": _I0_PRE_F}.get(name, "")
    return ElementwiseKernel(ins, outs, body, f"clnp_np_{name}", preamble=pre)


# Cephes' Chebyshev coefficients for I0 (the series NumPy's i0 evaluates)
_I0_A = [-4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
         1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
         -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
         9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
         -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
         1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
         -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
         1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
         -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
         1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1]
_I0_B = [-7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
         3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
         1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
         -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
         7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
         -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
         3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
         2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
         8.04490411014108831608e-1]
_I0_PRE = ("#define CLNP_I0_A {" + ", ".join(repr(c) for c in _I0_A) + "}\n"
           "#define CLNP_I0_B {" + ", ".join(repr(c) for c in _I0_B) + "}\n")
_I0_C = """
const double ca[30] = CLNP_I0_A; const double cb[25] = CLNP_I0_B;
double ax = fabs((double)x); const double *c; int nc; double t;
if (ax <= 8.0) { c = ca; nc = 30; t = ax / 2.0 - 2.0; }
else { c = cb; nc = 25; t = 32.0 / ax - 2.0; }
double b0 = c[0], b1 = 0.0, b2 = 0.0;
for (int k = 1; k < nc; k++) { b2 = b1; b1 = b0; b0 = t * b1 - b2 + c[k]; }
double r = 0.5 * (b0 - b2);
if (ax <= 8.0) { y = (T)(exp(ax) * r); }
else if (ax < CLNP_I0_SPLIT) { y = (T)(exp(ax) * r / sqrt(ax)); }
/* exp(ax) overflows before I0(ax) ~ exp(ax) / sqrt(2 pi ax) does: two half exponentials */
else { double h = exp(0.5 * ax); y = (T)((h * (r / sqrt(ax))) * h); }
"""
_I0_C_F = _I0_C.replace("double", "float").replace("CLNP_I0_SPLIT", "80.0f")
_I0_C = _I0_C.replace("CLNP_I0_SPLIT", "700.0")
# float results from the double series where the device has fp64 (the float series is off by
# an ulp or two, i0(0) = 0.99999994); the float series elsewhere
_I0_C_F = f"#ifdef cl_khr_fp64\n{_I0_C}\n#else\n{_I0_C_F}\n#endif\n(void)x"   # ends a statement
_I0_PRE_F = "#ifdef cl_khr_fp64\n#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#endif\n" + _I0_PRE


def _float_in(x: Any) -> Any:
    a = _arr(x)
    return _inexact(a)


def _ufunc_float(a: Any) -> Any:
    """A ufunc's float input: integers and bools as NumPy's smallest float that holds them
    (int8 -> float16, int16 -> float32, wider -> float64; float32 without fp64)."""
    a = _arr(a)
    if dkind(a.dtype) in "fc":
        return a
    f = np.promote_types(a.dtype, np.float16)
    if f == np.float64 and not a.device.supports(dt.float64):
        f = np.dtype(np.float32)
    return _xp().astype(a, dt.as_dtype(f))


def _check_int(a: Any, fname: str) -> None:
    if dkind(a.dtype) not in "iu":
        raise TypeError(f"{fname}: ufunc '{fname}' did not contain a loop with signature "
                        f"matching types {a.dtype}; integer input is required")


def gcd(x1: Any, x2: Any, /, out: Any = None) -> Any:
    """Greatest common divisor of ``|x1|`` and ``|x2|`` (NumPy's ``gcd``).

    Parameters
    ----------
    x1, x2 : array_like of int
        Broadcast together.
    out : Array, optional
        Where to write the result.

    Returns
    -------
    Array
        Of the promoted integer dtype; ``gcd(0, 0) = 0``.

    Raises
    ------
    TypeError
        For non-integer input.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.gcd([12, 20, -7], 8)))
    [4 4 1]
    """
    return _int2("gcd", x1, x2, out)


def lcm(x1: Any, x2: Any, /, out: Any = None) -> Any:
    """Lowest common multiple of ``|x1|`` and ``|x2|`` (NumPy's ``lcm``).

    Parameters
    ----------
    x1, x2 : array_like of int
        Broadcast together.
    out : Array, optional
        Where to write the result.

    Returns
    -------
    Array
        Of the promoted integer dtype; 0 when either is 0.

    Raises
    ------
    TypeError
        For non-integer input.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.lcm([12, 20, -7], 8)))
    [24 40 56]
    """
    return _int2("lcm", x1, x2, out)


def _int2(name: str, x1: Any, x2: Any, out: Any) -> Any:
    xp = _xp()
    dev = _device_of(x1, x2)
    a, b = _arr(x1, dev) if is_array(x1) or np.ndim(x1) else x1, \
        _arr(x2, dev) if is_array(x2) or np.ndim(x2) else x2
    d = xp.result_type(a, b)
    a, b = _arr(a, dev, d), _arr(b, dev, d)
    if dkind(d) not in "iu":
        raise TypeError(f"{name}: integer inputs are required; got {d}")
    if d == dt.bool_:
        a, b = xp.astype(a, dt.int8), xp.astype(b, dt.int8)
    return _finish(_kernel(name)(a, b), out, name)


def cbrt(x: Any, /, out: Any = None) -> Any:
    """Elementwise cube root (NumPy's ``cbrt``).

    Parameters
    ----------
    x : array_like
        Input (integers become the default float).
    out : Array, optional
        Where to write the result.

    Returns
    -------
    Array
        Real floating point.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.cbrt([1.0, 8.0, -27.0])))
    [ 1.  2. -3.]
    """
    return _finish(_kernel("cbrt")(_ufunc_float(x)), out, "cbrt")


def i0(x: Any) -> Any:
    """Modified Bessel function of the first kind, order 0 (NumPy's ``i0``).

    Parameters
    ----------
    x : array_like
        Real input.

    Returns
    -------
    Array
        Real floating point (Cephes' Chebyshev series, as NumPy).

    Raises
    ------
    TypeError
        For complex input.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.round(numpy.asarray(np.i0([0.0, 1.0, 2.0])), 4))
    [1.     1.2661 2.2796]
    """
    a = _float_in(x)
    if dkind(a.dtype) == "c":
        raise TypeError(f"i0: not supported for complex values; got dtype {a.dtype}")
    # the series in double where the dtype is float64, else in float (no fp64 needed)
    return _kernel("i0" if a.dtype == dt.float64 else "i0f")(a)


def frexp(x: Any, /, out: Any = None) -> tuple[Any, Any]:
    """Split into mantissa and exponent, ``x = m * 2**e`` (NumPy's ``frexp``).

    Parameters
    ----------
    x : array_like
        Real input.
    out : tuple of two Arrays, optional
        Where to write the results.

    Returns
    -------
    tuple of Array
        The mantissa (``0.5 <= |m| < 1``) and the int32 exponent.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> m, e = np.frexp([1.0, 8.0, 0.0])
    >>> print(numpy.asarray(m), numpy.asarray(e))
    [0.5 0.5 0. ] [1 4 0]
    """
    a = _ufunc_float(x)
    m, e = _kernel("frexp")(a)
    if out is not None:
        return _finish(m, out[0], "frexp"), _finish(e, out[1], "frexp")
    return m, e


def ldexp(x1: Any, x2: Any, /, out: Any = None) -> Any:
    """``x1 * 2**x2`` elementwise (NumPy's ``ldexp``).

    Parameters
    ----------
    x1 : array_like
        Mantissas (integers become the default float).
    x2 : array_like of int
        Exponents.
    out : Array, optional
        Where to write the result.

    Returns
    -------
    Array
        Real floating point.

    Raises
    ------
    TypeError
        When ``x2`` is not integer.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.ldexp(5.0, [0, 1, 2])))
    [ 5. 10. 20.]
    """
    xp = _xp()
    dev = _device_of(x1, x2)
    a = _ufunc_float(_arr(x1, dev))
    k = _arr(x2, dev)
    if dkind(k.dtype) not in "biu":
        raise TypeError(f"ldexp: the exponent must be integer; got {k.dtype}")
    k = xp.astype(xp.clip(k, -2 ** 31, 2 ** 31 - 1) if k.dtype.itemsize > 4 or
                  k.dtype == dt.uint32 else k, dt.int32)
    return _finish(_kernel("ldexp")(a, k), out, "ldexp")


def bitwise_count(x: Any, /, out: Any = None) -> Any:
    """The number of 1-bits in ``|x|`` (NumPy's ``bitwise_count``).

    Parameters
    ----------
    x : array_like of int
        Input.
    out : Array, optional
        Where to write the result.

    Returns
    -------
    Array
        uint8.

    Raises
    ------
    TypeError
        For non-integer input.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.bitwise_count([0, 7, 255, -1])))
    [0 3 8 1]
    """
    a = _arr(x)
    if a.dtype == dt.bool_:
        a = _xp().astype(a, dt.uint8)
    _check_int(a, "bitwise_count")
    return _finish(_kernel("popcount")(a), out, "bitwise_count")


def modf(x: Any, /, out: Any = None) -> tuple[Any, Any]:
    """Fractional and integral parts, both with ``x``'s sign (NumPy's ``modf``).

    Parameters
    ----------
    x : array_like
        Real input.
    out : tuple of two Arrays, optional
        Where to write the results.

    Returns
    -------
    tuple of Array
        ``(x - trunc(x), trunc(x))`` (the fraction of an infinity is a signed zero).

    Examples
    --------
    >>> import numpy, clnp as np
    >>> f, i = np.modf([0.5, -3.25])
    >>> print(numpy.asarray(f), numpy.asarray(i))
    [ 0.5  -0.25] [ 0. -3.]
    """
    xp = _xp()
    a = _ufunc_float(x)
    ip = xp.trunc(a)
    frac = xp.where(xp.isinf(a), xp.zeros_like(a), a - ip)
    frac = xp.copysign(frac, a)
    if out is not None:
        return _finish(frac, out[0], "modf"), _finish(ip, out[1], "modf")
    return frac, ip


def spacing(x: Any, /, out: Any = None) -> Any:
    """Distance from ``x`` to the next representable number away from zero (NumPy's
    ``spacing``).

    Parameters
    ----------
    x : array_like
        Real input.
    out : Array, optional
        Where to write the result.

    Returns
    -------
    Array
        Same sign as ``x``; NaN for infinities and NaN.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> r = np.spacing(1.0)
    >>> print(bool(r == numpy.finfo(r.dtype).eps))
    True
    """
    xp = _xp()
    a = _ufunc_float(x)
    inf = xp.full_like(a, math.inf)
    toward = xp.where(a < 0, -inf, inf)     # NumPy: -0.0 steps towards +inf
    return _finish(xp.nextafter(a, toward) - a, out, "spacing")


def sinc(x: Any) -> Any:
    """The normalised sinc function, ``sin(pi x) / (pi x)`` (NumPy's ``sinc``).

    Parameters
    ----------
    x : array_like
        Input.

    Returns
    -------
    Array
        1 at 0.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.round(numpy.asarray(np.sinc([0.0, 0.5, 1.0])), 4) + 0.0)
    [1.     0.6366 0.    ]
    """
    xp = _xp()
    a = _float_in(x)
    # the limit 1 at 0 exactly (a tiny stand-in for 0 underflows in float16)
    zero = a == 0
    y = math.pi * xp.where(zero, xp.ones_like(a), a)
    return xp.where(zero, xp.ones_like(a), xp.sin(y) / y)


def digitize(x: Any, bins: Any, right: bool = False) -> Any:
    """Indices of the bins each value falls in (NumPy's ``digitize``).

    Parameters
    ----------
    x : array_like
        Values.
    bins : 1-D array_like
        Monotonically increasing or decreasing edges.
    right : bool, optional
        Whether the intervals include their right edge instead of the left.

    Returns
    -------
    Array
        int64 indices, of ``x``'s shape.

    Raises
    ------
    ValueError
        When ``bins`` is not 1-D or not monotonic (one device read).

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.digitize([0.2, 6.4, 3.0, 1.6], [0.0, 1.0, 2.5, 4.0, 10.0])))
    [1 4 3 2]
    """
    xp = _xp()
    dev = _device_of(x, bins)
    xa, b = _arr(x, dev), _arr(bins, dev)
    if b.ndim != 1:
        raise ValueError(f"digitize: bins must be one-dimensional; got shape {b.shape}")
    if dkind(xa.dtype) == "c" or dkind(b.dtype) == "c":
        raise TypeError(f"digitize: x and bins may not be complex; got dtypes {xa.dtype} and "
                        f"{b.dtype}")
    if b.shape[0] < 2:
        increasing = True
    else:
        inc, dec = bool(xp.all(b[1:] >= b[:-1])), bool(xp.all(b[1:] <= b[:-1]))
        if not inc and not dec:
            raise ValueError("digitize: bins must be monotonically increasing or decreasing")
        increasing = inc
    ct = xp.result_type(xa, b)
    xa, b = xp.astype(xa, ct), xp.astype(b, ct)
    side = "left" if right else "right"
    flat = xp.reshape(xa, (-1,))
    if increasing:
        r = xp.searchsorted(b, flat, side=side)
    else:
        # NumPy counts from the end of the reversed bins with the same side: a value equal
        # to a bin edge falls on the edge's other side than with increasing bins
        r = b.shape[0] - xp.searchsorted(xp.flip(b), flat, side=side)
    return xp.reshape(xp.astype(r, dt.int64), xa.shape)


def _edges(col: Any, bins: Any, rng: Any, fname: str) -> Any:
    xp = _xp()
    fl = col.device.default_float
    bins = _host_scalar(bins)         # a 0-d array is a number of bins, as in NumPy
    if is_array(bins) or np.ndim(bins) == 1:
        e = xp.astype(_arr(bins, col.device), fl) if not is_array(bins) or \
            dkind(bins.dtype) != "f" else bins
        if e.ndim != 1 or (e.shape[0] > 1 and not bool(xp.all(e[1:] >= e[:-1]))):
            raise ValueError(f"{fname}: bins must be monotonically increasing, when an array")
        return e
    nb = operator.index(bins)
    if nb < 1:
        raise ValueError(f"{fname}: the number of bins must be a positive integer; got {nb}")
    if rng is None:
        if col.size == 0:
            lo, hi = 0.0, 1.0
        else:
            lo, hi = float(xp.min(col)), float(xp.max(col))
    else:
        lo, hi = float(rng[0]), float(rng[1])
        if lo > hi:
            raise ValueError(f"{fname}: max must be larger than min in range parameter")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"{fname}: autodetected range of [{lo}, {hi}] is not finite")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    # NumPy's edges take a floating sample's dtype (float32 edges for float32 data)
    return xp.linspace(lo, hi, nb + 1, dtype=col.dtype if col.dtype.kind == "f" else fl,
                       device=col.device)


def histogramdd(sample: Any, bins: Any = 10, range: Any = None, density: Any = None,
                weights: Any = None) -> tuple[Any, list[Any]]:
    """A multidimensional histogram (NumPy's ``histogramdd``).

    Parameters
    ----------
    sample : (N, D) array_like, or sequence of D 1-D arrays
        The points.
    bins : int, sequence of int, or sequence of 1-D edge arrays, optional
        Bins per dimension.
    range : sequence of (lower, upper), optional
        Per-dimension bounds (default: the data's, read from the device).
    density : bool, optional
        Normalise to a probability density.
    weights : (N,) array_like, optional
        Per-point weights.

    Returns
    -------
    hist : Array
        Float counts of shape ``(nbins_0, ..., nbins_{D-1})``.
    edges : list of Array
        The bin edges per dimension.

    Raises
    ------
    ValueError
        When the numbers of bins, ranges and dimensions disagree.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> h, e = np.histogramdd(np.asarray([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]]), bins=2)
    >>> print(numpy.asarray(h))
    [[1. 0.]
     [1. 1.]]
    """
    xp = _xp()
    dev = _device_of(sample, weights)
    if is_array(sample) or isinstance(sample, np.ndarray):
        s = _arr(sample, dev)
        s = xp.reshape(s, (-1, 1)) if s.ndim == 1 else s
    else:
        s = xp.stack([_arr(c, dev) for c in sample], axis=1)
    if s.ndim != 2:
        raise ValueError(f"histogramdd: sample must be (N, D); got shape {s.shape}")
    n, d = s.shape
    s = _inexact(s)
    bins = _host_scalar(bins)         # a 0-d array is a number of bins, as in NumPy
    if isinstance(bins, (int, np.integer)):
        bins = [bins] * d
    if len(bins) != d:
        raise ValueError("histogramdd: the dimension of bins must be equal to the dimension "
                         "of the sample x")
    if range is not None and len(range) != d:
        raise ValueError("histogramdd: range argument must have one entry per dimension")
    rng = range if range is not None else [None] * d
    edges = [_edges(s[:, i], bins[i], rng[i], "histogramdd") for i in builtins.range(d)]
    nbin = [e.shape[0] + 1 for e in edges]
    flat = None
    for i, e in enumerate(edges):
        col = xp.astype(s[:, i], e.dtype)
        cnt = xp.searchsorted(e, col, side="right")
        cnt = xp.where(col == e[-1], cnt - 1, cnt)
        cnt = xp.astype(cnt, dt.int64)
        flat = cnt if flat is None else flat * nbin[i] + cnt
    w = None if weights is None else _arr(weights, s.device)
    total = math.prod(nbin)
    if n == 0:
        hist = xp.zeros(tuple(nbin), dtype=s.device.default_float, device=s.device)
    else:
        hist = xp.reshape(xp.bincount(flat, weights=w, minlength=total), tuple(nbin))
    core = tuple(slice(1, -1) for _ in builtins.range(d))
    hist = hist[core]
    if dkind(hist.dtype) in "iub":
        hist = xp.astype(hist, s.device.default_float)
    if density:
        s_ = xp.sum(hist)
        for i, e in enumerate(edges):
            shape = [1] * d
            shape[i] = e.shape[0] - 1
            hist = hist / xp.reshape(e[1:] - e[:-1], tuple(shape))
        hist = hist / s_
    return hist, edges


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None, density: Any = None,
                weights: Any = None) -> tuple[Any, Any, Any]:
    """The 2-D histogram of two samples (NumPy's ``histogram2d``).

    Parameters
    ----------
    x, y : array_like
        Coordinates of the points (same length).
    bins : int, [int, int], array_like or [array, array], optional
        Bins per dimension.
    range : [[xmin, xmax], [ymin, ymax]], optional
        Bounds.
    density : bool, optional
        Normalise to a probability density.
    weights : array_like, optional
        Per-point weights.

    Returns
    -------
    H : Array
        Float counts, x along the first axis.
    xedges, yedges : Array
        The edges.

    Raises
    ------
    ValueError
        When ``x`` and ``y`` differ in length.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> H, xe, ye = np.histogram2d([0.0, 1.0, 1.0], [0.0, 1.0, 0.0], bins=2)
    >>> print(numpy.asarray(H))
    [[1. 0.]
     [1. 1.]]
    """
    dev = _device_of(x, y)
    xa, ya = _arr(x, dev), _arr(y, dev)
    if xa.shape != ya.shape or xa.ndim != 1:
        raise ValueError(f"histogram2d: x and y must be 1-D of one length; got shapes "
                         f"{xa.shape} and {ya.shape}")
    bins = _host_scalar(bins)         # a 0-d array is a number of bins, as in NumPy
    nb = 1 if isinstance(bins, (int, np.integer)) else len(bins)
    if nb != 1 and nb != 2:
        bins = [bins, bins]
    elif nb == 1 and not isinstance(bins, (int, np.integer)):
        bins = [bins, bins]
    hist, edges = histogramdd([xa, ya], bins, range, density, weights)
    return hist, edges[0], edges[1]


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """The gradient by central differences inside and one-sided differences at the
    boundaries (NumPy's ``gradient``).

    Parameters
    ----------
    f : array_like
        Samples.
    *varargs : scalars or 1-D arrays, optional
        Spacing: one scalar for all axes, one per axis, or coordinate arrays.
    axis : int or tuple of int, optional
        The axes (default all).
    edge_order : {1, 2}, optional
        Accuracy order at the boundaries.

    Returns
    -------
    Array or tuple of Array
        One array per axis (a single array for one axis).

    Raises
    ------
    ValueError
        When an axis is too short for ``edge_order`` or the spacing does not fit.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.gradient([1.0, 2.0, 4.0, 7.0, 11.0, 16.0])))
    [1.  1.5 2.5 3.5 4.5 5. ]
    """
    xp = _xp()
    a = _arr(f)
    if a.dtype == dt.bool_:           # NumPy: boolean subtract is not supported
        raise TypeError("gradient: not supported for dtype bool (cast to a numeric dtype "
                        "first)")
    if dkind(a.dtype) not in "fc":
        a = xp.astype(a, a.device.default_float)
    n = a.ndim
    axes = tuple(builtins.range(n)) if axis is None else tuple(
        normalize_axis(ax, n, "gradient") for ax in np.atleast_1d(axis))
    if len(varargs) == 0:
        dx: list[Any] = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0 and not (
            is_array(varargs[0]) and varargs[0].ndim):
        dx = [float(varargs[0])] * len(axes)
    elif len(varargs) == len(axes):
        dx = list(varargs)
    else:
        raise TypeError("gradient: invalid number of arguments")
    if edge_order not in (1, 2):
        raise ValueError("gradient: 'edge_order' greater than 2 not supported")
    outs = []
    for ax, d in zip(axes, dx):
        m = a.shape[ax]
        if m < edge_order + 1:
            raise ValueError("gradient: shape of array too small to calculate a numerical "
                             "gradient, at least (edge_order + 1) elements are required")

        def sl(s: slice, ax: int = ax) -> Any:
            key = [slice(None)] * n
            key[ax] = s
            return a[tuple(key)]
        shp = [1] * n
        shp[ax] = -1
        uniform = np.ndim(d) == 0 and not (is_array(d) and d.ndim)
        if not uniform:
            dd = _arr(d, a.device)
            if dd.ndim != 1 or dd.shape[0] != m:
                raise ValueError("gradient: when 1d, distances must match the length of the "
                                 "corresponding dimension")
            dd = xp.astype(dd, a.dtype) if dkind(a.dtype) == "f" else _inexact(dd)
            h = dd[1:] - dd[:-1]
        if uniform:
            dv = float(d)
            mid = (sl(slice(2, None)) - sl(slice(None, -2))) / (2.0 * dv)
            if edge_order == 1:
                first = (sl(slice(1, 2)) - sl(slice(0, 1))) / dv
                last = (sl(slice(-1, None)) - sl(slice(-2, -1))) / dv
            else:
                first = (-1.5 * sl(slice(0, 1)) + 2.0 * sl(slice(1, 2))
                         - 0.5 * sl(slice(2, 3))) / dv
                last = (0.5 * sl(slice(-3, -2)) - 2.0 * sl(slice(-2, -1))
                        + 1.5 * sl(slice(-1, None))) / dv
        else:
            h1 = xp.reshape(h[:-1], tuple(shp))
            h2 = xp.reshape(h[1:], tuple(shp))
            aa = -h2 / (h1 * (h1 + h2))
            bb = (h2 - h1) / (h1 * h2)
            cc = h1 / (h2 * (h1 + h2))
            mid = aa * sl(slice(None, -2)) + bb * sl(slice(1, -1)) + cc * sl(slice(2, None))
            if edge_order == 1:
                first = (sl(slice(1, 2)) - sl(slice(0, 1))) / h[0]
                last = (sl(slice(-1, None)) - sl(slice(-2, -1))) / h[-1]
            else:
                d1, d2 = h[0], h[1]
                first = (-(2.0 * d1 + d2) / (d1 * (d1 + d2)) * sl(slice(0, 1))
                         + (d1 + d2) / (d1 * d2) * sl(slice(1, 2))
                         - d1 / (d2 * (d1 + d2)) * sl(slice(2, 3)))
                d1, d2 = h[-2], h[-1]
                last = (d2 / (d1 * (d1 + d2)) * sl(slice(-3, -2))
                        - (d2 + d1) / (d1 * d2) * sl(slice(-2, -1))
                        + (2.0 * d2 + d1) / (d2 * (d1 + d2)) * sl(slice(-1, None)))
        outs.append(xp.astype(xp.concat([first, mid, last], axis=ax), a.dtype))
    return outs[0] if len(outs) == 1 else tuple(outs)


def correlate(a: Any, v: Any, mode: str = "valid") -> Any:
    """Cross-correlation of two 1-D sequences, ``c[k] = sum_n a[n+k] conj(v[n])``
    (NumPy's ``correlate``).

    Parameters
    ----------
    a, v : 1-D array_like
        Inputs.
    mode : {'valid', 'same', 'full'}, optional
        Output extent (as for ``convolve``).

    Returns
    -------
    Array
        The correlation.

    Raises
    ------
    ValueError
        When an input is empty or not 1-D, or ``mode`` is unknown.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.correlate([1.0, 2.0, 3.0], [0.0, 1.0, 0.5], "full")))
    [0.5 2.  3.5 3.  0. ]
    """
    from .interpolation import convolve
    xp = _xp()
    dev = _device_of(a, v)
    va = _arr(v, dev)
    aa = _arr(a, dev)
    if va.ndim != 1 or aa.ndim != 1:
        raise ValueError(f"correlate: object too deep for desired array; got shapes "
                         f"{aa.shape} and {va.shape}")
    vr = xp.flip(va)
    if dkind(vr.dtype) == "c":
        vr = xp.conj(vr)
    if mode == "same" and va.shape[0] > aa.shape[0]:
        # NumPy swaps the operands (the longer first) and reverses and conjugates the result,
        # which centres the 'same' window differently for an even length difference
        ar = xp.flip(aa)
        if dkind(ar.dtype) == "c":
            ar = xp.conj(ar)
        res = xp.flip(convolve(va, ar, mode))
        return xp.conj(res) if dkind(res.dtype) == "c" else res
    return convolve(aa, vr, mode)


def kron(a: Any, b: Any) -> Any:
    """Kronecker product: blocks of ``b`` scaled by the elements of ``a`` (NumPy's
    ``kron``).

    Parameters
    ----------
    a, b : array_like
        Inputs (the one with fewer dimensions gets leading ones).

    Returns
    -------
    Array
        Of shape ``a.shape * b.shape`` elementwise.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.kron([1, 10, 100], [5, 6, 7])))
    [  5   6   7  50  60  70 500 600 700]
    """
    xp = _xp()
    dev = _device_of(a, b)
    x, y = _arr(a, dev), _arr(b, dev)
    nd = max(x.ndim, y.ndim)
    sa = (1,) * (nd - x.ndim) + x.shape
    sb = (1,) * (nd - y.ndim) + y.shape
    xr = xp.reshape(x, tuple(v for s in sa for v in (s, 1)))
    yr = xp.reshape(y, tuple(v for s in sb for v in (1, s)))
    return xp.reshape(xr * yr, tuple(p * q for p, q in zip(sa, sb)))


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Any:
    """Cross product of 3-vectors (or 2-vectors, deprecated in NumPy 2) (NumPy's
    ``cross``).

    Parameters
    ----------
    a, b : array_like
        Vectors along ``axisa`` / ``axisb``, broadcast over the other axes.
    axisa, axisb, axisc : int, optional
        The vector axes of ``a``, ``b`` and the result.
    axis : int, optional
        Overrides all three.

    Returns
    -------
    Array
        The cross products (a scalar per pair when both are 2-vectors).

    Raises
    ------
    ValueError
        When a vector dimension is not 2 or 3.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.cross([1, 2, 3], [4, 5, 6])))
    [-3  6 -3]
    """
    xp = _xp()
    if axis is not None:
        axisa = axisb = axisc = axis
    dev = _device_of(a, b)
    x, y = _arr(a, dev), _arr(b, dev)
    a_shape, b_shape = x.shape, y.shape
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError("cross: at least one array has zero dimension")
    x = xp.moveaxis(x, normalize_axis(axisa, x.ndim, "cross"), -1)
    y = xp.moveaxis(y, normalize_axis(axisb, y.ndim, "cross"), -1)
    na, nb = x.shape[-1], y.shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError(f"cross: incompatible dimensions for cross product (dimension must "
                         f"be 2 or 3); got shapes {tuple(a_shape)} and {tuple(b_shape)} with "
                         f"vectors of length {na} and {nb}")
    if na == 2 or nb == 2:
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of "
                      "3-dimensional vectors instead. (deprecated in NumPy 2.0)",
                      DeprecationWarning, stacklevel=user_stacklevel())
    d = xp.result_type(x, y)
    x, y = xp.astype(x, d), xp.astype(y, d)
    a0, a1 = x[..., 0], x[..., 1]
    b0, b1 = y[..., 0], y[..., 1]
    if na == 2 and nb == 2:
        return a0 * b1 - a1 * b0
    zero = xp.zeros((), dtype=d, device=x.device)
    a2 = x[..., 2] if na == 3 else zero
    b2 = y[..., 2] if nb == 3 else zero
    c = xp.stack(xp.broadcast_arrays(a1 * b2 - a2 * b1, a2 * b0 - a0 * b2,
                                     a0 * b1 - a1 * b0), axis=-1)
    return xp.moveaxis(c, -1, normalize_axis(axisc, c.ndim, "cross"))


def trapezoid(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> Any:
    """Integrate along ``axis`` by the composite trapezoidal rule (NumPy's ``trapezoid``).

    Parameters
    ----------
    y : array_like
        Samples.
    x : array_like, optional
        Sample points (1-D along ``axis``, or of ``y``'s shape).
    dx : float, optional
        Spacing when ``x`` is None.
    axis : int, optional
        The axis.

    Returns
    -------
    Array
        The integral (0-d for 1-D ``y``).

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(float(np.trapezoid([1.0, 2.0, 3.0], x=[4.0, 6.0, 8.0])))
    8.0
    """
    xp = _xp()
    dev = _device_of(y, x)
    ya = _arr(y, dev)
    if dkind(ya.dtype) not in "fc":
        ya = xp.astype(ya, ya.device.default_float)
    ax = normalize_axis(axis, ya.ndim, "trapezoid")
    key1 = [slice(None)] * ya.ndim
    key2 = [slice(None)] * ya.ndim
    key1[ax], key2[ax] = slice(1, None), slice(None, -1)
    if x is None:
        d: Any = dx
    else:
        xa = _inexact(_arr(x, dev))
        if xa.ndim == 1:
            d = xa[1:] - xa[:-1]
            shp = [1] * ya.ndim
            shp[ax] = d.shape[0]
            d = xp.reshape(d, tuple(shp))
        else:
            k1 = [slice(None)] * xa.ndim
            k2 = [slice(None)] * xa.ndim
            k1[ax], k2[ax] = slice(1, None), slice(None, -1)
            d = xa[tuple(k1)] - xa[tuple(k2)]
    return xp.sum(d * (ya[tuple(key1)] + ya[tuple(key2)]) / 2.0, axis=ax)


def unwrap(p: Any, discont: Any = None, axis: int = -1, *, period: float = 2 * math.pi) -> Any:
    """Unwrap phase jumps larger than ``discont`` by adding multiples of ``period``
    (NumPy's ``unwrap``).

    Parameters
    ----------
    p : array_like
        Phases.
    discont : float, optional
        Jump threshold (default ``period / 2``).
    axis : int, optional
        The axis.
    period : float, optional
        The period (default ``2 pi``).

    Returns
    -------
    Array
        The unwrapped phases.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.unwrap([0, 1, 2, 3, 4, 5, 6, 0, 1], period=6)))
    [0 1 2 3 4 5 6 6 7]
    """
    xp = _xp()
    a = _arr(p)
    ax = normalize_axis(axis, a.ndim, "unwrap")
    if a.dtype.kind == "c":           # NumPy's remainder refuses it
        raise TypeError(f"unwrap: p must be real; got dtype {a.dtype}")
    n = a.shape[ax]
    key1 = [slice(None)] * a.ndim
    key0 = [slice(None)] * a.ndim
    key1[ax], key0[ax] = slice(1, None), slice(None, -1)
    dd = a[tuple(key1)] - a[tuple(key0)]
    if discont is None:
        discont = period / 2
    rdt = np.result_type(np.dtype(dd.dtype), np.asarray(period).dtype) \
        if not isinstance(period, float) else (dd.dtype if dkind(dd.dtype) in "fc"
                                              else a.device.default_float)
    if rdt.kind in "iu":
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        high = period / 2
        ambiguous = True
    low = -high
    ddc = xp.astype(dd, rdt)
    ddmod = xp.remainder(ddc - low, xp.asarray(period, dtype=rdt, device=a.device)) + low
    if ambiguous:
        ddmod = xp.where((ddmod == low) & (ddc > 0), xp.asarray(high, dtype=rdt,
                                                                device=a.device), ddmod)
    corr = ddmod - ddc
    corr = xp.where(xp.abs(ddc) < discont, xp.zeros_like(corr), corr)
    up = xp.astype(a, rdt)
    if n < 2:
        return xp.asarray(up, copy=True)
    tail = up[tuple(key1)] + xp.cumsum(corr, axis=ax)
    return xp.concat([up[tuple([slice(None)] * ax + [slice(0, 1)])], tail], axis=ax)


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:
    """The Vandermonde matrix: columns are powers of ``x`` (NumPy's ``vander``).

    Parameters
    ----------
    x : 1-D array_like
        Input.
    N : int, optional
        Number of columns (default ``len(x)``).
    increasing : bool, optional
        Powers left to right increasing instead of decreasing.

    Returns
    -------
    Array
        ``(len(x), N)``, of ``x``'s dtype promoted with int64 as NumPy does (a cumulative
        product, exact for integers).

    Raises
    ------
    ValueError
        When ``x`` is not 1-D.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.vander([1, 2, 3], 3)))
    [[1 1 1]
     [4 2 1]
     [9 3 1]]
    """
    xp = _xp()
    a = _arr(x)
    if a.ndim != 1:
        raise ValueError(f"vander: x must be a one-dimensional array or sequence; got shape "
                         f"{a.shape}")
    n = a.shape[0] if N is None else operator.index(N)
    if n < 0:
        raise ValueError(f"vander: N must be non-negative; got {n}")
    # NumPy's dtype: x's promoted with the default int (float32 gives float64), where the
    # device has it
    d = np.promote_types(a.dtype, dt.int64)
    if not a.device.supports(d):
        d = a.dtype if a.dtype != dt.bool_ else dt.int32
    a = xp.astype(a, d)
    if n == 0:
        return xp.zeros((a.shape[0], 0), dtype=d, device=a.device)
    ones = xp.ones((a.shape[0], 1), dtype=d, device=a.device)
    cols = xp.concat([ones, xp.broadcast_to(a[:, None], (a.shape[0], n - 1))], axis=1)
    v = xp.cumprod(cols, axis=1)
    return v if increasing else xp.flip(v, axis=1)


def _bit_axis(a: Any, axis: Any) -> tuple[Any, int]:
    xp = _xp()
    if axis is None:
        return xp.reshape(a, (-1,)), 0
    return a, normalize_axis(axis, a.ndim, "bit_axis")


def packbits(a: Any, /, axis: int | None = None, bitorder: str = "big") -> Any:
    """Pack a binary-valued array into uint8 bytes along ``axis`` (NumPy's ``packbits``).

    Parameters
    ----------
    a : array_like of bool or int
        Nonzero is 1.
    axis : int, optional
        The axis (default: the flattened array).
    bitorder : {'big', 'little'}, optional
        Bit order within each byte.

    Returns
    -------
    Array
        uint8, the axis length ``ceil(n / 8)`` (zero padded).

    Raises
    ------
    TypeError
        For floating-point input.
    ValueError
        When ``bitorder`` is unknown.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.packbits([1, 0, 1, 1, 0, 0, 0, 0, 1])))
    [176 128]
    """
    xp = _xp()
    if bitorder not in ("big", "little"):
        raise ValueError("packbits: 'order' must be either 'little' or 'big'")
    x = _arr(a)
    if dkind(x.dtype) not in "biu":
        raise TypeError(f"packbits: Expected an input array of integer or boolean data type; "
                        f"got {x.dtype}")
    x, ax = _bit_axis(x, axis)
    x = xp.moveaxis(xp.astype(x != 0, dt.uint8), ax, -1)
    n = x.shape[-1]
    pad = (-n) % 8
    if pad:
        x = xp.concat([x, xp.zeros(x.shape[:-1] + (pad,), dtype=dt.uint8, device=x.device)],
                      axis=-1)
    x = xp.reshape(x, x.shape[:-1] + ((n + pad) // 8, 8))
    w = [128, 64, 32, 16, 8, 4, 2, 1] if bitorder == "big" else [1, 2, 4, 8, 16, 32, 64, 128]
    wa = xp.asarray(w, dtype=dt.uint8, device=x.device)
    packed = xp.sum(x * wa, axis=-1, dtype=dt.uint8)
    return xp.moveaxis(packed, -1, ax)


def unpackbits(a: Any, /, axis: int | None = None, count: int | None = None,
               bitorder: str = "big") -> Any:
    """Unpack uint8 bytes into bits along ``axis`` (NumPy's ``unpackbits``).

    Parameters
    ----------
    a : array_like of uint8
        Input.
    axis : int, optional
        The axis (default: the flattened array).
    count : int, optional
        How many bits to keep (negative: drop from the end; more than available: zero pad).
    bitorder : {'big', 'little'}, optional
        Bit order within each byte.

    Returns
    -------
    Array
        uint8 zeros and ones.

    Raises
    ------
    TypeError
        When ``a`` is not uint8.
    ValueError
        When ``-count`` exceeds the number of bits along the axis.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.unpackbits(np.asarray([2, 7], dtype=np.uint8))))
    [0 0 0 0 0 0 1 0 0 0 0 0 0 1 1 1]
    """
    xp = _xp()
    if bitorder not in ("big", "little"):
        raise ValueError("unpackbits: 'order' must be either 'little' or 'big'")
    x = _arr(a)
    if x.dtype != dt.uint8:
        raise TypeError(f"unpackbits: Expected an input array of unsigned byte data type; "
                        f"got {x.dtype}")
    x, ax = _bit_axis(x, axis)
    x = xp.moveaxis(x, ax, -1)
    sh = [7, 6, 5, 4, 3, 2, 1, 0] if bitorder == "big" else [0, 1, 2, 3, 4, 5, 6, 7]
    s = xp.asarray(sh, dtype=dt.uint8, device=x.device)
    bits = (x[..., None] >> s) & xp.asarray(1, dtype=dt.uint8, device=x.device)
    bits = xp.reshape(bits, x.shape[:-1] + (x.shape[-1] * 8,))
    if count is not None:
        total = bits.shape[-1]
        c = operator.index(count)
        if -c > total:
            raise ValueError(f"unpackbits: -count larger than number of elements (count={c} "
                             f"with {total} bits along the axis)")
        keep = total + c if c < 0 else c
        if keep <= total:
            bits = bits[..., :keep]
        else:
            bits = xp.concat([bits, xp.zeros(bits.shape[:-1] + (keep - total,),
                                             dtype=dt.uint8, device=x.device)], axis=-1)
    return xp.moveaxis(bits, -1, ax)
