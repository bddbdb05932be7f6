"""Normalisation: ``batch_norm`` (pure: it returns the new running statistics),
``layer_norm``, ``group_norm``, ``rms_norm``.

Statistics are two-pass (mean, then the mean of squared deviations) and float16 inputs are
normalised in float32, the result cast back, so half-precision storage does not cost
accuracy in the reductions.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import clnp as xp

from . import _checks as chk

__all__ = ["batch_norm", "layer_norm", "group_norm", "rms_norm"]


def _as(v: Any, dtype: Any) -> Any:
    """``v`` in ``dtype``, without a copy when it already is."""
    return v if v.dtype == dtype else v.astype(dtype)


def _upcast(x: Any) -> Any:
    return _as(x, xp.float32) if x.dtype in (xp.float16, xp.bfloat16) else x


def _moments(x: Any, axes: tuple[int, ...]) -> tuple[Any, Any]:
    mean = xp.mean(x, axis=axes, keepdims=True)
    d = x - mean
    return mean, xp.mean(d * d, axis=axes, keepdims=True)


def _affine(y: Any, weight: Any, bias: Any, shape: tuple[int, ...]) -> Any:
    if weight is not None:
        y = y * xp.reshape(_as(weight, y.dtype), shape)
    if bias is not None:
        y = y + xp.reshape(_as(bias, y.dtype), shape)
    return y


def _float(fn: str, name: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"{fn}: '{name}' must be a Python number, got {type(v).__name__}")
    return float(v)


def batch_norm(x: Any, running_mean: Any, running_var: Any, weight: Any = None,
               bias: Any = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-5) -> tuple[Any, Any, Any]:
    """Batch normalisation over every axis but the channel axis 1, returning the updated
    running statistics instead of writing them.

    In training the batch's mean and biased variance normalise ``x``, and
    ``new_mean = (1 - momentum) * running_mean + momentum * mean``,
    ``new_var = (1 - momentum) * running_var + momentum * unbiased_var`` (PyTorch's update;
    no derivative flows into the new statistics). In evaluation the running statistics
    normalise ``x`` and come back unchanged.

    Parameters
    ----------
    x : Array
        ``(N, C)`` or ``(N, C, *spatial)``, real floating.
    running_mean, running_var : Array or None
        Shape ``(C,)``. None (no running statistics) is allowed only when training; the
        returned statistics are then None too.
    weight, bias : Array, optional
        Shape ``(C,)``: the affine transform after normalising.
    training : bool
        Use batch statistics (and update the running ones).
    momentum : float
        Weight of the batch statistics in the updated running ones: ``new = (1 - momentum) *
        running + momentum * batch`` (the variance unbiased).
    eps : float
        Added to the variance.

    Returns
    -------
    tuple of (Array, Array or None, Array or None)
        ``(y, new_running_mean, new_running_var)``.

    Raises
    ------
    TypeError
        If an argument is not a real floating clnp array, or ``training`` is not a bool.
    ValueError
        If shapes do not match the channel count, the running statistics are missing in
        evaluation, or training sees a single value per channel.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> x = clnp.asarray([[1.0], [3.0]])
    >>> y, m, v = F.batch_norm(x, clnp.zeros(1), clnp.ones(1), training=True, momentum=1.0)
    >>> [round(e, 3) for e in y[:, 0].tolist()], m.tolist(), v.tolist()
    ([-1.0, 1.0], [2.0], [2.0])
    """
    fn = "batch_norm"
    chk.array(fn, "x", x, ndim=range(2, 33))
    if not isinstance(training, (bool, np.bool_)):
        raise TypeError(f"{fn}: training must be a Python bool, got {type(training).__name__}")
    momentum, eps = _float(fn, "momentum", momentum), _float(fn, "eps", eps)
    C = x.shape[1]
    for name, v in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if v is not None:
            chk.array(fn, name, v)
            if tuple(v.shape) != (C,):
                raise ValueError(f"{fn}: '{name}' must have shape ({C},) for an input of shape "
                                 f"{tuple(x.shape)} (channels on axis 1), got {tuple(v.shape)}")
    if (running_mean is None) != (running_var is None):
        raise ValueError(f"{fn}: running_mean and running_var must both be arrays or both None")
    chk.same_device(fn, {"x": x, "running_mean": running_mean, "running_var": running_var,
                         "weight": weight, "bias": bias})
    axes = (0,) + tuple(range(2, x.ndim))
    bshape = (1, C) + (1,) * (x.ndim - 2)
    xc = _upcast(x)
    if training:
        n = x.size // C if C else 0
        if n <= 1:
            raise ValueError(f"{fn}: expected more than 1 value per channel when training, got "
                             f"input of shape {tuple(x.shape)}")
        mean, var = _moments(xc, axes)
        y = (xc - mean) / xp.sqrt(var + eps)
        new_mean = new_var = None
        if running_mean is not None:
            from clnp_grad import stop_gradient
            m1 = stop_gradient(xp.reshape(mean, (C,)))
            v1 = stop_gradient(xp.reshape(var, (C,))) * (n / (n - 1))
            new_mean = _as((1.0 - momentum) * _as(running_mean, m1.dtype) + momentum * m1,
                           running_mean.dtype)
            new_var = _as((1.0 - momentum) * _as(running_var, v1.dtype) + momentum * v1,
                          running_var.dtype)
    else:
        if running_mean is None:
            raise ValueError(f"{fn}: running_mean and running_var are required when "
                             f"training=False")
        rm = xp.reshape(_as(running_mean, xc.dtype), bshape)
        rv = xp.reshape(_as(running_var, xc.dtype), bshape)
        y = (xc - rm) / xp.sqrt(rv + eps)
        new_mean, new_var = running_mean, running_var
    y = _as(_affine(y, weight, bias, bshape), x.dtype)
    return y, new_mean, new_var


def layer_norm(x: Any, normalized_shape: Any, weight: Any = None, bias: Any = None,
               eps: float = 1e-5) -> Any:
    """Normalise over the trailing ``normalized_shape`` dims (biased variance), then scale
    and shift elementwise.

    Parameters
    ----------
    x : Array
        Real floating input whose trailing dims are ``normalized_shape``.
    normalized_shape : int or tuple of ints
        The trailing dimensions normalised over.
    weight, bias : Array, optional
        Shape ``normalized_shape``.
    eps : float
        Added to the variance.

    Returns
    -------
    Array
        Same shape and dtype as ``x``.

    Raises
    ------
    TypeError
        If an argument is not a real floating clnp array or dtypes differ.
    ValueError
        If ``normalized_shape`` is not the trailing dims of ``x`` or a parameter's shape
        differs from it.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> [round(e, 3) for e in F.layer_norm(clnp.asarray([[1.0, 3.0]]), 2)[0].tolist()]
    [-1.0, 1.0]
    """
    fn = "layer_norm"
    chk.array(fn, "x", x)
    shape = chk.normalized_shape(fn, x, normalized_shape)
    chk.param_shape(fn, "weight", weight, shape, x)
    chk.param_shape(fn, "bias", bias, shape, x)
    eps = _float(fn, "eps", eps)
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    xc = _upcast(x)
    mean, var = _moments(xc, axes)
    y = (xc - mean) / xp.sqrt(var + eps)
    return _as(_affine(y, weight, bias, shape), x.dtype)


def group_norm(x: Any, num_groups: int, weight: Any = None, bias: Any = None,
               eps: float = 1e-5) -> Any:
    """Normalise each group of ``C / num_groups`` channels (with all spatial positions) per
    sample, then scale and shift per channel.

    Parameters
    ----------
    x : Array
        ``(N, C, *spatial)``, real floating.
    num_groups : int
        Divides ``C``.
    weight, bias : Array, optional
        Shape ``(C,)``.
    eps : float
        Added to the variance.

    Returns
    -------
    Array
        Same shape and dtype as ``x``.

    Raises
    ------
    TypeError
        If an argument is not a real floating clnp array or dtypes differ.
    ValueError
        If ``num_groups`` does not divide the channels or a parameter's shape is not (C,).

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> x = clnp.reshape(clnp.asarray([1.0, 3.0, 1.0, 3.0]), (1, 2, 2))
    >>> [round(e, 3) for e in clnp.reshape(F.group_norm(x, 1), (-1,)).tolist()]
    [-1.0, 1.0, -1.0, 1.0]
    """
    fn = "group_norm"
    chk.array(fn, "x", x, ndim=range(2, 33))
    if isinstance(num_groups, bool) or not isinstance(num_groups, (int, np.integer)) or \
            num_groups < 1:
        raise ValueError(f"{fn}: num_groups must be a positive int, got {num_groups!r}")
    N, C = x.shape[0], x.shape[1]
    if C % num_groups:
        raise ValueError(f"{fn}: num_groups={num_groups} must divide the {C} channels of the "
                         f"input of shape {tuple(x.shape)}")
    chk.param_shape(fn, "weight", weight, (C,), x)
    chk.param_shape(fn, "bias", bias, (C,), x)
    eps = _float(fn, "eps", eps)
    xc = xp.reshape(_upcast(x), (N, int(num_groups), -1))
    mean, var = _moments(xc, (2,))
    y = xp.reshape((xc - mean) / xp.sqrt(var + eps), tuple(x.shape))
    return _as(_affine(y, weight, bias, (1, C) + (1,) * (x.ndim - 2)), x.dtype)


def rms_norm(x: Any, normalized_shape: Any, weight: Any = None, eps: float | None = None) -> Any:
    """``x / sqrt(mean(x**2) + eps) * weight`` over the trailing ``normalized_shape`` dims.

    Parameters
    ----------
    x : Array
        Real floating input whose trailing dims are ``normalized_shape``.
    normalized_shape : int or tuple of ints
        The trailing dimensions normalised over.
    weight : Array, optional
        Shape ``normalized_shape``.
    eps : float, optional
        Defaults to the machine epsilon of ``x``'s dtype (PyTorch's default).

    Returns
    -------
    Array
        Same shape and dtype as ``x``.

    Raises
    ------
    TypeError
        If an argument is not a real floating clnp array or dtypes differ.
    ValueError
        If ``normalized_shape`` is not the trailing dims of ``x``.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> [round(e, 3) for e in F.rms_norm(clnp.asarray([[3.0, 4.0]]), 2)[0].tolist()]
    [0.849, 1.131]
    """
    fn = "rms_norm"
    chk.array(fn, "x", x)
    shape = chk.normalized_shape(fn, x, normalized_shape)
    chk.param_shape(fn, "weight", weight, shape, x)
    eps = float(xp.finfo(x.dtype).eps) if eps is None else _float(fn, "eps", eps)
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    xc = _upcast(x)
    y = xc / xp.sqrt(xp.mean(xc * xc, axis=axes, keepdims=True) + eps)
    return _as(_affine(y, weight, None, shape), x.dtype)
