"""``Embedding``: a lookup table of ``num_embeddings`` vectors."""
from __future__ import annotations

from typing import Any

import clnp as xp

from .. import functional as F
from . import init
from ._module import Module, static
from ._util import need_key, positive_int

__all__ = ["Embedding"]


class Embedding(Module):
    """``weight[ids]``.

    Parameters
    ----------
    num_embeddings, embedding_dim : int
    padding_idx : int, optional
        This row starts at zero and receives no gradient.
    key : Array
        A ``clnp_grad.random`` key for the initialisation.
    dtype : dtype, optional

    Attributes
    ----------
    weight : Array
        ``(num_embeddings, embedding_dim)``, standard normal (PyTorch's default).

    Raises
    ------
    TypeError
        If ``key`` is missing.
    ValueError
        If a size is not positive or ``padding_idx`` is out of range.

    Examples
    --------
    >>> import clnp_nn as nn
    >>> emb = nn.Embedding(10, 3, padding_idx=0, key=cg.random.key(0))
    >>> emb(clnp.asarray([[0, 5]])).shape
    (1, 2, 3)
    >>> emb.weight[0].tolist()
    [0.0, 0.0, 0.0]
    """

    weight: Any
    num_embeddings: int = static()
    embedding_dim: int = static()
    padding_idx: Any = static()

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 *, key: Any = None, dtype: Any = None):
        need_key("Embedding", key)
        V = positive_int("Embedding", "num_embeddings", num_embeddings)
        D = positive_int("Embedding", "embedding_dim", embedding_dim)
        if padding_idx is not None:
            if isinstance(padding_idx, bool) or not isinstance(padding_idx, int) or \
                    not -V <= padding_idx < V:
                raise ValueError(f"Embedding: padding_idx {padding_idx!r} is out of range for "
                                 f"{V} embeddings")
            padding_idx %= V
        self.num_embeddings, self.embedding_dim, self.padding_idx = V, D, padding_idx
        w = init.normal(key, (V, D), dtype=dtype)
        if padding_idx is not None:
            rows = xp.reshape(xp.arange(V, device=w.device), (V, 1))
            w = xp.where(rows == padding_idx, xp.zeros_like(w), w)
        self.weight = w

    def __call__(self, ids: Any, *, key: Any = None, training: bool = True) -> Any:
        """The rows of ``weight`` at ``ids`` (:func:`clnp_nn.functional.embedding`).

        Parameters
        ----------
        ids : array
            Integer indices of any shape, each in ``[0, num_embeddings)``.
        key : clnp_grad.random key, optional
            Not used: the layer draws no random numbers (every layer takes ``key`` so that
            containers can pass keys to all of them).
        training : bool, default True
            Not used: the layer computes the same in training and in evaluation.

        Returns
        -------
        array
            Shape ``ids.shape + (embedding_dim,)``, of ``weight``'s dtype.

        Raises
        ------
        TypeError
            ``ids`` is not an integer array.
        IndexError
            An id is out of range.

        Examples
        --------
        >>> import clnp, clnp_grad as cg
        >>> import clnp_nn as nn
        >>> emb = nn.Embedding(3, 2, key=cg.random.key(0))
        >>> emb = emb.replace(weight=clnp.asarray([[0.0, 0.0], [1.0, 2.0], [3.0, 4.0]],
        ...                                       dtype=clnp.float32))
        >>> print(emb(clnp.asarray([2, 1])))
        [[3. 4.]
         [1. 2.]]
        """
        return F.embedding(ids, self.weight, self.padding_idx)
