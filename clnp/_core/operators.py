"""The operator surface shared by ``clnp.Array`` and ``clnp_grad`` tracers.

Every operator calls a namespace function, which binds primitives; so an operator on a tracer
is traced exactly like the function call it spells.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._kernels import op_table as _ops
from .dtypes import kind as dkind
from .attached import implementation
from .namespace import namespace as _ns




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
        return implementation("inplace")(name, self, other)
    return op, rop, iop


def _operand_ok(other: Any) -> bool:
    from .array import Array
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
        return implementation("getitem")(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        implementation("setitem")(self, key, value)

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
        return implementation("imatmul")(self, other)

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

    # ------------------------------------------------------------------ NumPy's ndarray methods
    # Each takes NumPy's parameters in NumPy's order and calls the namespace function of the
    # same name, so a method on a clnp_grad tracer is traced like that call.
    def astype(self, dtype: Any, order: str = "K", casting: str = "unsafe", subok: bool = True,
               copy: bool = True) -> Any:
        """The array cast to ``dtype`` (``ndarray.astype``).

        Parameters
        ----------
        dtype : dtype
            The target dtype.
        order : {'K', 'A', 'C', 'F'}, optional
            Memory order of the result; clnp results are C-ordered ('F' is refused).
        casting : {'no', 'equiv', 'safe', 'same_kind', 'unsafe'}, optional
            Which casts are allowed, as in NumPy.
        subok : bool, optional
            Ignored (no subclasses).
        copy : bool, optional
            When False and the dtype is unchanged, the array itself comes back.

        Returns
        -------
        Array
            The cast array.

        Raises
        ------
        TypeError
            The cast is not allowed by ``casting``.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.asarray([1.7, -2.2]).astype(clnp.int32))
        [ 1 -2]
        """
        from . import dtypes as dt
        d = dt.as_dtype(dtype, "astype")
        if casting != "unsafe" and not np.can_cast(self.dtype, d, casting):
            raise TypeError(f"astype: cannot cast array data from {self.dtype!r} to {d!r} "
                            f"according to the rule {casting!r}")
        if order not in ("K", "A", "C", "F"):
            raise ValueError(f"astype: order must be one of 'K', 'A', 'C', 'F'; got {order!r}")
        res = _ns().astype(self, d, copy=copy)
        if order == "F" and res.ndim > 1 and not res.flags["F_CONTIGUOUS"]:
            res = _ns().asarray(res.T, copy=True).T  # column-major strides, as NumPy's
        return res

    def reshape(self, *shape: Any, order: str = "C", copy: Any = None) -> Any:
        """The array with a new shape, a view when possible (``ndarray.reshape``).

        Parameters
        ----------
        *shape : int or tuple of ints
            The new shape, as one tuple or as separate integers; one entry may be -1.
        order : {'C', 'F', 'A'}, optional
            Index order of the reading and writing.
        copy : bool, optional
            True always copies, False never does (error when a copy is needed).

        Returns
        -------
        Array
            The reshaped array.

        Raises
        ------
        ValueError
            The sizes do not match.

        Examples
        --------
        >>> import clnp
        >>> clnp.arange(6).reshape(2, 3).shape
        (2, 3)
        >>> clnp.arange(6).reshape((3, -1)).shape
        (3, 2)
        """
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            s0 = shape[0]
            if hasattr(s0, "to_numpy"):
                s0 = s0.to_numpy()      # a clnp array as the shape (NumPy's too): one read
            # a 0-d or 1-d array as NumPy takes it; reshape checks its elements are ints
            shape = tuple(np.atleast_1d(s0)) if isinstance(s0, np.ndarray) else tuple(s0)
        if order == "A":
            # NumPy's 'A': Fortran index order for an array Fortran- but not C-contiguous
            f = self.flags
            order = "F" if f["F_CONTIGUOUS"] and not f["C_CONTIGUOUS"] else "C"
        if order == "F":
            # Fortran order: reverse the axes, reshape in C order to the reversed shape, and
            # reverse back
            try:
                rev = _ns().reshape(self.T, tuple(reversed(tuple(shape))), copy=copy)
            except ValueError as e:      # name the caller's shapes, not the reversed ones
                why = ("copy=False but it cannot be done without copying"
                       if "copy=False" in str(e) else "the sizes differ")
                raise ValueError(f"reshape: cannot reshape array of shape {self.shape} into "
                                 f"shape {tuple(shape)} in Fortran order: {why}") from None
            return rev.T
        if order not in ("C", "A"):
            raise ValueError(f"reshape: order must be 'C', 'F' or 'A'; got {order!r}")
        if copy is None:
            return _ns().reshape(self, shape)
        return _ns().reshape(self, shape, copy=copy)

    def transpose(self, *axes: Any) -> Any:
        """The array with its axes permuted, a view (``ndarray.transpose``).

        Parameters
        ----------
        *axes : None, tuple of ints, or ints
            The permutation (all axes reversed when none is given).

        Returns
        -------
        Array
            The transposed view.

        Examples
        --------
        >>> import clnp
        >>> clnp.zeros((2, 3, 4)).transpose(1, 0, 2).shape
        (3, 2, 4)
        >>> clnp.zeros((2, 3)).transpose().shape
        (3, 2)
        """
        if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
            axes = tuple(axes[0]) if axes[0] is not None else ()
        return _ns().permute_dims(self, axes or tuple(reversed(range(self.ndim))))

    def flatten(self, order: str = "C") -> Any:
        """A 1-D copy of the array (``ndarray.flatten``).

        Parameters
        ----------
        order : {'C', 'F', 'A', 'K'}, optional
            Read the elements in row-major ('C', 'A', 'K') or column-major ('F') order.

        Returns
        -------
        Array
            The flattened copy.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.asarray([[1, 2], [3, 4]]).flatten("F"))
        [1 3 2 4]
        """
        if order == "F":
            return _ns().reshape(self.T, (-1,), copy=True)
        return _ns().reshape(self, (-1,), copy=True)

    def ravel(self, order: str = "C") -> Any:
        """The flattened array, a view when possible (``ndarray.ravel``).

        Parameters
        ----------
        order : {'C', 'F', 'A', 'K'}, optional
            Read the elements in row-major ('C', 'A', 'K') or column-major ('F') order.

        Returns
        -------
        Array
            The 1-D array.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.asarray([[1, 2], [3, 4]]).ravel())
        [1 2 3 4]
        """
        if order == "F":
            return _ns().reshape(self.T, (-1,))
        return _ns().reshape(self, (-1,))

    def copy(self, order: str = "C") -> Any:
        """A copy of the array (``ndarray.copy``).

        Parameters
        ----------
        order : {'C', 'F', 'A', 'K'}, optional
            Layout of the copy: 'F' gives column-major strides, the rest row-major.

        Returns
        -------
        Array
            The copy; writing to it leaves the original unchanged.

        Examples
        --------
        >>> import clnp
        >>> x = clnp.arange(3)
        >>> y = x.copy()
        >>> y[0] = 9
        >>> print(x, y)
        [0 1 2] [9 1 2]
        """
        if order == "F" and self.ndim > 1:
            return _ns().asarray(self.T, copy=True).T
        return _ns().asarray(self, copy=True)

    def squeeze(self, axis: Any = None) -> Any:
        """The array without its length-1 axes (``ndarray.squeeze``).

        Parameters
        ----------
        axis : int or tuple of ints, optional
            Only these axes (which must have length 1).

        Returns
        -------
        Array
            A view with fewer dimensions.

        Examples
        --------
        >>> import clnp
        >>> clnp.zeros((1, 3, 1)).squeeze().shape
        (3,)
        """
        return _ns().squeeze(self, axis)

    def swapaxes(self, axis1: int, axis2: int) -> Any:
        """The array with two axes interchanged, a view (``ndarray.swapaxes``).

        Parameters
        ----------
        axis1, axis2 : int
            The axes.

        Returns
        -------
        Array
            The view.

        Examples
        --------
        >>> import clnp
        >>> clnp.zeros((2, 3, 4)).swapaxes(0, 2).shape
        (4, 3, 2)
        """
        return _ns().swapaxes(self, axis1, axis2)

    def conj(self) -> Any:
        """The complex conjugate, elementwise (``ndarray.conj``).

        Returns
        -------
        Array
            The conjugate (the array's values for real dtypes).

        Examples
        --------
        >>> import clnp
        >>> print(clnp.asarray([1 + 2j]).conj())
        [1.-2.j]
        """
        return _ns().conj(self)

    def conjugate(self) -> Any:
        """The complex conjugate, elementwise (``ndarray.conjugate``, same as ``conj``).

        Returns
        -------
        Array
            The conjugate.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.asarray([3 - 1j]).conjugate())
        [3.+1.j]
        """
        return _ns().conj(self)

    @property
    def real(self) -> Any:
        """The real part; for a complex array a view that can be assigned to, as in NumPy
        (``x.real = 0`` or ``x.real[...] = v`` writes into ``x``)."""
        part = getattr(self, "_part_view", None)
        view = part("real") if part is not None else None
        return view if view is not None else _ns().real(self)

    @real.setter
    def real(self, value: Any) -> None:
        implementation("set_part")(self, value, "real")

    @property
    def imag(self) -> Any:
        """The imaginary part; for a complex array a view that can be assigned to, as in
        NumPy (zeros for real arrays, which have no imaginary part to set)."""
        part = getattr(self, "_part_view", None)
        view = part("imag") if part is not None else None
        if view is None and self.dtype == np.bool_:      # NumPy's False, where imag() refuses
            return _ns().zeros_like(self)
        return view if view is not None else _ns().imag(self)

    @imag.setter
    def imag(self, value: Any) -> None:
        implementation("set_part")(self, value, "imag")

    def sum(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
            initial: Any = np._NoValue, where: Any = True) -> Any:
        """Sum of the elements over ``axis`` (``ndarray.sum``; see :func:`clnp.sum`).

        Parameters
        ----------
        axis : int or tuple of ints, optional
            Axes to sum over (all when None).
        dtype : dtype, optional
            Accumulation and result dtype.
        out : Array, optional
            Array to write the result into.
        keepdims : bool, optional
            Keep the reduced axes with length 1.
        initial : scalar, optional
            Starting value of the sum.
        where : array_like of bool, optional
            Elements to include.

        Returns
        -------
        Array
            The sums.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.asarray([[1, 2], [3, 4]]).sum(axis=0))
        [4 6]
        """
        return _ns().sum(self, axis, dtype, out, keepdims, **_given(initial=initial,
                                                                      where=where))

    def prod(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
             initial: Any = np._NoValue, where: Any = True) -> Any:
        """Product of the elements over ``axis`` (``ndarray.prod``; see :func:`clnp.prod`).

        Parameters
        ----------
        axis : int or tuple of ints, optional
            Axes to multiply over (all when None).
        dtype : dtype, optional
            Accumulation and result dtype.
        out : Array, optional
            Array to write the result into.
        keepdims : bool, optional
            Keep the reduced axes with length 1.
        initial : scalar, optional
            Starting value of the product.
        where : array_like of bool, optional
            Elements to include.

        Returns
        -------
        Array
            The products.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.asarray([[1, 2], [3, 4]]).prod(axis=1))
        [ 2 12]
        """
        return _ns().prod(self, axis, dtype, out, keepdims, **_given(initial=initial,
                                                                       where=where))

    def mean(self, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
             *, where: Any = True) -> Any:
        """Arithmetic mean over ``axis`` (``ndarray.mean``; see :func:`clnp.mean`).

        Parameters
        ----------
        axis : int or tuple of ints, optional
            Axes to average over (all when None).
        dtype : dtype, optional
            Accumulation and result dtype (integers average in the default float).
        out : Array, optional
            Array to write the result into.
        keepdims : bool, optional
            Keep the reduced axes with length 1.
        where : array_like of bool, optional
            Elements to include.

        Returns
        -------
        Array
            The means.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.asarray([[1, 2], [3, 4]]).mean(axis=0))
        [2. 3.]
        """
        return _ns().mean(self, axis, dtype, out, keepdims, **_given(where=where))

    def var(self, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0,
            keepdims: bool = False, *, where: Any = True, mean: Any = np._NoValue,
            correction: Any = np._NoValue) -> Any:
        """Variance over ``axis`` (``ndarray.var``; see :func:`clnp.var`).

        Parameters
        ----------
        axis : int or tuple of ints, optional
            Axes to reduce (all when None).
        dtype : dtype, optional
            Computation dtype.
        out : Array, optional
            Array to write the result into.
        ddof : float, optional
            Delta degrees of freedom: the divisor is ``N - ddof``.
        keepdims : bool, optional
            Keep the reduced axes with length 1.
        where : array_like of bool, optional
            Elements to include.
        mean : Array, optional
            A precomputed mean (with ``keepdims=True`` shape), as in NumPy.
        correction : float, optional
            The Array API's name for ``ddof``.

        Returns
        -------
        Array
            The variances.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.asarray([1.0, 2.0, 3.0, 4.0]).var())
        1.25
        """
        return _var_std(self, "var", axis, dtype, out, ddof, keepdims, where, mean, correction)

    def std(self, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0,
            keepdims: bool = False, *, where: Any = True, mean: Any = np._NoValue,
            correction: Any = np._NoValue) -> Any:
        """Standard deviation over ``axis`` (``ndarray.std``; see :func:`clnp.std`).

        Parameters
        ----------
        axis : int or tuple of ints, optional
            Axes to reduce (all when None).
        dtype : dtype, optional
            Computation dtype.
        out : Array, optional
            Array to write the result into.
        ddof : float, optional
            Delta degrees of freedom: the divisor is ``N - ddof``.
        keepdims : bool, optional
            Keep the reduced axes with length 1.
        where : array_like of bool, optional
            Elements to include.
        mean : Array, optional
            A precomputed mean (with ``keepdims=True`` shape), as in NumPy.
        correction : float, optional
            The Array API's name for ``ddof``.

        Returns
        -------
        Array
            The standard deviations.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.asarray([1.0, 3.0]).std())
        1.0
        """
        return _var_std(self, "std", axis, dtype, out, ddof, keepdims, where, mean, correction)

    def max(self, axis: Any = None, out: Any = None, keepdims: bool = False,
            initial: Any = np._NoValue, where: Any = True) -> Any:
        """Largest element over ``axis`` (``ndarray.max``; see :func:`clnp.max`).

        Parameters
        ----------
        axis : int or tuple of ints, optional
            Axes to reduce (all when None).
        out : Array, optional
            Array to write the result into.
        keepdims : bool, optional
            Keep the reduced axes with length 1.
        initial : scalar, optional
            Lower bound of the result (needed for empty reductions).
        where : array_like of bool, optional
            Elements to include (needs ``initial``).

        Returns
        -------
        Array
            The maxima.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.asarray([[1, 5], [3, 2]]).max(axis=1))
        [5 3]
        """
        return _ns().max(self, axis, out, keepdims, **_given(initial=initial, where=where))

    def min(self, axis: Any = None, out: Any = None, keepdims: bool = False,
            initial: Any = np._NoValue, where: Any = True) -> Any:
        """Smallest element over ``axis`` (``ndarray.min``; see :func:`clnp.min`).

        Parameters
        ----------
        axis : int or tuple of ints, optional
            Axes to reduce (all when None).
        out : Array, optional
            Array to write the result into.
        keepdims : bool, optional
            Keep the reduced axes with length 1.
        initial : scalar, optional
            Upper bound of the result (needed for empty reductions).
        where : array_like of bool, optional
            Elements to include (needs ``initial``).

        Returns
        -------
        Array
            The minima.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.asarray([[1, 5], [3, 2]]).min(axis=0))
        [1 2]
        """
        return _ns().min(self, axis, out, keepdims, **_given(initial=initial, where=where))

    def argmax(self, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Any:
        """Index of the largest element over ``axis`` (``ndarray.argmax``).

        Parameters
        ----------
        axis : int, optional
            The axis (the flattened array when None).
        out : Array, optional
            Array to write the result into.
        keepdims : bool, optional
            Keep the reduced axis with length 1.

        Returns
        -------
        Array
            int64 indices (first occurrence).

        Examples
        --------
        >>> import clnp
        >>> int(clnp.asarray([3, 9, 2]).argmax())
        1
        """
        return _ns().argmax(self, axis, out, keepdims=keepdims)

    def argmin(self, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> Any:
        """Index of the smallest element over ``axis`` (``ndarray.argmin``).

        Parameters
        ----------
        axis : int, optional
            The axis (the flattened array when None).
        out : Array, optional
            Array to write the result into.
        keepdims : bool, optional
            Keep the reduced axis with length 1.

        Returns
        -------
        Array
            int64 indices (first occurrence).

        Examples
        --------
        >>> import clnp
        >>> int(clnp.asarray([3, 9, 2]).argmin())
        2
        """
        return _ns().argmin(self, axis, out, keepdims=keepdims)

    def all(self, axis: Any = None, out: Any = None, keepdims: bool = False, *,
            where: Any = True) -> Any:
        """Whether all elements over ``axis`` are true (``ndarray.all``).

        Parameters
        ----------
        axis : int or tuple of ints, optional
            Axes to reduce (all when None).
        out : Array, optional
            Array to write the result into.
        keepdims : bool, optional
            Keep the reduced axes with length 1.
        where : array_like of bool, optional
            Elements to include.

        Returns
        -------
        Array
            Booleans.

        Examples
        --------
        >>> import clnp
        >>> bool(clnp.asarray([1, 2, 0]).all())
        False
        """
        return _ns().all(self, axis, out, keepdims, **_given(where=where))

    def any(self, axis: Any = None, out: Any = None, keepdims: bool = False, *,
            where: Any = True) -> Any:
        """Whether any element over ``axis`` is true (``ndarray.any``).

        Parameters
        ----------
        axis : int or tuple of ints, optional
            Axes to reduce (all when None).
        out : Array, optional
            Array to write the result into.
        keepdims : bool, optional
            Keep the reduced axes with length 1.
        where : array_like of bool, optional
            Elements to include.

        Returns
        -------
        Array
            Booleans.

        Examples
        --------
        >>> import clnp
        >>> bool(clnp.asarray([0, 0, 3]).any())
        True
        """
        return _ns().any(self, axis, out, keepdims, **_given(where=where))

    def cumsum(self, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        """Cumulative sum along ``axis`` (``ndarray.cumsum``).

        Parameters
        ----------
        axis : int, optional
            The axis (the flattened array when None).
        dtype : dtype, optional
            Accumulation and result dtype.
        out : Array, optional
            Array to write the result into.

        Returns
        -------
        Array
            The running sums.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.asarray([1, 2, 3]).cumsum())
        [1 3 6]
        """
        return _ns().cumsum(self, axis, dtype, out)

    def cumprod(self, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        """Cumulative product along ``axis`` (``ndarray.cumprod``).

        Parameters
        ----------
        axis : int, optional
            The axis (the flattened array when None).
        dtype : dtype, optional
            Accumulation and result dtype.
        out : Array, optional
            Array to write the result into.

        Returns
        -------
        Array
            The running products.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.asarray([1, 2, 3]).cumprod())
        [1 2 6]
        """
        return _ns().cumprod(self, axis, dtype, out)

    def clip(self, min: Any = None, max: Any = None, out: Any = None, **kwargs: Any) -> Any:
        """The values limited to ``[min, max]`` (``ndarray.clip``).

        Parameters
        ----------
        min, max : scalar or array_like, optional
            The bounds (at least one).
        out : Array, optional
            Array to write the result into.
        **kwargs
            NumPy's ufunc keywords, as :func:`clnp.clip` takes them.

        Returns
        -------
        Array
            The clipped values.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.asarray([-3, 1, 8]).clip(0, 5))
        [0 1 5]
        """
        return _ns().clip(self, min, max, out, **kwargs)

    def round(self, decimals: int = 0, out: Any = None) -> Any:
        """Elementwise rounding to ``decimals`` decimals, half to even (``ndarray.round``).

        Parameters
        ----------
        decimals : int, optional
            Number of decimals (negative: to tens, hundreds, ...).
        out : Array, optional
            Array to write the result into.

        Returns
        -------
        Array
            The rounded values.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.asarray([0.5, 1.5, 2.25]).round(1))
        [0.5 1.5 2.2]
        """
        return _ns().round(self, decimals, out)

    def dot(self, other: Any, out: Any = None) -> Any:
        """Dot product with ``b`` (``ndarray.dot``; see :func:`clnp.dot`).

        Parameters
        ----------
        other : array_like
            The other operand.
        out : Array, optional
            Array to write the result into.

        Returns
        -------
        Array
            The product.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.asarray([[1, 2], [3, 4]]).dot([1, 1]))
        [3 7]
        """
        return _ns().dot(self, other, out)

    def nonzero(self) -> Any:
        """Indices of the non-zero elements, one array per axis (``ndarray.nonzero``).

        Returns
        -------
        tuple of Array
            The indices.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.asarray([0, 3, 0, 4]).nonzero()[0])
        [1 3]
        """
        return _ns().nonzero(self)

    def fill(self, value: Any) -> None:
        """Fill the array with a scalar in place (``ndarray.fill``).

        Parameters
        ----------
        value : scalar
            The value, cast to the array's dtype.

        Returns
        -------
        None
            The array holds ``value`` everywhere.

        Examples
        --------
        >>> import clnp
        >>> x = clnp.zeros(3)
        >>> x.fill(7)
        >>> print(x)
        [7. 7. 7.]
        """
        self[...] = value

    def sort(self, axis: int = -1, kind: Any = None, order: Any = None, *,
             stable: Any = None) -> None:
        """Sort in place along ``axis`` (``ndarray.sort``).

        Parameters
        ----------
        axis : int or None, optional
            The axis (-1: the last; None is refused with TypeError, as NumPy does).
        kind : {'quicksort', 'mergesort', 'heapsort', 'stable'}, optional
            Accepted for NumPy compatibility; clnp's sort is always stable.
        order : None
            Field order; clnp has no structured dtypes.
        stable : bool, optional
            Accepted (the sort is stable).

        Returns
        -------
        None
            The array is sorted.

        Examples
        --------
        >>> import clnp
        >>> x = clnp.asarray([3, 1, 2])
        >>> x.sort()
        >>> print(x)
        [1 2 3]
        """
        _check_kind(kind, "sort")
        if axis is None:
            raise TypeError("sort: axis=None is not allowed for an in-place sort; use "
                             "clnp.sort(x, axis=None)")
        if order is not None:
            raise ValueError("sort: order= needs a structured dtype, which clnp has not")
        self[...] = _ns().sort(self, axis)

    def argsort(self, axis: Any = -1, kind: Any = None, order: Any = None, *,
                stable: Any = None) -> Any:
        """Indices that sort the array along ``axis`` (``ndarray.argsort``).

        Parameters
        ----------
        axis : int or None, optional
            The axis (None: the flattened array).
        kind : {'quicksort', 'mergesort', 'heapsort', 'stable'}, optional
            Accepted for NumPy compatibility; clnp's sort is always stable.
        order : None
            Field order; clnp has no structured dtypes.
        stable : bool, optional
            Accepted (the sort is stable).

        Returns
        -------
        Array
            int64 indices.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.asarray([3, 1, 2]).argsort())
        [1 2 0]
        """
        _check_kind(kind, "argsort")
        if order is not None:
            raise ValueError("argsort: order= needs a structured dtype, which clnp has not")
        if axis is None:
            return _ns().argsort(_ns().reshape(self, (-1,)))
        return _ns().argsort(self, axis)

    def partition(self, kth: Any, axis: int = -1, kind: str = "introselect",
                  order: Any = None) -> None:
        """Partially sort in place so that element ``kth`` is where a sort puts it
        (``ndarray.partition``).

        Smaller elements come before it and larger ones after, as in NumPy; clnp fully sorts
        along the axis, which is one valid partition (NumPy's order within the two sides is
        unspecified).

        Parameters
        ----------
        kth : int or sequence of ints
            The index (indices) to put in sorted position.
        axis : int, optional
            The axis.
        kind : str, optional
            Accepted for NumPy compatibility.
        order : None
            Field order; clnp has no structured dtypes.

        Returns
        -------
        None
            The array is partitioned.

        Raises
        ------
        ValueError
            ``kth`` out of bounds.

        Examples
        --------
        >>> import clnp
        >>> x = clnp.asarray([7, 1, 5, 3])
        >>> x.partition(1)
        >>> int(x[1])
        3
        """
        y, ax = implementation("partition_order")(self, kth, axis, "partition")
        self[...] = _ns().sort(y, axis=ax)

    def argpartition(self, kth: Any, axis: Any = -1, kind: str = "introselect",
                     order: Any = None) -> Any:
        """Indices that partition the array around element ``kth`` (``ndarray.argpartition``).

        clnp returns the stable sorting order along the axis, which is one valid
        partition (NumPy's order within the two sides is unspecified).

        Parameters
        ----------
        kth : int or sequence of ints
            The index (indices) to put in sorted position.
        axis : int or None, optional
            The axis (None: the flattened array).
        kind : str, optional
            Accepted for NumPy compatibility.
        order : None
            Field order; clnp has no structured dtypes.

        Returns
        -------
        Array
            int64 indices.

        Raises
        ------
        ValueError
            ``kth`` out of bounds.

        Examples
        --------
        >>> import clnp
        >>> x = clnp.asarray([7, 1, 5, 3])
        >>> int(x[x.argpartition(2)[2]])
        5
        """
        y, ax = implementation("partition_order")(self, kth, axis, "argpartition")
        return _ns().argsort(y, axis=ax)

    def searchsorted(self, v: Any, side: str = "left", sorter: Any = None) -> Any:
        """Where ``v`` would be inserted to keep the (sorted, 1-D) array sorted
        (``ndarray.searchsorted``).

        Parameters
        ----------
        v : array_like
            Values to insert.
        side : {'left', 'right'}, optional
            Index of the first or past the last equal element.
        sorter : array_like, optional
            Indices that sort the array.

        Returns
        -------
        Array
            int64 insertion indices, shaped like ``v``.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.asarray([1, 3, 5]).searchsorted([0, 3, 6]))
        [0 1 3]
        """
        if sorter is not None and not (_operand_ok(sorter) and hasattr(sorter, "shape")):
            sorter = _ns().asarray(sorter, device=self.device)
        return _ns().searchsorted(self, v, side=side, sorter=sorter)

    def repeat(self, repeats: Any, axis: Any = None) -> Any:
        """Each element repeated ``repeats`` times (``ndarray.repeat``).

        Parameters
        ----------
        repeats : int or array_like of ints
            Repetitions, per element or one for all.
        axis : int, optional
            The axis (the flattened array when None).

        Returns
        -------
        Array
            The repeated array.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.asarray([1, 2]).repeat(2))
        [1 1 2 2]
        """
        return _ns().repeat(self, repeats, axis)

    def take(self, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> Any:
        """Elements at ``indices`` along ``axis`` (``ndarray.take``).

        Parameters
        ----------
        indices : array_like of ints
            The indices.
        axis : int, optional
            The axis (the flattened array when None).
        out : Array, optional
            Array to write the result into.
        mode : {'raise', 'wrap', 'clip'}, optional
            What to do with out-of-range indices.

        Returns
        -------
        Array
            The selected elements.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.asarray([10, 20, 30]).take([2, 0]))
        [30 10]
        """
        return _ns().take(self, indices, axis, out, mode)

    def put(self, indices: Any, values: Any, mode: str = "raise") -> None:
        """Set the elements at flat ``indices`` to ``values`` in place (``ndarray.put``).

        Values are repeated when fewer than the indices, as in NumPy.

        Parameters
        ----------
        indices : array_like of ints
            Indices into the flattened array.
        values : array_like
            The values.
        mode : {'raise', 'wrap', 'clip'}, optional
            What to do with out-of-range indices.

        Returns
        -------
        None
            The array holds the values.

        Raises
        ------
        IndexError
            An index out of range with ``mode='raise'``.

        Examples
        --------
        >>> import clnp
        >>> x = clnp.zeros((2, 2), dtype=clnp.int32)
        >>> x.put([0, 3], [5, 6])
        >>> print(x)
        [[5 0]
         [0 6]]
        """
        implementation("put")(self, indices, values, mode)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
        """The diagonal of the array (``ndarray.diagonal``).

        Parameters
        ----------
        offset : int, optional
            Offset from the main diagonal (positive: above).
        axis1, axis2 : int, optional
            The axes of the 2-D sub-arrays.

        Returns
        -------
        Array
            The diagonal, its axis last.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.arange(9).reshape(3, 3).diagonal(1))
        [1 5]
        """
        return _ns().diagonal(self, offset, axis1, axis2)

    def trace(self, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
              out: Any = None) -> Any:
        """Sum along the diagonal (``ndarray.trace``).

        Parameters
        ----------
        offset : int, optional
            Offset from the main diagonal.
        axis1, axis2 : int, optional
            The axes of the 2-D sub-arrays.
        dtype : dtype, optional
            Accumulation dtype.
        out : Array, optional
            Array to write the result into.

        Returns
        -------
        Array
            The sums.

        Examples
        --------
        >>> import clnp
        >>> int(clnp.arange(9).reshape(3, 3).trace())
        12
        """
        return _ns().trace(self, offset, axis1, axis2, dtype, out)

    def compress(self, condition: Any, axis: Any = None, out: Any = None) -> Any:
        """The slices along ``axis`` where ``condition`` is true (``ndarray.compress``).

        Parameters
        ----------
        condition : 1-D array_like of bool
            Which slices to keep (may be shorter than the axis).
        axis : int, optional
            The axis (the flattened array when None).
        out : Array, optional
            Array to write the result into.

        Returns
        -------
        Array
            The kept slices.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.asarray([[1, 2], [3, 4], [5, 6]]).compress([False, True, True], axis=0))
        [[3 4]
         [5 6]]
        """
        res = implementation("compress")(condition, self, axis)
        return _write_out(res, out, "compress")

    def choose(self, choices: Any, out: Any = None, mode: str = "raise") -> Any:
        """An array built from ``choices[self]`` (``ndarray.choose``; the array holds the
        indices).

        Parameters
        ----------
        choices : sequence of array_like
            The arrays to choose from, broadcast together with the index array.
        out : Array, optional
            Array to write the result into.
        mode : {'raise', 'wrap', 'clip'}, optional
            What to do with out-of-range indices.

        Returns
        -------
        Array
            The chosen values.

        Raises
        ------
        ValueError
            An index out of range with ``mode='raise'``.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.asarray([0, 1, 0]).choose([[1, 2, 3], [10, 20, 30]]))
        [ 1 20  3]
        """
        res = implementation("choose")(self, choices, mode)
        return _write_out(res, out, "choose")

    def resize(self, *new_shape: Any, refcheck: bool = True) -> None:
        """Change the shape and size in place (``ndarray.resize``): the flattened data is
        kept, and new elements are zeros, as in NumPy.

        Parameters
        ----------
        *new_shape : int or tuple of ints
            The new shape.
        refcheck : bool, optional
            Accepted for NumPy compatibility (clnp cannot count references to the memory;
            views made earlier keep the old memory).

        Returns
        -------
        None
            The array has the new shape.

        Examples
        --------
        >>> import clnp
        >>> x = clnp.asarray([1, 2, 3])
        >>> x.resize(2, 3)
        >>> print(x)
        [[1 2 3]
         [0 0 0]]
        """
        if len(new_shape) == 1 and not isinstance(new_shape[0], (int, np.integer)):
            new_shape = tuple(new_shape[0])
        implementation("resize")(self, tuple(int(d) for d in new_shape))

    def __contains__(self, value: Any) -> bool:
        """``value in x``: whether any element equals ``value`` (NumPy's rule)."""
        return bool(_ns().any(self == value))

    def __copy__(self) -> Any:
        return self.copy()

    def __deepcopy__(self, memo: Any) -> Any:
        return self.copy()

    @property
    def flat(self) -> Any:
        """A 1-D iterator over the array that can be indexed and assigned to (``ndarray.flat``).

        Setting ``x.flat = values`` fills the array with the values, repeated as needed."""
        return implementation("flatiter")(self)

    @flat.setter
    def flat(self, value: Any) -> None:
        implementation("flat_write")(self, slice(None), value, "flat")


_NO = np._NoValue


def _given(**kwargs: Any) -> dict[str, Any]:
    """The keyword arguments that differ from NumPy's defaults (``initial``, ``where``), so
    the namespace function sees only what the caller passed."""
    return {k: v for k, v in kwargs.items()
            if v is not _NO and not (k == "where" and v is True)}


def _var_std(x: Any, name: str, axis: Any, dtype: Any, out: Any, ddof: Any, keepdims: bool,
             where: Any, mean: Any, correction: Any) -> Any:
    if correction is not _NO:
        if ddof:
            raise ValueError(f"{name}: ddof and correction can't be provided simultaneously")
        ddof = correction
    if mean is not _NO:
        if dtype is not None:
            x = _ns().astype(x, dtype)
        d = _ns().abs(x - mean) ** 2 if dkind(x.dtype) == "c" else (x - mean) ** 2
        kw = _given(where=where)
        n = _ns().sum(_ns().ones_like(x, dtype=_ns().int64) if not kw else
                      _ns().astype(_ns().broadcast_to(where, x.shape), _ns().int64),
                      axis=axis, keepdims=keepdims)
        res = _ns().sum(d, axis=axis, keepdims=keepdims, **kw) / (n - ddof)
        res = res if name == "var" else _ns().sqrt(res)
        return _write_out(res, out, name)
    return getattr(_ns(), name)(x, axis, dtype, out, ddof, keepdims, **_given(where=where))


def _check_kind(kind: Any, fname: str) -> None:
    # every kind gives the stable sort's result, which is a valid result for each of them
    if kind not in (None, "quicksort", "mergesort", "heapsort", "stable"):
        raise ValueError(f"{fname}: kind must be one of 'quicksort', 'mergesort', 'heapsort', "
                         f"'stable'; got {kind!r}")


def _write_out(res: Any, out: Any, fname: str) -> Any:
    if out is None:
        return res
    if tuple(out.shape) != tuple(res.shape):
        raise ValueError(f"{fname}: out has shape {out.shape}; the result has {res.shape}")
    out[...] = res
    return out


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
