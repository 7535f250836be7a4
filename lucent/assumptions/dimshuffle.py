"""How ``DimShuffle`` (transpose, expand_dims) moves matrix facts.

A fact about a matrix concerns its last two axes. A DimShuffle that keeps
those two last and in order (adding, dropping or permuting batch axes only)
keeps every fact; one that swaps them (a matrix transpose) keeps the
symmetric ones (diagonal, symmetric, positive definite, orthogonal) and
swaps lower with upper triangular. The per-key rules live with each key.
"""

from __future__ import annotations

from lucent.assumptions.core import ALL_KEYS, FactState, register_assumption
from lucent.tensor.elemwise import DimShuffle


def is_matrix_transpose(op):
    """True if ``op`` swaps the last two axes of its input and leaves the others (new
    length-1 axes may be added on the left)."""
    if not isinstance(op, DimShuffle) or op.input_ndim < 2:
        return False
    order = list(op.new_order)
    while order and order[0] == "x":
        order.pop(0)
    nd = op.input_ndim
    return order == [*range(nd - 2), nd - 1, nd - 2]


def left_expand_dims_propagates_matrix_property(op):
    """True if ``op`` only adds length-1 axes on the left of a matrix (a batch of one)."""
    return bool(isinstance(op, DimShuffle) and op.is_left_expand_dims and op.input_ndim >= 2)


def dimshuffle_propagates_matrix_property(key, op, feature, fgraph, node, input_states):
    """Rule: a DimShuffle keeping the two core axes last and in order keeps the fact."""
    nd = op.input_ndim
    if nd < 2:
        return [FactState.UNKNOWN]
    if tuple(op.new_order[-2:]) == (nd - 2, nd - 1):
        return [input_states[0]]
    return [FactState.UNKNOWN]


def transpose_keeps(key, op, feature, fgraph, node, input_states):
    """Rule for facts a matrix shares with its transpose (symmetric, orthogonal, ...)."""
    if input_states[0] is not FactState.TRUE:
        return [FactState.UNKNOWN]
    if is_matrix_transpose(op) or left_expand_dims_propagates_matrix_property(op):
        return [FactState.TRUE]
    return [FactState.UNKNOWN]


for _key in ALL_KEYS:
    register_assumption(_key, DimShuffle)(dimshuffle_propagates_matrix_property)
