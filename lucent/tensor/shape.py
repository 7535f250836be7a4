"""Ops that read, assert and change the *shape* of a tensor without touching data.

* ``Shape`` / ``Shape_i`` turn a tensor's run-time shape into graph values,
  so shapes can be computed with like any other int64 tensor.
* ``SpecifyShape`` is a run-time assertion that also *adds* static shape
  information: the output type knows every length given as a constant. It
  is how a less specific type is converted into a more specific one
  (``TensorType.convert_variable``). Unknown lengths are the ``NoneConst``
  constant, so the node keeps one shape input per dimension.
* ``Reshape`` changes the shape keeping the elements in C order; a ``-1``
  entry means "whatever length makes the sizes agree".

``shape_padleft`` and friends insert length-1 axes (through ``expand_dims``)
and ``specify_broadcastable`` marks axes as having length 1.
"""

from __future__ import annotations

import numpy as np

from lucent.graph.basic import Apply, Constant, Variable
from lucent.graph.op import Op
from lucent.graph.type import Type
from lucent.tensor.basic import (
    NotScalarConstantError,
    as_tensor_variable,
    constant,
    get_scalar_constant_value,
    get_vector_length,
)
from lucent.tensor.type import TensorType

_INT64_SCALAR = TensorType("int64", ())


def _int64_vector(length):
    return TensorType("int64", (length,))


def _disconnected():
    from lucent.gradient import DisconnectedType

    return DisconnectedType()()


def _shape_str(shape):
    return "(" + ", ".join("?" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


# --------------------------------------------------------------------------- #
# NoneConst: the "unknown length" marker used by SpecifyShape
# --------------------------------------------------------------------------- #
class NoneTypeT(Type):
    """The type whose only value is ``None``.

    It lets an op take "nothing known here" as an ordinary input, so its
    inputs line up one to one with, for example, the dimensions of a tensor.
    """

    def filter(self, data, strict=False, allow_downcast=None):
        if data is None:
            return None
        raise TypeError(f"NoneTypeT only accepts None, got {data!r}")

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))

    def __str__(self):
        return "NoneTypeT"

    __repr__ = __str__


class _NoneConstant(Constant):
    def __str__(self):
        return "NoneConst"

    def signature(self):
        return (self.type, None)


NoneConst = _NoneConstant(NoneTypeT(), None, name="NoneConst")


def _is_none_const(v):
    return isinstance(v, Constant) and isinstance(v.type, NoneTypeT)


# --------------------------------------------------------------------------- #
# Shape and Shape_i
# --------------------------------------------------------------------------- #
class Shape(Op):
    """The shape of a tensor as an int64 vector of static length ``ndim``."""

    __props__ = ()

    def make_node(self, x):
        x = as_tensor_variable(x)
        return Apply(self, [x], [_int64_vector(x.type.ndim)()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(inputs[0].shape, dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [(constant(node.inputs[0].type.ndim, dtype="int64"),)]

    def connection_pattern(self, node):
        # The values of a tensor do not change its shape.
        return [[False]]

    def L_op(self, inputs, outputs, output_grads):
        return [_disconnected()]


_shape = Shape()


def shape(x):
    """The symbolic shape of ``x`` (an int64 vector with static length ``x.ndim``)."""
    if isinstance(x, Variable) and not isinstance(x.type, TensorType):
        raise TypeError(f"shape expects a TensorType variable, got {x} of type {x.type}")
    return _shape(as_tensor_variable(x))


class Shape_i(Op):
    """The length of dimension ``i`` of a tensor, as an int64 0-d tensor."""

    __props__ = ("i",)

    def __init__(self, i):
        if isinstance(i, (np.integer,)):
            i = int(i)
        if not isinstance(i, int) or isinstance(i, bool) or i < 0:
            raise TypeError(f"Shape_i needs a non-negative int dimension, got {i!r}")
        self.i = i

    def __str__(self):
        return f"Shape_i{{{self.i}}}"

    def make_node(self, x):
        if not isinstance(x, Variable) or not isinstance(x.type, TensorType):
            raise TypeError(f"Shape_i{{{self.i}}} expects a TensorType variable, got {x!r}")
        if x.type.ndim <= self.i:
            raise TypeError(f"Shape_i{{{self.i}}}: {x} has only {x.type.ndim} dimensions")
        return Apply(self, [x], [_INT64_SCALAR()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(inputs[0].shape[self.i], dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [()]

    def connection_pattern(self, node):
        return [[False]]

    def L_op(self, inputs, outputs, output_grads):
        return [_disconnected()]


def shape_i(var, i, fgraph=None):
    """Length of dimension ``i`` of ``var``: a constant when it is known statically."""
    var = as_tensor_variable(var)
    if i < 0:
        i += var.type.ndim
    static = var.type.shape[i]
    if static is not None:
        return constant(static, dtype="int64")
    if fgraph is not None and hasattr(fgraph, "shape_feature"):
        return fgraph.shape_feature.get_shape(var, i)
    return Shape_i(i)(var)


# --------------------------------------------------------------------------- #
# SpecifyShape
# --------------------------------------------------------------------------- #
class SpecifyShape(Op):
    """Assert at run time that the input has the given shape; pass it through.

    Inputs are the tensor and one entry per dimension: an integer 0-d tensor
    or ``NoneConst`` for "any length". The output type takes every length
    that is given as a constant, which is how static shape information is
    added to a graph.
    """

    __props__ = ()
    view_map = {0: [0]}
    #: The output's static shape comes from the values of the shape inputs: a clone with
    #: other shape inputs re-makes the node.
    _output_type_depends_on_input_value = True

    def make_node(self, x, *shape):
        x = as_tensor_variable(x)
        shape = [s if s is None or _is_none_const(s) else as_tensor_variable(s) for s in shape]
        for dim, s in enumerate(shape):
            if s is not None and not _is_none_const(s) and (s.type.ndim != 0 or s.type.dtype not in _INT_DTYPES):
                raise TypeError(
                    f"SpecifyShape: shape values must be integer types (0-d integer tensors); entry {dim} "
                    f"is {s} of type {s.type}"
                )
        if len(shape) != x.type.ndim:
            raise ValueError(
                f"SpecifyShape: {x} is {x.type.ndim}-dimensional and will never match a shape of "
                f"length {len(shape)}; give one entry (or None) per dimension"
            )
        entries = []
        static = list(x.type.shape)
        for dim, s in enumerate(shape):
            if s is None or _is_none_const(s):
                entries.append(NoneConst)
                continue
            entries.append(s)
            try:
                value = int(get_scalar_constant_value(s))
            except NotScalarConstantError:
                continue
            if value < 0:
                raise ValueError(f"SpecifyShape: shape entry {dim} is negative ({value})")
            if static[dim] is None:
                # A length the type already knows stays; a different one fails when run.
                static[dim] = value
        out = x.type.clone(shape=tuple(static))()
        return Apply(self, [x, *entries], [out])

    def perform(self, node, inputs, output_storage):
        x, *shape = inputs
        if x.ndim != len(shape):
            raise AssertionError(
                f"SpecifyShape: got {x.ndim} dimensions (shape {x.shape}), expected {len(shape)} dimensions"
            )
        for dim, (actual, expected) in enumerate(zip(x.shape, shape)):
            if expected is not None and actual != int(expected):
                raise AssertionError(
                    f"SpecifyShape: dim {dim} of input has length {actual}, expected {int(expected)} "
                    f"(input shape {x.shape}, specified {_specified_str(shape)})"
                )
        output_storage[0][0] = x

    def infer_shape(self, fgraph, node, input_shapes):
        x_shape = input_shapes[0]
        out = []
        for dim, s in enumerate(node.inputs[1:]):
            out.append(x_shape[dim] if _is_none_const(s) else s)
        return [tuple(out)]

    def connection_pattern(self, node):
        return [[True]] + [[False]] * (len(node.inputs) - 1)

    def L_op(self, inputs, outputs, output_grads):
        # The gradient has the input's shape: say so, as the forward graph did.
        return [specify_shape(output_grads[0], list(inputs[1:]))] + [_disconnected() for _ in inputs[1:]]


_INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def _specified_str(shape):
    return "(" + ", ".join("?" if s is None else str(int(s)) for s in shape) + ")"


_specify_shape = SpecifyShape()


def specify_shape(x, shape):
    """``x``, checked at run time to have ``shape``; known lengths become static.

    ``shape`` is a tuple/list of ints, ``None`` (unknown) and integer scalar
    variables, a single int for a vector, or a symbolic int vector of known
    length. Returns ``x`` itself when nothing new would be known or checked.
    """
    x = as_tensor_variable(x)
    if shape is Ellipsis:
        shape = (Ellipsis,)
    if isinstance(shape, (int, np.integer)) or shape is None:
        shape = (shape,)
    elif isinstance(shape, Variable):
        vec = as_tensor_variable(shape)
        if vec.type.ndim == 0:
            shape = (vec,)
        else:
            try:
                n = get_vector_length(vec)
            except ValueError:
                raise ValueError(
                    f"specify_shape: the shape vector {vec} must have fixed dimensions (a static length)"
                ) from None
            shape = tuple(vec[i] for i in range(n))
    elif isinstance(shape, np.ndarray):
        shape = tuple(shape.tolist())
    shape = tuple(shape)
    if any(s is Ellipsis for s in shape):
        # ``...`` stands for as many unknown lengths as the other entries leave.
        if sum(s is Ellipsis for s in shape) > 1:
            raise ValueError(f"Multiple Ellipsis in specify_shape: {shape}")
        k = shape.index(Ellipsis)
        fill = x.type.ndim - (len(shape) - 1)
        if fill < 0:
            raise ValueError(f"specify_shape: {x} has {x.type.ndim} dimensions, fewer than the {len(shape) - 1} "
                             f"lengths in {shape}; the shape will never match")
        shape = shape[:k] + (None,) * fill + shape[k + 1:]
    if len(shape) != x.type.ndim:
        raise ValueError(
            f"specify_shape: {x} has {x.type.ndim} dimensions, but the shape {shape} has {len(shape)} entries; "
            "the shape will never match"
        )
    if all(s is None for s in shape):
        return x
    if all(
        s is None or (isinstance(s, (int, np.integer)) and x.type.shape[d] == int(s))
        for d, s in enumerate(shape)
    ):
        return x
    return _specify_shape(x, *shape)


def specify_broadcastable(x, *axes):
    """``x`` with the given axes checked (at run time) and typed as length 1."""
    x = as_tensor_variable(x)
    if not axes:
        return x
    ndim = x.type.ndim
    norm = set()
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"specify_broadcastable: axis {a} is out of bounds for array of dimension {ndim}")
        norm.add(a % ndim)
    return specify_shape(x, tuple(1 if d in norm else None for d in range(ndim)))


# --------------------------------------------------------------------------- #
# Reshape
# --------------------------------------------------------------------------- #
class Reshape(Op):
    """Give a tensor a new shape of ``ndim`` dimensions with the same elements (C order).

    The new shape is an integer vector input; at most one entry may be -1.
    The output is a view of the input when NumPy can make one.
    """

    __props__ = ("ndim",)
    view_map = {0: [0]}
    #: The output's static shape comes from the values of the shape inputs: a clone with
    #: other shape inputs re-makes the node.
    _output_type_depends_on_input_value = True

    def __init__(self, ndim):
        self.ndim = int(ndim)

    def __str__(self):
        return f"Reshape{{{self.ndim}}}"

    def make_node(self, x, shp):
        x = as_tensor_variable(x)
        shp = as_tensor_variable(shp, ndim=1)
        if shp.type.dtype not in _INT_DTYPES:
            raise TypeError(f"Reshape: the new shape must be an integer vector, got {shp} of type {shp.type}")
        if shp.type.shape[0] is not None and shp.type.shape[0] != self.ndim:
            raise ValueError(f"Reshape{{{self.ndim}}}: the shape vector has {shp.type.shape[0]} entries")
        static = _static_reshape(x, shp, self.ndim)
        return Apply(self, [x, shp], [TensorType(x.type.dtype, static)()])

    def perform(self, node, inputs, output_storage):
        x, shp = inputs
        shp = tuple(int(s) for s in np.asarray(shp).reshape(-1))
        if len(shp) != self.ndim:
            # A shape vector of the wrong length breaks the node's own contract (its ndim).
            raise AssertionError(f"Reshape{{{self.ndim}}}: got a shape with {len(shp)} entries: {shp}")
        if sum(s == -1 for s in shp) > 1 or any(s < -1 for s in shp):
            raise ValueError(
                f"Cannot reshape input of shape {x.shape} to shape {shp}: only one entry may be -1 "
                "and the others must be non-negative"
            )
        try:
            out = np.reshape(x, shp)
        except ValueError:
            raise ValueError(
                f"Cannot reshape input of shape {x.shape} (size {x.size}) to shape {shp}"
            ) from None
        output_storage[0][0] = out

    def infer_shape(self, fgraph, node, input_shapes):
        from lucent.tensor import math as lm

        x, shp = node.inputs
        out_static = node.outputs[0].type.shape
        entries = [shp[i] for i in range(self.ndim)]
        if all(s is not None for s in out_static):
            return [tuple(constant(s, dtype="int64") for s in out_static)]
        size = None
        result = []
        for i in range(self.ndim):
            if out_static[i] is not None:
                result.append(constant(out_static[i], dtype="int64"))
                continue
            if size is None:
                size = _prod(input_shapes[0])
                # With exactly one -1 entry the product of the entries is negative.
                requested = _prod(entries)
            missing = lm.int_div(size, lm.neg(requested))
            result.append(lm.switch(lm.eq(entries[i], -1), missing, entries[i]))
        return [tuple(result)]

    def connection_pattern(self, node):
        return [[True], [False]]

    def L_op(self, inputs, outputs, output_grads):
        x, _ = inputs
        return [reshape(output_grads[0], shape(x), ndim=x.type.ndim), _disconnected()]


def _prod(items):
    from lucent.tensor import math as lm

    out = constant(1, dtype="int64")
    for s in items:
        out = lm.mul(out, s)
    return out


def _static_reshape(x, shp, ndim):
    """The static output shape: constant entries, and a -1 when the size is known."""
    entries = []
    for i in range(ndim):
        try:
            entries.append(int(get_scalar_constant_value(_vector_entry(shp, i))))
        except NotScalarConstantError:
            entries.append(None)
    size = None
    if all(s is not None for s in x.type.shape):
        size = int(np.prod(x.type.shape, dtype="int64"))
    known = [s for s in entries if s is not None and s != -1]
    if entries.count(-1) > 1 or any(s is not None and s < -1 for s in entries):
        raise ValueError(f"Reshape: the new shape {_static_str(entries)} has more than one -1 or a negative entry")
    unknown = [i for i, s in enumerate(entries) if s is None or s == -1]
    if size is not None and len(unknown) <= 1:
        # The input's size is known: it fixes the one entry not given as a constant
        # (a -1 or a symbolic length), or checks the product of all of them.
        prod = int(np.prod(known, dtype="int64"))
        if (not unknown and prod != size) or (unknown and (prod == 0 or size % prod)):
            raise ValueError(
                f"Reshape: Input shape {tuple(x.type.shape)} is incompatible with new shape "
                f"{tuple('?' if s is None else s for s in entries)}"
            )
        if unknown:
            entries[unknown[0]] = size // prod
    return tuple(None if s == -1 else s for s in entries)


def _static_str(entries):
    return "(" + ", ".join("?" if s is None else str(s) for s in entries) + ")"


def _vector_entry(vec, i):
    """Entry ``i`` of an int vector, without building nodes when it is easy not to."""
    from lucent.tensor.basic import MakeVector

    if isinstance(vec, Constant):
        return constant(np.asarray(vec.data)[i])
    if vec.owner is not None and isinstance(vec.owner.op, MakeVector):
        return vec.owner.inputs[i]
    if vec.owner is not None and isinstance(vec.owner.op, Shape):
        return shape_i(vec.owner.inputs[0], i)
    return vec[i]


def reshape(x, newshape, ndim=None):
    """``x`` with shape ``newshape`` (a tuple of ints / int scalars, or an int vector).

    At most one entry may be ``-1``. ``ndim`` is needed only when the length
    of a symbolic ``newshape`` cannot be determined.
    """
    x = as_tensor_variable(x)
    if isinstance(newshape, (int, np.integer)):
        newshape = [newshape]
    if isinstance(newshape, (list, tuple)):
        if all(isinstance(s, (int, np.integer)) for s in newshape):
            newshape = constant(np.asarray(newshape, dtype="int64").reshape(-1), dtype="int64")
        else:
            newshape = as_tensor_variable([_as_int64(s) for s in newshape])
    else:
        newshape = as_tensor_variable(newshape)
        if newshape.type.ndim == 0:
            from lucent.tensor.basic import stack

            newshape = stack([newshape])
    if newshape.type.ndim != 1:
        raise TypeError(f"reshape: the new shape must be a vector or a sequence of scalars, got {newshape}")
    if ndim is None:
        try:
            ndim = get_vector_length(newshape)
        except ValueError:
            raise ValueError(
                f"reshape: the length of the new shape {newshape} is not known; pass ndim="
            ) from None
    return Reshape(ndim)(x, newshape)


def _as_int64(s):
    if isinstance(s, (int, np.integer)):
        return constant(int(s), dtype="int64")
    s = as_tensor_variable(s)
    if s.type.ndim != 0 or s.type.dtype not in _INT_DTYPES:
        raise TypeError(f"reshape: shape entries must be integer scalars, got {s} of type {s.type}")
    return s


def shape_tuple(x):
    """The lengths of ``x``: int64 ``ScalarConstant``s where the type knows them, entries of
    ``shape(x)`` elsewhere; ``()`` for a variable whose type has no shape (taken as a scalar)."""
    from lucent.scalar.basic import ScalarConstant, int64

    if isinstance(x, Variable) and not hasattr(x.type, "shape"):
        return ()
    x = as_tensor_variable(x)
    return tuple(
        ScalarConstant(int64, s) if s is not None else shape(x)[d] for d, s in enumerate(x.type.shape)
    )


# --------------------------------------------------------------------------- #
# Adding length-1 axes
# --------------------------------------------------------------------------- #
def shape_padleft(t, n_ones=1):
    """``t`` with ``n_ones`` length-1 axes added on the left."""
    from lucent.tensor.basic import expand_dims

    t = as_tensor_variable(t)
    if n_ones == 0:
        return t
    return expand_dims(t, tuple(range(n_ones)))


def shape_padright(t, n_ones=1):
    """``t`` with ``n_ones`` length-1 axes added on the right."""
    from lucent.tensor.basic import expand_dims

    t = as_tensor_variable(t)
    if n_ones == 0:
        return t
    return expand_dims(t, tuple(range(t.type.ndim, t.type.ndim + n_ones)))


def shape_padaxis(t, axis):
    """``t`` with a length-1 axis inserted at ``axis`` (negative counts from the end)."""
    from lucent.tensor.basic import expand_dims

    t = as_tensor_variable(t)
    ndim = t.type.ndim + 1
    if not -ndim <= axis < ndim:
        raise IndexError(f"shape_padaxis: axis {axis} is out of range for a result with {ndim} dimensions")
    return expand_dims(t, axis % ndim)


__all__ = [
    "NoneConst",
    "NoneTypeT",
    "Reshape",
    "Shape",
    "Shape_i",
    "SpecifyShape",
    "reshape",
    "shape",
    "shape_i",
    "shape_tuple",
    "shape_padaxis",
    "shape_padleft",
    "shape_padright",
    "specify_broadcastable",
    "specify_shape",
]
