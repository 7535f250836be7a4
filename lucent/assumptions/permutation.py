"""Inference rules for PERMUTATION (a reordering of the identity's columns).

The identity is a permutation; the transpose (inverse) of a permutation
is one, and a product of permutations is one. A permutation is also an
orthogonal selection (see ``IMPLIES`` in ``core``).
"""

from __future__ import annotations

import numpy as np

from lucent.assumptions.alloc import eye_identity_rule
from lucent.assumptions.core import (
    PERMUTATION,
    FactState,
    all_inputs_have_key,
    propagate_first,
    register_assumption,
    register_constant_inference,
)
from lucent.assumptions.dimshuffle import transpose_keeps
from lucent.assumptions.dot import MATMUL_OPS
from lucent.assumptions.selection import one_hot_columns
from lucent.tensor.creation import Eye
from lucent.tensor.elemwise import DimShuffle
from lucent.tensor.linalg.inverse import MatrixInverse


def permutation_from_constant(var):
    """PERMUTATION of a constant: square, one 1 in every column and every row (cached on ``var.tag``)."""
    cached = getattr(var.tag, "is_permutation", None)
    if cached is not None:
        return cached
    data = np.asarray(var.data)
    ok = (
        data.ndim >= 2
        and data.shape[-1] == data.shape[-2]
        and one_hot_columns(data)
        and one_hot_columns(np.swapaxes(data, -1, -2))
    )
    state = FactState.TRUE if ok else FactState.FALSE
    var.tag.is_permutation = state
    return state


register_constant_inference(PERMUTATION, permutation_from_constant)
register_assumption(PERMUTATION, Eye)(eye_identity_rule)
register_assumption(PERMUTATION, MatrixInverse)(propagate_first)
register_assumption(PERMUTATION, *MATMUL_OPS)(all_inputs_have_key)
register_assumption(PERMUTATION, DimShuffle)(transpose_keeps)
