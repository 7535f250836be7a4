"""Tests of lucent/tensor/rewriting/shape.py: shapes known before running, reshapes.

Also checks the whole canonicalize stage on the MLP training step: the
graph gets smaller and computes the same cost and updates.
"""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.compile.mode import Mode
from lucent.graph.basic import Constant
from lucent.graph.fg import FunctionGraph
from lucent.scalar import basic as ps
from lucent.tensor.math import ReducedSize
from lucent.tensor.shape import Reshape, Shape, Shape_i, reshape
from tests.models import mlp_data, mlp_training_step
from tests.tensor.rewriting.test_basic import canonicalize, check_values, compile_rewritten, nodes, ops_of, rng


# --------------------------------------------------------------------------- #
# Static lengths become constants
# --------------------------------------------------------------------------- #
def test_shape_of_static_tensor_is_constant():
    x = lt.tensor(dtype="float64", shape=(2, 3), name="x")
    out = lt.shape(x)
    new = canonicalize(out)
    assert isinstance(new, Constant)
    np.testing.assert_array_equal(new.data, [2, 3])
    assert new.data.dtype == np.int64


def test_shape_i_and_indexed_shape_static_are_constants():
    x = lt.tensor(dtype="float32", shape=(None, 5), name="x")
    outs = [Shape_i(1)(x), x.shape[1], x.shape[-1]]
    new = canonicalize(outs)
    for n in new:
        assert isinstance(n, Constant) and int(n.data) == 5
    check_values([x], outs, new, [np.ones((2, 5), dtype="float32")], [np.ones((0, 5), dtype="float32")])


def test_indexed_shape_unknown_becomes_shape_i():
    x = lt.dmatrix("x")
    out = x.shape[0] + x.shape[-1]
    new = canonicalize(out)
    assert not ops_of(new, Shape)
    assert {n.op.i for n in ops_of(new, Shape_i)} == {0, 1}
    check_values([x], out, new, [np.ones((2, 3))], [np.ones((0, 4))])


def test_subtensor_of_make_vector():
    from lucent.tensor.basic import MakeVector

    a, b, c = lt.lscalars("a", "b", "c")
    vec = MakeVector("int64")(a, b, c)
    outs = [vec[1], vec[-1], vec[:-1], vec[::2]]
    new = canonicalize(outs)
    assert new[0] is b and new[1] is c
    assert isinstance(new[2].owner.op, MakeVector) and new[2].owner.inputs == [a, b]
    assert new[3].owner.inputs == [a, c]
    # The length of a Blockwise output the signature does not name stays a Shape_i;
    # the others no longer need the node.
    from lucent.tensor.blockwise import Blockwise
    from lucent.tensor.linalg import MatrixInverse

    x = lt.tensor("x", shape=(5, None, None))
    out = Blockwise(MatrixInverse(), signature="(m,n)->(m,k)")(x)
    f = lucent.function([x], out.shape[:-1], mode="FAST_RUN")
    assert not any(isinstance(n.op, Blockwise) for n in f.maker.fgraph.apply_nodes)
    assert tuple(f(np.zeros((5, 4, 3)))) == (5, 4)


def test_zero_d_shape():
    s = lt.dscalar("s")
    out = lt.shape(s)
    new = canonicalize(out)
    assert isinstance(new, Constant) and new.data.shape == (0,)


# --------------------------------------------------------------------------- #
# ReducedSize
# --------------------------------------------------------------------------- #
def test_reduced_size_static_is_constant():
    x = lt.tensor(dtype="float64", shape=(3, 4), name="x")
    out = ReducedSize(None)(x)
    new = canonicalize(out)
    assert isinstance(new, Constant) and int(new.data) == 12


def test_reduced_size_one_unknown_length_is_shape_i():
    x = lt.tensor(dtype="float64", shape=(None, 4), name="x")
    outs = [ReducedSize(None)(x), ReducedSize((0,))(x)]
    new = canonicalize(outs)
    for n in new:
        assert not ops_of(n, ReducedSize)
    check_values([x], outs, new, [np.ones((3, 4))], [np.ones((0, 4))])


def test_reduced_size_moves_to_elemwise_input():
    x = lt.dmatrix("x")
    out = lt.mean(lt.exp(x) * 2)
    new = canonicalize(out)
    (rs,) = ops_of(new, ReducedSize)
    assert rs.inputs[0].name == "x"
    check_values([x], out, new, [rng().normal(size=(2, 3))], [np.full((1, 2), np.nan)])


def test_reduced_size_empty_axes_and_empty_arrays():
    x = lt.dmatrix("x")
    out = lt.mean(x, axis=0)
    new = canonicalize(out)
    assert not ops_of(new, ReducedSize)
    check_values([x], out, new, [np.ones((3, 2))], [np.ones((1, 0))])


# --------------------------------------------------------------------------- #
# Shapes of computed values come from the inputs
# --------------------------------------------------------------------------- #
def test_shape_of_elemwise_comes_from_input():
    x = lt.dmatrix("x")
    y = lt.dmatrix("y")
    out = (lt.exp(x) + y).shape[1]
    new = canonicalize(out)
    assert not ops_of(new, type(ps.exp)) and not ops_of(new, ps.Add)
    check_values([x, y], out, new, [np.ones((2, 3)), np.ones((2, 3))])


def test_shape_through_broadcast_picks_non_broadcast_input():
    x = lt.tensor(dtype="float64", shape=(1, None), name="x")
    y = lt.dmatrix("y")
    out = (x * y).shape[0]
    new = canonicalize(out)
    (node,) = ops_of(new, Shape_i)
    assert node.inputs[0].name == "y"
    check_values([x, y], out, new, [np.ones((1, 3)), np.ones((4, 3))])


def test_shape_through_dimshuffle_and_reduction():
    x = lt.tensor3("x")
    out = lt.sum(x.dimshuffle(2, 0, 1), axis=1).shape[0]
    new = canonicalize(out)
    (node,) = nodes(new)
    assert isinstance(node.op, Shape_i) and node.op.i == 2 and node.inputs[0].name == "x"
    check_values([x], out, new, [np.ones((2, 3, 4))])


# --------------------------------------------------------------------------- #
# Reshape
# --------------------------------------------------------------------------- #
def test_reshape_to_own_shape_removed():
    x = lt.dmatrix("x")
    outs = [reshape(x, lt.shape(x)), reshape(x, (x.shape[0], x.shape[1])), reshape(x, (x.shape[0], -1))]
    new = canonicalize(outs)
    for n in new:
        assert not ops_of(n, Reshape)
    check_values([x], outs, new, [rng().normal(size=(2, 3))], [np.ones((1, 3))])
    # NumPy cannot infer the -1 of an empty array; the other two forms can run on one.
    check_values([x], outs[:2], new[:2], [np.ones((0, 3))])


def test_reshape_to_static_own_shape_removed():
    x = lt.tensor(dtype="float32", shape=(2, 3), name="x")
    out = reshape(x, (2, 3))
    new = canonicalize(out)
    assert not ops_of(new, Reshape)
    check_values([x], out, new, [np.ones((2, 3), dtype="float32")])


def test_reshape_changing_shape_stays():
    x = lt.dmatrix("x")
    outs = [reshape(x, (x.shape[1], x.shape[0])), reshape(x, (-1, 2))]
    new = canonicalize(outs)
    for n in new:
        assert ops_of(n, Reshape)
    check_values([x], outs, new, [np.arange(6.0).reshape(2, 3)])


def test_reshape_of_reshape_is_one_reshape():
    x = lt.dmatrix("x")
    out = reshape(reshape(x, (-1,)), (3, -1))
    new = canonicalize(out)
    assert len(ops_of(new, Reshape)) == 1
    check_values([x], out, new, [np.arange(6.0).reshape(2, 3)], [np.zeros((0, 3))])


def test_reshape_of_reshape_back_to_input():
    x = lt.lmatrix("x")
    out = reshape(reshape(x, (-1,)), lt.shape(x))
    new = canonicalize(out)
    assert new.owner is None
    check_values([x], out, new, [np.arange(6).reshape(2, 3)])


def test_reshape_error_kept_when_shape_is_wrong():
    x = lt.dvector("x")
    out = reshape(x, (2, 2))
    new = canonicalize(out)
    f = compile_rewritten([x], new)
    with pytest.raises(ValueError):
        f(np.ones(3))


# --------------------------------------------------------------------------- #
# The MLP training step
# --------------------------------------------------------------------------- #
def _mlp_graph(sizes):
    inputs, cost, updates, params = mlp_training_step(sizes=sizes)
    return inputs, [cost] + [u for _, u in updates]


def test_mlp_training_step_canonicalize_smaller_and_equal():
    sizes = (6, 5, 4, 3)
    inputs, outs = _mlp_graph(sizes)
    before = len(FunctionGraph(outputs=outs, clone=True).apply_nodes)
    new = canonicalize(outs)
    after = len(FunctionGraph(outputs=new, clone=True).apply_nodes)
    assert after <= 0.8 * before, (before, after)
    # No squeeze of an expand_dims, no reduced size, no fill of a constant left.
    assert not ops_of(new, ReducedSize)
    X, Y = mlp_data(batch=7, sizes=sizes)
    check_values(inputs, outs, new, [X, Y])


def test_mlp_training_step_fast_compile_smaller():
    inputs, cost, updates, params = mlp_training_step(sizes=(6, 5, 4, 3))
    f0 = lucent.function(inputs, cost, updates=updates, mode=Mode(optimizer=None))
    f1 = lucent.function(inputs, cost, updates=updates, mode="FAST_COMPILE")
    assert len(f1.maker.fgraph.apply_nodes) < len(f0.maker.fgraph.apply_nodes)


def test_shape_becomes_lengths_late():
    """FAST_RUN turns ``shape(x)`` into ``[Shape_i{0}(x), 3]``: static lengths are constants."""
    x = lt.tensor("x", dtype="float64", shape=(None, 3))
    f = lucent.function([x], x.shape, mode="FAST_RUN")
    topo = f.maker.fgraph.toposort()
    assert [type(n.op).__name__ for n in topo] == ["Shape_i", "MakeVector"]
    assert isinstance(topo[1].inputs[1], Constant)
    np.testing.assert_array_equal(f(np.zeros((5, 3))), [5, 3])
    # canonicalize alone keeps the Shape node for the rewrites that look for it
    assert ops_of(canonicalize(x.shape), Shape)


def test_shape_of_a_diagonal_or_join_is_computed_from_input_lengths():
    """Lengths that take a little integer arithmetic (a minimum, a sum) are lifted too:
    the shape no longer needs the diagonal or the join to be computed."""
    from lucent.tensor.basic import ExtractDiag, join

    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    for out in (ExtractDiag(offset=-1)(x), join(0, x, y)):
        f = lucent.function([x, y], out.shape, mode="FAST_RUN", on_unused_input="ignore")
        assert not any(isinstance(n.op, type(out.owner.op)) for n in f.maker.fgraph.toposort())
    f = lucent.function([x], ExtractDiag(offset=-1)(x).shape, mode="FAST_RUN")
    for shp in [(5, 3), (3, 5), (1, 0), (0, 4)]:
        m = np.zeros(shp)
        assert tuple(f(m)) == np.diagonal(m, offset=-1).shape


def test_length_of_a_slice_is_lifted_past_the_sliced_computation():
    """The length of ``y[1:]`` or ``y[::2]`` is the slice length of ``y``'s length: a
    loop whose outputs are only measured is not run (its states are sliced)."""
    from lucent.scan import scan
    from lucent.scan.op import Scan

    x = lt.dvector("x")
    outs, ys = scan(lambda a, h: (a + 1, h + a), sequences=x, outputs_info=[None, x[0]], n_steps=20,
                    return_updates=False)
    f = lucent.function([x], [outs.shape[0], ys.shape[0]], mode="FAST_RUN")
    assert [int(v) for v in f(np.ones(30))] == [20, 20]
    assert not any(isinstance(n.op, Scan) for n in f.maker.fgraph.toposort())

    m = lt.dmatrix("m")
    sliced = lt.exp(m)[1::2, :-1]
    g = lucent.function([m], sliced.shape, mode="FAST_RUN")
    assert not any(n.op == sliced.owner.inputs[0].owner.op for n in g.maker.fgraph.toposort())
    for shp in [(5, 3), (1, 1), (0, 4), (6, 0)]:
        assert tuple(g(np.zeros(shp))) == np.exp(np.zeros(shp))[1::2, :-1].shape
