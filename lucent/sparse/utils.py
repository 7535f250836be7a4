"""``hash_from_sparse``: a strong hash of a sparse matrix's value.

Two matrices hash equal when they hold the same arrays (data, indices,
indptr), shape, dtype and format, whatever their memory layout (a view
and its copy hash equal). Used to key sparse constants.
"""

from __future__ import annotations

import hashlib

import numpy as np


def hash_from_sparse(data):
    """A hex sha256 digest of the sparse matrix ``data``.

    The shape and dtype are hashed too: the arrays of an empty ``(1, 0)``
    and ``(2, 0)`` matrix, or of all-zero int32 and uint32 ones, can be
    byte-for-byte equal.
    """
    h = hashlib.sha256()
    for part in (data.data, data.indices, data.indptr):
        arr = np.ascontiguousarray(part)
        h.update(hashlib.sha256(arr.tobytes()).digest())
        h.update(str(arr.dtype).encode())
    h.update(f"{data.shape}|{data.dtype}|{data.format}".encode())
    return h.hexdigest()


__all__ = ["hash_from_sparse"]
