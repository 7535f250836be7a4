"""``SolveTriangularOfTriangle``: a triangular solve with a triangular right-hand side,
against SciPy on both paths."""

import numpy as np
import pytest
import scipy.linalg

import lucent.tensor as lt
from lucent.gradient import verify_grad
from lucent.tensor.linalg.solvers.triangle_rhs import SolveTriangularOfTriangle, solve_triangular_of_triangle
from tests.helpers import run

RNG = np.random.default_rng(41)


def _expected(a, b, lower):
    tri = np.tril if lower else np.triu
    return tri(scipy.linalg.solve_triangular(a.astype("float64"), tri(b.astype("float64")), lower=lower))


def _system(m, n, dtype):
    a = (RNG.normal(size=(m, m)) + m * np.eye(m)).astype(dtype)
    b = RNG.normal(size=(m, n)).astype(dtype)
    return a, b


@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("shape", [(1, 1), (7, 7), (150, 150), (130, 70), (70, 130)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_matches_scipy(dtype, shape, lower):
    A, B = lt.matrix("A", dtype=dtype), lt.matrix("B", dtype=dtype)
    a, b = _system(*shape, dtype)
    out = run(solve_triangular_of_triangle(A, B, lower=lower), {A: a, B: b})
    assert out.dtype == dtype and out.shape == b.shape
    tol = 1e-4 if dtype == "float32" else 1e-11
    np.testing.assert_allclose(out, _expected(a, b, lower), rtol=tol, atol=tol)


@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_layouts_empty_singular_and_nan(lower, layout):
    A, B = lt.dmatrix("A"), lt.dmatrix("B")
    out = solve_triangular_of_triangle(A, B, lower=lower)
    a, b = _system(90, 100, "float64")
    big = np.zeros((180, 180))
    big[::2, ::2] = a
    given = {"C": a, "F": np.asfortranarray(a), "strided": big[::2, ::2]}[layout]
    np.testing.assert_allclose(run(out, {A: given, B: b}), _expected(a, b, lower), rtol=1e-11, atol=1e-11)
    assert run(out, {A: np.zeros((0, 0)), B: np.zeros((0, 3))}).shape == (0, 3)
    singular = a.copy()
    singular[80, 80] = 0.0  # beyond the columns of a narrow right-hand side too
    assert np.isnan(run(out, {A: singular, B: b[:, :10]})).all()
    other = a.copy()
    other[(40, 50) if lower else (50, 40)] = np.nan  # in the triangle that is not read
    assert not np.isnan(run(out, {A: other, B: b})).any()


@pytest.mark.not_debugmode(
    reason="which entries a NaN on the diagonal reaches depends on the order of the BLAS kernel's "
    "operations (LAPACK's blocked solve and SciPy's differ on this machine); both give NaN"
)
@pytest.mark.parametrize("lower", [False, True])
def test_a_nan_on_the_diagonal_gives_nan(lower):
    A, B = lt.dmatrix("A"), lt.dmatrix("B")
    a, b = _system(90, 100, "float64")
    a[3, 3] = np.nan
    assert np.isnan(run(solve_triangular_of_triangle(A, B, lower=lower), {A: a, B: b})).any()


def test_errors():
    with pytest.raises(TypeError, match="float32 or float64"):
        SolveTriangularOfTriangle()(lt.lmatrix("A"), lt.lmatrix("B"))
    with pytest.raises(TypeError, match="two matrices"):
        SolveTriangularOfTriangle()(lt.dmatrix("A"), lt.dvector("B"))
    A, B = lt.dmatrix("A"), lt.dmatrix("B")
    with pytest.raises(ValueError, match="incompatible dimensions"):
        run(solve_triangular_of_triangle(A, B), {A: np.eye(3), B: np.ones((4, 4))})
    with pytest.raises(ValueError, match="square"):
        run(solve_triangular_of_triangle(A, B), {A: np.ones((3, 4)), B: np.ones((3, 4))})


@pytest.mark.parametrize("lower", [False, True])
def test_gradient(lower):
    a, b = _system(4, 5, "float64")
    verify_grad(lambda x, y: solve_triangular_of_triangle(x, y, lower=lower), [a, b], rng=RNG)


def test_infer_shape_and_batched():
    import lucent

    A, B = lt.dtensor3("A"), lt.dtensor3("B")
    a = np.stack([_system(6, 4, "float64")[0] for _ in range(3)])
    b = RNG.normal(size=(3, 6, 4))
    out = solve_triangular_of_triangle(A, B)
    np.testing.assert_allclose(run(out, {A: a, B: b}), [_expected(x, y, False) for x, y in zip(a, b)], rtol=1e-11)
    f = lucent.function([A, B], out.shape, mode="FAST_RUN")
    assert tuple(f(a, b)) == (3, 6, 4)
