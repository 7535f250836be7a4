"""Tests of lucent/compile/watch.py: being told of calls and shared-variable changes."""

import gc

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.compile.watch import replay, watch_calls, watch_shared


def _step(mode):
    W = lucent.shared(np.ones(3), name="W")
    x = lt.dvector("x")
    f = lucent.function([x], (W * x).sum(), updates={W: W - 0.5 * x}, mode=mode)
    return W, x, f


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_watch_shared_sees_function_updates_and_set_value(mode):
    W, x, f = _step(mode)  # compiled before the watch began
    seen = []
    watch = watch_shared(W, lambda v: seen.append(v.get_value()))
    f(np.ones(3))
    np.testing.assert_allclose(seen[-1], [0.5, 0.5, 0.5])
    W.set_value(np.arange(3.0))
    np.testing.assert_allclose(seen[-1], [0, 1, 2])
    W.zero()
    np.testing.assert_allclose(seen[-1], [0, 0, 0])
    g = lucent.function([x], x.sum(), updates={W: W + x}, mode=mode)  # compiled after
    g(np.ones(3))
    np.testing.assert_allclose(seen[-1], [1, 1, 1])
    assert len(seen) == 4
    watch.stop()
    f(np.ones(3))
    W.set_value(np.zeros(3))
    assert len(seen) == 4


def test_watch_shared_follows_clones_and_ignores_other_variables():
    W, x, f = _step("FAST_COMPILE")
    other = lucent.shared(np.zeros(2), name="other")
    seen = []
    watch_shared([W], lambda v: seen.append(v.name))
    other.set_value(np.ones(2))
    assert seen == []
    W.clone(name="W2").set_value(np.zeros(3))  # same container: same value
    assert seen == ["W"]


def test_failing_call_notifies_nobody():
    W, x, f = _step("FAST_COMPILE")
    seen, calls = [], []
    watch_shared(W, seen.append)
    watch_calls(f, lambda *a: calls.append(a))
    with pytest.raises(ValueError):
        f(np.ones(4))
    assert seen == [] and calls == []
    np.testing.assert_allclose(W.get_value(), np.ones(3))


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_watch_calls_gives_inputs_as_they_were_before_the_update(mode):
    W, x, f = _step(mode)
    calls = []
    watch_calls(f, lambda fn, inputs, result: calls.append((fn, inputs, result)))
    out = f(np.array([1.0, 2.0, 3.0]))
    (fn, inputs, result), = calls
    assert fn is f and result is out
    np.testing.assert_allclose(inputs[0], [1, 2, 3])
    np.testing.assert_allclose(inputs[1], [1, 1, 1])  # W before its update
    np.testing.assert_allclose(W.get_value(), [0.5, 0, -0.5])
    values = {}
    replay(f.maker.fgraph, inputs, lambda node, outs: values.update(zip(node.outputs, outs)))
    np.testing.assert_allclose(values[f.maker.fgraph.outputs[0]], out)
    np.testing.assert_allclose(values[f.maker.fgraph.outputs[1]], W.get_value())
    np.testing.assert_allclose(inputs[1], [1, 1, 1])  # replay works on copies


def test_unwatched_functions_keep_their_class():
    """Watching costs nothing per call: only watched functions get a wrapping class."""
    W, x, f = _step("FAST_RUN")
    g = lucent.function([x], x * 2)
    cls_f, cls_g = type(f), type(g)
    watch_shared(W, lambda v: None)
    assert type(g) is cls_g
    assert type(f) is not cls_f and issubclass(type(f), cls_f)
    np.testing.assert_allclose(f(np.ones(3)), 3.0)


def test_bound_method_callbacks_are_held_weakly():
    W, x, f = _step("FAST_COMPILE")

    class View:
        count = 0

        def on_change(self, var):
            View.count += 1

    view = View()
    watch = watch_shared(W, view.on_change)
    W.set_value(np.zeros(3))
    del view
    gc.collect()
    W.set_value(np.ones(3))
    assert View.count == 1
    assert not watch.active


def test_callback_errors_warn_and_do_not_break_the_call():
    W, x, f = _step("FAST_COMPILE")

    def broken(var):
        raise RuntimeError("view broke")

    watch_shared(W, broken)
    with pytest.warns(UserWarning, match="view broke"):
        f(np.ones(3))
    np.testing.assert_allclose(W.get_value(), [0.5, 0.5, 0.5])


def test_bad_arguments():
    W, x, f = _step("FAST_COMPILE")
    with pytest.raises(TypeError, match="shared variables"):
        watch_shared([x], print)
    with pytest.raises(TypeError, match="compiled lucent Function"):
        watch_calls(W, print)
    with pytest.raises(TypeError, match="callable"):
        watch_shared(W, 3)


def test_setting_a_shared_input_through_fn_value_notifies():
    W, x, f = _step("FAST_COMPILE")
    seen = []
    watch_shared(W, lambda v: seen.append(v.get_value()))
    f.value[W] = np.full(3, 7.0)
    np.testing.assert_allclose(seen[-1], [7, 7, 7])


def test_watch_calls_without_inputs_copies_nothing():
    W, x, f = _step("FAST_COMPILE")
    calls = []
    watch_calls(f, lambda fn, inputs, result: calls.append(inputs), inputs=False)
    f(np.ones(3))
    assert calls == [None]
