"""``pmap``: one function, one shard of the mapped arguments per device, all devices at once.

How a call runs:

1. The mapped arguments are split along their ``in_axes`` (a ``ShardedArray`` over the same
   devices is used where it lies); broadcast arguments are copied to every device.
2. On a cache miss, ``fun`` is traced once, on device 0's shard, into a typed Graph (the
   ``jit`` staging of ``clnp_grad``) with the axis name bound, so collectives are recorded as
   equations. The Graph is cut into segments and groups of collectives (``_schedule``):
   collectives that do not depend on one another form one group, so a step's ``pmean`` of
   every gradient is one round trip. Each segment is compiled (``clnp_grad``'s fused
   executables) once per device, with its captured constants and creation ops moved to that
   device.
3. Each segment is enqueued on every device (its own in-order queue) before any host wait;
   at a group of collectives the shards meet (``transport``), and the next segment is
   enqueued.
4. Mapped outputs come back as a ``ShardedArray`` whose ``shard_axis`` is the output's
   ``out_axes``; ``out_axes=None`` outputs are taken from the first device (they must be
   replicated, e.g. after ``psum``).

Under a transformation (``grad``, ``jvp``, ``vmap``, ``jit``, ``make_ir``) the call binds the
``pmap`` primitive instead, carrying the staged per-device Graph; its rules (``rules``)
transform that Graph and map the result again. Its mapped results are then clnp arrays on the
first local device (the shards stacked along ``out_axes``), since the transformations'
interpreters and compiled programs hold plain arrays.

Across processes (``mpi.initialize()``), the default device list is the global one: each
process passes the shards of its own devices (leading axis = its local device count), and
collectives combine across processes.
"""
from __future__ import annotations

import contextvars
import functools
import threading
from contextlib import contextmanager
from contextvars import ContextVar
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Callable, Hashable, Iterator, Sequence

import numpy as np

import clnp
from clnp._runtime import capture_hooks as _hooks
from clnp._core.array import Array
from clnp._core.eager import contiguous_copy
from clnp._core.prims import EVAL, current_interpreter, def_impl, primitive, set_interpreter
from clnp._runtime.device import Device
from clnp._core.transfer import copy_to_device, start_read, upload
from clnp_grad._collectives import COLLECTIVES, axis_frame
from clnp_grad._core import Tracer, _under_staging
from clnp_grad._ir import Aval, Graph, Lit, Var
from clnp_grad._jit.executable import Executable, weak_dtype
from clnp_grad._jit.staging import simplify, stage
from clnp_grad._tree import PyTreeDef, tree_flatten, tree_unflatten

from . import mpi
from .sharded import ShardedArray
from .transport import Participants, axis_index_values, collective_group

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

_CACHE_SIZE = 64
# set while a pmap body is staged: a pmap called there would be nested
_STAGING: ContextVar[bool] = ContextVar("clnp_pmap_staging", default=False)


def pmap(fun: Callable[..., Any], axis_name: Hashable | None = None, *, in_axes: Any = 0,
         out_axes: Any = 0, devices: Sequence[Any] | None = None,
         static_broadcasted_argnums: int | Sequence[int] = (),
         donate_argnums: int | Sequence[int] = ()) -> "Pmapped":
    """Map ``fun`` over the leading axis of its arguments, one slice per device, running on
    every device at once (JAX's ``jax.pmap``).

    Parameters
    ----------
    fun : callable
        The per-device function; it may call the collectives (``psum``, ``pmean``,
        ``all_gather``, ...) with ``axis_name``.
    axis_name : hashable, optional
        Name of the mapped axis, for collectives inside ``fun``.
    in_axes : int, None or pytree, default 0
        An int (the mapped axis of every argument leaf; negative counts from the end of
        that leaf's rank) or None (broadcast), or a tuple with one entry per positional
        argument, each an int, None, or a pytree prefix of that argument (tuples, lists,
        dicts) with int/None leaves, as in JAX.
    out_axes : int, None or pytree, default 0
        Where the device axis goes in each result: an int ``k`` (negative counts from the
        end of the result's rank, which includes the device axis) gives a ``ShardedArray``
        equal to ``numpy.stack(per-device results, axis=k)``; None gives the first
        device's result (for replicated values, e.g. after ``psum``). A pytree prefix of
        the outputs (e.g. a tuple matching a tuple of results) sets it per result.
    devices : sequence of clnp.Device, optional
        The devices to run on, in order (across processes, entries of
        ``clnp_nn.parallel.devices()``); default: every device of the default device's
        platform (after ``initialize()``: every process's devices). Devices of different
        platforms may be mixed.
    static_broadcasted_argnums : int or sequence of int, default ()
        Positional arguments passed to ``fun`` as Python values (hashable; part of the
        compilation cache key), given to every device.
    donate_argnums : int or sequence of int, default ()
        Arguments whose buffers the caller gives up (accepted, as in ``jit``).

    Returns
    -------
    A callable; its results are ``ShardedArray`` (mapped outputs) or arrays
    (``out_axes=None``). ``grad``, ``jvp``, ``vjp``, ``vmap`` and ``jit`` apply to it (see
    docs/parallel.md); under them mapped results are clnp arrays on the first device.

    Raises
    ------
    ValueError
        a mapped argument's size along its axis differs from the local device count; bad
        ``in_axes``/``out_axes``; repeated or unknown devices.
    TypeError
        keyword arguments, unhashable static arguments, non-array leaves, ``in_axes`` or
        ``out_axes`` leaves that are neither int nor None.
    NotImplementedError
        a pmap inside another pmap's function (nested pmap).

    Examples
    --------
    >>> from clnp_nn.parallel import local_device_count, pmap, psum
    >>> n = local_device_count()                  # pmap's default devices
    >>> f = pmap(lambda x: psum(x, "i"), axis_name="i")
    >>> y = f(clnp.ones((n, 2)))                  # row k is computed on device k
    >>> type(y).__name__, y.shape == (n, 2)
    ('ShardedArray', True)
    >>> bool((numpy.asarray(y) == n).all())       # every device holds the sum over devices
    True

    On chosen devices (here the first one), with a broadcast argument:

    >>> devs = clnp.devices()[:1]
    >>> g = pmap(lambda x, s: x * s, in_axes=(0, None), devices=devs)
    >>> print(numpy.asarray(g(clnp.asarray([[1.0, 2.0]]), clnp.asarray(3.0))))
    [[3. 6.]]
    """
    if not callable(fun):
        raise TypeError(f"pmap: expected a function; got {type(fun).__name__}")
    norm = (lambda v: (v,) if isinstance(v, int) else tuple(v))  # noqa: E731
    return Pmapped(fun, axis_name, in_axes, out_axes, devices,
                   norm(static_broadcasted_argnums), norm(donate_argnums))


class _Plan:
    """A traced pmap body cut at its collectives, with executables per device."""

    def __init__(self, graph: Graph, who: Participants, trace_device: Device):
        self.graph, self.who = graph, who
        self.trace_device = trace_device
        for e in graph.eqns:
            inner = _nested_collective(e.params)
            if inner is not None:
                raise NotImplementedError(
                    f"pmap: the collective '{inner}' sits inside '{e.prim.name}' (a lax "
                    f"control-flow body); pmap exchanges data only between top-level "
                    f"equations. Move the collective out of the loop/branch (e.g. psum the "
                    f"loop's result), or unroll a static loop in Python")
        self.axis_index_vars = [e.out_binders[0] for e in graph.eqns
                                if e.prim.name == "axis_index"]
        body = [e for e in graph.eqns if e.prim.name != "axis_index"]
        self.steps: list[tuple[str, list]] = _schedule(body)   # ("seg"|"coll", eqns)
        needed_after: set[int] = {x.n for x in graph.outs if isinstance(x, Var)}
        info: list[Any] = [None] * len(self.steps)
        for i in range(len(self.steps) - 1, -1, -1):
            kind, eqns = self.steps[i]
            defined = {b.n for e in eqns for b in e.out_binders}
            ins: list[Var] = []
            seen: set[int] = set()
            for e in eqns:
                for x in e.inputs:
                    if isinstance(x, Var) and x.n not in defined and x.n not in seen and \
                            x.n not in graph.consts:
                        seen.add(x.n)
                        ins.append(x)
            outs = [b for e in eqns for b in e.out_binders if b.n in needed_after]
            info[i] = (ins, outs)
            needed_after |= {x.n for e in eqns for x in e.inputs if isinstance(x, Var)}
        self.info = info
        # values to drop after each step (their last use), so the pools reuse their memory
        last: dict[int, int] = {}
        for i, (kind, what) in enumerate(self.steps):
            for e in what:
                for x in e.inputs:
                    if isinstance(x, Var) and x.n not in graph.consts:
                        last[x.n] = i
        keep = {x.n for x in graph.outs if isinstance(x, Var)}
        self.free_after: list[list[int]] = [[] for _ in self.steps]
        for n, i in last.items():
            if n not in keep:
                self.free_after[i].append(n)
        self._exes: dict[tuple[int, Device], Executable] = {}
        self._consts: dict[Device, dict[int, Any]] = {}

    def consts_on(self, device: Device) -> dict[int, Any]:
        c = self._consts.get(device)
        if c is None:
            c = self._consts[device] = {
                n: (copy_to_device(v, device) if isinstance(v, Array) and v.device is not device
                    else v) for n, v in self.graph.consts.items()}
        return c

    def executable(self, i: int, device: Device) -> Executable:
        exe = self._exes.get((i, device))
        if exe is None:
            ins, outs = self.info[i]
            eqns = [_on_device(e, self.trace_device, device) for e in self.steps[i][1]]
            used = {x.n for e in eqns for x in e.inputs if isinstance(x, Var)}
            consts = {n: v for n, v in self.consts_on(device).items() if n in used}
            g = simplify(Graph(list(ins), eqns, list(outs), consts))
            exe = self._exes[(i, device)] = Executable(g, device)
        return exe

    def run(self, shard_args: list[list[Any]]) -> list[list[Any]]:
        """``shard_args[d]``: the flat arguments of local device ``d``; returns the flat
        outputs of each local device."""
        who, g = self.who, self.graph
        envs: list[dict[int, Any]] = []
        for d, (dev, args) in enumerate(zip(who.local, shard_args)):
            env = dict(self.consts_on(dev))
            env.update({v.n: a for v, a in zip(g.in_binders, args)})
            envs.append(env)
        if self.axis_index_vars:
            idx = axis_index_values(who)
            for env, a in zip(envs, idx):
                for v in self.axis_index_vars:
                    env[v.n] = a
        for i, (kind, what) in enumerate(self.steps):
            ins, outs = self.info[i]
            if kind == "seg":
                def segment(dev: Device, env: dict, i: int = i, ins: list = ins,
                            outs: list = outs) -> None:
                    res = self.executable(i, dev).run([env[v.n] for v in ins])
                    env.update({v.n: r for v, r in zip(outs, res)})
                    # submit now: a driver may hold enqueued work until the queue is
                    # flushed, and the host's first wait flushes only that device's queue
                    dev.queue.flush()
                _on_each_device(who.local, envs, segment)
            else:
                shard_lists = [[_read(env, e.inputs[0], dev) for e in what]
                               for env, dev in zip(envs, who.local)]
                res = collective_group([(e.prim.name, e.params) for e in what], shard_lists,
                                       who)
                for env, r in zip(envs, res):
                    env.update({e.out_binders[0].n: v for e, v in zip(what, r)})
            for env in envs:
                for n in self.free_after[i]:
                    env.pop(n, None)
        return [[_read(env, x, dev) for x in g.outs] for env, dev in zip(envs, who.local)]


_DISPATCH: ThreadPoolExecutor | None = None
_DISPATCH_SIZE = 0
_DISPATCH_LOCK = threading.Lock()


def _on_each_device(devices: Sequence[Device], envs: list[dict],
                    fn: Callable[[Device, dict], None]) -> None:
    """``fn(device, env)`` for every local device, each device's from a thread of its own
    where there are several: enqueueing a device's share can block until that device has
    caught up (NVIDIA's OpenCL driver), which from one thread would hold the other devices'
    work back (4 H200s, one process: the MLP step at 1.80x one device's throughput against
    3.61x so). Each runs in a copy of the caller's context (its interpreter, capture and
    axis state). The first exception is raised here, after every device's call returned."""
    global _DISPATCH, _DISPATCH_SIZE
    if len(devices) == 1:
        fn(devices[0], envs[0])
        return
    with _DISPATCH_LOCK:
        if _DISPATCH_SIZE < len(devices):
            if _DISPATCH is not None:
                _DISPATCH.shutdown(wait=False)      # its threads end once idle
            _DISPATCH_SIZE = max(len(devices), 4)
            from concurrent.futures import ThreadPoolExecutor   # 7 ms of import, first use
            _DISPATCH = ThreadPoolExecutor(max_workers=_DISPATCH_SIZE,
                                           thread_name_prefix="clnp-pmap")
        pool = _DISPATCH
    futures = [pool.submit(contextvars.copy_context().run, fn, dev, env)
               for dev, env in zip(devices, envs)]
    errors = [f.exception() for f in futures]
    for e in errors:
        if e is not None:
            raise e


def _schedule(body: list) -> list[tuple[str, list]]:
    """``body`` (topologically ordered equations) as alternating segments and groups of
    collectives: a value's *level* is the number of collectives on its longest path from the
    inputs; segment ``L`` holds the other equations of level ``L`` (in their order), group
    ``L`` the collectives whose operands have level ``L``. Collectives that do not depend on
    one another (a step's ``pmean`` of every gradient) so run as one group, with one host
    round trip, however the trace interleaved them with other work."""
    level: dict[int, int] = {}
    segs: dict[int, list] = {}
    colls: dict[int, list] = {}
    for e in body:
        lv = max((level.get(x.n, 0) for x in e.inputs if isinstance(x, Var)), default=0)
        if e.prim.name in COLLECTIVES:
            colls.setdefault(lv, []).append(e)
            lv += 1
        else:
            segs.setdefault(lv, []).append(e)
        for b in e.out_binders:
            level[b.n] = lv
    steps: list[tuple[str, list]] = []
    for lv in range(max(list(segs) + list(colls), default=-1) + 1):
        if lv in segs:
            steps.append(("seg", segs[lv]))
        if lv in colls:
            steps.append(("coll", colls[lv]))
    return steps


def _nested_collective(params: dict) -> str | None:
    """The name of a collective inside a sub-Graph among ``params`` (control flow), if any."""
    stack = list(params.values())
    while stack:
        v = stack.pop()
        if isinstance(v, Graph):
            for e in v.eqns:
                if e.prim.name in COLLECTIVES:
                    return e.prim.name
                stack.extend(e.params.values())
        elif isinstance(v, (tuple, list)):
            stack.extend(v)
    return None


def _read(env: dict, x: Any, device: Device) -> Any:
    if isinstance(x, Lit):
        return clnp.asarray(x.value, device=device)
    return env[x.n]


def _on_device(e: Any, src: Device, dst: Device) -> Any:
    """Equation ``e`` with every ``device`` parameter naming ``src`` moved to ``dst``."""
    if src is dst or not any(v is src for v in e.params.values()):
        return e
    from clnp_grad._ir import Eqn
    params = {k: (dst if v is src else v) for k, v in e.params.items()}
    return Eqn(e.prim, e.inputs, params, e.out_binders)


class _UnnamedAxis:
    """The axis name of a pmap given no ``axis_name``: user code cannot name it, but the
    derived programs (a VJP's sum over devices, its masks) need one to bind collectives."""
    __slots__ = ()

    def __repr__(self) -> str:
        return "<unnamed pmap axis>"


def _participants_of(glob: Sequence[Any]) -> Participants:
    """The participants of a pmap over the global device list ``glob``: this process's
    devices among them, their global indices, and the devices per process."""
    if not glob:
        raise ValueError("pmap: devices is empty")
    me = mpi.process_index()
    local, ids, counts = [], [], []
    seen: set[int] = set()
    for i, d in enumerate(glob):
        if isinstance(d, mpi.RemoteDevice):
            p = d.process_index
        elif isinstance(d, Device):
            p = me
        else:
            raise TypeError(f"pmap: devices must be clnp.Device objects (or entries of "
                            f"clnp_nn.parallel.devices()); got {type(d).__name__}")
        if id(d) in seen:
            raise ValueError(f"pmap: device {d} appears twice in devices")
        seen.add(id(d))
        while len(counts) <= p:
            counts.append(0)
        counts[p] += 1
        if p == me:
            local.append(d)
            ids.append(i)
    if not local:
        raise ValueError(f"pmap: none of the devices belongs to process {me}")
    order = [(d.process_index if isinstance(d, mpi.RemoteDevice) else me) for d in glob]
    if order != sorted(order):
        raise ValueError("pmap: devices must be grouped by process in process order (as "
                         "clnp_nn.parallel.devices() lists them)")
    if len(counts) > 1 and (len(counts) != mpi.process_count() or not all(counts)):
        raise ValueError(f"pmap: a pmap across processes must include devices of every "
                         f"process (devices per process here: {counts}, processes: "
                         f"{mpi.process_count()})")
    return Participants(tuple(glob), local, ids, counts if len(counts) > 1 else [len(local)])


# ------------------------------------------------------------------ in_axes / out_axes trees
def _check_axes_spec(spec: Any, what: str) -> None:
    """``spec`` is an int, None, or tuples/lists/dicts of them (a pytree prefix)."""
    def rec(p: Any) -> None:
        if p is None or (isinstance(p, int) and not isinstance(p, bool)):
            return
        if isinstance(p, (tuple, list)):
            for c in p:
                rec(c)
            return
        if isinstance(p, dict):
            for c in p.values():
                rec(c)
            return
        raise TypeError(f"pmap: {what} must be an int, None, or a pytree prefix (tuples, lists, "
                        f"dicts) of ints and None, one entry per positional argument at the top "
                        f"level; got {spec!r} (a {type(p).__name__} entry)")
    rec(spec)


def _prefix_axes(spec: Any, tdef: PyTreeDef, what: str, name: str) -> list[Any]:
    """The axis of every leaf of the tree ``tdef`` from ``spec``, a pytree prefix of it: an
    int or None applies to every leaf below it (JAX's in_axes/out_axes prefixes)."""
    out: list[Any] = []

    def rec(p: Any, td: PyTreeDef) -> None:
        if p is None or isinstance(p, int):
            out.extend([p] * td.num_leaves)
            return
        kids = list(p) if isinstance(p, (tuple, list)) else None
        if isinstance(p, dict):
            keys = tuple(sorted(p))
            if td.kind is dict and td.aux == keys:
                kids = [p[k] for k in keys]
            else:
                kids = None
        elif kids is not None and not (td.kind in (tuple, list) or (
                isinstance(td.kind, type) and issubclass(td.kind, tuple))):
            kids = None
        if kids is None or len(kids) != len(td.children):
            raise ValueError(f"pmap({name}): {what} {spec!r} is not a pytree prefix of the "
                             f"structure {tdef!r}: {p!r} does not match {td!r}")
        for c, t in zip(kids, td.children):
            rec(c, t)
    rec(spec, tdef)
    return out


def _normal_axis(ax: Any, rank: int, what: str, name: str) -> Any:
    """``ax`` (None or an int in ``[-rank, rank)``) made non-negative."""
    if ax is None:
        return None
    if not -rank <= ax < rank:
        raise ValueError(f"pmap({name}): {what} {ax} is out of range for rank {rank}")
    return ax % rank


class Pmapped:
    """A function mapped by ``pmap``: call it like the original on stacked arguments."""

    def __init__(self, fun: Callable[..., Any], axis_name: Hashable | None, in_axes: Any,
                 out_axes: Any, devices: Sequence[Any] | None,
                 static_argnums: tuple[int, ...], donate_argnums: tuple[int, ...]):
        self.fun, self.axis_name = fun, axis_name
        self.in_axes, self.out_axes = in_axes, out_axes
        self.devices = None if devices is None else tuple(devices)
        self.static_argnums, self.donate_argnums = static_argnums, donate_argnums
        self._axis = axis_name if axis_name is not None else _UnnamedAxis()
        self._cache: OrderedDict[Any, tuple[Graph, Any, tuple]] = OrderedDict()
        # name and docstring only: copying ``fun.__dict__`` would let a callable object's
        # attributes (a jit's ``fun``, ``_cache``) replace this object's own
        functools.update_wrapper(self, fun, updated=())
        _check_axes_spec(in_axes, "in_axes")
        _check_axes_spec(out_axes, "out_axes")

    def __repr__(self) -> str:
        return f"<pmap {getattr(self.fun, '__name__', 'function')}>"

    def _participants(self) -> Participants:
        return _participants_of(self.devices if self.devices is not None else mpi.devices())

    def _leaf_axes(self, args: tuple, dyn: list[int], name: str) -> list[tuple]:
        """(argnum, leaves, treedef, axis per leaf) of each dynamic positional argument."""
        ia, n = self.in_axes, len(args)
        if isinstance(ia, (tuple, list)) and len(ia) != n:
            raise ValueError(f"pmap({name}): in_axes has {len(ia)} entries for {n} positional "
                             f"arguments")
        out = []
        for i in dyn:
            leaves, tdef = tree_flatten(args[i])
            spec = ia[i] if isinstance(ia, (tuple, list)) else ia
            out.append((i, leaves, tdef, _prefix_axes(spec, tdef, f"in_axes entry {i}", name)))
        return out

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the mapped function once per participating device: each argument is split along
        its ``in_axes`` (one slice per device), and the results are stacked along ``out_axes``.

        Parameters
        ----------
        *args : pytrees of arrays
            Positional arguments only; a mapped leaf has the number of devices as the size of its
            mapped axis, an ``in_axes`` of None broadcasts it, ``static_broadcasted_argnums``
            entries are passed as they are (and must be hashable).
        **kwargs
            Not accepted (keyword arguments have no ``in_axes``): pass arguments positionally.

        Returns
        -------
        pytree
            The function's outputs: ``ShardedArray`` leaves (one shard per device, the device
            axis at the output's ``out_axes``) for mapped outputs, the first device's value for
            ``out_axes=None``. Under a transformation (``grad``, ``jvp``, ``vmap``, ``jit``),
            mapped outputs are clnp arrays on the first device (the shards stacked).

        Raises
        ------
        TypeError
            Keyword arguments, an unhashable static argument, or a leaf that is neither an array
            nor a number.
        ValueError
            A mapped axis whose size is not the number of devices, an axis out of range, a
            scalar mapped argument, or ``in_axes``/``out_axes`` that are not a prefix of the
            arguments/outputs.
        NotImplementedError
            A pmap called inside another pmap's function (nested pmap).

        Examples
        --------
        >>> import numpy, clnp
        >>> from clnp_nn.parallel import local_device_count, pmap
        >>> n = local_device_count()
        >>> f = pmap(lambda x, w: x * w, in_axes=(0, None))
        >>> y = f(clnp.ones((n, 2), dtype=clnp.float32), clnp.asarray(3.0, dtype=clnp.float32))
        >>> print(numpy.asarray(y)[0])
        [3. 3.]
        """
        name = getattr(self.fun, "__name__", "function")
        if kwargs:
            raise TypeError(f"pmap({name}): pass arguments positionally (keyword arguments "
                            f"{sorted(kwargs)} have no in_axes)")
        if _STAGING.get():
            raise NotImplementedError(
                f"pmap({name}) was called inside another pmap's function (nested pmap); "
                f"pmap maps over devices once: use vmap(..., axis_name=...) for the inner axis")
        who = self._participants()
        n = len(args)
        snums = set()
        for i in self.static_argnums:
            if not -n <= i < n:
                raise ValueError(f"pmap({name}): static_broadcasted_argnums {i} is out of range "
                                 f"for {n} positional arguments")
            snums.add(i % n)
        statics = []
        for i in sorted(snums):
            try:
                hash(args[i])
            except TypeError:
                raise TypeError(f"pmap({name}): static argument {i} must be hashable; got "
                                f"{type(args[i]).__name__}") from None
            statics.append((i, args[i]))
        dyn = [i for i in range(n) if i not in snums]
        per_arg = self._leaf_axes(args, dyn, name)
        traced = current_interpreter() is not EVAL or any(
            isinstance(x, Tracer) for _, leaves, _, _ in per_arg for x in leaves)
        if traced:
            return self._bind(args, statics, per_arg, who, name)
        per_dev: list[list[Any]] = [[] for _ in who.local]
        sig_leaves, weak = [], []
        for i, leaves, _, axes in per_arg:
            for leaf, ax in zip(leaves, axes):
                shards, s, w, ax = _shard_leaf(leaf, ax, who.local, i, name)
                for lst, sh in zip(per_dev, shards):
                    lst.append(sh)
                sig_leaves.append((s, ax))
                weak.append(w)
        graph, out_def, out_axes = self._lookup(args, statics, per_arg, sig_leaves, per_dev[0],
                                                weak, who, name)
        outs = _plan_for(graph, who).run(per_dev)
        return tree_unflatten(out_def, _assemble(outs, out_axes, who,
                                                 keep=range(len(out_axes))))

    def _bind(self, args: tuple, statics: list, per_arg: list, who: Participants,
              name: str) -> Any:
        """The call under a transformation: the ``pmap`` primitive, whose rules transform
        the per-device program (``rules``)."""
        dev0 = who.local[0]
        staging = _under_staging(current_interpreter())
        vals, examples, sig_leaves, weak, flat_axes = [], [], [], [], []
        for i, leaves, _, axes in per_arg:
            for leaf, ax in zip(leaves, axes):
                w = isinstance(leaf, (bool, int, float, complex))
                if w:
                    if ax is not None:
                        raise ValueError(f"pmap({name}): argument {i} is a scalar and cannot be "
                                         f"mapped over devices; use in_axes=None for it")
                    with set_interpreter(EVAL):
                        v = clnp.asarray(leaf, dtype=weak_dtype(leaf), device=dev0)
                elif isinstance(leaf, ShardedArray):
                    # kept in place for the eager implementation; a staged program holds
                    # plain arrays only
                    v = upload(leaf.to_numpy(), dev0, owned=True) if staging else leaf
                elif isinstance(leaf, (Tracer, Array)):
                    v = leaf
                else:
                    v = upload(_host(leaf, i, name), dev0)
                shape = tuple(v.shape)
                if ax is not None:
                    if not shape:
                        raise ValueError(f"pmap({name}): argument {i} is a scalar and cannot be "
                                         f"mapped over devices; use in_axes=None for it")
                    ax = _normal_axis(ax, len(shape), f"in_axes of argument {i} (shape "
                                                      f"{shape})", name)
                    _check_size(shape, ax, who.local, i, name)
                    shape = shape[:ax] + shape[ax + 1:]
                vals.append(v)
                flat_axes.append(ax)
                # a weakly typed traced value (a Python scalar jit traced) stays weak
                weak.append(w or bool(getattr(leaf, "weak_type", False)))
                sig_leaves.append(((("weak", type(leaf)) if w else
                                    (shape, v.dtype, weak[-1])), ax))
                with set_interpreter(EVAL):      # concrete, whatever interpreter is current
                    examples.append(clnp.zeros(shape, dtype=v.dtype, device=dev0))
        graph, out_def, out_axes = self._lookup(args, statics, per_arg, sig_leaves, examples,
                                                weak, who, name)
        outs = pmap_p.bind(*vals, graph=graph, in_axes=tuple(flat_axes), out_axes=out_axes,
                           axis_name=self._axis, devices=who.global_devices, name=name)
        return tree_unflatten(out_def, list(outs))

    def _lookup(self, args: tuple, statics: list, per_arg: list, sig_leaves: list,
                dev0_args: list, weak: list, who: Participants, name: str
                ) -> tuple[Graph, Any, tuple]:
        tdefs = tuple((i, tdef) for i, _, tdef, _ in per_arg)
        sig = (tdefs, tuple(statics), tuple(sig_leaves), who.global_devices, tuple(who.local))
        entry = self._cache.get(sig)
        if entry is None:
            entry = self._trace(args, statics, per_arg, dev0_args, weak, who, name)
            if len(self._cache) >= _CACHE_SIZE:
                self._cache.popitem(last=False)
            self._cache[sig] = entry
        else:
            self._cache.move_to_end(sig)
        return entry

    def _trace(self, args: tuple, statics: list, per_arg: list, dev0_args: list,
               weak: list, who: Participants, name: str) -> tuple[Graph, Any, tuple]:
        n = len(args)
        static_map = dict(statics)

        def rebuild(flat: list) -> tuple[tuple, dict]:
            it = iter(flat)
            full: list[Any] = [None] * n
            for i, leaves, tdef, _ in per_arg:
                full[i] = tree_unflatten(tdef, [next(it) for _ in leaves])
            for i, v in static_map.items():
                full[i] = v
            return tuple(full), {}
        graph, out_def = _stage_body(self.fun, dev0_args, weak, rebuild, self._axis, who,
                                    name)
        axes = _prefix_axes(self.out_axes, out_def, "out_axes", name)
        out_axes = tuple(_normal_axis(ax, len(_aval(o).shape) + 1, f"out_axes entry {ax} of "
                                      f"output {j} (per-device shape {_aval(o).shape})", name)
                         for j, (ax, o) in enumerate(zip(axes, graph.outs)))
        return graph, out_def, out_axes


def _aval(x: Any) -> Aval:
    """The abstract value of a graph output (a Var, or a Python scalar literal)."""
    if isinstance(x, Lit):
        return Aval((), np.dtype(weak_dtype(x.value)))
    return x.aval


def _stage_body(fn: Callable[..., Any], examples: Sequence[Any], weak: Sequence[bool],
               rebuild: Callable[[list], tuple[tuple, dict]], axis_name: Hashable,
               who: Participants, name: str) -> tuple[Graph, Any]:
    """Stage the per-device function ``fn`` on ``examples`` (values of one device's shapes,
    on the first local device) with the mapped axis bound, so collectives are recorded."""
    token = _STAGING.set(True)
    try:
        with axis_frame(axis_name, len(who.global_devices), "pmap"), \
                _default_device(who.local[0]), set_interpreter(EVAL):
            try:
                return stage(fn, list(examples), list(weak), rebuild)
            except RuntimeError as e:
                if "traced value reached eager evaluation" not in str(e):
                    raise
                raise TypeError(
                    f"pmap({name}): the mapped function closes over a value traced by an "
                    f"enclosing transformation (grad/jvp/vmap/jit); pass it as an argument "
                    f"(in_axes=None to broadcast it) instead ({e})") from None
    finally:
        _STAGING.reset(token)


def _plan_for(graph: Graph, who: Participants) -> _Plan:
    """The (cached) per-device executables of ``graph`` for these participants."""
    plans = graph.__dict__.setdefault("_pmap_plans", {})
    key = (who.global_devices, tuple(who.local))
    plan = plans.get(key)
    if plan is None:
        plan = plans[key] = _Plan(graph, who, who.local[0])
    return plan


def _check_size(shape: tuple, a: int, local: Sequence[Device], argnum: int, name: str) -> None:
    n = len(local)
    if shape[a] != n:
        raise ValueError(f"pmap({name}): argument {argnum} has size {shape[a]} along its mapped "
                         f"axis {a} (shape {shape}), but pmap runs on {n} local device(s) "
                         f"({', '.join(d.key for d in local)}); the mapped axis must have one "
                         f"entry per device")


def _assemble(outs: list[list[Any]], out_axes: Sequence[Any], who: Participants,
              keep: Any = ()) -> list[Any]:
    """The flat results from each device's flat outputs: the first device's value where the
    axis is None, a ``ShardedArray`` for mapped outputs in ``keep``, else the shards stacked
    along the axis into one array on the first local device."""
    keep = set(keep)
    dev0 = who.local[0]
    res = []
    for j, ax in enumerate(out_axes):
        shards = [o[j] for o in outs]
        if j in keep:
            res.append(shards[0] if ax is None else
                       ShardedArray(shards, who.local, shard_axis=ax))
            continue
        with set_interpreter(EVAL):
            r = shards[0] if ax is None else clnp.stack(
                [s if s.device is dev0 else copy_to_device(s, dev0) for s in shards], axis=ax)
            # a compiled caller (jit) fixes every layout when it is built: C-contiguous
            if r._offset != 0 or not r.is_contiguous:
                r = contiguous_copy(r)
        res.append(r)
    return res


# ------------------------------------------------------------------ the pmap primitive
pmap_p = primitive("pmap", multiple_results=True)


@def_impl("pmap")
def _pmap_impl(*args: Any, graph: Graph, in_axes: tuple, out_axes: tuple,
               axis_name: Hashable, devices: tuple, name: str, keep: tuple = ()) -> list[Any]:
    """Run the per-device ``graph`` on every device: ``args`` split along ``in_axes``
    (None: copied to every device), results stacked along ``out_axes`` (None: the first
    device's) on the first local device, or kept as ShardedArray where listed in ``keep``."""
    # host-driven (it waits inside collectives and runs on several queues): a jit step
    # calls it each time instead of replaying its launches
    _hooks.note_readback()
    who = _participants_of(devices)
    per_dev: list[list[Any]] = [[] for _ in who.local]
    for k, (leaf, ax) in enumerate(zip(args, in_axes)):
        shards = _shard_leaf(leaf, ax, who.local, k, name)[0]
        for lst, sh in zip(per_dev, shards):
            lst.append(sh)
    outs = _plan_for(graph, who).run(per_dev)
    return _assemble(outs, out_axes, who, keep)


@contextmanager
def _default_device(device: Device) -> Iterator[None]:
    """The traced device is the default while ``fun`` is traced, so creation ops inside it
    (``clnp.ones``, ``arange``) land beside its shards and are recorded with that device,
    which each device's executable then replaces with its own."""
    prev = clnp.default_device()
    clnp.set_default_device(device)
    try:
        yield
    finally:
        clnp.set_default_device(prev)


def _shard_leaf(leaf: Any, ax: Any, local: Sequence[Device], argnum: int, name: str
                ) -> tuple[list[Any], Any, bool, Any]:
    """The per-device values of one argument leaf, its signature, weak-type flag and its
    mapped axis made non-negative."""
    if ax is None:
        if isinstance(leaf, (bool, int, float, complex)):
            return ([clnp.asarray(leaf, dtype=weak_dtype(leaf), device=d) for d in local],
                    ("weak", type(leaf)), True, None)
        if isinstance(leaf, ShardedArray):     # broadcast: every device gets all of it
            leaf = upload(leaf.to_numpy(), local[0], owned=True)
        if isinstance(leaf, Array):
            return ([leaf if leaf.device is d else copy_to_device(leaf, d) for d in local],
                    (tuple(leaf.shape), leaf.dtype), False, None)
        host = _host(leaf, argnum, name)
        return [upload(host, d) for d in local], (host.shape, host.dtype), False, None
    n = len(local)
    shape = tuple(getattr(leaf, "shape", np.shape(leaf)))
    if len(shape) == 0:
        raise ValueError(f"pmap({name}): argument {argnum} is a scalar and cannot be mapped "
                         f"over devices; use in_axes=None for it")
    a = _normal_axis(ax, len(shape), f"in_axes {ax} of argument {argnum} (shape {shape})",
                     name)
    if isinstance(leaf, ShardedArray) and a == leaf.shard_axis and \
            leaf.devices == tuple(local):
        s = leaf.shards[0]
        return list(leaf.shards), (tuple(s.shape), s.dtype), False, a
    _check_size(shape, a, local, argnum, name)
    if isinstance(leaf, ShardedArray):
        host = leaf.to_numpy()
    elif isinstance(leaf, Array):
        host = start_read(leaf).wait()
    else:
        host = _host(leaf, argnum, name)
    parts = [np.ascontiguousarray(np.take(host, i, axis=a)) for i in range(n)]
    return ([upload(p, d, owned=True) for p, d in zip(parts, local)],
            (parts[0].shape, parts[0].dtype), False, a)


def _host(leaf: Any, argnum: int, name: str) -> np.ndarray:
    try:
        host = np.asarray(leaf)
    except Exception as e:  # noqa: BLE001
        raise TypeError(f"pmap({name}): argument {argnum} has a {type(leaf).__name__} leaf; "
                        f"leaves must be arrays ({e})") from None
    if host.dtype == object:
        raise TypeError(f"pmap({name}): argument {argnum} has a {type(leaf).__name__} leaf; "
                        f"leaves must be arrays")
    if host.dtype == np.float64 and not isinstance(leaf, np.ndarray):
        host = host.astype(clnp.default_device().default_float)
    return host


__all__ = ["pmap", "Pmapped"]
