"""``lu``, ``lu_factor``, ``pivot_to_permutation`` against SciPy on both paths, and gradients."""

import numpy as np
import pytest
import scipy.linalg

import lucent.tensor as lt
from lucent.gradient import verify_grad
from lucent.tensor.linalg import LU, lu, lu_factor, pivot_to_permutation
from tests.helpers import run

RNG = np.random.default_rng(24)


def test_lu_outputs_match_scipy():
    x = lt.dmatrix("x")
    a = RNG.normal(size=(5, 5))
    lu_, piv = lu_factor(x)
    outs = run(
        [*lu(x), *lu(x, permute_l=True), *lu(x, p_indices=True), lu_, piv,
         pivot_to_permutation(piv), pivot_to_permutation(piv, inverse=True)],
        {x: a},
    )
    refs = [*scipy.linalg.lu(a), *scipy.linalg.lu(a, permute_l=True), *scipy.linalg.lu(a, p_indices=True),
            *scipy.linalg.lu_factor(a)]
    for got, ref in zip(outs[:10], refs, strict=True):
        np.testing.assert_allclose(got, ref, atol=1e-12)
    packed, piv_v, p_fwd, perm = outs[8:]
    assert piv_v.dtype == np.int32 and perm.dtype == np.int64
    np.testing.assert_array_equal(p_fwd, scipy.linalg.lu(a, p_indices=True)[0])
    np.testing.assert_allclose(a[perm], (np.tril(packed, -1) + np.eye(5)) @ np.triu(packed), atol=1e-12)


def test_lu_types_and_errors():
    p, L, U = lu(lt.dtensor3("t"), p_indices=True)
    assert p.type.dtype == "int32" and L.type.ndim == 3
    with pytest.raises(ValueError, match="permute_l and p_indices"):
        LU(permute_l=True, p_indices=True)
    with pytest.raises(TypeError, match="integer"):
        pivot_to_permutation(lt.dvector())


def test_lu_gradients():
    a = RNG.normal(size=(4, 4))
    rng = np.random.default_rng(7)
    verify_grad(lambda x: sum((o ** 3).sum() for o in lu(x)[1:]), [a], rng=rng, mode="FAST_COMPILE")
    verify_grad(lambda x: sum((o ** 3).sum() for o in lu(x, permute_l=True)), [a], rng=rng, mode="FAST_COMPILE")
    verify_grad(lambda x: lu(x, p_indices=True)[1] ** 3, [a], rng=rng, mode="FAST_COMPILE")
    verify_grad(lambda x: lu_factor(x)[0] ** 3, [a], rng=rng, mode="FAST_COMPILE")
