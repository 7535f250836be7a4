"""``lucent.tensor.selection``: nonzero, where, choose, permutations, take_along_axis, ix_."""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.tensor.basic import Nonzero
from tests.helpers import run


def test_selection_matches_numpy():
    x = lt.dmatrix("x")
    p = lt.lmatrix("p")
    a = lt.lvector("a")
    X = np.array([[0.0, 2.0, 0.0], [3.0, 0.0, 1.0]])
    P = np.array([[2, 0, 1], [1, 2, 0]])
    A = np.array([1, 0, 2])
    outs = [*lt.nonzero(x.T), lt.nonzero(x, return_matrix=True), lt.flatnonzero(x), lt.nonzero_values(x),
            lt.where(x)[1], lt.where(lt.gt(x, 1), x, -x), lt.choose(a, [x[0], x[1], x[0] * 10]),
            lt.choose(a, [x[0], x[1]], mode="clip"), lt.choose(a[:, None], x, mode="wrap"),
            lt.permute_row_elements(x, p), lt.permute_row_elements(x, p[0], inverse=True),
            lt.permute_row_elements(x[0], p), lt.inverse_permutation(p),
            lt.take_along_axis(x, p[:, :2], axis=1), lt.take_along_axis(x.T, p.T[:2], axis=0),
            x[lt.ix_(a[:2], [True, False, True])]]
    got = run(outs, {x: X, p: P, a: A})
    expected = [*np.nonzero(X.T), np.array(np.nonzero(X)), np.flatnonzero(X), X[X != 0], np.where(X)[1],
                np.where(X > 1, X, -X), np.choose(A, [X[0], X[1], X[0] * 10]), np.choose(A, [X[0], X[1]], mode="clip"),
                np.choose(A[:, None], X, mode="wrap"), np.take_along_axis(X, P, 1),
                None,  # the inverse permutation, filled in below
                X[0][P], np.argsort(P, axis=1), np.take_along_axis(X, P[:, :2], 1),
                np.take_along_axis(X.T, P.T[:2], 0), X[np.ix_(A[:2], [True, False, True])]]
    inv = np.empty_like(X)
    for r in range(2):
        inv[r, P[0]] = X[r]
    expected[11] = inv
    for i, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_array_equal(g, e, err_msg=f"output {i}")


def test_selection_errors():
    x = lt.dmatrix("x")
    a = lt.lvector("a")
    with pytest.raises(ValueError, match="Nonzero only supports non-scalar"):
        Nonzero()(lt.dscalar())
    with pytest.raises(TypeError, match="int"):
        lt.choose(x, [x, x])
    with pytest.raises(ValueError, match="neither"):
        lt.where(x, 1)
    with pytest.raises(ValueError, match="invalid entry"):
        run(lt.choose(a, [x[0], x[1]]), {a: np.array([0, 2, 1]), x: np.zeros((2, 3))})
