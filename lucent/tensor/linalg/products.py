"""Products of matrices: ``matrix_dot``, ``matrix_power``, ``kron``, and the matrix exponential ``expm``.

``matrix_dot``, ``matrix_power`` and ``kron`` are graphs of existing ops
(products, broadcasting, reshapes), so their gradients and kernels are
those ops'. ``expm`` is an op (``Expm``): SciPy's scaling-and-squaring Padé
approximant, whose gradient is the adjoint Fréchet derivative, computed
as a block of the exponential of a twice-larger block-triangular matrix.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply
from lucent.tensor.basic import as_tensor_variable
from lucent.tensor.blockwise import BatchedCoreOp
from lucent.tensor.linalg.dtype_utils import check_core_ndim, check_square_value, check_static_square, linalg_output_dtype
from lucent.tensor.type import TensorType


def matrix_dot(*args):
    """``args[0] @ args[1] @ ... @ args[-1]``, as a chain of ``dot`` from the left."""
    from lucent.tensor.math import dot

    if not args:
        raise TypeError("matrix_dot expects at least one matrix, got none")
    result = args[0]
    for a in args[1:]:
        result = dot(result, a)
    return result


def matrix_power(M, n):
    """``M`` to the integer power ``n`` by repeated squaring (``numpy.linalg.matrix_power``).

    ``n == 0`` gives the identity, a negative ``n`` a power of the inverse.
    Stacks of matrices are raised entry by entry.
    """
    from lucent.tensor.creation import eye
    from lucent.tensor.math import matmul

    if not isinstance(n, (int, np.integer)):
        raise TypeError(f"matrix_power: the exponent must be an integer, got {n!r}")
    M = as_tensor_variable(M)
    if M.type.ndim < 2:
        raise ValueError(f"matrix_power expects a square matrix (or a stack of them), got {M.type}")
    n = int(n)
    if n < 0:
        from lucent.tensor.linalg.inverse import inv

        M = inv(M)
        n = -n
    if n == 0:
        ident = eye(M.shape[-1], dtype=M.type.dtype)
        if M.type.ndim == 2:
            return ident
        from lucent.tensor import broadcast_to

        return broadcast_to(ident, M.shape)
    result = square = None
    while n > 0:
        square = M if square is None else matmul(square, square)
        n, bit = divmod(n, 2)
        if bit:
            result = square if result is None else matmul(result, square)
    return result


def kron(a, b):
    """The Kronecker product ``numpy.kron(a, b)`` (inputs whose ranks sum to 3 or more).

    The lower-rank input gets leading length-1 axes; then every axis of
    ``a`` is interleaved with the matching axis of ``b`` and the pairs merged.
    """
    from lucent.tensor.shape import reshape

    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.type.ndim + b.type.ndim <= 2:
        raise TypeError(
            f"kron: inputs dimensions must sum to 3 or more. You passed {a.type.ndim} and {b.type.ndim}."
        )
    nd = max(a.type.ndim, b.type.ndim)
    a = a.dimshuffle(*(["x"] * (nd - a.type.ndim)), *range(a.type.ndim))
    b = b.dimshuffle(*(["x"] * (nd - b.type.ndim)), *range(b.type.ndim))
    a_spread = a.dimshuffle(*[x for d in range(nd) for x in (d, "x")])
    b_spread = b.dimshuffle(*[x for d in range(nd) for x in ("x", d)])
    from lucent.tensor.creation import make_vector

    shape = make_vector(*[a.shape[d] * b.shape[d] for d in range(nd)], dtype="int64")
    return reshape(a_spread * b_spread, shape, ndim=nd)


class Expm(BatchedCoreOp):
    """``scipy.linalg.expm`` of a square matrix.

    Gradient: for cotangent ``G`` the adjoint of the Fréchet derivative,
    ``L(A^T, G)``, which is the upper-right block of
    ``expm([[A^T, G], [0, A^T]])``.
    """

    __props__ = ("overwrite_a",)
    gufunc_signature = "(m,m)->(m,m)"

    def __init__(self, overwrite_a=False):
        self.overwrite_a = bool(overwrite_a)

    def make_node(self, A):
        A = as_tensor_variable(A)
        check_core_ndim(A, 2, "Expm")
        check_static_square(A, "Expm")
        return Apply(self, [A], [TensorType(linalg_output_dtype(A.type.dtype), A.type.shape)()])

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        (A,) = inputs
        check_square_value(A, "Expm")
        dtype = node.outputs[0].type.dtype
        output_storage[0][0] = np.asarray(scipy.linalg.expm(np.asarray(A, dtype=dtype)), dtype=dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0])]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor.basic import concatenate
        from lucent.tensor.creation import zeros_like

        (A,), (G,) = inputs, output_grads
        At = A.T.astype(outputs[0].type.dtype)
        G = G.astype(outputs[0].type.dtype)
        top = concatenate([At, G], axis=1)
        bottom = concatenate([zeros_like(At), At], axis=1)
        big = self(concatenate([top, bottom], axis=0))
        n = A.shape[0]
        return [big[:n, n:]]


#: The matrix exponential (batched over leading dimensions).
expm = Expm()


__all__ = ["Expm", "expm", "kron", "matrix_dot", "matrix_power"]
