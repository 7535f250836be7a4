"""``eig``, ``eigh``, ``eigvalsh`` against NumPy/SciPy, on both paths, with gradients."""

import numpy as np
import pytest
import scipy.linalg

import lucent.tensor as lt
from lucent.gradient import verify_grad
from lucent.tensor.blockwise import Blockwise
from lucent.tensor.linalg import Eigh, eig, eigh, eigvalsh
from lucent.tensor.linalg.decomposition._compare import columns_equal_up_to_phase
from tests.helpers import run

RNG = np.random.default_rng(21)


def _sym(n, batch=()):
    m = RNG.normal(size=(*batch, n, n))
    return m + np.swapaxes(m, -1, -2) + 2 * n * np.eye(n)


def test_eigen_values_and_vectors():
    x, y, s = lt.dmatrix("x"), lt.dmatrix("y"), lt.dtensor3("s")
    a = RNG.normal(size=(4, 4))
    h, b, hs = _sym(4), _sym(4), _sym(3, (2,))
    outs = run(
        [*eig(x), *eigh(y), eigh(y, lower=False)[0], eigvalsh(y), eigh(y, x)[0], eigvalsh(s), eigh(s)[1]],
        {x: b, y: h, s: hs},
    )
    w, v, wh, vh, wu, wv, wgen, wbatch, vbatch = outs
    np.testing.assert_allclose(b @ v, v * w, atol=1e-10)
    ref_w, ref_v = scipy.linalg.eigh(h)
    np.testing.assert_allclose(wh, ref_w)
    assert columns_equal_up_to_phase(ref_v, vh)
    np.testing.assert_allclose(wu, ref_w)
    np.testing.assert_allclose(wv, ref_w)
    np.testing.assert_allclose(wgen, scipy.linalg.eigh(h, b)[0], rtol=1e-8)
    np.testing.assert_allclose(wbatch, np.linalg.eigvalsh(hs))
    assert columns_equal_up_to_phase(np.linalg.eigh(hs)[1], vbatch)


def test_eigh_reads_one_triangle():
    y = lt.dmatrix("y")
    h = _sym(3)
    noisy_upper = np.tril(h) + np.triu(RNG.normal(size=(3, 3)), 1)
    w = eigh(y)[0].eval({y: noisy_upper})
    np.testing.assert_allclose(w, np.linalg.eigvalsh(h))
    w = eigh(y, UPLO="U")[0].eval({y: noisy_upper.T})
    np.testing.assert_allclose(w, np.linalg.eigvalsh(h))


def test_types_batching_and_errors():
    w, v = eig(lt.dmatrix())
    assert w.type.dtype == v.type.dtype == "complex128"
    w, v = eigh(lt.matrix(dtype="float32"))
    assert (w.type.dtype, v.type.dtype) == ("float32", "float32")
    assert isinstance(eigh(lt.dtensor3())[0].owner.op, Blockwise)
    assert Eigh(lower=True) != Eigh(lower=False)
    with pytest.raises(ValueError, match="UPLO"):
        eigh(lt.dmatrix(), UPLO="X")
    with pytest.raises(ValueError, match="square"):
        eigvalsh(lt.tensor(dtype="float64", shape=(2, 3)))


def test_columns_up_to_phase_comparison():
    v = np.linalg.qr(RNG.normal(size=(3, 3)))[0]
    assert columns_equal_up_to_phase(v, v * np.array([1, -1, -1]))
    assert not columns_equal_up_to_phase(v, v[:, ::-1])
    assert columns_equal_up_to_phase(v.astype(complex), v * np.exp(1j * np.array([0.3, 1.0, 2.0])))


def test_eigen_gradients():
    h = _sym(4)
    rng = np.random.default_rng(3)
    weights = RNG.normal(size=(4, 4))
    verify_grad(lambda x: eigh(x)[0], [h], rng=rng, mode="FAST_COMPILE")
    # A function of the eigenvectors that does not depend on their signs.
    verify_grad(lambda x: (eigh(x)[1] ** 2 * weights).sum(), [h], rng=rng, mode="FAST_COMPILE")
    verify_grad(lambda x: eigvalsh(x, lower=False), [h], rng=rng, mode="FAST_COMPILE")


@pytest.mark.parametrize("lower", [True, False])
def test_generalized_eigh_gradients(lower):
    """``a v = w b v``: gradients of ``w`` and ``v`` with respect to both matrices."""
    rng = np.random.default_rng(5)
    a, b = RNG.normal(size=(4, 4)), RNG.normal(size=(4, 4))

    def spd(m):
        return m @ m.T + 20 * lt.eye(4)

    verify_grad(lambda x, y: eigh(x + x.T, spd(y), lower=lower)[0], [a, b], rng=rng, mode="FAST_COMPILE")
    verify_grad(lambda x, y: eigh(x + x.T, spd(y), lower=lower)[1], [a, b], rng=rng, mode="FAST_COMPILE")
    verify_grad(lambda x, y: eigvalsh(x + x.T, spd(y), lower=lower), [a, b], rng=rng, mode="FAST_COMPILE")
    # Only the triangle read counts: a non-symmetric input gets a triangular gradient.
    verify_grad(lambda x, y: eigh(x, spd(y), lower=lower)[1] ** 2, [a + a.T + np.tril(a), b], rng=rng,
                mode="FAST_COMPILE")
