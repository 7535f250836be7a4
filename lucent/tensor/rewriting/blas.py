"""BLAS rewrites: products replaced by the op that one BLAS routine computes.

The dot-to-``Dot22``/``Gemv``/``Ger``, ``Gemm`` folding and in-place BLAS
rewrites live in ``specialize`` (they are re-exported here, at PyTensor's
module path). This module adds the batched case:
``specialize_matmul_to_batched_dot`` turns a ``matmul`` with batch
dimensions into ``BatchedDot`` (one ``?gemm`` per batch entry). It is
registered in ``specialize`` under its own name, so
``mode.excluding("specialize_matmul_to_batched_dot")`` keeps the ``MatMul``.
"""

from __future__ import annotations

from lucent.graph.rewriting.basic import node_rewriter
from lucent.tensor.blas import _batched_dot
from lucent.tensor.math import MatMul
from lucent.tensor.rewriting.registry import register_specialize
from lucent.tensor.rewriting.specialize import local_blas_inplace, local_dot_to_blas, local_gemm_fold


def _lengths(var):
    """``var``'s lengths: the static ones as ints, the others read from its shape."""
    return tuple(s if s is not None else var.shape[i] for i, s in enumerate(var.type.shape))


@register_specialize
@node_rewriter([MatMul])
def specialize_matmul_to_batched_dot(fgraph, node):
    """``matmul(x, y)`` with batch dimensions and no broadcasting among them -> ``BatchedDot``.

    ``BatchedDot`` does not broadcast its batch dimension, and broadcasting
    explicitly could make huge arrays, so a node whose operands differ in
    which batch dimensions have static length 1 is left alone. More than
    one batch dimension is flattened into one around the product.
    """
    x, y = node.inputs
    if x.type.ndim < 3:
        return None
    if x.type.broadcastable[:-2] != y.type.broadcastable[:-2]:
        return None
    (out,) = node.outputs
    if len(x.type.shape) > 3:
        x_shape, y_shape = _lengths(x), _lengths(y)
        x3 = x.reshape((-1, x_shape[-2], x_shape[-1]))
        y3 = y.reshape((-1, y_shape[-2], y_shape[-1]))
        new_out = _batched_dot(x3, y3).reshape((*x_shape[:-2], x_shape[-2], y_shape[-1]))
    else:
        new_out = _batched_dot(x, y)
    if new_out.type.dtype != out.type.dtype:
        return None
    if new_out.type != out.type:
        # Keep the static shape the MatMul node promised.
        from lucent.tensor.shape import specify_shape

        new_out = specify_shape(new_out, out.type.shape)
        if new_out.type != out.type:
            return None
    return [new_out]


__all__ = [
    "local_blas_inplace",
    "local_dot_to_blas",
    "local_gemm_fold",
    "specialize_matmul_to_batched_dot",
]
