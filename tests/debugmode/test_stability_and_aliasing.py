"""DebugMode: deterministic rewriting (StochasticOrder), aliased outputs, destroyed inputs,
PyTensor's constructor options, and the ``str_diagnostic`` / ``BadOptimization`` names."""

import numpy as np
import pytest

pytest.importorskip("numba")

import lucent  # noqa: E402
import lucent.tensor as lt  # noqa: E402
from lucent.debugmode import (  # noqa: E402
    BadDestroyMap,
    BadOptimization,
    BadViewMap,
    DebugMode,
    StochasticOrder,
    str_diagnostic,
)
from lucent.graph.basic import Apply  # noqa: E402
from lucent.graph.op import Op  # noqa: E402
from lucent.graph.rewriting.basic import node_rewriter  # noqa: E402
from lucent.graph.rewriting.db import EquilibriumDB  # noqa: E402
from lucent.tensor.math import add  # noqa: E402


class _Shift(Op):
    """``a + b + offset``: a stand-in that a rewrite can swap in for ``add``."""

    __props__ = ("offset",)

    def __init__(self, offset):
        self.offset = offset

    def make_node(self, a, b):
        a, b = lt.as_tensor_variable(a), lt.as_tensor_variable(b)
        return Apply(self, [a, b], [a.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] + inputs[1] + self.offset


def _db(rewrite, name):
    db = EquilibriumDB()
    db.register(name, rewrite, "all")
    return db.query("+all")


def test_rewrite_that_alternates_raises_stochastic_order_at_compile_time():
    flips = [False]

    @node_rewriter([add])
    def sometimes_shift(fgraph, node):
        flips[0] = not flips[0]
        return [_Shift(0.0)(*node.inputs)] if flips[0] else False

    a, b = lt.dvector("a"), lt.dvector("b")
    with pytest.raises(StochasticOrder, match="different graphs") as info:
        lucent.function([a, b], a + b, mode=DebugMode(optimizer=_db(sometimes_shift, "sometimes_shift"), stability_patience=3))
    assert info.value.attempt == 1


def test_deterministic_rewrites_pass_and_patience_one_skips_the_check():
    calls = []

    @node_rewriter([add])
    def always_shift(fgraph, node):
        calls.append(1)
        return [_Shift(0.0)(*node.inputs)]

    a, b = lt.dvector("a"), lt.dvector("b")
    f = lucent.function([a, b], a + b, mode=DebugMode(optimizer=_db(always_shift, "always_shift"), stability_patience=4))
    np.testing.assert_allclose(f([1.0], [2.0]), [3.0])
    assert len(calls) == 4  # the graph and three independent clones
    calls.clear()
    lucent.function([a, b], a + b, mode=DebugMode(optimizer=_db(always_shift, "always_shift"), stability_patience=1))
    assert len(calls) == 1


def test_fast_run_rewrites_of_a_training_step_are_deterministic():
    x = lt.dmatrix("x")
    w = lucent.shared(np.ones((3, 2)), name="w")
    cost = lt.tanh(lt.dot(x, w)).mean()
    f = lucent.function(
        [x], cost, updates=[(w, w - 0.1 * lucent.grad(cost, w))], mode=DebugMode(stability_patience=3)
    )
    f(np.ones((4, 3)))


def test_bad_rewrite_is_also_the_graph_level_bad_optimization():
    from lucent.graph.features import BadOptimization as GraphBadOptimization

    @node_rewriter([add])
    def shift_by_half(fgraph, node):
        return [_Shift(0.5)(*node.inputs)]

    a, b = lt.dvector("a"), lt.dvector("b")
    f = lucent.function([a, b], a + b, mode=DebugMode(optimizer=_db(shift_by_half, "shift_by_half")))
    with pytest.raises(GraphBadOptimization) as info:
        f([1.0, 2.0], [3.0, 4.0])
    assert isinstance(info.value, BadOptimization)
    assert info.value.reason == "shift_by_half"
    np.testing.assert_allclose(info.value.new_r_val, [4.5, 6.5])


class _AliasedOutputs(Op):
    """Two outputs that are overlapping views of one fresh array (undeclarable)."""

    def make_node(self, a):
        return Apply(self, [a], [a.type(), a.type()])

    def perform(self, node, inputs, out):
        r = inputs[0] * 1
        out[0][0] = r[:-1]
        out[1][0] = r[1:]


def test_two_outputs_sharing_memory_and_both_used_is_bad_view_map():
    x = lt.dvector("x")
    first, second = _AliasedOutputs()(x)
    f = lucent.function([x], first * 2 + second * 2, mode="DEBUG_MODE")
    with pytest.raises(BadViewMap, match="Outputs 0 and 1 .* share memory") as info:
        f([1.0, 2.0, 3.0])
    assert info.value.out_alias_index == 1


def test_aliased_outputs_that_only_return_to_the_caller_are_fine():
    x = lt.dvector("x")
    first, second = _AliasedOutputs()(x)
    f = lucent.function([x], [first, second], mode="DEBUG_MODE")
    r0, r1 = f([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(r0, [1.0, 2.0])
    np.testing.assert_array_equal(r1, [2.0, 3.0])


class _AddIntoFirst(Op):
    """Writes ``a + b`` into ``a`` and returns it, declaring nothing."""

    def make_node(self, a, b):
        return Apply(self, [a, b], [a.type()])

    def perform(self, node, inputs, out):
        a, b = inputs
        out[0][0] = a
        out[0][0] += b


def test_destroyed_input_is_reported_before_the_view_it_also_is():
    x, y = lt.dvector("x"), lt.dvector("y")
    f = lucent.function([x, y], _AddIntoFirst()(x, y), mode="DEBUG_MODE")
    with pytest.raises(BadDestroyMap) as info:
        f([1.0, 2.0], [3.0, 4.0])
    assert any(isinstance(p, BadViewMap) for p in info.value.report.problems)


def test_pytensor_constructor_options():
    mode = DebugMode(
        "fast_run", stability_patience=2, check_c_code=False, check_isfinite=True,
        check_preallocated_output=["c_contiguous"], require_matching_strides=1,
    )
    assert mode.stability_patience == 2 and mode.check_isfinite and not mode.check_c_code
    assert mode.check_preallocated_output == ["c_contiguous"] and mode.require_matching_strides == 1
    assert DebugMode(check_preallocated_output="c_contiguous:f_contiguous").check_preallocated_output == [
        "c_contiguous", "f_contiguous"
    ]
    with pytest.raises(ValueError, match="at least one"):
        DebugMode(check_c_code=False, check_py_code=False)
    with lucent.config.change_flags(DebugMode__patience=3):
        assert DebugMode().stability_patience == 3
    x = lt.dvector("x")
    f = lucent.function([x], lt.exp(x), mode=mode)
    np.testing.assert_allclose(f([0.0]), [1.0])


def test_check_c_code_false_checks_the_reference_alone():
    x = lt.dvector("x")
    f = lucent.function([x], lt.exp(x) * 2, mode=DebugMode(check_c_code=False))
    f([0.0, 1.0])
    reasons = [reason for _, reason in f.debug_report.reference_only]
    assert reasons and all("check_c_code=False" in r for r in reasons)


def test_str_diagnostic_summarises_two_arrays():
    text = str_diagnostic(np.array([1.0, 2.0]), np.array([1.0, 2.5]), None, None)
    assert "Expected" in text and "Value" in text
    assert "Abs diff: max 0.5" in text
    assert "rtol, atol: 1e-05 1e-08" in text
    assert "rtol, atol: 0.1 0.2" in str_diagnostic(np.ones(2), np.ones(2), 0.1, 0.2)
    # values that are not arrays still give a message
    assert "expected : 1" in str_diagnostic(1, "x", None, None)
