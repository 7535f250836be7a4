"""Multi-threaded kernels: ``config.numba__num_threads`` above 1.

Large contiguous elementwise loops and reductions run in parallel chunks;
the results must be those of one thread (elementwise, and reductions by
whole rows) or agree to rounding (a long row cut into column ranges).
"""

import time

import numba
import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.link.numba.dispatch.elemwise import ElemwiseCodegen
from lucent.link.numba.dispatch.threads import PARALLEL_MIN, kernel_threads, parallel_decorator


@pytest.fixture(autouse=True)
def _numba_dispatchers():
    """These tests look into Numba's dispatchers, which a native bundle (``native.py``) stands in for."""
    with lucent.config.change_flags(numba__native_cache=False):
        yield

two_threads = pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="Numba runs with one thread")


def _graph():
    x, y = lt.dvector("x"), lt.dvector("y")
    z = lt.dmatrix("z")
    outs = [
        lt.exp(-x * x) * lt.sin(y) + lt.log1p(lt.abs(x * y)) - lt.tanh(x) / (1 + y * y),
        lt.sum(lt.exp(x) * y),
        lt.max(lt.abs(x - y)),
        lt.sum(z * z, axis=1),
    ]
    return [x, y, z], outs


def _compile(threads, mode="FAST_RUN"):
    with lucent.config.change_flags(numba__num_threads=threads):
        inputs, outs = _graph()
        return lucent.function(inputs, outs, mode=mode)


def test_thread_count_flag():
    assert lucent.config.numba__num_threads == 1
    assert kernel_threads() == 1
    with lucent.config.change_flags(numba__num_threads=0):
        assert kernel_threads() == numba.get_num_threads()
    with lucent.config.change_flags(numba__num_threads=10_000):
        assert kernel_threads() == numba.get_num_threads()
    for bad in (-1, 1.5, "two", True):
        with pytest.raises(ValueError, match="numba__num_threads must be a non-negative integer"):
            lucent.config.numba__num_threads = bad
    assert lucent.config.numba__num_threads == 1


def test_one_thread_generates_no_parallel_code():
    x = lt.dvector("x")
    node = (lt.exp(x) + x).owner
    assert "prange" not in ElemwiseCodegen(node.op, node, threads=1).source()
    text = ElemwiseCodegen(node.op, node, threads=2).source()
    assert "numba.prange(2)" in text and f"if size >= {PARALLEL_MIN}:" in text
    assert parallel_decorator(fastmath={"contract"}).startswith("@numba.njit(fastmath={'contract'}, parallel=True")


@two_threads
@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_two_threads_match_one(mode):
    rng = np.random.default_rng(0)
    n = 3 * PARALLEL_MIN + 7
    X, Y = rng.standard_normal(n), rng.standard_normal(n)
    Z = rng.standard_normal((301, 1000))
    one = _compile(1, mode)(X, Y, Z)
    two = _compile(2, mode)(X, Y, Z)
    # Elementwise and whole-row reductions: the same operations in the same order.
    for k in (0, 2, 3):
        np.testing.assert_array_equal(two[k], one[k])
    # A full sum split into column ranges: the same up to rounding.
    np.testing.assert_allclose(two[1], one[1], rtol=1e-13)
    np.testing.assert_allclose(two[0], np.exp(-X * X) * np.sin(Y) + np.log1p(np.abs(X * Y)) - np.tanh(X) / (1 + Y * Y),
                               rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(two[1], np.sum(np.exp(X) * Y), rtol=1e-12)
    assert two[2] == np.max(np.abs(X - Y))
    np.testing.assert_allclose(two[3], (Z * Z).sum(axis=1), rtol=1e-13)


@two_threads
def test_two_threads_in_place_and_nan():
    """In-place kernels with range-checked functions (buffered blocks) and NaN in a split reduction."""
    rng = np.random.default_rng(1)
    n = 2 * PARALLEL_MIN + 3
    X = rng.standard_normal(n) * 1e6  # sin of large arguments takes the exact path
    with lucent.config.change_flags(numba__num_threads=2):
        x = lt.dvector("x")
        f = lucent.function([x], [lt.sin(x * 2.0) + 1.0, lt.max(x * 1.0)], mode="FAST_RUN")
    got = f(X)
    np.testing.assert_allclose(got[0], np.sin(X * 2.0) + 1.0, rtol=1e-15, atol=1e-15)
    X[n - 5] = np.nan
    assert np.isnan(f(X)[1])


@two_threads
def test_small_inputs_stay_on_one_thread():
    """Below the threshold a two-thread function runs the one-thread loop: no slower."""
    f1, f2 = _compile(1), _compile(2)
    rng = np.random.default_rng(2)
    args = (rng.standard_normal(500), rng.standard_normal(500), rng.standard_normal((5, 20)))
    np.testing.assert_array_equal(f2(*args)[0], f1(*args)[0])

    def best(f):
        times = []
        for _ in range(30):
            start = time.perf_counter()
            for _ in range(50):
                f(*args)
            times.append(time.perf_counter() - start)
        return min(times) / 50

    assert best(f2) < 1.5 * best(f1) + 20e-6


@two_threads
@pytest.mark.parametrize("axis", [-1, 0])
@pytest.mark.parametrize("kind", ["softmax", "log_softmax"])
def test_two_threads_share_softmax_rows(kind, axis):
    """Softmax rows are independent: with two threads each thread takes a chunk of them, and
    every row is computed exactly as on one thread (rows holding inf and NaN too)."""
    from lucent.tensor.special import log_softmax, softmax

    fn = softmax if kind == "softmax" else log_softmax
    rng = np.random.default_rng(4)
    Z = rng.standard_normal((301, PARALLEL_MIN // 300 + 1000))
    Z[5, 3] = np.inf
    Z[7, 0] = np.nan
    Z[:, 9] = -np.inf

    def compiled(threads):
        with lucent.config.change_flags(numba__num_threads=threads):
            z = lt.dmatrix("z")
            return lucent.function([z], fn(z, axis=axis), mode="FAST_RUN")

    f2 = compiled(2)
    kernel_text = "".join(
        open(k.py_func.__code__.co_filename).read() for k in _kernels(f2) if hasattr(k, "py_func")
    )
    assert "softmax_rows_parallel" in kernel_text
    np.testing.assert_array_equal(f2(Z), compiled(1)(Z))
    np.testing.assert_allclose(f2(np.nan_to_num(Z, posinf=0, neginf=0, nan=0)),
                               _reference(kind, np.nan_to_num(Z, posinf=0, neginf=0, nan=0), axis), rtol=1e-12)


def _reference(kind, z, axis):
    e = z - z.max(axis=axis, keepdims=True)
    if kind == "softmax":
        return np.exp(e) / np.exp(e).sum(axis=axis, keepdims=True)
    return e - np.log(np.exp(e).sum(axis=axis, keepdims=True))


def _kernels(f):
    program = f.maker.linker.program
    return [site.kernel for site in getattr(program.fn, "__lucent_sites__", [])]
