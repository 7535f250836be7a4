"""Convolution, FFTs, dimension joins/splits and interpolation, written against PyTensor."""

import numpy as np
import scipy.signal
from numpy.testing import assert_allclose

import pytensor
import pytensor.tensor as pt
from pytensor.graph.rewriting import rewrite_graph
from pytensor.tensor import fft
from pytensor.tensor.fourier import fft as fourier_fft
from pytensor.tensor.interpolate import interp, interpolate1d
from pytensor.tensor.reshape import JoinDims, SplitDims
from pytensor.tensor.signal import convolve1d, convolve2d
from pytensor.tensor.signal.conv import Convolve1d
from pytensor.tensor.subtensor import flip

rng = np.random.default_rng(0)
# The reference path keeps this program quick; the fast path of each op is covered by the unit tests.
MODE = "FAST_COMPILE"

# --- signal: convolve1d (full / valid / same, batched) and convolve2d with boundaries
x, k = pt.dvector("x"), pt.dvector("k")
X, K = pt.dmatrix("X"), pt.dmatrix("K")
a, b = rng.normal(size=20), rng.normal(size=5)
A, B = rng.normal(size=(6, 7)), rng.normal(size=(3, 3))
outs = [convolve1d(x, k, mode) for mode in ("full", "valid", "same")]
outs += [convolve1d(X[:3], K[:, :2]), convolve2d(X, K, "same", boundary="wrap"), convolve2d(X, K, "valid")]
f = pytensor.function([x, k, X, K], outs, mode=MODE)
res = f(a, b, A, B)
for r, mode in zip(res[:3], ("full", "valid", "same")):
    assert_allclose(r, scipy.signal.convolve(a, b, mode), rtol=1e-10, atol=1e-12)
assert_allclose(res[3], np.stack([np.convolve(r_, k_) for r_, k_ in zip(A[:3], B[:, :2])]), rtol=1e-10)
assert_allclose(res[4], scipy.signal.convolve2d(A, B, "same", boundary="wrap"), rtol=1e-10, atol=1e-12)
assert_allclose(res[5], scipy.signal.convolve2d(A, B, "valid"), rtol=1e-10, atol=1e-12)
pytensor.gradient.verify_grad(lambda u: convolve1d(u, b, "same"), [a], rng=rng, mode=MODE)
assert isinstance(convolve1d(x, k).owner.op, Convolve1d) or isinstance(convolve1d(x, k).owner.op.core_op, Convolve1d)

# --- fft: real FFTs stored as (..., 2) real/imaginary pairs, with gradients
m = pt.dmatrix("m")
M = rng.random((2, 9))
spec = fft.rfft(m)
f = pytensor.function([m], [spec, fft.irfft(spec, is_odd=True), fft.rfft(m, norm="ortho")], mode=MODE)
s, back, ortho = f(M)
assert_allclose(s[..., 0] + 1j * s[..., 1], np.fft.rfft(M), atol=1e-12)
assert_allclose(back, M, atol=1e-12)
assert_allclose(ortho[..., 0] + 1j * ortho[..., 1], np.fft.rfft(M, norm="ortho"), atol=1e-12)
pytensor.gradient.verify_grad(fft.rfft, [rng.random((1, 8))], eps=1e-1, rng=rng, mode=MODE)
four = pytensor.function([m], fourier_fft(m, 12, 1), mode=MODE)(M)
assert four.dtype == np.complex128
assert_allclose(four, np.fft.fft(M, 12, 1), atol=1e-12)

# --- reshape: join_dims / split_dims / pack / unpack, and their canonical form
t = pt.tensor("t", shape=(2, 3, 4))
assert pt.join_dims(t, 1).type.shape == (2, 12)
assert pt.split_dims(pt.join_dims(t, 1), (3, 4), axis=1).type.shape == (2, 3, 4)
T = rng.random((2, 3, 4))
packed, shapes = pt.pack(t, m, keep_axes=0)
parts = pt.unpack(packed, shapes, keep_axes=0)
f = pytensor.function([t, m], [packed, *parts], mode=MODE)
p_val, t_back, m_back = f(T, M)
assert_allclose(p_val, np.concatenate([T.reshape(2, 12), M], axis=1))
assert_allclose(t_back, T)
assert_allclose(m_back, M)
canon = rewrite_graph(pt.join_dims(t, 0, 2), include=("canonicalize",))
assert not isinstance(canon.owner.op, JoinDims | SplitDims)

# --- interpolation
q = pt.dvector("q")
Q = np.array([0.5, 1.5, 2.25, 4.0])
xp, fp = np.array([1.0, 2.0, 3.0]), np.array([3.0, 2.0, 0.0])
assert_allclose(pytensor.function([q], interp(q, xp, fp), mode=MODE)(Q), np.interp(Q, xp, fp))
nearest = interpolate1d(xp, fp, method="nearest")
assert_allclose(pytensor.function([q], nearest(q), mode=MODE)(np.array([1.4, 1.6])), [3.0, 2.0])

# --- flip
flips = pytensor.function([X], [flip(X, axis=0), pt.flip(X), flip(X, (0, -1))], mode=MODE)(A)
assert_allclose(flips[0], A[::-1])
assert_allclose(flips[1], A[::-1, ::-1])
assert_allclose(flips[2], A[::-1, ::-1])
print("arrays_signal: ok")
