"""Sorting and cumulative ops on arrays large enough for the fast kernels, checked
against NumPy: NaNs last, infinities and signed zeros, argsort giving a sorting
permutation, every axis, strided inputs, integer and float32 dtypes, cumulative
sums in NumPy's order of operations."""

import numpy as np
from numpy.testing import assert_array_equal

import pytensor
import pytensor.tensor as pt
from pytensor.tensor.extra_ops import cumprod, cumsum
from pytensor.tensor.sort import argsort, sort


rng = np.random.default_rng(0)

# Long float rows with ties, signed zeros, infinities and NaNs.
X = rng.standard_normal((3, 5000))
flat = X.reshape(-1)
flat[rng.integers(0, flat.size, 2000)] = 0.0
flat[rng.integers(0, flat.size, 1500)] = -0.0
flat[rng.integers(0, flat.size, 1000)] = np.nan
flat[rng.integers(0, flat.size, 900)] = 1.25
flat[:4] = [np.inf, -np.inf, np.inf, -np.inf]

x = pt.dmatrix("x")
f = pytensor.function(
    [x],
    [sort(x, kind="stable"), sort(x), sort(x.T, axis=0, kind="mergesort"), sort(x, axis=None, kind="stable"),
     argsort(x, kind="stable"), argsort(x.T, axis=0, stable=True), argsort(x)],
)
got = f(X)


def check_argsort(perm, values, axis):
    """``perm`` sorts ``values`` along ``axis`` and is a permutation there."""
    n = values.shape[axis]
    assert_array_equal(np.sort(perm, axis=axis), np.broadcast_to(np.arange(n).reshape([-1 if d == axis else 1 for d in range(values.ndim)]), values.shape))
    assert_array_equal(np.take_along_axis(values, perm, axis), np.sort(values, axis=axis))


for k, expected in ((0, np.sort(X)), (1, np.sort(X)), (2, np.sort(X.T, axis=0)), (3, np.sort(X, axis=None))):
    assert_array_equal(got[k], expected)  # -0.0 == 0.0 here; NaNs compare equal
    assert got[k].dtype == np.float64
check_argsort(got[4], X, 1)
check_argsort(got[5], X.T, 0)
check_argsort(got[6], X, 1)
assert np.isnan(got[1][:, -1]).all() and np.isnan(got[3][-1])

# float32 and integer rows (the radix path), short rows, and a strided view.
for dtype in ("float32", "int64", "int16", "uint8"):
    v = pt.vector("v", dtype=dtype)
    V = (rng.standard_normal(20_000) * 100).astype(dtype) if dtype.startswith(("f", "i")) else \
        rng.integers(0, 256, 20_000).astype(dtype)
    g = pytensor.function([v], [sort(v), argsort(v, stable=True), sort(v[::3]), sort(v[:7]), argsort(v[:40], stable=True)])
    out = g(V)
    assert_array_equal(out[0], np.sort(V))
    assert out[0].dtype == V.dtype
    check_argsort(out[1], V, 0)
    assert_array_equal(out[2], np.sort(V[::3]))
    assert_array_equal(out[3], np.sort(V[:7]))
    check_argsort(out[4], V[:40], 0)

# Cumulative sums and products along each axis, in NumPy's order of operations.
A = rng.standard_normal((301, 257))
T3 = rng.standard_normal((4, 33, 17))
a = pt.dmatrix("a")
t3 = pt.tensor3("t3", dtype="float64")
ia = pt.lmatrix("ia")
IA = rng.integers(-5, 6, (40, 30))
h = pytensor.function(
    [a, t3, ia],
    [cumsum(a, axis=0), cumsum(a, axis=1), cumsum(a), cumprod(a[:, :20] * 0.1 + 1, axis=0), cumprod(a[:20].T, axis=1),
     cumsum(t3, axis=1), cumsum(t3, axis=-1), cumsum(ia, axis=0), cumprod(ia, axis=1)],
)
out = h(A, T3, IA)
expected = [np.cumsum(A, axis=0), np.cumsum(A, axis=1), np.cumsum(A), np.cumprod(A[:, :20] * 0.1 + 1, axis=0),
            np.cumprod(A[:20].T, axis=1), np.cumsum(T3, axis=1), np.cumsum(T3, axis=-1), np.cumsum(IA, axis=0),
            np.cumprod(IA, axis=1)]
for k, (o, e) in enumerate(zip(out, expected)):
    np.testing.assert_allclose(o, e, rtol=1e-13, atol=1e-13, err_msg=f"cumulative output {k}")
    assert o.dtype == e.dtype, (k, o.dtype, e.dtype)
assert_array_equal(out[0], np.cumsum(A, axis=0))
assert_array_equal(out[1], np.cumsum(A, axis=1))
