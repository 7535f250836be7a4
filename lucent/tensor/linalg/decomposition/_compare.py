"""Comparing factors that are unique only up to a sign (or a complex phase) per vector.

An eigenvector or a singular vector may be multiplied by -1 (by any unit
complex number) and stay one: two correct LAPACK calls, or NumPy and the
Numba kernel, may return different ones. The decomposition ops attach
``columns_equal_up_to_phase`` to such outputs as ``tag.values_eq_approx``,
the comparison DebugMode reads, so it compares what is unique: each
vector after aligning its phase with the reference's.
"""

from __future__ import annotations

import numpy as np


def _align(expected, value, axis):
    """``value`` with each vector along ``axis`` (-2: columns, -1: rows) turned to ``expected``'s phase."""
    inner = np.sum(np.conj(expected) * value, axis=axis, keepdims=True)
    mag = np.abs(inner)
    phase = np.where(mag > 0, inner / np.where(mag > 0, mag, 1), 1)
    return value / phase


def _compare(expected, value, axis):
    expected, value = np.asarray(expected), np.asarray(value)
    if expected.shape != value.shape or expected.dtype != value.dtype:
        return False
    if expected.size == 0:
        return True
    finite = np.isfinite(expected).all() and np.isfinite(value).all()
    if not finite:
        return bool(np.array_equal(np.isnan(expected), np.isnan(value)))
    tol = 1e-4 if expected.dtype in (np.float32, np.complex64) else 1e-7
    return bool(np.allclose(_align(expected, value, axis), expected, rtol=tol, atol=tol))


def columns_equal_up_to_phase(expected, value):
    """Whether the columns of ``value`` equal ``expected``'s, each up to a sign / unit phase."""
    return _compare(expected, value, -2)


def rows_equal_up_to_phase(expected, value):
    """Whether the rows of ``value`` equal ``expected``'s, each up to a sign / unit phase."""
    return _compare(expected, value, -1)
