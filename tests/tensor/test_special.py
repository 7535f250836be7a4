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


@pytest.mark.parametrize("axis", [-1, 0, 1, None, (0, 1)])
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
    # PyTensor's rule: the axes are a tuple, and the default is every axis.
    assert str(softmax(x).owner.op) == "Softmax{axis=(0, 1)}"
    assert str(softmax(x, axis=-1).owner.op) == "Softmax{axis=(1,)}"
    assert str(log_softmax(x, axis=0).owner.op) == "LogSoftmax{axis=(0,)}"
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


# --- special-function helpers and stabilisation of their logarithms ---------------
def test_special_helpers_vs_scipy():
    import scipy.special as sp

    from lucent.tensor.special import beta, betaln, factorial, logaddexp, logit, poch, xlog1py, xlogy

    x, y = lt.dvectors("x", "y")
    xv, yv = np.array([0.0, 0.2, 1.5, 3.0]), np.array([0.5, 2.0, 0.7, 4.0])
    got = run([logaddexp(x, y, -x), logit(x / 4), beta(x + 1, y), betaln(x + 1, y), poch(y, x), factorial(y),
               xlogy(x, y), xlog1py(x, y)], {x: xv, y: yv})
    expected = [np.logaddexp(np.logaddexp(xv, yv), -xv), sp.logit(xv / 4), sp.beta(xv + 1, yv),
                sp.betaln(xv + 1, yv), sp.poch(yv, xv), sp.gamma(yv + 1), sp.xlogy(xv, yv), sp.xlog1py(xv, yv)]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12)


def test_logaddexp_infinities():
    from lucent.tensor.special import logaddexp

    x, y = lt.dvectors("x", "y")
    got = run(logaddexp(x, y), {x: np.array([-np.inf, np.inf, 800.0]), y: np.array([-np.inf, 1.0, 800.0])})
    np.testing.assert_allclose(got, [-np.inf, np.inf, 800 + np.log(2)])


def test_log_special_stabilised(lucent_mode):
    """The naive forms overflow; the rewritten graphs give the true values."""
    import scipy.special as sp

    if lucent_mode != "FAST_RUN":
        pytest.skip("the stabilize rewrites run in FAST_RUN")
    import lucent

    x, y = lt.dvectors("x", "y")
    xv = np.array([-2.0, 0.5, 30.0, 200.0, 800.0])
    outs = [lt.log(lt.erfc(x)), lt.log1p(-lt.exp(-x - 1e-30)), lt.log(1 - lt.exp(-abs(x))),
            lt.log(-lt.expm1(-abs(x))), lt.log(1 - lt.sigmoid(x)), lt.log(lt.gamma(x)),
            lt.log(lt.exp(x) + lt.exp(y))]
    f = lucent.function([x, y], outs, mode="FAST_RUN")
    got = f(xv, xv - 1)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(got[0], np.log(sp.erfcx(xv)) - xv**2, rtol=1e-12)
        lme = np.where(-abs(xv) < np.log(0.5), np.log1p(-np.exp(-abs(xv))), np.log(-np.expm1(-abs(xv))))
        np.testing.assert_allclose(got[2], lme, rtol=1e-12)
        np.testing.assert_allclose(got[3], lme, rtol=1e-12)
        np.testing.assert_allclose(got[4], -np.logaddexp(0, xv), rtol=1e-12)
        np.testing.assert_allclose(got[5], np.where(sp.gamma(xv) >= 0, sp.gammaln(xv), np.nan), rtol=1e-12)
        np.testing.assert_allclose(got[6], np.logaddexp(xv, xv - 1), rtol=1e-12)
    assert np.isfinite(got[1][1:]).all()  # log1p(-exp(2)) is NaN
    names = {type(n.op.scalar_op).__name__ for n in f.maker.fgraph.apply_nodes if hasattr(n.op, "scalar_op")}
    names |= {type(i.op).__name__ for n in f.maker.fgraph.apply_nodes
              for i in getattr(getattr(n.op, "scalar_op", None), "nodes", [])}
    assert {"Erfcx", "Log1mexp", "GammaLn"} <= names, names


def test_xlogy_of_a_variable_with_itself_has_its_limit_gradient():
    """``xlogy(x, x) = x log x``: gradient ``log x + 1``, ``-inf`` at 0 (not NaN from ``0 / 0``)."""
    import lucent
    from lucent.tensor.special import xlogy

    x = lt.dvector("x")
    g = lucent.grad(xlogy(x, x).sum(), x)
    np.testing.assert_allclose(run(g, {x: np.array([0.0, 1.0, 2.0])}), [-np.inf, 1.0, 1.0 + np.log(2.0)])


def test_softmax_over_several_axes_and_vectorized():
    """A tuple of axes (not all of them) normalises each slice over those axes; batching shifts them."""
    from scipy.special import log_softmax as sp_log_softmax
    from scipy.special import softmax as sp_softmax

    from lucent.graph.replace import vectorize_graph

    x = lt.dtensor4("x")
    xv = rng.standard_normal((2, 3, 4, 5))
    for axis in [(0, 2), (1, 3), (3, 0)]:
        sm, lsm = run([softmax(x, axis=axis), log_softmax(x, axis=axis)], {x: xv})
        np.testing.assert_allclose(sm, sp_softmax(xv, axis=axis), rtol=1e-12)
        np.testing.assert_allclose(lsm, sp_log_softmax(xv, axis=axis), rtol=1e-10, atol=1e-12)
    verify_grad(lambda v: softmax(v, axis=(0, 2)) * np.arange(24.0).reshape(2, 3, 4), [rng.standard_normal((2, 3, 4))])
    core = lt.tensor(shape=(5, 5))
    batch = lt.tensor(shape=(3, 5, 5))
    assert vectorize_graph(softmax(core), {core: batch}).owner.op.axis == (1, 2)
    assert vectorize_graph(log_softmax(core, axis=0), {core: batch}).owner.op.axis == (1,)
