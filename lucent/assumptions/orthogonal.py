"""Inference rules for ORTHOGONAL (``Q.T @ Q == I``).

Orthogonal matrices form a group: products, inverses and transposes of
orthogonal matrices are orthogonal, and so is the identity.
"""

from __future__ import annotations

from lucent.assumptions.alloc import eye_identity_rule
from lucent.assumptions.core import ORTHOGONAL, all_inputs_have_key, propagate_first, register_assumption
from lucent.assumptions.dimshuffle import transpose_keeps
from lucent.assumptions.dot import MATMUL_OPS
from lucent.tensor.creation import Eye
from lucent.tensor.elemwise import DimShuffle
from lucent.tensor.linalg.inverse import MatrixInverse, MatrixPinv

register_assumption(ORTHOGONAL, Eye)(eye_identity_rule)
register_assumption(ORTHOGONAL, MatrixInverse, MatrixPinv)(propagate_first)
register_assumption(ORTHOGONAL, *MATMUL_OPS)(all_inputs_have_key)
register_assumption(ORTHOGONAL, DimShuffle)(transpose_keeps)
