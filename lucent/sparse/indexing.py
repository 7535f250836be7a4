"""Indexing sparse matrices: ``x[a:b, c:d]``, ``x[i, j]``, ``x[rows]``, ``x[rows, cols]``.

There are no sparse vectors, so indexing follows four shapes, chosen by
``SparseVariable.__getitem__``:

* two scalars give one value, a dense 0-d tensor (``GetItemScalar``);
* slices give a sparse matrix (``GetItem2d``); a scalar mixed with a slice
  would give a vector, and is refused;
* a list of rows gives a sparse matrix of those rows (``GetItemList``);
* two lists give the dense vector of the entries ``(rows[k], cols[k])``
  (``GetItem2Lists``).

``ConstructSparseFromList`` goes the other way: it scatters the rows of a
dense matrix into a sparse one, which is the gradient of taking rows.
The names live in ``lucent.sparse.basic``, where PyTensor has them.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse

from lucent.gradient import disconnected_type, grad_undefined
from lucent.graph.basic import Apply, Variable
from lucent.graph.op import Op
from lucent.sparse.basic import _compressed, as_sparse_variable, dense_from_sparse
from lucent.sparse.type import SparseTensorType
from lucent.tensor import basic as _tb
from lucent.tensor.type import discrete_dtypes, integer_dtypes, tensor


def _none():
    """The constant standing for a slice bound left out (``x[:3]``)."""
    from lucent.tensor.shape import NoneConst

    return NoneConst


def _index_scalar(value, what):
    """A slice bound as an integer scalar tensor, or a clear error."""
    value = value if isinstance(value, Variable) else _tb.as_tensor_variable(value)
    if not (value.type.ndim == 0 and value.type.dtype in discrete_dtypes):
        raise ValueError(
            f"Impossible to index into a sparse matrix with slice where {what}={value}: "
            "slice bounds must be integer scalars"
        )
    return value


def _static_length(index, length):
    """The static length a constant slice leaves of a dimension of static ``length``."""
    if length is None or not isinstance(index, slice):
        return None
    parts = (index.start, index.stop, index.step)
    if not all(p is None or isinstance(p, (int, np.integer)) for p in parts):
        return None
    return len(range(*index.indices(length)))


def _as_int(v):
    return None if v is None else int(v)


class GetItem2d(Op):
    """``x[a:b, c:d]`` (or ``x[a:b]``) of a sparse matrix, as a sparse matrix; no gradient."""

    __props__ = ()

    def make_node(self, x, index):
        x = _compressed(x, "GetItem2d")
        if len(index) not in (1, 2):
            raise IndexError(f"a sparse matrix takes 1 or 2 indices, got {len(index)}")
        inputs = [x]
        for ind in index:
            if isinstance(ind, slice):
                step = ind.step
                step = _none() if step is None or (isinstance(step, int) and step == 1) else _index_scalar(step, "step")
                start = _none() if ind.start is None else _index_scalar(ind.start, "start")
                stop = _none() if ind.stop is None else _index_scalar(ind.stop, "stop")
                inputs += [start, stop, step]
            elif np.isscalar(ind) or (isinstance(ind, Variable) and getattr(ind.type, "ndim", -1) == 0):
                raise NotImplementedError(
                    "lucent has no sparse vector. Use X[a:b, c:d], X[a:b, c:c+1] or X[a:b] instead."
                )
            else:
                raise ValueError(
                    f"Advanced indexing is not implemented for sparse matrices. Argument not supported: {ind}"
                )
        if len(index) == 1:
            inputs += [_none(), _none(), _none()]
        shape = [_static_length(ind, dim) for ind, dim in zip(index, x.type.shape)]
        if len(index) == 1:
            shape.append(x.type.shape[1])
        return Apply(self, inputs, [x.type.clone(shape=tuple(shape))()])

    def perform(self, node, inputs, output_storage):
        x, a1, b1, s1, a2, b2, s2 = inputs
        rows = slice(_as_int(a1), _as_int(b1), _as_int(s1))
        cols = slice(_as_int(a2), _as_int(b2), _as_int(s2))
        output_storage[0][0] = x[rows, cols]

    # No infer_shape: the lengths follow from slice bounds that may be None
    # (``NoneConst``) at run time; the shape feature reads the output's.


get_item_2d = GetItem2d()


class GetItemScalar(Op):
    """``x[i, j]`` of a sparse matrix with two integer scalars: a dense 0-d tensor."""

    __props__ = ()

    def make_node(self, x, index):
        x = _compressed(x, "GetItemScalar")
        if len(index) != 2:
            raise IndexError(f"GetItemScalar takes 2 indices, got {len(index)}")
        inputs = [x]
        for ind in index:
            if isinstance(ind, slice):
                raise TypeError("GetItemScalar called with a slice as index; use GetItem2d")
            ind = ind if isinstance(ind, Variable) else _tb.as_tensor_variable(ind)
            if ind.type.ndim != 0 or ind.type.dtype not in discrete_dtypes:
                raise NotImplementedError(f"GetItemScalar needs integer scalars, got {ind} of type {ind.type}")
            inputs.append(ind)
        return Apply(self, inputs, [tensor(dtype=x.type.dtype, shape=())])

    def perform(self, node, inputs, output_storage):
        x, i, j = inputs
        output_storage[0][0] = np.asarray(x[int(i), int(j)], dtype=x.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [()]


get_item_scalar = GetItemScalar()


def _int_vector(index, what):
    ind = _tb.as_tensor_variable(index)
    if ind.type.ndim != 1 or ind.type.dtype not in integer_dtypes:
        raise TypeError(f"{what} must be a vector of integers, got {ind} of type {ind.type}")
    return ind


class GetItemList(Op):
    """``x[rows]``: the listed rows of a sparse matrix, as a sparse matrix."""

    __props__ = ()

    def make_node(self, x, index):
        x = _compressed(x, "GetItemList")
        ind = _int_vector(index, "GetItemList: the row index")
        return Apply(self, [x, ind], [x.type.clone(shape=(ind.type.shape[0], x.type.shape[1]))()])

    def perform(self, node, inputs, output_storage):
        x, rows = inputs
        output_storage[0][0] = x[rows]

    def L_op(self, inputs, outputs, output_grads):
        x, rows = inputs
        return [
            get_item_list_grad(x, rows, output_grads[0]),
            grad_undefined(self, 1, rows, "No gradient for this input"),
        ]

    def infer_shape(self, fgraph, node, input_shapes):
        return [(input_shapes[1][0], input_shapes[0][1])]


get_item_list = GetItemList()


class GetItemListGrad(Op):
    """The gradient of ``x[rows]`` wrt ``x``: the rows of ``gz`` written at ``rows``."""

    __props__ = ()

    def make_node(self, x, index, gz):
        x = _compressed(x, "GetItemListGrad")
        gz = _compressed(gz, "GetItemListGrad")
        ind = _int_vector(index, "GetItemListGrad: the row index")
        return Apply(self, [x, ind, gz], [x.type()])

    def perform(self, node, inputs, output_storage):
        x, rows, gz = inputs
        out = scipy.sparse.lil_matrix(x.shape, dtype=node.outputs[0].type.dtype)
        for k, row in enumerate(rows):
            out[row] = gz[k]
        output_storage[0][0] = out.asformat(x.format)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


get_item_list_grad = GetItemListGrad()


class GetItem2Lists(Op):
    """``x[rows, cols]``: the dense vector of the entries ``(rows[k], cols[k])``."""

    __props__ = ()

    def make_node(self, x, ind1, ind2):
        x = _compressed(x, "GetItem2Lists")
        ind1 = _int_vector(ind1, "GetItem2Lists: the row index")
        ind2 = _int_vector(ind2, "GetItem2Lists: the column index")
        return Apply(self, [x, ind1, ind2], [tensor(dtype=x.type.dtype, shape=(None,))])

    def perform(self, node, inputs, output_storage):
        x, rows, cols = inputs
        output_storage[0][0] = np.asarray(x[rows, cols], dtype=x.dtype).reshape(-1)

    def L_op(self, inputs, outputs, output_grads):
        x, rows, cols = inputs
        return [
            get_item_2lists_grad(x, rows, cols, output_grads[0]),
            grad_undefined(self, 1, rows, "No gradient for this input"),
            grad_undefined(self, 2, cols, "No gradient for this input"),
        ]

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[1]]


get_item_2lists = GetItem2Lists()


class GetItem2ListsGrad(Op):
    """The gradient of ``x[rows, cols]`` wrt ``x``: ``gz[k]`` written at ``(rows[k], cols[k])``."""

    __props__ = ()

    def make_node(self, x, ind1, ind2, gz):
        x = _compressed(x, "GetItem2ListsGrad")
        ind1 = _int_vector(ind1, "GetItem2ListsGrad: the row index")
        ind2 = _int_vector(ind2, "GetItem2ListsGrad: the column index")
        gz = _tb.as_tensor_variable(gz)
        return Apply(self, [x, ind1, ind2, gz], [x.type()])

    def perform(self, node, inputs, output_storage):
        x, rows, cols, gz = inputs
        out = scipy.sparse.lil_matrix(x.shape, dtype=node.outputs[0].type.dtype)
        for r, c, g in zip(rows, cols, gz):
            out[r, c] = g
        output_storage[0][0] = out.asformat(x.format)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


get_item_2lists_grad = GetItem2ListsGrad()


class ConstructSparseFromList(Op):
    """A CSC matrix shaped like the dense ``x`` whose row ``ilist[k]`` is ``values[k]``.

    Only ``x``'s shape is kept in the graph (not ``x`` itself), so the
    dense matrix can be freed early. Rows listed twice are summed.
    """

    __props__ = ()

    def make_node(self, x, values, ilist):
        x = _tb.as_tensor_variable(x)
        values = _tb.as_tensor_variable(values)
        ilist = _tb.as_tensor_variable(ilist)
        if ilist.type.dtype not in integer_dtypes:
            raise TypeError("index must be integers")
        if ilist.type.ndim != 1:
            raise TypeError("index must be vector")
        if x.type.ndim != 2:
            raise TypeError(f"cannot create a sparse matrix with {x.type.ndim} dimensions")
        if values.type.ndim != 2:
            raise TypeError(f"cannot create a sparse matrix from values with {values.type.ndim} ndim")
        out = SparseTensorType("csc", x.type.dtype)()
        return Apply(self, [x.shape, values, ilist], [out])

    def perform(self, node, inputs, output_storage):
        shape, values, ilist = inputs
        rows, cols = values.shape
        if rows != len(ilist):
            raise ValueError(f"ConstructSparseFromList: {rows} rows of values for {len(ilist)} indices")
        n_rows = int(shape[0])
        if len(ilist) and (ilist.min() < -n_rows or ilist.max() >= n_rows):
            raise IndexError(
                f"ConstructSparseFromList: an index is out of bounds for {n_rows} rows: {ilist}"
            )
        # Negative indices count from the end, as in the indexing this op is the gradient of.
        ilist = np.where(ilist < 0, ilist + n_rows, ilist)
        indptr = np.arange(cols + 1) * rows
        indices = np.tile(ilist, cols)
        data = values.T.reshape(-1)
        output_storage[0][0] = scipy.sparse.csc_matrix(
            (data, indices, indptr), shape=tuple(int(s) for s in shape), dtype=node.outputs[0].type.dtype
        )

    def connection_pattern(self, node):
        return [[False], [True], [False]]

    def L_op(self, inputs, outputs, output_grads):
        _, _, ilist = inputs
        g_values = dense_from_sparse(output_grads[0])[ilist]
        return [disconnected_type(), g_values, disconnected_type()]

    def infer_shape(self, fgraph, node, input_shapes):
        shape = node.inputs[0]
        return [(shape[0], shape[1])]


construct_sparse_from_list = ConstructSparseFromList()


def getitem(x, args):
    """``x[args]`` for a sparse matrix ``x`` (see module docstring for the four cases)."""
    from lucent.tensor.type import iscalar

    x = as_sparse_variable(x)
    if not isinstance(args, tuple):
        args = (args,)

    def is_scalar(a):
        return np.isscalar(a) or getattr(a, "type", None) == iscalar().type

    if len(args) == 2:
        if is_scalar(args[0]) and is_scalar(args[1]):
            return get_item_scalar(x, args)
        if isinstance(args[0], list):
            return get_item_2lists(x, args[0], args[1])
        return get_item_2d(x, args)
    if isinstance(args[0], list):
        return get_item_list(x, args[0])
    return get_item_2d(x, args)


__all__ = [
    "GetItem2d",
    "get_item_2d",
    "GetItemScalar",
    "get_item_scalar",
    "GetItemList",
    "get_item_list",
    "GetItemListGrad",
    "get_item_list_grad",
    "GetItem2Lists",
    "get_item_2lists",
    "GetItem2ListsGrad",
    "get_item_2lists_grad",
    "ConstructSparseFromList",
    "construct_sparse_from_list",
]
