"""OpFromGraph (lucent.compile.builders): an op defined by an inner graph.

Numeric tests run on both paths (``run``): the Python linker (the op's
``perform`` runs the inner function) and FAST_RUN (the inner graph compiled
into one Numba kernel, or expanded into the outer graph when inline).
"""

import warnings

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.compile.builders import OpFromGraph, SymbolicOp, graph_key, infer_shape
from lucent.compile.mode import Mode
from lucent.gradient import DisconnectedType, disconnected_type, grad
from lucent.graph.basic import NominalVariable
from lucent.graph.fg import FunctionGraph, MissingInputError
from lucent.graph.op import HasInnerGraph, io_connection_pattern
from lucent.graph.rewriting.basic import MergeOptimizer
from lucent.printing import debugprint
from tests.helpers import run

INLINE = pytest.mark.parametrize("inline", [False, True], ids=["op", "inline"])


def _ofg_nodes(fn):
    return [n for n in fn.maker.fgraph.apply_nodes if isinstance(n.op, OpFromGraph)]


# --- construction -------------------------------------------------------------------
def test_inner_graph_is_a_function_graph_over_nominal_inputs():
    x, y = lt.dmatrices("xy")
    op = OpFromGraph([x, y], [x + y * x])
    assert isinstance(op, HasInnerGraph)
    assert isinstance(op.fgraph, FunctionGraph)
    assert all(isinstance(v, NominalVariable) for v in op.inner_inputs)
    assert [str(v) for v in op.inner_inputs] == ["i0", "i1"]
    assert op.inner_inputs[0].type == x.type
    assert len(op.inner_outputs) == 1
    # the user's graph is not part of the inner graph
    assert x not in op.fgraph.variables
    assert op.clone() is op
    assert str(op) == "OpFromGraph{inline=False}"
    assert str(OpFromGraph([x], [x], name="Id", inline=True)) == "Id{inline=True}"


def test_bad_construction_is_refused_with_a_reason():
    x = lt.dmatrix("x")
    with pytest.raises(TypeError, match="must be lists"):
        OpFromGraph((x,), (x,))
    with pytest.raises(TypeError, match="Variable instances"):
        OpFromGraph([1], [1])
    with pytest.raises(NotImplementedError, match="updates or givens"):
        OpFromGraph([x], [x], updates={})
    with pytest.raises(ValueError, match="more than once"):
        OpFromGraph([x, x], [x + 1])
    with pytest.raises(MissingInputError):
        OpFromGraph([], [x])
    s = lucent.shared(1.0, name="s")
    d = lt.dscalar("d")
    with pytest.raises(MissingInputError, match="implicitly depends on shared variable s"):
        OpFromGraph([d], [d + s])
    op = OpFromGraph([x], [x])
    with pytest.raises(ValueError, match=r"Expected 1 input\(s\)"):
        op()
    with pytest.raises(ValueError, match=r"Expected 1 input\(s\)"):
        op.make_node(x, x)
    with pytest.warns(FutureWarning, match="ignores the compile options"):
        OpFromGraph([x], [x + 1], mode="FAST_RUN")


def test_deprecated_override_names_warn():
    x = lt.dscalar("x")
    with pytest.warns(FutureWarning, match="lop_overrides is deprecated"):
        op = OpFromGraph([x], [x + 1], lop_overrides=lambda i, o, g: [g[0]])
    assert op.pullback_overrides is not None
    with pytest.warns(FutureWarning, match="rop_overrides is deprecated"):
        OpFromGraph([x], [x + 1], rop_overrides=lambda i, e: [e[0]])
    with pytest.raises(ValueError, match="mutually exclusive"):
        OpFromGraph([x], [x + 1], lop_overrides=lambda *a: [a], pullback=lambda *a: [a])


def test_equality_is_structural():
    x, y = lt.dscalars("x", "y")
    a, b = lt.dscalars("a", "b")
    op1 = OpFromGraph([x, y], [x + y * x])
    op2 = OpFromGraph([a, b], [a + b * a])
    assert op1 == op2 and hash(op1) == hash(op2)
    assert {op1: 1}[op2] == 1
    assert op1 != OpFromGraph([x, y], [x * y + x])
    assert op1 != OpFromGraph([x, y], [x + y * x], inline=True)
    assert op1 != OpFromGraph([x, y], [x + y * x], destroy_map={0: (0,)})
    assert OpFromGraph([x], [x + 1]) != OpFromGraph([x], [x + 2])
    assert graph_key([x], [x + 1]) == graph_key([a], [a + 1])
    # overrides take part: equal when they build the same graph
    op_l1 = OpFromGraph([x, y], [x + y], pullback=lambda i, o, g: [g[0], g[0]])
    op_l2 = OpFromGraph([x, y], [x + y], pullback=lambda i, o, g: [g[0], g[0]])
    op_l3 = OpFromGraph([x, y], [x + y], pullback=lambda i, o, g: [g[0] * 2, g[0]])
    assert op_l1 == op_l2
    assert op_l1 != op_l3
    assert op_l1 != OpFromGraph([x, y], [x + y])
    d1 = OpFromGraph([x, y], [x + y], pullback=lambda i, o, g: [g[0], disconnected_type()])
    d2 = OpFromGraph([x, y], [x + y], pullback=lambda i, o, g: [disconnected_type(), g[0]])
    assert d1 != d2


def test_merge_deduplicates_equal_ops():
    x, y = lt.dscalars("x", "y")
    a, b = lt.dscalars("a", "b")
    op1 = OpFromGraph([x, y], [x + y * x])
    op2 = OpFromGraph([x, y], [x + y * x])
    fg = FunctionGraph([a, b], [op1(a, b), op2(a, b)])
    MergeOptimizer().rewrite(fg)
    assert len([n for n in fg.toposort() if isinstance(n.op, OpFromGraph)]) == 1


def test_connection_pattern_follows_the_inner_graph():
    x, y, z = lt.dmatrices("xyz")
    op1 = OpFromGraph([x, y, z], [x * y, y * z])
    assert op1.connection_pattern(None) == [[True, False], [True, True], [False, True]]
    m, n, p, q = lt.dmatrices("mnpq")
    o1, o2 = op1(m, n, p)
    out1, out2 = op1(o1, q, o2)
    op2 = OpFromGraph([m, n, p, q], [out1, out2])
    assert op2.connection_pattern(None) == [[True, False], [True, True], [False, True], [True, True]]
    # a shape read does not connect
    assert io_connection_pattern([x], [x.shape[0]]) == [[False]]
    given = OpFromGraph([x, y], [x + y], connection_pattern=[[True], [False]])
    assert given.connection_pattern(None) == [[True], [False]]


# --- running -----------------------------------------------------------------------
@INLINE
def test_straightforward(inline):
    x, y, z = lt.dmatrices("xyz")
    op = OpFromGraph([x, y, z], [x + y * z], inline=inline)
    f = op(x, y, z) - op(y, z, x)
    xv = np.ones((2, 2))
    out = run(f, {x: xv, y: xv * 3, z: xv * 5})
    np.testing.assert_array_equal(out, np.full((2, 2), 8.0))


@INLINE
def test_size_changes_and_nesting(inline):
    x, y, z = lt.dmatrices("xyz")
    op = OpFromGraph([x, y], [lt.dot(x, y)], inline=inline)
    f = op(x, op(y, z))
    xv, yv, zv = np.ones((2, 3)), np.ones((3, 4)) * 3, np.ones((4, 5)) * 5
    res = run(f, {x: xv, y: yv, z: zv})
    np.testing.assert_array_equal(res, xv @ yv @ zv)

    a, b = lt.dvectors("ab")
    to = OpFromGraph([a, b], [a + b, a - b], inline=inline)
    back = OpFromGraph([a, b], [(a + b) / 2, (a - b) / 2], inline=inline)
    xx, yy = lt.dvectors("xx", "yy")
    av, bv = np.arange(4.0), np.linspace(0, 1, 4)
    r1, r2 = run(back(*to(xx, yy)), {xx: av, yy: bv})
    np.testing.assert_allclose(r1, av)
    np.testing.assert_allclose(r2, bv)


def test_constants_shared_inputs_and_repeated_inputs():
    x = lt.dscalar("x")
    c = lt.constant(1.0, dtype="float64", name="c")
    op = OpFromGraph([x, c], [x + c])
    assert run(op(x, c), {x: 5.0}) == 6.0
    assert run(op(x, x), {x: 5.0}) == 10.0
    s = lucent.shared(1.0, name="s")
    op = OpFromGraph([x, s], [x + s])
    assert run(op(x, s), {x: 5.0}) == 6.0
    s.set_value(2.0)
    assert run(op(x, s), {x: 6.0}) == 8.0
    y = lt.dscalar("y")
    g = OpFromGraph([x, x, y], [x + y], on_unused_input="ignore")
    assert run(g(x, x, y), {x: 5.0, y: 5.0}) == 10.0


def test_outputs_that_alias_inputs_are_fresh():
    # A view of an input (or the input itself) leaves the op as a new array: the
    # outer graph may overwrite the input in place afterwards.
    x = lt.dvector("x")
    op = OpFromGraph([x], [x[::-1], x, x * 1])
    xin = lt.dvector("xin")
    x2 = xin * 2
    rev, same, _ = op(x2)
    destroyed = lt.inc_subtensor(x2[0], 100.0)
    r_rev, r_same, r_destroyed = run([rev, same, destroyed], {xin: np.arange(1.0, 4.0)})
    np.testing.assert_allclose(r_rev, [6.0, 4.0, 2.0])
    np.testing.assert_allclose(r_same, [2.0, 4.0, 6.0])
    np.testing.assert_allclose(r_destroyed, [102.0, 4.0, 6.0])


def test_fast_run_compiles_the_inner_graph_into_the_numba_function():
    x, y = lt.dvectors("xy")
    op = OpFromGraph([x, y], [lt.exp(x) * y, x - y])
    a, b = lt.dvectors("ab")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no object-mode fallback warning
        fn = lucent.function([a, b], op(a, b), mode="FAST_RUN")
    assert len(_ofg_nodes(fn)) == 1
    assert fn.maker.linker.fallback_ops == []
    # the inner kernel is described structurally, so the graph is cached on disk
    assert fn.maker.linker.uncacheable_reason is None
    av, bv = np.linspace(0, 1, 5), np.arange(5.0)
    r1, r2 = fn(av, bv)
    np.testing.assert_allclose(r1, np.exp(av) * bv)
    np.testing.assert_allclose(r2, av - bv)


def test_inline_expands_into_the_outer_graph():
    x, y = lt.dvectors("xy")
    op = OpFromGraph([x, y], [x * y], inline=True)
    for mode in ("FAST_COMPILE", "FAST_RUN"):
        fn = lucent.function([x, y], op(x, y), mode=mode)
        assert _ofg_nodes(fn) == []
        np.testing.assert_allclose(fn([1.0, 2.0], [3.0, 4.0]), [3.0, 8.0])
    # without rewrites it still runs as an op
    fn = lucent.function([x, y], op(x, y), mode=Mode(linker="py", optimizer=None))
    assert len(_ofg_nodes(fn)) == 1
    np.testing.assert_allclose(fn([1.0, 2.0], [3.0, 4.0]), [3.0, 8.0])


def test_perform_compiles_the_inner_function_once():
    x = lt.dvector("x")
    op = OpFromGraph([x], [x + 1])
    fn = op.fn
    assert op.fn is fn
    np.testing.assert_allclose(fn(np.array([1.0]))[0], [2.0])
    f = lucent.function([x], op(x), mode="FAST_COMPILE")
    f([1.0])
    f([2.0])
    assert op.fn is fn


# --- shapes ------------------------------------------------------------------------
def test_infer_shape_from_the_inner_graph():
    p, q = lt.dmatrices("pq")
    op = OpFromGraph([p, q], [p + q, lt.dot(p, q.T)])
    node = op(p, q)[0].owner
    shapes = op.infer_shape(None, node, [(p.shape[0], p.shape[1]), (q.shape[0], q.shape[1])])
    f = lucent.function([p, q], [s for shp in shapes for s in shp], mode="FAST_COMPILE")
    assert [int(v) for v in f(np.ones((3, 4)), np.ones((3, 4)))] == [3, 4, 3, 3]
    # shapes are computed without running the op
    graph_ops = {type(n.op) for n in f.maker.fgraph.apply_nodes}
    assert OpFromGraph not in graph_ops
    x = lt.dvector("x")
    (shp,) = infer_shape([lt.concatenate([x, x])], [x], [(lt.constant(4, dtype="int64"),)])
    assert lucent.function([], shp[0], mode="FAST_COMPILE")() == 8


# --- gradients ---------------------------------------------------------------------
@INLINE
def test_grad_and_grad_of_grad(inline):
    x, y, z = lt.dmatrices("xyz")
    op = OpFromGraph([x, y, z], [x + y * z], inline=inline)
    f = op(x, y, z)
    f = f - grad(f.sum(), y)
    g = f - grad(f.sum(), y)
    xv = np.ones((2, 2))
    r1, r2 = run([f, g], {x: xv, y: xv * 3, z: xv * 5})
    np.testing.assert_allclose(r1, np.full((2, 2), 11.0))
    np.testing.assert_allclose(r2, np.full((2, 2), 6.0))


@INLINE
def test_pullback_override(inline):
    x = lt.dvector("x")
    y = 1.0 / (1.0 + lt.exp(-x))

    def twice(inps, outs, grads):
        return [2.0 * outs[0] * (1.0 - outs[0]) * grads[0]]

    yo, g = lt.dvectors("yo", "g")
    as_op = OpFromGraph([x, yo, g], [2.0 * yo * (1.0 - yo) * g], inline=inline)
    xx = lt.dvector("xx")
    expected = 2.0 * grad(lt.sigmoid(xx).sum(), xx)
    xv = np.linspace(-2, 2, 7)
    for override in (twice, as_op):
        op = OpFromGraph([x], [y], pullback=override, inline=inline)
        got = grad(op(xx).sum(), xx)
        r_exp, r_got = run([expected, got], {xx: xv})
        np.testing.assert_allclose(r_got, r_exp, rtol=1e-6)


def test_pullback_override_list_and_disconnected():
    x, y = lt.dvectors("xy")

    def double_dy(inps, outs, grads):
        return grads[0] * 2

    op = OpFromGraph([x, y], [x * y], pullback=[None, double_dy])
    gx, gy = grad(op(x, y).sum(), [x, y])
    xv, yv = np.array([1.0, 2.0]), np.array([3.0, 5.0])
    r_gx, r_gy = run([gx, gy], {x: xv, y: yv})
    np.testing.assert_allclose(r_gx, yv)
    np.testing.assert_allclose(r_gy, [2.0, 2.0])

    def back(inputs, outputs, output_gradients):
        return [output_gradients[0], disconnected_type()]

    op = OpFromGraph(
        [x, y], [y + lt.round(y)], pullback=back, connection_pattern=[[True], [False]],
        on_unused_input="ignore",
    )
    g1 = grad(op(x, y).sum(), x)
    np.testing.assert_allclose(run(g1, {x: xv, y: yv}), [1.0, 1.0])


def test_grad_with_disconnected_outputs():
    x, y = lt.dscalars("x", "y")
    op = OpFromGraph([x, y], [x + y, x * y, (x + y) * x * y])
    for pick in ([0], [1], [2], [0, 1], [1, 2], [0, 2], [0, 1, 2]):
        outs = op(x, y)
        cost = sum((outs[i] for i in pick[1:]), outs[pick[0]])
        gx, gy = grad(cost, [x, y])
        rx, ry = run([gx, gy], {x: 3.0, y: 2.0})
        ex = {0: 1.0, 1: 2.0, 2: 2 * 3.0 * 2.0 + 2.0**2}
        ey = {0: 1.0, 1: 3.0, 2: 3.0**2 + 2 * 3.0 * 2.0}
        np.testing.assert_allclose(rx, sum(ex[i] for i in pick))
        np.testing.assert_allclose(ry, sum(ey[i] for i in pick))
    op = OpFromGraph([x, y], [x**2, y**3])
    with pytest.warns(UserWarning):
        g = grad(op(x, y)[0], wrt=y, return_disconnected="disconnected", disconnected_inputs="warn")
    assert isinstance(g.type, DisconnectedType)
    np.testing.assert_allclose(run(grad(op(x, y)[1], y), {x: 3.0, y: 2.0}), 12.0)


def test_verify_grad():
    x, y = lt.dscalars("x", "y")
    op = OpFromGraph([x, y], [lt.exp(x) * y, x - y])
    rng = np.random.default_rng(3)
    lucent.gradient.verify_grad(lambda a, b: lt.add(*op(a, b)), [0.3, -0.7], rng=rng)


def test_pushforward_override():
    x, y = lt.dvectors("xy")

    def ro(inps, epts):
        return [epts[0] * inps[1] * 2.0 + inps[0] * epts[1] * 1.5]

    op = OpFromGraph([x, y], [x * y], pushforward=ro)
    xx, yy, du, dv = lt.dvectors("xx", "yy", "du", "dv")
    node = op(xx, yy).owner
    (tangent,) = op.R_op(node.inputs, [du, dv])
    vals = np.random.default_rng(0).random((4, 6))
    out = run(tangent, dict(zip([xx, yy, du, dv], vals)))
    np.testing.assert_allclose(out, vals[0] * vals[3] * 1.5 + vals[1] * vals[2] * 2.0)


# --- printing ----------------------------------------------------------------------
def test_debugprint_shows_the_inner_graph():
    x, y, z = lt.dmatrices("xyz")
    op = OpFromGraph([x, y, z], [x + y * z])
    text = debugprint(op(x, y, z), file="str", style="unicode")
    expected = [
        "OpFromGraph{inline=False} [id A]",
        "├─ x [id B]",
        "├─ y [id C]",
        "└─ z [id D]",
        "",
        "Inner graphs:",
        "",
        "OpFromGraph{inline=False} [id A]",
        "← Add [id E]",
        "├─ i0 [id F]",
        "└─ Mul [id G]",
        "├─ i1 [id H]",
        "└─ i2 [id I]",
        "",
    ]
    assert [line.strip() for line in text.split("\n")] == expected
    assert "Inner graphs" not in debugprint(op(x, y, z), file="str", print_inner_graphs=False)


def test_debugprint_groups_equal_ops_and_nests():
    x = lt.dvector("x")

    def relu():
        i = lt.dvector("i")
        return OpFromGraph([i], [lt.maximum(i, 0)], name="Relu")

    out = OpFromGraph([x], [x + 1], name="AddOne")(relu()(relu()(x)))
    lines = [line.strip() for line in debugprint(out, file="str", style="unicode").split("\n")]
    assert "Relu{inline=False} [id B, C]" in lines
    assert lines.count("Relu{inline=False} [id B, C]") == 1
    i = lt.dvector("i")
    outer = OpFromGraph([i], [relu()(i) + 1], name="Outer")
    lines = [line.strip() for line in debugprint(outer(x), file="str").split("\n")]
    # the nested op's graph follows the one it appears in
    assert lines.index("Outer{inline=False} [id A]") < [
        k for k, line in enumerate(lines) if line.startswith("Relu{inline=False} [id")
    ][-1]


# --- SymbolicOp ------------------------------------------------------------------------
class _Power(SymbolicOp):
    __props__ = ("power",)

    def build_inner_graph(self, x):
        return [x**self.power]


def test_symbolic_op_builds_its_graph_for_the_input_types():
    x = lt.dvector("x")
    op = _Power(power=2)
    y = op(x)
    assert isinstance(y.owner.op, _Power) and y.owner.op.power == 2
    assert y.owner.op == _Power(power=2)(x).owner.op
    assert y.owner.op != _Power(power=3)(x).owner.op
    assert str(y.owner.op) == "_Power{power=2}"
    np.testing.assert_allclose(run(y, {x: np.array([1.0, 3.0])}), [1.0, 9.0])
    m = lt.dmatrix("m")
    np.testing.assert_allclose(run(op(m), {m: np.full((2, 2), 3.0)}), np.full((2, 2), 9.0))
    # printed like an ordinary op unless the inner graph is asked for
    assert "Inner graphs" not in debugprint(y, file="str")
    assert "Inner graphs" in debugprint(y, file="str", print_inner_graphs=True)


def test_inner_node_without_numba_kernel_runs_the_op_through_perform():
    from lucent.compile.ops import as_op

    @as_op(itypes=[lt.dvector], otypes=[lt.dvector])
    def triple(v):
        return v * 3

    from lucent.link.numba.dispatch import basic as dispatch_basic

    x = lt.dvector("x")
    op = OpFromGraph([x], [triple(x) + 1])
    dispatch_basic._warned_fallback.discard(OpFromGraph)  # the warning is given once per class
    with pytest.warns(UserWarning, match="inner graph of OpFromGraph.*without a Numba"):
        fn = lucent.function([x], op(x), mode="FAST_RUN")
    np.testing.assert_allclose(fn(np.array([1.0, 2.0])), [4.0, 7.0])


def test_unfreeze_gives_a_copy_to_compile_and_leaves_the_inner_graph():
    from lucent.compile.builders import OpFromGraph
    from lucent.graph.basic import equal_computations

    x = lt.scalar("x")
    op = OpFromGraph([x], [x**2 / x])
    copy, memo = op.fgraph.unfreeze(return_memo=True)
    assert [memo[v] for v in op.fgraph.inputs] == copy.inputs
    fn = lucent.function(copy.inputs, copy.outputs, mode="FAST_RUN", accept_inplace=True)
    # the copy was rewritten (x**2 / x is x); the op's own graph was not
    assert not equal_computations(fn.maker.fgraph.outputs, [x**2 / x], fn.maker.fgraph.inputs, [x])
    assert equal_computations(op.inner_outputs, [x**2 / x], op.inner_inputs, [x])
    assert fn(3.0)[0] == 3.0


@pytest.mark.parametrize("mode", ["FAST_RUN", "DebugMode"])
def test_inner_graph_gets_the_outer_rewrites_on_every_path(mode):
    """A (not inlined) op's inner graph is rewritten like the outer graph, once, for
    every path: the written-out softmax inside it is computed stably by perform
    (DebugMode's reference) as by the compiled code, and dprint shows it."""
    from lucent.tensor.special import Softmax

    inner = lt.dvector("inner")
    e = lt.exp(inner)
    op = OpFromGraph([inner], [e / e.sum() * 2.0])
    x = lt.dvector("x")
    f = lucent.function([x], op(x) + 1.0, mode=mode)
    [node] = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, OpFromGraph)]
    assert any(isinstance(n.op, Softmax) for n in node.op.fgraph.toposort())
    v = np.array([1000.0, 1001.0, -3.0])
    sm = np.exp(v - v.max()) / np.exp(v - v.max()).sum()
    np.testing.assert_allclose(f(v), sm * 2.0 + 1.0)
    np.testing.assert_allclose(node.op.fn(v)[0], sm * 2.0)  # the perform path
    assert "Softmax" in lucent.dprint(f, file="str")
