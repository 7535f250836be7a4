"""Numba kernels of Join, scalar/tensor conversion, copies, views and creation ops agree with ``perform``."""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.compile.ops import DeepCopyOp, ViewOp
from lucent.link.numba.dispatch import NoNumbaImplementation, numba_funcify
from lucent.link.numba.dispatch import tensor_basic  # noqa: F401 (registers the kernels)
from lucent.scalar.basic import get_scalar_type
from lucent.tensor.basic import Join, ScalarFromTensor, TensorCopy, TensorFromScalar
from lucent.tensor.creation import Alloc, ARange, Eye, MakeVector
from tests.link.numba.test_shape import check, check_raises


@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float32", "float64"), ("int32", "int64"),
                                    ("bool", "bool"), ("int8", "float32")])
def test_join(dtypes):
    a = lt.tensor(dtype=dtypes[0], shape=(None, None))
    b = lt.tensor(dtype=dtypes[1], shape=(None, None))
    av = (np.arange(6).reshape(2, 3) % 3).astype(dtypes[0])
    bv = (np.arange(9).reshape(3, 3) % 2).astype(dtypes[1])
    check(Join(0)(a, b), av, bv)
    check(Join(1)(a, b), av, bv.T[:2], view=False)
    check(Join(0)(a, b, a), av[::-1, ::2], np.zeros((0, 2), dtype=dtypes[1]))
    check_raises(Join(0)(a, b), av, bv[:, :2], match=r"cannot join arrays of shapes \(2, 3\), \(3, 2\)")
    v = lt.tensor(dtype=dtypes[0], shape=(None,))
    check(Join(0)(v), av[0])


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int8", "bool"])
def test_scalar_tensor_conversions(dtype):
    s = get_scalar_type(dtype)()
    value = np.asarray(1, dtype=dtype)[()]
    check(TensorFromScalar()(s), value)
    t = lt.tensor(dtype=dtype, shape=())
    check(ScalarFromTensor()(t), np.asarray(1, dtype=dtype))


@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3)])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "bool"])
def test_copies_and_views(shape, dtype):
    x = lt.tensor(dtype=dtype, shape=(None,) * len(shape))
    value = np.ones(shape, dtype=dtype)
    check(TensorCopy()(x), value, view=False)
    check(DeepCopyOp()(x), value, view=False)
    check(ViewOp()(x), value, view=value.size > 0)
    if len(shape) == 2:
        check(TensorCopy()(x), np.ones((3, 4), dtype=dtype)[::2, ::-1], view=False)


def test_deep_copy_and_view_of_scalars_and_other_types():
    s = get_scalar_type("float64")()
    assert numba_funcify(DeepCopyOp(), DeepCopyOp()(s).owner)(2.5) == 2.5
    assert numba_funcify(ViewOp(), ViewOp()(s).owner)(2.5) == 2.5
    from lucent.tensor.shape import NoneConst

    with pytest.raises(NoNumbaImplementation):
        numba_funcify(DeepCopyOp(), DeepCopyOp()(NoneConst).owner)


@pytest.mark.parametrize("dtype", ["int64", "float64", "int32"])
def test_make_vector(dtype):
    a, b = lt.scalar(dtype="int8"), lt.scalar(dtype="int32")
    check(MakeVector(dtype)(a, b, a), np.asarray(3, dtype="int8"), np.asarray(-2, dtype="int32"))
    check(MakeVector(dtype)())
    f = lt.scalar(dtype="float32")
    check(MakeVector("float64")(f, a), np.asarray(0.5, dtype="float32"), np.asarray(7, dtype="int8"))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "bool"])
def test_alloc(dtype):
    n, m = lt.scalar(dtype="int64"), lt.scalar(dtype="int32")
    scalar = lt.tensor(dtype=dtype, shape=())
    check(Alloc()(scalar, n, m), np.asarray(1, dtype=dtype), np.asarray(2), np.asarray(3, dtype="int32"))
    check(Alloc()(scalar, n, m), np.asarray(1, dtype=dtype), np.asarray(0), np.asarray(3, dtype="int32"))
    check(Alloc()(scalar), np.asarray(1, dtype=dtype))
    row = lt.tensor(dtype=dtype, shape=(1, None))
    rv = (np.arange(3) % 2).astype(dtype).reshape(1, 3)
    check(Alloc()(row, n, lt.constant(4), m), rv, np.asarray(2), np.asarray(3, dtype="int32"))
    v = lt.tensor(dtype=dtype, shape=(None,))
    check(Alloc()(v, n, m), rv[0, ::-1], np.asarray(2), np.asarray(3, dtype="int32"))
    check_raises(Alloc()(v, n, m), rv[0], np.asarray(2), np.asarray(4, dtype="int32"),
                 match=r"cannot broadcast a value of shape \(3,\) to shape \(2, 4\)")
    check_raises(Alloc()(v, n, m), rv[0, :1], np.asarray(2), np.asarray(3, dtype="int32"),
                 match="only when its type says so")
    check_raises(Alloc()(scalar, n, m), np.asarray(1, dtype=dtype), np.asarray(-1), np.asarray(3, dtype="int32"),
                 match="negative dimensions")


@pytest.mark.parametrize(
    "dtype, bounds",
    [("int64", (0, 10, 3)), ("int64", (10, 0, -3)), ("int64", (5, 5, 1)), ("float64", (0.1, 1.0, 0.3)),
     ("float32", (0.1, 1.0, 0.3)), ("float64", (1, -2.5, -0.7)), ("int32", (0, 7, 2)), ("float64", (0, 3, 1))],
)
def test_arange(dtype, bounds):
    vars_ = [lt.scalar(dtype="int64" if isinstance(b, int) else "float64") for b in bounds]
    vals = [np.asarray(b, dtype="int64" if isinstance(b, int) else "float64") for b in bounds]
    check(ARange(dtype)(*vars_), *vals)


def test_arange_zero_step():
    a, b, c = (lt.scalar(dtype="int64") for _ in range(3))
    check_raises(ARange("int64")(a, b, c), np.asarray(0), np.asarray(3), np.asarray(0), match="step must not be zero")


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "bool"])
def test_eye(dtype):
    n, m, k = (lt.scalar(dtype="int64") for _ in range(3))
    out = Eye(dtype)(n, m, k)
    for nmk in [(3, 3, 0), (2, 4, 1), (4, 2, -1), (3, 3, 5), (0, 3, 0), (3, 3, -3)]:
        check(out, *[np.asarray(v) for v in nmk])
    check_raises(out, np.asarray(-1), np.asarray(2), np.asarray(0), match="negative dimensions")
