"""``Linear``: a fully connected layer with PyTorch's parameters and initialisation."""
from __future__ import annotations

import math
from typing import Any

from .. import functional as F
from . import init
from ._module import Module, static
from ._util import need_key, positive_int, split

__all__ = ["Linear", "Identity"]


class Linear(Module):
    """``y = x @ weight.T + bias``.

    Parameters
    ----------
    in_features, out_features : int
    bias : bool
        Whether the layer has a bias.
    key : Array
        A ``clnp_grad.random`` key for the initialisation.
    dtype : dtype, optional
        Parameter dtype (default float32).

    Attributes
    ----------
    weight : Array
        ``(out_features, in_features)``, ``U(-1/sqrt(in), 1/sqrt(in))`` (PyTorch's
        ``kaiming_uniform(a=sqrt(5))``).
    bias : Array or None
        ``(out_features,)``, ``U(-1/sqrt(in), 1/sqrt(in))``.

    Raises
    ------
    TypeError
        If ``key`` is missing.
    ValueError
        If a size is not a positive int.

    Examples
    --------
    >>> import clnp_nn as nn
    >>> layer = nn.Linear(3, 2, key=cg.random.key(0))
    >>> layer.weight.shape, layer.bias.shape
    ((2, 3), (2,))
    >>> layer(clnp.ones((4, 3), dtype=clnp.float32)).shape
    (4, 2)
    """

    weight: Any
    bias: Any
    in_features: int = static()
    out_features: int = static()

    def __init__(self, in_features: int, out_features: int, bias: bool = True, *,
                 key: Any = None, dtype: Any = None):
        need_key("Linear", key)
        self.in_features = positive_int("Linear", "in_features", in_features)
        self.out_features = positive_int("Linear", "out_features", out_features)
        wkey, bkey = split(key, 2)
        self.weight = init.kaiming_uniform(wkey, (out_features, in_features), a=math.sqrt(5),
                                           dtype=dtype)
        bound = 1.0 / math.sqrt(in_features)
        self.bias = init.uniform(bkey, (out_features,), -bound, bound, dtype) if bias else None

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
        """``x @ weight.T + bias`` (:func:`clnp_nn.functional.linear`).

        Parameters
        ----------
        x : array
            Shape ``(*, in_features)``, of a real floating-point dtype.
        key : clnp_grad.random key, optional
            Not used: the layer draws no random numbers (every layer takes ``key`` so that
            containers can pass keys to all of them).
        training : bool, default True
            Not used: the layer computes the same in training and in evaluation.

        Returns
        -------
        array
            Shape ``(*, out_features)``.

        Raises
        ------
        ValueError
            ``x``'s last dimension is not ``in_features``.
        TypeError
            ``x`` is not a clnp array of a real floating-point dtype.

        Examples
        --------
        >>> import clnp, clnp_grad as cg
        >>> import clnp_nn as nn
        >>> layer = nn.Linear(3, 2, key=cg.random.key(0))
        >>> layer = layer.replace(weight=clnp.ones((2, 3), dtype=clnp.float32),
        ...                       bias=clnp.asarray([0.0, 1.0], dtype=clnp.float32))
        >>> print(layer(clnp.asarray([[1.0, 2.0, 3.0]], dtype=clnp.float32)))
        [[6. 7.]]
        """
        return F.linear(x, self.weight, self.bias)


class Identity(Module):
    """Returns its input (a placeholder layer, as PyTorch's ``Identity``).

    Examples
    --------
    >>> import clnp_nn as nn
    >>> nn.Identity()(clnp.ones(2)).tolist()
    [1.0, 1.0]
    """

    def __init__(self) -> None:
        pass

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
        """``x`` itself.

        Parameters
        ----------
        x : array
            Any input.
        key : clnp_grad.random key, optional
            Not used: the layer draws no random numbers (every layer takes ``key`` so that
            containers can pass keys to all of them).
        training : bool, default True
            Not used: the layer computes the same in training and in evaluation.

        Returns
        -------
        array
            ``x``, unchanged (the same object).

        Examples
        --------
        >>> import clnp
        >>> import clnp_nn as nn
        >>> x = clnp.ones(2)
        >>> nn.Identity()(x) is x
        True
        """
        return x
