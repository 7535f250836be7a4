"""Inference rules for SYMMETRIC (equal to its transpose)."""

from __future__ import annotations

from lucent.assumptions.alloc import alloc_is_symmetric, eye_zero_or_identity_rule
from lucent.assumptions.core import SYMMETRIC, FactState, propagate_first, register_assumption, true_if
from lucent.assumptions.dimshuffle import transpose_keeps
from lucent.assumptions.dot import MATMUL_OPS, match_congruence
from lucent.tensor.creation import Alloc, Eye
from lucent.tensor.elemwise import DimShuffle, Elemwise
from lucent.tensor.linalg.inverse import MatrixInverse, MatrixPinv

register_assumption(SYMMETRIC, Eye)(eye_zero_or_identity_rule)
register_assumption(SYMMETRIC, Alloc)(alloc_is_symmetric)
register_assumption(SYMMETRIC, MatrixInverse, MatrixPinv)(propagate_first)
register_assumption(SYMMETRIC, DimShuffle)(transpose_keeps)


@register_assumption(SYMMETRIC, *MATMUL_OPS)
def _congruence(key, op, feature, fgraph, node, input_states):
    """``M @ S @ M.T`` is symmetric when ``S`` is."""
    s = match_congruence(node)
    return true_if(s is not None and feature.check(s, SYMMETRIC))


@register_assumption(SYMMETRIC, *MATMUL_OPS)
def _square_of_symmetric(key, op, feature, fgraph, node, input_states):
    """``A @ A`` is symmetric when ``A`` is (two different symmetric factors need not commute)."""
    a, b = node.inputs
    return true_if(a is b and input_states[0] is FactState.TRUE)


def _entrywise_symmetric(var, feature):
    """Whether ``var`` contributes the same value at ``(i, j)`` and ``(j, i)`` when broadcast."""
    if var.type.ndim < 2:
        return var.type.ndim == 0
    rows_bc, cols_bc = var.type.broadcastable[-2:]
    if rows_bc and cols_bc:
        return True
    if rows_bc or cols_bc:
        return False
    return feature.check(var, SYMMETRIC)


@register_assumption(SYMMETRIC, Elemwise)
def _elemwise(key, op, feature, fgraph, node, input_states):
    """Any element-wise function of symmetric (or scalar) inputs is symmetric."""
    n_out = len(node.outputs)
    if node.outputs[0].type.ndim < 2:
        return [FactState.UNKNOWN] * n_out
    ok = all(_entrywise_symmetric(i, feature) for i in node.inputs)
    return [FactState.TRUE if ok else FactState.UNKNOWN] * n_out
