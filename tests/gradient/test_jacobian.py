"""jacobian (row by row and vectorized), hessian, hessian_vector_product, subgraph_grad."""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.gradient import (
    DisconnectedInputError,
    grad,
    hessian,
    hessian_vector_product,
    jacobian,
    subgraph_grad,
)
from tests.helpers import evaluate_with_perform, run

rng = np.random.default_rng(5)


def numeric_jacobian(f, xv, eps=1e-6):
    cols = []
    for e in np.eye(xv.size):
        e = e.reshape(xv.shape)
        cols.append((np.asarray(f(xv + eps * e)) - np.asarray(f(xv - eps * e))) / (2 * eps))
    out = np.stack(cols, axis=-1)
    return out.reshape(np.shape(f(xv)) + xv.shape)


@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("static", [False, True])
def test_jacobian_matches_finite_differences(vectorize, static):
    x = lt.tensor(name="x", dtype="float64", shape=(3,) if static else (None,))
    W = lt.tensor(name="W", dtype="float64", shape=(4, 3) if static else (None, None))
    out = lt.tanh(lt.dot(W, x)) * lt.sum(x**2)
    xv, Wv = rng.random(3), rng.random((4, 3))
    jx, jW = jacobian(out, [x, W], vectorize=vectorize)
    got_x, got_W = run([jx, jW], {x: xv, W: Wv})
    np.testing.assert_allclose(got_x, numeric_jacobian(lambda t: evaluate_with_perform(out, {x: t, W: Wv}), xv),
                               rtol=1e-6)
    np.testing.assert_allclose(got_W, numeric_jacobian(lambda t: evaluate_with_perform(out, {x: xv, W: t}), Wv),
                               rtol=1e-6)


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_of_a_matrix_expression(vectorize):
    m = lt.dmatrix("m")
    out = lt.exp(m) * m.sum(axis=0)
    mv = rng.random((2, 3))
    j = jacobian(out, m, vectorize=vectorize)
    assert j.type.ndim == 4
    np.testing.assert_allclose(run(j, {m: mv}), numeric_jacobian(lambda t: evaluate_with_perform(out, {m: t}), mv),
                               rtol=1e-6)


def test_jacobian_form_and_scalar_expression():
    x = lt.dvector("x")
    assert isinstance(jacobian(x * 2, [x]), list) and isinstance(jacobian(x * 2, (x,)), tuple)
    s = jacobian(lt.sum(x**2), x)
    xv = rng.random(3)
    np.testing.assert_allclose(run(s, {x: xv}), 2 * xv)
    with pytest.raises(TypeError, match="Variable"):
        jacobian(np.ones(3), x)


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_disconnected_inputs(vectorize):
    x, y = lt.dvector("x"), lt.dvector("y")
    with pytest.raises(DisconnectedInputError):
        jacobian(x * 2, y, vectorize=vectorize)
    j = jacobian(x * 2, [x, y], disconnected_inputs="ignore", vectorize=vectorize)
    xv, yv = rng.random(3), rng.random(2)
    jx, jy = run(j, {x: xv, y: yv})
    np.testing.assert_allclose(jx, 2 * np.eye(3))
    np.testing.assert_array_equal(jy, np.zeros((3, 2)))


def test_hessian():
    x = lt.dvector("x")
    cost = lt.sum(x**3) * lt.sum(x)
    xv = rng.random(4)
    h = hessian(cost, x)
    g = grad(cost, x)
    np.testing.assert_allclose(run(h, {x: xv}), numeric_jacobian(lambda t: evaluate_with_perform(g, {x: t}), xv),
                               rtol=1e-6)
    # A linear cost: the gradient does not depend on x, the Hessian is zero.
    np.testing.assert_array_equal(run(hessian(lt.sum(3 * x), x), {x: xv}), np.zeros((4, 4)))
    assert isinstance(hessian(cost, [x]), list)
    with pytest.raises(ValueError, match="1 dimensional"):
        hessian(cost, lt.dmatrix())
    with pytest.raises(ValueError, match="0 dimensional"):
        hessian(x, x)
    with pytest.raises(TypeError, match="Variable"):
        hessian(3.0, x)


def test_hessian_vector_product_matches_the_hessian():
    x, y, p, q = lt.dvector("x"), lt.dvector("y"), lt.dvector("p"), lt.dvector("q")
    cost = lt.sum(x**3) * lt.sum(y**2) + lt.sum(lt.exp(x))
    xv, yv, pv, qv = rng.random(3), rng.random(2), rng.random(3), rng.random(2)
    hp = hessian_vector_product(cost, x, p)
    hxx = 6 * xv * np.sum(yv**2)
    np.testing.assert_allclose(run(hp, {x: xv, y: yv, p: pv}), hxx * pv + np.exp(xv) * pv)
    hpx, hpy = hessian_vector_product(cost, [x, y], [p, q])
    # d/dx (g_x . p + g_y . q) = H_xx p + H_xy q
    got_x, got_y = run([hpx, hpy], {x: xv, y: yv, p: pv, q: qv})
    np.testing.assert_allclose(got_x, hxx * pv + np.exp(xv) * pv + 3 * xv**2 * (2 * yv @ qv))
    np.testing.assert_allclose(got_y, 2 * (3 * xv**2 @ pv) * yv + 2 * np.sum(xv**3) * qv)
    with pytest.raises(ValueError, match="one p per wrt"):
        hessian_vector_product(cost, [x, y], [p])


def test_subgraph_grad_layer_by_layer():
    x = lt.dvector("x")
    w1, w2 = lt.dmatrix("w1"), lt.dmatrix("w2")
    a1 = lt.tanh(lt.dot(x, w1))
    a2 = lt.tanh(lt.dot(a1, w2))
    cost2 = lt.sum(a2**2) + lt.sum(w2) ** 2
    cost1 = lt.sum(w1) ** 2
    full = grad(cost2 + cost1, [w1, w2])
    params, costs, ends = [[w2], [w1]], [cost2, cost1], [[a1], [x]]
    next_grad, param_grads = None, []
    for i in range(2):
        pg, eg = subgraph_grad(wrt=params[i], end=ends[i], start=next_grad, cost=costs[i])
        next_grad = dict(zip(ends[i], eg))
        param_grads.extend(pg)
    vals = {x: rng.random(3), w1: rng.random((3, 4)), w2: rng.random((4, 2))}
    got = run([param_grads[1], param_grads[0]], vals)
    want = run(list(full), vals)
    np.testing.assert_allclose(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1])
    wg, eg, sg, cg = subgraph_grad([w2], [a1], cost=cost2, details=True)
    assert sg is None and len(cg) == 2
    with pytest.raises(ValueError, match="cost"):
        subgraph_grad([w2], [a1])
    with pytest.raises(TypeError, match="list"):
        subgraph_grad(w2, [a1], cost=cost2)
