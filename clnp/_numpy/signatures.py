"""NumPy's signatures on the namespace functions (issue #12, item 1).

The standard's functions take their parameters keyword-only; NumPy code passes them by
position (``np.sum(x, 0)``, ``np.roll(x, 1, 0)``, ``np.zeros((3, 3), int)``) and uses
keywords the standard lacks (``out=``, ``where=``, ``initial=``, ``kind=``, ``order=``).
:data:`SIGNATURES` declares, per function, the signature it gets: NumPy's parameter order
under the standard's names (keyword-only turned positional-or-keyword, which the standard
allows), plus NumPy's extra parameters. :func:`numpy_signature` generates the wrapper from
it: parameters the standard function has pass straight through; NumPy's extras are handled
in one place (:func:`_extras`) when they differ from their defaults, so the common call
costs one extra Python frame. Array parameters also take Python scalars, lists, tuples and
NumPy arrays (uploaded once, NumPy's dtype rules).
"""
from __future__ import annotations

import binascii
import inspect
from typing import Any, Callable, Sequence

import numpy as np

from .._core import dtypes as dt
from .._core.dtypes import kind as dkind
from .._core.array import Array
from .._core.checks import axis_error, is_array
from .._array_api.ufunc import NoValue, write_out
from .._core.namespace import namespace as _ns
from .creation import linspace_arrays

_NV = NoValue

# name -> (NumPy-ordered signature with the standard's names, array parameters)
SIGNATURES: dict[str, tuple[str, tuple[str, ...]]] = {
    # reductions and statistics
    "sum": ("x, /, axis=None, dtype=None, out=None, keepdims=False, *, initial=_NV, "
            "where=True", ("x",)),
    "prod": ("x, /, axis=None, dtype=None, out=None, keepdims=False, *, initial=_NV, "
             "where=True", ("x",)),
    "max": ("x, /, axis=None, out=None, keepdims=False, initial=_NV, where=True", ("x",)),
    "min": ("x, /, axis=None, out=None, keepdims=False, initial=_NV, where=True", ("x",)),
    "all": ("x, /, axis=None, out=None, keepdims=False, *, where=True", ("x",)),
    "any": ("x, /, axis=None, out=None, keepdims=False, *, where=True", ("x",)),
    "mean": ("x, /, axis=None, dtype=None, out=None, keepdims=False, *, where=True",
             ("x",)),
    "var": ("x, /, axis=None, dtype=None, out=None, ddof=None, keepdims=False, *, "
            "correction=0.0, where=True", ("x",)),
    "std": ("x, /, axis=None, dtype=None, out=None, ddof=None, keepdims=False, *, "
            "correction=0.0, where=True", ("x",)),
    "argmax": ("x, /, axis=None, out=None, *, keepdims=False", ("x",)),
    "argmin": ("x, /, axis=None, out=None, *, keepdims=False", ("x",)),
    "count_nonzero": ("x, /, axis=None, *, keepdims=False", ("x",)),
    "cumsum": ("a, axis=None, dtype=None, out=None", ("a",)),
    "cumprod": ("a, axis=None, dtype=None, out=None", ("a",)),
    # sorting and searching
    "sort": ("x, /, axis=-1, kind=None, order=None, *, descending=False, stable=True",
             ("x",)),
    "argsort": ("x, /, axis=-1, kind=None, order=None, *, descending=False, stable=True",
                ("x",)),
    "searchsorted": ("x1, x2, /, side='left', sorter=None", ("x1", "x2")),
    "isin": ("x1, x2, /, assume_unique=False, invert=False, *, kind=None", ("x1", "x2")),
    # manipulation
    "concat": ("arrays, /, axis=0, out=None, *, dtype=None, casting='same_kind'", ()),
    "concatenate": ("arrays, /, axis=0, out=None, *, dtype=None, casting='same_kind'", ()),
    "stack": ("arrays, /, axis=0, out=None, *, dtype=None, casting='same_kind'", ()),
    "roll": ("x, /, shift, axis=None", ("x",)),
    "flip": ("x, /, axis=None", ("x",)),
    "repeat": ("x, repeats, /, axis=None", ("x",)),
    "reshape": ("x, /, shape, order='C', *, copy=None", ("x",)),
    "broadcast_to": ("x, /, shape, subok=False", ("x",)),
    "take": ("x, indices, /, axis=None, out=None, mode='raise'", ("x", "indices")),
    "take_along_axis": ("x, indices, /, axis=-1", ("x", "indices")),
    "tensordot": ("x1, x2, /, axes=2", ("x1", "x2")),
    "diff": ("x, /, n=1, axis=-1, prepend=None, append=None", ("x",)),
    "tril": ("x, /, k=0", ("x",)),
    "triu": ("x, /, k=0", ("x",)),
    "dot": ("a, b, /, out=None", ("a", "b")),
    "outer": ("a, b, /, out=None", ("a", "b")),
    # NumPy's positional a_min/a_max are the standard's min/max (same meaning and place)
    "clip": ("x, /, min=None, max=None, out=None, *, a_min=_NV, a_max=_NV", ("x",)),
    "round": ("x, /, decimals=0, out=None", ("x",)),
    "can_cast": ("from_, to, /, casting='safe'", ()),
    # creation
    "zeros": ("shape, dtype=None, order='C', *, device=None, like=None", ()),
    "ones": ("shape, dtype=None, order='C', *, device=None, like=None", ()),
    "empty": ("shape, dtype=None, order='C', *, device=None, like=None", ()),
    "full": ("shape, fill_value, dtype=None, order='C', *, device=None, like=None", ()),
    "zeros_like": ("x, /, dtype=None, order='K', subok=True, shape=None, *, device=None",
                   ("x",)),
    "ones_like": ("x, /, dtype=None, order='K', subok=True, shape=None, *, device=None",
                  ("x",)),
    "empty_like": ("x, /, dtype=None, order='K', subok=True, shape=None, *, device=None",
                   ("x",)),
    "full_like": ("x, /, fill_value, dtype=None, order='K', subok=True, shape=None, *, "
                  "device=None", ("x",)),
    "asarray": ("obj, /, dtype=None, order=None, *, device=None, copy=None, like=None", ()),
    "eye": ("n_rows, n_cols=None, /, k=0, dtype=None, order='C', *, device=None, like=None, "
            "M=None",
            ()),
    "linspace": ("start, stop, /, num=50, endpoint=True, retstep=False, dtype=None, axis=0, "
                 "*, device=None", ()),
    "arange": ("start, /, stop=None, step=1, dtype=None, *, device=None, like=None", ()),
}
_STATIC_NAMES = frozenset(SIGNATURES)   # the table as written; install() adds array-likes
# parameters taking a Python scalar, where NumPy also takes a 0-d array (``a.max()``)

SCALAR_PARAMS = {"arange": ("start", "stop", "step"),
                 "full": ("fill_value",), "full_like": ("fill_value",)}
# parameters where NumPy also takes arrays (broadcast together): unless each is a Python
# scalar, the call goes to the function named, which takes the whole signature
ARRAY_FORMS = {"linspace": (("start", "stop"), linspace_arrays)}
_SCALAR_TYPES = (bool, int, float, complex, type(None))
# parameters taking a sequence of arrays (each element array-like, as in NumPy)
SEQUENCE_PARAMS = {"concat": "arrays", "concatenate": "arrays", "stack": "arrays"}


def device_of(values: Any) -> Any:
    """The device of the first array among ``values`` (None: the default device)."""
    return next((v.device for v in values if is_array(v)), None)


def as_arrays(seq: Any, fname: str) -> Any:
    """A sequence of array-likes with every element an array, next to the first array."""
    if not isinstance(seq, (list, tuple)) or all(type(a) is Array for a in seq):
        return seq
    device = next((a.device for a in seq if is_array(a)), None)
    return [as_array(a, fname, device) for a in seq]

_INDEX_FUNCTIONS = frozenset({"take", "take_along_axis"})
_SORT_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")
_REDUCE_UFUNC = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum",
                 "all": "logical_and", "any": "logical_or"}




def as_array(x: Any, fname: str, device: Any = None) -> Any:
    """An array parameter: clnp arrays and tracers as they are; NumPy arrays, Python scalars
    and (nested) lists/tuples uploaded once with NumPy's dtype rules."""
    if is_array(x):
        return x
    if isinstance(x, (list, tuple)):
        h = np.asarray(x)
        if h.size == 0 and fname in _INDEX_FUNCTIONS:
            h = h.astype(np.int64)       # NumPy indexes with an empty list
        return _ns().asarray(h, device=device)
    if isinstance(x, (np.ndarray, np.generic, bool, int, float, complex)):
        return _ns().asarray(x, device=device)
    return x        # the standard function raises its own TypeError naming the argument


def as_scalar(v: Any, fname: str, name: str) -> Any:
    """A 0-d array (clnp or NumPy) as the Python scalar it holds (one device read)."""
    if isinstance(v, np.generic):
        return v                        # NumPy scalars keep their dtype
    if fname in ("full", "full_like"):
        return v        # full fills from an array itself (no read), broadcast as in NumPy
    if getattr(v, "ndim", None) == 0 and isinstance(v, (Array, np.ndarray)):
        return v[()] if isinstance(v, np.ndarray) else v.to_numpy()[()]
    if isinstance(v, (Array, np.ndarray)):
        raise TypeError(f"{fname}: {name} must be a scalar or a 0-d array; got an array of "
                        f"shape {v.shape} (NumPy's array-valued {name} is not supported)")
    return v


def _order(order: Any, fname: str, ndim: int, allowed: tuple = ("C", "K", "A", None)) -> None:
    if order in allowed or (order == "F" and ndim < 2):
        return
    if order == "F":
        raise ValueError(f"{fname}: order='F' is not supported: clnp arrays are C-ordered "
                         f"(create the array in C order; transposes are free views)")
    raise ValueError(f"{fname}: order must be one of 'C', 'F', 'A', 'K'; got {order!r}")


def _default(value: Any, default: Any) -> bool:
    if default is _NV or default is None or isinstance(default, bool):
        return value is default
    return type(value) is type(default) and value == default


def _extras(fname: str, orig: Callable[..., Any], args: dict[str, Any],
            extra: dict[str, Any], defaults: dict[str, Any]) -> Any:
    """Call ``orig`` with the standard's ``args`` plus NumPy's ``extra`` parameters, at least
    one of which differs from its default."""
    ns = _ns()
    given = {k: v for k, v in extra.items() if not _default(v, defaults[k])}
    out = given.pop("out", None)
    for k in ("like",):
        if k in given:
            raise TypeError(f"{fname}: like= (array-protocol creation) is not supported; "
                            f"pass device= instead")
    if given.pop("subok", True) is False:
        pass        # clnp has no array subclasses: subok changes nothing
    if "kind" in given:
        kind = given.pop("kind")
        if fname in ("sort", "argsort") and kind not in _SORT_KINDS:
            raise ValueError(f"{fname}: kind must be one of {_SORT_KINDS[1:]}; got {kind!r}")
        # clnp's sorts are stable, a valid result for every kind; isin's kind is a strategy
    if "order" in given:
        order = given.pop("order")
        if fname in ("sort", "argsort"):
            raise TypeError(f"{fname}: order= names fields of structured arrays, which clnp "
                            f"does not have")
        x = args.get("x", args.get("obj"))
        shape = args.get("shape", extra.get("shape"))
        ndim = len(shape) if isinstance(shape, (tuple, list)) else \
            1 if shape is not None and fname not in ("zeros_like", "ones_like", "empty_like",
                                                     "full_like") else \
            getattr(x, "ndim", np.ndim(x) if x is not None else 2)
        if fname == "reshape":
            # the method reads and writes in Fortran index order through transposed views
            return as_array(args["x"], fname).reshape(args["shape"], order=order,
                                                      copy=args.get("copy"))
        _order(order, fname, ndim)
    given.pop("assume_unique", None)        # a hint: the result is the same
    if "ddof" in given:
        if not _default(args.get("correction", 0.0), 0.0):
            raise TypeError(f"{fname}: got both ddof and correction (they are the same "
                            f"parameter; pass one)")
        args["correction"] = given.pop("ddof")
    if fname in _REDUCE_UFUNC and ("initial" in given or "where" in given):
        u = getattr(ns, _REDUCE_UFUNC[fname])
        x = args.pop("x")
        kw = {k: given.pop(k) for k in ("initial", "where") if k in given}
        if fname in ("all", "any"):
            x = x if x.dtype == dt.bool_ else ns.not_equal(x, 0)
        res = u.reduce(x, axis=args.get("axis"), keepdims=args.get("keepdims", False),
                       **({"dtype": args["dtype"]} if args.get("dtype") is not None else {}),
                       **kw)
        return write_out(fname, res, out, _out_casting(fname))
    if fname == "mean" and "where" in given:
        m = as_array(given.pop("where"), fname, args["x"].device)
        x = args["x"]
        m = ns.broadcast_to(m, x.shape)
        s = ns.sum(ns.where(m, x, 0), axis=args.get("axis"), keepdims=args.get("keepdims"))
        c = ns.sum(m, axis=args.get("axis"), keepdims=args.get("keepdims"))
        res = ns.divide(s, c)
        given.pop("dtype", None)
        return write_out(fname, res, out, _out_casting(fname))
    if "where" in given:
        raise TypeError(f"{fname}: where= is not supported (mask the input with clnp.where)")
    result_dtype = None
    if fname in ("var", "std", "mean") and "dtype" in given:
        x, d = args["x"], dt.as_dtype(given.pop("dtype"), fname)
        if d == dt.bool_:      # as sum's: NumPy's bool accumulation is a logical or
            raise TypeError(f"{fname}: dtype=bool is not a numeric dtype")
        # NumPy's dtype= is the accumulator's and the result's (an integer one truncates, a
        # complex one makes var/std complex)
        result_dtype = d
        args["x"] = x.astype(d)
    if fname in ("concat", "concatenate", "stack") and ("dtype" in given or
                                                         "casting" in given):
        d = given.pop("dtype", None)
        casting = given.pop("casting", "same_kind")
        arrays = [as_array(a, fname) for a in args["arrays"]]
        if d is not None:
            d = dt.as_dtype(d, fname)
            for a in arrays:
                if not np.can_cast(a.dtype, d, casting):
                    raise TypeError(f"{fname}: cannot cast array data from {a.dtype!r} to "
                                    f"{d!r} according to the rule '{casting}'")
            arrays = [a.astype(d) for a in arrays]
        args["arrays"] = arrays
    if fname == "can_cast" and "casting" in given:
        casting = given.pop("casting")
        src = args["from_"]
        src = src.dtype if hasattr(src, "dtype") and not isinstance(src, (np.dtype, type)) \
            else src
        return bool(np.can_cast(dt.as_dtype(src, fname), dt.as_dtype(args["to"], fname),
                                casting))
    if fname == "take" and "mode" in given:
        mode = given.pop("mode")
        x, idx = args["x"], args["indices"]
        n = x.size if args.get("axis") is None else x.shape[args["axis"]]
        if mode == "wrap":
            args["indices"] = ns.remainder(idx, n)
        elif mode == "clip":
            args["indices"] = ns.clip(idx, 0, n - 1)
        elif mode != "raise":
            raise ValueError(f"take: mode must be 'raise', 'wrap' or 'clip'; got {mode!r}")
    if fname == "clip":
        for np_name, std in (("a_min", "min"), ("a_max", "max")):
            if np_name in given:
                if args.get(std) is not None:
                    raise TypeError(f"clip: got both {np_name} and {std}")
                args[std] = given.pop(np_name)
    if fname == "round" and "decimals" in given:
        return write_out(fname, ns.around(args["x"], given.pop("decimals")), out,
                         _out_casting(fname))
    if fname.endswith("_like") and "shape" in given:
        x, shape = args.pop("x"), given.pop("shape")
        maker = {"zeros_like": ns.zeros, "ones_like": ns.ones, "empty_like": ns.empty,
                 "full_like": ns.full}[fname]
        d = args.pop("dtype", None) or x.dtype
        dev = args.pop("device", None) or x.device
        res = maker(shape, *([args.pop("fill_value")] if fname == "full_like" else []),
                    dtype=d, device=dev)
        return write_out(fname, res, out, _out_casting(fname))
    if fname == "eye" and "M" in given:     # NumPy's name of the column count
        if args.get("n_cols") is not None:
            raise TypeError("eye: got both n_cols (NumPy's M, positional) and M=")
        args["n_cols"] = given.pop("M")
    retstep = given.pop("retstep", False) if fname == "linspace" else False
    if fname == "linspace" and "axis" in given:
        ax = given.pop("axis")
        if ax not in (0, -1):       # scalar bounds give one dimension, as in NumPy
            raise axis_error(ax, 1, "linspace")
    if given:
        raise TypeError(f"{fname}: argument(s) {sorted(given)} not supported with these "
                        f"values: {given}")
    res = _call(orig, args)
    if result_dtype is not None:
        res = res.astype(result_dtype)
    if retstep:
        n = args["num"]
        div = (n - 1) if args.get("endpoint", True) else n
        step = (args["stop"] - args["start"]) / div if div > 0 else float("nan")
        return res, step
    _check_out_dtype(fname, args.get("x"), out)
    return write_out(fname, res, out, _out_casting(fname))


# NumPy casts into ``out=`` unsafely for its reductions, scans, arg-reductions and takes (a
# float sum into an int8 or bool out is allowed), under same_kind for ufunc-based functions
# (clip, round, std's sqrt, ptp's subtract, quantiles' lerp)
_UNSAFE_OUT = frozenset({
    "sum", "prod", "max", "min", "amax", "amin", "all", "any", "mean", "var", "cumsum",
    "cumprod", "argmax", "argmin", "take", "nansum", "nanprod", "nanmax", "nanmin",
    "cumulative_sum", "cumulative_prod", "trace", "nancumsum", "nancumprod", "median",
    "nanmedian", "compress", "choose"})


def _out_casting(fname: str) -> str:
    return "unsafe" if fname in _UNSAFE_OUT else "same_kind"


def _check_out_dtype(fname: str, x: Any, out: Any) -> None:
    """NumPy's own rule on ``out``'s dtype for ``take`` (it must cast safely to the array's
    dtype) and the arg-reductions (to intp), before the unsafe cast of the result."""
    d = getattr(out, "dtype", None)
    if d is None:
        return
    to = dt.int64 if fname in ("argmax", "argmin") else getattr(x, "dtype", None)
    if to is not None and fname in ("take", "argmax", "argmin") and \
            not np.can_cast(d, to, "safe"):
        raise TypeError(f"{fname}: cannot cast scalar from {d!r} to {to!r} according to the "
                        f"rule 'safe' (NumPy's rule for out=)")


def _call(orig: Callable[..., Any], args: dict[str, Any]) -> Any:
    sig = inspect.signature(orig)
    pos, kw = [], {}
    for p in sig.parameters.values():
        if p.name not in args:
            continue
        if p.kind is p.POSITIONAL_ONLY:
            pos.append(args[p.name])
        elif p.kind is p.VAR_POSITIONAL:
            pos.extend(args[p.name])
        else:
            kw[p.name] = args[p.name]
    return orig(*pos, **kw)


def numpy_signature(name: str, orig: Callable[..., Any]) -> Callable[..., Any]:
    """The function ``name`` with the signature of :data:`SIGNATURES`, calling ``orig``."""
    return _build([(name, orig)])[0]


def _probes(names: Sequence[str]) -> dict[str, inspect.Signature]:
    """The signatures of :data:`SIGNATURES`' entries for ``names``, from one compiled
    source (a compile per entry cost most of the 0.03 s ``install`` took at import)."""
    env: dict[str, Any] = {"_NV": _NV}
    exec("".join(f"def _probe_{n}({SIGNATURES[n][0]}): pass\n" for n in names), env)  # noqa: S102
    return {n: inspect.signature(env[f"_probe_{n}"]) for n in names}


def _literal(value: Any) -> str:
    """Source text of a default value in :data:`SIGNATURES` (a literal, or NoValue)."""
    if value is _NV:
        return "_NV"
    if not isinstance(value, _LITERALS) or eval(repr(value)) != value:  # noqa: S307
        raise AssertionError(f"default {value!r} does not round-trip through its repr")
    return repr(value)


def _wrapper_source(name: str, orig: Callable[..., Any], new: inspect.Signature) -> str:
    """The source of ``_make_<name>(_orig, _array_form=None)``, a factory returning the
    wrapper of ``orig`` with the signature ``new``. Its free names are those of
    :data:`WRAPPER_GLOBALS`."""
    text, arrays = SIGNATURES[name]
    old = inspect.signature(orig).parameters
    missing = [n for n, p in old.items() if n not in new.parameters and
               p.default is inspect.Parameter.empty and p.kind is not p.VAR_KEYWORD]
    if missing:
        raise AssertionError(f"{name}: NumPy signature drops required {missing}")
    extras = [n for n in new.parameters if n not in old]
    std = [n for n in new.parameters if n in old]
    call = []
    for n in std:
        kind = old[n].kind
        call.append(n if kind is inspect.Parameter.POSITIONAL_ONLY else f"{n}={n}")
    defaults_of = {n: new.parameters[n].default for n in extras}
    plain = " and ".join(
        f"{n} is _d_{n}" if defaults_of[n] is _NV or defaults_of[n] is None or
        isinstance(defaults_of[n], bool) else f"{n} == _d_{n}" for n in extras) or "True"
    conv = ""
    if arrays:      # array-likes go to the device of the array operands
        tup = "(" + ", ".join(arrays) + ",)"
        conv = (f"        if {' or '.join(f'type({a}) is not _Array' for a in arrays)}:\n"
                f"            _dev = _device_of({tup})\n" +
                "".join(f"            if type({a}) is not _Array:\n"
                        f"                {a} = _as_array({a}, {name!r}, _dev)\n"
                        for a in arrays))
    if name in ARRAY_FORMS:
        params, _ = ARRAY_FORMS[name]
        every = ", ".join(f"{n}={n}" for n in new.parameters)
        conv += (f"        if {' or '.join(f'type({a}) not in _SCALAR_TYPES' for a in params)}:\n"
                 f"            return _array_form({every})\n")
    conv += "".join(f"        if type({a}) not in _SCALAR_TYPES:\n"
                    f"            {a} = _as_scalar({a}, {name!r}, {a!r})\n"
                    for a in SCALAR_PARAMS.get(name, ()))
    if name in SEQUENCE_PARAMS:
        p = SEQUENCE_PARAMS[name]
        conv += f"        {p} = _as_arrays({p}, {name!r})\n"
    defaults = "".join(f"    _d_{n} = {_literal(d)}\n" for n, d in defaults_of.items())
    table = ", ".join(f"{n!r}: {_literal(d)}" for n, d in defaults_of.items())
    return (f"def _make_{name}(_orig, _array_form=None):\n"
            f"    _defaults = {{{table}}}\n"
            f"{defaults}"
            f"    def {name}({text}):\n{conv}"
            f"        if {plain}:\n            return _orig({', '.join(call)})\n"
            f"        return _extras({name!r}, _orig, {{{', '.join(f'{n!r}: {n}' for n in std)}}}, "
            f"{{{', '.join(f'{n!r}: {n}' for n in extras)}}}, _defaults)\n"
            f"    return {name}\n")


def _wrapper_globals() -> dict[str, Any]:
    """The free names of the wrappers' source (:func:`_wrapper_source`)."""
    return {"_NV": _NV, "_extras": _extras, "_Array": Array, "_as_array": as_array,
            "_as_scalar": as_scalar, "_as_arrays": as_arrays, "_device_of": device_of,
            "_SCALAR_TYPES": _SCALAR_TYPES}


def _finish(makers: dict[str, Callable[..., Any]],
            entries: Sequence[tuple[str, Callable[..., Any]]]) -> list[Callable[..., Any]]:
    """The wrappers of ``entries`` (name, function), made by their factories ``makers``."""
    out = []
    for name, orig in entries:
        f = makers[f"_make_{name}"](orig, ARRAY_FORMS[name][1] if name in ARRAY_FORMS else None)
        f.__doc__, f.__module__, f.__qualname__ = orig.__doc__, orig.__module__, name
        f.__wrapped_standard__ = orig
        out.append(f)
    return out


def _build(entries: Sequence[tuple[str, Callable[..., Any]]]) -> list[Callable[..., Any]]:
    """The NumPy-signature wrappers of ``entries`` (name, function), compiled together."""
    probes = _probes([n for n, _ in entries])
    env = _wrapper_globals()
    exec("".join(_wrapper_source(n, orig, probes[n]) for n, orig in entries), env)  # noqa: S102
    return _finish(env, entries)


_ARRAY_PARAM_NAMES = ("x", "x1", "x2")
_LITERALS = (type(None), bool, int, float, str)


def array_like_signature(orig: Callable[..., Any]) -> tuple[str, tuple[str, ...]] | None:
    """A :data:`SIGNATURES` entry keeping ``orig``'s own signature and making its standard
    array parameters (``x``, ``x1``, ``x2``, positional-only) take array-likes; None when it
    has none, or a default that does not round-trip through its repr."""
    try:
        sig = inspect.signature(orig)
    except (TypeError, ValueError):
        return None
    arrays = tuple(n for n, p in sig.parameters.items()
                   if n in _ARRAY_PARAM_NAMES and p.kind is p.POSITIONAL_ONLY)
    if not arrays or any(p.default is not p.empty and not isinstance(p.default, _LITERALS)
                         for p in sig.parameters.values()):
        return None
    plain = sig.replace(parameters=[p.replace(annotation=p.empty)
                                    for p in sig.parameters.values()],
                        return_annotation=sig.empty)
    return str(plain)[1:-1], arrays


GENERATED_MODULE = "signatures_generated"
_installed: dict[str, Any] = {}     # what the last install() wrapped, and how


def _shape(f: Any) -> Any:
    """What a wrapper depends on in function ``f``: its parameters' names, kinds and
    literal defaults, read from the code object (``inspect.signature`` for the 170 functions
    cost more than the wrappers' whole compile)."""
    if isinstance(f, type) or not callable(f):
        return type(f).__name__
    f = inspect.unwrap(f)
    sig = getattr(f, "__signature__", None)
    if sig is not None:
        return str(sig)
    code = getattr(f, "__code__", None)
    if code is None:
        return f"<{type(f).__name__}>"
    n = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & inspect.CO_VARARGS) \
        + bool(code.co_flags & inspect.CO_VARKEYWORDS)

    def lit(v: Any) -> str:
        return repr(v) if isinstance(v, _LITERALS) else f"<{type(v).__name__}>"
    return (code.co_posonlyargcount, code.co_argcount, code.co_kwonlyargcount,
            code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS),
            code.co_varnames[:n], [lit(v) for v in f.__defaults__ or ()],
            sorted((k, lit(v)) for k, v in (f.__kwdefaults__ or {}).items()))


def _fingerprint(namespace: dict[str, Any], array_like: Sequence[str]) -> str:
    """A digest of everything the wrappers' source depends on: the tables of this module and
    the parameters of each function wrapped or considered (and which names are aliases)."""
    names = list(SIGNATURES) + [n for n in array_like if n not in SIGNATURES]
    first: dict[int, str] = {}
    rows = []
    for n in names:
        f = namespace.get(n)
        rows.append((n, _shape(f), first.setdefault(id(f), n) if f is not None else None))
    tables = (SIGNATURES, {k: v[0] for k, v in ARRAY_FORMS.items()}, SCALAR_PARAMS,
              SEQUENCE_PARAMS)
    text = repr((rows, tables)).encode()
    # binascii, not hashlib: 4 ms of import clnp for a digest that only detects staleness
    return f"{binascii.crc32(text):08x}{binascii.crc_hqx(text, 0):04x}{len(text):x}"


def _entries(namespace: dict[str, Any]) -> list[tuple[str, Callable[..., Any]]]:
    """(name, function) of each function of :data:`SIGNATURES` in ``namespace``, once per
    function object: an alias is wrapped under its first name."""
    entries: dict[int, tuple[str, Callable[..., Any]]] = {}
    for name in SIGNATURES:
        orig = namespace.get(name)
        if orig is None or not callable(orig) or hasattr(orig, "__wrapped_standard__") or \
                id(orig) in entries:
            continue
        entries[id(orig)] = (name, orig)
    return list(entries.values())


def install(namespace: dict[str, Any], array_like: tuple[str, ...] = ()) -> None:
    """Replace each function of :data:`SIGNATURES` in ``namespace`` (the package's globals)
    by its NumPy-signature wrapper; NumPy aliases of the same function follow. The functions
    named in ``array_like`` keep their signatures and take array-likes for their array
    parameters.

    The wrappers come from the generated module ``signatures_generated.py`` when its
    fingerprint matches the functions and tables as they are (Python caches its bytecode, so
    nothing is compiled at import); otherwise they are generated and compiled here, with the
    same result. ``python tools/signature_wrappers.py`` writes the module again, and
    tests/test_numpy_signatures.py fails while it is stale.
    """
    fingerprint = _fingerprint(namespace, array_like)
    try:
        from . import signatures_generated as generated
    except ImportError:
        generated = None
    if generated is not None and generated.FINGERPRINT == fingerprint:
        SIGNATURES.update(generated.ARRAY_LIKE)
        entries = _entries(namespace)
        new = _finish(vars(generated), entries)
        how = "generated"
    else:
        array_like_entries = {}
        for name in array_like:
            f = namespace.get(name)
            if name not in SIGNATURES and callable(f) and not isinstance(f, type):
                entry = array_like_signature(f)
                if entry is not None:
                    array_like_entries[name] = entry
        SIGNATURES.update(array_like_entries)
        entries = _entries(namespace)
        new = _build(entries)
        how = "built"
    _installed.update(fingerprint=fingerprint, entries=entries, how=how,
                      array_like={n: SIGNATURES[n] for n in SIGNATURES
                                  if n in array_like and n not in _STATIC_NAMES})
    wrapped = {id(orig): f for (_, orig), f in zip(entries, new)}
    originals = {id(orig): orig for _, orig in entries}
    for k, v in list(namespace.items()):     # every name of a wrapped function (aliases)
        if originals.get(id(v)) is v:
            namespace[k] = wrapped[id(v)]
    for mod in ("linalg", "fft"):              # extensions re-export some (linalg.tensordot)
        m = namespace.get(mod)
        for k, v in list(vars(m).items()) if m is not None else ():
            if originals.get(id(v)) is v:
                setattr(m, k, wrapped[id(v)])


def installed_from() -> str:
    """How the last :func:`install` made the wrappers: ``"generated"`` (from the generated
    module) or ``"built"`` (compiled at import, the generated module being stale or absent).

    Examples
    --------
    >>> import clnp
    >>> from clnp._numpy.signatures import installed_from
    >>> installed_from() in ("generated", "built")
    True
    """
    return _installed["how"]


def generated_module_source() -> str:
    """The text of ``signatures_generated.py`` for the functions the last :func:`install`
    wrapped (``python tools/signature_wrappers.py`` writes it)."""
    entries = _installed["entries"]
    probes = _probes([n for n, _ in entries])
    body = "\n\n".join(_wrapper_source(n, orig, probes[n]) for n, orig in entries)
    array_like = "".join(f"    {n!r}: {v!r},\n" for n, v in _installed["array_like"].items())
    return (f'"""NumPy-signature wrappers of the namespace functions: GENERATED by\n'
            f"``python tools/signature_wrappers.py`` from clnp/_numpy/signatures.py. "
            f"Do not edit.\n\n"
            f"``signatures.install`` uses this module while FINGERPRINT matches the functions and\n"
            f"tables it was made from, and builds the same wrappers at import otherwise.\n"
            f'"""\n# flake8: noqa\n# fmt: off\n'
            f"from .signatures import _wrapper_globals\n\n"
            f"globals().update(_wrapper_globals())\n\n"
            f"FINGERPRINT = {_installed['fingerprint']!r}\n\n"
            f"ARRAY_LIKE = {{\n{array_like}}}\n\n\n{body}")
