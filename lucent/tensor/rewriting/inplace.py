"""In-place element-wise ops: write a result into the memory of an input.

An ``Elemwise`` (fused or not) allocates its output. When one of its inputs
has exactly the output's type - same dtype and a static shape equal to the
output's broadcast shape - and nothing needs that input's value afterwards,
the result can be written into the input's buffer instead
(``Elemwise(..., inplace_pattern={out: in})``). That saves an allocation
and a pass over memory per node, and for a shared-variable update such as
``W - lr * g`` it means the new ``W`` is computed in ``W``'s own buffer.

Whether "nothing needs the value afterwards" holds is not decided here: it
depends on the whole graph (other readers, views, graph outputs, which
inputs the function may overwrite). Each candidate is tried through
``replace_validated``, which asks the ``DestroyHandler`` to validate the
graph and undoes the change on ``InconsistencyError``; the next input is
then tried, and a node with no acceptable input is left as it is.

For the output that is the update of a shared variable, that shared
variable (when it is an input of the node) is tried first, so the update
lands in its own buffer rather than in a temporary.
"""

from __future__ import annotations

from lucent.graph.basic import Constant
from lucent.graph.destroyhandler import DestroyHandler
from lucent.graph.fg import InconsistencyError
from lucent.graph.rewriting.basic import GraphRewriter, replace_validated
from lucent.tensor.elemwise import Elemwise
from lucent.tensor.rewriting.registry import register_inplace


def _update_targets(fgraph, var):
    """Graph inputs whose update is ``var`` (from ``fgraph.update_mapping``)."""
    mapping = getattr(fgraph, "update_mapping", None) or {}
    return [
        fgraph.inputs[k]
        for out_idx, k in mapping.items()
        if out_idx < len(fgraph.outputs) and fgraph.outputs[out_idx] is var
    ]


def _candidates(fgraph, node, o, taken):
    """Input positions that output ``o`` of ``node`` may overwrite, best first."""
    out = node.outputs[o]
    protected = set(fgraph.inputs) - set(getattr(fgraph, "destroyable_inputs", ()))
    preferred = set(_update_targets(fgraph, out))
    first, rest = [], []
    for i, inp in enumerate(node.inputs):
        if i in taken or inp.type != out.type:
            continue
        if isinstance(inp, Constant) or inp in protected:
            continue
        if any(node.inputs[j] is inp for j in taken):
            continue
        (first if inp in preferred else rest).append(i)
    return first + rest


class InplaceElemwiseRewriter(GraphRewriter):
    """Gives element-wise nodes an ``inplace_pattern`` where the DestroyHandler allows it."""

    name = "inplace_elemwise"

    def add_requirements(self, fgraph):
        super().add_requirements(fgraph)
        fgraph.attach_feature(DestroyHandler())

    def apply(self, fgraph):
        changed = False
        for node in fgraph.toposort():
            if node not in fgraph.apply_nodes or type(node.op) is not Elemwise:
                continue
            if node.op.destroy_map:
                continue
            if self._make_inplace(fgraph, node):
                changed = True
        return changed

    def _make_inplace(self, fgraph, node):
        op = node.op
        pattern = {}
        for o in range(len(node.outputs)):
            for i in _candidates(fgraph, node, o, set(pattern.values())):
                trial = {**pattern, o: i}
                new_op = Elemwise(op.scalar_op, inplace_pattern=trial, name=op.name)
                try:
                    new_node = new_op.make_node(*node.inputs)
                except TypeError:
                    continue
                try:
                    replace_validated(fgraph, list(zip(node.outputs, new_node.outputs)), reason=self)
                except InconsistencyError:
                    continue
                node, pattern = new_node, trial
                break
        return bool(pattern)


inplace_elemwise_rewriter = InplaceElemwiseRewriter()
register_inplace(inplace_elemwise_rewriter, name="inplace_elemwise")

__all__ = ["InplaceElemwiseRewriter", "inplace_elemwise_rewriter"]
