"""More of ``numpy.random``'s distributions for :class:`clnp.random.Generator`, on the device.

Each is a transformation of the Philox uniform, normal and exponential streams with clnp
elementwise ops (inverse CDFs, ratios, closed forms). ``standard_gamma`` (and what is built
on it: ``gamma``, ``chisquare``, ``beta``, ``f``, ``standard_t``, ``dirichlet``) uses
Marsaglia and Tsang's rejection method, vectorised: all elements draw a candidate together,
the accepted ones are kept, and the rest draw again; the host reads one "all accepted" flag
per round (about 1.03 rounds' worth of draws on average, a handful of rounds in all).
``poisson`` and ``binomial`` invert the CDF by a vectorised sequential search for small
means and use Hormann's transformed rejection (PTRS, BTRS) for large ones;
``negative_binomial``, ``noncentral_chisquare`` and ``noncentral_f`` are mixtures of those,
``multinomial`` conditional binomials; ``hypergeometric`` searches its exact CDF outwards
from the mode; ``zipf``, ``logseries`` and ``vonmises`` are vectorised rejection samplers.
Streams differ from NumPy's (Philox here, a different algorithm per distribution), so values
differ from NumPy's for the same seed; the distributions are the same.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core import dtypes as dt
from .._core.checks import is_array, normalize_shape
from .._runtime.user_frames import user_stacklevel
from .._core.namespace import namespace as _xp




class DistributionsMixin:
    """NumPy ``Generator`` distributions built from ``random``, ``standard_normal`` and
    ``standard_exponential`` (mixed into :class:`clnp.random.Generator`)."""

    # ------------------------------------------------------------------ helpers
    def _shape_of(self, size: Any, fname: str, *params: Any) -> tuple[int, ...]:
        from .._core.eager import broadcast_shapes
        try:
            pshape = broadcast_shapes(*[p.shape for p in params if is_array(p)]) \
                if any(is_array(p) for p in params) else ()
        except ValueError as e:
            raise ValueError(f"{fname}: parameters: {e}") from None
        if size is None:
            return pshape
        shape = normalize_shape(size, fname)
        if broadcast_shapes(shape, pshape) != shape:
            raise ValueError(f"{fname}: parameters of shape {pshape} do not broadcast to "
                             f"size {shape}")
        return shape

    def _params(self, fname: str, dtype: Any, **named: Any) -> tuple[np.dtype, list[Any]]:
        d = self._float_dtype(dtype, self.device, fname)  # type: ignore[attr-defined]
        # every parameter checked (type, dtype, then shapes together) before any is cast on
        # the device or its values are checked
        raw = [self._param(v, k, d, self.device, fname, cast=False)  # type: ignore[attr-defined]
               for k, v in named.items()]
        arrays = [a for a in raw if is_array(a)]
        if len(arrays) > 1:
            from .._core.eager import broadcast_shapes
            try:
                broadcast_shapes(*[a.shape for a in arrays])
            except ValueError as e:
                raise ValueError(f"{fname}: parameters: {e}") from None
        return d, [a.astype(d) if is_array(a) and a.dtype != d else a for a in raw]

    @staticmethod
    def _check(cond_bad: Any, fname: str, msg: str) -> None:
        if is_array(cond_bad):
            if cond_bad.size and bool(_xp().any(cond_bad)):
                raise ValueError(f"{fname}: {msg}")
        elif cond_bad:
            raise ValueError(f"{fname}: {msg}")

    def _open01(self, shape: tuple[int, ...], d: np.dtype) -> Any:
        """Uniform in the open interval (0, 1)."""
        xp = _xp()
        u = self.random(shape, dtype=d)  # type: ignore[attr-defined]
        return xp.where(u == 0, xp.asarray(float(np.finfo(d).tiny), dtype=d,
                                           device=u.device), u)

    # ------------------------------------------------------------------ continuous
    def laplace(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, *,
                dtype: Any = None) -> Any:
        """Samples from the Laplace (double exponential) distribution.

        Parameters
        ----------
        loc : float or array_like, optional
            Position of the peak.
        scale : float or array_like, optional
            Exponential decay, not negative.
        size : int or tuple of int, optional
            Output shape.
        dtype : dtype, optional
            float32 or float64.

        Returns
        -------
        Array
            Samples.

        Raises
        ------
        ValueError
            ``scale < 0``.

        Examples
        --------
        >>> import clnp
        >>> clnp.random.default_rng(0).laplace(0.0, 1.0, size=(2, 3)).shape
        (2, 3)
        """
        xp = _xp()
        d, (loc, scale) = self._params("laplace", dtype, loc=loc, scale=scale)
        self._check(scale < 0, "laplace", "scale < 0")
        u = self._open01(self._shape_of(size, "laplace", loc, scale), d) - 0.5
        return loc - scale * xp.sign(u) * xp.log1p(-2.0 * xp.abs(u))

    def logistic(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, *,
                 dtype: Any = None) -> Any:
        """Samples from the logistic distribution.

        Parameters
        ----------
        loc : float or array_like, optional
            Mean.
        scale : float or array_like, optional
            Scale, not negative.
        size : int or tuple of int, optional
            Output shape.
        dtype : dtype, optional
            float32 or float64.

        Returns
        -------
        Array
            Samples.

        Raises
        ------
        ValueError
            ``scale < 0``.

        Examples
        --------
        >>> import clnp
        >>> clnp.random.default_rng(0).logistic(size=4).shape
        (4,)
        """
        xp = _xp()
        d, (loc, scale) = self._params("logistic", dtype, loc=loc, scale=scale)
        self._check(scale < 0, "logistic", "scale < 0")
        u = self._open01(self._shape_of(size, "logistic", loc, scale), d)
        return loc + scale * xp.log(u / (1.0 - u))

    def gumbel(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None, *,
               dtype: Any = None) -> Any:
        """Samples from the Gumbel (extreme value type I) distribution.

        Parameters
        ----------
        loc : float or array_like, optional
            Mode.
        scale : float or array_like, optional
            Scale, not negative.
        size : int or tuple of int, optional
            Output shape.
        dtype : dtype, optional
            float32 or float64.

        Returns
        -------
        Array
            Samples.

        Raises
        ------
        ValueError
            ``scale < 0``.

        Examples
        --------
        >>> import clnp
        >>> clnp.random.default_rng(0).gumbel(size=3).shape
        (3,)
        """
        xp = _xp()
        d, (loc, scale) = self._params("gumbel", dtype, loc=loc, scale=scale)
        self._check(scale < 0, "gumbel", "scale < 0")
        u = self._open01(self._shape_of(size, "gumbel", loc, scale), d)
        return loc - scale * xp.log(-xp.log(u))

    def lognormal(self, mean: Any = 0.0, sigma: Any = 1.0, size: Any = None, *,
                  dtype: Any = None) -> Any:
        """Samples from a log-normal distribution: ``exp(normal(mean, sigma))``.

        Parameters
        ----------
        mean, sigma : float or array_like, optional
            Of the underlying normal distribution (``sigma`` not negative).
        size : int or tuple of int, optional
            Output shape.
        dtype : dtype, optional
            float32 or float64.

        Returns
        -------
        Array
            Positive samples.

        Raises
        ------
        ValueError
            ``sigma < 0``.

        Examples
        --------
        >>> import clnp
        >>> bool(clnp.all(clnp.random.default_rng(0).lognormal(size=10) > 0))
        True
        """
        xp = _xp()
        d, (mean, sigma) = self._params("lognormal", dtype, mean=mean, sigma=sigma)
        self._check(sigma < 0, "lognormal", "sigma < 0")
        z = self.standard_normal(self._shape_of(size, "lognormal", mean, sigma),  # type: ignore
                                 dtype=d)
        return xp.exp(mean + sigma * z)

    def rayleigh(self, scale: Any = 1.0, size: Any = None, *, dtype: Any = None) -> Any:
        """Samples from the Rayleigh distribution.

        Parameters
        ----------
        scale : float or array_like, optional
            Mode, not negative.
        size : int or tuple of int, optional
            Output shape.
        dtype : dtype, optional
            float32 or float64.

        Returns
        -------
        Array
            Non-negative samples.

        Raises
        ------
        ValueError
            ``scale < 0``.

        Examples
        --------
        >>> import clnp
        >>> clnp.random.default_rng(0).rayleigh(2.0, size=5).shape
        (5,)
        """
        xp = _xp()
        d, (scale,) = self._params("rayleigh", dtype, scale=scale)
        self._check(scale < 0, "rayleigh", "scale < 0")
        e = self.standard_exponential(self._shape_of(size, "rayleigh", scale),  # type: ignore
                                      dtype=d)
        return scale * xp.sqrt(2.0 * e)

    def _shape_a(self, fname: str, a: Any, size: Any, dtype: Any) -> tuple[Any, Any]:
        d, (a,) = self._params(fname, dtype, a=a)
        self._check(a < 0, fname, "a < 0")
        e = self.standard_exponential(self._shape_of(size, fname, a), dtype=d)  # type: ignore
        return a, e

    def weibull(self, a: Any, size: Any = None, *, dtype: Any = None) -> Any:
        """Samples from a Weibull distribution of shape ``a`` (scale 1).

        Parameters
        ----------
        a : float or array_like
            Shape, not negative (0 gives zeros).
        size : int or tuple of int, optional
            Output shape.
        dtype : dtype, optional
            float32 or float64.

        Returns
        -------
        Array
            Samples.

        Raises
        ------
        ValueError
            ``a < 0``.

        Examples
        --------
        >>> import clnp
        >>> clnp.random.default_rng(0).weibull(1.5, size=3).shape
        (3,)
        """
        xp = _xp()
        a, e = self._shape_a("weibull", a, size, dtype)
        safe = xp.where(a == 0, xp.ones_like(a), a) if is_array(a) else (a or 1.0)
        r = xp.pow(e, 1.0 / safe)
        return xp.where(a == 0, xp.zeros_like(r), r) if is_array(a) or a == 0 else r

    def pareto(self, a: Any, size: Any = None, *, dtype: Any = None) -> Any:
        """Samples from a Pareto II (Lomax) distribution of shape ``a``.

        Parameters
        ----------
        a : float or array_like
            Shape, positive.
        size : int or tuple of int, optional
            Output shape.
        dtype : dtype, optional
            float32 or float64.

        Returns
        -------
        Array
            Non-negative samples.

        Raises
        ------
        ValueError
            ``a <= 0``.

        Examples
        --------
        >>> import clnp
        >>> bool(clnp.all(clnp.random.default_rng(0).pareto(3.0, size=10) >= 0))
        True
        """
        a, e = self._shape_a("pareto", a, size, dtype)
        self._check(a == 0, "pareto", "a <= 0")
        return _xp().expm1(e / a)

    def power(self, a: Any, size: Any = None, *, dtype: Any = None) -> Any:
        """Samples in [0, 1] from a power distribution of exponent ``a - 1``.

        Parameters
        ----------
        a : float or array_like
            Positive.
        size : int or tuple of int, optional
            Output shape.
        dtype : dtype, optional
            float32 or float64.

        Returns
        -------
        Array
            Samples in [0, 1].

        Raises
        ------
        ValueError
            ``a <= 0``.

        Examples
        --------
        >>> import clnp
        >>> x = clnp.random.default_rng(0).power(5.0, size=10)
        >>> bool(clnp.all((x >= 0) & (x <= 1)))
        True
        """
        xp = _xp()
        a, e = self._shape_a("power", a, size, dtype)
        self._check(a == 0, "power", "a <= 0")
        return xp.pow(-xp.expm1(-e), 1.0 / a)

    def standard_cauchy(self, size: Any = None, *, dtype: Any = None) -> Any:
        """Samples from the standard Cauchy (Lorentz) distribution: a ratio of normals.

        Parameters
        ----------
        size : int or tuple of int, optional
            Output shape.
        dtype : dtype, optional
            float32 or float64.

        Returns
        -------
        Array
            Samples.

        Examples
        --------
        >>> import clnp
        >>> clnp.random.default_rng(0).standard_cauchy(4).shape
        (4,)
        """
        d = self._float_dtype(dtype, self.device, "standard_cauchy")  # type: ignore
        shape = self._shape_of(size, "standard_cauchy")
        z = self.standard_normal((2,) + shape, dtype=d)  # type: ignore[attr-defined]
        return z[0] / z[1]

    def triangular(self, left: Any, mode: Any, right: Any, size: Any = None, *,
                   dtype: Any = None) -> Any:
        """Samples from the triangular distribution on [left, right] peaking at ``mode``.

        Parameters
        ----------
        left, mode, right : float or array_like
            ``left <= mode <= right`` and ``left < right``.
        size : int or tuple of int, optional
            Output shape.
        dtype : dtype, optional
            float32 or float64.

        Returns
        -------
        Array
            Samples.

        Raises
        ------
        ValueError
            When the parameters are out of order.

        Examples
        --------
        >>> import clnp
        >>> x = clnp.random.default_rng(0).triangular(-1.0, 0.0, 2.0, size=10)
        >>> bool(clnp.all((x >= -1) & (x <= 2)))
        True
        """
        xp = _xp()
        d, (lo, mo, hi) = self._params("triangular", dtype, left=left, mode=mode, right=right)
        self._check(lo > mo, "triangular", "left > mode")
        self._check(mo > hi, "triangular", "mode > right")
        self._check(lo == hi, "triangular", "left == right")
        u = self.random(self._shape_of(size, "triangular", lo, mo, hi),  # type: ignore
                        dtype=d)
        base, lb, rb = hi - lo, mo - lo, hi - mo
        ratio = lb / base
        low = lo + xp.sqrt(u * base * lb)
        high = hi - xp.sqrt((1.0 - u) * base * rb)
        return xp.where(u <= ratio, low, high)

    def wald(self, mean: Any, scale: Any, size: Any = None, *, dtype: Any = None) -> Any:
        """Samples from the Wald (inverse Gaussian) distribution.

        Parameters
        ----------
        mean, scale : float or array_like
            Positive.
        size : int or tuple of int, optional
            Output shape.
        dtype : dtype, optional
            float32 or float64.

        Returns
        -------
        Array
            Positive samples.

        Raises
        ------
        ValueError
            ``mean <= 0`` or ``scale <= 0``.

        Examples
        --------
        >>> import clnp
        >>> bool(clnp.all(clnp.random.default_rng(0).wald(1.0, 2.0, size=10) > 0))
        True
        """
        xp = _xp()
        d, (mu, lam) = self._params("wald", dtype, mean=mean, scale=scale)
        self._check(mu <= 0, "wald", "mean <= 0")
        self._check(lam <= 0, "wald", "scale <= 0")
        shape = self._shape_of(size, "wald", mu, lam)
        y = self.standard_normal(shape, dtype=d)  # type: ignore[attr-defined]
        y = mu * y * y
        x = mu + (mu / (2.0 * lam)) * (y - xp.sqrt(4.0 * lam * y + y * y))
        u = self.random(shape, dtype=d)  # type: ignore[attr-defined]
        return xp.where(u <= mu / (mu + x), x, mu * mu / x)

    # ------------------------------------------------------------------ gamma family
    def standard_gamma(self, shape: Any, size: Any = None, dtype: Any = None,
                       out: Any = None) -> Any:
        """Samples from the standard gamma distribution (Marsaglia and Tsang's method,
        vectorised rejection on the device).

        Parameters
        ----------
        shape : float or array_like
            Shape ``k``, not negative (0 gives zeros).
        size : int or tuple of int, optional
            Output shape.
        dtype : dtype, optional
            float32 or float64.
        out : Array, optional
            Where to write the samples.

        Returns
        -------
        Array
            Non-negative samples, mean ``k``.

        Raises
        ------
        ValueError
            ``shape < 0``.

        Examples
        --------
        >>> import clnp
        >>> clnp.random.default_rng(0).standard_gamma(2.0, size=(2, 2)).shape
        (2, 2)
        """
        xp = _xp()
        d, (k,) = self._params("standard_gamma", dtype, shape=shape)
        self._check(k < 0, "standard_gamma", "shape < 0")
        oshape = self._shape_of(size, "standard_gamma", k)
        kk = xp.broadcast_to(k if is_array(k) else xp.asarray(k, dtype=d, device=self.device),
                             oshape)
        small = kk < 1.0
        a = xp.where(small, kk + 1.0, kk)
        dd = a - 1.0 / 3.0
        c = 1.0 / xp.sqrt(9.0 * dd)
        res = xp.zeros(oshape, dtype=d, device=self.device)
        done = xp.zeros(oshape, dtype=dt.bool_, device=self.device)
        for _ in range(64):
            x = self.standard_normal(oshape, dtype=d)  # type: ignore[attr-defined]
            v = 1.0 + c * x
            v3 = v * v * v
            u = self._open01(oshape, d)
            ok = (v > 0) & (xp.log(u) < 0.5 * x * x + dd - dd * v3 +
                            dd * xp.log(xp.where(v3 > 0, v3, xp.ones_like(v3))))
            take = ok & ~done
            res = xp.where(take, dd * v3, res)
            done = done | ok
            if not res.size or bool(xp.all(done)):
                break
        else:   # pragma: no cover - the acceptance rate is above 95 % per round
            raise RuntimeError("standard_gamma: rejection sampling did not converge")
        boost = xp.pow(self._open01(oshape, d), 1.0 / xp.where(kk > 0, kk, xp.ones_like(kk)))
        res = xp.where(small, res * boost, res)
        res = xp.where(kk == 0, xp.zeros_like(res), res)
        if out is not None:
            out[...] = res
            return out
        return res

    def gamma(self, shape: Any, scale: Any = 1.0, size: Any = None, *,
              dtype: Any = None) -> Any:
        """Samples from a gamma distribution: ``scale * standard_gamma(shape)``.

        Parameters
        ----------
        shape : float or array_like
            Shape, not negative.
        scale : float or array_like, optional
            Scale, not negative.
        size : int or tuple of int, optional
            Output shape.
        dtype : dtype, optional
            float32 or float64.

        Returns
        -------
        Array
            Non-negative samples.

        Raises
        ------
        ValueError
            A negative parameter.

        Examples
        --------
        >>> import clnp
        >>> clnp.random.default_rng(0).gamma(2.0, 3.0, size=4).shape
        (4,)
        """
        d, (k, s) = self._params("gamma", dtype, shape=shape, scale=scale)
        self._check(s < 0, "gamma", "scale < 0")
        return s * self.standard_gamma(k, self._shape_of(size, "gamma", k, s), dtype=d)

    def chisquare(self, df: Any, size: Any = None, *, dtype: Any = None) -> Any:
        """Samples from a chi-square distribution: ``2 * standard_gamma(df / 2)``.

        Parameters
        ----------
        df : float or array_like
            Degrees of freedom, positive.
        size : int or tuple of int, optional
            Output shape.
        dtype : dtype, optional
            float32 or float64.

        Returns
        -------
        Array
            Non-negative samples.

        Raises
        ------
        ValueError
            ``df <= 0``.

        Examples
        --------
        >>> import clnp
        >>> clnp.random.default_rng(0).chisquare(3.0, size=4).shape
        (4,)
        """
        d, (df,) = self._params("chisquare", dtype, df=df)
        self._check(df <= 0, "chisquare", "df <= 0")
        return 2.0 * self.standard_gamma(df / 2.0, self._shape_of(size, "chisquare", df),
                                         dtype=d)

    def beta(self, a: Any, b: Any, size: Any = None, *, dtype: Any = None) -> Any:
        """Samples from a beta distribution: ``X / (X + Y)`` of two gammas.

        Parameters
        ----------
        a, b : float or array_like
            Positive.
        size : int or tuple of int, optional
            Output shape.
        dtype : dtype, optional
            float32 or float64.

        Returns
        -------
        Array
            Samples in [0, 1].

        Raises
        ------
        ValueError
            ``a <= 0`` or ``b <= 0``.

        Examples
        --------
        >>> import clnp
        >>> x = clnp.random.default_rng(0).beta(2.0, 5.0, size=10)
        >>> bool(clnp.all((x >= 0) & (x <= 1)))
        True
        """
        d, (a, b) = self._params("beta", dtype, a=a, b=b)
        self._check(a <= 0, "beta", "a <= 0")
        self._check(b <= 0, "beta", "b <= 0")
        shape = self._shape_of(size, "beta", a, b)
        x = self.standard_gamma(a, shape, dtype=d)
        y = self.standard_gamma(b, shape, dtype=d)
        return x / (x + y)

    def f(self, dfnum: Any, dfden: Any, size: Any = None, *, dtype: Any = None) -> Any:
        """Samples from the F distribution: a ratio of scaled chi-squares.

        Parameters
        ----------
        dfnum, dfden : float or array_like
            Degrees of freedom, positive.
        size : int or tuple of int, optional
            Output shape.
        dtype : dtype, optional
            float32 or float64.

        Returns
        -------
        Array
            Non-negative samples.

        Raises
        ------
        ValueError
            A non-positive parameter.

        Examples
        --------
        >>> import clnp
        >>> clnp.random.default_rng(0).f(5.0, 10.0, size=3).shape
        (3,)
        """
        d, (n, m) = self._params("f", dtype, dfnum=dfnum, dfden=dfden)
        self._check(n <= 0, "f", "dfnum <= 0")
        self._check(m <= 0, "f", "dfden <= 0")
        shape = self._shape_of(size, "f", n, m)
        return (self.chisquare(n, shape, dtype=d) / n) / (self.chisquare(m, shape, dtype=d) / m)

    def standard_t(self, df: Any, size: Any = None, *, dtype: Any = None) -> Any:
        """Samples from Student's t distribution: ``normal / sqrt(chisquare(df) / df)``.

        Parameters
        ----------
        df : float or array_like
            Degrees of freedom, positive.
        size : int or tuple of int, optional
            Output shape.
        dtype : dtype, optional
            float32 or float64.

        Returns
        -------
        Array
            Samples.

        Raises
        ------
        ValueError
            ``df <= 0``.

        Examples
        --------
        >>> import clnp
        >>> clnp.random.default_rng(0).standard_t(4.0, size=3).shape
        (3,)
        """
        xp = _xp()
        d, (df,) = self._params("standard_t", dtype, df=df)
        self._check(df <= 0, "standard_t", "df <= 0")
        shape = self._shape_of(size, "standard_t", df)
        z = self.standard_normal(shape, dtype=d)  # type: ignore[attr-defined]
        return z / xp.sqrt(self.chisquare(df, shape, dtype=d) / df)

    def dirichlet(self, alpha: Any, size: Any = None, *, dtype: Any = None) -> Any:
        """Samples from the Dirichlet distribution: normalised gammas.

        Parameters
        ----------
        alpha : 1-D array_like
            Concentrations, positive.
        size : int or tuple of int, optional
            Leading output shape.
        dtype : dtype, optional
            float32 or float64.

        Returns
        -------
        Array
            Of shape ``size + (len(alpha),)``; each row sums to 1.

        Raises
        ------
        ValueError
            When an ``alpha`` is not positive or ``alpha`` is not 1-D.

        Examples
        --------
        >>> import clnp
        >>> x = clnp.random.default_rng(0).dirichlet([1.0, 2.0, 3.0], size=2)
        >>> x.shape
        (2, 3)
        """
        xp = _xp()
        d = self._float_dtype(dtype, self.device, "dirichlet")  # type: ignore[attr-defined]
        al = self._param(alpha, "alpha", d, self.device, "dirichlet")  # type: ignore
        if not is_array(al) or al.ndim != 1:
            al = xp.asarray(al, dtype=d, device=self.device)
        if al.ndim != 1:
            raise ValueError(f"dirichlet: alpha must be 1-D; got shape {al.shape}")
        self._check(al <= 0, "dirichlet", "alpha <= 0")
        lead = () if size is None else normalize_shape(size, "dirichlet")
        g = self.standard_gamma(xp.broadcast_to(al, lead + al.shape), dtype=d)
        return g / xp.sum(g, axis=-1, keepdims=True)

    # ------------------------------------------------------------------ discrete
    def geometric(self, p: Any, size: Any = None) -> Any:
        """Samples from the geometric distribution: trials until the first success.

        Parameters
        ----------
        p : float or array_like
            Success probability, in (0, 1].
        size : int or tuple of int, optional
            Output shape.

        Returns
        -------
        Array
            int64 samples, at least 1.

        Raises
        ------
        ValueError
            ``p`` outside (0, 1].

        Examples
        --------
        >>> import clnp
        >>> bool(clnp.all(clnp.random.default_rng(0).geometric(0.3, size=10) >= 1))
        True
        """
        xp = _xp()
        d, (p,) = self._params("geometric", None, p=p)
        self._check((p <= 0) | (p > 1) if is_array(p) else not 0 < p <= 1, "geometric",
                    "p must be in (0, 1]")
        u = self._open01(self._shape_of(size, "geometric", p), d)
        if is_array(p):
            k = xp.ceil(xp.log(u) / xp.log1p(-p))
        else:
            k = xp.ceil(xp.log(u) / math.log1p(-p)) if p < 1 else xp.ones_like(u)
        if is_array(p):
            k = xp.where(p == 1, xp.ones_like(k), k)
        return xp.astype(xp.maximum(k, 1.0), dt.int64)

    # ------------------------------------------------------------------ counts
    def _rounds(self, shape: tuple[int, ...], start_done: Any, propose: Any, fname: str) -> Any:
        """Vectorised rejection: ``propose()`` gives (candidates, accepted) over ``shape``;
        accepted values fill the elements not done yet, until all are (one host read per
        round)."""
        xp = _xp()
        res = None
        done = start_done
        for _ in range(256):
            if not done.size or bool(xp.all(done)):
                break
            val, ok = propose()
            keep = xp.zeros_like(val) if res is None else res
            res = xp.where(ok & ~done, val, keep)
            done = done | ok
        else:   # pragma: no cover - acceptance is above 80 % per round
            raise RuntimeError(f"{fname}: rejection sampling did not converge")
        return res if res is not None else xp.zeros(shape, dtype=self.device.default_float,
                                                    device=self.device)  # type: ignore

    def _inversion(self, shape: tuple[int, ...], d: np.dtype, skip: Any, p0: Any,
                   ratio: Any) -> Any:
        """Counts by sequential search of the CDF: ``P(0) = p0``, ``P(k) = P(k-1) *
        ratio(k)``; elements where ``skip`` holds stay 0."""
        xp = _xp()
        u = self.random(shape, dtype=d)  # type: ignore[attr-defined]
        k = xp.zeros(shape, dtype=d, device=self.device)  # type: ignore[attr-defined]
        pk = xp.broadcast_to(p0, shape)
        cdf = pk
        for it in range(1, 400):
            more = (u > cdf) & ~skip & (pk > 0)
            if it % 8 == 1 and not bool(xp.any(more)):
                break
            k = xp.where(more, k + 1.0, k)
            pk = xp.where(more, pk * ratio(k), pk)
            cdf = xp.where(more, cdf + pk, cdf)
        return k

    def poisson(self, lam: Any = 1.0, size: Any = None) -> Any:
        """Samples from a Poisson distribution (CDF inversion for ``lam < 10``, Hormann's
        PTRS transformed rejection above, vectorised on the device).

        Parameters
        ----------
        lam : float or array_like, optional
            Expected count, not negative.
        size : int or tuple of int, optional
            Output shape.

        Returns
        -------
        Array
            int64 counts.

        Raises
        ------
        ValueError
            ``lam < 0`` or too large (above about 1e18).

        Examples
        --------
        >>> import clnp
        >>> bool(clnp.all(clnp.random.default_rng(0).poisson(3.0, size=10) >= 0))
        True
        """
        xp = _xp()
        d, (lam,) = self._params("poisson", None, lam=lam)
        self._check(lam < 0, "poisson", "lam < 0")
        self._check(lam > 1e18, "poisson", "lam value too large")
        shape = self._shape_of(size, "poisson", lam)
        return xp.astype(self._poisson(xp.broadcast_to(
            lam if is_array(lam) else xp.asarray(lam, dtype=d, device=self.device), shape),
            d), dt.int64)

    def _poisson(self, lam: Any, d: np.dtype) -> Any:
        xp = _xp()
        shape = lam.shape
        big = lam >= 10.0
        small = self._inversion(shape, d, big, xp.exp(-lam), lambda k: lam / k)
        if not bool(xp.any(big)):
            return small
        lb = xp.where(big, lam, xp.full_like(lam, 10.0))
        slam, loglam = xp.sqrt(lb), xp.log(lb)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2.0)

        def propose() -> tuple[Any, Any]:
            u = self.random(shape, dtype=d) - 0.5  # type: ignore[attr-defined]
            v = self._open01(shape, d)
            us = 0.5 - xp.abs(u)
            k = xp.floor((2.0 * a / us + b) * u + lb + 0.43)
            fast = (us >= 0.07) & (v <= vr)
            bad = (k < 0) | ((us < 0.013) & (v > us))
            kk = xp.clip(k, 0.0, None)
            slow = (xp.log(v) + xp.log(invalpha) - xp.log(a / (us * us) + b)
                    <= -lb + kk * loglam - _lfact(kk))
            return kk, fast | (~bad & slow)
        large = self._rounds(shape, ~big, propose, "poisson")
        return xp.where(big, large, small)

    def binomial(self, n: Any, p: Any, size: Any = None) -> Any:
        """Samples from a binomial distribution (CDF inversion for ``n min(p, 1-p) < 10``,
        Hormann's BTRS transformed rejection above, vectorised on the device).

        Parameters
        ----------
        n : int or array_like of int
            Trials, not negative.
        p : float or array_like
            Success probability in [0, 1].
        size : int or tuple of int, optional
            Output shape.

        Returns
        -------
        Array
            int64 counts.

        Raises
        ------
        ValueError
            ``n < 0`` or ``p`` outside [0, 1].

        Examples
        --------
        >>> import clnp
        >>> x = clnp.random.default_rng(0).binomial(10, 0.5, size=10)
        >>> bool(clnp.all((x >= 0) & (x <= 10)))
        True
        """
        xp = _xp()
        d, (n, p) = self._params("binomial", None, n=n, p=p)
        self._check(n < 0, "binomial", "n < 0")
        self._check((p < 0) | (p > 1) | xp.isnan(p) if is_array(p) else not 0 <= p <= 1,
                    "binomial", "p < 0, p > 1 or p is NaN")
        shape = self._shape_of(size, "binomial", n, p)
        full = lambda v: xp.broadcast_to(  # noqa: E731
            v if is_array(v) else xp.asarray(v, dtype=d, device=self.device), shape)
        return xp.astype(self._binomial(xp.floor(full(n)), full(p), d), dt.int64)

    def _binomial(self, n: Any, p: Any, d: np.dtype) -> Any:
        xp = _xp()
        shape = n.shape
        flip = p > 0.5
        q = xp.where(flip, 1.0 - p, p)
        big = n * q >= 10.0
        sq = xp.where(q < 1.0, q, xp.zeros_like(q))
        p0 = xp.exp(n * xp.log1p(-sq))
        small = self._inversion(shape, d, big | (q == 0), p0,
                                lambda k: (n - k + 1.0) / k * (sq / (1.0 - sq)))
        res = small
        if bool(xp.any(big)):
            nb = xp.where(big, n, xp.full_like(n, 100.0))
            qb = xp.where(big, q, xp.full_like(q, 0.5))
            spq = xp.sqrt(nb * qb * (1.0 - qb))
            b = 1.15 + 2.53 * spq
            a = -0.0873 + 0.0248 * b + 0.01 * qb
            c = nb * qb + 0.5
            vr = 0.92 - 4.2 / b
            alpha = (2.83 + 5.1 / b) * spq
            lpq = xp.log(qb / (1.0 - qb))
            m = xp.floor((nb + 1.0) * qb)
            h = _lfact(m) + _lfact(nb - m)

            def propose() -> tuple[Any, Any]:
                u = self.random(shape, dtype=d) - 0.5  # type: ignore[attr-defined]
                v = self._open01(shape, d)
                us = 0.5 - xp.abs(u)
                k = xp.floor((2.0 * a / us + b) * u + c)
                inside = (k >= 0) & (k <= nb)
                kk = xp.clip(k, 0.0, nb)
                fast = (us >= 0.07) & (v <= vr)
                lv = xp.log(v * alpha / (a / (us * us) + b))
                slow = lv <= h - _lfact(kk) - _lfact(nb - kk) + (kk - m) * lpq
                return kk, inside & (fast | slow)
            res = xp.where(big, self._rounds(shape, ~big, propose, "binomial"), small)
        return xp.where(flip, n - res, res)

    def negative_binomial(self, n: Any, p: Any, size: Any = None) -> Any:
        """Samples from a negative binomial distribution: failures before ``n`` successes
        (a Poisson of a gamma rate, as NumPy).

        Parameters
        ----------
        n : float or array_like
            Successes, positive.
        p : float or array_like
            Success probability in (0, 1].
        size : int or tuple of int, optional
            Output shape.

        Returns
        -------
        Array
            int64 counts.

        Raises
        ------
        ValueError
            ``n <= 0`` or ``p`` outside (0, 1].

        Examples
        --------
        >>> import clnp
        >>> bool(clnp.all(clnp.random.default_rng(0).negative_binomial(3, 0.5, size=10) >= 0))
        True
        """
        xp = _xp()
        d, (n, p) = self._params("negative_binomial", None, n=n, p=p)
        self._check(n <= 0, "negative_binomial", "n <= 0")
        self._check((p <= 0) | (p > 1) if is_array(p) else not 0 < p <= 1,
                    "negative_binomial", "p must be in (0, 1]")
        shape = self._shape_of(size, "negative_binomial", n, p)
        rate = self.standard_gamma(n, shape, dtype=d) * ((1.0 - p) / p)
        return xp.astype(self._poisson(rate, d), dt.int64)

    def hypergeometric(self, ngood: Any, nbad: Any, nsample: Any, size: Any = None) -> Any:
        """Samples from a hypergeometric distribution: good items among ``nsample`` drawn
        without replacement (inversion of the exact CDF, searched outwards from the mode;
        the number of vectorised steps grows with the distribution's spread).

        Parameters
        ----------
        ngood, nbad : int or array_like of int
            Good and bad items, not negative (``ngood + nbad < 1e9``).
        nsample : int or array_like of int
            Items drawn, at most ``ngood + nbad``.
        size : int or tuple of int, optional
            Output shape.

        Returns
        -------
        Array
            int64 counts.

        Raises
        ------
        ValueError
            A negative parameter, ``nsample > ngood + nbad``, or a population of 1e9 or more.

        Examples
        --------
        >>> import clnp
        >>> x = clnp.random.default_rng(0).hypergeometric(7, 5, 6, size=10)
        >>> bool(clnp.all((x >= 1) & (x <= 6)))
        True
        """
        xp = _xp()
        d, (g, b, n) = self._params("hypergeometric", None, ngood=ngood, nbad=nbad,
                                    nsample=nsample)
        self._check(g < 0, "hypergeometric", "ngood < 0")
        self._check(b < 0, "hypergeometric", "nbad < 0")
        self._check(n < 0, "hypergeometric", "nsample < 0")
        self._check(n > g + b, "hypergeometric", "ngood + nbad < nsample")
        self._check(g + b >= 1e9, "hypergeometric", "ngood + nbad >= 1000000000")
        shape = self._shape_of(size, "hypergeometric", g, b, n)
        full = lambda v: xp.broadcast_to(xp.floor(  # noqa: E731
            v if is_array(v) else xp.asarray(v, dtype=d, device=self.device)), shape)
        g, b, n = full(g), full(b), full(n)
        tot = g + b
        lo = xp.maximum(n - b, 0.0)
        hi = xp.minimum(n, g)
        m = xp.clip(xp.floor((n + 1.0) * (g + 1.0) / (tot + 2.0)), lo, hi)
        logp = (_lfact(g) - _lfact(m) - _lfact(g - m) + _lfact(b) - _lfact(n - m)
                - _lfact(b - n + m) - _lfact(tot) + _lfact(n) + _lfact(tot - n))
        pm = xp.exp(logp)
        u = self.random(shape, dtype=d) - pm  # type: ignore[attr-defined]
        res, done = m, u <= 0
        kl = ku = m
        pl = pu = pm
        for it in range(1, 1 << 20):
            dn = ~done & (kl > lo)
            pl = xp.where(dn, pl * kl * (b - n + kl) / ((g - kl + 1.0) * (n - kl + 1.0)), pl)
            kl = xp.where(dn, kl - 1.0, kl)
            u = xp.where(dn, u - pl, u)
            hit = dn & (u <= 0)
            res, done = xp.where(hit, kl, res), done | hit
            up = ~done & (ku < hi)
            pu = xp.where(up, pu * (g - ku) * (n - ku) / ((ku + 1.0) * (b - n + ku + 1.0)), pu)
            ku = xp.where(up, ku + 1.0, ku)
            u = xp.where(up, u - pu, u)
            hit = up & (u <= 0)
            res, done = xp.where(hit, ku, res), done | hit
            # the whole support summed to just under u (rounding): keep the mode
            done = done | (~dn & ~up)
            if it % 8 == 0 and bool(xp.all(done)):
                break
        return xp.astype(res, dt.int64)

    def multinomial(self, n: Any, pvals: Any, size: Any = None) -> Any:
        """Samples from a multinomial distribution (conditional binomials, one per
        category).

        Parameters
        ----------
        n : int
            Trials.
        pvals : 1-D array_like
            Category probabilities (the last takes the remainder).
        size : int or tuple of int, optional
            Leading output shape.

        Returns
        -------
        Array
            int64 counts of shape ``size + (len(pvals),)``, summing to ``n``.

        Raises
        ------
        ValueError
            ``n < 0``, or ``pvals`` not 1-D, negative or summing above 1.

        Examples
        --------
        >>> import clnp
        >>> x = clnp.random.default_rng(0).multinomial(20, [0.2, 0.3, 0.5], size=4)
        >>> x.shape, [int(v) for v in clnp.sum(x, axis=1)]
        ((4, 3), [20, 20, 20, 20])
        """
        xp = _xp()
        d = self.device.default_float  # type: ignore[attr-defined]
        pv = np.asarray(pvals.to_numpy() if is_array(pvals) else pvals, dtype=float)
        if pv.ndim != 1 or pv.size == 0:
            raise ValueError(f"multinomial: pvals must be a non-empty 1-D sequence; got "
                             f"shape {pv.shape}")
        if (pv < 0).any() or (pv > 1).any() or np.isnan(pv).any():
            raise ValueError("multinomial: pvals < 0, pvals > 1 or pvals contains NaNs")
        if pv[:-1].sum() > 1.0 + 1e-12:
            raise ValueError("multinomial: sum(pvals[:-1]) > 1.0")
        n = int(n)
        if n < 0:
            raise ValueError("multinomial: n < 0")
        lead = () if size is None else normalize_shape(size, "multinomial")
        left = xp.full(lead, float(n), dtype=d, device=self.device)  # type: ignore
        rest = 1.0
        cols = []
        for pi in pv[:-1]:
            frac = min(max(pi / rest, 0.0), 1.0) if rest > 0 else 0.0
            c = self._binomial(left, xp.full(lead, frac, dtype=d, device=left.device), d)
            cols.append(c)
            left = left - c
            rest -= pi
        cols.append(left)
        return xp.astype(xp.stack(cols, axis=-1), dt.int64)

    def noncentral_chisquare(self, df: Any, nonc: Any, size: Any = None, *,
                             dtype: Any = None) -> Any:
        """Samples from a noncentral chi-square distribution.

        Parameters
        ----------
        df : float or array_like
            Degrees of freedom, positive.
        nonc : float or array_like
            Noncentrality, not negative.
        size : int or tuple of int, optional
            Output shape.
        dtype : dtype, optional
            float32 or float64.

        Returns
        -------
        Array
            Non-negative samples (a chi-square with a Poisson number of extra degrees of
            freedom).

        Raises
        ------
        ValueError
            ``df <= 0`` or ``nonc < 0``.

        Examples
        --------
        >>> import clnp
        >>> clnp.random.default_rng(0).noncentral_chisquare(3.0, 2.0, size=4).shape
        (4,)
        """
        xp = _xp()
        d, (df, nonc) = self._params("noncentral_chisquare", dtype, df=df, nonc=nonc)
        self._check(df <= 0, "noncentral_chisquare", "df <= 0")
        self._check(nonc < 0, "noncentral_chisquare", "nonc < 0")
        shape = self._shape_of(size, "noncentral_chisquare", df, nonc)
        half = xp.broadcast_to(nonc if is_array(nonc) else xp.asarray(
            nonc, dtype=d, device=self.device), shape) / 2.0  # type: ignore[attr-defined]
        extra = self._poisson(half, d)
        return self.chisquare(df + 2.0 * extra, shape, dtype=d)

    def noncentral_f(self, dfnum: Any, dfden: Any, nonc: Any, size: Any = None, *,
                     dtype: Any = None) -> Any:
        """Samples from the noncentral F distribution.

        Parameters
        ----------
        dfnum, dfden : float or array_like
            Degrees of freedom, positive.
        nonc : float or array_like
            Noncentrality, not negative.
        size : int or tuple of int, optional
            Output shape.
        dtype : dtype, optional
            float32 or float64.

        Returns
        -------
        Array
            Non-negative samples.

        Raises
        ------
        ValueError
            A parameter out of range.

        Examples
        --------
        >>> import clnp
        >>> clnp.random.default_rng(0).noncentral_f(3.0, 20.0, 3.0, size=4).shape
        (4,)
        """
        d, (n, m, nonc) = self._params("noncentral_f", dtype, dfnum=dfnum, dfden=dfden,
                                       nonc=nonc)
        self._check(n <= 0, "noncentral_f", "dfnum <= 0")
        self._check(m <= 0, "noncentral_f", "dfden <= 0")
        self._check(nonc < 0, "noncentral_f", "nonc < 0")
        shape = self._shape_of(size, "noncentral_f", n, m, nonc)
        t = self.noncentral_chisquare(n, nonc, shape, dtype=d) * m
        return t / (self.chisquare(m, shape, dtype=d) * n)

    def zipf(self, a: Any, size: Any = None) -> Any:
        """Samples from the Zipf distribution (Devroye's rejection method, vectorised).

        Parameters
        ----------
        a : float or array_like
            Exponent, above 1.
        size : int or tuple of int, optional
            Output shape.

        Returns
        -------
        Array
            int64 samples, at least 1.

        Raises
        ------
        ValueError
            ``a <= 1``.

        Examples
        --------
        >>> import clnp
        >>> bool(clnp.all(clnp.random.default_rng(0).zipf(2.0, size=10) >= 1))
        True
        """
        xp = _xp()
        d, (a,) = self._params("zipf", None, a=a)
        self._check(a <= 1, "zipf", "a <= 1 or a is NaN")
        shape = self._shape_of(size, "zipf", a)
        am1 = xp.broadcast_to(a if is_array(a) else xp.asarray(a, dtype=d,
                                                               device=self.device), shape) - 1.0
        b = xp.pow(2.0, am1)
        cap = float(np.iinfo(np.int64).max)

        def propose() -> tuple[Any, Any]:
            u = 1.0 - self.random(shape, dtype=d)  # type: ignore[attr-defined]
            v = self.random(shape, dtype=d)  # type: ignore[attr-defined]
            x = xp.floor(xp.pow(u, -1.0 / am1))
            ok = (x >= 1) & (x <= cap)
            xs = xp.clip(x, 1.0, cap)
            t = xp.pow(1.0 + 1.0 / xs, am1)
            return xs, ok & (v * xs * (t - 1.0) / (b - 1.0) <= t / b)
        none = xp.zeros(shape, dtype=dt.bool_, device=self.device)  # type: ignore
        return xp.astype(self._rounds(shape, none, propose, "zipf"), dt.int64)

    def logseries(self, p: Any, size: Any = None) -> Any:
        """Samples from the logarithmic series distribution (Kemp's method, vectorised).

        Parameters
        ----------
        p : float or array_like
            Shape, in [0, 1).
        size : int or tuple of int, optional
            Output shape.

        Returns
        -------
        Array
            int64 samples, at least 1.

        Raises
        ------
        ValueError
            ``p`` outside [0, 1).

        Examples
        --------
        >>> import clnp
        >>> bool(clnp.all(clnp.random.default_rng(0).logseries(0.6, size=10) >= 1))
        True
        """
        xp = _xp()
        d, (p,) = self._params("logseries", None, p=p)
        self._check((p < 0) | (p >= 1) if is_array(p) else not 0 <= p < 1, "logseries",
                    "p < 0, p >= 1 or p is NaN")
        shape = self._shape_of(size, "logseries", p)
        pp = xp.broadcast_to(p if is_array(p) else xp.asarray(p, dtype=d, device=self.device),
                             shape)
        r = xp.log1p(-pp)
        one = xp.ones(shape, dtype=d, device=self.device)  # type: ignore[attr-defined]

        def propose() -> tuple[Any, Any]:
            v = self.random(shape, dtype=d)  # type: ignore[attr-defined]
            u = self.random(shape, dtype=d)  # type: ignore[attr-defined]
            q = -xp.expm1(r * u)
            qs = xp.where((q > 0) & (q < 1), q, xp.full_like(q, 0.5))
            vs = xp.where(v > 0, v, xp.ones_like(v))
            k = xp.floor(1.0 + xp.log(vs) / xp.log(qs))
            res = xp.where(v >= pp, one, xp.where(v <= q * q, k, xp.where(v >= q, one,
                                                                          2.0 * one)))
            bad = (v < pp) & (v <= q * q) & ((k < 1) | (v == 0) | (q <= 0) | (q >= 1))
            return xp.clip(res, 1.0, None), ~bad
        none = xp.zeros(shape, dtype=dt.bool_, device=self.device)  # type: ignore
        return xp.astype(self._rounds(shape, none, propose, "logseries"), dt.int64)

    def vonmises(self, mu: Any, kappa: Any, size: Any = None, *, dtype: Any = None) -> Any:
        """Samples from the von Mises distribution on [-pi, pi] (Best and Fisher's
        rejection method, vectorised).

        Parameters
        ----------
        mu : float or array_like
            Mode.
        kappa : float or array_like
            Concentration, not negative (0 gives the uniform distribution).
        size : int or tuple of int, optional
            Output shape.
        dtype : dtype, optional
            float32 or float64.

        Returns
        -------
        Array
            Angles in [-pi, pi].

        Raises
        ------
        ValueError
            ``kappa < 0``.

        Examples
        --------
        >>> import clnp
        >>> x = clnp.random.default_rng(0).vonmises(0.0, 4.0, size=10)
        >>> bool(clnp.all(clnp.abs(x) <= 3.1416))
        True
        """
        import math
        xp = _xp()
        d, (mu, kappa) = self._params("vonmises", dtype, mu=mu, kappa=kappa)
        self._check(kappa < 0, "vonmises", "kappa < 0")
        shape = self._shape_of(size, "vonmises", mu, kappa)
        kk = xp.broadcast_to(kappa if is_array(kappa) else xp.asarray(
            kappa, dtype=d, device=self.device), shape)  # type: ignore[attr-defined]
        tiny = kk < 1e-8
        ks = xp.where(tiny, xp.ones_like(kk), kk)
        s = 0.5 / ks
        r = s + xp.sqrt(1.0 + s * s)

        def propose() -> tuple[Any, Any]:
            u = self.random(shape, dtype=d)  # type: ignore[attr-defined]
            z = xp.cos(math.pi * u)
            w = (1.0 + r * z) / (r + z)
            y = ks * (r - w)
            v = self._open01(shape, d)
            ys = xp.where(y > 0, y, xp.full_like(y, 1e-300 if d == dt.float64 else 1e-30))
            ok = (y * (2.0 - y) - v >= 0) | (xp.log(ys / v) + 1.0 - y >= 0)
            return w, ok
        w = self._rounds(shape, tiny, propose, "vonmises")
        u = self.random(shape, dtype=d)  # type: ignore[attr-defined]
        ang = xp.acos(xp.clip(w, -1.0, 1.0))
        ang = xp.where(u < 0.5, -ang, ang)
        flat = math.pi * (2.0 * self.random(shape, dtype=d) - 1.0)  # type: ignore
        ang = xp.where(tiny, flat, ang) + mu
        # wrap into [-pi, pi]
        return xp.remainder(ang + math.pi, 2.0 * math.pi) - math.pi

    def multivariate_normal(self, mean: Any, cov: Any, size: Any = None,
                            check_valid: str = "warn", tol: float = 1e-8, *,
                            method: str = "svd") -> Any:
        """Samples from a multivariate normal distribution: ``mean + z @ A.T`` with
        ``A A^T = cov`` (from the SVD, Cholesky or eigen-decomposition).

        Parameters
        ----------
        mean : 1-D array_like
            Mean, of length N.
        cov : 2-D array_like
            Symmetric positive-semidefinite (N, N) covariance.
        size : int or tuple of int, optional
            Leading output shape.
        check_valid : {'warn', 'raise', 'ignore'}, optional
            What a covariance that is not positive-semidefinite does.
        tol : float, optional
            Tolerance of that check.
        method : {'svd', 'eigh', 'cholesky'}, optional
            The factorisation.

        Returns
        -------
        Array
            Of shape ``size + (N,)``.

        Raises
        ------
        ValueError
            When the shapes do not fit, or with ``check_valid='raise'`` for a covariance that
            is not positive-semidefinite.

        Examples
        --------
        >>> import clnp
        >>> rng = clnp.random.default_rng(0)
        >>> rng.multivariate_normal([0.0, 1.0], [[1.0, 0.5], [0.5, 2.0]], size=5).shape
        (5, 2)
        """
        import warnings
        xp = _xp()
        d = self.device.default_float  # type: ignore[attr-defined]
        m = xp.astype(xp.asarray(mean, device=self.device), d)
        c = xp.astype(xp.asarray(cov, device=self.device), d)
        if m.ndim != 1 or c.ndim != 2 or c.shape != (m.shape[0], m.shape[0]):
            raise ValueError(f"multivariate_normal: mean must be 1-D of length N and cov "
                             f"(N, N); got shapes {m.shape} and {c.shape}")
        if check_valid not in ("warn", "raise", "ignore"):
            raise ValueError("multivariate_normal: check_valid must equal 'warn', 'raise', or "
                             "'ignore'")
        if method == "cholesky":
            a = xp.linalg.cholesky(c)
        elif method == "eigh":
            w, v = xp.linalg.eigh(c)
            a = v * xp.sqrt(xp.clip(w, 0.0, None))
        elif method == "svd":
            u, s, vt = xp.linalg.svd(c)
            a = xp.matrix_transpose(vt) * xp.sqrt(s)
            if check_valid != "ignore":
                psd = bool(xp.allclose(a @ xp.matrix_transpose(a), c, rtol=tol, atol=tol))
                if not psd:
                    msg = "covariance is not symmetric positive-semidefinite."
                    if check_valid == "raise":
                        raise ValueError(f"multivariate_normal: {msg}")
                    warnings.warn(msg, RuntimeWarning, stacklevel=user_stacklevel())
        else:
            raise ValueError(f"multivariate_normal: method must be 'svd', 'eigh' or "
                             f"'cholesky'; got {method!r}")
        lead = () if size is None else normalize_shape(size, "multivariate_normal")
        z = self.standard_normal(lead + (m.shape[0],), dtype=d)  # type: ignore
        return m + z @ xp.matrix_transpose(a)


DISTRIBUTIONS = ("laplace", "logistic", "gumbel", "lognormal", "rayleigh", "weibull",
                 "pareto", "power", "standard_cauchy", "triangular", "wald", "standard_gamma",
                 "gamma", "chisquare", "beta", "f", "standard_t", "dirichlet", "geometric",
                 "multivariate_normal", "poisson", "binomial", "negative_binomial",
                 "multinomial", "noncentral_chisquare", "noncentral_f", "zipf", "logseries",
                 "vonmises", "hypergeometric")


def _lfact(k: Any) -> Any:
    """``log(k!)`` for non-negative integral floats: a table below 16, Stirling's series
    (error below 1e-12) above."""
    import math
    xp = _xp()
    table = xp.asarray([math.lgamma(i + 1.0) for i in range(16)], dtype=k.dtype,
                       device=k.device)
    small = xp.take(table, xp.reshape(xp.astype(xp.clip(k, 0.0, 15.0), dt.int64), (-1,)))
    small = xp.reshape(small, k.shape)
    x = xp.maximum(k, 15.0) + 1.0
    inv = 1.0 / x
    inv2 = inv * inv
    big = ((x - 0.5) * xp.log(x) - x + 0.5 * math.log(2.0 * math.pi)
           + inv * (1.0 / 12.0 - inv2 * (1.0 / 360.0 - inv2 / 1260.0)))
    return xp.where(k < 16.0, small, big)
