"""Argument checks shared by ``clnp_nn.functional``: every error names the function, the
argument and the shapes or dtypes involved, and is raised before any kernel runs."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from clnp._core.dtypes import kind as dkind


def is_array(v: Any) -> bool:
    """A clnp array or a traced one (anything with shape and dtype, not a NumPy scalar)."""
    return hasattr(v, "shape") and hasattr(v, "dtype") and not isinstance(v, (np.ndarray,
                                                                           np.generic))


def array(fn: str, name: str, v: Any, *, ndim: int | Sequence[int] | None = None,
          kinds: str = "f") -> Any:
    """``v`` checked to be a clnp array of one of ``kinds`` and (optionally) rank(s) ``ndim``."""
    if isinstance(v, np.ndarray):
        raise TypeError(f"{fn}: argument '{name}' is a NumPy array; move it to the device with "
                        f"clnp.asarray first")
    if not is_array(v):
        raise TypeError(f"{fn}: argument '{name}' must be a clnp array, got "
                        f"{type(v).__name__}")
    if dkind(v.dtype) not in kinds:
        want = {"f": "a real floating-point", "iu": "an integer", "b": "a boolean",
                "fb": "a floating-point or boolean"}.get(kinds, f"a {kinds!r}-kind")
        raise TypeError(f"{fn}: argument '{name}' must be {want} array, got dtype {v.dtype}")
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if v.ndim not in allowed:
            if isinstance(ndim, range):
                ranks = f"at least {ndim.start}-D"
            else:
                ranks = " or ".join(str(a) for a in allowed) + "-D"
            raise ValueError(f"{fn}: argument '{name}' must be {ranks}, got shape "
                             f"{tuple(v.shape)}")
    return v


def same_dtype(fn: str, named: dict[str, Any]) -> None:
    """Float operands must share one dtype (no silent promotion inside a layer)."""
    items = [(k, v) for k, v in named.items() if v is not None]
    if not items:
        return
    d0 = items[0][1].dtype
    for k, v in items[1:]:
        if v.dtype != d0:
            desc = ", ".join(f"'{n}' {a.dtype}" for n, a in items)
            raise TypeError(f"{fn}: arguments must share one floating dtype, got {desc}; "
                            f"cast with astype")


def same_device(fn: str, named: dict[str, Any]) -> None:
    items = [(k, v) for k, v in named.items() if v is not None and hasattr(v, "device")]
    if not items:
        return
    d0 = items[0][1].device
    for k, v in items[1:]:
        if v.device != d0:
            raise ValueError(f"{fn}: argument '{k}' is on {v.device} but '{items[0][0]}' is on "
                             f"{d0}; move one with to_device()")


def int_tuple(fn: str, name: str, v: Any, n: int, *, minimum: int = 1) -> tuple[int, ...]:
    """An int or a length-``n`` sequence of ints, each ``>= minimum``, as an ``n``-tuple."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        out = (int(v),) * n
    elif isinstance(v, (tuple, list)) and len(v) == n and all(
            isinstance(e, (int, np.integer)) and not isinstance(e, bool) for e in v):
        out = tuple(int(e) for e in v)
    else:
        raise TypeError(f"{fn}: '{name}' must be an int or a tuple of {n} ints, got {v!r}")
    if any(e < minimum for e in out):
        raise ValueError(f"{fn}: '{name}' must be >= {minimum}, got {v!r}")
    return out


def reduction(fn: str, reduction: Any) -> str:
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{fn}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    return reduction


def probability(fn: str, name: str, p: Any) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)):
        raise TypeError(f"{fn}: '{name}' must be a Python number, got {type(p).__name__}")
    if not 0.0 <= float(p) <= 1.0:
        raise ValueError(f"{fn}: '{name}' must be in [0, 1], got {p}")
    return float(p)


def normalized_shape(fn: str, x: Any, shape: Any) -> tuple[int, ...]:
    """``normalized_shape`` (an int or a tuple) matching the trailing dims of ``x``."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    if not isinstance(shape, (tuple, list)) or not all(
            isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in shape):
        raise TypeError(f"{fn}: normalized_shape must be an int or a tuple of ints, got "
                        f"{shape!r}")
    shape = tuple(int(s) for s in shape)
    if not shape or len(shape) > x.ndim or tuple(x.shape[x.ndim - len(shape):]) != shape:
        raise ValueError(f"{fn}: normalized_shape {shape} must be the trailing dims of the "
                         f"input, whose shape is {tuple(x.shape)}")
    return shape


def param_shape(fn: str, name: str, v: Any, shape: tuple[int, ...], x: Any) -> None:
    """An optional parameter array of exactly ``shape`` and ``x``'s dtype."""
    if v is None:
        return
    array(fn, name, v)
    if tuple(v.shape) != tuple(shape):
        raise ValueError(f"{fn}: '{name}' must have shape {tuple(shape)} for an input of shape "
                         f"{tuple(x.shape)}, got {tuple(v.shape)}")
    if v.dtype != x.dtype:
        raise TypeError(f"{fn}: '{name}' has dtype {v.dtype} but the input has {x.dtype}; "
                        f"cast with astype")
