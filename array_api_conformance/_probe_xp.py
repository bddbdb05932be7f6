"""Logging proxy namespace used by probe_namespace.py (not a test target).

Importing this module replaces it in sys.modules by a proxy around the
namespace named in $CLNP_PROBE_TARGET (default array_api_strict) that logs
every attribute looked up on the namespace, on the object returned by
__array_namespace_info__(), and on array objects, plus every call made through
the namespace / info object. The log is written at exit to $CLNP_PROBE_LOG.
"""
import atexit
import importlib
import json
import os
import sys
import types

_target = importlib.import_module(os.environ.get("CLNP_PROBE_TARGET", "array_api_strict"))
_log = {"namespace": {}, "info": {}, "array": {}, "calls": {}}
_phase = ["import"]
# Experiments: pretend the namespace lacks names.
#   CLNP_PROBE_HIDE=a,b     hide these names (dunder names included)
#   CLNP_PROBE_ONLY=a,b     hide every non-dunder name except these
_hide = set(filter(None, os.environ.get("CLNP_PROBE_HIDE", "").split(",")))
_only = os.environ.get("CLNP_PROBE_ONLY")
_only = None if _only is None else set(filter(None, _only.split(",")))


def _note(kind, name):
    d = _log[kind].setdefault(name, [])
    if _phase[0] not in d:
        d.append(_phase[0])


def _short(v):
    r = repr(v)
    return r if len(r) < 60 else r[:57] + "..."


def _note_call(qual, args, kwargs):
    sig = ", ".join([_short(a) for a in args] + [f"{k}={_short(v)}" for k, v in kwargs.items()])
    d = _log["calls"].setdefault(f"{qual}({sig})", [])
    if _phase[0] not in d:
        d.append(_phase[0])


class _InfoProxy:
    def __init__(self, info):
        object.__setattr__(self, "_info", info)

    def __getattribute__(self, name):
        info = object.__getattribute__(self, "_info")
        _note("info", name)
        v = getattr(info, name)
        if callable(v):
            def f(*a, **k):
                _note_call(f"info.{name}", a, k)
                return v(*a, **k)
            return f
        return v


class _NSProxy(types.ModuleType):
    def __getattribute__(self, name):
        if name in ("__name__", "__spec__", "__loader__", "__path__", "__file__",
                    "__dict__", "__class__", "__package__"):
            return object.__getattribute__(self, name)
        _note("namespace", name)
        if _only is not None and name not in _only and not name.startswith("__"):
            raise AttributeError(f"probe: {name} hidden (CLNP_PROBE_ONLY)")
        if name in _hide:
            raise AttributeError(f"probe: {name} hidden (CLNP_PROBE_HIDE)")
        v = getattr(_target, name)
        if name == "__array_namespace_info__":
            def f(*a, **k):
                _note_call(name, a, k)
                return _InfoProxy(v(*a, **k))
            return f
        if isinstance(v, types.FunctionType) or type(v).__name__ in ("builtin_function_or_method",):
            def f(*a, __v=v, **k):
                _note_call(name, a, k)
                return __v(*a, **k)
            return f
        return v


# Log attribute access on the target's array class (public names only).
try:
    _Array = type(_target.asarray(0))
    _orig_ga = _Array.__getattribute__

    def _ga(self, name):
        if not (name.startswith("_") and not name.startswith("__")):
            _note("array", name)
        return _orig_ga(self, name)

    _Array.__getattribute__ = _ga
except Exception:  # pragma: no cover
    pass


def set_phase(p):
    _phase[0] = p


@atexit.register
def _dump():
    path = os.environ.get("CLNP_PROBE_LOG")
    if path:
        with open(path, "w") as f:
            json.dump(_log, f, indent=1, sort_keys=True)


_proxy = _NSProxy(__name__, _target.__doc__)
_proxy.__dict__["set_phase"] = set_phase
sys.modules[__name__] = _proxy
