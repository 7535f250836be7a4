"""Loop bodies get the outer rewrites: nested loops in a body are merged like outer ones."""

import numpy as np
from numpy.testing import assert_allclose

import lucent
import lucent.tensor as lt
from lucent.compile.mode import Mode
from lucent.scan import scan
from lucent.scan.op import Scan
from lucent.scan.utils import until


def test_nested_loops_in_a_body_are_rewritten():
    c1, c2 = lt.scalars("c1", "c2")
    x, z = lt.vector("x", shape=(5,)), lt.vector("z", shape=(5,))

    def body(c, x, z):
        up = scan(lambda s1, s2, k: (s1 + 1, until(s2 > k)), sequences=[x, z], non_sequences=[c],
                  return_updates=False)
        down = scan(lambda s1, s2, k: (s1 - 2, until(s2 > k)), sequences=[x, z], non_sequences=[c],
                    return_updates=False)
        return up.sum() + down.sum()

    out = scan(body, sequences=[lt.stack([c1, c2])], non_sequences=[x, z], return_updates=False)
    for mode in (Mode(linker="py", optimizer="fast_run"), "FAST_RUN"):
        f = lucent.function([x, z, c1, c2], out, mode=mode)
        [node] = [n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Scan)]
        assert sum(isinstance(n.op, Scan) for n in node.op.fgraph.apply_nodes) == 1
        # c=1: steps while z <= 1, plus the step where it first holds (3 steps); c=3: 5 steps
        assert_allclose(f(np.zeros(5), np.arange(5.0), 1.0, 3.0), [3 - 6, 5 - 10])


def test_bodies_are_rewritten_when_the_loop_rewrites_are_excluded():
    """Equal bodies after rewriting give equal ops, whatever loop rewrites ran."""
    from lucent.compile.mode import get_default_mode

    x0 = lt.scalar("x0")
    xs = scan(lambda x: x + 0, outputs_info=[x0], n_steps=5, return_updates=False)
    ys = scan(lambda x: x * 1, outputs_info=[x0], n_steps=5, return_updates=False)
    assert xs.owner.inputs[0].owner.op != ys.owner.inputs[0].owner.op
    f = lucent.function([x0], [xs, ys], mode=get_default_mode().excluding("scan"))
    op1, op2 = (n.op for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Scan))
    assert op1 == op2 and hash(op1) == hash(op2)
    for out in f(2.0):
        assert_allclose(out, np.full(5, 2.0))


# --- the body's rewrites in the function's rewrite history ------------------------------

REWRITTEN_PY = Mode(linker="py", optimizer="fast_run")


def _rnn(scale):
    """``h = tanh(W @ h + scale * h)``: the body's product becomes a BLAS call that adds
    ``scale * h`` itself (``scale`` makes the loop unlike other tests' loops)."""
    h0, W = lt.dvector("h0"), lt.dmatrix("W")
    hs = scan(lambda h: lt.tanh(lt.dot(W, h) + scale * h), outputs_info=[h0], n_steps=4,
              name="rnn", return_updates=False)
    return [h0, W], hs[-1]


def _scan_records(history):
    return [r for r in history if r.rewrite == "scan_inner_graph"]


def test_the_rewrite_history_exposes_the_rewritten_body():
    inputs, out = _rnn(0.37)
    f = lucent.function(inputs, out, mode=REWRITTEN_PY)
    history = f.maker.fgraph.rewrite_history
    [(label, body)] = history.inner_histories()
    assert label == 'scan "rnn" body'
    [record] = _scan_records(history)
    assert record.inner_history is body and record.inner_label == label
    names = set(body.counts())
    assert {"local_dot_to_blas", "local_gemm_fold"} <= names, names
    # the body's history is about the body's graph, not the function's
    [node] = [n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, Scan)]
    assert body.fgraph is not f.maker.fgraph and len(body.fgraph.inputs) == len(node.op.fgraph.inputs)
    assert any("Gemv" in str(n.op) for n in body.fgraph.apply_nodes)
    assert f'{label}: {len(body)} rewrites' in str(history)
    assert history.counts(inner=True)["local_dot_to_blas"] == history.counts().get("local_dot_to_blas", 0) + 1
    h0, W = np.ones(3), np.eye(3) * 0.5
    expected = h0
    for _ in range(4):
        expected = np.tanh(W @ expected + 0.37 * expected)
    assert_allclose(f(h0, W), expected)


def test_a_body_rewritten_once_is_still_shown_when_served_from_the_cache():
    from lucent.scan.rewriting import inner_graph

    first = lucent.function(*_rnn(0.41), mode=REWRITTEN_PY)
    [(_, body)] = first.maker.fgraph.rewrite_history.inner_histories()
    cached_before = len(inner_graph._DONE)
    second = lucent.function(*_rnn(0.41), mode=REWRITTEN_PY)  # an equal loop: its body is not rewritten again
    assert len(inner_graph._DONE) == cached_before
    [(label, again)] = second.maker.fgraph.rewrite_history.inner_histories()
    assert label == 'scan "rnn" body' and again is body and len(again) > 0


def test_nested_loops_have_nested_histories():
    x0 = lt.dscalar("x0")

    def outer_step(acc):
        inner = scan(lambda a: lt.exp(a * 0.5) * 2.0 * 3.0, outputs_info=[acc], n_steps=3,
                     name="inner", return_updates=False)
        return inner[-1] + 0.29

    out = scan(outer_step, outputs_info=[x0], n_steps=2, name="outer", return_updates=False)
    f = lucent.function([x0], out[-1], mode=REWRITTEN_PY)
    history = f.maker.fgraph.rewrite_history
    labels = [label for label, _ in history.inner_histories()]
    assert labels == ['scan "outer" body', 'scan "outer" body > scan "inner" body']
    (_, outer_body), (_, inner_body) = history.inner_histories()
    # the outer body's history holds the record that brought in the nested loop's rewritten body
    [record] = _scan_records(outer_body)
    assert record.inner_history is inner_body
    assert "elemwise_fusion" in inner_body.counts()
    assert outer_body.inner_histories() == [('scan "inner" body', inner_body)]
    text = str(history)
    assert 'scan "outer" body > scan "inner" body: ' in text
    assert "elemwise_fusion" in history.counts(inner=True)
