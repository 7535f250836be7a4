"""Tests of softmax, log_softmax and logsumexp (lucent.tensor.special)."""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.gradient import grad, verify_grad
from lucent.tensor.special import LogSoftmax, Softmax, log_softmax, logsumexp, softmax
from tests.helpers import run

rng = np.random.default_rng(2)


def np_softmax(v, axis):
    e = np.exp(v - v.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_lse(v, axis, keepdims=False):
    m = v.max(axis=axis, keepdims=True)
    out = np.log(np.exp(v - m).sum(axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


@pytest.mark.parametrize("axis", [-1, 0, 1, None])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_softmax_log_softmax_values(axis, dtype):
    x = lt.tensor(dtype=dtype, shape=(None, None))
    xv = (rng.standard_normal((3, 4)) * 3).astype(dtype)
    sm = run(softmax(x, axis=axis), {x: xv})
    lsm = run(log_softmax(x, axis=axis), {x: xv})
    assert sm.dtype == dtype and lsm.dtype == dtype
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(sm, np_softmax(xv.astype("float64"), axis), rtol=tol, atol=tol)
    np.testing.assert_allclose(lsm, np.log(np_softmax(xv.astype("float64"), axis)), rtol=tol, atol=tol)


def test_numerical_stability_and_edge_cases():
    x = lt.dmatrix()
    big = np.array([[1000.0, 1000.0, -1000.0]])
    np.testing.assert_allclose(run(softmax(x), {x: big}), [[0.5, 0.5, 0.0]])
    np.testing.assert_allclose(run(log_softmax(x), {x: big}), [[np.log(0.5), np.log(0.5), -2000 - np.log(2)]])
    assert run(softmax(x), {x: np.zeros((0, 3))}).shape == (0, 3)
    out = run(softmax(x), {x: np.array([[np.nan, 1.0]])})
    assert np.isnan(out).all()
    np.testing.assert_allclose(run(logsumexp(x, axis=1), {x: big}), [1000 + np.log(2)])
    v = lt.dvector()
    assert run(logsumexp(v), {v: np.array([-np.inf, -np.inf])}) == -np.inf
    assert run(softmax(lt.as_tensor_variable(np.array([1.0, 1.0]))), {}).tolist() == [0.5, 0.5]


def test_str_infer_shape_and_errors():
    x = lt.dmatrix()
    assert str(softmax(x).owner.op) == "Softmax{axis=1}"
    assert str(log_softmax(x, axis=0).owner.op) == "LogSoftmax{axis=0}"
    assert Softmax(1) == Softmax(1) and Softmax(1) != LogSoftmax(1)
    node = softmax(x).owner
    assert node.op.infer_shape(None, node, [("a", "b")]) == [("a", "b")]
    with pytest.raises(np.exceptions.AxisError, match="out of bounds"):
        softmax(x, axis=2)
    assert softmax(lt.ivector()).dtype == "float64"


@pytest.mark.parametrize("axis", [-1, 0, None])
def test_gradients(axis):
    xv = rng.standard_normal((3, 4))
    verify_grad(lambda v: softmax(v, axis=axis), [xv])
    verify_grad(lambda v: log_softmax(v, axis=axis), [xv])
    verify_grad(lambda v: logsumexp(v, axis=axis), [xv])
    verify_grad(lambda v: logsumexp(v, axis=axis, keepdims=True), [xv])


def test_logsumexp_values_and_grad_is_softmax():
    x = lt.dmatrix()
    xv = rng.standard_normal((3, 4))
    for axis in (0, 1, None, (0, 1)):
        for keepdims in (False, True):
            got = run(logsumexp(x, axis=axis, keepdims=keepdims), {x: xv})
            np.testing.assert_allclose(got, np_lse(xv, axis, keepdims))
    g = run(grad(logsumexp(x), x), {x: xv})
    np.testing.assert_allclose(g, np_softmax(xv, None))
