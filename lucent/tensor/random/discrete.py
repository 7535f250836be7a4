"""Discrete univariate distributions (``dtype`` ``int64`` by default)."""

from __future__ import annotations

import numpy as np

from lucent.tensor.random.op import RandomVariable
from lucent.tensor.random.scipy_rv import ScipyRandomVariable, _stats


class PoissonRV(RandomVariable):
    """Poisson with rate ``lam``."""

    name = "poisson"
    signature = "()->()"
    dtype = "int64"
    _print_name = ("Poisson", "\\operatorname{Poisson}")
    param_checks = ((0, "nonnegative", "lam must be >= 0"),)

    def __call__(self, lam=1.0, size=None, **kwargs):
        return super().__call__(lam, size=size, **kwargs)


poisson = PoissonRV()

class GeometricRV(RandomVariable):
    """Number of trials up to the first success (success probability ``p``)."""

    name = "geometric"
    signature = "()->()"
    dtype = "int64"
    _print_name = ("Geometric", "\\operatorname{Geometric}")
    param_checks = ((0, "prob_open0", "p must be in (0, 1]"),)

    def __call__(self, p, size=None, **kwargs):
        return super().__call__(p, size=size, **kwargs)


geometric = GeometricRV()

class HyperGeometricRV(RandomVariable):
    """Good items among ``nsample`` drawn from ``ngood`` good and ``nbad`` bad ones."""

    name = "hypergeometric"
    signature = "(),(),()->()"
    dtype = "int64"
    _print_name = ("HyperGeometric", "\\operatorname{HyperGeometric}")
    param_checks = (
        (0, "nonnegative", "ngood must be >= 0"),
        (1, "nonnegative", "nbad must be >= 0"),
        (2, "nonnegative", "nsample must be >= 0"),
    )

    def __call__(self, ngood, nbad, nsample, size=None, **kwargs):
        return super().__call__(ngood, nbad, nsample, size=size, **kwargs)

    def check_params(self, params, size):
        super().check_params(params, size)
        ngood, nbad, nsample = (np.asarray(p) for p in params)
        if np.any(nsample > ngood + nbad):
            raise ValueError(
                f"hypergeometric: parameter nsample must be <= ngood + nbad; got nsample={nsample}, "
                f"ngood + nbad={ngood + nbad}"
            )


hypergeometric = HyperGeometricRV()

class BernoulliRV(ScipyRandomVariable):
    """1 with probability ``p``, else 0."""

    name = "bernoulli"
    signature = "()->()"
    dtype = "int64"
    _print_name = ("Bernoulli", "\\operatorname{Bernoulli}")
    param_checks = ((0, "prob", "p must be in [0, 1]"),)

    def __call__(self, p, size=None, **kwargs):
        return super().__call__(p, size=size, **kwargs)

    @classmethod
    def rng_fn_scipy(cls, rng, p, size):
        return _stats().bernoulli.rvs(p, size=size, random_state=rng)


bernoulli = BernoulliRV()

class BinomialRV(RandomVariable):
    """Successes in ``n`` trials of probability ``p``."""

    name = "binomial"
    signature = "(),()->()"
    dtype = "int64"
    _print_name = ("Binomial", "\\operatorname{Binomial}")
    param_checks = ((0, "nonnegative", "n must be >= 0"), (1, "prob", "p must be in [0, 1]"))

    def __call__(self, n, p, size=None, **kwargs):
        return super().__call__(n, p, size=size, **kwargs)


binomial = BinomialRV()

class NegBinomialRV(ScipyRandomVariable):
    """Failures before the ``n``-th success (success probability ``p``)."""

    name = "negative_binomial"
    signature = "(),()->()"
    dtype = "int64"
    _print_name = ("NegativeBinomial", "\\operatorname{NegativeBinomial}")
    param_checks = ((0, "positive", "n must be > 0"), (1, "prob_open0", "p must be in (0, 1]"))

    def __call__(self, n, p, size=None, **kwargs):
        return super().__call__(n, p, size=size, **kwargs)

    @classmethod
    def rng_fn_scipy(cls, rng, n, p, size):
        return _stats().nbinom.rvs(n, p, size=size, random_state=rng)


nbinom = negative_binomial = NegBinomialRV()

class BetaBinomialRV(ScipyRandomVariable):
    """Binomial whose probability is drawn from ``beta(a, b)``."""

    name = "beta_binomial"
    signature = "(),(),()->()"
    dtype = "int64"
    _print_name = ("BetaBinomial", "\\operatorname{BetaBinomial}")
    param_checks = (
        (0, "nonnegative", "n must be >= 0"),
        (1, "positive", "a must be > 0"),
        (2, "positive", "b must be > 0"),
    )

    def __call__(self, n, a, b, size=None, **kwargs):
        return super().__call__(n, a, b, size=size, **kwargs)

    @classmethod
    def rng_fn_scipy(cls, rng, n, a, b, size):
        return _stats().betabinom.rvs(n, a, b, size=size, random_state=rng)


betabinom = BetaBinomialRV()

class IntegersRV(RandomVariable):
    """Integers in ``[low, high)`` (``integers(high)`` means ``[0, high)``)."""

    name = "integers"
    signature = "(),()->()"
    dtype = "int64"
    _print_name = ("integers", "\\operatorname{integers}")

    def __call__(self, low, high=None, size=None, **kwargs):
        if high is None:
            low, high = 0, low
        return super().__call__(low, high, size=size, **kwargs)

    def check_params(self, params, size):
        low, high = (np.asarray(p) for p in params)
        if np.any(low >= high):
            raise ValueError(f"integers: parameter low must be < high; got low={low}, high={high}")
        super().check_params(params, size)


integers = IntegersRV()


__all__ = [
    "PoissonRV",
    "poisson",
    "GeometricRV",
    "geometric",
    "HyperGeometricRV",
    "hypergeometric",
    "BernoulliRV",
    "bernoulli",
    "BinomialRV",
    "binomial",
    "NegBinomialRV",
    "nbinom",
    "negative_binomial",
    "BetaBinomialRV",
    "betabinom",
    "IntegersRV",
    "integers",
]
