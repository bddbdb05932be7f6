"""NumPy's ufunc objects for clnp's elementwise functions.

One :class:`ufunc` per row of the op table (``clnp._kernels.op_table``), made by
``clnp._array_api.elementwise``: calling it binds the op's primitive exactly as the plain
function did, so ``clnp_grad`` traces, differentiates and batches it. The methods map onto
existing primitives wherever one exists (``add.reduce`` is ``sum``, ``multiply.accumulate``
is ``cumprod``, ``maximum.reduce`` is ``max``, ``outer`` is a broadcast call); the remaining
reductions, scans and segmented reductions run the op's own C template as a sequential fold
on the device (``clnp._routines.ufunc_methods``), in NumPy's left-to-right order, and ``at`` updates in
place with atomics or sort-and-segment. Under a transformation (traced operands) the folds
are composed from elementwise primitives instead, so they stay differentiable; ``at``
mutates its operand and therefore needs concrete arrays.
"""
from __future__ import annotations

import ast
import inspect
import math
from typing import Any, Callable

import numpy as np

from .._core import dtypes as dt
from .._kernels import op_table as _ops
from .._core.array import Array
from .._core.checks import _prefix_message, is_array, normalize_axes, normalize_axis
from .._core.prims import EVAL, current_interpreter, primitive
from .._core.dtypes import kind as dkind
from .._core.namespace import namespace as _ns


class _NoValue:
    """Marks an argument that was not passed (``initial`` may legitimately be None)."""

    def __repr__(self) -> str:
        return "<no value>"


NoValue = _NoValue()

# ops whose reductions have a dedicated primitive (``reduce``; op name)
_REDUCTION = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
              "logical_and": "all", "logical_or": "any"}
_SCAN = {"add": "cumsum", "multiply": "cumprod"}
# reductions of reorderable ops over fewer rows than this, each longer than _LONG_ROW, take
# the parallel scan instead of one sequential fold per row
_FEW_ROWS, _LONG_ROW = 64, 4096
_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")
_ARRAY_LIKE = (list, tuple, range)
_TYPE_ORDER = "?bBhHiIlLqQefdgFDG"     # NumPy's order of ``ufunc.types``




def _host_or_device(x: Any) -> bool:
    return is_array(x) or isinstance(x, np.ndarray)


def _bool_loop(name: str, fn: Callable[..., Any],
               args: tuple[Any, ...]) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """The function and operands NumPy's boolean loop uses when every operand is boolean
    (else ``fn`` and ``args`` unchanged)."""
    if not all(isinstance(a, (bool, np.bool_)) or (
            (is_array(a) or isinstance(a, np.ndarray)) and a.dtype == np.bool_)
            for a in args):
        return fn, args
    if name in _ops.BOOL_LOGICAL:
        return getattr(_ns(), _ops.BOOL_LOGICAL[name]), args
    return fn, tuple(int(a) if isinstance(a, (bool, np.bool_)) else a.astype(np.int8)
                     for a in args)


_COMPLEX_ORDER = frozenset({"less", "less_equal", "greater", "greater_equal", "maximum",
                            "minimum", "fmax", "fmin"})


def _complex_order(name: str, args: tuple[Any, ...]) -> Any:
    """NumPy's order of complex values (lexicographic: real parts, then imaginary parts),
    composed from real ops; None when the operands do not promote to complex."""
    ns = _ns()
    d = ns.result_type(*args)
    if d.kind != "c":
        return None
    dev = next(a.device for a in args if is_array(a))
    a, b = (ns.asarray(v, dtype=d, device=dev) for v in args)
    ar, ai, br, bi = ns.real(a), ns.imag(a), ns.real(b), ns.imag(b)
    nan_a = ns.logical_or(ns.isnan(ar), ns.isnan(ai))
    nan_b = ns.logical_or(ns.isnan(br), ns.isnan(bi))
    no_nan = ns.logical_not(ns.logical_or(nan_a, nan_b))
    if name in ("less", "less_equal", "minimum", "fmin"):
        strict, tie = ns.less(ar, br), (ns.less(ai, bi) if name == "less"
                                        else ns.less_equal(ai, bi))
    else:
        strict, tie = ns.greater(ar, br), (ns.greater(ai, bi) if name == "greater"
                                           else ns.greater_equal(ai, bi))
    # a NaN in either part makes the comparison False (a NaN real part fails both terms)
    cmp = ns.logical_or(ns.logical_and(strict, no_nan), ns.logical_and(ns.equal(ar, br), tie))
    if name in ("less", "less_equal", "greater", "greater_equal"):
        return cmp
    # maximum/minimum propagate a NaN operand (the first one); fmax/fmin ignore one
    keep_a = ns.logical_or(nan_a, cmp) if name in ("maximum", "minimum") else \
        ns.logical_or(nan_b, cmp)
    return ns.where(keep_a, a, b)


def _call_loop(name: str, fn: Callable[..., Any],
               args: tuple[Any, ...]) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """The function and operands ``__call__`` runs for ``args``: NumPy's boolean loops and
    its complex order where the op table's loop has neither."""
    if name in _ops.BOOL_LOGICAL or name in _ops.BOOL_INT8:
        fn, args = _bool_loop(name, fn, args)
    if name in _COMPLEX_ORDER and any(
            isinstance(a, complex) or getattr(getattr(a, "dtype", None), "kind", "") == "c"
            for a in args):
        fn = lambda *a: _complex_order(name, a)      # noqa: E731
    return fn, args


def _operands(name: str, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Lists/tuples become NumPy arrays (NumPy's dtype rules; the elementwise route uploads
    them next to the device operand); when no operand is an array, the first is uploaded
    with its default dtype, as NumPy makes ``np.sqrt(2)`` a float64 computation."""
    if any(isinstance(a, _ARRAY_LIKE) for a in args):
        device = next((a.device for a in args if is_array(a)), None)
        args = tuple(_sequence_operand(a, device) if isinstance(a, _ARRAY_LIKE) else a
                     for a in args)
    if not any(_host_or_device(a) for a in args):
        k = next((i for i, a in enumerate(args)
                  if isinstance(a, (bool, int, float, complex, np.generic))), None)
        if k is None:
            raise TypeError(f"{name}: unsupported operand types "
                            f"{', '.join(type(a).__name__ for a in args)}")
        args = args[:k] + (_ns().asarray(args[k]),) + args[k + 1:]
    return args


def _sequence_operand(seq: Any, device: Any) -> np.ndarray:
    """A list/tuple operand as a NumPy array whose Python floats and complexes take the
    device's default float and complex dtypes, as ``clnp.asarray`` gives them (NumPy's
    float64/complex128 where the device has fp64; a device without it is never asked for
    float64 that the user did not request)."""
    host = np.asarray(seq)
    if dkind(host.dtype) not in "fc":
        return host
    dev = device if device is not None else _ns().default_device()
    default = dev.default_float if dkind(host.dtype) == "f" else dev.default_complex
    return host if host.dtype == default else host.astype(default)


def _as_array(x: Any, name: str, device: Any = None) -> Any:
    if is_array(x):
        return x
    if isinstance(x, (np.ndarray, np.generic, bool, int, float, complex) + _ARRAY_LIKE):
        return _ns().asarray(x, device=device)
    raise TypeError(f"{name}: expected an array or array-like operand; got {type(x).__name__}")


def _check_casting(casting: str, name: str) -> None:
    if casting not in _CASTINGS:
        raise ValueError(f"{name}: casting must be one of {_CASTINGS}; got {casting!r}")


def _concrete(*xs: Any) -> bool:
    return current_interpreter() is EVAL and all(isinstance(x, Array) for x in xs
                                                 if x is not None)


def write_out(name: str, result: Any, out: Any, casting: str = "same_kind") -> Any:
    """NumPy's ``out=``: ``result`` cast (under ``casting``) and broadcast into ``out``."""
    if isinstance(out, tuple):
        if len(out) != 1:
            raise ValueError(f"{name}: out must be an array or a 1-tuple; got {len(out)} "
                             f"entries")
        out = out[0]
    if out is None:
        return result
    if not isinstance(out, Array):
        if is_array(out):
            raise TypeError(f"{name}: out= writes in place, which a traced value cannot be; "
                            f"use the returned array inside transformations")
        raise TypeError(f"{name}: out must be a clnp array; got {type(out).__name__}")
    if not np.can_cast(result.dtype, out.dtype, casting):
        raise TypeError(f"Cannot cast ufunc '{name}' output from {result.dtype!r} to "
                        f"{out.dtype!r} with casting rule '{casting}'")
    from .._core.eager import broadcast_shapes
    try:
        fits = broadcast_shapes(result.shape, out.shape) == out.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{name}: non-broadcastable output operand with shape {out.shape} "
                         f"doesn't match the broadcast shape {result.shape}")
    if result.dtype != out.dtype:
        result = result.astype(out.dtype)
    out[...] = result
    return out


class _InstanceDoc:
    """The ``__doc__`` of a ufunc instance, written on its first read. The namespace's 90
    docstrings print their examples through NumPy, which cost 0.02 s of ``import clnp``
    when they were all written at import; ``help()``, ``inspect.getdoc`` and doctest read
    them through this descriptor as before. On the class, it gives the class's own docstring.
    """

    def __init__(self, class_doc: str | None):
        self.class_doc = class_doc

    def __get__(self, obj: Any, owner: type | None = None) -> str | None:
        if obj is None:
            return self.class_doc
        doc = obj.__dict__.get("_doc")
        if callable(doc):
            doc = obj.__dict__["_doc"] = doc()
        return doc

    def __set__(self, obj: Any, value: str | Callable[[], str] | None) -> None:
        obj.__dict__["_doc"] = value


class ufunc:
    """A universal function: an elementwise op with NumPy's ufunc interface.

    Instances exist for every op of the elementwise table and for NumPy's ufuncs clnp
    composes (``fmax``, ``rint``, ...); they are the namespace's functions (``clnp.add``
    is one, ``isinstance(clnp.add, clnp.ufunc)``). See docs/ufuncs.md.

    Attributes
    ----------
    nin, nout, nargs : int
        Inputs, outputs (1) and their sum.
    identity : scalar or None
        NumPy's identity of the op (``add``: 0), from its table row.
    types : list of str
        Loops as NumPy lists them (``'ff->f'``); ``ntypes`` counts them.
    signature : None
        Elementwise (not a generalized ufunc).

    Methods
    -------
    __call__(*args, out=None, where=True, casting='same_kind', order='K', dtype=None)
    reduce, accumulate, reduceat, outer, at

    Examples
    --------
    >>> import clnp as np
    >>> np.add.nin, np.add.identity, int(np.add.reduce(np.asarray([1, 2, 3])))
    (2, 0, 6)
    """

    nout = 1
    signature = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.__doc__ = _InstanceDoc(cls.__dict__.get("__doc__"))

    def __init__(self, rec: _ops.EwOp, fn: Callable[..., Any],
                 doc: str | Callable[[], str]):
        self._rec = rec
        self._op = rec.name
        # a row of the op table (C template: device folds, at kernels), or a composite
        # function of clnp's NumPy layer (its methods compose __call__)
        self._table = _ops.OPS.get(rec.name) is rec
        self._fn = fn
        self.nin = rec.nin
        self.nargs = rec.nin + 1
        self.identity = rec.identity
        self.__name__ = self.__qualname__ = rec.ref.__name__
        self.__doc__ = doc      # a string, or a function writing it on first read
        self._types: list[str] | None = None
        P = inspect.Parameter
        ins = ["x"] if rec.nin == 1 else ["x1", "x2"]
        self.__signature__ = inspect.Signature(
            [P(n, P.POSITIONAL_ONLY) for n in ins] +
            [P("out", P.POSITIONAL_OR_KEYWORD, default=None)] +
            [P(n, P.KEYWORD_ONLY, default=v) for n, v in (
                ("where", True), ("casting", "same_kind"), ("order", "K"), ("dtype", None),
                ("subok", True), ("signature", None))])

    def __repr__(self) -> str:
        return f"<ufunc '{self.__name__}'>"

    def __reduce__(self) -> str:
        return self.__name__       # pickled by name, as NumPy's ufuncs are

    # ------------------------------------------------------------------ type information
    @property
    def types(self) -> list[str]:
        """The loops, as NumPy lists them (``'ff->f'``): one per input dtype the op
        computes in directly (composites: NumPy's loops over clnp's dtypes)."""
        if self._types is None and not self._table:
            chars = {d.char for d in dt.ALL}
            self._types = [t for t in self._rec.ref.types
                           if set(t.replace("->", "")) <= chars]
        if self._types is None:
            out = []
            # bfloat16 ('E') has loops in clnp, but NumPy's .types never lists it (ml_dtypes
            # registers its loops with the dtype)
            for d in sorted((d for d in dt.ALL if d.char in _TYPE_ORDER),
                            key=lambda d: _TYPE_ORDER.index(d.char)):
                if d not in dt.CATEGORIES[self._rec.category]:
                    continue
                r = {"same": d, "bool": dt.bool_,
                     "real": {"complex64": dt.float32,
                              "complex128": dt.float64}.get(d.name, d)}[self._rec.out]
                out.append(d.char * self.nin + "->" + r.char)
            self._types = out
        return list(self._types)

    @property
    def ntypes(self) -> int:
        return len(self.types)

    # ------------------------------------------------------------------ __call__
    def __call__(self, *args: Any, out: Any = None, where: Any = True,
                 casting: str = "same_kind", order: str = "K", dtype: Any = None,
                 subok: bool = True, signature: Any = None) -> Any:
        """Apply the op elementwise with NumPy's ufunc keywords (each ufunc's own docstring,
        ``help(clnp.add)``, describes its op).

        Parameters
        ----------
        *args : arrays or array_likes
            ``nin`` operands (Python scalars, lists and NumPy arrays are uploaded next to the
            array operand), optionally followed by ``out`` positionally.
        out : array, optional
            Array the result is written to (cast under ``casting``); it is also returned.
        where : array_like of bool, default True
            Where False, the result keeps ``out``'s value (zero without ``out``).
        casting : {'no', 'equiv', 'safe', 'same_kind', 'unsafe'}, default 'same_kind'
            Casts allowed between the inputs, ``dtype`` and ``out``.
        order : {'K', 'A', 'C'}, default 'K'
            Results are C-ordered; ``'F'`` raises ValueError.
        dtype : dtype, optional
            Computation dtype: the inputs are cast to it first.
        subok : bool, default True
            Accepted for NumPy (clnp has no array subclasses).
        signature : None
            Choosing a loop is not supported (use ``dtype``).

        Returns
        -------
        array
            The elementwise result (``out`` when given).

        Raises
        ------
        TypeError
            A wrong number of operands, an operand dtype outside the op's category, a cast that
            ``casting`` forbids, or ``signature=``.
        ValueError
            Shapes that do not broadcast, an invalid ``casting``, or ``order='F'``.

        Examples
        --------
        >>> import clnp
        >>> x = clnp.asarray([1.0, 2.0, 3.0], dtype=clnp.float32)
        >>> print(clnp.add(x, 1))
        [2. 3. 4.]
        >>> out = clnp.zeros(3, dtype=clnp.float32)
        >>> _ = clnp.multiply(x, 2, out=out, where=clnp.asarray([True, False, True]))
        >>> print(out)
        [2. 0. 6.]
        """
        name = self.__name__
        if len(args) != self.nin:
            if len(args) == self.nin + 1 and out is None:
                out, args = args[-1], args[:-1]        # NumPy takes out positionally too
            else:
                raise TypeError(f"{name}() takes {self.nin} positional argument"
                                f"{'s' if self.nin > 1 else ''} but {len(args)} were given")
        args = _operands(name, args)
        if not self._table:
            return self._call_composite(args, out, where, casting, order, dtype, signature)
        return self._call(args, out, where, casting, order, dtype, signature)

    def _call_composite(self, args: tuple[Any, ...], *rest: Any) -> Any:
        """A composite's operands checked as a table op's are before it runs: its inner ops
        would otherwise build kernels before refusing them, and name themselves."""
        name = self.__name__
        from .elementwise import _check_operands
        _check_operands(name, args)
        types: list[Any] = []
        for a in args:
            if is_array(a) or isinstance(a, (np.ndarray, np.generic)):
                types.append(np.dtype(a.dtype))
            elif isinstance(a, bool):
                types.append(np.dtype(bool))
            elif isinstance(a, (int, float, complex)):
                types.append(type(a))
            else:
                raise TypeError(f"{name}: unsupported operand type {type(a).__name__}; "
                                f"expected an array, a Python scalar or a NumPy array/scalar")
        if rest[4] is None:     # dtype= casts first; NumPy's check then applies to the cast
            try:
                self._rec.ref.resolve_dtypes(tuple(types) + (None,) * self.nout)
            except TypeError:
                got = ", ".join(t.__name__ if isinstance(t, type) else str(t) for t in types)
                raise TypeError(f"{name}: not supported for input dtype{'s' * (len(types) > 1)} "
                                f"{got} (NumPy's {name} has no loop for them)") from None
        try:
            return self._call(args, *rest)
        except (TypeError, ValueError, IndexError) as e:
            _prefix_message(e, name, name)
            raise

    def _call(self, args: tuple[Any, ...], out: Any, where: Any, casting: str, order: str,
              dtype: Any, signature: Any) -> Any:
        name = self.__name__
        fn, args = _call_loop(name, self._fn, args)
        if out is None and where is True and dtype is None and signature is None:
            if order not in ("K", "A", "C", "F"):
                raise ValueError(f"{name}: order must be one of 'K', 'A', 'C', 'F'; got "
                                 f"{order!r}")
            r = fn(*args)
            if order == "F" and r.ndim > 1:
                raise ValueError(f"{name}: order='F' is not supported: clnp computes results "
                                 f"in C order (call the function without order=)")
            return r
        _check_casting(casting, name)
        if signature is not None:
            raise TypeError(f"{name}: signature= (choosing a loop) is not supported; use "
                            f"dtype= to pick the computation dtype")
        if order not in ("K", "A", "C"):
            raise ValueError(f"{name}: order={order!r} is not supported: clnp computes "
                             f"results in C order")
        if dtype is not None:
            args = self._cast_inputs(args, dtype, casting)
        r = fn(*args)
        if where is not True:
            r = self._masked(r, where, out, casting)
        return write_out(name, r, out, casting)

    def _cast_inputs(self, args: tuple[Any, ...], dtype: Any, casting: str) -> tuple[Any, ...]:
        d = dt.as_dtype(dtype, self.__name__)
        res = []
        for a in args:
            if isinstance(a, np.ndarray):
                a = _ns().asarray(a)
            if is_array(a) and a.dtype != d:
                if not np.can_cast(a.dtype, d, casting):
                    raise TypeError(f"Cannot cast ufunc '{self.__name__}' input from "
                                    f"{a.dtype!r} to {d!r} with casting rule '{casting}'")
                a = a.astype(d)
            elif isinstance(a, (bool, int, float, complex, np.generic)):
                a = _ns().asarray(a, dtype=d, device=next(
                    (b.device for b in args if is_array(b)), None))
            res.append(a)
        return tuple(res)

    def _masked(self, r: Any, where: Any, out: Any, casting: str) -> Any:
        ns = _ns()
        mask = _as_array(where, self.__name__, r.device)
        if mask.dtype != dt.bool_:
            raise TypeError(f"{self.__name__}: where= must be a boolean array; got "
                            f"{mask.dtype}")
        base = out[0] if isinstance(out, tuple) else out
        if base is None:
            base = ns.zeros(r.shape, dtype=r.dtype, device=r.device)
        elif base.dtype != r.dtype:
            if not np.can_cast(r.dtype, base.dtype, casting):
                raise TypeError(f"Cannot cast ufunc '{self.__name__}' output from "
                                f"{r.dtype!r} to {base.dtype!r} with casting rule "
                                f"'{casting}'")
            r = r.astype(base.dtype)
        return ns.where(mask, r, base)

    # ------------------------------------------------------------------ reduce
    def _method_loop(self, method: str, *operands: Any) -> Callable[..., Any] | None:
        """``__call__``'s function where the methods cannot run the op table's loop on
        ``operands``: comparisons of booleans (NumPy's bool loop; ``maximum``, ``add``...
        of booleans are ``logical_or``...), ``maximum``/``minimum``
        of complex values (NumPy's complex order) and, for ``at``, comparisons with a
        complex operand and logical ops of non-booleans (which ``at`` casts back to
        ``a.dtype``). None where the table's loop is NumPy's."""
        name = self.__name__

        def kind(a: Any) -> str:
            if isinstance(a, (bool, np.bool_)):
                return "b"
            if isinstance(a, complex):
                return "c"
            return getattr(getattr(a, "dtype", None), "kind", "")
        kinds = [kind(a) for a in operands]
        comparison = name in ("less", "less_equal", "greater", "greater_equal")
        boolean = all(k == "b" for k in kinds)
        if not (((comparison or name in _ops.BOOL_LOGICAL) and boolean) or
                ("c" in kinds and name in _COMPLEX_ORDER and (method == "at" or not comparison))
                or (method == "at" and name.startswith("logical_") and
                    any(k != "b" for k in kinds))):
            return None

        def loop(*xs: Any) -> Any:
            fn, ys = _call_loop(name, self._fn, xs)
            return fn(*ys)
        return loop

    def _binary_only(self, method: str) -> None:
        if self.nin != 2:
            raise ValueError(f"{method} only supported for binary functions; "
                             f"{self.__name__} takes {self.nin} input")

    def _method_dtype(self, x: Any, dtype: Any, method: str) -> np.dtype:
        """The computation dtype of reduce/accumulate/reduceat: ``dtype`` if given, else
        NumPy's choice (add and multiply widen booleans and small integers to 64 bits)."""
        if dtype is not None:
            return dt.as_dtype(dtype, f"{self.__name__}.{method}")
        d = x.dtype
        ref = self._rec.ref
        if isinstance(ref, np.ufunc) and dkind(d) == d.kind:
            # NumPy's own loop choice for a reduction (divide of ints folds in float64,
            # float_power in float64, ldexp has no (x, x) loop); bfloat16 keeps clnp's rule
            try:
                d = np.dtype(ref.resolve_dtypes((None, d, None), reduction=True)[2])
            except TypeError as e:
                raise TypeError(f"{self.__name__}.{method}: {e}") from None
            if d in (dt.float64, dt.complex128) and not x.device.has_fp64:
                d = x.device.default_float if d == dt.float64 else x.device.default_complex
            return d
        if self._op in ("add", "multiply") and dkind(d) in "biu" and d.itemsize < 8:
            return dt.uint64 if dkind(d) == "u" else dt.int64
        if self._op in ("add", "multiply") and dkind(d) == "b":
            return dt.int64
        return d

    def _fold_dtype(self, x: Any, method: str) -> np.dtype:
        """The compute dtype of a generic fold of ``x`` (already in the requested dtype):
        the op's result type for two such operands, which must equal its input type."""
        from .._core.promotion import resolve
        compute, out, _ = resolve(self._rec, (x, x))
        if out != compute or compute != x.dtype:
            raise TypeError(f"{self.__name__}.{method}: the op maps {x.dtype} operands to "
                            f"{out}, so it cannot {method} them (NumPy: no loop matching "
                            f"the specified signature)")
        return compute

    def reduce(self, array: Any, axis: Any = 0, dtype: Any = None, out: Any = None,
               keepdims: bool = False, initial: Any = NoValue, where: Any = True) -> Any:
        """Reduce ``array``'s dimension(s) ``axis`` by applying the ufunc along them.

        Parameters
        ----------
        array : Array or array_like
            The values; lists and NumPy arrays are uploaded.
        axis : int, tuple of int or None, optional
            Axis (default 0), axes (ops whose row is ``reorderable`` only) or None (all).
        dtype : dtype, optional
            Computation and result dtype. Default: the input's, except that ``add`` and
            ``multiply`` widen booleans and integers narrower than 64 bits, as NumPy does.
        out : Array, optional
            Written with the result (``same_kind`` casting) and returned.
        keepdims : bool, optional
            Keep the reduced axes with size one.
        initial : scalar, optional
            Starting value of every fold (the identity when omitted; ops without one start
            from the first element).
        where : array_like of bool, optional
            Elements that take part (broadcast to ``array``); ops without an identity need
            ``initial``.

        Returns
        -------
        Array
            The reduction: ``add``, ``multiply``, ``maximum``, ``minimum``, ``logical_and``,
            ``logical_or`` through the ``reduce`` primitive (sum, prod, max, min, all, any);
            other ops fold left to right on the device (``subtract.reduce`` is
            ``a[0] - a[1] - ...``), or compose elementwise calls under transformations.

        Raises
        ------
        ValueError
            A unary ufunc; several axes for an op that is not reorderable; an empty reduction
            without identity or ``initial``; ``where`` without an identity or ``initial``.
        TypeError
            An op whose result dtype differs from its operands' (``less.reduce`` of ints).

        Examples
        --------
        >>> import numpy, clnp as np
        >>> x = np.asarray([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        >>> print(numpy.asarray(np.add.reduce(x)))
        [5. 7. 9.]
        >>> print(numpy.asarray(np.subtract.reduce(x, axis=1)))
        [-4. -7.]
        >>> float(np.maximum.reduce(x, axis=None, initial=10.0))
        10.0
        """
        name = f"{self.__name__}.reduce"
        self._binary_only("reduce")
        x = _as_array(array, name)
        if x.ndim == 0 and isinstance(axis, (int, np.integer)) and axis in (0, -1):
            axis = ()     # NumPy: an int axis of a 0-d array reduces nothing (a tuple raises)
        axes = normalize_axes(axis, x.ndim, name)
        d = self._method_dtype(x, dtype, "reduce")      # NumPy: a dtype error comes first
        if len(axes) > 1 and not self._rec.reorderable:
            raise ValueError(f"reduction operation '{self.__name__}' is not reorderable, so "
                             f"at most one axis may be specified")
        if x.dtype != d and self._op not in ("logical_and", "logical_or"):
            x = x.astype(d)
        init = None if initial is NoValue else initial
        mask = None
        if where is not True:
            mask = _as_array(where, name, x.device)
            if mask.dtype != dt.bool_:
                raise TypeError(f"{name}: where= must be a boolean array; got {mask.dtype}")
            if init is None and self.identity is None:
                raise ValueError(f"reduction operation '{self.__name__}' does not have an "
                                 f"identity, so to use a where mask one has to specify "
                                 f"'initial'")
            mask = _ns().broadcast_to(mask, x.shape)
        nred = math.prod(x.shape[a] for a in axes)
        if init is None and self.identity is not None and nred == 1 and \
                (not axes or self._op not in _REDUCTION):
            # NumPy 2 starts a reduction from the identity, which shows where one element is
            # reduced (gcd.reduce([-4]) is 4, hypot.reduce([-1.0]) is 1.0; add's only changes
            # the sign of -0.0): longer folds keep their fast paths
            init = self._identity_of(x.dtype)
        if nred == 0 and init is None and self.identity is None:
            raise ValueError(f"zero-size array to reduction operation {self.__name__} which "
                             f"has no identity")
        loop = self._method_loop("reduce", x, x)
        if self._op in _REDUCTION and (loop is None or x.dtype == dt.bool_):
            r = self._reduce_primitive(x, axes, d, init, mask)
        else:
            r = self._reduce_fold(x, axes, init, mask, nred, loop)
            if r.dtype != x.dtype:
                raise TypeError(f"{name}: the op maps {x.dtype} operands to {r.dtype}, so "
                                f"it cannot reduce them (NumPy: no loop matching the "
                                f"specified signature)")
        if keepdims:
            r = _ns().reshape(r, tuple(1 if i in axes else n for i, n in enumerate(x.shape)))
        return write_out(name, r, out)

    def _identity_of(self, d: np.dtype) -> Any:
        """The identity as a value of dtype ``d``: NumPy casts it unsafely, so
        ``bitwise_and``'s -1 is 255 for uint8."""
        ident = self.identity
        if isinstance(ident, int) and not isinstance(ident, bool) and dkind(d) in "u":
            return int(np.asarray(ident).astype(d))
        return ident

    def _reduce_primitive(self, x: Any, axes: tuple[int, ...], d: np.dtype, init: Any,
                          mask: Any) -> Any:
        ns = _ns()
        red = _REDUCTION[self._op]
        if mask is not None:
            # masked-out elements become the identity (max/min have none: ``initial``,
            # which they may meet twice)
            fill = self._identity_of(x.dtype) if self.identity is not None else init
            x = ns.where(mask, x, fill)
        nred = math.prod(x.shape[a] for a in axes)
        if red in ("max", "min") and nred == 0:
            shape = tuple(n for i, n in enumerate(x.shape) if i not in axes)
            return ns.full(shape, init, dtype=x.dtype, device=x.device)
        if red in ("all", "any"):
            acc = out_dtype = dt.bool_
        else:
            out_dtype = d
            acc = dt.float32 if d in dt.HALF else d
        r = primitive("reduce").bind(x, op=red, axes=tuple(sorted(axes)), acc_dtype=acc,
                                     out_dtype=out_dtype)
        if init is not None:
            r = self._fn(r, init)
            if r.dtype != out_dtype and red not in ("all", "any"):
                r = r.astype(out_dtype)
        return r

    def _reduce_fold(self, x: Any, axes: tuple[int, ...], init: Any, mask: Any,
                     nred: int, loop: Callable[..., Any] | None = None) -> Any:
        """The fold of ``axes``: the op table's device fold, or ``loop`` (the composite's
        function, or :meth:`_method_loop`'s) composed when given or traced."""
        ns = _ns()
        table = self._table and loop is None
        fn = loop or self._fn
        compute = self._fold_dtype(x, "reduce") if table else x.dtype
        kept = [i for i in range(x.ndim) if i not in axes]
        kshape = tuple(x.shape[i] for i in kept)
        if len(axes) != 1:       # one folded axis last (a copy; reorderable ops only)
            perm = tuple(kept) + tuple(sorted(axes))
            x = ns.reshape(ns.permute_dims(x, perm), kshape + (nred,))
            if mask is not None:
                mask = ns.reshape(ns.permute_dims(mask, perm), kshape + (nred,))
            ax = len(kshape)
        else:
            ax = axes[0]
        if init is None and (nred == 0 or mask is not None):
            init = self._identity_of(compute)
        if nred == 0:
            return ns.full(kshape, init, dtype=compute, device=x.device)
        if table and self._rec.reorderable and mask is None and init is None and \
                nred > _LONG_ROW and math.prod(kshape) < _FEW_ROWS and _concrete(x):
            # a few long rows: a sequential fold per row would leave the device idle; the
            # parallel scan's last element is the reduction
            from .._routines.ufunc_methods import scan
            r = scan(x, self._op, ax)
            return r[(slice(None),) * ax + (-1,)]
        if table and _concrete(x, mask):
            from .._core.folds import fold
            r = fold(x, self._op, ax, [0], [nred], "reduce", init, mask)
            return ns.reshape(r, kshape)
        if not table and self._rec.reorderable and mask is None:
            r = self._tree(x, ax, fn)
            return r if init is None else fn(r, init)
        return self._compose_fold(x, ax, 0, nred, init, mask, fn)

    def _tree(self, x: Any, ax: int, fn: Callable[..., Any]) -> Any:
        """Pairwise reduction along ``ax`` (reorderable ops: log2(n) calls). Neighbours are
        paired, so every step keeps the elements' order: an associative op that is not
        commutative in its ties or NaNs (complex maximum keeps the first NaN) folds as
        NumPy's left-to-right loop does."""
        ns = _ns()

        def part(a: Any, lo: int, hi: int | None, step: int = 1) -> Any:
            return a[(slice(None),) * ax + (slice(lo, hi, step),)]
        while x.shape[ax] > 1:
            n = x.shape[ax]
            h = n // 2
            r = fn(part(x, 0, 2 * h, 2), part(x, 1, 2 * h, 2))
            x = ns.concat([r, part(x, 2 * h, None)], axis=ax) if n % 2 else r
        return x[(slice(None),) * ax + (0,)]

    def _compose_fold(self, x: Any, ax: int, start: int, stop: int, init: Any,
                      mask: Any, fn: Callable[..., Any] | None = None) -> Any:
        """The fold of ``x[start:stop]`` along ``ax`` from elementwise primitives (traced
        operands: differentiable and batchable), left to right as NumPy applies it."""
        def at(a: Any, i: int) -> Any:
            return a[(slice(None),) * ax + (i,)]
        acc = None
        if init is not None:
            shape = x.shape[:ax] + x.shape[ax + 1:]
            acc = _ns().full(shape, init, dtype=x.dtype, device=x.device)
        for i in range(start, stop):
            v = at(x, i)
            if acc is None:
                acc = v
                continue
            nxt = (fn or self._fn)(acc, v)
            acc = nxt if mask is None else _ns().where(at(mask, i), nxt, acc)
        return acc

    # ------------------------------------------------------------------ accumulate
    def accumulate(self, array: Any, axis: int = 0, dtype: Any = None, out: Any = None) -> Any:
        """Accumulate the result of applying the ufunc along ``axis``.

        Parameters
        ----------
        array : Array or array_like
            The values (at least one dimension).
        axis : int, optional
            The axis (default 0).
        dtype : dtype, optional
            Computation and result dtype (default as for :meth:`reduce`).
        out : Array, optional
            Written with the result and returned.

        Returns
        -------
        Array
            Shaped like ``array``: element ``i`` is the reduction of elements ``0..i``.
            ``add``/``multiply`` run the ``cumsum``/``cumprod`` primitives, other ops a
            device fold storing every step.

        Raises
        ------
        ValueError
            A unary ufunc.
        TypeError
            A 0-d array or ``axis=None``; an op whose result dtype differs from its operands'.

        Examples
        --------
        >>> import numpy, clnp as np
        >>> print(numpy.asarray(np.maximum.accumulate(np.asarray([1, 3, 2, 5]))))
        [1 3 3 5]
        >>> print(numpy.asarray(np.subtract.accumulate(np.asarray([10.0, 1.0, 2.0]))))
        [10.  9.  7.]
        """
        name = f"{self.__name__}.accumulate"
        self._binary_only("accumulate")
        x = _as_array(array, name)
        if x.ndim == 0:
            raise TypeError(f"{name}: cannot accumulate on a scalar")
        if axis is None:
            raise TypeError(f"{name}: axis=None is not supported (accumulate needs one axis)")
        ax = normalize_axis(axis, x.ndim, name)
        d = self._method_dtype(x, dtype, "accumulate")
        if x.dtype != d:
            x = x.astype(d)
        loop = self._method_loop("accumulate", x, x)
        table = self._table and loop is None
        if self._op in _SCAN and dkind(x.dtype) in "iufc":
            r = primitive(_SCAN[self._op]).bind(x, axis=ax, include_initial=False)
        else:
            if table:
                self._fold_dtype(x, "accumulate")
            n = x.shape[ax]
            if x.size == 0:
                r = _ns().empty(x.shape, dtype=x.dtype, device=x.device)
            elif table and _concrete(x) and self._rec.reorderable:
                from .._routines.ufunc_methods import scan
                r = scan(x, self._op, ax)         # parallel: the op is associative
            elif table and _concrete(x):
                from .._core.folds import fold
                r = fold(x, self._op, ax, [0], [n], "accumulate")
            elif loop is not None and self._rec.reorderable:
                r = self._doubling_scan(x, ax, loop)
            else:
                r = self._compose_scan(x, ax, loop or self._fn)
        return write_out(name, r, out)

    @staticmethod
    def _doubling_scan(x: Any, ax: int, fn: Callable[..., Any]) -> Any:
        """Inclusive scan of associative ``fn`` along ``ax`` in log2(n) calls (Hillis-Steele:
        step d combines each element with the one d before it, the earlier one first)."""
        ns = _ns()
        n = x.shape[ax]

        def part(a: Any, lo: int, hi: int) -> Any:
            return a[(slice(None),) * ax + (slice(lo, hi),)]
        d = 1
        while d < n:
            x = ns.concat([part(x, 0, d), fn(part(x, 0, n - d), part(x, d, n))], axis=ax)
            d *= 2
        return x

    def _compose_scan(self, x: Any, ax: int, fn: Callable[..., Any]) -> Any:
        ns = _ns()
        parts = []
        acc = None
        for i in range(x.shape[ax]):
            v = x[(slice(None),) * ax + (i,)]
            acc = v if acc is None else fn(acc, v)
            parts.append(acc)
        return ns.stack(parts, axis=ax)

    # ------------------------------------------------------------------ reduceat
    def reduceat(self, array: Any, indices: Any, axis: int = 0, dtype: Any = None,
                 out: Any = None) -> Any:
        """Reduce the slices ``[indices[i], indices[i + 1])`` along ``axis``.

        Parameters
        ----------
        array : Array or array_like
            The values.
        indices : sequence of int or Array
            Slice starts (read on the host: they shape the result). Where
            ``indices[i] >= indices[i + 1]`` the result is ``array[indices[i]]``; the last
            slice runs to the end of the axis.
        axis : int, optional
            The axis (default 0).
        dtype : dtype, optional
            Computation and result dtype (default as for :meth:`reduce`).
        out : Array, optional
            Written with the result and returned.

        Returns
        -------
        Array
            ``array``'s shape with ``axis`` of length ``len(indices)``: one device fold per
            slice, left to right.

        Raises
        ------
        IndexError
            An index outside ``[0, array.shape[axis])``.
        TypeError
            Indices that are not a 1-d sequence of integers.

        Examples
        --------
        >>> import numpy, clnp as np
        >>> print(numpy.asarray(np.add.reduceat(np.arange(8), [0, 4, 1, 5])))
        [ 6  4 10 18]
        """
        name = f"{self.__name__}.reduceat"
        self._binary_only("reduceat")
        x = _as_array(array, name)
        ax = normalize_axis(axis, x.ndim, name)
        idx = np.asarray(indices.to_numpy() if isinstance(indices, Array) else indices)
        if idx.ndim != 1 or (idx.size and dkind(idx.dtype) not in "iu"):
            raise TypeError(f"{name}: indices must be a 1-d sequence of integers; got "
                            f"{idx.dtype} of shape {idx.shape}")
        n = x.shape[ax]
        idx = idx.astype(np.int64)
        bad = idx[(idx < 0) | (idx >= n)]
        if bad.size:
            raise IndexError(f"{name}: index {int(bad[0])} out-of-bounds in reduceat for "
                             f"axis {ax} of size {n}")
        nxt = np.append(idx[1:], n)
        ends = np.where(nxt > idx, nxt, idx + 1)
        d = self._method_dtype(x, dtype, "reduceat")
        if x.dtype != d:
            x = x.astype(d)
        loop = self._method_loop("reduceat", x, x)
        table = self._table and loop is None
        if table:
            self._fold_dtype(x, "reduceat")
        if table and _concrete(x):
            from .._core.folds import fold
            r = fold(x, self._op, ax, idx.tolist(), ends.tolist(), "reduce")
        elif not idx.size:          # no slices: nothing to stack
            r = _ns().empty(x.shape[:ax] + (0,) + x.shape[ax + 1:], dtype=x.dtype,
                            device=x.device)
        elif loop is not None and self._rec.reorderable:    # pairwise within each slice
            r = _ns().stack([self._tree(x[(slice(None),) * ax + (slice(int(s), int(e)),)],
                                        ax, loop) for s, e in zip(idx, ends)], axis=ax)
        else:
            r = _ns().stack([self._compose_fold(x, ax, int(s), int(e), None, None, loop)
                             for s, e in zip(idx, ends)], axis=ax)
        return write_out(name, r, out)

    # ------------------------------------------------------------------ outer
    def outer(self, A: Any, B: Any, /, **kwargs: Any) -> Any:
        """``op(a, b)`` for every pair ``a`` of ``A`` and ``b`` of ``B``.

        Parameters
        ----------
        A, B : Array or array_like
            The operands.
        **kwargs
            ``out``, ``where``, ``casting``, ``order``, ``dtype`` as for the call.

        Returns
        -------
        Array
            Shape ``A.shape + B.shape``: a broadcast call, so differentiable and batchable.

        Raises
        ------
        ValueError
            A unary ufunc.

        Examples
        --------
        >>> import numpy, clnp as np
        >>> print(numpy.asarray(np.multiply.outer(np.asarray([1, 2]), np.asarray([10, 20, 30]))))
        [[10 20 30]
         [20 40 60]]
        """
        name = f"{self.__name__}.outer"
        self._binary_only("outer")
        a = _as_array(A, name)
        b = _as_array(B, name, a.device)
        a = _ns().reshape(a, a.shape + (1,) * b.ndim)
        return self(a, b, **kwargs)

    # ------------------------------------------------------------------ at
    def at(self, a: Any, indices: Any, b: Any = None, /) -> None:
        """Unbuffered in-place ``a[indices] = op(a[indices], b)``.

        An element indexed ``k`` times is updated ``k`` times, in the order of the
        occurrences (``add.at`` adds every value, ``negative.at`` twice restores it).

        Parameters
        ----------
        a : Array
            Updated in place (a concrete array: not a traced value).
        indices : index
            Anything ``a[indices]`` accepts: integers, integer arrays or lists (one bounds-
            checked launch), tuples of them, slices, boolean masks.
        b : Array, array_like or scalar, optional
            Second operand of binary ufuncs, broadcast to ``a[indices]``'s shape. A Python
            scalar is an array of NumPy's default dtype for it, as in NumPy's ``at`` (not a
            weak scalar): ``add.at`` of uint8 with 300 wraps, ``nextafter.at`` of float32
            with 0.0 steps in float64.

        Returns
        -------
        None

        Raises
        ------
        TypeError
            A traced or non-clnp ``a``; complex results into a real ``a`` where any element
            is written (NumPy casts every other result to ``a.dtype`` unsafely, and so does
            clnp: ``logical_and.at`` of floats writes 0.0/1.0).
        ValueError
            ``b`` missing for a binary ufunc or given for a unary one.
        IndexError
            An index out of bounds (nothing is written).

        Examples
        --------
        >>> import numpy, clnp as np
        >>> a = np.zeros(4)
        >>> np.add.at(a, [0, 0, 2], 1.0)
        >>> print(numpy.asarray(a))
        [2. 0. 1. 0.]
        >>> np.maximum.at(a, [1, 1], np.asarray([5.0, 3.0]))
        >>> print(numpy.asarray(a))
        [2. 5. 1. 0.]
        """
        name = f"{self.__name__}.at"
        if not isinstance(a, Array):
            if is_array(a):
                raise TypeError(f"{name} updates its operand in place, which a traced value "
                                f"cannot be; use x.at[idx].add(v)-style functional updates "
                                f"(or the ufunc and scatter primitives) inside "
                                f"transformations")
            raise TypeError(f"{name}: a must be a clnp array; got {type(a).__name__}")
        if (b is None) != (self.nin == 1):
            raise ValueError(f"{name}: {'second operand needed' if b is None else 'too many operands'}"
                             f" for a ufunc with {self.nin} input(s)")
        if type(b) in (bool, int, float, complex):
            # NumPy's at makes an array of a Python scalar: no weak promotion, so
            # nextafter.at of float32 with 0.0 steps in float64 and add.at of uint8 with -1
            # wraps (the results are cast back to a's dtype)
            host = np.asarray(b)
            if host.dtype != object and a.device.supports(host.dtype):
                b = host
        ns = _ns()
        loop = self._method_loop("at", a) if b is None else self._method_loop("at", a, b)
        if loop is not None:
            logical = self.__name__.startswith("logical_") or self.__name__ in (
                "less", "less_equal", "greater", "greater_equal")
            complex_b = isinstance(b, complex) or getattr(getattr(b, "dtype", None), "kind",
                                                          "") == "c"
            refuse = not logical and complex_b and a.dtype.kind != "c"
            return self._at_rounds(a, indices, b, loop, refuse)
        off = self._index_offsets(a, indices)
        shape = off.shape
        off = ns.reshape(off, (-1,))
        from .._core.promotion import resolve
        if b is None:
            compute, res, _ = resolve(self._rec, (a,))
            bv = None
        else:
            if isinstance(b, np.ndarray) or isinstance(b, _ARRAY_LIKE):
                b = ns.asarray(np.asarray(b), device=a.device)
            if isinstance(b, np.generic):
                b = ns.asarray(b, device=a.device)
            compute, res, _ = resolve(self._rec, (a, b))
            if is_array(b):
                bv = ns.broadcast_to(b if b.dtype == compute else b.astype(compute), shape)
            else:
                bv = ns.full(shape, b, dtype=compute, device=a.device)
            bv = ns.reshape(bv, (-1,))
            if bv._offset or not bv.is_contiguous:     # the kernel reads b densely
                bv = ns.asarray(bv, copy=True)
        # NumPy's at casts its results to a's dtype unsafely (sin.at of ints truncates);
        # complex into real would drop the imaginary part, which clnp refuses instead
        if res.kind == "c" and a.dtype.kind != "c" and off.shape[0]:   # (none: nothing lost)
            raise TypeError(f"{name}: the results are {res} and a is {a.dtype}: clnp does not "
                            f"discard imaginary parts (NumPy warns and does); pass a complex "
                            f"a or a real b")
        if not self._table:
            return self._at_rounds(a, indices, b)
        from .._routines.ufunc_methods import at_add_atomic, at_segments
        if self._op == "add" and compute == a.dtype and at_add_atomic(a, off, bv):
            return None
        at_segments(a, off, bv, self._op, compute)
        return None

    def _index_offsets(self, a: Array, indices: Any) -> Any:
        """Storage offsets of ``a[indices]``: integer index arrays (the common ``at``
        forms) in one bounds-checked launch, any other index through a grid of offsets."""
        ns = _ns()
        key = indices if isinstance(indices, tuple) else (indices,)
        arrays = []
        for k in key:
            if isinstance(k, (int, np.integer)) and not isinstance(k, bool):
                k = np.asarray(k)
            if isinstance(k, (list, np.ndarray)):
                h = np.asarray(k)
                if dkind(h.dtype) not in "iu" and not (h.size == 0 and dkind(h.dtype) == "f"):
                    break
                k = ns.asarray(h.astype(np.int64), device=a.device)
            if not (isinstance(k, Array) and dkind(k.dtype) in "iu"):
                break
            arrays.append(k)
        else:
            if 0 < len(arrays) <= a.ndim:
                from .._core.eager import IndexOutOfBounds
                from .._routines.ufunc_methods import element_offsets
                try:
                    return element_offsets(a, arrays)
                except IndexOutOfBounds as e:
                    raise IndexError(f"{self.__name__}.at: index {e.value} is out of bounds "
                                     f"for axis {e.j} with size {e.size}") from None
        return self._offsets(a)[indices]

    def _at_rounds(self, a: Array, indices: Any, b: Any,
                   fn: Callable[..., Any] | None = None, refuse: bool = False) -> None:
        """``at`` of a composite (no C template): the k-th occurrences of every element
        are updated together in round k (gather, compute, scatter), which applies the op
        once per occurrence in order, as NumPy's unbuffered loop does."""
        ns = _ns()
        if not a.is_contiguous:         # work on a dense copy, then write it back
            c = ns.asarray(a, copy=True)
            self._at_rounds(c, indices, b, fn, refuse)
            a[...] = c
            return None
        off = self._index_offsets(a, indices)
        shape = off.shape
        off = ns.reshape(off, (-1,)).to_numpy()
        if refuse and len(off):      # complex results into a real a (none written: no loss)
            raise TypeError(f"{self.__name__}.at: the results are complex and a is {a.dtype}: "
                            f"clnp does not discard imaginary parts (NumPy warns and does); "
                            f"pass a complex a or a real b")
        flat = ns.reshape(a, (-1,))
        rel = off - a._offset
        bv = None
        if b is not None:
            if fn is not None and isinstance(b, (bool, int, float, complex)):
                # a Python scalar takes a's precision, as in the call (NumPy's weak scalars)
                b = ns.asarray(b, dtype=ns.result_type(a, b), device=a.device)
            bv = _as_array(b, f"{self.__name__}.at", a.device)
            bv = ns.reshape(ns.broadcast_to(bv, shape), (-1,))
        order = np.argsort(rel, kind="stable")
        srt = rel[order]
        start = np.r_[0, np.flatnonzero(srt[1:] != srt[:-1]) + 1]
        rank = np.empty(len(rel), np.int64)
        rank[order] = np.arange(len(rel)) - np.repeat(start, np.diff(np.r_[start, len(rel)]))
        for k in range(int(rank.max()) + 1 if len(rel) else 0):
            sel = np.flatnonzero(rank == k)
            pos = ns.asarray(rel[sel], device=a.device)
            cur = flat[pos]
            args = (cur,) if bv is None else (cur, bv[ns.asarray(sel, device=a.device)])
            r = (fn or self._fn)(*args)
            flat[pos] = r.astype(a.dtype) if r.dtype != a.dtype else r
        return None

    @staticmethod
    def _offsets(a: Array) -> Any:
        """int64 storage offsets of every element of ``a`` (shaped like ``a``)."""
        ns = _ns()
        off = ns.full(a.shape, a._offset, dtype=dt.int64, device=a.device)
        for k, (n, s) in enumerate(zip(a.shape, a._strides)):
            if n > 1 and s:
                r = ns.arange(0, n * s, s, dtype=dt.int64, device=a.device)
                off = off + ns.reshape(r, (n,) + (1,) * (a.ndim - k - 1))
        return off


# NumPy ufuncs that clnp implements as compositions in its NumPy layer:
# name -> (identity, reorderable)
ufunc.__doc__ = _InstanceDoc(ufunc.__doc__)   # type: ignore[assignment]

COMPOSITES: dict[str, tuple[Any, bool]] = {
    "fmax": (None, True), "fmin": (None, True), "fmod": (None, False),
    "float_power": (None, False), "heaviside": (None, False),
    "logaddexp2": (-math.inf, True), "exp2": (None, False), "fabs": (None, False),
    "rint": (None, False), "degrees": (None, False), "radians": (None, False),
    "deg2rad": (None, False), "rad2deg": (None, False),
    # issue #12 item 3 (clnp/_numpy/math.py)
    "cbrt": (None, False), "spacing": (None, False), "bitwise_count": (None, False),
    # NumPy gives lcm no identity and marks it not reorderable (reduce takes one axis)
    "gcd": (0, True), "lcm": (None, False), "ldexp": (None, False),
}
# docstring example inputs where NumPy refuses the default float ones
_EXAMPLE_INPUTS: dict[str, tuple[str, ...]] = {
    "bitwise_count": ("[7, 255]",), "gcd": ("[12, 20]", "[8, 6]"), "lcm": ("[12, 20]", "[8, 6]"),
    "ldexp": ("[1.0, 2.5]", "[3, -1]"),
}


def composite(name: str, fn: Callable[..., Any]) -> ufunc:
    """The ufunc object for NumPy-layer function ``fn`` (NumPy's ufunc ``name``)."""
    ref = getattr(np, name)
    identity, reorderable = COMPOSITES[name]
    rec = _ops.EwOp(name, ref.nin, "any", {}, ref, identity=identity, reorderable=reorderable)
    ins = "x" if ref.nin == 1 else "x1, x2"
    ins_ex = _EXAMPLE_INPUTS.get(name, ("[1.0, 2.5]",) * ref.nin)

    def doc() -> str:       # written on first read (_InstanceDoc)
        return (f"{name}({ins}, /, out=None, *, where=True, casting='same_kind', order='K', "
                f"dtype=None)\n\n{(fn.__doc__ or '').strip()}\n\nA :class:`clnp.ufunc` composed "
                f"from clnp's elementwise ops: calls take NumPy's keywords; ``reduce`` (pairwise "
                f"for {'this reorderable op' if reorderable else 'reorderable ops'}, else one call "
                f"per element along the axis), ``accumulate``, ``reduceat``, ``outer`` and "
                f"``at`` compose calls.\n\nParameters\n----------\n{ins} : Array or array_like"
                f"\n    Inputs (NumPy's dtype rules).\nout, where, casting, order, dtype, subok, "
                f"signature\n    As for every ufunc (see :class:`clnp.ufunc`).\n\n"
                f"Returns\n-------\n"
                f"Array\n    The elementwise result (``out`` when given).\n\n"
                f"Examples\n--------\n>>> import numpy, clnp as np\n"
                f">>> print(numpy.round(numpy.asarray(np.{name}("
                f"{', '.join(f'np.asarray({v})' for v in ins_ex)})), 4))\n"
                f"{np.round(ref(*[np.asarray(ast.literal_eval(v)) for v in ins_ex]), 4)}\n")
    return ufunc(rec, fn, doc)


class _MultiOutputUfunc(ufunc):
    """A ufunc of two outputs (``divmod``, ``frexp``, ``modf``), composed in clnp's NumPy
    layer: calls return a tuple and take ``out`` as a tuple of two (or the outputs after the
    inputs, positionally); ``outer`` (binary ones) returns a tuple; ``reduce``,
    ``accumulate``, ``reduceat`` and ``at`` raise ValueError as NumPy's do."""

    nout = 2

    def __init__(self, rec: _ops.EwOp, fn: Callable[..., Any],
                 doc: str | Callable[[], str]):
        super().__init__(rec, fn, doc)
        self.nargs = rec.nin + self.nout

    def __call__(self, *args: Any, out: Any = None, where: Any = True,
                 casting: str = "same_kind", order: str = "K", dtype: Any = None,
                 subok: bool = True, signature: Any = None) -> Any:
        """Apply the op elementwise: a tuple of ``nout`` arrays (see :class:`clnp.ufunc`;
        ``out`` is a tuple of ``nout`` arrays or None, or the outputs follow the inputs).

        Parameters
        ----------
        *args : arrays or array_likes
            ``nin`` operands, optionally followed by the ``nout`` outputs.
        out : tuple of (Array or None), optional
            Arrays the results are written to (cast under ``casting``).
        where, casting, order, dtype, subok, signature
            As for every ufunc.

        Returns
        -------
        tuple of Array
            The results (the ``out`` arrays where given).

        Raises
        ------
        TypeError
            A wrong number of operands or outputs, or an operand dtype NumPy has no loop for.

        Examples
        --------
        >>> import clnp
        >>> q, r = clnp.divmod(clnp.asarray([7, -7]), 2)
        >>> print(q, r)
        [ 3 -4] [1 1]
        """
        name = self.__name__
        if len(args) == self.nin + self.nout and out is None:
            out, args = tuple(args[self.nin:]), args[:self.nin]
        elif len(args) != self.nin:
            raise TypeError(f"{name}() takes from {self.nin} to {self.nin + self.nout} "
                            f"positional arguments but {len(args)} were given")
        args = _operands(name, args)
        return self._call_composite(args, out, where, casting, order, dtype, signature)

    def _call(self, args: tuple[Any, ...], out: Any, where: Any, casting: str, order: str,
              dtype: Any, signature: Any) -> Any:
        name = self.__name__
        _check_casting(casting, name)
        if signature is not None:
            raise TypeError(f"{name}: signature= (choosing a loop) is not supported; use "
                            f"dtype= to pick the computation dtype")
        if order not in ("K", "A", "C", "F"):
            raise ValueError(f"{name}: order must be one of 'K', 'A', 'C', 'F'; got {order!r}")
        if dtype is not None:
            args = self._cast_inputs(args, dtype, casting)
        results = self._fn(*args)
        # (checked after the operands, whose errors NumPy reports first; nothing is written)
        if out is None:
            out = (None,) * self.nout
        elif not isinstance(out, tuple):
            raise TypeError(f"{name}: out must be a tuple of {self.nout} arrays (or None); "
                            f"got {type(out).__name__}")
        elif len(out) != self.nout:
            raise ValueError(f"{name}: the out tuple must have exactly one entry per output "
                             f"({self.nout}); got {len(out)}")
        if order == "F" and results[0].ndim > 1:
            raise ValueError(f"{name}: order='F' is not supported: clnp computes results "
                             f"in C order (call the function without order=)")
        done = []
        for r, o in zip(results, out):
            if where is not True:
                r = self._masked(r, where, o, casting)
            done.append(write_out(name, r, o, casting))
        return tuple(done)

    def _single_output_only(self, method: str, message: str) -> None:
        if method != "at":
            self._binary_only(method)
        raise ValueError(f"{self.__name__}.{method}: {message} ({self.__name__} has "
                         f"{self.nout} outputs)")

    def reduce(self, *args: Any, **kwargs: Any) -> Any:
        """Raises ValueError: NumPy reduces with single-output ufuncs only.

        Parameters
        ----------
        *args, **kwargs
            As for :meth:`clnp.ufunc.reduce`.

        Returns
        -------
        None
            Never returns.

        Raises
        ------
        ValueError
            Always (NumPy's own method raises it).

        Examples
        --------
        >>> import clnp
        >>> clnp.divmod.reduce(clnp.asarray([1, 2]))
        Traceback (most recent call last):
        ValueError: divmod.reduce: reduce only supported for functions returning a single value (divmod has 2 outputs)
        """
        self._single_output_only("reduce", "reduce only supported for functions returning a "
                                           "single value")

    def accumulate(self, *args: Any, **kwargs: Any) -> Any:
        """Raises ValueError: NumPy accumulates with single-output ufuncs only.

        Parameters
        ----------
        *args, **kwargs
            As for :meth:`clnp.ufunc.accumulate`.

        Returns
        -------
        None
            Never returns.

        Raises
        ------
        ValueError
            Always (NumPy's own method raises it).

        Examples
        --------
        >>> import clnp
        >>> clnp.divmod.accumulate(clnp.asarray([1, 2]))
        Traceback (most recent call last):
        ValueError: divmod.accumulate: accumulate only supported for functions returning a single value (divmod has 2 outputs)
        """
        self._single_output_only("accumulate", "accumulate only supported for functions "
                                               "returning a single value")

    def reduceat(self, *args: Any, **kwargs: Any) -> Any:
        """Raises ValueError: NumPy's ``reduceat`` takes single-output ufuncs only.

        Parameters
        ----------
        *args, **kwargs
            As for :meth:`clnp.ufunc.reduceat`.

        Returns
        -------
        None
            Never returns.

        Raises
        ------
        ValueError
            Always (NumPy's own method raises it).

        Examples
        --------
        >>> import clnp
        >>> clnp.divmod.reduceat(clnp.asarray([1, 2]), [0])
        Traceback (most recent call last):
        ValueError: divmod.reduceat: reduceat only supported for functions returning a single value (divmod has 2 outputs)
        """
        self._single_output_only("reduceat", "reduceat only supported for functions "
                                             "returning a single value")

    def at(self, *args: Any, **kwargs: Any) -> None:
        """Raises ValueError: NumPy's ``at`` takes single-output ufuncs only.

        Parameters
        ----------
        *args, **kwargs
            As for :meth:`clnp.ufunc.at`.

        Returns
        -------
        None
            Never returns.

        Raises
        ------
        ValueError
            Always (NumPy's own method raises it).

        Examples
        --------
        >>> import clnp
        >>> clnp.frexp.at(clnp.asarray([1.0, 2.0]), [0])
        Traceback (most recent call last):
        ValueError: frexp.at: Only single output ufuncs supported at this time (frexp has 2 outputs)
        """
        self._single_output_only("at", "Only single output ufuncs supported at this time")


# NumPy's ufuncs of two outputs that clnp composes in its NumPy layer
MULTI_OUTPUT = ("divmod", "frexp", "modf")


def multi_output(name: str, fn: Callable[..., Any]) -> ufunc:
    """The ufunc object for NumPy-layer function ``fn`` of two outputs (NumPy's ``name``)."""
    ref = getattr(np, name)
    rec = _ops.EwOp(name, ref.nin, "any", {}, ref, identity=None, reorderable=False)
    ins = "x" if ref.nin == 1 else "x1, x2"
    summary, _, body = inspect.cleandoc(fn.__doc__ or "").partition("\n\n")
    params, sep, after = body.partition("\n\nReturns\n")
    if "\nout :" not in params:
        params += "\nout : tuple of two Arrays, optional\n    Where to write the results."
    params += ("\nwhere, casting, order, dtype, subok, signature\n    As for every ufunc (see "
               ":class:`clnp.ufunc`).")
    body = params + sep + after
    doc = (f"{name}({ins}, /, out=(None, None), *, where=True, casting='same_kind', "
           f"order='K', dtype=None)\n\n{summary}\n\nA :class:`clnp.ufunc` of {ref.nout} "
           f"outputs (``nout``): calls take NumPy's keywords, with ``out`` a tuple; "
           f"{'``outer`` returns a tuple; ' if ref.nin == 2 else ''}``reduce``, "
           f"``accumulate``, ``reduceat`` and ``at`` raise ValueError as NumPy's do."
           f"\n\n{body}")
    return _MultiOutputUfunc(rec, fn, doc)


def install_composites(namespace: dict[str, Any]) -> None:
    """Replace the NumPy layer's functions of :data:`COMPOSITES` and :data:`MULTI_OUTPUT` in
    ``namespace`` (and their aliases) by ufunc objects."""
    # NumPy's aliases are distinct ufuncs (deg2rad is not radians): one object per name
    for name, fn in [(n, namespace.get(n)) for n in COMPOSITES]:
        if fn is not None and not isinstance(fn, ufunc):
            namespace[name] = composite(name, fn)
    for name, fn in [(n, namespace.get(n)) for n in MULTI_OUTPUT]:
        if fn is not None and not isinstance(fn, ufunc):
            namespace[name] = multi_output(name, fn)
