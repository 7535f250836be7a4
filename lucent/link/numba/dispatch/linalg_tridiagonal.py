"""Numba kernels of the tridiagonal LU factorisation and solve: LAPACK's ``?gttrf`` / ``?gttrs``.

The same routines as the reference path, called through ``linalg_lapack``:
the factors, and the 1-based pivots, are LAPACK's. The diagonals are
vectors, so no transposition is needed; a matrix of right-hand sides is
passed as the C array of its transpose (column-major) and transposed back.
"""

from __future__ import annotations

from lucent.link.numba.dispatch.basic import numba_funcify
from lucent.link.numba.dispatch.shape import dtype_text, make_kernel
from lucent.tensor.linalg.solvers.tridiagonal import LUFactorTridiagonal, SolveLUFactorTridiagonal

TRIDIAGONAL_VERSION = 1


@numba_funcify.register(LUFactorTridiagonal, version=TRIDIAGONAL_VERSION)
def numba_funcify_LUFactorTridiagonal(op, node, **kwargs):
    from lucent.link.numba.dispatch.linalg_lapack import PREFIX, import_line

    out_dt = node.outputs[0].type.dtype
    dt, p = dtype_text(out_dt), PREFIX[out_dt]
    body = [
        "n = d_in.shape[0]",
        "if dl_in.shape[0] != max(n - 1, 0) or du_in.shape[0] != max(n - 1, 0):",
        "    raise KernelValueError('LUFactorTridiagonal: dl and du must have len(d) - 1 = {} entries, "
        "got {} and {}', max(n - 1, 0), dl_in.shape[0], du_in.shape[0])",
        f"dl = dl_in.astype({dt})",
        f"d = d_in.astype({dt})",
        f"du = du_in.astype({dt})",
        f"du2 = np.zeros(max(n - 2, 0), dtype={dt})",
        "ipiv = np.zeros(n, dtype=np.int32)",
        "if n > 0:",
        "    info = np.zeros(1, dtype=np.int32)",
        f"    pad = np.zeros(1, dtype={dt})",
        "    du2_work = du2 if n > 2 else pad",
        "    dl_work = dl if n > 1 else pad",
        "    du_work = du if n > 1 else pad",
        f"    lapack_{p}gttrf((np.array([n], dtype=np.int32), dl_work, d, du_work, du2_work, ipiv, info))",
        "return dl, d, du, du2, ipiv",
    ]
    return make_kernel("gttrf", ["dl_in", "d_in", "du_in"], body, helpers=[import_line(f"{p}gttrf")])


@numba_funcify.register(SolveLUFactorTridiagonal, version=TRIDIAGONAL_VERSION)
def numba_funcify_SolveLUFactorTridiagonal(op, node, **kwargs):
    from lucent.link.numba.dispatch.linalg_lapack import PREFIX, import_line

    out_dt = node.outputs[0].type.dtype
    dt, p = dtype_text(out_dt), PREFIX[out_dt]
    body = [
        "n = d_in.shape[0]",
        "if b_in.shape[0] != n:",
        "    raise KernelValueError('SolveLUFactorTridiagonal: b has {} rows, the matrix is {} x {}', "
        "b_in.shape[0], n, n)",
    ]
    if op.b_ndim == 1:
        body += [f"bt = b_in.astype({dt})", "nrhs = 1"]
        result = "bt"
    else:
        body += [f"bt = np.ascontiguousarray(b_in.T).astype({dt})", "nrhs = b_in.shape[1]"]
        result = "np.ascontiguousarray(bt.T)"
    body += [
        "if n == 0 or nrhs == 0:",
        f"    return {result}",
        f"pad = np.zeros(1, dtype={dt})",
        f"dl = dl_in.astype({dt}) if n > 1 else pad",
        f"d = d_in.astype({dt})",
        f"du = du_in.astype({dt}) if n > 1 else pad",
        f"du2 = du2_in.astype({dt}) if n > 2 else pad",
        "ipiv = ipiv_in.astype(np.int32)",
        "info = np.zeros(1, dtype=np.int32)",
        f"trans = np.array([{ord('T') if op.transposed else ord('N')}], dtype=np.uint8)",
        "nn = np.array([n], dtype=np.int32)",
        f"lapack_{p}gttrs((trans, nn, np.array([nrhs], dtype=np.int32), dl, d, du, du2, ipiv, bt, nn, info))",
        f"return {result}",
    ]
    return make_kernel("gttrs", ["dl_in", "d_in", "du_in", "du2_in", "ipiv_in", "b_in"], body,
                       helpers=[import_line(f"{p}gttrs")])


__all__ = ["numba_funcify_LUFactorTridiagonal", "numba_funcify_SolveLUFactorTridiagonal"]
