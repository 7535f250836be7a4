"""Numba kernels of ``Schur`` and ``QZ``: the LAPACK calls of their ``perform``, made natively.

Each kernel calls the unordered driver (``?gees`` / ``?gges``, after a
workspace query) and, for a ``sort``, reorders with ``?trsen`` /
``?tgsen`` on the same selection as the reference path, so both paths give
SciPy's factors bit for bit up to the workspace size LAPACK picks.
Matrices are handed to LAPACK as C arrays of their transposes (column-major
views of the matrix) and the results transposed back. Non-finite input or a
failed call gives NaN in every output, as on the reference path.
"""

from __future__ import annotations

from lucent.link.numba.dispatch.basic import numba_funcify
from lucent.link.numba.dispatch.linalg import _HELPERS, _square_check
from lucent.link.numba.dispatch.shape import dtype_text, make_kernel
from lucent.tensor.linalg.decomposition.schur import QZ, Schur

SCHUR_VERSION = 2

_REAL = {"float32": "float32", "float64": "float64", "complex64": "float32", "complex128": "float64"}


def _schur_criterion(sort, w):
    """Text of the Schur selection of the complex eigenvalue expression ``w``."""
    return {"lhp": f"{w}.real < 0.0", "rhp": f"{w}.real >= 0.0",
            "iuc": f"abs({w}) <= 1.0", "ouc": f"abs({w}) > 1.0"}[sort]


def _qz_criterion(sort, a, b):
    """Text of the QZ selection of the generalised eigenvalue ``a / b``."""
    if sort == "ouc":
        return f"(({a}) != 0) if ({b}) == 0 else abs(({a}) / ({b})) > 1.0"
    test = {"lhp": "({}).real < 0.0", "rhp": "({}).real > 0.0", "iuc": "abs({}) < 1.0"}[sort]
    return f"False if ({b}) == 0 else " + test.format(f"({a}) / ({b})")


def _common(dt, real):
    return [
        "n = a.shape[0]",
        "nn = np.array([n], dtype=np.int32)",
        "ld = np.array([max(1, n)], dtype=np.int32)",
        "info = np.zeros(1, dtype=np.int32)",
        "sel_fn = np.zeros(1, dtype=np.int32)",
        "job_v = np.array([86], dtype=np.uint8)",
        "job_n = np.array([78], dtype=np.uint8)",
        f"work = np.zeros(1, dtype={dt})",
        "lwork = np.array([-1], dtype=np.int32)",
        "bwork = np.zeros(max(1, n), dtype=np.int32)",
    ]


@numba_funcify.register(Schur, version=SCHUR_VERSION)
def numba_funcify_Schur(op, node, **kwargs):
    from lucent.link.numba.dispatch.linalg_lapack import PREFIX, import_line

    out_dt = node.outputs[0].type.dtype
    dt, rdt = dtype_text(out_dt), dtype_text(_REAL[out_dt])
    p = PREFIX[out_dt]
    real = not out_dt.startswith("complex")
    body = _square_check(op, "x") + [
        "if x.shape[0] == 0:",
        f"    return np.zeros((0, 0), dtype={dt}), np.zeros((0, 0), dtype={dt})",
        "if not all_finite(x):",
        f"    return np.full(x.shape, np.nan, dtype={dt}), np.full(x.shape, np.nan, dtype={dt})",
        f"a = np.ascontiguousarray(x.T).astype({dt})",
    ] + _common(dt, real) + [
        "sdim = np.zeros(1, dtype=np.int32)",
        f"vs = np.zeros((n, n), dtype={dt})",
    ]
    if real:
        body += [f"wr = np.zeros(n, dtype={dt})", f"wi = np.zeros(n, dtype={dt})"]
        call = f"lapack_{p}gees((job_v, job_n, sel_fn, nn, a, ld, sdim, wr, wi, vs, ld, work, lwork, bwork, info))"
    else:
        body += [f"w = np.zeros(n, dtype={dt})", f"rwork = np.zeros(max(1, n), dtype={rdt})"]
        call = f"lapack_{p}gees((job_v, job_n, sel_fn, nn, a, ld, sdim, w, vs, ld, work, lwork, rwork, bwork, info))"
    body += [
        call,
        "lwork[0] = max(1, int(work[0].real))",
        f"work = np.zeros(lwork[0], dtype={dt})",
        call,
    ]
    routines = [f"{p}gees"]
    if op.sort is not None:
        routines.append(f"{p}trsen")
        eig = "complex(wr[i], wi[i])" if real else "w[i]"
        body += [
            "if info[0] == 0:",
            "    select = np.zeros(n, dtype=np.int32)",
            "    for i in range(n):",
            f"        if {_schur_criterion(op.sort, eig)}:",
            "            select[i] = 1",
            "    m = np.zeros(1, dtype=np.int32)",
            f"    s = np.zeros(1, dtype={rdt})",
            f"    sep = np.zeros(1, dtype={rdt})",
            "    lwork[0] = max(1, n)",
            f"    work = np.zeros(lwork[0], dtype={dt})",
        ]
        if real:
            body += [
                "    liwork = np.ones(1, dtype=np.int32)",
                "    iwork = np.zeros(1, dtype=np.int32)",
                f"    lapack_{p}trsen((job_n, job_v, select, nn, a, ld, vs, ld, wr, wi, m, s, sep, work, lwork, "
                "iwork, liwork, info))",
            ]
        else:
            body += [f"    lapack_{p}trsen((job_n, job_v, select, nn, a, ld, vs, ld, w, m, s, sep, work, lwork, info))"]
    body += [
        "if info[0] != 0:",
        f"    return np.full(x.shape, np.nan, dtype={dt}), np.full(x.shape, np.nan, dtype={dt})",
    ]
    if op.overwrite_a and node.inputs[0].type.dtype == out_dt:
        # In place (destroy_map {0: [0]}): T is left in the input's buffer.
        body += ["x[:, :] = a.T", "return x, np.ascontiguousarray(vs.T)"]
    else:
        body += ["return np.ascontiguousarray(a.T), np.ascontiguousarray(vs.T)"]
    helpers = [_HELPERS["all_finite"], import_line(*routines)]
    return make_kernel("schur", ["x"], body, helpers=helpers)


@numba_funcify.register(QZ, version=SCHUR_VERSION)
def numba_funcify_QZ(op, node, **kwargs):
    from lucent.link.numba.dispatch.linalg_lapack import PREFIX, import_line

    out_dt = node.outputs[0].type.dtype
    dt, rdt = dtype_text(out_dt), dtype_text(_REAL[out_dt])
    p = PREFIX[out_dt]
    real = not out_dt.startswith("complex")
    cdt = dtype_text("complex64" if _REAL[out_dt] == "float32" else "complex128")
    nan_mat = f"np.full((x.shape[0], x.shape[0]), np.nan, dtype={dt})"
    nan_outs = [nan_mat, nan_mat]
    if op.return_eigenvalues:
        nan_outs += [f"np.full(x.shape[0], np.nan, dtype={cdt})", f"np.full(x.shape[0], np.nan, dtype={dt})"]
    nan_outs += [nan_mat, nan_mat]
    nan_return = "return " + ", ".join(nan_outs)
    body = _square_check(op, "x") + _square_check(op, "y") + [
        "if x.shape[0] != y.shape[0]:",
        "    raise KernelValueError('QZ: A and B must have the same shape, got {} and {}', x.shape[0], y.shape[0])",
        "if x.shape[0] == 0 or not (all_finite(x) and all_finite(y)):",
        f"    {nan_return}",
        f"a = np.ascontiguousarray(x.T).astype({dt})",
        f"b = np.ascontiguousarray(y.T).astype({dt})",
    ] + _common(dt, real) + [
        "sdim = np.zeros(1, dtype=np.int32)",
        f"q = np.zeros((n, n), dtype={dt})",
        f"z = np.zeros((n, n), dtype={dt})",
        f"beta = np.zeros(n, dtype={dt})",
    ]
    if real:
        body += [f"alphar = np.zeros(n, dtype={dt})", f"alphai = np.zeros(n, dtype={dt})"]
        ev = "alphar, alphai, beta"
        call = (f"lapack_{p}gges((job_v, job_v, job_n, sel_fn, nn, a, ld, b, ld, sdim, {ev}, q, ld, z, ld, "
                "work, lwork, bwork, info))")
        alpha_i = "complex(alphar[i], alphai[i])"
    else:
        body += [f"alpha = np.zeros(n, dtype={dt})", f"rwork = np.zeros(8 * max(1, n), dtype={rdt})"]
        ev = "alpha, beta"
        call = (f"lapack_{p}gges((job_v, job_v, job_n, sel_fn, nn, a, ld, b, ld, sdim, {ev}, q, ld, z, ld, "
                "work, lwork, rwork, bwork, info))")
        alpha_i = "alpha[i]"
    body += [
        call,
        "lwork[0] = max(1, int(work[0].real))",
        f"work = np.zeros(lwork[0], dtype={dt})",
        call,
        "if info[0] != 0:",
        f"    {nan_return}",
    ]
    routines = [f"{p}gges"]
    if op.sort is not None:
        routines.append(f"{p}tgsen")
        body += [
            "select = np.zeros(n, dtype=np.int32)",
            "for i in range(n):",
            f"    if {_qz_criterion(op.sort, alpha_i, 'beta[i]')}:",
            "        select[i] = 1",
            "ijob = np.zeros(1, dtype=np.int32)",
            "want = np.ones(1, dtype=np.int32)",
            "m = np.zeros(1, dtype=np.int32)",
            f"pl = np.zeros(1, dtype={rdt})",
            f"pr = np.zeros(1, dtype={rdt})",
            f"dif = np.zeros(2, dtype={rdt})",
            f"lwork[0] = {'4 * n + 16' if real else '1'}",
            f"work = np.zeros(lwork[0], dtype={dt})",
            "liwork = np.ones(1, dtype=np.int32)",
            "iwork = np.zeros(1, dtype=np.int32)",
            f"lapack_{p}tgsen((ijob, want, want, select, nn, a, ld, b, ld, {ev}, q, ld, z, ld, m, pl, pr, dif, "
            "work, lwork, iwork, liwork, info))",
            "if info[0] != 0:",
            f"    {nan_return}",
        ]
    outs = ["np.ascontiguousarray(a.T)", "np.ascontiguousarray(b.T)"]
    # In place (destroy_map {0: [0]} / {1: [1]}): AA and BB are left in the inputs' buffers.
    for k, (flag, inp, mat) in enumerate(((op.overwrite_a, "x", "a"), (op.overwrite_b, "y", "b"))):
        if flag and node.inputs[k].type.dtype == out_dt:
            body.append(f"{inp}[:, :] = {mat}.T")
            outs[k] = inp
    if op.return_eigenvalues:
        if real:
            body += [f"alpha = np.zeros(n, dtype={cdt})", "for i in range(n):", f"    alpha[i] = {alpha_i}"]
        outs += ["alpha", "beta"]
    outs += ["np.ascontiguousarray(q.T)", "np.ascontiguousarray(z.T)"]
    body.append("return " + ", ".join(outs))
    helpers = [_HELPERS["all_finite"], import_line(*routines)]
    return make_kernel("qz", ["x", "y"], body, helpers=helpers)


__all__ = ["numba_funcify_QZ", "numba_funcify_Schur"]
