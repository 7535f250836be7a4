"""``MonitorMode``: user hooks around every node of a compiled function."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.compile import MonitorMode
from lucent.compile.monitormode import detect_nan


def test_hooks_are_called_around_each_node_in_order():
    x, y = lt.dvectors("x", "y")
    calls = []

    def pre(fgraph, i, node, fn):
        calls.append(("pre", i, node))

    def post(fgraph, i, node, fn):
        calls.append(("post", i, np.array(fn.outputs[0][0])))

    f = lucent.function([x, y], lt.exp(x) * y + 1, mode=MonitorMode(pre, post))
    xv, yv = np.array([0.0, 1.0]), np.array([2.0, 3.0])
    np.testing.assert_allclose(f(xv, yv), np.exp(xv) * yv + 1)
    order = f.maker.fgraph.toposort()
    assert [c[:2] for c in calls if c[0] == "pre"] == [("pre", i) for i in range(len(order))]
    assert [c[2] for c in calls if c[0] == "pre"] == order
    assert len([c for c in calls if c[0] == "post"]) == len(order)
    np.testing.assert_allclose(calls[-1][2], np.exp(xv) * yv + 1)


def test_modes_derived_from_it_keep_the_hooks():
    x = lt.dvector("x")
    seen = []
    mode = MonitorMode(post_func=lambda fg, i, node, fn: seen.append(i)).excluding("fusion")
    assert isinstance(mode, MonitorMode)
    f = lucent.function([x], (x + 1) * 2, mode=mode)
    f(np.ones(2))
    assert seen == list(range(len(f.maker.fgraph.toposort())))
    clone = mode.clone(optimizer="fast_compile")
    assert isinstance(clone, MonitorMode) and clone.post_func is mode.post_func


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="its own"):
        MonitorMode(linker=lucent.compile.mode.get_mode("FAST_RUN").linker)
    with pytest.raises(TypeError, match="pre_func"):
        MonitorMode(pre_func=3)


def test_detect_nan_names_the_node(capsys):
    x = lt.dvector("x")
    f = lucent.function([x], lt.log(x), mode=MonitorMode(post_func=detect_nan))
    f(np.array([1.0, 2.0]))
    assert "NaN" not in capsys.readouterr().out
    f(np.array([-1.0, 2.0]))
    out = capsys.readouterr().out
    assert "*** NaN detected ***" in out and "Outputs" in out
