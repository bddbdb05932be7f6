"""Bound kernels: a private kernel object whose constant arguments are set once.

A compiled ``clnp_grad.jit`` step or a captured launch enqueues the same kernel with the same
sizes, strides, offsets and constants on every call; only the buffers change. PyOpenCL's
generated invoker sets every argument on every call, and setting a scalar argument costs far
more than the launch itself (PoCL CPU, measured: ~1.8 us to enqueue with unchanged arguments,
~15 us when the scalars are set again, ~0.1 us to set a buffer). A ``BoundKernel`` owns a copy
of the kernel (so no other user's ``set_arg`` disturbs its arguments), sets the constant ones
when it is made, rebinds the buffers on each call and sets a scalar again only when its value
changed.
"""
from __future__ import annotations

import ctypes
import threading
from typing import Any, Sequence

import numpy as np

from . import capture_hooks as _hooks
from .opencl import cl
from .run_ahead import note_launch as _note_launch

_UNSET = object()      # compares unequal to every value


def launches_work(gsize: Sequence[int]) -> bool:
    """Whether a launch over the global size ``gsize`` runs any work-item: the one test
    every clnp launch passes (``Kernel.__call__``, ``Launch``), so that an empty shape
    never reaches the driver. A launch over no work-items is no launch at all: PoCL 3.0
    (the runtime ``pip install clnp[pocl]`` brings) divides by zero in its enqueue of a zero
    global size (SIGFPE, fatal once ``faulthandler`` is enabled: issue #28), and OpenCL 1.2
    devices refuse it (``CL_INVALID_GLOBAL_WORK_SIZE``).

    Examples
    --------
    >>> from clnp._runtime.launch import launches_work
    >>> launches_work((128, 4)), launches_work((0,)), launches_work((64, 0, 2))
    (True, False, False)
    """
    return 0 not in gsize


def enqueue(queue: Any, kernel: Any, gsize: tuple[int, ...], lsize: tuple[int, ...] | None
            ) -> Any:
    """``clEnqueueNDRangeKernel`` through PyOpenCL, with the kernel's arguments as they are
    set; None (no launch) over zero work-items."""
    if not launches_work(gsize):
        return None
    event = cl.enqueue_nd_range_kernel(queue, kernel, gsize, lsize)
    _note_launch(queue, event)
    return event


_enqueue = _PYOPENCL_ENQUEUE = enqueue


def _kernel_class() -> type:
    """``Kernel``, made on first use: it subclasses ``pyopencl.Kernel``, and PyOpenCL is
    imported when clnp first needs a device (clnp._runtime.opencl), not at ``import clnp``."""
    kernel_call = cl.Kernel.__call__
    kernel_set_arg, kernel_set_args = cl.Kernel.set_arg, cl.Kernel.set_args

    class Kernel(cl.Kernel):
        """A ``pyopencl.Kernel`` whose call over zero work-items launches nothing (and returns
        None instead of an event): every kernel clnp makes is one (``Device.kernel``, bound and
        planned copies, ``RawKernel``), so empty shapes are safe on every launch path.

        Examples
        --------
        >>> import clnp
        >>> from clnp._runtime.launch import Kernel
        >>> d = clnp.default_device()
        >>> src = "__kernel void one(__global int *x) { x[get_global_id(0)] = 1; }"
        >>> k = d.kernel(("doc-example", "one"), lambda: (src, "one", None))
        >>> isinstance(k, Kernel)
        True
        >>> x = clnp.zeros(4, dtype=clnp.int32)
        >>> k(d.queue, (0,), None, x._buf) is None          # no work-items: no launch
        True

        Notes
        -----
        A kernel object's arguments are shared state: OpenCL makes every call thread-safe except
        ``clSetKernelArg`` on one kernel from several threads, and a launch takes the arguments
        as they are when it is enqueued. Eager ops share one kernel object per spec across
        threads, so setting the arguments and enqueueing happen under the kernel's ``lock`` (a
        reentrant lock: a planned product sets its offsets, then launches, under it). Without it,
        four threads of eager ops on a 64-core Xeon (embedded PoCL) got other threads' sums and
        sorts, or crashed, in 3-4 of 48 processes (tests/robust/test_processes_threads.py).
        """

        def __init__(self, program: Any, name: str):
            super().__init__(program, name)
            self.lock = threading.RLock()
            # the replay step (clnp._core.capture) whose kept buffers the arguments hold,
            # cleared by every other way of setting them: a replayed launch then sets only
            # the buffers that change per call (on NVIDIA each set costs about a microsecond;
            # the character transformer's step kept 637 of them)
            self.args_of: Any = None
            # arguments set once for the kernel's life (set_fixed_arg), by position: what a
            # replay as a CUDA graph passes for them (clnp._runtime.cuda_graph). A later
            # set_arg of such a position (a recording moving a kept buffer onto a shared
            # one) replaces the value, so no buffer is held past its use
            self.fixed_args: dict[int, Any] = {}

        def set_fixed_arg(self, index: int, value: Any) -> None:
            """Set argument ``index`` for every later launch of this kernel object."""
            self.set_arg(index, value)
            self.fixed_args[index] = value

        def set_arg(self, index: int, value: Any) -> None:
            self.args_of = None
            fixed = self.fixed_args
            if fixed and index in fixed:
                fixed[index] = value
            kernel_set_arg(self, index, value)

        def set_args(self, *args: Any, **kwargs: Any) -> None:
            self.args_of = None
            fixed = self.fixed_args
            for index in fixed:
                if index < len(args):
                    fixed[index] = args[index]
            kernel_set_args(self, *args, **kwargs)

        def __call__(self, queue: Any, global_size: tuple[int, ...],
                     local_size: tuple[int, ...] | None, *args: Any, **kwargs: Any) -> Any:
            if not launches_work(global_size):
                return None
            with self.lock:
                self.args_of = None
                event = kernel_call(self, queue, global_size, local_size, *args, **kwargs)
            _note_launch(queue, event)      # the bound on run-ahead (run_ahead.py)
            return event

    Kernel.__module__, Kernel.__qualname__ = __name__, "Kernel"
    return Kernel


def __getattr__(name: str) -> Any:
    if name == "Kernel":
        with _kernel_class_lock:
            if "Kernel" not in globals():
                globals()["Kernel"] = _kernel_class()
        return globals()["Kernel"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_kernel_class_lock = threading.Lock()


# Launches without an event, straight through the OpenCL library, on the platforms where that
# saves time. PyOpenCL makes an event object for every launch; NVIDIA's driver charges for it
# (H200, the jitted MLP step's 24 launches replayed: 316 us through PyOpenCL, 241 us without
# events), while PoCL's enqueue without one is no cheaper and the foreign call costs more (18
# launches: 51 against 75 us). Setting NO_EVENT = False, or replacing ``_enqueue`` (profiling
# probes record events through it), launches through PyOpenCL again.
NO_EVENT = True
_NO_EVENT_VENDORS = ("NVIDIA",)
_lib: Any = None
_by_context: dict[int, bool] = {}


def opencl_library_path() -> str:
    """The OpenCL ICD loader PyOpenCL itself uses: the one mapped into this process (a
    PyOpenCL wheel brings its own, ``pyopencl/.libs/libOpenCL-*.so``, and a pip-only
    environment has no other), else the system's. Calling through the same loader keeps one
    platform list per process.

    Examples
    --------
    >>> from clnp._runtime.launch import opencl_library_path
    >>> "OpenCL" in opencl_library_path()
    True
    """
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.rsplit(None, 1)[-1] if line.count(" ") >= 5 else ""
                if "libOpenCL" in path.rsplit("/", 1)[-1]:
                    return path
    except OSError:      # not Linux
        pass
    import ctypes.util      # brings subprocess: 8 ms of import clnp, so only here
    return ctypes.util.find_library("OpenCL") or "libOpenCL.so.1"


def _library() -> Any:
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(opencl_library_path())
        f = lib.clEnqueueNDRangeKernel
        f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p,
                      ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p,
                      ctypes.c_void_p]
        f.restype = ctypes.c_int32
        _lib = f
    return _lib


def _wants_no_event(kernel: Any) -> bool:
    ctx = kernel.context
    key = ctx.int_ptr
    hit = _by_context.get(key)
    if hit is None:
        vendor = ctx.devices[0].platform.vendor
        hit = _by_context[key] = any(v in vendor for v in _NO_EVENT_VENDORS)
    return hit


class Launch:
    """``kernel`` enqueued over ``gsize``/``lsize`` with its arguments as they are set: without
    an event where the platform's launches are cheaper so (``NO_EVENT``), else through
    PyOpenCL."""

    __slots__ = ("kernel", "gsize", "lsize", "fast")

    def __init__(self, kernel: Any, gsize: tuple[int, ...], lsize: tuple[int, ...] | None):
        self.kernel, self.gsize, self.lsize = kernel, gsize, lsize
        self.fast: Any = None
        if NO_EVENT and launches_work(gsize) and _wants_no_event(kernel):
            try:
                fn = _library()
            except (OSError, AttributeError):
                return
            g = (ctypes.c_size_t * len(gsize))(*gsize)
            loc = (ctypes.c_size_t * len(lsize))(*lsize) if lsize else None
            self.fast = (fn, kernel.int_ptr, len(gsize), g, loc)

    def __call__(self, queue: Any) -> None:
        fast = self.fast
        if fast is not None and NO_EVENT and _enqueue is _PYOPENCL_ENQUEUE:
            fn, kp, dim, g, loc = fast
            if fn(queue.int_ptr, kp, dim, None, g, loc, 0, None, None) == 0:
                _note_launch(queue)
                return
            # an error: PyOpenCL's enqueue raises it with its name (or succeeds, if the
            # condition has passed)
        _enqueue(queue, self.kernel, self.gsize, self.lsize)


def launch_with(kernel: Any, launch: "Launch", queue: Any, args: Sequence[Any]) -> None:
    """Set ``args`` on ``kernel`` and enqueue ``launch`` of it: without an event where the
    platform's launches are cheaper so (``Launch``), else through PyOpenCL's invoker, which
    sets and enqueues as cheaply itself. The eager ops' path (dispatch.apply_fast): on an
    H200 a small ``a + b`` went from 13.6-14.8 to 12.8-13.1 us of host time.

    Examples
    --------
    >>> import clnp
    >>> from clnp._runtime.launch import Launch, launch_with
    >>> d = clnp.default_device()
    >>> src = "__kernel void two(__global int *x) { x[get_global_id(0)] = 2; }"
    >>> k = d.kernel(("doc-example", "two"), lambda: (src, "two", None))
    >>> x = clnp.zeros(4, dtype=clnp.int32)
    >>> launch_with(k, Launch(k, (4,), None), d.queue, [x._buf])
    >>> print(x)
    [2 2 2 2]
    """
    if launch.fast is None:
        kernel(queue, launch.gsize, launch.lsize, *args)
        return
    with kernel.lock:
        kernel.set_args(*args)
        launch(queue)


def _arg(value: Any, dtype: Any) -> Any:
    """``value`` as ``set_arg`` takes it: a NumPy scalar of the parameter's C type."""
    return value if dtype is None or value is None else np.asarray(value, dtype)[()]


class BoundKernel:
    """``kernel`` with every argument but ``bufpos`` and ``valpos`` fixed to ``args``."""

    __slots__ = ("kernel", "gsize", "lsize", "bufpos", "valpos", "dtypes", "last", "launch")

    def __init__(self, kernel: Any, gsize: tuple[int, ...], lsize: tuple[int, ...] | None,
                 args: Sequence[Any], bufpos: Sequence[int], valpos: Sequence[int],
                 arg_dtypes: Sequence[Any]):
        k = Kernel(kernel.program, kernel.function_name)
        skip = set(bufpos)
        for pos, a in enumerate(args):
            if pos not in skip:
                k.set_fixed_arg(pos, _arg(a, arg_dtypes[pos]))
        self.kernel, self.gsize, self.lsize = k, gsize, lsize
        self.bufpos, self.valpos = tuple(bufpos), tuple(valpos)
        self.dtypes = tuple(arg_dtypes[p] for p in valpos)
        self.last = [args[p] for p in valpos]
        self.launch = Launch(k, gsize, lsize)

    def __call__(self, queue: Any, bufs: Sequence[Any], vals: Sequence[Any] = ()) -> None:
        """Enqueue on ``queue`` with ``bufs`` at ``bufpos`` and ``vals`` at ``valpos``."""
        k = self.kernel
        if _hooks.current() is not None:
            # inside a capture (a jitted function's step run by another one's): a replay
            # rebinds the buffers; scalars that change per call cannot be replayed
            _hooks.note_preset_launch(k, self.gsize, self.lsize, dict(zip(self.bufpos, bufs)))
            if self.valpos:
                _hooks.note_readback()
        with k.lock:        # one jitted function called from several threads (Kernel)
            for pos, b in zip(self.bufpos, bufs):
                k.set_arg(pos, b)
            if vals:
                last = self.last
                for i, v in enumerate(vals):
                    if v != last[i]:
                        # forget the old value first: an interrupt (Ctrl-C) after set_arg
                        # but before the record would otherwise leave a record that no
                        # longer matches the kernel, and a later call with the old value
                        # would skip setting it (tests/robust/test_interrupt.py)
                        last[i] = _UNSET
                        k.set_arg(self.valpos[i], _arg(v, self.dtypes[i]))
                        last[i] = v
            self.launch(queue)


def bind(kernel: Any, gsize: tuple[int, ...], lsize: tuple[int, ...] | None,
         args: Sequence[Any], bufpos: Sequence[int], valpos: Sequence[int] = ()
         ) -> BoundKernel | None:
    """A ``BoundKernel`` of ``kernel`` launched once with ``args``, or None when the kernel's
    scalar parameter types are unknown (it was not made by ``Device.kernel``): then the
    caller keeps launching it through PyOpenCL's invoker."""
    dtypes = getattr(kernel, "_clnp_arg_dtypes", None)
    if dtypes is None or len(dtypes) != len(args):
        return None
    return BoundKernel(kernel, gsize, lsize, args, bufpos, valpos, dtypes)
