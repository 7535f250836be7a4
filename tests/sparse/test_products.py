"""TrueDot, SamplingDot, Usmm and the matrix-vector ops of lucent.sparse.products, on both paths."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import lucent.tensor as lt
from lucent.gradient import verify_grad
from lucent.link.numba.linker import NumbaLinkerWarning
from lucent.sparse import basic as sb
from lucent.sparse import math as sm
from tests.helpers import run
from tests.sparse.test_basic import FORMATS, sample


@pytest.fixture(autouse=True)
def _quiet_fallback():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaLinkerWarning)
        yield


@pytest.mark.parametrize("format", list(FORMATS))
def test_products_and_vector_ops_match_scipy(format):
    x = sb.matrix(format, "x", dtype="float64")
    m1, m2, v = lt.dmatrix("m1"), lt.dmatrix("m2"), lt.dvector("v")
    a = sample(format, shape=(3, 4))
    ad = a.toarray()
    rng = np.random.default_rng(0)
    b, c, vec = rng.normal(size=(4, 2)), rng.normal(size=(4, 2)), rng.normal(size=4)
    outs = [
        sm.true_dot(x, m1), sm.true_dot(m1.T, x.T), sm.sampling_dot(m2.T[:3], c, x),
        sm.usmm(lt.constant(1.5), x, m1, m2.T[:3, :2]), sm.mul_s_v(x, v), sm.structured_add_s_v(x, v),
        sm.add_s_s_data(x, x),
    ]
    td, td_t, sd, us, msv, sav, ssd = run(outs, {x: a, m1: b, m2: c.T, v: vec})
    assert td.format == format and np.allclose(td.toarray(), ad @ b)
    assert sp.issparse(td_t) and np.allclose(td_t.toarray(), b.T @ ad.T)
    assert sd.format == format and np.allclose(sd.toarray(), (ad != 0) * ad * (c[:3] @ c.T))
    np.testing.assert_allclose(us, 1.5 * ad @ b + c[:3, :2])
    np.testing.assert_allclose(msv.toarray(), ad * vec)
    np.testing.assert_allclose(sav.toarray(), np.where(ad != 0, ad + vec, 0))
    np.testing.assert_allclose(ssd.toarray(), 2 * ad)


def test_bad_inputs_are_refused_with_the_reason():
    x = sb.csr_matrix("x", dtype="float64")
    with pytest.raises(NotImplementedError, match="one dtype"):
        sm.true_dot(x, lt.fmatrix("f"))
    with pytest.raises(TypeError, match="sparse x or y"):
        sm.usmm(lt.constant(1.0), lt.dmatrix(), lt.dmatrix(), lt.dmatrix())
    with pytest.raises(ValueError, match="1 dimension"):
        sm.mul_s_v(x, lt.dmatrix())
    with pytest.raises(NotImplementedError, match="one dtype and format"):
        sm.add_s_s_data(x, sb.csc_matrix("y", dtype="float64"))
    with pytest.raises(ValueError, match="same pattern|one shape and pattern"):
        sm.add_s_s_data(x, x).owner.op.perform(
            sm.add_s_s_data(x, x).owner, [sample("csr"), sample("csr", shape=(2, 2))], [[None]]
        )


def test_gradients():
    # Every entry stored: the numeric gradient perturbs each one, the structured one sees each one.
    rng = np.random.default_rng(3)
    dense = rng.random((3, 4)) + 0.5
    pattern = sp.csr_matrix(dense * (rng.random((3, 4)) < 0.6))

    def sampled(x, y):
        return sb.dense_from_sparse(sm.sampling_dot(x, y, pattern))

    verify_grad(sampled, [rng.random((3, 2)), rng.random((4, 2))], rng=rng)

    def vector_ops(a, v):
        s = sb.csr_from_dense(a)
        return sb.dense_from_sparse(sm.mul_s_v(s, v)) + sb.dense_from_sparse(sm.structured_add_s_v(s, v))

    verify_grad(vector_ops, [dense, rng.random(4)], rng=rng)

    def true_dot_grad(a, b):
        return sb.dense_from_sparse(sm.true_dot(sb.csc_from_dense(a), b))

    verify_grad(true_dot_grad, [dense, rng.random((4, 2))], rng=rng)
