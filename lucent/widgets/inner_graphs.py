"""Opening a node's inner graph in ``GraphView``: a loop's body or an ``OpFromGraph``, with its values.

A ``Scan`` is one box in the function's graph, yet the computation a user
debugs is its body: ``h = tanh(W @ h + x_t)``. A node whose op carries an
inner ``FunctionGraph`` (``HasInnerGraph``: a ``Scan``, an
``OpFromGraph``) is therefore drawn as a box that opens (``openable_markers``),
and the opened graph is one more level of the view (``InnerLevel``), with
the same panel per node as the outer graph.

Which values an inner graph shows
---------------------------------
A loop runs its body many times; the view shows one step, the last one of
the last replayed call (or the step a checking tool points at, when a level
is *pinned* to it). The outer replay keeps a copy of what each openable node
read (``InputCopies``, taken as the replay produces the values, before a
later in-place node could overwrite them); opening the node reruns it on
the reference path (``Scan.run_reference``), whose ``on_step`` sees each
step's inner input values, keeps the chosen step's, and replays the inner
graph node by node from them (``lucent.compile.watch.replay``). An
``OpFromGraph`` has no steps: its inner graph is replayed from the node's
input values of the call. A loop inside the loop opens the same way, from
the values its enclosing level's replay read.

Branches
--------
An ``ifelse`` has no inner graph: its branches are nodes of the same graph,
and a call runs only the chosen one. A replay runs both (it replays node by
node), so the view records each branching node's condition and marks the
branch that ran on the ifelse's box, and greys the nodes the call did not
run (``branch_choices``, ``skipped_nodes``), leaving out their values.
"""

from __future__ import annotations

from lucent.compile.watch import replay
from lucent.debugmode.values import copy_value, is_immutable
from lucent.graph.dot import Annotation, GraphDot
from lucent.graph.fg import FunctionGraph
from lucent.graph.op import HasInnerGraph
from lucent.link.python.branches import BranchPlan, branches_of
from lucent.widgets.node_entries import node_entries
from lucent.widgets.value_summary import safe_summarize

#: The last label line of a box that opens (the browser opens it on a click of this line).
OPEN_MARK = "⊞"

#: How the nodes a call did not run (an untaken ``ifelse`` branch) are drawn.
SKIPPED_LOOK = dict(fill="#f3f4f6", font_color="#9ca3af")


def opens_inner_graph(node):
    """Whether ``node``'s op carries an inner graph a view can open (a Scan, an OpFromGraph)."""
    op = getattr(node, "op", None)
    return isinstance(op, HasInnerGraph) and isinstance(getattr(op, "fgraph", None), FunctionGraph)


def _is_loop(op):
    return hasattr(op, "run_reference") and hasattr(op, "layout")


def inner_title(node):
    """``scan "rnn"`` or ``OpFromGraph "name"``: how breadcrumbs and notes name an opened node.

    The loop's spelling is DebugMode's (``debugmode.inner.InnerLocation``), so a report
    and the view name a loop alike.
    """
    op = node.op
    kind = "scan" if _is_loop(op) else type(op).__name__
    name = getattr(op, "name", None) or type(op).__name__
    return f'{kind} "{name}"'


def openable_markers(drawing):
    """``{id: marker line}`` of the Apply nodes of ``drawing`` that open (``GraphDot.openable``)."""
    out = {}
    for node in drawing.nodes:
        if opens_inner_graph(node):
            what = "loop body" if _is_loop(node.op) else "inner graph"
            out[drawing.ids[node]] = f"{OPEN_MARK} opens: {what}"
    return out


def mark_openable(entries, drawing, prefix=""):
    """Add ``opens`` (the title of what opens: ``scan "rnn"``) to the panel entries of the nodes that open."""
    for ident in drawing.openable:
        entries[prefix + ident]["opens"] = inner_title(drawing.objects[ident])
    return entries


def _outer_name(var, fallback):
    if var.name:
        return var.name
    return fallback


def inner_input_names(node):
    """Names for the inner graph's (nameless) inputs, after the outer values that feed them.

    A loop's: ``x[t]`` for a sequence, ``h[t-1]`` for a tap of a recurrent
    output, ``rng (carried)`` for a state carried without a trace, the
    outer name for a constant input. Other ops: the outer input's name.
    """
    op = node.op
    inner = op.fgraph.inputs
    if not _is_loop(op):
        return [_outer_name(v, f"input {k}") if k < len(node.inputs) else None
                for k, v in enumerate(node.inputs[: len(inner)])]
    lay, info = op.layout, op.info
    names = []
    for k in range(info.n_seqs):
        names.append(f"{_outer_name(node.inputs[lay.o_seqs + k], f'sequence {k}')}[t]")
    for k, taps in enumerate(lay.state_taps):
        base = _outer_name(node.outputs[k], f"state {k}")
        names += [f"{base}[t{tap:+d}]" for tap in taps]
    for k in range(info.n_untraced_sit_sot):
        named = node.outputs[lay.out_untraced + k].name or node.inputs[lay.o_untraced + k].name
        names.append(f"{named} (carried)" if named else f"carried state {k}")
    for k in range(info.n_non_seqs):
        names.append(_outer_name(node.inputs[lay.o_non_seqs + k], f"constant {k}"))
    return names + [None] * (len(inner) - len(names))


def inner_output_names(node):
    """Names for the inner graph's outputs: ``h[t]`` for what a step adds to output ``h``."""
    op = node.op
    inner = op.fgraph.outputs
    if not _is_loop(op):
        return [_outer_name(v, None) for v in node.outputs[: len(inner)]]
    lay = op.layout
    names = []
    for k in range(lay.n_outputs):
        if k >= lay.out_untraced:
            named = node.outputs[k].name or node.inputs[lay.o_untraced + k - lay.out_untraced].name
            names.append(f"{named} (carried, next)" if named else f"carried state {k - lay.out_untraced}, next")
        else:
            names.append(f"{node.outputs[k].name}[t]" if node.outputs[k].name else f"step's output {k}")
    if op.info.as_while:
        names.append("until (stops the loop when true)")
    return names


def watched_nodes(nodes):
    """The nodes whose inputs a replay keeps: those that open, and the branching ones (their condition)."""
    return [n for n in nodes if opens_inner_graph(n) or branches_of(n) is not None]


class InputCopies:
    """Copies of what the openable and branching nodes of a graph read, taken during a replay.

    A copy is taken when the value is produced (a graph input, or the
    output of the node that computes it), which is what the reader gets:
    graph rewriting orders a node that overwrites a value after every
    reader of it.
    """

    def __init__(self, nodes):
        self._nodes = watched_nodes(nodes)
        self._wanted = set()
        for node in self._nodes:
            branches = branches_of(node)
            reads = node.inputs if branches is None else [node.inputs[branches[0]]]
            self._wanted.update(v for v in reads if v.owner is not None or not hasattr(v, "data"))
        self._values = {}

    def __bool__(self):
        return bool(self._nodes)

    def seed(self, variables, values):
        """Keep the graph inputs' values (call before the replay)."""
        for var, value in zip(variables, values):
            if var in self._wanted:
                self._values[var] = _copy(value)

    def on_node(self, node, outputs):
        """Keep the outputs the watched nodes read (``replay``'s ``on_node``)."""
        for var, value in zip(node.outputs, outputs):
            if var in self._wanted:
                self._values[var] = _copy(value)

    def value_of(self, var):
        if var in self._values:
            return self._values[var]
        if var.owner is None and hasattr(var, "data"):
            return var.data
        raise KeyError(var)

    def inputs_of(self, node):
        """The values ``node`` read in the replay, or ``None`` when they were not all computed."""
        try:
            return [self.value_of(v) for v in node.inputs]
        except KeyError:
            return None

    def branch_choices(self):
        """``{branching node: 0 (then) or 1 (else)}`` for the branching nodes whose condition was computed."""
        out = {}
        for node in self._nodes:
            branches = branches_of(node)
            if branches is None:
                continue
            try:
                condition = self.value_of(node.inputs[branches[0]])
            except KeyError:
                continue
            out[node] = 0 if condition != 0 else 1
        return out


def _copy(value):
    return value if is_immutable(value) else copy_value(value)


def skipped_nodes(fgraph, choices):
    """The Apply nodes of ``fgraph`` a call with these branch ``choices`` did not run."""
    if not choices:
        return set()
    plan = BranchPlan(fgraph, fgraph.toposort())
    skipped = set()
    for node, contexts in plan.contexts.items():
        if all(any(b in choices and choices[b] != k for b, k in ctx) for ctx in contexts):
            skipped.add(node)
    return skipped


def branch_annotations(drawing, choices, skipped):
    """``{id: Annotation}``: which branch each ifelse took, and the nodes a call did not run, greyed."""
    out = {}
    for node, branch in choices.items():
        ident = drawing.ids.get(node)
        if ident is not None:
            out[ident] = Annotation(extra=(f"ran: {'then' if branch == 0 else 'else'} branch",))
    for node in skipped:
        ident = drawing.ids.get(node)
        if ident is not None:
            out[ident] = Annotation(extra=("not run: its branch was not taken",), **SKIPPED_LOOK)
    return out


def branch_entries(drawing, choices, skipped, prefix=""):
    """``{id: {"taken", "skipped": [ids]}}`` for the panels of the branching nodes."""
    out = {}
    for node, branch in choices.items():
        ident = drawing.ids.get(node)
        if ident is None:
            continue
        _, (then_pos, else_pos) = branches_of(node)
        untaken = else_pos if branch == 0 else then_pos
        out[prefix + ident] = {
            "taken": "then" if branch == 0 else "else",
            "not_run": [prefix + drawing.ids[node.inputs[k].owner] for k in untaken
                        if node.inputs[k].owner is not None and node.inputs[k].owner in skipped],
        }
    return out


class _Stop(Exception):
    """Ends a loop's rerun once the wanted step has been seen."""


def capture_step(node, values, step=None):
    """``(inner input values, step, steps run)`` of ``node``'s inner graph for one call.

    For a loop: the values of step ``step`` (the last step run when
    ``None``; ``None`` as the values when the loop ran fewer steps); the
    loop is rerun on the reference path from copies of ``values``. For an
    op without steps (``OpFromGraph``): ``values`` themselves, step ``None``.
    """
    op = node.op
    if not _is_loop(op):
        inner = op.fgraph.inputs
        return (list(values) if len(values) == len(inner) else None), None, None
    n_given = int(values[0])
    known_last = None if op.info.as_while else n_given - 1
    kept = {"n": 0}

    def on_step(t, args):
        kept["n"] = t + 1
        if (step is None and (known_last is None or t == known_last)) or t == step:
            kept["args"] = (t, [_copy(a) for a in args])

    copies = [_copy(v) for v in values]
    try:
        op.run_reference(node, copies, None, on_step)
    except _Stop:
        pass
    if "args" not in kept:
        return None, step, kept["n"]
    t, args = kept["args"]
    return args, t, kept["n"]


class InnerLevel:
    """One opened inner graph: its drawing, panel entries, and values of one step of the last call.

    ``path`` is the list of local ids opened to reach it (``["n7", "n2"]``);
    every id of this level is prefixed with ``"/".join(path) + "/"``.
    ``step`` pins the loop step shown (``None``: the last).
    """

    def __init__(self, node, path, step=None):
        self.node = node
        self.path = list(path)
        self.prefix = "/".join(self.path) + "/"
        self.title = inner_title(node)
        self.drawing = GraphDot(node.op.fgraph, output_names=inner_output_names(node),
                                input_names=inner_input_names(node))
        self.drawing.openable = openable_markers(self.drawing)
        self.static = mark_openable(node_entries(self.drawing, self.prefix), self.drawing, self.prefix)
        self.pinned_step = step
        self.svg_cache = {}
        self.values = {}
        self.copies = InputCopies(self.drawing.nodes)
        self.step = None
        self.n_steps = None
        self.error = None
        self.choices, self.skipped = {}, set()
        self.stamp = None  # which outer replay the values come from (set by the view)
        self._profiled = (None, {})  # ((inner profile, its graph), profiled_nodes of it)
        for ident, kind in self.drawing.kinds.items():
            if kind == "constant":
                self.values[ident] = [safe_summarize(self.drawing.objects[ident].data)]

    def profiled(self, profile):
        """``{drawn node: profiled node}`` of the inner ``profile`` of this level (matched once per profile)."""
        key = (profile, getattr(profile, "fgraph", None))  # a profile gets its graph when its function links
        if self._profiled[0] != key:
            self._profiled = (key, profiled_nodes(self.node.op.fgraph, profile) if profile is not None else {})
        return self._profiled[1]

    def run(self, outer_values):
        """Recompute the values from the outer node's input values (``None``: the node did not run)."""
        constants = {k: v for k, v in self.values.items() if self.drawing.kinds[k] == "constant"}
        self.values, self.error = constants, None
        self.copies = InputCopies(self.drawing.nodes)
        self.step = self.n_steps = None
        self.choices, self.skipped = {}, set()
        if outer_values is None:
            self.error = "the last replayed call did not run this node"
            return
        try:
            args, self.step, self.n_steps = capture_step(self.node, outer_values, self.pinned_step)
        except Exception as e:  # a view shows why rather than fail
            self.error = f"rerunning {self.title} failed: {type(e).__name__}: {e}"
            return
        if args is None:
            self.error = (f"{self.title} ran {self.n_steps} step(s): no step {self.pinned_step} to show"
                          if self.n_steps is not None else "its inner graph cannot be replayed from the node's inputs")
            return
        fgraph = self.node.op.fgraph
        args = [_filtered(var, a) for var, a in zip(fgraph.inputs, args)]
        ids = self.drawing.ids
        for var, value in zip(fgraph.inputs, args):
            self.values[ids[var]] = [safe_summarize(value)]
        self.copies.seed(fgraph.inputs, args)
        values = self.values

        def on_node(node, outputs):
            values[ids[node]] = [safe_summarize(v) for v in outputs]
            self.copies.on_node(node, outputs)

        try:
            storage = replay(fgraph, args, on_node)
            for j, var in enumerate(fgraph.outputs):
                source = values.get(ids[var.owner]) if var.owner is not None else None
                values[f"o{j}"] = [source[var.index]] if source else [safe_summarize(storage[var][0])]
        except Exception as e:
            self.error = f"replaying the inner graph failed: {type(e).__name__}: {e}"
        self.choices = self.copies.branch_choices()
        self.skipped = skipped_nodes(fgraph, self.choices)
        for node in self.skipped:
            values.pop(ids[node], None)

    def note(self):
        """``scan "rnn": step t = 4, the last of 5`` (what the status line says about this level)."""
        if self.error:
            return f"{self.title}: {self.error}"
        if self.step is None:
            return f"{self.title}: values of the last replayed call"
        which = "the last" if self.pinned_step is None else "pinned"
        return f"{self.title}: values at step t = {self.step} ({which}; {self.n_steps} step(s) run, from t = 0)"


def _same_input(drawn, profiled, var_map):
    """Whether an input of a profiled node stands for an input of a drawn node (same variable, or equal constants)."""
    mapped = var_map.get(profiled)
    if mapped is not None:
        return mapped is drawn
    if drawn is profiled:
        return True
    equals = getattr(profiled, "equals", None)
    return (equals is not None and profiled.owner is None and hasattr(profiled, "data")
            and hasattr(drawn, "data") and bool(equals(drawn)))


def profiled_nodes(fgraph, profile):
    """``{node of fgraph: node of profile.fgraph}`` for the inner nodes a nested profile timed.

    The profiled inner function is compiled from the op's inner graph
    (``lucent.compile.profiling_inner``), and compiling clones the graph:
    the profile's nodes are copies of the drawn ones (the inputs stay the
    same variables). They are matched by structure, in the profile's
    schedule: a profiled node is the drawn node with an equal op reading the
    variables its inputs were matched to (or equal constants). Positions in
    the schedule would be wrong as soon as the two graphs order independent
    nodes differently, and ops' text is not unique (two ``Tanh``). A node
    the inner function's compilation rewrote has no counterpart, hence no
    profile entry.
    """
    other = getattr(profile, "fgraph", None)
    if other is None:
        return {}
    if other is fgraph:
        return {node: node for node in fgraph.apply_nodes}
    var_map = dict(zip(other.inputs, fgraph.inputs))
    used, out = set(), {}
    by_op = {}
    for node in fgraph.toposort():
        by_op.setdefault(type(node.op), []).append(node)
    order = getattr(profile, "order", None) or other.toposort()
    for node in order:
        candidates = set()
        for inp in node.inputs:
            drawn = var_map.get(inp, inp if inp in fgraph.clients else None)
            if drawn is not None:
                candidates.update(c for c, _ in fgraph.clients.get(drawn, ()) if c != "output")
        pool = candidates or by_op.get(type(node.op), ())
        match = next((c for c in (n for n in by_op.get(type(node.op), ()) if n in pool)
                      if c not in used and c.op == node.op and len(c.inputs) == len(node.inputs)
                      and len(c.outputs) == len(node.outputs)
                      and all(_same_input(a, b, var_map) for a, b in zip(c.inputs, node.inputs))), None)
        if match is None:
            continue
        used.add(match)
        out[match] = node
        var_map.update(zip(node.outputs, match.outputs))
    return out


def _filtered(var, value):
    """A step's value as its declared type holds it (a row of a vector is a NumPy scalar, not a 0-d array)."""
    try:
        return var.type.filter(value)
    except (TypeError, ValueError):
        return value


def locate_inner_problems(fgraph, report):
    """``{problem: [(loop node, step, inner node), ...]}`` for the problems DebugMode placed inside a loop.

    The list goes from the outer loop inwards (a loop nested in the body
    adds an entry). A problem carries its place as an ``InnerLocation``
    (``inner_site``) when DebugMode recorded one; a problem that only says
    it as text (``inner_location``) is placed again by replaying the call
    the report recorded (``report.inputs``) up to the loop and rerunning it
    as DebugMode did (``lucent.debugmode.inner.locate_in_inner_graph``).
    """
    if not hasattr(report, "problems"):  # a DebugModeError: the report of the call it stopped
        report = getattr(report, "report", None) or report
    problems = [p for p in getattr(report, "problems", None) or [report]
                if getattr(p, "inner_location", None) and opens_inner_graph(getattr(p, "node", None))]
    out = {}
    for problem in problems:
        site = getattr(problem, "inner_site", None)
        if site is not None and hasattr(site, "path"):
            out[problem] = site.path()
    rest = [p for p in problems if p not in out]
    inputs = getattr(report, "inputs", None)
    if not rest or inputs is None or fgraph is None or len(inputs) != len(fgraph.inputs):
        return out
    nodes = [p.node for p in rest]
    if not all(n in fgraph.apply_nodes for n in nodes):
        return out
    copies = InputCopies(nodes)
    copies.seed(fgraph.inputs, inputs)
    wanted = set(nodes)

    def on_node(node, outputs):
        copies.on_node(node, outputs)
        wanted.discard(node)
        if not wanted:
            raise _Stop()

    try:
        replay(fgraph, inputs, on_node)
    except _Stop:
        pass
    except Exception:  # a replay that fails: no place rather than another error
        return out
    from lucent.debugmode.inner import locate_in_inner_graph

    for problem in rest:
        values = copies.inputs_of(problem.node)
        try:
            located = locate_in_inner_graph(problem.node, values) if values is not None else None
        except Exception:
            located = None
        if located is None:
            continue
        if hasattr(located, "path"):
            out[problem] = located.path()
        else:  # ``(step, inner node, problem)``
            out[problem] = [(problem.node, located[0], located[1])]
    return out


__all__ = [
    "InnerLevel", "InputCopies", "OPEN_MARK", "branch_annotations", "branch_entries", "capture_step",
    "inner_input_names", "inner_output_names", "inner_title", "locate_inner_problems", "mark_openable",
    "openable_markers", "opens_inner_graph", "profiled_nodes", "skipped_nodes", "watched_nodes",
]
