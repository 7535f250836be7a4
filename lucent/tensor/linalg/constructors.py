"""Matrices built from matrices: ``block_diag``."""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply
from lucent.tensor.basic import as_tensor_variable
from lucent.tensor.blockwise import BatchedCoreOp
from lucent.tensor.type import TensorType


class BaseBlockDiagonal(BatchedCoreOp):
    """Ops that place ``n_inputs`` matrices along a diagonal; the signature names each input's dimensions."""

    __props__ = ("n_inputs",)

    def __init__(self, n_inputs):
        if not isinstance(n_inputs, (int, np.integer)) or n_inputs < 1:
            raise ValueError(f"block_diag needs at least one matrix, got n_inputs={n_inputs!r}")
        self.n_inputs = int(n_inputs)
        ins = ",".join(f"(m{i},n{i})" for i in range(self.n_inputs))
        self.gufunc_signature = f"{ins}->(m,n)"

    def infer_shape(self, fgraph, node, input_shapes):
        rows = cols = 0
        for r, c in input_shapes:
            rows, cols = rows + r, cols + c
        return [(rows, cols)]

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        grads, r0, c0 = [], 0, 0
        for x in inputs:
            r1, c1 = r0 + x.shape[0], c0 + x.shape[1]
            grads.append(g[r0:r1, c0:c1].astype(x.type.dtype) if x.type.dtype != g.type.dtype else g[r0:r1, c0:c1])
            r0, c0 = r1, c1
        return grads


class BlockDiagonal(BaseBlockDiagonal):
    """``scipy.linalg.block_diag`` of matrices: each on the diagonal of a zero matrix, in order."""

    __props__ = ("n_inputs",)

    def make_node(self, *matrices):
        if len(matrices) != self.n_inputs:
            raise TypeError(f"BlockDiagonal expects {self.n_inputs} matrices, got {len(matrices)}")
        matrices = [as_tensor_variable(m) for m in matrices]
        for i, m in enumerate(matrices):
            if m.type.ndim != 2:
                raise TypeError(f"block_diag: input {i} must be a matrix, got {m.type}")
        dtype = np.result_type(*(m.type.dtype for m in matrices)).name
        def total(axis):
            dims = [m.type.shape[axis] for m in matrices]
            return None if any(d is None for d in dims) else sum(dims)
        return Apply(self, matrices, [TensorType(dtype, (total(0), total(1)))()])

    def perform(self, node, inputs, output_storage):
        dtype = node.outputs[0].type.dtype
        rows = sum(x.shape[0] for x in inputs)
        cols = sum(x.shape[1] for x in inputs)
        out = np.zeros((rows, cols), dtype=dtype)
        r, c = 0, 0
        for x in inputs:
            out[r:r + x.shape[0], c:c + x.shape[1]] = x
            r, c = r + x.shape[0], c + x.shape[1]
        output_storage[0][0] = out


def block_diag(*matrices):
    """The block-diagonal matrix of ``matrices`` (``scipy.linalg.block_diag``; batched over leading dims)."""
    from lucent.tensor.blockwise import Blockwise

    # Always a Blockwise node, as in PyTensor (the wrapper is removed when unbatched).
    return Blockwise(BlockDiagonal(len(matrices)))(*matrices)


__all__ = ["BaseBlockDiagonal", "BlockDiagonal", "block_diag"]
