"""The DebugMode linker: run every node on both paths, check, report.

``DebugLinker`` links a FunctionGraph into a thunk that, node by node in
execution order, runs ``NodeCheck`` (perform and the Numba kernel on
separate copies of the inputs, then the checks) and stores the *reference*
outputs, so the rest of the graph, and the caller, see the Python path's
values whatever the kernel did. After the last node it runs every node
again in another valid order (``RerunCheck``: deterministic, independent
of the schedule) and checks the recorded rewrites (``RewriteCheck``).

Errors and shared variables: no path ever writes into a value held in
the graph's storage (inputs an op destroys are copied for it), so the
input cells, shared variables' included, are untouched during the call;
the Function writes the updates only after the thunk returned. A call
that raises therefore changes nothing.

``on_error="raise"`` raises the first problem as soon as the node that
showed it has been fully checked (the other problems of that node are in
the error's ``report``); rewrite problems are raised after the last node.
``on_error="report"`` never raises for a problem: it finishes the call and
returns the reference results. Either way the call's ``DebugReport`` is
``Linked.report``, ``linker.last_report`` and ``fn.debug_report``.
"""

from __future__ import annotations

import time

from lucent.configdefaults import config
from lucent.graph.basic import Constant
from lucent.link.basic import Linked, Linker, containers_of, make_storage_map
from lucent.link.python.branches import BranchPlan, branches_of, guard_checks, guard_holds, has_branches
from lucent.link.shared_writes import check_constraints, shared_write_constraints

from lucent.debugmode.describe import Origins
from lucent.debugmode.node_check import NodeCheck
from lucent.debugmode.preallocated import normalise_modes
from lucent.debugmode.report import DebugReport
from lucent.debugmode.rerun import RerunCheck
from lucent.debugmode.rewrite_check import RewriteCheck
from lucent.debugmode.values import has_nonfinite

ON_ERROR = ("raise", "report")


class DebugLinker(Linker):
    """Links a FunctionGraph for DebugMode (see module docstring).

    Parameters
    ----------
    on_error
        ``"raise"`` (the first problem) or ``"report"`` (collect all).
    check_nan
        Also report nodes producing NaN/Inf from finite inputs.
    check_rewrites
        Re-evaluate the recorded rewrites after each call.
    check_kernels
        Run and compare each node's Numba kernel (default True); ``False``
        checks the reference path (perform) alone.
    check_determinism
        Run every node again, in another valid order, and compare (default True).
    preallocated, preallocated_ndim
        ``check_preallocated_output`` modes and how many inner dimensions
        the ``"strided"`` mode varies (see ``lucent.debugmode.preallocated``).
    check_strides
        0: perform's and the kernel's strides are not compared; 1: a
        difference warns; 2: it is a ``StrideMismatch``.
    """

    def __init__(
        self, on_error="raise", check_nan=False, check_rewrites=True, check_kernels=True,
        check_determinism=True, preallocated=(), preallocated_ndim=4, check_strides=0,
    ):
        if on_error not in ON_ERROR:
            raise ValueError(f"on_error must be one of {ON_ERROR}, got {on_error!r}")
        if check_strides not in (0, 1, 2):
            raise ValueError(f"check_strides must be 0 (no check), 1 (warn) or 2 (raise), got {check_strides!r}")
        self.fgraph = None
        self.on_error = on_error
        self.check_nan = check_nan
        self.check_rewrites = check_rewrites
        self.check_kernels = check_kernels
        self.check_determinism = bool(check_determinism)
        self.preallocated = normalise_modes(preallocated)
        self.preallocated_ndim = int(preallocated_ndim)
        self.check_strides = check_strides
        self.allow_gc = False
        self.no_recycling = []
        self.profile = None
        self.last_report = None

    def __repr__(self):
        return (
            f"DebugLinker(on_error={self.on_error!r}, check_nan={self.check_nan}, "
            f"check_rewrites={self.check_rewrites})"
        )

    _unpicklable = ("fgraph", "last_report")

    def clone(self, allow_gc=None):
        new = super().clone()
        new.last_report = None
        return new

    # ------------------------------------------------------------------
    def link(self, input_storage=None, output_storage=None, storage_map=None):
        """The graph linked for checking; each call leaves its ``DebugReport`` in ``Linked.report``."""
        fgraph = self.fgraph
        if fgraph is None:
            raise RuntimeError("DebugLinker.link called before accept(fgraph)")
        order = fgraph.toposort()
        # Only the taken branches' nodes run (``lucent.link.python.branches``).
        plan = BranchPlan(fgraph, order) if has_branches(order) else None
        if plan is not None:
            order = plan.order
        if self.profile is not None:
            self.profile.attach(fgraph, order)  # memory figures need the graph and schedule
        storage_map = make_storage_map(fgraph, order, input_storage, output_storage, storage_map)
        origins = Origins(fgraph)
        checks = []
        check_of = {}
        for node in order:
            if node in check_of:  # placed in several exclusive branches: one check
                continue
            node.op.prepare_node(node, storage_map, None, "py")
            used = [
                j for j, out in enumerate(node.outputs)
                if any(client != "output" for client, _ in fgraph.clients.get(out, ()))
            ]
            check = NodeCheck(
                node, check_nan=self.check_nan, origins=origins, used_outputs=used, fgraph=fgraph,
                preallocated=self.preallocated, preallocated_ndim=self.preallocated_ndim,
                check_strides=self.check_strides,
            )
            if not self.check_kernels:
                check.kernel = None
                check.reference_only_reason = "the mode does not check compiled code (check_c_code=False)"
            elif branches_of(node) is not None:
                check.kernel = None
                check.reference_only_reason = (
                    "it selects a branch: compiled code runs it as a native if/else, whose branch "
                    "nodes are checked one by one"
                )
            checks.append(check)
            check_of[node] = check
        rewrites = RewriteCheck(fgraph, origins) if self.check_rewrites else None
        rerun = RerunCheck(fgraph, checks, origins) if self.check_determinism else None

        input_cells = [storage_map[v] for v in fgraph.inputs]
        output_cells = [storage_map[v] for v in fgraph.outputs]
        keep = set(fgraph.inputs) | set(fgraph.outputs)
        scratch = [
            cell for var, cell in storage_map.items()
            if var.owner is not None and var not in keep and not isinstance(var, Constant)
        ]
        steps = [
            (check, [storage_map[v] for v in check.node.inputs], [storage_map[v] for v in check.node.outputs])
            for check in (check_of[node] for node in order)
        ]
        guards = guard_checks(plan, storage_map) if plan is not None else [None] * len(steps)
        writes = shared_write_constraints(fgraph, order)
        first_writer, write_pairs = writes if writes is not None else (None, ())
        linker = self
        raise_first = self.on_error == "raise"
        check_nan = self.check_nan

        def run():
            report = DebugReport(len(checks), [
                (c.node, c.reference_only_reason) for c in checks if c.kernel is None
            ])
            linked.report = report
            linker.last_report = report
            # The call's inputs, so a view can show this call's values later without calling again.
            report.inputs = [v.copy() if hasattr(v, "copy") else v for v in (cell[0] for cell in input_cells)]
            profile = linker.profile
            if profile is not None:
                profile.how_measured = (
                    "DebugMode: each node's Numba kernel timed alone, called from Python on copies "
                    "of its inputs (nodes without a kernel: their perform)"
                )
                profile.start_call([cell[0] for cell in input_cells])
            nonfinite = {} if check_nan else None
            call_start = time.perf_counter()
            skipped = set()  # outputs of the untaken branches' nodes
            ran = set()
            try:
                for (check, in_cells, out_cells), guard in zip(steps, guards):
                    if guard is not None and not guard_holds(guard):
                        skipped.update(check.node.outputs)
                        continue
                    ran.update(check.node.outputs)
                    if check.node is first_writer:
                        check_constraints(write_pairs, lambda node: [storage_map[v] for v in node.inputs])
                    values = [cell[0] for cell in in_cells]
                    flags = None
                    if check_nan:
                        flags = [_nonfinite(nonfinite, v, cell) for v, cell in zip(values, in_cells)]
                    start = time.perf_counter()
                    try:
                        outs, problems, seconds = check.run(values, flags)
                    except Exception as exc:
                        _annotate(exc, check.node, values, origins)
                        raise
                    if seconds is None:
                        seconds = time.perf_counter() - start
                    for cell, value in zip(out_cells, outs):
                        cell[0] = value
                    report.nodes_run += 1
                    if profile is not None:
                        profile.record_node(check.node, seconds, outs)
                    if problems:
                        report.add(problems)
                        if raise_first:
                            _raise(problems[0], report)
                if rerun is not None:
                    known = {var: cell[0] for var, cell in storage_map.items() if var not in skipped or var in ran}
                    problems = rerun.check(known)
                    if problems:
                        report.add(problems)
                        if raise_first:
                            _raise(problems[0], report)
                if rewrites is not None:
                    known = {var: cell[0] for var, cell in storage_map.items() if var not in skipped or var in ran}
                    problems, unevaluated, not_run = rewrites.check(known, skipped - ran)
                    report.rewrites_checked = len(rewrites.records) - not_run
                    report.rewrites_skipped = len(rewrites.skipped)
                    report.rewrites_unevaluated = unevaluated
                    report.rewrites_not_run = not_run
                    if problems:
                        report.add(problems)
                        if raise_first:
                            _raise(problems[0], report)
                report.finished = True
            finally:
                # A kernel that failed to compile on this call joins the list.
                report.reference_only = [
                    (c.node, c.reference_only_reason) for c in checks if c.kernel is None
                ]
                if linked.allow_gc:
                    for cell in scratch:
                        cell[0] = None
                for check in checks:
                    check.last_kernel_outputs = None
                if profile is not None:
                    if report.finished:
                        profile.end_call(time.perf_counter() - call_start)
                    else:  # it raised: its node records must not count
                        profile.abort_call()

        inputs, outputs = containers_of(fgraph, input_cells, output_cells)
        # As for the VM: allow_gc False keeps the intermediate values until ``Function.free()``.
        linked = Linked(
            run, inputs, outputs, storage_map=storage_map, allow_gc=bool(config.allow_gc),
            order=order, details={"checks": checks},
        )
        return linked




def _nonfinite(memo, value, cell):
    """Whether ``value`` has NaN/Inf, computed once per cell and call."""
    key = id(cell)
    entry = memo.get(key)
    if entry is None or entry[0] is not value:
        entry = (value, has_nonfinite(value))
        memo[key] = entry
    return entry[1]


def _raise(problem, report):
    problem.report = report
    if len(report.problems) > 1:
        problem.add_note(
            f"DebugMode found {len(report.problems)} problems so far; see the error's .report "
            "(or use DebugMode(on_error='report') to collect every problem of a call)."
        )
    raise problem


def _annotate(exc, node, values, origins=None):
    """Say which node's perform raised, as the Python linker does, and which rewrites made it."""
    if getattr(exc, "_lucent_annotated", False):
        return
    try:
        from lucent.debugmode.describe import inputs_text, op_text
        from lucent.graph.utils import format_trace

        exc.add_note(
            f"Raised by perform of the node {node} under DebugMode (op {op_text(node.op)}).\n"
            f"Inputs:\n{inputs_text(node, values)}\n"
            "Node created at: "
            + (origins.creation_text(node) if origins is not None
               else format_trace(getattr(node.tag, "trace", None)))
        )
        exc._lucent_annotated = True
    except Exception:  # pragma: no cover - annotation must never hide the error
        pass


__all__ = ["DebugLinker", "ON_ERROR"]
