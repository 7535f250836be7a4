"""Tests of lucent/compile/builders_rewriting.py: an ``OpFromGraph``'s inner graph gets the
outer rewrites, and the function's rewrite history shows them."""

import numpy as np
from numpy.testing import assert_allclose

import lucent
import lucent.tensor as lt
from lucent.compile.builders import OpFromGraph
from lucent.compile.builders_rewriting import ofg_with_rewritten_inner_graph
from lucent.compile.mode import Mode

REWRITTEN_PY = Mode(linker="py", optimizer="fast_run")


def _softmax_op(name, offset):
    """``exp(a) / sum(exp(a)) + offset``: the rewrites make it a (stable) softmax."""
    a = lt.dvector("a")
    e = lt.exp(a)
    return OpFromGraph([a], [e / e.sum() + offset], name=name)


def test_the_function_history_links_the_inner_graph_history():
    op = _softmax_op("soft", 0.13)
    x = lt.dvector("x")
    f = lucent.function([x], op(x) * 2, mode=REWRITTEN_PY)
    history = f.maker.fgraph.rewrite_history
    [(label, inner)] = history.inner_histories()
    assert label == 'OpFromGraph "soft" body'
    [record] = [r for r in history if r.rewrite == "ofg_inner_graph"]
    assert record.inner_history is inner
    assert "local_exp_over_sum_exp" in inner.counts(), inner.counts()
    assert f"{label}: {len(inner)} rewrites" in str(history)
    # the rewritten op keeps its history: the cache of rewritten ops gives it to the next compile
    assert ofg_with_rewritten_inner_graph(op).inner_rewrite_history is inner
    g = lucent.function([x], op(x) + 1, mode=REWRITTEN_PY)
    assert [h for _, h in g.maker.fgraph.rewrite_history.inner_histories()] == [inner]
    v = np.array([1.0, 2.0, 3.0])
    assert_allclose(f(v), 2 * (np.exp(v) / np.exp(v).sum() + 0.13))


def test_one_op_used_twice_lists_its_inner_history_once():
    op = _softmax_op(None, 0.17)
    x, y = lt.dvector("x"), lt.dvector("y")
    f = lucent.function([x, y], op(x) + op(y), mode=REWRITTEN_PY)
    history = f.maker.fgraph.rewrite_history
    records = [r for r in history if r.rewrite == "ofg_inner_graph"]
    assert len(records) == 2 and records[0].inner_history is records[1].inner_history
    assert [label for label, _ in history.inner_histories()] == ["OpFromGraph body"]
