"""Cutting and tiling arrays: ``Split``, ``roll``, ``tile``, the stack helpers,
``atleast_Nd``, ``matrix_transpose`` and uninitialised arrays (``AllocEmpty``).

``Split`` is an op whose outputs are views of its input; ``roll`` and
``tile`` are compositions of slicing, ``join`` and ``alloc``. Public at
PyTensor's path through :mod:`lucent.tensor.basic`.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from lucent.configdefaults import config
from lucent.graph.basic import Apply, Variable
from lucent.graph.op import Op
from lucent.scalar.dtypes import discrete_dtypes, integer_dtypes, normalize_dtype
from lucent.tensor.basic import (
    NotScalarConstantError,
    _check_int_scalar,
    _disconnected,
    _static_int,
    as_tensor_variable,
    get_scalar_constant_value,
    get_vector_length,
    join,
)
from lucent.tensor.type import TensorType


def _constant_axis(axis, who):
    if isinstance(axis, Variable):
        try:
            return int(get_scalar_constant_value(axis))
        except NotScalarConstantError:
            raise TypeError(f"The axis of {who} must be a constant integer; symbolic axes are not supported") from None
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"The axis of {who} must be an integer, got {type(axis).__name__}.")
    return int(axis)


class Split(Op):
    """Cut ``x`` along ``axis`` into ``len_splits`` pieces of the given sizes (views)."""

    __props__ = ("len_splits", "axis")

    def __init__(self, len_splits, axis=0):
        self.len_splits = int(len_splits)
        axis = _constant_axis(axis, "Split")
        if axis < 0:
            raise ValueError(f"Split axis must be non-negative, got {axis}.")
        self.axis = axis
        self.view_map = {i: [0] for i in range(self.len_splits)}

    def __str__(self):
        return f"Split{{len_splits={self.len_splits}, axis={self.axis}}}"

    def make_node(self, x, splits):
        x = as_tensor_variable(x)
        splits = as_tensor_variable(splits)
        if splits.type.ndim != 1 or splits.type.dtype not in integer_dtypes:
            raise TypeError(f"Split: `splits` must be an integer vector, got {splits.type}")
        if self.axis >= x.type.ndim:
            raise np.exceptions.AxisError(self.axis, x.type.ndim)
        if splits.type.shape[0] is not None and splits.type.shape[0] != self.len_splits:
            raise ValueError(f"Split: {splits.type.shape[0]} split sizes given for {self.len_splits} splits")
        outputs = []
        for i in range(self.len_splits):
            try:
                size = _static_int(splits[i])
            except Exception:
                size = None
            if size is not None and size < 0:
                size = None  # an invalid (negative) size fails when the node runs
            shape = list(x.type.shape)
            shape[self.axis] = size
            outputs.append(TensorType(x.type.dtype, tuple(shape))())
        return Apply(self, [x, splits], outputs)

    def perform(self, node, inputs, output_storage):
        x, splits = inputs
        if len(splits) != self.len_splits:
            raise ValueError(f"Split: got {len(splits)} split sizes, expected {self.len_splits}")
        if (splits < 0).any():
            raise ValueError(f"Split: split sizes cannot be negative, got {splits}")
        if splits.sum() != x.shape[self.axis]:
            raise ValueError(f"Split: split sizes sum to {splits.sum()}; expected {x.shape[self.axis]}")
        pieces = np.split(x, np.cumsum(splits[:-1]), axis=self.axis)
        for cell, piece in zip(output_storage, pieces):
            cell[0] = piece

    def infer_shape(self, fgraph, node, input_shapes):
        from lucent.tensor.basic import cast

        x_shape, _ = input_shapes
        splits = node.inputs[1]
        out = []
        for i in range(self.len_splits):
            shape = list(x_shape)
            shape[self.axis] = cast(splits[i], "int64")
            out.append(tuple(shape))
        return out

    def connection_pattern(self, node):
        n = len(node.outputs)
        return [[True] * n, [False] * n]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.gradient import DisconnectedType
        from lucent.tensor.basic import zeros_like

        x = inputs[0]
        if x.type.dtype in discrete_dtypes:
            from lucent.tensor.basic import _float_zeros_like

            return [_float_zeros_like(x), _disconnected()]
        grads = [zeros_like(o) if isinstance(g.type, DisconnectedType) else g for o, g in zip(outputs, output_grads)]
        return [join(self.axis, *grads) if len(grads) > 1 else grads[0], _disconnected()]


def split(x, splits_size, *, n_splits=None, axis=0):
    """``x`` cut along ``axis`` into pieces of the sizes ``splits_size`` (a list of views)."""
    from lucent.tensor.extra_ops import normalize_axis_index

    x = as_tensor_variable(x)
    if n_splits is None:
        n_splits = get_vector_length(splits_size) if isinstance(splits_size, Variable) else len(splits_size)
    axis = normalize_axis_index(_constant_axis(axis, "split"), x.type.ndim, "split")
    return Split(n_splits, axis)(x, splits_size, return_list=True)


def roll(x, shift, axis=None):
    """``x`` shifted cyclically by ``shift`` along ``axis`` (flattened when None), as ``numpy.roll``."""
    x = as_tensor_variable(x)
    if axis is None:
        if x.type.ndim > 1:
            return roll(x.flatten(), shift, axis=0).reshape(x.shape, ndim=x.type.ndim)
        axis = 0
    from lucent.tensor.extra_ops import normalize_axis_index

    axis = normalize_axis_index(axis, x.type.ndim, "roll")
    from lucent.tensor import math as lm

    n = x.shape[axis]
    shift = lm.switch(lm.eq(n, 0), 0, as_tensor_variable(shift) % lm.maximum(n, 1))
    front = [slice(None)] * x.type.ndim
    back = [slice(None)] * x.type.ndim
    front[axis] = slice(n - shift, None)
    back[axis] = slice(0, n - shift)
    return join(axis, x[tuple(front)], x[tuple(back)])


def _matrices(args):
    if len(args) < 2:
        raise ValueError("Too few arguments")
    args = [as_tensor_variable(a) for a in args]
    if any(a.type.ndim != 2 for a in args):
        raise ValueError("All arguments must have two dimensions")
    return args


def horizontal_stack(*args):
    """Join matrices side by side (along their columns). Unlike ``numpy.hstack``, only
    matrices are accepted, so the result is never ambiguous."""
    return join(1, *_matrices(args))


def vertical_stack(*args):
    """Join matrices on top of each other (along their rows); matrices only."""
    return join(0, *_matrices(args))


def tile(A, reps):
    """``A`` repeated ``reps`` times along each axis (``numpy.tile``); ``reps`` may be symbolic."""
    from lucent.tensor.basic import alloc, expand_dims
    from lucent.tensor.shape import shape_padleft

    A = as_tensor_variable(A)
    if not isinstance(reps, (list, tuple)):
        reps = as_tensor_variable(reps)
        if reps.type.ndim == 0:
            reps = (reps,)
        elif reps.type.ndim == 1:
            try:
                n = get_vector_length(reps)
            except ValueError:
                raise ValueError(
                    "Length of repetitions tensor cannot be determined. Use specify_shape to set the length."
                ) from None
            reps = tuple(reps[i] for i in range(n))
        else:
            raise ValueError(f"Repetitions tensor must be a scalar or a vector, got ndim={reps.type.ndim}")
    reps = [as_tensor_variable(r) for r in reps]
    if not all(r.type.ndim == 0 and r.type.dtype in discrete_dtypes for r in reps):
        raise ValueError(f"All reps entries should be scalar integers, got {[r.type for r in reps]}")
    out_ndim = max(len(reps), A.type.ndim)
    if len(reps) < out_ndim:
        reps = [as_tensor_variable(1)] * (out_ndim - len(reps)) + reps
    if A.type.ndim < out_ndim:
        A = shape_padleft(A, out_ndim - A.type.ndim)
    if out_ndim == 0:
        return A
    shape = [A.shape[d] for d in range(out_ndim)]
    interleaved = [v for pair in zip(reps, shape) for v in pair]
    grown = alloc(expand_dims(A, tuple(range(0, 2 * out_ndim, 2))), *interleaved)
    return grown.reshape([r * s for r, s in zip(reps, shape)], ndim=out_ndim)


def atleast_Nd(arry, *, n=1, left=True):
    """``arry`` with length-1 axes added (on the left by default) up to ``n`` dimensions."""
    from lucent.tensor.shape import shape_padleft, shape_padright

    arry = as_tensor_variable(arry)
    if arry.type.ndim >= n:
        return arry
    pad = shape_padleft if left else shape_padright
    return pad(arry, n - arry.type.ndim)


atleast_1d = partial(atleast_Nd, n=1)
atleast_2d = partial(atleast_Nd, n=2)
atleast_3d = partial(atleast_Nd, n=3)


def matrix_transpose(x):
    """``x`` with its last two axes swapped (every matrix of a stack transposed)."""
    from lucent.tensor.rearrange import swapaxes

    x = as_tensor_variable(x)
    if x.type.ndim < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, but it is {x.type.ndim}")
    return swapaxes(x, -1, -2)


class AllocEmpty(Op):
    """A new array of the given shape whose contents are not initialised (``numpy.empty``)."""

    __props__ = ("dtype",)
    #: The output's static shape comes from the values of the shape inputs: a clone with
    #: other shape inputs re-makes the node.
    _output_type_depends_on_input_value = True

    def __init__(self, dtype):
        self.dtype = normalize_dtype(dtype)

    def make_node(self, *shape):
        entries = [_check_int_scalar(s, "AllocEmpty: each shape entry") for s in shape]
        static = tuple(_static_int(s) for s in entries)
        out = TensorType(self.dtype, static)()
        # Uninitialised memory: two runs (or DebugMode's two paths) need not agree.
        from lucent.tensor.type import values_eq_approx_always_true

        out.tag.values_eq_approx = values_eq_approx_always_true
        return Apply(self, entries, [out])

    def perform(self, node, inputs, output_storage):
        shape = tuple(int(s) for s in inputs)
        if any(s < 0 for s in shape):
            raise ValueError(f"AllocEmpty: negative dimensions are not allowed, got shape {shape}")
        output_storage[0][0] = np.empty(shape, dtype=self.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(node.inputs)]

    def do_constant_folding(self, fgraph, node):
        return False

    def connection_pattern(self, node):
        return [[False] for _ in node.inputs]

    def L_op(self, inputs, outputs, output_grads):
        return [_disconnected() for _ in inputs]


def empty(shape, dtype=None):
    """A new uninitialised array of ``shape`` (``dtype`` defaults to floatX)."""
    from lucent.tensor.creation import _shape_entries

    dtype = config.floatX if dtype is None else dtype
    return AllocEmpty(dtype)(*_shape_entries(shape))


def empty_like(prototype, dtype=None):
    """A new uninitialised array with the shape (and dtype, unless given) of ``prototype``."""
    prototype = as_tensor_variable(prototype)
    dtype = prototype.type.dtype if dtype is None else dtype
    return empty([prototype.shape[d] for d in range(prototype.type.ndim)], dtype)


__all__ = [
    "AllocEmpty",
    "Split",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "atleast_Nd",
    "empty",
    "empty_like",
    "horizontal_stack",
    "matrix_transpose",
    "roll",
    "split",
    "tile",
    "vertical_stack",
]
