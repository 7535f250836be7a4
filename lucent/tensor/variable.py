"""``TensorVariable`` and friends: tensors that behave like NumPy arrays in code.

``_tensor_py_operators`` gives symbolic tensors the Python operators and
array methods NumPy users expect (``x + y``, ``x.T``, ``x.sum(axis=0)``,
``x[1:, 0]``). Each forwards to the function of the module that defines the
op (imported on first use, so this module stays at the bottom of the tensor
package). ``==`` is *not* overloaded: variables are compared by identity, and
element-wise equality is ``lt.eq(x, y)``.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Constant, Variable
from lucent.tensor.type import TensorType


def _math():
    from lucent.tensor import math

    return math


def _basic():
    from lucent.tensor import basic

    return basic


def _shape():
    # ``lucent.tensor.shape`` the attribute is the ``shape`` function (star
    # import in ``lucent.tensor``); the module itself is in ``sys.modules``.
    import importlib

    return importlib.import_module("lucent.tensor.shape")


class _tensor_py_operators:
    """Operators and array-like methods shared by every kind of tensor variable."""

    # Make NumPy defer to us: ``ndarray @ x`` and ``ndarray + x`` call our
    # reflected operators instead of trying to treat ``x`` as an array.
    __array_ufunc__ = None
    __array_priority__ = 1000

    # --- arithmetic -------------------------------------------------------------
    def __abs__(self):
        return _math().abs(self)

    def __neg__(self):
        return _math().neg(self)

    def __pos__(self):
        return self

    def __invert__(self):
        return _math().invert(self)

    def __add__(self, other):
        try:
            return _math().add(self, other)
        except (NotImplementedError, TypeError):
            return NotImplemented

    def __radd__(self, other):
        return _math().add(other, self)

    def __sub__(self, other):
        try:
            return _math().sub(self, other)
        except (NotImplementedError, TypeError):
            return NotImplemented

    def __rsub__(self, other):
        return _math().sub(other, self)

    def __mul__(self, other):
        try:
            return _math().mul(self, other)
        except (NotImplementedError, TypeError):
            return NotImplemented

    def __rmul__(self, other):
        return _math().mul(other, self)

    def __truediv__(self, other):
        return _math().true_div(self, other)

    def __rtruediv__(self, other):
        return _math().true_div(other, self)

    def __floordiv__(self, other):
        return _math().int_div(self, other)

    def __rfloordiv__(self, other):
        return _math().int_div(other, self)

    def __mod__(self, other):
        return _math().mod(self, other)

    def __rmod__(self, other):
        return _math().mod(other, self)

    def __divmod__(self, other):
        """``(self // other, self % other)``, as for NumPy arrays."""
        return _math().int_div(self, other), _math().mod(self, other)

    def __rdivmod__(self, other):
        return _math().int_div(other, self), _math().mod(other, self)

    def __pow__(self, other):
        return _math().pow(self, other)

    def __rpow__(self, other):
        return _math().pow(other, self)

    def __matmul__(self, other):
        return _math().matmul(self, other)

    def __rmatmul__(self, other):
        return _math().matmul(other, self)

    def __and__(self, other):
        return _math().and_(self, other)

    def __rand__(self, other):
        return _math().and_(other, self)

    def __or__(self, other):
        return _math().or_(self, other)

    def __ror__(self, other):
        return _math().or_(other, self)

    def __xor__(self, other):
        return _math().xor(self, other)

    def __rxor__(self, other):
        return _math().xor(other, self)

    # --- comparisons (symbolic; == stays identity) --------------------------------
    def __lt__(self, other):
        return _math().lt(self, other)

    def __le__(self, other):
        return _math().le(self, other)

    def __gt__(self, other):
        return _math().gt(self, other)

    def __ge__(self, other):
        return _math().ge(self, other)

    __hash__ = Variable.__hash__

    def __bool__(self):
        raise TypeError(
            "Variables do not support boolean operations: a symbolic tensor has no "
            "truth value until the function runs. Use lt.switch / lt.where for a "
            "conditional, and lt.eq(x, y) for element-wise equality."
        )

    def __iter__(self):
        if self.type.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        length = self.type.shape[0]
        if length is None:
            raise TypeError(
                f"Cannot iterate over {self}: the length of its first dimension is not "
                "known statically. Index it explicitly or use a static shape."
            )
        for i in range(length):
            yield self[i]

    def __len__(self):
        raise TypeError(
            "len() of a symbolic tensor is not defined (it is not known until run time); "
            "use x.shape[0]"
        )

    # --- structure ----------------------------------------------------------------
    @property
    def ndim(self):
        return self.type.ndim

    @property
    def dtype(self):
        return self.type.dtype

    @property
    def broadcastable(self):
        return self.type.broadcastable

    @property
    def shape(self):
        """Symbolic shape (an int64 vector); entries known statically fold to constants."""
        return _shape().shape(self)

    @property
    def size(self):
        return _math().prod(self.shape)

    @property
    def T(self):
        return _basic().transpose(self)

    def transpose(self, *axes):
        if len(axes) == 0:
            axes = None
        elif len(axes) == 1 and isinstance(axes[0], (list, tuple)):
            axes = axes[0]
        return _basic().transpose(self, axes)

    def dimshuffle(self, *pattern):
        from lucent.tensor.elemwise import DimShuffle

        if len(pattern) == 1 and isinstance(pattern[0], (list, tuple)):
            pattern = pattern[0]
        return DimShuffle(input_ndim=self.type.ndim, new_order=tuple(pattern))(self)

    def reshape(self, shape, *, ndim=None):
        return _shape().reshape(self, shape, ndim=ndim)

    def flatten(self, ndim=1):
        return _basic().flatten(self, ndim)

    def ravel(self):
        """The elements as a vector, in C order (``flatten()``)."""
        return _basic().flatten(self, 1)

    def swapaxes(self, axis1, axis2):
        return _basic().swapaxes(self, axis1, axis2)

    @property
    def mT(self):
        """The matrix transpose: the last two axes swapped (batched over the others)."""
        if self.type.ndim < 2:
            raise ValueError(f"mT needs a tensor with at least 2 dimensions, got {self.type.ndim} ({self})")
        return _basic().swapaxes(self, -1, -2)

    def squeeze(self, axis=None):
        return _basic().squeeze(self, axis=axis)

    def astype(self, dtype):
        return _basic().cast(self, dtype)

    def __getitem__(self, index):
        from lucent.tensor import subtensor

        return subtensor.getitem(self, index)

    def copy(self, name=None):
        return _basic().tensor_copy(self, name=name)

    # --- reductions and products -----------------------------------------------------
    def sum(self, axis=None, dtype=None, keepdims=False, acc_dtype=None):
        return _math().sum(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def prod(self, axis=None, dtype=None, keepdims=False, acc_dtype=None):
        return _math().prod(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def mean(self, axis=None, dtype=None, keepdims=False, acc_dtype=None):
        return _math().mean(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def max(self, axis=None, keepdims=False):
        return _math().max(self, axis=axis, keepdims=keepdims)

    def min(self, axis=None, keepdims=False):
        return _math().min(self, axis=axis, keepdims=keepdims)

    def argmax(self, axis=None, keepdims=False):
        return _math().argmax(self, axis=axis, keepdims=keepdims)

    def argmin(self, axis=None, keepdims=False):
        return _math().argmin(self, axis=axis, keepdims=keepdims)

    def var(self, axis=None, ddof=0, keepdims=False, corrected=False):
        return _math().var(self, axis=axis, ddof=ddof, keepdims=keepdims, corrected=corrected)

    def std(self, axis=None, ddof=0, keepdims=False, corrected=False):
        return _math().std(self, axis=axis, ddof=ddof, keepdims=keepdims, corrected=corrected)

    def ptp(self, axis=None):
        return _math().ptp(self, axis=axis)

    def norm(self, L, axis=None, keepdims=False):
        """The ``L``-norm ``sum(|x| ** L) ** (1 / L)`` over ``axis`` (all axes by default).

        ``L`` is a positive finite number; for other norms (max, nuclear,
        ...) use ``lucent.tensor.linalg.norm``.
        """
        if L == 0:
            raise NotImplementedError("norm: L=0 (the number of non-zeros) is not supported")
        if np.isinf(L):
            raise NotImplementedError("norm: an infinite L is not supported; use abs(x).max(axis)")
        m = _math()
        return m.pow(m.sum(m.pow(m.abs(self), L), axis=axis, keepdims=keepdims), 1.0 / L)

    def all(self, axis=None, keepdims=False):
        return _math().all(self, axis=axis, keepdims=keepdims)

    def any(self, axis=None, keepdims=False):
        return _math().any(self, axis=axis, keepdims=keepdims)

    def dot(self, other):
        return _math().dot(self, other)

    def take(self, indices, axis=None, mode="raise"):
        """``numpy.take``: elements at ``indices`` along ``axis`` (of the flattened tensor by default)."""
        from lucent.tensor import subtensor

        return subtensor.take(self, indices, axis=axis, mode=mode)

    def inc(self, y):
        """``self + y`` written into the tensor ``self`` was indexed from (``inc_subtensor``)."""
        from lucent.tensor import subtensor

        return subtensor.inc_subtensor(self, y)

    def set(self, y):
        """``y`` written into the tensor ``self`` was indexed from (``set_subtensor``)."""
        from lucent.tensor import subtensor

        return subtensor.set_subtensor(self, y)

    def fill(self, value):
        """A tensor of the shape of this one filled with ``value``."""
        return _basic().fill(self, value)

    def get_underlying_scalar_constant(self):
        """The constant scalar this variable always evaluates to, or ``NotScalarConstantError``."""
        return _basic().get_underlying_scalar_constant_value(self)

    def __rdot__(self, other):
        return _math().dot(other, self)

    # --- elementwise shortcuts ----------------------------------------------------------
    def exp(self):
        return _math().exp(self)

    def log(self):
        return _math().log(self)

    def sqrt(self):
        return _math().sqrt(self)

    def clip(self, a_min, a_max):
        return _math().clip(self, a_min, a_max)

    def round(self, mode=None):
        return _math().round(self, mode=mode)

    def floor(self):
        return _math().floor(self)

    def ceil(self):
        return _math().ceil(self)

    def sin(self):
        return _math().sin(self)

    def cos(self):
        return _math().cos(self)

    def tan(self):
        return _math().tan(self)

    def tanh(self):
        return _math().tanh(self)

    def arctan(self):
        return _math().arctan(self)

    def exp2(self):
        return _math().exp2(self)

    def expm1(self):
        return _math().expm1(self)

    def log2(self):
        return _math().log2(self)

    def log10(self):
        return _math().log10(self)

    def log1p(self):
        return _math().log1p(self)

    # --- NumPy array methods backed by the op library (imported when called) --------
    def diagonal(self, offset=0, axis1=0, axis2=1):
        from lucent.tensor.diagonal import diagonal

        return diagonal(self, offset, axis1, axis2)

    def trace(self):
        from lucent.tensor.linalg.summary import trace

        return trace(self)

    def nonzero(self, return_matrix=False):
        from lucent.tensor.selection import nonzero

        return nonzero(self, return_matrix=return_matrix)

    def nonzero_values(self):
        from lucent.tensor.selection import nonzero_values

        return nonzero_values(self)

    def choose(self, choices, mode="raise"):
        """``numpy.choose`` with ``self`` as the index array."""
        from lucent.tensor.selection import choose

        return choose(self, choices, mode=mode)

    def sort(self, axis=-1, kind="quicksort", order=None):
        from lucent.tensor.sort import sort

        return sort(self, axis, kind, order)

    def argsort(self, axis=-1, kind="quicksort", order=None):
        from lucent.tensor.sort import argsort

        return argsort(self, axis, kind, order)

    def conj(self):
        """The complex conjugate; a real variable is its own conjugate (returned as is)."""
        if not self.type.dtype.startswith("complex"):
            return self
        return _math().conj(self)

    conjugate = conj

    @property
    def real(self):
        return _math().real(self)

    @property
    def imag(self):
        return _math().imag(self)

    def repeat(self, repeats, axis=None):
        from lucent.tensor.extra_ops import repeat

        return repeat(self, repeats, axis)

    def cumsum(self, axis=None):
        from lucent.tensor.extra_ops import cumsum

        return cumsum(self, axis)

    def cumprod(self, axis=None):
        from lucent.tensor.extra_ops import cumprod

        return cumprod(self, axis)

    def searchsorted(self, v, side="left", sorter=None):
        from lucent.tensor.extra_ops import searchsorted

        return searchsorted(self, v, side, sorter)

    def compress(self, a, axis=None):
        """``numpy.compress`` of ``self`` (the condition) over ``a``, as PyTensor defines it."""
        from lucent.tensor.extra_ops import compress

        return compress(self, a, axis=axis)

    def zeros_like(self, dtype=None):
        return _basic().zeros_like(self, dtype=dtype)

    def ones_like(self, dtype=None):
        return _basic().ones_like(self, dtype=dtype)


class TensorVariable(_tensor_py_operators, Variable):
    """A symbolic tensor: the output of an op, or a graph input."""

    def __init__(self, type, owner=None, index=None, name=None):
        if not isinstance(type, TensorType):
            raise TypeError(f"TensorVariable needs a TensorType, got {type!r}")
        super().__init__(type, owner, index, name)

    def __str__(self):
        # An unnamed input shows its type as the Type documentation writes
        # it: ``<TensorType(float64, (2, ?))>``.
        if self.name is None and self.owner is None:
            return f"<{self.type!r}>"
        return super().__str__()


class TensorConstant(_tensor_py_operators, Constant):
    """A tensor with a fixed value; prints as ``TensorConstant{2}``."""

    def __init__(self, type, data, name=None):
        if not isinstance(data, np.ndarray):
            # A list or number is converted by the type (``[1, 2]`` fits an int8 vector).
            data = type.filter(data)
        data = np.asarray(data)
        if data.ndim != type.ndim:
            raise TypeError(
                f"A TensorConstant of type {type} needs data with {type.ndim} dimensions, "
                f"got shape {data.shape}"
            )
        if any(s is not None and s != d for s, d in zip(type.shape, data.shape)):
            raise TypeError(f"The data's shape {data.shape} does not fit the type {type}")
        Constant.__init__(self, type, data, name)

    def __str__(self):
        if self.name is not None:
            return self.name
        data = self.data
        if data.ndim == 0:
            text = str(data.item()) if data.dtype.kind != "f" else _float_str(data)
        else:
            text = np.array2string(data, threshold=6, edgeitems=2, separator=" ")
            text = " ".join(text.split())
        if len(text) > 20:
            text = text[:10] + "..." + text[-10:]
        return f"TensorConstant{{{text}}}"

    def __repr__(self):
        return str(self)


def _float_str(data):
    value = float(data)
    if value.is_integer() and abs(value) < 1e16:
        return repr(value)
    return repr(value)


class TensorValue(TensorVariable):
    """A graph input with a default value (``lucent.tensor.value(1.5)``).

    Unlike a constant it may be listed as an input of a function, in which
    case the value given at call time is used and the default is ignored.
    When it is not listed, the function uses its value.
    """

    def __init__(self, type, data, name=None):
        super().__init__(type, None, None, name)
        self.data = type.filter(data)

    def clone(self, name=None):
        cp = TensorValue(self.type, self.data, name if name is not None else self.name)
        return cp


TensorType.variable_type = TensorVariable
TensorType.constant_type = TensorConstant

__all__ = ["TensorVariable", "TensorConstant", "TensorValue", "_tensor_py_operators"]
