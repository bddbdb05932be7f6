"""The Array API ``fft`` extension: discrete Fourier transforms computed on the device.

Every transform is built from the one-dimensional ``fft`` primitive (mixed-radix Stockham
FFTs, Bluestein's algorithm for lengths with prime factors above 7). Real floating-point
input to the complex transforms is promoted to the complex dtype of the same precision
(float32 -> complex64, float64 -> complex128); float16 computes in single precision.
Integer and boolean inputs are rejected with a TypeError. The n-dimensional transforms
apply the one-dimensional ones axis after axis in NumPy's order.
"""
from __future__ import annotations

import operator
from typing import Any, Literal, Optional, Sequence, Union

from ._core import dtypes as dt
from ._array_api.creation import _device, _dtype, arange
from ._array_api.elementwise import multiply, subtract, where, greater_equal
from ._core.checks import check_array, is_array, normalize_axes, normalize_axis
from ._array_api.manipulation import roll
from ._core.prims import primitive
from ._core.namespace import namespace as _namespace

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft",
           "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
__all__ += ["fft2", "ifft2", "rfft2", "irfft2"]   # NumPy's 2-D spellings of the n-D functions

_NORMS = ("backward", "ortho", "forward")
Norm = Literal["backward", "ortho", "forward"]


# ------------------------------------------------------------------------------ checks
def _check_norm(norm: Any, fname: str) -> str:
    if norm is None:        # NumPy's spelling of the default
        return "backward"
    if norm not in _NORMS:
        raise ValueError(f"{fname}: invalid norm {norm!r}; expected 'backward', 'ortho' or "
                         f"'forward'")
    return norm


def _check_input(x: Any, fname: str, real_only: bool = False) -> Any:
    """``x`` as a float32/float64/complex64/complex128 array (float16/bfloat16 are widened)."""
    check_array(x, fname)
    d = x.dtype
    if real_only and dt.kind(d) != "f":
        raise TypeError(f"{fname}: x must have a real floating-point data type; got {d}")
    if dt.kind(d) not in "fc":
        raise TypeError(f"{fname}: x must have a floating-point data type; got {d}")
    if d in dt.HALF:
        x = primitive("convert_element_type").bind(x, dtype=dt.float32)
    return x


def _check_n(n: Any, fname: str, what: str = "n") -> int:
    if isinstance(n, bool):
        raise TypeError(f"{fname}: {what} must be an integer; got bool")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{fname}: {what} must be an integer; got "
                        f"{type(n).__name__}") from None
    if n < 1:
        raise ValueError(f"{fname}: invalid number of data points ({n}); {what} must be "
                         f"at least 1")
    return n


def _complex_of(x: Any) -> Any:
    return dt.complex128 if x.dtype in (dt.float64, dt.complex128) else dt.complex64


def _one(x: Any, fname: str, n: Any, axis: Any, norm: Any, kind: str, inverse: bool,
         real_only: bool = False) -> Any:
    norm = _check_norm(norm, fname)
    x = _check_input(x, fname, real_only)
    a = normalize_axis(axis, x.ndim, fname)
    if n is None:
        m = x.shape[a]
        n = 2 * (m - 1) if kind == "c2r" else m
        if n < 1:
            raise ValueError(f"{fname}: invalid number of data points ({n}) for an axis of "
                             f"length {m}; pass n explicitly")
    else:
        n = _check_n(n, fname)
    return primitive("fft").bind(x, axis=a, n=n, kind=kind, inverse=inverse, norm=norm)


def _cook(x: Any, s: Any, axes: Any, fname: str, c2r: bool) -> tuple[list[int], list[int]]:
    """Sizes and axes of an n-dimensional transform, as NumPy's ``_cook_nd_args``: without
    ``axes`` the last ``len(s)`` axes (all axes without ``s``); ``-1`` in ``s`` keeps the
    input's length; c2r transforms without ``s`` give ``2 * (m - 1)`` points on the last
    axis."""
    if axes is None:
        ax = list(range(x.ndim)) if s is None else list(range(x.ndim - len(s), x.ndim))
    else:
        if isinstance(axes, int) or not isinstance(axes, (Sequence,)):
            raise TypeError(f"{fname}: axes must be a sequence of ints; got {axes!r}")
        ax = [normalize_axis(a, x.ndim, fname) for a in axes]
    if s is None:
        sizes = [x.shape[a] for a in ax]
        if c2r and ax:
            sizes[-1] = 2 * (x.shape[ax[-1]] - 1)
    else:
        if isinstance(s, int) or not isinstance(s, Sequence):
            raise TypeError(f"{fname}: s must be a sequence of ints; got {s!r}")
        if len(s) != len(ax):
            raise ValueError(f"{fname}: s {tuple(s)} and axes {tuple(ax)} must have the same "
                             f"length")
        if len(s) > x.ndim:
            raise ValueError(f"{fname}: s {tuple(s)} has more entries than x has dimensions "
                             f"({x.ndim})")
        sizes = []
        for v, a in zip(s, ax):
            if not isinstance(v, bool) and isinstance(v, int) and v == -1:
                sizes.append(x.shape[a])
            else:
                sizes.append(v)
    return [_check_n(v, fname, "s[i]") for v in sizes], ax


def _many(x: Any, s: Any, axes: Any, norm: Any, fname: str, inverse: bool) -> Any:
    norm = _check_norm(norm, fname)
    x = _check_input(x, fname)
    sizes, ax = _cook(x, s, axes, fname, False)
    if not ax:
        return primitive("convert_element_type").bind(x, dtype=_complex_of(x))
    for n, a in reversed(list(zip(sizes, ax))):
        x = primitive("fft").bind(x, axis=a, n=n, kind="c2c", inverse=inverse, norm=norm)
    return x


# ------------------------------------------------------------------------------ transforms
def fft(x: Any, /, *, n: Optional[int] = None, axis: int = -1, norm: Norm = "backward") -> Any:
    """One-dimensional discrete Fourier transform.

    Parameters
    ----------
    x : array
        Input array.
    n : int, optional
        Number of points: the axis is zero-padded or trimmed to it (default: its
        length).
    axis : int, default -1
        The transformed axis.
    norm : {'backward', 'ortho', 'forward'}, default 'backward'
        Normalisation of the forward transform: none, ``1/sqrt(n)`` or ``1/n``.

    Returns
    -------
    array
        Complex array of ``x``'s precision; the transformed axis has size ``n``.

    Raises
    ------
    TypeError
        ``x`` is not of a floating-point (or, where accepted, complex) dtype.
    ValueError
        ``n`` below 1, or an invalid ``norm``.
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.fft.fft(clnp.asarray([1.0, 2.0, 3.0, 4.0])))
    [10.+0.j -2.+2.j -2.+0.j -2.-2.j]
    """
    return _one(x, "fft", n, axis, norm, "c2c", False)


def ifft(x: Any, /, *, n: Optional[int] = None, axis: int = -1,
         norm: Norm = "backward") -> Any:
    """One-dimensional inverse discrete Fourier transform.

    Parameters
    ----------
    x : array
        Input array.
    n : int, optional
        Number of points: the axis is zero-padded or trimmed to it (default: its
        length).
    axis : int, default -1
        The transformed axis.
    norm : {'backward', 'ortho', 'forward'}, default 'backward'
        Normalisation of the inverse transform: ``1/n``, ``1/sqrt(n)`` or none.

    Returns
    -------
    array
        Complex array of ``x``'s precision.

    Raises
    ------
    TypeError
        ``x`` is not of a floating-point (or, where accepted, complex) dtype.
    ValueError
        ``n`` below 1, or an invalid ``norm``.
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([1.0, 2.0, 3.0, 4.0])
    >>> print(clnp.fft.ifft(clnp.fft.fft(x)).real)
    [1. 2. 3. 4.]
    """
    return _one(x, "ifft", n, axis, norm, "c2c", True)


def fftn(x: Any, /, *, s: Optional[Sequence[int]] = None, axes: Optional[Sequence[int]] = None,
         norm: Norm = "backward") -> Any:
    """N-dimensional discrete Fourier transform.

    Parameters
    ----------
    x : array
        Input array.
    s : sequence of int, optional
        Number of points along each axis of ``axes`` (-1: the input's length; default:
        the input's shape).
    axes : sequence of int, optional
        The transformed axes (default: all, or the last ``len(s)``).
    norm : {'backward', 'ortho', 'forward'}, default 'backward'
        As for :func:`fft`, with ``n = prod(s)``.

    Returns
    -------
    array
        Complex array of ``x``'s precision.

    Raises
    ------
    TypeError
        ``x`` is not of a floating-point (or, where accepted, complex) dtype.
    ValueError
        ``n`` below 1, or an invalid ``norm``.
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.fft.fftn(clnp.ones((2, 2))))
    [[4.+0.j 0.+0.j]
     [0.+0.j 0.+0.j]]
    """
    return _many(x, s, axes, norm, "fftn", False)


def ifftn(x: Any, /, *, s: Optional[Sequence[int]] = None,
          axes: Optional[Sequence[int]] = None, norm: Norm = "backward") -> Any:
    """N-dimensional inverse discrete Fourier transform.

    Parameters
    ----------
    x : array
        Input array.
    s : sequence of int, optional
        Number of points along each axis of ``axes`` (-1: the input's length; default:
        the input's shape).
    axes : sequence of int, optional
        The transformed axes (default: all, or the last ``len(s)``).
    norm : {'backward', 'ortho', 'forward'}, default 'backward'
        Normalisation of the inverse transform: ``1/n``, ``1/sqrt(n)`` or none.

    Returns
    -------
    array
        Complex array of ``x``'s precision.

    Raises
    ------
    TypeError
        ``x`` is not of a floating-point (or, where accepted, complex) dtype.
    ValueError
        ``n`` below 1, or an invalid ``norm``.
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([[1.0, 2.0], [3.0, 4.0]])
    >>> print(clnp.fft.ifftn(clnp.fft.fftn(x)).real)
    [[1. 2.]
     [3. 4.]]
    """
    return _many(x, s, axes, norm, "ifftn", True)


def rfft(x: Any, /, *, n: Optional[int] = None, axis: int = -1,
         norm: Norm = "backward") -> Any:
    """One-dimensional discrete Fourier transform of real input.

    Parameters
    ----------
    x : array
        Array of a real floating-point dtype.
    n : int, optional
        Number of points: the axis is zero-padded or trimmed to it (default: its
        length).
    axis : int, default -1
        The transformed axis.
    norm : {'backward', 'ortho', 'forward'}, default 'backward'
        Normalisation of the forward transform: none, ``1/sqrt(n)`` or ``1/n``.

    Returns
    -------
    array
        Complex array of ``x``'s precision holding the ``n // 2 + 1`` non-negative
        frequencies along ``axis``.

    Raises
    ------
    TypeError
        ``x`` is not of a real floating-point dtype.
    ValueError
        ``n`` below 1, or an invalid ``norm``.
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.fft.rfft(clnp.asarray([1.0, 2.0, 3.0, 4.0])))
    [10.+0.j -2.+2.j -2.+0.j]
    """
    return _one(x, "rfft", n, axis, norm, "r2c", False, real_only=True)


def irfft(x: Any, /, *, n: Optional[int] = None, axis: int = -1,
          norm: Norm = "backward") -> Any:
    """Inverse of :func:`rfft`.

    Parameters
    ----------
    x : array
        Complex array of the non-negative frequencies.
    n : int, optional
        Length of the real output (default ``2 * (m - 1)`` for an axis of length ``m``);
        the first ``n // 2 + 1`` input values are used (zero-padded when fewer).
    axis : int, default -1
        The transformed axis.
    norm : {'backward', 'ortho', 'forward'}, default 'backward'
        Normalisation of the inverse transform: ``1/n``, ``1/sqrt(n)`` or none.

    Returns
    -------
    array
        Real array of ``x``'s precision.

    Raises
    ------
    TypeError
        ``x`` is not of a floating-point (or, where accepted, complex) dtype.
    ValueError
        ``n`` below 1, or an invalid ``norm``.
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.fft.irfft(clnp.fft.rfft(clnp.asarray([1.0, 2.0, 3.0, 4.0]))))
    [1. 2. 3. 4.]
    """
    return _one(x, "irfft", n, axis, norm, "c2r", True)


def rfftn(x: Any, /, *, s: Optional[Sequence[int]] = None,
          axes: Optional[Sequence[int]] = None, norm: Norm = "backward") -> Any:
    """N-dimensional discrete Fourier transform of real input.

    Parameters
    ----------
    x : array
        Array of a real floating-point dtype.
    s : sequence of int, optional
        Number of points along each axis of ``axes`` (-1: the input's length; default:
        the input's shape).
    axes : sequence of int, optional
        The transformed axes (default: all, or the last ``len(s)``).
    norm : {'backward', 'ortho', 'forward'}, default 'backward'
        Normalisation of the forward transform: none, ``1/sqrt(n)`` or ``1/n``.

    Returns
    -------
    array
        A real transform on the last axis of ``axes`` (which gets ``s[-1] // 2 + 1``
        values), complex transforms on the others.

    Raises
    ------
    TypeError
        ``x`` is not of a real floating-point dtype.
    ValueError
        Invalid ``s``, ``axes`` or ``norm``.

    Examples
    --------
    >>> import clnp
    >>> clnp.fft.rfftn(clnp.ones((2, 4))).shape
    (2, 3)
    """
    norm = _check_norm(norm, "rfftn")
    x = _check_input(x, "rfftn", real_only=True)
    sizes, ax = _cook(x, s, axes, "rfftn", False)
    if not ax:
        return primitive("convert_element_type").bind(x, dtype=_complex_of(x))
    x = primitive("fft").bind(x, axis=ax[-1], n=sizes[-1], kind="r2c", inverse=False,
                              norm=norm)
    for n, a in zip(sizes[:-1], ax[:-1]):
        x = primitive("fft").bind(x, axis=a, n=n, kind="c2c", inverse=False, norm=norm)
    return x


def irfftn(x: Any, /, *, s: Optional[Sequence[int]] = None,
           axes: Optional[Sequence[int]] = None, norm: Norm = "backward") -> Any:
    """Inverse of :func:`rfftn`.

    Parameters
    ----------
    x : array
        Complex array.
    s : sequence of int, optional
        Output sizes (default: the input's, ``2 * (m - 1)`` on the last axis).
    axes : sequence of int, optional
        The transformed axes (default: all, or the last ``len(s)``).
    norm : {'backward', 'ortho', 'forward'}, default 'backward'
        Normalisation of the inverse transform: ``1/n``, ``1/sqrt(n)`` or none.

    Returns
    -------
    array
        Real array: inverse complex transforms on all but the last axis of ``axes``,
        then :func:`irfft` on it.

    Raises
    ------
    TypeError
        ``x`` is not of a floating-point (or, where accepted, complex) dtype.
    ValueError
        ``n`` below 1, or an invalid ``norm``.
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> clnp.fft.irfftn(clnp.fft.rfftn(clnp.ones((2, 4)))).shape
    (2, 4)
    """
    norm = _check_norm(norm, "irfftn")
    x = _check_input(x, "irfftn")
    sizes, ax = _cook(x, s, axes, "irfftn", True)
    if not ax:
        return primitive("convert_element_type").bind(
            x, dtype=dt.float64 if x.dtype in (dt.float64, dt.complex128) else dt.float32)
    for n, a in zip(sizes[:-1], ax[:-1]):
        x = primitive("fft").bind(x, axis=a, n=n, kind="c2c", inverse=True, norm=norm)
    return primitive("fft").bind(x, axis=ax[-1], n=sizes[-1], kind="c2r", inverse=True,
                                 norm=norm)


def hfft(x: Any, /, *, n: Optional[int] = None, axis: int = -1,
         norm: Norm = "backward") -> Any:
    """Discrete Fourier transform of a Hermitian signal given by its first ``n // 2 + 1`` values.

    Parameters
    ----------
    x : array
        Input array.
    n : int, optional
        Length of the real output (default ``2 * (m - 1)``).
    axis : int, default -1
        The transformed axis.
    norm : {'backward', 'ortho', 'forward'}, default 'backward'
        Normalisation of the forward transform: none, ``1/sqrt(n)`` or ``1/n``.

    Returns
    -------
    array
        ``n`` real values.

    Raises
    ------
    TypeError
        ``x`` is not of a floating-point (or, where accepted, complex) dtype.
    ValueError
        ``n`` below 1, or an invalid ``norm``.
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.fft.hfft(clnp.asarray([1.0, 2.0, 3.0])))
    [ 8. -2.  0. -2.]
    """
    return _one(x, "hfft", n, axis, norm, "c2r", False)


def ihfft(x: Any, /, *, n: Optional[int] = None, axis: int = -1,
          norm: Norm = "backward") -> Any:
    """Inverse discrete Fourier transform of a signal with Hermitian symmetry.

    Parameters
    ----------
    x : array
        Real array.
    n : int, optional
        Number of points: the axis is zero-padded or trimmed to it (default: its
        length).
    axis : int, default -1
        The transformed axis.
    norm : {'backward', 'ortho', 'forward'}, default 'backward'
        Normalisation of the inverse transform: ``1/n``, ``1/sqrt(n)`` or none.

    Returns
    -------
    array
        Complex array of the ``n // 2 + 1`` non-negative frequencies.

    Raises
    ------
    TypeError
        ``x`` is not of a floating-point (or, where accepted, complex) dtype.
    ValueError
        ``n`` below 1, or an invalid ``norm``.
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.fft.ihfft(clnp.asarray([1.0, 2.0, 3.0, 4.0])))
    [ 2.5+0.j  -0.5-0.5j -0.5+0.j ]
    """
    return _one(x, "ihfft", n, axis, norm, "r2c", True, real_only=True)


# ------------------------------------------------------------------------------ helpers
def _freq(n: Any, d: Any, dtype: Any, device: Any, fname: str, full: bool) -> Any:
    if isinstance(n, bool):
        raise TypeError(f"{fname}: n must be an integer; got bool")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{fname}: n must be an integer; got {type(n).__name__}") from None
    if n < 1:
        raise ValueError(f"{fname}: n must be at least 1; got {n}")
    if isinstance(d, bool) or not isinstance(d, (int, float)):
        try:
            d = float(d)
        except (TypeError, ValueError):
            raise TypeError(f"{fname}: d must be a real number; got "
                            f"{type(d).__name__}") from None
    dev = _device(device)
    out_dt = _dtype(dtype, dev, fname)
    if out_dt is None:
        out_dt = dev.default_float
    if out_dt not in (dt.float32, dt.float64):
        raise TypeError(f"{fname}: dtype must be a real floating-point data type; got "
                        f"{out_dt}")
    # NumPy: integer frequencies times 1 / (d * n), in double precision where the device has it
    work = dt.float64 if dev.has_fp64 else dt.float32
    val = 1.0 / (n * d)
    k = arange(n if full else n // 2 + 1, dtype=work, device=dev)
    if full:
        k = where(greater_equal(k, (n - 1) // 2 + 1), subtract(k, n), k)
    f = multiply(k, val)
    return f if f.dtype == out_dt else primitive("convert_element_type").bind(f, dtype=out_dt)


def fftfreq(n: int, /, d: float = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """Sample frequencies of the discrete Fourier transform.

    Parameters
    ----------
    n : int
        Window length.
    d : float, default 1.0
        Sample spacing.
    dtype : dtype, optional
        Real floating dtype (default: the default one).
    device : Device, optional
        Where the result lives (default: the default device, or ``x``'s device).

    Returns
    -------
    array
        ``[0, 1, ..., ceil(n/2) - 1, -floor(n/2), ..., -1] / (d * n)``.

    Raises
    ------
    ValueError
        ``n`` is not positive.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.fft.fftfreq(4))
    [ 0.    0.25 -0.5  -0.25]
    """
    return _freq(n, d, dtype, device, "fftfreq", True)


def rfftfreq(n: int, /, d: float = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """Sample frequencies for :func:`rfft` and :func:`irfft`.

    Parameters
    ----------
    n : int
        Window length.
    d : float, default 1.0
        Sample spacing.
    dtype : dtype, optional
        Real floating dtype (default: the default one).
    device : Device, optional
        Where the result lives (default: the default device, or ``x``'s device).

    Returns
    -------
    array
        ``[0, 1, ..., n // 2] / (d * n)`` (the Nyquist frequency is positive).

    Raises
    ------
    ValueError
        ``n`` is not positive.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.fft.rfftfreq(4))
    [0.   0.25 0.5 ]
    """
    return _freq(n, d, dtype, device, "rfftfreq", False)


def _shift(x: Any, axes: Any, fname: str, sign: int) -> Any:
    check_array(x, fname)
    ax = normalize_axes(axes, x.ndim, fname)
    if not ax:
        return primitive("copy").bind(x)
    return roll(x, tuple(sign * (x.shape[a] // 2) for a in ax), axis=ax)


def fftshift(x: Any, /, *, axes: Optional[Union[int, Sequence[int]]] = None) -> Any:
    """Shift the zero-frequency component to the centre of the spectrum.

    Parameters
    ----------
    x : array
        Input array.
    axes : int or sequence of int, optional
        The axes (default: all), each rolled by half its length.

    Returns
    -------
    array
        The shifted array.

    Raises
    ------
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.fft.fftshift(clnp.fft.fftfreq(4)))
    [-0.5  -0.25  0.    0.25]
    """
    return _shift(x, axes, "fftshift", 1)


def ifftshift(x: Any, /, *, axes: Optional[Union[int, Sequence[int]]] = None) -> Any:
    """Inverse of :func:`fftshift` (they differ by one sample along odd-length axes).

    Parameters
    ----------
    x : array
        Input array.
    axes : int or sequence of int, optional
        The axes (default: all).

    Returns
    -------
    array
        The shifted array.

    Raises
    ------
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([0, 1, 2, 3, 4])
    >>> print(clnp.fft.ifftshift(clnp.fft.fftshift(x)))
    [0 1 2 3 4]
    """
    return _shift(x, axes, "ifftshift", -1)


def fft2(a: Any, s: Optional[Sequence[int]] = None, axes: Sequence[int] = (-2, -1),
         norm: Any = None, out: Any = None) -> Any:
    """The 2-D discrete Fourier transform over the last two axes (NumPy's ``fft2``: ``fftn`` with
    ``axes=(-2, -1)``).

    Parameters
    ----------
    a : Array or array_like
        Input.
    s : sequence of two ints, optional
        Lengths along ``axes`` (cropped or zero padded).
    axes : sequence of two ints, optional
        The axes.
    norm : {'backward', 'ortho', 'forward'}, optional
        Normalisation (None is 'backward').
    out : Array, optional
        Where to write the result.

    Returns
    -------
    Array
        The transform.

    Raises
    ------
    ValueError
        As for ``fftn``.

    Examples
    --------
    >>> import numpy, clnp
    >>> x = numpy.arange(6.0, dtype=numpy.float32).reshape(2, 3)
    >>> bool(numpy.allclose(numpy.asarray(clnp.fft.fft2(x)), numpy.fft.fft2(x)))
    True
    """
    clnp = _namespace()
    x = a if is_array(a) else clnp.asarray(a)
    res = fftn(x, s=s, axes=tuple(axes), norm="backward" if norm is None else norm)
    if out is not None:
        out[...] = res
        return out
    return res


def ifft2(a: Any, s: Optional[Sequence[int]] = None, axes: Sequence[int] = (-2, -1),
          norm: Any = None, out: Any = None) -> Any:
    """The 2-D inverse discrete Fourier transform over the last two axes (NumPy's
    ``ifft2``: ``ifftn`` with ``axes=(-2, -1)``).

    Parameters
    ----------
    a : Array or array_like
        Input.
    s : sequence of two ints, optional
        Lengths along ``axes`` (cropped or zero padded).
    axes : sequence of two ints, optional
        The axes.
    norm : {'backward', 'ortho', 'forward'}, optional
        Normalisation (None is 'backward').
    out : Array, optional
        Where to write the result.

    Returns
    -------
    Array
        The transform.

    Raises
    ------
    ValueError
        As for ``ifftn``.

    Examples
    --------
    >>> import numpy, clnp
    >>> x = numpy.arange(6.0, dtype=numpy.float32).reshape(2, 3)
    >>> bool(numpy.allclose(numpy.asarray(clnp.fft.ifft2(x)), numpy.fft.ifft2(x)))
    True
    """
    clnp = _namespace()
    x = a if is_array(a) else clnp.asarray(a)
    res = ifftn(x, s=s, axes=tuple(axes), norm="backward" if norm is None else norm)
    if out is not None:
        out[...] = res
        return out
    return res


def rfft2(a: Any, s: Optional[Sequence[int]] = None, axes: Sequence[int] = (-2, -1),
          norm: Any = None, out: Any = None) -> Any:
    """The 2-D transform of real input over the last two axes (NumPy's ``rfft2``: ``rfftn`` with
    ``axes=(-2, -1)``).

    Parameters
    ----------
    a : Array or array_like
        Input.
    s : sequence of two ints, optional
        Lengths along ``axes`` (cropped or zero padded).
    axes : sequence of two ints, optional
        The axes.
    norm : {'backward', 'ortho', 'forward'}, optional
        Normalisation (None is 'backward').
    out : Array, optional
        Where to write the result.

    Returns
    -------
    Array
        The transform.

    Raises
    ------
    ValueError
        As for ``rfftn``.

    Examples
    --------
    >>> import numpy, clnp
    >>> x = numpy.arange(6.0, dtype=numpy.float32).reshape(2, 3)
    >>> bool(numpy.allclose(numpy.asarray(clnp.fft.rfft2(x)), numpy.fft.rfft2(x)))
    True
    """
    clnp = _namespace()
    x = a if is_array(a) else clnp.asarray(a)
    res = rfftn(x, s=s, axes=tuple(axes), norm="backward" if norm is None else norm)
    if out is not None:
        out[...] = res
        return out
    return res


def irfft2(a: Any, s: Optional[Sequence[int]] = None, axes: Sequence[int] = (-2, -1),
           norm: Any = None, out: Any = None) -> Any:
    """The inverse of ``rfft2`` over the last two axes (NumPy's ``irfft2``: ``irfftn`` with
    ``axes=(-2, -1)``).

    Parameters
    ----------
    a : Array or array_like
        Input.
    s : sequence of two ints, optional
        Lengths along ``axes`` (cropped or zero padded).
    axes : sequence of two ints, optional
        The axes.
    norm : {'backward', 'ortho', 'forward'}, optional
        Normalisation (None is 'backward').
    out : Array, optional
        Where to write the result.

    Returns
    -------
    Array
        The transform.

    Raises
    ------
    ValueError
        As for ``irfftn``.

    Examples
    --------
    >>> import numpy, clnp
    >>> x = numpy.arange(6.0, dtype=numpy.float32).reshape(2, 3)
    >>> y = numpy.fft.rfft2(x).astype(numpy.complex64)
    >>> bool(numpy.allclose(numpy.asarray(clnp.fft.irfft2(y)), numpy.fft.irfft2(y)))
    True
    """
    clnp = _namespace()
    x = a if is_array(a) else clnp.asarray(a)
    res = irfftn(x, s=s, axes=tuple(axes), norm="backward" if norm is None else norm)
    if out is not None:
        out[...] = res
        return out
    return res
