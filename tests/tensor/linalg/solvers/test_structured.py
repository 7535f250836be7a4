"""``solve_triangular``, ``cho_solve``, ``lu_solve``, ``lstsq``, ``tensorsolve`` on both paths, and gradients."""

import numpy as np
import pytest
import scipy.linalg

import lucent.tensor as lt
from lucent.gradient import verify_grad
from lucent.tensor.linalg import (
    SolveTriangular,
    cho_solve,
    cholesky,
    lstsq,
    lu_factor,
    lu_solve,
    solve,
    solve_triangular,
    tensorsolve,
)
from tests.helpers import run

RNG = np.random.default_rng(31)


def _spd(n):
    m = RNG.normal(size=(n, n))
    return m @ m.T + n * np.eye(n)


def test_structured_solvers_match_scipy():
    A, B, v = lt.dmatrix("A"), lt.dmatrix("B"), lt.dvector("v")
    a, b, bv = RNG.normal(size=(4, 4)) + 4 * np.eye(4), RNG.normal(size=(4, 2)), RNG.normal(size=4)
    spd = _spd(4)
    S = lt.dmatrix("S")
    outs = run(
        [
            solve_triangular(A, B, lower=True),
            solve_triangular(A, v, trans="T"),
            solve_triangular(A, B, trans=2, unit_diagonal=True),
            cho_solve((cholesky(S), True), B),
            cho_solve((cholesky(S, lower=False), False), v),
            lu_solve(lu_factor(A), B),
            lu_solve(lu_factor(A), v, trans=True),
            solve(A, B, assume_a="upper triangular"),
        ],
        {A: a, B: b, v: bv, S: spd},
    )
    refs = [
        scipy.linalg.solve_triangular(a, b, lower=True),
        scipy.linalg.solve_triangular(a, bv, trans="T"),
        scipy.linalg.solve_triangular(a, b, trans=2, unit_diagonal=True),
        np.linalg.solve(spd, b),
        np.linalg.solve(spd, bv),
        np.linalg.solve(a, b),
        np.linalg.solve(a.T, bv),
        scipy.linalg.solve_triangular(a, b),
    ]
    for got, ref in zip(outs, refs):
        np.testing.assert_allclose(got, ref, rtol=1e-9)


def test_lstsq_and_tensorsolve():
    X, Y, T, M = lt.dmatrix("X"), lt.dmatrix("Y"), lt.tensor4("T"), lt.dmatrix("M")
    x, y = RNG.normal(size=(6, 3)), RNG.normal(size=(6, 2))
    t = np.eye(24).reshape(6, 4, 2, 12) + 0.01 * RNG.normal(size=(6, 4, 2, 12))
    m = RNG.normal(size=(6, 4))
    sol, res, rank, s, ts = run([*lstsq(X, Y, -1.0), tensorsolve(T, M)], {X: x, Y: y, T: t, M: m})
    for got, ref in zip((sol, res, rank, s), np.linalg.lstsq(x, y, rcond=-1)):
        np.testing.assert_allclose(got, ref, rtol=1e-9)
    assert rank.dtype == np.int32
    np.testing.assert_allclose(ts, np.linalg.tensorsolve(t, m), rtol=1e-8)


def test_solver_props_and_errors():
    assert SolveTriangular(trans="C", b_ndim=1) == SolveTriangular(trans=2, b_ndim=1)
    with pytest.raises(ValueError, match="trans"):
        SolveTriangular(trans="X", b_ndim=1)
    with pytest.raises(TypeError, match="pair"):
        cho_solve(lt.dmatrix(), lt.dvector())
    with pytest.raises(np.linalg.LinAlgError, match="2-d"):
        lstsq(lt.dvector(), lt.dvector(), 1.0)
    assert solve_triangular(lt.dtensor3(), lt.dmatrix(), b_ndim=1).type.ndim == 2


def test_structured_solver_gradients():
    a, b = RNG.normal(size=(3, 3)) + 3 * np.eye(3), RNG.normal(size=(3, 2))
    rng = np.random.default_rng(8)
    fc = "FAST_COMPILE"
    verify_grad(lambda x, y: solve_triangular(x, y, lower=True), [a, b], rng=rng, mode=fc)
    verify_grad(lambda x, y: solve_triangular(x, y, trans=1, unit_diagonal=True), [a, b], rng=rng, mode=fc)
    c = np.linalg.cholesky(_spd(3))
    verify_grad(lambda x, y: cho_solve((x, True), y), [c, b], rng=rng, mode=fc)
    verify_grad(lambda x, y: cho_solve((x, False), y), [c.T, b[:, 0]], rng=rng, mode=fc)
    verify_grad(lambda x, y: lu_solve(lu_factor(x), y), [a, b], rng=rng, mode=fc)
    verify_grad(lambda x, y: lstsq(x, y, -1.0)[0], [RNG.normal(size=(5, 3)), RNG.normal(size=5)], rng=rng, mode=fc)
    verify_grad(lambda x: tensorsolve(x, np.ones((2, 2))), [np.eye(4).reshape(2, 2, 2, 2) + 0.1], rng=rng, mode=fc)


def _layouts(m):
    """``m`` in C order, in Fortran order and as a strided view."""
    big = np.zeros((m.shape[0] * 2, m.shape[1] * 2), dtype=m.dtype)
    big[::2, ::2] = m
    return {"C": np.ascontiguousarray(m), "F": np.asfortranarray(m), "strided": big[::2, ::2]}


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
@pytest.mark.parametrize("trans", [0, 1, 2])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
def test_triangular_and_cholesky_solves_read_every_layout(layout, trans, lower, dtype):
    """The fast path reads a C- or F-ordered factor where it lies (LAPACK sees the transpose of
    a C array) and copies only a strided one: every layout gives SciPy's answer."""
    n = 5
    rng = np.random.default_rng(3)
    m = rng.normal(size=(n, n)) + n * np.eye(n)
    if dtype.startswith("complex"):
        m = m + 1j * rng.normal(size=(n, n))
    m = m.astype(dtype)
    # the triangle that is not read holds garbage
    tri = np.tril(m) if lower else np.triu(m)
    a = (tri + (np.triu(m, 1) if lower else np.tril(m, -1)) * 7).astype(dtype)
    bv = rng.normal(size=(n, 2)).astype(dtype)
    A, B = lt.matrix("A", dtype=dtype), lt.matrix("B", dtype=dtype)
    rtol = 1e-4 if dtype == "float32" else 1e-10
    out = run(solve_triangular(A, B, lower=lower, trans=trans), {A: _layouts(a)[layout], B: bv})
    np.testing.assert_allclose(out, scipy.linalg.solve_triangular(a, bv, lower=lower, trans=trans), rtol=rtol)
    if trans == 0:
        c = tri
        out = run(cho_solve((A, lower), B), {A: _layouts(a)[layout], B: bv})
        np.testing.assert_allclose(out, scipy.linalg.cho_solve((c, lower), bv), rtol=rtol)
