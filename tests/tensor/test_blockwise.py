"""``Blockwise``: a core op mapped over batch dimensions, on both paths."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.graph.replace import vectorize_graph
from lucent.gradient import verify_grad
from lucent.tensor.blockwise import Blockwise, _parse_gufunc_signature, safe_signature
from lucent.tensor.linalg import Det, MatrixInverse, Solve, det, inv, solve
from lucent.tensor.type import TensorType
from tests import helpers

RNG = np.random.default_rng(11)


def _mats(*batch, n=3):
    return RNG.normal(size=(*batch, n, n)) + n * np.eye(n)


class _NoSignature(Op):
    __props__ = ()


def test_parse_signature():
    assert _parse_gufunc_signature("(m,n),(n)->(m)") == ([("m", "n"), ("n",)], [("m",)])
    assert _parse_gufunc_signature("(), (m, 2) -> ()") == ([(), ("m", "2")], [()])
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        _parse_gufunc_signature("(m,n)(n)->(m)")
    assert safe_signature([2, 0], [1]) == "(i00,i01),()->(o00)"


def test_make_node_types_and_errors():
    A = lt.tensor("A", dtype="float64", shape=(5, 1, 3, 3))
    b = lt.tensor("b", dtype="float64", shape=(4, 3, 2))
    out = Blockwise(Solve(b_ndim=2))(A, b)
    assert out.type.shape == (5, 4, 3, 2)
    text = str(out.owner.op)
    assert text.startswith("Blockwise{") and text.endswith(", (m,m),(m,n)->(m,n)}")
    with pytest.raises(TypeError, match="already a Blockwise"):
        Blockwise(Blockwise(Det()))
    with pytest.raises(ValueError, match="Signature not provided"):
        Blockwise(_NoSignature())
    with pytest.raises(ValueError, match="insufficient core dimensions"):
        Blockwise(Det())(lt.dvector("v"))
    with pytest.raises(ValueError, match="Incompatible Blockwise batch"):
        Blockwise(Solve(b_ndim=2))(
            lt.tensor("x", dtype="float64", shape=(2, 3, 3)), lt.tensor("y", dtype="float64", shape=(4, 3, 1))
        )


def test_linalg_functions_batch_through_blockwise():
    A = lt.dtensor3("A")
    assert isinstance(inv(A).owner.op, Blockwise) and isinstance(inv(A).owner.op.core_op, MatrixInverse)
    assert isinstance(det(lt.dmatrix()).owner.op, Det)  # no batch dimension: the core op itself
    assert solve(A, lt.dmatrix("b"), b_ndim=1).type.ndim == 2


def test_values_shapes_and_broadcasting(lucent_mode):
    A = lt.tensor("A", dtype="float64", shape=(None, 1, None, None))
    B = lt.tensor("B", dtype="float64", shape=(None, None, None))
    a, b = _mats(2, 1), RNG.normal(size=(4, 3, 2))
    x, d, shape, empty = helpers.run(
        [solve(A, B), det(A), solve(A, B).shape, inv(A[:0])],
        {A: a, B: b},
    )
    np.testing.assert_allclose(x, np.linalg.solve(a, b[None]), rtol=1e-10)
    np.testing.assert_allclose(d, np.linalg.det(a), rtol=1e-10)
    np.testing.assert_array_equal(shape, (2, 4, 3, 2))
    assert empty.shape == (0, 1, 3, 3)


def test_runtime_broadcasting_is_refused(lucent_mode):
    A, B = lt.dtensor3("A"), lt.dtensor3("B")
    with pytest.raises(ValueError, match="(?i)broadcast"):
        helpers.run(solve(A, B), {A: _mats(1), B: RNG.normal(size=(3, 3, 2))})


class _Square(Op):
    """A core op without a Numba kernel: Blockwise then runs its perform."""

    __props__ = ()
    gufunc_signature = "(n)->(n)"

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] ** 2

    def L_op(self, inputs, outputs, grads):
        return [2 * inputs[0] * grads[0]]


def test_gradient_sums_broadcast_batch_dims():
    a = _mats(3)
    b = RNG.normal(size=(1, 3, 2))
    verify_grad(lambda A, B: solve(A, B), [a, b], rng=np.random.default_rng(1), mode="FAST_COMPILE")
    verify_grad(lambda A: det(A), [a], rng=np.random.default_rng(2), mode="FAST_COMPILE")
    x = lt.dmatrix("x")
    g = lucent.grad(Blockwise(_Square())(x).sum(), x)
    np.testing.assert_allclose(g.eval({x: np.ones((2, 3))}), 2 * np.ones((2, 3)))


def test_vectorize_graph_uses_blockwise_and_rewrite_removes_it():
    x = lt.dmatrix("x")
    X = lt.dtensor3("X")
    out = vectorize_graph(inv(x), {x: X})
    assert isinstance(out.owner.op, Blockwise)
    f = lucent.function([x], Blockwise(MatrixInverse())(x), mode="FAST_COMPILE")
    assert not any(isinstance(n.op, Blockwise) for n in f.maker.fgraph.toposort())
    one = lt.tensor("one", dtype="float64", shape=(1, None, None))
    g = lucent.function([one], det(one), mode="FAST_RUN")
    assert not any(isinstance(n.op, Blockwise) for n in g.maker.fgraph.toposort())
    a = _mats(1)
    np.testing.assert_allclose(g(a), np.linalg.det(a))


def test_blockwise_of_op_without_kernel_runs_on_both_paths(lucent_mode):
    x = lt.dmatrix("x")
    np.testing.assert_allclose(helpers.run(Blockwise(_Square())(x), {x: np.full((2, 3), 3.0)}), np.full((2, 3), 9.0))


def test_vectorize_fallback_refuses_non_tensor_inputs():
    from lucent.tensor.blockwise import vectorize_node_fallback
    from lucent.link.c.type import generic

    class TakesSlice(Op):
        __props__ = ()

        def make_node(self, x, s):
            return Apply(self, [x, s], [x.type()])

    x = lt.dvector("x")
    s = generic()
    node = TakesSlice().make_node(x, s)
    with pytest.raises(NotImplementedError, match="Cannot vectorize"):
        vectorize_node_fallback(node.op, node, lt.dmatrix("X"), s)


def test_blockwise_with_core_shape(lucent_mode):
    """The wrapper computes what its Blockwise does; the core shapes are extra, unread inputs."""
    from lucent.tensor.blockwise import BlockwiseWithCoreShape

    A = lt.tensor("A", dtype="float64", shape=(None, 3, 3))
    b = lt.tensor("b", dtype="float64", shape=(None, 3))
    out = Blockwise(Solve(b_ndim=1))(A, b)
    core = lt.as_tensor_variable(np.array([3], dtype="int64"))
    op = BlockwiseWithCoreShape([A, b, core], [out])
    assert op.core_op == Solve(b_ndim=1) and str(op) == f"[{out.owner.op}]"
    wrapped = op(A, b, core)
    assert wrapped.type == out.type
    a_val, b_val = _mats(4), RNG.normal(size=(4, 3))
    f = lucent.function([A, b], [wrapped, wrapped.shape], mode=helpers.current_mode())
    value, shape = f(a_val, b_val)
    np.testing.assert_allclose(value, np.linalg.solve(a_val, b_val[..., None])[..., 0])
    assert tuple(shape) == (4, 3)
    # The gradient is the wrapped Blockwise's (checked on the reference path: it is graph-level).
    g = lucent.grad(wrapped.sum(), b)
    np.testing.assert_allclose(
        lucent.function([A, b], g, mode="FAST_COMPILE")(a_val, b_val),
        lucent.function([A, b], lucent.grad(out.sum(), b), mode="FAST_COMPILE")(a_val, b_val),
    )
    with pytest.raises(ValueError, match="all the outputs of one Blockwise"):
        BlockwiseWithCoreShape([A, b, core], [A])
    with pytest.raises(TypeError, match="integer vector"):
        op(A, b, lt.dvector())
    with pytest.raises(ValueError, match="core dimension"):
        op(A, b, np.array([3, 3], dtype="int64"))
