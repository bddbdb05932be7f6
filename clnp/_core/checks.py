"""Argument checking shared by the namespace modules (no kernels, no buffers)."""
from __future__ import annotations

import functools
import operator
import re
import types
from typing import Any, Sequence

import numpy as np

from . import dtypes as dt
from .._runtime.user_frames import is_named_at_source
from .array import Array
from .dtypes import kind as dkind
from .namespace import namespace as _namespace

SCALARS = (bool, int, float, complex)


def is_array(x: Any) -> bool:
    """True for clnp arrays and for clnp_grad tracers standing in for them."""
    return isinstance(x, Array) or getattr(x, "_is_clnp_tracer", False)


def check_array(x: Any, fname: str, arg: str = "x") -> None:
    if not is_array(x):
        raise TypeError(f"{fname}: {arg} must be a clnp array; got {type(x).__name__} "
                        f"(wrap it with clnp.asarray)")


def normalize_axis(axis: Any, ndim: int, fname: str) -> int:
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{fname}: axis must be an integer; got {type(axis).__name__}") from None
    if not -ndim <= a < ndim:
        raise axis_error(a, ndim, fname)
    return a % ndim if ndim else 0


def axis_error(axis: int, ndim: int, fname: str) -> np.exceptions.AxisError:
    """NumPy's ``AxisError`` (a ValueError and an IndexError), its message naming ``fname``:
    ``"sum: axis 3 is out of bounds for array of dimension 2"``."""
    return np.exceptions.AxisError(axis, ndim, fname)


def normalize_axes(axis: Any, ndim: int, fname: str, allow_none: bool = True) -> tuple[int, ...]:
    if axis is None:
        if not allow_none:
            raise TypeError(f"{fname}: axis must not be None")
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(normalize_axis(a, ndim, fname) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{fname}: repeated axis in {tuple(axis)}")
        return axes
    return (normalize_axis(axis, ndim, fname),)


def names_its_errors(fn: Any, name: str, prefix: str = "") -> Any:
    """``fn`` whose TypeError, ValueError and IndexError messages start with ``name``.

    The NumPy-layer functions are built from other public functions and from ``asarray``;
    an error raised inside them (``"asarray: cannot convert dict ..."``) would otherwise name
    the inner function, not the one the user called. The exception object is re-raised as it
    is (same class, same traceback) with ``"name: "`` before its message when the message does
    not name ``name`` already (``prefix`` + ``name`` is what it adds: ``"linalg.inv: "``).
    Python functions only: ufunc objects keep their own messages.
    """
    if not isinstance(fn, types.FunctionType) or getattr(fn, "_names_its_errors", False):
        return fn
    word = name     # compiled on the first error only: 400 patterns cost 0.1 s at import
    name = prefix + name

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _one_device(name, args, kwargs)
        try:
            return fn(*args, **kwargs)
        except np.exceptions.AxisError as e:
            if e.axis is None or _names(word, str(e)):
                raise
            # formats its own message: a new one naming this function, same axis and ndim
            raise axis_error(e.axis, e.ndim, name).with_traceback(e.__traceback__) from None
        except (TypeError, ValueError, IndexError) as e:
            _prefix_message(e, name, word)
            raise
    wrapper._names_its_errors = True  # type: ignore[attr-defined]
    return wrapper


def name_errors_in(*modules: tuple[types.ModuleType, str]) -> None:
    """Replace each public function (``__all__``) of each ``(module, prefix)`` by
    :func:`names_its_errors` of it, named ``prefix + name``; a function exported under
    several names or by several modules gets one wrapper, named after its first
    (``clnp.linalg.matmul`` stays ``clnp.matmul``, ``random.random_sample`` stays
    ``random.random``).

    Examples
    --------
    >>> import clnp
    >>> clnp.linalg.matmul is clnp.matmul, clnp.random.random_sample is clnp.random.random
    (True, True)
    """
    wrapped: dict[int, Any] = {}
    for module, prefix in modules:
        for name in module.__all__:
            f = getattr(module, name)
            w = wrapped.get(id(f))
            if w is None:
                w = wrapped[id(f)] = names_its_errors(f, name, prefix)
            setattr(module, name, w)


def _one_device(name: str, args: tuple, kwargs: dict) -> None:
    """Array arguments (and arrays in list arguments) on one device, else ValueError naming
    both devices: checked before the function runs, so no kernel runs on either."""
    dev = None
    for a in (*args, *kwargs.values()):
        if type(a) is Array:
            d = a._device
        elif type(a) in (list, tuple):
            for e in a:
                if type(e) is Array:
                    if dev is None:
                        dev = e._device
                    elif e._device is not dev:
                        _different(name, dev, e._device)
            continue
        else:
            continue
        if dev is None:
            dev = d
        elif d is not dev:
            _different(name, dev, d)


def _different(name: str, d0: Any, d1: Any) -> None:
    raise ValueError(f"{name}: arrays are on different devices: {d0} and {d1}; move one "
                     f"with to_device()")


@functools.lru_cache(maxsize=None)
def _word_pattern(word: str) -> "re.Pattern[str]":
    return re.compile(rf"(?<!\w){re.escape(word)}\b", re.IGNORECASE)


def _names(word: str, message: str) -> bool:
    """True when ``message`` names ``word`` as a whole word, in any case."""
    return _word_pattern(word).search(message) is not None


def _prefix_message(e: BaseException, name: str, word: str) -> None:
    # clnp.linalg names the outermost function of a failed decomposition itself
    # (clnp._routines.linalg_status.reports_as)
    # an error of a setting (a bad CLNP_DEVICE) names the setting, not the call that met it
    if isinstance(e, np.linalg.LinAlgError) or len(e.args) != 1 or is_named_at_source(e) or \
            not isinstance(e.args[0], str) or _names(word, e.args[0]):
        return      # AxisError formats its own message; clnp's name the function already
    msg = e.args[0]
    for inner in ("asarray: ", "astype: "):
        if msg.startswith(inner):
            msg = msg[len(inner):]
            break
    e.args = (f"{name}: {msg}",)


def ints_of_array(v: Any, fname: str, name: str) -> list[int]:
    """A 0-d or 1-d integer array (clnp or NumPy) given where NumPy takes an int or a
    sequence of ints (a shape, shifts, repetitions), as a list of Python ints.

    NumPy reads such arrays through ``__index__``; a clnp array is read back once, not
    element by element.
    """
    h = v.to_numpy() if is_array(v) else np.asarray(v)
    if h.ndim > 1 or h.dtype.kind not in "iu":
        raise TypeError(f"{fname}: {name} must be an int or a sequence of ints; got an array "
                        f"of dtype {h.dtype} and shape {h.shape}")
    return h.reshape(-1).tolist()


def shape_from_array(shape: Any, fname: str) -> list[int]:
    """A 0-d or 1-d integer array (clnp or NumPy) given as a shape, as a list of ints."""
    return ints_of_array(shape, fname, "shape")


def normalize_shape(shape: Any, fname: str) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    elif is_array(shape) or isinstance(shape, np.ndarray):
        shape = shape_from_array(shape, fname)
    try:
        out = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"{fname}: shape must be an int or a sequence of ints; got "
                        f"{shape!r}") from None
    if any(n < 0 for n in out):
        raise ValueError(f"{fname}: negative dimensions are not allowed; got {out}")
    return out


def check_scalar_fits(value: Any, dtype: np.dtype, fname: str) -> None:
    """NumPy 2 raises OverflowError when a Python int does not fit the array's integer dtype."""
    if isinstance(value, int) and not isinstance(value, bool) and dkind(dtype) in "iu":
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise OverflowError(f"{fname}: Python integer {value} out of bounds for {dtype}")


def result_dtype_of(args: Sequence[Any], fname: str) -> np.dtype:
    """Promote array dtypes, then Python scalars as weak types (NEP 50)."""
    arrays = [a for a in args if is_array(a)]
    if not arrays:
        raise TypeError(f"{fname}: at least one argument must be an array")
    res = arrays[0].dtype
    for a in arrays[1:]:
        res = dt.promote(res, a.dtype)
    for s in args:
        if is_array(s):
            continue
        if not isinstance(s, SCALARS):
            raise TypeError(f"{fname}: unsupported operand type {type(s).__name__}; expected "
                            f"an array or a Python scalar")
        res = dt.promote(res, dt.weak_scalar_dtype(s, res))
    return res


def unwrap_scalar(x: Any) -> Any:
    """NumPy scalars and 0-d NumPy arrays act as Python scalars; other NumPy arrays upload."""
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return _namespace().asarray(x)
    return x
