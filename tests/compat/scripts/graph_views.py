"""What the notebook's graph views rely on, as PyTensor programs see it.

The views mark the nodes ``grad`` builds and name every node by its op's
``str`` (as ``dprint`` prints it); a PyTensor program must not notice
either: ``grad`` keeps its signature and results, ``dprint`` its names.
"""

import inspect

import numpy as np

import pytensor
import pytensor.tensor as pt
from pytensor.printing import debugprint

x = pt.dmatrix("x")
W = pytensor.shared(np.full((3, 2), 0.5), name="W")
hidden = pt.tanh(pt.dot(x, W))
cost = hidden.sum()
cost.name = "cost"

# grad keeps PyTensor's signature and behaviour.
params = list(inspect.signature(pytensor.grad).parameters)
assert params[:2] == ["cost", "wrt"], params
assert {"consider_constant", "disconnected_inputs", "known_grads", "null_gradients"} <= set(params)
g = pytensor.grad(cost, W)
assert g.name == "(dcost/dW)", g.name

# One naming: a node is named by its op's str, which is what dprint prints first.
for var in (x + 1, pt.exp(x), pt.dot(x, W), hidden, x.sum(axis=1)):
    text = debugprint(var, file="str")
    assert text.startswith(str(var.owner.op) + " [id A]"), (str(var.owner.op), text)

# The values are PyTensor's.
f = pytensor.function([x], [cost, g])
X = np.ones((4, 3))
c, gv = f(X)
t = np.tanh(X @ np.full((3, 2), 0.5))
np.testing.assert_allclose(c, t.sum())
np.testing.assert_allclose(gv, X.T @ (1 - t**2))

# A training step's updates run as before.
step = pytensor.function([x], cost, updates=[(W, W - 0.1 * g)])
before = W.get_value().copy()
step(X)
np.testing.assert_allclose(W.get_value(), before - 0.1 * (X.T @ (1 - t**2)))
