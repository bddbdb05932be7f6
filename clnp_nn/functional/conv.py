"""Convolutions: ``conv1d``, ``conv2d`` and ``conv_transpose2d`` (NCHW activations, OIHW
weights, PyTorch's semantics).

A convolution is one im2col kernel (``nn_im2col``: the batch goes into the columns) and one
GEMM with clnp's tuned ``matmul`` (a batched one per group); on CPU devices, where an image
has at least 256 output pixels, the columns are batch-major and the GEMM is batched over the
images, its output NCHW. Stride-1 3x3 convolutions may run Winograd F(2x2, 3x3) instead
(``_winograd``) where ``autotune_conv2d`` measured it faster for that problem on that device
(``_conv_algo``). Differentiation reuses the GEMM's rules and the im2col adjoint, so the
backward pass is two GEMMs (data and weight gradients) and one ``nn_col2im`` kernel, all on
the device; on CPUs, stride-1 convolutions instead take their data gradient as a
convolution of the output gradient (im2col and the forward's GEMM shape,
``_conv_dgrad_as_conv``). A transposed convolution is the same pair in the other order: a
GEMM, then col2im.
"""
from __future__ import annotations

import functools
from typing import Any

import clnp as xp
from clnp_grad import custom_vjp

from . import _checks as chk
from ._conv_algo import choose
from ._kernels import col2im, im2col
from ._precision import narrow, wide
from ._winograd import conv2d_winograd
from ._winograd import eligible as winograd_applies

__all__ = ["conv1d", "conv2d", "conv_transpose2d"]

# The layout of im2col + GEMM convolutions: batch-major columns and a GEMM batched over the
# images (True), or the whole batch's columns in one GEMM (False); None: by device (CPUs
# batch-major where an image has _BATCH_MAJOR_MIN_COLUMNS output pixels). Tests force both
# on any device.
BATCH_MAJOR: bool | None = None
_BATCH_MAJOR_MIN_COLUMNS = 256
# Stride-1 data gradients as convolutions (_conv_dgrad_as_conv): None: on CPUs (GPUs keep
# col2im, measured 0.84x cuDNN on the ResNet block). Tests force it on any device.
DGRAD_AS_CONV: bool | None = None


def _padding(fn: str, padding: Any, kernel: tuple, stride: tuple, dilation: tuple,
             nd: int) -> tuple[tuple[int, int], ...]:
    """Per spatial dim, (before, after) padding. ``"same"`` puts the odd element after, as
    PyTorch does."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * nd
        if padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError(f"{fn}: padding='same' is not supported for strided "
                                 f"convolutions (stride={stride if nd > 1 else stride[0]})")
            out = []
            for k, d in zip(kernel, dilation):
                total = d * (k - 1)
                out.append((total // 2, total - total // 2))
            return tuple(out)
        raise ValueError(f"{fn}: padding must be an int, a tuple of {nd} ints, 'same' or "
                         f"'valid', got {padding!r}")
    p = chk.int_tuple(fn, "padding", padding, nd, minimum=0)
    return tuple((e, e) for e in p)


def _out_size(fn: str, x_shape: tuple, n_in: int, k: int, s: int, pad: tuple, d: int,
              what: str) -> int:
    o = (n_in + pad[0] + pad[1] - d * (k - 1) - 1) // s + 1
    if o <= 0:
        raise ValueError(f"{fn}: the input's {what} {n_in} (input shape {x_shape}) with padding "
                         f"{pad} is smaller than the dilated kernel size {d * (k - 1) + 1}")
    return o


def _conv(fn: str, x: Any, weight: Any, bias: Any, stride: tuple, padding: Any,
          dilation: tuple, groups: int, nd: int) -> Any:
    """Checks, then the 2-D convolution of 4-D ``x`` and ``weight`` (a 1-D convolution has
    been given a unit height by the caller; ``nd`` is the user's spatial rank)."""
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise ValueError(f"{fn}: groups must be a positive int, got {groups!r}")
    N, Cin, H, W = x.shape
    O, Cg, KH, KW = weight.shape
    if Cin % groups or O % groups:
        raise ValueError(f"{fn}: in_channels {Cin} and out_channels {O} must both be divisible "
                         f"by groups={groups}")
    if Cg * groups != Cin:
        raise ValueError(f"{fn}: weight of shape {_user_shape(weight.shape, nd)} expects "
                         f"{Cg * groups} input channels (weight.shape[1] * groups), but the "
                         f"input of shape {_user_shape(x.shape, nd)} has {Cin}")
    if bias is not None:
        chk.array(fn, "bias", bias, ndim=1)
        if bias.shape[0] != O:
            raise ValueError(f"{fn}: bias of shape {tuple(bias.shape)} does not match the "
                             f"weight's {O} output channels")
    kernel = (KH, KW)
    pads = padding
    OH = _out_size(fn, _user_shape(x.shape, nd), H, KH, stride[0], pads[0], dilation[0],
                   "height")
    OW = _out_size(fn, _user_shape(x.shape, nd), W, KW, stride[1], pads[1], dilation[1],
                   "width" if nd > 1 else "length")
    # float16/bfloat16 compute in float32 (the GEMM does anyway) and round once, at the end
    dtype, x, weight, bias = x.dtype, wide(x), wide(weight), wide(bias)
    algo = choose(x.device, x.dtype, tuple(x.shape), tuple(weight.shape), pads,
                  nd == 2 and winograd_applies(kernel, stride, dilation, groups))
    if algo == "winograd":
        y = conv2d_winograd(x, weight, pads, (OH, OW))
        return narrow(y if bias is None else y + xp.reshape(bias, (1, O, 1, 1)), dtype)
    cpu = x.device.is_cpu
    # CPUs: each image's columns (Cin*KH*KW, OH*OW) times the weights, a GEMM batched over
    # the images whose output is NCHW already, where an image's columns are wide enough: one
    # image's block stays within the TLB's reach, where the panels of the whole batch's
    # (Cin*KH*KW, N*OH*OW) matrix cost a page walk per row (measured 3-4x slower on PoCL).
    # Narrow maps (the digits CNN's 8x8 and 4x4) take one GEMM over the whole batch: per
    # image, 16 columns filled half of each 32-column register tile
    batch_major = BATCH_MAJOR if BATCH_MAJOR is not None else \
        cpu and OH * OW >= _BATCH_MAJOR_MIN_COLUMNS
    as_conv = DGRAD_AS_CONV if DGRAD_AS_CONV is not None else cpu
    if groups == 1:
        w2d = xp.reshape(weight, (O, Cg * KH * KW))
        geom = (kernel, (pads[0][0], pads[1][0]), dilation, (OH, OW))
        if as_conv and stride == (1, 1) and _flipped_padding(kernel, pads, dilation) is not None:
            y = _conv_dgrad_as_conv(geom, batch_major)(x, w2d)
        else:
            y = _conv_gemm(x, w2d, geom, stride, batch_major)
        return narrow(y if bias is None else y + xp.reshape(bias, (1, O, 1, 1)), dtype)
    cols = im2col(x, kernel=kernel, stride=stride, padding=(pads[0][0], pads[1][0]),
                  dilation=dilation, out_hw=(OH, OW))                  # (Cin*KH*KW, N*OH*OW)
    w3 = xp.reshape(weight, (groups, O // groups, Cg * KH * KW))
    c3 = xp.reshape(cols, (groups, Cg * KH * KW, N * OH * OW))
    y = xp.matmul(w3, c3)                                              # (G, O/G, N*OH*OW)
    y = xp.permute_dims(xp.reshape(y, (O, N, OH, OW)), (1, 0, 2, 3))
    if bias is not None:
        y = y + xp.reshape(bias, (1, O, 1, 1))
    return narrow(y, dtype)


def _columns(x: Any, geom: tuple, stride: tuple, batch_major: bool) -> Any:
    """im2col of ``x``: ``(N, C*KH*KW, OH*OW)`` batch-major, else ``(C*KH*KW, N*OH*OW)``."""
    kernel, pad, dilation, out_hw = geom
    return im2col(x, kernel=kernel, stride=stride, padding=pad, dilation=dilation,
                  out_hw=out_hw, batch_major=batch_major)


def _product(w2d: Any, cols: Any, n: int, out_hw: tuple, batch_major: bool) -> Any:
    """The ``(O, C*KH*KW)`` weights times the columns, as NCHW."""
    y = xp.matmul(w2d, cols)
    if batch_major:
        return xp.reshape(y, (n, w2d.shape[0]) + tuple(out_hw))
    return xp.permute_dims(xp.reshape(y, (w2d.shape[0], n) + tuple(out_hw)), (1, 0, 2, 3))


def _conv_gemm(x: Any, w2d: Any, geom: tuple, stride: tuple, batch_major: bool) -> Any:
    """The convolution as im2col and one GEMM (batched over the images when
    ``batch_major``)."""
    return _product(w2d, _columns(x, geom, stride, batch_major), x.shape[0], geom[3],
                    batch_major)


def _flipped_padding(kernel: tuple, pads: tuple, dilation: tuple) -> tuple | None:
    """The padding of the stride-1 convolution that computes this one's data gradient
    (``d*(k-1) - p`` per side), or None where the padding is uneven or wider than that."""
    out = []
    for k, (lo, hi), d in zip(kernel, pads, dilation):
        q = d * (k - 1) - lo
        if lo != hi or q < 0:
            return None
        out.append(q)
    return tuple(out)


@functools.lru_cache(maxsize=64)
def _conv_dgrad_as_conv(geom: tuple, batch_major: bool) -> Any:
    """The stride-1 convolution with its data gradient computed as a convolution (cuDNN's
    backward-data): ``dx = conv(dy, w')``, ``w'`` the weights with in/out channels swapped
    and the taps flipped. The generic rules gave ``col2im(W^T dy)``: a GEMM with a 64-deep
    contraction writing the ``C*KH*KW``-row columns, which arrive transposed (the product's
    output viewed through the transpose rule), and a col2im reading them at a stride.
    Measured on PoCL (2 cores, batch-major, 64 channels, 32x32, batch 64): GEMM 22.5 ms +
    transposed col2im 15.5 ms, against im2col 7 ms + the forward's GEMM shape, 22 ms. The
    weight gradient is one product per image summed over the batch (batch-major), or one
    product over the whole batch. Forward mode and ``vmap`` go through the composition
    itself."""
    kernel, pad, dilation, out_hw = geom

    def conv(x: Any, w2d: Any) -> Any:
        return _conv_gemm(x, w2d, geom, (1, 1), batch_major)

    def fwd(x: Any, w2d: Any) -> tuple:
        cols = _columns(x, geom, (1, 1), batch_major)
        return _product(w2d, cols, x.shape[0], out_hw, batch_major), \
            (cols, w2d, tuple(x.shape))

    def bwd(res: tuple, dy: Any) -> tuple:
        cols, w2d, (N, C, H, W) = res
        O, L = w2d.shape[0], out_hw[0] * out_hw[1]
        if batch_major:
            dy3 = xp.reshape(dy, (N, O, L))
            dw = xp.sum(xp.matmul(dy3, xp.permute_dims(cols, (0, 2, 1))), axis=0)
        else:
            dy2 = xp.reshape(xp.permute_dims(dy, (1, 0, 2, 3)), (O, N * L))
            dw = xp.matmul(dy2, xp.permute_dims(cols, (1, 0)))
        w4 = xp.reshape(w2d, (O, C) + tuple(kernel))
        flipped = xp.reshape(xp.flip(xp.permute_dims(w4, (1, 0, 2, 3)), axis=(2, 3)),
                             (C, O * kernel[0] * kernel[1]))
        q = _flipped_padding(kernel, tuple((p, p) for p in pad), dilation)
        dx = _conv_gemm(dy, flipped, (kernel, q, dilation, (H, W)), (1, 1), batch_major)
        return dx, dw

    f = custom_vjp(conv)
    f.__name__ = "conv2d"
    return f.defvjp(fwd, bwd)


def _user_shape(shape: tuple, nd: int) -> tuple:
    """The shape as the user passed it (1-D convolutions run with a unit height)."""
    return tuple(shape) if nd == 2 else tuple(shape[:2]) + tuple(shape[3:])


def _check_operands(fn: str, x: Any, weight: Any, bias: Any, nd: int) -> tuple[Any, bool]:
    """``x`` with its batch dim (unbatched input allowed, as in PyTorch), and whether it was
    added."""
    chk.array(fn, "x", x, ndim=(nd + 1, nd + 2))
    chk.array(fn, "weight", weight, ndim=nd + 2)
    chk.same_dtype(fn, {"x": x, "weight": weight, "bias": bias})
    chk.same_device(fn, {"x": x, "weight": weight, "bias": bias})
    if x.ndim == nd + 1:
        return xp.expand_dims(x, axis=0), True
    return x, False


def conv2d(x: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Any:
    """2-D cross-correlation over ``(N, C, H, W)`` input with ``(O, C/groups, KH, KW)``
    weights.

    Parameters
    ----------
    x : Array
        Input ``(N, C_in, H, W)``, or unbatched ``(C_in, H, W)``.
    weight : Array
        Filters ``(C_out, C_in/groups, KH, KW)``.
    bias : Array, optional
        Shape ``(C_out,)``.
    stride, dilation : int or tuple of 2 ints
        Step between output positions; spacing between kernel taps.
    padding : int, tuple of 2 ints, "same" or "valid"
        Zero padding on both sides of each spatial dim. ``"same"`` (stride 1 only) keeps the
        spatial size, padding one more element after than before when the total is odd.
    groups : int
        Channel groups; ``C_in`` and ``C_out`` must both be divisible by it.

    Returns
    -------
    Array
        ``(N, C_out, OH, OW)`` with ``OH = (H + 2*pad - dilation*(KH-1) - 1) // stride + 1``
        (``(C_out, OH, OW)`` for unbatched input).

    Raises
    ------
    TypeError
        If an argument is not a real floating clnp array, dtypes differ, or a size parameter
        is not an int or tuple of ints.
    ValueError
        If ranks, channels or groups do not fit, the input is smaller than the kernel, or
        ``padding="same"`` is asked with a stride.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> x, w = clnp.ones((1, 1, 4, 4)), clnp.ones((2, 1, 3, 3))
    >>> F.conv2d(x, w, padding=1).shape
    (1, 2, 4, 4)
    >>> F.conv2d(x, w)[0, 0].tolist()
    [[9.0, 9.0], [9.0, 9.0]]
    """
    fn = "conv2d"
    x4, added = _check_operands(fn, x, weight, bias, 2)
    stride = chk.int_tuple(fn, "stride", stride, 2)
    dilation = chk.int_tuple(fn, "dilation", dilation, 2)
    pads = _padding(fn, padding, tuple(weight.shape[2:]), stride, dilation, 2)
    y = _conv(fn, x4, weight, bias, stride, pads, dilation, groups, 2)
    return y[0] if added else y


def conv1d(x: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Any:
    """1-D cross-correlation over ``(N, C, L)`` input with ``(O, C/groups, K)`` weights.

    Parameters
    ----------
    x : Array
        Input ``(N, C_in, L)``, or unbatched ``(C_in, L)``.
    weight : Array
        Filters ``(C_out, C_in/groups, K)``.
    bias : Array, optional
        Shape ``(C_out,)``.
    stride, dilation : int or tuple of 1 int
        Step between windows, and spacing between a window's elements.
    padding : int, tuple of 1 int, "same" or "valid"
        Zeros added at both ends; "same" keeps the length (stride 1), "valid" adds none.
    groups : int
        Input and output channels are split into this many groups, convolved separately.

    Returns
    -------
    Array
        ``(N, C_out, L_out)`` (``(C_out, L_out)`` for unbatched input).

    Raises
    ------
    TypeError, ValueError
        As :func:`conv2d`.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> x, w = clnp.ones((1, 2, 5)), clnp.ones((3, 2, 3))
    >>> F.conv1d(x, w, padding="same").shape
    (1, 3, 5)
    >>> F.conv1d(x, w)[0, 0].tolist()
    [6.0, 6.0, 6.0]
    """
    fn = "conv1d"
    x3, added = _check_operands(fn, x, weight, bias, 1)
    (s,) = chk.int_tuple(fn, "stride", stride, 1)
    (d,) = chk.int_tuple(fn, "dilation", dilation, 1)
    (pad,) = _padding(fn, padding, (weight.shape[2],), (s,), (d,), 1)
    y = _conv(fn, xp.expand_dims(x3, axis=2), xp.expand_dims(weight, axis=2), bias, (1, s),
              ((0, 0), pad), (1, d), groups, 1)
    y = xp.squeeze(y, axis=2)
    return y[0] if added else y


def conv_transpose2d(x: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Any:
    """2-D transposed convolution (the gradient of :func:`conv2d` with respect to its input),
    PyTorch's ``conv_transpose2d``.

    Parameters
    ----------
    x : Array
        Input ``(N, C_in, H, W)``, or unbatched ``(C_in, H, W)``.
    weight : Array
        Filters ``(C_in, C_out/groups, KH, KW)``.
    bias : Array, optional
        Shape ``(C_out,)``.
    stride, padding, dilation : int or tuple of 2 ints
        Those of the convolution this one transposes.
    output_padding : int or tuple of 2 ints
        Extra rows/columns on the bottom/right of the output; each must be smaller than the
        stride or the dilation of its dim.
    groups : int
        Input and output channels are split into this many groups, convolved separately.

    Returns
    -------
    Array
        ``(N, C_out, OH, OW)`` with
        ``OH = (H - 1)*stride - 2*padding + dilation*(KH - 1) + output_padding + 1``.

    Raises
    ------
    TypeError
        If an argument is not a real floating clnp array or dtypes differ.
    ValueError
        If ranks, channels or groups do not fit, or the output would be empty.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> x, w = clnp.ones((1, 1, 2, 2)), clnp.ones((1, 1, 2, 2))
    >>> F.conv_transpose2d(x, w, stride=2).shape
    (1, 1, 4, 4)
    >>> F.conv_transpose2d(x, w)[0, 0].tolist()
    [[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]
    """
    fn = "conv_transpose2d"
    x4, added = _check_operands(fn, x, weight, bias, 2)
    stride = chk.int_tuple(fn, "stride", stride, 2)
    dilation = chk.int_tuple(fn, "dilation", dilation, 2)
    if isinstance(padding, str):
        raise ValueError(f"{fn}: padding must be an int or a tuple of 2 ints, got {padding!r}")
    pad = chk.int_tuple(fn, "padding", padding, 2, minimum=0)
    opad = chk.int_tuple(fn, "output_padding", output_padding, 2, minimum=0)
    for o, s, d in zip(opad, stride, dilation):
        if o >= s and o >= d:
            raise ValueError(f"{fn}: output_padding {opad} must be smaller than either the "
                             f"stride {stride} or the dilation {dilation}")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise ValueError(f"{fn}: groups must be a positive int, got {groups!r}")
    N, Cin, H, W = x4.shape
    Ci, Cog, KH, KW = weight.shape
    if Ci != Cin:
        raise ValueError(f"{fn}: weight of shape {tuple(weight.shape)} expects {Ci} input "
                         f"channels (weight.shape[0]), but the input of shape "
                         f"{tuple(x4.shape)} has {Cin}")
    if Cin % groups:
        raise ValueError(f"{fn}: in_channels {Cin} must be divisible by groups={groups}")
    Cout = Cog * groups
    if bias is not None:
        chk.array(fn, "bias", bias, ndim=1)
        if bias.shape[0] != Cout:
            raise ValueError(f"{fn}: bias of shape {tuple(bias.shape)} does not match the "
                             f"{Cout} output channels (weight.shape[1] * groups)")
    OH = (H - 1) * stride[0] - 2 * pad[0] + dilation[0] * (KH - 1) + opad[0] + 1
    OW = (W - 1) * stride[1] - 2 * pad[1] + dilation[1] * (KW - 1) + opad[1] + 1
    if OH <= 0 or OW <= 0:
        raise ValueError(f"{fn}: the output size ({OH}, {OW}) for input {tuple(x4.shape)}, "
                         f"kernel {(KH, KW)}, stride {stride}, padding {pad} is not positive")
    Cig = Cin // groups
    dtype, x4, weight, bias = x4.dtype, wide(x4), wide(weight), wide(bias)
    xin = xp.reshape(xp.permute_dims(x4, (1, 0, 2, 3)), (groups, Cig, N * H * W))
    w3 = xp.reshape(weight, (groups, Cig, Cog * KH * KW))
    cols = xp.matmul(xp.matrix_transpose(w3), xin)                   # (G, Cog*KH*KW, N*H*W)
    cols = xp.reshape(cols, (Cout * KH * KW, N * H * W))
    y = col2im(cols, kernel=(KH, KW), stride=stride, padding=pad, dilation=dilation,
               out_hw=(H, W), in_hw=(OH, OW))
    if bias is not None:
        y = y + xp.reshape(bias, (1, Cout, 1, 1))
    y = narrow(y, dtype)
    return y[0] if added else y
