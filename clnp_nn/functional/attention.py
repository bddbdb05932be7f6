"""``scaled_dot_product_attention``: ``softmax(q @ k^T * scale + mask) @ v`` (PyTorch's
semantics for boolean and additive masks and ``is_causal``)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import clnp as xp

from . import _checks as chk
from .activation import _softmax
from .dropout import dropout

__all__ = ["scaled_dot_product_attention"]


def scaled_dot_product_attention(q: Any, k: Any, v: Any, attn_mask: Any = None,
                                 is_causal: bool = False, scale: float | None = None, *,
                                 dropout_p: float = 0.0, key: Any = None) -> Any:
    """Attention of queries ``q`` over keys ``k`` and values ``v``.

    Parameters
    ----------
    q : Array
        ``(..., L, E)``.
    k : Array
        ``(..., S, E)``; its batch dims broadcast with ``q``'s.
    v : Array
        ``(..., S, Ev)``.
    attn_mask : Array, optional
        Broadcastable to ``(..., L, S)``: boolean (True = may attend) or a float mask added
        to the scores.
    is_causal : bool
        Query ``i`` attends to keys ``j <= i`` (the mask is aligned to the top left, as in
        PyTorch). Exclusive with ``attn_mask``.
    scale : float, optional
        Defaults to ``1 / sqrt(E)``.
    dropout_p : float
        Dropout probability on the attention weights; needs ``key`` when positive.
    key : Array, optional
        A ``clnp_grad.random`` key for the dropout.

    Returns
    -------
    Array
        ``(..., L, Ev)``. A query whose every key is masked out gives NaN (as PyTorch's
        reference implementation does).

    Raises
    ------
    TypeError
        If an argument is not a clnp array of the right kind or dtypes differ.
    ValueError
        If the shapes do not fit, or both ``attn_mask`` and ``is_causal`` are given.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> q = clnp.ones((1, 2, 4))
    >>> F.scaled_dot_product_attention(q, q, q, is_causal=True).tolist()
    [[[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]]]
    """
    fn = "scaled_dot_product_attention"
    chk.array(fn, "q", q, ndim=range(2, 33))
    chk.array(fn, "k", k, ndim=range(2, 33))
    chk.array(fn, "v", v, ndim=range(2, 33))
    chk.same_dtype(fn, {"q": q, "k": k, "v": v})
    chk.same_device(fn, {"q": q, "k": k, "v": v, "attn_mask": attn_mask})
    L, E = q.shape[-2], q.shape[-1]
    S = k.shape[-2]
    if k.shape[-1] != E:
        raise ValueError(f"{fn}: q's feature size {E} (shape {tuple(q.shape)}) differs from "
                         f"k's {k.shape[-1]} (shape {tuple(k.shape)})")
    if v.shape[-2] != S:
        raise ValueError(f"{fn}: k has {S} keys (shape {tuple(k.shape)}) but v has "
                         f"{v.shape[-2]} values (shape {tuple(v.shape)})")
    try:
        np.broadcast_shapes(tuple(q.shape[:-2]), tuple(k.shape[:-2]), tuple(v.shape[:-2]))
    except ValueError:
        raise ValueError(f"{fn}: the batch dims of q {tuple(q.shape)}, k {tuple(k.shape)} and "
                         f"v {tuple(v.shape)} do not broadcast") from None
    if is_causal and attn_mask is not None:
        raise ValueError(f"{fn}: pass either attn_mask or is_causal=True, not both")
    if attn_mask is not None:
        chk.array(fn, "attn_mask", attn_mask, kinds="fb")
        try:
            np.broadcast_shapes(tuple(attn_mask.shape), tuple(q.shape[:-2]) + (L, S))
        except ValueError:
            raise ValueError(f"{fn}: attn_mask of shape {tuple(attn_mask.shape)} does not "
                             f"broadcast to the scores' shape {tuple(q.shape[:-2]) + (L, S)}") \
                from None
    scale = 1.0 / math.sqrt(E) if scale is None else float(scale)
    scores = xp.matmul(q, xp.matrix_transpose(k)) * scale
    if is_causal:
        causal = xp.asarray(np.tril(np.ones((L, S), dtype=bool)), device=q.device)
        scores = xp.where(causal, scores, -math.inf)
    elif attn_mask is not None:
        if attn_mask.dtype == xp.bool:
            scores = xp.where(attn_mask, scores, -math.inf)
        else:
            scores = scores + attn_mask.astype(scores.dtype)
    attn = _softmax(scores, scores.ndim - 1)
    if dropout_p:
        attn = dropout(attn, dropout_p, key=key)
    return xp.matmul(attn, v)
