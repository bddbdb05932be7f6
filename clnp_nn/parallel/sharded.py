"""``ShardedArray``: a pmap result, one shard per local device, stacked along one axis.

The device axis is ``shard_axis`` (pmap's ``out_axes``: 0 by default). The shards stay on
their devices; ``numpy.asarray``, ``clnp.asarray``, ``to_numpy`` and slicing across shards
gather them (the reads of all shards are enqueued before any wait). With the device axis
first, indexing it with an integer returns that shard itself, on its device. Passing a
ShardedArray back to a pmap over the same devices, mapped along its ``shard_axis``, uses the
shards where they are.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from clnp._core.array import Array
from clnp._runtime.device import Device
from clnp._core.transfer import start_read


class ShardedArray:
    """Shards ``shards[i]`` (on ``devices[i]``, all of one shape and dtype) seen as one array:
    the shards stacked along ``shard_axis`` (``numpy.stack(shards, axis=shard_axis)``), so of
    shape ``shard shape[:shard_axis] + (len(shards),) + shard shape[shard_axis:]``.

    Parameters
    ----------
    shards : sequence of clnp arrays
        One per device, all of one shape and dtype.
    devices : sequence of clnp.Device, optional
        The shards' devices (checked); default: each shard's own.
    shard_axis : int, default 0
        Where the device axis sits in the stacked array (pmap's ``out_axes``); negative
        values count from the end of the stacked array's rank.

    Raises
    ------
    ValueError
        No shards, shards of different shapes or dtypes, a shard not on its device, or
        ``shard_axis`` out of range.
    TypeError
        A shard is not a clnp array.

    Examples
    --------
    >>> from clnp_nn.parallel import local_device_count, pmap
    >>> n = local_device_count()
    >>> y = pmap(lambda x: x * 2)(clnp.ones((n, 2)))     # one row per device
    >>> type(y).__name__, y.shape == (n, 2), len(y.shards) == len(y.devices) == n
    ('ShardedArray', True, True)
    >>> y[0].device is y.devices[0]                      # an int index: that shard, in place
    True
    >>> print(numpy.asarray(y)[0])                       # gathered on the host
    [2. 2.]

    With ``out_axes=1`` the device axis is the second one:

    >>> z = pmap(lambda x: x * 2, out_axes=1)(clnp.ones((n, 2)))
    >>> z.shard_axis, z.shape == (2, n), z.shards[0].shape
    (1, True, (2,))
    """

    __array_priority__ = 150

    def __init__(self, shards: Sequence[Array], devices: Sequence[Device] | None = None,
                 shard_axis: int = 0):
        shards = list(shards)
        if not shards:
            raise ValueError("ShardedArray: needs at least one shard")
        s0 = shards[0]
        for i, s in enumerate(shards):
            if not isinstance(s, Array):
                raise TypeError(f"ShardedArray: shard {i} is a {type(s).__name__}, not a clnp "
                                f"array")
            if tuple(s.shape) != tuple(s0.shape) or s.dtype != s0.dtype:
                raise ValueError(f"ShardedArray: shard {i} is {s.dtype}{list(s.shape)}, shard 0 "
                                 f"{s0.dtype}{list(s0.shape)}")
        devs = tuple(s.device for s in shards) if devices is None else tuple(devices)
        if len(devs) != len(shards) or any(s.device is not d for s, d in zip(shards, devs)):
            raise ValueError("ShardedArray: each shard must live on its device")
        rank = len(s0.shape) + 1
        if isinstance(shard_axis, bool) or not isinstance(shard_axis, (int, np.integer)) or \
                not -rank <= shard_axis < rank:
            raise ValueError(f"ShardedArray: shard_axis {shard_axis!r} is out of range for "
                             f"shards of shape {tuple(s0.shape)} (stacked rank {rank})")
        self._shards = tuple(shards)
        self._devices = devs
        self._axis = int(shard_axis) % rank

    # ---------------------------------------------------------------- attributes
    @property
    def shards(self) -> tuple[Array, ...]:
        """The per-device arrays, in device order."""
        return self._shards

    addressable_shards = shards

    @property
    def devices(self) -> tuple[Device, ...]:
        return self._devices

    @property
    def shard_axis(self) -> int:
        """The axis of the stacked array that indexes the devices (non-negative)."""
        return self._axis

    @property
    def shape(self) -> tuple[int, ...]:
        s = tuple(self._shards[0].shape)
        return s[:self._axis] + (len(self._shards),) + s[self._axis:]

    @property
    def dtype(self) -> np.dtype:
        return self._shards[0].dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return len(self._shards) * self._shards[0].size

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def __len__(self) -> int:
        return self.shape[0]

    def __iter__(self):
        """The shards themselves when the device axis is first, else the gathered rows."""
        if self._axis == 0:
            return iter(self._shards)
        import clnp
        return iter(clnp.asarray(self.to_numpy()))     # one gather, then its rows

    # ---------------------------------------------------------------- gathering
    def to_numpy(self) -> np.ndarray:
        """All shards stacked in host memory (the copies from every device run together).

        Returns
        -------
        numpy.ndarray
            The shards stacked along ``shard_axis`` (``self.shape``), of the shards' dtype.

        Examples
        --------
        >>> import numpy, clnp
        >>> from clnp_nn.parallel import device_put_sharded
        >>> devs = clnp.devices()
        >>> x = device_put_sharded([clnp.full(2, float(k), device=d) for k, d in enumerate(devs)],
        ...                        devs)
        >>> host = x.to_numpy()
        >>> type(host).__name__, host.shape == (len(devs), 2)
        ('ndarray', True)
        >>> print(host[0])
        [0. 0.]
        """
        n = len(self._shards)
        s0 = tuple(self._shards[0].shape)
        # read every shard into row i of a device-first stack, then move the device axis
        out = np.empty((n,) + s0, self.dtype)
        rows = out.reshape(n, -1)     # views (out[i] of a 1-d out is a copy)
        reads = [start_read(s, rows[i]) for i, s in enumerate(self._shards)]
        for r in reads:
            r.wait()
        return out if self._axis == 0 else np.ascontiguousarray(np.moveaxis(out, 0, self._axis))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if copy is False:
            raise ValueError("ShardedArray: converting to NumPy gathers the shards and always "
                             "copies")
        a = self.to_numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def to_device(self, device: Any, /, *, stream: Any = None) -> Array:
        """The gathered array on one ``device`` (``"cpu"``: a NumPy array).

        Parameters
        ----------
        device : clnp.Device, str or int
            Where the gathered array goes: a device or a spec ``clnp.set_default_device`` takes,
            or ``"cpu"`` for a NumPy array.
        stream : None
            Accepted for the Array API's signature and ignored.

        Returns
        -------
        clnp array or numpy.ndarray
            All shards stacked along ``shard_axis``, of shape ``self.shape``.

        Raises
        ------
        ValueError
            ``device`` names no device.

        Examples
        --------
        >>> import numpy, clnp
        >>> from clnp_nn.parallel import device_put_sharded
        >>> devs = clnp.devices()
        >>> x = device_put_sharded([clnp.full(2, float(k), device=d) for k, d in enumerate(devs)],
        ...                        devs)
        >>> y = x.to_device(devs[0])
        >>> y.device is devs[0], y.shape == x.shape
        (True, True)
        >>> type(x.to_device("cpu")).__name__
        'ndarray'
        """
        if device == "cpu" and not isinstance(device, Device):
            return self.to_numpy()   # type: ignore[return-value]
        from clnp._runtime.device import select_device
        return Array.from_numpy(self.to_numpy(), select_device(device, arg="to_device: device"))

    def block_until_ready(self) -> "ShardedArray":
        """Wait until every shard has been computed.

        Returns
        -------
        ShardedArray
            ``self``, as JAX's ``block_until_ready``.

        Examples
        --------
        >>> import numpy, clnp
        >>> from clnp_nn.parallel import device_put_sharded
        >>> devs = clnp.devices()
        >>> x = device_put_sharded([clnp.full(2, float(k), device=d) for k, d in enumerate(devs)],
        ...                        devs)
        >>> x.block_until_ready() is x
        True
        """
        for d in dict.fromkeys(self._devices):
            d.synchronize()
        return self

    def __getitem__(self, key: Any) -> Any:
        """With the device axis first, an integer (first) index picks that shard, on its
        device; anything else indexes the gathered array on the default device."""
        k0 = key[0] if isinstance(key, tuple) and key else key
        if self._axis == 0 and isinstance(k0, (int, np.integer)) and not isinstance(k0, bool):
            n = len(self._shards)
            if not -n <= k0 < n:
                raise IndexError(f"index {k0} is out of bounds for axis 0 with size {n}")
            shard = self._shards[int(k0) % n]
            return shard[key[1:]] if isinstance(key, tuple) and len(key) > 1 else shard
        import clnp
        return clnp.asarray(self.to_numpy())[key]

    def __repr__(self) -> str:
        axis = f", shard_axis={self._axis}" if self._axis else ""
        return (f"ShardedArray({self.to_numpy()!r}, devices=[" +
                ", ".join(d.key for d in self._devices) + "]" + axis + ")")

    def __str__(self) -> str:
        return str(self.to_numpy())

    __hash__ = None  # type: ignore[assignment]


__all__ = ["ShardedArray"]


def _to(leaf: Any, device: Device) -> Array:
    from clnp._core.transfer import copy_to_device, upload
    if isinstance(leaf, ShardedArray):
        raise TypeError("a ShardedArray is already placed; index a shard (x[i]) to re-place it")
    if isinstance(leaf, Array):
        return leaf if leaf.device is device else copy_to_device(leaf, device)
    host = np.asarray(leaf)
    if host.dtype == object:
        raise TypeError(f"cannot place a {type(leaf).__name__} on a device")
    if host.dtype == np.float64 and not isinstance(leaf, (np.ndarray, np.generic)):
        host = host.astype(device.default_float)    # Python floats take the device default
    return upload(host, device)


def device_put_replicated(x: Any, devices: Sequence[Device]) -> Any:
    """One copy of every array leaf of ``x`` on each of ``devices``, as ShardedArrays with a
    leading device axis (JAX's ``device_put_replicated``): the replicated state of a
    data-parallel loop, passed to ``pmap`` with ``in_axes=0``.

    Parameters
    ----------
    x : pytree of clnp or NumPy arrays (or Python numbers)
        The values to replicate; Python floats take each device's default float dtype.
    devices : sequence of clnp.Device
        The devices, in pmap's order.

    Returns
    -------
    pytree of ShardedArray
        The same pytree with ShardedArray leaves of shape ``(len(devices),) + leaf.shape``.

    Raises
    ------
    ValueError
        ``devices`` is empty.
    TypeError
        A leaf is already a ShardedArray, or cannot be placed on a device.

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn.parallel import device_put_replicated
    >>> devs = clnp.devices()
    >>> params = device_put_replicated({"w": clnp.asarray([1.0, 2.0])}, devs)
    >>> params["w"].shape == (len(devs), 2)
    True
    >>> print(numpy.asarray(params["w"])[-1])            # the last device's copy
    [1. 2.]
    """
    from clnp_grad._tree import tree_map
    devs = tuple(devices)
    if not devs:
        raise ValueError("device_put_replicated: devices is empty")
    return tree_map(lambda leaf: ShardedArray([_to(leaf, d) for d in devs], devs), x)


def device_put_sharded(shards: Sequence[Any], devices: Sequence[Device]) -> Any:
    """``shards[i]`` (pytrees of one structure, leaves of one shape per position) placed on
    ``devices[i]``, stacked into ShardedArrays (JAX's ``device_put_sharded``).

    Parameters
    ----------
    shards : sequence of pytrees
        One pytree per device, all of one structure, leaves of one shape per position.
    devices : sequence of clnp.Device
        The devices, in pmap's order; ``shards[i]`` goes to ``devices[i]``.

    Returns
    -------
    pytree of ShardedArray
        The shards' structure with ShardedArray leaves of shape
        ``(len(devices),) + leaf.shape``.

    Raises
    ------
    ValueError
        ``len(shards) != len(devices)`` (or none), or the shards' structures or shapes differ.
    TypeError
        A leaf is already a ShardedArray, or cannot be placed on a device.

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn.parallel import device_put_sharded
    >>> devs = clnp.devices()
    >>> batch = numpy.arange(4 * len(devs), dtype=numpy.float32).reshape(len(devs), 4)
    >>> xb = device_put_sharded(list(batch), devs)       # row k on devs[k]
    >>> xb.shape == batch.shape, xb[0].device is devs[0]
    (True, True)
    >>> print(numpy.asarray(xb[0]))
    [0. 1. 2. 3.]
    """
    from clnp_grad._tree import tree_flatten, tree_unflatten
    devs = tuple(devices)
    if len(shards) != len(devs) or not devs:
        raise ValueError(f"device_put_sharded: {len(shards)} shards for {len(devs)} devices")
    flats = [tree_flatten(s) for s in shards]
    tdef = flats[0][1]
    for i, (_, t) in enumerate(flats):
        if t != tdef:
            raise ValueError(f"device_put_sharded: shard {i} has structure {t}, shard 0 {tdef}")
    leaves = [ShardedArray([_to(f[0][j], d) for f, d in zip(flats, devs)], devs)
              for j in range(len(flats[0][0]))]
    return tree_unflatten(tdef, leaves)


__all__ += ["device_put_replicated", "device_put_sharded"]
