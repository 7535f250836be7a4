"""The small matrix-vector loops of ``Gemv`` kernels, compiled once per process and shared.

A loop step's product of a small matrix and a vector is dominated by the
cost of a BLAS call, not by its arithmetic, so ``Gemv`` kernels multiply
matrices of at most ``SMALL_GEMV`` elements with these loops. Written into
every Gemv kernel's text they were compiled again with each kernel (a
third of compiling one); here each is compiled once per argument types and
linked into the kernels that call it, and cached on disk. Kernels name
this file's hash in their text (``LOOPS_HASH``), so a change here gives
new kernels.
"""

from __future__ import annotations

import hashlib

from lucent.link.numba.dispatch.python_entry import compiled_helper

#: Matrices of at most this many elements are multiplied by a vector with the loops
#: below instead of BLAS: for the 16x16 step of a recurrence ``rows_gemv`` takes 30 ns
#: where the BLAS call takes 70, and it stays level with BLAS up to 512x512 on one thread.
SMALL_GEMV = 128 * 128

with open(__file__, "rb") as _f:
    LOOPS_HASH = hashlib.sha256(_f.read()).hexdigest()[:16]

_OPTIONS = {"fastmath": {"reassoc", "contract", "nsz"}, "no_cfunc_wrapper": True, "cache": True}


@compiled_helper(**_OPTIONS)
def rows_gemv(A, k, x, z, out, alpha, beta):
    """``out = alpha * A[:, :k] @ x + beta * z`` for a matrix stored by rows.

    ``A`` is the matrix's ``padded_c_view`` (rows ``A.shape[1] >= k`` items
    apart). Four rows at a time: four independent sums that LLVM vectorises
    along the row (``reassoc`` lets it split each sum into lanes, so the
    summation order differs from BLAS's by rounding only). ``beta == 0``
    never reads ``z``; ``out`` may be ``z``.
    """
    m = A.shape[0]
    i = 0
    while i < m:
        if i + 4 <= m:
            s0 = 0.0
            s1 = 0.0
            s2 = 0.0
            s3 = 0.0
            for j in range(k):
                xj = x[j]
                s0 += A[i, j] * xj
                s1 += A[i + 1, j] * xj
                s2 += A[i + 2, j] * xj
                s3 += A[i + 3, j] * xj
            if beta == 0:
                out[i] = alpha * s0
                out[i + 1] = alpha * s1
                out[i + 2] = alpha * s2
                out[i + 3] = alpha * s3
            else:
                out[i] = alpha * s0 + beta * z[i]
                out[i + 1] = alpha * s1 + beta * z[i + 1]
                out[i + 2] = alpha * s2 + beta * z[i + 2]
                out[i + 3] = alpha * s3 + beta * z[i + 3]
            i += 4
        else:
            s0 = 0.0
            for j in range(k):
                s0 += A[i, j] * x[j]
            out[i] = alpha * s0 if beta == 0 else alpha * s0 + beta * z[i]
            i += 1



@compiled_helper(**_OPTIONS)
def cols_gemv(At, m, x, z, out, alpha, beta):
    """``out = alpha * At[:, :m].T @ x + beta * z`` for a matrix stored by columns (a transposed C array).

    ``At`` is the ``padded_c_view`` of the matrix's columns: column ``j``
    is ``At[j, :m]``. The columns scaled by ``alpha * x[j]`` are added in
    turn, each a loop along a contiguous column that LLVM vectorises (the
    gradient of a recurrence multiplies by ``W.T``). ``beta == 0`` never
    reads ``z``; ``out`` may be ``z``.
    """
    k = At.shape[0]
    if beta == 0:
        for i in range(m):
            out[i] = 0.0
    else:
        for i in range(m):
            out[i] = beta * z[i]
    for j in range(k):
        xj = alpha * x[j]
        for i in range(m):
            out[i] += At[j, i] * xj


__all__ = ["LOOPS_HASH", "SMALL_GEMV", "cols_gemv", "rows_gemv"]
