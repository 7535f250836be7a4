"""DebugMode raises no alarm for what lucent's rewrites do on purpose.

Stabilising rewrites turn an overflow into the finite value it stands for,
and fusion may round float64 results through float32 intermediates; both
are compared with the allowance they declare. The same allowances must not
hide a real fault.
"""

import numpy as np
import pytest

pytest.importorskip("numba")

import lucent  # noqa: E402
import lucent.tensor as lt  # noqa: E402
from lucent.debugmode import BadOptimization, DebugMode  # noqa: E402
from lucent.debugmode.values import narrowest_float, values_agree  # noqa: E402
from lucent.tensor.special import softmax  # noqa: E402


def _clean(inputs, outputs, *values):
    f = lucent.function(inputs, outputs, mode=DebugMode(on_error="report"))
    result = f(*values)
    assert f.debug_report.ok, str(f.debug_report)
    assert f.debug_report.rewrites_checked > 0
    return result


def test_stabilised_expressions_at_overflowing_inputs_do_not_alarm():
    x = lt.dvector("x")
    m = lt.dmatrix("m")
    r = _clean([x], lt.log(lt.sigmoid(x)), np.array([-800.0, 0.0, 3.0]))
    np.testing.assert_allclose(r, [-800.0, np.log(0.5), -np.log1p(np.exp(-3.0))])
    r = _clean([m], lt.log(softmax(m, axis=-1)), np.array([[1000.0, 0.0, -3.0]]))
    np.testing.assert_allclose(r, [[0.0, -1000.0, -1003.0]])
    r = _clean([x], lt.log(lt.sum(lt.exp(x))), np.array([1000.0, 999.0]))
    np.testing.assert_allclose(r, 1000.0 + np.log1p(np.exp(-1.0)))
    r = _clean([x], lt.log1p(lt.exp(x)), np.array([800.0, -3.0]))
    np.testing.assert_allclose(r, [800.0, np.log1p(np.exp(-3.0))])
    # Downstream of a stabilised expression: the mean of log(sigmoid).
    r = _clean([x], lt.mean(lt.log(lt.sigmoid(x)) * 2), np.array([-800.0, 1.0]))
    np.testing.assert_allclose(r, (-1600.0 - 2 * np.log1p(np.exp(-1.0))) / 2)


def test_classifier_with_saturated_logits_runs_clean():
    X = lt.dmatrix("X")
    y = lt.lvector("y")
    W = lucent.shared(np.array([[400.0, -400.0], [-300.0, 300.0]]), name="W")
    logits = lt.dot(X, W)
    p = softmax(logits, axis=-1)
    nll = -lt.mean(lt.log(p)[lt.arange(y.shape[0]), y])
    grad = lucent.grad(nll, W)
    f = lucent.function([X, y], nll, updates=[(W, W - 0.1 * grad)], mode=DebugMode(on_error="report"))
    cost = f(np.array([[3.0, 0.0], [0.0, 3.0]]), np.array([1, 1]))
    assert f.debug_report.ok, str(f.debug_report)
    assert np.isfinite(cost) and cost == pytest.approx(2400.0 / 2)


def test_a_real_difference_after_a_stabilised_node_still_alarms():
    # The allowance covers infinities of the old value only.
    from lucent.graph.rewriting.basic import node_rewriter
    from lucent.graph.rewriting.db import EquilibriumDB
    from lucent.tensor.math import add

    @node_rewriter([add])
    def off_by_one(fgraph, node):
        if getattr(node.tag, "shifted", False):
            return False
        new = add(*node.inputs) + 1.0
        new.owner.inputs[0].owner.tag.shifted = True
        return [new]

    db = EquilibriumDB()
    db.register("off_by_one", off_by_one, "all")
    x = lt.dvector("x")
    f = lucent.function([x], lt.log(lt.sigmoid(x)) + x, mode=DebugMode(
        optimizer=db.query("+all"), on_error="report", stability_patience=1))
    f(np.array([-800.0, 1.0]))
    assert any(isinstance(p, BadOptimization) for p in f.debug_report)


def test_fused_node_is_compared_with_its_narrowest_intermediate_tolerance():
    a = lt.fvector("a")
    d = lt.dvector("d")
    out = lt.cast(lt.exp(a) * a, "float64") * d + 1.0
    f = lucent.function([a, d], out, mode="FAST_RUN")
    [fused] = [n for n in f.maker.fgraph.toposort() if narrowest_float(n.outputs[0]) is not None]
    var = fused.outputs[0]
    assert var.type.dtype == "float64" and narrowest_float(var) == "float32"
    ref = np.array([1.5, -2.25, 3.0])
    one_ulp = ref * (1 + np.finfo(np.float32).eps)
    float32_rounding = ref * (1 + 5e-5)  # within float32's rtol (1e-4), not float64's (1e-5)
    assert values_agree(var, ref, one_ulp) and values_agree(var, ref, float32_rounding)
    assert not values_agree(var, ref, ref * 1.01)
    # A float64 variable without float32 intermediates keeps float64's tolerance.
    plain = (d * 2).owner.outputs[0]
    assert values_agree(plain, ref, one_ulp) and not values_agree(plain, ref, float32_rounding)
    # And the whole function runs clean under DebugMode.
    _clean([a, d], out, np.array([0.1, 0.2, 0.3], dtype="float32"), np.array([1.0, 2.0, 3.0]))


def test_uninitialised_memory_is_not_compared():
    """AllocEmpty's values are whatever the memory held: perform and the kernel need not agree."""
    from lucent.tensor.joining import AllocEmpty

    s = lt.lscalar("s")
    out = AllocEmpty("int8")(s, 2)
    assert out.tag.values_eq_approx(np.zeros((1, 2)), np.ones((1, 2)))
    f = lucent.function([s], out.shape, mode=DebugMode(on_error="report", stability_patience=1))
    for _ in range(3):
        assert tuple(f(3)) == (3, 2)
        assert f.debug_report.ok, str(f.debug_report)
    g = lucent.function([s], [out], mode=DebugMode(on_error="report", stability_patience=1))
    assert g(1)[0].shape == (1, 2) and g.debug_report.ok, str(g.debug_report)
