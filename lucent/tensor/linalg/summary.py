"""Numbers that summarise a matrix: the determinant ``det``."""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.tensor.basic import as_tensor_variable
from lucent.tensor.linalg.dtype_utils import check_core_ndim, linalg_output_dtype
from lucent.tensor.type import TensorType


class Det(Op):
    """``numpy.linalg.det`` of a square matrix, a 0-d tensor.

    Computed from an LU factorisation, so a singular matrix gives 0 (not an
    error) and a NaN anywhere gives NaN. Gradient (Jacobi's formula):
    ``d det(X) = det(X) tr(inv(X) dX)``, i.e. ``G det(X) inv(X)^T``.
    """

    __props__ = ()

    def make_node(self, x):
        x = as_tensor_variable(x)
        check_core_ndim(x, 2, "Det")
        rows, cols = x.type.shape
        if rows is not None and cols is not None and rows != cols:
            raise ValueError(
                f"Determinant not defined for non-square matrix inputs. Shape received is {x.type.shape}"
            )
        out_dtype = linalg_output_dtype(x.type.dtype)
        return Apply(self, [x], [TensorType(out_dtype, ())()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        dtype = node.outputs[0].type.dtype
        if x.shape[0] != x.shape[1]:
            raise ValueError(f"Determinant not defined for non-square matrix of shape {x.shape}")
        output_storage[0][0] = np.asarray(np.linalg.det(np.asarray(x, dtype=dtype)), dtype=dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [()]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor.linalg.inverse import matrix_inverse

        (x,), (d,), (gz,) = inputs, outputs, output_grads
        return [gz * d * matrix_inverse(x).T]

    def __str__(self):
        return "Det"


#: The determinant of a square matrix.
det = Det()


__all__ = ["Det", "det"]
