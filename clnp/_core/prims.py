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

import numpy as np


class Primitive:
    __slots__ = ("name", "impl", "multiple_results")

    def __init__(self, name: str, impl: Callable[..., Any] | None = None,
                 multiple_results: bool = False):
        self.name, self.impl, self.multiple_results = name, impl, multiple_results

    def bind(self, *args: Any, **params: Any) -> Any:
        d = params.get("dtype")
        if d is not None and d.__class__ is type:
            # a scalar type (clnp.float32 is numpy.float32): primitives take dtype objects
            params["dtype"] = np.dtype(d)
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
# how many transformations are running on this context: their rules evaluate primitives one
# level down, at EVAL, yet the user's call is not eager (no host read may decide anything)
_DEPTH: ContextVar[int] = ContextVar("clnp_transform_depth", default=0)


def current_interpreter() -> Any:
    return _CURRENT.get()


@contextmanager
def set_interpreter(interp: Any) -> Iterator[None]:
    """Make ``interp`` current for the block; any interpreter but EVAL also counts as a
    transformation in progress (see :func:`in_transformation`)."""
    token = _CURRENT.set(interp)
    depth = _DEPTH.set(_DEPTH.get() + 1) if interp is not EVAL else None
    try:
        yield
    finally:
        if depth is not None:
            _DEPTH.reset(depth)
        _CURRENT.reset(token)


@contextmanager
def transforming() -> Iterator[None]:
    """Count the block as part of a transformation (e.g. a VJP's backward pass, which runs
    after its interpreter is gone)."""
    token = _DEPTH.set(_DEPTH.get() + 1)
    try:
        yield
    finally:
        _DEPTH.reset(token)


def in_transformation() -> bool:
    """Whether a transformation (``clnp_grad``'s grad, vmap, jit...) is running, even where
    its rules evaluate primitives eagerly one level down."""
    return _DEPTH.get() > 0 or _CURRENT.get() is not EVAL


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
