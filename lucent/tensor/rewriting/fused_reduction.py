"""Fuse a reduction with the element-wise node feeding it (``sum(x * x)`` in one pass).

Runs in the fusion stage, after element-wise fusion has turned chains into
single ``Elemwise(Composite)`` nodes: a ``CAReduce`` whose input is the
output of a (not in-place, one-output) ``Elemwise`` read by nothing else
becomes one ``FusedCAReduce`` node. When something else also reads the
element-wise result, the temporary array must exist anyway, so the pair is
left alone.
"""

from __future__ import annotations

from lucent.graph.fg import InconsistencyError
from lucent.graph.rewriting.basic import GraphRewriter, replace_validated
from lucent.graph.traversal import io_toposort
from lucent.tensor.elemwise import Elemwise
from lucent.tensor.fused_reduction import FusedCAReduce
from lucent.tensor.reduction import CAReduce, _UFUNCS
from lucent.tensor.rewriting.registry import register_fusion


def fusable_reduction(fgraph, node):
    """The Elemwise node that ``node`` (a CAReduce) can absorb, or None."""
    if not isinstance(node.op, CAReduce) or type(node.op.scalar_op) not in _UFUNCS:
        return None
    (x,) = node.inputs
    producer = x.owner
    if producer is None or type(producer.op) is not Elemwise:
        return None
    if producer.op.destroy_map or len(producer.outputs) != 1:
        return None
    clients = fgraph.clients.get(x, ())
    if len(clients) != 1 or clients[0][0] != node:
        return None  # also read elsewhere, or an output of the graph
    return producer


class FusedReductionRewriter(GraphRewriter):
    """Replaces ``CAReduce(Elemwise(op)(*xs))`` by ``FusedCAReduce(op, reduce)(*xs)``."""

    name = "fused_reduction"

    def apply(self, fgraph):
        changed = False
        for node in list(io_toposort(fgraph.inputs, fgraph.outputs)):
            if node not in fgraph.apply_nodes:
                continue
            producer = fusable_reduction(fgraph, node)
            if producer is None:
                continue
            new = FusedCAReduce(producer.op.scalar_op, node.op)(*producer.inputs)
            if new.type != node.outputs[0].type:
                continue
            try:
                replace_validated(fgraph, [(node.outputs[0], new)], reason=self)
            except InconsistencyError:
                continue
            changed = True
        return changed


fused_reduction_rewriter = FusedReductionRewriter()
register_fusion(fused_reduction_rewriter, name="fused_reduction")

__all__ = ["FusedReductionRewriter", "fused_reduction_rewriter", "fusable_reduction"]
