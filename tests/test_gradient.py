"""Tests of lucent.gradient: grad, disconnected/null gradients, jacobian, hessian, verify_grad."""

import warnings

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.gradient import (
    DisconnectedInputError,
    DisconnectedType,
    GradientError,
    NullType,
    NullTypeGradError,
    disconnected_grad,
    disconnected_type,
    grad,
    grad_not_implemented,
    grad_undefined,
    hessian,
    jacobian,
    verify_grad,
    zero_grad,
)
from lucent.graph.basic import Apply
from lucent.graph.op import Op
from tests.helpers import run

rng = np.random.default_rng(3)


def test_top_level_names():
    assert lucent.grad is grad and lucent.jacobian is jacobian and lucent.hessian is hessian


def test_simple_grad_and_names():
    x = lt.dscalar("x")
    cost = x**2 + 3 * x
    cost.name = "c"
    g = grad(cost, x)
    assert run(g, {x: np.array(2.0)}) == 7.0
    assert g.name == "(dc/dx)"
    assert isinstance(grad(cost, [x]), list) and isinstance(grad(cost, (x,)), tuple)


def test_accumulates_multiple_uses():
    x = lt.dvector("x")
    y = lt.exp(x)
    cost = lt.sum(y * y + y + x)
    xv = rng.random(3)
    np.testing.assert_allclose(run(grad(cost, x), {x: xv}), 2 * np.exp(2 * xv) + np.exp(xv) + 1)


def test_grad_wrt_intermediate_and_consider_constant():
    x = lt.dvector("x")
    y = x * 2
    cost = lt.sum(y * x)
    xv = rng.random(3)
    np.testing.assert_allclose(run(grad(cost, y), {x: xv}), xv)
    np.testing.assert_allclose(run(grad(cost, x, consider_constant=[y]), {x: xv}), 2 * xv)
    np.testing.assert_allclose(run(grad(cost, x), {x: xv}), 4 * xv)


def test_cost_must_be_scalar():
    x = lt.dvector("x")
    with pytest.raises(TypeError, match="scalar"):
        grad(x * 2, x)
    with pytest.raises(TypeError, match="Variable"):
        grad(lt.sum(x), 3.0)


def test_disconnected_inputs():
    x, y = lt.dvector("x"), lt.dvector("y")
    cost = lt.sum(x)
    with pytest.raises(DisconnectedInputError) as info:
        grad(cost, y)
    msg = str(info.value)
    assert "y" in msg and "disconnected_inputs='ignore'" in msg and "'warn'" in msg
    g = grad(cost, y, disconnected_inputs="ignore")
    np.testing.assert_array_equal(run(g, {y: np.ones(2)}), np.zeros(2))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        grad(cost, y, disconnected_inputs="warn")
    assert w and "y" in str(w[0].message)
    assert grad(cost, y, disconnected_inputs="ignore", return_disconnected="none") is None
    d = grad(cost, y, disconnected_inputs="ignore", return_disconnected="disconnected")
    assert isinstance(d.type, DisconnectedType)
    # argmax is disconnected from its input
    with pytest.raises(DisconnectedInputError):
        grad(lt.cast(lt.sum(lt.argmax(x)), "float64"), x)


def test_integer_variables_have_real_gradients():
    # The gradient of an integer variable says how the cost would change if
    # it could change continuously: d x / d x is 1, and known gradients pass.
    i = lt.iscalar("i")
    g = grad(i, i)
    assert g.dtype in ("float32", "float64")
    assert run(g, {i: np.array(12, "int32")}) == 1.0
    gi = lt.dscalar("gi")
    assert run(grad(None, i, known_grads={i: gi}), {gi: np.array(0.6)}) == pytest.approx(0.6)
    # A cost said to be disconnected leaves its integer inputs disconnected.
    j = lt.iscalar("j")
    cost = i + j
    with pytest.raises(DisconnectedInputError):
        grad(cost, [i, j], known_grads={cost: disconnected_type()})
    x = lt.dvector("x")
    g = grad(lt.sum(lt.floor(x) + (x > 0)), x)
    np.testing.assert_array_equal(run(g, {x: np.array([0.5, -1.5])}), [0.0, 0.0])


def test_known_grads():
    x = lt.dvector("x")
    y = lt.exp(x)
    gy = lt.dvector("gy")
    g = grad(None, x, known_grads={y: gy})
    xv, gv = rng.random(3), rng.random(3)
    np.testing.assert_allclose(run(g, {x: xv, gy: gv}), gv * np.exp(xv))
    with pytest.raises(ValueError, match="known_grads"):
        grad(None, x)
    # A known gradient for the cost replaces the ones.
    c = lt.sum(y)
    g2 = grad(c, x, known_grads={c: lt.constant(3.0)})
    np.testing.assert_allclose(run(g2, {x: xv}), 3 * np.exp(xv))
    with pytest.raises(TypeError, match="continuous"):
        grad(None, x, known_grads={y: lt.ivector()})
    with pytest.raises(TypeError, match="variables"):
        grad(None, x, known_grads={y: np.ones(3)})


def test_zero_grad_and_disconnected_grad():
    x = lt.dvector("x")
    xv = rng.random(3)
    np.testing.assert_array_equal(run(zero_grad(x), {x: xv}), xv)
    cost = lt.sum(x * zero_grad(x))
    np.testing.assert_allclose(run(grad(cost, x), {x: xv}), xv)
    cost = lt.sum(x * disconnected_grad(x))
    np.testing.assert_allclose(run(grad(cost, x), {x: xv}), xv)
    with pytest.raises(DisconnectedInputError):
        grad(lt.sum(disconnected_grad(x)), x)


class _NoGradOp(Op):
    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0].copy()

    def L_op(self, inputs, outputs, output_grads):
        return [grad_not_implemented(self, 0, inputs[0])]


class _UndefinedOp(_NoGradOp):
    def L_op(self, inputs, outputs, output_grads):
        return [grad_undefined(self, 0, inputs[0], "because it jumps")]


def test_null_gradients():
    x = lt.dvector("x")
    for op, word in [(_NoGradOp(), "not implemented"), (_UndefinedOp(), "undefined")]:
        cost = lt.sum(op(x) * 2)
        with pytest.raises(NullTypeGradError, match=word):
            grad(cost, x)
        g = grad(cost, x, null_gradients="return")
        assert isinstance(g.type, NullType)
    assert isinstance(disconnected_type().type, DisconnectedType)


def test_second_order_grad():
    x = lt.dscalar("x")
    g = grad(x**3, x)
    gg = grad(g, x)
    assert run(gg, {x: np.array(2.0)}) == pytest.approx(12.0)


def test_float32_grads_stay_float32():
    x = lt.fvector("x")
    g = grad(lt.sum(lt.exp(x) * 0.1 + lt.sigmoid(x)), x)
    assert g.dtype == "float32"


def test_jacobian_and_hessian():
    x = lt.tensor(dtype="float64", shape=(3,), name="x")
    xv = rng.random(3)
    j = jacobian(lt.exp(x) * lt.sum(x), x)
    expected = np.diag(np.exp(xv) * xv.sum()) + np.exp(xv)[:, None]
    np.testing.assert_allclose(run(j, {x: xv}), expected)
    h = hessian(lt.sum(x**3), x)
    np.testing.assert_allclose(run(h, {x: xv}), np.diag(6 * xv))
    s = jacobian(lt.sum(x**2), x)
    np.testing.assert_allclose(run(s, {x: xv}), 2 * xv)
    # Without a static shape the Jacobian is built as one vectorized graph.
    v = lt.dvector("v")
    jv = jacobian(lt.exp(v) * lt.sum(v), v)
    np.testing.assert_allclose(run(jv, {v: xv}), expected)
    with pytest.raises(ValueError, match="1 dimensional"):
        hessian(lt.sum(x), lt.dmatrix())
    with pytest.raises(ValueError, match="0 dimensional"):
        hessian(x, x)


class _WrongGradOp(Op):
    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] ** 2

    def L_op(self, inputs, outputs, output_grads):
        return [output_grads[0] * 3 * inputs[0]]  # should be 2 * x


def test_verify_grad_detects_wrong_gradient():
    with pytest.raises(GradientError) as info:
        verify_grad(lambda v: _WrongGradOp()(v), [rng.random(4) + 0.5])
    err = info.value
    assert err.arg == 0
    msg = str(err)
    assert "input 0" in msg and "abs error" in msg and "rel error" in msg and "tolerance" in msg
    verify_grad(lambda v: v**2, [rng.random(4) + 0.5])  # the correct gradient passes


def test_verify_grad_options():
    verify_grad(lambda v: lt.exp(v), [rng.random((2, 2)).astype("float32")], n_tests=1, rng=7)
    verify_grad(lambda a, b: a * b, [rng.random(3), rng.random(3)], abs_tol=1e-3, rel_tol=1e-3, eps=1e-5)
    verify_grad(lambda v: lt.sum(v), [rng.random(3)], rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match="float"):
        verify_grad(lambda v: v, [np.arange(3)])
    with pytest.raises(TypeError, match="single"):
        verify_grad(lambda v: [v, v], [rng.random(3)])




def test_as_list_or_tuple():
    from lucent.gradient import as_list_or_tuple

    assert as_list_or_tuple(True, False, (1, 2)) == [1, 2]
    assert as_list_or_tuple(False, True, 3) == (3,)
    assert as_list_or_tuple(False, False, [4]) == 4
    with pytest.raises(ValueError, match="one element"):
        as_list_or_tuple(False, False, [1, 2])
    with pytest.raises(ValueError, match="both"):
        as_list_or_tuple(True, True, [1])
