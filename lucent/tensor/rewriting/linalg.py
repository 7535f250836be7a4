"""Rewrites of linear algebra, using the graph around an op and what is known about a matrix.

* ``inv(inv(X))`` -> ``X``;
* ``inv(Q)`` -> ``Q.T`` when ``Q`` is known orthogonal;
* ``inv(D)`` -> ``I / (D + (1 - I))`` when ``D`` is known diagonal: the
  reciprocal of the diagonal, zeros elsewhere (``D + 1 - I`` is 1 off the
  diagonal), element-wise instead of an O(n^3) factorisation;
* ``inv(A) @ b`` -> ``solve(A, b)`` and ``b @ inv(A)`` -> ``solve(A.T, b.T).T``
  when nothing else uses the inverse: one factorisation, better accuracy;
* ``log(abs(det(A)))``, ``sign(det(A))`` and ``log(det(A))`` -> ``SLogDet``,
  which does not overflow or underflow where the determinant would;
* ``det(T)`` -> the product of ``T``'s diagonal for a known diagonal or
  triangular ``T`` (``det(eye(n))`` is then folded to 1);
* ``solve(T, b)`` -> ``solve_triangular`` for a known triangular ``T`` (a
  Cholesky factor, ``assume(T, lower_triangular=True)``), and
  ``solve(L @ L.T, b)`` -> ``cho_solve((L, True), b)`` for a known lower ``L``.

Structure is known from ``lucent.assumptions`` (``assume(D, diagonal=True)``,
or inferred, e.g. from ``eye`` or ``cholesky``).
"""

from __future__ import annotations

from lucent.assumptions import DIAGONAL, LOWER_TRIANGULAR, ORTHOGONAL, UPPER_TRIANGULAR, check_assumption
from lucent.graph.rewriting.basic import node_rewriter
from lucent.tensor.elemwise import DimShuffle, Elemwise
from lucent.tensor.linalg.inverse import MatrixInverse
from lucent.tensor.linalg.solvers.general import Solve
from lucent.tensor.linalg.summary import Det
from lucent.tensor.math import Dot, MatMul
from lucent.tensor.rewriting.registry import register_canonicalize, register_specialize, register_stabilize


def _as_output_type(var, out):
    """``var`` cast to the dtype of ``out`` (an inverse computes in the LAPACK dtype)."""
    from lucent.tensor.basic import cast

    if var.type.dtype != out.type.dtype:
        var = cast(var, out.type.dtype)
    return var


@register_canonicalize
@register_stabilize
@node_rewriter([MatrixInverse])
def inv_of_inv(fgraph, node):
    """``inv(inv(X))`` -> ``X``."""
    (inner,) = node.inputs
    if inner.owner is not None and isinstance(inner.owner.op, MatrixInverse):
        return [_as_output_type(inner.owner.inputs[0], node.outputs[0])]
    return None


@register_canonicalize
@register_stabilize
@node_rewriter([MatrixInverse])
def inv_of_orthogonal_to_transpose(fgraph, node):
    """``inv(Q)`` -> ``Q.T`` for a known orthogonal ``Q``."""
    (x,) = node.inputs
    if not check_assumption(fgraph, x, ORTHOGONAL):
        return None
    return [_as_output_type(x.T, node.outputs[0])]


@register_canonicalize
@register_stabilize
@node_rewriter([MatrixInverse])
def inv_of_diag_to_diag_reciprocal(fgraph, node):
    """``inv(D)`` -> element-wise reciprocal of the diagonal, for a known diagonal ``D``."""
    from lucent.tensor.creation import identity_like

    (x,) = node.inputs
    if not check_assumption(fgraph, x, DIAGONAL):
        return None
    out = node.outputs[0]
    x = _as_output_type(x, out)
    eye = identity_like(x, dtype=out.type.dtype)
    return [_as_output_type(eye / (x + (1 - eye)), out)]


# ---------------------------------------------------------------------------
# Products with an inverse, determinants, structured solves
# ---------------------------------------------------------------------------
def _core_node(var, op_class):
    """``var``'s owner when it applies ``op_class`` (directly or as a ``Blockwise`` core), else None."""
    from lucent.tensor.blockwise import Blockwise

    node = getattr(var, "owner", None)
    if node is None:
        return None
    op = node.op.core_op if isinstance(node.op, Blockwise) else node.op
    return node if isinstance(op, op_class) else None


def _single_client(fgraph, var):
    return len(fgraph.clients.get(var, ())) == 1


@register_stabilize
@node_rewriter([Dot, MatMul])
def inv_dot_to_solve(fgraph, node):
    """``inv(A) @ b`` -> ``solve(A, b)``; ``b @ inv(A)`` -> ``solve(A.T, b.T).T`` (2-d ``b``)."""
    from lucent.tensor.linalg.solvers.general import solve

    left, right = node.inputs
    out = node.outputs[0]
    inv_node = _core_node(left, MatrixInverse)
    if inv_node is not None and _single_client(fgraph, left):
        (A,) = inv_node.inputs
        if A.type.ndim == 2 and right.type.ndim in (1, 2):
            return [_as_output_type(solve(A, right, b_ndim=right.type.ndim), out)]
        if right.type.ndim >= 2:
            return [_as_output_type(solve(A, right, b_ndim=2), out)]
        return None
    inv_node = _core_node(right, MatrixInverse)
    if inv_node is not None and _single_client(fgraph, right) and left.type.ndim >= 2:
        (A,) = inv_node.inputs
        return [_as_output_type(solve(A.mT, left.mT, b_ndim=2).mT, out)]
    return None


@register_stabilize
@register_specialize
@node_rewriter([Elemwise])
def det_to_slogdet(fgraph, node):
    """``log(abs(det(A)))`` -> ``SLogDet(A)[1]``, ``sign(det(A))`` -> ``SLogDet(A)[0]``,
    ``log(det(A))`` -> ``log(sign) + logabsdet`` (NaN for a negative determinant, as before)."""
    from lucent.scalar.math import Abs, Log, Sign
    from lucent.tensor.linalg.summary import SLogDet
    from lucent.tensor.math import log

    scalar = node.op.scalar_op
    if not isinstance(scalar, (Log, Sign)) or len(node.inputs) != 1:
        return None
    (x,) = node.inputs
    out = node.outputs[0]
    if isinstance(scalar, Sign):
        det_node = _core_node(x, Det)
        if det_node is None:
            return None
        sign, _ = SLogDet()(det_node.inputs[0])
        return [_as_output_type(sign, out)]
    inner = x.owner
    if inner is not None and isinstance(inner.op, Elemwise) and isinstance(inner.op.scalar_op, Abs):
        det_node = _core_node(inner.inputs[0], Det)
        if det_node is None:
            return None
        _, logabs = SLogDet()(det_node.inputs[0])
        return [_as_output_type(logabs, out)]
    det_node = _core_node(x, Det)
    if det_node is None:
        return None
    sign, logabs = SLogDet()(det_node.inputs[0])
    return [_as_output_type(log(sign) + logabs, out)]


@register_canonicalize
@register_stabilize
@node_rewriter([Det])
def det_of_diagonal_or_triangular(fgraph, node):
    """``det(T)`` -> ``prod(diagonal(T))`` for a known diagonal or triangular ``T``."""
    from lucent.tensor.linalg import _structure

    (x,) = node.inputs
    if not any(check_assumption(fgraph, x, key) for key in (DIAGONAL, LOWER_TRIANGULAR, UPPER_TRIANGULAR)):
        return None
    out = node.outputs[0]
    return [_as_output_type(_structure.diagonal_vector(_as_output_type(x, out)).prod(), out)]


@register_stabilize
@register_specialize
@node_rewriter([Solve])
def solve_structured(fgraph, node):
    """``solve(T, b)`` -> ``solve_triangular`` for a known triangular ``T``; ``solve(L @ L.T, b)``
    -> ``cho_solve((L, True), b)`` for a known lower-triangular ``L``."""
    from lucent.tensor.linalg.solvers.psd import CholeskySolve
    from lucent.tensor.linalg.solvers.triangular import SolveTriangular

    op = node.op
    if op.assume_a not in ("gen", "sym", "pos"):
        return None
    A, b = node.inputs
    out = node.outputs[0]
    for key, lower in ((LOWER_TRIANGULAR, True), (UPPER_TRIANGULAR, False)):
        if op.assume_a == "gen" and check_assumption(fgraph, A, key):
            return [_as_output_type(SolveTriangular(lower=lower, b_ndim=op.b_ndim)(A, b), out)]
    prod = A.owner
    if prod is not None and isinstance(prod.op, (Dot, MatMul)):
        L, Lt = prod.inputs
        if (
            Lt.owner is not None
            and isinstance(Lt.owner.op, DimShuffle)
            and Lt.owner.op.new_order == (1, 0)
            and Lt.owner.inputs[0] is L
            and check_assumption(fgraph, L, LOWER_TRIANGULAR)
        ):
            return [_as_output_type(CholeskySolve(lower=True, b_ndim=op.b_ndim)(L, b), out)]
    return None
