"""PyTensor-style use of pytensor.tensor: types, constructors, helpers and methods."""

import warnings

import numpy as np
import numpy.testing as npt

import pytensor
import pytensor.tensor as pt
from pytensor.misc.may_share_memory import may_share_memory
from pytensor.tensor.math import _allclose
from pytensor.tensor.sharedvar import TensorSharedVariable
from pytensor.tensor.type import (
    TensorType,
    all_dtypes,
    complex_dtypes,
    continuous_dtypes,
    discrete_dtypes,
    float_dtypes,
    int_dtypes,
    integer_dtypes,
    uint_dtypes,
)

# --- tensor(name, *, dtype, shape) and the rank helpers --------------------------------
A = pt.tensor("A", dtype="float64", shape=(3, None))
assert A.name == "A" and A.type == TensorType("float64", shape=(3, None))
assert pt.tensor(shape=(2,)).type.dtype == pytensor.config.floatX
try:
    pt.tensor("float64", shape=(None,))
except ValueError as e:
    assert "looks like a dtype" in str(e)
else:
    raise AssertionError("a dtype given as the name must be refused")
try:
    pt.matrix(shape=[None, None])
except TypeError as e:
    assert "Shape must be a tuple" in str(e)
else:
    raise AssertionError("a list shape must be refused")
try:
    pt.vector(shape=(None, None))
except ValueError as e:
    assert "Shape must be a tuple of length 1" in str(e)
else:
    raise AssertionError("a shape of the wrong length must be refused")
try:
    pt.row(shape=(2, 5))
except ValueError as e:
    assert "first dimension of a `row` must have shape 1" in str(e)
else:
    raise AssertionError("a row must keep its length 1")
m = pt.matrix("m", dtype="int64", shape=(2, 3))
assert m.type.shape == (2, 3) and m.dtype == "int64"

# --- predefined types are TensorType instances ------------------------------------------
for t in (pt.dscalar, pt.fvector, pt.dmatrix, pt.irow, pt.lcol, pt.ztensor3, pt.btensor4):
    assert isinstance(t, TensorType)
x = pt.dmatrix("x")
assert x.type is pt.dmatrix and x.name == "x"
assert pt.fmatrix(shape=(1, None)).type == pt.frow
a, b = pt.dscalars("ab")
assert a.type is pt.dscalar and b.name == "b"
assert callable(pt.scalar) and not isinstance(pt.scalar, TensorType)

# --- TensorType ---------------------------------------------------------------------------
t = TensorType("float64", shape=(2, 3))
assert str(t) == "Matrix(float64, shape=(2, 3))"
assert str(TensorType("int32", shape=(None,))) == "Vector(int32, shape=(?,))"
assert TensorType("float64", shape=()).c_element_type() == "npy_float64"
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    assert TensorType("float64", broadcastable=(True, False)).shape == (1, None)
assert any(issubclass(w.category, DeprecationWarning) for w in caught)
try:
    TensorType("float64", shape=("1",))
except ValueError as e:
    assert "boolean, integer or None" in str(e)
else:
    raise AssertionError("string shapes must be refused")
arr = np.arange(4.0)
assert TensorType.may_share_memory(arr, arr[1:]) and not TensorType.may_share_memory(arr, None)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", RuntimeWarning)
    nan_inf = np.array([-np.inf, 1.0, np.inf, np.nan])
    assert TensorType.values_eq_approx(nan_inf, nan_inf.copy())
    assert TensorType.values_eq_approx(nan_inf, np.array([0.0, 1.0, 5.0, np.nan]), allow_remove_inf=True)
try:
    t.filter(t())
except TypeError:
    pass
else:
    raise AssertionError("filter must refuse a symbolic variable")
mixed = TensorType("float64", shape=(1, None, 3)).convert_variable(TensorType("float64", shape=(None, 5, 3))())
assert mixed.type.shape == (1, 5, 3)

# --- dtype groups, _allclose, may_share_memory ---------------------------------------------
assert "float32" in continuous_dtypes and "complex64" in complex_dtypes and "float16" in float_dtypes
assert "bool" in discrete_dtypes and "uint8" in uint_dtypes and "int8" in int_dtypes
assert "uint64" in integer_dtypes and len(all_dtypes) == 14
assert _allclose(np.ones(3), np.ones(3) + 1e-10) and not _allclose(np.ones(3), np.ones(3) + 1e-3)
assert may_share_memory(arr, arr[::2]) and not may_share_memory(arr, np.arange(4.0))
assert may_share_memory(arr, 1, raise_other_type=False) is False
try:
    may_share_memory(arr, 1)
except TypeError:
    pass
else:
    raise AssertionError("may_share_memory must refuse non-arrays by default")

# --- names of pytensor.tensor --------------------------------------------------------------
assert pt.pi == np.pi and pt.e == np.e and pt.grad is pytensor.grad
assert pt.TensorLike is not None
g = pt.mgrid[0:3, 0:2]
npt.assert_array_equal(g[0].eval(), np.mgrid[0:3, 0:2][0])
npt.assert_array_equal(pt.ogrid[0:3, 0:2][1].eval(), np.ogrid[0:3, 0:2][1])
s1, s2, s3, s4 = pt.dscalars("pqrs")
f = pytensor.function([s1, s2, s3, s4], pt.stacklists([[s1, s2], [s3, s4]]))
npt.assert_array_equal(f(1, 2, 3, 4), [[1, 2], [3, 4]])
y = pt.tensor3("y")
vy = np.arange(24.0).reshape(2, 3, 4)
npt.assert_array_equal(pt.swapaxes(y, 0, 2).eval({y: vy}), np.swapaxes(vy, 0, 2))
npt.assert_array_equal(pt.moveaxis(y, 0, -1).eval({y: vy}), np.moveaxis(vy, 0, -1))
npt.assert_allclose(pt.ptp(x, axis=0).eval({x: np.arange(6.0).reshape(2, 3)}), [3.0, 3.0, 3.0])

# --- TensorVariable methods ------------------------------------------------------------------
v = np.arange(1.0, 7.0).reshape(2, 3)
checks = [
    (x.ravel(), v.ravel()),
    (x.flatten(), v.flatten()),
    (x.squeeze(), v),
    (x.swapaxes(0, 1), v.T),
    (x.mT, v.T),
    (x.round(), v.round()),
    (x.clip(2, 4), v.clip(2, 4)),
    (x.dot(x.T), v @ v.T),
    (x.norm(2), np.sqrt((v ** 2).sum())),
    (x.std(axis=0), v.std(axis=0)),
    (x.var(), v.var()),
    (x.any(), v.any()),
    (x.all(axis=1), v.all(axis=1)),
    (x.astype("int32"), v.astype("int32")),
    (x.ptp(), np.ptp(v)),
    (x.take([0, 2], axis=1), v.take([0, 2], axis=1)),
    (x[0].inc(1.0), v + [[1.0], [0.0]]),
    (x[1].set(0.0), v * [[1.0], [0.0]]),
    (x.fill(2.0), np.full_like(v, 2.0)),
    (x.log1p() + x.floor() + x.cos(), np.log1p(v) + np.floor(v) + np.cos(v)),
]
fn = pytensor.function([x], [c for c, _ in checks])
for got, (_, want) in zip(fn(v), checks):
    npt.assert_allclose(got, want)
assert x.astype("int32").dtype == "int32"

# --- shared tensors ---------------------------------------------------------------------------
sv = pytensor.shared(np.zeros((2, 4)))
assert isinstance(sv, TensorSharedVariable) and sv.type.shape == (None, None)
npt.assert_array_equal(pytensor.function([], sv.shape)(), [2, 4])
fixed = pytensor.shared(np.zeros(3), shape=(3,))
assert fixed.type.shape == (3,)
try:
    pytensor.shared(np.ma.masked_greater(np.arange(4), 2))
except NotImplementedError as e:
    assert "MaskedArrays are not supported" in str(e)
else:
    raise AssertionError("masked arrays must be refused")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    from pytensor.tensor import sharedvar

    assert sharedvar.ScalarSharedVariable is TensorSharedVariable
assert any(issubclass(w.category, FutureWarning) for w in caught)
