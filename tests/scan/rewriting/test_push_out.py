"""Scan rewrites on FAST_RUN: loop-invariant and element-wise work moved out, memory saved, unused parts dropped."""

import numpy as np
import pytest
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


def test_a_loop_of_values_the_same_at_every_step_is_an_allocation():
    """All the body computes from non-sequences: the loop becomes the value repeated
    (ring and longer nit_sot buffers keep their rows: the last ones, or zeros after)."""
    from lucent.compile.debug.debugmode import DebugMode
    from lucent.scan.op import ScanInfo

    h, W1, W2 = lt.vector("h"), lt.matrix("W1"), lt.matrix("W2")
    o = scan(lambda h, W1, W2: lt.dot(h, W1 + W2), non_sequences=[h, W1, W2], n_steps=4,
             return_updates=False)
    info = ScanInfo(n_seqs=1, mit_mot_in_slices=(), mit_mot_out_slices=(), mit_sot_in_slices=(),
                    sit_sot_in_slices=(), n_nit_sot=1, n_untraced_sit_sot=0, n_non_seqs=0,
                    as_while=False)
    s = lt.dscalar("s")
    seq, n, size = lt.dvector("seq"), lt.lscalar("n"), lt.lscalar("size")
    stored = Scan([s], [s * 2.0], info)(n, seq[:n], size)
    hv, Wv = np.array([1.0, 2.0]), np.array([[1.0, 0.0], [0.5, 1.0]])
    for mode in ("FAST_RUN", "FAST_COMPILE", DebugMode()):
        f = lucent.function([h, W1, W2, seq, n, size], [o, stored], mode=mode)
        assert bool(_scan_nodes(f)) == (mode == "FAST_COMPILE")
        got, rows = f(hv, Wv, Wv, np.arange(10.0), 3, 7)
        assert_allclose(got, np.tile(hv @ (2 * Wv), (4, 1)))
        assert_allclose(rows, [0.0, 2.0, 4.0, 0.0, 0.0, 0.0, 0.0])
        assert_allclose(f(hv, Wv, Wv, np.arange(10.0), 5, 2)[1], [6.0, 8.0])


def test_accumulated_products_of_sequence_slices_are_one_product():
    from lucent.compile.debug.debugmode import DebugMode

    A, B, c = lt.tensor3("A"), lt.tensor3("B"), lt.matrix("c")
    acc = scan(lambda a, b, u: u + lt.dot(a, b), sequences=[A, B], outputs_info=[c],
               return_updates=False)
    rng = np.random.default_rng(1)
    Av, Bv, cv = rng.normal(size=(6, 2, 3)), rng.normal(size=(6, 3, 4)), rng.normal(size=(2, 4))
    expected = cv + np.einsum("tij,tjk->ik", Av, Bv)
    for mode in ("FAST_RUN", "FAST_COMPILE", DebugMode()):
        f = lucent.function([A, B, c], [acc[-1], acc.owner.inputs[0][-1]], mode=mode)
        assert bool(_scan_nodes(f)) == (mode == "FAST_COMPILE")
        for got in f(Av, Bv, cv):
            assert_allclose(got, expected)
        # no step: the starting value
        if mode == "FAST_COMPILE":  # ``acc[-1]`` of no step is an IndexError here
            with pytest.raises(IndexError):
                f(Av[:0], Bv[:0], cv)
        else:
            assert_allclose(f(Av[:0], Bv[:0], cv)[1], cv)
    # the whole trace is read: the loop stays
    f = lucent.function([A, B, c], acc, mode="FAST_RUN")
    assert _scan_nodes(f)
    assert_allclose(f(Av, Bv, cv)[-1], expected)
