"""Function and FunctionMaker: calls, updates, aliasing, failure atomicity, copy, pickle."""

import pickle

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent import In, Out, function, shared
from lucent.compile.function_module import Function, FunctionMaker, UnusedInputError
from lucent.graph.basic import Apply
from lucent.graph.fg import FunctionGraph
from lucent.graph.op import Op

# Compiles with the default mode: run each test on both paths.
pytestmark = pytest.mark.both_modes


class FailIfNegative(Op):
    """Returns its input + 1, but raises on negative values (to test failing calls)."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        if np.any(x < 0):
            raise ValueError("negative value")
        output_storage[0][0] = x + 1


fail_if_negative = FailIfNegative()


def test_maker_attributes():
    x = lt.dvector("x")
    f = function([x], x * 2, name="double")
    assert isinstance(f, Function)
    assert isinstance(f.maker, FunctionMaker)
    assert isinstance(f.maker.fgraph, FunctionGraph)
    assert f.name == "double"
    assert f.trust_input is False
    assert "double" in repr(f)


def test_bad_input_names_input_and_type():
    x = lt.dvector("x")
    f = function([x], x * 2)
    with pytest.raises(TypeError) as info:
        f(np.zeros((2, 2)))
    msg = str(info.value)
    assert '"x"' in msg and "index 0" in msg and "float64" in msg and "dimensions" in msg
    y = lt.dvector()
    g = function([y], y * 2)
    with pytest.raises(TypeError, match="index 0"):
        g(np.zeros((2, 2)))


def test_allow_input_downcast():
    x = lt.fvector("x")
    f = function([x], x * 2)
    with pytest.raises(TypeError):
        f(np.array([1.0, 2.0]))
    g = function([x], x * 2, allow_input_downcast=True)
    assert g(np.array([1.0, 2.0])).dtype == np.float32


def test_too_many_arguments():
    x = lt.dscalar("x")
    f = function([x], x * 2)
    with pytest.raises(TypeError, match="Too many arguments"):
        f(1, 2)


def test_argument_given_twice():
    x = lt.dscalar("x")
    f = function([x], x * 2)
    with pytest.raises(TypeError, match="several values"):
        f(1, x=2)


def test_unused_input_modes():
    x, y = lt.dscalars("x", "y")
    with pytest.raises(UnusedInputError, match="y"):
        function([x, y], x * 2)
    with pytest.warns(UserWarning):
        function([x, y], x * 2, on_unused_input="warn")
    assert function([x, y], x * 2, on_unused_input="ignore")(1, 5) == 2
    with lucent.config.change_flags(on_unused_input="ignore"):
        function([x, y], x * 2)


def test_updates_dict_and_pairs():
    s = shared(np.float64(0.0), name="s")
    x = lt.dscalar("x")
    f = function([x], s, updates={s: s + x})
    assert f(2) == 0.0  # outputs use the old value
    assert s.get_value() == 2.0
    g = function([x], [], updates=[(s, s * x)])
    g(3)
    assert s.get_value() == 6.0


def test_update_type_mismatch_names_shared_variable():
    s = shared(np.zeros(3), name="weights")
    x = lt.dmatrix("x")
    with pytest.raises(TypeError, match="weights"):
        function([x], [], updates={s: x})
    f32 = lt.fvector("f")
    with pytest.raises(TypeError, match="same type"):
        function([f32], [], updates={s: f32})
    with pytest.raises(TypeError, match="shared variable"):
        function([x], [], updates={x: x})


def test_update_with_constant_value():
    s = shared(np.zeros(2))
    f = function([], [], updates={s: np.ones(2)})
    f()
    np.testing.assert_array_equal(s.get_value(), [1, 1])


def test_outputs_computed_before_updates():
    a = shared(np.float64(1.0), name="a")
    b = shared(np.float64(10.0), name="b")
    f = function([], [a, b], updates=[(a, b), (b, a)])
    assert f() == [1.0, 10.0]
    assert a.get_value() == 10.0 and b.get_value() == 1.0
    f()
    assert a.get_value() == 1.0 and b.get_value() == 10.0


def test_default_update_and_no_default_updates():
    s = shared(np.float64(0.0), name="s")
    s.default_update = s + 1
    f = function([], s * 1)
    f()
    f()
    assert s.get_value() == 2.0
    g = function([], s * 1, no_default_updates=True)
    g()
    assert s.get_value() == 2.0
    h = function([], s * 1, no_default_updates=[s])
    h()
    assert s.get_value() == 2.0
    k = function([], s * 1, updates={s: s + 10})  # explicit update wins
    k()
    assert s.get_value() == 12.0


def test_givens():
    x = lt.dscalar("x")
    y = lt.dscalar("y")
    s = shared(np.float64(5.0))
    f = function([y], x * 2, givens={x: y + 1})
    assert f(1.0) == 4.0
    g = function([], x * 2, givens=[(x, s)])
    assert g() == 10.0
    with pytest.raises(TypeError, match="type"):
        function([y], x * 2, givens={x: lt.dvector("v")})


def test_shared_variable_as_explicit_input_is_error():
    s = shared(np.float64(5.0), name="s")
    with pytest.raises(TypeError, match="explicit input"):
        function([s], s * 2)


def test_failing_call_leaves_state_unchanged():
    s = shared(np.array([1.0, 2.0]), name="s")
    x = lt.dvector("x")
    w = lt.dvector("w")
    f = function(
        [x, In(w, value=np.array([5.0, 5.0]), update=w + 1)],
        fail_if_negative(x),
        updates={s: s + x},
    )
    f(np.array([1.0, 1.0]))
    np.testing.assert_array_equal(s.get_value(), [2.0, 3.0])
    np.testing.assert_array_equal(f["w"], [6.0, 6.0])
    with pytest.raises(ValueError, match="negative"):
        f(np.array([-1.0, 1.0]), np.array([100.0, 100.0]))
    np.testing.assert_array_equal(s.get_value(), [2.0, 3.0])
    np.testing.assert_array_equal(f["w"], [6.0, 6.0])
    # A bad argument (filtered before anything runs) changes nothing either.
    with pytest.raises(TypeError):
        f(np.array([1.0, 1.0]), np.zeros((2, 2)))
    np.testing.assert_array_equal(f["w"], [6.0, 6.0])
    np.testing.assert_array_equal(s.get_value(), [2.0, 3.0])


def test_failing_node_is_annotated():
    x = lt.dvector("x")
    f = function([x], fail_if_negative(x))
    with pytest.raises(ValueError) as info:
        f(np.array([-1.0]))
    assert any("FailIfNegative" in n for n in getattr(info.value, "__notes__", []))


def test_outputs_do_not_alias_inputs_or_each_other():
    x = lt.dvector("x")
    data = np.array([1.0, 2.0])
    f = function([x], x)
    out = f(data)
    assert not np.may_share_memory(out, data)
    g = function([x], [x * 2, x * 2])
    y = x * 2
    h = function([x], [y, y])
    a, b = h(data)
    assert not np.may_share_memory(a, b)
    a, b = g(data)
    assert not np.may_share_memory(a, b)


def test_non_borrowed_output_not_clobbered_by_next_call():
    x = lt.dvector("x")
    f = function([x], x * 2)
    first = f(np.array([1.0, 2.0]))
    f(np.array([10.0, 20.0]))
    np.testing.assert_array_equal(first, [2.0, 4.0])


def test_shared_output_is_copied():
    s = shared(np.array([1.0, 2.0]))
    f = function([], s)
    out = f()
    out[0] = 100
    assert s.get_value()[0] == 1.0


def test_update_does_not_alias_input():
    s = shared(np.zeros(2))
    x = lt.dvector("x")
    f = function([x], [], updates={s: x})
    data = np.array([1.0, 2.0])
    f(data)
    data[0] = 50
    np.testing.assert_array_equal(s.get_value(), [1.0, 2.0])


def test_output_subset():
    x = lt.dscalar("x")
    f = function([x], [x * 2, x * 3])
    assert f(1.0, output_subset=[1]) == [3.0]


def test_trust_input():
    x = lt.dvector("x")
    f = function([x], x * 2, trust_input=True)
    assert f.trust_input
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [2.0, 4.0])


def test_copy_shares_shared_variables():
    s = shared(np.float64(0.0), name="s")
    x = lt.dscalar("x")
    f = function([x], s, updates={s: s + x}, name="acc")
    g = f.copy()
    assert g.name == "acc copy"
    # A shared variable is shared with the copy too (PyTensor's rule): swap it
    # to give the copy state of its own.
    g(5)
    assert s.get_value() == 5.0
    assert g.value[s] == 5.0 and f.value[s] == 5.0
    h = f.copy(share_memory=True, name="h")
    h(2)
    assert s.get_value() == 7.0
    assert h.name == "h"
    k = f.copy(delete_updates=True)
    k(100)
    assert s.get_value() == 7.0


def test_copy_swap():
    s = shared(np.float64(1.0), name="s")
    t = shared(np.float64(7.0), name="t")
    x = lt.dscalar("x")
    f = function([x], s * x, updates={s: s + 1})
    g = f.copy(swap={s: t})
    assert g(2.0) == 14.0
    assert t.get_value() == 8.0 and s.get_value() == 1.0
    bad = shared(np.zeros(2))
    with pytest.raises(TypeError, match="same type"):
        f.copy(swap={s: bad})


def test_pickle_function():
    s = shared(np.float64(1.0), name="s")
    x = lt.dscalar("x")
    y = lt.dscalar("y")
    f = function([x, In(y, value=10.0)], s + x + y, updates={s: s + 1})
    f(0)
    f["y"] = 20.0
    g = pickle.loads(pickle.dumps(f))
    assert g(1.0) == 2.0 + 1.0 + 20.0  # current s and current default of y
    assert s.get_value() == 2.0  # the original shared variable is untouched
    assert g.value["s"] == 3.0
    assert f(0) == 2.0 + 20.0


def test_pickle_function_with_shared_variable_together():
    s = shared(np.float64(1.0), name="s")
    f = function([], s * 2, updates={s: s + 1})
    s2, f2 = pickle.loads(pickle.dumps((s, f)))
    f2()
    assert s2.get_value() == 2.0
    assert s.get_value() == 1.0


def test_fn_getitem_setitem_and_unknown_key():
    x = lt.dscalar("x")
    y = lt.dscalar("y")
    f = function([x, In(y, value=2.0)], x * y)
    assert f["y"] == 2.0
    f["y"] = 3.0
    assert f(2.0) == 6.0
    with pytest.raises(KeyError):
        f["nope"]
    assert "y" in f.value


def test_get_shared():
    s = shared(np.float64(1.0))
    f = function([], s * 2)
    assert f.get_shared() == [s]


# --- rich display in notebooks --------------------------------------------------------

@pytest.mark.skipif(__import__("shutil").which("dot") is None, reason="the Graphviz 'dot' program is not installed")
def test_repr_html_draws_the_rewritten_graph_under_a_header():
    x = lt.dvector("x")
    w = shared(np.ones(3), name="w")
    fn = function([x], lt.exp(x).sum(), updates=[(w, w * 2)], name="step")
    page = fn._repr_html_()
    assert "<svg" in page
    assert "Function &#x27;step&#x27;" in page
    assert "x: float64 (?,)" in page and "Updates" in page and ">update w<" in page
    assert fn.maker.mode.name in page and "nodes after rewriting" in page
    assert repr(fn).startswith("<Function 'step'(x)")  # the text repr is unchanged


def test_repr_html_falls_back_to_dprint_without_dot(monkeypatch, tmp_path):
    x = lt.dvector("x")
    fn = function([x], lt.exp(x), name="step")
    monkeypatch.setenv("LUCENT_GRAPHVIZ", "none")
    page = fn._repr_html_()
    assert "<svg" not in page and "<pre>" in page and "Inputs" in page
    assert "LUCENT_GRAPHVIZ=none" in page


def test_finder_looks_up_containers_by_position_variable_and_name():
    x, s = lt.dscalars("x", "s")
    a = lt.dscalar()
    f = function([x, In(a, name="a"), In(s, value=1.0, update=s + x)], s + a * x)
    for key in (0, x, "x"):
        assert f._finder[key] is f.input_storage[0]
    assert f._finder["a"] is f._finder[a] is f.input_storage[1]
    assert f._finder[s].value == 1.0
    f(2.0, 3.0)
    assert f._finder[s].value == 3.0
    assert f._inv_finder[id(f._finder[s])].variable is s


def test_vm_keeps_values_until_free_when_gc_is_off():
    x = lt.dvector("x")
    f = function([x], lt.exp(x) + 1)
    assert f.vm is f.fn and f.vm.allow_gc is True
    f.vm.allow_gc = False
    out = f(np.ones(2))
    np.testing.assert_allclose(out, np.e + 1)
    kept = [cell[0] for var, cell in f.vm.storage_map.items() if not isinstance(var, lucent.graph.basic.Constant)]
    assert any(v is not None for v in kept)
    f.free()
    assert all(
        cell[0] is None
        for var, cell in f.vm.storage_map.items()
        if not isinstance(var, lucent.graph.basic.Constant)
    )
    np.testing.assert_allclose(f(np.zeros(2)), [2.0, 2.0])


def test_mutable_inputs_that_could_alias_are_grouped_and_copied():
    x1 = lt.dvector("x1")
    x2 = lt.vector("x2", shape=(3,), dtype="float64")
    x3 = lt.vector("x3", shape=(1,), dtype="float64")
    f = function([In(x1, mutable=True), In(x2, mutable=True)], [x1 + 1, x2 + 2])
    assert f._potential_aliased_input_groups == ((0, 1),)
    g = function([In(x2, mutable=True), In(x3, mutable=True)], [x2 + 2, x3 + 3])
    assert g._potential_aliased_input_groups == ()
    h = function([x1, x2], [x1 + 1, x2 + 2])  # not borrowed: the caller's arrays are never written
    assert h._potential_aliased_input_groups == ()
    base = np.zeros(3)
    r1, r2 = f(base, base)
    np.testing.assert_allclose(r1, 1.0)
    np.testing.assert_allclose(r2, 2.0)


def test_dprint_is_debugprint_of_the_function():
    x = lt.dscalar("x")
    f = function([x], x + 1)
    assert f.dprint(file="str") == lucent.printing.debugprint(f, file="str")


def test_unused_input_is_reported_before_a_missing_one():
    x, s = lt.dscalars("x", "s")
    with pytest.raises(UnusedInputError):
        function([s], x)
    with pytest.raises(lucent.graph.utils.MissingInputError):
        function([s], x, on_unused_input="ignore")
    with pytest.raises(UnusedInputError, match="used twice in inputs"):
        function([x, x], x)


def test_fgraph_carries_the_function_name():
    x = lt.dscalar("x")
    assert function([x], x * 2, name="double").maker.fgraph.name == "double"


@pytest.mark.not_debugmode(
    reason="DebugMode runs every node on copies of its inputs, so a borrowed output is never "
    "a view of the caller's array"
)
def test_borrowed_output_never_hands_back_an_argument():
    a = lt.dmatrix("a")
    aval = np.random.default_rng(0).random((3, 3))
    f = function([In(a, borrow=False)], Out(a[0, :], borrow=True))
    out = f(aval)
    np.testing.assert_allclose(out, aval[0])
    assert not np.may_share_memory(out, aval)
    g = function([In(a, borrow=True)], Out(a[0, :], borrow=True))
    assert np.may_share_memory(g(aval), aval)


def test_swapping_shared_values_copies_nothing():
    A = shared(np.zeros((2, 2)) + 0.5)
    B = shared(np.zeros((2, 2)) - 0.5)
    data_a, data_b = A.container.storage[0], B.container.storage[0]
    f = function([], [], updates=[(A, B), (B, A)])
    f()
    assert np.all(A.get_value() == -0.5) and np.all(B.get_value() == 0.5)
    assert A.container.storage[0] is data_b and B.container.storage[0] is data_a
    g = function([], [], updates=[(A, B.T)])  # B keeps its buffer: A needs a copy
    g()
    assert not np.may_share_memory(A.container.storage[0], B.container.storage[0])
