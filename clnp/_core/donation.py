"""Donated arrays: an Array whose buffer a compiled function took over for its output.

``clnp_grad.jit(f, donate_argnums=...)`` may write an output into the buffer of a donated
argument (an optimizer's ``p - lr * g`` then needs no new allocation). The caller's Array
object is then turned into a ``DonatedArray``: every use raises a RuntimeError that says
what happened, instead of reading the output's values through the old name (JAX raises
"Array has been deleted" in the same place).
"""
from __future__ import annotations

import sys
from typing import Any

from .array import Array

_MESSAGE = ("this array was donated to a jitted function (donate_argnums) and its buffer now "
            "holds that call's output, so it can no longer be used; use the function's "
            "output instead, or do not donate the argument")


class DonatedArray(Array):
    """An Array given up through ``donate_argnums``: any use raises RuntimeError."""

    __slots__ = ()

    def __getattribute__(self, name: str) -> Any:
        if name == "__class__":
            return object.__getattribute__(self, name)
        raise RuntimeError(_MESSAGE)

    def __repr__(self) -> str:
        return "<clnp array donated to a jitted function (deleted)>"

    __str__ = __repr__

    def __bool__(self) -> bool:
        raise RuntimeError(_MESSAGE)

    def __len__(self) -> int:
        raise RuntimeError(_MESSAGE)


def sole_owner(a: Array) -> bool:
    """Whether ``a`` is the only Array on its buffer (no view of it exists anywhere), so the
    buffer can be overwritten without changing any other array's values. CPython counts the
    references: the slot of ``a`` and the argument of ``getrefcount``."""
    return sys.getrefcount(a._buf) <= 2


def invalidate(a: Array) -> None:
    """Turn ``a`` into a DonatedArray and drop its reference to the buffer."""
    object.__setattr__(a, "_buf", None)
    a.__class__ = DonatedArray
