"""Replays of recorded launches as CUDA graphs, on NVIDIA devices whose arrays CUDA sees.

On an H200 each OpenCL launch costs 8-9 us of driver time and NVIDIA's OpenCL has no command
buffers, so a jitted step of 46-128 launches (the digits CNN, the character transformer) is
bound by the host: its launches take longer to enqueue than to run. NVIDIA's OpenCL program
binary is PTX, which CUDA loads, and CUDA replays a graph of launches for ~3 us of host time
however many it holds (``bench/probe_cuda_graph.py``). A recorded call
(``clnp._core.capture.Replay``) whose every step is a kernel launch on memory CUDA sees
(``Device.set_cuda_memory``) is therefore replayed as one CUDA graph of the same kernels.

**The PTX.** NVIDIA's OpenCL compiler reads launch geometry the CUDA way (``%ctaid``,
``%ntid``, ``%tid``) plus environment registers its own runtime fills. Measured by launching
kernels that store each builtin (bench/NOTES.md, seventeenth session: ``get_group_id``
reads ``%envreg0``-``2``, ``get_global_id`` ``%envreg3``-``5``, ``get_global_size`` and
``get_num_groups`` ``%envreg6``-``8``, ``get_work_dim`` ``%envreg9``), and under a CUDA
launch those registers do not hold OpenCL's values (register 6 read 1 where OpenCL's held
4, register 0 -943926400 where OpenCL's held 0). clnp launches with no global offset, so registers 0-5 are zero in
OpenCL and are rewritten as the constant 0, and registers 6-8 (the number of work-groups)
become ``%nctaid.x/y/z``. A program reading any other register, or taking a ``__local``
pointer argument (which CUDA refuses to load), is not replayed as a graph.

**Arguments.** A buffer argument is the CUDA pointer of its memory; a scalar the bytes of the
NumPy scalar OpenCL was given, which must be exactly the size of the PTX parameter. The
arguments that change per call (the call's inputs and outputs) are bound per executable
graph: a graph keeps up to :data:`EXECS` instantiations keyed by the addresses of those
buffers (a training loop cycles through a few), and updates the launches of the least
recently used one when the addresses are new.

**Order.** A graph runs on a CUDA stream of its own per device. Before it launches, the OpenCL
queue is drained when anything was enqueued on it since the last graph; afterwards the device
hands its queue out again only after that stream has finished (``Device.yield_to_cuda``): an
OpenCL launch, read or ``synchronize`` waits for the graphs before it. Consecutive graph
replays (a training loop's steps) pipeline on the stream without the host waiting.

**Status: opt-in** (``CLNP_CUDA_GRAPHS=1`` with ``CLNP_CUDA_MEMORY=1``). Measured on one H200
(driver 580): a jitted MLP training loop and a max-pool gradient ran as graphs and matched
the OpenCL replay bit for bit (tests/grad/test_jit_cuda_graph.py), but a process that had run a graph
hung at exit, before the graphs, modules and stream were destroyed at exit as they now are
(:func:`_destroy_all`, not yet run on a GPU). The digits CNN's step was refused there for
an argument set when a kernel was bound; such arguments are now recorded
(``Kernel.set_fixed_arg``, checked on every device by :func:`step_arguments`' test). The
step times are not measured yet.
"""
from __future__ import annotations

import atexit
import ctypes
import os
import re
import threading
import warnings
import weakref
from collections import OrderedDict
from typing import Any, Sequence

import numpy as np

from . import cuda_memory as _cm
from .opencl import cl

# instantiated graphs kept per replay, keyed by the addresses of the call's buffers
EXECS = 4
# Switch, off unless CLNP_CUDA_GRAPHS=1 (read at import; tests set it): on the H200 a process
# that had run a graph did not exit (module docstring, "Status")
ENABLED = os.environ.get("CLNP_CUDA_GRAPHS", "0") == "1"

_PARAM_BYTES = {"b8": 1, "s8": 1, "u8": 1, "b16": 2, "s16": 2, "u16": 2, "f16": 2,
                "b32": 4, "s32": 4, "u32": 4, "f32": 4, "b64": 8, "s64": 8, "u64": 8,
                "f64": 8}
_ENTRY = re.compile(r"\.entry\s+(\w+)\s*\(([^)]*)\)")
_PARAM = re.compile(r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)(\s+\.ptr\s+\.(\w+))?"
                    r"(?:\s+\.align\s+\d+)?\s+\w+(?:\[(\d+)\])?")
_ENVREG_MOV = re.compile(r"mov\.[bu]32(\s+%\w+),\s*%envreg(\d+);")
# what each environment register is rewritten to under a CUDA launch (module docstring)
_ENVREG_VALUE = {0: "0", 1: "0", 2: "0", 3: "0", 4: "0", 5: "0",
                 6: "%nctaid.x", 7: "%nctaid.y", 8: "%nctaid.z"}


class Refused(Exception):
    """Why a recording cannot run as a CUDA graph (it then replays through OpenCL)."""


def rewrite_ptx(ptx: str) -> str:
    """NVIDIA OpenCL PTX made to run under a CUDA launch (module docstring).

    Parameters
    ----------
    ptx : str
        A program binary of NVIDIA's OpenCL driver.

    Returns
    -------
    str
        The PTX with every environment register read replaced.

    Raises
    ------
    Refused
        The PTX reads a register with no CUDA equivalent, or takes ``__local`` pointers.

    Examples
    --------
    >>> from clnp._runtime.cuda_graph import rewrite_ptx
    >>> print(rewrite_ptx("mov.b32 %r1, %envreg3; mov.b32 %r2, %envreg6;"))
    mov.u32 %r1, 0; mov.u32 %r2, %nctaid.x;
    """
    for _, params in _ENTRY.findall(ptx):
        if ".ptr .shared" in params:
            raise Refused("a kernel takes a __local pointer argument")

    def sub(m: re.Match) -> str:
        value = _ENVREG_VALUE.get(int(m.group(2)))
        if value is None:
            raise Refused(f"a kernel reads %envreg{m.group(2)} (get_work_dim or another "
                          f"builtin with no CUDA equivalent)")
        return f"mov.u32{m.group(1)}, {value};"
    out = _ENVREG_MOV.sub(sub, ptx)
    if "%envreg" in out:
        raise Refused("a kernel reads an environment register in a form not rewritten")
    return out


def entry_params(ptx: str) -> dict[str, list[int]]:
    """The byte size of every parameter of every kernel entry in ``ptx``.

    Examples
    --------
    >>> from clnp._runtime.cuda_graph import entry_params
    >>> entry_params(".entry k(.param .u64 .ptr .global .align 4 k_param_0, "
    ...              ".param .f32 k_param_1, .param .align 8 .b8 k_param_2[16])")
    {'k': [8, 4, 16]}
    """
    out: dict[str, list[int]] = {}
    for name, params in _ENTRY.findall(ptx):
        sizes = []
        for m in _PARAM.finditer(params):
            kind, ptr, count = m.group(1), m.group(2), m.group(4)
            size = 8 if ptr else _PARAM_BYTES.get(kind)
            if size is None:
                raise Refused(f"kernel {name}: parameter type .{kind} not understood")
            sizes.append(size * (int(count) if count else 1))
        out[name] = sizes
    return out


def launch_dims(gsize: Sequence[int], lsize: Sequence[int] | None
                ) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """CUDA grid and block dimensions of an OpenCL launch over ``gsize`` in work-groups of
    ``lsize``.

    Examples
    --------
    >>> from clnp._runtime.cuda_graph import launch_dims
    >>> launch_dims((1024, 16), (16, 16))
    ((64, 1, 1), (16, 16, 1))
    """
    if lsize is None:
        raise Refused("a launch leaves its work-group size to the OpenCL driver")
    if len(gsize) != len(lsize) or len(gsize) > 3:
        raise Refused(f"launch geometry {tuple(gsize)} / {tuple(lsize)}")
    if any(g % l for g, l in zip(gsize, lsize)):
        raise Refused(f"global size {tuple(gsize)} not a multiple of {tuple(lsize)}")
    pad = (1,) * (3 - len(gsize))
    grid = tuple(g // l for g, l in zip(gsize, lsize)) + pad
    block = tuple(lsize) + pad
    if grid[1] > 65535 or grid[2] > 65535 or grid[0] >= 1 << 31:
        raise Refused(f"grid {grid} beyond CUDA's limits")
    return grid, block  # type: ignore[return-value]


def scalar_bytes(value: Any, size: int) -> bytes:
    """The bytes CUDA passes for a scalar argument OpenCL was given as ``value``.

    Examples
    --------
    >>> import numpy as np
    >>> from clnp._runtime.cuda_graph import scalar_bytes
    >>> scalar_bytes(np.int32(7), 4)
    b'\\x07\\x00\\x00\\x00'
    """
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if not isinstance(value, np.generic):
        raise Refused(f"a scalar argument of type {type(value).__name__} has no fixed size")
    raw = value.tobytes()
    if len(raw) != size:
        raise Refused(f"a {value.dtype} argument for a {size}-byte parameter")
    return raw


# ------------------------------------------------------------------------- CUDA modules
class _Module:
    """One OpenCL program's PTX loaded into CUDA: its functions and their parameter sizes."""

    def __init__(self, device: Any, program: Any):
        devices = program.get_info(cl.program_info.DEVICES)
        index = [d.int_ptr for d in devices].index(device.cl_device.int_ptr)
        ptx = bytes(program.get_info(cl.program_info.BINARIES)[index])
        text = ptx.rstrip(b"\0").decode()
        if ".entry" not in text:
            raise Refused("the program binary is not PTX")
        text = rewrite_ptx(text)
        self.params = entry_params(text)
        cu = _cm._driver()
        self.functions: dict[str, Any] = {}
        self.ordinal = _cm.cuda_ordinal(device)
        with _cm._Context(self.ordinal):
            result = cu.cuModuleLoadData(text.encode() + b"\0")
            if result[0] != cu.CUresult.CUDA_SUCCESS:
                raise Refused(f"CUDA did not load the program's PTX ({result[0]!r})")
            self.module = result[1]

    def function(self, name: str) -> Any:
        fn = self.functions.get(name)
        if fn is None:
            cu = _cm._driver()
            with _cm._Context(self.ordinal):
                fn = self.functions[name] = _cm._check(
                    cu, cu.cuModuleGetFunction(self.module, name.encode()),
                    "cuModuleGetFunction")
        return fn


# program handle -> (the program, kept so that no other program takes its handle; its
# module or why it has none)
_MODULES: dict[int, tuple[Any, _Module | Refused]] = {}
_LOCK = threading.Lock()


def _module(device: Any, program: Any) -> _Module:
    key = program.int_ptr
    with _LOCK:
        hit = _MODULES.get(key)
        if hit is None:
            try:
                m: _Module | Refused = _Module(device, program)
            except Refused as e:
                m = e
            hit = _MODULES[key] = (program, m)
    m = hit[1]
    if isinstance(m, Refused):
        raise m
    return m


# ------------------------------------------------------------------------------- streams
class _Stream:
    """A device's CUDA stream for graphs, and the wait the device's queue needs after one."""

    def __init__(self, device: Any):
        cu = _cm._driver()
        self.ctx = _cm._Context(_cm.cuda_ordinal(device))
        with self.ctx:
            self.stream = _cm._check(cu, cu.cuStreamCreate(0), "cuStreamCreate")

    def wait(self) -> None:
        cu = _cm._driver()
        with self.ctx:
            _cm._check(cu, cu.cuStreamSynchronize(self.stream), "cuStreamSynchronize")


_STREAMS: dict[Any, _Stream] = {}


def _stream(device: Any) -> _Stream:
    with _LOCK:
        s = _STREAMS.get(device)
        if s is None:
            s = _STREAMS[device] = _Stream(device)
    return s


# -------------------------------------------------------------------------------- graphs
class _Node:
    """One launch of a graph: its CUDA parameters and which of them are the call's buffers."""

    __slots__ = ("params", "holders", "pointers", "slots", "handle")

    def __init__(self, fn: Any, grid: tuple, block: tuple, values: list[Any],
                 slots: list[tuple[int, int]]):
        cu = _cm._driver()
        self.holders = values           # ctypes objects the pointer array points at
        self.pointers = (ctypes.c_void_p * max(len(values), 1))(
            *[ctypes.addressof(v) for v in values])
        p = cu.CUDA_KERNEL_NODE_PARAMS()
        p.func = fn
        p.gridDimX, p.gridDimY, p.gridDimZ = grid
        p.blockDimX, p.blockDimY, p.blockDimZ = block
        p.sharedMemBytes = 0
        p.kernelParams = ctypes.addressof(self.pointers)
        self.params = p
        self.slots = slots              # (argument position, call slot)
        self.handle: Any = None


def step_arguments(step: tuple) -> tuple[Any, Any, Any, list[Any], dict[int, int]]:
    """The kernel, global and local sizes, argument values by position (None where the call
    binds a buffer) and call slots by position of a replay step (``clnp._core.capture``).

    Raises
    ------
    Refused
        The step is not a kernel launch, or an argument's value is not known: set on the
        kernel object some other way than ``set_fixed_arg`` or the recording.

    Examples
    --------
    >>> from clnp._runtime.cuda_graph import Refused, step_arguments
    >>> try:
    ...     step_arguments(("u", None, None, None))
    ... except Refused as e:
    ...     print(e)
    an upload of host data
    """
    kind = step[0]
    if kind == "b":
        _, bound, slot_pairs, _kept = step
        # the bound kernel's own arguments, kept buffers included: a rebind sets them
        # through set_arg, which keeps fixed_args current
        kernel, gsize, lsize = bound.kernel, bound.gsize, bound.lsize
        fixed = kernel.fixed_args
    elif kind == "p":
        _, kernel, gsize, lsize, slot_pairs, preset, _launch = step
        fixed = dict(getattr(kernel, "fixed_args", {}))
        fixed.update(preset)
    elif kind == "k":
        _, kernel, gsize, lsize, args, slot_pairs = step
        fixed = dict(enumerate(args))
    else:
        raise Refused({"h": "a product in the host's BLAS", "u": "an upload of host data"}
                      .get(kind, f"a step of kind {kind!r}"))
    slots = dict(slot_pairs)
    values: list[Any] = []
    for pos in range(kernel.num_args):
        if pos in slots:
            values.append(None)
        elif pos in fixed:
            values.append(fixed[pos])
        else:
            raise Refused(f"kernel {kernel.function_name}: argument {pos} unknown")
    return kernel, gsize, lsize, values, slots


_LIVE: "weakref.WeakSet[GraphReplay]" = weakref.WeakSet()


class GraphReplay:
    """A recorded call's launches as one CUDA graph (module docstring)."""

    def __init__(self, device: Any, steps: list[tuple], bufs: Sequence[Any]):
        cu = _cm._driver()
        self.graph: Any = None
        self.execs: OrderedDict[tuple, Any] = OrderedDict()
        self.lock = threading.Lock()
        self.device = device
        self.stream = _stream(device)
        self.checks = [s[1] for s in steps if s[0] == "c"]
        self.nodes: list[_Node] = []
        used: set[int] = set()
        for step in steps:
            if step[0] == "c":
                continue
            kernel, gsize, lsize, args, slot_of = step_arguments(step)
            if 0 in gsize:
                continue
            grid, block = launch_dims(gsize, lsize)
            mod = _module(device, kernel.program)
            name = kernel.function_name
            sizes = mod.params.get(name)
            if sizes is None or len(sizes) != len(args):
                raise Refused(f"kernel {name}: its PTX entry and OpenCL arguments differ")
            values: list[Any] = []
            for pos, (size, a) in enumerate(zip(sizes, args)):
                if pos in slot_of:
                    address = _cm.address_of(device, bufs[slot_of[pos]])
                    if address is None or size != 8:
                        raise Refused("an input or output outside memory CUDA sees")
                    values.append(ctypes.c_uint64(address))
                    used.add(slot_of[pos])
                elif isinstance(a, cl.MemoryObjectHolder):
                    address = _cm.address_of(device, a)
                    if address is None or size != 8:
                        raise Refused(f"kernel {name}: a buffer outside memory CUDA sees")
                    values.append(ctypes.c_uint64(address))
                elif isinstance(a, cl.LocalMemory):
                    raise Refused(f"kernel {name}: a __local argument")
                else:
                    raw = scalar_bytes(a, size)
                    values.append((ctypes.c_char * size).from_buffer_copy(raw))
            self.nodes.append(_Node(mod.function(name), grid, block, values,
                                    sorted(slot_of.items())))
        self.slots = sorted(used)
        with self.stream.ctx:
            self.graph = _cm._check(cu, cu.cuGraphCreate(0), "cuGraphCreate")
            prev: list[Any] = []
            for node in self.nodes:
                node.handle = _cm._check(cu, cu.cuGraphAddKernelNode(
                    self.graph, prev, len(prev), node.params), "cuGraphAddKernelNode")
                prev = [node.handle]
        self.template = self.key(bufs)
        _LIVE.add(self)

    def destroy(self) -> None:
        """Destroy the instantiations and the graph (the stream is waited for first)."""
        cu = _cm._driver()
        with self.lock, self.stream.ctx:
            cu.cuStreamSynchronize(self.stream.stream)
            for ex in self.execs.values():
                cu.cuGraphExecDestroy(ex)
            self.execs.clear()
            if self.graph is not None:
                cu.cuGraphDestroy(self.graph)
                self.graph = None

    def __del__(self) -> None:
        if self.graph is not None and _cm._cu is not None:
            try:
                self.destroy()
            except Exception:    # interpreter shutdown: the driver may be gone
                pass

    def key(self, bufs: Sequence[Any]) -> tuple | None:
        """The CUDA addresses of the call's buffers the graph uses, None if one has none."""
        device = self.device
        out = []
        for k in self.slots:
            a = _cm.address_of(device, bufs[k])
            if a is None:
                return None
            out.append(a)
        return tuple(out)

    def launch(self, bufs: Sequence[Any]) -> bool:
        """Launch the graph on ``bufs`` (the call's buffers by slot) after the device's
        queued work; False, launching nothing, when one of them is not in memory CUDA sees."""
        key = self.key(bufs)
        if key is None:
            return False
        cu = _cm._driver()
        device, stream = self.device, self.stream
        with self.lock:
            ex = self.execs.get(key)
            with stream.ctx:
                if ex is None:
                    ex = self._exec_for(cu, key)
                else:
                    self.execs.move_to_end(key)
                device.yield_to_cuda(stream.wait)
                _cm._check(cu, cu.cuGraphLaunch(ex, stream.stream), "cuGraphLaunch")
        return True

    def _exec_for(self, cu: Any, key: tuple) -> Any:
        """An instantiation bound to the buffers ``key``: a new one, or the least recently
        used one with the launches that read other addresses updated."""
        if len(self.execs) < EXECS:
            ex = _cm._check(cu, cu.cuGraphInstantiate(self.graph, 0), "cuGraphInstantiate")
            old = self.template
        else:
            old, ex = self.execs.popitem(last=False)
        where = dict(zip(self.slots, range(len(self.slots))))
        for node in self.nodes:
            if any(old[where[k]] != key[where[k]] for _, k in node.slots):
                for pos, k in node.slots:
                    node.holders[pos].value = key[where[k]]
                _cm._check(cu, cu.cuGraphExecKernelNodeSetParams(ex, node.handle,
                                                                 node.params),
                           "cuGraphExecKernelNodeSetParams")
        self.execs[key] = ex
        return ex


def _destroy_all() -> None:
    """At exit, before the shared memory is freed (``cuda_memory.free_all``, registered
    earlier, runs later): every graph, module and stream this process made."""
    if _cm._cu is None:
        return
    cu = _cm._cu
    for g in list(_LIVE):
        g.destroy()
    for s in list(_STREAMS.values()):
        with s.ctx:
            cu.cuStreamSynchronize(s.stream)
            cu.cuStreamDestroy(s.stream)
    for _, m in list(_MODULES.values()):
        if isinstance(m, _Module):
            with _cm._Context(m.ordinal):
                cu.cuModuleUnload(m.module)
    _MODULES.clear()
    _STREAMS.clear()


atexit.register(_destroy_all)


def wanted(device: Any) -> bool:
    """Whether recorded calls on ``device`` replay as CUDA graphs: its arrays are in memory
    CUDA sees (``Device.set_cuda_memory``) and :data:`ENABLED`.

    Examples
    --------
    >>> import clnp
    >>> from clnp._runtime import cuda_graph
    >>> cuda_graph.wanted(clnp.default_device()) == (cuda_graph.ENABLED and
    ...                                              clnp.default_device().cuda_memory)
    True
    """
    return ENABLED and device.cuda_memory


def plan(device: Any, steps: list[tuple], bufs: Sequence[Any]) -> GraphReplay | str:
    """The CUDA graph of a recording's ``steps`` bound first to ``bufs``, or why there is none.

    Examples
    --------
    >>> import clnp
    >>> from clnp._runtime import cuda_graph
    >>> cuda_graph.plan(clnp.default_device(), [("u", None, None, None)], [])
    'an upload of host data'
    """
    try:
        for s in steps:
            if s[0] in ("h", "u"):
                step_arguments(s)          # raises, naming the step
        return GraphReplay(device, steps, bufs)
    except Refused as e:
        return str(e)
    except RuntimeError as e:
        # a CUDA call that failed while building (cuda_memory._check names it): the call
        # replays through OpenCL, and says so once per recording
        warnings.warn(f"clnp: a jitted call replays through OpenCL launches, not as a CUDA "
                      f"graph: {e}", RuntimeWarning, stacklevel=2)
        return str(e)
