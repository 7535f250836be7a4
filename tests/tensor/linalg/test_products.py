"""``kron``, ``matrix_power``, ``expm``, ``block_diag`` against NumPy/SciPy on both paths, and gradients."""

import numpy as np
import pytest
import scipy.linalg

import lucent.tensor as lt
from lucent.gradient import verify_grad
from lucent.tensor.linalg import block_diag, expm, kron, matrix_power
from tests.helpers import run

RNG = np.random.default_rng(33)


def test_products_match_numpy():
    X, Y, v, T = lt.dmatrix("X"), lt.dmatrix("Y"), lt.dvector("v"), lt.dtensor3("T")
    a, b, w, t = RNG.normal(size=(3, 3)), RNG.normal(size=(2, 4)), RNG.normal(size=3), RNG.normal(size=(2, 3, 3))
    outs = run(
        [kron(X, Y), kron(v, Y), matrix_power(X, 0), matrix_power(X, 5), matrix_power(X, -2), matrix_power(T, 3),
         expm(X), expm(T), block_diag(X, Y, v[None])],
        {X: a, Y: b, v: w, T: t},
    )
    refs = [np.kron(a, b), np.kron(w, b), np.eye(3), np.linalg.matrix_power(a, 5), np.linalg.matrix_power(a, -2),
            np.linalg.matrix_power(t, 3), scipy.linalg.expm(a), scipy.linalg.expm(t),
            scipy.linalg.block_diag(a, b, w[None])]
    for got, ref in zip(outs, refs):
        np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12)


def test_errors():
    with pytest.raises(TypeError, match="sum to 3"):
        kron(lt.dvector(), lt.dvector())
    with pytest.raises(TypeError, match="integer"):
        matrix_power(lt.dmatrix(), 1.5)
    with pytest.raises(ValueError, match="insufficient core dimensions"):  # PyTensor's Blockwise error
        block_diag(lt.dmatrix(), lt.dvector())


def test_product_gradients():
    rng = np.random.default_rng(10)
    a = RNG.normal(size=(3, 3))
    fc = "FAST_COMPILE"
    verify_grad(expm, [a / 2], rng=rng, mode=fc)
    verify_grad(kron, [a, RNG.normal(size=(2, 2))], rng=rng, mode=fc)
    verify_grad(lambda x: matrix_power(x, 3), [a], rng=rng, mode=fc)
    verify_grad(lambda x, y: block_diag(x, y), [a, RNG.normal(size=(2, 1))], rng=rng, mode=fc)
