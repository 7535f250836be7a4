"""ifelse: a lazy if/else of graphs (PyTensor's pytensor.ifelse)."""

import sys
import warnings

import numpy as np

import pytensor
import pytensor.tensor as pt
from pytensor import function, grad
from pytensor.compile.mode import Mode
from pytensor.gradient import verify_grad
from pytensor.graph.basic import Apply
from pytensor.graph.fg import FunctionGraph
from pytensor.graph.rewriting.basic import in2out
from pytensor.graph.op import Op
warnings.simplefilter("ignore", DeprecationWarning)  # newer PyTensor moved the module
from pytensor.ifelse import (  # noqa: E402
    CondMerge,
    IfElse,
    cond_make_inplace,
    cond_merge_ifs_false,
    cond_merge_ifs_true,
    cond_merge_random_op,
    cond_remove_identical,
    ifelse,
    ifelse_lift_single_if_through_acceptable_ops,
)
from pytensor.link.vm import VMLinker

# as in PyTensor, the package exports the function under the module's name
assert pytensor.ifelse is ifelse
assert sys.modules["pytensor.ifelse"].IfElse is IfElse
for rewrite in (cond_merge_ifs_true, cond_merge_ifs_false, cond_merge_random_op, cond_remove_identical,
                ifelse_lift_single_if_through_acceptable_ops):
    assert callable(rewrite.transform)
assert callable(CondMerge().apply)

floatX = pytensor.config.floatX
c = pt.iscalar("c")
x = pt.vector("x", dtype=floatX)
y = pt.vector("y", dtype=floatX)
xv = np.array([1.0, 2.0, 3.0], dtype=floatX)
yv = np.array([10.0, 20.0], dtype=floatX)


class Boom(Op):
    """Raises if it ever runs."""

    __props__ = ()

    def make_node(self, v):
        return Apply(self, [v], [v.type()])

    def perform(self, node, inputs, output_storage):
        raise RuntimeError("the untaken branch ran")


# --- one and several outputs; only the chosen branch runs -----------------------------
for mode in ("FAST_COMPILE", "FAST_RUN"):
    f = function([c, x, y], ifelse(c, x * 2, Boom()(y)), mode=mode)
    np.testing.assert_allclose(f(1, xv, yv), xv * 2)
    try:
        f(0, xv, yv)
    except RuntimeError as e:
        assert "untaken" in str(e)
    else:
        raise AssertionError("the else branch should have run")
    a, b = ifelse(c, [x, x.sum()], [y, y.sum()])
    g = function([c, x, y], [a, b], mode=mode)
    out_a, out_b = g(0, xv, yv)
    np.testing.assert_allclose(out_a, yv)
    np.testing.assert_allclose(out_b, 30.0)
    nested = ifelse(c, ifelse(c - 1, x, x + 1), y[:1])
    h = function([c, x, y], nested, mode=mode)
    np.testing.assert_allclose(h(1, xv, yv), xv + 1)
    np.testing.assert_allclose(h(2, xv, yv), xv)
    np.testing.assert_allclose(h(0, xv, yv), yv[:1])
assert isinstance(ifelse(c, (x, y), (y, x)), tuple)
assert isinstance(ifelse(c, [x], [y]), list)

# --- the op ---------------------------------------------------------------------------
op = IfElse(2)
assert IfElse.__props__ == ("as_view", "n_outs")
assert op.n_outs == 2 and op.as_view is False
assert IfElse(1, as_view=True).view_map == {0: [1]}
assert IfElse(1) == IfElse(1, name="other") and IfElse(1) != IfElse(2)
node = ifelse(c, x, y).owner
assert str(node).startswith("if{}")
assert str(IfElse(1, as_view=True, name="n")) == "if{n,inplace}"
assert ifelse(c, x, y, name="sel").owner.op.name == "sel"

# static shapes: only what both branches agree on
s2 = pt.tensor(dtype=floatX, shape=(2,), name="s2")
s3 = pt.tensor(dtype=floatX, shape=(3,), name="s3")
assert ifelse(c, s2, s3).type.shape == (None,)
assert ifelse(c, s3, s3).type.shape == (3,)

# --- type errors ------------------------------------------------------------------------
for then_, else_, kind in (
    (x, pt.ivector("i"), TypeError),
    (x, pt.matrix("m", dtype=floatX), TypeError),
):
    try:
        ifelse(c, then_, else_)
    except kind:
        pass
    else:
        raise AssertionError("mismatched branches must raise")
try:
    ifelse(c, [x, x], [y])
except ValueError as e:
    assert "must match" in str(e)
else:
    raise AssertionError("branches of different lengths must raise")
try:
    IfElse(1)(pt.ivector("v"), x, y)
except TypeError as e:
    assert "condition" in str(e)
else:
    raise AssertionError("a vector condition must raise")
try:
    IfElse(1)(c, x)
except ValueError:
    pass
else:
    raise AssertionError("a wrong number of branch values must raise")

# --- gradients: the chosen branch gets it, the other zeros ------------------------------
z = ifelse(c, x, y)
gx, gy = grad((z ** 2).sum(), [x, y])
fg = function([c, x, y], [gx, gy])
g1, g2 = fg(1, xv, yv)
np.testing.assert_allclose(g1, 2 * xv)
np.testing.assert_allclose(g2, np.zeros_like(yv))
g1, g2 = fg(0, xv, yv)
np.testing.assert_allclose(g1, np.zeros_like(xv))
np.testing.assert_allclose(g2, 2 * yv)
rng = np.random.default_rng(1)
verify_grad(
    lambda a, b: ifelse(pt.constant(np.int8(1)), a * b, b).sum(),
    [rng.uniform(size=3), rng.uniform(size=3)],
    rng=rng,
)

# --- rewrites: the in-place one makes the op return views of its `then` values ------------
fg = FunctionGraph([c, x, y], [ifelse(c, x + 1, y + 1)])
in2out(cond_make_inplace).rewrite(fg)
assert fg.outputs[0].owner.op.as_view
fg = FunctionGraph([c, x, y], ifelse(c, [x, x], [y, y]))
in2out(cond_remove_identical).rewrite(fg)
assert fg.outputs[0].owner is fg.outputs[1].owner and fg.outputs[0].owner.op.n_outs == 1

# --- the VM linker: lazy or not ------------------------------------------------------------
expr = ifelse(c, x, Boom()(y))
lazy = function([c, x, y], expr, mode=Mode(linker=VMLinker(lazy=True), optimizer="fast_run"))
np.testing.assert_allclose(lazy(1, xv, yv), xv)
eager = function([c, x, y], expr, mode=Mode(linker=VMLinker(lazy=False), optimizer="fast_run"))
try:
    eager(1, xv, yv)
except RuntimeError:
    pass
else:
    raise AssertionError("a non-lazy VM runs both branches")
