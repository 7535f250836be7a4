"""Tests of lucent/widgets/graph_view.py: the clickable graph with last values, problems and profile.

Widgets are made without a kernel (ipywidgets 8 allows it); what the
browser would receive is the synced traits, so the tests read them. A
call "from another cell" is simply a call of the function.
"""

import json
import re
import types

import traitlets

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.compile.mode import Mode

pytest.importorskip("anywidget")
from lucent.graph import dot as dotmod  # noqa: E402

if not dotmod.layout_programs():
    pytest.skip("GraphView draws with a Graphviz layout program ('dot' or 'graphviz-pure')", allow_module_level=True)

from lucent.graph.dot import PROBLEM_COLOR  # noqa: E402
from lucent.widgets import GraphView  # noqa: E402
from lucent.widgets.graph_view import ramp_color  # noqa: E402

#: FAST_RUN's rewrites on the Python path: Dot22 and fused Composites without compiling.
REWRITTEN_PY = Mode(linker="py", optimizer="fast_run")


def _layer(mode="FAST_COMPILE", **kwargs):
    x = lt.dmatrix("x")
    W = lucent.shared(np.arange(6.0).reshape(3, 2) / 6, name="W")
    b = lucent.shared(np.zeros(2), name="b")
    h = lt.sigmoid(lt.dot(x, W) + b)
    fn = lucent.function([x], h.sum(), mode=mode, name="layer", **kwargs)
    return fn, x, W, b, h


def _texts(svg):
    return re.findall(r"<text[^>]*>([^<]*)</text>", svg)


def _id_of_op(view, name):
    (ident,) = [i for i, n in view.nodes.items() if n["kind"] == "apply" and name in n["label"]][:1]
    return ident


@pytest.fixture
def shell(monkeypatch):
    """An IPython event manager standing in for a running kernel's shell."""
    IPython = pytest.importorskip("IPython")
    from IPython.core.events import EventManager, available_events

    fake = types.SimpleNamespace()
    fake.events = EventManager(fake, available_events)
    monkeypatch.setattr(IPython, "get_ipython", lambda: fake)
    return fake


# --- what is drawn ------------------------------------------------------------------

def test_function_graph_is_drawn_with_labels_and_node_info():
    fn, x, W, b, h = _layer(REWRITTEN_PY)
    view = GraphView(fn)
    texts = _texts(view.svg)
    assert "Dot22" in texts and "x" in texts and "W" in texts
    assert any("sigmoid" in t for t in texts)
    assert view.title == f"Function 'layer'(x) · {REWRITTEN_PY} · {len(fn.maker.fgraph.apply_nodes)} nodes"
    ids = set(view.nodes)
    assert {f"n{i}" for i in range(len(fn.maker.fgraph.apply_nodes))} <= ids and "v0" in ids and "o0" in ids
    dot22 = view.nodes[_id_of_op(view, "Dot22")]
    assert dot22["dprint"].startswith("Dot22 [id A] <TensorType(float64, (?, ?))>")
    assert dot22["outputs"][0]["type_text"] == "float64 (?, ?)"
    assert dot22["outputs"][0]["shape"] == ["?", "?"]
    assert [i["id"] for i in dot22["inputs"]] == ["v0", view.node_id(fn.maker.fgraph.inputs[1])]
    assert view.nodes["v0"]["kind"] == "input" and view.nodes["v0"]["label"] == "x"
    assert {n["kind"] for n in view.nodes.values()} >= {"apply", "input", "shared", "output"}
    json.dumps(view.nodes, allow_nan=False)


@pytest.mark.parametrize("kind", ["fgraph", "variable", "list"])
def test_graphs_without_a_function(kind):
    fn, x, W, b, h = _layer()
    source = {"fgraph": fn.maker.fgraph, "variable": h, "list": [h, h.sum()]}[kind]
    view = GraphView(source)
    assert "Sigmoid" in _texts(view.svg)
    assert view.function is None and "Values are shown" in view.value_hint
    assert view.status == ""


def test_bad_arguments():
    with pytest.raises(TypeError, match="compiled Function, a FunctionGraph, a Variable"):
        GraphView("x + y")
    fn, *_ = _layer()
    with pytest.raises(ValueError, match="min_interval"):
        GraphView(fn, min_interval=-1)
    with pytest.raises(TypeError, match="ProfileStats"):
        GraphView(fn, profile=object())
    with pytest.raises(TypeError, match="DebugReport"):
        GraphView(fn, report="broken")


def test_without_a_layout_program_the_view_shows_text(monkeypatch):
    monkeypatch.setattr(dotmod, "_find_program", lambda name: None)
    fn, x, W, b, h = _layer()
    view = GraphView(fn)
    assert "<svg" not in view.svg and "<pre>" in view.svg
    assert "No Graphviz layout program is installed" in view.svg and "Sigmoid" in view.svg.replace("sigmoid", "Sigmoid")
    assert view.select("n0") == "n0"  # the details still work
    fn(np.ones((2, 3)))
    assert view.nodes["n0"]["outputs"][0]["summary"] is not None
    view.close()


# --- selection ------------------------------------------------------------------------

def test_select_by_node_variable_or_id():
    fn, x, W, b, h = _layer()
    view = GraphView(fn)
    node = fn.maker.fgraph.toposort()[1]
    assert view.select(node) == "n1" and view.selected == "n1"
    assert view.selected_node is node
    assert view.select(node.outputs[0]) == "n1"
    assert view.select("v0") == "v0"
    assert view.select(None) == "" and view.selected_node is None


def test_node_id_errors_are_clear():
    fn, x, W, b, h = _layer()
    view = GraphView(fn)
    with pytest.raises(KeyError, match="not a node of this graph.*before rewriting"):
        view.node_id(lt.dvector("elsewhere") * 2)
    with pytest.raises(KeyError, match=r"'n99' is not a node id of this graph; ids are n0\.\.n"):
        view.node_id("n99")
    with pytest.raises(KeyError):
        view.select("zz")
    assert view.selected == ""


# --- last values -----------------------------------------------------------------------

def test_a_call_summarises_every_node_including_nan():
    fn, x, W, b, h = _layer()
    view = GraphView(fn, min_interval=0)
    assert all(o["summary"] is None for n in view.nodes.values() if n["kind"] != "constant" for o in n["outputs"])
    X = np.ones((4, 3))
    X[0, 0] = np.nan
    fn(X)
    nodes = view.nodes
    assert nodes["v0"]["outputs"][0]["summary"]["nan"] == 1
    sig = nodes[_id_of_op(view, "Sigmoid")]["outputs"][0]["summary"]
    assert sig["shape"] == [4, 2] and sig["dtype"] == "float64"
    assert sig["nan"] == 2 and sig["histogram"] is not None and sum(sig["histogram"]["counts"]) == 6
    expected = 1 / (1 + np.exp(-(np.ones((3, 3)) @ W.get_value())))
    assert sig["min"] == pytest.approx(expected.min())
    assert nodes["o0"]["outputs"][0]["summary"]["nan"] == 1
    assert view.status == "values of call 1 of 1 seen"
    json.dumps(nodes, allow_nan=False)


def test_values_of_a_numba_function_come_from_a_python_replay():
    pytest.importorskip("numba")
    x = lt.dvector("x")
    w = lucent.shared(np.ones(3), name="w")
    fn = lucent.function([x], (x * w).sum(), updates=[(w, w + x)], mode="FAST_RUN")
    view = GraphView(fn, min_interval=0)
    fn(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(w.get_value(), [2.0, 3.0, 4.0])  # the replay did not update w again
    w_id = view.node_id(fn.maker.fgraph.inputs[1])
    assert view.nodes[w_id]["outputs"][0]["summary"]["mean"] == pytest.approx(1.0)  # w as the call saw it
    assert view.nodes["o0"]["outputs"][0]["summary"]["max"] == pytest.approx(6.0)


def test_quick_calls_are_throttled_and_refresh_shows_the_last():
    fn, x, W, b, h = _layer()
    view = GraphView(fn, min_interval=60)
    pushes = []
    view.observe(lambda change: pushes.append(change["new"]), "nodes")
    for k in range(5):
        fn(np.full((2, 3), float(k)))
    assert len(pushes) == 1  # only the first call was replayed
    assert view.nodes["v0"]["outputs"][0]["summary"]["mean"] == 0.0
    view.refresh()
    assert view.nodes["v0"]["outputs"][0]["summary"]["mean"] == 4.0
    assert view.status == "values of call 5 of 5 seen"


def test_the_last_call_is_shown_when_the_cell_ends(shell):
    fn, x, W, b, h = _layer()
    view = GraphView(fn, min_interval=60)
    for k in range(3):
        fn(np.full((2, 3), float(k)))
    assert view.nodes["v0"]["outputs"][0]["summary"]["mean"] == 0.0
    shell.events.trigger("post_run_cell", None)
    assert view.nodes["v0"]["outputs"][0]["summary"]["mean"] == 2.0
    view.close()
    assert shell.events.callbacks["post_run_cell"] == []


def test_a_slow_replay_stretches_the_interval(monkeypatch):
    import time

    from lucent.widgets import graph_view

    fn, *_ = _layer()
    view = GraphView(fn, min_interval=0.01)
    real_replay = graph_view.replay

    def slow_replay(*args):
        time.sleep(0.05)
        return real_replay(*args)

    monkeypatch.setattr(graph_view, "replay", slow_replay)
    fn(np.ones((2, 3)))
    assert view._interval >= GraphView.REPLAY_STRETCH * 0.05
    fn(np.ones((2, 3)) * 2)  # sooner than the stretched interval: waits
    assert view.nodes["v0"]["outputs"][0]["summary"]["mean"] == 1.0


def test_close_stops_following_calls():
    fn, *_ = _layer()
    view = GraphView(fn, min_interval=0)
    view.close()
    fn(np.ones((2, 3)))
    assert view.nodes["v0"]["outputs"][0]["summary"] is None


# --- profiles -------------------------------------------------------------------------

def test_profile_time_and_bytes_in_node_info_and_colouring():
    fn, *_ = _layer(profile=True)
    with pytest.raises(ValueError, match="needs a profile"):
        GraphView(_layer()[0], color_by="time")
    view = GraphView(fn, min_interval=0)
    assert view.has_profile
    fn(np.ones((50, 3)))
    dot = view.nodes[_id_of_op(view, "Dot")]
    assert dot["profile"]["runs"] == 1 and dot["profile"]["bytes"] == 50 * 2 * 8
    assert dot["profile"]["time"] > 0 and dot["profile"]["bytes_text"] == "800 B"
    plain = view.svg
    view.color_by = "bytes"
    assert view.svg != plain
    assert ramp_color(1.0) in view.svg and "800 B" in _texts(view.svg)
    view.color_by = "time"
    assert ramp_color(1.0) in view.svg and any("/call" in t for t in _texts(view.svg))
    view.color_by = ""
    assert ramp_color(1.0) not in view.svg
    with pytest.raises(Exception, match="color_by must be one of"):
        view.color_by = "memory"
    assert view.color_by == ""


def test_ramp_runs_from_light_to_strong():
    assert ramp_color(0) == "#fff7ec" and ramp_color(1) == "#e6550d" and ramp_color(2) == "#e6550d"


# --- DebugMode ---------------------------------------------------------------------------

numba = pytest.importorskip("numba")

from lucent.graph.basic import Apply  # noqa: E402
from lucent.graph.op import Op  # noqa: E402
from lucent.link.numba.dispatch import numba_funcify, numba_njit  # noqa: E402


class WrongAboveTen(Op):
    """``2 * x``; its Numba kernel adds 1 where x > 10 (a deliberate bug, own class: kernels are global)."""

    __props__ = ()

    def make_node(self, x):
        x = lt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] * 2


@numba_njit
def _wrong_above_ten(x):
    out = x * 2
    flat = out.ravel()
    src = x.ravel()
    for i in range(flat.size):
        if src[i] > 10:
            flat[i] += 1.0
    return out


@numba_funcify.register(WrongAboveTen)
def _(op, node=None, **kwargs):
    return _wrong_above_ten


def test_debugmode_problems_are_red_and_follow_each_call():
    from lucent.debugmode import DebugMode

    x = lt.dvector("x")
    fn = lucent.function([x], lt.exp(WrongAboveTen()(x)).sum(), mode=DebugMode(on_error="report"))
    view = GraphView(fn, min_interval=0)
    ident = view.node_id([n for n in fn.maker.fgraph.apply_nodes if isinstance(n.op, WrongAboveTen)][0])
    fn(np.ones(3))
    assert view.nodes[ident]["problems"] == [] and PROBLEM_COLOR not in view.svg
    fn(np.array([1.0, 20.0]))
    (problem,) = view.nodes[ident]["problems"]
    assert problem["kind"] == "BadThunkOutput" and "WrongAboveTen" in problem["summary"]
    assert PROBLEM_COLOR in view.svg and "problem: BadThunkOutput" in _texts(view.svg)
    assert "1 DebugMode problem" in view.status
    fn(np.ones(3))
    assert view.nodes[ident]["problems"] == [] and PROBLEM_COLOR not in view.svg


def test_a_raising_debugmode_call_is_read_when_the_cell_ends(shell):
    from lucent.debugmode import DebugModeError

    x = lt.dvector("x")
    fn = lucent.function([x], WrongAboveTen()(x).sum(), mode="DebugMode")
    view = GraphView(fn)
    with pytest.raises(DebugModeError):
        fn(np.array([20.0]))
    assert PROBLEM_COLOR not in view.svg  # no successful call: nobody told the view yet
    shell.events.trigger("post_run_cell", None)
    assert PROBLEM_COLOR in view.svg
    flagged = [n for n in view.nodes.values() if n["problems"]]
    assert [n["label"] for n in flagged] == ["WrongAboveTen"]


def test_a_given_report_is_used():
    from lucent.debugmode import DebugMode

    x = lt.dvector("x")
    fn = lucent.function([x], WrongAboveTen()(x).sum(), mode=DebugMode(on_error="report"))
    fn(np.array([20.0]))
    report = fn.debug_report
    view = GraphView(fn.maker.fgraph, report=report)
    assert any(n["problems"] for n in view.nodes.values()) and PROBLEM_COLOR in view.svg


# --- finding and hiding ----------------------------------------------------------------

def test_find_and_hide_bookkeeping_nodes():
    x = lt.dmatrix("x")
    W = lucent.shared(np.ones((3, 2)), name="W")
    cost = lt.tanh(lt.dot(x, W)).sum()
    g = lucent.grad(cost, W)
    view = GraphView([cost, g])
    shapes = [i for i, e in view.nodes.items() if e["kind"] == "apply" and dotmod.is_bookkeeping(view.drawing.objects[i])]
    assert shapes, "the gradient leaves shape/fill nodes"
    assert view.find("tanh") and all("tanh" in view.nodes[i]["label"].lower() for i in view.find("TANH"))
    assert view.find("W") and set(view.find("n0")) >= {"n0"}
    with pytest.raises(ValueError, match="non-empty text"):
        view.find("  ")
    full = view.svg
    view.hide_bookkeeping = True
    assert set(shapes) <= set(view.drawing.hidden)
    titles = re.findall(r"<title>([^<]*)</title>", view.svg)
    assert not set(shapes) & set(titles) and "shape/fill nodes hidden" in view.status
    assert 'style="dotted"' in view.drawing.source() and len(view.svg) < len(full)
    assert set(view.nodes) == set(view.drawing.objects)  # hidden nodes keep their entries and ids
    view.hide_bookkeeping = False
    assert set(shapes) <= set(re.findall(r"<title>([^<]*)</title>", view.svg))
    view.close()


# --- large graphs: parts, groups, fitting -----------------------------------------------

def _train_step(mode=REWRITTEN_PY, **kwargs):
    rng = np.random.default_rng(2)
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    W0 = lucent.shared(rng.normal(size=(3, 4)), name="W0")
    W1 = lucent.shared(rng.normal(size=(4, 2)), name="W1")
    hidden = lt.tanh(lt.dot(x, W0))
    loss = ((lt.dot(hidden, W1) - y) ** 2).mean()
    loss.name = "loss"
    g0, g1 = lucent.grad(loss, [W0, W1])
    fn = lucent.function([x, y], loss, updates=[(W0, W0 - 0.1 * g0), (W1, W1 - 0.1 * g1)], mode=mode, **kwargs)
    data = (rng.normal(size=(5, 3)), rng.normal(size=(5, 2)))
    return fn, data


def test_backward_part_collapses_and_groups_change_the_drawing():
    fn, _ = _train_step()
    view = GraphView(fn)
    assert view.has_parts and "cluster_backward" in view.drawing.source()
    assert {n.get("part") for n in view.nodes.values() if n["kind"] == "apply"} == {"forward", "backward", "update"}
    view.collapse_backward = True
    assert "part_backward" in re.findall(r"<title>([^<]*)</title>", view.svg)
    view.collapse_backward = False
    assert "part_backward" not in view.svg
    view.group_by = "name"
    assert "loss" in _texts(view.svg)
    with pytest.raises(traitlets.TraitError, match="group_by must be"):
        view.group_by = "colour"
    plain = GraphView(_layer()[0])
    assert not plain.has_parts
    plain.collapse_backward = True  # nothing to collapse: stays off
    assert not plain.collapse_backward
    view.close()
    plain.close()


def test_fit_width_folds_instead_of_shrinking():
    from lucent.widgets.graph_view import LEGIBLE_SCALE, svg_width_pt

    fn, _ = _train_step()
    wide = svg_width_pt(GraphView(fn).svg)
    view = GraphView(fn, fit_width=500)
    width = svg_width_pt(view.svg)
    assert width < wide and view.fit_note.startswith("Folded to fit 500 px")
    assert width * 4 / 3 * LEGIBLE_SCALE <= 500 or "scroll" in view.fit_note
    assert view.auto_collapsed and "collapsed" in view.fit_note
    # Clicking the collapsed box (or unticking the box) expands it, and fitting leaves it expanded.
    view.expand_requests += 1
    assert not view.auto_collapsed and "part_backward" not in view.svg
    roomy = GraphView(fn, fit_width=4000)
    assert roomy.fit_note == "" and svg_width_pt(roomy.svg) == wide
    with pytest.raises(ValueError, match="fit_width"):
        GraphView(fn, fit_width=-1)
    for v in (view, roomy):
        v.close()


def test_composite_details_show_formula_and_expression_tree():
    fn, x, W, b, h = _layer(REWRITTEN_PY)
    view = GraphView(fn)
    fused = [n for n in view.nodes.values() if n.get("composite")]
    assert fused
    comp = fused[0]["composite"]
    assert "sigmoid" in comp["formula"] and "sigmoid" in comp["tree"].splitlines()[0]
    assert comp["inputs"] and fused[0]["label"] == f"Composite{{{comp['formula']}}}"
    view.close()


# --- values across calls ------------------------------------------------------------------

def test_follow_records_outputs_and_inner_nodes_at_every_call():
    fn, data = _train_step()
    view = GraphView(fn, min_interval=10)
    assert view.follow_outputs() == ["o0"]
    inner = view.find("Dot22")[0]
    assert view.follow(inner) == inner
    for _ in range(5):
        fn(*data)
    loss = view.history("o0")
    assert loss["calls"] == [1, 2, 3, 4, 5] and len(loss["norm"]) == 5
    assert loss["norm"][-1] < loss["norm"][0], "the loss goes down"
    dot = view.history(inner)
    assert len(dot["max"]) == 5 and all(v is not None for v in dot["max"])
    view.refresh()
    assert set(view.follows) == {"o0", inner} and view.follow_ids == ["o0", inner]
    assert len(view.follows["o0"]["norm"]) == 5 and view.follows["o0"]["label"] == "output 0: loss"
    # The browser's details toggle edits follow_ids.
    view.follow_ids = ["o0"]
    assert set(view.follows) == {"o0"}
    with pytest.raises(KeyError, match="not followed"):
        view.history(inner)
    view.unfollow("o0")
    assert view.follows == {}
    with pytest.raises(ValueError, match="constant"):
        view.follow([i for i, k in view.drawing.kinds.items() if k == "constant"][0])
    with pytest.raises(ValueError, match="compiled Function"):
        GraphView(fn.maker.fgraph).follow("n0")
    view.close()


def test_a_report_or_profile_shows_its_call_values_without_another_call():
    fn, x, W, b, h = _layer("FAST_COMPILE", profile=True)
    fn(np.full((2, 3), 0.5))
    assert fn.profile.last_inputs is not None
    view = GraphView(fn)
    assert view.nodes["v0"]["outputs"][0]["summary"]["mean"] == 0.5
    assert "values of the call the profile recorded" in view.status
    assert view.nodes[_id_of_op(view, "Sigmoid")]["outputs"][0]["summary"] is not None
    view.close()
    dm, *_ = _layer("DebugMode")
    dm(np.ones((2, 3)))
    report = dm.debug_report
    assert report.inputs is not None and report.inputs[0].shape == (2, 3)
    view = GraphView(dm.maker.fgraph, report=report)
    assert view.nodes["v0"]["outputs"][0]["summary"]["mean"] == 1.0
    assert "DebugMode report" in view.status
    view.close()
