"""Radix sorting of one row, compiled once and shared by every sort kernel.

Numba's ``np.sort`` is a generic quicksort, about ten times slower than
NumPy's vectorised one on large float arrays. Sorting numbers does not need
comparisons: every int, bool and float maps to an unsigned 64-bit *key*
whose unsigned order is the value order, and keys sort by their digits.

* The key of a float flips all its bits when the sign is set and only the
  sign bit otherwise, so negative floats come first, in reverse magnitude.
  NumPy orders ``-0.0`` equal to ``0.0`` and every NaN after ``+inf``; the
  key does the same by giving ``-0.0`` the key of ``0.0`` and every NaN the
  largest key. A float32 key is made the same way from its 32 bits.
* A signed integer's key is its int64 value with the sign bit flipped;
  unsigned integers and bools are their own key.
* Large rows are sorted by least-significant-digit radix sort, eight bits
  at a time: one pass counts all eight digits, then each digit is a stable
  scatter into a second buffer. A digit that every key shares moves
  nothing and is skipped, so small integers take one or two passes.
* Middle-sized rows use most-significant-digit radix sort: a bucket is split
  on its leading digit, and the small buckets it makes finish by insertion
  sort while they are still in cache. Tiny rows are insertion sorted.

The functions are ordinary Numba functions cached on disk: every sort
kernel calls the same compiled code (one specialisation per dtype) instead
of compiling its own copy. All three sorts are stable, so ``argsort`` (which carries the original positions
with the keys) gives the order of NumPy's stable sort for every kind, and
``sort`` has NumPy's stable result too: the keys lose which zeros were
negative and what the NaNs held, so the value kernel writes the zeros and
the NaNs back from the input, in their original order.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

#: Bumped when the sorting changes meaning (part of the sort kernels' text).
RADIX_VERSION = 2

#: Rows up to this length are insertion sorted.
TINY = 16
#: Rows shorter than this use the MSD sort, longer ones the LSD sort.
MIDDLE = 1 << 15
#: MSD buckets up to this size finish by insertion sort.
LEAF = 24

_OPTS = {"cache": True, "no_cfunc_wrapper": True, "error_model": "numpy"}


# --------------------------------------------------------------------------- #
# Keys: an order-preserving uint64 per value
# --------------------------------------------------------------------------- #
def _float_facts(width):
    top = 1 << (width - 1)
    return {"top": top, "all": (1 << width) - 1, "abs": top - 1, "nan": (1 << width) - 1,
            "inf": 0x7FF0000000000000 if width == 64 else 0x7F800000}


def row_keys(x, a):  # pragma: no cover - replaced by the overload
    raise NotImplementedError


@overload(row_keys)
def _ol_row_keys(x, a):
    """``a[i]`` = the key of ``x[i]`` (see the module docstring); ``x`` is a contiguous row."""
    dt = x.dtype
    if isinstance(dt, types.Float):
        f = _float_facts(dt.bitwidth)
        uint = np.uint64 if dt.bitwidth == 64 else np.uint32
        top, allm, absm, inf = np.uint64(f["top"]), np.uint64(f["all"]), np.uint64(f["abs"]), np.uint64(f["inf"])
        nan, zero = np.uint64(f["nan"]), np.uint64(0)

        def impl(x, a):
            xb = x.view(uint)
            for i in range(x.shape[0]):
                b = np.uint64(xb[i])
                mag = b & absm
                if mag > inf:
                    a[i] = nan
                elif mag == zero:
                    a[i] = top
                elif b & top:
                    a[i] = b ^ allm
                else:
                    a[i] = b | top

        return impl
    if isinstance(dt, types.Boolean):
        def impl_bool(x, a):
            for i in range(x.shape[0]):
                a[i] = np.uint64(1) if x[i] else np.uint64(0)

        return impl_bool
    if isinstance(dt, types.Integer) and dt.signed:
        flip = np.uint64(0x8000000000000000)

        def impl_signed(x, a):
            for i in range(x.shape[0]):
                a[i] = np.uint64(np.int64(x[i])) ^ flip

        return impl_signed
    if isinstance(dt, types.Integer):
        def impl_unsigned(x, a):
            for i in range(x.shape[0]):
                a[i] = np.uint64(x[i])

        return impl_unsigned
    return None


def row_values(a, out):  # pragma: no cover - replaced by the overload
    raise NotImplementedError


@overload(row_values)
def _ol_row_values(a, out):
    """``out[i]`` = the value whose key is ``a[i]``; ``out`` is a contiguous row."""
    dt = out.dtype
    if isinstance(dt, types.Float):
        f = _float_facts(dt.bitwidth)
        uint = np.uint64 if dt.bitwidth == 64 else np.uint32
        top, allm = np.uint64(f["top"]), np.uint64(f["all"])

        def impl(a, out):
            ob = out.view(uint)
            for i in range(out.shape[0]):
                k = a[i]
                ob[i] = uint(k ^ top if k & top else k ^ allm)

        return impl
    if isinstance(dt, types.Boolean):
        def impl_bool(a, out):
            for i in range(out.shape[0]):
                out[i] = a[i] != np.uint64(0)

        return impl_bool
    np_dt = getattr(np, str(dt))
    if isinstance(dt, types.Integer) and dt.signed:
        flip = np.uint64(0x8000000000000000)

        def impl_signed(a, out):
            for i in range(out.shape[0]):
                out[i] = np_dt(np.int64(a[i] ^ flip))

        return impl_signed
    if isinstance(dt, types.Integer):
        def impl_unsigned(a, out):
            for i in range(out.shape[0]):
                out[i] = np_dt(a[i])

        return impl_unsigned
    return None


def restore_specials(x, out, a):  # pragma: no cover - replaced by the overload
    raise NotImplementedError


@overload(restore_specials)
def _ol_restore_specials(x, out, a):
    """Float rows: write back the zeros and NaNs of ``x`` in input order (signs and payloads kept)."""
    if not isinstance(x.dtype, types.Float):
        return lambda x, out, a: None
    f = _float_facts(x.dtype.bitwidth)
    top, nan = np.uint64(f["top"]), np.uint64(f["nan"])

    def impl(x, out, a):
        n = x.shape[0]
        lo = _first_at_least(a, n, top)
        hi = _first_at_least(a, n, top + np.uint64(1))
        nan_lo = _first_at_least(a, n, nan)
        if hi > lo or nan_lo < n:
            z = lo
            w = nan_lo
            for i in range(n):
                v = x[i]
                if v == 0.0:
                    out[z] = v
                    z += 1
                elif v != v:
                    out[w] = v
                    w += 1

    return impl


@njit(**_OPTS)
def _first_at_least(a, n, key):
    """Binary search on sorted keys (Numba's np.searchsorted costs seconds of compile)."""
    lo = 0
    hi = n
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


# --------------------------------------------------------------------------- #
# Sorting keys (and, with ``carry``, positions ``p``), with scratch ``t`` / ``q``
# --------------------------------------------------------------------------- #
@njit(**_OPTS)
def _insertion(a, p, lo, hi, carry):
    for i in range(lo + 1, hi):
        k = a[i]
        j = i - 1
        if carry:
            v = p[i]
            while j >= lo and a[j] > k:
                a[j + 1] = a[j]
                p[j + 1] = p[j]
                j -= 1
            p[j + 1] = v
        else:
            while j >= lo and a[j] > k:
                a[j + 1] = a[j]
                j -= 1
        a[j + 1] = k


@njit(**_OPTS)
def _lsd(a, p, t, q, carry):
    n = a.shape[0]
    hist = np.zeros((8, 256), np.int64)
    m = np.uint64(255)
    for i in range(n):
        k = a[i]
        hist[0, k & m] += 1
        hist[1, (k >> np.uint64(8)) & m] += 1
        hist[2, (k >> np.uint64(16)) & m] += 1
        hist[3, (k >> np.uint64(24)) & m] += 1
        hist[4, (k >> np.uint64(32)) & m] += 1
        hist[5, (k >> np.uint64(40)) & m] += 1
        hist[6, (k >> np.uint64(48)) & m] += 1
        hist[7, k >> np.uint64(56)] += 1
    off = np.empty(256, np.int64)
    in_a = True
    for d8 in range(8):
        trivial = False
        for d in range(256):
            if hist[d8, d] != 0:
                trivial = hist[d8, d] == n
                break
        if trivial:
            continue
        s = 0
        for d in range(256):
            off[d] = s
            s += hist[d8, d]
        sh = np.uint64(8 * d8)
        src, dst = (a, t) if in_a else (t, a)
        if carry:
            psrc, pdst = (p, q) if in_a else (q, p)
            for i in range(n):
                k = src[i]
                d = (k >> sh) & m
                o = off[d]
                dst[o] = k
                pdst[o] = psrc[i]
                off[d] = o + 1
        else:
            for i in range(n):
                k = src[i]
                d = (k >> sh) & m
                o = off[d]
                dst[o] = k
                off[d] = o + 1
        in_a = not in_a
    if not in_a:
        for i in range(n):
            a[i] = t[i]
            if carry:
                p[i] = q[i]


@njit(**_OPTS)
def _msd(a, p, t, q, carry):
    n = a.shape[0]
    diff = np.uint64(0)
    for i in range(n):
        diff |= a[i] ^ a[0]
    if diff == np.uint64(0):
        return
    hb = 0
    while diff > np.uint64(1):
        diff >>= np.uint64(1)
        hb += 1
    # A stack of buckets: range, digit shift, and whether its keys are in
    # the scratch arrays (t, q) rather than in (a, p).
    cap = 256 * 9 + 8
    s_lo = np.empty(cap, np.int64)
    s_hi = np.empty(cap, np.int64)
    s_sh = np.empty(cap, np.int64)
    s_t = np.empty(cap, np.bool_)
    w = min(8, hb + 1)
    s_lo[0] = 0
    s_hi[0] = n
    s_sh[0] = hb + 1 - w
    s_t[0] = False
    top = 1
    count = np.empty(256, np.int64)
    off = np.empty(256, np.int64)
    m = np.uint64(255)
    while top > 0:
        top -= 1
        lo = s_lo[top]
        hi = s_hi[top]
        sh = s_sh[top]
        in_t = s_t[top]
        if in_t and hi - lo <= LEAF:
            for i in range(lo, hi):
                a[i] = t[i]
                if carry:
                    p[i] = q[i]
        if hi - lo <= LEAF:
            _insertion(a, p, lo, hi, carry)
            continue
        src, dst = (t, a) if in_t else (a, t)
        psrc, pdst = (q, p) if in_t else (p, q)
        for d in range(256):
            count[d] = 0
        ush = np.uint64(sh)
        for i in range(lo, hi):
            count[(src[i] >> ush) & m] += 1
        s = lo
        for d in range(256):
            off[d] = s
            s += count[d]
        for i in range(lo, hi):
            k = src[i]
            o = off[(k >> ush) & m]
            dst[o] = k
            if carry:
                pdst[o] = psrc[i]
            off[(k >> ush) & m] = o + 1
        s = lo
        for d in range(256):
            c = count[d]
            if c > 0:
                if sh == 0 or c == 1:
                    # Finished: the keys here are all equal. Bring them home.
                    if not in_t:
                        for i in range(s, s + c):
                            a[i] = t[i]
                            if carry:
                                p[i] = q[i]
                else:
                    s_lo[top] = s
                    s_hi[top] = s + c
                    s_sh[top] = max(sh - 8, 0)
                    s_t[top] = not in_t
                    top += 1
            s += c


@njit(**_OPTS)
def _sort_keys(a, p, t, q, carry):
    n = a.shape[0]
    if n <= TINY:
        _insertion(a, p, 0, n, carry)
    elif n < MIDDLE:
        _msd(a, p, t, q, carry)
    else:
        _lsd(a, p, t, q, carry)


# --------------------------------------------------------------------------- #
# Whole rows
# --------------------------------------------------------------------------- #
@njit(**_OPTS)
def radix_sort_row(x, out, a, t):
    """Write the sorted ``x`` into ``out`` (NumPy's stable order); ``a``, ``t``: uint64 scratch rows."""
    row_keys(x, a)
    _sort_keys(a, a, t, t, False)
    row_values(a, out)
    restore_specials(x, out, a)


@njit(**_OPTS)
def radix_argsort_row(x, out, a, t, q):
    """Write the stable sorting permutation of ``x`` into ``out`` (int64); ``q``: int64 scratch."""
    row_keys(x, a)
    for i in range(x.shape[0]):
        out[i] = i
    _sort_keys(a, out, t, q, True)


def radix_dtype_supported(dtype):
    """Whether rows of ``dtype`` sort by key (real numbers and bools)."""
    dtype = str(dtype)
    return dtype in {"float64", "float32", "bool"} or dtype.startswith(("int", "uint"))


__all__ = ["RADIX_VERSION", "radix_dtype_supported", "radix_sort_row", "radix_argsort_row"]
