"""DebugMode re-evaluates every recorded rewrite and names the one that changed a value."""

import numpy as np
import pytest

pytest.importorskip("numba")

import lucent  # noqa: E402
import lucent.tensor as lt  # noqa: E402
from lucent.debugmode import BadOptimization, DebugMode  # noqa: E402
from lucent.graph.rewriting.basic import SequentialGraphRewriter, in2out, node_rewriter  # noqa: E402
from lucent.graph.rewriting.db import RewriteDatabaseQuery, optdb  # noqa: E402

EXP = lt.exp(lt.dvector()).owner.op


@node_rewriter(None)
def exp_becomes_square(fgraph, node):
    """Deliberately wrong: replaces exp(x) by x**2."""
    if node.op == EXP:
        return [lt.sqr(node.inputs[0])]
    return None


def _bad_mode(on_error="raise"):
    # The wrong rewrite lives only in this mode's optimizer, never in optdb.
    rewriter = SequentialGraphRewriter(
        in2out(exp_becomes_square, name="exp_becomes_square"),
        optdb.query(RewriteDatabaseQuery(include=["fast_run"])),
    )
    return DebugMode(on_error=on_error, optimizer=rewriter)


def test_wrong_rewrite_is_bad_optimization_naming_it():
    x = lt.dvector("x")
    y = lt.exp(x) * 3
    f = lucent.function([x], y, mode=_bad_mode())
    with pytest.raises(BadOptimization) as info:
        f(np.array([0.5, 2.0]))
    err = info.value
    assert "exp_becomes_square" in err.rewrite
    assert err.old.owner.op == EXP
    np.testing.assert_allclose(err.old_value, np.exp([0.5, 2.0]))
    np.testing.assert_allclose(err.new_value, [0.25, 4.0])
    assert err.difference["abs_index"] == (1,)
    text = str(err)
    assert "exp_becomes_square" in text and "test_rewrite_check.py" in text
    assert "value before the rewrite" in text and "largest absolute difference" in text


def test_report_mode_returns_rewritten_results_and_lists_the_rewrite():
    x = lt.dvector("x")
    f = lucent.function([x], lt.exp(x).sum(), mode=_bad_mode("report"))
    assert f(np.array([1.0, 2.0])) == pytest.approx(5.0)  # the (wrongly) rewritten graph's value
    problems = list(f.debug_report)
    assert [p.kind for p in problems] == ["BadOptimization"]
    assert f.debug_report.rewrites_checked >= 1


def test_correct_rewrites_pass_and_are_counted():
    x = lt.dmatrix("x")
    y = (lt.exp(x) * 2 + 1).sum(axis=0) / x.shape[0]
    f = lucent.function([x], y, mode=DebugMode())
    value = np.random.default_rng(0).normal(size=(4, 3))
    np.testing.assert_allclose(f(value), (np.exp(value) * 2 + 1).sum(axis=0) / 4)
    report = f.debug_report
    assert report.ok and report.rewrites_checked > 0


class _CountingDouble(lucent.graph.op.Op):
    """``2 * x``, counting its perform calls (a branch that must stay lazy)."""

    __props__ = ()
    calls = 0

    def make_node(self, x):
        x = lt.as_tensor_variable(x)
        return lucent.graph.basic.Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        type(self).calls += 1
        out[0][0] = inputs[0] * 2


def test_rewrites_in_a_branch_not_taken_are_not_evaluated():
    """The rewrite check neither runs the branch an ifelse did not take nor counts its records."""
    from lucent.ifelse import ifelse

    c = lt.iscalar("c")
    x = lt.dvector("x")
    lazy = ifelse(c, x + 1, _CountingDouble()(x) * 1 + 0)  # * 1 + 0: rewrites inside the branch
    f = lucent.function([c, x], lazy, mode=DebugMode(on_error="report", stability_patience=1))
    _CountingDouble.calls = 0
    np.testing.assert_allclose(f(1, np.ones(2)), [2.0, 2.0])
    report = f.debug_report
    assert _CountingDouble.calls == 0 and report.ok, str(report)
    assert report.rewrites_not_run > 0 and report.rewrites_unevaluated == 0
    assert "in branches not taken" in str(report)
    np.testing.assert_allclose(f(0, np.ones(2)), [2.0, 2.0])
    assert _CountingDouble.calls > 0 and f.debug_report.ok
    assert f.debug_report.rewrites_not_run < report.rewrites_not_run


# --- inner graphs: the wrong inner rewrite is named ------------------------------------------

def _wrongly_rewritten(op):
    """``op`` with ``exp_becomes_square`` applied to its inner graph, and that graph's history."""
    fgraph = op.fgraph.clone()
    in2out(exp_becomes_square, name="exp_becomes_square").rewrite(fgraph)
    new_op = op.clone_with_inner_graph(fgraph)
    new_op._inner_rewritten = True
    new_op.inner_rewrite_history = fgraph.rewrite_history
    return new_op


def test_a_wrong_rewrite_in_a_loop_body_is_named_with_its_step(monkeypatch):
    from lucent.scan import scan
    from lucent.scan.rewriting import inner_graph

    monkeypatch.setattr(inner_graph, "scan_with_rewritten_body", _wrongly_rewritten)
    h0 = lt.dvector("h0")
    hs = scan(lambda h: lt.exp(h) * 0.5, outputs_info=[h0], n_steps=3, name="rnn", return_updates=False)
    f = lucent.function([h0], hs[-1], mode=DebugMode(on_error="report"))
    f(np.array([0.5, 2.0]))
    [problem] = [p for p in f.debug_report.problems if p.kind == "BadOptimization"]
    assert problem.rewrite == "scan_inner_graph"
    assert problem.inner_label == 'scan "rnn" body' and problem.inner_step == 0
    [inner] = problem.inner_problems
    assert inner.rewrite == "exp_becomes_square" and inner.old.owner.op == EXP
    np.testing.assert_allclose(inner.old_value, np.exp([0.5, 2.0]))
    np.testing.assert_allclose(inner.new_value, [0.25, 4.0])
    text = str(problem)
    assert 'inside the scan "rnn" body, at step 0 of the loop' in text
    assert "exp_becomes_square (step 1 of its rewrite history)" in text


def test_a_wrong_rewrite_in_an_opfromgraph_is_named(monkeypatch):
    from lucent.compile import builders_rewriting
    from lucent.compile.builders import OpFromGraph

    monkeypatch.setattr(builders_rewriting, "ofg_with_rewritten_inner_graph", _wrongly_rewritten)
    a = lt.dvector("a")
    op = OpFromGraph([a], [lt.exp(a) * 0.75], name="g")
    x = lt.dvector("x")
    f = lucent.function([x], op(x) + 1, mode=DebugMode(on_error="report"))
    f(np.array([0.5, 2.0]))
    # (the in-place Add made before reads the node replaced later, so it differs too)
    [problem] = [p for p in f.debug_report.problems if p.kind == "BadOptimization" and p.rewrite == "ofg_inner_graph"]
    assert problem.inner_step is None
    assert problem.inner_label == 'OpFromGraph "g" body'
    assert [p.rewrite for p in problem.inner_problems] == ["exp_becomes_square"]
    assert 'inside the OpFromGraph "g" body:' in str(problem)


def test_correct_inner_rewrites_raise_nothing():
    from lucent.scan import scan

    h0 = lt.dvector("h0")
    hs = scan(lambda h: lt.exp(h * 0.1) * 0.5 + 0.5 * 1.0, outputs_info=[h0], n_steps=3, name="ok",
              return_updates=False)
    f = lucent.function([h0], hs[-1], mode=DebugMode())
    f(np.array([0.5, 2.0]))
    assert f.debug_report.ok
    assert f.maker.fgraph.rewrite_history.inner_histories()
