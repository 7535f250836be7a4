"""Types of the non-tensor values tensor ops take as inputs: ``None`` markers and slices.

``NoneConst`` (of type ``NoneTypeT``) stands for "nothing given here" as an
ordinary graph input, so an op's inputs can line up one to one with, say,
the dimensions of a tensor (``SpecifyShape`` uses it for unknown lengths).
They are defined with the shape ops, which need them first; this module is
their home at the path PyTensor code imports them from.

``SliceType`` is the type of Python ``slice`` values, for ops that take a
whole slice as one input (indexing a typed list: ``l[1:]``). A slice with
symbolic bounds is built by ``make_slice`` (``MakeSlice``) from integer
scalars or ``NoneConst``; a constant slice is a ``SliceConstant``. lucent's
tensor indexing does not use them: ``Subtensor`` keeps which bounds are
given in the op and takes the bounds themselves as scalar inputs.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply, Constant, Variable
from lucent.graph.op import Op
from lucent.graph.type import Type
from lucent.scalar.dtypes import integer_dtypes
from lucent.tensor.shape import NoneConst, NoneTypeT

#: The one ``NoneTypeT`` instance (all instances are equal).
none_type_t = NoneConst.type


def as_int_none_variable(x):
    """``x`` as a slice bound: ``NoneConst`` for ``None``, else an integer scalar variable."""
    from lucent.scalar.basic import as_scalar

    if x is None:
        return NoneConst
    if isinstance(x, Variable) and isinstance(x.type, NoneTypeT):
        return x
    x = as_scalar(x)
    if x.type.dtype not in integer_dtypes:
        raise TypeError(f"index must be integers: a slice bound must be an integer, got {x} of type {x.type}")
    return x


class SliceType(Type):
    """The type of Python ``slice`` objects (all instances are equal)."""

    numba_unsupported = "lucent has no Numba representation of slice values"

    def filter(self, x, strict=False, allow_downcast=None):
        if not isinstance(x, slice):
            raise TypeError(f"SliceType expected a slice, got {type(x).__name__} {x!r}")
        return x

    def values_eq(self, a, b):
        return a == b

    @staticmethod
    def may_share_memory(a, b):
        # A slice holds no buffers: only one and the same object "shares" itself.
        return isinstance(a, slice) and a is b

    def clone(self, **kwargs):
        return type(self)()

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))

    def __str__(self):
        return "slice"

    def __repr__(self):
        return "SliceType()"


slicetype = SliceType()


def _plain_bound(b):
    """A bound given as a NumPy integer or 0-d integer ndarray, as a Python int (slices must hash)."""
    if isinstance(b, np.integer):
        return int(b)
    if isinstance(b, np.ndarray):
        if b.ndim != 0 or b.dtype.name not in integer_dtypes:
            raise TypeError(f"A slice bound must be an integer, got the array {b!r}")
        return int(b)
    return b


class SliceConstant(Constant):
    """A constant slice; prints as ``SliceConstant{start, stop, step}``."""

    def __init__(self, type, data, name=None):
        if not isinstance(data, slice):
            raise TypeError(f"SliceConstant needs a slice, got {data!r}")
        data = slice(_plain_bound(data.start), _plain_bound(data.stop), _plain_bound(data.step))
        Constant.__init__(self, type, data, name)

    def signature(self):
        return (SliceConstant, self.data.start, self.data.stop, self.data.step)

    def __str__(self):
        if self.name is not None:
            return self.name
        return f"SliceConstant{{{self.data.start}, {self.data.stop}, {self.data.step}}}"


SliceType.constant_type = SliceConstant


class MakeSlice(Op):
    """``slice(start, stop, step)`` from integer scalars or ``NoneConst`` (``None`` allowed)."""

    __props__ = ()

    def make_node(self, slc, stop=None, step=None):
        if isinstance(slc, slice):
            if stop is not None or step is not None:
                raise TypeError("MakeSlice takes either one slice or start, stop and step")
            bounds = [slc.start, slc.stop, slc.step]
        else:
            bounds = [slc, stop, step]
        return Apply(self, [as_int_none_variable(b) for b in bounds], [slicetype()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = slice(*(None if b is None else int(b) for b in inputs))

    def connection_pattern(self, node):
        return [[False] for _ in node.inputs]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.gradient import DisconnectedType

        return [DisconnectedType()() for _ in inputs]


make_slice = MakeSlice()


def as_symbolic_slice(x, **kwargs):
    """A slice as a graph variable: ``make_slice`` if a bound is symbolic, else a constant."""
    if any(isinstance(b, Variable) for b in (x.start, x.stop, x.step)):
        return make_slice(x)
    return SliceConstant(slicetype, x)


#: ``slice(None)``, the full slice.
NoneSliceConst = SliceConstant(slicetype, slice(None), name="slice(None)")

__all__ = [
    "NoneConst", "NoneTypeT", "none_type_t", "SliceType", "SliceConstant", "slicetype", "MakeSlice",
    "make_slice", "as_int_none_variable", "as_symbolic_slice", "NoneSliceConst",
]
