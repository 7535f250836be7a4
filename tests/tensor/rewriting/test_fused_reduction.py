"""The fusion-stage rewrite ``CAReduce(Elemwise) -> FusedCAReduce``: when it applies and when not."""

import numpy as np

import lucent
import lucent.tensor as lt
from lucent.graph.fg import FunctionGraph
from lucent.tensor.fused_reduction import FusedCAReduce
from lucent.tensor.rewriting.elemwise import fusion_rewriter
from lucent.tensor.rewriting.fused_reduction import fused_reduction_rewriter


def _rewrite(inputs, outputs):
    fg = FunctionGraph(inputs, outputs)
    fusion_rewriter.apply(fg)
    fused_reduction_rewriter.apply(fg)
    return fg


def test_sum_of_square_and_max_abs_diff_are_fused():
    x, y = lt.vector("x"), lt.vector("y")
    for out in (lt.sum(x * x), lt.max(abs(x - y))):
        fg = _rewrite([x, y], [out])
        ops = [type(n.op) for n in fg.apply_nodes]
        assert FusedCAReduce in ops, ops
        assert len(fg.apply_nodes) == 1


def test_not_fused_when_the_elementwise_value_is_used_elsewhere():
    x = lt.vector("x")
    sq = x * x
    fg = _rewrite([x], [lt.sum(sq), sq])
    assert not any(isinstance(n.op, FusedCAReduce) for n in fg.apply_nodes)


def test_keepdims_and_axes_survive():
    x = lt.matrix("x")
    out = lt.sum(lt.exp(x) * 2, axis=1, keepdims=True)
    fg = _rewrite([x], [out])
    assert any(isinstance(n.op, FusedCAReduce) for n in fg.apply_nodes)
    assert fg.outputs[0].type.shape == (None, 1)


def test_registered_in_fast_run_and_values_agree():
    x, y = lt.matrix("x"), lt.matrix("y")
    out = lt.max(abs(x - y), axis=0)
    f = lucent.function([x, y], out, mode="FAST_RUN")
    g = lucent.function([x, y], out, mode="FAST_COMPILE")
    a, b = np.random.default_rng(1).standard_normal((2, 5, 7))
    np.testing.assert_allclose(f(a, b), g(a, b))
    assert any(isinstance(n.op, FusedCAReduce) for n in f.maker.fgraph.apply_nodes)
