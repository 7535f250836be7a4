"""pushforward / pullback (and the deprecated Rop / Lop) against explicit Jacobians."""

import warnings

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.gradient import (
    DisconnectedInputError,
    DisconnectedType,
    Lop,
    NullTypeGradError,
    Rop,
    disconnected_type,
    grad_undefined,
    pullback,
    pushforward,
)
from lucent.graph.basic import Apply
from lucent.graph.op import Op
from tests.helpers import run

rng = np.random.default_rng(11)


def numeric_jacobian(f, xv, eps=1e-6):
    cols = []
    for e in np.eye(xv.size):
        e = e.reshape(xv.shape)
        cols.append((np.asarray(f(xv + eps * e)) - np.asarray(f(xv - eps * e))) / (2 * eps))
    return np.stack(cols, axis=-1)


def _graph():
    x, W = lt.dvector("x"), lt.dmatrix("W")
    out = lt.tanh(lt.dot(W, x)) + lt.sum(x**2) * lt.exp(x).sum()
    return x, W, out


X = rng.random(3)
WV = rng.random((4, 3))


def _jacobian_value():
    from tests.helpers import evaluate_with_perform

    x, W, out = _graph()
    return numeric_jacobian(lambda t: evaluate_with_perform(out, {x: t, W: WV}), X)


@pytest.mark.parametrize("use_op", [False, True], ids=["via_pullback", "op_rules"])
def test_pushforward_is_jacobian_times_tangent(use_op):
    x, W, out = _graph()
    v = lt.dvector("v")
    vv = rng.random(3)
    jvp = pushforward(out, x, v, use_op_pushforward=use_op)
    np.testing.assert_allclose(run(jvp, {x: X, W: WV, v: vv}), _jacobian_value() @ vv, rtol=1e-6)


def test_pushforward_wrt_several_inputs_adds_the_products():
    x, W, out = _graph()
    v, V = lt.dvector("v"), lt.dmatrix("V")
    vv, Vv = rng.random(3), rng.random((4, 3))
    jvp = pushforward(out, [x, W], [v, V])
    from tests.helpers import evaluate_with_perform

    jw = numeric_jacobian(lambda t: evaluate_with_perform(out, {x: X, W: t}), WV)
    expected = _jacobian_value() @ vv + jw @ Vv.ravel()
    np.testing.assert_allclose(run(jvp, {x: X, W: WV, v: vv, V: Vv}), expected, rtol=1e-6)


@pytest.mark.parametrize("use_op", [False, True], ids=["via_pullback", "op_rules"])
def test_pushforward_adds_the_tangents_of_inputs_sharing_a_cotangent(use_op):
    """``x + y`` gives both inputs the very same cotangent in its pull-back: pushed
    forward through it, their tangents add up (the last one alone came out before)."""
    from lucent.compile.builders import OpFromGraph

    x, y, tx, ty = lt.dvector("x"), lt.dvector("y"), lt.dvector("tx"), lt.dvector("ty")
    xv, yv, txv, tyv = rng.random(3), rng.random(3), rng.random(3), rng.random(3)
    out = (x + y) * 3.0 - lt.tanh(y)
    jvp = pushforward(out, [x, y], [tx, ty], use_op_pushforward=use_op)
    np.testing.assert_allclose(
        run(jvp, {x: xv, y: yv, tx: txv, ty: tyv}), 3 * (txv + tyv) - (1 - np.tanh(yv) ** 2) * tyv
    )
    a, b = lt.dvector("a"), lt.dmatrix("b")
    both = OpFromGraph([a, b], [lt.dot(a, b), -lt.dot(a, b)])
    W = lt.dmatrix("W")
    Wv = rng.random((3, 3))
    cancelled = pushforward(lt.add(*both(x, W)), x, tx, use_op_pushforward=use_op)
    np.testing.assert_allclose(run(cancelled, {x: xv, W: Wv, tx: txv}), np.zeros(3), atol=1e-12)


def test_pullback_is_cotangent_times_jacobian():
    x, W, out = _graph()
    u = lt.dvector("u")
    uv = rng.random(4)
    vjp = pullback(out, x, u)
    np.testing.assert_allclose(run(vjp, {x: X, W: WV, u: uv}), uv @ _jacobian_value(), rtol=1e-6)
    assert isinstance(pullback(out, [x], u), list) and isinstance(pullback([out], (x,), [u]), tuple)
    with pytest.raises(ValueError, match="one cotangent per output"):
        pullback([out, out], x, [u])


def test_result_follows_the_form_of_f():
    m, v = lt.dmatrix("m"), lt.dvector("v")
    m_, v_ = lt.dmatrix("m_"), lt.dvector("v_")
    for use_op in (False, True):
        as_list = pushforward([m, v, m + v], [m, v], [m_, v_], use_op_pushforward=use_op)
        as_tuple = pushforward((m, v, m + v), [m, v], [m_, v_], use_op_pushforward=use_op)
        assert isinstance(as_list, list) and isinstance(as_tuple, tuple) and len(as_list) == 3
        mv, vv, m_v, v_v = rng.random((2, 3)), rng.random(3), rng.random((2, 3)), rng.random(3)
        got = run(list(as_list), {m: mv, v: vv, m_: m_v, v_: v_v})
        np.testing.assert_allclose(got[0], m_v)
        np.testing.assert_allclose(got[1], v_v)
        np.testing.assert_allclose(got[2], m_v + v_v)


def test_pushforward_checks_its_arguments():
    x = lt.dvector("x")
    with pytest.raises(ValueError, match="mismatched dimensionalities"):
        pushforward(x * 2, [x], [lt.dmatrix()])
    with pytest.raises(ValueError, match="same length"):
        pushforward(x * 2, [x], [lt.dvector(), lt.dvector()])


def test_disconnected_outputs():
    x, y = lt.dvector("x"), lt.dvector("y")
    for use_op in (False, True):
        with pytest.raises(DisconnectedInputError):
            pushforward(y * 2, x, lt.dvector(), use_op_pushforward=use_op)
    z = pushforward(y * 2, x, lt.dvector(), disconnected_outputs="ignore", use_op_pushforward=True)
    np.testing.assert_array_equal(run(z, {y: np.ones(2)}), [0.0, 0.0])
    none = pushforward(y * 2, x, lt.dvector(), disconnected_outputs="ignore", return_disconnected="none",
                       use_op_pushforward=True)
    assert none is None


class _Square(Op):
    """x**2 with only a legacy R_op (and a pull-back)."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] ** 2

    def L_op(self, inputs, outputs, output_grads):
        return [2 * inputs[0] * output_grads[0]]

    def R_op(self, inputs, eval_points):
        return [None if eval_points[0] is None else 2 * inputs[0] * eval_points[0] + 100]  # marked


class _Break(Op):
    """Identity whose gradient is undefined and whose R_op says 'no dependency'."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0]

    def L_op(self, inputs, outputs, output_grads):
        return [grad_undefined(self, 0, inputs[0])]

    def R_op(self, inputs, eval_points):
        return [None]


def test_op_rules_are_used_only_when_asked():
    x, v = lt.dvector("x"), lt.dvector("v")
    y = _Square()(x)
    xv, vv = rng.random(3), rng.random(3)
    np.testing.assert_allclose(run(pushforward(y, x, v), {x: xv, v: vv}), 2 * xv * vv)
    direct = pushforward(y, x, v, use_op_pushforward=True)
    np.testing.assert_allclose(run(direct, {x: xv, v: vv}), 2 * xv * vv + 100)


def test_non_differentiable_paths():
    x, v = lt.dvector("x"), lt.dvector("v")
    y = lt.exp(_Break()(x))
    with pytest.raises(DisconnectedInputError):
        pushforward(y, x, v, use_op_pushforward=True)
    with pytest.raises(NullTypeGradError):
        pushforward(y, x, v)


def test_pushforward_through_an_op_with_pushforward():
    class Double(Op):
        __props__ = ()

        def make_node(self, x):
            return Apply(self, [x], [x.type()])

        def perform(self, node, inputs, out):
            out[0][0] = inputs[0] * 2

        def pullback(self, inputs, outputs, cotangents):
            return [cotangents[0] * 2]

        def pushforward(self, inputs, outputs, tangents):
            return [tangents[0] * 2]

    x, v = lt.dvector("x"), lt.dvector("v")
    y = lt.sin(Double()(x))
    xv, vv = rng.random(3), rng.random(3)
    for use_op in (False, True):
        np.testing.assert_allclose(
            run(pushforward(y, x, v, use_op_pushforward=use_op), {x: xv, v: vv}), np.cos(2 * xv) * 2 * vv
        )
    assert isinstance(disconnected_type().type, DisconnectedType)


def test_rop_and_lop_are_deprecated_aliases():
    x, v, u = lt.dvector("x"), lt.dvector("v"), lt.dvector("u")
    y = lt.exp(x)
    xv, vv = rng.random(3), rng.random(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = Rop(y, x, v)
        lo = Lop(y, x, u)
        r_op = Rop(y, x, v, use_op_rop_implementation=True)
    assert [w.category for w in caught] == [FutureWarning] * 3
    np.testing.assert_allclose(run(r, {x: xv, v: vv}), np.exp(xv) * vv)
    np.testing.assert_allclose(run(r_op, {x: xv, v: vv}), np.exp(xv) * vv)
    np.testing.assert_allclose(run(lo, {x: xv, u: vv}), np.exp(xv) * vv)
