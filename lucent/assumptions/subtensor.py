"""How basic indexing (``Subtensor``) moves matrix facts.

Indexing only the leading (batch) axes picks whole matrices out of a
stack, so every per-matrix fact carries over; an index that touches one of
the last two axes (anything but a full ``:``) cuts the matrix, and nothing
is known any more. ``x[None, :, :]`` is built as an expand_dims followed by
a full-slice Subtensor, so it keeps the facts too.
"""

from __future__ import annotations

from lucent.assumptions.core import MATRIX_KEYS, FactState, register_assumption, true_if
from lucent.tensor.subtensor import Subtensor

_FULL = (None, None, None)


def subtensor_propagates_matrix_property(key, op, feature, fgraph, node, input_states):
    """Rule: TRUE when the input has the fact and the two core axes are left whole."""
    if input_states[0] is not FactState.TRUE:
        return [FactState.UNKNOWN]
    ndim = node.inputs[0].type.ndim
    if ndim < 2:
        return [FactState.UNKNOWN]
    idx_list = tuple(op.idx_list)
    n_core_indexed = max(0, len(idx_list) - (ndim - 2))
    return true_if(all(entry == _FULL for entry in idx_list[len(idx_list) - n_core_indexed:]))


for _key in MATRIX_KEYS:
    register_assumption(_key, Subtensor)(subtensor_propagates_matrix_property)


def incsubtensor_propagates_matrix_property(key, op, feature, fgraph, node, input_states):
    """Rule for ``x[idx].set(v)`` / ``.inc(v)`` writing whole matrices (core axes left whole).

    Setting everything gives ``v``'s fact; setting part of the batch needs
    the fact on both ``x`` and ``v``; incrementing needs it on both and a
    fact that survives addition (not orthogonal, selection, permutation).
    """
    from lucent.assumptions.core import DIAGONAL, LOWER_TRIANGULAR, POSITIVE_DEFINITE, SYMMETRIC, UPPER_TRIANGULAR

    ndim = node.inputs[0].type.ndim
    if ndim < 2:
        return [FactState.UNKNOWN]
    idx_list = tuple(op.idx_list)
    n_core_indexed = max(0, len(idx_list) - (ndim - 2))
    if not all(entry == _FULL for entry in idx_list[len(idx_list) - n_core_indexed:]):
        return [FactState.UNKNOWN]
    base, value = input_states[0], input_states[1]
    if op.set_instead_of_inc:
        if all(entry == _FULL for entry in idx_list):
            return [value]
        return true_if(base is FactState.TRUE and value is FactState.TRUE)
    if key not in (DIAGONAL, LOWER_TRIANGULAR, UPPER_TRIANGULAR, SYMMETRIC, POSITIVE_DEFINITE):
        return [FactState.UNKNOWN]
    return true_if(base is FactState.TRUE and value is FactState.TRUE)


def index_inputs(op, node):
    """``[(entry, index variable or None)]`` for the ``idx_list`` of an (Inc)Subtensor node."""
    inputs = list(node.inputs[2:] if hasattr(op, "set_instead_of_inc") else node.inputs[1:])
    pairs = []
    for entry in op.idx_list:
        if isinstance(entry, tuple):
            for present in entry:
                if present:
                    inputs.pop(0)
            pairs.append((entry, None))
        else:
            pairs.append((entry, inputs.pop(0)))
    return pairs


def indexes_diagonal(op, node):
    """True when an IncSubtensor writes only diagonal entries (``x[i, i]``, ``x[:, i, i]``)."""
    pairs = [(e, v) for e, v in index_inputs(op, node) if e != _FULL]
    if len(pairs) < 2 or any(v is None for _, v in pairs):
        return False
    first = pairs[0][1]
    return all(v is first for _, v in pairs[1:])


def _register_inc_rules():
    from lucent.tensor.advanced_subtensor import AdvancedIncSubtensor
    from lucent.tensor.subtensor import IncSubtensor

    for key in MATRIX_KEYS:
        register_assumption(key, IncSubtensor)(incsubtensor_propagates_matrix_property)
    return IncSubtensor, AdvancedIncSubtensor


INC_SUBTENSOR_OPS = _register_inc_rules()
