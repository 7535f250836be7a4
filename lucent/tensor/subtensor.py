"""Indexing tensors the NumPy way: ``x[1:, ::-1]``, ``x[i]``, ``x[idx_vector]``, ``x[mask]``.

``getitem`` (behind ``x[...]``) sorts an index into one of three ops:

* ``Subtensor`` for *basic* indexing (ints, slices): the result is a view.
  Which positions are ints and which slice bounds are given is part of the
  op (``idx_list``); the values themselves are integer scalar inputs, so
  ``x[i:i + 2]`` with a symbolic ``i`` is one op, and the same op serves
  every value of ``i``. The op prints like ``Subtensor{start:stop, i}``.
* ``AdvancedSubtensor1`` for the common ``x[int_vector]`` (rows of x).
* ``AdvancedSubtensor`` for every other mix with integer arrays or boolean
  masks, following NumPy's rules for where the indexed dimensions go.

``None`` (a new axis) becomes an ``expand_dims`` of the input followed by a
full slice of the new axis, and ``...`` becomes full slices, so the ops only
ever see ints, slices and arrays.

``set_subtensor(x[idx], y)`` / ``inc_subtensor(x[idx], y)`` take the *indexed
expression* and build the matching ``IncSubtensor`` family op, which returns
a new tensor (or overwrites ``x`` once an in-place rewrite allows it).
Incrementing at repeated integer indices accumulates, like ``np.add.at``;
that is also what makes it the gradient of advanced indexing.
"""

from __future__ import annotations

import numpy as np

from lucent.configdefaults import config
from lucent.graph.basic import Apply, Constant, Variable
from lucent.graph.op import Op
from lucent.scalar.dtypes import discrete_dtypes, integer_dtypes, upcast
from lucent.tensor.basic import (
    NotScalarConstantError,
    _sum_to,
    as_tensor_variable,
    constant,
    expand_dims,
    get_scalar_constant_value,
    zeros_like,
)
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
        raise ValueError(
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
# Advanced indexing
# --------------------------------------------------------------------------- #
def _check_int_vector(ilist, op):
    ilist = as_tensor_variable(ilist)
    if ilist.type.ndim != 1 or ilist.type.dtype not in integer_dtypes:
        raise TypeError(f"{op}: the index must be an integer vector, got {ilist} of type {ilist.type}")
    return ilist


def _check_int_array_bounds(idx, n, axis, op):
    idx = np.asarray(idx)
    if idx.size:
        bad = idx[(idx >= n) | (idx < -n)]
        if bad.size:
            raise IndexError(f"{op}: index {int(bad.flat[0])} is out of bounds for axis {axis} with length {n}")
    return idx


class AdvancedSubtensor1(Op):
    """``x[ilist]`` for one integer vector indexing the first dimension; a copy."""

    __props__ = ()

    def make_node(self, x, ilist):
        x = as_tensor_variable(x)
        ilist = _check_int_vector(ilist, self)
        if x.type.ndim == 0:
            raise IndexError("cannot index a 0-d tensor with an integer vector")
        static = (ilist.type.shape[0], *x.type.shape[1:])
        return Apply(self, [x, ilist], [TensorType(x.type.dtype, static)()])

    def perform(self, node, inputs, output_storage):
        x, ilist = inputs
        ilist = _check_int_array_bounds(ilist, x.shape[0], 0, self)
        output_storage[0][0] = x[ilist]

    def infer_shape(self, fgraph, node, input_shapes):
        x_shape, i_shape = input_shapes
        return [(i_shape[0], *x_shape[1:])]

    def connection_pattern(self, node):
        return [[True], [False]]

    def L_op(self, inputs, outputs, output_grads):
        x, ilist = inputs
        if x.type.dtype in discrete_dtypes:
            return [zeros_like(x, dtype=config.floatX), _disconnected()]
        return [AdvancedIncSubtensor1()(zeros_like(x), output_grads[0], ilist), _disconnected()]


class AdvancedIncSubtensor1(_IncMixin, Op):
    """``x`` with rows ``ilist`` set to / incremented by ``y`` (repeats accumulate)."""

    __props__ = ("inplace", "set_instead_of_inc")

    def __init__(self, inplace=False, set_instead_of_inc=False):
        self.inplace = bool(inplace)
        self.set_instead_of_inc = bool(set_instead_of_inc)
        self.destroy_map = {0: [0]} if self.inplace else {}

    def make_node(self, x, y, ilist):
        x = as_tensor_variable(x)
        y = as_tensor_variable(y)
        ilist = _check_int_vector(ilist, self)
        _check_y_dtype(x, y, self)
        _check_y_static(y, (ilist.type.shape[0], *x.type.shape[1:]), self)
        return Apply(self, [x, y, ilist], [x.type()])

    def perform(self, node, inputs, output_storage):
        x, y, ilist = inputs
        ilist = _check_int_array_bounds(ilist, x.shape[0], 0, self)
        out = x if self.inplace else x.copy()
        _check_y_broadcast(np.asarray(y), node.inputs[1].type, (len(ilist), *x.shape[1:]), self)
        if self.set_instead_of_inc:
            out[ilist] = y
        else:
            np.add.at(out, ilist, y)
        output_storage[0][0] = out

    def inplace_on_inputs(self, allowed_inplace_inputs):
        if 0 in allowed_inplace_inputs:
            return type(self)(inplace=True, set_instead_of_inc=self.set_instead_of_inc)
        return self

    def _getter(self):
        return AdvancedSubtensor1()


def _broadcast_static(shapes):
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(ndim):
        lengths = [s[d - ndim + len(s)] for s in shapes if d - ndim + len(s) >= 0]
        known = {n for n in lengths if n is not None and n != 1}
        if len(known) > 1:
            raise IndexError(f"shape mismatch: index arrays of shapes {shapes} cannot be broadcast together")
        if known:
            out.append(known.pop())
        elif lengths and all(n == 1 for n in lengths):
            out.append(1)
        else:
            out.append(None)
    return tuple(out)


def _advanced_layout(x_type, idx_list, inputs):
    """Static output shape and where the advanced dimensions go (NumPy's rules).

    Returns ``(shape, info)`` where ``info`` lists, per entry, what the entry
    contributes; used by both ``make_node`` and ``infer_shape``.
    """
    pairs = _split_inputs(idx_list, inputs)
    adv_positions = [k for k, (e, _) in enumerate(pairs) if e in (_INT, _ARRAY, _MASK)]
    adjacent = adv_positions == list(range(adv_positions[0], adv_positions[-1] + 1))
    index_shapes = []
    basic = []  # (entry position, static length) of sliced dimensions
    axis = 0
    for k, (entry, parts) in enumerate(pairs):
        if entry == _INT:
            _check_static_int(x_type, axis, parts)
            index_shapes.append(())
            axis += 1
        elif entry == _ARRAY:
            index_shapes.append(parts.type.shape)
            axis += 1
        elif entry == _MASK:
            nd = parts.type.ndim
            for d in range(nd):
                n, m = x_type.shape[axis + d], parts.type.shape[d]
                if n is not None and m is not None and n != m:
                    raise IndexError(
                        f"boolean index did not match indexed tensor along axis {axis + d}; "
                        f"length is {n} but the mask's length is {m}"
                    )
            index_shapes.append((None,))
            axis += nd
        else:
            basic.append((k, _static_slice_length(x_type.shape[axis], parts)))
            axis += 1
    adv_shape = _broadcast_static(index_shapes)
    rest = tuple(x_type.shape[axis:])
    if adjacent:
        first = adv_positions[0]
        before = tuple(n for k, n in basic if k < first)
        after = tuple(n for k, n in basic if k > first)
        return before + adv_shape + after + rest, adjacent
    return adv_shape + tuple(n for _, n in basic) + rest, adjacent


def _advanced_index_tuple(idx_list, values, x_shape, op):
    idx = []
    axis = 0
    for entry, parts in _split_inputs(idx_list, values):
        if entry == _INT:
            idx.append(_runtime_int(parts, axis, x_shape[axis], op))
            axis += 1
        elif entry == _ARRAY:
            idx.append(_check_int_array_bounds(parts, x_shape[axis], axis, op))
            axis += 1
        elif entry == _MASK:
            mask = np.asarray(parts)
            want = tuple(x_shape[axis: axis + mask.ndim])
            if mask.shape != want:
                raise IndexError(
                    f"{op}: boolean index of shape {mask.shape} does not match the indexed "
                    f"dimensions {want} (axes {axis}..{axis + mask.ndim - 1})"
                )
            # A mask is the same as the integer arrays of its nonzero positions.
            idx.extend(np.nonzero(mask))
            axis += mask.ndim
        else:
            idx.append(_runtime_slice(parts))
            axis += 1
    return tuple(idx)


def _advanced_inputs(idx_list, index_inputs):
    out = []
    for entry, parts in _split_inputs(idx_list, index_inputs):
        if entry == _INT:
            out.append(_int_scalar(parts, "An integer index"))
        elif entry in (_ARRAY, _MASK):
            v = as_tensor_variable(parts)
            kind = "bool" if entry == _MASK else "integer"
            if (entry == _MASK) != (v.type.dtype == "bool") or (
                entry == _ARRAY and v.type.dtype not in integer_dtypes
            ):
                raise TypeError(f"Expected a {kind} array index, got {v} of type {v.type}")
            out.append(v)
        else:
            out.extend(_int_scalar(p, "A slice bound") for p in parts if p is not None)
    return out


def _index_ndim_consumed(idx_list, index_inputs):
    return sum(_consumed(e, p if e == _MASK else None) for e, p in _split_inputs(idx_list, index_inputs))


class AdvancedSubtensor(Op):
    """General NumPy advanced indexing with integer arrays, masks, ints and slices; a copy."""

    __props__ = ("idx_list",)

    def __init__(self, idx_list):
        self.idx_list = tuple(idx_list)

    def __str__(self):
        return f"AdvancedSubtensor{{{', '.join(_entry_str(e) for e in self.idx_list)}}}"

    def make_node(self, x, *index_inputs):
        x = as_tensor_variable(x)
        index_inputs = _advanced_inputs(self.idx_list, index_inputs)
        if _index_ndim_consumed(self.idx_list, index_inputs) > x.type.ndim:
            raise IndexError(f"too many indices for {x}: it has {x.type.ndim} dimensions")
        static, _ = _advanced_layout(x.type, self.idx_list, index_inputs)
        return Apply(self, [x, *index_inputs], [TensorType(x.type.dtype, static)()])

    def perform(self, node, inputs, output_storage):
        x, *values = inputs
        idx = _advanced_index_tuple(self.idx_list, values, x.shape, self)
        try:
            output_storage[0][0] = np.asarray(x[idx])
        except IndexError as e:
            raise IndexError(f"{self}: {e} (input shape {x.shape})") from None

    def infer_shape(self, fgraph, node, input_shapes):
        from lucent.tensor import math as lm

        x_shape = input_shapes[0]
        pairs = _split_inputs(self.idx_list, list(zip(node.inputs[1:], input_shapes[1:])))
        adv_positions = [k for k, (e, _) in enumerate(pairs) if e in (_INT, _ARRAY, _MASK)]
        adjacent = adv_positions == list(range(adv_positions[0], adv_positions[-1] + 1))
        shapes, basic = [], []
        axis = 0
        for k, (entry, parts) in enumerate(pairs):
            if entry == _INT:
                shapes.append([])
                axis += 1
            elif entry == _ARRAY:
                var, shp = parts
                shapes.append(list(zip(var.type.shape, shp)))
                axis += 1
            elif entry == _MASK:
                var, _ = parts
                count = lm.cast(lm.sum(lm.cast(var, "int64")), "int64")
                shapes.append([(None, count)])
                axis += var.type.ndim
            else:
                bounds = tuple(None if p is None else p[0] for p in parts)
                static = _static_slice_length(node.inputs[0].type.shape[axis], bounds)
                basic.append((k, _slice_length_var(x_shape[axis], bounds, static)))
                axis += 1
        ndim = max((len(s) for s in shapes), default=0)
        adv = []
        for d in range(ndim):
            cands = [s[d - ndim + len(s)] for s in shapes if d - ndim + len(s) >= 0]
            fixed = [n for n, _ in cands if n is not None and n != 1]
            if fixed:
                adv.append(constant(fixed[0], dtype="int64"))
            elif all(n == 1 for n, _ in cands):
                adv.append(constant(1, dtype="int64"))
            else:
                length = cands[0][1]
                for _, other in cands[1:]:
                    length = lm.maximum(length, other)
                adv.append(length)
        rest = list(x_shape[axis:])
        if adjacent:
            first = adv_positions[0]
            out = [n for k, n in basic if k < first] + adv + [n for k, n in basic if k > first]
        else:
            out = adv + [n for _, n in basic]
        return [tuple(out + rest)]

    def connection_pattern(self, node):
        return [[True]] + [[False]] * (len(node.inputs) - 1)

    def L_op(self, inputs, outputs, output_grads):
        x, *rest = inputs
        if x.type.dtype in discrete_dtypes:
            gx = zeros_like(x, dtype=config.floatX)
        else:
            gx = AdvancedIncSubtensor(self.idx_list)(zeros_like(x), output_grads[0], *rest)
        return [gx] + [_disconnected() for _ in rest]


class AdvancedIncSubtensor(_IncMixin, Op):
    """``x`` with ``x[idx]`` set to / incremented by ``y`` for advanced indices.

    Increments at repeated positions accumulate (``np.add.at``) unless
    ``ignore_duplicates``, where the last write wins as in ``x[idx] += y``.
    """

    __props__ = ("idx_list", "inplace", "set_instead_of_inc", "ignore_duplicates")

    def __init__(self, idx_list, inplace=False, set_instead_of_inc=False, ignore_duplicates=False):
        self.idx_list = tuple(idx_list)
        self.inplace = bool(inplace)
        self.set_instead_of_inc = bool(set_instead_of_inc)
        self.ignore_duplicates = bool(ignore_duplicates)
        self.destroy_map = {0: [0]} if self.inplace else {}

    def make_node(self, x, y, *index_inputs):
        x = as_tensor_variable(x)
        y = as_tensor_variable(y)
        index_inputs = _advanced_inputs(self.idx_list, index_inputs)
        if _index_ndim_consumed(self.idx_list, index_inputs) > x.type.ndim:
            raise IndexError(f"too many indices for {x}: it has {x.type.ndim} dimensions")
        _check_y_dtype(x, y, self)
        region, _ = _advanced_layout(x.type, self.idx_list, index_inputs)
        _check_y_static(y, region, self)
        return Apply(self, [x, y, *index_inputs], [x.type()])

    def perform(self, node, inputs, output_storage):
        x, y, *values = inputs
        idx = _advanced_index_tuple(self.idx_list, values, x.shape, self)
        out = x if self.inplace else x.copy()
        try:
            region_shape = np.empty(x.shape, dtype=np.bool_)[idx].shape
        except IndexError as e:
            raise IndexError(f"{self}: {e} (input shape {x.shape})") from None
        _check_y_broadcast(np.asarray(y), node.inputs[1].type, region_shape, self)
        if self.set_instead_of_inc:
            out[idx] = y
        elif self.ignore_duplicates:
            out[idx] += y
        else:
            np.add.at(out, idx, y)
        output_storage[0][0] = out

    def inplace_on_inputs(self, allowed_inplace_inputs):
        if 0 in allowed_inplace_inputs:
            return type(self)(self.idx_list, True, self.set_instead_of_inc, self.ignore_duplicates)
        return self

    def _getter(self):
        return AdvancedSubtensor(self.idx_list)


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
        return "int", constant(int(entry), dtype="int64")
    if isinstance(entry, (list, tuple, np.ndarray)) and not any(isinstance(v, Variable) for v in np.ravel(np.asarray(entry, dtype=object))):
        arr = np.asarray(entry)
        if arr.size == 0 and arr.dtype.kind == "f":
            arr = arr.astype("int64")
        if arr.dtype.kind == "b":
            return "mask", constant(arr)
        if arr.dtype.kind not in "iu":
            raise IndexError(f"Only integers, slices, None, ..., and integer or boolean arrays are valid indices, got {entry!r}")
        if arr.ndim == 0:
            return "int", constant(int(arr), dtype="int64")
        return "array", constant(arr.astype("int64"))
    v = as_tensor_variable(entry)
    if v.type.dtype == "bool":
        if v.type.ndim == 0:
            raise TypeError("Indexing with a 0-d boolean tensor is not supported")
        return "mask", v
    if v.type.dtype not in integer_dtypes:
        raise IndexError(f"Indices must be integers or booleans, got {v} of dtype {v.type.dtype}")
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
            f"too many indices for tensor: {x} has {x.type.ndim} dimensions but {consumed} were indexed"
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

    if any(k in ("array", "mask") for k, _ in expanded):
        arrays = [(n, k, p) for n, (k, p) in enumerate(expanded) if k != "slice" or p != _FULL]
        if (
            len(arrays) == 1
            and arrays[0][0] == 0
            and arrays[0][1] == "array"
            and arrays[0][2].type.ndim == 1
        ):
            return AdvancedSubtensor1()(x, arrays[0][2])
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
        new = AdvancedIncSubtensor1(inplace, set_instead_of_inc)
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


def advanced_subtensor1(x, ilist):
    return AdvancedSubtensor1()(x, ilist)


def advanced_inc_subtensor1(x, y, ilist):
    return AdvancedIncSubtensor1()(x, y, ilist)


def advanced_set_subtensor1(x, y, ilist):
    return AdvancedIncSubtensor1(set_instead_of_inc=True)(x, y, ilist)


def take(a, indices, axis=None):
    """``numpy.take``: ``a.flatten()[indices]`` or ``a[..., indices, ...]`` along ``axis``."""
    from lucent.tensor.basic import flatten

    a = as_tensor_variable(a)
    if axis is None:
        return getitem(flatten(a), indices)
    axis = int(axis) % max(a.type.ndim, 1)
    return getitem(a, (slice(None),) * axis + (indices,))


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
    "getitem",
    "inc_subtensor",
    "set_subtensor",
    "take",
]
