"""``MatrixInverse`` / ``inv`` against ``numpy.linalg.inv``, on both paths."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.gradient import verify_grad
from lucent.tensor.linalg import MatrixInverse, MatrixPinv, TensorInv, inv, matrix_dot, matrix_inverse, pinv, tensorinv
from tests.helpers import run

RNG = np.random.default_rng(7)


def _well_conditioned(n, dtype="float64"):
    return (RNG.normal(size=(n, n)) + n * np.eye(n)).astype(dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_inv_matches_numpy(dtype):
    x = lt.matrix("x", dtype=dtype)
    a = _well_conditioned(4, dtype)
    out = run(inv(x), {x: a})
    assert out.dtype == dtype
    np.testing.assert_allclose(out, np.linalg.inv(a), rtol=1e-4 if dtype == "float32" else 1e-10)


def test_inv_of_integers_computes_in_float64():
    x = lt.matrix("x", dtype="int64")
    assert inv(x).type.dtype == "float64"
    out = run(inv(x), {x: np.array([[2, 1], [1, 1]])})
    np.testing.assert_allclose(out, [[1, -1], [-1, 2]])


def test_inv_empty_and_non_contiguous():
    x = lt.dmatrix("x")
    assert run(inv(x), {x: np.zeros((0, 0))}).shape == (0, 0)
    big = _well_conditioned(6)
    view = big[::2, ::2]
    assert not view.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(run(inv(x), {x: view}), np.linalg.inv(view))


def test_inv_nan_row_gives_nan_like_numpy():
    # A NaN on the last pivot taints every entry in NumPy's result too.
    x = lt.dmatrix("x")
    a = np.array([[1.0, 1.0, 0.0], [2.0, 3.0, 1.0], [0.0, 1.0, np.nan]])
    assert np.isnan(np.linalg.inv(a)).all()
    assert np.isnan(run(inv(x), {x: a})).all()


def test_inv_singular_raises():
    x = lt.dmatrix("x")
    with pytest.raises(np.linalg.LinAlgError):
        run(inv(x), {x: np.ones((2, 2))})


def test_inv_static_shape_and_infer_shape():
    x = lt.tensor(dtype="float64", shape=(3, 3), name="x")
    assert inv(x).type.shape == (3, 3)
    y = lt.dmatrix("y")
    f = lucent.function([y], inv(y).shape)
    np.testing.assert_array_equal(f(_well_conditioned(5)), [5, 5])


def test_inv_refuses_vector_and_non_square_input():
    with pytest.raises(ValueError, match="1-d input"):
        inv(lt.dvector("x"))
    with pytest.raises(ValueError, match="square"):
        inv(lt.tensor(dtype="float64", shape=(2, 3), name="x"))


def test_inv_and_matrix_inverse_are_one_op():
    assert inv is matrix_inverse
    assert isinstance(inv, MatrixInverse)
    assert MatrixInverse() == inv and hash(MatrixInverse()) == hash(inv)


def test_inv_gradient():
    verify_grad(inv, [_well_conditioned(3)], rng=np.random.default_rng(1))


def test_matrix_dot_chains_products():
    a, b, c = lt.dmatrix("a"), lt.dmatrix("b"), lt.dmatrix("c")
    va, vb, vc = (RNG.normal(size=(2, 2)) for _ in range(3))
    np.testing.assert_allclose(run(matrix_dot(a, b, c), {a: va, b: vb, c: vc}), va @ vb @ vc)
    with pytest.raises(TypeError):
        matrix_dot()


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (0, 2)])
def test_pinv_matches_numpy(shape):
    x = lt.dmatrix("x")
    a = RNG.normal(size=shape)
    out = run(pinv(x), {x: a})
    assert out.shape == shape[::-1]
    np.testing.assert_allclose(out, np.linalg.pinv(a), atol=1e-12)


def test_pinv_hermitian_and_types():
    x = lt.dmatrix("x")
    a = _well_conditioned(3)
    sym = a + a.T
    np.testing.assert_allclose(run(pinv(x, hermitian=True), {x: sym}), np.linalg.pinv(sym, hermitian=True), atol=1e-10)
    assert pinv(lt.tensor(dtype="float32", shape=(2, 5))).type.shape == (5, 2)
    assert MatrixPinv(hermitian=True) != MatrixPinv(hermitian=False)
    with pytest.raises(ValueError, match="1-d input"):
        pinv(lt.dvector("t"))


def test_pinv_gradient():
    verify_grad(pinv, [RNG.normal(size=(3, 2))], rng=np.random.default_rng(4))


def test_tensorinv_matches_numpy():
    x = lt.tensor4("x")
    a = np.eye(6).reshape(6, 2, 3) + 0.1 * RNG.normal(size=(6, 2, 3))
    t = lt.tensor3("t")
    out = run(tensorinv(t, ind=1), {t: a})
    np.testing.assert_allclose(out, np.linalg.tensorinv(a, ind=1), rtol=1e-10)
    b = RNG.normal(size=(2, 3, 6)) + np.eye(6).reshape(2, 3, 6)
    np.testing.assert_allclose(run(tensorinv(t), {t: b}), np.linalg.tensorinv(b), rtol=1e-10)
    assert tensorinv(lt.tensor(dtype="float64", shape=(2, 3, 6))).type.shape == (6, 2, 3)
    with pytest.raises(ValueError, match="ind"):
        TensorInv(0)
    with pytest.raises(ValueError, match="more than 2"):
        tensorinv(x[0, 0])
    f = lucent.function([t], tensorinv(t).shape)
    np.testing.assert_array_equal(f(b), [6, 2, 3])
