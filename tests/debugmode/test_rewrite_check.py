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
