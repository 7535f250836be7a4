"""Sparse matrices in graphs: constructors, conversions and the CSR/CSC parts.

A compressed sparse matrix is four arrays: ``data`` (the stored values),
``indices`` (their column, for CSR, or row, for CSC), ``indptr`` (where each
row, or column, starts in ``data``) and ``shape``. ``CSMProperties`` takes a
matrix apart into them and ``CSM`` builds one from them; together they let
element-wise math on the stored values be ordinary dense tensor math on
``data`` (``sp_ones_like``, the structured ops of ``lucent.sparse.math``).

``DenseFromSparse`` / ``SparseFromDense`` convert between the two worlds and
``Transpose`` swaps CSR and CSC without copying. Every op computes with SciPy
in ``perform``; sparse values have no Numba representation, so a graph
holding one runs on the Python linker (the Numba linker says so).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse

from lucent.configdefaults import config
from lucent.gradient import DisconnectedType, disconnected_type
from lucent.graph.basic import Apply, Variable
from lucent.graph.op import Op
from lucent.sparse.type import SparseTensorType, _is_sparse
from lucent.tensor import basic as _tb
from lucent.tensor.type import TensorType, ivector, tensor

sparse_formats = ["csc", "csr"]

#: The SciPy matrix classes the ops here accept, and their format names.
_mtypes = [scipy.sparse.csc_matrix, scipy.sparse.csr_matrix]
_mtype_to_str = {scipy.sparse.csc_matrix: "csc", scipy.sparse.csr_matrix: "csr"}


def _is_sparse_variable(x):
    """True iff the variable ``x`` has a ``SparseTensorType``."""
    if not isinstance(x, Variable):
        raise NotImplementedError(
            f"_is_sparse_variable expects a symbolic variable, got {type(x).__name__}"
        )
    return isinstance(x.type, SparseTensorType)


def _is_dense_variable(x):
    """True iff the variable ``x`` is a dense tensor (a ``TensorType`` that is not sparse)."""
    if not isinstance(x, Variable):
        raise NotImplementedError(
            f"_is_dense_variable expects a symbolic variable, got {type(x).__name__}"
        )
    return isinstance(x.type, TensorType) and not isinstance(x.type, SparseTensorType)


def _is_dense(x):
    """True iff ``x`` is an ndarray (False for a SciPy sparse matrix)."""
    if not isinstance(x, (scipy.sparse.spmatrix, np.ndarray)):
        raise NotImplementedError(
            f"_is_dense expects a scipy.sparse matrix or a numpy.ndarray, got {type(x).__name__}"
        )
    return isinstance(x, np.ndarray)


def as_sparse_variable(x, name=None, ndim=None, **kwargs):
    """``x`` as a sparse variable: sparse variables pass, SciPy matrices become constants.

    A dense variable is refused with ``TypeError`` (convert it with
    ``csr_from_dense`` / ``csc_from_dense``).
    """
    if isinstance(x, Apply):
        if len(x.outputs) != 1:
            raise ValueError(
                "It is ambiguous which output of a multi-output Op has to be fetched.", x
            )
        x = x.outputs[0]
    if isinstance(x, Variable):
        if not isinstance(x.type, SparseTensorType):
            raise TypeError(
                f"Variable type field must be a SparseTensorType: {x} has type {x.type}; "
                "use csr_from_dense / csc_from_dense to make a dense tensor sparse"
            )
        return x
    from lucent.sparse.variable import constant

    try:
        return constant(x, name=name)
    except TypeError:
        raise TypeError(
            f"Cannot convert {type(x).__name__} to SparseTensorType: expected a "
            "scipy.sparse csr/csc/bsr matrix or a sparse variable"
        ) from None


as_sparse = as_sparse_variable


def as_sparse_or_tensor_variable(x, name=None, **kwargs):
    """A sparse variable for sparse input (symbolic or SciPy), a dense tensor otherwise."""
    if isinstance(x, Apply):
        x = x.default_output() if len(x.outputs) != 1 else x.outputs[0]
    if isinstance(x, Variable) and isinstance(x.type, SparseTensorType):
        return x
    if scipy.sparse.issparse(x):
        return as_sparse_variable(x, name=name)
    return _tb.as_tensor_variable(x, name=name, **kwargs)


# --------------------------------------------------------------------------- #
# Constructors of symbolic sparse matrices
# --------------------------------------------------------------------------- #
def matrix(format, name=None, dtype=None, shape=None):
    """A symbolic sparse matrix of ``format`` (``dtype`` defaults to ``config.floatX``)."""
    if dtype is None:
        dtype = config.floatX
    return SparseTensorType(format=format, dtype=dtype, shape=shape)(name)


def csc_matrix(name=None, dtype=None, shape=None):
    """A symbolic CSC matrix."""
    return matrix("csc", name=name, dtype=dtype, shape=shape)


def csr_matrix(name=None, dtype=None, shape=None):
    """A symbolic CSR matrix."""
    return matrix("csr", name=name, dtype=dtype, shape=shape)


def bsr_matrix(name=None, dtype=None):
    """A symbolic BSR (block sparse row) matrix."""
    return matrix("bsr", name=name, dtype=dtype)


csc_dmatrix = SparseTensorType(format="csc", dtype="float64")
csr_dmatrix = SparseTensorType(format="csr", dtype="float64")
bsr_dmatrix = SparseTensorType(format="bsr", dtype="float64")
csc_fmatrix = SparseTensorType(format="csc", dtype="float32")
csr_fmatrix = SparseTensorType(format="csr", dtype="float32")
bsr_fmatrix = SparseTensorType(format="bsr", dtype="float32")

all_dtypes = list(SparseTensorType.dtype_specs_map)
complex_dtypes = [t for t in all_dtypes if t.startswith("complex")]
float_dtypes = [t for t in all_dtypes if t.startswith("float")]
int_dtypes = [t for t in all_dtypes if t.startswith("int")]
uint_dtypes = [t for t in all_dtypes if t.startswith("uint")]
integer_dtypes = int_dtypes + uint_dtypes
continuous_dtypes = complex_dtypes + float_dtypes
discrete_dtypes = int_dtypes + uint_dtypes


def _compressed(x, what):
    """``x`` as a sparse variable in CSR or CSC format, or a clear ``TypeError``."""
    x = as_sparse_variable(x)
    if x.type.format not in ("csr", "csc"):
        raise TypeError(f"{what} needs a CSR or CSC matrix, got format {x.type.format!r}")
    return x


# --------------------------------------------------------------------------- #
# Taking a matrix apart and building one
# --------------------------------------------------------------------------- #
class CSMProperties(Op):
    """The ``(data, indices, indptr, shape)`` arrays of a CSR or CSC matrix.

    ``data`` keeps the matrix's dtype; the others are int32 vectors. The
    first three are views of the matrix's own arrays (``view_map``). The
    gradient is regular: the gradient of ``data`` becomes a matrix with the
    input's sparsity pattern.
    """

    __props__ = ()
    view_map = {0: [0], 1: [0], 2: [0]}

    def __init__(self, kmap=None):
        if kmap is not None:
            raise TypeError("CSMProperties no longer takes kmap")

    def make_node(self, csm):
        csm = _compressed(csm, "CSMProperties")
        data = tensor(dtype=csm.type.dtype, shape=(None,))
        return Apply(self, [csm], [data, ivector(), ivector(), ivector()])

    def perform(self, node, inputs, output_storage):
        (csm,) = inputs
        output_storage[0][0] = np.asarray(csm.data)
        output_storage[1][0] = np.asarray(csm.indices, dtype="int32")
        output_storage[2][0] = np.asarray(csm.indptr, dtype="int32")
        output_storage[3][0] = np.asarray(csm.shape, dtype="int32")

    def infer_shape(self, fgraph, node, input_shapes):
        # The lengths of data / indices depend on the values (the number of
        # stored entries); those two are read from the outputs at run time.
        x = node.inputs[0]
        rows, cols = input_shapes[0]
        major = rows if x.type.format == "csr" else cols
        nnz = node.outputs[0].shape[0]
        return [(nnz,), (nnz,), (major + 1,), (_tb.constant(2, dtype="int64"),)]

    def L_op(self, inputs, outputs, output_grads):
        (csm,) = inputs
        if isinstance(output_grads[0].type, DisconnectedType):
            return [sp_zeros_like(csm)]
        _data, indices, indptr, shape = csm_properties(csm)
        return [CSM(csm.type.format)(output_grads[0], indices, indptr, shape)]


csm_properties = CSMProperties()


def csm_data(csm):
    """The stored values of a CSR/CSC matrix."""
    return csm_properties(csm)[0]


def csm_indices(csm):
    """The column (CSR) or row (CSC) index of each stored value."""
    return csm_properties(csm)[1]


def csm_indptr(csm):
    """Where each row (CSR) or column (CSC) starts in ``data``."""
    return csm_properties(csm)[2]


def csm_shape(csm):
    """The matrix's shape as an int32 vector."""
    return csm_properties(csm)[3]


def _int_vector_input(value, what):
    if not isinstance(value, Variable):
        raw = np.asarray(value)
        as32 = raw.astype("int32")
        if raw.size and (raw.dtype.kind not in "iub" or not np.array_equal(raw, as32)):
            raise TypeError(f"CSM: {what} must be integers that fit in int32, got {value!r}")
        value = as32
    value = _tb.as_tensor_variable(value)
    if value.type.ndim != 1 or value.type.dtype not in discrete_dtypes:
        raise TypeError(f"CSM: {what} must be a vector of integers, got {value} of type {value.type}")
    return value


class CSM(Op):
    """Build a CSR or CSC matrix from ``data``, ``indices``, ``indptr`` and ``shape``.

    The output's values are a view of ``data`` (``view_map``); ``indices``
    and ``indptr`` are copied. The gradient flows to ``data`` only, as a
    dense vector (``CSMGrad``).
    """

    __props__ = ("format",)

    def __init__(self, format, kmap=None):
        if format not in ("csr", "csc"):
            raise ValueError(f"CSM format must be 'csr' or 'csc', got {format!r}")
        if kmap is not None:
            raise TypeError("CSM no longer takes kmap")
        self.format = format
        self.view_map = {0: [0]}

    def make_node(self, data, indices, indptr, shape):
        data = _tb.as_tensor_variable(data)
        if data.type.ndim != 1:
            raise TypeError(f"CSM: data argument must be a vector, got {data} of type {data.type}")
        indices = _int_vector_input(indices, "indices")
        indptr = _int_vector_input(indptr, "indptr")
        shape = _int_vector_input(shape, "shape")
        static_shape = (None, None)
        if (
            shape.owner is not None
            and isinstance(shape.owner.op, CSMProperties)
            and shape.owner.outputs[3] is shape
        ):
            static_shape = shape.owner.inputs[0].type.shape
        out = SparseTensorType(format=self.format, dtype=data.type.dtype, shape=static_shape)()
        return Apply(self, [data, indices, indptr, shape], [out])

    def perform(self, node, inputs, output_storage):
        data, indices, indptr, shape = inputs
        if len(shape) != 2:
            raise ValueError(f"CSM: shape must have 2 entries, got {list(shape)}")
        if data.shape != indices.shape:
            raise ValueError(
                f"CSM: data (shape {data.shape}) must have the same number of elements "
                f"as indices (shape {indices.shape})"
            )
        cls = scipy.sparse.csc_matrix if self.format == "csc" else scipy.sparse.csr_matrix
        output_storage[0][0] = cls(
            (data, indices.copy(), indptr.copy()), shape=tuple(int(s) for s in shape), copy=False
        )

    def connection_pattern(self, node):
        return [[True], [False], [False], [False]]

    def L_op(self, inputs, outputs, output_grads):
        x_data, x_indices, x_indptr, x_shape = inputs
        (g_out,) = output_grads
        g_data, g_indices, g_indptr, g_shape = csm_properties(g_out)
        g_x_data = csm_grad()(x_data, x_indices, x_indptr, x_shape, g_data, g_indices, g_indptr, g_shape)
        return [g_x_data, disconnected_type(), disconnected_type(), disconnected_type()]

    def infer_shape(self, fgraph, node, input_shapes):
        shape = node.inputs[3]
        return [(shape[0], shape[1])]


CSC = CSM("csc")
CSR = CSM("csr")


class CSMGrad(Op):
    """Gradient of ``CSM`` wrt ``data``: the entries of a sparse gradient at ``x``'s places.

    The gradient matrix may store fewer entries than ``x`` (zeros are not
    stored) or store them in another order, so each stored entry of ``x``
    looks its value up in the gradient's row (CSR) or column (CSC); entries
    missing there get 0.
    """

    __props__ = ()

    def __init__(self, kmap=None):
        if kmap is not None:
            raise TypeError("CSMGrad no longer takes kmap")

    def make_node(self, x_data, x_indices, x_indptr, x_shape, g_data, g_indices, g_indptr, g_shape):
        inputs = [x_data, x_indices, x_indptr, x_shape, g_data, g_indices, g_indptr, g_shape]
        inputs = [_tb.as_tensor_variable(v) for v in inputs]
        return Apply(self, inputs, [inputs[4].type()])

    def perform(self, node, inputs, output_storage):
        x_data, x_indices, x_indptr, x_shape, g_data, g_indices, g_indptr, _ = inputs
        n_major = len(x_indptr) - 1
        n_minor = x_shape[1] if n_major == x_shape[0] else x_shape[0]
        out = np.zeros(x_data.shape, dtype=node.outputs[0].type.dtype)
        row = np.zeros(n_minor, dtype=g_data.dtype)
        for i in range(n_major):
            g_slice = slice(g_indptr[i], g_indptr[i + 1])
            np.add.at(row, g_indices[g_slice], g_data[g_slice])
            x_slice = slice(x_indptr[i], x_indptr[i + 1])
            out[x_slice] = row[x_indices[x_slice]]
            row[g_indices[g_slice]] = 0
        output_storage[0][0] = out

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[1]]


csm_grad = CSMGrad


# --------------------------------------------------------------------------- #
# dtype casts
# --------------------------------------------------------------------------- #
class Cast(Op):
    """A CSR/CSC matrix with its values cast to ``out_type``; regular gradient."""

    __props__ = ("out_type",)

    def __init__(self, out_type):
        self.out_type = str(np.dtype(out_type))

    def __str__(self):
        return f"{type(self).__name__}({self.out_type})"

    def make_node(self, x):
        x = _compressed(x, "Cast")
        return Apply(self, [x], [SparseTensorType(dtype=self.out_type, format=x.type.format, shape=x.type.shape)()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0].astype(self.out_type)

    def L_op(self, inputs, outputs, output_grads):
        (x,) = inputs
        (gz,) = output_grads
        if gz.type.dtype in complex_dtypes or x.type.dtype in complex_dtypes:
            raise NotImplementedError("the gradient of a sparse Cast is not implemented for complex dtypes")
        if gz.type.dtype in discrete_dtypes:
            return [sp_zeros_like(x) if x.type.dtype not in discrete_dtypes else sp_zeros_like(Cast(config.floatX)(x))]
        if x.type.dtype in discrete_dtypes:
            return [gz]
        return [Cast(x.type.dtype)(gz)]

    def infer_shape(self, fgraph, node, input_shapes):
        return input_shapes


bcast = Cast("int8")
wcast = Cast("int16")
icast = Cast("int32")
lcast = Cast("int64")
fcast = Cast("float32")
dcast = Cast("float64")
ccast = Cast("complex64")
zcast = Cast("complex128")


def cast(variable, dtype):
    """``variable`` (a sparse matrix) with its values cast to ``dtype``."""
    return Cast(dtype)(variable)


# --------------------------------------------------------------------------- #
# Sparse <-> dense
# --------------------------------------------------------------------------- #
class DenseFromSparse(Op):
    """The dense ndarray of a sparse matrix (``x.toarray()``).

    ``structured=True`` (the default) gives a *structured* gradient: only
    the stored entries of ``x`` receive gradient, so the gradient keeps
    ``x``'s sparsity pattern. ``structured=False`` gives the full dense
    gradient made sparse.
    """

    __props__ = ()

    def __init__(self, structured=True):
        self.sparse_grad = structured

    def __str__(self):
        return f"{type(self).__name__}{{structured_grad={self.sparse_grad}}}"

    def __call__(self, x, **kwargs):
        if not isinstance(getattr(x, "type", None), SparseTensorType) and isinstance(x, Variable):
            return x
        return super().__call__(x, **kwargs)

    def make_node(self, x):
        x = as_sparse_variable(x)
        return Apply(self, [x], [tensor(dtype=x.type.dtype, shape=x.type.shape)])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        if isinstance(x, np.ndarray):
            warnings.warn("DenseFromSparse was given a dense ndarray; it is returned as is")
            output_storage[0][0] = x
        else:
            output_storage[0][0] = np.asarray(x.toarray())

    def L_op(self, inputs, outputs, output_grads):
        (x,) = inputs
        (gz,) = output_grads
        if self.sparse_grad:
            from lucent.sparse.math import multiply

            ones = sp_ones_like(x)
            if gz.type.dtype == "float64" and ones.type.dtype == "float32":
                ones = cast(ones, "float64")
            if gz.type.dtype == "float32" and ones.type.dtype == "float64":
                gz = _tb.cast(gz, "float64")
            return [multiply(ones, gz)]
        return [SparseFromDense(x.type.format)(gz)]

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


dense_from_sparse = DenseFromSparse()


class SparseFromDense(Op):
    """A dense matrix (or vector / scalar, made a one-row matrix) as a sparse matrix of ``format``."""

    __props__ = ("format",)

    def __init__(self, format):
        if format not in SparseTensorType.format_cls:
            raise ValueError(f"unsupported sparse format {format!r}")
        self.format = format

    def __str__(self):
        return f"{type(self).__name__}{{{self.format}}}"

    def __call__(self, x, **kwargs):
        if isinstance(getattr(x, "type", None), SparseTensorType):
            return x
        return super().__call__(x, **kwargs)

    def make_node(self, x):
        x = _tb.as_tensor_variable(x)
        if x.type.ndim > 2:
            raise TypeError(
                f"sparse tensors have at most 2 dimensions, but {x} has {x.type.ndim}"
            )
        if x.type.ndim == 1:
            x = x.dimshuffle("x", 0)
        elif x.type.ndim == 0:
            x = x.dimshuffle("x", "x")
        out = SparseTensorType(dtype=x.type.dtype, format=self.format, shape=x.type.shape)()
        return Apply(self, [x], [out])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = SparseTensorType.format_cls[self.format](inputs[0])

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor.shape import specify_broadcastable

        (x,) = inputs
        gx = dense_from_sparse(output_grads[0])
        axes = [ax for ax, b in enumerate(x.type.broadcastable) if b]
        if axes:
            gx = specify_broadcastable(gx, *axes)
        return [gx]

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]


csr_from_dense = SparseFromDense("csr")
csc_from_dense = SparseFromDense("csc")


# --------------------------------------------------------------------------- #
# Transpose
# --------------------------------------------------------------------------- #
class Transpose(Op):
    """The transpose of a CSR (CSC) matrix, as a CSC (CSR) matrix sharing its arrays."""

    view_map = {0: [0]}
    format_map = {"csr": "csc", "csc": "csr"}
    __props__ = ()

    def __str__(self):
        return "Sparse" + type(self).__name__

    def make_node(self, x):
        x = _compressed(x, "Transpose")
        out = SparseTensorType(
            dtype=x.type.dtype, format=self.format_map[x.type.format], shape=x.type.shape[::-1]
        )()
        return Apply(self, [x], [out])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0].transpose()

    def L_op(self, inputs, outputs, output_grads):
        return [transpose(output_grads[0])]

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(input_shapes[0][::-1])]


transpose = Transpose()


# --------------------------------------------------------------------------- #
# Patterns
# --------------------------------------------------------------------------- #
def sp_ones_like(x):
    """A sparse matrix with ``x``'s sparsity pattern and 1 at every stored entry."""
    data, indices, indptr, shape = csm_properties(x)
    return CSM(format=x.type.format)(_tb.ones_like(data), indices, indptr, shape)


def sp_zeros_like(x):
    """An all-zero sparse matrix (nothing stored) with ``x``'s shape and format."""
    _, _, indptr, shape = csm_properties(x)
    return CSM(format=x.type.format)(
        np.array([], dtype=x.type.dtype),
        np.array([], dtype="int32"),
        _tb.zeros_like(indptr),
        shape,
    )


# Ops on the storage and indexing ops live in their own modules; their
# names are part of this module's API.
from lucent.sparse.indexing import *  # noqa: E402,F401,F403
from lucent.sparse.indexing import __all__ as _indexing_all  # noqa: E402
from lucent.sparse.structure import *  # noqa: E402,F401,F403
from lucent.sparse.structure import __all__ as _structure_all  # noqa: E402

__all__ = [
    *_indexing_all,
    *_structure_all,
    "sparse_formats",
    "as_sparse_variable",
    "as_sparse",
    "as_sparse_or_tensor_variable",
    "matrix",
    "csc_matrix",
    "csr_matrix",
    "bsr_matrix",
    "csc_dmatrix",
    "csr_dmatrix",
    "bsr_dmatrix",
    "csc_fmatrix",
    "csr_fmatrix",
    "bsr_fmatrix",
    "all_dtypes",
    "complex_dtypes",
    "float_dtypes",
    "int_dtypes",
    "uint_dtypes",
    "integer_dtypes",
    "continuous_dtypes",
    "discrete_dtypes",
    "CSMProperties",
    "csm_properties",
    "csm_data",
    "csm_indices",
    "csm_indptr",
    "csm_shape",
    "CSM",
    "CSC",
    "CSR",
    "CSMGrad",
    "csm_grad",
    "Cast",
    "cast",
    "bcast",
    "wcast",
    "icast",
    "lcast",
    "fcast",
    "dcast",
    "ccast",
    "zcast",
    "DenseFromSparse",
    "dense_from_sparse",
    "SparseFromDense",
    "csr_from_dense",
    "csc_from_dense",
    "Transpose",
    "transpose",
    "sp_ones_like",
    "sp_zeros_like",
    "SparseTensorType",
]
