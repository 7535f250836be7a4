"""copy_stack_trace and check_stack_trace."""

import pytest

import lucent
import lucent.tensor as lt
from lucent.graph.fg import FunctionGraph
from lucent.graph.rewriting.basic import check_stack_trace, copy_stack_trace
from lucent.tensor.elemwise import Elemwise


def test_nodes_made_by_the_user_have_a_trace():
    x = lt.dvector("x")
    y = lt.exp(x) + 1
    fgraph = FunctionGraph([x], [y], clone=False)
    assert check_stack_trace(fgraph, ops_to_check="all")
    assert y.owner.tag.trace[0][0] == __file__


def test_copy_stack_trace_combines_sources_without_repeats():
    x = lt.dvector("x")
    a, b = lt.exp(x), lt.log(x)
    c = a + b
    c.owner.tag.trace = []
    copy_stack_trace([a, b, a], c)
    assert c.owner.tag.trace == a.owner.tag.trace + [t for t in b.owner.tag.trace if t not in a.owner.tag.trace]
    assert copy_stack_trace(a, x) is x  # a graph input has no node: nothing to do


def test_check_stack_trace_selects_nodes_and_reports_missing_traces():
    x = lt.dvector("x")
    f = lucent.function([x], lt.log(1 + x), mode="FAST_COMPILE")
    assert check_stack_trace(f)  # the output's node
    assert check_stack_trace(f, ops_to_check=Elemwise)
    assert check_stack_trace(f, ops_to_check=lambda op: isinstance(op, Elemwise))
    f.maker.fgraph.outputs[0].owner.tag.trace = []
    assert not check_stack_trace(f)


def test_check_stack_trace_when_nothing_matches():
    x = lt.dvector("x")
    fgraph = FunctionGraph([x], [lt.exp(x)])
    with pytest.raises(ValueError, match="no node"):
        check_stack_trace(fgraph, ops_to_check=lt.elemwise.DimShuffle)
    with pytest.warns(UserWarning, match="no node"):
        assert check_stack_trace(fgraph, ops_to_check=lt.elemwise.DimShuffle, bug_print="warn")
    assert check_stack_trace(fgraph, ops_to_check=lt.elemwise.DimShuffle, bug_print="ignore")
    with pytest.raises(ValueError, match="FunctionGraph or a compiled function"):
        check_stack_trace(object())
