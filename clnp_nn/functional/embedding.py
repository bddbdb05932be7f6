"""``embedding``: rows of a table picked by integer ids (a gather; its gradient is a
scatter-add into the table)."""
from __future__ import annotations

from typing import Any

import clnp as xp

from . import _checks as chk

__all__ = ["embedding"]


def embedding(ids: Any, weight: Any, padding_idx: int | None = None) -> Any:
    """``weight[ids]``.

    Parameters
    ----------
    ids : Array
        Integer ids of any shape, each in ``[-num_embeddings, num_embeddings)``; negative
        ids count from the end, as in NumPy indexing (PyTorch refuses them).
    weight : Array
        The table ``(num_embeddings, embedding_dim)``.
    padding_idx : int, optional
        Rows looked up with this id receive no gradient (PyTorch's ``padding_idx``).

    Returns
    -------
    Array
        ``ids.shape + (embedding_dim,)``.

    Raises
    ------
    TypeError
        If ``ids`` is not an integer clnp array or ``weight`` not a real floating one.
    ValueError
        If ``weight`` is not 2-D or ``padding_idx`` is out of range.
    IndexError
        If an id is out of range (checked on the device before the gather is used).

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> w = clnp.reshape(clnp.arange(6.0), (3, 2))
    >>> F.embedding(clnp.asarray([[2, 0]]), w).tolist()
    [[[4.0, 5.0], [0.0, 1.0]]]
    """
    fn = "embedding"
    chk.array(fn, "ids", ids, kinds="iu")
    chk.array(fn, "weight", weight, ndim=2)
    chk.same_device(fn, {"ids": ids, "weight": weight})
    V = weight.shape[0]
    if padding_idx is not None:
        if isinstance(padding_idx, bool) or not isinstance(padding_idx, int) or \
                not -V <= padding_idx < V:
            raise ValueError(f"{fn}: padding_idx {padding_idx!r} is out of range for a table "
                             f"of {V} rows (weight shape {tuple(weight.shape)})")
        padding_idx %= V
    try:
        # ids of any shape and layout index the table directly: flattening a strided ids
        # array (a window of a longer sequence) first was a copy, and a launch in each step
        y = xp.take(weight, ids, axis=0)
    except IndexError as e:
        raise IndexError(f"{fn}: an id is out of range for a table of {V} rows (weight shape "
                         f"{tuple(weight.shape)}): {str(e).removeprefix('take: ')}") from None
    if padding_idx is not None:
        from clnp_grad import stop_gradient
        pad = xp.expand_dims(ids == padding_idx, axis=-1)
        y = xp.where(pad, stop_gradient(y), y)
    return y
