"""``DataLoader``: mini-batches of host data uploaded to a device by a background thread.

The data stays in host memory (NumPy); each batch is gathered there (a shuffled ``take``) and
uploaded with ``clnp.asarray``. With ``prefetch > 0`` one background thread gathers and
uploads up to ``prefetch`` batches ahead into a bounded queue while the caller's step runs, so
the host-side work and the transfer are off the training loop's critical path.

Threads and OpenCL. The loader thread only allocates device buffers and enqueues
non-blocking host-to-device copies on the device's in-order queue: it never builds or
launches a kernel (batches are uploaded in their final dtype), so it shares no kernel
argument state with the main thread. OpenCL's enqueue calls are thread-safe, and clnp's
launch capture (used by ``jit``) is thread-local, so an upload never lands in a compiled
function. Buffers come from PyOpenCL's memory pool, driven from Python with the GIL held
(PyOpenCL does not document the pool as thread-safe; this relies on the GIL). Because the queue
is in order, a batch's copy runs after the kernels enqueued before it and before those
enqueued after it.

No worker processes are used, so nothing is ever forked: forking a process that holds an
OpenCL context hangs or crashes with most drivers. Users who preprocess in other processes
must start them with ``multiprocessing.get_context("spawn")`` (or ``"forkserver"``) and give
the loader NumPy arrays.
"""
from __future__ import annotations

import math
import queue
import threading
from typing import Any, Iterator

import numpy as np

import clnp as xp
from clnp._runtime.device import select_device
from clnp._core.dtypes import kind as dkind

__all__ = ["DataLoader"]


class _Failure:
    """An exception raised in the loader thread, carried to the consumer."""

    def __init__(self, exc: BaseException):
        self.exc = exc


_DONE = object()


def _to_host(fname: str, name: str, a: Any) -> np.ndarray:
    if hasattr(a, "__array_namespace__") and hasattr(a, "device") and \
            not isinstance(a, np.ndarray):
        a = xp.asnumpy(a)
    try:
        h = np.asarray(a)
    except Exception as e:  # noqa: BLE001 - any conversion failure is a bad argument
        raise TypeError(f"{fname}: {name} cannot be converted to an array ({e})") from None
    if dkind(h.dtype) not in "biufc":
        got = f"got {type(a).__name__}, " if h.dtype == object and h.ndim == 0 else ""
        raise TypeError(f"{fname}: {name} has dtype {h.dtype} ({got}not an array of numbers); "
                        f"only numeric and bool arrays can be uploaded")
    if h.ndim == 0:
        raise ValueError(f"{fname}: {name} must have a leading batch dimension; got a 0-d "
                         f"array")
    return h


class DataLoader:
    """Iterate over mini-batches of ``arrays`` as device arrays, one epoch per ``iter()``.

    Parameters
    ----------
    arrays : array, tuple/list of arrays, or dict of arrays
        Host (NumPy) or clnp arrays with a common leading dimension (clnp arrays are copied
        to the host once). Batches have the same form: one array, a tuple of arrays (for a
        tuple or list), or a dict.
    batch_size : int
        Rows per batch.
    shuffle : bool
        Visit the rows in a random order, a new one each epoch.
    seed : int
        Epoch ``e`` uses the permutation of ``numpy.random.default_rng(seed + e)``, so the
        order is the same on every run and a resumed run can continue it (:meth:`set_epoch`).
    drop_last : bool
        Drop the final batch when it has fewer than ``batch_size`` rows.
    prefetch : int
        Batches uploaded ahead by the background thread; 0 uploads in the caller's thread.
    device : clnp Device or device spec, optional
        Where batches go (``"pocl:1"``, an index, a Device; default: the default device when
        iteration starts).

    Raises
    ------
    TypeError, ValueError
        For arrays that are not numeric, have no leading dimension or differ in length, for
        a non-positive ``batch_size`` or negative ``prefetch``, and for an unknown device.

    Examples
    --------
    >>> import numpy
    >>> from clnp_nn.data import DataLoader
    >>> x_train = numpy.arange(10, dtype=numpy.float32).reshape(5, 2)
    >>> y_train = numpy.arange(5, dtype=numpy.int32)
    >>> loader = DataLoader((x_train, y_train), batch_size=2, seed=0)
    >>> len(loader)                         # batches per epoch
    3
    >>> for epoch in range(2):
    ...     for xb, yb in loader:           # epoch e shuffles with seed + e
    ...         print(epoch, xb.shape, numpy.asarray(yb))
    0 (2, 2) [2 4]
    0 (2, 2) [3 0]
    0 (1, 2) [1]
    1 (2, 2) [...]
    1 (2, 2) [...]
    1 (1, 2) [...]
    >>> len(DataLoader(x_train, batch_size=2, drop_last=True))
    2
    """

    def __init__(self, arrays: Any, batch_size: int, shuffle: bool = True, seed: int = 0,
                 drop_last: bool = False, prefetch: int = 2, *, device: Any = None):
        fname = "DataLoader"
        for name, v, low in (("batch_size", batch_size, 1), ("prefetch", prefetch, 0)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"{fname}: {name} must be an int >= {low}; got "
                                f"{type(v).__name__} {v!r}")
            if v < low:
                raise ValueError(f"{fname}: {name} must be an int >= {low}; got {v!r}")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"{fname}: seed must be an int; got {type(seed).__name__}")
        if isinstance(arrays, dict):
            self._kind, keys, items = "dict", list(arrays), list(arrays.values())
        elif isinstance(arrays, (tuple, list)):
            self._kind, keys, items = "tuple", [f"arrays[{i}]" for i in range(len(arrays))], \
                list(arrays)
        else:
            self._kind, keys, items = "single", ["arrays"], [arrays]
        if not items:
            raise ValueError(f"{fname}: arrays is empty")
        self._keys = keys
        self._host = [_to_host(fname, str(k), a) for k, a in zip(keys, items)]
        n = {len(h) for h in self._host}
        if len(n) != 1:
            raise ValueError(f"{fname}: the arrays must have the same length (leading "
                             f"dimension); got " + ", ".join(f"{k}: {h.shape}" for k, h in
                                                              zip(keys, self._host)))
        self.num_rows = n.pop()
        self.batch_size, self.shuffle, self.seed = int(batch_size), bool(shuffle), int(seed)
        self.drop_last, self.prefetch = bool(drop_last), int(prefetch)
        self.device = None if device is None else select_device(device, arg=f"{fname}: device")
        self.epoch = 0

    def __len__(self) -> int:
        if self.drop_last:
            return self.num_rows // self.batch_size
        return math.ceil(self.num_rows / self.batch_size)

    def set_epoch(self, epoch: int) -> None:
        """Make the next ``iter()`` run epoch ``epoch`` (its shuffle order), e.g. to resume.

        Parameters
        ----------
        epoch : int
            >= 0.

        Returns
        -------
        None

        Raises
        ------
        ValueError
            If ``epoch`` is not a non-negative int.

        Examples
        --------
        >>> import numpy
        >>> from clnp_nn.data import DataLoader
        >>> loader = DataLoader(numpy.arange(4), batch_size=2, seed=0, prefetch=0)
        >>> first = [numpy.asarray(b).tolist() for b in loader]     # epoch 0
        >>> loader.set_epoch(0)        # e.g. after loading a checkpoint: replay epoch 0
        >>> [numpy.asarray(b).tolist() for b in loader] == first
        True
        >>> loader.epoch               # the next iter() runs epoch 1
        1
        """
        if isinstance(epoch, bool) or not isinstance(epoch, (int, np.integer)) or epoch < 0:
            raise ValueError(f"DataLoader.set_epoch: epoch must be an int >= 0; got {epoch!r}")
        self.epoch = int(epoch)

    def order(self, epoch: int) -> np.ndarray:
        """The row order of epoch ``epoch``.

        Parameters
        ----------
        epoch : int
            The epoch number (>= 0).

        Returns
        -------
        numpy.ndarray
            ``default_rng(seed + epoch).permutation(n)`` when shuffling, else ``arange(n)``.

        Examples
        --------
        >>> import numpy
        >>> from clnp_nn.data import DataLoader
        >>> x = numpy.zeros((5, 2), dtype=numpy.float32)
        >>> DataLoader(x, 2, seed=0).order(0)
        array([2, 4, 3, 0, 1])
        >>> DataLoader(x, 2, shuffle=False).order(0)
        array([0, 1, 2, 3, 4])
        """
        if self.shuffle:
            return np.random.default_rng(self.seed + epoch).permutation(self.num_rows)
        return np.arange(self.num_rows)

    def _batch(self, rows: np.ndarray, device: Any) -> Any:
        parts = [xp.asarray(np.take(h, rows, axis=0), device=device) for h in self._host]
        if self._kind == "single":
            return parts[0]
        if self._kind == "dict":
            return dict(zip(self._keys, parts))
        return tuple(parts)

    def __iter__(self) -> Iterator[Any]:
        device = self.device if self.device is not None else xp.default_device()
        for k, h in zip(self._keys, self._host):
            if not device.supports(h.dtype):
                raise TypeError(f"DataLoader: {k} has dtype {h.dtype}, which {device} cannot "
                                f"hold (no cl_khr_fp64); convert it, e.g. to float32")
        order = self.order(self.epoch)
        self.epoch += 1
        bounds = [(i, min(i + self.batch_size, self.num_rows))
                  for i in range(0, self.num_rows, self.batch_size)][:len(self)]
        if self.prefetch == 0:
            return (self._batch(order[a:b], device) for a, b in bounds)
        return self._threaded(order, bounds, device)

    def _threaded(self, order: np.ndarray, bounds: list, device: Any) -> Iterator[Any]:
        q: queue.Queue = queue.Queue(maxsize=self.prefetch)
        stop = threading.Event()

        def put(item: Any) -> bool:
            while not stop.is_set():
                try:
                    q.put(item, timeout=0.05)
                    return True
                except queue.Full:
                    continue
            return False

        def produce() -> None:
            try:
                for a, b in bounds:
                    if stop.is_set() or not put(self._batch(order[a:b], device)):
                        return
                put(_DONE)
            except BaseException as e:  # noqa: BLE001 - handed to the consumer
                put(_Failure(e))

        # started on the first next(), inside the try, so that an iterator that is dropped
        # unstarted leaves no thread behind
        worker = threading.Thread(target=produce, name="clnp_nn.DataLoader", daemon=True)
        worker.start()
        try:
            while True:
                item = q.get()
                if item is _DONE:
                    return
                if isinstance(item, _Failure):
                    raise item.exc
                yield item
        finally:
            # early exit (break, exception, garbage collection): stop the thread, free the
            # batches it holds, and wait for it so no upload outlives the iteration
            stop.set()
            while worker.is_alive():
                try:
                    q.get(timeout=0.05)
                except queue.Empty:
                    pass
            worker.join()

    def __repr__(self) -> str:
        return (f"DataLoader({self.num_rows} rows, batch_size={self.batch_size}, "
                f"shuffle={self.shuffle}, seed={self.seed}, drop_last={self.drop_last}, "
                f"prefetch={self.prefetch}, batches={len(self)})")



