"""Inference rules for POSITIVE_DEFINITE.

Sums of positive-definite matrices, their positive multiples, inverses and
transposes are positive definite, as is ``M @ S @ M.T`` for a positive
definite ``S``. ``X @ X.T`` (a Gram matrix) is only positive
*semi*-definite in general; it is treated as positive definite, as
PyTensor does, since that is what such products are used for (a
rank-deficient ``X`` then needs ``assume(..., positive_definite=False)``).
"""

from __future__ import annotations

from lucent.assumptions.alloc import eye_identity_rule
from lucent.assumptions.core import POSITIVE_DEFINITE, FactState, propagate_first, register_assumption
from lucent.assumptions.dimshuffle import transpose_keeps
from lucent.assumptions.dot import MATMUL_OPS, are_matrix_transposes, match_congruence
from lucent.assumptions.elemwise import is_provably_positive
from lucent.scalar import arith
from lucent.tensor.creation import Eye
from lucent.tensor.elemwise import DimShuffle, Elemwise
from lucent.tensor.linalg.inverse import MatrixInverse

register_assumption(POSITIVE_DEFINITE, Eye)(eye_identity_rule)
register_assumption(POSITIVE_DEFINITE, MatrixInverse)(propagate_first)
register_assumption(POSITIVE_DEFINITE, DimShuffle)(transpose_keeps)


def _full_pd_matrix(var, feature):
    return var.type.ndim >= 2 and not any(var.type.broadcastable[-2:]) and feature.check(var, POSITIVE_DEFINITE)


@register_assumption(POSITIVE_DEFINITE, Elemwise)
def _elemwise(key, op, feature, fgraph, node, input_states):
    scalar_op = op.scalar_op
    if isinstance(scalar_op, arith.Add):
        return [FactState.TRUE if all(_full_pd_matrix(i, feature) for i in node.inputs) else FactState.UNKNOWN]
    if isinstance(scalar_op, arith.Mul):
        for i, factor in enumerate(node.inputs):
            if not (all(factor.type.broadcastable[-2:]) and is_provably_positive(factor)):
                continue
            others = node.inputs[:i] + node.inputs[i + 1:]
            if others and all(_full_pd_matrix(o, feature) for o in others):
                return [FactState.TRUE]
        return [FactState.UNKNOWN]
    return [FactState.UNKNOWN] * len(node.outputs)


@register_assumption(POSITIVE_DEFINITE, *MATMUL_OPS)
def _dot(key, op, feature, fgraph, node, input_states):
    a, b = node.inputs
    if not a.type.dtype.startswith("complex") and are_matrix_transposes(a, b):
        return [FactState.TRUE]
    s = match_congruence(node)
    if s is not None and not a.type.dtype.startswith("complex") and feature.check(s, POSITIVE_DEFINITE):
        return [FactState.TRUE]
    return [FactState.UNKNOWN]
