"""Per-node time and memory profiles of compiled functions (``function(..., profile=True)``).

A compiled function is a schedule of Apply nodes; knowing which of them
takes the time and which allocate the memory is what tells a user where to
change the graph. ``ProfileStats`` collects that, call after call, from
whatever linker runs the function. The linker is the only party that
knows how nodes are executed, so it drives the profile:

* ``attach(fgraph, order)`` once, when the function is linked;
* per call: ``start_call(input_values)``, ``record_node(node, seconds,
  output_values)`` after each node, then ``end_call(seconds)`` with the
  call's wall time (or ``abort_call()`` when the call raised);
* ``how_measured``: one sentence saying what the times mean on this path.

Node records of a call are kept aside until ``end_call``, so a call that
raises adds nothing but a ``failed_calls`` count. Sizes are taken when a
node's outputs are recorded (``Type.get_size(Type.get_shape_info(v))``), so
the profile never keeps a computed value alive. Memory figures (created
bytes, peak, where it is reached) come from the last call's sizes and the
schedule; ``lucent.compile.profile_memory`` describes the model.

Reports: ``summary()`` (text), ``as_rows()`` (one dict per node, for
widgets), ``_repr_html_()`` (a table for notebooks).
"""

from __future__ import annotations

import html
import sys

from lucent.compile.profile_memory import output_kind, schedule_memory
from lucent.graph.utils import MethodNotDefined

SORT_KEYS = ("time", "bytes", "order")

#: Column headings of the per-node table (text and HTML).
COLUMNS = ("Node", "Op", "Output shapes", "Bytes", "Kind", "Time (s)", "Per call (s)", "% time", "Runs")


def _value_size(var, value):
    """Bytes of ``value`` as its type measures them, or ``None`` when it cannot tell."""
    if value is None:
        return None
    type_ = var.type
    try:
        return int(type_.get_size(type_.get_shape_info(value)))
    except (MethodNotDefined, NotImplementedError, AttributeError, TypeError):
        nbytes = getattr(value, "nbytes", None)
        return int(nbytes) if nbytes is not None else None


def _value_shape(value):
    shape = getattr(value, "shape", None)
    return tuple(shape) if shape is not None else None


def format_bytes(n):
    """``n`` bytes for people: ``"296 B"``, ``"1.5 KiB"``, ``"3.2 MiB"``."""
    if n is None:
        return "?"
    if abs(n) < 1024:
        return f"{n} B"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024 or unit == "GiB":
            return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover


def _bytes_text(n):
    """Exact bytes, with a readable size after them when it helps."""
    readable = format_bytes(n)
    return readable if readable == f"{n} B" else f"{n} B ({readable})"


def _format_shapes(shapes):
    if not shapes:
        return ""
    parts = []
    for shape in shapes:
        if shape is None:
            parts.append("-")
        else:
            parts.append("(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")")
    return " ".join(parts)


def _row_cells(row, peak_mark):
    """The report columns (``COLUMNS``) of one row of ``as_rows``, as text."""
    return (
        f"{row['position']}{peak_mark if row['is_peak'] else ''}",
        row["op"],
        _format_shapes(row["output_shapes"]),
        str(row["bytes"]),
        row["kind"],
        f"{row['time']:.6f}",
        f"{row['time_per_call']:.6f}",
        f"{row['time_percent']:.1f}",
        str(row["runs"]),
    )


class ProfileStats:
    """Time and memory of one compiled function, node by node, over all its calls.

    Parameters
    ----------
    message
        A name for the report (``function(..., profile="name")`` sets it;
        ``profile=True`` uses the function's name).
    fgraph, order
        The graph and schedule profiled; normally given later by the linker
        through ``attach``.

    Attributes
    ----------
    calls, failed_calls
        Completed calls, and calls that raised.
    call_time
        Total wall time of the completed calls, as measured by the linker.
    compile_time
        Seconds spent compiling during calls (the Numba path compiles each
        node's kernel on first use), excluded from every other time.
    node_runs, node_time
        ``{node: count}`` and ``{node: seconds}``.
    output_sizes, output_shapes
        ``{node: [per output]}`` of the last completed call.
    input_bytes
        Total size of the graph inputs in the last call (``None`` when the
        linker did not pass them).
    node_notes
        ``{node: text}``: how a node ran when it differs from the rest
        (e.g. ``perform`` on the Numba path, for an op without a kernel).
    how_measured
        What the times mean, set by the linker.
    """

    def __init__(self, message=None, fgraph=None, order=None):
        self.message = message
        self.how_measured = "not stated by the linker"
        self.calls = 0
        self.failed_calls = 0
        self.call_time = 0.0
        self.compile_time = 0.0
        self.node_runs = {}
        self.node_time = {}
        self.output_sizes = {}
        self.output_shapes = {}
        self.input_bytes = None
        self.node_notes = {}
        self.fgraph = None
        self.order = None
        self._pending = None
        self._memory = None
        if fgraph is not None:
            self.attach(fgraph, order)

    # --- set-up by the linker ------------------------------------------------------
    def attach(self, fgraph, order=None):
        """Profile ``fgraph``, run in ``order`` (default: ``fgraph.toposort()``).

        A ProfileStats describes one graph; attaching it to a second one is
        an error rather than a silent mix of two functions' numbers.
        """
        if self.fgraph is not None and self.fgraph is not fgraph:
            raise ValueError(
                f"This ProfileStats ({self.message or 'unnamed'}) already profiles another "
                "function's graph; give each function its own ProfileStats (profile=True or "
                "profile='name'), and print several with lucent.compile.profiling.print_profiles"
            )
        self.fgraph = fgraph
        self.order = list(order) if order is not None else list(fgraph.toposort())
        self._memory = None
        return self

    def empty_copy(self):
        """A new, empty ProfileStats with the same message (for a copy of the function)."""
        return type(self)(message=self.message)

    # --- recording, by the linker ----------------------------------------------------
    def start_call(self, input_values=None):
        """A call begins; ``input_values`` (one per graph input) lets the report size them."""
        if self._pending is not None:
            # The previous call never ended: it raised in a linker that did not say so.
            self.failed_calls += 1
        input_bytes = None
        if input_values is not None and self.fgraph is not None:
            input_bytes = 0
            for var, value in zip(self.fgraph.inputs, input_values):
                input_bytes += _value_size(var, value) or 0
        self._pending = ([], input_bytes)

    def record_node(self, node, seconds, output_values):
        """``node`` ran in ``seconds`` and produced ``output_values`` (one per output)."""
        if self._pending is None:
            self.start_call()
        if len(output_values) != len(node.outputs):
            raise ValueError(
                f"record_node got {len(output_values)} output values for {node}, which has "
                f"{len(node.outputs)} outputs; pass one value per output"
            )
        sizes = [_value_size(var, value) for var, value in zip(node.outputs, output_values)]
        shapes = [_value_shape(value) for value in output_values]
        self._pending[0].append((node, seconds, sizes, shapes))

    def end_call(self, seconds):
        """The call completed in ``seconds`` (wall time); its node records now count."""
        if self._pending is None:
            self.start_call()
        records, input_bytes = self._pending
        self._pending = None
        self.calls += 1
        self.call_time += seconds
        for node, node_seconds, sizes, shapes in records:
            self.node_runs[node] = self.node_runs.get(node, 0) + 1
            self.node_time[node] = self.node_time.get(node, 0.0) + node_seconds
            self.output_sizes[node] = sizes
            self.output_shapes[node] = shapes
        if input_bytes is not None:
            self.input_bytes = input_bytes
        self._memory = None

    def abort_call(self):
        """The call raised: forget its node records and count it as failed."""
        if self._pending is not None:
            self._pending = None
            self.failed_calls += 1

    # --- derived numbers -----------------------------------------------------------
    def _nodes(self):
        if self.order is not None:
            known = set(self.order)
            extra = [n for n in self.node_runs if n not in known]
            return list(self.order) + extra
        return list(self.node_runs)

    @property
    def node_time_total(self):
        """Seconds spent in the nodes themselves (the rest of ``call_time`` is overhead)."""
        return sum(self.node_time.values())

    def memory(self):
        """The ``MemoryUsage`` of the last completed call (see ``profile_memory``)."""
        if self._memory is None:
            if self.fgraph is None:
                raise ValueError("This ProfileStats is not attached to a graph yet; call the function first")
            self._memory = schedule_memory(self.fgraph, self._nodes(), self.output_sizes)
        return self._memory

    def as_rows(self, sort_by="order"):
        """One dict per node of the schedule, sorted by ``"order"``, ``"time"`` or ``"bytes"``.

        Keys: ``position`` (in the schedule), ``node``, ``op``,
        ``output_shapes``, ``output_bytes``, ``output_kinds``, ``bytes`` (new
        bytes: created outputs only), ``kind`` (the kinds joined by ``,``),
        ``live_bytes`` (memory in use while it runs), ``is_peak``, ``runs``,
        ``time``, ``time_per_call``, ``time_percent`` (of the time in
        nodes) and ``note``.
        """
        if sort_by not in SORT_KEYS:
            raise ValueError(f"sort_by must be one of {', '.join(map(repr, SORT_KEYS))}, got {sort_by!r}")
        memory = self.memory() if self.fgraph is not None else None
        total_time = self.node_time_total
        rows = []
        for position, node in enumerate(self._nodes()):
            time_ = self.node_time.get(node, 0.0)
            kinds = [output_kind(node, j) for j in range(len(node.outputs))]
            rows.append({
                "position": position,
                "node": node,
                "op": str(node.op),
                "output_shapes": list(self.output_shapes.get(node, [None] * len(node.outputs))),
                "output_bytes": list(self.output_sizes.get(node, [None] * len(node.outputs))),
                "output_kinds": kinds,
                "kind": ",".join(kinds),
                "bytes": memory.created.get(node, 0) if memory else 0,
                "live_bytes": memory.live.get(node, 0) if memory else 0,
                "is_peak": memory is not None and memory.peak_node is node,
                "runs": self.node_runs.get(node, 0),
                "time": time_,
                "time_per_call": time_ / self.calls if self.calls else 0.0,
                "time_percent": 100.0 * time_ / total_time if total_time > 0 else 0.0,
                "note": self.node_notes.get(node),
            })
        if sort_by == "time":
            rows.sort(key=lambda r: (-r["time"], r["position"]))
        elif sort_by == "bytes":
            rows.sort(key=lambda r: (-r["bytes"], r["position"]))
        return rows

    # --- reports ---------------------------------------------------------------------
    def _header_lines(self):
        memory = self.memory() if self.fgraph is not None else None
        per_call = self.call_time / self.calls if self.calls else 0.0
        in_nodes = self.node_time_total
        share = 100.0 * in_nodes / self.call_time if self.call_time > 0 else 0.0
        lines = [
            f"Function profile: {self.message or 'unnamed function'}",
            f"  How measured: {self.how_measured}",
            f"  Calls: {self.calls} ({self.failed_calls} failed, not counted)",
            f"  Total call time: {self.call_time:.6f} s ({per_call:.6f} s per call)",
            f"  Time in nodes: {in_nodes:.6f} s ({share:.1f}% of the call time; the rest is "
            "the linker's own work between nodes)",
        ]
        if self.compile_time:
            lines.append(
                f"  Compile time during calls: {self.compile_time:.6f} s (excluded from the times above)"
            )
        if memory is not None:
            if self.input_bytes is None:
                inputs = "not recorded by this linker"
            else:
                inputs = _bytes_text(self.input_bytes)
            if memory.peak_node is None:
                peak = "0 B (the call allocates no new buffer)"
            else:
                position = self._nodes().index(memory.peak_node)
                peak = (
                    f"{_bytes_text(memory.peak)}, reached at node {position}: "
                    f"{memory.peak_node}"
                )
            lines += [
                "  Memory (last call):",
                f"    Created per call: {_bytes_text(memory.total_created)}",
                f"    Peak: {peak}",
                f"    Held by the outputs after the call: {_bytes_text(memory.held_after)}",
                f"    Graph inputs: {inputs} (not counted in the peak or the created bytes)",
                "    Model: each intermediate is freed after its last reader ran; view and "
                "in-place outputs reuse their input's buffer and cost 0 B",
            ]
        return lines

    def summary(self, sort_by="time", n=None, file=sys.stdout):
        """Print the report: totals, memory, then the node table (``n`` rows at most)."""
        rows = self.as_rows(sort_by)
        lines = self._header_lines()
        lines.append(f"  Nodes (sorted by {sort_by}; * marks the peak-memory node):")
        table = [COLUMNS]
        shown = rows if n is None else rows[:n]
        for row in shown:
            table.append(_row_cells(row, "*"))
        rest = rows[len(shown):]
        if rest:
            rest_time = sum(r["time"] for r in rest)
            table.append((
                "...", f"{len(rest)} more nodes", "", str(sum(r["bytes"] for r in rest)), "",
                f"{rest_time:.6f}", f"{rest_time / self.calls if self.calls else 0.0:.6f}",
                f"{sum(r['time_percent'] for r in rest):.1f}", "",
            ))
        total_time = self.node_time_total
        table.append((
            "", "total", "", str(sum(r["bytes"] for r in rows)), "",
            f"{total_time:.6f}", f"{total_time / self.calls if self.calls else 0.0:.6f}",
            "100.0" if total_time > 0 else "0.0", "",
        ))
        widths = [max(len(r[c]) for r in table) for c in range(len(COLUMNS))]
        numeric = {3, 5, 6, 7, 8}
        for r in table:
            cells = [r[c].rjust(widths[c]) if c in numeric else r[c].ljust(widths[c]) for c in range(len(r))]
            lines.append("    " + "  ".join(cells).rstrip())
        notes = [(row["position"], row["note"]) for row in rows if row["note"]]
        if notes:
            lines.append("  Notes:")
            lines += [f"    node {position}: {note}" for position, note in sorted(notes)]
        print("\n".join(lines), file=file)

    def _repr_html_(self):
        """An HTML table of the nodes in schedule order; the peak-memory row is marked."""
        esc = html.escape
        header = "<br>".join(esc(line.strip()) for line in self._header_lines())
        parts = [
            '<div class="lucent-profile">',
            f"<p>{header}</p>",
            '<table class="lucent-profile-table">',
            "<thead><tr>" + "".join(f"<th>{esc(c)}</th>" for c in COLUMNS) + "</tr></thead>",
            "<tbody>",
        ]
        for row in self.as_rows("order"):
            attrs = ' class="peak" style="font-weight: bold; background: #fde2e2" title="peak memory"' if row["is_peak"] else ""
            cells = _row_cells(row, " (peak)")
            parts.append(f"<tr{attrs}>" + "".join(f"<td>{esc(c)}</td>" for c in cells) + "</tr>")
        parts += ["</tbody>", "</table>", "</div>"]
        return "\n".join(parts)

    def __repr__(self):
        name = f" {self.message!r}" if self.message else ""
        return f"<ProfileStats{name}: {self.calls} calls, {self.call_time:.6f} s>"

    # --- names PyTensor users know ---------------------------------------------------
    @property
    def fct_callcount(self):
        return self.calls

    @property
    def fct_call_time(self):
        return self.call_time

    @property
    def apply_time(self):
        return dict(self.node_time)

    @property
    def apply_callcount(self):
        return dict(self.node_runs)


def make_profile(profile, name=None):
    """The ``ProfileStats`` a function uses for its ``profile=`` argument, or ``None``.

    ``None`` follows ``config.profile``; ``True`` makes one named after the
    function, a string makes one with that name, a ``ProfileStats`` is used
    as it is and ``False`` turns profiling off.
    """
    if profile is None:
        from lucent.configdefaults import config

        profile = bool(config.profile)
    if profile is False:
        return None
    if profile is True:
        return ProfileStats(message=name)
    if isinstance(profile, str):
        return ProfileStats(message=profile)
    if isinstance(profile, ProfileStats):
        return profile
    raise TypeError(
        "profile must be None (follow config.profile), True, False, a name (str) or a "
        f"lucent.compile.profiling.ProfileStats, got {type(profile).__name__}: {profile!r}"
    )


def print_profiles(profiles, sort_by="time", n=None, file=sys.stdout):
    """Print the summary of each profile, then their combined call count and time."""
    profiles = [p for p in profiles if p is not None]
    for profile in profiles:
        profile.summary(sort_by=sort_by, n=n, file=file)
        print(file=file)
    calls = sum(p.calls for p in profiles)
    total = sum(p.call_time for p in profiles)
    print(f"{len(profiles)} profiled functions: {calls} calls, {total:.6f} s in total", file=file)


__all__ = ["ProfileStats", "make_profile", "print_profiles", "format_bytes", "COLUMNS"]
