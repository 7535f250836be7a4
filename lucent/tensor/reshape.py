"""Reshapes that say what they do: joining and splitting dimensions, packing and unpacking.

A general ``Reshape`` hides which dimensions it merges or splits; these ops
keep that structure in the graph:

* ``JoinDims(start_axis, n_axes)`` merges ``n_axes`` consecutive dimensions
  into one (``n_axes == 0`` inserts a dimension of length 1);
* ``SplitDims(axis)`` splits one dimension into the lengths of a shape vector
  (an empty shape removes a dimension of length 1).

Each is the other's gradient. Both are views, like NumPy's reshape of a
contiguous array. The canonicalize rewrites in
``lucent.tensor.rewriting.reshape`` turn them into ``Reshape`` (or
``expand_dims`` / ``squeeze`` / ``specify_shape``) so that the shape rewrites
and the kernels of ``Reshape`` apply.

``pack`` / ``unpack`` build on them: several tensors that share leading and
trailing axes are flattened in the middle and concatenated, and split back.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import pairwise

import numpy as np

from lucent.gradient import disconnected_type
from lucent.graph.basic import Apply, Variable
from lucent.graph.op import Op
from lucent.graph.replace import _vectorize_node
from lucent.tensor.basic import as_tensor_variable, get_scalar_constant_value, join
from lucent.tensor.exceptions import NotScalarConstantError
from lucent.tensor.joining import split
from lucent.tensor.math import prod
from lucent.tensor.type import tensor
from lucent.tensor.variable import TensorVariable


def _normalize_axis(axis, ndim, who):
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{who}: axis must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"{who}: axis {axis} is out of bounds for array of dimension {ndim}")
    return int(axis) % ndim


class JoinDims(Op):
    """Merge the ``n_axes`` dimensions from ``start_axis`` into one (a view of the input)."""

    __props__ = ("start_axis", "n_axes")
    view_map = {0: [0]}

    def __init__(self, start_axis: int, n_axes: int):
        if start_axis < 0:
            raise ValueError(f"JoinDims start_axis must be non-negative, got {start_axis}")
        if n_axes < 0:
            raise ValueError(f"JoinDims n_axes must be non-negative, got {n_axes}")
        self.start_axis = int(start_axis)
        self.n_axes = int(n_axes)

    @property
    def axis_range(self):
        return range(self.start_axis, self.start_axis + self.n_axes)

    def output_shapes(self, input_shapes, joined_shape):
        return (*input_shapes[: self.start_axis], joined_shape, *input_shapes[self.start_axis + self.n_axes:])

    def make_node(self, x):
        x = as_tensor_variable(x)
        if self.start_axis + self.n_axes > x.type.ndim:
            raise ValueError(
                f"JoinDims was asked to join dimensions {self.start_axis} to {self.n_axes}, "
                f"but input {x} has only {x.type.ndim} dimensions."
            )
        static = x.type.shape
        joined = None
        if all(static[i] is not None for i in self.axis_range):
            joined = int(np.prod([static[i] for i in self.axis_range], dtype="int64"))
        return Apply(self, [x], [tensor(dtype=x.type.dtype, shape=self.output_shapes(static, joined))])

    def infer_shape(self, fgraph, node, shapes):
        (shape,) = shapes
        joined = prod([shape[i] for i in self.axis_range], dtype="int64")
        return [self.output_shapes(shape, joined)]

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        new_shape = (*x.shape[: self.start_axis], int(np.prod(x.shape[self.start_axis:self.start_axis + self.n_axes], dtype="int64")),
                     *x.shape[self.start_axis + self.n_axes:])
        output_storage[0][0] = x.reshape(new_shape)

    def L_op(self, inputs, outputs, output_grads):
        (x,) = inputs
        (g,) = output_grads
        return [split_dims(g, shape=[x.shape[i] for i in self.axis_range], axis=self.start_axis)]


@_vectorize_node.register(JoinDims)
def _vectorize_join_dims(op, node, x):
    batched = x.type.ndim - node.inputs[0].type.ndim
    return JoinDims(op.start_axis + batched, op.n_axes).make_node(x)


def join_dims(x, start_axis: int = 0, n_axes: int | None = None) -> TensorVariable:
    """Join ``n_axes`` consecutive dimensions of ``x`` from ``start_axis`` into one.

    ``n_axes=None`` joins every dimension from ``start_axis`` on; ``n_axes=0``
    inserts a new dimension of length 1 at ``start_axis``.
    """
    x = as_tensor_variable(x)
    ndim = x.type.ndim
    if start_axis < 0:
        start_axis += max(1, ndim)
    if not 0 <= start_axis <= ndim:
        raise IndexError(f"Axis {start_axis} is out of bounds for array of dimension {ndim}")
    if n_axes is None:
        n_axes = ndim - start_axis
    return JoinDims(start_axis, n_axes)(x)


def _static_lengths(shape):
    """Constant entries of the shape vector ``shape`` (None where unknown).

    A slice of a tensor's shape (``x.shape[a:b]``, what ``pack`` records)
    reads the static lengths of ``x`` there.
    """
    from lucent.tensor.shape import Shape
    from lucent.tensor.subtensor import Subtensor

    n = shape.type.shape[0]
    if n is None:
        return ()
    owner = shape.owner
    if owner is not None and isinstance(owner.op, Subtensor) and owner.inputs[0].owner is not None \
            and isinstance(owner.inputs[0].owner.op, Shape) and len(owner.op.idx_list) == 1:
        try:
            bounds = [None if v is None else int(get_scalar_constant_value(v)) for v in _slice_bounds(owner)]
        except NotScalarConstantError:
            bounds = None
        if bounds is not None:
            static = owner.inputs[0].owner.inputs[0].type.shape[slice(*bounds)]
            if len(static) == n:
                return tuple(static)
    out = []
    for i in range(n):
        try:
            out.append(int(get_scalar_constant_value(shape[i])))
        except NotScalarConstantError:
            out.append(None)
    return tuple(out)


def _slice_bounds(node):
    """(start, stop, step) of a one-slice ``Subtensor`` node, as variables or None."""
    entry = node.op.idx_list[0]
    if not isinstance(entry, tuple):
        raise NotScalarConstantError("not a slice")
    inputs = iter(node.inputs[1:])
    return [next(inputs) if part else None for part in entry]


class SplitDims(Op):
    """Split dimension ``axis`` into the lengths of the int vector ``shape`` (a view of the input)."""

    __props__ = ("axis",)
    view_map = {0: [0]}

    def __init__(self, axis: int):
        if axis < 0:
            raise ValueError(f"SplitDims axis must be non-negative, got {axis}")
        self.axis = int(axis)

    def make_node(self, x, shape):
        x = as_tensor_variable(x)
        if isinstance(shape, (tuple, list)) and len(shape) == 0:
            shape = np.zeros(0, dtype="int64")
        shape = as_tensor_variable(shape)
        if shape.type.dtype == "bool" or np.dtype(shape.type.dtype).kind not in "iu":
            raise TypeError(f"SplitDims: shape must be an integer tensor, got {shape.type}")
        if shape.type.ndim != 1:
            raise TypeError(f"shape must be a 1-D tensor, got {shape} with {shape.type.ndim} dimensions")
        if self.axis >= x.type.ndim:
            raise ValueError(f"SplitDims: axis {self.axis} is out of bounds for {x} with {x.type.ndim} dimensions")
        if shape.type.shape[0] is None:
            raise ValueError("SplitDims: the length of the shape vector must be known statically")
        lengths = _static_lengths(shape)
        out_shape = (*x.type.shape[: self.axis], *lengths, *x.type.shape[self.axis + 1:])
        return Apply(self, [x, shape], [tensor(dtype=x.type.dtype, shape=out_shape)])

    def infer_shape(self, fgraph, node, shapes):
        x_shape, _ = shapes
        shape = node.inputs[1]
        return [(*x_shape[: self.axis], *[shape[i] for i in range(shape.type.shape[0])], *x_shape[self.axis + 1:])]

    def perform(self, node, inputs, output_storage):
        x, shape = inputs
        new = tuple(int(s) for s in shape)
        if int(np.prod(new, dtype="int64")) != x.shape[self.axis]:
            raise ValueError(
                f"SplitDims: cannot split dimension {self.axis} of length {x.shape[self.axis]} into {new}"
            )
        output_storage[0][0] = x.reshape((*x.shape[: self.axis], *new, *x.shape[self.axis + 1:]))

    def connection_pattern(self, node):
        return [[True], [False]]

    def L_op(self, inputs, outputs, output_grads):
        x, _ = inputs
        (g,) = output_grads
        n_axes = g.type.ndim - x.type.ndim + 1
        return [join_dims(g, start_axis=self.axis, n_axes=n_axes), disconnected_type()]


@_vectorize_node.register(SplitDims)
def _vectorize_split_dims(op, node, x, shape):
    from lucent.tensor.blockwise import vectorize_node_fallback

    batched = x.type.ndim - node.inputs[0].type.ndim
    if as_tensor_variable(shape).type.ndim != 1:
        return vectorize_node_fallback(op, node, x, shape)
    return SplitDims(op.axis + batched).make_node(x, shape)


def split_dims(x, shape, axis: int = 0) -> TensorVariable:
    """Split dimension ``axis`` of ``x`` into the lengths ``shape`` (an int, a sequence, or an int vector).

    An empty ``shape`` removes the dimension (which must have length 1).
    """
    x = as_tensor_variable(x)
    axis = _normalize_axis(axis, x.type.ndim, "split_dims")
    if not isinstance(shape, Sequence):
        if isinstance(shape, (Variable, np.ndarray)):
            if shape.ndim == 0:
                shape = (shape,)
        elif isinstance(shape, (int, np.integer)):
            shape = (shape,)
    elif len(shape) > 0:
        from lucent.tensor.basic import stack

        if any(isinstance(s, Variable) for s in shape):
            shape = stack([as_tensor_variable(s).astype("int64") for s in shape])
    return SplitDims(axis)(x, shape)


def _analyze_axes_list(axes) -> tuple[int, int, int]:
    """How many kept axes come before and after the raveled interval, and the minimum rank.

    Kept axes are either non-negative (contiguous, starting at 0), negative
    (contiguous, ending at -1), or both, non-negative ones first: anything
    else would not say unambiguously which axes are raveled.
    """
    if axes is None:
        return 0, 0, 0
    if isinstance(axes, (int, np.integer)):
        axes = (int(axes),)
    elif not isinstance(axes, Iterable):
        raise TypeError(f"axes must be an int, an iterable of ints, or None, got {axes!r}")
    axes = list(axes)
    if len(axes) == 0:
        raise ValueError("axes=[] is ambiguous; use None to ravel all")
    if len(set(axes)) != len(axes):
        raise ValueError(f"axes must have no duplicates, got {axes}")
    first_negative = next((i for i, a in enumerate(axes) if a < 0), len(axes))
    positive, negative = axes[:first_negative], axes[first_negative:]
    if not all(a < 0 for a in negative):
        raise ValueError(f"Negative axes must come after positive, got {axes}")
    for part, name in ((positive, "positive"), (negative, "negative")):
        if any(b <= a for a, b in pairwise(part)):
            raise ValueError(f"Axes must be strictly increasing in the {name} part, got {axes}")
    for part, name in ((positive, "Positive"), (negative, "Negative")):
        if any(b - a > 1 for a, b in pairwise(part)):
            raise ValueError(f"{name} axes must be contiguous, got {axes}")
    if positive and positive[0] != 0:
        raise ValueError(
            "If positive axes are provided, the first positive axis must be 0 to avoid ambiguity. "
            "To ravel indices starting from the front, use negative axes only."
        )
    if negative and negative[-1] != -1:
        raise ValueError(
            "If negative axes are provided, the last negative axis must be -1 to avoid ambiguity. "
            "To ravel indices up to the end, use positive axes only."
        )
    return len(positive), len(negative), len(positive) + len(negative)


def pack(*tensors, keep_axes=None):
    """Ravel the axes of every tensor that ``keep_axes`` does not keep, and concatenate along them.

    Returns the packed tensor and, per input, the shape of the raveled part
    (what ``unpack`` needs to undo it). ``keep_axes=None`` ravels everything
    (``concatenate([t.ravel() for t in tensors])``); kept axes are leading
    (0, 1, ...), trailing (..., -2, -1) or both, and must have the same
    lengths in every tensor.
    """
    tensor_list = [as_tensor_variable(t) for t in tensors]
    n_before, n_after, min_axes = _analyze_axes_list(keep_axes)
    joined, packed_shapes = [], []
    for i, t in enumerate(tensor_list):
        ndim = t.type.ndim
        if ndim < min_axes:
            raise ValueError(
                f"Input {i} (zero indexed) to pack has {ndim} dimensions, but keep_axes={keep_axes!r} assumes at "
                f"least {min_axes} dimension{'s' if min_axes != 1 else ''}."
            )
        n_packed = ndim - n_after - n_before
        packed_shapes.append(t.shape[n_before:n_before + n_packed])
        joined.append(join_dims(t, n_before, n_packed))
    return join(n_before, *joined), packed_shapes


def unpack(packed_input, packed_shapes, keep_axes=None):
    """Undo ``pack``: split the packed axis by ``packed_shapes`` and restore each part's shape."""
    packed_input = as_tensor_variable(packed_input)
    ndim = packed_input.type.ndim
    if keep_axes is None:
        if ndim != 1:
            raise ValueError("unpack can only be called with keep_axis=None for 1d inputs")
        split_axis = 0
    else:
        items = keep_axes if isinstance(keep_axes, Iterable) else (keep_axes,)
        kept = {_normalize_axis(a, ndim, "unpack") for a in items}
        free = [i for i in range(ndim) if i not in kept]
        if len(free) != 1:
            raise ValueError(
                "unpack input must have exactly one more dimension that implied by keep_axes. "
                f"{packed_input} has {ndim} dimensions, expected {len(kept) + 1}"
            )
        split_axis = free[0]
    if len(packed_shapes) == 1:
        parts = [packed_input]
    else:
        parts = split(packed_input, [prod(s, dtype="int64") for s in packed_shapes],
                      n_splits=len(packed_shapes), axis=split_axis)
    return [split_dims(part, s, split_axis) for part, s in zip(parts, packed_shapes, strict=True)]


__all__ = ["join_dims", "pack", "split_dims", "unpack"]
