"""Canonicalize ``JoinDims`` / ``SplitDims`` to the ops the other rewrites know.

After canonicalize a graph has no ``JoinDims`` or ``SplitDims``: each becomes
a ``Reshape`` (whose rewrites and kernels exist), or the more specific op
when one fits: joining no axes is ``expand_dims``, joining one is nothing,
splitting into no lengths is ``squeeze``, into one length is
``specify_shape``.
"""

from __future__ import annotations

from lucent.graph.rewriting.basic import node_rewriter
from lucent.graph.rewriting.stack_trace import copy_stack_trace
from lucent.tensor.basic import expand_dims, squeeze
from lucent.tensor.reshape import JoinDims, SplitDims
from lucent.tensor.rewriting.registry import register_canonicalize
from lucent.tensor.shape import specify_shape


@register_canonicalize
@node_rewriter([SplitDims])
def local_split_dims(fgraph, node):
    """``SplitDims`` -> ``squeeze`` (no lengths), ``specify_shape`` (one length) or ``Reshape``."""
    x, shape = node.inputs
    axis = node.op.axis
    n = shape.type.shape[0]
    if n == 0:
        new = squeeze(x, axis=axis)
    elif n == 1:
        spec = [None] * x.type.ndim
        spec[axis] = shape[0]
        new = specify_shape(x, spec)
    else:
        new = x.reshape([*x.shape[:axis], *[shape[i] for i in range(n)], *x.shape[axis + 1:]])
    copy_stack_trace(node.outputs[0], new)
    return [new]


@register_canonicalize
@node_rewriter([JoinDims])
def local_join_dims(fgraph, node):
    """``JoinDims`` -> ``expand_dims`` (no axes), the input itself (one axis) or ``Reshape``."""
    (x,) = node.inputs
    start, n_axes = node.op.start_axis, node.op.n_axes
    if n_axes == 0:
        new = expand_dims(x, axis=start)
    elif n_axes == 1:
        return [x]
    else:
        new = x.reshape([*x.shape[:start], -1, *x.shape[start + n_axes:]])
    copy_stack_trace(node.outputs[0], new)
    return [new]


__all__ = ["local_join_dims", "local_split_dims"]
