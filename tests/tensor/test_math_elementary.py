"""Elementwise functions of lucent.tensor.math added for PyTensor parity.

Inverse and hyperbolic trigonometry, rounding modes, float predicates,
complex parts, angle conversions, clip with crossed bounds, cov and the
small helpers (divmod, ceil_intdiv, nan_to_num, ...), on both paths.
"""

import numpy as np
import pytest

import lucent.scalar as ps
import lucent.tensor as lt
from tests.helpers import run


def test_trig_hyperbolic_rounding_vs_numpy():
    x, y = lt.dvectors("x", "y")
    xv = np.array([-0.7, 0.0, 0.2, 0.5, 0.999])
    yv = np.array([0.3, -1.5, 2.5, -2.5, 0.49999999999999994])
    outs = [lt.arcsin(x), lt.arccos(x), lt.arctan2(x, y), lt.sinh(y), lt.cosh(y), lt.arcsinh(y),
            lt.arctanh(x), lt.arccosh(abs(y) + 1), lt.trunc(y), lt.round(y, "half_away_from_zero"),
            lt.iround(y), lt.deg2rad(y), lt.rad2deg(x)]
    got = run(outs, {x: xv, y: yv})
    expected = [np.arcsin(xv), np.arccos(xv), np.arctan2(xv, yv), np.sinh(yv), np.cosh(yv), np.arcsinh(yv),
                np.arctanh(xv), np.arccosh(abs(yv) + 1), np.trunc(yv), np.array([0.0, -2.0, 3.0, -3.0, 0.0]),
                np.round(yv).astype("int64"), np.deg2rad(yv), np.rad2deg(xv)]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-14, atol=0)
    assert got[10].dtype == np.int64


def test_dtype_rules():
    assert lt.arcsin(lt.bvector()).dtype == "float32"
    assert lt.arctan2(lt.ivector(), lt.ivector()).dtype == "float64"
    assert lt.trunc(lt.bvector()).dtype == "float32"
    assert lt.isnan(lt.fvector()).dtype == "bool"
    assert lt.real(lt.cvector()).dtype == "float32" and lt.imag(lt.zvector()).dtype == "float64"
    assert lt.complex(lt.fvector(), lt.fvector()).dtype == "complex64"
    assert lt.deg2rad(lt.ivector()).dtype == "float64"
    with pytest.raises(TypeError, match="complex"):
        ps.complex(ps.complex64("z"), ps.float32("x"))
    with pytest.raises(ValueError, match="half_away_from_zero"):
        lt.round(lt.dvector(), "up")


def test_float_predicates_and_isclose():
    x, y = lt.dvectors("x", "y")
    i = lt.lvector("i")
    xv = np.array([np.nan, np.inf, -np.inf, 1.0, 2.0])
    yv = np.array([np.nan, np.inf, np.inf, 1.0 + 1e-9, 2.1])
    got = run([lt.isnan(x), lt.isinf(x), lt.isfinite(x), lt.isposinf(x), lt.isneginf(x),
               lt.isclose(x, y), lt.isclose(x, y, equal_nan=True), lt.allclose(x[3:], y[3:], atol=0.2),
               lt.isnan(i), lt.isfinite(i)], {x: xv, y: yv, i: np.arange(3)})
    np.testing.assert_array_equal(got[0], np.isnan(xv))
    np.testing.assert_array_equal(got[1], np.isinf(xv))
    np.testing.assert_array_equal(got[2], np.isfinite(xv))
    np.testing.assert_array_equal(got[3], np.isposinf(xv))
    np.testing.assert_array_equal(got[4], np.isneginf(xv))
    np.testing.assert_array_equal(got[5], np.isclose(xv, yv))
    np.testing.assert_array_equal(got[6], np.isclose(xv, yv, equal_nan=True))
    assert bool(got[7])
    assert not got[8].any() and got[9].all()


def test_complex_parts():
    z = lt.zvector("z")
    zv = np.array([1 + 2j, -3 - 0.5j])
    got = run([lt.real(z), lt.imag(z), lt.angle(z), lt.conj(z), lt.complex(lt.real(z), lt.imag(z))], {z: zv})
    for g, e in zip(got, [zv.real, zv.imag, np.angle(zv), np.conj(zv), zv]):
        np.testing.assert_allclose(g, e)
    x = lt.dvector("x")
    assert lt.conj(x) is x
    assert run([lt.real(x), lt.imag(x)], {x: np.array([1.5])})[1].tolist() == [0.0]


def test_clip_crossed_bounds_and_helpers():
    m = lt.dmatrix("m")
    a, b = lt.lvectors("a", "b")
    mv = np.array([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]])
    got = run([lt.clip(m, 2.0, 1.0), lt.cov(m), lt.cov(m, rowvar=False, bias=True), lt.cov(m[0], m[1]),
               lt.nan_to_num(m / 0.0), lt.smallest(m, 2.0, 3.0), lt.largest(m, 2.0)], {m: mv})
    # PyTensor's order of tests: below lo -> lo, else above hi -> hi.
    np.testing.assert_array_equal(got[0], np.where(mv < 2, 2.0, np.where(mv > 1, 1.0, mv)))
    np.testing.assert_allclose(got[1], np.cov(mv))
    np.testing.assert_allclose(got[2], np.cov(mv, rowvar=False, bias=True))
    np.testing.assert_allclose(got[3], np.cov(mv[0], mv[1]))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got[4], np.nan_to_num(mv / 0.0))
    np.testing.assert_array_equal(got[5], np.minimum(mv, 2.0))
    np.testing.assert_array_equal(got[6], np.maximum(mv, 2.0))
    av, bv = np.array([7, -7, 6]), np.array([2, 2, 3])
    q, r, c = run([*lt.divmod(a, b), lt.ceil_intdiv(a, b)], {a: av, b: bv})
    np.testing.assert_array_equal(q, av // bv)
    np.testing.assert_array_equal(r, av % bv)
    np.testing.assert_array_equal(c, -(-av // bv))


def test_var_std_ddof():
    m = lt.dmatrix("m")
    mv = np.arange(12.0).reshape(3, 4) ** 1.5
    got = run([lt.var(m, axis=0, ddof=2), lt.std(m, axis=1, ddof=1), lt.var(m, corrected=True)], {m: mv})
    np.testing.assert_allclose(got[0], np.var(mv, axis=0, ddof=2))
    np.testing.assert_allclose(got[1], np.std(mv, axis=1, ddof=1))
    np.testing.assert_allclose(got[2], np.var(mv, ddof=1))
