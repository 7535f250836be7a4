"""A triangular solve whose right-hand side is a triangle of the same kind.

The gradient of the Cholesky factorisation solves ``L^T Y = P^T`` with
``P^T`` upper triangular (``P`` is a lower triangle). The inverse of an
upper-triangular matrix is upper triangular, so ``Y`` is too, and column
``j`` of ``Y`` depends only on the leading ``j + 1`` rows and columns of
``L^T``: solved column block by column block, the system costs a third of
a general triangular solve with as many right-hand sides (``n^3 / 3``
flops instead of ``n^3``). ``SolveTriangularOfTriangle`` is that solve; for
lower-triangular operands the trailing blocks play the same part.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply
from lucent.tensor.blockwise import BatchedCoreOp
from lucent.tensor.linalg.dtype_utils import real_float_matrices
from lucent.tensor.type import TensorType


class SolveTriangularOfTriangle(BatchedCoreOp):
    """``X`` with ``tri(a) @ X == tri(b)``, ``tri`` the lower (``lower=True``) or upper triangle.

    Only that triangle of ``a`` and of ``b`` is read; ``X`` has the same
    triangular shape (exact zeros in the other triangle). A zero on the
    diagonal of ``a`` gives NaN everywhere, as ``SolveTriangular`` does.
    """

    __props__ = ("lower",)

    def __init__(self, lower=False):
        self.lower = bool(lower)
        self.gufunc_signature = "(m,m),(m,n)->(m,n)"

    def make_node(self, a, b):
        a, b, dtype = real_float_matrices(a, b, "SolveTriangularOfTriangle")
        return Apply(self, [a, b], [TensorType(dtype, b.type.shape)()])

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        a, b = inputs
        dtype = node.outputs[0].type.dtype
        if a.shape[0] != a.shape[1]:
            raise ValueError(f"SolveTriangularOfTriangle: `a` must be a square matrix, got shape {a.shape}")
        if b.shape[0] != a.shape[0]:
            raise ValueError(
                f"SolveTriangularOfTriangle: incompatible dimensions, `a` has shape {a.shape} and `b` {b.shape}"
            )
        tri = np.tril if self.lower else np.triu
        with np.errstate(all="ignore"):
            try:
                x = scipy.linalg.solve_triangular(a, tri(b), lower=self.lower, check_finite=False)
                x = tri(x)
            except np.linalg.LinAlgError:
                x = np.full(b.shape, np.nan, dtype=dtype)
        output_storage[0][0] = np.asarray(x, dtype=dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[1])]

    def L_op(self, inputs, outputs, output_grads):
        """As ``SolveTriangular``'s, with the cotangents restricted to the triangles read:
        ``b_bar = tri(tri(a)^-T tri(x_bar))``, ``a_bar = -tri(b_bar x^T)``."""
        from lucent.tensor.linalg._structure import lower_triangle, upper_triangle
        from lucent.tensor.linalg.solvers.triangular import SolveTriangular
        from lucent.tensor.math import dot

        a, _ = inputs
        (x,), (x_bar,) = outputs, output_grads
        tri = lower_triangle if self.lower else upper_triangle
        b_bar = tri(SolveTriangular(lower=self.lower, trans=1, b_ndim=2)(a, tri(x_bar)))
        return [-tri(dot(b_bar, x.T)), b_bar]


def solve_triangular_of_triangle(a, b, *, lower=False):
    """``solve_triangular(a, tri(b), lower=lower)`` for a ``b`` known to be that triangle."""
    return SolveTriangularOfTriangle(lower=lower)(a, b)


__all__ = ["SolveTriangularOfTriangle", "solve_triangular_of_triangle"]
