"""The distributions of ``lucent.tensor.random``: one ``RandomVariable`` per family.

Each op draws with NumPy's ``Generator`` method of the same name (or, for
the families NumPy lacks, with the transformation of NumPy draws that
SciPy's ``rvs`` applies), so a draw from a given generator state gives the
same numbers as NumPy would. Parameters keep NumPy's order and defaults;
``dtype`` is ``floatX`` for continuous families and ``int64`` for discrete
ones. ``param_checks`` lists the parameter values each family rejects; both
execution paths check them before drawing, so a bad call leaves the
generator untouched.
"""

from __future__ import annotations

import warnings

import numpy as np

from lucent.tensor.basic import as_tensor_variable, get_vector_length
from lucent.tensor.math import sqrt
from lucent.tensor.random.op import RandomVariable
from lucent.tensor.random.utils import broadcast_params, normalize_size_param
from lucent.tensor.shape import specify_shape

#: NumPy's shape broadcasting (PyTensor keeps it under this module's name).
broadcast_shapes = np.broadcast_shapes


class ScipyRandomVariable(RandomVariable):
    """A family drawn with SciPy's ``rvs``: ``rng_fn_scipy`` does the draw, broadcasting is fixed here."""

    @classmethod
    def rng_fn_scipy(cls, rng, *args, **kwargs):
        raise NotImplementedError

    @classmethod
    def rng_fn(cls, *args, **kwargs):
        size = args[-1]
        res = cls.rng_fn_scipy(*args, **kwargs)
        if np.ndim(res) == 0:
            res = np.asarray(res)
        if size is None:
            expected = np.broadcast_shapes(*[np.shape(a) for a in args[1:-1]])
            if res.shape != expected:
                return np.broadcast_to(res, expected).copy()
        return res


def _stats():
    import scipy.stats

    return scipy.stats


# --------------------------------------------------------------------------- continuous
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


class MvNormalRV(RandomVariable):
    """Multivariate normal; ``method`` factors ``cov`` by "cholesky", "svd" or "eigh"."""

    name = "multivariate_normal"
    signature = "(n),(n,n)->(n)"
    dtype = "floatX"
    _print_name = ("MultivariateNormal", "\\operatorname{MultivariateNormal}")
    __props__ = ("name", "signature", "dtype", "inplace", "method")

    def __init__(self, *args, method="cholesky", **kwargs):
        super().__init__(*args, **kwargs)
        if method not in ("cholesky", "svd", "eigh"):
            raise ValueError(
                f"Unknown method {method}. The method must be one of 'cholesky', 'svd', or 'eigh'."
            )
        self.method = method

    def __call__(self, mean, cov, size=None, method=None, **kwargs):
        if method is not None and method != self.method:
            props = self._props_dict()
            props["method"] = method
            return type(self)(**props).__call__(mean, cov, size=size, method=method, **kwargs)
        return super().__call__(mean, cov, size=size, **kwargs)

    def rng_fn(self, rng, mean, cov, size):
        if size is None:
            size = np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
        if self.method == "cholesky":
            factor = np.linalg.cholesky(cov)
        elif self.method == "svd":
            factor, s, _ = np.linalg.svd(cov)
            factor *= np.sqrt(s, out=s)[..., None, :]
        else:
            w, factor = np.linalg.eigh(cov)
            factor *= np.sqrt(w, out=w)[..., None, :]
        out = rng.normal(size=(*size, mean.shape[-1]))
        np.einsum("...ij,...j->...i", factor, out, optimize=False, out=out)
        out += mean
        return out


multivariate_normal = MvNormalRV(method="cholesky")


class DirichletRV(RandomVariable):
    """Dirichlet with concentrations ``alphas`` (last dimension)."""

    name = "dirichlet"
    signature = "(a)->(a)"
    dtype = "floatX"
    _print_name = ("Dirichlet", "\\operatorname{Dirichlet}")
    param_checks = ((0, "positive", "alphas must be > 0"),)

    def __call__(self, alphas, size=None, **kwargs):
        return super().__call__(alphas, size=size, **kwargs)

    @classmethod
    def rng_fn(cls, rng, alphas, size):
        if alphas.ndim > 1:
            if size is not None:
                alphas = np.broadcast_to(alphas, tuple(size) + alphas.shape[-1:])
            samples = np.empty(alphas.shape)
            for index in np.ndindex(*alphas.shape[:-1]):
                samples[index] = rng.dirichlet(alphas[index])
            return samples
        return rng.dirichlet(alphas, size=size)


dirichlet = DirichletRV()


# --------------------------------------------------------------------------- discrete
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


class MultinomialRV(RandomVariable):
    """Counts of ``n`` draws among categories of probabilities ``p`` (last dimension)."""

    name = "multinomial"
    signature = "(),(p)->(p)"
    dtype = "int64"
    _print_name = ("Multinomial", "\\operatorname{Multinomial}")
    param_checks = ((0, "nonnegative", "n must be >= 0"), (1, "simplex", "p must be probabilities summing to 1"))

    def __call__(self, n, p, size=None, **kwargs):
        return super().__call__(n, p, size=size, **kwargs)

    @classmethod
    def rng_fn(cls, rng, n, p, size):
        if n.ndim > 0 or p.ndim > 1:
            if size is None:
                n, p = broadcast_params([n, p], [0, 1])
            else:
                n = np.broadcast_to(n, size)
                p = np.broadcast_to(p, tuple(size) + p.shape[-1:])
            res = np.empty(p.shape, dtype=cls.dtype)
            for idx in np.ndindex(*p.shape[:-1]):
                res[idx] = rng.multinomial(n[idx], p[idx])
            return res
        return rng.multinomial(n, p, size=size)


multinomial = MultinomialRV()


class CategoricalRV(RandomVariable):
    """Index ``k`` with probability ``p[..., k]``."""

    name = "categorical"
    signature = "(p)->()"
    dtype = "int64"
    _print_name = ("Categorical", "\\operatorname{Categorical}")
    param_checks = ((0, "simplex", "p must be probabilities summing to 1"),)

    def __call__(self, p, size=None, **kwargs):
        return super().__call__(p, size=size, **kwargs)

    @classmethod
    def rng_fn(cls, rng, p, size):
        if size is None:
            size = p.shape[:-1]
        else:
            if len(size) < p.ndim - 1:
                raise ValueError("`size` is incompatible with the shape of `p`")
            for s, ps in zip(reversed(size), reversed(p.shape[:-1])):
                if s == 1 and ps != 1:
                    raise ValueError("`size` is incompatible with the shape of `p`")
        u = rng.uniform(size=size)
        cdf = np.broadcast_to(p.cumsum(axis=-1), tuple(np.shape(u)) + p.shape[-1:])
        out = np.empty(np.shape(u), dtype=np.int64)
        for idx in np.ndindex(*np.shape(u)):
            out[idx] = np.searchsorted(cdf[idx], u[idx])
        return out


categorical = CategoricalRV()


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


class ChoiceWithoutReplacement(RandomVariable):
    """Draws without replacement from ``a`` (optionally with probabilities ``p``)."""

    name = "choice_without_replacement"
    dtype = None
    _print_name = ("choice_without_replacement", "\\operatorname{choice_without_replacement}")

    @property
    def has_p_param(self):
        return len(self.ndims_params) == 3

    def _supp_shape_from_params(self, dist_params, param_shapes=None):
        a, *_, core_shape = dist_params
        a_shape = tuple(a.shape[i] for i in range(a.type.ndim)) if param_shapes is None else tuple(param_shapes[0])
        a_batch_ndim = len(a_shape) - self.ndims_params[0]
        a_core_shape = a_shape[a_batch_ndim:]
        if core_shape.type.ndim > 1:
            core_shape = core_shape[(0,) * (core_shape.type.ndim - 1)]
        n = get_vector_length(core_shape)
        return tuple(core_shape[i] for i in range(n)) + tuple(a_core_shape[1:])

    def rng_fn(self, *params):
        if self.has_p_param:
            rng, a, p, core_shape, size = params
        else:
            rng, a, core_shape, size = params
            p = None
        if core_shape.ndim > 1:
            core_shape = core_shape[(0,) * (core_shape.ndim - 1)]
        core_shape = tuple(int(c) for c in core_shape)
        batch_ndim = a.ndim - self.ndims_params[0]
        if batch_ndim == 0:
            return rng.choice(a, p=p, size=core_shape or None, replace=False)
        if size is None:
            size = a.shape[:batch_ndim] if p is None else np.broadcast_shapes(
                a.shape[:batch_ndim], p.shape[:batch_ndim]
            )
        size = tuple(size)
        a = np.broadcast_to(a, size + a.shape[batch_ndim:])
        if p is not None:
            p = np.broadcast_to(p, size + p.shape[batch_ndim:])
        out = np.empty(size + core_shape + a.shape[len(size) + 1:], dtype=a.dtype)
        for idx in np.ndindex(*size):
            out[idx] = rng.choice(a[idx], p=None if p is None else p[idx], size=core_shape, replace=False)
        return out


def choice(a, size=None, replace=True, p=None, rng=None, return_next_rng=False):
    """Draws from ``a`` (an int ``n`` means ``arange(n)``), with or without replacement."""
    a = as_tensor_variable(a)
    a_size = a if a.type.ndim == 0 else a.shape[0]
    if p is not None:
        p = specify_shape(p, (a_size,))
    if replace or size is None:
        if p is None:
            next_rng, idxs = integers(0, a_size, size=size, rng=rng, return_next_rng=True)
        else:
            next_rng, idxs = categorical(p, size=size, rng=rng, return_next_rng=True)
        out = idxs if a.type.ndim == 0 else a[idxs]
        return (next_rng, out) if return_next_rng else out
    core_shape = normalize_size_param(size)
    n_core = get_vector_length(core_shape)
    a_dims = [f"a{i}" for i in range(a.type.ndim)]
    idx_dims = [f"s{i}" for i in range(n_core)]
    if a.type.ndim == 0:
        p_sig, out_dims = "a", idx_dims
    else:
        p_sig, out_dims = a_dims[0], idx_dims + a_dims[1:]
    a_sig, out_sig = ",".join(a_dims), ",".join(out_dims)
    if p is None:
        signature = f"({a_sig}),({n_core})->({out_sig})"
    else:
        signature = f"({a_sig}),({p_sig}),({n_core})->({out_sig})"
    op = ChoiceWithoutReplacement(signature=signature, dtype=a.type.dtype)
    params = (a, core_shape) if p is None else (a, p, core_shape)
    return op(*params, size=None, rng=rng, return_next_rng=return_next_rng)


class PermutationRV(RandomVariable):
    """A random permutation of ``x`` (or of ``arange(x)`` for an integer)."""

    name = "permutation"
    _print_name = ("permutation", "\\operatorname{permutation}")

    def _supp_shape_from_params(self, dist_params, param_shapes=None):
        [x] = dist_params
        if self.ndims_params[0] == 0:
            return (x.ravel()[0],) if hasattr(x, "ravel") else (x.flatten()[0],)
        shape = tuple(x.shape[i] for i in range(x.type.ndim)) if param_shapes is None else tuple(param_shapes[0])
        return shape[x.type.ndim - self.ndims_params[0]:]

    def rng_fn(self, rng, x, size):
        batch_ndim = x.ndim - self.ndims_params[0]
        if batch_ndim:
            if size is None:
                size = x.shape[:batch_ndim]
            else:
                size = tuple(size)
                x = np.broadcast_to(x, size + x.shape[batch_ndim:])
            scalar = self.ndims_params[0] == 0
            core = (int(x.flat[0]),) if scalar else x.shape[batch_ndim:]
            out = np.empty(tuple(size) + core, dtype=x.dtype)
            for idx in np.ndindex(*size):
                out[idx] = rng.permutation(x[idx].item() if scalar else x[idx])
            return out
        return rng.permutation(x.item() if self.ndims_params[0] == 0 else x)


def permutation(x, size=None, rng=None, return_next_rng=False):
    """A random permutation of ``x``'s first core dimension (or of ``arange(x)``)."""
    x = as_tensor_variable(x)
    if x.type.ndim == 0:
        signature = "()->(x)"
    else:
        sig = ",".join(f"x{i}" for i in range(x.type.ndim))
        signature = f"({sig})->({sig})"
    return PermutationRV(signature=signature, dtype=x.type.dtype)(
        x, size=size, rng=rng, return_next_rng=return_next_rng
    )


__all__ = [
    "bernoulli", "beta", "betabinom", "binomial", "categorical", "cauchy", "chisquare",
    "choice", "dirichlet", "exponential", "gamma", "gengamma", "geometric", "gumbel",
    "halfcauchy", "halfnormal", "hypergeometric", "integers", "invgamma", "laplace",
    "logistic", "lognormal", "multinomial", "multivariate_normal", "nbinom",
    "negative_binomial", "normal", "pareto", "permutation", "poisson", "standard_normal",
    "t", "triangular", "truncexpon", "uniform", "vonmises", "wald", "weibull",
]
