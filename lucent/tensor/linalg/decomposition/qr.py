"""QR factorisation: ``qr(A, mode, pivoting)`` as ``scipy.linalg.qr``.

``A = Q R`` with ``Q`` orthonormal and ``R`` upper triangular, by
Householder reflections (LAPACK's ``geqrf``: ``R``'s diagonal takes the
sign that makes each reflection stable, so it may be negative; both
paths use that convention). Modes: 'full'/'complete' (``Q`` ``(m, m)``,
``R`` ``(m, n)``), 'economic'/'reduced' (``(m, k)``, ``(k, n)``), 'r'
(``R`` alone, ``(m, n)``). ``pivoting=True`` adds the column permutation
``P`` (``A[:, P] = Q R``).
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply
from lucent.tensor.basic import as_tensor_variable
from lucent.tensor.blockwise import BatchedCoreOp
from lucent.tensor.linalg.dtype_utils import check_core_ndim, linalg_output_dtype
from lucent.tensor.type import TensorType

_MODES = {"full": "full", "complete": "full", "economic": "economic", "reduced": "economic", "r": "r"}


class QR(BatchedCoreOp):
    """``scipy.linalg.qr`` of an ``(m, n)`` matrix (see the module docstring for the modes)."""

    __props__ = ("overwrite_a", "mode", "pivoting")

    def __init__(self, mode="full", overwrite_a=False, pivoting=False):
        if mode == "raw":
            raise NotImplementedError("qr: mode='raw' (LAPACK's Householder vectors) is not supported")
        if mode not in _MODES:
            raise ValueError(f"qr: mode must be one of {sorted(_MODES) + ['raw']}, got {mode!r}")
        self.mode = _MODES[mode]
        self.overwrite_a = bool(overwrite_a)
        self.pivoting = bool(pivoting)
        sig = {"full": "(m,n)->(m,m),(m,n)", "economic": "(m,n)->(m,k),(k,n)", "r": "(m,n)->(m,n)"}[self.mode]
        self.gufunc_signature = sig + (",(n)" if self.pivoting else "")

    def make_node(self, x):
        x = as_tensor_variable(x)
        check_core_ndim(x, 2, "QR")
        dtype = linalg_output_dtype(x.type.dtype)
        m, n = x.type.shape
        k = None if m is None or n is None else min(m, n)
        if self.mode == "full":
            outs = [TensorType(dtype, (m, m))(), TensorType(dtype, (m, n))()]
        elif self.mode == "economic":
            outs = [TensorType(dtype, (m, k))(), TensorType(dtype, (k, n))()]
        else:
            outs = [TensorType(dtype, (m, n))()]
        if self.pivoting:
            outs.append(TensorType("int32", (n,))())
        return Apply(self, [x], outs)

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        (x,) = inputs
        x = np.asarray(x, dtype=node.outputs[0].type.dtype)
        res = scipy.linalg.qr(x, mode=self.mode, pivoting=self.pivoting, check_finite=False)
        if not isinstance(res, tuple):
            res = (res,)
        for cell, value, out in zip(output_storage, res, node.outputs):
            cell[0] = np.asarray(value, dtype=out.type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        from lucent.tensor.math import minimum

        m, n = input_shapes[0]
        k = minimum(m, n)
        shapes = {"full": [(m, m), (m, n)], "economic": [(m, k), (k, n)], "r": [(m, n)]}[self.mode]
        return shapes + ([(n,)] if self.pivoting else [])

    def L_op(self, inputs, outputs, output_grads):
        """For ``A = Q R`` with ``m >= n`` (thin factors; a wide matrix fails at run time in the solve): ``M = R R_bar^T - Q_bar^T Q`` and
        ``A_bar = (Q_bar + Q copyltu(M)) R^-T``, ``copyltu(M) = tril(M) + tril(M, -1)^T``."""
        from lucent.gradient.types import DisconnectedType
        from lucent.tensor import math as tm
        from lucent.tensor.basic import zeros_like
        from lucent.tensor.linalg import _structure
        from lucent.tensor.linalg.solvers.triangular import solve_triangular

        (a,) = inputs
        if self.pivoting:
            raise NotImplementedError("QR: the gradient with pivoting=True is not implemented")
        m, n = a.type.shape
        if self.mode == "full" and not (m is not None and n is not None and m == n):
            raise NotImplementedError(
                "QR: the gradient of mode='full' needs a matrix of static square shape (the extra "
                "columns of Q are not unique); use mode='economic'"
            )
        if self.mode == "r":
            # R's first k rows are the thin factor's; the others are zero.
            q, r = QR(mode="economic")(a)
            gr = output_grads[0][: r.shape[0]]
            gq = None
        else:
            q, r = outputs
            gq, gr = output_grads
            if isinstance(gq.type, DisconnectedType):
                gq = None
        if isinstance(gr.type, DisconnectedType):
            gr = None
        if gq is None and gr is None:
            return [zeros_like(a, dtype=q.type.dtype)]
        mmat = 0
        if gr is not None:
            mmat = tm.dot(r, gr.T)
        if gq is not None:
            mmat = mmat - tm.dot(gq.T, q)
        low = _structure.lower_triangle(mmat)
        copyltu = low + low.T - _structure.diagonal_part(mmat)
        rhs = tm.dot(q, copyltu)
        if gq is not None:
            rhs = rhs + gq
        # rhs R^-T = (R^-1 rhs^T)^T, and R is upper triangular.
        return [solve_triangular(r, rhs.T, lower=False).T]


def qr(A, mode="full", overwrite_a=False, pivoting=False, lwork=None):
    """QR factorisation of ``A`` (``scipy.linalg.qr``): ``(Q, R)``, ``R`` for mode 'r', plus ``P`` with pivoting."""
    return QR(mode=mode, overwrite_a=overwrite_a, pivoting=pivoting)(A)


__all__ = ["QR", "qr"]
