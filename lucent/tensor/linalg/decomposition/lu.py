"""LU factorisation with partial pivoting: ``lu``, ``lu_factor``, ``pivot_to_permutation``.

``lu(a)`` returns ``(P, L, U)`` with ``a = P @ L @ U`` (SciPy's
convention), ``(P @ L, U)`` with ``permute_l=True``, or ``(p, L, U)``
with ``p_indices=True`` (``a = L[p] @ U``). ``lu_factor(a)`` returns
LAPACK's compact form: ``L`` (unit diagonal, not stored) and ``U`` in one
matrix, and the row interchanges ``piv`` (row ``i`` was swapped with row
``piv[i]``). ``pivot_to_permutation`` turns those interchanges into a
permutation. The pivot of each column is its first entry of largest
magnitude, as LAPACK's ``getrf`` chooses, on both paths.

Gradient (square ``a``, ``a = P L U``): with ``L_bar``, ``U_bar``,
``a_bar = P L^-T (tril(L^T L_bar, -1) + triu(U_bar U^T)) U^-T``.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.tensor.basic import as_tensor_variable
from lucent.tensor.blockwise import BatchedCoreOp
from lucent.tensor.linalg.dtype_utils import check_core_ndim, check_square_value, check_static_square, linalg_output_dtype
from lucent.tensor.type import TensorType


def _is_disconnected(g):
    from lucent.gradient.types import DisconnectedType

    return isinstance(g.type, DisconnectedType)


def _lu_core_grad(a, L, U, L_bar, U_bar):
    """``L^-T (tril(L^T L_bar, -1) + triu(U_bar U^T)) U^-T`` (the gradient before the permutation)."""
    from lucent.tensor.linalg import _structure
    from lucent.tensor.linalg.solvers.triangular import solve_triangular
    from lucent.tensor.math import dot

    inner = 0
    if L_bar is not None:
        lt_lbar = dot(L.T, L_bar)
        inner = inner + _structure.lower_triangle(lt_lbar) - _structure.diagonal_part(lt_lbar)
    if U_bar is not None:
        inner = inner + _structure.upper_triangle(dot(U_bar, U.T))
    if isinstance(inner, int):
        return None
    # L^-T inner: solve L^T y = inner; then (y U^-T) = (U^-1 y^T)^T.
    y = solve_triangular(L, inner, lower=True, trans=1, unit_diagonal=True)
    return solve_triangular(U, y.T, lower=False).T


class LU(BatchedCoreOp):
    """``scipy.linalg.lu`` of a square matrix (see the module docstring for the outputs)."""

    __props__ = ("permute_l", "overwrite_a", "p_indices")

    def __init__(self, *, permute_l=False, overwrite_a=False, p_indices=False):
        if permute_l and p_indices:
            raise ValueError("lu: permute_l and p_indices cannot both be True")
        self.permute_l = bool(permute_l)
        self.overwrite_a = bool(overwrite_a)
        self.p_indices = bool(p_indices)
        if self.permute_l:
            self.gufunc_signature = "(m,m)->(m,m),(m,m)"
        elif self.p_indices:
            self.gufunc_signature = "(m,m)->(m),(m,m),(m,m)"
        else:
            self.gufunc_signature = "(m,m)->(m,m),(m,m),(m,m)"

    def make_node(self, x):
        x = as_tensor_variable(x)
        check_core_ndim(x, 2, "LU")
        check_static_square(x, "LU")
        dtype = linalg_output_dtype(x.type.dtype)
        shape = x.type.shape
        L, U = TensorType(dtype, shape)(), TensorType(dtype, shape)()
        if self.permute_l:
            return Apply(self, [x], [L, U])
        if self.p_indices:
            return Apply(self, [x], [TensorType("int32", (shape[0],))(), L, U])
        return Apply(self, [x], [TensorType(dtype, shape)(), L, U])

    def perform(self, node, inputs, output_storage):
        import scipy.linalg

        (x,) = inputs
        check_square_value(x, "LU")
        x = np.asarray(x, dtype=node.outputs[-1].type.dtype)
        res = scipy.linalg.lu(x, permute_l=self.permute_l, p_indices=self.p_indices, check_finite=False)
        for cell, value, out in zip(output_storage, res, node.outputs):
            cell[0] = np.asarray(value, dtype=out.type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        n = input_shapes[0][0]
        if self.p_indices:
            return [(n,), (n, n), (n, n)]
        return [(n, n)] * len(node.outputs)

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor.basic import zeros_like
        from lucent.tensor.math import dot

        (a,) = inputs
        if self.permute_l:
            pl, U = outputs
            g_pl, g_u = output_grads
            p, L, _ = LU()(a)
            L_bar = None if _is_disconnected(g_pl) else dot(p.T, g_pl)
        else:
            p, L, U = outputs
            _, g_l, g_u = output_grads
            L_bar = None if _is_disconnected(g_l) else g_l
        U_bar = None if _is_disconnected(g_u) else g_u
        core = _lu_core_grad(a, L, U, L_bar, U_bar)
        if core is None:
            return [zeros_like(a, dtype=L.type.dtype)]
        if self.p_indices:  # a = L[p] @ U: row i of a_bar is row p[i] of the core gradient
            return [core[p]]
        return [dot(p, core)]


def lu(a, permute_l=False, check_finite=True, p_indices=False, overwrite_a=False):
    """LU factorisation with partial pivoting (``scipy.linalg.lu``); see the module docstring."""
    return LU(permute_l=permute_l, p_indices=p_indices, overwrite_a=overwrite_a)(a)


class PivotToPermutations(BatchedCoreOp):
    """LAPACK row interchanges -> a permutation (``int64``).

    ``inverse=True`` gives ``perm`` with ``a[perm] == L @ U``; ``inverse=False``
    its inverse ``p`` with ``a == (L @ U)[p]`` (SciPy's ``p_indices``).
    """

    __props__ = ("inverse",)
    gufunc_signature = "(x)->(x)"

    def __init__(self, inverse=True):
        self.inverse = bool(inverse)

    def make_node(self, pivots):
        pivots = as_tensor_variable(pivots)
        if pivots.type.ndim != 1:
            raise ValueError(f"PivotToPermutations only works on 1-D inputs, got {pivots.type}")
        if pivots.type.dtype not in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
            raise TypeError(f"PivotToPermutations expects integer pivots, got {pivots.type}")
        return Apply(self, [pivots], [TensorType("int64", pivots.type.shape)()])

    def perform(self, node, inputs, output_storage):
        (piv,) = inputs
        perm = np.arange(len(piv), dtype="int64")
        for i, p in enumerate(piv):
            perm[i], perm[p] = perm[p], perm[i]
        output_storage[0][0] = perm if self.inverse else np.argsort(perm).astype("int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0])]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.gradient.types import grad_undefined

        return [grad_undefined(self, 0, inputs[0], "pivots are integers")]


def pivot_to_permutation(p, inverse=False):
    """The permutation that LAPACK's row interchanges ``p`` make (see ``PivotToPermutations``)."""
    return PivotToPermutations(inverse=inverse)(as_tensor_variable(p))


class LUFactor(BatchedCoreOp):
    """``scipy.linalg.lu_factor``: ``(LU, piv)``, LAPACK's compact LU and its row interchanges (int32)."""

    __props__ = ("overwrite_a",)
    gufunc_signature = "(m,m)->(m,m),(m)"

    def __init__(self, *, overwrite_a=False):
        self.overwrite_a = bool(overwrite_a)

    def make_node(self, A):
        A = as_tensor_variable(A)
        check_core_ndim(A, 2, "LUFactor")
        check_static_square(A, "LUFactor")
        dtype = linalg_output_dtype(A.type.dtype)
        return Apply(self, [A], [TensorType(dtype, A.type.shape)(), TensorType("int32", (A.type.shape[0],))()])

    def perform(self, node, inputs, output_storage):
        import scipy.linalg
        import warnings

        (A,) = inputs
        check_square_value(A, "LUFactor")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a singular matrix factors (with a zero pivot) but SciPy warns
            lu_, piv = scipy.linalg.lu_factor(np.asarray(A, dtype=node.outputs[0].type.dtype), check_finite=False)
        output_storage[0][0] = np.asarray(lu_, dtype=node.outputs[0].type.dtype)
        output_storage[1][0] = np.asarray(piv, dtype="int32")

    def infer_shape(self, fgraph, node, input_shapes):
        n = input_shapes[0][0]
        return [(n, n), (n,)]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor.basic import zeros_like
        from lucent.tensor.creation import identity_like
        from lucent.tensor.linalg import _structure

        (A,) = inputs
        lu_, piv = outputs
        g_lu, _ = output_grads
        if _is_disconnected(g_lu):
            return [zeros_like(A, dtype=lu_.type.dtype)]
        L = _structure.lower_triangle(lu_) - _structure.diagonal_part(lu_) + identity_like(lu_)
        U = _structure.upper_triangle(lu_)
        L_bar = _structure.lower_triangle(g_lu) - _structure.diagonal_part(g_lu)
        U_bar = _structure.upper_triangle(g_lu)
        core = _lu_core_grad(A, L, U, L_bar, U_bar)
        # A[perm] = L U, so row perm[i] of A_bar is row i of core.
        p = pivot_to_permutation(piv, inverse=False)
        return [core[p]]


def lu_factor(a, *, check_finite=True, overwrite_a=False):
    """``(LU, piv)`` of a square matrix (``scipy.linalg.lu_factor``); see the module docstring."""
    return LUFactor(overwrite_a=overwrite_a)(a)


__all__ = ["LU", "LUFactor", "PivotToPermutations", "lu", "lu_factor", "pivot_to_permutation"]
