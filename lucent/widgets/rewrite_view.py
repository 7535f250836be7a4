"""``RewriteView``: step through what the rewrites did to a compiled function.

``fn.maker.fgraph.rewrite_history`` lists every replacement the rewrites
made, in order. Read as text it answers "which rewrites ran"; a user asks
"what did this one do to my graph?". ``RewriteView`` shows one replacement
at a time: the rewrite's name, the neighbourhood of the change drawn
before and after side by side (nodes it removed in red, nodes it added in
green, nodes whose inputs it rewired outlined in blue), how many nodes the
whole graph had before and after, and, for a function compiled under
DebugMode, whether that replacement kept the values on the last call
(``lucent.debugmode.rewrite_check`` re-evaluates every recorded
replacement on each call). Replacements whose two sides print alike (a
merged duplicate, an op made in place, a refined type) say what changed.
One click shows the whole graph before rewriting next to the whole graph
after.

The past graphs are rebuilt from the history's event log
(``RewriteHistory.mirror``) only for the step shown, so a history of
thousands of replacements costs nothing until it is stepped through.

Inner graphs (a loop's body, an ``OpFromGraph``'s graph) are rewritten on
their own, each with its own history, linked from the outer history's
record of the replacement (``RewriteHistory.inner_histories``). When there
are any, a selector lists "outer graph" and each inner graph (nested ones
by their path, ``scan "outer" body > scan "inner" body``); choosing one
steps through that graph's rewrites, drawn the same way. A step that
brought in a rewritten inner graph offers a button to step into it. From
Python: ``view.graph = 'scan "rnn" body'`` (or its position in
``view.graph_labels``), ``view.show_inner(0)`` for the first inner graph.
DebugMode's verdicts are shown for the outer graph's steps.

The controls have stable class names for scripts and browser tests:
``lucent-rw-prev``, ``lucent-rw-next``, ``lucent-rw-slider``,
``lucent-rw-whole`` (the before/after toggle), the two panes
``lucent-rw-before`` and ``lucent-rw-after``, the graph selector
``lucent-rw-graph`` (shown only when there are inner graphs) and the
button stepping into a step's inner graph ``lucent-rw-inner``.
"""

from __future__ import annotations

import html
import pathlib

import anywidget
import traitlets

from lucent.compile.function_module import Function
from lucent.graph.dot import (
    MAX_DRAWN_NODES,
    Annotation,
    GraphDot,
    GraphvizNotFoundError,
    no_layout_note,
    responsive,
    text_fallback_html,
)
from lucent.graph.fg import FunctionGraph
from lucent.widgets.live import CellHook, stop_following

_JS = pathlib.Path(__file__).parent / "js"

REMOVED = Annotation(fill="#fde8e8", outline="#c62828", extra=("removed",))
ADDED = Annotation(fill="#e6f4ea", outline="#2e7d32", extra=("new",))
REWIRED = Annotation(outline="#1976d2", extra=("input rewired",))
REUSED = Annotation(outline="#2e7d32", extra=("now used",))

#: Drawings of this many steps are kept, so stepping back and forth does not lay them out again.
STEPS_KEPT = 32

#: Nodes drawn around one replacement, at most (the nearest to the change).
NEIGHBOURHOOD = 40

#: The label of the function's own graph in the graph selector.
OUTER = "outer graph"

VERDICTS = {
    "kept": "kept the values on the last call",
    "changed": "CHANGED the values on the last call",
    "unchecked": "not checkable (its graph needs values the inputs do not give)",
    "not yet": "not checked yet: call the function",
    "stopped": "not checked on the last call (the call stopped at an earlier problem)",
    "undone": "undone (a feature rejected the change)",
}


def _describe(obj):
    text = repr(obj)
    return f"{type(obj).__name__} {text if len(text) <= 80 else text[:77] + '...'}"


def _draw(drawing, annotations, fallback):
    """HTML of a drawing, or the graph as text under a one-line note."""
    if len(drawing.nodes) > MAX_DRAWN_NODES:
        note = f"{len(drawing.nodes)} nodes: too many to draw; the graph as text:"
    else:
        try:
            return responsive(drawing.svg(annotations))
        except GraphvizNotFoundError:
            note = no_layout_note()
        except Exception as e:  # a view must show something rather than fail
            note = f"The graph could not be drawn ({type(e).__name__}: {e}); the graph as text:"
    return f'<div class="lucent-rw-text">{text_fallback_html(fallback, note)}</div>'


def _annotate(drawing, originals, marks):
    """``{drawn id: Annotation}`` from ``{original Apply: Annotation}`` through ``originals``."""
    out = {}
    for node in drawing.nodes:
        mark = marks.get(originals.get(node, node))
        if mark is not None:
            out[drawing.ids[node]] = mark
    return out


class RewriteView(anywidget.AnyWidget):
    """Step through a function's rewrites: each replacement's before and after, side by side.

    Parameters
    ----------
    fn
        A compiled Function, or a FunctionGraph with a ``rewrite_history``.
    step
        The replacement shown first: its number in the history (default: the first shown).
    undone
        Also show the replacements that were undone because a feature
        rejected them (an in-place rewrite that would overwrite a value
        still needed is tried, then reverted). Default: left out.
    graph
        The graph shown first: ``"outer graph"`` (the default), an inner
        graph's label (``'scan "rnn" body'``) or a position in
        ``graph_labels``; ``step`` then numbers that graph's replacements.

    Traits (synced): ``title``; ``steps``, one dict per replacement
    (``step``, ``rewrite``, ``replaced``, ``by``, ``changes``: lines saying
    what changed when both sides print alike, ``verdict``: a key of
    ``VERDICTS`` or ``""`` outside DebugMode, ``inner``: the position in
    ``graphs`` of the inner graph the replacement brought in, or -1);
    ``graphs``, one dict per graph that can be stepped through (``label``,
    ``rewrites``), the outer graph first; ``graph_index``, the position
    of the graph shown in ``graphs``; ``index``, the 0-based
    position shown; ``whole``, show the whole graph before and after
    rewriting instead of one step; ``detail``, the numbers of what is shown
    (``before_nodes``, ``after_nodes``, ``removed``, ``added``, ``rewired``);
    ``before_html`` and ``after_html``, the two drawings; ``note``.
    """

    _esm = _JS / "rewrite_view.js"
    _css = _JS / "rewrite_view.css"

    title = traitlets.Unicode("").tag(sync=True)
    steps = traitlets.List(traitlets.Dict()).tag(sync=True)
    index = traitlets.Int(0).tag(sync=True)
    whole = traitlets.Bool(False).tag(sync=True)
    detail = traitlets.Dict().tag(sync=True)
    before_html = traitlets.Unicode("").tag(sync=True)
    after_html = traitlets.Unicode("").tag(sync=True)
    note = traitlets.Unicode("").tag(sync=True)
    graphs = traitlets.List(traitlets.Dict()).tag(sync=True)
    graph_index = traitlets.Int(0).tag(sync=True)

    def __init__(self, fn, *, step=None, undone=False, graph=None, **kwargs):
        if isinstance(fn, Function):
            self._fn, fgraph = fn, fn.maker.fgraph
        elif isinstance(fn, FunctionGraph):
            self._fn, fgraph = None, fn
        else:
            raise TypeError(f"RewriteView needs a compiled Function or a FunctionGraph; got {_describe(fn)}")
        self._fgraph = fgraph
        self._undone = undone
        outer = getattr(fgraph, "rewrite_history", None)
        # (label, history, the graph as rewritten) per graph that can be stepped through
        self._graphs = [(OUTER, outer, fgraph)] + [
            (label, h, h.fgraph) for label, h in (outer.inner_histories() if outer is not None else ())
        ]
        self._whole_cache = {}  # graph position -> (before_html, after_html, detail)
        self._drawn_steps = {}  # (graph position, step) -> (before_html, after_html, detail), the last STEPS_KEPT
        self._checkable = None
        self._report_seen = None
        self._cell_hook = None
        self._use_graph(0)
        super().__init__(**kwargs)
        name = getattr(self._fn, "name", None) or getattr(fgraph, "name", None)
        self.title = f"Rewrites of {name!r}" if name else "Rewrites"
        self.graphs = [
            {"label": label, "rewrites": len(h) if h is not None else 0} for label, h, _ in self._graphs
        ]
        if graph is not None:
            self._use_graph(self._graph_position(graph))
            self.graph_index = self._shown
        self.refresh()
        if self._records and step is not None:
            self.go(step)
        self.observe(self._on_change, names=["index", "whole"])
        self.observe(self._on_graph_change, names=["graph_index"])
        self._render()
        # Under DebugMode each call checks the replacements again: the verdicts follow the
        # last call, read when the cell that made it finishes (a failing call raises, so
        # the end of the cell is the moment that always comes).
        self._cell_hook = CellHook(self, "_after_cell") if self._is_debugmode() else None

    # --- public API ------------------------------------------------------------------
    @property
    def history(self):
        """The ``RewriteHistory`` shown (``None`` when the graph was never rewritten)."""
        return self._history

    @property
    def graph_labels(self):
        """The graphs that can be stepped through: ``"outer graph"``, then each inner graph's label."""
        return [label for label, _, _ in self._graphs]

    @property
    def graph(self):
        """The label of the graph shown (``"outer graph"`` or an inner graph's, as in ``graph_labels``).

        Set it to a label or a position in ``graph_labels`` to step through
        that graph's rewrites (from its first replacement).
        """
        return self._graphs[self._shown][0]

    @graph.setter
    def graph(self, which):
        self.show_graph(which)

    def show_graph(self, which):
        """Step through the rewrites of graph ``which`` (a label or a position in ``graph_labels``)."""
        self.graph_index = self._graph_position(which)

    def show_inner(self, k=0):
        """Step through the rewrites of inner graph number ``k``.

        ``k`` counts from 0 in ``graph_labels`` order, after the outer graph.
        """
        n = len(self._graphs) - 1
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < n:
            raise ValueError(
                f"inner graph number must be from 0 to {n - 1}, got {k!r}" if n
                else "this graph has no rewritten inner graph"
            )
        self.graph_index = k + 1

    def show_outer(self):
        """Step through the function's own graph's rewrites again."""
        self.graph_index = 0

    def _graph_position(self, which):
        labels = self.graph_labels
        if isinstance(which, int) and not isinstance(which, bool):
            if 0 <= which < len(labels):
                return which
            raise ValueError(f"graph position must be from 0 to {len(labels) - 1}, got {which}")
        if which in labels:
            return labels.index(which)
        raise ValueError(f"no graph {which!r}; the graphs are {labels}")

    def _use_graph(self, k):
        """Make graph ``k`` the one whose records are stepped through."""
        self._shown = k
        _, history, _ = self._graphs[k]
        self._history = history
        self._records = [r for r in history or () if self._undone or not r.reverted]
        self._hidden_undone = 0 if self._undone else sum(1 for r in history or () if r.reverted)

    @traitlets.validate("graph_index")
    def _valid_graph_index(self, proposal):
        return min(max(int(proposal["value"]), 0), len(getattr(self, "_graphs", ())) - 1)

    def _on_graph_change(self, change):
        self._use_graph(change["new"])
        with self.hold_trait_notifications():
            self.whole = False
            self.index = 0
        self.refresh()
        self._render()

    @property
    def record(self):
        """The ``RewriteRecord`` shown (``None`` without records)."""
        return self._records[self.index] if self._records else None

    @property
    def step(self):
        """The history's number of the replacement shown (0 without records)."""
        return self._records[self.index].step if self._records else 0

    def next(self):
        """Show the next replacement (stays on the last)."""
        self.whole = False
        self.index = min(self.index + 1, max(len(self._records) - 1, 0))

    def prev(self):
        """Show the previous replacement (stays on the first)."""
        self.whole = False
        self.index = max(self.index - 1, 0)

    def go(self, step):
        """Show replacement number ``step`` of the history (as ``str(history)`` numbers them)."""
        n = len(self._history or ())
        if isinstance(step, bool) or not isinstance(step, int) or not 1 <= step <= max(n, 1):
            raise ValueError(f"step must be a whole number from 1 to {n}, got {step!r}")
        for k, record in enumerate(self._records):
            if record.step == step:
                self.whole = False
                self.index = k
                return
        raise ValueError(
            f"step {step} was undone (a feature rejected it) and is not shown; "
            "RewriteView(fn, undone=True) shows the undone replacements too"
        )

    def show_whole(self, whole=True):
        """Show the whole graph before rewriting next to the whole graph after (``False``: back to the step)."""
        self.whole = bool(whole)

    def refresh(self):
        """Read the DebugMode verdicts of the function's last call again (done after each cell)."""
        self._report_seen = getattr(self._fn, "debug_report", None)
        verdicts = self._verdicts()
        positions = {id(h): k for k, (_, h, _) in enumerate(self._graphs)}
        self.steps = [
            {
                "step": r.step,
                "rewrite": r.rewrite,
                "replaced": _short(r.old_text),
                "by": _short(r.new_text),
                "changes": r.what_changed(),
                "verdict": "undone" if r.reverted else verdicts.get(r.step, ""),
                "inner": positions.get(id(r.inner_history), -1) if r.inner_history is not None else -1,
            }
            for r in self._records
        ]
        self.note = self._note(verdicts)

    def _after_cell(self):
        if getattr(self._fn, "debug_report", None) is not self._report_seen:
            self.refresh()

    def close(self):
        """Stop following the function's calls and close the widget."""
        stop_following(self, "_cell_hook")
        super().close()

    @traitlets.validate("index")
    def _valid_index(self, proposal):
        value = proposal["value"]
        return min(max(int(value), 0), max(len(getattr(self, "_records", ())) - 1, 0))

    # --- DebugMode -------------------------------------------------------------------
    def _is_debugmode(self):
        if self._fn is None:
            return False
        from lucent.debugmode.mode import DebugMode

        return isinstance(self._fn.maker.mode, DebugMode)

    def _verdicts(self):
        """``{step: verdict key}`` from the function's last DebugMode report (``{}`` outside DebugMode)."""
        if not self._records or self._shown != 0 or not self._is_debugmode():
            return {}
        if self._checkable is None:
            from lucent.debugmode.rewrite_check import RewriteCheck

            check = RewriteCheck(self._fgraph)
            pairs = {(id(c.old), id(c.new)) for c in check.records}
            self._checkable = {r.step for r in self._records if (id(r.old), id(r.new)) in pairs}
        checkable = self._checkable
        report = getattr(self._fn, "debug_report", None)
        out = {}
        changed = set()
        ran = False
        if report is not None:
            changed = {getattr(p, "step", None) for p in report.problems if p.kind == "BadOptimization"}
            ran = bool(report.finished or report.rewrites_checked or changed)
        for r in self._records:
            if r.step in changed:
                out[r.step] = "changed"
            elif r.step not in checkable:
                out[r.step] = "unchecked"
            elif report is None:
                out[r.step] = "not yet"
            elif not ran:
                out[r.step] = "stopped"
            else:
                out[r.step] = "kept"
        return out

    def _note(self, verdicts):
        if self._history is None:
            return "This graph was not rewritten (no rewrite history): nothing to step through."
        if not self._records:
            return "No rewrite changed the graph."
        if self._shown:
            return f"The rewrites of the {self.graph}, rewritten on its own after the outer graph's rewrites."
        undone = (
            f"{self._hidden_undone} undone replacement(s) not shown (undone=True shows them). "
            if self._hidden_undone else ""
        )
        return undone + self._verdict_note(verdicts)

    def _verdict_note(self, verdicts):
        if not verdicts:
            return ""
        bad = sorted(s for s, v in verdicts.items() if v == "changed")
        if bad:
            return f"DebugMode: {len(bad)} replacement(s) changed the values on the last call: step " + ", ".join(
                map(str, bad[:10])) + (" ..." if len(bad) > 10 else "")
        if any(v == "not yet" for v in verdicts.values()):
            return "DebugMode: call the function to check that each replacement keeps the values."
        return "DebugMode: every checked replacement kept the values on the last call."

    # --- drawing ---------------------------------------------------------------------
    def _on_change(self, change):
        self._render()

    def _render(self):
        if not self._records:
            self.detail, self.before_html, self.after_html = {}, "", ""
            return
        if self.whole:
            self._render_whole()
        else:
            record = self._records[self.index]
            key = (self._shown, record.step)
            cached = self._drawn_steps.pop(key, None)  # re-inserted: most recent last
            if cached is None:
                cached = self._render_step(record)
            self._drawn_steps[key] = cached
            if len(self._drawn_steps) > STEPS_KEPT:
                self._drawn_steps.pop(next(iter(self._drawn_steps)))
            with self.hold_sync():
                self.before_html, self.after_html, self.detail = cached

    def _render_step(self, record):
        """``(before_html, after_html, detail)`` of one replacement."""
        h = self._history
        removed, added, rewired = h.changed_nodes(record)
        t0, t1 = record.first_event, record.end_event
        before_nodes, after_nodes = h.nodes_at(t0), h.nodes_at(t1)
        old_owner, new_owner = record.old.owner, record.new.owner
        keep_before = removed | rewired | ({old_owner} if old_owner in before_nodes else set())
        keep_after = added | rewired | ({new_owner} if new_owner in after_nodes else set())
        marks_before = {n: REMOVED for n in removed}
        marks_before.update({n: REWIRED for n in rewired})
        marks_after = {n: ADDED for n in added}
        marks_after.update({n: REWIRED for n in rewired})
        if new_owner is not None and new_owner not in added and new_owner not in rewired:
            marks_after[new_owner] = REUSED
        replaces_output = any(node == "output" for node, *_ in h.events[t0:t1])
        before = self._neighbourhood(t0, keep_before, record.old if replaces_output else None)
        after = self._neighbourhood(t1, keep_after, record.new if replaces_output else None)
        return (
            self._drawn(before, marks_before, replaces_output),
            self._drawn(after, marks_after, replaces_output),
            {
                "whole": False,
                "step": record.step,
                "before_nodes": len(before_nodes),
                "after_nodes": len(after_nodes),
                "removed": len(removed),
                "added": len(added),
                "rewired": len(rewired),
            },
        )

    def _neighbourhood(self, t, keep, extra_output):
        """The copied graph around a change at time ``t``: the kept nodes, with the rest as placeholders."""
        h = self._history
        consumed = {h.input_at(n, i, t) for n in keep for i in range(len(n.inputs))}
        tops = [n.outputs[0] for n in keep if not any(o in consumed for o in n.outputs)]
        if extra_output is not None and extra_output not in tops:
            tops.append(extra_output)
        tops.sort(key=lambda v: str(v))
        return h.mirror(t, outputs=tops, keep=keep, limit=NEIGHBOURHOOD)

    def _drawn(self, mirrored, marks, show_outputs):
        """The drawing of a neighbourhood; its top nodes are not graph outputs, so no output
        boxes are drawn for them unless the replacement changed a graph output."""
        outputs, originals = mirrored
        if not outputs:
            return '<p class="lucent-rw-empty">(nothing)</p>'
        drawing = GraphDot(outputs)
        if not show_outputs:
            drawing.hidden = frozenset(i for i, kind in drawing.kinds.items() if kind == "output")
        return _draw(drawing, _annotate(drawing, originals, marks), outputs)

    def _render_whole(self):
        cached = self._whole_cache.get(self._shown)
        if cached is None:
            _, h, fgraph = self._graphs[self._shown]
            end = len(h.events)
            initial, final = h.nodes_at(0), h.nodes_at(end)
            outputs, originals = h.mirror(0)
            before = GraphDot(outputs)
            after = GraphDot(fgraph)
            cached = self._whole_cache[self._shown] = (
                _draw(before, _annotate(before, originals, {n: REMOVED for n in initial - final}), outputs),
                _draw(after, _annotate(after, {}, {n: ADDED for n in final - initial}), fgraph),
                {
                    "whole": True,
                    "before_nodes": len(initial),
                    "after_nodes": len(final),
                    "removed": len(initial - final),
                    "added": len(final - initial),
                    "rewired": 0,
                },
            )
        with self.hold_sync():
            self.before_html, self.after_html, self.detail = cached

    # --- static forms ------------------------------------------------------------------
    def __repr__(self):
        n = len(self._records)
        where = f" of the {self.graph}" if self._shown else ""
        return (
            f"<RewriteView: {n} replacement{'' if n == 1 else 's'}{where}, "
            f"showing {'the whole graph' if self.whole else f'step {self.step}'}>"
        )

    def _repr_html_(self):
        if self._history is None:
            return f"<p>{html.escape(self.note)}</p>"
        return self._history._repr_html_()


def _short(text, limit=300):
    return text if len(text) <= limit else text[: limit - 3] + "..."


__all__ = ["OUTER", "RewriteView", "VERDICTS"]
