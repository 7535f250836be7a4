"""Following a problem into a loop: which step and which inner node of a scan produced it.

When the Numba kernel of a node with an inner graph (a ``Scan``) disagrees
with its ``perform``, or its output holds a NaN its inputs did not, the
outer node is only where the problem shows. The loop is rerun here on the
reference path (the op's ``run_reference``) and at each step its inner
graph is run node by node from the step's reference inner values:

* ``locate_in_inner_graph``: each inner node on both paths (``NodeCheck``);
  the first inner node with a problem is the answer;
* ``locate_nonfinite_in_loop``: each inner node on the Python path; the
  first inner node whose output is bad (NaN, Inf, ...) although its inputs
  were not is the answer, followed into a loop nested in the body.

Both return an ``InnerLocation``: the loop node, the step, the inner node
(and, one level down, where inside a nested loop), which tools use to open
the loop's graph at that node (``DebugReportView``) and whose text names
it (``scan "rnn", step 37: Mul (created at model.py:12)``). Ops that do not
offer ``run_reference`` are not followed.
"""

from __future__ import annotations

from dataclasses import dataclass

from lucent.debugmode.values import copy_value, is_immutable


@dataclass
class InnerLocation:
    """Where inside ``node``'s loop a problem arose.

    ``step`` counts from 0; ``inner_node`` is a node of ``node.op.fgraph``;
    ``output_index`` the inner node's output concerned (``None``: not
    known); ``problem`` the inner node's own problem (a ``DebugModeError``,
    for a discrepancy); ``deeper`` the location inside ``inner_node`` when
    it is itself a loop.
    """

    node: object
    step: int
    inner_node: object
    output_index: int | None = None
    problem: object = None
    deeper: InnerLocation | None = None

    def path(self):
        """``[(loop node, step, inner node), ...]`` from the outer loop inwards."""
        here = [(self.node, self.step, self.inner_node)]
        return here + (self.deeper.path() if self.deeper is not None else [])

    def __str__(self):
        from lucent.debugmode.describe import format_trace

        name = getattr(self.node.op, "name", None) or type(self.node.op).__name__
        kind = type(self.node.op).__name__.lower()
        trace = format_trace(getattr(self.inner_node.tag, "trace", None)).strip().splitlines()
        where = f" (created at {trace[0].strip()})" if trace and trace[0].strip() else ""
        text = f'{kind} "{name}", step {self.step}: {self.inner_node.op}{where}'
        if self.output_index is not None:
            text += f", output {self.output_index}"
        if self.deeper is not None:
            text += f"; inside it, {self.deeper}"
        return text


class _Found(Exception):
    """Stops the rerun loop at the first problem."""


def step_values(fgraph, args):
    """The step's inner input values, each as a value of its declared type.

    A row of a step's buffer is a NumPy scalar, not a 0-d array: give each
    inner input what a compiled graph would get. Copies, because the step's
    values are rows of the loop's own buffers and a node replayed in place
    would change what the loop computes next.
    """
    values = []
    for var, a in zip(fgraph.inputs, args):
        a = a if is_immutable(a) else copy_value(a)
        try:
            values.append(var.type.filter(a))
        except (TypeError, ValueError):
            values.append(a)
    return values


def _rerun(node, values, on_step):
    """Run ``node``'s loop on the reference path with ``on_step``; stop quietly at ``_Found``."""
    copies = [v if is_immutable(v) else copy_value(v) for v in values]
    try:
        node.op.run_reference(node, copies, None, on_step)
    except _Found:
        pass


def _follows(node):
    return getattr(node.op, "run_reference", None) is not None and getattr(node.op, "fgraph", None) is not None


def locate_in_inner_graph(node, values, max_steps=100_000):
    """The ``InnerLocation`` of the first inner node whose two paths part, or ``None``.

    ``values`` are the outer node's input values (not modified). The body
    runs as DebugMode runs a graph: only the taken branch of an ``ifelse``
    (a branch the step did not take may raise), the branching node itself
    on the reference path only (compiled code branches natively).
    """
    if not _follows(node):
        return None
    from lucent.debugmode.node_check import NodeCheck
    from lucent.link.python.branches import BranchPlan, branches_of, guard_checks, guard_holds, has_branches

    fgraph = node.op.fgraph
    order = fgraph.toposort()
    plan = BranchPlan(fgraph, order) if has_branches(order) else None
    if plan is not None:
        order = plan.order
    # one cell per variable, refilled every step (the branch guards keep the condition cells);
    # a constant's cell holds its value, a value of an untaken branch stays None, as in the
    # outer linker's cells
    cells = {var: [getattr(var, "data", None)] for var in fgraph.variables}
    computed = [var for var in cells if var.owner is not None]
    guards = guard_checks(plan, cells) if plan is not None else [None] * len(order)
    checks = {}
    found = []

    def on_step(t, args):
        if t >= max_steps:
            raise _Found()
        for var in computed:
            cells[var][0] = None
        for var, value in zip(fgraph.inputs, step_values(fgraph, args)):
            cells[var][0] = value
        for inner, guard in zip(order, guards):
            if guard is not None and not guard_holds(guard):
                continue
            ins = [cells[i][0] for i in inner.inputs]
            check = checks.get(inner)
            if check is None:
                check = checks[inner] = NodeCheck(inner, fgraph=fgraph)
                if branches_of(inner) is not None:
                    check.kernel = None
                    check.reference_only_reason = "it selects a branch"
            ref, problems, _ = check.run(ins)
            if problems:
                first = problems[0]
                found.append(InnerLocation(
                    node, t, inner, getattr(first, "output_index", None), first,
                    getattr(first, "inner_site", None),
                ))
                raise _Found()
            for var, value in zip(inner.outputs, ref):
                cells[var][0] = value

    _rerun(node, values, on_step)
    return found[0] if found else None


def locate_nonfinite_in_loop(node, values, is_bad):
    """The ``InnerLocation`` of the first inner node making a bad value from good inputs, or ``None``.

    ``is_bad(value)`` says whether a value is bad (NaN, Inf, too large: the
    caller's rule). The inner graph runs node by node on the Python path; a
    bad value that came in from outside the step's nodes (a bad input) is
    not located. A loop inside the loop is followed the same way. A rerun
    that fails gives ``None`` rather than another error.
    """
    if not _follows(node):
        return None
    from lucent.link.python import PythonLinker

    from lucent.link.python.branches import BranchPlan, guard_checks, guard_holds, has_branches

    fgraph = node.op.fgraph
    cells = [[None] for _ in fgraph.inputs]
    linker = PythonLinker(allow_gc=False).accept(fgraph)
    _, _, _, thunks, order, storage_map = linker.make_all(input_storage=cells)
    # the node order is the linker's branch plan's: only a taken branch's nodes run
    # (an untaken one may raise, or make a NaN nothing reads)
    schedule = fgraph.toposort()
    plan = BranchPlan(fgraph, schedule) if has_branches(schedule) else None
    guards = guard_checks(plan, storage_map) if plan is not None else [None] * len(order)
    found = []

    def on_step(t, args):
        for cell, value in zip(cells, step_values(fgraph, args)):
            cell[0] = value
        for var in storage_map:  # nothing of the previous step is read as this step's
            if var.owner is not None and not hasattr(var, "data"):
                storage_map[var][0] = None
        for thunk, inner, guard in zip(thunks, order, guards):
            if guard is not None and not guard_holds(guard):
                continue
            # read before the node runs: an in-place node overwrites its input
            ins = [storage_map[v][0] for v in inner.inputs]
            came_in_bad = any(is_bad(v) for v in ins)
            if _follows(inner):
                ins = [v if is_immutable(v) else copy_value(v) for v in ins]
            thunk()
            for j, var in enumerate(inner.outputs):
                if not is_bad(storage_map[var][0]):
                    continue
                if came_in_bad:
                    raise _Found()  # it came in from outside this step's nodes
                deeper = locate_nonfinite_in_loop(inner, ins, is_bad)
                found.append(InnerLocation(node, t, inner, j, None, deeper))
                raise _Found()

    try:
        _rerun(node, values, on_step)
    except Exception:
        return None
    return found[0] if found else None


__all__ = ["InnerLocation", "locate_in_inner_graph", "locate_nonfinite_in_loop", "step_values"]
