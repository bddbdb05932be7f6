"""Audit of what every public function of clnp does with bad input (issue #13, item 6).

For each public function of ``clnp``, ``clnp.linalg``, ``clnp.fft`` and ``clnp.random`` the
audit finds a valid call on NumPy (the first of a list of candidate argument sets that the
NumPy function of the same name accepts), then derives bad calls from it:

``junk``
    one array argument replaced by a dict; clnp must raise TypeError.
``complex`` / ``bool`` / ``int``
    one array argument replaced by one of that dtype kind.
``shape``
    the second array argument replaced by one whose shape does not broadcast.
``axis`` / ``-axis``
    ``axis=`` (or the axis arguments of its kind) out of range.
``ndim``
    a square matrix replaced by a vector (linalg).
``negative``
    a float scalar argument replaced by -1 (random distributions' scales, counts).
``device``
    (two devices present) one of two array arguments moved to the second device; clnp must
    raise ValueError naming both devices.

A bad call is run on clnp only where NumPy raises for it (or, for ``junk`` and ``device``,
always): the audit checks errors, not results. A clnp call passes when it raises

- the exception family NumPy raises (AxisError, LinAlgError, IndexError, ValueError,
  TypeError, checked in that order, so an AxisError must be an AxisError),
- with a message that names the function,
- and, for ``shape``, ``complex``/``bool``/``int`` and ``axis``, the offending shapes, dtype
  or axis,
- before any kernel is launched or program built, leaving the inputs and an ``out=`` array
  untouched.

Usage::

    python tools/error_audit.py               # summary and every failure
    POCL_DEVICES="pthread pthread" python tools/error_audit.py --verbose

``tests/test_error_audit.py`` runs it over the whole namespace and fails on any failure.
"""
from __future__ import annotations

import argparse
import inspect
import re
import sys
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import numpy as np

if __name__ == "__main__":  # run as a script: the checkout's clnp, not an installed one
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))

import clnp  # noqa: E402
import clnp.fft  # noqa: E402
import clnp.linalg  # noqa: E402
import clnp.random  # noqa: E402

AxisError = np.exceptions.AxisError
LinAlgError = np.linalg.LinAlgError

#: Not audited: configuration, I/O with files, device management, classes and dtypes, printing.
SKIP = {
    "clnp": {
        "Array", "Device", "DeviceMemoryError", "ElementwiseKernel", "KernelBuildError",
        "MemoryInfo", "RawKernel", "UnsupportedDtypeError", "__array_namespace_info__",
        "autotune", "default_device", "devices", "free_pooled_memory", "release_memory",
        "set_default_device", "synchronize", "memory_info", "matmul_precision",
        "set_matmul_precision", "get_matmul_precision", "errstate", "seterr", "geterr",
        "seterrcall", "geterrcall", "setbufsize", "getbufsize", "set_printoptions",
        "get_printoptions", "printoptions", "load", "save", "savez", "savez_compressed",
        "savetxt", "loadtxt", "genfromtxt", "fromfile", "frombuffer", "fromiter",
        "fromfunction", "from_dlpack", "finfo", "iinfo", "dtype", "ndarray", "ufunc",
        "flatiter", "nditer", "ndenumerate", "ndindex", "generic", "number", "integer",
        "signedinteger", "unsignedinteger", "inexact", "floating", "complexfloating",
        "apply_along_axis", "apply_over_axes", "piecewise", "einsum_path", "typename",
        "array2string", "array_repr", "array_str", "format_float_positional",
        "format_float_scientific", "base_repr", "binary_repr", "isscalar", "iterable",
        "ndim", "shape", "size", "isfortran", "iscomplexobj", "isrealobj", "may_share_memory",
        "shares_memory", "common_type", "mintypecode", "min_scalar_type", "promote_types",
        "result_type", "can_cast", "issubdtype", "isdtype", "asnumpy",
    },
    "clnp.linalg": {"LinAlgError", "EighResult", "EigResult", "QRResult", "SlogdetResult",
                    "SVDResult"},
    "clnp.fft": set(),
    "clnp.random": {"Generator", "Philox", "SeedSequence", "RandomState", "seed", "get_state",
                    "set_state", "bytes"},
}
#: A dtype or scalar-type object is callable but not a function.
_TYPES = (type, np.dtype)

MODULES = {"clnp": (clnp, np), "clnp.linalg": (clnp.linalg, np.linalg),
           "clnp.fft": (clnp.fft, np.fft), "clnp.random": (clnp.random, np.random)}

FAMILIES: tuple[type[BaseException], ...] = (AxisError, LinAlgError, IndexError, ValueError,
                                             TypeError, OverflowError, ZeroDivisionError)


def family(exc: BaseException) -> type[BaseException] | None:
    for f in FAMILIES:
        if isinstance(exc, f):
            return f
    return None


# ----------------------------------------------------------------------------- operands
class Arr:
    """A placeholder for an array operand: built as NumPy or clnp when a call is made."""

    def __init__(self, data: np.ndarray, tag: str = "", device: int = 0):
        self.data, self.tag, self.device = data, tag, device

    def np(self) -> np.ndarray:
        return self.data.copy()

    def __repr__(self) -> str:
        dev = f"@{self.device}" if self.device else ""
        return f"{self.data.dtype}{self.data.shape}{dev}"


class Junk:
    def __repr__(self) -> str:
        return "{'junk': 1}"


def _rng() -> np.random.Generator:
    return np.random.default_rng(7)


def A() -> Arr:
    return Arr(_rng().uniform(0.1, 0.9, (3, 4)).astype(np.float32), "A")


def B() -> Arr:
    return Arr(_rng().uniform(0.1, 0.9, (3, 4)).astype(np.float32) + 0.05, "A")


def S() -> Arr:
    m = _rng().uniform(0.1, 0.9, (3, 3))
    return Arr((m @ m.T + 3 * np.eye(3)).astype(np.float32), "S")


def V() -> Arr:
    return Arr(np.array([0.3, 0.1, 0.7, 0.5], np.float32), "V")


def I() -> Arr:  # noqa: E743 - an integer operand
    return Arr(np.array([2, 0, 1, 3], np.int32), "I")


def V3() -> Arr:
    return Arr(np.array([0.3, 0.1, 0.7], np.float32), "V")


def I3() -> Arr:
    return Arr(np.array([2, 0, 1], np.int32), "I")


def M() -> Arr:
    return Arr(np.array([1, 0, 1, 1], bool), "M")


def CANDIDATES() -> list[tuple[tuple, dict]]:
    """Argument sets tried in order on NumPy; the first accepted is the function's valid call."""
    return [
        ((A(),), {}), ((A(), B()), {}), ((A(), B(), A()), {}), ((S(),), {}), ((S(), S()), {}),
        ((S(), V3()), {}), ((V(),), {}), ((V(), V()), {}), ((V(), V(), V()), {}),
        (([A(), B()],), {}), ((A(), 1), {}), ((A(), 2), {}), ((A(), 0.5), {}),
        ((A(), (4, 3)), {}), ((A(), I3()), {}), ((V(), 2), {}), ((V(), V(), 2), {}),
        ((V(), I()), {}), ((I(),), {}), ((I(), V()), {}), ((M(), V()), {}), ((V(), M()), {}),
        ((M(), V(), V()), {}), ((Arr(np.array([0, 1, 0, 2], np.int32), "I"), [V(), V(), V()]),
                                {}),
        ((I(), (2, 2)), {}), ((V(), V(), V(), V()), {}), ((3,), {}), ((3, 4), {}), ((), {}),
        ((0.5,), {}), ((0.5, 0.5), {}), ((0.5, 0.5, 0.5), {}), ((2, 0.5), {}),
        ((0.5, 2.0), {}), ((4, 3, 2), {}), (([0.2, 0.3, 0.5],), {}),
        ((V(), 3), {}), ((A(), [V(), V(), V()]), {}), ((3, 3), {}), ((4, 0.5, 0.5), {}),
        ((3, np.array([0.25, 0.5, 0.25])), {}),
        ((np.array([0.0, 0.0]), np.eye(2)), {}),
    ]


#: Valid calls given explicitly where the first candidate NumPy accepts is one clnp does not
#: support by design (array-valued ``linspace`` bounds, N-d polynomial coefficients).
BASELINES: dict[str, Callable[[], tuple[tuple, dict]]] = {
    "clnp.linspace": lambda: ((0.5, 2.0), {}),
    "clnp.geomspace": lambda: ((0.5, 2.0), {}),
    "clnp.logspace": lambda: ((0.5, 2.0), {}),
    "clnp.polyadd": lambda: ((V(), V()), {}),
    "clnp.polysub": lambda: ((V(), V()), {}),
    "clnp.polymul": lambda: ((V(), V()), {}),
    "clnp.polyval": lambda: ((V(), V()), {}),
    "clnp.polydiv": lambda: ((V(), V()), {}),
    "clnp.roll": lambda: ((A(), 1), {}),
    "clnp.take_along_axis": lambda: ((A(), Arr(np.array([[0], [1], [2]], np.int32), "I")),
                                     {"axis": 1}),
    # functions no candidate fits: integer axes, a dtype, a 3-d array, a list of matrices
    "clnp.astype": lambda: ((A(), np.int32), {}),
    "clnp.moveaxis": lambda: ((A(), 0, 1), {}),
    "clnp.swapaxes": lambda: ((A(), 0, 1), {}),
    "clnp.dsplit": lambda: ((Arr(_rng().uniform(0.1, 0.9, (2, 3, 4)).astype(np.float32), "A"),
                             2), {}),
    "clnp.insert": lambda: ((V(), 1, 0.5), {}),
    "clnp.put": lambda: ((V(), Arr(np.array([0, 2], np.int32), "I"),
                          Arr(np.array([0.5, 0.25], np.float32), "V")), {}),
    "clnp.put_along_axis": lambda: ((A(), Arr(np.array([[0], [1], [2]], np.int32), "I"),
                                     Arr(np.full((3, 1), 0.5, np.float32), "V")), {"axis": 1}),
    "clnp.ravel_multi_index": lambda: ((Arr(np.array([[0, 1], [2, 3]], np.int32), "I"),
                                        (3, 4)), {}),
    "clnp.unpackbits": lambda: ((Arr(np.array([3, 250, 7], np.uint8), "I"),), {}),
    "clnp.linalg.matrix_power": lambda: ((S(), 2), {}),
    "clnp.linalg.multi_dot": lambda: (([S(), S(), S()],), {}),
    "clnp.linalg.tensorinv": lambda: ((S(),), {"ind": 1}),
}


def _is_square(a: Arr) -> bool:
    return a.data.ndim == 2 and a.data.shape[0] == a.data.shape[1]


# ----------------------------------------------------------------------------- probes
@dataclass
class Probe:
    kind: str
    args: tuple
    kwargs: dict
    #: expected family when NumPy says nothing (junk: TypeError, device: ValueError)
    policy: type[BaseException] | None = None
    #: strings the message must contain (besides the function's name)
    names: tuple[str, ...] = ()


def _replace(args: tuple, kwargs: dict, i: int, new: Any) -> tuple[tuple, dict]:
    """Replace the i-th array operand (in positional order, lists flattened) by ``new``."""
    n = -1

    def sub(v: Any) -> Any:
        nonlocal n
        if isinstance(v, Arr):
            n += 1
            return new(v) if n == i else v
        if isinstance(v, list) and any(isinstance(e, Arr) for e in v):
            return [sub(e) for e in v]
        return v
    a = tuple(sub(v) for v in args)
    k = {key: sub(v) for key, v in kwargs.items()}
    return a, k


def _arrays(args: tuple, kwargs: dict) -> list[Arr]:
    out: list[Arr] = []
    for v in list(args) + list(kwargs.values()):
        if isinstance(v, Arr):
            out.append(v)
        elif isinstance(v, list):
            out += [e for e in v if isinstance(e, Arr)]
    return out


def _accepts(fn: Callable, name: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind == p.VAR_KEYWORD for p in params.values())


def _takes_axis(np_fn: Callable, args: tuple, kwargs: dict) -> bool:
    """NumPy's function has a parameter ``axis`` that the valid call leaves at its default."""
    try:
        sig = inspect.signature(np_fn)
    except (TypeError, ValueError):
        return False
    if "axis" not in sig.parameters:
        return False
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        return False
    return "axis" not in bound.arguments


def probes(args: tuple, kwargs: dict, np_fn: Callable, cl_fn: Callable,
           two_devices: bool) -> Iterator[Probe]:
    arrs = _arrays(args, kwargs)
    for i, a in enumerate(arrs):
        yield Probe("junk", *_replace(args, kwargs, i, lambda v: Junk()), policy=TypeError)
        d = a.data
        if d.dtype.kind == "f":
            c = (d + 0.5j).astype(np.complex64)
            yield Probe("complex", *_replace(args, kwargs, i, lambda v: Arr(c, v.tag)),
                        names=("complex64",))
            yield Probe("bool", *_replace(args, kwargs, i, lambda v: Arr(d > 0.4, v.tag)),
                        names=("bool",))
            di = (d * 10).astype(np.int32)
            yield Probe("int", *_replace(args, kwargs, i, lambda v: Arr(di, v.tag)),
                        names=("int32",))
        if _is_square(a):
            yield Probe("ndim", *_replace(args, kwargs, i,
                                          lambda v: Arr(np.array([0.3, 0.2, 0.1], np.float32))))
    if len(arrs) >= 2:
        bad = np.full((5,), 0.5, np.float32)
        yield Probe("shape", *_replace(args, kwargs, 1, lambda v: Arr(bad, v.tag)),
                    names=(str(arrs[0].data.shape), "(5,)"))
        if two_devices:
            yield Probe("device", *_replace(args, kwargs, 1,
                                            lambda v: Arr(v.data, v.tag, device=1)),
                        policy=ValueError, names=("pocl:0", "pocl:1"))
    if arrs and _takes_axis(np_fn, args, kwargs) and _accepts(cl_fn, "axis"):
        nd = max(a.data.ndim for a in arrs)
        yield Probe("axis", args, dict(kwargs, axis=nd + 2), names=(str(nd + 2),))
        yield Probe("-axis", args, dict(kwargs, axis=-nd - 3), names=(str(-nd - 3),))
    for j, v in enumerate(args):
        if isinstance(v, float) and not isinstance(v, bool):
            yield Probe("negative", args[:j] + (-1.0,) + args[j + 1:], kwargs)
        elif isinstance(v, int) and not isinstance(v, bool) and v > 0 and not arrs:
            yield Probe("negative", args[:j] + (-1,) + args[j + 1:], kwargs)


# ----------------------------------------------------------------------------- running
def _to_np(v: Any) -> Any:
    if isinstance(v, Arr):
        return v.np()
    if isinstance(v, Junk):
        return {"junk": 1}
    if isinstance(v, list):
        return [_to_np(e) for e in v]
    return v


def _to_cl(v: Any, devs: tuple) -> Any:
    if isinstance(v, Arr):
        return clnp.asarray(v.np(), device=devs[v.device])
    if isinstance(v, Junk):
        return {"junk": 1}
    if isinstance(v, list):
        return [_to_cl(e, devs) for e in v]
    return v


class Watch:
    """Counts kernel launches and program builds while it is active."""

    def __init__(self) -> None:
        self.launches = 0
        self.builds = 0
        self._saved: list[tuple[Any, str, Any]] = []

    def __enter__(self) -> "Watch":
        import pyopencl as cl

        from clnp._runtime import launch as _bound, device as _runtime

        def counted(f: Callable, what: str) -> Callable:
            def wrapper(*a: Any, **k: Any) -> Any:
                setattr(self, what, getattr(self, what) + 1)
                return f(*a, **k)
            return wrapper
        # every launch: a kernel object called (eager ops, plans: clnp's kernels are
        # clnp._runtime.launch.Kernel, whose call is its own), the enqueue function (linalg),
        # the bound kernels of jit replays
        self._patch(cl.Kernel, "__call__", counted(cl.Kernel.__call__, "launches"))
        self._patch(_bound.Kernel, "__call__", counted(_bound.Kernel.__call__, "launches"))
        self._patch(cl, "enqueue_nd_range_kernel",
                    counted(cl.enqueue_nd_range_kernel, "launches"))
        self._patch(_bound, "_enqueue", counted(_bound._enqueue, "launches"))
        self._patch(_runtime.Device, "build", counted(_runtime.Device.build, "builds"))
        return self

    def _patch(self, obj: Any, name: str, new: Any) -> None:
        self._saved.append((obj, name, getattr(obj, name)))
        setattr(obj, name, new)

    def __exit__(self, *exc: Any) -> None:
        for obj, name, old in reversed(self._saved):
            setattr(obj, name, old)


@dataclass
class Result:
    func: str
    kind: str
    call: str
    status: str            # "pass", "fail", "stricter" (NumPy accepts, clnp raises cleanly)
    detail: str = ""


@dataclass
class Report:
    functions: list[str] = field(default_factory=list)
    no_call: list[str] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)

    @property
    def failures(self) -> list[Result]:
        return [r for r in self.results if r.status == "fail"]


def _np_raises(np_fn: Callable, args: tuple, kwargs: dict) -> BaseException | None:
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            np.random.seed(0)
            np_fn(*[_to_np(a) for a in args], **{k: _to_np(v) for k, v in kwargs.items()})
    except Exception as e:   # noqa: BLE001 - any exception is NumPy's answer
        return e
    return None


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


#: Bad calls whose message rightly names something other than the probe's shapes.
NAMES_EXEMPT: dict[tuple[str, str], str] = {
    ("clnp.full_like", "shape"): "fill_value must be 0-d; x's shape is not involved",
    ("clnp.select", "shape"): "the lists' lengths differ; the message names both lengths",
}
#: Bad calls whose error depends on the data, as NumPy's does (allowed to run kernels).
DATA_DEPENDENT: dict[tuple[str, str], str] = {
    ("clnp.extract", "shape"): "NumPy too raises only when a true element of condition lies "
                               "beyond arr (IndexError from take)",
}


def _names(name: str, fn: Callable) -> set[str]:
    """What a message may call the function: its public name or the name of the function it
    is an alias of (``amax`` is ``max``, ``concatenate`` is ``concat``)."""
    from clnp._array_api.elementwise import _ALIASES
    short = _short(name)
    return {short, getattr(fn, "__name__", name), _ALIASES.get(short, short)}


def _check(qual: str, name: str, cl_fn: Callable, probe: Probe, expect: type | None,
           devs: tuple) -> Result:
    call = f"{qual}({', '.join(map(repr, probe.args))}" + \
        "".join(f", {k}={v!r}" for k, v in probe.kwargs.items()) + ")"
    try:
        args = [_to_cl(a, devs) for a in probe.args]
        kwargs = {k: _to_cl(v, devs) for k, v in probe.kwargs.items()}
    except Exception as e:   # noqa: BLE001
        return Result(qual, probe.kind, call, "skip", f"operands: {e!r}")
    inputs = [(a, a.to_numpy().copy()) for a in args if isinstance(a, clnp.Array)]
    out = None
    if expect is not None and _accepts(cl_fn, "out") and "out" not in kwargs \
            and name not in ("histogram",):
        out = clnp.asarray(np.full((3, 4), 7, np.float32), device=devs[0])
        kwargs["out"] = out
    clnp.synchronize()
    with Watch() as w, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            cl_fn(*args, **kwargs)
            raised: BaseException | None = None
        except Exception as e:   # noqa: BLE001
            raised = e
    problems = []
    if raised is None:
        if expect is None:
            return Result(qual, probe.kind, call, "accepted")
        return Result(qual, probe.kind, call, "fail",
                      f"accepted; NumPy raises {expect.__name__}")
    fam = family(raised)
    msg = str(raised)
    if expect is None:
        if fam in (TypeError, ValueError, IndexError, AxisError, LinAlgError) and \
                not isinstance(raised, NotImplementedError):
            status = "stricter"
        else:
            return Result(qual, probe.kind, call, "fail",
                          f"internal error {type(raised).__name__}: {msg[:200]}")
        return Result(qual, probe.kind, call, status, f"{type(raised).__name__}: {msg[:160]}")
    dtype_probe = probe.kind in ("complex", "bool", "int")
    if isinstance(raised, AxisError) and expect in (IndexError, ValueError):
        pass                    # NumPy's AxisError is both
    elif dtype_probe and isinstance(raised, TypeError) and not isinstance(raised, expect):
        pass                    # clnp's dtype rules (the Array API's) are stricter than NumPy's
    elif not isinstance(raised, expect):
        problems.append(f"raised {type(raised).__name__} (expected {expect.__name__})")
    if not any(n.lower() in msg.lower() for n in _names(name, cl_fn)):
        problems.append("message does not name the function")
    names_needed = isinstance(raised, TypeError) if dtype_probe else \
        not (probe.kind == "shape" and isinstance(raised, (TypeError, IndexError)))
    if names_needed and (qual, probe.kind) not in NAMES_EXEMPT:
        for s in probe.names:
            if s not in msg:
                problems.append(f"message does not name {s}")
    # errors that depend on the values (a scale <= 0 in an array) need the data: a reduction
    # on the device is allowed there; errors the shapes and dtypes show are not
    value_error = ((dtype_probe or probe.kind == "negative") and
                   not isinstance(raised, TypeError)) or (qual, probe.kind) in DATA_DEPENDENT
    if (w.launches or w.builds) and not value_error:
        problems.append(f"{w.launches} launches, {w.builds} builds before the error")
    for a, ref in inputs:
        if not np.array_equal(a.to_numpy(), ref, equal_nan=True):
            problems.append("an input array was modified")
    if out is not None and not (out.to_numpy() == 7).all():
        problems.append("out= was written")
    return Result(qual, probe.kind, call, "fail" if problems else "pass",
                  "; ".join(problems) + f" | {type(raised).__name__}: {msg[:200]}")


def public_functions(only: str | None = None) -> Iterator[tuple[str, str, Callable, Callable]]:
    """(qualified name, name, clnp function, NumPy function) for each audited function."""
    for modname, (mod, npmod) in MODULES.items():
        for name in mod.__all__:
            if name in SKIP[modname] or name.startswith("_"):
                continue
            fn = getattr(mod, name)
            if not callable(fn) or (isinstance(fn, _TYPES) and not hasattr(fn, "nin")):
                continue
            qual = f"{modname}.{name}"
            if only and not re.search(only, qual):
                continue
            np_fn = getattr(npmod, name, None)
            if modname == "clnp" and np_fn is None:
                np_fn = {"round_": np.round, "float_": None}.get(name)
            if np_fn is None or not callable(np_fn):
                continue
            yield qual, name, fn, np_fn


def audit(only: str | None = None) -> Report:
    devs = clnp.devices()
    rep = Report()
    for qual, name, fn, np_fn in public_functions(only):
        rep.functions.append(qual)
        base = BASELINES[qual]() if qual in BASELINES else None
        for args, kwargs in ([] if base else CANDIDATES()):
            if _np_raises(np_fn, args, kwargs) is None:
                base = (args, kwargs)
                break
        if base is None:
            rep.no_call.append(qual)
            continue
        for pr in probes(*base, np_fn, fn, len(devs) > 1):
            err = _np_raises(np_fn, pr.args, pr.kwargs)
            if pr.kind == "device":     # clnp's own rule: NumPy has one device
                expect = pr.policy
            elif pr.policy is not None:
                # junk: a TypeError where NumPy raises (NumPy may also raise something else
                # after making an object array); where NumPy accepts it (array_equal's
                # False), clnp may accept it or raise TypeError
                expect = pr.policy if err is not None else None
            else:
                if err is None:
                    continue   # NumPy accepts it: a result question, not an error one
                expect = family(err)
                if expect is None:
                    continue
            rep.results.append(_check(qual, name, fn, pr, expect, devs))
    return rep


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", help="regular expression on the qualified function name")
    p.add_argument("--verbose", action="store_true", help="print every check, not only failures")
    a = p.parse_args(argv)
    rep = audit(a.only)
    checked = {r.func for r in rep.results}
    for r in rep.results:
        if a.verbose or r.status == "fail":
            print(f"{r.status:8} {r.kind:8} {r.call}\n         {r.detail}")
    counts: dict[str, int] = {}
    for r in rep.results:
        counts[r.status] = counts.get(r.status, 0) + 1
    print(f"functions: {len(rep.functions)} audited, {len(checked)} with bad calls checked, "
          f"{len(rep.no_call)} without a valid NumPy call found")
    print("checks: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if a.verbose:
        print("no valid call:", " ".join(rep.no_call))
    return 1 if rep.failures else 0


if __name__ == "__main__":
    sys.exit(main())
