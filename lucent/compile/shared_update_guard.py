"""The guard that keeps "a failed call changes no shared variable" true with in-place updates.

FAST_RUN writes an update such as ``W - lr*g`` straight into ``W``'s
buffer. That write happens while the function runs, so without care an
error in a later node would leave ``W`` half-updated. The feature here
restricts where such writers may sit in the graph and when they run; the
function module attaches it to every graph with shared inputs.
"""

from __future__ import annotations

from lucent.graph.features import Feature
from lucent.graph.fg import InconsistencyError
from lucent.graph.traversal import io_toposort


class SharedUpdateGuard(Feature):
    """Keeps "a call that raises leaves every shared variable unchanged" with in-place updates.

    An update computed in place (``W - lr*g`` written into ``W``'s buffer)
    changes the shared variable *while* the function runs. The guarantee
    survives because of three rules:

    1. a node overwriting a shared variable's buffer (a *writer*) may have
       no reader but the graph's outputs (``validate`` rejects anything
       else, so the in-place rewrite is undone);
    2. every writer runs after every node that is not a writer
       (``orderings``): once a shared buffer was written, only writers run;
    3. before the first writer runs, every linker checks the shapes all
       writers need to agree (``lucent.link.shared_writes``, from each op's
       ``inplace_shape_constraints``), and an element-wise writer with the
       right shapes cannot fail (it checks before writing and computes into
       temporaries or with a floating point ``out=``).

    Not covered: a second writer whose implementation raises for
    particular *values* after a first one wrote.
    """

    def __init__(self, shared_inputs=()):
        self.shared = set(shared_inputs)

    def on_attach(self, fgraph):
        if not hasattr(fgraph, "destroy_handler"):
            raise ValueError("SharedUpdateGuard needs a DestroyHandler attached first")
        self.fgraph = fgraph
        self._inner_validate = fgraph.validate
        fgraph.validate = self.validate
        fgraph.shared_buffer_writers = self.writers

    def on_detach(self, fgraph):
        fgraph.validate = self._inner_validate
        del fgraph.shared_buffer_writers

    def clone(self):
        return SharedUpdateGuard(self.shared)

    def writers(self):
        """``{node: shared input it overwrites}`` for the nodes writing a shared buffer."""
        fgraph = self.fgraph
        if not self.shared or not any(n.op.destroy_map for n in fgraph.apply_nodes):
            return {}
        found = {}
        for var in fgraph.inputs:
            if var in self.shared:
                for node in fgraph.destroyers(var):
                    found[node] = var
        return found

    def validate(self, fgraph=None):
        fgraph = self.fgraph
        if not any(n.op.destroy_map for n in fgraph.apply_nodes):
            return True  # nothing in place: nothing to check
        self._inner_validate()
        writers = self.writers()
        for node, var in writers.items():
            for out in node.outputs:
                readers = [c for c, _ in fgraph.clients.get(out, ()) if c != "output"]
                if readers:
                    raise InconsistencyError(
                        f"{node} overwrites the buffer of the shared variable {var}, but its "
                        f"result is read by {readers[0]}; a shared buffer may only be written "
                        "by a node whose result is an update or an output"
                    )
        if writers:
            # without writers this feature adds no ordering, and the destroy
            # handler's validation (above) checked its own
            from lucent.graph.destroyhandler import _check_acyclic

            _check_acyclic(fgraph, fgraph.orderings())
        return True

    def orderings(self, fgraph):
        """Each writer runs after every node that is neither a writer nor its descendant."""
        writers = self.writers()
        if not writers:
            return {}
        order = io_toposort(fgraph.inputs, fgraph.outputs)
        result = {}
        for node in writers:
            later = _descendants(fgraph, node)
            result[node] = [n for n in order if n not in writers and n not in later]
        return result


def _descendants(fgraph, node):
    seen = {node}
    stack = [node]
    while stack:
        for out in stack.pop().outputs:
            for client, _ in fgraph.clients.get(out, ()):
                if client != "output" and client not in seen:
                    seen.add(client)
                    stack.append(client)
    return seen


__all__ = ["SharedUpdateGuard"]
