"""Tests of the structural ops of ``lucent.tensor.basic``."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
import lucent.tensor.basic as B
from lucent.gradient import verify_grad
from lucent.graph.basic import Constant
from lucent.scalar.basic import ScalarType
from lucent.tensor.type import TensorType
from tests.helpers import evaluate_with_perform, run
from tests.tensor.test_shape import check_infer_shape


# --------------------------------------------------------------------------- #
# Scalars <-> tensors
# --------------------------------------------------------------------------- #
def test_tensor_from_scalar_and_back():
    s = ScalarType("float32")("s")
    t = B.tensor_from_scalar(s)
    assert t.type == TensorType("float32", ())
    out = run(t, {s: np.float32(1.5)})
    assert isinstance(out, np.ndarray) and out.dtype == np.float32 and out.ndim == 0
    back = B.scalar_from_tensor(t)
    assert back.type == ScalarType("float32")
    v = run(back, {s: np.float32(2.5)})
    assert v == np.float32(2.5) and v.dtype == np.float32
    with pytest.raises(TypeError, match="0-d"):
        B.scalar_from_tensor(lt.vector())


def test_as_tensor_variable_of_scalar_variable():
    s = ScalarType("int32")()
    t = lt.as_tensor_variable(s)
    assert isinstance(t.owner.op, B.TensorFromScalar)


# --------------------------------------------------------------------------- #
# Constant values and vector lengths
# --------------------------------------------------------------------------- #
def test_get_scalar_constant_value():
    assert B.get_scalar_constant_value(3) == 3
    assert B.get_scalar_constant_value(lt.constant(2.5)) == 2.5
    x = lt.matrix("x", shape=(4, None))
    assert B.get_scalar_constant_value(x.shape[0]) == 4
    assert B.get_scalar_constant_value(x.shape[-2]) == 4
    assert B.get_scalar_constant_value(B.stack([lt.constant(7), lt.lscalar()])[0]) == 7
    assert B.get_scalar_constant_value(x.shape[0] * 2 + 1) == 9
    for not_const in [x.shape[1], lt.lscalar(), lt.constant([1, 2]), x]:
        with pytest.raises(B.NotScalarConstantError):
            B.get_scalar_constant_value(not_const)


def test_get_vector_length():
    assert B.get_vector_length(lt.constant([1, 2, 3])) == 3
    assert B.get_vector_length(lt.tensor3().shape) == 3
    assert B.get_vector_length(B.stack([lt.lscalar(), lt.lscalar()])) == 2
    assert B.get_vector_length(B.concatenate([lt.tensor3().shape, lt.matrix().shape])) == 5
    with pytest.raises(ValueError, match="cannot be determined"):
        B.get_vector_length(lt.lvector())
    with pytest.raises(TypeError, match="must be a vector"):
        B.get_vector_length(lt.matrix())


# --------------------------------------------------------------------------- #
# Join / concatenate / stack
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("axis", [0, 1, -1, -2])
def test_concatenate_matches_numpy(axis):
    a = lt.matrix("a")
    b = lt.matrix("b")
    rng = np.random.default_rng(3)
    A, Bv = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    out_var = B.concatenate([a, b], axis=axis)
    assert str(out_var.owner.op) == f"Join{{axis={axis % 2}}}"
    out = check_infer_shape(out_var, {a: A, b: Bv})
    np.testing.assert_array_equal(out, np.concatenate([A, Bv], axis=axis))


def test_join_static_shapes_and_dtype():
    assert B.join(0, lt.vector(shape=(2,)), lt.vector(shape=(3,))).type.shape == (5,)
    assert B.join(0, lt.vector(), lt.vector(shape=(3,))).type.shape == (None,)
    m1, m2 = lt.matrix(shape=(2, None)), lt.matrix(shape=(2, 3))
    assert B.concatenate([m1, m2], axis=1).type.shape == (2, None)
    assert B.concatenate([lt.matrix(shape=(None, 3)), m2], axis=0).type.shape == (None, 3)
    assert B.concatenate([lt.matrix(shape=(1, None)), m2], axis=0).type.shape == (3, 3)
    mixed = B.concatenate([lt.fvector(), lt.ivector(), lt.bvector()])
    assert mixed.type.dtype == "float64"
    out = run(mixed, {mixed.owner.inputs[0]: np.ones(1, "float32"),
                      mixed.owner.inputs[1]: np.array([2], "int32"),
                      mixed.owner.inputs[2]: np.array([], "int8")})
    assert out.dtype == np.float64 and out.tolist() == [1.0, 2.0]
    v = lt.vector()
    assert B.join(0, v) is v


def test_join_errors():
    with pytest.raises(TypeError, match="same number of dimensions"):
        B.concatenate([lt.vector(), lt.matrix()])
    with pytest.raises(ValueError, match="must match exactly"):
        B.concatenate([lt.matrix(shape=(2, 3)), lt.matrix(shape=(2, 4))], axis=0)
    with pytest.raises(ValueError, match="out of range"):
        B.concatenate([lt.vector(), lt.vector()], axis=1)
    with pytest.raises(TypeError, match="list or tuple"):
        B.concatenate(lt.vector(), lt.vector())
    a, b = lt.matrix("a"), lt.matrix("b")
    with pytest.raises(ValueError, match=r"\(2, 3\), \(2, 4\)"):
        run(B.concatenate([a, b]), {a: np.zeros((2, 3)), b: np.zeros((2, 4))})


def test_join_with_non_contiguous_and_empty_inputs():
    a, b = lt.matrix("a"), lt.matrix("b")
    A = np.arange(12.0).reshape(3, 4)[:, ::2]
    Bv = np.arange(6.0).reshape(2, 3).T
    out = run(B.concatenate([a, b], axis=0), {a: A, b: Bv.T.T[:, :2]})
    np.testing.assert_array_equal(out, np.concatenate([A, Bv[:, :2]]))
    out = run(B.concatenate([a, b], axis=0), {a: np.zeros((0, 2)), b: A})
    np.testing.assert_array_equal(out, A)


def test_join_gradient():
    rng = np.random.default_rng(4)
    verify_grad(lambda x, y: B.concatenate([x, y], axis=1),
                [rng.normal(size=(2, 3)), rng.normal(size=(2, 1))], rng=rng)
    verify_grad(lambda x, y: B.concatenate([x, y * 2, x], axis=0),
                [rng.normal(size=(1, 2)).astype("float32"), rng.normal(size=(3, 2)).astype("float32")], rng=rng)


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_stack_matches_numpy(axis):
    a, b = lt.matrix("a", shape=(2, 3)), lt.matrix("b")
    A, Bv = np.ones((2, 3)), np.arange(6.0).reshape(2, 3)
    out_var = B.stack([a, b], axis=axis)
    assert out_var.type.ndim == 3
    out = check_infer_shape(out_var, {a: A, b: Bv})
    np.testing.assert_array_equal(out, np.stack([A, Bv], axis=axis))
    assert out_var.type.shape[axis] == 2


def test_stack_errors_and_gradient():
    with pytest.raises(TypeError, match="list or tuple"):
        B.stack(lt.vector())
    with pytest.raises(ValueError, match="same number"):
        B.stack([lt.vector(), lt.matrix()])
    verify_grad(lambda x, y: B.stack([x, y], axis=1), [np.arange(3.0), np.ones(3)])


# --------------------------------------------------------------------------- #
# flatten / squeeze / expand_dims / copy
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("shape,ndim", [((2, 3, 4), 1), ((2, 3, 4), 2), ((2, 3, 4), 3), ((), 1), ((0, 5), 1)])
def test_flatten_matches_numpy(shape, ndim):
    x = lt.tensor(dtype="float64", shape=(None,) * len(shape))
    data = np.arange(float(np.prod(shape))).reshape(shape)
    out = run(B.flatten(x, ndim), {x: data})
    expected = data.reshape(shape[: ndim - 1] + (-1,)) if shape else data.reshape(1)
    np.testing.assert_array_equal(out, expected)


def test_flatten_static_shape_and_errors():
    assert B.flatten(lt.tensor3(shape=(2, 3, 4)), 2).type.shape == (2, 12)
    assert B.flatten(lt.tensor3(shape=(None, 3, 4)), 2).type.shape == (None, 12)
    assert B.flatten(lt.matrix()).type.shape == (None,)
    with pytest.raises(ValueError, match="ndim"):
        B.flatten(lt.matrix(), 3)
    verify_grad(lambda a: B.flatten(a), [np.arange(6.0).reshape(2, 3)])


def test_squeeze():
    x = lt.tensor3("x", shape=(1, None, 1))
    assert B.squeeze(x).type.shape == (None,)
    assert B.squeeze(x, axis=-1).type.shape == (1, None)
    data = np.arange(3.0).reshape(1, 3, 1)
    out = run(B.squeeze(x), {x: data})
    np.testing.assert_array_equal(out, data.squeeze())
    # Views are a property of perform: a compiled function copies outputs that alias its inputs.
    assert np.may_share_memory(evaluate_with_perform(B.squeeze(x), {x: data}), data)
    y = lt.matrix("y")
    sq = B.squeeze(y, axis=0)
    assert sq.type.shape == (None,)
    np.testing.assert_array_equal(run(sq, {y: np.ones((1, 4))}), np.ones(4))
    with pytest.raises(AssertionError, match="expected 1"):
        run(sq, {y: np.ones((2, 4))})
    with pytest.raises(ValueError, match="not 1"):
        B.squeeze(lt.matrix(shape=(2, 3)), axis=0)
    assert B.squeeze(y) is y


def test_expand_dims():
    v = lt.vector("v", shape=(3,))
    assert B.expand_dims(v, 0).type.shape == (1, 3)
    assert B.expand_dims(v, (0, 2)).type.shape == (1, 3, 1)
    assert B.expand_dims(v, -1).type.shape == (3, 1)
    data = np.arange(3.0)
    np.testing.assert_array_equal(run(B.expand_dims(v, (0, -1)), {v: data}), np.expand_dims(data, (0, -1)))
    with pytest.raises(ValueError, match="repeated"):
        B.expand_dims(v, (0, 0))
    with pytest.raises(ValueError, match="out of range"):
        B.expand_dims(v, 3)


def test_tensor_copy_is_a_copy():
    x = lt.matrix("x")
    c = B.tensor_copy(x, name="c")
    assert c.name == "c" and c.type == x.type
    assert B.TensorCopy.view_map == {}
    data = np.arange(6.0).reshape(2, 3).T
    out = check_infer_shape(c, {x: data})
    np.testing.assert_array_equal(out, data)
    assert not np.may_share_memory(out, data)
    verify_grad(lambda a: B.tensor_copy(a), [data.copy()])
    assert x.copy().owner.op == B.TensorCopy()


# --------------------------------------------------------------------------- #
# re-exports and package names
# --------------------------------------------------------------------------- #
def test_transpose_and_cast_reexports():
    x = lt.matrix("x")
    data = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(run(B.transpose(x), {x: data}), data.T)
    c = B.cast(x, "int32")
    assert c.type.dtype == "int32"
    np.testing.assert_array_equal(run(c, {x: data}), data.astype("int32"))


def test_public_names_in_tensor_namespace():
    for name in ["alloc", "zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "fill",
                 "second", "join", "concatenate", "stack", "flatten", "squeeze", "expand_dims",
                 "tensor_copy", "arange", "eye", "transpose", "cast", "get_scalar_constant_value",
                 "get_vector_length", "NotScalarConstantError", "tensor_from_scalar",
                 "scalar_from_tensor", "Join", "Alloc", "ARange"]:
        assert hasattr(lt, name), name


def test_compiled_function_with_basic_ops():
    x = lt.vector("x")
    f = lucent.function([x], [B.stack([x, x * 2]), B.concatenate([x, B.zeros(2)]), x.shape[0]],
                        mode="FAST_COMPILE")
    s, c, n = f(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(s, [[1, 2], [2, 4]])
    np.testing.assert_array_equal(c, [1, 2, 0, 0])
    assert n == 2
    assert isinstance(B.constant(1), Constant)


def test_second_is_the_elemwise_op_and_scalar_from_tensor_vectorizes():
    from lucent.graph.replace import vectorize_graph
    from lucent.tensor import basic as tb
    from lucent.tensor.elemwise import Elemwise

    v = lt.dvector("v")
    assert isinstance(tb.second, Elemwise) and tb.second(v, 1.0).owner.op == tb.second
    s = lt.dscalar("s")
    batched = vectorize_graph(tb.scalar_from_tensor(s), {s: v})
    assert batched is v


def test_underlying_scalar_constant_value_digs_through_value_preserving_ops():
    from lucent.raise_op import Assert
    from lucent.tensor.shape import NoneConst

    g = B.get_underlying_scalar_constant_value
    c = B.constant(np.arange(6.0).reshape(2, 3))
    assert g(c[1, 2]) == 5.0
    assert g(B.constant(np.full((2, 2), 3))) == 3  # all entries equal
    assert g(lt.second(lt.vector(), 2.5)) == 2.5
    assert g(B.alloc(B.constant(4.0), 3, 2)) == 4.0
    assert g(B.constant(0.25) < 0.5) and g(B.constant(7) % 4) == 3
    two = B.constant(2)
    assert g(Assert()(two, two > 1)) == 2
    with pytest.raises(B.NotScalarConstantError):
        g(Assert()(two, two > 2))
    with pytest.raises(B.NotScalarConstantError):
        g(Assert()(two, two > lt.scalar()))
    assert g(NoneConst) is None and g(NoneConst, only_process_constants=True) is None
    assert g(B.stack([lt.iscalar(), 2, 3])[1]) == 2
    assert g(B.join(0, B.make_vector(lt.iscalar()), B.constant(np.array([5, 6])))[2]) == 6
    v = lt.dvector()
    assert g(v, raise_not_constant=False) is v
    # get_scalar_constant_value: 0-d values only, and a fresh array every time.
    with pytest.raises(B.NotScalarConstantError):
        B.get_scalar_constant_value(B.constant(np.full(3, 7)))
    value = B.get_scalar_constant_value(B.constant(3))
    value += 1
    assert B.get_scalar_constant_value(B.constant(3)) == 3


def test_transpose_names_and_axis_errors():
    x3 = lt.dtensor3("x3")
    assert B.transpose(x3).name == "x3.T" and B.transpose(x3, (0, 2, 1)).name is None
    assert B.transpose(lt.dvector("v")) is not None
    with pytest.raises(IndexError):  # AxisError is an IndexError and a ValueError
        B.stack([lt.imatrix(), lt.imatrix()], 4)
    with pytest.raises(TypeError, match="Sequence"):
        B.stack(lt.imatrix(), lt.imatrix())
    with pytest.raises(TypeError, match="symbolic"):
        B.Join(lt.lscalar())
    with pytest.raises(ValueError, match="scalar"):
        B.MakeVector()(lt.vector(), lt.vector())


def test_value_dependent_static_shapes_follow_a_rebuild():
    from lucent.graph.replace import clone_replace

    n = B.as_tensor_variable(3)
    y = B.alloc(0.0, n, 2)
    assert y.type.shape == (3, 2)
    assert clone_replace(y, {n: B.as_tensor_variable(5)}, rebuild_strict=False).type.shape == (5, 2)
    z = B.eye(n)
    assert clone_replace(z, {n: B.as_tensor_variable(4)}, rebuild_strict=False).type.shape == (4, 4)


def test_alloc_is_not_folded_into_a_constant_output():
    val = B.constant(np.ones((1, 1)))
    f = lucent.function([], B.alloc(val, 5, 6), mode="FAST_RUN")
    assert sum(isinstance(n.op, B.Alloc) for n in f.maker.fgraph.toposort()) == 1
    np.testing.assert_array_equal(f(), np.ones((5, 6)))


def test_as_tensor_variable_of_an_apply_uses_its_default_output():
    from lucent.graph.basic import Apply
    from lucent.graph.op import Op

    class TwoOut(Op):
        def __init__(self, default):
            self.default_output = default

        def make_node(self, x):
            return Apply(self, [x], [x.type(), x.type()])

    x = lt.dvector()
    node = TwoOut(-1).make_node(x)
    assert B.as_tensor_variable(node) is node.outputs[1]
    with pytest.raises(IndexError, match="out of range"):
        B.as_tensor_variable(TwoOut(2).make_node(x))
    with pytest.raises(TypeError, match="must be an int"):
        B.as_tensor_variable(TwoOut(1.0).make_node(x))
    with pytest.raises(TypeError, match="without default_output"):
        B.as_tensor_variable(TwoOut(None).make_node(x))
