"""Tensor math: element-wise functions, reductions and products.

Element-wise functions are ``Elemwise`` ops over the scalar ops of
``lucent.scalar``; they accept variables, arrays and Python numbers (Python
numbers are *weak*: ``fvector + 1.5`` stays float32). Reductions are
``CAReduce`` ops followed by a ``DimShuffle`` when ``keepdims`` is asked for.
``Dot`` and ``MatMul`` follow ``numpy.dot`` and ``numpy.matmul``.
"""

from __future__ import annotations

import builtins

import numpy as np

from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.scalar import basic as ps
from lucent.scalar.dtypes import continuous_dtypes, discrete_dtypes, normalize_dtype, upcast
from lucent.tensor.basic import as_tensor_variable, constant
from lucent.tensor.elemwise import (
    DimShuffle,
    Elemwise,
    _fit_grad,
    _pad_left,
    broadcast_static_shape,
)
from lucent.tensor.reduction import All, Any, CAReduce, Max, Min, Prod, Sum, _normalize_axes
from lucent.tensor.type import TensorType, _allclose  # noqa: F401  (_allclose: tests compare with it)

# --- element-wise -------------------------------------------------------------
add = Elemwise(ps.add)
sub = Elemwise(ps.sub)
mul = Elemwise(ps.mul)
true_div = Elemwise(ps.true_div)
int_div = Elemwise(ps.int_div)
floor_div = int_div
mod = Elemwise(ps.mod)
pow = Elemwise(ps.pow)  # noqa: A001
neg = Elemwise(ps.neg)
exp = Elemwise(ps.exp)
exp2 = Elemwise(ps.exp2)
expm1 = Elemwise(ps.expm1)
log = Elemwise(ps.log)
log2 = Elemwise(ps.log2)
log10 = Elemwise(ps.log10)
log1p = Elemwise(ps.log1p)
sqrt = Elemwise(ps.sqrt)
sqr = Elemwise(ps.sqr)
square = sqr
reciprocal = Elemwise(ps.reciprocal)
sin = Elemwise(ps.sin)
cos = Elemwise(ps.cos)
tan = Elemwise(ps.tan)
tanh = Elemwise(ps.tanh)
arctan = Elemwise(ps.arctan)
abs = Elemwise(ps.abs_)  # noqa: A001
abs_ = abs
sign = Elemwise(ps.sign)
floor = Elemwise(ps.floor)
ceil = Elemwise(ps.ceil)
round_half_to_even = Elemwise(ps.round_half_to_even)
sigmoid = Elemwise(ps.sigmoid)
expit = sigmoid
softplus = Elemwise(ps.softplus)
arcsin = Elemwise(ps.arcsin)
arccos = Elemwise(ps.arccos)
arctan2 = Elemwise(ps.arctan2)
sinh = Elemwise(ps.sinh)
cosh = Elemwise(ps.cosh)
arcsinh = Elemwise(ps.arcsinh)
arccosh = Elemwise(ps.arccosh)
arctanh = Elemwise(ps.arctanh)
trunc = Elemwise(ps.trunc)
round_half_away_from_zero = Elemwise(ps.round_half_away_from_zero)
real = Elemwise(ps.real)
imag = Elemwise(ps.imag)
complex = Elemwise(ps.complex)  # noqa: A001 - PyTensor's name
_conj = Elemwise(ps.conj)
erf = Elemwise(ps.erf)
erfc = Elemwise(ps.erfc)
erfcx = Elemwise(ps.erfcx)
erfinv = Elemwise(ps.erfinv)
erfcinv = Elemwise(ps.erfcinv)
ndtri_exp = Elemwise(ps.ndtri_exp)
owens_t = Elemwise(ps.owens_t)
gamma = Elemwise(ps.gamma)
gammaln = Elemwise(ps.gammaln)
psi = Elemwise(ps.psi)
digamma = psi
tri_gamma = Elemwise(ps.tri_gamma)
polygamma = Elemwise(ps.polygamma)
gammainc = Elemwise(ps.gammainc)
gammaincc = Elemwise(ps.gammaincc)
gammaincinv = Elemwise(ps.gammaincinv)
gammainccinv = Elemwise(ps.gammainccinv)
j0 = Elemwise(ps.j0)
j1 = Elemwise(ps.j1)
jv = Elemwise(ps.jv)
i0 = Elemwise(ps.i0)
i1 = Elemwise(ps.i1)
ive = Elemwise(ps.ive)
kve = Elemwise(ps.kve)
log1mexp = Elemwise(ps.log1mexp)
log1pexp = softplus
betainc = Elemwise(ps.betainc)
betaincinv = Elemwise(ps.betaincinv)
hyp2f1 = Elemwise(ps.hyp2f1)
_xlogy = Elemwise(ps.xlogy)
_xlog1py = Elemwise(ps.xlog1py)
maximum = Elemwise(ps.maximum)
minimum = Elemwise(ps.minimum)
lt = Elemwise(ps.lt)
le = Elemwise(ps.le)
gt = Elemwise(ps.gt)
ge = Elemwise(ps.ge)
eq = Elemwise(ps.eq)
neq = Elemwise(ps.neq)
and_ = Elemwise(ps.and_)
or_ = Elemwise(ps.or_)
xor = Elemwise(ps.xor)
invert = Elemwise(ps.invert)
bitwise_and, bitwise_or, bitwise_xor, bitwise_not = and_, or_, xor, invert
from lucent.tensor.basic import switch  # noqa: E402  (PyTensor defines it there)
clip = Elemwise(ps.clip)
identity = Elemwise(ps.identity)
second = Elemwise(ps.second)
fill = second


def round(a, mode=None):  # noqa: A001
    """Round to the nearest integer: ties to even (NumPy's rule, the default) or away from zero."""
    if mode is None or mode == "half_to_even":
        return round_half_to_even(a)
    if mode == "half_away_from_zero":
        return round_half_away_from_zero(a)
    raise ValueError(f"round: mode must be 'half_to_even' or 'half_away_from_zero', got {mode!r}")


def iround(a, mode=None):
    """``round(a, mode)`` cast to int64."""
    return cast(round(a, mode), "int64")


def where(cond, x, y):
    """``x`` where ``cond`` is true, else ``y`` (NumPy's three-argument ``where``)."""
    return switch(cond, x, y)


_cast_elemwise: dict = {}


def cast(x, dtype):
    """``x`` converted to ``dtype`` (returned unchanged when it already has it)."""
    x = as_tensor_variable(x)
    dtype = normalize_dtype(dtype)
    if x.type.dtype == dtype:
        return x
    op = _cast_elemwise.get(dtype)
    if op is None:
        op = _cast_elemwise[dtype] = Elemwise(ps.Cast(ps.get_scalar_type(dtype)))
    return op(x)


# --- reductions ------------------------------------------------------------------
def _keep(out, x, axis):
    """Put the reduced axes of ``x`` back as length-1 dimensions of ``out``."""
    axes = tuple(range(x.type.ndim)) if axis is None else axis
    order, j = [], 0
    for d in range(x.type.ndim):
        if d in axes:
            order.append("x")
        else:
            order.append(j)
            j += 1
    return DimShuffle(out.type.ndim, tuple(order))(out)


def _reduce(op_cls, name, x, axis, keepdims, **kwargs):
    x = as_tensor_variable(x)
    axis = _normalize_axes(axis, x.type.ndim, name)
    out = op_cls(axis=axis, **kwargs)(x)
    return _keep(out, x, axis) if keepdims else out


def sum(input, axis=None, dtype=None, keepdims=False, acc_dtype=None):  # noqa: A001
    """Sum over ``axis`` (int, tuple or None for all); bools and ints sum in int64."""
    return _reduce(Sum, "sum", input, axis, keepdims, dtype=dtype, acc_dtype=acc_dtype)


def prod(input, axis=None, dtype=None, keepdims=False, acc_dtype=None, no_zeros_in_input=False):
    """Product over ``axis``; bools and ints multiply in int64."""
    return _reduce(Prod, "prod", input, axis, keepdims, dtype=dtype, acc_dtype=acc_dtype)


def max(x, axis=None, keepdims=False):  # noqa: A001
    """Largest element over ``axis`` (NaN if any element is NaN, as NumPy)."""
    return _reduce(Max, "max", x, axis, keepdims)


def min(x, axis=None, keepdims=False):  # noqa: A001
    return _reduce(Min, "min", x, axis, keepdims)


def all(x, axis=None, keepdims=False):  # noqa: A001
    return _reduce(All, "all", x, axis, keepdims)


def any(x, axis=None, keepdims=False):  # noqa: A001
    return _reduce(Any, "any", x, axis, keepdims)


class ReducedSize(Op):
    """The number of elements over ``axis`` of its input, as an int64 scalar.

    ``mean`` divides by it; when all the reduced lengths are static, ``mean``
    uses a constant instead and this op is not needed.
    """

    __props__ = ("axis",)

    def __init__(self, axis):
        self.axis = axis

    def make_node(self, x):
        x = as_tensor_variable(x)
        return Apply(self, [x], [TensorType("int64", ())()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        axes = range(x.ndim) if self.axis is None else self.axis
        output_storage[0][0] = np.asarray(int(np.prod([x.shape[a] for a in axes], dtype="int64")), dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [()]

    def connection_pattern(self, node):
        return [[False]]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.gradient import disconnected_type

        return [disconnected_type()]


def _count(x, axis):
    axes = range(x.type.ndim) if axis is None else axis
    lengths = [x.type.shape[a] for a in axes]
    if builtins.all(n is not None for n in lengths):
        return constant(np.asarray(int(np.prod(lengths, dtype="int64")), dtype="int64"))
    return ReducedSize(axis)(x)


def mean(input, axis=None, dtype=None, keepdims=False, acc_dtype=None):
    """Arithmetic mean; integers and booleans give float64 (as NumPy)."""
    x = as_tensor_variable(input)
    axis = _normalize_axes(axis, x.type.ndim, "mean")
    out_dtype = dtype or (x.type.dtype if x.type.dtype in continuous_dtypes else "float64")
    s = Sum(axis=axis, dtype=out_dtype, acc_dtype=acc_dtype)(x)
    out = true_div(s, cast(_count(x, axis), out_dtype))
    return _keep(out, x, axis) if keepdims else out


def var(input, axis=None, ddof=0, keepdims=False, corrected=False):
    """Variance ``mean((x - mean(x))**2)`` with ``ddof`` delta degrees of freedom."""
    x = as_tensor_variable(input)
    axis = _normalize_axes(axis, x.type.ndim, "var")
    if corrected:
        ddof = 1
    m = mean(x, axis=axis, keepdims=True)
    d = sub(x, m)
    out_dtype = m.type.dtype
    ss = Sum(axis=axis, dtype=out_dtype)(mul(d, d))
    n = cast(_count(x, axis), out_dtype)
    if ddof:
        n = sub(n, constant(np.asarray(ddof, dtype=out_dtype)))
    out = true_div(ss, n)
    return _keep(out, x, axis) if keepdims else out


def std(input, axis=None, ddof=0, keepdims=False, corrected=False):
    return sqrt(var(input, axis=axis, ddof=ddof, keepdims=keepdims, corrected=corrected))


class Argmax(Op):
    """Index (int64) of the largest element over ``axis``; several axes are flattened."""

    __props__ = ("axis",)
    _func = staticmethod(np.argmax)

    def __init__(self, axis=None):
        self.axis = None if axis is None else tuple(axis)

    def __str__(self):
        return f"{type(self).__name__}{{axis={self.axis}}}"

    def make_node(self, x):
        x = as_tensor_variable(x)
        axis = _normalize_axes(self.axis, x.type.ndim, str(self))
        if axis != self.axis:
            return type(self)(axis).make_node(x)
        axes = range(x.type.ndim) if axis is None else axis
        shape = tuple(s for d, s in enumerate(x.type.shape) if d not in axes)
        return Apply(self, [x], [TensorType("int64", shape)()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        axes = tuple(range(x.ndim)) if self.axis is None else self.axis
        keep = [d for d in range(x.ndim) if d not in axes]
        moved = np.transpose(x, keep + list(axes))
        flat = moved.reshape(tuple(x.shape[d] for d in keep) + (-1,))
        if flat.shape[-1] == 0:
            raise ValueError(f"{self}: attempt to get the arg-extremum of an empty sequence (shape {x.shape})")
        output_storage[0][0] = np.asarray(type(self)._func(flat, axis=-1), dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        axes = range(len(input_shapes[0])) if self.axis is None else self.axis
        return [tuple(s for d, s in enumerate(input_shapes[0]) if d not in axes)]

    def connection_pattern(self, node):
        return [[False]]

    def L_op(self, inputs, outputs, output_grads):
        from lucent.gradient import disconnected_type

        return [disconnected_type()]


class Argmin(Argmax):
    _func = staticmethod(np.argmin)


def argmax(x, axis=None, keepdims=False):
    x = as_tensor_variable(x)
    axis = _normalize_axes(axis, x.type.ndim, "argmax")
    out = Argmax(axis)(x)
    return _keep(out, x, axis) if keepdims else out


def argmin(x, axis=None, keepdims=False):
    x = as_tensor_variable(x)
    axis = _normalize_axes(axis, x.type.ndim, "argmin")
    out = Argmin(axis)(x)
    return _keep(out, x, axis) if keepdims else out


def max_and_argmax(a, axis=None, keepdims=False):
    """``[max(a, axis), argmax(a, axis)]``: the largest elements and where they are.

    With ``axis=None`` both work on the flattened tensor.
    """
    return [max(a, axis=axis, keepdims=keepdims), argmax(a, axis=axis, keepdims=keepdims)]


# --- products --------------------------------------------------------------------
def _static_eq(a, b):
    return a is None or b is None or a == b


class Dot(Op):
    """``numpy.dot`` of two tensors of 1 or 2 dimensions."""

    __props__ = ()

    def make_node(self, a, b):
        a, b = as_tensor_variable(a), as_tensor_variable(b)
        if a.type.ndim not in (1, 2) or b.type.ndim not in (1, 2):
            raise TypeError(f"Dot needs 1-d or 2-d inputs, got {a.type} and {b.type} (use dot() for 0-d)")
        ka, kb = a.type.shape[-1], b.type.shape[0]
        if not _static_eq(ka, kb):
            raise ValueError(
                f"Dot: shapes {a.type.shape} and {b.type.shape} are not aligned: "
                f"{ka} (last dimension of the first) != {kb} (first dimension of the second)"
            )
        shape = a.type.shape[:-1] + b.type.shape[1:]
        return Apply(self, [a, b], [TensorType(upcast(a.type.dtype, b.type.dtype), shape)()])

    def perform(self, node, inputs, output_storage):
        a, b = inputs
        if a.shape[-1] != b.shape[0]:
            raise ValueError(f"Dot: shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} != {b.shape[0]}")
        output_storage[0][0] = np.asarray(np.dot(a, b), dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        sa, sb = input_shapes
        return [tuple(sa[:-1]) + tuple(sb[1:])]

    def L_op(self, inputs, outputs, output_grads):
        (a, b), (gz,) = inputs, output_grads
        na, nb = a.type.ndim, b.type.ndim
        if na == 1 and nb == 1:
            ga, gb = mul(gz, b), mul(gz, a)
        elif na == 2 and nb == 1:
            ga, gb = outer(gz, b), dot(a.T, gz)
        elif na == 1 and nb == 2:
            ga, gb = dot(b, gz), outer(a, gz)
        else:
            ga, gb = dot(gz, b.T), dot(a.T, gz)
        return [_fit_grad(ga, a), _fit_grad(gb, b)]


_dot = Dot()


def dot(a, b):
    """``numpy.dot``: scalar product for 0-d inputs, vector/matrix products for 1/2-d."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    from lucent.tensor.type import DenseTensorType

    if not (isinstance(a.type, DenseTensorType) and isinstance(b.type, DenseTensorType)):
        # A sparse operand: the sparse variable's ``__dot__`` / ``__rdot__``
        # (``structured_dot``) computes it, as PyTensor dispatches it.
        from lucent.sparse.math import structured_dot

        return structured_dot(a, b)
    if a.type.ndim == 0 or b.type.ndim == 0:
        return mul(a, b)
    if a.type.ndim > 2 or b.type.ndim > 2:
        if b.type.ndim == 1:
            return sum(mul(a, b), axis=-1)
        raise NotImplementedError(
            f"dot of tensors with more than 2 dimensions ({a.type}, {b.type}); use matmul or tensordot"
        )
    return _dot(a, b)


def outer(x, y):
    """Outer product of two vectors (inputs of other ranks are flattened)."""
    x, y = as_tensor_variable(x), as_tensor_variable(y)
    if x.type.ndim != 1:
        x = x.flatten() if x.type.ndim else DimShuffle(0, ("x",))(x)
    if y.type.ndim != 1:
        y = y.flatten() if y.type.ndim else DimShuffle(0, ("x",))(y)
    return mul(DimShuffle(1, (0, "x"))(x), DimShuffle(1, ("x", 0))(y))


class MatMul(Op):
    """``numpy.matmul`` of two tensors of at least 2 dimensions and the same rank.

    Batch dimensions broadcast like ``Elemwise`` (statically). The 1-d cases
    of ``numpy.matmul`` are handled by ``matmul()``, which adds and removes a
    dimension around this op.
    """

    __props__ = ()

    def make_node(self, a, b):
        a, b = as_tensor_variable(a), as_tensor_variable(b)
        if a.type.ndim < 2 or b.type.ndim < 2 or a.type.ndim != b.type.ndim:
            raise TypeError(f"MatMul needs inputs of the same rank >= 2, got {a.type} and {b.type}")
        if not _static_eq(a.type.shape[-1], b.type.shape[-2]):
            raise ValueError(
                f"matmul: shapes {a.type.shape} and {b.type.shape} do not match: "
                f"{a.type.shape[-1]} != {b.type.shape[-2]} (core dimension k of (n,k),(k,m))"
            )
        batch = broadcast_static_shape(a.type.shape[:-2], b.type.shape[:-2])
        shape = batch + (a.type.shape[-2], b.type.shape[-1])
        return Apply(self, [a, b], [TensorType(upcast(a.type.dtype, b.type.dtype), shape)()])

    def perform(self, node, inputs, output_storage):
        a, b = inputs
        for d in range(a.ndim - 2):
            la, lb = a.shape[d], b.shape[d]
            if la != lb and not (
                (la == 1 and node.inputs[0].type.shape[d] == 1) or (lb == 1 and node.inputs[1].type.shape[d] == 1)
            ):
                raise ValueError(
                    f"matmul: batch shapes {a.shape[:-2]} and {b.shape[:-2]} are not compatible "
                    "(a batch dimension can broadcast only if its static length is 1)"
                )
        if a.shape[-1] != b.shape[-2]:
            raise ValueError(f"matmul: shapes {a.shape} and {b.shape} do not match: {a.shape[-1]} != {b.shape[-2]}")
        output_storage[0][0] = np.asarray(np.matmul(a, b), dtype=node.outputs[0].type.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        (a, b), (sa, sb) = node.inputs, input_shapes
        batch = [sa[d] if a.type.shape[d] != 1 else sb[d] for d in range(a.type.ndim - 2)]
        return [tuple(batch) + (sa[-2], sb[-1])]

    def L_op(self, inputs, outputs, output_grads):
        (a, b), (gz,) = inputs, output_grads
        nd = a.type.ndim
        swap = tuple(range(nd - 2)) + (nd - 1, nd - 2)
        ga = self(gz, DimShuffle(nd, swap)(b))
        gb = self(DimShuffle(nd, swap)(a), gz)
        return [_fit_grad(ga, a), _fit_grad(gb, b)]


_matmul = MatMul()


def matmul(x1, x2, dtype=None):
    """``numpy.matmul``: matrix product over the last two axes, batch axes broadcast."""
    a, b = as_tensor_variable(x1), as_tensor_variable(x2)
    if a.type.ndim == 0 or b.type.ndim == 0:
        raise ValueError("matmul: the inputs must not be scalars (0-d); use mul")
    a_vec, b_vec = a.type.ndim == 1, b.type.ndim == 1
    if a_vec:
        a = DimShuffle(1, ("x", 0))(a)
    if b_vec:
        b = DimShuffle(1, (0, "x"))(b)
    nd = builtins.max(a.type.ndim, b.type.ndim)
    out = _matmul(_pad_left(a, nd), _pad_left(b, nd))
    if a_vec or b_vec:
        drop = ([nd - 2] if a_vec else []) + ([nd - 1] if b_vec else [])
        out = DimShuffle(nd, tuple(d for d in range(nd) if d not in drop))(out)
    if dtype is not None:
        out = cast(out, dtype)
    return out


def ptp(a, axis=None):
    """Range of the values (maximum minus minimum) along ``axis``, like ``numpy.ptp``."""
    a = as_tensor_variable(a)
    return max(a, axis=axis) - min(a, axis=axis)



# --- predicates and comparisons of floats ------------------------------------------
_isnan = Elemwise(ps.isnan)
_isinf = Elemwise(ps.isinf)


def _bool_like(a, value):
    return second(a, constant(np.asarray(value, dtype="bool")))


def isnan(a):
    """Where ``a`` is NaN (bool); integers and bools are never NaN."""
    a = as_tensor_variable(a)
    return _bool_like(a, False) if a.type.dtype in discrete_dtypes else _isnan(a)


def isinf(a):
    """Where ``a`` is +inf or -inf (bool); integers and bools are never infinite."""
    a = as_tensor_variable(a)
    return _bool_like(a, False) if a.type.dtype in discrete_dtypes else _isinf(a)


def isfinite(a):
    """Where ``a`` is neither NaN nor infinite (bool)."""
    a = as_tensor_variable(a)
    if a.type.dtype in discrete_dtypes:
        return _bool_like(a, True)
    return and_(invert(_isnan(a)), invert(_isinf(a)))


def isposinf(x):
    return eq(x, np.inf)


def isneginf(x):
    return eq(x, -np.inf)


def isclose(a, b, rtol=1.0e-5, atol=1.0e-8, equal_nan=False):
    """NumPy's ``isclose``: ``|a - b| <= atol + rtol * |b|``, infinities equal only to themselves."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    close = le(abs(sub(a, b)), add(atol, mul(rtol, abs(b))))
    a_inf, b_inf = isinf(a), isinf(b)
    finite = invert(or_(or_(isnan(a), isnan(b)), or_(a_inf, b_inf)))
    out = or_(and_(close, finite), and_(and_(a_inf, b_inf), eq(a, b)))
    if equal_nan:
        out = or_(out, and_(isnan(a), isnan(b)))
    return out


def allclose(a, b, rtol=1.0e-5, atol=1.0e-8, equal_nan=False):
    """Whether every element of ``a`` is close to ``b`` (see ``isclose``)."""
    return all(isclose(a, b, rtol, atol, equal_nan))


# --- angles, complex numbers -----------------------------------------------------------
def deg2rad(x):
    """Degrees to radians."""
    x = as_tensor_variable(x)
    return mul(x, constant(np.asarray(np.pi / 180, dtype=_float_dtype(x))))


def rad2deg(x):
    """Radians to degrees."""
    x = as_tensor_variable(x)
    return mul(x, constant(np.asarray(180 / np.pi, dtype=_float_dtype(x))))


def _float_dtype(x):
    (t,) = ps.upgrade_to_float(ps.get_scalar_type(x.type.dtype))
    return "float64" if t.dtype in ("complex128",) else ("float32" if t.dtype == "complex64" else t.dtype)


def angle(z):
    """The argument of a complex number (``arctan2(imag(z), real(z))``)."""
    z = as_tensor_variable(z)
    return arctan2(imag(z), real(z))


def conjugate(x):
    """Complex conjugate; real tensors are returned unchanged."""
    x = as_tensor_variable(x)
    if x.type.dtype not in ("complex64", "complex128"):
        return x
    return _conj(x)


conj = conjugate


def complex_from_polar(abs, angle):  # noqa: A002 - PyTensor's signature
    """Deprecated: ``complex(abs * cos(angle), abs * sin(angle))``."""
    import warnings

    warnings.warn(
        "complex_from_polar is deprecated; use complex(abs * cos(angle), abs * sin(angle)) instead",
        FutureWarning,
        stacklevel=2,
    )
    return complex(mul(abs, cos(angle)), mul(abs, sin(angle)))


# --- functions derived from the special ops ----------------------------------------------
def gammau(k, x):
    """Upper incomplete gamma function (not regularized): ``gammaincc(k, x) * gamma(k)``."""
    return mul(gammaincc(k, x), gamma(k))


def gammal(k, x):
    """Lower incomplete gamma function (not regularized): ``gammainc(k, x) * gamma(k)``."""
    return mul(gammainc(k, x), gamma(k))


def chi2sf(x, k):
    """Deprecated survival function of the chi-squared distribution."""
    import warnings

    warnings.warn("chi2sf is deprecated. Use `gammaincc(k / 2, x / 2)` instead", FutureWarning, stacklevel=2)
    return gammaincc(true_div(k, 2), true_div(x, 2))


def iv(v, x):
    """Modified Bessel function of the first kind, as ``ive(v, x) * exp(|x|)``."""
    return mul(ive(v, x), exp(abs(x)))


def kv(v, x):
    """Modified Bessel function of the second kind, as ``kve(v, x) * exp(-x)``."""
    return mul(kve(v, x), exp(neg(x)))


def kn(n, x):
    """``kv`` of integer order."""
    return kv(n, x)


# --- integer division helpers ---------------------------------------------------------------
def divmod(x, y):  # noqa: A001
    """``(floor_div(x, y), mod(x, y))``, like Python's ``divmod``."""
    return floor_div(x, y), mod(x, y)


def ceil_intdiv(a, b):
    """``ceil(a / b)`` for integers, without going through floats."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    div = int_div(a, b)
    rem = neq(mod(a, b), 0)
    return add(div, cast(rem, div.type.dtype))


def power(x, y):
    return pow(x, y)


def smallest(*args):
    """Element-wise minimum of the arguments."""
    if len(args) < 1:
        raise ValueError("smallest needs at least one argument")
    out = as_tensor_variable(args[0])
    for a in args[1:]:
        out = minimum(out, a)
    return out


def largest(*args):
    """Element-wise maximum of the arguments."""
    if len(args) < 1:
        raise ValueError("largest needs at least one argument")
    out = as_tensor_variable(args[0])
    for a in args[1:]:
        out = maximum(out, a)
    return out


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """NumPy's ``nan_to_num``: NaN and infinities replaced by finite numbers."""
    x = as_tensor_variable(x)
    if x.type.dtype in discrete_dtypes:
        return x
    info = np.finfo(x.type.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    x = switch(_isnan(x), nan, x)
    x = switch(isposinf(x), posinf, x)
    return switch(isneginf(x), neginf, x)


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    """Covariance matrix of the rows (``rowvar``) or columns of ``m``, like ``numpy.cov``."""
    from lucent.tensor.basic import concatenate

    if fweights is not None:
        raise NotImplementedError("cov: fweights are not implemented")
    if aweights is not None:
        raise NotImplementedError("cov: aweights are not implemented")
    m = as_tensor_variable(m)
    if m.type.ndim == 1:
        m = m.dimshuffle("x", 0)
    elif not rowvar:
        m = m.T
    if y is not None:
        y = as_tensor_variable(y)
        if y.type.ndim == 1:
            y = y.dimshuffle("x", 0)
        elif not rowvar:
            y = y.T
        m = concatenate([m, y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    if m.type.dtype not in continuous_dtypes:
        m = cast(m, "float64")
    fact = sub(m.shape[1], ddof)
    d = sub(m, mean(m, axis=1, keepdims=True))
    c = true_div(dot(d, d.T), cast(fact, m.type.dtype))
    keep = tuple(i for i, n in enumerate(c.type.shape) if n != 1)
    return DimShuffle(2, keep)(c) if len(keep) < 2 else c


class ProdWithoutZeros(Prod):
    """Product over axes of the non-zero entries (zeros count as 1).

    The building block of a product's gradient when a group holds one zero:
    the derivative with respect to that zero is the product of the others.
    It is not differentiable itself (its gradient is reported as not implemented).
    """

    def _reduce(self, x, axis, dtype):
        x = np.asarray(x)
        return np.prod(np.where(x == 0, np.ones((), x.dtype), x), axis=axis, dtype=self.acc_dtype or dtype)

    def L_op(self, inputs, outputs, output_grads):
        from lucent.gradient import grad_not_implemented

        return [
            grad_not_implemented(
                self, 0, inputs[0],
                "2nd derivatives of `product(a)` are not supported; if `a` has no zeros, use "
                "`prod(a, no_zeros_in_input=True)`",
            )
        ]


isnan_ = isnan  # PyTensor keeps this alias of ``isnan``


def dense_dot(a, b):
    """``dot`` of two dense tensors (PyTensor's name for the non-sparse ``dot``)."""
    return dot(a, b)


def vecdot(x1, x2, dtype=None):
    """``numpy.vecdot``: dot product over the last axis, other axes broadcast."""
    a, b = as_tensor_variable(x1), as_tensor_variable(x2)
    if a.type.ndim == 0 or b.type.ndim == 0:
        raise ValueError("vecdot: the inputs must have at least one dimension")
    out = matmul(a[..., None, :], b[..., :, None]).squeeze((-2, -1))
    return cast(out, dtype) if dtype is not None else out


def matvec(x1, x2, dtype=None):
    """``numpy.matvec``: matrix times vector over the last axes, batch axes broadcast."""
    a, b = as_tensor_variable(x1), as_tensor_variable(x2)
    if a.type.ndim < 2 or b.type.ndim < 1:
        raise ValueError(f"matvec: needs a matrix (>= 2-d) and a vector (>= 1-d), got {a.type} and {b.type}")
    out = matmul(a, b[..., None]).squeeze(-1)
    return cast(out, dtype) if dtype is not None else out


def vecmat(x1, x2, dtype=None):
    """``numpy.vecmat``: (conjugated) vector times matrix, batch axes broadcast."""
    a, b = as_tensor_variable(x1), as_tensor_variable(x2)
    if a.type.ndim < 1 or b.type.ndim < 2:
        raise ValueError(f"vecmat: needs a vector (>= 1-d) and a matrix (>= 2-d), got {a.type} and {b.type}")
    out = matmul(b.mT, a[..., None]).squeeze(-1)
    return cast(out, dtype) if dtype is not None else out


def median(x, axis=None):
    """Median over ``axis`` (int, tuple or None for all), like ``numpy.median``.

    The reduced axes are moved last and flattened, sorted, and the middle
    element (mean of the two middle ones for an even count) is taken.
    """
    from lucent.tensor.sort import sort

    x = as_tensor_variable(x)
    nd = x.type.ndim
    axes = list(range(nd)) if axis is None else list(_normalize_axes(axis, nd, "median"))
    keep = [i for i in range(nd) if i not in axes]
    xt = x.transpose(*keep, *axes)
    if len(axes) != 1:
        xt = xt.reshape((*[x.shape[i] for i in keep], -1))
    n = xt.shape[-1]
    k = int_div(n, 2)
    xs = sort(xt, axis=-1)
    upper = xs[..., k]
    lower = xs[..., k - 1]
    even = (upper + lower) / 2.0
    return switch(eq(mod(n, 2), 0), even, cast(upper, even.type.dtype))

__all__ = [
    "max_and_argmax",
    "ptp",
    "add", "sub", "mul", "true_div", "int_div", "floor_div", "mod", "pow", "neg", "exp", "exp2",
    "expm1", "log", "log2", "log10", "log1p", "sqrt", "sqr", "square", "reciprocal", "sin", "cos",
    "tan", "tanh", "arctan", "abs", "sign", "floor", "ceil", "round", "round_half_to_even",
    "sigmoid", "expit", "softplus", "maximum", "minimum", "lt", "le", "gt", "ge", "eq", "neq",
    "and_", "or_", "xor", "invert", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
    "switch", "where", "clip", "cast", "identity", "second", "fill",
    "sum", "prod", "mean", "var", "std", "max", "min", "all", "any", "argmax", "argmin",
    "dot", "matmul", "outer", "Dot", "MatMul", "Argmax", "Argmin", "ReducedSize",
    "Sum", "Prod", "Max", "Min", "All", "Any", "CAReduce",
    "iround", "arcsin", "arccos", "arctan2", "sinh", "cosh", "arcsinh", "arccosh", "arctanh",
    "trunc", "round_half_away_from_zero", "real", "imag", "complex", "angle", "conj", "conjugate",
    "complex_from_polar", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isclose",
    "allclose", "deg2rad", "rad2deg", "erf", "erfc", "erfcx", "erfinv", "erfcinv", "ndtri_exp",
    "owens_t", "gamma", "gammaln", "psi", "digamma", "tri_gamma", "polygamma", "gammainc",
    "gammaincc", "gammaincinv", "gammainccinv", "gammau", "gammal", "chi2sf", "j0", "j1", "jv",
    "i0", "i1", "iv", "ive", "kv", "kve", "kn", "log1mexp", "log1pexp", "betainc", "betaincinv",
    "hyp2f1", "ProdWithoutZeros", "isnan_", "dense_dot", "vecdot", "matvec", "vecmat", "median", "divmod", "ceil_intdiv", "power", "smallest", "largest", "nan_to_num", "cov",
]

from lucent.tensor.contraction import tensordot  # noqa: E402,F401  (a graph of dot and reshapes)
