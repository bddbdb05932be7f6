"""Render ``iota``: ``out[i] = start + i * step`` in one kernel, stored in the output dtype.

``arange`` and ``linspace`` fill their results with it. The value is computed in the compute
dtype (the output's own for floats, ``long``/``ulong`` for integers, ``float`` for the 16-bit
floats) as ``i`` converted, times ``step``, plus ``start``: two roundings, in NumPy's order
(``arange(n) * step + start``), with ``FP_CONTRACT OFF`` so the compiler does not fuse them
into one. ``linspace`` stores into a narrower dtype than it computes in (NumPy computes in
float64 and casts) and writes ``stop`` exactly at the last index (``has_last``). The 16-bit
floats and complex dtypes keep the elementwise ops (``clnp._core.eager.iota``).

One program instead of the three to five the same fill took as separate conversion,
multiply, add, fill and conversion kernels (issue #27: a script's first run pays about 0.34 s
of PoCL's compiler per program).

Arguments: ``out, n, start, step, has_last, last``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import ctypes as C


@dataclass(frozen=True)
class IotaSpec:
    compute: np.dtype     # the arithmetic
    out: np.dtype         # the stored values


def render_iota(spec: IotaSpec) -> tuple[str, str, list]:
    """(source, kernel name, scalar argument dtypes) of the fill for ``spec``.

    Examples
    --------
    >>> import numpy
    >>> from clnp._kernels.iota import IotaSpec, render_iota
    >>> src, name, args = render_iota(IotaSpec(numpy.dtype("float64"), numpy.dtype("float32")))
    >>> name, "FP_CONTRACT OFF" in src, "(float)" in src
    ('clnp_iota', True, True)
    """
    ct = C.compute_ctype(spec.compute)
    value = C.convert("v", spec.compute, spec.out, to_storage=True)
    head = ["#pragma OPENCL FP_CONTRACT OFF"]
    if C.uses_fp64([spec.compute, spec.out]):
        head.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    body = f"""
__kernel void clnp_iota(__global {C.storage_ctype(spec.out)} *out, const ulong n,
                        const {ct} start, const {ct} step, const int has_last,
                        const {ct} last)
{{
  const ulong i = get_global_id(0);
  if (i >= n) return;
  const {ct} v = (has_last && i == n - 1) ? last : start + ({ct})i * step;
  {C.store(spec.out, "out", "i", value)}
}}
"""
    src = "\n".join(head) + body      # real dtypes of 32 bits and more (eager.iota)
    arg = C.scalar_arg_dtype(spec.compute)
    return src, "clnp_iota", [None, np.uint64, arg, arg, np.int32, arg]
