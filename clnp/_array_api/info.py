"""``__array_namespace_info__``: devices, dtypes and capabilities, read from the devices."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._core import dtypes as dt
from .._runtime.device import Device, default_device, devices, select_device

__all__ = ["__array_namespace_info__"]

_KIND_ORDER = {
    "bool": (dt.bool_,), "signed integer": dt.SIGNED, "unsigned integer": dt.UNSIGNED,
    "integral": dt.INTEGER, "real floating": (dt.float32, dt.float64),
    "complex floating": dt.COMPLEX_FLOATING,
    "numeric": dt.INTEGER + (dt.float32, dt.float64) + dt.COMPLEX_FLOATING,
}


class Info:
    """The namespace inspection object returned by :func:`__array_namespace_info__`."""

    def capabilities(self) -> dict[str, Any]:
        """What the namespace supports, as the Array API defines the keys.

        Returns
        -------
        dict
            ``boolean indexing`` and ``data-dependent shapes`` (both True) and ``max
            dimensions`` (None: no limit).

        Examples
        --------
        >>> import clnp
        >>> clnp.__array_namespace_info__().capabilities()["data-dependent shapes"]
        True
        """
        return {"boolean indexing": True, "data-dependent shapes": True,
                "max dimensions": None}

    def default_device(self) -> Device:
        """The default device (``CLNP_DEVICE``, else the first GPU, else the first device).

        Returns
        -------
        Device
            The device new arrays go to.

        Examples
        --------
        >>> import clnp
        >>> clnp.__array_namespace_info__().default_device() == clnp.default_device()
        True
        """
        return default_device()

    def devices(self) -> list[Device]:
        """Every OpenCL device on every platform.

        Returns
        -------
        list of Device
            The devices clnp can use (a list, as the standard specifies: SciPy's tests
            extend it with ``+ [None]``).

        Examples
        --------
        >>> import clnp
        >>> len(clnp.__array_namespace_info__().devices()) >= 1
        True
        """
        return list(devices())

    def _dev(self, device: Any) -> Device:
        return default_device() if device is None else select_device(device, arg="device")

    def default_dtypes(self, *, device: Any = None) -> dict[str, np.dtype]:
        """The default dtypes of ``device``.

        Parameters
        ----------
        device : Device or str, optional
            The device (default: the default device).

        Returns
        -------
        dict
            ``real floating`` (float64 where the device has fp64, else float32), ``complex
            floating``, ``integral`` and ``indexing`` (int64).

        Raises
        ------
        ValueError
            A device spec that matches no device.

        Examples
        --------
        >>> import clnp
        >>> clnp.__array_namespace_info__().default_dtypes()["indexing"]
        dtype('int64')
        """
        d = self._dev(device)
        return {"real floating": d.default_float, "complex floating": d.default_complex,
                "integral": dt.int64, "indexing": dt.int64}

    def dtypes(self, *, device: Any = None, kind: Any = None) -> dict[str, np.dtype]:
        """The dtypes ``device`` supports, by kind.

        Parameters
        ----------
        device : Device or str, optional
            The device (default: the default device).
        kind : str or tuple of str, optional
            A kind name as for :func:`isdtype` (default: ``bool`` and ``numeric``).

        Returns
        -------
        dict
            Name to dtype; float64/complex128 only where the device has fp64. float16 is a
            storage extension and is not listed.

        Raises
        ------
        ValueError
            An unknown kind, or a device spec that matches no device.

        Examples
        --------
        >>> import clnp
        >>> sorted(clnp.__array_namespace_info__().dtypes(kind="signed integer"))
        ['int16', 'int32', 'int64', 'int8']
        """
        d = self._dev(device)
        if kind is None:
            kinds: tuple = ("bool", "numeric")
        elif isinstance(kind, tuple):
            kinds = kind
        else:
            kinds = (kind,)
        out: dict[str, np.dtype] = {}
        for k in kinds:
            if k not in _KIND_ORDER:
                raise ValueError(f"dtypes: unknown kind {k!r}")
            for t in _KIND_ORDER[k]:
                if d.supports(t):
                    out[t.name] = t
        return out


def __array_namespace_info__() -> Info:
    """The Array API's inspection object for this namespace.

    Returns
    -------
    Info
        With ``capabilities()``, ``default_device()``, ``devices()``,
        ``default_dtypes(device=)`` and ``dtypes(device=, kind=)``, read from the
        devices (float64 only where the device has fp64).

    Examples
    --------
    >>> import clnp
    >>> info = clnp.__array_namespace_info__()
    >>> info.capabilities()["boolean indexing"]
    True
    >>> info.default_dtypes()["integral"]
    dtype('int64')
    """
    return Info()
