"""Blockwise, batched products and the aliasing machinery of compiled functions."""

import numpy as np
import scipy.linalg

import pytensor
import pytensor.tensor as pt
from pytensor import In, function
from pytensor.compile import get_default_mode
from pytensor.compile.aliasing import (
    Supervisor,
    add_supervisor_to_fgraph,
    alias_root,
    infer_reuse_pattern,
    view_tree_set,
)
from pytensor.graph import Apply, FunctionGraph, Op, rewrite_graph
from pytensor.graph.replace import vectorize_graph
from pytensor.graph.traversal import ancestors
from pytensor.tensor.blas import BatchedDot, _batched_dot
from pytensor.tensor.blockwise import Blockwise
from pytensor.tensor.linalg import cholesky, solve
from pytensor.tensor.rewriting.blas import specialize_matmul_to_batched_dot
from pytensor.tensor.utils import (
    _parse_gufunc_signature,
    broadcast_static_dim_lengths,
    faster_broadcast_to,
    faster_ndindex,
    get_static_shape_from_size_variables,
    hash_from_ndarray,
    import_func_from_string,
    normalize_reduce_axis,
    safe_signature,
    shape_of_variables,
)

rng = np.random.default_rng(5)

# --- aliasing: roots, view trees, reuse, protected inputs ------------------------------
x = pt.dmatrix("x")
v = x.T[0]
e = pt.exp(x)
assert alias_root(v) is x and alias_root(e) is e
fg = FunctionGraph([x], [v, e.T], clone=False)
tree = set()
view_tree_set(fg, x, tree)
assert v in tree and e not in tree
assert infer_reuse_pattern(fg, [fg.outputs[1]]) == {e, fg.outputs[1]}

a, b = pt.dmatrices("a", "b")
fg = FunctionGraph([a, b], [pt.exp(a) * 2 + pt.exp(b)])
add_supervisor_to_fgraph(fg, [In(inp, mutable=(i == 0)) for i, inp in enumerate(fg.inputs)])
assert isinstance(fg._supervisor, Supervisor)
assert fg._supervisor.protected == [fg.inputs[1]]

inplace_add = pt.elemwise.Elemwise(pytensor.scalar.add, inplace_pattern={0: 0})
fg = FunctionGraph([a, b], [inplace_add(a, b)])
try:
    add_supervisor_to_fgraph(fg, [In(i) for i in fg.inputs])
    raise AssertionError("an in-place graph was accepted without accept_inplace")
except TypeError:
    pass

# --- tensor.utils -----------------------------------------------------------------------
assert _parse_gufunc_signature("(m,n),(n)->(m)") == ([("m", "n"), ("n",)], [("m",)])
assert safe_signature([1, 2], [1]) == "(i00),(i10,i11)->(o00)"
assert broadcast_static_dim_lengths([None, 1]) is None and broadcast_static_dim_lengths([1, 5]) == 5
assert normalize_reduce_axis(-1, 3) == (2,) and normalize_reduce_axis(None, 2) is None
np.testing.assert_array_equal(faster_broadcast_to(np.arange(3), (2, 3)), np.broadcast_to(np.arange(3), (2, 3)))
assert list(faster_ndindex((2, 1))) == [(0, 0), (1, 0)]
assert hash_from_ndarray(np.zeros((2, 3))) != hash_from_ndarray(np.zeros((3, 2)))
assert import_func_from_string("sum") is np.sum
assert get_static_shape_from_size_variables([pt.constant(3), pt.lscalar()]) == (3, None)
sx = pt.dmatrix("sx")
sfg = FunctionGraph([sx], [sx[2:]], clone=False)
assert tuple(int(s) for s in shape_of_variables(sfg, {sx: (10, 4)})[sfg.outputs[0]]) == (8, 4)

# --- BatchedDot and the matmul rewrite ------------------------------------------------------
assert BatchedDot.gufunc_signature == "(b,m,k),(b,k,n)->(b,m,n)"
p, q = pt.dtensor3("p"), pt.tensor3("q", dtype="int64")
bd = _batched_dot(p, q)
assert isinstance(bd.owner.op, BatchedDot) and bd.type.dtype == "float64"
f = function([p, q], bd)
pv, qv = rng.normal(size=(4, 2, 3)), rng.integers(-3, 3, size=(4, 3, 5))
np.testing.assert_allclose(f(pv, qv), np.matmul(pv, qv))
pytensor.gradient.verify_grad(_batched_dot, [rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 4, 2))], rng=rng)
try:
    _batched_dot(pt.tensor(shape=(3, 2, 2)), pt.tensor(shape=(1, 2, 2)))
    raise AssertionError("BatchedDot broadcast its batch dimension")
except ValueError:
    pass

x4 = pt.tensor("x4", shape=(7, 5, 3, 3))
y4 = pt.tensor("y4", shape=(7, 5, 3, 3))
rewrite = specialize_matmul_to_batched_dot.__name__
f = function([x4, y4], x4 @ y4, mode=get_default_mode().including(rewrite))
assert any(isinstance(n.owner.op, BatchedDot) for n in ancestors(f.maker.fgraph.outputs) if n.owner)
g = function([x4, y4], x4 @ y4, mode=get_default_mode().excluding(rewrite))
assert not any(isinstance(n.op, BatchedDot) for n in g.maker.fgraph.apply_nodes)
xv, yv = rng.normal(size=(7, 5, 3, 3)), rng.normal(size=(7, 5, 3, 3))
np.testing.assert_allclose(f(xv, yv), np.matmul(xv, yv))
np.testing.assert_allclose(g(xv, yv), np.matmul(xv, yv))


# --- Blockwise: in place, PyTensor-3 core ops ------------------------------------------------
class CopyOrInplace(Op):
    __props__ = ("inplace",)

    def __init__(self, inplace=()):
        self.inplace = tuple(inplace)
        self.destroy_map = {i: [i] for i in self.inplace}

    def make_node(self, *inputs):
        return Apply(self, list(inputs), [i.type() for i in inputs])

    def inplace_on_inputs(self, allowed_inplace_inputs):
        return type(self)(inplace=tuple(allowed_inplace_inputs))

    def perform(self, node, inputs, outputs):
        for i, (val, out) in enumerate(zip(inputs, outputs)):
            out[0] = val if i in self.inplace else val.copy()


op = Blockwise(CopyOrInplace(), signature="(),()->(),()")
i0, i1 = pt.dmatrices("i0", "i1")
fg = FunctionGraph([i0, i1], op(i0.T, i1.T))
add_supervisor_to_fgraph(fg, [In(fg.inputs[0], mutable=True), In(fg.inputs[1], mutable=False)])
rewrite_graph(fg, include=("inplace",))
assert fg.outputs[0].owner.op.destroy_map == {0: [0]}

X = pt.tensor("X", shape=(3, None, None))
fchol = function([In(X, mutable=True)], cholesky(X))
# (PyTensor's Numba backend wraps each Blockwise node in BlockwiseWithCoreShape)
[chol_node] = [n for n in fchol.maker.fgraph.apply_nodes if hasattr(n.op, "core_op")]
assert chol_node.op.destroy_map == {0: [0]}
m = rng.normal(size=(3, 4, 4))
Xv = m @ m.transpose(0, 2, 1) + 4 * np.eye(4)
X0 = Xv.copy()
np.testing.assert_allclose(fchol(Xv), np.linalg.cholesky(X0))
np.testing.assert_allclose(Xv, np.linalg.cholesky(X0))  # the result was written over X

A, bvec = pt.tensor("A", shape=(3, 4, 4)), pt.dvector("bvec")
fsolve = function([In(A, mutable=True), bvec], solve(A, bvec, b_ndim=1))
Av = np.swapaxes(rng.normal(size=(3, 4, 4)) + 4 * np.eye(4), -1, -2)
A0, bv = Av.copy(), rng.normal(size=4)
np.testing.assert_allclose(fsolve(Av, bv), [scipy.linalg.solve(a_, bv) for a_ in A0])
assert fsolve.maker.fgraph.outputs[0].owner.op.destroy_map == {0: [0]}
assert not np.array_equal(Av, A0)  # LAPACK factorised A in its own memory


class TwoArgInferShape(Op):
    def make_node(self, a_, b_):
        return Apply(self, [a_, b_], [pt.dvector(), pt.dvector()])

    def perform(self, node, inputs, outputs):
        a_, b_ = inputs
        outputs[0][0] = np.zeros(a_.size + b_.size)
        outputs[1][0] = np.zeros(int(a_.sum() + b_.sum()))

    def infer_shape(self, node, input_shapes):
        [(na,), (nb,)] = input_shapes
        a_, b_ = node.inputs
        return [(na + nb,), (pt.cast(a_.sum() + b_.sum(), "int64"),)]


c, d = Blockwise(TwoArgInferShape(), signature="(a),(b)->(c),(d)")(pt.tensor(shape=(5, 3)), pt.tensor(shape=(1, 4)))
cin = [v_ for v_ in ancestors([c]) if v_.owner is None and v_.type.ndim == 2]
fc = function(cin, c.shape)
assert not any(hasattr(n.op, "core_op") for n in fc.maker.fgraph.apply_nodes)
assert tuple(fc(*[np.zeros(v_.type.shape) for v_ in cin])) == (5, 7)


class MixedOutputs(Op):
    gufunc_signature = "()->(),()"
    itypes = [pt.dscalar().type]
    otypes = [pt.dscalar().type, pt.lscalar().type]

    def perform(self, node, inputs, outputs):
        raise NotImplementedError()

    def L_op(self, inputs, outputs, output_gradients):
        return [pt.ones_like(inputs[0]) * output_gradients[0]]


vec = pt.dvector("vec")
first, _ = Blockwise(MixedOutputs())(vec)
np.testing.assert_array_equal(pytensor.grad(first.sum(), vec).eval({vec: np.full(4, np.nan)}), np.ones(4))

# A batched index (from a vectorized scan-free graph): Blockwise of the indexing op.
idx, idxs = pt.lscalar("idx"), pt.lvector("idxs")
vals = pt.dvector("vals")
batched = vectorize_graph(vals[idx], {idx: idxs})
np.testing.assert_allclose(batched.eval({vals: np.arange(5.0), idxs: np.array([4, 0])}), [4.0, 0.0])
