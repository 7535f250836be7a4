"""OpFromGraph: an op defined by a graph (PyTensor's pytensor.compile.builders)."""

import warnings

import numpy as np

import pytensor
import pytensor.tensor as pt
from pytensor import function
from pytensor.compile.builders import OpFromGraph
from pytensor.gradient import DisconnectedType, disconnected_type, grad
from pytensor.graph.fg import FunctionGraph
from pytensor.graph.op import HasInnerGraph, io_connection_pattern
from pytensor.graph.rewriting.basic import MergeOptimizer
from pytensor.printing import debugprint

assert pytensor.OpFromGraph is OpFromGraph

# --- building and calling ------------------------------------------------------------
x, y, z = pt.matrices("xyz")
op = OpFromGraph([x, y, z], [x + y * z])
assert isinstance(op, HasInnerGraph)
assert len(op.inner_inputs) == 3 and len(op.inner_outputs) == 1
assert [str(v) for v in op.inner_inputs] == ["i0", "i1", "i2"]
assert str(op) == "OpFromGraph{inline=False}"
assert op.clone() is op
xv = np.ones((2, 2), dtype=pytensor.config.floatX)
for mode in ("FAST_COMPILE", "FAST_RUN"):
    for inline in (False, True):
        o = OpFromGraph([x, y, z], [x + y * z], inline=inline)
        fn = function([x, y, z], o(x, y, z) - o(y, z, x), mode=mode)
        np.testing.assert_allclose(fn(xv, xv * 3, xv * 5), np.full((2, 2), 8.0))
        # shapes change between calls
        d = OpFromGraph([x, y], [pt.dot(x, y)], inline=inline)
        fn = function([x, y, z], d(x, d(y, z)), mode=mode)
        a, b, c = (np.ones(s, dtype=pytensor.config.floatX) for s in [(2, 3), (3, 4), (4, 5)])
        np.testing.assert_allclose(fn(a, b * 3, c * 5), np.full((2, 5), 180.0))

# --- errors --------------------------------------------------------------------------
for bad, exc in (
    (lambda: OpFromGraph((x,), (x,)), TypeError),
    (lambda: OpFromGraph([1], [1]), TypeError),
    (lambda: OpFromGraph([x], [x], updates={}), NotImplementedError),
    (lambda: OpFromGraph([x, x], [x + 1]), ValueError),
    (lambda: OpFromGraph([x], [x])(), ValueError),
):
    try:
        bad()
    except exc:
        pass
    else:
        raise AssertionError(f"expected {exc.__name__}")
s = pytensor.shared(1.0, name="s")
d = pt.dscalar("d")
try:
    OpFromGraph([d], [d + s])
except Exception as e:
    assert "implicitly depends on shared variable s" in str(e)
else:
    raise AssertionError("an implicitly captured shared variable must be refused")
ofg_s = OpFromGraph([d, s], [d + s])
assert ofg_s(d, s).eval({d: 5.0}) == 6.0
rep = OpFromGraph([d, d, s], [d + s], on_unused_input="ignore")
assert rep(d, d, s).eval({d: 1.0}) == 2.0
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    OpFromGraph([d], [d + 1], lop_overrides=lambda i, o, g: [g[0]])
    OpFromGraph([d], [d + 1], rop_overrides=lambda i, e: [e[0]])
assert sum(issubclass(w.category, FutureWarning) for w in caught) == 2

# --- equality, merging ---------------------------------------------------------------
p, q = pt.dscalars("p", "q")
u, v = pt.dscalars("u", "v")
op1 = OpFromGraph([p, q], [p + q * p])
op2 = OpFromGraph([u, v], [u + v * u])
assert op1 == op2 and hash(op1) == hash(op2)
assert op1 != OpFromGraph([p, q], [p * q + p])
assert op1 != OpFromGraph([p, q], [p + q * p], inline=True)
fg = FunctionGraph([u, v], [op1(u, v), op2(u, v)])
MergeOptimizer().rewrite(fg)
assert len([n for n in fg.toposort() if isinstance(n.op, OpFromGraph)]) == 1

# --- connection pattern and shapes ---------------------------------------------------
cp = OpFromGraph([x, y, z], [x * y, y * z])
assert cp.connection_pattern(None) == [[True, False], [True, True], [False, True]]
assert io_connection_pattern([x, y], [x + 1]) == [[True], [False]]
m, n = pt.dmatrices("mn")
sh = OpFromGraph([m, n], [m + n, m * n])
outs = sh(m, n)
fn = function([m, n], [outs[0].shape, outs[1].shape])
r1, r2 = fn(np.ones((3, 4)), np.ones((3, 4)))
assert tuple(r1) == (3, 4) and tuple(r2) == (3, 4)

# --- gradients -----------------------------------------------------------------------
for inline in (False, True):
    o = OpFromGraph([x, y, z], [x + y * z], inline=inline)
    f = o(x, y, z)
    f = f - grad(pt.sum(f), y)
    f = f - grad(pt.sum(f), y)
    np.testing.assert_allclose(function([x, y, z], f)(xv, xv * 3, xv * 5), np.full((2, 2), 6.0))

vx = pt.dvector("vx")
sig = 1.0 / (1.0 + pt.exp(-vx))


def twice(inps, outs, grads):
    return [2.0 * outs[0] * (1.0 - outs[0]) * grads[0]]


lop = OpFromGraph([vx], [sig], pullback=twice)
xx = pt.dvector("xx")
g_custom = grad(pt.sum(lop(xx)), xx)
g_expected = 2.0 * grad(pt.sum(pt.sigmoid(xx)), xx)
vals = np.linspace(-2.0, 2.0, 9)
a1, a2 = function([xx], [g_custom, g_expected])(vals)
np.testing.assert_allclose(a1, a2, rtol=1e-6)

vy = pt.dvector("vy")
cut = OpFromGraph(
    [vx, vy],
    [vy + pt.round(vy)],
    pullback=lambda i, o, g: [g[0], disconnected_type()],
    connection_pattern=[[True], [False]],
    on_unused_input="ignore",
)
gcut = grad(cut(vx, vy).sum(), vx)
np.testing.assert_allclose(gcut.eval({vx: np.ones(3), vy: np.ones(3)}), np.ones(3))

sq = OpFromGraph([p, q], [p**2, q**3])
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    gd = grad(sq(p, q)[0], wrt=q, return_disconnected="disconnected", disconnected_inputs="ignore")
assert isinstance(gd.type, DisconnectedType)
np.testing.assert_allclose(function([p, q], grad(sq(p, q)[1], wrt=q))(3.0, 2.0), 12.0)

# --- a view output is a fresh value ---------------------------------------------------
rv = pt.dvector("rv")
rev = OpFromGraph([rv], [rv[::-1]])
xin = pt.dvector("xin")
x2 = xin * 2
for mode in ("FAST_COMPILE", "FAST_RUN"):
    fn = function([xin], [rev(x2), pt.inc_subtensor(x2[0], 100.0)], mode=mode)
    r_view, r_dest = fn(np.arange(1.0, 4.0))
    np.testing.assert_allclose(r_view, [6.0, 4.0, 2.0])
    np.testing.assert_allclose(r_dest, [102.0, 4.0, 6.0])

# --- printing ------------------------------------------------------------------------
text = debugprint(op(x, y, z), file="str")
assert "Inner graphs:" in text
lines = [line.strip() for line in text.split("\n")]
assert lines.count("OpFromGraph{inline=False} [id A]") == 2
assert any(line.endswith("Add [id E]") for line in lines)
assert "i2 [id I]" in [line.lstrip("|├└─ ").strip() for line in lines]
assert "Inner graphs:" not in debugprint(op(x, y, z), file="str", print_inner_graphs=False)
