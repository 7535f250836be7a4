"""``typed_list_inplace_rewrite``: list ops change their input list instead of copying it.

``append``, ``extend``, ``insert``, ``remove`` and ``reverse`` copy the input
list by default (a list is small: the copy holds references), so the input
stays usable by other nodes. In FAST_RUN, when nothing else reads the input
list afterwards (the DestroyHandler decides, as for every in-place rewrite),
the op is replaced by its ``inplace=True`` variant, which changes the list
itself. A graph input list is changed only when it is declared mutable
(``In(l, mutable=True)``).
"""

from __future__ import annotations

from lucent.graph.rewriting.basic import node_rewriter
from lucent.tensor.rewriting.registry import register_inplace
from lucent.typed_list.basic import Append, Extend, Insert, Remove, Reverse


@register_inplace
@node_rewriter([Append, Extend, Insert, Remove, Reverse], inplace=True)
def typed_list_inplace_rewrite(fgraph, node):
    """``Append`` -> ``Append{inplace=True}`` (and the same for the other list-changing ops)."""
    if node.op.inplace:
        return None
    x = node.inputs[0]
    if x.owner is None and x not in getattr(fgraph, "destroyable_inputs", ()):
        return None
    return [type(node.op)(inplace=True)(*node.inputs)]


__all__ = ["typed_list_inplace_rewrite"]
