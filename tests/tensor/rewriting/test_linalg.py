"""Rewrites of ``inv`` that use declared structure, checked on both paths."""

import numpy as np

import lucent
import lucent.tensor as lt
from lucent.assumptions import assume
from lucent.tensor.linalg import MatrixInverse, inv


def _ops(f):
    return [type(n.op).__name__ for n in f.maker.fgraph.apply_nodes]


def _compile(out, x):
    return lucent.function([x], out, mode="FAST_RUN")


def test_inv_of_diagonal_becomes_reciprocal():
    x = lt.dmatrix("x")
    f = _compile(inv(assume(x, diagonal=True)), x)
    assert "MatrixInverse" not in _ops(f)
    d = np.diag([2.0, -4.0, 0.5])
    np.testing.assert_allclose(f(d), np.linalg.inv(d))


def test_inv_of_orthogonal_becomes_transpose():
    x = lt.dmatrix("x")
    f = _compile(inv(assume(x, orthogonal=True)), x)
    assert "MatrixInverse" not in _ops(f)
    q, _ = np.linalg.qr(np.random.default_rng(0).normal(size=(3, 3)))
    np.testing.assert_allclose(f(q), np.linalg.inv(q), atol=1e-12)


def test_inv_of_inv_cancels_and_plain_inv_stays():
    x = lt.dmatrix("x")
    f = _compile(inv(inv(x)) + 0 * inv(x), x)
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    np.testing.assert_allclose(f(a), a)
    g = _compile(inv(x), x)
    assert any(isinstance(n.op, MatrixInverse) for n in g.maker.fgraph.apply_nodes)


def test_inv_of_eye_is_rewritten_without_assume():
    n = lt.lscalar("n")
    f = lucent.function([n], inv(lt.eye(n)), mode="FAST_RUN")
    assert "MatrixInverse" not in _ops(f)
    np.testing.assert_allclose(f(3), np.eye(3))


def test_float32_inverse_rewrite_keeps_dtype():
    x = lt.fmatrix("x")
    f = _compile(inv(assume(x, diagonal=True)), x)
    out = f(np.diag([2.0, 4.0]).astype("float32"))
    assert out.dtype == "float32"
    np.testing.assert_allclose(out, np.diag([0.5, 0.25]))


def _names(f):
    from lucent.tensor.blockwise import Blockwise

    names = []
    for n in f.maker.fgraph.apply_nodes:
        op = n.op.core_op if isinstance(n.op, Blockwise) else n.op
        names.append(type(op).__name__)
    return names


def test_inv_dot_becomes_solve():
    x, b = lt.dmatrix("x"), lt.dmatrix("b")
    a = np.random.default_rng(0).normal(size=(3, 3)) + 3 * np.eye(3)
    bv = np.random.default_rng(1).normal(size=(3, 2))
    f = lucent.function([x, b], [lt.dot(inv(x), b), lt.dot(b.T, inv(x.T))], mode="FAST_RUN")
    assert "MatrixInverse" not in _names(f) and "Solve" in _names(f)
    left, right = f(a, bv)
    np.testing.assert_allclose(left, np.linalg.solve(a, bv))
    np.testing.assert_allclose(right, bv.T @ np.linalg.inv(a.T))


def test_log_det_becomes_slogdet():
    from lucent.tensor.linalg import det, slogdet

    x = lt.dmatrix("x")
    a = np.random.default_rng(2).normal(size=(3, 3)) * 100
    sign, logabs = slogdet(x)
    f = lucent.function([x], [sign, logabs, lt.log(det(x))], mode="FAST_RUN")
    assert "SLogDet" in _names(f) and "Det" not in _names(f)
    s, l, ld = f(a)
    rs, rl = np.linalg.slogdet(a)
    np.testing.assert_allclose([s, l], [rs, rl])
    np.testing.assert_allclose(ld, np.log(np.linalg.det(a)) if rs > 0 else np.nan)
    big = np.eye(400) * 10.0  # det overflows to inf, logdet does not
    np.testing.assert_allclose(f(big)[1], 400 * np.log(10.0))


def test_det_of_triangular_and_identity():
    from lucent.tensor.linalg import cholesky, det

    x = lt.dmatrix("x")
    spd = np.array([[4.0, 1.0], [1.0, 3.0]])
    f = lucent.function([x], [det(cholesky(x)), det(lt.eye(3) * 2.0)], mode="FAST_RUN")
    assert "Det" not in _names(f)
    d_chol, d_eye = f(spd)
    np.testing.assert_allclose(d_chol, np.sqrt(np.linalg.det(spd)))
    np.testing.assert_allclose(d_eye, 8.0)


def test_solve_with_triangular_or_cholesky_factor():
    from lucent.tensor.linalg import cholesky, solve

    x, b = lt.dmatrix("x"), lt.dvector("b")
    spd = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    bv = np.array([1.0, -2.0, 0.5])
    L = cholesky(x)
    f = lucent.function([x, b], [solve(L, b), solve(L.T, b), solve(lt.dot(L, L.T), b)], mode="FAST_RUN")
    names = _names(f)
    assert "Solve" not in names and "SolveTriangular" in names and "CholeskySolve" in names
    c = np.linalg.cholesky(spd)
    lo, up, full = f(spd, bv)
    np.testing.assert_allclose(lo, np.linalg.solve(c, bv))
    np.testing.assert_allclose(up, np.linalg.solve(c.T, bv))
    np.testing.assert_allclose(full, np.linalg.solve(spd, bv))
