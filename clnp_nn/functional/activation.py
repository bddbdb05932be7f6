"""Activation functions: relu, gelu, silu, sigmoid, softplus, softmax, log_softmax.

Written with clnp elementwise ops and reductions, so ``jit`` fuses them and ``grad``/``vmap``
see through them. Forms are chosen so that neither the value nor the derivative overflows
(both branches of a ``where`` stay finite: a NaN in the unused branch would poison the
gradient)."""
from __future__ import annotations

import math
from typing import Any

import clnp as xp

from . import _checks as chk
from ._kernels import erf
from ._precision import narrow, wide

__all__ = ["relu", "gelu", "silu", "sigmoid", "softplus", "softmax", "log_softmax", "tanh"]

_SQRT_HALF = math.sqrt(0.5)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def relu(x: Any) -> Any:
    """``max(x, 0)`` elementwise; the derivative at 0 is 0 (as PyTorch's).

    Parameters
    ----------
    x : Array
        Real floating input.

    Returns
    -------
    Array
        Same shape and dtype as ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not a real floating clnp array.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> F.relu(clnp.asarray([-1.0, 2.0])).tolist()
    [0.0, 2.0]
    """
    chk.array("relu", "x", x)
    return xp.where(x > 0, x, xp.zeros_like(x))


def gelu(x: Any, approximate: str = "none") -> Any:
    """Gaussian error linear unit: ``x * Phi(x)`` with the exact normal CDF
    (``approximate="none"``) or PyTorch's tanh approximation (``approximate="tanh"``).

    Parameters
    ----------
    x : Array
        Real floating input.
    approximate : {"none", "tanh"}
        Which form to compute.

    Returns
    -------
    Array
        Same shape and dtype as ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not a real floating clnp array.
    ValueError
        If ``approximate`` is neither "none" nor "tanh".

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> F.gelu(clnp.asarray([0.0])).tolist()
    [0.0]
    >>> F.gelu(clnp.zeros(3), approximate="tanh").shape
    (3,)
    """
    chk.array("gelu", "x", x)
    if approximate == "none":
        return 0.5 * x * (1.0 + erf(x * _SQRT_HALF))
    if approximate == "tanh":
        return 0.5 * x * (1.0 + xp.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * (x * x * x))))
    raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")


def sigmoid(x: Any) -> Any:
    """The logistic function ``1 / (1 + exp(-x))``, computed without overflow.

    Parameters
    ----------
    x : Array
        Real floating input.

    Returns
    -------
    Array
        Values in [0, 1], same shape and dtype as ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not a real floating clnp array.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> F.sigmoid(clnp.asarray([0.0])).tolist()
    [0.5]
    """
    chk.array("sigmoid", "x", x)
    return _sigmoid(x)


def _sigmoid(x: Any) -> Any:
    # e = exp(-|x|) lies in (0, 1], so both branches (and their derivatives) are finite
    pos = x >= 0
    e = xp.exp(xp.where(pos, -x, x))
    return xp.where(pos, 1.0 / (1.0 + e), e / (1.0 + e))


def tanh(x: Any) -> Any:
    """Hyperbolic tangent (``clnp.tanh``), here for symmetry with the module ``Tanh``.

    Parameters
    ----------
    x : Array
        Real floating input.

    Returns
    -------
    Array
        Same shape and dtype as ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not a real floating clnp array.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> F.tanh(clnp.asarray([0.0])).tolist()
    [0.0]
    """
    chk.array("tanh", "x", x)
    return xp.tanh(x)


def silu(x: Any) -> Any:
    """``x * sigmoid(x)`` (also called swish).

    Parameters
    ----------
    x : Array
        Real floating input.

    Returns
    -------
    Array
        Same shape and dtype as ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not a real floating clnp array.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> F.silu(clnp.asarray([0.0])).tolist()
    [0.0]
    """
    chk.array("silu", "x", x)
    return x * _sigmoid(x)


def softplus(x: Any, beta: float = 1.0, threshold: float = 20.0) -> Any:
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``
    (PyTorch's definition).

    Parameters
    ----------
    x : Array
        Real floating input.
    beta : float
        Sharpness, > 0.
    threshold : float
        Above ``beta * x > threshold`` the function is linear.

    Returns
    -------
    Array
        Same shape and dtype as ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not a real floating clnp array.
    ValueError
        If ``beta`` is not positive.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> round(float(F.softplus(clnp.asarray([0.0]))[0]), 4)
    0.6931
    """
    chk.array("softplus", "x", x)
    if not float(beta) > 0:
        raise ValueError(f"softplus: beta must be > 0, got {beta}")
    bx = x * beta if beta != 1.0 else x
    # the clamped exponent keeps the unused branch finite (its gradient is multiplied by 0)
    soft = xp.log1p(xp.exp(xp.minimum(bx, float(threshold))))
    if beta != 1.0:
        soft = soft / beta
    return xp.where(bx > threshold, x, soft)


def _axis(fn: str, x: Any, axis: int) -> int:
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"{fn}: axis must be an int, got {axis!r}")
    if x.ndim == 0 or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"{fn}: axis {axis} is out of range for an input of shape "
                         f"{tuple(x.shape)}")
    return axis % x.ndim


def softmax(x: Any, axis: int = -1) -> Any:
    """``exp(x) / sum(exp(x), axis)``, shifted by the maximum for stability.

    Parameters
    ----------
    x : Array
        Real floating input with at least one dimension.
    axis : int
        The axis that sums to one.

    Returns
    -------
    Array
        Same shape and dtype as ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not a real floating clnp array or ``axis`` is not an int.
    ValueError
        If ``axis`` is out of range.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> F.softmax(clnp.asarray([[1.0, 1.0]]), axis=-1).tolist()
    [[0.5, 0.5]]
    """
    chk.array("softmax", "x", x)
    axis = _axis("softmax", x, axis)
    return _softmax(x, axis)


def _softmax(x: Any, axis: int) -> Any:
    from clnp_grad import stop_gradient
    xw = wide(x)
    # the shift cancels exactly, so it carries no derivative (saves a max in the backward pass)
    m = stop_gradient(xp.max(xw, axis=axis, keepdims=True))
    e = xp.exp(xw - m)
    return narrow(e / xp.sum(e, axis=axis, keepdims=True), x.dtype)


def log_softmax(x: Any, axis: int = -1) -> Any:
    """``x - logsumexp(x, axis)``, computed stably.

    Parameters
    ----------
    x : Array
        Real floating input with at least one dimension.
    axis : int
        The normalised axis.

    Returns
    -------
    Array
        Same shape and dtype as ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not a real floating clnp array or ``axis`` is not an int.
    ValueError
        If ``axis`` is out of range.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> round(float(F.log_softmax(clnp.asarray([0.0, 0.0]))[0]), 4)
    -0.6931
    """
    chk.array("log_softmax", "x", x)
    axis = _axis("log_softmax", x, axis)
    return _log_softmax(x, axis)


def _log_softmax(x: Any, axis: int) -> Any:
    return narrow(_log_softmax_wide(x, axis), x.dtype)


def _log_softmax_wide(x: Any, axis: int) -> Any:
    """log_softmax in float32 for half-precision ``x`` (its own dtype otherwise): losses keep
    the log-probabilities at this precision and round only their result."""
    from clnp_grad import stop_gradient
    xw = wide(x)
    m = stop_gradient(xp.max(xw, axis=axis, keepdims=True))
    z = xw - m
    return z - xp.log(xp.sum(xp.exp(z), axis=axis, keepdims=True))
