"""``qr`` against ``scipy.linalg.qr`` on both paths, and its gradient."""

import numpy as np
import pytest
import scipy.linalg

import lucent.tensor as lt
from lucent.gradient import verify_grad
from lucent.tensor.linalg import qr
from tests.helpers import run

RNG = np.random.default_rng(23)


def test_qr_modes():
    x = lt.dmatrix("x")
    a = RNG.normal(size=(5, 3))
    q, r, qe, re, r_only, qc, rc = run(
        [*qr(x), *qr(x, mode="economic"), qr(x, mode="r"), *qr(x.T, mode="complete")], {x: a}
    )
    for got, ref in zip((q, r), scipy.linalg.qr(a)):
        np.testing.assert_allclose(got, ref, atol=1e-12)
    for got, ref in zip((qe, re), scipy.linalg.qr(a, mode="economic")):
        np.testing.assert_allclose(got, ref, atol=1e-12)
    np.testing.assert_allclose(r_only, scipy.linalg.qr(a, mode="r")[0], atol=1e-12)
    np.testing.assert_allclose(qc @ rc, a.T, atol=1e-12)


def test_qr_pivoting_types_and_errors():
    x = lt.dmatrix("x")
    a = RNG.normal(size=(4, 4))
    q, r, p = qr(x, pivoting=True)
    assert p.type.dtype == "int32"
    pv = p.eval({x: a})
    np.testing.assert_allclose(q.eval({x: a}) @ r.eval({x: a}), a[:, pv], atol=1e-12)
    assert qr(lt.tensor(dtype="float64", shape=(5, 3)), mode="reduced")[0].type.shape == (5, 3)
    with pytest.raises(ValueError, match="mode"):
        qr(x, mode="thin")



@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
def test_qr_raw_mode(shape):
    """mode='raw' gives LAPACK's geqrf output (H, tau) and R, as SciPy does."""
    x = lt.dmatrix("x")
    a = RNG.normal(size=shape)
    h, tau, r = run(list(qr(x, mode="raw")), {x: a})
    (h_ref, tau_ref), r_ref = scipy.linalg.qr(a, mode="raw")
    for got, ref in ((h, h_ref), (tau, tau_ref), (r, r_ref)):
        assert got.shape == ref.shape
        np.testing.assert_allclose(got, ref, atol=1e-12)
    with pytest.raises(NotImplementedError, match="raw"):
        verify_grad(lambda v: qr(v, mode="raw")[2], [a], rng=np.random.default_rng(0), mode="FAST_COMPILE")


def test_qr_gradient():
    a = RNG.normal(size=(4, 3))
    rng = np.random.default_rng(6)
    verify_grad(lambda x: sum((o ** 3).sum() for o in qr(x, mode="economic")), [a], rng=rng, mode="FAST_COMPILE")
    verify_grad(lambda x: qr(x, mode="r") ** 3, [a], rng=rng, mode="FAST_COMPILE")
    sq = RNG.normal(size=(3, 3))
    verify_grad(lambda x: qr(x)[0] ** 3, [sq], rng=rng, mode="FAST_COMPILE")


def test_qr_gradient_wide_and_full():
    """Wide matrices (m < n) in every mode, and mode='full' of a matrix of unknown shape."""
    rng = np.random.default_rng(7)
    wide = RNG.normal(size=(3, 5))
    for mode in ("economic", "full"):
        verify_grad(lambda x: sum((o ** 3).sum() for o in qr(x, mode=mode)), [wide], rng=rng, mode="FAST_COMPILE")
    verify_grad(lambda x: qr(x, mode="r") ** 3, [wide], rng=rng, mode="FAST_COMPILE")
    # A tall matrix has no unique full Q: the gradient graph checks that at run time.
    with pytest.raises(AssertionError, match="m > n and mode=full"):
        verify_grad(lambda x: qr(x, mode="full")[0], [RNG.normal(size=(5, 3))], rng=rng, mode="FAST_COMPILE")
