"""Products and sums with a sparse result or a sparse pattern (``lucent.sparse.math`` re-exports them).

* ``TrueDot`` / ``true_dot``: ``x @ y`` with a *sparse* result (``Dot``'s is dense);
* ``SamplingDot`` / ``sampling_dot``: ``p * (x @ y.T)`` computed only where the
  sparse pattern ``p`` stores an entry, the core of factorisation models whose
  loss only looks at observed entries;
* ``Usmm`` / ``usmm``: ``alpha * (x @ y) + z`` with a sparse ``x`` or ``y``
  (the fused form the ``local_usmm`` rewrite builds);
* ``SparseDenseVectorMultiply`` (``mul_s_v``), ``StructuredAddSV``
  (``structured_add_s_v``): a sparse matrix times / plus a dense row vector,
  on its stored entries;
* ``AddSSData`` (``add_s_s_data``): the sum of two matrices with the same
  pattern, adding their ``data`` vectors.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse

from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.scalar.dtypes import upcast
from lucent.sparse import basic as sb
from lucent.sparse.type import SparseTensorType
from lucent.tensor import basic as _tb
from lucent.tensor.type import tensor


def _sum_axis0_structured(x):
    from lucent.sparse.math import sp_sum

    return sp_sum(x, axis=0, sparse_grad=True)


class TrueDot(Op):
    """``x @ y`` for a sparse ``x`` and a sparse or dense matrix ``y``; sparse result.

    The output's format is ``x``'s. ``grad_preserves_dense`` (not part of the
    op's identity: it does not change the values) makes the gradient wrt a
    dense ``y`` dense. The gradient is regular.
    """

    __props__ = ()

    def __init__(self, grad_preserves_dense=True):
        self.grad_preserves_dense = grad_preserves_dense

    def make_node(self, x, y):
        if not sb._is_sparse_variable(x):
            raise TypeError(f"TrueDot needs a sparse left operand, got {x} of type {getattr(x, 'type', x)}")
        y = y if sb._is_sparse_variable(y) else _tb.as_tensor_variable(y)
        if x.type.dtype != y.type.dtype:
            raise NotImplementedError(
                f"TrueDot needs operands of one dtype, got {x.type.dtype} and {y.type.dtype}"
            )
        if x.type.format not in ("csr", "csc"):
            raise NotImplementedError(f"TrueDot: unsupported format {x.type.format!r}")
        out = SparseTensorType(dtype=x.type.dtype, format=x.type.format)()
        return Apply(self, [x, y], [out])

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        if x.shape[1] != y.shape[0]:
            raise ValueError(f"TrueDot: shapes {x.shape} and {y.shape} do not align")
        out_type = node.outputs[0].type
        result = x @ y
        if not scipy.sparse.issparse(result):
            result = out_type.format_cls[out_type.format](np.asarray(result))
        output_storage[0][0] = result.asformat(out_type.format).astype(out_type.dtype, copy=False)

    def L_op(self, inputs, outputs, output_grads):
        x, y = inputs
        (gz,) = output_grads
        gx, gy = true_dot(gz, y.T), true_dot(x.T, gz)
        if sb._is_dense_variable(y) and self.grad_preserves_dense:
            gy = sb.dense_from_sparse(gy)
        return [gx, gy]

    def infer_shape(self, fgraph, node, input_shapes):
        return [(input_shapes[0][0], input_shapes[1][1])]


def true_dot(x, y, grad_preserves_dense=True):
    """``x @ y`` with a sparse result, where at least one operand is sparse (CSR/CSC).

    The gradient is regular; with ``grad_preserves_dense`` the gradient
    wrt a dense operand is dense.
    """
    if scipy.sparse.issparse(x):
        x = sb._compressed(x, "true_dot")
    if scipy.sparse.issparse(y):
        y = sb._compressed(y, "true_dot")
    x_sparse, y_sparse = sb._is_sparse_variable(x), sb._is_sparse_variable(y)
    if not (x_sparse or y_sparse):
        raise TypeError("true_dot needs at least one sparse operand")
    if x_sparse:
        return TrueDot(grad_preserves_dense)(x, y)
    return sb.transpose(TrueDot(grad_preserves_dense)(y.T, x.T))


class SamplingDot(Op):
    """``p * (x @ y.T)``, computed only at the entries stored in the sparse ``p``.

    ``x`` is ``m x k``, ``y`` is ``n x k`` (note the transposed second
    operand) and ``p`` an ``m x n`` CSR/CSC pattern whose values scale the
    result. The result has ``p``'s type. The gradient is regular; there is
    none wrt ``p``.
    """

    __props__ = ()

    def make_node(self, x, y, p):
        x = _tb.as_tensor_variable(x)
        y = _tb.as_tensor_variable(y)
        p = sb._compressed(p, "SamplingDot")
        for name, v in (("x", x), ("y", y)):
            if v.type.ndim != 2:
                raise TypeError(f"SamplingDot: {name} must be a dense matrix, got {v} of type {v.type}")
        return Apply(self, [x, y, p], [p.type()])

    def perform(self, node, inputs, output_storage):
        x, y, p = inputs
        for name, v in (("x", x), ("y", y)):
            if scipy.sparse.issparse(v):
                raise TypeError(f"SamplingDot: {name} must be dense, got a sparse matrix")
        if x.shape[1] != y.shape[1] or p.shape != (x.shape[0], y.shape[0]):
            raise ValueError(
                f"SamplingDot: x {x.shape}, y {y.shape} and p {p.shape} do not fit "
                "(x is m x k, y is n x k, p is m x n)"
            )
        out_type = node.outputs[0].type
        result = out_type.format_cls[out_type.format](p.multiply(x @ y.T))
        output_storage[0][0] = result.astype(out_type.dtype, copy=False)

    def L_op(self, inputs, outputs, output_grads):
        from lucent.gradient import grad_not_implemented
        from lucent.sparse.math import dot

        x, y, p = inputs
        (gz,) = output_grads
        pg = p * gz
        return [dot(pg, y), dot(pg.T, x), grad_not_implemented(self, 2, p)]

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[2]]


sampling_dot = SamplingDot()


class Usmm(Op):
    """``alpha * (x @ y) + z`` where ``x`` or ``y`` is sparse and ``z`` is a dense matrix.

    ``alpha`` is a scalar (a tensor with every dimension of length 1). The
    result is dense. ``local_usmm`` builds it from ``z - alpha * dot(x, y)``.
    """

    __props__ = ()

    def __str__(self):
        return "Usmm{no_inplace}"

    def make_node(self, alpha, x, y, z):
        if not sb._is_sparse_variable(x) and not sb._is_sparse_variable(y):
            raise TypeError(f"Usmm needs a sparse x or y (use gemm for dense ones), got {x} and {y}")
        alpha = _tb.as_tensor_variable(alpha)
        z = _tb.as_tensor_variable(z)
        if z.type.ndim != 2:
            raise TypeError(f"Usmm: z must be a matrix, got {z} of type {z.type}")
        if alpha.type.shape != (1,) * alpha.type.ndim:
            raise TypeError(f"Usmm: alpha must be a scalar, got {alpha} of type {alpha.type}")
        for name, v in (("x", x), ("y", y)):
            if sb._is_sparse_variable(v):
                if v.type.format not in ("csr", "csc"):
                    raise TypeError(f"Usmm: unsupported format {v.type.format!r} of {name}")
        if not sb._is_sparse_variable(x):
            x = _tb.as_tensor_variable(x)
        if not sb._is_sparse_variable(y):
            y = _tb.as_tensor_variable(y)
        for name, v in (("x", x), ("y", y)):
            if v.type.ndim != 2:
                raise TypeError(f"Usmm: {name} must be a matrix, got {v} of type {v.type}")
        dtype = upcast(alpha.type.dtype, x.type.dtype, y.type.dtype, z.type.dtype)
        return Apply(self, [alpha, x, y, z], [tensor(dtype=dtype, shape=(None, None))])

    def perform(self, node, inputs, output_storage):
        alpha, x, y, z = inputs
        if x.shape[1] != y.shape[0] or z.shape != (x.shape[0], y.shape[1]):
            raise ValueError(f"Usmm: shapes x {x.shape}, y {y.shape}, z {z.shape} do not fit")
        product = x @ y
        if scipy.sparse.issparse(product):
            product = product.toarray()
        dtype = node.outputs[0].type.dtype
        out = np.asarray(product, dtype=dtype) * np.asarray(alpha).reshape(()).astype(dtype)
        out += z
        output_storage[0][0] = out

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[3]]


usmm = Usmm()


def _vector_operands(op, x, y):
    x = sb._compressed(x, op)
    y = _tb.as_tensor_variable(y)
    if y.type.ndim != 1:
        raise ValueError(f"{op}: y {y} must have 1 dimension, got {y.type.ndim}")
    if x.type.dtype != y.type.dtype:
        raise NotImplementedError(
            f"{op}: differing dtypes are not supported, got {x.type.dtype} and {y.type.dtype}"
        )
    if None not in (x.type.shape[1], y.type.shape[0]) and x.type.shape[1] != y.type.shape[0]:
        raise ValueError(
            f"{op}: incompatible static shapes {x.type.shape} and {y.type.shape}"
        )
    return x, y


def _check_row_vector(op, x, y):
    if x.shape[1] != y.shape[0]:
        raise ValueError(f"{op}: matrix {x.shape} and vector {y.shape} do not fit")


class SparseDenseVectorMultiply(Op):
    """``x * y`` for a sparse ``x`` and a dense vector ``y`` broadcast along the rows.

    The result is sparse with ``x``'s pattern; the gradient is regular.
    """

    __props__ = ()

    def make_node(self, x, y):
        x, y = _vector_operands("SparseDenseVectorMultiply", x, y)
        cols = x.type.shape[1] if x.type.shape[1] is not None else y.type.shape[0]
        out = SparseTensorType(dtype=x.type.dtype, format=x.type.format, shape=(x.type.shape[0], cols))
        return Apply(self, [x, y], [out()])

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        _check_row_vector(self, x, y)
        out = x.copy()
        minor = out.indices if x.format == "csr" else np.repeat(np.arange(x.shape[1]), np.diff(x.indptr))
        out.data = out.data * y[minor]
        output_storage[0][0] = out

    def L_op(self, inputs, outputs, output_grads):
        from lucent.sparse.math import multiply

        x, y = inputs
        (gz,) = output_grads
        if gz.type.dtype != y.type.dtype:
            dtype = upcast(gz.type.dtype, y.type.dtype)
            y, gz = y.astype(dtype), (sb.cast(gz, dtype) if gz.type.dtype != dtype else gz)
        return [mul_s_v(gz, y), _sum_axis0_structured(multiply(x, gz))]

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


mul_s_v = SparseDenseVectorMultiply()


class StructuredAddSV(Op):
    """``x + y`` on the stored entries of a sparse ``x``, for a dense row vector ``y``.

    The result is sparse with ``x``'s pattern; the gradient is structured.
    """

    __props__ = ()

    def make_node(self, x, y):
        x, y = _vector_operands("StructuredAddSV", x, y)
        return Apply(self, [x, y], [SparseTensorType(dtype=x.type.dtype, format=x.type.format)()])

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        _check_row_vector(self, x, y)
        out = x.copy()
        minor = out.indices if x.format == "csr" else np.repeat(np.arange(x.shape[1]), np.diff(x.indptr))
        out.data = out.data + y[minor]
        output_storage[0][0] = out

    def L_op(self, inputs, outputs, output_grads):
        (gz,) = output_grads
        return [gz, _sum_axis0_structured(gz)]

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


structured_add_s_v = StructuredAddSV()


class AddSSData(Op):
    """``x + y`` for two sparse matrices with the same pattern: their ``data`` vectors are added.

    The operands must have one dtype and one format; the gradient is structured.
    """

    __props__ = ()

    def make_node(self, x, y):
        x = sb._compressed(x, "AddSSData")
        y = sb._compressed(y, "AddSSData")
        if x.type.dtype != y.type.dtype or x.type.format != y.type.format:
            raise NotImplementedError(
                f"AddSSData needs operands of one dtype and format, got {x.type} and {y.type}"
            )
        return Apply(self, [x, y], [SparseTensorType(dtype=x.type.dtype, format=x.type.format)()])

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        if x.shape != y.shape or x.data.shape != y.data.shape:
            raise ValueError(
                f"AddSSData: the operands must have one shape and pattern, got {x.shape} with "
                f"{x.nnz} entries and {y.shape} with {y.nnz}"
            )
        out = x.copy()
        out.data += y.data
        output_storage[0][0] = out

    def L_op(self, inputs, outputs, output_grads):
        (gz,) = output_grads
        return [gz if v.type.dtype in sb.continuous_dtypes else None for v in inputs]

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


add_s_s_data = AddSSData()


__all__ = [
    "TrueDot",
    "true_dot",
    "SamplingDot",
    "sampling_dot",
    "Usmm",
    "usmm",
    "SparseDenseVectorMultiply",
    "mul_s_v",
    "StructuredAddSV",
    "structured_add_s_v",
    "AddSSData",
    "add_s_s_data",
]
