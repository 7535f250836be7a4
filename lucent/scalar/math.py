"""Element-wise functions of real analysis as scalar ops (exp, log, sin, ...).

Split from ``lucent.scalar.basic`` (which re-exports everything here) to keep
each file readable. Each op states its NumPy implementation, its dtype rule
and its derivative; the derivative is built from scalar ops, so ``Elemwise``
can turn it into a tensor expression.
"""

from __future__ import annotations

import numpy as np

from lucent.scalar.basic import (
    UnaryScalarOp,
    _discrete_grads,
    _zero_like_float,
    constant,
    continuous_dtypes,
    neg,
    same_out,
    sub,
    switch,
    true_div,
    upcast_out,
    upcast_out_nobool,
    upgrade_to_float,
    upgrade_to_float_no_complex,
)
from lucent.scalar import basic as _b


def _c(value, like):
    """A constant of ``like``'s dtype, so gradients of float32 stay float32."""
    return constant(np.asarray(value, dtype=like.type.dtype))


class FloatUnaryOp(UnaryScalarOp):
    """A differentiable function of one real argument, float-valued.

    Integer inputs are upgraded to floats (small ints to float32) and are
    computed in the output dtype. Subclasses give ``ufunc`` (or ``impl``)
    and ``derivative(x, out)``; the gradient is ``gz * derivative``.
    """

    output_types_preference = staticmethod(upgrade_to_float_no_complex)
    compute_in_output_dtype = True
    ufunc = None

    def impl(self, x):
        return type(self).ufunc(x)

    def derivative(self, x, out):
        raise NotImplementedError

    def L_op(self, inputs, outputs, output_grads):
        (x,), (out,), (gz,) = inputs, outputs, output_grads
        if x.type.dtype in _b.complex_dtypes:
            raise NotImplementedError(
                f"the gradient of {self.name} is not implemented for complex inputs (got {x.type.dtype})"
            )
        if x.type.dtype not in continuous_dtypes:
            return [_zero_like_float(x)]
        return [gz * self.derivative(x, out)]


class ComplexUnaryOp(FloatUnaryOp):
    """A ``FloatUnaryOp`` NumPy also defines on complex numbers (complex in, same complex out).

    As in PyTensor, its gradient is only defined for real inputs.
    """

    output_types_preference = staticmethod(upgrade_to_float)


class Exp(ComplexUnaryOp):
    name = "exp"
    ufunc = np.exp

    def derivative(self, x, out):
        return out


class Exp2(ComplexUnaryOp):
    name = "exp2"
    ufunc = np.exp2

    def derivative(self, x, out):
        return out * _c(np.log(2.0), out)


class Expm1(ComplexUnaryOp):
    name = "expm1"
    ufunc = np.expm1

    def derivative(self, x, out):
        return out + _c(1, out)


class Log(ComplexUnaryOp):
    name = "log"
    ufunc = np.log

    def derivative(self, x, out):
        return reciprocal(x)


class Log2(ComplexUnaryOp):
    name = "log2"
    ufunc = np.log2

    def derivative(self, x, out):
        return reciprocal(x * _c(np.log(2.0), x))


class Log10(ComplexUnaryOp):
    name = "log10"
    ufunc = np.log10

    def derivative(self, x, out):
        return reciprocal(x * _c(np.log(10.0), x))


class Log1p(ComplexUnaryOp):
    name = "log1p"
    ufunc = np.log1p

    def derivative(self, x, out):
        return reciprocal(x + _c(1, x))


class Sqrt(ComplexUnaryOp):
    name = "sqrt"
    ufunc = np.sqrt

    def derivative(self, x, out):
        return _c(0.5, out) / out


class Reciprocal(ComplexUnaryOp):
    name = "reciprocal"
    ufunc = np.reciprocal

    def derivative(self, x, out):
        return neg(out * out)


class Sin(ComplexUnaryOp):
    name = "sin"
    ufunc = np.sin

    def derivative(self, x, out):
        return cos(x)


class Cos(ComplexUnaryOp):
    name = "cos"
    ufunc = np.cos

    def derivative(self, x, out):
        return neg(sin(x))


class Tan(ComplexUnaryOp):
    name = "tan"
    ufunc = np.tan

    def derivative(self, x, out):
        return _c(1, out) + out * out


class Tanh(ComplexUnaryOp):
    name = "tanh"
    ufunc = np.tanh

    def derivative(self, x, out):
        return _c(1, out) - out * out


class ArcTan(ComplexUnaryOp):
    name = "arctan"
    ufunc = np.arctan

    def derivative(self, x, out):
        return reciprocal(_c(1, x) + x * x)


class ArcSin(ComplexUnaryOp):
    name = "arcsin"
    ufunc = np.arcsin

    def derivative(self, x, out):
        return reciprocal(sqrt(_c(1, x) - x * x))


class ArcCos(ComplexUnaryOp):
    name = "arccos"
    ufunc = np.arccos

    def derivative(self, x, out):
        return neg(reciprocal(sqrt(_c(1, x) - x * x)))


class Sinh(ComplexUnaryOp):
    name = "sinh"
    ufunc = np.sinh

    def derivative(self, x, out):
        return cosh(x)


class Cosh(ComplexUnaryOp):
    name = "cosh"
    ufunc = np.cosh

    def derivative(self, x, out):
        return sinh(x)


class ArcSinh(ComplexUnaryOp):
    name = "arcsinh"
    ufunc = np.arcsinh

    def derivative(self, x, out):
        return reciprocal(sqrt(x * x + _c(1, x)))


class ArcCosh(ComplexUnaryOp):
    name = "arccosh"
    ufunc = np.arccosh

    def derivative(self, x, out):
        return reciprocal(sqrt(x * x - _c(1, x)))


class ArcTanh(ComplexUnaryOp):
    name = "arctanh"
    ufunc = np.arctanh

    def derivative(self, x, out):
        return reciprocal(_c(1, x) - x * x)


class ArcTan2(_b.BinaryScalarOp):
    """``arctan2(y, x)``: the angle of the point ``(x, y)``, in ``[-pi, pi]``."""

    name = "arctan2"
    output_types_preference = staticmethod(upgrade_to_float_no_complex)
    compute_in_output_dtype = True

    def impl(self, y, x):
        return np.arctan2(y, x)

    def L_op(self, inputs, outputs, output_grads):
        (y, x), (gz,) = inputs, output_grads
        if outputs[0].type.dtype not in continuous_dtypes:
            return [_zero_like_float(y), _zero_like_float(x)]
        r2 = x * x + y * y
        gy = gz * x / r2 if y.type.dtype in continuous_dtypes else _zero_like_float(y)
        gx = neg(gz) * y / r2 if x.type.dtype in continuous_dtypes else _zero_like_float(x)
        return [gy, gx]


class Sigmoid(FloatUnaryOp):
    """``1 / (1 + exp(-x))`` computed without overflow for large ``|x|``."""

    name = "sigmoid"

    def impl(self, x):
        x = np.asarray(x)
        if x.dtype.kind not in "fc":
            x = x.astype("float64")
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)

    def derivative(self, x, out):
        return out * (_c(1, out) - out)


class Softplus(FloatUnaryOp):
    """``log(1 + exp(x))`` via ``logaddexp(0, x)``: no overflow, accurate for x << 0."""

    name = "softplus"

    def impl(self, x):
        x = np.asarray(x)
        if x.dtype.kind not in "fc":
            x = x.astype("float64")
        return np.logaddexp(np.zeros((), dtype=x.dtype), x)

    def derivative(self, x, out):
        return sigmoid(x)


class _Piecewise(UnaryScalarOp):
    """Piecewise-constant functions: the gradient is zero wherever it exists."""

    ufunc = None

    def impl(self, x):
        return type(self).ufunc(x)

    def L_op(self, inputs, outputs, output_grads):
        return [_zero_like_float(inputs[0])]


class Floor(_Piecewise):
    name = "floor"
    ufunc = np.floor
    output_types_preference = staticmethod(upgrade_to_float_no_complex)
    compute_in_output_dtype = True


class Ceil(_Piecewise):
    name = "ceil"
    ufunc = np.ceil
    output_types_preference = staticmethod(upgrade_to_float_no_complex)
    compute_in_output_dtype = True


class RoundHalfToEven(_Piecewise):
    """Round to nearest, ties to even (``np.round``); integers are unchanged."""

    name = "round_half_to_even"
    ufunc = np.round
    output_types_preference = staticmethod(same_out)

    def __str__(self):
        return "roundhalftoeven"


class Trunc(_Piecewise):
    """Round towards zero (``np.trunc``); integers become floats, as ``floor`` does."""

    name = "trunc"
    ufunc = np.trunc
    output_types_preference = staticmethod(upgrade_to_float_no_complex)
    compute_in_output_dtype = True


class RoundHalfAwayFromZero(_Piecewise):
    """Round to nearest, ties away from zero (C's ``round``); integers are unchanged.

    Computed as ``trunc(x)`` plus a signed step when the dropped fraction is
    at least one half: exact for every float, unlike ``floor(x + 0.5)``,
    which rounds ``0.49999999999999994`` up.
    """

    name = "round_half_away_from_zero"
    output_types_preference = staticmethod(same_out)

    def impl(self, x):
        if np.asarray(x).dtype.kind not in "fc":
            return x
        t = np.trunc(x)
        frac = np.abs(np.asarray(x) - t)
        return np.where(frac >= 0.5, t + np.sign(x), t).astype(np.asarray(x).dtype, copy=False)

    def __str__(self):
        return "roundhalfawayfromzero"


class Sign(_Piecewise):
    name = "sign"
    ufunc = np.sign
    output_types_preference = staticmethod(upcast_out_nobool)


class Sqr(UnaryScalarOp):
    """``x * x`` keeping the input dtype."""

    name = "sqr"
    output_types_preference = staticmethod(upcast_out)

    def impl(self, x):
        return np.multiply(x, x)

    def L_op(self, inputs, outputs, output_grads):
        zeros = _discrete_grads(self, inputs, outputs)
        if zeros is not None:
            return zeros
        (x,), (gz,) = inputs, output_grads
        return [gz * _c(2, x) * x]


def _abs_out(*types):
    """``abs`` keeps the dtype, except that of a complex number, which is its part's float."""
    part = {"complex64": "float32", "complex128": "float64"}.get(types[0].dtype)
    return (_b.get_scalar_type(part),) if part else same_out(*types)


class Abs(UnaryScalarOp):
    name = "abs"
    output_types_preference = staticmethod(_abs_out)

    def impl(self, x):
        return np.abs(x)

    def L_op(self, inputs, outputs, output_grads):
        zeros = _discrete_grads(self, inputs, outputs)
        if zeros is not None:
            return zeros
        (x,), (gz,) = inputs, output_grads
        return [gz * sign(x)]


exp = Exp(name="exp")
exp2 = Exp2(name="exp2")
expm1 = Expm1(name="expm1")
log = Log(name="log")
log2 = Log2(name="log2")
log10 = Log10(name="log10")
log1p = Log1p(name="log1p")
sqrt = Sqrt(name="sqrt")
sqr = Sqr(name="sqr")
reciprocal = Reciprocal(name="reciprocal")
sin = Sin(name="sin")
cos = Cos(name="cos")
tan = Tan(name="tan")
tanh = Tanh(name="tanh")
arctan = ArcTan(name="arctan")
arcsin = ArcSin(name="arcsin")
arccos = ArcCos(name="arccos")
arctan2 = ArcTan2(name="arctan2")
sinh = Sinh(name="sinh")
cosh = Cosh(name="cosh")
arcsinh = ArcSinh(name="arcsinh")
arccosh = ArcCosh(name="arccosh")
arctanh = ArcTanh(name="arctanh")
trunc = Trunc(name="trunc")
round_half_away_from_zero = RoundHalfAwayFromZero(name="round_half_away_from_zero")
sigmoid = Sigmoid(name="sigmoid")
softplus = Softplus(name="softplus")
floor = Floor(name="floor")
ceil = Ceil(name="ceil")
round_half_to_even = RoundHalfToEven(name="round_half_to_even")
sign = Sign(name="sign")
abs_ = Abs(name="abs")
abs = abs_  # noqa: A001 - PyTensor's name

__all__ = [
    "FloatUnaryOp", "Exp", "Exp2", "Expm1", "Log", "Log2", "Log10", "Log1p", "Sqrt", "Sqr",
    "Reciprocal", "Sin", "Cos", "Tan", "Tanh", "ArcTan", "Sigmoid", "Softplus", "Floor", "Ceil",
    "RoundHalfToEven", "Sign", "Abs", "ArcSin", "ArcCos", "ArcTan2", "Sinh", "Cosh", "ArcSinh",
    "ArcCosh", "ArcTanh", "Trunc", "RoundHalfAwayFromZero",
    "arcsin", "arccos", "arctan2", "sinh", "cosh", "arcsinh", "arccosh", "arctanh", "trunc",
    "round_half_away_from_zero",
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "sqr", "reciprocal", "sin",
    "cos", "tan", "tanh", "arctan", "sigmoid", "softplus", "floor", "ceil", "round_half_to_even",
    "sign", "abs_", "abs",
]


# PyTensor keeps the special functions of statistics in ``scalar.math`` too.
from lucent.scalar.special import *  # noqa: E402,F401,F403
from lucent.scalar import special as _special  # noqa: E402
from lucent.scalar.complex import *  # noqa: E402,F401,F403
from lucent.scalar import complex as _complex  # noqa: E402

from lucent.scalar.series_grad import _make_scalar_loop, betainc_grad, hyp2f1_grad  # noqa: E402,F401
from lucent.scalar.series_grad import gammainc_grad, gammaincc_grad  # noqa: E402,F401
from lucent.scalar.loop import ScalarLoop  # noqa: E402,F401

__all__ += _special.__all__ + _complex.__all__ + ["betainc_grad", "hyp2f1_grad", "gammainc_grad", "gammaincc_grad"]
