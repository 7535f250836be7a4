"""NumPy helpers whose behaviour changed in NumPy 2, in their NumPy 1 form.

``old_np_unique`` returns a *flat* inverse for ``axis=None`` (NumPy 2 shapes
it like the input), which is what ``lucent.tensor.extra_ops.Unique``
promises.
"""

from __future__ import annotations

import numpy as np


def old_np_unique(arr, return_index=False, return_inverse=False, return_counts=False, axis=None):
    """``numpy.unique`` with a 1-d inverse, as NumPy 1 returned it."""
    outs = np.unique(arr, return_index=return_index, return_inverse=return_inverse,
                     return_counts=return_counts, axis=axis)
    if not return_inverse:
        return outs
    outs = list(outs)
    k = 2 if return_index else 1
    outs[k] = outs[k].reshape(-1)
    return tuple(outs)


__all__ = ["old_np_unique"]
