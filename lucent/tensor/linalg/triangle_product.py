"""The lower triangle of a matrix product, computing only that triangle.

The gradient of the Cholesky factorisation needs ``tril(L.T @ G)``. Row
``i`` of a lower triangle needs only the columns ``j <= i`` of the product,
and with an upper-triangular left factor (``L.T``) only the terms
``k >= i`` of each sum: the triangle costs about a sixth of the full
product's multiply-adds (``n^3 / 3`` flops instead of ``2 n^3`` for square
matrices). ``TriangleOfProduct`` is that product. The fast path computes it
by blocks of rows, one BLAS ``gemm`` per block (and one for the diagonal
block of an upper-triangular factor), so it runs at the machine's
matrix-product rate.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply
from lucent.tensor.blockwise import BatchedCoreOp
from lucent.tensor.linalg.dtype_utils import real_float_matrices
from lucent.tensor.type import TensorType


class TriangleOfProduct(BatchedCoreOp):
    """``tril(a @ b)`` for real floating-point matrices.

    With ``a_upper``, ``a`` is read as ``triu(a)``: the entries below its
    diagonal are not read (they may hold anything), as a triangular
    factor's other triangle is not read by a triangular solve.
    """

    __props__ = ("a_upper",)

    def __init__(self, a_upper=False):
        self.a_upper = bool(a_upper)
        self.gufunc_signature = "(m,k),(k,n)->(m,n)"

    def make_node(self, a, b):
        a, b, dtype = real_float_matrices(a, b, "TriangleOfProduct")
        if a.type.shape[1] is not None and b.type.shape[0] is not None and a.type.shape[1] != b.type.shape[0]:
            raise ValueError(
                f"TriangleOfProduct: shapes {a.type.shape} and {b.type.shape} are not aligned"
            )
        return Apply(self, [a, b], [TensorType(dtype, (a.type.shape[0], b.type.shape[1]))()])

    def perform(self, node, inputs, output_storage):
        a, b = inputs
        if a.shape[1] != b.shape[0]:
            raise ValueError(f"TriangleOfProduct: shapes {a.shape} and {b.shape} are not aligned")
        if self.a_upper:
            a = np.triu(a)
        dtype = node.outputs[0].type.dtype
        output_storage[0][0] = np.tril(np.dot(a, b)).astype(dtype, copy=False)

    def infer_shape(self, fgraph, node, input_shapes):
        (m, _), (_, n) = input_shapes
        return [(m, n)]

    def L_op(self, inputs, outputs, output_grads):
        """With ``C = tril(A B)`` only ``tril`` of the cotangent reaches the product:
        ``A_bar = tril(G) B^T`` (its upper triangle, for ``a_upper``), ``B_bar = A^T tril(G)``."""
        from lucent.tensor.linalg._structure import lower_triangle, upper_triangle
        from lucent.tensor.math import dot

        a, b = inputs
        (g,) = output_grads
        g = lower_triangle(g)
        a_read = upper_triangle(a) if self.a_upper else a
        grad_a = dot(g, b.T)
        if self.a_upper:
            grad_a = upper_triangle(grad_a)
        return [grad_a, dot(a_read.T, g)]


def lower_triangle_of_product(a, b, *, a_upper=False):
    """``tril(a @ b)`` computed as a triangle (``a`` read as ``triu(a)`` with ``a_upper``)."""
    return TriangleOfProduct(a_upper=a_upper)(a, b)


__all__ = ["TriangleOfProduct", "lower_triangle_of_product"]
