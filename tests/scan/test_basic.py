"""``scan()``: building loops, checked against NumPy loops on both execution paths."""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose

import lucent
import lucent.tensor as lt
from lucent.graph.fg import MissingInputError
from lucent.scan import scan, until
from lucent.scan.op import Scan
from tests.helpers import run

RNG = np.random.default_rng(1234)


def test_rnn_recurrence_1000_steps():
    X, h0, W = lt.matrix("X"), lt.vector("h0"), lt.matrix("W")
    hs = scan(
        lambda x_t, h, W: lt.tanh(lt.dot(W, h) + x_t),
        sequences=[X], outputs_info=[h0], non_sequences=[W], return_updates=False,
    )
    Xv = RNG.normal(size=(1000, 4))
    Wv = 0.4 * RNG.normal(size=(4, 4))
    h0v = RNG.normal(size=4)
    expected, h = [], h0v
    for t in range(1000):
        h = np.tanh(Wv @ h + Xv[t])
        expected.append(h)
    all_h, last = run([hs, hs[-1]], {X: Xv, h0: h0v, W: Wv})
    assert_allclose(all_h, np.array(expected), rtol=1e-10)
    assert_allclose(last, expected[-1], rtol=1e-10)


def test_taps_nit_sot_and_go_backwards():
    """Sequence taps, several negative output taps, an output not fed back, backwards iteration."""
    s, y0, a = lt.vector("s"), lt.vector("y0"), lt.scalar("a")

    def step(s_m2, s_p1, y_m3, y_m1, a):
        y = a * y_m1 + y_m3 * s_p1 - s_m2
        return y, y * s_p1

    (ys, zs) = scan(
        step,
        sequences=[dict(input=s, taps=[-2, 1])],
        outputs_info=[dict(initial=y0, taps=[-3, -1]), None],
        non_sequences=[a],
        return_updates=False,
    )
    back = scan(lambda v, acc: acc * 2 + v, sequences=[s], outputs_info=[lt.constant(np.float64(0.0))],
                go_backwards=True, return_updates=False)
    sv, y0v, av = RNG.normal(size=9), RNG.normal(size=3), 0.7
    ys_ref, zs_ref = list(y0v), []
    for t in range(2, 8):  # s[t-2] and s[t+1] exist for t = 2..7
        y = av * ys_ref[-1] + ys_ref[-3] * sv[t + 1] - sv[t - 2]
        ys_ref.append(y)
        zs_ref.append(y * sv[t + 1])
    acc, back_ref = 0.0, []
    for v in sv[::-1]:
        acc = acc * 2 + v
        back_ref.append(acc)
    got = run([ys, zs, back], {s: sv, y0: y0v, a: av})
    assert_allclose(got[0], ys_ref[3:])
    assert_allclose(got[1], zs_ref)
    assert_allclose(got[2], back_ref)


def test_until_and_symbolic_n_steps():
    a, k = lt.scalar("a"), lt.iscalar("k")

    def halve(v):
        nv = v / 2
        return nv, until(nv < 1)

    w = scan(halve, outputs_info=[a], n_steps=k, return_updates=False)
    count = scan(lambda i: i + 1, outputs_info=[lt.constant(np.int64(0))], n_steps=k, return_updates=False)
    got = run([w, count], {a: 20.0, k: np.int32(100)})
    assert_allclose(got[0], [10, 5, 2.5, 1.25, 0.625])
    assert_allclose(got[1], np.arange(1, 101))
    got = run([w, count], {a: 20.0, k: np.int32(2)})
    assert_allclose(got[0], [10, 5])
    got = run([w, count], {a: 20.0, k: np.int32(0)})
    assert got[0].shape == (0,) and got[1].shape == (0,)


def test_shared_variable_updates(lucent_mode):
    x = lt.vector("x")
    counter = lucent.shared(np.asarray(0.0), name="counter")
    total = lucent.shared(np.zeros(2), name="total")

    def step(v):
        return v + counter, {counter: counter + 1, total: total + v}

    with pytest.warns(DeprecationWarning, match="return_updates=False"):
        out, updates = scan(step, sequences=[x])
    assert list(updates) == [counter, total]
    f = lucent.function([x], out, updates=updates, mode=lucent_mode)
    assert_allclose(f(np.zeros(3)), [0, 1, 2])
    assert counter.get_value() == 3
    assert_allclose(total.get_value(), [0, 0])
    assert_allclose(f(np.ones(2)), [4, 5])
    assert counter.get_value() == 5
    assert_allclose(total.get_value(), [2, 2])


def test_implicit_non_sequences_and_strict():
    x = lt.vector("x")
    W = lt.scalar("W")
    scale = lucent.shared(np.asarray(3.0), name="scale")
    out = scan(lambda v: v * scale * W, sequences=[x], return_updates=False)
    node = out.owner
    assert isinstance(node.op, Scan) and node.op.info.n_non_seqs == 2
    with pytest.raises(MissingInputError, match="scale"):
        scan(lambda v: v * scale, sequences=[x], strict=True, return_updates=False)
    ok = scan(lambda v, s: v * s, sequences=[x], non_sequences=[scale], strict=True, return_updates=False)
    f = lucent.function([x, W], [out, ok], mode="FAST_COMPILE")
    got = f(np.ones(2), 2.0)
    assert_allclose(got[0], [6, 6])
    assert_allclose(got[1], [3, 3])


def test_return_conventions():
    x = lt.vector("x")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out, upd = scan(lambda v: v * 2, sequences=[x])
    assert any(issubclass(w.category, DeprecationWarning) for w in caught) and upd == {}
    assert isinstance(scan(lambda v: v, sequences=[x], return_list=True, return_updates=False), list)
    two = scan(lambda v: [v, v * 2], sequences=[x], return_updates=False)
    assert isinstance(two, list) and len(two) == 2
    assert scan(lambda v: {}, sequences=[x], return_updates=False) is None
    c = lucent.shared(np.asarray(0.0))
    with pytest.raises(ValueError, match="return_updates=False"):
        scan(lambda v: (v, {c: c + 1}), sequences=[x], return_updates=False)


def test_single_step_needs_no_loop():
    x = lt.vector("x")
    out = scan(lambda v: v * 2, sequences=[x], n_steps=1, return_updates=False)
    assert not any(isinstance(n.op, Scan) for n in lucent.graph.traversal.applys_between([x], [out]))
    assert_allclose(lucent.function([x], out, mode="FAST_COMPILE")(np.array([3.0, 4.0])), [6.0])


def test_bad_input_is_named():
    x, a = lt.vector("x"), lt.scalar("a")
    with pytest.raises(ValueError, match="n_steps"):
        scan(lambda v: v, outputs_info=[a], return_updates=False)
    with pytest.raises(ValueError, match="must be an int"):
        scan(lambda v: v, sequences=[x], n_steps=lt.scalar("f"), return_updates=False)
    with pytest.raises(ValueError, match="outputs_info"):
        scan(lambda v, acc: [acc + v, v], sequences=[x], outputs_info=[a], return_updates=False)
    with pytest.raises(TypeError, match="initial state"):
        scan(lambda v, acc: lt.cast(acc + v, "float32"), sequences=[x], outputs_info=[a], return_updates=False)
    with pytest.raises(ValueError, match="smaller than 0"):
        scan(lambda v, acc: acc, sequences=[x], outputs_info=[dict(initial=x, taps=[0])], return_updates=False)
    with pytest.raises(ValueError, match="return"):
        scan(lambda v: 3, sequences=[x], return_updates=False)
    k = lt.iscalar("k")
    out = scan(lambda v: v, sequences=[x], n_steps=k, return_updates=False)
    f = lucent.function([x, k], out, mode="FAST_COMPILE")
    with pytest.raises(ValueError, match="n_steps must be >= 0"):
        f(np.ones(2), -1)
    with pytest.raises(ValueError, match="sequence 0 has 2 entries"):
        f(np.ones(2), 3)


def test_an_update_reading_a_variable_the_step_was_not_given_is_refused():
    c, inc = lucent.shared(0.0, name="c"), lt.scalar("inc")
    with pytest.raises(MissingInputError, match="inc"):
        scan(lambda: (lt.zeros(()), {c: c + inc}), n_steps=3)
    # read by an output too, or passed as a non-sequence: taken in
    for make in (lambda: (lt.zeros(()) + inc, {c: c + inc}),):
        outs, upd = scan(make, n_steps=3)
        lucent.function([inc], outs, updates=upd)(2.0)
    assert c.get_value() == 6.0
    outs, upd = scan(lambda i: (lt.zeros(()), {c: c + i}), non_sequences=[inc], n_steps=3)
    lucent.function([inc], outs, updates=upd)(1.0)
    assert c.get_value() == 9.0


def test_a_shared_update_is_the_last_returned_step(lucent_mode):
    from lucent.graph.basic import equal_computations

    x = lucent.shared(np.array(1.5), name="x")
    with pytest.warns(DeprecationWarning):
        _, upd = scan(lambda: {x: x * 2.0}, outputs_info=[], n_steps=4)
    traced = scan(lambda x: x * 2.0, outputs_info=[x], n_steps=4, return_updates=False)
    assert equal_computations(list(upd.values()), [traced[-1]])
    f = lucent.function([], [], updates=upd, mode=lucent_mode)
    f()
    assert x.get_value() == 24.0
