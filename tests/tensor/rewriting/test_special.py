"""Softmax stabilisation: log_softmax, and the cross-entropy cost and gradient."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.graph.rewriting.utils import rewrite_graph
from lucent.graph.traversal import graph_inputs, io_toposort
from lucent.scalar import basic as ps
from lucent.tensor.elemwise import Elemwise
from lucent.tensor.special import LogSoftmax, Softmax

NO_REWRITE = lucent.Mode(optimizer=None)

LOGITS = np.array([[1000.0, 0.0, 1.0], [1.0, 2.0, 3.0], [-5.0, 990.0, 1000.0]])
ONE_HOT = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
LABELS = np.array([1, 2, 0])


def ref_log_softmax(v):
    m = v.max(axis=-1, keepdims=True)
    return v - m - np.log(np.exp(v - m).sum(axis=-1, keepdims=True))


def ref_softmax(v):
    return np.exp(ref_log_softmax(v))


def nodes_of(outputs):
    outputs = outputs if isinstance(outputs, list) else [outputs]
    return io_toposort(list(graph_inputs(outputs)), outputs)


def has_reciprocal_or_log(nodes):
    for n in nodes:
        if isinstance(n.op, Elemwise):
            ops = [n.op.scalar_op] + [m.op for m in getattr(n.op.scalar_op, "nodes", [])]
            if any(isinstance(o, (ps.Reciprocal, ps.TrueDiv, ps.Log)) for o in ops):
                return True
    return False


# --- log(softmax(x)) ---------------------------------------------------------------
@pytest.mark.parametrize("axis", [-1, 0])
def test_log_softmax_rewrite(axis):
    x = lt.dmatrix("x")
    expr = lt.log(lt.special.softmax(x, axis=axis))
    out = rewrite_graph(expr, include=("canonicalize", "stabilize"))
    assert out.type == expr.type
    assert any(isinstance(n.op, LogSoftmax) for n in nodes_of(out))
    f = lucent.function([x], expr)
    naive = lucent.function([x], expr, mode=NO_REWRITE)
    safe = np.array([[0.1, -2.0, 3.0], [1.0, 1.0, 0.0]])
    np.testing.assert_allclose(f(safe), naive(safe))
    res = f(LOGITS)
    assert np.all(np.isfinite(res))
    expected = ref_log_softmax(LOGITS if axis == -1 else LOGITS.T)
    np.testing.assert_allclose(res, expected if axis == -1 else expected.T)
    assert np.isinf(naive(LOGITS)).any()


def test_log_softmax_float32_type():
    x = lt.fmatrix("x")
    expr = lt.log(lt.special.softmax(x, axis=-1))
    f = lucent.function([x], expr)
    assert f.maker.fgraph.outputs[0].type == expr.type
    res = f(LOGITS.astype("float32"))
    np.testing.assert_allclose(res, ref_log_softmax(LOGITS), rtol=1e-5, atol=1e-6)


# --- cross-entropy with one-hot targets -----------------------------------------------
def _cross_entropy():
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    cost = -(y * lt.log(lt.special.softmax(x, axis=-1))).sum(axis=-1)
    return x, y, cost


def test_cross_entropy_cost_is_finite_and_exact():
    x, y, cost = _cross_entropy()
    f = lucent.function([x, y], cost)
    naive = lucent.function([x, y], cost, mode=NO_REWRITE)
    expected = -(ONE_HOT * ref_log_softmax(LOGITS)).sum(axis=-1)
    np.testing.assert_allclose(f(LOGITS, ONE_HOT), expected)
    np.testing.assert_allclose(f(LOGITS, ONE_HOT)[0], 1000.0)
    assert not np.all(np.isfinite(naive(LOGITS, ONE_HOT)))


def test_cross_entropy_gradient_is_stable():
    x, y, cost = _cross_entropy()
    g = lucent.grad(cost.sum(), x)
    f = lucent.function([x, y], [cost, g])
    naive = lucent.function([x, y], g, mode=NO_REWRITE)
    # d/dx of -sum(y * log_softmax(x)) is softmax(x) * sum(y) - y.
    expected = ref_softmax(LOGITS) * ONE_HOT.sum(-1, keepdims=True) - ONE_HOT
    c, gv = f(LOGITS, ONE_HOT)
    assert np.all(np.isfinite(c)) and np.all(np.isfinite(gv))
    np.testing.assert_allclose(gv, expected, atol=1e-12)
    assert np.isnan(naive(LOGITS, ONE_HOT)).any()
    # On safe logits the rewritten gradient equals the naive one.
    safe = np.array([[0.1, 0.2, -0.3], [2.0, -1.0, 0.5], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(f(safe, ONE_HOT)[1], naive(safe, ONE_HOT))


def test_cross_entropy_gradient_graph_has_no_division_by_softmax():
    x, y, cost = _cross_entropy()
    g = lucent.grad(cost.sum(), x)
    out = rewrite_graph([cost, g], include=("canonicalize", "stabilize"))
    assert not has_reciprocal_or_log(nodes_of(out))
    assert any(isinstance(n.op, Softmax) for n in nodes_of(out[1]))
    assert any(isinstance(n.op, LogSoftmax) for n in nodes_of(out[0]))


def test_cross_entropy_soft_targets_and_scaled_cost():
    x, y, cost = _cross_entropy()
    total = 0.5 * cost.mean()
    g = lucent.grad(total, x)
    f = lucent.function([x, y], [total, g])
    soft = np.array([[0.2, 0.7, 0.1], [0.0, 0.5, 0.5], [1.0, 0.0, 0.0]])
    c, gv = f(LOGITS, soft)
    n = LOGITS.shape[0]
    np.testing.assert_allclose(c, 0.5 * np.mean(-(soft * ref_log_softmax(LOGITS)).sum(-1)))
    expected = 0.5 / n * (ref_softmax(LOGITS) * soft.sum(-1, keepdims=True) - soft)
    np.testing.assert_allclose(gv, expected, atol=1e-12)


def test_cross_entropy_float32():
    x, y = lt.fmatrix("x"), lt.fmatrix("y")
    cost = -(y * lt.log(lt.special.softmax(x, axis=-1))).sum(axis=-1)
    g = lucent.grad(cost.sum(), x)
    f = lucent.function([x, y], [cost, g])
    c, gv = f(LOGITS.astype("float32"), ONE_HOT.astype("float32"))
    assert c.dtype == gv.dtype == np.float32
    np.testing.assert_allclose(c, -(ONE_HOT * ref_log_softmax(LOGITS)).sum(-1), rtol=1e-5)
    np.testing.assert_allclose(gv, ref_softmax(LOGITS) - ONE_HOT, atol=1e-6)


# --- cross-entropy with integer labels (advanced indexing) ---------------------------
def test_indexed_cross_entropy_cost_and_gradient():
    x = lt.dmatrix("x")
    labels = lt.lvector("labels")
    cost = -lt.log(lt.special.softmax(x, axis=-1))[lt.arange(x.shape[0]), labels]
    g = lucent.grad(cost.sum(), x)
    f = lucent.function([x, labels], [cost, g])
    naive = lucent.function([x, labels], [cost, g], mode=NO_REWRITE)
    c, gv = f(LOGITS, LABELS)
    onehot = np.eye(3)[LABELS]
    np.testing.assert_allclose(c, -ref_log_softmax(LOGITS)[np.arange(3), LABELS])
    np.testing.assert_allclose(gv, ref_softmax(LOGITS) - onehot, atol=1e-12)
    nc, ng = naive(LOGITS, LABELS)
    assert np.isinf(nc).any() and np.isnan(ng).any()
    out = rewrite_graph([cost, g], include=("canonicalize", "stabilize"))
    assert not has_reciprocal_or_log(nodes_of(out))


def test_log_of_basic_indexed_softmax():
    x = lt.dmatrix("x")
    expr = lt.log(lt.special.softmax(x, axis=-1)[0])
    f = lucent.function([x], expr)
    np.testing.assert_allclose(f(LOGITS), ref_log_softmax(LOGITS)[0])


# --- the cancellation rule on its own --------------------------------------------------
def test_exp_times_reciprocal_exp_cancels():
    x, a = lt.dvectors("x", "a")
    e = lt.exp(x)
    expr = a * lt.reciprocal(e) * e
    out = rewrite_graph(expr, include=("stabilize",))
    assert not any(isinstance(n.op, Elemwise) and isinstance(n.op.scalar_op, ps.Exp) for n in nodes_of(out))
    f = lucent.function([x, a], expr)
    np.testing.assert_allclose(f([1000.0, 1.0], [2.0, 3.0]), [2.0, 3.0])


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_cancellation_keeps_nan_and_inf_semantics(mode):
    # A NaN or infinite argument is not an overflow: the result stays NaN as
    # in NumPy. Only a finite argument that overflows (1000) is cancelled.
    x, y = lt.dvectors("x", "y")
    xv = np.array([np.nan, np.inf, -np.inf, 1.0, -2.0])
    yv = np.arange(5.0)
    f = lucent.function(
        [x, y],
        [lt.exp(x) / lt.exp(x), lt.exp(x) * y / lt.exp(x), lt.sigmoid(x) * y / lt.sigmoid(x)],
        mode=mode,
    )
    ratio, scaled, sig = f(xv, yv)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(ratio, np.exp(xv) / np.exp(xv))
        np.testing.assert_array_equal(scaled, np.exp(xv) * yv / np.exp(xv))
        ref_sig = 1 / (1 + np.exp(-xv))
        np.testing.assert_allclose(sig, ref_sig * yv / ref_sig)
    overflow = lucent.function([x, y], lt.exp(x) * y / lt.exp(x), mode="FAST_RUN")
    np.testing.assert_array_equal(overflow([1000.0], [3.0]), [3.0])


def test_cancellation_keeps_broadcast_shape():
    x = lt.dmatrix("x")
    a = lt.dvector("a")
    s = lt.special.softmax(x, axis=-1)
    expr = a / s * s
    out = rewrite_graph(expr, include=("stabilize",))
    assert out.type == expr.type
    f = lucent.function([x, a], expr)
    res = f(np.zeros((2, 3)), np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(res, np.tile([1.0, 2.0, 3.0], (2, 1)))


def test_no_cancellation_for_arbitrary_variables():
    x, a = lt.dvectors("x", "a")
    expr = a * lt.reciprocal(x) * x  # not valid at x == 0: must stay
    out = rewrite_graph(expr, include=("stabilize",))
    assert any(isinstance(n.op, Elemwise) and isinstance(n.op.scalar_op, ps.Reciprocal) for n in nodes_of(out))


def test_mlp_training_step_is_finite_with_large_logits():
    from tests.models import mlp_training_step

    inputs, cost, updates, params = mlp_training_step(sizes=(4, 5, 3), seed=0)
    grads = lucent.grad(cost, params)
    f = lucent.function(inputs, [cost] + grads)
    naive = lucent.function(inputs, [cost] + grads, mode=NO_REWRITE)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 4))
    Y = np.eye(3)[rng.integers(0, 3, size=6)]
    for a, b in zip(f(X, Y), naive(X, Y)):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-12)
    big = X * 1e4
    assert all(np.all(np.isfinite(v)) for v in f(big, Y))


def _softmax_ref(v, axis):
    v = np.asarray(v, dtype="float64")
    m = v.max(axis=axis, keepdims=True)
    e = np.exp(v - m)
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("mode", ["FAST_RUN", "DebugMode"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_written_out_softmax_becomes_softmax(mode, dtype):
    """``exp(x) / sum(exp(x), axis)`` overflows to ``nan`` past exp's range; it is
    computed as ``Softmax`` over the same axes (all of them, one, or several)."""
    big = 800.0 if dtype == "float64" else 95.0
    v = lt.vector("v", dtype=dtype)
    m = lt.matrix("m", dtype=dtype)
    t = lt.tensor3("t", dtype=dtype)
    cases = [
        (v, lambda e: e / e.sum(), np.array([big, big + 1.0, 0.0]), None),
        (m, lambda e: e / e.sum(axis=1, keepdims=True), np.array([[big, big + 1.0], [1.0, 2.0]]), 1),
        (m, lambda e: e / e.sum(axis=0), np.array([[big, 1.0], [big + 1.0, 2.0]]), 0),
        (t, lambda e: e / e.sum(axis=(0, 2), keepdims=True), np.full((2, 2, 3), big) + np.arange(12).reshape(2, 2, 3), (0, 2)),
    ]
    for x, build, value, axis in cases:
        out = build(lt.exp(x))
        f = lucent.function([x], out, mode=mode)
        assert any(isinstance(n.op, Softmax) for n in f.maker.fgraph.toposort())
        got = f(value.astype(dtype))
        assert got.dtype == dtype
        np.testing.assert_allclose(got, _softmax_ref(value, axis), rtol=1e-5 if dtype == "float32" else 1e-12,
                                   atol=1e-30 if dtype == "float32" else 0)


def test_a_sum_broadcast_along_other_axes_is_not_a_softmax():
    """``exp(m) / sum(exp(m), axis=1)`` divides column j by the sum of row j (the
    sum is broadcast along the other axis): not a softmax, and left as written."""
    m = lt.dmatrix("m")
    e = lt.exp(m)
    f = lucent.function([m], e / e.sum(axis=1), mode="FAST_RUN")
    assert not any(isinstance(n.op, Softmax) for n in f.maker.fgraph.toposort())
    value = np.array([[0.5, 1.0], [2.0, -1.0]])
    np.testing.assert_allclose(f(value), np.exp(value) / np.exp(value).sum(axis=1))
