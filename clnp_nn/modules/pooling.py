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
        """Maximum over each window (:func:`clnp_nn.functional.max_pool2d`).

        Parameters
        ----------
        x : array
            Shape ``(N, C, H, W)`` or ``(C, H, W)``.
        key : clnp_grad.random key, optional
            Not used: the layer draws no random numbers (every layer takes ``key`` so that
            containers can pass keys to all of them).
        training : bool, default True
            Not used: the layer computes the same in training and in evaluation.

        Returns
        -------
        array
            Shape ``(N, C, H_out, W_out)`` (or ``(C, H_out, W_out)``), of ``x``'s dtype.

        Raises
        ------
        ValueError
            ``x`` is not 3-D or 4-D, or the window does not fit.
        TypeError
            ``x`` is not a clnp array of a real floating-point dtype.

        Examples
        --------
        >>> import clnp
        >>> import clnp_nn as nn
        >>> x = clnp.reshape(clnp.arange(16, dtype=clnp.float32), (1, 1, 4, 4))
        >>> print(nn.MaxPool2d(2)(x))
        [[[[ 5.  7.]
           [13. 15.]]]]
        """
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
        """Mean over each window (:func:`clnp_nn.functional.avg_pool2d`).

        Parameters
        ----------
        x : array
            Shape ``(N, C, H, W)`` or ``(C, H, W)``.
        key : clnp_grad.random key, optional
            Not used: the layer draws no random numbers (every layer takes ``key`` so that
            containers can pass keys to all of them).
        training : bool, default True
            Not used: the layer computes the same in training and in evaluation.

        Returns
        -------
        array
            Shape ``(N, C, H_out, W_out)`` (or ``(C, H_out, W_out)``), of ``x``'s dtype.

        Raises
        ------
        ValueError
            ``x`` is not 3-D or 4-D, or the window does not fit.
        TypeError
            ``x`` is not a clnp array of a real floating-point dtype.

        Examples
        --------
        >>> import clnp
        >>> import clnp_nn as nn
        >>> x = clnp.reshape(clnp.arange(16, dtype=clnp.float32), (1, 1, 4, 4))
        >>> print(nn.AvgPool2d(2)(x))
        [[[[ 2.5  4.5]
           [10.5 12.5]]]]
        """
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
        """Mean over the windows that divide ``x`` into ``output_size`` cells (:func:`clnp_nn.functional.adaptive_avg_pool2d`).

        Parameters
        ----------
        x : array
            Shape ``(N, C, H, W)`` or ``(C, H, W)``.
        key : clnp_grad.random key, optional
            Not used: the layer draws no random numbers (every layer takes ``key`` so that
            containers can pass keys to all of them).
        training : bool, default True
            Not used: the layer computes the same in training and in evaluation.

        Returns
        -------
        array
            Shape ``(N, C) + output_size`` (or ``(C,) + output_size``), of ``x``'s dtype.

        Raises
        ------
        ValueError
            ``x`` is not 3-D or 4-D.
        TypeError
            ``x`` is not a clnp array of a real floating-point dtype.

        Examples
        --------
        >>> import clnp
        >>> import clnp_nn as nn
        >>> x = clnp.reshape(clnp.arange(16, dtype=clnp.float32), (1, 1, 4, 4))
        >>> print(nn.AdaptiveAvgPool2d(1)(x))
        [[[[7.5]]]]
        """
        return F.adaptive_avg_pool2d(x, self.output_size)
