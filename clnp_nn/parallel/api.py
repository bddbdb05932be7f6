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
4. Mapped outputs come back as a ``ShardedArray`` (``out_axes=0``); ``out_axes=None``
   outputs are taken from the first device (they must be replicated, e.g. after ``psum``).

Across processes (``mpi.initialize()``), the default device list is the global one: each
process passes the shards of its own devices (leading axis = its local device count), and
collectives combine across processes.
"""
from __future__ import annotations

import functools
from contextlib import contextmanager, nullcontext
from collections import OrderedDict
from typing import Any, Callable, Hashable, Iterator, Sequence

import numpy as np

import clnp
from clnp._array import Array
from clnp._prims import EVAL, current_interpreter, set_interpreter
from clnp._runtime import Device
from clnp._transfer import copy_to_device, start_read, upload
from clnp_grad._collectives import COLLECTIVES, axis_frame
from clnp_grad._core import Tracer
from clnp_grad._ir import Graph, Lit, Var
from clnp_grad._jit.executable import Executable, weak_dtype
from clnp_grad._jit.staging import simplify, stage
from clnp_grad._tree import tree_flatten, tree_unflatten

from . import mpi
from .sharded import ShardedArray
from .transport import Participants, axis_index_values, collective_group

_CACHE_SIZE = 64


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
    in_axes : int, None or tuple, default 0
        An int (the mapped axis of every argument) or None (broadcast), or a tuple with
        one such entry per positional argument.
    out_axes : 0, None or tuple, default 0
        0 (results are ``ShardedArray`` with the device axis first) or None (the result of
        the first device, for replicated values); or a tuple per output leaf.
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
    A callable; its results are ``ShardedArray`` (``out_axes=0``) or arrays.

    Raises
    ------
    ValueError
        a mapped argument's size along its axis differs from the local device count; bad
        ``in_axes``/``out_axes``; repeated or unknown devices.
    TypeError
        keyword arguments, unhashable static arguments, non-array leaves.

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

    def __init__(self, graph: Graph, out_def: Any, who: Participants, trace_device: Device):
        self.graph, self.out_def, self.who = graph, out_def, who
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
                for dev, env in zip(who.local, envs):     # enqueue on every device first
                    res = self.executable(i, dev).run([env[v.n] for v in ins])
                    env.update({v.n: r for v, r in zip(outs, res)})
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


class Pmapped:
    """A function mapped by ``pmap``: call it like the original on stacked arguments."""

    def __init__(self, fun: Callable[..., Any], axis_name: Hashable | None, in_axes: Any,
                 out_axes: Any, devices: Sequence[Any] | None,
                 static_argnums: tuple[int, ...], donate_argnums: tuple[int, ...]):
        self.fun, self.axis_name = fun, axis_name
        self.in_axes, self.out_axes = in_axes, out_axes
        self.devices = None if devices is None else tuple(devices)
        self.static_argnums, self.donate_argnums = static_argnums, donate_argnums
        self._cache: OrderedDict[Any, _Plan] = OrderedDict()
        functools.update_wrapper(self, fun)
        entries = tuple(in_axes) if isinstance(in_axes, (tuple, list)) else (in_axes,)
        for a in entries:
            if not (a is None or isinstance(a, int)) or isinstance(a, bool):
                raise TypeError(f"pmap: in_axes must be an int, None, or a tuple of one int or "
                                f"None per positional argument (applied to every leaf of that "
                                f"argument); got {in_axes!r}")

    def __repr__(self) -> str:
        return f"<pmap {getattr(self.fun, '__name__', 'function')}>"

    # -- devices
    def _participants(self) -> Participants:
        glob = self.devices if self.devices is not None else mpi.devices()
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
        return Participants(glob, local, ids, counts if len(counts) > 1 else [len(local)])

    # -- arguments
    def _axes(self, n_args: int) -> tuple:
        ia = self.in_axes
        if isinstance(ia, (tuple, list)):
            if len(ia) != n_args:
                raise ValueError(f"pmap: in_axes has {len(ia)} entries for {n_args} positional "
                                 f"arguments")
            return tuple(ia)
        return (ia,) * n_args

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
            The function's outputs: ``ShardedArray`` leaves (one shard per device) for
            ``out_axes=0``, the first device's value for ``out_axes=None``.

        Raises
        ------
        TypeError
            Keyword arguments, an unhashable static argument, or a leaf that is neither an array
            nor a number.
        ValueError
            A mapped axis whose size is not the number of devices, an axis out of range, a
            scalar mapped argument, or ``in_axes``/``out_axes`` of the wrong length.
        NotImplementedError
            A call under a transformation (apply ``grad``/``vmap``/``jit`` inside the mapped
            function instead), or an ``out_axes`` other than 0 and None.

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
        if current_interpreter() is not EVAL or any(
                isinstance(x, Tracer) for x in tree_flatten(list(args))[0]):
            raise NotImplementedError(
                f"pmap({name}) was called under a transformation (grad/vmap/jit); apply the "
                f"transformation inside the mapped function instead, e.g. "
                f"pmap(value_and_grad(loss)), and combine with pmean")
        who = self._participants()
        n_local = len(who.local)
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
        axes = self._axes(n)
        dyn = [i for i in range(n) if i not in snums]
        leaves_per_arg = []
        for i in dyn:
            leaves, tdef = tree_flatten(args[i])
            leaves_per_arg.append((i, leaves, tdef, axes[i]))
        per_dev: list[list[Any]] = [[] for _ in range(n_local)]
        sig_leaves, weak = [], []
        for i, leaves, tdef, ax in leaves_per_arg:
            for leaf in leaves:
                shards, s, w = _shard_leaf(leaf, ax, who.local, i, name)
                for lst, sh in zip(per_dev, shards):
                    lst.append(sh)
                sig_leaves.append((s, ax))
                weak.append(w)
        tdefs = tuple((i, tdef) for i, _, tdef, _ in leaves_per_arg)
        sig = (tdefs, tuple(statics), tuple(sig_leaves), who.global_devices, who.local,
               self.axis_name)
        plan = self._cache.get(sig)
        if plan is None:
            plan = self._trace(args, statics, leaves_per_arg, per_dev[0], weak, who)
            if len(self._cache) >= _CACHE_SIZE:
                self._cache.popitem(last=False)
            self._cache[sig] = plan
        else:
            self._cache.move_to_end(sig)
        outs = plan.run(per_dev)
        return self._assemble(plan, outs, who)

    def _trace(self, args: tuple, statics: list, leaves_per_arg: list, dev0_args: list,
               weak: list, who: Participants) -> _Plan:
        n = len(args)
        static_map = dict(statics)

        def rebuild(flat: list) -> tuple[tuple, dict]:
            it = iter(flat)
            full: list[Any] = [None] * n
            for i, leaves, tdef, _ in leaves_per_arg:
                full[i] = tree_unflatten(tdef, [next(it) for _ in leaves])
            for i, v in static_map.items():
                full[i] = v
            return tuple(full), {}
        frame = axis_frame(self.axis_name, len(who.global_devices), "pmap") \
            if self.axis_name is not None else nullcontext()
        with frame, _default_device(who.local[0]), set_interpreter(EVAL):
            graph, out_def = stage(self.fun, dev0_args, weak, rebuild)
        return _Plan(graph, out_def, who, who.local[0])

    def _assemble(self, plan: _Plan, outs: list[list[Any]], who: Participants) -> Any:
        n_out = len(outs[0])
        oa = self.out_axes
        oaxes = tuple(oa) if isinstance(oa, (tuple, list)) else (oa,) * n_out
        if len(oaxes) != n_out:
            raise ValueError(f"pmap: out_axes has {len(oaxes)} entries for {n_out} outputs")
        res = []
        for j, ax in enumerate(oaxes):
            shards = [o[j] for o in outs]
            if ax is None:
                res.append(shards[0])
            elif ax == 0:
                res.append(ShardedArray(shards, who.local))
            else:
                raise NotImplementedError(f"pmap: out_axes={ax!r}; only 0 and None are "
                                          f"supported (move the axis afterwards)")
        return tree_unflatten(plan.out_def, res)


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
                ) -> tuple[list[Any], Any, bool]:
    """The per-device values of one argument leaf, its signature and weak-type flag."""
    n = len(local)
    if ax is None:
        if isinstance(leaf, (bool, int, float, complex)):
            return ([clnp.asarray(leaf, dtype=weak_dtype(leaf), device=d) for d in local],
                    ("weak", type(leaf)), True)
        if isinstance(leaf, ShardedArray):
            leaf = leaf.shards[0]
        if isinstance(leaf, Array):
            return ([leaf if leaf.device is d else copy_to_device(leaf, d) for d in local],
                    (tuple(leaf.shape), leaf.dtype), False)
        host = _host(leaf, argnum, name)
        return ([upload(host, d) for d in local], (host.shape, host.dtype), False)
    if isinstance(leaf, ShardedArray) and ax == 0 and leaf.devices == tuple(local):
        s = leaf.shards[0]
        return list(leaf.shards), (tuple(s.shape), s.dtype), False
    shape = tuple(getattr(leaf, "shape", np.shape(leaf)))
    if len(shape) == 0:
        raise ValueError(f"pmap({name}): argument {argnum} is a scalar and cannot be mapped "
                         f"over devices; use in_axes=None for it")
    if not -len(shape) <= ax < len(shape):
        raise ValueError(f"pmap({name}): in_axes {ax} is out of range for argument {argnum} of "
                         f"shape {shape}")
    a = ax % len(shape)
    if shape[a] != n:
        raise ValueError(f"pmap({name}): argument {argnum} has size {shape[a]} along its mapped "
                         f"axis {a} (shape {shape}), but pmap runs on {n} local device(s) "
                         f"({', '.join(d.key for d in local)}); the mapped axis must have one "
                         f"entry per device")
    if isinstance(leaf, ShardedArray):
        leaf = leaf.to_numpy()
    if isinstance(leaf, Array):
        host = start_read(leaf).wait()
    else:
        host = _host(leaf, argnum, name)
    parts = [np.ascontiguousarray(np.take(host, i, axis=a)) for i in range(n)]
    return ([upload(p, d, owned=True) for p, d in zip(parts, local)],
            (parts[0].shape, parts[0].dtype), False)


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
