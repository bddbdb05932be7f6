"""Normalisation layers: ``BatchNorm1d``/``BatchNorm2d`` (stateful: running statistics),
``LayerNorm``, ``GroupNorm``, ``RMSNorm``."""
from __future__ import annotations

from typing import Any, ClassVar

from .. import functional as F
from . import init
from ._module import Module, buffer, static
from ._util import positive_int

__all__ = ["BatchNorm1d", "BatchNorm2d", "LayerNorm", "GroupNorm", "RMSNorm"]


def _shape(cls: str, normalized_shape: Any) -> tuple[int, ...]:
    if isinstance(normalized_shape, int) and not isinstance(normalized_shape, bool):
        normalized_shape = (normalized_shape,)
    if not isinstance(normalized_shape, (tuple, list)) or not normalized_shape or not all(
            isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in normalized_shape):
        raise ValueError(f"{cls}: normalized_shape must be a positive int or a non-empty tuple "
                         f"of them, got {normalized_shape!r}")
    return tuple(normalized_shape)


class _BatchNorm(Module):
    weight: Any
    bias: Any
    running_mean: Any = buffer()
    running_var: Any = buffer()
    num_features: int = static()
    eps: float = static()
    momentum: float = static()
    affine: bool = static()
    track_running_stats: bool = static()
    stateful = True
    _ranks: ClassVar[tuple] = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = True, track_running_stats: bool = True, *,
                 dtype: Any = None, device: Any = None):
        cls = type(self).__name__
        n = positive_int(cls, "num_features", num_features)
        self.num_features, self.eps, self.momentum = n, float(eps), float(momentum)
        self.affine, self.track_running_stats = bool(affine), bool(track_running_stats)
        self.weight = init.ones((n,), dtype, device) if affine else None
        self.bias = init.zeros((n,), dtype, device) if affine else None
        self.running_mean = init.zeros((n,), dtype, device) if track_running_stats else None
        self.running_var = init.ones((n,), dtype, device) if track_running_stats else None

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> tuple[Any, Any]:
        """``(y, new_layer)``: in training the batch statistics normalise ``x`` and the new
        layer carries the updated running statistics; in evaluation the running statistics
        normalise ``x`` and the layer comes back unchanged.

        Parameters
        ----------
        x : array
            ``(N, C)`` or ``(N, C, L)`` for ``BatchNorm1d``, ``(N, C, H, W)`` for ``BatchNorm2d``;
            ``C`` is ``num_features``.
        key : clnp_grad.random key, optional
            Not used: the layer draws no random numbers.
        training : bool, default True
            Batch statistics and updated running statistics (True), or the running statistics
            (False; also True without ``track_running_stats``).

        Returns
        -------
        tuple
            A pair: the normalised ``x`` (its shape and dtype) and the layer to use next.

        Raises
        ------
        ValueError
            ``x`` has another number of dimensions, or ``C`` is not ``num_features``.
        TypeError
            ``x`` is not a clnp array of a real floating-point dtype.

        Examples
        --------
        >>> import numpy, clnp
        >>> import clnp_nn as nn
        >>> bn = nn.BatchNorm1d(2)
        >>> x = clnp.asarray([[1.0, 2.0], [3.0, 6.0]], dtype=clnp.float32)
        >>> y, bn = bn(x)                        # training: batch statistics
        >>> print(numpy.round(numpy.asarray(y), 3))
        [[-1. -1.]
         [ 1.  1.]]
        >>> print(bn.running_mean)               # momentum 0.1 towards the batch mean [2, 4]
        [0.2 0.4]
        >>> y, same = bn(x, training=False)      # evaluation: running statistics
        >>> same is bn
        True
        """
        cls = type(self).__name__
        if not (hasattr(x, "ndim") and hasattr(x, "dtype")):
            raise TypeError(f"{cls}: argument 'x' must be a clnp array, got {type(x).__name__}")
        if x.ndim not in self._ranks:
            ranks = " or ".join(f"{r}-D" for r in self._ranks)
            raise ValueError(f"{cls}: expected {ranks} input, got shape {tuple(x.shape)}")
        if x.shape[1] != self.num_features:
            # named here: batch_norm would blame running_mean, which the user never passed
            raise ValueError(f"{cls}: the input of shape {tuple(x.shape)} has {x.shape[1]} "
                             f"channels (axis 1) but the layer has num_features="
                             f"{self.num_features}")
        use_batch = training or not self.track_running_stats
        y, m, v = F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                               training=bool(use_batch), momentum=self.momentum, eps=self.eps)
        if not (training and self.track_running_stats):
            return y, self
        return y, self.replace(running_mean=m, running_var=v)


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of ``(N, C)`` or ``(N, C, L)`` input, with running statistics.

    Parameters
    ----------
    num_features : int
        ``C``.
    eps, momentum : float
    affine : bool
        Learnable ``weight`` (ones) and ``bias`` (zeros).
    track_running_stats : bool
        Keep ``running_mean`` (zeros) and ``running_var`` (ones) as buffers.
    dtype, device : optional

    Raises
    ------
    ValueError
        If ``num_features`` is not a positive int, or (when called) the input rank is wrong.

    Examples
    --------
    >>> import clnp_nn as nn
    >>> bn = nn.BatchNorm1d(1, momentum=0.5)
    >>> y, bn = bn(clnp.asarray([[1.0], [3.0]], dtype=clnp.float32), training=True)
    >>> bn.running_mean.tolist(), bn.running_var.tolist()
    ([1.0], [1.5])
    """

    _ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of ``(N, C, H, W)`` input, with running statistics.

    Parameters
    ----------
    num_features : int
    eps, momentum : float
    affine, track_running_stats : bool
    dtype, device : optional

    Raises
    ------
    ValueError
        If ``num_features`` is not a positive int, or (when called) the input is not 4-D.

    Examples
    --------
    >>> import clnp_nn as nn
    >>> x = clnp.zeros((2, 3, 4, 4), dtype=clnp.float32)
    >>> y, bn = nn.BatchNorm2d(3)(x, training=True)
    >>> y.shape
    (2, 3, 4, 4)
    >>> _, same = bn(x, training=False)
    >>> same is bn
    True
    """

    _ranks = (4,)


class LayerNorm(Module):
    """Layer normalisation over the trailing ``normalized_shape`` dims.

    Parameters
    ----------
    normalized_shape : int or tuple of ints
    eps : float
    elementwise_affine : bool
        Learnable ``weight`` (ones) of ``normalized_shape``.
    bias : bool
        Learnable ``bias`` (zeros), when ``elementwise_affine``.
    dtype, device : optional

    Raises
    ------
    ValueError
        For a malformed ``normalized_shape``.

    Examples
    --------
    >>> import clnp_nn as nn
    >>> nn.LayerNorm(4)(clnp.zeros((2, 4), dtype=clnp.float32)).shape
    (2, 4)
    """

    weight: Any
    bias: Any
    normalized_shape: tuple = static()
    eps: float = static()
    elementwise_affine: bool = static()

    def __init__(self, normalized_shape: Any, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, *, dtype: Any = None, device: Any = None):
        self.normalized_shape = _shape("LayerNorm", normalized_shape)
        self.eps, self.elementwise_affine = float(eps), bool(elementwise_affine)
        s = self.normalized_shape
        self.weight = init.ones(s, dtype, device) if elementwise_affine else None
        self.bias = init.zeros(s, dtype, device) if elementwise_affine and bias else None

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
        """Normalise over the trailing ``normalized_shape`` dimensions, then scale and shift (:func:`clnp_nn.functional.layer_norm`).

        Parameters
        ----------
        x : array
            Shape ``(*, *normalized_shape)``, of a real floating-point dtype.
        key : clnp_grad.random key, optional
            Not used: the layer draws no random numbers (every layer takes ``key`` so that
            containers can pass keys to all of them).
        training : bool, default True
            Not used: the layer computes the same in training and in evaluation.

        Returns
        -------
        array
            Of ``x``'s shape and dtype.

        Raises
        ------
        ValueError
            ``x``'s trailing dimensions are not ``normalized_shape``.
        TypeError
            ``x`` is not a clnp array of a real floating-point dtype.

        Examples
        --------
        >>> import numpy, clnp
        >>> import clnp_nn as nn
        >>> y = nn.LayerNorm(2)(clnp.asarray([[1.0, 3.0]], dtype=clnp.float32))
        >>> print(numpy.round(numpy.asarray(y), 3))
        [[-1.  1.]]
        """
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)


class GroupNorm(Module):
    """Group normalisation of ``(N, C, *)`` input.

    Parameters
    ----------
    num_groups : int
        Divides ``num_channels``.
    num_channels : int
    eps : float
    affine : bool
        Learnable per-channel ``weight`` (ones) and ``bias`` (zeros).
    dtype, device : optional

    Raises
    ------
    ValueError
        If the sizes are not positive or ``num_groups`` does not divide ``num_channels``.

    Examples
    --------
    >>> import clnp_nn as nn
    >>> nn.GroupNorm(2, 4)(clnp.zeros((1, 4, 2, 2), dtype=clnp.float32)).shape
    (1, 4, 2, 2)
    """

    weight: Any
    bias: Any
    num_groups: int = static()
    num_channels: int = static()
    eps: float = static()
    affine: bool = static()

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, *, dtype: Any = None, device: Any = None):
        self.num_groups = positive_int("GroupNorm", "num_groups", num_groups)
        self.num_channels = positive_int("GroupNorm", "num_channels", num_channels)
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels {num_channels} must be divisible by "
                             f"num_groups {num_groups}")
        self.eps, self.affine = float(eps), bool(affine)
        self.weight = init.ones((num_channels,), dtype, device) if affine else None
        self.bias = init.zeros((num_channels,), dtype, device) if affine else None

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
        """Normalise each of ``num_groups`` channel groups, then scale and shift per channel (:func:`clnp_nn.functional.group_norm`).

        Parameters
        ----------
        x : array
            Shape ``(N, C, *)`` with ``C = num_channels``.
        key : clnp_grad.random key, optional
            Not used: the layer draws no random numbers (every layer takes ``key`` so that
            containers can pass keys to all of them).
        training : bool, default True
            Not used: the layer computes the same in training and in evaluation.

        Returns
        -------
        array
            Of ``x``'s shape and dtype.

        Raises
        ------
        ValueError
            ``num_groups`` does not divide ``x``'s channels, or they are not ``num_channels``.
        TypeError
            ``x`` is not a clnp array of a real floating-point dtype.

        Examples
        --------
        >>> import numpy, clnp
        >>> import clnp_nn as nn
        >>> x = clnp.asarray([[[1.0], [3.0], [5.0], [5.0]]], dtype=clnp.float32)   # (1, 4, 1)
        >>> print(numpy.round(numpy.asarray(nn.GroupNorm(2, 4)(x))[0, :, 0], 3))
        [-1.  1.  0.  0.]
        """
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)


class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing ``normalized_shape`` dims.

    Parameters
    ----------
    normalized_shape : int or tuple of ints
    eps : float, optional
        Default: the machine epsilon of the input's dtype.
    elementwise_affine : bool
        Learnable ``weight`` (ones).
    dtype, device : optional

    Raises
    ------
    ValueError
        For a malformed ``normalized_shape``.

    Examples
    --------
    >>> import clnp_nn as nn
    >>> nn.RMSNorm(4).weight.tolist()
    [1.0, 1.0, 1.0, 1.0]
    """

    weight: Any
    normalized_shape: tuple = static()
    eps: Any = static()
    elementwise_affine: bool = static()

    def __init__(self, normalized_shape: Any, eps: float | None = None,
                 elementwise_affine: bool = True, *, dtype: Any = None, device: Any = None):
        self.normalized_shape = _shape("RMSNorm", normalized_shape)
        self.eps = None if eps is None else float(eps)
        self.elementwise_affine = bool(elementwise_affine)
        self.weight = init.ones(self.normalized_shape, dtype, device) if elementwise_affine \
            else None

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
        """``x / sqrt(mean(x**2) + eps) * weight`` over the trailing ``normalized_shape`` dimensions (:func:`clnp_nn.functional.rms_norm`).

        Parameters
        ----------
        x : array
            Shape ``(*, *normalized_shape)``, of a real floating-point dtype.
        key : clnp_grad.random key, optional
            Not used: the layer draws no random numbers (every layer takes ``key`` so that
            containers can pass keys to all of them).
        training : bool, default True
            Not used: the layer computes the same in training and in evaluation.

        Returns
        -------
        array
            Of ``x``'s shape and dtype.

        Raises
        ------
        ValueError
            ``x``'s trailing dimensions are not ``normalized_shape``.
        TypeError
            ``x`` is not a clnp array of a real floating-point dtype.

        Examples
        --------
        >>> import numpy, clnp
        >>> import clnp_nn as nn
        >>> y = nn.RMSNorm(2)(clnp.asarray([[3.0, 4.0]], dtype=clnp.float32))
        >>> print(numpy.round(numpy.asarray(y) ** 2, 3))     # mean square 1
        [[0.72 1.28]]
        """
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)
