"""NumPy's host-side function machinery: ``frompyfunc``, ``vectorize``, ``broadcast``,
``nested_iters``, ``fromstring`` and ``fromregex``.

A Python function cannot run on an OpenCL device, so ``frompyfunc`` and ``vectorize`` call it
on the host, once per element (or per core-dimension slice), on host copies of the operands:
slow, meant for small arrays and for code that already works this way in NumPy. Numeric
results are uploaded to the device of the array operands; results with no device dtype
(strings, arbitrary objects) stay on the host as NumPy's object array, which is what NumPy
returns too. ``broadcast`` computes its shape without reading any data; iterating it reads
host copies. ``nested_iters`` iterates host copies (read-only: write to a NumPy array and
upload it). ``fromstring`` and ``fromregex`` parse text on the host, then upload.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterator

import numpy as np

from .._core.array import Array
from .._array_api.creation import _device, asarray
from .._array_api.ufunc import ufunc

__all__ = ["frompyfunc", "vectorize", "broadcast", "nested_iters", "fromstring", "fromregex"]


def _device_of(*xs: Any) -> Any:
    return next((x.device for x in xs if isinstance(x, Array)), None)


def _host(x: Any) -> Any:
    if isinstance(x, Array):
        return x.to_numpy()
    if isinstance(x, (list, tuple)):
        return type(x)(_host(v) for v in x)
    return x


def _upload(res: np.ndarray, device: Any) -> Any:
    """``res`` on ``device``. Host parsing and Python floats produce float64 (complex128), as
    in NumPy; on a device without fp64 they become its default float (complex) type, as
    Python floats do everywhere in clnp, rather than an error."""
    dev = _device(device)
    if not dev.has_fp64 and res.dtype in (np.float64, np.complex128):
        res = res.astype(dev.default_float if res.dtype == np.float64 else dev.default_complex)
    return asarray(res, device=dev)


def _typed(res: Any, device: Any) -> Any:
    """A host result as clnp returns it: a numeric array (object arrays of numbers given
    NumPy's inferred dtype) uploaded to ``device``; anything else unchanged (scalars, and
    object arrays of non-numbers, which have no device dtype)."""
    if not isinstance(res, np.ndarray):
        return res
    if res.dtype == object:
        if res.size == 0:
            return res
        typed = np.array(res.tolist())
        if typed.shape != res.shape or typed.dtype.kind not in "biufc":
            return res
        res = typed
    if res.dtype.kind not in "biufc":
        return res
    return _upload(res, device)


def _typed_all(res: Any, device: Any) -> Any:
    if isinstance(res, tuple):
        return tuple(_typed(r, device) for r in res)
    return _typed(res, device)


class _pyufunc(ufunc):
    """A ufunc evaluating a Python function on the host (made by :func:`frompyfunc`)."""

    def __init__(self, func: Callable[..., Any], nin: int, nout: int, identity: Any,
                 host: np.ufunc):
        # not an op of the device table: every method runs NumPy's object loop on the host
        self._func = func
        self._np = host
        self.nin, self.nout, self.nargs = nin, nout, nin + nout
        self.identity = identity
        self.__name__ = self.__qualname__ = f"{getattr(func, '__name__', 'func')} (vectorized)"
        self.__doc__ = (f"{self.__name__}: a clnp.ufunc made by clnp.frompyfunc; it calls "
                        f"the Python function on the host, once per element.")
        self._types = ["O" * nin + "->" + "O" * nout]

    def __repr__(self) -> str:
        return f"<ufunc '{self.__name__}'>"

    def __reduce__(self) -> str:
        raise TypeError("a ufunc made by frompyfunc cannot be pickled")

    @property
    def types(self) -> list[str]:
        return list(self._types)

    @property
    def ntypes(self) -> int:
        return 1

    def _run(self, method: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        if kwargs.get("out") is not None:
            raise TypeError(f"{self.__name__}: out= is not supported by a frompyfunc ufunc "
                            f"(its results are computed on the host; assign them instead)")
        device = _device_of(*args, *kwargs.values())
        res = method(*_host(tuple(args)), **{k: _host(v) for k, v in kwargs.items()})
        return _typed_all(res, device)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._run(self._np, args, kwargs)

    def reduce(self, array: Any, *args: Any, **kwargs: Any) -> Any:
        return self._run(self._np.reduce, (array,) + args, kwargs)

    def accumulate(self, array: Any, *args: Any, **kwargs: Any) -> Any:
        return self._run(self._np.accumulate, (array,) + args, kwargs)

    def reduceat(self, array: Any, indices: Any, *args: Any, **kwargs: Any) -> Any:
        return self._run(self._np.reduceat, (array, indices) + args, kwargs)

    def outer(self, A: Any, B: Any, /, **kwargs: Any) -> Any:
        return self._run(self._np.outer, (A, B), kwargs)

    def at(self, a: Any, indices: Any, b: Any = None, /) -> None:
        """In place on ``a``: computed on a host copy, then written back to the device."""
        if not isinstance(a, Array):
            self._np.at(a, _host(indices), *(() if b is None else (_host(b),)))
            return
        host = a.to_numpy().astype(object)
        self._np.at(host, _host(indices), *(() if b is None else (_host(b),)))
        a[...] = np.array(host.tolist(), dtype=a.dtype)


def frompyfunc(func: Callable[..., Any], /, nin: int, nout: int, *,
               identity: Any = None) -> ufunc:
    """A :class:`clnp.ufunc` that calls a Python function elementwise (NumPy's
    ``frompyfunc``), on the host.

    The function runs once per element, in Python, on host copies of the operands: slow,
    meant for small arrays. Results that NumPy's dtype inference makes numeric (numbers,
    booleans) are uploaded to the operands' device; others (strings, objects) are returned as
    NumPy's object array, as NumPy returns them (a device has no object dtype). Every ufunc
    method (``reduce``, ``accumulate``, ``reduceat``, ``outer``, ``at``) works the same way.

    Parameters
    ----------
    func : callable
        The Python function, taking ``nin`` scalars.
    nin : int
        Number of inputs.
    nout : int
        Number of outputs ``func`` returns (a tuple when more than one).
    identity : object, optional
        The ufunc's ``identity`` (used by ``reduce`` of an empty array).

    Returns
    -------
    ufunc
        ``isinstance(f, clnp.ufunc)`` holds; ``f.nin``/``f.nout`` are as given.

    Raises
    ------
    TypeError
        ``func`` is not callable, or ``out=`` is passed to a call.
    ValueError
        ``nin + nout`` exceeds NumPy's limit of 64 operands.

    Examples
    --------
    >>> import clnp
    >>> f = clnp.frompyfunc(lambda a, b: a * 10 + b, 2, 1)
    >>> print(f(clnp.asarray([1, 2]), clnp.asarray([[3], [4]])))
    [[13 23]
     [14 24]]
    >>> print(f.reduce(clnp.asarray([1, 2, 3])))
    123
    >>> clnp.frompyfunc(oct, 1, 1)(clnp.asarray([8, 9]))
    array(['0o10', '0o11'], dtype=object)
    """
    if not callable(func):
        raise TypeError(f"frompyfunc: func must be callable; got {type(func).__name__}")
    kw = {} if identity is None else {"identity": identity}
    host = np.frompyfunc(func, nin, nout, **kw)
    return _pyufunc(func, nin, nout, identity, host)


class vectorize:
    """A function that takes arrays and calls ``pyfunc`` per element, with broadcasting
    (NumPy's ``vectorize``), on the host.

    ``pyfunc`` runs in Python on host copies of the operands (once per element, or once per
    core-dimension slice with ``signature``): slow, as in NumPy, whose documentation says
    it is for convenience, not performance. Numeric results are uploaded to the operands'
    device; non-numeric ones stay NumPy arrays. Usable as a decorator, with or without
    arguments.

    Parameters
    ----------
    pyfunc : callable, optional
        The function (omitted when ``vectorize(...)`` decorates).
    otypes : str or list of dtypes, optional
        Output dtypes (otherwise inferred from the first call, as in NumPy).
    doc : str, optional
        Docstring of the result (default: ``pyfunc``'s).
    excluded : set, optional
        Positional indices or keyword names passed through unvectorized.
    cache : bool, optional
        Cache the first call's output, as NumPy does when inferring ``otypes``.
    signature : str, optional
        Generalized ufunc signature, e.g. ``'(n),(n)->()'``.

    Examples
    --------
    >>> import clnp
    >>> f = clnp.vectorize(lambda a, b: a - b if a > b else a + b)
    >>> print(f(clnp.asarray([1, 2, 3, 4]), 2))
    [3 4 1 2]
    >>> @clnp.vectorize(otypes=[float])
    ... def half(v):
    ...     return v / 2
    >>> print(half(clnp.asarray([1, 3])))
    [0.5 1.5]
    """

    def __init__(self, pyfunc: Any = None, otypes: Any = None, doc: Any = None,
                 excluded: Any = None, cache: bool = False, signature: Any = None):
        self._kw = {"otypes": otypes, "doc": doc, "excluded": excluded, "cache": cache,
                    "signature": signature}
        self._np: Any = None
        self.pyfunc = pyfunc
        if pyfunc is not None:
            self._bind(pyfunc)

    def _bind(self, pyfunc: Callable[..., Any]) -> None:
        if not callable(pyfunc):
            raise TypeError(f"vectorize: pyfunc must be callable; got "
                            f"{type(pyfunc).__name__}")
        self.pyfunc = pyfunc
        self._np = np.vectorize(pyfunc, **self._kw)
        self.__doc__ = self._np.__doc__
        self.__name__ = getattr(pyfunc, "__name__", "vectorized")
        for k in ("otypes", "excluded", "cache", "signature"):
            setattr(self, k, getattr(self._np, k))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call ``pyfunc`` on the broadcast operands, element by element, on the host.

        Parameters
        ----------
        *args, **kwargs
            The operands (clnp arrays, NumPy arrays, scalars, sequences), and the arguments
            named in ``excluded`` passed as they are. When this object decorates with
            arguments (``@vectorize(otypes=...)``), the one argument is the function.

        Returns
        -------
        Array, numpy.ndarray, tuple or vectorize
            A clnp array on the operands' device for numeric results (a tuple of them for
            several outputs); NumPy's array for results with no device dtype; ``self`` when
            binding the decorated function.

        Raises
        ------
        TypeError
            Decorating with something that is not a function.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.vectorize(max)(clnp.asarray([1, 5]), clnp.asarray([4, 2])))
        [4 5]
        """
        if self._np is None:        # decorator with arguments: @vectorize(otypes=...)
            if len(args) != 1 or kwargs or not callable(args[0]):
                raise TypeError("vectorize: pass the function to vectorize")
            self._bind(args[0])
            return self
        device = _device_of(*args, *kwargs.values())
        res = self._np(*_host(tuple(args)), **{k: _host(v) for k, v in kwargs.items()})
        return _typed_all(res, device)

    def __repr__(self) -> str:
        return f"<clnp.vectorize of {self.pyfunc!r}>"


class broadcast:
    """The broadcast of several arrays against each other (NumPy's ``broadcast``).

    ``shape``, ``ndim``/``nd``, ``size`` and ``numiter`` are computed from the shapes alone;
    iterating (``for t in b``, ``next(b)``, ``b.iters``) reads host copies of the operands and
    yields tuples of NumPy scalars, in C order.

    Parameters
    ----------
    *args : array_like
        Up to 64 operands (arrays, scalars, sequences).

    Raises
    ------
    ValueError
        The shapes do not broadcast.

    Examples
    --------
    >>> import clnp
    >>> b = clnp.broadcast(clnp.asarray([[1], [2]]), clnp.asarray([4, 5, 6]))
    >>> b.shape, b.size, b.ndim
    ((2, 3), 6, 2)
    >>> [tuple(int(v) for v in t) for t in b][:2]
    [(1, 4), (1, 5)]
    """

    def __init__(self, *args: Any):
        self._args = args
        shapes = [tuple(a.shape) if isinstance(a, Array) else np.shape(a) for a in args]
        # NumPy's own rules (and messages) on zero-strided stand-ins: no data is read
        self._shape = np.broadcast(*[np.broadcast_to(np.empty((), np.int8), s)
                                     for s in shapes]).shape if args else ()
        self._it: Any = None

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def ndim(self) -> int:
        return len(self._shape)

    nd = ndim

    @property
    def size(self) -> int:
        return math.prod(self._shape)

    @property
    def numiter(self) -> int:
        return len(self._args)

    def _iter(self) -> Any:
        if self._it is None:
            self._it = np.broadcast(*[_host(a) for a in self._args])
        return self._it

    @property
    def iters(self) -> tuple:
        return self._iter().iters

    @property
    def index(self) -> int:
        return self._iter().index if self._it is not None else 0

    def reset(self) -> None:
        """Back to the first element.

        Returns
        -------
        None

        Examples
        --------
        >>> import clnp
        >>> b = clnp.broadcast(clnp.asarray([1, 2]), 5)
        >>> _ = next(b); b.reset(); b.index
        0
        """
        if self._it is not None:
            self._it.reset()

    def __iter__(self) -> Iterator[tuple]:
        return self

    def __next__(self) -> tuple:
        return next(self._iter())


def nested_iters(op: Any, axes: Any, flags: Any = None, op_flags: Any = None,
                 op_dtypes: Any = None, order: str = "K", casting: str = "safe",
                 buffersize: int = 0) -> tuple:
    """Nested ``nditer`` iterators over groups of axes (NumPy's ``nested_iters``), on host
    copies of the operands.

    Iteration is in Python, one step per element: slow, for small arrays. The operands are
    copies: a clnp array cannot be written through these iterators (write into a NumPy
    array and upload it, or use :class:`clnp.nditer`, which writes back on close).

    Parameters
    ----------
    op : array_like or sequence of array_like
        The operands.
    axes : list of list of int
        The axes of each nesting level, outermost first.
    flags, op_flags, op_dtypes, order, casting, buffersize
        As for ``numpy.nested_iters``.

    Returns
    -------
    tuple of numpy.nditer
        One iterator per level.

    Raises
    ------
    TypeError
        A clnp operand flagged ``readwrite`` or ``writeonly``.

    Examples
    --------
    >>> import clnp
    >>> i, j = clnp.nested_iters(clnp.arange(6).reshape(2, 3), [[0], [1]])
    >>> [[int(v) for v in j] for _ in i]
    [[0, 1, 2], [3, 4, 5]]
    """
    ops = list(op) if isinstance(op, (list, tuple)) else [op]
    per_op = op_flags if op_flags and not isinstance(op_flags[0], str) else [op_flags] * len(ops)
    for o, f in zip(ops, per_op):
        if isinstance(o, Array) and f and any(x in ("readwrite", "writeonly") for x in f):
            raise TypeError("nested_iters: a clnp array cannot be written through host "
                            "iterators; iterate a NumPy array (numpy.asarray(x)) and upload "
                            "it, or use clnp.nditer, which writes back on close")
    host = [_host(o) for o in ops]
    return np.nested_iters(host if isinstance(op, (list, tuple)) else host[0], axes,
                           flags=flags, op_flags=op_flags, op_dtypes=op_dtypes, order=order,
                           casting=casting, buffersize=buffersize)


def fromstring(string: Any, dtype: Any = float, count: int = -1, *, sep: str,
               like: Any = None, device: Any = None) -> Any:
    """A 1-D array from numbers in a text string (NumPy's ``fromstring``), parsed on the
    host and uploaded.

    Parameters
    ----------
    string : str
        The text.
    dtype : dtype, optional
        Element type (default float64, or the device's default float when it lacks fp64).
    count : int, optional
        Number of items to read (-1: all). Where the text holds fewer, the result still has
        ``count`` items, as NumPy's, and the missing ones are zeros (NumPy leaves them
        uninitialised: numpy/numpy#1481).
    sep : str
        The separator between numbers (whitespace around it is ignored). NumPy's binary
        mode (``sep=''``) was removed in NumPy 2; use :func:`clnp.frombuffer`.
    like : None
        NumPy's array-protocol creation: not supported (TypeError; pass ``device=``).
    device : Device, optional
        Where the result lives (default: the default device).

    Returns
    -------
    array

    Raises
    ------
    ValueError
        The text does not parse, or ``sep`` is empty.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.fromstring("1 2 3.5", sep=" "))
    [1.  2.  3.5]
    >>> print(clnp.fromstring("1,2", dtype=clnp.int32, sep=","))
    [1 2]
    """
    if like is not None:
        raise TypeError("fromstring: like= (array-protocol creation) is not supported; pass "
                        "device= instead")
    if sep == "":
        raise ValueError("fromstring: the binary mode (sep='') is not supported, as in "
                         "NumPy 2; use clnp.frombuffer")
    res = np.fromstring(string, dtype=dtype, count=count, sep=sep)
    if count >= 0:
        # NumPy stops at count or at the text's end and returns count items either way, the
        # unread ones uninitialised: the same parse without count tells how many were read
        # (unmatched data past the count-th item fails that parse: all count items were read)
        import warnings
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                nread = np.fromstring(string, dtype=dtype, sep=sep).shape[0]
        except ValueError:
            nread = count
        if nread < res.shape[0]:
            res[nread:] = 0
    # the default (Python's float) follows the device; an explicit float64 is checked
    return _upload(res, device) if dtype is float else asarray(res, device=device)


def fromregex(file: Any, regexp: Any, dtype: Any, encoding: Any = None, *,
              device: Any = None) -> Any:
    """An array from the matches of a regular expression in a text file (NumPy's
    ``fromregex``), parsed on the host and uploaded.

    Parameters
    ----------
    file : path or file
        The text file.
    regexp : str or compiled regex
        One group per field.
    dtype : dtype
        A numeric dtype (one group): the values of NumPy's one-field structured result.
        Structured dtypes (NumPy 2 requires one) have no device representation: parse with
        ``numpy.fromregex`` and upload the fields one by one (``clnp.asarray(rec['name'])``).
    encoding : str, optional
        The file's text encoding.
    device : Device, optional
        Where the result lives (default: the default device).

    Returns
    -------
    array
        1-D, one element per match.

    Raises
    ------
    TypeError
        A structured or non-numeric ``dtype``.

    Examples
    --------
    >>> import clnp, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "log.txt")
    >>> _ = open(path, "w").write("a=1 b=22 c=333")
    >>> print(clnp.fromregex(path, r"=(\\d+)", clnp.int64))
    [  1  22 333]
    """
    d = np.dtype(dtype)
    if d.names is not None or d.kind not in "biufc":
        raise TypeError(f"fromregex: dtype {d} has no device representation (clnp has no "
                        f"structured or non-numeric dtypes); parse with numpy.fromregex and "
                        f"upload each field with clnp.asarray")
    # NumPy 2 takes structured dtypes only: parse one field, keep its values
    rec = np.fromregex(file, regexp, np.dtype([("f0", d)]), encoding=encoding)
    return asarray(np.ascontiguousarray(rec["f0"]), device=device)
