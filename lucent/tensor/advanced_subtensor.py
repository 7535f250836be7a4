"""Advanced (NumPy "fancy") indexing: integer arrays and boolean masks.

``x[int_vector]`` (``AdvancedSubtensor1``), any other mix of integer arrays,
masks, ints and slices (``AdvancedSubtensor``) and their set/increment
counterparts (``AdvancedIncSubtensor1``, ``AdvancedIncSubtensor``). Unlike
basic indexing the result is a copy, indexed dimensions move where NumPy's
rules put them, and increments at repeated positions accumulate like
``np.add.at`` -- which is what makes them the gradients of each other.

This is kept apart from ``lucent.tensor.subtensor`` (basic int/slice
indexing and the ``x[...]`` dispatcher ``getitem``) because the layout and
broadcasting rules of array indices are a concept of their own. It shares
the ``idx_list`` encoding and the increment helpers of ``subtensor``, which
re-exports every public name defined here.
"""

from __future__ import annotations

import numpy as np

from lucent.configdefaults import config
from lucent.graph.basic import Apply, Constant
from lucent.graph.op import Op
from lucent.scalar.dtypes import discrete_dtypes, integer_dtypes
from lucent.tensor.basic import as_tensor_variable, constant, zeros_like
from lucent.tensor.subtensor import (
    _ARRAY,
    _INT,
    _MASK,
    _check_static_int,
    _check_y_broadcast,
    _check_y_dtype,
    _check_y_static,
    _consumed,
    _disconnected,
    _entry_str,
    _IncMixin,
    _int_scalar,
    _runtime_int,
    _runtime_slice,
    _slice_length_var,
    _split_inputs,
    _static_slice_length,
)
from lucent.tensor.type import TensorType


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
            shown = [tuple(s) for s in shapes if len(s)]
            raise IndexError(
                f"shape mismatch: indexing tensors could not be broadcast together with shapes {shown}"
            )
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
            # A constant mask selects a known number of entries.
            index_shapes.append((int(np.count_nonzero(parts.data)),) if isinstance(parts, Constant) else (None,))
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


def _advanced_idx_list(what, indices):
    """The ``idx_list`` and index inputs of ``x[indices]`` for the advanced ops (ints, slices, arrays)."""
    from lucent.tensor.subtensor import _convert_entry, _to_idx_list

    entries = [_convert_entry(e) for e in indices]
    for kind, _ in entries:
        if kind in ("newaxis", "ellipsis"):
            raise IndexError(
                f"{what} takes ints, slices and integer or boolean index arrays; index with x[...] "
                "for None or Ellipsis"
            )
    return _to_idx_list(entries)


def advanced_subtensor(x, *index_variables):
    """``x[index_variables]`` as one ``AdvancedSubtensor`` node (whatever the index mix).

    Like PyTensor, the package does not re-export it (``lucent.tensor.advanced_subtensor``
    is this module).
    """
    idx_list, inputs = _advanced_idx_list("advanced_subtensor", index_variables)
    return AdvancedSubtensor(idx_list)(x, *inputs)


def advanced_inc_subtensor(x, y, *args, **kwargs):
    """``x`` with ``y`` added at ``x[args]`` as one ``AdvancedIncSubtensor`` node.

    ``kwargs`` are the op's options: ``inplace``, ``set_instead_of_inc``,
    ``ignore_duplicates``.
    """
    idx_list, inputs = _advanced_idx_list("advanced_inc_subtensor", args)
    return AdvancedIncSubtensor(idx_list, **kwargs)(x, y, *inputs)


def advanced_set_subtensor(x, y, *args, **kwargs):
    """``x`` with ``x[args]`` set to ``y`` as one ``AdvancedIncSubtensor`` node."""
    return advanced_inc_subtensor(x, y, *args, set_instead_of_inc=True, **kwargs)


def advanced_subtensor1(x, ilist):
    return AdvancedSubtensor1()(x, ilist)


def advanced_inc_subtensor1(x, y, ilist):
    return AdvancedIncSubtensor1()(x, y, ilist)


def advanced_set_subtensor1(x, y, ilist):
    return AdvancedIncSubtensor1(set_instead_of_inc=True)(x, y, ilist)


__all__ = [
    "AdvancedIncSubtensor",
    "AdvancedIncSubtensor1",
    "AdvancedSubtensor",
    "AdvancedSubtensor1",
    "advanced_inc_subtensor1",
    "advanced_set_subtensor1",
    "advanced_subtensor1",
]
