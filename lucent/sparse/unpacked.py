"""Ops on the unpacked arrays of a CSR/CSC matrix (``data``, ``indices``, ``indptr``).

The sparse rewrites (``lucent.sparse.rewriting``) replace an op on sparse
matrices by one of these, fed by ``csm_properties`` and followed by ``CSM``
when the result is sparse: ``StructuredDot`` of a CSC/CSR matrix and a
dense one becomes ``StructuredDotCSC`` / ``StructuredDotCSR`` on the
arrays, ``SamplingDot`` of a CSR pattern becomes ``SamplingDotCSR``, and so
on. Working on the arrays lets a rewrite share one ``csm_properties`` among
several consumers, and lets the Numba kernels (``lucent.link.numba.dispatch.
sparse``) loop over the arrays directly. Their ``perform`` rebuilds the
SciPy matrix where that is the simplest exact reference.

``indices`` and ``indptr`` are int32 vectors; a ``*_nrows`` / ``*_ncols``
input is the length SciPy cannot recover from ``indptr`` (the rows of a CSC
matrix, the columns of a CSR one).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse

from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.scalar.dtypes import upcast
from lucent.tensor import basic as _tb
from lucent.tensor.type import ivector, tensor


def _as_vectors(op, *values):
    out = [_tb.as_tensor_variable(v) for v in values]
    for v in out:
        if v.type.ndim != 1:
            raise TypeError(f"{op}: expected vectors for the unpacked arrays, got {v} of type {v.type}")
    return out


def _dense_out(dtype, b):
    return tensor(dtype=dtype, shape=(None, 1 if b.type.shape[1] == 1 else None))


class StructuredDotCSC(Op):
    """``a @ b`` for a CSC ``a`` given as ``(a_val, a_ind, a_ptr, a_nrows)`` and a dense ``b``."""

    __props__ = ()

    def make_node(self, a_val, a_ind, a_ptr, a_nrows, b):
        a_val, a_ind, a_ptr = _as_vectors(self, a_val, a_ind, a_ptr)
        a_nrows = _tb.as_tensor_variable(a_nrows)
        b = _tb.as_tensor_variable(b)
        if b.type.ndim != 2:
            raise TypeError(f"StructuredDotCSC: b must be a matrix, got {b.type}")
        dtype = upcast(a_val.type.dtype, b.type.dtype)
        return Apply(self, [a_val, a_ind, a_ptr, a_nrows, b], [_dense_out(dtype, b)])

    def perform(self, node, inputs, output_storage):
        a_val, a_ind, a_ptr, a_nrows, b = inputs
        if len(a_ptr) - 1 != b.shape[0]:
            raise ValueError(f"StructuredDotCSC: a has {len(a_ptr) - 1} columns, b {b.shape[0]} rows")
        a = scipy.sparse.csc_matrix((a_val, a_ind, a_ptr), (int(a_nrows), b.shape[0]), copy=False)
        output_storage[0][0] = np.asarray(a @ b, dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [(node.inputs[3], input_shapes[4][1])]


class StructuredDotCSR(Op):
    """``a @ b`` for a CSR ``a`` given as ``(a_val, a_ind, a_ptr)`` and a dense ``b``."""

    __props__ = ()

    def make_node(self, a_val, a_ind, a_ptr, b):
        a_val, a_ind, a_ptr = _as_vectors(self, a_val, a_ind, a_ptr)
        b = _tb.as_tensor_variable(b)
        if b.type.ndim != 2:
            raise TypeError(f"StructuredDotCSR: b must be a matrix, got {b.type}")
        dtype = upcast(a_val.type.dtype, b.type.dtype)
        return Apply(self, [a_val, a_ind, a_ptr, b], [_dense_out(dtype, b)])

    def perform(self, node, inputs, output_storage):
        a_val, a_ind, a_ptr, b = inputs
        a = scipy.sparse.csr_matrix((a_val, a_ind, a_ptr), (len(a_ptr) - 1, b.shape[0]), copy=False)
        output_storage[0][0] = np.asarray(a @ b, dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [(input_shapes[2][0] - 1, input_shapes[3][1])]


sd_csc = StructuredDotCSC()
sd_csr = StructuredDotCSR()


class _MulSDArrays(Op):
    """The ``data`` of ``a * b`` for a sparse ``a`` (its arrays) and a dense matrix ``b``.

    The product keeps ``a``'s pattern, so only the new ``data`` is returned.
    """

    __props__ = ()
    format = None

    def make_node(self, a_data, a_indices, a_indptr, b):
        a_data, a_indices, a_indptr = _as_vectors(self, a_data, a_indices, a_indptr)
        b = _tb.as_tensor_variable(b)
        if b.type.ndim != 2:
            raise TypeError(f"{type(self).__name__}: b must be a matrix, got {b.type}")
        if a_data.type.dtype != b.type.dtype:
            raise NotImplementedError(f"{type(self).__name__}: a and b must have one dtype")
        return Apply(self, [a_data, a_indices, a_indptr, b], [tensor(dtype=b.type.dtype, shape=(None,))])

    def perform(self, node, inputs, output_storage):
        a_data, a_indices, a_indptr, b = inputs
        major = np.repeat(np.arange(len(a_indptr) - 1), np.diff(a_indptr))
        rows, cols = (major, a_indices) if self.format == "csr" else (a_indices, major)
        output_storage[0][0] = np.asarray(a_data * b[rows, cols], dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


class MulSDCSC(_MulSDArrays):
    """``_MulSDArrays`` for a CSC ``a``."""

    format = "csc"


class MulSDCSR(_MulSDArrays):
    """``_MulSDArrays`` for a CSR ``a``."""

    format = "csr"


mul_s_d_csc = MulSDCSC()
mul_s_d_csr = MulSDCSR()


class _RowVectorCSR(Op):
    """The ``data`` of a CSR matrix combined with a dense row vector ``b`` at each stored column."""

    __props__ = ()

    def make_node(self, a_data, a_indices, a_indptr, b):
        a_data, a_indices, a_indptr, b = _as_vectors(self, a_data, a_indices, a_indptr, b)
        if a_data.type.dtype != b.type.dtype:
            raise NotImplementedError(f"{type(self).__name__}: a and b must have one dtype")
        return Apply(self, [a_data, a_indices, a_indptr, b], [tensor(dtype=b.type.dtype, shape=(None,))])

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


class MulSVCSR(_RowVectorCSR):
    """The ``data`` of ``a * b`` for a CSR ``a`` and a dense row vector ``b``."""

    def perform(self, node, inputs, output_storage):
        a_data, a_indices, _, b = inputs
        output_storage[0][0] = np.asarray(a_data * b[a_indices], dtype=node.outputs[0].type.dtype)


class StructuredAddSVCSR(_RowVectorCSR):
    """The ``data`` of ``a + b`` on the stored entries of a CSR ``a``, for a dense row vector ``b``."""

    def perform(self, node, inputs, output_storage):
        a_data, a_indices, _, b = inputs
        output_storage[0][0] = np.asarray(a_data + b[a_indices], dtype=node.outputs[0].type.dtype)


mul_s_v_csr = MulSVCSR()
structured_add_s_v_csr = StructuredAddSVCSR()


class SamplingDotCSR(Op):
    """``SamplingDot`` for a CSR pattern given as its arrays: returns the result's ``(data, indices, indptr)``.

    Inputs: ``x`` (m x k), ``y`` (n x k), the pattern's ``p_data``,
    ``p_ind``, ``p_ptr`` and ``p_ncols``. Entry ``(i, j)`` stored in the
    pattern becomes ``p[i, j] * (x[i] . y[j])``; the pattern is kept.
    """

    __props__ = ()

    def make_node(self, x, y, p_data, p_ind, p_ptr, p_ncols):
        x, y = _tb.as_tensor_variable(x), _tb.as_tensor_variable(y)
        p_data, p_ind, p_ptr = _as_vectors(self, p_data, p_ind, p_ptr)
        p_ncols = _tb.as_tensor_variable(p_ncols)
        for name, v in (("x", x), ("y", y)):
            if v.type.ndim != 2:
                raise TypeError(f"SamplingDotCSR: {name} must be a matrix, got {v.type}")
        dtype = upcast(x.type.dtype, y.type.dtype, p_data.type.dtype)
        return Apply(
            self, [x, y, p_data, p_ind, p_ptr, p_ncols], [tensor(dtype=dtype, shape=(None,)), ivector(), ivector()]
        )

    def perform(self, node, inputs, output_storage):
        x, y, p_data, p_ind, p_ptr, _ = inputs
        if x.shape[1] != y.shape[1]:
            raise ValueError(f"SamplingDotCSR: x {x.shape} and y {y.shape} need the same number of columns")
        rows = np.repeat(np.arange(len(p_ptr) - 1), np.diff(p_ptr))
        vals = np.einsum("ij,ij->i", x[rows], y[p_ind]) if len(rows) else np.zeros(0)
        output_storage[0][0] = np.asarray(p_data * vals, dtype=node.outputs[0].type.dtype)
        output_storage[1][0] = np.array(p_ind, dtype="int32")
        output_storage[2][0] = np.array(p_ptr, dtype="int32")

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[2], input_shapes[3], input_shapes[4]]


sampling_dot_csr = SamplingDotCSR()


class UsmmCscDense(Op):
    """``alpha * (x @ y) + z`` for a CSC ``x`` given as its arrays and a dense ``y`` and ``z``.

    ``inplace=True`` writes the result into ``z`` (``destroy_map``).
    """

    __props__ = ("inplace",)

    def __init__(self, inplace):
        self.inplace = bool(inplace)
        if self.inplace:
            self.destroy_map = {0: [6]}

    def __str__(self):
        return f"UsmmCscDense{{{'inplace' if self.inplace else 'no_inplace'}}}"

    def make_node(self, alpha, x_val, x_ind, x_ptr, x_nrows, y, z):
        from lucent.tensor.basic import cast

        alpha, x_nrows, y, z = (_tb.as_tensor_variable(v) for v in (alpha, x_nrows, y, z))
        x_val, x_ind, x_ptr = _as_vectors(self, x_val, x_ind, x_ptr)
        if alpha.type.shape != (1,) * alpha.type.ndim or y.type.ndim != 2 or z.type.ndim != 2:
            raise TypeError("UsmmCscDense: alpha must be a scalar, y and z matrices")
        dtype = upcast(alpha.type.dtype, x_val.type.dtype, y.type.dtype, z.type.dtype)
        if dtype not in ("float32", "float64"):
            raise NotImplementedError(f"UsmmCscDense supports float32/float64 operands only, got {dtype}")
        if self.inplace and z.type.dtype != dtype:
            raise TypeError(f"UsmmCscDense{{inplace}}: z must already be {dtype}")
        alpha, x_val, y, z = (v if v.type.dtype == dtype else cast(v, dtype) for v in (alpha, x_val, y, z))
        return Apply(
            self, [alpha, x_val, x_ind, x_ptr, x_nrows, y, z], [tensor(dtype=dtype, shape=(None, None))]
        )

    def perform(self, node, inputs, output_storage):
        alpha, x_val, x_ind, x_ptr, x_nrows, y, z = inputs
        x = scipy.sparse.csc_matrix((x_val, x_ind, x_ptr), (int(x_nrows), len(x_ptr) - 1), copy=False)
        if x.shape[1] != y.shape[0] or z.shape != (x.shape[0], y.shape[1]):
            raise ValueError(f"UsmmCscDense: shapes x {x.shape}, y {y.shape}, z {z.shape} do not fit")
        out = z if self.inplace else z.copy()
        out += np.asarray(alpha).reshape(()) * np.asarray(x @ y)
        output_storage[0][0] = out

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[6]]


usmm_csc_dense = UsmmCscDense(inplace=False)
usmm_csc_dense_inplace = UsmmCscDense(inplace=True)


class CSMGradC(Op):
    """``CSMGrad`` on the arrays of both matrices (same inputs and result as ``CSMGrad``).

    Each stored entry of ``a`` gets the value the gradient ``b`` stores at
    the same place, or 0.
    """

    __props__ = ()

    def make_node(self, a_val, a_ind, a_ptr, a_dim, b_val, b_ind, b_ptr, b_dim):
        inputs = [_tb.as_tensor_variable(v) for v in (a_val, a_ind, a_ptr, a_dim, b_val, b_ind, b_ptr, b_dim)]
        return Apply(self, inputs, [inputs[4].type()])

    def perform(self, node, inputs, output_storage):
        from lucent.sparse.basic import CSMGrad

        CSMGrad().perform(node, inputs, output_storage)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


csm_grad_c = CSMGradC()


__all__ = [
    "StructuredDotCSC", "StructuredDotCSR", "sd_csc", "sd_csr",
    "MulSDCSC", "MulSDCSR", "mul_s_d_csc", "mul_s_d_csr",
    "MulSVCSR", "mul_s_v_csr", "StructuredAddSVCSR", "structured_add_s_v_csr",
    "SamplingDotCSR", "sampling_dot_csr",
    "UsmmCscDense", "usmm_csc_dense", "usmm_csc_dense_inplace",
    "CSMGradC", "csm_grad_c",
]
