"""Gradients through scan (back-propagation through time), on both paths."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

import lucent
import lucent.tensor as lt
from lucent.gradient import grad, hessian, jacobian, verify_grad
from lucent.scan import scan
from tests.helpers import run

RNG = np.random.default_rng(7)


def _rnn_cost(X, h0, W):
    hs = scan(lambda x_t, h, W: lt.tanh(lt.dot(W, h) + x_t), sequences=[X], outputs_info=[h0],
              non_sequences=[W], return_updates=False)
    return (hs**2).sum() + hs[-1].sum()


def _taps_cost(s, y0, a):
    ys, zs = scan(
        lambda s_m1, s_p1, y2, y1, a: [a * y1 - 0.3 * y2 * s_p1 + s_m1, lt.sin(s_p1) * y1],
        sequences=[dict(input=s, taps=[-1, 1])],
        outputs_info=[dict(initial=y0, taps=[-2, -1]), None],
        non_sequences=[a], go_backwards=True, return_updates=False,
    )
    return (ys**2).sum() + zs.sum()


@pytest.mark.slow  # many Numba compiles (nested loops, gradients of gradients)
def test_verify_grad_rnn_and_taps(lucent_mode):
    verify_grad(_rnn_cost, [RNG.normal(size=(6, 3)), RNG.normal(size=3), 0.5 * RNG.normal(size=(3, 3))],
                rng=RNG, mode=lucent_mode)
    verify_grad(_taps_cost, [RNG.normal(size=7), RNG.normal(size=2), np.array(0.6)], rng=RNG, mode=lucent_mode)


def test_rnn_gradient_matches_numpy_bptt():
    X, h0, W = lt.matrix("X"), lt.vector("h0"), lt.matrix("W")
    hs = scan(lambda x_t, h, W: lt.tanh(lt.dot(W, h) + x_t), sequences=[X], outputs_info=[h0],
              non_sequences=[W], return_updates=False)
    cost = hs[-1].sum()
    gX, gh0, gW = grad(cost, [X, h0, W])
    T = 1000
    Xv, h0v, Wv = RNG.normal(size=(T, 3)), RNG.normal(size=3), 0.4 * RNG.normal(size=(3, 3))
    hs_v = [h0v]
    for t in range(T):
        hs_v.append(np.tanh(Wv @ hs_v[-1] + Xv[t]))
    g = np.ones(3)
    gXr, gWr = np.zeros_like(Xv), np.zeros_like(Wv)
    for t in reversed(range(T)):
        pre = g * (1 - hs_v[t + 1] ** 2)
        gXr[t] = pre
        gWr += np.outer(pre, hs_v[t])
        g = Wv.T @ pre
    got = run([gX, gh0, gW], {X: Xv, h0: h0v, W: Wv})
    assert_allclose(got[0], gXr, atol=1e-10)
    assert_allclose(got[1], g, atol=1e-10)
    assert_allclose(got[2], gWr, atol=1e-10)


def test_backward_step_reads_the_stored_outputs_instead_of_running_the_step_again():
    """tanh's derivative is written with its output: the backward loop reads that from
    the forward buffer, so its body has no product with W, and no tanh, left."""
    from lucent.graph.traversal import ancestors
    from lucent.scan.op import Scan

    X, h0, W = lt.matrix("X"), lt.vector("h0"), lt.matrix("W")
    hs = scan(lambda x_t, h, W: lt.tanh(lt.dot(W, h) + x_t), sequences=[X], outputs_info=[h0],
              non_sequences=[W], return_updates=False)
    gW = grad(hs[-1].sum(), W)
    back = [v.owner.op for v in ancestors([gW]) if v.owner is not None and isinstance(v.owner.op, Scan)
            and v.owner.op.name is None and v.owner.inputs[0] is not None]
    bodies = [op.fgraph for op in back]
    names = [str(n.op) for fg in bodies for n in fg.apply_nodes]
    assert len(bodies) == 2  # the forward loop and its backward loop
    assert sum("Tanh" in nm or "tanh" in nm for nm in names) == 1, names  # only the forward's
    f = lucent.function([X, h0, W], gW)
    Xv, h0v, Wv = RNG.normal(size=(50, 4)), RNG.normal(size=4), 0.5 * RNG.normal(size=(4, 4))
    g_fast = f(Xv, h0v, Wv)
    g_ref = lucent.function([X, h0, W], gW, mode="FAST_COMPILE")(Xv, h0v, Wv)
    assert_allclose(g_fast, g_ref, rtol=1e-10)


def test_truncate_gradient_and_while_gradient():
    x, h0 = lt.vector("x"), lt.scalar("h0")
    acc = scan(lambda v, h: h * 0.5 + v, sequences=[x], outputs_info=[h0], truncate_gradient=2,
               return_updates=False)
    gx, gh = grad(acc[-1], [x, h0])
    from lucent.scan import until

    a = lt.scalar("a")
    w = scan(lambda v: (v * 0.5, until(v * 0.5 < 1)), outputs_info=[a], n_steps=50, return_updates=False)
    ga = grad(w[-1], a)
    got = run([gx, gh, ga], {x: np.ones(5), h0: 1.0, a: 20.0})
    assert_allclose(got[0], [0, 0, 0, 0.5, 1])
    assert_allclose(got[1], 0)
    assert_allclose(got[2], 0.5**5)


@pytest.mark.slow  # many Numba compiles (nested loops, gradients of gradients)
def test_dynamic_jacobian_and_hessian_use_scan():
    v = lt.vector("v")
    J = jacobian(v**2 * v.sum(), v)
    H = hessian((v**3).sum() * v[0], v)
    assert any(type(n.op).__name__ == "Scan" for n in lucent.graph.traversal.applys_between([v], [J]))
    vv = np.array([1.0, 2.0, 3.0])
    Jv, Hv = run([J, H], {v: vv})
    assert_allclose(Jv, np.diag(2 * vv * vv.sum()) + np.outer(vv**2, np.ones(3)))
    ref = np.diag(6 * vv * vv[0])
    ref[0, :] += 3 * vv**2
    ref[:, 0] += 3 * vv**2
    assert_allclose(Hv, ref)


def test_gradient_through_a_loop_with_random_draws(lucent_mode):
    """A random generator carried by the loop is not differentiated; additive noise
    leaves the gradient exact (the backward loop gets the generator's starting value)."""
    from lucent.tensor.random.utils import RandomStream

    u, x0, W = lt.matrix("u"), lt.vector("x0"), lt.matrix("W")

    def step(u_t, x_tm1, W):
        noise = RandomStream(3).uniform(low=-1.0, high=1.0, size=(2,))
        return lt.dot(u_t, W) + x_tm1 + noise

    xs, _ = scan(step, sequences=[u], outputs_info=[x0], non_sequences=[W])
    node = xs.owner.inputs[0].owner
    assert node.op.info.n_untraced_sit_sot == 1
    gu, gx0, gW = grad(xs.sum(), [u, x0, W])
    vu, vx, vW = RNG.normal(size=(5, 2)), RNG.normal(size=2), RNG.normal(size=(2, 2))
    got = run([gu, gx0, gW], {u: vu, x0: vx, W: vW})
    # x_t = x0 + sum_{s<=t} (u_s W + noise_s): step t reaches the 5 - t later sums
    later = np.arange(5, 0, -1)[:, None]
    assert_allclose(got[0], later * vW.sum(axis=1)[None, :])
    assert_allclose(got[1], np.full(2, 5.0))
    assert_allclose(got[2], (later * vu).sum(axis=0)[:, None] * np.ones((1, 2)))


def test_integer_inputs_get_zero_gradients_and_unread_states_are_disconnected(lucent_mode):
    from lucent.gradient import DisconnectedInputError

    u, k, x0, z0 = lt.vector("u"), lt.ivector("k"), lt.vector("x0"), lt.vector("z0")
    xs, zs = scan(lambda u_t, k_t, x, z: [x * u_t + lt.cast(k_t, "float64"), x + 1.0],
                  sequences=[u, k], outputs_info=[x0, z0], return_updates=False)
    cost = (xs + zs).sum()
    gk, gx0 = grad(cost, [k, x0])
    assert gk.type.dtype == "float64"
    vk = np.array([1, 2, 3], dtype="int32")
    got = run([gk, gx0], {u: np.array([0.5, 2.0, 1.0]), k: vk, x0: np.ones(3), z0: np.ones(3)})
    assert_allclose(got[0], np.zeros(3))
    # d x_t/d x0 = 0.5, 1.0, 1.0 and d z_t/d x0 = 1.0, 0.5, 1.0
    assert_allclose(got[1], np.full(3, 5.0))
    # the z state is never read by the step: its initial value does not reach zs
    with pytest.raises(DisconnectedInputError):
        grad(cost, z0)
