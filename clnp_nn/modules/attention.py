"""``MultiheadAttention`` with PyTorch's parameters (``in_proj_weight``, ``in_proj_bias``,
``out_proj``), layouts (``batch_first``) and mask conventions."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import clnp as xp

from .. import functional as F
from ..functional import _checks as chk
from ..functional.activation import _softmax
from . import init
from ._module import Module, static
from ._util import need_key, positive_int, split
from .linear import Linear

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """Multi-head attention: project, attend per head, concatenate, project.

    Parameters
    ----------
    embed_dim : int
    num_heads : int
        Divides ``embed_dim``.
    dropout : float
        Dropout on the attention weights in training (needs ``key=`` when called).
    bias : bool
        Biases on the input and output projections.
    batch_first : bool
        Inputs ``(N, L, E)`` when True, ``(L, N, E)`` (PyTorch's default) when False.
    key : Array
        A ``clnp_grad.random`` key for the initialisation.
    dtype : dtype, optional

    Attributes
    ----------
    in_proj_weight : Array
        ``(3*embed_dim, embed_dim)``, Xavier uniform.
    in_proj_bias : Array or None
        ``(3*embed_dim,)``, zeros.
    out_proj : Linear
        ``embed_dim -> embed_dim``, PyTorch's Linear initialisation with a zero bias.

    Raises
    ------
    TypeError
        If ``key`` is missing.
    ValueError
        If ``num_heads`` does not divide ``embed_dim`` or ``dropout`` is outside [0, 1].

    Examples
    --------
    >>> import clnp_nn as nn
    >>> mha = nn.MultiheadAttention(8, 2, batch_first=True, key=cg.random.key(0))
    >>> x = clnp.zeros((1, 3, 8), dtype=clnp.float32)
    >>> out, weights = mha(x, x, x)
    >>> out.shape, weights.shape
    ((1, 3, 8), (1, 3, 3))
    """

    in_proj_weight: Any
    in_proj_bias: Any
    out_proj: Any
    embed_dim: int = static()
    num_heads: int = static()
    dropout: float = static()
    batch_first: bool = static()

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 batch_first: bool = False, *, key: Any = None, dtype: Any = None):
        need_key("MultiheadAttention", key)
        E = positive_int("MultiheadAttention", "embed_dim", embed_dim)
        H = positive_int("MultiheadAttention", "num_heads", num_heads)
        if E % H:
            raise ValueError(f"MultiheadAttention: embed_dim {E} must be divisible by "
                             f"num_heads {H}")
        self.embed_dim, self.num_heads = E, H
        self.dropout = chk.probability("MultiheadAttention", "dropout", dropout)
        self.batch_first = bool(batch_first)
        k1, k2 = split(key, 2)
        self.in_proj_weight = init.xavier_uniform(k1, (3 * E, E), dtype=dtype)
        out = Linear(E, E, bias, key=k2, dtype=dtype)
        if bias:
            out = out.replace(bias=xp.zeros_like(out.bias))
            self.in_proj_bias = init.zeros((3 * E,), dtype, self.in_proj_weight.device)
        else:
            self.in_proj_bias = None
        self.out_proj = out

    def __call__(self, query: Any, key_: Any = None, value: Any = None, *,
                 key_padding_mask: Any = None, need_weights: bool = True,
                 attn_mask: Any = None, average_attn_weights: bool = True,
                 is_causal: bool = False, key: Any = None, training: bool = True) -> tuple:
        """``(attn_output, attn_weights)`` as PyTorch's ``forward(query, key, value, ...)``.

        Boolean masks follow PyTorch's ``MultiheadAttention``: True marks a position that may NOT
        be attended.

        Parameters
        ----------
        query : array
            ``(N, L, E)`` with ``batch_first``, ``(L, N, E)`` otherwise, or unbatched ``(L, E)``;
            ``E`` is ``embed_dim``.
        key_ : array, optional
            ``(N, S, E)`` (same layout as ``query``); defaults to ``query`` (self-attention).
        value : array, optional
            Like ``key_``; defaults to ``key_``.
        key_padding_mask : array, optional
            ``(N, S)``: True (or ``-inf`` added) for source positions to ignore.
        need_weights : bool, default True
            Also return the attention weights.
        attn_mask : array, optional
            ``(L, S)`` or ``(N*num_heads, L, S)``, boolean or additive float.
        average_attn_weights : bool, default True
            Average the weights over the heads.
        is_causal : bool, default False
            Add a causal mask when ``attn_mask`` is None.
        key : clnp_grad.random key, optional
            The random key for dropout on the attention weights (training with ``dropout > 0``).
        training : bool, default True
            Apply the dropout.

        Returns
        -------
        attn_output : array
            Of ``query``'s shape.
        attn_weights : array or None
            ``(N, L, S)`` averaged over heads (``(N, num_heads, L, S)`` otherwise), or None
            without ``need_weights``; unbatched inputs give unbatched results.

        Raises
        ------
        ValueError
            The inputs do not end in ``embed_dim``, are not all batched or all unbatched, their
            batch or source sizes differ, or a mask has the wrong shape.
        TypeError
            An input is not a clnp array of a real floating-point dtype.

        Examples
        --------
        >>> import numpy, clnp, clnp_grad as cg
        >>> import clnp_nn as nn
        >>> mha = nn.MultiheadAttention(4, 2, batch_first=True, key=cg.random.key(0))
        >>> x = cg.random.normal(cg.random.key(1), (1, 3, 4), dtype=clnp.float32)
        >>> out, weights = mha(x, is_causal=True)
        >>> out.shape, weights.shape
        ((1, 3, 4), (1, 3, 3))
        >>> w = numpy.asarray(weights)[0]
        >>> bool(numpy.allclose(w.sum(axis=-1), 1.0, atol=1e-5)), float(w[0, 1]), float(w[0, 2])
        (True, 0.0, 0.0)
        """
        fn = "MultiheadAttention"
        key_ = query if key_ is None else key_
        value = key_ if value is None else value
        for name, v in (("query", query), ("key", key_), ("value", value)):
            chk.array(fn, name, v, ndim=(2, 3))
            if v.shape[-1] != self.embed_dim:
                raise ValueError(f"{fn}: {name} of shape {tuple(v.shape)} must end in "
                                 f"embed_dim={self.embed_dim}")
        if not query.ndim == key_.ndim == value.ndim:
            raise ValueError(f"{fn}: query, key and value must all be batched or all unbatched, "
                             f"got shapes {tuple(query.shape)}, {tuple(key_.shape)}, "
                             f"{tuple(value.shape)}")
        unbatched = query.ndim == 2
        if unbatched:
            q, k, v = (xp.expand_dims(a, axis=0) for a in (query, key_, value))
        elif self.batch_first:
            q, k, v = query, key_, value
        else:
            q, k, v = (xp.permute_dims(a, (1, 0, 2)) for a in (query, key_, value))
        self_attention = key_ is query and value is query
        if self_attention:
            k = v = q                # one array for the one product below
        N, L, E = q.shape
        S = k.shape[1]
        if k.shape[0] != N or v.shape[:2] != (N, S):
            raise ValueError(f"{fn}: batch and source sizes differ: query {tuple(query.shape)}, "
                             f"key {tuple(key_.shape)}, value {tuple(value.shape)}")
        H, D = self.num_heads, E // self.num_heads
        w, b = self.in_proj_weight, self.in_proj_bias
        if self_attention:
            # one product with the whole (3E, E) weight, then views of its thirds; its
            # gradient is one product per operand instead of three, and needs no join of the
            # weight's and bias's thirds (the character transformer's step: 165 -> 139
            # launches on PoCL)
            qkv = F.linear(q, w, b)
            qp, kp, vp = qkv[..., :E], qkv[..., E:2 * E], qkv[..., 2 * E:]
        else:
            bq, bk, bv = (None, None, None) if b is None else (b[:E], b[E:2 * E], b[2 * E:])
            qp = F.linear(q, w[:E], bq)
            kp = F.linear(k, w[E:2 * E], bk)
            vp = F.linear(v, w[2 * E:], bv)

        def heads(t: Any, n: int) -> Any:
            return xp.permute_dims(xp.reshape(t, (N, n, H, D)), (0, 2, 1, 3))   # (N, H, n, D)
        qh, kh, vh = heads(qp, L), heads(kp, S), heads(vp, S)
        scores = xp.matmul(qh, xp.matrix_transpose(kh)) * (1.0 / math.sqrt(D))   # (N,H,L,S)
        scores = self._mask(fn, scores, attn_mask, key_padding_mask, is_causal, N, L, S)
        attn = _softmax(scores, 3)
        if training and self.dropout > 0:
            attn = F.dropout(attn, self.dropout, key=key, training=True)
        out = xp.matmul(attn, vh)                                               # (N,H,L,D)
        out = xp.reshape(xp.permute_dims(out, (0, 2, 1, 3)), (N, L, E))
        out = self.out_proj(out)
        if unbatched:
            out = out[0]
        elif not self.batch_first:
            out = xp.permute_dims(out, (1, 0, 2))
        weights = None
        if need_weights:
            weights = xp.mean(attn, axis=1) if average_attn_weights else attn
            if unbatched:
                weights = weights[0]
        return out, weights

    def _mask(self, fn: str, scores: Any, attn_mask: Any, key_padding_mask: Any,
              is_causal: bool, N: int, L: int, S: int) -> Any:
        H = self.num_heads
        if attn_mask is None and is_causal:
            attn_mask = xp.asarray(~np.tril(np.ones((L, S), dtype=bool)), device=scores.device)
        if attn_mask is not None:
            chk.array(fn, "attn_mask", attn_mask, ndim=(2, 3), kinds="fb")
            if attn_mask.ndim == 2:
                if tuple(attn_mask.shape) != (L, S):
                    raise ValueError(f"{fn}: attn_mask of shape {tuple(attn_mask.shape)} must "
                                     f"be ({L}, {S})")
            else:
                if tuple(attn_mask.shape) != (N * H, L, S):
                    raise ValueError(f"{fn}: a 3-D attn_mask must be ({N * H}, {L}, {S}), got "
                                     f"{tuple(attn_mask.shape)}")
                attn_mask = xp.reshape(attn_mask, (N, H, L, S))
            scores = _apply(scores, attn_mask)
        if key_padding_mask is not None:
            chk.array(fn, "key_padding_mask", key_padding_mask, ndim=2, kinds="fb")
            if tuple(key_padding_mask.shape) != (N, S):
                raise ValueError(f"{fn}: key_padding_mask must be ({N}, {S}), got "
                                 f"{tuple(key_padding_mask.shape)}")
            scores = _apply(scores, xp.reshape(key_padding_mask, (N, 1, 1, S)))
        return scores


def _apply(scores: Any, mask: Any) -> Any:
    """PyTorch's MHA convention: a True entry is masked out; a float mask is added."""
    if mask.dtype == xp.bool:
        return xp.where(mask, -math.inf, scores)
    return scores + mask.astype(scores.dtype)
