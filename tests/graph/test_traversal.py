"""Graph walks: ancestors, inputs, orders, cloning; all safe on very deep graphs."""

from lucent.graph.basic import Apply, Constant
from lucent.graph.op import Op
from lucent.graph.traversal import (
    ancestors,
    applys_between,
    clone,
    clone_get_equiv,
    graph_inputs,
    io_toposort,
    is_in_ancestors,
    orphans_between,
    toposort,
    vars_between,
    walk,
)
from tests.graph.test_basic import MyType

t = MyType()


class F(Op):
    __props__ = ("name",)

    def __init__(self, name):
        self.name = name

    def make_node(self, *inputs):
        return Apply(self, list(inputs), [t()])


f, g = F("f"), F("g")


def diamond():
    x, y = t("x"), t("y")
    c = Constant(t, 1)
    a = f(x, c)
    b = g(a, y)
    out = f(a, b)
    return x, y, c, a, b, out


def test_walk_bfs_and_dfs():
    children = {1: [2, 3], 2: [4], 3: [4], 4: []}
    assert list(walk([1], children.get)) == [1, 2, 3, 4]
    assert list(walk([1], children.get, bfs=False)) == [1, 3, 4, 2]
    assert list(walk([1], children.get, return_children=True))[0] == (1, [2, 3])


def test_ancestors_and_graph_inputs():
    x, y, c, a, b, out = diamond()
    anc = list(ancestors([out]))
    assert anc[0] is out and set(anc) == {x, y, c, a, b, out}
    assert graph_inputs([out]) == [x, c, y]
    assert graph_inputs([out], blockers=[a]) == [a, y]
    assert set(ancestors([out], blockers=[b])) == {out, a, b, x, c}


def test_is_in_ancestors():
    x, y, c, a, b, out = diamond()
    assert is_in_ancestors(out.owner, a.owner)
    assert not is_in_ancestors(a.owner, out.owner)


def test_between_helpers():
    x, y, c, a, b, out = diamond()
    assert set(vars_between([x, y], [out])) == {x, y, c, a, b, out}
    assert orphans_between([x, y], [out]) == [c]
    nodes = applys_between([x, y], [out])
    assert set(nodes) == {a.owner, b.owner, out.owner} and len(nodes) == 3


def test_io_toposort_is_a_valid_order():
    x, y, c, a, b, out = diamond()
    order = io_toposort([x, y], [out])
    assert order == [a.owner, b.owner, out.owner]
    # stops at given inputs
    assert io_toposort([a, y], [out]) == [b.owner, out.owner]
    # extra orderings are honoured
    p, q = f(x), g(x)
    r = f(p, q)
    assert io_toposort([x], [r], orderings={p.owner: [q.owner]}) == [q.owner, p.owner, r.owner]


def test_toposort_variables():
    x, y, c, a, b, out = diamond()
    order = toposort([out])
    pos = {v: i for i, v in enumerate(order)}
    for v in order:
        if v.owner is not None:
            assert all(pos[i] < pos[v] for i in v.owner.inputs)
    assert order[-1] is out


def test_clone_get_equiv():
    x, y, c, a, b, out = diamond()
    equiv = clone_get_equiv([x, y], [out])
    assert equiv[x] is not x and equiv[out] is not out
    assert equiv[out].owner.inputs[0] is equiv[a]
    assert equiv[c] is c  # constants are values: shared, never copied
    equiv2 = clone_get_equiv([x, y], [out], copy_inputs=False, copy_orphans=False)
    assert equiv2[x] is x and equiv2[c] is c and equiv2[out] is not out
    (x2, y2), (out2,) = clone([x, y], [out])
    ins = graph_inputs([out2])
    assert ins[0] is x2 and ins[2] is y2 and ins[1] is c


def test_clone_get_equiv_uses_and_fills_memo():
    x, y, c, a, b, out = diamond()
    z = a.type("z")
    memo = {a: z}
    result = clone_get_equiv([x, y], [out], copy_inputs=False, copy_orphans=False, memo=memo)
    assert result is memo and memo[a] is z
    assert a.owner not in memo  # every output replaced: the node is not cloned
    assert memo[out].owner.inputs[0] is z


def test_deep_chain_has_no_recursion_error():
    x = t("x")
    out = x
    for _ in range(5000):
        out = f(out)
    assert len(io_toposort([x], [out])) == 5000
    assert len(list(ancestors([out]))) == 5001
    assert graph_inputs([out]) == [x]
    assert len(toposort([out])) == 5001
    assert len(applys_between([x], [out])) == 5000
    equiv = clone_get_equiv([x], [out])
    assert graph_inputs([equiv[out]]) == [equiv[x]]
