"""Render the one-launch ``concatenate``: every input copied into its place in one kernel.

The output is C-contiguous and seen as ``(outer, axis, inner)``: the dims before the joined
axis, the axis, the dims after it. Each input is read in place by its own element offset and
strides over those three dims (so every input's dims before and after the axis must merge),
and begins at ``start_j`` along the axis. Work-item ``g`` writes output element ``g``: it
finds the input whose range along the axis holds its position and copies that element's
bits (inputs of the output's dtype: no conversion; ``ctypes.bits_ctype`` carries them, as
it does for gather and scatter).

One launch instead of one copy per input: a jitted step's concatenations (the gradient of
a fused QKV projection joins three pieces) are each one launch, where launches cost more
than the copying (NVIDIA's OpenCL: ~10 us to enqueue one).

Arguments: ``long n, long n_axis, long n_inner``, then per input ``j``: ``a_j, long o_j,
long so_j, long sa_j, long si_j, long start_j``, then ``out``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import ctypes as C
# Inputs of one launch: their arguments (48 bytes each) stay within the 1,024 bytes of
# kernel parameters every OpenCL device accepts
MAX_INPUTS = 16


@dataclass(frozen=True)
class ConcatenateSpec:
    dtype: np.dtype      # of the output and of every input
    n_inputs: int


def render_concatenate(spec: ConcatenateSpec) -> tuple[str, str, list]:
    """Source, kernel name and argument dtypes of the one-launch concatenation (module
    docstring).

    Examples
    --------
    >>> import numpy as np
    >>> from clnp._kernels.concatenate import ConcatenateSpec, render_concatenate
    >>> src, name, types = render_concatenate(ConcatenateSpec(np.dtype(np.float32), 2))
    >>> name, len(types)
    ('clnp_concatenate', 16)
    """
    k = spec.n_inputs
    ts = C.bits_ctype(spec.dtype)
    i64 = np.dtype(np.int64)
    params = ["const long n", "const long n_axis", "const long n_inner"]
    types: list = [i64] * 3
    for j in range(k):
        params += [f"__global const {ts} *a{j}", f"const long o{j}", f"const long so{j}",
                   f"const long sa{j}", f"const long si{j}", f"const long start{j}"]
        types += [None] + [i64] * 5
    params.append(f"__global {ts} *out")
    types.append(None)
    name = "clnp_concatenate"
    lines = [f"// clnp concatenate {spec.dtype.name} inputs={k}"]
    if C.uses_fp64([spec.dtype]):
        lines.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    lines += [f"__kernel void {name}(" + ",\n    ".join(params) + ")\n{",
             "  const long g = get_global_id(0);",
             "  if (g >= n) return;",
             "  const long i = g % n_inner, r = g / n_inner;",
             "  const long p = r % n_axis, o = r / n_axis;"]
    # the last input whose range begins at or before p holds it (inputs in axis order)
    for j in reversed(range(k)):
        cond = f"if (p >= start{j}) " if j else ""
        prefix = "  " if j == k - 1 else "  else "
        lines.append(f"{prefix}{cond}out[g] = a{j}[o{j} + o * so{j} + (p - start{j}) * sa{j}"
                     f" + i * si{j}];")
    lines.append("}")
    return "\n".join(lines), name, types
