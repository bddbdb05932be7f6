"""Launch capture: run an eager implementation once, record what it enqueues, replay it later.

``clnp_grad.jit`` compiles a function into a list of steps; a step that is not one of its own
fused kernels runs the primitive's eager implementation. Those implementations decide their
kernels, launch geometry and scratch buffers from shapes, dtypes and layouts only, so for a
given layout the same launches come out every time. ``capture`` records them (TinyJit's idea,
applied per step) and ``Replay`` enqueues them again on new buffers: no Python per primitive
beyond argument binding.

What is recorded: every kernel launch made through ``_runtime.launch`` and the eager hot
paths, host-to-device uploads, host computations on memory the host shares with the device
(``capture_hooks.HostCall``: a product in the host's BLAS), and device checks
(``device_checks``: an error flag a kernel sets, such as indexing's bounds, read after the
call and after each replay of it). Any other
device-to-host read makes the step *not replayable* (its result steers host code: a
data-dependent shape), and the caller must run the implementation each time. Buffers seen in a launch are classified after the call: the buffer
of an input view is rebound to the new input; the buffer of an output is allocated anew at
each replay; any other buffer (a scratch array, a cached table, a counter array) is kept by
the replay and reused, which is safe because a device's queue is in order.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from . import device_checks
from .array import Array
from .._runtime.launch import Launch, bind
from .._runtime.device import Device
from .._runtime.opencl import cl

from .._runtime import capture_hooks as _hooks
from .._runtime import cuda_graph as _cuda_graph
from .._runtime.capture_hooks import _STATE, HostCall, Recording
from .._runtime.generated import GeneratedSource


class _Out:
    """How a replay makes one output: a view of input ``src`` (>= 0), of a new allocation of
    ``nbytes`` (``src == -1``), or of a kept buffer (``src == -2``)."""
    __slots__ = ("src", "nbytes", "buf", "offset", "shape", "strides", "dtype")

    def __init__(self, src: int, nbytes: int, buf: Any, a: Array):
        self.src, self.nbytes, self.buf = src, nbytes, buf
        self.offset, self.shape, self.strides, self.dtype = (a._offset, a._shape, a._strides,
                                                             a._dtype)


class Replay:
    """The launches of one captured call, re-enqueued on new input and output buffers."""

    __slots__ = ("device", "steps", "outs", "n_inputs", "kept_nbytes", "graph", "fast")

    def __init__(self, device: Device, steps: list[tuple], outs: list[_Out], n_inputs: int,
                 kept_nbytes: int = 0):
        self.device, self.steps, self.outs, self.n_inputs = device, steps, outs, n_inputs
        # bytes of the buffers allocated during the captured call that the replay keeps
        # (scratch and intermediate values): memory held for as long as the replay lives
        self.kept_nbytes = kept_nbytes
        # the replay as a CUDA graph (cuda_graph.GraphReplay), why there is none (a str), or
        # None: not tried (planned at the first replay on a device whose arrays CUDA sees)
        self.graph: Any = None
        # the call as generated code (_generated_call), False where it has none, or None:
        # not made yet (made at the first call, after any rebind)
        self.fast: Any = None

    def kept_buffers(self) -> list[tuple[int, Any]]:
        """``(step index, buffer)`` for every buffer a step uses that the replay keeps (not
        an input's or output's, which calls rebind), in step order."""
        return [(i, b) for i, step in enumerate(self.steps) for b in _kept_by(step)]

    def rebind(self, mapping: dict[int, Any]) -> None:
        """Use ``mapping[id(old)]`` wherever a step keeps buffer ``old`` (the kernels that
        hold it as an argument are set again)."""
        def new(a: Any) -> Any:
            return mapping.get(id(a), a) if isinstance(a, cl.MemoryObjectHolder) else a
        self.fast = None          # it names the steps being replaced
        for i, step in enumerate(self.steps):
            kind = step[0]
            if kind == "b":
                _, bound, slots, kept = step
                args = tuple(new(a) for a in kept)
                with bound.kernel.lock:      # not while another thread launches it
                    for pos, (a, b) in enumerate(zip(kept, args)):
                        if a is not b:
                            bound.kernel.set_arg(pos, b)
                self.steps[i] = ("b", bound, slots, args)
            elif kind == "p":
                self.steps[i] = step[:5] + (tuple((p, new(b)) for p, b in step[5]),) + \
                    step[6:]
            elif kind == "k":
                self.steps[i] = step[:4] + (tuple(new(a) for a in step[4]),) + step[5:]
            elif kind == "h":
                self.steps[i] = step[:2] + (tuple(new(a) for a in step[2]),) + step[3:]
            elif kind == "u" and step[1] is None:
                self.steps[i] = (step[0], None, new(step[2]), step[3])

    @property
    def n_launches(self) -> int:
        return sum(1 for s in self.steps if s[0] in ("k", "p", "b"))

    def kernels(self) -> list[Any]:
        return [s[1].kernel if s[0] == "b" else s[1] for s in self.steps
                if s[0] in ("k", "p", "b")]

    def __call__(self, inputs: Sequence[Array]) -> list[Array]:
        device = self.device
        fast = self.fast
        if fast is None:
            fast = self.fast = _generated_call(self) or False
        # not inside another recording (which notes each launch), nor as a CUDA graph
        if fast and _STATE.rec is None and not (
                _cuda_graph.ENABLED and device.cuda_memory):
            return fast(inputs)
        bufs: list[Any] = [a._buf for a in inputs]     # slot i: input i's buffer
        outs: list[Array] = []
        for o in self.outs:
            if o.src == -1:
                b = device.alloc(o.nbytes)
                bufs.append(b)
            elif o.src == -2:
                b = o.buf
                bufs.append(b)
            else:
                b = bufs[o.src]
                bufs.append(b)
            outs.append(Array(b, o.offset, o.shape, o.strides, o.dtype, device))
        pending: list[tuple] = []     # device checks whose flags are being read
        # a replay inside another capture (a jitted step run by another one's) notes what it
        # enqueues to that recording; which it is does not change during the call
        outer = _hooks.current() is not None
        if not outer:
            graph = self.graph
            if graph is None and _cuda_graph.wanted(device):
                graph = self.graph = _cuda_graph.plan(device, self.steps, bufs)
            if type(graph) is _cuda_graph.GraphReplay and graph.launch(bufs):
                if graph.checks:      # their flags, read once the graph has run
                    queue = device.queue
                    device_checks.finish_all([(c, *c.start(queue)) for c in graph.checks])
                return outs
        queue = device.queue
        try:
            self._enqueue(bufs, queue, pending, outer)
        except BaseException:
            device_checks.abandon(pending)
            raise
        device_checks.finish_all(pending)
        return outs

    def _enqueue(self, bufs: list, queue: Any, pending: list, outer: bool) -> None:
        """Enqueue every step on ``bufs`` (the call's buffers by slot); the device checks'
        reads go to ``pending``."""
        device = self.device
        set_arg = cl.Kernel.set_arg
        for step in self.steps:
            kind = step[0]
            if kind == "c":
                chk = step[1]
                if not _hooks.note_check(chk):     # else the outer recording's call checks
                    pending.append((chk, *chk.start(queue)))
            elif kind == "b":
                _, bound, slots, _kept = step
                bound(queue, [bufs[k] for _, k in slots])
            elif kind == "k":
                _, kernel, gsize, lsize, args, slots = step
                if slots:
                    args = list(args)
                    for pos, k in slots:
                        args[pos] = bufs[k]
                if outer:
                    _hooks.note_launch(kernel, gsize, lsize, args)
                kernel(queue, gsize, lsize, *args)
            elif kind == "p":
                _, kernel, gsize, lsize, slots, fixed, launch = step
                with kernel.lock:          # arguments and launch as one (launch.Kernel)
                    # PyOpenCL's own set_arg: launch.Kernel's would clear args_of each time
                    if getattr(kernel, "args_of", None) is not step:
                        # another launch set them since this step did (launch.Kernel.args_of)
                        for pos, b in fixed:
                            set_arg(kernel, pos, b)
                    for pos, k in slots:
                        set_arg(kernel, pos, bufs[k])
                    if hasattr(kernel, "args_of"):      # clnp's launch.Kernel
                        kernel.args_of = step
                    if outer:
                        _hooks.note_preset_launch(kernel, gsize, lsize, dict(
                            [(pos, bufs[k]) for pos, k in slots] + list(fixed)))
                    launch(queue)
            elif kind == "h":
                _, call, args, slots = step
                args = list(args)
                for pos, k in slots:
                    args[pos] = bufs[k]
                if outer:
                    _hooks.note_host_call(call, args)
                call.run_on_host(*args)
            else:   # "u": an upload of constant host data into a buffer
                _, k, dst, host = step
                target = bufs[k] if k is not None else dst
                if outer:
                    _hooks.note_upload(target, host)
                device.keep_until_done(cl.enqueue_copy(queue, target, host, is_blocking=False))


def _generated_call(rep: Replay) -> Callable[[Sequence[Array]], list[Array]] | None:
    """``rep``'s call as straight-line Python, for a recording of kernel launches only
    (steps ``"b"`` and ``"p"``): the same work as ``Replay.__call__`` without its loops over
    the steps and outputs. A small jitted step is mostly this Python on PoCL (the logistic
    step of bench/xla_table.py, one whole-step launch: 13-15 us of replay around a 2.7 us
    launch). None for any other recording."""
    if not rep.steps or any(s[0] not in ("b", "p") for s in rep.steps):
        return None
    code = GeneratedSource()
    c = code.const
    n = rep.n_inputs
    device = rep.device
    body = [f"    b{i} = inputs[{i}]._buf" for i in range(n)]
    alloc = c(device.alloc)
    for j, o in enumerate(rep.outs):
        src = (f"{alloc}({o.nbytes})" if o.src == -1 else c(o.buf) if o.src == -2 else
               f"b{o.src}")
        body.append(f"    b{n + j} = {src}")
    body.append(f"    queue = {c(device)}.queue")
    set_arg = c(cl.Kernel.set_arg)
    for step in rep.steps:
        if step[0] == "b":
            _, bound, slots, _kept = step
            body.append(f"    {c(bound)}(queue, [{', '.join(f'b{k}' for _, k in slots)}])")
            continue
        _, kernel, _gsize, _lsize, slots, fixed, launch = step
        k, st = c(kernel), c(step)
        tracked = hasattr(kernel, "args_of")      # clnp's launch.Kernel (see _enqueue)
        body.append(f"    with {k}.lock:")
        if fixed:
            test = f"{k}.args_of is not {st}" if tracked else "True"
            body.append(f"        if {test}:")
            body += [f"            {set_arg}({k}, {pos}, {c(b)})" for pos, b in fixed]
        body += [f"        {set_arg}({k}, {pos}, b{s})" for pos, s in slots]
        if tracked:
            body.append(f"        {k}.args_of = {st}")
        body.append(f"        {c(launch)}(queue)")
    arr, dev = c(Array), c(device)
    outs = [f"{arr}(b{n + j}, {o.offset}, {c(o.shape)}, {c(o.strides)}, {c(o.dtype)}, {dev})"
            for j, o in enumerate(rep.outs)]
    body.append(f"    return [{', '.join(outs)}]")
    return code.function("def call(inputs):\n" + "\n".join(body) + "\n", "call",
                         "replay")


def _nbytes(buf: Any) -> int:
    size = getattr(buf, "size", None)
    if size is None:
        size = buf.get_info(cl.mem_info.SIZE)
    return int(size)


def capture(fn: Callable[..., Any], inputs: Sequence[Array], device: Device
            ) -> tuple[Any, Replay | None]:
    """Run ``fn(*inputs)`` (an eager implementation returning an Array or a sequence of
    them) while recording; return its result and a ``Replay`` of it, or None when it read
    data back to the host (then it must be called each time).

    Inputs must not share buffers with each other (the caller copies aliases): a buffer is
    rebound by identity."""
    rec = Recording()
    prev = _STATE.rec
    _STATE.rec = rec
    try:
        result = fn(*inputs)
    except BaseException:
        # the flags its launches may have set are cleared (the call's error is the report)
        device_checks.abandon([(c, *c.start(device.queue)) for _, c in rec.checks])
        raise
    finally:
        _STATE.rec = prev
    if prev is not None:   # nested capture: the outer recording sees these launches too
        base = len(prev.launches)
        prev.launches.extend(rec.launches)
        prev.uploads.extend((i + base, dst, host) for i, dst, host in rec.uploads)
        prev.checks.extend((i + base, chk) for i, chk in rec.checks)
        prev.readback |= rec.readback
        prev.allocated |= rec.allocated
    elif rec.checks:       # the captured call itself answers for its device checks
        device_checks.run_recorded([chk for _, chk in rec.checks], device.queue)
    if rec.readback:
        return result, None
    outs_list = list(result) if isinstance(result, (list, tuple)) else [result]
    if not all(isinstance(o, Array) for o in outs_list):
        return result, None
    slot_of: dict[int, int] = {id(a._buf): i for i, a in enumerate(inputs)}
    outs: list[_Out] = []
    n = len(inputs)
    for j, o in enumerate(outs_list):
        k = slot_of.get(id(o._buf))
        if k is not None:
            outs.append(_Out(k, 0, None, o))
        else:
            fresh = id(o._buf) in rec.allocated   # else a buffer the implementation keeps
            outs.append(_Out(-1 if fresh else -2, _nbytes(o._buf), None if fresh else o._buf,
                             o))
            slot_of[id(o._buf)] = n + j
    steps: list[tuple] = []
    uploads = {i: [] for i, _, _ in rec.uploads}
    for i, dst, host in rec.uploads:
        uploads[i].append((dst, host))
    checks = {i: [] for i, _ in rec.checks}
    for i, chk in rec.checks:
        checks[i].append(chk)
    for idx, (kernel, gsize, lsize, args, preset) in enumerate(rec.launches):
        # a check recorded before launch ``idx`` reads what the launches before it wrote
        steps.extend(("c", chk) for chk in checks.get(idx, ()))
        for dst, host in uploads.get(idx, ()):
            steps.append(("u", slot_of.get(id(dst)), dst, host))
        if isinstance(kernel, HostCall):
            slots = tuple((p, slot_of[id(a)]) for p, a in enumerate(args) if id(a) in slot_of)
            steps.append(("h", kernel, tuple(None if id(a) in slot_of else a for a in args),
                          slots))
        elif args is not None:
            slots = tuple((p, slot_of[id(a)]) for p, a in enumerate(args)
                          if isinstance(a, cl.MemoryObjectHolder) and id(a) in slot_of)
            # rebound positions hold None: the first call's buffers must not be kept alive
            kept = [None if any(p == q for q, _ in slots) else a for p, a in enumerate(args)]
            bound = bind(kernel, gsize, lsize, args, [p for p, _ in slots])
            if bound is not None:   # "b" keeps ``kept``: set_arg does not hold the buffers
                steps.append(("b", bound, slots, tuple(kept)))
            else:
                steps.append(("k", kernel, gsize, lsize, tuple(kept), slots))
        else:
            slots = tuple((p, slot_of[id(b)]) for p, b in preset.items() if id(b) in slot_of)
            fixed = tuple((p, b) for p, b in preset.items() if id(b) not in slot_of)
            steps.append(("p", kernel, gsize, lsize, slots, fixed, Launch(kernel, gsize, lsize)))
    steps.extend(("c", chk) for chk in checks.get(len(rec.launches), ()))
    for dst, host in uploads.get(len(rec.launches), ()):
        steps.append(("u", slot_of.get(id(dst)), dst, host))
    return result, Replay(device, steps, outs, n, _kept_nbytes(steps, rec.allocated))


def _kept_by(step: tuple) -> list[Any]:
    """The buffers replay step ``step`` keeps: its fixed arguments, or the target of an
    upload into a kept buffer."""
    kind = step[0]
    if kind == "c":        # a check's flag is made outside the recording, kept by the check
        return []
    args = (step[3] if kind == "b" else [b for _, b in step[5]] if kind == "p" else
            step[4] if kind == "k" else step[2] if kind == "h" else
            [step[2]] if step[1] is None else [])
    return [b for b in args if isinstance(b, cl.MemoryObjectHolder)]


def _kept_nbytes(steps: list[tuple], allocated: set[int]) -> int:
    """Bytes of the distinct buffers the replay ``steps`` keep that the captured call
    allocated (buffers that existed before it, such as cached tables, are not counted)."""
    kept = {id(b): b for step in steps for b in _kept_by(step) if id(b) in allocated}
    return sum(_nbytes(b) for b in kept.values())

