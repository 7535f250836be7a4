"""Native Numba kernels of the sparse ops (``lucent.sparse``): conversions and arithmetic.

A CSR/CSC matrix is the struct of its arrays in compiled code
(``sparse_types.CSMatrixType``), so these kernels loop over ``data``,
``indices`` and ``indptr`` directly. A few helpers here carry most of the
sparse kernels, this module's and those of ``sparse_products`` (the dot
products) and ``sparse_structure`` (indexing, storage clean-up,
comparisons, diagonals, joining):

* the *major* axis of a matrix is its rows (CSR) or columns (CSC); a kernel
  generated for one format knows which at compile time (``is_csr`` is a
  closure constant, so the other branch is compiled away);
* ``_recompress`` gives the arrays of the other compression (CSR arrays of
  a CSC matrix and back): a counting sort in O(nnz + n), which also sorts
  the indices. Ops on two matrices of different formats, or whose natural
  loop is along the other axis, go through it;
* sparse results are built with ``make_csr`` / ``make_csc`` without copies;
* ``_U`` reads a stored position or index as an unsigned integer, which
  spares the hot loops Numba's wrap-around of negative indices.

Every sparse op of CSR/CSC operands has a kernel; BSR matrices have no
Numba form, so a graph holding one runs its nodes through the object-mode
fallback.
"""

from __future__ import annotations

import numpy as np

from lucent.link.numba.dispatch.basic import numba_funcify, numba_njit
from lucent.link.numba.dispatch.sparse_types import make_csc, make_csr
from lucent.sparse import basic as sb
from lucent.sparse import math as sm
from lucent.sparse import products as sp_products
from lucent.sparse import structure as sst
from lucent.sparse import unpacked as su
from lucent.sparse.type import SparseTensorType

VERSION = 2

#: Unsigned index conversion: ``a[_U(i)]`` skips the negative-index wrap-around.
_U = np.uint64


#: Kernels already built in this process, by op and the coarse types of the node.
_KERNELS = {}


def _type_key(type_):
    return (type(type_).__name__, getattr(type_, "dtype", None), getattr(type_, "ndim", None),
            getattr(type_, "format", None))


def _register(op_class):
    """``numba_funcify.register(op_class)`` for a factory whose kernel depends only on the op
    and the dtypes / ranks / formats of the node: the kernel is built once per process, so
    every function using it shares one compiled dispatcher."""

    def decorator(factory):
        def memoized(op, node, **kwargs):
            key = (op, tuple(_type_key(v.type) for v in node.inputs),
                   tuple(_type_key(v.type) for v in node.outputs))
            kernel = _KERNELS.get(key)
            if kernel is None:
                kernel = _KERNELS[key] = factory(op, node, **kwargs)
            return kernel

        memoized.__name__ = factory.__name__
        memoized.__doc__ = factory.__doc__
        numba_funcify.register(op_class, version=VERSION)(memoized)
        return factory

    return decorator


def _scalar_type(dtype):
    return np.dtype(dtype).type


def _is_sparse(var):
    return isinstance(var.type, SparseTensorType)


def _fmt(var):
    return var.type.format


# --------------------------------------------------------------------------- #
# Shared helpers (jitted once, inlined into the kernels)
# --------------------------------------------------------------------------- #
@numba_njit
def _recompress(data, indices, indptr, n_minor):
    """The arrays of the same matrix compressed along the other axis (sorted indices)."""
    n_major = indptr.shape[0] - 1
    nnz = indptr[n_major]
    counts = np.zeros(n_minor + 1, np.int32)
    for p in range(nnz):
        counts[indices[p] + 1] += 1
    for j in range(n_minor):
        counts[j + 1] += counts[j]
    new_indptr = counts.copy()
    new_indices = np.empty(nnz, np.int32)
    new_data = np.empty(nnz, data.dtype)
    fill = counts[:n_minor].copy()
    for i in range(n_major):
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            q = fill[j]
            new_indices[q] = i
            new_data[q] = data[p]
            fill[j] = q + 1
    return new_data, new_indices, new_indptr


@numba_njit
def _major_minor(shape, is_csr):
    if is_csr:
        return shape[0], shape[1]
    return shape[1], shape[0]


@numba_njit
def _dense_of(data, indices, indptr, n_rows, n_cols, is_csr, out):
    n_major = indptr.shape[0] - 1
    for i in range(n_major):
        for p in range(indptr[i], indptr[i + 1]):
            if is_csr:
                out[i, indices[p]] += data[p]
            else:
                out[indices[p], i] += data[p]
    return out


def _builder(fmt):
    return make_csr if fmt == "csr" else make_csc


def _arrays_in(fmt_in, fmt_out):
    """A jitted ``(data, indices, indptr) -> arrays compressed like fmt_out`` for a ``fmt_in`` matrix."""
    same = fmt_in == fmt_out
    in_csr = fmt_in == "csr"

    @numba_njit
    def arrays(x):
        if same:
            return x.data, x.indices, x.indptr
        n_minor = x.shape[1] if in_csr else x.shape[0]
        return _recompress(x.data, x.indices, x.indptr, n_minor)

    return arrays


@numba_njit
def _compress_dense(dense, is_csr):
    """The nonzero entries of a dense matrix as compressed arrays (rows for CSR, columns for CSC)."""
    n_rows, n_cols = dense.shape[0], dense.shape[1]
    n_major, n_minor = (n_rows, n_cols) if is_csr else (n_cols, n_rows)
    nnz = 0
    for i in range(n_rows):
        for j in range(n_cols):
            if dense[i, j] != 0:
                nnz += 1
    data = np.empty(nnz, dense.dtype)
    indices = np.empty(nnz, np.int32)
    indptr = np.zeros(n_major + 1, np.int32)
    pos = 0
    for a in range(n_major):
        for b in range(n_minor):
            v = dense[a, b] if is_csr else dense[b, a]
            if v != 0:
                data[pos] = v
                indices[pos] = b
                pos += 1
        indptr[a + 1] = pos
    return data, indices, indptr


# --------------------------------------------------------------------------- #
# Taking apart, building, converting
# --------------------------------------------------------------------------- #
@_register(sb.CSMProperties)
def numba_funcify_CSMProperties(op, node, **kwargs):
    """The matrix's own arrays (views) and its shape as an int32 vector."""

    @numba_njit
    def csm_properties(x):
        shape = np.empty(2, np.int32)
        shape[0] = x.shape[0]
        shape[1] = x.shape[1]
        return x.data, x.indices, x.indptr, shape

    return csm_properties


@_register(sb.CSM)
def numba_funcify_CSM(op, node, **kwargs):
    """A matrix viewing ``data``, with copies of ``indices`` and ``indptr`` (as ``CSM.perform``)."""
    build = _builder(op.format)

    @numba_njit
    def csm(data, indices, indptr, shape):
        if shape.shape[0] != 2:
            raise ValueError("CSM: shape must have 2 entries")
        if data.shape[0] != indices.shape[0]:
            raise ValueError("CSM: data must have the same number of elements as indices")
        return build(
            np.ascontiguousarray(data),
            indices.astype(np.int32),
            indptr.astype(np.int32),
            (np.intp(shape[0]), np.intp(shape[1])),
        )

    return csm


@_register(sb.CSMGrad)
@_register(su.CSMGradC)
def numba_funcify_CSMGrad(op, node, **kwargs):
    """Each stored entry of ``x`` gets the (summed) value the gradient stores at its place, or 0."""
    out_t = _scalar_type(node.outputs[0].type.dtype)

    @numba_njit
    def csm_grad(x_data, x_indices, x_indptr, x_shape, g_data, g_indices, g_indptr, g_shape):
        n_major = x_indptr.shape[0] - 1
        n_minor = x_shape[1] if n_major == x_shape[0] else x_shape[0]
        out = np.zeros(x_data.shape[0], out_t)
        row = np.zeros(n_minor, g_data.dtype)
        for i in range(n_major):
            for p in range(g_indptr[i], g_indptr[i + 1]):
                row[g_indices[p]] += g_data[p]
            for p in range(x_indptr[i], x_indptr[i + 1]):
                out[p] = row[x_indices[p]]
            for p in range(g_indptr[i], g_indptr[i + 1]):
                row[g_indices[p]] = 0
        return out

    return csm_grad


@_register(sb.DenseFromSparse)
def numba_funcify_DenseFromSparse(op, node, **kwargs):
    """``x.toarray()`` (duplicate entries summed)."""
    is_csr = _fmt(node.inputs[0]) == "csr"
    out_t = _scalar_type(node.outputs[0].type.dtype)

    @numba_njit
    def dense_from_sparse(x):
        out = np.zeros((x.shape[0], x.shape[1]), out_t)
        return _dense_of(x.data, x.indices, x.indptr, x.shape[0], x.shape[1], is_csr, out)

    return dense_from_sparse


@_register(sb.SparseFromDense)
def numba_funcify_SparseFromDense(op, node, **kwargs):
    """The nonzero entries of a dense matrix, in CSR or CSC order."""
    if op.format not in ("csr", "csc"):
        raise NotImplementedError(f"no Numba kernel for {op.format} matrices")
    is_csr = op.format == "csr"
    build = _builder(op.format)

    @numba_njit
    def sparse_from_dense(x):
        data, indices, indptr = _compress_dense(x, is_csr)
        n_rows, n_cols = x.shape[0], x.shape[1]
        return build(data, indices, indptr, (np.intp(n_rows), np.intp(n_cols)))

    return sparse_from_dense


@_register(sb.Transpose)
def numba_funcify_Transpose(op, node, **kwargs):
    """The same arrays read in the other format (a view, as ``Transpose.perform``)."""
    build = _builder(_fmt(node.outputs[0]))

    @numba_njit
    def transpose(x):
        return build(x.data, x.indices, x.indptr, (x.shape[1], x.shape[0]))

    return transpose


@_register(sb.Cast)
def numba_funcify_Cast(op, node, **kwargs):
    """The values cast to the output dtype; indices and indptr copied."""
    build = _builder(_fmt(node.outputs[0]))
    out_t = _scalar_type(node.outputs[0].type.dtype)

    @numba_njit
    def cast(x):
        return build(x.data.astype(out_t), x.indices.copy(), x.indptr.copy(), x.shape)

    return cast


# --------------------------------------------------------------------------- #
# Sums and element-wise arithmetic
# --------------------------------------------------------------------------- #
@_register(sm.SpSum)
def numba_funcify_SpSum(op, node, **kwargs):
    """The sum of all stored values, or per row / column, as a dense tensor."""
    is_csr = _fmt(node.inputs[0]) == "csr"
    out_t = _scalar_type(node.outputs[0].type.dtype)
    axis = op.axis

    if axis is None:

        @numba_njit
        def sp_sum(x):
            out = np.zeros((), out_t)
            total = out_t(0)
            for p in range(x.indptr[x.indptr.shape[0] - 1]):
                total += x.data[p]
            out[()] = total
            return out

        return sp_sum
    # Summing along the major axis adds within each compressed row/column.
    along_major = (axis == 1) == is_csr

    @numba_njit
    def sp_sum_axis(x):
        n_out = x.shape[1 - axis]
        out = np.zeros(n_out, out_t)
        n_major = x.indptr.shape[0] - 1
        for i in range(n_major):
            for p in range(x.indptr[i], x.indptr[i + 1]):
                if along_major:
                    out[i] += x.data[p]
                else:
                    out[x.indices[p]] += x.data[p]
        return out

    return sp_sum_axis


def _pattern_value_kernel(node, combine, y_kind):
    """A kernel keeping ``x``'s pattern: ``data[p] = combine(x.data[p], y at p)``.

    ``y_kind``: ``"scalar"`` (0-d), ``"matrix"`` (dense, same shape),
    ``"row"`` (a vector indexed by column).
    """
    x_var = node.inputs[0]
    is_csr = _fmt(x_var) == "csr"
    build = _builder(_fmt(node.outputs[0]))
    out_t = _scalar_type(node.outputs[0].type.dtype)
    name = type(node.op).__name__

    @numba_njit
    def kernel(x, y):
        if y_kind == "matrix":
            if y.shape[0] != x.shape[0] or y.shape[1] != x.shape[1]:
                raise ValueError(name + ": the operands' shapes differ")
        elif y_kind == "row":
            if y.shape[0] != x.shape[1]:
                raise ValueError(name + ": the vector's length differs from the number of columns")
        nnz = x.indptr[x.indptr.shape[0] - 1]
        data = np.empty(nnz, out_t)
        n_major = x.indptr.shape[0] - 1
        for i in range(n_major):
            for p in range(x.indptr[i], x.indptr[i + 1]):
                j = x.indices[p]
                if y_kind == "scalar":
                    other = y[()]
                elif y_kind == "row":
                    other = y[j] if is_csr else y[i]
                else:
                    other = y[i, j] if is_csr else y[j, i]
                data[p] = combine(x.data[p], other)
        return build(data, x.indices.copy(), x.indptr.copy(), x.shape)

    return kernel


@numba_njit
def _times(a, b):
    return a * b


@numba_njit
def _plus(a, b):
    return a + b


@_register(sm.MultiplySparseDense)
def numba_funcify_MultiplySparseDense(op, node, **kwargs):
    """``x * y`` on ``x``'s stored entries, for a dense matrix or 0-d ``y``."""
    kind = "scalar" if node.inputs[1].type.ndim == 0 else "matrix"
    return _pattern_value_kernel(node, _times, kind)


@_register(sp_products.SparseDenseVectorMultiply)
def numba_funcify_SparseDenseVectorMultiply(op, node, **kwargs):
    """``x * y`` for a row vector ``y``, on ``x``'s stored entries."""
    return _pattern_value_kernel(node, _times, "row")


@_register(sp_products.StructuredAddSV)
def numba_funcify_StructuredAddSV(op, node, **kwargs):
    """``x + y`` for a row vector ``y``, on ``x``'s stored entries."""
    return _pattern_value_kernel(node, _plus, "row")


@_register(sst.ColScaleCSC)
def numba_funcify_ColScaleCSC(op, node, **kwargs):
    """Column ``j`` of a CSC matrix times ``s[j]``."""
    build = make_csc
    out_t = _scalar_type(node.outputs[0].type.dtype)

    @numba_njit
    def col_scale(x, s):
        if s.shape[0] != x.shape[1]:
            raise ValueError("ColScaleCSC: the scale's length differs from the number of columns")
        data = np.empty(x.data.shape[0], out_t)
        for j in range(x.indptr.shape[0] - 1):
            for p in range(x.indptr[j], x.indptr[j + 1]):
                data[p] = x.data[p] * s[j]
        return build(data, x.indices.copy(), x.indptr.copy(), x.shape)

    return col_scale


@_register(sst.RowScaleCSC)
def numba_funcify_RowScaleCSC(op, node, **kwargs):
    """Row ``i`` of a CSC matrix times ``s[i]``."""
    build = make_csc
    out_t = _scalar_type(node.outputs[0].type.dtype)

    @numba_njit
    def row_scale(x, s):
        if s.shape[0] != x.shape[0]:
            raise ValueError("RowScaleCSC: the scale's length differs from the number of rows")
        data = np.empty(x.data.shape[0], out_t)
        for p in range(x.data.shape[0]):
            data[p] = x.data[p] * s[x.indices[p]]
        return build(data, x.indices.copy(), x.indptr.copy(), x.shape)

    return row_scale


@_register(sp_products.AddSSData)
def numba_funcify_AddSSData(op, node, **kwargs):
    """``x.data + y.data`` with ``x``'s pattern."""
    build = _builder(_fmt(node.outputs[0]))

    @numba_njit
    def add_s_s_data(x, y):
        if x.shape[0] != y.shape[0] or x.shape[1] != y.shape[1] or x.data.shape[0] != y.data.shape[0]:
            raise ValueError("AddSSData: the operands must have one shape and pattern")
        return build(x.data + y.data, x.indices.copy(), x.indptr.copy(), x.shape)

    return add_s_s_data


@_register(sm.AddSparseDense)
def numba_funcify_AddSparseDense(op, node, **kwargs):
    """``y + x`` as a dense matrix."""
    is_csr = _fmt(node.inputs[0]) == "csr"
    out_t = _scalar_type(node.outputs[0].type.dtype)

    @numba_njit
    def add_s_d(x, y):
        if y.shape[0] != x.shape[0] or y.shape[1] != x.shape[1]:
            raise ValueError("AddSparseDense: the operands' shapes differ")
        out = y.astype(out_t)
        return _dense_of(x.data, x.indices, x.indptr, x.shape[0], x.shape[1], is_csr, out)

    return add_s_d


def _sparse_sparse(node, add):
    """``x + y`` or ``x * y`` of two sparse matrices, in ``x``'s format (one accumulator row)."""
    fmt = _fmt(node.outputs[0])
    x_arrays = _arrays_in(_fmt(node.inputs[0]), fmt)
    y_arrays = _arrays_in(_fmt(node.inputs[1]), fmt)
    build = _builder(fmt)
    out_t = _scalar_type(node.outputs[0].type.dtype)
    is_csr = fmt == "csr"
    name = type(node.op).__name__

    @numba_njit
    def kernel(x, y):
        if x.shape[0] != y.shape[0] or x.shape[1] != y.shape[1]:
            raise ValueError(name + ": the operands' shapes differ")
        xd, xi, xp = x_arrays(x)
        yd, yi, yp = y_arrays(y)
        n_major, n_minor = _major_minor(x.shape, is_csr)
        acc = np.zeros(n_minor, out_t)
        seen = np.zeros(n_minor, np.int8)
        cap = xp[n_major] + yp[n_major] if add else min(xp[n_major], yp[n_major])
        data = np.empty(cap, out_t)
        indices = np.empty(cap, np.int32)
        indptr = np.zeros(n_major + 1, np.int32)
        pos = 0
        for i in range(n_major):
            for p in range(xp[i], xp[i + 1]):
                j = xi[p]
                acc[j] += xd[p]
                seen[j] = 1
            if add:
                for p in range(yp[i], yp[i + 1]):
                    j = yi[p]
                    acc[j] += yd[p]
                    seen[j] = 1
                for p in range(xp[i], xp[i + 1]):
                    j = xi[p]
                    if seen[j]:
                        seen[j] = 0
                        if acc[j] != 0:
                            data[pos] = acc[j]
                            indices[pos] = j
                            pos += 1
                        acc[j] = 0
                for p in range(yp[i], yp[i + 1]):
                    j = yi[p]
                    if seen[j]:
                        seen[j] = 0
                        if acc[j] != 0:
                            data[pos] = acc[j]
                            indices[pos] = j
                            pos += 1
                        acc[j] = 0
            else:
                for p in range(yp[i], yp[i + 1]):
                    j = yi[p]
                    if seen[j] == 1:
                        seen[j] = 2
                        other = out_t(0)
                        for q in range(yp[i], yp[i + 1]):
                            if yi[q] == j:
                                other += yd[q]
                        v = acc[j] * other
                        if v != 0:
                            data[pos] = v
                            indices[pos] = j
                            pos += 1
                for p in range(xp[i], xp[i + 1]):
                    j = xi[p]
                    seen[j] = 0
                    acc[j] = 0
            indptr[i + 1] = pos
        return build(data[:pos].copy(), indices[:pos].copy(), indptr, x.shape)

    return kernel


@_register(sm.AddSparseSparse)
def numba_funcify_AddSparseSparse(op, node, **kwargs):
    """``x + y`` of two sparse matrices (zeros of the sum are not stored, as in SciPy)."""
    return _sparse_sparse(node, True)


@_register(sm.MultiplySparseSparse)
def numba_funcify_MultiplySparseSparse(op, node, **kwargs):
    """Element-wise ``x * y`` of two sparse matrices."""
    return _sparse_sparse(node, False)


# The kernels of the products and of the indexing / structure ops live in
# their own modules, registered when this one is imported.
from lucent.link.numba.dispatch import sparse_products, sparse_structure  # noqa: E402,F401

__all__ = ["VERSION"]
