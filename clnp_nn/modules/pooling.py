"""Pooling layers: ``MaxPool2d``, ``AvgPool2d``, ``AdaptiveAvgPool2d`` (no parameters: every
field is a static hyper-parameter)."""
from __future__ import annotations

from typing import Any

from .. import functional as F
from ._module import Module, static

__all__ = ["MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d"]


def _tuple(v: Any) -> Any:
    return tuple(v) if isinstance(v, list) else v


class MaxPool2d(Module):
    """Max pooling (:func:`clnp_nn.functional.max_pool2d`).

    Parameters
    ----------
    kernel_size : int or tuple of 2 ints
    stride : int or tuple of 2 ints, optional
        Defaults to ``kernel_size``.
    padding, dilation : int or tuple of 2 ints

    Raises
    ------
    TypeError, ValueError
        When called, as the functional form.

    Examples
    --------
    >>> import clnp_nn as nn
    >>> nn.MaxPool2d(2)(clnp.zeros((1, 1, 4, 4))).shape
    (1, 1, 2, 2)
    """

    kernel_size: Any = static()
    stride: Any = static()
    padding: Any = static()
    dilation: Any = static()

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1):
        self.kernel_size, self.stride = _tuple(kernel_size), _tuple(stride)
        self.padding, self.dilation = _tuple(padding), _tuple(dilation)

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding, self.dilation)


class AvgPool2d(Module):
    """Average pooling (:func:`clnp_nn.functional.avg_pool2d`).

    Parameters
    ----------
    kernel_size : int or tuple of 2 ints
    stride : int or tuple of 2 ints, optional
    padding : int or tuple of 2 ints
    count_include_pad : bool
    divisor_override : int, optional

    Raises
    ------
    TypeError, ValueError
        When called, as the functional form.

    Examples
    --------
    >>> import clnp_nn as nn
    >>> nn.AvgPool2d(2)(clnp.zeros((1, 1, 4, 4))).shape
    (1, 1, 2, 2)
    """

    kernel_size: Any = static()
    stride: Any = static()
    padding: Any = static()
    count_include_pad: bool = static()
    divisor_override: Any = static()

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 count_include_pad: bool = True, divisor_override: int | None = None):
        self.kernel_size, self.stride, self.padding = (_tuple(kernel_size), _tuple(stride),
                                                       _tuple(padding))
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
        return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding,
                            self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool2d(Module):
    """Average pooling to a fixed output size (:func:`clnp_nn.functional.adaptive_avg_pool2d`).

    Parameters
    ----------
    output_size : int or tuple of 2 (int or None)

    Raises
    ------
    TypeError, ValueError
        When called, as the functional form.

    Examples
    --------
    >>> import clnp_nn as nn
    >>> nn.AdaptiveAvgPool2d(1)(clnp.zeros((1, 1, 4, 4))).shape
    (1, 1, 1, 1)
    """

    output_size: Any = static()

    def __init__(self, output_size: Any):
        self.output_size = _tuple(output_size)

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
        return F.adaptive_avg_pool2d(x, self.output_size)
