"""Mixed precision in jmp's style: dtype policies, loss scaling and finiteness checks.

A :class:`Policy` says in which dtype parameters are stored, computation runs and outputs are
returned; ``cast_to_*`` convert every floating-point leaf of a pytree (other leaves pass
through). Loss scaling keeps small float16 gradients from flushing to zero: multiply the loss
by ``loss_scale.scale``, divide the gradients by ``unscale``, and with
:class:`DynamicLossScale` skip the step and halve the scale when a gradient overflowed
(:func:`all_finite`, :func:`select_tree`), doubling it again after ``period`` good steps.

float16 and bfloat16 on devices without ``cl_khr_fp16`` (PoCL, NVIDIA's OpenCL): clnp stores
float16 as 16-bit ``half`` and bfloat16 as the top 16 bits of a float, and converts both with
integer code on load and store (round to nearest even), so every elementwise op, reduction and
matmul computes in float32 and rounds once on the store; half-precision matrix products and
reductions accumulate in float32. bfloat16 keeps float32's exponent range, so a bfloat16
policy needs no loss scaling (float16 does). What 16-bit storage does not do (no tensor
cores for bfloat16, linalg decompositions refuse it, ...): docs/nn.md, "Mixed precision".

All of the loss scales are pytrees (their arrays are leaves, ``period``/``factor`` static),
so they pass through ``clnp_grad.jit`` with the rest of the training state.
"""
from __future__ import annotations

import dataclasses
import warnings
from typing import Any, TypeVar, Union

import numpy as np

import clnp as xp
import clnp_grad as cg
from clnp._core.dtypes import kind as dkind

__all__ = ["Policy", "get_policy", "parse_dtype", "half_dtype", "cast_to_full",
           "cast_to_half", "NoOpLossScale", "StaticLossScale", "DynamicLossScale",
           "LossScale", "all_finite", "select_tree"]

T = TypeVar("T")

_NAMES = {np.dtype(xp.bfloat16): ("bf16", "bfloat16"), np.dtype("float16"): ("f16", "float16"),
          np.dtype("float32"): ("full", "f32", "float32"), np.dtype("float64"): ("f64", "float64")}
_BY_NAME = {n: d for d, names in _NAMES.items() for n in names}
_STATIC = {"static": True}


def half_dtype() -> np.dtype:
    """The half-precision dtype ``"half"`` names: float16 (jmp's choice off TPUs; bfloat16 is
    spelled ``bf16``/``bfloat16``).

    Returns
    -------
    dtype
        ``clnp.float16``.

    Examples
    --------
    >>> from clnp_nn import amp
    >>> amp.half_dtype()
    dtype('float16')
    """
    return np.dtype(xp.float16)


def parse_dtype(value: str) -> np.dtype:
    """A dtype from jmp's names: ``full``/``f32``/``float32``, ``half``/``f16``/``float16``,
    ``bf16``/``bfloat16``, ``f64``/``float64``.

    Parameters
    ----------
    value : str
        One of the names above.

    Returns
    -------
    dtype

    Raises
    ------
    ValueError
        For an unknown name.

    Examples
    --------
    >>> from clnp_nn import amp
    >>> amp.parse_dtype("half")
    dtype('float16')
    >>> amp.parse_dtype("f32")
    dtype('float32')
    >>> amp.parse_dtype("bf16")
    dtype(bfloat16)
    """
    if value == "half":
        return half_dtype()
    try:
        return _BY_NAME[value]
    except KeyError:
        raise ValueError(f"parse_dtype: unknown dtype '{value}'; must be full, half, float16, "
                         f"bfloat16, float32, float64 or a contraction thereof (f16, bf16, "
                         f"f32, f64)") from None


def _floating(fname: str, name: str, dtype: Any) -> np.dtype:
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{fname}: {name} must be a floating-point dtype; got "
                        f"{dtype!r}") from None
    if d not in _NAMES:
        raise TypeError(f"{fname}: {name} must be float16, bfloat16, float32 or float64; "
                        f"got {d}")
    return d


def _cast_floating_to(tree: T, dtype: np.dtype) -> T:
    def cast(x: Any) -> Any:
        d = getattr(x, "dtype", None)
        if d is None or not hasattr(x, "shape") or dkind(np.dtype(d)) != "f" or d == dtype:
            return x
        if isinstance(x, np.ndarray):
            return x.astype(dtype)
        return xp.astype(x, dtype)
    return cg.tree_map(cast, tree)


@dataclasses.dataclass(frozen=True)
class Policy:
    """Which dtype parameters are stored in, computation runs in, and outputs come out in.

    Parameters
    ----------
    param_dtype, compute_dtype, output_dtype : dtype
        float16, bfloat16, float32 or float64.

    Raises
    ------
    TypeError
        If a dtype is not one of those.

    Examples
    --------
    >>> import clnp
    >>> from clnp_nn import amp
    >>> policy = amp.Policy(clnp.float32, clnp.float16, clnp.float32)
    >>> print(policy)
    p=full,c=f16,o=full
    >>> params = {"w": clnp.asarray([0.5, 1.5], dtype=clnp.float32)}
    >>> x = clnp.asarray([2.0, 4.0], dtype=clnp.float32)
    >>> def loss_fn(params, x):
    ...     params, x = policy.cast_to_compute((params, x))
    ...     out = clnp.sum(params["w"] * x)   # computed in float16
    ...     return policy.cast_to_output(out)
    >>> out = loss_fn(params, x)
    >>> out.dtype, float(out)
    (dtype('float32'), 7.0)
    """
    param_dtype: Any = dataclasses.field(metadata=_STATIC)
    compute_dtype: Any = dataclasses.field(metadata=_STATIC)
    output_dtype: Any = dataclasses.field(metadata=_STATIC)

    def __post_init__(self) -> None:
        for name in ("param_dtype", "compute_dtype", "output_dtype"):
            object.__setattr__(self, name, _floating("Policy", name, getattr(self, name)))

    def cast_to_param(self, x: T) -> T:
        """Cast the floating-point leaves of ``x`` to ``param_dtype``.

        Parameters
        ----------
        x : pytree
            Leaves that are clnp or NumPy arrays of a real floating dtype are cast; integer,
            bool and non-array leaves are returned as they are.

        Returns
        -------
        pytree
            Same structure; arrays stay on their devices.

        Examples
        --------
        >>> import clnp
        >>> from clnp_nn import amp
        >>> policy = amp.get_policy("p=f32,c=f16")
        >>> tree = {"w": clnp.ones(3, dtype=clnp.float16), "step": clnp.asarray(3)}
        >>> cast = policy.cast_to_param(tree)
        >>> cast["w"].dtype, cast["step"].dtype == tree["step"].dtype
        (dtype('float32'), True)
        """
        return _cast_floating_to(x, self.param_dtype)

    def cast_to_compute(self, x: T) -> T:
        """Cast the floating-point leaves of ``x`` to ``compute_dtype``.

        Parameters
        ----------
        x : pytree
            Leaves that are clnp or NumPy arrays of a real floating dtype are cast; integer,
            bool and non-array leaves are returned as they are.

        Returns
        -------
        pytree
            Same structure; arrays stay on their devices.

        Examples
        --------
        >>> import clnp
        >>> from clnp_nn import amp
        >>> policy = amp.get_policy("p=f32,c=f16")
        >>> tree = {"w": clnp.ones(3, dtype=clnp.float32), "step": clnp.asarray(3)}
        >>> cast = policy.cast_to_compute(tree)
        >>> cast["w"].dtype, cast["step"].dtype == tree["step"].dtype
        (dtype('float16'), True)
        """
        return _cast_floating_to(x, self.compute_dtype)

    def cast_to_output(self, x: T) -> T:
        """Cast the floating-point leaves of ``x`` to ``output_dtype``.

        Parameters
        ----------
        x : pytree
            Leaves that are clnp or NumPy arrays of a real floating dtype are cast; integer,
            bool and non-array leaves are returned as they are.

        Returns
        -------
        pytree
            Same structure; arrays stay on their devices.

        Examples
        --------
        >>> import clnp
        >>> from clnp_nn import amp
        >>> policy = amp.get_policy("p=f32,c=f16,o=f32")
        >>> out = policy.cast_to_output({"loss": clnp.ones((), dtype=clnp.float16)})
        >>> out["loss"].dtype
        dtype('float32')
        """
        return _cast_floating_to(x, self.output_dtype)

    def with_output_dtype(self, output_dtype: Any) -> "Policy":
        """This policy with another ``output_dtype``.

        Parameters
        ----------
        output_dtype : dtype
            float16, bfloat16, float32 or float64.

        Returns
        -------
        Policy

        Raises
        ------
        TypeError
            If ``output_dtype`` is not one of those.

        Examples
        --------
        >>> import clnp
        >>> from clnp_nn import amp
        >>> print(amp.get_policy("p=f32,c=f16").with_output_dtype(clnp.float32))
        p=full,c=f16,o=full
        """
        return dataclasses.replace(self, output_dtype=output_dtype)

    def __str__(self) -> str:
        return (f"p={_NAMES[self.param_dtype][0]},c={_NAMES[self.compute_dtype][0]},"
                f"o={_NAMES[self.output_dtype][0]}")


def get_policy(policy_name: str) -> Policy:
    """Parse a policy string as jmp does.

    ``"params=float32,compute=float16,output=float32"`` (keys ``p``/``params``,
    ``c``/``compute``, ``o``/``output``; compute defaults to params and output to compute),
    or one dtype name for all three (``"half"``, ``"full"``).

    Parameters
    ----------
    policy_name : str
        The policy, in the syntax above.

    Returns
    -------
    Policy

    Raises
    ------
    ValueError
        For an unknown key or dtype name.

    Examples
    --------
    >>> from clnp_nn import amp
    >>> str(amp.get_policy("p=f32,c=half"))
    'p=full,c=f16,o=f16'
    >>> amp.get_policy("half").param_dtype
    dtype('float16')
    """
    if not isinstance(policy_name, str):
        raise TypeError(f"get_policy: policy_name must be a str; got "
                        f"{type(policy_name).__name__}")
    param = np.dtype(xp.float32)
    compute = output = None
    if "=" in policy_name:
        for part in policy_name.split(","):
            key, sep, value = part.partition("=")
            if not sep:
                raise ValueError(f"get_policy: '{part}' in '{policy_name}' is not key=dtype")
            d = parse_dtype(value.strip())
            key = key.strip()
            if key in ("p", "params"):
                param = d
            elif key in ("c", "compute"):
                compute = d
            elif key in ("o", "output"):
                output = d
            else:
                raise ValueError(f"get_policy: unknown key '{key}' in '{policy_name}'; should "
                                 f"be 'params', 'compute' or 'output'")
        compute = param if compute is None else compute
        output = compute if output is None else output
    else:
        param = compute = output = parse_dtype(policy_name.strip())
    return Policy(param_dtype=param, compute_dtype=compute, output_dtype=output)


def cast_to_full(tree: T) -> T:
    """Cast every floating-point leaf to float32 (jmp's ``cast_to_full``).

    Parameters
    ----------
    tree : pytree
        Arrays of any dtype; non-floating leaves and non-arrays are returned as they are.

    Returns
    -------
    pytree

    Examples
    --------
    >>> import clnp
    >>> from clnp_nn import amp
    >>> grads = {"w": clnp.ones(2, dtype=clnp.float16)}
    >>> amp.cast_to_full(grads)["w"].dtype
    dtype('float32')
    """
    return _cast_floating_to(tree, np.dtype(xp.float32))


def cast_to_half(tree: T) -> T:
    """Cast every floating-point leaf to :func:`half_dtype` (float16; jmp's ``cast_to_half``).

    Parameters
    ----------
    tree : pytree
        Arrays of any dtype; non-floating leaves and non-arrays are returned as they are.

    Returns
    -------
    pytree

    Examples
    --------
    >>> import clnp
    >>> from clnp_nn import amp
    >>> x16 = amp.cast_to_half({"x": clnp.ones(2, dtype=clnp.float32)})
    >>> x16["x"].dtype
    dtype('float16')
    """
    return _cast_floating_to(tree, half_dtype())


# ---------------------------------------------------------------------------- loss scales
def _warn_if_not_floating(x: Any, name: str) -> None:
    d = getattr(x, "dtype", None)
    if d is None:
        d = np.asarray(x).dtype
    if dkind(np.dtype(d)) != "f":
        warnings.warn(f"Expected floating type for {name}, got {d}", stacklevel=3)


def _as_device_scalar(x: Any, dtype: Any, device: Any) -> Any:
    if hasattr(x, "shape") and not isinstance(x, np.ndarray):
        return x
    return xp.asarray(np.asarray(x, dtype=dtype), device=device)


@dataclasses.dataclass(frozen=True)
class NoOpLossScale:
    """No loss scaling: ``scale``/``unscale`` return the tree and ``loss_scale`` is 1."""

    @property
    def loss_scale(self) -> int:
        return 1

    def scale(self, tree: T) -> T:
        """``tree`` unchanged.

        Parameters
        ----------
        tree : pytree
            Usually the loss.

        Returns
        -------
        pytree
            ``tree`` itself.

        Examples
        --------
        >>> import clnp
        >>> from clnp_nn import amp
        >>> loss = clnp.asarray(0.5, dtype=clnp.float32)
        >>> amp.NoOpLossScale().scale(loss) is loss
        True
        """
        return tree

    def unscale(self, tree: T) -> T:
        """``tree`` unchanged.

        Parameters
        ----------
        tree : pytree
            Usually the gradients.

        Returns
        -------
        pytree
            ``tree`` itself.

        Examples
        --------
        >>> import clnp
        >>> from clnp_nn import amp
        >>> grads = {"w": clnp.ones(2)}
        >>> amp.NoOpLossScale().unscale(grads) is grads
        True
        """
        return tree

    def adjust(self, grads_finite: Any) -> "NoOpLossScale":
        """Itself (there is no scale to adjust).

        Parameters
        ----------
        grads_finite : 0-d bool array
            From :func:`all_finite` (ignored).

        Returns
        -------
        NoOpLossScale
            ``self``.

        Examples
        --------
        >>> import clnp
        >>> from clnp_nn import amp
        >>> ls = amp.NoOpLossScale()
        >>> ls.adjust(amp.all_finite({"w": clnp.ones(2)})) is ls, ls.loss_scale
        (True, 1)
        """
        del grads_finite
        return self


@dataclasses.dataclass(frozen=True)
class StaticLossScale:
    """A fixed loss scale.

    Parameters
    ----------
    loss_scale : float or 0-d array

    Examples
    --------
    >>> import numpy, clnp, clnp_grad as cg
    >>> from clnp_nn import amp
    >>> ls = amp.StaticLossScale(2.0 ** 10)
    >>> params = clnp.asarray([0.5, 1.5], dtype=clnp.float32)
    >>> scaled = cg.grad(lambda p: ls.scale(clnp.sum(p * p)))(params)
    >>> print(numpy.asarray(scaled))
    [1024. 3072.]
    >>> print(numpy.asarray(ls.unscale(scaled)))
    [1. 3.]
    """
    loss_scale: Any

    def scale(self, tree: T) -> T:
        """Every leaf times ``loss_scale``.

        Parameters
        ----------
        tree : pytree of arrays
            Usually the loss.

        Returns
        -------
        pytree
            ``tree``'s structure, each leaf multiplied by ``loss_scale``.

        Examples
        --------
        >>> import numpy, clnp
        >>> from clnp_nn import amp
        >>> loss = clnp.asarray(0.5, dtype=clnp.float32)
        >>> print(numpy.asarray(amp.StaticLossScale(8.0).scale(loss)))
        4.0
        """
        return cg.tree_map(lambda x: x * self.loss_scale, tree)

    def unscale(self, tree: T) -> T:
        """Every leaf times ``1 / loss_scale``.

        Parameters
        ----------
        tree : pytree of arrays
            Usually the gradients of the scaled loss.

        Returns
        -------
        pytree
            ``tree``'s structure, each leaf divided by ``loss_scale``.

        Examples
        --------
        >>> import numpy, clnp
        >>> from clnp_nn import amp
        >>> grads = {"w": clnp.asarray([8.0, 16.0], dtype=clnp.float32)}
        >>> print(numpy.asarray(amp.StaticLossScale(8.0).unscale(grads)["w"]))
        [1. 2.]
        """
        inv = 1 / self.loss_scale
        return cg.tree_map(lambda x: x * inv, tree)

    def adjust(self, grads_finite: Any) -> "StaticLossScale":
        """Itself (a static scale never changes).

        Parameters
        ----------
        grads_finite : 0-d bool array
            From :func:`all_finite` (ignored).

        Returns
        -------
        StaticLossScale
            ``self``.

        Examples
        --------
        >>> import clnp
        >>> from clnp_nn import amp
        >>> ls = amp.StaticLossScale(8.0)
        >>> overflow = amp.all_finite({"w": clnp.asarray([clnp.inf])})
        >>> ls.adjust(overflow) is ls
        True
        """
        del grads_finite
        return self


@dataclasses.dataclass(frozen=True)
class DynamicLossScale:
    """jmp's dynamic loss scale.

    ``adjust(grads_finite)``: after a step with non-finite gradients the scale becomes
    ``max(min_loss_scale, loss_scale / factor)`` and the counter restarts; after ``period``
    finite steps in a row it becomes ``loss_scale * factor`` (if that is finite).

    Parameters
    ----------
    loss_scale : float or 0-d floating array
        The initial scale (e.g. ``2 ** 15``); stored as a 0-d float32 array.
    counter : 0-d int32 array, optional
        Finite steps since the last change (default 0).
    period : int
        Finite steps before the scale grows (static).
    factor : int
        Growth and shrink factor (static).
    min_loss_scale : float or 0-d array
        The floor (default 1).

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> from clnp_nn import amp
    >>> ls = amp.DynamicLossScale(clnp.asarray(2.0 ** 15, dtype=clnp.float32), period=2)
    >>> params = {"w": clnp.asarray([0.5, 1.5], dtype=clnp.float32)}
    >>> grads = ls.unscale(cg.grad(lambda p: ls.scale(clnp.sum(p["w"] * p["w"])))(params))
    >>> finite = amp.all_finite(grads)
    >>> bool(finite)
    True
    >>> new_params = {"w": params["w"] - 0.25 * grads["w"]}
    >>> params = amp.select_tree(finite, new_params, params)   # keep the step
    >>> ls = ls.adjust(finite)
    >>> float(ls.loss_scale), int(ls.counter)
    (32768.0, 1)
    >>> ls = ls.adjust(finite)                # ``period`` finite steps: the scale grows
    >>> float(ls.loss_scale), int(ls.counter)
    (65536.0, 0)
    >>> overflow = amp.all_finite({"w": clnp.asarray([1.0, clnp.inf])})
    >>> ls = ls.adjust(overflow)              # non-finite gradients: the scale shrinks
    >>> float(ls.loss_scale), int(ls.counter)
    (32768.0, 0)
    """
    loss_scale: Any
    counter: Any = None
    period: int = dataclasses.field(default=2000, metadata=_STATIC)
    factor: int = dataclasses.field(default=2, metadata=_STATIC)
    min_loss_scale: Any = None

    def __post_init__(self) -> None:
        _warn_if_not_floating(self.loss_scale, "loss_scale")
        dev = getattr(self.loss_scale, "device", None)
        if not hasattr(dev, "queue"):
            dev = None
        ls = _as_device_scalar(self.loss_scale, np.float32, dev)
        dev = getattr(ls, "device", dev)
        counter = np.zeros((), np.int32) if self.counter is None else self.counter
        mls = np.ones((), np.float32) if self.min_loss_scale is None else self.min_loss_scale
        _warn_if_not_floating(mls, "min_loss_scale")
        for name in ("period", "factor"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"DynamicLossScale: {name} must be a positive int; got {v!r}")
        object.__setattr__(self, "loss_scale", ls)
        object.__setattr__(self, "counter", _as_device_scalar(counter, np.int32, dev))
        object.__setattr__(self, "min_loss_scale", _as_device_scalar(mls, np.float32, dev))

    def scale(self, tree: T) -> T:
        """Every leaf times ``loss_scale`` (cast to the leaf's dtype).

        Parameters
        ----------
        tree : pytree of arrays
            Usually the loss.

        Returns
        -------
        pytree
            ``tree``'s structure, each leaf multiplied by the current scale.

        Examples
        --------
        >>> import numpy, clnp
        >>> from clnp_nn import amp
        >>> ls = amp.DynamicLossScale(clnp.asarray(1024.0, dtype=clnp.float32))
        >>> print(numpy.asarray(ls.scale(clnp.asarray(0.5, dtype=clnp.float32))))
        512.0
        """
        return cg.tree_map(lambda x: x * xp.astype(self.loss_scale, x.dtype), tree)

    def unscale(self, tree: T) -> T:
        """Every leaf times ``1 / loss_scale``.

        Parameters
        ----------
        tree : pytree of arrays
            Usually the gradients of the scaled loss.

        Returns
        -------
        pytree
            ``tree``'s structure, each leaf divided by the current scale.

        Examples
        --------
        >>> import numpy, clnp
        >>> from clnp_nn import amp
        >>> ls = amp.DynamicLossScale(clnp.asarray(1024.0, dtype=clnp.float32))
        >>> grads = {"w": clnp.asarray([512.0, 2048.0], dtype=clnp.float32)}
        >>> print(numpy.asarray(ls.unscale(grads)["w"]))
        [0.5 2. ]
        """
        inv = 1 / self.loss_scale
        return cg.tree_map(lambda x: x * xp.astype(inv, x.dtype), tree)

    def adjust(self, grads_finite: Any) -> "DynamicLossScale":
        """The next loss scale given whether this step's gradients were all finite.

        After a step with non-finite gradients the scale becomes ``max(min_loss_scale,
        loss_scale / factor)`` and the counter restarts; after ``period`` finite steps in a row it
        becomes ``loss_scale * factor`` (if that is finite). Computed on the device, so it jits.

        Parameters
        ----------
        grads_finite : 0-d bool array
            From :func:`all_finite`.

        Returns
        -------
        DynamicLossScale
            A new loss scale (the instance is immutable).

        Raises
        ------
        ValueError
            If ``grads_finite`` is not a 0-d boolean.

        Examples
        --------
        >>> import clnp
        >>> from clnp_nn import amp
        >>> ls = amp.DynamicLossScale(clnp.asarray(1024.0, dtype=clnp.float32), period=1)
        >>> ls = ls.adjust(amp.all_finite({"w": clnp.ones(2)}))
        >>> float(ls.loss_scale)
        2048.0
        >>> ls = ls.adjust(amp.all_finite({"w": clnp.asarray([clnp.nan])}))
        >>> float(ls.loss_scale)
        1024.0
        """
        _check_pred("DynamicLossScale.adjust", grads_finite)
        ls, factor = self.loss_scale, self.factor
        grown = ls * factor
        grown = xp.where(xp.all(xp.isfinite(grown)), grown, ls)
        loss_scale = xp.where(grads_finite,
                              xp.where(self.counter == (self.period - 1), grown, ls),
                              xp.maximum(self.min_loss_scale, ls / factor))
        counter = ((self.counter + 1) % self.period) * xp.astype(grads_finite, xp.int32)
        return dataclasses.replace(self, loss_scale=loss_scale, counter=counter)


LossScale = Union[NoOpLossScale, StaticLossScale, DynamicLossScale]


def _check_pred(fname: str, pred: Any) -> None:
    if not (hasattr(pred, "dtype") and hasattr(pred, "shape")) or tuple(pred.shape) != () \
            or np.dtype(pred.dtype) != np.bool_:
        got = (f"shape {tuple(pred.shape)} and dtype {pred.dtype}" if hasattr(pred, "shape")
               else type(pred).__name__)
        raise ValueError(f"{fname}: expected a boolean scalar (0-d bool array, e.g. from "
                         f"all_finite); got {got}")


def all_finite(tree: Any) -> Any:
    """Whether every element of every leaf of ``tree`` is finite (a 0-d bool array).

    Parameters
    ----------
    tree : pytree of arrays
        Usually the gradients of a step.

    Returns
    -------
    array
        0-d bool; True for a tree without leaves.

    Examples
    --------
    >>> import clnp
    >>> from clnp_nn import amp
    >>> amp.all_finite({"a": clnp.asarray([1.0, clnp.inf])})
    array(False)
    >>> bool(amp.all_finite({"a": clnp.asarray([1.0, 2.0]), "b": clnp.zeros(2)}))
    True
    """
    leaves = cg.tree_leaves(tree)
    if not leaves:
        return xp.asarray(True)
    flags = [xp.all(xp.isfinite(x)) for x in leaves]
    return xp.all(xp.stack(flags)) if len(flags) > 1 else flags[0]


def select_tree(pred: Any, a: T, b: T) -> T:
    """``a`` where ``pred`` is True else ``b``, leafwise (as ``lax.select``).

    Parameters
    ----------
    pred : 0-d bool array
        Which tree to take, e.g. from :func:`all_finite`.
    a, b : pytrees of the same structure
        The candidates; their leaves must have equal shapes and dtypes.

    Returns
    -------
    pytree

    Raises
    ------
    ValueError
        If ``pred`` is not a boolean scalar, or the structures differ.

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn import amp
    >>> params = {"w": clnp.asarray([1.0, 2.0])}
    >>> new_params = {"w": clnp.asarray([0.5, 1.5])}
    >>> grads = {"w": clnp.asarray([clnp.nan, 1.0])}
    >>> params = amp.select_tree(amp.all_finite(grads), new_params, params)
    >>> print(numpy.asarray(params["w"]))   # the step is skipped
    [1. 2.]
    """
    _check_pred("select_tree", pred)
    return cg.tree_map(lambda x, y: xp.where(pred, x, y), a, b)
