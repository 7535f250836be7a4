"""``lucent.tensor.sort``: sort / argsort against NumPy on both paths."""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.gradient import verify_grad
from lucent.tensor.sort import ArgSortOp, SortOp, argsort, sort
from tests.helpers import run

DTYPES = ["float64", pytest.param("float32", marks=pytest.mark.slow), pytest.param("int8", marks=pytest.mark.slow),
          pytest.param("bool", marks=pytest.mark.slow)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_and_argsort_match_numpy(dtype):
    x = lt.tensor("x", dtype=dtype, shape=(None, None, None))
    ax = lt.lscalar("ax")
    rng = np.random.default_rng(0)
    X = rng.permutation(24).reshape(2, 3, 4).astype(dtype) if dtype != "bool" else rng.integers(0, 2, (2, 3, 4)) > 0
    xt = x.transpose(2, 0, 1)  # non-contiguous
    outs = [sort(x), sort(xt, axis=0), sort(x, axis=None), sort(x, axis=ax), argsort(x, axis=1, stable=True),
            argsort(xt, axis=-1, kind="mergesort"), argsort(x, axis=None, kind="stable"), argsort(x, axis=ax, stable=True)]
    got = run(outs, {x: X, ax: -2})
    Xt = X.transpose(2, 0, 1)
    expected = [np.sort(X), np.sort(Xt, 0), np.sort(X, None), np.sort(X, -2), np.argsort(X, 1, stable=True),
                np.argsort(Xt, -1, kind="mergesort"), np.argsort(X, None, kind="stable"), np.argsort(X, -2, stable=True)]
    for i, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_array_equal(g, e, err_msg=f"output {i}")
        assert g.dtype == outs[i].type.dtype


def test_quicksort_without_ties_and_empty_and_nan():
    v = lt.dvector("v")
    V = np.array([3.0, np.nan, -1.0, 2.0])
    got = run([sort(v), argsort(v), sort(v[:0]), argsort(v[:0])], {v: V})
    np.testing.assert_array_equal(got[0], np.sort(V))
    np.testing.assert_array_equal(got[1], np.argsort(V))
    assert got[2].shape == (0,) and got[3].shape == (0,) and got[3].dtype == np.int64


def test_arguments_and_types():
    x = lt.tensor("x", shape=(2, 3))
    assert isinstance(sort(x).owner.op, SortOp) and sort(x).owner.op.kind == "quicksort"
    assert argsort(x, stable=True).owner.op == ArgSortOp("stable")
    assert argsort(x).type.shape == (2, 3) and argsort(x).type.dtype == "int64"
    with pytest.raises(ValueError, match="kind must be one of"):
        sort(x, kind="bogo")
    with pytest.raises(ValueError, match="cannot be set at the same time"):
        sort(x, kind="stable", stable=True)
    with pytest.raises(ValueError, match="order"):
        argsort(x, order="f")
    with pytest.raises(np.exceptions.AxisError):
        sort(x, axis=2)
    with pytest.raises(ValueError, match="integer dtype"):
        SortOp("quicksort")(x, 1.0)


@pytest.mark.slow
def test_sort_gradient():
    rng = np.random.default_rng(2)
    verify_grad(lambda a: sort(a, axis=0), [rng.normal(size=(3, 2))], rng=rng)
    verify_grad(lambda a: sort(a, axis=None), [rng.normal(size=(2, 3))], rng=rng)
