"""Numba kernels of the structured solvers, matrix equations and matrix functions.

* ``SolveTriangular`` and ``CholeskySolve``: LAPACK's ``?trtrs`` and
  ``?potrs``, as SciPy's (a zero on the diagonal gives NaN, as on the
  reference path);
* ``Expm``: scaling and squaring with the degree-13 Padé approximant
  (Higham 2005), which agrees with SciPy's choice of degree to rounding;
* ``SolveSylvester``: the ``m n``-sized linear system
  ``(A (x) I + I (x) B^T) vec(X) = vec(Q)`` (row-major ``vec``);
* ``SolveDiscreteARE``: the structure-preserving doubling algorithm, which
  converges quadratically to the stabilising solution SciPy returns;
* ``Lstsq`` (``np.linalg.lstsq``) and ``BlockDiagonal`` (a fill loop).
"""

from __future__ import annotations

from lucent.link.numba.dispatch.basic import numba_funcify
from lucent.link.numba.dispatch.linalg import _HELPERS, destroying_kernel, lapack_solve_helper
from lucent.link.numba.dispatch.shape import dtype_text, fail, make_kernel
from lucent.tensor.linalg.constructors import BlockDiagonal
from lucent.tensor.linalg.products import Expm
from lucent.tensor.linalg.solvers.linear_control import SolveDiscreteARE, SolveSylvester
from lucent.tensor.linalg.solvers.lstsq import Lstsq
from lucent.tensor.linalg.solvers.psd import CholeskySolve
from lucent.tensor.linalg.solvers.triangular import SolveTriangular

SOLVE_VERSION = 4

EXPM = '''
@numba.njit(cache=False)
def expm_pade13(a):
    b = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
         129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
         40840800.0, 960960.0, 16380.0, 182.0, 1.0)
    n = a.shape[0]
    norm1 = 0.0
    for j in range(n):
        s = 0.0
        for i in range(n):
            s += abs(a[i, j])
        norm1 = max(norm1, s)
    sq = 0
    if norm1 > 5.371920351148152:
        sq = int(np.ceil(np.log2(norm1 / 5.371920351148152)))
    x = a / (2.0 ** sq)
    ident = np.eye(n, dtype=a.dtype)
    x2 = x @ x
    x4 = x2 @ x2
    x6 = x4 @ x2
    u = x @ (x6 @ (b[13] * x6 + b[11] * x4 + b[9] * x2) + b[7] * x6 + b[5] * x4 + b[3] * x2 + b[1] * ident)
    v = x6 @ (b[12] * x6 + b[10] * x4 + b[8] * x2) + b[6] * x6 + b[4] * x4 + b[2] * x2 + b[0] * ident
    r = np.linalg.solve(v - u, v + u)
    for _ in range(sq):
        r = r @ r
    return r
'''


def _b2(b_ndim, name="b"):
    """The right-hand side as a matrix (the LAPACK helpers read it element by element)."""
    return name if b_ndim == 2 else f"np.ascontiguousarray({name}).reshape(({name}.shape[0], 1))"


def _as_dtype(name, param, var, dt):
    """``name = param`` in the output dtype, copied only when the dtype differs: the LAPACK
    helpers read a matrix in place in either contiguous order."""
    return f"{name} = {param}" if var.type.dtype == dt.replace("np.", "") else f"{name} = {param}.astype({dt})"


@numba_funcify.register(SolveTriangular, version=SOLVE_VERSION)
def numba_funcify_SolveTriangular(op, node, **kwargs):
    dt = dtype_text(node.outputs[0].type.dtype)
    body = [
        _as_dtype("a", "A", node.inputs[0], dt),
        _as_dtype("b", "B", node.inputs[1], dt),
        "if a.shape[0] != a.shape[1] or b.shape[0] != a.shape[0]:",
        "    " + fail("Value", "SolveTriangular: incompatible shapes, `a` has {} x {} and `b` {} rows",
                      "a.shape[0]", "a.shape[1]", "b.shape[0]"),
        f"x = lapack_tri_solve(a, {_b2(op.b_ndim)}, {op.lower}, {op.trans}, {op.unit_diagonal})",
        "return x" if op.b_ndim == 2 else "return x.reshape(b.shape)",
    ]
    destroyed = "B" if op.destroy_map.get(0) == [1] and node.inputs[1].type == node.outputs[0].type else None
    helpers = [lapack_solve_helper(node.outputs[0].type.dtype, "trtrs")]
    return destroying_kernel("solve_triangular", ["A", "B"], body, helpers, destroyed)


@numba_funcify.register(CholeskySolve, version=SOLVE_VERSION)
def numba_funcify_CholeskySolve(op, node, **kwargs):
    dt = dtype_text(node.outputs[0].type.dtype)
    body = [
        _as_dtype("L", "C", node.inputs[0], dt),
        _as_dtype("b", "B", node.inputs[1], dt),
        "if L.shape[0] != L.shape[1] or b.shape[0] != L.shape[0]:",
        "    " + fail("Value", "CholeskySolve: incompatible shapes, `c` has {} x {} and `b` {} rows",
                      "L.shape[0]", "L.shape[1]", "b.shape[0]"),
        f"x = lapack_cho_solve(L, {_b2(op.b_ndim)}, {op.lower})",
        "return x" if op.b_ndim == 2 else "return x.reshape(b.shape)",
    ]
    destroyed = "B" if op.destroy_map.get(0) == [1] and node.inputs[1].type == node.outputs[0].type else None
    helpers = [lapack_solve_helper(node.outputs[0].type.dtype, "potrs")]
    return destroying_kernel("cho_solve", ["C", "B"], body, helpers, destroyed)


@numba_funcify.register(Expm, version=SOLVE_VERSION)
def numba_funcify_Expm(op, node, **kwargs):
    dt = dtype_text(node.outputs[0].type.dtype)
    body = [
        f"a = np.ascontiguousarray(x).astype({dt})",
        "if a.shape[0] != a.shape[1]:",
        "    " + fail("Value", "Expm: input array is expected to be square but has the shape: ({}, {})",
                      "a.shape[0]", "a.shape[1]"),
        "if a.shape[0] == 0 or not all_finite(a):",
        f"    return np.full(a.shape, np.nan, dtype={dt}) if a.shape[0] else a.copy()",
        "return expm_pade13(a)",
    ]
    return make_kernel("expm", ["x"], body, helpers=[_HELPERS["all_finite"], EXPM])


@numba_funcify.register(SolveSylvester, version=SOLVE_VERSION)
def numba_funcify_SolveSylvester(op, node, **kwargs):
    dt = dtype_text(node.outputs[0].type.dtype)
    body = [
        f"a = np.ascontiguousarray(A).astype({dt})",
        f"b = np.ascontiguousarray(B).astype({dt})",
        f"q = np.ascontiguousarray(Q).astype({dt})",
        "m, n = q.shape",
        "if a.shape[0] != m or a.shape[1] != m or b.shape[0] != n or b.shape[1] != n:",
        "    " + fail("Value", "solve_sylvester: shapes of A, B and Q do not match (Q is {} x {})", "m", "n"),
        f"system = np.kron(a, np.eye(n, dtype={dt})) + np.kron(np.eye(m, dtype={dt}), np.ascontiguousarray(b.T))",
        "return np.linalg.solve(system, q.reshape(m * n)).reshape((m, n))",
    ]
    return make_kernel("solve_sylvester", ["A", "B", "Q"], body)


@numba_funcify.register(SolveDiscreteARE, version=SOLVE_VERSION)
def numba_funcify_SolveDiscreteARE(op, node, **kwargs):
    dt = dtype_text(node.outputs[0].type.dtype)
    if dt.startswith("np.complex"):
        raise NotImplementedError("solve_discrete_are has no Numba kernel for complex input")
    body = [
        f"a = np.ascontiguousarray(A).astype({dt})",
        f"b = np.ascontiguousarray(B).astype({dt})",
        f"h = np.ascontiguousarray(Q).astype({dt})",
        f"r = np.ascontiguousarray(R).astype({dt})",
        "n = a.shape[0]",
        f"ident = np.eye(n, dtype={dt})",
        "g = b @ np.linalg.solve(r, np.ascontiguousarray(b.T))",
        "for _ in range(200):",
        "    w = ident + g @ h",
        "    wa = np.linalg.solve(w, a)",
        "    wg = np.linalg.solve(w, g)",
        "    a_next = a @ wa",
        "    g_next = g + a @ wg @ a.T",
        "    h_next = h + a.T @ h @ wa",
        "    done = np.max(np.abs(h_next - h)) <= 1e-14 * np.max(np.abs(h_next))",
        "    a, g, h = a_next, g_next, h_next",
        "    if done:",
        "        break",
        "return (h + h.T) / 2",
    ]
    return make_kernel("solve_discrete_are", ["A", "B", "Q", "R"], body)


@numba_funcify.register(Lstsq, version=SOLVE_VERSION)
def numba_funcify_Lstsq(op, node, **kwargs):
    dt = dtype_text(node.outputs[0].type.dtype)
    rdt = dtype_text(node.outputs[1].type.dtype)
    body = [
        f"a = np.ascontiguousarray(X).astype({dt})",
        f"b = np.ascontiguousarray(Y).astype({dt})",
        "x, res, rank, s = np.linalg.lstsq(a, b, rcond=item_of(rc))",
        f"return x, res.astype({rdt}), np.asarray(rank, dtype=np.int32), s.astype({rdt})",
    ]
    return make_kernel("lstsq", ["X", "Y", "rc"], body)


@numba_funcify.register(BlockDiagonal, version=SOLVE_VERSION)
def numba_funcify_BlockDiagonal(op, node, **kwargs):
    dt = dtype_text(node.outputs[0].type.dtype)
    params = [f"m{i}" for i in range(op.n_inputs)]
    rows = " + ".join(f"{p}.shape[0]" for p in params)
    cols = " + ".join(f"{p}.shape[1]" for p in params)
    body = [f"out = np.zeros(({rows}, {cols}), dtype={dt})", "r0 = 0", "c0 = 0"]
    for p in params:
        body += [
            f"for i in range({p}.shape[0]):",
            f"    for j in range({p}.shape[1]):",
            f"        out[r0 + i, c0 + j] = {p}[i, j]",
            f"r0 += {p}.shape[0]",
            f"c0 += {p}.shape[1]",
        ]
    body.append("return out")
    return make_kernel("block_diag", params, body)


__all__ = [
    "numba_funcify_BlockDiagonal",
    "numba_funcify_CholeskySolve",
    "numba_funcify_Expm",
    "numba_funcify_Lstsq",
    "numba_funcify_SolveDiscreteARE",
    "numba_funcify_SolveSylvester",
    "numba_funcify_SolveTriangular",
]
