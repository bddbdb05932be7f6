"""Eager implementation of the ``rng_bits`` primitive: one launch of a Philox4x32-10 kernel
from ``clnp._kernels.random`` fills a new dense array.

``rng_bits`` is a pure function of its parameters (key, counter, shape, dtype, distribution,
``loc``/``scale``, device): the generator state lives on the host in ``clnp.random``, which
advances the counter by ``clnp._kernels.random.blocks(dtype, dist, n)`` after each call. It has
no array operands, so transformations treat it as a constant (non-differentiable).

``random_bits`` is the same kernel with the key read from a uint32 device array operand (shape
``batch + (2,)``, or ``batch + (4,)`` with a 64-bit counter offset), so that the key can be a
traced value of ``clnp_grad.random``; leading batch dims give one independent draw per key,
which makes its ``vmap`` rule the identity.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._runtime.deferred import deferred_import
from .._core.array import Array, c_strides
from .._core.eager import contiguous_copy, local_size
from .._core.prims import def_impl
from .._runtime.device import Device, launch

# run at first use, not at import clnp (clnp._runtime.deferred)
_random_kernels = deferred_import("clnp._kernels.random")

_M64 = (1 << 64) - 1


@def_impl("rng_bits")
def rng_bits(*, key: tuple[int, int], counter: int, shape: tuple[int, ...], dtype: np.dtype,
             dist: str, loc: Any, scale: Any, device: Device) -> Array:
    """Random values of ``shape``/``dtype`` drawn from blocks ``counter, counter + 1, ...``
    under ``key`` (two uint32 words). Floats: ``loc + scale * base`` with ``base`` of ``dist``
    (``uniform``, ``normal``, ``exponential``); integers (``integers``): ``loc`` plus a value
    in ``[0, scale)`` (``scale`` is the count of values, ``2**64`` at most); ``bits`` (uint32,
    uint64): raw Philox words."""
    if dist not in _random_kernels.dists_for(dtype):
        raise TypeError(f"rng_bits: distribution {dist!r} is not available for {dtype}")
    device.check_dtype(dtype, "rng_bits")
    n = math.prod(shape)
    if n == 0:
        return Array.empty(shape, dtype, device)
    L = local_size(device)
    items, written = _random_kernels.padded_len(dtype, dist, n, L)
    # the kernel writes whole work-groups of blocks: the array views the first n values
    out = Array(device.alloc(written * dtype.itemsize), 0, tuple(shape), c_strides(shape),
                dtype, device)
    spec = _random_kernels.RngSpec(dtype)
    kernel = device.kernel((spec, dist), lambda: _random_kernels.render_rng(spec, dist))
    if dtype.kind == "f":
        a, b = dtype.type(loc), dtype.type(scale)
    else:
        a, b = int(loc) & _M64, int(scale) & _M64
    c = int(counter)
    launch(device, kernel, (items,), (L,), np.uint32(key[0]), np.uint32(key[1]),
           np.uint64(c & _M64), np.uint64((c >> 64) & _M64), a, b, out._buf)
    return out


@def_impl("random_bits")
def random_bits(key: Array, *, shape: tuple[int, ...], dtype: np.dtype, dist: str, loc: Any,
                scale: Any, counter: int) -> Array:
    """``rng_bits`` under the key(s) in the uint32 array ``key`` of shape ``batch + (2,)``
    (or ``batch + (4,)``: key, then a 64-bit counter offset as two words, low first, added to
    ``counter``). The result has shape ``batch + shape``; its row for each key holds the
    values ``rng_bits`` gives for that key and counter."""
    if dist not in _random_kernels.dists_for(dtype):
        raise TypeError(f"random_bits: distribution {dist!r} is not available for {dtype}")
    if key.dtype != np.uint32 or key.ndim < 1 or key.shape[-1] not in (2, 4):
        raise TypeError(f"random_bits: key must be uint32 of shape (..., 2) or (..., 4); got "
                        f"{key.dtype} of shape {key.shape}")
    device = key.device
    device.check_dtype(dtype, "random_bits")
    batch, shape = tuple(key.shape[:-1]), tuple(shape)
    n, rows = math.prod(shape), math.prod(batch)
    if n == 0 or rows == 0:
        return Array.empty(batch + shape, dtype, device)
    if not key.is_contiguous or key._offset:
        key = contiguous_copy(key)
    L = local_size(device)
    items, written = _random_kernels.padded_len(dtype, dist, n, L)
    # whole work-groups per row: each row starts ``written`` values after the previous one
    strides = tuple(s * written for s in c_strides(batch)) + c_strides(shape)
    out = Array(device.alloc(rows * written * dtype.itemsize), 0, batch + shape, strides,
                dtype, device)
    spec = _random_kernels.RngSpec(dtype, True)
    kernel = device.kernel((spec, dist), lambda: _random_kernels.render_rng(spec, dist))
    if dtype.kind == "f":
        a, b = dtype.type(loc), dtype.type(scale)
    else:
        a, b = int(loc) & _M64, int(scale) & _M64
    c = int(counter)
    launch(device, kernel, (items, rows), (L, 1), key._buf, np.uint32(key.shape[-1]),
           np.uint64(c & _M64), np.uint64((c >> 64) & _M64), np.uint64(written), a, b, out._buf)
    return out
