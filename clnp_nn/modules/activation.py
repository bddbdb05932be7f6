"""Activations as layers: ``ReLU``, ``GELU``, ``SiLU``, ``Sigmoid``, ``Tanh``."""
from __future__ import annotations

from typing import Any

from .. import functional as F
from ._module import Module, static

__all__ = ["ReLU", "GELU", "SiLU", "Sigmoid", "Tanh"]


class ReLU(Module):
    """:func:`clnp_nn.functional.relu` as a layer.

    Examples
    --------
    >>> import clnp_nn as nn
    >>> nn.ReLU()(clnp.asarray([-1.0, 1.0])).tolist()
    [0.0, 1.0]
    """

    def __init__(self) -> None:
        pass

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
        """``max(x, 0)`` elementwise (:func:`clnp_nn.functional.relu`).

        Parameters
        ----------
        x : array
            Input of any shape, of a real floating-point dtype.
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
        TypeError
            ``x`` is not a clnp array of a real floating-point dtype.

        Examples
        --------
        >>> import numpy, clnp
        >>> import clnp_nn as nn
        >>> x = clnp.asarray([-1.0, 0.0, 2.0], dtype=clnp.float32)
        >>> print(nn.ReLU()(x))
        [0. 0. 2.]
        """
        return F.relu(x)


class GELU(Module):
    """:func:`clnp_nn.functional.gelu` as a layer.

    Parameters
    ----------
    approximate : {"none", "tanh"}

    Raises
    ------
    ValueError
        For another ``approximate``.

    Examples
    --------
    >>> import clnp_nn as nn
    >>> nn.GELU(approximate="tanh")(clnp.asarray([0.0])).tolist()
    [0.0]
    """

    approximate: str = static()

    def __init__(self, approximate: str = "none") -> None:
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
        """``x * Phi(x)`` (the tanh approximation with ``approximate='tanh'``) elementwise (:func:`clnp_nn.functional.gelu`).

        Parameters
        ----------
        x : array
            Input of any shape, of a real floating-point dtype.
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
        TypeError
            ``x`` is not a clnp array of a real floating-point dtype.

        Examples
        --------
        >>> import numpy, clnp
        >>> import clnp_nn as nn
        >>> x = clnp.asarray([-3.0, 0.0, 3.0], dtype=clnp.float32)
        >>> print(numpy.round(numpy.asarray(nn.GELU()(x)), 2))
        [-0.  0.  3.]
        """
        return F.gelu(x, self.approximate)


class SiLU(Module):
    """:func:`clnp_nn.functional.silu` as a layer.

    Examples
    --------
    >>> import clnp_nn as nn
    >>> nn.SiLU()(clnp.asarray([0.0])).tolist()
    [0.0]
    """

    def __init__(self) -> None:
        pass

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
        """``x * sigmoid(x)`` elementwise (:func:`clnp_nn.functional.silu`).

        Parameters
        ----------
        x : array
            Input of any shape, of a real floating-point dtype.
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
        TypeError
            ``x`` is not a clnp array of a real floating-point dtype.

        Examples
        --------
        >>> import numpy, clnp
        >>> import clnp_nn as nn
        >>> x = clnp.asarray([0.0, 2.0], dtype=clnp.float32)
        >>> print(numpy.round(numpy.asarray(nn.SiLU()(x)), 4))
        [0.     1.7616]
        """
        return F.silu(x)


class Sigmoid(Module):
    """:func:`clnp_nn.functional.sigmoid` as a layer.

    Examples
    --------
    >>> import clnp_nn as nn
    >>> nn.Sigmoid()(clnp.asarray([0.0])).tolist()
    [0.5]
    """

    def __init__(self) -> None:
        pass

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
        """``1 / (1 + exp(-x))`` elementwise (:func:`clnp_nn.functional.sigmoid`).

        Parameters
        ----------
        x : array
            Input of any shape, of a real floating-point dtype.
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
        TypeError
            ``x`` is not a clnp array of a real floating-point dtype.

        Examples
        --------
        >>> import numpy, clnp
        >>> import clnp_nn as nn
        >>> x = clnp.asarray([0.0], dtype=clnp.float32)
        >>> print(nn.Sigmoid()(x))
        [0.5]
        """
        return F.sigmoid(x)


class Tanh(Module):
    """``clnp.tanh`` as a layer.

    Examples
    --------
    >>> import clnp_nn as nn
    >>> nn.Tanh()(clnp.asarray([0.0])).tolist()
    [0.0]
    """

    def __init__(self) -> None:
        pass

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
        """``tanh(x)`` elementwise (:func:`clnp_nn.functional.tanh`).

        Parameters
        ----------
        x : array
            Input of any shape, of a real floating-point dtype.
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
        TypeError
            ``x`` is not a clnp array of a real floating-point dtype.

        Examples
        --------
        >>> import numpy, clnp
        >>> import clnp_nn as nn
        >>> x = clnp.asarray([0.0, 100.0], dtype=clnp.float32)
        >>> print(nn.Tanh()(x))
        [0. 1.]
        """
        return F.tanh(x)
