"""``DebugReportView``: the problems DebugMode found, each linked to its node in the graph.

A DebugMode report names faulty nodes in text (``Dot22(x, W)``); in a
graph of fifty nodes the user then has to find it. This view lists the
problems (kind, one-line summary, the details as expandable sections, then
what was and was not checked) above a ``GraphView`` of the graph with the
faulty nodes in red, and clicking a problem selects its node in the graph.

Why two widgets linked in the browser
-------------------------------------
The list is its own small widget (``ProblemList``) and the link is
``ipywidgets.jslink`` between its ``selected`` trait and the GraphView's:
the selection then travels from one model to the other in the browser,
without the kernel, so it works in a notebook reopened with its saved
widget state or after the kernel died. Selecting a node in the graph
likewise highlights its problems in the list.

Problems not tied to a drawn node (a ``BadOptimization`` compares
variables of the graph before rewriting) are listed without a link.

A problem inside a loop
-----------------------
When a ``Scan``'s kernel disagrees with its reference, DebugMode follows the
difference into the loop and names the step and the inner node
(``inner_location``). The outer graph then only shows the scan in red; so
the view adds a second ``GraphView`` (``loop_view``) with the scan's inner
graph opened, the inner node selected and in red, and the values of that
step (its inner graph is replayed from the step's values), and the list
names the step. The list's ``inner_selected`` is linked to the loop view's
``selected`` as ``selected`` is to the outer view's. The loop view's class
is ``lucent-dr-loop``; a problem's link into the loop is a
``lucent-dr-inner`` button.
"""

from __future__ import annotations

import pathlib

import anywidget
import ipywidgets
import traitlets

from lucent.compile.function_module import Function
from lucent.compile.watch import watch_calls
from lucent.graph.fg import FunctionGraph
from lucent.widgets.graph_view import GraphView, _describe, _problems_of
from lucent.widgets.live import CellHook, stop_following

_JS = pathlib.Path(__file__).parent / "js"


class ProblemList(anywidget.AnyWidget):
    """The problems of a DebugMode report as a list; clicking one sets ``selected`` to its node id.

    Traits (synced): ``headline``; ``problems``, one dict per problem
    (``index``, ``kind``, ``summary``, ``path``, ``node_id`` (``""`` when
    not on a drawn node), ``node_label``, ``sections`` as ``[label, text]``
    pairs, and for a problem inside a loop ``inner_id``, the qualified id of
    the inner node (``n7/n2``), ``step`` and ``loop``, its title);
    ``coverage`` and ``reference_only`` lines; ``ok``; ``selected``, the
    node id shared with the GraphView; ``inner_selected``, the inner node
    shared with the loop view.
    """

    _esm = _JS / "debug_report_view.js"
    _css = _JS / "debug_report_view.css"

    headline = traitlets.Unicode("").tag(sync=True)
    ok = traitlets.Bool(True).tag(sync=True)
    problems = traitlets.List(traitlets.Dict()).tag(sync=True)
    coverage = traitlets.List(traitlets.Unicode()).tag(sync=True)
    reference_only = traitlets.List(traitlets.Unicode()).tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    inner_selected = traitlets.Unicode("").tag(sync=True)


class DebugReportView(ipywidgets.VBox):
    """A DebugMode report (problem list) above a GraphView whose faulty nodes are red, linked by node.

    Parameters
    ----------
    report_or_fn
        A Function compiled with ``mode="DebugMode"`` (its ``debug_report``,
        re-read after each call, and its graph), a ``DebugReport``, or a
        ``DebugModeError`` (the report of the call it stopped).
    graph
        With a report: the Function or FunctionGraph it is about. Without
        it the graph is drawn from the faulty nodes' outputs back to the
        graph inputs.

    Attributes: ``problem_list`` (the ``ProblemList``), ``graph_view``
    (the ``GraphView``), ``loop_view`` (a second ``GraphView`` showing the
    inner graph of the loop holding a problem, ``None`` until one does),
    ``report``.
    """

    def __init__(self, report_or_fn, graph=None, **kwargs):
        source = report_or_fn
        self._fn = None
        if isinstance(source, Function):
            if graph is not None:
                raise TypeError("DebugReportView: give graph= only with a report; a Function brings its own graph")
            _check_debug_mode(source)
            self._fn = source
            self._given_report = None
        else:
            _problems_of(source)  # raises TypeError for anything else
            if source is None:
                raise TypeError("DebugReportView needs a DebugReport, a DebugModeError or a DebugMode Function, got None")
            self._given_report = source
        self.problem_list = ProblemList()
        self._view_args = ((self._fn,), {}) if self._fn is not None else ((_graph_for(source, graph),), {"report": source})
        self.graph_view = GraphView(*self._view_args[0], **self._view_args[1])
        self.loop_view = None
        self._loop_link = None
        self._link = ipywidgets.jslink((self.problem_list, "selected"), (self.graph_view, "selected"))
        super().__init__(children=[self.problem_list, self.graph_view], **kwargs)
        self.add_class("lucent-debug-report-view")
        self._report_shown = None
        self._update()
        if self._fn is not None:
            self._watch = watch_calls(self._fn, self._on_call)
            self._cell_hook = CellHook(self, "_after_cell")
        else:
            self._watch = self._cell_hook = None

    @property
    def report(self):
        """The report shown (``fn.debug_report`` of the last call for a Function)."""
        if self._fn is not None:
            return self._fn.debug_report
        return self._given_report

    def _on_call(self, fn, inputs, result):
        self._update()

    def _after_cell(self):
        # A DebugMode call that raises (on_error="raise") notifies nobody; its report is read here.
        if self.report is not self._report_shown:
            self._update()
            self.graph_view.refresh()

    def _update(self):
        report = self.report
        self._report_shown = report
        view = self.graph_view
        problems = []
        inside = []
        for k, problem in enumerate(_problems_of(report), 1):
            node = getattr(problem, "node", None)
            node_id = view.drawing.ids.get(node, "") if node is not None else ""
            located = view.inner_location(problem) if node_id and getattr(problem, "inner_location", None) else None
            if located is not None:
                inside.append(located)
            problems.append({
                "index": k,
                "kind": problem.kind,
                "summary": problem.summary,
                "path": getattr(problem, "path", None) or "",
                "node_id": node_id,
                "node_label": view.nodes[node_id]["label"] if node_id else "",
                "sections": [[str(label), str(text)] for label, text in getattr(problem, "sections", ())],
                "inner_id": located[0] if located else "",
                "step": located[1][-1] if located else None,
                "steps": located[1] if located else [],
                "loop": view.nodes[node_id].get("opens", "") if located else "",
                "step_text": ", ".join(f"t = {t}" for t in located[1]) if located else "",
            })
        lines = _report_lines(report)
        with self.problem_list.hold_sync():
            self.problem_list.problems = problems
            self.problem_list.ok = not problems
            self.problem_list.headline = lines["headline"]
            self.problem_list.coverage = lines["coverage"]
            self.problem_list.reference_only = lines["reference_only"]
        if inside:
            self._show_loop(*inside[0])

    def _show_loop(self, inner_id, steps):
        """Open the loop holding a problem in ``loop_view`` at the problem's step, its inner node selected."""
        outer_id = inner_id.split("/")[0]
        if self.loop_view is None:
            self.loop_view = GraphView(*self._view_args[0], **self._view_args[1])
            self.loop_view.add_class("lucent-dr-loop")
            self._loop_link = ipywidgets.jslink((self.problem_list, "inner_selected"), (self.loop_view, "selected"))
            self.children = [self.problem_list, self.graph_view, self.loop_view]
        self.loop_view.show_inner_node(inner_id, steps)
        if not self.graph_view.selected:
            self.graph_view.select(outer_id)

    def select_problem(self, index):
        """Select the node of problem ``index`` (1-based, as listed); returns its node id or ``""``.

        A problem inside a loop also opens the loop at its step in
        ``loop_view`` and selects the inner node there.
        """
        problems = self.problem_list.problems
        if not 1 <= index <= len(problems):
            raise IndexError(f"There are {len(problems)} problems, numbered from 1; got {index}")
        problem = problems[index - 1]
        node_id = problem["node_id"]
        if node_id:
            self.graph_view.select(node_id)
        if problem.get("inner_id"):
            self._show_loop(problem["inner_id"], problem["steps"])
        return node_id

    def close(self):
        """Stop following the function and close both widgets."""
        stop_following(self, "_watch", "_cell_hook")
        for name in ("_link", "_loop_link"):
            link = getattr(self, name, None)
            if link is not None:
                link.unlink()
        for name in ("problem_list", "graph_view", "loop_view"):
            part = getattr(self, name, None)
            if part is not None:
                part.close()
        super().close()

    def __repr__(self):
        return f"<DebugReportView: {self.problem_list.headline}>"


def _check_debug_mode(fn):
    from lucent.debugmode.mode import DebugMode

    if not isinstance(fn.maker.mode, DebugMode):
        raise ValueError(
            f"DebugReportView needs a function compiled with mode='DebugMode'; {fn!r} was not. "
            "Compile it again with lucent.function(..., mode='DebugMode') (or pass a DebugReport)."
        )


def _report_lines(report):
    if report is None:
        return {
            "headline": "DebugMode: no call yet. Call the function; its report appears here.",
            "coverage": [],
            "reference_only": [],
        }
    inner = getattr(report, "report", None) if not hasattr(report, "problems") else report
    if inner is None:  # a lone DebugModeError without its report
        return {"headline": f"DebugMode: {report.kind}.", "coverage": [], "reference_only": []}
    return {
        "headline": inner.headline(),
        "coverage": list(inner.coverage_lines()),
        "reference_only": [f"{node}: {reason}" for node, reason in inner.reference_only],
    }


def _graph_for(report, graph):
    """What to draw for a report: ``graph`` if given, else the faulty nodes' outputs."""
    if graph is not None:
        if isinstance(graph, (Function, FunctionGraph)):
            return graph
        raise TypeError(f"graph must be a Function or a FunctionGraph, got {_describe(graph)}")
    nodes = [p.node for p in _problems_of(report) if getattr(p, "node", None) is not None]
    fn = _function_running(nodes)
    if fn is not None:
        return fn
    outputs = []
    for problem in _problems_of(report):
        node = getattr(problem, "node", None)
        if node is not None:
            outputs.extend(v for v in node.outputs if v not in outputs)
    if not outputs:
        raise ValueError(
            "The report has no problem tied to a node, so there is no graph to draw from it; "
            "pass graph=<the Function or FunctionGraph> as well"
        )
    return outputs


def _function_running(nodes):
    """The live compiled function whose graph holds all of ``nodes``, if there is one.

    A report does not keep its graph, but every Function is registered
    (weakly) when it is made, so the one that ran these nodes can be found.
    """
    from lucent.compile.watch import live_functions

    if not nodes:
        return None
    for fn in live_functions():
        apply_nodes = fn.maker.fgraph.apply_nodes
        if all(node in apply_nodes for node in nodes):
            return fn
    return None


__all__ = ["DebugReportView", "ProblemList"]
