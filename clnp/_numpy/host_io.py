"""Host-side conveniences, as NumPy has them: printing options, files, host iteration and
construction from host data.

Printing: ``repr``/``str`` of a clnp array are NumPy's strings for the same values (the array
is copied to the host and printed by NumPy), so NumPy's print options apply to both; the
functions here are NumPy's, taking clnp arrays too. Files: data is read on the host by NumPy
and then uploaded (``load``, ``loadtxt``, ``genfromtxt``, ``fromfile``), or downloaded then
written by NumPy (``save``, ``savez``, ``savetxt``). Iteration (``ndenumerate``, ``nditer``)
runs on a host copy, one Python step per element: it is slow and meant for small arrays
or debugging; compute with whole-array operations instead.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator

import numpy as np

from .._core.array import Array
from .._core.namespace import namespace as _namespace

__all__ = [
    "set_printoptions", "get_printoptions", "printoptions", "array2string", "array_repr",
    "array_str", "format_float_positional", "format_float_scientific", "base_repr",
    "binary_repr", "save", "load", "savez", "savez_compressed", "loadtxt", "savetxt",
    "genfromtxt", "fromfile", "frombuffer", "fromiter", "fromfunction", "ndenumerate",
    "ndindex", "nditer",
]

# NumPy's own objects: they format host values, and clnp arrays print through NumPy
set_printoptions = np.set_printoptions
get_printoptions = np.get_printoptions
printoptions = np.printoptions
format_float_positional = np.format_float_positional
format_float_scientific = np.format_float_scientific
base_repr = np.base_repr
binary_repr = np.binary_repr
ndindex = np.ndindex


def _host(a: Any) -> Any:
    return a.to_numpy() if isinstance(a, Array) else a


def _upload(a: Any) -> Any:
    """A host result of a file reader on the default device. Readers produce float64 (and
    complex128) as NumPy's do; on a device without fp64 that becomes the device's default
    float (complex) type, as Python floats do, rather than an error."""
    clnp = _namespace()
    if not isinstance(a, np.ndarray):
        return a
    dev = clnp.default_device()
    if not dev.has_fp64 and a.dtype in (np.float64, np.complex128):
        a = a.astype(dev.default_float if a.dtype == np.float64 else dev.default_complex)
    return clnp.asarray(a)


def array2string(a: Any, *args: Any, **kwargs: Any) -> str:
    """The string NumPy prints for the array's values (``numpy.array2string``).

    Parameters
    ----------
    a : array_like
        A clnp or NumPy array.
    *args, **kwargs
        NumPy's options (``max_line_width``, ``precision``, ``separator``, ...).

    Returns
    -------
    str
        The text, the same as NumPy's for the same values.

    Examples
    --------
    >>> import clnp
    >>> clnp.array2string(clnp.asarray([1.5, 2.0]), separator=", ")
    '[1.5, 2. ]'
    """
    return np.array2string(np.asarray(_host(a)), *args, **kwargs)


def array_repr(arr: Any, max_line_width: Any = None, precision: Any = None,
               suppress_small: Any = None) -> str:
    """``repr`` of the array, as NumPy writes it (``numpy.array_repr``).

    Parameters
    ----------
    arr : array_like
        A clnp or NumPy array.
    max_line_width, precision, suppress_small : optional
        NumPy's print options for this call.

    Returns
    -------
    str
        ``array([...])`` text with NumPy's dtype suffix rules.

    Examples
    --------
    >>> import clnp
    >>> clnp.array_repr(clnp.asarray([1, 2], dtype=clnp.int8))
    'array([1, 2], dtype=int8)'
    """
    return np.array_repr(np.asarray(_host(arr)), max_line_width, precision, suppress_small)


def array_str(a: Any, max_line_width: Any = None, precision: Any = None,
              suppress_small: Any = None) -> str:
    """``str`` of the array, as NumPy writes it (``numpy.array_str``).

    Parameters
    ----------
    a : array_like
        A clnp or NumPy array.
    max_line_width, precision, suppress_small : optional
        NumPy's print options for this call.

    Returns
    -------
    str
        The text.

    Examples
    --------
    >>> import clnp
    >>> clnp.array_str(clnp.asarray([0.25, 1.0]), precision=1)
    '[0.2 1. ]'
    """
    return np.array_str(np.asarray(_host(a)), max_line_width, precision, suppress_small)


# ------------------------------------------------------------------ files
def save(file: Any, arr: Any, allow_pickle: bool = True, **kwargs: Any) -> None:
    """Save an array to a ``.npy`` file (``numpy.save``; the data is downloaded first).

    Parameters
    ----------
    file : str, path or file
        Where to write (``.npy`` is appended to a name without it).
    arr : array_like
        The array.
    allow_pickle : bool, optional
        As in NumPy (clnp arrays never need pickling).
    **kwargs
        NumPy's remaining options.

    Returns
    -------
    None
        The file holds the array; NumPy reads it too.

    Examples
    --------
    >>> import clnp, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "x.npy")
    >>> clnp.save(path, clnp.arange(3))
    >>> print(clnp.load(path))
    [0 1 2]
    """
    np.save(file, np.asarray(_host(arr)), allow_pickle=allow_pickle, **kwargs)


def savez(file: Any, *args: Any, **kwds: Any) -> None:
    """Save several arrays to an uncompressed ``.npz`` file (``numpy.savez``).

    Parameters
    ----------
    file : str, path or file
        Where to write.
    *args : array_like
        Arrays saved as ``arr_0``, ``arr_1``, ...
    **kwds : array_like
        Arrays saved under their keyword names.

    Returns
    -------
    None
        The file holds the arrays.

    Examples
    --------
    >>> import clnp, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "d.npz")
    >>> clnp.savez(path, clnp.arange(2), w=clnp.ones(2))
    >>> with clnp.load(path) as d:
    ...     print(sorted(d.files), d["w"])
    ['arr_0', 'w'] [1. 1.]
    """
    np.savez(file, *[_host(a) for a in args], **{k: _host(v) for k, v in kwds.items()})


def savez_compressed(file: Any, *args: Any, **kwds: Any) -> None:
    """Save several arrays to a compressed ``.npz`` file (``numpy.savez_compressed``).

    Parameters
    ----------
    file : str, path or file
        Where to write.
    *args : array_like
        Arrays saved as ``arr_0``, ``arr_1``, ...
    **kwds : array_like
        Arrays saved under their keyword names.

    Returns
    -------
    None
        The file holds the arrays.

    Examples
    --------
    >>> import clnp, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "d.npz")
    >>> clnp.savez_compressed(path, a=clnp.zeros(1000))
    >>> print(clnp.load(path)["a"].shape)
    (1000,)
    """
    np.savez_compressed(file, *[_host(a) for a in args],
                        **{k: _host(v) for k, v in kwds.items()})


class NpzFile:
    """The arrays of an ``.npz`` file, each uploaded when read (``numpy.lib.npyio.NpzFile``).

    A mapping from names to clnp arrays; use it as a context manager (or call ``close``).

    Examples
    --------
    >>> import clnp, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "d.npz")
    >>> clnp.savez(path, x=clnp.arange(3))
    >>> with clnp.load(path) as d:
    ...     print(type(d["x"]).__name__, d["x"])
    Array [0 1 2]
    """

    def __init__(self, host: Any):
        self._host = host
        self.files = list(host.files)

    def __getitem__(self, key: str) -> Any:
        return _upload(self._host[key])

    def __contains__(self, key: str) -> bool:
        return key in self._host

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)

    def keys(self) -> list[str]:
        """The array names.

        Returns
        -------
        list of str
            The names.

        Examples
        --------
        >>> import clnp, os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "d.npz")
        >>> clnp.savez(path, a=clnp.zeros(1))
        >>> clnp.load(path).keys()
        ['a']
        """
        return list(self.files)

    def items(self) -> list[tuple[str, Any]]:
        """(name, array) pairs, every array uploaded.

        Returns
        -------
        list of tuple
            The pairs.

        Examples
        --------
        >>> import clnp, os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "d.npz")
        >>> clnp.savez(path, a=clnp.zeros(1))
        >>> [(k, v.shape) for k, v in clnp.load(path).items()]
        [('a', (1,))]
        """
        return [(k, self[k]) for k in self.files]

    def values(self) -> list[Any]:
        """The arrays, uploaded.

        Returns
        -------
        list of Array
            The arrays.

        Examples
        --------
        >>> import clnp, os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "d.npz")
        >>> clnp.savez(path, a=clnp.zeros(2))
        >>> [v.shape for v in clnp.load(path).values()]
        [(2,)]
        """
        return [self[k] for k in self.files]

    def close(self) -> None:
        """Close the file.

        Returns
        -------
        None
            The arrays already read stay valid.

        Examples
        --------
        >>> import clnp, os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "d.npz")
        >>> clnp.savez(path, a=clnp.zeros(2))
        >>> d = clnp.load(path)
        >>> d.close()
        """
        self._host.close()

    def __enter__(self) -> "NpzFile":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def load(file: Any, mmap_mode: Any = None, allow_pickle: bool = False,
         fix_imports: bool = True, encoding: str = "ASCII", **kwargs: Any) -> Any:
    """Load arrays from ``.npy``, ``.npz`` or pickled files (``numpy.load``), onto the
    default device.

    Parameters
    ----------
    file : str, path or file
        The file.
    mmap_mode : None
        Memory mapping has no meaning for device memory; must be None.
    allow_pickle : bool, optional
        Allow pickled objects (needed for files written by ``Array.dump``).
    fix_imports, encoding : optional
        As in NumPy, for Python 2 pickles.
    **kwargs
        NumPy's remaining options.

    Returns
    -------
    Array or NpzFile or object
        A clnp array for ``.npy``; a mapping of clnp arrays for ``.npz``; the unpickled
        object otherwise.

    Raises
    ------
    ValueError
        ``mmap_mode`` is given.

    Examples
    --------
    >>> import clnp, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "x.npy")
    >>> clnp.save(path, clnp.eye(2))
    >>> print(clnp.load(path))
    [[1. 0.]
     [0. 1.]]
    """
    if mmap_mode is not None:
        raise ValueError("load: mmap_mode maps a file into host memory, which device arrays "
                         "cannot use; load with mmap_mode=None, or use numpy.load(..., "
                         "mmap_mode=...) and upload slices with clnp.asarray")
    res = np.load(file, allow_pickle=allow_pickle, fix_imports=fix_imports,
                  encoding=encoding, **kwargs)
    if isinstance(res, np.lib.npyio.NpzFile):
        return NpzFile(res)
    return _upload(res)


def loadtxt(fname: Any, dtype: Any = float, *args: Any, **kwargs: Any) -> Any:
    """Load numbers from a text file (``numpy.loadtxt``: parsed on the host, then uploaded).

    Parameters
    ----------
    fname : str, path, file or iterable of lines
        The text.
    dtype : dtype, optional
        The element type (float64 by default).
    *args, **kwargs
        NumPy's options (``comments``, ``delimiter``, ``skiprows``, ``usecols``,
        ``unpack``, ``ndmin``, ...).

    Returns
    -------
    Array or tuple of Array
        The data (one array per column with ``unpack=True``).

    Examples
    --------
    >>> import clnp, io
    >>> print(clnp.loadtxt(io.StringIO("1 2\\n3 4")))
    [[1. 2.]
     [3. 4.]]
    """
    res = np.loadtxt(fname, dtype, *args, **kwargs)
    return tuple(_upload(r) for r in res) if isinstance(res, (tuple, list)) else _upload(res)


def genfromtxt(fname: Any, dtype: Any = float, *args: Any, **kwargs: Any) -> Any:
    """Load numbers from a text file with missing values (``numpy.genfromtxt``: parsed on
    the host, then uploaded).

    Parameters
    ----------
    fname : str, path, file or iterable of lines
        The text.
    dtype : dtype, optional
        The element type (float64 by default); structured dtypes (``dtype=None`` with mixed
        columns, ``names=``) are refused: clnp has no record arrays.
    *args, **kwargs
        NumPy's options (``delimiter``, ``skip_header``, ``filling_values``, ...).

    Returns
    -------
    Array or tuple of Array
        The data; missing fields are NaN (or ``filling_values``).

    Raises
    ------
    TypeError
        The data has a structured dtype or ``usemask=True`` (no masked arrays).

    Examples
    --------
    >>> import clnp, io
    >>> print(clnp.genfromtxt(io.StringIO("1,2\\n3,"), delimiter=","))
    [[ 1.  2.]
     [ 3. nan]]
    """
    if kwargs.get("usemask"):
        raise TypeError("genfromtxt: usemask=True gives a NumPy masked array, which clnp has "
                        "not; read with usemask=False (missing values become NaN or "
                        "filling_values)")
    res = np.genfromtxt(fname, dtype, *args, **kwargs)
    if isinstance(res, np.ndarray) and res.dtype.names:
        raise TypeError("genfromtxt: the data has named columns (a structured dtype), which "
                        "clnp arrays cannot hold; pass a numeric dtype and usecols=, or load "
                        "with numpy.genfromtxt and upload each column")
    return tuple(_upload(r) for r in res) if isinstance(res, (tuple, list)) else _upload(res)


def savetxt(fname: Any, X: Any, *args: Any, **kwargs: Any) -> None:
    """Write an array to a text file (``numpy.savetxt``; the data is downloaded first).

    Parameters
    ----------
    fname : str, path or file
        Where to write.
    X : array_like
        A 1-D or 2-D array.
    *args, **kwargs
        NumPy's options (``fmt``, ``delimiter``, ``header``, ...).

    Returns
    -------
    None
        The file holds the text.

    Examples
    --------
    >>> import clnp, io
    >>> f = io.StringIO()
    >>> clnp.savetxt(f, clnp.asarray([[1, 2], [3, 4]]), fmt="%d")
    >>> print(f.getvalue(), end="")
    1 2
    3 4
    """
    np.savetxt(fname, np.asarray(_host(X)), *args, **kwargs)


def fromfile(file: Any, dtype: Any = float, count: int = -1, sep: str = "",
             offset: int = 0) -> Any:
    """An array from a binary or text file (``numpy.fromfile``: read on the host, uploaded).

    Parameters
    ----------
    file : str, path or file
        The file.
    dtype : dtype, optional
        The element type.
    count : int, optional
        Number of items (-1: all).
    sep : str, optional
        Separator for a text file ('' reads binary).
    offset : int, optional
        Bytes to skip (binary files).

    Returns
    -------
    Array
        1-D array.

    Examples
    --------
    >>> import clnp, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "x.bin")
    >>> clnp.arange(4, dtype=clnp.int16).tofile(path)
    >>> print(clnp.fromfile(path, dtype=clnp.int16))
    [0 1 2 3]
    """
    return _upload(np.fromfile(file, dtype=dtype, count=count, sep=sep, offset=offset))


def frombuffer(buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0, *,
               device: Any = None) -> Any:
    """An array from the bytes of a buffer (``numpy.frombuffer``), copied to the device.

    Parameters
    ----------
    buffer : bytes-like
        The bytes.
    dtype : dtype, optional
        The element type.
    count : int, optional
        Number of items (-1: all).
    offset : int, optional
        Bytes to skip.
    device : Device, optional
        The device (the default device when None).

    Returns
    -------
    Array
        1-D array; unlike NumPy's it does not share memory with ``buffer``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.frombuffer(b"\\x01\\x02\\x03", dtype=clnp.uint8))
    [1 2 3]
    """
    clnp = _namespace()
    return clnp.asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset),
                        device=device)


def fromiter(iter: Any, dtype: Any, count: int = -1, *, device: Any = None) -> Any:
    """A 1-D array from an iterable (``numpy.fromiter``), built on the host and uploaded.

    Parameters
    ----------
    iter : iterable
        The values.
    dtype : dtype
        The element type.
    count : int, optional
        Number of items to read (-1: all).
    device : Device, optional
        The device (the default device when None).

    Returns
    -------
    Array
        The values.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.fromiter((i * i for i in range(4)), dtype=clnp.int32))
    [0 1 4 9]
    """
    clnp = _namespace()
    return clnp.asarray(np.fromiter(iter, dtype=dtype, count=count), device=device)


def fromfunction(function: Callable[..., Any], shape: Any, *, dtype: Any = float,
                 device: Any = None, **kwargs: Any) -> Any:
    """An array whose element at ``(i, j, ...)`` is ``function(i, j, ...)``
    (``numpy.fromfunction``).

    As in NumPy, ``function`` is called once, with one array of coordinates per axis (of
    ``dtype``, here clnp arrays on the device), so it runs as whole-array operations.

    Parameters
    ----------
    function : callable
        Takes ``len(shape)`` coordinate arrays (and ``**kwargs``).
    shape : tuple of ints
        The shape.
    dtype : dtype, optional
        The coordinates' dtype.
    device : Device, optional
        The device (the default device when None).
    **kwargs
        Passed to ``function``.

    Returns
    -------
    Any
        What ``function`` returns.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.fromfunction(lambda i, j: i + 10 * j, (2, 3), dtype=int))
    [[ 0 10 20]
     [ 1 11 21]]
    """
    clnp = _namespace()
    shape = tuple(int(n) for n in shape)
    coords = []
    for ax, n in enumerate(shape):
        c = clnp.arange(n, dtype=dtype, device=device)
        c = clnp.reshape(c, tuple(n if i == ax else 1 for i in range(len(shape))))
        coords.append(clnp.broadcast_to(c, shape))
    return function(*coords, **kwargs)


# ------------------------------------------------------------------ host iteration
class ndenumerate:
    """Pairs of (index, value) over an array, in C order (``numpy.ndenumerate``).

    Runs on a host copy, one Python step per element: slow, for small arrays.

    Parameters
    ----------
    arr : array_like
        The array.

    Examples
    --------
    >>> import clnp
    >>> for idx, v in clnp.ndenumerate(clnp.asarray([[1, 2], [3, 4]])):
    ...     print(idx, int(v))
    (0, 0) 1
    (0, 1) 2
    (1, 0) 3
    (1, 1) 4
    """

    def __init__(self, arr: Any):
        self._it = np.ndenumerate(np.asarray(_host(arr)))

    def __iter__(self) -> "ndenumerate":
        return self

    def __next__(self) -> tuple[tuple[int, ...], Any]:
        return next(self._it)


class nditer:
    """NumPy's multi-array iterator (``numpy.nditer``) over host copies of the operands.

    Every NumPy flag and keyword is accepted. Operands flagged ``readwrite`` or
    ``writeonly`` that are clnp arrays are written back to the device when the iterator is
    closed (``with clnp.nditer(...) as it:`` or ``it.close()``), as NumPy writes back
    buffered operands. Iteration is on the host, one Python step per element: slow, for
    small arrays or debugging.

    Parameters
    ----------
    op : array_like or sequence of array_like
        The operands.
    *args, **kwargs
        NumPy's ``flags``, ``op_flags``, ``op_dtypes``, ``order``, ``casting``,
        ``op_axes``, ``itershape``, ``buffersize``.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.arange(3)
    >>> with clnp.nditer(x, op_flags=[["readwrite"]]) as it:
    ...     for v in it:
    ...         v[...] = 2 * v
    >>> print(x)
    [0 2 4]
    """

    def __init__(self, op: Any, *args: Any, **kwargs: Any):
        single = not isinstance(op, (list, tuple))
        ops = [op] if single else list(op)
        self._targets = ops
        host = [np.array(_host(o)) if isinstance(o, Array) else o for o in ops]
        self._host = host
        self._it = np.nditer(host[0] if single else host, *args, **kwargs)
        op_flags = kwargs.get("op_flags", args[1] if len(args) > 1 else None)
        if op_flags and isinstance(op_flags[0], str):
            op_flags = [op_flags] * len(ops)
        self._write = [bool(op_flags) and any(f in ("readwrite", "writeonly")
                                               for f in op_flags[i])
                       for i in range(len(ops))]
        self._closed = False

    def __iter__(self) -> Any:
        return iter(self._it)

    def __next__(self) -> Any:
        return next(self._it)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._it, name)

    @property
    def operands(self) -> tuple:
        """The operands as clnp arrays: a snapshot of their values now (outputs allocated by
        the iterator included), uploaded."""
        clnp = _namespace()
        return tuple(clnp.asarray(h) if isinstance(h, np.ndarray) and (t is None or
                                                                     isinstance(t, Array))
                     else h for t, h in zip(self._targets, self._it.operands))

    def __len__(self) -> int:
        return len(self._it)

    def close(self) -> None:
        """Finish: write back the clnp operands flagged for writing.

        Returns
        -------
        None
            The device arrays hold the values written through the iterator.

        Examples
        --------
        >>> import clnp
        >>> x = clnp.zeros(2)
        >>> it = clnp.nditer(x, op_flags=["readwrite"])
        >>> for v in it:
        ...     v[...] = 1
        >>> it.close()
        >>> print(x)
        [1. 1.]
        """
        if self._closed:
            return
        self._it.close()
        self._closed = True
        for target, host, write in zip(self._targets, self._host, self._write):
            if write and isinstance(target, Array):
                target[...] = host

    def __enter__(self) -> "nditer":
        self._it.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
