"""Tests of lucent.scalar.basic: ScalarType filtering, dtype rules, scalar ops and their gradients."""

import math

import numpy as np
import pytest

import lucent.scalar as ls
from lucent.scalar import basic as ps
from tests.helpers import run


# --- ScalarType ----------------------------------------------------------------
def test_constructors_are_scalar_types():
    assert isinstance(ls.float64, ps.ScalarType)
    assert repr(ls.float64) == "ScalarType(float64)"
    x = ls.float64("x")
    assert isinstance(x, ps.ScalarVariable)
    assert x.type.dtype == "float64" and x.name == "x"
    assert ls.int8 == ps.ScalarType("int8") and hash(ls.int8) == hash(ps.ScalarType("int8"))
    assert ls.int8 != ls.int16


def test_filter_strict():
    assert ls.float64.filter(np.float64(1.5), strict=True) == 1.5
    with pytest.raises(TypeError, match="strict"):
        ls.float64.filter(1.5, strict=True)
    with pytest.raises(TypeError):
        ls.float32.filter(np.float64(1.5), strict=True)


def test_filter_upcast_only():
    v = ls.float64.filter(np.float32(1.5), allow_downcast=False)
    assert type(v) is np.float64
    with pytest.raises(TypeError, match="precision"):
        ls.float32.filter(np.float64(0.1), allow_downcast=False)
    assert ls.int8.filter(3, allow_downcast=False) == 3
    with pytest.raises(TypeError):
        ls.int8.filter(300, allow_downcast=False)
    with pytest.raises(TypeError):
        ls.int32.filter(1.5)


def test_filter_downcast_and_default():
    assert ls.float32.filter(np.float64(0.1), allow_downcast=True) == np.float32(0.1)
    assert ls.int8.filter(3.7, allow_downcast=True) == 3
    # default: a Python float may become a floatX scalar
    from lucent.configdefaults import config

    t = ps.get_scalar_type(config.floatX)
    assert t.filter(0.1).dtype == config.floatX
    assert ls.float64.filter(np.array(2.0)) == 2.0
    with pytest.raises(TypeError, match="0-d"):
        ls.float64.filter(np.zeros(3))
    with pytest.raises(TypeError):
        ls.float64.filter("abc")


def test_values_eq_approx_memory_size():
    t = ls.float32
    assert t.values_eq_approx(np.float32(1.0), np.float32(1.0 + 1e-7))
    assert not t.values_eq_approx(np.float32(1.0), np.float32(1.1))
    assert t.values_eq_approx(np.float32("nan"), np.float32("nan"))
    assert ls.int8.values_eq_approx(np.int8(3), np.int8(3))
    assert not t.may_share_memory(np.float32(1), np.float32(1))
    assert t.get_size(t.get_shape_info(np.float32(1))) == 4
    assert ls.float64.get_size(()) == 8


def test_as_scalar_and_constants():
    c = ps.as_scalar(2)
    assert isinstance(c, ps.ScalarConstant) and c.type.dtype == "int8"
    assert ps.as_scalar(0.5).type.dtype == "float32"
    assert ps.as_scalar(0.1).type.dtype == "float64"
    assert ps.as_scalar(np.int64(3)).type.dtype == "int64"
    x = ls.float64("x")
    assert ps.as_scalar(x) is x
    with pytest.raises(TypeError):
        ps.as_scalar(np.zeros(3))


# --- dtype rules -------------------------------------------------------------------
@pytest.mark.parametrize(
    "dtype, expected",
    [("int8", "float32"), ("int16", "float32"), ("uint8", "float32"), ("uint16", "float32"),
     ("bool", "float32"), ("int32", "float64"), ("int64", "float64"), ("uint32", "float64"),
     ("float32", "float32"), ("float64", "float64")],
)
def test_transcendental_upgrade(dtype, expected):
    x = ps.get_scalar_type(dtype)()
    for op in (ps.exp, ps.log, ps.sqrt, ps.sin, ps.tanh, ps.sigmoid, ps.softplus, ps.reciprocal):
        assert op(x).type.dtype == expected, op


def test_arith_dtypes():
    i8, i32, f32 = ls.int8(), ls.int32(), ls.float32()
    assert (i8 + i32).type.dtype == "int32"
    assert (i8 + f32).type.dtype == "float32"
    assert (i32 + f32).type.dtype == "float64"
    assert (i8 / i8).type.dtype == "float64"
    assert (f32 / i8).type.dtype == "float32"
    assert (i8 // i8).type.dtype == "int8"
    assert (i8 < f32).type.dtype == "bool"
    assert (f32 * 2).type.dtype == "float32"
    assert ps.cast(i8, "float64").type.dtype == "float64"
    with pytest.raises(TypeError):
        ps.neg(ls.bool())
    with pytest.raises(TypeError):
        ps.and_(f32, f32)


def test_str_of_ops():
    assert str(ps.add) == "add"
    assert str(ps.true_div) == "true_div"
    assert str(ps.Cast(ls.int8)) == "Cast{int8}"
    assert ps.Cast(ls.int8) == ps.Cast(ls.int8) and ps.Cast(ls.int8) != ps.Cast(ls.int16)
    assert ps.add == ps.Add() and hash(ps.add) == hash(ps.Add())


# --- implementations ----------------------------------------------------------------
UNARY = {
    "exp": np.exp, "log": np.log, "log1p": np.log1p, "expm1": np.expm1, "log2": np.log2,
    "log10": np.log10, "exp2": np.exp2, "sqrt": np.sqrt, "sqr": np.square,
    "reciprocal": np.reciprocal, "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh,
    "arctan": np.arctan, "abs": np.abs, "sign": np.sign, "floor": np.floor, "ceil": np.ceil,
    "round_half_to_even": np.round, "neg": np.negative, "identity": lambda v: v,
    "sigmoid": lambda v: 1 / (1 + np.exp(-v)), "softplus": lambda v: np.log1p(np.exp(v)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("value", [0.3, 2.5, -1.5])
def test_unary_scalar_perform(name, value):
    if name in ("log", "log1p", "log2", "log10", "sqrt") and value < 0:
        value = -value
    x = ls.float64("x")
    out = getattr(ps, name)(x)
    got = run(out, {x: np.float64(value)})
    assert isinstance(got, np.generic) and got.dtype == np.float64
    np.testing.assert_allclose(got, UNARY[name](np.float64(value)), rtol=1e-12)


BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "true_div": np.true_divide,
    "int_div": np.floor_divide, "mod": np.mod, "pow": np.power, "maximum": np.maximum,
    "minimum": np.minimum, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "eq": np.equal, "neq": np.not_equal,
}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("a, b", [(7, 2), (-7, 2), (7, -3), (3, 3)])
def test_binary_scalar_perform_int_and_float(name, a, b):
    for dtype in ("int64", "float64"):
        x, y = ps.get_scalar_type(dtype)(), ps.get_scalar_type(dtype)()
        if name == "pow" and dtype == "int64" and b < 0:
            continue
        got = run(getattr(ps, name)(x, y), {x: np.dtype(dtype).type(a), y: np.dtype(dtype).type(b)})
        expected = BINARY[name](np.dtype(dtype).type(a), np.dtype(dtype).type(b))
        assert got == expected and got.dtype == expected.dtype, (name, dtype)


def test_logic_switch_clip_cast():
    b1, b2 = ls.bool(), ls.bool()
    for op, f in [(ps.and_, np.logical_and), (ps.or_, np.logical_or), (ps.xor, np.logical_xor)]:
        for u in (False, True):
            for v in (False, True):
                assert run(op(b1, b2), {b1: np.bool_(u), b2: np.bool_(v)}) == f(u, v)
    i = ls.int8()
    assert run(ps.invert(i), {i: np.int8(5)}) == np.invert(np.int8(5))
    c, x, y = ls.bool(), ls.float64(), ls.float64()
    assert run(ps.switch(c, x, y), {c: np.bool_(True), x: 1.0, y: 2.0}) == 1.0
    assert run(ps.switch(c, x, y), {c: np.bool_(False), x: 1.0, y: 2.0}) == 2.0
    assert run(ps.clip(x, 0.0, 1.0), {x: np.float64(3.0)}) == 1.0
    assert run(ps.cast(x, "int8"), {x: np.float64(3.7)}) == 3


def test_round_half_to_even_and_stable_functions():
    x = ls.float64()
    for v, r in [(0.5, 0.0), (1.5, 2.0), (2.5, 2.0), (-0.5, -0.0)]:
        assert run(ps.round_half_to_even(x), {x: np.float64(v)}) == r
    assert run(ps.softplus(x), {x: np.float64(1000.0)}) == 1000.0
    assert run(ps.softplus(x), {x: np.float64(-1000.0)}) == 0.0
    assert run(ps.sigmoid(x), {x: np.float64(-1000.0)}) == 0.0
    assert run(ps.sigmoid(x), {x: np.float64(1000.0)}) == 1.0
    assert math.isnan(run(ps.sigmoid(x), {x: np.float64("nan")}))


# --- gradients ------------------------------------------------------------------------
def _scalar_grad(op, values):
    """Evaluate op's symbolic scalar gradient at ``values`` (gz = 1)."""
    xs = [ls.float64() for _ in values]
    out = op(*xs)
    gz = ls.float64()
    grads = op.L_op(xs, [out], [gz])
    givens = dict(zip(xs, [np.float64(v) for v in values]))
    givens[gz] = np.float64(1.0)
    return [float(run(g, givens)) for g in grads]


def _numeric(op, values, eps=1e-6):
    res = []
    for i in range(len(values)):
        hi = list(values)
        lo = list(values)
        hi[i] += eps
        lo[i] -= eps
        f = lambda vals: float(op.impl(*[np.float64(v) for v in vals]))  # noqa: E731
        res.append((f(hi) - f(lo)) / (2 * eps))
    return res


@pytest.mark.parametrize(
    "name",
    ["exp", "log", "log1p", "expm1", "log2", "log10", "exp2", "sqrt", "sqr", "reciprocal", "sin",
     "cos", "tan", "tanh", "arctan", "abs", "sigmoid", "softplus", "neg", "identity"],
)
def test_unary_scalar_grads(name):
    op = getattr(ps, name)
    for v in (0.7, 1.3):
        np.testing.assert_allclose(_scalar_grad(op, [v]), _numeric(op, [v]), rtol=1e-5)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "true_div", "pow", "maximum", "minimum", "mod"])
def test_binary_scalar_grads(name):
    op = getattr(ps, name)
    np.testing.assert_allclose(_scalar_grad(op, [1.7, 0.6]), _numeric(op, [1.7, 0.6]), rtol=1e-5)


def test_clip_switch_grads():
    np.testing.assert_allclose(_scalar_grad(ps.clip, [0.5, 0.0, 1.0]), [1, 0, 0])
    np.testing.assert_allclose(_scalar_grad(ps.clip, [-0.5, 0.0, 1.0]), [0, 1, 0])
    np.testing.assert_allclose(_scalar_grad(ps.clip, [1.5, 0.0, 1.0]), [0, 0, 1])


def test_discrete_grads_are_zero():
    for op in (ps.floor, ps.ceil, ps.sign, ps.round_half_to_even):
        assert _scalar_grad(op, [1.3]) == [0.0]
    x, y = ls.float64(), ls.float64()
    gz = ls.bool()
    grads = ps.lt.L_op([x, y], [ps.lt(x, y)], [gz])
    assert [float(run(g, {x: 1.0, y: 2.0})) for g in grads] == [0.0, 0.0]
    i = ls.int32()
    (g,) = ps.exp.L_op([i], [ps.exp(i)], [ls.float64()])
    assert float(run(g, {})) == 0.0 and g.type.dtype in ("float32", "float64")


def test_comparison_gradient_keeps_its_inputs():
    """The zero gradient of a comparison is ``second(x, 0)``: the graph still depends on the input."""
    import lucent
    from lucent.scalar.basic import float32

    x, y = float32("x"), float32("y")
    g = lucent.grad(x > y, y)
    assert y in lucent.graph.traversal.graph_inputs([g])
    assert g.eval({y: 1.0}) == 0.0
