"""Convolution layers: ``Conv1d``, ``Conv2d``, ``ConvTranspose2d`` (PyTorch's parameters,
attribute names and initialisation)."""
from __future__ import annotations

import math
from typing import Any

from .. import functional as F
from . import init
from ._module import Module, static
from ._util import need_key, positive_int, size_tuple, split

__all__ = ["Conv1d", "Conv2d", "ConvTranspose2d"]


def _padding(cls: str, padding: Any, n: int) -> Any:
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise ValueError(f"{cls}: padding must be an int, a tuple, 'same' or 'valid', got "
                             f"{padding!r}")
        return padding
    return size_tuple(cls, "padding", padding, n, minimum=0)


def _init(key: Any, shape: tuple, fan_in_shape: tuple, bias: bool, out: int,
          dtype: Any) -> tuple[Any, Any]:
    """PyTorch's ``reset_parameters`` of its conv layers."""
    wkey, bkey = split(key, 2)
    w = init.kaiming_uniform(wkey, shape, a=math.sqrt(5), dtype=dtype)
    fan_in, _ = init.calculate_fans(fan_in_shape)
    bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
    b = init.uniform(bkey, (out,), -bound, bound, dtype) if bias else None
    return w, b


class _ConvNd(Module):
    weight: Any
    bias: Any
    in_channels: int = static()
    out_channels: int = static()
    kernel_size: tuple = static()
    stride: tuple = static()
    padding: Any = static()
    dilation: tuple = static()
    groups: int = static()

    def _setup(self, cls: str, n: int, in_channels: int, out_channels: int, kernel_size: Any,
               stride: Any, padding: Any, dilation: Any, groups: int) -> None:
        self.in_channels = positive_int(cls, "in_channels", in_channels)
        self.out_channels = positive_int(cls, "out_channels", out_channels)
        self.groups = positive_int(cls, "groups", groups)
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{cls}: in_channels {in_channels} and out_channels "
                             f"{out_channels} must be divisible by groups={groups}")
        self.kernel_size = size_tuple(cls, "kernel_size", kernel_size, n)
        self.stride = size_tuple(cls, "stride", stride, n)
        self.dilation = size_tuple(cls, "dilation", dilation, n)


class Conv2d(_ConvNd):
    """2-D convolution over ``(N, C, H, W)``.

    Parameters
    ----------
    in_channels, out_channels : int
    kernel_size, stride, dilation : int or tuple of 2 ints
    padding : int, tuple of 2 ints, "same" or "valid"
    groups : int
    bias : bool
    key : Array
        A ``clnp_grad.random`` key for the initialisation.
    dtype : dtype, optional

    Attributes
    ----------
    weight : Array
        ``(out_channels, in_channels/groups, KH, KW)``, ``U(-1/sqrt(fan_in), ...)`` with
        ``fan_in = in_channels/groups * KH * KW``.
    bias : Array or None
        ``(out_channels,)``, same bound.

    Raises
    ------
    TypeError
        If ``key`` is missing or a size is malformed.
    ValueError
        If sizes are not positive or channels are not divisible by ``groups``.

    Examples
    --------
    >>> import clnp_nn as nn
    >>> conv = nn.Conv2d(1, 2, 3, padding=1, key=cg.random.key(0))
    >>> conv.weight.shape
    (2, 1, 3, 3)
    >>> conv(clnp.ones((1, 1, 4, 4), dtype=clnp.float32)).shape
    (1, 2, 4, 4)
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True, *,
                 key: Any = None, dtype: Any = None):
        need_key("Conv2d", key)
        self._setup("Conv2d", 2, in_channels, out_channels, kernel_size, stride, padding,
                    dilation, groups)
        self.padding = _padding("Conv2d", padding, 2)
        shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight, self.bias = _init(key, shape, shape, bias, out_channels, dtype)

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
        """2-D cross-correlation with the layer's weight and bias (:func:`clnp_nn.functional.conv2d`).

        Parameters
        ----------
        x : array
            Shape ``(N, in_channels, H, W)`` or ``(in_channels, H, W)``.
        key : clnp_grad.random key, optional
            Not used: the layer draws no random numbers (every layer takes ``key`` so that
            containers can pass keys to all of them).
        training : bool, default True
            Not used: the layer computes the same in training and in evaluation.

        Returns
        -------
        array
            Shape ``(N, out_channels, H_out, W_out)`` (or without ``N``).

        Raises
        ------
        ValueError
            ``x`` is not 3-D or 4-D, or has another number of channels.
        TypeError
            ``x`` is not a clnp array of a real floating-point dtype.

        Examples
        --------
        >>> import clnp, clnp_grad as cg
        >>> import clnp_nn as nn
        >>> conv = nn.Conv2d(1, 1, 2, bias=False, key=cg.random.key(0))
        >>> conv = conv.replace(weight=clnp.ones((1, 1, 2, 2), dtype=clnp.float32))
        >>> x = clnp.reshape(clnp.arange(9, dtype=clnp.float32), (1, 1, 3, 3))
        >>> print(conv(x))                       # sums of 2 x 2 windows
        [[[[ 8. 12.]
           [20. 24.]]]]
        """
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)


class Conv1d(_ConvNd):
    """1-D convolution over ``(N, C, L)``.

    Parameters
    ----------
    in_channels, out_channels : int
    kernel_size, stride, dilation : int or tuple of 1 int
    padding : int, tuple of 1 int, "same" or "valid"
    groups : int
    bias : bool
    key : Array
    dtype : dtype, optional

    Attributes
    ----------
    weight : Array
        ``(out_channels, in_channels/groups, K)``.
    bias : Array or None
        ``(out_channels,)``.

    Raises
    ------
    TypeError, ValueError
        As :class:`Conv2d`.

    Examples
    --------
    >>> import clnp_nn as nn
    >>> conv = nn.Conv1d(2, 3, 3, padding="same", key=cg.random.key(0))
    >>> conv.weight.shape
    (3, 2, 3)
    >>> conv(clnp.ones((1, 2, 5), dtype=clnp.float32)).shape
    (1, 3, 5)
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True, *,
                 key: Any = None, dtype: Any = None):
        need_key("Conv1d", key)
        self._setup("Conv1d", 1, in_channels, out_channels, kernel_size, stride, padding,
                    dilation, groups)
        self.padding = _padding("Conv1d", padding, 1)
        shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight, self.bias = _init(key, shape, shape, bias, out_channels, dtype)

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
        """1-D cross-correlation with the layer's weight and bias (:func:`clnp_nn.functional.conv1d`).

        Parameters
        ----------
        x : array
            Shape ``(N, in_channels, L)`` or ``(in_channels, L)``.
        key : clnp_grad.random key, optional
            Not used: the layer draws no random numbers (every layer takes ``key`` so that
            containers can pass keys to all of them).
        training : bool, default True
            Not used: the layer computes the same in training and in evaluation.

        Returns
        -------
        array
            Shape ``(N, out_channels, L_out)`` (or without ``N``).

        Raises
        ------
        ValueError
            ``x`` is not 2-D or 3-D, or has another number of channels.
        TypeError
            ``x`` is not a clnp array of a real floating-point dtype.

        Examples
        --------
        >>> import clnp, clnp_grad as cg
        >>> import clnp_nn as nn
        >>> conv = nn.Conv1d(1, 1, 2, bias=False, key=cg.random.key(0))
        >>> conv = conv.replace(weight=clnp.asarray([[[1.0, -1.0]]], dtype=clnp.float32))
        >>> print(conv(clnp.asarray([[[1.0, 4.0, 9.0]]], dtype=clnp.float32)))   # differences
        [[[-3. -5.]]]
        """
        return F.conv1d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)


class ConvTranspose2d(_ConvNd):
    """2-D transposed convolution over ``(N, C, H, W)``.

    Parameters
    ----------
    in_channels, out_channels : int
    kernel_size, stride, padding, output_padding, dilation : int or tuple of 2 ints
    groups : int
    bias : bool
    key : Array
    dtype : dtype, optional

    Attributes
    ----------
    weight : Array
        ``(in_channels, out_channels/groups, KH, KW)``, ``U(-1/sqrt(fan_in), ...)`` with
        PyTorch's ``fan_in = out_channels/groups * KH * KW``.
    bias : Array or None
        ``(out_channels,)``.

    Raises
    ------
    TypeError, ValueError
        As :class:`Conv2d`.

    Examples
    --------
    >>> import clnp_nn as nn
    >>> up = nn.ConvTranspose2d(2, 1, 2, stride=2, key=cg.random.key(0))
    >>> up.weight.shape
    (2, 1, 2, 2)
    >>> up(clnp.ones((1, 2, 3, 3), dtype=clnp.float32)).shape
    (1, 1, 6, 6)
    """

    output_padding: tuple = static()

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, *, key: Any = None, dtype: Any = None):
        need_key("ConvTranspose2d", key)
        self._setup("ConvTranspose2d", 2, in_channels, out_channels, kernel_size, stride,
                    padding, dilation, groups)
        self.padding = size_tuple("ConvTranspose2d", "padding", padding, 2, minimum=0)
        self.output_padding = size_tuple("ConvTranspose2d", "output_padding", output_padding,
                                         2, minimum=0)
        shape = (in_channels, out_channels // groups) + self.kernel_size
        self.weight, self.bias = _init(key, shape, shape, bias, out_channels, dtype)

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
        """2-D transposed convolution (the gradient of ``conv2d`` with respect to its input) with the layer's weight and bias (:func:`clnp_nn.functional.conv_transpose2d`).

        Parameters
        ----------
        x : array
            Shape ``(N, in_channels, H, W)`` or ``(in_channels, H, W)``.
        key : clnp_grad.random key, optional
            Not used: the layer draws no random numbers (every layer takes ``key`` so that
            containers can pass keys to all of them).
        training : bool, default True
            Not used: the layer computes the same in training and in evaluation.

        Returns
        -------
        array
            Shape ``(N, out_channels, H_out, W_out)`` (or without ``N``).

        Raises
        ------
        ValueError
            ``x`` is not 3-D or 4-D, or has another number of channels.
        TypeError
            ``x`` is not a clnp array of a real floating-point dtype.

        Examples
        --------
        >>> import clnp, clnp_grad as cg
        >>> import clnp_nn as nn
        >>> up = nn.ConvTranspose2d(1, 1, 2, stride=2, bias=False, key=cg.random.key(0))
        >>> up = up.replace(weight=clnp.ones((1, 1, 2, 2), dtype=clnp.float32))
        >>> print(up(clnp.asarray([[[[1.0, 2.0]]]], dtype=clnp.float32)))  # each pixel to 2 x 2
        [[[[1. 1. 2. 2.]
           [1. 1. 2. 2.]]]]
        """
        return F.conv_transpose2d(x, self.weight, self.bias, self.stride, self.padding,
                                  self.output_padding, self.groups, self.dilation)
