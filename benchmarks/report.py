"""Turn measurements into rows, a plain-text table and a Markdown table.

Kept apart from ``run.py`` so the presentation (units, ratios, target
verdicts) can change without touching how measurements are taken.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import workloads

COLUMNS = (
    "workload",
    "backend",
    "median call",
    "vs NumPy",
    "vs 1 thread",
    "compile cold",
    "compile warm",
    "agrees",
    "target",
)


@dataclass
class Row:
    """One table line: a workload on a backend (or a skip note)."""

    workload: str
    group: str
    backend: str
    median_s: float | None = None
    cold_s: float | None = None
    warm_s: float | None = None
    agree: bool | None = None  # None: the NumPy reference itself, or no check
    error: str | None = None
    ratio: float | None = None
    thread_ratio: float | None = None  # multi-threaded backends: median / the one-thread median
    is_group_row: bool = True  # carries the group's target (c's total does)
    target: str = ""

    def as_dict(self):
        return asdict(self)


# --------------------------------------------------------------------------
# Building rows
# --------------------------------------------------------------------------


def rows_from_results(results, quick):
    """Rows for every (case, backend) measured, plus the c-total rows."""
    rows = []
    for (case_key, backend), phases in results.items():
        case = workloads.CASES_BY_KEY[case_key]
        rows.append(_row(case, backend, phases))
    rows.extend(_group_totals(rows))
    _add_ratios(rows)
    for row in rows:
        row.target = target_text(row, quick)
    order = {c.key: i for i, c in enumerate(workloads.CASES)}
    backend_order = {b.name: i for i, b in enumerate(workloads.BACKENDS)}
    rows.sort(key=lambda r: (r.group, order.get(r.workload, 99), backend_order.get(r.backend, 99)))
    return rows


def _row(case, backend, phases):
    cold, warm = phases.get("cold", {}), phases.get("warm", {})
    error = warm.get("error") or cold.get("error")
    single = sum(c.group == case.group for c in workloads.CASES) == 1
    return Row(
        workload=case.key,
        group=case.group,
        backend=backend,
        median_s=warm.get("median_s"),
        cold_s=None if _is_numpy(backend) else cold.get("compile_s"),
        warm_s=None if _is_numpy(backend) else warm.get("compile_s"),
        agree=warm.get("agree"),
        error=error,
        is_group_row=single,
    )


def _is_numpy(backend):
    known = workloads.BACKENDS_BY_NAME.get(backend)
    return backend == "numpy" or (known is not None and known.kind == "numpy")


def _group_totals(rows):
    """For a group of several cases (``c``), one row per backend summing them."""
    totals = []
    for group in workloads.GROUPS:
        keys = [c.key for c in workloads.CASES if c.group == group]
        if len(keys) < 2:
            continue
        backends = {r.backend for r in rows if r.group == group}
        for backend in backends:
            parts = [r for r in rows if r.group == group and r.backend == backend]
            if {r.workload for r in parts} != set(keys):
                continue  # only some of the group was selected
            totals.append(_sum_rows(group, backend, parts))
    return totals


def _sum_rows(group, backend, parts):
    def total(attr):
        values = [getattr(p, attr) for p in parts]
        return None if any(v is None for v in values) else sum(values)

    errors = [p.error for p in parts if p.error]
    agrees = [p.agree for p in parts]
    agree = None if all(a is None for a in agrees) else all(a is not False for a in agrees)
    return Row(
        workload=f"{group} total",
        group=group,
        backend=backend,
        median_s=total("median_s"),
        cold_s=total("cold_s"),
        warm_s=total("warm_s"),
        agree=agree,
        error=errors[0] if errors else None,
    )


def _add_ratios(rows):
    numpy_time = {r.workload: r.median_s for r in rows if r.backend == "numpy"}
    times = {(r.workload, r.backend): r.median_s for r in rows}
    for row in rows:
        ref = numpy_time.get(row.workload)
        if ref and row.median_s is not None:
            row.ratio = row.median_s / ref
        backend = workloads.BACKENDS_BY_NAME.get(row.backend)
        single = times.get((row.workload, backend.single)) if backend is not None and backend.single else None
        if single and row.median_s is not None:
            row.thread_ratio = row.median_s / single


def skipped_rows(skipped):
    """One row per backend that could not run, so the table shows the gap."""
    return [Row(workload="all", group="~", backend=name, error=f"skipped: {why}")
            for name, why in skipped.items()]


# --------------------------------------------------------------------------
# Targets
# --------------------------------------------------------------------------


def target_text(row, quick):
    """The goal for lucent FAST_RUN rows, the reference figure given for the others otherwise."""
    if not row.is_group_row:
        return ""
    target = workloads.TARGETS.get(row.group, {}).get(row.backend)
    if target is None:
        ref = workloads.REFERENCES.get((row.group, row.backend))
        if not ref:
            return ""
        return f"ref (full size): {ref}" if quick else f"ref: {ref}"
    checks = [
        ("", row.median_s, target.call, fmt_time),
        ("", row.ratio, target.ratio, lambda r: f"{r:.2f}x NumPy"),
        ("", row.thread_ratio, target.thread_ratio, lambda r: f"{r:.2f}x 1 thread"),
        ("cold ", row.cold_s, target.cold, fmt_time),
        ("warm ", row.warm_s, target.warm, fmt_time),
    ]
    parts = [_verdict(label, value, limit, show, quick)
             for label, value, limit, show in checks if limit is not None]
    return "; ".join(parts)


def _verdict(label, value, limit, show, quick):
    text = f"{label}<= {show(limit)}"
    if quick:
        return f"{text} (not judged: --quick)"
    if value is None:
        return f"{text} (no figure)"
    if value <= limit:
        return f"{text}: met"
    return f"{text}: MISSED ({value / limit:.1f}x)"


# --------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------


def fmt_time(seconds):
    if seconds is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def _cells(row, error_width=None):
    if row.error:
        median = row.error if row.error.startswith("skipped") else f"ERROR: {row.error}"
        if error_width and len(median) > error_width and not row.error.startswith("skipped"):
            median = median[: error_width - 3] + "..."
        return [row.workload, row.backend, median, "", "", "", "", "", row.target]
    agree = {True: "yes", False: "NO - MISMATCH", None: "ref" if row.backend == "numpy" else "-"}
    return [
        row.workload,
        row.backend,
        fmt_time(row.median_s),
        "-" if row.ratio is None else f"{row.ratio:.2f}x",
        "-" if row.thread_ratio is None else f"{row.thread_ratio:.2f}x",
        fmt_time(row.cold_s),
        fmt_time(row.warm_s),
        agree[row.agree],
        row.target,
    ]


def text_table(rows):
    """A fixed-width table for the terminal (errors in full under the table).

    A skip note or an error may overflow its column rather than widen it.
    """
    cells = [list(COLUMNS)] + [_cells(r, error_width=24) for r in rows]
    sized = [c for c in cells if not c[2].startswith("skipped")]
    widths = [max(len(c[i]) for c in sized) for i in range(len(COLUMNS))]
    lines = []
    for i, line in enumerate(cells):
        if line[2].startswith("skipped"):
            lines.append("  ".join([line[0].ljust(widths[0]), line[1].ljust(widths[1]), line[2]]))
        else:
            lines.append("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def markdown_table(rows):
    def esc(text):
        return text.replace("|", "\\|")

    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row in rows:
        lines.append("| " + " | ".join(esc(c) for c in _cells(row, error_width=120)) + " |")
    return "\n".join(lines)


def problems(rows):
    """Lines for every mismatch and error: these must not go unnoticed."""
    out = []
    for row in rows:
        if row.agree is False:
            out.append(f"MISMATCH: {row.workload} on {row.backend} disagrees with NumPy")
        if row.error and not row.error.startswith("skipped"):
            out.append(f"ERROR: {row.workload} on {row.backend}: {row.error}")
    return out


LEGEND = """\
- *median call*: median wall time of one call (batched for fast calls, after warm-up, GC off).
- *vs NumPy*: median call / NumPy's median call on the same workload (below 1 is faster).
- *vs 1 thread*: for the multi-threaded backends (`-2t`: two threads; `jax-default-threads`:
  XLA's own threading), median call / the same library's single-thread median call.
- *compile cold / warm*: graph building + `function(...)` + first call - one steady call,
  in a fresh process with an empty cache directory (cold), then in a second fresh process
  sharing that directory (warm). Library import time is not included.
- *agrees*: the first call's outputs (and updated parameters) `allclose` to NumPy's.
- *target*: the goal set for lucent FAST_RUN, or the reference figure given for the others.
"""


def markdown_document(rows, header):
    """The README-ready section: provenance, table, legend, notes."""
    lines = ["## Benchmarks", ""]
    lines.append(f"Measured {header['date']} with:")
    lines += ["", "```bash", header["command"], "```", ""]
    lines += [f"- {item}" for item in header["machine"]]
    lines += [f"- {item}" for item in header["notes"]]
    lines += ["", markdown_table(rows), "", LEGEND]
    issues = problems(rows)
    if issues:
        lines += ["**Problems:**", ""] + [f"- {p}" for p in issues] + [""]
    return "\n".join(lines)
