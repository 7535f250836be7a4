"""DebugMode catches each kind of per-node fault and names the node, the path and the place.

Every faulty op here is its own class: Numba kernel registrations are
global, so sharing a class between tests would let one test's kernel leak
into another.
"""

import numpy as np
import pytest

pytest.importorskip("numba")

import lucent  # noqa: E402
import lucent.tensor as lt  # noqa: E402
from lucent.debugmode import (  # noqa: E402
    BadDestroyMap,
    BadThunkOutput,
    BadViewMap,
    DebugMode,
    DebugModeError,
    InvalidValueError,
    NonFiniteOutput,
)
from lucent.graph.basic import Apply  # noqa: E402
from lucent.graph.op import Op  # noqa: E402
from lucent.link.numba.dispatch import numba_funcify, numba_njit  # noqa: E402


class _Unary(Op):
    """``2 * x`` on float64 tensors; subclasses differ only in their faults."""

    __props__ = ()

    def make_node(self, x):
        x = lt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] * 2


class WrongForLarge(_Unary):
    pass


@numba_njit
def _wrong_for_large(x):
    out = x * 2
    flat = out.ravel()
    for i in range(flat.size):
        if x.ravel()[i] > 10:
            flat[i] += 1.0
    return out


@numba_funcify.register(WrongForLarge)
def _(op, node=None, **kwargs):
    return _wrong_for_large


class WritesInput(_Unary):
    pass


@numba_njit
def _writes_input(x):
    out = x * 2
    x[0] = -1.0
    return out


@numba_funcify.register(WritesInput)
def _(op, node=None, **kwargs):
    return _writes_input


class PerformReturnsView(_Unary):
    def perform(self, node, inputs, out):
        inputs[0] *= 2  # written into the (copied) input, which is then returned
        out[0][0] = inputs[0]


@numba_njit
def _double(x):
    return x * 2


@numba_funcify.register(PerformReturnsView)
def _(op, node=None, **kwargs):
    return _double


class KernelReturnsView(_Unary):
    def perform(self, node, inputs, out):
        out[0][0] = inputs[0].copy()


@numba_njit
def _identity_view(x):
    return x


@numba_funcify.register(KernelReturnsView)
def _(op, node=None, **kwargs):
    return _identity_view


class KernelWrongDtype(_Unary):
    pass


@numba_njit
def _float32_double(x):
    return (x * 2).astype(np.float32)


@numba_funcify.register(KernelWrongDtype)
def _(op, node=None, **kwargs):
    return _float32_double


class PerformWrongShape(Op):
    """Declares a static output shape (3,) but perform returns 4 elements."""

    __props__ = ()

    def make_node(self, x):
        x = lt.as_tensor_variable(x)
        return Apply(self, [x], [lt.tensor(dtype="float64", shape=(3,))])

    def perform(self, node, inputs, out):
        out[0][0] = np.zeros(4)


@numba_njit
def _three_zeros(x):
    return np.zeros(3)


@numba_funcify.register(PerformWrongShape)
def _(op, node=None, **kwargs):
    return _three_zeros


class NoKernel(_Unary):
    """Correct, but without a Numba implementation."""


def _fn(op, mode, x=None, **kwargs):
    x = lt.dmatrix("x") if x is None else x
    return lucent.function([x], op(x) + 1, mode=mode, **kwargs)


def test_wrong_kernel_value_is_bad_thunk_output_with_index_and_difference():
    x = lt.dmatrix("x")
    y = WrongForLarge()(x)
    f = lucent.function([x], y + 1, mode=DebugMode())
    value = np.zeros((3, 4))
    np.testing.assert_allclose(f(value), 1.0)  # small values: the kernel is right
    assert f.debug_report.ok
    value[1, 2] = 20.0
    with pytest.raises(BadThunkOutput) as info:
        f(value)
    err = info.value
    assert isinstance(err, DebugModeError)
    assert isinstance(err.node.op, WrongForLarge) and err.output_index == 0 and err.path == "numba"
    assert err.difference["abs_index"] == (1, 2) and err.difference["max_abs"] == pytest.approx(1.0)
    assert err.numba_value[1, 2] == 41.0 and err.perform_value[1, 2] == 40.0
    text = str(err)
    assert "largest absolute difference 1 at index (1, 2)" in text
    # The node was created in this file (by the op's make_node, the first frame outside lucent).
    assert 'test_node_checks.py", line' in text
    assert "float64 (3, 4)" in text and "[id A]" in text and "WrongForLarge" in text
    assert err.report is f.debug_report and not err.report.ok


def test_kernel_writing_its_input_is_bad_destroy_map():
    f = _fn(WritesInput(), DebugMode(), lt.dvector("x"))
    with pytest.raises(BadDestroyMap) as info:
        f(np.arange(3.0))
    err = info.value
    assert err.path == "numba" and err.input_index == 0
    assert err.before[0] == 0.0 and err.after[0] == -1.0
    assert "destroy_map" in str(err) and "changed its input 0" in str(err)


def test_perform_returning_a_view_is_bad_view_map():
    f = _fn(PerformReturnsView(), DebugMode(), lt.dvector("x"))
    with pytest.raises(DebugModeError) as info:
        f(np.arange(3.0))
    kinds = {type(p) for p in info.value.report}
    # The perform both wrote into its input and returned it.
    assert BadViewMap in kinds and BadDestroyMap in kinds
    view = next(p for p in info.value.report if isinstance(p, BadViewMap))
    assert view.path == "perform" and view.output_index == 0 and view.input_index == 0
    assert "view_map" in str(view)


def test_kernel_returning_a_view_is_bad_view_map():
    f = _fn(KernelReturnsView(), DebugMode(), lt.dvector("x"))
    with pytest.raises(BadViewMap) as info:
        f(np.arange(3.0))
    assert info.value.path == "numba"


def test_wrong_dtype_from_kernel_is_invalid_value():
    f = _fn(KernelWrongDtype(), DebugMode(), lt.dvector("x"))
    with pytest.raises(InvalidValueError) as info:
        f(np.arange(3.0))
    err = info.value
    assert err.path == "numba" and err.output_index == 0 and err.value.dtype == np.float32
    assert "the Numba kernel" in str(err) and "float32" in str(err)


def test_wrong_shape_from_perform_is_invalid_value():
    f = _fn(PerformWrongShape(), DebugMode(on_error="report"), lt.dvector("x"))
    f(np.arange(3.0))
    problems = list(f.debug_report)
    invalid = [p for p in problems if isinstance(p, InvalidValueError)]
    assert invalid and invalid[0].path == "perform"
    assert "(3,)" in invalid[0].reason and "(4,)" in invalid[0].reason


def test_report_collects_several_problems_and_returns_reference_results():
    x = lt.dvector("x")
    out = WrongForLarge()(x) + WritesInput()(x) + KernelWrongDtype()(x)
    f = lucent.function([x], out, mode=DebugMode(on_error="report"))
    value = np.array([1.0, 20.0, 3.0])
    result = f(value)
    np.testing.assert_allclose(result, 6 * value)  # the reference (perform) values
    np.testing.assert_array_equal(value, [1.0, 20.0, 3.0])
    report = f.debug_report
    assert not report.ok and report.finished
    kinds = [p.kind for p in report]
    assert {"BadThunkOutput", "BadDestroyMap", "InvalidValueError"} <= set(kinds)
    text = str(report)
    assert "problem(s) found" in text and "BadDestroyMap" in text and "WrongForLarge" in text
    html = report._repr_html_()
    assert "<details" in html and "BadThunkOutput" in html
    assert f.maker.linker.last_report is report


def test_failing_call_leaves_shared_variables_unchanged():
    x = lt.dvector("x")
    W = lucent.shared(np.ones(3), name="W")
    b = lucent.shared(np.zeros(3), name="b")
    f = lucent.function(
        [x], W.sum(), updates=[(W, W - 0.5 * WrongForLarge()(x)), (b, b + x)], mode=DebugMode()
    )
    f(np.ones(3))
    W_before, b_before = W.get_value().copy(), b.get_value().copy()
    W_buffer = W.get_value(borrow=True)
    with pytest.raises(BadThunkOutput):
        f(np.array([1.0, 50.0, 1.0]))
    np.testing.assert_array_equal(W.get_value(), W_before)
    np.testing.assert_array_equal(b.get_value(), b_before)
    np.testing.assert_array_equal(W_buffer, W_before)


def test_check_nan_names_the_node_producing_nan():
    x = lt.dvector("x")
    f = lucent.function([x], (lt.log(x - 1) * 2).sum(), mode=DebugMode(check_nan=True))
    f(np.array([2.0, 3.0]))
    with pytest.raises(NonFiniteOutput) as info:
        f(np.array([2.0, 0.5]))
    assert "log" in str(info.value.node.op) and info.value.what == "NaN"
    # NaN already in the input: not a node's fault.
    g = lucent.function([x], lt.exp(x) * 2, mode=DebugMode(check_nan=True))
    g(np.array([np.nan, 1.0]))
    assert g.debug_report.ok
    # Without check_nan, NaN outputs are not problems.
    h = lucent.function([x], lt.log(x - 1), mode=DebugMode())
    h(np.array([0.5]))
    assert h.debug_report.ok


def test_node_without_kernel_is_checked_on_reference_only_and_listed():
    f = _fn(NoKernel(), DebugMode(), lt.dvector("x"))
    np.testing.assert_allclose(f(np.arange(3.0)), 2 * np.arange(3.0) + 1)
    report = f.debug_report
    assert report.ok
    assert [type(n.op) for n, _ in report.reference_only] == [NoKernel]
    assert "reference path" in str(report) and "NoKernel" in str(report)


def test_profile_records_every_node_and_only_completed_calls():
    from lucent.compile.profiling import ProfileStats

    x = lt.dvector("x")
    f = lucent.function([x], lt.exp(x).sum() * 2, mode=DebugMode(), profile=ProfileStats(message="dm"))
    assert f(np.arange(3.0)) == pytest.approx(2 * np.exp(np.arange(3.0)).sum())
    profile = f.profile
    assert profile.fgraph is f.maker.fgraph  # attached: memory figures need the schedule
    assert profile.calls == 1 and profile.input_bytes == 3 * 8
    assert all(row["runs"] == 1 for row in profile.as_rows())
    assert "DebugMode" in profile.how_measured
    with pytest.raises(TypeError):
        f(np.ones((2, 2)))  # refused before the linker runs
    h = lucent.function([x], WrongForLarge()(x), mode=DebugMode(), profile=True)
    h(np.ones(2))
    with pytest.raises(BadThunkOutput):
        h(np.full(2, 20.0))
    assert h.profile.calls == 1 and h.profile.failed_calls == 1
    with pytest.raises(ValueError, match="already profiles another"):
        lucent.function([x], x * 3, mode=DebugMode(), profile=profile)


class KernelDoesNotCompile(_Unary):
    pass


@numba_njit
def _does_not_compile(x):
    return x.no_such_attribute


@numba_funcify.register(KernelDoesNotCompile)
def _(op, node=None, **kwargs):
    return _does_not_compile


def test_kernel_failing_to_compile_is_reference_only_not_a_problem():
    f = _fn(KernelDoesNotCompile(), DebugMode(), lt.dvector("x"))
    np.testing.assert_allclose(f(np.arange(3.0)), 2 * np.arange(3.0) + 1)
    report = f.debug_report
    assert report.ok
    [(node, reason)] = report.reference_only
    assert isinstance(node.op, KernelDoesNotCompile) and "does not compile" in reason
