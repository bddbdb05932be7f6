"""``Dropout``: the layer form of :func:`clnp_nn.functional.dropout`."""
from __future__ import annotations

from typing import Any

from .. import functional as F
from ..functional import _checks as chk
from ._module import Module, static

__all__ = ["Dropout"]


class Dropout(Module):
    """Zero elements with probability ``p`` in training, scaling the rest by ``1/(1-p)``.

    Parameters
    ----------
    p : float
        In [0, 1].

    Raises
    ------
    ValueError
        If ``p`` is outside [0, 1]; when called in training without a key.

    Examples
    --------
    >>> import clnp_nn as nn
    >>> x = clnp.ones(4, dtype=clnp.float32)
    >>> nn.Dropout(0.5)(x, training=False).tolist()
    [1.0, 1.0, 1.0, 1.0]
    >>> nn.Dropout(0.5)(x, key=cg.random.key(0)).shape
    (4,)
    """

    p: float = static()

    def __init__(self, p: float = 0.5):
        self.p = chk.probability("Dropout", "p", p)

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
        return F.dropout(x, self.p, key=key, training=training)
