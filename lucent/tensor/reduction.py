"""``CAReduce``: folding a commutative, associative scalar op over axes.

``Sum``, ``Prod``, ``Max``, ``Min``, ``All`` and ``Any`` are the reductions
users meet (through ``lt.sum`` and friends in ``lucent.tensor.math``). They
drop the reduced axes; ``keepdims`` is a ``DimShuffle`` added afterwards, so
one op serves both forms and rewrites see a single pattern.

Dtypes follow NumPy: sums and products of booleans and signed integers
accumulate in int64 (unsigned in uint64), floats keep their dtype, and
``Max`` / ``Min`` keep the input dtype. Re-exported by ``lucent.tensor.elemwise``.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.scalar import basic as ps
from lucent.scalar.dtypes import continuous_dtypes, int_dtypes, normalize_dtype, uint_dtypes
from lucent.tensor.basic import as_tensor_variable, constant
from lucent.tensor.type import TensorType

_UFUNCS = {
    ps.Add: np.add,
    ps.Mul: np.multiply,
    ps.Maximum: np.maximum,
    ps.Minimum: np.minimum,
    ps.AND: np.bitwise_and,
    ps.OR: np.bitwise_or,
    ps.XOR: np.bitwise_xor,
}


def _normalize_axes(axis, ndim, where="reduction"):
    """A sorted tuple of non-negative axes, or None for all of them."""
    if axis is None:
        return None
    if isinstance(axis, np.ndarray) and axis.dtype.kind in "iu":
        # an array of axes (0-d: one axis), as NumPy accepts
        axis = tuple(int(a) for a in axis.ravel()) if axis.ndim else int(axis)
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
        axis = (axis,)
    if ndim == 0:
        # A 0-d input counts as 1-d for its axes (NumPy's and PyTensor's rule): 0 and -1 name
        # its only "axis", and reducing over it leaves the value as it is.
        if any(isinstance(a, bool) or not isinstance(a, (int, np.integer)) or a not in (0, -1) for a in axis):
            raise np.exceptions.AxisError(tuple(axis), ndim=0)
        return None
    out = []
    for a in axis:
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)):
            raise TypeError(f"{where}: axis entries must be ints, got {a!r}")
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(
                f"{where}: axis {a} is out of bounds for a tensor with {ndim} dimensions "
                f"(valid axes are {-ndim} to {ndim - 1})"
            )
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{where}: repeated axis in {tuple(axis)}")
    return tuple(sorted(out))


class CAReduce(Op):
    """Reduce a tensor over ``axis`` (None: all axes) with a binary scalar op."""

    __props__ = ("scalar_op", "axis", "dtype", "acc_dtype")

    def __init__(self, scalar_op, axis=None, dtype=None, acc_dtype=None):
        if isinstance(axis, (int, np.integer)) and not isinstance(axis, bool):
            axis = (int(axis),)
        elif axis is not None:
            axis = tuple(int(a) for a in axis)
        self.scalar_op = scalar_op
        self.axis = axis
        self.dtype = None if dtype is None else normalize_dtype(dtype)
        self.acc_dtype = None if acc_dtype is None else normalize_dtype(acc_dtype)

    def _name(self):
        return type(self).__name__

    def __str__(self):
        if self.axis is None:
            axes = "axes=None"
        elif len(self.axis) == 1:
            axes = f"axis={self.axis[0]}"
        else:
            axes = f"axes={list(self.axis)}"
        if type(self) is CAReduce:
            return f"CAReduce{{{self.scalar_op}, {axes}}}"
        return f"{self._name()}{{{axes}}}"

    def clone(self, axis=None, dtype=None, acc_dtype=None):
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.axis = axis
        return new

    def _output_dtype(self, idtype):
        if self.dtype is not None:
            return self.dtype
        return ps.get_scalar_type(idtype) and self.scalar_op.make_node(
            ps.get_scalar_type(idtype)(), ps.get_scalar_type(idtype)()
        ).outputs[0].type.dtype

    def make_node(self, x):
        x = as_tensor_variable(x)
        axis = _normalize_axes(self.axis, x.type.ndim, str(self))
        if axis != self.axis:
            return self.clone(axis=axis).make_node(x)
        reduced = range(x.type.ndim) if axis is None else axis
        shape = tuple(s for d, s in enumerate(x.type.shape) if d not in reduced)
        out = TensorType(self._output_dtype(x.type.dtype), shape)()
        return Apply(self, [x], [out])

    def _reduce(self, x, axis, dtype):
        ufunc = _UFUNCS.get(type(self.scalar_op))
        if ufunc is None:
            raise NotImplementedError(f"{self}: no NumPy reduction for {self.scalar_op}")
        return ufunc.reduce(x, axis=axis, dtype=dtype)

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        out_type = node.outputs[0].type
        axis = self.axis if self.axis is not None else tuple(range(x.ndim))
        try:
            with np.errstate(all="ignore"):
                res = self._reduce(x, axis, out_type.numpy_dtype)
        except ValueError as e:
            if x.size == 0:
                raise ValueError(
                    f"{self}: cannot reduce an empty array (shape {x.shape}) over axes "
                    f"{axis}: {self._name()} has no identity element, so the result is "
                    "undefined"
                ) from e
            raise
        output_storage[0][0] = np.asarray(res, dtype=out_type.numpy_dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        (ish,) = input_shapes
        axis = self.axis if self.axis is not None else tuple(range(len(ish)))
        return [tuple(s for d, s in enumerate(ish) if d not in axis)]

    def _reduced_axes(self, ndim):
        return tuple(range(ndim)) if self.axis is None else self.axis

    def _expand(self, v, ndim):
        """``v`` with the reduced axes put back as length-1 dimensions."""
        from lucent.tensor.elemwise import DimShuffle

        axes = self._reduced_axes(ndim)
        order, j = [], 0
        for d in range(ndim):
            if d in axes:
                order.append("x")
            else:
                order.append(j)
                j += 1
        return DimShuffle(v.type.ndim, tuple(order))(v)

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor.elemwise import _zeros_like

        return [_zeros_like(inputs[0])]


def _sum_dtype(idtype):
    if idtype == "bool" or idtype in int_dtypes:
        return "int64"
    if idtype in uint_dtypes:
        return "uint64"
    return idtype


class Sum(CAReduce):
    """Sum over axes; integers and booleans accumulate in (u)int64 as in NumPy."""

    def __init__(self, axis=None, dtype=None, acc_dtype=None):
        super().__init__(ps.add, axis, dtype, acc_dtype)

    def _output_dtype(self, idtype):
        return self.dtype or _sum_dtype(idtype)

    def _reduce(self, x, axis, dtype):
        return np.sum(x, axis=axis, dtype=self.acc_dtype or dtype)

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor.elemwise import Elemwise, _fit_grad, _zeros_like

        (x,), (gz,) = inputs, output_grads
        if x.type.dtype not in continuous_dtypes:
            return [_zeros_like(x)]
        g = Elemwise(ps.second)(x, self._expand(as_tensor_variable(gz), x.type.ndim))
        return [_fit_grad(g, x)]


class Prod(CAReduce):
    """Product over axes. Its gradient handles inputs containing zeros."""

    def __init__(self, axis=None, dtype=None, acc_dtype=None):
        super().__init__(ps.mul, axis, dtype, acc_dtype)

    def _output_dtype(self, idtype):
        return self.dtype or _sum_dtype(idtype)

    def _reduce(self, x, axis, dtype):
        return np.prod(x, axis=axis, dtype=self.acc_dtype or dtype)

    def L_op(self, inputs, outputs, output_grads):
        """``prod / x`` where no zero; with exactly one zero in a group, the zero's
        gradient is the product of the others and the rest are 0."""
        from lucent.tensor import math as tm
        from lucent.tensor.elemwise import _fit_grad, _zeros_like

        (x,), (out,), (gz,) = inputs, outputs, output_grads
        if x.type.dtype not in continuous_dtypes:
            return [_zeros_like(x)]
        nd = x.type.ndim
        axes = self._reduced_axes(nd)
        gz_b = self._expand(as_tensor_variable(gz), nd)
        prod_b = self._expand(out, nd)
        is_zero = tm.eq(x, 0)
        n_zero = self._expand(Sum(axes)(is_zero), nd)
        prod_others = self._expand(Prod(axes, dtype=x.type.dtype)(tm.switch(is_zero, constant(np.ones((), x.type.dtype)), x)), nd)
        no_zero = tm.true_div(prod_b, x)
        one_zero = tm.switch(is_zero, prod_others, 0)
        g = tm.switch(tm.eq(n_zero, 0), no_zero, tm.switch(tm.eq(n_zero, 1), one_zero, 0))
        return [_fit_grad(tm.mul(gz_b, g), x)]


class _MaxMin(CAReduce):
    ufunc = None

    def __init__(self, axis=None):
        super().__init__(type(self).scalar, axis)

    def _output_dtype(self, idtype):
        return idtype

    def _reduce(self, x, axis, dtype):
        return type(self).ufunc(x, axis=axis)

    def L_op(self, inputs, outputs, output_grads):
        """The gradient goes to every element equal to the extremum."""
        from lucent.tensor import math as tm
        from lucent.tensor.elemwise import _fit_grad, _zeros_like

        (x,), (out,), (gz,) = inputs, outputs, output_grads
        if x.type.dtype not in continuous_dtypes:
            return [_zeros_like(x)]
        nd = x.type.ndim
        g = tm.mul(tm.eq(x, self._expand(out, nd)), self._expand(as_tensor_variable(gz), nd))
        return [_fit_grad(g, x)]


class Max(_MaxMin):
    scalar = ps.maximum
    ufunc = staticmethod(np.max)


class Min(_MaxMin):
    scalar = ps.minimum
    ufunc = staticmethod(np.min)


class All(CAReduce):
    def __init__(self, axis=None):
        super().__init__(ps.and_, axis)

    def _output_dtype(self, idtype):
        return "bool"

    def _reduce(self, x, axis, dtype):
        return np.all(x, axis=axis)


class Any(CAReduce):
    def __init__(self, axis=None):
        super().__init__(ps.or_, axis)

    def _output_dtype(self, idtype):
        return "bool"

    def _reduce(self, x, axis, dtype):
        return np.any(x, axis=axis)


__all__ = ["CAReduce", "Sum", "Prod", "Max", "Min", "All", "Any"]
