"""``clnp_nn.modules``: layers as immutable pytrees (Equinox's design) with PyTorch's names,
parameter shapes and default initialisation. See docs/nn.md, "Modules and
state"."""
from __future__ import annotations

from . import init
from ._module import (Module, buffer, combine, is_array, is_inexact_array, named_leaves,
                      partition, static, trainable_mask)
from .activation import GELU, ReLU, SiLU, Sigmoid, Tanh
from .attention import MultiheadAttention
from .container import Flatten, Lambda, Sequential
from .conv import Conv1d, Conv2d, ConvTranspose2d
from .dropout import Dropout
from .embedding import Embedding
from .linear import Identity, Linear
from .normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm, RMSNorm
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d

__all__ = ["Module", "static", "buffer", "is_array", "is_inexact_array", "partition", "combine",
           "trainable_mask", "named_leaves", "init",
           "Linear", "Identity", "Conv1d", "Conv2d", "ConvTranspose2d", "MaxPool2d",
           "AvgPool2d", "AdaptiveAvgPool2d", "BatchNorm1d", "BatchNorm2d", "LayerNorm",
           "GroupNorm", "RMSNorm", "Dropout", "Embedding", "MultiheadAttention", "ReLU", "GELU",
           "SiLU", "Sigmoid", "Tanh", "Flatten", "Lambda", "Sequential"]
