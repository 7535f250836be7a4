"""Diagonals and triangles: ``ExtractDiag`` and the helpers built around it.

``diagonal`` / ``trace`` read a diagonal (``ExtractDiag`` is a view, as
NumPy's); ``alloc_diag`` / ``diag`` write one into zeros; ``tri``,
``tril``, ``triu`` and the ``*_indices`` helpers are comparisons of
``arange``s. Public at PyTensor's path through :mod:`lucent.tensor.basic`.
"""

from __future__ import annotations

import numpy as np

from lucent.configdefaults import config
from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.scalar.dtypes import discrete_dtypes
from lucent.tensor.basic import _float_zeros_like, as_tensor_variable, constant
from lucent.tensor.type import TensorType


def _diag_length(n1, n2, offset):
    if offset > 0:
        return int(np.clip(n2 - offset, 0, n1))
    if offset < 0:
        return int(np.clip(n1 + offset, 0, n2))
    return min(n1, n2)


class ExtractDiag(Op):
    """The ``offset``-th diagonal of the planes spanned by ``axis1`` and ``axis2``.

    As ``numpy.diagonal``: those two axes are removed and the diagonal
    becomes the last axis. With ``view`` (the default) the output is a view
    of the input.
    """

    __props__ = ("offset", "axis1", "axis2", "view")

    def __init__(self, offset=0, axis1=0, axis2=1, view=True):
        if axis1 < 0 or axis2 < 0:
            raise NotImplementedError("ExtractDiag does not support negative axes; use lucent.tensor.diagonal")
        if axis1 == axis2:
            raise ValueError("axis1 and axis2 cannot be the same")
        if axis1 > axis2:
            axis1, axis2, offset = axis2, axis1, -offset
        self.offset = int(offset)
        self.axis1 = int(axis1)
        self.axis2 = int(axis2)
        self.view = bool(view)
        if self.view:
            self.view_map = {0: [0]}

    def make_node(self, x):
        x = as_tensor_variable(x)
        if x.type.ndim < 2:
            raise ValueError(f"ExtractDiag needs an input with 2 or more dimensions, got {x} ({x.type})")
        if self.axis2 >= x.type.ndim:
            raise ValueError(f"ExtractDiag: axis {self.axis2} is out of range for {x} with {x.type.ndim} dimensions")
        d1, d2 = x.type.shape[self.axis1], x.type.shape[self.axis2]
        size = _diag_length(d1, d2, self.offset) if d1 is not None and d2 is not None else None
        shape = tuple(s for i, s in enumerate(x.type.shape) if i not in (self.axis1, self.axis2)) + (size,)
        return Apply(self, [x], [TensorType(x.type.dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        out = inputs[0].diagonal(self.offset, self.axis1, self.axis2)
        output_storage[0][0] = out if self.view else out.copy()

    def infer_shape(self, fgraph, node, input_shapes):
        from lucent.tensor import math as lm

        (shape,) = input_shapes
        d1, d2 = shape[self.axis1], shape[self.axis2]
        zero = constant(0, dtype="int64")
        if self.offset > 0:
            size = lm.minimum(lm.maximum(d2 - self.offset, zero), d1)
        elif self.offset < 0:
            size = lm.minimum(lm.maximum(d1 + self.offset, zero), d2)
        else:
            size = lm.minimum(d1, d2)
        return [tuple(s for i, s in enumerate(shape) if i not in (self.axis1, self.axis2)) + (size,)]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor.basic import zeros_like
        from lucent.tensor.rearrange import moveaxis
        from lucent.tensor.subtensor import set_subtensor

        (x,) = inputs
        (gz,) = output_grads
        if x.type.dtype in discrete_dtypes:
            return [_float_zeros_like(x)]
        planes = zeros_like(moveaxis(x, (self.axis1, self.axis2), (-2, -1)))
        length = gz.shape[-1]
        from lucent.tensor.basic import arange

        idx = arange(length)
        rows = idx + max(0, -self.offset)
        cols = idx + max(0, self.offset)
        g = set_subtensor(planes[..., rows, cols], gz)
        return [moveaxis(g, (-2, -1), (self.axis1, self.axis2))]


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The ``offset``-th diagonal of ``a`` over ``axis1`` / ``axis2`` (``numpy.diagonal``)."""
    from lucent.tensor.rearrange import _normalize_axes

    a = as_tensor_variable(a)
    if a.type.ndim < 2:
        raise ValueError(f"diagonal: the input must have at least 2 dimensions, got {a.type.ndim}")
    (axis1,) = _normalize_axes(axis1, a.type.ndim, "axis1")
    (axis2,) = _normalize_axes(axis2, a.type.ndim, "axis2")
    return ExtractDiag(offset, axis1, axis2)(a)


def extract_diag(x):
    """The main diagonal of ``x`` (deprecated: use ``diagonal``)."""
    import warnings

    warnings.warn("lucent.tensor.extract_diag is deprecated. Use lucent.tensor.diagonal instead.",
                  FutureWarning, stacklevel=2)
    return diagonal(x)


def trace(a, offset=0, axis1=0, axis2=1):
    """Sum of the ``offset``-th diagonal (``numpy.trace``)."""
    return diagonal(a, offset=offset, axis1=axis1, axis2=axis2).sum(-1)


def alloc_diag(diag, offset=0, axis1=0, axis2=1):
    """Zeros with ``diag`` (its last axis) on the ``offset``-th diagonal of ``axis1`` / ``axis2``."""
    from lucent.tensor.basic import arange, zeros
    from lucent.tensor.rearrange import moveaxis
    from lucent.tensor.subtensor import set_subtensor

    diag = as_tensor_variable(diag)
    if diag.type.ndim < 1:
        raise ValueError("alloc_diag: the diagonal must be at least a vector")
    n = diag.shape[-1] + abs(int(offset))
    lead = [diag.shape[d] for d in range(diag.type.ndim - 1)]
    out = zeros([*lead, n, n], dtype=diag.type.dtype)
    idx = arange(diag.shape[-1])
    out = set_subtensor(out[..., idx + max(0, -offset), idx + max(0, offset)], diag)
    ndim = diag.type.ndim + 1
    a1, a2 = sorted(((axis1 % ndim), (axis2 % ndim)))
    if (a1, a2) != (ndim - 2, ndim - 1):
        out = moveaxis(out, (-2, -1), (a1, a2))
    return out


def diag(v, k=0):
    """A vector's diagonal matrix, or a matrix's ``k``-th diagonal (``numpy.diag``)."""
    v = as_tensor_variable(v)
    if v.type.ndim == 1:
        return alloc_diag(v, offset=k)
    if v.type.ndim == 2:
        return diagonal(v, offset=k)
    raise ValueError(f"diag: Input must be 1- or 2-d. Got {v.type.ndim} dimensions")


# --------------------------------------------------------------------------- #
# Triangles
# --------------------------------------------------------------------------- #
def tri(N, M=None, k=0, dtype=None):
    """An ``N`` by ``M`` array with ones at and below the ``k``-th diagonal (``numpy.tri``)."""
    from lucent.tensor import math as lm
    from lucent.tensor.basic import arange, cast

    dtype = config.floatX if dtype is None else dtype
    M = N if M is None else M
    mask = lm.ge(arange(N)[:, None], arange(-k, M - k)[None, :])
    return cast(mask, dtype)


def tril(m, k=0):
    """``m`` with the entries above the ``k``-th diagonal zeroed (on the last two axes)."""
    m = as_tensor_variable(m)
    if m.type.ndim < 2:
        raise ValueError(f"tril: input must be at least 2-d, got {m.type.ndim} dimensions")
    return m * tri(m.shape[-2], m.shape[-1], k=k, dtype=m.type.dtype)


def triu(m, k=0):
    """``m`` with the entries below the ``k``-th diagonal zeroed (on the last two axes)."""
    m = as_tensor_variable(m)
    if m.type.ndim < 2:
        raise ValueError(f"triu: input must be at least 2-d, got {m.type.ndim} dimensions")
    return m * (constant(1, dtype=m.type.dtype) - tri(m.shape[-2], m.shape[-1], k=k - 1, dtype=m.type.dtype))


def tril_indices(n, k=0, m=None):
    """Row and column indices of the lower triangle of an ``n`` by ``m`` array."""
    from lucent.tensor.selection import nonzero

    return nonzero(tri(n, m, k, dtype=bool))


def tril_indices_from(a, k=0):
    """``tril_indices`` for the shape of the matrix ``a``."""
    a = as_tensor_variable(a)
    if a.type.ndim != 2:
        raise ValueError(f"tril_indices_from: the input must be two dimensional, got {a.type.ndim} dimensions")
    return tril_indices(a.shape[0], k=k, m=a.shape[1])


def triu_indices(n, k=0, m=None):
    """Row and column indices of the upper triangle of an ``n`` by ``m`` array."""
    from lucent.tensor import math as lm
    from lucent.tensor.selection import nonzero

    return nonzero(lm.invert(tri(n, m, k - 1, dtype=bool)))


def triu_indices_from(a, k=0):
    """``triu_indices`` for the shape of the matrix ``a``."""
    a = as_tensor_variable(a)
    if a.type.ndim != 2:
        raise ValueError(f"triu_indices_from: the input must be two dimensional, got {a.type.ndim} dimensions")
    return triu_indices(a.shape[0], k=k, m=a.shape[1])


__all__ = [
    "ExtractDiag",
    "alloc_diag",
    "diag",
    "diagonal",
    "extract_diag",
    "trace",
    "tri",
    "tril",
    "tril_indices",
    "tril_indices_from",
    "triu",
    "triu_indices",
    "triu_indices_from",
]
