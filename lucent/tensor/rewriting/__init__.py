"""Tensor rewrites, registered into ``lucent.graph.rewriting.db.optdb`` on import.

Stages (see ``registry``): canonicalize (``basic``, ``math``, ``shape``, ``subtensor``, ``subtensor_lift``),
stabilize (``stabilize``, ``special``), specialize (``specialize``),
fusion and in-place (``elemwise``, ``fused_reduction``, ``composite_constants``,
``inplace``).
"""

from lucent.tensor.rewriting import (  # noqa: F401
    assumptions,
    basic,
    blas,
    blockwise,
    composite_constants,
    elemwise,
    fused_reduction,
    inplace,
    linalg,
    linalg_inplace,
    math,
    reshape,
    shape,
    special,
    specialize,
    stabilize,
    subtensor,
    subtensor_lift,
)
