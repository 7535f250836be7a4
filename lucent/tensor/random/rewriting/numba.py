"""``introduce_explicit_core_shape_rv``: wrap draws in ``RandomVariableWithCoreShape``.

PyTensor's Numba backend needs each draw's core shape as an input; lucent's
kernels compute it themselves, so this rewrite is not in lucent's default
pipeline. It is kept for graphs and rewrite sequences written for
PyTensor's Numba backend: applied explicitly
(``dfs_rewriter(introduce_explicit_core_shape_rv)``), it gives the same
graph structure, and the wrapped draws give the same numbers on both paths.

The core shape is read from the node's own inputs only
(``ShapeFeature.get_non_recursive_shape``), so it can be introduced after
in-place rewrites without conflicting with them; a core shape that would
need another draw to be computed is not introduced.
"""

from __future__ import annotations

from lucent.graph.rewriting.basic import copy_stack_trace, node_rewriter
from lucent.graph.traversal import ancestors
from lucent.tensor.basic import as_tensor_variable, constant
from lucent.tensor.random.core_shape import RandomVariableWithCoreShape
from lucent.tensor.random.op import RandomVariable
from lucent.tensor.rewriting.shape_feature import ShapeFeature


@node_rewriter([RandomVariable])
def introduce_explicit_core_shape_rv(fgraph, node):
    """``rv(rng, size, *params)`` becomes ``[rv](core_shape, rng, size, *params)``."""
    op = node.op
    rv = node.outputs[1]
    feature = getattr(fgraph, "shape_feature", None) or ShapeFeature()
    lengths = [feature.get_non_recursive_shape(rv, i) for i in range(rv.type.ndim - op.ndim_supp, rv.type.ndim)]
    core_shape = as_tensor_variable(lengths) if lengths else constant([], dtype="int64")
    inputs = frozenset(node.inputs)
    for var in ancestors([core_shape], blockers=inputs):
        if var not in inputs and var.owner is not None and isinstance(var.owner.op, RandomVariable):
            return None
    wrapper = RandomVariableWithCoreShape(
        [core_shape, *node.inputs], node.outputs, destroy_map={0: [1]} if op.inplace else None
    )
    new_outs = wrapper.make_node(core_shape, *node.inputs).outputs
    copy_stack_trace(node.outputs, new_outs)
    return new_outs


__all__ = ["introduce_explicit_core_shape_rv"]
