"""Functional random numbers with JAX's names: explicit keys, no hidden state.

A key is a clnp uint32 array of shape ``(2,)`` (JAX's raw key layout): the two words of the
Philox4x32-10 key. ``key(seed)`` makes one, ``split``/``fold_in`` derive new ones, and every
sampler is a pure function of its key, so the same key gives the same numbers, and sampling
works under ``grad``, ``vmap`` and (keys being ordinary traced arrays) ``jit``.

Design: every draw is one application of the ``random_bits`` primitive, the eager Philox
kernel of ``clnp.random`` (``clnp/_kernels/random.py``) with its key read from a device array
operand instead of kernel arguments. We chose that over writing Philox with clnp's uint32
elementwise ops because the kernel change is small (the key and an optional counter offset
are loads; the rounds and the float conversions are shared with ``clnp.random``), one draw is
one launch and one program per dtype instead of ~150 elementwise launches, and the float
conversions (Box-Muller, logarithms) stay the kernel's own integer-exact code rather than each
device's builtins. Leading key dims draw one row per key, so ``vmap``'s rule is the identity.

Counters are domain-separated in their top word: samples use counters ``0, 1, ...`` (word 3 is
0), ``split`` uses ``i`` with word 3 = 1 and ``fold_in`` uses ``data`` with word 3 = 2, so a
derived key never repeats the blocks of a sample of its parent (JAX's threefry split does the
same with distinct counters). Bits are integer-exact, so the same key gives the same bits on
every device; floats come from them by the kernel's fixed conversions.
"""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

import clnp as xp
from clnp._core import dtypes as dt
from clnp._core.eager import broadcast_shapes
from clnp._core.prims import primitive
from clnp._core.dtypes import kind as dkind

__all__ = ["key", "PRNGKey", "split", "fold_in", "bits", "uniform", "normal", "bernoulli",
           "randint", "categorical", "permutation", "truncated_normal"]

_M32, _M64 = (1 << 32) - 1, (1 << 64) - 1
_SPLIT, _FOLD = 1 << 96, 2 << 96          # domains in the counter's top word
_U32, _U64 = np.dtype(np.uint32), np.dtype(np.uint64)


# ------------------------------------------------------------------------------ checks
def _check_key(fname: str, k: Any) -> Any:
    if isinstance(k, np.ndarray):
        k = xp.asarray(k)
    if not (hasattr(k, "shape") and hasattr(k, "dtype")):
        raise TypeError(f"{fname}: key must be a clnp uint32 array of shape (2,) made by "
                        f"clnp_grad.random.key; got {type(k).__name__}")
    if k.dtype != _U32:
        raise TypeError(f"{fname}: key must have dtype uint32 and shape (2,); got dtype "
                        f"{k.dtype} and shape {tuple(k.shape)}")
    if tuple(k.shape) != (2,):
        raise ValueError(f"{fname}: key must have shape (2,) and dtype uint32; got shape "
                         f"{tuple(k.shape)} (dtype {k.dtype}); a batch of keys (from split) "
                         f"is used one at a time, or under clnp_grad.vmap")
    return k


def _shape(fname: str, shape: Any) -> tuple[int, ...]:
    try:
        dims = (operator.index(shape),) if not hasattr(shape, "__iter__") else \
            tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"{fname}: shape must be an int or a tuple of ints; got "
                        f"{shape!r}") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"{fname}: shape must not have negative dims; got {dims}")
    return dims


def _float_dtype(fname: str, dtype: Any, k: Any) -> np.dtype:
    if dtype is None:
        return k.device.default_float
    d = dt.as_dtype(dtype, fname)
    if d not in (dt.float32, dt.float64):
        raise TypeError(f"{fname}: dtype must be float32 or float64; got {d}")
    k.device.check_dtype(d, fname)
    return d


def _is_static(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


def _array(fname: str, name: str, x: Any, k: Any, kinds: str = "iuf") -> Any:
    """``x`` as a clnp array (traced values pass through), real of one of ``kinds``."""
    a = x if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, np.ndarray) \
        else xp.asarray(x, device=k.device)
    if dkind(a.dtype) not in kinds:
        raise TypeError(f"{fname}: {name} must be a real number or array; got dtype {a.dtype}")
    return a


def _broadcasts(src: tuple[int, ...], shape: tuple[int, ...]) -> bool:
    try:
        return len(src) <= len(shape) and broadcast_shapes(shape, tuple(src)) == shape
    except ValueError:
        return False


def _fits(fname: str, shape: tuple[int, ...], name: str, pshape: tuple[int, ...]) -> None:
    if not _broadcasts(tuple(pshape), shape):
        raise ValueError(f"{fname}: {name} of shape {tuple(pshape)} does not broadcast to "
                         f"shape {shape}")


def _draw(k: Any, shape: tuple[int, ...], dtype: np.dtype, dist: str, loc: Any = 0,
          scale: Any = 1, counter: int = 0) -> Any:
    return primitive("random_bits").bind(k, shape=shape, dtype=dtype, dist=dist, loc=loc,
                                         scale=scale, counter=counter)


def _words64(x: Any) -> tuple[Any, Any]:
    """(high, low) uint32 words of an integer array as a 64-bit two's complement value."""
    w = x if x.dtype in (dt.int64, dt.uint64) else x.astype(dt.int64)
    hi = xp.bitwise_and(xp.bitwise_right_shift(w, 32), _M32).astype(_U32)
    return hi, xp.bitwise_and(w, _M32).astype(_U32)


# ------------------------------------------------------------------------------ keys
def key(seed: Any, *, device: Any = None) -> Any:
    """A random key from an integer seed (JAX's ``random.key`` / ``PRNGKey``).

    The key is a uint32 array ``[high, low]`` holding the seed as a 64-bit two's complement
    integer, as JAX's raw keys. Same key, same numbers, on every device.

    Parameters
    ----------
    seed : int or 0-d integer array
        The seed; it may be traced.
    device : Device, optional
        Where a Python-int seed's key lives (default: the default device).

    Returns
    -------
    array
        uint32 array of shape ``(2,)``.

    Raises
    ------
    TypeError
        ``seed`` is not an integer.

    Examples
    --------
    >>> from clnp_grad import random
    >>> k = random.key(0)
    >>> k.dtype, k.shape
    (dtype('uint32'), (2,))
    """
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        s = int(seed)
        if not -(1 << 63) <= s < (1 << 64):
            raise ValueError(f"key: seed must fit in 64 bits; got {s}")
        s &= _M64
        return xp.asarray(np.array([s >> 32, s & _M32], np.uint32), device=device)
    if not (hasattr(seed, "shape") and hasattr(seed, "dtype")) or isinstance(seed, bool):
        raise TypeError(f"key: seed must be an int or an integer array; got "
                        f"{type(seed).__name__}")
    s = xp.asarray(seed, device=device) if isinstance(seed, np.ndarray) else seed
    if dkind(s.dtype) not in "iu":
        raise TypeError(f"key: seed must be an integer; got dtype {s.dtype}")
    if s.shape != ():
        raise ValueError(f"key: seed must be a scalar (0-d); got shape {tuple(s.shape)} "
                         f"(use vmap(key) for a batch of seeds)")
    return xp.stack(_words64(s))


PRNGKey = key


def split(key: Any, num: int = 2) -> Any:
    """``num`` new, independent keys derived from ``key``.

    Parameters
    ----------
    key : array
        A key (uint32, shape ``(2,)``).
    num : int, default 2
        How many keys.

    Returns
    -------
    array
        uint32 array of shape ``(num, 2)``; index it for each key.

    Raises
    ------
    TypeError
        ``key`` is not a uint32 array of shape ``(2,)``, or ``num`` is not an int.
    ValueError
        ``num`` is negative.

    Examples
    --------
    >>> from clnp_grad import random
    >>> k1, k2 = random.split(random.key(0))
    >>> random.split(random.key(0), 3).shape
    (3, 2)
    """
    k = _check_key("split", key)
    try:
        n = operator.index(num)
    except TypeError:
        raise TypeError(f"split: num must be an int; got {type(num).__name__} "
                        f"{num!r}") from None
    if n < 0:
        raise ValueError(f"split: num must be >= 0; got {n}")
    return _draw(k, (n, 2), _U32, "bits", 0, 0, _SPLIT)


def fold_in(key: Any, data: Any) -> Any:
    """A new key from ``key`` and an integer ``data``.

    Philox of counter ``data`` in the fold-in domain under ``key``. Equal ``data`` as a
    Python int or an array gives the same key.

    Parameters
    ----------
    key : array
        A key.
    data : int or 0-d integer array
        The value to fold in (a step number, a device index...); it may be traced.

    Returns
    -------
    array
        A key (uint32, shape ``(2,)``).

    Raises
    ------
    TypeError
        ``key`` is not a key, or ``data`` is not an integer.

    Examples
    --------
    >>> import clnp
    >>> from clnp_grad import random
    >>> a = random.fold_in(random.key(0), 1)
    >>> b = random.fold_in(random.key(0), clnp.asarray(1))
    >>> bool(clnp.all(a == b))
    True
    """
    k = _check_key("fold_in", key)
    if isinstance(data, (int, np.integer)) and not isinstance(data, bool):
        d = int(data)
        if not -(1 << 63) <= d < (1 << 64):
            raise ValueError(f"fold_in: data must fit in 64 bits; got {d}")
        return _draw(k, (2,), _U32, "bits", 0, 0, _FOLD + (d & _M64))
    if not hasattr(data, "shape") or isinstance(data, bool):
        raise TypeError(f"fold_in: data must be an int or an integer array; got "
                        f"{type(data).__name__}")
    d = _array("fold_in", "data", data, k, "iu")
    if d.shape != ():
        raise ValueError(f"fold_in: data must be a scalar (0-d); got shape {tuple(d.shape)}")
    hi, lo = _words64(d)
    # key words then the counter offset (low word first), read by the kernel per row
    operand = xp.concatenate([k, xp.reshape(lo, (1,)), xp.reshape(hi, (1,))])
    return _draw(operand, (2,), _U32, "bits", 0, 0, _FOLD)


# ------------------------------------------------------------------------------ samplers
def bits(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Raw random bits of ``shape``.

    Parameters
    ----------
    key : array
        A key.
    shape : tuple of int, default ()
        The result's shape.
    dtype : dtype, optional
        uint32 (default) or uint64.

    Returns
    -------
    array
        Uniformly distributed words.

    Raises
    ------
    TypeError
        ``key`` is not a key, or ``dtype`` is not uint32/uint64.

    Examples
    --------
    >>> from clnp_grad import random
    >>> random.bits(random.key(0), (2,)).dtype
    dtype('uint32')
    """
    k = _check_key("bits", key)
    d = _U32 if dtype is None else dt.as_dtype(dtype, "bits")
    if d not in (_U32, _U64):
        raise TypeError(f"bits: dtype must be uint32 or uint64; got {d}")
    return _draw(k, _shape("bits", shape), d, "bits", 0, 0)


def uniform(key: Any, shape: Any = (), dtype: Any = None, minval: Any = 0.0,
            maxval: Any = 1.0) -> Any:
    """Uniform floats in ``[minval, maxval)`` of ``shape``.

    Parameters
    ----------
    key : array
        A key.
    shape : tuple of int, default ()
        The result's shape.
    dtype : dtype, optional
        float32 or float64 (default: the device's default float).
    minval, maxval : float or array, default 0.0 and 1.0
        The bounds. Array bounds broadcast to ``shape`` and are differentiable;
        Python-number bounds go into the kernel.

    Returns
    -------
    array
        Floats of ``dtype``.

    Raises
    ------
    TypeError
        ``dtype`` is not float32/float64, or ``key`` is not a key.

    Examples
    --------
    >>> import clnp
    >>> from clnp_grad import random
    >>> u = random.uniform(random.key(0), (1000,), minval=2.0, maxval=3.0)
    >>> bool(clnp.all((u >= 2.0) & (u < 3.0)))
    True
    >>> bool(clnp.all(random.uniform(random.key(1), (3,)) == random.uniform(random.key(1), (3,))))
    True
    """
    k = _check_key("uniform", key)
    shape, d = _shape("uniform", shape), _float_dtype("uniform", dtype, k)
    if _is_static(minval) and _is_static(maxval):
        lo, hi = float(minval), float(maxval)
        if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
            raise ValueError(f"uniform: needs finite minval < maxval; got minval={lo}, "
                             f"maxval={hi}")
        return _draw(k, shape, d, "uniform", lo, hi - lo)
    lo = _array("uniform", "minval", minval, k).astype(d)
    hi = _array("uniform", "maxval", maxval, k).astype(d)
    _fits("uniform", shape, "minval", lo.shape)
    _fits("uniform", shape, "maxval", hi.shape)
    return lo + (hi - lo) * _draw(k, shape, d, "uniform", 0.0, 1.0)


def normal(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Standard normal floats of ``shape`` (Box-Muller in the kernel).

    Parameters
    ----------
    key : array
        A key.
    shape : tuple of int, default ()
        The result's shape.
    dtype : dtype, optional
        float32 or float64 (default: the device's default float).

    Returns
    -------
    array
        Floats of ``dtype``.

    Raises
    ------
    TypeError
        ``dtype`` is not float32/float64, or ``key`` is not a key.

    Examples
    --------
    >>> import clnp
    >>> from clnp_grad import random
    >>> z = random.normal(random.key(0), (10000,), dtype=clnp.float32)
    >>> z.dtype, abs(float(clnp.mean(z))) < 0.05
    (dtype('float32'), True)
    """
    k = _check_key("normal", key)
    return _draw(k, _shape("normal", shape), _float_dtype("normal", dtype, k), "normal", 0.0,
                 1.0)


def bernoulli(key: Any, p: Any = 0.5, shape: Any = None) -> Any:
    """Booleans that are True with probability ``p``.

    Parameters
    ----------
    key : array
        A key.
    p : float or array, default 0.5
        The probability, in [0, 1]; an array broadcasts to ``shape``.
    shape : tuple of int, optional
        The result's shape (default: ``p``'s shape).

    Returns
    -------
    array
        Booleans.

    Raises
    ------
    ValueError
        A Python-number ``p`` outside [0, 1].

    Examples
    --------
    >>> from clnp_grad import random
    >>> random.bernoulli(random.key(0), 0.0, (4,)).tolist()
    [False, False, False, False]
    """
    k = _check_key("bernoulli", key)
    if _is_static(p):
        if not 0.0 <= float(p) <= 1.0:
            raise ValueError(f"bernoulli: p must be in [0, 1]; got {p}")
        shape = () if shape is None else _shape("bernoulli", shape)
        return _draw(k, shape, k.device.default_float, "uniform", 0.0, 1.0) < float(p)
    pa = _array("bernoulli", "p", p, k, "f")
    shape = tuple(pa.shape) if shape is None else _shape("bernoulli", shape)
    _fits("bernoulli", shape, "p", pa.shape)
    return _draw(k, shape, pa.dtype if pa.dtype.itemsize >= 4 else dt.float32, "uniform",
                 0.0, 1.0) < pa


def randint(key: Any, shape: Any, minval: Any, maxval: Any, dtype: Any = None) -> Any:
    """Random integers in ``[minval, maxval)`` of ``shape``.

    Parameters
    ----------
    key : array
        A key.
    shape : tuple of int
        The result's shape.
    minval, maxval : int or array
        The bounds. Python ints must lie in the dtype's range (``maxval`` up to its maximum
        + 1); array bounds broadcast to ``shape`` and give ``minval`` where
        ``maxval <= minval``, as JAX.
    dtype : dtype, optional
        An integer dtype (default: int64).

    Returns
    -------
    array
        Integers of ``dtype``.

    Raises
    ------
    ValueError
        Python-int bounds that do not fit ``dtype``.
    TypeError
        ``dtype`` is not an integer dtype.

    Examples
    --------
    >>> import numpy
    >>> from clnp_grad import random
    >>> r = random.randint(random.key(0), (1000,), 0, 3)
    >>> sorted(set(numpy.asarray(r).tolist()))
    [0, 1, 2]
    """
    k = _check_key("randint", key)
    shape = _shape("randint", shape)
    d = dt.int64 if dtype is None else dt.as_dtype(dtype, "randint")
    if dkind(d) not in "iu":
        raise TypeError(f"randint: dtype must be an integer dtype; got {d}")
    if isinstance(minval, (int, np.integer)) and isinstance(maxval, (int, np.integer)):
        lo, hi, info = int(minval), int(maxval), np.iinfo(d)
        if lo >= hi:
            raise ValueError(f"randint: needs minval < maxval; got minval={lo}, maxval={hi}")
        if lo < info.min or hi > info.max + 1:
            raise ValueError(f"randint: bounds [{lo}, {hi}) do not fit {d} (values "
                             f"{info.min}..{info.max})")
        span = hi - lo
        return _draw(k, shape, d, "integers" if span <= 1 << 32 else "integers128",
                     lo & _M64, span & _M64)
    lo = _array("randint", "minval", minval, k, "iu")
    hi = _array("randint", "maxval", maxval, k, "iu")
    _fits("randint", shape, "minval", lo.shape)
    _fits("randint", shape, "maxval", hi.shape)
    # modular uint64 arithmetic; bits % span is biased by at most span / 2**64
    lo64, hi64 = lo.astype(_U64), hi.astype(_U64)
    span = xp.where(hi.astype(d) > lo.astype(d), hi64 - lo64, xp.asarray(1, dtype=_U64,
                                                                          device=k.device))
    return (lo64 + _draw(k, shape, _U64, "bits", 0, 0) % span).astype(d)


def categorical(key: Any, logits: Any, axis: int = -1, shape: Any = None) -> Any:
    """Indices drawn with probabilities ``softmax(logits)`` along ``axis``.

    Gumbel-max: ``argmax(logits + gumbel)``.

    Parameters
    ----------
    key : array
        A key.
    logits : array
        Unnormalised log-probabilities.
    axis : int, default -1
        The category axis.
    shape : tuple of int, optional
        The result's shape (default: ``logits``' shape without ``axis``); it may add leading
        dimensions.

    Returns
    -------
    array
        Indices of the default index dtype.

    Raises
    ------
    ValueError
        ``axis`` out of range for ``logits``.

    Examples
    --------
    >>> import clnp
    >>> from clnp_grad import random
    >>> logits = clnp.log(clnp.asarray([0.0, 1.0, 0.0]))
    >>> int(random.categorical(random.key(0), logits))
    1
    """
    k = _check_key("categorical", key)
    lg = _array("categorical", "logits", logits, k, "f")
    if lg.ndim == 0:
        raise ValueError("categorical: logits must have at least one dim; got shape ()")
    if not -lg.ndim <= axis < lg.ndim:
        raise ValueError(f"categorical: axis {axis} is out of range for logits of shape "
                         f"{tuple(lg.shape)}")
    ax = axis % lg.ndim
    batch = tuple(lg.shape[:ax] + lg.shape[ax + 1:])
    shape = batch if shape is None else _shape("categorical", shape)
    if not _broadcasts(batch, shape):
        raise ValueError(f"categorical: shape {shape} is not compatible with the logits' "
                         f"batch shape {batch} (logits shape {tuple(lg.shape)}, axis {axis})")
    prefix = shape[:len(shape) - len(batch)]
    tail = list(shape[len(prefix):])
    tail.insert(ax, lg.shape[ax])
    d = lg.dtype if lg.dtype.itemsize >= 4 else dt.float32
    gumbel = -xp.log(_draw(k, prefix + tuple(tail), d, "exponential", 0.0, 1.0))
    return xp.argmax(gumbel + lg.astype(d), axis=len(prefix) + ax)


def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Any:
    """A random permutation of ``range(x)``, or ``x`` shuffled along ``axis``.

    Argsort of 64-bit random words, so every permutation is equally likely up to ties of
    probability ~n**2 / 2**65.

    Parameters
    ----------
    key : array
        A key.
    x : int or array
        The length of the permutation, or the array to shuffle.
    axis : int, default 0
        The axis to shuffle along.
    independent : bool, default False
        Shuffle each 1-d slice along ``axis`` on its own.

    Returns
    -------
    array
        The permutation, or the shuffled copy of ``x``.

    Raises
    ------
    ValueError
        ``axis`` out of range.

    Examples
    --------
    >>> import clnp, numpy
    >>> from clnp_grad import random
    >>> sorted(numpy.asarray(random.permutation(random.key(0), 5)).tolist())
    [0, 1, 2, 3, 4]
    >>> shuffled = random.permutation(random.key(0), clnp.asarray([10, 20, 30]))
    >>> sorted(numpy.asarray(shuffled).tolist())
    [10, 20, 30]
    """
    k = _check_key("permutation", key)
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        if x < 0:
            raise ValueError(f"permutation: x must be a non-negative int or an array; got {x}")
        return xp.argsort(_draw(k, (int(x),), _U64, "bits", 0, 0))
    if not hasattr(x, "shape"):
        raise TypeError(f"permutation: x must be an int or an array; got {type(x).__name__}")
    a = _array("permutation", "x", x, k, "biufc")
    if a.ndim == 0:
        raise ValueError("permutation: x must be an int or an array of at least one dim; got "
                         "a 0-d array")
    if not -a.ndim <= axis < a.ndim:
        raise ValueError(f"permutation: axis {axis} is out of range for x of shape "
                         f"{tuple(a.shape)}")
    ax = axis % a.ndim
    if independent:
        idx = xp.argsort(_draw(k, tuple(a.shape), _U64, "bits", 0, 0), axis=ax)
        return xp.take_along_axis(a, idx, axis=ax)
    return xp.take(a, xp.argsort(_draw(k, (a.shape[ax],), _U64, "bits", 0, 0)), axis=ax)


# Acklam's rational approximation of the standard normal quantile (relative error < 1.2e-9)
_A = (-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
      1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00)
_B = (-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
      6.680131188771972e+01, -1.328068155288572e+01, 1.0)
_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
      -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00)
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
      3.754408661907416e+00, 1.0)


def _horner(x: Any, coeffs: tuple[float, ...]) -> Any:
    acc = coeffs[0]
    for c in coeffs[1:]:
        acc = acc * x + c
    return acc


def _ndtri(u: Any) -> Any:
    """Standard normal quantile of ``u`` in (0, 1), with clnp elementwise ops."""
    q = u - 0.5
    r = q * q
    central = q * _horner(r, _A) / _horner(r, _B)
    t = xp.sqrt(-2.0 * xp.log(xp.minimum(u, 1.0 - u)))
    tail = _horner(t, _C) / _horner(t, _D)
    return xp.where(xp.abs(q) <= 0.5 - 0.02425, central, xp.where(q < 0, tail, -tail))


def truncated_normal(key: Any, lower: Any, upper: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Standard normal floats conditioned on ``lower < x < upper``.

    The inverse CDF of a uniform draw in ``(Phi(lower), Phi(upper))``. The quantile is
    Acklam's (relative error ~1e-9), so float64 results are accurate to ~1e-9, not to the last
    bit.

    Parameters
    ----------
    key : array
        A key.
    lower, upper : float
        The bounds (Python numbers; ``-inf`` and ``inf`` allowed).
    shape : tuple of int, default ()
        The result's shape.
    dtype : dtype, optional
        float32 or float64 (default: the device's default float).

    Returns
    -------
    array
        Floats of ``dtype`` in ``(lower, upper)``.

    Raises
    ------
    TypeError
        Array bounds (not supported), or a non-float ``dtype``.

    Examples
    --------
    >>> import clnp
    >>> from clnp_grad import random
    >>> x = random.truncated_normal(random.key(0), -1.0, 1.0, (1000,))
    >>> bool(clnp.all((x > -1.0) & (x < 1.0)))
    True
    """
    k = _check_key("truncated_normal", key)
    shape, d = _shape("truncated_normal", shape), _float_dtype("truncated_normal", dtype, k)
    if not (_is_static(lower) and _is_static(upper)):
        raise TypeError("truncated_normal: lower and upper must be Python numbers (array "
                        "bounds are not supported)")
    lo, hi = float(lower), float(upper)
    if math.isnan(lo) or math.isnan(hi) or lo >= hi:
        raise ValueError(f"truncated_normal: needs lower < upper; got lower={lo}, upper={hi}")
    flip = lo > 0   # sample -x on (-upper, -lower): lower-tail probabilities keep precision
    a, b = (-hi, -lo) if flip else (lo, hi)
    pa, pb = (0.5 * math.erfc(-v / math.sqrt(2.0)) for v in (a, b))
    # the midpoints of the kernel's grid, so that u is never exactly Phi(a) (0 for a = -inf)
    half = 2.0 ** (-25 if d == dt.float32 else -54)
    u = _draw(k, shape, d, "uniform", pa + (pb - pa) * half, pb - pa)
    x = _ndtri(u)
    x = xp.clip(-x if flip else x, lo, hi)
    return x
