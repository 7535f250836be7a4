"""Native Numba kernels of the sparse ops (``lucent.sparse``).

A CSR/CSC matrix is the struct of its arrays in compiled code
(``sparse_types.CSMatrixType``), so these kernels loop over ``data``,
``indices`` and ``indptr`` directly. A few helpers carry most of them:

* the *major* axis of a matrix is its rows (CSR) or columns (CSC); a kernel
  generated for one format knows which at compile time (``is_csr`` is a
  closure constant, so the other branch is compiled away);
* ``_recompress`` gives the arrays of the other compression (CSR arrays of
  a CSC matrix and back): a counting sort in O(nnz + n), which also sorts
  the indices. Ops on two matrices of different formats, or whose natural
  loop is along the other axis, go through it;
* sparse results are built with ``make_csr`` / ``make_csc`` without copies.

Sparse x dense products (``StructuredDot``, ``Dot``, ``sd_csr``/``sd_csc``,
``Usmm``) stream each stored entry once against a contiguous row of the
dense operand, which is the loop SciPy runs, compiled.

Ops without a kernel here (indexing, ``Diag``, ``EnsureSortedIndices``,
``Remove0``, the comparisons, ``ConstructSparseFromList``, ``UsmmCscDense``,
``SparseBlockDiagonal``, BSR operands...) run their ``perform`` through the
object-mode fallback, with a warning.
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

VERSION = 1


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


# --------------------------------------------------------------------------- #
# Products
# --------------------------------------------------------------------------- #
@numba_njit
def _csr_times_dense(data, indices, indptr, n_rows, b, out):
    """``out += A @ b`` for CSR arrays of ``A`` (rows of ``b`` streamed contiguously)."""
    k = b.shape[1]
    for i in range(n_rows):
        orow = out[i]
        for p in range(indptr[i], indptr[i + 1]):
            v = data[p]
            brow = b[indices[p]]
            for c in range(k):
                orow[c] += v * brow[c]
    return out


@numba_njit
def _csc_times_dense(data, indices, indptr, n_cols, b, out):
    """``out += A @ b`` for CSC arrays of ``A``."""
    k = b.shape[1]
    for j in range(n_cols):
        brow = b[j]
        for p in range(indptr[j], indptr[j + 1]):
            v = data[p]
            orow = out[indices[p]]
            for c in range(k):
                orow[c] += v * brow[c]
    return out


@numba_njit
def _dense_times_csr(a, data, indices, indptr, n_rows_b, out):
    """``out += a @ B`` for a dense ``a`` and CSR arrays of ``B``."""
    for r in range(a.shape[0]):
        for i in range(n_rows_b):
            av = a[r, i]
            if av == 0:
                continue
            for p in range(indptr[i], indptr[i + 1]):
                out[r, indices[p]] += av * data[p]
    return out


@numba_njit
def _dense_times_csc(a, data, indices, indptr, n_cols_b, out):
    """``out += a @ B`` for a dense ``a`` and CSC arrays of ``B``."""
    for r in range(a.shape[0]):
        for j in range(n_cols_b):
            acc = out[r, j]
            for p in range(indptr[j], indptr[j + 1]):
                acc += a[r, indices[p]] * data[p]
            out[r, j] = acc
    return out


def _sparse_dense_matrix_kernel(fmt, out_t, name):
    is_csr = fmt == "csr"

    @numba_njit
    def sparse_dense(x, b):
        if x.shape[1] != b.shape[0]:
            raise ValueError(name + ": the operands' shapes do not align")
        out = np.zeros((x.shape[0], b.shape[1]), out_t)
        if is_csr:
            return _csr_times_dense(x.data, x.indices, x.indptr, x.shape[0], b, out)
        return _csc_times_dense(x.data, x.indices, x.indptr, x.shape[1], b, out)

    return sparse_dense


def _dense_sparse_matrix_kernel(fmt, out_t, name):
    is_csr = fmt == "csr"

    @numba_njit
    def dense_sparse(a, y):
        if a.shape[1] != y.shape[0]:
            raise ValueError(name + ": the operands' shapes do not align")
        out = np.zeros((a.shape[0], y.shape[1]), out_t)
        if is_csr:
            return _dense_times_csr(a, y.data, y.indices, y.indptr, y.shape[0], out)
        return _dense_times_csc(a, y.data, y.indices, y.indptr, y.shape[1], out)

    return dense_sparse


def _sparse_sparse_dense_kernel(fmt_x, fmt_y, out_t, name):
    """``x @ y`` of two sparse matrices as a dense matrix (``y`` taken as CSR arrays)."""
    x_csr = _arrays_in(fmt_x, "csr")
    y_csr = _arrays_in(fmt_y, "csr")

    @numba_njit
    def sparse_sparse(x, y):
        if x.shape[1] != y.shape[0]:
            raise ValueError(name + ": the operands' shapes do not align")
        xd, xi, xp = x_csr(x)
        yd, yi, yp = y_csr(y)
        out = np.zeros((x.shape[0], y.shape[1]), out_t)
        for i in range(x.shape[0]):
            for p in range(xp[i], xp[i + 1]):
                k = xi[p]
                v = xd[p]
                for q in range(yp[k], yp[k + 1]):
                    out[i, yi[q]] += v * yd[q]
        return out

    return sparse_sparse


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


def _sparse_sparse_sparse_kernel(fmt_x, fmt_y, fmt_out, out_t, name):
    """``x @ y`` of two sparse matrices as a sparse matrix of ``fmt_out`` (row accumulator)."""
    x_csr = _arrays_in(fmt_x, "csr")
    y_csr = _arrays_in(fmt_y, "csr")
    build = _builder(fmt_out)
    to_csc = fmt_out == "csc"

    @numba_njit
    def product(x, y):
        if x.shape[1] != y.shape[0]:
            raise ValueError(name + ": the operands' shapes do not align")
        xd, xi, xp = x_csr(x)
        yd, yi, yp = y_csr(y)
        n_rows, n_cols = x.shape[0], y.shape[1]
        acc = np.zeros(n_cols, out_t)
        seen = np.zeros(n_cols, np.bool_)
        touched = np.empty(n_cols, np.int32)
        data = np.empty(16, out_t)
        indices = np.empty(16, np.int32)
        indptr = np.zeros(n_rows + 1, np.int32)
        pos = 0
        for i in range(n_rows):
            count = 0
            for p in range(xp[i], xp[i + 1]):
                k, v = xi[p], xd[p]
                for q in range(yp[k], yp[k + 1]):
                    j = yi[q]
                    if not seen[j]:
                        seen[j] = True
                        touched[count] = j
                        count += 1
                    acc[j] += v * yd[q]
            if pos + count > data.shape[0]:
                grow = max(2 * data.shape[0], pos + count)
                new_data = np.empty(grow, out_t)
                new_data[:pos] = data[:pos]
                new_indices = np.empty(grow, np.int32)
                new_indices[:pos] = indices[:pos]
                data, indices = new_data, new_indices
            row = np.sort(touched[:count])
            for t in range(count):
                j = row[t]
                data[pos] = acc[j]
                indices[pos] = j
                pos += 1
                acc[j] = 0
                seen[j] = False
            indptr[i + 1] = pos
        data, indices = data[:pos].copy(), indices[:pos].copy()
        if to_csc:
            data, indices, indptr = _recompress(data, indices, indptr, n_cols)
        return build(data, indices, indptr, (n_rows, n_cols))

    return product


@_register(sm.StructuredDot)
def numba_funcify_StructuredDot(op, node, **kwargs):
    """``a @ b`` for a sparse ``a``: dense for a dense ``b``, sparse (``a``'s format) for a sparse one."""
    a, b = node.inputs
    out_t = _scalar_type(node.outputs[0].type.dtype)
    if a.type.format not in ("csr", "csc") or (_is_sparse(b) and b.type.format not in ("csr", "csc")):
        raise NotImplementedError("no Numba kernel for BSR operands")
    if _is_sparse(b):
        return _sparse_sparse_sparse_kernel(a.type.format, b.type.format, _fmt(node.outputs[0]), out_t,
                                            "StructuredDot")
    return _sparse_dense_matrix_kernel(a.type.format, out_t, "StructuredDot")


@_register(sp_products.TrueDot)
def numba_funcify_TrueDot(op, node, **kwargs):
    """``x @ y`` with a sparse result in ``x``'s format (its zeros are not stored)."""
    x, y = node.inputs
    out_t = _scalar_type(node.outputs[0].type.dtype)
    fmt = _fmt(node.outputs[0])
    if _is_sparse(y):
        return _sparse_sparse_sparse_kernel(x.type.format, y.type.format, fmt, out_t, "TrueDot")
    dense = _sparse_dense_matrix_kernel(x.type.format, out_t, "TrueDot")
    build = _builder(fmt)
    is_csr = fmt == "csr"

    @numba_njit
    def true_dot(x, y):
        product = dense(x, y)
        data, indices, indptr = _compress_dense(product, is_csr)
        return build(data, indices, indptr, (product.shape[0], product.shape[1]))

    return true_dot


@_register(sm.Dot)
def numba_funcify_Dot(op, node, **kwargs):
    """``x @ y`` with a dense result: sparse @ dense, dense @ sparse, sparse @ sparse, vectors too."""
    x, y = node.inputs
    out_t = _scalar_type(node.outputs[0].type.dtype)
    if _is_sparse(x) and _is_sparse(y):
        return _sparse_sparse_dense_kernel(x.type.format, y.type.format, out_t, "SparseDot")
    if _is_sparse(x):
        inner = _sparse_dense_matrix_kernel(x.type.format, out_t, "SparseDot")
        if y.type.ndim == 2:
            return inner

        @numba_njit
        def sparse_vector(x, v):
            return inner(x, v.reshape((v.shape[0], 1)))[:, 0].copy()

        return sparse_vector
    inner = _dense_sparse_matrix_kernel(y.type.format, out_t, "SparseDot")
    if x.type.ndim == 2:
        return inner

    @numba_njit
    def vector_sparse(v, y):
        return inner(v.reshape((1, v.shape[0])), y)[0].copy()

    return vector_sparse


@_register(su.StructuredDotCSR)
def numba_funcify_StructuredDotCSR(op, node, **kwargs):
    """``a @ b`` for a CSR ``a`` given by its arrays."""
    out_t = _scalar_type(node.outputs[0].type.dtype)

    @numba_njit
    def sd_csr(a_val, a_ind, a_ptr, b):
        n_rows = a_ptr.shape[0] - 1
        out = np.zeros((n_rows, b.shape[1]), out_t)
        for p in range(a_ind.shape[0]):
            if a_ind[p] >= b.shape[0]:
                raise ValueError("StructuredDotCSR: a column index exceeds b's rows")
        return _csr_times_dense(a_val, a_ind, a_ptr, n_rows, b, out)

    return sd_csr


@_register(su.StructuredDotCSC)
def numba_funcify_StructuredDotCSC(op, node, **kwargs):
    """``a @ b`` for a CSC ``a`` given by its arrays and its number of rows."""
    out_t = _scalar_type(node.outputs[0].type.dtype)

    @numba_njit
    def sd_csc(a_val, a_ind, a_ptr, a_nrows, b):
        n_cols = a_ptr.shape[0] - 1
        if n_cols != b.shape[0]:
            raise ValueError("StructuredDotCSC: a's columns differ from b's rows")
        out = np.zeros((np.intp(a_nrows[()]), b.shape[1]), out_t)
        return _csc_times_dense(a_val, a_ind, a_ptr, n_cols, b, out)

    return sd_csc


@_register(sm._StructuredDotGrad)
def numba_funcify_StructuredDotGrad(op, node, **kwargs):
    """``g[i] . b[j]`` for each stored entry ``(i, j)`` of ``a`` (dense ``b`` and ``g``)."""
    is_csr = op.format == "csr"
    if _is_sparse(node.inputs[2]) or _is_sparse(node.inputs[3]):
        raise NotImplementedError("the structured dot gradient with sparse operands has no Numba kernel")
    out_t = _scalar_type(node.outputs[0].type.dtype)

    @numba_njit
    def sdg(indices, indptr, b, g):
        out = np.empty(indices.shape[0], out_t)
        k = b.shape[1]
        for i in range(indptr.shape[0] - 1):
            for p in range(indptr[i], indptr[i + 1]):
                r, c = (i, indices[p]) if is_csr else (indices[p], i)
                acc = out_t(0)
                for t in range(k):
                    acc += g[r, t] * b[c, t]
                out[p] = acc
        return out

    return sdg


def _sampler(out_t):
    """A jitted ``data[p] = p_data[p] * (x[r] . y[c])`` over the pattern's stored entries."""

    @numba_njit
    def sampled_values(x, y, p_data, p_ind, p_ptr, is_csr, data):
        k = x.shape[1]
        for i in range(p_ptr.shape[0] - 1):
            for p in range(p_ptr[i], p_ptr[i + 1]):
                r, c = (i, p_ind[p]) if is_csr else (p_ind[p], i)
                acc = out_t(0)
                for t in range(k):
                    acc += x[r, t] * y[c, t]
                data[p] = p_data[p] * acc
        return data

    return sampled_values


@_register(sp_products.SamplingDot)
def numba_funcify_SamplingDot(op, node, **kwargs):
    """``p * (x @ y.T)`` at ``p``'s stored entries only."""
    fmt = _fmt(node.inputs[2])
    is_csr = fmt == "csr"
    build = _builder(fmt)
    out_t = _scalar_type(node.outputs[0].type.dtype)
    sampled_values = _sampler(out_t)

    @numba_njit
    def sampling_dot(x, y, p):
        if x.shape[1] != y.shape[1] or p.shape[0] != x.shape[0] or p.shape[1] != y.shape[0]:
            raise ValueError("SamplingDot: x (m x k), y (n x k) and p (m x n) do not fit")
        data = np.empty(p.data.shape[0], out_t)
        sampled_values(x, y, p.data, p.indices, p.indptr, is_csr, data)
        return build(data, p.indices.copy(), p.indptr.copy(), p.shape)

    return sampling_dot


@_register(su.SamplingDotCSR)
def numba_funcify_SamplingDotCSR(op, node, **kwargs):
    """``SamplingDot`` on a CSR pattern's arrays: the result's data, indices, indptr."""
    out_t = _scalar_type(node.outputs[0].type.dtype)
    sampled_values = _sampler(out_t)

    @numba_njit
    def sampling_dot_csr(x, y, p_data, p_ind, p_ptr, p_ncols):
        if x.shape[1] != y.shape[1]:
            raise ValueError("SamplingDotCSR: x and y need the same number of columns")
        data = np.empty(p_data.shape[0], out_t)
        sampled_values(x, y, p_data, p_ind, p_ptr, True, data)
        return data, p_ind.astype(np.int32), p_ptr.astype(np.int32)

    return sampling_dot_csr


@_register(sp_products.Usmm)
def numba_funcify_Usmm(op, node, **kwargs):
    """``alpha * (x @ y) + z`` with one sparse operand."""
    _, x, y, _ = node.inputs
    out_t = _scalar_type(node.outputs[0].type.dtype)
    if _is_sparse(x) and _is_sparse(y):
        product = _sparse_sparse_dense_kernel(x.type.format, y.type.format, out_t, "Usmm")
    elif _is_sparse(x):
        product = _sparse_dense_matrix_kernel(x.type.format, out_t, "Usmm")
    else:
        product = _dense_sparse_matrix_kernel(y.type.format, out_t, "Usmm")

    @numba_njit
    def usmm(alpha, x, y, z):
        prod = product(x, y)
        if z.shape[0] != prod.shape[0] or z.shape[1] != prod.shape[1]:
            raise ValueError("Usmm: z's shape differs from the product's")
        a = out_t(alpha.ravel()[0])
        out = np.empty(prod.shape, out_t)
        for i in range(prod.shape[0]):
            for j in range(prod.shape[1]):
                out[i, j] = a * prod[i, j] + z[i, j]
        return out

    return usmm


def _data_kernel(node, combine, matrix):
    """Kernels of the unpacked ``MulSDCSx`` / ``MulSVCSR`` / ``StructuredAddSVCSR`` ops."""
    is_csr = getattr(node.op, "format", "csr") == "csr"
    out_t = _scalar_type(node.outputs[0].type.dtype)

    @numba_njit
    def kernel(a_data, a_indices, a_indptr, b):
        out = np.empty(a_data.shape[0], out_t)
        for i in range(a_indptr.shape[0] - 1):
            for p in range(a_indptr[i], a_indptr[i + 1]):
                j = a_indices[p]
                if matrix:
                    other = b[i, j] if is_csr else b[j, i]
                else:
                    other = b[j]
                out[p] = combine(a_data[p], other)
        return out

    return kernel


@_register(su._MulSDArrays)
def numba_funcify_MulSDArrays(op, node, **kwargs):
    """The data of ``a * b`` for a dense matrix ``b``."""
    return _data_kernel(node, _times, True)


@_register(su.MulSVCSR)
def numba_funcify_MulSVCSR(op, node, **kwargs):
    """The data of ``a * b`` for a dense row vector ``b``."""
    return _data_kernel(node, _times, False)


@_register(su.StructuredAddSVCSR)
def numba_funcify_StructuredAddSVCSR(op, node, **kwargs):
    """The data of ``a + b`` for a dense row vector ``b``."""
    return _data_kernel(node, _plus, False)


# --------------------------------------------------------------------------- #
# Joining
# --------------------------------------------------------------------------- #
@_register(sst.Stack)
def numba_funcify_Stack(op, node, **kwargs):
    """``hstack`` / ``vstack``: each block's entries, in the output's compression."""
    fmt = op.format
    if fmt not in ("csr", "csc"):
        raise NotImplementedError(f"no Numba kernel for stacking into {fmt} matrices")
    n = len(node.inputs)
    axis = op.axis
    # Joining along the minor axis of the output needs each block's arrays
    # in the output's compression; every block is converted to it.
    converters = [_arrays_in(_fmt(v), fmt) for v in node.inputs]
    out_t = _scalar_type(node.outputs[0].type.dtype)
    build = _builder(fmt)
    is_csr = fmt == "csr"
    names = [f"x{k}" for k in range(n)]
    lines = [f"def stack({', '.join(names)}):"]
    fixed = 1 - axis
    for k in range(1, n):
        lines.append(f"    if x{k}.shape[{fixed}] != x0.shape[{fixed}]:")
        lines.append(f"        raise ValueError('{type(op).__name__}: the blocks do not fit')")
    lines.append(f"    total = " + " + ".join(f"x{k}.shape[{axis}]" for k in range(n)))
    lines.append(f"    shape = (x0.shape[0], total) if {axis} == 1 else (total, x0.shape[1])")
    for k in range(n):
        lines.append(f"    d{k}, i{k}, p{k} = conv{k}(x{k})")
    lines.append("    nnz = " + " + ".join(f"p{k}[p{k}.shape[0] - 1]" for k in range(n)))
    lines.append("    n_major = shape[0] if is_csr else shape[1]")
    lines.append("    data = np.empty(nnz, out_t)")
    lines.append("    indices = np.empty(nnz, np.int32)")
    lines.append("    indptr = np.zeros(n_major + 1, np.int32)")
    # along the major axis: blocks follow each other; along the minor axis: rows interleave
    along_major = (axis == 0) == is_csr
    if along_major:
        lines.append("    pos = 0")
        lines.append("    row = 0")
        for k in range(n):
            lines += [
                f"    for i in range(p{k}.shape[0] - 1):",
                f"        for q in range(p{k}[i], p{k}[i + 1]):",
                f"            data[pos] = d{k}[q]",
                f"            indices[pos] = i{k}[q]",
                "            pos += 1",
                "        row += 1",
                "        indptr[row] = pos",
            ]
    else:
        lines.append("    pos = 0")
        lines.append("    for i in range(n_major):")
        lines.append("        offset = 0")
        for k in range(n):
            lines += [
                f"        for q in range(p{k}[i], p{k}[i + 1]):",
                f"            data[pos] = d{k}[q]",
                f"            indices[pos] = i{k}[q] + offset",
                "            pos += 1",
                f"        offset += x{k}.shape[{axis}]",
            ]
        lines.append("        indptr[i + 1] = pos")
    lines.append("    return build(data, indices, indptr, (np.intp(shape[0]), np.intp(shape[1])))")
    namespace = {"np": np, "out_t": out_t, "build": build, "is_csr": is_csr}
    namespace.update({f"conv{k}": c for k, c in enumerate(converters)})
    exec(compile("\n".join(lines) + "\n", f"<lucent sparse {type(op).__name__}>", "exec"), namespace)
    return numba_njit(namespace["stack"])


__all__ = ["VERSION"]
