"""Tests for elementwise fusion (``lucent.tensor.rewriting.elemwise``)."""

import numpy as np
import pytest

import lucent
import lucent.scalar.basic as ps
import lucent.tensor as lt
from lucent.compile.mode import Mode
from lucent.graph.fg import FunctionGraph
from lucent.scalar.composite import Composite
from lucent.tensor.elemwise import DimShuffle, Elemwise
from lucent.tensor.rewriting.elemwise import FusionRewriter, fusion_rewriter

FUSION_ONLY = Mode(linker="py", optimizer=FusionRewriter())
NO_REWRITES = Mode(linker="py", optimizer=None)


def _elemwise_nodes(fn):
    return [n for n in fn.maker.fgraph.apply_nodes if isinstance(n.op, Elemwise)]


def _compare(inputs, outputs, values):
    """Compile fused and unfused; the values must be bit-identical."""
    fused = lucent.function(inputs, outputs, mode=FUSION_ONLY)
    plain = lucent.function(inputs, outputs, mode=NO_REWRITES)
    got, want = fused(*values), plain(*values)
    if not isinstance(got, list):
        got, want = [got], [want]
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
    return fused


def _chain(x, y):
    return lt.exp(-x * x) * lt.sin(y) + lt.log1p(abs(x * y)) - lt.tanh(x) / (1 + y * y)


def test_issue3_chain_is_one_node_with_identical_values():
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    rng = np.random.default_rng(0)
    vals = [rng.normal(size=(20, 30)), rng.normal(size=(20, 30))]
    f = _compare([x, y], _chain(x, y), vals)
    nodes = list(f.maker.fgraph.apply_nodes)
    assert len(nodes) == 1  # the constant 1 (and its ExpandDims) were inlined
    (node,) = nodes
    assert isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, Composite)
    assert node.inputs == f.maker.fgraph.inputs
    assert str(node.op.scalar_op).startswith("Composite{")


def test_issue3_chain_fast_run_is_one_elemwise_node():
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    f = lucent.function([x, y], _chain(x, y), mode="FAST_RUN")
    g = lucent.function([x, y], _chain(x, y), mode="FAST_COMPILE")
    assert len(_elemwise_nodes(f)) == 1
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(50, 40)), rng.normal(size=(50, 40))
    np.testing.assert_allclose(f(a, b), g(a, b), rtol=1e-14, atol=1e-15)


def test_intermediate_that_is_also_an_output():
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    t = x * y
    out = lt.exp(t) + lt.sin(t)
    rng = np.random.default_rng(2)
    f = _compare([x, y], [t, out], [rng.normal(size=(4, 5)), rng.normal(size=(4, 5))])
    (node,) = _elemwise_nodes(f)
    assert len(node.outputs) == 2
    assert f.maker.fgraph.outputs == node.outputs


def test_intermediate_used_by_a_non_elemwise_node():
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    t = lt.exp(x) * y
    outs = [lt.tanh(t) + 1, t.sum()]  # Sum reads t: t stays an output of the fused node
    rng = np.random.default_rng(3)
    f = _compare([x, y], outs, [rng.normal(size=(3, 4)), rng.normal(size=(3, 4))])
    (node,) = _elemwise_nodes(f)
    assert len(node.outputs) == 2


def test_value_leaving_and_reentering_is_not_fused_across():
    # sum(t) is broadcast back into the chain: t cannot be fused with its
    # consumers (the Sum would have to run inside the fused node).
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    t = lt.exp(x) * y
    out = lt.tanh(t) + t.sum()
    rng = np.random.default_rng(3)
    f = _compare([x, y], out, [rng.normal(size=(3, 4)), rng.normal(size=(3, 4))])
    assert len(_elemwise_nodes(f)) == 2


def test_mixed_dtypes():
    x = lt.fmatrix("x")
    i = lt.imatrix("i")
    k = lt.tensor(dtype="int8", shape=(None, None), name="k")
    out = lt.exp(k) * x + (i * 3) / (k + 1) - lt.sqrt(abs(i))
    rng = np.random.default_rng(4)
    vals = [
        rng.normal(size=(5, 6)).astype("float32"),
        rng.integers(-50, 50, size=(5, 6)).astype("int32"),
        rng.integers(0, 5, size=(5, 6)).astype("int8"),
    ]
    f = _compare([x, i, k], out, vals)
    assert len(_elemwise_nodes(f)) == 1
    assert f.maker.fgraph.outputs[0].type.dtype == out.type.dtype


def test_int_only_group_with_integer_results():
    i, j = lt.imatrix("i"), lt.imatrix("j")
    out = (i * j + 7) // (abs(j) + 1) % 5
    rng = np.random.default_rng(5)
    vals = [rng.integers(-9, 9, size=(3, 3)).astype("int32") for _ in range(2)]
    f = _compare([i, j], out, vals)
    assert len(_elemwise_nodes(f)) == 1


def test_broadcasting_column_by_row():
    a = lt.tensor(dtype="float64", shape=(3, 1), name="a")
    b = lt.tensor(dtype="float64", shape=(1, 4), name="b")
    out = lt.exp(a) * b + lt.sin(a * b) - 2
    rng = np.random.default_rng(6)
    f = _compare([a, b], out, [rng.normal(size=(3, 1)), rng.normal(size=(1, 4))])
    (node,) = _elemwise_nodes(f)
    assert node.outputs[0].type.shape == (3, 4)
    assert f(np.ones((3, 1)), np.ones((1, 4))).shape == (3, 4)


def test_smaller_intermediate_is_not_exposed():
    # exp(a) has shape (3, 1); it is also an output, so it cannot be an output
    # of a (3, 4) fused node and stays a node of its own.
    a = lt.tensor(dtype="float64", shape=(3, 1), name="a")
    b = lt.tensor(dtype="float64", shape=(1, 4), name="b")
    e = lt.exp(a)
    out = (e * b) + b
    rng = np.random.default_rng(7)
    f = _compare([a, b], [e, out], [rng.normal(size=(3, 1)), rng.normal(size=(1, 4))])
    shapes = sorted(n.outputs[0].type.shape for n in _elemwise_nodes(f))
    assert shapes == [(3, 1), (3, 4)]


def test_non_convex_group_is_split():
    # t feeds dot, whose result comes back into the chain: fusing t with the
    # rest would need the dot both before and after the fused node.
    x, y, w = lt.dmatrix("x"), lt.dmatrix("y"), lt.dmatrix("w")
    t = x + y
    d = lt.dot(t, w)
    out = lt.exp(t) * 2 + d
    rng = np.random.default_rng(8)
    vals = [rng.normal(size=(3, 3)) for _ in range(3)]
    f = _compare([x, y, w], out, vals)
    f.maker.fgraph.check_integrity()
    assert len(_elemwise_nodes(f)) == 2


def test_ranks_are_not_mixed():
    x = lt.dmatrix("x")
    v = lt.dvector("v")
    s = lt.exp(v) * 2  # rank 1
    out = lt.tanh(x) + s  # rank 2 (s is broadcast through ExpandDims)
    rng = np.random.default_rng(9)
    f = _compare([x, v], out, [rng.normal(size=(2, 3)), rng.normal(size=3)])
    ranks = sorted(n.outputs[0].type.ndim for n in _elemwise_nodes(f))
    assert ranks == [1, 2]
    assert any(isinstance(n.op, DimShuffle) for n in f.maker.fgraph.apply_nodes)


def test_scalars_fuse_too():
    a, b = lt.dscalar("a"), lt.dscalar("b")
    out = lt.exp(a) * b + 1
    f = _compare([a, b], out, [np.float64(0.3), np.float64(2.0)])
    assert len(_elemwise_nodes(f)) == 1


def test_constant_arrays_stay_inputs():
    x = lt.dmatrix("x")
    c = lt.constant(np.arange(6.0).reshape(2, 3))
    out = lt.exp(x) * c + 1
    f = _compare([x], out, [np.ones((2, 3))])
    (node,) = _elemwise_nodes(f)
    assert any(getattr(i, "data", None) is not None and i.data.size == 6 for i in node.inputs)


def test_single_nodes_and_existing_composites():
    x = lt.dmatrix("x")
    fg = FunctionGraph([x], [lt.exp(x)], clone=True)
    assert not fusion_rewriter.rewrite(fg)  # a lone node is left alone
    fg = FunctionGraph([x], [lt.exp(x) + 1], clone=True)
    assert fusion_rewriter.rewrite(fg)
    (node,) = fg.apply_nodes
    fg2 = FunctionGraph(fg.inputs, [lt.tanh(fg.outputs[0])], clone=False)
    assert fusion_rewriter.rewrite(fg2)
    (node2,) = fg2.apply_nodes
    # Fusing a fused node inlines its composite: no nesting.
    assert not any(isinstance(n.op, Composite) for n in node2.op.scalar_op.nodes)


def test_inplace_nodes_are_not_fused():
    x = lt.dmatrix("x")
    inplace_exp = Elemwise(ps.exp, inplace_pattern={0: 0})
    t = lt.exp(x) * 2
    out = inplace_exp(t)
    fg = FunctionGraph([x], [out], clone=True)
    fusion_rewriter.rewrite(fg)
    assert any(n.op.destroy_map for n in fg.apply_nodes)


def test_equal_fused_groups_merge():
    x = lt.dmatrix("x")
    a = lt.exp(x) * 2 + 1
    b = lt.exp(x) * 2 + 1
    f = lucent.function([x], [a.sum(), b.max()], mode="FAST_RUN")
    composites = [
        n for n in _elemwise_nodes(f) if isinstance(n.op.scalar_op, Composite)
    ]
    assert len(composites) == 1


@pytest.mark.parametrize("mode", ["FAST_RUN", "FAST_COMPILE"])
def test_mode_runs_fusion_only_when_asked(mode):
    x = lt.dmatrix("x")
    f = lucent.function([x], lt.exp(x) * 2 + 1, mode=mode)
    n = len(_elemwise_nodes(f))
    assert (n == 1) == (mode == "FAST_RUN")


def _composites(fn):
    return [n.op.scalar_op for n in _elemwise_nodes(fn) if isinstance(n.op.scalar_op, Composite)]


def test_groups_differing_in_the_order_of_a_product_share_one_composite():
    """``b * (1 - a*a)`` and ``(1 - c*c) * d`` (a tanh gradient written two ways) are one
    composite op, so the Numba path compiles one kernel for both; values are bit-identical."""
    a, b, c, d = lt.dmatrices("a", "b", "c", "d")
    outs = [b * (1 - a * a), (1 - c * c) * d]
    rng = np.random.default_rng(3)
    values = [rng.normal(size=(3, 4)) for _ in range(4)]
    values[0][1, 2] = np.nan
    fused = _compare([a, b, c, d], outs, values)
    first, second = _composites(fused)
    assert first == second and str(first) == str(second) == "Composite{i1 * (1 - (i0 * i0))}"
    for mode in ("FAST_RUN", "FAST_COMPILE"):
        got = lucent.function([a, b, c, d], outs, mode=mode)(*values)
        # (the Numba path may contract a*b+c into one fused multiply-add: last-bit differences)
        np.testing.assert_allclose(got[0], values[1] * (1 - values[0] * values[0]), rtol=1e-12, atol=1e-15, equal_nan=True)
        np.testing.assert_allclose(got[1], (1 - values[2] * values[2]) * values[3], rtol=1e-12, atol=1e-15, equal_nan=True)


def test_only_two_operands_of_one_dtype_are_reordered():
    """Three operands would reassociate, and mixed dtypes could change where a cast happens:
    both keep the order they were written in."""
    x, y, z = lt.dvectors("x", "y", "z")
    i = lt.lvector("i")
    three = lt.mul(lt.exp(x), y, z)
    mixed = (x * 2.0 + 1.0) * i
    fused = _compare([x, y, z, i], [three, mixed], [np.array([1.5, -2.0]), np.array([3.0, 0.1]), np.array([-1.0, 7.0]), np.array([2, 3])])
    texts = sorted(str(op) for op in _composites(fused))
    assert texts == sorted(["Composite{exp(i0) * i1 * i2}", "Composite{((i0 * 2.0) + 1.0) * i1}"]), texts


def test_a_deep_fused_chain_is_keyed_without_recursion():
    x = lt.dvector("x")
    h = x
    for k in range(2000):
        h = h * 1.0001 if k % 2 else 0.5 + h
    fn = _compare([x], [h], [np.array([0.25, -1.0])])
    assert len(_composites(fn)) == 1


def test_the_canonical_order_does_not_depend_on_constant_values():
    """A variant of a formula with other numbers must fuse into the same structure (its
    constants then become inputs of one shared kernel): constants' values are not in the keys."""
    import re

    x = lt.dvector("x")
    shapes = set()
    for k in range(12):
        out = lt.exp(x) * (1.0 + (k + 0.1) / 7.0) + lt.sin(x * (k + 3))
        fused = _compare([x], [out], [np.linspace(-1.0, 1.0, 5)])
        (op,) = _composites(fused)
        shapes.add(re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "C", str(op)))
    assert len(shapes) == 1, shapes
