"""``clone_replace`` / ``graph_replace``: substitute variables in a graph."""

import numpy as np
import pytest

from lucent.graph.basic import Apply, Constant
from lucent.graph.op import Op
from lucent.graph.replace import clone_replace, graph_replace
from lucent.graph.traversal import graph_inputs
from lucent.tensor.type import TensorType
from tests.graph.test_basic import MyType

t = MyType()


class F(Op):
    __props__ = ()

    def make_node(self, *inputs):
        return Apply(self, list(inputs), [inputs[0].type()])


f = F()


def test_clone_replace_substitutes():
    x, y, z = t("x"), t("y"), t("z")
    out = f(f(x, y), x)
    new = clone_replace(out, {x: z})
    assert graph_inputs([new]) == [z, y]
    assert graph_inputs([out]) == [x, y]  # the original is untouched


def test_clone_replace_list_of_pairs_and_many_outputs():
    x, y, z = t("x"), t("y"), t("z")
    a = f(x)
    b = f(a, y)
    new_a, new_b = clone_replace([a, b], [(x, z)])
    assert new_b.owner.inputs[0] is new_a and graph_inputs([new_b]) == [z, y]


def test_clone_replace_an_intermediate_and_an_output():
    x, y = t("x"), t("y")
    a = f(x)
    b = f(a)
    assert clone_replace(b, {a: y}).owner.inputs == [y]
    assert clone_replace(b, {b: y}) is y


def test_shared_inputs_by_default_and_copy_inputs():
    x, y, z = t("x"), t("y"), t("z")
    out = f(x, y)
    new = clone_replace(out, {y: z})
    assert new.owner.inputs[0] is x
    copied = clone_replace(out, {y: z}, share_inputs=False)
    assert copied.owner.inputs[0] is not x and copied.owner.inputs[0].name == "x"


def test_replacement_values_become_constants():
    x = t("x")
    out = f(x)
    new = clone_replace(out, {x: 3})
    assert isinstance(new.owner.inputs[0], Constant) and new.owner.inputs[0].data == 3
    with pytest.raises(TypeError):
        clone_replace(out, {"x": x})


def test_strict_replacement_of_incompatible_type():
    x = t("x")
    out = f(x)
    u = MyType("u")("u")
    with pytest.raises(TypeError, match="Cannot convert"):
        clone_replace(out, {x: u})
    loose = clone_replace(out, {x: u}, strict=False)
    assert loose.type == MyType("u")


def test_more_specific_tensor_type_is_accepted():
    x = TensorType("float64", (None,))("x")
    y = TensorType("float64", (3,))("y")
    out = f(x)
    new = clone_replace(out, {x: y})
    assert new.owner.inputs[0] is y


def test_graph_replace():
    x, y = t("x"), t("y")
    out = f(x)
    assert graph_replace(out, {x: y}).owner.inputs == [y]
    assert graph_replace([out], {x: y})[0].owner.inputs == [y]


def test_deep_chain():
    x, y = t("x"), t("y")
    out = x
    for _ in range(5000):
        out = f(out)
    new = clone_replace(out, {x: y})
    assert graph_inputs([new]) == [y]


def test_constants_survive():
    tt = TensorType("float64", (None,))
    x = tt("x")
    c = Constant(tt, np.ones(2))
    out = f(x, c)
    new = clone_replace(out, {x: tt("z")})
    assert new.owner.inputs[1] is c


# ---------------------------------------------------------------------------
# vectorize_graph
# ---------------------------------------------------------------------------
class NoRule(Op):
    """A tensor op with no vectorization rule."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] + 1


def test_vectorize_graph_without_a_rule_uses_blockwise():
    from lucent.graph.replace import vectorize_graph
    from lucent.tensor.blockwise import Blockwise

    x = TensorType("float64", (None,))("x")
    out = NoRule()(x)
    X = TensorType("float64", (None, None))("X")
    batched = vectorize_graph(out, {x: X})
    assert isinstance(batched.owner.op, Blockwise) and batched.owner.op.core_op == NoRule()
    np.testing.assert_array_equal(batched.eval({X: np.zeros((2, 3))}), np.ones((2, 3)))
    # Same rank: the op is simply re-made for the new input.
    x2 = TensorType("float64", (None,))("x2")
    new = vectorize_graph(out, {x: x2})
    assert isinstance(new.owner.op, NoRule) and new.owner.inputs == [x2]


def test_vectorize_graph_form_and_untouched_parts():
    from lucent.graph.replace import _vectorize_node, vectorize_graph

    x = TensorType("float64", (None,))("x")
    y = TensorType("float64", (None,))("y")
    ox, oy = NoRule()(x), NoRule()(y)
    X = TensorType("float64", (None,))("X")
    new_x, new_y = vectorize_graph([ox, oy], {x: X})
    assert new_y is oy  # does not depend on x: kept as it is
    assert new_x.owner.inputs == [X]
    assert vectorize_graph(x, {x: X}) is X
    with pytest.raises(ValueError, match="not Variables"):
        vectorize_graph(ox, {x: 3.0})
    assert callable(_vectorize_node.register)


def test_vectorize_graph_uses_a_registered_rule():
    from lucent.graph.replace import _vectorize_node, vectorize_graph

    class Marked(NoRule):
        pass

    calls = []

    @_vectorize_node.register(Marked)
    def _rule(op, node, x):
        calls.append(op)
        return [x]

    x = TensorType("float64", (None,))("x")
    X = TensorType("float64", (None, None))("X")
    assert vectorize_graph(Marked()(x), {x: X}) is X and len(calls) == 1
