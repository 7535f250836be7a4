"""Random variables, round 3: ShapeFeature, the random lift rewrites, the unused-draw
sidestep, the core-shape wrapper, and draws of the distributions with new kernels."""

import warnings

import numpy as np

import pytensor
import pytensor.tensor as pt
from pytensor.compile.mode import Mode, get_default_mode
from pytensor.graph.fg import FunctionGraph
from pytensor.graph.rewriting.basic import EquilibriumGraphRewriter, dfs_rewriter
from pytensor.tensor.random.basic import (
    NormalRV,
    dirichlet,
    normal,
    permutation,
    truncexpon,
    vonmises,
    wald,
)
from pytensor.tensor.random.op import RandomVariable, RandomVariableWithCoreShape
from pytensor.tensor.random.rewriting import (
    local_dimshuffle_rv_lift,
    local_rv_size_lift,
    local_subtensor_rv_lift,
)
from pytensor.tensor.random.rewriting.basic import sidestep_unused_rng_consumer  # noqa: F401
from pytensor.tensor.random.rewriting.numba import introduce_explicit_core_shape_rv
from pytensor.tensor.rewriting.shape import ShapeFeature, ShapeOptimizer
from pytensor.tensor.subtensor import as_index_constant

warnings.simplefilter("ignore", DeprecationWarning)
warnings.simplefilter("ignore", FutureWarning)
warnings.simplefilter("ignore", UserWarning)

# 1. ShapeFeature: shapes of a draw in terms of the graph inputs.
M = pt.iscalar("M")
sd = pt.scalar("sd")
d = normal(pt.ones((M,)), sd, size=(2, M), rng=pytensor.shared(np.random.default_rng(0)))
fg = FunctionGraph(outputs=[d], clone=False, features=[ShapeFeature()])
s1, s2 = fg.shape_feature.shape_tuple(d)
f = pytensor.function([M, sd], [s1, s2, d], mode="FAST_COMPILE", on_unused_input="ignore")
v1, v2, dv = f(3, np.asarray(1.0, dtype=pytensor.config.floatX))
assert (int(v1), int(v2)) == dv.shape == (2, 3)
assert fg.shape_feature.same_shape(d, d)

# 2. The lifts: indexed/transposed/sized draws equal draws of the lifted parameters.
def rewritten(rewrite, outs):
    mode = Mode("py", EquilibriumGraphRewriter([ShapeOptimizer(), rewrite], max_use_ratio=100))
    return pytensor.function([], outs, mode=mode)

def rv_nodes(fn):
    return [n for n in fn.maker.fgraph.apply_nodes if isinstance(n.op, RandomVariable)]

mu = np.arange(5.0)
x = normal(mu, 1.0, rng=pytensor.shared(np.random.default_rng(7)))
fn = rewritten(local_subtensor_rv_lift, x[as_index_constant(slice(1, 3))])
assert rv_nodes(fn)[0].outputs[1].type.shape == (2,)
np.testing.assert_array_equal(fn(), np.random.default_rng(7).normal(mu[1:3], 1.0))

mu2 = np.arange(6.0).reshape(2, 3)
x = normal(mu2, 1.0, rng=pytensor.shared(np.random.default_rng(2)), name="x")
fn = rewritten(local_dimshuffle_rv_lift, x.T)
assert rv_nodes(fn)[0].outputs[1].name == "x_lifted"
np.testing.assert_array_equal(fn(), np.random.default_rng(2).normal(mu2.T, 1.0))

x = normal(0.0, 2.0, size=(2, 3), rng=pytensor.shared(np.random.default_rng(4)))
fn = rewritten(local_rv_size_lift, x)
np.testing.assert_array_equal(fn(), np.random.default_rng(4).normal(0.0, 2.0, size=(2, 3)))

# 3. A draw nobody reads is sidestepped (tag random_unsafe).
rng = pytensor.shared(np.random.default_rng(0))
r1, _unused = normal(0.0, 1.0, size=3, rng=rng, return_next_rng=True)
r2, z = normal(5.0, 1.0, rng=r1, return_next_rng=True)
mode = get_default_mode().excluding("inplace")
count = lambda fn: sum(  # noqa: E731
    isinstance(n.op, NormalRV)
    or (isinstance(n.op, RandomVariableWithCoreShape) and isinstance(n.op.core_op, NormalRV))
    for n in fn.maker.fgraph.apply_nodes
)
assert count(pytensor.function([], z, mode=mode)) == 1
assert count(pytensor.function([], z, mode=mode.excluding("random_unsafe"))) == 2

# 4. The core-shape wrapper draws as the wrapped op.
y = dirichlet(np.ones((2, 3)), rng=pytensor.shared(np.random.default_rng(5)))
fg = FunctionGraph(outputs=[y], clone=True)
dfs_rewriter(introduce_explicit_core_shape_rv).rewrite(fg)
[node] = [n for n in fg.apply_nodes if isinstance(n.op, RandomVariableWithCoreShape)]
assert type(node.op.core_op).__name__ == "DirichletRV"
out = pytensor.function([], fg.outputs, mode="FAST_COMPILE")()[0]
np.testing.assert_array_equal(out, np.random.default_rng(5).dirichlet(np.ones(3), size=2))

# 5. vonmises, wald, truncexpon, permutation: the same numbers on both paths.
for mode in ("FAST_COMPILE", "FAST_RUN"):
    g = pytensor.shared(np.random.default_rng(11))
    r, a = vonmises(np.array([0.3, -3.1]), np.array([[1e-9], [0.5], [1e7]]), rng=g, return_next_rng=True)
    r, b = wald(np.array([0.7, 2.0]), 2.0, rng=r, return_next_rng=True)
    r, c = truncexpon(np.array([0.5, 7.0]), 1.0, 2.0, rng=r, return_next_rng=True)
    r, e = permutation(6, rng=r, return_next_rng=True)
    vals = pytensor.function([], [a, b, c, e], mode=mode)()
    ref = np.random.default_rng(11)
    np.testing.assert_array_equal(vals[0], ref.vonmises([0.3, -3.1], [[1e-9], [0.5], [1e7]]))
    np.testing.assert_array_equal(vals[1], ref.wald([0.7, 2.0], 2.0))
    assert np.all((vals[2] >= 1.0) & (vals[2] <= 1.0 + np.array([0.5, 7.0]) * 2.0))
    assert sorted(vals[3]) == list(range(6))
    if mode == "FAST_COMPILE":
        first = vals
    else:
        for p, q in zip(first, vals):
            np.testing.assert_array_equal(p, q)

print("ok")
