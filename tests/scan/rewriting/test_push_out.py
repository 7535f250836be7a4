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
    # only the last state is read: it is carried as one value, not a buffer
    assert node.op.info.n_sit_sot == 0 and node.op.info.n_untraced_sit_sot == 1
    assert node.inputs[node.op.layout.o_untraced].type.ndim == 1
    rng = np.random.default_rng(0)
    Wv, Xv, h0v, bv = 0.3 * rng.normal(size=(3, 3)), rng.normal(size=(40, 3)), np.zeros(3), rng.normal(size=3)
    h = h0v
    for t in range(40):
        h = np.tanh((Wv * 2) @ h + np.exp(Xv[t]) * bv)
    assert_allclose(f(Xv, h0v, Wv, bv), h)
    g = lucent.function([X, h0, W, b], hs[-1], mode="FAST_COMPILE")
    assert_allclose(g(Xv, h0v, Wv, bv), h)


def test_a_loop_computing_from_sequences_alone_is_taken_from_outside():
    x, h0 = lt.vector("x"), lt.scalar("h0")
    hs, doubled = scan(lambda x_t, h: [h + x_t, x_t * 2.0], sequences=[x], outputs_info=[h0, None],
                       return_updates=False)
    copied = scan(lambda x_t: x_t, sequences=[x], return_updates=False)
    v = np.array([1.0, -2.0, 0.5])
    for mode in (lucent.compile.mode.Mode(linker="py", optimizer="fast_run"), "FAST_RUN"):
        f = lucent.function([x, h0], [hs, doubled], mode=mode)
        (node,) = _scan_nodes(f)
        # the loop keeps its work, so it keeps ``doubled`` too (2 * x is a new sequence)
        assert node.op.info.n_nit_sot == 1 and "Mul" not in str(node.op.fgraph.outputs)
        got = f(v, 1.0)
        assert_allclose(got[0], 1.0 + np.cumsum(v))
        assert_allclose(got[1], 2.0 * v)
        g = lucent.function([x], copied, mode=mode)
        assert not _scan_nodes(g)
        assert_allclose(g(v), v)
