"""Arguments of the transformations as JAX takes them: Python scalars and NumPy values.

``grad(f)(3.0)``: a Python ``bool``/``int``/``float``/``complex`` leaf becomes a 0-d array of
``asarray``'s dtype for it (the default float for a float) that is *weakly typed*: the tracer
made for it promotes like the Python scalar (NEP 50), so ``x * w`` keeps a float32 ``w``'s
dtype. NumPy arrays and scalars become clnp arrays (strongly typed), next to the first clnp
array among the arguments (else on the default device). Lists and tuples are pytrees, as in
JAX: their leaves are converted one by one.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

import clnp as xp
from clnp._core.dtypes import kind as dkind

_PY_SCALARS = (bool, int, float, complex)


def _device(flat: Sequence[Any]) -> Any:
    for v in flat:
        if hasattr(v, "device") and hasattr(v, "shape") and not isinstance(v, np.ndarray):
            return v.device
    return xp.default_device()


def lift(flat: Sequence[Any], device: Any = None) -> tuple[list[Any], list[bool]]:
    """The leaves ``flat`` as arrays (or tracers, unchanged) and, per leaf, whether it is
    weakly typed (a Python scalar, or a tracer of one)."""
    device = device or _device(flat)
    out, weak = [], []
    for v in flat:
        if isinstance(v, _PY_SCALARS) and not isinstance(v, np.generic):
            out.append(xp.asarray(v, device=device))
            weak.append(True)
        elif isinstance(v, (np.ndarray, np.generic)):
            out.append(xp.asarray(v, device=device))
            weak.append(False)
        else:
            out.append(v)
            weak.append(getattr(v, "weak_type", False) is True)   # a weak tracer stays weak
    return out, weak


def lift_tree(tree: Any, device: Any = None) -> Any:
    """``tree`` with its Python scalar and NumPy leaves converted by :func:`lift` (the weak
    flags dropped: for functions that compute with the values themselves)."""
    from ._tree import tree_flatten, tree_unflatten
    flat, tdef = tree_flatten(tree)
    return tree_unflatten(tdef, lift(flat, device)[0])


def check_differentiable(flat: Sequence[Any], names: Callable[[], Sequence[str]],
                         what: str) -> None:
    """TypeError unless every leaf is an array of a floating dtype (JAX's rule: integer and
    boolean inputs have no derivative); names the argument. ``names()`` gives the leaves'
    names, asked for only when one fails (a call that passes formats none)."""
    for x in flat:
        if not (hasattr(x, "shape") and hasattr(x, "dtype")) or dkind(x.dtype) not in "fc":
            break
    else:
        return
    for x, name in zip(flat, names()):
        if not (hasattr(x, "shape") and hasattr(x, "dtype")):
            raise TypeError(f"{what}: {name} must be an array, a Python scalar or a pytree of "
                            f"them; got {type(x).__name__}")
        if dkind(x.dtype) not in "fc":
            raise TypeError(f"{what} requires real- or complex-valued inputs (a floating "
                            f"dtype) to differentiate with respect to, but {name} has dtype "
                            f"{x.dtype}; pass a float (3.0, not 3), cast with astype, or "
                            f"leave the argument out of argnums")


def check_callable(what: str, fun: Any, name: str = "fun") -> None:
    """TypeError naming the transformation ``what`` when ``fun`` is not callable (JAX:
    "Expected a callable value"), raised when the transformation is applied, not at the
    first call deep inside it."""
    if not callable(fun):
        shown = repr(fun)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise TypeError(f"{what}: {name} must be callable; got {type(fun).__name__} {shown}")


def check_argnums(what: str, argnums: Any, name: str = "argnums") -> None:
    """TypeError naming ``what`` unless ``argnums`` is an int or a sequence of ints (the
    range is checked against the arguments at the call)."""
    nums = (argnums,) if not isinstance(argnums, (tuple, list)) else tuple(argnums)
    for a in nums:
        if isinstance(a, bool) or not isinstance(a, int):
            raise TypeError(f"{what}: {name} must be an int or a sequence of ints; got "
                            f"{argnums!r}")
