# A small PyTensor program that uses only public PyTensor API. The test runs
# it with `pytensor` replaced by `lucent` in its imports.
import numpy as np

import pytensor
from pytensor.printing import pp
import pytensor.tensor as pt
from pytensor import In, Out, function, shared
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.gradient import grad, verify_grad
from pytensor.graph.basic import Apply, Constant, Variable
from pytensor.graph.fg import FunctionGraph
from pytensor.graph.op import Op
from pytensor.tensor.type import TensorType

results = {}

x = pt.dmatrix("x")
y = pt.dvector("y")
W = shared(np.ones((3, 2)), name="W")
b = shared(np.zeros(2), name="b")
h = pt.tanh(pt.dot(x, W) + b)
cost = ((h.sum(axis=1) - y) ** 2).mean()
gW, gb = grad(cost, [W, b])
step = function([x, y], cost, updates=[(W, W - 0.1 * gW), (b, b - 0.1 * gb)])
X = np.arange(12.0).reshape(4, 3) / 10
Y = np.array([0.5, -0.5, 1.0, 0.0])
first = step(X, Y)
for _ in range(20):
    last = step(X, Y)
results["decreases"] = bool(last < first)
results["W_shape"] = W.get_value().shape
assert isinstance(W, SharedVariable)

s = pt.scalar("s")
u = pt.scalar("u")
acc = function([In(u, name="u"), s], Out(s * 2 + u, borrow=False))
results["acc"] = float(acc(3.0, s=1.0))

m = pt.matrix("m")
f = function([m], [m.T[0], pt.concatenate([m, m], axis=0).shape, pt.max(m, axis=1), pt.argmax(m, axis=0)])
out = f(np.array([[1.0, 5.0], [3.0, 2.0]]))
results["slices"] = [np.asarray(o).tolist() for o in out]

v = TensorType("float64", shape=(2, None))("v")
results["type_repr"] = v.type.shape
results["softmax"] = np.asarray(pt.special.softmax(pt.as_tensor_variable(np.array([0.0, 0.0])))
                                .eval()).tolist()
results["eval"] = float((pt.exp(s) + u).eval({s: 0.0, u: 1.0}))
results["stack"] = pt.stack([s, u]).eval({s: 1.0, u: 2.0}).tolist()
results["where"] = pt.where(pt.gt(m, 2), m, 0.0).eval({m: np.array([[1.0, 3.0]])}).tolist()
fg = FunctionGraph([x], [pt.exp(x)])
results["fg_nodes"] = len(fg.apply_nodes)
results["pretty"] = isinstance(pp(x + y), str)
text = pytensor.dprint(x + 1, file="str")
results["dprint_has_add"] = "Add" in text


class DoubleOp(Op):
    __props__ = ()

    def make_node(self, a):
        a = pt.as_tensor_variable(a)
        return Apply(self, [a], [a.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2

    def grad(self, inputs, output_grads):
        return [output_grads[0] * 2]


results["custom_op"] = function([m], DoubleOp()(m))(np.ones((1, 2))).tolist()
verify_grad(lambda t: DoubleOp()(t).sum(), [np.array([1.0, 2.0])], rng=np.random.default_rng(0))
