"""Executables: a staged Graph compiled into a list of prepared launches.

``compile_graph`` partitions the graph (``fusion``) and builds one step per group while running
it on the first call's arguments, so the first call both compiles and computes. A step is:

- ``_EwStep``: a fused elementwise kernel (``clnp._kernels.elementwise``, the eager renderer,
  given the whole group as one SSA program), with its ``LaunchPlan`` prepared;
- ``_RedStep``: a fused reduction (``codegen.render_fused_reduce``), its argument list prepared,
  plus a replay of the eager reduction of partial results when the reduced range is split; or
  a row kernel (``rowcodegen.render_rows``: the reductions over each row and the elementwise
  code around them), plus replays of the reductions finishing its per-row parts;
- ``_GemmStep``: a matrix product with an elementwise group as its epilogue, one GEMM kernel
  (``clnp._kernels.gemm`` with ``GemmSpec.epilogue``) planned as the eager product would be
  (same tuned tiles), its arguments bound;
- ``_ViewStep``: a view's geometry, fixed for the executable;
- ``_ReplayStep``: an opaque primitive's eager launches, captured once (``clnp._core.capture``);
- ``_CallStep``: an opaque primitive that reads data back to the host (control flow), called.

A call binds the inputs, walks the steps (allocation from the pool, argument binding, enqueue),
drops each intermediate after its last use so the pool hands its memory to the next step, and
returns the outputs. Inputs are made C-contiguous with offset 0 first (a copy, for the rare
strided argument), so every layout inside the executable is fixed when it is built.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Sequence

import numpy as np

from clnp._core import capture as _capture
from clnp._runtime import capture_hooks as _hooks
from clnp._runtime.launch import BoundKernel, bind
from clnp._core.donation import invalidate, sole_owner
from clnp._core.array import Array, c_strides
from clnp._kernels import ctypes as C
from clnp._kernels.elementwise import Instr, Operand, can_vectorize
from clnp._kernels.gemm import render_gemm
from clnp._kernels.reduction import shares
from clnp._core.eager import (_span_ok, broadcast_strides, collapse, contiguous_copy,
                              plan_elementwise)
from clnp._routines.dot_general import epilogue_plan, get_matmul_precision
from clnp._core.prims import PRIMITIVES
from clnp._array_api.creation import _scalar_dtype, zeros
from clnp._runtime.device import Device, KernelBuildError, default_device
from clnp._core.dtypes import kind as dkind

_new = object.__new__

from .._ir import Eqn, Graph, Lit, Var
from .codegen import (FusedReduceSpec, horizontal_ok, render_fused_reduce,
                      render_horizontal_reduce)
from .fusion import Group, external_inputs, instruction_of, partition
from . import whole_step
from .rowcodegen import RowSpec, render_rows
from .replay import CallReplay, note_value_buffer

# Outputs per item of CPU column reductions (FusedReduceSpec.kvec): 16 float32 sums are one
# 64-byte cache line of each row read
_KVEC = 16
# GPU column reductions (_build_reduce): at least this many outputs, and about this many
# work-items per compute unit over all (output, part) items
_GPU_COLS_MIN, _GPU_COL_ITEMS = 32, 1024
# CPU reductions over several dims walk the innermost one in vectors when it has at least
# this many elements (shorter rows would spend their time in the scalar tails; 16: one
# float32 vector, the 4x4 maps of the digits CNN's second batch norm)
_ROW_WALK_MIN = 16
# A reduction of another step's value with nothing fused into it: on GPUs the fused
# reduction, one launch (a bias gradient's column sum finishes its parts in the kernel)
# where the eager reduction's partials and their sum took two or three (the character
# transformer's 7 such sums: 24 launches on the H200); on CPUs, where a launch costs less
# than on NVIDIA's OpenCL, the eager reduction's tuned layouts (the same step's time either
# way on PoCL, 207 against 217 launches). None: by device kind; tests force either
LONE_REDUCTIONS_FUSED: bool | None = None
# Horizontal reductions (fusion): one kernel's members' arguments take at most this many
# bytes (or the device's CL_DEVICE_MAX_PARAMETER_SIZE)
_HORIZONTAL_PARAM_BYTES = 4096
# tests: "gpu" forces the GPU column-reduction layout on any device (None: by device kind)
COLUMN_LAYOUT: str | None = None

# Layout of row kernels: None picks by device (``vector`` on CPUs; on GPUs ``group``, or
# ``serial`` for rows under 64 elements); tests force ``"group"`` (the GPU layout) and
# ``"serial"`` (one work-item per row, scalars) on a CPU device.
ROW_LAYOUT: str | None = None


def _kernel_source(device: Device, kernel: Any) -> str:
    import pyopencl as cl
    prg = kernel.get_info(cl.kernel_info.PROGRAM)
    for key, p in device._programs.items():
        if p == prg:
            return key.split("\0")[0]
    return prg.get_info(cl.program_info.SOURCE)


# ---------------------------------------------------------------------------------- steps
def check_devices(device: Device, arrays: Sequence[Any], kernel: Any) -> None:
    """ValueError unless every Array of ``arrays`` lives on ``device``: checked on a step's
    first launch (later calls bind buffers of the same producers) and on every loop kernel's
    launch. A buffer of another device's context passed to a kernel aborts some drivers
    (PoCL) instead of failing."""
    for a in arrays:
        if isinstance(a, Array) and a._device is not device:
            name = getattr(kernel, "function_name", "a kernel")
            raise ValueError(
                f"jit: {name} reads an array on {a._device} in a function running on "
                f"{device}: create it on the arguments' device (device=x.device) or move it "
                f"with to_device()")


def _fresh_layouts(outs: Sequence[tuple[int, tuple, np.dtype]]) -> list[tuple]:
    """``_new_array``'s layouts (shape, C strides, dtype, bytes) of a step's stored values,
    given as ``(slot, shape, dtype)``: computed once when the step is built."""
    return [(shape, c_strides(shape), d, max(math.prod(shape) * d.itemsize, 1))
            for _, shape, d in outs]


def _new_array(device: Device, shape: tuple, strides: tuple, dtype: np.dtype,
               nbytes: int) -> Array:
    """A fresh contiguous Array whose layout the executable computed when it was built:
    the per-call path allocates without recomputing strides or checking the dtype."""
    out = _new(Array)
    out._buf, out._offset, out._shape = device.alloc(nbytes), 0, shape
    out._strides, out._dtype, out._device = strides, dtype, device
    if _hooks.current() is not None:      # a recording: the buffer may be shared later
        note_value_buffer(out._buf)
    return out


class _EwStep:
    __slots__ = ("plan", "device", "arrays", "operands", "outs", "layouts", "bound", "offs",
                 "dyn", "donors")

    def __init__(self, plan: Any, device: Device, arrays: list[int], operands: list[tuple],
                 outs: list[tuple[int, tuple, np.dtype]]):
        self.plan, self.device, self.arrays, self.operands = plan, device, arrays, operands
        self.outs = outs
        self.layouts = _fresh_layouts(outs)
        self.bound: BoundKernel | None = None
        self.offs: list[int] = []
        self.dyn: list[int] = []
        self.donors: list[tuple[int, int]] = []    # (output index, donated input's slot)

    def run(self, env: list) -> None:
        device = self.device
        outs = [_new_array(device, *lay) for lay in self.layouts]
        for j, s in self.donors:
            # out[i] depends on donated[i] only, and nothing reads the donated value after
            # this step: the kernel may write over it, if no other view shares the buffer
            d = env[s]
            if sole_owner(d):
                outs[j] = Array(d._buf, 0, d._shape, d._strides, d._dtype, device)
        plan = self.plan
        if plan is not None:      # None: an empty group, outputs without a launch
            views = [env[s] for s in self.arrays]
            bound = self.bound
            if bound is not None and [v._offset for v in views] == self.offs:
                bound(device.queue, [v._buf for v in views] + [o._buf for o in outs],
                      [env[s] for s in self.dyn])
            else:
                self._launch(env, views + outs)
        for (slot, _, _), o in zip(self.outs, outs):
            env[slot] = o

    def _launch(self, env: list, views: list[Array]) -> None:
        """The general launch, through the plan: the first call, and any call whose input
        offsets differ from the first call's (an input made by a host-driven step)."""
        plan, device = self.plan, self.device
        check_devices(device, views, plan.kernel)
        args = [env[v] if kind else v for kind, v in self.operands]
        kargs = plan.fill(views, args)
        if kargs is None:    # cannot happen with fixed layouts; the eager path's safety
            raise RuntimeError("jit: a view's offset left its prepared index range")
        if _hooks.current() is not None:
            _hooks.note_launch(plan.kernel, plan.gsize, plan.lsize, kargs)
        plan.kernel(device.queue, plan.gsize, plan.lsize, *kargs)
        if self.bound is None and not self.offs:
            # later calls rebind the buffers only (and the weak scalar arguments that change)
            scalars = [(pos, self.operands[i][1]) for i, pos, _ in plan.scalars
                       if self.operands[i][0]]
            self.offs = [v._offset for v in views[:len(self.arrays)]]
            self.dyn = [slot for _, slot in scalars]
            self.bound = bind(plan.kernel, plan.gsize, plan.lsize, kargs, plan.slots,
                              [pos for pos, _ in scalars])

    def sources(self) -> list[str]:
        return [_kernel_source(self.device, self.plan.kernel)] if self.plan is not None else []


class _RedStep:
    """A fused reduction kernel. ``layouts``: its outputs' (the side outputs, the reductions'
    results or partials, the epilogue's values); ``keep``: arrays of its own that every
    launch uses (a kernel finishing its outputs: the partials and per-output counts)."""
    __slots__ = ("kernel", "device", "gsize", "lsize", "template", "bufs", "scalars", "outs",
                 "finish", "layouts", "bound", "keep")

    def run(self, env: list) -> None:
        device = self.device
        outs = [_new_array(device, *lay) for lay in self.layouts]
        bufs = [(env[src] if src >= 0 else outs[-1 - src])._buf for _, src in self.bufs]
        vals = [env[src] for _, src, _ in self.scalars]
        if self.bound is not None:
            self.bound(device.queue, bufs, vals)
        else:   # the first call: every argument, then a bound copy for later calls
            check_devices(device, [env[src] for _, src in self.bufs if src >= 0], self.kernel)
            kargs = self.template.copy()
            for (pos, _), b in zip(self.bufs, bufs):
                kargs[pos] = b
            for (pos, _, cdt), v in zip(self.scalars, vals):
                kargs[pos] = np.asarray(v, cdt)[()]
            if _hooks.current() is not None:
                _hooks.note_launch(self.kernel, self.gsize, self.lsize, kargs)
            self.kernel(device.queue, self.gsize, self.lsize, *kargs)
            self.bound = bind(self.kernel, self.gsize, self.lsize, kargs,
                              [pos for pos, _ in self.bufs], [pos for pos, _, _ in self.scalars])
        for (slot, _, _), o, fin in zip(self.outs, outs, self.finish):
            env[slot] = o if fin is None else fin([o])[0]

    def sources(self) -> list[str]:
        out = [_kernel_source(self.device, self.kernel)]
        for fin in self.finish:
            if fin is not None:
                out += [_kernel_source(self.device, k) for k in fin.kernels()]
        return out


class _GemmStep:
    """A product and its epilogue: one bound GEMM kernel. ``ins``: slots of the array
    arguments (A, B, then the epilogue's arrays) with their buffer and offset positions;
    ``dyn``: (position, slot) of weak scalar arguments; ``outs``: the stored values."""
    __slots__ = ("kernel", "device", "gsize", "lsize", "template", "ins", "offs", "dyn",
                 "outs", "layouts", "outpos", "bound")

    def run(self, env: list) -> None:
        device = self.device
        outs = [_new_array(device, *lay) for lay in self.layouts]
        arrs = [env[slot] for slot, _, _ in self.ins]
        bufs = [a._buf for a in arrs] + [o._buf for o in outs]
        vals = [env[slot] for _, slot in self.dyn]
        if self.bound is not None and [a._offset for a in arrs] == self.offs:
            self.bound(device.queue, bufs, vals)
        else:
            # the first call, or inputs at other offsets (made by a host-driven step)
            check_devices(device, arrs, self.kernel)
            kargs = self.template.copy()
            for (_, bpos, opos), a in zip(self.ins, arrs):
                kargs[bpos], kargs[opos] = a._buf, a._offset
            for pos, o in zip(self.outpos, outs):
                kargs[pos] = o._buf
            for (pos, _), v in zip(self.dyn, vals):
                kargs[pos] = v
            self.kernel(device.queue, self.gsize, self.lsize, *kargs)
            if self.bound is None:
                self.offs = [a._offset for a in arrs]
                self.bound = bind(self.kernel, self.gsize, self.lsize, kargs,
                                  [b for _, b, _ in self.ins] + list(self.outpos),
                                  [pos for pos, _ in self.dyn])
        for (slot, _, _), o in zip(self.outs, outs):
            env[slot] = o

    def sources(self) -> list[str]:
        return [_kernel_source(self.device, self.kernel)]


class _SplitGemmStep:
    """A product split along K and its epilogue: the GEMM kernel writes the partial products
    (``[parts, ...output]``), then one elementwise kernel sums them and evaluates the
    epilogue (``ew``, whose operands include the partials, at slots ``pslots``). Without
    ``ew``, the partials are left at ``pslots`` for the groups reading the product, whose
    programs sum them (``_SplitValue``)."""
    __slots__ = ("launch", "device", "a", "b", "offs", "layout", "pslots", "poffs", "ew")

    def run(self, env: list) -> None:
        a, b = env[self.a], env[self.b]
        launch = self.launch
        with launch.kern.lock:   # the offsets and the launch as one, against other threads
            if (a._offset, b._offset) != self.offs:
                # inputs at other offsets (made by a host-driven step): the kernel's own
                # copy keeps every other argument
                it = np.int32 if launch.spec.index == "int" else np.int64
                x, y = (b, a) if launch.swap else (a, b)
                launch.kern.set_arg(8, it(x._offset))
                launch.kern.set_arg(14, it(y._offset))
                self.offs = (a._offset, b._offset)
            part = launch.partials(a, b)
        if _hooks.current() is not None:
            note_value_buffer(part._buf)
        shape, strides, dtype = self.layout
        for s, off in zip(self.pslots, self.poffs):
            env[s] = Array(part._buf, off, shape, strides, dtype, self.device)
        if self.ew is None:
            return
        self.ew.run(env)
        for s in self.pslots:
            env[s] = None

    def sources(self) -> list[str]:
        ew = self.ew.sources() if self.ew is not None else []
        return [_kernel_source(self.device, self.launch.kern)] + ew


class _WholeStep:
    """The whole step as one kernel (``whole_step``): ``ins`` the slots of the arguments and
    constants it reads, ``outs`` the slots and layouts of the values it returns, ``scratch``
    the bytes of its other stored values: a buffer taken per call like any intermediate, so
    a replay keeps it and counts it (``replay.kept_bytes``)."""
    __slots__ = ("kernel", "device", "group", "ins", "outs", "layouts", "scratch", "bound",
                 "work")

    def __init__(self, kernel: Any, device: Device, group: int, ins: list[int],
                 outs: list[tuple[int, tuple, np.dtype]], scratch: int, work: int):
        self.kernel, self.device, self.group, self.ins = kernel, device, group, ins
        self.outs, self.scratch, self.work = outs, scratch, work
        self.layouts = _fresh_layouts(outs)
        self.bound: BoundKernel | None = None

    def run(self, env: list) -> None:
        device = self.device
        outs = [_new_array(device, *lay) for lay in self.layouts]
        ins = [env[s] for s in self.ins]
        for k, a in enumerate(ins):
            if a._offset or not a.is_contiguous:
                # the kernel reads its inputs as contiguous arrays at offset 0, the layout
                # they had when it was built (a host-driven step may make another)
                ins[k] = contiguous_copy(a)
        bufs = [a._buf for a in ins] + [o._buf for o in outs]
        if self.scratch:
            bufs.append(device.alloc(self.scratch))
        if self.bound is not None:
            self.bound(device.queue, bufs)
        else:
            check_devices(device, ins, self.kernel)
            size = (self.group,)
            if _hooks.current() is not None:
                _hooks.note_launch(self.kernel, size, size, bufs)
            self.kernel(device.queue, size, size, *bufs)
            self.bound = bind(self.kernel, size, size, bufs, range(len(bufs)))
        for (slot, _, _), o in zip(self.outs, outs):
            env[slot] = o

    def sources(self) -> list[str]:
        return [_kernel_source(self.device, self.kernel)]


class _SeqStep:
    """Steps run one after the other (a product whose epilogue could not be fused)."""
    __slots__ = ("steps",)

    def __init__(self, steps: list[Any]):
        self.steps = steps

    def run(self, env: list) -> None:
        for st in self.steps:
            st.run(env)

    def sources(self) -> list[str]:
        return [s for st in self.steps for s in st.sources()]


_PRODUCT = object()      # stands for the product's value while its epilogue is planned


class _ViewStep:
    __slots__ = ("src", "out", "offset", "shape", "strides", "dtype")

    def run(self, env: list) -> None:
        a = env[self.src]
        env[self.out] = Array(a._buf, self.offset, self.shape, self.strides, self.dtype,
                              a._device)

    def sources(self) -> list[str]:
        return []


class _ReplayStep:
    __slots__ = ("replay", "ins", "outs")

    def __init__(self, replay: Any, ins: list[int], outs: list[int]):
        self.replay, self.ins, self.outs = replay, ins, outs

    def run(self, env: list) -> None:
        res = self.replay([env[i] for i in self.ins])
        if _hooks.current() is not None:     # a recording: fresh outputs may be shared later
            for o, how in zip(res, self.replay.outs):
                if how.src == -1:
                    note_value_buffer(o._buf)
        for slot, o in zip(self.outs, res):
            env[slot] = o

    def sources(self) -> list[str]:
        return [_kernel_source(self.replay.device, k) for k in self.replay.kernels()]


class _CallStep:
    __slots__ = ("impl", "operands", "params", "outs", "multi", "device")

    def run(self, env: list) -> None:
        args = [_as_array(env[v], self.device) if kind else v for kind, v in self.operands]
        res = self.impl(*args, **self.params)
        res = list(res) if self.multi else [res]
        for slot, o in zip(self.outs, res):
            env[slot] = o

    def sources(self) -> list[str]:
        return ["<host-driven: " + self.impl.__name__ + ">"]


def _as_array(v: Any, device: Device) -> Any:
    if isinstance(v, Array):
        return v
    import clnp
    return clnp.asarray(v, device=device)


# ------------------------------------------------------------------------------ executable
class Executable:
    """A compiled Graph: ``run(flat_args) -> flat outputs``."""

    def __init__(self, graph: Graph, device: Device):
        self.graph, self.device = graph, device
        # the products' kernels depend on it: the caller keeps one executable per precision
        self.precision = get_matmul_precision()
        self.steps: list[Any] = []
        self.free_after: list[list[int]] = []
        self.slot: dict[int, int] = {}
        self.in_slots: list[int] = []
        self.in_strides: list[tuple | None] = []
        self.donated: frozenset[int] = frozenset()    # flat argument indices (donate_argnums)
        # (argument index, output index) where the output may take the argument's buffer
        self.donor_inputs: list[tuple[int, int]] = []
        self.weak: list[bool] = []
        self.out_refs: list[tuple[int, Any]] = []
        self.consts: list[tuple[int, Any]] = []
        self.n_slots = 0
        self.built = False
        self.replay: CallReplay | None = None     # made when the build has finished

    def _slot(self, n: int) -> int:
        """The slot of the value with Var id ``n`` (assigned on first use)."""
        s = self.slot.get(n)
        if s is None:
            s = self.slot[n] = self.n_slots
            self.n_slots += 1
        return s

    def kernel_sources(self) -> list[str]:
        return [s for step in self.steps for s in step.sources()]

    def n_kernels(self) -> int:
        return len(self.kernel_sources())

    # -- calls
    def run(self, flat: Sequence[Any]) -> list[Any]:
        if not self.built:
            return self._build(flat)
        return self.replay.run(flat, self._run_steps)

    def _run_steps(self, flat: Sequence[Any]) -> list[Any]:
        """A call through the steps (the replay's fallback, and the call it records)."""
        env: list[Any] = [None] * self.n_slots
        for s, a, w, st in zip(self.in_slots, flat, self.weak, self.in_strides):
            # inputs run as contiguous, offset-0 buffers (the layout the kernels were
            # planned for); the common case is one comparison of cached strides
            env[s] = a if w or (a._offset == 0 and a._strides == st) else _normal_input(a)
        for s, c in self.consts:
            env[s] = c
        if self.donor_inputs:
            self._guard_donations(env, flat)
        for step, free in zip(self.steps, self.free_after):
            step.run(env)
            for s in free:
                env[s] = None
        outs = [env[r] if kind else _as_array(r, self.device) for kind, r in self.out_refs]
        for i, k in self.donor_inputs:
            a = flat[i]
            if type(a) is Array and outs[k]._buf is a._buf:    # the buffer was taken
                invalidate(a)
        return outs

    def _guard_donations(self, env: list, flat: Sequence[Any]) -> None:
        """A donated array passed in another argument position too is read after its
        buffer would be overwritten: give the donation a private copy instead."""
        for i, _ in self.donor_inputs:
            a, s = flat[i], self.in_slots[i]
            if env[s] is a and sum(x is a for x in flat) > 1:
                env[s] = contiguous_copy(a)

    # -- building (the first call)
    def _build(self, flat: Sequence[Any]) -> list[Any]:
        g = self.graph
        device = self.device
        env: dict[int, Any] = {}      # slot -> value, as the steps' ``run`` expects
        seen_bufs: set[int] = set()
        for v, a in zip(g.in_binders, flat):
            s = self._slot(v.n)
            self.in_slots.append(s)
            weak = not isinstance(a, Array)
            self.weak.append(weak)
            self.in_strides.append(None if weak else c_strides(tuple(a.shape)))
            if not weak:
                a = _normal_input(a)
                if id(a._buf) in seen_bufs:      # captures rebind buffers by identity
                    a = contiguous_copy(a)
                seen_bufs.add(id(a._buf))
            env[s] = a
        for n, c in g.consts.items():
            if isinstance(c, Array):
                c = _normal_input(c)
            s = self._slot(n)
            self.consts.append((s, c))
            env[s] = c
        groups = partition(g)
        self.program_reads = _program_reads(groups, g)
        self._build_groups(groups, env)
        # last uses, so that intermediates return to the pool as soon as possible
        keep = {self.slot[x.n] for x in g.outs if isinstance(x, Var)}
        last: dict[int, int] = {}
        for i, step in enumerate(self.steps):
            for s in _step_inputs(step):
                last[s] = i
        self.free_after = [[] for _ in self.steps]
        for s, i in last.items():
            if s not in keep:
                self.free_after[i].append(s)
        self.out_refs = [(True, self.slot[x.n]) if isinstance(x, Var) else (False, x.value)
                         for x in g.outs]
        self._plan_donations(keep, last)
        self.replay = CallReplay(device, self.in_strides,
                                 not self.donor_inputs and not self.donated)
        self.built = True
        return [env[self.slot[x.n]] if isinstance(x, Var) else _as_array(x.value, device)
                for x in g.outs]

    def _build_groups(self, groups: list[Group], env: dict[int, Any]) -> None:
        """A step per group, except where consecutive groups of small work form a segment
        that one whole-step kernel runs (``whole_step``): each run of groups whose equations
        a whole-step kernel can run is cut where its work would pass the device's limit, and
        a piece with at least two launching groups becomes one step. A piece of one launch
        keeps its group's own kernel (vectorised, sizes as arguments: a new size reuses its
        program). Donated arguments keep the groups' kernels (their plans give the buffers
        to the outputs)."""
        forced = whole_step.WHOLE_STEP
        limit = whole_step.work_limit(self.device.is_cpu)
        pieces: list[list[int]] = []
        work: list[int | None] = []
        eqns_of = self._group_eqns(groups)
        for gi, grp in enumerate(groups):
            w = None
            if eqns_of is not None and not self.donated:
                ws = [whole_step.eqn_work(e) for _, e in eqns_of[gi]]
                w = None if None in ws else sum(ws)
            work.append(w)
        run: list[int] = []
        total = 0
        for gi in range(len(groups)):
            w = work[gi]
            if w is None or w > limit or total + w > limit:
                if run:
                    pieces.append(run)
                run, total = [], 0
                if w is None or w > limit:
                    pieces.append([gi])
                    continue
            run.append(gi)
            total += w
        if run:
            pieces.append(run)
        for piece in pieces:
            launching = sum(groups[gi].kind != "view" for gi in piece)
            step = None
            if work[piece[0]] is not None and (launching > 1 or (forced and launching)):
                eqns = sorted(((i, e) for gi in piece for i, e in eqns_of[gi]),
                              key=lambda t: t[0])
                step = self._build_segment([e for _, e in eqns], env)
            if step is not None:
                self.steps.append(step)
            else:
                for gi in piece:
                    self.steps.append(self._build_group(groups[gi], env))

    def _group_eqns(self, groups: list[Group]) -> list[list[tuple[int, Any]]] | None:
        """Each group's equations with their positions in the graph, by the values the
        groups compute; None if some equation is in no group or in two (then no segments)."""
        owner: dict[int, int] = {}
        for gi, grp in enumerate(groups):
            for n in grp.members:
                if n in owner:
                    return None
                owner[n] = gi
        out: list[list[tuple[int, Any]]] = [[] for _ in groups]
        for i, e in enumerate(self.graph.eqns):
            gis = {owner.get(b.n) for b in e.out_binders}
            if len(gis) != 1 or None in gis:
                return None
            out[gis.pop()].append((i, e))
        return out

    def _build_segment(self, eqns: list[Any], env: dict[int, Any]) -> _WholeStep | None:
        """The equations ``eqns`` (consecutive groups, in program order) as one whole-step
        kernel, run once on ``env``; None when they do not qualify (and when the kernel
        cannot be built, unless ``whole_step.WHOLE_STEP`` forces it: tests see the error)."""
        g = self.graph
        inside = {id(e) for e in eqns}
        needed = {x.n for x in g.outs if isinstance(x, Var)}
        for e in g.eqns:
            if id(e) not in inside:
                needed.update(x.n for x in e.inputs if isinstance(x, Var))
        sub = whole_step.subgraph(eqns, needed)
        weak = {s for s, w in zip(self.in_slots, self.weak) if w}
        for v in sub.in_binders:
            if self.slot.get(v.n) in weak:      # a Python scalar: a new value per call
                return None
            a = env.get(self.slot.get(v.n, -1))
            # the kernel reads its inputs as contiguous arrays at offset 0 (the layouts of
            # arguments, constants and every step's fresh outputs); Python scalars and
            # other layouts stay with the groups' kernels
            if not isinstance(a, Array) or a._offset or not a.is_contiguous:
                return None
        device = self.device
        group = whole_step.group_size(device.is_cpu, device.max_work_group_size)
        p = whole_step.plan(sub, has_fp64=device.has_fp64, group=group)
        if p is None:
            return None
        try:
            kernel = device.kernel(("whole_step", p.source),
                                   lambda: (p.source, p.name, [None] * (
                                       len(p.inputs) + len(p.outputs) + bool(p.scratch_nbytes))))
        except KernelBuildError:
            if whole_step.WHOLE_STEP:
                raise
            return None
        if p.group > 1 and _kernel_group_limit(kernel, device) < p.group:
            # this kernel's registers or local memory allow a smaller work-group than the
            # device's maximum: the groups' kernels instead
            return None
        step = _WholeStep(kernel, device, p.group, [self.slot[n] for n in p.inputs],
                          [(self._slot(v.n), v.aval.shape, v.aval.dtype) for v in p.outputs],
                          p.scratch_nbytes, p.work)
        step.run(env)
        return step

    def _plan_donations(self, keep: set[int], last: dict[int, int]) -> None:
        """Outputs that later calls write into donated arguments' buffers: an output of an
        elementwise step with the donated input's shape and dtype, read by that step as a
        whole (not broadcast) and by no later step, and not itself an output."""
        outs = {slot: k for k, (kind, slot) in enumerate(self.out_refs) if kind}
        for i in sorted(self.donated):
            s = self.in_slots[i]
            if self.weak[i] or s in keep or s not in last:
                continue
            step = self.steps[last[s]]
            if not isinstance(step, _EwStep) or step.plan is None or s not in step.arrays:
                continue
            shape, dtype = self.graph.in_binders[i].aval.shape, self.graph.in_binders[i].aval.dtype
            taken = {j for j, _ in step.donors}
            for j, (slot, oshape, odtype) in enumerate(step.outs):
                if j not in taken and slot in outs and tuple(oshape) == tuple(shape) and \
                        odtype == dtype:
                    step.donors.append((j, s))
                    self.donor_inputs.append((i, outs[slot]))
                    break

    def _build_group(self, grp: Group, env: dict[int, Any]) -> Any:
        if grp.kind == "ew":
            return self._build_ew(grp, env)
        if grp.kind == "reduce":
            fused = not self.device.is_cpu if LONE_REDUCTIONS_FUSED is None else \
                LONE_REDUCTIONS_FUSED
            if not grp.eqns and not grp.post and len(grp.reds) == 1 and not fused and \
                    not isinstance(env.get(self.slot.get(getattr(grp.reds[0].inputs[0], "n",
                                                                 None))), _SplitValue):
                # one reduction of another step's value on a CPU: the eager reduction (a
                # split product's partials are summed by a fused reduction instead)
                return self._build_opaque(grp.reds[0], env)
            return self._build_reduce(grp, env)
        if grp.kind == "view":
            return self._build_opaque(grp.eqns[0], env, view=True)
        if grp.kind == "gemm":
            return self._build_gemm(grp, env)
        if grp.kind == "rows":
            return self._build_rows(grp, env)
        if grp.kind == "hreduce":
            return self._build_hreduce(grp, env)
        return self._build_opaque(grp.eqns[0], env)

    # row kernels -----------------------------------------------------------------------
    def _build_rows(self, grp: Group, env: dict[int, Any]) -> Any:
        """One kernel for a ``rows`` group (``rowcodegen``), then the views of its stored
        values that other steps read; the absorbed groups' own steps where the row kernel
        does not apply."""
        device = self.device
        shape, axes = grp.shape, grp.axes
        nk = len(shape) - len(axes)
        n_out, R = math.prod(shape[:nk]), math.prod(shape[nk:])
        target = 4 * device.compute_units * (1 if device.is_cpu else 8)
        all_reds = grp.reds
        red_vars = [r.out_binders[0] for r in all_reds]
        values = [b for e in grp.eqns for b in e.out_binders] + red_vars
        # complex values stay off the row kernels (16-bit floats run on them, rounded per op)
        odd = any(dkind(v.aval.dtype) == "c" for v in values) or \
            any(isinstance(x, Var) and dkind(x.aval.dtype) == "c"
                for e in grp.eqns + grp.reds for x in e.inputs) or \
            any(not isinstance(r.inputs[0], Var) for r in all_reds)
        if not n_out or not R or odd or (n_out < target and R >= 8192):
            return _SeqStep([self._build_group(sub, env) for sub in grp.sub])
        # a result over more axes than the rows is each row's part, in the accumulator dtype
        rdt = [r.params["acc_dtype"] if v.n in grp.outer else v.aval.dtype
               for r, v in zip(all_reds, red_vars)]
        red_slots = [self._slot(v.n) for v in red_vars]
        for m, s in enumerate(red_slots):
            env[s] = _RowResult(m, rdt[m])
        reds_n = {r.out_binders[0].n for r in all_reds}
        try:
            operands, refs, body, vid = self._program(
                dataclasses.replace(grp, members=grp.members - reds_n), env)
        finally:
            for s in red_slots:
                del env[s]
        unread = [m for m, v in enumerate(red_vars) if v.n not in vid]
        if unread:
            # results that only get stored: operands too, the body's ids shifted past them
            n_in, extra = len(operands), len(unread)
            body = [dataclasses.replace(i, args=tuple(a if a < n_in else a + extra
                                                      for a in i.args)) for i in body]
            vid = {n: i if i < n_in else i + extra for n, i in vid.items()}
            for k, m in enumerate(unread):
                operands.append(_RowResult(m, rdt[m]))
                refs.append((True, red_slots[m]))
                vid[red_vars[m].n] = n_in + k
        # values stored: every escaping value, a view's source in place of the view
        by_n = {v.n: v for v in values}
        stored: list[Var] = []
        views_out = {e.out_binders[0].n for e in grp.views}
        for n in sorted(grp.escapes):
            if n in views_out:
                x = grp.alias[n]
                while x.n in grp.alias:
                    x = grp.alias[x.n]
                n = x.n
            v = by_n.get(n)
            if v is not None and v not in stored:
                stored.append(v)
        elem_outs = [v for v in stored if tuple(v.aval.shape) == tuple(shape)]
        row_outs = [v for v in stored if tuple(v.aval.shape) != tuple(shape)]
        roles: list[str] = []
        views: list[tuple[list[int], list[int]]] = []
        for val in operands:
            if isinstance(val, _RowResult):
                roles.append("red")
            elif isinstance(val, Array):
                if tuple(val.shape) == tuple(shape[:nk]) and any(d != 1 for d in val.shape):
                    # the kept shape: read per row (fusion allows no other reader)
                    st = list(broadcast_strides(val, tuple(shape[:nk]))) + [0] * len(axes)
                else:
                    st = broadcast_strides(val, shape)
                views.append((list(st[:nk]), list(st[nk:])))
                roles.append("elem" if any(st[nk:]) else "row")
            else:
                roles.append("scalar")
        for v in elem_outs:
            st = c_strides(tuple(shape))
            views.append((list(st[:nk]), list(st[nk:])))
        n_views = len(views)
        kst_rows = [list(c_strides(tuple(shape[:nk]))) for _ in row_outs]
        kc, kst = collapse(list(shape[:nk]), [v[0] for v in views] + kst_rows)
        rc, rst = collapse(list(shape[nk:]), [v[1] for v in views])
        kc, rc = kc or [1], rc or [1]
        kst = [s or [0] for s in kst]
        rst = [s or [0] for s in rst]
        nr = len(rc)
        dtypes = [_dtype_of(o) if not isinstance(o, _RowResult) else o.dtype
                  for o in operands] + [i.out_dtype for i in body]
        reds = [(r.params["op"], vid[r.inputs[0].n], r.params["acc_dtype"], rdt[m])
                for m, r in enumerate(all_reds)]
        rdt_of = {v.n: d for v, d in zip(red_vars, rdt)}
        red_of = {r.out_binders[0].n: r for r in all_reds}
        row_ids = [vid[v.n] for v in row_outs]
        red_ids = tuple(vid[v.n] for v in red_vars)
        spec = RowSpec(
            tuple(Operand(d, r == "scalar") for d, r in zip(dtypes, roles)), tuple(roles),
            tuple(body), tuple(reds), red_ids,
            tuple((vid[v.n], v.aval.dtype) for v in elem_outs),
            tuple((i, rdt_of.get(v.n, v.aval.dtype)) for i, v in zip(row_ids, row_outs)),
            len(kc), nr)
        layout = ROW_LAYOUT or ("vector" if device.is_cpu else "serial" if R < 64 else "group")
        if layout == "group":
            G = 1
            while G * 2 <= min(256, device.max_work_group_size, R):
                G *= 2
            while G > 1 and G * sum(r[2].itemsize for r in reds) > device.local_mem // 2:
                G //= 2
            spec = dataclasses.replace(spec, mode="group", group=G)
        elif layout == "vector":
            spec = dataclasses.replace(spec, vec=self._row_vec(spec, rst))
        kernel = device.kernel(("jit-rows", spec), lambda: render_rows(spec))
        template: list[Any] = [n_out, R] + kc + rc
        bufs: list[tuple[int, int]] = []
        scalars: list[tuple[int, int, np.dtype]] = []
        k = _bind_operands(operands, refs, lambda k: kst[k] + rst[k], template, bufs, scalars)
        out_specs: list[tuple[int, tuple, np.dtype]] = []
        for v in elem_outs:
            bufs.append((len(template), -1 - len(out_specs)))
            template += [None, 0] + kst[k] + rst[k]
            k += 1
            out_specs.append((self._slot(v.n), v.aval.shape, v.aval.dtype))
        finish: list[Any] = [None] * len(out_specs)
        for j, v in enumerate(row_outs):
            bufs.append((len(template), -1 - len(out_specs)))
            template += [None, 0] + kst[n_views + j]
            if v.n in grp.outer:
                r = red_of[v.n]
                out_specs.append((self._slot(v.n), tuple(shape[:nk]), rdt_of[v.n]))
                finish.append(self._rows_finisher(r, tuple(shape[:nk]), grp.outer[v.n],
                                                  device))
            else:
                out_specs.append((self._slot(v.n), v.aval.shape, v.aval.dtype))
                finish.append(None)
        step = _RedStep()
        step.kernel, step.device = kernel, device
        if spec.mode == "group":
            step.gsize, step.lsize = (n_out * spec.group,), (spec.group,)
        else:
            L = 64 if device.is_cpu else 128
            step.gsize, step.lsize = (-(-n_out // L) * L,), (L,)
        step.template, step.bufs, step.scalars = template, bufs, scalars
        step.outs, step.finish = out_specs, [None] * len(out_specs)
        step.layouts = [(shp, c_strides(shp), d, max(math.prod(shp) * d.itemsize, 1))
                        for _, shp, d in out_specs]
        step.bound = None
        step.run(env)
        for j, ((slot, _, _), fin) in enumerate(zip(out_specs, finish)):
            if fin is not None:     # the rows' parts of a wider reduction, reduced: captured
                env[slot], step.finish[j] = _capture.capture(fin, [env[slot]], device)
        # the views of stored values that other steps read, in order
        needed = {n for n in grp.escapes if n in views_out}
        for e in reversed(grp.views):
            if e.out_binders[0].n in needed and isinstance(e.inputs[0], Var):
                needed.add(e.inputs[0].n)
        steps: list[Any] = [step]
        for e in grp.views:
            if e.out_binders[0].n in needed:
                steps.append(self._build_opaque(e, env, view=True))
        return step if len(steps) == 1 else _SeqStep(steps)

    @staticmethod
    def _rows_finisher(r: Any, kshape: tuple[int, ...], axes: tuple[int, ...],
                       device: Device) -> Callable[[Array], Array]:
        """The eager reduction of a row kernel's per-row parts of ``r`` (shape ``kshape``,
        the accumulator dtype) over the kept ``axes`` that ``r`` reduces too."""
        p = r.params
        out = r.out_binders[0].aval

        def fn(part: Array) -> Array:
            x = Array(part._buf, 0, kshape, c_strides(kshape), p["acc_dtype"], device)
            y = PRIMITIVES["reduce"].impl(x, op=p["op"], axes=axes, acc_dtype=p["acc_dtype"],
                                          out_dtype=out.dtype)
            return Array(y._buf, y._offset, out.shape, c_strides(out.shape), y.dtype, device)
        return fn

    @staticmethod
    def _row_vec(spec: RowSpec, rst: list[list[int]]) -> int:
        """16 where a serial row kernel on a CPU may walk its rows with vectors (one reduced
        dim, per-element operands and stores unit-stride), else 1; each pass narrows it to
        its own values' dtypes or drops it where its ops are not vector-safe
        (``rowcodegen``)."""
        if spec.nr != 1:
            return 1
        arrays = [r for r in spec.roles if r in ("elem", "row")]
        for k, role in enumerate(arrays + ["elem"] * len(spec.elem_outs)):
            if role == "elem" and rst[k][0] != 1:
                return 1
        return 16

    # products with an epilogue -----------------------------------------------------------
    def _build_gemm(self, grp: Group, env: dict[int, Any]) -> Any:
        """One GEMM kernel computing the product and evaluating the group on each of its
        values; where the planned launch cannot take an epilogue (split K, tensor cores,
        operands needing copies or conversions), the product's own step and then the
        group's."""
        step = self._plan_gemm(grp, env)      # run on env when planned
        if step is not None:
            return step
        steps = self._product_alone(grp, env)
        prod = {b.n for e in grp.gemm for b in e.out_binders}
        ew = Group("ew", eqns=grp.eqns, shape=grp.shape, members=grp.members - prod,
                   escapes=grp.escapes, index=grp.index)
        return _SeqStep(steps + [self._build_ew(ew, env)])

    def _product_alone(self, grp: Group, env: dict[int, Any]) -> list[Any]:
        """The steps of a gemm group's product without its epilogue. On CPUs a product the
        group reads transposed (one free dim on each side) is the product of the swapped
        operands, stored as the group reads it: a transposed read is a tiled kernel of
        strided loads (PoCL, the MLP step's SGD update of a 784x1024 weight from its gradient
        computed in the host's BLAS: 2.9 ms, against 0.75 ms reading it in order). GPUs keep
        the product as written (their tensor-core kernel favours one operand layout, and
        their transposed reads were not measured slower)."""
        if len(grp.gemm) == 2 and self.device.is_cpu:
            dot, tr = grp.gemm
            (lc, rc), (lb, rb) = dot.params["dimension_numbers"]
            lhs, rhs = dot.inputs
            free = (len(lhs.aval.shape) - len(lc) - len(lb),
                    len(rhs.aval.shape) - len(rc) - len(rb))
            if free == (1, 1):
                dn = ((tuple(rc), tuple(lc)), (tuple(rb), tuple(lb)))
                swapped = Eqn(dot.prim, [rhs, lhs], {**dot.params, "dimension_numbers": dn},
                              tr.out_binders)
                return [self._build_opaque(swapped, env)]
        return [self._build_opaque(e, env, view=e.prim.name != "dot_general")
                for e in grp.gemm]

    def _plan_gemm(self, grp: Group, env: dict[int, Any]
                   ) -> _GemmStep | _SplitGemmStep | None:
        device = self.device
        dot = grp.gemm[0]
        lhs_v, rhs_v = dot.inputs
        (lc, rc), (lb, rb) = dot.params["dimension_numbers"]
        dn = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
        if len(grp.gemm) == 2:
            # the group reads the product transposed (last two dims): that is the product
            # of the swapped operands, whose output the group reads directly
            lhs_v, rhs_v = rhs_v, lhs_v
            dn = ((tuple(rc), tuple(lc)), (tuple(rb), tuple(lb)))
        prod = grp.gemm[-1].out_binders[0]
        lhs, rhs = env[self.slot[lhs_v.n]], env[self.slot[rhs_v.n]]
        if not isinstance(lhs, Array) or not isinstance(rhs, Array):
            return None
        pslot = self._slot(prod.n)
        env[pslot] = _PRODUCT
        outer = {b.n for e in grp.gemm for b in e.out_binders}
        try:
            operands, refs, body, vid = self._program(
                dataclasses.replace(grp, members=grp.members - outer), env)
        finally:
            del env[pslot]
        p0 = next(i for i, o in enumerate(operands) if o is _PRODUCT)
        n_in = len(operands)
        # value ids of the epilogue: the product first, then the other operands in order
        remap = {i: (0 if i == p0 else i + 1 if i < p0 else i) for i in range(n_in)}
        body = [dataclasses.replace(ins, args=tuple(remap.get(a, a) for a in ins.args))
                for ins in body]
        ep_in: list[Operand] = []
        arrays: list[tuple[Array, int]] = []
        dyn: list[tuple[int, int]] = []       # (index into ep_in, slot) of weak scalars
        values: list[Any] = []                # first call's value per ep_in entry
        for i, (val, (is_slot, ref)) in enumerate(zip(operands, refs)):
            if i == p0:
                continue
            if isinstance(val, _ScalarOperand):
                ep_in.append(Operand(val.dtype, True))
                values.append(val.value)
            elif not isinstance(val, Array):      # a weak Python scalar argument
                dyn.append((len(ep_in), ref))
                ep_in.append(Operand(weak_dtype(val), True))
                values.append(val)
            else:
                arrays.append((val, ref))
                ep_in.append(Operand(val.dtype))
                values.append(val)
        members = [e.out_binders[0] for e in grp.eqns]
        escaping = [v for v in members if v.n in grp.escapes]
        if not escaping:
            return None
        ep_out = tuple((remap.get(vid[v.n], vid[v.n]), v.aval.dtype) for v in escaping)
        planned = epilogue_plan(lhs, rhs, dn, [broadcast_strides(a, grp.shape)
                                               for a, _ in arrays])
        if planned is None:
            return None
        launch, ep_strides = planned
        if ep_strides is None:
            return self._split_gemm(launch, lhs_v, rhs_v, grp, prod, env)
        spec = launch.spec
        if spec.index == "int" and not _span_ok([a for a, _ in arrays], 0):
            return None
        spec = dataclasses.replace(spec, epilogue=tuple(body), ep_inputs=tuple(ep_in),
                                   ep_outputs=ep_out)
        splat = 4 if device.is_cpu else 1     # as the elementwise kernels (EwSpec.splat)
        kernel = device.kernel(("jit-gemm", spec, splat), lambda: render_gemm(spec, splat))
        template = list(launch.args)
        a_v, b_v = (rhs_v, lhs_v) if launch.swap else (lhs_v, rhs_v)
        ins = [(self.slot[a_v.n], 7, 8), (self.slot[b_v.n], 13, 14)]
        dyn_pos: list[tuple[int, int]] = []
        k_arr = 0
        weak = dict(dyn)
        for j, (op, v) in enumerate(zip(ep_in, values)):
            if op.scalar:
                if j in weak:      # set again on a call where its value changed
                    dyn_pos.append((len(template), weak[j]))
                    template.append(v)
                else:
                    template.append(np.asarray(v, _carg(op.dtype))[()])
                continue
            arr, ref = arrays[k_arr]
            ins.append((ref, len(template), len(template) + 1))
            template += [None, arr._offset] + ep_strides[k_arr]
            k_arr += 1
        outpos = [19] + list(range(len(template), len(template) + len(ep_out) - 1))
        template += [None] * (len(ep_out) - 1)
        step = _GemmStep()
        step.kernel, step.device = kernel, device
        step.gsize, step.lsize = launch.gsize, launch.lsize
        step.template, step.ins, step.offs, step.dyn = template, ins, [], dyn_pos
        step.outpos, step.bound = outpos, None
        step.outs = [(self._slot(v.n), v.aval.shape, v.aval.dtype) for v in escaping]
        step.layouts = _fresh_layouts(step.outs)
        step.run(env)
        return step

    def _split_gemm(self, launch: Any, lhs_v: Var, rhs_v: Var, grp: Group, prod: Var,
                    env: dict[int, Any]) -> _SplitGemmStep:
        """The product's partials, then the group as one elementwise kernel that reads the
        product as their sum (``_SplitValue``, as any other reader of partials does)."""
        step = self._partials_step(launch, lhs_v, rhs_v, grp.shape, env)
        ps = self._slot(prod.n)
        env[ps] = _SplitValue(step.pslots, [env[p] for p in step.pslots])
        outer = {b.n for e in grp.gemm for b in e.out_binders}
        try:
            step.ew = self._build_ew(Group("ew", eqns=grp.eqns, shape=grp.shape,
                                           members=grp.members - outer, escapes=grp.escapes,
                                           index=grp.index), env)
        finally:
            del env[ps]
        for s in step.pslots:
            del env[s]
        return step

    def _partials_step(self, launch: Any, lhs_v: Var, rhs_v: Var, shape: tuple[int, ...],
                       env: dict[int, Any]) -> _SplitGemmStep:
        """The partial products of ``launch`` (split along K) at new slots, computed once on
        ``env``; its ``ew`` is for the caller to set."""
        step = _SplitGemmStep()
        step.launch, step.device, step.ew = launch, self.device, None
        step.a, step.b = self.slot[lhs_v.n], self.slot[rhs_v.n]
        lhs, rhs = env[step.a], env[step.b]
        step.offs = (lhs._offset, rhs._offset)
        step.layout = (shape, c_strides(shape), launch.dst_dtype)
        step.pslots = list(range(self.n_slots, self.n_slots + launch.parts))
        self.n_slots += launch.parts
        step.poffs = [p * math.prod(shape) for p in range(launch.parts)]
        step.run(env)
        return step

    # elementwise groups --------------------------------------------------------------
    def _program(self, grp: Group, env: dict[int, Any]) -> tuple[list, list, list[Instr],
                                                                   dict[int, int]]:
        """Operands (Arrays, scalars) of a group, their runtime references, the SSA body
        and value ids of the group's members."""
        ins = external_inputs(grp)
        operands: list[Any] = []          # values for this (first) call
        refs: list[tuple] = []            # (True, slot) | (False, constant)
        dtypes: list[np.dtype] = []
        vid: dict[Any, int] = {}
        for x in ins:
            if isinstance(x, Lit):
                continue
            val = env[self.slot[x.n]]
            vid[x.n] = len(operands)
            operands.append(val)
            refs.append((True, self.slot[x.n]))
            dtypes.append(x.aval.dtype)
        body: list[Instr] = []
        lit_ids: dict[tuple, int] = {}
        pending: list[tuple] = []
        for x in ins:
            sv = env[self.slot[x.n]] if isinstance(x, Var) else None
            if not isinstance(sv, _SplitValue):
                continue
            # a split product: its partials are operands, summed in order where read
            d = x.aval.dtype
            first = vid.pop(x.n)
            operands[first], refs[first] = sv.parts[0], (True, sv.slots[0])
            acc: Any = first
            for k, (slot, part) in enumerate(zip(sv.slots[1:], sv.parts[1:])):
                vid[("part", x.n, k)] = len(operands)
                operands.append(part)
                refs.append((True, slot))
                dtypes.append(d)
                res = x if k == len(sv.parts) - 2 else _Tmp(("sum", x.n, k))
                pending.append(("add", (acc, _Tmp(("part", x.n, k))), (d, d), d, d, res))
                acc = res
        for e in grp.eqns:
            op, ins_, arg_dtypes, dtype, out_dtype = instruction_of(e)
            args = [self._lit(("lit", x.value, ad), x.value, ad, operands, refs, dtypes,
                              lit_ids) if isinstance(x, Lit) else x
                    for x, ad in zip(ins_, arg_dtypes)]
            pending.append((op, tuple(args), arg_dtypes, dtype, out_dtype, e.out_binders[0]))
        n_in = len(operands)
        for j, (op, args, ads, d, od, out) in enumerate(pending):
            ids = tuple(a if isinstance(a, int) else vid[a.n] for a in args)
            body.append(Instr(op, ids, ads, d, od))
            vid[out.n] = n_in + j
        return operands, refs, body, vid

    def _lit(self, key: tuple, value: Any, d: np.dtype, operands: list, refs: list,
             dtypes: list, lit_ids: dict) -> int:
        i = lit_ids.get(key)
        if i is None:
            if dkind(d) == "c":
                value = complex(value)
            i = lit_ids[key] = len(operands)
            operands.append(_ScalarOperand(value, d))
            refs.append((False, value))
            dtypes.append(d)
        return i

    def _build_ew(self, grp: Group, env: dict[int, Any]) -> _EwStep:
        operands, refs, body, vid = self._program(grp, env)
        members = [e.out_binders[0] for e in grp.eqns]
        escaping = [v for v in members if v.n in grp.escapes]
        return self._ew_step(operands, refs, body, [vid[v.n] for v in escaping], escaping,
                             grp.shape, env)

    def _ew_step(self, operands: list, refs: list, body: list[Instr], out_ids: list[int],
                 escaping: list[Var], shape: tuple[int, ...], env: dict[int, Any]) -> _EwStep:
        """The elementwise step of an SSA program whose values ``out_ids`` are stored as
        ``escaping``; run once on ``env``."""
        device = self.device
        n_in = len(operands)
        # outputs must be the last values of the body: append copies for the others
        body_t = tuple(body)
        extra = []
        last = n_in + len(body_t) - len(out_ids)
        if out_ids != list(range(last, n_in + len(body_t))):
            for k, v in enumerate(escaping):
                d = v.aval.dtype
                extra.append(Instr("copy", (out_ids[k],), (d,), d, d))
            body_t = body_t + tuple(extra)
        args, in_dtypes, arrays = [], [], []
        for val, (is_slot, ref) in zip(operands, refs):
            if isinstance(val, _ScalarOperand):
                args.append(val.value)
                in_dtypes.append(val.dtype)
            elif not isinstance(val, Array):   # a weak Python scalar argument
                args.append(val)
                in_dtypes.append(weak_dtype(val))
            else:
                args.append(val)
                in_dtypes.append(val.dtype)
                arrays.append(ref)
        plan = None
        if math.prod(shape) and escaping:   # planned on the layouts of fresh outputs
            outs = [Array.empty(v.aval.shape, v.aval.dtype, device) for v in escaping]
            plan = plan_elementwise(device, body_t, args, in_dtypes, outs)
        step = _EwStep(plan, device, arrays, list(refs),
                       [(self._slot(v.n), v.aval.shape, v.aval.dtype) for v in escaping])
        step.run(env)
        return step

    # reductions ------------------------------------------------------------------------
    def _post_program(self, grp: Group, env: dict[int, Any]) -> tuple[list, list, list, dict]:
        """The program of a reduce group's ``post`` equations: ``_program``'s operands, with
        each reduction's result standing as a ``_RowResult`` (it lives in a register)."""
        slots = [self._slot(r.out_binders[0].n) for r in grp.reds]
        for m, (s, r) in enumerate(zip(slots, grp.reds)):
            env[s] = _RowResult(m, r.out_binders[0].aval.dtype)
        members = {b.n for e in grp.post for b in e.out_binders}
        try:
            return self._program(Group("ew", eqns=grp.post, members=members), env)
        finally:
            for s in slots:
                del env[s]

    def _build_reduce(self, grp: Group, env: dict[int, Any], horizontal: bool = False) -> Any:
        """The fused reduction step of ``grp``, built and run on ``env``. With
        ``horizontal`` (a member of a horizontal group, fusion._horizontal_reductions), the
        reduction is not split into parts, and where it can join a horizontal kernel (``codegen.horizontal_ok``, one
        output) the result is ``(spec, step)``: the step without its kernel, not run."""
        device = self.device
        operands, refs, body, vid = self._program(dataclasses.replace(grp, post=[]), env)
        shape, axes = grp.shape, grp.axes
        kept = [i for i in range(len(shape)) if i not in axes]
        kshape = [shape[i] for i in kept]
        rshape = [shape[i] for i in axes]
        n_out, R = math.prod(kshape), math.prod(rshape)
        sides = [v for e in grp.eqns for v in e.out_binders if v.n in grp.escapes]
        post_ops: list[Any] = []
        post_refs: list[tuple] = []
        post_body: list[Instr] = []
        post_vid: dict[int, int] = {}
        if grp.post:
            post_ops, post_refs, post_body, post_vid = self._post_program(grp, env)
        post_arrays = [o for o in post_ops if isinstance(o, Array)]
        # strides of every array operand and side output over (kept, reduced)
        views: list[tuple[list[int], list[int]]] = []
        for val in operands:
            if isinstance(val, Array):
                st = broadcast_strides(val, shape)
                views.append(([st[i] for i in kept], [st[i] for i in axes]))
        for v in sides:     # side outputs are fresh C-ordered arrays
            st = c_strides(v.aval.shape)
            views.append(([st[i] for i in kept], [st[i] for i in axes]))
        # the epilogue's arrays have the output's (kept) shape
        post_k = [list(broadcast_strides(a, tuple(kshape))) for a in post_arrays]
        kc, kst = collapse(kshape, [v[0] for v in views] + post_k +
                           [[s for s in c_strides(tuple(kshape))]])
        rc, rst = collapse(rshape, [v[1] for v in views])
        kc, rc = kc or [1], rc or [1]
        kst = [s or [0] for s in kst]
        rst = [s or [0] for s in rst]
        nk, nr = len(kc), len(rc)
        parts = 1
        # enough (output, part) items to fill the device; chunks of at least 2048 elements
        target = 4 * device.compute_units * (1 if device.is_cpu else 8)
        # a horizontal member is not split: one work-group (CPU: work-item) walks its
        # range, at most fusion.HORIZONTAL_MAX elements
        if n_out < target and R >= 8192 and not horizontal:
            parts = max(1, min(target // max(n_out, 1), R // 2048))
        chunk = -(-R // parts)
        # (a member of a horizontal kernel takes the GPU layout of its larger members)
        group = not device.is_cpu and (R >= 64 or horizontal)
        G = 256 if group else 1
        # vector walk on CPUs: operands unit-stride or constant along the innermost reduced
        # dim (several reduced dims: long enough rows, codegen._row_vector_walk)
        rmodes = tuple("unit" if s[-1] == 1 else "bcast" if s[-1] == 0 else "any"
                       for s in rst)
        reds = []
        for r in grp.reds:
            p = r.params
            reds.append((p["op"], vid[r.inputs[0].n], p["acc_dtype"],
                         r.out_binders[0].aval.dtype))
        vec = 1
        all_dtypes = [_dtype_of(o) for o in operands] + [i.out_dtype for i in body]
        # the body has vector code and its reductions combine vectors lane by lane
        vector_body = can_vectorize(tuple(body), all_dtypes) and \
            all(r[0] in ("sum", "prod") and r[2].kind in "fiu" for r in reds)
        if device.is_cpu and (nr == 1 or rc[-1] >= _ROW_WALK_MIN) and \
                all(m in ("unit", "bcast") for m in rmodes) and \
                all(m == "unit" for m in rmodes[len(views) - len(sides):]) and vector_body:
            vec = max(1, min(16, 64 // max(C.compute_itemsize(d) for d in all_dtypes)))
        # a column reduction: one kept dim, unit-stride (or constant) in every operand
        kept_unit = vec == 1 and nk == 1 and \
            all(st[0] in (0, 1) for st in kst[:len(views)]) and \
            any(st[0] == 1 for st in kst[:len(views)])
        # CPUs, column reductions (kept dim unit-stride, the walk strided): an item takes
        # KVEC neighbouring outputs, so each step reads a row's neighbours (codegen docstring)
        kvec, kmodes = 1, ()
        if device.is_cpu and COLUMN_LAYOUT is None and kept_unit and n_out >= 2 * _KVEC and \
                any(abs(st[0]) > 1 for st in rst[:len(views)]):
            kvec = _KVEC
            # the walk on vectors of kvec lanes where the body has vector code: sums and
            # products, each operand unit-stride or constant along the kept dim (kept_unit).
            # Not with bool values (masks) in the body: Oclgrind computes 16-lane mask code
            # wrongly (g * (a > 0): garbage where PoCL is exact; tests/robust, case
            # jit.finished_reductions_epilogues_replay), so a ReLU's gradient keeps the loop
            if vector_body and all(d.kind != "b" for d in all_dtypes):
                kmodes = tuple("unit" if st[0] == 1 else "bcast" for st in kst[:len(views)])
            nq = -(-n_out // kvec)
            parts = 1
            if nq < target and R >= 8192:
                parts = max(1, min(target // nq, R // 2048))
            chunk = -(-R // parts)
        # GPUs, column reductions (a bias gradient: kept dim unit-stride, the walk strided): a
        # work-group per output would read one element per row of a column; instead one item
        # per output and part, neighbouring items on neighbouring outputs (coalesced rows),
        # with enough parts to fill the device (H200, sum over 4096 rows of 4096 columns)
        cols = False
        if (not device.is_cpu or COLUMN_LAYOUT == "gpu") and kept_unit and \
                n_out >= _GPU_COLS_MIN and any(abs(s) > 1 for st in rst[:len(views)] for s in st):
            cols, group, G = True, False, 1
            parts = max(1, min(_GPU_COL_ITEMS * device.compute_units // n_out, R // 16))
            chunk = -(-R // parts)
        partial = parts > 1
        # GPUs: the last part of each output finishes it inside the kernel (atomic counts),
        # where the partials would otherwise take a second launch
        finish = partial and kvec == 1 and (not device.is_cpu or COLUMN_LAYOUT == "gpu") and \
            all(shares(r[2], device.extensions) for r in reds)
        if grp.post and partial and not finish:
            # the outputs are finished by a second launch: the epilogue is a step after it
            members = {b.n for e in grp.post for b in e.out_binders}
            post = Group("ew", eqns=grp.post, shape=tuple(kshape), members=members,
                         escapes=grp.escapes & members, index=grp.index)
            main = dataclasses.replace(grp, post=[], members=grp.members - members,
                                       escapes=grp.escapes - members)
            return _SeqStep([self._build_reduce(main, env), self._build_ew(post, env)])
        post_escaping = [v for e in grp.post for v in e.out_binders if v.n in grp.escapes]
        post_inputs = tuple(("red", o.m) if isinstance(o, _RowResult) else
                            Operand(_dtype_of(o), not isinstance(o, Array)) for o in post_ops)
        spec = FusedReduceSpec(
            tuple(Operand(_dtype_of(o), not isinstance(o, Array)) for o in operands),
            tuple(body), tuple(reds), tuple((vid[v.n], v.aval.dtype) for v in sides), nk, nr,
            "group" if group else "serial", G, vec, rmodes if vec > 1 or nr == 1 else (),
            partial, kvec, cols, finish, post_inputs, tuple(post_body),
            tuple((post_vid[v.n], v.aval.dtype) for v in post_escaping), kmodes)
        template: list[Any] = [n_out, parts, R, chunk] + kc + rc
        bufs: list[tuple[int, int]] = []
        scalars: list[tuple[int, int, np.dtype]] = []
        k = _bind_operands(operands, refs, lambda k: kst[k] + rst[k], template, bufs, scalars)
        out_specs: list[tuple[int, tuple, np.dtype]] = []
        for j, v in enumerate(sides):
            bufs.append((len(template), -1 - j))
            template += [None, 0] + kst[k] + rst[k]
            k += 1
            out_specs.append((self._slot(v.n), v.aval.shape, v.aval.dtype))
        ocontig = kst[-1]
        finish_fns: list[Any] = [None] * len(sides)
        for m, r in enumerate(grp.reds):
            v = r.out_binders[0]
            bufs.append((len(template), -1 - len(out_specs)))
            template += [None, 0] + (ocontig if not partial or finish else [0] * nk)
            if partial and not finish:
                out_specs.append((self._slot(v.n), (n_out * parts,), r.params["acc_dtype"]))
                finish_fns.append(self._partials_finisher(r, n_out, parts, device))
            else:
                out_specs.append((self._slot(v.n), v.aval.shape, v.aval.dtype))
                finish_fns.append(None)
        # the epilogue's outputs follow the reductions' (their arguments come last)
        n_main = len(out_specs)
        for v in post_escaping:
            out_specs.append((self._slot(v.n), v.aval.shape, v.aval.dtype))
            finish_fns.append(None)
        keep: list[Array] = []
        if finish:
            # the partials of each reduction and the per-output counts belong to the step:
            # zeroed once (the counts are reset by the kernel; the partials, rewritten every
            # launch, are read and written only atomically, whose old values must be set)
            for r in grp.reds:
                keep.append(zeros((n_out * parts,), dtype=r.params["acc_dtype"], device=device))
                template.append(keep[-1]._buf)
            keep.append(zeros((n_out,), dtype=np.dtype(np.uint32), device=device))
            template.append(keep[-1]._buf)
        # the epilogue's arrays: strides over the kept dims only, after the main operands'
        _bind_operands(post_ops, post_refs, lambda j: kst[len(views) + j], template, bufs,
                       scalars)
        for j in range(len(post_escaping)):
            bufs.append((len(template), -1 - (n_main + j)))
            template += [None, 0] + ocontig
        step = _RedStep()
        step.kernel, step.device = None, device
        items = -(-n_out // kvec) * parts
        if group:
            step.gsize, step.lsize = (items * G,), (G,)
        elif kvec > 1:
            # few items, each a long walk: one per work-group, so that every core takes some
            step.gsize, step.lsize = (items,), (1,)
        else:
            L = 128
            if device.is_cpu:
                # PoCL runs a work-group on one thread: at least 4 groups per core (a
                # batch norm's 64 channel sums were one group, walked by one core of two)
                L = max(1, min(64, items // (4 * device.compute_units)))
            step.gsize, step.lsize = (-(-items // L) * L,), (L,)
        step.template, step.bufs, step.scalars = template, bufs, scalars
        # first call: the kernel, then each partial result's finishing reduction, captured
        step.outs, step.finish = out_specs, [None] * len(out_specs)
        step.layouts = _fresh_layouts(out_specs)
        step.keep = keep
        step.bound = None
        if horizontal and items == 1 and horizontal_ok(spec) and \
                all(f is None for f in finish_fns):
            return spec, step
        step.kernel = device.kernel(("jit-reduce", spec), lambda: render_fused_reduce(spec))
        step.run(env)
        for j, ((slot, _, _), fin) in enumerate(zip(out_specs, finish_fns)):
            if fin is not None:
                env[slot], step.finish[j] = _capture.capture(fin, [env[slot]], device)
        return step

    def _build_hreduce(self, grp: Group, env: dict[int, Any]) -> Any:
        """A horizontal group (``fusion``): its reductions to one value each, joined in
        kernels of compatible members (one layout, work-group size, vector width and
        accumulator dtype) within the device's kernel-parameter bytes; a member that cannot
        join one is built alone."""
        device = self.device
        steps: list[Any] = []
        joinable: dict[tuple, list[tuple[Any, _RedStep]]] = {}
        for sub in grp.sub:
            built = self._build_reduce(sub, env, horizontal=True)
            if isinstance(built, tuple):
                spec = built[0]
                key = (spec.mode, spec.group, spec.vec, spec.reds[0][2])
                joinable.setdefault(key, []).append(built)
            else:
                steps.append(built)
        # 64 bytes spare for the driver's alignment of the arguments
        budget = min(device.max_parameter_size, _HORIZONTAL_PARAM_BYTES) - 64
        for members in joinable.values():
            chunk: list[tuple[Any, _RedStep]] = []
            used = 0
            for spec, step in members:
                size = 8 * len(step.template)
                if chunk and used + size > budget:
                    steps.append(self._horizontal_step(chunk, env))
                    chunk, used = [], 0
                chunk.append((spec, step))
                used += size
            steps.append(self._horizontal_step(chunk, env))
        return steps[0] if len(steps) == 1 else _SeqStep(steps)

    def _horizontal_step(self, members: list[tuple[Any, _RedStep]], env: dict[int, Any]
                         ) -> _RedStep:
        """One launch of ``members`` (``codegen.render_horizontal_reduce``), run on ``env``;
        a single member becomes its own kernel."""
        device = self.device
        if len(members) == 1:
            spec, step = members[0]
            step.kernel = device.kernel(("jit-reduce", spec), lambda: render_fused_reduce(spec))
            step.run(env)
            return step
        specs = tuple(spec for spec, _ in members)
        out = _RedStep()
        out.device, out.bound = device, None
        out.kernel = device.kernel(("jit-hreduce", specs),
                                   lambda: render_horizontal_reduce(specs))
        out.template, out.bufs, out.scalars = [], [], []
        out.outs, out.finish, out.layouts, out.keep = [], [], [], []
        for _, step in members:
            base, nout = len(out.template), len(out.outs)
            out.template += step.template
            out.bufs += [(pos + base, src if src >= 0 else src - nout) for pos, src in step.bufs]
            out.scalars += [(pos + base, src, cdt) for pos, src, cdt in step.scalars]
            out.outs += step.outs
            out.finish += step.finish
            out.layouts += step.layouts
            out.keep += step.keep
        G = specs[0].group if specs[0].mode == "group" else 1
        out.gsize, out.lsize = (len(members) * G,), (G,)
        out.run(env)
        return out

    def _partials_finisher(self, r: Any, n_out: int, parts: int,
                           device: Device) -> Callable[[Array], Array]:
        """The eager reduction of ``r``'s partial results, ``[n_out, parts]``, to its
        output."""
        p = r.params
        out_shape = r.out_binders[0].aval.shape

        def fn(part: Array) -> Array:
            x = Array(part._buf, 0, (n_out, parts), (parts, 1), p["acc_dtype"], device)
            y = PRIMITIVES["reduce"].impl(x, op=p["op"], axes=(1,), acc_dtype=p["acc_dtype"],
                                          out_dtype=r.out_binders[0].aval.dtype)
            return Array(y._buf, 0, out_shape, c_strides(out_shape), y.dtype, device)
        return fn

    # opaque primitives and views -------------------------------------------------------
    def _build_opaque(self, e: Any, env: dict[int, Any], view: bool = False) -> Any:
        if e.prim.name == "dot_general":
            step = self._split_partials(e, env)
            if step is not None:
                return step
        device = self.device
        prim = e.prim
        operands: list[tuple[bool, Any]] = []
        arrays: list[Array] = []
        aslots: list[int] = []
        for x in e.inputs:
            if isinstance(x, Lit):
                operands.append((False, x.value))
                continue
            val = env[self.slot[x.n]]
            if not isinstance(val, Array):    # a weak scalar argument: uploaded per call
                return self._call_step(e, env)
            operands.append((True, len(arrays)))
            arrays.append(val)
            aslots.append(self.slot[x.n])
        impl = prim.impl
        params = e.params

        def fn(*arrs: Array) -> Any:
            it = iter(arrs)
            args = [next(it) if is_arr else v for is_arr, v in operands]
            return impl(*args, **params)
        # inputs sharing a buffer (two views of one value) share it at every call too, so
        # rebinding buffers by identity stays right
        res, rep = _capture.capture(fn, arrays, device)
        outs = list(res) if prim.multiple_results else [res]
        out_slots = [self._slot(b.n) for b in e.out_binders]
        for slot, o in zip(out_slots, outs):
            env[slot] = o
        if rep is None:
            return self._call_step(e, env, done=True)
        if view and len(outs) == 1 and rep.n_launches == 0 and rep.outs[0].src >= 0:
            st = _ViewStep()
            st.src, st.out = aslots[rep.outs[0].src], out_slots[0]
            o = outs[0]
            st.offset, st.shape, st.strides, st.dtype = o._offset, o._shape, o._strides, \
                o._dtype
            return st
        return _ReplayStep(rep, aslots, out_slots)

    def _split_partials(self, e: Any, env: dict[int, Any]) -> _SplitGemmStep | None:
        """A product the planner splits along K whose every reader is a fused kernel's
        program (elementwise, reduction or row groups): its partials, left for those programs
        to sum where they read it (one launch less than the eager product's sum)."""
        out = e.out_binders[0]
        if not self.program_reads.get(out.n):
            return None
        lhs, rhs = (env[self.slot[x.n]] if isinstance(x, Var) else None for x in e.inputs)
        if not isinstance(lhs, Array) or not isinstance(rhs, Array):
            return None
        (lc, rc), (lb, rb) = e.params["dimension_numbers"]
        dn = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
        if e.params.get("preferred_element_type") not in (None, out.aval.dtype):
            return None
        planned = epilogue_plan(lhs, rhs, dn, [])
        if planned is None or planned[1] is not None:
            return None
        launch = planned[0]
        if not 1 < launch.parts <= _SPLIT_READ_MAX or launch.dst_dtype != out.aval.dtype or \
                tuple(launch.out_shape) != tuple(out.aval.shape):
            return None
        step = self._partials_step(launch, e.inputs[0], e.inputs[1], tuple(out.aval.shape),
                                   env)
        env[self._slot(out.n)] = _SplitValue(step.pslots, [env[p] for p in step.pslots])
        return step

    def _call_step(self, e: Any, env: dict[int, Any], done: bool = False) -> _CallStep:
        st = _CallStep()
        st.impl, st.params, st.device = e.prim.impl, e.params, self.device
        st.multi = e.prim.multiple_results
        st.operands = [(False, x.value) if isinstance(x, Lit) else (True, self.slot[x.n])
                       for x in e.inputs]
        st.outs = [self._slot(b.n) for b in e.out_binders]
        if not done:
            st.run(env)
        return st


# a split product whose readers sum its partials: at most this many (each an operand)
_SPLIT_READ_MAX = 8


class _SplitValue:
    """Stands for a split product in ``env`` while its readers' programs are built: the slots
    holding its partials at run time, and this call's partial views."""
    __slots__ = ("slots", "parts")

    def __init__(self, slots: list[int], parts: list[Array]):
        self.slots, self.parts = slots, parts


class _Tmp:
    """A value of a program that no equation binds (a partial sum): keyed like a Var."""
    __slots__ = ("n",)

    def __init__(self, n: Any):
        self.n = n


def _program_reads(groups: list[Group], g: Graph) -> dict[int, bool]:
    """Var id -> whether every reader of the value is a fused kernel's program (an
    elementwise, reduction or row group's equations, or a product's epilogue; not a
    product's operand, a view, an opaque step or a graph output). A row group counts as the
    groups it absorbed, which run instead where its kernel does not apply; a lone reduction
    of a split product is a fused reduction (``_build_group``)."""
    ok: dict[int, bool] = {}

    def note(grp: Group) -> None:
        if grp.kind in ("rows", "hreduce"):
            for sub in grp.sub:
                note(sub)
            return
        programs = grp.kind in ("ew", "reduce", "gemm")
        for e in grp.eqns + grp.reds + grp.post:
            for x in e.inputs:
                if isinstance(x, Var):
                    ok[x.n] = ok.get(x.n, True) and programs
        for e in grp.gemm:
            for x in e.inputs:
                if isinstance(x, Var):
                    ok[x.n] = False
    for grp in groups:
        note(grp)
    for x in g.outs:
        if isinstance(x, Var):
            ok[x.n] = False
    return ok


class _RowResult:
    """Stands for a row kernel's reduction result while its program is built (the result
    lives in a register, not in a buffer)."""
    __slots__ = ("dtype", "m")

    def __init__(self, m: int, dtype: np.dtype):
        self.m, self.dtype = m, dtype


class _ScalarOperand:
    __slots__ = ("value", "dtype")

    def __init__(self, value: Any, dtype: np.dtype):
        self.value, self.dtype = value, dtype


def _dtype_of(o: Any) -> np.dtype:
    if isinstance(o, (Array, _ScalarOperand)):
        return o.dtype
    return weak_dtype(o)


def weak_dtype(v: Any) -> np.dtype:
    """The dtype a weakly typed Python scalar argument is traced with: ``asarray``'s (a
    NumPy scalar, such as a typed scalar argument of a user kernel, keeps its own)."""
    if isinstance(v, np.generic):
        return v.dtype
    return _scalar_dtype(v, default_device())


def _carg(d: np.dtype) -> np.dtype:
    return C.scalar_arg_dtype(d)


def _bind_operands(operands: list, refs: list, strides: Callable[[int], list],
                   template: list, bufs: list, scalars: list) -> int:
    """Append a program's operands to a kernel's argument ``template``: an array's buffer
    (rebound per call: its position and slot go to ``bufs``), offset and ``strides(j)`` (the
    j-th array's); a constant's value; a weak scalar argument's value (set again per call:
    ``scalars``). A reduction result held in a register (``_RowResult``) takes none. Returns
    the number of arrays."""
    k = 0
    for val, (_, ref) in zip(operands, refs):
        if isinstance(val, Array):
            bufs.append((len(template), ref))
            template += [None, val._offset] + strides(k)
            k += 1
        elif isinstance(val, _ScalarOperand):
            template.append(np.asarray(val.value, _carg(val.dtype))[()])
        elif not isinstance(val, _RowResult):    # weak scalar argument
            scalars.append((len(template), ref, _carg(_dtype_of(val))))
            template.append(np.asarray(val, _carg(_dtype_of(val)))[()])
    return k


def _kernel_group_limit(kernel: Any, device: Device) -> int:
    """The largest work-group ``kernel`` can be launched with on ``device``
    (``CL_KERNEL_WORK_GROUP_SIZE``)."""
    import pyopencl as cl
    return int(kernel.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE,
                                          device.cl_device))


def _normal_input(a: Any) -> Any:
    if isinstance(a, Array) and (a._offset != 0 or not a.is_contiguous):
        return contiguous_copy(a)
    return a


def _step_inputs(step: Any) -> list[int]:
    if isinstance(step, _EwStep):
        return [v for kind, v in step.operands if kind]
    if isinstance(step, _RedStep):
        return [src for _, src in step.bufs if src >= 0] + [s for _, s, _ in step.scalars]
    if isinstance(step, _GemmStep):
        return [slot for slot, _, _ in step.ins] + [slot for _, slot in step.dyn]
    if isinstance(step, _SeqStep):
        return [s for st in step.steps for s in _step_inputs(st)]
    if isinstance(step, _WholeStep):
        return list(step.ins)
    if isinstance(step, _SplitGemmStep):
        ew = _step_inputs(step.ew) if step.ew is not None else []
        return [step.a, step.b] + [s for s in ew if s not in step.pslots]
    if isinstance(step, _ViewStep):
        return [step.src]
    if isinstance(step, _ReplayStep):
        return list(step.ins)
    if isinstance(step, _CallStep):
        return [v for kind, v in step.operands if kind]
    return []
