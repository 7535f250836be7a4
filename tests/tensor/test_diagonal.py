"""``lucent.tensor.diagonal``: diagonals, traces and triangles."""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.gradient import verify_grad
from lucent.tensor.basic import ExtractDiag
from tests.helpers import run


def test_diagonals_and_triangles_match_numpy():
    x = lt.dmatrix("x")
    t = lt.tensor3("t", dtype="float64")
    v = lt.dvector("v")
    n = lt.lscalar("n")
    X = np.arange(12.0).reshape(3, 4) + 1
    T = np.arange(24.0).reshape(2, 3, 4)
    V = np.array([1.0, 2.0])
    outs = [lt.diagonal(x), lt.diagonal(x, 2), lt.diagonal(x.T, -1), lt.diagonal(t, 1, -1, 0), lt.trace(x, -1),
            lt.diag(v, -1), lt.diag(x, 1), lt.alloc_diag(v, 0, 0, 1), lt.tri(n, 4, 1, dtype="int8"), lt.tril(x, -1),
            lt.triu(t, 1), *lt.tril_indices(n, 1, 4), *lt.triu_indices_from(x, -1)]
    got = run(outs, {x: X, t: T, v: V, n: 3})
    expected = [np.diagonal(X), np.diagonal(X, 2), np.diagonal(X.T, -1), np.diagonal(T, 1, -1, 0), np.trace(X, -1),
                np.diag(V, -1), np.diag(X, 1), np.diag(V), np.tri(3, 4, 1, dtype="int8"), np.tril(X, -1),
                np.triu(T, 1), *np.tril_indices(3, 1, 4), *np.triu_indices_from(X, -1)]
    for i, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_array_equal(g, e, err_msg=f"output {i}")


def test_extract_diag_op():
    x = lt.tensor("x", shape=(3, 5))
    assert lt.diagonal(x, 2).type.shape == (3,)
    assert lt.diagonal(x, -2).type.shape == (1,)
    op = ExtractDiag(1, 1, 0)
    assert (op.axis1, op.axis2, op.offset) == (0, 1, -1)
    with pytest.raises(ValueError, match="2 or more"):
        ExtractDiag()(lt.dvector())
    with pytest.raises(ValueError, match="1- or 2-d"):
        lt.diag(lt.tensor3())
    with pytest.warns(FutureWarning):
        lt.extract_diag(x)


@pytest.mark.slow
def test_diagonal_gradient():
    rng = np.random.default_rng(4)
    verify_grad(lambda a: lt.diagonal(a, 1), [rng.normal(size=(3, 4))], rng=rng)
    verify_grad(lambda a: lt.trace(a), [rng.normal(size=(3, 3))], rng=rng)
