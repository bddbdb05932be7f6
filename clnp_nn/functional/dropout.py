"""``dropout``: zero elements with probability ``p`` and scale the rest by ``1 / (1 - p)``,
drawing the mask from an explicit ``clnp_grad.random`` key."""
from __future__ import annotations

from typing import Any

import clnp as xp

from . import _checks as chk

__all__ = ["dropout"]


def dropout(x: Any, p: float = 0.5, *, key: Any = None, training: bool = True) -> Any:
    """Inverted dropout.

    Parameters
    ----------
    x : Array
        Real floating input.
    p : float
        Probability of zeroing an element, in [0, 1].
    key : Array
        A ``clnp_grad.random`` key; required when ``training`` and ``0 < p``.
    training : bool
        When False (or ``p == 0``) ``x`` comes back unchanged and no key is needed.

    Returns
    -------
    Array
        Same shape and dtype as ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not a real floating clnp array or ``training`` is not a bool.
    ValueError
        If ``p`` is outside [0, 1], or no key is given when one is needed.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> x = clnp.ones(8)
    >>> set(F.dropout(x, 0.5, key=cg.random.key(0)).tolist()) <= {0.0, 2.0}
    True
    >>> F.dropout(x, 0.5, training=False) is x
    True
    """
    fn = "dropout"
    chk.array(fn, "x", x)
    p = chk.probability(fn, "p", p)
    if not isinstance(training, bool):
        raise TypeError(f"{fn}: training must be a Python bool, got {type(training).__name__}")
    if not training or p == 0.0:
        return x
    if key is None:
        raise ValueError(f"{fn}: training with p={p} needs a random key: pass "
                         f"key=clnp_grad.random.key(seed) (split it for every call), or "
                         f"training=False for inference")
    if p == 1.0:
        return xp.zeros_like(x)
    from clnp_grad import random
    keep = random.bernoulli(key, 1.0 - p, tuple(x.shape))
    return xp.where(keep, x * (1.0 / (1.0 - p)), xp.zeros_like(x))
