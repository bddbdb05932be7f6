"""``masked``: apply a transformation to some leaves only (optax's ``masked``)."""
from __future__ import annotations

from typing import Any, NamedTuple

import clnp_grad as cg

from clnp_grad._tree import structure_difference

from ._base import GradientTransformation, caller, names_its_errors

__all__ = ["MaskedState", "MaskedNode", "masked"]


class MaskedState(NamedTuple):
    """State of :func:`masked`: the inner transformation's state."""
    inner_state: Any


class MaskedNode(NamedTuple):
    """Stands in for a leaf that :func:`masked` hides from its inner transformation (an
    empty pytree node, so the inner transformation never sees or stores it)."""


def _as_mask(fname: str, mask: Any, tree: Any) -> list[bool]:
    """The mask's boolean leaves, one per leaf of ``tree`` (checked)."""
    fname = caller(fname)
    mask_tree = mask(tree) if callable(mask) else mask
    m_leaves, m_def = cg.tree_flatten(mask_tree)
    t_def = cg.tree_structure(tree)
    what = "parameters" if fname.endswith(".init") else "updates"
    if m_def != t_def:
        raise ValueError(f"{fname}: the mask must be a pytree of bools with the same structure "
                         f"as the {what} (or a callable returning one); "
                         f"{structure_difference(m_def, t_def, 'mask', what)}")
    out = []
    for m in m_leaves:
        if not isinstance(m, (bool, int)) and not (hasattr(m, "dtype") and
                                                   getattr(m, "ndim", 1) == 0):
            raise TypeError(f"{fname}: mask leaves must be Python bools; got "
                            f"{type(m).__name__}")
        out.append(bool(m))
    return out


def _mask_tree(tree: Any, flags: list[bool]) -> Any:
    leaves, treedef = cg.tree_flatten(tree)
    return cg.tree_unflatten(treedef, [x if f else MaskedNode() for x, f in zip(leaves, flags)])


@names_its_errors
def masked(inner: GradientTransformation, mask: Any) -> GradientTransformation:
    """Apply ``inner`` only to the leaves where ``mask`` is True; the others pass through
    unchanged and ``inner`` keeps no state for them.

    Parameters
    ----------
    inner : GradientTransformation
        The transformation to restrict.
    mask : pytree of bool or callable
        Same structure as the parameters, or a function of the parameters (of the updates,
        in ``update``) returning such a tree.

    Returns
    -------
    GradientTransformation
        With state :class:`MaskedState`.

    Raises
    ------
    ValueError
        If the mask's structure differs from the parameters'.

    Examples
    --------
    >>> import numpy, clnp, clnp_grad as cg
    >>> from clnp_nn import optim
    >>> params = {"w": clnp.ones((1, 2)), "b": clnp.ones(2)}
    >>> grads = {"w": clnp.zeros((1, 2)), "b": clnp.zeros(2)}
    >>> decay_matrices = lambda p: cg.tree_map(lambda x: x.ndim > 1, p)
    >>> opt = optim.masked(optim.add_decayed_weights(0.5), decay_matrices)
    >>> updates, state = opt.update(grads, opt.init(params), params)
    >>> print(numpy.asarray(updates["w"]), numpy.asarray(updates["b"]))
    [[0.5 0.5]] [0. 0.]
    >>> opt = optim.chain(optim.scale_by_adam(),
    ...                   optim.masked(optim.add_decayed_weights(1e-4), decay_matrices),
    ...                   optim.scale(-1e-3))
    """
    inner = GradientTransformation(*inner)

    def init_fn(params: Any) -> MaskedState:
        flags = _as_mask("masked.init", mask, params)
        return MaskedState(inner_state=inner.init(_mask_tree(params, flags)))

    def update_fn(updates: Any, state: MaskedState,
                  params: Any = None) -> tuple[Any, MaskedState]:
        flags = _as_mask("masked.update", mask, updates)
        masked_params = None if params is None else _mask_tree(params, flags)
        new_masked, new_inner = inner.update(_mask_tree(updates, flags), state.inner_state,
                                             masked_params)
        old, treedef = cg.tree_flatten(updates)
        it = iter(cg.tree_leaves(new_masked))
        merged = [next(it) if f else u for u, f in zip(old, flags)]
        return cg.tree_unflatten(treedef, merged), MaskedState(inner_state=new_inner)
    return GradientTransformation(init_fn, update_fn)

