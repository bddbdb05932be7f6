"""Eager implementation of the ``rng_bits`` primitive: one launch of a Philox4x32-10 kernel
from ``clnp._codegen.random`` fills a new dense array.

``rng_bits`` is a pure function of its parameters (key, counter, shape, dtype, distribution,
``loc``/``scale``, device): the generator state lives on the host in ``clnp.random``, which
advances the counter by ``clnp._codegen.random.blocks(dtype, dist, n)`` after each call. It has
no array operands, so transformations treat it as a constant (non-differentiable).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._array import Array, c_strides
from ._codegen.random import RngSpec, dists_for, padded_len, render_rng
from ._eager import local_size
from ._prims import def_impl
from ._runtime import Device, launch

_M64 = (1 << 64) - 1


@def_impl("rng_bits")
def rng_bits(*, key: tuple[int, int], counter: int, shape: tuple[int, ...], dtype: np.dtype,
             dist: str, loc: Any, scale: Any, device: Device) -> Array:
    """Random values of ``shape``/``dtype`` drawn from blocks ``counter, counter + 1, ...``
    under ``key`` (two uint32 words). Floats: ``loc + scale * base`` with ``base`` of ``dist``
    (``uniform``, ``normal``, ``exponential``); integers (``integers``): ``loc`` plus a value
    in ``[0, scale)`` (``scale`` is the count of values, ``2**64`` at most); ``bits`` (uint32,
    uint64): raw Philox words."""
    if dist not in dists_for(dtype):
        raise TypeError(f"rng_bits: distribution {dist!r} is not available for {dtype}")
    device.check_dtype(dtype, "rng_bits")
    n = math.prod(shape)
    if n == 0:
        return Array.empty(shape, dtype, device)
    L = local_size(device)
    items, written = padded_len(dtype, dist, n, L)
    # the kernel writes whole work-groups of blocks: the array views the first n values
    out = Array(device.alloc(written * dtype.itemsize), 0, tuple(shape), c_strides(shape),
                dtype, device)
    spec = RngSpec(dtype)
    kernel = device.kernel((spec, dist), lambda: render_rng(spec, dist))
    if dtype.kind == "f":
        a, b = dtype.type(loc), dtype.type(scale)
    else:
        a, b = int(loc) & _M64, int(scale) & _M64
    c = int(counter)
    launch(device, kernel, (items,), (L,), np.uint32(key[0]), np.uint32(key[1]),
           np.uint64(c & _M64), np.uint64((c >> 64) & _M64), a, b, out._buf)
    return out
