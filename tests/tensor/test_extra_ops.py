"""``lucent.tensor.extra_ops`` against NumPy, on both paths."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.gradient import verify_grad
from lucent.tensor import extra_ops as eo
from tests.helpers import run

DTYPES = ["float64", pytest.param("float32", marks=pytest.mark.slow), pytest.param("int64", marks=pytest.mark.slow),
          pytest.param("bool", marks=pytest.mark.slow)]


def _data(dtype, shape=(3, 4)):
    rng = np.random.default_rng(0)
    return (rng.integers(0, 4, size=shape) * (1.5 if "float" in dtype else 1)).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_axis_ops_match_numpy(dtype):
    x = lt.tensor("x", dtype=dtype, shape=(None, None))
    X = _data(dtype)
    xt = x.T  # a non-contiguous input
    reps = np.array([2, 0, 1], dtype="int64")
    outs = [eo.cumsum(x, axis=-1), eo.cumprod(xt, axis=0), eo.cumsum(x), eo.repeat(xt, reps, axis=-1),
            eo.repeat(x, 2, axis=0), eo.repeat(x, 2), eo.diff(x, n=2, axis=-1),
            eo.compress(np.array([True, False, True]), x, axis=0), eo.squeeze(x[:1], axis=0)]
    got = run(outs, {x: X})
    dt = np.dtype(dtype)
    expected = [np.cumsum(X, -1).astype(dt), np.cumprod(X.T, 0).astype(dt), np.cumsum(X).astype(dt),
                np.repeat(X.T, reps, axis=-1), np.repeat(X, 2, axis=0), np.repeat(X, 2),
                np.diff(X, 2, -1), np.compress([True, False, True], X, axis=0), X[0]]
    for i, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_array_equal(g, e, err_msg=f"output {i}")
        assert g.dtype == outs[i].type.dtype


def test_unique_searchsorted_bincount_and_indices():
    v = lt.lvector("v")
    m = lt.dmatrix("m")
    V = np.array([3, 1, 3, 0, 1, 1])
    M = np.array([[1.0, 2.0], [0.0, 5.0], [1.0, 2.0]])
    rows, cols = eo.unravel_index(v, (2, 3), order="F")
    outs = [*eo.unique(v, return_index=True, return_inverse=True, return_counts=True),
            *eo.unique(m, return_inverse=True, axis=-2), eo.unique(m),
            eo.searchsorted(lt.sort(m.ravel()), v, side="right"),
            eo.searchsorted(m.ravel(), m.T, sorter=lt.argsort(m.ravel(), stable=True)),
            eo.bincount(v), eo.bincount(v, weights=lt.cast(v, "float64") / 2, minlength=6), rows, cols,
            eo.ravel_multi_index((rows, cols), (2, 3), order="F"), eo.ravel_multi_index((v, v), (2, 2), mode="wrap"),
            eo.ravel_multi_index((v, v), (2, 2), mode="clip"), eo.to_one_hot(v, 4, dtype="int8")]
    got = run(outs, {v: V, m: M})
    flat = M.ravel()
    expected = [*np.unique(V, return_index=True, return_inverse=True, return_counts=True),
                *np.unique(M, return_inverse=True, axis=0), np.unique(M),
                np.searchsorted(np.sort(flat), V, side="right"),
                np.searchsorted(flat, M.T, sorter=np.argsort(flat, stable=True)),
                np.bincount(V), np.bincount(V, V / 2, minlength=6), *np.unravel_index(V, (2, 3), order="F"),
                V, np.ravel_multi_index((V, V), (2, 2), mode="wrap"),
                np.ravel_multi_index((V, V), (2, 2), mode="clip"), np.eye(4, dtype="int8")[V]]
    for i, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_array_equal(g, np.ravel(e) if i in (2, 5) else e, err_msg=f"output {i}")



@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float32", "float64"), ("int64", "float32"), ("int32", "int32")])
def test_searchsorted_sides_ties_nan_and_lengths(dtypes):
    """Both sides with ties, NaN keys and entries (NumPy's order), 0-d and empty keys,
    and a number of keys that is not a multiple of the kernel's group of eight."""
    a_dtype, k_dtype = dtypes
    a, k, k0 = lt.vector("a", dtype=a_dtype), lt.vector("k", dtype=k_dtype), lt.scalar("k0", dtype=k_dtype)
    rng = np.random.default_rng(8)
    A = np.sort(rng.integers(-5, 6, size=37)).astype(a_dtype)
    K = rng.integers(-7, 8, size=29).astype(k_dtype)
    if np.dtype(a_dtype).kind == "f":
        A = np.sort(np.concatenate([A, [np.nan, np.nan]]).astype(a_dtype))
    if np.dtype(k_dtype).kind == "f":
        K[[0, 5]] = [np.nan, np.inf]
    outs = [eo.searchsorted(a, k), eo.searchsorted(a, k, side="right"), eo.searchsorted(a, k0, side="right"),
            eo.searchsorted(a, k[:0]), eo.searchsorted(a[:0], k), eo.searchsorted(a, k[::-3])]
    got = run(outs, {a: A, k: K, k0: K[3]})
    expected = [np.searchsorted(A, K), np.searchsorted(A, K, side="right"), np.searchsorted(A, K[3], side="right"),
                np.searchsorted(A, K[:0]), np.searchsorted(A[:0], K), np.searchsorted(A, K[::-3])]
    for i, (g, e) in enumerate(zip(got, expected)):
        assert g.dtype == np.int64 and g.shape == np.shape(e), f"output {i}"
        np.testing.assert_array_equal(g, e, err_msg=f"output {i}")


def test_diagonal_filling_bartlett_and_empty_inputs():
    m = lt.dmatrix("m")
    n = lt.lscalar("n")
    M = np.arange(12.0).reshape(4, 3)
    e = lt.dvector("e")

    def filled(a, k):
        a = a.copy()
        rows = np.arange(max(0, -k), min(a.shape[0], a.shape[1] - k))
        a[rows, rows + k] = -1
        return a

    outs = [eo.fill_diagonal(m, -1.0), eo.fill_diagonal(m.T, -1), eo.fill_diagonal_offset(m, -1.0, 1),
            eo.fill_diagonal_offset(m, -1.0, -2), eo.bartlett(n), eo.bartlett(n - 5), eo.cumsum(e), eo.diff(e),
            eo.unique(e), eo.repeat(e, 3), eo.cpu_contiguous(m.T)]
    got = run(outs, {m: M, n: 5, e: np.zeros(0)})
    expected = [filled(M, 0), filled(M.T, 0), filled(M, 1), filled(M, -2), np.bartlett(5), np.bartlett(0),
                np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0), M.T]
    for i, (g, ex) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(g, ex, err_msg=f"output {i}")
    assert got[-1].flags.c_contiguous


def test_broadcasting_and_spacing_helpers():
    a = lt.dvector("a")
    b = lt.dcol("b")
    A = np.array([1.0, 2.0, 4.0])
    B = np.array([[10.0], [20.0]])
    x, y = eo.broadcast_arrays(a, b)
    shape = eo.broadcast_shape(a, b)
    outs = [x, y, lt.stack(shape), eo.broadcast_to(a, (2, 3)), eo.concat_with_broadcast([b, lt.ones((1, 1))]),
            eo.linspace(a, 10.0, 4, axis=-1), eo.linspace(0.0, 1.0, 5, endpoint=False, retstep=True)[0],
            eo.logspace(a, 3.0, 3, base=2.0), eo.geomspace(a, 100.0, 4, axis=1), eo.linspace(2.0, 3.0, 1)]
    got = run(outs, {a: A, b: B})
    expected = [*np.broadcast_arrays(A, B), [2, 3], np.broadcast_to(A, (2, 3)), np.concatenate([B, np.ones((1, 1))]),
                np.linspace(A, 10.0, 4, axis=-1), np.linspace(0, 1, 5, endpoint=False),
                np.logspace(A, 3.0, 3, base=2.0), np.geomspace(A, 100.0, 4, axis=1), np.linspace(2.0, 3.0, 1)]
    for i, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(g, e, rtol=1e-6, err_msg=f"output {i}")
    with pytest.raises(ValueError, match="Could not broadcast"):
        eo.broadcast_shape(lt.tensor(shape=(2,)), lt.tensor(shape=(3,)))
    with pytest.raises(AssertionError, match="Could not broadcast"):
        run(lt.stack(eo.broadcast_shape(b[:, 0], a)), {a: A, b: B})


def test_bad_input_raises_like_numpy_on_both_paths():
    v = lt.lvector("v")
    r = lt.lvector("r")
    with pytest.raises(ValueError, match="negative"):
        run(eo.repeat(lt.arange(3), r), {r: np.array([1, -1, 2])})
    with pytest.raises(ValueError, match="negative"):
        run(eo.repeat(lt.arange(3), r[0]), {r: np.array([-2])})
    with pytest.raises(ValueError, match="UnravelIndex: index 6 is out of bounds"):
        run(eo.unravel_index(v, (2, 3)), {v: np.array([1, 6])})
    with pytest.raises(ValueError, match="bincount"):
        run(eo.bincount(v), {v: np.array([1, -1])})
    with pytest.raises(AssertionError, match="negative"):
        run(eo.bincount(v, assert_nonneg=True), {v: np.array([-1])})
    with pytest.raises(ValueError, match="RavelMultiIndex"):
        run(eo.ravel_multi_index((v, v), (2, 2)), {v: np.array([0, 5])})


def test_op_construction_errors_and_static_shapes():
    x = lt.tensor("x", shape=(2, 3))
    with pytest.raises(ValueError, match="non-negative"):
        eo.CumOp(-1)
    with pytest.raises(ValueError, match="Unknown mode"):
        eo.CumOp(0, mode="max")
    with pytest.raises(np.exceptions.AxisError):
        eo.cumsum(x, axis=2)
    with pytest.raises(ValueError, match="side"):
        eo.SearchsortedOp("middle")
    with pytest.raises(TypeError, match="integer"):
        eo.repeat(x, 1.5)
    with pytest.raises(TypeError, match="dims must be a 1D"):
        eo.UnravelIndex()(lt.lvector(), lt.lmatrix())
    assert eo.cumsum(x, axis=-1).type.shape == (2, 3)
    assert eo.searchsorted(lt.dvector(), x).type.shape == (2, 3)
    assert eo.searchsorted(lt.dvector(), x).type.dtype == "int64"
    assert eo.bartlett(4).type.shape == (4,)
    assert eo.unique(x, axis=1).type.shape == (2, None)
    assert len(eo.unravel_index(lt.lvector(), (2, 3, 4))) == 3


@pytest.mark.slow
def test_gradients():
    rng = np.random.default_rng(1)
    verify_grad(lambda a: eo.cumsum(a, axis=0), [rng.normal(size=(3, 2))], rng=rng)
    verify_grad(lambda a: eo.cumprod(a, axis=-1), [rng.uniform(0.5, 2, size=(2, 3))], rng=rng)
    verify_grad(lambda a: eo.repeat(a, np.array([1, 3]), axis=1), [rng.normal(size=(2, 2))], rng=rng)
    verify_grad(lambda a: eo.fill_diagonal(a, 2.0) * a, [rng.normal(size=(3, 2))], rng=rng)
    verify_grad(lambda a, s: eo.fill_diagonal_offset(a, s, 1), [rng.normal(size=(3, 3)), np.array(1.5)], rng=rng)
    verify_grad(lambda a: eo.diff(a, n=2), [rng.normal(size=(5,))], rng=rng)


def test_repeat_static_lengths_uint64_and_squeeze_of_a_scalar():
    x = lt.tensor("x", shape=(None, 1, 3))
    assert eo.repeat(x, 2, axis=1).type.shape == (None, 2, 3)
    assert eo.repeat(x, 2, axis=2).type.shape == (None, 1, 6)
    assert eo.repeat(x, [2, 2, 2], axis=2).type.shape == (None, 1, 6)
    assert eo.repeat(x, [1, 2, 4], axis=2).type.shape == (None, 1, None)
    with pytest.raises(TypeError, match="uint64"):
        eo.repeat(x, lt.scalar(dtype="uint64"), axis=0)
    s = lt.dscalar("s")
    assert eo.squeeze(s, axis=(0,)) is s
    with pytest.raises(np.exceptions.AxisError, match=r"axis \(1,\) is out of bounds for array of dimension 0"):
        eo.squeeze(s, axis=1)


def test_searchsorted_answers_as_numpy_on_unsorted_arrays_and_many_keys():
    """An unsorted array has no defined answer, but the fast path gives NumPy's (DebugMode
    compares the two); many keys into a sorted array take the lock-step search."""
    a, k = lt.dvector("a"), lt.dvector("k")
    rng = np.random.default_rng(9)
    unsorted = rng.integers(0, 30, size=50).astype("float64")
    unsorted[7] = np.nan
    few, many = 30 * rng.random(40), 30 * rng.random(3000)
    sorted_ = np.sort(rng.integers(0, 30, size=500).astype("float64"))
    outs = [eo.searchsorted(a, k, side=side) for side in ("left", "right")]
    for array, keys in [(unsorted, few), (unsorted, many), (sorted_, many), (sorted_, few)]:
        got = run(outs, {a: array, k: keys})
        for side, g in zip(("left", "right"), got):
            np.testing.assert_array_equal(g, np.searchsorted(array, keys, side=side), err_msg=side)
