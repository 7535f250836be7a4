"""Tests of ``lucent.tensor.shape``: Shape, Shape_i, SpecifyShape, Reshape, padding."""

import importlib

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.gradient import verify_grad
from lucent.graph.basic import Constant
from lucent.printing import debugprint
from lucent.tensor.type import TensorType
from tests.helpers import evaluate_with_perform, run

S = importlib.import_module("lucent.tensor.shape")


def check_infer_shape(out, givens):
    """The op's symbolic ``infer_shape`` evaluates to the shape of the value it computes."""
    node = out.owner
    in_shapes = [
        [S.Shape_i(d)(i) for d in range(i.type.ndim)] if isinstance(i.type, TensorType) else None
        for i in node.inputs
    ]
    sym = node.op.infer_shape(None, node, in_shapes)[out.index]
    assert len(sym) == out.type.ndim
    values = run([lt.as_tensor_variable(s) for s in sym] + [out], givens)
    actual = values[-1]
    assert tuple(int(v) for v in values[:-1]) == actual.shape
    return actual


# --------------------------------------------------------------------------- #
# Shape / Shape_i
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 0, 4)])
def test_shape_values_and_type(shape):
    x = lt.tensor(dtype="float64", shape=(None,) * len(shape))
    s = S.shape(x)
    assert s.type == TensorType("int64", (len(shape),))
    out = run(s, {x: np.zeros(shape)})
    assert out.dtype == np.int64 and tuple(out) == shape
    check_infer_shape(s, {x: np.zeros(shape)})


def test_shape_property_and_indexing():
    x = lt.matrix("x")
    assert isinstance(x.shape.owner.op, S.Shape)
    assert run(x.shape[1], {x: np.zeros((2, 5))}) == 5


def test_shape_i():
    x = lt.tensor3("x")
    op = S.Shape_i(2)
    assert str(op) == "Shape_i{2}"
    assert op == S.Shape_i(2) and op != S.Shape_i(1)
    v = op(x)
    assert v.type == TensorType("int64", ())
    assert run(v, {x: np.zeros((1, 2, 7), dtype="float32")}) == 7
    with pytest.raises(TypeError, match="only 3 dimensions"):
        S.Shape_i(3)(x)
    with pytest.raises(TypeError):
        S.Shape_i(-1)


def test_shape_i_helper_folds_static_lengths():
    x = lt.matrix("x", shape=(3, None))
    assert isinstance(S.shape_i(x, 0), Constant) and int(S.shape_i(x, 0).data) == 3
    assert isinstance(S.shape_i(x, -1).owner.op, S.Shape_i)


def test_shape_gradient_is_disconnected():
    x = lt.vector("x")
    cost = lt.cast(x.shape[0], "float64") + x.sum()
    g = lucent.grad(cost, x)
    assert np.allclose(run(g, {x: np.ones(3)}), np.ones(3))


# --------------------------------------------------------------------------- #
# SpecifyShape
# --------------------------------------------------------------------------- #
def test_seed_filter_variable_inserts_specify_shape():
    v1 = TensorType("float64", (2, None))()
    v2 = TensorType("float64", (2, 1))()
    assert v1.type.filter_variable(v2) is v2
    v3 = v2.type.filter_variable(v1)
    assert isinstance(v3.owner.op, S.SpecifyShape)
    assert v3.type == TensorType("float64", (2, 1))
    text = debugprint(v3, print_type=True, file="str")
    assert "SpecifyShape" in text
    assert "TensorConstant{2}" in text and "TensorConstant{1}" in text
    assert text.count("TensorType(int8, ())") == 2


def test_specify_shape_none_entries_use_noneconst():
    x = lt.matrix("x")
    y = S.specify_shape(x, (2, None))
    node = y.owner
    assert len(node.inputs) == 3
    assert node.inputs[2] is S.NoneConst and str(node.inputs[2]) == "NoneConst"
    assert str(node.inputs[2].type) == "NoneTypeT"
    assert y.type.shape == (2, None)
    check_infer_shape(y, {x: np.zeros((2, 5))})


def test_specify_shape_returns_input_when_nothing_to_add():
    x = lt.matrix("x", shape=(2, 3))
    assert S.specify_shape(x, (2, 3)) is x
    assert S.specify_shape(lt.matrix(), (None, None)).owner is None


def test_specify_shape_runtime_check_and_view():
    x = lt.matrix("x")
    n = lt.lscalar("n")
    y = S.specify_shape(x, (2, n))
    assert y.type.shape == (2, None)
    assert S.SpecifyShape.view_map == {0: [0]}
    data = np.ones((2, 4))
    np.testing.assert_array_equal(run(y, {x: data, n: np.int64(4)}), data)
    # Views are a property of perform: a compiled function copies outputs that alias its inputs.
    assert np.may_share_memory(evaluate_with_perform(y, {x: data, n: np.int64(4)}), data)
    with pytest.raises(AssertionError, match=r"dim 1 .* length 4, expected 3"):
        run(y, {x: data, n: np.int64(3)})
    with pytest.raises(AssertionError, match=r"dim 0 .* length 3, expected 2"):
        run(y, {x: np.ones((3, 4)), n: np.int64(4)})


def test_specify_shape_build_time_errors():
    x = lt.matrix("x", shape=(2, None))
    # A length contradicting the static one keeps the static type and fails when run.
    y = S.specify_shape(x, (3, None))
    assert y is not x and y.type.shape == (2, None)
    with pytest.raises(AssertionError, match="expected 3"):
        run(y, {x: np.ones((2, 4))})
    with pytest.raises(ValueError, match="will never match"):
        S.specify_shape(x, (2,))
    with pytest.raises(TypeError, match="must be integer types"):
        S.specify_shape(x, (lt.dscalar(), None))
    with pytest.raises(ValueError, match="must have fixed dimensions"):
        S.specify_shape(x, lt.ivector())


def test_specify_shape_from_symbolic_vector():
    x = lt.matrix("x")
    m = lt.matrix("m", shape=(4, 5))
    y = S.specify_shape(x, m.shape)
    assert y.type.shape == (4, 5)
    out = run(y, {x: np.zeros((4, 5)), m: np.zeros((4, 5))})
    assert out.shape == (4, 5)


def test_specify_shape_gradient():
    verify_grad(lambda a: S.specify_shape(a, (3, None)) * 2, [np.arange(6.0).reshape(3, 2)])


def test_specify_broadcastable():
    x = lt.matrix("x")
    y = S.specify_broadcastable(x, 1)
    assert y.type.shape == (None, 1)
    assert S.specify_broadcastable(x) is x
    with pytest.raises(AssertionError, match="expected 1"):
        run(y, {x: np.zeros((2, 2))})
    with pytest.raises(ValueError, match="out of bounds"):
        S.specify_broadcastable(x, 2)


def test_specify_shape_with_compiled_function():
    x = lt.matrix("x")
    f = lucent.function([x], S.specify_shape(x, (None, 2)) + 1, mode="FAST_COMPILE")
    assert np.array_equal(f(np.zeros((3, 2))), np.ones((3, 2)))
    with pytest.raises(AssertionError):
        f(np.zeros((3, 3)))


# --------------------------------------------------------------------------- #
# Reshape
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
@pytest.mark.parametrize(
    "in_shape,new_shape",
    [((2, 3), (3, 2)), ((2, 3), (6,)), ((2, 3), (-1,)), ((2, 3), (3, -1)), ((2, 3, 4), (4, -1, 2)),
     ((6,), (1, 6, 1)), ((0, 3), (3, 0)), ((0, 3), (-1, 3)), ((1,), ())],
)
def test_reshape_matches_numpy(dtype, in_shape, new_shape):
    x = lt.tensor(dtype=dtype, shape=(None,) * len(in_shape))
    y = S.reshape(x, new_shape)
    assert str(y.owner.op) == f"Reshape{{{len(new_shape)}}}"
    data = np.arange(int(np.prod(in_shape))).astype(dtype).reshape(in_shape)
    out = check_infer_shape(y, {x: data})
    np.testing.assert_array_equal(out, data.reshape(new_shape))
    assert out.dtype == dtype
    # Views are a property of perform: a compiled function copies outputs that alias its inputs.
    assert np.may_share_memory(evaluate_with_perform(y, {x: data}), data) or data.size == 0


def test_reshape_static_shape():
    x = lt.matrix("x", shape=(2, 3))
    assert S.reshape(x, (3, -1)).type.shape == (3, 2)
    assert S.reshape(x, 6).type.shape == (6,)
    y = lt.matrix("y")
    assert S.reshape(y, (3, -1)).type.shape == (3, None)
    v = lt.vector("v")
    assert S.reshape(v, (y.shape[0], 2)).type.shape == (None, 2)
    assert S.reshape(v, (x.shape[0], 2)).type.shape == (2, 2)
    assert x.reshape((6,)).type.shape == (6,)


def test_reshape_symbolic_entries_and_ndim():
    x = lt.matrix("x")
    n = lt.iscalar("n")
    y = S.reshape(x, (n, -1))
    data = np.arange(12.0).reshape(3, 4)
    out = check_infer_shape(y, {x: data, n: np.int32(2)})
    assert out.shape == (2, 6)
    shp = lt.lvector("shp")
    with pytest.raises(ValueError, match="pass ndim"):
        S.reshape(x, shp)
    z = S.reshape(x, shp, ndim=3)
    assert z.type.ndim == 3
    out = check_infer_shape(z, {x: data, shp: np.array([2, 2, 3])})
    assert out.shape == (2, 2, 3)


def test_reshape_non_contiguous_input_copies():
    x = lt.matrix("x")
    data = np.arange(12.0).reshape(3, 4).T
    out = run(S.reshape(x, (-1,)), {x: data})
    np.testing.assert_array_equal(out, data.reshape(-1))
    assert not np.may_share_memory(out, data)


def test_reshape_errors():
    x = lt.matrix("x")
    y = S.reshape(x, (4, -1))
    with pytest.raises(ValueError, match=r"\(3, 3\).*\(4, -1\)"):
        run(y, {x: np.zeros((3, 3))})
    shp = lt.lvector("shp")
    with pytest.raises(ValueError, match=r"only one entry may be -1"):
        run(S.reshape(x, shp, ndim=2), {x: np.zeros((2, 2)), shp: np.array([-1, -1])})
    with pytest.raises(ValueError, match=r"shape \(2, 2\) \(size 4\) to shape \(3, 2\)"):
        run(S.reshape(x, shp, ndim=2), {x: np.zeros((2, 2)), shp: np.array([3, 2])})
    static = lt.matrix(shape=(2, 3))
    with pytest.raises(ValueError, match="is incompatible with new shape"):
        S.reshape(static, (4, -1))
    with pytest.raises(ValueError, match="more than one -1"):
        S.reshape(x, (-1, -1))
    with pytest.raises(TypeError, match="integer"):
        S.reshape(x, lt.dvector(), ndim=2)


def test_reshape_gradient():
    rng = np.random.default_rng(1)
    verify_grad(lambda a: S.reshape(a, (2, -1)), [rng.normal(size=(3, 4))], rng=rng)
    verify_grad(lambda a: S.reshape(a.T, (-1,)), [rng.normal(size=(3, 4)).astype("float32")], rng=rng)


def test_reshape_method_with_function():
    x = lt.tensor3("x")
    f = lucent.function([x], x.reshape((x.shape[0], -1)), mode="FAST_COMPILE")
    data = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(f(data), data.reshape(2, 12))


# --------------------------------------------------------------------------- #
# Padding
# --------------------------------------------------------------------------- #
def test_shape_padleft_padright_padaxis():
    v = lt.vector("v", shape=(3,))
    assert S.shape_padleft(v).type.shape == (1, 3)
    assert S.shape_padleft(v, 2).type.shape == (1, 1, 3)
    assert S.shape_padright(v, 2).type.shape == (3, 1, 1)
    assert S.shape_padaxis(v, 0).type.shape == (1, 3)
    assert S.shape_padaxis(v, -1).type.shape == (3, 1)
    assert S.shape_padleft(v, 0) is v
    data = np.arange(3.0)
    out = run(S.shape_padaxis(v, 1), {v: data})
    np.testing.assert_array_equal(out, data[:, None])
    with pytest.raises(IndexError):
        S.shape_padaxis(v, 2)


def test_shape_tuple_uses_static_lengths():
    from lucent.graph.basic import Constant
    from lucent.tensor.shape import shape_tuple

    x = lt.tensor("x", shape=(2, None))
    first, second = shape_tuple(x)
    assert isinstance(first, Constant) and int(first.data) == 2
    assert second.eval({x: np.zeros((2, 5))}) == 5


def test_specify_shape_ellipsis_and_never_matching_lengths():
    from lucent.tensor.shape import specify_shape

    x = lt.tensor("x", shape=(None, None, None, None))
    assert specify_shape(x, ...).type.shape == (None,) * 4
    assert specify_shape(x, (5, ..., 3)).type.shape == (5, None, None, 3)
    assert specify_shape(x, (5, ..., 3, None)).type.shape == (5, None, 3, None)
    y = lt.tensor("y", shape=(1, 2, None))
    assert specify_shape(y, (..., None)) is y
    with pytest.raises(ValueError, match="will never match"):
        specify_shape(lt.dvector(), ())
    with pytest.raises(ValueError, match="Multiple Ellipsis"):
        specify_shape(x, (..., 2, ...))
