"""``GraphView``: a drawn graph you can click, with the last value of every node.

``dprint`` tells what a graph computes; ``GraphView`` shows it (the Graphviz
drawing of ``lucent.graph.dot``) and answers, for the node you click, the
questions asked while debugging: what is its op, its type and static
shape, what did it compute on the last call (shape, range, mean, NaN
count, a histogram), did DebugMode find it wrong, how much time and
memory does it take.

Where the values come from
--------------------------
A function compiled for the Numba path runs its whole graph as one
program and keeps no intermediate value. So after a call the view replays
the call's inputs through the graph on the Python path
(``lucent.compile.watch.replay``) and summarises every node's outputs as
the node runs (a later in-place node may overwrite them). The view learns
of calls made from any cell through ``watch_calls``.

Why replays are throttled
-------------------------
A training loop may call the function a thousand times a second, and a
replay costs about as much as a call on the Python path. A call is
replayed at once when the last replay is older than ``min_interval``
(0.5 s by default, stretched to five times the duration of the last
replay, so replaying never takes more than about a fifth of a loop's
time); a call that comes sooner is remembered (its inputs) and replayed
later, when the notebook cell finishes (IPython's ``post_run_cell`` event,
when running inside IPython) or on ``refresh()``. The view therefore
always ends showing the last call's values. No timer thread is used: it
would replay while the user's loop runs, and the end of the cell is when
the user looks.

DebugMode and profiles
----------------------
Nodes flagged by a ``DebugReport`` (``report=``, or ``fn.debug_report`` of a
function compiled with ``mode="DebugMode"``, re-read after each call and
after each cell, since a failing call raises instead of returning) are
outlined in red and list their problems. With a profile (``profile=`` or
``fn.profile``) each node shows its time and bytes, and ``color_by="time"``
or ``"bytes"`` fills nodes by their share. An opened loop or ``OpFromGraph``
shows its nested profile (``profile.inner_profiles``: times summed over the
steps of a call, runs counting the steps) and fills by shares within its own
inner graph, since the loop's box already holds its share of the function.

Reading a large graph
---------------------
A training step is drawn in parts (forward, backward, updates: see
``lucent.graph.dot_parts``); ``collapse_backward`` draws the gradient as
one box. ``group_by`` clusters nodes by the user's variable names or by
the line that created them. With ``fit_width`` (the width of the output
area in CSS pixels, which the browser sends), a drawing too wide to read
at that width is folded rather than shrunk: labels wrap onto more lines,
long rows wrap onto the next ones, and as a last resort the backward part
is collapsed (unless the user chose to expand it); ``fit_note`` says what
was folded.

Values across calls
-------------------
A view given a DebugMode report or a profile (or made for a function that
has one) shows the values of the call they recorded at once, by replaying
that call's inputs (``report.inputs``, ``profile.last_inputs``).
``follow(node)`` records the norm, mean and maximum of a node's value at
every call and the view draws them as sparklines; following a function
output costs nothing (the call returns it), following an inner node
replays every call on the Python path while it is followed.

Loops, inner graphs and branches
--------------------------------
A node whose op has an inner graph (a ``Scan``, an ``OpFromGraph``) is
drawn with a double border and a last line ``⊞ opens: loop body``; a click
on that line (or a double click, or the panel's Open button) shows its
inner graph, with the same panel per node and the values of the last step
of the last replayed call (``lucent.widgets.inner_graphs`` says how they
are found). A breadcrumb (``outer graph ▸ scan "rnn"``) goes back; a loop
inside the loop opens the same way. From Python: ``open_inner(node_or_id,
step=None)``, ``close_inner(all=False)``, the ``inner_path`` trait (the ids
opened, outermost first), ``inner_step`` (``(step, steps run)``). Inner
ids carry the path (``n7/n2``), so selecting one from anywhere opens its
graph. An ``ifelse`` has no inner graph: its box says which branch ran
and the nodes the call skipped are greyed, without values.

Stable class names for scripts and browser tests: a box that opens is a
``g.node.lucent-opens``; the breadcrumb bar ``lucent-gv-crumbs`` holds
``lucent-gv-crumb`` buttons (``data-depth``; the graph shown is
``lucent-gv-crumb-current``) and the ``lucent-gv-inner-note`` (the step
shown); the panel's open button is ``lucent-gv-open``, a problem's loop
step ``lucent-gv-step``.

All the state is in synced traits (``svg``, ``nodes``, ``selected``,
``color_by``, ``title``, ``status``, ``has_profile``, ``value_hint``,
``inner_path``, ``crumbs``, ``id_prefix``, ``inner_note``): the
view renders again after a kernel reconnect and from a notebook saved with
its widget state, and another widget can select a node with ``jslink`` on
``selected``. ``nodes`` maps each id to a dict: ``label``, ``kind``,
``op``, ``dprint``, ``outputs`` (``type_text``, ``shape``, ``summary`` of the
last value, see ``value_summary.summarize``), ``inputs``, ``problems``
(``kind``, ``summary``, ``step`` inside a loop), ``profile`` (time and
bytes), ``aliasing``, ``created_at``, and when they apply ``opens`` (the
title of the inner graph), ``branch`` (``taken``, ``not_run`` ids) and
``not_run``.
"""

from __future__ import annotations

import pathlib
import time

import anywidget
import traitlets

from lucent.compile.function_display import function_summary
from lucent.compile.function_module import Function
from lucent.compile.profiling import FEW_CALLS, format_bytes
from lucent.compile.watch import replay, watch_calls
from lucent.graph.basic import Apply, Variable
from lucent.graph.dot import (
    PROBLEM_COLOR,
    Annotation,
    GraphDot,
    GraphvizNotFoundError,
    function_output_names,
    no_layout_note,
    text_fallback_html,
)
from lucent.graph.fg import FunctionGraph
from lucent.widgets.follow import FollowCalls
from lucent.widgets.graph_fit import LEGIBLE_SCALE, FitsWidth, svg_width_pt
from lucent.widgets.inner_graphs import (
    InputCopies,
    branch_annotations,
    branch_entries,
    mark_openable,
    openable_markers,
    skipped_nodes,
)
from lucent.widgets.inner_navigation import OpensInnerGraphs
from lucent.widgets.live import CellHook, Throttle, stop_following
from lucent.widgets.node_entries import id_range, node_entries, search_text
from lucent.widgets.value_summary import safe_summarize as _summary, summarize

_JS = pathlib.Path(__file__).parent / "js"

COLOR_BY = ("", "time", "bytes")

GROUP_BY = ("", "name", "line")

#: Fill ramp for ``color_by``: from a near-white to a strong orange.
_RAMP = ((0xFF, 0xF7, 0xEC), (0xE6, 0x55, 0x0D))


def ramp_color(share):
    """The fill for a share in [0, 1] of the largest time or size (``#rrggbb``)."""
    share = min(max(float(share), 0.0), 1.0)
    lo, hi = _RAMP
    return "#" + "".join(f"{round(a + (b - a) * share):02x}" for a, b in zip(lo, hi))


def _seconds_text(seconds):
    if seconds >= 1:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} µs"


def profile_entries(profile, ids, scope=None):
    """``{id: profile entry}`` of a panel, for the nodes of ``profile`` that ``ids`` (``{node: id}``) names.

    ``scope`` (``scan "rnn"``) marks the nested profile of an opened inner
    graph: its times are summed over the steps of one outer call and its
    runs count the steps (``lucent.compile.profiling_inner``), and its
    percentages are of the time of that inner graph's nodes, so the entry
    says so rather than let them read as shares of the function.
    """
    if profile is None or not getattr(profile, "calls", 0):
        return {}
    out = {}
    for row in profile.as_rows():
        ident = ids.get(row["node"])
        if ident is None:
            continue
        calls = profile.calls
        out[ident] = {
            "time": row["time"],
            "time_per_call": row["time_per_call"],
            "time_median": row["time_median"],
            "timed_calls": row["timed_calls"],
            "time_percent": row["median_percent"],
            "bytes": row["bytes"],
            "output_bytes": row["output_bytes"],
            "runs": row["runs"],
            "calls": calls,
            "time_text": _seconds_text(row["time_median"]),
            "noisy": row["timed_calls"] < FEW_CALLS,
            "bytes_text": format_bytes(row["bytes"]),
            "note": row["note"],
        }
        if scope is not None:
            unit = "step" if getattr(profile, "unit", "step") == "step" else "run"
            last = getattr(profile, "steps_last_call", 0)
            out[ident].update({
                "scope": scope,
                "percent_of": f"time of the nodes inside {scope}",
                "runs_text": (f"{row['runs']} over {calls} call{'' if calls == 1 else 's'} of the function "
                              f"({last} {unit}{'' if last == 1 else 's'} in the last)"),
                "measured": (f"inside {scope}: time summed over the {unit}s of one call of the function; "
                             "bytes of one " + ("step" if unit == "step" else "run")),
            })
    return out


def _describe(obj):
    text = repr(obj)
    return f"{type(obj).__name__} {text if len(text) <= 80 else text[:77] + '...'}"


def _problems_of(report):
    """The problems of a DebugReport, a DebugModeError, or ``None``."""
    if report is None:
        return []
    problems = getattr(report, "problems", None)
    if problems is not None:
        return list(problems)
    if hasattr(report, "summary") and hasattr(report, "kind"):
        inner = getattr(report, "report", None)
        return list(inner.problems) if inner is not None else [report]
    raise TypeError(f"report must be a DebugReport or a DebugModeError, got {_describe(report)}")


class GraphView(OpensInnerGraphs, FitsWidth, FollowCalls, anywidget.AnyWidget):
    """A drawn graph: click a node to see its dprint, type, last value, problems and cost.

    Parameters
    ----------
    fn_or_variables
        A compiled Function (its rewritten graph ``fn.maker.fgraph`` is
        drawn, and its calls update the values), a FunctionGraph, a
        Variable or a list of Variables.
    report
        A DebugReport (or DebugModeError) whose nodes are outlined in red.
        Default: ``fn.debug_report`` for a DebugMode function, re-read
        after each call.
    profile
        A ProfileStats for time and bytes. Default: ``fn.profile``.
    color_by
        ``"time"`` or ``"bytes"``: fill nodes by their share (needs a
        profile); ``None`` or ``""``: no fill.
    min_interval
        Shortest time in seconds between two replays of a call (see the
        module docstring); 0 replays every call.
    hide_bookkeeping
        Leave the shape and fill nodes out of the drawing (the
        ``hide_bookkeeping`` trait, a checkbox in the view; see
        ``lucent.graph.dot.is_bookkeeping``).

    group_by
        ``"name"`` or ``"line"``: cluster the nodes by the user's variable
        names or by the line that created them (the ``group_by`` trait, a
        menu in the view); ``None`` or ``""``: no groups.
    collapse_backward
        Draw the nodes built by ``grad`` as one box (the trait of the same
        name, a checkbox in the view; clicking the box expands it).
    fit_width
        Fold the drawing to read at this width in CSS pixels (0: do not
        fold); the view in the browser sets it to the output area's width.

    The search box finds nodes by op, name, id or the line that created
    them (``find`` does the same in Python). ``follow(node)`` records a
    node's norm, mean and max at every call (see ``lucent.widgets.follow``).

    Without a Graphviz layout program (see ``lucent.graph.dot``), the view
    shows the graph as ``dprint`` text under a one-line note instead of the
    drawing; the details of each node stay available through ``select``.
    """

    #: The interval between replays is at least this many times the last replay's duration.
    REPLAY_STRETCH = 5

    _esm = _JS / "graph_view.js"
    _css = _JS / "graph_view.css"

    svg = traitlets.Unicode("").tag(sync=True)
    nodes = traitlets.Dict().tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    color_by = traitlets.Unicode("").tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)
    status = traitlets.Unicode("").tag(sync=True)
    has_profile = traitlets.Bool(False).tag(sync=True)
    value_hint = traitlets.Unicode("").tag(sync=True)
    hide_bookkeeping = traitlets.Bool(False).tag(sync=True)
    group_by = traitlets.Unicode("").tag(sync=True)
    collapse_backward = traitlets.Bool(False).tag(sync=True)
    has_parts = traitlets.Bool(False).tag(sync=True)
    fit_width = traitlets.Int(0).tag(sync=True)
    fit_note = traitlets.Unicode("").tag(sync=True)
    auto_collapsed = traitlets.Bool(False).tag(sync=True)
    expand_requests = traitlets.Int(0).tag(sync=True)
    follows = traitlets.Dict().tag(sync=True)
    follow_ids = traitlets.List(traitlets.Unicode()).tag(sync=True)
    can_follow = traitlets.Bool(False).tag(sync=True)
    inner_path = traitlets.List(traitlets.Unicode()).tag(sync=True)
    crumbs = traitlets.List(traitlets.Unicode()).tag(sync=True)
    id_prefix = traitlets.Unicode("").tag(sync=True)
    inner_note = traitlets.Unicode("").tag(sync=True)

    def __init__(self, fn_or_variables, *, report=None, profile=None, color_by=None, min_interval=0.5,
                 hide_bookkeeping=False, group_by=None, collapse_backward=False, fit_width=0, **kwargs):
        if not isinstance(min_interval, (int, float)) or isinstance(min_interval, bool) or min_interval < 0:
            raise ValueError(f"min_interval must be a number of seconds >= 0, got {min_interval!r}")
        source = fn_or_variables
        self._fn = source if isinstance(source, Function) else None
        if self._fn is None and not isinstance(source, (FunctionGraph, Variable, Apply, list, tuple)):
            raise TypeError(
                "GraphView needs a compiled Function, a FunctionGraph, a Variable or a list of Variables; "
                f"got {_describe(source)}"
            )
        if self._fn is not None:
            self._drawing = GraphDot(self._fn.maker.fgraph, output_names=function_output_names(self._fn))
        else:
            self._drawing = GraphDot(source)
        self._drawing.openable = openable_markers(self._drawing)
        self._source_fgraph = source if isinstance(source, FunctionGraph) else None
        self._own_report = report
        _problems_of(report)  # type check
        if profile is not None and not hasattr(profile, "as_rows"):
            raise TypeError(f"profile must be a ProfileStats, got {_describe(profile)}")
        self._own_profile = profile
        self.min_interval = float(min_interval)
        self._interval = self.min_interval
        self._values = {}          # id -> [summary per output]
        self._pending = None       # inputs of a call not replayed yet
        self._last_replay = float("-inf")
        self._calls_seen = 0
        self._call_replayed = 0
        self._replay_error = None
        self._report_seen = None
        self._annotations = None
        self._values_dirty = False  # a replay made for a followed node, not pushed yet
        self._history = {}         # id -> {"calls": [...], "norm": [...], "mean": [...], "max": [...]}
        self._svg_cache = {}
        self._levels = []          # the inner graphs opened, outermost first (``InnerLevel``)
        self._level_cache = {}     # path tuple -> InnerLevel, so reopening does not lay out again
        self._pinned = {}          # path tuple -> loop step shown instead of the last
        self._copies = InputCopies(())  # what the openable and branching nodes read in the last replay
        self._choices, self._skipped = {}, set()
        self._replays = 0
        self._located = (None, {})  # (report, locate_inner_problems of it)
        self._user_collapse = bool(collapse_backward)
        self._auto_collapsed = False
        super().__init__(**kwargs)
        self._follow_push = Throttle(self._push_follows, self.min_interval)
        self.can_follow = self._fn is not None
        self.title = self._title()
        self.value_hint = (
            "No value yet: values appear when a call of the function returns."
            if self._fn is not None
            else "Values are shown in a GraphView of a compiled Function (they come from its calls)."
        )
        self._static = self._static_info()
        self._constant_values()
        color_by = "" if color_by is None else color_by
        if color_by and self._profile() is None:
            raise ValueError(
                f"color_by={color_by!r} needs a profile: compile with lucent.function(..., profile=True) "
                "or pass profile=<ProfileStats>"
            )
        self.set_trait("color_by", color_by)
        self.observe(self._on_color_by, names="color_by")
        self.set_trait("hide_bookkeeping", bool(hide_bookkeeping))
        self._drawing.hidden = self._drawing.bookkeeping_ids() if hide_bookkeeping else frozenset()
        self.observe(self._on_hide_bookkeeping, names="hide_bookkeeping")
        group_by = "" if group_by is None else group_by
        self.set_trait("group_by", group_by)
        self._drawing.regroup(group_by or None)
        self.has_parts = "backward" in self._drawing.part_counts()
        self.set_trait("collapse_backward", bool(collapse_backward) and self.has_parts)
        self._drawing.collapsed = frozenset({"backward"}) if self.collapse_backward else frozenset()
        if not isinstance(fit_width, int) or isinstance(fit_width, bool) or fit_width < 0:
            raise ValueError(f"fit_width must be a width in pixels >= 0 (0: no fitting), got {fit_width!r}")
        self.set_trait("fit_width", fit_width)
        self.observe(self._on_layout, names=["group_by", "collapse_backward", "fit_width"])
        self.observe(self._on_follow_ids, names="follow_ids")
        self.observe(self._on_expand_request, names="expand_requests")
        self.observe(self._on_inner_path, names="inner_path")
        self.observe(self._on_selected, names="selected")
        self._recorded_call()
        self._render(force=True)
        self._report_seen = self._report()
        self._watch = watch_calls(self._fn, self._on_call) if self._fn is not None else None
        self._cell_hook = CellHook(self, "_after_cell") if self._fn is not None else None

    # --- what is drawn ---------------------------------------------------------------
    @property
    def drawing(self):
        """The ``GraphDot`` drawn (nodes, ids, DOT source)."""
        return self._drawing

    @property
    def function(self):
        return self._fn

    def _title(self):
        n = len(self._drawing.nodes)
        count = f"{n} node{'' if n == 1 else 's'}"
        if self._fn is not None:
            info = function_summary(self._fn)
            name = f"Function {info['name']!r}" if info["name"] else "Function"
            ins = ", ".join(s.split(":")[0] for s in info["inputs"])
            return f"{name}({ins}) · {info['mode']} · {count}"
        outs = ", ".join(str(v) for v in self._drawing.outputs[:3])
        more = ", ..." if len(self._drawing.outputs) > 3 else ""
        return f"Graph of {outs}{more} · {count}"

    def _static_info(self):
        """What never changes about each drawn node (label, op, types, dprint, inputs)."""
        return mark_openable(node_entries(self._drawing), self._drawing)

    def _constant_values(self):
        for ident, kind in self._drawing.kinds.items():
            if kind == "constant":
                self._values[ident] = [summarize(self._drawing.objects[ident].data)]

    # --- the sources of annotations ------------------------------------------------
    def _report(self):
        if self._own_report is not None:
            return self._own_report
        if self._fn is not None:
            return self._fn.debug_report
        return None

    def _profile(self):
        if self._own_profile is not None:
            return self._own_profile
        if self._fn is not None:
            return getattr(self._fn, "profile", None)
        return None

    def _problems_by_id(self):
        """``({id: [problem dicts]}, number of problems not on a drawn node)``."""
        by_id, elsewhere = {}, 0
        for problem in _problems_of(self._report()):
            node = getattr(problem, "node", None)
            ident = self._drawing.ids.get(node) if node is not None else None
            if ident is None:
                elsewhere += 1
                continue
            by_id.setdefault(ident, []).append(
                {"kind": problem.kind, "summary": problem.summary, "path": getattr(problem, "path", None)}
            )
        return by_id, elsewhere

    def _profile_by_id(self):
        return profile_entries(self._profile(), self._drawing.ids)

    def _inner_profile_by_id(self, level, child):
        """The profile entries of ``level``'s inner nodes, from its nested profile ``child`` (or ``{}``)."""
        if child is None:
            return {}
        ids = {profiled: level.prefix + level.drawing.ids[drawn] for drawn, profiled in level.profiled(child).items()}
        return profile_entries(child, ids, scope=level.title)

    # --- building the state ----------------------------------------------------------
    def _render(self, force=False):
        """Recompute annotations; render the SVG again if they changed; push ``nodes``."""
        self._run_levels()
        drawing, static_entries, values, _, prefix = self._shown()
        level = self._levels[-1] if self._levels else None
        if level is None:
            problems, elsewhere = self._problems_by_id()
            profile = self._profile_by_id()
            choices, skipped = self._choices, self._skipped
        else:
            problems, elsewhere = self._inner_problems_by_id(level), 0
            child = self._inner_profiles()[-1]
            profile = self._inner_profile_by_id(level, child)
            choices, skipped = level.choices, level.skipped
        annotations = branch_annotations(drawing, choices, skipped)
        for ident, found in problems.items():
            kinds = sorted({p["kind"] for p in found})
            local = ident[len(prefix):]
            before = annotations.get(local, Annotation())
            annotations[local] = Annotation(fill="#fde8e8", outline=PROBLEM_COLOR,
                                            extra=tuple(before.extra) + tuple(f"problem: {k}" for k in kinds))
        key = self.color_by
        if key and profile:
            field = "time_median" if key == "time" else "bytes"
            top = max((p[field] for p in profile.values()), default=0) or 0
            for ident, p in profile.items():
                share = p[field] / top if top > 0 else 0.0
                ident = ident[len(prefix):]
                note = annotations.get(ident, Annotation())
                line = (f"{p['time_text']}/call · {p['time_percent']:.0f}%" if key == "time" else p["bytes_text"])
                annotations[ident] = Annotation(
                    fill=ramp_color(share),
                    outline=note.outline,
                    extra=tuple(note.extra) + (line,),
                    font_color="#ffffff" if share > 0.6 else None,
                )
        signature = {k: (a.fill, a.outline, a.extra, a.font_color) for k, a in annotations.items()}
        branches = branch_entries(drawing, choices, skipped, prefix)
        with self.hold_sync():
            if force or signature != self._annotations:
                self._annotations = signature
                self.svg = self._drawing_markup(annotations)
            nodes = {}
            for ident, static in static_entries.items():
                entry = dict(static)
                entry["problems"] = problems.get(ident, [])
                entry["profile"] = profile.get(ident)
                summaries = values.get(ident[len(prefix):])
                if summaries is not None:
                    entry["outputs"] = [dict(o, summary=s) for o, s in zip(static["outputs"], summaries)]
                if ident in branches:
                    entry["branch"] = branches[ident]
                if drawing.objects.get(ident[len(prefix):]) in skipped:
                    entry["not_run"] = True
                nodes[ident] = entry
            self.nodes = nodes
            self.has_profile = self._profile() is not None
            self.inner_note = level.note() if level is not None else ""
            status = self._status_text(*self._problems_by_id())
            if level is not None:
                status += f" · {self.inner_note}" + self._inner_fill_note(level, key, profile)
            self.status = status

    def _drawing_markup(self, annotations):
        """The SVG drawing, or the graph as text under a one-line note when it cannot be laid out."""
        try:
            return self._fitted_svg(annotations)
        except GraphvizNotFoundError:
            note = no_layout_note()
        except Exception as e:  # a view must show something rather than fail
            note = f"The graph could not be drawn ({type(e).__name__}: {e}); the graph as text:"
        if self._levels:
            graph = self._levels[-1].node.op.fgraph
        else:
            graph = self._fn.maker.fgraph if self._fn is not None else self._drawing.outputs
        return f'<div class="lucent-gv-text">{text_fallback_html(graph, note)}</div>'

    @staticmethod
    def _inner_fill_note(level, key, profile):
        """What ``color_by`` fills in an opened level: shares within its graph, or nothing without its profile."""
        if not key:
            return ""
        if not profile:
            return f" · no {key} fill: {level.title} has no profile (not profiled, or it did not run)"
        return f" · fill: share of {key} within {level.title}"

    def _status_text(self, problems, elsewhere):
        parts = []
        recorded = getattr(self, "_recorded_from", None)
        if self._calls_seen == 0 and recorded:
            parts.append(f"values of the call the {recorded} recorded")
        elif self._fn is not None:
            if self._calls_seen == 0:
                parts.append("no value yet: no call has returned since the view was made")
            else:
                parts.append(f"values of call {self._call_replayed} of {self._calls_seen} seen")
                if self._pending is not None:
                    parts.append("newer call waiting (refresh() or end of the cell)")
        if self._replay_error:
            parts.append(f"replay failed: {self._replay_error}")
        if self._drawing.hidden:
            parts.append(f"{len(self._drawing.hidden)} shape/fill nodes hidden")
        n = sum(len(p) for p in problems.values()) + elsewhere
        if n:
            text = f"{n} DebugMode problem{'s' if n > 1 else ''}"
            if elsewhere:
                text += f" ({elsewhere} not on a drawn node)"
            parts.append(text)
        return " · ".join(parts)

    @traitlets.validate("color_by")
    def _valid_color_by(self, proposal):
        value = proposal["value"]
        if value not in COLOR_BY:
            raise traitlets.TraitError(
                f"color_by must be one of {', '.join(map(repr, COLOR_BY))} (no fill), got {value!r}"
            )
        return value

    def _on_color_by(self, change):
        self._render()

    def _on_hide_bookkeeping(self, change):
        for drawing in [self._drawing] + [level.drawing for level in self._level_cache.values()]:
            drawing.hidden = drawing.bookkeeping_ids() if change["new"] else frozenset()
        self._render(force=True)

    @traitlets.validate("group_by")
    def _valid_group_by(self, proposal):
        value = proposal["value"]
        if value not in GROUP_BY:
            raise traitlets.TraitError(f"group_by must be '' (no groups), 'name' or 'line', got {value!r}")
        return value

    def _on_expand_request(self, change):
        """The user clicked a collapsed part (or unticked 'collapse backward'): draw everything."""
        self._user_collapse = True
        if self.collapse_backward:
            self.collapse_backward = False  # renders through _on_layout
        else:
            self._render(force=True)

    def expand(self):
        """Draw the collapsed parts again, and stop fitting from collapsing them."""
        self._on_expand_request(None)

    def _on_layout(self, change):
        if change["name"] == "group_by":
            for drawing in [self._drawing] + [level.drawing for level in self._level_cache.values()]:
                drawing.regroup(change["new"] or None)
        elif change["name"] == "collapse_backward":
            if change["new"] and not self.has_parts:
                self.set_trait("collapse_backward", False)
                return
            self._user_collapse = True  # the user chose: fitting no longer collapses on its own
        self._render(force=True)

    # --- calls -----------------------------------------------------------------------
    def _on_call(self, fn, inputs, result):
        self._calls_seen += 1
        if inputs is not None:
            self._pending = (self._calls_seen, inputs)
        if self._history:
            self._record_follows(result)
        if time.monotonic() - self._last_replay >= self._interval:
            self._flush()

    def _recorded_call(self):
        """Show the values of the call a given report or profile recorded, without calling again."""
        if self._fn is None and self._own_report is None and self._own_profile is None:
            return
        for source, attr, what in ((self._report(), "inputs", "DebugMode report"),
                                   (self._profile(), "last_inputs", "profile")):
            inputs = getattr(source, attr, None) if source is not None else None
            if inputs is None:
                continue
            fgraph = getattr(source, "fgraph", None) or (
                self._fn.maker.fgraph if self._fn is not None else self._source_fgraph
            )
            if fgraph is None or len(inputs) != len(fgraph.inputs):
                continue
            self._replay(0, inputs, fgraph=fgraph)
            self._call_replayed = 0
            self._recorded_from = what
            return

    def _flush(self):
        """Replay the waiting call (if any) and push the new state."""
        pending, self._pending = self._pending, None
        if pending is not None:
            self._replay(*pending)
        self._values_dirty = False
        self._report_seen = self._report()
        self._render()

    def _replay(self, call_number, inputs, fgraph=None):
        start = time.monotonic()
        values = {}
        ids = self._drawing.ids
        fgraph = fgraph if fgraph is not None else self._fn.maker.fgraph
        copies = InputCopies(self._drawing.nodes)

        def on_node(node, outputs):
            ident = ids.get(node)
            if ident is not None:
                values[ident] = [_summary(v) for v in outputs]
            copies.on_node(node, outputs)

        try:
            copies.seed(fgraph.inputs, inputs)
            for var, value in zip(fgraph.inputs, inputs):
                values[ids[var]] = [_summary(value)]
            storage = replay(fgraph, inputs, on_node)
            for j, var in enumerate(fgraph.outputs):
                if var.owner is not None:
                    values[f"o{j}"] = [values[ids[var.owner]][var.index]]
                else:
                    values[f"o{j}"] = [_summary(storage[var][0])]
            self._replay_error = None
        except Exception as e:  # show what was computed before the failure
            self._replay_error = f"{type(e).__name__}: {e}"
        self._values.update(values)
        self._copies, self._replays = copies, self._replays + 1
        self._choices = copies.branch_choices()
        self._skipped = skipped_nodes(fgraph, self._choices)
        for node in self._skipped:  # the replay ran them; the call did not
            self._values.pop(ids.get(node), None)
        self._call_replayed = call_number
        self._last_replay = time.monotonic()
        if self.min_interval > 0:  # 0 asks for every call, whatever it costs
            self._interval = max(self.min_interval, self.REPLAY_STRETCH * (self._last_replay - start))

    def _after_cell(self):
        """End of an IPython cell: replay a waiting call, and re-read a report a failed call left."""
        if self._pending is not None or self._values_dirty or self._report() is not self._report_seen:
            self._flush()

    # --- public API ------------------------------------------------------------------
    def node_id(self, node):
        """The id (``"n3"``, ``"v0"``; ``"n7/n2"`` inside a loop) of an Apply node or variable.

        A computed variable has its node's id. A plain id names a node of
        the outer graph; a node of an opened inner graph gets its qualified
        id. ``KeyError`` when it is not in the graph (e.g. a node of the
        graph before rewriting).
        """
        if isinstance(node, str):
            if node in self._static:
                return node
            entries = self._static
            if "/" in node:
                try:
                    entries = self._levels_for(node.split("/")[:-1])[-1].static
                except ValueError as e:
                    raise KeyError(f"{node!r} is not a node id of this graph: {e}") from None
                if node in entries:
                    return node
            raise KeyError(f"{node!r} is not a node id of this graph; ids are {id_range(entries)}")
        try:
            return self._drawing.id_of(node)
        except KeyError:
            for level in reversed(self._levels):
                try:
                    return level.prefix + level.drawing.id_of(node)
                except KeyError:
                    continue
            raise

    def find(self, text):
        """Ids of the nodes of the graph shown whose op, label, id, output names or creation line contain ``text``.

        Case is ignored; the search box of the view matches the same way.
        """
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"find needs a non-empty text to look for, got {text!r}")
        needle = text.strip().lower()
        return [ident for ident, entry in self._shown()[1].items() if needle in search_text(entry)]

    def select(self, node_or_id):
        """Select (highlight and show the details of) an Apply node, a variable or a node id; ``None`` clears.

        An id inside an inner graph (``"n7/n2"``) opens that graph first.
        """
        self.selected = "" if node_or_id is None else self.node_id(node_or_id)
        return self.selected

    @property
    def selected_node(self):
        """The selected Apply node or variable (``None`` when nothing is selected)."""
        if not self.selected:
            return None
        if "/" not in self.selected:
            return self._drawing.objects.get(self.selected)
        path, local = self.selected.rsplit("/", 1)
        return self._levels_for(path.split("/"))[-1].drawing.objects.get(local)

    def refresh(self):
        """Show the newest state now: replay a waiting call, re-read the report and the profile."""
        self._flush()
        self._follow_push.flush_pending()

    def close(self):
        """Stop following the function's calls and close the widget."""
        stop_following(self, "_watch", "_cell_hook", "_follow_push")
        super().close()

    def __repr__(self):
        return f"<GraphView: {self.title}>"


__all__ = ["GraphView", "ramp_color", "COLOR_BY", "LEGIBLE_SCALE", "svg_width_pt"]
