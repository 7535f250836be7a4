"""Derivatives of special functions that need a series of their own.

``d/dk gammainc(k, x)`` has no closed form in other special functions. It
is summed here from the power series

    P(k, x) = sum_n t_n,   t_n = x**(k+n) exp(-x) / gamma(k+n+1),

whose term-wise derivative is ``t_n * (log(x) - psi(k+n+1))``. The terms
peak near ``n = x - k``, so the sum starts at the peak (computed in log
space: the first terms may underflow while the peak does not) and runs in
both directions until terms stop mattering; ``t_n`` and ``psi(k+n+1)`` are
updated by recurrences. The error is a few ulp of the largest term. Far in
the upper tail (``x > 40``, ``x > 4k``) that sum cancels, and the asymptotic
expansion of ``Q = 1 - P`` is differentiated instead.

``gammainc_dk`` uses only the ``math`` module, so the same function is the
reference implementation (vectorised with NumPy) and, compiled by Numba,
the fast-path kernel: both paths agree by construction.
"""

from __future__ import annotations

import math

import numpy as np

from lucent.scalar.basic import BinaryScalarOp, upgrade_to_float_no_complex


def gammainc_dk(k, x):
    """``d/dk gammainc(k, x)`` for ``k > 0``, ``x >= 0`` (NaN outside)."""

    def digamma(a):
        # a >= 1: recurrence up to a >= 10, then the asymptotic series.
        shift = 0.0
        while a < 10.0:
            shift -= 1.0 / a
            a += 1.0
        inv2 = 1.0 / (a * a)
        tail = inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (1.0 / 252 - inv2 * (1.0 / 240 - inv2 / 132))))
        return math.log(a) - 0.5 / a - tail + shift

    if not (k > 0.0) or not (x >= 0.0) or math.isinf(k):
        return math.nan
    if x == 0.0 or math.isinf(x):
        return 0.0
    logx = math.log(x)
    if x > 40.0 and x > 4.0 * k:
        # Far in the upper tail P is 1 to within its rounding, so the lower
        # series cancels; differentiate Q's asymptotic expansion instead:
        # Q = exp((k-1) log x - x - lgamma(k)) * sum_j c_j / x**j, with
        # c_j = (k-1)(k-2)...(k-j); c'_j follows from the same recurrence.
        c = 1.0
        dc = 0.0
        s = 1.0
        ds = 0.0
        xp = 1.0
        prev = math.inf
        for j in range(1, 200):
            dc = dc * (k - j) + c
            c = c * (k - j)
            xp /= x
            size = abs(c * xp) + abs(dc * xp)
            if size > prev:
                break
            s += c * xp
            ds += dc * xp
            prev = size
            if size < 1e-17 * (abs(s) + abs(ds)):
                break
        # digamma(k) for k possibly < 1: shift by one first.
        psik = digamma(k + 1.0) - 1.0 / k
        scale = math.exp((k - 1.0) * logx - x - math.lgamma(k))
        return -scale * ((logx - psik) * s + ds)
    n0 = math.floor(x - k) if x > k else 0.0
    a = k + n0 + 1.0
    psi0 = digamma(a)
    t0 = math.exp((k + n0) * logx - x - math.lgamma(a))
    total = t0 * (logx - psi0)
    # Forward: n = n0 + 1, n0 + 2, ...
    t = t0
    psi = psi0
    m = a
    for _ in range(100000):
        t *= x / m
        psi += 1.0 / m
        m += 1.0
        total += t * (logx - psi)
        if t < 1e-17 * abs(total) + 1e-300 and m > x:
            break
    # Backward: n = n0 - 1, ..., 0.
    t = t0
    psi = psi0
    m = a - 1.0
    n = n0
    while n > 0.0:
        t *= m / x
        psi -= 1.0 / m
        m -= 1.0
        n -= 1.0
        total += t * (logx - psi)
        if t < 1e-17 * abs(total) + 1e-300:
            break
    return total


_gammainc_dk_vec = np.vectorize(gammainc_dk, otypes=["float64"])


class GammaIncDk(BinaryScalarOp):
    """``d/dk gammainc(k, x)`` as an op (see the module docstring)."""

    nin = 2
    name = "gammainc_dk"
    output_types_preference = staticmethod(upgrade_to_float_no_complex)
    compute_in_output_dtype = True

    def impl(self, k, x):
        return _gammainc_dk_vec(np.asarray(k, dtype="float64"), np.asarray(x, dtype="float64"))

    def L_op(self, inputs, outputs, output_grads):
        from lucent.gradient import grad_not_implemented

        return [grad_not_implemented(self, i, v, "second derivatives of gammainc") for i, v in enumerate(inputs)]


gammainc_dk_op = GammaIncDk(name="gammainc_dk")


def gammainc_grad(k, x):
    """The scalar graph of ``d/dk gammainc(k, x)``."""
    return gammainc_dk_op(k, x)


def gammaincc_grad(k, x):
    """``d/dk gammaincc(k, x) = -d/dk gammainc(k, x)``."""
    from lucent.scalar.arith import neg

    return neg(gammainc_dk_op(k, x))


__all__ = ["GammaIncDk", "gammainc_dk", "gammainc_grad", "gammaincc_grad"]
