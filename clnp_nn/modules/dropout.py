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
        """In training, zero each element with probability ``p`` and scale the others by ``1 / (1 - p)``; in evaluation, ``x`` unchanged (:func:`clnp_nn.functional.dropout`).

        Parameters
        ----------
        x : array
            Input of any shape, of a real floating-point dtype.
        key : clnp_grad.random key, optional
            The random key for the mask; required in training when ``p > 0``.
        training : bool, default True
            Apply dropout (True) or return ``x`` (False).

        Returns
        -------
        array
            Of ``x``'s shape and dtype.

        Raises
        ------
        ValueError
            Training with ``0 < p`` and no ``key``.
        TypeError
            ``x`` is not a clnp array of a real floating-point dtype.

        Examples
        --------
        >>> import clnp, clnp_grad as cg
        >>> import clnp_nn as nn
        >>> x = clnp.ones(1000, dtype=clnp.float32)
        >>> y = nn.Dropout(0.5)(x, key=cg.random.key(0))
        >>> sorted(set(y.tolist()))              # dropped, or kept and scaled by 1 / (1 - p)
        [0.0, 2.0]
        >>> nn.Dropout(0.5)(x, training=False) is x
        True
        """
        return F.dropout(x, self.p, key=key, training=training)
