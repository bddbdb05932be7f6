"""clnp_nn: layers, losses, optimizers, mixed precision, checkpoints and data loading on top
of clnp and clnp_grad (docs/nn.md).

* :mod:`clnp_nn.functional` — PyTorch's functional API (activations, convolutions, pooling,
  normalisation, dropout, embedding, attention, losses).
* :mod:`clnp_nn.modules` (also at the top level) — layers as immutable pytrees, Equinox
  style, with ``partition``/``combine`` and the ``is_array``/``is_inexact_array`` filters.
* :mod:`clnp_nn.optim` — optax's optimizers, transformations and schedules.
* :mod:`clnp_nn.amp` — jmp-style mixed-precision policies and loss scaling.
* :func:`clnp_nn.save` / :func:`clnp_nn.load` — checkpoints of any pytree (.npz, .safetensors).
* :mod:`clnp_nn.data` — ``DataLoader`` with background uploads.
* :mod:`clnp_nn.parallel` — ``pmap``, collectives and MPI processes (docs/parallel.md).
"""
from . import amp, data, optim
from .checkpoint import load, save
from . import functional, modules, parallel
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all

__all__ = ["optim", "amp", "data", "save", "load", "functional", "modules",
           "parallel"] + list(_modules_all)

from clnp._namespace import hide_imports_below as _hide_imports_below  # noqa: E402
from clnp._runtime.user_frames import register_library_package as _register_library_package  # noqa: E402

# frames in clnp_nn are library code for error messages and warnings
_register_library_package(__file__)

_hide_imports_below(__name__)
