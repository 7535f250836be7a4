"""``lucent.ifelse``: the op, its types, shapes, gradients, rewrites and laziness on both paths."""

import time

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.compile.builders import OpFromGraph
from lucent.gradient import verify_grad
from lucent.graph.basic import Apply
from lucent.graph.fg import FunctionGraph
from lucent.graph.op import Op
from lucent.ifelse import (
    IfElse,
    cond_make_inplace,
    cond_merge_ifs_false,
    cond_merge_ifs_true,
    cond_merge_random_op,
    cond_remove_identical,
    ifelse,
    ifelse_lift_single_if_through_acceptable_ops,
)
from lucent.graph.rewriting.basic import in2out
from tests.helpers import current_mode, run


class BranchError(Exception):
    pass


class Explode(Op):
    """Raises when it runs: it must stay in an untaken branch."""

    __props__ = ()

    def make_node(self, x):
        x = lt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        raise BranchError("the untaken branch ran")


class Slow(Op):
    """Takes seconds: the untaken branch must not cost them."""

    __props__ = ()

    def make_node(self, x):
        x = lt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        time.sleep(2.0)
        output_storage[0][0] = inputs[0].copy()


def _explode_kernel(x):
    if x.size >= 0:
        raise ValueError("the untaken branch ran")
    return x.copy()


def _slow_kernel(x):
    acc = x.copy()
    for _ in range(2_000_000_000):  # seconds of work in compiled code
        acc[0] = acc[0] * 1.0000000001
    return acc


def _register_kernels():
    """Numba kernels for the test ops, so the numba path runs them compiled."""
    from lucent.link.numba.dispatch import numba_funcify

    if not numba_funcify.has_implementation(Explode()):
        numba_funcify.register(Explode, version=1)(lambda op, node=None, **kw: _explode_kernel)
        numba_funcify.register(Slow, version=1)(lambda op, node=None, **kw: _slow_kernel)


# ---------------------------------------------------------------------------
# Values, several outputs, nesting (both paths)
# ---------------------------------------------------------------------------
def _several_outputs_graph():
    c, d = lt.iscalars("c", "d")
    x, y = lt.dvectors("x", "y")
    z = ifelse(c, ifelse(d, x + 1, x * 2), y)  # nested
    t = ifelse(c, (x, y), (y, x))  # several outputs
    assert isinstance(t, tuple) and isinstance(ifelse(c, [x], [y]), list)
    by_bool = ifelse(lt.lt(c, d), x, np.array([2.0, 3.0, 4.0]))  # bool condition, constant branch
    return [c, d, x, y], [z, *t, by_bool]


def test_values_several_outputs_nesting_and_copies():
    inputs, outputs = _several_outputs_graph()
    k = np.array([2.0, 3.0, 4.0])
    f = lucent.function(inputs, outputs, mode=current_mode())
    if current_mode() == "FAST_RUN":  # a native if/else in the compiled graph function
        source = f.maker.linker.program.source
        assert "if branch_truth(" in source and "else:" in source
        # the text and the disk-cache key depend only on the graph's structure
        again = lucent.function(*_several_outputs_graph(), mode="FAST_RUN")
        assert again.maker.linker.program.source == source
        assert again.maker.linker.cache_key == f.maker.linker.cache_key is not None
    xv, yv = np.array([0.5, 1.0, 2.0]), np.array([3.0, 4.0])
    for cv in (0, 1):
        for dv in (0, 1):
            got = f(cv, dv, xv, yv)
            zz = (xv + 1 if dv else xv * 2) if cv else yv
            expect = [zz, *((xv, yv) if cv else (yv, xv)), xv if cv < dv else k]
            for g, e in zip(got, expect):
                np.testing.assert_allclose(g, e)
    out = f(1, 1, xv, yv)
    out[1][0] = 7.0  # outputs are copies, never the caller's input
    assert xv[0] == 0.5


# ---------------------------------------------------------------------------
# Laziness
# ---------------------------------------------------------------------------
def test_untaken_branches_do_not_run():
    _register_kernels()
    c, d = lt.iscalars("c", "d")
    x, y = lt.dvectors("x", "y")
    shared_part = x * 3  # used by both branches: runs either way
    raising = ifelse(c, shared_part.sum(), Explode()(y).sum() + shared_part.sum())
    # after merging, one Explode node sits in the else of both ifs: it runs in neither
    nested = ifelse(c, ifelse(d, x + 1, Explode()(x)), Explode()(x) * 2)
    slow = ifelse(c, x + 1, Slow()(x))  # seconds of work if it ran
    f = lucent.function([c, d, x, y], [raising, nested, slow], mode=current_mode())
    if current_mode() == "DebugMode":
        f(1, 1, np.ones(2), np.ones(2))  # DebugMode compiles each node's kernel at its first call
    start = time.perf_counter()
    got = f(1, 1, np.ones(2), np.ones(2))
    assert time.perf_counter() - start < 1.0
    assert got[0] == 6.0
    np.testing.assert_allclose(got[1], [2.0, 2.0])
    np.testing.assert_allclose(got[2], [2.0, 2.0])
    with pytest.raises((BranchError, ValueError)):
        f(0, 1, np.ones(2), np.ones(2))


# ---------------------------------------------------------------------------
# OpFromGraph with an ifelse inside
# ---------------------------------------------------------------------------
def test_ifelse_inside_opfromgraph():
    _register_kernels()
    c = lt.iscalar("c")
    x, y = lt.dvectors("x", "y")
    op = OpFromGraph([c, x, y], [ifelse(c, x * 2, Explode()(y))])
    cc = lt.iscalar("cc")
    xx, yy = lt.dvectors("xx", "yy")
    out = run(op(cc, xx, yy) + 1, {cc: np.int32(1), xx: np.ones(2), yy: np.ones(3)})
    np.testing.assert_allclose(out, [3.0, 3.0])
    if current_mode() == "FAST_RUN":
        import inspect

        from lucent.link.numba.dispatch.builders import numba_funcify_inner_graph

        kernel = numba_funcify_inner_graph(op)  # the one the graph above compiled
        assert "if branch_truth(" in inspect.getsource(kernel.py_func)


# ---------------------------------------------------------------------------
# Gradients and shapes
# ---------------------------------------------------------------------------
def test_gradients():
    c = lt.iscalar("c")
    x, y = lt.dvectors("x", "y")
    z = ifelse(c, x, y)
    gx, gy = lucent.grad((z * z).sum(), [x, y])
    # the condition's gradient is zero (a float, like config.floatX)
    fc = lt.dscalar("fc")
    gc = lucent.grad(ifelse(fc, x, y).sum(), fc)
    f = lucent.function([c, fc, x, y], [gx, gy, gc], mode=current_mode())
    xv, yv = np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0])
    gxv, gyv, gcv = f(1, 1.0, xv, yv)
    np.testing.assert_allclose(gxv, 2 * xv)
    np.testing.assert_allclose(gyv, np.zeros(3))
    assert gcv == 0.0
    gxv, gyv, _ = f(0, 0.0, xv, yv)
    np.testing.assert_allclose(gxv, np.zeros(2))
    np.testing.assert_allclose(gyv, 2 * yv)


def test_verify_grad_several_outputs():
    # The gradient graph does not depend on the path; the Python one checks it quickly.
    rng = np.random.default_rng(0)
    for branch in (0, 1):

        def fn(a, b, c, d):
            u, v = ifelse(lt.constant(np.int8(branch)), [a * b, lt.sin(b)], [c ** 2, d * a])
            return u.sum() + (v * v).sum()

        verify_grad(fn, [rng.uniform(0.5, 1.5, size=3) for _ in range(4)], rng=rng, mode="FAST_COMPILE")


def test_infer_shape_is_an_ifelse_of_shapes():
    c = lt.iscalar("c")
    x, y = lt.dmatrices("x", "y")
    node = ifelse(c, x, y).owner
    [dims] = node.op.infer_shape(None, node, [(), (x.shape[0], x.shape[1]), (y.shape[0], y.shape[1])])
    assert all(d.owner is not None and isinstance(d.owner.op, IfElse) for d in dims)
    assert dims[0].owner is dims[1].owner and dims[0].owner.op.name == "shape"
    xv, yv = np.zeros((2, 3)), np.zeros((4, 5))
    f = lucent.function([c, x, y], lt.stack(list(dims)), mode=current_mode())
    np.testing.assert_array_equal(f(1, xv, yv), [2, 3])
    np.testing.assert_array_equal(f(0, xv, yv), [4, 5])
    # generic values have no shape
    from lucent.link.c.type import generic

    g1, g2 = generic(), generic()
    gnode = ifelse(c, g1, g2).owner
    assert gnode.op.infer_shape(None, gnode, [(), None, None]) == [None]


def test_static_shape_keeps_what_both_branches_agree_on():
    c = lt.iscalar("c")
    x = lt.tensor(dtype="float64", shape=(2, 1), name="x")
    y = lt.tensor(dtype="float64", shape=(None, 1), name="y")
    assert ifelse(c, x, y).type.shape == (None, 1)
    assert ifelse(c, x, x).type.shape == (2, 1)


# ---------------------------------------------------------------------------
# Bad input, printing, the op's identity
# ---------------------------------------------------------------------------
def test_bad_input_errors():
    c = lt.iscalar("c")
    x = lt.dvector("x")
    with pytest.raises(TypeError, match="compatible dtypes"):
        ifelse(c, x, lt.ivector("i"))
    with pytest.raises(TypeError, match="compatible ndim"):
        ifelse(c, x, lt.dmatrix("m"))
    with pytest.raises(TypeError, match="The condition argument"):
        ifelse(lt.ivector("v"), x, x)
    with pytest.raises(ValueError, match="must match the `else` branch"):
        ifelse(c, [x, x], [x])
    with pytest.raises(ValueError, match="Wrong number of arguments"):
        IfElse(2)(c, x, x)
    with pytest.raises(TypeError, match="do not match"):
        from lucent.link.c.type import generic

        ifelse(c, x, generic())


def test_str_props_and_view_map():
    c = lt.iscalar("c")
    x, y = lt.dvectors("x", "y")
    node = ifelse(c, x, y).owner
    assert str(node.op) == "if{}" and str(node).startswith("if{}")
    assert IfElse(2, name="n") == IfElse(2) and IfElse(2) != IfElse(2, as_view=True)
    assert IfElse.__props__ == ("as_view", "n_outs")
    op = IfElse(2, as_view=True, name="sel")
    assert str(op) == "if{sel,inplace}" and op.view_map == {0: [1], 1: [2]}
    assert not IfElse(1).view_map


# ---------------------------------------------------------------------------
# Rewrites
# ---------------------------------------------------------------------------
def _ifelse_nodes(fgraph):
    return [n for n in fgraph.toposort() if isinstance(n.op, IfElse)]


def test_fast_run_makes_ifelse_a_view():
    c = lt.iscalar("c")
    x, y = lt.dvectors("x", "y")
    rewritten_only = lucent.Mode(linker="py", optimizer="fast_run")  # FAST_RUN's rewrites
    f = lucent.function([c, x, y], ifelse(c, x + 1, y + 1), mode=rewritten_only)
    [node] = _ifelse_nodes(f.maker.fgraph)
    assert node.op.as_view
    g = lucent.function([c, x, y], ifelse(c, x + 1, y + 1), mode="FAST_COMPILE")
    [node] = _ifelse_nodes(g.maker.fgraph)
    assert not node.op.as_view


def _rewrite(outputs, inputs, rewriter):
    fg = FunctionGraph(inputs, outputs)
    in2out(rewriter).rewrite(fg)
    return fg


def test_cond_rewrites():
    c = lt.iscalar("c")
    x1, x2, y1, y2 = lt.dvectors("x1", "x2", "y1", "y2")
    # same condition inside the then / else branch
    out = ifelse(c, ifelse(c, x1, x2), ifelse(c, y1, y2))
    fg = _rewrite([out], [c, x1, x2, y1, y2], cond_merge_ifs_true)
    fg = FunctionGraph(fg.inputs, fg.outputs)
    in2out(cond_merge_ifs_false).rewrite(fg)
    [node] = _ifelse_nodes(fg)
    assert [v.name for v in node.inputs[1:]] == ["x1", "y2"]
    # identical output pairs
    fg = _rewrite(ifelse(c, [x1, x1, x2], [y1, y1, y2]), [c, x1, x2, y1, y2], cond_remove_identical)
    [node] = _ifelse_nodes(fg)
    assert node.op.n_outs == 2
    # lifting an op into both branches
    fg = _rewrite([lt.exp(ifelse(c, x1, y1))], [c, x1, y1], ifelse_lift_single_if_through_acceptable_ops)
    assert isinstance(fg.outputs[0].owner.op, IfElse)
    # two ifelse on one condition feeding one node
    fg = _rewrite([ifelse(c, x1, y1) + ifelse(c, x2, y2)], [c, x1, x2, y1, y2], cond_merge_random_op)
    [node] = _ifelse_nodes(fg)
    assert node.op.n_outs == 2
    # in-place
    fg = _rewrite([ifelse(c, x1, y1)], [c, x1, y1], cond_make_inplace)
    assert _ifelse_nodes(fg)[0].op.as_view
    merged = _rewrite([ifelse(c, x1, y1) + ifelse(c, x2, y2)], [c, x1, x2, y1, y2], cond_merge_random_op)
    f = lucent.function(merged.inputs, merged.outputs, mode="FAST_COMPILE")
    vals = [np.int32(0)] + [np.full(2, float(k)) for k in range(4)]
    np.testing.assert_allclose(f(*vals)[0], [5.0, 5.0])
