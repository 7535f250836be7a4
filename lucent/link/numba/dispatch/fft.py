"""Numba kernels of ``RFFTOp``, ``IRFFTOp`` and ``Fourier``: a native FFT.

Numba has no ``np.fft``, and calling NumPy's pocketfft would mean leaving
native code, so the transforms are written here: an iterative radix-2
Cooley-Tukey FFT for power-of-two lengths, and Bluestein's algorithm for
every other length (the length-n transform as a convolution with a chirp,
computed with power-of-two FFTs of length >= 2n - 1). Both are O(n log n).
The chirp exponent ``pi k^2 / n`` is reduced modulo 2n in integers first,
so long transforms keep full precision.

An n-d transform is a sequence of 1-d transforms over each axis: the array
is viewed as (before, length, after) and every line along the axis is
copied to a buffer, transformed, and copied back (cropped or zero-padded to
the requested length). All transforms are unnormalised; ``inverse`` flips
the sign of the exponent.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from lucent.link.numba.dispatch.basic import numba_funcify
from lucent.link.numba.dispatch.shape import INT, dtype_text, make_kernel
from lucent.tensor.fft import IRFFTOp, RFFTOp
from lucent.tensor.fourier import Fourier

FFT_VERSION = 1

#: How the generated kernels reach the transforms below (compiled once per
#: process and cached on disk, instead of once per generated kernel). The
#: version is part of the kernel text, so changing the transforms (and
#: bumping it) gives new kernels.
_IMPORTS = f"# fft transforms v{FFT_VERSION}\nfrom lucent.link.numba.dispatch.fft import fft_axis, irfft_last"

@numba.njit(cache=True, no_cfunc_wrapper=True)
def fft_pow2(buf, inverse):
    """In-place unnormalised FFT of ``buf`` (complex128, length a power of two)."""
    n = buf.shape[0]
    j = 0
    for i in range(1, n):
        bit = n >> 1
        while j & bit:
            j ^= bit
            bit >>= 1
        j |= bit
        if i < j:
            t = buf[i]
            buf[i] = buf[j]
            buf[j] = t
    sign = 1.0 if inverse else -1.0
    length = 2
    while length <= n:
        ang = sign * 2.0 * np.pi / length
        half = length // 2
        for k in range(half):
            w = complex(math.cos(ang * k), math.sin(ang * k))
            for start in range(0, n, length):
                u = buf[start + k]
                v = buf[start + k + half] * w
                buf[start + k] = u + v
                buf[start + k + half] = u - v
        length *= 2


@numba.njit(cache=True, no_cfunc_wrapper=True)
def fft_plan(n, inverse):
    """What ``fft_any`` needs for length ``n``: the chirp and the FFT of its convolution partner."""
    if n & (n - 1) == 0:
        return 1, np.empty(0, np.complex128), np.empty(0, np.complex128)
    m = 1
    while m < 2 * n - 1:
        m *= 2
    sign = 1.0 if inverse else -1.0
    chirp = np.empty(n, np.complex128)
    for k in range(n):
        e = (k * k) % (2 * n)
        ang = sign * np.pi * e / n
        chirp[k] = complex(math.cos(ang), math.sin(ang))
    partner = np.zeros(m, np.complex128)
    partner[0] = chirp[0].conjugate()
    for k in range(1, n):
        partner[k] = chirp[k].conjugate()
        partner[m - k] = chirp[k].conjugate()
    fft_pow2(partner, False)
    return m, chirp, partner


@numba.njit(cache=True, no_cfunc_wrapper=True)
def fft_any(buf, inverse, m, chirp, partner, work):
    """In-place unnormalised FFT of ``buf`` of any length (plan from ``fft_plan``)."""
    n = buf.shape[0]
    if chirp.shape[0] == 0:
        fft_pow2(buf, inverse)
        return
    for k in range(m):
        work[k] = buf[k] * chirp[k] if k < n else 0j
    fft_pow2(work, False)
    for k in range(m):
        work[k] *= partner[k]
    fft_pow2(work, True)
    for k in range(n):
        buf[k] = work[k] / m * chirp[k]


@numba.njit(cache=True, no_cfunc_wrapper=True)
def fft_lines(x3, n_new, inverse):
    """Transform every line of ``x3`` (before, length, after) along its middle axis, to length ``n_new``."""
    pre, n_old, post = x3.shape
    out = np.empty((pre, n_new, post), np.complex128)
    buf = np.empty(n_new, np.complex128)
    m, chirp, partner = fft_plan(n_new, inverse)
    work = np.empty(m, np.complex128)
    for p in range(pre):
        for q in range(post):
            for t in range(n_new):
                buf[t] = x3[p, t, q] if t < n_old else 0j
            fft_any(buf, inverse, m, chirp, partner, work)
            for t in range(n_new):
                out[p, t, q] = buf[t]
    return out


@numba.njit(cache=True, no_cfunc_wrapper=True)
def fft_axis(x, sh, axis, n_new, inverse):
    """Transform the flat C-ordered array ``x`` of shape ``sh`` along ``axis``; updates ``sh``."""
    pre = 1
    for d in range(axis):
        pre *= sh[d]
    post = 1
    for d in range(axis + 1, sh.shape[0]):
        post *= sh[d]
    res = fft_lines(x.reshape((pre, sh[axis], post)), n_new, inverse)
    sh[axis] = n_new
    return res.ravel()


@numba.njit(cache=True, no_cfunc_wrapper=True)
def irfft_last(x, sh, n):
    """Real inverse FFT (unnormalised) of the half spectra along the last axis of ``x`` (shape ``sh``)."""
    nd = sh.shape[0]
    pre = 1
    for d in range(nd - 1):
        pre *= sh[d]
    h_old = sh[nd - 1]
    x2 = x.reshape((pre, h_old))
    h = n // 2 + 1
    out = np.empty((pre, n), np.float64)
    buf = np.empty(n, np.complex128)
    m, chirp, partner = fft_plan(n, True)
    work = np.empty(m, np.complex128)
    for p in range(pre):
        for t in range(n):
            buf[t] = 0j
        for k in range(min(h, h_old)):
            buf[k] = x2[p, k]
        for k in range(1, min((n + 1) // 2, h_old)):
            buf[n - k] = x2[p, k].conjugate()
        fft_any(buf, True, m, chirp, partner, work)
        for t in range(n):
            out[p, t] = buf[t].real
    sh[nd - 1] = n
    return out.ravel()



def _shape_tuple(nd, last=None):
    items = [f"sh[{d}]" for d in range(nd)]
    if last is not None:
        items.append(last)
    return "(" + ", ".join(items) + ",)"


def _check_s(name, nd_transformable):
    return [
        "L = s.shape[0]",
        f"if L < 1 or L > {nd_transformable}:",
        f"    raise ValueError('{name}: the lengths s must name between 1 and {nd_transformable} axes')",
        "for i in range(L):",
        "    if s[i] < 1:",
        f"        raise ValueError('{name}: invalid number of data points specified in s')",
    ]


@numba_funcify.register(RFFTOp, version=FFT_VERSION)
def numba_funcify_RFFTOp(op, node, **kwargs):
    """``rfftn`` over the last ``len(s)`` axes: complex FFTs per axis, then the first half of the last."""
    nd = node.inputs[0].type.ndim
    out_dt = dtype_text(node.outputs[0].type.dtype)
    body = _check_s("RFFTOp", nd) + [
        "sh = np.array(a.shape, dtype=np.int64)",
        "x = np.empty(a.size, np.complex128)",
        "flat = np.ascontiguousarray(a).ravel()",
        "for i in range(a.size):",
        "    x[i] = flat[i]",
        f"for ax in range({nd} - L, {nd}):",
        f"    x = fft_axis(x, sh, ax, s[ax - ({nd} - L)], False)",
        f"n_last = sh[{nd - 1}]",
        "h = n_last // 2 + 1",
        "pre = x.size // n_last",
        "x2 = x.reshape((pre, n_last))",
        f"out = np.empty((pre, h, 2), {out_dt})",
        "for p in range(pre):",
        "    for k in range(h):",
        "        out[p, k, 0] = x2[p, k].real",
        "        out[p, k, 1] = x2[p, k].imag",
        f"sh[{nd - 1}] = h",
        f"return out.reshape({_shape_tuple(nd, '2')})",
    ]
    return make_kernel("rfft", ["a", "s"], body, helpers=[_IMPORTS])


@numba_funcify.register(IRFFTOp, version=FFT_VERSION)
def numba_funcify_IRFFTOp(op, node, **kwargs):
    """Unnormalised ``irfftn``: complex inverse FFTs over the leading transformed axes, real one over the last."""
    nd = node.inputs[0].type.ndim - 1
    out_dt = dtype_text(node.outputs[0].type.dtype)
    shape_items = ", ".join(f"a.shape[{d}]" for d in range(nd))
    body = _check_s("IRFFTOp", nd) + [
        "if a.shape[-1] != 2:",
        "    raise ValueError('IRFFTOp: the last axis must hold the real and imaginary parts (length 2)')",
        f"sh = np.array(({shape_items},), dtype=np.int64)",
        "flat = np.ascontiguousarray(a).reshape((-1, 2))",
        "x = np.empty(flat.shape[0], np.complex128)",
        "for i in range(flat.shape[0]):",
        "    x[i] = complex(flat[i, 0], flat[i, 1])",
        f"for ax in range({nd} - L, {nd - 1}):",
        f"    x = fft_axis(x, sh, ax, s[ax - ({nd} - L)], True)",
        "r = irfft_last(x, sh, s[L - 1])",
        f"return r.astype({out_dt}).reshape({_shape_tuple(nd)})",
    ]
    return make_kernel("irfft", ["a", "s"], body, helpers=[_IMPORTS])


@numba_funcify.register(Fourier, version=FFT_VERSION)
def numba_funcify_Fourier(op, node, **kwargs):
    """``np.fft.fft(a, n, axis)`` as complex128."""
    nd = node.inputs[0].type.ndim
    body = [
        f"n_ = {INT('n')}",
        f"ax = {INT('axis')}",
        f"if ax < 0 or ax >= {nd}:",
        f"    raise ValueError('Fourier: axis out of range for an array of dimension {nd}')",
        "if n_ < 1:",
        "    raise ValueError('Fourier: invalid number of data points')",
        "sh = np.array(a.shape, dtype=np.int64)",
        "x = np.empty(a.size, np.complex128)",
        "flat = np.ascontiguousarray(a).ravel()",
        "for i in range(a.size):",
        "    x[i] = flat[i]",
        "x = fft_axis(x, sh, ax, n_, False)",
        f"return x.reshape({_shape_tuple(nd)})",
    ]
    return make_kernel("fourier_fft", ["a", "n", "axis"], body, helpers=[_IMPORTS])


__all__ = ["numba_funcify_Fourier", "numba_funcify_IRFFTOp", "numba_funcify_RFFTOp"]
