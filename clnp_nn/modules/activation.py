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
        return F.tanh(x)
