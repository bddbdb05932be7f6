"""Which algorithm a 2-D convolution runs: im2col + GEMM, or Winograd F(2x2, 3x3), chosen
by measurement.

``autotune_conv2d(x_shape, weight_shape, ...)`` times both algorithms on zero arrays of
those shapes (forward and backward under ``jit``) and stores the faster one in a JSON file
next to the GEMM autotuner's cache (``clnp._routines.autotune.cache_dir()``, one file per device and
driver, keyed like the GEMM cache). As with the GEMM tuner, nothing is tuned implicitly:
without an entry a convolution runs im2col. ``set_conv_algorithm("im2col" | "winograd" |
"auto")`` overrides the choice ("winograd" applies where F(2x2, 3x3) does: 3x3, stride 1,
no dilation, one group).
"""
from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

_MODES = ("auto", "im2col", "winograd")
_mode = "auto"
_loaded: dict[str, dict[str, str]] = {}     # device id -> problem key -> algorithm


def set_conv_algorithm(mode: str) -> str:
    """Force the 2-D convolution algorithm, or "auto" (the tuned choice, else im2col).

    Parameters
    ----------
    mode : {"auto", "im2col", "winograd"}
        The algorithm for the convolutions Winograd applies to (3x3 filters, stride 1, no
        dilation, one group; the others always use im2col), or the tuned choice.

    Returns
    -------
    str
        The previous mode (to restore it).

    Raises
    ------
    ValueError
        For another mode.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> prev = F.set_conv_algorithm("winograd")
    >>> F.set_conv_algorithm(prev)
    'winograd'
    """
    global _mode
    if mode not in _MODES:
        raise ValueError(f"set_conv_algorithm: mode must be one of {_MODES}, got {mode!r}")
    prev, _mode = _mode, mode
    return prev


def _path(device: Any) -> Path:
    from clnp._routines import autotune as _autotune
    h = hashlib.sha1(_autotune.device_id(device).encode()).hexdigest()[:16]
    return _autotune.cache_dir() / f"nn-conv2d-{h}.json"


_ids: dict[int, str] = {}


def _device_id(device: Any) -> str:
    """The GEMM tuner's device id (platform, device, driver), computed once per device: it
    asks the driver, and every convolution looks it up."""
    did = _ids.get(id(device))
    if did is None:
        from clnp._routines import autotune as _autotune
        did = _ids[id(device)] = _autotune.device_id(device)
    return did


def _table(device: Any) -> dict[str, str]:
    did = _device_id(device)
    t = _loaded.get(did)
    if t is None:
        t = {}
        try:
            data = json.loads(_path(device).read_text())
            if data.get("device") == did:
                t = {str(k): str(v) for k, v in data.get("choices", {}).items()}
        except (OSError, ValueError, AttributeError):
            pass
        _loaded[did] = t
    return t


def problem_key(dtype: Any, x_shape: tuple, weight_shape: tuple, pads: tuple) -> str:
    """The cache key of one convolution problem."""
    return f"{np.dtype(dtype).name}|x{tuple(x_shape)}|w{tuple(weight_shape)}|p{tuple(pads)}"


def choose(device: Any, dtype: Any, x_shape: tuple, weight_shape: tuple, pads: tuple,
           eligible: bool) -> str:
    """The algorithm for this problem: forced, else tuned, else im2col."""
    if not eligible or _mode == "im2col":
        return "im2col"
    if _mode == "winograd":
        return "winograd"
    return _table(device).get(problem_key(dtype, x_shape, weight_shape, pads), "im2col")


def autotune_conv2d(x_shape: tuple, weight_shape: tuple, padding: Any = 1,
                    dtype: Any = "float32", device: Any = None, reps: int = 5) -> str:
    """Time im2col and Winograd for one convolution problem and remember the faster.

    Both run forward and backward (``grad`` of a sum of squares under ``jit``) on zero arrays
    of the given shapes; the median of ``reps`` runs decides. The choice is stored per
    device and driver and used by every later ``conv2d`` of that problem (in this process
    and, through the cache file, later ones).

    Parameters
    ----------
    x_shape : tuple of 4 ints
        ``(N, C, H, W)``.
    weight_shape : tuple of 4 ints
        ``(O, C, 3, 3)``.
    padding : int, tuple of 2 ints, "same" or "valid"
        The convolution's padding, as for :func:`conv2d`.
    dtype : dtype
        The dtype of the timed operands.
    device : Device, optional
        Default: clnp's default device.
    reps : int
        Timed runs per algorithm; their median decides.

    Returns
    -------
    str
        "im2col" or "winograd" ("im2col" without timing when Winograd does not apply).

    Raises
    ------
    ValueError
        If the shapes do not make a valid convolution.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> F.autotune_conv2d((64, 64, 32, 32), (64, 64, 3, 3), padding=1)  # doctest: +SKIP
    'im2col'
    """
    import clnp as xp
    import clnp_grad as cg
    from .conv import _padding, conv2d
    from ._winograd import eligible as wino_ok
    device = device or xp.default_device()
    dt = np.dtype(dtype)
    if len(x_shape) != 4 or len(weight_shape) != 4:
        raise ValueError(f"autotune_conv2d: expected 4-D shapes, got {x_shape} and "
                         f"{weight_shape}")
    pads = _padding("autotune_conv2d", padding, tuple(weight_shape[2:]), (1, 1), (1, 1), 2)
    if not wino_ok(tuple(weight_shape[2:]), (1, 1), (1, 1), 1) or x_shape[1] != weight_shape[1]:
        return "im2col"
    x = xp.zeros(tuple(x_shape), dtype=dt, device=device)
    w = xp.zeros(tuple(weight_shape), dtype=dt, device=device)
    pad_arg = (pads[0][0], pads[1][0]) if pads[0][0] == pads[0][1] and \
        pads[1][0] == pads[1][1] else padding

    def loss(x, w):
        y = conv2d(x, w, padding=pad_arg)
        return xp.sum(y * y)
    times = {}
    import statistics       # here, not at import: 4 ms with fractions and decimal
    for algo in ("im2col", "winograd"):
        prev = set_conv_algorithm(algo)
        try:
            f = cg.jit(cg.grad(loss, argnums=(0, 1)))
            f(x, w)
            xp.synchronize()
            runs = []
            for _ in range(reps):
                t = time.perf_counter()
                f(x, w)
                xp.synchronize()
                runs.append(time.perf_counter() - t)
            times[algo] = statistics.median(runs)
        finally:
            set_conv_algorithm(prev)
    best = min(times, key=times.get)
    _store(device, problem_key(dt, x_shape, weight_shape, pads), best)
    return best


def _store(device: Any, key: str, algo: str) -> None:
    from clnp._routines import autotune as _autotune
    table = _table(device)
    table[key] = algo
    path = _path(device)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"device": _autotune.device_id(device), "choices": table},
                                  indent=1, sort_keys=True))
        tmp.replace(path)
    except OSError:
        pass      # an unwritable cache keeps the choice for this process only
