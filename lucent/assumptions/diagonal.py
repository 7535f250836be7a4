"""Inference rules for DIAGONAL (zero off the main diagonal; square)."""

from __future__ import annotations

import numpy as np

from lucent.assumptions.alloc import alloc_of_zero, eye_zero_or_identity_rule
from lucent.assumptions.core import (
    DIAGONAL,
    ORTHOGONAL,
    FactState,
    all_inputs_have_key,
    propagate_first,
    register_assumption,
    register_constant_inference,
)
from lucent.assumptions.dimshuffle import is_matrix_transpose, transpose_keeps
from lucent.assumptions.dot import MATMUL_OPS
from lucent.assumptions.elemwise import elemwise_preserves_zero_pattern
from lucent.assumptions.subtensor import INC_SUBTENSOR_OPS, indexes_diagonal
from lucent.tensor.creation import Alloc, Eye
from lucent.tensor.elemwise import DimShuffle, Elemwise
from lucent.tensor.linalg.decomposition.cholesky import Cholesky
from lucent.tensor.linalg.inverse import MatrixInverse, MatrixPinv


def diagonal_from_constant(var):
    """DIAGONAL of a constant, read from its data (cached on ``var.tag``: it is O(n^2))."""
    cached = getattr(var.tag, "is_diagonal", None)
    if cached is not None:
        return cached
    data = np.asarray(var.data)
    if data.ndim < 2 or data.shape[-1] != data.shape[-2]:
        state = FactState.FALSE
    else:
        on_diagonal = np.count_nonzero(np.diagonal(data, axis1=-2, axis2=-1))
        state = FactState.TRUE if np.count_nonzero(data) == on_diagonal else FactState.FALSE
    var.tag.is_diagonal = state
    return state


register_constant_inference(DIAGONAL, diagonal_from_constant)
register_assumption(DIAGONAL, Eye)(eye_zero_or_identity_rule)
register_assumption(DIAGONAL, Alloc)(alloc_of_zero)
register_assumption(DIAGONAL, Cholesky)(propagate_first)
register_assumption(DIAGONAL, MatrixInverse, MatrixPinv)(propagate_first)
register_assumption(DIAGONAL, *MATMUL_OPS)(all_inputs_have_key)
register_assumption(DIAGONAL, DimShuffle)(transpose_keeps)


@register_assumption(DIAGONAL, *MATMUL_OPS)
def _orthogonal_times_transpose(key, op, feature, fgraph, node, input_states):
    """``Q @ Q.T`` is the identity for an orthogonal ``Q``."""
    a, b = node.inputs
    owner = b.owner
    if owner is not None and is_matrix_transpose(owner.op) and owner.inputs[0] is a and feature.check(a, ORTHOGONAL):
        return [FactState.TRUE]
    return [FactState.UNKNOWN]


@register_assumption(DIAGONAL, Elemwise)
def _elemwise(key, op, feature, fgraph, node, input_states):
    return elemwise_preserves_zero_pattern(DIAGONAL, op, feature, node, input_states)


@register_assumption(DIAGONAL, *INC_SUBTENSOR_OPS)
def _write_diagonal_entries(key, op, feature, fgraph, node, input_states):
    """Setting or incrementing only diagonal entries (``x[i, i]``) of a diagonal matrix keeps it diagonal."""
    if input_states[0] is FactState.TRUE and indexes_diagonal(op, node):
        return [FactState.TRUE]
    return [FactState.UNKNOWN]
