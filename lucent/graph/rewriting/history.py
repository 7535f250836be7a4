"""Recording what rewriting did to a graph, so users can see it.

``RewriteHistory`` is a FunctionGraph feature. Every replacement made
through ``fgraph.replace`` with a ``reason`` (the rewriter's name) is
recorded as a ``RewriteRecord``: which rewrite, which variable it replaced,
with what, and the text of both. The history can be printed
(``config.optimizer_verbose`` prints as it happens) and replayed step by
step in a notebook.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lucent.graph.features import AlreadyThere, Feature


def _snapshot(var):
    """What ``var`` was at rewrite time: itself, or its op and inputs.

    Only references are kept (no string formatting), because rewriting a
    large graph records thousands of replacements; the text is made when the
    history is shown.
    """
    if var.owner is None:
        return (var, None, ())
    return (var, var.owner.op, tuple(var.owner.inputs))


def _describe(snapshot):
    var, op, inputs = snapshot
    if op is None:
        return str(var)
    return f"{op}({', '.join(str(i) for i in inputs)})"


@dataclass
class RewriteRecord:
    """One replacement: ``old`` became ``new`` because of ``rewrite``."""

    step: int
    rewrite: str
    old: object
    new: object
    old_snapshot: tuple = ()
    new_snapshot: tuple = ()
    extra: dict = field(default_factory=dict)

    @property
    def old_text(self):
        return _describe(self.old_snapshot)

    @property
    def new_text(self):
        return _describe(self.new_snapshot)

    def __str__(self):
        return f"{self.step:4d}. {self.rewrite}: {self.old_text}  ->  {self.new_text}"


class RewriteHistory(Feature):
    """Records every variable replacement made in the graph, in order.

    Replacements made on behalf of one rewrite (several clients of one
    variable) are recorded once.
    """

    def __init__(self):
        self.records: list[RewriteRecord] = []
        self._last = None

    def on_attach(self, fgraph):
        if hasattr(fgraph, "rewrite_history"):
            raise AlreadyThere()
        fgraph.rewrite_history = self

    def on_detach(self, fgraph):
        if getattr(fgraph, "rewrite_history", None) is self:
            del fgraph.rewrite_history

    def on_change_input(self, fgraph, node, i, var, new_var, reason=None):
        if reason is None or reason == "init" or str(reason).startswith("revert:"):
            return
        key = (id(var), id(new_var), str(reason))
        if key == self._last:
            return
        self._last = key
        record = RewriteRecord(
            step=len(self.records) + 1,
            rewrite=str(getattr(reason, "name", None) or reason),
            old=var,
            new=new_var,
            old_snapshot=_snapshot(var),
            new_snapshot=_snapshot(new_var),
        )
        self.records.append(record)
        from lucent.configdefaults import config

        if config.optimizer_verbose:
            print(f"rewriting: {record}")

    def clone(self):
        return RewriteHistory()

    def __len__(self):
        return len(self.records)

    def __iter__(self):
        return iter(self.records)

    def counts(self):
        """How many replacements each rewrite made, most first."""
        out = {}
        for r in self.records:
            out[r.rewrite] = out.get(r.rewrite, 0) + 1
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))

    def summary(self):
        """Text listing every replacement in order."""
        if not self.records:
            return "No rewrite changed the graph."
        lines = [f"{len(self.records)} replacements:"]
        lines.extend(str(r) for r in self.records)
        return "\n".join(lines)

    def __str__(self):
        return self.summary()

    def _repr_html_(self):
        import html

        if not self.records:
            return "<p>No rewrite changed the graph.</p>"
        rows = "".join(
            f"<tr><td>{r.step}</td><td>{html.escape(r.rewrite)}</td>"
            f"<td><code>{html.escape(r.old_text)}</code></td>"
            f"<td><code>{html.escape(r.new_text)}</code></td></tr>"
            for r in self.records
        )
        return (
            "<table><thead><tr><th>#</th><th>rewrite</th><th>replaced</th><th>by</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
        )
