"""The operator surface shared by ``clnp.Array`` and ``clnp_grad`` tracers.

Every operator calls a namespace function, which binds primitives; so an operator on a tracer
is traced exactly like the function call it spells.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import _ops


def _ns():
    import clnp
    return clnp


def check_concrete(x: Any, what: str) -> None:
    """Tracers override ``_concrete_check`` to explain why a traced value has no Python value."""
    hook = getattr(x, "_concrete_check", None)
    if hook is not None:
        hook(what)


def _binary(name: str):
    def op(self, other):
        if not _ew_operand_ok(other):
            return NotImplemented
        return getattr(_ns(), name)(self, other)

    def rop(self, other):
        if not _ew_operand_ok(other):
            return NotImplemented
        return getattr(_ns(), name)(other, self)

    def iop(self, other):
        if not _ew_operand_ok(other):
            return NotImplemented
        return _ns()._inplace.inplace(name, self, other)
    return op, rop, iop


def _operand_ok(other: Any) -> bool:
    from ._array import Array
    if isinstance(other, (bool, int, float, complex, Array)):
        return True
    return getattr(other, "_is_clnp_tracer", False)


def _ew_operand_ok(other: Any) -> bool:
    """Elementwise operators also take NumPy arrays and scalars (uploaded / strongly typed, as
    NumPy 2 types them); anything else gets NotImplemented so Python can try the other side
    (``x == None`` is then False, as for any object)."""
    return _operand_ok(other) or isinstance(other, (np.ndarray, np.generic))


def _unary(name: str):
    def op(self):
        return getattr(_ns(), name)(self)
    return op


class ArrayOperators:
    __slots__ = ()

    def __getitem__(self, key: Any) -> Any:
        return _ns()._indexing.getitem(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        _ns()._indexing.setitem(self, key, value)

    def __divmod__(self, other: Any) -> Any:
        if not _ew_operand_ok(other):
            return NotImplemented
        return _ns().floor_divide(self, other), _ns().remainder(self, other)

    def __rdivmod__(self, other: Any) -> Any:
        if not _ew_operand_ok(other):
            return NotImplemented
        return _ns().floor_divide(other, self), _ns().remainder(other, self)

    def __matmul__(self, other: Any) -> Any:
        if not _operand_ok(other):
            return NotImplemented
        return _ns().matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        if not _operand_ok(other):
            return NotImplemented
        return _ns().matmul(other, self)

    def __imatmul__(self, other: Any) -> Any:
        if not _operand_ok(other):
            return NotImplemented
        return _ns()._linear_algebra_functions.imatmul(self, other)

    @property
    def T(self) -> Any:
        """All axes reversed, as NumPy's ``.T`` (0-d and 1-d arrays come back unchanged)."""
        if self.ndim < 2:
            return self
        return _ns().permute_dims(self, tuple(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self) -> Any:
        if self.ndim < 2:
            raise ValueError(f".mT requires at least 2 dimensions; got shape {self.shape}")
        return _ns().matrix_transpose(self)

    # NumPy-style methods people use on arrays
    def astype(self, dtype: Any, copy: bool = True) -> Any:
        return _ns().astype(self, dtype, copy=copy)

    def reshape(self, *shape: Any, copy: Any = None) -> Any:
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = tuple(shape[0])
        return _ns().reshape(self, shape, copy=copy)

    def transpose(self, *axes: Any) -> Any:
        if len(axes) == 1 and not isinstance(axes[0], int):
            axes = tuple(axes[0]) if axes[0] is not None else ()
        return _ns().permute_dims(self, axes or tuple(reversed(range(self.ndim))))

    def flatten(self) -> Any:
        return _ns().reshape(self, (-1,), copy=True)

    def ravel(self) -> Any:
        return _ns().reshape(self, (-1,))

    def copy(self) -> Any:
        return _ns().asarray(self, copy=True)

    def squeeze(self, axis: Any = None) -> Any:
        return _ns().squeeze(self, axis=axis)

    def conj(self) -> Any:
        return _ns().conj(self)

    @property
    def real(self) -> Any:
        return _ns().real(self)

    @property
    def imag(self) -> Any:
        return _ns().imag(self)

    def sum(self, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
        return _ns().sum(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def prod(self, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
        return _ns().prod(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> Any:
        return _ns().mean(self, axis=axis, keepdims=keepdims)

    def var(self, axis: Any = None, ddof: float = 0, keepdims: bool = False) -> Any:
        return _ns().var(self, axis=axis, correction=ddof, keepdims=keepdims)

    def std(self, axis: Any = None, ddof: float = 0, keepdims: bool = False) -> Any:
        return _ns().std(self, axis=axis, correction=ddof, keepdims=keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> Any:
        return _ns().max(self, axis=axis, keepdims=keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> Any:
        return _ns().min(self, axis=axis, keepdims=keepdims)

    def argmax(self, axis: Any = None, keepdims: bool = False) -> Any:
        return _ns().argmax(self, axis=axis, keepdims=keepdims)

    def argmin(self, axis: Any = None, keepdims: bool = False) -> Any:
        return _ns().argmin(self, axis=axis, keepdims=keepdims)

    def argsort(self, axis: int = -1) -> Any:
        return _ns().argsort(self, axis=axis)

    def cumsum(self, axis: Any = None, dtype: Any = None) -> Any:
        return _ns().cumsum(self, axis=axis, dtype=dtype)

    def cumprod(self, axis: Any = None, dtype: Any = None) -> Any:
        return _ns().cumprod(self, axis=axis, dtype=dtype)

    def clip(self, min: Any = None, max: Any = None) -> Any:
        return _ns().clip(self, min, max)

    def round(self, decimals: int = 0) -> Any:
        return _ns().around(self, decimals) if decimals else _ns().round(self)

    def dot(self, other: Any) -> Any:
        return _ns().dot(self, other)

    def nonzero(self) -> Any:
        return _ns().nonzero(self)

    def swapaxes(self, axis1: int, axis2: int) -> Any:
        return _ns().swapaxes(self, axis1, axis2)

    def fill(self, value: Any) -> None:
        """Fill the array with a scalar in place (NumPy's ``ndarray.fill``)."""
        self[...] = value

    def sort(self, axis: int = -1) -> None:
        """Sort in place along ``axis`` (NumPy's ``ndarray.sort``)."""
        self[...] = _ns().sort(self, axis=axis)

    def all(self, axis: Any = None, keepdims: bool = False) -> Any:
        return _ns().all(self, axis=axis, keepdims=keepdims)

    def any(self, axis: Any = None, keepdims: bool = False) -> Any:
        return _ns().any(self, axis=axis, keepdims=keepdims)


# Operator dunders come from the op table: one record, all spellings.
for _rec in _ops.OPS.values():
    for _d in _rec.dunder:
        if _rec.nin == 1:
            setattr(ArrayOperators, _d, _unary(_rec.name))
        else:
            _op, _rop, _iop = _binary(_rec.name)
            _base = _d[2:-2]
            setattr(ArrayOperators, _d, _op)
            if _rec.name not in ("equal", "not_equal", "greater", "greater_equal", "less",
                                 "less_equal"):
                setattr(ArrayOperators, f"__r{_base}__", _rop)
                setattr(ArrayOperators, f"__i{_base}__", _iop)
