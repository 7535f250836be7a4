"""FunctionGraph: client bookkeeping, replacement, pruning and features."""

import pytest

from lucent.graph.basic import Apply, Constant
from lucent.graph.features import AlreadyThere, ChangeTracker, Feature, NodeFinder
from lucent.graph.fg import FunctionGraph, MissingInputError
from lucent.graph.op import Op
from tests.graph.test_basic import MyType

t = MyType()


class F(Op):
    __props__ = ("name",)

    def __init__(self, name):
        self.name = name

    def make_node(self, *inputs):
        return Apply(self, list(inputs), [t()])


f, g, h = F("f"), F("g"), F("h")


class Recorder(Feature):
    def __init__(self):
        self.events = []

    def on_attach(self, fgraph):
        self.events.append(("attach",))

    def on_detach(self, fgraph):
        self.events.append(("detach",))

    def on_import(self, fgraph, node, reason):
        self.events.append(("import", node.op.name, reason))

    def on_prune(self, fgraph, node, reason):
        self.events.append(("prune", node.op.name, reason))

    def on_change_input(self, fgraph, node, i, var, new_var, reason=None):
        self.events.append(("change", node if node == "output" else node.op.name, i, reason))


def graph():
    x, y = t("x"), t("y")
    a = f(x, y)
    b = g(a, x)
    return x, y, a, b


def test_clients_recorded():
    x, y, a, b = graph()
    fg = FunctionGraph([x, y], [b], clone=False)
    assert fg.clients[x] == [(a.owner, 0), (b.owner, 1)]
    assert fg.clients[a] == [(b.owner, 0)]
    assert fg.clients[b] == [("output", 0)]
    assert fg.apply_nodes == {a.owner, b.owner}
    assert fg.variables == {x, y, a, b}
    assert a in fg and a.owner in fg and t() not in fg
    fg.check_integrity()


def test_clone_by_default():
    x, y, a, b = graph()
    fg = FunctionGraph([x, y], [b])
    assert fg.outputs[0] is not b and fg.inputs[0] is not x
    assert fg.outputs[0].owner.op == g
    fg2 = fg.clone()
    assert fg2.outputs[0] is not fg.outputs[0]
    fg2.check_integrity()


def test_inputs_default_to_graph_inputs_without_constants():
    x = t("x")
    c = Constant(t, 3)
    out = f(x, c)
    fg = FunctionGraph(outputs=[out], clone=False)
    assert fg.inputs == [x]
    with pytest.raises(ValueError, match="No outputs"):
        FunctionGraph([x])


def test_missing_input_error():
    x, y, a, b = graph()
    with pytest.raises(MissingInputError) as info:
        FunctionGraph([x], [b], clone=False)
    assert info.value.variable is y
    assert "y" in str(info.value)


def test_bad_inputs():
    x, y, a, b = graph()
    with pytest.raises(ValueError, match="output of an already existing node"):
        FunctionGraph([a], [b], clone=False)
    with pytest.raises(ValueError, match="twice"):
        FunctionGraph([x, x, y], [b], clone=False)


def test_replace_keeps_clients_consistent_and_prunes():
    x, y, a, b = graph()
    rec = Recorder()
    fg = FunctionGraph([x, y], [b], features=[rec], clone=False)
    new = h(y)
    fg.replace(a, new, reason="test")
    assert b.owner.inputs[0] is new
    assert a.owner not in fg.apply_nodes and a not in fg.variables
    assert new.owner in fg.apply_nodes
    assert fg.clients[y] == [(new.owner, 0)]
    assert fg.clients[x] == [(b.owner, 1)]
    assert ("import", "h", "test") in rec.events
    assert ("prune", "f", "test") in rec.events
    assert ("change", "g", 0, "test") in rec.events
    fg.check_integrity()
    assert fg.toposort() == [new.owner, b.owner]


def test_replace_an_output():
    x, y, a, b = graph()
    fg = FunctionGraph([x, y], [b], clone=False)
    fg.replace(b, a)
    assert fg.outputs == [a]
    assert fg.apply_nodes == {a.owner}
    assert ("output", 0) in fg.clients[a]
    fg.check_integrity()


def test_replace_with_incompatible_type_raises_and_changes_nothing():
    x, y, a, b = graph()
    fg = FunctionGraph([x, y], [b], clone=False)
    other = MyType("other")("z")
    with pytest.raises(TypeError):
        fg.replace(a, other)
    assert b.owner.inputs[0] is a
    fg.check_integrity()


def test_replace_with_missing_input():
    x, y, a, b = graph()
    fg = FunctionGraph([x, y], [b], clone=False)
    z = t("z")
    with pytest.raises(MissingInputError):
        fg.replace(a, h(z))
    # a failed replace leaves the graph untouched (this used to corrupt b's inputs)
    assert b.owner.inputs[0] is a
    fg.check_integrity()
    fg2 = FunctionGraph([x, y], [b], clone=False)
    fg2.replace(a, h(z), import_missing=True)
    assert z in fg2.inputs


def test_replace_all_and_change_node_input():
    x, y, a, b = graph()
    fg = FunctionGraph([x, y], [b], clone=False)
    fg.replace_all([(a, y)])
    assert b.owner.inputs == [y, x]
    fg.change_node_input(b.owner, 1, y)
    assert b.owner.inputs == [y, y]
    assert fg.clients[x] == [] and fg.clients[y] == [(b.owner, 0), (b.owner, 1)]
    fg.check_integrity()


def test_features_callbacks_attach_detach():
    x, y, a, b = graph()
    rec = Recorder()
    fg = FunctionGraph([x, y], [b], clone=False)
    fg.attach_feature(rec)
    fg.attach_feature(rec)  # attaching twice is a no-op
    assert rec.events == [("attach",)]
    fg.remove_feature(rec)
    assert rec.events[-1] == ("detach",)
    fg.replace(a, y)
    assert len(rec.events) == 2


def test_already_there_feature_is_skipped():
    x, y, a, b = graph()
    fg = FunctionGraph([x, y], [b], clone=False)
    fg.attach_feature(ChangeTracker())
    second = ChangeTracker()
    fg.attach_feature(second)
    assert second not in fg._features
    fg.replace(a, y)
    assert fg.change_tracker.changed

    class Refuses(Feature):
        def on_attach(self, fgraph):
            raise AlreadyThere()

    fg.attach_feature(Refuses())
    assert not any(isinstance(ft, Refuses) for ft in fg._features)


def test_node_finder():
    x, y, a, b = graph()
    fg = FunctionGraph([x, y], [b], clone=False)
    fg.attach_feature(NodeFinder())
    assert fg.get_nodes(fg, f) == [a.owner]
    fg.replace(a, y)
    assert fg.get_nodes(fg, f) == []


def test_toposort_respects_feature_orderings():
    x = t("x")
    p, q = f(x), g(x)
    out = h(p, q)
    fg = FunctionGraph([x], [out], clone=False)
    order = fg.toposort()
    assert order.index(p.owner) < order.index(out.owner) and order[-1] is out.owner

    class QFirst(Feature):
        def orderings(self, fgraph):
            return {p.owner: [q.owner]}

    fg.attach_feature(QFirst())
    assert fg.toposort() == [q.owner, p.owner, out.owner]


def test_check_integrity_detects_corruption():
    x, y, a, b = graph()
    fg = FunctionGraph([x, y], [b], clone=False)
    fg.clients[x].clear()
    with pytest.raises(Exception, match="clients"):
        fg.check_integrity()


def test_shared_subgraph_is_pruned_only_when_unused():
    x = t("x")
    a = f(x)
    out1, out2 = g(a), h(a)
    fg = FunctionGraph([x], [out1, out2], clone=False)
    fg.replace(out1, x)
    assert a.owner in fg.apply_nodes and out1.owner not in fg.apply_nodes
    fg.replace(out2, x)
    assert fg.apply_nodes == set()
    fg.check_integrity()


def test_deep_graph_builds_without_recursion():
    x = t("x")
    out = x
    for _ in range(5000):
        out = f(out)
    fg = FunctionGraph([x], [out], clone=True)
    assert len(fg.toposort()) == 5000
    fg.check_integrity()
    fg.replace(fg.outputs[0], fg.inputs[0])
    assert fg.apply_nodes == set()


# --- rich display in notebooks --------------------------------------------------------

@pytest.mark.skipif(__import__("shutil").which("dot") is None, reason="the Graphviz 'dot' program is not installed")
def test_repr_html_draws_the_graph_with_non_tensor_types():
    import html

    from lucent.graph.dot import op_label

    x = t("x")
    fg = FunctionGraph([x], [g(f(x))], clone=False)
    page = fg._repr_html_()
    assert "<svg" in page
    for node in fg.toposort():
        assert f">{op_label(node.op)}<" in html.unescape(page)
    assert ">MyType(t)<" in page and ">x<" in page


def test_repr_html_never_raises(monkeypatch):
    from lucent.graph import dot

    def broken(self, annotations=None, title=None):
        raise RuntimeError("layout exploded")

    monkeypatch.setattr(dot.GraphDot, "svg", broken)
    x = t("x")
    page = FunctionGraph([x], [f(x)], clone=False)._repr_html_()
    assert "<pre>" in page and "layout exploded" in page


# --- construction options, provided methods and transactions --------------------------------
from lucent.graph.basic import NominalVariable  # noqa: E402
from lucent.graph.features import (  # noqa: E402
    History,
    ReplaceValidate,
    ReplacementDidNotRemoveError,
    Validator,
)
from lucent.graph.fg import FrozenFunctionGraph, InconsistencyError  # noqa: E402


def test_memo_and_copy_inputs_go_to_cloning():
    x = t("x")
    out = f(g(x))
    memo = {}
    fg = FunctionGraph([x], [out], memo=memo)
    assert memo[x] is fg.inputs[0] and memo[out] is fg.outputs[0]
    fg = FunctionGraph([x], [out], copy_inputs=False)
    assert fg.inputs[0] is x and fg.outputs[0] is not out
    y = t("y")
    fg = FunctionGraph([x, y], [out], memo={out.owner.inputs[0]: y}, copy_inputs=False)
    assert fg.outputs[0].owner.inputs[0] is y
    with pytest.raises(MissingInputError):  # a replacement is not an input by itself
        FunctionGraph([x], [out], memo={out.owner.inputs[0]: t("z")}, copy_inputs=False)


def test_default_inputs_skip_nominal_variables():
    n = NominalVariable(0, t)
    x = t("x")
    fg = FunctionGraph(outputs=[f(n, x)], clone=False)
    assert fg.inputs == [x]


def test_every_graph_has_replace_validate():
    x = t("x")
    fg = FunctionGraph([x], [f(g(x))], clone=False)
    assert any(isinstance(ft, ReplaceValidate) for ft in fg._features)
    for name in ("replace_validate", "replace_all_validate", "validate", "checkpoint", "revert"):
        assert callable(getattr(fg, name))
    with pytest.raises(AttributeError, match="no_such_method"):
        fg.no_such_method
    fg.attach_feature(ReplaceValidate())  # a second one is refused quietly
    assert sum(isinstance(ft, ReplaceValidate) for ft in fg._features) == 1


class VetoH(Feature):
    def on_validate(self, fgraph):
        if any(n.op == h for n in fgraph.apply_nodes):
            raise InconsistencyError("h is not allowed")


def test_replace_all_validate_is_a_transaction():
    x = t("x")
    fg = FunctionGraph([x], [f(g(x))], clone=False)
    fg.attach_feature(VetoH())
    gx = fg.outputs[0].owner.inputs[0]
    before = list(fg.outputs)
    with pytest.raises(InconsistencyError):
        fg.replace_all_validate([(gx, h(x))], reason="try h")
    assert fg.outputs == before and fg.outputs[0].owner.inputs[0] is gx
    fg.check_integrity()
    assert fg.consistent()
    fg.replace_validate(gx, f(x), reason="fine")
    assert fg.outputs[0].owner.inputs[0].owner.op == f


def test_checkpoint_and_revert():
    x = t("x")
    fg = FunctionGraph([x], [f(g(x))], clone=False)
    out = fg.outputs[0]
    chk = fg.checkpoint()
    fg.replace(out, h(x))
    assert fg.outputs[0].owner.op == h
    fg.revert(chk)
    assert fg.outputs[0] is out
    fg.check_integrity()
    chk1 = fg.checkpoint()
    fg.checkpoint()
    with pytest.raises(ValueError, match="latest checkpoint"):
        fg.revert(chk1)


def test_replace_all_validate_remove():
    x = t("x")
    gx = g(x)
    fg = FunctionGraph([x], [f(gx), gx], clone=False)
    with pytest.warns(UserWarning, match="did not remove"):
        with pytest.raises(ReplacementDidNotRemoveError):
            fg.replace_all_validate_remove([(fg.outputs[0], h(x))], remove=[gx.owner])
    assert fg.outputs[0].owner.op == f


def test_removed_feature_takes_its_methods_away():
    x = t("x")
    fg = FunctionGraph([x], [f(x)], clone=False)
    rv = [ft for ft in fg._features if isinstance(ft, ReplaceValidate)][0]
    fg.remove_feature(rv)
    assert not hasattr(fg, "replace_validate")
    fg.attach_feature(History())
    fg.attach_feature(Validator())
    assert fg.validate() and callable(fg.checkpoint)


def test_pickled_graph_keeps_its_provided_methods():
    import pickle

    x = t("x")
    fg = FunctionGraph([x], [f(g(x))])
    fg.replace(fg.outputs[0], h(fg.inputs[0]), reason=lambda: None)  # an unpicklable reason
    fg2 = pickle.loads(pickle.dumps(fg))
    assert fg2.validate() and fg2.outputs[0].owner.op == h


def test_frozen_function_graph_equality_and_thawing():
    x, y = t("x"), t("y")
    fz1 = FrozenFunctionGraph.from_io([x, y], [f(x, g(y))])
    a, b = t("a"), t("b")
    fz2 = FunctionGraph([a, b], [f(a, g(b))]).freeze()
    assert fz1 == fz2 and hash(fz1) == hash(fz2)
    assert fz1 != FrozenFunctionGraph.from_io([x, y], [f(g(y), x)])
    assert len(fz1.toposort()) == 2 and len(fz1.apply_nodes) == 2
    assert fz1.clients[fz1.outputs[0]] == [("output", 0)]
    thawed = fz1.unfreeze()
    assert isinstance(thawed, FunctionGraph)
    assert [n.op for n in thawed.toposort()] == [g, f]
    (out,) = fz1.bind([a, b])
    assert out.owner.op == f and out.owner.inputs[0] is a
    with pytest.raises(ValueError, match="Orphan"):
        FrozenFunctionGraph.from_io([x], [f(x, y)])


def test_remove_node_takes_dependents_and_orphans_with_it():
    x, y = t("x"), t("y")
    gx = g(x)
    out0, out1 = f(gx, y), h(y)
    fg = FunctionGraph([x, y], [out0, out1, gx], clone=False)
    fg.remove_node(gx.owner, reason="test")
    fg.check_integrity()
    assert fg.outputs == [out1] and fg.clients[out1] == [("output", 0)]
    assert gx.owner.tag.removed_by == ["test"]
    assert out0.owner not in fg.apply_nodes and x in fg.inputs


def test_remove_output_renumbers_and_prunes():
    x = t("x")
    a, b = g(x), h(x)
    fg = FunctionGraph([x], [a, b, a], clone=False)
    fg.remove_output(0)
    fg.check_integrity()
    assert fg.outputs == [b, a] and ("output", 1) in fg.clients[a]
    fg.remove_output(1)
    assert fg.outputs == [b] and a.owner not in fg.apply_nodes
    with pytest.raises(IndexError, match="no output 3"):
        fg.remove_output(3)


def test_remove_input_removes_what_needs_it():
    x, y = t("x"), t("y")
    out0, out1 = f(x), g(y)
    fg = FunctionGraph([x, y], [out0, out1], clone=False)
    fg.remove_input(1)
    fg.check_integrity()
    assert fg.inputs == [x] and fg.outputs == [out0] and y not in fg.variables


def test_importing_a_null_type_variable_says_why():
    from lucent.graph.null_type import NullType

    bad = NullType("the gradient of round is undefined")()
    with pytest.raises(TypeError, match="round is undefined"):
        FunctionGraph([], [f(bad)], clone=False)


def test_frozen_graph_from_intermediate_inputs():
    x, y = t("x"), t("y")
    inner = g(x)
    out = f(g(x), y)  # a separate but equal g(x)
    fz = FrozenFunctionGraph.from_structural_inputs([inner, y], [out])
    assert len(fz.inputs) == 2 and [n.op for n in fz.toposort()] == [f]
    (new_out,) = fz.bind([x, y])
    assert new_out.owner.op == f and new_out.owner.inputs == [x, y]
    with pytest.raises(ValueError):
        FrozenFunctionGraph.from_structural_inputs([inner], [out])  # y is not given
