"""Tests of lucent.tensor.math against NumPy: values, dtypes, shapes, errors and gradients."""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.gradient import grad, verify_grad
from lucent.tensor import math as tm
from tests.helpers import run

rng = np.random.default_rng(1)

UNARY = {
    "exp": np.exp, "log": np.log, "log1p": np.log1p, "expm1": np.expm1, "log2": np.log2,
    "log10": np.log10, "exp2": np.exp2, "sqrt": np.sqrt, "sqr": np.square,
    "reciprocal": lambda v: 1 / v, "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh,
    "arctan": np.arctan, "abs": np.abs, "sign": np.sign, "floor": np.floor, "ceil": np.ceil,
    "round": np.round, "neg": np.negative, "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
    "softplus": lambda v: np.logaddexp(0, v),
}
FLOAT_RESULT = {"exp", "log", "log1p", "expm1", "log2", "log10", "exp2", "sqrt", "reciprocal", "sin",
                "cos", "tan", "tanh", "arctan", "sigmoid", "softplus", "floor", "ceil"}


def _values(dtype, shape):
    if dtype.startswith("float"):
        return (rng.random(shape) * 2 + 0.1).astype(dtype)
    return rng.integers(1, 5, shape).astype(dtype)


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", ["float64", "float32", "int8", "int32"])
@pytest.mark.parametrize("shape", [(), (0,), (2, 3)])
def test_unary_vs_numpy(name, dtype, shape):
    x = lt.tensor(dtype=dtype, shape=(None,) * len(shape))
    xv = _values(dtype, shape)
    out = getattr(lt, name)(x)
    got = run(out, {x: xv})
    with np.errstate(all="ignore"):
        expected = UNARY[name](xv.astype("float64") if name in FLOAT_RESULT else xv)
    if name in FLOAT_RESULT and dtype.startswith("int"):
        assert out.type.dtype == ("float32" if dtype == "int8" else "float64")
    else:
        assert out.type.dtype == np.asarray(UNARY[name](xv)).dtype.name
    assert got.dtype.name == out.type.dtype and got.shape == shape
    tol = 1e-6 if "float32" in (dtype, out.type.dtype) else 1e-12
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


def test_unary_nan_and_noncontiguous():
    x = lt.dmatrix()
    xv = rng.random((4, 6))[::2, ::3]
    xv[0, 0] = np.nan
    for name in ("exp", "sigmoid", "softplus", "abs", "floor", "tanh"):
        got = run(getattr(lt, name)(x), {x: xv})
        assert np.isnan(got[0, 0])
        np.testing.assert_allclose(got[1:], UNARY[name](xv[1:]), rtol=1e-12)
    with np.errstate(all="ignore"):
        assert np.isnan(run(lt.log(x), {x: -np.ones((1, 1))})[0, 0])


BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "true_div": np.true_divide,
    "int_div": np.floor_divide, "mod": np.mod, "pow": np.power, "maximum": np.maximum,
    "minimum": np.minimum, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "eq": np.equal, "neq": np.not_equal,
}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float32", "float32"), ("int32", "int32"),
                                    ("int8", "float32"), ("int64", "float64"), ("int8", "int16")])
def test_binary_vs_numpy(name, dtypes):
    a = lt.tensor(dtype=dtypes[0], shape=(None, 1))
    b = lt.tensor(dtype=dtypes[1], shape=(1, None))
    av, bv = _values(dtypes[0], (3, 1)), _values(dtypes[1], (1, 4))
    if name in ("int_div", "mod"):
        av = av - 2  # negative numerators check floor semantics
    out = getattr(lt, name)(a, b)
    got = run(out, {a: av, b: bv})
    expected = BINARY[name](av, bv)
    assert out.type.dtype == expected.dtype.name, (out.type.dtype, expected.dtype)
    assert got.dtype == expected.dtype and got.shape == (3, 4)
    np.testing.assert_allclose(got, expected, rtol=1e-6 if "float32" in dtypes else 1e-12)


def test_python_operators():
    x, y = lt.dvector("x"), lt.dvector("y")
    i, j = lt.ivector("i"), lt.ivector("j")
    xv, yv = rng.random(3) + 0.5, rng.random(3) + 0.5
    iv, jv = np.array([5, -7, 3], "int32"), np.array([2, 3, -2], "int32")
    cases = [
        (x + y, xv + yv), (x - y, xv - yv), (x * y, xv * yv), (x / y, xv / yv), (x // y, xv // yv),
        (x % y, xv % yv), (x**y, xv**yv), (-x, -xv), (abs(-x), xv), (2 + x, 2 + xv), (2 - x, 2 - xv),
        (2 * x, 2 * xv), (2 / x, 2 / xv), (2 // x, 2 // xv), (2 % x, 2 % xv), (2**x, 2**xv),
        (x < y, xv < yv), (x <= y, xv <= yv), (x > y, xv > yv), (x >= y, xv >= yv),
        (i & j, iv & jv), (i | j, iv | jv), (i ^ j, iv ^ jv), (~i, ~iv), (1 & i, 1 & iv),
        (1 | i, 1 | iv), (1 ^ i, 1 ^ iv), (i // j, iv // jv), (i % j, iv % jv),
    ]
    for expr, expected in cases:
        got = run(expr, {x: xv, y: yv, i: iv, j: jv})
        np.testing.assert_allclose(got, expected, rtol=1e-12)
        assert got.dtype == np.asarray(expected).dtype or expr.dtype == "float64"
    m = lt.dmatrix()
    mv = rng.random((3, 3))
    np.testing.assert_allclose(run(m @ m, {m: mv}), mv @ mv)
    assert (lt.fvector() + 1.5).dtype == "float32"


def test_logic_switch_where_clip_cast():
    c = lt.bvector()
    b1, b2 = lt.tensor(dtype="bool", shape=(None,)), lt.tensor(dtype="bool", shape=(None,))
    bv1, bv2 = np.array([True, False, True]), np.array([True, True, False])
    for f, g in [(lt.and_, np.logical_and), (lt.or_, np.logical_or), (lt.xor, np.logical_xor)]:
        out = run(f(b1, b2), {b1: bv1, b2: bv2})
        np.testing.assert_array_equal(out, g(bv1, bv2))
        assert out.dtype == bool
    np.testing.assert_array_equal(run(lt.invert(b1), {b1: bv1}), ~bv1)
    x = lt.dvector()
    xv = np.array([-1.0, 0.5, 2.0])
    np.testing.assert_array_equal(run(lt.switch(x > 0, x, 0), {x: xv}), np.where(xv > 0, xv, 0))
    np.testing.assert_array_equal(run(lt.where(x > 0, 1.0, x), {x: xv}), np.where(xv > 0, 1.0, xv))
    np.testing.assert_array_equal(run(lt.clip(x, 0, 1), {x: xv}), np.clip(xv, 0, 1))
    out = tm.cast(x, "int8")
    assert out.dtype == "int8" and tm.cast(x, "float64") is x
    np.testing.assert_array_equal(run(out, {x: xv}), xv.astype("int8"))
    np.testing.assert_array_equal(run(tm.cast(c, "float32"), {c: np.array([1, 2], "int8")}), [1.0, 2.0])
    assert tm.expit is tm.sigmoid and tm.floor_div is tm.int_div
    with pytest.raises(TypeError):
        lt.and_(x, x)


# --- reductions ---------------------------------------------------------------------
@pytest.mark.parametrize("name", ["sum", "prod", "mean", "var", "std", "max", "min", "all", "any"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int8", "bool"])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_vs_numpy(name, dtype, axis, keepdims):
    x = lt.tensor(dtype=dtype, shape=(None, None, None))
    xv = _values(dtype, (2, 3, 4)) if dtype != "bool" else rng.random((2, 3, 4)) > 0.3
    out = getattr(lt, name)(x, axis=axis, keepdims=keepdims)
    got = run(out, {x: xv})
    expected = getattr(np, name)(xv, axis=axis, keepdims=keepdims)
    if name in ("sum", "prod", "all", "any", "max", "min") or not dtype.startswith("float"):
        assert out.type.dtype == expected.dtype.name
    assert got.dtype == out.type.dtype and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "var", "argmax", "argmin", "any"])
def test_reduction_axes_given_as_integer_arrays(name):
    """An axis may be a NumPy integer array (0-d: one axis), as NumPy accepts."""
    x = lt.dmatrix("x")
    xv = _values("float64", (2, 3))
    for axis in (np.array(0), np.array(-1), np.array([0, 1])):
        if name.startswith("arg") and axis.ndim:
            continue
        expected = getattr(np, name)(xv, axis=tuple(axis) if axis.ndim else int(axis))
        np.testing.assert_allclose(run(getattr(lt, name)(x, axis=axis), {x: xv}), expected)


def test_divmod_gives_floor_quotient_and_remainder():
    x, y = lt.dvector("x"), lt.dvector("y")
    xv, yv = np.array([7.0, -7.0, 7.5, 0.0]), np.array([2.0, 2.0, -2.0, 3.0])
    q, r = divmod(x, y)
    np.testing.assert_array_equal(run([q, r], {x: xv, y: yv}), np.divmod(xv, yv))
    n = lt.lvector("n")
    q, r = divmod(10, n)
    np.testing.assert_array_equal(run([q, r], {n: np.array([3, -4])}), np.divmod(10, np.array([3, -4])))


def test_reductions_0d_and_empty():
    s = lt.dscalar()
    assert run(lt.sum(s), {s: np.array(3.0)}) == 3.0
    assert run(lt.max(s, axis=None), {s: np.array(3.0)}) == 3.0
    x = lt.dmatrix()
    np.testing.assert_array_equal(run(lt.sum(x, axis=1), {x: np.zeros((0, 2))}), np.zeros(0))
    with np.errstate(all="ignore"):
        assert np.isnan(run(lt.mean(x), {x: np.zeros((0, 2))}))
    with pytest.raises(ValueError, match="empty"):
        run(lt.max(x, axis=0), {x: np.zeros((0, 2))})
    assert lt.mean(lt.ivector()).dtype == "float64"
    assert lt.mean(lt.fvector()).dtype == "float32"
    np.testing.assert_allclose(run(lt.var(x, ddof=1), {x: np.arange(6.0).reshape(2, 3)}),
                               np.var(np.arange(6.0), ddof=1))


def test_argmax_argmin():
    x = lt.dmatrix()
    xv = rng.random((3, 4))
    for f, g in [(lt.argmax, np.argmax), (lt.argmin, np.argmin)]:
        for axis in (None, 0, 1, -1):
            for keepdims in (False, True):
                out = f(x, axis=axis, keepdims=keepdims)
                got = run(out, {x: xv})
                assert out.dtype == "int64"
                np.testing.assert_array_equal(got, g(xv, axis=axis, keepdims=keepdims))
    assert str(lt.argmax(x).owner.op) == "Argmax{axis=None}"
    assert str(lt.argmax(x, axis=-1).owner.op) == "Argmax{axis=(1,)}"
    np.testing.assert_array_equal(run(lt.argmax(x, axis=(0, 1)), {x: xv}), np.argmax(xv))
    with pytest.raises(ValueError, match="empty"):
        run(lt.argmax(x), {x: np.zeros((0, 3))})
    g = grad(lt.sum(x * lt.argmax(x, axis=0)), x)
    np.testing.assert_array_equal(run(g, {x: xv}), np.broadcast_to(np.argmax(xv, axis=0), (3, 4)))


# --- products -------------------------------------------------------------------------
@pytest.mark.parametrize("sa, sb", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                                    ((), (3,)), ((2, 3), ()), ((0, 3), (3, 2))])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_dot_vs_numpy(sa, sb, dtype):
    a = lt.tensor(dtype=dtype, shape=(None,) * len(sa))
    b = lt.tensor(dtype=dtype, shape=(None,) * len(sb))
    av, bv = _values(dtype, sa), _values(dtype, sb)
    out = lt.dot(a, b)
    got = run(out, {a: av, b: bv})
    expected = np.dot(av, bv)
    assert got.shape == expected.shape and out.dtype == expected.dtype.name == got.dtype.name
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    assert str(lt.dot(lt.dmatrix(), lt.dmatrix()).owner.op) == "Dot"


def test_dot_errors_and_infer_shape():
    with pytest.raises(ValueError, match="not aligned"):
        lt.dot(lt.tensor(dtype="float64", shape=(2, 3)), lt.tensor(dtype="float64", shape=(4, 2)))
    a, b = lt.dmatrix(), lt.dmatrix()
    with pytest.raises(ValueError, match="not aligned"):
        run(lt.dot(a, b), {a: np.zeros((2, 3)), b: np.zeros((4, 2))})
    node = lt.dot(a, b).owner
    assert node.op.infer_shape(None, node, [("n", "k"), ("k", "m")]) == [("n", "m")]


@pytest.mark.parametrize("sa, sb", [((2, 3), (3, 4)), ((5, 2, 3), (3, 4)), ((3,), (2, 3, 4)),
                                    ((2, 3, 4), (4,)), ((1, 2, 3), (4, 3, 2)), ((3,), (3,))])
def test_matmul_vs_numpy(sa, sb):
    a = lt.tensor(dtype="float64", shape=tuple(1 if s == 1 else None for s in sa))
    b = lt.tensor(dtype="float64", shape=tuple(1 if s == 1 else None for s in sb))
    av, bv = rng.random(sa), rng.random(sb)
    got = run(lt.matmul(a, b), {a: av, b: bv})
    np.testing.assert_allclose(got, np.matmul(av, bv))
    assert got.shape == np.matmul(av, bv).shape
    verify_grad(lambda p, q: lt.matmul(p, q), [av, bv])


def test_matmul_errors():
    with pytest.raises(ValueError, match="do not match"):
        lt.matmul(lt.tensor(dtype="float64", shape=(2, 3)), lt.tensor(dtype="float64", shape=(4, 2)))
    with pytest.raises(ValueError, match="scalars"):
        lt.matmul(lt.dscalar(), lt.dmatrix())
    a, b = lt.tensor3(), lt.tensor3()
    with pytest.raises(ValueError, match="batch"):
        run(lt.matmul(a, b), {a: np.zeros((1, 2, 3)), b: np.zeros((4, 3, 2))})


def test_outer():
    x, y = lt.dvector(), lt.dvector()
    xv, yv = rng.random(3), rng.random(4)
    np.testing.assert_allclose(run(lt.outer(x, y), {x: xv, y: yv}), np.outer(xv, yv))


# --- gradients ------------------------------------------------------------------------
POS = rng.random((2, 3)) + 0.5


@pytest.mark.parametrize(
    "name",
    ["exp", "log", "log1p", "expm1", "log2", "log10", "exp2", "sqrt", "sqr", "reciprocal", "sin",
     "cos", "tan", "tanh", "arctan", "abs", "sigmoid", "softplus", "neg"],
)
def test_unary_verify_grad(name):
    verify_grad(getattr(lt, name), [POS])


@pytest.mark.parametrize("name", ["add", "sub", "mul", "true_div", "pow", "maximum", "minimum", "mod"])
def test_binary_verify_grad(name):
    verify_grad(getattr(lt, name), [POS, rng.random((1, 3)) + 0.3])


@pytest.mark.parametrize(
    "fn",
    [lambda v: lt.sum(v, axis=1, keepdims=True), lambda v: lt.mean(v, axis=0), lambda v: lt.var(v),
     lambda v: lt.std(v, axis=-1), lambda v: lt.prod(v), lambda v: lt.max(v, axis=1),
     lambda v: lt.min(v, axis=0, keepdims=True), lambda v: lt.clip(v, 0.8, 1.2),
     lambda v: lt.switch(v > 1, v * 2, v**3), lambda v: tm.cast(v, "float32") * 2,
     lambda v: lt.dot(v, v.T), lambda v: lt.dot(lt.sum(v, axis=0), v.T),
     lambda v: lt.outer(lt.sum(v, axis=0), lt.sum(v, axis=1))],
)
def test_composite_verify_grad(fn):
    verify_grad(fn, [POS])


def test_prod_grad_with_zeros():
    x = lt.dmatrix()
    xv = np.array([[0.0, 2.0, 3.0], [1.0, 2.0, 3.0], [0.0, 0.0, 2.0]])
    g = run(grad(lt.sum(lt.prod(x, axis=1)), x), {x: xv})
    np.testing.assert_allclose(g, [[6, 0, 0], [6, 3, 2], [0, 0, 0]])


def test_max_grad_ties_and_float32():
    x = lt.fvector()
    g = grad(lt.max(x), x)
    assert g.dtype == "float32"
    np.testing.assert_array_equal(run(g, {x: np.array([1, 3, 3], "float32")}), [0, 1, 1])


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint64"])
def test_int_div_extremes_match_numpy(dtype):
    # The smallest signed value divided by -1 wraps to itself in NumPy; a
    # zero divisor gives 0 for both // and %.
    info = np.iinfo(dtype)
    x, y = lt.vector("x", dtype=dtype), lt.vector("y", dtype=dtype)
    xv = np.array([info.min, info.max, 7, 5, 0], dtype=dtype)
    yv = np.array([-1 if info.min < 0 else 3, 2, 2, 0, 0]).astype(dtype)
    quotient, remainder = run([x // y, x % y], {x: xv, y: yv})
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(quotient, xv // yv)
        np.testing.assert_array_equal(remainder, xv % yv)
    assert quotient.dtype == dtype


def test_max_and_argmax_on_both_paths():
    import lucent.tensor as lt
    from lucent.tensor.math import max_and_argmax
    from tests.helpers import run

    m = lt.dmatrix("m")
    data = np.array([[1.0, 3.0, 2.0], [4.0, 0.0, 5.0]])
    mx, am = max_and_argmax(m, axis=1)
    got_mx, got_am = run([mx, am], {m: data})
    np.testing.assert_array_equal(got_mx, data.max(axis=1))
    np.testing.assert_array_equal(got_am, data.argmax(axis=1))
    mx, am = max_and_argmax(m)  # flattened
    got_mx, got_am = run([mx, am], {m: data})
    assert got_mx == 5.0 and got_am == 5
    mx, am = max_and_argmax(m, axis=0, keepdims=True)
    assert mx.type.ndim == 2 and am.type.ndim == 2
