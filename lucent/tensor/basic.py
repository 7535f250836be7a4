"""Building blocks of tensor graphs: conversion to tensors, constants, and the
basic structural ops (joining, stacking, flattening, squeezing, copies).

It also answers two questions other ops ask while a graph is built: "is this
scalar a known constant?" (``get_scalar_constant_value``) and "how long is
this vector?" (``get_vector_length``), which is how static shapes propagate
through shape arithmetic.

The ops that create new arrays (``alloc``, ``zeros``, ``arange``, ``eye``,
``make_vector``, ...) live in ``lucent.tensor.creation``; they are imported
back at the end of this module so that every name stays reachable as
``lucent.tensor.basic.<name>``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lucent.configdefaults import config
from lucent.graph.basic import Apply, Constant, Variable
from lucent.graph.op import Op
from lucent.graph.type import register_transfer, transfer
from lucent.scalar.dtypes import (
    discrete_dtypes,
    integer_dtypes,
    normalize_dtype,
    python_scalar_dtype,
    upcast,
)
from lucent.tensor.type import TensorType, tensor  # noqa: F401  (PyTensor re-exports it here)
from lucent.tensor.variable import TensorConstant, TensorValue, TensorVariable


def _as_array(x, dtype=None):
    """``x`` as an ndarray, giving Python numbers their weak (smallest exact) dtype.

    An empty list or tuple is a ``floatX`` array; an ndarray of the right
    dtype (a memmap too) is used as it is, not copied.
    """
    if isinstance(x, np.ma.MaskedArray):
        raise NotImplementedError("MaskedArrays are not supported: pass x.filled(...) or x.data")
    if isinstance(x, np.ndarray) and (dtype is None or x.dtype.name == normalize_dtype(dtype)):
        if x.dtype == object:
            raise TypeError(f"Cannot convert {x!r} to a tensor: it is not numeric")
        return x
    if isinstance(x, (list, tuple)) and dtype is None and not any(True for _ in _flatten_seq(x)):
        from lucent.configdefaults import config

        return np.asarray(x, dtype=config.floatX)
    if dtype is not None:
        dtype = normalize_dtype(dtype)
        arr = np.asarray(x)
        if arr.dtype.name != dtype:
            with np.errstate(all="ignore"):
                cast = arr.astype(dtype)
            arr = cast
        return arr
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        return np.asarray(x, dtype=python_scalar_dtype(x))
    if isinstance(x, (list, tuple)):
        arr = np.asarray(x)
        if arr.dtype == np.float64 and arr.size and all(
            isinstance(v, (int, float)) for v in np.ravel(np.asarray(x, dtype=object))
        ):
            from lucent.configdefaults import config

            if config.floatX == "float32":
                arr = arr.astype("float32")
        return arr
    arr = np.asarray(x)
    if arr.dtype == object:
        raise TypeError(f"Cannot convert {x!r} to a tensor: it is not numeric")
    return arr


def constant(x, name=None, ndim=None, dtype=None) -> TensorConstant:
    """A ``TensorConstant`` holding ``x``.

    Python ints get the smallest int dtype holding them (``2`` is int8) and
    Python floats the smallest float dtype representing them exactly, so that
    constants do not upcast the tensors they are combined with. A
    ``TensorConstant`` is returned as it is, or its value is used when
    another ``ndim`` or ``dtype`` is asked for.
    """
    if isinstance(x, TensorConstant):
        if name is None and (ndim is None or ndim == x.type.ndim) and (dtype is None or x.dtype == normalize_dtype(dtype)):
            return x
        x = x.data
    if isinstance(x, Variable):
        raise TypeError(f"constant() needs a value, got the symbolic variable {x}")
    arr = _as_array(x, dtype)
    if ndim is not None:
        if arr.ndim < ndim:
            arr = arr.reshape((1,) * (ndim - arr.ndim) + arr.shape)
        elif arr.ndim > ndim:
            squeezable = [i for i in range(arr.ndim - ndim) if arr.shape[i] == 1]
            if len(squeezable) != arr.ndim - ndim:
                raise ValueError(f"ndarray with shape {arr.shape} cannot be made {ndim}-d")
            arr = arr.reshape(arr.shape[arr.ndim - ndim :])
    ttype = TensorType(arr.dtype.name, arr.shape)
    return TensorConstant(ttype, arr, name=name)


def value(x, name=None, dtype=None) -> TensorValue:
    """A graph input with a default value (Theano's ``tensor.value``).

    Listed as an input of ``function``, its default is ignored and a value
    must be passed; used without being listed, its value is used.
    """
    arr = _as_array(x, dtype)
    return TensorValue(TensorType(arr.dtype.name, (None,) * arr.ndim), arr, name=name)


def as_tensor_variable(x, name=None, ndim=None, dtype=None) -> TensorVariable:
    """Convert ``x`` into a tensor variable.

    Tensor variables are returned as they are (cast if ``dtype`` is given);
    an Apply gives its default output; scalar variables are wrapped; a
    list/tuple that contains variables is stacked; anything numeric becomes a
    ``TensorConstant``.
    """
    if isinstance(x, Apply):
        x = _default_output(x)
    if isinstance(x, Variable):
        if isinstance(x.type, TensorType):
            out = x
        else:
            from lucent.scalar.basic import ScalarType

            if isinstance(x.type, ScalarType):
                out = tensor_from_scalar(x)  # noqa: F821 - defined below
            else:
                raise TypeError(
                    f"Cannot convert {x} of type {x.type} to a tensor variable"
                )
        if ndim is not None and out.type.ndim != ndim:
            if out.type.ndim > ndim:
                from lucent.tensor.basic import squeeze

                drop = [i for i in range(out.type.ndim - ndim) if out.type.shape[i] == 1]
                if len(drop) != out.type.ndim - ndim:
                    raise ValueError(
                        f"Tensor of type {out.type} could not be cast to have {ndim} dimensions"
                    )
                out = squeeze(out, axis=drop)
            else:
                from lucent.tensor.shape import shape_padleft

                out = shape_padleft(out, ndim - out.type.ndim)
        if dtype is not None and out.type.dtype != normalize_dtype(dtype):
            from lucent.tensor.basic import cast

            out = cast(out, dtype)
        if name is not None and out is not x:
            out.name = name
        return out
    if isinstance(x, range):
        # A Python range is an arange (a graph, not an array of its values).
        if ndim is not None and ndim != 1:
            raise ValueError(f"ndim for range must be 1, got ndim={ndim}")
        from lucent.tensor.creation import arange

        out = arange(x.start, x.stop, x.step, dtype=dtype)
        if name is not None:
            out.name = name
        return out
    if isinstance(x, (list, tuple)) and any(isinstance(v, Variable) for v in _flatten_seq(x)):
        items = list(_flatten_seq(x))
        if all(isinstance(v, Constant) and np.ndim(v.data) == 0 for v in items if isinstance(v, Variable)):
            # Constant entries only: the result is a constant too.
            values = _map_seq(x, lambda v: np.asarray(v.data).item() if isinstance(v, Variable) else v)
            try:
                return constant(values, name=name, ndim=ndim, dtype=dtype)
            except (TypeError, ValueError):
                pass
        from lucent.tensor.basic import stack

        parts = [as_tensor_variable(v, dtype=dtype) for v in x]
        return stack(parts)
    try:
        return constant(x, name=name, ndim=ndim, dtype=dtype)
    except TypeError as e:
        raise TypeError(f"Cannot convert {x!r} to a tensor variable: {e}") from None


as_tensor = as_tensor_variable


def _default_output(node):
    """The output of ``node`` that stands for it (``op.default_output``, or its only output)."""
    do = getattr(node.op, "default_output", None)
    if do is None:
        if len(node.outputs) != 1:
            raise TypeError(
                f"Multi-output Op without default_output encountered: {node.op} has "
                f"{len(node.outputs)} outputs. Use one of node.outputs directly."
            )
        return node.outputs[0]
    if isinstance(do, bool) or not isinstance(do, (int, np.integer)):
        raise TypeError(f"{node.op}.default_output must be an int, got {do!r}")
    if not -len(node.outputs) <= do < len(node.outputs):
        raise IndexError(f"{node.op}.default_output {do} is out of range for {len(node.outputs)} output(s)")
    return node.outputs[do]


def _map_seq(x, fn):
    """``x`` (nested lists/tuples) with ``fn`` applied to every leaf."""
    if isinstance(x, (list, tuple)):
        return [_map_seq(v, fn) for v in x]
    return fn(x)


def _flatten_seq(x):
    for v in x:
        if isinstance(v, (list, tuple)):
            yield from _flatten_seq(v)
        else:
            yield v



from lucent.tensor.exceptions import EmptyConstantError, NotScalarConstantError  # noqa: E402,F401


def _disconnected():
    from lucent.gradient import DisconnectedType

    return DisconnectedType()()


def _float_zeros_like(x):
    """The gradient of a discrete input: zeros of floatX (it cannot move)."""
    return zeros_like(x, dtype=config.floatX)


def _check_int_scalar(v, what):
    v = as_tensor_variable(v)
    if v.type.ndim != 0 or v.type.dtype not in integer_dtypes:
        raise TypeError(f"{what} must be an integer scalar, got {v} of type {v.type}")
    return v


def _static_int(v):
    """The value of ``v`` as a Python int if it is a known constant, else None."""
    try:
        return int(get_scalar_constant_value(v))
    except NotScalarConstantError:
        return None


# --------------------------------------------------------------------------- #
# Constants that are not written as constants
# --------------------------------------------------------------------------- #
_FOLDABLE_SCALAR_OPS = (
    "Cast", "Identity", "Add", "Sub", "Mul", "Neg", "IntDiv", "TrueDiv", "Mod", "Maximum", "Minimum",
    "Switch", "EQ", "NEQ", "LT", "GT", "LE", "GE",
)


def get_scalar_constant_value(v, elemwise=True, only_process_constants=False, max_recur=10,
                              raise_not_constant=True):
    """The value (a 0-d ndarray) of the 0-d ``v`` if it is known at graph-build time.

    ``v`` must be 0-d (a tensor with more dimensions is refused even if all
    its entries are equal: use ``get_underlying_scalar_constant_value``);
    the search itself is ``get_underlying_scalar_constant_value``'s. Raises
    ``NotScalarConstantError`` (or, with ``raise_not_constant=False``,
    returns ``v``) when the value is not known, which callers use to fall
    back to symbolic code.
    """
    ndim = getattr(v, "ndim", None) if isinstance(v, np.ndarray) else getattr(getattr(v, "type", None), "ndim", None)
    if isinstance(v, (np.ndarray, Variable)) and ndim not in (None, 0):
        if raise_not_constant:
            raise NotScalarConstantError(f"{v} is not 0-d: it has {ndim} dimensions")
        return v
    return get_underlying_scalar_constant_value(
        v, elemwise=elemwise, only_process_constants=only_process_constants, max_recur=max_recur,
        raise_not_constant=raise_not_constant,
    )


def get_underlying_scalar_constant_value(v, *, elemwise=True, only_process_constants=False, max_recur=10,
                                         raise_not_constant=True):
    """The one scalar value underlying ``v`` (a fresh 0-d ndarray), found symbolically.

    Digs through what does not change a value: ``SpecifyShape``, copies,
    scalar/tensor conversions, broadcasting (``Alloc``, ``DimShuffle``,
    ``second``), assertions whose conditions are constant and true, static
    lengths (``Shape_i``, ``shape(x)[i]``), entries of ``MakeVector``, of
    joined vectors and of constants, and (with ``elemwise``) arithmetic and
    comparisons of such values. A constant tensor whose entries are all
    equal has that value; ``NoneConst`` has ``None``. Nothing is computed
    by running the graph: it is symbolic reasoning, cheap enough to be used
    while graphs are built and rewritten. ``only_process_constants`` looks
    at constants only; ``max_recur`` bounds the depth of the search.
    Raises ``NotScalarConstantError`` (or, with ``raise_not_constant=False``,
    returns ``v``) when there is no such value.
    """
    try:
        return _underlying_constant(v, elemwise, only_process_constants, max_recur)
    except NotScalarConstantError:
        if raise_not_constant:
            raise
        return v


def _constant_value(v):
    """The scalar value of the ``Constant`` ``v`` (see ``get_underlying_scalar_constant_value``)."""
    from lucent.tensor.shape import NoneTypeT

    if isinstance(v.type, NoneTypeT):
        return None
    dtype = getattr(v.type, "dtype", None)
    shape = getattr(v.type, "shape", None)
    if dtype is None or shape is None or v.data is None:
        raise NotScalarConstantError(f"{v} is not a scalar constant")
    if isinstance(v.type, TensorType) or not shape:
        data = np.asarray(v.data)
        if data.dtype == object and not isinstance(v.data, np.ndarray):
            # NumPy wraps a non-array value (a SciPy sparse matrix) as one object.
            raise NotScalarConstantError(f"{v} is not a scalar constant")
        if data.size == 1:
            return np.array(data.reshape(()), dtype=dtype)
        if isinstance(v.type, TensorType) and data.size > 1:
            first = data.reshape(-1)[0]
            if np.all(data == first):
                return np.array(first, dtype=dtype)
    raise NotScalarConstantError(f"{v} is not a scalar constant")


def _underlying_constant(v, elemwise, only_process_constants, max_recur):
    if v is None:
        raise NotScalarConstantError("None is not a scalar constant")
    if isinstance(v, (int, float, complex, bool, np.number, np.bool_)):
        return np.asarray(v)
    if isinstance(v, np.ndarray):
        if v.size != 1:
            raise NotScalarConstantError(f"{v!r} is not a scalar")
        return np.array(v.reshape(()), dtype=v.dtype)
    if not isinstance(v, Variable):
        raise NotScalarConstantError(f"{v!r} is not a constant scalar")
    if isinstance(v, Constant):
        return _constant_value(v)
    if only_process_constants or v.owner is None or max_recur <= 0:
        raise NotScalarConstantError(f"{v} is not a constant")
    node = v.owner
    op = node.op

    def recur(var):
        return _underlying_constant(var, elemwise, False, max_recur - 1)

    from lucent.raise_op import CheckAndRaise
    from lucent.scalar.basic import ScalarOp
    from lucent.tensor.creation import Alloc
    from lucent.tensor.elemwise import DimShuffle, Elemwise
    from lucent.tensor.shape import Shape, Shape_i, SpecifyShape
    from lucent.tensor.subtensor import Subtensor

    if isinstance(op, (SpecifyShape, TensorFromScalar, ScalarFromTensor, TensorCopy, Alloc, DimShuffle)):
        return recur(node.inputs[0])
    if isinstance(op, Shape_i):
        x = node.inputs[0]
        if isinstance(x, Constant):
            return np.asarray(np.shape(x.data)[op.i], dtype="int64")
        length = x.type.shape[op.i]
        if length is not None:
            return np.asarray(length, dtype="int64")
    if isinstance(op, CheckAndRaise):
        conditions = [recur(c) for c in node.inputs[1:]]
        if all(np.ndim(c) == 0 and c for c in conditions):
            return recur(node.inputs[0])
    scalar_op = op if isinstance(op, ScalarOp) else getattr(op, "scalar_op", None) if isinstance(op, Elemwise) else None
    if scalar_op is not None:
        name = type(scalar_op).__name__
        if name == "Second":
            # The value of ``second(shape_giver, value)`` is ``value``, whatever the shape.
            return recur(node.inputs[1])
        if elemwise and name in _FOLDABLE_SCALAR_OPS:
            values = [recur(i) for i in node.inputs]
            dtypes = [getattr(i.type, "dtype", None) for i in node.inputs]
            if any(d is None for d in dtypes) or len(node.outputs) != 1:
                raise NotScalarConstantError(f"{v} is not a constant")
            args = [np.asarray(x, dtype=d) for x, d in zip(values, dtypes)]
            if isinstance(op, Elemwise) and v.type.ndim != 0:
                out = scalar_op.impl(*args)
            else:
                storage = [[None]]
                op.perform(node, args, storage)
                out = storage[0][0]
            return np.array(out, dtype=v.type.dtype)
    if isinstance(op, Subtensor) and getattr(v.type, "ndim", None) == 0:
        base = node.inputs[0]
        try:
            indices = [int(recur(i)) for i in node.inputs[1:]]
        except (NotScalarConstantError, TypeError):
            indices = None
        if indices is not None:
            if isinstance(base, Constant):
                storage = [[None]]
                op.perform(node, [np.asarray(base.data), *indices], storage)
                return np.array(storage[0][0], dtype=v.type.dtype)
            if len(op.idx_list) == 1 and op.idx_list[0] == "i":
                (i,) = indices
                if base.owner is not None and isinstance(base.owner.op, Shape):
                    x = base.owner.inputs[0]
                    if not -x.type.ndim <= i < x.type.ndim:
                        raise ValueError(
                            f"get_underlying_scalar_constant_value: x.shape[{i}] is out of range for "
                            f"x={x} with {x.type.ndim} dimensions"
                        )
                    if x.type.shape[i] is not None:
                        return np.asarray(x.type.shape[i], dtype="int64")
                    if isinstance(x, Constant):
                        return np.asarray(np.shape(x.data)[i], dtype="int64")
                else:
                    entry = _entry_of_vector(base, i)
                    if entry is not None:
                        return np.array(recur(entry), dtype=v.type.dtype)
                    value = _vector_entry_constant(base, i, max_recur - 1, elemwise)
                    if value is not None:
                        return np.array(value, dtype=v.type.dtype)
    raise NotScalarConstantError(f"{v} is not a constant")


def _entry_of_vector(vec, i):
    """The 0-d variable that is entry ``i`` of ``vec`` (a ``MakeVector`` or a join of vectors
    of known lengths), or None."""
    node = vec.owner
    if node is None:
        return None
    if isinstance(node.op, MakeVector):
        return node.inputs[i] if -len(node.inputs) <= i < len(node.inputs) else None
    if isinstance(node.op, Join) and node.op.axis == 0 and all(p.type.ndim == 1 for p in node.inputs):
        try:
            lengths = [get_vector_length(p) for p in node.inputs]
        except ValueError:
            return None
        i = i + sum(lengths) if i < 0 else i
        for part, n in zip(node.inputs, lengths):
            if 0 <= i < n:
                from lucent.tensor.subtensor import getitem

                return getitem(part, i) if part.owner is None or not isinstance(part.owner.op, MakeVector) \
                    else part.owner.inputs[i]
            i -= n
    return None


def _vector_entry_constant(vec, i, max_recur, elemwise):
    """Entry ``i`` of the vector ``vec`` when known before running, seen through casts
    and a scalar expanded to a vector; else None."""
    from lucent.tensor.elemwise import DimShuffle

    if isinstance(vec, Constant):
        data = np.asarray(vec.data)
        return data[i] if data.ndim == 1 and -len(data) <= i < len(data) else None
    node = vec.owner
    if node is None or max_recur <= 0:
        return None
    try:
        if isinstance(node.op, DimShuffle) and node.inputs[0].type.ndim == 0 and i in (0, -1):
            return _underlying_constant(node.inputs[0], elemwise, False, max_recur - 1)
    except NotScalarConstantError:
        return None
    if type(getattr(node.op, "scalar_op", None)).__name__ == "Cast":
        inner = _vector_entry_constant(node.inputs[0], i, max_recur - 1, elemwise)
        return None if inner is None else np.asarray(inner).astype(vec.type.dtype)
    return None


def get_vector_length(v):
    """The number of entries of the vector ``v`` if it can be known before running.

    Known for static shapes, ``shape(x)`` (its length is ``x.ndim``),
    ``MakeVector`` and joins of vectors of known length; otherwise raises
    ``ValueError``.
    """
    v = as_tensor_variable(v)
    if v.type.ndim != 1:
        raise TypeError(f"get_vector_length: {v} must be a vector, it has {v.type.ndim} dimensions")
    if v.type.shape[0] is not None:
        return v.type.shape[0]
    if v.owner is not None:
        from lucent.tensor.shape import Shape, SpecifyShape

        op = v.owner.op
        if isinstance(op, Shape):
            return v.owner.inputs[0].type.ndim
        if isinstance(op, MakeVector):
            return len(v.owner.inputs)
        if isinstance(op, Join):
            return sum(get_vector_length(i) for i in v.owner.inputs)
        if isinstance(op, (SpecifyShape, TensorCopy)):
            return get_vector_length(v.owner.inputs[0])
        scalar_op = getattr(op, "scalar_op", None)
        if scalar_op is not None and type(scalar_op).__name__ == "Cast":
            return get_vector_length(v.owner.inputs[0])
        if type(op).__name__ == "Subtensor" and len(op.idx_list) == 1 and isinstance(op.idx_list[0], tuple):
            # A slice with constant bounds: ``x[a:a]`` is empty, else the length of x decides.
            index_inputs = iter(v.owner.inputs[1:])
            try:
                bounds = [
                    None if flag is None else int(get_scalar_constant_value(next(index_inputs)))
                    for flag in op.idx_list[0]
                ]
                if bounds[0] is not None and bounds[0] == bounds[1]:
                    return 0
                return len(range(*slice(*bounds).indices(get_vector_length(v.owner.inputs[0]))))
            except (ValueError, NotScalarConstantError):
                pass
    raise ValueError(f"Length of {v} cannot be determined before running the graph")


# --------------------------------------------------------------------------- #
# Scalars and tensors
# --------------------------------------------------------------------------- #
class TensorFromScalar(Op):
    """A scalar (``ScalarType``) value as a 0-d tensor, so tensor ops can use it."""

    __props__ = ()

    def make_node(self, s):
        from lucent.scalar.basic import ScalarType, as_scalar

        s = as_scalar(s)
        if not isinstance(s.type, ScalarType):
            raise TypeError(f"TensorFromScalar expects a scalar variable, got {s} of type {s.type}")
        return Apply(self, [s], [TensorType(s.type.dtype, ())()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(inputs[0], dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [()]

    def L_op(self, inputs, outputs, output_grads):
        (s,) = inputs
        if s.type.dtype in discrete_dtypes:
            from lucent.scalar.basic import constant as scalar_constant

            return [scalar_constant(np.zeros((), dtype=config.floatX))]
        return [scalar_from_tensor(output_grads[0])]


class ScalarFromTensor(Op):
    """A 0-d tensor as a scalar (``ScalarType``) value, for scalar-level code."""

    __props__ = ()

    def make_node(self, t):
        from lucent.scalar.basic import get_scalar_type

        t = as_tensor_variable(t)
        if t.type.ndim != 0:
            raise TypeError(f"ScalarFromTensor expects a 0-d tensor, got {t} of type {t.type}")
        return Apply(self, [t], [get_scalar_type(t.type.dtype)()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(inputs[0]).reshape(())[()]

    def infer_shape(self, fgraph, node, input_shapes):
        return [()]

    def L_op(self, inputs, outputs, output_grads):
        (t,) = inputs
        if t.type.dtype in discrete_dtypes:
            return [_float_zeros_like(t)]
        return [tensor_from_scalar(output_grads[0])]


tensor_from_scalar = TensorFromScalar()
scalar_from_tensor = ScalarFromTensor()


# --------------------------------------------------------------------------- #
# Joining
# --------------------------------------------------------------------------- #
class Join(Op):
    """Concatenate tensors of the same rank along ``axis``; the dtype is their upcast."""

    __props__ = ("axis",)

    def __init__(self, axis=0):
        if isinstance(axis, Variable):
            raise TypeError(f"Join needs a constant int axis, got the symbolic variable {axis}")
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
            raise TypeError(f"Join needs a non-negative int axis, got {axis!r}")
        if axis < 0:
            raise ValueError(
                f"Join needs a non-negative axis, got {axis}: join(axis, ...) resolves a negative "
                "axis against the inputs' rank"
            )
        self.axis = int(axis)

    def __str__(self):
        return f"Join{{axis={self.axis}}}"

    def make_node(self, *tensors):
        if not tensors:
            raise ValueError("Join needs at least one tensor")
        tensors = [as_tensor_variable(t) for t in tensors]
        ndim = tensors[0].type.ndim
        if ndim == 0:
            raise TypeError("Join: cannot join 0-d tensors (use stack)")
        for t in tensors:
            if t.type.ndim != ndim:
                raise TypeError(
                    f"Join: all tensors must have the same number of dimensions, got "
                    + ", ".join(f"{x} ({x.type.ndim}-d)" for x in tensors)
                )
        if self.axis >= ndim:
            raise ValueError(f"Join: axis {self.axis} is out of range for {ndim}-d tensors")
        static = []
        for d in range(ndim):
            lengths = [t.type.shape[d] for t in tensors]
            if d == self.axis:
                static.append(None if None in lengths else sum(lengths))
                continue
            known = {s for s in lengths if s is not None}
            if len(known) > 1:
                raise ValueError(
                    f"Join{{axis={self.axis}}}: all input array dimensions other than the specified "
                    f"`axis` ({self.axis}) must match exactly, or be unknown (None), but along dimension {d}, "
                    f"the inputs shapes are incompatible: {np.array(lengths)} (shapes "
                    + ", ".join(_shape_text(t.type.shape) for t in tensors) + ")"
                )
            static.append(known.pop() if known else None)
        dtype = upcast(*[t.type.dtype for t in tensors])
        return Apply(self, tensors, [TensorType(dtype, tuple(static))()])

    def perform(self, node, inputs, output_storage):
        dtype = node.outputs[0].type.dtype
        try:
            out = np.concatenate(inputs, axis=self.axis)
        except ValueError:
            raise ValueError(
                f"Join{{axis={self.axis}}}: cannot join arrays of shapes "
                + ", ".join(str(x.shape) for x in inputs)
                + f"; all dimensions except {self.axis} must match"
            ) from None
        output_storage[0][0] = out.astype(dtype, copy=False)

    def infer_shape(self, fgraph, node, input_shapes):
        from lucent.tensor import math as lm

        out = []
        for d in range(node.outputs[0].type.ndim):
            length = node.outputs[0].type.shape[d]
            if length is not None:
                out.append(constant(length, dtype="int64"))
            elif d == self.axis:
                total = input_shapes[0][d]
                for shp in input_shapes[1:]:
                    total = lm.add(total, shp[d])
                out.append(total)
            else:
                out.append(input_shapes[0][d])
        return [tuple(out)]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor import math as lm
        from lucent.tensor.shape import shape_i

        gz = output_grads[0]
        grads = []
        start = constant(0, dtype="int64")
        for x in inputs:
            stop = lm.add(start, shape_i(x, self.axis))
            if x.type.dtype in discrete_dtypes:
                grads.append(_float_zeros_like(x))
            else:
                piece = gz[(slice(None),) * self.axis + (slice(start, stop),)]
                if x.type.dtype != piece.type.dtype:
                    piece = cast(piece, x.type.dtype)
                grads.append(piece)
            start = stop
        return grads


def _shape_text(shape):
    return "(" + ", ".join("?" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _norm_axis(axis, ndim, what):
    if isinstance(axis, Variable):
        axis = _static_int(axis)
        if axis is None:
            raise TypeError(f"{what}: the axis must be a constant integer")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{what}: the axis must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        # AxisError is both a ValueError and an IndexError, as in NumPy.
        raise np.exceptions.AxisError(f"{what}: axis {axis} is out of range for tensors with {ndim} dimensions")
    return int(axis) % ndim


def join(axis, *tensors_list):
    """Concatenate ``tensors_list`` along ``axis`` (negative counts from the end)."""
    if len(tensors_list) == 1 and isinstance(tensors_list[0], (list, tuple)):
        tensors_list = tuple(tensors_list[0])
    if not tensors_list:
        raise ValueError("join needs at least one tensor")
    tensors = [as_tensor_variable(t) for t in tensors_list]
    if len(tensors) == 1:
        return tensors[0]
    axis = _norm_axis(axis, max(tensors[0].type.ndim, 1), "join")
    return Join(axis)(*tensors)


def concatenate(tensor_list, axis=0):
    """Join a list of tensors along an existing ``axis`` (like ``numpy.concatenate``)."""
    if not isinstance(tensor_list, (list, tuple)):
        raise TypeError(
            "concatenate expects a list or tuple of tensors as its first argument, "
            f"got {tensor_list!r}; did you mean concatenate([a, b])?"
        )
    return join(axis, *tensor_list)


def stack(tensors, axis=0):
    """Join tensors of equal shape along a *new* ``axis`` (like ``numpy.stack``)."""
    if isinstance(tensors, Variable) or not isinstance(tensors, (list, tuple)):
        raise TypeError(
            f"stack: First argument should be a Sequence (a list or tuple) of tensors, got {tensors!r}; "
            "the axis comes second: stack([a, b], axis)"
        )
    if not tensors:
        raise ValueError("stack: No tensor arguments provided; it needs at least one tensor")
    tensors = [as_tensor_variable(t) for t in tensors]
    ndim = tensors[0].type.ndim
    if any(t.type.ndim != ndim for t in tensors):
        raise ValueError(
            "stack: all tensors must have the same number of dimensions, got "
            + ", ".join(f"{t.type}" for t in tensors)
        )
    axis = _norm_axis(axis, ndim + 1, "stack")
    if ndim == 0:
        return make_vector(*tensors)
    return join(axis, *[expand_dims(t, axis) for t in tensors])


# --------------------------------------------------------------------------- #
# Shape manipulation in terms of DimShuffle and Reshape
# --------------------------------------------------------------------------- #
def infer_static_shape(shape):
    """``(entries, static)``: a shape as a list of 0-d integer tensors, and its static lengths.

    ``shape`` is a sequence of lengths or an integer vector of known length.
    Each static length is an int where the entry is a constant once the
    graph computing it is folded (``canonicalize``), else ``None``; this is
    how ops whose output shape is an input (``Alloc``, random draws) type
    their outputs. A non-integer entry raises ``TypeError``.
    """
    from lucent.configdefaults import config

    if isinstance(shape, Variable):
        shape = as_tensor_variable(shape)
        if shape.type.ndim == 1:
            from lucent.tensor.shape import _vector_entry

            shape = [_vector_entry(shape, i) for i in range(get_vector_length(shape))]
        else:
            shape = [shape]

    def checked(s):
        s = as_tensor_variable(s, ndim=0)
        if s.type.dtype not in integer_dtypes:
            if config.exception_verbosity == "high":
                from lucent.printing import min_informative_str

                text = "\n" + min_informative_str(s)
            else:
                text = str(s)
            raise TypeError(f"Shapes must be scalar integers; got {text}")
        return s

    entries = [checked(s) for s in shape]

    def static_of(values):
        out = []
        for v in values:
            try:
                out.append(int(get_scalar_constant_value(v)))
            except NotScalarConstantError:
                out.append(None)
        return out

    static = static_of(entries)
    if None in static:
        from lucent.graph.rewriting.utils import rewrite_graph

        folded = rewrite_graph(list(entries), include=("canonicalize",), clone=True)
        static = [a if a is not None else b for a, b in zip(static, static_of(folded))]
    return entries, tuple(static)


def is_flat(var, ndim=1):
    """True when ``var`` has exactly ``ndim`` dimensions (the form ``flatten(x, ndim)`` gives)."""
    return as_tensor_variable(var).type.ndim == ndim


def flatten(x, ndim=1):
    """``x`` reshaped to ``ndim`` dimensions, collapsing the trailing ones."""
    from lucent.tensor.shape import reshape, shape_i

    x = as_tensor_variable(x)
    if ndim < 1 or ndim > max(x.type.ndim, 1):
        raise ValueError(f"flatten: ndim={ndim} must be between 1 and {max(x.type.ndim, 1)} for {x}")
    if ndim == x.type.ndim:
        return x
    lead = [shape_i(x, d) for d in range(ndim - 1)]
    tail = x.type.shape[ndim - 1:]
    last = int(np.prod(tail, dtype="int64")) if all(s is not None for s in tail) else -1
    return reshape(x, [*lead, last], ndim=ndim)


def expand_dims(a, axis):
    """``a`` with new length-1 axes at the positions ``axis`` of the result."""
    from lucent.tensor.elemwise import DimShuffle

    a = as_tensor_variable(a)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out_ndim = a.type.ndim + len(axes)
    norm = [_norm_axis(ax, out_ndim, "expand_dims") for ax in axes]
    if len(set(norm)) != len(norm):
        raise ValueError(f"expand_dims: repeated axis in {axes}")
    if not norm:
        return a
    dims = iter(range(a.type.ndim))
    order = tuple("x" if d in norm else next(dims) for d in range(out_ndim))
    return DimShuffle(a.type.ndim, order)(a)


def squeeze(x, axis=None):
    """``x`` without the given length-1 axes (all statically length-1 ones by default).

    Axes whose length is not known statically are checked at run time.
    """
    from lucent.tensor.elemwise import DimShuffle
    from lucent.tensor.shape import specify_broadcastable

    x = as_tensor_variable(x)
    if axis is None:
        axes = [d for d, s in enumerate(x.type.shape) if s == 1]
    else:
        raw = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        if x.type.ndim == 0:
            # As NumPy: a 0-d array may be "squeezed" along axis 0 (or -1), which leaves it as it is.
            if any(isinstance(a, (int, np.integer)) and a not in (0, -1) for a in raw):
                raise np.exceptions.AxisError(f"axis {tuple(int(a) for a in raw)} is out of bounds for array of dimension 0")
            return x
        axes = sorted({_norm_axis(a, x.type.ndim, "squeeze") for a in raw}) if raw else []
        for a in axes:
            if x.type.shape[a] not in (None, 1):
                raise ValueError(
                    f"squeeze: cannot remove axis {a} of {x}: its length is {x.type.shape[a]}, not 1"
                )
        unknown = [a for a in axes if x.type.shape[a] is None]
        if unknown:
            x = specify_broadcastable(x, *unknown)
    if not axes:
        return x
    return DimShuffle(x.type.ndim, tuple(d for d in range(x.type.ndim) if d not in axes))(x)


class TensorCopy(Op):
    """The identity that returns a fresh copy (never a view) of its input."""

    __props__ = ()

    def make_node(self, x):
        x = as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.array(inputs[0], copy=True)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def L_op(self, inputs, outputs, output_grads):
        return [output_grads[0]]


_tensor_copy = TensorCopy()


def tensor_copy(x, name=None):
    """A copy of ``x`` that does not share memory with it."""
    return _tensor_copy(x, name=name)


def transpose(x, axes=None):
    """Permute the dimensions of ``x`` (reverse them when ``axes`` is None)."""
    from lucent.tensor import elemwise

    x = as_tensor_variable(x)
    out = elemwise.transpose(x, axes)
    ndim = x.type.ndim
    reversed_axes = axes is None or [int(a) % max(ndim, 1) for a in axes] == list(range(ndim - 1, -1, -1))
    if out is not x and x.name and out.name is None and reversed_axes:
        # A full reversal is the transpose proper: name it like NumPy's attribute.
        out.name = x.name + ".T"
    return out


def cast(x, dtype):
    """``x`` converted to ``dtype`` (``'floatX'`` allowed); ``x`` itself if already so.

    Complex to real is refused: which real number is meant (the real part,
    the modulus, ...) must be said explicitly.
    """
    from lucent.tensor import math as lm

    x = as_tensor_variable(x)
    if x.type.dtype in ("complex64", "complex128") and normalize_dtype(dtype) not in ("complex64", "complex128"):
        raise TypeError(
            f"Casting {x} from {x.type.dtype} to {normalize_dtype(dtype)} is ambiguous: use real(), "
            "imag(), angle() or abs() to say which real number is meant"
        )
    return lm.cast(x, dtype)


# --------------------------------------------------------------------------- #
# Array creation (defined in ``creation``, which imports this module first;
# the private helpers are re-exported for code that used them from here)
# --------------------------------------------------------------------------- #
from lucent.tensor.creation import (  # noqa: E402
    ARange,
    Alloc,
    Eye,
    MakeVector,
    _shape_entries,
    _sum_to,
    alloc,
    arange,
    eye,
    fill,
    full,
    full_like,
    identity_like,
    make_vector,
    ones,
    ones_like,
    second,
    specify_shape_like,
    zeros,
    zeros_like,
)


def _switch_op():
    """``switch(cond, ift, iff)``: the element-wise choice, as the ``Elemwise`` op itself.

    Defined here (as in PyTensor) so ``tensor.basic.switch`` and
    ``tensor.math.switch`` are one object.
    """
    from lucent.scalar.basic import switch as scalar_switch
    from lucent.tensor.elemwise import Elemwise

    return Elemwise(scalar_switch)


switch = _switch_op()
from lucent.tensor.rearrange import mgrid, moveaxis, ogrid, stacklists, swapaxes  # noqa: E402
from lucent.tensor.selection import *  # noqa: E402,F401,F403
from lucent.tensor.selection import __all__ as _selection_all  # noqa: E402
from lucent.tensor.diagonal import *  # noqa: E402,F401,F403
from lucent.tensor.diagonal import __all__ as _diagonal_all  # noqa: E402
from lucent.tensor.joining import *  # noqa: E402,F401,F403
from lucent.tensor.joining import __all__ as _joining_all  # noqa: E402
from lucent.tensor.shape import shape_padaxis, shape_padleft, shape_padright  # noqa: E402,F401

def _transfer_to_cpu(var, target):
    """The ``"cpu"`` transfer target: lucent computes on the CPU, so moving
    there only means making ``var`` a tensor (it is returned as is if it is one).
    """
    if target == "cpu":
        return as_tensor_variable(var)
    return None


register_transfer(_transfer_to_cpu)


def _register_vectorize_rules():
    from lucent.graph.replace import _vectorize_node

    @_vectorize_node.register(ScalarFromTensor)
    def _vectorize_scalar_from_tensor(op, node, batch_t):
        """A batch of scalars is a tensor: a batched input passes through unchanged."""
        if batch_t.type.ndim == 0:
            return op.make_node(batch_t)
        return [batch_t]


_register_vectorize_rules()


__all__ = [
    "register_transfer",
    "transfer",
    "ARange",
    "Alloc",
    "EmptyConstantError",
    "Eye",
    "Join",
    "MakeVector",
    "NotScalarConstantError",
    "ScalarFromTensor",
    "TensorCopy",
    "TensorFromScalar",
    "alloc",
    "arange",
    "as_tensor",
    "as_tensor_variable",
    "cast",
    "concatenate",
    "constant",
    "expand_dims",
    "eye",
    "fill",
    "flatten",
    "full",
    "full_like",
    "get_scalar_constant_value",
    "get_underlying_scalar_constant_value",
    "get_vector_length",
    "identity_like",
    "join",
    "make_vector",
    "ones",
    "ones_like",
    "scalar_from_tensor",
    "second",
    "squeeze",
    "stack",
    "switch",
    "tensor_copy",
    "tensor_from_scalar",
    "transpose",
    "value",
    "zeros",
    "zeros_like",
]

__all__ += ["mgrid", "moveaxis", "ogrid", "stacklists", "swapaxes", "matrix_transpose"]
__all__ += [*_selection_all, *_diagonal_all, *_joining_all]
__all__ = list(dict.fromkeys(__all__))
