"""``Cholesky`` / ``cholesky`` against ``scipy.linalg.cholesky``, on both paths."""

import numpy as np
import pytest
import scipy.linalg

import lucent.tensor as lt
from lucent.gradient import verify_grad
from lucent.tensor.linalg import Cholesky, cholesky
from tests.helpers import run

RNG = np.random.default_rng(5)


def _spd(n, dtype="float64"):
    m = RNG.normal(size=(n, n))
    return (m @ m.T + n * np.eye(n)).astype(dtype)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cholesky_matches_scipy(lower, dtype):
    x = lt.matrix("x", dtype=dtype)
    a = _spd(4, dtype)
    out = run(cholesky(x, lower=lower), {x: a})
    assert out.dtype == dtype
    np.testing.assert_allclose(out, scipy.linalg.cholesky(a, lower=lower), rtol=1e-4 if dtype == "float32" else 1e-10)


@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_reads_one_triangle(lower):
    x = lt.dmatrix("x")
    a = _spd(4)
    junk = np.triu(RNG.normal(size=(4, 4)), 1)
    a_junk = np.tril(a) + junk if lower else np.triu(a) + junk.T
    np.testing.assert_allclose(run(cholesky(x, lower=lower), {x: a_junk}), scipy.linalg.cholesky(a, lower=lower))


def test_cholesky_failure_and_nan_give_nan():
    x = lt.dmatrix("x")
    assert np.isnan(run(cholesky(x), {x: np.array([[1.0, 2.0], [2.0, 1.0]])})).all()
    # As LAPACK, a NaN is not a failure: it spreads through the rest of the factor.
    for i, j in [(2, 1), (0, 0)]:
        a = _spd(3)
        a[i, j] = np.nan
        out = run(cholesky(x), {x: a})
        np.testing.assert_array_equal(np.isnan(out), np.isnan(scipy.linalg.cholesky(a, lower=True, check_finite=False)))


def test_cholesky_empty_and_non_contiguous():
    x = lt.dmatrix("x")
    assert run(cholesky(x), {x: np.zeros((0, 0))}).shape == (0, 0)
    a = np.asfortranarray(_spd(5))[::-1, ::-1]
    np.testing.assert_allclose(run(cholesky(x), {x: a}), np.linalg.cholesky(a))


def test_cholesky_checks_input():
    with pytest.raises(TypeError, match="1-D input"):
        cholesky(lt.dvector("x"))
    with pytest.raises(ValueError, match="on_error"):
        cholesky(lt.dmatrix("x"), on_error="ignore")
    x = lt.dmatrix("x")
    with pytest.raises(ValueError, match="square"):
        run(cholesky(x), {x: np.ones((2, 3))})
    assert Cholesky(lower=False) != Cholesky(lower=True)
    assert Cholesky(overwrite_a=True).destroy_map == {0: [0]}


@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_gradient(lower):
    def f(a):
        # Differentiate through the symmetric part only, as the factorisation sees it.
        return cholesky((a + a.T) / 2, lower=lower)

    verify_grad(f, [_spd(3)], rng=np.random.default_rng(9))


@pytest.mark.parametrize("lower", [True, False])
def test_hermitian_factor_and_solves_match_scipy(lower):
    """Complex Hermitian input: the factor, the Cholesky solve and the (conjugate-)transposed
    triangular solves, on both paths, as SciPy's LAPACK calls give them."""
    from lucent.tensor.linalg import cho_solve, solve_triangular

    x, b = lt.zmatrix("x"), lt.zmatrix("b")
    m = RNG.normal(size=(5, 5)) + 1j * RNG.normal(size=(5, 5))
    a = m @ m.conj().T + 5 * np.eye(5)
    rhs = RNG.normal(size=(5, 3)) + 1j * RNG.normal(size=(5, 3))
    c = cholesky(x, lower=lower)
    got = run([c, cho_solve((c, lower), b), solve_triangular(c, b, lower=lower, trans=2),
               solve_triangular(c, b[:, 0], lower=lower, trans=1)], {x: a, b: rhs})
    fac = scipy.linalg.cholesky(a, lower=lower)
    expected = [fac, scipy.linalg.cho_solve((fac, lower), rhs),
                scipy.linalg.solve_triangular(fac, rhs, lower=lower, trans=2),
                scipy.linalg.solve_triangular(fac, rhs[:, 0], lower=lower, trans=1)]
    for i, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12, err_msg=f"output {i}")
