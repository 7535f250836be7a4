"""``SparseVariable`` and ``SparseConstant``: sparse matrices in graph code.

A sparse variable is a tensor variable (its type is a ``TensorType``
subclass), so it inherits the array-like methods of dense tensors. The ones
that have a sparse op are redirected to it (``+``, ``-``, ``*``, ``.T``,
``.dot``, ``.toarray()``, ``.astype``); the rest of the dense methods
(``exp``, ``mean``, ``/``, ...) have no sparse version, and would hand a
SciPy matrix to a dense op: they convert the variable to a dense tensor
first and say so with a warning, so the result is right but dense.
"""

from __future__ import annotations

import functools
import warnings

import scipy.sparse

from lucent.graph.basic import Constant
from lucent.sparse.type import SparseTensorType
from lucent.tensor.variable import TensorVariable, _tensor_py_operators


def _basic():
    from lucent.sparse import basic

    return basic


def _math():
    from lucent.sparse import math

    return math


def constant(x, name=None):
    """A ``SparseConstant`` holding a copy of the SciPy sparse matrix ``x``."""
    if not isinstance(x, scipy.sparse.spmatrix):
        raise TypeError(
            f"sparse.constant must be called on a scipy.sparse.spmatrix, got {type(x).__name__}"
        )
    if x.format not in SparseTensorType.format_cls:
        raise TypeError(f"Could not convert a {x.format} matrix to SparseTensorType")
    return SparseConstant(SparseTensorType(format=x.format, dtype=x.dtype), x.copy(), name=name)


def _is_sparse_var(v):
    return isinstance(getattr(v, "type", None), SparseTensorType)


#: Dense methods with no method of their own on dense tensors, by the
#: ``lucent.tensor`` function that computes them.
_DENSE_FUNCTIONS = {"__ceil__": "ceil", "__floor__": "floor", "__trunc__": "trunc", "ravel": "flatten"}


def _dense_method(name):
    """The dense implementation of the method ``name``, or ``None`` if lucent has none."""
    method = getattr(_tensor_py_operators, name, None)
    if method is not None:
        return method
    import lucent.tensor as lt

    fn = getattr(lt, _DENSE_FUNCTIONS.get(name, name), None)
    if fn is None or not callable(fn):
        return None
    return lambda self, *args, **kwargs: fn(self, *args, **kwargs)


def override_dense(method):
    """Make ``method`` (a dense tensor method) run on the dense form of sparse operands."""
    dense_method = _dense_method(method.__name__)
    if dense_method is None:
        raise AttributeError(f"lucent has no dense implementation of {method.__name__}")

    @functools.wraps(method)
    def to_dense(self, *args, **kwargs):
        warnings.warn(
            f"{method.__name__} is not implemented for sparse variables: {self} is "
            "converted to dense first",
            UserWarning,
            stacklevel=2,
        )
        dense = _basic().dense_from_sparse
        args = [dense(a) if _is_sparse_var(a) else a for a in args]
        return dense_method(dense(self), *args, **kwargs)

    to_dense._is_dense_override = True
    return to_dense


def _dense_override(name):
    def method(self, *args, **kwargs):
        raise NotImplementedError  # pragma: no cover - replaced by override_dense

    method.__name__ = name
    return override_dense(method)


class _sparse_py_operators:
    """The methods of sparse variables (see module docstring)."""

    @property
    def T(self):
        """The transpose (CSR becomes CSC and back), sharing the arrays."""
        return _basic().transpose(self)

    def astype(self, dtype):
        return _basic().cast(self, dtype)

    def __neg__(self):
        return _math().neg(self)

    def __pos__(self):
        return self

    def __add__(left, right):
        return _math().add(left, right)

    def __radd__(right, left):
        return _math().add(left, right)

    def __sub__(left, right):
        return _math().subtract(left, right)

    def __rsub__(right, left):
        return _math().subtract(left, right)

    def __mul__(left, right):
        return _math().multiply(left, right)

    def __rmul__(right, left):
        return _math().multiply(left, right)

    def __dot__(left, right):
        return _math().structured_dot(left, right)

    def __rdot__(right, left):
        return _math().structured_dot(left, right)

    dot = __dot__

    def __lt__(self, other):
        return _math().lt(self, other)

    def __le__(self, other):
        return _math().le(self, other)

    def __gt__(self, other):
        return _math().gt(self, other)

    def __ge__(self, other):
        return _math().ge(self, other)

    def sum(self, axis=None, sparse_grad=False):
        """The sum (a dense tensor); ``sparse_grad=True`` gives a structured gradient."""
        return _math().sp_sum(self, axis=axis, sparse_grad=sparse_grad)

    def toarray(self):
        """The dense tensor of the same values."""
        return _basic().dense_from_sparse(self)

    todense = toarray

    @property
    def size(self):
        """The number of *stored* entries (explicit zeros count), not rows x columns."""
        return _basic().csm_data(self).size

    def zeros_like(self, dtype=None):
        out = _basic().sp_zeros_like(self)
        return out if dtype is None else _basic().cast(out, dtype)

    def ones_like(self, dtype=None):
        out = _basic().sp_ones_like(self)
        return out if dtype is None else _basic().cast(out, dtype)

    def conj(self):
        return _math().structured_conjugate(self)

    def __getitem__(self, index):
        from lucent.sparse.indexing import getitem

        return getitem(self, index)

    def __iter__(self):
        raise TypeError("sparse variables cannot be iterated over")


# Dense methods without a sparse op: they work on the dense form (with a
# warning). Those lucent has no dense version of are left out.
for _name in (
    "__abs__", "__invert__", "__ceil__", "__floor__", "__trunc__",
    "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__",
    "__divmod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__",
    "__and__", "__rand__", "__or__", "__ror__", "__xor__", "__rxor__",
    "transpose", "dimshuffle", "reshape", "flatten", "ravel", "squeeze", "copy", "repeat",
    "prod", "mean", "var", "std", "min", "max", "argmin", "argmax", "argsort", "any", "all",
    "nonzero", "nonzero_values", "trace", "cumsum", "cumprod", "ptp", "diagonal", "clip", "round",
    "arccos", "arcsin", "arctan", "arccosh", "arcsinh", "arctanh", "cos", "cosh", "sin", "sinh",
    "tan", "tanh", "deg2rad", "rad2deg", "exp", "exp2", "expm1", "log", "log10", "log1p", "log2",
    "sqrt", "ceil", "floor",
):
    if _dense_method(_name) is not None:
        setattr(_sparse_py_operators, _name, _dense_override(_name))
del _name


class SparseVariable(_sparse_py_operators, TensorVariable):
    """A symbolic sparse matrix; prints as ``SparseVariable{csr,float64}``."""

    @property
    def format(self):
        return self.type.format

    def __str__(self):
        return f"{type(self).__name__}{{{self.format},{self.dtype}}}"

    def __repr__(self):
        return str(self)


class SparseConstantSignature(tuple):
    """``(type, matrix)`` compared by value, so equal sparse constants merge."""

    def __eq__(self, other):
        if not isinstance(other, tuple) or len(other) != 2:
            return False
        (ta, a), (tb, b) = self, other
        return (
            ta == tb
            and type(a) is type(b)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and ta.values_eq(a, b)
        )

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        t, data = self
        return hash((type(self), t, type(data), data.shape))

    def lucent_hash(self):
        """A strong hash of the matrix (its arrays, shape, dtype and format)."""
        from lucent.sparse.utils import hash_from_sparse

        return hash_from_sparse(self[1])


class SparseConstant(SparseVariable, Constant):
    """A sparse matrix fixed in the graph; prints its format, dtype, shape and nnz."""

    def __init__(self, type, data, name=None):
        # A constant's shape is known: it becomes the type's static shape.
        if hasattr(data, "shape") and any(s is None for s in type.shape):
            type = type.clone(shape=tuple(data.shape))
        Constant.__init__(self, type, data, name)

    def signature(self):
        return SparseConstantSignature((self.type, self.data))

    def __str__(self):
        if self.name is not None:
            return self.name
        return (
            f"{type(self).__name__}{{{self.format},{self.dtype},"
            f"shape={self.data.shape},nnz={self.data.nnz}}}"
        )

    def __repr__(self):
        return str(self)

    @property
    def unique_value(self):
        return None


SparseTensorType.variable_type = SparseVariable
SparseTensorType.constant_type = SparseConstant

__all__ = ["SparseVariable", "SparseConstant", "constant", "override_dense"]
