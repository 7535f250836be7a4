"""Rewrites of matrix inverses, using what is known about the matrix.

* ``inv(inv(X))`` -> ``X``;
* ``inv(Q)`` -> ``Q.T`` when ``Q`` is known orthogonal;
* ``inv(D)`` -> ``I / (D + (1 - I))`` when ``D`` is known diagonal: the
  reciprocal of the diagonal, zeros elsewhere (``D + 1 - I`` is 1 off the
  diagonal), element-wise instead of an O(n^3) factorisation.

Structure is known from ``lucent.assumptions`` (``assume(D, diagonal=True)``,
or inferred, e.g. from ``eye``).
"""

from __future__ import annotations

from lucent.assumptions import DIAGONAL, ORTHOGONAL, check_assumption
from lucent.graph.rewriting.basic import node_rewriter
from lucent.tensor.linalg.inverse import MatrixInverse
from lucent.tensor.rewriting.registry import register_canonicalize, register_stabilize


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
