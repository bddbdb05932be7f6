"""Helpers shared by the layers: key splitting and constructor argument checks."""
from __future__ import annotations

from typing import Any

import numpy as np


def need_key(cls: str, key: Any) -> None:
    """TypeError naming the layer ``cls`` unless ``key`` is a random key (not the error of
    ``clnp_grad.random.split`` deep inside the initialisation)."""
    if key is None:
        raise TypeError(f"{cls}: key= is required to initialise the parameters (a "
                        f"clnp_grad.random key, e.g. clnp_grad.random.key(0))")
    from clnp_grad.random import _check_key
    _check_key(cls, key)


def split(key: Any, n: int) -> list[Any]:
    """``n`` independent keys from ``key`` (a list, so each is a (2,) key)."""
    from clnp_grad import random
    ks = random.split(key, n)
    return [ks[i] for i in range(n)]


def positive_int(cls: str, name: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v <= 0:
        raise ValueError(f"{cls}: {name} must be a positive int, got {v!r}")
    return int(v)


def size_tuple(cls: str, name: str, v: Any, n: int, minimum: int = 1) -> tuple[int, ...]:
    from ..functional._checks import int_tuple
    return int_tuple(cls, name, v, n, minimum=minimum)
