"""The device array: a (buffer, element offset, shape, element strides, dtype, device) view.

Everything that computes goes through primitives (``clnp._core.eager``); this module owns only
storage, host transfer and Python protocol glue. Operators come from ``ArrayOperators``,
which ``clnp_grad`` tracers share so user code cannot tell them apart.
"""
from __future__ import annotations

import builtins
import math
import operator
import types
from typing import Any

import numpy as np

from .._runtime import capture_hooks as _hooks
from . import dtypes as dt
from .operators import ArrayOperators
from .._runtime.device import Device, default_device
from .._runtime.opencl import cl
from .attached import implementation
from .namespace import namespace as _namespace


# Host data of at least this many bytes is uploaded to a device that shares host memory by
# writing it into the new buffer's mapped memory (one pass, converting on the way) instead of
# an asynchronous copy from a private host copy: the private copy doubled the host memory of
# a large asarray (issue #25), while below this size the wait for the queue that the map
# needs would cost more than the copy saves.
_MAPPED_UPLOAD_BYTES = 1 << 22


def c_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


class ArrayFlags(dict):
    """``x.flags``: NumPy's flag names as keys and as lower-case attributes (read-only)."""

    def __getattr__(self, name: str) -> bool:
        try:
            return self[name.upper()]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def c_contiguous(self) -> bool:
        return self["C_CONTIGUOUS"]

    @property
    def f_contiguous(self) -> bool:
        return self["F_CONTIGUOUS"]

    @property
    def contiguous(self) -> bool:
        return self["C_CONTIGUOUS"]


class Array(ArrayOperators):
    """An n-dimensional array on an OpenCL device (the Array API's ``array`` object)."""

    __slots__ = ("_buf", "_offset", "_shape", "_strides", "_dtype", "_device", "__weakref__")
    __array_priority__ = 100

    def __init__(self, buf: Any, offset: int, shape: tuple[int, ...], strides: tuple[int, ...],
                 dtype: np.dtype, device: Device):
        self._buf, self._offset = buf, offset
        self._shape, self._strides = shape, strides
        self._dtype, self._device = dtype, device

    # ------------------------------------------------------------------ construction
    @classmethod
    def empty(cls, shape: tuple[int, ...], dtype: np.dtype, device: Device | None = None) -> "Array":
        device = device or default_device()
        device.check_dtype(dtype)
        n = math.prod(shape)
        buf = device.alloc(n * dtype.itemsize)
        return cls(buf, 0, tuple(shape), c_strides(shape), dtype, device)

    @classmethod
    def from_numpy(cls, a: np.ndarray, device: Device | None = None,
                   dtype: Any = None, *, private: bool = False) -> "Array":
        """A new array on ``device`` holding a copy of the host array ``a``, converted to
        ``dtype`` on the way (NumPy's unsafe casting, as ``astype``).

        The copy is the only one: the conversion and the reordering of a non-contiguous
        ``a`` happen in it. On a device that shares host memory
        (``Device.shares_host_memory``) an upload of ``_MAPPED_UPLOAD_BYTES`` or more is
        written straight into the new buffer's mapped memory (the host waits for the queued
        work first); elsewhere the upload is asynchronous from a private host copy, so the
        caller may modify ``a`` as soon as this returns.

        Parameters
        ----------
        a : numpy.ndarray
            The host data (any layout, any byte order).
        device : Device, optional
            Where the array lives (default: the default device).
        dtype : dtype, optional
            The array's dtype (default: ``a``'s).
        private : bool, optional
            ``a`` is a temporary no one else holds (made from Python data): it is uploaded
            from as it is where its layout and dtype are the array's, without a private copy.

        Returns
        -------
        Array
            A C-contiguous array independent of ``a``.

        Examples
        --------
        >>> import numpy, clnp
        >>> from clnp._core.array import Array
        >>> print(Array.from_numpy(numpy.arange(3.0)[::-1], dtype=clnp.float32))
        [2. 1. 0.]
        """
        device = device or default_device()
        dtype = dt.as_dtype(a.dtype if dtype is None else dtype)
        device.check_dtype(dtype)
        out = cls.empty(a.shape, dtype, device)
        if not a.size:
            return out
        if (device.shares_host_memory and out.nbytes >= _MAPPED_UPLOAD_BYTES
                and _hooks.current() is None):
            # the buffer is host memory: convert/copy into it in one pass, with no private
            # copy (which doubled the host memory of a large asarray, issue #25); the map
            # waits for the queue, since a pooled buffer may still be in use by queued work
            mapped = device.map_host_view(out._buf, 0, out.nbytes)
            np.copyto(mapped.view(dtype).reshape(a.shape), a, casting="unsafe")
            return out
        # a private copy (the conversion happens in it): the upload is asynchronous, and
        # the caller may modify its array right after asarray() returns
        host = a if private and a.dtype == dtype and a.flags.c_contiguous else \
            np.array(a, dtype=dtype, order="C", copy=True)
        if _hooks.current() is not None:
            _hooks.note_upload(out._buf, host)
        device.keep_until_done(
            cl.enqueue_copy(device.queue, out._buf, host, is_blocking=False))
        return out

    # ------------------------------------------------------------------ attributes
    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def size(self) -> int:
        return math.prod(self._shape)

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def device(self) -> Device:
        return self._device

    @property
    def strides(self) -> tuple[int, ...]:
        """Strides in bytes, as NumPy reports them."""
        return tuple(s * self._dtype.itemsize for s in self._strides)

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self._dtype.itemsize

    @property
    def is_contiguous(self) -> bool:
        return all(s == c or n <= 1 for s, c, n in
                   zip(self._strides, c_strides(self._shape), self._shape))

    @property
    def flags(self) -> "ArrayFlags":
        """The memory-layout flags NumPy reports, by key (``x.flags['C_CONTIGUOUS']``) or
        attribute (``x.flags.c_contiguous``); OWNDATA is False (device memory is pooled)."""
        f_strides = c_strides(self._shape[::-1])[::-1]
        empty = self.size == 0                  # no elements: both, whatever the strides
        f_contig = empty or all(s == c or n <= 1 for s, c, n in
                                zip(self._strides, f_strides, self._shape))
        return ArrayFlags({"C_CONTIGUOUS": empty or self.is_contiguous, "F_CONTIGUOUS": f_contig,
                           "OWNDATA": False, "WRITEABLE": True, "ALIGNED": True,
                           "WRITEBACKIFCOPY": False})

    # ------------------------------------------------------------------ views of the memory
    def view(self, dtype: Any = None, type: Any = None) -> "Array":
        """A new array object on the same memory, its bits read as ``dtype`` (``ndarray.view``).

        No data is copied: writes through either array show in the other. A dtype of the same
        item size keeps the shape; a different item size rescales the last axis, which must
        be contiguous, as in NumPy (float32 ``(2, 4)`` viewed as ``uint8`` is ``(2, 16)``,
        as ``complex64`` ``(2, 2)``).

        Parameters
        ----------
        dtype : dtype, optional
            The dtype to reinterpret the bits as (the array's own when None).
        type : type, optional
            Only ``clnp.ndarray`` (there are no array subclasses).

        Returns
        -------
        Array
            The view.

        Raises
        ------
        ValueError
            A different item size on a 0-d array, on a non-contiguous last axis, on a last
            axis whose byte size the new item size does not divide, or on a view whose
            offset or strides are not whole items of the new dtype.
        TypeError
            A dtype clnp arrays cannot hold, or a ``type`` other than ``clnp.ndarray``.

        Examples
        --------
        >>> import clnp
        >>> x = clnp.asarray([1.0, -2.0], dtype=clnp.float32)
        >>> print(x.view(clnp.uint32))
        [1065353216 3221225472]
        >>> x.view(clnp.uint8).shape
        (8,)
        """
        if isinstance(dtype, builtins.type) and issubclass(dtype, (np.ndarray, Array)):
            type, dtype = dtype, None
        if type is not None and type is not Array and type is not ndarray:
            raise TypeError(f"view: clnp has no array subclasses; type must be clnp.ndarray, "
                            f"got {type!r}")
        if dtype is None:
            return Array(self._buf, self._offset, self._shape, self._strides, self._dtype,
                         self._device)
        new = dt.as_dtype(dtype, "view")
        self._device.check_dtype(new, "view")
        old = self._dtype.itemsize
        if new.itemsize == old:
            return Array(self._buf, self._offset, self._shape, self._strides, new,
                         self._device)
        if not self._shape:
            raise ValueError("view: changing the dtype of a 0d array is only supported if the "
                             "itemsize is unchanged")
        last = self._shape[-1]
        if self.size and last > 1 and self._strides[-1] != 1:
            raise ValueError(f"view: to change to a dtype of a different size, the last axis "
                             f"must be contiguous (shape {self._shape}, strides "
                             f"{self.strides}); copy the array first")
        if (last * old) % new.itemsize:
            raise ValueError(f"view: when changing to a {'larger' if new.itemsize > old else 'smaller'} "
                             f"dtype, its size must be a divisor of the total size in bytes of "
                             f"the last axis of the array ({last * old} bytes for shape "
                             f"{self._shape} of {self._dtype}; {new} has {new.itemsize})")
        byte_offset = self._offset * old
        byte_strides = [st * old for st in self._strides[:-1]]
        if self.size and (byte_offset % new.itemsize or any(
                b % new.itemsize for n, b in zip(self._shape, byte_strides) if n > 1)):
            raise ValueError(f"view: the offset and strides of this view are not whole items "
                             f"of {new} (clnp addresses device memory in items); copy the "
                             f"array first")
        shape = self._shape[:-1] + (last * old // new.itemsize,)
        strides = tuple(b // new.itemsize for b in byte_strides) + (1,)
        return Array(self._buf, byte_offset // new.itemsize, shape, strides, new, self._device)

    def _part_view(self, part: str) -> "Array | None":
        """``.real``/``.imag`` of a complex array: a strided view of its float pairs; ``.real``
        of a real array: the array's memory (a view, as in NumPy)."""
        if self._dtype.kind != "c":
            return self.view() if part == "real" else None
        half = dt.float32 if self._dtype == dt.complex64 else dt.float64
        base = Array(self._buf, self._offset * 2, self._shape + (2,),
                     tuple(st * 2 for st in self._strides) + (1,), half, self._device)
        return base[..., 0 if part == "real" else 1]

    def tobytes(self, order: str = "C") -> bytes:
        """The raw bytes of the elements, in C (or Fortran) order (``ndarray.tobytes``).

        Parameters
        ----------
        order : {'C', 'F', 'A', 'K'}, optional
            Element order in the bytes; 'A' means 'F' for an array that is Fortran
            contiguous and not C contiguous, else 'C'; 'K' means 'C' (NumPy's rules).

        Returns
        -------
        bytes
            ``size * itemsize`` bytes, from a host copy.

        Examples
        --------
        >>> import clnp
        >>> clnp.asarray([1, 2], dtype=clnp.uint16).tobytes()
        b'\\x01\\x00\\x02\\x00'
        """
        if order not in ("C", "F", "A", "K"):
            raise ValueError(f"tobytes: order must be one of 'C', 'F', 'A', 'K'; got {order!r}")
        if order == "A":
            flags = self.flags
            order = "F" if flags.f_contiguous and not flags.c_contiguous else "C"
        return self.to_numpy().tobytes(order="F" if order == "F" else "C")

    def tofile(self, fid: Any, sep: str = "", format: str = "%s") -> None:
        """Write the elements to a file as binary or text (``ndarray.tofile``, host I/O).

        Parameters
        ----------
        fid : file or str or path
            An open file or a file name.
        sep : str, optional
            Separator between items for a text file; '' writes binary.
        format : str, optional
            Format string for text output.

        Returns
        -------
        None
            The file holds the data (no shape or dtype: read it with ``clnp.fromfile``).

        Examples
        --------
        >>> import clnp, os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "x.bin")
        >>> clnp.arange(3, dtype=clnp.int32).tofile(path)
        >>> os.path.getsize(path)
        12
        """
        self.to_numpy().tofile(fid, sep=sep, format=format)

    def dumps(self) -> bytes:
        """The array pickled (``ndarray.dumps``); ``pickle.loads`` gives it back on a device.

        Returns
        -------
        bytes
            The pickle.

        Examples
        --------
        >>> import clnp, pickle
        >>> print(pickle.loads(clnp.arange(3).dumps()))
        [0 1 2]
        """
        import pickle
        return pickle.dumps(self)

    def dump(self, file: Any) -> None:
        """Pickle the array into ``file`` (``ndarray.dump``); ``clnp.load(file,
        allow_pickle=True)`` or ``pickle.load`` reads it back.

        Parameters
        ----------
        file : str or path or file
            A file name or an open binary file.

        Returns
        -------
        None
            The file holds the pickle.

        Examples
        --------
        >>> import clnp, os, pickle, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "x.pkl")
        >>> clnp.arange(3).dump(path)
        >>> with open(path, "rb") as f:
        ...     print(pickle.load(f))
        [0 1 2]
        """
        import pickle
        if hasattr(file, "write"):
            pickle.dump(self, file)
        else:
            with open(file, "wb") as f:
                pickle.dump(self, f)

    def byteswap(self, inplace: bool = False) -> "Array":
        """The elements with their bytes reversed (``ndarray.byteswap``), on the device.

        Parameters
        ----------
        inplace : bool, optional
            Swap in place (and return the array itself).

        Returns
        -------
        Array
            The swapped array; its dtype is unchanged, so the values read differently.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.asarray([1, 256], dtype=clnp.uint16).byteswap())
        [256   1]
        """
        from .operators import _ns
        ns = _ns()
        # complex numbers swap each of their two floats
        k = self._dtype.itemsize // (2 if self._dtype.kind == "c" else 1)
        flat = ns.asarray(ns.reshape(self, (-1,)), copy=True)
        b = ns.reshape(flat.view(dt.uint8), (-1, k))
        swapped = ns.asarray(ns.flip(b, axis=-1), copy=True)
        swapped = ns.reshape(ns.reshape(swapped, (-1,)).view(self._dtype), self._shape)
        if inplace:
            self[...] = swapped
            return self
        return swapped

    # ------------------------------------------------------------------ host transfer
    def _span(self) -> tuple[int, int]:
        """[lo, hi) element range of the buffer this view touches."""
        lo = hi = self._offset
        for n, s in zip(self._shape, self._strides):
            if n > 1:
                if s < 0:
                    lo += (n - 1) * s
                else:
                    hi += (n - 1) * s
        return lo, hi + 1

    def to_numpy(self) -> np.ndarray:
        """A new NumPy array with a copy of the elements (waits for pending work on the
        queue); ``numpy.asarray(x)`` is a view instead where the device shares host memory
        (see ``__array__``).

        Returns
        -------
        numpy.ndarray
            A writable copy, independent of the array.

        Examples
        --------
        >>> import clnp
        >>> h = clnp.arange(3).to_numpy()
        >>> h[0] = 7
        >>> h.tolist()
        [7, 1, 2]
        """
        if self.size == 0:
            return np.empty(self._shape, self._dtype)
        lo, hi = self._span()
        whole = self.is_contiguous and lo == self._offset and hi - lo == self.size
        if not whole and self._device.shares_host_memory:
            # one copy of the elements from the mapped memory, not the span then the elements
            return np.array(_shared_host_view(self))
        host = np.empty(hi - lo, self._dtype)
        if _hooks.current() is not None:
            _hooks.note_readback()
        cl.enqueue_copy(self._device.queue, host, self._buf,
                        src_offset=lo * self._dtype.itemsize, is_blocking=True)
        if whole:
            return host.reshape(self._shape)
        view = np.lib.stride_tricks.as_strided(
            host[self._offset - lo:], self._shape, self.strides)
        return np.array(view)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """``numpy.asarray(x)``, ``numpy.array(x)`` (NumPy 2's protocol).

        On a device that shares host memory (``Device.shares_host_memory``: PoCL and other
        CPU devices) the result is a view of the array's own memory, as ``numpy.asarray`` of
        a NumPy array is: handed out once the work queued on the device has finished, with
        the array's shape and strides, writable, and keeping the memory alive. Writes through
        it are the array's (a kernel enqueued later reads them), and clnp work enqueued later
        that writes the array is seen in it after the next sync point (``clnp.synchronize()``,
        or any read of the device's data to the host). Elsewhere it is a host copy, read-only
        under ``copy=None`` since writes to it could never reach the array.

        Parameters
        ----------
        dtype : dtype, optional
            The result's dtype; a different one than the array's is a conversion (a copy).
        copy : bool, optional
            True: always a new, writable copy. False: never a copy (ValueError where the
            device's memory is not host memory, or ``dtype`` needs a conversion). None: the
            view where there can be one, else a copy.

        Returns
        -------
        numpy.ndarray

        Raises
        ------
        ValueError
            ``copy=False`` where a view is impossible.

        Examples
        --------
        >>> import numpy, clnp
        >>> x = clnp.zeros(3, dtype=clnp.float32)
        >>> h = numpy.asarray(x)                 # on a CPU device: x's own memory
        >>> if h.flags.writeable:
        ...     h[0] = 5.0
        >>> float(x[0]) == (5.0 if x.device.shares_host_memory else 0.0)
        True
        """
        want = self._dtype if dtype is None else np.dtype(dtype)
        shared = self._device.shares_host_memory
        if copy is False and not (shared and want == self._dtype):
            why = (f"the memory of {self._device} is not host memory" if not shared else
                   f"converting {self._dtype} to {want} needs a copy")
            raise ValueError(f"__array__(copy=False): {why}, so NumPy cannot view the clnp "
                             f"array's memory; use copy=None or numpy.array(x)")
        if shared:
            view = _shared_host_view(self)
            if copy is True or want != self._dtype:
                return np.array(view, dtype=want, copy=True)    # one copy, converted
            return view
        host = self.to_numpy()
        if want != self._dtype:
            return host.astype(want)         # a conversion: a new array, as NumPy's
        if copy is None:
            # NumPy would have handed out the array itself: writes to this copy would be
            # lost silently (scipy's output=, in-place NumPy code), so refuse them
            host.flags.writeable = False
        return host

    def tolist(self) -> Any:
        return self.to_numpy().tolist()

    def item(self, *args: Any) -> Any:
        """The element as a Python scalar: ``item()`` (size 1), ``item(flat_index)`` or
        ``item(i, j, ...)``, as in NumPy."""
        if len(args) == 1 and isinstance(args[0], tuple):
            args = args[0]
        if len(args) == 1 and self.ndim != 1:
            i = operator.index(args[0])
            if not -self.size <= i < self.size:
                raise IndexError(f"index {i} is out of bounds for size {self.size}")
            args = tuple(int(k) for k in np.unravel_index(i % self.size, self._shape))
        if args:
            return self[args].item()
        if self.size != 1:
            raise ValueError(f"item() needs an array with exactly one element; got shape "
                             f"{self._shape}")
        return self.to_numpy().reshape(()).item()

    def _scalar(self, kind: type, what: str) -> Any:
        from .operators import check_concrete
        check_concrete(self, what)
        if kind is not bool and self._shape:
            # NumPy 2's rule (bool() still takes any one element); so numpy.float64(x) of a
            # one-element clnp array casts the array, as it does a NumPy array
            raise TypeError(f"only 0-dimensional arrays can be converted to Python scalars; "
                            f"got shape {self._shape} (use x.item() or x[0])")
        if self.size != 1:
            raise TypeError(f"only arrays with one element can be converted to Python "
                            f"{what}; got shape {self._shape}")
        return kind(self.to_numpy().reshape(())[()])

    def __bool__(self) -> bool:
        if self.size != 1:  # NumPy: ambiguous truth value is a ValueError
            raise ValueError(f"the truth value of an array of shape {self._shape} is "
                             f"ambiguous; use any() or all()")
        return self._scalar(bool, "bool")

    def __float__(self) -> float:
        if self._dtype.kind == "c":
            raise TypeError("can't convert a complex array to float; use real() or abs()")
        return self._scalar(float, "float")

    def __int__(self) -> int:
        if self._dtype.kind == "c":
            raise TypeError("can't convert a complex array to int")
        if self._dtype.kind == "f":
            v = self._scalar(float, "int")
            if math.isnan(v) or math.isinf(v):
                raise (ValueError if math.isnan(v) else OverflowError)(
                    f"cannot convert {v} to int")
            return int(v)
        return self._scalar(int, "int")

    def __complex__(self) -> complex:
        return self._scalar(complex, "complex")

    def __index__(self) -> int:
        if self._dtype.kind not in "iu" or self.ndim != 0:
            raise TypeError(f"only 0-d integer arrays can be used as an index; got "
                            f"{self._dtype} with shape {self._shape}")
        return self._scalar(int, "int")

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d array")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self._shape[0]))

    def __repr__(self) -> str:
        # NumPy's own repr of the host copy: same layout, dtype suffix and print options
        return self._printed(repr)

    def __str__(self) -> str:
        return self._printed(str)

    def _printed(self, fmt: Any) -> str:
        """NumPy's text for the array. An array NumPy would summarize (more elements than
        the ``threshold`` print option) downloads only what NumPy prints: along each long
        axis the ``edgeitems`` leading and trailing items plus one stand-in for the elided
        middle. NumPy formats a summarized array from those items alone, so NumPy's repr/str
        machinery is run for the full shape (a broadcast stand-in carries shape and dtype)
        with the elements drawn from that small array, summarized."""
        opts = np.get_printoptions()
        edge = opts["edgeitems"]
        impl = _ARRAYPRINT_IMPL.get(fmt)
        if (impl is None or self.size <= opts["threshold"] or opts.get("legacy") is not False
                or all(n <= 2 * edge for n in self._shape)):
            return fmt(self.to_numpy())
        from .operators import _ns
        ns = _ns()
        small: Any = self
        for ax, n in enumerate(self._shape):
            if n > 2 * edge:
                keep = list(range(edge + 1)) + list(range(n - edge, n))
                small = ns.take(small, ns.asarray(keep, device=self._device), axis=ax)
        host = small.to_numpy()

        def body(_: Any, *args: Any, **kwargs: Any) -> str:
            # every option passed again: set_printoptions resets an omitted formatter
            with np.printoptions(**{**np.get_printoptions(), "threshold": 0}):
                return np.array2string(host, *args, **kwargs)
        stand_in = np.broadcast_to(np.zeros((), self._dtype), self._shape)
        return impl(stand_in, array2string=body)

    def __format__(self, format_spec: str) -> str:
        """``format(x, spec)`` and f-strings, as NumPy: a 0-d array formats its element
        (``f"{x:.2f}"``); any array formats as ``str(x)`` with an empty spec; a non-empty spec
        on an array of one or more dimensions is a TypeError, as in NumPy."""
        if not self._shape:
            return format(self.to_numpy()[()], format_spec)
        if format_spec:
            raise TypeError(f"unsupported format string {format_spec!r} passed to "
                            f"clnp.Array.__format__ for an array of shape {self._shape} "
                            f"(NumPy formats only 0-d arrays with a spec); format its "
                            f"elements, e.g. [format(v, {format_spec!r}) for v in "
                            f"x.tolist()]")
        return str(self)

    def __round__(self, ndigits: int | None = None) -> Any:
        """Python's ``round(x)``/``round(x, n)`` on a 0-d array, as on the NumPy scalar a
        NumPy reduction returns: ``round(x)`` is a Python int (float input), ``round(x, n)``
        a NumPy scalar. NumPy arrays of one or more dimensions do not support ``round()``:
        neither do clnp's (use ``clnp.round(x)`` or ``x.round(decimals)``)."""
        if self._shape:
            raise TypeError(f"round() of an array of shape {self._shape} is not defined (nor "
                            f"for NumPy arrays); use clnp.round(x) or x.round(decimals) "
                            f"(clnp.around(x, decimals)) for elementwise rounding")
        v = self.to_numpy()[()]
        return round(v) if ndigits is None else round(v, ndigits)

    __hash__ = None  # type: ignore[assignment]  # mutable, like numpy.ndarray
    # ``clnp.ndarray[Any, clnp.dtype[clnp.float32]]`` in annotations, as NumPy allows
    __class_getitem__ = classmethod(types.GenericAlias)

    def __reduce__(self):
        # the device pickles by position (falling back to the default device on load)
        return (_unpickle, (self.to_numpy(), self._device))

    # ------------------------------------------------------------------ NumPy protocols
    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """``numpy.<ufunc>(...)`` on clnp arrays runs in clnp (see ``clnp._numpy.protocols``)."""
        return implementation("array_ufunc")(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        """``numpy.<function>(...)`` on clnp arrays runs in clnp (see
        ``clnp._numpy.protocols``)."""
        return implementation("array_function")(func, types, args, kwargs)

    # ------------------------------------------------------------------ Array API protocol
    def __array_namespace__(self, *, api_version: str | None = None) -> Any:
        if api_version not in (None, "2021.12", "2022.12", "2023.12", "2024.12", "2025.12"):
            raise ValueError(f"unsupported Array API version {api_version!r}")
        clnp = _namespace()
        return clnp

    def to_device(self, device: Any, /, *, stream: Any = None) -> "Array":
        """Copy to ``device`` (a :class:`clnp.Device`, ``"cpu"`` for NumPy, or a spec string)."""
        if stream is not None:
            raise ValueError("clnp has no streams; pass stream=None")
        if device == "cpu" and not isinstance(device, Device):
            return self.to_numpy()  # type: ignore[return-value]
        from .._runtime.device import select_device
        target = select_device(device, arg="to_device: device")
        if target is self._device:
            return self
        return Array.from_numpy(self.to_numpy(), target)

    def __dlpack_device__(self) -> tuple[int, int]:
        # kDLCUDA on an NVIDIA device that shares memory with CUDA (the export is the
        # array's own memory where it lives there, else a copy put there); kDLCPU elsewhere
        # (a device that shares host memory exports its memory itself, the others a copy)
        ordinal = cuda_ordinal_of(self._device)
        return (1, 0) if ordinal is None else (2, ordinal)

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Any = None) -> Any:
        """Export through DLPack (the standard's protocol: ``numpy.from_dlpack(x)``,
        ``torch.from_dlpack(x)``, ``cupy.from_dlpack(x)``, ``jax.dlpack.from_dlpack(x)``).

        On a device that shares host memory (PoCL and other CPU devices:
        ``Device.shares_host_memory``) the export is the array's own memory, mapped for the
        host once the work queued before it has finished: the consumer and clnp then read and
        write the same bytes (a kernel's later writes are seen once it has completed,
        ``clnp.synchronize()``), and the memory stays the array's until the consumer lets go
        of it.

        On an NVIDIA device that shares memory with CUDA (the ``cuda`` extra) the export is
        ``kDLCUDA``: the array's own memory where it was allocated in memory CUDA sees
        (``Device.set_cuda_memory``, ``CLNP_CUDA_MEMORY=1``, or ``from_dlpack`` of a CUDA
        tensor), else a copy put there. The work queued on the array before is finished
        first (a host wait) unless ``stream=-1``. Elsewhere the export is a host copy.

        Parameters
        ----------
        stream : int, optional
            The consumer's CUDA stream (kDLCUDA exports): ``-1`` skips the wait for the
            work queued before; any other stream gets memory whose writes have completed.
            ``0`` is refused, as the standard asks.
        max_version : tuple of int, optional
            The newest DLPack version the consumer understands.
        dl_device : tuple of int, optional
            ``__dlpack_device__()``, or ``(1, 0)`` (kDLCPU) for a host copy.
        copy : bool, optional
            True: a copy. False: the array's own memory, or BufferError where that cannot
            be exported (not host memory; not memory CUDA sees). None: the memory where it
            can be, else a copy.

        Returns
        -------
        PyCapsule

        Raises
        ------
        BufferError
            ``copy=False`` where the memory cannot be exported as it is, or a ``dl_device``
            the array cannot go to.
        ValueError
            ``stream=0`` for a kDLCUDA export.

        Examples
        --------
        >>> import numpy, clnp
        >>> x = clnp.zeros(3)
        >>> if x.__dlpack_device__()[0] == 1:     # host memory: NumPy takes it
        ...     h = numpy.from_dlpack(x)          # on a CPU device: x's own memory
        ...     h[0] = 5.0
        ...     print(float(x[0]) == (5.0 if x.device.shares_host_memory else 0.0))
        ... else:
        ...     print(True)
        True
        """
        own = self.__dlpack_device__()
        want = own if dl_device is None else tuple(dl_device)
        if want == own and own[0] == 2:
            return _export_cuda(self, own[1], stream, max_version, copy)
        if want != (1, 0):
            raise BufferError(f"__dlpack__: an array of {self._device} exports to "
                              f"{own}{' or the host (1, 0)' if own != (1, 0) else ''}; "
                              f"dl_device={want} is not supported")
        if copy is not True and own == (1, 0) and self._device.shares_host_memory:
            host = _shared_host_view(self)
        elif copy is False:
            raise BufferError(f"__dlpack__(copy=False): the memory of {self._device} is not "
                              f"host memory, so only a host copy can be exported (copy=None "
                              f"or copy=True)")
        else:
            host = self.to_numpy()
        kwargs: dict[str, Any] = {}
        if max_version is not None:
            kwargs["max_version"] = max_version
        try:
            return host.__dlpack__(**kwargs)
        except TypeError:
            return host.__dlpack__()


_CUDA_ORDINALS: dict[Any, int | None] = {}


def cuda_ordinal_of(device: Device) -> int | None:
    """The CUDA ordinal of an NVIDIA ``device`` that shares memory with CUDA, else None
    (without importing anything CUDA for other devices): where its arrays export
    ``kDLCUDA`` and CUDA tensors import without a host trip.

    Examples
    --------
    >>> import clnp
    >>> from clnp._core.array import cuda_ordinal_of
    >>> d = clnp.default_device()
    >>> cuda_ordinal_of(d) is None or d.vendor_key == "nvidia"
    True
    """
    if device in _CUDA_ORDINALS:
        return _CUDA_ORDINALS[device]
    ordinal = None
    if device.vendor_key == "nvidia":
        from .._runtime import cuda_memory
        if cuda_memory.supported(device):
            ordinal = cuda_memory.cuda_ordinal(device)
    _CUDA_ORDINALS[device] = ordinal
    return ordinal


def _export_cuda(x: Array, ordinal: int, stream: Any, max_version: Any, copy: Any) -> Any:
    """``x`` as a kDLCUDA capsule: its own memory where CUDA sees it, else (copy=None or
    True) a copy put in memory CUDA sees."""
    from .._runtime import cuda_memory, dlpack
    if stream == 0:
        raise ValueError("__dlpack__: stream=0 is ambiguous for CUDA and not allowed by the "
                         "Array API standard; pass 1 (legacy default), 2 (per-thread "
                         "default), a stream handle, or -1")
    dev = x._device
    address = None if copy is True else cuda_memory.address_of(dev, x._buf)
    copied = address is None
    if copied:
        if copy is False:
            raise BufferError(f"__dlpack__(copy=False): this array is in OpenCL's own memory "
                              f"of {dev}, which CUDA cannot see; create it after "
                              f"{dev.key}'s set_cuda_memory(True) (or with "
                              f"CLNP_CUDA_MEMORY=1) to export it without a copy")
        x = _copy_into(x, cuda_memory.arena(dev).take)
        address = cuda_memory.address_of(dev, x._buf)
    if _hooks.current() is not None:
        _hooks.note_readback()              # launch capture cannot replay an export
    if copied or stream != -1:
        dev.synchronize()
    item = x._dtype.itemsize
    return dlpack.export(address + x._offset * item, (2, ordinal), x._shape, x._strides,
                         x._dtype, x, max_version=max_version, copied=copied)


def _copy_into(x: Array, take: Any) -> Array:
    """The elements ``x`` spans, copied byte for byte into a buffer of ``take(nbytes)``: an
    array of ``x``'s shape and strides there (a strided view spans more than its
    ``nbytes``)."""
    lo, hi = x._span()
    item = x._dtype.itemsize
    buf = take(max((hi - lo) * item, 1))
    if x.size:
        cl.enqueue_copy(x._device.queue, buf, x._buf, byte_count=(hi - lo) * item,
                        src_offset=lo * item, dst_offset=0)
    return Array(buf, x._offset - lo, x._shape, x._strides, x._dtype, x._device)


class _SharedHostView:
    """Keeps an array's memory its own while a host view of it lives: the view's base holds
    the array (so its pooled buffer is not reused) and the mapping."""

    __slots__ = ("array", "view")

    def __init__(self, array: Array, view: np.ndarray):
        self.array, self.view = array, view           # the view holds the mapping

    @property
    def __array_interface__(self) -> dict:
        return self.view.__array_interface__


def _shared_host_view(x: Array) -> np.ndarray:
    """``x``'s own memory as a NumPy array, on a device that shares host memory: the span
    of the buffer ``x`` views, mapped once the work queued before has finished (the sync
    point), with ``x``'s shape and strides (no copy). The view's base holds ``x`` and the
    mapping, so the buffer stays ``x``'s while NumPy holds it."""
    item = x._dtype.itemsize
    if x.size == 0:
        return np.empty(x._shape, x._dtype)
    if _hooks.current() is not None:
        _hooks.note_readback()              # launch capture cannot replay a host read
    lo, hi = x._span()
    mapped = x._device.map_host_view(x._buf, lo * item, (hi - lo) * item)
    view = np.ndarray(x._shape, x._dtype, buffer=mapped, offset=(x._offset - lo) * item,
                      strides=tuple(s * item for s in x._strides))
    host = np.asarray(_SharedHostView(x, view))
    # the array interface spells bfloat16 (ml_dtypes) as raw 'V2': give it its dtype back
    return host if host.dtype == x._dtype else host.view(x._dtype)


try:  # NumPy's repr/str with a replaceable body formatter (NumPy >= 2.0)
    from numpy._core import arrayprint as _arrayprint
    _ARRAYPRINT_IMPL: dict[Any, Any] = {repr: _arrayprint._array_repr_implementation,
                                        str: _arrayprint._array_str_implementation}
except (ImportError, AttributeError):  # then every array is printed from a full host copy
    _ARRAYPRINT_IMPL = {}


def _unpickle(host: np.ndarray, device: Device) -> Array:
    return Array.from_numpy(host, device)


class _NdarrayType(type):
    """The metaclass of :class:`ndarray`: every clnp array is an instance, and calling the
    class is NumPy's constructor. Arrays stay :class:`Array` objects, whose own construction
    keeps its fast path (every operation makes arrays)."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Array)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, Array)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 6 and not kwargs and not isinstance(args[0], (tuple, list, int,
                                                                      np.integer)):
            return Array(*args)       # Array's own form, through classmethods called on ndarray
        return numpy_ndarray(*args, **kwargs)


def numpy_ndarray(shape: Any, dtype: Any = float, buffer: Any = None, offset: int = 0,
                  strides: Any = None, order: Any = None, *, device: Any = None) -> Array:
    """``numpy.ndarray(shape, dtype, buffer, offset, strides, order)`` on the device: without
    ``buffer`` an uninitialised array (as ``clnp.empty``), with one the array NumPy's
    constructor reads from that host buffer, uploaded (a copy: device memory cannot alias a
    host buffer)."""
    d = dt.as_dtype(dtype, "ndarray")
    if buffer is None and strides is None and order in (None, "C"):
        shape = (operator.index(shape),) if not isinstance(shape, (tuple, list)) else \
            tuple(operator.index(n) for n in shape)
        if any(n < 0 for n in shape):
            raise ValueError(f"ndarray: negative dimensions are not allowed; got {shape}")
        return Array.empty(shape, d, device)
    # NumPy checks shape, buffer, offset, strides and order, and reads the host memory
    return Array.from_numpy(np.ndarray(shape, d, buffer, offset, strides, order), device)


class ndarray(Array, metaclass=_NdarrayType):
    """The clnp array type, as NumPy users name it: ``isinstance(x, clnp.ndarray)`` holds for
    every clnp array (an :class:`Array`), and ``clnp.ndarray(shape, dtype=float, buffer=None,
    offset=0, strides=None, order=None)`` is NumPy's low-level constructor.

    Parameters
    ----------
    shape : int or tuple of ints
        The shape.
    dtype : dtype, optional
        The element type (float64 by default, as in NumPy).
    buffer : object exposing the buffer protocol, optional
        Host memory to read the elements from (copied to the device).
    offset, strides, order : optional
        As in ``numpy.ndarray``, for reading ``buffer``.

    Returns
    -------
    Array
        Uninitialised without ``buffer`` (as :func:`clnp.empty`).

    Raises
    ------
    ValueError
        A negative dimension, or a buffer too small for the shape (NumPy's checks).
    TypeError
        A dtype clnp arrays cannot hold.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.ndarray((2, 3), clnp.float32)
    >>> x.shape, x.dtype, isinstance(x, clnp.ndarray)
    ((2, 3), dtype('float32'), True)
    """

    __slots__ = ()
