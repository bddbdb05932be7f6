"""The parts of NumPy's ndarray methods that need more than one namespace call: flat views and
in-place writes (``.flat``, ``put``, ``partition``, ``resize``), ``choose`` and ``compress``.

Everything computes with namespace functions (no kernels of its own). In-place methods write
through ``x[...] = ...`` or through a flat view of the same buffer, so a view's base sees the
change, as in NumPy.
"""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np
from .._core.dtypes import kind as dkind
from .._core.namespace import namespace as _ns
from .._core import attached as _attached




def check_storage(x: Any, what: str) -> None:
    """Methods that write into or reinterpret memory need a concrete array, not a tracer."""
    from .._core.array import Array
    if not isinstance(x, Array):
        raise TypeError(f"{what} needs a concrete clnp array (its memory); got "
                        f"{type(x).__name__}, a traced value inside a transform")


def cycle_values(values: Any, n: int, dtype: np.dtype, device: Any, fname: str) -> Any:
    """``values`` flattened and repeated to length ``n`` (NumPy's rule for ``put`` and
    ``.flat`` assignment)."""
    ns = _ns()
    v = ns.reshape(ns.asarray(values, device=device), (-1,))
    if v.dtype != dtype:
        v = ns.astype(v, dtype)
    if v.size == 0:
        if n:
            raise ValueError(f"{fname}: cannot place {n} values from an empty sequence")
        return v
    if v.size != n:
        v = ns.tile(v, (-(-n // v.size),))[:n]
    return v


def flat_write(x: Any, key: Any, values: Any, fname: str) -> None:
    """``x.flat[key] = values``: through a flat view when ``x`` is contiguous, else through a
    flat copy written back."""
    check_storage(x, fname)
    ns = _ns()
    flat = ns.reshape(x, (-1,))
    shares = getattr(flat, "_buf", None) is x._buf
    if not shares:
        flat = ns.reshape(x, (-1,), copy=True)
    target = flat[key]
    n = target.size if hasattr(target, "size") else 1
    if np.ndim(values) == 0:
        flat[key] = values
    else:
        v = cycle_values(values, n, x.dtype, x.device, fname)
        flat[key] = ns.reshape(v, getattr(target, "shape", ()))
    if not shares:
        x[...] = ns.reshape(flat, x.shape)


class flatiter:
    """A 1-D iterator over an array (``x.flat``, NumPy's ``numpy.flatiter``).

    Indexing it (integers, slices, integer or boolean arrays) reads the flattened array;
    assigning through it writes into the array itself, repeating the values when fewer are
    given, as in NumPy. Iterating reads the whole array to the host once.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.arange(6).reshape(2, 3)
    >>> int(x.flat[4])
    4
    >>> x.flat[::2] = 0
    >>> print(x)
    [[0 1 0]
     [3 0 5]]
    """

    __slots__ = ("base", "_i")

    def __init__(self, base: Any):
        self.base = base
        self._i = 0

    def __getitem__(self, key: Any) -> Any:
        # a copy, as NumPy's: writing into x.flat[1:3] must not write into x (the flattened
        # base is a view of x whenever its strides allow)
        return _ns().reshape(self.base, (-1,))[key].copy()

    def __setitem__(self, key: Any, value: Any) -> None:
        flat_write(self.base, key, value, "flat")

    def __len__(self) -> int:
        return self.base.size

    def __iter__(self) -> Any:
        return iter(_host_scalars(self.base))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self.base.to_numpy().reshape(-1)
        return a if dtype is None else a.astype(dtype)

    @property
    def coords(self) -> tuple[int, ...]:
        """The index of the next element in the array's shape."""
        return tuple(int(i) for i in np.unravel_index(min(self._i, max(self.base.size - 1, 0)),
                                                      self.base.shape))

    @property
    def index(self) -> int:
        """The flat index of the next element."""
        return self._i

    def copy(self) -> Any:
        """The flattened array, a copy.

        Returns
        -------
        Array
            1-D copy of the array.

        Examples
        --------
        >>> import clnp
        >>> clnp.arange(4).reshape(2, 2).flat.copy().shape
        (4,)
        """
        return _ns().reshape(self.base, (-1,), copy=True)


def _host_scalars(x: Any) -> list:
    """The elements as NumPy scalars (as NumPy's iteration over ``.flat`` yields)."""
    host = x.to_numpy().reshape(-1)
    return [host[i] for i in range(host.size)]


def put(x: Any, indices: Any, values: Any, mode: str = "raise") -> None:
    """``x.put(indices, values, mode)``: flat-index assignment, values repeated as needed."""
    check_storage(x, "put")
    ns = _ns()
    idx = ns.reshape(ns.asarray(indices, device=x.device), (-1,))
    if dkind(idx.dtype) not in "iu":
        if idx.size == 0:
            idx = ns.astype(idx, ns.int64)
        else:
            raise TypeError(f"put: indices must be integers; got dtype {idx.dtype}")
    n = x.size
    if mode == "raise":
        if idx.size and n == 0:
            raise IndexError("put: cannot replace elements of an empty array")
        if idx.size:
            lo, hi = int(ns.min(idx)), int(ns.max(idx))
            if lo < -n or hi >= n:
                bad = lo if lo < -n else hi
                raise IndexError(f"put: index {bad} is out of bounds for axis 0 with size {n}")
    elif mode == "wrap":
        idx = ns.remainder(idx, n)
    elif mode == "clip":
        idx = ns.clip(idx, 0, n - 1)  # NumPy's clip mode clips negative indices to 0
    else:
        raise ValueError(f"put: mode must be 'raise', 'wrap' or 'clip'; got {mode!r}")
    if idx.size == 0:
        return
    v = cycle_values(values, idx.size, x.dtype, x.device, "put")
    flat_write(x, idx, v, "put")


def choose(a: Any, choices: Any, mode: str = "raise") -> Any:
    """``numpy.choose``: ``choices[a[i]][i]`` for every index ``i``, with broadcasting."""
    ns = _ns()
    idx = ns.asarray(a)
    if dkind(idx.dtype) not in "iub":
        raise TypeError(f"choose: the index array must be integer; got dtype {idx.dtype}")
    seq = list(choices) if not hasattr(choices, "shape") else [choices[i] for i in
                                                               range(choices.shape[0])]
    if not seq:
        raise ValueError("choose: choices must not be empty")
    opts = [ns.asarray(c, device=idx.device) for c in seq]
    n = len(opts)
    if mode == "raise":
        if idx.size and (int(ns.min(idx)) < 0 or int(ns.max(idx)) >= n):
            raise ValueError(f"choose: invalid entry in choice array (indices must lie in "
                             f"[0, {n}); pass mode='wrap' or 'clip' otherwise)")
    elif mode == "wrap":
        idx = ns.remainder(idx, n)
    elif mode == "clip":
        idx = ns.clip(idx, 0, n - 1)
    else:
        raise ValueError(f"choose: mode must be 'raise', 'wrap' or 'clip'; got {mode!r}")
    dtype = ns.result_type(*opts)
    shape = np.broadcast_shapes(idx.shape, *(o.shape for o in opts))
    stacked = ns.stack([ns.broadcast_to(ns.astype(o, dtype), shape) for o in opts])
    pick = ns.broadcast_to(ns.astype(idx, ns.int64), shape)[None]
    return ns.take_along_axis(stacked, pick, axis=0)[0]


def compress(condition: Any, a: Any, axis: Any = None) -> Any:
    """``numpy.compress``: the slices of ``a`` along ``axis`` where ``condition`` is true."""
    ns = _ns()
    cond = ns.asarray(condition, device=a.device)
    if cond.ndim != 1:
        raise ValueError(f"compress: condition must be a 1-d array; got shape {cond.shape}")
    if axis is None:
        a, axis = ns.reshape(a, (-1,)), 0
    axis = operator.index(axis)
    n = a.shape[axis] if a.ndim else 0
    if cond.shape[0] > n:
        raise IndexError(f"compress: condition has {cond.shape[0]} entries, more than the "
                         f"{n} of axis {axis}")
    (where,) = ns.nonzero(cond)
    return ns.take(a, where, axis=axis)


def partition_order(x: Any, kth: Any, axis: int, what: str) -> Any:
    """The sorted order along ``axis``: a full sort is a valid partition for every ``kth``."""
    ns = _ns()
    if axis is None:
        x, axis = ns.reshape(x, (-1,)), -1
    n = x.shape[axis] if x.ndim else 1
    for k in np.atleast_1d(np.asarray(kth)).tolist():
        if not isinstance(k, int):
            raise TypeError(f"{what}: kth must be integers; got {k!r}")
        if x.size and not -n <= k < n:       # NumPy checks nothing on an empty array
            raise ValueError(f"{what}: kth(={k}) out of bounds ({n})")
    return x, axis


def resize(x: Any, new_shape: tuple[int, ...]) -> None:
    """``x.resize(new_shape)`` in place: the flattened data kept, zeros past its end."""
    check_storage(x, "resize")
    ns = _ns()
    if any(d < 0 for d in new_shape):
        raise ValueError(f"resize: negative dimensions are not allowed; got {new_shape}")
    n = math.prod(new_shape)
    flat = ns.reshape(x, (-1,))
    new = ns.zeros((n,), dtype=x.dtype, device=x.device)
    m = min(n, x.size)
    if m:
        new[:m] = flat[:m]
    new = ns.reshape(new, new_shape)
    x._buf, x._offset, x._shape, x._strides = new._buf, new._offset, new._shape, new._strides


def set_part(x: Any, value: Any, part: str) -> None:
    """``x.real = value`` / ``x.imag = value``."""
    check_storage(x, f"setting .{part}")
    if dkind(x.dtype) == "c":
        getattr(x, part)[...] = value
    elif part == "real":
        x[...] = value
    else:
        raise TypeError("array does not have imaginary part to set")

# the core's methods implemented here (clnp/_core/attached.py)
_attached.attach(flat_write=flat_write, flatiter=flatiter, put=put, choose=choose,
                 compress=compress, partition_order=partition_order, resize=resize,
                 set_part=set_part)
