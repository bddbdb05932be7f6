"""The axis environment: which mapped axes are bound (``vmap(..., axis_name=...)``,
``clnp_nn.parallel.pmap``), with their sizes, while a mapped function runs. Collectives
(clnp_grad/_collectives.py) look their axis up here; ``vmap`` binds one.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Hashable, Iterator, NamedTuple


class AxisFrame(NamedTuple):
    name: Hashable
    size: int
    kind: str           # "vmap" or "pmap"


_AXES: ContextVar[tuple[AxisFrame, ...]] = ContextVar("clnp_axis_env", default=())


@contextmanager
def axis_frame(name: Hashable, size: int, kind: str) -> Iterator[None]:
    """Bind the mapped axis ``name`` of ``size`` participants while the block runs."""
    token = _AXES.set(_AXES.get() + (AxisFrame(name, int(size), kind),))
    try:
        yield
    finally:
        _AXES.reset(token)


def lookup_axis(name: Hashable, what: str) -> AxisFrame:
    """The innermost frame binding ``name``; NameError naming the bound axes otherwise."""
    for f in reversed(_AXES.get()):
        if f.name == name:
            return f
    bound = [f.name for f in _AXES.get()]
    raise NameError(f"{what}: unbound axis name {name!r}; collectives are valid only inside "
                    f"clnp_nn.parallel.pmap(..., axis_name=...) or clnp_grad.vmap(..., "
                    f"axis_name=...) naming that axis (bound here: {bound or 'none'})")
