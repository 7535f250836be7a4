"""Picking entries: where the non-zeros are, choosing among arrays, permuting rows,
and the index builders (``take_along_axis``, ``ix_``).

``Nonzero``, ``Choose`` and ``PermuteRowElements`` are ops (their output
sizes or orders depend on values); the rest are compositions of them with
indexing. Every public name is re-exported by :mod:`lucent.tensor.basic`,
PyTensor's path for them.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.scalar.dtypes import discrete_dtypes, integer_dtypes
from lucent.tensor.basic import (
    _disconnected,
    _float_zeros_like,
    as_tensor_variable,
    flatten,
)
from lucent.tensor.type import TensorType


# --------------------------------------------------------------------------- #
# Non-zero entries
# --------------------------------------------------------------------------- #
class Nonzero(Op):
    """The indices of the non-zero entries of ``a``: one int64 vector per dimension."""

    __props__ = ()

    def make_node(self, a):
        a = as_tensor_variable(a)
        if a.type.ndim == 0:
            raise ValueError("Nonzero only supports non-scalar arrays.")
        return Apply(self, [a], [TensorType("int64", (None,))() for _ in range(a.type.ndim)])

    def perform(self, node, inputs, output_storage):
        for cell, idx in zip(output_storage, np.nonzero(inputs[0])):
            cell[0] = idx.astype("int64")

    def infer_shape(self, fgraph, node, input_shapes):
        from lucent.tensor import math as lm

        count = lm.sum(lm.neq(node.inputs[0], 0), dtype="int64")
        return [(count,)] * len(node.outputs)

    def connection_pattern(self, node):
        return [[False] * len(node.outputs)]

    def L_op(self, inputs, outputs, output_grads):
        return [_disconnected()]


_nonzero = Nonzero()


def nonzero(a, return_matrix=False):
    """The indices of the non-zero entries of ``a``.

    A tuple of vectors (one per dimension, as ``numpy.nonzero``), or with
    ``return_matrix`` an ``(ndim, count)`` matrix.
    """
    from lucent.tensor.basic import stack
    from lucent.tensor.shape import shape_padleft

    res = _nonzero(a)
    res = tuple(res) if isinstance(res, (list, tuple)) else (res,)
    if return_matrix:
        return stack(list(res), 0) if len(res) > 1 else shape_padleft(res[0])
    return res


def flatnonzero(a):
    """The indices of the non-zero entries of the flattened ``a``."""
    a = as_tensor_variable(a)
    if a.type.ndim == 0:
        raise ValueError("Nonzero only supports non-scalar arrays.")
    return nonzero(flatten(a) if a.type.ndim != 1 else a)[0]


def nonzero_values(a):
    """The non-zero entries of ``a``, flattened, in order."""
    a = as_tensor_variable(a)
    flat = flatten(a) if a.type.ndim != 1 else a
    return flat[flatnonzero(a)]


def where(cond, ift=None, iff=None, **kwargs):
    """``switch(cond, ift, iff)``; with only ``cond``, its non-zero indices (``nonzero``)."""
    from lucent.tensor import math as lm

    if ift is not None and iff is not None:
        return lm.switch(cond, ift, iff)
    if ift is None and iff is None:
        return nonzero(as_tensor_variable(cond), **kwargs)
    raise ValueError("where: give either both `ift` and `iff`, or neither (then it returns nonzero(cond))")


# --------------------------------------------------------------------------- #
# Choosing among arrays
# --------------------------------------------------------------------------- #
class Choose(Op):
    """``numpy.choose(a, choices, mode)``: entry-wise selection of ``choices[a]``."""

    __props__ = ("mode",)

    def __init__(self, mode="raise"):
        if mode not in ("raise", "wrap", "clip"):
            raise ValueError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
        self.mode = mode

    def make_node(self, a, choices):
        a = as_tensor_variable(a)
        if a.type.dtype not in discrete_dtypes:
            raise TypeError(f"choose first argument must have an [u]int* dtype. Got {a.type.dtype}.")
        choices = as_tensor_variable(choices)
        if choices.type.ndim == 0:
            raise TypeError("choose: choices must be a sequence of arrays (at least 1-d)")
        core = choices.type.shape[1:]
        ndim = max(a.type.ndim, len(core))
        pa = (1,) * (ndim - a.type.ndim) + a.type.shape
        pc = (1,) * (ndim - len(core)) + core
        shape = []
        for s1, s2 in zip(pa, pc):
            shape.append(1 if s1 == 1 and s2 == 1 else (s1 if s2 == 1 else (s2 if s1 == 1 else (s1 or s2))))
        return Apply(self, [a, choices], [TensorType(choices.type.dtype, tuple(shape))()])

    def perform(self, node, inputs, output_storage):
        a, choices = inputs
        try:
            out = np.choose(a, choices, mode=self.mode)
        except ValueError as e:
            raise ValueError(f"Choose: {e}") from None
        output_storage[0][0] = np.asarray(out, dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        from lucent.tensor.spacing import broadcast_shape

        a_shape, c_shape = input_shapes
        return [broadcast_shape(tuple(a_shape), tuple(c_shape[1:]), arrays_are_shapes=True)]

    def connection_pattern(self, node):
        return [[False], [True]]

    def L_op(self, inputs, outputs, output_grads):
        raise NotImplementedError("Choose: the gradient with respect to the choices is not implemented")


def choose(a, choices, mode="raise"):
    """Build an array from ``choices`` using the int array ``a`` as index (``numpy.choose``)."""
    return Choose(mode)(a, choices)


# --------------------------------------------------------------------------- #
# Permutations
# --------------------------------------------------------------------------- #
class PermuteRowElements(Op):
    """Reorder the entries of each row (last axis) of ``x`` by the permutation(s) ``y``.

    ``out[..., i] = x[..., y[..., i]]``; with ``inverse``,
    ``out[..., y[..., i]] = x[..., i]``. Leading dimensions broadcast, so
    one permutation can apply to every row, or every permutation to one row.
    """

    __props__ = ("inverse",)

    def __init__(self, inverse=False):
        self.inverse = bool(inverse)

    def make_node(self, x, y):
        from lucent.tensor.shape import shape_padleft

        x = as_tensor_variable(x)
        y = as_tensor_variable(y)
        if y.type.dtype not in integer_dtypes:
            raise TypeError(f"PermuteRowElements: the permutation must be integers, got {y.type.dtype}")
        if y.type.ndim == 0 or x.type.ndim == 0:
            raise TypeError("PermuteRowElements: x and the permutation must be at least 1-d")
        if x.type.ndim > y.type.ndim:
            y = shape_padleft(y, x.type.ndim - y.type.ndim)
        elif x.type.ndim < y.type.ndim:
            x = shape_padleft(x, y.type.ndim - x.type.ndim)
        shape = []
        for sx, sy in zip(x.type.shape[:-1], y.type.shape[:-1]):
            shape.append(1 if sx == 1 and sy == 1 else (sy if sx == 1 else (sx if sy == 1 else (sx or sy))))
        shape.append(x.type.shape[-1] if x.type.shape[-1] is not None else y.type.shape[-1])
        return Apply(self, [x, y], [TensorType(x.type.dtype, tuple(shape))()])

    def perform(self, node, inputs, output_storage):
        x, y = inputs
        if x.shape[-1] != y.shape[-1]:
            raise ValueError(
                f"PermuteRowElements: rows of length {x.shape[-1]} and permutations of length {y.shape[-1]} differ"
            )
        lead = np.broadcast_shapes(x.shape[:-1], y.shape[:-1])
        xb = np.broadcast_to(x, lead + x.shape[-1:])
        yb = np.broadcast_to(y, lead + y.shape[-1:])
        n = x.shape[-1]
        if np.any((yb < -n) | (yb >= n)):
            raise IndexError(f"PermuteRowElements: permutation entries must be in [0, {n}), got {y}")
        if self.inverse:
            out = np.empty_like(xb)
            np.put_along_axis(out, yb % n if n else yb, xb, axis=-1)
        else:
            out = np.take_along_axis(xb, yb, axis=-1)
        output_storage[0][0] = np.ascontiguousarray(out)

    def infer_shape(self, fgraph, node, input_shapes):
        from lucent.tensor import math as lm

        sx, sy = input_shapes
        return [tuple(lm.maximum(a, b) for a, b in zip(sx, sy))]

    def connection_pattern(self, node):
        return [[True], [False]]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor import math as lm

        x, y = inputs
        (gz,) = output_grads
        if x.type.dtype in discrete_dtypes:
            return [_float_zeros_like(x), _disconnected()]
        gx = PermuteRowElements(not self.inverse)(gz, y)
        axes = [d for d in range(gz.type.ndim) if x.type.shape[d] == 1 and gz.type.shape[d] != 1]
        if axes:
            gx = lm.sum(gx, axis=tuple(axes), keepdims=True)
        return [gx, _disconnected()]


def permute_row_elements(x, y, inverse=False):
    """``x`` with the entries of each row reordered by ``y`` (see ``PermuteRowElements``)."""
    return PermuteRowElements(inverse=inverse)(x, y)


def inverse_permutation(perm):
    """The inverse of each permutation (row) of the int tensor ``perm``."""
    from lucent.tensor.basic import arange

    perm = as_tensor_variable(perm)
    return permute_row_elements(arange(perm.shape[-1], dtype=perm.type.dtype), perm, inverse=True)


# --------------------------------------------------------------------------- #
# Index builders
# --------------------------------------------------------------------------- #
def take_along_axis(arr, indices, axis=0):
    """Entries of ``arr`` at ``indices`` along ``axis`` (``numpy.take_along_axis``)."""
    from lucent.tensor.basic import arange
    from lucent.tensor.extra_ops import normalize_axis_index
    from lucent.tensor.shape import shape_padright

    arr = as_tensor_variable(arr)
    indices = as_tensor_variable(indices)
    if indices.type.dtype not in integer_dtypes:
        raise IndexError(f"take_along_axis: `indices` must be an integer array, got {indices.type.dtype}")
    if axis is None:
        return take_along_axis(flatten(arr) if arr.type.ndim != 1 else arr, indices, 0)
    if arr.type.ndim != indices.type.ndim:
        raise ValueError(
            f"take_along_axis: `indices` and `arr` must have the same number of dimensions, got "
            f"{indices.type.ndim} and {arr.type.ndim}"
        )
    axis = normalize_axis_index(axis, arr.type.ndim, "take_along_axis")
    index = []
    ndim = arr.type.ndim
    for d in range(ndim):
        if d == axis:
            index.append(indices)
        else:
            r = arange(arr.shape[d])
            r = shape_padright(r, ndim - d - 1)
            from lucent.tensor.shape import shape_padleft

            index.append(shape_padleft(r, d))
    return arr[tuple(index)]


def ix_(*args):
    """Open-mesh index vectors: ``x[ix_(rows, cols)]`` picks the cross product (``numpy.ix_``)."""
    from lucent.tensor.basic import arange

    out = []
    nd = len(args)
    for k, new in enumerate(args):
        new = as_tensor_variable(new)
        if new.type.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if new.type.dtype == "bool":
            (new,) = nonzero(new)
        pattern = ["x"] * nd
        pattern[k] = 0
        out.append(new.dimshuffle(pattern))
    return tuple(out)


__all__ = [
    "Choose",
    "Nonzero",
    "PermuteRowElements",
    "choose",
    "flatnonzero",
    "inverse_permutation",
    "ix_",
    "nonzero",
    "nonzero_values",
    "permute_row_elements",
    "take_along_axis",
    "where",
]
