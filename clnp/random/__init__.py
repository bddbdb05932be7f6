"""Random sampling on the device with NumPy's ``numpy.random`` interface.

    import clnp as np
    rng = np.random.default_rng(42)
    x = rng.standard_normal((1000, 1000), dtype=np.float32)   # a clnp array on the device

The bit generator is Philox4x32-10 (counter-based: value ``i`` of a draw is a pure function of
key, counter and ``i``, so every work-item computes its own numbers). Its state is host-side:
a 64-bit key derived from the seed through NumPy's ``SeedSequence`` and a 128-bit block
counter that each draw advances by the number of 128-bit blocks it consumed, so successive
draws never reuse a block. Seeding is reproducible (same seed, same device-independent
values up to the last bits of transcendental functions), but the streams are NOT NumPy's:
``clnp.random.default_rng(0).random(3)`` differs from ``numpy.random.default_rng(0).random(3)``.

Differences from NumPy:

- Every result is a clnp array on the generator's device; ``size=None`` gives a 0-d array
  (NumPy returns a Python scalar).
- Float results default to the device's default float (float64 where the device has fp64,
  float32 otherwise); ``dtype=float64`` on a device without fp64 raises
  ``clnp.UnsupportedDtypeError``. ``normal``, ``uniform`` and ``exponential`` accept ``dtype``
  too.
- ``integers`` takes scalar bounds only.
- Normals use Box-Muller, not the ziggurat.
"""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np
from numpy.random import SeedSequence

from .._core import dtypes as dt
from .._kernels.random import blocks
from .._core.checks import is_array, normalize_axis, normalize_shape
from .._core.prims import primitive
from ._distributions import DISTRIBUTIONS as _DISTRIBUTIONS, DistributionsMixin
from .._runtime.device import Device, default_device, select_device
from .._runtime.user_frames import user_stacklevel

__all__ = ["Generator", "Philox", "SeedSequence", "default_rng", "seed", "get_state",
           "set_state", "rand", "randn", "random", "random_sample", "randint", "normal",
           "standard_normal", "uniform", "exponential", "standard_exponential", "integers",
           "choice", "permutation", "shuffle", "bytes"]
__all__ += list(_DISTRIBUTIONS) + ["ranf", "sample", "random_integers"]   # NumPy's

_M32 = (1 << 32) - 1
_M128 = (1 << 128) - 1
_py_bytes = bytes


class Philox:
    """Philox4x32-10 bit generator: a 64-bit key and a 128-bit block counter, kept on the host.

    Parameters
    ----------
    seed : optional
        Anything ``numpy.random.SeedSequence`` takes (None draws fresh OS entropy), or a
        ``SeedSequence``.
    counter : int, default 0
        The starting block counter.
    key : int, optional
        A 64-bit key that overrides the one derived from ``seed``.

    Raises
    ------
    TypeError
        ``key`` or ``counter`` is not an integer.
    ValueError
        ``key`` outside [0, 2**64).

    Examples
    --------
    >>> import clnp
    >>> rng = clnp.random.Generator(clnp.random.Philox(7))
    >>> bool(clnp.all(rng.random(4) == clnp.random.default_rng(7).random(4)))
    True
    """

    def __init__(self, seed: Any = None, *, counter: int = 0, key: int | None = None):
        if isinstance(seed, SeedSequence):
            self._seed_seq = seed
        else:
            self._seed_seq = SeedSequence(seed)
        if key is None:
            words = self._seed_seq.generate_state(2, np.uint32)
            key = int(words[0]) | int(words[1]) << 32
        self._set(key, counter)

    def _set(self, key: Any, counter: Any) -> None:
        try:
            key, counter = operator.index(key), operator.index(counter)
        except TypeError:
            raise TypeError("Philox: key and counter must be integers") from None
        if not 0 <= key < 1 << 64:
            raise ValueError(f"Philox: key must be in [0, 2**64); got {key}")
        self._key = (key & _M32, key >> 32)
        self._counter = counter & _M128

    @property
    def seed_seq(self) -> SeedSequence:
        """The ``SeedSequence`` the key was derived from (used by ``spawn``)."""
        return self._seed_seq

    @property
    def state(self) -> dict[str, Any]:
        """``{'bit_generator': 'Philox4x32', 'state': {'key': int, 'counter': int}}``; assign a
        dict of that form (e.g. one read earlier) to restore the stream."""
        return {"bit_generator": "Philox4x32",
                "state": {"key": self._key[0] | self._key[1] << 32, "counter": self._counter}}

    @state.setter
    def state(self, value: dict[str, Any]) -> None:
        if not isinstance(value, dict) or value.get("bit_generator") != "Philox4x32" or \
                not isinstance(value.get("state"), dict):
            raise ValueError("Philox.state: expected a dict {'bit_generator': 'Philox4x32', "
                             "'state': {'key': int, 'counter': int}}")
        s = value["state"]
        self._set(s.get("key"), s.get("counter"))

    def _take(self, nblocks: int) -> tuple[tuple[int, int], int]:
        """(key, first counter) for ``nblocks`` fresh blocks; advances the counter."""
        c = self._counter
        self._counter = (c + nblocks) & _M128
        return self._key, c

    def advance(self, delta: int) -> "Philox":
        """Skip ``delta`` 128-bit blocks, in place.

        Parameters
        ----------
        delta : int
            Blocks to skip.

        Returns
        -------
        Philox
            ``self``.

        Raises
        ------
        TypeError
            ``delta`` is not an integer.

        Examples
        --------
        >>> import clnp
        >>> bg = clnp.random.Philox(1)
        >>> bg.advance(10).state["state"]["counter"]
        10
        """
        self._counter = (self._counter + operator.index(delta)) & _M128
        return self

    def jumped(self, jumps: int = 1) -> "Philox":
        """A copy whose counter is ``jumps * 2**64`` blocks ahead.

        Parameters
        ----------
        jumps : int, default 1
            How many 2**64-block jumps.

        Returns
        -------
        Philox
            A new bit generator: streams that do not overlap for the first 2**64 blocks
            each.

        Raises
        ------
        TypeError
            ``jumps`` is not an integer.

        Examples
        --------
        >>> import clnp
        >>> bg = clnp.random.Philox(1)
        >>> bg.jumped().state["state"]["counter"] == 2 ** 64
        True
        """
        bg = Philox(self._seed_seq, key=self._key[0] | self._key[1] << 32)
        bg._counter = (self._counter + (operator.index(jumps) << 64)) & _M128
        return bg

    def spawn(self, n_children: int) -> list["Philox"]:
        """``n_children`` independent bit generators (keys from spawned ``SeedSequence``s).

        Parameters
        ----------
        n_children : int
            How many.

        Returns
        -------
        list of Philox
            Bit generators seeded from the children of this one's ``SeedSequence``.

        Raises
        ------
        OverflowError
            A negative count (from ``SeedSequence.spawn``).

        Examples
        --------
        >>> import clnp
        >>> a, b = clnp.random.Philox(7).spawn(2)
        >>> ga, gb = clnp.random.Generator(a), clnp.random.Generator(b)
        >>> bool(clnp.all(ga.random(3) == gb.random(3)))
        False
        """
        return [Philox(s) for s in self._seed_seq.spawn(n_children)]

    def __repr__(self) -> str:
        return "Philox4x32()"


def _size(size: Any, fname: str) -> tuple[int, ...]:
    return () if size is None else normalize_shape(size, fname)


def _is_scalar(x: Any) -> bool:
    return isinstance(x, (int, float, np.generic)) or \
        (isinstance(x, np.ndarray) and x.ndim == 0)


class Generator(DistributionsMixin):
    """NumPy's ``Generator`` interface over a :class:`Philox` bit generator.

    Numbers are drawn on the device from the counter-based Philox stream: the same seed
    gives the same numbers on every device, different from NumPy's streams.

    Parameters
    ----------
    bit_generator : Philox, optional
        The bit generator (default: a fresh ``Philox()`` seeded from OS entropy).
    device : Device or str, optional
        Where results are created (the default device at each call when None).

    Raises
    ------
    TypeError
        ``bit_generator`` is not a :class:`Philox`.

    Examples
    --------
    >>> import clnp
    >>> rng = clnp.random.default_rng(0)
    >>> rng.integers(0, 10, size=(2, 3)).shape
    (2, 3)
    """

    def __init__(self, bit_generator: Philox | None = None, *, device: Any = None):
        if bit_generator is None:
            bit_generator = Philox()
        if not isinstance(bit_generator, Philox):
            raise TypeError(f"Generator: bit_generator must be a clnp.random.Philox; got "
                            f"{type(bit_generator).__name__}")
        self._bit_generator = bit_generator
        self._device = None if device is None else \
            device if isinstance(device, Device) else select_device(device, arg="device")

    @property
    def bit_generator(self) -> Philox:
        """The :class:`Philox` bit generator (its ``state`` makes streams reproducible)."""
        return self._bit_generator

    @property
    def device(self) -> Device:
        """The device results are created on."""
        return self._device or default_device()

    def __repr__(self) -> str:
        return f"Generator(Philox4x32) on {self.device}"

    def spawn(self, n_children: int) -> list["Generator"]:
        """``n_children`` independent generators on the same device.

        Parameters
        ----------
        n_children : int
            How many.

        Returns
        -------
        list of Generator
            Generators seeded from spawned ``SeedSequence`` children.

        Raises
        ------
        OverflowError
            A negative count (from ``SeedSequence.spawn``).

        Examples
        --------
        >>> import clnp
        >>> a, b = clnp.random.default_rng(0).spawn(2)
        >>> bool(clnp.all(a.random(3) == b.random(3)))
        False
        """
        return [Generator(bg, device=self._device)
                for bg in self._bit_generator.spawn(n_children)]

    # ------------------------------------------------------------------ drawing
    def _draw(self, shape: tuple[int, ...], dtype: np.dtype, dist: str, loc: Any, scale: Any,
              device: Device) -> Any:
        key, counter = self._bit_generator._take(blocks(dtype, dist, math.prod(shape)))
        return primitive("rng_bits").bind(key=key, counter=counter, shape=shape, dtype=dtype,
                                          dist=dist, loc=loc, scale=scale, device=device)

    def _float_dtype(self, dtype: Any, device: Device, fname: str) -> np.dtype:
        if dtype is None:
            return device.default_float
        d = dt.as_dtype(dtype, fname)
        if d not in (dt.float32, dt.float64):
            raise TypeError(f"{fname}: dtype must be float32 or float64; got {d}")
        device.check_dtype(d, fname)
        return d

    def _param(self, x: Any, name: str, d: np.dtype, device: Device, fname: str,
               cast: bool = True) -> Any:
        """A scalar parameter as a Python float; an array parameter as a clnp array of ``d``
        (of its own real dtype with ``cast=False``: checked, no kernel run yet)."""
        if _is_scalar(x):
            if isinstance(x, (complex, np.complexfloating)) or (
                    isinstance(x, np.ndarray) and x.dtype.kind not in "iufb"):
                raise TypeError(f"{fname}: {name} must be real; got {x!r}")
            return float(x)
        from .._array_api.creation import asarray
        try:
            a = asarray(x, device=device)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{fname}: {name} must be a real number or array; {e}") from None
        if a.dtype.kind not in "iufb":
            raise TypeError(f"{fname}: {name} must be real; got dtype {a.dtype}")
        return a.astype(d) if cast and a.dtype != d else a

    def _affine(self, fname: str, dist: str, loc: Any, scale: Any, size: Any, dtype: Any,
                check_scale: str | None = "scale") -> Any:
        """``loc + scale * base`` of distribution ``dist``: fused into the generating kernel
        for scalar parameters, broadcast with elementwise ops for array parameters."""
        device = self.device
        shape = _size(size, fname)
        d = self._float_dtype(dtype, device, fname)
        # both parameters checked (dtype, then shapes) before either is cast on the device
        loc = self._param(loc, "loc" if check_scale else "low", d, device, fname, cast=False)
        scale = self._param(scale, "scale" if check_scale else "high", d, device, fname,
                            cast=False)
        arrays = [a for a in (loc, scale) if is_array(a)]
        if arrays:
            from .._core.eager import broadcast_shapes
            try:
                pshape = broadcast_shapes(*[a.shape for a in arrays])
            except ValueError as e:
                raise ValueError(f"{fname}: parameters: {e}") from None
            loc, scale = (a.astype(d) if is_array(a) and a.dtype != d else a
                          for a in (loc, scale))
            if size is None:
                shape = pshape
            elif broadcast_shapes(shape, pshape) != shape:
                raise ValueError(f"{fname}: parameters of shape {pshape} do not broadcast "
                                 f"to size {shape}")
        if check_scale:
            if is_array(scale):
                from .._array_api.statistical import min as min_
                if scale.size and float(min_(scale)) < 0:
                    raise ValueError(f"{fname}: {check_scale} < 0")
            elif scale < 0:
                raise ValueError(f"{fname}: {check_scale} < 0")
        if not check_scale:   # uniform(low, high): scale is high - low
            scale = scale - loc
            if not is_array(scale) and not math.isfinite(scale):
                raise OverflowError(f"{fname}: high - low range exceeds valid bounds")
        if not arrays:
            return self._draw(shape, d, dist, loc, scale, device)
        base = self._draw(shape, d, dist, 0.0, 1.0, device)
        return base * scale + loc

    def random(self, size: Any = None, dtype: Any = None) -> Any:
        """Uniform floats in the half-open interval [0.0, 1.0).

        Parameters
        ----------
        size : int or tuple of int, optional
            Output shape (0-d when None).
        dtype : dtype, optional
            float32 or float64 (default: the device's default float).

        Returns
        -------
        array
            53 random bits per float64, 24 per float32.

        Raises
        ------
        TypeError
            A non-float ``dtype``.

        Examples
        --------
        >>> import clnp
        >>> x = clnp.random.default_rng(0).random((2, 2), dtype=clnp.float32)
        >>> x.dtype, bool(clnp.all((x >= 0) & (x < 1)))
        (dtype('float32'), True)
        """
        return self._affine("random", "uniform", 0.0, 1.0, size, dtype)

    def standard_normal(self, size: Any = None, dtype: Any = None) -> Any:
        """Samples from the standard normal distribution (mean 0, standard deviation 1).

        Parameters
        ----------
        size : int or tuple of int, optional
            Output shape (0-d when None).
        dtype : dtype, optional
            float32 or float64 (default: the device's default float).

        Returns
        -------
        array
            Normal samples.

        Raises
        ------
        TypeError
            A non-float ``dtype``.

        Examples
        --------
        >>> import clnp
        >>> z = clnp.random.default_rng(0).standard_normal(10000)
        >>> abs(float(clnp.mean(z))) < 0.05
        True
        """
        return self._affine("standard_normal", "normal", 0.0, 1.0, size, dtype)

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, *,
               dtype: Any = None) -> Any:
        """Samples from a normal (Gaussian) distribution.

        Parameters
        ----------
        loc : float or array, default 0.0
            The mean.
        scale : float or array, default 1.0
            The standard deviation, not negative; array parameters broadcast against
            ``size``.
        size : int or tuple of int, optional
            Output shape (0-d when None).
        dtype : dtype, optional
            float32 or float64 (default: the device's default float).

        Returns
        -------
        array
            Normal samples.

        Raises
        ------
        ValueError
            A negative ``scale``.

        Examples
        --------
        >>> import clnp
        >>> print(clnp.random.default_rng(0).normal(3.0, 0.0, size=2))
        [3. 3.]
        """
        return self._affine("normal", "normal", loc, scale, size, dtype)

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None, *,
                dtype: Any = None) -> Any:
        """Samples uniformly distributed over the half-open interval [low, high).

        Parameters
        ----------
        low : float or array, default 0.0
            The lower bound.
        high : float or array, default 1.0
            The upper bound (rounding may give ``high`` itself, as in NumPy).
        size : int or tuple of int, optional
            Output shape (0-d when None).
        dtype : dtype, optional
            float32 or float64 (default: the device's default float).

        Returns
        -------
        array
            Uniform samples.

        Raises
        ------
        TypeError
            A non-float ``dtype``.

        Examples
        --------
        >>> import clnp
        >>> u = clnp.random.default_rng(0).uniform(5.0, 6.0, size=100)
        >>> bool(clnp.all((u >= 5.0) & (u <= 6.0)))
        True
        """
        return self._affine("uniform", "uniform", low, high, size, dtype, check_scale=None)

    def exponential(self, scale: Any = 1.0, size: Any = None, *, dtype: Any = None) -> Any:
        """Samples from an exponential distribution.

        Parameters
        ----------
        scale : float or array, default 1.0
            The scale, 1/rate, not negative.
        size : int or tuple of int, optional
            Output shape (0-d when None).
        dtype : dtype, optional
            float32 or float64 (default: the device's default float).

        Returns
        -------
        array
            Non-negative samples.

        Raises
        ------
        ValueError
            A negative ``scale``.

        Examples
        --------
        >>> import clnp
        >>> bool(clnp.all(clnp.random.default_rng(0).exponential(2.0, size=100) >= 0))
        True
        """
        return self._affine("exponential", "exponential", 0.0, scale, size, dtype)

    def standard_exponential(self, size: Any = None, dtype: Any = None) -> Any:
        """Samples from the exponential distribution of scale 1.

        Parameters
        ----------
        size : int or tuple of int, optional
            Output shape (0-d when None).
        dtype : dtype, optional
            float32 or float64 (default: the device's default float).

        Returns
        -------
        array
            Non-negative samples.

        Raises
        ------
        TypeError
            A non-float ``dtype``.

        Examples
        --------
        >>> import clnp
        >>> clnp.random.default_rng(0).standard_exponential(3).shape
        (3,)
        """
        return self._affine("standard_exponential", "exponential", 0.0, 1.0, size, dtype)

    def integers(self, low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64,
                 endpoint: bool = False) -> Any:
        """Random integers from ``low`` to ``high`` (exclusive; inclusive with ``endpoint``).

        Random words are mapped by multiply-shift, not modulo: each value's probability is
        within a relative ``(high - low) / 2**64`` of uniform (64-bit words for ranges up to
        2**32, 128-bit blocks beyond).

        Parameters
        ----------
        low : int or 0-d array
            The lowest value, or the end when ``high`` is None (the range is then [0, low)).
            A 0-d array (clnp or NumPy) is read as the number it holds; NumPy's n-d bounds
            are not supported (TypeError).
        high : int or 0-d array, optional
            The end.
        size : int or tuple of int, optional
            Output shape (0-d when None).
        dtype : dtype, default int64
            An integer or bool dtype.
        endpoint : bool, default False
            Include ``high``.

        Returns
        -------
        array
            Integers of ``dtype``.

        Raises
        ------
        TypeError
            A non-integer ``dtype``.
        ValueError
            An empty range, or bounds outside ``dtype``.

        Examples
        --------
        >>> import clnp, numpy
        >>> r = clnp.random.default_rng(0).integers(10, 13, size=200)
        >>> sorted(set(numpy.asarray(r).tolist()))
        [10, 11, 12]
        """
        fname = "integers"
        device = self.device
        d = dt.as_dtype(dtype, fname)
        if d.kind not in "iub":
            raise TypeError(f"{fname}: dtype must be an integer or bool dtype; got {d}")
        shape = _size(size, fname)
        bounds = []
        for name, v in (("low", low), ("high", high)):
            if v is None:
                bounds.append(None)
                continue
            if isinstance(v, np.ndarray) and v.ndim == 0:
                v = v[()]
            elif is_array(v) and v.ndim == 0:
                v = v.to_numpy()[()]        # a 0-d bound is a number (one read), as in NumPy
            if is_array(v) or isinstance(v, (np.ndarray, list, tuple)):
                got = (f"an array of shape {tuple(v.shape)} and dtype {v.dtype}"
                       if hasattr(v, "dtype") else f"a {type(v).__name__}")
                raise TypeError(f"{fname}: {name} must be a scalar integer (array-valued "
                                f"bounds are not supported); got {got}")
            if isinstance(v, (float, np.floating)) and float(v).is_integer():
                v = int(v)
            try:
                bounds.append(operator.index(v))
            except TypeError:
                raise TypeError(f"{fname}: {name} must be an integer; got {v!r}") from None
        lo, hi = bounds
        if hi is None:
            lo, hi = 0, lo
        if not endpoint:
            if lo >= hi:
                raise ValueError(f"{fname}: low >= high ({lo} >= {hi})")
            hi -= 1
        elif lo > hi:
            raise ValueError(f"{fname}: low > high ({lo} > {hi})")
        if d.kind == "b":
            dmin, dmax = 0, 1
        else:
            info = np.iinfo(d)
            dmin, dmax = int(info.min), int(info.max)
        if lo < dmin:
            raise ValueError(f"{fname}: low {lo} is out of bounds for {d}")
        if hi > dmax:
            raise ValueError(f"{fname}: high {hi + (0 if endpoint else 1)} is out of bounds "
                             f"for {d}")
        return self._ints(shape, d, lo, hi - lo + 1, device)

    def _ints(self, shape: tuple[int, ...], d: np.dtype, lo: int, span: int,
              device: Device) -> Any:
        """``lo + [0, span)`` (span <= 2**64)."""
        return self._draw(shape, d, "integers" if span <= 1 << 32 else "integers128", lo,
                          span, device)

    def bytes(self, length: int) -> _py_bytes:
        """``length`` random bytes, generated on the device.

        Parameters
        ----------
        length : int
            How many.

        Returns
        -------
        bytes
            Python bytes.

        Raises
        ------
        ValueError
            A negative length.

        Examples
        --------
        >>> import clnp
        >>> len(clnp.random.default_rng(0).bytes(10))
        10
        """
        length = operator.index(length)
        if length < 0:
            raise ValueError(f"bytes: length must be non-negative; got {length}")
        words = self._draw((-(-length // 4),), dt.uint32, "bits", 0, 0, self.device)
        return words.to_numpy().astype("<u4").tobytes()[:length]

    # ------------------------------------------------------------------ permutations
    def _perm(self, n: int, device: Device) -> Any:
        """A random permutation of range(n) (int64): argsort of random 64-bit keys (ties,
        with probability below n**2 / 2**65, keep index order)."""
        from .._array_api.sorting import argsort
        keys = self._draw((n,), dt.uint64, "bits", 0, 0, device)
        return argsort(keys)

    def _as_array(self, x: Any, fname: str) -> Any:
        if is_array(x):
            return x
        from .._array_api.creation import asarray
        return asarray(x, device=self.device)

    def permutation(self, x: Any, axis: int = 0) -> Any:
        """Randomly permute a sequence, or return a permuted range.

        Parameters
        ----------
        x : int or array
            An int gives a permutation of ``arange(x)``; an array a shuffled copy.
        axis : int, default 0
            The axis to shuffle along.

        Returns
        -------
        array
            The permutation.

        Raises
        ------
        ValueError
            A negative ``x``, or a 0-d array.
        IndexError
            An axis is out of range for ``x``.

        Examples
        --------
        >>> import clnp, numpy
        >>> sorted(numpy.asarray(clnp.random.default_rng(0).permutation(5)).tolist())
        [0, 1, 2, 3, 4]
        """
        fname = "permutation"
        if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
            n = operator.index(x)
            if n < 0:
                raise ValueError(f"{fname}: x must be non-negative; got {n}")
            return self._perm(n, self.device)
        a = self._as_array(x, fname)
        if a.ndim == 0:
            raise ValueError(f"{fname}: x must be an integer or at least 1-dimensional")
        ax = normalize_axis(axis, a.ndim, fname)
        from .._array_api.indexing import take
        return take(a, self._perm(a.shape[ax], a.device), axis=ax)

    def shuffle(self, x: Any, axis: int = 0) -> None:
        """Shuffle a clnp array in place along ``axis`` (sub-arrays move as units).

        Parameters
        ----------
        x : array
            A clnp array of at least one dimension.
        axis : int, default 0
            The axis.

        Returns
        -------
        None


        Raises
        ------
        TypeError
            ``x`` is not a clnp array.
        ValueError
            ``x`` is 0-d.
        IndexError
            An axis is out of range for ``x``.

        Examples
        --------
        >>> import clnp, numpy
        >>> x = clnp.asarray([[1, 1], [2, 2], [3, 3]])
        >>> clnp.random.default_rng(0).shuffle(x)
        >>> sorted(numpy.asarray(x).tolist())
        [[1, 1], [2, 2], [3, 3]]
        """
        fname = "shuffle"
        if not is_array(x):
            raise TypeError(f"{fname}: x must be a clnp array (shuffled in place on its "
                            f"device); got {type(x).__name__}")
        if x.ndim == 0:
            raise ValueError(f"{fname}: x must be at least 1-dimensional")
        ax = normalize_axis(axis, x.ndim, fname)
        from .._array_api.indexing import take
        x[...] = take(x, self._perm(x.shape[ax], x.device), axis=ax)

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None,
               axis: int = 0, shuffle: bool = True) -> Any:
        """A random sample from ``a`` along ``axis``.

        With replacement by inverse CDF (cumulative sum and ``searchsorted``); without
        replacement by random keys and a device sort (with ``p``: Efraimidis-Spirakis keys
        ``Exp(1) / p``, i.e. successive draws proportional to ``p``).

        Parameters
        ----------
        a : array or int
            The population, or ``arange(a)`` for an int.
        size : int or tuple of int, optional
            The sample's shape.
        replace : bool, default True
            Sample with replacement.
        p : array, optional
            Probabilities of the population's entries (default: uniform).
        axis : int, default 0
            The axis sampled along.
        shuffle : bool, default True
            Accepted for NumPy compatibility: a sample without replacement is always in
            random order.

        Returns
        -------
        array
            The sample.

        Raises
        ------
        ValueError
            A sample larger than the population without replacement, an empty population, or
            ``p`` of the wrong shape, negative, or not summing to 1.

        Examples
        --------
        >>> import clnp
        >>> rng = clnp.random.default_rng(0)
        >>> rng.choice(4, size=3, replace=False).shape
        (3,)
        >>> rng.choice(clnp.asarray([5, 6]), size=3, p=clnp.asarray([1.0, 0.0])).tolist()
        [5, 5, 5]
        """
        fname = "choice"
        device = self.device
        shape = _size(size, fname)
        k = math.prod(shape)
        if isinstance(a, (int, np.integer)) and not isinstance(a, bool):
            pop, n, ax = None, operator.index(a), 0
            if n < 0 or (n == 0 and k):
                raise ValueError(f"{fname}: a must be a positive integer unless no samples "
                                 f"are taken")
        else:
            pop = self._as_array(a, fname)
            device = pop.device
            if pop.ndim == 0:
                raise ValueError(f"{fname}: a must be 1-dimensional or an integer")
            ax = normalize_axis(axis, pop.ndim, fname)
            n = pop.shape[ax]
            if n == 0 and k:
                raise ValueError(f"{fname}: a cannot be empty unless no samples are taken")
        if not replace and k > n:
            raise ValueError(f"{fname}: cannot take a larger sample ({k}) than population "
                             f"({n}) when replace=False")
        pa = None if p is None else self._probabilities(p, n, k, replace, device, fname)
        if pa is None:
            idx = self._ints((k,), dt.int64, 0, n, device) if replace else \
                self._perm(n, device)[:k]
        elif replace:
            from .._array_api.cumulative import cumulative_sum
            from .._array_api.searching import searchsorted
            cdf = cumulative_sum(pa)
            # u < cdf[-1] holds after rounding, so side='right' never returns n
            u = self._draw((k,), pa.dtype, "uniform", 0.0, float(cdf[n - 1]), device)
            idx = searchsorted(cdf, u, side="right")
        else:
            from .._array_api.sorting import argsort
            keys = self._draw((n,), pa.dtype, "exponential", 0.0, 1.0, device) / pa
            idx = argsort(keys)[:k]
        if pop is None:
            return idx.reshape(shape)
        from .._array_api.indexing import take
        out = take(pop, idx, axis=ax)
        return out.reshape(pop.shape[:ax] + shape + pop.shape[ax + 1:])

    def _probabilities(self, p: Any, n: int, k: int, replace: bool, device: Device,
                       fname: str) -> Any:
        """``p`` validated as NumPy does (1-d, ``n`` entries, non-negative, summing to 1
        within sqrt(eps)) and placed on the device as floats."""
        if is_array(p):
            pdt = p.dtype
        else:
            host = np.asarray(p)
            pdt = host.dtype
        if pdt.kind not in "iufb":
            raise TypeError(f"{fname}: p must hold real numbers; got dtype {pdt}")
        fdt = pdt if pdt.kind == "f" and pdt.itemsize >= 4 else device.default_float
        if len(p.shape if is_array(p) else host.shape) != 1:
            raise ValueError(f"{fname}: p must be 1-dimensional")
        if (p.shape if is_array(p) else host.shape)[0] != n:
            raise ValueError(f"{fname}: a and p must have the same size ({n} and "
                             f"{(p.shape if is_array(p) else host.shape)[0]})")
        if is_array(p):
            from .._array_api.statistical import min as min_, sum as sum_
            from .._array_api.searching import count_nonzero
            pa = p.astype(fdt) if p.dtype != fdt else p
            total, pmin = float(sum_(pa)), float(min_(pa)) if n else 0.0
            nonzero = int(count_nonzero(pa)) if not replace else n
        else:
            h = host.astype(fdt)
            total, pmin = float(h.sum()), float(h.min()) if n else 0.0
            nonzero = int(np.count_nonzero(h))
        if math.isnan(total):
            raise ValueError(f"{fname}: probabilities contain NaN")
        if pmin < 0:
            raise ValueError(f"{fname}: probabilities are not non-negative")
        atol = max(1e-8, math.sqrt(np.finfo(fdt).eps))
        if abs(total - 1.0) > atol:
            raise ValueError(f"{fname}: probabilities do not sum to 1 (sum = {total!r})")
        if not replace and nonzero < k:
            raise ValueError(f"{fname}: fewer non-zero entries in p ({nonzero}) than size "
                             f"({k})")
        if is_array(p):
            return pa if pa.device is device else pa.to_device(device)
        from .._array_api.creation import asarray
        return asarray(h, device=device)


def default_rng(seed: Any = None, *, device: Any = None) -> Generator:
    """A :class:`Generator` with a Philox4x32-10 bit generator.

    Parameters
    ----------
    seed : int, sequence of int, SeedSequence, Philox or Generator, optional
        The seed; a Generator is returned unchanged when no other device is asked for;
        None draws fresh OS entropy.
    device : Device, optional
        Where results live (the default device at each call when None).

    Returns
    -------
    Generator
        NumPy's ``Generator`` API on the device. Same seed, same numbers on every device
        (they differ from NumPy's streams).

    Raises
    ------
    TypeError
        A seed of an unsupported type.

    Examples
    --------
    >>> import clnp
    >>> rng = clnp.random.default_rng(42)
    >>> x = rng.random(3)
    >>> x.shape, bool(clnp.all((x >= 0) & (x < 1)))
    ((3,), True)
    >>> bool(clnp.all(clnp.random.default_rng(42).normal(size=4) ==
    ...               clnp.random.default_rng(42).normal(size=4)))
    True
    """
    if isinstance(seed, Generator):
        if device is None:
            return seed
        return Generator(seed.bit_generator, device=device)
    if isinstance(seed, Philox):
        return Generator(seed, device=device)
    return Generator(Philox(seed), device=device)


# ---------------------------------------------------------------------- legacy functions
_GLOBAL: Generator | None = None


def _global() -> Generator:
    global _GLOBAL
    if _GLOBAL is None:
        _GLOBAL = Generator(Philox())
    return _GLOBAL


def seed(seed: Any = None) -> None:
    """Reseed the module-level generator behind the legacy functions (``rand``, ``randn``...).

    Parameters
    ----------
    seed : int or sequence of int, optional
        The seed; None draws fresh OS entropy.

    Returns
    -------
    None


    Raises
    ------
    TypeError
        A seed of an unsupported type.

    Examples
    --------
    >>> import clnp
    >>> clnp.random.seed(0); a = clnp.random.rand(3)
    >>> clnp.random.seed(0); b = clnp.random.rand(3)
    >>> bool(clnp.all(a == b))
    True
    """
    global _GLOBAL
    _GLOBAL = Generator(Philox(seed))


def get_state() -> dict[str, Any]:
    """The state of the module-level generator.

    Returns
    -------
    dict
        The bit generator's state (see :attr:`Philox.state`), for :func:`set_state`.

    Examples
    --------
    >>> import clnp
    >>> state = clnp.random.get_state()
    >>> a = clnp.random.randn(3)
    >>> clnp.random.set_state(state)
    >>> bool(clnp.all(clnp.random.randn(3) == a))
    True
    """
    return _global().bit_generator.state


def set_state(state: dict[str, Any]) -> None:
    """Restore a state returned by :func:`get_state`.

    Parameters
    ----------
    state : dict
        A state from :func:`get_state`.

    Returns
    -------
    None


    Raises
    ------
    ValueError
        A state that is not a Philox state, or is missing its fields.

    Examples
    --------
    >>> import clnp
    >>> state = clnp.random.get_state()
    >>> a = clnp.random.rand(2)
    >>> clnp.random.set_state(state)
    >>> bool(clnp.all(clnp.random.rand(2) == a))
    True
    """
    _global().bit_generator.state = state


def rand(*shape: int) -> Any:
    """Uniform floats in [0, 1) of the given shape.

    Parameters
    ----------
    *shape : int
        The dimensions (``rand(2, 3)``).

    Returns
    -------
    array
        Floats of the default floating dtype.

    Raises
    ------
    ValueError
        A negative dimension.

    Examples
    --------
    >>> import clnp
    >>> clnp.random.rand(2, 3).shape
    (2, 3)
    """
    return _global().random(shape)


def randn(*shape: int) -> Any:
    """Standard normal samples of the given shape.

    Parameters
    ----------
    *shape : int
        The dimensions (``randn(2, 3)``).

    Returns
    -------
    array
        Floats of the default floating dtype.

    Raises
    ------
    ValueError
        A negative dimension.

    Examples
    --------
    >>> import clnp
    >>> clnp.random.randn(4).shape
    (4,)
    """
    return _global().standard_normal(shape)


def random(size: Any = None) -> Any:
    """Uniform floats in [0.0, 1.0) (``random_sample`` is the same function).

    Parameters
    ----------
    size : int or tuple of int, optional
        Output shape (a 0-d array when None).

    Returns
    -------
    array
        Floats of the default floating dtype.

    Raises
    ------
    ValueError
        A negative dimension.

    Examples
    --------
    >>> import clnp
    >>> clnp.random.random((2,)).shape
    (2,)
    """
    return _global().random(size)


random_sample = random


def randint(low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64) -> Any:
    """Random integers from ``low`` (inclusive) to ``high`` (exclusive).

    Parameters
    ----------
    low : int
        The lowest value, or the exclusive end when ``high`` is None (then the range is
        [0, low)).
    high : int, optional
        The exclusive end.
    size : int or tuple of int, optional
        Output shape (a 0-d array when None).
    dtype : dtype, default int64
        An integer dtype.

    Returns
    -------
    array
        Integers of ``dtype``.

    Raises
    ------
    ValueError
        ``low >= high``.

    Examples
    --------
    >>> import clnp, numpy
    >>> r = clnp.random.randint(0, 3, size=100)
    >>> sorted(set(numpy.asarray(r).tolist()))
    [0, 1, 2]
    """
    return _global().integers(low, high, size, dtype=dtype)


def integers(low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64,
             endpoint: bool = False) -> Any:
    """Random integers in [low, high), or [low, high] with ``endpoint``.

    Parameters
    ----------
    low : int
        The lowest value, or the end when ``high`` is None.
    high : int, optional
        The end.
    size : int or tuple of int, optional
        Output shape (a 0-d array when None).
    dtype : dtype, default int64
        An integer dtype.
    endpoint : bool, default False
        Include ``high``.

    Returns
    -------
    array
        Integers of ``dtype``.

    Raises
    ------
    ValueError
        ``low >= high`` (``low > high`` with ``endpoint``).

    Examples
    --------
    >>> import clnp, numpy
    >>> r = clnp.random.integers(1, 3, size=100, endpoint=True)
    >>> sorted(set(numpy.asarray(r).tolist()))
    [1, 2, 3]
    """
    return _global().integers(low, high, size, dtype=dtype, endpoint=endpoint)


def normal(loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
    """Samples from a normal distribution.

    Parameters
    ----------
    loc : float, default 0.0
        The mean.
    scale : float, default 1.0
        The standard deviation, not negative.
    size : int or tuple of int, optional
        Output shape (a 0-d array when None).

    Returns
    -------
    array
        Floats of the default floating dtype.

    Raises
    ------
    ValueError
        ``scale < 0``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.random.normal(10.0, 0.0, size=3))
    [10. 10. 10.]
    """
    return _global().normal(loc, scale, size)


def standard_normal(size: Any = None) -> Any:
    """Samples from the standard normal distribution.

    Parameters
    ----------
    size : int or tuple of int, optional
        Output shape (a 0-d array when None).

    Returns
    -------
    array
        Floats of the default floating dtype.

    Raises
    ------
    ValueError
        A negative dimension.

    Examples
    --------
    >>> import clnp
    >>> clnp.random.standard_normal((2, 2)).shape
    (2, 2)
    """
    return _global().standard_normal(size)


def uniform(low: Any = 0.0, high: Any = 1.0, size: Any = None) -> Any:
    """Samples uniformly distributed over [low, high).

    Parameters
    ----------
    low : float, default 0.0
        The lower bound.
    high : float, default 1.0
        The upper bound.
    size : int or tuple of int, optional
        Output shape (a 0-d array when None).

    Returns
    -------
    array
        Floats of the default floating dtype.

    Raises
    ------
    ValueError
        A negative dimension.

    Examples
    --------
    >>> import clnp
    >>> u = clnp.random.uniform(-1.0, 1.0, size=1000)
    >>> bool(clnp.all((u >= -1.0) & (u < 1.0)))
    True
    """
    return _global().uniform(low, high, size)


def exponential(scale: Any = 1.0, size: Any = None) -> Any:
    """Samples from an exponential distribution.

    Parameters
    ----------
    scale : float, default 1.0
        The scale (the mean), not negative.
    size : int or tuple of int, optional
        Output shape (a 0-d array when None).

    Returns
    -------
    array
        Non-negative floats of the default floating dtype.

    Raises
    ------
    ValueError
        ``scale < 0``.

    Examples
    --------
    >>> import clnp
    >>> bool(clnp.all(clnp.random.exponential(2.0, size=1000) >= 0))
    True
    """
    return _global().exponential(scale, size)


def standard_exponential(size: Any = None) -> Any:
    """Samples from the exponential distribution of scale 1.

    Parameters
    ----------
    size : int or tuple of int, optional
        Output shape (a 0-d array when None).

    Returns
    -------
    array
        Non-negative floats of the default floating dtype.

    Raises
    ------
    ValueError
        A negative dimension.

    Examples
    --------
    >>> import clnp
    >>> clnp.random.standard_exponential(3).shape
    (3,)
    """
    return _global().standard_exponential(size)


def choice(a: Any, size: Any = None, replace: bool = True, p: Any = None) -> Any:
    """A random sample from ``a``.

    Parameters
    ----------
    a : array or int
        The population, or ``arange(a)`` for an int.
    size : int or tuple of int, optional
        Output shape (a 0-d array when None).
    replace : bool, default True
        Sample with replacement.
    p : array, optional
        Probabilities of the population's elements (default: uniform).

    Returns
    -------
    array
        The sample.

    Raises
    ------
    ValueError
        A sample larger than the population without replacement, or ``p`` of the wrong
        length or not summing to 1.

    Examples
    --------
    >>> import clnp, numpy
    >>> population = clnp.asarray([10, 20, 30])
    >>> sorted(numpy.asarray(clnp.random.choice(population, size=3, replace=False)).tolist())
    [10, 20, 30]
    >>> clnp.random.choice(population, size=2, p=clnp.asarray([0.0, 1.0, 0.0])).tolist()
    [20, 20]
    """
    return _global().choice(a, size, replace, p)


def permutation(x: Any) -> Any:
    """A permuted copy of ``x`` along its first axis, or a permutation of ``arange(x)``.

    Parameters
    ----------
    x : array or int
        The array, or the length of the permutation.

    Returns
    -------
    array
        The permutation.

    Raises
    ------
    TypeError
        ``x`` is neither an int nor an array.

    Examples
    --------
    >>> import clnp, numpy
    >>> sorted(numpy.asarray(clnp.random.permutation(4)).tolist())
    [0, 1, 2, 3]
    """
    return _global().permutation(x)


def shuffle(x: Any) -> None:
    """Shuffle a clnp array in place along its first axis.

    Parameters
    ----------
    x : array
        A clnp array, shuffled on its device.

    Returns
    -------
    None


    Raises
    ------
    TypeError
        ``x`` is not a clnp array.

    Examples
    --------
    >>> import clnp, numpy
    >>> x = clnp.arange(5)
    >>> clnp.random.shuffle(x)
    >>> sorted(numpy.asarray(x).tolist())
    [0, 1, 2, 3, 4]
    """
    _global().shuffle(x)


def bytes(length: int) -> _py_bytes:  # noqa: A001 - NumPy's name
    """``length`` random bytes.

    Parameters
    ----------
    length : int
        How many.

    Returns
    -------
    bytes
        Host bytes.

    Raises
    ------
    ValueError
        A negative length.

    Examples
    --------
    >>> import clnp
    >>> len(clnp.random.bytes(5))
    5
    """
    return _global().bytes(length)



def _legacy(name: str) -> Any:
    """``clnp.random.<name>``: the method of the global Generator (NumPy's legacy API)."""
    import functools
    import inspect
    method = getattr(Generator, name)

    @functools.wraps(method)
    def draw(*args: Any, **kwargs: Any) -> Any:
        return getattr(_global(), name)(*args, **kwargs)
    sig = inspect.signature(method)
    draw.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=list(sig.parameters.values())[1:])
    draw.__module__ = __name__
    draw.__qualname__ = name
    return draw


for _name in _DISTRIBUTIONS:
    globals()[_name] = _legacy(_name)
del _name
ranf = sample = random_sample   # NumPy's legacy aliases


def random_integers(low: int, high: int | None = None, size: Any = None) -> Any:
    """Random integers in the closed interval [low, high] (NumPy's deprecated
    ``random_integers``: ``randint(low, high + 1)``, with its DeprecationWarning).

    Parameters
    ----------
    low : int
        Lowest value (the highest when ``high`` is None, with 1 as the lowest).
    high : int, optional
        Highest value, included.
    size : int or tuple of int, optional
        Output shape.

    Returns
    -------
    Array
        int64 samples.

    Raises
    ------
    ValueError
        When ``high < low``.

    Examples
    --------
    >>> import warnings, clnp
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     x = clnp.random.random_integers(1, 6, size=10)
    >>> bool(clnp.all((x >= 1) & (x <= 6)))
    True
    """
    import warnings
    if high is None:
        warnings.warn("This function is deprecated. Please call randint(1, {low} + 1) "
                      "instead".format(low=low), DeprecationWarning,
                      stacklevel=user_stacklevel())
        low, high = 1, low
    else:
        warnings.warn("This function is deprecated. Please call randint({low}, {high} + 1) "
                      "instead".format(low=low, high=high), DeprecationWarning,
                      stacklevel=user_stacklevel())
    if high < low:
        raise ValueError(f"random_integers: high ({high}) < low ({low})")
    return randint(low, high + 1, size)


class RandomState:
    """NumPy's legacy generator object: the legacy API (``rand``, ``randn``, ``randint``,
    ``random_sample``, ``seed``, ``get_state``...) and every distribution, drawn on the device
    from its own Philox stream (NumPy's RandomState uses MT19937, so the values differ).

    Parameters
    ----------
    seed : int or sequence of int, optional
        The seed; None draws fresh OS entropy.
    device : Device, optional
        Where to draw (default: the default device).

    Examples
    --------
    >>> import clnp
    >>> rs = clnp.random.RandomState(0)
    >>> rs.rand(2, 3).shape, rs.randint(0, 5, size=4).shape
    ((2, 3), (4,))
    >>> a = clnp.random.RandomState(7).normal(size=3)
    >>> bool(clnp.all(a == clnp.random.RandomState(7).normal(size=3)))
    True
    """

    _FORWARDED = frozenset(_DISTRIBUTIONS) | {
        "normal", "uniform", "exponential", "standard_exponential", "standard_normal",
        "choice", "permutation", "shuffle", "bytes"}

    def __init__(self, seed: Any = None, *, device: Any = None):
        self._gen = Generator(Philox(seed), device=device)

    def __getattr__(self, name: str) -> Any:
        if name in RandomState._FORWARDED:
            return getattr(self._gen, name)
        raise AttributeError(f"'RandomState' object has no attribute {name!r}")

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | RandomState._FORWARDED)

    def __repr__(self) -> str:
        return "RandomState(Philox)"

    def seed(self, seed: Any = None) -> None:
        """Reseed: a fresh Philox stream from ``seed`` on the same device.

        Parameters
        ----------
        seed : int or sequence of int, optional
            The new seed; None draws fresh OS entropy.

        Returns
        -------
        None

        Raises
        ------
        TypeError
            When ``seed`` is neither None, an int nor a sequence of ints.

        Examples
        --------
        >>> import clnp
        >>> rs = clnp.random.RandomState(1)
        >>> a = rs.rand(3)
        >>> rs.seed(1)
        >>> bool(clnp.all(a == rs.rand(3)))
        True
        """
        self._gen = Generator(Philox(seed), device=self._gen._device)

    def get_state(self) -> dict[str, Any]:
        """The Philox state, for :meth:`set_state`.

        Returns
        -------
        dict
            ``{'bit_generator': 'Philox4x32', 'state': {'key': int, 'counter': int}}``
            (NumPy's RandomState returns an MT19937 tuple instead).

        Examples
        --------
        >>> import clnp
        >>> clnp.random.RandomState(0).get_state()["bit_generator"]
        'Philox4x32'
        """
        return self._gen.bit_generator.state

    def set_state(self, state: dict[str, Any]) -> None:
        """Restore a state from :meth:`get_state`: the draws that follow repeat those
        that followed it.

        Parameters
        ----------
        state : dict
            A state returned by :meth:`get_state`.

        Returns
        -------
        None

        Raises
        ------
        ValueError
            When ``state`` is not a Philox state dict.

        Examples
        --------
        >>> import clnp
        >>> rs = clnp.random.RandomState(3)
        >>> st = rs.get_state()
        >>> a = rs.rand(4)
        >>> rs.set_state(st)
        >>> bool(clnp.all(a == rs.rand(4)))
        True
        """
        self._gen.bit_generator.state = state

    def rand(self, *shape: int) -> Any:
        """Uniform floats in [0, 1) of the given shape.

        Parameters
        ----------
        *shape : int
            The dimensions (none: a 0-d array).

        Returns
        -------
        Array
            Of the device's default float dtype (float64, or float32 without fp64).

        Raises
        ------
        ValueError
            For a negative dimension.

        Examples
        --------
        >>> import clnp
        >>> x = clnp.random.RandomState(0).rand(2, 3)
        >>> x.shape, bool(clnp.all((x >= 0) & (x < 1)))
        ((2, 3), True)
        """
        return self._gen.random(shape)

    def randn(self, *shape: int) -> Any:
        """Standard normal floats (mean 0, standard deviation 1) of the given shape.

        Parameters
        ----------
        *shape : int
            The dimensions (none: a 0-d array).

        Returns
        -------
        Array
            Of the device's default float dtype (float64, or float32 without fp64).

        Raises
        ------
        ValueError
            For a negative dimension.

        Examples
        --------
        >>> import clnp
        >>> clnp.random.RandomState(0).randn(3, 2).shape
        (3, 2)
        """
        return self._gen.standard_normal(shape)

    def randint(self, low: Any, high: Any = None, size: Any = None,
                dtype: Any = np.int64) -> Any:
        """Uniform integers in [low, high) (in [0, low) when ``high`` is None).

        Parameters
        ----------
        low : int or array_like of int
            The lowest value (or the exclusive upper bound when ``high`` is None).
        high : int or array_like of int, optional
            One above the highest value.
        size : int or tuple of int, optional
            The output shape (None: the broadcast shape of ``low`` and ``high``).
        dtype : dtype, optional
            The integer dtype of the result (default int64).

        Returns
        -------
        Array
            Of ``dtype``.

        Raises
        ------
        ValueError
            When ``low >= high``.

        Examples
        --------
        >>> import clnp
        >>> x = clnp.random.RandomState(0).randint(2, 5, size=6)
        >>> x.shape, bool(clnp.all((x >= 2) & (x < 5)))
        ((6,), True)
        """
        return self._gen.integers(low, high, size, dtype=dtype)

    def random_integers(self, low: int, high: int | None = None, size: Any = None) -> Any:
        """Uniform integers in [low, high], both ends included (in [1, low] when ``high``
        is None); deprecated, as in NumPy (use :meth:`randint`).

        Parameters
        ----------
        low : int
            The lowest value (or the highest when ``high`` is None).
        high : int, optional
            The highest value.
        size : int or tuple of int, optional
            The output shape (None: a 0-d array).

        Returns
        -------
        Array
            Of int64.

        Raises
        ------
        ValueError
            When ``high < low``.

        Examples
        --------
        >>> import warnings, clnp
        >>> rs = clnp.random.RandomState(0)
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", DeprecationWarning)
        ...     x = rs.random_integers(1, 6, size=10)
        >>> bool(clnp.all((x >= 1) & (x <= 6)))
        True
        """
        import warnings
        warnings.warn("This function is deprecated. Please call randint instead",
                      DeprecationWarning, stacklevel=user_stacklevel())
        if high is None:
            low, high = 1, low
        if high < low:
            raise ValueError(f"random_integers: high ({high}) < low ({low})")
        return self._gen.integers(low, high + 1, size)

    def random_sample(self, size: Any = None) -> Any:
        """Uniform floats in [0, 1) (also named ``random``, ``ranf`` and ``sample``).

        Parameters
        ----------
        size : int or tuple of int, optional
            The output shape (None: a 0-d array).

        Returns
        -------
        Array
            Of the device's default float dtype (float64, or float32 without fp64).

        Raises
        ------
        ValueError
            For a negative dimension.

        Examples
        --------
        >>> import clnp
        >>> x = clnp.random.RandomState(0).random_sample((2, 2))
        >>> x.shape, bool(clnp.all((x >= 0) & (x < 1)))
        ((2, 2), True)
        """
        return self._gen.random(size)

    random = ranf = sample = random_sample


__all__ += ["RandomState"]

# clnp.random is imported on first use (clnp.__getattr__), after the package: its dir() and its
# errors naming the user's call are set up here rather than in clnp/__init__.py
from .._namespace import hide_imports as _hide_imports  # noqa: E402
import sys as _sys  # noqa: E402

from .._core.checks import name_errors_in as _name_errors_in  # noqa: E402

__dir__ = _hide_imports(__name__)
_name_errors_in((_sys.modules[__name__], "random."))
