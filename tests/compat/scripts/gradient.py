"""Automatic differentiation and graph vectorization, written against PyTensor's API.

Covers grad's options, pullback / pushforward (and the deprecated Lop / Rop),
Jacobians (row by row and vectorized), Hessians, Hessian-vector products,
the gradient-changing ops, and vectorize_graph.
"""

import warnings

import numpy as np

import pytensor
import pytensor.tensor as pt
from pytensor.gradient import (
    DisconnectedInputError,
    DisconnectedType,
    GradClip,
    GradScale,
    Lop,
    NullTypeGradError,
    Rop,
    UndefinedGrad,
    disconnected_grad,
    disconnected_type,
    grad,
    grad_clip,
    grad_not_implemented,
    grad_scale,
    grad_undefined,
    hessian,
    hessian_vector_product,
    jacobian,
    numeric_grad,
    pullback,
    pushforward,
    subgraph_grad,
    undefined_grad,
    verify_grad,
    zero_grad,
)
from pytensor.graph import vectorize_graph
from pytensor.graph.basic import Apply
from pytensor.graph.null_type import NullType
from pytensor.graph.op import Op
from pytensor.graph.replace import _vectorize_node, vectorize_graph as vectorize_graph2

assert vectorize_graph is vectorize_graph2
rng = np.random.default_rng(42)
fn = pytensor.function


def numeric_jacobian(f, xv, eps=1e-6):
    cols = []
    for e in np.eye(xv.size):
        e = e.reshape(xv.shape)
        cols.append((np.asarray(f(xv + eps * e)) - np.asarray(f(xv - eps * e))) / (2 * eps))
    return np.stack(cols, axis=-1)


# --- grad ------------------------------------------------------------------
x = pt.dvector("x")
W = pt.dmatrix("W")
xv = rng.random(3)
Wv = rng.random((4, 3))
cost = pt.sum(pt.tanh(pt.dot(W, x)) ** 2)
cost.name = "c"
gx = grad(cost, x)
assert gx.name == "(dc/dx)"
assert isinstance(grad(cost, [x, W]), list) and isinstance(grad(cost, (x, W)), tuple)
f_cost = fn([x, W], cost)
np.testing.assert_allclose(fn([x, W], gx)(xv, Wv), numeric_jacobian(lambda v: f_cost(v, Wv), xv), rtol=1e-6)

y = pt.exp(x)
gy = pt.dvector("gy")
g_known = grad(None, x, known_grads={y: gy})
gyv = rng.random(3)
np.testing.assert_allclose(fn([x, gy], g_known)(xv, gyv), gyv * np.exp(xv))
try:
    grad(None, x)
    raise AssertionError("grad without cost nor known_grads must fail")
except ValueError:
    pass

z = x * 2
c2 = pt.sum(z * x)
np.testing.assert_allclose(fn([x], grad(c2, x, consider_constant=[z]))(xv), 2 * xv)

other = pt.dvector("other")
try:
    grad(pt.sum(x), other)
    raise AssertionError("a disconnected input must raise")
except DisconnectedInputError:
    pass
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    assert grad(pt.sum(x), other, disconnected_inputs="warn", return_disconnected="none") is None
d = grad(pt.sum(x), other, disconnected_inputs="ignore", return_disconnected="disconnected")
assert isinstance(d.type, DisconnectedType)
assert isinstance(disconnected_type().type, DisconnectedType)
np.testing.assert_array_equal(fn([other], grad(pt.sum(x), other, disconnected_inputs="ignore"))(xv), 0.0)


class NoGrad(Op):
    __props__ = ()

    def make_node(self, v):
        return Apply(self, [v], [v.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0].copy()

    def pullback(self, inputs, outputs, cotangents):
        return [grad_not_implemented(self, 0, inputs[0])]


class Jumpy(NoGrad):
    def pullback(self, inputs, outputs, cotangents):
        return [grad_undefined(self, 0, inputs[0], "it jumps")]


for op in (NoGrad(), Jumpy()):
    c = pt.sum(op(x))
    try:
        grad(c, x)
        raise AssertionError("a NullType gradient must raise")
    except NullTypeGradError:
        pass
    assert isinstance(grad(c, x, null_gradients="return").type, NullType)

# --- ops that change the gradient -------------------------------------------
np.testing.assert_allclose(fn([x], grad(pt.sum(x * zero_grad(x)), x))(xv), xv)
np.testing.assert_allclose(fn([x], grad(pt.sum(x * disconnected_grad(x)), x))(xv), xv)
try:
    grad(pt.sum(undefined_grad(x)), x)
    raise AssertionError("undefined_grad must make the gradient undefined")
except NullTypeGradError:
    pass
s = pt.dscalar("s")
g_clip = grad(grad_clip(s, -1, 1) ** 2, s)
assert float(fn([s], g_clip)(2.0)) == 1.0
assert isinstance(grad_clip(s, -1, 1).owner.op, GradClip)
g_scale = grad(grad_scale(pt.sin(s), -1.0), s)
np.testing.assert_allclose(fn([s], g_scale)(2.0), -np.cos(2.0))
assert isinstance(grad_scale(s, 2.0).owner.op, GradScale)
assert isinstance(undefined_grad(s).owner.op, UndefinedGrad)
np.testing.assert_allclose(fn([s], grad_clip(s, -1, 1))(5.0), 5.0)

# --- pullback / pushforward -------------------------------------------------
u = pt.dvector("u")
v = pt.dvector("v")
out = pt.tanh(pt.dot(W, x)) + pt.sum(x**2)
f_out = fn([x, W], out)
J = numeric_jacobian(lambda t: f_out(t, Wv), xv)
uv, vv = rng.random(4), rng.random(3)
vjp = pullback(out, x, u)
np.testing.assert_allclose(fn([x, W, u], vjp)(xv, Wv, uv), uv @ J, rtol=1e-6)
for use_op in (False, True):
    jvp = pushforward(out, x, v, use_op_pushforward=use_op)
    np.testing.assert_allclose(fn([x, W, v], jvp, on_unused_input="ignore")(xv, Wv, vv), J @ vv, rtol=1e-6)
listed = pushforward([out, x], [x], [v])
assert isinstance(listed, list) and len(listed) == 2
assert isinstance(pushforward((out,), x, v), tuple)
assert isinstance(pullback(out, [x], u), list)
try:
    pushforward(out, [x], [pt.dmatrix()])
    raise AssertionError("mismatched tangent dimensions must raise")
except ValueError:
    pass
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    r = Rop(out, x, v)
    lo = Lop(out, x, u)
assert any(issubclass(w.category, FutureWarning) for w in caught)
np.testing.assert_allclose(fn([x, W, v], r, on_unused_input="ignore")(xv, Wv, vv), J @ vv, rtol=1e-6)
np.testing.assert_allclose(fn([x, W, u], lo)(xv, Wv, uv), uv @ J, rtol=1e-6)

# --- Jacobians, Hessians ---------------------------------------------------
for vectorize in (False, True):
    jac = jacobian(out, x, vectorize=vectorize)
    np.testing.assert_allclose(fn([x, W], jac)(xv, Wv), J, rtol=1e-6)
    jacs = jacobian(out, [x, W], vectorize=vectorize)
    assert isinstance(jacs, list) and len(jacs) == 2
    assert fn([x, W], jacs[1])(xv, Wv).shape == (4, 4, 3)
mat = pt.dmatrix("mat")
jm = jacobian(pt.exp(mat), mat, vectorize=True)
mv = rng.random((2, 3))
expected = np.zeros((2, 3, 2, 3))
for i in range(2):
    for j in range(3):
        expected[i, j, i, j] = np.exp(mv[i, j])
np.testing.assert_allclose(fn([mat], jm)(mv), expected)

h_cost = pt.sum(x**3) * pt.sum(x)
H = hessian(h_cost, x)
f_grad = fn([x], grad(h_cost, x))
np.testing.assert_allclose(fn([x], H)(xv), numeric_jacobian(f_grad, xv), rtol=1e-5)
p = pt.dvector("p")
hvp = hessian_vector_product(h_cost, x, p)
np.testing.assert_allclose(fn([x, p], hvp)(xv, vv), numeric_jacobian(f_grad, xv) @ vv, rtol=1e-5)
hvps = hessian_vector_product(h_cost, [x], [p])
assert isinstance(hvps, list) and len(hvps) == 1

# --- subgraph_grad ---------------------------------------------------------
a1 = pt.tanh(pt.dot(W, x))
c_top = pt.sum(a1**2)
wrt_grads, end_grads = subgraph_grad(wrt=[W], end=[x], cost=c_top)
np.testing.assert_allclose(fn([x, W], wrt_grads[0])(xv, Wv), fn([x, W], grad(c_top, W))(xv, Wv))
np.testing.assert_allclose(fn([x, W], end_grads[0])(xv, Wv), fn([x, W], grad(c_top, x))(xv, Wv))

# --- verify_grad / numeric_grad ---------------------------------------------
verify_grad(pt.tanh, [np.asarray([[2.0, 3.0, 4.0], [-1.0, 3.3, 9.9]])], rng=np.random.default_rng(23098))
ng = numeric_grad(lambda a: float(np.sum(a**2)), np.array([1.0, 2.0]))
np.testing.assert_allclose(ng.gf, [2.0, 4.0], rtol=1e-4)

# --- vectorize_graph ---------------------------------------------------------
xs = pt.dmatrix("xs")
softmax_like = pt.exp(x) / pt.sum(pt.exp(x))
batched = vectorize_graph(softmax_like, replace={x: xs})
xsv = rng.random((5, 3))
f_one = fn([x], softmax_like)
np.testing.assert_allclose(fn([xs], batched)(xsv), np.stack([f_one(r) for r in xsv]))
first, last = vectorize_graph([x[0], x[-1]], replace={x: xs})
np.testing.assert_allclose(fn([xs], [first, last])(xsv)[1], xsv[:, -1])

graph = pt.dot(W, x).max() + x.dimshuffle("x", 0).sum(axis=0)[:2].sum() + pt.argmax(x)
f_graph = fn([x, W], graph)
Ws = pt.tensor3("Ws", dtype="float64")
Wsv = rng.random((5, 4, 3))
both = vectorize_graph(graph, replace={x: xs, W: Ws})
np.testing.assert_allclose(fn([xs, Ws], both)(xsv, Wsv), [f_graph(a, b) for a, b in zip(xsv, Wsv)])
only_x = vectorize_graph(graph, replace={x: xs})
np.testing.assert_allclose(fn([xs, W], only_x)(xsv, Wv), [f_graph(a, Wv) for a in xsv])
resh = pt.reshape(x, (3, 1)) * pt.ones((3, 2))
np.testing.assert_allclose(
    fn([xs], vectorize_graph(resh, replace={x: xs}))(xsv), [fn([x], resh)(r) for r in xsv]
)
assert callable(_vectorize_node.register)
print("gradient compat script: ok")
