"""Recording what rewriting did to a graph, so users can see it.

``RewriteHistory`` is a FunctionGraph feature. Every replacement made
through ``fgraph.replace`` with a ``reason`` (the rewriter's name) is
recorded as a ``RewriteRecord``: which rewrite, which variable it replaced,
with what, and the text of both. The history can be printed
(``config.optimizer_verbose`` prints as it happens) and replayed step by
step in a notebook (``lucent.widgets.RewriteView``).

Stepping through needs the graph as it was before and after each record,
but rewriting mutates one graph in place: the Apply nodes of the final
graph are the ones the first rewrite saw, with some inputs rewired. So the
history also keeps an *event log*: every input change of every node (and
every change of an output), ``(node, index, old, new)``, in order, reverts
included. That is one tuple append per change, and it is all that is
recorded: any past state is rebuilt on demand (``inputs_at``,
``outputs_at``, ``mirror``) by undoing, slot by slot, the changes made
after it. Nothing is cloned or formatted while rewriting, so compiling
costs the same whether or not the history is ever looked at.

Inner graphs (a loop's body, an ``OpFromGraph``'s graph) are rewritten on
their own copy of the graph, with their own ``RewriteHistory``. The pass
that then replaces the node by one with the rewritten inner graph links
that history to its record (``RewriteRecord.inner_history``,
``RewriteHistory.link_inner``), and the rewritten op keeps it
(``inner_rewrite_history``), so a body rewritten once and reused from a
cache still shows how it was rewritten. ``inner_histories()`` lists them
(recursively for loops nested in a body), and ``counts``, ``summary`` and
the notebook table mention them. Linking is one dictionary entry per
record of that pass; nothing is copied.
"""

from __future__ import annotations

import bisect
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


def _aliasing(op, attr):
    return {int(k): tuple(v) for k, v in (getattr(op, attr, None) or {}).items()}


def _props_text(op):
    props = getattr(op, "__props__", None) or ()
    if not props:
        return repr(op)
    return f"{type(op).__name__}(" + ", ".join(f"{p}={getattr(op, p, None)!r}" for p in props) + ")"


def what_changed(record):
    """Plain-text lines saying how ``record``'s replacement differs from what it replaced.

    The before and after texts of a record often print the same: merging
    two identical nodes, making an op work in place, refining a type or
    rewiring an input to another variable of the same name all keep the
    text. These lines say which of those happened, so such a row never
    reads as a change that changed nothing. Returns ``[]`` when the texts
    differ and nothing else changed. A replacement that brought in a
    rewritten inner graph says so (with how many rewrites it had).
    """
    lines = _plain_changes(record)
    inner = record.extra.get("inner_history") if record.extra else None
    if inner is not None:
        lines = [line for line in lines if not line.startswith("another op that prints the same")]
        total = sum(inner.counts(inner=True).values())
        lines.append(f"{record.extra.get('inner_label')} rewritten: {_rewrites(total)} (listed after this graph's)")
    return lines


def _plain_changes(record):
    """``what_changed`` without the inner graph's line."""
    old, old_op, old_inputs = record.old_snapshot or (record.old, None, ())
    new, new_op, new_inputs = record.new_snapshot or (record.new, None, ())
    lines = []
    same_text = record.old_text == record.new_text
    if old.type != new.type:
        lines.append(f"type {old.type} -> {new.type}")
    if not same_text:
        return lines
    if old_op is None or new_op is None:
        if old is not new:
            from lucent.graph.basic import Constant

            both_constants = isinstance(old, Constant) and isinstance(new, Constant)
            lines.append(
                "merged a duplicate constant: an equal constant is used instead" if both_constants
                else "replaced by another variable that prints the same"
            )
        return lines
    old_d, new_d = _aliasing(old_op, "destroy_map"), _aliasing(new_op, "destroy_map")
    if old_d != new_d:
        if new_d and not old_d:
            ins = sorted({i for v in new_d.values() for i in v})
            lines.append(f"made in place: now overwrites input {', '.join(map(str, ins))} (destroy_map {new_d})")
        elif old_d and not new_d:
            lines.append("no longer in place (destroy_map removed)")
        else:
            lines.append(f"destroy_map {old_d} -> {new_d}")
    old_v, new_v = _aliasing(old_op, "view_map"), _aliasing(new_op, "view_map")
    if old_v != new_v:
        lines.append(
            f"now a view of input {', '.join(str(i) for v in new_v.values() for i in v)}"
            if new_v and not old_v
            else f"view_map {old_v} -> {new_v}"
        )
    aliasing_changed = old_d != new_d or old_v != new_v
    if not aliasing_changed and old_op == new_op and len(old_inputs) == len(new_inputs) and all(
        a is b for a, b in zip(old_inputs, new_inputs)
    ):
        lines.append(
            "merged a duplicate: the same op on the same inputs was computed twice; "
            "the other copy is used instead"
        )
        return lines
    if old_op != new_op and not aliasing_changed:
        old_props, new_props = _props_text(old_op), _props_text(new_op)
        lines.append(
            f"op parameters {old_props} -> {new_props}" if old_props != new_props
            else f"another op that prints the same ({type(old_op).__name__} -> {type(new_op).__name__})"
        )
    rewired = [
        k for k, (a, b) in enumerate(zip(old_inputs, new_inputs)) if a is not b
    ]
    if rewired:
        lines.append(
            "input " + ", ".join(map(str, rewired))
            + " now comes from another variable that prints the same (e.g. a merged duplicate)"
        )
    if not lines:
        lines.append("a new node computing the same thing (same op, inputs that print the same)")
    return lines


@dataclass(slots=True)
class RewriteRecord:
    """One replacement: ``old`` became ``new`` because of ``rewrite``.

    ``first_event`` and ``end_event`` delimit the changes of the history's
    event log this replacement made: the graph before it is the graph at
    ``first_event``, after it the graph at ``end_event``. ``reverted`` is
    set when the change was undone (a feature rejected the rewrite).
    """

    step: int
    rewrite: str
    old: object
    new: object
    old_snapshot: tuple = ()
    new_snapshot: tuple = ()
    extra: dict = field(default_factory=dict)
    first_event: int = 0
    end_event: int = 0
    reverted: bool = False

    @property
    def inner_history(self):
        """The ``RewriteHistory`` of the inner graph this replacement brought in, or ``None``.

        Set for the replacement of a node by one whose inner graph (a loop's
        body, an ``OpFromGraph``'s graph) was rewritten on its own.
        """
        return self.extra.get("inner_history")

    @property
    def inner_label(self):
        """What the inner graph is (``scan "rnn" body``), or ``None`` without an inner history."""
        return self.extra.get("inner_label")

    @property
    def old_text(self):
        return _describe(self.old_snapshot)

    @property
    def new_text(self):
        return _describe(self.new_snapshot)

    def what_changed(self):
        """See the module function ``what_changed``."""
        return what_changed(self)

    def __str__(self):
        text = f"{self.step:4d}. {self.rewrite}: {self.old_text}  ->  {self.new_text}"
        changed = self.what_changed()
        if changed:
            text += "  [" + "; ".join(changed) + "]"
        if self.reverted:
            text += "  (undone)"
        return text


#: Notebook front ends right-align table cells; text columns read better left-aligned.
_LEFT = ' style="text-align:left;vertical-align:top"'

#: Rows of the HTML table of a history (a notebook display); the text form lists every record.
HTML_ROWS = 400


class RewriteHistory(Feature):
    """Records every variable replacement made in the graph, in order.

    Replacements made on behalf of one rewrite (several clients of one
    variable) are recorded once.
    """

    def __init__(self):
        self.records: list[RewriteRecord] = []
        #: ``(node or "output", index, old variable, new variable)`` per input change.
        self.events: list[tuple] = []
        self.fgraph = None
        self.initial_outputs = []
        self._last = None
        self._slots = None

    def on_attach(self, fgraph):
        if hasattr(fgraph, "rewrite_history"):
            raise AlreadyThere()
        fgraph.rewrite_history = self
        self.fgraph = fgraph
        self.initial_outputs = list(fgraph.outputs)

    def on_detach(self, fgraph):
        if getattr(fgraph, "rewrite_history", None) is self:
            del fgraph.rewrite_history

    def on_change_input(self, fgraph, node, i, var, new_var, reason=None):
        self.events.append((node, i, var, new_var))
        if reason is None or reason == "init":
            return
        if str(reason).startswith("revert:"):
            self._mark_reverted(var, new_var)
            return
        key = (id(var), id(new_var), str(reason))
        if key == self._last:
            self.records[-1].end_event = len(self.events)
            return
        self._last = key
        record = RewriteRecord(
            step=len(self.records) + 1,
            rewrite=str(getattr(reason, "name", None) or reason),
            old=var,
            new=new_var,
            old_snapshot=_snapshot(var),
            new_snapshot=_snapshot(new_var),
            first_event=len(self.events) - 1,
            end_event=len(self.events),
        )
        self.records.append(record)
        if _verbose():
            print(f"rewriting: {record}")

    def _mark_reverted(self, restored, undone):
        self._last = None
        for record in reversed(self.records[-8:]):
            if record.new is restored and record.old is undone:
                record.reverted = True
                return

    def clone(self):
        return RewriteHistory()

    def __len__(self):
        return len(self.records)

    def __iter__(self):
        return iter(self.records)

    def __getitem__(self, k):
        return self.records[k]

    # --- past states of the graph ------------------------------------------------------
    def _slot_index(self):
        """``{(node or "output", i): ([event index], [(old, new)])}``, rebuilt when events grew."""
        if self._slots is None or self._slots[0] != len(self.events):
            slots = {}
            for k, (node, i, old, new) in enumerate(self.events):
                entry = slots.get((node, i))
                if entry is None:
                    entry = slots[(node, i)] = ([], [])
                entry[0].append(k)
                entry[1].append((old, new))
            self._slots = (len(self.events), slots)
        return self._slots[1]

    def input_at(self, node, i, t):
        """Input ``i`` of ``node`` (``"output"``: output ``i``) when ``t`` events had been applied."""
        entry = self._slot_index().get((node, i))
        if entry is not None:
            k = bisect.bisect_left(entry[0], t)
            if k < len(entry[0]):
                return entry[1][k][0]
        if node == "output":
            return self.fgraph.outputs[i] if i < len(self.fgraph.outputs) else self.initial_outputs[i]
        return node.inputs[i]

    def outputs_at(self, t):
        """The graph's outputs after ``t`` events (``0``: before rewriting)."""
        n = max(len(self.initial_outputs), len(self.fgraph.outputs) if self.fgraph is not None else 0)
        return [self.input_at("output", j, t) for j in range(n)]

    def nodes_at(self, t):
        """The Apply nodes the graph computes after ``t`` events (a set)."""
        seen = set()
        stack = [v.owner for v in self.outputs_at(t) if v.owner is not None]
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            for i in range(len(node.inputs)):
                var = self.input_at(node, i, t)
                if var.owner is not None and var.owner not in seen:
                    stack.append(var.owner)
        return seen

    def before(self, record):
        """The event count of the graph just before ``record`` (a record or its 1-based step)."""
        return self._record(record).first_event

    def after(self, record):
        """The event count of the graph just after ``record``."""
        return self._record(record).end_event

    def _record(self, record):
        if isinstance(record, RewriteRecord):
            return record
        if not isinstance(record, int) or not 1 <= record <= len(self.records):
            raise IndexError(f"step must be a record or a number from 1 to {len(self.records)}, got {record!r}")
        return self.records[record - 1]

    def changed_nodes(self, record):
        """``(removed, added, rewired)`` Apply node sets of one record's change.

        ``removed``: computed before the record and not after; ``added``:
        the reverse; ``rewired``: nodes whose inputs the record changed.
        """
        record = self._record(record)
        before, after = self.nodes_at(record.first_event), self.nodes_at(record.end_event)
        rewired = {
            node for node, _, _, _ in self.events[record.first_event:record.end_event] if node != "output"
        }
        return before - after, after - before, rewired

    def mirror(self, t, outputs=None, keep=None, limit=None):
        """A copy of the graph as it was after ``t`` events, as new Variables.

        ``outputs``: the variables to start from (default: the graph's
        outputs at ``t``). ``keep``: only these Apply nodes are copied;
        a variable computed by another node becomes an input placeholder
        named after it, so a neighbourhood can be drawn without the rest.
        ``limit``: at most this many nodes are copied (nearest the outputs
        first). Returns ``(outputs, originals)``: the copied outputs and
        ``{copied Apply: original Apply}``.
        """
        from lucent.graph.basic import Apply, Constant, Variable

        starts = self.outputs_at(t) if outputs is None else list(outputs)
        # Which nodes to copy: breadth first from the outputs, so ``limit`` keeps the nearest.
        chosen, order = set(), []
        frontier = [v.owner for v in starts if v.owner is not None]
        while frontier:
            nxt = []
            for node in frontier:
                if node in chosen or (keep is not None and node not in keep):
                    continue
                if limit is not None and len(chosen) >= limit:
                    break
                chosen.add(node)
                order.append(node)
                nxt.extend(self.input_at(node, i, t).owner for i in range(len(node.inputs)))
            frontier = [n for n in nxt if n is not None]
        copies, originals = {}, {}

        def leaf(var):
            if var.owner is None or isinstance(var, Constant):
                return var
            ph = copies.get(var)
            if ph is None:
                name = var.name or _short(str(var.owner.op) + "(...)")
                ph = copies[var] = Variable(var.type, None, None, name=name)
            return ph

        # Copy in dependency order (inputs first), iteratively.
        for node in _dependency_order(order, chosen, lambda n, i: self.input_at(n, i, t)):
            ins = []
            for i in range(len(node.inputs)):
                var = self.input_at(node, i, t)
                ins.append(copies[var] if var.owner in chosen else leaf(var))
            copy = Apply(node.op, ins, [out.clone() for out in node.outputs])
            copy.tag = node.tag
            for out, c in zip(node.outputs, copy.outputs):
                copies[out] = c
            originals[copy] = node
        result = [copies[v] if v.owner in chosen else leaf(v) for v in starts]
        return result, originals

    # --- inner graphs ----------------------------------------------------------------
    def link_inner(self, first_record, label, inner):
        """Say that the records from number ``first_record`` (0-based) on brought in ``inner``.

        ``label`` names the inner graph (``scan "rnn" body``); ``inner`` is
        the ``RewriteHistory`` of its rewriting. Called by the pass that
        replaced the node, right after the replacement.
        """
        for record in self.records[first_record:]:
            record.extra["inner_history"] = inner
            record.extra["inner_label"] = label

    def inner_histories(self, nested=True):
        """``[(label, RewriteHistory)]`` of the inner graphs rewritten for this graph.

        In the order their records come; an inner history shared by several
        records (one loop with several outputs, one ``OpFromGraph`` used
        twice) is listed once. ``nested``: also the inner graphs of those
        inner graphs, labelled by their path (``scan "outer" body > scan
        "inner" body``).
        """
        out, seen = [], set()
        self._collect_inner(out, seen, "", nested)
        return out

    def _collect_inner(self, out, seen, prefix, nested):
        for record in self.records:
            inner = record.inner_history
            if inner is None or record.reverted or id(inner) in seen:
                continue
            seen.add(id(inner))
            label = prefix + record.inner_label
            out.append((label, inner))
            if nested:
                inner._collect_inner(out, seen, label + " > ", nested)

    # --- text ----------------------------------------------------------------------------
    def counts(self, inner=False):
        """How many replacements each rewrite made, most first.

        ``inner``: also count the replacements made in the inner graphs
        (``inner_histories``), added to the same names.
        """
        out = {}
        for r in self.records:
            out[r.rewrite] = out.get(r.rewrite, 0) + 1
        if inner:
            for _, history in self.inner_histories():
                for name, n in history.counts().items():
                    out[name] = out.get(name, 0) + n
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))

    def inner_summary_lines(self):
        """One line per inner graph: ``scan "rnn" body: 12 rewrites: elemwise_fusion 3, ...``."""
        return [f"{label}: {_counts_text(history)}" for label, history in self.inner_histories()]

    def summary(self):
        """Text listing every replacement in order (with what changed when the texts agree),
        then each inner graph's replacements."""
        if not self.records:
            return "No rewrite changed the graph."
        lines = [f"{len(self.records)} replacements:"]
        lines.extend(str(r) for r in self.records)
        for label, history in self.inner_histories():
            lines.append("")
            lines.append(f"{label}: {_counts_text(history)}")
            lines.extend("  " + str(r) for r in history.records)
        return "\n".join(lines)

    def __str__(self):
        return self.summary()

    def __repr__(self):
        n_inner = len(self.inner_histories())
        inner = f", {n_inner} inner graph{'' if n_inner == 1 else 's'}" if n_inner else ""
        return f"<RewriteHistory: {len(self.records)} replacements{inner}>"

    def _repr_html_(self):
        import html

        if not self.records:
            return "<p>No rewrite changed the graph.</p>"
        rows = []
        for r in self.records[:HTML_ROWS]:
            changed = r.what_changed()
            note = html.escape("; ".join(changed))
            if r.reverted:
                note = (note + "; " if note else "") + "undone"
            faded = ' style="opacity:0.6"' if r.reverted else ""
            cells = (
                str(r.step), html.escape(r.rewrite),
                f"<code>{html.escape(_short(r.old_text, 200))}</code>",
                f"<code>{html.escape(_short(r.new_text, 200))}</code>", note,
            )
            rows.append(f"<tr{faded}>" + "".join(f"<td{_LEFT}>{c}</td>" for c in cells) + "</tr>")
        counts = ", ".join(f"{html.escape(k)} \u00d7{v}" for k, v in list(self.counts().items())[:8])
        rest = len(self.records) - HTML_ROWS
        more = (
            f"<p>... and {rest} more (<code>str(history)</code> lists them all; "
            "<code>lucent.widgets.RewriteView(fn)</code> steps through them)</p>" if rest > 0 else ""
        )
        # Each inner graph folded under one line; its own table (and its inner graphs) inside.
        inner = "".join(
            f'<details class="lucent-rewrite-inner"><summary>{html.escape(record.inner_label)}: '
            f"{html.escape(_counts_text(history))}</summary>{history._repr_html_()}</details>"
            for record, history in self._direct_inner()
        )
        return (
            f'<div style="font-size:90%"><p><b>{len(self.records)} replacements</b> ({counts}'
            f"{', ...' if len(self.counts()) > 8 else ''})</p>"
            "<table><thead><tr>"
            + "".join(f"<th{_LEFT}>{h}</th>" for h in ("#", "rewrite", "replaced", "by", "what changed"))
            + "</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>{more}{inner}</div>"
        )

    def _direct_inner(self):
        """``[(first record, inner history)]`` of this graph's own inner graphs (not nested ones)."""
        out, seen = [], set()
        for record in self.records:
            inner = record.inner_history
            if inner is not None and not record.reverted and id(inner) not in seen:
                seen.add(id(inner))
                out.append((record, inner))
        return out


def _rewrites(n):
    return f"{n} rewrite{'' if n == 1 else 's'}"


def _counts_text(history, most=8):
    """``12 rewrites: elemwise_fusion 3, merge 2, ...`` (the inner graph's own, plus its nested ones')."""
    counts = history.counts(inner=True)
    total = sum(counts.values())
    if not total:
        return "no rewrite changed it"
    names = ", ".join(f"{k} {v}" for k, v in list(counts.items())[:most])
    return f"{_rewrites(total)}: {names}{', ...' if len(counts) > most else ''}"


_config = None


def _verbose():
    global _config
    if _config is None:
        from lucent.configdefaults import config

        _config = config
    return _config.optimizer_verbose


def _short(text, limit=40):
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _dependency_order(nodes, chosen, input_of):
    """``nodes`` ordered so that each comes after the chosen nodes it reads (iterative DFS)."""
    done, out = set(), []
    for root in nodes:
        if root in done:
            continue
        stack = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if node in done:
                continue
            if expanded:
                done.add(node)
                out.append(node)
                continue
            stack.append((node, True))
            for i in range(len(node.inputs)):
                owner = input_of(node, i).owner
                if owner is not None and owner in chosen and owner not in done:
                    stack.append((owner, False))
    return out
