"""``lucent.tensor.fft`` (real FFTs as real/imaginary pairs) and ``lucent.tensor.fourier`` on both paths."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.gradient import verify_grad
from lucent.tensor import fft
from lucent.tensor.fourier import Fourier
from lucent.tensor.fourier import fft as fourier_fft
from tests.helpers import run


#: The fast path of the slower (compile-heavy) tests runs in ``make test-all`` only.
PY_THEN_SLOW_NUMBA = pytest.mark.parametrize(
    "lucent_mode", ["FAST_COMPILE", pytest.param("FAST_RUN", marks=pytest.mark.slow)], ids=["py", "numba"], indirect=True
)


def _complex(a):
    return a[..., 0] + 1j * a[..., 1]


def test_rfft_irfft_kernels():
    x = lt.tensor3("x")
    X = np.random.default_rng(5).random((2, 6, 7))
    got = run([fft.rfft(x), fft.irfft(fft.rfft(x), is_odd=True)], {x: X})
    np.testing.assert_allclose(_complex(got[0]), np.fft.rfftn(X, axes=(1, 2)), atol=1e-12)
    np.testing.assert_allclose(got[1], X, atol=1e-12)


@PY_THEN_SLOW_NUMBA
def test_rfft_irfft_match_numpy_for_any_length():
    x = lt.tensor3("x")
    m = lt.dmatrix("m")
    rng = np.random.default_rng(0)
    # power-of-two, odd and prime lengths (radix-2 and Bluestein in the kernel)
    X = rng.random((2, 6, 7))
    M = rng.random((3, 16))
    outs = [fft.rfft(x), fft.irfft(fft.rfft(x), is_odd=True), fft.rfft(x, norm="ortho"),
            fft.irfft(fft.rfft(x, "ortho"), "ortho", is_odd=True), fft.rfft(m, "no_norm"),
            fft.irfft(fft.rfft(m)), fft.rfft(m.T)]
    got = run(outs, {x: X, m: M})
    np.testing.assert_allclose(_complex(got[0]), np.fft.rfftn(X, axes=(1, 2)), atol=1e-12)
    np.testing.assert_allclose(got[1], X, atol=1e-12)
    np.testing.assert_allclose(_complex(got[2]), np.fft.rfftn(X, axes=(1, 2), norm="ortho"), atol=1e-12)
    np.testing.assert_allclose(got[3], X, atol=1e-12)
    np.testing.assert_allclose(_complex(got[4]), np.fft.rfft(M), atol=1e-12)
    np.testing.assert_allclose(got[5], M, atol=1e-12)
    np.testing.assert_allclose(_complex(got[6]), np.fft.rfft(M.T), atol=1e-12)


@PY_THEN_SLOW_NUMBA
def test_irfft_of_arbitrary_spectrum_and_float32():
    s = lt.tensor("s", dtype="float32", shape=(None, None, 2))
    rng = np.random.default_rng(1)
    S = rng.random((2, 5, 2)).astype("float32")
    out = fft.irfft(s)
    got = run(out, {s: S})
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.fft.irfft(S[..., 0] + 1j * S[..., 1]), rtol=1e-5, atol=1e-6)


@PY_THEN_SLOW_NUMBA
def test_fft_gradients_and_bad_options():
    rng = np.random.default_rng(2)
    verify_grad(fft.rfft, [rng.random((1, 8))], eps=1e-1, rng=rng)
    verify_grad(lambda a: fft.rfft(a, "ortho"), [rng.random((2, 3, 5))], eps=1e-1, rng=rng)
    verify_grad(fft.irfft, [rng.random((1, 5, 2))], eps=1e-1, rng=rng)
    verify_grad(lambda a: fft.irfft(a, "no_norm", is_odd=True), [rng.random((1, 5, 2))], eps=1e-1, rng=rng)
    with pytest.raises(ValueError, match="norm"):
        fft.rfft(lt.dmatrix(), norm="forward")
    with pytest.raises(ValueError, match="is_odd"):
        fft.irfft(lt.dtensor3(), is_odd=2)
    with pytest.raises(TypeError, match="dimension >= 2"):
        fft.rfft_op(lt.dvector())


def test_fourier_fft_matches_numpy():
    a = lt.dmatrix("a")
    ax = lt.iscalar("ax")
    rng = np.random.default_rng(3)
    A = rng.random((6, 5))
    outs = [fourier_fft(a, 10, 0), fourier_fft(a, 3, 1), fourier_fft(a, None, ax), fourier_fft(a, 7, None)]
    got = run(outs, {a: A, ax: 0})
    np.testing.assert_allclose(got[0], np.fft.fft(A, 10, 0), atol=1e-12)
    np.testing.assert_allclose(got[1], np.fft.fft(A, 3, 1), atol=1e-12)
    np.testing.assert_allclose(got[2], np.fft.fft(A, None, 0), atol=1e-12)
    np.testing.assert_allclose(got[3], np.fft.fft(A, 7, -1), atol=1e-12)
    assert all(g.dtype == np.complex128 for g in got)


def test_fourier_static_shape_and_errors():
    a = lt.tensor("a", shape=(3, 1))
    assert fourier_fft(a, 4, 1).type.shape == (3, 4)
    assert fourier_fft(a, lt.iscalar(), 1).type.shape == (3, None)
    assert fourier_fft(a, 4, lt.iscalar()).type.shape == (None, None)
    with pytest.raises(TypeError, match="scalar"):
        fourier_fft(lt.dscalar(), None, None)
    with pytest.raises(TypeError, match="smaller than"):
        fourier_fft(a, 4, 2)
    with pytest.raises(TypeError, match="strictly positive"):
        fourier_fft(a, 0, 1)
    assert isinstance(fourier_fft, Fourier)
    v = lt.dvector("v")
    with pytest.raises(Exception, match="not implemented|complex"):
        lucent.grad(lt.real(fourier_fft(v, 4, 0)).sum(), v)


def test_batch_axes_keep_static_lengths_and_the_gradient_drops_them():
    x = lt.dvector("x")
    spectrum = fft.rfft(x[None, :])
    assert spectrum.type.shape == (1, None, 2)
    assert fft.irfft(spectrum).type.shape == (1, None)
    rng = np.random.default_rng(4)
    verify_grad(lambda v: fft.rfft(v[None, :]), [rng.random(8)], rng=rng)

