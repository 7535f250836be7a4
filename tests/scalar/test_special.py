"""Special functions (lucent.scalar.special) against scipy.special, on both paths.

One compiled function evaluates every function over a grid that reaches
each branch (0, negative integers, huge/tiny values, NaN, +-inf), so the
Numba path costs one compile; the exhaustive sweep is marked slow.
"""

import numpy as np
import pytest
import scipy.special as sp

import lucent
import lucent.scalar as ps
import lucent.tensor as lt
from lucent.gradient import NullTypeGradError, verify_grad
from lucent.scalar.special_grad import gammainc_dk
from tests.helpers import run

SPECIAL_VALUES = [0.0, -0.0, 1e-300, 5e-324, -1.0, -2.0, -2.5, 0.5, 1.0, 3.7, 27.0, 171.5, 800.0, 1e300,
                  np.nan, np.inf, -np.inf]

UNARY = {
    "erf": sp.erf, "erfc": sp.erfc, "erfcx": sp.erfcx, "erfinv": sp.erfinv, "erfcinv": sp.erfcinv,
    "ndtri_exp": sp.ndtri_exp, "gamma": sp.gamma, "gammaln": sp.gammaln, "psi": sp.psi,
    "tri_gamma": lambda v: sp.polygamma(1, v), "j0": sp.j0, "j1": sp.j1, "i0": sp.i0, "i1": sp.i1,
    "log1mexp": lambda v: np.where(v < np.log(0.5), np.log1p(-np.exp(v)), np.log(-np.expm1(v))),
}
BINARY = {
    "owens_t": sp.owens_t, "gammainc": sp.gammainc, "gammaincc": sp.gammaincc,
    "gammaincinv": sp.gammaincinv, "gammainccinv": sp.gammainccinv, "jv": sp.jv, "ive": sp.ive,
    "kve": sp.kve,
}
TERNARY = {"betainc": sp.betainc, "betaincinv": sp.betaincinv}


def _grid(values):
    """Every pair (or triple) of ``values``, as flat arrays."""
    return np.meshgrid(*values, indexing="ij")


def _compare(got, expected, rtol):
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-300, equal_nan=True)


def _check(values, rtol=1e-13):
    x = lt.dvector("x")
    a, b = lt.dvectors("a", "b")
    p, q, r = lt.dvectors("p", "q", "r")
    va, vb = (g.ravel() for g in _grid([values, values]))
    small = [v for v in values if not (np.isfinite(v) and abs(v) > 1e5)]
    vp, vq, vr = (g.ravel() for g in _grid([small, small, [0.0, 0.2, 0.5, 0.9, 1.0, np.nan]]))
    outs = [getattr(lt, n)(x) for n in UNARY] + [getattr(lt, n)(a, b) for n in BINARY]
    outs += [getattr(lt, n)(p, q, r) for n in TERNARY]
    outs += [lt.polygamma(lt.as_tensor_variable(np.int64(3)), x), lt.hyp2f1(p, q, 1.5, r * 0.9)]
    got = run(outs, {x: np.array(values), a: va, b: vb, p: vp, q: vq, r: vr})
    with np.errstate(all="ignore"):
        expected = [f(np.array(values)) for f in UNARY.values()] + [f(va, vb) for f in BINARY.values()]
        expected += [f(vp, vq, vr) for f in TERNARY.values()]
        expected += [sp.polygamma(3, np.array(values)), sp.hyp2f1(vp, vq, 1.5, vr * 0.9)]
    names = list(UNARY) + list(BINARY) + list(TERNARY) + ["polygamma", "hyp2f1"]
    for name, g, e in zip(names, got, expected):
        try:
            _compare(g, e, rtol)
        except AssertionError as err:
            raise AssertionError(f"{name}: {err}") from None


def test_special_functions_match_scipy():
    _check(SPECIAL_VALUES)


@pytest.mark.slow
def test_special_functions_sweep():
    values = list(np.concatenate([-np.logspace(-5, 2.5, 23), np.logspace(-300, 300, 25), np.linspace(0, 30, 31)]))
    _check(values + [np.nan, np.inf, -np.inf], rtol=1e-12)


def test_dtype_rules():
    assert ps.erf(ps.int8("i")).type.dtype == "float32"
    assert ps.erf(ps.int64("i")).type.dtype == "float64"
    assert ps.gammainc(ps.float32("k"), ps.float32("x")).type.dtype == "float32"
    assert ps.erf(ps.complex64("z")).type.dtype == "complex64"
    with pytest.raises(TypeError, match="complex"):
        ps.erfc(ps.complex128("z"))
    with pytest.raises(TypeError, match="must be an integer"):
        ps.polygamma(ps.float64("n"), ps.float64("x"))
    assert ps.polygamma(ps.int32("n"), ps.float32("x")).type.dtype == "float32"


def test_float32_is_rounded_from_float64():
    x = lt.fvector("x")
    v = np.array([0.1, 1.5, 3.0, 10.0], dtype="float32")
    got = run([lt.gammaln(x), lt.erfcx(x)], {x: v})
    assert got[0].dtype == np.float32
    np.testing.assert_array_equal(got[0], sp.gammaln(v.astype("float64")).astype("float32"))
    np.testing.assert_array_equal(got[1], sp.erfcx(v.astype("float64")).astype("float32"))


RNG = np.random.default_rng(7)


@pytest.mark.parametrize(
    "fn, domain",
    [
        (lt.erf, (-2, 2)), (lt.erfc, (-2, 2)), (lt.erfcx, (-2, 4)), (lt.erfinv, (-0.9, 0.9)),
        (lt.erfcinv, (0.1, 1.9)), (lt.ndtri_exp, (-5, -0.1)), (lt.gamma, (0.5, 4)),
        (lt.gammaln, (0.2, 6)), (lt.psi, (0.3, 5)), (lt.tri_gamma, (0.3, 5)), (lt.j0, (-5, 5)),
        (lt.j1, (-5, 5)), (lt.i0, (-3, 3)), (lt.i1, (-3, 3)), (lt.log1mexp, (-5, -0.05)),
        (lt.arcsin, (-0.9, 0.9)), (lt.arccos, (-0.9, 0.9)), (lt.sinh, (-3, 3)), (lt.cosh, (-3, 3)),
        (lt.arcsinh, (-3, 3)), (lt.arccosh, (1.1, 4)), (lt.arctanh, (-0.9, 0.9)),
    ],
)
def test_unary_gradients(fn, domain):
    verify_grad(fn, [RNG.uniform(*domain, size=5)], rng=RNG, mode="FAST_COMPILE")


@pytest.mark.parametrize(
    "fn, domains",
    [
        (lt.owens_t, [(-2, 2), (-2, 2)]),
        (lambda x: lt.polygamma(2, x), [(0.5, 3)]),
        (lt.gammainc, [(0.5, 5), (0.1, 8)]),
        (lt.gammaincc, [(0.5, 5), (0.1, 8)]),
        (lt.gammainc, [(0.2, 2), (45, 60)]),  # the upper-tail expansion of d/dk
        (lambda y: lt.gammaincinv(2.5, y), [(0.1, 0.9)]),
        (lambda y: lt.gammainccinv(2.5, y), [(0.1, 0.9)]),
        (lambda x: lt.jv(2.5, x), [(0.5, 5)]),
        (lambda x: lt.ive(1.5, x), [(-4, 4)]),
        (lambda x: lt.kve(0.5, x), [(0.5, 4)]),
        (lambda x: lt.betainc(2.0, 3.0, x), [(0.1, 0.9)]),
        (lambda y: lt.betaincinv(2.0, 3.0, y), [(0.1, 0.9)]),
        (lambda z: lt.hyp2f1(0.5, 1.5, 2.5, z), [(-0.5, 0.5)]),
        (lt.arctan2, [(-2, 2), (0.5, 2)]),
    ],
)
def test_multi_argument_gradients(fn, domains):
    verify_grad(fn, [RNG.uniform(*d, size=4) for d in domains], rng=RNG, mode="FAST_COMPILE")


def test_gammainc_dk_branches():
    h = 1e-5
    for k, x in [(0.5, 0.1), (3.0, 2.0), (30.0, 2.0), (100.0, 120.0), (2.5, 45.0), (0.3, 60.0), (1e3, 1e3)]:
        # d/dk P = -d/dk Q; Q is the accurate one far in the upper tail.
        num = -(sp.gammaincc(k + h, x) - sp.gammaincc(k - h, x)) / (2 * h)
        np.testing.assert_allclose(gammainc_dk(k, x), num, rtol=1e-5, atol=1e-14)
    assert gammainc_dk(1.0, 0.0) == 0.0 and gammainc_dk(1.0, np.inf) == 0.0
    assert np.isnan(gammainc_dk(-1.0, 1.0)) and np.isnan(gammainc_dk(1.0, -1.0))


def test_gammainc_gradient_both_paths():
    k, x = lt.dvectors("k", "x")
    cost = lt.sum(lt.gammainc(k, x)) + lt.sum(lt.gammaincc(k, x))
    gk = lucent.grad(lt.sum(lt.gammainc(k, x)), k)
    kv, xv = np.array([0.5, 3.0, 2.5, 30.0]), np.array([0.1, 2.0, 45.0, 2.0])
    got_gk, got_total = run([gk, lucent.grad(cost, x)], {k: kv, x: xv})
    np.testing.assert_allclose(got_gk, [gammainc_dk(a, b) for a, b in zip(kv, xv)], rtol=1e-12)
    np.testing.assert_allclose(got_total, 0, atol=1e-15)


def test_undefined_gradients_are_reported():
    v, x = lt.dvectors("v", "x")
    with pytest.raises(NullTypeGradError):
        lucent.grad(lt.sum(lt.jv(v, x)), v)
    n = lt.lvector("n")
    with pytest.raises(NullTypeGradError):
        lucent.grad(lt.sum(lt.polygamma(n, x)), n)
