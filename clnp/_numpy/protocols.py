"""NumPy's dispatch protocols for clnp arrays: ``__array_ufunc__`` (NEP 13) and
``__array_function__`` (NEP 18).

With them ``numpy.exp(x)``, ``numpy.add(x, y)``, ``x_numpy + x``, ``numpy.mean(x, axis=0)``,
``numpy.concatenate([x, y])``, ``numpy.where(c, x, y)``... on clnp arrays run in clnp, on
the device, and return clnp arrays. NumPy arrays among the arguments (also inside lists and
tuples) are uploaded to the device of the first clnp array; NumPy and Python scalars are
passed as they are (NumPy scalars are strongly typed, as in NumPy 2).

Ufuncs
    ``__call__`` maps the ufunc's name to the clnp function of that name (``absolute``,
    ``power``, ``arctan2``, ``true_divide``, ``rint``, ``fmax``, ``divmod``, ``matmul``,
    ``vecdot``, ``matvec``...). Keywords: ``out`` (clnp arrays only; the result is cast to
    it under ``casting``, default ``'same_kind'``), ``where`` (positions where it is false
    keep ``out``'s values), ``dtype`` (inputs are cast to it first); ``order``/``subok``
    are ignored. Methods: ``reduce`` for ``add`` (sum), ``multiply`` (prod),
    ``maximum``/``minimum`` (max/min), ``fmax``/``fmin`` (nanmax/nanmin), ``logical_and``/
    ``logical_or`` (all/any), with ``axis`` (default 0), ``dtype``, ``keepdims``,
    ``initial``, ``out``; ``accumulate`` for ``add`` (cumsum) and ``multiply`` (cumprod);
    ``outer`` for every binary ufunc (by broadcasting).

Functions
    ``numpy.<name>`` maps to ``clnp.<name>`` (``numpy.round``/``around``/``round_`` to
    :func:`clnp.around`; ``numpy.linalg.<name>``/``numpy.fft.<name>`` to ``clnp.linalg``/
    ``clnp.fft`` when those modules exist). Arguments are bound to NumPy's signature and
    passed by position or name as the clnp function takes them (``ddof`` becomes
    ``correction``, ``a_min``/``a_max`` become ``min``/``max``); ``out=`` must be a clnp
    array and receives the result; a ``dtype=`` the clnp function lacks casts the result;
    ``order='C'``/``'K'``, ``subok``, ``kind``, ``casting``, ``overwrite_input``,
    ``assume_unique`` and ``optimize`` are ignored (clnp arrays are C-ordered, sorts are
    stable). Any other
    NumPy argument clnp does not support raises TypeError naming it.

Not supported (clnp raises a TypeError that names the function and says what to use
instead: a clnp spelling where one exists, else ``numpy.f(numpy.asarray(x))`` on the host)
    * ufuncs clnp has no function for (``isnat``); methods of ufuncs that are plain clnp
      functions (``fmax``, ``rint``, ...) other than ``fmax``/``fmin`` ``reduce`` and
      ``outer``; the gufunc keywords ``axes``/``axis``/``keepdims``/``signature`` on
      ``__call__``.
    * every NumPy function without a clnp namesake, e.g. ``vectorize``, the ``datetime``
      functions, ``numpy.ma``, ``numpy.char``, ``numpy.random``; and
      ``numpy.linalg``/``numpy.fft`` functions when ``clnp.linalg``/``clnp.fft`` lack them.
      (``cbrt``, ``gcd``, ``gradient``, ``polyfit``, ``partition``, ``insert``, ``kron``,
      ``unravel_index``, ``packbits`` and the other names of issue #12 item 3 are clnp
      functions now: NumPy calls on clnp arrays run them.)
    * ``out=`` that is not a clnp array (e.g. ``numpy_array += clnp_array``): TypeError.
    * arguments of types other than clnp arrays, NumPy arrays (exactly ``numpy.ndarray``;
      subclasses such as masked arrays are refused), scalars and sequences.
    Convert explicitly (``numpy.asarray(x)`` or ``clnp.asnumpy(x)``) to use those on the
    host.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from .._core.array import Array
from .._core.namespace import namespace as _clnp
from .._core import attached as _attached

_P = inspect.Parameter
_NOVALUE = getattr(np, "_NoValue", object())

# NumPy name -> clnp name where they differ
_RENAMES = {"round": "around", "round_": "around"}
# NumPy argument name -> clnp argument name
_ARG_RENAMES = {"ddof": "correction", "a_min": "min", "a_max": "max"}
_IGNORED_ARGS = frozenset({"order", "subok", "kind", "casting", "overwrite_input",
                           "assume_unique", "optimize"})
_KEEP_ARGS = {"can_cast": {"casting"}, "ravel": {"order"}}
_UFUNC_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
                 "fmax": "nanmax", "fmin": "nanmin", "logical_and": "all",
                 "logical_or": "any"}
_UFUNC_ACCUMULATE = {"add": "cumsum", "multiply": "cumprod"}
_UFUNC_RENAMES = {"rint": "rint", "fabs": "fabs"}
_SIGNATURES: dict[Any, Any] = {}
# parameter names under which the standard's functions take arrays
_ARRAY_PARAMS = frozenset({"x", "x1", "x2"})




def _signature(f: Any) -> inspect.Signature | None:
    try:
        return _SIGNATURES[f]
    except KeyError:
        pass
    except TypeError:       # unhashable callable
        return None
    try:
        sig: inspect.Signature | None = inspect.signature(f)
    except (TypeError, ValueError):
        sig = None
    _SIGNATURES[f] = sig
    return sig


def _find_device(obj: Any) -> Any:
    if isinstance(obj, Array):
        return obj.device
    if isinstance(obj, (list, tuple)):
        for o in obj:
            d = _find_device(o)
            if d is not None:
                return d
    if isinstance(obj, dict):
        return _find_device(list(obj.values()))
    return None


def _upload(obj: Any, device: Any) -> Any:
    """NumPy arrays (also inside lists/tuples) as clnp arrays on ``device``."""
    if type(obj) is np.ndarray:
        return _clnp().asarray(obj, device=device)
    if type(obj) in (list, tuple):
        return type(obj)(_upload(o, device) for o in obj)
    return obj


def _check_out(out: Any, where: str) -> tuple:
    outs = out if isinstance(out, tuple) else (out,)
    for o in outs:
        if o is not None and not isinstance(o, Array):
            raise TypeError(f"{where}: out= must be a clnp array when the inputs are clnp "
                            f"arrays; got {type(o).__module__}.{type(o).__name__} (convert "
                            f"the inputs with numpy.asarray to compute on the host)")
    return outs


def _store(res: Any, out: Array, where: str, casting: str | None) -> Array:
    rd = np.dtype(res.dtype) if hasattr(res, "dtype") else np.asarray(res).dtype
    if casting is not None and casting != "unsafe" and \
            not np.can_cast(rd, out.dtype, casting):
        raise TypeError(f"{where}: cannot cast the result from {rd} to the out= array's "
                        f"dtype {out.dtype} with casting rule {casting!r}")
    out[...] = res
    return out


# ------------------------------------------------------------------ __array_ufunc__
def _ufunc_impl(name: str) -> Callable[..., Any] | None:
    ns = _clnp()
    if name == "matvec":
        return lambda a, v: ns.matmul(a, ns.expand_dims(v, axis=-1))[..., 0]
    if name == "vecmat":
        return lambda v, a: ns.matmul(ns.expand_dims(ns.conj(v) if v.dtype.kind == "c"
                                                     else v, axis=-2), a)[..., 0, :]
    f = getattr(ns, _UFUNC_RENAMES.get(name, name), None)
    return f if callable(f) else None


def _ufunc_operand(x: Any, device: Any) -> Any:
    if type(x) is np.ndarray:
        return _clnp().asarray(x, device=device)
    if isinstance(x, (list, tuple)):
        return _clnp().asarray(x, device=device)
    return x


def array_ufunc(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict) -> Any:
    """``Array.__array_ufunc__``: run ``ufunc`` (or one of its methods) in clnp."""
    ns = _clnp()
    name = ufunc.__name__
    where_s = f"numpy.{name}" + ("" if method == "__call__" else f".{method}")
    for x in inputs:
        if not isinstance(x, (Array, np.ndarray, np.generic, bool, int, float, complex,
                              list, tuple)) or (isinstance(x, np.ndarray) and
                                                type(x) is not np.ndarray):
            return NotImplemented
    kwargs = dict(kwargs)
    out = kwargs.pop("out", None)
    outs = _check_out(out, where_s) if out is not None else None
    casting = kwargs.pop("casting", "same_kind")
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("order", None)
    kwargs.pop("subok", None)
    device = next((d for d in (_find_device(x) for x in inputs + (outs or ())) if d), None)
    args = [_ufunc_operand(x, device) for x in inputs]
    own = getattr(ns, name, None)
    if method != "__call__" and isinstance(own, ns.ufunc):
        # clnp's ufunc of the same name implements every method (at, reduceat included)
        if dtype is not None:
            kwargs["dtype"] = dtype
        if method == "at":
            if outs is not None or kwargs:
                raise TypeError(f"{where_s} on clnp arrays: unexpected argument(s) "
                                f"{sorted(kwargs) + (['out'] if outs else [])}")
            if not isinstance(args[0], Array):
                raise TypeError(f"{where_s}: the array updated in place must be a clnp array "
                                f"when the other operands are clnp arrays")
            return own.at(*args)
        res = getattr(own, method)(*args, **kwargs)
        if outs is None:
            return res
        return _store(res, outs[0], where_s, casting if method == "outer" else "unsafe")
    if method == "__call__":
        where = kwargs.pop("where", True)
        sig = kwargs.pop("signature", None)
        if sig is not None or kwargs:
            bad = sorted(kwargs) + (["signature"] if sig is not None else [])
            raise TypeError(f"{where_s} on clnp arrays: argument(s) {bad} are not supported")
        f = _ufunc_impl(name)
        if f is None:
            raise TypeError(not_implemented_message(ufunc))
        if dtype is not None:
            d = ns._dtypes.as_dtype(dtype)
            args = [ns.astype(a, d) if isinstance(a, Array) else a for a in args]
            if not any(isinstance(a, Array) for a in args):
                args[0] = ns.asarray(args[0], dtype=d, device=device)
        res = f(*args)
        results = res if isinstance(res, tuple) else (res,)
        if where is not True:
            mask = _ufunc_operand(where, device)
            if outs is not None:
                results = tuple(r if o is None else ns.where(mask, r, o)
                                for r, o in zip(results, outs))
    elif method == "reduce":
        target = _UFUNC_REDUCE.get(name)
        if target is None or len(args) != 1:
            raise TypeError(not_implemented_message(ufunc, method))
        x = args[0] if isinstance(args[0], Array) else ns.asarray(args[0], device=device)
        axis = kwargs.pop("axis", 0)
        keepdims = kwargs.pop("keepdims", False)
        initial = kwargs.pop("initial", _NOVALUE)
        where = kwargs.pop("where", True)
        if kwargs or where is not True:
            bad = sorted(kwargs) + (["where"] if where is not True else [])
            raise TypeError(f"{where_s} on clnp arrays: argument(s) {bad} are not supported")
        fn = getattr(ns, target)
        kw: dict[str, Any] = {"axis": tuple(axis) if isinstance(axis, list) else axis,
                              "keepdims": keepdims}
        if dtype is not None and target in ("sum", "prod"):
            kw["dtype"] = dtype
        elif dtype is not None:
            x = ns.astype(x, ns._dtypes.as_dtype(dtype))
        has_initial = initial is not _NOVALUE and initial is not None
        if has_initial and target in ("max", "min", "nanmax", "nanmin"):
            from .._core.checks import normalize_axes
            axes = normalize_axes(kw["axis"], x.ndim, where_s)
            if any(x.shape[a] == 0 for a in axes):     # empty: NumPy gives ``initial``
                shape = tuple(1 if d in axes else n for d, n in enumerate(x.shape)
                              if keepdims or d not in axes)
                res = ns.full(shape, initial, dtype=x.dtype, device=x.device)
            else:
                res = (ns.maximum if "max" in target else ns.minimum)(fn(x, **kw), initial)
        else:
            res = fn(x, **kw)
            if has_initial:
                res = res + initial if target == "sum" else \
                    res * initial if target == "prod" else \
                    (ns.logical_and if target == "all" else ns.logical_or)(res, bool(initial))
        results = (res,)
    elif method == "accumulate":
        target = _UFUNC_ACCUMULATE.get(name)
        if target is None or len(args) != 1:
            raise TypeError(not_implemented_message(ufunc, method))
        x = args[0] if isinstance(args[0], Array) else ns.asarray(args[0], device=device)
        axis = kwargs.pop("axis", 0)
        if kwargs:
            raise TypeError(f"{where_s} on clnp arrays: argument(s) {sorted(kwargs)} are not "
                            f"supported")
        results = (getattr(ns, target)(x, axis=axis, dtype=dtype),)
    elif method == "outer":
        f = _ufunc_impl(name)
        if f is None or len(args) != 2 or ufunc.nin != 2:
            raise TypeError(not_implemented_message(ufunc, method))
        a, b = (x if isinstance(x, Array) else ns.asarray(x, device=device) for x in args)
        if kwargs:
            raise TypeError(f"{where_s} on clnp arrays: argument(s) {sorted(kwargs)} are not "
                            f"supported")
        if dtype is not None:
            d = ns._dtypes.as_dtype(dtype)
            a, b = ns.astype(a, d), ns.astype(b, d)
        res = f(ns.reshape(a, tuple(a.shape) + (1,) * b.ndim), b)
        results = res if isinstance(res, tuple) else (res,)
    else:
        raise TypeError(not_implemented_message(ufunc, method))
    if outs is None:
        return results if len(results) > 1 else results[0]
    final = tuple(r if o is None else _store(r, o, where_s, casting)
                  for r, o in zip(results, outs))
    return final if len(final) > 1 else final[0]


# ------------------------------------------------------------------ what to use instead
# NumPy functions clnp has under another name or spelling: (clnp attribute that must exist,
# what to write)
_INSTEAD = {
    "cross": ("linalg.cross", "clnp.linalg.cross(a, b, axis=-1)"),
    "fliplr": ("flip", "clnp.flip(x, axis=1)"),
    "flipud": ("flip", "clnp.flip(x, axis=0)"),
    "append": ("concat", "clnp.concat([clnp.reshape(a, (-1,)), clnp.reshape(b, (-1,))]) "
                         "(or concat along an axis)"),
    "partition": ("sort", "clnp.sort(x, axis=...) (a full sort is a valid partition)"),
    "argpartition": ("argsort", "clnp.argsort(x, axis=...) (a full sort is a valid "
                                "partition)"),
    "select": ("where", "nested clnp.where(cond, choice, default) calls"),
    "copyto": ("where", "dst[...] = src, or dst[...] = clnp.where(mask, src, dst)"),
    "putmask": ("where", "x[...] = clnp.where(mask, values, x)"),
    "place": ("where", "x[mask] = values"),
    "put": ("reshape", "flat indexing of a reshaped view: v = clnp.reshape(x, (-1,)); "
                       "v[idx] = values"),
    "cbrt": ("pow", "clnp.sign(x) * clnp.pow(clnp.abs(x), 1 / 3)"),
    "ldexp": ("pow", "x * clnp.pow(2.0, clnp.astype(e, x.dtype))"),
    "modf": ("trunc", "(x - clnp.trunc(x), clnp.trunc(x))"),
    "rot90": ("flip", "clnp.flip(clnp.matrix_transpose(x), axis=-2) (one quarter turn)"),
    "dot": ("matmul", "clnp.matmul(a, b) (or clnp.tensordot)"),
    "polyval": ("stack", "Horner's rule in clnp: y = p[0]; then y = y * x + p[i] for each "
                         "coefficient"),
    "trapz": ("trapezoid", "clnp.trapezoid(y, x)"),
}


def not_implemented_message(func: Any, method: str = "__call__") -> str:
    """The TypeError text for a NumPy function or ufunc (method) that clnp does not
    implement: names it and says how to go on."""
    ns = _clnp()
    name = getattr(func, "__name__", repr(func))
    module = getattr(func, "__module__", None)
    # NumPy's own ufuncs say "numpy"; those of other packages (scipy.special) nothing
    full = (f"{module}.{name}" if module else f"the ufunc {name}") + \
        ("" if method == "__call__" else f".{method}")
    hint = ""
    alt = _INSTEAD.get(name) if method == "__call__" else None
    if alt is not None:
        obj: Any = ns
        for part in alt[0].split("."):
            obj = getattr(obj, part, None)
        if obj is not None:
            hint = f"use {alt[1]} on the device, or "
    elif method == "__call__" and module == "numpy" and not isinstance(func, np.ufunc):
        for sub in ("linalg", "fft"):
            if callable(getattr(getattr(ns, sub, None), name, None)):
                hint = f"use clnp.{sub}.{name} on the device, or "
    call = f"{module}.{name}" if module else name
    if method != "__call__":
        call += f".{method}"
    return (f"{full} is not implemented by clnp for clnp arrays; {hint}compute it on the host "
            f"with NumPy arrays: {call}(numpy.asarray(x), ...) (clnp.asarray(result) brings "
            f"the result back to the device)")


# ------------------------------------------------------------------ __array_function__
def _implementation(func: Any) -> tuple[Any, str]:
    ns = _clnp()
    module = getattr(func, "__module__", "") or ""
    name = getattr(func, "__name__", "")
    if module == "numpy":
        space = ns
    elif module in ("numpy.linalg", "numpy.fft"):
        space = getattr(ns, module.split(".")[1], None)
        if space is None:
            return None, name
    elif module == "numpy.lib.stride_tricks":
        space = ns.lib.stride_tricks
    elif module == "numpy.lib.scimath":     # numpy.emath's functions
        space = getattr(ns, "emath", None)
        if space is None:
            return None, name
    else:
        return None, name
    impl = getattr(space, _RENAMES.get(name, name) if space is ns else name, None)
    if impl is None or not callable(impl) or isinstance(impl, type):
        return None, name
    return impl, name


def _special_where(args: tuple, kwargs: dict, device: Any) -> Any:
    ns = _clnp()
    if kwargs or len(args) not in (1, 3):
        raise TypeError("either both or neither of x and y should be given")
    cond = args[0]
    if not isinstance(cond, Array):
        cond = ns.asarray(cond, device=device)
    if cond.dtype != ns.bool:
        cond = ns.not_equal(cond, 0)
    if len(args) == 1:
        return ns.nonzero(cond)
    x, y = (ns.asarray(v, device=device) if isinstance(v, (list, tuple)) else v
            for v in args[1:])
    return ns.where(cond, x, y)


# (shares_memory/may_share_memory are clnp functions: exact for views of one buffer, and
# by address between a NumPy array and a clnp array of a device that shares host memory,
# whose numpy.asarray is its memory; False between host and device memory, which never
# overlap. They take their arguments as given: an upload would compare a fresh copy.)
_SPECIAL = {"where": _special_where}
_AS_GIVEN = frozenset({"shares_memory", "may_share_memory"})


def array_function(func: Any, types: tuple, args: tuple, kwargs: dict) -> Any:
    """``Array.__array_function__``: run the NumPy function ``func`` with clnp."""
    for t in types:
        if not (issubclass(t, Array) or t is np.ndarray):
            return NotImplemented
    impl, name = _implementation(func)
    special = _SPECIAL.get(name) if impl is not None or name in _SPECIAL else None
    if impl is None and special is None:
        raise TypeError(not_implemented_message(func))
    if impl is not None and name in _AS_GIVEN:
        return impl(*args, **kwargs)
    device = _find_device(args) or _find_device(kwargs)
    if special is not None:
        return special(tuple(_upload(a, device) for a in args),
                       {k: _upload(v, device) for k, v in kwargs.items()}, device)
    return _call(func, impl, name, args, kwargs, device)


def _call(func: Any, impl: Any, name: str, args: tuple, kwargs: dict, device: Any) -> Any:
    """Call ``impl`` with the arguments of a call to NumPy's ``func``."""
    ns = _clnp()
    where_s = f"numpy.{name}"
    sig_np = _signature(func)
    sig_c = _signature(impl)
    if sig_np is None or sig_c is None:
        return impl(*(_upload(a, device) for a in args),
                    **{k: v if k == "out" else _upload(v, device) for k, v in kwargs.items()})
    try:
        bound = sig_np.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{where_s}(): {e}") from None
    for n, v in bound.arguments.items():
        if n != "out":      # out= is written, never uploaded
            bound.arguments[n] = _upload(v, device)
    params = sig_np.parameters
    order = [n for n, p in params.items() if p.kind in (_P.POSITIONAL_ONLY,
                                                          _P.POSITIONAL_OR_KEYWORD)]
    named: dict[str, Any] = {}
    varargs: tuple = ()
    for n, v in bound.arguments.items():
        p = params[n]
        if p.kind is _P.VAR_POSITIONAL:
            varargs = tuple(v)
        elif p.kind is _P.VAR_KEYWORD:
            named.update(v)
        elif v is _NOVALUE or (v is p.default and p.default is not _P.empty):
            continue
        else:
            named[n] = v
    out = named.pop("out", None)
    if out is not None:
        _check_out(out, where_s)
        if isinstance(out, tuple):
            if len(out) != 1:
                raise TypeError(f"{where_s}: clnp supports a single out= array")
            out = out[0]
    cparams = sig_c.parameters
    keep = _KEEP_ARGS.get(name, ())
    for n in list(named):
        if n in _IGNORED_ARGS and n not in cparams and n not in keep and \
                (n != "order" or named[n] in ("C", "K", None)):
            del named[n]
        elif n in _ARG_RENAMES and n not in cparams:
            new = _ARG_RENAMES[n]
            if new in named:
                raise TypeError(f"{where_s}(): got both {n!r} and {new!r}")
            named[new] = named.pop(n)
    pos: list[Any] = []
    kw: dict[str, Any] = {}
    i = 0
    for p in cparams.values():
        if p.kind is _P.POSITIONAL_ONLY:
            if i < len(order) and order[i] in named:
                v = named.pop(order[i])
                if p.name in _ARRAY_PARAMS and isinstance(v, (list, tuple)):
                    v = ns.asarray(v, device=device)    # NumPy takes array-likes there
                pos.append(v)
            elif i < len(order) and p.default is _P.empty:
                break       # a required argument is missing: let impl raise
            i += 1
        elif p.kind is _P.VAR_POSITIONAL:
            pos.extend(varargs)
            varargs = ()
    if varargs:
        raise TypeError(f"{where_s}: clnp's {name} takes no variable positional arguments")
    var_kw = any(p.kind is _P.VAR_KEYWORD for p in cparams.values())
    cast = None
    for n, v in named.items():
        p = cparams.get(n)
        if (p is not None and p.kind in (_P.POSITIONAL_OR_KEYWORD, _P.KEYWORD_ONLY)) or \
                var_kw:
            kw[n] = v
        elif n == "dtype":
            cast = v
        else:
            shown = f"<{type(v).__name__}>" if hasattr(v, "shape") else repr(v)
            raise TypeError(f"{where_s} on clnp arrays: argument {n}={shown} is not "
                            f"supported by clnp")
    if "out" in cparams and out is not None:
        kw["out"] = out
        out = None
    res = impl(*pos, **kw)
    if cast is not None:
        res = ns.astype(res, ns._dtypes.as_dtype(cast))
    if out is not None:
        return _store(res, out, where_s, None)
    return res

# the core's methods implemented here (clnp/_core/attached.py)
_attached.attach(array_ufunc=array_ufunc, array_function=array_function)
