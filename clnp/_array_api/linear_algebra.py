"""Linear algebra functions of the standard (``matmul``, ``tensordot``, ``vecdot``) and the
NumPy spellings built from them (``dot``, ``inner``, ``outer``, ``vdot``, ``matvec``,
``vecmat``).

Products go through the ``dot_general`` primitive (one GEMM launch, operands read in place
through their strides); ``vecdot`` is an elementwise product and a ``sum`` reduction, which
reaches memory bandwidth where a GEMM with one output per batch entry would not.
"""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from .._core import dtypes as dt
from .._core.checks import is_array
from .._core.prims import primitive
from .._core.dtypes import kind as dkind
from .._core import attached as _attached

__all__ = ["matmul", "tensordot", "vecdot", "dot", "inner", "outer", "vdot", "matvec",
           "vecmat"]


def _check_pair(x1: Any, x2: Any, fname: str) -> np.dtype:
    """Both operands are arrays of numeric dtypes on one device; returns the promoted dtype."""
    for name, x in (("x1", x1), ("x2", x2)):
        if not is_array(x):
            raise TypeError(f"{fname}: {name} must be a clnp array; got {type(x).__name__} "
                            f"(wrap it with clnp.asarray)")
    for x in (x1, x2):
        if x.dtype not in dt.NUMERIC:
            raise TypeError(f"{fname} requires numeric input; got {x1.dtype} and {x2.dtype}")
    if x1.device is not x2.device:
        raise ValueError(f"{fname}: operands are on different devices: {x1.device} and "
                         f"{x2.device}; move one with to_device()")
    return dt.promote(x1.dtype, x2.dtype)


def _as(x: Any, dtype: np.dtype) -> Any:
    return x if x.dtype == dtype else primitive("convert_element_type").bind(x, dtype=dtype)


def _broadcast(x: Any, shape: tuple[int, ...]) -> Any:
    return x if x.shape == shape else primitive("broadcast_to").bind(x, shape=shape)


def _batch_shape(s1: tuple[int, ...], s2: tuple[int, ...], x1s: tuple[int, ...],
                 x2s: tuple[int, ...], fname: str) -> tuple[int, ...]:
    from .._core.eager import broadcast_shapes
    try:
        return broadcast_shapes(s1, s2)
    except ValueError:
        raise ValueError(f"{fname}: batch dimensions of shapes {x1s} and {x2s} cannot be "
                         f"broadcast together") from None


def matmul(x1: Any, x2: Any, /) -> Any:
    """Computes the matrix product.

    A one-dimensional ``x1`` of shape ``(K,)`` is promoted to ``(1, K)`` and a one-dimensional
    ``x2`` of shape ``(K,)`` to ``(K, 1)``; the added dimension is removed from the result.
    Leading (batch) dimensions broadcast. Complex operands are not conjugated.

    Parameters
    ----------
    x1 : array
        Left operand, shape ``(..., M, K)`` or ``(K,)``, of a numeric dtype.
    x2 : array
        Right operand, shape ``(..., K, N)`` or ``(K,)``, on ``x1``'s device.

    Returns
    -------
    array
        The product, shape ``(..., M, N)`` (without ``M`` or ``N`` for vector operands), of
        the promoted data type of ``x1`` and ``x2``.

    Raises
    ------
    TypeError
        An operand is not array-like or not of a numeric dtype.
    ValueError
        An operand is zero-dimensional, the contracted dimensions differ, the batch
        dimensions do not broadcast, or the operands are on different devices.

    Examples
    --------
    >>> import clnp
    >>> a = clnp.asarray([[1, 2], [3, 4]])
    >>> print(clnp.matmul(a, a))
    [[ 7 10]
     [15 22]]
    >>> print(clnp.matmul(a, clnp.asarray([1, 1])))
    [3 7]
    >>> clnp.matmul(clnp.ones((5, 2, 3)), clnp.ones((3, 4))).shape
    (5, 2, 4)
    """
    d = _check_pair(x1, x2, "matmul")
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError(f"matmul: operands must have at least one dimension; got shapes "
                         f"{x1.shape} and {x2.shape}")
    k1 = x1.shape[-1]
    k2 = x2.shape[-2] if x2.ndim > 1 else x2.shape[0]
    if k1 != k2:
        raise ValueError(f"matmul: contracted dimensions differ: shapes {x1.shape} and "
                         f"{x2.shape} ({k1} != {k2})")
    batch = _batch_shape(x1.shape[:-2], x2.shape[:-2], x1.shape, x2.shape, "matmul")
    nb = len(batch)
    if x1.ndim > 2 and x2.ndim <= 2:
        # (batch..., M, K) @ (K[, N]): one product over all of x1's rows, not a batch of
        # products of a broadcast x2 (its derivative is then one product contracting the
        # batch and M dims together, not a product per batch entry and a sum over them)
        return primitive("dot_general").bind(
            x1, x2, dimension_numbers=(((x1.ndim - 1,), (0,)), ((), ())),
            preferred_element_type=d)
    # a vector operand takes no part in the batch: broadcasting it is a stride-0 view (and
    # dot_general converts mixed dtypes itself, keeping such views unmaterialised)
    a = _broadcast(x1, batch + x1.shape[-2:] if x1.ndim > 1 else batch + x1.shape)
    b = _broadcast(x2, batch + x2.shape[-2:] if x2.ndim > 1 else batch + x2.shape)
    bd = tuple(range(nb))
    # a is (batch..., [M,] K) and b is (batch..., K[, N]): the result is (batch..., [M,] [N])
    return primitive("dot_general").bind(
        a, b, dimension_numbers=(((a.ndim - 1,), (nb,)), (bd, bd)),
        preferred_element_type=d)


def _normalize_tensordot_axes(axes: Any, n1: int, n2: int, s1, s2) -> tuple[tuple[int, ...],
                                                                           tuple[int, ...]]:
    if isinstance(axes, (tuple, list)):
        if len(axes) != 2:
            raise ValueError(f"tensordot: axes must be an integer or a pair of sequences; got "
                             f"{axes!r}")
        a1, a2 = axes
        a1 = [a1] if isinstance(a1, (int, np.integer)) else list(a1)
        a2 = [a2] if isinstance(a2, (int, np.integer)) else list(a2)
        if len(a1) != len(a2):
            raise ValueError(f"tensordot: axes sequences must have the same length; got "
                             f"{tuple(a1)} and {tuple(a2)}")
        out = []
        for seq, n, s in ((a1, n1, s1), (a2, n2, s2)):
            norm = []
            for a in seq:
                try:
                    i = operator.index(a)
                except TypeError:
                    raise TypeError(f"tensordot: axes must be integers; got {a!r}") from None
                if not -n <= i < n:
                    raise np.exceptions.AxisError(f"tensordot: axis {i} is out of bounds "
                                                  f"for an array of shape {s}")
                norm.append(i % n)
            if len(set(norm)) != len(norm):
                raise ValueError(f"tensordot: repeated axis in {tuple(seq)}")
            out.append(tuple(norm))
        return out[0], out[1]
    try:
        n = operator.index(axes)
    except TypeError:
        raise TypeError(f"tensordot: axes must be an integer or a pair of sequences; got "
                        f"{axes!r}") from None
    if n < 0:
        raise ValueError(f"tensordot: axes must be a nonnegative integer; got {n}")
    if n > n1 or n > n2:
        raise ValueError(f"tensordot: cannot contract {n} axes of arrays of shapes {s1} "
                         f"and {s2}")
    return tuple(range(n1 - n, n1)), tuple(range(n))


def tensordot(x1: Any, x2: Any, /, *, axes: int | tuple[Sequence[int], Sequence[int]] = 2
              ) -> Any:
    """Returns a tensor contraction of ``x1`` and ``x2`` over specific axes.

    Contracted axes must have equal sizes (no broadcasting); complex operands are not
    conjugated.

    Parameters
    ----------
    x1, x2 : array
        Numeric operands on one device.
    axes : int or pair of sequences of ints, default 2
        ``N`` contracts the last ``N`` axes of ``x1`` with the first ``N`` axes of ``x2`` in
        order; ``(x1_axes, x2_axes)`` names them (negative axes count from the end).

    Returns
    -------
    array
        The non-contracted axes of ``x1`` followed by those of ``x2``, of the promoted data
        type.

    Raises
    ------
    TypeError
        An operand is not array-like or not of a numeric dtype, or ``axes`` is not an
        integer or a pair of integer sequences.
    ValueError
        ``axes`` is negative, repeats an axis, names an axis out of range or more axes than an
        operand has, the contracted sizes differ, or the operands are on different devices.

    Examples
    --------
    >>> import clnp
    >>> a = clnp.reshape(clnp.arange(6), (2, 3))
    >>> print(clnp.tensordot(a, a, axes=([1], [1])))
    [[ 5 14]
     [14 50]]
    >>> print(clnp.tensordot(a, a, axes=2))
    55
    """
    d = _check_pair(x1, x2, "tensordot")
    c1, c2 = _normalize_tensordot_axes(axes, x1.ndim, x2.ndim, x1.shape, x2.shape)
    for i, j in zip(c1, c2):
        if x1.shape[i] != x2.shape[j]:
            raise ValueError(f"tensordot: shapes {x1.shape} and {x2.shape} differ in the "
                             f"contracted axes ({i} of x1 has size {x1.shape[i]}, {j} of x2 "
                             f"has size {x2.shape[j]})")
    return primitive("dot_general").bind(x1, x2, dimension_numbers=((c1, c2), ((), ())),
                                         preferred_element_type=d)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """Computes the (vector) dot product of two arrays: ``sum(conj(x1) * x2)`` over ``axis``.

    Parameters
    ----------
    x1, x2 : array
        Numeric operands on one device; all axes but ``axis`` broadcast.
    axis : int, default -1
        The contracted axis, counted from the end (an integer in ``[-N, -1]``,
        ``N = min(x1.ndim, x2.ndim)``); its size must be equal in both operands.

    Returns
    -------
    array
        The broadcast shape without ``axis``, of the promoted data type.

    Raises
    ------
    TypeError
        An operand is not array-like or not of a numeric dtype, or ``axis`` is not an integer.
    ValueError
        ``axis`` is nonnegative or out of range, the sizes along it differ, the other axes do
        not broadcast, or the operands are on different devices.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([[1, 2], [3, 4]])
    >>> print(clnp.vecdot(x, clnp.asarray([1, 1])))
    [3 7]
    >>> print(clnp.vecdot(x, x, axis=-2))
    [10 20]
    """
    d = _check_pair(x1, x2, "vecdot")
    try:
        ax = operator.index(axis)
    except TypeError:
        raise TypeError(f"vecdot: axis must be an integer; got {type(axis).__name__}") from None
    n = min(x1.ndim, x2.ndim)
    if not -n <= ax < n or n == 0:
        raise np.exceptions.AxisError(f"vecdot: axis {ax} is out of bounds for shapes "
                                      f"{x1.shape} and {x2.shape}")
    if ax >= 0:
        raise ValueError(f"vecdot: axis must be negative (counted from the last axis); got "
                         f"{ax}")
    if x1.shape[ax] != x2.shape[ax]:
        raise ValueError(f"vecdot: shapes {x1.shape} and {x2.shape} differ along axis {ax} "
                         f"({x1.shape[ax]} != {x2.shape[ax]})")
    from .._core.eager import broadcast_shapes
    try:
        shape = broadcast_shapes(x1.shape, x2.shape)
    except ValueError:
        raise ValueError(f"vecdot: shapes {x1.shape} and {x2.shape} cannot be broadcast "
                         f"together") from None
    from .elementwise import conj, multiply
    p = multiply(conj(x1) if dkind(x1.dtype) == "c" else x1, x2)
    red = len(shape) + ax
    if dkind(d) in "iu":
        # wraparound like NumPy: the int64 sum narrowed to d has the same low bits
        acc = dt.int64 if dkind(d) == "i" else dt.uint64
        r = primitive("reduce").bind(p, op="sum", axes=(red,), acc_dtype=acc, out_dtype=acc)
        return _as(r, d)
    acc = dt.float32 if d in dt.HALF else d
    return primitive("reduce").bind(p, op="sum", axes=(red,), acc_dtype=acc, out_dtype=d)


# ------------------------------------------------------------------------------ NumPy names
def _scalar_product(a: Any, b: Any, fname: str) -> Any:
    from .elementwise import multiply
    _check_pair(a, b, fname)
    return multiply(a, b)


def dot(a: Any, b: Any, /) -> Any:
    """NumPy's ``dot``: the inner product of vectors, the matrix product of matrices, and for
    N-D operands a sum product over the last axis of ``a`` and the second-to-last of ``b``.

    Parameters
    ----------
    a, b : array
        Numeric operands on one device; a zero-dimensional operand multiplies elementwise.
    out : array, optional
        NumPy's output array (the namespace function); it is also returned.

    Returns
    -------
    array
        The product, of the promoted dtype: shape ``a.shape[:-1] + b.shape[:-2] +
        b.shape[-1:]`` for N-D operands.

    Raises
    ------
    TypeError
        An operand is not array-like or not of a numeric dtype.
    ValueError
        The last axis of ``a`` and the second-to-last of ``b`` (the only one of a vector)
        differ in size, or the operands are on different devices.

    Examples
    --------
    >>> import clnp
    >>> v = clnp.asarray([1, 2, 3])
    >>> print(clnp.dot(v, v))
    14
    >>> print(clnp.dot(clnp.asarray([[1, 0], [0, 2]]), clnp.asarray([[1, 2], [3, 4]])))
    [[1 2]
     [6 8]]
    """
    if is_array(a) and is_array(b) and (a.ndim == 0 or b.ndim == 0):
        return _scalar_product(a, b, "dot")
    if is_array(b) and b.ndim >= 1 and is_array(a) and a.ndim >= 1:
        if a.shape[-1] != b.shape[max(b.ndim - 2, 0)]:
            raise ValueError(f"dot: shapes {a.shape} and {b.shape} not aligned: "
                             f"{a.shape[-1]} (dim {a.ndim - 1}) != "
                             f"{b.shape[max(b.ndim - 2, 0)]} (dim {max(b.ndim - 2, 0)})")
        return tensordot(a, b, axes=((a.ndim - 1,), (max(b.ndim - 2, 0),)))
    _check_pair(a, b, "dot")
    raise AssertionError("unreachable")


def inner(a: Any, b: Any, /) -> Any:
    """NumPy's ``inner``: the sum product over the last axes of ``a`` and ``b`` (no
    conjugation).

    Parameters
    ----------
    a, b : array
        Numeric operands on one device, with equal last dimensions; a zero-dimensional
        operand multiplies elementwise.

    Returns
    -------
    array
        Shape ``a.shape[:-1] + b.shape[:-1]``, of the promoted dtype.

    Raises
    ------
    TypeError
        An operand is not array-like or not of a numeric dtype.
    ValueError
        The last dimensions differ, or the operands are on different devices.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.inner(clnp.asarray([1, 2, 3]), clnp.asarray([0, 1, 2])))
    8
    >>> print(clnp.inner(clnp.asarray([[1, 2], [3, 4]]), clnp.asarray([1, 1])))
    [3 7]
    """
    if is_array(a) and is_array(b) and (a.ndim == 0 or b.ndim == 0):
        return _scalar_product(a, b, "inner")
    _check_pair(a, b, "inner")
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"inner: shapes {a.shape} and {b.shape} differ in their last "
                         f"dimension")
    return tensordot(a, b, axes=((a.ndim - 1,), (b.ndim - 1,)))


def outer(a: Any, b: Any, /) -> Any:
    """NumPy's ``outer``: ``out[i, j] = a.ravel()[i] * b.ravel()[j]``.

    Parameters
    ----------
    a, b : array
        Numeric operands on one device, of any shape (they are flattened).
    out : array, optional
        NumPy's output array (the namespace function); it is also returned.

    Returns
    -------
    array
        Shape ``(a.size, b.size)``, of the promoted dtype.

    Raises
    ------
    TypeError
        An operand is not array-like or not of a numeric dtype.
    ValueError
        The operands are on different devices.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.outer(clnp.asarray([1, 2]), clnp.asarray([[1, 2], [3, 4]])))
    [[1 2 3 4]
     [2 4 6 8]]
    """
    _check_pair(a, b, "outer")
    from .elementwise import multiply
    from .manipulation import reshape
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))


def vdot(a: Any, b: Any, /) -> Any:
    """NumPy's ``vdot``: the dot product of the flattened arrays, conjugating ``a``.

    Parameters
    ----------
    a, b : array
        Numeric operands of equal size on one device.

    Returns
    -------
    array
        A zero-dimensional array of the promoted dtype.

    Raises
    ------
    TypeError
        An operand is not array-like or not of a numeric dtype.
    ValueError
        The sizes differ, or the operands are on different devices.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.vdot(clnp.asarray([[1, 2], [3, 4]]), clnp.asarray([[1, 1], [1, 1]])))
    10
    >>> a = clnp.asarray([1 + 2j], dtype=clnp.complex64)
    >>> print(clnp.vdot(a, a))
    (5+0j)
    """
    _check_pair(a, b, "vdot")
    if a.size != b.size:
        raise ValueError(f"vdot: arrays of shapes {a.shape} and {b.shape} have different "
                         f"sizes")
    from .manipulation import reshape
    return vecdot(reshape(a, (-1,)), reshape(b, (-1,)))


def matvec(x1: Any, x2: Any, /) -> Any:
    """NumPy's ``matvec``: matrix-vector products of stacks, ``(..., M, N) x (..., N) ->
    (..., M)`` (batch dimensions broadcast).

    Parameters
    ----------
    x1 : array
        Matrices, shape ``(..., M, N)``, of a numeric dtype.
    x2 : array
        Vectors, shape ``(..., N)``, on ``x1``'s device.

    Returns
    -------
    array
        Shape ``(..., M)``, of the promoted dtype.

    Raises
    ------
    TypeError
        An operand is not array-like or not of a numeric dtype.
    ValueError
        ``x1`` has fewer than two dimensions or ``x2`` none, the sizes do not match or
        the batch dimensions do not broadcast, or the operands are on different devices.

    Examples
    --------
    >>> import clnp
    >>> m = clnp.asarray([[1, 2], [3, 4]])
    >>> print(clnp.matvec(m, clnp.asarray([[1, 0], [0, 1]])))
    [[1 3]
     [2 4]]
    """
    _check_pair(x1, x2, "matvec")
    if x1.ndim < 2 or x2.ndim < 1:
        raise ValueError(f"matvec: x1 must have at least 2 dimensions and x2 at least 1; got "
                         f"shapes {x1.shape} and {x2.shape}")
    if x1.shape[-1] != x2.shape[-1]:
        raise ValueError(f"matvec: the last dimensions of x1 and x2 differ: shapes {x1.shape} "
                         f"and {x2.shape} ({x1.shape[-1]} != {x2.shape[-1]})")
    r = matmul(x1, primitive("reshape").bind(x2, shape=x2.shape + (1,)))
    return primitive("reshape").bind(r, shape=r.shape[:-1])


def vecmat(x1: Any, x2: Any, /) -> Any:
    """NumPy's ``vecmat``: vector-matrix products of stacks, conjugating the vector,
    ``(..., M) x (..., M, N) -> (..., N)`` (batch dimensions broadcast).

    Parameters
    ----------
    x1 : array
        Vectors, shape ``(..., M)``, of a numeric dtype.
    x2 : array
        Matrices, shape ``(..., M, N)``, on ``x1``'s device.

    Returns
    -------
    array
        Shape ``(..., N)``, of the promoted dtype.

    Raises
    ------
    TypeError
        An operand is not array-like or not of a numeric dtype.
    ValueError
        ``x1`` has no dimension or ``x2`` fewer than two, the sizes do not match or
        the batch dimensions do not broadcast, or the operands are on different devices.

    Examples
    --------
    >>> import clnp
    >>> m = clnp.asarray([[1, 2], [3, 4]])
    >>> print(clnp.vecmat(clnp.asarray([1, 1]), m))
    [4 6]
    """
    _check_pair(x1, x2, "vecmat")
    if x1.ndim < 1 or x2.ndim < 2:
        raise ValueError(f"vecmat: x1 must have at least 1 dimension and x2 at least 2; got "
                         f"shapes {x1.shape} and {x2.shape}")
    if x1.shape[-1] != x2.shape[-2]:
        raise ValueError(f"vecmat: the last dimension of x1 and the second-to-last of x2 "
                         f"differ: shapes {x1.shape} and {x2.shape} ({x1.shape[-1]} != "
                         f"{x2.shape[-2]})")
    if dkind(x1.dtype) == "c":
        from .elementwise import conj
        x1 = conj(x1)
    r = matmul(primitive("reshape").bind(x1, shape=x1.shape[:-1] + (1,) + x1.shape[-1:]), x2)
    return primitive("reshape").bind(r, shape=r.shape[:-2] + r.shape[-1:])


def imatmul(x: Any, other: Any) -> Any:
    """``x @= other``: NumPy's ``matmul(x, other, out=x, casting="same_kind")``. The product
    must keep x's shape; it is computed in the promoted dtype and cast back to x's dtype
    within a kind (a float64 product into float32 ``x``), a cast across kinds raises
    TypeError. Eager arrays are written in place (the product goes to a new buffer first, so
    ``x @= x`` is safe), tracers are rebound functionally."""
    from .inplace import check_cast
    if is_array(other) and other.ndim >= 1 and x.ndim >= 1:
        # the dtype check comes first, from the operands alone, as in NumPy
        check_cast("matmul", dt.promote(x.dtype, other.dtype), x.dtype)
    r = matmul(x, other)
    if r.shape != x.shape:
        raise ValueError(f"in-place matmul (@=): the product of shapes {x.shape} and "
                         f"{other.shape} has shape {r.shape}, not the left operand's shape")
    check_cast("matmul", r.dtype, x.dtype)
    from .._core.array import Array
    if not isinstance(x, Array) or not isinstance(r, Array):
        return r if r.dtype == x.dtype else primitive("convert_element_type").bind(
            r, dtype=x.dtype)
    from .._core.eager import copy_into
    copy_into(x, r)
    return x

# the core's methods implemented here (clnp/_core/attached.py)
_attached.attach(imatmul=imatmul)
