"""Checking that rewriting a graph is deterministic.

A rewrite must depend on the graph only. One that iterates over objects in
an ``id()`` or hash order, or keeps state between applications, can give a
different graph each time the same program is compiled, which makes bugs
come and go between runs. DebugMode therefore rewrites a few independent
clones of the graph it compiles (``stability_patience`` in all) and compares
the results with ``GraphSignature``; a difference raises
``StochasticOrder`` naming the first function output whose graph differs.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Constant

from lucent.debugmode.errors import StochasticOrder


class GraphSignature:
    """Structural identities of rewritten graphs, comparable across clones.

    Every variable gets an integer: graph inputs by position, constants by
    type and value, node outputs by ``(op, input identities, output
    index)``. Identical structure gives identical integers, whatever the
    variables' identities and whatever order a toposort lists the nodes in
    (a different order of independent nodes is not a different graph). One
    ``GraphSignature`` must number all the graphs that are compared.
    """

    def __init__(self):
        self._ids = {}
        self.described = {}

    def _intern(self, key, text):
        ident = self._ids.get(key)
        if ident is None:
            ident = self._ids[key] = len(self._ids)
            self.described[ident] = text
        return ident

    def of(self, fgraph):
        """``(output identities, {identity: node text})`` of ``fgraph``."""
        ids = {var: self._intern(("input", i), f"input {i}") for i, var in enumerate(fgraph.inputs)}
        for node in fgraph.toposort():
            inputs = tuple(self._of_var(var, ids) for var in node.inputs)
            op = node.op
            try:
                hash(op)
                op_key = op
            except TypeError:  # an unhashable op is only ever equal to itself
                op_key = ("op id", id(op))
            for k, out in enumerate(node.outputs):
                text = f"output {k} of {op} on ({', '.join(self.described[i] for i in inputs)})"
                if len(text) > 300:
                    text = text[:297] + "..."
                ids[out] = self._intern((op_key, inputs, k, str(out.type)), text)
        return tuple(self._of_var(var, ids) for var in fgraph.outputs)

    def _of_var(self, var, ids):
        ident = ids.get(var)
        if ident is not None:
            return ident
        if isinstance(var, Constant):
            data = var.data
            try:
                arr = np.asarray(data)
                value = (arr.dtype.str, arr.shape, arr.tobytes())
            except Exception:  # a value NumPy cannot hold: compare it as it is
                value = ("object", id(data))
            ident = self._intern(("constant", str(var.type), value), str(var))
        else:
            ident = self._intern(("free", id(var)), str(var))
        ids[var] = ident
        return ident


def faithful_clone(fgraph):
    """A clone of ``fgraph`` (before rewriting) that rewrites exactly as ``fgraph`` would.

    Rewrites read more than the graph: which inputs may be overwritten
    (``fgraph.destroyable_inputs``) and the features the compiler attached
    (the DestroyHandler, the guard of shared-variable updates). Those are
    carried over with the variables mapped to the clone's, so that a
    difference between the rewritten graphs is the rewrites' doing.
    """
    clone, equiv = fgraph.clone_get_equiv(check_integrity=False, attach_feature=False)
    if hasattr(fgraph, "destroyable_inputs"):
        clone.destroyable_inputs = {equiv.get(v, v) for v in fgraph.destroyable_inputs}
    for feature in list(getattr(fgraph, "_features", ())):
        if not hasattr(feature, "clone"):
            continue
        new = feature.clone()
        shared = getattr(new, "shared", None)
        if isinstance(shared, set):  # features that name graph inputs
            new.shared = {equiv.get(v, v) for v in shared}
        clone.attach_feature(new)
    return clone


def check_stable(fgraph, repeats):
    """Raise ``StochasticOrder`` when a graph in ``repeats`` differs from ``fgraph``.

    All graphs must already be rewritten; ``repeats`` are the clones
    rewritten again, in order.
    """
    signature = GraphSignature()
    reference = signature.of(fgraph)
    for attempt, clone in enumerate(repeats, start=1):
        other = signature.of(clone)
        if other == reference:
            continue
        index = next(i for i, (a, b) in enumerate(zip(reference, other)) if a != b)
        first = signature.described[reference[index]]
        then = signature.described[other[index]]
        raise StochasticOrder(
            f"Rewriting the same graph twice gave different graphs (repetition {attempt}): "
            f"output {index} of the function became {first} the first time and {then} the "
            f"next: expected the rewrites to depend only on the graph. A rewrite that iterates "
            "in id()/hash order or keeps state between applications does this",
            [("first time", first), (f"repetition {attempt}", then)],
            attempt=attempt, first=first, other=then, output_index=index,
        )


__all__ = ["GraphSignature", "check_stable", "faithful_clone"]
