"""Shared sparse matrices: ``lucent.shared(scipy.sparse.csr_matrix(...))``.

``sparse_constructor`` is registered with ``shared_constructor`` (so it is
tried before the dense constructors) and declines anything that is not a
SciPy sparse matrix. The shared variable is a sparse variable: graph code
uses it like any other (``s.T``, ``s + x``, ``s.toarray()``).
"""

from __future__ import annotations

import copy

import scipy.sparse

from lucent.compile.sharedvalue import SharedVariable, shared_constructor
from lucent.sparse.type import SparseTensorType
from lucent.sparse.variable import SparseVariable
from lucent.tensor.sharedvar import TensorSharedVariable


class SparseTensorSharedVariable(SparseVariable, TensorSharedVariable):
    """A shared variable holding a SciPy sparse matrix."""

    def __init__(self, name, type, value, strict, allow_downcast=None, container=None):
        SharedVariable.__init__(
            self, name, type, value, strict, allow_downcast=allow_downcast, container=container
        )

    @staticmethod
    def _zeros_like(value):
        """An empty (all-zero) matrix of the same shape, format and dtype."""
        return type(value)(value.shape, dtype=value.dtype)

    def zero(self, borrow=False):
        # A sparse matrix cannot be zeroed in place without changing its pattern.
        self.set_value(self._zeros_like(self.get_value(borrow=True)), borrow=True)

    @property
    def format(self):
        return self.type.format


@shared_constructor
def sparse_constructor(value, name=None, strict=False, allow_downcast=None, borrow=False, format=None):
    """A ``SparseTensorSharedVariable`` for a SciPy sparse matrix (declines anything else).

    ``format`` converts the value to another format (``'csr'``, ``'csc'``,
    ``'bsr'``); the value is copied unless ``borrow=True``.
    """
    if not isinstance(value, scipy.sparse.spmatrix):
        raise TypeError(
            f"sparse_constructor only takes scipy.sparse matrices, got {type(value).__name__}"
        )
    if format is None:
        format = value.format
    type_ = SparseTensorType(format=format, dtype=value.dtype)
    if not borrow:
        value = copy.deepcopy(value)
    return SparseTensorSharedVariable(
        type=type_, value=value, strict=strict, allow_downcast=allow_downcast, name=name
    )


__all__ = ["SparseTensorSharedVariable", "sparse_constructor"]
