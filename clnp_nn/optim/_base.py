"""The optimizer interface: ``GradientTransformation(init, update)`` pairs, as optax's.

A transformation is two pure functions. ``init(params)`` builds its state, a pytree of clnp
arrays (counts are 0-d int32 arrays on the parameters' device), and
``update(updates, state, params=None)`` returns the transformed updates and the new state.
Because nothing is hidden in Python objects, a whole training step
(``value_and_grad`` + ``update`` + :func:`apply_updates`) stages under ``clnp_grad.jit``.
"""
from __future__ import annotations

import functools
import numbers
from contextvars import ContextVar
from typing import Any, Callable, NamedTuple, Optional

import clnp as xp
import clnp_grad as cg
from clnp_grad._tree import leaf_paths, structure_difference

__all__ = ["GradientTransformation", "EmptyState", "identity", "set_to_zero", "chain",
           "apply_updates", "global_norm", "Schedule", "ScalarOrSchedule", "NO_PARAMS_MSG"]

Schedule = Callable[[Any], Any]
ScalarOrSchedule = Any  # a Python float or a Schedule

NO_PARAMS_MSG = ("you are using a transformation that requires the current value of the "
                 "parameters, but params=None was passed to update(updates, state, params)")


class GradientTransformation(NamedTuple):
    """An optimizer or gradient transformation: ``init(params) -> state`` and
    ``update(updates, state, params=None) -> (updates, state)``.

    Those this package returns check their arguments before any kernel runs and name the
    call the user made: ``adam(0.1).init("weights")`` raises ``TypeError: adam.init: params
    must be a pytree (dict/list/tuple) of arrays; got 'weights', a str``, and an ``update``
    whose updates and params (or state) differ names both structures, or the leaf whose
    shapes differ.

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


# ------------------------------------------------------------ checks that name the user's call
def check_same_structure(fname: str, updates: Any, other: Any, what: str) -> None:
    """Raise a ValueError when ``updates`` and ``other`` (part of a transformation's state,
    or the params) differ in structure or in a leaf's shape, before any kernel runs (instead
    of tree_map's or an operator's anonymous error). The message names the optimizer the
    user called (:func:`caller`: ``adam.update``, not the ``scale_by_adam`` inside it)."""
    u_leaves, u = cg.tree_flatten(updates)
    o_leaves, o = cg.tree_flatten(other)
    fname = caller(fname)
    if u != o:
        raise ValueError(f"{fname}: the updates must have the structure of {what}; "
                         f"{structure_difference(u, o, 'updates', what)}; the optimizer must "
                         f"be initialised with parameters shaped like the gradients")
    check_same_shapes(fname, u_leaves, o_leaves, u, "updates", what)


def check_same_shapes(fname: str, a: list, b: list, treedef: Any, a_name: str,
                      b_name: str) -> None:
    """ValueError naming the first leaf whose shapes differ between the leaf lists ``a`` and
    ``b`` of the same structure ``treedef``."""
    for i, (x, y) in enumerate(zip(a, b)):
        sx, sy = getattr(x, "shape", ()), getattr(y, "shape", ())
        if tuple(sx) != tuple(sy):
            path = leaf_paths(treedef, "")[i]
            raise ValueError(f"{fname}: {a_name}{path} has shape {tuple(sx)} but "
                             f"{b_name}{path} has shape {tuple(sy)}; they must match")


def _is_leaf(x: Any) -> bool:
    """An array (clnp, a tracer, NumPy) or a number: what an optimizer can hold."""
    return (hasattr(x, "shape") and hasattr(x, "dtype")) or isinstance(x, numbers.Number)


def check_tree(fname: str, arg: str, tree: Any) -> tuple[list, Any]:
    """The leaves and structure of ``tree``; TypeError naming ``fname``, ``arg`` and the
    path of the first leaf that is neither an array nor a number (``None`` is an empty
    node, not a leaf)."""
    leaves, treedef = cg.tree_flatten(tree)
    for i, leaf in enumerate(leaves):
        if not _is_leaf(leaf):
            path = leaf_paths(treedef, arg)[i]
            shown = repr(leaf)
            shown = shown if len(shown) <= 40 else shown[:37] + "..."
            where = f"got {shown}, a" if path == arg else f"the leaf at {path} is"
            raise TypeError(f"{fname}: {arg} must be a pytree (dict/list/tuple) of arrays; "
                            f"{where} {type(leaf).__name__}"
                            + (f" ({shown})" if path != arg else ""))
    return leaves, treedef


# the optimizer call the user made (``adam.update``) while it runs, for the messages of the
# transformations inside it
_CALL: ContextVar[Optional[str]] = ContextVar("clnp_nn_optim_call", default=None)


def caller(fname: str) -> str:
    """The name an error raised in ``fname`` gives: the public optimizer call it runs inside
    (``adam.update`` for the ``scale_by_adam.update`` in it), else ``fname`` itself."""
    outer = _CALL.get()
    return fname if outer is None else outer


def named(name: str, t: GradientTransformation) -> GradientTransformation:
    """``t`` whose ``init`` and ``update`` check their arguments first and name ``name`` in
    their errors (``adam.init: params must be a pytree ...``), as do the transformations
    inside it (the outermost call names the errors; inner ones skip the checks)."""
    inner_init, inner_update = t

    def init_fn(params: Any) -> Any:
        if _CALL.get() is not None:
            return inner_init(params)
        check_tree(f"{name}.init", "params", params)
        token = _CALL.set(f"{name}.init")
        try:
            return inner_init(params)
        finally:
            _CALL.reset(token)

    def update_fn(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        if _CALL.get() is not None:
            return inner_update(updates, state, params)
        fname = f"{name}.update"
        u_leaves, u_def = check_tree(fname, "updates", updates)
        if params is not None:
            p_leaves, p_def = check_tree(fname, "params", params)
            if p_def != u_def:
                raise ValueError(f"{fname}: updates and params must have the same structure; "
                                 f"{structure_difference(u_def, p_def, 'updates', 'params')}")
            check_same_shapes(fname, u_leaves, p_leaves, u_def, "updates", "params")
        token = _CALL.set(fname)
        try:
            return inner_update(updates, state, params)
        finally:
            _CALL.reset(token)
    return GradientTransformation(init_fn, update_fn)


def names_inner_errors(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator for a public constructor (an optimizer, a schedule): while it runs, the
    constructors it calls name it in their errors (:func:`caller`), so ``adam(0.1, b1="x")``
    raises ``adam: b1 must be ...``, not ``scale_by_adam: ...``."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _CALL.get() is not None:
            return fn(*args, **kwargs)
        token = _CALL.set(fn.__name__)
        try:
            return fn(*args, **kwargs)
        finally:
            _CALL.reset(token)
    return wrapper


def names_its_errors(fn: Callable[..., GradientTransformation]) -> Callable[..., Any]:
    """Decorator for a public function returning a GradientTransformation: its errors, and
    those of the transformation it returns, name it (:func:`names_inner_errors`,
    :func:`named`): ``adam(0.1).init("weights")`` raises ``TypeError: adam.init: params must
    be a pytree ...``, not an error of the ``zeros_like`` deep inside."""
    inner = names_inner_errors(fn)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> GradientTransformation:
        return named(fn.__name__, inner(*args, **kwargs))
    return wrapper


# ------------------------------------------------------------------------ transformations
@names_its_errors
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


@names_its_errors
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


@names_its_errors
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
            fname = caller("chain.update")
            got = (f"a tuple of {len(state)}" if isinstance(state, tuple) else
                   f"a {type(state).__name__}")
            raise ValueError(f"{fname}: state must be the tuple of {len(transforms)} states "
                             f"that {fname[:-len('update')]}init returned; got {got} (was "
                             f"init called with this optimizer?)")
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
    TypeError
        A leaf of either tree is not an array or a number (the message gives its path).
    ValueError
        If the two trees have different structures, or a leaf's shapes differ (the message
        names where).

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
    p_leaves, p_def = check_tree("apply_updates", "params", params)
    u_leaves, u_def = check_tree("apply_updates", "updates", updates)
    if p_def != u_def:
        raise ValueError(f"apply_updates: params and updates must have the same structure; "
                         f"{structure_difference(p_def, u_def, 'params', 'updates')}")
    check_same_shapes("apply_updates", p_leaves, u_leaves, p_def, "params", "updates")
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

    Raises
    ------
    TypeError
        A leaf is not an array or a number (the message gives its path).
    """
    check_tree("global_norm", "updates", updates)
    return xp.sqrt(tree_sq_norm(updates))


def check_scalar_or_schedule(fname: str, name: str, value: Any) -> None:
    if callable(value):
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not (
            hasattr(value, "dtype") and getattr(value, "ndim", 1) == 0):
        raise TypeError(f"{caller(fname)}: {name} must be a float or a schedule (a callable "
                        f"of the step count); got {type(value).__name__}")


def check_number(fname: str, name: str, value: Any) -> None:
    """TypeError naming the user's call unless ``value`` is a real number (or a 0-d array):
    hyperparameters that take no schedule."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not (
            hasattr(value, "dtype") and getattr(value, "ndim", 1) == 0):
        raise TypeError(f"{caller(fname)}: {name} must be a number; got "
                        f"{type(value).__name__}")


def check_state(fname: str, state: Any, *classes: type) -> None:
    """TypeError naming the user's call when ``state`` is not what this transformation's
    ``init`` returns (the state of another optimizer, or of another step's structure)."""
    if not isinstance(state, classes):
        want = " or ".join(c.__name__ for c in classes)
        name = caller(fname)
        raise TypeError(f"{name}: the state holds a {type(state).__name__} where "
                        f"{name.rsplit('.', 1)[0]}.init puts a {want} (the state of another "
                        f"optimizer?)")
