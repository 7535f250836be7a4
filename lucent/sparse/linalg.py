"""Linear algebra building sparse matrices: ``block_diag``."""

from __future__ import annotations

import numpy as np
import scipy.sparse

from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.tensor.linalg.constructors import BaseBlockDiagonal


class SparseBlockDiagonal(BaseBlockDiagonal):
    """Matrices (sparse or dense) along the diagonal of a sparse matrix of ``format``.

    The result is ``scipy.sparse.block_diag`` of the inputs, of the inputs'
    common dtype; the gradient of each input is its block of the output
    gradient (``BaseBlockDiagonal``).
    """

    __props__ = ("n_inputs", "format")

    def __init__(self, n_inputs, format="csc"):
        super().__init__(n_inputs)
        if format not in ("csc", "csr"):
            raise ValueError(f"block_diag: format must be 'csc' or 'csr', got {format!r}")
        self.format = format

    def __call__(self, *matrices, **kwargs):
        # Sparse values have no batch dimensions: no Blockwise (BatchedCoreOp.__call__) here.
        return Op.__call__(self, *matrices, **kwargs)

    def make_node(self, *matrices):
        from lucent.sparse.basic import as_sparse_or_tensor_variable, matrix

        if len(matrices) != self.n_inputs:
            raise TypeError(f"SparseBlockDiagonal expects {self.n_inputs} matrices, got {len(matrices)}")
        matrices = [as_sparse_or_tensor_variable(m) for m in matrices]
        for i, m in enumerate(matrices):
            if m.type.ndim != 2:
                raise TypeError(f"block_diag: input {i} must be a matrix, got {m.type}")
        dtype = np.result_type(*(np.dtype(m.type.dtype) for m in matrices)).name
        return Apply(self, matrices, [matrix(format=self.format, dtype=dtype)])

    def perform(self, node, inputs, output_storage):
        dtype = node.outputs[0].type.dtype
        out = scipy.sparse.block_diag(inputs, format=self.format).astype(dtype)
        output_storage[0][0] = node.outputs[0].type.format_cls[self.format](out)


def block_diag(*matrices, format="csc"):
    """The sparse block-diagonal matrix (CSC or CSR) of the given sparse or dense matrices.

    One matrix is returned as given, in a tuple, as ``scipy``-style callers
    of the one-argument form expect.
    """
    if len(matrices) == 1:
        return matrices
    return SparseBlockDiagonal(len(matrices), format=format)(*matrices)


__all__ = ["SparseBlockDiagonal", "block_diag"]
