"""Tracers and the interpreter stack.

A transformation pushes an interpreter (``clnp._core.prims.set_interpreter``); every primitive bound
while it is current reaches its ``process``. Each interpreter keeps the one below it (``prev``)
and evaluates rules under it, so transformations nest (grad of grad, jvp of grad) and a value
that belongs to an outer transformation is just a constant here (autodidax2's design).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from clnp._core.operators import ArrayOperators
from clnp._core.prims import Primitive
from clnp._runtime.user_frames import is_library_frame


class ConcretizationError(TypeError):
    """A traced value was used where a concrete Python value is needed (a ``TypeError``).

    Raised by ``bool()``, ``if``, ``while``, ``float()`` or ``int()`` on a value traced by
    ``jit``, ``make_ir``, ``vmap`` or ``jvp``, and by primitives whose result shape depends
    on the data under ``jit``. The message names the user's file and line and the
    alternatives (``clnp_grad.lax.cond``, ``clnp.where``, ``static_argnums``).

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> f = cg.jit(lambda x: x if x > 0 else -x)
    >>> try:
    ...     f(clnp.asarray(1.0))
    ... except cg.ConcretizationError:
    ...     print("use lax.cond or clnp.where")
    use lax.cond or clnp.where
    """


class LeakedTracerError(RuntimeError):
    """A tracer escaped the transformation that created it and was used afterwards.

    A ``RuntimeError``: a function stored a traced value (in a global, a list, ``self``) and
    it was used after ``grad``/``vmap``/``jit`` returned.

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> leaked = []
    >>> _ = cg.grad(lambda x: (leaked.append(x), clnp.sum(x))[1])(clnp.asarray([1.0]))
    >>> try:
    ...     leaked[0] + 1.0
    ... except cg.LeakedTracerError:
    ...     print("leaked")
    leaked
    """


# Higher-order primitives (``jit``, ``cond``, ``while``, ``scan``) carry sub-programs; an
# interpreter cannot apply them through its generic per-primitive path (evaluate below, then a
# rule for the result), because their rules transform the sub-program itself: JVP of ``jit`` is
# ``jit`` of the JVP of its body. Each interpreter asks this table first.
# Key: (interpreter kind, primitive name); value: ``rule(interp, args, params) -> result``.
# Kinds: "jvp", "vjp", "vmap", "stage".
HIGHER_ORDER: dict[tuple[str, str], Callable[..., Any]] = {}


def higher_order_rule(kind: str, name: str) -> Callable[..., Any] | None:
    """The rule registered for primitive ``name`` under interpreters of ``kind``, if any."""
    return HIGHER_ORDER.get((kind, name))


class Interpreter:
    """Base: ``prev`` is the interpreter below; ``active`` is False once the transform ends."""

    name = "transform"
    kind = "transform"     # key into HIGHER_ORDER

    def __init__(self, prev: Any):
        self.prev = prev
        self.active = True

    def check_foreign(self, x: Any) -> None:
        """Values of other interpreters are constants here, unless their transform ended."""
        if isinstance(x, Tracer) and not x._interp.active:
            raise LeakedTracerError(
                f"a tracer of a finished {x._interp.name} transformation was used (shape "
                f"{x.shape}, dtype {x.dtype}); values computed inside a transformed function "
                f"must be returned from it, not stored in globals or closures")


def user_line() -> str:
    """`` at file:line (code)`` for the innermost frame outside clnp's own packages."""
    import traceback
    for fr in reversed(traceback.extract_stack()[:-1]):
        if is_library_frame(fr.filename):
            continue
        return f" at {fr.filename}:{fr.lineno} ({(fr.line or '').strip()})"
    return ""


def _under_staging(interp: Any) -> bool:
    """Whether a staging interpreter (jit, make_ir) is at or below ``interp``."""
    while interp is not None:
        if getattr(interp, "kind", None) == "stage":
            return True
        interp = getattr(interp, "prev", None)
    return False


class Tracer(ArrayOperators):
    """A traced array: behaves like ``clnp.Array`` for shape/dtype/operators, but has no
    concrete value while the transformation runs."""

    __slots__ = ("_interp", "_view")
    _is_clnp_tracer = True
    __array_priority__ = 200

    # subclasses define ``_value``: the value one level down (an Array or an outer tracer)
    @property
    def _value(self) -> Any:
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int, ...]:
        return self._value.shape

    @property
    def dtype(self) -> np.dtype:
        return self._value.dtype

    @property
    def device(self) -> Any:
        return self._value.device

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def _concrete_check(self, what: str) -> None:
        staged = _under_staging(self._interp)
        if staged:
            how = ("inside jit the values are not known while the function is traced. Use "
                   "clnp_grad.lax.cond(pred, true_fun, false_fun, *operands) (or lax.switch, "
                   "lax.while_loop, lax.fori_loop) for control flow, clnp.where(cond, x, y) for "
                   "elementwise choices, or mark the argument static with "
                   "jit(..., static_argnums=...) if the decision depends only on it")
        else:
            how = ("Python control flow on traced values is not differentiable: use "
                   "clnp.where(...) for elementwise choices, clnp_grad.lax.cond for branches, "
                   "compute the decision outside the transformed function, or wrap the value "
                   "in clnp_grad.stop_gradient(...) and call float() on the result of the "
                   "transformation instead")
        raise ConcretizationError(
            f"{what} needs a concrete value, but this array is traced by a "
            f"{self._interp.name} transformation (shape {self.shape}, dtype {self.dtype})"
            f"{user_line()}; {how}")

    def __bool__(self) -> bool:
        self._concrete_check("bool()/if/while")
        return False  # pragma: no cover

    def __float__(self) -> float:
        self._concrete_check("float()")
        return 0.0  # pragma: no cover

    def __int__(self) -> int:
        self._concrete_check("int()")
        return 0  # pragma: no cover

    def __complex__(self) -> complex:
        self._concrete_check("complex()")
        return 0j  # pragma: no cover

    def __index__(self) -> int:
        self._concrete_check("using an array as an index (__index__)")
        return 0  # pragma: no cover

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        self._concrete_check("numpy.asarray()")

    def item(self, *args: Any) -> Any:
        self._concrete_check("item()")

    def tolist(self) -> Any:
        self._concrete_check("tolist()")

    def to_numpy(self) -> Any:
        self._concrete_check("to_numpy()")

    def __setitem__(self, key: Any, value: Any) -> None:
        """Functional update: this tracer takes over the value of ``x`` after the write."""
        if getattr(self, "_view", False):
            raise TypeError(
                "cannot write through a view of a traced array (slicing, reshape, transpose "
                "and broadcast_to give new values under transformations, so the write could "
                "not reach the array it came from); assign into the original array instead: "
                "x[i, j] = v rather than x[i][j] = v")
        from ._setitem import functional_setitem
        new = functional_setitem(self, key, value)
        if type(new) is not type(self) or new._interp is not self._interp:
            raise RuntimeError("x[idx] = v: the updated value left this transformation")
        for cls in type(self).__mro__:
            for slot in cls.__dict__.get("__slots__", ()):
                if slot != "__weakref__" and hasattr(new, slot):
                    setattr(self, slot, getattr(new, slot))
        self._view = False

    def __array_namespace__(self, *, api_version: Any = None) -> Any:
        import clnp
        return clnp

    def __hash__(self) -> int:  # type: ignore[override]
        raise TypeError("unhashable type: traced array")

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"Traced<{self._interp.name}>(shape={self.shape}, dtype={self.dtype})")


# the primitives whose eager results are views of their operand
VIEW_PRIMITIVES = frozenset({"slice", "reshape", "transpose", "broadcast_to"})


def mark_view(t: Tracer, prim: Primitive) -> Tracer:
    """Results of view primitives remember it, so that a write through them is refused
    (``Tracer.__setitem__``): under a transformation a view is a new value, and the write
    could not reach the array it came from. Every interpreter marks its tracers, staging
    included (``clnp.eye``'s write through a reshaped view once went silently missing from
    jitted code)."""
    t._view = prim.name in VIEW_PRIMITIVES
    return t
