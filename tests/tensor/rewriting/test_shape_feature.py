"""Tests of lucent/tensor/rewriting/shape_feature.py: lazily derived symbolic shapes, invalidated when the graph changes."""

import warnings

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.graph.basic import Constant
from lucent.graph.fg import FunctionGraph
from lucent.graph.traversal import graph_inputs
from lucent.tensor.rewriting.shape import ShapeFeature, ShapeOptimizer, UnShapeOptimizer
from lucent.tensor.shape import Shape_i


def _fg(outputs):
    return FunctionGraph(outputs=outputs, clone=False, features=[ShapeFeature()])


def test_shape_tuple_follows_infer_shape_to_the_inputs():
    x = lt.matrix("x")
    y = lt.vector("y")
    z = lt.exp(lt.dot(x, x.T)) + y
    fg = _fg([z])
    sf = fg.shape_feature
    s0, s1 = sf.shape_tuple(z)
    # The lengths no longer depend on z (nor on the dot) being computed.
    for s in (s0, s1):
        assert s.type.dtype == "int64" and s.type.ndim == 0
    f = lucent.function([x, y], [s0, s1], mode="FAST_COMPILE", on_unused_input="ignore")
    assert [int(v) for v in f(np.ones((3, 2)), np.ones(3))] == [3, 3]
    assert z not in set(v for v in fg.variables if v.owner is None)
    assert sf.get_shape(x, 0).owner.op == Shape_i(0)
    assert sf.get_shape(x, 0) is sf.get_shape(x, 0)  # one Shape_i per (variable, axis)


def test_static_lengths_are_constants_and_same_shape():
    a = lt.tensor(dtype="float64", shape=(2, None))
    b = lt.tensor(dtype="float64", shape=(2, None))
    fg = _fg([a + 1, lt.exp(a), b])
    sf = fg.shape_feature
    first = sf.get_shape(a, 0)
    assert isinstance(first, Constant) and int(first.data) == 2
    assert sf.same_shape(fg.outputs[0], fg.outputs[1])
    assert sf.same_shape(a, b, 0, 0)
    assert not sf.same_shape(a, b)
    assert sf.shape_tuple(lucent.shared(np.random.default_rng(0))) is None


def test_non_recursive_shape_reads_only_the_node_inputs():
    x = lt.matrix("x")
    y = lt.exp(x)
    z = y.T
    sf = ShapeFeature()  # works unattached
    s = sf.get_non_recursive_shape(z, 0)
    assert y in set(graph_inputs([s])) or s.owner.inputs[0] is y


def test_cache_is_dropped_when_an_input_changes():
    x = lt.matrix("x")
    v = lt.vector("v")
    y = lt.exp(x)
    z = y + 1
    fg = _fg([z])
    sf = fg.shape_feature
    before = sf.shape_tuple(z)
    fg.replace(y, lt.exp(v).dimshuffle(0, "x") * lt.ones((1, 4)), import_missing=True)
    after = sf.shape_tuple(fg.outputs[0])
    assert after != before
    f = lucent.function([v], list(after), mode="FAST_COMPILE", on_unused_input="ignore")
    assert [int(a) for a in f(np.ones(5))] == [5, 4]


def test_attach_once_detach_and_deprecated_shape_of():
    x = lt.matrix("x")
    fg = _fg([lt.exp(x)])
    sf = fg.shape_feature
    fg.attach_feature(ShapeFeature())  # a second one is refused silently (AlreadyThere)
    assert fg.shape_feature is sf
    with pytest.warns(DeprecationWarning):
        view = sf.shape_of
    assert view[x] == sf.shape_tuple(x)
    UnShapeOptimizer().rewrite(fg)
    assert not hasattr(fg, "shape_feature")
    ShapeOptimizer().rewrite(fg)
    assert isinstance(fg.shape_feature, ShapeFeature)


def test_bad_infer_shape_answers_are_rejected():
    from lucent.graph.basic import Apply
    from lucent.graph.op import Op

    class NegativeShape(Op):
        def make_node(self, x):
            return Apply(self, [x], [x.type()])

        def perform(self, node, inputs, outputs):
            outputs[0][0] = inputs[0]

        def infer_shape(self, fgraph, node, shapes):
            return [(-1,)]

    x = lt.vector("x")
    fg = _fg([NegativeShape()(x)])
    with pytest.raises(ValueError, match="negative length"):
        fg.shape_feature.shape_tuple(fg.outputs[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fg.shape_feature.shape_tuple(x)[0].owner.op == Shape_i(0)
