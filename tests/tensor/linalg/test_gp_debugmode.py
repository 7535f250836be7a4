"""A Gaussian-process log marginal likelihood and its gradient, compiled under DebugMode.

The graph is the one real GP code builds (kernel matrix, ``cholesky``, two
triangular solves, the log determinant from the factor's diagonal), so
DebugMode checks every linear-algebra op of it: ``perform`` against the
Numba kernels, the gradient graph, ``infer_shape`` and the absence of
hidden in-place writes.
"""

import numpy as np

import lucent
import lucent.tensor as lt
from lucent.tensor.linalg import cholesky, solve_triangular


def _log_marginal_likelihood(x, y, ls, noise):
    d = x[:, None] - x[None, :]
    K = lt.exp(-0.5 * (d / ls) ** 2) + noise * lt.eye(x.shape[0])
    L = cholesky(K)
    alpha = solve_triangular(L.T, solve_triangular(L, y, lower=True), lower=False)
    n = x.shape[0].astype("float64")
    return -0.5 * lt.dot(y, alpha) - lt.log(lt.diagonal(L)).sum() - 0.5 * n * np.log(2 * np.pi)


def _reference(xv, yv, ls, noise):
    K = np.exp(-0.5 * ((xv[:, None] - xv[None, :]) / ls) ** 2) + noise * np.eye(len(xv))
    sign, logdet = np.linalg.slogdet(K)
    return -0.5 * yv @ np.linalg.solve(K, yv) - 0.5 * logdet - 0.5 * len(xv) * np.log(2 * np.pi)


def test_gp_marginal_likelihood_runs_clean_under_debugmode():
    rng = np.random.default_rng(5)
    xv = np.sort(rng.uniform(0, 5, size=12))
    yv = np.sin(xv) + 0.1 * rng.normal(size=12)
    x, y, ls = lt.dvector("x"), lt.dvector("y"), lt.dscalar("ls")
    lml = _log_marginal_likelihood(x, y, ls, 0.1)
    g = lucent.grad(lml, ls)
    f = lucent.function([x, y, ls], [lml, g], mode="DebugMode")
    value, grad = f(xv, yv, 1.3)
    np.testing.assert_allclose(value, _reference(xv, yv, 1.3, 0.1), rtol=1e-10)
    eps = 1e-6
    fd = (_reference(xv, yv, 1.3 + eps, 0.1) - _reference(xv, yv, 1.3 - eps, 0.1)) / (2 * eps)
    np.testing.assert_allclose(grad, fd, rtol=1e-5)
