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
    >>> ReLU()(x)
    """

    def __init__(self) -> None:
        pass

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
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
    >>> GELU(approximate="tanh")(x)
    """

    approximate: str = static()

    def __init__(self, approximate: str = "none") -> None:
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
        return F.gelu(x, self.approximate)


class SiLU(Module):
    """:func:`clnp_nn.functional.silu` as a layer.

    Examples
    --------
    >>> SiLU()(x)
    """

    def __init__(self) -> None:
        pass

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
        return F.silu(x)


class Sigmoid(Module):
    """:func:`clnp_nn.functional.sigmoid` as a layer.

    Examples
    --------
    >>> Sigmoid()(x)
    """

    def __init__(self) -> None:
        pass

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
        return F.sigmoid(x)


class Tanh(Module):
    """``clnp.tanh`` as a layer.

    Examples
    --------
    >>> Tanh()(x)
    """

    def __init__(self) -> None:
        pass

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
        return F.tanh(x)
