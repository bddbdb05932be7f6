"""The optimizer interface: ``GradientTransformation(init, update)`` pairs, as optax's.

A transformation is two pure functions. ``init(params)`` builds its state, a pytree of clnp
arrays (counts are 0-d int32 arrays on the parameters' device), and
``update(updates, state, params=None)`` returns the transformed updates and the new state.
Because nothing is hidden in Python objects, a whole training step
(``value_and_grad`` + ``update`` + :func:`apply_updates`) stages under ``clnp_grad.jit``.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple, Optional

import clnp as xp
import clnp_grad as cg

__all__ = ["GradientTransformation", "EmptyState", "identity", "set_to_zero", "chain",
           "apply_updates", "global_norm", "Schedule", "ScalarOrSchedule", "NO_PARAMS_MSG"]

Schedule = Callable[[Any], Any]
ScalarOrSchedule = Any  # a Python float or a Schedule

NO_PARAMS_MSG = ("you are using a transformation that requires the current value of the "
                 "parameters, but params=None was passed to update(updates, state, params)")


class GradientTransformation(NamedTuple):
    """An optimizer or gradient transformation: ``init(params) -> state`` and
    ``update(updates, state, params=None) -> (updates, state)``.

    Examples
    --------
    >>> import clnp as xp, clnp_nn.optim as optim
    >>> opt = optim.sgd(0.1)
    >>> params = {"w": xp.ones(3)}
    >>> state = opt.init(params)
    >>> updates, state = opt.update({"w": xp.ones(3)}, state, params)
    >>> params = optim.apply_updates(params, updates)     # w == 0.9
    """
    init: Callable[[Any], Any]
    update: Callable[..., tuple[Any, Any]]


class EmptyState(NamedTuple):
    """The state of a stateless transformation (an empty pytree node)."""


def init_empty_state(params: Any) -> EmptyState:
    del params
    return EmptyState()


def identity() -> GradientTransformation:
    """The transformation that returns the updates unchanged (stateless).

    Returns
    -------
    GradientTransformation
        ``init`` gives an empty state; ``update`` returns the updates as they are.

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn import optim
    >>> opt = optim.identity()
    >>> grads = {"w": clnp.asarray([1.0, -2.0])}
    >>> updates, state = opt.update(grads, opt.init(grads))
    >>> print(numpy.asarray(updates["w"]))
    [ 1. -2.]
    """
    return GradientTransformation(init_empty_state, lambda updates, state, params=None:
                                  (updates, state))


def set_to_zero() -> GradientTransformation:
    """Replace every update by zeros (freezes the parameters it is applied to, e.g. under
    :func:`masked`).

    Returns
    -------
    GradientTransformation
        ``init`` gives an empty state; ``update`` returns zeros of the updates' shapes and
        dtypes.

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn import optim
    >>> opt = optim.set_to_zero()
    >>> grads = {"w": clnp.asarray([1.0, -2.0])}
    >>> updates, state = opt.update(grads, opt.init(grads))
    >>> print(numpy.asarray(updates["w"]))
    [0. 0.]
    """
    def update_fn(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        del params
        return cg.tree_map(xp.zeros_like, updates), state
    return GradientTransformation(init_empty_state, update_fn)


def chain(*args: GradientTransformation) -> GradientTransformation:
    """Apply transformations one after the other; the state is the tuple of their states.

    Parameters
    ----------
    *args : GradientTransformation
        Applied in order: the updates the first returns are the second's input, and so on.

    Returns
    -------
    GradientTransformation

    Raises
    ------
    TypeError
        If an argument is not a GradientTransformation (an ``(init, update)`` pair).
    ValueError
        From ``update`` if the state does not have one entry per transformation.

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn import optim
    >>> opt = optim.chain(optim.clip_by_global_norm(1.0), optim.scale_by_learning_rate(0.5))
    >>> grads = {"w": clnp.asarray([3.0, 4.0])}          # global norm 5: clipped to 1
    >>> updates, state = opt.update(grads, opt.init(grads))
    >>> print(numpy.round(numpy.asarray(updates["w"]), 4))
    [-0.3 -0.4]
    >>> len(state)                                        # one state per transformation
    2
    """
    for i, t in enumerate(args):
        if not (isinstance(t, tuple) and len(t) == 2 and callable(t[0]) and callable(t[1])):
            raise TypeError(f"chain: argument {i} must be a GradientTransformation "
                            f"(init, update); got {type(t).__name__}")
    transforms = tuple(GradientTransformation(*t) for t in args)

    def init_fn(params: Any) -> tuple:
        return tuple(t.init(params) for t in transforms)

    def update_fn(updates: Any, state: Any, params: Any = None) -> tuple[Any, tuple]:
        if not isinstance(state, tuple) or len(state) != len(transforms):
            got = len(state) if isinstance(state, tuple) else type(state).__name__
            raise ValueError(f"chain.update: the state must be the tuple of {len(transforms)} "
                             f"states that chain.init returned; got {got} (was init called "
                             f"with this optimizer?)")
        new_state = []
        for s, t in zip(state, transforms):
            updates, s = t.update(updates, s, params)
            new_state.append(s)
        return updates, tuple(new_state)

    return GradientTransformation(init_fn, update_fn)


def apply_updates(params: Any, updates: Any) -> Any:
    """``params + updates`` leafwise, each result cast back to its parameter's dtype.

    Parameters
    ----------
    params, updates : pytree
        Of the same structure (``None`` leaves are empty nodes and stay ``None``).

    Returns
    -------
    pytree
        The new parameters.

    Raises
    ------
    ValueError
        If the two trees have different structures.

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn import optim
    >>> params = {"w": clnp.asarray([1.0, 2.0]), "b": clnp.asarray(0.5)}
    >>> updates = {"w": clnp.asarray([0.25, -0.5]), "b": clnp.asarray(-0.5)}
    >>> new_params = optim.apply_updates(params, updates)
    >>> print(numpy.asarray(new_params["w"]), numpy.asarray(new_params["b"]))
    [1.25 1.5 ] 0.0
    """
    p_leaves, p_def = cg.tree_flatten(params)
    u_leaves, u_def = cg.tree_flatten(updates)
    if p_def != u_def:
        raise ValueError(f"apply_updates: params and updates have different structures: "
                         f"{p_def} and {u_def}")
    out = []
    for p, u in zip(p_leaves, u_leaves):
        if hasattr(p, "dtype"):
            out.append(xp.astype(p + u, p.dtype))
        else:
            out.append(p + u)
    return cg.tree_unflatten(p_def, out)


# --------------------------------------------------------------------------- shared helpers
def first_device(tree: Any) -> Optional[Any]:
    """The device of the first array leaf of ``tree`` (None when it has none)."""
    for leaf in cg.tree_leaves(tree):
        d = getattr(leaf, "device", None)
        if d is not None:
            return d
    return None


def zero_count(params: Any) -> Any:
    """A 0-d int32 step counter on the parameters' device (optax's ``count``)."""
    return xp.zeros((), dtype=xp.int32, device=first_device(params))


def safe_increment(count: Any) -> Any:
    """``count + 1`` that stops at the dtype's maximum instead of wrapping around."""
    top = 2 ** 31 - 1
    return xp.where(count < top, count + 1, top)


def abs_sq(x: Any) -> Any:
    """``|x|**2`` elementwise (``x * x`` for real ``x``)."""
    if xp.isdtype(x.dtype, "complex floating"):
        return xp.real(xp.conj(x) * x)
    return x * x


def tree_sq_norm(tree: Any) -> Any:
    """Sum of squares of every leaf (a 0-d array)."""
    total = None
    for leaf in cg.tree_leaves(tree):
        s = xp.sum(abs_sq(leaf))
        total = s if total is None else total + s
    if total is None:
        return xp.asarray(0.0, dtype=xp.float32)
    return total


def global_norm(updates: Any) -> Any:
    """The l2 norm of all leaves of ``updates`` together (a 0-d array).

    Parameters
    ----------
    updates : pytree of arrays
        Gradients or updates; every leaf counts.

    Returns
    -------
    array
        ``sqrt(sum of every leaf's squares)``.

    Examples
    --------
    >>> import clnp
    >>> from clnp_nn import optim
    >>> norm = optim.global_norm({"a": clnp.asarray([3.0]), "b": clnp.asarray([[4.0]])})
    >>> round(float(norm), 4)                  # sqrt(3**2 + 4**2)
    5.0
    """
    return xp.sqrt(tree_sq_norm(updates))


def check_same_structure(fname: str, updates: Any, other: Any, what: str) -> None:
    """Raise a ValueError naming ``fname`` when ``updates`` and ``other`` differ in structure
    (before any kernel runs, instead of tree_map's anonymous error)."""
    u, o = cg.tree_structure(updates), cg.tree_structure(other)
    if u != o:
        raise ValueError(f"{fname}: the updates have structure {u} but {what} has {o}; "
                         f"the optimizer must be initialised with parameters shaped like the "
                         f"gradients")


def check_scalar_or_schedule(fname: str, name: str, value: Any) -> None:
    if callable(value):
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not (
            hasattr(value, "dtype") and getattr(value, "ndim", 1) == 0):
        raise TypeError(f"{fname}: {name} must be a float or a schedule (a callable of the "
                        f"step count); got {type(value).__name__}")
