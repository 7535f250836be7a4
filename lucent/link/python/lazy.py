"""Lazy evaluation by demand: PyTensor's lazy-thunk protocol.

An op may build its own thunk with ``make_thunk(node, storage_map,
compute_map, no_recycling, impl)``. ``compute_map[var][0]`` says whether
``var`` holds this call's value. A thunk with ``lazy = True`` may be called
before all its inputs are computed: it returns the list of input positions
it still needs (``[]`` once it has stored its outputs). This lets an op
decide at run time which inputs to evaluate, so ops outside lucent can
branch lazily the way ``IfElse`` does.

The Python linker runs such a graph by demand (``demand_run``): starting
from the graph's outputs, a node runs once its inputs are computed, and a
lazy node is asked which inputs it needs. A branching op of lucent's own
(``lazy_branches``, see ``branches.py``) gets a lazy thunk here
(``branch_thunk``), so both kinds mix in one graph. Without lazy
evaluation (``loop_run``) every node runs in schedule order and a lazy
thunk finds all its inputs computed.

Garbage collection: intermediate values are dropped at the end of the call
(not after their last reader, which a demand-driven order does not know
in advance).
"""

from __future__ import annotations

from time import perf_counter


def custom_thunk(node, storage_map, compute_map, no_recycling):
    """The op's own thunk if it defines ``make_thunk``, else ``None``."""
    make = getattr(node.op, "make_thunk", None)
    if make is None:
        return None
    thunk = make(node, storage_map, compute_map, no_recycling, "py")
    if not callable(thunk):
        raise TypeError(f"{node.op}.make_thunk returned {thunk!r}, not a callable thunk")
    return thunk


def branch_thunk(node, branches, storage_map, compute_map, perform_thunk):
    """A lazy thunk for a node declaring ``lazy_branches``: condition, then one branch."""
    cond, (then_pos, else_pos) = branches
    cond_done = compute_map[node.inputs[cond]]
    cond_cell = storage_map[node.inputs[cond]]
    then_done = [(k, compute_map[node.inputs[k]]) for k in then_pos]
    else_done = [(k, compute_map[node.inputs[k]]) for k in else_pos]
    out_done = [compute_map[v] for v in node.outputs]

    def thunk():
        if not cond_done[0]:
            return [cond]
        chosen = then_done if cond_cell[0] != 0 else else_done
        missing = [k for k, done in chosen if not done[0]]
        if missing:
            return missing
        perform_thunk()
        for done in out_done:
            done[0] = True
        return []

    thunk.lazy = True
    thunk.node = node
    return thunk


class DemandRunner:
    """Runs a graph's thunks by demand or in order, keeping ``compute_map`` up to date.

    ``thunks[i]`` belongs to ``order[i]``; ``lazy_thunks`` holds the ones
    following the lazy protocol. ``annotate(exc, node)`` adds the failing
    node to an error; ``profile`` (optional) records each node that ran.
    """

    def __init__(self, fgraph, order, thunks, storage_map, compute_map, recycle, allow_gc,
                 annotate, profile=None):
        self.fgraph = fgraph
        self.order = order
        self.thunks = thunks
        self.storage_map = storage_map
        self.compute_map = compute_map
        self.recycle = recycle
        self.allow_gc = allow_gc
        self.annotate = annotate
        self.profile = profile
        keep = set(fgraph.inputs) | set(fgraph.outputs)
        self.fresh = [compute_map[v] for v in storage_map if v.owner is not None]
        self.scratch = [storage_map[v] for v in storage_map if v.owner is not None and v not in keep]
        self.position = {node: i for i, node in enumerate(order)}
        self.out_done = [[compute_map[v] for v in node.outputs] for node in order]
        self.out_cells = [[storage_map[v] for v in node.outputs] for node in order]
        self.in_done = [[compute_map[v] for v in node.inputs] for node in order]
        self.lazy = [bool(getattr(thunk, "lazy", False)) for thunk in thunks]
        # ``prereqs[i]``: nodes that must run before node i (in-place orderings)
        orderings = fgraph.orderings()
        self.prereqs = [[self.position[p] for p in orderings.get(node, ())] for node in order]

    def _start(self):
        for cell in self.recycle:
            cell[0] = None
        for done in self.fresh:
            done[0] = False
        if self.profile is not None:
            self.profile.start_call([self.storage_map[v][0] for v in self.fgraph.inputs])
        return perf_counter()

    def _finish(self, ok, start):
        if self.allow_gc:
            for cell in self.scratch:
                cell[0] = None
        if self.profile is not None:
            if ok:
                self.profile.end_call(perf_counter() - start)
            else:
                self.profile.abort_call()

    def _call(self, i):
        """Run thunk ``i`` (timed when profiling); what a lazy thunk returns."""
        if self.profile is None:
            return self.thunks[i]()
        t0 = perf_counter()
        needed = self.thunks[i]()
        self.profile.record_node(self.order[i], perf_counter() - t0, [c[0] for c in self.out_cells[i]])
        return needed

    def loop_run(self):
        """Every node, in schedule order (no lazy evaluation)."""
        start = self._start()
        i = 0
        ok = False
        try:
            for i in range(len(self.order)):
                self._call(i)
                for done in self.out_done[i]:
                    done[0] = True
            ok = True
        except Exception as exc:
            self.annotate(exc, self.order[i])
            raise
        finally:
            self._finish(ok, start)

    def demand_run(self):
        """Only the nodes the outputs need, asking lazy nodes which inputs they need."""
        start = self._start()
        node_i = None
        ok = False
        compute_map = self.compute_map
        try:
            stack = []
            for out in self.fgraph.outputs:
                if out.owner is not None:
                    stack.append(self.position[out.owner])
            while stack:
                i = stack[-1]
                node_i = i
                if all(done[0] for done in self.out_done[i]):
                    stack.pop()
                    continue
                waiting = [p for p in self.prereqs[i] if not all(d[0] for d in self.out_done[p])]
                if self.lazy[i]:
                    if waiting:
                        stack.extend(waiting)
                        continue
                    needed = self._call(i)
                    node = self.order[i]
                    if needed:
                        pending = []
                        for k in needed:
                            var = node.inputs[k]
                            if compute_map[var][0]:
                                continue
                            if var.owner is None:
                                raise ValueError(f"the input {var} of {node} has no value")
                            pending.append(self.position[var.owner])
                        if not pending:
                            raise RuntimeError(
                                f"the lazy thunk of {node} asked for inputs {list(needed)}, "
                                "which are already computed"
                            )
                        stack.extend(pending)
                        continue
                    for done in self.out_done[i]:
                        done[0] = True
                    stack.pop()
                    continue
                node = self.order[i]
                missing = [
                    self.position[var.owner]
                    for var, done in zip(node.inputs, self.in_done[i])
                    if not done[0] and var.owner is not None
                ]
                if missing or waiting:
                    stack.extend(missing + waiting)
                    continue
                self._call(i)
                for done in self.out_done[i]:
                    done[0] = True
                stack.pop()
            ok = True
        except Exception as exc:
            if node_i is not None:
                self.annotate(exc, self.order[node_i])
            raise
        finally:
            self._finish(ok, start)


__all__ = ["DemandRunner", "branch_thunk", "custom_thunk"]
