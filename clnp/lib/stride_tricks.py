"""``as_strided`` and ``sliding_window_view`` (NumPy's ``numpy.lib.stride_tricks``).

clnp arrays are strided views of device buffers, so both return real views: no copy, no
kernel. Writes through overlapping views behave as on NumPy (elements alias). Under
transformations (``clnp_grad``'s grad, vmap, jit) ``sliding_window_view`` builds the windows
with a gather instead, so it stays differentiable; ``as_strided`` (arbitrary memory
reinterpretation) refuses there.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from .._core.array import Array
from .._core.checks import is_array, normalize_axis
from .._core.prims import in_transformation

__all__ = ["as_strided", "sliding_window_view"]


def _asarray(x: Any) -> Any:
    clnp = _namespace()
    return x if is_array(x) else clnp.asarray(x)


def as_strided(x: Any, shape: Sequence[int] | None = None,
               strides: Sequence[int] | None = None, subok: bool = False,
               writeable: bool = True) -> Any:
    """A view of ``x``'s buffer with the given shape and byte strides (NumPy's
    ``as_strided``).

    Parameters
    ----------
    x : Array
        The array whose memory is viewed.
    shape : sequence of int, optional
        The view's shape (default ``x.shape``).
    strides : sequence of int, optional
        Byte strides, multiples of the item size (default ``x.strides``).
    subok : bool, optional
        Accepted for NumPy compatibility.
    writeable : bool, optional
        Accepted for NumPy compatibility (clnp views are always writeable).

    Returns
    -------
    Array
        A view sharing ``x``'s memory.

    Raises
    ------
    ValueError
        When a stride is not a multiple of the item size, the lengths differ, or the view
        reaches outside ``x``'s buffer.
    NotImplementedError
        Under a transformation.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> from clnp.lib.stride_tricks import as_strided
    >>> x = np.arange(6)
    >>> print(numpy.asarray(as_strided(x, shape=(4, 3), strides=(8, 8))))
    [[0 1 2]
     [1 2 3]
     [2 3 4]
     [3 4 5]]
    """
    if in_transformation() or getattr(x, "_is_clnp_tracer", False):
        raise NotImplementedError("as_strided: a raw strided view cannot be traced by "
                                  "clnp_grad; use sliding_window_view or indexing instead")
    a = _asarray(x)
    shp = tuple(a.shape if shape is None else (operator.index(s) for s in shape))
    st = tuple(a.strides if strides is None else (operator.index(s) for s in strides))
    if len(shp) != len(st):
        raise ValueError(f"as_strided: shape {shp} and strides {st} differ in length")
    isz = a.dtype.itemsize
    if any(s % isz for s in st):
        raise ValueError(f"as_strided: strides {st} must be multiples of the item size {isz}")
    el = tuple(s // isz for s in st)
    view = Array(a._buf, a._offset, shp, el, a.dtype, a.device)
    if view.size:
        lo, hi = view._span()
        cap = a._buf.size // isz if hasattr(a._buf, "size") else None
        if lo < 0 or (cap is not None and hi > cap):
            raise ValueError(f"as_strided: the view of shape {shp} and strides {st} reaches "
                             f"outside the array's buffer")
    return view


def sliding_window_view(x: Any, window_shape: Any, axis: Any = None, *, subok: bool = False,
                        writeable: bool = False) -> Any:
    """Sliding windows of ``window_shape`` over ``x`` (NumPy's ``sliding_window_view``).

    Parameters
    ----------
    x : array_like
        Input.
    window_shape : int or tuple of int
        Window size per axis in ``axis``.
    axis : int or tuple of int, optional
        The axes (default all, one window size each).
    subok, writeable : bool, optional
        Accepted for NumPy compatibility.

    Returns
    -------
    Array
        A view of shape ``x.shape`` with each windowed axis shortened by ``window - 1``,
        followed by the window dimensions.

    Raises
    ------
    ValueError
        When a window is larger than its axis, negative, or the lengths differ.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> from clnp.lib.stride_tricks import sliding_window_view
    >>> print(numpy.asarray(sliding_window_view(np.arange(5), 3)))
    [[0 1 2]
     [1 2 3]
     [2 3 4]]
    """
    clnp = _namespace()
    ws = tuple(np.atleast_1d(window_shape).tolist())
    a = x if getattr(x, "_is_clnp_tracer", False) else _asarray(x)
    if any(w < 0 for w in ws):
        raise ValueError("sliding_window_view: `window_shape` cannot contain negative values")
    if axis is None:
        axes = tuple(range(a.ndim))
        if len(ws) != len(axes):
            raise ValueError(f"sliding_window_view: since axis is None, must provide "
                             f"window_shape for all dimensions of x; got {len(ws)} window "
                             f"dimension(s) for an array of {a.ndim}")
    else:
        axes = tuple(normalize_axis(ax, a.ndim, "sliding_window_view")
                     for ax in np.atleast_1d(axis).tolist())
        if len(ws) != len(axes):
            raise ValueError("sliding_window_view: must provide matching length window_shape "
                             "and axis")
    shape = list(a.shape)
    for ax, w in zip(axes, ws):
        if shape[ax] < w:
            raise ValueError("sliding_window_view: window shape cannot be larger than input "
                             "array shape")
        shape[ax] -= w - 1
    out_shape = tuple(shape) + ws
    if in_transformation() or getattr(a, "_is_clnp_tracer", False):
        # a gather: one index per output element along each windowed axis
        y = a
        for ax, w in zip(axes, ws):
            n = y.shape[ax]
            idx = np.arange(n - w + 1)[:, None] + np.arange(w)[None, :]
            y = clnp.take(y, clnp.asarray(idx.reshape(-1), device=a.device), axis=ax)
            y = clnp.reshape(y, y.shape[:ax] + (n - w + 1, w) + y.shape[ax + 1:])
            y = clnp.moveaxis(y, ax + 1, -1)
        return y
    el = list(a._strides) + [a._strides[ax] for ax in axes]
    isz = a.dtype.itemsize
    return as_strided(a, out_shape, tuple(s * isz for s in el))

from .._namespace import hide_imports as _hide_imports  # noqa: E402
from .._core.namespace import namespace as _namespace
__dir__ = _hide_imports(__name__)
