"""Which variables of a compiled graph share memory, and which ones may be overwritten.

Two questions about memory come up when a graph is compiled:

* *Aliasing*: which variables may hold the same buffer? An op's
  ``view_map`` / ``destroy_map`` say that an output lives in an input's
  memory. ``alias_root`` follows those links back to the variable that owns
  the buffer; ``view_tree_set`` goes the other way, collecting every
  variable living in a given buffer; ``infer_reuse_pattern`` uses both to
  list the computed variables that may share memory with some outputs.
  The call plan (``lucent.compile.call_plan``) decides from them what a
  call copies.
* *Protection*: which inputs may an in-place op overwrite? Only those the
  caller gave up (``In(mutable=True)``, or a shared variable whose update
  replaces its old value). ``add_supervisor_to_fgraph`` attaches what
  enforces that: lucent's ``DestroyHandler`` (which refuses to destroy any
  graph input not in ``fgraph.destroyable_inputs``, and which the in-place
  rewrites consult before offering an input) and a ``Supervisor`` that
  names the protected variables. A graph that already contains in-place
  ops is refused unless ``accept_inplace=True``; then the inputs it already
  destroys count as given up.
"""

from __future__ import annotations

from collections.abc import Sequence

from lucent.graph.destroyhandler import DestroyHandler
from lucent.graph.features import AlreadyThere, Feature
from lucent.graph.fg import FunctionGraph, InconsistencyError


def _aliased_input_positions(node, out_index):
    op = node.op
    return list((op.view_map or {}).get(out_index, [])) + list((op.destroy_map or {}).get(out_index, []))


def alias_root(v):
    """The variable whose memory ``v`` may share, following ``view_map``/``destroy_map`` links.

    An output that views or overwrites an input lives in that input's
    buffer; the chain of such links ends at a variable that owns its
    memory (a graph input, a constant, or a freshly computed result).
    """
    seen = 0
    while v.owner is not None and seen < 100000:
        mapped = _aliased_input_positions(v.owner, v.owner.outputs.index(v))
        if not mapped:
            return v
        v = v.owner.inputs[mapped[0]]
        seen += 1
    return v


def view_tree_set(fgraph, v, treeset):
    """Add ``v`` and every variable of ``fgraph`` that views or overwrites it (recursively) to ``treeset``."""
    stack = [v]
    while stack:
        var = stack.pop()
        if var in treeset:
            continue
        treeset.add(var)
        for client, pos in fgraph.clients.get(var, []):
            if client == "output" or isinstance(client, str):
                continue
            op = client.op
            for maps in (op.view_map or {}, op.destroy_map or {}):
                for out_index, in_positions in maps.items():
                    if pos in in_positions:
                        stack.append(client.outputs[out_index])


def infer_reuse_pattern(fgraph, outputs_to_disown):
    """The computed variables that may share memory with any of ``outputs_to_disown``.

    Inputs and constants are left out: their memory is never recycled by
    the function.
    """
    shared = set()
    for out in outputs_to_disown:
        view_tree_set(fgraph, alias_root(out), shared)
    return {var for var in shared if var.owner is not None}


class Supervisor(Feature):
    """Refuses every change to the graph that would overwrite a ``protected`` variable.

    It relies on the graph's ``DestroyHandler`` to know which nodes
    overwrite a variable (directly or through one of its views), and runs
    as part of ``fgraph.validate()``, so a rewrite that breaks the rule is
    rolled back. The graph's outputs are protected by the ``DestroyHandler``
    itself.
    """

    def __init__(self, protected):
        self.fgraph = None
        self.protected = list(protected)

    def clone(self):
        return type(self)(self.protected)

    def on_attach(self, fgraph):
        if hasattr(fgraph, "_supervisor"):
            raise AlreadyThere(f"A Supervisor is already attached to {fgraph}.")
        if self.fgraph is not None and self.fgraph is not fgraph:
            raise Exception("This Supervisor is already attached to another FunctionGraph")
        fgraph._supervisor = self
        self.fgraph = fgraph

    def on_detach(self, fgraph):
        if getattr(fgraph, "_supervisor", None) is self:
            del fgraph._supervisor
        self.fgraph = None

    def on_validate(self, fgraph):
        destroyers = getattr(fgraph, "destroyers", None)
        if destroyers is None:
            return True
        for var in self.protected:
            nodes = destroyers(var)
            if nodes:
                raise InconsistencyError(
                    f"Trying to destroy a protected variable: {var} is indestructible but "
                    f"{nodes[0]} overwrites it; only inputs given as In(variable, mutable=True) "
                    "(or shared variables replaced by their update) may be overwritten"
                )
        return True


def _gives_up(spec):
    """Whether the input described by ``spec`` may be overwritten by the function.

    ``In(mutable=True)`` says so explicitly; a shared variable whose update
    replaces its value no longer needs the old one once the update is
    computed (``SharedUpdateGuard`` orders that write last).
    """
    if getattr(spec, "mutable", False):
        return True
    return bool(getattr(spec, "shared", False)) and getattr(spec, "update", None) is not None


def _destroyers_in(fgraph):
    return [node for node in fgraph.toposort() if node.op.destroy_map]


def add_supervisor_to_fgraph(
    fgraph: FunctionGraph,
    input_specs: Sequence,
    accept_inplace: bool = False,
) -> None:
    """Protect the inputs of ``fgraph`` that ``input_specs`` do not give up, so in-place rewrites may run.

    Parameters
    ----------
    fgraph
        The graph; one spec per ``fgraph.inputs`` entry, in order.
    input_specs
        ``In`` / ``SymbolicInput`` instances. An input may be overwritten when
        its spec is ``mutable`` or it is a shared variable replaced by its
        update, or (with ``accept_inplace``) when an in-place
        op of the graph already overwrites it; every other input is protected.
    accept_inplace
        Whether the graph may already contain in-place operations.

    Raises
    ------
    TypeError
        The graph contains an in-place operation and ``accept_inplace`` is false.
    ValueError
        ``input_specs`` does not have one spec per graph input.
    InconsistencyError
        The in-place operations already in the graph are not safe.
    """
    input_specs = list(input_specs)
    if len(input_specs) != len(fgraph.inputs):
        raise ValueError(
            f"add_supervisor_to_fgraph needs one input spec per graph input: the graph has "
            f"{len(fgraph.inputs)} inputs, {len(input_specs)} specs were given"
        )
    destroyers = _destroyers_in(fgraph)
    if destroyers and not accept_inplace:
        node = destroyers[0]
        victims = ", ".join(str(node.inputs[ins[0]]) for ins in node.op.destroy_map.values())
        raise TypeError(
            f"Graph must not contain inplace operations: the in-place operation {node.op} "
            f"(node {node}) overwrites its input {victims}. Pass accept_inplace=True to allow "
            "it, or build the graph with the ordinary op and let the in-place rewrites make it "
            "in place where that is safe."
        )
    fgraph.attach_feature(DestroyHandler())
    already_destroyed = set()
    if destroyers:
        for var in fgraph.inputs:
            if fgraph.destroyers(var):
                already_destroyed.add(var)
    destroyable = set(getattr(fgraph, "destroyable_inputs", ()) or ())
    protected = []
    for spec, var in zip(input_specs, fgraph.inputs):
        if _gives_up(spec) or var in already_destroyed:
            destroyable.add(var)
        else:
            destroyable.discard(var)
            protected.append(var)
    fgraph.destroyable_inputs = destroyable
    supervisor = getattr(fgraph, "_supervisor", None)
    if supervisor is not None:
        supervisor.protected = protected
    else:
        fgraph.attach_feature(Supervisor(protected))
    if destroyers:
        fgraph.validate()


__all__ = [
    "Supervisor",
    "add_supervisor_to_fgraph",
    "alias_root",
    "infer_reuse_pattern",
    "view_tree_set",
]
