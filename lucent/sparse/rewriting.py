"""Graph rewrites for sparse ops (registered in ``optdb`` on import of ``lucent.sparse``).

``local_inplace_remove0`` lets ``Remove0`` drop explicit zeros in the input
matrix's own buffers instead of a copy, when the input may be overwritten:
an intermediate result, or a function input declared ``In(x, mutable=True)``
(the ``DestroyHandler`` rejects the change otherwise).
"""

from __future__ import annotations

from lucent.graph.rewriting.basic import node_rewriter
from lucent.sparse.basic import Remove0
from lucent.tensor.rewriting.registry import register_inplace


@register_inplace
@node_rewriter([Remove0], inplace=True)
def local_inplace_remove0(fgraph, node):
    """``Remove0`` -> ``Remove0{inplace}`` when its input may be overwritten."""
    if node.op.inplace:
        return None
    x = node.inputs[0]
    if x.owner is None and x not in getattr(fgraph, "destroyable_inputs", ()):
        return None
    return [Remove0(inplace=True)(x)]


__all__ = ["local_inplace_remove0"]
