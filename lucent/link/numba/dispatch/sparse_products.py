"""Native Numba kernels of the sparse products (``lucent.sparse`` dot ops).

Sparse x dense products (``StructuredDot``, ``Dot``, ``sd_csr`` /
``sd_csc``, ``Usmm``, ``UsmmCscDense``) stream each stored entry once
against a row of the dense operand, which is the loop SciPy runs,
compiled. Two details make these loops as fast as SciPy's:

* stored positions and indices are read as *unsigned* integers
  (``_U(indices[p])``): Numba then indexes without the branch that wraps
  negative indices around, which otherwise costs about as much as the
  multiply-add itself in these memory-bound loops;
* a product with a dense *vector* (``X @ w``, ``X.T @ g`` in a regression)
  has its own loops, with the row sum in a register, instead of going
  through a one-column matrix.
"""

from __future__ import annotations

import numpy as np

from lucent.link.numba.dispatch.basic import numba_njit
from lucent.link.numba.dispatch.sparse import (
    _U,
    _arrays_in,
    _builder,
    _compress_dense,
    _fmt,
    _is_sparse,
    _plus,
    _recompress,
    _register,
    _scalar_type,
    _times,
)
from lucent.sparse import math as sm
from lucent.sparse import products as sp_products
from lucent.sparse import unpacked as su


# --------------------------------------------------------------------------- #
# Loops over the arrays of one sparse operand
# --------------------------------------------------------------------------- #
@numba_njit
def _csr_times_dense(data, indices, indptr, n_rows, b, out):
    """``out += A @ b`` for CSR arrays of ``A`` (rows of ``b`` streamed contiguously)."""
    k = b.shape[1]
    if k == 1:
        for i in range(n_rows):
            acc = out[i, 0]
            for p in range(_U(indptr[i]), _U(indptr[i + 1])):
                acc += data[p] * b[_U(indices[p]), 0]
            out[i, 0] = acc
        return out
    for i in range(n_rows):
        orow = out[i]
        for p in range(_U(indptr[i]), _U(indptr[i + 1])):
            v = data[p]
            brow = b[_U(indices[p])]
            for c in range(k):
                orow[c] += v * brow[c]
    return out


@numba_njit
def _csc_times_dense(data, indices, indptr, n_cols, b, out):
    """``out += A @ b`` for CSC arrays of ``A``."""
    k = b.shape[1]
    if k == 1:
        for j in range(n_cols):
            v = b[j, 0]
            for p in range(_U(indptr[j]), _U(indptr[j + 1])):
                out[_U(indices[p]), 0] += data[p] * v
        return out
    for j in range(n_cols):
        brow = b[j]
        for p in range(_U(indptr[j]), _U(indptr[j + 1])):
            v = data[p]
            orow = out[_U(indices[p])]
            for c in range(k):
                orow[c] += v * brow[c]
    return out


@numba_njit
def _dense_times_csr(a, data, indices, indptr, n_rows_b, out):
    """``out += a @ B`` for a dense ``a`` and CSR arrays of ``B``."""
    for r in range(a.shape[0]):
        orow = out[r]
        for i in range(n_rows_b):
            av = a[r, i]
            if av == 0:
                continue
            for p in range(_U(indptr[i]), _U(indptr[i + 1])):
                orow[_U(indices[p])] += av * data[p]
    return out


@numba_njit
def _dense_times_csc(a, data, indices, indptr, n_cols_b, out):
    """``out += a @ B`` for a dense ``a`` and CSC arrays of ``B``."""
    for r in range(a.shape[0]):
        arow = a[r]
        for j in range(n_cols_b):
            acc = out[r, j]
            for p in range(_U(indptr[j]), _U(indptr[j + 1])):
                acc += arow[_U(indices[p])] * data[p]
            out[r, j] = acc
    return out


def _sparse_vector_kernel(fmt, out_t, name):
    """``x @ v`` for a sparse ``x`` and a dense vector ``v``: a dense vector."""
    is_csr = fmt == "csr"

    @numba_njit
    def sparse_vector(x, v):
        if x.shape[1] != v.shape[0]:
            raise ValueError(name + ": the operands' shapes do not align")
        data, indices, indptr = x.data, x.indices, x.indptr
        if is_csr:
            out = np.empty(x.shape[0], out_t)
            for i in range(x.shape[0]):
                acc = out_t(0)
                for p in range(_U(indptr[i]), _U(indptr[i + 1])):
                    acc += data[p] * v[_U(indices[p])]
                out[i] = acc
            return out
        out = np.zeros(x.shape[0], out_t)
        for j in range(x.shape[1]):
            vj = v[j]
            for p in range(_U(indptr[j]), _U(indptr[j + 1])):
                out[_U(indices[p])] += data[p] * vj
        return out

    return sparse_vector


def _vector_sparse_kernel(fmt, out_t, name):
    """``v @ y`` for a dense vector ``v`` and a sparse ``y``: a dense vector."""
    is_csr = fmt == "csr"

    @numba_njit
    def vector_sparse(v, y):
        if v.shape[0] != y.shape[0]:
            raise ValueError(name + ": the operands' shapes do not align")
        data, indices, indptr = y.data, y.indices, y.indptr
        if is_csr:
            out = np.zeros(y.shape[1], out_t)
            for i in range(y.shape[0]):
                vi = v[i]
                for p in range(_U(indptr[i]), _U(indptr[i + 1])):
                    out[_U(indices[p])] += vi * data[p]
            return out
        out = np.empty(y.shape[1], out_t)
        for j in range(y.shape[1]):
            acc = out_t(0)
            for p in range(_U(indptr[j]), _U(indptr[j + 1])):
                acc += v[_U(indices[p])] * data[p]
            out[j] = acc
        return out

    return vector_sparse


# --------------------------------------------------------------------------- #
# Whole-matrix kernels
# --------------------------------------------------------------------------- #
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
        if y.type.ndim == 1:
            return _sparse_vector_kernel(x.type.format, out_t, "SparseDot")
        return _sparse_dense_matrix_kernel(x.type.format, out_t, "SparseDot")
    if x.type.ndim == 1:
        return _vector_sparse_kernel(y.type.format, out_t, "SparseDot")
    return _dense_sparse_matrix_kernel(y.type.format, out_t, "SparseDot")


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
            for p in range(_U(indptr[i]), _U(indptr[i + 1])):
                j = _U(indices[p])
                grow = g[i] if is_csr else g[j]
                brow = b[j] if is_csr else b[i]
                acc = out_t(0)
                for t in range(k):
                    acc += grow[t] * brow[t]
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


@_register(su.UsmmCscDense)
def numba_funcify_UsmmCscDense(op, node, **kwargs):
    """``alpha * (x @ y) + z`` for a CSC ``x`` given by its arrays; in place in ``z`` if the op says so."""
    out_t = _scalar_type(node.outputs[0].type.dtype)
    inplace = op.inplace

    @numba_njit
    def usmm_csc_dense(alpha, x_val, x_ind, x_ptr, x_nrows, y, z):
        n_rows = np.intp(x_nrows.ravel()[0])
        n_cols = x_ptr.shape[0] - 1
        if n_cols != y.shape[0] or z.shape[0] != n_rows or z.shape[1] != y.shape[1]:
            raise ValueError("UsmmCscDense: the shapes of x, y and z do not fit")
        out = z if inplace else z.copy()
        a = out_t(alpha.ravel()[0])
        k = y.shape[1]
        for j in range(n_cols):
            yrow = y[j]
            for p in range(_U(x_ptr[j]), _U(x_ptr[j + 1])):
                i = x_ind[p]
                if i < 0 or i >= n_rows:
                    raise ValueError("UsmmCscDense: a row index of x is out of range")
                v = a * x_val[p]
                orow = out[i]
                for c in range(k):
                    orow[c] += v * yrow[c]
        return out

    return usmm_csc_dense


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
