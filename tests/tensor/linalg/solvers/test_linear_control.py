"""Sylvester, Lyapunov and discrete Riccati equations against SciPy on both paths, and gradients."""

import numpy as np
import pytest
import scipy.linalg

import lucent.tensor as lt
from lucent.gradient import verify_grad
from lucent.tensor.linalg import (
    solve_continuous_lyapunov,
    solve_discrete_are,
    solve_discrete_lyapunov,
    solve_sylvester,
)
from tests.helpers import run

RNG = np.random.default_rng(32)


def test_matrix_equations_match_scipy():
    A, B, Q, R, Bc = (lt.dmatrix(n) for n in "ABQRC")
    a = RNG.normal(size=(3, 3)) / 3
    b = RNG.normal(size=(2, 2)) + 3 * np.eye(2)
    q = RNG.normal(size=(3, 3))
    q_sym = q @ q.T + np.eye(3)
    bc = RNG.normal(size=(3, 2))
    outs = run(
        [
            solve_sylvester(A, B, Bc),
            solve_continuous_lyapunov(A, Q),
            solve_discrete_lyapunov(A, Q, method="direct"),
            solve_discrete_lyapunov(A, Q),
            solve_discrete_are(A, Bc, Q, R),
        ],
        {A: a, B: b, Q: q_sym, R: np.eye(2), Bc: bc},
    )
    refs = [
        scipy.linalg.solve_sylvester(a, b, bc),
        scipy.linalg.solve_continuous_lyapunov(a, q_sym),
        scipy.linalg.solve_discrete_lyapunov(a, q_sym),
        scipy.linalg.solve_discrete_lyapunov(a, q_sym),
        scipy.linalg.solve_discrete_are(a, bc, q_sym, np.eye(2)),
    ]
    for got, ref in zip(outs, refs):
        np.testing.assert_allclose(got, ref, rtol=1e-8, atol=1e-10)


def test_errors():
    with pytest.raises(ValueError, match="method"):
        solve_discrete_lyapunov(lt.dmatrix(), lt.dmatrix(), method="schur")
    with pytest.raises(ValueError, match="square"):
        solve_sylvester(lt.tensor(dtype="float64", shape=(2, 3)), lt.dmatrix(), lt.dmatrix())


def test_matrix_equation_gradients():
    rng = np.random.default_rng(9)
    a = RNG.normal(size=(3, 3)) / 3
    q = RNG.normal(size=(3, 3))
    fc = "FAST_COMPILE"
    verify_grad(solve_sylvester, [a, RNG.normal(size=(2, 2)) + 3 * np.eye(2), RNG.normal(size=(3, 2))], rng=rng, mode=fc)
    verify_grad(solve_continuous_lyapunov, [a - 2 * np.eye(3), q], rng=rng, mode=fc)
    verify_grad(solve_discrete_lyapunov, [a, q], rng=rng, mode=fc)
    bc = RNG.normal(size=(3, 2))
    verify_grad(
        lambda x, y: solve_discrete_are(x, bc, (y + y.T) / 2, np.eye(2)), [a, q @ q.T + np.eye(3)], rng=rng, mode=fc
    )


@pytest.mark.parametrize("method", ["direct", "bilinear"])
def test_discrete_lyapunov_of_a_stack(method):
    """Leading dimensions are batch dimensions (broadcast between ``A`` and ``Q``)."""
    a_val = 0.3 * RNG.normal(size=(3, 4, 4))
    q_val = RNG.normal(size=(4, 4))
    q_val = q_val @ q_val.T
    a, q = lt.dtensor3("a"), lt.dmatrix("q")
    out = run(solve_discrete_lyapunov(a, q, method=method), {a: a_val, q: q_val})
    ref = np.stack([scipy.linalg.solve_discrete_lyapunov(m, q_val) for m in a_val])
    np.testing.assert_allclose(out, ref, rtol=1e-8, atol=1e-10)
    verify_grad(lambda x: solve_discrete_lyapunov(x, q_val, method=method), [a_val],
                rng=np.random.default_rng(3), mode="FAST_COMPILE")
