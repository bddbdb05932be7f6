"""``linear``: the affine map of a fully connected layer, PyTorch's layout (weight ``(out, in)``)."""
from __future__ import annotations

from typing import Any

import clnp as xp

from . import _checks as chk
from ._precision import narrow, wide

__all__ = ["linear"]


def linear(x: Any, weight: Any, bias: Any = None) -> Any:
    """``x @ weight.T + bias``.

    Parameters
    ----------
    x : Array
        Input of shape ``(..., in_features)``.
    weight : Array
        Shape ``(out_features, in_features)``.
    bias : Array, optional
        Shape ``(out_features,)``.

    Returns
    -------
    Array
        Shape ``(..., out_features)``.

    Raises
    ------
    TypeError
        If an argument is not a real floating clnp array, or dtypes differ.
    ValueError
        If the shapes do not fit together.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> x, w, b = clnp.ones((2, 3)), clnp.ones((4, 3)), clnp.ones(4)
    >>> F.linear(x, w, b).shape
    (2, 4)
    >>> float(F.linear(x, w, b)[0, 0])
    4.0
    """
    fn = "linear"
    chk.array(fn, "x", x, ndim=range(1, 33))
    chk.array(fn, "weight", weight, ndim=2)
    if x.shape[-1] != weight.shape[1]:
        raise ValueError(f"linear: x's last dim {x.shape[-1]} (shape {tuple(x.shape)}) does not "
                         f"match weight's in_features {weight.shape[1]} (weight shape "
                         f"{tuple(weight.shape)}, laid out (out_features, in_features))")
    if bias is not None:
        chk.array(fn, "bias", bias, ndim=1)
        if bias.shape[0] != weight.shape[0]:
            raise ValueError(f"linear: bias of shape {tuple(bias.shape)} does not match "
                             f"weight's out_features {weight.shape[0]}")
    chk.same_dtype(fn, {"x": x, "weight": weight, "bias": bias})
    chk.same_device(fn, {"x": x, "weight": weight, "bias": bias})
    # float16/bfloat16: the product's float32 sums get the bias before the one rounding
    y = xp.matmul(wide(x), xp.matrix_transpose(wide(weight)))
    return narrow(y if bias is None else y + wide(bias), x.dtype)
