"""The graph layer as PyTensor programs use it: nodes, cloning, comparing, rewriting."""

import pickle
import warnings

import numpy as np

import pytensor
import pytensor.tensor as pt
from pytensor.graph import (
    FunctionGraph,
    RewriteDatabaseQuery,
    clone,
    explicit_graph_inputs,
    graph_rewriter,
    node_rewriter,
    rewrite_graph,
)
from pytensor.graph.basic import (
    AbstractApply,
    Apply,
    AtomicVariable,
    Constant,
    FrozenApply,
    NominalVariable,
    Variable,
    as_string,
    clone_get_equiv,
    equal_computations,
)
from pytensor.graph.features import Feature
from pytensor.graph.fg import FrozenFunctionGraph
from pytensor.graph.utils import InconsistencyError
from pytensor.graph.op import Op
from pytensor.graph.rewriting.basic import (
    WalkingGraphRewriter,
    dfs_rewriter,
    in2out,
    out2in,
    walking_rewriter,
)
from pytensor.graph.traversal import get_var_by_name
from pytensor.graph.type import Type
from pytensor.printing import debugprint
from pytensor.scalar.basic import add as scalar_add
from pytensor.scalar.basic import float64 as sfloat64
from pytensor.tensor.type import TensorType
from pytensor.tensor.variable import TensorVariable


# --- a Type and an Op of our own ---------------------------------------------------
class Thing(Type):
    def __init__(self, n):
        self.n = n

    def filter(self, data, strict=False, allow_downcast=None):
        return data

    def __eq__(self, other):
        return type(other) is Thing and other.n == self.n

    def __hash__(self):
        return hash((Thing, self.n))

    def __str__(self):
        return f"T{self.n}"

    __repr__ = __str__


class Wider(Thing):
    def is_super(self, other):
        return self.n <= other.n or None


class Combine(Op):
    __props__ = ()

    def make_node(self, *inputs):
        return Apply(self, list(inputs), [Thing(sum(i.type.n for i in inputs))()])

    def perform(self, node, inputs, outputs):
        outputs[0][0] = sum(inputs)


combine = Combine()
a, b, c = Thing(1)(), Thing(2)(), Thing(5)()

# --- as_string: shared subexpressions are numbered ------------------------------------
ab = combine(a, b)
assert as_string([a, b, c], [combine(ab, c)], leaf_formatter=lambda v: str(v.type)) == [
    "Combine(Combine(T1, T2), T5)"
]
twice = combine(ab, ab)
assert as_string([a, b, c], [twice], leaf_formatter=lambda v: str(v.type)) == [
    "Combine(*1 -> Combine(T1, T2), *1)"
]
assert as_string([ab], [twice], leaf_formatter=lambda v: str(v.type)) == ["Combine(T3, T3)"]

# --- Node.dprint for variables and Applies ---------------------------------------------
assert twice.dprint(file="str") == debugprint(twice, file="str")
assert twice.owner.dprint(file="str") == debugprint(twice.owner, file="str")

# --- clone: inputs copied or not; constants are shared ----------------------------------
_, (new,) = clone([a, b, c], [combine(ab, c)], False)
assert new.owner.inputs[1] is c and new.owner.inputs[0] is not ab
k = pt.constant(1.5)
for flags in [(), (False,), (True, False), (False, True)]:
    ins, outs = clone([k], [k], *flags)
    assert ins[0] is k and outs[0] is k
assert k.clone() is k

# --- clone_get_equiv with a memo of replacements ------------------------------------------
x, y, z = pt.vector("x"), pt.vector("y"), pt.vector("z")
prod = x * y
total = prod + 1.0
memo = {prod: z}
clone_get_equiv([x, y], [total], copy_inputs=False, copy_orphans=False, memo=memo)
assert memo[prod] is z and prod.owner not in memo
assert equal_computations([memo[total]], [z + 1.0])

# --- clone_with_new_inputs narrows output types -------------------------------------------
u = pt.tensor(dtype="float64", shape=(None,))
v = pt.tensor(dtype="float64", shape=(1,))
u1 = pt.tensor(dtype="float64", shape=(1,))
node = pt.add(u, v).owner.clone_with_new_inputs([u1, v])
assert node.outputs[0].type.shape == (1,)

# --- equal_computations ---------------------------------------------------------------------
i, j = pt.iscalars(2)
assert equal_computations([i + j], [i + j]) and not equal_computations([i + j], [j + i])
assert equal_computations([np.r_[2, 1]], [pt.as_tensor(np.r_[2, 1])])
assert not equal_computations([2], [i])
try:
    equal_computations([i], [i, j])
    raise AssertionError("mismatched lengths must raise")
except ValueError:
    pass
i2, j2 = pt.iscalars(2)
assert equal_computations([i + j], [i2 + j2], in_xs=[i, j], in_ys=[i2, j2])

# --- NominalVariable: interned, alpha-equivalent inputs -------------------------------------
tt = TensorType("float64", (None, None))
n0 = NominalVariable(0, tt)
assert n0 is NominalVariable(0, tt) and isinstance(n0, TensorVariable)
assert isinstance(n0, AtomicVariable) and n0.ndim == 2
assert pickle.loads(pickle.dumps(n0)) is n0 and n0.clone() is n0
assert NominalVariable(1, tt) is not n0 and n0.signature() == (tt, 0)

# --- FrozenApply / FrozenFunctionGraph -------------------------------------------------------
p, q = NominalVariable(0, sfloat64), NominalVariable(1, sfloat64)
fa = FrozenApply(scalar_add, (p, q), (sfloat64,))
assert fa is FrozenApply(scalar_add, (p, q), (sfloat64,))
assert isinstance(fa, AbstractApply) and not isinstance(fa, Apply)
assert fa.outputs[0].owner is fa and fa.outputs[0].index == 0
s = sfloat64("s")
f1 = FrozenFunctionGraph.from_io([s], [scalar_add(s, s)])
f2 = FunctionGraph([s], [scalar_add(s, s)]).freeze()
assert f1 == f2 and hash(f1) == hash(f2) and {f1: 1}[f2] == 1
thawed = f1.unfreeze()
assert isinstance(thawed, FunctionGraph) and len(thawed.apply_nodes) == 1

# --- Variable.eval: names as keys, function keywords ------------------------------------------
xs, ys = pt.scalars("xs", "ys")
w = 2 * (xs + ys)
assert w.eval({"xs": 1.0, ys: 2.0}) == 6.0
inner = w.owner.inputs[1]
assert w.eval({inner: 3.0}) == 6.0
assert (xs + 1).eval({"xs": 1, "ys": 2}, on_unused_input="ignore") == 2.0
try:
    w.eval({"nope": 1.0})
    raise AssertionError("an unknown name must raise")
except ValueError as e:
    assert "nope not found in graph" in str(e)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    assert w.eval({xs: 1.0}, givens={ys: pt.constant(2.0, dtype=ys.dtype)}) == 6.0
assert any("cache key" in str(m.message) for m in caught)
assert not hasattr(pickle.loads(pickle.dumps(w)), "_fn_cache")
assert get_var_by_name([w], "xs") == (xs,)

# --- Type.convert_variable ---------------------------------------------------------------------
t1 = Thing(1)
v1, v2 = Variable(Thing(1), None), Variable(Thing(2), None)
assert t1.convert_variable(v1) is v1 and t1.convert_variable(v2) is None
try:
    t1.convert_variable(Variable(Wider(0), None))
    raise AssertionError("a wider type cannot be narrowed by default")
except NotImplementedError:
    pass

# --- FunctionGraph: memo, copy_inputs, ReplaceValidate ----------------------------------------
m = pt.dvector("m")
out = pt.exp(m) + 1
keep = {}
fg = FunctionGraph([m], [out], memo=keep)
assert keep[m] is fg.inputs[0] and keep[out] is fg.outputs[0]
fg2 = FunctionGraph([m], [out], copy_inputs=False)
assert fg2.inputs[0] is m and fg2.outputs[0] is not out
assert list(explicit_graph_inputs([out])) == [m]

fg = FunctionGraph([m], [pt.exp(m) + 1], clone=False)
exp_var = fg.outputs[0].owner.inputs[0]
fg.replace_validate(exp_var, pt.log(m), reason="swap")
assert fg.outputs[0].owner.inputs[0].owner.op == pt.log(m).owner.op
chk = fg.checkpoint()
fg.replace(fg.outputs[0], m * 2)
fg.revert(chk)
assert fg.outputs[0].owner.inputs[0].owner.op == pt.log(m).owner.op


class Veto(Feature):
    def on_validate(self, fgraph):
        if any(n.op == pt.sqrt(m).owner.op for n in fgraph.apply_nodes):
            raise InconsistencyError("no sqrt here")


fg.attach_feature(Veto())
before = fg.outputs[0]
try:
    fg.replace_all_validate([(fg.outputs[0], pt.sqrt(m))], reason="bad")
    raise AssertionError("a vetoed replacement must raise")
except InconsistencyError:
    pass
assert fg.outputs[0] is before  # undone
assert fg.consistent()

# --- rewriters: constructors and walking orders ------------------------------------------------


@node_rewriter([pt.exp(m).owner.op.__class__])
def exp_to_sqrt(fgraph, node):
    if node.op == pt.exp(m).owner.op:
        return [pt.sqrt(node.inputs[0])]
    return None


for make in (in2out, out2in, dfs_rewriter, lambda r: walking_rewriter("in_to_out", r)):
    g = FunctionGraph([m], [pt.exp(pt.exp(m))], clone=True)
    rw = make(exp_to_sqrt)
    assert isinstance(rw, WalkingGraphRewriter)
    rw.rewrite(g)
    assert all(n.op != pt.exp(m).owner.op for n in g.apply_nodes), make


@graph_rewriter
def drop_everything(fgraph):
    fgraph.replace(fgraph.outputs[0], fgraph.inputs[0], reason="drop")


g = FunctionGraph([m], [pt.exp(m)], clone=True)
drop_everything.rewrite(g)
assert g.outputs[0] is g.inputs[0]

# --- rewrite_graph ------------------------------------------------------------------------------
r = rewrite_graph(pt.log(1 + m), include=("canonicalize", "stabilize"))
assert "log1p" in str(r.owner.op).lower()
g = FunctionGraph(outputs=[pt.log(1 + m)], clone=True)
assert rewrite_graph(g, include=("canonicalize", "stabilize")) is g
assert isinstance(RewriteDatabaseQuery(include=["canonicalize"]), RewriteDatabaseQuery)
fn = pytensor.function([m], r)
np.testing.assert_allclose(fn(np.array([0.5, 1.0])), np.log1p([0.5, 1.0]))

print("graph compat script OK")
