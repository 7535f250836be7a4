"""How facts travel through ops: transpose, products, element-wise math, eye/alloc, linalg."""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.assumptions import (
    DIAGONAL,
    LOWER_TRIANGULAR,
    ORTHOGONAL,
    PERMUTATION,
    POSITIVE_DEFINITE,
    SELECTION,
    SYMMETRIC,
    UPPER_TRIANGULAR,
    AssumptionFeature,
    FactState,
    assume,
    assumption_tags,
)
from lucent.graph.fg import FunctionGraph
from lucent.tensor.linalg import cholesky, inv


def _get(var, key):
    fgraph = FunctionGraph(outputs=[var], clone=False)
    feature = AssumptionFeature()
    fgraph.attach_feature(feature)
    return feature.get(var, key)


X = lt.matrix("x", shape=(3, 3))


@pytest.mark.parametrize("key", [SYMMETRIC, POSITIVE_DEFINITE, ORTHOGONAL, DIAGONAL])
def test_transpose_and_batch_views_keep_symmetric_facts(key):
    y = assume(X, **{key.name: True})
    assert _get(y.T, key) is FactState.TRUE
    assert _get(y[None, :, :], key) is FactState.TRUE
    assert _get(y[:, None], key) is FactState.UNKNOWN
    assert _get(y[1:], key) is FactState.UNKNOWN


def test_transpose_swaps_triangles():
    low = assume(X, lower_triangular=True)
    assert _get(low.T, UPPER_TRIANGULAR) is FactState.TRUE
    assert _get(low.T, LOWER_TRIANGULAR) is FactState.UNKNOWN
    assert _get(cholesky(X), LOWER_TRIANGULAR) is FactState.TRUE
    assert _get(cholesky(X, lower=False), UPPER_TRIANGULAR) is FactState.TRUE


def test_products():
    q = assume(X, orthogonal=True)
    assert _get(q @ q, ORTHOGONAL) is FactState.TRUE
    assert _get(lt.dot(q, q.T), DIAGONAL) is FactState.TRUE
    m = lt.matrix("m", shape=(4, 3))
    s = assume(X, positive_definite=True)
    assert _get(m @ s @ m.T, POSITIVE_DEFINITE) is FactState.TRUE
    assert _get(lt.dot(m, m.T), POSITIVE_DEFINITE) is FactState.TRUE
    a = assume(X, symmetric=True)
    assert _get(a @ a, SYMMETRIC) is FactState.TRUE
    assert _get(a @ assume(lt.matrix("b", shape=(3, 3)), symmetric=True), SYMMETRIC) is FactState.UNKNOWN


def test_elementwise_zero_patterns():
    d = assume(X, diagonal=True)
    y = lt.matrix("y", shape=(3, 3))
    assert _get(d * y, DIAGONAL) is FactState.TRUE
    assert _get(d + y, DIAGONAL) is FactState.UNKNOWN
    assert _get(d + d, DIAGONAL) is FactState.TRUE
    assert _get(d + 1, DIAGONAL) is FactState.UNKNOWN
    assert _get(d / 2, DIAGONAL) is FactState.TRUE
    assert _get(-lt.abs(d), DIAGONAL) is FactState.TRUE
    assert _get(lt.exp(d), DIAGONAL) is FactState.UNKNOWN
    assert _get(lt.exp(d), SYMMETRIC) is FactState.TRUE
    pd = assume(X, positive_definite=True)
    assert _get(pd + pd, POSITIVE_DEFINITE) is FactState.TRUE
    assert _get(pd * 2.0, POSITIVE_DEFINITE) is FactState.TRUE
    assert _get(pd * -2.0, POSITIVE_DEFINITE) is FactState.UNKNOWN


def test_eye_alloc_and_constants():
    assert _get(lt.eye(3), PERMUTATION) is FactState.TRUE
    assert _get(lt.eye(3, 3, 1), DIAGONAL) is FactState.FALSE
    assert _get(lt.eye(3, 3, 1), UPPER_TRIANGULAR) is FactState.TRUE
    assert _get(lt.eye(3, 3, 5), DIAGONAL) is FactState.TRUE
    assert _get(lt.eye(2, 3), ORTHOGONAL) is FactState.FALSE
    assert _get(lt.alloc(0.0, 3, 3), DIAGONAL) is FactState.TRUE
    assert _get(lt.alloc(2.0, 3, 3), DIAGONAL) is FactState.FALSE
    assert _get(lt.alloc(2.0, 3, 3), SYMMETRIC) is FactState.TRUE
    assert _get(lt.constant(np.diag([1.0, 2.0])), DIAGONAL) is FactState.TRUE
    assert _get(lt.constant(np.ones((2, 2))), DIAGONAL) is FactState.FALSE


def test_inverse_keeps_structure():
    for key in (DIAGONAL, SYMMETRIC, POSITIVE_DEFINITE, ORTHOGONAL, LOWER_TRIANGULAR):
        assert _get(inv(assume(X, **{key.name: True})), key) is FactState.TRUE


def test_tags_prune_implied_facts():
    tags = assumption_tags([inv(assume(X, diagonal=True, orthogonal=True))])
    assert sorted(tags.values()) == ["{diag, orth}", "{diag, orth}"]
    assert list(assumption_tags([assume(X, positive_definite=True)]).values()) == ["{pd}"]
    assert list(assumption_tags([assume(X, symmetric=False)]).values()) == ["{!sym}"]
    assert assumption_tags([X]) == {}


def test_selection_and_permutation():
    perm = np.eye(3)[[2, 0, 1]]
    assert _get(lt.constant(perm), PERMUTATION) is FactState.TRUE
    assert _get(lt.constant(perm), ORTHOGONAL) is FactState.TRUE
    assert _get(lt.constant(np.eye(3)[:, [0, 0, 1]]), PERMUTATION) is FactState.FALSE
    assert _get(lt.constant(np.eye(3)[:, [0, 0, 1]]), SELECTION) is FactState.TRUE
    assert _get(lt.constant(np.full((2, 2), 0.5)), SELECTION) is FactState.FALSE
    assert _get(lt.eye(4, 2), SELECTION) is FactState.TRUE
    assert _get(lt.eye(2, 4), SELECTION) is FactState.FALSE
    assert _get(lt.eye(4)[:, 1:3], SELECTION) is FactState.TRUE
    assert _get(lt.eye(4)[1:3], SELECTION) is FactState.UNKNOWN
    assert _get(lt.eye(4)[:, lt.lvector("i")], SELECTION) is FactState.TRUE
    assert _get(lt.eye(4)[lt.lvector("i")], SELECTION) is FactState.UNKNOWN


def test_writes_into_matrices():
    d = assume(X, diagonal=True)
    i, j = lt.lvector("i"), lt.lscalar("j")
    assert _get(d[i, i].set(1.0), DIAGONAL) is FactState.TRUE
    assert _get(d[j, j].inc(1.0), DIAGONAL) is FactState.TRUE
    assert _get(d[i, 0].set(1.0), DIAGONAL) is FactState.UNKNOWN
    t = assume(lt.tensor3("t"), symmetric=True)
    v = assume(lt.tensor3("v"), symmetric=True)
    assert _get(t[:2].set(v), SYMMETRIC) is FactState.TRUE
    assert _get(t[:2].inc(v), SYMMETRIC) is FactState.TRUE
    assert _get(t[:2].set(lt.tensor3("w")), SYMMETRIC) is FactState.UNKNOWN
    assert _get(t[:, :1].set(v), SYMMETRIC) is FactState.UNKNOWN
    q = assume(lt.tensor3("q"), orthogonal=True)
    assert _get(q[:2].inc(assume(lt.tensor3("r"), orthogonal=True)), ORTHOGONAL) is FactState.UNKNOWN
