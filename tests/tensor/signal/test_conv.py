"""``lucent.tensor.signal``: 1-d and 2-d convolution against NumPy/SciPy on both paths, and gradients."""

import numpy as np
import pytest
import scipy.signal

import lucent
import lucent.tensor as lt
from lucent.gradient import verify_grad
from lucent.tensor.signal import convolve1d, convolve2d
from lucent.tensor.signal.conv import Convolve1d, Convolve2d
from tests.helpers import run


#: The fast path of the slower (compile-heavy) tests runs in ``make test-all`` only.
PY_THEN_SLOW_NUMBA = pytest.mark.parametrize(
    "lucent_mode", ["FAST_COMPILE", pytest.param("FAST_RUN", marks=pytest.mark.slow)], ids=["py", "numba"], indirect=True
)


def test_convolve1d_kernel():
    x, y, X = lt.dvector("x"), lt.dvector("y"), lt.dmatrix("X")
    rng = np.random.default_rng(0)
    a, b, A = rng.normal(size=50), rng.normal(size=7), rng.normal(size=(2, 9))
    got = run([convolve1d(x, y), convolve1d(y, x[::2], "valid"), convolve1d(X, y, "valid")], {x: a, y: b, X: A})
    np.testing.assert_allclose(got[0], np.convolve(a, b), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[1], np.convolve(b, a[::2], "valid"), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[2], [np.convolve(r, b, "valid") for r in A], rtol=1e-12, atol=1e-12)


def test_convolve1d_large_output_nan_and_inf():
    """Outputs of several megabytes (fresh, uninitialised memory) and non-finite entries."""
    x, y = lt.dvector("x"), lt.dvector("y")
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=600_000), rng.normal(size=5)
    a[[0, 7, -1]] = [np.nan, np.inf, -np.inf]
    full, valid = run([convolve1d(x, y), convolve1d(x, y, "valid")], {x: a, y: b})
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(full, np.convolve(a, b), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(valid, np.convolve(a, b, "valid"), rtol=1e-12, atol=1e-12)


@PY_THEN_SLOW_NUMBA
def test_convolve1d_modes_lengths_and_batches():
    x, y = lt.dvector("x"), lt.dvector("y")
    X, Y = lt.dmatrix("X"), lt.dmatrix("Y")
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=9), rng.normal(size=4)
    A, B = rng.normal(size=(3, 7)), rng.normal(size=(3, 3))
    outs, expected = [], []
    for mode in ("full", "valid", "same"):
        outs += [convolve1d(x, y, mode), convolve1d(y, x, mode), convolve1d(X, Y, mode)]
        expected += [scipy.signal.convolve(a, b, mode), scipy.signal.convolve(b, a, mode),
                     np.stack([scipy.signal.convolve(A[i], B[i], mode) for i in range(3)])]
    # non-contiguous inputs, a single tap, equal lengths
    outs += [convolve1d(x[::2], y[::-1]), convolve1d(x, y[:1], "valid"), convolve1d(x[:4], y, "valid")]
    expected += [np.convolve(a[::2], b[::-1]), np.convolve(a, b[:1], "valid"), np.convolve(a[:4], b, "valid")]
    got = run(outs, {x: a, y: b, X: A, Y: B})
    for i, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12, err_msg=f"output {i}")


@pytest.mark.parametrize("dtypes", [("float32", "float32"), ("int64", "float64"), ("int32", "int32")])
def test_convolve1d_dtypes(dtypes):
    x = lt.tensor("x", dtype=dtypes[0], shape=(None,))
    y = lt.tensor("y", dtype=dtypes[1], shape=(None,))
    a = np.arange(1, 8).astype(dtypes[0])
    b = np.array([1, -2, 3]).astype(dtypes[1])
    out = convolve1d(x, y, "full")
    got = run(out, {x: a, y: b})
    assert got.dtype == out.type.dtype == np.result_type(a, b)
    np.testing.assert_allclose(got, np.convolve(a, b), rtol=1e-6)


def test_convolve1d_static_shapes_and_errors():
    x = lt.tensor("x", shape=(10,))
    y = lt.tensor("y", shape=(3,))
    assert convolve1d(x, y).type.shape == (12,)
    assert convolve1d(x, y, "valid").type.shape == (8,)
    assert convolve1d(y, x, "valid").type.shape == (8,)
    with pytest.raises(ValueError, match="mode"):
        convolve1d(x, y, "circular")
    with pytest.raises(ValueError, match="ndim=1"):
        Convolve1d()(lt.dmatrix(), y, True)
    with pytest.raises(ValueError, match="boolean"):
        Convolve1d()(x, y, 1)


@PY_THEN_SLOW_NUMBA
def test_convolve1d_gradients():
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=7), rng.normal(size=3)
    for mode in ("full", "valid", "same"):
        verify_grad(lambda u, v: convolve1d(u, v, mode), [a, b], rng=rng)
        verify_grad(lambda u, v: convolve1d(u, v, mode), [b, a], rng=rng)


def test_convolve2d_kernel():
    X, K = lt.dmatrix("X"), lt.dmatrix("K")
    rng = np.random.default_rng(5)
    A, B = rng.normal(size=(5, 6)), rng.normal(size=(3, 2))
    got = run([convolve2d(X, K), convolve2d(K, X.T, "valid")], {X: A, K: B})
    np.testing.assert_allclose(got[0], scipy.signal.convolve2d(A, B), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[1], scipy.signal.convolve2d(B, A.T, "valid"), rtol=1e-12, atol=1e-12)


@PY_THEN_SLOW_NUMBA
def test_convolve2d_modes_boundaries():
    X, K = lt.dmatrix("X"), lt.dmatrix("K")
    rng = np.random.default_rng(3)
    A, B = rng.normal(size=(5, 6)), rng.normal(size=(3, 2))
    outs, expected = [], []
    for mode in ("full", "valid", "same"):
        for boundary, fill in (("fill", 0), ("fill", 0.5), ("wrap", 0), ("symm", 0)):
            outs.append(convolve2d(X, K, mode, boundary, fillvalue=fill))
            expected.append(scipy.signal.convolve2d(A, B, mode, boundary, fillvalue=fill))
    outs += [convolve2d(K, X, "valid"), convolve2d(X.T, K, "full", method="fft")]
    expected += [scipy.signal.convolve2d(B, A, "valid"), scipy.signal.convolve2d(A.T, B)]
    got = run(outs, {X: A, K: B})
    for i, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12, err_msg=f"output {i}")


@PY_THEN_SLOW_NUMBA
def test_convolve2d_gradient_and_errors():
    rng = np.random.default_rng(4)
    A, B = rng.normal(size=(4, 5)), rng.normal(size=(2, 3))
    for mode in ("full", "valid"):
        verify_grad(lambda u, v: convolve2d(u, v, mode), [A, B], rng=rng)
    with pytest.raises(ValueError, match="boundary"):
        convolve2d(A, B, boundary="reflect")
    with pytest.raises(ValueError, match="method"):
        Convolve2d(method="slow")


@pytest.mark.parametrize("mode", ["full", "valid", "same"])
def test_batched_signal_with_one_kernel_gradient(mode):
    """The kernel's gradient when the signal is batched and the kernel is not: the
    gradient's shape tests are vectorised with the kernel's batch of static length 1."""
    data, k = lt.dmatrix("data"), lt.dvector("k")
    rng = np.random.default_rng(12)
    d, kv = rng.normal(size=(10, 8)), rng.normal(size=3)
    out = convolve1d(data, k, mode)
    g = lucent.grad((out * out).sum(), k)
    got_out, got_g = run([out, g], {data: d, k: kv})
    ref = np.stack([scipy.signal.convolve(r, kv, mode) for r in d])
    np.testing.assert_allclose(got_out, ref, rtol=1e-12, atol=1e-12)
    eps = 1e-6
    num = [((np.stack([scipy.signal.convolve(r, kv + eps * e, mode) for r in d]) ** 2).sum()
            - (np.stack([scipy.signal.convolve(r, kv - eps * e, mode) for r in d]) ** 2).sum()) / (2 * eps)
           for e in np.eye(3)]
    np.testing.assert_allclose(got_g, num, rtol=1e-6)
