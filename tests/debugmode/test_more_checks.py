"""DebugMode's shape, pre-allocation, rerun and stride checks, each catching a purpose-built fault.

Every faulty op is its own class (Numba registrations are global). Each
test checks the problem's class, the node and the path it blames.
"""

import warnings

import numpy as np
import pytest

pytest.importorskip("numba")

import lucent  # noqa: E402
import lucent.tensor as lt  # noqa: E402
from lucent.debugmode import (  # noqa: E402
    BadShape,
    BadThunkOutput,
    DebugMode,
    InvalidValueError,
    NonFiniteOutput,
    StrideMismatch,
)
from lucent.debugmode.preallocated import normalise_modes, output_layouts  # noqa: E402
from lucent.debugmode.rerun import alternate_order  # noqa: E402
from lucent.debugmode.shapes import blame  # noqa: E402
from lucent.graph.basic import Apply  # noqa: E402
from lucent.graph.op import Op  # noqa: E402
from lucent.link.numba.dispatch import numba_funcify, numba_njit  # noqa: E402


class _Double(Op):
    """``2 * x`` on a float64 vector, with ``infer_shape``; subclasses add one fault each."""

    __props__ = ()

    def make_node(self, x):
        x = lt.as_tensor_variable(x)
        return Apply(self, [x], [lt.dvector()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] * 2

    def infer_shape(self, fgraph, node, shapes):
        return [shapes[0]]


@numba_njit
def _double(x):
    return x * 2


@numba_njit
def _double_one_longer(x):
    out = np.zeros(x.shape[0] + 1)
    out[: x.shape[0]] = x * 2
    return out


class PerformOneLonger(_Double):
    def perform(self, node, inputs, out):
        out[0][0] = np.append(inputs[0] * 2, 0.0)


class KernelOneLonger(_Double):
    pass


class InferOneLonger(_Double):
    def perform(self, node, inputs, out):
        out[0][0] = np.append(inputs[0] * 2, 0.0)

    def infer_shape(self, fgraph, node, shapes):
        return [(shapes[0][0] + 2,)]


class NoKernelOneLonger(_Double):
    def perform(self, node, inputs, out):
        out[0][0] = np.append(inputs[0] * 2, 0.0)


numba_funcify.register(PerformOneLonger)(lambda op, node=None, **kw: _double)
numba_funcify.register(KernelOneLonger)(lambda op, node=None, **kw: _double_one_longer)
numba_funcify.register(InferOneLonger)(lambda op, node=None, **kw: _double_one_longer)


def _report(op, value=(1.0, 2.0, 3.0), **mode_args):
    x = lt.dvector("x")
    f = lucent.function([x], op(x), mode=DebugMode(on_error="report", **mode_args))
    f(np.array(value))
    return f.debug_report


@pytest.mark.parametrize(
    "op, blamed",
    [
        (PerformOneLonger(), "perform"),
        (KernelOneLonger(), "numba"),
        (InferOneLonger(), "infer_shape"),
        (NoKernelOneLonger(), "perform and infer_shape"),
    ],
    ids=["perform", "kernel", "infer_shape", "no-kernel"],
)
def test_the_statement_of_a_shape_that_disagrees_with_the_other_two_is_blamed(op, blamed):
    report = _report(op)
    shapes = [p for p in report if isinstance(p, BadShape)]
    assert len(shapes) == 1, str(report)
    problem = shapes[0]
    assert problem.path == blamed and problem.node.op is op and problem.output_index == 0
    assert "test_more_checks.py" in str(problem)  # the user's line
    # A wrong perform is not blamed on the (right) kernel as a value difference.
    if blamed == "perform":
        assert not any(isinstance(p, BadThunkOutput) for p in report)
    if blamed == "numba":
        assert problem.numba_shape == (4,) and problem.inferred_shape == (3,)


def test_blame_table():
    assert blame((3,), (3,), (3,)) is None
    assert blame((4,), (3,), (3,)) == "perform"
    assert blame((3,), (4,), (3,)) == "numba"
    assert blame((4,), (4,), (3,)) == "infer_shape"
    assert blame((2,), (4,), (3,)) == "all"
    assert blame((4,), None, (3,)) == "perform and infer_shape"
    assert blame((4,), (3,), None) is None


def test_shape_check_reads_values_that_infer_shape_uses():
    # reshape's infer_shape reads its shape argument's value.
    x = lt.dvector("x")
    s = lt.lvector("s")
    f = lucent.function([x, s], lt.reshape(x, s, ndim=2) * 2, mode=DebugMode())
    assert f(np.arange(6.0), np.array([2, 3])).shape == (2, 3)
    assert f.debug_report.ok


# ---------------------------------------------------------------------------
# Pre-allocated outputs: perform reusing its output cell wrongly
# ---------------------------------------------------------------------------
class ReusesCellPartly(_Double):
    """Reuses an output array of the right shape but writes only its first element."""

    def perform(self, node, inputs, out):
        (x,) = inputs
        z = out[0]
        if z[0] is None or z[0].shape != x.shape:
            z[0] = x * 2
        else:
            z[0][:1] = x[:1] * 2  # forgets the rest


class AssumesCellShape(_Double):
    """Writes into whatever array its output cell holds (no kernel: perform-only)."""

    def perform(self, node, inputs, out):
        (x,) = inputs
        z = out[0]
        if z[0] is None:
            z[0] = x * 2
        else:
            z[0][...] = x * 2


def test_preallocated_previous_output_catches_a_partial_write():
    report = _report(ReusesCellPartly(), check_preallocated_output=["previous"])
    [problem] = [p for p in report if isinstance(p, BadThunkOutput)]
    assert problem.path == "perform" and problem.layout == "previous"
    assert isinstance(problem.node.op, ReusesCellPartly)
    assert "pre-allocated" in str(problem)
    # Off by default: the same op passes.
    assert _report(ReusesCellPartly()).ok


def test_preallocated_wrong_size_catches_a_perform_only_op():
    report = _report(AssumesCellShape(), check_preallocated_output="wrong_size")
    assert not report.ok
    assert all(p.path == "perform" and p.layout.startswith("wrong_size") for p in report)
    assert [type(n.op) for n, _ in report.reference_only] == [AssumesCellShape]
    # Right-shaped buffers, whatever their layout, are fine for it.
    assert _report(AssumesCellShape(), check_preallocated_output="c_contiguous:f_contiguous:strided").ok


def test_preallocated_initial_uses_the_previous_calls_output():
    x = lt.dvector("x")
    f = lucent.function([x], ReusesCellPartly()(x), mode=DebugMode(
        on_error="report", check_preallocated_output=["initial"]))
    f(np.array([1.0, 2.0]))
    assert f.debug_report.ok  # nothing held yet
    f(np.array([3.0, 4.0]))
    assert [p.layout for p in f.debug_report] == ["initial"]


def test_builtin_ops_pass_every_preallocation():
    x = lt.dmatrix("x")
    y = lt.dvector("y")
    out = [lt.exp(x) + y, x.sum(axis=0), lt.dot(x, y), x.T[1:], lt.concatenate([x, x], axis=1)]
    f = lucent.function([x, y], out, mode=DebugMode(check_preallocated_output="ALL"))
    f(np.arange(6.0).reshape(2, 3), np.ones(3))
    f(np.arange(6.0).reshape(2, 3) + 1, np.ones(3))
    assert f.debug_report.ok, str(f.debug_report)


def test_preallocation_layouts():
    x = lt.dmatrix("x")
    node = lt.exp(x).owner
    ref = [np.ones((3, 4))]
    layouts = dict(output_layouts(node, ref, [None], normalise_modes("ALL"), 2))
    assert layouts["f_contiguous"][0].flags.f_contiguous
    assert layouts["strided(-2, 2)"][0].strides == (-2 * 4 * 2 * 8, 2 * 8)
    assert layouts["wrong_size(0, 1)"][0].shape == (3, 5)
    assert np.isnan(layouts["previous"][0]).all()
    with pytest.raises(ValueError, match="unknown mode"):
        normalise_modes("contiguous")


# ---------------------------------------------------------------------------
# Rerun: a node must give the same outputs on the same inputs
# ---------------------------------------------------------------------------
class CountsCalls(_Double):
    """Adds how many times it ran (hidden state): no kernel."""

    def __init__(self):
        self.calls = 0

    def perform(self, node, inputs, out):
        self.calls += 1
        out[0][0] = inputs[0] * 2 + self.calls


class RandomOnPurpose(_Double):
    nondeterministic = True

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] * 2 + np.random.random()


def test_node_that_keeps_state_is_caught_by_the_rerun():
    report = _report(CountsCalls())
    [problem] = list(report)
    assert isinstance(problem, BadThunkOutput) and problem.rerun and problem.path == "perform"
    assert "ran again on the same input values" in str(problem)
    # Switched off by the argument (or config.DebugMode__check_determinism).
    assert _report(CountsCalls(), check_determinism=False).ok
    with lucent.config.change_flags(DebugMode__check_determinism=False):
        assert _report(CountsCalls()).ok


def test_op_declaring_randomness_is_not_rerun():
    assert _report(RandomOnPurpose()).ok


def test_alternate_order_is_another_valid_order():
    x = lt.dvector("x")
    a, b, c = lt.exp(x), lt.sin(x), lt.cos(x)
    f = lucent.function([x], (a + b) * c, mode="FAST_COMPILE")
    order = f.maker.fgraph.toposort()
    other = alternate_order(f.maker.fgraph, order)
    assert set(other) == set(order) and other != order
    seen = set()
    for node in other:
        assert all(i.owner is None or i.owner in seen for i in node.inputs)
        seen.add(node)


# ---------------------------------------------------------------------------
# Strides
# ---------------------------------------------------------------------------
class KernelFortranOrder(Op):
    __props__ = ()

    def make_node(self, x):
        x = lt.as_tensor_variable(x)
        return Apply(self, [x], [lt.dmatrix()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] * 2

    def infer_shape(self, fgraph, node, shapes):
        return [shapes[0]]


@numba_njit
def _fortran_double(x):
    return np.asfortranarray(x * 2)


numba_funcify.register(KernelFortranOrder)(lambda op, node=None, **kw: _fortran_double)


def test_stride_mismatch_warns_or_raises_by_flag():
    x = lt.dmatrix("x")
    value = np.ones((2, 3))
    assert lucent.function([x], KernelFortranOrder()(x), mode=DebugMode())(value).shape == (2, 3)
    with pytest.raises(StrideMismatch) as info:
        lucent.function([x], KernelFortranOrder()(x), mode=DebugMode(require_matching_strides=2))(value)
    assert isinstance(info.value, TypeError) and info.value.path == "numba"
    assert info.value.perform_strides == (24, 8) and info.value.numba_strides == (8, 16)
    with lucent.config.change_flags(DebugMode__check_strides=1):
        f = lucent.function([x], KernelFortranOrder()(x), mode=DebugMode())
    with pytest.warns(UserWarning, match="strides"):
        f(value)
    with pytest.raises(ValueError, match="require_matching_strides"):
        DebugMode(require_matching_strides=3)


def test_check_isfinite_flag_and_pytensor_class():
    x = lt.dvector("x")
    with lucent.config.change_flags(DebugMode__check_finite=True):
        f = lucent.function([x], lt.log(x), mode=DebugMode())
    with pytest.raises(InvalidValueError) as info:
        f(np.array([-1.0]))
    assert isinstance(info.value, NonFiniteOutput)
    g = lucent.function([x], lt.log(x), mode=DebugMode(check_isfinite=False))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g(np.array([-1.0]))
    assert g.debug_report.ok
