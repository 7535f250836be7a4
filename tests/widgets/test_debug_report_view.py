"""Tests of lucent/widgets/debug_report_view.py: DebugMode problems linked to their nodes in a GraphView.

The link between the list and the graph is a ``jslink`` (it runs in the
browser); here the tests check that both ends carry the same node ids and
that the link is set up between the right traits.
"""

import json
import types

import numpy as np
import pytest

import lucent
import lucent.tensor as lt

pytest.importorskip("anywidget")
pytest.importorskip("numba")
from lucent.graph.dot import layout_programs  # noqa: E402

if not layout_programs():
    pytest.skip("DebugReportView draws with a Graphviz layout program", allow_module_level=True)

import ipywidgets  # noqa: E402
from ipywidgets.widgets.widget_link import Link  # noqa: E402

from lucent.debugmode import BadOptimization, DebugMode, DebugModeError, DebugReport  # noqa: E402
from lucent.graph.basic import Apply  # noqa: E402
from lucent.graph.dot import PROBLEM_COLOR  # noqa: E402
from lucent.graph.op import Op  # noqa: E402
from lucent.link.numba.dispatch import numba_funcify, numba_njit  # noqa: E402
from lucent.widgets import DebugReportView  # noqa: E402
from tests.scan.test_debugmode import DoubleWrongAboveTen  # noqa: E402  (its Numba kernel is wrong above 10)


class OffByOneKernel(Op):
    """``2 * x``; its Numba kernel adds 1 (a deliberate bug; its own class, since kernels are global)."""

    __props__ = ()

    def make_node(self, x):
        x = lt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] * 2


@numba_njit
def _off_by_one(x):
    return x * 2 + 1.0


@numba_funcify.register(OffByOneKernel)
def _(op, node=None, **kwargs):
    return _off_by_one


def _broken(mode):
    x = lt.dmatrix("x")
    W = lucent.shared(np.ones((3, 2)), name="W")
    y = lt.tanh(OffByOneKernel()(lt.dot(x, W))).sum()
    return lucent.function([x], y, mode=mode, name="broken")


def _faulty_id(view, fn):
    (node,) = [n for n in fn.maker.fgraph.apply_nodes if isinstance(n.op, OffByOneKernel)]
    return view.graph_view.node_id(node)


def test_a_debugmode_function_lists_its_problems_linked_to_the_node():
    fn = _broken(DebugMode(on_error="report"))
    fn(np.ones((2, 3)))
    view = DebugReportView(fn)
    ident = _faulty_id(view, fn)
    assert isinstance(view, ipywidgets.VBox)
    assert view.children == (view.problem_list, view.graph_view)
    (problem,) = view.problem_list.problems
    assert problem["kind"] == "BadThunkOutput" and problem["node_id"] == ident
    assert problem["node_label"] == "OffByOneKernel" and problem["index"] == 1
    assert "OffByOneKernel" in problem["summary"]
    labels = [label for label, _ in problem["sections"]]
    assert "node" in labels and "difference" in labels
    assert not view.problem_list.ok
    assert view.problem_list.headline.startswith("DebugMode: 1 problem(s) found")
    assert view.problem_list.coverage[0].startswith("Nodes run:")
    # The faulty node is red in the graph, and lists the problem.
    assert PROBLEM_COLOR in view.graph_view.svg
    assert view.graph_view.nodes[ident]["problems"][0]["kind"] == "BadThunkOutput"
    json.dumps(view.problem_list.get_state(), allow_nan=False)


def test_the_list_and_the_graph_are_linked_on_the_node_id():
    fn = _broken(DebugMode(on_error="report"))
    fn(np.ones((2, 3)))
    view = DebugReportView(fn)
    link = view._link
    assert isinstance(link, Link)  # what jslink makes: it runs in the browser
    assert link.source == (view.problem_list, "selected") and link.target == (view.graph_view, "selected")
    ident = view.select_problem(1)
    assert ident == _faulty_id(view, fn) and view.graph_view.selected == ident
    with pytest.raises(IndexError, match="numbered from 1"):
        view.select_problem(2)


def test_a_raising_call_leaves_its_report_on_the_function():
    fn = _broken("DebugMode")
    with pytest.raises(DebugModeError):
        fn(np.ones((2, 3)))
    view = DebugReportView(fn)
    assert view.problem_list.problems[0]["node_id"] == _faulty_id(view, fn)
    assert "the call stopped early" in view.problem_list.headline


def test_a_function_not_yet_called_waits_for_its_report():
    fn = _broken(DebugMode(on_error="report"))
    view = DebugReportView(fn)
    assert view.problem_list.problems == [] and "no call yet" in view.problem_list.headline
    fn(np.ones((2, 3)))
    assert len(view.problem_list.problems) == 1
    assert PROBLEM_COLOR in view.graph_view.svg


def test_a_raising_call_is_read_when_the_cell_ends(monkeypatch):
    IPython = pytest.importorskip("IPython")
    from IPython.core.events import EventManager, available_events

    shell = types.SimpleNamespace()
    shell.events = EventManager(shell, available_events)
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    fn = _broken("DebugMode")
    view = DebugReportView(fn)
    with pytest.raises(DebugModeError):
        fn(np.ones((2, 3)))
    assert view.problem_list.problems == []
    shell.events.trigger("post_run_cell", None)
    assert len(view.problem_list.problems) == 1 and PROBLEM_COLOR in view.graph_view.svg
    view.close()
    assert shell.events.callbacks["post_run_cell"] == []


def test_a_report_with_a_graph_or_alone():
    fn = _broken(DebugMode(on_error="report"))
    fn(np.ones((2, 3)))
    report = fn.debug_report
    with_graph = DebugReportView(report, graph=fn.maker.fgraph)
    assert with_graph.problem_list.problems[0]["node_id"] == _faulty_id(with_graph, fn)
    # Alone: the function that ran the nodes is found, so its whole graph is drawn.
    alone = DebugReportView(report)
    assert alone.graph_view.function is fn
    assert alone.problem_list.problems[0]["node_id"] == _faulty_id(alone, fn)


def test_a_report_whose_function_is_gone_draws_the_faulty_nodes(monkeypatch):
    from lucent.compile import watch

    fn = _broken(DebugMode(on_error="report"))
    fn(np.ones((2, 3)))
    monkeypatch.setattr(watch, "_all_functions", set())
    view = DebugReportView(fn.debug_report)
    assert view.graph_view.function is None
    labels = [n["label"] for n in view.graph_view.nodes.values()]
    assert "OffByOneKernel" in labels and "Dot22" in labels  # back to the inputs
    assert view.problem_list.problems[0]["node_id"]


def test_a_debugmode_error_is_accepted():
    fn = _broken("DebugMode")
    try:
        fn(np.ones((2, 3)))
    except DebugModeError as e:
        error = e
    view = DebugReportView(error, graph=fn)
    assert view.problem_list.problems[0]["kind"] == "BadThunkOutput"


def test_problems_without_a_drawn_node_are_listed_without_a_link():
    fn = _broken(DebugMode(on_error="report"))
    fn(np.ones((2, 3)))
    report = DebugReport(n_nodes=3)
    report.add(list(fn.debug_report.problems))
    report.add([BadOptimization("rewrite 'fold' changed a value", [("rewrite", "fold")], node=None)])
    view = DebugReportView(report, graph=fn)
    first, second = view.problem_list.problems
    assert first["node_id"] and second["node_id"] == "" and second["kind"] == "BadOptimization"
    assert "1 not on a drawn node" in view.graph_view.status


def test_bad_arguments():
    a = lt.dvector("a")
    with pytest.raises(ValueError, match="mode='DebugMode'"):
        DebugReportView(lucent.function([a], a * 2, mode="FAST_COMPILE"))
    with pytest.raises(TypeError, match="DebugReport"):
        DebugReportView("report")
    fn = _broken(DebugMode(on_error="report"))
    with pytest.raises(TypeError, match="graph= only with a report"):
        DebugReportView(fn, graph=fn)
    with pytest.raises(ValueError, match="no problem tied to a node"):
        DebugReportView(DebugReport())


def _doubler(mode):
    x0 = lt.dscalar("x0")
    ys = lucent.scan(lambda h: DoubleWrongAboveTen()(h) + 0.0, outputs_info=[x0], n_steps=6,
                     name="doubler", return_updates=False)
    return lucent.function([x0], ys, mode=mode, name="doubler")


@pytest.mark.parametrize("on_error", ["report", "raise"])
def test_a_problem_inside_a_scan_opens_the_loop_at_its_step(on_error):
    fn = _doubler(DebugMode(on_error=on_error))
    if on_error == "raise":
        with pytest.raises(DebugModeError):
            fn(1.0)
    else:
        fn(1.0)
    view = DebugReportView(fn)
    (scan,) = [n for n in fn.maker.fgraph.apply_nodes if type(n.op).__name__ == "Scan"]
    scan_id = view.graph_view.node_id(scan)
    (problem,) = view.problem_list.problems
    # The outer graph: the scan in red, selected.
    assert problem["node_id"] == scan_id and view.graph_view.selected == scan_id
    assert view.graph_view.nodes[scan_id]["problems"] and view.graph_view.inner_path == []
    # 1, 2, 4, 8, 16: the kernel first goes wrong at step 4 (input 16).
    assert problem["step"] == 4 and problem["loop"] == 'scan "doubler"'
    assert problem["inner_id"].startswith(f"{scan_id}/")
    loop = view.loop_view
    assert view.children == (view.problem_list, view.graph_view, loop)
    assert "lucent-dr-loop" in loop._dom_classes
    assert loop.inner_path == [scan_id] and loop.selected == problem["inner_id"]
    assert loop.inner_step == (4, 6) and "t = 4" in loop.inner_note
    inner = loop.nodes[problem["inner_id"]]
    assert inner["op_class"] == "DoubleWrongAboveTen"
    assert inner["problems"][0]["step"] == 4 and PROBLEM_COLOR in loop.svg
    # the values of step 4: the body doubles 16
    assert inner["outputs"][0]["summary"]["mean"] == pytest.approx(32.0)
    link = view._loop_link
    assert link.source == (view.problem_list, "inner_selected") and link.target == (loop, "selected")
    loop.close_inner()
    view.select_problem(1)
    assert loop.inner_path == [scan_id] and loop.selected == problem["inner_id"]
    json.dumps(view.problem_list.get_state(), allow_nan=False)
