"""Scan rewrites on FAST_RUN: loop-invariant and element-wise work moved out, memory saved, unused parts dropped."""

import numpy as np
from numpy.testing import assert_allclose

import lucent
import lucent.tensor as lt
from lucent.scan import scan
from lucent.scan.op import Scan


def _scan_nodes(f):
    return [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Scan)]


def test_rewrites_on_fast_run():
    X, h0, W, b = lt.matrix("X"), lt.vector("h0"), lt.matrix("W"), lt.vector("b")
    hs, unused = scan(
        lambda x_t, h, W, b: [lt.tanh(lt.dot(W * 2, h) + lt.exp(x_t) * b), x_t.sum()],
        sequences=[X], outputs_info=[h0, None], non_sequences=[W, b], return_updates=False,
    )
    f = lucent.function([X, h0, W, b], hs[-1], mode="FAST_RUN")
    (node,) = _scan_nodes(f)
    # the body has the fast_run rewrites too (dot + add may become a Gemv)
    inner_ops = {type(n.op).__name__ for n in node.op.fgraph.toposort()}
    assert "Exp" not in str(node.op.fgraph.outputs) and inner_ops <= {"Dot", "Add", "Tanh", "Elemwise", "Gemv"}
    assert all("Exp" not in str(n.op) and "Mul" not in str(n.op) for n in node.op.fgraph.toposort())
    assert node.op.info.n_nit_sot == 0  # the unused output is gone
    # only the last state is stored: a one-row buffer
    buf = node.inputs[node.op.layout.o_states]
    assert buf.type.shape[0] == 1
    rng = np.random.default_rng(0)
    Wv, Xv, h0v, bv = 0.3 * rng.normal(size=(3, 3)), rng.normal(size=(40, 3)), np.zeros(3), rng.normal(size=3)
    h = h0v
    for t in range(40):
        h = np.tanh((Wv * 2) @ h + np.exp(Xv[t]) * bv)
    assert_allclose(f(Xv, h0v, Wv, bv), h)
    g = lucent.function([X, h0, W, b], hs[-1], mode="FAST_COMPILE")
    assert_allclose(g(Xv, h0v, Wv, bv), h)
