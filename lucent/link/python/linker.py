"""The reference execution path: run every node's ``perform`` in order.

``PythonLinker`` gives each variable of the graph a storage cell, makes one
small *thunk* per Apply node that reads its input cells and calls
``op.perform`` with its output cells, and runs the thunks in topological
order. It is deliberately simple: it is the path every other linker (and
DebugMode) is checked against.

Two memory rules matter:

* **storage reuse** - an output cell keeps last call's value, so an op may
  write into it instead of allocating (``perform`` is told this in its
  docstring);
* **garbage collection** - with ``config.allow_gc`` an intermediate value is
  dropped right after the last node that reads it, so peak memory stays
  close to what the computation really needs. Graph inputs, constants and
  outputs are never dropped.

Lazy evaluation: in a graph with branches (``IfElse``), a node runs only
if the branches it serves were taken (``branches.BranchPlan``: the plan's
order puts each condition before the nodes it guards, and garbage
collection follows the branches). An op that builds its own thunk
(``make_thunk``, PyTensor's protocol, possibly lazy) is run by demand or in
order by ``lazy.DemandRunner``; ``lazy`` (set by ``VMLinker``) forces one
or the other.
"""

from __future__ import annotations

from lucent.link.basic import Linked, Linker, containers_of, default_allow_gc, make_storage_map
from lucent.link.python.branches import BranchPlan, branches_of, guard_checks, guard_holds, has_branches
from lucent.link.python.lazy import DemandRunner, branch_thunk, custom_thunk
from lucent.link.shared_writes import check_constraints, shared_write_constraints


class PythonLinker(Linker):
    """Links a FunctionGraph into thunks that call ``Op.perform`` node by node.

    Parameters
    ----------
    allow_gc
        Free intermediates after their last use; ``None`` reads
        ``config.allow_gc`` when the thunk is made.
    schedule
        Optional callable ``fgraph -> list of Apply`` giving the order.
    """

    #: ``None``: evaluate lazily where the graph asks for it (branches, lazy
    #: thunks); ``True``: always by demand; ``False``: every node runs.
    lazy = None
    #: What the last ``make_all`` built besides its return values (``Linked.details``).
    _details = {}
    _unpicklable = ("fgraph", "_details")

    def __init__(self, allow_gc=None, schedule=None):
        self.fgraph = None
        self.allow_gc = allow_gc
        self.schedule = schedule
        self.no_recycling = []
        self.profile = None

    def __repr__(self):
        return "PythonLinker()"

    # ------------------------------------------------------------------
    def make_all(self, input_storage=None, output_storage=None, storage_map=None, node_thunk=None):
        """Build the storage map and one thunk per node.

        ``node_thunk(node, input_cells, output_cells)`` may supply a node's
        thunk instead of the one calling ``perform`` (it returns ``None`` to
        keep ``perform``); the Numba linker's profiled build uses it to run
        each node's own kernel. A thunk may carry ``warm_up()``, run before it
        when profiling and left out of the call time; it returns the seconds
        it spent compiling (0 when it compiled nothing).

        Returns ``(run, input_cells, output_cells, thunks, order, storage_map)``.
        """
        fgraph = self.fgraph
        if fgraph is None:
            raise RuntimeError("PythonLinker.make_thunk called before accept(fgraph)")
        order = self.schedule(fgraph) if self.schedule else fgraph.toposort()
        plan = BranchPlan(fgraph, order) if has_branches(order) and self.lazy is not False else None
        if plan is not None:
            order = plan.order
        storage_map = make_storage_map(fgraph, order, input_storage, output_storage, storage_map)
        output_cells = [storage_map[v] for v in fgraph.outputs]
        input_cells = [storage_map[v] for v in fgraph.inputs]

        # compute_map: which variables hold this call's value (ops' own thunks read it)
        compute_map = {var: [var.owner is None] for var in storage_map}
        # A profiled run asks its profile to run the nodes with an inner graph (a loop, an
        # OpFromGraph) node by node under a child profile; a ``node_thunk`` caller asks it itself.
        inner_thunk = None
        if self.profile is not None and node_thunk is None:
            inner_thunk = getattr(self.profile, "inner_graph_thunk", None)
        thunks = []
        own_thunks = False
        thunk_of = {}  # a node the plan places in several exclusive branches has one thunk
        for node in order:
            if node in thunk_of:
                thunks.append(thunk_of[node])
                continue
            node.op.prepare_node(node, storage_map, compute_map, "py")
            in_cells = [storage_map[v] for v in node.inputs]
            out_cells = [storage_map[v] for v in node.outputs]
            thunk = custom_thunk(node, storage_map, compute_map, self.no_recycling)
            own_thunks = own_thunks or thunk is not None
            # A branching node only selects among values the plan computed
            # (the untaken ones are absent): its perform does that.
            if thunk is None and inner_thunk is not None:
                thunk = inner_thunk(node, in_cells, out_cells, "py")
            if thunk is None and node_thunk is not None and branches_of(node) is None:
                thunk = node_thunk(node, in_cells, out_cells)
            thunk_of[node] = thunk if thunk is not None else _make_node_thunk(node, in_cells, out_cells)
            thunks.append(thunk_of[node])

        _check_shared_writes_first(fgraph, order, thunks, storage_map)
        allow_gc = default_allow_gc(self.allow_gc)
        lazy = self.lazy
        if lazy is None and any(getattr(t, "lazy", False) for t in thunks):
            lazy = True
        if lazy is not None or own_thunks:
            if plan is not None and not plan.single:  # the demand runner wants each node once
                order = fgraph.toposort()
                thunks = [thunk_of[node] for node in order]
            run = self._demand_runner(
                fgraph, order, thunks, storage_map, compute_map, input_cells, allow_gc, lazy
            )
            self._details = {"compute_map": compute_map, "branch_plan": None}
            return run, input_cells, output_cells, thunks, order, storage_map
        if not allow_gc:
            to_free = [()] * len(order)
        elif plan is not None:
            to_free = plan.free_points(fgraph, storage_map)
        else:
            to_free = _cells_to_free(fgraph, order, storage_map)
        recycle = [storage_map[v] for v in self.no_recycling if v in storage_map]
        guards = guard_checks(plan, storage_map) if plan is not None else None

        if guards is not None:
            run = _branching_run(thunks, order, guards, to_free, storage_map, recycle, allow_gc)
        else:
            run = _straight_run(thunks, order, to_free, storage_map, recycle, allow_gc)

        if self.profile is not None:
            run = _profiled_run(
                self.profile, fgraph, thunks, order, storage_map, input_cells, recycle, to_free,
                allow_gc, guards,
            )

        self._details = {"compute_map": compute_map, "branch_plan": plan}
        return run, input_cells, output_cells, thunks, order, storage_map

    def _demand_runner(self, fgraph, order, thunks, storage_map, compute_map, input_cells, allow_gc, lazy):
        """The ``run`` of a graph with ops' own (maybe lazy) thunks (``lazy.py``).

        ``lazy``: evaluate by demand, asking lazy thunks which inputs they
        need (branching nodes get such a thunk); otherwise run every node in
        order.
        """
        if lazy:
            for i, node in enumerate(order):
                branches = branches_of(node)
                if branches is not None and not getattr(thunks[i], "lazy", False):
                    thunks[i] = branch_thunk(node, branches, storage_map, compute_map, thunks[i])
        recycle = [storage_map[v] for v in self.no_recycling if v in storage_map]
        if self.profile is not None:
            self.profile.attach(fgraph, order)
            self.profile.how_measured = HOW_MEASURED
        runner = DemandRunner(
            fgraph, order, thunks, storage_map, compute_map, recycle, allow_gc,
            lambda exc, node: _annotate(exc, node, storage_map), self.profile,
        )
        run = runner.demand_run if lazy else runner.loop_run

        def call():
            run()

        return call

    def link(self, input_storage=None, output_storage=None, storage_map=None, node_thunk=None):
        """The graph linked node by node (see ``make_all``), as a ``Linked``."""
        run, input_cells, output_cells, thunks, order, storage_map = self.make_all(
            input_storage, output_storage, storage_map, node_thunk=node_thunk
        )
        inputs, outputs = containers_of(self.fgraph, input_cells, output_cells)
        return Linked(
            run, inputs, outputs, storage_map=storage_map, allow_gc=default_allow_gc(self.allow_gc),
            thunks=thunks, order=order, details=self._details,
        )

    def make_thunk(self, input_storage=None, output_storage=None, storage_map=None, node_thunk=None):
        linked = self.link(input_storage, output_storage, storage_map, node_thunk=node_thunk)
        return linked, linked.inputs, linked.outputs


def _check_shared_writes_first(fgraph, order, thunks, storage_map):
    """Wrap the first shared-buffer writer's thunk so that every writer's shapes are checked first.

    See ``lucent.link.shared_writes``. ``thunks`` is changed in place.
    """
    found = shared_write_constraints(fgraph, order)
    if found is None:
        return
    first, pairs = found
    k = order.index(first)
    inner = thunks[k]
    cells = {node: [storage_map[v] for v in node.inputs] for node, _, _ in pairs}

    def checked_first_writer():
        check_constraints(pairs, cells.__getitem__)
        return inner()

    for name in ("node", "inputs", "outputs", "warm_up", "lazy"):
        if hasattr(inner, name):
            setattr(checked_first_writer, name, getattr(inner, name))
    thunks[k] = checked_first_writer


def _free_all(to_free):
    for cells in to_free:
        for cell in cells:
            cell[0] = None


def _straight_run(thunks, order, to_free, storage_map, recycle, allow_gc):
    """The ``run`` of a graph without branches: every thunk, in order."""

    def run():
        for cell in recycle:
            cell[0] = None
        i = 0
        try:
            for i, thunk in enumerate(thunks):
                thunk()
                for cell in to_free[i]:
                    cell[0] = None
        except Exception as exc:
            _annotate(exc, order[i], storage_map)
            # Drop half-computed intermediates so a failing call holds no memory.
            if allow_gc:
                _free_all(to_free)
            raise

    return run


def _branching_run(thunks, order, guards, to_free, storage_map, recycle, allow_gc):
    """The ``run`` of a graph with branches: a node runs only if its branches were taken.

    ``guards[i]`` is ``None`` for a node needed whatever the conditions,
    else the condition cells and branches it needs (``branches.guard_checks``).
    The plan's order puts every condition before the nodes it guards.
    """

    def run():
        for cell in recycle:
            cell[0] = None
        i = 0
        try:
            for i, thunk in enumerate(thunks):
                guard = guards[i]
                if guard is not None and not guard_holds(guard):
                    continue
                thunk()
                for cell in to_free[i]:
                    cell[0] = None
        except Exception as exc:
            _annotate(exc, order[i], storage_map)
            if allow_gc:
                _free_all(to_free)
            raise

    return run


#: What the times of a profile mean on this path (``ProfileStats.how_measured``).
HOW_MEASURED = (
    "Python linker: each node's thunk (its op's perform) timed with time.perf_counter; "
    "the call time is the linker's whole run, measured the same way"
)


def _profiled_run(
    profile, fgraph, thunks, order, storage_map, input_cells, recycle, to_free, allow_gc, guards=None
):
    """The ``run`` of a profiled function: ``run`` plus a timer around each thunk.

    A separate function so that an unprofiled function's loop has no
    profiling test in it at all. A node of an untaken branch (``guards``)
    does not run and is not recorded. Outputs are recorded before the
    garbage-collection step frees the cells, and ``thunks`` is read at call
    time. A thunk running an inner graph under a child profile
    (``thunk.inner_profile``) may compile inner kernels while it runs: the
    child counts that as its compile time, and it is taken out of the
    node's time and the call time here too.
    """
    from time import perf_counter

    profile.attach(fgraph, order)
    profile.how_measured = HOW_MEASURED  # a linker building on this one states its own after
    output_cells = [[storage_map[v] for v in node.outputs] for node in order]
    warm_ups = [getattr(thunk, "warm_up", None) for thunk in thunks]
    inner = [getattr(thunk, "inner_profile", None) for thunk in thunks]
    if guards is None:
        guards = [None] * len(thunks)

    def run():
        for cell in recycle:
            cell[0] = None
        profile.start_call([cell[0] for cell in input_cells])
        start = perf_counter()
        compiling = 0.0  # kernel compilation: reported as compile time
        preparing = 0.0  # all warm-up work, compilation included: not part of the call time
        i = 0
        try:
            for i, thunk in enumerate(thunks):
                guard = guards[i]
                if guard is not None and not guard_holds(guard):
                    continue
                warm_up = warm_ups[i]
                if warm_up is not None:
                    t0 = perf_counter()
                    compiled = warm_up()
                    seconds = perf_counter() - t0
                    preparing += seconds
                    if compiled:
                        compiling += seconds
                child = inner[i]
                if child is not None:
                    compiled_before = child.compile_time
                t0 = perf_counter()
                thunk()
                seconds = perf_counter() - t0
                if child is not None:
                    compiled = child.compile_time - compiled_before
                    seconds -= compiled
                    preparing += compiled
                    compiling += compiled
                profile.record_node(order[i], seconds, [cell[0] for cell in output_cells[i]])
                for cell in to_free[i]:
                    cell[0] = None
        except Exception as exc:
            profile.compile_time += compiling
            profile.abort_call()
            _annotate(exc, order[i], storage_map)
            if allow_gc:
                for cells in to_free:
                    for cell in cells:
                        cell[0] = None
            raise
        profile.compile_time += compiling
        profile.end_call(perf_counter() - start - preparing)

    return run


def _make_node_thunk(node, input_cells, output_cells):
    perform = node.op.perform

    def thunk():
        perform(node, [cell[0] for cell in input_cells], output_cells)
        for j, cell in enumerate(output_cells):
            if cell[0] is None:
                raise ValueError(
                    f"{node.op}.perform did not store a value for output {j} of node {node}"
                )

    thunk.node = node
    thunk.inputs = input_cells
    thunk.outputs = output_cells
    return thunk


def _cells_to_free(fgraph, order, storage_map):
    """For each node, the cells that no later node (nor the caller) needs."""
    keep = set(fgraph.inputs) | set(fgraph.outputs)
    last_use = {}
    for i, node in enumerate(order):
        for var in node.inputs:
            last_use[var] = i
        for var in node.outputs:
            last_use.setdefault(var, i)  # computed but never read
    per_node = [[] for _ in order]
    for var, i in last_use.items():
        if var in keep or var.owner is None:
            continue
        per_node[i].append(storage_map[var])
    return per_node


def _annotate(exc, node, storage_map):
    """Add which node failed, and with which input shapes, to ``exc``."""
    if getattr(exc, "_lucent_annotated", False):
        return
    try:
        shapes = []
        for var in node.inputs:
            val = storage_map[var][0]
            shapes.append(getattr(val, "shape", "no shape"))
        note = (
            f"Apply node that caused the error: {node}\n"
            f"Inputs types: {[v.type for v in node.inputs]}\n"
            f"Inputs shapes: {shapes}"
        )
        trace = getattr(node.tag, "trace", None)
        if trace:
            from lucent.graph.utils import format_trace

            note += "\nNode created at: " + format_trace(trace)
        exc.add_note(note)
        exc._lucent_annotated = True
    except Exception:  # pragma: no cover - annotation must never hide the error
        pass


__all__ = ["PythonLinker"]
