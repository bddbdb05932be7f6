"""clnp_nn: layers, optimizers, AMP and data parallelism on top of clnp and clnp_grad.

Not implemented yet (see docs/roadmap.md).
"""

from clnp._namespace import hide_imports as _hide_imports

# every public name goes here; dir(clnp_nn) lists only these (clnp/_namespace.py)
__all__: list[str] = []

__dir__ = _hide_imports(__name__)
