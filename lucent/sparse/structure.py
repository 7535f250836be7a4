"""Ops on the storage of sparse matrices: explicit zeros, index order, diagonals, stacking.

SciPy's compressed matrices may store explicit zeros and keep the indices of
a row (CSR) or column (CSC) unsorted; ``Remove0``, ``EnsureSortedIndices``
and ``clean`` normalise that storage without changing the values. ``Diag``
/ ``square_diagonal`` move between a square sparse matrix and its diagonal
as a dense vector, and ``HStack`` / ``VStack`` join sparse blocks. Their
names live in ``lucent.sparse.basic``, where PyTensor has them.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse

from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.scalar.dtypes import continuous_dtypes, upcast
from lucent.sparse.basic import (
    CSC,
    SparseFromDense,
    _compressed,
    _is_sparse_variable,
    as_sparse_variable,
    dense_from_sparse,
)
from lucent.sparse.type import SparseTensorType
from lucent.tensor import basic as _tb
from lucent.tensor.type import tensor


class Remove0(Op):
    """The same matrix without its explicitly stored zeros (regular gradient)."""

    __props__ = ("inplace",)

    def __init__(self, inplace=False):
        self.inplace = inplace
        if inplace:
            self.destroy_map = {0: [0]}

    def __str__(self):
        return f"{type(self).__name__}{{{'inplace' if self.inplace else ''}}}"

    def make_node(self, x):
        x = _compressed(x, "Remove0")
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        z = inputs[0] if self.inplace else inputs[0].copy()
        z.eliminate_zeros()
        output_storage[0][0] = z

    def L_op(self, inputs, outputs, output_grads):
        return [output_grads[0]]

    def infer_shape(self, fgraph, node, input_shapes):
        return input_shapes


remove0 = Remove0()


class EnsureSortedIndices(Op):
    """The same matrix with the indices of each row (CSR) / column (CSC) sorted."""

    __props__ = ("inplace",)

    def __init__(self, inplace):
        self.inplace = inplace
        if inplace:
            self.view_map = {0: [0]}

    def __str__(self):
        return f"{type(self).__name__}{{{'inplace' if self.inplace else 'no_inplace'}}}"

    def make_node(self, x):
        x = _compressed(x, "EnsureSortedIndices")
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        if self.inplace:
            x.sort_indices()
            output_storage[0][0] = x
        else:
            output_storage[0][0] = x.sorted_indices()

    def L_op(self, inputs, outputs, output_grads):
        return [output_grads[0]]

    def infer_shape(self, fgraph, node, input_shapes):
        return input_shapes


ensure_sorted_indices = EnsureSortedIndices(inplace=False)


def clean(x):
    """``x`` without explicit zeros and with sorted indices (what other libraries expect)."""
    return ensure_sorted_indices(remove0(x))


class Diag(Op):
    """The diagonal of a square sparse matrix, as a dense vector (regular gradient)."""

    __props__ = ()

    def make_node(self, x):
        x = _compressed(x, "Diag")
        return Apply(self, [x], [tensor(dtype=x.type.dtype, shape=(None,))])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        if x.shape[0] != x.shape[1]:
            raise ValueError(f"Diag only applies to square matrices, got shape {x.shape}")
        output_storage[0][0] = np.asarray(x.diagonal(), dtype=node.outputs[0].type.dtype)

    def L_op(self, inputs, outputs, output_grads):
        return [square_diagonal(output_grads[0])]

    def infer_shape(self, fgraph, node, input_shapes):
        from lucent.tensor.math import minimum

        return [(minimum(*input_shapes[0]),)]


diag = Diag()


def square_diagonal(diag):
    """A square CSC matrix with the dense vector ``diag`` on its diagonal."""
    from lucent.tensor.creation import arange

    data = _tb.as_tensor_variable(diag)
    if data.type.ndim != 1:
        raise TypeError(f"square_diagonal: the data argument must be a vector, got {data} of type {data.type}")
    n = data.shape[0]
    indices = arange(n, dtype="int32")
    indptr = arange(n + 1, dtype="int32")
    return CSC(data, indices, indptr, _tb.as_tensor_variable([n, n]))


class ColScaleCSC(Op):
    """Each column ``j`` of a CSC matrix multiplied by ``s[j]`` (structured gradient)."""

    __props__ = ()

    def make_node(self, x, s):
        x = as_sparse_variable(x)
        if x.type.format != "csc":
            raise ValueError(f"ColScaleCSC needs a csc matrix, got format {x.type.format!r}")
        s = _tb.as_tensor_variable(s)
        if s.type.ndim != 1:
            raise TypeError(f"ColScaleCSC: the scale must be a vector, got {s} of type {s.type}")
        return Apply(self, [x, s], [x.type()])

    def perform(self, node, inputs, output_storage):
        x, s = inputs
        if s.shape != (x.shape[1],):
            raise ValueError(f"ColScaleCSC: {x.shape[1]} columns but a scale of shape {s.shape}")
        y = x.copy()
        y.data *= np.repeat(s, np.diff(y.indptr)).astype(y.dtype, copy=False)
        output_storage[0][0] = y

    def L_op(self, inputs, outputs, output_grads):
        from lucent.sparse.math import multiply, sp_sum

        x, s = inputs
        (gz,) = output_grads
        return [col_scale(gz, s), sp_sum(multiply(x, gz), axis=0)]

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


class RowScaleCSC(Op):
    """Each row ``i`` of a CSC matrix multiplied by ``s[i]`` (structured gradient)."""

    __props__ = ()

    def make_node(self, x, s):
        x = as_sparse_variable(x)
        if x.type.format != "csc":
            raise ValueError(f"RowScaleCSC needs a csc matrix, got format {x.type.format!r}")
        s = _tb.as_tensor_variable(s)
        if s.type.ndim != 1:
            raise TypeError(f"RowScaleCSC: the scale must be a vector, got {s} of type {s.type}")
        return Apply(self, [x, s], [x.type()])

    def perform(self, node, inputs, output_storage):
        x, s = inputs
        if s.shape != (x.shape[0],):
            raise ValueError(f"RowScaleCSC: {x.shape[0]} rows but a scale of shape {s.shape}")
        data = x.data * s[x.indices]
        output_storage[0][0] = scipy.sparse.csc_matrix(
            (data.astype(x.dtype, copy=False), x.indices.copy(), x.indptr.copy()), shape=x.shape
        )

    def L_op(self, inputs, outputs, output_grads):
        from lucent.sparse.math import multiply, sp_sum

        x, s = inputs
        (gz,) = output_grads
        return [row_scale(gz, s), sp_sum(multiply(x, gz), axis=1)]

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


def col_scale(x, s):
    """``x`` with each column ``j`` multiplied by ``s[j]`` (same format; structured gradient)."""
    x = as_sparse_variable(x)
    if x.type.format == "csc":
        return ColScaleCSC()(x, s)
    if x.type.format == "csr":
        return RowScaleCSC()(x.T, s).T
    raise NotImplementedError(f"col_scale: unsupported format {x.type.format!r}")


def row_scale(x, s):
    """``x`` with each row ``i`` multiplied by ``s[i]`` (same format; structured gradient)."""
    return col_scale(as_sparse_variable(x).T, s).T


class Stack(Op):
    """Base of ``HStack`` / ``VStack``: output ``format`` (default csc) and ``dtype``."""

    __props__ = ("format", "dtype")
    #: 1 for HStack (join columns), 0 for VStack (join rows).
    axis = None

    def __init__(self, format=None, dtype=None):
        self.format = "csc" if format is None else format
        if dtype is None:
            raise ValueError("The output dtype must be specified.")
        self.dtype = str(np.dtype(dtype))

    def __str__(self):
        return f"{type(self).__name__}({self.format},{self.dtype})"

    def make_node(self, *blocks):
        if not blocks:
            raise ValueError("Cannot join an empty list of sparse matrices.")
        blocks = [_compressed(b, type(self).__name__) for b in blocks]
        fixed = 1 - self.axis
        lengths = {b.type.shape[fixed] for b in blocks if b.type.shape[fixed] is not None}
        if len(lengths) > 1:
            what = "rows" if fixed == 0 else "columns"
            raise ValueError(
                f"All matrices must have the same number of {what}; got {what[:-1]} counts: {lengths}."
            )
        return Apply(self, blocks, [SparseTensorType(dtype=self.dtype, format=self.format)()])

    def perform(self, node, inputs, output_storage):
        join = scipy.sparse.hstack if self.axis == 1 else scipy.sparse.vstack
        out = join(inputs, format=self.format, dtype=self.dtype)
        output_storage[0][0] = out.astype(self.dtype, copy=False)

    def L_op(self, inputs, outputs, output_grads):
        (gz,) = output_grads
        if _is_sparse_variable(gz):
            gz = dense_from_sparse(gz)
        grads, start = [], 0
        for x in inputs:
            stop = start + x.shape[self.axis]
            part = gz[:, start:stop] if self.axis == 1 else gz[start:stop]
            if part.type.dtype != x.type.dtype and x.type.dtype in continuous_dtypes:
                part = _tb.cast(part, x.type.dtype)
            grads.append(SparseFromDense(self.format)(part) if x.type.dtype in continuous_dtypes else None)
            start = stop
        if any(g is None for g in grads):
            from lucent.gradient import grad_undefined

            grads = [
                g if g is not None else grad_undefined(self, k, x, "the input is not continuous")
                for k, (g, x) in enumerate(zip(grads, inputs))
            ]
        return grads

    def infer_shape(self, fgraph, node, input_shapes):
        total = input_shapes[0][self.axis]
        for shape in input_shapes[1:]:
            total = total + shape[self.axis]
        if self.axis == 1:
            return [(input_shapes[0][0], total)]
        return [(total, input_shapes[0][1])]


class HStack(Stack):
    """Sparse matrices side by side (joined along columns)."""

    axis = 1


class VStack(Stack):
    """Sparse matrices one above the other (joined along rows)."""

    axis = 0


def hstack(blocks, format=None, dtype=None):
    """Join sparse matrices column-wise (rows must agree); ``dtype`` defaults to the upcast."""
    blocks = [as_sparse_variable(b) for b in blocks]
    if dtype is None:
        dtype = upcast(*[b.type.dtype for b in blocks])
    return HStack(format=format, dtype=dtype)(*blocks)


def vstack(blocks, format=None, dtype=None):
    """Join sparse matrices row-wise (columns must agree); ``dtype`` defaults to the upcast."""
    blocks = [as_sparse_variable(b) for b in blocks]
    if dtype is None:
        dtype = upcast(*[b.type.dtype for b in blocks])
    return VStack(format=format, dtype=dtype)(*blocks)


__all__ = [
    "ColScaleCSC",
    "RowScaleCSC",
    "col_scale",
    "row_scale",
    "Remove0",
    "remove0",
    "EnsureSortedIndices",
    "ensure_sorted_indices",
    "clean",
    "Diag",
    "diag",
    "square_diagonal",
    "Stack",
    "HStack",
    "VStack",
    "hstack",
    "vstack",
]
