"""NumPy's array library beyond the basics: cumulative ops, searching, counting,
repeating, diagonals, unique values and index conversions.

The ops here are those that cannot be written well as compositions of
existing ops (``CumOp``, ``SearchsortedOp``, ``Repeat``, ``Unique``,
``UnravelIndex``, ``RavelMultiIndex``, ``FillDiagonal``,
``FillDiagonalOffset``, ``Bartlett``, ``CpuContiguous``). Everything else
(``diff``, ``bincount``, ``compress``, ``to_one_hot``, broadcasting and the
``linspace`` family) is built from other ops and gets their gradients, shapes
and Numba kernels for free; the broadcasting and spacing helpers live in
:mod:`lucent.tensor.spacing` and are re-exported here at PyTensor's path.
"""

from __future__ import annotations

import numpy as np

from lucent.configdefaults import config
from lucent.graph.basic import Apply, Constant
from lucent.graph.op import Op
from lucent.raise_op import Assert, CheckAndRaise
from lucent.scalar.dtypes import continuous_dtypes, discrete_dtypes, integer_dtypes, upcast
from lucent.tensor import basic as ptb
from lucent.tensor.basic import (
    _disconnected,
    _float_zeros_like,
    _static_int,
    as_tensor_variable,
    cast,
    constant,
)
from lucent.tensor.type import TensorType


def normalize_axis_index(axis, ndim, who="axis"):
    """``axis`` in ``[0, ndim)``; negative axes count from the end (NumPy's AxisError otherwise)."""
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{who}: the axis must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"{who}: axis {axis} is out of bounds for a tensor of dimension {ndim}")
    return int(axis) % ndim


def _reverse_along(x, axis):
    index = [slice(None)] * x.type.ndim
    index[axis] = slice(None, None, -1)
    return x[tuple(index)]


# --------------------------------------------------------------------------- #
# Contiguity
# --------------------------------------------------------------------------- #
class CpuContiguous(Op):
    """``x`` as a C-contiguous array: a view if it already is one, else a copy."""

    __props__ = ()
    view_map = {0: [0]}

    def make_node(self, x):
        x = as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.ascontiguousarray(inputs[0])

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def L_op(self, inputs, outputs, output_grads):
        return [output_grads[0]]


cpu_contiguous = CpuContiguous()


# --------------------------------------------------------------------------- #
# Cumulative sums and products
# --------------------------------------------------------------------------- #
class CumOp(Op):
    """Cumulative sum (``mode="add"``) or product (``"mul"``) along a non-negative ``axis``.

    The output keeps the input's type (NumPy would upcast small integers).
    """

    __props__ = ("axis", "mode")

    def __init__(self, axis: int, mode="add"):
        if mode not in ("add", "mul"):
            raise ValueError(f'{type(self).__name__}: Unknown mode "{mode}"; expected "add" or "mul"')
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
            raise TypeError(f"axis must be an integer, got {axis} of type {type(axis)}")
        if axis < 0:
            raise ValueError(f"axis must be non-negative, got {axis} (the cumsum/cumprod helpers accept negative axes)")
        self.axis = int(axis)
        self.mode = mode

    def __str__(self):
        return f"{'Cumsum' if self.mode == 'add' else 'Cumprod'}{{axis={self.axis}}}"

    def make_node(self, x):
        x = as_tensor_variable(x)
        if self.axis >= x.type.ndim:
            raise ValueError(f"axis(={self.axis}) out of bounds for variable {x} with {x.type.ndim} ndims")
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        fn = np.cumsum if self.mode == "add" else np.cumprod
        output_storage[0][0] = np.asarray(fn(inputs[0], axis=self.axis), dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def L_op(self, inputs, outputs, output_grads):
        (x,) = inputs
        (gz,) = output_grads
        if x.type.dtype in discrete_dtypes:
            return [_float_zeros_like(x)]
        if self.mode == "add":
            return [_reverse_along(CumOp(self.axis, "add")(_reverse_along(gz, self.axis)), self.axis)]
        # d out[j] / d x[i] = out[j] / x[i] for j >= i (x without zeros).
        prod = outputs[0]
        return [_reverse_along(CumOp(self.axis, "add")(_reverse_along(prod * gz, self.axis)), self.axis) / x]


def cumsum(x, axis=None):
    """Cumulative sum along ``axis`` (of the flattened ``x`` when ``axis`` is None), as ``numpy.cumsum``."""
    x = as_tensor_variable(x)
    if axis is None:
        x, axis = ptb.flatten(x) if x.type.ndim != 1 else x, 0
    else:
        axis = normalize_axis_index(axis, x.type.ndim, "cumsum")
    return CumOp(axis=axis, mode="add")(x)


def cumprod(x, axis=None):
    """Cumulative product along ``axis`` (of the flattened ``x`` when ``axis`` is None)."""
    x = as_tensor_variable(x)
    if axis is None:
        x, axis = ptb.flatten(x) if x.type.ndim != 1 else x, 0
    else:
        axis = normalize_axis_index(axis, x.type.ndim, "cumprod")
    return CumOp(axis=axis, mode="mul")(x)


def diff(x, n=1, axis=-1):
    """The ``n``-th discrete difference along ``axis``: ``out[i] = x[i + 1] - x[i]``, ``n`` times."""
    x = as_tensor_variable(x)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"diff: order must be a non-negative int, got n={n!r}")
    axis = normalize_axis_index(axis, x.type.ndim, "diff")
    upper = [slice(None)] * x.type.ndim
    lower = [slice(None)] * x.type.ndim
    upper[axis] = slice(1, None)
    lower[axis] = slice(None, -1)
    from lucent.tensor import math as lm

    for _ in range(n):
        # NumPy differences booleans with "not equal".
        x = lm.neq(x[tuple(upper)], x[tuple(lower)]) if x.type.dtype == "bool" else x[tuple(upper)] - x[tuple(lower)]
    return x


# --------------------------------------------------------------------------- #
# Searching and counting
# --------------------------------------------------------------------------- #
class SearchsortedOp(Op):
    """Insertion indices of ``v`` into the sorted vector ``x`` (``numpy.searchsorted``)."""

    __props__ = ("side",)

    def __init__(self, side="left"):
        if side not in ("left", "right"):
            raise ValueError(f"'{side}' is an invalid value for keyword 'side'; expected 'left' or 'right'")
        self.side = side

    def make_node(self, x, v, sorter=None):
        x = as_tensor_variable(x, ndim=1)
        v = as_tensor_variable(v)
        out = TensorType("int64", v.type.shape)()
        if sorter is None:
            return Apply(self, [x, v], [out])
        sorter = as_tensor_variable(sorter, ndim=1)
        if sorter.type.dtype not in integer_dtypes:
            raise TypeError(f"searchsorted: sorter must be an integer vector, got {sorter.type}")
        return Apply(self, [x, v, sorter], [out])

    def perform(self, node, inputs, output_storage):
        x, v, *sorter = inputs
        output_storage[0][0] = np.asarray(
            np.searchsorted(x, v, side=self.side, sorter=sorter[0] if sorter else None), dtype="int64"
        )

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[1]]

    def connection_pattern(self, node):
        return [[True], [True]] + [[False]] * (len(node.inputs) - 2)

    def L_op(self, inputs, outputs, output_grads):
        grads = [_float_zeros_like(inputs[0]), _float_zeros_like(inputs[1])]
        return grads + [_disconnected() for _ in inputs[2:]]


def searchsorted(x, v, side="left", sorter=None):
    """Indices where ``v`` would be inserted into the sorted vector ``x`` to keep it sorted.

    ``sorter`` gives the indices sorting ``x`` when ``x`` itself is not
    sorted (``argsort(x)``).
    """
    return SearchsortedOp(side=side)(x, v, sorter)


def bincount(x, weights=None, minlength=None, assert_nonneg=False):
    """Occurrences (or summed ``weights``) of each value of the non-negative int vector ``x``.

    Negative values raise ``ValueError`` at run time, as in NumPy
    (``AssertionError`` with ``assert_nonneg=True``, as in PyTensor).
    """
    from lucent.tensor import math as lm
    from lucent.tensor.advanced_subtensor import advanced_inc_subtensor1

    x = as_tensor_variable(x)
    if x.type.ndim != 1:
        raise TypeError(f"bincount: the input must be a vector, got {x} with {x.type.ndim} dimensions")
    if x.type.dtype not in integer_dtypes:
        raise TypeError(f"bincount: the input must be of an integer dtype, got {x.type.dtype}")
    if assert_nonneg:
        check = Assert("Input to bincount has negative values!")
    else:
        check = CheckAndRaise(ValueError, "bincount: the input contains negative values; it counts "
                                          "non-negative integers")
    x = check(x, lm.all(lm.ge(x, 0)))
    # max of an empty vector: 0 bins (then minlength decides).
    padded = ptb.concatenate([cast(x, "int64"), constant(np.array([-1], dtype="int64"))])
    count = lm.max(padded) + 1
    if minlength is not None:
        count = lm.maximum(count, cast(as_tensor_variable(minlength), "int64"))
    if weights is None:
        out = ptb.zeros([count], dtype=x.type.dtype)
        return advanced_inc_subtensor1(out, constant(np.ones((), dtype=x.type.dtype)), x)
    weights = as_tensor_variable(weights)
    out = ptb.zeros([count], dtype=weights.type.dtype)
    return advanced_inc_subtensor1(out, weights, x)


def squeeze(x, axis=None):
    """``x`` without its length-1 axes (``axis``: only those; negative axes allowed)."""
    return ptb.squeeze(x, axis=axis)


def compress(condition, x, axis=None):
    """The slices of ``x`` along ``axis`` where ``condition`` is true (flattened ``x`` if None)."""
    from lucent.tensor.selection import flatnonzero

    x = as_tensor_variable(x)
    return x.take(flatnonzero(condition), axis=axis)


# --------------------------------------------------------------------------- #
# Repeating
# --------------------------------------------------------------------------- #
class Repeat(Op):
    """``numpy.repeat(x, repeats, axis)`` with a vector of per-entry ``repeats``."""

    __props__ = ("axis",)

    def __init__(self, axis: int):
        if axis is None:
            raise ValueError("Repeat Op only accepts a non-negative integer axis; use `repeat` for axis=None")
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
            raise TypeError(f"Invalid type for axis {axis}, expected int got {type(axis)}")
        if axis < 0:
            raise ValueError(f"Repeat Op only accepts a non-negative integer axis, got {axis}; use `repeat`")
        self.axis = int(axis)

    def make_node(self, x, repeats):
        x = as_tensor_variable(x)
        repeats = as_tensor_variable(repeats)
        if repeats.type.dtype not in integer_dtypes:
            raise TypeError(f"repeats {repeats} dtype must be an integer, got {repeats.type.dtype}.")
        if repeats.type.ndim != 1:
            raise ValueError(f"repeats {repeats} must have 1 dimension, got {repeats.type.ndim}")
        if repeats.type.dtype == "uint64":
            raise TypeError(f"repeats {repeats} dtype uint64 is not supported by numpy.repeat")
        if self.axis >= x.type.ndim:
            raise ValueError(f"Repeat: axis {self.axis} is out of range for {x} with {x.type.ndim} dimensions")
        shape = list(x.type.shape)
        shape[self.axis] = None
        return Apply(self, [x, repeats], [TensorType(x.type.dtype, tuple(shape))()])

    def perform(self, node, inputs, output_storage):
        x, repeats = inputs
        if np.any(repeats < 0):
            raise ValueError(f"Repeat: repeats may not contain negative values, got {repeats}")
        n = x.shape[self.axis]
        if repeats.shape[0] not in (1, n):
            raise ValueError(
                f"Repeat: operands could not be broadcast: {repeats.shape[0]} repeats for an axis of length {n}"
            )
        output_storage[0][0] = np.repeat(x, repeats, axis=self.axis)

    def infer_shape(self, fgraph, node, input_shapes):
        from lucent.tensor import math as lm

        x_shape = list(input_shapes[0])
        repeats = node.inputs[1]
        total = lm.sum(repeats, dtype="int64")
        if repeats.type.shape[0] == 1:
            total = lm.mul(cast(repeats[0], "int64"), x_shape[self.axis])
        x_shape[self.axis] = total
        return [tuple(x_shape)]

    def connection_pattern(self, node):
        return [[True], [False]]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor.rearrange import moveaxis

        x, repeats = inputs
        (gz,) = output_grads
        if x.type.dtype in discrete_dtypes:
            return [_float_zeros_like(x), _disconnected()]
        positions = Repeat(0)(ptb.arange(x.shape[self.axis]), repeats)
        gx = ptb.zeros_like(moveaxis(x, self.axis, 0))[positions].inc(moveaxis(gz, self.axis, 0))
        return [moveaxis(gx, 0, self.axis), _disconnected()]


def repeat(a, repeats, axis=None):
    """Repeat the entries of ``a`` along ``axis`` (of the flattened ``a`` when None).

    ``repeats`` is a number (every entry) or a vector (one count per entry).
    """
    from lucent.tensor import math as lm

    a = as_tensor_variable(a)
    if axis is None:
        a = ptb.flatten(a) if a.type.ndim != 1 else a
        axis = 0
    else:
        axis = normalize_axis_index(axis, a.type.ndim, "repeat")
    repeats = as_tensor_variable(repeats)
    if repeats.type.dtype not in integer_dtypes:
        raise TypeError(f"repeat: repeats must be integers, got dtype {repeats.type.dtype}")
    if repeats.type.dtype == "uint64":
        # numpy.repeat casts counts to intp, which cannot hold every uint64.
        raise TypeError(f"repeat: repeats {repeats} of dtype uint64 are not supported (as in numpy.repeat); "
                        "use a signed integer dtype")
    if repeats.type.ndim > 1:
        raise ValueError("The dimension of repeats should not exceed 1.")
    if repeats.type.ndim == 1 and repeats.type.shape[0] == 1:
        repeats = repeats[0]
    elif repeats.type.ndim == 1 and isinstance(repeats, Constant):
        counts = np.asarray(repeats.data)
        if counts.size and counts.size == a.type.shape[axis] and np.all(counts == counts[0]):
            # One count for every entry: the scalar case, whose output length is known.
            repeats = as_tensor_variable(counts[0])
    if repeats.type.ndim == 1:
        return Repeat(axis=axis)(a, repeats)
    repeats = cast(repeats, "int64")
    static = _static_int(repeats)
    if static is not None and static < 0:
        raise ValueError(f"repeat: repeats may not be negative, got {static}")
    repeats = CheckAndRaise(ValueError, "Repeat: repeats may not contain negative values")(repeats, lm.ge(repeats, 0))
    shape = [a.shape[d] if a.type.shape[d] is None else a.type.shape[d] for d in range(a.type.ndim)]
    # A constant count keeps the output's static length (the checked count is not a constant).
    count = repeats if static is None else static
    wide = shape[:axis + 1] + [count] + shape[axis + 1:]
    from lucent.tensor.spacing import broadcast_to

    expanded = broadcast_to(ptb.expand_dims(a, axis + 1), wide)
    shape[axis] = shape[axis] * count
    return expanded.reshape(shape, ndim=a.type.ndim)


# --------------------------------------------------------------------------- #
# Windows and diagonals
# --------------------------------------------------------------------------- #
class Bartlett(Op):
    """The Bartlett (triangular) window of ``M`` points (``numpy.bartlett``)."""

    __props__ = ()

    def make_node(self, M):
        M = as_tensor_variable(M)
        if M.type.ndim != 0:
            raise TypeError(f"{type(self).__name__} only works on scalar input, got {M.type}")
        if M.type.dtype not in integer_dtypes:
            raise TypeError(f"{type(self).__name__} only works on integer input, got {M.type.dtype}")
        static = _static_int(M)
        return Apply(self, [M], [TensorType(config.floatX, (None if static is None else max(static, 0),))()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.bartlett(int(inputs[0])).astype(node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        from lucent.tensor import math as lm

        M = cast(node.inputs[0], "int64")
        return [(lm.maximum(M, constant(0, dtype="int64")),)]

    def L_op(self, inputs, outputs, output_grads):
        return [_disconnected()]

    def connection_pattern(self, node):
        return [[False]]


bartlett_ = Bartlett()


def bartlett(M):
    """The Bartlett window: ``M`` points rising linearly from 0 to 1 and back."""
    return bartlett_(M)


class FillDiagonal(Op):
    """A copy of ``a`` with its main diagonal set to the scalar ``val`` (``numpy.fill_diagonal``)."""

    __props__ = ()

    def make_node(self, a, val):
        a = as_tensor_variable(a)
        val = as_tensor_variable(val)
        if a.type.ndim < 2:
            raise TypeError(f"{type(self).__name__}: first parameter must have at least two dimensions")
        if val.type.ndim != 0:
            raise TypeError(f"{type(self).__name__}: second parameter must be a scalar")
        if upcast(a.type.dtype, val.type.dtype) != a.type.dtype:
            raise TypeError(
                f"{type(self).__name__}: type of second parameter ({val.type.dtype}) must be the same as "
                f"the first's ({a.type.dtype}) or castable to it without loss"
            )
        val = cast(val, a.type.dtype)
        return Apply(self, [a, val], [a.type()])

    def perform(self, node, inputs, output_storage):
        a = inputs[0].copy()
        if a.ndim > 2 and len(set(a.shape)) != 1:
            raise ValueError(f"FillDiagonal: all dimensions of input must be of equal length, got {a.shape}")
        n = min(a.shape)
        a[(np.arange(n),) * a.ndim] = inputs[1]
        output_storage[0][0] = a

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def L_op(self, inputs, outputs, output_grads):
        a, val = inputs
        (gz,) = output_grads
        if a.type.dtype in discrete_dtypes:
            return [_float_zeros_like(a), _float_zeros_like(val)]
        if a.type.ndim > 2:
            raise NotImplementedError(f"{type(self).__name__}: the gradient is implemented for matrices only")
        from lucent.tensor.diagonal import diagonal

        return [fill_diagonal(gz, 0), diagonal(gz).sum()]


fill_diagonal_ = FillDiagonal()


def fill_diagonal(a, val):
    """A copy of ``a`` whose main diagonal is ``val`` (a scalar castable to ``a``'s dtype)."""
    return fill_diagonal_(a, val)


class FillDiagonalOffset(Op):
    """A copy of the matrix ``a`` with its ``offset``-th diagonal set to the scalar ``val``."""

    __props__ = ()

    def make_node(self, a, val, offset):
        a = as_tensor_variable(a)
        val = as_tensor_variable(val)
        offset = as_tensor_variable(offset)
        if a.type.ndim != 2:
            raise TypeError(f"{type(self).__name__}: first parameter must have exactly two dimensions")
        if val.type.ndim != 0:
            raise TypeError(f"{type(self).__name__}: second parameter must be a scalar")
        if offset.type.ndim != 0:
            raise TypeError(f"{type(self).__name__}: third parameter must be a scalar")
        if offset.type.dtype not in integer_dtypes:
            raise TypeError(f"{type(self).__name__}: type of third parameter must be an integer, got {offset.type.dtype}")
        if upcast(a.type.dtype, val.type.dtype) != a.type.dtype:
            raise TypeError(
                f"{type(self).__name__}: type of second parameter ({val.type.dtype}) must be the same as "
                f"the first's ({a.type.dtype}) or castable to it without loss"
            )
        val = cast(val, a.type.dtype)
        return Apply(self, [a, val, offset], [a.type()])

    def perform(self, node, inputs, output_storage):
        a = inputs[0].copy()
        val, offset = inputs[1], int(inputs[2])
        h, w = a.shape
        rows = np.arange(max(0, -offset), min(h, w - offset)) if w - offset > 0 else np.arange(0)
        a[rows, rows + offset] = val
        output_storage[0][0] = a

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def connection_pattern(self, node):
        return [[True], [True], [False]]

    def L_op(self, inputs, outputs, output_grads):
        a, val, offset = inputs
        (gz,) = output_grads
        if a.type.dtype in discrete_dtypes:
            return [_float_zeros_like(a), _float_zeros_like(val), _disconnected()]
        return [fill_diagonal_offset(gz, 0, offset), _diag_sum(gz, offset), _disconnected()]


def _diag_sum(g, offset):
    """Sum of the ``offset``-th diagonal of the matrix ``g`` (``offset`` symbolic)."""
    from lucent.tensor import math as lm

    h, w = g.shape[0], g.shape[1]
    rows = ptb.arange(h)
    mask = lm.eq(ptb.expand_dims(rows, 1) + offset, ptb.expand_dims(ptb.arange(w), 0))
    return lm.sum(lm.switch(mask, g, 0))


fill_diagonal_offset_ = FillDiagonalOffset()


def fill_diagonal_offset(a, val, offset):
    """A copy of the matrix ``a`` whose ``offset``-th diagonal is ``val`` (offset > 0: above)."""
    return fill_diagonal_offset_(a, val, offset)


def to_one_hot(y, nb_class, dtype=None):
    """The one-hot matrix of the int vector ``y``: row ``i`` has a 1 in column ``y[i]``."""
    from lucent.tensor import math as lm

    y = as_tensor_variable(y)
    if y.type.ndim != 1:
        raise TypeError(f"to_one_hot: y must be a vector, got {y.type}")
    dtype = config.floatX if dtype is None else dtype
    hot = lm.eq(ptb.expand_dims(y, 1), ptb.expand_dims(ptb.arange(nb_class), 0))
    return cast(hot, dtype)


# --------------------------------------------------------------------------- #
# Unique values
# --------------------------------------------------------------------------- #
def _np_unique(x, return_index, return_inverse, return_counts, axis):
    """``numpy.unique`` as a tuple, with a flat inverse (NumPy 2 shapes it like ``x``)."""
    from lucent.npy_2_compat import old_np_unique

    outs = old_np_unique(x, return_index, return_inverse, return_counts, axis)
    return outs if isinstance(outs, tuple) else (outs,)


class Unique(Op):
    """``numpy.unique``: sorted unique values, optionally with first indices, inverse and counts.

    The inverse is always a vector (indices into the unique values that
    rebuild the flattened input, or the input along ``axis``).
    """

    __props__ = ("return_index", "return_inverse", "return_counts", "axis")

    def __init__(self, return_index=False, return_inverse=False, return_counts=False, axis=None):
        self.return_index = bool(return_index)
        self.return_inverse = bool(return_inverse)
        self.return_counts = bool(return_counts)
        if axis is not None and axis < 0:
            raise ValueError("Axis cannot be negative (the unique helper accepts negative axes).")
        self.axis = None if axis is None else int(axis)

    def make_node(self, x):
        x = as_tensor_variable(x)
        if self.axis is None:
            shape = (None,)
        else:
            if self.axis >= x.type.ndim:
                raise ValueError(f"Axis {self.axis} out of range for input {x} with ndim={x.type.ndim}.")
            shape = tuple(None if d == self.axis else s for d, s in enumerate(x.type.shape))
        outputs = [TensorType(x.type.dtype, shape)()]
        n_extra = self.return_index + self.return_inverse + self.return_counts
        outputs += [TensorType("int64", (None,))() for _ in range(n_extra)]
        return Apply(self, [x], outputs)

    def perform(self, node, inputs, output_storage):
        outs = _np_unique(inputs[0], self.return_index, self.return_inverse, self.return_counts, self.axis)
        for cell, value, var in zip(output_storage, outs, node.outputs):
            cell[0] = np.asarray(value, dtype=var.type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        from lucent.tensor import math as lm
        from lucent.tensor.shape import shape_i

        (x_shape,) = input_shapes
        shapes = [(shape_i(out, 0),) for out in node.outputs]
        if self.axis is not None:
            first = list(x_shape)
            first[self.axis] = shape_i(node.outputs[0], self.axis)
            shapes[0] = tuple(first)
        if self.return_inverse:
            k = 2 if self.return_index else 1
            if self.axis is not None:
                shapes[k] = (x_shape[self.axis],)
            else:
                size = constant(1, dtype="int64")
                for s in x_shape:
                    size = lm.mul(size, s)
                shapes[k] = (size,)
        return shapes


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None):
    """The sorted unique values of ``ar`` (along ``axis``), as ``numpy.unique``.

    With any of the ``return_*`` flags, a list: the values, then the first
    indices, the inverse (flat) and the counts that were asked for.
    """
    ar = as_tensor_variable(ar)
    if axis is not None:
        axis = normalize_axis_index(axis, ar.type.ndim, "unique")
    return Unique(return_index, return_inverse, return_counts, axis)(ar)


# --------------------------------------------------------------------------- #
# Flat indices <-> multi-indices
# --------------------------------------------------------------------------- #
def _check_order(order):
    if order not in ("C", "F"):
        raise ValueError(f"order must be 'C' or 'F', got {order!r}")


class UnravelIndex(Op):
    """Flat indices into an array of shape ``dims`` as one coordinate array per dimension."""

    __props__ = ("order",)

    def __init__(self, order="C"):
        _check_order(order)
        self.order = order

    def make_node(self, indices, dims):
        indices = as_tensor_variable(indices)
        dims = as_tensor_variable(dims)
        if indices.type.dtype not in integer_dtypes:
            raise TypeError(f"'{indices.type.dtype}' object cannot be interpreted as an index")
        if dims.type.dtype not in integer_dtypes:
            raise TypeError(f"'{dims.type.dtype}' object cannot be interpreted as an index")
        if dims.type.ndim != 1:
            raise TypeError(f"dims must be a 1D array, got {dims.type}")
        n = ptb.get_vector_length(dims)
        return Apply(self, [indices, dims], [TensorType("int64", indices.type.shape)() for _ in range(n)])

    def perform(self, node, inputs, output_storage):
        indices, dims = inputs
        size = int(np.prod(dims))
        if np.any((indices < 0) | (indices >= size)):
            bad = indices[(indices < 0) | (indices >= size)].reshape(-1)[0]
            raise ValueError(f"UnravelIndex: index {bad} is out of bounds for array with size {size}")
        res = np.unravel_index(indices, dims, order=self.order)
        for cell, r in zip(output_storage, res):
            cell[0] = np.array(r, dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]] * len(node.outputs)

    def connection_pattern(self, node):
        return [[False] * len(node.outputs), [False] * len(node.outputs)]

    def L_op(self, inputs, outputs, output_grads):
        return [_disconnected(), _disconnected()]


def unravel_index(indices, dims, order="C"):
    """The tuple of coordinate arrays of the flat ``indices`` in an array of shape ``dims``."""
    res = UnravelIndex(order=order)(indices, dims)
    return tuple(res) if isinstance(res, (list, tuple)) else (res,)


class RavelMultiIndex(Op):
    """Coordinate arrays into flat indices of an array of shape ``dims`` (``numpy.ravel_multi_index``)."""

    __props__ = ("mode", "order")

    def __init__(self, mode="raise", order="C"):
        if mode not in ("raise", "wrap", "clip"):
            raise ValueError(f"mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
        _check_order(order)
        self.mode = mode
        self.order = order

    def make_node(self, *inputs):
        *multi_index, dims = [as_tensor_variable(i) for i in inputs]
        if not multi_index:
            raise TypeError("RavelMultiIndex needs at least one index array")
        for i in multi_index:
            if i.type.dtype not in integer_dtypes:
                raise TypeError(f"'{i.type.dtype}' object cannot be interpreted as an index")
        if dims.type.dtype not in integer_dtypes:
            raise TypeError(f"'{dims.type.dtype}' object cannot be interpreted as an index")
        if dims.type.ndim != 1:
            raise TypeError(f"dims must be a 1D array, got {dims.type}")
        out = TensorType("int64", multi_index[0].type.shape)()
        return Apply(self, [*multi_index, dims], [out])

    def perform(self, node, inputs, output_storage):
        *multi_index, dims = inputs
        if len(multi_index) != len(dims):
            raise ValueError(
                f"RavelMultiIndex: parameter multi_index must be a sequence of length {len(dims)}, "
                f"got {len(multi_index)}"
            )
        try:
            res = np.ravel_multi_index(multi_index, dims, mode=self.mode, order=self.order)
        except ValueError as e:
            raise ValueError(f"RavelMultiIndex: {e}") from None
        output_storage[0][0] = np.asarray(res, dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def connection_pattern(self, node):
        return [[False]] * len(node.inputs)

    def L_op(self, inputs, outputs, output_grads):
        return [_disconnected() for _ in inputs]


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """Flat indices of the coordinates ``multi_index`` (a tuple of int arrays) in shape ``dims``."""
    if not isinstance(multi_index, (tuple, list)):
        raise TypeError(f"multi_index must be a tuple or a list, got {type(multi_index).__name__}.")
    return RavelMultiIndex(mode=mode, order=order)(*multi_index, dims)


from lucent.tensor.spacing import (  # noqa: E402
    broadcast_arrays,
    broadcast_shape,
    broadcast_shape_iter,
    broadcast_to,
    concat_with_broadcast,
    geomspace,
    linspace,
    logspace,
)

__all__ = [
    "bartlett",
    "bincount",
    "broadcast_arrays",
    "broadcast_shape",
    "broadcast_to",
    "compress",
    "concat_with_broadcast",
    "cumprod",
    "cumsum",
    "diff",
    "fill_diagonal",
    "fill_diagonal_offset",
    "geomspace",
    "linspace",
    "logspace",
    "ravel_multi_index",
    "repeat",
    "searchsorted",
    "squeeze",
    "unique",
    "unravel_index",
]
