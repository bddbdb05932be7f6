"""The device kernels of ``clnp_nn.functional`` as primitives, with their transformation rules.

- ``nn_im2col(x, *, kernel, stride, padding, dilation, out_hw, fill, batch_major)``: ``x`` of
  shape ``(N, C, H, W)`` (any strides) to the column matrix of shape ``(C*KH*KW, N*OH*OW)``;
  row ``(c*KH + i)*KW + j``, column ``(n*OH + oh)*OW + ow`` holds
  ``x[n, c, oh*SH - PH + i*DH, ow*SW - PW + j*DW]``, or ``fill`` where that lies in the padding.
  The batch sits in the columns so a whole convolution is one GEMM, and its weight gradient
  another (Caffe's layout). With ``batch_major`` the same values are laid out
  ``(N, C*KH*KW, OH*OW)``: one block per image, which CPU convolutions multiply as a batched
  GEMM whose output is already NCHW (a block of one image is a few MiB, where the
  ``(C*KH*KW, N*OH*OW)`` matrix of a whole batch spans more pages than the TLB maps).
- ``nn_col2im(cols, *, kernel, stride, padding, dilation, out_hw, in_hw)``: the transpose
  (adjoint) of ``nn_im2col``: every input pixel gathers the column entries that read it, so
  the kernel needs no atomics. ``N`` and ``C`` follow from the shape of ``cols``, whose rank
  says its layout (3: batch-major).
- ``nn_erf(x)``: the error function, which the elementwise op table lacks: clnp_nn's own
  polynomials on float8 vectors for float32 (see the erf section), OpenCL's ``erf`` otherwise.
- ``nn_max_pool2d(x, *, kernel, stride, padding, dilation, out_hw)``: the window maxima of
  ``x`` (N, C, H, W) as (N, C, OH, OW), and for its derivatives ``nn_max_pool2d_weight``,
  ``nn_max_pool2d_grad`` and ``nn_max_pool2d_tangent`` (see the max_pool2d section below).

Both im2col and col2im are linear, so each one's JVP is itself and its VJP the other; under
``vmap`` the batch axis folds into ``N``. ``jit`` records them as opaque steps.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import clnp as xp
from clnp._core.array import Array
from clnp._kernels import ctypes as C
from clnp._routines.custom_kernels import ElementwiseKernel
from clnp._core.prims import def_impl, primitive
from clnp._core.eager import local_size
from clnp._runtime.device import launch
from clnp_grad._rules import JVP, VJP
from clnp_grad._vmap import BATCH

from . import _checks as chk

_I64 = np.dtype(np.int64)
_I32 = np.dtype(np.int32)
_GEOM = ("C", "H", "W", "KH", "KW", "OH", "OW", "SH", "SW", "PH", "PW", "DH", "DW")


def _prelude(dtype: np.dtype) -> list[str]:
    return ["#pragma OPENCL EXTENSION cl_khr_fp64 : enable"] if C.uses_fp64([dtype]) else []


def _row_range(lo: str = "lo", hi: str = "hi") -> list[str]:
    """Lines defining ``[lo, hi)``: the output columns ow whose input column
    iw = ow*SW + off lies inside [0, W)."""
    return [f"  int {lo} = off >= 0 ? 0 : (-off + SW - 1) / SW;",
            f"  int {hi} = W - 1 - off >= 0 ? (W - 1 - off) / SW + 1 : 0;",
            f"  if ({hi} > OW) {hi} = OW;",
            f"  if ({lo} > {hi}) {lo} = {hi};"]


def _tap_rows() -> list[str]:
    """The opening of a loop over the kernel rows ``ki`` whose windows (output row ``oh``)
    read input row ``h``."""
    return ["for (int ki = 0; ki < KH; ++ki) {",
            "  const int hh = h + PH - ki * DH;",
            "  if (hh < 0 || hh % SH) continue;",
            "  const int oh = hh / SH;",
            "  if (oh >= OH) continue;"]


def _row_taps_reading() -> list[str]:
    """The opening of two loops over the taps ``(ki, kj)`` whose windows read input row
    ``h``, with the stretch ``[lo, hi)`` of output columns ``ow`` whose tap lies inside the
    row, at input column ``ow*SW + off`` (the row kernels' gathers: col2im, the max-pool
    gradient); the caller's lines follow at two levels of indentation, then it closes both
    loops."""
    return [*_tap_rows(),
            "  for (int kj = 0; kj < KW; ++kj) {",
            "    const int off = kj * DW - PW;",
            *["  " + line for line in _row_range()]]


def _render_im2col(dtype: np.dtype) -> tuple[str, str, list]:
    """Range (OH or fewer, N, C*KH*KW): a work-item writes rows of OW columns (stepping by
    the range along OH), the padding runs apart from the interior, whose reads are
    contiguous for unit stride. (One item per element, with its index arithmetic and bounds
    test, ran 7x slower on PoCL.)"""
    st, ct = C.storage_ctype(dtype), C.compute_ctype(dtype)
    geom = ", ".join(f"const int {g}" for g in _GEOM)
    src = "\n".join(_prelude(dtype) + [
        f"// clnp_nn im2col {dtype}",
        f"__kernel void clnp_nn_im2col(const long rs, const long ns, {geom},",
        f"    __global const {st} *x, const long xo, const long sn, const long sc,",
        f"    const long sh, const long sw, const {ct} fill, __global {st} *y)",
        "{",
        "  const int n = get_global_id(1), r = get_global_id(2);",
        "  const int kj = r % KW, kt = r / KW, ki = kt % KH, c = kt / KH;",
        "  const int off = kj * DW - PW;",
        *_row_range("lo0", "hi0"),
        "  for (int oh = get_global_id(0); oh < OH; oh += get_global_size(0)) {",
        "  const int ih = oh * SH - PH + ki * DH;",
        "  const long d = r * rs + n * ns + (long)oh * OW;",
        "  const int inside = ih >= 0 && ih < H;",
        "  const int lo = inside ? lo0 : 0, hi = inside ? hi0 : 0;",
        "  const long s = xo + n * sn + c * sc + ih * sh + off * sw;",
        "  int ow = 0;",
        f"  for (; ow < lo; ++ow) {C.store(dtype, 'y', 'd + ow', 'fill')}",
        "  if (SW == 1 && sw == 1) {",
        f"    for (; ow < hi; ++ow) {C.store(dtype, 'y', 'd + ow', C.load(dtype, 'x', 's + ow'))}",
        "  } else {",
        "    for (; ow < hi; ++ow)",
        f"      {C.store(dtype, 'y', 'd + ow', C.load(dtype, 'x', 's + (long)ow * SW * sw'))}",
        "  }",
        f"  for (; ow < OW; ++ow) {C.store(dtype, 'y', 'd + ow', 'fill')}",
        "  }",
        "}"])
    args = [_I64, _I64] + [_I32] * len(_GEOM) + [None, _I64, _I64, _I64, _I64, _I64,
                                                  C.scalar_arg_dtype(dtype), None]
    return src, "clnp_nn_im2col", args


def _render_col2im(dtype: np.dtype) -> tuple[str, str, list]:
    """Range (H or fewer, C, N): a work-item owns rows of the result (stepping by the range
    along H). For each it zeroes the row, then
    for every kernel tap that reads this row adds the matching stretch of a column-matrix
    row (distinct ow land on distinct w for a fixed tap, so no write conflicts and no
    atomics; the order of the sums is fixed, so results are deterministic)."""
    st, ct = C.storage_ctype(dtype), C.compute_ctype(dtype)
    geom = ", ".join(f"const int {g}" for g in _GEOM)
    src = "\n".join(_prelude(dtype) + [
        f"// clnp_nn col2im {dtype}",
        f"__kernel void clnp_nn_col2im({geom},",
        f"    __global const {st} *cols, const long co, const long rs, const long ns,",
        "    const long cs,",
        f"    __global {st} *x)",
        "{",
        "  const int c = get_global_id(1), n = get_global_id(2);",
        "  for (int h = get_global_id(0); h < H; h += get_global_size(0)) {",
        "  const long d = (((long)n * C + c) * H + h) * W;",
        f"  for (int w = 0; w < W; ++w) {C.store(dtype, 'x', 'd + w', f'({ct})0')}",
        *["  " + line for line in _row_taps_reading()],
        "      const long s = co + ((long)(c * KH + ki) * KW + kj) * rs + n * ns",
        "                     + (long)oh * OW * cs;",
        "      for (int ow = lo; ow < hi; ++ow) {",
        "        const long t = d + ow * SW + off;",
        f"        {C.store(dtype, 'x', 't', C.load(dtype, 'x', 't') + ' + ' + C.load(dtype, 'cols', 's + ow * cs'))}",
        "      }",
        "    }",
        "  }",
        "  }",
        "}"])
    args = [_I32] * len(_GEOM) + [None, _I64, _I64, _I64, _I64, None]
    return src, "clnp_nn_col2im", args


def _windows_holding() -> list[str]:
    """The opening of two loops over the taps ``(ki, kj)`` whose windows ``(oh, ow)`` read
    input pixel ``(h, w)`` (the element kernels' gathers: col2im, the max-pool gradient);
    the caller's lines follow at two levels of indentation, then it closes both loops."""
    return [*_tap_rows(),
            "  for (int kj = 0; kj < KW; ++kj) {",
            "    const int ww = w + PW - kj * DW;",
            "    if (ww < 0 || ww % SW) continue;",
            "    const int ow = ww / SW;",
            "    if (ow >= OW) continue;"]


def _render_im2col_elem(dtype: np.dtype) -> tuple[str, str, list]:
    """Range (OH*OW rounded up to the work-group size, N, C*KH*KW), one element per
    work-item: neighbouring work-items write neighbouring columns (coalesced on GPUs)."""
    st, ct = C.storage_ctype(dtype), C.compute_ctype(dtype)
    geom = ", ".join(f"const int {g}" for g in _GEOM)
    src = "\n".join(_prelude(dtype) + [
        f"// clnp_nn im2col (element) {dtype}",
        f"__kernel void clnp_nn_im2col_e(const long rs, const long ns, {geom},",
        f"    __global const {st} *x, const long xo, const long sn, const long sc,",
        f"    const long sh, const long sw, const {ct} fill, __global {st} *y)",
        "{",
        "  const int l = get_global_id(0);",
        "  if (l >= OH * OW) return;",
        "  const int n = get_global_id(1), r = get_global_id(2);",
        "  const int ow = l % OW, oh = l / OW;",
        "  const int kj = r % KW, kt = r / KW, ki = kt % KH, c = kt / KH;",
        "  const int ih = oh * SH - PH + ki * DH, iw = ow * SW - PW + kj * DW;",
        f"  {ct} v = fill;",
        "  if (ih >= 0 && ih < H && iw >= 0 && iw < W)",
        f"    v = {C.load(dtype, 'x', 'xo + n * sn + c * sc + ih * sh + iw * sw')};",
        f"  {C.store(dtype, 'y', 'r * rs + n * ns + l', 'v')}",
        "}"])
    args = [_I64, _I64] + [_I32] * len(_GEOM) + [None, _I64, _I64, _I64, _I64, _I64,
                                                  C.scalar_arg_dtype(dtype), None]
    return src, "clnp_nn_im2col_e", args


def _render_col2im_elem(dtype: np.dtype) -> tuple[str, str, list]:
    """Range (H*W rounded up, C, N), one input pixel per work-item, summing over the taps
    that read it."""
    st, ct = C.storage_ctype(dtype), C.compute_ctype(dtype)
    geom = ", ".join(f"const int {g}" for g in _GEOM)
    src = "\n".join(_prelude(dtype) + [
        f"// clnp_nn col2im (element) {dtype}",
        f"__kernel void clnp_nn_col2im_e({geom},",
        f"    __global const {st} *cols, const long co, const long rs, const long ns,",
        "    const long cs,",
        f"    __global {st} *x)",
        "{",
        "  const int p = get_global_id(0);",
        "  if (p >= H * W) return;",
        "  const int c = get_global_id(1), n = get_global_id(2);",
        "  const int w = p % W, h = p / W;",
        f"  {ct} acc = 0;",
        *["  " + line for line in _windows_holding()],
        "      const long r = (long)(c * KH + ki) * KW + kj;",
        "      const long col = (long)oh * OW + ow;",
        f"      acc += {C.load(dtype, 'cols', 'co + r * rs + n * ns + col * cs')};",
        "    }",
        "  }",
        f"  {C.store(dtype, 'x', '((long)n * C + c) * (H * W) + p', 'acc')}",
        "}"])
    args = [_I32] * len(_GEOM) + [None, _I64, _I64, _I64, _I64, None]
    return src, "clnp_nn_col2im_e", args


# Which kernel shape each device gets: "row" (one work-item per row: CPUs, where per-item
# index arithmetic and work-group scheduling dominate) or "element" (one per element:
# GPUs, where neighbouring work-items must touch neighbouring addresses). None: by the
# device's type; tests set it to run both shapes on any device.
VARIANT: str | None = None


def _variant(dev: Any) -> str:
    return VARIANT or ("row" if dev.is_cpu else "element")


def _row_items(rows: int, others: int) -> int:
    """Work-items along the rows of the "row" kernels, which loop over the rows they are
    given: one per (image, channel) plane where the planes alone are many (each item's rows
    then run contiguously, and PoCL's cost per work-item is paid once per plane)."""
    return 1 if others >= 256 else rows


def _geometry(C_: int, in_hw: tuple, kernel: tuple, out_hw: tuple, stride: tuple,
              padding: tuple, dilation: tuple) -> list[int]:
    return [C_, in_hw[0], in_hw[1], kernel[0], kernel[1], out_hw[0], out_hw[1], stride[0],
            stride[1], padding[0], padding[1], dilation[0], dilation[1]]


def _fits_int(what: str, sizes: tuple) -> None:
    """The kernels index within a row, an image and a channel with 32-bit ints."""
    if max(sizes) >= 2 ** 31:
        raise ValueError(f"{what}: a dimension product {max(sizes)} exceeds the 32-bit "
                         f"indexing of the kernel")


@def_impl("nn_im2col")
def im2col_impl(x: Array, *, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple,
                out_hw: tuple, fill: float, batch_major: bool = False) -> Array:
    N, C_, H, W = x.shape
    rows, L = C_ * kernel[0] * kernel[1], out_hw[0] * out_hw[1]
    shape = (N, rows, L) if batch_major else (rows, N * L)
    out = Array.empty(shape, x.dtype, x.device)
    total = rows * N * L
    if total == 0:
        return out
    _fits_int("im2col", (N, rows, L, H * W, C_ * H * W))
    # element (r, n, l) at r * rs + n * ns + l
    rs, ns = (L, rows * L) if batch_major else (N * L, L)
    dev = x.device
    fill_v = C.scalar_arg_dtype(x.dtype).type(fill)
    if _variant(dev) == "row":
        kern = dev.kernel(("clnp_nn_im2col", x.dtype), lambda: _render_im2col(x.dtype))
        gsize, lsize = (_row_items(out_hw[0], N * rows), N, rows), None
    else:
        kern = dev.kernel(("clnp_nn_im2col_e", x.dtype), lambda: _render_im2col_elem(x.dtype))
        Ls = local_size(dev)
        gsize, lsize = (-(-L // Ls) * Ls, N, rows), (Ls, 1, 1)
    launch(dev, kern, gsize, lsize, rs, ns,
           *_geometry(C_, (H, W), kernel, out_hw, stride, padding, dilation),
           x._buf, x._offset, *x._strides, fill_v, out._buf)
    return out


@def_impl("nn_col2im")
def col2im_impl(cols: Array, *, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple,
                out_hw: tuple, in_hw: tuple) -> Array:
    L = out_hw[0] * out_hw[1]
    if cols.ndim == 3:                   # batch-major (N, C*KH*KW, OH*OW)
        N, rows, _ = cols.shape
        rs, ns, cs = cols._strides[1], cols._strides[0], cols._strides[2]
    else:                                # (C*KH*KW, N*OH*OW)
        rows, ncol = cols.shape
        N = ncol // L if L else 0
        rs, cs = cols._strides
        ns = L * cs
    C_ = rows // (kernel[0] * kernel[1])
    out = Array.empty((N, C_) + tuple(in_hw), cols.dtype, cols.device)
    total = out.size
    if total == 0:
        return out
    if rows * N * L == 0:
        return xp.zeros(out.shape, dtype=cols.dtype, device=cols.device)
    _fits_int("col2im", (N, C_, rows, in_hw[0] * in_hw[1], L))
    dev = cols.device
    if _variant(dev) == "row":
        kern = dev.kernel(("clnp_nn_col2im", cols.dtype), lambda: _render_col2im(cols.dtype))
        gsize, lsize = (_row_items(in_hw[0], C_ * N), C_, N), None
    else:
        kern = dev.kernel(("clnp_nn_col2im_e", cols.dtype),
                          lambda: _render_col2im_elem(cols.dtype))
        Ls = local_size(dev)
        gsize, lsize = (-(-(in_hw[0] * in_hw[1]) // Ls) * Ls, C_, N), (Ls, 1, 1)
    launch(dev, kern, gsize, lsize,
           *_geometry(C_, in_hw, kernel, out_hw, stride, padding, dilation),
           cols._buf, cols._offset, rs, ns, cs, out._buf)
    return out


def im2col(x: Any, *, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple,
           out_hw: tuple, fill: float = 0.0, batch_major: bool = False) -> Any:
    """Columns of ``x`` (N, C, H, W) as ``(C*KH*KW, N*OH*OW)``, or with ``batch_major`` as
    ``(N, C*KH*KW, OH*OW)`` (each image's columns a block of their own); arguments are
    checked by the caller."""
    return primitive("nn_im2col").bind(x, kernel=tuple(kernel), stride=tuple(stride),
                                       padding=tuple(padding), dilation=tuple(dilation),
                                       out_hw=tuple(out_hw), fill=float(fill),
                                       batch_major=bool(batch_major))


def col2im(cols: Any, *, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple,
           out_hw: tuple, in_hw: tuple) -> Any:
    """The adjoint of :func:`im2col`: ``(C*KH*KW, N*OH*OW)`` or batch-major
    ``(N, C*KH*KW, OH*OW)`` columns summed back to (N, C, H, W)."""
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
VJP["nn_col2im"] = lambda ct, primals, out, **p: (
    im2col(ct, fill=0.0, batch_major=primals[0].ndim == 3, **_geom_params(p)),)


def _batch_im2col(prim: Any, vals: tuple, batched: tuple, size: int, **p: Any) -> Any:
    x = vals[0]                                           # (B, N, C, H, W)
    B, N = x.shape[0], x.shape[1]
    cols = prim.bind(xp.reshape(x, (B * N,) + tuple(x.shape[2:])), **p)
    if p.get("batch_major"):                              # (B*N, R, L)
        return xp.reshape(cols, (B, N) + tuple(cols.shape[1:]))
    cols = xp.reshape(cols, (cols.shape[0], B, cols.shape[1] // B if B else 0))
    return xp.permute_dims(cols, (1, 0, 2))


def _batch_col2im(prim: Any, vals: tuple, batched: tuple, size: int, **p: Any) -> Any:
    cols = vals[0]                        # (B, R, N*OH*OW), or batch-major (B, N, R, L)
    if cols.ndim == 4:
        B = cols.shape[0]
        x = prim.bind(xp.reshape(cols, (B * cols.shape[1],) + tuple(cols.shape[2:])), **p)
        return xp.reshape(x, (B, cols.shape[1]) + tuple(x.shape[1:]))
    B, R, M = cols.shape
    flat = xp.reshape(xp.permute_dims(cols, (1, 0, 2)), (R, B * M))
    x = prim.bind(flat, **p)
    return xp.reshape(x, (B, x.shape[0] // B if B else 0) + tuple(x.shape[1:]))


BATCH["nn_im2col"] = _batch_im2col
BATCH["nn_col2im"] = _batch_col2im


# ------------------------------------------------------------------------------ erf
_ERF = ElementwiseKernel("T x", "T y", "y = erf(x)", "clnp_nn_erf")

# float32 erf without the driver's: PoCL's scalar erf costs 22 ns an element on the 2-core
# machine (11.7 ms for the 2048x256 activations of the transformer example's GELU, where
# exp takes 0.35 ms), and work-item code that calls it is not vectorised. Near-minimax
# polynomials fitted in double (numpy.polynomial.polyfit on Chebyshev nodes): erf(x)/x in
# t = x^2 on [0, 1] (degree 6, relative error 1.4e-9), log(erfc(a)) in s = a - 2.46 on
# [1, 3.92] (degree 9, absolute error 5.6e-9); past 3.92 erf rounds to 1 in float32.
# Evaluated on float8 vectors (the tail of the array padded, so every element takes the same
# code): 2.4 ulp at most against math.erf over 2,000,001 points of [-5, 5]
# (tests/nn/test_functional.py::test_erf_float32_ulp checks 4 ulp on every device).
_ERF_SMALL = (1.128379166e+00, -3.761262691e-01, 1.128359749e-01, -2.685432954e-02,
              5.189312812e-03, -8.018859006e-04, 7.882500416e-05)
_ERF_BIG = (-7.594217576e+00, -5.277221922e+00, -9.425696155e-01, -1.121146750e-02,
            2.251222694e-03, -4.396395107e-04, 8.107207545e-05, -1.355351107e-05,
            1.644956867e-06, -5.307067792e-08)


def _horner(var: str, coefs: tuple[float, ...]) -> str:
    expr = f"(float8)({coefs[-1]:.9e}f)"
    for c in reversed(coefs[:-1]):
        expr = f"fma({expr}, {var}, (float8)({c:.9e}f))"
    return expr


def _render_erf_f32() -> tuple[str, str, list]:
    src = "\n".join([
        "// clnp_nn erf float32, 8 elements a work-item",
        "__kernel void clnp_nn_erf_f32(const long n, __global const float *x, const long xo,",
        "                              __global float *y)",
        "{",
        "  const long i = 8 * (long)get_global_id(0);",
        "  if (i >= n) return;",
        "  const int full = i + 8 <= n;",
        "  float8 v = (float8)(0.0f);",
        "  if (full) v = vload8(0, x + xo + i);",
        "  else for (int k = 0; i + k < n; ++k) ((float *)&v)[k] = x[xo + i + k];",
        "  const float8 a = fabs(v), t = v * v, s = a - 2.46f;",
        f"  const float8 small = v * {_horner('t', _ERF_SMALL)};",
        f"  float8 big = 1.0f - exp({_horner('s', _ERF_BIG)});",
        "  big = select(big, (float8)(1.0f), a >= 3.92f);",
        "  const float8 r = select(copysign(big, v), small, a < 1.0f);",
        "  if (full) vstore8(r, 0, y + i);",
        "  else for (int k = 0; i + k < n; ++k) y[i + k] = ((const float *)&r)[k];",
        "}"])
    return src, "clnp_nn_erf_f32", [np.int64, None, np.int64, None]


@def_impl("nn_erf")
def erf_impl(x: Array) -> Array:
    if x.dtype != np.float32:
        return _ERF(x)      # float16 and float64: OpenCL's erf
    if not x.flags.c_contiguous:
        x = xp.ascontiguousarray(x)
    out = Array.empty(x.shape, x.dtype, x.device)
    n = x.size
    if n:
        dev = x.device
        kern = dev.kernel("clnp_nn_erf_f32", _render_erf_f32)
        L = local_size(dev)
        items = -(-n // 8)
        launch(dev, kern, (-(-items // L) * L,), (L,), np.int64(n), x._buf,
               np.int64(x._offset), out._buf)
    return out


def erf(x: Any) -> Any:
    """The error function, elementwise, differentiable: for float32 clnp_nn's own
    polynomial approximation (within 4 ulp; 2.4 measured on PoCL), evaluated on vectors, for
    float16 and float64 OpenCL's ``erf``.

    Parameters
    ----------
    x : Array
        Real floating input.

    Returns
    -------
    Array
        ``erf(x)``, same shape and dtype.

    Raises
    ------
    TypeError
        If ``x`` is not a clnp array of a real floating dtype.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> F.erf(clnp.asarray([0.0])).tolist()
    [0.0]
    >>> round(float(F.erf(clnp.asarray([1.0]))[0]), 4)
    0.8427
    """
    chk.array("erf", "x", x)        # named erf, not the kernel 'clnp_nn_erf' inside
    return primitive("nn_erf").bind(x)


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _erf_slope(x: Any) -> Any:
    return _TWO_OVER_SQRT_PI * xp.exp(-(x * x))


JVP["nn_erf"] = lambda primals, tangents, out: tangents[0] * _erf_slope(primals[0])
VJP["nn_erf"] = lambda ct, primals, out: (ct * _erf_slope(primals[0]),)
BATCH["nn_erf"] = lambda prim, vals, batched, size: prim.bind(vals[0])


# ------------------------------------------------------------------------------ max_pool2d
# Max pooling as four gather kernels that keep the semantics of the composition they
# replace (im2col with -inf padding, clnp.max over the window, then the max reduction's
# rules followed by col2im), which are JAX's:
#
# - nn_max_pool2d(x) -> y (N, C, OH, OW): each window's maximum. Padding never wins: a
#   window holds at least one input element (padding is at most half the kernel), so it
#   is left out; NaN propagates by clnp.maximum's rule.
# - nn_max_pool2d_weight(x, y) -> w (N, C, OH, OW), in x's compute type: the tie weight
#   1 / count, count being how many of the window's taps equal y (padding taps too where y
#   is -inf, since they are -inf); for float16/bfloat16 rounded to x's dtype, as the
#   composition's division was. A NaN window has count 0 and weight inf. Counting is a
#   separate pass that only differentiation pays for: recounting inside the gradient
#   kernel (a data-dependent branch per element) made it 3x slower on PoCL.
# - nn_max_pool2d_grad(x, y, w, ct) -> dx (N, C, H, W): each input element gathers, from
#   every window holding it, ct * ((x == y) * w): winners share ct evenly, a loser gets
#   ct * 0 (NaN where ct is not finite), and every element of a NaN window gets NaN
#   (0 * inf), as the composition's ct * ((x == y) / count) does.
# - nn_max_pool2d_tangent(x, y, w, t) -> dy (N, C, OH, OW): the sum over the window's taps
#   of t * ((x == y) * w), padding taps having t = 0: forward mode, and the transpose of
#   the gradient with respect to ct.
#
# The gradient is linear in ct and the tangent in t; both are piecewise constant in x, y
# and w (a comparison and a count), so their own rules are each other and the weight has
# none (JAX's max rules alike).

_MAX = "(m != m || v != v) ? m + v : (m > v ? m : v)"   # clnp.maximum's rule: NaN propagates


def _round_half(dtype: np.dtype, v: str) -> str:
    """``v`` rounded to ``dtype``'s storage and back, as a value stored between two of the
    composition's operations was."""
    if dtype.name == "float16":
        return f"clnp_h2f(clnp_f2h({v}))"
    if dtype.name == "bfloat16":
        return f"clnp_bf2f(clnp_f2bf({v}))"
    return f"({v})"


def _taps(dtype: np.dtype, step: str) -> list[str]:
    """C lines running ``step`` on every in-bounds tap value ``v`` of window (oh, ow)."""
    ct = C.compute_ctype(dtype)
    return [
        "for (int a = 0; a < KH; ++a) {",
        "  const int ih = oh * SH - PH + a * DH;",
        "  if (ih < 0 || ih >= H) continue;",
        "  for (int b = 0; b < KW; ++b) {",
        "    const int iw = ow * SW - PW + b * DW;",
        "    if (iw < 0 || iw >= W) continue;",
        f"    const {ct} v = {C.load(dtype, 'x', 'xb + ih * xh + iw * xw')};",
        f"    {step}",
        "  }",
        "}",
    ]


def _finish_weight(dtype: np.dtype) -> list[str]:
    """C lines turning the count ``k`` of window (oh, ow), whose maximum is ``m``, into its
    weight ``k``: padding taps count where m is -inf (a branch almost never taken)."""
    return [
        "if ((PH || PW) && m == -INFINITY) {",
        "  int real = 0;",
        "  for (int a = 0; a < KH; ++a) {",
        "    const int ih = oh * SH - PH + a * DH;",
        "    for (int b = 0; b < KW; ++b) {",
        "      const int iw = ow * SW - PW + b * DW;",
        "      real += ih >= 0 && ih < H && iw >= 0 && iw < W;",
        "    }",
        "  }",
        "  k += KH * KW - real;",
        "}",
        f"k = {_round_half(dtype, 'one / k')};",
    ]


def _fwd_body(dtype: np.dtype) -> list[str]:
    ct = C.compute_ctype(dtype)
    return [f"{ct} m = -INFINITY;",
            *_taps(dtype, f"m = {_MAX};"),
            C.store(dtype, "out", "d + l", "m")]


def _weight_body(dtype: np.dtype) -> list[str]:
    ct = C.compute_ctype(dtype)
    return [f"const {ct} m = {C.load(dtype, 'y', 'yb + oh * yh + ow * yw')};",
            f"{ct} k = 0;",
            *_taps(dtype, "k += v == m;"),
            *_finish_weight(dtype),
            "out[d + l] = k;"]


def _share(dtype: np.dtype, v: str) -> str:
    """``v`` (ct or t) times element xv's weight in window (oh, ow): (xv == yv) * w. The
    arithmetic form, not a select, keeps the inner loops vectorisable (2.2x faster on
    PoCL than choosing between the winner's and the loser's value)."""
    ct = C.compute_ctype(dtype)
    return _round_half(dtype, f"{v} * (({ct})(xv == yv) * kv)")


def _window_values(dtype: np.dtype) -> list[str]:
    ct = C.compute_ctype(dtype)
    return [f"const {ct} yv = {C.load(dtype, 'y', 'yb + oh * yh + ow * yw')};",
            f"const {ct} kv = k[kb + oh * kh + ow * kw];"]


def _grad_body(dtype: np.dtype, shape: str) -> list[str]:
    ct = C.compute_ctype(dtype)
    gv = f"const {ct} gv = {C.load(dtype, 'g', 'gb + oh * gh + ow * gw')};"
    if shape == "element":
        return [
            f"const {ct} xv = {C.load(dtype, 'x', 'xb + h * xh + w * xw')};",
            f"{ct} acc = 0;",
            *_windows_holding(),
            *["    " + line for line in _window_values(dtype) + [gv]],
            f"    acc += {_share(dtype, 'gv')};",
            "  }",
            "}",
            C.store(dtype, "out", "d + l", "acc")]
    # row: the work-item owns input row h, zeroes it, then for every tap (ki, kj) whose
    # windows read this row walks the stretch of those windows (cut to the row as col2im's
    # row kernel does) adding each one's share to the element it reads: no division per
    # element, no write conflicts, a fixed order of sums (and, as col2im's row kernel did,
    # float16/bfloat16 round at each addition)
    return [
        f"for (int w = 0; w < W; ++w) {C.store(dtype, 'out', 'd + w', f'({ct})0')}",
        *_row_taps_reading(),
        "    for (int ow = lo; ow < hi; ++ow) {",
        "      const int iw = ow * SW + off;",
        f"      const {ct} xv = {C.load(dtype, 'x', 'xb + h * xh + iw * xw')};",
        *["      " + line for line in _window_values(dtype) + [gv]],
        "      " + C.store(dtype, "out", "d + iw",
                          C.load(dtype, "out", "d + iw") + " + " + _share(dtype, "gv")),
        "    }",
        "  }",
        "}"]


def _tangent_body(dtype: np.dtype) -> list[str]:
    ct = C.compute_ctype(dtype)
    tv = f"const {ct} tv = {C.load(dtype, 'g', 'gb + ih * gh + iw * gw')};"
    step = f"{{ const {ct} xv = v; {tv} acc += {_share(dtype, 'tv')}; }}"
    return [
        *_window_values(dtype),
        # the padding taps' t * w: 0, or NaN in a NaN window (0 * inf)
        f"{ct} acc = (PH || PW) ? 0 * kv : 0;",
        *_taps(dtype, step),
        C.store(dtype, "out", "d + l", "acc")]


_MAX_POOL2D_OPERANDS = {"fwd": "x", "weight": "xy", "grad": "xykg", "tangent": "xykg"}
_MAX_POOL2D_BODY = {"fwd": _fwd_body, "weight": _weight_body, "tangent": _tangent_body}


_SUFFIX = {"row": "", "element": "_e"}


def _max_pool2d_source(kind: str, dtype: np.dtype, shape: str) -> tuple[str, str]:
    """One of the four kernels in one of its shapes. "element" (GPUs): range (rows*cols
    rounded up, C, N), one result element per work-item. "row" (CPUs): range (rows or
    fewer, C, N), a work-item loops over whole rows: of windows for the forward, weight and
    tangent kernels (a window at a time: on PoCL as fast as or faster than sweeping the
    row tap by tap, 0.036 vs 0.051 ms for the digits CNN's second pool), of input elements
    for the gradient, which walks the windows' taps as col2im's row kernel does. (A
    gradient kernel for windows that do not overlap, each storing its shares into its own
    band of rows, measured 0.137 vs 0.127 ms on the first pool and 0.080 vs 0.101 on the
    second: not worth a kernel of its own.) Operands: x, y, k (the weights) and g (ct, or
    the tangent t), each read through its offset and four strides."""
    st, ct = C.storage_ctype(dtype), C.compute_ctype(dtype)
    geom = ", ".join(f"const int {g}" for g in _GEOM)
    name = f"clnp_nn_max_pool2d{'' if kind == 'fwd' else '_' + kind}{_SUFFIX[shape]}"
    rows, cols = ("H", "W") if kind == "grad" else ("OH", "OW")
    r, c = ("h", "w") if kind == "grad" else ("oh", "ow")
    ops = _MAX_POOL2D_OPERANDS[kind]
    params = [f"__global const {ct if p == 'k' else st} *{p}, const long {p}o, "
              f"const long {p}n, const long {p}c, const long {p}h, const long {p}w"
              for p in ops]
    params.append(f"__global {ct if kind == 'weight' else st} *out")
    body = _grad_body(dtype, shape) if kind == "grad" else _MAX_POOL2D_BODY[kind](dtype)
    if shape == "element":
        loop = [
            "  const int l = get_global_id(0);",
            f"  if (l >= {rows} * {cols}) return;",
            f"  const int {c} = l % {cols}, {r} = l / {cols};",
            f"  const long d = ((long)n * C + c) * ({rows} * {cols});",
            *["  " + line for line in body]]
    else:
        if kind != "grad":           # one window at a time along the row
            body = [f"for (int {c} = 0; {c} < {cols}; ++{c}) {{", f"  const int l = {c};",
                    *["  " + line for line in body], "}"]
        loop = [
            f"  for (int {r} = get_global_id(0); {r} < {rows}; {r} += get_global_size(0)) {{",
            f"    const long d = (((long)n * C + c) * {rows} + {r}) * {cols};",
            *["    " + line for line in body],
            "  }"]
    src = "\n".join(_prelude(dtype) + [
        f"// clnp_nn max_pool2d {kind} ({shape}) {dtype}",
        # ct * w + acc must round twice, as the composition's product and sum did
        "#pragma OPENCL FP_CONTRACT OFF",
        f"__kernel void {name}({geom},",
        "    " + ",\n    ".join(params) + ")",
        "{",
        "  const int c = get_global_id(1), n = get_global_id(2);",
        f"  const {ct} one = 1;",
        *[f"  const long {p}b = {p}o + n * {p}n + c * {p}c;" for p in ops],
        *loop,
        "}"])
    return src, name


def _render_max_pool2d(kind: str, dtype: np.dtype, shape: str) -> tuple[str, str, list]:
    src, name = _max_pool2d_source(kind, dtype, shape)
    return src, name, ([_I32] * len(_GEOM) + [None, _I64, _I64, _I64, _I64, _I64]
                       * len(_MAX_POOL2D_OPERANDS[kind]) + [None])


def _weight_dtype(dtype: np.dtype) -> np.dtype:
    """The tie weights' dtype: x's compute type (float32 for float16 and bfloat16)."""
    return np.dtype(np.float64 if dtype == np.float64 else np.float32)


def _max_pool2d_launch(kind: str, *inputs: Array, kernel: tuple, stride: tuple,
                       padding: tuple, dilation: tuple, out_hw: tuple) -> Array:
    """Runs kernel ``kind`` on ``inputs`` (read through their strides; x, the first, is
    (N, C, H, W)) and returns its new contiguous result."""
    x = inputs[0]
    N, C_, H, W = x.shape
    dtype = _weight_dtype(x.dtype) if kind == "weight" else x.dtype
    out = Array.empty((N, C_, H, W) if kind == "grad" else (N, C_) + tuple(out_hw), dtype,
                      x.device)
    if out.size == 0:
        return out
    _fits_int("max_pool2d", (N, C_, H * W, out_hw[0] * out_hw[1]))
    dev = x.device
    shape = "row" if _variant(dev) == "row" else "element"
    rows, cols = (H, W) if kind == "grad" else out_hw
    kern = dev.kernel((f"clnp_nn_max_pool2d_{kind}{_SUFFIX[shape]}", x.dtype),
                      lambda: _render_max_pool2d(kind, x.dtype, shape))
    if shape == "element":
        Ls = local_size(dev)
        gsize, lsize = (-(-(rows * cols) // Ls) * Ls, C_, N), (Ls, 1, 1)
    else:
        gsize, lsize = (_row_items(rows, C_ * N), C_, N), None
    args = []
    for a in inputs:
        args += [a._buf, a._offset, *a._strides]
    launch(dev, kern, gsize, lsize,
           *_geometry(C_, (H, W), kernel, out_hw, stride, padding, dilation), *args, out._buf)
    return out


@def_impl("nn_max_pool2d")
def max_pool2d_impl(x: Array, **p: Any) -> Array:
    return _max_pool2d_launch("fwd", x, **p)


@def_impl("nn_max_pool2d_weight")
def max_pool2d_weight_impl(x: Array, y: Array, **p: Any) -> Array:
    return _max_pool2d_launch("weight", x, y, **p)


@def_impl("nn_max_pool2d_grad")
def max_pool2d_grad_impl(x: Array, y: Array, w: Array, ct: Array, **p: Any) -> Array:
    return _max_pool2d_launch("grad", x, y, w, ct, **p)


@def_impl("nn_max_pool2d_tangent")
def max_pool2d_tangent_impl(x: Array, y: Array, w: Array, t: Array, **p: Any) -> Array:
    return _max_pool2d_launch("tangent", x, y, w, t, **p)


def max_pool2d(x: Any, *, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple,
               out_hw: tuple) -> Any:
    """The maximum of each window of ``x`` (N, C, H, W), as (N, C, OH, OW); arguments are
    checked by the caller (:func:`clnp_nn.functional.max_pool2d`)."""
    return primitive("nn_max_pool2d").bind(x, kernel=tuple(kernel), stride=tuple(stride),
                                           padding=tuple(padding), dilation=tuple(dilation),
                                           out_hw=tuple(out_hw))


def max_pool2d_weight(x: Any, y: Any, **p: Any) -> Any:
    """The tie weight 1 / count of each window of :func:`max_pool2d` at ``x`` (pooled value
    ``y``), in x's compute type (inf where y is NaN)."""
    return primitive("nn_max_pool2d_weight").bind(x, y, **p)


def max_pool2d_grad(x: Any, y: Any, w: Any, ct: Any, **p: Any) -> Any:
    """The gradient of :func:`max_pool2d` at ``x`` (pooled value ``y``, tie weights ``w``)
    for the cotangent ``ct`` (N, C, OH, OW): (N, C, H, W), ties sharing their window's."""
    return primitive("nn_max_pool2d_grad").bind(x, y, w, ct, **p)


def max_pool2d_tangent(x: Any, y: Any, w: Any, t: Any, **p: Any) -> Any:
    """The forward-mode derivative of :func:`max_pool2d` at ``x`` (pooled value ``y``, tie
    weights ``w``) along ``t`` (N, C, H, W): each window's ties averaged, (N, C, OH, OW)."""
    return primitive("nn_max_pool2d_tangent").bind(x, y, w, t, **p)


def _jvp_max_pool2d(primals: tuple, tangents: tuple, out: Any, **p: Any) -> Any:
    if tangents[0] is None:
        return None
    x = primals[0]
    return max_pool2d_tangent(x, out, max_pool2d_weight(x, out, **p), tangents[0], **p)


def _vjp_max_pool2d(ct: Any, primals: tuple, out: Any, **p: Any) -> tuple:
    x = primals[0]
    return (max_pool2d_grad(x, out, max_pool2d_weight(x, out, **p), ct, **p),)


JVP["nn_max_pool2d"] = _jvp_max_pool2d
VJP["nn_max_pool2d"] = _vjp_max_pool2d
# piecewise constant: derivative zero wherever it exists
JVP["nn_max_pool2d_weight"] = lambda primals, tangents, out, **p: None
VJP["nn_max_pool2d_weight"] = lambda ct, primals, out, **p: (None, None)
# linear in their last operand, piecewise constant in the others
JVP["nn_max_pool2d_grad"] = lambda primals, tangents, out, **p: (
    None if tangents[3] is None else max_pool2d_grad(*primals[:3], tangents[3], **p))
VJP["nn_max_pool2d_grad"] = lambda ct, primals, out, **p: (
    None, None, None, max_pool2d_tangent(*primals[:3], ct, **p))
JVP["nn_max_pool2d_tangent"] = lambda primals, tangents, out, **p: (
    None if tangents[3] is None else max_pool2d_tangent(*primals[:3], tangents[3], **p))
VJP["nn_max_pool2d_tangent"] = lambda ct, primals, out, **p: (
    None, None, None, max_pool2d_grad(*primals[:3], ct, **p))


def _batch_max_pool2d(prim: Any, vals: tuple, batched: tuple, size: int, **p: Any) -> Any:
    """The batch axis folds into N: (B, N, C, ., .) operands, unbatched ones broadcast."""
    from clnp_grad._vmap import _materialize
    vals = [_materialize(v, b, size) for v, b in zip(vals, batched)]
    N = vals[0].shape[1]
    out = prim.bind(*[xp.reshape(v, (size * N,) + tuple(v.shape[2:])) for v in vals], **p)
    return xp.reshape(out, (size, N) + tuple(out.shape[1:]))


for _name in ("nn_max_pool2d", "nn_max_pool2d_weight", "nn_max_pool2d_grad",
              "nn_max_pool2d_tangent"):
    BATCH[_name] = _batch_max_pool2d
