"""``clnp_nn.functional``: PyTorch's functional layer API over clnp arrays.

PyTorch's names and layouts (NCHW activations, OIHW weights, ``linear`` weights
``(out, in)``), with the Array API's ``axis=`` where PyTorch says ``dim=``. Every function is
written with the clnp namespace and clnp_grad primitives, so it is differentiable
(``clnp_grad.grad``), batches under ``clnp_grad.vmap`` and works under ``clnp_grad.jit``.
Arguments are checked before any kernel runs; errors name the function, the argument and the
shapes. See docs/nn.md.
"""
from __future__ import annotations

from .activation import gelu, log_softmax, relu, sigmoid, silu, softmax, softplus, tanh
from .attention import scaled_dot_product_attention
from .conv import conv1d, conv2d, conv_transpose2d
from .dropout import dropout
from .embedding import embedding
from .linear import linear
from .loss import (binary_cross_entropy_with_logits, cross_entropy, l1_loss, mse_loss,
                   nll_loss)
from .normalization import batch_norm, group_norm, layer_norm, rms_norm
from .pooling import adaptive_avg_pool2d, avg_pool2d, max_pool2d
from ._conv_algo import autotune_conv2d, set_conv_algorithm
from ._kernels import erf

__all__ = ["relu", "gelu", "silu", "sigmoid", "softplus", "softmax", "log_softmax", "tanh",
           "linear", "conv1d", "conv2d", "conv_transpose2d", "max_pool2d", "avg_pool2d",
           "adaptive_avg_pool2d", "batch_norm", "layer_norm", "group_norm", "rms_norm",
           "dropout", "embedding", "scaled_dot_product_attention", "cross_entropy",
           "nll_loss", "mse_loss", "l1_loss", "binary_cross_entropy_with_logits", "erf",
           "autotune_conv2d", "set_conv_algorithm"]
