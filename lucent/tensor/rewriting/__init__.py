"""Tensor rewrites, registered into ``lucent.graph.rewriting.db.optdb`` on import.

Stages (see ``registry``): canonicalize (``basic``, ``math``, ``shape``),
stabilize (``stabilize``, ``special``), specialize (``specialize``),
fusion and in-place (``elemwise``, ``inplace``).
"""

from lucent.tensor.rewriting import (  # noqa: F401
    basic,
    elemwise,
    inplace,
    math,
    shape,
    special,
    specialize,
    stabilize,
)
