"""Inverses: ``inv(A)`` (also ``matrix_inverse``), ``pinv(A)`` and ``tensorinv(A)``.

Inverting is rarely what a program needs: ``inv(A) @ b`` is better computed
as ``solve(A, b)``. The op exists because users write it, and the rewrites
in ``lucent.tensor.rewriting.linalg`` remove it where the structure of
``A`` allows (diagonal, orthogonal) — structure declared with
``lucent.assumptions.assume``.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.tensor.basic import as_tensor_variable
from lucent.tensor.blockwise import BatchedCoreOp
from lucent.tensor.linalg.dtype_utils import check_core_ndim, check_static_square, linalg_output_dtype
from lucent.tensor.type import TensorType


class MatrixInverse(BatchedCoreOp):
    """``numpy.linalg.inv`` of a square matrix.

    A singular matrix raises ``numpy.linalg.LinAlgError`` on both paths,
    as NumPy does. Gradient: ``d inv(X) = -inv(X) dX inv(X)``, so the
    cotangent of ``X`` is ``-(inv(X)^T G inv(X)^T)``.
    """

    __props__ = ()
    gufunc_signature = "(m,m)->(m,m)"

    def make_node(self, x):
        x = as_tensor_variable(x)
        check_core_ndim(x, 2, "MatrixInverse")
        check_static_square(x, "MatrixInverse")
        out_dtype = linalg_output_dtype(x.type.dtype)
        return Apply(self, [x], [TensorType(out_dtype, x.type.shape)()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        dtype = node.outputs[0].type.dtype
        output_storage[0][0] = np.asarray(np.linalg.inv(np.asarray(x, dtype=dtype)), dtype=dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0])]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor.linalg.products import matrix_dot

        (xi,), (gz,) = outputs, output_grads
        return [-matrix_dot(xi.T, gz, xi.T)]

    def R_op(self, inputs, eval_points):
        from lucent.tensor.linalg.products import matrix_dot

        (ev,) = eval_points
        if ev is None:
            return [None]
        xi = self(inputs[0])
        return [-matrix_dot(xi, ev, xi)]


#: The inverse of a square matrix (PyTensor names it both ways).
inv = matrix_inverse = MatrixInverse()


class MatrixPinv(BatchedCoreOp):
    """``numpy.linalg.pinv``: the Moore-Penrose pseudo-inverse of an ``(m, n)`` matrix, ``(n, m)``.

    ``hermitian=True`` promises a symmetric (Hermitian) input, which lets
    the pseudo-inverse come from an eigendecomposition instead of an SVD.
    The gradient (Golub & Pereyra's derivative of the pseudo-inverse) is
    written out in ``L_op``.
    """

    __props__ = ("hermitian",)
    gufunc_signature = "(m,n)->(n,m)"

    def __init__(self, hermitian=False):
        self.hermitian = bool(hermitian)

    def make_node(self, x):
        x = as_tensor_variable(x)
        check_core_ndim(x, 2, "MatrixPinv")
        out_dtype = linalg_output_dtype(x.type.dtype)
        return Apply(self, [x], [TensorType(out_dtype, x.type.shape[::-1])()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        dtype = node.outputs[0].type.dtype
        z = np.linalg.pinv(np.asarray(x, dtype=dtype), hermitian=self.hermitian)
        output_storage[0][0] = np.asarray(z, dtype=dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        rows, cols = input_shapes[0]
        return [(cols, rows)]

    def L_op(self, inputs, outputs, output_grads):
        """With ``Z = X^+`` and cotangent ``G``, the cotangent of ``X`` is
        ``(-Z G^T Z + Z Z^T G (I - X Z) + (I - Z X) G Z^T Z)^T``.
        """
        from lucent.tensor.creation import identity_like
        from lucent.tensor.math import dot
        from lucent.tensor.linalg.products import matrix_dot

        (x,), (z,), (g,) = inputs, outputs, output_grads
        xz = dot(x, z)
        zx = dot(z, x)
        grad = (
            -matrix_dot(z, g.T, z)
            + matrix_dot(z, z.T, g, identity_like(xz) - xz)
            + matrix_dot(identity_like(zx) - zx, g, z.T, z)
        ).T
        return [grad]


def pinv(x, hermitian=False):
    """Pseudo-inverse of the matrix ``x`` (any shape): the least-squares solution operator.

    For a square invertible matrix ``inv`` is faster and more exact; a
    ``pinv`` is never rewritten into a solve.
    """
    return MatrixPinv(hermitian=hermitian)(x)


class TensorInv(Op):
    """``numpy.linalg.tensorinv(a, ind)``: the inverse under ``tensordot(..., ind)``.

    The first ``ind`` axes of ``a`` form the rows and the others the
    columns of a square matrix; its inverse is reshaped with the two
    groups of axes swapped.
    """

    __props__ = ("ind",)

    def __init__(self, ind=2):
        if not isinstance(ind, (int, np.integer)) or ind <= 0:
            raise ValueError(f"TensorInv: ind must be a positive integer, got {ind!r}")
        self.ind = int(ind)

    def make_node(self, a):
        a = as_tensor_variable(a)
        if a.type.ndim <= self.ind:
            raise ValueError(
                f"TensorInv: ind={self.ind} needs an input with more than {self.ind} dimensions, got {a.type}"
            )
        shape = a.type.shape[self.ind:] + a.type.shape[: self.ind]
        out_dtype = linalg_output_dtype(a.type.dtype)
        return Apply(self, [a], [TensorType(out_dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        (a,) = inputs
        dtype = node.outputs[0].type.dtype
        output_storage[0][0] = np.asarray(np.linalg.tensorinv(np.asarray(a, dtype=dtype), self.ind), dtype=dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        shape = tuple(input_shapes[0])
        return [shape[self.ind:] + shape[: self.ind]]


def tensorinv(a, ind=2):
    """The tensor inverse of ``a`` with respect to ``tensordot(..., ind)`` (``numpy.linalg.tensorinv``)."""
    return TensorInv(ind)(a)


__all__ = ["MatrixInverse", "MatrixPinv", "TensorInv", "inv", "matrix_inverse", "pinv", "tensorinv"]
