"""Linear algebra and structural assumptions, written against PyTensor's API."""

import io
import warnings

import numpy as np
import scipy.linalg

import pytensor
import pytensor.tensor as pt
from pytensor.assumptions import (
    DIAGONAL,
    POSITIVE_DEFINITE,
    SYMMETRIC,
    UPPER_TRIANGULAR,
    AssumptionFeature,
    ConflictingAssumptionsError,
    FactState,
    assume,
    check_assumption,
)
from pytensor.assumptions.specify import SpecifyAssumptions
from pytensor.graph.fg import FunctionGraph
from pytensor.printing import debugprint
from pytensor.tensor.linalg import (
    Cholesky,
    Det,
    MatrixInverse,
    Solve,
    cholesky,
    det,
    inv,
    matrix_inverse,
    pinv,
    solve,
    tensorinv,
)

rng = np.random.default_rng(42)
m = rng.normal(size=(4, 4))
spd = m @ m.T + 4 * np.eye(4)
b_val = rng.normal(size=4)

# --- inverse, determinant, solve, cholesky on both paths --------------------------
x = pt.dmatrix("x")
b = pt.dvector("b")
outs = [
    inv(x),
    matrix_inverse(x),
    det(x),
    solve(x, b),
    solve(x, b, assume_a="pos"),
    solve(x, b, assume_a="sym", lower=True),
    cholesky(x),
    cholesky(x, lower=False),
]
for mode in ("FAST_COMPILE", "FAST_RUN"):
    f = pytensor.function([x, b], outs, mode=mode)
    r = f(spd, b_val)
    np.testing.assert_allclose(r[0], np.linalg.inv(spd), rtol=1e-10)
    np.testing.assert_allclose(r[1], np.linalg.inv(spd), rtol=1e-10)
    np.testing.assert_allclose(r[2], np.linalg.det(spd), rtol=1e-10)
    np.testing.assert_allclose(r[3], np.linalg.solve(spd, b_val), rtol=1e-10)
    np.testing.assert_allclose(r[4], np.linalg.solve(spd, b_val), rtol=1e-10)
    np.testing.assert_allclose(r[5], np.linalg.solve(spd, b_val), rtol=1e-10)
    np.testing.assert_allclose(r[6], np.linalg.cholesky(spd), rtol=1e-10)
    np.testing.assert_allclose(r[7], scipy.linalg.cholesky(spd, lower=False), rtol=1e-10)
    # float32 stays float32
    xf = pt.fmatrix("xf")
    g = pytensor.function([xf], [inv(xf), det(xf), cholesky(xf)], mode=mode)
    rf = g(spd.astype("float32"))
    assert [v.dtype for v in rf] == ["float32"] * 3
    # a matrix that is not positive definite gives NaN, not an error
    h = pytensor.function([x], cholesky(x), mode=mode)
    assert np.isnan(h(np.array([[1.0, 2.0], [2.0, 1.0]]))).all()
    # a singular system gives NaN
    s = pytensor.function([x, b], solve(x, b), mode=mode)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isnan(s(np.ones((2, 2)), np.ones(2))).all()

assert inv(x).type.dtype == "float64" and det(pt.imatrix()).type.dtype == "float64"
assert det(x).type.ndim == 0
assert isinstance(inv(x).owner.op, MatrixInverse) or "MatrixInverse" in str(inv(x).owner.op)
assert "Det" in str(det(x).owner.op)
assert "Cholesky" in str(cholesky(x).owner.op) and "Solve" in str(solve(x, b).owner.op)
assert Solve(assume_a="gen", b_ndim=1) == Solve(assume_a="general", b_ndim=1)
assert Cholesky(lower=True) != Cholesky(lower=False)
assert Det() == Det()

# pseudo-inverse and tensor inverse
rect = rng.normal(size=(4, 3))
xr = pt.dmatrix("xr")
t3 = pt.dtensor3("t3")
fp = pytensor.function([xr, t3], [pinv(xr), tensorinv(t3, ind=1)])
tv = np.eye(6).reshape(6, 2, 3) + 0.1 * rng.normal(size=(6, 2, 3))
rp, rt = fp(rect, tv)
np.testing.assert_allclose(rp, np.linalg.pinv(rect), atol=1e-12)
np.testing.assert_allclose(rt, np.linalg.tensorinv(tv, ind=1), rtol=1e-10)

# gradients
pytensor.gradient.verify_grad(inv, [spd], rng=np.random.default_rng(1))
pytensor.gradient.verify_grad(det, [spd], rng=np.random.default_rng(2))
pytensor.gradient.verify_grad(lambda a, v: solve(a, v), [spd, b_val], rng=np.random.default_rng(3))
pytensor.gradient.verify_grad(lambda a: cholesky((a + a.T) / 2), [spd], rng=np.random.default_rng(4))

# the older module paths still work, with a DeprecationWarning
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    from pytensor.tensor.nlinalg import det as old_det  # noqa: F401
    from pytensor.tensor.slinalg import solve as old_solve  # noqa: F401
assert any(issubclass(w.category, DeprecationWarning) for w in caught)

# --- assumptions ---------------------------------------------------------------------
xa = pt.matrix("xa")
declared = assume(xa, diagonal=True, orthogonal=False)
assert isinstance(declared.owner.op, SpecifyAssumptions)
assert str(declared.owner.op) == "SpecifyAssumptions{diagonal, !orthogonal}"
assert assume(xa) is xa

fg = FunctionGraph(outputs=[declared.T], clone=False)
feature = AssumptionFeature()
fg.attach_feature(feature)
assert feature.check(declared, DIAGONAL)
assert feature.check(declared, SYMMETRIC)  # implied by diagonal
assert feature.check(declared.T, UPPER_TRIANGULAR)  # transpose of a (lower-triangular) diagonal
assert check_assumption(fg, declared, DIAGONAL)

not_sym = assume(xa, symmetric=False)
fg2 = FunctionGraph(outputs=[not_sym], clone=False)
f2 = AssumptionFeature()
fg2.attach_feature(f2)
assert f2.get(not_sym, POSITIVE_DEFINITE) is FactState.FALSE  # contrapositive of pd -> sym

clash = assume(assume(xa, diagonal=True), diagonal=False)
fg3 = FunctionGraph(outputs=[clash], clone=False)
f3 = AssumptionFeature()
fg3.attach_feature(f3)
try:
    f3.get(clash, DIAGONAL)
except ConflictingAssumptionsError:
    pass
else:
    raise AssertionError("a contradicting declaration must raise ConflictingAssumptionsError")

# assume is the identity at run time, and its gradient passes through
fa = pytensor.function([xa], [assume(xa, positive_definite=True) * 2, pytensor.grad(assume(xa, symmetric=True).sum(), xa)])
va = np.eye(3, dtype=xa.dtype)
np.testing.assert_allclose(fa(va)[0], 2 * va)
np.testing.assert_allclose(fa(va)[1], np.ones((3, 3)))

# debugprint shows the known facts, implied ones pruned
buf = io.StringIO()
debugprint(inv(assume(xa, diagonal=True, orthogonal=True)), file=buf, print_assumptions=True)
lines = buf.getvalue().splitlines()
assert lines[0].endswith("a={diag, orth}") and "MatrixInverse" in lines[0]
assert lines[1].endswith("SpecifyAssumptions{diagonal, orthogonal} [id B] a={diag, orth}")
assert lines[2].endswith("xa [id C]")
buf = io.StringIO()
debugprint(assume(xa, positive_definite=True), file=buf, print_assumptions=True)
assert buf.getvalue().splitlines()[0] == "SpecifyAssumptions{positive_definite} [id A] a={pd}"
buf = io.StringIO()
debugprint(assume(xa, symmetric=False), file=buf)
assert "a={" not in buf.getvalue()

# rewrites use the facts: inv of a diagonal / orthogonal matrix needs no factorisation
xd = pt.dmatrix("xd")
for declared_inv, value in [
    (inv(assume(xd, diagonal=True)), np.diag([2.0, 4.0, 5.0])),
    (inv(assume(xd, orthogonal=True)), np.linalg.qr(m)[0]),
]:
    fi = pytensor.function([xd], declared_inv, mode="FAST_RUN")
    assert not any("MatrixInverse" in str(n.op) for n in fi.maker.fgraph.toposort())
    np.testing.assert_allclose(fi(value), np.linalg.inv(value), atol=1e-12)


# --- Blockwise: core ops over batch dimensions ------------------------------------------
from pytensor.graph.replace import vectorize_graph
from pytensor.tensor.blockwise import Blockwise
from pytensor.tensor.linalg import (
    block_diag,
    cho_solve,
    eig,
    eigh,
    eigvalsh,
    expm,
    kron,
    lstsq,
    lu,
    lu_factor,
    lu_solve,
    matrix_power,
    norm,
    pivot_to_permutation,
    qr,
    slogdet,
    solve_continuous_lyapunov,
    solve_discrete_are,
    solve_discrete_lyapunov,
    solve_sylvester,
    solve_triangular,
    svd,
    tensorsolve,
    trace,
)

A3 = pt.dtensor3("A3")
B3 = pt.dtensor3("B3")
stack = rng.normal(size=(3, 4, 4)) + 4 * np.eye(4)
rhs = rng.normal(size=(3, 4, 2))
batched_outs = [inv(A3), det(A3), solve(A3, B3), cholesky(A3 @ A3.mT)]
assert all(isinstance(o.owner.op, Blockwise) for o in batched_outs)
fb = pytensor.function([A3, B3], batched_outs)
got_inv, got_det, got_solve, got_chol = fb(stack, rhs)
np.testing.assert_allclose(got_inv, np.linalg.inv(stack), rtol=1e-8)
np.testing.assert_allclose(got_det, np.linalg.det(stack), rtol=1e-8)
np.testing.assert_allclose(got_solve, np.linalg.solve(stack, rhs), rtol=1e-8)
np.testing.assert_allclose(got_chol, np.linalg.cholesky(stack @ stack.transpose(0, 2, 1)), rtol=1e-8)
g_det = pytensor.function([A3], pytensor.grad(det(A3).sum(), A3))(stack)
np.testing.assert_allclose(g_det, np.linalg.det(stack)[:, None, None] * np.linalg.inv(stack).transpose(0, 2, 1), rtol=1e-6)
xm = pt.dmatrix("xm")
vec_inv = vectorize_graph(inv(xm), {xm: A3})
assert isinstance(vec_inv.owner.op, Blockwise)
np.testing.assert_allclose(vec_inv.eval({A3: stack}), np.linalg.inv(stack), rtol=1e-8)
softmax_rows = pt.vectorize(lambda v: pt.exp(v) / pt.exp(v).sum(), signature="(a)->(a)")
np.testing.assert_allclose(softmax_rows(xm).eval({xm: np.zeros((2, 3))}), np.full((2, 3), 1 / 3))

# --- Factorisations, solvers, matrix functions -----------------------------------------
sq = rng.normal(size=(4, 4)) + 4 * np.eye(4)
spd4 = sq @ sq.T
rect = rng.normal(size=(5, 3))
ym = pt.dmatrix("ym")
bv = pt.dvector("bv")
b4 = rng.normal(size=4)
w_eig = pt.sort(pt.real(eig(xm)[0])).eval({xm: spd4})
np.testing.assert_allclose(w_eig, np.linalg.eigvalsh(spd4), rtol=1e-8)
w_h, v_h = eigh(xm)
np.testing.assert_allclose(w_h.eval({xm: spd4}), np.linalg.eigvalsh(spd4), rtol=1e-10)
np.testing.assert_allclose(eigvalsh(xm, ym).eval({xm: spd4, ym: spd4 + np.eye(4)}), scipy.linalg.eigvalsh(spd4, spd4 + np.eye(4)), rtol=1e-8)
np.testing.assert_allclose(svd(xm, compute_uv=False).eval({xm: rect}), np.linalg.svd(rect, compute_uv=False), rtol=1e-10)
q_f, r_f = qr(xm, mode="economic")
np.testing.assert_allclose(q_f.eval({xm: rect}) @ r_f.eval({xm: rect}), rect, atol=1e-12)
for got, ref in zip(lu(xm), scipy.linalg.lu(sq)):
    np.testing.assert_allclose(got.eval({xm: sq}), ref, atol=1e-12)
lu_and_piv = lu_factor(xm)
np.testing.assert_allclose(lu_solve(lu_and_piv, bv).eval({xm: sq, bv: b4}), np.linalg.solve(sq, b4), rtol=1e-10)
np.testing.assert_array_equal(pivot_to_permutation(lu_and_piv[1], inverse=True).eval({xm: sq}).shape, (4,))
np.testing.assert_allclose(solve_triangular(xm, bv, lower=True).eval({xm: sq, bv: b4}), scipy.linalg.solve_triangular(sq, b4, lower=True), rtol=1e-10)
np.testing.assert_allclose(cho_solve((cholesky(xm), True), bv).eval({xm: spd4, bv: b4}), np.linalg.solve(spd4, b4), rtol=1e-8)
sign_v, logdet_v = slogdet(xm)
np.testing.assert_allclose([sign_v.eval({xm: sq}), logdet_v.eval({xm: sq})], np.linalg.slogdet(sq), rtol=1e-10)
np.testing.assert_allclose(trace(xm).eval({xm: sq}), np.trace(sq))
for order in [None, "fro", "nuc", 1, 2, np.inf]:
    np.testing.assert_allclose(norm(xm, ord=order).eval({xm: rect}), np.linalg.norm(rect, ord=order), rtol=1e-10)
np.testing.assert_allclose(norm(bv, ord=3).eval({bv: b4}), np.linalg.norm(b4, ord=3), rtol=1e-7)
np.testing.assert_allclose(kron(xm, ym).eval({xm: sq[:2, :2], ym: rect}), np.kron(sq[:2, :2], rect))
np.testing.assert_allclose(matrix_power(xm, 3).eval({xm: sq}), np.linalg.matrix_power(sq, 3), rtol=1e-10)
np.testing.assert_allclose(expm(xm).eval({xm: sq / 4}), scipy.linalg.expm(sq / 4), rtol=1e-10)
np.testing.assert_allclose(block_diag(xm, ym).eval({xm: sq, ym: rect}), scipy.linalg.block_diag(sq, rect))
np.testing.assert_allclose(lstsq(xm, ym, -1.0)[0].eval({xm: rect, ym: rect @ b4[:3, None]}), b4[:3, None], rtol=1e-8)
t4 = pt.dtensor4("t4")
a4 = np.eye(24).reshape(6, 4, 2, 12)
np.testing.assert_allclose(tensorsolve(t4, ym).eval({t4: a4, ym: np.ones((6, 4))}), np.linalg.tensorsolve(a4, np.ones((6, 4))), rtol=1e-10)
small = sq / 10
np.testing.assert_allclose(solve_sylvester(xm, ym, xm).eval({xm: small, ym: spd4}), scipy.linalg.solve_sylvester(small, spd4, small), rtol=1e-8)
np.testing.assert_allclose(solve_continuous_lyapunov(xm, ym).eval({xm: small - np.eye(4), ym: spd4}), scipy.linalg.solve_continuous_lyapunov(small - np.eye(4), spd4), rtol=1e-8)
np.testing.assert_allclose(solve_discrete_lyapunov(xm, ym).eval({xm: small, ym: spd4}), scipy.linalg.solve_discrete_lyapunov(small, spd4), rtol=1e-8)
bb = pt.dmatrix("bb")
np.testing.assert_allclose(
    solve_discrete_are(xm, bb, ym, pt.eye(2)).eval({xm: small, bb: rect[:4, :2], ym: spd4}),
    scipy.linalg.solve_discrete_are(small, rect[:4, :2], spd4, np.eye(2)), rtol=1e-7,
)

# --- Products ---------------------------------------------------------------------------
at3 = rng.normal(size=(3, 4, 5))
bt3 = rng.normal(size=(4, 5, 6))
np.testing.assert_allclose(pt.tensordot(A3, B3).eval({A3: at3, B3: bt3}), np.tensordot(at3, bt3), rtol=1e-10)
np.testing.assert_allclose(pt.einsum("ijk,jkl->il", A3, B3).eval({A3: at3, B3: bt3}), np.einsum("ijk,jkl->il", at3, bt3), rtol=1e-10)
np.testing.assert_allclose(pt.einsum("bij,bjk->bik", A3, B3).eval({A3: stack, B3: rhs}), stack @ rhs, rtol=1e-10)
np.testing.assert_allclose(pt.einsum("ii", xm).eval({xm: sq}), np.trace(sq))

# --- Rewrites that keep the value --------------------------------------------------------
f_rw = pytensor.function([xm, bv], [pt.dot(inv(xm), bv), pt.log(pt.abs(det(xm)))], mode="FAST_RUN")
got_solve_rw, got_logdet = f_rw(sq, b4)
np.testing.assert_allclose(got_solve_rw, np.linalg.solve(sq, b4), rtol=1e-10)
np.testing.assert_allclose(got_logdet, np.linalg.slogdet(sq)[1], rtol=1e-10)

# --- Schur, QZ and tridiagonal solvers ---------------------------------------------------
from pytensor.tensor.linalg import (  # noqa: E402
    QZ,
    LUFactorTridiagonal,
    Schur,
    SolveLUFactorTridiagonal,
    ordqz,
    qz,
    schur,
    tridiagonal_lu_factor,
    tridiagonal_lu_solve,
)

rng_s = np.random.default_rng(7)
sa = rng_s.normal(size=(4, 4))
sb = rng_s.normal(size=(4, 4))
xs, ys = pt.dmatrix("xs"), pt.dmatrix("ys")
T_s, Z_s = schur(xs, sort="lhp")
assert isinstance(T_s.owner.op, (Schur,)) or isinstance(getattr(T_s.owner.op, "core_op", None), Schur)
f_schur = pytensor.function([xs, ys], [T_s, Z_s, *qz(xs, ys), *ordqz(xs, ys, sort="iuc")])
got_s = f_schur(sa, sb)
ref_s = [*scipy.linalg.schur(sa, sort="lhp")[:2], *scipy.linalg.qz(sa, sb), *scipy.linalg.ordqz(sa, sb, sort="iuc")]
for g, e in zip(got_s, ref_s):
    np.testing.assert_allclose(g, e, atol=1e-8)
np.testing.assert_allclose(got_s[1] @ got_s[0] @ got_s[1].T, sa, atol=1e-10)
Tc, Zc = schur(xs, output="complex")
assert Tc.type.dtype == "complex128"
np.testing.assert_allclose(Tc.eval({xs: sa}), scipy.linalg.schur(sa, output="complex")[0], atol=1e-8)
assert QZ(sort="ouc", return_eigenvalues=True).gufunc_signature.count("(m)") == 2

tri_a = np.diag(rng_s.normal(size=5)) + np.diag(rng_s.normal(size=4), 1) + np.diag(rng_s.normal(size=4), -1)
tri_b = rng_s.normal(size=5)
factors = tridiagonal_lu_factor(xs)
assert isinstance(getattr(factors[0].owner.op, "core_op", factors[0].owner.op), LUFactorTridiagonal)
sol = tridiagonal_lu_solve(factors, pt.dvector("tb"), b_ndim=1)
assert isinstance(getattr(sol.owner.op, "core_op", sol.owner.op), SolveLUFactorTridiagonal)
np.testing.assert_allclose(sol.eval({xs: tri_a, sol.owner.inputs[-1]: tri_b}), np.linalg.solve(tri_a, tri_b), rtol=1e-10)
sol_t = tridiagonal_lu_solve(factors, pt.dmatrix("tbm"), b_ndim=2, transposed=True)
tbm = rng_s.normal(size=(5, 2))
np.testing.assert_allclose(sol_t.eval({xs: tri_a, sol_t.owner.inputs[-1]: tbm}), np.linalg.solve(tri_a.T, tbm), rtol=1e-10)
print("linalg compat: ok")

# QR: LAPACK's raw form, and gradients of wide matrices.
from functools import partial as _partial

from pytensor.gradient import verify_grad as _verify_grad
from pytensor.tensor.einsum import _delta, _general_dot, _iota
from pytensor.tensor.linalg import eigh as _eigh
from pytensor.tensor.linalg import eigvalsh as _eigvalsh
from pytensor.tensor.linalg import norm as _norm
from pytensor.tensor.linalg import qr as _qr
from pytensor.tensor.linalg import solve_discrete_lyapunov as _sdl

rng_r = np.random.default_rng(17)
qa = pt.dmatrix("qa")
wide = rng_r.normal(size=(3, 5))
h_raw, tau_raw, r_raw = pytensor.function([qa], list(_qr(qa, mode="raw")))(wide)
(h_ref, tau_ref), r_ref = scipy.linalg.qr(wide, mode="raw")
for got, ref in ((h_raw, h_ref), (tau_raw, tau_ref), (r_raw, r_ref)):
    np.testing.assert_allclose(got, ref, atol=1e-10)
for qmode in ("economic", "full"):
    _verify_grad(lambda v, m=qmode: _qr(v, mode=m)[0].sum() + _qr(v, mode=m)[1].sum(), [wide], rng=rng_r)

# Generalised symmetric eigenproblem: gradients with respect to both matrices.
ga, gb = rng_r.normal(size=(2, 4, 4))
_verify_grad(lambda a, b: _eigh(a + a.T, b @ b.T + 20 * pt.eye(4))[0], [ga, gb], rng=rng_r)
_verify_grad(lambda a, b: _eigvalsh(a + a.T, b @ b.T + 20 * pt.eye(4)), [ga, gb], rng=rng_r)

# norm of a stack of matrices (one norm per matrix) and the argument errors.
stack = rng_r.normal(size=(2, 4, 3))
st = pt.dtensor3("st")
for o in (None, 1, np.inf, 2):
    np.testing.assert_allclose(_norm(st, ord=o).eval({st: stack}), [np.linalg.norm(m, ord=o) for m in stack])
try:
    _norm(pt.dmatrix(), ord=0)
    raise AssertionError("norm(ord=0) of a matrix should raise")
except ValueError as e:
    assert "Invalid norm order for matrices" in str(e)

# Discrete Lyapunov equation of a stack of matrices.
la = 0.3 * rng_r.normal(size=(2, 3, 3))
lq = np.eye(3)
lA = pt.dtensor3("lA")
for meth in ("direct", "bilinear"):
    got = _sdl(lA, lq, method=meth).eval({lA: la})
    np.testing.assert_allclose(got, np.stack([scipy.linalg.solve_discrete_lyapunov(m, lq) for m in la]), rtol=1e-8)

# einsum's building blocks.
np.testing.assert_array_equal(_iota((2, 3), 1).eval(), [[0, 1, 2], [0, 1, 2]])
np.testing.assert_array_equal(_delta((2, 2), (0, 1)).eval(), np.eye(2, dtype=bool))
gx, gy = pt.tensor("gx", shape=(5, 2, 3)), pt.tensor("gy", shape=(5, 3, 4))
gxv, gyv = rng_r.normal(size=(5, 2, 3)), rng_r.normal(size=(5, 3, 4))
np.testing.assert_allclose(_general_dot((gx, gy), [[-1], [-2]], [[0], [0]]).eval({gx: gxv, gy: gyv}), gxv @ gyv,
                           rtol=1e-10)
print("linalg compat (decompositions): ok")
