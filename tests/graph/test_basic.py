"""Variables, Applies and Constants: the nodes every other layer builds on."""

import pickle

import numpy as np
import pytest

from lucent.graph.basic import Apply, Constant, Variable, clone, graph_inputs
from lucent.graph.op import Op
from lucent.graph.type import Props, Type
from lucent.tensor.type import TensorType


class MyType(Props, Type):
    """A tiny value type: Python ints tagged with a label."""

    __props__ = ("label",)

    def __init__(self, label="t"):
        self.label = label

    def filter(self, data, strict=False, allow_downcast=None):
        if isinstance(data, int) and not isinstance(data, bool):
            return data
        if not strict and isinstance(data, float) and data.is_integer():
            return int(data)
        raise TypeError(f"{self} expected an int, got {data!r}")

    def __str__(self):
        return f"MyType({self.label})"


class AddOp(Op):
    __props__ = ()

    def make_node(self, *inputs):
        return Apply(self, list(inputs), [inputs[0].type()])

    def perform(self, node, inputs, out):
        out[0][0] = sum(inputs)


class TwoOut(Op):
    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type(), x.type()])


t = MyType()


def test_variable_attributes():
    v = Variable(t, name="v")
    assert v.type is t and v.owner is None and v.index is None and v.name == "v"
    assert str(v) == "v"
    assert str(Variable(t)) == "<MyType(t)>"


def test_variable_checks_arguments():
    with pytest.raises(TypeError, match="name"):
        Variable(t, name=3)
    with pytest.raises(TypeError, match="owner"):
        Variable(t, owner="node")
    with pytest.raises(TypeError, match="index"):
        Variable(t, index="0")


def test_apply_sets_owner_and_index():
    x, y = t("x"), t("y")
    node = AddOp().make_node(x, y)
    out = node.outputs[0]
    assert out.owner is node and out.index == 0
    assert node.inputs == [x, y] and node.nin == 2 and node.nout == 1
    assert node.default_output() is out and node.out is out
    assert out.get_parents() == [node] and node.get_parents() == [x, y]


def test_apply_rejects_foreign_outputs_and_non_variables():
    x = t("x")
    out = AddOp()(x, x)
    with pytest.raises(ValueError, match="another owner"):
        Apply(AddOp(), [x], [out])
    with pytest.raises(TypeError, match="Variable"):
        Apply(AddOp(), [1], [t()])
    with pytest.raises(TypeError):
        Apply(AddOp(), x, [t()])


def test_variable_str_of_outputs():
    x = t("x")
    assert str(AddOp()(x, x)) == "AddOp.0"
    a, b = TwoOut()(x)
    assert (str(a), str(b)) == ("TwoOut.0", "TwoOut.1")
    with pytest.raises(ValueError, match="default_output"):
        a.owner.default_output()


def test_apply_records_user_trace():
    node = AddOp().make_node(t("x"), t("y"))
    trace = node.tag.trace
    assert trace and trace[0][0] == __file__


def test_variable_clone_copies_name_and_tag_not_owner():
    x = t("x")
    out = AddOp()(x, x)
    out.tag.note = "hello"
    c = out.clone()
    assert c is not out and c.owner is None and c.index is None
    assert c.type == out.type and c.tag.note == "hello"
    out.name = "o"
    assert out.clone().name == "o" and out.clone(name="p").name == "p"


def test_apply_clone_and_clone_with_new_inputs():
    x, y, z = t("x"), t("y"), t("z")
    node = AddOp().make_node(x, y)
    c = node.clone()
    assert c.op == node.op and c.inputs == node.inputs and c.outputs[0] is not node.outputs[0]
    n2 = node.clone_with_new_inputs([x, z])
    assert n2.inputs == [x, z] and n2.outputs[0].owner is n2
    with pytest.raises(ValueError, match="takes 2 inputs"):
        node.clone_with_new_inputs([x])
    # strict=False remakes the node, so the output type follows the new inputs
    u = MyType("u")("u")
    n3 = node.clone_with_new_inputs([u, u], strict=False)
    assert n3.outputs[0].type == MyType("u")
    with pytest.raises(TypeError, match="Cannot convert"):
        node.clone_with_new_inputs([u, u], strict=True)


def test_constant_data_is_filtered():
    c = Constant(t, 3.0)
    assert c.data == 3 and isinstance(c.data, int)
    assert c.value == 3 and c.get_test_value() == 3
    with pytest.raises(TypeError):
        Constant(t, "three")


def test_constant_cannot_have_an_owner():
    c = Constant(t, 1)
    assert c.owner is None
    with pytest.raises(ValueError, match="cannot have an owner"):
        c.owner = AddOp().make_node(t(), t())
    with pytest.raises(ValueError):
        Apply(AddOp(), [t()], [Constant(t, 1)])


def test_constant_array_data_is_read_only_but_callers_array_is_untouched():
    ttype = TensorType("float64", (None,))
    a = np.ones(3)
    c = Constant(ttype, a)
    assert not c.data.flags.writeable
    with pytest.raises(ValueError):
        c.data[0] = 5.0
    assert a.flags.writeable  # the user's own array keeps its flags
    assert np.shares_memory(a, c.data)  # no copy was made


def test_constant_clone_is_the_constant_itself():
    ttype = TensorType("float64", (None,))
    c = Constant(ttype, np.arange(3.0), name="c")
    assert c.clone() is c
    x = ttype("x")
    ins, outs = clone([c, x], [c])
    assert ins[0] is c and outs[0] is c and ins[1] is not x


def test_constant_equals_and_signature():
    ttype = TensorType("float64", (None,))
    a = Constant(ttype, np.array([1.0, np.nan]))
    b = Constant(ttype, np.array([1.0, np.nan]))
    c = Constant(ttype, np.array([1.0, 2.0]))
    d = Constant(TensorType("float32", (None,)), np.array([1.0, np.nan], dtype="float32"))
    assert a.equals(b) and b.equals(a)
    assert hash(a.signature()) == hash(b.signature())
    assert not a.equals(c) and not a.equals(d)
    assert not a.equals(Variable(ttype))
    assert Constant(t, 2).equals(Constant(t, 2)) and not Constant(t, 2).equals(Constant(t, 3))


def test_constant_str_is_truncated():
    assert str(Constant(t, 5)) == "Constant{5}"
    long = Constant(Generic_like(), "x" * 40)
    assert str(long) == "Constant{" + "x" * 10 + "..." + "x" * 10 + "}"
    assert str(Constant(t, 5, name="five")) == "five"


class Generic_like(Type):
    def filter(self, data, strict=False, allow_downcast=None):
        return data


def test_variables_compare_by_identity():
    x, y = t("x"), t("x")
    assert x != y and x == x
    assert len({x, y}) == 2


def test_tag_test_value_is_filtered():
    x = t("x")
    x.tag.test_value = 2.0
    assert x.tag.test_value == 2
    with pytest.raises(TypeError):
        x.tag.test_value = "nope"


def test_variable_pickles():
    x, y = t("x"), t("y")
    out = AddOp()(x, y)
    out2 = pickle.loads(pickle.dumps(out))
    assert out2.owner.op == AddOp() and [i.name for i in out2.owner.inputs] == ["x", "y"]


def test_graph_inputs_and_clone_reexported():
    x, y = t("x"), t("y")
    out = AddOp()(AddOp()(x, y), x)
    assert graph_inputs([out]) == [x, y]
    (x2, y2), (out2,) = clone([x, y], [out])
    assert x2 is not x and graph_inputs([out2]) == [x2, y2]


def test_default_output_of_op_and_return_list():
    class Second(TwoOut):
        default_output = 1

    x = t("x")
    out = Second()(x)
    assert out.index == 1 and str(out) == "Second.out"
    assert len(Second()(x, return_list=True)) == 2
    assert isinstance(TwoOut()(x), list)


def test_op_call_names_outputs():
    x = t("x")
    assert AddOp()(x, x, name="s").name == "s"
    a, b = TwoOut()(x, name="p")
    assert (a.name, b.name) == ("p_0", "p_1")


# --- rich display in notebooks --------------------------------------------------------

needs_dot = pytest.mark.skipif(
    __import__("shutil").which("dot") is None, reason="the Graphviz 'dot' program is not installed"
)


@needs_dot
def test_variable_repr_html_draws_its_graph():
    import lucent.tensor as lt

    x = lt.dvector("x")
    y = lt.exp(x) * 2
    page = y._repr_html_()
    assert "<svg" in page
    assert ">Exp<" in page and ">Mul<" in page and ">x<" in page
    assert "float64 (?,)" in page
    assert repr(y) == str(y)  # the text repr is unchanged


def test_variable_repr_html_falls_back_to_dprint_without_dot(monkeypatch, tmp_path):
    import lucent.tensor as lt

    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("LUCENT_GRAPHVIZ", "none")  # nor the bundled layout program
    y = lt.exp(lt.dvector("x"))
    page = y._repr_html_()
    assert "<svg" not in page and "<pre>" in page and "Exp [id A]" in page


# --- node kinds: atomic, nominal and frozen ----------------------------------------------
from lucent.graph.basic import (  # noqa: E402
    AbstractApply,
    AtomicVariable,
    FrozenApply,
    NominalVariable,
    as_string,
    clone_get_equiv,
)


def test_nominal_variables_are_interned_by_id_and_type():
    t1 = MyType("a")
    n = NominalVariable(0, t1)
    assert n is NominalVariable(0, MyType("a"))
    assert n is not NominalVariable(1, t1) and n is not NominalVariable(0, MyType("b"))
    assert isinstance(n, AtomicVariable) and n.owner is None and n.index is None
    assert n.signature() == (t1, 0) and n.equals(NominalVariable(0, t1))
    assert pickle.loads(pickle.dumps(n)) is n and n.clone() is n
    assert repr(NominalVariable(2, t1)) == f"NominalVariable(2, {t1!r})"
    with pytest.raises(ValueError):
        n.owner = AddOp().make_node(MyType()(), MyType()())


def test_nominal_variable_is_also_of_the_types_variable_class():
    from lucent.tensor.variable import TensorVariable

    tt = TensorType("float64", (None, 3))
    n = NominalVariable(0, tt)
    assert isinstance(n, TensorVariable) and n.ndim == 2 and n.type.shape == (None, 3)
    assert type(NominalVariable(1, tt)) is type(n)  # one class per variable class


def test_frozen_apply_is_interned_and_read_only():
    t1 = MyType()
    a, b = NominalVariable(0, t1), NominalVariable(1, t1)
    op = AddOp()
    fa = FrozenApply(op, (a, b), (t1,))
    assert fa is FrozenApply(op, (a, b), (t1,))
    assert fa is not FrozenApply(op, (b, a), (t1,))
    assert fa is not FrozenApply(op, (a, b), (t1,), topo_idx=3)
    assert isinstance(fa, AbstractApply) and not isinstance(fa, Apply)
    assert isinstance(fa.inputs, tuple) and fa.outputs[0].owner is fa
    assert not hasattr(fa, "clone_with_new_inputs")
    # equal constants make the same node
    c1, c2 = Constant(t1, 3), Constant(t1, 3)
    assert FrozenApply(op, (a, c1), (t1,)) is FrozenApply(op, (a, c2), (t1,))
    with pytest.raises(TypeError, match="Variables"):
        FrozenApply(op, (a, 3), (t1,))


def test_frozen_apply_round_trips_through_pickle():
    t1 = MyType()
    a = NominalVariable(0, t1)
    fa = FrozenApply(AddOp(), (a, a), (t1,))
    out = pickle.loads(pickle.dumps(fa.outputs[0]))
    assert out is fa.outputs[0]


def test_as_string_marks_shared_nodes():
    x, y = MyType()("x"), MyType()("y")
    s = AddOp()(x, y)
    twice = AddOp()(s, s)
    assert as_string([x, y], [twice]) == ["AddOp(*1 -> AddOp(x, y), *1)"]
    assert as_string([s], [twice]) == [f"AddOp({s}, {s})"]
    assert as_string([x, y], [s], leaf_formatter=lambda v: v.name.upper()) == ["AddOp(X, Y)"]


def test_apply_dprint_is_debugprint():
    from lucent.printing import debugprint

    x, y = MyType()("x"), MyType()("y")
    out = AddOp()(x, y)
    assert out.owner.dprint(file="str") == debugprint(out.owner, file="str")


def test_clone_get_equiv_memo_skips_replaced_nodes():
    x, y, z = MyType()("x"), MyType()("y"), MyType()("z")
    s = AddOp()(x, y)
    out = AddOp()(s, x)
    memo = {s: z}
    assert clone_get_equiv([x, y], [out], False, False, memo=memo) is memo
    assert s.owner not in memo and memo[out].owner.inputs == [z, x]


def test_clone_with_new_inputs_remakes_for_narrower_types():
    import lucent.tensor as lt

    x = lt.tensor(dtype="float64", shape=(None,))
    x1 = lt.tensor(dtype="float64", shape=(1,))
    y = lt.tensor(dtype="float64", shape=(1,))
    node = lt.add(x, y).owner.clone_with_new_inputs([x1, y])
    assert node.outputs[0].type.shape == (1,)
    # a wider input is narrowed under strict=True: no information is lost
    node = lt.add(x1, y).owner.clone_with_new_inputs([x, y], strict=True)
    assert node.outputs[0].type.shape == (1,) and node.inputs[0].type.shape == (1,)


def test_eval_with_names_and_keywords():
    import warnings

    import lucent.tensor as lt

    x, y = lt.dscalars("x", "y")
    w = 2 * (x + y)
    assert w.eval({"x": 1.0, y: 2.0}) == 6.0
    assert w.eval({w.owner.inputs[1]: 3.0}) == 6.0  # an intermediate variable as input
    assert (x + 1).eval({"x": 1.0, "y": 2.0}, on_unused_input="ignore") == 2.0
    with pytest.raises(ValueError, match="o not found in graph"):
        w.eval({"o": 1.0})
    e = lt.dscalar("e")
    t = e + 1
    t.name = "e"
    with pytest.raises(ValueError, match="Found multiple variables with name e"):
        t.eval({"e": 1.0})
    with pytest.raises(TypeError, match="Variables or their names"):
        w.eval({3: 1.0})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert w.eval({x: 1.0}, givens={y: lt.constant(2.0, dtype="float64")}) == 6.0
    assert any("cache key" in str(m.message) for m in caught)
    assert w.eval({x: 1.0}, givens=((y, lt.constant(2.0, dtype="float64")),)) == 6.0
    assert hasattr(w, "_fn_cache")
    assert not hasattr(pickle.loads(pickle.dumps(w)), "_fn_cache")


def test_owner_op_helpers():
    x, y = MyType()("x"), MyType()("y")
    out = AddOp()(x, y)
    assert out.owner_op == AddOp() and x.owner_op is None
    assert out.owner_op_and_inputs == (AddOp(), x, y) and x.owner_op_and_inputs == (None,)
