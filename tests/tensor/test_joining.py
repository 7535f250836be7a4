"""``lucent.tensor.joining``: split, roll, tile, stacks, atleast_Nd, matrix_transpose, empty."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.tensor.basic import AllocEmpty, Split
from tests.helpers import run


def test_joining_matches_numpy():
    x = lt.dmatrix("x")
    v = lt.dvector("v")
    s = lt.lscalar("s")
    X = np.arange(6.0).reshape(2, 3)
    V = np.array([1.0, 2.0, 3.0])
    outs = [*lt.split(x, [1, 2], n_splits=2, axis=-1), *lt.split(v, lt.stack([s, 3 - s]), n_splits=2),
            lt.roll(x, s, axis=1), lt.roll(x, -s), lt.roll(x, 7, axis=0), lt.tile(x, (2, s)), lt.tile(v, 2),
            lt.tile(x, s), lt.horizontal_stack(x, x), lt.vertical_stack(x, x[:1]), lt.atleast_2d(v),
            lt.atleast_Nd(v, n=3, left=False), lt.matrix_transpose(x), lt.empty((s, 2), dtype="int8").shape,
            lt.empty_like(x).shape]
    got = run(outs, {x: X, v: V, s: 1})
    expected = [X[:, :1], X[:, 1:], V[:1], V[1:], np.roll(X, 1, axis=1), np.roll(X, -1), np.roll(X, 7, axis=0),
                np.tile(X, (2, 1)), np.tile(V, 2), np.tile(X, 1), np.hstack([X, X]), np.vstack([X, X[:1]]),
                np.atleast_2d(V), V[:, None, None], X.T, [1, 2], [2, 3]]
    for i, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_array_equal(g, e, err_msg=f"output {i}")


def test_split_checks_sizes_on_both_paths():
    x = lt.dvector("x")
    sizes = lt.lvector("sizes")
    parts = lt.split(x, sizes, n_splits=2)
    with pytest.raises(ValueError, match="sum to 3; expected 4"):
        run(parts, {x: np.zeros(4), sizes: np.array([1, 2])})
    with pytest.raises(ValueError, match="negative"):
        run(parts, {x: np.zeros(4), sizes: np.array([-1, 5])})


def test_ops_and_errors():
    x = lt.tensor("x", shape=(4, 3))
    a, b = lt.split(x, [1, 3], n_splits=2)
    assert a.type.shape == (1, 3) and b.type.shape == (3, 3)
    assert isinstance(a.owner.op, Split) and a.owner.op.view_map == {0: [0], 1: [0]}
    assert lt.empty((2, 3)).type.shape == (2, 3) and isinstance(lt.empty(2).owner.op, AllocEmpty)
    with pytest.raises(ValueError, match="at least 2-dimensional"):
        lt.matrix_transpose(lt.dvector())
    with pytest.raises(ValueError, match="Too few"):
        lt.horizontal_stack(x)
    with pytest.raises(ValueError, match="two dimensions"):
        lt.vertical_stack(x, lt.dvector())
    with pytest.raises(ValueError, match="scalar integers"):
        lt.tile(x, (1.5,))
    with pytest.raises(TypeError, match="constant integer"):
        lt.split(x, [2, 2], n_splits=2, axis=lt.lscalar())
    v = lt.dvector("v")
    g = lucent.grad(lt.split(v, [1, 2], n_splits=2)[1].sum(), v)
    np.testing.assert_array_equal(g.eval({v: np.zeros(3)}), [0.0, 1.0, 1.0])
