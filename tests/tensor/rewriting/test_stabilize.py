"""Stabilisation rewrites: each applies, keeps values, and fixes the naive formula."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.graph.rewriting.utils import rewrite_graph
from lucent.graph.traversal import graph_inputs, io_toposort
from lucent.scalar import basic as ps
from lucent.tensor.elemwise import Elemwise
from lucent.tensor.reduction import Max

NO_REWRITE = lucent.Mode(optimizer=None)


def scalar_ops(f_or_outputs):
    """The scalar-op classes of a compiled function's or a graph's Elemwise nodes.

    Fused nodes (a ``Composite`` scalar op) are looked into, so the check
    does not depend on whether the fusion stage ran.
    """
    if hasattr(f_or_outputs, "maker"):
        nodes = f_or_outputs.maker.fgraph.toposort()
    else:
        outs = f_or_outputs if isinstance(f_or_outputs, list) else [f_or_outputs]
        nodes = io_toposort(list(graph_inputs(outs)), outs)
    found = set()
    pending = [n.op.scalar_op for n in nodes if isinstance(n.op, Elemwise)]
    while pending:
        op = pending.pop()
        found.add(type(op))
        inner = getattr(op, "nodes", None)
        if inner is not None:
            pending.extend(n.op for n in inner)
    return found


def compile_both(inputs, output):
    return lucent.function(inputs, output), lucent.function(inputs, output, mode=NO_REWRITE)


# --- log(1 + x) -----------------------------------------------------------------
@pytest.mark.parametrize("build", [lambda x: lt.log(1 + x), lambda x: lt.log(x + 1), lambda x: lt.log(lt.add(x, 1, 0 * x))])
def test_log1p_applies_and_is_accurate(build):
    x = lt.dvector("x")
    f, naive = compile_both([x], build(x))
    assert ps.Log1p in scalar_ops(f) and ps.Log not in scalar_ops(f)
    v = np.array([1e-20, 0.5, 3.0])
    assert f(v)[0] == 1e-20  # log(1 + 1e-20) rounds to 0 without the rewrite
    assert naive(v)[0] == 0.0
    np.testing.assert_allclose(f(v)[1:], np.log(1 + v[1:]))
    np.testing.assert_allclose(f(v)[1:], naive(v)[1:])


def test_log1p_nary_addition_keeps_other_terms():
    x, y = lt.dvectors("x", "y")
    out = rewrite_graph(lt.log(lt.add(x, 1, y)), include=("canonicalize", "stabilize"))
    assert ps.Log1p in scalar_ops(out)
    f = lucent.function([x, y], out)
    np.testing.assert_allclose(f([0.5, 2.0], [1.0, -0.5]), np.log(1 + np.array([1.5, 1.5])))


def test_log_one_minus_x_becomes_log1p_of_neg():
    x = lt.dvector("x")
    f, naive = compile_both([x], lt.log(1 - x))
    assert ps.Log not in scalar_ops(f)
    assert f([1e-20])[0] == -1e-20
    np.testing.assert_allclose(f([0.25, -3.0]), naive([0.25, -3.0]))


def test_log1p_keeps_float32_and_broadcast_shape():
    x = lt.fmatrix("x")
    one = np.ones((1, 3), dtype="float32")
    expr = lt.log(one + x)
    out = rewrite_graph(expr, include=("canonicalize", "stabilize"))
    assert out.type == expr.type
    f = lucent.function([x], expr)
    v = np.full((2, 3), 1e-10, dtype="float32")
    np.testing.assert_allclose(f(v), np.log1p(v), rtol=1e-6)


def test_log1p_exp_becomes_softplus():
    x = lt.dvector("x")
    f, naive = compile_both([x], lt.log(1 + lt.exp(x)))
    assert ps.Softplus in scalar_ops(f)
    assert f([1000.0])[0] == 1000.0
    assert np.isinf(naive([1000.0])[0])
    np.testing.assert_allclose(f([-2.0, 0.0, 3.0]), naive([-2.0, 0.0, 3.0]))


# --- exp(x) - 1 -----------------------------------------------------------------
@pytest.mark.parametrize(
    "build", [lambda x: lt.exp(x) - 1, lambda x: -1 + lt.exp(x), lambda x: lt.add(lt.exp(x), -1)]
)
def test_expm1_applies_and_is_accurate(build):
    x = lt.dvector("x")
    f, naive = compile_both([x], build(x))
    assert ps.Expm1 in scalar_ops(f) and ps.Exp not in scalar_ops(f)
    v = np.array([1e-20, -0.3, 2.0])
    assert f(v)[0] == 1e-20
    assert naive(v)[0] == 0.0
    np.testing.assert_allclose(f(v)[1:], np.exp(v[1:]) - 1)
    np.testing.assert_allclose(f(v)[1:], naive(v)[1:])


def test_expm1_in_a_longer_sum():
    x, y = lt.dvectors("x", "y")
    expr = lt.add(y, lt.exp(x), -1)
    f, naive = compile_both([x, y], expr)
    assert ps.Expm1 in scalar_ops(f)
    np.testing.assert_allclose(f([0.5, 1.0], [2.0, 3.0]), naive([0.5, 1.0], [2.0, 3.0]))


def test_expm1_float32_type_kept():
    x = lt.fvector("x")
    expr = lt.exp(x) - 1.0
    out = rewrite_graph(expr, include=("canonicalize", "stabilize"))
    assert out.type == expr.type
    assert ps.Expm1 in scalar_ops(out)


# --- sigmoid ----------------------------------------------------------------------
def test_log_sigmoid():
    x = lt.dvector("x")
    f, naive = compile_both([x], lt.log(lt.sigmoid(x)))
    assert ps.Softplus in scalar_ops(f) and ps.Sigmoid not in scalar_ops(f)
    assert f([-800.0])[0] == pytest.approx(-800.0)
    assert naive([-800.0])[0] == -np.inf
    v = np.array([-3.0, 0.0, 5.0, 40.0])
    np.testing.assert_allclose(f(v), -np.log1p(np.exp(-v)))
    np.testing.assert_allclose(f(v[:3]), naive(v[:3]))


def test_log_sigmoid_of_negation_folds_the_negation():
    x = lt.dvector("x")
    out = rewrite_graph(lt.log(lt.sigmoid(-x)), include=("stabilize",))
    assert ps.Neg in scalar_ops(out)
    f = lucent.function([x], out)
    assert f([800.0])[0] == pytest.approx(-800.0)


@pytest.mark.parametrize(
    "build",
    [lambda x: lt.log(1 - lt.sigmoid(x)), lambda x: lt.log(lt.add(1, lt.neg(lt.sigmoid(x)))),
     lambda x: lt.log1p(-lt.sigmoid(x))],
)
def test_log_one_minus_sigmoid(build):
    x = lt.dvector("x")
    f, naive = compile_both([x], build(x))
    assert ps.Softplus in scalar_ops(f) and ps.Sigmoid not in scalar_ops(f)
    assert f([800.0])[0] == pytest.approx(-800.0)
    assert naive([800.0])[0] == -np.inf
    v = np.array([-3.0, 0.0, 5.0])
    np.testing.assert_allclose(f(v), -np.log1p(np.exp(v)))
    np.testing.assert_allclose(f(v), naive(v))


def test_log_sigmoid_float32():
    x = lt.fvector("x")
    expr = lt.log(lt.sigmoid(x))
    f = lucent.function([x], expr)
    assert f.maker.fgraph.outputs[0].type == expr.type
    assert f(np.array([-200.0], dtype="float32"))[0] == pytest.approx(-200.0)


# --- logsumexp ----------------------------------------------------------------------
def _np_logsumexp(v, axis=None, keepdims=False):
    m = np.max(v, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    out = np.log(np.sum(np.exp(v - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis) if axis is not None else out.reshape(())


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_log_sum_exp(axis, keepdims):
    x = lt.dmatrix("x")
    expr = lt.log(lt.sum(lt.exp(x), axis=axis, keepdims=keepdims))
    f, naive = compile_both([x], expr)
    nodes = f.maker.fgraph.toposort()
    assert any(isinstance(n.op, Max) for n in nodes)
    assert f.maker.fgraph.outputs[0].type == expr.type
    safe = np.array([[0.5, -1.0, 2.0], [3.0, 0.1, -0.2]])
    np.testing.assert_allclose(f(safe), naive(safe))
    big = np.array([[1000.0, 999.0, 0.0], [-1000.0, -1001.0, -1002.0]])
    out = f(big)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, _np_logsumexp(big, axis if axis != (0, 1) else None, keepdims)
                               if axis != (0, 1) else _np_logsumexp(big, None, keepdims))
    assert not np.all(np.isfinite(naive(big)))


def test_log_sum_exp_infinite_rows_like_numpy():
    x = lt.dmatrix("x")
    f = lucent.function([x], lt.log(lt.sum(lt.exp(x), axis=1)))
    v = np.array([[-np.inf, -np.inf], [np.inf, 1.0], [0.0, -np.inf]])
    with np.errstate(all="ignore"):
        expected = np.log(np.sum(np.exp(v), axis=1))
    np.testing.assert_array_equal(f(v), expected)


def test_log_sum_exp_is_not_rewritten_twice():
    x = lt.dvector("x")
    out = rewrite_graph(lt.log(lt.sum(lt.exp(x))), include=("canonicalize", "stabilize"))
    nodes = io_toposort(list(graph_inputs([out])), [out])
    assert sum(isinstance(n.op, Max) for n in nodes) == 1


def test_log_sum_exp_float32():
    x = lt.fvector("x")
    expr = lt.log(lt.sum(lt.exp(x)))
    f = lucent.function([x], expr)
    assert f.maker.fgraph.outputs[0].type == expr.type
    assert f(np.array([100.0, 100.0], dtype="float32")) == pytest.approx(100 + np.log(2), rel=1e-6)


def test_rewrites_are_named_in_history():
    x = lt.dvector("x")
    _, fg = rewrite_graph(lt.log(1 + x), include=("stabilize",), return_fgraph=True)
    names = [r.rewrite for r in fg.rewrite_history.records]
    assert "local_log1p" in names
