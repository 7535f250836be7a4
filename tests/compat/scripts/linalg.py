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

print("linalg compat: ok")
