"""Parameter initialisers with PyTorch's formulas (``torch.nn.init``), drawn from explicit
``clnp_grad.random`` keys. Each returns a new array; nothing is written in place."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

import clnp as xp
from clnp._core.dtypes import kind as dkind

__all__ = ["calculate_fans", "calculate_gain", "uniform", "normal", "zeros", "ones",
           "kaiming_uniform", "kaiming_normal", "xavier_uniform", "xavier_normal"]


def _dtype(dtype: Any) -> Any:
    d = np.dtype(xp.float32) if dtype is None else np.dtype(dtype)
    if dkind(np.dtype(d)) != "f":
        raise TypeError(f"init: parameters must have a real floating dtype, got {d}")
    return d


def _draw_dtype(d: Any) -> Any:
    """Draw float16 parameters in float32 (the sampler's types), then round."""
    return np.dtype(xp.float32) if np.dtype(d) in (np.float16, xp.bfloat16) else d


def calculate_fans(shape: Sequence[int]) -> tuple[int, int]:
    """PyTorch's ``(fan_in, fan_out)``: ``shape[1] * receptive`` and ``shape[0] * receptive``
    with ``receptive = prod(shape[2:])``.

    Parameters
    ----------
    shape : tuple of ints
        At least 2 dims.

    Returns
    -------
    tuple of int

    Raises
    ------
    ValueError
        For fewer than 2 dims.

    Examples
    --------
    >>> from clnp_nn import init
    >>> init.calculate_fans((16, 3, 3, 3))
    (27, 144)
    """
    if len(shape) < 2:
        raise ValueError(f"calculate_fans: needs at least 2 dims, got shape {tuple(shape)}")
    rec = math.prod(shape[2:])
    return shape[1] * rec, shape[0] * rec


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """PyTorch's recommended gain for ``nonlinearity``.

    Parameters
    ----------
    nonlinearity : str
        "linear", "conv*", "sigmoid", "tanh", "relu", "leaky_relu" or "selu".
    param : float, optional
        The negative slope for "leaky_relu" (default 0.01).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        For an unknown nonlinearity.

    Examples
    --------
    >>> from clnp_nn import init
    >>> init.calculate_gain("relu")
    1.4142135623730951
    """
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                        "conv_transpose2d", "conv_transpose3d", "sigmoid"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        a = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + a * a))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def uniform(key: Any, shape: Sequence[int], low: float, high: float, dtype: Any = None) -> Any:
    """Uniform values in ``[low, high)``.

    Parameters
    ----------
    key : Array
        A ``clnp_grad.random`` key.
    shape : tuple of ints
        The result's shape.
    low, high : float
        The interval's bounds.
    dtype : dtype, optional
        Default float32.

    Returns
    -------
    Array

    Raises
    ------
    ValueError
        If ``low >= high``.

    Examples
    --------
    >>> from clnp_nn import init
    >>> w = init.uniform(cg.random.key(0), (3,), -0.1, 0.1)
    >>> w.shape, bool(clnp.all(clnp.abs(w) <= 0.1))
    ((3,), True)
    """
    from clnp_grad import random
    d = _dtype(dtype)
    if not low < high:
        raise ValueError(f"init.uniform: needs low < high, got low={low}, high={high}")
    a = random.uniform(key, tuple(shape), _draw_dtype(d), low, high)
    return a if a.dtype == d else a.astype(d)


def normal(key: Any, shape: Sequence[int], mean: float = 0.0, std: float = 1.0,
           dtype: Any = None) -> Any:
    """Normal values ``mean + std * N(0, 1)``.

    Parameters
    ----------
    key : Array
        A ``clnp_grad.random`` key.
    shape : tuple of ints
        The result's shape.
    mean, std : float
        Mean and standard deviation.
    dtype : dtype, optional
        Default float32.

    Returns
    -------
    Array

    Raises
    ------
    TypeError
        If ``dtype`` is not a real floating dtype.

    Examples
    --------
    >>> from clnp_nn import init
    >>> init.normal(cg.random.key(0), (10, 4)).shape
    (10, 4)
    """
    from clnp_grad import random
    d = _dtype(dtype)
    a = random.normal(key, tuple(shape), _draw_dtype(d))
    if std != 1.0 or mean != 0.0:
        a = a * std + mean
    return a if a.dtype == d else a.astype(d)


def zeros(shape: Sequence[int], dtype: Any = None, device: Any = None) -> Any:
    """Zeros (PyTorch's ``zeros_``), default float32.

    Parameters
    ----------
    shape : tuple of ints
        The result's shape.
    dtype : dtype, optional
        Default float32.
    device : Device, optional
        Default: clnp's default device.

    Returns
    -------
    Array

    Raises
    ------
    TypeError
        If ``dtype`` is not a real floating dtype.

    Examples
    --------
    >>> from clnp_nn import init
    >>> init.zeros((2,)).tolist()
    [0.0, 0.0]
    """
    return xp.zeros(tuple(shape), dtype=_dtype(dtype), device=device)


def ones(shape: Sequence[int], dtype: Any = None, device: Any = None) -> Any:
    """Ones (PyTorch's ``ones_``), default float32.

    Parameters
    ----------
    shape : tuple of ints
        The result's shape.
    dtype : dtype, optional
        Default float32.
    device : Device, optional
        Default: clnp's default device.

    Returns
    -------
    Array

    Raises
    ------
    TypeError
        If ``dtype`` is not a real floating dtype.

    Examples
    --------
    >>> from clnp_nn import init
    >>> init.ones((2,)).tolist()
    [1.0, 1.0]
    """
    return xp.ones(tuple(shape), dtype=_dtype(dtype), device=device)


def _fan(shape: Sequence[int], mode: str) -> int:
    fan_in, fan_out = calculate_fans(shape)
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"init: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan = fan_in if mode == "fan_in" else fan_out
    if fan == 0:
        raise ValueError(f"init: cannot initialise a tensor of shape {tuple(shape)} with a zero "
                         f"{mode}")
    return fan


def kaiming_uniform(key: Any, shape: Sequence[int], a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", dtype: Any = None) -> Any:
    """He uniform: ``U(-b, b)`` with ``b = gain * sqrt(3 / fan)``. PyTorch's layers use
    ``a = sqrt(5)``, which gives ``b = 1 / sqrt(fan_in)``.

    Parameters
    ----------
    key : Array
        A ``clnp_grad.random`` key.
    shape : tuple of ints
        At least 2 dims.
    a : float
        Negative slope for the leaky-ReLU gain.
    mode : {"fan_in", "fan_out"}
        Which fan sets the bound (``fan_in`` keeps the forward pass's variance).
    nonlinearity : str
        The activation whose gain is used (:func:`calculate_gain`).
    dtype : dtype, optional
        Default float32.

    Returns
    -------
    Array

    Raises
    ------
    ValueError
        For fewer than 2 dims, a zero fan or an unknown mode/nonlinearity.

    Examples
    --------
    >>> import math
    >>> from clnp_nn import init
    >>> w = init.kaiming_uniform(cg.random.key(0), (10, 4), a=math.sqrt(5))
    >>> bool(clnp.all(clnp.abs(w) <= 0.5))   # 1 / sqrt(fan_in)
    True
    """
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / _fan(shape, mode))
    return uniform(key, shape, -bound, bound, dtype)


def kaiming_normal(key: Any, shape: Sequence[int], a: float = 0.0, mode: str = "fan_in",
                   nonlinearity: str = "leaky_relu", dtype: Any = None) -> Any:
    """He normal: ``N(0, std)`` with ``std = gain / sqrt(fan)``.

    Parameters
    ----------
    key, shape, a, mode, nonlinearity, dtype
        As :func:`kaiming_uniform`.

    Returns
    -------
    Array

    Raises
    ------
    ValueError
        As :func:`kaiming_uniform`.

    Examples
    --------
    >>> from clnp_nn import init
    >>> init.kaiming_normal(cg.random.key(0), (10, 4), nonlinearity="relu").shape
    (10, 4)
    """
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(shape, mode))
    return normal(key, shape, 0.0, std, dtype)


def xavier_uniform(key: Any, shape: Sequence[int], gain: float = 1.0, dtype: Any = None) -> Any:
    """Glorot uniform: ``U(-b, b)`` with ``b = gain * sqrt(6 / (fan_in + fan_out))``.

    Parameters
    ----------
    key : Array
        A ``clnp_grad.random`` key.
    shape : tuple of ints
        At least 2 dims.
    gain : float
        Scaling factor (:func:`calculate_gain` of the activation).
    dtype : dtype, optional
        Default float32.

    Returns
    -------
    Array

    Raises
    ------
    ValueError
        For fewer than 2 dims.

    Examples
    --------
    >>> from clnp_nn import init
    >>> w = init.xavier_uniform(cg.random.key(0), (96, 32))
    >>> bool(clnp.all(clnp.abs(w) <= 0.2165))   # sqrt(6 / 128)
    True
    """
    fan_in, fan_out = calculate_fans(shape)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform(key, shape, -bound, bound, dtype)


def xavier_normal(key: Any, shape: Sequence[int], gain: float = 1.0, dtype: Any = None) -> Any:
    """Glorot normal: ``N(0, std)`` with ``std = gain * sqrt(2 / (fan_in + fan_out))``.

    Parameters
    ----------
    key, shape, gain, dtype
        As :func:`xavier_uniform`.

    Returns
    -------
    Array

    Raises
    ------
    ValueError
        For fewer than 2 dims.

    Examples
    --------
    >>> from clnp_nn import init
    >>> init.xavier_normal(cg.random.key(0), (96, 32)).shape
    (96, 32)
    """
    fan_in, fan_out = calculate_fans(shape)
    return normal(key, shape, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), dtype)
