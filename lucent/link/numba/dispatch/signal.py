"""Numba kernels of ``Convolve1d`` and ``Convolve2d``: direct convolution in native loops.

1-d: the longer input is the signal ``x`` (length n), the shorter the kernel
``y`` (length m); the output is the full convolution ``out[j] = sum_k
x[j - m + 1 + k] * w[k]`` with ``w`` the reversed kernel, for ``j`` in the
range the mode keeps. Where every tap falls inside the signal (the whole
of a valid convolution, the interior of a full one) four outputs are
computed together (``valid_dots``): their sums stay in registers while the
taps and the signal stream past once, and the sums may be reassociated
(fast-math limited to ``reassoc``/``contract`` in that loop) so that LLVM
vectorises them. The few outputs at the ends of a full convolution take a
bounded loop.

2-d: the same formula over rows and columns, with the column loop innermost.
"""

from __future__ import annotations

import numba
import numpy as np

from numba.extending import overload

from lucent.link.numba.dispatch.basic import numba_funcify
from lucent.link.numba.dispatch.memory import empty_output
from lucent.link.numba.dispatch.shape import dtype_text, make_kernel
from lucent.tensor.signal.conv import Convolve1d, Convolve2d

SIGNAL_VERSION = 3

#: How the generated kernels reach the loops below (compiled once per process
#: and cached on disk); the version in the text renews the kernels when they change.
_IMPORTS = f"# convolution loops v{SIGNAL_VERSION}\nfrom lucent.link.numba.dispatch.signal import conv1d_core, conv2d_core"

@numba.njit(cache=True, no_cfunc_wrapper=True, boundscheck=False, fastmath={"reassoc", "contract"})
def valid_dots(xs, w, out, offset, count, zero):
    """``out[offset + i] = sum_k xs[i + k] * w[k]`` for ``i < count``, four outputs at a time.

    ``zero`` is 0 in the output's dtype (``out`` may be uninitialised).

    The four running sums stay in registers while the taps stream once per
    group, and reassociation (this function's only fast-math flags) lets
    LLVM vectorise the sums over the taps; NaN and infinity keep their meaning.
    """
    m = w.shape[0]
    i = 0
    while i + 4 <= count:
        a0 = zero
        a1 = a0
        a2 = a0
        a3 = a0
        for k in range(m):
            wk = w[k]
            a0 += xs[i + k] * wk
            a1 += xs[i + 1 + k] * wk
            a2 += xs[i + 2 + k] * wk
            a3 += xs[i + 3 + k] * wk
        out[offset + i] = a0
        out[offset + i + 1] = a1
        out[offset + i + 2] = a2
        out[offset + i + 3] = a3
        i += 4
    while i < count:
        acc = zero
        for k in range(m):
            acc += xs[i + k] * w[k]
        out[offset + i] = acc
        i += 1


def contiguous_as(x, sample):  # pragma: no cover - replaced by the overload
    raise NotImplementedError


@overload(contiguous_as)
def _ol_contiguous_as(x, sample):
    """``x`` itself when it is contiguous in ``sample``'s dtype, else a contiguous copy in it.

    Decided when the kernel is typed: a 10M-element signal that needs no
    conversion is not copied (the copy and its page faults cost more than
    the convolution's arithmetic).
    """
    if x.layout == "C" and x.dtype == sample.dtype:
        return lambda x, sample: x

    def copy(x, sample):
        out = np.empty(x.shape[0], sample.dtype)
        for i in range(x.shape[0]):
            out[i] = x[i]
        return out

    return copy


@numba.njit(cache=True, no_cfunc_wrapper=True, boundscheck=False)
def conv1d_core(x, y, full, out_dtype_sample):
    """Full (``full``) or valid convolution of 1-d ``x`` and ``y`` (any layout and dtypes)."""
    # Both in the output dtype (one array type, so they can be swapped), contiguous.
    xa = contiguous_as(x, out_dtype_sample)
    ya = contiguous_as(y, out_dtype_sample)
    if xa.shape[0] < ya.shape[0]:
        xa, ya = ya, xa
    n = xa.shape[0]
    m = ya.shape[0]
    if m == 0:
        raise ValueError("Convolve1d: inputs cannot be empty")
    w = ya[::-1].copy()
    xs = xa
    if full:
        j0 = 0
        j1 = n + m - 1
    else:
        j0 = m - 1
        j1 = n
    # Every entry is written below: the interior by valid_dots, the ends of a full one after it.
    out = empty_output(j1 - j0, out_dtype_sample.dtype)
    # Interior: every tap inside the signal (full index j = i + m - 1).
    zero = out_dtype_sample[0]
    valid_dots(xs, w, out, (m - 1) - j0, n - m + 1, zero)
    # Ends of a full convolution: only the taps inside the signal.
    if full:
        for j in range(0, m - 1):
            acc = zero
            for k in range(m - 1 - j, m):
                acc += xs[j - m + 1 + k] * w[k]
            out[j] = acc
        for j in range(n, n + m - 1):
            acc = zero
            for k in range(0, n + m - 1 - j):
                acc += xs[j - m + 1 + k] * w[k]
            out[j] = acc
    return out


@numba.njit(cache=True, no_cfunc_wrapper=True, boundscheck=False)
def conv2d_core(x, y, full, out_dtype_sample):
    """Full (``full``) or valid 2-d convolution; in valid mode the larger input is the signal."""
    x = x.astype(out_dtype_sample.dtype)
    y = y.astype(out_dtype_sample.dtype)
    if not full and (x.shape[0] < y.shape[0] or x.shape[1] < y.shape[1]):
        x, y = y, x
    n0, n1 = x.shape
    m0, m1 = y.shape
    if m0 == 0 or m1 == 0 or n0 == 0 or n1 == 0:
        raise ValueError("Convolve2d: inputs cannot be empty")
    if not full and (n0 < m0 or n1 < m1):
        raise ValueError("Convolve2d: in valid mode one input must be at least as large as the other in every dimension")
    if full:
        o0 = n0 + m0 - 1
        o1 = n1 + m1 - 1
        s0 = 0
        s1 = 0
    else:
        o0 = n0 - m0 + 1
        o1 = n1 - m1 + 1
        s0 = m0 - 1
        s1 = m1 - 1
    out = np.zeros((o0, o1), out_dtype_sample.dtype)
    for i in range(o0):
        fi = i + s0
        for a in range(m0):
            r = fi - a
            if r < 0 or r >= n0:
                continue
            for b in range(m1):
                yab = y[a, b]
                c_lo = max(0, b - s1)
                c_hi = min(o1, n1 + b - s1)
                for j in range(c_lo, c_hi):
                    out[i, j] += x[r, j + s1 - b] * yab
    return out



def _sample(dtype):
    return f"np.zeros(1, {dtype_text(dtype)})"


@numba_funcify.register(Convolve1d, version=SIGNAL_VERSION)
def numba_funcify_Convolve1d(op, node, **kwargs):
    """Direct 1-d convolution (blocked, vectorised interior)."""
    body = [f"return conv1d_core(x, y, bool(full_mode[()]), {_sample(node.outputs[0].type.dtype)})"]
    return make_kernel("convolve1d", ["x", "y", "full_mode"], body, helpers=[_IMPORTS])


@numba_funcify.register(Convolve2d, version=SIGNAL_VERSION)
def numba_funcify_Convolve2d(op, node, **kwargs):
    """Direct 2-d convolution (``method`` only matters on the reference path)."""
    body = [f"return conv2d_core(x, y, bool(full_mode[()]), {_sample(node.outputs[0].type.dtype)})"]
    return make_kernel("convolve2d", ["x", "y", "full_mode"], body, helpers=[_IMPORTS])


__all__ = ["numba_funcify_Convolve1d", "numba_funcify_Convolve2d"]
