"""What one DebugMode call found, readable as text and in a notebook.

``DebugReport`` collects the problems (``DebugModeError`` instances) of a
call in the order they were found, together with what was and was not
checked: nodes checked on the reference path only (their op has no Numba
kernel; not an error, but the user should know the fast path was not
compared there) and rewrite records that could not be evaluated. It is
iterable over the problems; ``ok`` says whether there were none.
"""

from __future__ import annotations

import html


class DebugReport:
    """The outcome of one DebugMode call.

    Attributes
    ----------
    problems
        ``DebugModeError`` instances, in the order found.
    reference_only
        ``[(node, reason), ...]``: nodes run on ``perform`` only.
    nodes_run
        How many nodes ran (fewer than the graph's when the call stopped early).
    n_nodes
        How many nodes the graph has.
    rewrites_checked, rewrites_skipped, rewrites_unevaluated, rewrites_not_run
        Rewrite records compared; not evaluable from the inputs; whose
        pre-rewrite graph raised on this call's values; inside an ``ifelse``
        branch this call did not take.
    finished
        False when the call stopped at a problem (``on_error="raise"``) or an error.
    inputs
        Copies of the call's graph input values (one per
        ``fgraph.inputs``), or None: a view replays them to show the values
        every node had in this call.
    """

    def __init__(self, n_nodes=0, reference_only=()):
        self.problems = []
        self.reference_only = list(reference_only)
        self.n_nodes = n_nodes
        self.nodes_run = 0
        self.rewrites_checked = 0
        self.rewrites_skipped = 0
        self.rewrites_unevaluated = 0
        self.rewrites_not_run = 0
        self.finished = False
        self.inputs = None

    @property
    def ok(self):
        """True when no problem was found."""
        return not self.problems

    def __iter__(self):
        return iter(self.problems)

    def add(self, problems):
        self.problems.extend(problems)

    def counts(self):
        """``{kind: number of problems}``."""
        out = {}
        for p in self.problems:
            out[p.kind] = out.get(p.kind, 0) + 1
        return out

    # ------------------------------------------------------------------
    def headline(self):
        """One line: how many problems of which kinds (or none), and whether the call finished."""
        state = "" if self.finished else " (the call stopped early)"
        if self.ok:
            head = f"DebugMode: no problem found{state}."
        else:
            kinds = ", ".join(f"{n} {k}" for k, n in self.counts().items())
            head = f"DebugMode: {len(self.problems)} problem(s) found{state}: {kinds}."
        return head

    def coverage_lines(self):
        """What was checked: nodes run, nodes without a Numba kernel, rewrites compared."""
        lines = [
            f"Nodes run: {self.nodes_run} of {self.n_nodes}; of the graph's nodes, "
            f"{len(self.reference_only)} have no usable Numba kernel (reference path only).",
            f"Rewrites checked: {self.rewrites_checked}"
            + (f", not evaluable from the inputs: {self.rewrites_skipped}" if self.rewrites_skipped else "")
            + (f", whose original graph raised: {self.rewrites_unevaluated}" if self.rewrites_unevaluated else "")
            + (f", in branches not taken: {self.rewrites_not_run}" if self.rewrites_not_run else "")
            + ".",
        ]
        return lines

    def __str__(self):
        lines = [self.headline()]
        for k, problem in enumerate(self.problems, 1):
            lines.append("")
            lines.append(f"[{k}] {problem.kind}: {problem}")
        lines.append("")
        lines.extend(self.coverage_lines())
        if self.reference_only:
            lines.append("Checked on the reference path (perform) only, no Numba kernel:")
            for node, reason in self.reference_only:
                lines.append(f"  {node}: {reason}")
        return "\n".join(lines)

    def __repr__(self):
        return f"<DebugReport: {self.headline()}>"

    def _repr_html_(self):
        esc = html.escape
        parts = [f"<p><b>{esc(self.headline())}</b></p>"]
        for k, problem in enumerate(self.problems, 1):
            rows = "".join(
                f"<tr><th style='text-align:left;vertical-align:top'>{esc(label)}</th>"
                f"<td><pre style='margin:0'>{esc(str(text))}</pre></td></tr>"
                for label, text in problem.sections
            )
            parts.append(
                f"<details{' open' if k == 1 else ''}><summary><b>[{k}] {esc(problem.kind)}</b>: "
                f"{esc(problem.summary)}</summary><table>{rows}</table></details>"
            )
        parts.append("<p>" + "<br>".join(esc(line) for line in self.coverage_lines()) + "</p>")
        if self.reference_only:
            items = "".join(
                f"<li><code>{esc(str(node))}</code>: {esc(reason)}</li>" for node, reason in self.reference_only
            )
            parts.append(f"<p>Checked on the reference path only:</p><ul>{items}</ul>")
        return "\n".join(parts)


__all__ = ["DebugReport"]
