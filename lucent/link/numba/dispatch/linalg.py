"""Numba kernels of the linear-algebra ops (inverses, ``Det``, ``Solve``, ``Cholesky``).

Numba compiles ``np.linalg.inv`` / ``det`` / ``solve`` to the LAPACK
routines SciPy ships, so inverse, determinant and the general solve call
those. Two things differ from NumPy and are handled here:

* Numba refuses a matrix holding inf or NaN (NumPy lets LAPACK propagate
  them). The kernels test for non-finite input first and return NaN
  (all of the result) instead; NumPy's LAPACK may leave some entries
  finite, so the reference path and this one agree on *whether* a result
  is NaN-tainted, not always entry by entry.
* ``Solve`` gives NaN for a system it cannot solve, and reads only one
  triangle of ``a`` for the symmetric and positive-definite structures,
  as SciPy does. The Cholesky factorisation (also used by
  ``assume_a='pos'``), the triangular solves and the Cholesky solves call
  LAPACK's ``?potrf``, ``?trtrs`` and ``?potrs`` (the routines SciPy's
  reference path calls), and a failure LAPACK reports (not positive
  definite, a zero pivot) gives NaN, as on the reference path.
* A general real system of order up to ``SMALL_SOLVE_ORDER`` is solved by
  Gaussian elimination in native loops (``small_lu_solve``), LAPACK's
  algorithm without the cost around a LAPACK call, which dominates for a
  batch of thousands of small systems.

LAPACK works in column-major order, the transpose of a C array's: a
factor or solution is computed in a C-contiguous buffer holding the
transpose, which is what LAPACK reads as the matrix itself.

The input is first converted to the op's output dtype (the LAPACK type
``linalg_output_dtype`` chose), which is also the copy LAPACK works on.
An in-place variant (``Cholesky{overwrite_a}``, a solve with
``overwrite_b``) writes its result over the input it destroys
(``destroying_kernel``), so the memory its ``destroy_map`` gives up is
the memory the result lives in.
"""

from __future__ import annotations

from lucent.link.numba.dispatch.basic import numba_funcify
from lucent.link.numba.dispatch.linalg_lapack import PREFIX, import_line
from lucent.link.numba.dispatch.shape import dtype_text, esc, fail, make_kernel
from lucent.tensor.linalg.decomposition.cholesky import Cholesky
from lucent.tensor.linalg.inverse import MatrixInverse, MatrixPinv, TensorInv
from lucent.tensor.linalg.solvers.general import Solve
from lucent.tensor.linalg.summary import Det

LINALG_VERSION = 6


def destroying_kernel(name, params, body, helpers, destroyed):
    """``make_kernel(name, params, body, helpers)``, with the result written over ``destroyed``.

    ``destroyed`` (a parameter name, or None for an ordinary kernel) is an
    input that the op's ``destroy_map`` gives up and whose shape and dtype
    are the result's: the body computes the result as usual, which is then
    copied into that input's buffer and returned as the output.
    """
    if destroyed is None:
        return make_kernel(name, params, body, helpers)
    inner = "@numba.njit(cache=False)\ndef _result({}):\n{}\n".format(
        ", ".join(params), "\n".join("    " + line for line in body)
    )
    outer = [f"r = _result({', '.join(params)})", f"{destroyed}[...] = r", f"return {destroyed}"]
    return make_kernel(name, params, outer, list(helpers) + [inner])

#: Module-level helpers embedded in each kernel's text (so they are part of its hash).
_HELPERS = {
    "all_finite": '''
@numba.njit(cache=False)
def all_finite(a):
    for v in a.ravel():
        if not np.isfinite(v):
            return False
    return True
''',
    "symmetrize": '''
@numba.njit(cache=False)
def symmetrize(a, lower, conj):
    """The symmetric (Hermitian if ``conj``) matrix with the lower (or upper) triangle of ``a``."""
    n = a.shape[0]
    s = a.copy()
    for i in range(n):
        for j in range(i + 1, n):
            if lower:
                s[i, j] = np.conj(a[j, i]) if conj else a[j, i]
            else:
                s[j, i] = np.conj(a[i, j]) if conj else a[i, j]
    return s
''',
    "tridiagonal_part": '''
@numba.njit(cache=False)
def tridiagonal_part(a):
    """``a`` with everything off the three central diagonals zeroed."""
    n = a.shape[0]
    t = np.zeros_like(a)
    for i in range(n):
        for j in range(max(0, i - 1), min(n, i + 2)):
            t[i, j] = a[i, j]
    return t
''',
}


def _helpers(*names):
    return [_HELPERS[n] for n in names]


# ASCII codes of LAPACK's character arguments.
_U, _L, _N, _T, _C = 85, 76, 78, 84, 67


def lapack_cholesky_helper(dtype):
    """Source of ``lapack_cholesky(a, lower)``: ``?potrf`` on ``a`` (C-contiguous, overwritten).

    Returns ``(factor, ok)``; the factor is ``a`` with the other triangle
    zeroed, ``ok`` False when ``a`` is not positive definite (LAPACK also
    refuses a NaN pivot). In C order the lower factor of ``a`` is the upper
    factor of the matrix LAPACK sees (``a`` transposed, equal to ``a`` or its
    conjugate for the Hermitian matrices it is meant for).
    """
    routine = f"lapack_{PREFIX[dtype]}potrf"
    return import_line(PREFIX[dtype] + "potrf") + f'''
@numba.njit(cache=False)
def lapack_cholesky(a, lower):
    n = a.shape[0]
    if n == 0:
        return a, True
    nn = np.array([n], np.int32)
    info = np.zeros(1, np.int32)
    {routine}((np.array([{_U} if lower else {_L}], np.uint8), nn, a, nn, info))
    if info[0] != 0:
        return a, False
    for i in range(n):
        if lower:
            for j in range(i + 1, n):
                a[i, j] = 0
        else:
            for j in range(i):
                a[i, j] = 0
    return a, True
'''


def lapack_solve_helper(dtype, routine):
    """Source of ``lapack_tri_solve(a, b, lower, trans, unit)`` (``routine='trtrs'``:
    ``op(tri(a)) @ x == b``, ``trans`` 0, 1, 2 for ``a``, ``a.T``, ``a.H``) or
    ``lapack_cho_solve(c, b, lower)`` (``routine='potrs'``: ``c`` the Cholesky
    factor of the matrix). ``b`` is 2-d; neither argument is written. A
    failure LAPACK reports (a zero on a triangular diagonal) gives NaN everywhere.

    LAPACK reads the matrix where it lies when its layout allows: an
    F-contiguous ``a`` is the column-major matrix itself, and a C-contiguous
    one is the column-major transpose, which serves by swapping the
    triangle and the transposition (for ``potrs``: the other triangle of a
    real factor gives the same matrix). Only the cases this cannot express
    (a strided ``a``; the conjugate transposes of complex input) copy it.
    The matrix is as large as the work for one right-hand side, so a copy
    would cost more than the solve.
    """
    name = f"lapack_{PREFIX[dtype]}{routine}"
    real = dtype in ("float32", "float64")
    head = import_line(PREFIX[dtype] + routine) + "\n@numba.njit(cache=False)\n"
    if routine == "trtrs":
        head += "def lapack_tri_solve(a, b, lower, trans, unit):\n"
        flip = "a.flags.c_contiguous" + ("" if real else " and trans != 2")
        choose = f"""    if a.flags.f_contiguous:
        m, lo, tr = a, lower, trans
    elif {flip}:
        # LAPACK sees a.T: the other triangle, and the other transposition
        m, lo, tr = a, not lower, (1 if trans == 0 else 0)
    else:
        m, lo, tr = np.asfortranarray(a), lower, trans
"""
        call = (f"    {name}((np.array([{_L} if lo else {_U}], np.uint8), "
                f"np.array([{_N} if tr == 0 else ({_T} if tr == 1 else {_C})], np.uint8), "
                f"np.array([{_U} if unit else {_N}], np.uint8), nn, kk, m, nn, xt, nn, info))")
    else:
        head += "def lapack_cho_solve(a, b, lower):\n"
        flip = "a.flags.c_contiguous" if real else "False"
        choose = f"""    if a.flags.f_contiguous:
        m, lo = a, lower
    elif {flip}:
        # LAPACK sees a.T, the factor of the same matrix in the other triangle
        m, lo = a, not lower
    else:
        m, lo = np.asfortranarray(a), lower
"""
        call = f"    {name}((np.array([{_L} if lo else {_U}], np.uint8), nn, kk, m, nn, xt, nn, info))"
    return head + f'''    n = a.shape[0]
    k = b.shape[1]
    if n == 0 or k == 0:
        return b.copy()
{choose}    # the right-hand sides as rows of a C array: LAPACK's columns
    xt = np.empty((k, n), b.dtype)
    for i in range(n):
        for j in range(k):
            xt[j, i] = b[i, j]
    nn = np.array([n], np.int32)
    kk = np.array([k], np.int32)
    info = np.zeros(1, np.int32)
{call}
    if info[0] != 0:
        return np.full(b.shape, np.nan, b.dtype)
    return np.ascontiguousarray(xt.T)
'''


def _square_check(op, var="a"):
    return [
        f"if {var}.shape[0] != {var}.shape[1]:",
        "    " + fail("Value", f"{esc(op)}: input array is expected to be square but has the shape: ({{}}, {{}})",
                      f"{var}.shape[0]", f"{var}.shape[1]"),
    ]


@numba_funcify.register(MatrixInverse, version=LINALG_VERSION)
def numba_funcify_MatrixInverse(op, node, **kwargs):
    dt = dtype_text(node.outputs[0].type.dtype)
    body = [f"a = x.astype({dt})"] + _square_check(op) + [
        "if not all_finite(a):",
        f"    return np.full(a.shape, np.nan, dtype={dt})",
        "return np.linalg.inv(a)",
    ]
    return make_kernel("matrix_inverse", ["x"], body, helpers=_helpers("all_finite"))


@numba_funcify.register(MatrixPinv, version=LINALG_VERSION)
def numba_funcify_MatrixPinv(op, node, **kwargs):
    """SVD-based ``pinv`` (NumPy's default cut-off, 1e-15 of the largest singular value);
    for ``hermitian=True`` the eigendecomposition of the lower triangle, as NumPy."""
    dt = dtype_text(node.outputs[0].type.dtype)
    body = [
        f"a = np.ascontiguousarray(x).astype({dt})",
        "if a.size == 0:",
        f"    return np.zeros((a.shape[1], a.shape[0]), dtype={dt})",
    ]
    if op.hermitian:
        body += [
            "w, v = np.linalg.eigh(a)",
            "cutoff = 1e-15 * np.max(np.abs(w))",
            "inv_w = np.zeros_like(w)",
            "for i in range(w.shape[0]):",
            "    if np.abs(w[i]) > cutoff:",
            "        inv_w[i] = 1.0 / w[i]",
            "return np.ascontiguousarray((v * inv_w) @ np.conj(v.T))",
        ]
    else:
        body += ["return np.linalg.pinv(a)"]
    return make_kernel("pinv", ["x"], body)


@numba_funcify.register(TensorInv, version=LINALG_VERSION)
def numba_funcify_TensorInv(op, node, **kwargs):
    """Invert the square matrix the two groups of axes form, then reshape with the groups swapped."""
    dt = dtype_text(node.outputs[0].type.dtype)
    nd, ind = node.inputs[0].type.ndim, op.ind
    rows = " * ".join(f"a.shape[{d}]" for d in range(ind))
    cols = " * ".join(f"a.shape[{d}]" for d in range(ind, nd))
    out_shape = ", ".join(f"a.shape[{d}]" for d in [*range(ind, nd), *range(ind)])
    body = [
        f"a = np.ascontiguousarray(x).astype({dt})",
        f"m = np.linalg.inv(a.reshape(({rows}, {cols})))",
        f"return np.ascontiguousarray(m).reshape(({out_shape},))",
    ]
    return make_kernel("tensorinv", ["x"], body)


@numba_funcify.register(Det, version=LINALG_VERSION)
def numba_funcify_Det(op, node, **kwargs):
    dt = dtype_text(node.outputs[0].type.dtype)
    body = [f"a = x.astype({dt})"] + _square_check(op) + [
        "if not all_finite(a):",
        f"    return np.asarray(np.nan, dtype={dt})",
        f"return np.asarray(np.linalg.det(a), dtype={dt})",
    ]
    return make_kernel("det", ["x"], body, helpers=_helpers("all_finite"))


@numba_funcify.register(Cholesky, version=LINALG_VERSION)
def numba_funcify_Cholesky(op, node, **kwargs):
    dt = dtype_text(node.outputs[0].type.dtype)
    # The upper factor of ``x`` is the transposed lower factor of ``x.T``
    # (whose lower triangle is the upper triangle of ``x``).
    body = [f"a = np.ascontiguousarray(x).astype({dt})"] + _square_check(op) + [
        f"L, ok = lapack_cholesky(a, {op.lower})",
        "if not ok:",
        f"    return np.full(a.shape, np.nan, dtype={dt})",
        "return L",
    ]
    destroyed = "x" if op.destroy_map else None
    helpers = [lapack_cholesky_helper(node.outputs[0].type.dtype)]
    return destroying_kernel("cholesky", ["x"], body, helpers, destroyed)


#: Largest order solved by ``small_lu_solve`` instead of LAPACK.
SMALL_SOLVE_ORDER = 24


def small_solve_helper(dt, b_ndim):
    """Source of ``small_lu_solve(A, B)``: Gaussian elimination with partial pivoting in native loops.

    For a small system, LAPACK's ``?gesv`` costs less than what surrounds the
    call (a column-major copy of ``a``, the pivot and info arrays, the
    checks), and a batch of thousands of 8x8 systems (``Blockwise``) pays it
    per matrix. This is the algorithm of LAPACK's unblocked ``?getf2`` and
    ``?getrs`` (largest pivot in the column, row swaps, unit lower factor),
    on a row-major copy made while the input is checked for non-finite
    values. As on the reference path, an exactly zero pivot (a singular
    matrix) or a non-finite input gives NaN everywhere.
    """
    return f'''
@numba.njit(cache=False)
def small_lu_solve(A, B):
    n = A.shape[0]
    lu = np.empty((n, n), dtype={dt})
    finite = True
    for i in range(n):
        for j in range(n):
            v = A[i, j]
            if not np.isfinite(v):
                finite = False
            lu[i, j] = v
    k = {"1" if b_ndim == 1 else "B.shape[1]"}
    x = np.empty((n, k), dtype={dt})
    for i in range(n):
        for c in range(k):
            v = {"B[i]" if b_ndim == 1 else "B[i, c]"}
            if not np.isfinite(v):
                finite = False
            x[i, c] = v
    if not finite:
        return np.full(B.shape, np.nan, dtype={dt})
    for col in range(n):
        p = col
        big = abs(lu[col, col])
        for i in range(col + 1, n):
            if abs(lu[i, col]) > big:
                big = abs(lu[i, col])
                p = i
        if big == 0:
            return np.full(B.shape, np.nan, dtype={dt})
        if p != col:
            for j in range(n):
                lu[col, j], lu[p, j] = lu[p, j], lu[col, j]
            for c in range(k):
                x[col, c], x[p, c] = x[p, c], x[col, c]
        pivot = lu[col, col]
        for i in range(col + 1, n):
            f = lu[i, col] / pivot
            if f != 0:
                for j in range(col + 1, n):
                    lu[i, j] -= f * lu[col, j]
                for c in range(k):
                    x[i, c] -= f * x[col, c]
    for i in range(n - 1, -1, -1):
        for c in range(k):
            s = x[i, c]
            for j in range(i + 1, n):
                s -= lu[i, j] * x[j, c]
            x[i, c] = s / lu[i, i]
    return {"x.reshape((n,))" if b_ndim == 1 else "x"}
'''


def _small_solve_lines(op, node):
    """A general real system of order up to ``SMALL_SOLVE_ORDER`` is solved by ``small_lu_solve``."""
    if op.assume_a != "gen" or node.outputs[0].type.dtype not in ("float32", "float64"):
        return [], []
    lines = [
        f"if A.shape[0] == A.shape[1] and 0 < A.shape[0] <= {SMALL_SOLVE_ORDER} and B.shape[0] == A.shape[0]:",
        "    return small_lu_solve(A, B)",
    ]
    return lines, [small_solve_helper(dtype_text(node.outputs[0].type.dtype), op.b_ndim)]


@numba_funcify.register(Solve, version=LINALG_VERSION)
def numba_funcify_Solve(op, node, **kwargs):
    dt = dtype_text(node.outputs[0].type.dtype)
    small_lines, small_helpers = _small_solve_lines(op, node)
    body = _solve_in_a_lines(op, node) + small_lines + [
        f"a = np.ascontiguousarray(A).astype({dt})", f"b = np.ascontiguousarray(B).astype({dt})"
    ]
    body += _square_check(op)
    body += [
        "if b.shape[0] != a.shape[0]:",
        "    " + fail("Value", f"{esc(op)}: incompatible dimensions, `a` has {{}} rows and `b` {{}}",
                      "a.shape[0]", "b.shape[0]"),
        "if not (all_finite(a) and all_finite(b)):",
        f"    return np.full(b.shape, np.nan, dtype={dt})",
    ]
    b2 = "b" if op.b_ndim == 2 else "b.reshape((b.shape[0], 1))"
    unb2 = "" if op.b_ndim == 2 else ".reshape(b.shape)"
    helpers = ["all_finite"]
    extra_helpers = []
    if op.assume_a == "pos":
        out_dtype = node.outputs[0].type.dtype
        extra_helpers = [lapack_cholesky_helper(out_dtype), lapack_solve_helper(out_dtype, "potrs")]
        body += [
            f"L, ok = lapack_cholesky(a, {op.lower})",
            "if not ok:",
            f"    return np.full(b.shape, np.nan, dtype={dt})",
            f"return lapack_cho_solve(L, np.ascontiguousarray({b2}), {op.lower}){unb2}",
        ]
    else:
        if op.assume_a in ("sym", "her"):
            helpers.append("symmetrize")
            body.append(f"a = symmetrize(a, {op.lower}, {op.assume_a == 'her'})")
        elif op.assume_a == "tridiagonal":
            helpers.append("tridiagonal_part")
            body.append("a = tridiagonal_part(a)")
        body += [
            "if a.shape[0] == 0:",
            f"    return np.full(b.shape, np.nan, dtype={dt})",
            "try:",
            "    return np.linalg.solve(a, b)",
            "except Exception:",
            f"    return np.full(b.shape, np.nan, dtype={dt})",
        ]
    destroyed = "B" if op.overwrite_b and node.inputs[1].type == node.outputs[0].type else None
    extra = [import_line(PREFIX[node.outputs[0].type.dtype] + "gesv")] if _solves_in_a(op, node) else []
    return destroying_kernel(
        "solve", ["A", "B"], body, extra + _helpers(*helpers) + extra_helpers + small_helpers, destroyed
    )


def _solves_in_a(op, node):
    """Whether ``Solve{overwrite_a}`` factorises ``a`` in its own memory (LAPACK ``?gesv``)."""
    dtype = node.outputs[0].type.dtype
    return (
        op.overwrite_a and op.assume_a == "gen" and dtype in PREFIX and node.inputs[0].type.dtype == dtype
    )


def _solve_in_a_lines(op, node):
    """``Solve{overwrite_a}`` of a general ``a``: LAPACK ``?gesv`` overwrites ``a`` with its LU
    factors, as SciPy's ``overwrite_a`` does, when ``a`` is in column-major order (the
    layout LAPACK works in); any other ``a`` goes through the copying path below."""
    if not _solves_in_a(op, node):
        return []
    dt = dtype_text(node.outputs[0].type.dtype)
    routine = f"lapack_{PREFIX[node.outputs[0].type.dtype]}gesv"
    result = "np.ascontiguousarray(xt.T)" if op.b_ndim == 2 else "xt[0].copy()"
    read_b = "B[i, j]" if op.b_ndim == 2 else "B[i]"
    return [
        "if (A.shape[0] == A.shape[1] and A.shape[0] > 0 and B.shape[0] == A.shape[0] and A.flags.f_contiguous",
        "        and all_finite(A) and all_finite(B)):",
        "    n = A.shape[0]",
        "    nrhs = " + ("B.shape[1]" if op.b_ndim == 2 else "1"),
        # the right-hand sides column by column: rows of ``xt`` are LAPACK's columns
        f"    xt = np.empty((nrhs, n), dtype={dt})",
        "    for i in range(n):",
        "        for j in range(nrhs):",
        f"            xt[j, i] = {read_b}",
        "    ipiv = np.empty(n, dtype=np.int32)",
        "    info = np.zeros(1, dtype=np.int32)",
        "    nn = np.array([n], dtype=np.int32)",
        f"    {routine}((nn, np.array([nrhs], dtype=np.int32), A, nn, ipiv, xt, nn, info))",
        "    if info[0] != 0:",
        f"        return np.full(B.shape, np.nan, dtype={dt})",
        f"    return {result}",
    ]


__all__ = [
    "destroying_kernel",
    "numba_funcify_Cholesky",
    "numba_funcify_Det",
    "numba_funcify_MatrixInverse",
    "numba_funcify_MatrixPinv",
    "numba_funcify_TensorInv",
    "numba_funcify_Solve",
]
