"""clnp_nn: layers, optimizers, AMP and data parallelism on top of clnp and clnp_grad.

Not implemented yet (see docs/roadmap.md).
"""

from . import parallel  # noqa: E402,F401  (pmap, collectives, MPI: docs/parallel.md)
