"""``TriangleOfProduct``: ``tril(a @ b)`` computed as a triangle, against NumPy on both paths."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.gradient import verify_grad
from lucent.tensor.linalg.triangle_product import TriangleOfProduct, lower_triangle_of_product
from tests.helpers import run

RNG = np.random.default_rng(23)


def _expected(a, b, a_upper):
    return np.tril((np.triu(a) if a_upper else a).astype("float64") @ b.astype("float64"))


@pytest.mark.parametrize("a_upper", [False, True])
@pytest.mark.parametrize("shape", [(5, 5, 5), (150, 150, 150), (130, 70, 90), (40, 100, 200), (1, 1, 1)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_matches_numpy(dtype, shape, a_upper):
    m, k, n = shape
    A, B = lt.matrix("A", dtype=dtype), lt.matrix("B", dtype=dtype)
    a = RNG.normal(size=(m, k)).astype(dtype)
    b = RNG.normal(size=(k, n)).astype(dtype)
    out = run(lower_triangle_of_product(A, B, a_upper=a_upper), {A: a, B: b})
    assert out.dtype == dtype and out.shape == (m, n)
    tol = 1e-4 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(out, _expected(a, b, a_upper), rtol=tol, atol=tol * 10)
    assert not np.triu(out, 1).any()


@pytest.mark.parametrize("a_upper", [False, True])
def test_transposed_strided_empty_and_nan(a_upper):
    A, B = lt.dmatrix("A"), lt.dmatrix("B")
    out = lower_triangle_of_product(A, B, a_upper=a_upper)
    a = RNG.normal(size=(100, 100))
    b = RNG.normal(size=(100, 130))
    # a transposed C array (what the Cholesky gradient passes) and a strided b
    b_strided = np.repeat(b, 2, axis=1)[:, ::2]
    np.testing.assert_allclose(run(out, {A: a.T, B: b_strided}), _expected(a.T, b, a_upper), rtol=1e-12, atol=1e-12)
    assert run(out, {A: np.zeros((0, 3)), B: np.zeros((3, 4))}).shape == (0, 4)
    assert run(out, {A: np.zeros((3, 0)), B: np.zeros((0, 4))}).tolist() == np.zeros((3, 4)).tolist()
    a_nan = a.copy()
    a_nan[10, 20] = np.nan  # above the diagonal: read in both cases
    got = run(out, {A: a_nan, B: b})
    assert np.isnan(got[10, :11]).all() and not np.isnan(got[9]).any()
    if a_upper:
        below = a.copy()
        below[20, 10] = np.nan  # below the diagonal of an upper factor: not read
        assert not np.isnan(run(out, {A: below, B: b})).any()


def test_integer_input_is_refused_and_shapes_checked():
    with pytest.raises(TypeError, match="float32 or float64"):
        TriangleOfProduct()(lt.lmatrix("A"), lt.lmatrix("B"))
    with pytest.raises(TypeError, match="two matrices"):
        TriangleOfProduct()(lt.dvector("A"), lt.dmatrix("B"))
    A, B = lt.dmatrix("A"), lt.dmatrix("B")
    with pytest.raises(ValueError, match="not aligned"):
        run(lower_triangle_of_product(A, B), {A: np.ones((3, 4)), B: np.ones((3, 4))})


def test_infer_shape_and_mixed_dtypes():
    A, B = lt.fmatrix("A"), lt.dmatrix("B")
    out = lower_triangle_of_product(A, B)
    assert out.type.dtype == "float64"
    f = lucent.function([A, B], out.shape, mode="FAST_RUN")
    assert tuple(f(np.ones((3, 4), "float32"), np.ones((4, 6)))) == (3, 6)
    assert not any(isinstance(n.op, TriangleOfProduct) for n in f.maker.fgraph.toposort())


@pytest.mark.parametrize("a_upper", [False, True])
def test_gradient(a_upper):
    a = RNG.normal(size=(4, 5))
    b = RNG.normal(size=(5, 3))
    verify_grad(lambda x, y: lower_triangle_of_product(x, y, a_upper=a_upper), [a, b], rng=RNG)


def test_batched():
    A, B = lt.dtensor3("A"), lt.dtensor3("B")
    a = RNG.normal(size=(3, 6, 6))
    b = RNG.normal(size=(3, 6, 4))
    out = run(lower_triangle_of_product(A, B, a_upper=True), {A: a, B: b})
    np.testing.assert_allclose(out, [_expected(x, y, True) for x, y in zip(a, b)], rtol=1e-12)
