"""Elementary float64 functions that LLVM can vectorise, for generated kernels.

Numba calls libm for ``exp``, ``log``, ``sin``, ``tanh``: one scalar call
per element, which blocks loop vectorisation, so a fused loop of
transcendental functions is no faster than NumPy's SIMD ufuncs (this
llvmlite has no SVML). The functions here are written with plain
arithmetic, comparisons turned into selects, and integer bit manipulation
of the IEEE representation (through two tiny intrinsics), so a loop calling
them becomes AVX2 code.

The straight-line ones (all but the division helpers at the end) are
translated from this source to LLVM IR by lucent itself
(:mod:`~lucent.link.numba.dispatch.straight_line`, ``@straight_line``: the
annotations give the types), not compiled by Numba: as Numba functions
each was a compile of its own, 60 to 180 ms on an empty cache. Inlining
happens in LLVM, not in Numba's IR: each body carries the ``alwaysinline``
attribute, and LLVM inlines it into every kernel that links it, before the
loop vectoriser runs. Numba's own ``inline="always"`` re-typed the function
at every call site, about a second per call in a generated kernel, so a
fused chain of 60 ``tanh`` took minutes to compile; and the loop it
produced often stayed scalar.

Accuracy: each is within a few ulp of the correctly rounded result (tested
against NumPy over wide ranges in tests/link/numba/test_scalar.py; the
relative error stays below 1e-15 except near the zeros of sin/cos, where
it is bounded in absolute terms). They follow the classic fdlibm
algorithms: Cody-Waite argument reduction with a split constant, then a
polynomial on the reduced range.

Special values are handled branch-free: ``vexp``, ``vexpm1``, ``vtanh``,
``vlog``, ``vlog1p`` are correct for every input (NaN, +-inf, zeros,
subnormals, overflow, underflow). ``vsin`` / ``vcos`` are only accurate for
``|x| < SINCOS_LIMIT``: a generated kernel checks that range per block
(``sincos_ok``) and recomputes a block that leaves it with libm.

Bit tricks instead of conversions: AVX2 has no vector int64 <-> float64
conversion, so rounding to an integer uses the "add 1.5 * 2**52" trick and
integers are turned back into floats the same way.
"""

from __future__ import annotations

import math

import numpy as np

from llvmlite import ir
from numba import njit
from numba.core import types
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.compiler_machinery import LoweringPass, register_pass
from numba.core.typed_passes import NativeLowering
from numba.extending import intrinsic

from lucent.link.numba.dispatch.straight_line import register_bit_cast, straight_line


@intrinsic
def f64_bits(typingctx, x):
    """The IEEE-754 bits of a float64, as an int64 (a no-op bit cast)."""
    if x != types.float64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


@intrinsic
def bits_f64(typingctx, n):
    """The float64 whose IEEE-754 bits are the int64 ``n``."""
    if n != types.int64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


register_bit_cast(f64_bits, "float", "int")
register_bit_cast(bits_f64, "int", "float")


@register_pass(mutates_CFG=False, analysis_only=True)
class MarkAlwaysInline(LoweringPass):
    """Give the just-lowered function LLVM's ``alwaysinline`` attribute.

    Runs after Numba has finalised the function's library; a kernel that
    calls the function links a copy of that library and LLVM's inliner
    then always inlines the body (the attribute survives the copy).
    """

    _name = "lucent_mark_alwaysinline"

    def __init__(self):
        LoweringPass.__init__(self)

    def run_pass(self, state):
        state.library.get_function(state.cr.fndesc.mangled_name).add_function_attribute("alwaysinline")
        return False


class InlinedByLLVM(CompilerBase):
    """Numba's nopython pipeline followed by :class:`MarkAlwaysInline` (the division helpers)."""

    def define_pipelines(self):
        pipeline = DefaultPassBuilder.define_nopython_pipeline(self.state)
        pipeline.add_pass_after(MarkAlwaysInline, NativeLowering)
        pipeline.finalize()
        return [pipeline]


_fn = njit(error_model="numpy", pipeline_class=InlinedByLLVM)

INF = math.inf
NAN = math.nan
SHIFT = 6755399441055744.0  # 1.5 * 2**52: x + SHIFT rounds x to an integer
SHIFT_BITS = 0x4338000000000000
SIGN_BIT = -0x8000000000000000
LOG2E = 1.4426950408889634
LN2_HI = 6.93147180369123816490e-01  # low 21 bits zero: n * LN2_HI is exact
LN2_LO = 1.90821492927058770002e-10
TWO_OVER_PI = 6.36619772367581382433e-01
PIO2_1 = 1.57079632673412561417e00  # first 33 bits of pi/2
PIO2_2 = 6.07710050630396597660e-11  # next 33 bits
PIO2_3 = 2.02226624879595063154e-21  # pi/2 - PIO2_1 - PIO2_2
SINCOS_LIMIT = 1.0e5


@straight_line
def _int_to_f64(k: int) -> float:
    """``float(k)`` for ``|k| < 2**51`` without an int -> float conversion."""
    return bits_f64(k + SHIFT_BITS) - SHIFT


@straight_line
def _expm1_reduced(r: float) -> float:
    """``exp(r) - 1`` for ``|r| <= ln(2)/2`` (Taylor to degree 13, error < 2**-57)."""
    p = 1.0 / 6227020800.0
    p = 1.0 / 479001600.0 + r * p
    p = 1.0 / 39916800.0 + r * p
    p = 1.0 / 3628800.0 + r * p
    p = 1.0 / 362880.0 + r * p
    p = 1.0 / 40320.0 + r * p
    p = 1.0 / 5040.0 + r * p
    p = 1.0 / 720.0 + r * p
    p = 1.0 / 120.0 + r * p
    p = 1.0 / 24.0 + r * p
    p = 1.0 / 6.0 + r * p
    p = 0.5 + r * p
    return r + (r * r) * p


@straight_line
def vexp(x: float) -> float:
    """``exp(x)`` for every float64 (overflow to inf, gradual underflow to 0)."""
    x = 710.0 if x > 710.0 else x  # NaN passes both clamps
    x = -746.0 if x < -746.0 else x
    t = x * LOG2E + SHIFT
    nf = t - SHIFT
    r = (x - nf * LN2_HI) - nf * LN2_LO
    p = 1.0 + _expm1_reduced(r)
    n = f64_bits(t) - SHIFT_BITS
    # Two factors, each a normal power of two, so that subnormal results
    # and the top of the range (n = 1024) need no special case.
    n1 = n >> 1
    n2 = n - n1
    return (p * bits_f64((n1 + 1023) << 52)) * bits_f64((n2 + 1023) << 52)


@straight_line
def vexpm1(x: float) -> float:
    """``exp(x) - 1``, accurate near 0 (where ``exp(x) - 1`` would cancel)."""
    xc = 710.0 if x > 710.0 else x
    xc = -746.0 if xc < -746.0 else xc
    t = xc * LOG2E + SHIFT
    nf = t - SHIFT
    r = (xc - nf * LN2_HI) - nf * LN2_LO
    q = _expm1_reduced(r)
    n = f64_bits(t) - SHIFT_BITS
    nc = 60 if n > 60 else n
    nc = -60 if nc < -60 else nc
    s = bits_f64((nc + 1023) << 52)
    near = s * q + (s - 1.0)  # exact 2**n - 1 for |n| <= 53
    n1 = n >> 1
    n2 = n - n1
    far = ((1.0 + q) * bits_f64((n1 + 1023) << 52)) * bits_f64((n2 + 1023) << 52)
    res = far if n > 60 else near
    return -1.0 if xc < -40.0 else res


@straight_line
def vtanh(x: float) -> float:
    """``tanh(x) = -expm1(-2|x|) / (2 + expm1(-2|x|))`` with the sign of ``x``."""
    a = abs(x)
    a = 20.0 if a > 20.0 else a  # tanh(20) rounds to 1
    em = vexpm1(-2.0 * a)
    t = -em / (2.0 + em)
    return bits_f64(f64_bits(t) | (f64_bits(x) & SIGN_BIT))


@straight_line
def vsigmoid(x: float) -> float:
    """``1 / (1 + exp(-x))`` without overflow: ``e / (1 + e)`` with ``e = exp(-|x|)`` for x < 0."""
    e = vexp(-abs(x))
    num = 1.0 if x >= 0.0 else e
    return num / (1.0 + e)


@straight_line
def vlog(x: float) -> float:
    """``log(x)`` (fdlibm's e_log.c, branch-free); log(0) = -inf, log(<0) = nan."""
    sub = x < 2.2250738585072014e-308
    xs = x * 18014398509481984.0 if sub else x  # 2**54 lifts subnormals
    bits = f64_bits(xs)
    hx = (bits >> 32) & 0x7FFFFFFF
    k = (hx >> 20) - 1023
    k = k - 54 if sub else k
    hx = hx & 0x000FFFFF
    i = (hx + 0x95F64) & 0x100000  # normalise the mantissa into [sqrt(2)/2, sqrt(2))
    m = bits_f64(((hx | (i ^ 0x3FF00000)) << 32) | (bits & 0xFFFFFFFF))
    k = k + (i >> 20)
    f = m - 1.0
    s = f / (2.0 + f)
    dk = _int_to_f64(k)
    z = s * s
    w = z * z
    t1 = w * (3.999999999940941908e-01 + w * (2.222219843214978396e-01 + w * 1.531383769920937332e-01))
    t2 = z * (
        6.666666666666735130e-01
        + w * (2.857142874366239149e-01 + w * (1.818357216161805012e-01 + w * 1.479819860511658591e-01))
    )
    rr = t2 + t1
    hfsq = 0.5 * f * f
    res = dk * LN2_HI - ((hfsq - (s * (hfsq + rr) + dk * LN2_LO)) - f)
    res = INF if x == INF else res
    res = -INF if x == 0.0 else res
    return NAN if not (x >= 0.0) else res


@straight_line
def vlog1p(x: float) -> float:
    """``log(1 + x)``, accurate for small ``x``: ``log(u) + (rounding error of u) / u``."""
    u = 1.0 + x
    c = (1.0 - (u - x)) if u >= 2.0 else (x - (u - 1.0))
    res = vlog(u) + c / u
    res = INF if x == INF else res
    return -INF if x == -1.0 else res


@straight_line
def vsoftplus(x: float) -> float:
    """``log(1 + exp(x))`` as NumPy's ``logaddexp(0, x)``: ``max(x, 0) + log1p(exp(-|x|))``."""
    m = x if x > 0.0 else 0.0
    res = m + vlog1p(vexp(-abs(x)))
    res = x if x == INF else res
    return x if x != x else res


@straight_line
def _sin_poly(r: float) -> float:
    """sin on [-pi/4, pi/4] (fdlibm k_sin.c)."""
    z = r * r
    p = 8.33333333332248946124e-03 + z * (
        -1.98412698298579493134e-04
        + z * (2.75573137070700676789e-06 + z * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10))
    )
    return r + (z * r) * (-1.66666666666666324348e-01 + z * p)


@straight_line
def _cos_poly(r: float) -> float:
    """cos on [-pi/4, pi/4] (FreeBSD k_cos.c)."""
    z = r * r
    w = z * z
    rr = z * (4.16666666666666019037e-02 + z * (-1.38888888888741095749e-03 + z * 2.48015872894767294178e-05)) + (
        w * w
    ) * (-2.75573143513906633035e-07 + z * (2.08757232129817482790e-09 + z * -1.13596475577881948265e-11))
    hz = 0.5 * z
    w1 = 1.0 - hz
    return w1 + (((1.0 - w1) - hz) + z * rr)


@straight_line
def _sincos(x: float, quadrant_shift: int) -> float:
    t = x * TWO_OVER_PI + SHIFT
    nf = t - SHIFT
    q = (f64_bits(t) + quadrant_shift) & 3
    r = ((x - nf * PIO2_1) - nf * PIO2_2) - nf * PIO2_3
    v = _cos_poly(r) if (q & 1) == 1 else _sin_poly(r)
    return bits_f64(f64_bits(v) ^ ((q & 2) << 62))


@straight_line
def vsin(x: float) -> float:
    """``sin(x)`` for ``|x| < SINCOS_LIMIT`` (check with ``sincos_ok``)."""
    return _sincos(x, 0)


@straight_line
def vcos(x: float) -> float:
    """``cos(x)`` for ``|x| < SINCOS_LIMIT`` (check with ``sincos_ok``)."""
    return _sincos(x, 1)


@straight_line
def sincos_ok(x: float) -> bool:
    """True where ``vsin`` / ``vcos`` are accurate (False for NaN and inf too)."""
    return abs(x) < SINCOS_LIMIT


#: Vectorisable replacements of libm functions, by NumPy ufunc name; a
#: generated kernel uses them on float64 (and float32, computed in float64).
VECTOR_FUNCTIONS = {
    "exp": "vexp",
    "expm1": "vexpm1",
    "tanh": "vtanh",
    "log": "vlog",
    "log1p": "vlog1p",
    "sin": "vsin",
    "cos": "vcos",
    "sigmoid": "vsigmoid",
    "softplus": "vsoftplus",
}

#: Functions only accurate on part of the line, with the predicate to check.
RANGE_CHECKS = {"vsin": "sincos_ok", "vcos": "sincos_ok"}

__all__ = [
    "vexp", "vexpm1", "vtanh", "vsigmoid", "vlog", "vlog1p", "vsoftplus", "vsin", "vcos",
    "sincos_ok", "f64_bits", "bits_f64", "VECTOR_FUNCTIONS", "RANGE_CHECKS", "SINCOS_LIMIT",
]


# ---------------------------------------------------------------------------
# NumPy's integer and float division semantics, for generated kernels.
# ---------------------------------------------------------------------------
@_fn
def _divmod_f(a, b):
    """NumPy's ``npy_divmod``: floor quotient and remainder with the divisor's sign."""
    mod = np.fmod(a, b)
    if b == 0.0:
        return a / b, mod
    div = (a - mod) / b
    if mod != 0.0:
        if (b < 0.0) != (mod < 0.0):
            mod += b
            div -= 1.0
    else:
        mod = math.copysign(0.0, b)
    if div != 0.0:
        fl = np.floor(div)
        if div - fl > 0.5:
            fl += 1.0
    else:
        fl = math.copysign(0.0, a / b)
    return fl, mod


@_fn
def floordiv_f(a, b):
    """``np.floor_divide`` on floats (``a / b`` when ``b == 0``)."""
    return _divmod_f(a, b)[0]


@_fn
def mod_f(a, b):
    """``np.mod`` on floats (``fmod`` when ``b == 0``: NaN)."""
    if b == 0.0:
        return np.fmod(a, b)
    return _divmod_f(a, b)[1]


@_fn
def floordiv_i(a, b):
    """``np.floor_divide`` on signed integers: the smallest value divided by -1 wraps to itself.

    LLVM's signed division is undefined for that one pair (the hardware
    traps), and Numba's guard gives 0; NumPy gives the wrapped result.
    Negation wraps in two's complement, so ``-a`` is NumPy's answer.
    """
    if b == -1:
        return -a
    return a // b


@njit(error_model="numpy")
def ipow(a, b):
    """``np.power`` on int64: wraps on overflow; a negative exponent is an error, as in NumPy."""
    if b < 0:
        raise ValueError("Integers to negative integer powers are not allowed.")
    result = 1
    base = a
    while b > 0:
        if b & 1:
            result = result * base
        base = base * base
        b >>= 1
    return result
