"""Rewrites that take ``Blockwise`` away where the batch adds nothing.

* ``local_useless_blockwise``: a ``Blockwise`` node with no batch dimension
  is its core op;
* ``local_useless_unbatched_blockwise``: when every batch dimension has
  static length 1, the core op runs once on the squeezed inputs and its
  outputs get the length-1 dimensions back.

Both hand the node to the core op's own rewrites (``inv(inv(X))``, the
``solve`` specialisations) and to its kernel without the batch loop.
"""

from __future__ import annotations

from lucent.graph.rewriting.basic import node_rewriter
from lucent.tensor.blockwise import Blockwise
from lucent.tensor.elemwise import DimShuffle
from lucent.tensor.rewriting.registry import register_canonicalize, register_specialize, register_stabilize


@register_canonicalize("fast_compile")
@register_stabilize
@register_specialize
@node_rewriter([Blockwise])
def local_useless_blockwise(fgraph, node):
    """``Blockwise(op)(*inputs)`` -> ``op(*inputs)`` when the node has no batch dimension."""
    op = node.op
    if op.batch_ndim(node) != 0:
        return None
    outs = op.core_op.make_node(*node.inputs).outputs
    if any(o.type != n.type for o, n in zip(node.outputs, outs)):
        return None
    return list(outs)


@register_canonicalize
@register_stabilize
@register_specialize
@node_rewriter([Blockwise])
def local_useless_unbatched_blockwise(fgraph, node):
    """Run the core op once when every batch dimension has static length 1."""
    op = node.op
    b = op.batch_ndim(node)
    if b == 0 or not all(s == 1 for inp in node.inputs for s in inp.type.shape[:b]):
        return None
    core_inputs = [DimShuffle(inp.type.ndim, tuple(range(b, inp.type.ndim)))(inp) for inp in node.inputs]
    outs = op.core_op.make_node(*core_inputs).outputs
    result = [DimShuffle(o.type.ndim, ("x",) * b + tuple(range(o.type.ndim)))(o) for o in outs]
    if any(r.type.dtype != n.type.dtype or r.type.ndim != n.type.ndim for r, n in zip(result, node.outputs)):
        return None
    return result


__all__ = ["local_useless_blockwise", "local_useless_unbatched_blockwise"]
