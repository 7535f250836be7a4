"""The text and HTML reports of a ``ProfileStats``: its header, op and node tables.

``ProfileStats.summary()`` and ``_repr_html_()`` are made here, from the
profile's public figures (``as_rows``, ``memory()``, the call counts), so
the recording class stays about recording. A node whose inner graph was
profiled (``profiling_inner``) is followed by its inner rows, indented and
numbered ``<node>.<inner node>``, and the text ends with a paragraph per
inner graph saying how many steps it ran and what its times mean.
"""

from __future__ import annotations

import html

from lucent.compile.profile_memory import min_peak_memory

#: Column headings of the per-node table (text and HTML).
COLUMNS = ("Node", "Op", "Output shapes", "Bytes", "Kind", "Time (s)", "Per call (s)", "% time", "Runs")


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


def flatten_rows(rows):
    """``rows`` of ``as_rows`` with each row's ``children`` right after it, depth first."""
    out = []
    for row in rows:
        out.append(row)
        out += flatten_rows(row.get("children") or ())
    return out


def _row_cells(row, peak_mark):
    """The report columns (``COLUMNS``) of one row of ``as_rows``, as text (inner rows indented)."""
    depth = row.get("depth", 0)
    return (
        # an inner row's ``is_peak`` is its step's peak: only the function's own peak is marked
        f"{'  ' * depth}{row.get('path', row['position'])}{peak_mark if row['is_peak'] and not depth else ''}",
        "  " * depth + row["op"],
        _format_shapes(row["output_shapes"]),
        str(row["bytes"]),
        row["kind"],
        f"{row['time']:.6f}",
        f"{row['time_per_call']:.6f}",
        f"{row['time_percent']:.1f}",
        str(row["runs"]),
    )


def _path_key(item):
    return [int(p) for p in str(item[0]).split(".")]


def header_lines(profile):
    """The totals and memory of ``profile``: the lines above its tables."""
    memory = profile.memory() if profile.fgraph is not None else None
    per_call = profile.call_time / profile.calls if profile.calls else 0.0
    in_nodes = profile.node_time_total
    share = 100.0 * in_nodes / profile.call_time if profile.call_time > 0 else 0.0
    lines = [
        f"Function profile: {profile.message or 'unnamed function'}",
        f"  How measured: {profile.how_measured}",
        f"  Calls: {profile.calls} ({profile.failed_calls} failed, not counted)",
        f"  Total call time: {profile.call_time:.6f} s ({per_call:.6f} s per call)",
        f"  Time in nodes: {in_nodes:.6f} s ({share:.1f}% of the call time; the rest is "
        "the linker's own work between nodes)",
    ]
    if profile.compile_time:
        lines.append(
            f"  Compile time during calls: {profile.compile_time:.6f} s (excluded from the times above)"
        )
    if memory is not None:
        if profile.input_bytes is None:
            inputs = "not recorded by this linker"
        else:
            inputs = _bytes_text(profile.input_bytes)
        if memory.peak_node is None:
            peak = "0 B (the call allocates no new buffer)"
        else:
            position = profile._nodes().index(memory.peak_node)
            peak = (
                f"{_bytes_text(memory.peak)}, reached at node {position}: "
                f"{memory.peak_node}"
            )
            inner = memory.inner.get(memory.peak_node)
            if inner:
                peak += f" (with {_bytes_text(inner)} that one run of its inner graph keeps alive)"
        lines += [
            "  Memory (last call):",
            f"    Created per call: {_bytes_text(memory.total_created)}",
            f"    Peak: {peak}",
        ]
        lines += _min_peak_lines(profile, memory)
        lines += [
            f"    Held by the outputs after the call: {_bytes_text(memory.held_after)}",
            f"    Graph inputs: {inputs} (not counted in the peak or the created bytes)",
            "    Model: each intermediate is freed after its last reader ran; view and "
            "in-place outputs reuse their input's buffer and cost 0 B",
        ]
    return lines


def _min_peak_lines(profile, memory):
    """With ``config.profiling__min_peak_memory``: the best peak over all node orders."""
    from lucent.configdefaults import config

    if not getattr(config, "profiling__min_peak_memory", False):
        return []
    found = min_peak_memory(profile.fgraph, profile._nodes(), profile.output_sizes, inner_peaks=profile.inner_peaks())
    if found is None:
        return ["    Smallest peak over all valid node orders: not computed (too many orders)"]
    best, _order = found
    return [
        f"    Smallest peak over all valid node orders: {_bytes_text(best)} "
        f"(this schedule: {_bytes_text(memory.peak)})"
    ]


def summary_lines(profile, n_ops_to_print, sort_by, n):
    """``ProfileStats.summary``'s text, as lines: header, ops, nodes (inner rows indented), notes."""
    rows = profile.as_rows(sort_by)
    lines = profile._header_lines()
    lines += _op_lines(profile, rows, n_ops_to_print)
    lines.append(f"  Nodes (sorted by {sort_by}; * marks the peak-memory node):")
    table = [COLUMNS]
    shown = rows if n is None else rows[:n]
    for row in flatten_rows(shown):
        table.append(_row_cells(row, "*"))
    rest = rows[len(shown):]
    if rest:
        rest_time = sum(r["time"] for r in rest)
        table.append((
            "...", f"{len(rest)} more nodes", "", str(sum(r["bytes"] for r in rest)), "",
            f"{rest_time:.6f}", f"{rest_time / profile.calls if profile.calls else 0.0:.6f}",
            f"{sum(r['time_percent'] for r in rest):.1f}", "",
        ))
    total_time = profile.node_time_total
    table.append((
        "", "total", "", str(sum(r["bytes"] for r in rows)), "",
        f"{total_time:.6f}", f"{total_time / profile.calls if profile.calls else 0.0:.6f}",
        "100.0" if total_time > 0 else "0.0", "",
    ))
    widths = [max(len(r[c]) for r in table) for c in range(len(COLUMNS))]
    numeric = {3, 5, 6, 7, 8}
    for r in table:
        cells = [r[c].rjust(widths[c]) if c in numeric else r[c].ljust(widths[c]) for c in range(len(r))]
        lines.append("    " + "  ".join(cells).rstrip())
    notes = [(row["path"], row["note"]) for row in flatten_rows(rows) if row["note"]]
    if notes:
        lines.append("  Notes:")
        lines += [f"    node {path}: {note}" for path, note in sorted(notes, key=_path_key)]
    lines += _inner_lines(profile)
    lines += _rewriter_lines(profile)
    return lines


def _inner_lines(top):
    """One paragraph per node whose inner graph was profiled (its rows are the indented ones)."""
    lines = []

    def walk(profile, prefix):
        for position, node in enumerate(profile._nodes()):
            child = profile.inner_profiles.get(node)
            if child is None:
                continue
            peak = child.memory().peak if child.fgraph is not None and child.calls else None
            lines.append(
                f"    node {prefix}{position} {node.op}: {child.steps_text()}; {child.steps} in "
                f"all over {child.calls} call{'' if child.calls == 1 else 's'}"
                + (f"; one run's peak memory: {_bytes_text(peak)}" if peak is not None else "")
            )
            lines.append(f"      How measured: {child.how_measured}")
            walk(child, f"{prefix}{position}.")

    walk(top, "")
    if lines:
        lines.insert(0, (
            "  Inner graphs (their nodes are the indented rows, numbered <node>.<inner node>; "
            "an inner node's time is summed over its runs in one call):"
        ))
    return lines


def _op_lines(profile, rows, limit):
    """Time per op (all nodes of one op together), largest first."""
    per_op = {}
    for row in rows:
        entry = per_op.setdefault(row["op"], [0.0, 0, 0])
        entry[0] += row["time"]
        entry[1] += 1
        entry[2] += row["runs"]
    if not per_op:
        return []
    total = profile.node_time_total
    ranked = sorted(per_op.items(), key=lambda item: (-item[1][0], item[0]))
    lines = [f"  Ops (sorted by time; {len(ranked)} in all):"]
    for op, (time_, nodes, runs) in ranked[: (limit if limit is not None else len(ranked))]:
        share = 100.0 * time_ / total if total > 0 else 0.0
        lines.append(f"    {share:5.1f}%  {time_:.6f} s  {nodes} node(s), {runs} run(s)  {op}")
    if limit is not None and len(ranked) > limit:
        lines.append(f"    ... {len(ranked) - limit} more ops")
    return lines


def _rewriter_lines(profile):
    """The rewrites applied when compiling (with ``config.profile_optimizer``)."""
    if profile.rewriter_profile is None:
        return []
    lines = ["  Rewriter Profile (rewrites applied when the function was compiled):"]
    if not profile.rewriter_profile:
        lines.append("    no rewrite changed the graph")
    for name, count in sorted(profile.rewriter_profile.items(), key=lambda i: (-i[1], i[0])):
        lines.append(f"    {count:5d}  {name}")
    return lines


def html_table(profile):
    """An HTML table of the nodes in schedule order; the peak-memory row is marked."""
    esc = html.escape
    header = "<br>".join(esc(line.strip()) for line in profile._header_lines())
    parts = [
        '<div class="lucent-profile">',
        f"<p>{header}</p>",
        '<table class="lucent-profile-table">',
        "<thead><tr>" + "".join(f"<th>{esc(c)}</th>" for c in COLUMNS) + "</tr></thead>",
        "<tbody>",
    ]
    for row in flatten_rows(profile.as_rows("order")):
        classes, styles = [], []
        if row["is_peak"] and not row["depth"]:
            classes.append("peak")
            styles.append("font-weight: bold; background: #fde2e2")
        if row["depth"]:
            # an inner node, under the row of the node holding its graph
            classes.append("lucent-profile-inner")
            styles.append("color: #555")
        attrs = f' data-path="{esc(row["path"])}"'
        if row["parent"] is not None:
            attrs += f' data-parent="{esc(row["parent"])}"'
        if classes:
            attrs += f' class="{" ".join(classes)}"'
        if styles:
            attrs += f' style="{"; ".join(styles)}"'
        if row["is_peak"] and not row["depth"]:
            attrs += ' title="peak memory"'
        cells = list(_row_cells(row, " (peak)"))
        indent = f' style="padding-left: {0.3 + 1.2 * row["depth"]:.1f}em"' if row["depth"] else ""
        tds = [f"<td{indent if c < 2 else ''}>{esc(text.strip())}</td>" for c, text in enumerate(cells)]
        if row["steps"] is not None:
            noun = "steps" if row["inner_unit"] == "step" else "runs"
            tds[1] = tds[1][:-5] + f" <small>({row['steps']} {noun} in the last call)</small></td>"
        parts.append(f"<tr{attrs}>" + "".join(tds) + "</tr>")
    parts += ["</tbody>", "</table>", "</div>"]
    return "\n".join(parts)


__all__ = ["COLUMNS", "flatten_rows", "format_bytes", "header_lines", "html_table", "summary_lines"]
