"""Gradient transformations with optax's names, defaults, state layouts and formulas.

Each one mirrors the optax function of the same name expression for expression (the order of
operations decides the last bits, and users compare against optax). Two deliberate details:
``x ** 2`` is written ``x * x`` (XLA lowers an integer power to that product), and a bias
correction ``1 - decay ** count`` is evaluated in float32 (float64 for float64 moments), as
JAX does with its default 32-bit types, then cast to the moment's dtype.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

import clnp as xp
import clnp_grad as cg

from ._base import (NO_PARAMS_MSG, EmptyState, GradientTransformation, ScalarOrSchedule,
                    abs_sq, caller, check_number, check_same_structure, check_scalar_or_schedule,
                    check_state, identity, init_empty_state, names_its_errors, safe_increment,
                    zero_count)
from ._masking import masked

__all__ = ["TraceState", "ScaleByAdamState", "ScaleByRmsState", "ScaleByRmsWithCountState",
           "ScaleByRStdDevState", "ScaleByRStdDevWithCountState", "ScaleByRssState",
           "ScaleByScheduleState", "WeightDecaySchedule",
           "scale", "scale_by_schedule", "scale_by_learning_rate", "trace", "scale_by_adam",
           "scale_by_rms", "scale_by_stddev", "scale_by_rss", "scale_by_trust_ratio",
           "add_decayed_weights"]


class TraceState(NamedTuple):
    """State of :func:`trace`: the momentum buffer."""
    trace: Any


class ScaleByAdamState(NamedTuple):
    """State of :func:`scale_by_adam`: step count (0-d int32), first and second moments."""
    count: Any
    mu: Any
    nu: Any


class ScaleByRmsState(NamedTuple):
    """State of :func:`scale_by_rms` without bias correction."""
    nu: Any


class ScaleByRmsWithCountState(NamedTuple):
    """State of :func:`scale_by_rms` with bias correction."""
    count: Any
    nu: Any


class ScaleByRStdDevState(NamedTuple):
    """State of :func:`scale_by_stddev` without bias correction."""
    mu: Any
    nu: Any


class ScaleByRStdDevWithCountState(NamedTuple):
    """State of :func:`scale_by_stddev` with bias correction."""
    count: Any
    mu: Any
    nu: Any


class ScaleByRssState(NamedTuple):
    """State of :func:`scale_by_rss`: the running sum of squared gradients."""
    sum_of_squares: Any


class ScaleByScheduleState(NamedTuple):
    """State of :func:`scale_by_schedule`: the step count the schedule is evaluated at."""
    count: Any


class WeightDecaySchedule(NamedTuple):
    """State of :func:`add_decayed_weights` when the weight decay is a schedule."""
    count: Any


# ------------------------------------------------------------------------------- helpers
def _full_like(tree: Any, value: float) -> Any:
    return cg.tree_map(lambda p: xp.full_like(p, value), tree)


def _zeros_like(tree: Any, dtype: Any = None) -> Any:
    return cg.tree_map(lambda p: xp.zeros_like(p, dtype=dtype), tree)


def _cast(tree: Any, dtype: Any) -> Any:
    if dtype is None:
        return tree
    return cg.tree_map(lambda t: xp.astype(t, dtype), tree)


def _cast_like(tree: Any, like: Any) -> Any:
    return cg.tree_map(lambda t, l: t if t.dtype == l.dtype else xp.astype(t, l.dtype),
                       tree, like)


def _update_moment(updates: Any, moments: Any, decay: float, order: int) -> Any:
    if order == 1:
        return cg.tree_map(lambda g, t: (1 - decay) * g + decay * t, updates, moments)
    return cg.tree_map(lambda g, t: (1 - decay) * _power(g, order) + decay * t,
                       updates, moments)


def _power(g: Any, order: int) -> Any:
    if order == 2:
        return g * g
    return g ** order


def _update_moment_per_elem_norm(updates: Any, moments: Any, decay: float,
                                 order: int) -> Any:
    def norm(g: Any) -> Any:
        if not xp.isdtype(g.dtype, "complex floating"):
            return _power(g, order)
        half = order / 2
        return abs_sq(g) ** (int(half) if half.is_integer() else half)
    return cg.tree_map(lambda g, t: (1 - decay) * norm(g) + decay * t, updates, moments)


def _bias_correction(moment: Any, decay: float, count: Any) -> Any:
    def one(t: Any) -> Any:
        cdt = xp.float64 if t.dtype in (xp.float64, xp.complex128) else xp.float32
        bc = 1 - decay ** xp.astype(count, cdt)
        return t / xp.astype(bc, t.dtype)
    return cg.tree_map(one, moment)


def _dtype_or_none(fname: str, dtype: Any) -> Any:
    if dtype is None:
        return None
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{caller(fname)}: {dtype!r} is not a data type") from None


def _rsqrt(x: Any) -> Any:
    return 1 / xp.sqrt(x)


# ---------------------------------------------------------------------------- scaling
@names_its_errors
def scale(step_size: float) -> GradientTransformation:
    """Multiply every update by ``step_size`` (stateless).

    Parameters
    ----------
    step_size : float
        The factor.

    Returns
    -------
    GradientTransformation

    Raises
    ------
    TypeError
        ``step_size`` is not a number (a schedule goes to ``scale_by_schedule``).

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn import optim
    >>> grads = {"w": clnp.asarray([0.5, -0.5])}
    >>> opt = optim.scale(-0.5)
    >>> updates, state = opt.update(grads, opt.init(grads))
    >>> print(numpy.asarray(updates["w"]))
    [-0.25  0.25]
    """
    check_scalar_or_schedule("scale", "step_size", step_size)
    if callable(step_size):
        raise TypeError("scale: step_size must be a number; use scale_by_schedule for a "
                        "schedule")

    def update_fn(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        del params
        return cg.tree_map(lambda g: step_size * g, updates), state
    return GradientTransformation(init_empty_state, update_fn)


@names_its_errors
def scale_by_schedule(step_size_fn: Callable[[Any], Any]) -> GradientTransformation:
    """Multiply the updates by ``step_size_fn(count)``, ``count`` being the number of
    updates done so far (a 0-d int32 array in the state, so the step jits).

    Parameters
    ----------
    step_size_fn : callable
        A schedule: step count -> step size.

    Returns
    -------
    GradientTransformation
        With state :class:`ScaleByScheduleState`.

    Raises
    ------
    TypeError
        If ``step_size_fn`` is not callable.

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn import optim
    >>> grads = {"w": clnp.asarray([0.5, -0.5])}
    >>> opt = optim.scale_by_schedule(optim.exponential_decay(-0.5, 1, 0.5))
    >>> state = opt.init(grads)
    >>> for _ in range(2):                     # -0.5 at count 0, -0.25 at count 1
    ...     updates, state = opt.update(grads, state)
    ...     print(numpy.asarray(updates["w"]))
    [-0.25  0.25]
    [-0.125  0.125]
    """
    if not callable(step_size_fn):
        raise TypeError(f"scale_by_schedule: step_size_fn must be callable; got "
                        f"{type(step_size_fn).__name__}")

    def init_fn(params: Any) -> ScaleByScheduleState:
        return ScaleByScheduleState(count=zero_count(params))

    def update_fn(updates: Any, state: ScaleByScheduleState,
                  params: Any = None) -> tuple[Any, ScaleByScheduleState]:
        del params
        check_state("scale_by_schedule.update", state, ScaleByScheduleState)
        step_size = step_size_fn(state.count)

        def one(g: Any) -> Any:
            if hasattr(step_size, "dtype"):
                return xp.astype(step_size, g.dtype) * g
            return step_size * g
        return (cg.tree_map(one, updates),
                ScaleByScheduleState(count=safe_increment(state.count)))
    return GradientTransformation(init_fn, update_fn)


@names_its_errors
def scale_by_learning_rate(learning_rate: ScalarOrSchedule, *,
                           flip_sign: bool = True) -> GradientTransformation:
    """Multiply by ``-learning_rate`` (``learning_rate`` with ``flip_sign=False``); a
    schedule is evaluated at the step count.

    Parameters
    ----------
    learning_rate : float or schedule or None
        None means no scaling (:func:`identity`).
    flip_sign : bool
        Descend (the default) rather than ascend.

    Returns
    -------
    GradientTransformation

    Raises
    ------
    TypeError
        If ``learning_rate`` is neither a number nor a callable.

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn import optim
    >>> grads = {"w": clnp.asarray([0.5, -0.5])}
    >>> opt = optim.scale_by_learning_rate(0.5)     # a descent step: -0.5 * g
    >>> updates, state = opt.update(grads, opt.init(grads))
    >>> print(numpy.asarray(updates["w"]))
    [-0.25  0.25]
    >>> opt = optim.chain(optim.scale_by_adam(), optim.scale_by_learning_rate(1e-3))  # adam
    """
    if learning_rate is None:
        return identity()
    check_scalar_or_schedule("scale_by_learning_rate", "learning_rate", learning_rate)
    m = -1 if flip_sign else 1
    if callable(learning_rate):
        return scale_by_schedule(lambda count: m * learning_rate(count))
    return scale(m * learning_rate)


@names_its_errors
def trace(decay: float, nesterov: bool = False,
          accumulator_dtype: Any = None) -> GradientTransformation:
    """Momentum: ``t = g + decay * t``; the update is ``t`` (``g + decay * t`` with
    ``nesterov``).

    Parameters
    ----------
    decay : float
        The momentum coefficient.
    nesterov : bool
        Use Nesterov's look-ahead form.
    accumulator_dtype : dtype, optional
        The dtype of the stored trace (default: the parameters').

    Returns
    -------
    GradientTransformation
        With state :class:`TraceState`.

    Raises
    ------
    TypeError
        ``decay`` is neither a number nor a schedule; from ``update``: the state is another
        transformation's.
    ValueError
        From ``update``: the updates' structure or a leaf's shape differs from the state's
        (the transformation was initialised with other parameters).

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn import optim
    >>> grads = {"w": clnp.asarray([0.5, -0.5])}
    >>> opt = optim.trace(0.5)                  # t = g + 0.5 * t
    >>> state = opt.init(grads)
    >>> for _ in range(3):
    ...     updates, state = opt.update(grads, state)
    ...     print(numpy.asarray(updates["w"]))
    [ 0.5 -0.5]
    [ 0.75 -0.75]
    [ 0.875 -0.875]
    >>> opt = optim.chain(optim.trace(0.9), optim.scale(-0.01))   # sgd(0.01, momentum=0.9)
    """
    check_scalar_or_schedule("trace", "decay", decay)
    acc = _dtype_or_none("trace", accumulator_dtype)

    def init_fn(params: Any) -> TraceState:
        return TraceState(trace=_zeros_like(params, acc))

    def update_fn(updates: Any, state: TraceState, params: Any = None) -> tuple[Any, TraceState]:
        del params
        check_state("trace.update", state, TraceState)
        check_same_structure("trace.update", updates, state.trace, "the state's trace")
        f = lambda g, t: g + decay * t  # noqa: E731
        new_trace = cg.tree_map(f, updates, state.trace)
        updates = cg.tree_map(f, updates, new_trace) if nesterov else new_trace
        return updates, TraceState(trace=_cast(new_trace, acc))
    return GradientTransformation(init_fn, update_fn)


@names_its_errors
def scale_by_adam(b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
                  eps_root: float = 0.0, mu_dtype: Any = None, *,
                  nesterov: bool = False) -> GradientTransformation:
    """Adam's rescaling: ``m_hat / (sqrt(v_hat + eps_root) + eps)`` with bias-corrected
    moving averages of the gradients and their squares.

    Parameters
    ----------
    b1, b2 : float
        Decay rates of the first and second moments.
    eps, eps_root : float
        Added outside and inside the square root.
    mu_dtype : dtype, optional
        The dtype of the stored first moment.
    nesterov : bool
        Nadam's Nesterov form of the first moment.

    Returns
    -------
    GradientTransformation
        With state :class:`ScaleByAdamState`.

    Raises
    ------
    TypeError
        A decay rate or stabiliser is neither a number nor a schedule; from ``update``: the
        state is another transformation's.
    ValueError
        From ``update``: the updates' structure or a leaf's shape differs from the state's
        (the transformation was initialised with other parameters).

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn import optim
    >>> grads = {"w": clnp.asarray([0.5, -0.5])}
    >>> opt = optim.scale_by_adam()
    >>> updates, state = opt.update(grads, opt.init(grads))
    >>> print(numpy.round(numpy.asarray(updates["w"]), 4))   # first step: sign(g)
    [ 1. -1.]
    >>> int(state.count)
    1
    >>> opt = optim.chain(optim.scale_by_adam(), optim.scale(-1e-3))   # adam(1e-3)
    """
    for name, v in (("b1", b1), ("b2", b2), ("eps", eps), ("eps_root", eps_root)):
        check_scalar_or_schedule("scale_by_adam", name, v)
    mu_dt = _dtype_or_none("scale_by_adam", mu_dtype)

    def init_fn(params: Any) -> ScaleByAdamState:
        return ScaleByAdamState(count=zero_count(params), mu=_zeros_like(params, mu_dt),
                                nu=_zeros_like(params))

    def update_fn(updates: Any, state: ScaleByAdamState,
                  params: Any = None) -> tuple[Any, ScaleByAdamState]:
        del params
        check_state("scale_by_adam.update", state, ScaleByAdamState)
        check_same_structure("scale_by_adam.update", updates, state.nu, "the state's nu")
        mu = _update_moment(updates, state.mu, b1, 1)
        nu = _update_moment_per_elem_norm(updates, state.nu, b2, 2)
        count_inc = safe_increment(state.count)
        if nesterov:
            mu_hat = cg.tree_map(lambda m, g: b1 * m + (1 - b1) * g,
                                 _bias_correction(mu, b1, safe_increment(count_inc)),
                                 _bias_correction(updates, b1, count_inc))
        else:
            mu_hat = _bias_correction(mu, b1, count_inc)
        nu_hat = _bias_correction(nu, b2, count_inc)
        updates = cg.tree_map(lambda m, v: m / (xp.sqrt(v + eps_root) + eps), mu_hat, nu_hat)
        return updates, ScaleByAdamState(count=count_inc, mu=_cast(mu, mu_dt),
                                         nu=_cast_like(nu, state.nu))
    return GradientTransformation(init_fn, update_fn)


@names_its_errors
def scale_by_rms(decay: float = 0.9, eps: float = 1e-8, initial_scale: float = 0.0,
                 eps_in_sqrt: bool = True,
                 bias_correction: bool = False) -> GradientTransformation:
    """RMSProp's rescaling: ``g / sqrt(nu + eps)`` (``g / (sqrt(nu) + eps)`` with
    ``eps_in_sqrt=False``), ``nu`` the moving average of ``g**2``.

    Parameters
    ----------
    decay : float
        Decay of the moving average.
    eps : float
        Stabiliser.
    initial_scale : float
        Initial value of ``nu`` (PyTorch uses 0, TF1 1).
    eps_in_sqrt : bool
        Where ``eps`` goes.
    bias_correction : bool
        Divide ``nu`` by ``1 - decay**count``.

    Returns
    -------
    GradientTransformation

    Raises
    ------
    TypeError
        A hyperparameter is not a number; from ``update``: the state is another
        transformation's.
    ValueError
        From ``update``: the updates' structure or a leaf's shape differs from the state's
        (the transformation was initialised with other parameters).

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn import optim
    >>> grads = {"w": clnp.asarray([0.5, -0.5])}
    >>> opt = optim.scale_by_rms(decay=0.75)   # nu = 0.25 * g**2
    >>> updates, state = opt.update(grads, opt.init(grads))
    >>> print(numpy.round(numpy.asarray(updates["w"]), 4))
    [ 2. -2.]
    >>> opt = optim.chain(optim.scale_by_rms(), optim.scale(-1e-3))    # rmsprop(1e-3)
    """
    for name, v in (("decay", decay), ("eps", eps), ("initial_scale", initial_scale)):
        check_number("scale_by_rms", name, v)
    def init_fn(params: Any) -> Any:
        nu = _full_like(params, initial_scale)
        if bias_correction:
            return ScaleByRmsWithCountState(count=zero_count(params), nu=nu)
        return ScaleByRmsState(nu=nu)

    def update_fn(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        del params
        check_state("scale_by_rms.update", state,
                    ScaleByRmsWithCountState if bias_correction else ScaleByRmsState)
        check_same_structure("scale_by_rms.update", updates, state.nu, "the state's nu")
        nu = _update_moment_per_elem_norm(updates, state.nu, decay, 2)
        if bias_correction:
            count_inc = safe_increment(state.count)
            nu_hat = _bias_correction(nu, decay, count_inc)
        else:
            nu_hat = nu
        if eps_in_sqrt:
            scaling = cg.tree_map(lambda n: _rsqrt(n + eps), nu_hat)
        else:
            scaling = cg.tree_map(lambda n: 1 / (xp.sqrt(n) + eps), nu_hat)
        updates = cg.tree_map(lambda s, g: s * g, scaling, updates)
        if bias_correction:
            return updates, ScaleByRmsWithCountState(count=count_inc, nu=nu)
        return updates, ScaleByRmsState(nu=nu)
    return GradientTransformation(init_fn, update_fn)


@names_its_errors
def scale_by_stddev(decay: float = 0.9, eps: float = 1e-8, initial_scale: float = 0.0,
                    eps_in_sqrt: bool = True,
                    bias_correction: bool = False) -> GradientTransformation:
    """Centred RMSProp's rescaling: ``g / sqrt(nu - mu**2 + eps)``.

    Parameters
    ----------
    decay, eps, initial_scale, eps_in_sqrt, bias_correction
        As :func:`scale_by_rms`.

    Returns
    -------
    GradientTransformation

    Raises
    ------
    TypeError
        A hyperparameter is not a number; from ``update``: the state is another
        transformation's.
    ValueError
        From ``update``: the updates' structure or a leaf's shape differs from the state's
        (the transformation was initialised with other parameters).

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn import optim
    >>> grads = {"w": clnp.asarray([0.5, -0.5])}
    >>> opt = optim.scale_by_stddev(decay=0.5)   # mu = 0.5 * g, nu = 0.5 * g**2
    >>> updates, state = opt.update(grads, opt.init(grads))
    >>> print(numpy.round(numpy.asarray(updates["w"]), 4))   # g / sqrt(nu - mu**2)
    [ 2. -2.]
    >>> opt = optim.chain(optim.scale_by_stddev(), optim.scale(-1e-3))  # centered rmsprop
    """
    for name, v in (("decay", decay), ("eps", eps), ("initial_scale", initial_scale)):
        check_number("scale_by_stddev", name, v)
    def init_fn(params: Any) -> Any:
        mu, nu = _zeros_like(params), _full_like(params, initial_scale)
        if bias_correction:
            return ScaleByRStdDevWithCountState(count=zero_count(params), mu=mu, nu=nu)
        return ScaleByRStdDevState(mu=mu, nu=nu)

    def update_fn(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        del params
        check_state("scale_by_stddev.update", state,
                    ScaleByRStdDevWithCountState if bias_correction else ScaleByRStdDevState)
        check_same_structure("scale_by_stddev.update", updates, state.nu, "the state's nu")
        mu = _update_moment(updates, state.mu, decay, 1)
        nu = _update_moment_per_elem_norm(updates, state.nu, decay, 2)
        if bias_correction:
            count_inc = safe_increment(state.count)
            mu_hat = _bias_correction(mu, decay, count_inc)
            nu_hat = _bias_correction(nu, decay, count_inc)
        else:
            mu_hat, nu_hat = mu, nu
        if eps_in_sqrt:
            scaling = cg.tree_map(lambda m, n: _rsqrt(n - abs_sq(m) + eps), mu_hat, nu_hat)
        else:
            scaling = cg.tree_map(lambda m, n: 1 / (xp.sqrt(n - abs_sq(m)) + eps),
                                  mu_hat, nu_hat)
        updates = cg.tree_map(lambda s, g: s * g, scaling, updates)
        if bias_correction:
            return updates, ScaleByRStdDevWithCountState(count=count_inc, mu=mu, nu=nu)
        return updates, ScaleByRStdDevState(mu=mu, nu=nu)
    return GradientTransformation(init_fn, update_fn)


@names_its_errors
def scale_by_rss(initial_accumulator_value: float = 0.1,
                 eps: float = 1e-7) -> GradientTransformation:
    """Adagrad's rescaling: ``g / sqrt(sum of all squared gradients so far + eps)`` (0 where
    that sum is 0).

    Parameters
    ----------
    initial_accumulator_value : float
        Starting value of the sum (>= 0).
    eps : float
        Stabiliser.

    Returns
    -------
    GradientTransformation
        With state :class:`ScaleByRssState`.

    Raises
    ------
    TypeError
        ``initial_accumulator_value`` or ``eps`` is not a number; from ``update``: the state
        is another transformation's.
    ValueError
        If ``initial_accumulator_value`` is negative; from ``update``: the updates'
        structure or a leaf's shape differs from the state's.

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn import optim
    >>> grads = {"w": clnp.asarray([0.5, -0.5])}
    >>> opt = optim.scale_by_rss(initial_accumulator_value=0.0)
    >>> state = opt.init(grads)
    >>> for _ in range(2):                     # g / sqrt(sum of g**2)
    ...     updates, state = opt.update(grads, state)
    ...     print(numpy.round(numpy.asarray(updates["w"]), 4))
    [ 1. -1.]
    [ 0.7071 -0.7071]
    >>> opt = optim.chain(optim.scale_by_rss(), optim.scale(-0.1))    # adagrad(0.1)
    """
    check_number("scale_by_rss", "initial_accumulator_value", initial_accumulator_value)
    check_number("scale_by_rss", "eps", eps)
    if initial_accumulator_value < 0:
        raise ValueError(f"{caller('scale_by_rss')}: initial_accumulator_value must be >= 0; "
                         f"got {initial_accumulator_value}")

    def init_fn(params: Any) -> ScaleByRssState:
        return ScaleByRssState(sum_of_squares=_full_like(params, initial_accumulator_value))

    def update_fn(updates: Any, state: ScaleByRssState,
                  params: Any = None) -> tuple[Any, ScaleByRssState]:
        del params
        check_state("scale_by_rss.update", state, ScaleByRssState)
        check_same_structure("scale_by_rss.update", updates, state.sum_of_squares,
                             "the state's sum_of_squares")
        sos = cg.tree_map(lambda g, t: abs_sq(g) + t, updates, state.sum_of_squares)
        inv = cg.tree_map(lambda t: xp.where(t > 0, _rsqrt(t + eps), 0.0), sos)
        updates = cg.tree_map(lambda s, g: s * g, inv, updates)
        return updates, ScaleByRssState(sum_of_squares=sos)
    return GradientTransformation(init_fn, update_fn)


def _safe_norm(x: Any, min_norm: float) -> Any:
    norm = xp.sqrt(xp.sum(abs_sq(x)))
    x = xp.where(norm <= min_norm, xp.ones_like(x), x)
    masked = xp.sqrt(xp.sum(abs_sq(x)))
    return xp.where(norm <= min_norm, min_norm, masked)


@names_its_errors
def scale_by_trust_ratio(min_norm: float = 0.0, trust_coefficient: float = 1.0,
                         eps: float = 0.0) -> GradientTransformation:
    """LARS/LAMB's layer-wise trust ratio: each update times
    ``trust_coefficient * ||param|| / (||update|| + eps)`` (1 where either norm is 0).

    Parameters
    ----------
    min_norm : float
        Norms are clipped from below to this.
    trust_coefficient : float
        Multiplier of the ratio.
    eps : float
        Added to the update norm.

    Returns
    -------
    GradientTransformation
        Stateless; its ``update`` needs ``params``.

    Raises
    ------
    TypeError
        ``min_norm``, ``trust_coefficient`` or ``eps`` is not a number.
    ValueError
        From ``update``: the parameters are not passed, or their structure (or a leaf's
        shape) differs from the updates'.

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn import optim
    >>> params = {"w": clnp.asarray([3.0, 4.0])}             # norm 5
    >>> updates = {"w": clnp.asarray([0.6, 0.8])}            # norm 1
    >>> opt = optim.scale_by_trust_ratio()
    >>> updates, state = opt.update(updates, opt.init(params), params)
    >>> print(numpy.round(numpy.asarray(updates["w"]), 4))  # rescaled by 5 / 1
    [3. 4.]
    >>> opt = optim.chain(optim.scale_by_adam(), optim.scale_by_trust_ratio(),
    ...                   optim.scale(-1e-3))
    """
    for name, v in (("min_norm", min_norm), ("trust_coefficient", trust_coefficient),
                    ("eps", eps)):
        check_number("scale_by_trust_ratio", name, v)
    def update_fn(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        if params is None:
            raise ValueError(f"{caller('scale_by_trust_ratio.update')}: {NO_PARAMS_MSG}")
        check_same_structure("scale_by_trust_ratio.update", updates, params, "params")

        def one(u: Any, p: Any) -> Any:
            p_norm, u_norm = _safe_norm(p, min_norm), _safe_norm(u, min_norm)
            ratio = trust_coefficient * p_norm / (u_norm + eps)
            zero = xp.logical_or(p_norm == 0.0, u_norm == 0.0)
            return u * xp.astype(xp.where(zero, 1.0, ratio), u.dtype)
        return cg.tree_map(one, updates, params), state
    return GradientTransformation(init_empty_state, update_fn)


# ------------------------------------------------------------------------------- adding
@names_its_errors
def add_decayed_weights(weight_decay: ScalarOrSchedule = 0.0,
                        mask: Any = None) -> GradientTransformation:
    """Decoupled weight decay: ``updates + weight_decay * params``.

    Parameters
    ----------
    weight_decay : float or schedule
        The coefficient (a schedule is evaluated at the step count).
    mask : pytree of bool or callable, optional
        Which leaves are decayed (see :func:`masked`).

    Returns
    -------
    GradientTransformation
        Its ``update`` needs ``params``.

    Raises
    ------
    TypeError
        ``weight_decay`` is neither a number nor a schedule.
    ValueError
        From ``update``: the parameters are not passed, or their structure differs from the
        updates'.

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn import optim
    >>> params = {"w": clnp.asarray([1.0, 2.0])}
    >>> grads = {"w": clnp.asarray([0.5, -0.5])}
    >>> opt = optim.add_decayed_weights(0.25)
    >>> updates, state = opt.update(grads, opt.init(params), params)
    >>> print(numpy.asarray(updates["w"]))      # g + 0.25 * params
    [0.75 0. ]
    >>> opt = optim.chain(optim.scale_by_adam(), optim.add_decayed_weights(1e-4),
    ...                   optim.scale(-1e-3))                                    # adamw
    """
    check_scalar_or_schedule("add_decayed_weights", "weight_decay", weight_decay)

    def init_fn(params: Any) -> Any:
        if callable(weight_decay):
            return WeightDecaySchedule(count=zero_count(params))
        return EmptyState()

    def update_fn(updates: Any, state: Any, params: Any = None) -> tuple[Any, Any]:
        if params is None:
            raise ValueError(f"{caller('add_decayed_weights.update')}: {NO_PARAMS_MSG}")
        check_same_structure("add_decayed_weights.update", updates, params, "params")
        if callable(weight_decay):
            check_state("add_decayed_weights.update", state, WeightDecaySchedule)
            new_state = WeightDecaySchedule(count=safe_increment(state.count))
            s = weight_decay(state.count)
        else:
            new_state, s = state, weight_decay
            if isinstance(weight_decay, (int, float)) and weight_decay == 0.0:
                return updates, new_state

        def one(g: Any, p: Any) -> Any:
            sv = xp.astype(s, g.dtype) if hasattr(s, "dtype") else s
            return g + sv * p
        return cg.tree_map(one, updates, params), new_state

    inner = GradientTransformation(init_fn, update_fn)
    return masked(inner, mask) if mask is not None else inner
