"""clnp_nn: optimizers, mixed precision, checkpoints and data loading on top of clnp and
clnp_grad (docs/nn.md).

* :mod:`clnp_nn.optim` — optax's optimizers, transformations and schedules.
* :mod:`clnp_nn.amp` — jmp-style mixed-precision policies and loss scaling.
* :func:`clnp_nn.save` / :func:`clnp_nn.load` — checkpoints of any pytree (.npz, .safetensors).
* :mod:`clnp_nn.data` — ``DataLoader`` with background uploads.
* :mod:`clnp_nn.parallel` — ``pmap``, collectives and MPI processes (docs/parallel.md).
"""
from . import amp, data, optim
from .checkpoint import load, save
from . import parallel  # noqa: E402  (pmap, collectives, MPI: docs/parallel.md)

__all__ = ["optim", "amp", "data", "save", "load", "parallel"]

from clnp._namespace import hide_imports_below as _hide_imports_below  # noqa: E402

_hide_imports_below(__name__)
