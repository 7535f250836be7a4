"""How the sparse ops behave under ``vectorize_graph`` (batch dimensions added to their inputs).

SciPy has no batched sparse matrix, so a sparse operand can never gain
batch dimensions. ``StructuredDot(sparse a, dense b)`` still vectorizes over
a batched dense ``b`` of shape ``(B..., k, n)``: the batch dimensions are
folded into the columns, ``a @ b'`` with ``b'`` of shape ``(k, B*n)`` is one
2-d product, and the result is unfolded to ``(B..., m, n)``. Ops combining a
sparse matrix element-wise with a dense one (``AddSD``, ``MulSD``) cannot be
batched and say so.
"""

from __future__ import annotations

from lucent.graph.replace import _vectorize_node
from lucent.sparse import math as sm


@_vectorize_node.register(sm.StructuredDot)
def _vectorize_structured_dot(op, node, batch_a, batch_b):
    from lucent.tensor.rearrange import moveaxis
    from lucent.tensor.reshape import join_dims, split_dims

    a, b = node.inputs
    if batch_a.type.ndim != a.type.ndim:
        raise NotImplementedError(
            "Cannot vectorize StructuredDot when the sparse (left) input is batched: "
            "scipy has no batched sparse matrix"
        )
    if batch_b.type.ndim == b.type.ndim:
        return op.make_node(batch_a, batch_b).outputs
    moved = moveaxis(batch_b, -2, 0)  # (k, B..., n)
    trailing = moved.shape[1:]
    product = op.make_node(batch_a, join_dims(moved, start_axis=1)).outputs[0]  # (m, B*n)
    return [moveaxis(split_dims(product, shape=trailing, axis=1), 0, -2)]


def _vectorize_sparse_unsupported(op, node, *batched_inputs):
    raise NotImplementedError(
        f"Cannot vectorize {type(op).__name__}: scipy has no batched-sparse representation, so the "
        "sparse operand cannot be broadcast against a batched dense input"
    )


for _op_class in (sm.AddSparseDense, sm.MultiplySparseDense):
    _vectorize_node.register(_op_class)(_vectorize_sparse_unsupported)

__all__ = []
