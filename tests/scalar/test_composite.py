"""Tests for ``lucent.scalar.composite``: the fused scalar op."""

import pickle

import numpy as np
import pytest

import lucent
import lucent.scalar.basic as ps
import lucent.tensor as lt
from lucent.scalar.composite import Composite, call_into
from lucent.tensor.elemwise import Elemwise


def _gauss():
    x = ps.float64("x")
    return Composite([x], [ps.exp(-ps.sqr(x))])


def test_str_is_readable():
    assert str(_gauss()) == "Composite{exp(-sqr(i0))}"
    x, y = ps.float64("x"), ps.float64("y")
    t = x * y
    c = Composite([x, y], [ps.exp(t), ps.sin(t) + 1])
    # A subexpression used twice is named once.
    assert str(c) == "Composite{t0=(i0 * i1); exp(t0), sin(t0) + 1}"


def test_equality_is_structural():
    a, b = _gauss(), _gauss()
    assert a == b and hash(a) == hash(b)
    assert a.inputs[0] is not b.inputs[0]
    x = ps.float64("x")
    assert Composite([x], [ps.exp(ps.sqr(x))]) != a  # different ops
    x32 = ps.float32("x")
    assert Composite([x32], [ps.exp(-ps.sqr(x32))]) != a  # different dtype
    y = ps.float64("y")
    assert Composite([y], [y + 1]) != Composite([y], [y + 2])  # different constant
    # Equal composites make equal Elemwise ops (so merge can combine them).
    assert Elemwise(a) == Elemwise(b)


def test_graph_is_copied():
    x = ps.float64("x")
    out = ps.exp(x)
    c = Composite([x], [out])
    assert c.inputs[0] is not x and c.outputs[0] is not out
    assert c.nin == 1 and c.nout == 1
    assert [n.op for n in c.nodes] == [ps.exp]


def test_impl_matches_numpy_and_unfused_values():
    x, y = ps.float64("x"), ps.int8("y")
    c = Composite([x, y], [ps.exp(-x * x) + y, ps.true_div(y, y + 1)])
    a = np.linspace(-2, 2, 7)
    b = np.arange(7, dtype="int8")
    o0, o1 = c.impl(a, b)
    np.testing.assert_array_equal(o0, np.exp(-a * a) + b)
    assert o1.dtype == np.float64
    np.testing.assert_array_equal(o1, b.astype("float64") / (b + np.int8(1)).astype("float64"))


def test_compute_in_output_dtype_is_respected():
    # exp of int8 is float32 and must be computed in float32 (not NumPy's float16).
    i = ps.int8("i")
    c = Composite([i], [ps.exp(i)])
    v = np.arange(5, dtype="int8")
    out = c.impl(v)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.exp(v.astype("float32")))


def test_nested_composites_are_inlined():
    x, y = ps.float64("x"), ps.float64("y")
    inner = _gauss()
    outer = Composite([x, y], [inner(x) * y])
    assert not any(isinstance(n.op, Composite) for n in outer.nodes)
    assert str(outer) == "Composite{exp(-sqr(i0)) * i1}"


def test_output_types_and_bad_inputs():
    c = _gauss()
    assert c.output_types([ps.float64]) == [ps.float64]
    with pytest.raises(TypeError, match="dtype float64"):
        c.output_types([ps.float32])
    with pytest.raises(TypeError, match="takes 1 inputs"):
        c.output_types([ps.float64, ps.float64])
    with pytest.raises(ValueError, match="not one of the given inputs"):
        x, y = ps.float64("x"), ps.float64("y")
        Composite([x], [x + y])
    with pytest.raises(TypeError):
        x = ps.float64("x")
        Composite([x + 1], [x])


def test_scalar_apply_and_perform():
    x = ps.float64("x")
    node = _gauss().make_node(x)
    storage = [[None]]
    node.op.perform(node, [np.float64(0.5)], storage)
    assert storage[0][0] == np.exp(-0.25)
    assert isinstance(storage[0][0], np.float64)


def test_pickle_roundtrip():
    c = _gauss()
    c2 = pickle.loads(pickle.dumps(c))
    assert c2 == c and str(c2) == str(c)
    np.testing.assert_array_equal(c2.impl(np.arange(3.0)), c.impl(np.arange(3.0)))


def test_fgraph_view():
    c = _gauss()
    fg = c.fgraph
    assert list(fg.inputs) == c.inputs and list(fg.outputs) == c.outputs


def test_gradient_through_fused_elemwise():
    x, y = ps.float64("x"), ps.float64("y")
    comp = Composite([x, y], [ps.exp(-x * x) * ps.sin(y) + x * y])
    tx, ty = lt.dvector("tx"), lt.dvector("ty")
    fused = Elemwise(comp)(tx, ty)
    plain = lt.exp(-tx * tx) * lt.sin(ty) + tx * ty
    g_fused = lucent.grad(fused.sum(), [tx, ty])
    g_plain = lucent.grad(plain.sum(), [tx, ty])
    f = lucent.function([tx, ty], g_fused + g_plain, mode="FAST_COMPILE")
    a, b = np.linspace(-1, 1, 5), np.linspace(0, 2, 5)
    gfx, gfy, gpx, gpy = f(a, b)
    np.testing.assert_allclose(gfx, gpx)
    np.testing.assert_allclose(gfy, gpy)


def test_call_into_writes_into_out():
    a = np.linspace(0, 1, 6)
    out = np.empty_like(a)
    assert call_into(ps.exp, [a], out)
    np.testing.assert_array_equal(out, np.exp(a))
    # A composite writes its last op into ``out``, which may be one of its inputs.
    x, y = ps.float64("x"), ps.float64("y")
    c = Composite([x, y], [ps.exp(x) * y + x])
    b = np.linspace(1, 2, 6)
    expected = c.impl(a, b)
    target = a.copy()
    assert call_into(c, [target, b], target)
    np.testing.assert_array_equal(target, expected)
    # Integer results are not written with out= (they could fail half-way).
    assert not call_into(ps.add, [np.arange(3), np.arange(3)], np.empty(3, dtype="int64"))
