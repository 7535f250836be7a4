"""The distributions of ``lucent.tensor.random``: one ``RandomVariable`` per family.

This module is the public path PyTensor programs import from
(``pytensor.tensor.random.basic.normal``, ``...basic.NormalRV``); the
families themselves live in modules by kind - ``continuous``, ``discrete``,
``multivariate`` (families with core dimensions) and ``sampling``
(``choice``, ``permutation``) - and are re-exported here.

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

import numpy as np

from lucent.tensor.random.continuous import *  # noqa: F401,F403
from lucent.tensor.random.continuous import __all__ as _continuous_all
from lucent.tensor.random.continuous import _gamma  # noqa: F401
from lucent.tensor.random.discrete import *  # noqa: F401,F403
from lucent.tensor.random.discrete import __all__ as _discrete_all
from lucent.tensor.random.multivariate import *  # noqa: F401,F403
from lucent.tensor.random.multivariate import __all__ as _multivariate_all
from lucent.tensor.random.op import RandomVariable  # noqa: F401
from lucent.tensor.random.sampling import *  # noqa: F401,F403
from lucent.tensor.random.sampling import __all__ as _sampling_all
from lucent.tensor.random.scipy_rv import ScipyRandomVariable  # noqa: F401

#: NumPy's shape broadcasting (PyTensor keeps it under this module's name).
broadcast_shapes = np.broadcast_shapes

#: Every op class and op instance of the submodules, reachable from here.
_ALL_NAMES = (*_continuous_all, *_discrete_all, *_multivariate_all, *_sampling_all)

# ``from lucent.tensor.random.basic import *`` gives the distributions (as PyTensor's does).
__all__ = [
    "bernoulli", "beta", "betabinom", "binomial", "categorical", "cauchy", "chisquare",
    "choice", "dirichlet", "exponential", "gamma", "gengamma", "geometric", "gumbel",
    "halfcauchy", "halfnormal", "hypergeometric", "integers", "invgamma", "laplace",
    "logistic", "lognormal", "multinomial", "multivariate_normal", "nbinom",
    "negative_binomial", "normal", "pareto", "permutation", "poisson", "standard_normal",
    "t", "triangular", "truncexpon", "uniform", "vonmises", "wald", "weibull",
]
