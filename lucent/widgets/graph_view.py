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
or ``"bytes"`` fills nodes by their share.

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

All the state is in synced traits (``svg``, ``nodes``, ``selected``,
``color_by``, ``title``, ``status``, ``has_profile``, ``value_hint``): the
view renders again after a kernel reconnect and from a notebook saved with
its widget state, and another widget can select a node with ``jslink`` on
``selected``. ``nodes`` maps each id to a dict: ``label``, ``kind``,
``op``, ``dprint``, ``outputs`` (``type_text``, ``shape``, ``summary`` of the
last value, see ``value_summary.summarize``), ``inputs``, ``problems``
(``kind``, ``summary``), ``profile`` (time and bytes), ``aliasing`` and
``created_at``.
"""

from __future__ import annotations

import pathlib
import time
from collections import Counter

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
    draws_random_numbers,
    function_output_names,
    no_layout_note,
    node_label,
    op_label,
    text_fallback_html,
    type_text,
)
from lucent.graph.dot_parts import composite_formula, composite_tree, input_names
from lucent.graph.fg import FunctionGraph
from lucent.widgets.follow import FollowCalls
from lucent.widgets.live import CellHook, Throttle, stop_following
from lucent.widgets.value_summary import safe_summarize as _summary, summarize

_JS = pathlib.Path(__file__).parent / "js"

COLOR_BY = ("", "time", "bytes")

GROUP_BY = ("", "name", "line")

#: Text is legible down to this scale of the drawing (11.5 pt labels: about 11.5 px).
LEGIBLE_SCALE = 0.75


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


class GraphView(FollowCalls, anywidget.AnyWidget):
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

    #: Layout time spent looking for a fold that fits, after which the narrowest found is shown.
    FIT_SECONDS = 15.0

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
        from lucent.graph.utils import format_trace
        from lucent.printing import debugprint

        drawing = self._drawing
        info = {}
        for ident, obj in drawing.objects.items():
            kind = drawing.kinds[ident]
            title, details, _ = drawing.describe(ident)
            entry = {"id": ident, "kind": kind, "label": " ".join(title), "problems": [], "profile": None}
            if kind == "apply":
                op = obj.op
                entry["op"] = str(op)
                entry["op_class"] = type(op).__name__
                entry["label"] = node_label(obj)
                entry["part"] = drawing.parts.get(ident)
                formula = composite_formula(obj)
                if formula is not None:
                    entry["composite"] = {
                        "formula": formula,
                        "tree": composite_tree(obj),
                        "inputs": [f"{n} = input {k}" for k, n in enumerate(input_names(obj))],
                    }
                entry["outputs"] = [_output_info(v) for v in obj.outputs]
                entry["inputs"] = [
                    {"id": drawing.producer_id(v), "text": f"{k}: {v} ({type_text(v.type)})"}
                    for k, v in enumerate(obj.inputs)
                ]
                entry["aliasing"] = _aliasing_text(op)
                entry["random"] = draws_random_numbers(obj)
                entry["created_at"] = format_trace(getattr(obj.tag, "trace", None))
                target = obj
            elif kind == "output":
                _, index, var = obj
                entry["outputs"] = [_output_info(var)]
                entry["inputs"] = [{"id": drawing.producer_id(var), "text": str(var)}]
                target = var
            else:
                entry["outputs"] = [_output_info(obj)]
                entry["inputs"] = []
                target = obj
            try:
                entry["dprint"] = debugprint(target, depth=3, print_type=True, file="str").rstrip()
            except Exception as e:  # a view must not fail on an op that prints badly
                entry["dprint"] = f"(dprint failed: {type(e).__name__}: {e})"
            info[ident] = entry
        return info

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
        profile = self._profile()
        if profile is None or not getattr(profile, "calls", 0):
            return {}
        out = {}
        for row in profile.as_rows():
            ident = self._drawing.ids.get(row["node"])
            if ident is None:
                continue
            out[ident] = {
                "time": row["time"],
                "time_per_call": row["time_per_call"],
                "time_median": row["time_median"],
                "timed_calls": row["timed_calls"],
                "time_percent": row["median_percent"],
                "bytes": row["bytes"],
                "output_bytes": row["output_bytes"],
                "runs": row["runs"],
                "calls": profile.calls,
                "time_text": _seconds_text(row["time_median"]),
                "noisy": row["timed_calls"] < FEW_CALLS,
                "bytes_text": format_bytes(row["bytes"]),
                "note": row["note"],
            }
        return out

    # --- building the state ----------------------------------------------------------
    def _render(self, force=False):
        """Recompute annotations; render the SVG again if they changed; push ``nodes``."""
        problems, elsewhere = self._problems_by_id()
        profile = self._profile_by_id()
        annotations = {}
        for ident, found in problems.items():
            kinds = sorted({p["kind"] for p in found})
            annotations[ident] = Annotation(fill="#fde8e8", outline=PROBLEM_COLOR, extra=tuple(f"problem: {k}" for k in kinds))
        key = self.color_by
        if key and profile:
            field = "time_median" if key == "time" else "bytes"
            top = max((p[field] for p in profile.values()), default=0) or 0
            for ident, p in profile.items():
                share = p[field] / top if top > 0 else 0.0
                note = annotations.get(ident, Annotation())
                line = (f"{p['time_text']}/call · {p['time_percent']:.0f}%" if key == "time" else p["bytes_text"])
                annotations[ident] = Annotation(
                    fill=ramp_color(share),
                    outline=note.outline,
                    extra=tuple(note.extra) + (line,),
                    font_color="#ffffff" if share > 0.6 else None,
                )
        signature = {k: (a.fill, a.outline, a.extra, a.font_color) for k, a in annotations.items()}
        with self.hold_sync():
            if force or signature != self._annotations:
                self._annotations = signature
                self.svg = self._drawing_markup(annotations)
            nodes = {}
            for ident, static in self._static.items():
                entry = dict(static)
                entry["problems"] = problems.get(ident, [])
                entry["profile"] = profile.get(ident)
                summaries = self._values.get(ident)
                if summaries is not None:
                    entry["outputs"] = [dict(o, summary=s) for o, s in zip(static["outputs"], summaries)]
                nodes[ident] = entry
            self.nodes = nodes
            self.has_profile = self._profile() is not None
            self.status = self._status_text(problems, elsewhere)

    def _drawing_markup(self, annotations):
        """The SVG drawing, or the graph as text under a one-line note when it cannot be laid out."""
        try:
            return self._fitted_svg(annotations)
        except GraphvizNotFoundError:
            note = no_layout_note()
        except Exception as e:  # a view must show something rather than fail
            note = f"The graph could not be drawn ({type(e).__name__}: {e}); the graph as text:"
        graph = self._fn.maker.fgraph if self._fn is not None else self._drawing.outputs
        return f'<div class="lucent-gv-text">{text_fallback_html(graph, note)}</div>'

    def _svg_with(self, annotations, wrap, max_row, collapsed, hint=None):
        drawing = self._drawing
        key = (repr(sorted((k, vars(a)) for k, a in annotations.items())), tuple(sorted(drawing.hidden)),
               drawing.group_by, wrap, max_row, tuple(sorted(collapsed)),
               None if hint is None or max_row is None else hash(frozenset(hint.items())))
        if key not in self._svg_cache:
            drawing.wrap, drawing.max_row, drawing.collapsed = wrap, max_row, frozenset(collapsed)
            drawing.row_hint = hint
            try:
                self._svg_cache[key] = drawing.svg(annotations)
            finally:
                drawing.wrap, drawing.max_row, drawing.row_hint = 34, None, None
            if len(self._svg_cache) > 24:
                self._svg_cache.pop(next(iter(self._svg_cache)))
        return self._svg_cache[key]

    def _fitted_svg(self, annotations):
        """The drawing, folded until it reads at ``fit_width`` (see the module docstring).

        Folds, in order: labels wrapped narrower, then the rows ``dot``
        made (read from the unfolded drawing) wrapped to as many boxes as
        the width holds, then the same with the backward part collapsed.
        """
        collapsed = {"backward"} if self.collapse_backward else set()
        self._drawing.collapsed = frozenset(collapsed)
        if not self.fit_width:
            self.fit_note = ""
            self.auto_collapsed = False
            return self._svg_with(annotations, 34, None, collapsed)
        # The widest drawing, in points, that shows at fit_width CSS pixels at the legible scale.
        limit = self.fit_width * 3 / 4 / LEGIBLE_SCALE
        choices = [collapsed]
        if self.has_parts and not self._user_collapse:
            counts = self._drawing.part_counts()
            choices += [c for c in ({"backward"}, {"backward", "update"}) if all(counts.get(p) for p in c)]
        deadline = time.monotonic() + self.FIT_SECONDS
        # First unfolded, each part choice in turn; then folded rows, least collapsed first.
        tries = []
        for parts in choices:
            plain = self._svg_with(annotations, 34, None, parts)
            tries.append((svg_width_pt(plain), plain, 34, None, parts))
            if tries[-1][0] <= limit or time.monotonic() > deadline:
                break
        if tries[-1][0] > limit:
            for (width, plain, _, _, parts) in list(tries):
                hint = GraphDot.rows_from_svg(plain)
                longest = max(Counter(r for r, _ in hint.values()).values(), default=1)
                per_row = max(2, int(limit * longest / max(width, 1.0)))
                for wrap, max_row in ((20, per_row), (14, max(2, per_row // 2))):
                    if time.monotonic() > deadline:
                        break
                    svg = self._svg_with(annotations, wrap, max_row, parts, hint)
                    tries.append((svg_width_pt(svg), svg, wrap, max_row, parts))
                    if tries[-1][0] <= limit:
                        break
                if tries[-1][0] <= limit or time.monotonic() > deadline:
                    break
        fitting = [t for t in tries if t[0] <= limit]
        best = fitting[0] if fitting else min(tries, key=lambda t: t[0])
        width, svg, wrap, max_row, parts = best
        folds = []
        if wrap != 34:
            folds.append(f"labels wrapped at {wrap} characters")
        if max_row:
            folds.append(f"rows of at most {max_row} boxes")
        self._auto_collapsed = parts != collapsed
        self.auto_collapsed = self._auto_collapsed
        if self._auto_collapsed:
            names = " and ".join(sorted(parts - collapsed))
            folds.append(f"{names} collapsed (click a collapsed box, or tick 'collapse backward', to choose)")
        self._drawing.collapsed = frozenset(parts)
        fits = width <= limit
        if folds:
            self.fit_note = f"Folded to fit {self.fit_width} px: " + ", ".join(folds) + (
                "." if fits else "; still wider: scroll sideways.")
        else:
            self.fit_note = "" if fits else f"Wider than {self.fit_width} px at a legible size: scroll sideways."
        return svg

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
        self._drawing.hidden = self._drawing.bookkeeping_ids() if change["new"] else frozenset()
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
            self._drawing.regroup(change["new"] or None)
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

        def on_node(node, outputs):
            ident = ids.get(node)
            if ident is not None:
                values[ident] = [_summary(v) for v in outputs]

        try:
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
        """The id (``"n3"``, ``"v0"``) of an Apply node or variable of the drawn graph.

        A computed variable has its node's id. ``KeyError`` when it is not
        in the graph (e.g. a node of the graph before rewriting).
        """
        if isinstance(node, str):
            if node in self._static:
                return node
            raise KeyError(
                f"{node!r} is not a node id of this graph; ids are {_id_range(self._static)}"
            )
        return self._drawing.id_of(node)

    def find(self, text):
        """Ids of the nodes whose op, label, id, output names or creation line contain ``text``.

        Case is ignored; the search box of the view matches the same way.
        """
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"find needs a non-empty text to look for, got {text!r}")
        needle = text.strip().lower()
        found = []
        for ident, entry in self._static.items():
            if needle in _search_text(entry):
                found.append(ident)
        return found

    def select(self, node_or_id):
        """Select (highlight and show the details of) an Apply node, a variable or a node id; ``None`` clears."""
        self.selected = "" if node_or_id is None else self.node_id(node_or_id)
        return self.selected

    @property
    def selected_node(self):
        """The selected Apply node or variable (``None`` when nothing is selected)."""
        return self._drawing.objects.get(self.selected) if self.selected else None

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


def svg_width_pt(svg):
    """The width in points Graphviz gave an SVG drawing (0 when it does not say)."""
    import re

    match = re.search(r'<svg[^>]*\swidth="([\d.]+)pt"', svg)
    return float(match.group(1)) if match else 0.0


def _search_text(entry):
    """What the search matches in a node's entry (kept in step with graph_view.js's ``searchText``)."""
    parts = [entry["id"], entry.get("label", ""), entry.get("op", ""), entry.get("created_at", "")]
    parts += [o.get("name") or "" for o in entry.get("outputs", [])]
    return " ".join(parts).lower()


def _id_range(ids):
    apply_ids = [i for i in ids if i.startswith("n")]
    other = [i for i in ids if not i.startswith("n")]
    parts = []
    if apply_ids:
        parts.append(f"n0..n{len(apply_ids) - 1} (nodes)")
    if other:
        parts.append(", ".join(other[:8]) + (", ..." if len(other) > 8 else ""))
    return "; ".join(parts) or "none"


def _output_info(var):
    shape = getattr(var.type, "shape", None)
    return {
        "name": var.name,
        "type": str(var.type),
        "type_text": type_text(var.type),
        "dtype": getattr(var.type, "dtype", None),
        "shape": None if shape is None else ["?" if s is None else int(s) for s in shape],
        "summary": None,
    }


def _aliasing_text(op):
    parts = []
    for out, ins in sorted((getattr(op, "destroy_map", None) or {}).items()):
        parts.append(f"output {out} overwrites input {', '.join(map(str, ins))} in place")
    for out, ins in sorted((getattr(op, "view_map", None) or {}).items()):
        parts.append(f"output {out} is a view of input {', '.join(map(str, ins))}")
    return "; ".join(parts)


__all__ = ["GraphView", "ramp_color", "COLOR_BY"]
