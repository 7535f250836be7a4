"""Families drawn with SciPy's ``rvs`` (``ScipyRandomVariable``): the draw is SciPy's,
broadcasting of the result to the parameters' batch shape is fixed here."""

from __future__ import annotations

import numpy as np

from lucent.tensor.random.op import RandomVariable


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


__all__ = [
    "ScipyRandomVariable",
]
