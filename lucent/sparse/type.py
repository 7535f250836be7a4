"""``SparseTensorType``: the type of SciPy compressed sparse matrices.

A sparse value is a ``scipy.sparse`` matrix in one *format*: CSR (rows
compressed), CSC (columns compressed) or BSR (blocks). The format is part of
the type, like the dtype: a CSR variable never holds a CSC matrix, because
the ops that take sparse inputs read the ``data`` / ``indices`` / ``indptr``
arrays directly and their meaning depends on the format.

``SparseTensorType`` is a subclass of ``TensorType`` (a sparse matrix is a
2-d tensor whose zeros are not stored), so code asking "is this a tensor of
rank 2?" answers yes for it; code that needs the array layout of a dense
tensor must test for ``SparseTensorType`` first. On the Numba path CSR and
CSC values are the struct of their three arrays (``numba_unsupported``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse

from lucent.graph.basic import Variable
from lucent.scalar.dtypes import upcast
from lucent.tensor.type import TensorType


def _is_sparse(x):
    """True iff ``x`` is a SciPy sparse matrix (False for an ndarray, tuple or list).

    Anything else is a programming error, reported as ``NotImplementedError``.
    """
    if not isinstance(x, (scipy.sparse.spmatrix, np.ndarray, tuple, list)):
        raise NotImplementedError(
            f"_is_sparse expects a scipy.sparse matrix or a numpy.ndarray, got {type(x).__name__}"
        )
    return isinstance(x, scipy.sparse.spmatrix)


class SparseTensorType(TensorType):
    """Type of ``scipy.sparse`` matrices of one format and dtype (see module docstring).

    Parameters
    ----------
    format
        ``'csr'``, ``'csc'`` or ``'bsr'``.
    dtype
        The dtype of the stored values.
    shape
        Static lengths of the two dimensions (``None`` = unknown), default
        ``(None, None)``.
    """

    __props__ = ("dtype", "format", "shape")
    format_cls = {
        "csr": scipy.sparse.csr_matrix,
        "csc": scipy.sparse.csc_matrix,
        "bsr": scipy.sparse.bsr_matrix,
    }
    #: The dtypes a sparse matrix may hold, with their Python scalar kind.
    dtype_specs_map = {
        "float32": (float, "npy_float32", "NPY_FLOAT32"),
        "float64": (float, "npy_float64", "NPY_FLOAT64"),
        "uint8": (int, "npy_uint8", "NPY_UINT8"),
        "int8": (int, "npy_int8", "NPY_INT8"),
        "uint16": (int, "npy_uint16", "NPY_UINT16"),
        "int16": (int, "npy_int16", "NPY_INT16"),
        "uint32": (int, "npy_uint32", "NPY_UINT32"),
        "int32": (int, "npy_int32", "NPY_INT32"),
        "uint64": (int, "npy_uint64", "NPY_UINT64"),
        "int64": (int, "npy_int64", "NPY_INT64"),
        "complex128": (complex, "lucent_complex128", "NPY_COMPLEX128"),
        "complex64": (complex, "lucent_complex64", "NPY_COMPLEX64"),
    }

    @property
    def numba_unsupported(self):
        """Why the Numba linker cannot hold these values, or ``None``.

        CSR and CSC matrices enter compiled code as the struct of their
        arrays (``lucent.link.numba.dispatch.sparse_types``); BSR matrices
        have no Numba form, so a graph holding one runs on the Python linker.
        """
        if self.format == "bsr":
            return "BSR matrices have no Numba representation; the graph runs on the Python linker"
        return None

    def __init__(self, format, dtype, shape=None, name=None, broadcastable=None):
        if format not in self.format_cls:
            raise ValueError(
                f"unsupported sparse format {format!r}: expected one of {sorted(self.format_cls)}"
            )
        if shape is None and broadcastable is None:
            shape = (None, None)
        self.format = format
        super().__init__(dtype, shape=shape, name=name, broadcastable=broadcastable)
        if len(self.shape) != 2:
            raise ValueError(f"sparse tensors are matrices (2 dimensions), got shape {self.shape}")

    def clone(self, dtype=None, shape=None, broadcastable=None, **kwargs):
        """A copy with some of ``dtype``, ``shape`` or ``format=`` changed."""
        format = kwargs.pop("format", self.format)
        if dtype is None:
            dtype = self.dtype
        if shape is None and broadcastable is None:
            shape = self.shape
        return type(self)(format, dtype, shape=shape, broadcastable=broadcastable, **kwargs)

    # --- identity --------------------------------------------------------------
    def __eq__(self, other):
        return (
            type(self) is type(other)
            and other.dtype == self.dtype
            and other.shape == self.shape
            and other.format == self.format
        )

    def __hash__(self):
        return hash((type(self), self.dtype, self.shape, self.format))

    def __str__(self):
        if self.name:
            return self.name
        return f"SparseTensorType{{dtype={self.dtype!r}, format={self.format!r}, shape={self.shape}}}"

    def __repr__(self):
        return f"Sparse({self.dtype}, {self.shape}, {self.format})"

    # --- run-time values ---------------------------------------------------------
    def filter(self, value, strict=False, allow_downcast=None):
        """Return ``value`` as a sparse matrix of this format and dtype, or raise ``TypeError``.

        A matrix of the right format and dtype is returned as is. Otherwise,
        unless ``strict``, anything SciPy can turn into this format (another
        sparse format, a dense array) is converted; the dtype may only be
        upcast unless ``allow_downcast`` is true.
        """
        if isinstance(value, Variable):
            raise TypeError(
                "Expected an array-like object, but found a Variable: maybe you are trying "
                "to call a function on a (possibly shared) variable instead of a numeric array?"
            )
        cls = self.format_cls[self.format]
        if isinstance(value, cls) and value.dtype == self.numpy_dtype:
            return self._check_shape(value)
        if strict:
            raise TypeError(
                f"{self!r} expected a scipy.sparse {self.format}_matrix of dtype {self.dtype} "
                f"in strict mode, got {type(value).__name__}"
                + (f" of dtype {value.dtype}" if hasattr(value, "dtype") else "")
            )
        try:
            if allow_downcast:
                converted = cls(value, dtype=self.dtype)
            else:
                converted = cls(value)
                if upcast(self.dtype, converted.dtype.name) != self.dtype:
                    raise TypeError(
                        f"Expected {self.dtype} dtype but got {converted.dtype}: this would "
                        "lose precision; cast the value or set allow_input_downcast=True"
                    )
                converted = converted.astype(self.dtype)
        except TypeError:
            raise
        except (ValueError, AttributeError) as e:
            raise TypeError(
                f"{self!r} cannot convert a {type(value).__name__} into a {self.format} matrix: {e}"
            ) from None
        return self._check_shape(converted)

    def _check_shape(self, value):
        if value.ndim != 2:  # pragma: no cover - SciPy matrices are always 2-d
            raise TypeError(f"{self!r} expected a matrix, got {value.ndim} dimensions")
        if any(s is not None and s != d for s, d in zip(self.shape, value.shape)):
            raise TypeError(
                f"The type's shape {self.shape} is not compatible with the data's {value.shape}"
            )
        return value

    def filter_inplace(self, value, storage, strict=False, allow_downcast=None):
        raise NotImplementedError("sparse values are never overwritten in place")

    def is_valid_value(self, a, strict=True):
        return scipy.sparse.issparse(a) and a.format == self.format

    def value_zeros(self, shape):
        return self.format_cls[self.format](tuple(shape), dtype=self.dtype)

    # --- comparing values ------------------------------------------------------------
    def values_eq(self, a, b):
        """Exact equality of two sparse matrices (explicit zeros do not matter)."""
        if not (scipy.sparse.issparse(a) and scipy.sparse.issparse(b)) or a.shape != b.shape:
            return False
        return _same_nans(a, b) and abs(_without_nan(a) - _without_nan(b)).sum() == 0

    def values_eq_approx(self, a, b, eps=1e-6, **kwargs):
        """Equal up to ``eps`` in every stored entry; NaNs must sit at the same places."""
        if not (scipy.sparse.issparse(a) and scipy.sparse.issparse(b)) or a.shape != b.shape:
            return False
        if not _same_nans(a, b):
            return False
        diff = abs(_without_nan(a) - _without_nan(b))
        if diff.nnz == 0:
            return True
        return bool(np.max(diff.data) < eps)

    @classmethod
    def may_share_memory(cls, a, b):
        """True if the arrays behind ``a`` and ``b`` (sparse or dense) may overlap."""
        if _is_sparse(a) and _is_sparse(b):
            return (
                cls.may_share_memory(a, b.data)
                or cls.may_share_memory(a, b.indices)
                or cls.may_share_memory(a, b.indptr)
            )
        if _is_sparse(b) and isinstance(a, np.ndarray):
            a, b = b, a
        if _is_sparse(a) and isinstance(b, np.ndarray):
            return bool(
                np.may_share_memory(a.data, b)
                or np.may_share_memory(a.indices, b)
                or np.may_share_memory(a.indptr, b)
            )
        return False

    def get_shape_info(self, obj):
        """``(shape, data size, indices size, indptr size, nnz)`` of a sparse value."""
        obj = self.filter(obj)
        return (obj.shape, obj.data.size, obj.indices.size, obj.indptr.size, obj.nnz)

    def get_size(self, shape_info):
        """Bytes of the data, indices and indptr arrays (int32 indices)."""
        return (
            shape_info[1] * np.dtype(self.dtype).itemsize
            + (shape_info[2] + shape_info[3]) * np.dtype("int32").itemsize
        )

    # --- comparing types -----------------------------------------------------------------
    def is_super(self, otype):
        """Same format and dtype, and every static length of ``self`` matches ``otype``'s."""
        return (
            isinstance(otype, SparseTensorType)
            and otype.format == self.format
            and super().is_super(otype)
        )

    def in_same_class(self, otype):
        return (
            isinstance(otype, SparseTensorType)
            and otype.format == self.format
            and super().in_same_class(otype)
        )

    def convert_variable(self, var):
        """``var`` if it already is of this type; a dense matrix is converted to this format.

        Sparse variables of another format are not converted (``None``).
        """
        if isinstance(var.type, SparseTensorType):
            return var if self.is_super(var.type) else None
        res = super().convert_variable(var)
        if res is None or isinstance(res.type, SparseTensorType):
            return None
        from lucent.sparse.basic import SparseFromDense

        return SparseFromDense(self.format)(res)


def _nan_mask(m):
    mask = m.tocsr(copy=True)
    mask.data = np.isnan(mask.data) if mask.dtype.kind in "fc" else np.zeros(mask.data.shape, bool)
    mask.eliminate_zeros()
    return mask


def _same_nans(a, b):
    if a.dtype.kind not in "fc" and b.dtype.kind not in "fc":
        return True
    return (_nan_mask(a) != _nan_mask(b)).nnz == 0


def _without_nan(m):
    if m.dtype.kind not in "fc":
        return m
    m = m.tocsr(copy=True)
    m.data[np.isnan(m.data)] = 0
    return m


__all__ = ["SparseTensorType", "_is_sparse"]
