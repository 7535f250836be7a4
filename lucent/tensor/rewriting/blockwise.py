"""Rewrites that take ``Blockwise`` away where the batch adds nothing.

* ``local_useless_blockwise``: a ``Blockwise`` node with no batch dimension
  is its core op;
* ``local_useless_unbatched_blockwise``: when every batch dimension has
  static length 1, the core op runs once on the squeezed inputs and its
  outputs get the length-1 dimensions back.

Both run late (``optdb`` position 60, after ``specialize`` and fusion,
before the in-place stage), as one walker named
``local_useless_unbatched_blockwise``: until then every rewrite and shape
inference sees ``Blockwise`` nodes, whose ``infer_shape`` knows the core
lengths the signature names (a core op's own may need its output's
value); afterwards the node runs as its core op, without the batch loop.

``blockwise_inplace`` (in the ``inplace`` stage) offers a ``Blockwise``
node the inputs it may overwrite, as ``inplace_linalg`` does for core ops:
the core op's ``inplace_on_inputs`` says which of them it destroys, and
the batched op takes that ``destroy_map``. Only an input that is not
broadcast along a batch dimension qualifies (each of its blocks is read
once).
"""

from __future__ import annotations

from lucent.graph.basic import Constant
from lucent.graph.destroyhandler import DestroyHandler
from lucent.graph.fg import InconsistencyError
from lucent.graph.rewriting.basic import GraphRewriter, in2out, node_rewriter, replace_validated
from lucent.tensor.blockwise import Blockwise
from lucent.tensor.elemwise import DimShuffle
from lucent.graph.rewriting.db import optdb
from lucent.tensor.rewriting.registry import register_inplace


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


optdb.register(
    "local_useless_unbatched_blockwise",
    in2out(local_useless_blockwise, local_useless_unbatched_blockwise, ignore_newtrees=True,
           name="local_useless_unbatched_blockwise"),
    "fast_run",
    "fast_compile",
    "blockwise",
    position=60,
)


class InplaceBlockwiseRewriter(GraphRewriter):
    """Gives ``Blockwise`` nodes the in-place variant of their core op where the graph allows it."""

    name = "blockwise_inplace"

    def add_requirements(self, fgraph):
        super().add_requirements(fgraph)
        fgraph.attach_feature(DestroyHandler())

    @staticmethod
    def candidates(fgraph, node):
        """Input positions the node may overwrite: allowed by the graph, not batch-broadcast."""
        b = node.op.batch_ndim(node)
        out_bcast = node.outputs[0].type.broadcastable[:b]
        protected = set(fgraph.inputs) - set(getattr(fgraph, "destroyable_inputs", ()))
        roots = [_memory_root(inp) for inp in node.inputs]
        allowed = []
        for i, inp in enumerate(node.inputs):
            if isinstance(roots[i], Constant) or roots[i] in protected:
                continue
            if inp.type.broadcastable[:b] != out_bcast:
                continue
            # The node must not read, through another input, memory it overwrites.
            if any(roots[j] is roots[i] for j in range(len(node.inputs)) if j != i):
                continue
            allowed.append(i)
        return allowed

    def apply(self, fgraph):
        changed = False
        for node in fgraph.toposort():
            if node not in fgraph.apply_nodes or not isinstance(node.op, Blockwise) or node.op.destroy_map:
                continue
            if not callable(getattr(node.op.core_op, "inplace_on_inputs", None)):
                continue
            allowed = self.candidates(fgraph, node)
            if not allowed:
                continue
            for trial in [allowed] + ([[i] for i in allowed] if len(allowed) > 1 else []):
                new_op = self.inplace_op(node.op, trial)
                if new_op is None:
                    continue
                new_outs = new_op.make_node(*node.inputs).outputs
                try:
                    replace_validated(fgraph, list(zip(node.outputs, new_outs)), reason=self)
                except InconsistencyError:
                    continue
                changed = True
                break
        return changed

    @staticmethod
    def inplace_op(op, allowed):
        """``op`` with the core op's in-place variant for ``allowed``; None when nothing is destroyed."""
        core = op.core_op.inplace_on_inputs(allowed_inplace_inputs=list(allowed))
        if core == op.core_op or not core.destroy_map:
            return None
        for positions in core.destroy_map.values():
            for i in positions:
                if i not in allowed:
                    raise ValueError(
                        f"Op {op.core_op} destroy_map does not respect allowed_inplace_inputs {allowed}"
                    )
        return type(op)(core, signature=op.signature, name=op.name, gufunc_spec=op.gufunc_spec,
                        destroy_map=core.destroy_map)


def _memory_root(var):
    """The variable whose buffer ``var`` lives in, following ``view_map``/``destroy_map``."""
    while var.owner is not None:
        op, k = var.owner.op, var.owner.outputs.index(var)
        mapped = (op.view_map or {}).get(k) or (op.destroy_map or {}).get(k)
        if not mapped:
            break
        var = var.owner.inputs[mapped[0]]
    return var


blockwise_inplace = InplaceBlockwiseRewriter()
register_inplace(blockwise_inplace, name="blockwise_inplace")


__all__ = [
    "InplaceBlockwiseRewriter",
    "blockwise_inplace",
    "local_useless_blockwise",
    "local_useless_unbatched_blockwise",
]
