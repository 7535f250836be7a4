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
