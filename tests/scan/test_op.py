"""The ``Scan`` op itself: layout, identity, shapes, ring buffers, connection pattern."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

import lucent
import lucent.tensor as lt
from lucent.scan import scan
from lucent.scan.op import Scan, ScanInfo
from tests.helpers import evaluate_with_perform


def _info(**kw):
    base = dict(n_seqs=0, mit_mot_in_slices=(), mit_mot_out_slices=(), mit_sot_in_slices=(),
                sit_sot_in_slices=(), n_nit_sot=0, n_untraced_sit_sot=0, n_non_seqs=0, as_while=False)
    base.update(kw)
    return ScanInfo(**base)


def test_scan_info_counts():
    info = _info(n_seqs=2, mit_sot_in_slices=((-2, -1),), sit_sot_in_slices=((-1,),), n_nit_sot=1,
                 n_non_seqs=3, as_while=True)
    assert (info.n_mit_sot, info.n_sit_sot, info.n_mit_mot) == (1, 1, 0)
    assert info.n_inner_inputs == 2 + 2 + 1 + 3
    assert info.n_inner_outputs == 1 + 1 + 1 + 1
    assert info.n_outer_inputs == 1 + 2 + 1 + 1 + 1 + 3
    assert info.n_outer_outputs == 3
    assert info.tap_array == ((-2, -1), (-1,))
    with pytest.warns(DeprecationWarning):
        assert info.n_shared_outs == 0


def test_op_identity_and_errors():
    x = lt.vector("x")
    a = scan(lambda v: v * 2, sequences=[x], return_updates=False)
    b = scan(lambda v: v * 2, sequences=[x], return_updates=False)
    c = scan(lambda v: v * 3, sequences=[x], return_updates=False)
    assert a.owner.op == b.owner.op and hash(a.owner.op) == hash(b.owner.op)
    assert a.owner.op != c.owner.op
    assert str(a.owner.op) == "Scan{scan_fn, while_loop=False, inplace=none}"
    op = a.owner.op
    with pytest.raises(ValueError, match="expects 3 inputs"):
        op(x)
    with pytest.raises(TypeError, match="n_steps must be an integer"):
        op(lt.scalar(), x, lt.iscalar())
    with pytest.raises(TypeError, match="sequence 0"):
        op(lt.lscalar(), lt.matrix(), lt.lscalar())
    s = lt.scalar()
    with pytest.raises(ValueError, match="taps"):
        Scan([s], [s], _info(mit_sot_in_slices=((0,),)))
    with pytest.raises(NotImplementedError, match="mit_mot"):
        Scan([s], [s], _info(mit_mot_in_slices=((-1,),), mit_mot_out_slices=((0,),)))
    with pytest.raises(ValueError, match="inner inputs"):
        Scan([s, s.type()], [s], _info(sit_sot_in_slices=((-1,),)))


def test_ring_buffer_and_perform():
    """A buffer shorter than init + n_steps is a ring: the last rows come back oldest first."""
    s = lt.scalar("s")
    op = Scan([s], [s + 1], _info(sit_sot_in_slices=((-1,),)))
    n, buf = lt.lscalar("n"), lt.vector("buf")
    out = op(n, buf)
    assert_allclose(evaluate_with_perform(out, {n: 5, buf: np.array([0.0, 0, 0, 0, 0, 0])}), np.arange(6))
    assert_allclose(evaluate_with_perform(out, {n: 5, buf: np.array([0.0, 0])}), [4, 5])
    assert_allclose(evaluate_with_perform(out, {n: 5, buf: np.array([0.0])}), [5])
    with pytest.raises(ValueError, match="n_steps must be >= 0"):
        evaluate_with_perform(out, {n: -1, buf: np.array([0.0])})
    with pytest.raises(ValueError, match="initial row"):
        evaluate_with_perform(out, {n: 2, buf: np.zeros(0)})


def test_infer_shape_and_connection_pattern():
    x, W, h0 = lt.matrix("x"), lt.matrix("W"), lt.vector("h0")
    outs = scan(lambda x_t, h, W: [lt.dot(W, h) + x_t, (x_t * 2).sum()], sequences=[x],
                outputs_info=[h0, None], non_sequences=[W], return_updates=False)
    node = outs[0].owner.inputs[0].owner
    shapes = node.op.infer_shape(None, node, [tuple(i.shape[d] for d in range(i.type.ndim)) for i in node.inputs])
    f = lucent.function([x, W, h0], [s for shp in shapes for s in shp], mode="FAST_COMPILE",
                        on_unused_input="ignore")
    xv = np.ones((4, 3))
    assert [int(v) for v in f(xv, np.eye(3), np.zeros(3))] == [5, 3, 4]
    pattern = node.op.connection_pattern(node)
    # n_steps reaches nothing; the sequence, initial state and W reach the state output
    assert pattern[0] == [False, False]
    assert pattern[1] == [True, True]
    assert pattern[2] == [True, False]
    assert pattern[-1] == [True, False]


def test_dprint_shows_inner_graph():
    import io

    x = lt.vector("x")
    out = scan(lambda v: lt.exp(v), sequences=[x], name="expo", return_updates=False)
    buf = io.StringIO()
    lucent.dprint(out, file=buf)
    text = buf.getvalue()
    assert "Inner graphs:" in text
    assert "Scan{expo, while_loop=False, inplace=none}" in text.split("Inner graphs:")[1]
    assert "Exp" in text.split("Inner graphs:")[1]


def test_lengths_read_from_per_step_inputs_come_from_the_outer_inputs(lucent_mode):
    """A sequence row or a state's tap has the same shape at every step: an output
    that is one of them gets its length from the outer input, so asking for it
    needs no loop."""
    seq, init = lt.matrix("seq"), lt.matrix("init")
    out_seq, out_tm4 = scan(lambda s, s4: (s, s4), sequences=seq,
                            outputs_info=[{"initial": init, "taps": [-4]}, None], return_updates=False)
    f = lucent.function([seq, init], [out_tm4[1].shape, out_seq[-1].shape], mode=lucent_mode)
    if lucent_mode != "FAST_COMPILE":
        assert not [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Scan)]
    s, i = np.arange(20.0).reshape(10, 2), np.zeros((4, 2))
    got = f(s, i)
    assert list(got[0]) == [2] and list(got[1]) == [2]
    values = lucent.function([seq, init], out_tm4, mode=lucent_mode)(s, i)
    assert_allclose(values, np.concatenate([i, s[:6]]))


def test_random_draws_in_the_native_loop():
    """A generator carried by the loop: drawn from natively (no object mode), advanced in
    place inside the body, the caller's generator untouched, both paths alike."""
    rng = lt.random.type.random_generator_type("rng")
    x0 = lt.scalar("x0")
    final_rng, xs = scan(lambda r, x: lt.random.normal(x, rng=r).owner.outputs,
                         outputs_info=[rng, x0], n_steps=5, return_updates=False)
    g = np.random.default_rng(7)
    ref, v = [], 0.5
    for _ in range(5):
        v = g.normal(v)
        ref.append(v)
    for mode in ("FAST_RUN", "FAST_COMPILE"):
        f = lucent.function([rng, x0], [xs, final_rng], mode=mode)
        if mode == "FAST_RUN":
            program = getattr(f.maker.linker, "program", None)
            assert program is None or not program.fallback_ops
            [node] = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Scan)]
            assert all(n.op.destroy_map == {0: [0]} for n in node.op.fgraph.toposort())
        caller = np.random.default_rng(7)
        state = caller.bit_generator.state
        got, after = f(caller, 0.5)
        assert_allclose(got, ref)
        assert caller.bit_generator.state == state
        assert after.bit_generator.state == g.bit_generator.state


def test_a_body_rewritten_in_place_reads_a_value_before_overwriting_it(lucent_mode):
    """The step's value ``a`` is read by a sum and overwritten by ``a * w`` (in place):
    the sum must run first on every path, whatever order the body's nodes were built in."""
    xs, w = lt.dmatrix("xs"), lt.dvector("w")

    def step(x_t, w):
        a = lt.set_subtensor(x_t[1:3], 5.0)  # a fresh value the in-place rewrite may overwrite
        return [a * w, a.sum() + 0 * w]

    outs = scan(step, sequences=[xs], non_sequences=[w], return_updates=False)
    f = lucent.function([xs, w], outs, mode=lucent_mode)
    xv = np.random.default_rng(3).normal(size=(5, 4))
    wv = np.linspace(0.5, 2.0, 4)
    a = xv.copy()
    a[:, 1:3] = 5.0
    got = f(xv, wv)
    assert_allclose(got[0], a * wv, rtol=1e-12)
    assert_allclose(got[1], np.repeat(a.sum(axis=1)[:, None], 4, axis=1), rtol=1e-12)
    body = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Scan)][0].op.fgraph
    if lucent_mode == "FAST_RUN":
        assert any(n.op.destroy_map for n in body.apply_nodes), "the body was not rewritten in place"


def test_a_step_changing_the_shape_of_its_state_is_an_error_on_every_path(lucent_mode):
    from lucent.scan.op import STATE_SHAPE_MESSAGE

    h0 = lt.dvector("h0")
    hs = scan(lambda h: lt.concatenate([h, h])[:3], outputs_info=[h0], n_steps=4, return_updates=False)
    f = lucent.function([h0], hs, mode=lucent_mode)
    assert_allclose(f(np.arange(3.0))[-1], np.arange(3.0))
    expected = STATE_SHAPE_MESSAGE.format(0, (3,), 0, (2,)).replace("(", r"\(").replace(")", r"\)")
    with pytest.raises(ValueError, match=expected):
        f(np.arange(2.0))
