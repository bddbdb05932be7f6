"""float16/bfloat16 inputs compute in float32: the widening and the one final rounding.

Devices without ``cl_khr_fp16`` (and every device for bfloat16) have no half-precision
arithmetic; clnp stores half-precision values and computes in float32 anyway. Functions whose
intermediate results would be rounded between operations (a product and its bias, softmax's
exponentials and sum, a loss) widen their half-precision inputs once, compute in float32 and
round only the result, as PyTorch's CPU kernels and JAX's ``preferred_element_type`` do.
"""
from __future__ import annotations

from typing import Any

import clnp as xp

__all__ = ["is_half", "wide", "narrow"]


def is_half(dtype: Any) -> bool:
    """Whether ``dtype`` is float16 or bfloat16."""
    return dtype in (xp.float16, xp.bfloat16)


def wide(x: Any) -> Any:
    """``x`` in float32 when it is float16/bfloat16, else ``x`` itself (``None`` passes)."""
    return x.astype(xp.float32) if x is not None and is_half(x.dtype) else x


def narrow(y: Any, dtype: Any) -> Any:
    """``y`` in ``dtype``, without a copy when it already is."""
    return y if y.dtype == dtype else y.astype(dtype)
