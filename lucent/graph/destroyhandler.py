"""Keeping in-place operations safe: the ``DestroyHandler`` feature.

An op that overwrites an input (``destroy_map``) saves memory and time, but
is only correct when nobody needs the old value afterwards. The
DestroyHandler tracks, for every variable, its *root*: the variable whose
memory it shares through ``view_map`` / ``destroy_map`` chains. A graph is
valid when, for every root,

* at most one node destroys it (or a view of it);
* the root is not a graph input the function must preserve (inputs are
  protected unless listed in ``fgraph.destroyable_inputs``, as the
  ``function`` machinery does for shared variables whose update replaces the
  old value), nor a constant;
* no graph output is the root or a view of it (the caller would see the
  overwritten value);
* every other reader of the root or of its views can run *before* the
  destroyer: these become ordering constraints (``orderings``) and a cycle
  among them makes the graph invalid.

``validate()`` raises ``InconsistencyError`` naming the variable and the
nodes involved; the rewriting machinery then undoes the change.
"""

from __future__ import annotations

from collections import defaultdict, deque

from lucent.graph.basic import Constant
from lucent.graph.features import AlreadyThere, Feature
from lucent.graph.fg import InconsistencyError
from lucent.graph.traversal import io_toposort


def _aliased_inputs(node):
    """``{output index: input index}`` for outputs sharing memory with an input."""
    out = {}
    for o, ins in getattr(node.op, "view_map", {}).items():
        out[o] = ins[0]
    for o, ins in getattr(node.op, "destroy_map", {}).items():
        out[o] = ins[0]
    return out


class DestroyHandler(Feature):
    """Validates destructive (in-place) operations; see module docstring."""

    def on_attach(self, fgraph):
        if hasattr(fgraph, "destroy_handler"):
            raise AlreadyThere()
        self.fgraph = fgraph
        self._root_cache = None
        self._destroyed_cache = None
        self._orderings_cache = None
        fgraph.destroy_handler = self
        fgraph.destroyers = self.destroyers
        if not hasattr(fgraph, "destroyable_inputs"):
            fgraph.destroyable_inputs = set()
        # ``fgraph.validate()`` runs every feature's ``on_validate``; a graph
        # that lost its validator gets one, so in-place safety is checked.
        if "validate" not in getattr(fgraph, "_feature_methods", {}):
            from lucent.graph.features import Validator

            fgraph.attach_feature(Validator())

    def on_detach(self, fgraph):
        del fgraph.destroy_handler
        del fgraph.destroyers

    def on_validate(self, fgraph):
        self.validate(fgraph)

    def clone(self):
        return DestroyHandler()

    def _graph_changed(self, *args, **kwargs):
        self._root_cache = None
        self._destroyed_cache = None
        self._orderings_cache = None

    # The view roots and what destroys each depend only on the graph's nodes and
    # edges: computed once per version of the graph (every validation of a
    # rewrite, and every schedule, asks for them).
    on_import = on_prune = on_change_input = _graph_changed

    # --- analysis ----------------------------------------------------------------
    def _roots(self):
        """``{variable: root}`` for every variable that is a view of another (do not mutate)."""
        if self._root_cache is None:
            self._root_cache = self._compute_roots()
        return self._root_cache

    def _compute_roots(self):
        root = {}
        # Plain data order: fgraph.toposort() would ask for our orderings.
        for node in io_toposort(self.fgraph.inputs, self.fgraph.outputs):
            for o, i in _aliased_inputs(node).items():
                base = node.inputs[i]
                root[node.outputs[o]] = root.get(base, base)
        return root

    def destroyers(self, var):
        """The nodes that overwrite ``var``'s memory (directly or through a view)."""
        roots, destroyed = self._destroyed_roots()
        return list(destroyed.get(roots.get(var, var), ()))

    def _destroyed_roots(self):
        """``(roots, {root: [nodes destroying it or a view of it]})`` (do not mutate)."""
        if self._destroyed_cache is None:
            roots = self._roots()
            destroyed = {}
            for node in self.fgraph.apply_nodes:
                for o, ins in getattr(node.op, "destroy_map", {}).items():
                    inp = node.inputs[ins[0]]
                    destroyed.setdefault(roots.get(inp, inp), []).append(node)
            self._destroyed_cache = (roots, destroyed)
        return self._destroyed_cache

    def orderings(self, fgraph):
        """Readers of a destroyed value (and of its views) run before its destroyer (do not mutate)."""
        if self._orderings_cache is None:
            self._orderings_cache = self._compute_orderings(fgraph)
        return self._orderings_cache

    def _compute_orderings(self, fgraph):
        roots, destroyed = self._destroyed_roots()
        if not destroyed:
            return {}
        members = defaultdict(list)  # root -> [root and its views]
        for var, r in roots.items():
            members[r].append(var)
        order = defaultdict(set)
        for r, destroyers in destroyed.items():
            aliases = [r] + members.get(r, [])
            alias_set = set(aliases)
            for destroyer in destroyers:
                after = _written_by(members.get(r, []), destroyer)
                for var in aliases:
                    if var in after:  # the value written, read after the destroyer anyway
                        continue
                    for client, _ in fgraph.clients.get(var, []):
                        if client == "output" or client is destroyer:
                            continue
                        # A node producing a view that the destroyer consumes
                        # is an ancestor of the destroyer anyway.
                        if any(out in alias_set for out in client.outputs) and _feeds(client, destroyer):
                            continue
                        order[destroyer].add(client)
        return {node: list(prereqs) for node, prereqs in order.items()}

    def validate(self, fgraph=None):
        """Raise ``InconsistencyError`` if a destructive operation is unsafe."""
        fgraph = self.fgraph
        roots, destroyed = self._destroyed_roots()
        if not destroyed:
            return True
        members = defaultdict(list)
        for var, r in roots.items():
            members[r].append(var)
        outputs = set(fgraph.outputs)
        for r, destroyers in destroyed.items():
            if len(destroyers) > 1:
                raise InconsistencyError(
                    f"Multiple destroyers of {r}: {', '.join(str(d) for d in destroyers)}"
                )
            if isinstance(r, Constant):
                raise InconsistencyError(
                    f"{destroyers[0]} would overwrite the constant {r}"
                )
            if r in fgraph.inputs and r not in fgraph.destroyable_inputs:
                raise InconsistencyError(
                    f"Attempting to destroy indestructible variables: {r} "
                    f"(by {destroyers[0]}); only inputs marked mutable or shared "
                    "variables replaced by their update may be overwritten"
                )
            destroyer = destroyers[0]
            after = _written_by(members.get(r, []), destroyer)
            for var in [r] + members.get(r, []):
                if var not in after and _read_lazily(fgraph, var):
                    raise InconsistencyError(
                        f"{destroyer} would overwrite {var}, which a lazy branch reads: the "
                        "branch would have to run before it whatever the condition"
                    )
            for var in [r] + members.get(r, []):
                if var in outputs and var not in after:
                    raise InconsistencyError(
                        f"{destroyer} would overwrite {var}, which is an output of the function"
                    )
        _check_acyclic(fgraph, self.orderings(fgraph))
        return True


def order_destroyers(fgraph):
    """Give ``fgraph`` a ``DestroyHandler`` when one of its nodes works in place.

    A graph built from nodes already rewritten in place (an op's inner graph:
    a loop body, an ``OpFromGraph``) has no handler, so its ``toposort``
    would not know that every other reader of a value must run before the
    node that overwrites it. With the handler attached, the orderings come
    back wherever the graph is scheduled. Returns ``fgraph``.
    """
    if hasattr(fgraph, "destroy_handler"):
        return fgraph
    if any(getattr(node.op, "destroy_map", None) for node in fgraph.apply_nodes):
        fgraph.attach_feature(DestroyHandler())
    return fgraph


def _read_lazily(fgraph, var):
    """Whether a branching node (an op declaring ``lazy_branches``) reads ``var`` in a branch."""
    for client, i in fgraph.clients.get(var, []):
        declare = getattr(getattr(client, "op", None), "lazy_branches", None)
        if client == "output" or declare is None:
            continue
        _, (then_pos, else_pos) = declare(client)
        if i in then_pos or i in else_pos:
            return True
    return False


def _written_by(members, destroyer):
    """The ``members`` of an alias tree that hold what ``destroyer`` wrote: its outputs
    and views taken of them (``members`` are in data order, a view after its base)."""
    after = set()
    for var in members:
        node = var.owner
        base = node.inputs[_aliased_inputs(node)[node.outputs.index(var)]]
        if node is destroyer or base in after:
            after.add(var)
    return after


def _feeds(node, target):
    """True if one of ``node``'s outputs is an ancestor of ``target``."""
    stack = list(target.inputs)
    seen = set()
    outs = set(node.outputs)
    while stack:
        var = stack.pop()
        if var in outs:
            return True
        if var in seen or var.owner is None:
            continue
        seen.add(var)
        stack.extend(var.owner.inputs)
    return False


def _check_acyclic(fgraph, orderings):
    """Kahn's algorithm over data edges plus ``orderings``; a cycle is an error."""
    preds = defaultdict(set)
    for node in fgraph.apply_nodes:
        for inp in node.inputs:
            if inp.owner is not None and inp.owner in fgraph.apply_nodes:
                preds[node].add(inp.owner)
    for node, prereqs in orderings.items():
        preds[node].update(p for p in prereqs if p is not node)
    succs = defaultdict(set)
    indegree = {node: 0 for node in fgraph.apply_nodes}
    for node, ps in preds.items():
        for p in ps:
            succs[p].add(node)
        indegree[node] = len(ps)
    queue = deque(n for n, d in indegree.items() if d == 0)
    seen = 0
    while queue:
        n = queue.popleft()
        seen += 1
        for s in succs[n]:
            indegree[s] -= 1
            if indegree[s] == 0:
                queue.append(s)
    if seen != len(indegree):
        stuck = [str(n) for n, d in indegree.items() if d > 0][:3]
        raise InconsistencyError(
            "An in-place operation would overwrite a value that a later node still reads "
            f"(dependency cycle among: {', '.join(stuck)})"
        )


def _contains_cycle(fgraph, orderings):
    """Whether ``fgraph``'s nodes, with the extra ``orderings`` (``{node: nodes before it}``), form a cycle."""
    try:
        _check_acyclic(fgraph, orderings)
    except InconsistencyError:
        return True
    return False


__all__ = ["DestroyHandler"]
