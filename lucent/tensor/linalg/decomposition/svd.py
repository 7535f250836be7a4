"""Singular value decomposition: ``svd(a, full_matrices, compute_uv)``.

``a = U diag(s) Vh`` with ``s`` descending. Singular vectors are unique
only up to a joint sign (phase) of ``u_j`` and ``vh_j``, so ``U`` and
``Vh`` carry comparisons that align each vector first (``_compare``).
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply
from lucent.tensor.basic import as_tensor_variable
from lucent.tensor.blockwise import BatchedCoreOp
from lucent.tensor.linalg.decomposition._compare import columns_equal_up_to_phase, rows_equal_up_to_phase
from lucent.tensor.linalg.dtype_utils import check_core_ndim, linalg_output_dtype, linalg_real_output_dtype
from lucent.tensor.type import TensorType


class SVD(BatchedCoreOp):
    """``numpy.linalg.svd`` of an ``(m, n)`` matrix; ``k = min(m, n)``.

    ``compute_uv=False`` gives ``s`` only; otherwise ``(U, s, Vh)``, with
    ``U`` ``(m, m)`` and ``Vh`` ``(n, n)`` for ``full_matrices=True`` and
    ``(m, k)`` / ``(k, n)`` otherwise.
    """

    __props__ = ("full_matrices", "compute_uv", "overwrite_a")

    def __init__(self, full_matrices=True, compute_uv=True, overwrite_a=False):
        self.full_matrices = bool(full_matrices)
        self.compute_uv = bool(compute_uv)
        self.overwrite_a = bool(overwrite_a)
        if not self.compute_uv:
            self.gufunc_signature = "(m,n)->(k)"
        elif self.full_matrices:
            self.gufunc_signature = "(m,n)->(m,m),(k),(n,n)"
        else:
            self.gufunc_signature = "(m,n)->(m,k),(k),(k,n)"

    def make_node(self, x):
        x = as_tensor_variable(x)
        check_core_ndim(x, 2, "SVD")
        dtype = linalg_output_dtype(x.type.dtype)
        m, n = x.type.shape
        k = None if m is None or n is None else min(m, n)
        s = TensorType(linalg_real_output_dtype(dtype), (k,))()
        if not self.compute_uv:
            return Apply(self, [x], [s])
        if self.full_matrices:
            u, vh = TensorType(dtype, (m, m))(), TensorType(dtype, (n, n))()
        else:
            u, vh = TensorType(dtype, (m, k))(), TensorType(dtype, (k, n))()
        u.tag.values_eq_approx = columns_equal_up_to_phase
        vh.tag.values_eq_approx = rows_equal_up_to_phase
        return Apply(self, [x], [u, s, vh])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        x = np.asarray(x, dtype=linalg_output_dtype(node.inputs[0].type.dtype))
        if self.compute_uv:
            u, s, vh = np.linalg.svd(x, full_matrices=self.full_matrices, compute_uv=True)
            for cell, value, out in zip(output_storage, (u, s, vh), node.outputs):
                cell[0] = np.asarray(value, dtype=out.type.dtype)
        else:
            output_storage[0][0] = np.asarray(np.linalg.svd(x, compute_uv=False), dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        from lucent.tensor.math import minimum

        m, n = input_shapes[0]
        k = minimum(m, n)
        if not self.compute_uv:
            return [(k,)]
        if self.full_matrices:
            return [(m, m), (k,), (n, n)]
        return [(m, k), (k,), (k, n)]

    def L_op(self, inputs, outputs, output_grads):
        """Reverse mode of the thin SVD of a real matrix (Townsend, "Differentiating the SVD").

        With ``F_ij = 1 / (s_j^2 - s_i^2)`` (0 on the diagonal),
        ``A_bar = U [(F o (U^T U_bar - U_bar^T U)) S + diag(s_bar) + S (F o (V^T V_bar - V_bar^T V))] V^T
        + (I - U U^T) U_bar S^-1 V^T + U S^-1 V_bar^T (I - V V^T)``. ``full_matrices=True``
        is differentiable only for square input (then it is the thin SVD).
        """
        from lucent.gradient.types import DisconnectedType
        from lucent.tensor import math as tm
        from lucent.tensor.creation import identity_like

        (a,) = inputs
        if a.type.dtype.startswith("complex"):
            raise NotImplementedError("SVD: the gradient for complex input is not implemented")
        disconnected = [isinstance(g.type, DisconnectedType) for g in output_grads]
        if not self.compute_uv:
            u, s, vh = SVD(full_matrices=False, compute_uv=True)(a)
            (gs,) = output_grads
            return [tm.dot(u * gs.dimshuffle("x", 0), vh)]
        u, s, vh = outputs
        gu, gs, gvh = output_grads
        if self.full_matrices:
            m, n = a.type.shape
            if m is None or n is None or m != n:
                raise NotImplementedError(
                    "Gradient of svd not implemented for full_matrices=True unless the matrix has a "
                    "static square shape (the extra singular vectors are not unique); use full_matrices=False"
                )
        v = vh.T
        smat = s.dimshuffle(0, "x")
        eye_k = identity_like(tm.dot(vh, v))
        s2 = tm.sqr(s)
        diff = s2.dimshuffle("x", 0) - s2.dimshuffle(0, "x")
        f = (1 - eye_k) / (diff + eye_k)
        inner = 0
        if not disconnected[1]:
            inner = inner + eye_k * gs.dimshuffle("x", 0)
        s_inv = 1 / s
        extra = 0
        if not disconnected[0]:
            ut_gu = tm.dot(u.T, gu)
            inner = inner + (f * (ut_gu - ut_gu.T)) * s.dimshuffle("x", 0)
            proj_u = identity_like(tm.dot(u, u.T)) - tm.dot(u, u.T)
            extra = extra + tm.dot(tm.dot(proj_u, gu) * s_inv.dimshuffle("x", 0), vh)
        if not disconnected[2]:
            gv = gvh.T
            vt_gv = tm.dot(v.T, gv)
            inner = inner + smat * (f * (vt_gv - vt_gv.T))
            proj_v = identity_like(tm.dot(v, v.T)) - tm.dot(v, v.T)
            extra = extra + tm.dot(u * s_inv.dimshuffle("x", 0), tm.dot(gv.T, proj_v))
        if isinstance(inner, int) and isinstance(extra, int):
            from lucent.tensor.basic import zeros_like

            return [zeros_like(a, dtype=u.type.dtype)]
        grad = extra
        if not isinstance(inner, int):
            grad = grad + tm.dot(tm.dot(u, inner), vh)
        return [grad]


def svd(a, full_matrices=True, compute_uv=True):
    """Singular value decomposition: ``(U, s, Vh)``, or ``s`` alone with ``compute_uv=False``.

    Always a ``Blockwise`` node (as in PyTensor), so the core op is at
    ``out.owner.op.core_op`` for any rank; compiling removes the wrapper
    when there are no batch dimensions.
    """
    from lucent.tensor.basic import as_tensor_variable
    from lucent.tensor.blockwise import Blockwise

    return Blockwise(SVD(full_matrices=full_matrices, compute_uv=compute_uv))(as_tensor_variable(a))


__all__ = ["SVD", "svd"]
