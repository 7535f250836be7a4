"""Draining ``assume`` declarations before the rewrites."""

import lucent.tensor as lt
from lucent.assumptions import SYMMETRIC, SpecifyAssumptions, assume, check_assumption
from lucent.graph.fg import FunctionGraph
from lucent.tensor.rewriting.assumptions import DrainSpecifyAssumptions


def test_drain_removes_nested_declarations_and_keeps_facts():
    x = lt.dmatrix("x")
    out = lt.exp(assume(assume(x, symmetric=True), orthogonal=False))
    fgraph = FunctionGraph(outputs=[out], clone=False)
    DrainSpecifyAssumptions().apply(fgraph)
    assert not any(isinstance(n.op, SpecifyAssumptions) for n in fgraph.apply_nodes)
    assert fgraph.outputs[0].owner.inputs[0] is x
    assert check_assumption(fgraph, x, SYMMETRIC)
    assert check_assumption(fgraph, fgraph.outputs[0], SYMMETRIC)


def test_drain_without_declarations_does_nothing():
    x = lt.dmatrix("x")
    fgraph = FunctionGraph(outputs=[lt.exp(x)], clone=False)
    assert DrainSpecifyAssumptions().apply(fgraph) is None
    assert not hasattr(fgraph, "assumption_feature") or fgraph.assumption_feature is None
