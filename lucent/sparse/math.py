"""Arithmetic on sparse matrices: negation, addition, element-wise product, structured dot.

``add`` / ``subtract`` / ``multiply`` pick the op from their operands: two
sparse matrices give a sparse result, a sparse and a dense matrix give a
dense sum (``AddSparseDense``) or a sparse product (``MultiplySparseDense``, whose
zeros stay zero). A *structured* operation works on the stored entries only
(``neg`` maps the ``data`` vector through dense math and rebuilds the matrix
with ``CSM``) and its gradient keeps the sparsity pattern of the input.

``structured_dot(a, b)`` is ``a @ b`` for a sparse ``a``; its gradient wrt
``a`` is structured: only the stored entries of ``a`` get one.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse

from lucent.graph.basic import Apply, Variable
from lucent.graph.op import Op
from lucent.scalar.dtypes import upcast
from lucent.sparse import basic as sb
from lucent.sparse.type import SparseTensorType
from lucent.tensor import basic as _tb
from lucent.tensor.type import complex_dtypes, tensor


def _as_operand(x):
    if scipy.sparse.issparse(x):
        return sb.as_sparse_variable(x)
    if not isinstance(x, Variable):
        return _tb.as_tensor_variable(x)
    return x


# --------------------------------------------------------------------------- #
# Structured element-wise ops
# --------------------------------------------------------------------------- #
def _structured(dense_fn, x):
    x = sb._compressed(x, "a structured element-wise op")
    data, indices, indptr, shape = sb.csm_properties(x)
    return sb.CSM(x.type.format)(dense_fn(data), indices, indptr, shape)


def neg(x):
    """``-x`` on the stored entries of the sparse matrix ``x``."""
    from lucent.tensor.math import neg as dense_neg

    return _structured(dense_neg, x)


class _Conjugate(Op):
    """The complex conjugate of a complex sparse matrix (same pattern and format)."""

    __props__ = ()

    def make_node(self, x):
        x = sb._compressed(x, "conjugate")
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0].conj(copy=True)

    def L_op(self, inputs, outputs, output_grads):
        return [self(output_grads[0])]

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


_conjugate = _Conjugate()


def conjugate(x):
    """The complex conjugate of ``x``'s stored entries (``x`` itself for real dtypes)."""
    x = sb.as_sparse_variable(x)
    if x.type.dtype not in complex_dtypes:
        return x
    return _conjugate(x)


structured_conjugate = conj = conjugate


# --------------------------------------------------------------------------- #
# Sum
# --------------------------------------------------------------------------- #
class SpSum(Op):
    """The sum of a sparse matrix (``axis`` None, 0 or 1), as a dense tensor.

    ``sparse_grad=True`` gives a structured gradient (only the stored
    entries get one), ``False`` a regular one; both gradients are sparse
    matrices of ``x``'s format. ``sparse_grad`` is not part of the op's
    identity: it does not change what the op computes, so two sums that
    differ only there are merged.
    """

    __props__ = ("axis",)

    def __init__(self, axis=None, sparse_grad=True):
        if axis not in (None, 0, 1):
            raise ValueError(f"Illegal value for self.axis: {axis!r} (expected None, 0 or 1)")
        self.axis = axis
        self.structured = sparse_grad

    def __str__(self):
        return f"{type(self).__name__}{{axis={self.axis}}}"

    def make_node(self, x):
        x = sb._compressed(x, "SpSum")
        shape = () if self.axis is None else (None,)
        return Apply(self, [x], [tensor(dtype=x.type.dtype, shape=shape)])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        dtype = node.outputs[0].type.dtype
        if self.axis is None:
            output_storage[0][0] = np.asarray(x.sum(), dtype=dtype)
        else:
            output_storage[0][0] = np.asarray(x.sum(self.axis), dtype=dtype).ravel()

    def L_op(self, inputs, outputs, output_grads):
        from lucent.configdefaults import config
        from lucent.tensor.shape import specify_broadcastable

        (x,) = inputs
        (gz,) = output_grads
        if x.type.dtype not in sb.continuous_dtypes:
            return [sb.sp_zeros_like(sb.cast(x, config.floatX))]
        if self.structured:
            ones = sb.sp_ones_like(x)
            if self.axis is None:
                return [multiply(ones, gz)]
            return [sb.col_scale(ones, gz) if self.axis == 0 else sb.row_scale(ones, gz)]
        dense_x = sb.dense_from_sparse(x)
        if self.axis is None:
            r = _tb.ones_like(dense_x) * gz
        elif self.axis == 0:
            r = specify_broadcastable(gz.dimshuffle("x", 0), 0) * _tb.ones_like(dense_x)
        else:
            r = specify_broadcastable(gz.dimshuffle(0, "x"), 1) * _tb.ones_like(dense_x)
        return [sb.SparseFromDense(x.type.format)(r)]

    def infer_shape(self, fgraph, node, input_shapes):
        if self.axis is None:
            return [()]
        return [(input_shapes[0][1 - self.axis],)]


def sp_sum(x, axis=None, sparse_grad=False):
    """The sum of the sparse matrix ``x`` along ``axis`` (all of it for None), dense.

    ``sparse_grad=True`` gives a structured gradient.
    """
    return SpSum(axis, sparse_grad)(x)


# --------------------------------------------------------------------------- #
# Addition
# --------------------------------------------------------------------------- #
def _check_same_shape(op, x, y):
    if x.shape != y.shape:
        raise ValueError(f"{op}: the operands' shapes differ: {x.shape} and {y.shape}")


class AddSparseSparse(Op):
    """``x + y`` for two sparse matrices; sparse result in ``x``'s format."""

    __props__ = ()

    def make_node(self, x, y):
        x = sb._compressed(x, "AddSparseSparse")
        y = sb._compressed(y, "AddSparseSparse")
        out_dtype = upcast(x.type.dtype, y.type.dtype)
        return Apply(self, [x, y], [SparseTensorType(dtype=out_dtype, format=x.type.format)()])

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        _check_same_shape(self, x, y)
        out = (x + y).asformat(node.outputs[0].type.format)
        output_storage[0][0] = out.astype(node.outputs[0].type.dtype, copy=False)

    def L_op(self, inputs, outputs, output_grads):
        (gz,) = output_grads
        return [gz, gz]

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


#: The name of this op in earlier PyTensor 3 releases.
AddSS = AddSparseSparse
add_s_s = AddSparseSparse()


class AddSparseDense(Op):
    """``x + y`` for a sparse ``x`` and a dense matrix ``y``; dense result.

    The gradient wrt ``x`` is structured (only its stored entries get one).
    """

    __props__ = ()

    def make_node(self, x, y):
        x = sb._compressed(x, "AddSparseDense")
        y = _tb.as_tensor_variable(y)
        if y.type.ndim != 2:
            raise TypeError(f"AddSparseDense: the dense operand must be a matrix, got {y} of type {y.type}")
        out_dtype = upcast(x.type.dtype, y.type.dtype)
        return Apply(self, [x, y], [tensor(dtype=out_dtype, shape=y.type.shape)])

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        _check_same_shape(self, x, y)
        output_storage[0][0] = np.asarray(x + y, dtype=node.outputs[0].type.dtype)

    def L_op(self, inputs, outputs, output_grads):
        x, _ = inputs
        (gz,) = output_grads
        return [multiply(sb.sp_ones_like(x), gz), gz]

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[1]]


AddSD = AddSparseDense
add_s_d = AddSparseDense()


def add(x, y):
    """``x + y`` where at least one of the two matrices is sparse (see module docstring)."""
    x, y = _as_operand(x), _as_operand(y)
    x_sparse, y_sparse = sb._is_sparse_variable(x), sb._is_sparse_variable(y)
    if x_sparse and y_sparse:
        return add_s_s(x, y)
    if x_sparse:
        return add_s_d(x, y)
    if y_sparse:
        return add_s_d(y, x)
    raise TypeError("sparse.add needs at least one sparse operand; use lucent.tensor.add otherwise")


def subtract(x, y):
    """``x - y`` where at least one of the two matrices is sparse."""
    y = _as_operand(y)
    if sb._is_sparse_variable(y):
        return add(x, neg(y))
    from lucent.tensor.math import neg as dense_neg

    return add(x, dense_neg(y))


def sub(x, y):
    """Deprecated spelling of ``subtract``."""
    warnings.warn(
        "lucent.sparse.sub is deprecated; use lucent.sparse.subtract", DeprecationWarning, stacklevel=2
    )
    return subtract(x, y)


# --------------------------------------------------------------------------- #
# Element-wise product
# --------------------------------------------------------------------------- #
class MultiplySparseSparse(Op):
    """Element-wise ``x * y`` of two sparse matrices; sparse result in ``x``'s format."""

    __props__ = ()

    def make_node(self, x, y):
        x = sb._compressed(x, "MultiplySparseSparse")
        y = sb._compressed(y, "MultiplySparseSparse")
        out_dtype = upcast(x.type.dtype, y.type.dtype)
        return Apply(self, [x, y], [SparseTensorType(dtype=out_dtype, format=x.type.format)()])

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        _check_same_shape(self, x, y)
        out = x.multiply(y).asformat(node.outputs[0].type.format)
        output_storage[0][0] = out.astype(node.outputs[0].type.dtype, copy=False)

    def L_op(self, inputs, outputs, output_grads):
        x, y = inputs
        (gz,) = output_grads
        return [multiply(y, gz), multiply(x, gz)]

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


SparseSparseMultiply = MultiplySparseSparse
mul_s_s = MultiplySparseSparse()


class MultiplySparseDense(Op):
    """Element-wise ``x * y`` of a sparse ``x`` and a dense matrix (or 0-d) ``y``.

    The result is sparse with ``x``'s pattern: entries not stored in ``x``
    are zero whatever ``y`` holds there.
    """

    __props__ = ()

    def make_node(self, x, y):
        x = sb._compressed(x, "MultiplySparseDense")
        y = _tb.as_tensor_variable(y)
        if y.type.ndim not in (0, 2):
            raise ValueError(f"MultiplySparseDense: y must have 0 or 2 dimensions, got {y} of type {y.type}")
        shape = x.type.shape
        if y.type.ndim == 2:
            merged = []
            for xs, ys in zip(x.type.shape, y.type.shape):
                if xs is not None and ys is not None and xs != ys:
                    raise ValueError(
                        f"Incompatible static shapes {x}: {x.type.shape}, {y}: {y.type.shape}"
                    )
                merged.append(ys if xs is None else xs)
            shape = tuple(merged)
        out_dtype = upcast(x.type.dtype, y.type.dtype)
        out = SparseTensorType(dtype=out_dtype, format=x.type.format, shape=shape)()
        return Apply(self, [x, y], [out])

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        out_dtype = node.outputs[0].type.dtype
        z = x.astype(out_dtype, copy=True)
        if y.ndim == 0:
            z.data *= y
        else:
            _check_same_shape(self, x, y)
            major = np.repeat(np.arange(len(x.indptr) - 1), np.diff(x.indptr))
            if x.format == "csr":
                z.data *= y[major, x.indices]
            else:
                z.data *= y[x.indices, major]
        output_storage[0][0] = z

    def L_op(self, inputs, outputs, output_grads):
        x, y = inputs
        (gz,) = output_grads
        gx = multiply(gz, y)
        if y.type.ndim == 0:
            gy = sb.dense_from_sparse(multiply(x, gz)).sum()
        else:
            gy = sb.dense_from_sparse(multiply(x, gz))
        return [gx, gy]

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


SparseDenseMultiply = MultiplySparseDense
mul_s_d = MultiplySparseDense()


def multiply(x, y):
    """Element-wise ``x * y`` where at least one operand is sparse; the result is sparse."""
    x, y = _as_operand(x), _as_operand(y)
    x_sparse, y_sparse = sb._is_sparse_variable(x), sb._is_sparse_variable(y)
    if not (x_sparse or y_sparse):
        raise TypeError("sparse.multiply needs at least one sparse operand")
    if x_sparse and y_sparse:
        if y.type.dtype == "float64" and x.type.dtype == "float32":
            x = sb.cast(x, "float64")
        return mul_s_s(x, y)
    if y_sparse:
        x, y = y, x
    if y.type.dtype == "float64" and x.type.dtype == "float32":
        x = sb.cast(x, "float64")
    if y.type.ndim == 1:
        raise NotImplementedError(
            "multiplying a sparse matrix by a dense vector is not implemented in lucent; "
            "make the vector a row matrix (v.dimshuffle('x', 0)) and broadcast it explicitly"
        )
    return mul_s_d(x, y)


def mul(x, y):
    """Deprecated spelling of ``multiply``."""
    warnings.warn(
        "lucent.sparse.mul is deprecated; use lucent.sparse.multiply", DeprecationWarning, stacklevel=2
    )
    return multiply(x, y)


# --------------------------------------------------------------------------- #
# Comparisons
# --------------------------------------------------------------------------- #
class _ComparisonSparseSparse(Op):
    """Base of ``x <op> y`` for two sparse matrices of one format: a uint8 sparse matrix.

    Comparisons are piecewise constant, so they have no gradient.
    """

    __props__ = ()
    #: The SciPy comparison, applied to the two matrices.
    comparison = None

    def make_node(self, x, y):
        x = sb.as_sparse_variable(x)
        y = sb.as_sparse_variable(y)
        if x.type.format != y.type.format:
            raise NotImplementedError(
                f"{type(self).__name__}: comparing a {x.type.format} and a {y.type.format} "
                "matrix is not implemented; convert one of them"
            )
        return Apply(self, [x, y], [SparseTensorType(dtype="uint8", format=x.type.format)()])

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        _check_same_shape(self, x, y)
        out = type(self).comparison(x, y).astype("uint8")
        output_storage[0][0] = out.asformat(node.outputs[0].type.format)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


class _ComparisonSparseDense(Op):
    """Base of ``x <op> y`` for a sparse ``x`` and a dense matrix ``y``: a uint8 dense matrix."""

    __props__ = ()
    comparison = None

    def make_node(self, x, y):
        x = sb.as_sparse_variable(x)
        y = _tb.as_tensor_variable(y)
        if y.type.ndim != 2:
            raise TypeError(f"{type(self).__name__}: the dense operand must be a matrix, got {y.type}")
        return Apply(self, [x, y], [tensor(dtype="uint8", shape=(None, None))])

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        _check_same_shape(self, x, y)
        out = type(self).comparison(x, y)
        out = out.toarray() if scipy.sparse.issparse(out) else np.asarray(out)
        output_storage[0][0] = out.astype("uint8")

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


def _comparison_ops(name, fn):
    ss = type(f"{name}SparseSparse", (_ComparisonSparseSparse,), {"comparison": staticmethod(fn)})
    sd = type(f"{name}SparseDense", (_ComparisonSparseDense,), {"comparison": staticmethod(fn)})
    ss.__module__ = sd.__module__ = __name__
    ss.__doc__ = f"``{name}`` of two sparse matrices (uint8 sparse result)."
    sd.__doc__ = f"``{name}`` of a sparse and a dense matrix (uint8 dense result)."
    return ss, sd


EqualSparseSparse, EqualSparseDense = _comparison_ops("Equal", lambda x, y: x == y)
NotEqualSparseSparse, NotEqualSparseDense = _comparison_ops("NotEqual", lambda x, y: x != y)
LessThanSparseSparse, LessThanSparseDense = _comparison_ops("LessThan", lambda x, y: x < y)
GreaterThanSparseSparse, GreaterThanSparseDense = _comparison_ops("GreaterThan", lambda x, y: x > y)
LessEqualSparseSparse, LessEqualSparseDense = _comparison_ops("LessEqual", lambda x, y: x <= y)
GreaterEqualSparseSparse, GreaterEqualSparseDense = _comparison_ops("GreaterEqual", lambda x, y: x >= y)
# The names of these ops in earlier PyTensor 3 releases.
EqualSS, EqualSD = EqualSparseSparse, EqualSparseDense
NotEqualSS, NotEqualSD = NotEqualSparseSparse, NotEqualSparseDense
LessThanSS, LessThanSD = LessThanSparseSparse, LessThanSparseDense
GreaterThanSS, GreaterThanSD = GreaterThanSparseSparse, GreaterThanSparseDense
LessEqualSS, LessEqualSD = LessEqualSparseSparse, LessEqualSparseDense
GreaterEqualSS, GreaterEqualSD = GreaterEqualSparseSparse, GreaterEqualSparseDense

equal_s_s, equal_s_d = EqualSparseSparse(), EqualSparseDense()
not_equal_s_s, not_equal_s_d = NotEqualSparseSparse(), NotEqualSparseDense()
less_than_s_s, less_than_s_d = LessThanSparseSparse(), LessThanSparseDense()
greater_than_s_s, greater_than_s_d = GreaterThanSparseSparse(), GreaterThanSparseDense()
less_equal_s_s, less_equal_s_d = LessEqualSparseSparse(), LessEqualSparseDense()
greater_equal_s_s, greater_equal_s_d = GreaterEqualSparseSparse(), GreaterEqualSparseDense()


def _comparison(ss, sd, ds, doc):
    def compare(x, y):
        x, y = _as_operand(x), _as_operand(y)
        x_sparse, y_sparse = sb._is_sparse_variable(x), sb._is_sparse_variable(y)
        if x_sparse and y_sparse:
            return ss(x, y)
        if x_sparse:
            return sd(x, y)
        if y_sparse:
            # A dense matrix cannot be the left operand: swap, with the mirrored op.
            return ds(y, x)
        raise TypeError("sparse comparisons need at least one sparse operand")

    compare.__doc__ = doc
    return compare


eq = _comparison(equal_s_s, equal_s_d, equal_s_d, "``x == y`` with at least one sparse operand.")
neq = _comparison(not_equal_s_s, not_equal_s_d, not_equal_s_d, "``x != y`` with at least one sparse operand.")
lt = _comparison(less_than_s_s, less_than_s_d, greater_than_s_d, "``x < y`` with at least one sparse operand.")
gt = _comparison(greater_than_s_s, greater_than_s_d, less_than_s_d, "``x > y`` with at least one sparse operand.")
le = _comparison(less_equal_s_s, less_equal_s_d, greater_equal_s_d, "``x <= y`` with at least one sparse operand.")
ge = _comparison(greater_equal_s_s, greater_equal_s_d, less_equal_s_d, "``x >= y`` with at least one sparse operand.")


# --------------------------------------------------------------------------- #
# Structured dot
# --------------------------------------------------------------------------- #
class StructuredDot(Op):
    """``a @ b`` for a sparse ``a`` and a dense or sparse matrix ``b``.

    A dense ``b`` gives a dense result, a sparse ``b`` a sparse one. The
    gradient wrt ``a`` is structured (``structured_dot_grad``).
    """

    __props__ = ()

    def make_node(self, a, b):
        a = sb.as_sparse_variable(a)
        if a.type.format not in ("csr", "csc", "bsr"):
            raise TypeError(f"StructuredDot: unsupported format {a.type.format!r}")
        b = _as_operand(b)
        if b.type.ndim != 2:
            raise NotImplementedError(f"StructuredDot needs a matrix b, got {b} of type {b.type}")
        dtype_out = upcast(a.type.dtype, b.type.dtype)
        if sb._is_sparse_variable(b):
            out = SparseTensorType(a.type.format, dtype_out)()
        else:
            out = tensor(dtype=dtype_out, shape=(None, 1 if b.type.shape[1] == 1 else None))
        return Apply(self, [a, b], [out])

    def perform(self, node, inputs, output_storage):
        a, b = inputs
        if a.shape[1] != b.shape[0]:
            raise ValueError(
                f"StructuredDot: shapes {a.shape} and {b.shape} do not align "
                f"({a.shape[1]} != {b.shape[0]})"
            )
        out_type = node.outputs[0].type
        result = a @ b
        if isinstance(out_type, SparseTensorType):
            output_storage[0][0] = result.asformat(out_type.format).astype(out_type.dtype, copy=False)
        else:
            result = np.asarray(result, dtype=out_type.dtype)
            output_storage[0][0] = result.reshape(a.shape[0], b.shape[1])

    def L_op(self, inputs, outputs, output_grads):
        a, b = inputs
        (g_out,) = output_grads
        return [structured_dot_grad(a, b, g_out), structured_dot(a.T, g_out)]

    def infer_shape(self, fgraph, node, input_shapes):
        return [(input_shapes[0][0], input_shapes[1][1])]


_structured_dot = StructuredDot()


def structured_dot(x, y):
    """``x @ y`` where at least one operand is sparse, with a structured gradient."""
    if scipy.sparse.issparse(x):
        x = sb.as_sparse_variable(x)
    if scipy.sparse.issparse(y):
        y = sb.as_sparse_variable(y)
    x, y = _as_operand(x), _as_operand(y)
    if sb._is_sparse_variable(x):
        return _structured_dot(x, y)
    if sb._is_sparse_variable(y):
        return _structured_dot(y.T, x.T).T
    raise TypeError("structured_dot requires at least one sparse argument")


class _StructuredDotGrad(Op):
    """The gradient of ``a @ b`` wrt the stored entries of a sparse ``a``.

    Inputs: ``a``'s indices and indptr, ``b`` and the output gradient ``g``;
    the stored entry ``(i, j)`` of ``a`` gets ``g[i, :] . b[j, :]``. The
    result is the ``data`` vector of the gradient (``a``'s pattern).
    """

    __props__ = ()
    #: The format of ``a`` whose indices / indptr this op reads.
    format = None

    def make_node(self, a_indices, a_indptr, b, g_ab):
        a_indices = _tb.as_tensor_variable(a_indices)
        a_indptr = _tb.as_tensor_variable(a_indptr)
        b, g_ab = _as_operand(b), _as_operand(g_ab)
        dtype = upcast(b.type.dtype, g_ab.type.dtype)
        return Apply(self, [a_indices, a_indptr, b, g_ab], [tensor(dtype=dtype, shape=(None,))])

    def perform(self, node, inputs, output_storage):
        indices, indptr, b, g = inputs
        if scipy.sparse.issparse(b):
            b = b.toarray()
        if scipy.sparse.issparse(g):
            g = g.toarray()
        major = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
        rows, cols = (major, indices) if self.format == "csr" else (indices, major)
        out = np.einsum("ij,ij->i", g[rows], b[cols]) if len(rows) else np.zeros(0)
        output_storage[0][0] = np.asarray(out, dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


class StructuredDotGradCSC(_StructuredDotGrad):
    """``_StructuredDotGrad`` for a CSC ``a``."""

    format = "csc"


class StructuredDotGradCSR(_StructuredDotGrad):
    """``_StructuredDotGrad`` for a CSR ``a``."""

    format = "csr"


sdg_csc = StructuredDotGradCSC()
sdg_csr = StructuredDotGradCSR()


def structured_dot_grad(sparse_A, dense_B, ga):
    """The structured gradient of ``sparse_A @ dense_B`` wrt ``sparse_A``, given ``ga``."""
    fmt = sparse_A.type.format
    if fmt not in ("csc", "csr"):
        raise NotImplementedError(f"structured_dot_grad: unsupported format {fmt!r}")
    grad_op, build = (sdg_csc, sb.CSC) if fmt == "csc" else (sdg_csr, sb.CSR)
    indices, indptr = sb.csm_indices(sparse_A), sb.csm_indptr(sparse_A)
    g_data = grad_op(indices, indptr, dense_B, ga)
    return build(g_data, indices, indptr, sb.csm_shape(sparse_A))


# --------------------------------------------------------------------------- #
# Dot with a dense result
# --------------------------------------------------------------------------- #
class Dot(Op):
    """``x @ y`` where at least one operand is sparse; the result is always dense.

    A dense operand may be a vector (``x @ v``, ``v @ x``). The gradient is
    regular: it does not keep the sparsity pattern of a sparse operand.
    """

    __props__ = ()

    def __str__(self):
        return "Sparse" + type(self).__name__

    def make_node(self, x, y):
        x, y = _as_operand(x), _as_operand(y)
        x_sparse, y_sparse = sb._is_sparse_variable(x), sb._is_sparse_variable(y)
        if not (x_sparse or y_sparse):
            raise TypeError(
                "Sparse dot product should have at least one sparse variable as inputs, but "
                f"the inputs are {x} ({x.type}) and {y} ({y.type})."
            )
        for k, (v, sparse) in enumerate(((x, x_sparse), (y, y_sparse))):
            if not sparse and v.type.ndim not in (1, 2):
                raise TypeError(f"Input {k} (0-indexed) must have ndim of 1 or 2, {v.type.ndim} given.")
        shape_x = (None,) * x.type.ndim if x_sparse else x.type.shape
        shape_y = (None,) * y.type.ndim if y_sparse else y.type.shape
        shape_out = shape_x[:-1] + shape_y[1:]
        dtype = upcast(x.type.dtype, y.type.dtype)
        return Apply(self, [x, y], [tensor(dtype=dtype, shape=shape_out)])

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        if x.shape[-1] != y.shape[0]:
            raise ValueError(f"SparseDot: shapes {x.shape} and {y.shape} do not align")
        result = x @ y
        if scipy.sparse.issparse(result):
            result = result.toarray()
        output_storage[0][0] = np.asarray(result, dtype=node.outputs[0].type.dtype)

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor.math import dot as dense_dot

        x, y = inputs
        (gz,) = output_grads
        # A sparse operand is a matrix, so at most the other one is a vector.
        # Both gradients of ``x @ v`` are then products with a vector
        # already (``X.T @ gz`` is the hot half of a regression step): no
        # one-column matrix is built and taken apart again.
        if y.type.ndim == 1:
            return [dense_dot(gz.dimshuffle(0, "x"), y.dimshuffle("x", 0)), dot(x.T, gz)]
        if x.type.ndim == 1:
            return [dot(gz, y.T), dense_dot(x.dimshuffle(0, "x"), gz.dimshuffle("x", 0))]
        gx = dot(gz, y.T) if sb._is_sparse_variable(y) else dense_dot(gz, y.T)
        gy = dot(x.T, gz) if sb._is_sparse_variable(x) else dense_dot(x.T, gz)
        return [gx, gy]

    def infer_shape(self, fgraph, node, input_shapes):
        xshp, yshp = input_shapes
        return [tuple(xshp[:-1]) + tuple(yshp[1:])]


_dot = Dot()


def dot(x, y):
    """``x @ y`` where at least one of the operands is sparse (CSR/CSC); dense result."""
    x, y = _as_operand(x), _as_operand(y)
    if not (sb._is_sparse_variable(x) or sb._is_sparse_variable(y)):
        raise TypeError("sparse.dot needs at least one sparse operand; use lucent.tensor.dot otherwise")
    return _dot(x, y)


__all__ = [
    "Dot",
    "dot",
    "eq",
    "neq",
    "lt",
    "gt",
    "le",
    "ge",
    "SpSum",
    "sp_sum",
    "neg",
    "conjugate",
    "conj",
    "structured_conjugate",
    "AddSparseSparse",
    "AddSS",
    "add_s_s",
    "AddSparseDense",
    "AddSD",
    "add_s_d",
    "add",
    "subtract",
    "sub",
    "MultiplySparseSparse",
    "SparseSparseMultiply",
    "mul_s_s",
    "MultiplySparseDense",
    "SparseDenseMultiply",
    "mul_s_d",
    "multiply",
    "mul",
    "StructuredDot",
    "structured_dot",
    "StructuredDotGradCSC",
    "StructuredDotGradCSR",
    "sdg_csc",
    "sdg_csr",
    "structured_dot_grad",
]

from lucent.sparse.structured import *  # noqa: E402,F401,F403
from lucent.sparse.structured import __all__ as _structured_all  # noqa: E402
from lucent.sparse.products import *  # noqa: E402,F401,F403
from lucent.sparse.products import __all__ as _products_all  # noqa: E402

__all__ += _structured_all + _products_all
