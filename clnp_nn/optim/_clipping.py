"""Clipping transformations: elementwise (``clip``) and by global norm
(``clip_by_global_norm``), with optax's formulas."""
from __future__ import annotations

from typing import Any

import clnp as xp
import clnp_grad as cg

from ._base import (GradientTransformation, check_scalar_or_schedule, global_norm,
                    caller, init_empty_state, names_its_errors)

__all__ = ["clip", "clip_by_global_norm"]


@names_its_errors
def clip(max_delta: float) -> GradientTransformation:
    """Clip every update elementwise to ``[-max_delta, max_delta]``.

    Parameters
    ----------
    max_delta : float
        The bound (>= 0).

    Returns
    -------
    GradientTransformation

    Raises
    ------
    ValueError
        If ``max_delta`` is negative.

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn import optim
    >>> opt = optim.clip(0.25)
    >>> grads = {"w": clnp.asarray([0.125, -0.5, 2.0])}
    >>> updates, state = opt.update(grads, opt.init(grads))
    >>> print(numpy.asarray(updates["w"]))
    [ 0.125 -0.25   0.25 ]
    >>> opt = optim.chain(optim.clip(1.0), optim.sgd(0.1))    # clip, then step
    """
    check_scalar_or_schedule("clip", "max_delta", max_delta)
    if not callable(max_delta) and max_delta < 0:
        raise ValueError(f"{caller('clip')}: max_delta must be >= 0; got {max_delta}")

    def update_fn(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        del params
        return cg.tree_map(lambda g: xp.clip(g, -max_delta, max_delta), updates), state
    return GradientTransformation(init_empty_state, update_fn)


@names_its_errors
def clip_by_global_norm(max_norm: float) -> GradientTransformation:
    """Rescale all updates together so that their global l2 norm is at most ``max_norm``.

    Parameters
    ----------
    max_norm : float
        The largest global norm let through unchanged.

    Returns
    -------
    GradientTransformation

    Raises
    ------
    ValueError
        If ``max_norm`` is not positive.

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn import optim
    >>> opt = optim.clip_by_global_norm(1.0)
    >>> grads = {"a": clnp.asarray([3.0]), "b": clnp.asarray([4.0])}   # global norm 5
    >>> updates, state = opt.update(grads, opt.init(grads))
    >>> print(numpy.round(numpy.asarray(updates["a"]), 4),
    ...       numpy.round(numpy.asarray(updates["b"]), 4))
    [0.6] [0.8]
    >>> opt = optim.chain(optim.clip_by_global_norm(1.0), optim.adam(1e-3))
    """
    check_scalar_or_schedule("clip_by_global_norm", "max_norm", max_norm)
    if not callable(max_norm) and max_norm <= 0:
        raise ValueError(f"{caller('clip_by_global_norm')}: max_norm must be > 0; got {max_norm}")

    def update_fn(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        del params
        g_norm = global_norm(updates)
        trigger = g_norm < max_norm

        def one(t: Any) -> Any:
            return xp.where(trigger, t, (t / xp.astype(g_norm, t.dtype)) * max_norm)
        return cg.tree_map(one, updates), state
    return GradientTransformation(init_empty_state, update_fn)
