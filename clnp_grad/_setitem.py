"""``x[key] = value`` on traced arrays: a functional update that rebinds the tracer.

Under a transformation arrays are values, so assignment builds a new value (``where`` over the
positions the key selects, filled by a scatter) and the tracer object takes that value over —
the same observable behaviour as NumPy's in-place write for the name ``x``. Writing through a
*view* of a traced array cannot update the array it came from, so it raises instead.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import clnp as xp
from clnp._core.prims import EVAL, primitive, set_interpreter



def _is_traced(v: Any) -> bool:
    return getattr(v, "_is_clnp_tracer", False)


def functional_setitem(x: Any, key: Any, value: Any) -> Any:
    """The value of ``x`` after ``x[key] = value``."""
    keys = key if isinstance(key, tuple) else (key,)
    if any(_is_traced(k) for k in keys):
        if len(keys) == 1 and keys[0].dtype == xp.bool and tuple(keys[0].shape) == x.shape:
            return xp.where(keys[0], _as_value(value, x), x)
        raise NotImplementedError("x[idx] = v on a traced array needs concrete indices (a "
                                  "traced boolean mask of x's full shape is also accepted)")
    # positions selected by the key, computed from an index grid: they depend on x's shape
    # and the concrete key only, so they are eager work even under jit (staged, the grid's
    # own index writes would meet this function again with traced indices)
    with set_interpreter(EVAL):
        grid = xp.reshape(xp.arange(x.size, device=x.device), x.shape)
        sel = grid[key]
        flat_sel = xp.reshape(sel, (-1,))
        last = _last_writes(flat_sel)
        hit = xp.zeros((x.size,), dtype=xp.bool, device=x.device)
        hit[flat_sel] = True
    v = _as_value(value, x)
    if tuple(getattr(v, "shape", ())) != tuple(sel.shape):
        v = xp.broadcast_to(v, tuple(sel.shape))
    v = xp.reshape(v, (-1,))
    v = xp.where(last, v, xp.zeros((), dtype=v.dtype, device=x.device))
    flat = xp.reshape(x, (-1,))
    zeros = xp.zeros((x.size,), dtype=x.dtype, device=x.device)
    placed = primitive("scatter_add").bind(zeros, v, flat_sel, in_bounds=True)
    return xp.reshape(xp.where(hit, placed, flat), x.shape)


def _last_writes(flat_sel: Any) -> Any:
    """Which entries of ``flat_sel`` are the last to name their position: a position the key
    names twice keeps the last value written (NumPy's behaviour in practice), on every device.
    A stable sort groups repeats in write order; the permutation has no repeats, so marking
    through it is deterministic, unlike an eager scatter of repeated indices. The key is
    concrete, so this is eager work."""
    m = flat_sel.shape[0]
    if m < 2:
        return xp.ones((m,), dtype=xp.bool, device=flat_sel.device)
    order = xp.argsort(flat_sel, stable=True)
    srt = flat_sel[order]
    last = xp.concat([srt[1:] != srt[:-1], xp.ones((1,), dtype=xp.bool, device=srt.device)])
    keep = xp.zeros((m,), dtype=xp.bool, device=srt.device)
    keep[order] = last
    return keep


def _as_value(value: Any, x: Any) -> Any:
    if _is_traced(value) or isinstance(value, xp.Array):
        return value if value.dtype == x.dtype else xp.astype(value, x.dtype)
    if isinstance(value, (bool, int, float, complex, np.generic)):
        return xp.full((), value, dtype=x.dtype, device=x.device)
    return xp.asarray(value, dtype=x.dtype, device=x.device)
