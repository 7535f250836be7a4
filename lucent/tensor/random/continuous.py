"""Continuous univariate distributions (``dtype`` ``floatX`` by default).

Each draws with NumPy's ``Generator`` method of the same name, or with the
transformation of NumPy draws that SciPy's ``rvs`` applies where NumPy lacks the family.
"""

from __future__ import annotations

import warnings

import numpy as np

from lucent.tensor.basic import as_tensor_variable
from lucent.tensor.math import sqrt
from lucent.tensor.random.op import RandomVariable
from lucent.tensor.random.scipy_rv import ScipyRandomVariable, _stats


class UniformRV(RandomVariable):
    """Uniform on ``[low, high)``."""

    name = "uniform"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("Uniform", "\\operatorname{Uniform}")

    def __call__(self, low=0.0, high=1.0, size=None, **kwargs):
        return super().__call__(low, high, size=size, **kwargs)


uniform = UniformRV()

class TriangularRV(RandomVariable):
    """Triangular on ``[left, right]`` with its peak at ``mode``."""

    name = "triangular"
    signature = "(),(),()->()"
    dtype = "floatX"
    _print_name = ("Triangular", "\\operatorname{Triangular}")

    def __call__(self, left, mode, right, size=None, **kwargs):
        return super().__call__(left, mode, right, size=size, **kwargs)

    def check_params(self, params, size):
        left, mode, right = (np.asarray(p) for p in params)
        if np.any(left > mode):
            raise ValueError(f"triangular: parameter left must be <= mode; got left={left}, mode={mode}")
        if np.any(mode > right):
            raise ValueError(f"triangular: parameter mode must be <= right; got mode={mode}, right={right}")
        if np.any(left == right):
            raise ValueError(f"triangular: parameter left must be < right; got left={left}, right={right}")
        super().check_params(params, size)


triangular = TriangularRV()

class BetaRV(RandomVariable):
    """Beta with shapes ``alpha``, ``beta``."""

    name = "beta"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("Beta", "\\operatorname{Beta}")
    param_checks = ((0, "positive", "alpha must be > 0"), (1, "positive", "beta must be > 0"))

    def __call__(self, alpha, beta, size=None, **kwargs):
        return super().__call__(alpha, beta, size=size, **kwargs)


beta = BetaRV()

class NormalRV(RandomVariable):
    """Normal with mean ``loc`` and standard deviation ``scale``."""

    name = "normal"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("Normal", "\\operatorname{Normal}")
    param_checks = ((1, "nonnegative", "scale must be >= 0"),)

    def __call__(self, loc=0.0, scale=1.0, size=None, **kwargs):
        return super().__call__(loc, scale, size=size, **kwargs)


normal = NormalRV()

def standard_normal(*, size=None, rng=None, dtype=None, return_next_rng=False):
    """``normal(0, 1)``."""
    return normal(0.0, 1.0, size=size, rng=rng, dtype=dtype, return_next_rng=return_next_rng)

class HalfNormalRV(ScipyRandomVariable):
    """``loc + scale * |N(0, 1)|``."""

    name = "halfnormal"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("HalfNormal", "\\operatorname{HalfNormal}")
    param_checks = ((1, "positive", "scale must be > 0"),)

    def __call__(self, loc=0.0, scale=1.0, size=None, **kwargs):
        return super().__call__(loc, scale, size=size, **kwargs)

    @classmethod
    def rng_fn_scipy(cls, rng, loc, scale, size):
        return _stats().halfnorm.rvs(loc, scale, random_state=rng, size=size)


halfnormal = HalfNormalRV()

class LogNormalRV(RandomVariable):
    """``exp(N(mean, sigma))``."""

    name = "lognormal"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("LogNormal", "\\operatorname{LogNormal}")
    param_checks = ((1, "nonnegative", "sigma must be >= 0"),)

    def __call__(self, mean=0.0, sigma=1.0, size=None, **kwargs):
        return super().__call__(mean, sigma, size=size, **kwargs)


lognormal = LogNormalRV()

class GammaRV(RandomVariable):
    """Gamma with ``shape`` and ``scale`` (NumPy's parametrisation)."""

    name = "gamma"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("Gamma", "\\operatorname{Gamma}")
    param_checks = ((0, "nonnegative", "shape must be >= 0"), (1, "nonnegative", "scale must be >= 0"))

    def __call__(self, shape, scale, size=None, **kwargs):
        return super().__call__(shape, scale, size=size, **kwargs)


_gamma = GammaRV()

def gamma(shape, rate=None, scale=None, **kwargs):
    """Gamma with ``shape`` and ``scale`` (``rate`` is deprecated: ``scale = 1 / rate``)."""
    if rate is not None and scale is not None:
        raise ValueError("Cannot specify both rate and scale")
    if rate is None and scale is None:
        raise ValueError("Must specify scale")
    if rate is not None:
        warnings.warn(
            "Gamma rate argument is deprecated and will stop working, use scale instead",
            FutureWarning,
        )
        scale = 1.0 / rate
    return _gamma(shape, scale, **kwargs)

def chisquare(df, size=None, rng=None, return_next_rng=False):
    """Chi-square with ``df`` degrees of freedom: ``gamma(df / 2, scale=2)``."""
    return gamma(shape=df / 2.0, scale=2.0, size=size, rng=rng, return_next_rng=return_next_rng)

def rayleigh(scale=1.0, *, size=None, rng=None, return_next_rng=False):
    """Rayleigh: ``scale * sqrt(chisquare(2))``."""
    scale = as_tensor_variable(scale)
    if size is None:
        size = scale.shape
    next_rng, draws = chisquare(df=2, size=size, rng=rng, return_next_rng=True)
    out = sqrt(draws) * scale
    if return_next_rng:
        return next_rng, out
    return out

class ParetoRV(ScipyRandomVariable):
    """Pareto with shape ``b`` and scale ``scale`` (support ``x >= scale``)."""

    name = "pareto"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("Pareto", "\\operatorname{Pareto}")
    param_checks = ((0, "positive", "b must be > 0"), (1, "positive", "scale must be > 0"))

    def __call__(self, b, scale=1.0, size=None, **kwargs):
        return super().__call__(b, scale, size=size, **kwargs)

    @classmethod
    def rng_fn_scipy(cls, rng, b, scale, size):
        return _stats().pareto.rvs(b, scale=scale, size=size, random_state=rng)


pareto = ParetoRV()

class GumbelRV(ScipyRandomVariable):
    """Gumbel (maximum) with location ``loc`` and scale ``scale``."""

    name = "gumbel"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("Gumbel", "\\operatorname{Gumbel}")
    param_checks = ((1, "positive", "scale must be > 0"),)

    def __call__(self, loc, scale=1.0, size=None, **kwargs):
        return super().__call__(loc, scale, size=size, **kwargs)

    @classmethod
    def rng_fn_scipy(cls, rng, loc, scale, size):
        return _stats().gumbel_r.rvs(loc=loc, scale=scale, size=size, random_state=rng)


gumbel = GumbelRV()

class ExponentialRV(RandomVariable):
    """Exponential with ``scale = 1 / rate``."""

    name = "exponential"
    signature = "()->()"
    dtype = "floatX"
    _print_name = ("Exponential", "\\operatorname{Exponential}")
    param_checks = ((0, "nonnegative", "scale must be >= 0"),)

    def __call__(self, scale=1.0, size=None, **kwargs):
        return super().__call__(scale, size=size, **kwargs)


exponential = ExponentialRV()

class WeibullRV(RandomVariable):
    """Weibull with shape ``shape`` (scale 1)."""

    name = "weibull"
    signature = "()->()"
    dtype = "floatX"
    _print_name = ("Weibull", "\\operatorname{Weibull}")
    param_checks = ((0, "nonnegative", "shape must be >= 0"),)

    def __call__(self, shape, size=None, **kwargs):
        return super().__call__(shape, size=size, **kwargs)


weibull = WeibullRV()

class LogisticRV(RandomVariable):
    """Logistic with location ``loc`` and scale ``scale``."""

    name = "logistic"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("Logistic", "\\operatorname{Logistic}")
    param_checks = ((1, "nonnegative", "scale must be >= 0"),)

    def __call__(self, loc=0, scale=1, size=None, **kwargs):
        return super().__call__(loc, scale, size=size, **kwargs)


logistic = LogisticRV()

class VonMisesRV(RandomVariable):
    """Von Mises (circular normal) with mode ``mu`` and concentration ``kappa``."""

    name = "vonmises"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("VonMises", "\\operatorname{VonMises}")
    param_checks = ((1, "nonnegative", "kappa must be >= 0"),)

    def __call__(self, mu, kappa, size=None, **kwargs):
        return super().__call__(mu, kappa, size=size, **kwargs)


vonmises = VonMisesRV()

class CauchyRV(ScipyRandomVariable):
    """Cauchy with location ``loc`` and scale ``scale``."""

    name = "cauchy"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("Cauchy", "\\operatorname{Cauchy}")
    param_checks = ((1, "positive", "scale must be > 0"),)

    def __call__(self, loc=0.0, scale=1.0, size=None, **kwargs):
        return super().__call__(loc, scale, size=size, **kwargs)

    @classmethod
    def rng_fn_scipy(cls, rng, loc, scale, size):
        return _stats().cauchy.rvs(loc=loc, scale=scale, random_state=rng, size=size)


cauchy = CauchyRV()

class HalfCauchyRV(ScipyRandomVariable):
    """``loc + |Cauchy(0, scale)|``."""

    name = "halfcauchy"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("HalfCauchy", "\\operatorname{HalfCauchy}")
    param_checks = ((1, "positive", "scale must be > 0"),)

    def __call__(self, loc=0.0, scale=1.0, size=None, **kwargs):
        return super().__call__(loc, scale, size=size, **kwargs)

    @classmethod
    def rng_fn_scipy(cls, rng, loc, scale, size):
        return _stats().halfcauchy.rvs(loc=loc, scale=scale, random_state=rng, size=size)


halfcauchy = HalfCauchyRV()

class InvGammaRV(RandomVariable):
    """``1 / gamma(shape, 1 / scale)``."""

    name = "invgamma"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("InverseGamma", "\\operatorname{InverseGamma}")
    param_checks = ((0, "nonnegative", "shape must be >= 0"), (1, "positive", "scale must be > 0"))

    def __call__(self, shape, scale, size=None, **kwargs):
        return super().__call__(shape, scale, size=size, **kwargs)

    @classmethod
    def rng_fn(cls, rng, shape, scale, size):
        return 1 / rng.gamma(shape, 1 / scale, size)


invgamma = InvGammaRV()

class WaldRV(RandomVariable):
    """Wald (inverse Gaussian) with ``mean`` and ``scale``."""

    name = "wald"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name_ = ("Wald", "\\operatorname{Wald}")
    param_checks = ((0, "positive", "mean must be > 0"), (1, "positive", "scale must be > 0"))

    def __call__(self, mean=1.0, scale=1.0, size=None, **kwargs):
        return super().__call__(mean, scale, size=size, **kwargs)


wald = WaldRV()

class TruncExponentialRV(ScipyRandomVariable):
    """Exponential truncated to ``[loc, loc + b * scale]``."""

    name = "truncexpon"
    signature = "(),(),()->()"
    dtype = "floatX"
    _print_name = ("TruncatedExponential", "\\operatorname{TruncatedExponential}")
    param_checks = ((0, "positive", "b must be > 0"), (2, "positive", "scale must be > 0"))

    def __call__(self, b, loc=0.0, scale=1.0, size=None, **kwargs):
        return super().__call__(b, loc, scale, size=size, **kwargs)

    @classmethod
    def rng_fn_scipy(cls, rng, b, loc, scale, size):
        return _stats().truncexpon.rvs(b, loc=loc, scale=scale, size=size, random_state=rng)


truncexpon = TruncExponentialRV()

class StudentTRV(ScipyRandomVariable):
    """Student's t with ``df`` degrees of freedom, location ``loc``, scale ``scale``."""

    name = "t"
    signature = "(),(),()->()"
    dtype = "floatX"
    _print_name = ("StudentT", "\\operatorname{StudentT}")
    param_checks = ((0, "positive", "df must be > 0"), (2, "positive", "scale must be > 0"))

    def __call__(self, df, loc=0.0, scale=1.0, size=None, **kwargs):
        return super().__call__(df, loc, scale, size=size, **kwargs)

    @classmethod
    def rng_fn_scipy(cls, rng, df, loc, scale, size):
        return _stats().t.rvs(df, loc=loc, scale=scale, size=size, random_state=rng)


t = StudentTRV()

class LaplaceRV(RandomVariable):
    """Laplace (double exponential) with location ``loc`` and scale ``scale``."""

    name = "laplace"
    signature = "(),()->()"
    dtype = "floatX"
    _print_name = ("Laplace", "\\operatorname{Laplace}")
    param_checks = ((1, "nonnegative", "scale must be >= 0"),)

    def __call__(self, loc=0.0, scale=1.0, size=None, **kwargs):
        return super().__call__(loc, scale, size=size, **kwargs)


laplace = LaplaceRV()

class GenGammaRV(ScipyRandomVariable):
    """Generalized gamma with shapes ``alpha``, ``p`` and scale ``lambd``."""

    name = "gengamma"
    signature = "(),(),()->()"
    dtype = "floatX"
    _print_name = ("GeneralizedGamma", "\\operatorname{GeneralizedGamma}")
    param_checks = (
        (0, "positive", "alpha must be > 0"),
        (1, "positive", "p must be > 0"),
        (2, "positive", "lambd must be > 0"),
    )

    def __call__(self, alpha=1.0, p=1.0, lambd=1.0, size=None, **kwargs):
        return super().__call__(alpha, p, lambd, size=size, **kwargs)

    @classmethod
    def rng_fn_scipy(cls, rng, alpha, p, lambd, size):
        return _stats().gengamma.rvs(alpha / p, p, scale=lambd, size=size, random_state=rng)


gengamma = GenGammaRV()


__all__ = [
    "UniformRV",
    "uniform",
    "TriangularRV",
    "triangular",
    "BetaRV",
    "beta",
    "NormalRV",
    "normal",
    "standard_normal",
    "HalfNormalRV",
    "halfnormal",
    "LogNormalRV",
    "lognormal",
    "GammaRV",
    "gamma",
    "chisquare",
    "rayleigh",
    "ParetoRV",
    "pareto",
    "GumbelRV",
    "gumbel",
    "ExponentialRV",
    "exponential",
    "WeibullRV",
    "weibull",
    "LogisticRV",
    "logistic",
    "VonMisesRV",
    "vonmises",
    "CauchyRV",
    "cauchy",
    "HalfCauchyRV",
    "halfcauchy",
    "InvGammaRV",
    "invgamma",
    "WaldRV",
    "wald",
    "TruncExponentialRV",
    "truncexpon",
    "StudentTRV",
    "t",
    "LaplaceRV",
    "laplace",
    "GenGammaRV",
    "gengamma",
]
