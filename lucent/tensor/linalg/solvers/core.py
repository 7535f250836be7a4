"""``SolveBase``: what every ``A x = b`` solver op shares.

The props, the type rule (``x`` has ``b``'s shape, in the LAPACK dtype of
both) and the gradient are the same for every structure of ``A``; a
subclass only says how to compute. For ``x = A^-1 b`` with cotangent
``G``: ``b_bar = A^-T G`` (a solve with ``A`` transposed, hence the other
triangle) and ``A_bar = -b_bar x^T``.
"""

from __future__ import annotations

from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.tensor.basic import as_tensor_variable
from lucent.tensor.blockwise import BatchedCoreOp
from lucent.tensor.linalg.dtype_utils import linalg_output_dtype
from lucent.tensor.type import TensorType


class SolveBase(BatchedCoreOp):
    """Base of the linear-system solvers (``b_ndim`` 1: ``b`` is a vector, 2: a matrix)."""

    __props__: tuple = ("lower", "b_ndim", "overwrite_a", "overwrite_b")

    def __init__(self, *, lower=False, b_ndim, overwrite_a=False, overwrite_b=False):
        if b_ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: b_ndim must be 1 or 2, got {b_ndim!r}")
        if overwrite_a and overwrite_b:
            raise NotImplementedError(
                f"{type(self).__name__}: overwrite_a and overwrite_b cannot both be set "
                f"(an output may destroy only one input)"
            )
        self.lower = bool(lower)
        self.b_ndim = b_ndim
        self.overwrite_a = bool(overwrite_a)
        self.overwrite_b = bool(overwrite_b)
        self.gufunc_signature = "(m,m),(m)->(m)" if b_ndim == 1 else "(m,m),(m,n)->(m,n)"
        self.destroy_map = {0: [0]} if self.overwrite_a else {0: [1]} if self.overwrite_b else {}

    def make_node(self, A, b):
        name = type(self).__name__
        A = as_tensor_variable(A)
        b = as_tensor_variable(b)
        if A.type.ndim != 2:
            raise ValueError(
                f"{name}: `A` must be a matrix; got {A.type} instead"
            )
        if b.type.ndim != self.b_ndim:
            raise ValueError(
                f"{name}: `b` must have {self.b_ndim} dims (b_ndim={self.b_ndim}); got {b.type}"
            )
        out_dtype = linalg_output_dtype(A.type.dtype, b.type.dtype)
        return Apply(self, [A, b], [TensorType(out_dtype, b.type.shape)()])

    def infer_shape(self, fgraph, node, input_shapes):
        a_shape, b_shape = input_shapes
        if self.b_ndim == 1:
            return [(a_shape[1],)]
        return [(a_shape[1], b_shape[1])]

    def _transposed_solver(self):
        props = self._props_dict()
        props["lower"] = not self.lower
        props["overwrite_a"] = props["overwrite_b"] = False
        return type(self)(**props)

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor.math import dot, outer

        A, _ = inputs
        (x,), (x_bar,) = outputs, output_grads
        b_bar = self._transposed_solver()(A.T, x_bar)
        A_bar = -outer(b_bar, x) if self.b_ndim == 1 else -dot(b_bar, x.T)
        return [A_bar, b_bar]


def _default_b_ndim(b, b_ndim):
    """``b_ndim`` as given, else 1 for a vector ``b`` and 2 otherwise."""
    if b_ndim is not None:
        if b_ndim not in (1, 2):
            raise ValueError(f"b_ndim must be 1, 2 or None, got {b_ndim!r}")
        return b_ndim
    return min(as_tensor_variable(b).type.ndim, 2)


__all__ = ["SolveBase"]
