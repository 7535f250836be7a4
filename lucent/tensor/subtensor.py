"""Indexing tensors the NumPy way: ``x[1:, ::-1]``, ``x[i]``, ``x[idx_vector]``, ``x[mask]``.

``getitem`` (behind ``x[...]``) sorts an index into one of two ops:

* ``Subtensor`` for *basic* indexing (ints, slices): the result is a view.
  Which positions are ints and which slice bounds are given is part of the
  op (``idx_list``); the values themselves are integer scalar inputs, so
  ``x[i:i + 2]`` with a symbolic ``i`` is one op, and the same op serves
  every value of ``i``. The op prints like ``Subtensor{start:stop, i}``.
* ``AdvancedSubtensor`` for every mix with integer arrays or boolean masks
  (``x[int_vector]`` included), following NumPy's rules for where the
  indexed dimensions go. ``AdvancedSubtensor1`` (rows of a tensor by one
  integer vector) is built only by ``advanced_subtensor1``.

``None`` (a new axis) becomes an ``expand_dims`` of the input followed by a
full slice of the new axis, and ``...`` becomes full slices, so the ops only
ever see ints, slices and arrays.

``set_subtensor(x[idx], y)`` / ``inc_subtensor(x[idx], y)`` take the *indexed
expression* and build the matching ``IncSubtensor`` family op, which returns
a new tensor (or overwrites ``x`` once an in-place rewrite allows it).
Incrementing at repeated integer indices accumulates, like ``np.add.at``;
that is also what makes it the gradient of advanced indexing.

This module holds the ``idx_list`` encoding, basic indexing and the
dispatch from a Python index to an op. The advanced-indexing ops live in
``lucent.tensor.advanced_subtensor`` and are imported back at the end of
this module, so ``lucent.tensor.subtensor.AdvancedSubtensor`` still works.
"""

from __future__ import annotations

import numpy as np

from lucent.configdefaults import config
from lucent.graph.basic import Apply, Constant, Variable
from lucent.graph.op import Op
from lucent.scalar.dtypes import discrete_dtypes, integer_dtypes, upcast
from lucent.tensor.basic import (
    NotScalarConstantError,
    as_tensor_variable,
    constant,
    expand_dims,
    get_scalar_constant_value,
    zeros_like,
)
from lucent.tensor.creation import _sum_to
from lucent.tensor.type import TensorType

# Entries of an ``idx_list``:
#   "i"               an integer index (one scalar input); removes the dimension
#   (start, stop, step)  a slice; each is True when that bound is an input, None if absent
#   "a"               an integer array index (advanced ops only; one input)
#   "b"               a boolean mask (advanced ops only; one input, consumes mask.ndim dims)
_INT = "i"
_ARRAY = "a"
_MASK = "b"
_FULL = (None, None, None)


def _disconnected():
    from lucent.gradient import DisconnectedType

    return DisconnectedType()()


def _is_slice(entry):
    return isinstance(entry, tuple)


def _entry_str(entry):
    if entry == _INT:
        return "i"
    if entry in (_ARRAY, _MASK):
        return "idx" if entry == _ARRAY else "mask"
    start, stop, step = entry
    text = ("start" if start else "") + ":" + ("stop" if stop else "")
    if step:
        text += ":step"
    return text


def _n_inputs(entry):
    if _is_slice(entry):
        return sum(1 for p in entry if p)
    return 1


def _consumed(entry, index_var=None):
    """Number of input dimensions an entry indexes."""
    if entry == _MASK:
        return index_var.type.ndim
    return 1


def _split_inputs(idx_list, inputs):
    """Pair each entry with its input variables (or values): a list of (entry, parts)."""
    out = []
    it = iter(inputs)
    for entry in idx_list:
        if _is_slice(entry):
            out.append((entry, tuple(next(it) if p else None for p in entry)))
        else:
            out.append((entry, next(it)))
    return out


def _const(v):
    try:
        return int(get_scalar_constant_value(v))
    except NotScalarConstantError:
        return None


def _static_slice_length(n, parts):
    """Length of ``x[start:stop:step]`` along a dimension of static length ``n``, or None."""
    start, stop, step = (None if p is None else _const(p) for p in parts)
    if any(p is not None and c is None for p, c in zip(parts, (start, stop, step))):
        return None
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if n is None:
        if start is None and stop is None and step in (None, 1, -1):
            return None
        if start is not None and stop is not None and (step or 1) > 0 and 0 <= stop <= start:
            return 0
        return None
    return len(range(*slice(start, stop, step).indices(n)))


def _int_scalar(v, what):
    if isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{what} must be an integer, got the boolean {v!r}")
    if isinstance(v, (int, np.integer)):
        if not np.iinfo("int64").min <= int(v) <= np.iinfo("int64").max:
            # Indices are int64: a larger number would silently wrap around.
            raise IndexError(f"{what} {int(v)} does not fit in int64, the dtype of indices")
        return constant(int(v), dtype="int64")
    v = as_tensor_variable(v)
    if v.type.ndim != 0 or v.type.dtype not in integer_dtypes:
        raise TypeError(f"{what} must be an integer scalar, got {v} of type {v.type}")
    return v


def _check_static_int(x_type, axis, i):
    n = x_type.shape[axis]
    value = _const(i)
    if n is not None and value is not None and not -n <= value < n:
        raise IndexError(f"index {value} is out of bounds for axis {axis} with length {n}")


def _runtime_int(i, axis, n, op):
    i = int(i)
    if not -n <= i < n:
        raise IndexError(f"{op}: index {i} is out of bounds for axis {axis} with length {n}")
    return i


def _runtime_slice(parts):
    start, stop, step = (None if p is None else int(p) for p in parts)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    return slice(start, stop, step)


# --------------------------------------------------------------------------- #
# Length of a slice, for shape inference
# --------------------------------------------------------------------------- #
class SliceLength(Op):
    """``len(range(n)[start:stop:step])`` as an int64 scalar; used by ``infer_shape``."""

    __props__ = ("pattern",)

    def __init__(self, pattern):
        self.pattern = tuple(bool(p) for p in pattern)

    def make_node(self, n, *bounds):
        inputs = [as_tensor_variable(n), *(as_tensor_variable(b) for b in bounds)]
        return Apply(self, inputs, [TensorType("int64", ())()])

    def perform(self, node, inputs, output_storage):
        n, *bounds = inputs
        it = iter(bounds)
        parts = [next(it) if p else None for p in self.pattern]
        sl = _runtime_slice(parts)
        output_storage[0][0] = np.asarray(len(range(*sl.indices(int(n)))), dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [()]

    def connection_pattern(self, node):
        return [[False] for _ in node.inputs]

    def L_op(self, inputs, outputs, output_grads):
        return [_disconnected() for _ in inputs]


def _slice_length_var(n, parts, static):
    if static is not None:
        return constant(static, dtype="int64")
    pattern = tuple(p is not None for p in parts)
    if pattern == (False, False, False):
        return n
    return SliceLength(pattern)(n, *[p for p in parts if p is not None])


# --------------------------------------------------------------------------- #
# Basic indexing
# --------------------------------------------------------------------------- #
def _basic_static_shape(x_type, idx_list, inputs):
    shape = []
    axis = 0
    for entry, parts in _split_inputs(idx_list, inputs):
        if entry == _INT:
            _check_static_int(x_type, axis, parts)
        else:
            shape.append(_static_slice_length(x_type.shape[axis], parts))
        axis += 1
    return tuple(shape) + tuple(x_type.shape[axis:])


def _basic_index_tuple(idx_list, values, x_shape, op):
    idx = []
    axis = 0
    for entry, parts in _split_inputs(idx_list, values):
        if entry == _INT:
            idx.append(_runtime_int(parts, axis, x_shape[axis], op))
        else:
            idx.append(_runtime_slice(parts))
        axis += 1
    # The trailing Ellipsis makes even a fully int-indexed result a 0-d view.
    return tuple(idx) + (Ellipsis,)


class Subtensor(Op):
    """Basic indexing with ints and slices; the output is a view of the input."""

    __props__ = ("idx_list",)
    view_map = {0: [0]}

    def __init__(self, idx_list):
        self.idx_list = tuple(idx_list)

    def __str__(self):
        return f"{type(self).__name__}{{{', '.join(_entry_str(e) for e in self.idx_list)}}}"

    def make_node(self, x, *index_inputs):
        x = as_tensor_variable(x)
        index_inputs = [_int_scalar(i, "A subtensor index") for i in index_inputs]
        if len(self.idx_list) > x.type.ndim:
            raise IndexError(f"too many indices for {x}: it has {x.type.ndim} dimensions")
        if sum(_n_inputs(e) for e in self.idx_list) != len(index_inputs):
            raise ValueError(f"{self} needs {sum(_n_inputs(e) for e in self.idx_list)} index inputs")
        static = _basic_static_shape(x.type, self.idx_list, index_inputs)
        return Apply(self, [x, *index_inputs], [TensorType(x.type.dtype, static)()])

    def perform(self, node, inputs, output_storage):
        x, *values = inputs
        output_storage[0][0] = x[_basic_index_tuple(self.idx_list, values, x.shape, self)]

    def infer_shape(self, fgraph, node, input_shapes):
        x_shape = input_shapes[0]
        out_static = node.outputs[0].type.shape
        out = []
        axis = 0
        for entry, parts in _split_inputs(self.idx_list, node.inputs[1:]):
            if _is_slice(entry):
                out.append(_slice_length_var(x_shape[axis], parts, out_static[len(out)]))
            axis += 1
        out.extend(x_shape[axis:])
        return [tuple(out)]

    def connection_pattern(self, node):
        return [[True]] + [[False]] * (len(node.inputs) - 1)

    def L_op(self, inputs, outputs, output_grads):
        x, *rest = inputs
        if x.type.dtype in discrete_dtypes:
            gx = zeros_like(x, dtype=config.floatX)
        else:
            gx = IncSubtensor(self.idx_list)(zeros_like(x), output_grads[0], *rest)
        return [gx] + [_disconnected() for _ in rest]


def _check_y_broadcast(y, y_type, target_shape, op):
    """Refuse to broadcast a length-1 dimension of ``y`` that its type does not declare."""
    if y.ndim > len(target_shape):
        raise ValueError(f"{op}: the value has shape {y.shape}, more dimensions than the indexed {target_shape}")
    offset = len(target_shape) - y.ndim
    for d, length in enumerate(y.shape):
        want = target_shape[d + offset]
        if length != want and not (length == 1 and y_type.shape[d] == 1):
            hint = (
                "; a length-1 dimension broadcasts only when its type says so (see specify_broadcastable)"
                if length == 1
                else ""
            )
            raise ValueError(
                f"{op}: cannot broadcast a value of shape {y.shape} into the indexed region of shape "
                f"{tuple(target_shape)}{hint}"
            )


def _check_y_static(y, region_shape, op):
    if y.type.ndim > len(region_shape):
        raise TypeError(
            f"{op}: the value {y} has {y.type.ndim} dimensions, more than the {len(region_shape)} "
            "of the indexed region"
        )
    offset = len(region_shape) - y.type.ndim
    for d, length in enumerate(y.type.shape):
        want = region_shape[d + offset]
        if length is not None and want is not None and length not in (1, want):
            raise ValueError(
                f"{op}: a value of static shape {y.type.shape} cannot be broadcast into the indexed "
                f"region of shape {region_shape}"
            )


def _check_y_dtype(x, y, op):
    if upcast(x.type.dtype, y.type.dtype) != x.type.dtype:
        raise TypeError(
            f"{op}: cannot store values of dtype {y.type.dtype} into a tensor of dtype "
            f"{x.type.dtype} without loss; cast the value first"
        )


class _IncMixin:
    """What the three increment/set ops share: naming, gradient of x and y."""

    def __str__(self):
        base = type(self).__name__.replace("Inc", "Set") if self.set_instead_of_inc else type(self).__name__
        inner = ", ".join(_entry_str(e) for e in getattr(self, "idx_list", ()))
        if self.inplace:
            inner = f"{inner};inplace" if inner else "inplace"
        return f"{base}{{{inner}}}" if inner else base

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def connection_pattern(self, node):
        return [[True], [True]] + [[False]] * (len(node.inputs) - 2)

    def _getter(self):
        raise NotImplementedError

    def L_op(self, inputs, outputs, output_grads):
        x, y, *rest = inputs
        (gz,) = output_grads
        getter = self._getter()
        if x.type.dtype in discrete_dtypes:
            gx = zeros_like(x, dtype=config.floatX)
        elif self.set_instead_of_inc:
            gx = type(self)(**{**self._props_dict(), "inplace": False, "set_instead_of_inc": True})(
                gz, constant(np.zeros((), dtype=gz.type.dtype)), *rest
            )
        else:
            gx = gz
        if y.type.dtype in discrete_dtypes:
            gy = zeros_like(y, dtype=config.floatX)
        else:
            gy = _sum_to(getter(gz, *rest), y)
        return [gx, gy] + [_disconnected() for _ in rest]


class IncSubtensor(_IncMixin, Op):
    """``x`` with ``x[idx]`` set to (or incremented by) ``y``, for basic indices.

    Returns a new array unless ``inplace`` (made by rewrites), in which case
    ``x`` itself is overwritten and returned.
    """

    __props__ = ("idx_list", "inplace", "set_instead_of_inc")

    def __init__(self, idx_list, inplace=False, set_instead_of_inc=False):
        self.idx_list = tuple(idx_list)
        self.inplace = bool(inplace)
        self.set_instead_of_inc = bool(set_instead_of_inc)
        self.destroy_map = {0: [0]} if self.inplace else {}

    def make_node(self, x, y, *index_inputs):
        x = as_tensor_variable(x)
        y = as_tensor_variable(y)
        index_inputs = [_int_scalar(i, "A subtensor index") for i in index_inputs]
        if len(self.idx_list) > x.type.ndim:
            raise IndexError(f"too many indices for {x}: it has {x.type.ndim} dimensions")
        _check_y_dtype(x, y, self)
        _check_y_static(y, _basic_static_shape(x.type, self.idx_list, index_inputs), self)
        return Apply(self, [x, y, *index_inputs], [x.type()])

    def perform(self, node, inputs, output_storage):
        x, y, *values = inputs
        out = x if self.inplace else x.copy()
        region = out[_basic_index_tuple(self.idx_list, values, x.shape, self)]
        _check_y_broadcast(np.asarray(y), node.inputs[1].type, region.shape, self)
        if self.set_instead_of_inc:
            region[...] = y
        else:
            region += y
        output_storage[0][0] = out

    def inplace_on_inputs(self, allowed_inplace_inputs):
        if 0 in allowed_inplace_inputs:
            return type(self)(self.idx_list, inplace=True, set_instead_of_inc=self.set_instead_of_inc)
        return self

    def _getter(self):
        return Subtensor(self.idx_list)


# --------------------------------------------------------------------------- #
# From a Python index to an op
# --------------------------------------------------------------------------- #
def _convert_entry(entry):
    """One index entry as (kind, payload): kind is 'newaxis', 'ellipsis', 'slice', 'int', 'array', 'mask'."""
    if entry is None:
        return "newaxis", None
    if entry is Ellipsis:
        return "ellipsis", None
    if isinstance(entry, slice):
        parts = tuple(None if p is None else _int_scalar(p, "A slice bound") for p in (entry.start, entry.stop, entry.step))
        if parts[2] is not None and _const(parts[2]) == 0:
            raise ValueError("slice step cannot be zero")
        return "slice", parts
    if isinstance(entry, (bool, np.bool_)):
        raise TypeError("Indexing with a Python bool is not supported; use a boolean array")
    if isinstance(entry, (int, np.integer)):
        return "int", _int_scalar(entry, "An index")
    if isinstance(entry, (list, tuple, np.ndarray)) and not any(isinstance(v, Variable) for v in np.ravel(np.asarray(entry, dtype=object))):
        arr = np.asarray(entry)
        if arr.size == 0 and arr.dtype.kind == "f":
            arr = arr.astype("int64")
        if arr.dtype.kind == "b":
            if arr.ndim == 0:
                raise NotImplementedError("Indexing with a 0-d boolean (a scalar mask) is not implemented")
            return "mask", constant(arr)
        if arr.dtype.kind not in "iu":
            raise TypeError(
                f"index must be integers or a boolean mask: only integers, slices, None, ..., and integer "
                f"or boolean arrays are valid indices, got {entry!r}"
            )
        if arr.ndim == 0:
            return "int", constant(int(arr), dtype="int64")
        return "array", constant(arr.astype("int64"))
    v = as_tensor_variable(entry)
    if v.type.dtype == "bool":
        if v.type.ndim == 0:
            raise NotImplementedError("Indexing with a 0-d boolean tensor (a scalar mask) is not implemented")
        return "mask", v
    if v.type.dtype not in integer_dtypes:
        raise TypeError(f"index must be integers or a boolean mask, got {v} of dtype {v.type.dtype}")
    return ("int" if v.type.ndim == 0 else "array"), v


def getitem(x, index):
    """``x[index]`` with NumPy semantics (see the module docstring)."""
    x = as_tensor_variable(x)
    if not isinstance(index, tuple):
        index = (index,)
    entries = [_convert_entry(e) for e in index]
    if sum(k == "ellipsis" for k, _ in entries) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(p.type.ndim if k == "mask" else 1 for k, p in entries if k not in ("newaxis", "ellipsis"))
    if consumed > x.type.ndim:
        raise IndexError(
            f"too many indices for tensor: tensor is {x.type.ndim}-dimensional, but {consumed} were indexed"
        )
    expanded = []
    for k, p in entries:
        if k == "ellipsis":
            expanded.extend([("slice", _FULL)] * (x.type.ndim - consumed))
        else:
            expanded.append((k, p))
    # New axes: insert them into x, then take them with a full slice.
    new_axes = []
    pos = 0
    for k, p in expanded:
        if k == "newaxis":
            new_axes.append(pos)
        pos += p.type.ndim if k == "mask" else 1
    if new_axes:
        x = expand_dims(x, tuple(new_axes))
        x.tag.from_newaxis = tuple(new_axes)
        expanded = [("slice", _FULL) if k == "newaxis" else (k, p) for k, p in expanded]
        if all(e == ("slice", _FULL) for e in expanded):
            # Only new axes (``x[:, None]``): the expansion is the whole result, as in PyTensor.
            return x

    if any(k in ("array", "mask") for k, _ in expanded):
        # Every array index, ``x[int_vector]`` included, is one AdvancedSubtensor node
        # (AdvancedSubtensor1 is built only by advanced_subtensor1), as in PyTensor 3.
        idx_list, inputs = _to_idx_list(expanded)
        return AdvancedSubtensor(idx_list)(x, *inputs)

    while expanded and expanded[-1] == ("slice", _FULL) and len(expanded) > 1:
        expanded.pop()
    if not expanded:
        expanded = [("slice", _FULL)] if x.type.ndim else []
    if not expanded:
        return x
    idx_list, inputs = _to_idx_list(expanded)
    return Subtensor(idx_list)(x, *inputs)


def _to_idx_list(expanded):
    idx_list, inputs = [], []
    codes = {"int": _INT, "array": _ARRAY, "mask": _MASK}
    for k, p in expanded:
        if k == "slice":
            idx_list.append(tuple(True if b is not None else None for b in p))
            inputs.extend(b for b in p if b is not None)
        else:
            idx_list.append(codes[k])
            inputs.append(p)
    return tuple(idx_list), inputs


def inc_subtensor(x, y, inplace=False, set_instead_of_inc=False, tolerate_inplace_aliasing=False,
                  ignore_duplicates=False):
    """The tensor indexed by ``x = t[idx]``, with ``y`` added to (or written into) ``t[idx]``.

    ``x`` must be the result of indexing; the result has the shape of ``t``.
    Repeated integer indices accumulate, like ``np.add.at``.
    """
    x = as_tensor_variable(x)
    y = as_tensor_variable(y)
    owner = x.owner
    what = "set_subtensor" if set_instead_of_inc else "inc_subtensor"
    if owner is None or not isinstance(owner.op, (Subtensor, AdvancedSubtensor1, AdvancedSubtensor)):
        raise TypeError(
            f"{what} expects the result of indexing a tensor (for example {what}(x[1:], y)), "
            f"got {x}" + (f" computed by {owner.op}" if owner is not None else "")
        )
    base, *index_inputs = owner.inputs
    op = owner.op
    if isinstance(op, Subtensor):
        new = IncSubtensor(op.idx_list, inplace, set_instead_of_inc)
    elif isinstance(op, AdvancedSubtensor1):
        # The general op, which knows ignore_duplicates (as PyTensor 3 builds it).
        new = AdvancedIncSubtensor((_ARRAY,), inplace, set_instead_of_inc, ignore_duplicates)
    else:
        new = AdvancedIncSubtensor(op.idx_list, inplace, set_instead_of_inc, ignore_duplicates)
    out = new(base, y, *index_inputs)
    new_axes = getattr(base.tag, "from_newaxis", None)
    if new_axes:
        # ``t[None, ...]`` indexed an expanded copy of ``t``: drop the added axes again.
        from lucent.tensor.elemwise import DimShuffle

        keep = tuple(d for d in range(out.type.ndim) if d not in new_axes)
        out = DimShuffle(out.type.ndim, keep)(out)
    return out


def set_subtensor(x, y, inplace=False, tolerate_inplace_aliasing=False):
    """The tensor indexed by ``x = t[idx]``, with ``t[idx]`` replaced by ``y``."""
    return inc_subtensor(x, y, inplace=inplace, set_instead_of_inc=True,
                         tolerate_inplace_aliasing=tolerate_inplace_aliasing)


def as_index_constant(a):
    """An index entry with its Python integers made int64 scalar constants (slices entry by entry).

    ``None`` and variables are returned as they are; anything else goes
    through ``as_tensor_variable``. Indexing with the result builds the same
    node as indexing with the original literals.
    """
    if a is None or isinstance(a, Variable):
        return a
    if isinstance(a, slice):
        return slice(as_index_constant(a.start), as_index_constant(a.stop), as_index_constant(a.step))
    if isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)):
        from lucent.scalar.basic import ScalarConstant, int64

        return ScalarConstant(int64, int(a))
    return as_tensor_variable(a)


def take(a, indices, axis=None, mode="raise"):
    """``numpy.take``: ``a.flatten()[indices]`` or ``a[..., indices, ...]`` along ``axis``.

    ``mode`` says what an out-of-range index does: ``'raise'`` an
    ``IndexError`` (when run), ``'clip'`` use the nearest end, ``'wrap'``
    count around (modulo the axis length). ``None`` means ``'raise'``.
    """
    from lucent.tensor.basic import flatten

    if mode is None:
        mode = "raise"
    if mode not in ("raise", "clip", "wrap"):
        raise ValueError(f"take: mode must be 'raise', 'clip' or 'wrap', got {mode!r}")
    if axis is not None and (isinstance(axis, bool) or not isinstance(axis, (int, np.integer))):
        raise TypeError(f"take: axis must be an integer or None, got {axis!r}")
    a = as_tensor_variable(a)
    if axis is None:
        a = flatten(a)
        axis = 0
    elif not -max(a.type.ndim, 1) <= axis < max(a.type.ndim, 1):
        raise np.exceptions.AxisError(f"take: axis {axis} is out of bounds for a tensor of dimension {a.type.ndim}")
    axis = int(axis) % max(a.type.ndim, 1)
    if mode != "raise":
        from lucent.tensor import math as lm

        indices = as_tensor_variable(indices)
        n = a.shape[axis]
        indices = lm.clip(indices, 0, n - 1) if mode == "clip" else indices % n
    return getitem(a, (slice(None),) * axis + (indices,))


def flip(arr, axis=None):
    """``numpy.flip``: a view of ``arr`` with the order of entries reversed along ``axis``
    (an int or a tuple of ints; every axis when None)."""
    arr = as_tensor_variable(arr)
    ndim = arr.type.ndim
    if axis is None:
        axes = set(range(ndim))
    else:
        items = axis if isinstance(axis, (tuple, list)) else (axis,)
        axes = set()
        for a in items:
            if isinstance(a, Variable) or isinstance(a, bool) or not isinstance(a, (int, np.integer)):
                raise TypeError(f"flip: axis must be an int or a tuple of ints, got {axis!r}")
            if not -ndim <= a < ndim:
                raise np.exceptions.AxisError(f"flip: axis {a} is out of bounds for a tensor of dimension {ndim}")
            if int(a) % ndim in axes:
                raise ValueError(f"flip: repeated axis in {axis!r}")
            axes.add(int(a) % ndim)
    return getitem(arr, tuple(slice(None, None, -1) if d in axes else slice(None) for d in range(ndim)))


# --------------------------------------------------------------------------- #
# Advanced indexing (defined in ``advanced_subtensor``, which imports this
# module first)
# --------------------------------------------------------------------------- #
from lucent.tensor.advanced_subtensor import (  # noqa: E402
    AdvancedIncSubtensor,
    AdvancedIncSubtensor1,
    AdvancedSubtensor,
    AdvancedSubtensor1,
    advanced_inc_subtensor,
    advanced_inc_subtensor1,
    advanced_set_subtensor,
    advanced_set_subtensor1,
    advanced_subtensor,
    advanced_subtensor1,
)
from lucent.tensor.subtensor_shapes import (  # noqa: E402
    _is_provably_non_negative,
    _is_provably_positive,
    as_index_literal,
    basic_shape,
    get_canonical_form_slice,
    group_indices,
    indexed_result_shape,
    slice_at_axis,
    slice_len,
)

__all__ = [
    "AdvancedIncSubtensor",
    "AdvancedIncSubtensor1",
    "AdvancedSubtensor",
    "AdvancedSubtensor1",
    "IncSubtensor",
    "SliceLength",
    "Subtensor",
    "advanced_inc_subtensor1",
    "advanced_set_subtensor1",
    "advanced_subtensor1",
    "as_index_constant",
    "slice_at_axis",
    "flip",
    "getitem",
    "inc_subtensor",
    "set_subtensor",
    "take",
]
