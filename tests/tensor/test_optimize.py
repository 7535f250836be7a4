"""Tests of lucent.tensor.optimize: solutions against closed forms, gradients by implicit differentiation."""

import warnings

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.gradient import DisconnectedInputError, verify_grad
from lucent.tensor.optimize import (
    MinimizeOp,
    MinimizeScalarOp,
    RootOp,
    RootScalarOp,
    minimize,
    minimize_scalar,
    root,
    root_scalar,
)
from tests import helpers


@pytest.fixture(autouse=True)
def _quiet_fallback():
    # On the Numba path the solvers run through the perform fallback, which warns.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.both_modes
def test_all_four_solve_and_differentiate():
    """One compiled function per path: each solver's solution, flag and gradient wrt a parameter."""
    x, a, c = lt.dscalars("x", "a", "c")
    xv = lt.dvector("xv")
    # minimum of (x - a c)^2 is a c; d/da = c
    m_s, ok_s = minimize_scalar((x - a * c) ** 2, x)
    m, ok_m = minimize((x - a * c) ** 2, x)
    # root of x + 2 a cos(x)
    r_s, ok_rs = root_scalar(x + 2 * a * lt.cos(x), x, method="newton", jac=True)
    # vector root: xv = [a, c^2]
    r, ok_r = root(lt.stack([xv[0] - a, xv[1] - c**2]), xv, method="hybr")
    outs = [m_s, m, r_s, r, ok_s, ok_m, ok_rs, ok_r]
    outs += [lt.grad(m_s, a), lt.grad(m, c), lt.grad(r_s, a)]
    vals = helpers.run(outs, {x: 0.0, a: 2.0, c: 3.0, xv: np.zeros(2)})
    np.testing.assert_allclose(vals[0], 6.0, rtol=1e-6)
    np.testing.assert_allclose(vals[1], 6.0, rtol=1e-6)
    np.testing.assert_allclose(vals[2] + 4 * np.cos(vals[2]), 0.0, atol=1e-8)
    np.testing.assert_allclose(vals[3], [2.0, 9.0], rtol=1e-8)
    assert all(bool(v) for v in vals[4:8])
    np.testing.assert_allclose(vals[8], 3.0, rtol=1e-5)
    np.testing.assert_allclose(vals[9], 2.0, rtol=1e-5)
    # implicit derivative of the root: dx/da = -2cos(x) / (1 - 2a sin(x))
    xs = vals[2]
    np.testing.assert_allclose(vals[10], -2 * np.cos(xs) / (1 - 4 * np.sin(xs)), rtol=1e-6)


def test_vector_root_gradient():
    xv = lt.dvector("xv")
    a, c = lt.dscalars("a", "c")
    r, _ = root(lt.stack([xv[0] - a, xv[1] - c**2]), xv, method="hybr")
    g = lucent.function([xv, a, c], lt.grad(r.sum(), c), mode="FAST_COMPILE")(np.zeros(2), 2.0, 3.0)
    np.testing.assert_allclose(g, 6.0, rtol=1e-6)


def test_minimize_vector_methods_and_hessian():
    x = lt.dvector("x")
    a, b = lt.dscalars("a", "b")
    obj = (a * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum() + b
    f_outs = []
    for method, jac, hess in [("Newton-CG", True, True), ("L-BFGS-B", True, False), ("powell", False, False)]:
        sol, ok = minimize(obj, x, method=method, jac=jac, hess=hess, optimizer_kwargs={"tol": 1e-14})
        f_outs += [sol, ok]
    fn = lucent.function([x, a, b], f_outs, mode="FAST_COMPILE")
    vals = fn(np.zeros(4), 0.5, 1.0)
    for sol, ok in zip(vals[::2], vals[1::2]):
        assert ok
        np.testing.assert_allclose(sol, np.ones(4), atol=1e-6)


def test_gradients_verify_grad():
    rng = np.random.default_rng(0)

    def quad_min(a, b):
        x = lt.dvector("x")
        obj = ((x - a) ** 2).sum() + (b * x**2).sum()
        sol = minimize(obj, x)[0]
        return lucent.graph.replace.graph_replace(sol, {x: lt.zeros_like(a)})

    verify_grad(quad_min, [np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.7, 1.1])], rng=rng, eps=1e-6,
                mode="FAST_COMPILE")

    def root_fn(v3):
        v1, v2 = lt.dscalars("v1", "v2")
        [s1, s2], _ = root(lt.stack([v1**2 * v3 - 1, v1 + v2 - 2]), [v1, v2])
        one = lt.ones_like(v3)
        return lucent.graph.replace.graph_replace(s1 * 3 + s2, {v1: one, v2: one})

    verify_grad(root_fn, [np.array(2.0)], rng=rng, eps=1e-6, mode="FAST_COMPILE")


def test_parameters_and_connections():
    x, a = lt.dscalars("x", "a")
    # an expression of constants only stays inside the op
    sol, _ = minimize((x - a) ** 2 + lt.cast(lt.constant(0), "int64"), x)
    assert sol.owner.inputs == [x, a]
    # a scalar-typed parameter enters as a 0-d tensor
    a_s = lt.scalar_from_tensor(a)
    obj = lt.tensor_from_scalar((lt.scalar_from_tensor(x) + a_s) ** 2)
    sol, _ = minimize_scalar(obj, x)
    assert sol.owner.inputs[1].owner.inputs[0] is a_s
    np.testing.assert_allclose(lt.grad(sol, a).eval({x: 1.0, a: 2.0}, mode="FAST_COMPILE"), -1)
    # the same outer variable for a connected and a disconnected parameter
    args = lt.dscalars("a0", "a1", "a2")
    objective = (x - (args[0] + args[2])) ** 2 + lt.second(args[1], 0)
    op = MinimizeOp(x, *args, objective=objective, method="BFGS")
    solution, _ = op(x, a, a, a)
    assert op.connection_pattern(solution.owner) == [[True, False], [True, False], [False, False], [True, False]]
    np.testing.assert_allclose(lt.grad(solution, a).eval({x: 1.0, a: 0.0}, mode="FAST_COMPILE"), 2.0)


def test_disconnected_parameter():
    x = lt.dscalar("x")
    n = lt.lscalar("n")
    sol, _ = root_scalar(lt.alloc(x - 1.0, n).sum(), x)
    assert sol.owner.inputs[1] is n
    with pytest.raises(DisconnectedInputError):
        lt.grad(sol, n, disconnected_inputs="raise")


def test_bad_input_errors():
    x, y = lt.dscalars("x", "y")
    v = lt.dvector("v")
    with pytest.raises(ValueError, match="scalar"):
        minimize_scalar((v**2).sum(), v)
    with pytest.raises(ValueError, match="must be an input"):
        minimize(y**2, x)
    with pytest.raises(ValueError, match="scalar"):
        MinimizeOp(v, objective=v**2)
    with pytest.raises(ValueError, match="hess=True needs jac=True"):
        RootScalarOp(x, equation=x**2, hess=True)


def test_ops_compare_by_graph_and_settings():
    x, a = lt.dscalars("x", "a")
    op1 = RootOp(x, a, equations=x**2 - a)
    op2 = RootOp(x, a, equations=x**2 - a)
    op3 = RootOp(x, a, equations=x**3 - a)
    op4 = RootOp(x, a, equations=x**2 - a, method="lm")
    assert op1 == op2 and hash(op1) == hash(op2)
    assert op1 != op3 and op1 != op4
    assert str(MinimizeScalarOp(x, a, objective=(x - a) ** 2)) == "MinimizeScalarOp(method=brent)"
