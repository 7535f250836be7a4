"""Recognising products of a matrix with its own transpose (``M @ S @ M.T``)."""

from __future__ import annotations

from lucent.assumptions.dimshuffle import is_matrix_transpose
from lucent.tensor.math import Dot, MatMul

#: The matrix-product ops (``dot`` of matrices, and ``matmul`` / ``@`` with batch axes).
MATMUL_OPS = (Dot, MatMul)


def are_matrix_transposes(a, b):
    """True if one of ``a``, ``b`` is the matrix transpose of the other (by identity)."""
    for y, x in ((a, b), (b, a)):
        owner = y.owner
        if owner is not None and is_matrix_transpose(owner.op) and owner.inputs[0] is x:
            return True
    return False


def _dot_inputs(var):
    owner = var.owner
    if owner is not None and isinstance(owner.op, MATMUL_OPS):
        return owner.inputs
    return None


def match_congruence(node):
    """``S`` when the Dot ``node`` computes ``M @ S @ M.T`` or ``M.T @ S @ M`` (either nesting)."""
    left, right = node.inputs
    inner = _dot_inputs(right)
    if inner is not None and are_matrix_transposes(left, inner[1]):
        return inner[0]
    inner = _dot_inputs(left)
    if inner is not None and are_matrix_transposes(inner[0], right):
        return inner[1]
    return None
