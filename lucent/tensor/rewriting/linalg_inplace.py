"""In-place linear algebra: let a factorisation or solve overwrite its input.

LAPACK drivers work in the memory of their matrix argument (SciPy's
``overwrite_a`` / ``overwrite_b``). A core linear-algebra op that can do so
says how with ``inplace_on_inputs(allowed_inplace_inputs)``, which returns a
copy of the op whose ``destroy_map`` names the inputs it may overwrite.

This rewrite offers each such node the inputs nothing else needs: not a
constant, not a function input the caller did not mark ``mutable``, and of
the exact type of one of the node's outputs (the buffer is reused for a
result). The ``DestroyHandler`` has the last word: the replacement goes
through ``replace_validated``, which undoes it on ``InconsistencyError``
(another reader, a view, a graph output); the inputs are then tried one at
a time.
"""

from __future__ import annotations

from lucent.graph.basic import Constant
from lucent.graph.destroyhandler import DestroyHandler
from lucent.graph.fg import InconsistencyError
from lucent.graph.rewriting.basic import GraphRewriter, replace_validated
from lucent.tensor.rewriting.registry import register_inplace


def _allowed_inputs(fgraph, node):
    """Input positions the node may be offered to overwrite."""
    protected = set(fgraph.inputs) - set(getattr(fgraph, "destroyable_inputs", ()))
    out_types = [o.type for o in node.outputs]
    allowed = []
    for i, inp in enumerate(node.inputs):
        if isinstance(inp, Constant) or inp in protected:
            continue
        if inp.type not in out_types:
            continue
        if any(node.inputs[j] is inp for j in range(len(node.inputs)) if j != i):
            continue
        allowed.append(i)
    return allowed


class InplaceLinalgRewriter(GraphRewriter):
    """Replaces core linear-algebra ops by their in-place variant where the graph allows it."""

    name = "inplace_linalg"

    def add_requirements(self, fgraph):
        super().add_requirements(fgraph)
        fgraph.attach_feature(DestroyHandler())

    def apply(self, fgraph):
        changed = False
        for node in fgraph.toposort():
            if node not in fgraph.apply_nodes or node.op.destroy_map:
                continue
            if not callable(getattr(node.op, "inplace_on_inputs", None)):
                continue
            allowed = _allowed_inputs(fgraph, node)
            if not allowed:
                continue
            for trial in [allowed] + ([[i] for i in allowed] if len(allowed) > 1 else []):
                new_op = node.op.inplace_on_inputs(allowed_inplace_inputs=trial)
                if new_op == node.op or not new_op.destroy_map:
                    continue
                new_outs = new_op.make_node(*node.inputs).outputs
                try:
                    replace_validated(fgraph, list(zip(node.outputs, new_outs)), reason=self)
                except InconsistencyError:
                    continue
                changed = True
                break
        return changed


inplace_linalg_rewriter = InplaceLinalgRewriter()
register_inplace(inplace_linalg_rewriter, name="inplace_linalg")

__all__ = ["InplaceLinalgRewriter", "inplace_linalg_rewriter"]
