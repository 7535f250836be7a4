"""Numba kernel of ``SolveTriangularOfTriangle``: column blocks, each on the part of ``a`` it needs.

For upper-triangular operands, the columns ``j0:j1`` of the solution are
zero below row ``j1``, and their rows ``:j1`` solve with the leading
``j1 x j1`` block of ``a``; for lower-triangular ones, rows ``j0:`` with the
trailing block. Each block is one LAPACK ``?trtrs`` call that reads ``a``
where it lies (a sub-block of a C- or F-ordered matrix, with its leading
dimension), the right-hand side copied (and masked to its triangle) into a
small column-major buffer. A zero on the diagonal anywhere gives NaN
everywhere, as on the reference path (which solves the whole system).
"""

from __future__ import annotations

from lucent.link.numba.dispatch.basic import numba_funcify
from lucent.link.numba.dispatch.linalg import _L, _N, _T, _U
from lucent.link.numba.dispatch.linalg_lapack import PREFIX, import_line
from lucent.link.numba.dispatch.shape import dtype_text, fail, make_kernel
from lucent.tensor.linalg.solvers.triangle_rhs import SolveTriangularOfTriangle

#: Right-hand-side columns per LAPACK call.
BLOCK_COLUMNS = 64


def _block_solver(dtype):
    routine = f"lapack_{PREFIX[dtype]}trtrs"
    return import_line(PREFIX[dtype] + "trtrs") + f'''
@numba.njit(cache=False)
def block_solve(a, xt, lower):
    """Solve ``tri(a) @ X = B`` in place, ``xt`` holding the columns of ``B`` as rows."""
    r = a.shape[0]
    k = xt.shape[0]
    if r == 0 or k == 0:
        return
    item = a.itemsize
    s0 = a.strides[0]
    s1 = a.strides[1]
    if s0 == item and s1 % item == 0 and s1 // item >= r:
        m = a
        lda = s1 // item
        lo = lower
        tr = 0
    elif s1 == item and s0 % item == 0 and s0 // item >= r:
        # LAPACK sees a.T: the other triangle, transposed
        m = a
        lda = s0 // item
        lo = not lower
        tr = 1
    else:
        m = np.asfortranarray(a)
        lda = r
        lo = lower
        tr = 0
    info = np.zeros(1, np.int32)
    {routine}((np.array([{_L} if lo else {_U}], np.uint8), np.array([{_T} if tr else {_N}], np.uint8),
               np.array([{_N}], np.uint8), np.array([r], np.int32), np.array([k], np.int32), m,
               np.array([lda], np.int32), xt, np.array([r], np.int32), info))
'''


@numba_funcify.register(SolveTriangularOfTriangle, version=1)
def numba_funcify_SolveTriangularOfTriangle(op, node, **kwargs):
    dtype = node.outputs[0].type.dtype
    dt = dtype_text(dtype)
    bs = BLOCK_COLUMNS
    if op.lower:
        rows = ["lo = j0", "hi = m"]
        keep = "i >= j"
    else:
        rows = ["lo = 0", "hi = min(j1, m)"]
        keep = "i <= j"
    body = [
        "if a.shape[0] != a.shape[1]:",
        "    " + fail("Value", "SolveTriangularOfTriangle: `a` must be a square matrix, got shape {}", "a.shape"),
        "if b.shape[0] != a.shape[0]:",
        "    " + fail("Value", "SolveTriangularOfTriangle: incompatible dimensions, `a` has shape {} and `b` {}",
                      "a.shape", "b.shape"),
        "m = a.shape[0]",
        "n = b.shape[1]",
        f"out = np.zeros((m, n), dtype={dt})",
        "for i in range(m):",
        "    if a[i, i] == 0:",
        f"        return np.full((m, n), np.nan, dtype={dt})",
        f"for j0 in range(0, n, {bs}):",
        f"    j1 = min(j0 + {bs}, n)",
        *["    " + line for line in rows],
        "    if hi <= lo:",
        "        continue",
        f"    xt = np.empty((j1 - j0, hi - lo), dtype={dt})",
        "    for c in range(j1 - j0):",
        "        j = j0 + c",
        "        for i in range(lo, hi):",
        f"            xt[c, i - lo] = b[i, j] if {keep} else 0",
        f"    block_solve(a[lo:hi, lo:hi], xt, {op.lower})",
        "    for c in range(j1 - j0):",
        "        j = j0 + c",
        "        for i in range(lo, hi):",
        f"            if {keep}:",
        "                out[i, j] = xt[c, i - lo]",
        "return out",
    ]
    return make_kernel("solve_triangular_of_triangle", ["a", "b"], body, [_block_solver(dtype)])


__all__ = ["numba_funcify_SolveTriangularOfTriangle"]
