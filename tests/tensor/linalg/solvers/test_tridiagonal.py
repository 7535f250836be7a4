"""Tridiagonal LU factorisation and solve against LAPACK through SciPy, on both paths."""

import numpy as np
import pytest
import scipy.linalg

import lucent.tensor as lt
from lucent.tensor.linalg import (
    LUFactorTridiagonal,
    SolveLUFactorTridiagonal,
    tridiagonal_lu_factor,
    tridiagonal_lu_solve,
)
from tests.helpers import run

RNG = np.random.default_rng(41)


def _tridiagonal(a):
    return np.triu(np.tril(a, 1), -1)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_factor_and_solve(dtype):
    tol = 1e-9 if dtype == "float64" else 1e-3
    x = lt.tensor("x", dtype=dtype, shape=(None, None, None))
    bm = lt.tensor("bm", dtype=dtype, shape=(None, None, None))
    bv = lt.vector("bv", dtype=dtype)
    a = RNG.normal(size=(2, 6, 6)).astype(dtype)
    b = RNG.normal(size=(2, 6, 3)).astype(dtype)
    v = RNG.normal(size=6).astype(dtype)
    factors = tridiagonal_lu_factor(x)
    x_mat = tridiagonal_lu_solve(factors, bm, b_ndim=2)
    x_t = tridiagonal_lu_solve(factors, bm, b_ndim=2, transposed=True)
    x_vec = tridiagonal_lu_solve(factors, bv, b_ndim=1)
    got = run([*factors, x_mat, x_t, x_vec], {x: a, bm: b, bv: v})
    gttrf = scipy.linalg.get_lapack_funcs("gttrf", dtype=dtype)
    for k in range(2):
        ref = gttrf(np.diagonal(a[k], -1), np.diagonal(a[k]), np.diagonal(a[k], 1))[:5]
        for g, e in zip(got[:5], ref):
            np.testing.assert_allclose(g[k], e, rtol=tol, atol=tol)
        tri = _tridiagonal(a[k]).astype("float64")
        np.testing.assert_allclose(got[5][k], np.linalg.solve(tri, b[k]), rtol=tol, atol=tol)
        np.testing.assert_allclose(got[6][k], np.linalg.solve(tri.T, b[k]), rtol=tol, atol=tol)
        np.testing.assert_allclose(got[7][k], np.linalg.solve(tri, v), rtol=tol, atol=tol)
    assert got[4].dtype == "int32" and got[5].dtype == dtype


def test_static_shapes_and_errors():
    dl, d, du = lt.dvector(), lt.tensor(dtype="float64", shape=(5,)), lt.dvector()
    outs = LUFactorTridiagonal()(dl, d, du)
    assert [o.type.shape for o in outs] == [(4,), (5,), (4,), (3,), (5,)]
    with pytest.raises(ValueError, match="vectors"):
        LUFactorTridiagonal().make_node(lt.dmatrix(), d, du)
    with pytest.raises(ValueError, match="b_ndim"):
        SolveLUFactorTridiagonal(b_ndim=3, transposed=False)
    with pytest.raises(ValueError, match="b_ndim=1"):
        SolveLUFactorTridiagonal(b_ndim=1, transposed=False).make_node(*outs, lt.dmatrix())
    assert LUFactorTridiagonal().inplace_on_inputs([1]).destroy_map == {1: [1]}
    op = SolveLUFactorTridiagonal(b_ndim=2, transposed=True).inplace_on_inputs([5])
    assert op.destroy_map == {0: [5]} and op.transposed
    f_bad = lt.dvector("f_bad")
    with pytest.raises(ValueError, match="len"):
        run(LUFactorTridiagonal()(f_bad, lt.as_tensor_variable(np.ones(3)), f_bad)[0], {f_bad: np.ones(5)})


def test_one_by_one_system():
    x, b = lt.dmatrix("x"), lt.dvector("b")
    got = run(tridiagonal_lu_solve(tridiagonal_lu_factor(x), b, b_ndim=1), {x: np.array([[4.0]]), b: np.array([2.0])})
    np.testing.assert_allclose(got, [0.5])
