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
