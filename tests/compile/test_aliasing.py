"""lucent.compile.aliasing: alias roots, view trees, reuse patterns and input protection."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent import In
from lucent.compile.aliasing import (
    Supervisor,
    add_supervisor_to_fgraph,
    alias_root,
    infer_reuse_pattern,
    view_tree_set,
)
from lucent.graph.fg import FunctionGraph, InconsistencyError
from lucent.graph.rewriting.utils import rewrite_graph
from lucent.scalar import basic as ps
from lucent.tensor.elemwise import Elemwise


def _inplace_add(x, y):
    return Elemwise(ps.add, inplace_pattern={0: 0})(x, y)


def test_alias_root_and_view_tree():
    x = lt.dmatrix("x")
    v = x.T[0]
    y = lt.exp(x)
    assert alias_root(v) is x
    assert alias_root(y) is y
    assert alias_root(_inplace_add(x, x)) is x
    fg = FunctionGraph([x], [v, y], clone=False)
    tree = set()
    assert view_tree_set(fg, x, tree) is None
    assert x in tree and v in tree and v.owner.inputs[0] in tree and y not in tree


def test_infer_reuse_pattern_lists_computed_aliases_only():
    x = lt.dmatrix("x")
    e = lt.exp(x)
    out = e.T
    fg = FunctionGraph([x], [out, x.T], clone=False)
    found = infer_reuse_pattern(fg, [out])
    assert found == {e, out}
    # The view of an input shares the input's memory; only computed variables are listed.
    assert infer_reuse_pattern(fg, [fg.outputs[1]]) == {fg.outputs[1]}


def test_add_supervisor_protects_inputs_that_are_not_mutable():
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    fg = FunctionGraph([x, y], [lt.exp(x) * 2 + lt.exp(y)], clone=False)
    add_supervisor_to_fgraph(fg, [In(x, mutable=True), In(y)])
    assert fg.destroyable_inputs == {x}
    assert fg._supervisor.protected == [y]
    rewrite_graph(fg, include=("inplace",))
    destroyed = {
        node.inputs[i[0]] for node in fg.apply_nodes for i in node.op.destroy_map.values()
    }
    assert y not in destroyed


def test_add_supervisor_refuses_inplace_graph_without_accept_inplace():
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    fg = FunctionGraph([x, y], [_inplace_add(x, y)], clone=False)
    with pytest.raises(TypeError, match="Graph must not contain inplace operations"):
        add_supervisor_to_fgraph(fg, [In(x), In(y)])
    # Accepted: the input the graph already overwrites is given up, the other is protected.
    add_supervisor_to_fgraph(fg, [In(x), In(y)], accept_inplace=True)
    assert fg.destroyable_inputs == {x}
    assert fg._supervisor.protected == [y]


def test_add_supervisor_needs_one_spec_per_input():
    x = lt.dmatrix("x")
    fg = FunctionGraph([x], [lt.exp(x)], clone=False)
    with pytest.raises(ValueError, match="one input spec per graph input"):
        add_supervisor_to_fgraph(fg, [])


def test_supervisor_refuses_destroying_a_protected_variable():
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    fg = FunctionGraph([x, y], [_inplace_add(x, y)], clone=False)
    add_supervisor_to_fgraph(fg, [In(x), In(y)], accept_inplace=True)
    fg.remove_feature(fg._supervisor)
    fg.attach_feature(Supervisor([x]))
    with pytest.raises(InconsistencyError, match="protected variable"):
        fg.validate()


def test_function_uses_the_supervisor():
    x = lt.dmatrix("x")
    fn = lucent.function([In(x, mutable=True)], lt.exp(x) * 2, mode="FAST_RUN")
    assert isinstance(fn.maker.fgraph._supervisor, Supervisor)
    assert fn.maker.fgraph._supervisor.protected == []
    v = np.zeros((2, 2))
    np.testing.assert_array_equal(fn(v), 2.0)
