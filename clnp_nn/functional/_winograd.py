"""Winograd F(2x2, 3x3) for stride-1, undilated, ungrouped 3x3 convolutions (Lavin & Gray).

The input is cut into overlapping 4x4 tiles with the im2col kernel (kernel 4x4, stride 2:
tile ``(th, tw)`` starts at row ``2*th - pad_top``); each tile ``d`` becomes ``B^T d B`` and
each filter ``g`` becomes ``G g G^T`` (4x4), the 16 tile positions are 16 independent GEMMs
(one batched ``matmul``: ``(16, O, C) @ (16, C, N*tiles)``), and ``A^T m A`` turns each 4x4
product back into a 2x2 output tile. That is 4 multiplications per output instead of 9.

Everything after the tile gather is clnp elementwise arithmetic, slicing and ``matmul``, so
differentiation, ``vmap`` and ``jit`` come from their rules (the backward pass is GEMMs and
the col2im kernel). Rounding differs from im2col's slightly (the transforms add and subtract
inputs before multiplying), as in every Winograd implementation.
"""
from __future__ import annotations

import math
from typing import Any

import clnp as xp

from ._kernels import im2col


def eligible(kernel: tuple, stride: tuple, dilation: tuple, groups: int) -> bool:
    """Whether F(2x2, 3x3) applies: 3x3 filters, stride 1, no dilation, one group."""
    return kernel == (3, 3) and stride == (1, 1) and dilation == (1, 1) and groups == 1


def _bt(d: list[Any]) -> list[Any]:
    """``B^T d`` along one axis of a 4-tuple: B^T = [[1,0,-1,0],[0,1,1,0],[0,-1,1,0],
    [0,1,0,-1]]."""
    return [d[0] - d[2], d[1] + d[2], d[2] - d[1], d[1] - d[3]]


def _at(m: list[Any]) -> list[Any]:
    """``A^T m``: A^T = [[1,1,1,0],[0,1,-1,-1]]."""
    return [m[0] + m[1] + m[2], m[1] - m[2] - m[3]]


def _filters(weight: Any) -> Any:
    """``G g G^T`` for every (O, C) filter, as (16, O, C); G = [[1,0,0],[.5,.5,.5],
    [.5,-.5,.5],[0,0,1]]."""
    def g_left(g: list[Any]) -> list[Any]:
        return [g[0], 0.5 * (g[0] + g[1] + g[2]), 0.5 * (g[0] - g[1] + g[2]), g[2]]
    O, C = weight.shape[0], weight.shape[1]
    rows = [weight[:, :, i, :] for i in range(3)]               # each (O, C, 3)
    u = g_left(rows)                                            # 4 x (O, C, 3)
    out = []
    for r in u:
        cols = [r[:, :, j] for j in range(3)]                   # each (O, C)
        out.extend(g_left(cols))                                # 4 x (O, C)
    return xp.stack(out, axis=0)                                # (16, O, C), index 4*i + j


def conv2d_winograd(x: Any, weight: Any, pads: tuple, out_hw: tuple) -> Any:
    """``conv2d`` of ``x`` (N, C, H, W) and 3x3 ``weight`` (O, C, 3, 3), stride 1, with
    ``pads`` ((top, bottom), (left, right)) and output size ``out_hw``; returns (N, O, OH, OW)
    without bias. The caller has checked the arguments."""
    N, C = x.shape[0], x.shape[1]
    O = weight.shape[0]
    OH, OW = out_hw
    TH, TW = math.ceil(OH / 2), math.ceil(OW / 2)
    T = N * TH * TW
    cols = im2col(x, kernel=(4, 4), stride=(2, 2), padding=(pads[0][0], pads[1][0]),
                  dilation=(1, 1), out_hw=(TH, TW))             # (C*16, N*TH*TW)
    d = xp.reshape(cols, (C, 4, 4, T))
    rows = _bt([d[:, i] for i in range(4)])                     # 4 x (C, 4, T)
    v = []
    for r in rows:
        v.extend(_bt([r[:, j] for j in range(4)]))              # 4 x (C, T)
    V = xp.stack(v, axis=0)                                     # (16, C, T)
    M = xp.matmul(_filters(weight), V)                          # (16, O, T)
    m = [[M[4 * i + j] for j in range(4)] for i in range(4)]    # (O, T) each
    left = [_at([m[0][j], m[1][j], m[2][j], m[3][j]]) for j in range(4)]   # [j][a]
    tiles = [[_at([left[0][a], left[1][a], left[2][a], left[3][a]])[b] for b in range(2)]
             for a in range(2)]                                  # [a][b] -> (O, T)
    y = xp.stack([xp.stack(t, axis=0) for t in tiles], axis=0)  # (2, 2, O, T)
    y = xp.reshape(y, (2, 2, O, N, TH, TW))
    y = xp.reshape(xp.permute_dims(y, (3, 2, 4, 0, 5, 1)), (N, O, 2 * TH, 2 * TW))
    if (2 * TH, 2 * TW) != (OH, OW):
        y = y[:, :, :OH, :OW]
    return y
