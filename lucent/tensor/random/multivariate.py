"""Distributions with core dimensions (``ndim_supp > 0``): multivariate normal,
Dirichlet, multinomial, and categorical (whose probabilities are a core dimension)."""

from __future__ import annotations

import numpy as np

from lucent.tensor.random.op import RandomVariable
from lucent.tensor.random.utils import broadcast_params


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


__all__ = [
    "MvNormalRV",
    "multivariate_normal",
    "DirichletRV",
    "dirichlet",
    "MultinomialRV",
    "multinomial",
    "CategoricalRV",
    "categorical",
]
