"""``lucent.tensor.rewriting.reshape``: JoinDims / SplitDims canonicalized to Reshape and friends."""

import lucent.tensor as lt
from lucent.graph.fg import FunctionGraph
from lucent.graph.rewriting.utils import rewrite_graph
from lucent.tensor.basic import squeeze
from lucent.tensor.reshape import JoinDims, SplitDims, join_dims, split_dims
from lucent.tensor.shape import Reshape, SpecifyShape


def test_canonicalize_turns_them_into_reshape():
    x = lt.tensor("x", shape=(2, 10, 3))
    fg = FunctionGraph([x], [split_dims(x, axis=1, shape=(2, 5, 1)), join_dims(x, 0, 2), join_dims(x, 1, 1)],
                       clone=False)
    rewrite_graph(fg, include=("canonicalize",))
    ops = [type(n.op) for n in fg.toposort()]
    assert SplitDims not in ops and JoinDims not in ops and Reshape in ops
    assert fg.outputs[0].type.shape == (2, 2, 5, 1, 3)
    assert fg.outputs[2] is x


def test_special_cases_expand_squeeze_specify_shape():
    x = lt.tensor("x", shape=(2, 1, 3))
    y = lt.tensor("y", shape=(2, None, 4))
    fg = FunctionGraph([x, y], [join_dims(x, 1, 0), split_dims(x, (), axis=1), split_dims(y, (5,), axis=1)],
                       clone=False)
    rewrite_graph(fg, include=("canonicalize",))
    ops = [type(n.op) for n in fg.toposort()]
    assert SplitDims not in ops and JoinDims not in ops and Reshape not in ops
    assert fg.outputs[0].type.shape == (2, 1, 1, 3)
    assert fg.outputs[1].type.shape == (2, 3)
    assert fg.outputs[2].type.shape == (2, 5, 4)
    assert any(isinstance(n.op, SpecifyShape) for n in fg.toposort())
    assert squeeze(x, 1).type.shape == fg.outputs[1].type.shape
