"""Primitives: the closed set of operations every clnp function is written with.

A primitive is a name plus an eager implementation. ``bind`` hands the call to the current
interpreter (context-based dispatch, as in JAX's autodidax2): eager evaluation by default,
tracing/differentiation when ``clnp_grad`` has pushed an interpreter. Rules that transforms
need (JVP, transpose, batching, lowering) live in ``clnp_grad`` tables keyed by the same names.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator


class Primitive:
    __slots__ = ("name", "impl", "multiple_results")

    def __init__(self, name: str, impl: Callable[..., Any] | None = None,
                 multiple_results: bool = False):
        self.name, self.impl, self.multiple_results = name, impl, multiple_results

    def bind(self, *args: Any, **params: Any) -> Any:
        return _CURRENT.get().process(self, args, params)

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"


class EvalInterpreter:
    """The bottom interpreter: run the primitive's eager implementation."""

    def process(self, prim: Primitive, args: tuple, params: dict) -> Any:
        for a in args:
            if getattr(a, "_is_clnp_tracer", False):
                # a tracer reaching eager evaluation escaped its transformation
                a._interp.check_foreign(a)
                raise RuntimeError(f"{prim.name}: a traced value reached eager evaluation "
                                   f"outside its transformation")
        return prim.impl(*args, **params)


EVAL = EvalInterpreter()   # eager fast paths test ``current_interpreter() is EVAL``
_CURRENT: ContextVar[Any] = ContextVar("clnp_interpreter", default=EVAL)


def current_interpreter() -> Any:
    return _CURRENT.get()


@contextmanager
def set_interpreter(interp: Any) -> Iterator[None]:
    token = _CURRENT.set(interp)
    try:
        yield
    finally:
        _CURRENT.reset(token)


PRIMITIVES: dict[str, Primitive] = {}


def primitive(name: str, multiple_results: bool = False) -> Primitive:
    p = PRIMITIVES.get(name)
    if p is None:
        p = PRIMITIVES[name] = Primitive(name, None, multiple_results)
    return p


def def_impl(name: str, multiple_results: bool = False):
    """Decorator registering the eager implementation of primitive ``name``."""
    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        primitive(name, multiple_results).impl = fn
        return fn
    return deco
