"""Tests for in-place element-wise rewriting (``lucent.tensor.rewriting.inplace``)."""

import numpy as np
import pytest

import lucent
import lucent.scalar.basic as ps
import lucent.tensor as lt
from lucent.compile.mode import Mode
from lucent.graph.destroyhandler import DestroyHandler
from lucent.graph.fg import FunctionGraph
from lucent.tensor.elemwise import Elemwise
from lucent.tensor.rewriting.elemwise import FusionRewriter
from lucent.tensor.rewriting.inplace import InplaceElemwiseRewriter


def _rewrite(inputs, outputs, destroyable=()):
    fg = FunctionGraph(inputs, outputs, clone=False)
    fg.destroyable_inputs = set(destroyable)
    fg.attach_feature(DestroyHandler())
    InplaceElemwiseRewriter().rewrite(fg)
    return fg


def _destroyed(fg):
    """``{node: [destroyed input variables]}``."""
    return {
        n: [n.inputs[ins[0]] for ins in n.op.destroy_map.values()]
        for n in fg.apply_nodes
        if n.op.destroy_map
    }


def test_intermediate_is_overwritten_but_inputs_are_protected():
    x = lt.dmatrix("x")
    e = lt.exp(x)
    fg = _rewrite([x], [e + 1])
    d = _destroyed(fg)
    assert list(d.values()) == [[e]]  # add writes into exp's result, not into x


def test_destroyable_input_is_overwritten():
    x = lt.dmatrix("x")
    fg = _rewrite([x], [lt.exp(x)], destroyable=[x])
    assert list(_destroyed(fg).values()) == [[x]]


def test_constants_shapes_and_dtypes_are_respected():
    x = lt.dmatrix("x")
    row = lt.tensor(dtype="float64", shape=(1, None), name="row")
    i = lt.imatrix("i")
    out = lt.exp(x) * 2  # exp(x) may be overwritten; the constant never
    fg = _rewrite([x, row, i], [out + lt.exp(row), lt.exp(row) + x, i + x], destroyable=[row, i])
    destroyed = _destroyed(fg)
    assert destroyed
    for node, victims in destroyed.items():
        for v in victims:
            if v is row:  # a (1, ?) input can only hold a (1, ?) result, e.g. exp(row)'s
                assert node.outputs[0].type.shape[0] == 1
            assert v is not i  # an int32 input cannot hold a float64 result
            assert v.type == node.outputs[0].type
            assert not isinstance(v, lt.TensorConstant)


def test_later_reader_is_not_clobbered():
    x = lt.dmatrix("x")
    t = lt.exp(x)
    a = t + 1
    b = t * 2
    f = lucent.function([x], [a, b], mode="FAST_RUN")
    v = np.linspace(0, 1, 6).reshape(2, 3)
    ra, rb = f(v)
    np.testing.assert_allclose(ra, np.exp(v) + 1, rtol=1e-15)
    np.testing.assert_allclose(rb, np.exp(v) * 2, rtol=1e-15)


def test_at_most_one_destroyer_per_value():
    x = lt.dmatrix("x")
    t = lt.exp(x)
    fg = _rewrite([x], [t + 1, t * 2, t - 3])
    victims = [v for vs in _destroyed(fg).values() for v in vs]
    assert victims.count(t) <= 1
    results = lucent.function([x], [t + 1, t * 2, t - 3], mode="FAST_RUN")(np.ones((1, 1)))
    np.testing.assert_allclose([r[0, 0] for r in results], [np.e + 1, 2 * np.e, np.e - 3], rtol=1e-15, atol=1e-15)


def test_graph_outputs_are_not_overwritten():
    x = lt.dmatrix("x")
    t = lt.exp(x)
    fg = _rewrite([x], [t, t + 1])
    assert not any(t in vs for vs in _destroyed(fg).values())


def test_fused_node_becomes_inplace():
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    out = lt.exp(lt.dot(x, y)) * 2 + 1
    f = lucent.function([x, y], out, mode="FAST_RUN")
    (node,) = [n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Elemwise)]
    assert node.op.destroy_map == {0: [0]}
    v = np.eye(3)
    np.testing.assert_allclose(f(v, v), np.exp(v) * 2 + 1)


def test_multi_output_node_inplace_values():
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    d = lt.dot(x, y)
    t = lt.exp(d) + 1
    f = lucent.function([x, y], [t, (t * d).sum()], mode="FAST_RUN")
    v = np.arange(4.0).reshape(2, 2) / 4
    dv = v @ v
    r0, r1 = f(v, v)
    np.testing.assert_allclose(r0, np.exp(dv) + 1)
    np.testing.assert_allclose(r1, ((np.exp(dv) + 1) * dv).sum())


def test_excluding_inplace():
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    out = lt.exp(lt.dot(x, y)) + 1
    f = lucent.function([x, y], out, mode=lucent.compile.mode.get_mode("FAST_RUN").excluding("inplace"))
    assert not any(n.op.destroy_map for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Elemwise))


# --- Elemwise.perform with an inplace_pattern ---------------------------------------
def _inplace_add_node():
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    op = Elemwise(ps.add, inplace_pattern={0: 0})
    return op.make_node(x, y)


def test_perform_writes_into_the_input():
    node = _inplace_add_node()
    a, b = np.ones((2, 3)), np.full((2, 3), 2.0)
    storage = [[None]]
    node.op.perform(node, [a, b], storage)
    assert storage[0][0] is a
    np.testing.assert_array_equal(a, 3.0)


def test_perform_with_bad_shapes_writes_nothing():
    node = _inplace_add_node()
    a, b = np.ones((2, 3)), np.ones((3, 3))
    with pytest.raises(ValueError):
        node.op.perform(node, [a, b], [[None]])
    np.testing.assert_array_equal(a, 1.0)


def test_perform_on_a_read_only_input_computes_a_new_array():
    node = _inplace_add_node()
    a = np.ones((2, 3))
    a.flags.writeable = False
    storage = [[None]]
    node.op.perform(node, [a, np.ones((2, 3))], storage)
    assert storage[0][0] is not a
    np.testing.assert_array_equal(storage[0][0], 2.0)


def test_perform_fused_multi_output_inplace():
    x, y = ps.float64("x"), ps.float64("y")
    comp = ps.Composite([x, y], [x + y, x * y])
    tx, ty = lt.dmatrix("tx"), lt.dmatrix("ty")
    node = Elemwise(comp, inplace_pattern={0: 0, 1: 1}).make_node(tx, ty)
    a, b = np.full((2, 2), 3.0), np.full((2, 2), 4.0)
    storage = [[None], [None]]
    node.op.perform(node, [a, b], storage)
    # Both results were computed before either input was overwritten.
    np.testing.assert_array_equal(storage[0][0], 7.0)
    np.testing.assert_array_equal(storage[1][0], 12.0)
    assert storage[0][0] is a and storage[1][0] is b


def test_fused_then_inplace_bit_identical_to_unfused():
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    d = lt.dot(x, y)
    out = lt.exp(-d * d) * lt.sin(d) + lt.log1p(abs(d)) - lt.tanh(d) / (1 + d * d)
    mode = Mode(linker="py", optimizer=None)
    fused = Mode(linker="py", optimizer=lucent.graph.rewriting.basic.SequentialGraphRewriter(
        FusionRewriter(), InplaceElemwiseRewriter()))
    f = lucent.function([x, y], out, mode=fused)
    g = lucent.function([x, y], out, mode=mode)
    assert any(n.op.destroy_map for n in f.maker.fgraph.apply_nodes)
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(6, 5)), rng.normal(size=(5, 7))
    np.testing.assert_array_equal(f(a, b), g(a, b))
