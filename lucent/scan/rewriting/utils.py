"""Helpers shared by the scan rewrites: rebuilding a ``Scan`` around a new inner graph."""

from __future__ import annotations

from lucent.graph.fg import FunctionGraph
from lucent.scan.op import Scan


def rebuild(op, inner_inputs, inner_outputs, info):
    """A ``Scan`` like ``op`` (same settings) computing the given inner graph with ``info``."""
    return op.clone_with_inner_graph(FunctionGraph(inner_inputs, inner_outputs, clone=False), info=info)


def movable(node):
    """Whether ``node`` can run once outside the loop instead of at every step."""
    from lucent.tensor.type import TensorType

    if isinstance(node.op, Scan) or getattr(node.op, "destroy_map", None):
        return False
    return all(isinstance(o.type, TensorType) for o in node.outputs) and all(
        isinstance(i.type, TensorType) for i in node.inputs
    )


__all__ = ["movable", "rebuild"]
