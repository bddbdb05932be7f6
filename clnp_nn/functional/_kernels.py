"""The device kernels of ``clnp_nn.functional`` as primitives, with their transformation rules.

- ``nn_im2col(x, *, kernel, stride, padding, dilation, out_hw, fill)``: ``x`` of shape
  ``(N, C, H, W)`` (any strides) to the column matrix of shape ``(C*KH*KW, N*OH*OW)``; row
  ``(c*KH + i)*KW + j``, column ``(n*OH + oh)*OW + ow`` holds
  ``x[n, c, oh*SH - PH + i*DH, ow*SW - PW + j*DW]``, or ``fill`` where that lies in the padding.
  The batch sits in the columns so a whole convolution is one GEMM, and its weight gradient
  another (Caffe's layout).
- ``nn_col2im(cols, *, kernel, stride, padding, dilation, out_hw, in_hw)``: the transpose
  (adjoint) of ``nn_im2col``: every input pixel gathers the column entries that read it, so
  the kernel needs no atomics. ``N`` and ``C`` follow from the shape of ``cols``.
- ``nn_erf(x)``: the error function (OpenCL's ``erf``), which the elementwise op table lacks.

Both im2col and col2im are linear, so each one's JVP is itself and its VJP the other; under
``vmap`` the batch axis folds into ``N``. ``jit`` records them as opaque steps.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import clnp as xp
from clnp._array import Array
from clnp._codegen import ctypes as C
from clnp._custom_kernels import ElementwiseKernel
from clnp._eager import local_size
from clnp._prims import def_impl, primitive
from clnp._runtime import launch
from clnp_grad._rules import JVP, VJP
from clnp_grad._vmap import BATCH

_I64 = np.dtype(np.int64)
_GEOM = ("C", "H", "W", "KH", "KW", "OH", "OW", "SH", "SW", "PH", "PW", "DH", "DW")


def _prelude(dtype: np.dtype) -> list[str]:
    return ["#pragma OPENCL EXTENSION cl_khr_fp64 : enable"] if C.uses_fp64([dtype]) else []


def _render_im2col(dtype: np.dtype) -> tuple[str, str, list]:
    st, ct = C.storage_ctype(dtype), C.compute_ctype(dtype)
    geom = ", ".join(f"const long {g}" for g in _GEOM)
    src = "\n".join(_prelude(dtype) + [
        f"// clnp_nn im2col {dtype}",
        f"__kernel void clnp_nn_im2col(const long total, const long ncol, {geom},",
        f"    __global const {st} *x, const long xo, const long sn, const long sc,",
        f"    const long sh, const long sw, const {ct} fill, __global {st} *y)",
        "{",
        "  const long gid = get_global_id(0);",
        "  if (gid >= total) return;",
        "  const long r = gid / ncol, col = gid - r * ncol;",
        "  const long kj = r % KW, kt = r / KW, ki = kt % KH, c = kt / KH;",
        "  const long ow = col % OW, q = col / OW, oh = q % OH, n = q / OH;",
        "  const long ih = oh * SH - PH + ki * DH, iw = ow * SW - PW + kj * DW;",
        f"  {ct} v = fill;",
        "  if (ih >= 0 && ih < H && iw >= 0 && iw < W)",
        f"    v = {C.load(dtype, 'x', 'xo + n * sn + c * sc + ih * sh + iw * sw')};",
        f"  {C.store(dtype, 'y', 'gid', 'v')}",
        "}"])
    args = [_I64, _I64] + [_I64] * len(_GEOM) + [None, _I64, _I64, _I64, _I64, _I64,
                                                  C.scalar_arg_dtype(dtype), None]
    return src, "clnp_nn_im2col", args


def _render_col2im(dtype: np.dtype) -> tuple[str, str, list]:
    st, ct = C.storage_ctype(dtype), C.compute_ctype(dtype)
    geom = ", ".join(f"const long {g}" for g in _GEOM)
    src = "\n".join(_prelude(dtype) + [
        f"// clnp_nn col2im {dtype}",
        f"__kernel void clnp_nn_col2im(const long total, {geom},",
        f"    __global const {st} *cols, const long co, const long rs, const long cs,",
        f"    __global {st} *x)",
        "{",
        "  const long gid = get_global_id(0);",
        "  if (gid >= total) return;",
        "  const long w = gid % W, t1 = gid / W, h = t1 % H, t2 = t1 / H, c = t2 % C,",
        "             n = t2 / C;",
        f"  {ct} acc = 0;",
        "  for (long ki = 0; ki < KH; ++ki) {",
        "    const long hh = h + PH - ki * DH;",
        "    if (hh < 0 || hh % SH) continue;",
        "    const long oh = hh / SH;",
        "    if (oh >= OH) continue;",
        "    for (long kj = 0; kj < KW; ++kj) {",
        "      const long ww = w + PW - kj * DW;",
        "      if (ww < 0 || ww % SW) continue;",
        "      const long ow = ww / SW;",
        "      if (ow >= OW) continue;",
        "      const long r = (c * KH + ki) * KW + kj, col = (n * OH + oh) * OW + ow;",
        f"      acc += {C.load(dtype, 'cols', 'co + r * rs + col * cs')};",
        "    }",
        "  }",
        f"  {C.store(dtype, 'x', 'gid', 'acc')}",
        "}"])
    args = [_I64] + [_I64] * len(_GEOM) + [None, _I64, _I64, _I64, None]
    return src, "clnp_nn_col2im", args


def _geometry(C_: int, in_hw: tuple, kernel: tuple, out_hw: tuple, stride: tuple,
              padding: tuple, dilation: tuple) -> list[int]:
    return [C_, in_hw[0], in_hw[1], kernel[0], kernel[1], out_hw[0], out_hw[1], stride[0],
            stride[1], padding[0], padding[1], dilation[0], dilation[1]]


@def_impl("nn_im2col")
def im2col_impl(x: Array, *, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple,
                out_hw: tuple, fill: float) -> Array:
    N, C_, H, W = x.shape
    rows, ncol = C_ * kernel[0] * kernel[1], N * out_hw[0] * out_hw[1]
    out = Array.empty((rows, ncol), x.dtype, x.device)
    total = rows * ncol
    if total == 0:
        return out
    dev = x.device
    kern = dev.kernel(("clnp_nn_im2col", x.dtype), lambda: _render_im2col(x.dtype))
    L = local_size(dev)
    fill_v = C.scalar_arg_dtype(x.dtype).type(fill)
    launch(dev, kern, (-(-total // L) * L,), (L,), total, ncol,
           *_geometry(C_, (H, W), kernel, out_hw, stride, padding, dilation),
           x._buf, x._offset, *x._strides, fill_v, out._buf)
    return out


@def_impl("nn_col2im")
def col2im_impl(cols: Array, *, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple,
                out_hw: tuple, in_hw: tuple) -> Array:
    rows, ncol = cols.shape
    C_ = rows // (kernel[0] * kernel[1])
    N = ncol // (out_hw[0] * out_hw[1]) if out_hw[0] * out_hw[1] else 0
    out = Array.empty((N, C_) + tuple(in_hw), cols.dtype, cols.device)
    total = out.size
    if total == 0:
        return out
    if rows * ncol == 0:
        return xp.zeros(out.shape, dtype=cols.dtype, device=cols.device)
    dev = cols.device
    kern = dev.kernel(("clnp_nn_col2im", cols.dtype), lambda: _render_col2im(cols.dtype))
    L = local_size(dev)
    launch(dev, kern, (-(-total // L) * L,), (L,), total,
           *_geometry(C_, in_hw, kernel, out_hw, stride, padding, dilation),
           cols._buf, cols._offset, cols._strides[0], cols._strides[1], out._buf)
    return out


def im2col(x: Any, *, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple,
           out_hw: tuple, fill: float = 0.0) -> Any:
    """Columns of ``x`` (N, C, H, W) as ``(C*KH*KW, N*OH*OW)``; arguments are checked by the
    caller."""
    return primitive("nn_im2col").bind(x, kernel=tuple(kernel), stride=tuple(stride),
                                       padding=tuple(padding), dilation=tuple(dilation),
                                       out_hw=tuple(out_hw), fill=float(fill))


def col2im(cols: Any, *, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple,
           out_hw: tuple, in_hw: tuple) -> Any:
    """The adjoint of :func:`im2col`: ``(C*KH*KW, N*OH*OW)`` summed back to (N, C, H, W)."""
    return primitive("nn_col2im").bind(cols, kernel=tuple(kernel), stride=tuple(stride),
                                       padding=tuple(padding), dilation=tuple(dilation),
                                       out_hw=tuple(out_hw), in_hw=tuple(in_hw))


# ------------------------------------------------------------------------------ rules
def _geom_params(p: dict) -> dict:
    return {k: p[k] for k in ("kernel", "stride", "padding", "dilation", "out_hw")}


JVP["nn_im2col"] = lambda primals, tangents, out, **p: im2col(tangents[0], **{**p, "fill": 0.0})
VJP["nn_im2col"] = lambda ct, primals, out, **p: (
    col2im(ct, in_hw=tuple(primals[0].shape[2:]), **_geom_params(p)),)
JVP["nn_col2im"] = lambda primals, tangents, out, **p: col2im(tangents[0], **p)
VJP["nn_col2im"] = lambda ct, primals, out, **p: (im2col(ct, fill=0.0, **_geom_params(p)),)


def _batch_im2col(prim: Any, vals: tuple, batched: tuple, size: int, **p: Any) -> Any:
    x = vals[0]                                           # (B, N, C, H, W)
    B, N = x.shape[0], x.shape[1]
    cols = prim.bind(xp.reshape(x, (B * N,) + tuple(x.shape[2:])), **p)
    cols = xp.reshape(cols, (cols.shape[0], B, cols.shape[1] // B if B else 0))
    return xp.permute_dims(cols, (1, 0, 2))


def _batch_col2im(prim: Any, vals: tuple, batched: tuple, size: int, **p: Any) -> Any:
    cols = vals[0]                                        # (B, R, N*OH*OW)
    B, R, M = cols.shape
    flat = xp.reshape(xp.permute_dims(cols, (1, 0, 2)), (R, B * M))
    x = prim.bind(flat, **p)
    return xp.reshape(x, (B, x.shape[0] // B if B else 0) + tuple(x.shape[1:]))


BATCH["nn_im2col"] = _batch_im2col
BATCH["nn_col2im"] = _batch_col2im


# ------------------------------------------------------------------------------ erf
_ERF = ElementwiseKernel("T x", "T y", "y = erf(x)", "clnp_nn_erf")


@def_impl("nn_erf")
def erf_impl(x: Array) -> Array:
    return _ERF(x)


def erf(x: Any) -> Any:
    """The error function, elementwise, for a real floating array (OpenCL's ``erf``)."""
    return primitive("nn_erf").bind(x)


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _erf_slope(x: Any) -> Any:
    return _TWO_OVER_SQRT_PI * xp.exp(-(x * x))


JVP["nn_erf"] = lambda primals, tangents, out: tangents[0] * _erf_slope(primals[0])
VJP["nn_erf"] = lambda ct, primals, out: (ct * _erf_slope(primals[0]),)
BATCH["nn_erf"] = lambda prim, vals, batched, size: prim.bind(vals[0])
