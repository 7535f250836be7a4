"""``DebugMode__warn_input_not_reused``: an op declared in place that allocates anyway is reported.

A ``destroy_map`` (or ``view_map``) entry is a promise the in-place rewrites
plan memory around; an implementation that returns a new buffer keeps the
values right but breaks the promise. DebugMode logs a warning naming the
node, the path (perform or the Numba kernel) and the input, on whichever
path breaks it. Each op is its own class (kernel registrations are global).
"""

import logging

import numpy as np
import pytest

pytest.importorskip("numba")

import lucent  # noqa: E402
import lucent.tensor as lt  # noqa: E402
from lucent.debugmode import DebugMode  # noqa: E402
from lucent.graph.basic import Apply  # noqa: E402
from lucent.graph.op import Op  # noqa: E402
from lucent.link.numba.dispatch import numba_funcify, numba_njit  # noqa: E402

LOGGER = "lucent.compile.debugmode"


class _Double(Op):
    """``2 * x`` declared to work in place on its input."""

    __props__ = ()
    destroy_map = {0: [0]}

    def make_node(self, x):
        x = lt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        x = inputs[0]
        x *= 2
        out[0][0] = x

    def infer_shape(self, fgraph, node, shapes):
        return shapes


@numba_njit
def _double_in_place(x):
    x *= 2
    return x


@numba_njit
def _double_new(x):
    return x * 2


class DoublesInPlace(_Double):
    pass


@numba_funcify.register(DoublesInPlace)
def _(op, node=None, **kwargs):
    return _double_in_place


class KernelAllocates(_Double):
    pass


@numba_funcify.register(KernelAllocates)
def _(op, node=None, **kwargs):
    return _double_new


class BothAllocate(_Double):
    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] * 2


@numba_funcify.register(BothAllocate)
def _(op, node=None, **kwargs):
    return _double_new


class ViewCopies(_Double):
    """Declares its output a view of its input but returns a new array."""

    destroy_map = {}
    view_map = {0: [0]}

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] * 2


@numba_funcify.register(ViewCopies)
def _(op, node=None, **kwargs):
    return _double_new


def _warnings(caplog, op_class, value, **flags):
    x = lt.dvector("x")
    # the op destroys an intermediate (exp's output), not the caller's input
    f = lucent.function(
        [x], op_class()(lt.exp(x)), mode=DebugMode(optimizer=None, stability_patience=1),
        accept_inplace=True,
    )
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=LOGGER), lucent.config.change_flags(**flags):
        got = f(value)
    np.testing.assert_allclose(got, 2 * np.exp(value))
    assert f.debug_report.ok, str(f.debug_report)
    return [r.getMessage() for r in caplog.records if r.name == LOGGER]


def test_an_op_that_works_in_place_is_not_reported(caplog):
    assert _warnings(caplog, DoublesInPlace, np.arange(3.0)) == []


def test_a_kernel_that_allocates_is_reported_on_the_numba_path_only(caplog):
    messages = _warnings(caplog, KernelAllocates, np.arange(3.0))
    assert len(messages) == 1, messages
    assert "the Numba kernel" in messages[0]
    assert "KernelAllocates" in messages[0]
    assert "input 0 destroyed" in messages[0]


def test_both_paths_allocating_gives_one_warning_per_path(caplog):
    messages = _warnings(caplog, BothAllocate, np.arange(3.0))
    assert len(messages) == 2, messages
    assert "the Python reference (perform)" in messages[0]
    assert "the Numba kernel" in messages[1]


def test_a_declared_view_that_copies_is_reported_unless_it_has_one_element(caplog):
    messages = _warnings(caplog, ViewCopies, np.arange(3.0))
    assert len(messages) == 2 and all("input 0 viewed" in m for m in messages), messages
    assert _warnings(caplog, ViewCopies, np.arange(1.0)) == []


def test_the_flag_turns_the_warning_off(caplog):
    assert _warnings(caplog, BothAllocate, np.arange(3.0), DebugMode__warn_input_not_reused=False) == []
    assert lucent.config.DebugMode__warn_input_not_reused is True


def test_lucent_own_in_place_rewrites_reuse_their_inputs(caplog):
    x = lt.dvector("x")
    y = lt.dmatrix("y")
    outs = [lt.exp(lt.dot(y, x)) + 1, y.T * 2, lt.set_subtensor(lt.dot(y, x)[0], 1.0)]
    f = lucent.function([x, y], outs, mode=DebugMode(stability_patience=1))
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        f(np.arange(1, 5.0) / 10, np.ones((3, 4)))
    assert [r for r in caplog.records if r.name == LOGGER] == []
    assert any(getattr(n.op, "destroy_map", None) for n in f.maker.fgraph.apply_nodes)
