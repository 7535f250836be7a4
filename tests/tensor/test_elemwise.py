"""Tests of Elemwise, DimShuffle, CAReduce and transpose (lucent.tensor.elemwise)."""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.gradient import grad, verify_grad
from lucent.scalar import basic as ps
from lucent.tensor.elemwise import CAReduce, DimShuffle, Elemwise, transpose
from lucent.tensor.math import All, Any, Max, Min, Prod, Sum
from tests.helpers import evaluate_with_perform, run

rng = np.random.default_rng(0)


# --- Elemwise ------------------------------------------------------------------
def test_str_and_equality():
    assert str(Elemwise(ps.add)) == "Add"
    assert str(Elemwise(ps.true_div)) == "True_div"
    assert str(Elemwise(ps.Cast(ps.get_scalar_type("int8")))) == "Cast{int8}"
    assert Elemwise(ps.add) == Elemwise(ps.add)
    assert Elemwise(ps.add) != Elemwise(ps.mul)
    assert Elemwise(ps.add, {0: 0}) != Elemwise(ps.add)
    assert Elemwise(ps.add, {0: 1}).destroy_map == {0: [1]}
    assert hash(Elemwise(ps.add)) == hash(Elemwise(ps.add))


@pytest.mark.parametrize(
    "s1, s2, expected",
    [((3, 1), (1, 4), (3, 4)), ((5,), (2, 5), (2, 5)), ((None, 1), (None, 4), (None, 4)),
     ((1, None), (3, 1), (3, None)), ((), (2, 3), (2, 3)), ((1,), (None,), (None,))],
)
def test_static_shape_inference(s1, s2, expected):
    a = lt.tensor(dtype="float64", shape=s1)
    b = lt.tensor(dtype="float64", shape=s2)
    out = a + b
    assert out.type.shape == expected
    assert out.owner.inputs[0].type.ndim == len(expected)  # left-padded with a DimShuffle


def test_incompatible_static_shapes():
    a = lt.tensor(dtype="float64", shape=(3,))
    b = lt.tensor(dtype="float64", shape=(4,))
    with pytest.raises(ValueError, match=r"\(3,\).*\(4,\)"):
        a + b


@pytest.mark.parametrize("sa, sb", [((3, 1), (1, 4)), ((5,), (2, 5)), ((0, 3), (1, 3)), ((), ())])
def test_broadcast_perform_matches_numpy(sa, sb):
    a = lt.tensor(dtype="float64", shape=tuple(s if s == 1 else None for s in sa))
    b = lt.tensor(dtype="float64", shape=tuple(s if s == 1 else None for s in sb))
    av, bv = rng.random(sa), rng.random(sb)
    got = run(a * b - a, {a: av, b: bv})
    np.testing.assert_allclose(got, av * bv - av)
    assert got.shape == np.broadcast_shapes(sa, sb)
    assert isinstance(got, np.ndarray)


def test_runtime_shape_errors():
    a, b = lt.dvector(), lt.dvector()
    with pytest.raises(ValueError, match="not compatible"):
        run(a + b, {a: np.zeros(3), b: np.zeros(4)})
    with pytest.raises(ValueError, match="Runtime broadcasting"):
        run(a + b, {a: np.zeros(1), b: np.zeros(4)})


def test_non_contiguous_and_nan_inputs():
    x = lt.dmatrix()
    base = rng.random((6, 8))
    view = base[::2, 1::3]
    np.testing.assert_allclose(run(lt.exp(x), {x: view}), np.exp(view))
    np.testing.assert_allclose(run(lt.exp(x), {x: base.T}), np.exp(base.T))
    nan = np.array([[np.nan, 1.0]])
    out = run(x * 2, {x: nan})
    assert np.isnan(out[0, 0]) and out[0, 1] == 2.0


def test_output_does_not_alias_input():
    x = lt.dvector()
    xv = np.arange(3.0)
    out = run(lt.math.identity(x), {x: xv})
    assert not np.may_share_memory(out, xv)
    np.testing.assert_array_equal(out, xv)


def test_inplace_and_storage_reuse():
    x, y = lt.dvector(), lt.dvector()
    node = Elemwise(ps.add, {0: 0}).make_node(x, y)
    xv, yv = np.ones(3), np.arange(3.0)
    storage = [[None]]
    node.op.perform(node, [xv, yv], storage)
    assert storage[0][0] is xv
    np.testing.assert_array_equal(xv, [1, 2, 3])
    node = Elemwise(ps.add).make_node(x, y)
    prev = np.empty(3)
    storage = [[prev]]
    node.op.perform(node, [np.ones(3), yv], storage)
    assert storage[0][0] is prev
    np.testing.assert_array_equal(prev, [1, 2, 3])
    with pytest.raises(TypeError, match="in place"):
        Elemwise(ps.true_div, {0: 0}).make_node(lt.ivector(), lt.ivector())


def test_infer_shape():
    a = lt.tensor(dtype="float64", shape=(None, 1))
    b = lt.tensor(dtype="float64", shape=(1, 4))
    node = (a + b).owner
    sa, sb = object(), object()
    (shape,) = node.op.infer_shape(None, node, [(sa, 1), (1, 4)])
    assert shape == (sa, 4)


def test_elemwise_grad_sums_broadcast_dims():
    a = lt.tensor(dtype="float64", shape=(None, 1))
    b = lt.tensor(dtype="float64", shape=(1, None))
    cost = (a * b).sum()
    ga, gb = grad(cost, [a, b])
    assert ga.type.shape[1] == 1 and gb.type.shape[0] == 1
    av, bv = rng.random((3, 1)), rng.random((1, 4))
    np.testing.assert_allclose(run(ga, {a: av, b: bv}), np.broadcast_to(bv.sum(), (3, 1)))
    np.testing.assert_allclose(run(gb, {a: av, b: bv}), np.broadcast_to(av.sum(), (1, 4)))
    verify_grad(lambda p, q: p * q + lt.exp(p), [rng.random((3, 1)), rng.random((1, 4))])
    verify_grad(lambda p, q: p / q, [rng.random((5,)), rng.random((2, 5)) + 0.5])


# --- DimShuffle --------------------------------------------------------------------
def test_dimshuffle_str_and_validation():
    x3 = lt.tensor3()
    assert str(x3.dimshuffle(2, 0, 1).owner.op) == "Transpose{axes=(2, 0, 1)}"
    assert str(x3.dimshuffle(0, "x", 1, 2).owner.op) == "ExpandDims{axis=1}"
    assert str(lt.dmatrix().T.owner.op) == "MatrixTranspose"
    r = lt.tensor(dtype="float64", shape=(1, None))
    assert str(r.dimshuffle(1).owner.op) == "Squeeze{axis=0}"
    assert str(r.dimshuffle("x", 1, 0).owner.op) == "DimShuffle{order=[x,1,0]}"
    with pytest.raises(ValueError, match="length 1"):
        lt.dmatrix().dimshuffle(1)
    with pytest.raises(ValueError, match="only 2 dimensions"):
        DimShuffle(2, (0, 2))
    with pytest.raises(ValueError, match="repeats"):
        DimShuffle(2, (0, 0))
    assert DimShuffle(2, (1, 0)) == DimShuffle(2, [1, 0])


def test_dimshuffle_perform_is_view():
    x = lt.tensor(dtype="float64", shape=(None, 1, None))
    out = x.dimshuffle(2, "x", 0)
    assert out.type.shape == (None, 1, None)
    xv = rng.random((2, 1, 3))
    got = run(out, {x: xv})
    np.testing.assert_array_equal(got, xv[:, 0, :].T[:, None, :])
    # Views are a property of perform: a compiled function copies outputs that alias its inputs.
    assert np.may_share_memory(evaluate_with_perform(out, {x: xv}), xv)
    assert out.owner.op.view_map == {0: [0]}
    node = out.owner
    assert node.op.infer_shape(None, node, [("a", 1, "c")]) == [("c", 1, "a")]


def test_dimshuffle_grad():
    verify_grad(lambda v: v.dimshuffle(1, "x", 0) * np.arange(3.0).reshape(3, 1, 1), [rng.random((2, 3))])
    x = lt.tensor(dtype="float64", shape=(1, None))
    g = grad(x.dimshuffle(1).sum(), x)
    assert g.type.shape[0] == 1
    np.testing.assert_array_equal(run(g, {x: np.ones((1, 3))}), np.ones((1, 3)))


def test_transpose():
    x = lt.tensor3()
    xv = rng.random((2, 3, 4))
    np.testing.assert_array_equal(run(transpose(x), {x: xv}), xv.T)
    np.testing.assert_array_equal(run(transpose(x, (1, 0, 2)), {x: xv}), xv.transpose(1, 0, 2))
    np.testing.assert_array_equal(run(transpose(x, (-1, 0, 1)), {x: xv}), xv.transpose(2, 0, 1))
    with pytest.raises(ValueError, match="permutation"):
        transpose(x, (0, 0, 1))


# --- CAReduce -------------------------------------------------------------------------
def test_careduce_str():
    x = lt.tensor3()
    assert str(lt.sum(x, axis=0).owner.op) == "Sum{axis=0}"
    assert str(lt.sum(x).owner.op) == "Sum{axes=None}"
    assert str(lt.max(x, axis=(0, 2)).owner.op) == "Max{axes=[0, 2]}"
    assert str(lt.sum(x, axis=-1).owner.op) == "Sum{axis=2}"
    assert str(Prod(axis=(0, 1))) == "Prod{axes=[0, 1]}"
    assert str(All(1)) == "All{axis=1}"
    assert str(CAReduce(ps.add, (0,))) == "CAReduce{add, axis=0}"
    assert Sum(axis=0) == Sum(axis=(0,))


@pytest.mark.parametrize(
    "dtype, expected",
    [("int8", "int64"), ("bool", "int64"), ("uint8", "uint64"), ("int32", "int64"),
     ("float32", "float32"), ("float64", "float64")],
)
def test_sum_prod_dtypes(dtype, expected):
    x = lt.tensor(dtype=dtype, shape=(None,))
    assert lt.sum(x).type.dtype == expected == np.sum(np.zeros(2, dtype)).dtype.name
    assert lt.prod(x).type.dtype == expected
    assert lt.max(x).type.dtype == dtype
    assert lt.all(x).type.dtype == "bool"


@pytest.mark.parametrize("op_cls, fn", [(Sum, np.sum), (Prod, np.prod), (Max, np.max), (Min, np.min),
                                        (All, np.all), (Any, np.any)])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_careduce_perform(op_cls, fn, axis):
    x = lt.dmatrix()
    xv = rng.integers(-3, 4, (3, 4)).astype("float64")
    got = run(op_cls(axis)(x), {x: xv})
    expected = fn(xv, axis=axis)
    np.testing.assert_array_equal(got, expected)
    assert isinstance(got, np.ndarray) and got.dtype == np.asarray(expected).dtype


def test_careduce_empty_and_nan():
    x = lt.dmatrix()
    empty = np.zeros((0, 3))
    assert run(lt.sum(x), {x: empty}) == 0
    assert run(lt.prod(x), {x: empty}) == 1
    np.testing.assert_array_equal(run(lt.sum(x, axis=0), {x: empty}), np.zeros(3))
    with pytest.raises(ValueError, match="empty"):
        run(lt.max(x), {x: empty})
    nan = np.array([[1.0, np.nan], [2.0, 3.0]])
    assert np.isnan(run(lt.max(x), {x: nan}))
    assert np.isnan(run(lt.min(x, axis=1), {x: nan})[0])
    assert np.isnan(run(lt.sum(x), {x: nan}))


def test_careduce_bad_axis():
    x = lt.dmatrix()
    with pytest.raises(np.exceptions.AxisError, match="out of bounds"):
        lt.sum(x, axis=2)
    with pytest.raises(ValueError, match="repeated"):
        lt.sum(x, axis=(0, -2))
    with pytest.raises(TypeError):
        lt.sum(x, axis=1.5)


def test_careduce_infer_shape_and_grads():
    x = lt.tensor3()
    node = lt.sum(x, axis=(0, 2)).owner
    assert node.op.infer_shape(None, node, [("a", "b", "c")]) == [("b",)]
    pt = [rng.random((2, 3, 4)) + 0.1]
    verify_grad(lambda v: lt.sum(v, axis=(0, 2)), pt)
    verify_grad(lambda v: lt.prod(v, axis=1), pt)
    verify_grad(lambda v: lt.max(v, axis=2), pt)
    verify_grad(lambda v: lt.min(v, axis=None), pt)


def test_elemwise_outer_and_reductions_of_a_scalar():
    """``op.outer(x, y)`` as ``numpy.ufunc.outer``; a 0-d input takes axis 0 / -1 as its only axis."""
    from lucent.tensor.math import add, mul

    x, y = lt.dmatrix("x"), lt.dtensor3("y")
    a, b = np.arange(6.0).reshape(2, 3), np.arange(8.0).reshape(4, 1, 2)
    s_out, p_out = run([add.outer(x, y), mul.outer(x, y)], {x: a, y: b})
    np.testing.assert_array_equal(s_out, np.add.outer(a, b))
    np.testing.assert_array_equal(p_out, np.multiply.outer(a, b))
    with pytest.raises(NotImplementedError, match="binary"):
        lt.exp.outer(x, y)
    s = lt.dscalar("s")
    assert run([CAReduce(ps.add, axis=(-1,))(s), lt.sum(s, axis=0)], {s: 5.0}) == [5.0, 5.0]
    with pytest.raises(np.exceptions.AxisError, match=r"axis \(-2,\) is out of bounds for array of dimension 0"):
        CAReduce(ps.add, axis=(-2,))(s)


def test_dimshuffle_gradient_when_the_added_axis_lost_its_static_length():
    # The cotangent reaching an expand_dims may have lost the static length 1 of
    # the added axis (an FFT's output type does): the gradient still drops it,
    # checking the length at run time.
    x = lt.dvector("x")
    cotangent = lt.tensor("cotangent", shape=(None, None))
    expand = DimShuffle(1, ("x", 0))
    (gx,) = expand.L_op([x], [expand(x)], [cotangent])
    assert gx.type.shape == (None,)
    np.testing.assert_array_equal(run(gx, {cotangent: np.arange(3.0)[None, :]}), np.arange(3.0))
    with pytest.raises(Exception, match="1"):
        run(gx, {cotangent: np.ones((2, 3))})
