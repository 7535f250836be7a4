"""QR factorisation: ``qr(A, mode, pivoting)`` as ``scipy.linalg.qr``.

``A = Q R`` with ``Q`` orthonormal and ``R`` upper triangular, by
Householder reflections (LAPACK's ``geqrf``: ``R``'s diagonal takes the
sign that makes each reflection stable, so it may be negative; both
paths use that convention). Modes: 'full'/'complete' (``Q`` ``(m, m)``,
``R`` ``(m, n)``), 'economic'/'reduced' (``(m, k)``, ``(k, n)``), 'r'
(``R`` alone, ``(m, n)``). ``pivoting=True`` adds the column permutation
``P`` (``A[:, P] = Q R``). 'raw' gives LAPACK's own form (``?geqrf``):
``H`` ``(m, n)`` holding ``R`` above the diagonal and the Householder
vectors below it, their scalings ``tau`` ``(k,)``, and ``R`` ``(k, n)``.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply
from lucent.tensor.basic import as_tensor_variable
from lucent.tensor.blockwise import BatchedCoreOp
from lucent.tensor.linalg.dtype_utils import check_core_ndim, linalg_output_dtype
from lucent.tensor.type import TensorType

_MODES = {"full": "full", "complete": "full", "economic": "economic", "reduced": "economic", "r": "r", "raw": "raw"}


class QR(BatchedCoreOp):
    """``scipy.linalg.qr`` of an ``(m, n)`` matrix (see the module docstring for the modes)."""

    __props__ = ("overwrite_a", "mode", "pivoting")

    def __init__(self, mode="full", overwrite_a=False, pivoting=False):
        if mode not in _MODES:
            raise ValueError(f"qr: mode must be one of {sorted(_MODES)}, got {mode!r}")
        self.mode = _MODES[mode]
        self.overwrite_a = bool(overwrite_a)
        self.pivoting = bool(pivoting)
        sig = {"full": "(m,n)->(m,m),(m,n)", "economic": "(m,n)->(m,k),(k,n)", "r": "(m,n)->(m,n)",
               "raw": "(m,n)->(m,n),(k),(k,n)"}[self.mode]
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
        elif self.mode == "raw":
            outs = [TensorType(dtype, (m, n))(), TensorType(dtype, (k,))(), TensorType(dtype, (k, n))()]
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
        if self.mode == "raw":
            (h, tau), *rest = res
            res = (h, tau, *rest)
        for cell, value, out in zip(output_storage, res, node.outputs):
            cell[0] = np.asarray(value, dtype=out.type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        from lucent.tensor.math import minimum

        m, n = input_shapes[0]
        k = minimum(m, n)
        shapes = {"full": [(m, m), (m, n)], "economic": [(m, k), (k, n)], "r": [(m, n)],
                  "raw": [(m, n), (k,), (k, n)]}[self.mode]
        return shapes + ([(n,)] if self.pivoting else [])

    def L_op(self, inputs, outputs, output_grads):
        """Reverse mode for ``A = Q R``, any ``m, n``, with ``k = min(m, n)``.

        Split ``A = [X | Y]`` and ``R = [U | V]`` after ``k`` columns (``Y`` and
        ``V`` are empty when ``m >= n``); ``U`` is square upper triangular.
        With ``Q_bar' = Q_bar + Y V_bar^T`` and ``M = U U_bar^T - Q_bar'^T Q``:
        ``X_bar = (Q_bar' + Q copyltu(M)) U^-T`` and ``Y_bar = Q V_bar``,
        where ``copyltu(M) = tril(M) + tril(M, -1)^T``. One expression covers
        tall, square and wide matrices, so no branch on the run-time shape is
        needed. mode='full' of a tall matrix is not differentiable (the extra
        columns of ``Q`` are not unique): that is checked at run time.
        """
        from lucent.gradient.types import DisconnectedType
        from lucent.raise_op import Assert
        from lucent.tensor import math as tm
        from lucent.tensor.basic import zeros_like
        from lucent.tensor.basic import concatenate
        from lucent.tensor.linalg import _structure
        from lucent.tensor.linalg.solvers.triangular import solve_triangular

        (a,) = inputs
        if self.mode == "raw":
            raise NotImplementedError("Gradient of qr not implemented for mode=raw")
        if self.pivoting:
            raise NotImplementedError("QR: the gradient with pivoting=True is not implemented")
        m_static, n_static = a.type.shape
        m, n = a.shape[0], a.shape[1]
        if m_static is not None and n_static is not None:
            k = min(m_static, n_static)
        else:
            k = tm.minimum(m, n)
        if self.mode == "r":
            # R's first k rows are the thin factor's; the others are zero.
            q, r = QR(mode="economic")(a)
            gq, gr = None, output_grads[0][:k]
        else:
            q, r = outputs
            gq, gr = output_grads
            if isinstance(gq.type, DisconnectedType):
                gq = None
            if isinstance(gr.type, DisconnectedType):
                gr = None
            if self.mode == "full":
                r = Assert("Gradient of qr not implemented for m x n matrices with m > n and mode=full")(
                    r, tm.le(m, n)
                )
        if gq is None and gr is None:
            return [zeros_like(a, dtype=q.type.dtype)]
        if gq is None:
            gq = zeros_like(q)
        if gr is None:
            gr = zeros_like(r)
        u = r[:, :k]
        gu, gv = gr[:, :k], gr[:, k:]
        gq = gq + tm.dot(a[:, k:], gv.T)
        mmat = tm.dot(u, gu.T) - tm.dot(gq.T, q)
        low = _structure.lower_triangle(mmat)
        copyltu = low + low.T - _structure.diagonal_part(mmat)
        rhs = gq + tm.dot(q, copyltu)
        # rhs U^-T = (U^-1 rhs^T)^T, and U is upper triangular.
        x_bar = solve_triangular(u, rhs.T, lower=False).T
        if n_static is not None and m_static is not None and n_static <= m_static:
            return [x_bar]
        return [concatenate([x_bar, tm.dot(q, gv)], axis=1)]


def qr(A, mode="full", overwrite_a=False, pivoting=False, lwork=None):
    """QR factorisation of ``A`` (``scipy.linalg.qr``): ``(Q, R)``, ``R`` for mode 'r', plus ``P`` with pivoting."""
    return QR(mode=mode, overwrite_a=overwrite_a, pivoting=pivoting)(A)


__all__ = ["QR", "qr"]
