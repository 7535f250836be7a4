"""Sorting: ``SortOp`` / ``sort`` and ``ArgSortOp`` / ``argsort`` (NumPy's kinds).

The axis is an input of the node (an int scalar, usually a constant), as in
PyTensor. ``kind`` is one of NumPy's sorting algorithms; ``"stable"`` (or
``stable=True``) keeps equal entries in their original order, which
``"quicksort"`` does not promise.
"""

from __future__ import annotations

import typing

import numpy as np

from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.scalar.dtypes import discrete_dtypes, integer_dtypes
from lucent.tensor.basic import (
    NotScalarConstantError,
    _disconnected,
    _float_zeros_like,
    as_tensor_variable,
    flatten,
    get_scalar_constant_value,
)
from lucent.tensor.type import TensorType

KIND = typing.Literal["quicksort", "mergesort", "heapsort", "stable"]
KIND_VALUES = typing.get_args(KIND)


def _parse_sort_args(kind, order, stable):
    if order is not None:
        raise ValueError("The order argument is not applicable to lucent graphs (there are no structured dtypes)")
    if stable is not None and kind is not None:
        raise ValueError("kind and stable cannot be set at the same time")
    if stable:
        kind = "stable"
    elif kind is None:
        kind = "quicksort"
    if kind not in KIND_VALUES:
        raise ValueError(f"kind must be one of {KIND_VALUES}, got {kind}")
    return kind


def _axis_input(axis, x, who):
    axis = as_tensor_variable(axis, ndim=0)
    if axis.type.dtype not in integer_dtypes:
        raise ValueError(f"{who} axis must have an integer dtype, got {axis.type.dtype}")
    try:
        value = int(get_scalar_constant_value(axis))
    except NotScalarConstantError:
        return axis
    if not -x.type.ndim <= value < x.type.ndim:
        raise np.exceptions.AxisError(f"{who}: axis {value} is out of bounds for a tensor of dimension {x.type.ndim}")
    return axis


def constant_axis(node):
    """The node's axis as a non-negative int if it is a constant, else None."""
    try:
        value = int(get_scalar_constant_value(node.inputs[1]))
    except NotScalarConstantError:
        return None
    return value % node.inputs[0].type.ndim


class SortOp(Op):
    """A sorted copy of ``input`` along ``axis`` (``numpy.sort``)."""

    __props__ = ("kind",)

    def __init__(self, kind="quicksort"):
        if kind not in KIND_VALUES:
            raise ValueError(f"kind must be one of {KIND_VALUES}, got {kind}")
        self.kind = kind

    def make_node(self, input, axis=-1):
        input = as_tensor_variable(input)
        if input.type.ndim == 0:
            raise np.exceptions.AxisError("Sort: cannot sort a 0-d tensor along an axis")
        axis = _axis_input(axis, input, "Sort")
        return Apply(self, [input, axis], [input.type()])

    def perform(self, node, inputs, output_storage):
        a, axis = inputs
        output_storage[0][0] = np.sort(a, int(axis), self.kind)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def connection_pattern(self, node):
        return [[True], [False]]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor.selection import take_along_axis

        a, axis = inputs
        if a.type.dtype in discrete_dtypes:
            return [_float_zeros_like(a), _disconnected()]
        try:
            ax = int(get_scalar_constant_value(axis)) % a.type.ndim
        except NotScalarConstantError:
            raise NotImplementedError("The gradient of sort needs a constant axis") from None
        idx = ArgSortOp(self.kind)(a, ax)
        back = ArgSortOp("stable")(idx, ax)
        return [take_along_axis(output_grads[0], back, ax), _disconnected()]


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """``a`` sorted along ``axis`` (the flattened ``a`` when None), as ``numpy.sort``."""
    kind = _parse_sort_args(kind, order, stable)
    a = as_tensor_variable(a)
    if axis is None:
        a = flatten(a) if a.type.ndim != 1 else a
        axis = 0
    return SortOp(kind)(a, axis)


class ArgSortOp(Op):
    """The indices sorting ``input`` along ``axis`` (``numpy.argsort``), as int64."""

    __props__ = ("kind",)

    def __init__(self, kind="quicksort"):
        if kind not in KIND_VALUES:
            raise ValueError(f"kind must be one of {KIND_VALUES}, got {kind}")
        self.kind = kind

    def make_node(self, input, axis=-1):
        input = as_tensor_variable(input)
        if input.type.ndim == 0:
            raise np.exceptions.AxisError("ArgSort: cannot sort a 0-d tensor along an axis")
        axis = _axis_input(axis, input, "ArgSort")
        return Apply(self, [input, axis], [TensorType("int64", input.type.shape)()])

    def perform(self, node, inputs, output_storage):
        # Equal entries keep their order whatever the kind: any order is a valid
        # answer for the unstable kinds, and this one does not depend on the
        # machine (NumPy's quicksort orders ties differently with AVX-512) and
        # is the order the Numba kernel gives, so both paths agree.
        a, axis = inputs
        output_storage[0][0] = np.asarray(np.argsort(a, int(axis), kind="stable"), dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def connection_pattern(self, node):
        return [[True], [False]]

    def L_op(self, inputs, outputs, output_grads):
        return [_float_zeros_like(inputs[0]), _disconnected()]


def argsort(a, axis=-1, kind=None, order=None, stable=None):
    """The indices that sort ``a`` along ``axis`` (the flattened ``a`` when None)."""
    kind = _parse_sort_args(kind, order, stable)
    a = as_tensor_variable(a)
    if axis is None:
        a = flatten(a) if a.type.ndim != 1 else a
        axis = 0
    return ArgSortOp(kind)(a, axis)


__all__ = ["ArgSortOp", "SortOp", "argsort", "sort"]
