"""Arithmetic, comparison, logical and selection scalar ops (``add``, ``lt``, ``switch``, ...).

Split from ``lucent.scalar.basic``, which re-exports everything here; the
op base classes and dtype rules stay there.
"""

from __future__ import annotations

from functools import reduce

import numpy as np

from lucent.scalar.basic import (
    BinaryScalarOp,
    ScalarOp,
    ScalarType,
    UnaryScalarOp,
    _discrete_grads,
    _zero_like_float,
    as_scalar,
    bool_out,
    constant,
    continuous_dtypes,
    discrete_dtypes,
    discrete_out,
    get_scalar_type,
    int_out,
    normalize_dtype,
    same_out,
    true_div_out,
    upcast_out,
    upcast_out_nobool,
)


def floor(x):
    from lucent.scalar.math import floor as _floor

    return _floor(x)


def log(x):
    from lucent.scalar.math import log as _log

    return _log(x)


class LogicalComparison(BinaryScalarOp):
    """Comparisons: bool output, so gradients are zero."""

    output_types_preference = staticmethod(bool_out)

    def L_op(self, inputs, outputs, output_grads):
        # Zeros shaped like each input (``second(x, 0)``), not bare constants:
        # the gradient graph keeps its inputs, as PyTensor's does.
        from lucent.configdefaults import config

        return [i.zeros_like(dtype=config.floatX) for i in inputs]


class _NumpyComparison(LogicalComparison):
    ufunc = None

    def impl(self, x, y):
        return type(self).ufunc(x, y)


class LT(_NumpyComparison):
    name = "lt"
    ufunc = np.less


class LE(_NumpyComparison):
    name = "le"
    ufunc = np.less_equal


class GT(_NumpyComparison):
    name = "gt"
    ufunc = np.greater


class GE(_NumpyComparison):
    name = "ge"
    ufunc = np.greater_equal


class EQ(_NumpyComparison):
    name = "eq"
    ufunc = np.equal


class NEQ(_NumpyComparison):
    name = "neq"
    ufunc = np.not_equal


class _FloatPredicate(UnaryScalarOp):
    """A bool-valued test of one value (``isnan``, ``isinf``); no gradient.

    Defined for every dtype: integers and bools are never NaN nor infinite.
    """

    output_types_preference = staticmethod(bool_out)
    ufunc = None

    def impl(self, x):
        return type(self).ufunc(x)

    def L_op(self, inputs, outputs, output_grads):
        return [_zero_like_float(inputs[0])]


class IsNan(_FloatPredicate):
    name = "isnan"
    ufunc = np.isnan


class IsInf(_FloatPredicate):
    name = "isinf"
    ufunc = np.isinf


class _Bitwise(ScalarOp):
    """Logical/bitwise ops on bool and integer scalars; no gradient (discrete)."""

    output_types_preference = staticmethod(discrete_out)
    ufunc = None

    def impl(self, *inputs):
        return reduce(type(self).ufunc, inputs) if len(inputs) > 1 else type(self).ufunc(*inputs)

    def L_op(self, inputs, outputs, output_grads):
        return [_zero_like_float(i) for i in inputs]


class AND(_Bitwise):
    name = "and_"
    ufunc = np.bitwise_and

    def __str__(self):
        return "and"


class OR(_Bitwise):
    name = "or_"
    ufunc = np.bitwise_or

    def __str__(self):
        return "or"


class XOR(_Bitwise):
    name = "xor"
    ufunc = np.bitwise_xor


class Invert(_Bitwise):
    nin = 1
    name = "invert"
    ufunc = np.invert


# --- arithmetic -------------------------------------------------------------
class Add(ScalarOp):
    """Variadic sum ``a + b + ...``."""

    name = "add"

    def impl(self, *inputs):
        return reduce(np.add, inputs)

    def L_op(self, inputs, outputs, output_grads):
        zeros = _discrete_grads(self, inputs, outputs)
        if zeros is not None:
            return zeros
        (gz,) = output_grads
        return [gz for _ in inputs]


class Mul(ScalarOp):
    """Variadic product ``a * b * ...``."""

    name = "mul"

    def impl(self, *inputs):
        return reduce(np.multiply, inputs)

    def L_op(self, inputs, outputs, output_grads):
        zeros = _discrete_grads(self, inputs, outputs)
        if zeros is not None:
            return zeros
        (gz,) = output_grads
        grads = []
        for i in range(len(inputs)):
            others = [x for j, x in enumerate(inputs) if j != i]
            grads.append(mul(gz, *others) if others else gz)
        return grads


class Sub(BinaryScalarOp):
    name = "sub"
    output_types_preference = staticmethod(upcast_out_nobool)

    def impl(self, x, y):
        return np.subtract(x, y)

    def L_op(self, inputs, outputs, output_grads):
        zeros = _discrete_grads(self, inputs, outputs)
        if zeros is not None:
            return zeros
        (gz,) = output_grads
        return [gz, neg(gz)]


class TrueDiv(BinaryScalarOp):
    name = "true_div"
    output_types_preference = staticmethod(true_div_out)
    compute_in_output_dtype = True

    def impl(self, x, y):
        return np.true_divide(x, y)

    def L_op(self, inputs, outputs, output_grads):
        (x, y), (gz,) = inputs, output_grads
        gx = gz / y if x.type.dtype in continuous_dtypes else _zero_like_float(x)
        gy = neg(gz) * outputs[0] / y if y.type.dtype in continuous_dtypes else _zero_like_float(y)
        return [gx, gy]


class IntDiv(BinaryScalarOp):
    """Floor division (``//``), NumPy semantics: rounds towards minus infinity."""

    name = "int_div"
    output_types_preference = staticmethod(int_out)

    def impl(self, x, y):
        return np.floor_divide(x, y)

    def L_op(self, inputs, outputs, output_grads):
        # Piecewise constant: the gradient is zero where it exists.
        return [_zero_like_float(i) for i in inputs]


class Mod(BinaryScalarOp):
    """Remainder with the sign of the divisor, as NumPy's ``mod``."""

    name = "mod"

    @staticmethod
    def output_types_preference(*types):
        if any(t.dtype in ("complex64", "complex128") for t in types):
            from lucent.scalar.basic import ComplexError

            raise ComplexError("mod is not defined for complex numbers")
        return int_out(*types)

    def impl(self, x, y):
        return np.mod(x, y)

    def L_op(self, inputs, outputs, output_grads):
        zeros = _discrete_grads(self, inputs, outputs)
        if zeros is not None:
            return zeros
        (x, y), (gz,) = inputs, output_grads
        # x mod y = x - y * floor(x / y)
        return [gz, neg(gz) * floor(x / y)]


class Pow(BinaryScalarOp):
    name = "pow"

    def impl(self, x, y):
        return np.power(x, y)

    def L_op(self, inputs, outputs, output_grads):
        zeros = _discrete_grads(self, inputs, outputs)
        if zeros is not None:
            return zeros
        (x, y), (gz,) = inputs, output_grads
        gx = gz * y * pow(x, y - 1)
        if y.type.dtype in discrete_dtypes:
            gy = _zero_like_float(y)
        else:
            # d/dy x**y = x**y log x; defined as 0 where x == 0 (and y > 0).
            gy = gz * switch(eq(x, 0), 0, outputs[0] * log(x))
        return [gx, gy]


class Neg(UnaryScalarOp):
    name = "neg"
    output_types_preference = staticmethod(upcast_out_nobool)

    def impl(self, x):
        return np.negative(x)

    def L_op(self, inputs, outputs, output_grads):
        zeros = _discrete_grads(self, inputs, outputs)
        return zeros if zeros is not None else [neg(output_grads[0])]


class Maximum(BinaryScalarOp):
    """Element-wise maximum; NaN wins, as in NumPy."""

    name = "maximum"

    def impl(self, x, y):
        return np.maximum(x, y)

    def L_op(self, inputs, outputs, output_grads):
        zeros = _discrete_grads(self, inputs, outputs)
        if zeros is not None:
            return zeros
        (x, y), (gz,) = inputs, output_grads
        # Ties send the gradient to the first input only, so the sum is right.
        gx = switch(ge(x, y), gz, 0)
        return [gx, gz - gx]


class Minimum(BinaryScalarOp):
    name = "minimum"

    def impl(self, x, y):
        return np.minimum(x, y)

    def L_op(self, inputs, outputs, output_grads):
        zeros = _discrete_grads(self, inputs, outputs)
        if zeros is not None:
            return zeros
        (x, y), (gz,) = inputs, output_grads
        gx = switch(le(x, y), gz, 0)
        return [gx, gz - gx]


class Switch(ScalarOp):
    """``switch(cond, a, b)``: ``a`` where ``cond`` is true, else ``b``."""

    nin = 3
    name = "switch"

    def output_types(self, types):
        return list(upcast_out(*types[1:]))

    def impl(self, cond, a, b):
        return np.where(cond, a, b)

    def L_op(self, inputs, outputs, output_grads):
        (c, a, b), (gz,) = inputs, output_grads
        if outputs[0].type.dtype in discrete_dtypes:
            return [_zero_like_float(c), _zero_like_float(a), _zero_like_float(b)]
        zero = constant(np.zeros((), dtype=gz.type.dtype))
        return [_zero_like_float(c), switch(c, gz, zero), switch(c, zero, gz)]


class Second(BinaryScalarOp):
    """``second(a, b) = b`` (used to give ``b`` the broadcast shape of ``a``)."""

    name = "second"

    def output_types(self, types):
        return [types[1]]

    def impl(self, x, y):
        return np.broadcast_to(y, np.broadcast_shapes(np.shape(x), np.shape(y)))

    def L_op(self, inputs, outputs, output_grads):
        # Only the shape of ``x`` is used: its values are not connected to the
        # output (a zero there would leave ``0 * ...`` terms, NaN-prone, in
        # higher derivatives).
        from lucent.gradient import disconnected_type

        (x, y), (gz,) = inputs, output_grads
        gy = gz if y.type.dtype in continuous_dtypes else _zero_like_float(y)
        return [disconnected_type(), gy]


class Identity(UnaryScalarOp):
    name = "identity"
    output_types_preference = staticmethod(same_out)

    def impl(self, x):
        return x

    def L_op(self, inputs, outputs, output_grads):
        zeros = _discrete_grads(self, inputs, outputs)
        return zeros if zeros is not None else [output_grads[0]]


class Cast(UnaryScalarOp):
    """Convert to ``o_type``'s dtype (C-style: floats to ints truncate)."""

    __props__ = ("o_type",)

    def __init__(self, o_type, name=None):
        if not isinstance(o_type, ScalarType):
            o_type = get_scalar_type(o_type)
        self.o_type = o_type
        self.name = name or f"convert_to_{o_type.dtype}"

    def __str__(self):
        return f"Cast{{{self.o_type.dtype}}}"

    def output_types(self, types):
        return [self.o_type]

    def impl(self, x):
        with np.errstate(all="ignore"):
            return np.asarray(x).astype(self.o_type.dtype)

    def L_op(self, inputs, outputs, output_grads):
        (x,), (gz,) = inputs, output_grads
        if x.type.dtype in continuous_dtypes and self.o_type.dtype in continuous_dtypes:
            return [cast(gz, x.type.dtype)]
        return [_zero_like_float(x)]


_cast_ops: dict = {}


def cast(x, dtype):
    """Cast a scalar to ``dtype`` (no op when it already has that dtype)."""
    x = as_scalar(x)
    dtype = normalize_dtype(dtype)
    if x.type.dtype == dtype:
        return x
    op = _cast_ops.get(dtype)
    if op is None:
        op = _cast_ops[dtype] = Cast(get_scalar_type(dtype))
    return op(x)


class Clip(ScalarOp):
    """``clip(x, lo, hi)``; the gradient flows to ``x`` inside ``[lo, hi]`` and to the bound outside."""

    nin = 3
    name = "clip"

    @staticmethod
    def output_types_preference(*types):
        """The promoted dtype; complex numbers have no order to clip in (as in PyTensor)."""
        for t in types:
            if t.dtype.startswith("complex"):
                raise TypeError(f"complex argument not supported: clip needs real inputs (got {t.dtype})")
        return upcast_out(*types)

    def impl(self, x, lo, hi):
        # Tested in this order, as PyTensor does: when lo > hi, values below
        # lo give lo and the others hi (np.clip would give hi everywhere).
        return np.where(np.less(x, lo), lo, np.where(np.greater(x, hi), hi, x))

    def L_op(self, inputs, outputs, output_grads):
        zeros = _discrete_grads(self, inputs, outputs)
        if zeros is not None:
            return zeros
        (x, lo, hi), (gz,) = inputs, output_grads
        zero = constant(np.zeros((), dtype=gz.type.dtype))
        gx = switch(and_(ge(x, lo), le(x, hi)), gz, zero)
        glo = switch(lt(x, lo), gz, zero)
        ghi = switch(gt(x, hi), gz, zero)
        out = [gx, glo, ghi]
        return [g if i.type.dtype in continuous_dtypes else _zero_like_float(i) for g, i in zip(out, inputs)]


# Singletons. PyTensor names: ``add``, ``true_div``, ...
add = Add(name="add")
sub = Sub(name="sub")
mul = Mul(name="mul")
true_div = TrueDiv(name="true_div")
int_div = IntDiv(name="int_div")
floor_div = int_div
mod = Mod(name="mod")
pow = Pow(name="pow")
neg = Neg(name="neg")
maximum = Maximum(name="maximum")
minimum = Minimum(name="minimum")
lt = LT(name="lt")
le = LE(name="le")
gt = GT(name="gt")
ge = GE(name="ge")
eq = EQ(name="eq")
neq = NEQ(name="neq")
and_ = AND(name="and_")
or_ = OR(name="or_")
xor = XOR(name="xor")
invert = Invert(name="invert")
switch = Switch(name="switch")
second = Second(name="second")
identity = Identity(name="identity")
clip = Clip(name="clip")
isnan = IsNan(name="isnan")
isinf = IsInf(name="isinf")


__all__ = [
    "LogicalComparison", "Add", "Sub", "Mul", "TrueDiv", "IntDiv", "Mod", "Pow", "Neg", "Maximum",
    "Minimum", "LT", "LE", "GT", "GE", "EQ", "NEQ", "AND", "OR", "XOR", "Invert", "Switch", "Second",
    "Identity", "Cast", "Clip", "cast",
    "add", "sub", "mul", "true_div", "int_div", "floor_div", "mod", "pow", "neg", "maximum",
    "minimum", "lt", "le", "gt", "ge", "eq", "neq", "and_", "or_", "xor", "invert", "switch",
    "second", "identity", "clip", "IsNan", "IsInf", "isnan", "isinf",
]
