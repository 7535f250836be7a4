"""Numba kernels of the factorisations: eigen, SVD, QR, LU (and ``slogdet``).

``eigh``, ``svd``, ``slogdet`` and a complex ``eig`` call the LAPACK
routines Numba binds for ``np.linalg``. Numba's ``eigh`` reads the lower
triangle only, so the kernel first mirrors the triangle the op reads. A
real ``eig`` has no kernel (it runs its ``perform``): Numba refuses a real
matrix with complex eigenvalues, and redoing it in complex arithmetic may
order the eigenvalues differently from NumPy. QR and LU are explicit loops that make
LAPACK's choices (``geqrf``'s Householder signs, ``getrf``'s first pivot
of largest magnitude), so both paths give the same factors.
"""

from __future__ import annotations

from lucent.link.numba.dispatch.basic import numba_funcify
from lucent.link.numba.dispatch.linalg import _HELPERS, _square_check
from lucent.link.numba.dispatch.shape import dtype_text, make_kernel
from lucent.tensor.linalg.decomposition.eigen import Eig, Eigh, Eigvalsh
from lucent.tensor.linalg.decomposition.lu import LU, LUFactor, PivotToPermutations
from lucent.tensor.linalg.decomposition.qr import QR
from lucent.tensor.linalg.decomposition.svd import SVD
from lucent.tensor.linalg.summary import SLogDet

DECOMPOSITION_VERSION = 2

GETRF = '''
@numba.njit(cache=False)
def getrf(a):
    """LAPACK getrf: LU with partial pivoting in place of a copy of ``a``; 0-based row swaps."""
    lu = a.copy()
    n = lu.shape[0]
    piv = np.zeros(n, dtype=np.int32)
    for j in range(n):
        p = j
        best = -1.0
        for i in range(j, n):
            v = abs(lu[i, j].real) + abs(lu[i, j].imag)
            if v > best:
                best = v
                p = i
        piv[j] = p
        if p != j:
            for c in range(n):
                t = lu[j, c]
                lu[j, c] = lu[p, c]
                lu[p, c] = t
        d = lu[j, j]
        if d != 0:
            for i in range(j + 1, n):
                lu[i, j] = lu[i, j] / d
        for i in range(j + 1, n):
            f = lu[i, j]
            if f != 0:
                for c in range(j + 1, n):
                    lu[i, c] -= f * lu[j, c]
    return lu, piv
'''

PIV_TO_PERM = '''
@numba.njit(cache=False)
def piv_to_perm(piv):
    n = piv.shape[0]
    perm = np.arange(n)
    for i in range(n):
        p = piv[i]
        t = perm[i]
        perm[i] = perm[p]
        perm[p] = t
    return perm
'''

HOUSEHOLDER_QR = '''
@numba.njit(cache=False)
def householder_qr(a):
    """Full ``Q`` (m, m) and ``R`` (m, n) of a real matrix, with LAPACK geqrf's reflections."""
    m, n = a.shape
    r = a.copy()
    q = np.eye(m, dtype=a.dtype)
    k = min(m, n)
    vs = np.zeros((k, m), dtype=a.dtype)
    taus = np.zeros(k, dtype=a.dtype)
    for j in range(k):
        alpha = r[j, j]
        xnorm = 0.0
        for i in range(j + 1, m):
            xnorm += r[i, j] * r[i, j]
        xnorm = np.sqrt(xnorm)
        if xnorm == 0.0:
            continue
        beta = -np.copysign(np.sqrt(alpha * alpha + xnorm * xnorm), alpha)
        tau = (beta - alpha) / beta
        scale = 1.0 / (alpha - beta)
        vs[j, j] = 1.0
        for i in range(j + 1, m):
            vs[j, i] = r[i, j] * scale
        taus[j] = tau
        for c in range(j, n):
            s = 0.0
            for i in range(j, m):
                s += vs[j, i] * r[i, c]
            s *= tau
            for i in range(j, m):
                r[i, c] -= s * vs[j, i]
        for i in range(j + 1, m):
            r[i, j] = 0.0
    for j in range(k - 1, -1, -1):
        if taus[j] == 0.0:
            continue
        for c in range(m):
            s = 0.0
            for i in range(j, m):
                s += vs[j, i] * q[i, c]
            s *= taus[j]
            for i in range(j, m):
                q[i, c] -= s * vs[j, i]
    return q, r
'''


@numba_funcify.register(SLogDet, version=DECOMPOSITION_VERSION)
def numba_funcify_SLogDet(op, node, **kwargs):
    dt0 = dtype_text(node.outputs[0].type.dtype)
    dt1 = dtype_text(node.outputs[1].type.dtype)
    body = [f"a = np.ascontiguousarray(x).astype({dt0})"] + _square_check(op) + [
        "if not all_finite(a):",
        f"    return np.asarray(np.nan, dtype={dt0}), np.asarray(np.nan, dtype={dt1})",
        "sign, logdet = np.linalg.slogdet(a)",
        f"return np.asarray(sign, dtype={dt0}), np.asarray(logdet, dtype={dt1})",
    ]
    return make_kernel("slogdet", ["x"], body, helpers=[_HELPERS["all_finite"]])


@numba_funcify.register(Eig, version=DECOMPOSITION_VERSION)
def numba_funcify_Eig(op, node, **kwargs):
    cdt = dtype_text(node.outputs[0].type.dtype)
    in_dt = node.inputs[0].type.dtype
    if not in_dt.startswith("complex"):
        # Numba's real eig refuses complex eigenvalues, and redoing it in complex
        # arithmetic (zgeev) may order the eigenvalues differently from NumPy's dgeev.
        raise NotImplementedError("Eig of a real matrix has no Numba kernel (the eigenvalue order would differ)")
    body = ["a = np.ascontiguousarray(x)"] + _square_check(op)
    body += [f"w, v = np.linalg.eig(a.astype({cdt}))", "return w, np.ascontiguousarray(v)"]
    return make_kernel("eig", ["x"], body)


def _eigh_body(op, node, n_inputs, values_only):
    from lucent.tensor.linalg.dtype_utils import linalg_output_dtype

    work = dtype_text(linalg_output_dtype(*(i.type.dtype for i in node.inputs)))
    conj = work.startswith("np.complex")
    body = [f"a = symmetrize(np.ascontiguousarray(x).astype({work}), {op.lower}, {conj})"] + _square_check(op)
    if n_inputs == 2:
        body += [
            f"bb = symmetrize(np.ascontiguousarray(y).astype({work}), {op.lower}, {conj})",
            "L = np.linalg.cholesky(bb)",
            "Linv_a = np.linalg.solve(L, a)",
            "c = np.linalg.solve(L, np.ascontiguousarray(np.conj(Linv_a.T)))",
            "c = np.ascontiguousarray(np.conj(c.T))",
            "w, yv = np.linalg.eigh(c)",
            "v = np.linalg.solve(np.ascontiguousarray(np.conj(L.T)), yv)",
        ]
    else:
        body += ["w, v = np.linalg.eigh(a)"]
    wdt = dtype_text(node.outputs[0].type.dtype)
    if values_only:
        body += [f"return w.astype({wdt})"]
    else:
        body += [f"return w.astype({wdt}), np.ascontiguousarray(v).astype({dtype_text(node.outputs[1].type.dtype)})"]
    return body


@numba_funcify.register(Eigh, version=DECOMPOSITION_VERSION)
def numba_funcify_Eigh(op, node, **kwargs):
    n = len(node.inputs)
    params = ["x", "y"][:n]
    return make_kernel("eigh", params, _eigh_body(op, node, n, False), helpers=[_HELPERS["symmetrize"]])


@numba_funcify.register(Eigvalsh, version=DECOMPOSITION_VERSION)
def numba_funcify_Eigvalsh(op, node, **kwargs):
    n = len(node.inputs)
    params = ["x", "y"][:n]
    return make_kernel("eigvalsh", params, _eigh_body(op, node, n, True), helpers=[_HELPERS["symmetrize"]])


@numba_funcify.register(SVD, version=DECOMPOSITION_VERSION)
def numba_funcify_SVD(op, node, **kwargs):
    dt = dtype_text(node.outputs[0].type.dtype if op.compute_uv else node.inputs[0].type.dtype)
    from lucent.tensor.linalg.dtype_utils import linalg_output_dtype

    work = dtype_text(linalg_output_dtype(node.inputs[0].type.dtype))
    body = [f"a = np.ascontiguousarray(x).astype({work})"]
    if op.compute_uv:
        body += [
            f"u, s, vh = np.linalg.svd(a, full_matrices={op.full_matrices})",
            "return np.ascontiguousarray(u), s, np.ascontiguousarray(vh)",
        ]
    else:
        body += ["u, s, vh = np.linalg.svd(a, full_matrices=False)", "return s"]
    return make_kernel("svd", ["x"], body)


@numba_funcify.register(QR, version=DECOMPOSITION_VERSION)
def numba_funcify_QR(op, node, **kwargs):
    dt = node.outputs[0].type.dtype
    if op.pivoting:
        raise NotImplementedError("QR with pivoting has no Numba kernel")
    if op.mode == "raw":
        return _qr_raw_kernel(dt)
    if dt.startswith("complex"):
        raise NotImplementedError("QR of complex input has no Numba kernel")
    body = [
        f"a = np.ascontiguousarray(x).astype({dtype_text(dt)})",
        "q, r = householder_qr(a)",
        "k = min(a.shape[0], a.shape[1])",
    ]
    if op.mode == "full":
        body += ["return q, r"]
    elif op.mode == "economic":
        body += ["return np.ascontiguousarray(q[:, :k]), np.ascontiguousarray(r[:k, :])"]
    else:
        body += ["return r"]
    return make_kernel("qr", ["x"], body, helpers=[HOUSEHOLDER_QR])


def _qr_raw_kernel(dt):
    """mode='raw': LAPACK's ``?geqrf`` itself, on the column-major copy of the input."""
    from lucent.link.numba.dispatch.linalg_lapack import PREFIX, import_line

    t = dtype_text(dt)
    call = f"lapack_{PREFIX[dt]}geqrf((mm, nn, a, ld, tau, work, lwork, info))"
    body = [
        "m, n = x.shape",
        "k = min(m, n)",
        f"a = np.ascontiguousarray(x.T).astype({t})",
        "mm = np.array([m], dtype=np.int32)",
        "nn = np.array([n], dtype=np.int32)",
        "ld = np.array([max(1, m)], dtype=np.int32)",
        f"tau = np.zeros(max(1, k), dtype={t})",
        f"work = np.zeros(1, dtype={t})",
        "lwork = np.array([-1], dtype=np.int32)",
        "info = np.zeros(1, dtype=np.int32)",
        "if k > 0:",
        f"    {call}",
        "    lwork[0] = max(1, int(work[0].real))",
        f"    work = np.zeros(lwork[0], dtype={t})",
        f"    {call}",
        "h = np.ascontiguousarray(a.T)",
        "r = np.triu(h[:k, :])",
        "return h, tau[:k].copy(), np.ascontiguousarray(r)",
    ]
    return make_kernel("qr_raw", ["x"], body, helpers=[import_line(f"{PREFIX[dt]}geqrf")])


@numba_funcify.register(LUFactor, version=DECOMPOSITION_VERSION)
def numba_funcify_LUFactor(op, node, **kwargs):
    dt = dtype_text(node.outputs[0].type.dtype)
    body = [f"a = np.ascontiguousarray(x).astype({dt})"] + _square_check(op) + ["return getrf(a)"]
    return make_kernel("lu_factor", ["x"], body, helpers=[GETRF])


@numba_funcify.register(LU, version=DECOMPOSITION_VERSION)
def numba_funcify_LU(op, node, **kwargs):
    dt = dtype_text(node.outputs[-1].type.dtype)
    body = [f"a = np.ascontiguousarray(x).astype({dt})"] + _square_check(op) + [
        "lu, piv = getrf(a)",
        "n = a.shape[0]",
        "perm = piv_to_perm(piv)",
        f"L = np.zeros((n, n), dtype={dt})",
        f"U = np.zeros((n, n), dtype={dt})",
        "for i in range(n):",
        "    L[i, i] = 1",
        "    for j in range(n):",
        "        if j < i:",
        "            L[i, j] = lu[i, j]",
        "        else:",
        "            U[i, j] = lu[i, j]",
        f"P = np.zeros((n, n), dtype={dt})",
        "for c in range(n):",
        "    P[perm[c], c] = 1",
    ]
    if op.permute_l:
        body += ["return P @ L, U"]
    elif op.p_indices:
        body += ["return np.argsort(perm).astype(np.int32), L, U"]
    else:
        body += ["return P, L, U"]
    return make_kernel("lu", ["x"], body, helpers=[GETRF, PIV_TO_PERM])


@numba_funcify.register(PivotToPermutations, version=DECOMPOSITION_VERSION)
def numba_funcify_PivotToPermutations(op, node, **kwargs):
    body = ["perm = piv_to_perm(np.asarray(p)).astype(np.int64)"]
    body += ["return perm" if op.inverse else "return np.argsort(perm).astype(np.int64)"]
    return make_kernel("pivot_to_permutation", ["p"], body, helpers=[PIV_TO_PERM])


__all__ = [
    "numba_funcify_Eig",
    "numba_funcify_Eigh",
    "numba_funcify_Eigvalsh",
    "numba_funcify_LU",
    "numba_funcify_LUFactor",
    "numba_funcify_PivotToPermutations",
    "numba_funcify_QR",
    "numba_funcify_SLogDet",
    "numba_funcify_SVD",
]
