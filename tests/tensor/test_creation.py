"""Tests of ``lucent.tensor.creation``: make_vector, alloc/zeros/ones/full and
the ``*_like`` helpers, arange and eye."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
import lucent.tensor.basic as B
import lucent.tensor.creation as C
from lucent.gradient import verify_grad
from lucent.tensor.type import TensorType
from tests.helpers import run
from tests.tensor.test_shape import check_infer_shape


def test_creation_names_stay_reachable_from_basic_and_the_package():
    for name in C.__all__:
        assert name in B.__all__, name
        assert getattr(B, name) is getattr(C, name), name
        # ``lt.fill`` / ``lt.second`` are the Elemwise ops of ``lucent.tensor.math``
        assert hasattr(lt, name), name


def test_make_vector():
    a, b = lt.iscalar("a"), lt.iscalar("b")
    v = lt.stack([a, b, 3])
    assert isinstance(v.owner.op, C.MakeVector)
    assert str(v.owner.op) == "MakeVector{dtype='int32'}"
    assert v.type == TensorType("int32", (3,))
    out = check_infer_shape(v, {a: np.int32(1), b: np.int32(-2)})
    assert out.tolist() == [1, -2, 3] and out.dtype == np.int32
    with pytest.raises(TypeError, match="downcast"):
        C.MakeVector("int8")(a)
    verify_grad(lambda x, y: lt.stack([x, y * 2]), [np.array(1.0), np.array(2.0)])


# --------------------------------------------------------------------------- #
# Allocation
# --------------------------------------------------------------------------- #
def test_alloc_values_static_shape_and_fresh_memory():
    v = lt.vector("v", shape=(3,))
    n = lt.lscalar("n")
    a = C.alloc(v, n, 3)
    assert a.type.shape == (None, 3)
    assert str(a.owner.op) == "Alloc"
    data = np.arange(3.0)
    out = check_infer_shape(a, {v: data, n: np.int64(2)})
    np.testing.assert_array_equal(out, np.broadcast_to(data, (2, 3)))
    assert not np.may_share_memory(out, data)
    out[0, 0] = 42  # writeable, independent of the input
    assert data[0] == 0
    assert C.alloc(1.0, 2, n).type.shape == (2, None)
    assert C.alloc(v, 0, 3).type.shape == (0, 3)


def test_alloc_errors():
    v = lt.vector("v")
    with pytest.raises(ValueError, match="more than"):
        C.alloc(lt.matrix(), 3)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        C.alloc(lt.vector(shape=(3,)), 4)
    with pytest.raises(TypeError, match="integer scalar"):
        C.alloc(v, 2.5)
    with pytest.raises(ValueError, match=r"shape \(2,\) to shape \(2, 3\)"):
        run(C.alloc(v, 2, 3), {v: np.zeros(2)})
    with pytest.raises(ValueError, match="specify_broadcastable"):
        run(C.alloc(v, 2, 3), {v: np.zeros(1)})


def test_alloc_gradient():
    rng = np.random.default_rng(2)
    verify_grad(lambda v: C.alloc(v, 2, 3), [rng.normal(size=3)], rng=rng)
    verify_grad(lambda m: C.alloc(m, 4, 3), [rng.normal(size=(1, 3))], rng=rng)
    verify_grad(lambda s: C.alloc(s, 2, 2), [np.array(1.5)], rng=rng)


@pytest.mark.parametrize("fn,np_fn", [(C.zeros, np.zeros), (C.ones, np.ones)])
@pytest.mark.parametrize("dtype", [None, "float32", "int16"])
def test_zeros_ones(fn, np_fn, dtype):
    out_var = fn((2, 3), dtype=dtype)
    assert out_var.type.shape == (2, 3)
    out = run(out_var, {})
    expected = np_fn((2, 3), dtype=dtype or lucent.config.floatX)
    np.testing.assert_array_equal(out, expected)
    assert out.dtype == expected.dtype
    assert run(fn(0), {}).shape == (0,)
    n = lt.lscalar("n")
    assert run(fn((n, 2)), {n: np.int64(3)}).shape == (3, 2)
    x = lt.matrix("x")
    assert run(fn(x.shape), {x: np.empty((4, 1))}).shape == (4, 1)


def test_full_and_likes():
    x = lt.matrix("x")
    data = np.arange(6, dtype="float32").reshape(2, 3)
    np.testing.assert_array_equal(run(C.full((2, 2), 7.0), {}), np.full((2, 2), 7.0))
    assert C.full((2,), 1, dtype="float64").type.dtype == "float64"
    for fn, expected in [(C.zeros_like, np.zeros_like(data)), (C.ones_like, np.ones_like(data))]:
        out = run(fn(x), {x: data.astype(x.type.dtype)})
        np.testing.assert_array_equal(out, expected)
    fx = lt.fmatrix("fx")
    assert C.zeros_like(fx).type.dtype == "float32"
    assert C.ones_like(fx, dtype="int8").type.dtype == "int8"
    out = run(C.full_like(fx, 2), {fx: data})
    np.testing.assert_array_equal(out, np.full_like(data, 2))
    assert out.dtype == np.float32
    out = run(C.fill(fx, lt.constant(np.float32(3))), {fx: data})
    np.testing.assert_array_equal(out, np.full_like(data, 3))
    assert C.second is C.fill


# --------------------------------------------------------------------------- #
# arange / eye
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "args", [(5,), (2, 7), (7, 2, -2), (0,), (5, 1), (0.5, 3.0), (1.0, 2.0, 0.3), (-3, 4, 3)]
)
def test_arange_matches_numpy(args):
    out_var = C.arange(*args)
    expected = np.arange(*args)
    assert out_var.type.shape == expected.shape
    out = run(out_var, {})
    np.testing.assert_allclose(out, expected)
    assert out.dtype.kind == expected.dtype.kind


def test_arange_symbolic_and_dtypes():
    i, j = lt.iscalar("i"), lt.iscalar("j")
    assert C.arange(i).type == TensorType("int64", (None,))
    assert C.arange(0.5, 3).type.dtype == "float32"
    assert C.arange(lt.dscalar()).type.dtype == "float64"
    assert C.arange(3, dtype="float32").type.dtype == "float32"
    assert str(C.arange(i).owner.op) == "ARange{dtype='int64'}"
    for a, b in [(0, 5), (5, 0), (-3, 7)]:
        for step in (1, 2, -3):
            k = lt.iscalar("k")
            var = C.arange(i, j, k)
            out = check_infer_shape(var, {i: np.int32(a), j: np.int32(b), k: np.int32(step)})
            np.testing.assert_array_equal(out, np.arange(a, b, step))
    d = lt.dscalar("d")
    out = check_infer_shape(C.arange(0.0, d, 0.5), {d: np.float64(2.2)})
    np.testing.assert_allclose(out, np.arange(0.0, 2.2, 0.5))
    with pytest.raises(ValueError, match="zero"):
        C.arange(0, 5, 0)
    k = lt.iscalar("k")
    with pytest.raises(ValueError, match="zero"):
        run(C.arange(0, 5, k), {k: np.int32(0)})


def test_arange_gradient():
    verify_grad(lambda s, st: C.arange(s, 4.0, st), [np.array(0.5), np.array(0.6)])


@pytest.mark.parametrize("n,m,k", [(3, None, 0), (2, 4, 1), (4, 2, -1), (0, None, 0), (3, 3, 5)])
def test_eye(n, m, k):
    var = C.eye(n, m, k)
    expected = np.eye(n, m, k)
    assert var.type.shape == expected.shape
    assert var.type.dtype == lucent.config.floatX
    np.testing.assert_array_equal(run(var, {}), expected)
    a = lt.lscalar("a")
    var = C.eye(a, dtype="int32")
    assert var.type == TensorType("int32", (None, None))
    out = check_infer_shape(var, {a: np.int64(2)})
    np.testing.assert_array_equal(out, np.eye(2, dtype="int32"))
