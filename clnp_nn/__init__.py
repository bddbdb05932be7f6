"""clnp_nn: layers, losses and training utilities on top of clnp and clnp_grad.

- ``clnp_nn.functional``: PyTorch's functional API (activations, convolutions, pooling,
  normalisation, dropout, embedding, attention, losses).
- ``clnp_nn.modules`` (also at the top level): layers as immutable pytrees, Equinox style,
  with ``partition``/``combine`` and the ``is_array``/``is_inexact_array`` filters.
"""
from __future__ import annotations

from . import functional
from . import modules
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all

__all__ = ["functional", "modules"] + list(_modules_all)
