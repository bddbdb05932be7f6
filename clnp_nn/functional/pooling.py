"""Pooling: ``max_pool2d``, ``avg_pool2d``, ``adaptive_avg_pool2d`` (NCHW, PyTorch's
semantics).

Max pooling is the ``nn_max_pool2d`` primitive (``_kernels``): a window-max kernel, and for
its derivatives a tie-weight kernel and gather kernels (ties share a window's cotangent
evenly), with the semantics of the im2col + ``max`` composition it replaced. Average pooling
gathers its windows with the im2col kernel and sums them, so its backward pass is the sum's
rule followed by the col2im kernel. Adaptive average pooling is two small
matrix products with averaging matrices built from PyTorch's bin edges
(``floor(i*H/OH)`` to ``ceil((i+1)*H/OH)``), which handles uneven bins exactly.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import clnp as xp

from . import _checks as chk
from ._kernels import im2col
from ._kernels import max_pool2d as _max_pool2d_prim

__all__ = ["max_pool2d", "avg_pool2d", "adaptive_avg_pool2d"]


def _window(fn: str, x: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any = 1):
    chk.array(fn, "x", x, ndim=(3, 4))
    k = chk.int_tuple(fn, "kernel_size", kernel_size, 2)
    s = k if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0) else \
        chk.int_tuple(fn, "stride", stride, 2)
    p = chk.int_tuple(fn, "padding", padding, 2, minimum=0)
    d = chk.int_tuple(fn, "dilation", dilation, 2)
    for pi, ki in zip(p, k):
        if pi > ki // 2:
            raise ValueError(f"{fn}: padding {p} must be at most half the kernel size {k}")
    x4 = x if x.ndim == 4 else xp.expand_dims(x, axis=0)
    N, C, H, W = x4.shape
    out = []
    for n_in, ki, si, pi, di, what in ((H, k[0], s[0], p[0], d[0], "height"),
                                       (W, k[1], s[1], p[1], d[1], "width")):
        o = (n_in + 2 * pi - di * (ki - 1) - 1) // si + 1
        if o <= 0:
            raise ValueError(f"{fn}: the input's {what} {n_in} (input shape {tuple(x.shape)}) "
                             f"with padding {pi} is smaller than the kernel size {ki}")
        out.append(o)
    return x4, k, s, p, d, tuple(out)


def _windows(x4: Any, k: tuple, s: tuple, p: tuple, d: tuple, out_hw: tuple,
             fill: float) -> Any:
    """The pooling windows of ``x4`` as (C, KH*KW, N, OH, OW): im2col's layout, reshaped."""
    N, C = x4.shape[0], x4.shape[1]
    cols = im2col(x4, kernel=k, stride=s, padding=p, dilation=d, out_hw=out_hw, fill=fill)
    return xp.reshape(cols, (C, k[0] * k[1], N, out_hw[0], out_hw[1]))


def max_pool2d(x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1) -> Any:
    """The maximum over each ``kernel_size`` window (padding never wins: it is ``-inf``).

    A window holding NaN gives NaN. The gradient splits each window's cotangent evenly
    among the elements equal to its maximum (JAX's rule; PyTorch gives it all to one of
    them), and overlapping windows add their shares.

    Parameters
    ----------
    x : Array
        Input ``(N, C, H, W)`` or ``(C, H, W)``, real floating.
    kernel_size : int or tuple of 2 ints
        The window's ``(KH, KW)`` (an int for both).
    stride : int or tuple of 2 ints, optional
        Defaults to ``kernel_size``.
    padding : int or tuple of 2 ints
        At most half the kernel size.
    dilation : int or tuple of 2 ints
        Spacing between the window's elements.

    Returns
    -------
    Array
        ``(N, C, OH, OW)`` with ``OH = (H + 2*padding - dilation*(KH-1) - 1) // stride + 1``.

    Raises
    ------
    TypeError
        If ``x`` is not a real floating clnp array or a size is not an int/tuple of ints.
    ValueError
        If the rank is wrong, padding exceeds half the kernel, or the window does not fit.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> x = clnp.reshape(clnp.arange(16.0), (1, 1, 4, 4))
    >>> F.max_pool2d(x, 2)[0, 0].tolist()
    [[5.0, 7.0], [13.0, 15.0]]
    """
    fn = "max_pool2d"
    x4, k, s, p, d, out_hw = _window(fn, x, kernel_size, stride, padding, dilation)
    y = _max_pool2d_prim(x4, kernel=k, stride=s, padding=p, dilation=d, out_hw=out_hw)
    return y if x.ndim == 4 else y[0]


def avg_pool2d(x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Any:
    """The mean over each ``kernel_size`` window.

    Parameters
    ----------
    x : Array
        Input ``(N, C, H, W)`` or ``(C, H, W)``, real floating.
    kernel_size : int or tuple of 2 ints
        The window's ``(KH, KW)`` (an int for both).
    stride : int or tuple of 2 ints, optional
        Defaults to ``kernel_size``.
    padding : int or tuple of 2 ints
        Zero padding, at most half the kernel size.
    count_include_pad : bool
        Whether padded zeros count in the divisor (PyTorch's default, True).
    divisor_override : int, optional
        A fixed divisor instead of the window size.

    Returns
    -------
    Array
        ``(N, C, OH, OW)``.

    Raises
    ------
    TypeError
        If ``x`` is not a real floating clnp array or a size is not an int/tuple of ints.
    ValueError
        If the rank is wrong, padding exceeds half the kernel, the window does not fit, or
        ``divisor_override`` is not positive.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> x = clnp.reshape(clnp.arange(16.0), (1, 1, 4, 4))
    >>> F.avg_pool2d(x, 2)[0, 0].tolist()
    [[2.5, 4.5], [10.5, 12.5]]
    """
    fn = "avg_pool2d"
    x4, k, s, p, d, out_hw = _window(fn, x, kernel_size, stride, padding)
    if divisor_override is not None and (isinstance(divisor_override, bool) or not isinstance(
            divisor_override, int) or divisor_override <= 0):
        raise ValueError(f"{fn}: divisor_override must be a positive int, got "
                         f"{divisor_override!r}")
    w = _windows(x4, k, s, p, d, out_hw, 0.0)
    total = xp.sum(w, axis=1)                                    # (C, N, OH, OW)
    if divisor_override is not None:
        y = total / float(divisor_override)
    elif count_include_pad or p == (0, 0):
        y = total / float(k[0] * k[1])
    else:
        counts = _valid_counts(x4.shape[2:], k, s, p, out_hw)
        y = total / _const(counts, x)
    y = xp.permute_dims(y, (1, 0, 2, 3))
    return y if x.ndim == 4 else y[0]


def _valid_counts(hw: tuple, k: tuple, s: tuple, p: tuple, out_hw: tuple) -> np.ndarray:
    """How many window taps fall inside the unpadded input, per output position (OH, OW)."""
    per = []
    for n, ki, si, pi, o in zip(hw, k, s, p, out_hw):
        start = np.arange(o) * si - pi
        per.append(np.minimum(start + ki, n) - np.maximum(start, 0))
    return np.outer(per[0], per[1]).astype(np.float64)


def _const(a: np.ndarray, like: Any) -> Any:
    """A host constant on ``like``'s device in ``like``'s dtype (rounded on the host, so no
    float64 reaches a device without it)."""
    return xp.asarray(np.ascontiguousarray(a, dtype=np.dtype(like.dtype.name)),
                      device=like.device)


def _adaptive_matrix(n_in: int, n_out: int) -> np.ndarray:
    """(n_out, n_in): row i averages input positions floor(i*n/o) .. ceil((i+1)*n/o) - 1."""
    a = np.zeros((n_out, n_in), np.float64)
    for i in range(n_out):
        lo = (i * n_in) // n_out
        hi = -((-(i + 1) * n_in) // n_out)
        a[i, lo:hi] = 1.0 / (hi - lo)
    return a


def adaptive_avg_pool2d(x: Any, output_size: Any) -> Any:
    """Average pooling to a fixed output size with PyTorch's bins.

    Parameters
    ----------
    x : Array
        Input ``(N, C, H, W)`` or ``(C, H, W)``, real floating.
    output_size : int or tuple of 2 ints
        The output's ``(H_out, W_out)`` (an int for both); an entry may be None to keep
        the input's size.

    Returns
    -------
    Array
        ``(N, C, OH, OW)``.

    Raises
    ------
    TypeError
        If ``x`` is not a real floating clnp array or ``output_size`` is malformed.
    ValueError
        If the rank is wrong or an output size is not positive.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> x = clnp.reshape(clnp.arange(16.0), (1, 1, 4, 4))
    >>> F.adaptive_avg_pool2d(x, 1)[0, 0].tolist()
    [[7.5]]
    >>> F.adaptive_avg_pool2d(x, (3, 2)).shape
    (1, 1, 3, 2)
    """
    fn = "adaptive_avg_pool2d"
    chk.array(fn, "x", x, ndim=(3, 4))
    H, W = x.shape[-2], x.shape[-1]
    if isinstance(output_size, (tuple, list)) and len(output_size) == 2:
        output_size = tuple(n if o is None else o for o, n in zip(output_size, (H, W)))
    OH, OW = chk.int_tuple(fn, "output_size", output_size, 2)
    if H == 0 or W == 0:
        raise ValueError(f"{fn}: input of shape {tuple(x.shape)} has an empty spatial dim")
    y = x
    if (OH, OW) == (1, 1):
        return xp.mean(x, axis=(-2, -1), keepdims=True)
    if OW != W:
        aw = _const(_adaptive_matrix(W, OW).T, x)
        y = xp.matmul(y, aw)                                      # (..., H, OW)
    if OH != H:
        ah = _const(_adaptive_matrix(H, OH), x)
        y = xp.matmul(ah, y)                                      # (..., OH, OW)
    return y
