"""Learning-rate schedules with optax's names and formulas.

A schedule maps the step count to a value. The count is a Python int or a 0-d integer clnp
array (the optimizer state's ``count``, traced under ``jit``); schedules compute in float32 (as
JAX does with its default types) and return a 0-d float32 array, or the constant itself for
:func:`constant_schedule`.
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import clnp as xp

from ._base import Schedule, caller, names_inner_errors

__all__ = ["constant_schedule", "polynomial_schedule", "linear_schedule", "exponential_decay",
           "cosine_decay_schedule", "warmup_cosine_decay_schedule", "join_schedules"]


def _f32(count: Any) -> Any:
    if hasattr(count, "dtype"):
        return xp.astype(count, xp.float32)
    return xp.asarray(float(count), dtype=xp.float32)


def _check_number(fname: str, name: str, v: Any) -> None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{caller(fname)}: {name} must be a number; got {type(v).__name__}")


def _check_steps(fname: str, name: str, v: Any) -> None:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{caller(fname)}: {name} must be an int; got {type(v).__name__}")


@names_inner_errors
def constant_schedule(value: float) -> Schedule:
    """The schedule that always returns ``value``.

    Parameters
    ----------
    value : float
        The value returned at every step.

    Returns
    -------
    callable
        ``count -> value``.

    Raises
    ------
    TypeError
        ``value`` is not a number.

    Examples
    --------
    >>> from clnp_nn import optim
    >>> optim.constant_schedule(0.1)(100)
    0.1
    """
    _check_number("constant_schedule", "value", value)
    return lambda count: value


@names_inner_errors
def polynomial_schedule(init_value: float, end_value: float, power: float,
                        transition_steps: int, transition_begin: int = 0) -> Schedule:
    """``(init - end) * (1 - t / transition_steps) ** power + end`` with
    ``t = clip(count - transition_begin, 0, transition_steps)``.

    Parameters
    ----------
    init_value, end_value : float
        The values at the start and the end of the transition.
    power : float
        Exponent of the polynomial (1: linear).
    transition_steps : int
        Steps from ``init_value`` to ``end_value``; <= 0 gives a constant ``init_value``.
    transition_begin : int
        Steps at ``init_value`` first (negative values count as 0).

    Returns
    -------
    callable

    Raises
    ------
    TypeError
        A value or ``power`` is not a number, or a step count is not an int.

    Examples
    --------
    >>> from clnp_nn import optim
    >>> s = optim.polynomial_schedule(1.0, 0.0, 2, 10)
    >>> [float(s(n)) for n in (0, 5, 10, 20)]      # (1 - n / 10) ** 2, then constant
    [1.0, 0.25, 0.0, 0.0]
    """
    for n, v in (("init_value", init_value), ("end_value", end_value), ("power", power)):
        _check_number("polynomial_schedule", n, v)
    _check_steps("polynomial_schedule", "transition_steps", transition_steps)
    _check_steps("polynomial_schedule", "transition_begin", transition_begin)
    if transition_steps <= 0:
        return lambda count: init_value
    transition_begin = max(transition_begin, 0)

    def schedule(count: Any) -> Any:
        c = xp.clip(_f32(count) - transition_begin, 0, transition_steps)
        frac = 1 - c / transition_steps
        return (init_value - end_value) * (frac ** power) + end_value
    return schedule


@names_inner_errors
def linear_schedule(init_value: float, end_value: float, transition_steps: int,
                    transition_begin: int = 0) -> Schedule:
    """Linear interpolation from ``init_value`` to ``end_value`` over ``transition_steps``
    steps, after ``transition_begin`` steps at ``init_value``.

    Parameters
    ----------
    init_value, end_value : float
        The values at the start and the end of the transition.
    transition_steps, transition_begin : int
        Steps from ``init_value`` to ``end_value``, and steps at ``init_value`` first.

    Returns
    -------
    callable

    Raises
    ------
    TypeError
        A value is not a number, or a step count is not an int.

    Examples
    --------
    >>> from clnp_nn import optim
    >>> s = optim.linear_schedule(0.0, 1.0, 10)
    >>> [float(s(n)) for n in (0, 5, 10, 20)]
    [0.0, 0.5, 1.0, 1.0]
    """
    return polynomial_schedule(init_value, end_value, 1, transition_steps, transition_begin)


@names_inner_errors
def exponential_decay(init_value: float, transition_steps: int, decay_rate: float,
                      transition_begin: int = 0, staircase: bool = False,
                      end_value: Optional[float] = None) -> Schedule:
    """``init_value * decay_rate ** ((count - transition_begin) / transition_steps)``
    (``init_value`` before ``transition_begin``).

    Parameters
    ----------
    init_value : float
        The value up to ``transition_begin``, where the decay starts from it.
    transition_steps : int
        Steps per factor of ``decay_rate``; <= 0 gives a constant schedule.
    decay_rate : float
        0 gives a constant schedule.
    transition_begin : int
        Steps before the decay starts.
    staircase : bool
        Decay in whole steps of ``transition_steps`` (floor of the exponent).
    end_value : float, optional
        A floor (a ceiling when ``decay_rate > 1``).

    Returns
    -------
    callable

    Raises
    ------
    TypeError
        A value or the rate is not a number, or a step count is not an int.

    Examples
    --------
    >>> from clnp_nn import optim
    >>> s = optim.exponential_decay(1.0, 10, 0.5)       # halves every 10 steps
    >>> [float(s(n)) for n in (0, 10, 20)]
    [1.0, 0.5, 0.25]
    >>> float(optim.exponential_decay(1.0, 10, 0.5, staircase=True)(15))
    0.5
    """
    _check_number("exponential_decay", "init_value", init_value)
    _check_number("exponential_decay", "decay_rate", decay_rate)
    _check_steps("exponential_decay", "transition_steps", transition_steps)
    _check_steps("exponential_decay", "transition_begin", transition_begin)
    if transition_steps <= 0 or decay_rate == 0:
        return lambda count: init_value
    transition_begin = max(transition_begin, 0)
    clip_fn = None
    if end_value is not None:
        _check_number("exponential_decay", "end_value", end_value)
        clip_fn = xp.maximum if decay_rate < 1.0 else xp.minimum

    def schedule(count: Any) -> Any:
        dec = _f32(count) - transition_begin
        p = dec / transition_steps
        if staircase:
            p = xp.floor(p)
        value = xp.where(dec <= 0, init_value, init_value * decay_rate ** p)
        if clip_fn is not None:
            value = clip_fn(value, end_value)
        return value
    return schedule


@names_inner_errors
def cosine_decay_schedule(init_value: float, decay_steps: int, alpha: float = 0.0,
                          exponent: float = 1.0) -> Schedule:
    """``init_value * ((1 - alpha) * (0.5 * (1 + cos(pi * t / decay_steps))) ** exponent
    + alpha)`` with ``t = min(count, decay_steps)``.

    Parameters
    ----------
    init_value : float
        The value at step 0.
    decay_steps : int
        Positive.
    alpha : float
        The final value as a fraction of ``init_value``.
    exponent : float
        Power of the cosine factor.

    Returns
    -------
    callable

    Raises
    ------
    ValueError
        If ``decay_steps`` is not positive.

    Examples
    --------
    >>> from clnp_nn import optim
    >>> s = optim.cosine_decay_schedule(1.0, 100)
    >>> [round(float(s(n)), 4) for n in (0, 50, 100, 200)]
    [1.0, 0.5, 0.0, 0.0]
    """
    _check_number("cosine_decay_schedule", "init_value", init_value)
    _check_steps("cosine_decay_schedule", "decay_steps", decay_steps)
    if not decay_steps > 0:
        raise ValueError(f"{caller('cosine_decay_schedule')}: decay_steps must be positive; "
                         f"got {decay_steps}")

    def schedule(count: Any) -> Any:
        c = xp.minimum(_f32(count), float(decay_steps))
        cosine = 0.5 * (1 + xp.cos(math.pi * c / float(decay_steps)))
        decayed = (1 - alpha) * cosine ** exponent + alpha
        return init_value * decayed
    return schedule


@names_inner_errors
def join_schedules(schedules: Sequence[Schedule], boundaries: Sequence[int]) -> Schedule:
    """Run ``schedules[0]`` until ``boundaries[0]``, then ``schedules[1]`` (with the count
    restarting at 0), and so on.

    Parameters
    ----------
    schedules : sequence of callables
        The schedules, each a callable of the step count.
    boundaries : sequence of int
        One fewer than ``schedules``, increasing.

    Returns
    -------
    callable

    Raises
    ------
    TypeError
        A schedule is not callable, or a boundary not an int.
    ValueError
        If the lengths do not match.

    Examples
    --------
    >>> from clnp_nn import optim
    >>> s = optim.join_schedules([optim.constant_schedule(1.0),
    ...                           optim.linear_schedule(0.5, 0.0, 10)], [100])
    >>> [float(s(n)) for n in (0, 99, 100, 105)]   # the second counts from its boundary
    [1.0, 1.0, 0.5, 0.25]
    """
    schedules, boundaries = list(schedules), list(boundaries)
    if len(schedules) != len(boundaries) + 1 or not schedules:
        raise ValueError(f"{caller('join_schedules')}: needs one boundary fewer than schedules; "
                         f"got {len(schedules)} schedules and {len(boundaries)} boundaries")
    for b in boundaries:
        _check_steps("join_schedules", "boundaries", b)
    for i, sch in enumerate(schedules):
        if not callable(sch):
            raise TypeError(f"{caller('join_schedules')}: schedules[{i}] must be a schedule (a "
                            f"callable of the step count); got {type(sch).__name__}")

    def schedule(step: Any) -> Any:
        step = step if hasattr(step, "dtype") else xp.asarray(int(step), dtype=xp.int32)
        out = schedules[0](step)
        for boundary, s in zip(boundaries, schedules[1:]):
            out = xp.where(step < boundary, out, s(step - boundary))
        return out
    return schedule


@names_inner_errors
def warmup_cosine_decay_schedule(init_value: float, peak_value: float, warmup_steps: int,
                                 decay_steps: int, end_value: float = 0.0,
                                 exponent: float = 1.0) -> Schedule:
    """Linear warm-up from ``init_value`` to ``peak_value`` over ``warmup_steps``, then
    cosine decay to ``end_value`` at step ``decay_steps`` (which counts the warm-up).

    Parameters
    ----------
    init_value, peak_value, end_value : float
        The values at step 0, at the end of the warm-up, and from ``decay_steps`` on.
    warmup_steps, decay_steps : int
        Length of the warm-up, and the step at which the decay ends (counting the warm-up).
    exponent : float
        Power of the cosine factor.

    Returns
    -------
    callable

    Raises
    ------
    TypeError
        A value is not a number, or a step count not an int.
    ValueError
        If ``decay_steps <= warmup_steps``.

    Examples
    --------
    >>> from clnp_nn import optim
    >>> s = optim.warmup_cosine_decay_schedule(0.0, 1.0, 10, 110)
    >>> [round(float(s(n)), 4) for n in (0, 5, 10, 60, 110)]
    [0.0, 0.5, 1.0, 0.5, 0.0]
    """
    for n, v in (("init_value", init_value), ("peak_value", peak_value),
                 ("end_value", end_value), ("exponent", exponent)):
        _check_number("warmup_cosine_decay_schedule", n, v)
    _check_steps("warmup_cosine_decay_schedule", "warmup_steps", warmup_steps)
    _check_steps("warmup_cosine_decay_schedule", "decay_steps", decay_steps)
    alpha = 0.0 if peak_value == 0.0 else end_value / peak_value
    if decay_steps - warmup_steps <= 0:
        raise ValueError(f"warmup_cosine_decay_schedule: decay_steps ({decay_steps}) must "
                         f"be larger than warmup_steps ({warmup_steps})")
    return join_schedules([linear_schedule(init_value, peak_value, warmup_steps),
                           cosine_decay_schedule(peak_value, decay_steps - warmup_steps,
                                                 alpha, exponent)], [warmup_steps])
