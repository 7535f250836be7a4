"""Array creation: ops and helpers that make new tensors from shapes and values.

This is the tensor counterpart of NumPy's "array creation routines": a vector
from scalar entries (``MakeVector`` / ``make_vector``), arrays filled with a
value (``Alloc`` / ``alloc``, ``zeros``, ``ones``, ``full``), arrays shaped
like another (``fill`` / ``second``, ``zeros_like``, ``ones_like``,
``full_like``), ranges (``ARange`` / ``arange``) and identity matrices
(``Eye`` / ``eye``, ``identity_like``).

They live apart from ``lucent.tensor.basic`` because none of them is needed
to *convert* values into tensors; ``basic`` re-exports every public name
here, so ``lucent.tensor.basic.zeros`` and ``lucent.tensor.zeros`` keep
working.
"""

from __future__ import annotations

import numpy as np

from lucent.configdefaults import config
from lucent.graph.basic import Apply, Constant, Variable
from lucent.graph.op import Op
from lucent.scalar.dtypes import (
    continuous_dtypes,
    discrete_dtypes,
    integer_dtypes,
    normalize_dtype,
    upcast,
)
from lucent.tensor.basic import (
    NotScalarConstantError,
    _check_int_scalar,
    _disconnected,
    _float_zeros_like,
    _static_int,
    as_tensor_variable,
    cast,
    constant,
    get_scalar_constant_value,
    get_vector_length,
)
from lucent.tensor.type import TensorType


# --------------------------------------------------------------------------- #
# Vectors from scalar entries
# --------------------------------------------------------------------------- #
class MakeVector(Op):
    """A vector from 0-d tensors: ``[a, b, c]`` with symbolic entries (shapes, mostly)."""

    __props__ = ("dtype",)

    def __init__(self, dtype="int64"):
        self.dtype = normalize_dtype(dtype)

    def make_node(self, *inputs):
        converted = []
        for i, x in enumerate(inputs):
            if isinstance(x, Constant) or not isinstance(x, Variable):
                x = as_tensor_variable(x)
                if isinstance(x, Constant) and x.type.dtype != self.dtype and x.type.ndim == 0:
                    cast_value = np.asarray(x.data).astype(self.dtype)
                    if cast_value == x.data:
                        x = constant(cast_value)
            x = as_tensor_variable(x)
            if x.type.ndim != 0:
                raise ValueError(f"MakeVector: entry {i} ({x}) must be a 0-d tensor (a scalar), got type {x.type}")
            if upcast(self.dtype, x.type.dtype) != self.dtype:
                raise TypeError(
                    f"MakeVector{{dtype={self.dtype!r}}}: entry {i} ({x}) of dtype {x.type.dtype} "
                    "would be downcast; cast it explicitly"
                )
            converted.append(x)
        return Apply(self, converted, [TensorType(self.dtype, (len(converted),))()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(inputs, dtype=self.dtype).reshape(len(inputs))

    def infer_shape(self, fgraph, node, input_shapes):
        return [(constant(len(node.inputs), dtype="int64"),)]

    def L_op(self, inputs, outputs, output_grads):
        if self.dtype in discrete_dtypes:
            return [_float_zeros_like(x) for x in inputs]
        gz = output_grads[0]
        grads = []
        for i, x in enumerate(inputs):
            if x.type.dtype in discrete_dtypes:
                grads.append(_float_zeros_like(x))
            else:
                grads.append(cast(gz[i], x.type.dtype))
        return grads


def make_vector(*entries, dtype=None):
    """A vector of the given scalar entries, of their common dtype unless ``dtype`` is given."""
    entries = [as_tensor_variable(e) for e in entries]
    if dtype is None:
        dtype = upcast(*[e.type.dtype for e in entries]) if entries else "int64"
    return MakeVector(dtype)(*entries)


# --------------------------------------------------------------------------- #
# Allocation
# --------------------------------------------------------------------------- #
def _shape_entries(shape):
    """A shape given as an int, a sequence or a symbolic vector, as a list of entries."""
    if isinstance(shape, (int, np.integer)):
        return [int(shape)]
    if isinstance(shape, Variable):
        shape = as_tensor_variable(shape)
        if shape.type.ndim == 0:
            return [shape]
        from lucent.tensor.shape import _vector_entry

        return [_vector_entry(shape, i) for i in range(get_vector_length(shape))]
    if isinstance(shape, np.ndarray):
        return [int(s) for s in shape.reshape(-1)]
    return list(shape)


class Alloc(Op):
    """A new array of the given shape filled with ``value`` (broadcast).

    Length-1 dimensions of the value are broadcast only when its type says
    they have length 1, so that the gradient (a sum over those dimensions)
    is known when the graph is built.
    """

    __props__ = ()
    #: The output's static shape comes from the values of the shape inputs: a clone with
    #: other shape inputs re-makes the node.
    _output_type_depends_on_input_value = True

    def make_node(self, value, *shape):
        value = as_tensor_variable(value)
        entries = [_check_int_scalar(s, "Alloc: each shape entry") for s in shape]
        n = len(entries)
        if value.type.ndim > n:
            raise ValueError(
                f"Alloc: the value {value} has {value.type.ndim} dimensions, more than the "
                f"{n} of the requested shape"
            )
        static = []
        offset = n - value.type.ndim
        for d, s in enumerate(entries):
            length = _static_int(s)
            if length is not None and length < 0:
                raise ValueError(f"Alloc: shape entry {d} is negative ({length})")
            vlen = value.type.shape[d - offset] if d >= offset else None
            if length is None and vlen is not None and vlen != 1:
                length = vlen
            if length is not None and vlen is not None and vlen not in (1, length):
                raise ValueError(
                    f"Alloc static input type and target shape are incompatible: the value {value} with "
                    f"static shape {value.type.shape} cannot be broadcast to length {length} in dimension {d}"
                )
            static.append(length)
        return Apply(self, [value, *entries], [TensorType(value.type.dtype, tuple(static))()])

    def perform(self, node, inputs, output_storage):
        value, *shape = inputs
        shape = tuple(int(s) for s in shape)
        vtype = node.inputs[0].type
        offset = len(shape) - value.ndim
        for d in range(value.ndim):
            vlen, olen = value.shape[d], shape[d + offset]
            if vlen != olen and not (vlen == 1 and vtype.shape[d] == 1):
                raise ValueError(
                    f"Alloc: cannot broadcast a value of shape {value.shape} to shape {shape} "
                    f"(dimension {d} of the value has length {vlen}"
                    + ("; Runtime broadcasting not allowed: a length-1 dimension broadcasts only when "
                       "its type says so, see specify_broadcastable)" if vlen == 1 else ")")
                )
        if any(s < 0 for s in shape):
            raise ValueError(f"Alloc: negative dimensions are not allowed, got shape {shape}")
        out = output_storage[0][0]
        if not (isinstance(out, np.ndarray) and out.shape == shape and out.dtype == value.dtype):
            out = np.empty(shape, dtype=node.outputs[0].type.dtype)
        out[...] = value
        output_storage[0][0] = out

    def do_constant_folding(self, fgraph, node):
        """Fold only where a constant array is as good as the ``Alloc``.

        Not when the result is a graph output (a constant output is copied
        on every call), nor when a client can absorb the broadcast itself
        (element-wise ops, ``DimShuffle``, another ``Alloc``, ``Join``,
        ``Subtensor``, a batched ``Blockwise``: rewrites lift the ``Alloc``
        through them), nor when a client works in place on it (the
        increment ops and BLAS updates write into their first input).
        """
        from lucent.tensor.basic import Join
        from lucent.tensor.blockwise import Blockwise
        from lucent.tensor.elemwise import DimShuffle, Elemwise
        from lucent.tensor.subtensor import AdvancedIncSubtensor, AdvancedIncSubtensor1, IncSubtensor, Subtensor

        clients = fgraph.clients.get(node.outputs[0], []) if fgraph is not None else []
        if not clients:
            return False
        for client, idx in clients:
            if client == "output":
                return False
            op = client.op
            if isinstance(op, (Elemwise, DimShuffle, Alloc, Join, Subtensor)):
                return False
            if isinstance(op, Blockwise) and op.batch_ndim(client):
                return False
            if idx == 0 and (
                isinstance(op, (IncSubtensor, AdvancedIncSubtensor, AdvancedIncSubtensor1))
                or type(op).__name__ in ("Gemv", "Ger")
            ):
                return False
        return True

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(node.inputs[1:])]

    def connection_pattern(self, node):
        return [[True]] + [[False]] * (len(node.inputs) - 1)

    def L_op(self, inputs, outputs, output_grads):
        value = inputs[0]
        rest = [_disconnected() for _ in inputs[1:]]
        if value.type.dtype in discrete_dtypes:
            return [_float_zeros_like(value), *rest]
        return [_sum_to(output_grads[0], value), *rest]


def _sum_to(g, like):
    """Sum ``g`` over the dimensions that were broadcast to make it from ``like``."""
    from lucent.tensor import math as lm

    offset = g.type.ndim - like.type.ndim
    if offset:
        g = lm.sum(g, axis=tuple(range(offset)))
    axes = [d for d in range(like.type.ndim) if like.type.shape[d] == 1 and g.type.shape[d] != 1]
    if axes:
        g = lm.sum(g, axis=tuple(axes), keepdims=True)
        g = specify_shape_like(g, like)
    if g.type.dtype != like.type.dtype:
        g = cast(g, like.type.dtype)
    return g


def specify_shape_like(g, like):
    from lucent.tensor.shape import specify_shape

    return specify_shape(g, tuple(1 if s == 1 else None for s in like.type.shape))


alloc = Alloc()


def zeros(shape, dtype=None):
    """A new array of zeros of the given shape (``dtype`` defaults to floatX)."""
    dtype = config.floatX if dtype is None else dtype
    return alloc(np.zeros((), dtype=normalize_dtype(dtype)), *_shape_entries(shape))


def ones(shape, dtype=None):
    """A new array of ones of the given shape (``dtype`` defaults to floatX)."""
    dtype = config.floatX if dtype is None else dtype
    return alloc(np.ones((), dtype=normalize_dtype(dtype)), *_shape_entries(shape))


def full(shape, fill_value, dtype=None):
    """A new array of ``fill_value`` of the given shape, of the value's dtype by default."""
    value = as_tensor_variable(fill_value)
    if dtype is not None and value.type.dtype != normalize_dtype(dtype):
        value = cast(value, dtype)
    return alloc(value, *_shape_entries(shape))


def _second_op():
    """``value`` broadcast to the shape of ``model``: ``second(model, value)``.

    It is the ``Elemwise`` op itself (PyTensor's ``basic.second`` is one), so
    graphs can be compared with ``node.op == second``.
    """
    from lucent.scalar.basic import second as scalar_second
    from lucent.tensor.elemwise import Elemwise

    return Elemwise(scalar_second)


second = fill = _second_op()


def zeros_like(model, dtype=None, opt=False):
    """Zeros with the shape of ``model`` and its dtype (or ``dtype``)."""
    model = as_tensor_variable(model)
    dtype = model.type.dtype if dtype is None else normalize_dtype(dtype)
    return fill(model, constant(np.zeros((), dtype=dtype)))


def ones_like(model, dtype=None, opt=False):
    """Ones with the shape of ``model`` and its dtype (or ``dtype``)."""
    model = as_tensor_variable(model)
    dtype = model.type.dtype if dtype is None else normalize_dtype(dtype)
    return fill(model, constant(np.ones((), dtype=dtype)))


def full_like(a, fill_value, dtype=None):
    """``fill_value`` with the shape of ``a``; dtype of ``a`` unless given (as NumPy)."""
    a = as_tensor_variable(a)
    dtype = a.type.dtype if dtype is None else normalize_dtype(dtype)
    value = as_tensor_variable(fill_value)
    if isinstance(value, Constant):
        value = constant(np.asarray(value.data).astype(dtype))
    elif value.type.dtype != dtype:
        value = cast(value, dtype)
    return fill(a, value)



# --------------------------------------------------------------------------- #
# Ranges and identity matrices
# --------------------------------------------------------------------------- #
def _arange_length(start, stop, step):
    if step == 0:
        raise ValueError("arange: step must not be zero")
    if all(isinstance(v, (int, np.integer)) for v in (start, stop, step)):
        return max(0, -(-(stop - start) // step))
    return max(0, int(np.ceil((stop - start) / step)))


class ARange(Op):
    """``numpy.arange(start, stop, step)`` with a fixed output dtype."""

    __props__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = normalize_dtype(dtype)

    def make_node(self, start, stop, step):
        inputs = []
        for name, v in (("start", start), ("stop", stop), ("step", step)):
            v = as_tensor_variable(v)
            if v.type.ndim != 0:
                raise TypeError(f"arange: {name} must be a scalar, got {v} of type {v.type}")
            inputs.append(v)
        values = []
        for v in inputs:
            try:
                values.append(get_scalar_constant_value(v).item())
            except NotScalarConstantError:
                values.append(None)
        length = None
        if None not in values:
            length = _arange_length(*values)
        return Apply(self, inputs, [TensorType(self.dtype, (length,))()])

    def perform(self, node, inputs, output_storage):
        start, stop, step = (np.asarray(v).item() for v in inputs)
        if step == 0:
            raise ValueError("arange: step must not be zero")
        output_storage[0][0] = np.arange(start, stop, step, dtype=self.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        from lucent.tensor import math as lm

        length = node.outputs[0].type.shape[0]
        if length is not None:
            return [(constant(length, dtype="int64"),)]
        start, stop, step = node.inputs
        if all(v.type.dtype in integer_dtypes for v in node.inputs):
            # ceil((stop - start) / step) in integer arithmetic
            n = lm.neg(lm.int_div(lm.sub(start, stop), step))
        else:
            n = lm.ceil(lm.true_div(lm.sub(stop, start), step))
        n = lm.maximum(cast(n, "int64"), constant(0, dtype="int64"))
        return [(n,)]

    def connection_pattern(self, node):
        return [[True], [False], [True]]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.tensor import math as lm

        start, stop, step = inputs
        (gz,) = output_grads
        if self.dtype in discrete_dtypes:
            return [_float_zeros_like(start), _disconnected(), _float_zeros_like(step)]
        # out[i] = start + i * step
        g_start = lm.sum(gz)
        index = arange(0, outputs[0].shape[0], dtype=self.dtype)
        g_step = lm.sum(lm.mul(gz, index))
        return [cast(g_start, start.type.dtype) if start.type.dtype in continuous_dtypes else _float_zeros_like(start),
                _disconnected(),
                cast(g_step, step.type.dtype) if step.type.dtype in continuous_dtypes else _float_zeros_like(step)]


def arange(start, stop=None, step=1, dtype=None):
    """Evenly spaced values in ``[start, stop)``, like ``numpy.arange``.

    Without ``dtype``: under ``config.cast_policy == 'custom'`` integer
    bounds give int64 and otherwise the upcast of the bounds' dtypes; under
    ``'numpy+floatX'`` the dtype NumPy's ``arange`` gives for bounds of these
    dtypes, except that float64 becomes ``floatX`` when no bound is float64.
    One op per dtype is shared by all calls.
    """
    if stop is None:
        start, stop = 0, start
    start, stop, step = (as_tensor_variable(v) for v in (start, stop, step))
    if dtype is None:
        dtypes = [v.type.dtype for v in (start, stop, step)]
        if config.cast_policy == "numpy+floatX":
            dtype = np.arange(*(np.array(v, dtype=d) for v, d in zip((0, 1, 1), dtypes))).dtype.name
            if dtype == "float64" and config.floatX == "float32" and "float64" not in dtypes:
                dtype = "float32"
        elif all(d in discrete_dtypes for d in dtypes):
            dtype = "int64" if not any(d == "uint64" for d in dtypes) else "uint64"
        else:
            dtype = upcast(*dtypes)
    dtype = normalize_dtype(dtype)
    op = _arange_ops.get(dtype)
    if op is None:
        op = _arange_ops[dtype] = ARange(dtype)
    return op(start, stop, step)


_arange_ops: dict = {}


class Eye(Op):
    """``numpy.eye(n, m, k)``: ones on the ``k``-th diagonal of an ``n`` by ``m`` matrix."""

    __props__ = ("dtype",)
    #: The output's static shape comes from the values of the shape inputs: a clone with
    #: other shape inputs re-makes the node.
    _output_type_depends_on_input_value = True

    def __init__(self, dtype=None):
        self.dtype = normalize_dtype(config.floatX if dtype is None else dtype)

    def make_node(self, n, m, k):
        n = _check_int_scalar(n, "eye: n")
        m = _check_int_scalar(m, "eye: m")
        k = _check_int_scalar(k, "eye: k")
        return Apply(self, [n, m, k], [TensorType(self.dtype, (_static_int(n), _static_int(m)))()])

    def perform(self, node, inputs, output_storage):
        n, m, k = (int(v) for v in inputs)
        output_storage[0][0] = np.eye(n, m, k, dtype=self.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [(cast(node.inputs[0], "int64"), cast(node.inputs[1], "int64"))]

    def connection_pattern(self, node):
        return [[False], [False], [False]]

    def L_op(self, inputs, outputs, output_grads):
        return [_disconnected() for _ in inputs]


def eye(n, m=None, k=0, dtype=None):
    """Identity-like matrix: ``n`` rows, ``m`` (default ``n``) columns, diagonal ``k``."""
    if m is None:
        m = n
    return Eye(dtype)(n, m, k)


def identity_like(x, dtype=None):
    """An identity matrix with the shape of the matrix ``x``."""
    x = as_tensor_variable(x)
    return eye(x.shape[0], x.shape[1], 0, dtype=dtype or x.type.dtype)


__all__ = [
    "ARange",
    "Alloc",
    "Eye",
    "MakeVector",
    "alloc",
    "arange",
    "eye",
    "fill",
    "full",
    "full_like",
    "identity_like",
    "make_vector",
    "ones",
    "ones_like",
    "second",
    "zeros",
    "zeros_like",
]
