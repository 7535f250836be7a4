"""Ops are values: equality and hashing come from ``__props__``."""

import pytest

from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.graph.utils import MethodNotDefined
from tests.graph.test_basic import MyType

t = MyType()


class Scale(Op):
    __props__ = ("factor", "mode")

    def __init__(self, factor, mode="fast"):
        self.factor = factor
        self.mode = mode

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] * self.factor


class NoProps(Op):
    def make_node(self, x):
        return Apply(self, [x], [x.type()])


class SubScale(Scale):
    pass


def test_props_equality_and_hash():
    assert Scale(2) == Scale(2) and hash(Scale(2)) == hash(Scale(2))
    assert Scale(2) != Scale(3) and Scale(2) != Scale(2, mode="slow")
    assert len({Scale(2), Scale(2), Scale(3)}) == 2
    assert Scale(2)._props() == (2, "fast")
    assert Scale(2)._props_dict() == {"factor": 2, "mode": "fast"}


def test_props_equality_needs_the_same_class():
    assert SubScale(2) != Scale(2)
    assert SubScale(2) == SubScale(2)


def test_op_without_props_is_equal_only_to_itself():
    a, b = NoProps(), NoProps()
    assert a == a and a != b
    assert hash(a) == hash(a)


def test_str_shows_props():
    assert str(Scale(2)) == "Scale{factor=2, mode='fast'}"
    assert str(NoProps()) == "NoProps"


def test_perform_and_default_hooks():
    x = t("x")
    node = Scale(3).make_node(x)
    storage = [[None]]
    node.op.perform(node, [4], storage)
    assert storage[0][0] == 12
    assert node.op.connection_pattern(node) == [[True]]
    assert node.op.do_constant_folding(None, node) is True
    assert node.op.inplace_on_inputs([0]) is node.op
    with pytest.raises(MethodNotDefined):
        node.op.infer_shape(None, node, [()])
    with pytest.raises(NotImplementedError, match="gradient"):
        node.op.L_op([x], [node.outputs[0]], [x])
    with pytest.raises(NotImplementedError):
        NoProps().perform(node, [1], storage)
    with pytest.raises(NotImplementedError):
        Op().make_node(x)


def test_view_and_destroy_maps_default_empty():
    assert Scale(1).view_map == {} and Scale(1).destroy_map == {}


def test_get_params_without_params_type():
    node = Scale(2).make_node(t("x"))
    with pytest.raises(MethodNotDefined):
        node.run_params()
    assert node.params_type is None


def test_default_make_node_from_itypes_and_otypes():
    class Fixed(Op):
        itypes = [MyType("a")]
        otypes = [MyType("b"), MyType("a")]

    a = MyType("a")()
    node = Fixed().make_node(a)
    assert [o.type for o in node.outputs] == [MyType("b"), MyType("a")]
    with pytest.raises(ValueError, match="expected 1 inputs but got 2"):
        Fixed().make_node(a, a)
    with pytest.raises(TypeError, match="Invalid input types"):
        Fixed().make_node(MyType("b")())
    with pytest.raises(NotImplementedError, match="make_node is not implemented"):
        Op().make_node(a)


def test_call_infer_shape_accepts_both_signatures():
    from lucent.graph.op import call_infer_shape

    class Three(Op):
        def infer_shape(self, fgraph, node, input_shapes):
            return ("three", fgraph)

    class Two(Op):
        def infer_shape(self, node, input_shapes):
            return ("two", input_shapes)

    assert call_infer_shape(Three(), "fg", None, [(1,)]) == ("three", "fg")
    assert call_infer_shape(Two(), "fg", None, [(1,)]) == ("two", [(1,)])
