import pytest

from lucent.graph.destroyhandler import DestroyHandler
from lucent.graph.fg import FunctionGraph, InconsistencyError
from lucent.graph.rewriting.basic import replace_validated
from tests.graph.rewriting.toy import add, exp, neg, neg_inplace, vec, view


def _fg(inputs, outputs, destroyable=()):
    fg = FunctionGraph(inputs, outputs, clone=False)
    fg.destroyable_inputs = set(destroyable)
    fg.attach_feature(DestroyHandler())
    return fg


def test_destroying_a_protected_input_is_rejected():
    x = vec("x")
    fg = _fg([x], [neg_inplace(x)])
    with pytest.raises(InconsistencyError, match="indestructible"):
        fg.validate()


def test_destroying_a_destroyable_input_is_allowed():
    x = vec("x")
    fg = _fg([x], [neg_inplace(x)], destroyable=[x])
    assert fg.validate()


def test_intermediate_destroyed_after_its_other_readers():
    x = vec("x")
    e = exp(x)
    out1 = neg_inplace(e)
    out2 = add(e, x)
    fg = _fg([x], [out1, out2])
    fg.validate()
    order = fg.toposort()
    assert order.index(out2.owner) < order.index(out1.owner)


def test_reader_that_depends_on_destroyer_makes_a_cycle():
    x = vec("x")
    e = exp(x)
    d = neg_inplace(e)
    late = add(e, d)  # reads e after it was overwritten: impossible
    fg = _fg([x], [late])
    with pytest.raises(InconsistencyError, match="cycle"):
        fg.validate()


def test_two_destroyers_of_one_value():
    x = vec("x")
    e = exp(x)
    fg = _fg([x], [add(neg_inplace(e), neg_inplace(view(e)))])
    with pytest.raises(InconsistencyError, match="Multiple destroyers"):
        fg.validate()


def test_destroying_a_view_of_an_output():
    x = vec("x")
    e = exp(x)
    fg = _fg([x], [e, neg_inplace(view(e))])
    with pytest.raises(InconsistencyError, match="output"):
        fg.validate()


def test_replace_validated_reverts_on_inconsistency():
    x = vec("x")
    e = neg(x)
    fg = _fg([x], [exp(e)])
    with pytest.raises(InconsistencyError):
        replace_validated(fg, [(e, neg_inplace(x))], reason="test")
    assert fg.outputs[0].owner.inputs[0] is e
    fg.check_integrity()


def test_views_are_followed_after_the_graph_changes():
    """The handler keeps the view roots between validations; a replacement must renew them."""
    x, y = vec("x"), vec("y")
    v = view(exp(x))
    out = neg_inplace(v)
    fg = _fg([x, y], [out, add(x, y)], destroyable=[x, y])
    fg.validate()
    root = v.owner.inputs[0]
    assert fg.destroyers(root) == [out.owner]
    fg.replace(root, y, reason="test")  # the view is now of y: the destroyer overwrites y
    assert fg.destroyers(root) == []
    assert fg.destroyers(y) == [out.owner]
    reader = fg.outputs[1].owner
    fg.validate()
    order = fg.toposort()  # add(x, y) reads y: it must run before y is overwritten
    assert order.index(reader) < order.index(out.owner)


def test_a_reader_added_later_is_scheduled_before_the_destroyer():
    """The handler's orderings are computed once per version of the graph: a new node renews them."""
    x = vec("x")
    e = exp(x)
    out = neg_inplace(e)
    fg = _fg([x], [out])
    fg.validate()
    assert fg.destroy_handler.orderings(fg) == {}
    reader = add(e, x)
    fg.add_output(reader)  # imports a node that reads e, which out overwrites
    assert fg.destroy_handler.orderings(fg) == {out.owner: [reader.owner]}
    order = fg.toposort()
    assert order.index(reader.owner) < order.index(out.owner)
    fg.validate()
