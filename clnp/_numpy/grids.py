"""NumPy's index-expression helpers: ``mgrid``, ``ogrid``, ``r_``, ``c_``, ``s_`` and
``index_exp``, plus the constants ``euler_gamma`` and ``little_endian``.

``mgrid``/``ogrid`` build their grids with ``arange``/``linspace`` on the default device;
``r_``/``c_`` concatenate on the device of their first clnp array (NumPy's directives
``'axis'``, ``'axis,ndmin'`` and ``'axis,ndmin,trans1d'`` included; the matrix directives
``'r'``/``'c'`` have no device meaning). ``s_`` and ``index_exp`` only build Python index
tuples, so they are NumPy's own objects.
"""
from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from .._core.checks import is_array
from .._core.namespace import namespace as _xp
from .array_likes import _arr, _device_of
from .._core.dtypes import kind as dkind

__all__ = ["mgrid", "ogrid", "r_", "c_", "s_", "index_exp", "euler_gamma", "little_endian"]

s_ = np.s_
index_exp = np.index_exp
euler_gamma = 0.577215664901532860606512090082402431
little_endian = sys.byteorder == "little"


def _is_float(v: Any) -> bool:
    return isinstance(v, (float, np.floating)) or (is_array(v) and dkind(v.dtype) == "f")


class _Grid:
    """``mgrid`` (dense) and ``ogrid`` (open) grids: ``mgrid[0:2, 0:3]``; a complex step
    ``5j`` means five points with the stop included.

    Parameters
    ----------
    sparse : bool
        Open grid (broadcastable arrays) instead of a dense stack.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.mgrid[0:2, 0:3]))
    [[[0 0 0]
      [1 1 1]]
    <BLANKLINE>
     [[0 1 2]
      [0 1 2]]]
    >>> print(numpy.asarray(np.ogrid[0:1:3j]))
    [0.  0.5 1. ]
    """

    def __init__(self, sparse: bool):
        self.sparse = sparse

    def _axis(self, s: slice, floating: bool) -> Any:
        xp = _xp()
        start = 0 if s.start is None else s.start
        step = 1 if s.step is None else s.step
        if isinstance(step, (complex, np.complexfloating)):
            n = int(abs(step))
            return xp.linspace(float(start), float(s.stop), n)
        if floating:
            return xp.arange(float(start), float(s.stop), float(step))
        return xp.arange(int(start), int(s.stop), int(step))

    def __getitem__(self, key: Any) -> Any:
        xp = _xp()
        single = not isinstance(key, tuple)
        keys = (key,) if single else key
        for k in keys:
            if not isinstance(k, slice):
                raise TypeError(f"{'ogrid' if self.sparse else 'mgrid'}: indices must be "
                                f"slices; got {type(k).__name__}")
        floating = any(_is_float(v) or isinstance(v, (complex, np.complexfloating))
                       for k in keys for v in (k.start, k.stop, k.step))
        axes = [self._axis(k, floating) for k in keys]
        if floating:
            fl = xp.default_device().default_float
            axes = [xp.astype(a, fl) for a in axes]
        if single:
            return axes[0]
        n = len(axes)
        shaped = []
        for i, a in enumerate(axes):
            shp = [1] * n
            shp[i] = a.shape[0]
            shaped.append(xp.reshape(a, tuple(shp)))
        if self.sparse:
            return tuple(shaped)
        full = tuple(a.shape[0] for a in axes)
        return xp.stack([xp.broadcast_to(a, full) for a in shaped])

    def __repr__(self) -> str:
        return "clnp.ogrid" if self.sparse else "clnp.mgrid"


class _Concatenator:
    """``r_`` and ``c_``: concatenation by index expressions (NumPy's
    ``AxisConcatenator``): ``r_[1:4, 0, [7, 8]]``, ``c_[a, b]``, ``r_['0,2', a, b]``.

    Parameters
    ----------
    axis : int
        Default concatenation axis.
    ndmin : int
        Minimum dimensions of each piece.
    trans1d : int
        Where a piece's own dimensions go when it is upgraded to ``ndmin``.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> print(numpy.asarray(np.r_[1:4, 0, [7, 8]]))
    [1 2 3 0 7 8]
    >>> print(numpy.asarray(np.c_[np.asarray([1, 2]), [3, 4]]))
    [[1 3]
     [2 4]]
    """

    def __init__(self, axis: int, ndmin: int, trans1d: int, name: str):
        self.axis, self.ndmin, self.trans1d, self.name = axis, ndmin, trans1d, name

    def __len__(self) -> int:
        return 0

    def __getitem__(self, key: Any) -> Any:
        xp = _xp()
        if isinstance(key, str):
            raise ValueError(f"{self.name}: matrix directives ('r', 'c') build numpy.matrix, "
                             f"which has no device representation")
        keys = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        dev = _device_of(*keys)
        objs: list[Any] = []
        kinds: list[Any] = []
        for k, item in enumerate(keys):
            if isinstance(item, slice):
                new = _Grid(False)[item]
                if ndmin > 1:
                    new = self._ndmin(new, ndmin)
                    if trans1d != -1:
                        new = xp.swapaxes(new, -1, trans1d)
                objs.append(new)
                kinds.append(new.dtype)
            elif isinstance(item, str):
                if k != 0:
                    raise ValueError(f"{self.name}: special directives must be the first "
                                     f"entry")
                if item in ("r", "c"):
                    raise ValueError(f"{self.name}: matrix directives ('r', 'c') build "
                                     f"numpy.matrix, which has no device representation")
                try:
                    vec = [int(v) for v in item.split(",")]
                except ValueError:
                    raise ValueError(f"{self.name}: unknown special directive {item!r}") \
                        from None
                if len(vec) > 3:
                    raise ValueError(f"{self.name}: unknown special directive {item!r}")
                axis = vec[0]
                if len(vec) > 1:
                    ndmin = vec[1]
                if len(vec) > 2:
                    trans1d = vec[2]
            elif isinstance(item, (bool, int, float, complex, np.generic)):
                objs.append(item)
                kinds.append(item)
            else:
                a = _arr(item, dev)
                nd = a.ndim
                a = self._ndmin(a, ndmin)
                if trans1d != -1 and nd < ndmin:
                    k2 = ndmin - nd
                    k1 = trans1d + k2 + 1 if trans1d < 0 else trans1d
                    defaxes = list(range(ndmin))
                    a = xp.permute_dims(a, tuple(defaxes[:k1] + defaxes[k2:] +
                                                 defaxes[k1:k2]))
                objs.append(a)
                kinds.append(a.dtype)
        if not objs:
            return xp.asarray([], device=dev)
        final = np.result_type(*kinds)
        pieces = [self._ndmin(_arr(o, dev, final) if not is_array(o) else xp.astype(o, final),
                              ndmin) for o in objs]
        return xp.concat(pieces, axis=axis)

    @staticmethod
    def _ndmin(a: Any, ndmin: int) -> Any:
        if a.ndim >= ndmin:
            return a
        return _xp().reshape(a, (1,) * (ndmin - a.ndim) + a.shape)

    def __repr__(self) -> str:
        return f"clnp.{self.name}"


mgrid = _Grid(False)
ogrid = _Grid(True)
r_ = _Concatenator(0, 1, -1, "r_")
c_ = _Concatenator(-1, 2, 0, "c_")
del math
