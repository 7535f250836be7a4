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


# --------------------------------------------------------------------------- #
# In place, shapes from PyTensor-3-style core ops, late removal of unbatched nodes
# --------------------------------------------------------------------------- #
class _CopyOrInplace(Op):
    """Three element-wise outputs, each a copy of its input or written over it."""

    __props__ = ("inplace",)

    def __init__(self, inplace=()):
        self.inplace = tuple(inplace)
        self.destroy_map = {i: [i] for i in self.inplace}

    def make_node(self, *inputs):
        inputs = [lt.as_tensor_variable(i) for i in inputs]
        return Apply(self, inputs, [i.type() for i in inputs])

    def inplace_on_inputs(self, allowed_inplace_inputs):
        return type(self)(inplace=tuple(allowed_inplace_inputs))

    def perform(self, node, inputs, outputs):
        for i, (x, out) in enumerate(zip(inputs, outputs)):
            y = x if i in self.inplace else x.copy()
            y += 1
            out[0] = y


def test_blockwise_inplace_rewrite_respects_protection_and_aliasing():
    from lucent import In
    from lucent.compile.aliasing import add_supervisor_to_fgraph
    from lucent.graph.fg import FunctionGraph
    from lucent.graph.rewriting.utils import rewrite_graph

    op = Blockwise(_CopyOrInplace(), signature="(),(),()->(),(),()")
    x, y, z = lt.dmatrices("x", "y", "z")

    def destroy_map(outs, mutable):
        fg = FunctionGraph([x, y, z], outs)
        add_supervisor_to_fgraph(fg, [In(v, mutable=m) for v, m in zip(fg.inputs, mutable)])
        rewrite_graph(fg, include=("inplace",))
        return fg.outputs[0].owner.op.destroy_map

    assert destroy_map(op(x.T, y.T, z.T), (True, True, True)) == {0: [0], 1: [1], 2: [2]}
    assert destroy_map(op(x.T, y.T, z.T), (True, False, True)) == {0: [0], 2: [2]}
    # x is read twice (two views): the node may not overwrite what it still reads.
    assert destroy_map(op(x.T, y.T, x.T), (True, True, True)) == {1: [1]}
    # An input broadcast along a batch dimension is not offered.
    b = lt.tensor("b", shape=(1, None))
    fg = FunctionGraph([x, b], op(x, b, x * 2))
    add_supervisor_to_fgraph(fg, [In(v, mutable=True) for v in fg.inputs])
    rewrite_graph(fg, include=("inplace",))
    assert 1 not in {i for ins in fg.outputs[0].owner.op.destroy_map.values() for i in ins}


@pytest.mark.not_debugmode(reason="checks the caller's buffer holds the result; DebugMode runs every node on copies")
def test_blockwise_inplace_writes_the_destroyed_input(lucent_mode):
    """Both paths write an output over the input it destroys (and compute block 0 once)."""
    from lucent import In
    from lucent.tensor.linalg import cholesky, solve_triangular

    X = lt.tensor("X", shape=(4, None, None))
    A = lt.tensor("A", shape=(4, 3, 3))
    b = lt.tensor("b", shape=(4, 3))
    mode = lucent.compile.mode.get_mode(helpers.current_mode()).including("inplace")
    f = lucent.function([In(X, mutable=True), A, In(b, mutable=True)],
                        [cholesky(X), solve_triangular(A, b, lower=True, b_ndim=1)], mode=mode)
    nodes = {type(n.op.core_op).__name__: n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Blockwise)}
    assert nodes["Cholesky"].op.destroy_map == {0: [0]}
    assert nodes["SolveTriangular"].op.destroy_map == {0: [1]}
    m = RNG.normal(size=(4, 5, 5))
    xv = m @ m.transpose(0, 2, 1) + 5 * np.eye(5)
    av, bv = np.tril(_mats(4)), RNG.normal(size=(4, 3))
    x0, b0 = xv.copy(), bv.copy()
    L, sol = f(xv, av, bv)
    np.testing.assert_allclose(L, np.linalg.cholesky(x0), rtol=1e-10)
    np.testing.assert_allclose(sol, np.linalg.solve(av, b0[..., None])[..., 0], rtol=1e-10)
    np.testing.assert_allclose(xv, L, rtol=1e-10)  # the result lives in X's buffer
    np.testing.assert_allclose(bv, sol, rtol=1e-10)


def test_solve_overwrite_a_factorises_a_in_place():
    """Solve{overwrite_a} on the fast path: LAPACK ?gesv works in a column-major ``a``'s memory."""
    import scipy.linalg

    from lucent import In

    A, b = lt.tensor("A", shape=(3, 4, 4)), lt.dvector("b")
    f = lucent.function([In(A, mutable=True), b], solve(A, b, b_ndim=1), mode="FAST_RUN")
    assert f.maker.fgraph.outputs[0].owner.op.destroy_map == {0: [0]}
    av = np.swapaxes(_mats(3, n=4), -1, -2)  # column-major blocks
    bv = RNG.normal(size=4)
    a0 = av.copy()
    got = f(av, bv)
    np.testing.assert_allclose(got, [scipy.linalg.solve(a, bv) for a in a0], rtol=1e-10)
    assert not np.array_equal(av, a0)
    singular = np.swapaxes(np.zeros((3, 4, 4)), -1, -2)
    assert np.isnan(f(singular, bv)).all()
    c = _mats(3, n=4)  # row-major blocks go through the copying path, untouched
    c0 = c.copy()
    np.testing.assert_allclose(f(c, bv), [scipy.linalg.solve(a, bv) for a in c0], rtol=1e-10)


class _TwoArgInferShape(Op):
    """A core op written for PyTensor 3: ``infer_shape(node, input_shapes)``."""

    def make_node(self, a, b):
        a, b = lt.as_tensor_variable(a), lt.as_tensor_variable(b)
        return Apply(self, [a, b], [lt.dvector(), lt.dvector()])

    def perform(self, node, inputs, outputs):
        a, b = inputs
        outputs[0][0] = np.arange(a.size + b.size, dtype="float64")
        outputs[1][0] = np.arange(a.sum() + b.sum(), dtype="float64")

    def infer_shape(self, node, input_shapes):
        a, b = node.inputs
        [(na,), (nb,)] = input_shapes
        return [(na + nb,), (lt.cast(a.sum() + b.sum(), "int64"),)]


def test_core_infer_shape_with_two_arguments_and_literal_lengths():
    op = Blockwise(_TwoArgInferShape(), signature="(a),(b)->(c),(d)")
    a, b = lt.tensor("a", shape=(5, 3)), lt.tensor("b", shape=(1, 4))
    c, d = op(a, b)
    fc = lucent.function([a, b], c.shape, mode="FAST_RUN")
    fd = lucent.function([a, b], d.shape, mode="FAST_RUN")
    core = lambda f: [n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Blockwise)]  # noqa: E731
    assert not core(fc) and core(fd)  # d's length depends on each block's values
    assert tuple(fc(np.zeros((5, 3)), np.zeros((1, 4)))) == (5, 7)
    assert tuple(fd(np.zeros((5, 3)), np.zeros((1, 4)))) == (5, 0)
    # A literal length in the signature needs no core shape at all.
    lit = Blockwise(_TwoArgInferShape(), signature="(a),(b)->(2),(d)")
    out = lit(a, b)[0]
    f = lucent.function([a, b], out.shape[-1], mode="FAST_RUN")
    assert not core(f) and int(f(np.zeros((5, 3)), np.zeros((1, 4)))) == 2


def test_unbatched_blockwise_is_removed_late():
    """Shape rewrites see the Blockwise (its signature names the lengths); the compiled
    graph runs the core op."""
    x = lt.dmatrix("x")
    node = Blockwise(MatrixInverse()).make_node(x)
    assert isinstance(node.op, Blockwise)
    canon = lucent.graph.rewriting.utils.rewrite_graph(node.outputs[0], include=("canonicalize",))
    assert isinstance(canon.owner.op, Blockwise)
    f = lucent.function([x], node.outputs[0], mode="FAST_COMPILE")
    assert [type(n.op) for n in f.maker.fgraph.apply_nodes] == [MatrixInverse]


def test_vectorize_fallback_refuses_other_types_first():
    from lucent.tensor.blockwise import vectorize_node_fallback
    from lucent.tensor.random import normal

    node = normal().owner
    with pytest.raises(NotImplementedError, match="Cannot vectorize node .* of type RandomGeneratorType"):
        vectorize_node_fallback(node.op, node, *node.inputs)
