"""Complex-number functions for generated kernels, with NumPy's results.

Numba compiles ``cmath`` and complex arithmetic natively, so a kernel on
complex64/complex128 needs no object mode. What this module adds is what
``cmath`` lacks or does differently from NumPy's ufuncs:

* functions NumPy has and ``cmath`` has not (``expm1``, ``log1p``,
  ``exp2``, ``log2``), written as NumPy writes them (``expm1`` keeps its
  accuracy for small arguments through the real ``expm1``);
* the special values where ``cmath`` raises and NumPy returns a value:
  ``log(0)`` is ``-inf`` (and ``log10``/``log2``/``log1p(-1)`` likewise),
  ``1 / 0`` is ``inf``/``nan`` parts rather than ``ZeroDivisionError``;
* NumPy's ordering of complex numbers (by real part, then imaginary part)
  for ``<``, ``<=``, ``>``, ``>=``, ``sign(z) = z / |z|``, and NumPy's
  power (exact repeated products for small integer exponents).

A complex64 result is computed in complex128 and rounded once, as the float
functions compute float32 in float64.
"""

from __future__ import annotations

import cmath
import math

from numba import njit

_LN2 = math.log(2.0)


@njit(cache=True)
def c_div(a, b):
    """``a / b`` with NumPy's (C99's) results for a zero divisor instead of an exception."""
    if b.real == 0.0 and b.imag == 0.0:
        # NumPy divides each part by the zero: 0/0 is nan, x/0 is a signed inf
        re = a.real / 0.0 if a.real != 0.0 else math.nan
        im = a.imag / 0.0 if a.imag != 0.0 else math.nan
        return complex(re, im)
    return a / b


@njit(cache=True)
def c_log(z):
    if z.real == 0.0 and z.imag == 0.0:
        return complex(-math.inf, math.atan2(z.imag, z.real))
    return cmath.log(z)


@njit(cache=True)
def c_log10(z):
    w = c_log(z)
    return complex(w.real / math.log(10.0), w.imag / math.log(10.0))


@njit(cache=True)
def c_log2(z):
    w = c_log(z)
    return complex(w.real / _LN2, w.imag / _LN2)


@njit(cache=True)
def c_log1p(z):
    """``log(1 + z)`` as NumPy computes it: modulus and argument of ``1 + z``."""
    x = z.real + 1.0
    y = z.imag
    if x == 0.0 and y == 0.0:
        return complex(-math.inf, math.atan2(y, x))
    return complex(math.log(math.hypot(x, y)), math.atan2(y, x))


@njit(cache=True)
def c_expm1(z):
    """``exp(z) - 1`` keeping the accuracy of the real ``expm1`` near 0 (NumPy's formula)."""
    x = z.real
    y = z.imag
    half = math.sin(y / 2.0)
    return complex(math.expm1(x) * math.cos(y) - 2.0 * half * half, math.exp(x) * math.sin(y))


@njit(cache=True)
def c_exp2(z):
    return cmath.exp(complex(z.real * _LN2, z.imag * _LN2))


@njit(cache=True)
def c_reciprocal(z):
    return c_div(complex(1.0, 0.0), z)


@njit(cache=True)
def c_sign(z):
    """``z / |z|`` (NumPy 2's sign of a complex number): 0 for 0, nan for nan, and the
    direction of the infinite part when one part is infinite."""
    x, y = z.real, z.imag
    r = math.hypot(x, y)
    if r != r:
        return complex(math.nan, math.nan)
    if r == math.inf:
        if abs(x) == math.inf:
            if abs(y) == math.inf:
                return complex(math.nan, math.nan)
            return complex(math.copysign(1.0, x), 0.0)
        return complex(0.0, math.copysign(1.0, y))
    if r == 0.0:
        return complex(0.0, 0.0)
    return complex(x / r, y / r)


@njit(cache=True)
def c_pow(a, b):
    """``a ** b`` as NumPy computes it: exact products for small integer powers (so
    ``inf`` and signed zeros come out as with real arithmetic), ``exp(b log a)`` else."""
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    if br == 0.0 and bi == 0.0:
        return complex(1.0, 0.0)
    if ar == 0.0 and ai == 0.0:
        if br > 0.0 and bi == 0.0:
            return complex(0.0, 0.0)
        return complex(math.nan, math.nan)
    if bi == 0.0 and br == math.floor(br) and abs(br) < 100.0:
        n = int(br)
        if n == 1:
            return a
        if n == 2:
            return a * a
        if n == 3:
            return a * a * a
        m = -n if n < 0 else n
        result = complex(1.0, 0.0)
        p = a
        while True:
            if m & 1:
                result = result * p
            m >>= 1
            if m == 0:
                break
            p = p * p
        if n < 0:
            return c_div(complex(1.0, 0.0), result)
        return result
    return cmath.exp(b * c_log(a))


@njit(cache=True)
def c_isnan(z):
    return z.real != z.real or z.imag != z.imag


@njit(cache=True)
def c_isinf(z):
    return abs(z.real) == math.inf or abs(z.imag) == math.inf


@njit(cache=True)
def c_lt(a, b):
    """NumPy's ``a < b`` for complex numbers (real parts first, nan compares false)."""
    if a.real < b.real:
        return a.imag == a.imag and b.imag == b.imag
    return a.real == b.real and a.imag < b.imag


@njit(cache=True)
def c_le(a, b):
    if a.real < b.real:
        return a.imag == a.imag and b.imag == b.imag
    return a.real == b.real and a.imag <= b.imag


@njit(cache=True)
def c_gt(a, b):
    return c_lt(b, a)


@njit(cache=True)
def c_ge(a, b):
    return c_le(b, a)


#: Complex versions of the unary functions, by NumPy ufunc name: a format text
#: taking the argument (already complex128).
UNARY = {
    "exp": "cmath.exp({})",
    "expm1": "c_expm1({})",
    "exp2": "c_exp2({})",
    "log": "c_log({})",
    "log2": "c_log2({})",
    "log10": "c_log10({})",
    "log1p": "c_log1p({})",
    "sqrt": "cmath.sqrt({})",
    "reciprocal": "c_reciprocal({})",
    "sin": "cmath.sin({})",
    "cos": "cmath.cos({})",
    "tan": "cmath.tan({})",
    "tanh": "cmath.tanh({})",
    "arcsin": "cmath.asin({})",
    "arccos": "cmath.acos({})",
    "arctan": "cmath.atan({})",
    "sinh": "cmath.sinh({})",
    "cosh": "cmath.cosh({})",
    "arcsinh": "cmath.asinh({})",
    "arccosh": "cmath.acosh({})",
    "arctanh": "cmath.atanh({})",
}

#: NumPy's ordering comparisons of complex numbers, by operator.
COMPARE = {"<": "c_lt", "<=": "c_le", ">": "c_gt", ">=": "c_ge"}

#: The import line of a kernel using any of the above.
IMPORT = (
    "import cmath\n"
    "from lucent.link.numba.dispatch.complex_math import (c_div, c_log, c_log10, c_log2, c_log1p, "
    "c_expm1, c_exp2, c_reciprocal, c_pow, c_sign, c_isnan, c_isinf, c_lt, c_le, c_gt, c_ge)\n"
)


def complex_dtype(dtype) -> bool:
    return str(dtype) in ("complex64", "complex128")


__all__ = [
    "COMPARE",
    "IMPORT",
    "UNARY",
    "c_div",
    "c_exp2",
    "c_expm1",
    "c_ge",
    "c_gt",
    "c_isinf",
    "c_isnan",
    "c_le",
    "c_log",
    "c_log10",
    "c_log1p",
    "c_log2",
    "c_lt",
    "c_pow",
    "c_reciprocal",
    "c_sign",
    "complex_dtype",
]
