"""Complex element-wise ops on both paths against NumPy: arithmetic, functions, parts, order.

The Numba path must run them natively (a fallback to object mode is an
error here) and agree with NumPy, special values included: zeros, signed
zeros, infinities and NaN in either part.
"""

import warnings

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.gradient import grad
from tests.helpers import run

#: Values covering the special cases of each function, paired position by position.
Z = np.array([1 + 2j, 3 - 1j, 0j, -0.5 + 0.25j, 1e-9 + 1e-9j, np.nan + 1j, np.inf + 0j, -2 + 0j,
              0.3 - 0.7j, -1 + 0j, 1j, -1e3 + 2e2j])
W = np.array([2 - 1j, 0.5 + 1j, 0j, 1j, 0j, 1 + 1j, 1 + 0j, -2 - 0j,
              3 + 0j, 0.5 + 0j, -1j, 1e-3 - 1e-3j])
R = np.array([1.0, 2.0, 0.0, -1.0, 1e-9, np.nan, np.inf, -0.0, 0.5, -3.0, 7.0, -1e3])

UNARY = ["exp", "expm1", "exp2", "log", "log2", "log10", "log1p", "sqrt", "reciprocal", "sin", "cos",
         "tan", "tanh", "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh", "arctanh",
         "sqr", "sign", "conj", "neg"]


def _reference(name, *args):
    fn = {"sqr": np.square, "neg": np.negative}.get(name) or getattr(np, name)
    with np.errstate(all="ignore"):
        return fn(*args)


def _check(got, expected, dtype):
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    rtol = 1e-5 if dtype in ("complex64", "float32") else 1e-12
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * 1e-3, equal_nan=True)


@pytest.fixture(autouse=True)
def _no_fallback():
    """A complex kernel falling back to object mode fails the test."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*object mode.*")
        warnings.filterwarnings("ignore", category=RuntimeWarning)
        yield


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ["complex128", "complex64"])
def test_unary_functions_match_numpy(name, dtype):
    x = lt.vector(dtype=dtype)
    out = -x if name == "neg" else getattr(lt, name)(x)
    z = Z.astype(dtype)
    assert out.dtype == dtype
    _check(run(out, {x: z}), _reference(name, z).astype(dtype), dtype)


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "true_divide", "power"])
def test_binary_arithmetic_matches_numpy(op):
    x, y = lt.zvector(), lt.zvector()
    out = {"add": x + y, "subtract": x - y, "multiply": x * y, "true_divide": x / y, "power": x**y}[op]
    _check(run(out, {x: Z, y: W}), _reference(op, Z, W), "complex128")


def test_integer_powers_are_exact_products():
    """NumPy multiplies for small integer exponents: signed zeros and inf survive."""
    x = lt.zvector()
    for k in (-3, -2, 2, 3, 5, 17):
        _check(run(x**k, {x: Z}), _reference("power", Z, complex(k)), "complex128")


def test_parts_abs_angle_and_construction():
    x, r, s = lt.zvector(), lt.dvector(), lt.fvector()
    outs = [lt.real(x), lt.imag(x), lt.abs(x), lt.angle(x), lt.complex(r, r[::-1]), lt.complex(s, s)]
    got = run(outs, {x: Z, r: R, s: R.astype("float32")})
    expected = [Z.real, Z.imag, np.abs(Z), np.angle(Z)]
    for g, e in zip(got, expected):
        _check(g, e, "float64")
    built = np.empty(R.shape, "complex128")
    built.real, built.imag = R, R[::-1]
    _check(got[4], built, "complex128")
    assert got[5].dtype == "complex64"


def test_mixed_real_and_complex_and_casts():
    x, r, i = lt.zvector(), lt.dvector(), lt.lvector()
    outs = [x * r + 2, r / x, x + i, lt.cast(r, "complex128"), lt.cast(x, "complex64")]
    got = run(outs, {x: Z, r: R, i: np.arange(len(Z))})
    with np.errstate(all="ignore"):
        expected = [Z * R + 2, R / Z, Z + np.arange(len(Z)), R.astype("complex128"), Z.astype("complex64")]
    for g, e in zip(got, expected):
        _check(g, e, str(e.dtype))


@pytest.mark.parametrize("op", ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"])
def test_comparisons_use_numpys_order(op):
    x, y = lt.zvector(), lt.zvector()
    out = getattr(lt, {"equal": "eq", "not_equal": "neq", "less": "lt", "less_equal": "le",
                       "greater": "gt", "greater_equal": "ge"}[op])(x, y)
    ties = np.array([1 + 1j, 1 + 2j, 2 + 0j, np.nan + 0j, 1 + np.nan * 1j])
    for a, b in ((Z, W), (ties, ties[::-1]), (ties, ties)):
        np.testing.assert_array_equal(run(out, {x: a, y: b}), getattr(np, op)(a, b))


def test_isnan_isinf_and_switch():
    x, y, r = lt.zvector(), lt.zvector(), lt.dvector()
    got = run([lt.isnan(x), lt.isinf(x), lt.switch(lt.gt(r, 0), x, y)], {x: Z, y: W, r: R})
    np.testing.assert_array_equal(got[0], np.isnan(Z))
    np.testing.assert_array_equal(got[1], np.isinf(Z))
    _check(got[2], np.where(R > 0, Z, W), "complex128")


def test_fused_chains_broadcasting_strides_and_0d():
    x, m, s = lt.zvector(), lt.zmatrix(), lt.zscalar()
    out = lt.exp(m * s) / (1 + lt.sqr(x)) - lt.conj(x)
    mat = (Z[:6, None] * W[None, :4].conj()).T[:, ::2]  # transposed and strided
    zs = np.asarray(0.5 - 0.1j)
    xs = Z[1:4]
    with np.errstate(all="ignore"):
        expected = np.exp(mat * zs) / (1 + xs**2) - np.conj(xs)
    _check(run(out, {m: mat, s: zs, x: xs}), expected, "complex128")
    _check(run(lt.exp(s), {s: zs}), np.exp(zs), "complex128")
    empty = np.zeros((0, 3), "complex128")
    assert run(lt.exp(m) * m, {m: empty}).shape == (0, 3)


def test_sums_and_products_of_complex_values():
    m = lt.zmatrix()
    mat = (Z[:6, None] * W[None, :4]).astype("complex128")
    mat[~np.isfinite(mat)] = 1 + 1j
    got = run([m.sum(), m.sum(axis=0), m.prod(axis=1)], {m: mat})
    for g, e in zip(got, [mat.sum(), mat.sum(axis=0), mat.prod(axis=1)]):
        np.testing.assert_allclose(g, e, rtol=1e-12)


def test_complex_gradient_is_refused_with_a_clear_error():
    x = lt.zscalar("x")
    with pytest.raises(NotImplementedError, match="gradient of exp is not implemented for complex inputs"):
        grad(lt.real(lt.exp(x)), x)


def test_debugmode_runs_complex_graphs_clean():
    x, y = lt.zvector(), lt.zvector()
    out = lt.log(x * y + 1) ** 2 + lt.abs(x)
    f = lucent.function([x, y], out, mode="DebugMode")
    zs, ws = Z[:5].copy(), W[:5].copy()
    ws[4] = 1 + 0j
    with np.errstate(all="ignore"):
        expected = np.log(zs * ws + 1) ** 2 + np.abs(zs)
    np.testing.assert_allclose(f(zs, ws), expected, rtol=1e-12)


def test_maximum_minimum_and_max_min_reductions_use_numpys_order():
    x, y, m = lt.zvector(), lt.zvector(), lt.zmatrix()
    ties = np.array([1 + 1j, 1 + 2j, 2 + 0j, -1 - 5j, 1 + 1j, 0.5 + 9j])
    other = np.array([1 + 2j, 1 + 1j, 2 + 0j, -1 + 5j, 0.5 + 1j, 0.5 + 9j])
    mat = np.stack([ties, other, ties[::-1]])
    got = run([lt.maximum(x, y), lt.minimum(x, y), m.max(), m.min(axis=0), m.max(axis=1)],
              {x: ties, y: other, m: mat})
    expected = [np.maximum(ties, other), np.minimum(ties, other), mat.max(), mat.min(axis=0), mat.max(axis=1)]
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)
    # a NaN in either part propagates, as for floats
    with_nan = ties.copy()
    with_nan[2] = complex(1.0, np.nan)
    got = run([lt.maximum(x, y), m.max()], {x: with_nan, y: other, m: with_nan[None, :]})
    assert np.isnan(got[0][2]) and np.isnan(got[1])


def test_argmax_and_argmin_of_complex_values():
    m = lt.zmatrix()
    mat = np.array([[1 + 1j, 1 + 2j, 2 + 0j, -1 - 5j], [0.5 + 9j, 2 + 0j, 2 - 1j, 2 + 0j]])
    got = run([lt.argmax(m), lt.argmax(m, axis=1), lt.argmin(m, axis=0)], {m: mat})
    for g, e in zip(got, [np.argmax(mat), np.argmax(mat, axis=1), np.argmin(mat, axis=0)]):
        np.testing.assert_array_equal(g, e)
    with_nan = mat.copy()
    with_nan[1, 1] = complex(0.0, np.nan)
    with_nan[1, 3] = complex(np.nan, 0.0)
    np.testing.assert_array_equal(run(lt.argmax(m, axis=1), {m: with_nan}), np.argmax(with_nan, axis=1))


def test_stabilising_rewrites_leave_complex_graphs_alone():
    """``log1p(exp(z))`` and ``log1p(-exp(z))`` become softplus / log1mexp only for real
    ``z``: those are real functions, so a complex graph keeps its form (no rewrite
    failure, no fallback) and its values."""
    z = lt.zvector()
    zs = Z[[0, 1, 3, 8, 9, 10]]
    exprs = [lt.log1p(lt.exp(z)), lt.log1p(-lt.exp(z)), lt.log(1 - lt.exp(z)), lt.log(-lt.expm1(z)),
             lt.log(1 + lt.exp(z)), 1 / (1 + lt.exp(-z))]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = run(exprs, {z: zs})
    with np.errstate(all="ignore"):
        expected = [np.log1p(np.exp(zs)), np.log1p(-np.exp(zs)), np.log(1 - np.exp(zs)), np.log(-np.expm1(zs)),
                    np.log(1 + np.exp(zs)), 1 / (1 + np.exp(-zs))]
    for g, e in zip(got, expected):
        _check(g, e, "complex128")


def test_complex_variables_have_parts_and_conjugates_and_refuse_clip():
    x, r = lt.zvector(), lt.dvector()
    got = run([x.real, x.imag, x.conj(), x.conjugate()], {x: Z})
    for g, e in zip(got, [Z.real, Z.imag, Z.conj(), Z.conj()]):
        np.testing.assert_array_equal(g, e)
    assert r.conj() is r  # a real variable is its own conjugate
    with pytest.raises(TypeError, match="complex argument not supported"):
        lt.clip(x, 0.0, 1.0)
    with pytest.raises(TypeError, match="complex argument not supported"):
        lt.sigmoid(x)
