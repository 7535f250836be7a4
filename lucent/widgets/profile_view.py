"""``ProfileView``: a compiled function's profile as a sortable table with bars.

``ProfileStats.summary()`` prints where the time and the memory go; in a
notebook a user wants to re-sort that table by time, by bytes or by
schedule position, see at a glance which nodes dominate (bars proportional
to the largest), and find the node where memory peaks. ``ProfileView``
shows the header numbers (calls, times, peak memory and the node reaching
it, created and input bytes) and one row per node.

Times are typical, not averages: the time column is each node's median
time per call (one slow first call or stray slow call does not move it),
with the number of calls it comes from; with fewer than ``FEW_CALLS``
calls the header says the times are noisy. The mean is in the tooltip.
Bars stand beside their numbers, never behind them.

Sorting happens in the browser (click a column header), so it works from a
notebook saved with its widget state; the chosen column is the ``sort_by``
trait, synced both ways, and ``sorted_rows()`` gives the same order in
Python. Given a Function, the view refreshes itself after its calls,
throttled like ``SharedView`` (at most every ``min_interval`` seconds, the
rest when the cell finishes or on ``refresh()``).

A table says which node costs most, not where it sits in the graph:
``beside_graph()`` shows the view next to a ``GraphView`` of the same
graph with the nodes filled by their share of the time or the bytes, and
links the two selections (click a row, its node is selected in the drawing;
click a node, its row is highlighted).

Inner graphs: the row of a node whose inner graph was profiled (a
``Scan`` loop, an ``OpFromGraph``: see ``lucent.compile.profiling_inner``)
shows how many steps it ran and has a toggle; expanded, its inner nodes
follow it, indented, with their time and bytes summed over the steps of a
call and their share of the function's time (a loop in the loop expands
the same way). Rows start collapsed; the ``expanded`` trait lists the
expanded rows' paths (``"6"``, ``"6.2"``), synced both ways, and
``expand()`` / ``collapse()`` change it from Python.

Class names (stable, for scripts and browser tests): ``lucent-pv-row`` on
every body row, with ``data-path``, ``data-depth`` and, for inner rows,
``data-parent``; ``lucent-pv-inner`` on an inner row; ``lucent-pv-has-inner``
on a row with inner rows, ``lucent-pv-expanded`` when they are shown;
``lucent-pv-toggle`` the button that expands or collapses it;
``lucent-pv-steps`` its step count; ``lucent-pv-peak`` the peak-memory row.
"""

from __future__ import annotations

import pathlib

import anywidget
import traitlets

from lucent.compile.function_module import Function
from lucent.compile.profiling import FEW_CALLS, ProfileStats, flatten_rows
from lucent.compile.watch import watch_calls
from lucent.widgets.live import Throttle, stop_following

_JS = pathlib.Path(__file__).parent / "js"

#: ``sort_by`` values: what each sorts on, and whether the largest comes first.
SORT_KEYS = {
    "order": ("position", False),
    "op": ("op", False),
    "kind": ("kind", False),
    "bytes": ("bytes", True),
    "live_bytes": ("live_bytes", True),
    "time": ("time_median", True),
    "runs": ("runs", True),
}

_TEXT_LIMIT = 300


def _short(text):
    return text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 3] + "..."


def _json_shape(shape):
    return None if shape is None else [int(d) for d in shape]


def _header(profile, rows):
    """The numbers above the table, as plain JSON values (``rows``: the top-level rows)."""
    calls = profile.calls
    node_time = float(profile.node_time_total)
    out = {
        "name": profile.message or "",
        "how_measured": profile.how_measured,
        "calls": calls,
        "failed_calls": profile.failed_calls,
        "call_time": profile.call_time,
        "time_per_call": profile.call_time / calls if calls else 0.0,
        "call_time_median": profile.call_time_median,
        "few_calls": FEW_CALLS,
        "node_time": node_time,
        "node_time_percent": 100.0 * node_time / profile.call_time if profile.call_time > 0 else 0.0,
        "compile_time": profile.compile_time,
        "nodes": len(rows),
        "inner_graphs": len(profile.inner_profiles),
        "input_bytes": profile.input_bytes,
        "peak": None, "peak_position": None, "peak_node": None,
        "created": None, "held_after": None,
    }
    if profile.fgraph is not None:
        memory = profile.memory()
        out.update(peak=int(memory.peak), created=int(memory.total_created), held_after=int(memory.held_after))
        if memory.peak_node is not None:
            peak_rows = [r for r in rows if r["is_peak"]]
            out["peak_position"] = peak_rows[0]["position"] if peak_rows else None
            out["peak_node"] = _short(str(memory.peak_node))
    return out


def _json_row(row, node_ids=None):
    return {
        "position": int(row["position"]),
        "node_id": (node_ids or {}).get(row["node"], ""),
        "op": _short(row["op"]),
        "node": _short(str(row["node"])),
        "output_shapes": [_json_shape(s) for s in row["output_shapes"]],
        "output_bytes": [None if b is None else int(b) for b in row["output_bytes"]],
        "output_kinds": list(row["output_kinds"]),
        "kind": row["kind"],
        "bytes": int(row["bytes"]),
        "live_bytes": int(row["live_bytes"]),
        "is_peak": bool(row["is_peak"]),
        "runs": int(row["runs"]),
        "time": float(row["time"]),
        "time_per_call": float(row["time_per_call"]),
        "time_percent": float(row["time_percent"]),
        "time_median": float(row["time_median"]),
        "timed_calls": int(row["timed_calls"]),
        "median_percent": float(row["median_percent"]),
        "note": row["note"],
        "path": row["path"],
        "parent": row["parent"],
        "depth": int(row["depth"]),
        "has_children": bool(row["children"]),
        "steps": None if row["steps"] is None else int(row["steps"]),
        "steps_total": None if row["steps_total"] is None else int(row["steps_total"]),
        "inner_unit": row["inner_unit"],
        "inner_peak": int(row["inner_peak"]),
    }


class ProfileView(anywidget.AnyWidget):
    """Per-node time and memory of a profiled function, as a sortable table with bars.

    Parameters
    ----------
    profile_or_function
        A ``ProfileStats``, or a Function compiled with ``profile=True``
        (then the view follows its calls).
    sort_by
        The initial order: one of ``SORT_KEYS`` (``"time"``, ``"bytes"``,
        ``"live_bytes"``, ``"order"``, ``"op"``, ``"kind"``, ``"runs"``).
    min_interval
        Seconds between two refreshes caused by calls of the function.

    Traits (synced): ``title``; ``summary``, the header numbers (calls,
    times, ``peak`` bytes with ``peak_position``/``peak_node``, ``created``,
    ``held_after`` and ``input_bytes``, ``None`` when unknown); ``rows``, one
    dict per node in schedule order (the keys of ``ProfileStats.as_rows``,
    JSON-ready, with ``node`` as text); ``sort_by`` and ``sort_reversed``,
    the order shown; ``live``, whether the view follows a function;
    ``selected``, the GraphView id of the selected row's node (rows know
    their ids once ``beside_graph`` linked a drawing); ``compact``, show
    only the position, op, bytes and time columns (beside a drawing);
    ``expanded``, the paths of the rows whose inner rows are shown.

    ``rows`` holds the inner rows too, each after its parent (depth first,
    schedule order), with ``path``, ``parent`` (``None`` at the top),
    ``depth``, ``has_children``, ``steps`` (inner runs in the last call),
    ``steps_total``, ``inner_unit`` and ``inner_peak``.
    """

    _esm = _JS / "profile_view.js"
    _css = _JS / "profile_view.css"

    title = traitlets.Unicode("Profile").tag(sync=True)
    summary = traitlets.Dict().tag(sync=True)
    rows = traitlets.List(traitlets.Dict()).tag(sync=True)
    sort_by = traitlets.Unicode("time").tag(sync=True)
    sort_reversed = traitlets.Bool(False).tag(sync=True)
    live = traitlets.Bool(False).tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    compact = traitlets.Bool(False).tag(sync=True)
    expanded = traitlets.List(traitlets.Unicode()).tag(sync=True)

    def __init__(self, profile_or_function, *, sort_by="time", min_interval=0.1, **kwargs):
        function = None
        if isinstance(profile_or_function, Function):
            function = profile_or_function
            profile = function.profile
            if profile is None:
                name = f" {function.name!r}" if function.name else ""
                raise ValueError(
                    f"The function{name} has no profile; compile it with "
                    "lucent.function(..., profile=True) to see it in a ProfileView"
                )
        elif isinstance(profile_or_function, ProfileStats):
            profile = profile_or_function
        else:
            raise TypeError(
                "ProfileView needs a lucent ProfileStats or a Function compiled with profile=True; "
                f"got {type(profile_or_function).__name__}: {profile_or_function!r:.80}"
            )
        self._profile = profile
        self._function = function
        self._node_ids = {}
        self._throttle = Throttle(self.refresh, min_interval)
        super().__init__(sort_by=sort_by, live=function is not None, **kwargs)
        self.refresh()
        self._watch = None
        if function is not None:
            self._watch = watch_calls(function, self._on_call, inputs=False)
            self._throttle.follow_cells()

    @traitlets.validate("sort_by")
    def _check_sort_by(self, proposal):
        value = proposal["value"]
        if value not in SORT_KEYS:
            raise traitlets.TraitError(
                f"sort_by must be one of {', '.join(map(repr, SORT_KEYS))}, got {value!r}"
            )
        return value

    def _on_call(self, fn, inputs, result):
        self._throttle.changed()

    # --- public API ------------------------------------------------------------------
    @property
    def profile(self):
        """The ``ProfileStats`` shown."""
        return self._profile

    def refresh(self):
        """Read the profile again and show it."""
        self._throttle.pending = False
        profile = self._profile
        rows = profile.as_rows("order")
        with self.hold_sync():  # one message, one redraw
            self.title = f"Profile of {profile.message}" if profile.message else "Profile"
            self.summary = _header(profile, rows)
            self.rows = [_json_row(r, self._node_ids) for r in flatten_rows(rows)]

    def expand(self, path=None):
        """Show the inner rows of the row at ``path`` (``"6"``), or of every row that has some."""
        paths = [r["path"] for r in self.rows if r["has_children"]]
        if path is not None:
            if str(path) not in paths:
                raise ValueError(f"No row with inner rows at path {path!r}; rows with inner rows: {paths}")
            paths = [str(path)]
        self.expanded = list(dict.fromkeys([*self.expanded, *paths]))

    def collapse(self, path=None):
        """Hide the inner rows of the row at ``path``, or of every row."""
        self.expanded = [] if path is None else [p for p in self.expanded if p != str(path)]

    def beside_graph(self, color_by="time", **graph_options):
        """This view next to a ``GraphView`` of the profiled graph, nodes filled by ``color_by``.

        ``color_by`` is ``"time"`` (median time per call) or ``"bytes"`` (as
        ``GraphView``; its menu switches between them). ``graph_options`` go
        to ``GraphView`` (e.g. ``hide_bookkeeping=True``). The table turns
        ``compact`` to leave the drawing room. Selecting a row
        selects its node in the drawing and the reverse (the ``selected``
        traits are linked, in the browser too, so a saved notebook keeps
        the link). Returns an ``ipywidgets.HBox`` of the two views; the
        GraphView is ``box.children[1]``.
        """
        import ipywidgets

        from lucent.widgets.graph_view import GraphView

        if color_by not in ("time", "bytes"):
            raise ValueError(f"color_by must be 'time' or 'bytes', got {color_by!r}")
        source = self._function if self._function is not None else self._profile.fgraph
        if source is None:
            raise ValueError(
                "This profile has no graph to draw (it was not made by a compiled function); "
                "show the ProfileView of a function compiled with profile=True"
            )
        graph = GraphView(source, profile=self._profile, color_by=color_by, **graph_options)
        ids = {}
        for row in self._profile.as_rows("order"):
            try:
                ids[row["node"]] = graph.node_id(row["node"])
            except KeyError:  # a node the drawing does not have: its row just cannot select
                pass
        self._node_ids = ids
        self.compact = True
        self.refresh()
        self._links = [
            traitlets.link((self, "selected"), (graph, "selected")),
            ipywidgets.jslink((self, "selected"), (graph, "selected")),
        ]
        # Side by side when the notebook is wide enough, the drawing under the table otherwise.
        self.layout.flex = "1 1 440px"
        graph.layout.flex = "1 1 480px"
        for view in (self, graph):
            view.layout.min_width = "0"
        return ipywidgets.HBox(
            [self, graph],
            layout=ipywidgets.Layout(width="100%", flex_flow="row wrap", align_items="flex-start", grid_gap="8px"),
        )

    def sorted_rows(self):
        """The rows the table shows, in its order (``sort_by``, ``sort_reversed``).

        The top-level rows are sorted; the inner rows of an expanded row
        follow it, sorted the same way among themselves.
        """
        key, largest_first = SORT_KEYS[self.sort_by]
        by_parent = {}
        for row in self.rows:
            by_parent.setdefault(row.get("parent"), []).append(row)
        expanded = set(self.expanded)

        def ordered(parent):
            rows = sorted(by_parent.get(parent, ()), key=lambda r: r["position"])
            rows.sort(key=lambda r: r[key], reverse=largest_first)  # stable: ties keep schedule order
            if self.sort_reversed:
                rows.reverse()
            out = []
            for row in rows:
                out.append(row)
                if row.get("has_children") and row["path"] in expanded:
                    out += ordered(row["path"])
            return out

        return ordered(None)

    def close(self):
        """Stop following the function and close the widget."""
        stop_following(self, "_watch", "_throttle")
        for link in getattr(self, "_links", ()):
            link.unlink()
        self._links = []
        super().close()

    def __repr__(self):
        return f"<ProfileView of {self._profile!r}>"


__all__ = ["ProfileView", "SORT_KEYS"]
