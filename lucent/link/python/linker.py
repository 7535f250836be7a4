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
"""

from __future__ import annotations

from lucent.link.basic import Container, Linker, make_storage_map


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
        storage_map = make_storage_map(fgraph, order, input_storage, output_storage, storage_map)
        output_cells = [storage_map[v] for v in fgraph.outputs]
        input_cells = [storage_map[v] for v in fgraph.inputs]

        thunks = []
        for node in order:
            node.op.prepare_node(node, storage_map, None, "py")
            in_cells = [storage_map[v] for v in node.inputs]
            out_cells = [storage_map[v] for v in node.outputs]
            thunk = node_thunk(node, in_cells, out_cells) if node_thunk is not None else None
            thunks.append(thunk if thunk is not None else _make_node_thunk(node, in_cells, out_cells))

        allow_gc = self.allow_gc
        if allow_gc is None:
            from lucent.configdefaults import config

            allow_gc = config.allow_gc
        to_free = _cells_to_free(fgraph, order, storage_map) if allow_gc else [()] * len(order)
        recycle = [storage_map[v] for v in self.no_recycling if v in storage_map]

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
                    for cells in to_free:
                        for cell in cells:
                            cell[0] = None
                raise

        if self.profile is not None:
            run = _profiled_run(
                self.profile, fgraph, thunks, order, storage_map, input_cells, recycle, to_free, allow_gc
            )

        run.thunks = thunks
        run.order = order
        run.storage_map = storage_map
        return run, input_cells, output_cells, thunks, order, storage_map

    def make_thunk(self, input_storage=None, output_storage=None, storage_map=None, node_thunk=None):
        run, input_cells, output_cells, _, _, _ = self.make_all(
            input_storage, output_storage, storage_map, node_thunk=node_thunk
        )
        fgraph = self.fgraph
        inputs = [Container(v, cell) for v, cell in zip(fgraph.inputs, input_cells)]
        outputs = [Container(v, cell, readonly=True) for v, cell in zip(fgraph.outputs, output_cells)]
        return run, inputs, outputs


#: What the times of a profile mean on this path (``ProfileStats.how_measured``).
HOW_MEASURED = (
    "Python linker: each node's thunk (its op's perform) timed with time.perf_counter; "
    "the call time is the linker's whole run, measured the same way"
)


def _profiled_run(profile, fgraph, thunks, order, storage_map, input_cells, recycle, to_free, allow_gc):
    """The ``run`` of a profiled function: ``run`` plus a timer around each thunk.

    A separate function so that an unprofiled function's loop has no
    profiling test in it at all. Outputs are recorded before the
    garbage-collection step frees the cells, and ``thunks`` is read at call
    time, so thunks wrapped after linking (``precheck_shared_writes``) run.
    """
    from time import perf_counter

    profile.attach(fgraph, order)
    profile.how_measured = HOW_MEASURED  # a linker building on this one states its own after
    output_cells = [[storage_map[v] for v in node.outputs] for node in order]
    warm_ups = [getattr(thunk, "warm_up", None) for thunk in thunks]

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
                warm_up = warm_ups[i]
                if warm_up is not None:
                    t0 = perf_counter()
                    compiled = warm_up()
                    seconds = perf_counter() - t0
                    preparing += seconds
                    if compiled:
                        compiling += seconds
                t0 = perf_counter()
                thunk()
                seconds = perf_counter() - t0
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
