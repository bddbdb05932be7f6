"""Device memory accounting: what the pool hands out, what it holds for reuse, the peak.

Every clnp allocation goes through the device's PyOpenCL ``MemoryPool``
(:meth:`clnp._runtime.device.Device.alloc`); a freed array's buffer returns to the pool, which keeps
it for the next request of the same size class instead of giving it back to the driver. The
pool rounds requests up to size classes; see :class:`MemoryInfo` for what each figure counts.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields

from .device import Device, default_device, devices, select_device

__all__ = ["MemoryInfo", "memory_info", "release_memory"]


@dataclass(frozen=True)
class MemoryInfo(Mapping):
    """Memory of one device's pool, in bytes (and blocks). Also readable as a mapping
    (``info["in_use"]``), so ``dict(info)`` works.

    ``in_use``: requested by live buffers; ``pooled``: obtained from the driver beyond that,
    i.e. free blocks kept for reuse without a driver call (:func:`release_memory` returns
    them) plus the rounding of live blocks up to the pool's size classes (at most about 1/16
    of ``in_use``); ``peak_in_use``: the largest ``in_use`` since the device's first
    allocation (or the last ``release_memory(reset_peak=True)``); ``active_blocks`` and
    ``held_blocks``: the pool's live and free block counts.

    Examples
    --------
    >>> import clnp
    >>> sorted(dict(clnp.memory_info()))
    ['active_blocks', 'held_blocks', 'in_use', 'peak_in_use', 'pooled']
    """
    in_use: int
    pooled: int
    peak_in_use: int
    active_blocks: int
    held_blocks: int

    def __getitem__(self, key: str) -> int:
        if key not in _KEYS:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(_KEYS)

    def __len__(self) -> int:
        return len(_KEYS)


_KEYS = tuple(f.name for f in fields(MemoryInfo))


def memory_info(device: Device | None = None) -> MemoryInfo:
    """The memory pool's state on ``device``.

    Parameters
    ----------
    device : Device or str, optional
        A device, or a spec as for ``CLNP_DEVICE`` (default: the default device).

    Returns
    -------
    MemoryInfo
        ``in_use``, ``pooled`` (beyond ``in_use``: free blocks held for reuse and the
        rounding of live blocks to the pool's size classes), ``peak_in_use`` (bytes),
        ``active_blocks`` and ``held_blocks``; also a read-only mapping.

    Raises
    ------
    ValueError
        A device spec that matches no device.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.zeros(1024, dtype=clnp.float32)
    >>> info = clnp.memory_info()
    >>> info.in_use >= 4096
    True
    """
    d = default_device() if device is None else select_device(device, arg="device")
    if "pool" not in d.__dict__:     # nothing allocated yet: do not create the pool
        return MemoryInfo(0, 0, d.peak_in_use, 0, 0)
    info = d.memory_info()            # OpenCL's pool and the arena of memory CUDA sees
    active = info["in_use"]
    return MemoryInfo(active, info["pooled"], max(d.peak_in_use, active),
                      info["active_blocks"], info["held_blocks"])


def release_memory(device: Device | None = None, *, reset_peak: bool = False) -> None:
    """Return the blocks the pool holds free to the driver.

    Parameters
    ----------
    device : Device or str, optional
        The device (every device when None).
    reset_peak : bool, default False
        Restart the peak from the bytes in use now.

    Returns
    -------
    None
        Arrays in use are untouched.

    Raises
    ------
    ValueError
        A device spec that matches no device.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.zeros(4096)
    >>> del x                                  # its block goes back to the pool
    >>> before = clnp.memory_info().pooled
    >>> clnp.release_memory()
    >>> clnp.memory_info().pooled <= before
    True
    """
    for d in ([select_device(device, arg="device")] if device is not None else devices()):
        if "pool" not in d.__dict__:
            continue
        d.free_pooled()       # and the memory other caches hold for the device
        if reset_peak:
            d.peak_in_use = d.memory_info()["in_use"]
