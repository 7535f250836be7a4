"""Scalar types and scalar ops: the element-level vocabulary of lucent.

Every element-wise tensor computation is described once, at the level of a
single element, by a ``ScalarOp``. ``Elemwise`` (in ``lucent.tensor.elemwise``)
maps a scalar op over arrays with broadcasting. Keeping the element rule in
one place means that the dtype rule, the NumPy implementation and the
gradient of, say, ``exp`` are written once and shared by scalars and tensors.

* ``ScalarType(dtype)`` is the type of 0-d NumPy scalars.
* ``ScalarOp.impl`` is a NumPy implementation that also works on whole
  arrays, so ``Elemwise.perform`` can call it once per node instead of once
  per element.
* ``ScalarOp.grad`` is written with scalar ops on scalar variables; Elemwise
  lifts that small scalar graph into a tensor graph, which is how tensor
  gradients are obtained without writing them twice.

The transcendental functions live in ``lucent.scalar.math`` and are
re-exported here so ``lucent.scalar.basic.exp`` works as in PyTensor.
"""

from __future__ import annotations

import builtins
from functools import reduce

import numpy as np

from lucent.configdefaults import config
from lucent.graph.basic import Apply, Constant, Variable
from lucent.graph.op import Op
from lucent.graph.type import Type
from lucent.scalar.dtypes import (
    all_dtypes,
    bool_dtypes,
    complex_dtypes,
    continuous_dtypes,
    discrete_dtypes,
    float_dtypes,
    int_dtypes,
    integer_dtypes,
    normalize_dtype,
    python_scalar_dtype,
    uint_dtypes,
    upcast,
)

_pybool = builtins.bool
_pycomplex = builtins.complex
_TOLERANCES = {"float16": (1e-3, 1e-3), "float32": (1e-5, 1e-4), "complex64": (1e-5, 1e-4)}


# ---------------------------------------------------------------------------
# Types and variables
# ---------------------------------------------------------------------------
class ScalarType(Type):
    """The type of 0-d values of one dtype (run-time values are NumPy scalars).

    Scalars are immutable, so values never alias each other and ``filter``
    always returns a fresh NumPy scalar of exactly this dtype.
    """

    ndim = 0
    shape = ()
    broadcastable = ()

    def __init__(self, dtype):
        if isinstance(dtype, ScalarType):
            dtype = dtype.dtype
        self.dtype = normalize_dtype(dtype)
        self.numpy_dtype = np.dtype(self.dtype)

    def __eq__(self, other):
        return type(self) is type(other) and self.dtype == other.dtype

    def __hash__(self):
        return hash((ScalarType, self.dtype))

    def __str__(self):
        return self.dtype

    def __repr__(self):
        return f"ScalarType({self.dtype})"

    def clone(self, dtype=None, **kwargs):
        return ScalarType(dtype or self.dtype)

    def __call__(self, name=None):
        return self.make_variable(name)

    # --- run-time values -------------------------------------------------
    def filter(self, data, strict=False, allow_downcast=None):
        """Return ``data`` as a NumPy scalar of this dtype, following the casting rules.

        ``strict``: only a NumPy scalar (or 0-d array) of exactly this dtype.
        ``allow_downcast=True``: any cast. ``False``: only casts that cannot
        lose precision (checked on the value for Python numbers). ``None``:
        like ``False`` but a Python float may become a ``floatX`` scalar.
        """
        if isinstance(data, Variable):
            raise TypeError(f"{self!r} expected a value, got the symbolic variable {data}")
        if isinstance(data, np.ndarray):
            if data.ndim != 0:
                raise TypeError(f"{self!r} expected a 0-d value, got an array of shape {data.shape}")
            data = data[()]
        np_type = self.numpy_dtype.type
        if isinstance(data, np.generic) and data.dtype == self.numpy_dtype:
            return data
        if strict:
            raise TypeError(
                f"{self!r} expected a numpy scalar of dtype {self.dtype} in strict mode, "
                f"got {data!r} ({type(data).__name__})"
            )
        if allow_downcast:
            with np.errstate(all="ignore"):
                return np_type(data)
        if isinstance(data, np.generic):
            if upcast(self.dtype, data.dtype.name) == self.dtype:
                return np_type(data)
            raise TypeError(
                f"{self!r} cannot store a value of dtype {data.dtype} without risking loss "
                f"of precision; cast it to {self.dtype} or pass allow_input_downcast=True"
            )
        if not isinstance(data, (_pybool, int, float, _pycomplex)):
            raise TypeError(f"{self!r} cannot convert {data!r} ({type(data).__name__}) to a scalar")
        if allow_downcast is None and isinstance(data, float) and self.dtype == config.floatX:
            return np_type(data)
        with np.errstate(all="ignore"):
            try:
                converted = np_type(data)
            except (OverflowError, ValueError) as e:
                raise TypeError(f"{self!r} cannot store {data!r}: {e}") from None
        same = converted == data or (isinstance(data, float) and np.isnan(data) and np.isnan(converted))
        if not same or (isinstance(data, float) and self.dtype in discrete_dtypes):
            raise TypeError(
                f"{self!r} cannot store accurately value {data!r}, it would be represented "
                f"as {converted!r}. Cast it explicitly or pass allow_input_downcast=True"
            )
        return converted

    def values_eq(self, a, b):
        if np.isnan(a) if np.asarray(a).dtype.kind in "fc" else False:
            return _pybool(np.isnan(b))
        return _pybool(a == b)

    def values_eq_approx(self, a, b, rtol=None, atol=None):
        """Close within dtype-dependent tolerances; NaNs equal each other."""
        if self.dtype not in continuous_dtypes:
            return _pybool(a == b)
        d_atol, d_rtol = _TOLERANCES.get(self.dtype, (1e-8, 1e-5))
        return _pybool(
            np.isclose(a, b, rtol=d_rtol if rtol is None else rtol, atol=d_atol if atol is None else atol, equal_nan=True)
        )

    def may_share_memory(self, a, b):
        """NumPy scalars are immutable values: they never share memory."""
        return False

    def get_shape_info(self, obj):
        return ()

    def get_size(self, shape_info):
        return self.numpy_dtype.itemsize

    # --- symbolic ---------------------------------------------------------
    def upcast(self, *others):
        return upcast(self.dtype, *[o.dtype for o in others])

    def make_variable(self, name=None):
        return ScalarVariable(self, None, name=name)

    def make_constant(self, value, name=None):
        return ScalarConstant(self, value, name=name)


class _scalar_py_operators:
    """Python operators for scalar variables, so gradients read like math."""

    @property
    def shape(self):
        """The shape of a scalar, ``()``, as an empty int64 vector (PyTensor's convention)."""
        from lucent.tensor import basic as tbasic

        return tbasic.constant(np.zeros((0,), dtype="int64"))

    def __abs__(self):
        return abs_(self)

    def __neg__(self):
        return neg(self)

    def __pos__(self):
        return self

    def __invert__(self):
        return invert(self)

    def __add__(self, other):
        return add(self, other)

    def __radd__(self, other):
        return add(other, self)

    def __sub__(self, other):
        return sub(self, other)

    def __rsub__(self, other):
        return sub(other, self)

    def __mul__(self, other):
        return mul(self, other)

    def __rmul__(self, other):
        return mul(other, self)

    def __truediv__(self, other):
        return true_div(self, other)

    def __rtruediv__(self, other):
        return true_div(other, self)

    def __floordiv__(self, other):
        return int_div(self, other)

    def __rfloordiv__(self, other):
        return int_div(other, self)

    def __mod__(self, other):
        return mod(self, other)

    def __rmod__(self, other):
        return mod(other, self)

    def __pow__(self, other):
        return pow(self, other)

    def __rpow__(self, other):
        return pow(other, self)

    def __and__(self, other):
        return and_(self, other)

    def __rand__(self, other):
        return and_(other, self)

    def __or__(self, other):
        return or_(self, other)

    def __ror__(self, other):
        return or_(other, self)

    def __xor__(self, other):
        return xor(self, other)

    def __rxor__(self, other):
        return xor(other, self)

    def __lt__(self, other):
        return lt(self, other)

    def __le__(self, other):
        return le(self, other)

    def __gt__(self, other):
        return gt(self, other)

    def __ge__(self, other):
        return ge(self, other)

    __hash__ = Variable.__hash__

    def __bool__(self):
        raise TypeError("A symbolic scalar has no truth value; use switch() for conditionals")

    @property
    def dtype(self):
        return self.type.dtype

    @property
    def ndim(self):
        return 0

    def zeros_like(self, dtype=None):
        return second(self, constant(np.zeros((), dtype=dtype or self.type.dtype)))

    def ones_like(self, dtype=None):
        return second(self, constant(np.ones((), dtype=dtype or self.type.dtype)))

    def astype(self, dtype):
        return cast(self, dtype)


class ScalarVariable(_scalar_py_operators, Variable):
    """A symbolic scalar (mostly seen inside gradients and fused kernels)."""


class ScalarConstant(_scalar_py_operators, Constant):
    """A scalar with a fixed value, stored as a NumPy scalar."""

    def __str__(self):
        if self.name is not None:
            return self.name
        return str(self.data)


ScalarType.variable_type = ScalarVariable
ScalarType.constant_type = ScalarConstant


def get_scalar_type(dtype) -> ScalarType:
    """The ScalarType of ``dtype`` (one instance per dtype)."""
    dtype = normalize_dtype(dtype)
    t = _scalar_types.get(dtype)
    if t is None:
        t = _scalar_types[dtype] = ScalarType(dtype)
    return t


_scalar_types: dict = {}


def constant(x, name=None, dtype=None) -> ScalarConstant:
    """A ScalarConstant; Python numbers get their weak (smallest exact) dtype."""
    if dtype is None:
        if isinstance(x, (_pybool, int, float, _pycomplex)) and not isinstance(x, np.generic):
            dtype = python_scalar_dtype(x)
        else:
            dtype = np.asarray(x).dtype.name
    t = get_scalar_type(dtype)
    with np.errstate(all="ignore"):
        value = t.numpy_dtype.type(x)
    return ScalarConstant(t, value, name=name)


def as_scalar(x, name=None) -> ScalarVariable:
    """Convert ``x`` (scalar variable, 0-d tensor variable, number) to a scalar variable."""
    if isinstance(x, Apply):
        if len(x.outputs) != 1:
            raise ValueError(f"Cannot convert {x} with several outputs to a scalar")
        x = x.outputs[0]
    if isinstance(x, Variable):
        if isinstance(x.type, ScalarType):
            return x
        if getattr(x.type, "ndim", None) == 0 and hasattr(x.type, "dtype"):
            from lucent.tensor import basic as tbasic

            conv = getattr(tbasic, "scalar_from_tensor", None)
            if conv is not None:
                return conv(x)
        raise TypeError(f"Cannot convert {x} of type {x.type} to a scalar variable")
    if isinstance(x, np.ndarray) and x.ndim != 0:
        raise TypeError(f"Cannot convert an array of shape {x.shape} to a scalar")
    try:
        return constant(x, name=name)
    except (TypeError, ValueError) as e:
        raise TypeError(f"Cannot convert {x!r} to a scalar: {e}") from None


as_scalar_variable = as_scalar

# Constructors: ``lucent.scalar.float64('x')`` makes a float64 scalar variable.
bool = get_scalar_type("bool")
int8, int16, int32, int64 = (get_scalar_type(d) for d in int_dtypes)
uint8, uint16, uint32, uint64 = (get_scalar_type(d) for d in uint_dtypes)
float16, float32, float64 = (get_scalar_type(d) for d in float_dtypes)
complex64, complex128 = (get_scalar_type(d) for d in complex_dtypes)


int_types = (int8, int16, int32, int64)
uint_types = (uint8, uint16, uint32, uint64)
float_types = (float16, float32, float64)
complex_types = (complex64, complex128)
integer_types = int_types + uint_types
discrete_types = (bool, *integer_types)
continuous_types = float_types + complex_types
all_types = discrete_types + continuous_types


class ComplexError(NotImplementedError):
    """An operation (usually a gradient) is not defined for complex numbers."""


def _variables_of(type_):
    """``f('xyz')`` -> three variables of ``type_`` named x, y, z; ``f('x')`` -> one."""

    def make(*names):
        if len(names) == 1 and isinstance(names[0], str):
            names = names[0]
            if len(names) == 1:
                return type_(names)
        return [type_(n) for n in names]

    return make


ints = _variables_of(int64)
floats = _variables_of(float64)
complexs = _variables_of(complex128)
complexs64 = _variables_of(complex64)
complexs128 = _variables_of(complex128)


def float_scalar(name=None):
    return get_scalar_type(config.floatX)(name)


# ---------------------------------------------------------------------------
# Output dtype rules: functions from input ScalarTypes to output ScalarTypes.
# ---------------------------------------------------------------------------
def upcast_out(*types):
    """NumPy's promotion of the input dtypes (weak constants already narrow)."""
    return (get_scalar_type(upcast(*[t.dtype for t in types])),)


def upcast_out_nobool(*types):
    """Like ``upcast_out`` but refuses bool, as NumPy does for ``-`` and ``sign``."""
    out = upcast_out(*types)
    if out[0].dtype == "bool":
        raise TypeError("This operation is not defined for bool inputs (use invert / xor)")
    return out


def upgrade_to_float(*types):
    """Promote, then make integers floating point (small ints to float32).

    ``np.result_type(dtype, float32)`` maps bool/int8/int16/uint8/uint16 to
    float32 and wider integers to float64, which is the rule PyTensor uses
    for transcendental functions of integers.
    """
    dtype = upcast(*[t.dtype for t in types])
    if dtype in discrete_dtypes:
        dtype = upcast(dtype, "float32")
    return (get_scalar_type(dtype),)


def upgrade_to_float_no_complex(*types):
    for t in types:
        if t.dtype in complex_dtypes:
            raise TypeError(f"complex argument not supported: this operation does not take complex inputs (got {t.dtype})")
    return upgrade_to_float(*types)


def true_div_out(*types):
    """Integers divide to float64, as NumPy's ``true_divide`` does."""
    dtype = upcast(*[t.dtype for t in types])
    if dtype in discrete_dtypes:
        dtype = "float64"
    return (get_scalar_type(dtype),)


def int_out(*types):
    dtype = upcast(*[t.dtype for t in types])
    if dtype == "bool":
        dtype = "int8"
    return (get_scalar_type(dtype),)


def same_out(*types):
    return (types[0],)


def bool_out(*types):
    return (bool,)


def discrete_out(*types):
    """Bitwise/logical ops: NumPy promotion, but only bool and integer dtypes."""
    for t in types:
        if t.dtype not in discrete_dtypes:
            raise TypeError(f"Bitwise operations need bool or integer inputs, got {t.dtype}")
    return upcast_out(*types)


# ---------------------------------------------------------------------------
# ScalarOp
# ---------------------------------------------------------------------------
class ScalarOp(Op):
    """An operation on scalars; see the module docstring.

    Subclasses set ``nin`` (``-1`` for variadic), ``nout``, ``name``,
    ``output_types_preference`` (a dtype rule from above), and implement
    ``impl`` and ``grad``.
    """

    __props__ = ()
    nin = -1
    nout = 1
    name = None
    output_types_preference = staticmethod(upcast_out)
    #: Cast the inputs to the output dtype before calling ``impl``: NumPy
    #: would compute ``exp`` of an int8 array in float16, losing precision
    #: that the float32 output type promises.
    compute_in_output_dtype = False

    def __init__(self, output_types_preference=None, name=None):
        # Always an instance attribute (as in PyTensor), so code may replace
        # or delete it per op; the class default remains behind it.
        self.output_types_preference = (
            output_types_preference
            if output_types_preference is not None
            else type(self).output_types_preference
        )
        if name is not None:
            self.name = name

    def __str__(self):
        return self.name or type(self).__name__.lower()

    def output_types(self, types):
        return list(self.output_types_preference(*types))

    def make_node(self, *inputs):
        if self.nin >= 0 and len(inputs) != self.nin:
            raise TypeError(f"{self} takes {self.nin} inputs, got {len(inputs)}: {inputs}")
        inputs = [as_scalar(i) for i in inputs]
        outputs = [t() for t in self.output_types([i.type for i in inputs])]
        if len(outputs) != self.nout:
            raise TypeError(f"{self}: dtype rule gave {len(outputs)} outputs, expected {self.nout}")
        return Apply(self, inputs, outputs)

    def impl(self, *inputs):
        raise NotImplementedError(f"{type(self).__name__}.impl is not implemented")

    def perform(self, node, inputs, output_storage):
        if self.compute_in_output_dtype:
            dtype = node.outputs[0].type.numpy_dtype
            inputs = [np.asarray(i, dtype=dtype) for i in inputs]
        with np.errstate(all="ignore"):
            results = self.impl(*inputs)
        if self.nout == 1:
            results = [results]
        for storage, out, value in zip(output_storage, node.outputs, results):
            storage[0] = out.type.numpy_dtype.type(value)

    def infer_shape(self, fgraph, node, input_shapes):
        return [() for _ in node.outputs]

    def L_op(self, inputs, outputs, output_grads):
        return self.grad(inputs, output_grads)

    def grad(self, inputs, output_grads):
        raise NotImplementedError(f"Scalar op {self} does not implement grad")


class UnaryScalarOp(ScalarOp):
    nin = 1


class BinaryScalarOp(ScalarOp):
    nin = 2


def _zero_like_float(x):
    """A zero gradient for ``x``: of its dtype if float, else of ``floatX``."""
    dtype = x.type.dtype if x.type.dtype in continuous_dtypes else config.floatX
    return constant(np.zeros((), dtype=dtype))


def _discrete_grads(op, inputs, outputs):
    """Zero gradients when the output is discrete; None when they must be computed."""
    if all(o.type.dtype in discrete_dtypes for o in outputs):
        return [_zero_like_float(i) for i in inputs]
    return None


# Arithmetic, comparisons, logic and selection (add, lt, switch, cast, ...).
from lucent.scalar.arith import *  # noqa: E402,F401,F403
from lucent.scalar.arith import _cast_ops  # noqa: E402,F401

# The element-wise functions of real analysis (exp, log, sin, ...).
from lucent.scalar.math import *  # noqa: E402,F401,F403
from lucent.scalar.math import abs_, floor, log  # noqa: E402,F401
from lucent.scalar import math as _smath  # noqa: E402
from lucent.scalar.composite import Composite  # noqa: E402,F401

# How Python numbers are given a dtype (config.cast_policy).
from lucent.scalar.autocast import (  # noqa: E402,F401
    NumpyAutocaster,
    autocast_float,
    autocast_float_as,
    autocast_int,
    convert,
)


__all__ = [
    "ScalarType", "ScalarVariable", "ScalarConstant", "ScalarOp", "UnaryScalarOp",
    "BinaryScalarOp", "LogicalComparison", "as_scalar", "constant", "get_scalar_type",
    "upcast", "upcast_out", "upcast_out_nobool", "upgrade_to_float", "upgrade_to_float_no_complex",
    "true_div_out", "int_out", "same_out", "bool_out", "discrete_out",
    "Add", "Sub", "Mul", "TrueDiv", "IntDiv", "Mod", "Pow", "Neg", "Maximum", "Minimum",
    "LT", "LE", "GT", "GE", "EQ", "NEQ", "AND", "OR", "XOR", "Invert", "Switch", "Second",
    "Identity", "Cast", "Clip", "cast",
    "add", "sub", "mul", "true_div", "int_div", "floor_div", "mod", "pow", "neg", "maximum",
    "minimum", "lt", "le", "gt", "ge", "eq", "neq", "and_", "or_", "xor", "invert", "switch",
    "second", "identity", "clip", "IsNan", "IsInf", "isnan", "isinf",
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128", "float_scalar",
    "int_types", "uint_types", "float_types", "complex_types", "integer_types", "discrete_types",
    "continuous_types", "all_types", "ComplexError", "ints", "floats", "complexs", "complexs64",
    "complexs128",
    "all_dtypes", "discrete_dtypes", "continuous_dtypes", "float_dtypes", "integer_dtypes",
    "int_dtypes", "uint_dtypes", "complex_dtypes", "bool_dtypes",
    "NumpyAutocaster", "autocast_int", "autocast_float", "autocast_float_as", "convert",
    *_smath.__all__,
]
