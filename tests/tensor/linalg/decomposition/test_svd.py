"""``svd`` against NumPy on both paths, singular-vector comparison and gradients."""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.gradient import verify_grad
from lucent.tensor.linalg import SVD, svd
from lucent.tensor.linalg.decomposition._compare import columns_equal_up_to_phase, rows_equal_up_to_phase
from tests.helpers import run

RNG = np.random.default_rng(22)


def test_svd_modes_and_batches():
    x, t = lt.dmatrix("x"), lt.dtensor3("t")
    a, b = RNG.normal(size=(5, 3)), RNG.normal(size=(2, 3, 4))
    u, s, vh, ue, se, vhe, s_only, sb = run(
        [*svd(x), *svd(x, full_matrices=False), svd(x, compute_uv=False), svd(t, compute_uv=False)], {x: a, t: b}
    )
    ru, rs, rvh = np.linalg.svd(a)
    assert u.shape == (5, 5) and vh.shape == (3, 3) and ue.shape == (5, 3)
    np.testing.assert_allclose(s, rs)
    np.testing.assert_allclose(s_only, rs)
    assert columns_equal_up_to_phase(ru[:, :3], ue) and rows_equal_up_to_phase(rvh, vhe)
    np.testing.assert_allclose((ue * se) @ vhe, a, atol=1e-12)
    np.testing.assert_allclose(sb, np.linalg.svd(b, compute_uv=False))


def test_svd_types_and_shapes():
    x = lt.tensor(dtype="float32", shape=(5, 3))
    u, s, vh = svd(x, full_matrices=False)
    assert (u.type.shape, s.type.shape, vh.type.shape) == ((5, 3), (3,), (3, 3))
    assert s.type.dtype == "float32"
    assert SVD(compute_uv=False).gufunc_signature == "(m,n)->(k)"
    y = lt.dmatrix("y")
    np.testing.assert_array_equal(svd(y, full_matrices=False)[0].shape.eval({y: np.zeros((4, 2))}), (4, 2))


def test_svd_gradients():
    a = RNG.normal(size=(4, 3))
    rng = np.random.default_rng(5)
    verify_grad(lambda x: svd(x, compute_uv=False), [a], rng=rng, mode="FAST_COMPILE")
    # Sign-invariant functions of the singular vectors.
    verify_grad(lambda x: (svd(x, full_matrices=False)[0] ** 2).sum(axis=1), [a], rng=rng, mode="FAST_COMPILE")
    verify_grad(lambda x: (svd(x, full_matrices=False)[2] ** 2)[:, 0], [a], rng=rng, mode="FAST_COMPILE")
    with pytest.raises(NotImplementedError, match="full_matrices"):
        verify_grad(lambda x: svd(x)[0], [a], rng=rng, mode="FAST_COMPILE")
