"""Inference rules for LOWER_TRIANGULAR and UPPER_TRIANGULAR.

A transpose swaps the two: the transpose of a lower-triangular matrix is
upper triangular (and a matrix known not lower triangular has a transpose
known not upper triangular).
"""

from __future__ import annotations

from lucent.assumptions.alloc import alloc_of_zero
from lucent.assumptions.core import (
    LOWER_TRIANGULAR,
    UPPER_TRIANGULAR,
    FactState,
    all_inputs_have_key,
    propagate_first,
    register_assumption,
    true_if,
)
from lucent.assumptions.dimshuffle import is_matrix_transpose, left_expand_dims_propagates_matrix_property
from lucent.assumptions.dot import MATMUL_OPS
from lucent.assumptions.elemwise import elemwise_preserves_zero_pattern
from lucent.tensor.creation import Alloc, Eye
from lucent.tensor.elemwise import DimShuffle, Elemwise
from lucent.tensor.linalg.decomposition.cholesky import Cholesky
from lucent.tensor.linalg.inverse import MatrixInverse
from lucent.tensor.variable import TensorConstant

_OTHER = {LOWER_TRIANGULAR: UPPER_TRIANGULAR, UPPER_TRIANGULAR: LOWER_TRIANGULAR}


def _eye_band(key, op, feature, fgraph, node, input_states):
    """``eye(n, m, k)``: lower triangular iff ``k <= 0``, upper iff ``k >= 0``."""
    k = node.inputs[2]
    if not isinstance(k, TensorConstant):
        return [FactState.UNKNOWN]
    kv = int(k.data.item())
    return true_if(kv <= 0 if key is LOWER_TRIANGULAR else kv >= 0, else_false=True)


def _cholesky(key, op, feature, fgraph, node, input_states):
    return true_if(op.lower if key is LOWER_TRIANGULAR else not op.lower)


def _dimshuffle(key, op, feature, fgraph, node, input_states):
    if is_matrix_transpose(op):
        return [feature.get(node.inputs[0], _OTHER[key])]
    if left_expand_dims_propagates_matrix_property(op):
        return [input_states[0]]
    return [FactState.UNKNOWN]


def _elemwise(key, op, feature, fgraph, node, input_states):
    return elemwise_preserves_zero_pattern(key, op, feature, node, input_states)


for _key in (LOWER_TRIANGULAR, UPPER_TRIANGULAR):
    register_assumption(_key, Eye)(_eye_band)
    register_assumption(_key, Alloc)(alloc_of_zero)
    register_assumption(_key, MatrixInverse)(propagate_first)
    register_assumption(_key, *MATMUL_OPS)(all_inputs_have_key)
    register_assumption(_key, Cholesky)(_cholesky)
    register_assumption(_key, DimShuffle)(_dimshuffle)
    register_assumption(_key, Elemwise)(_elemwise)
