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


def _awkward_floats(rng, shape, dtype):
    """Normals with ties, signed zeros, infinities and NaNs of both signs (long enough for radix sort)."""
    X = rng.standard_normal(shape).astype(dtype)
    flat = X.reshape(-1)
    n = flat.size
    for value, count in ((0.0, n // 5), (-0.0, n // 7), (np.nan, n // 9), (-np.nan, 3), (np.inf, 2), (-np.inf, 2),
                         (1.5, n // 11)):
        flat[rng.integers(0, n, count)] = value
    return X


def _bits(a):
    return a.view(f"u{a.itemsize}") if a.dtype.kind == "f" else a


@pytest.mark.parametrize("dtype", ["float64", pytest.param("float32", marks=pytest.mark.slow)])
def test_long_rows_match_numpy_bit_for_bit(dtype):
    """Rows past the radix threshold: NumPy's stable order of -0.0/0.0, NaNs last with their payloads."""
    x = lt.tensor("x", dtype=dtype, shape=(None, None))
    X = _awkward_floats(np.random.default_rng(1), (3, 4000), dtype)
    outs = [sort(x, stable=True), sort(x.T, axis=0, kind="mergesort"), sort(x), argsort(x),
            argsort(x.T, axis=0, stable=True)]
    got = run(outs, {x: X})
    np.testing.assert_array_equal(_bits(got[0]), _bits(np.sort(X, kind="stable")))
    np.testing.assert_array_equal(_bits(got[1]), _bits(np.sort(X.T, axis=0, kind="stable")))
    np.testing.assert_array_equal(got[2], np.sort(X))  # quicksort: any order of equal values
    # argsort's default kind may order equal values either way: a sorting permutation.
    np.testing.assert_array_equal(np.sort(got[3], axis=1), np.broadcast_to(np.arange(X.shape[1]), X.shape))
    np.testing.assert_array_equal(np.take_along_axis(X, got[3], 1), np.sort(X))
    np.testing.assert_array_equal(got[4], np.argsort(X.T, axis=0, kind="stable"))


@pytest.mark.parametrize("dtype", ["int64", pytest.param("int8", marks=pytest.mark.slow),
                                   pytest.param("uint16", marks=pytest.mark.slow),
                                   pytest.param("bool", marks=pytest.mark.slow)])
def test_long_integer_rows(dtype):
    x = lt.tensor("x", dtype=dtype, shape=(None,))
    rng = np.random.default_rng(2)
    if dtype == "bool":
        X = rng.integers(0, 2, 70_000) > 0
    else:
        info = np.iinfo(dtype)
        X = rng.integers(max(info.min, -(10**15)), min(info.max, 10**15), 70_000, endpoint=True).astype(dtype)
    got = run([sort(x), argsort(x, stable=True), argsort(x[:3000], stable=True)], {x: X})
    np.testing.assert_array_equal(got[0], np.sort(X))
    np.testing.assert_array_equal(got[1], np.argsort(X, kind="stable"))
    np.testing.assert_array_equal(got[2], np.argsort(X[:3000], kind="stable"))
    assert got[0].dtype == X.dtype
