"""Facts about the matrices ``eye`` and ``alloc`` create.

``eye(n, m, k)`` is the identity when square with ``k == 0``: diagonal,
symmetric, triangular, positive definite, orthogonal and a permutation.
A square band that falls outside the matrix leaves all zeros (diagonal,
symmetric, not positive definite). ``alloc(c, n, n)`` fills with one
value: symmetric whatever ``c`` is, diagonal and triangular only if ``c``
is 0.
"""

from __future__ import annotations

from lucent.assumptions.core import ALL_KEYS, FactState, register_assumption, true_if
from lucent.tensor.basic import NotScalarConstantError, get_underlying_scalar_constant_value
from lucent.tensor.creation import Alloc
from lucent.tensor.variable import TensorConstant


def _int_constant(v):
    return int(v.data.item()) if isinstance(v, TensorConstant) else None


def _eye_is_square(n, m):
    if n is m:
        return FactState.TRUE
    nv, mv = _int_constant(n), _int_constant(m)
    if nv is None or mv is None:
        return FactState.UNKNOWN
    return FactState.TRUE if nv == mv else FactState.FALSE


def eye_identity_rule(key, op, feature, fgraph, node, input_states):
    """Rule for facts only the identity has (orthogonal, positive definite, permutation)."""
    n, m, k = node.inputs
    kv = _int_constant(k)
    if kv is None:
        return [FactState.UNKNOWN]
    if kv != 0:
        return [FactState.FALSE]
    return [_eye_is_square(n, m)]


def eye_zero_or_identity_rule(key, op, feature, fgraph, node, input_states):
    """Rule for facts the identity and the square zero matrix share (diagonal, symmetric)."""
    n, m, k = node.inputs
    kv = _int_constant(k)
    if kv is None:
        return [FactState.UNKNOWN]
    square = _eye_is_square(n, m)
    if square is FactState.FALSE:
        return [FactState.FALSE]
    if kv == 0:
        return [square]
    nv, mv = _int_constant(n), _int_constant(m)
    if nv is None or mv is None:
        return [FactState.UNKNOWN]
    return true_if(kv <= -nv or kv >= mv, else_false=True)


def _square_static(node):
    shape = node.outputs[0].type.shape
    return len(shape) >= 2 and shape[-1] is not None and shape[-1] == shape[-2]


def alloc_of_zero(key, op, feature, fgraph, node, input_states):
    """Rule (diagonal, triangular): a square alloc of 0 has the fact, of another constant not."""
    if not _square_static(node):
        return [FactState.UNKNOWN]
    try:
        value = get_underlying_scalar_constant_value(node.inputs[0])
    except NotScalarConstantError:
        return [FactState.UNKNOWN]
    return true_if(value == 0, else_false=True)


def alloc_is_symmetric(key, op, feature, fgraph, node, input_states):
    """Rule (symmetric): a square alloc of a scalar holds one value everywhere."""
    if not _square_static(node):
        return [FactState.UNKNOWN]
    return true_if(node.inputs[0].type.ndim == 0)


def alloc_propagates_matrix_property(key, op, feature, fgraph, node, input_states):
    """Rule: an alloc that only adds batch axes to a full matrix keeps its facts."""
    value = node.inputs[0]
    if value.type.ndim >= 2 and not any(value.type.broadcastable[-2:]):
        return [input_states[0]]
    return [FactState.UNKNOWN]


for _key in ALL_KEYS:
    register_assumption(_key, Alloc)(alloc_propagates_matrix_property)
