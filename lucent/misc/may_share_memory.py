"""``may_share_memory(a, b)`` for ndarrays *and* SciPy sparse matrices.

``numpy.may_share_memory`` only knows ndarrays; a sparse matrix is three
arrays (``data``, ``indices``, ``indptr``), any of which may be shared with
another value. Tests of in-place updates and of ``borrow`` use this to ask
"could writing one change the other?" whatever the kind of value.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse


def may_share_memory(a, b, raise_other_type=True):
    """True if ``a`` and ``b`` (ndarrays or sparse matrices) may overlap in memory.

    Other kinds of values raise ``TypeError`` unless ``raise_other_type`` is
    false, in which case they never share memory.
    """
    a_ndarray, b_ndarray = isinstance(a, np.ndarray), isinstance(b, np.ndarray)
    if a_ndarray and b_ndarray:
        return bool(np.may_share_memory(a, b))
    a_sparse, b_sparse = scipy.sparse.issparse(a), scipy.sparse.issparse(b)
    if not ((a_ndarray or a_sparse) and (b_ndarray or b_sparse)):
        if raise_other_type:
            raise TypeError(
                "may_share_memory supports only numpy.ndarray and scipy.sparse matrices, got "
                f"{type(a).__name__} and {type(b).__name__}"
            )
        return False
    # Only now: two ndarrays never need the sparse package.
    from lucent.sparse.type import SparseTensorType

    return SparseTensorType.may_share_memory(a, b)


__all__ = ["may_share_memory"]
