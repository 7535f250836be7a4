"""The branch plan (``lucent.link.python.branches``) and the Python linker's lazy runs."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.graph.basic import Apply
from lucent.graph.fg import FunctionGraph
from lucent.graph.op import Op
from lucent.ifelse import IfElse, ifelse
from lucent.link.python import PythonLinker
from lucent.link.python.branches import BranchPlan


class Counted(Op):
    """Identity that counts its runs, by name."""

    __props__ = ("tag",)
    runs: dict = {}

    def __init__(self, tag):
        self.tag = tag

    def make_node(self, x):
        x = lt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        Counted.runs[self.tag] = Counted.runs.get(self.tag, 0) + 1
        output_storage[0][0] = inputs[0].copy()


def _py(inputs, outputs, **kwargs):
    return lucent.function(inputs, outputs, mode=lucent.Mode(linker=PythonLinker(**kwargs), optimizer=None))


def test_contexts_nesting_and_shared_nodes():
    c, d = lt.iscalars("c", "d")
    x = lt.dvector("x")
    both = Counted("both")(x)
    only_then = Counted("then")(x)
    inner = ifelse(d, only_then + both, both)
    out = ifelse(c, inner, Counted("else")(x))
    fg = FunctionGraph([c, d, x], [out], clone=False)
    plan = BranchPlan(fg, fg.toposort())
    outer, inner_node = out.owner, inner.owner
    assert plan.contexts[outer] == [()]
    assert plan.contexts[inner_node] == [((outer, 0),)]
    assert plan.contexts[both.owner] == [((outer, 0),)]  # both inner branches: before the inner if
    assert plan.contexts[only_then.owner] == [((outer, 0), (inner_node, 0))]
    # every node appears after what it reads
    seen = set(fg.inputs)
    for node in plan.order:
        assert node.inputs[0] in seen or node.inputs[0].owner is None
        seen.update(node.outputs)


def test_exclusive_contexts_keep_a_shared_node_lazy():
    c, d = lt.iscalars("c", "d")
    x = lt.dvector("x")
    boom = Counted("excl")(x)  # in the else of the inner and the else of the outer if
    out = ifelse(c, ifelse(d, x + 1, boom), boom * 2)
    fg = FunctionGraph([c, d, x], [out], clone=False)
    plan = BranchPlan(fg, fg.toposort())
    assert len(plan.contexts[boom.owner]) == 2 and not plan.single
    f = _py([c, d, x], out)
    Counted.runs.clear()
    np.testing.assert_allclose(f(1, 1, np.zeros(2)), [1.0, 1.0])
    assert Counted.runs.get("excl", 0) == 0
    np.testing.assert_allclose(f(1, 0, np.ones(2)), [1.0, 1.0])
    np.testing.assert_allclose(f(0, 1, np.ones(2)), [2.0, 2.0])
    assert Counted.runs["excl"] == 2  # once per call that needed it


def test_unrelated_branches_share_by_running_the_node():
    c, d = lt.iscalars("c", "d")
    x = lt.dvector("x")
    shared = Counted("shared")(x)
    a = ifelse(c, shared, x)
    b = ifelse(d, shared, x)
    fg = FunctionGraph([c, d, x], [a, b], clone=False)
    assert BranchPlan(fg, fg.toposort()).contexts[shared.owner] == [()]


@pytest.mark.parametrize("allow_gc", [True, False])
def test_gc_frees_branch_values(allow_gc):
    c = lt.iscalar("c")
    x = lt.dvector("x")
    mid = lt.exp(x)
    out = ifelse(c, mid.sum() + mid.mean(), x.sum())
    fg = FunctionGraph([c, x], [out], clone=False)
    run = PythonLinker(allow_gc=allow_gc).accept(fg).link()
    ins, outs, order, storage = [c.storage for c in run.inputs], [c.storage for c in run.outputs], run.order, run.storage_map
    assert run.details["branch_plan"] is not None and len(order) == len(fg.apply_nodes)
    ins[0][0], ins[1][0] = np.array(1, dtype="int32"), np.zeros(3)
    run()
    assert outs[0][0] == 4.0
    assert (storage[mid][0] is None) == allow_gc
    ins[0][0] = np.array(0, dtype="int32")
    run()
    assert outs[0][0] == 0.0


def test_profile_and_errors_name_the_node():
    c = lt.iscalar("c")
    x = lt.dvector("x")
    out = ifelse(c, lt.log(x), x)
    f = lucent.function([c, x], out, mode="FAST_COMPILE", profile=True)
    f(0, np.ones(2))
    assert all("log" not in str(node.op).lower() for node in f.profile.node_time)
    f(1, np.ones(2))
    assert any("log" in str(node.op).lower() for node in f.profile.node_time)


def test_lazy_false_runs_every_node():
    c = lt.iscalar("c")
    x = lt.dvector("x")
    out = ifelse(c, x + 1, Counted("eager")(x))
    Counted.runs.clear()
    from lucent.link.vm import VMLinker

    f = lucent.function([c, x], out, mode=lucent.Mode(linker=VMLinker(lazy=False), optimizer=None))
    f(1, np.zeros(2))
    assert Counted.runs["eager"] == 1
    g = lucent.function([c, x], out, mode=lucent.Mode(linker=VMLinker(lazy=True), optimizer=None))
    Counted.runs.clear()
    np.testing.assert_allclose(g(1, np.zeros(2)), [1.0, 1.0])
    assert "eager" not in Counted.runs
    assert isinstance(out.owner.op, IfElse)


class Explode(Op):
    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        raise AssertionError("the untaken branch ran")


def test_debugmode_skips_the_untaken_branch():
    c = lt.iscalar("c")
    x = lt.dvector("x")
    f = lucent.function([c, x], ifelse(c, x * 2, Explode()(x)), mode="DebugMode")
    np.testing.assert_allclose(f(1, np.ones(2)), [2.0, 2.0])
    report = f.debug_report
    assert not report.problems and report.nodes_run < len(f.maker.fgraph.apply_nodes)
