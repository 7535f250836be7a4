"""In-place support in ``function``: destroyable inputs, in-place shared updates,
``accept_inplace``, and the rule that a call that raises changes no shared variable."""

import numpy as np
import pytest

import lucent
import lucent.scalar.basic as ps
import lucent.tensor as lt
from lucent import In
from lucent.compile.function_module import SharedUpdateGuard
from lucent.graph.fg import InconsistencyError
from lucent.tensor.elemwise import Elemwise


def _update_node(fn, shared_var):
    """The node computing the update of ``shared_var`` in ``fn``'s graph."""
    maker = fn.maker
    for out_idx, k in maker.fgraph.update_mapping.items():
        if maker.inputs[k].variable is shared_var:
            return maker.fgraph.outputs[out_idx].owner
    raise KeyError(shared_var)


def _logistic_step(mode, W0, lr=0.1):
    X, y = lt.dmatrix("X"), lt.dvector("y")
    W = lucent.shared(W0.copy(), name="W")
    b = lucent.shared(np.float64(0.0), name="b")
    p = lt.sigmoid(lt.dot(X, W) + b)
    cost = -(y * lt.log(p) + (1 - y) * lt.log(1 - p)).mean() + 0.01 * (W ** 2).sum()
    gW, gb = lucent.grad(cost, [W, b])
    fn = lucent.function([X, y], cost, updates=[(W, W - lr * gW), (b, b - lr * gb)], mode=mode)
    return fn, W, b


def test_logistic_regression_update_is_in_place():
    rng = np.random.default_rng(0)
    W0 = rng.normal(size=50) * 0.1
    X = rng.normal(size=(200, 50))
    y = (rng.random(200) > 0.5).astype("float64")
    fast, W, b = _logistic_step("FAST_RUN", W0)
    slow, W_ref, b_ref = _logistic_step("FAST_COMPILE", W0)

    node = _update_node(fast, W)
    assert node.op.destroy_map
    (destroyed,) = [node.inputs[ins[0]] for ins in node.op.destroy_map.values()]
    assert destroyed is fast.maker.fgraph.inputs[[i.variable for i in fast.maker.inputs].index(W)]

    buffer_id = id(W.get_value(borrow=True))
    for _ in range(3):
        c_fast = fast(X, y)
        c_slow = slow(X, y)
        assert id(W.get_value(borrow=True)) == buffer_id
        np.testing.assert_allclose(c_fast, c_slow, rtol=1e-12)
        np.testing.assert_allclose(W.get_value(), W_ref.get_value(), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(b.get_value(), b_ref.get_value(), rtol=1e-12, atol=1e-15)


def test_writers_run_after_every_other_node():
    W = lucent.shared(np.ones((3, 3)), name="W")
    x = lt.dmatrix("x")
    fn = lucent.function([x], (lt.dot(x, W) * 2).sum(), updates=[(W, W * 0.5 + 1)], mode="FAST_RUN")
    writers = fn.maker.fgraph.shared_buffer_writers()
    assert list(writers.values()) == [fn.maker.fgraph.inputs[1]]
    order = fn.maker.fgraph.toposort()
    assert order[-1] in writers
    fn(np.eye(3))
    np.testing.assert_array_equal(W.get_value(), np.full((3, 3), 1.5))


def test_failing_call_leaves_shared_unchanged_with_inplace_update():
    # Without the orderings, W's update (listed first) would run - and write
    # W's buffer - before a + c, which V's update needs, fails.
    W = lucent.shared(np.arange(6.0).reshape(2, 3), name="W")
    V = lucent.shared(np.zeros(3), name="V")
    a, c = lt.dvector("a"), lt.dvector("c")
    fn = lucent.function(
        [a, c], [], updates=[(W, W * 2 + 1), (V, V + (a + c).sum())], mode="FAST_RUN"
    )
    assert _update_node(fn, W).op.destroy_map  # the update is computed in place
    before = W.get_value().copy()
    with pytest.raises(ValueError):
        fn(np.ones(3), np.ones(4))  # a + c fails
    np.testing.assert_array_equal(W.get_value(), before)
    np.testing.assert_array_equal(V.get_value(), 0.0)
    fn(np.ones(3), np.ones(3))
    np.testing.assert_array_equal(W.get_value(), before * 2 + 1)
    np.testing.assert_array_equal(V.get_value(), 6.0)


def test_second_writer_failing_its_shape_check_leaves_both_unchanged():
    W = lucent.shared(np.ones((2, 2)), name="W")
    V = lucent.shared(np.ones((2, 2)), name="V")
    g1, g2 = lt.dmatrix("g1"), lt.dmatrix("g2")
    fn = lucent.function([g1, g2], [], updates=[(W, W - g1), (V, V + g2)], mode="FAST_RUN")
    assert _update_node(fn, W).op.destroy_map and _update_node(fn, V).op.destroy_map
    for bad in [(np.ones((3, 3)), np.ones((2, 2))), (np.ones((2, 2)), np.ones((3, 3)))]:
        with pytest.raises(ValueError):
            fn(*bad)
        np.testing.assert_array_equal(W.get_value(), 1.0)
        np.testing.assert_array_equal(V.get_value(), 1.0)
    fn(np.ones((2, 2)), np.ones((2, 2)))
    np.testing.assert_array_equal(W.get_value(), 0.0)
    np.testing.assert_array_equal(V.get_value(), 2.0)


@pytest.mark.parametrize("mode", ["FAST_RUN", "PY"])
def test_shared_writer_shape_check_says_what_disagrees_on_both_paths(mode):
    """Both linkers stop before the first write with the same message, naming the op and inputs."""
    W = lucent.shared(np.ones((2, 2)), name="W")
    V = lucent.shared(np.ones((2, 2)), name="V")
    g1, g2 = lt.dmatrix("g1"), lt.dmatrix("g2")
    fn = lucent.function([g1, g2], [], updates=[(W, W - g1), (V, V + g2)], mode=mode)
    assert _update_node(fn, W).op.destroy_map and _update_node(fn, V).op.destroy_map
    with pytest.raises(ValueError, match=r"must have the same length.*stopped before changing any"):
        fn(np.ones((2, 2)), np.ones((2, 3)))
    np.testing.assert_array_equal(V.get_value(), 1.0)
    np.testing.assert_array_equal(W.get_value(), 1.0)


def test_shared_write_constraints_come_from_the_ops():
    from lucent.link.shared_writes import shared_write_constraints

    W = lucent.shared(np.ones((2, 2)), name="W")
    V = lucent.shared(np.ones(2), name="V")
    g1, g2 = lt.dmatrix("g1"), lt.dvector("g2")
    fn = lucent.function([g1, g2], [], updates=[(W, W - g1), (V, V + g2)], mode="FAST_RUN")
    fgraph = fn.maker.fgraph
    first, pairs = shared_write_constraints(fgraph, fgraph.toposort())
    assert first in (_update_node(fn, W), _update_node(fn, V))
    # Matrix writer: both dimensions of its two inputs; vector writer: one.
    assert sorted(len(x) for x in [[p for p in pairs if p[0] is _update_node(fn, W)],
                                   [p for p in pairs if p[0] is _update_node(fn, V)]]) == [1, 2]
    one = lucent.function([g1], [], updates=[(W, W - g1)], mode="FAST_RUN")
    assert shared_write_constraints(one.maker.fgraph, one.maker.fgraph.toposort()) is None


def test_writer_whose_result_is_read_elsewhere_is_not_in_place():
    W = lucent.shared(np.ones(4), name="W")
    new_W = W * 2
    fn = lucent.function([], new_W.sum() * 3, updates=[(W, new_W)], mode="FAST_RUN")
    assert not fn.maker.fgraph.shared_buffer_writers()
    assert fn() == 24.0
    np.testing.assert_array_equal(W.get_value(), 2.0)
    assert fn() == 48.0


def test_shared_without_update_is_protected():
    W = lucent.shared(np.ones(3), name="W")
    fn = lucent.function([], lt.exp(W) + 1, mode="FAST_RUN")
    assert not any(
        W_in in [n.inputs[i[0]] for i in n.op.destroy_map.values()]
        for n in fn.maker.fgraph.apply_nodes
        for W_in in fn.maker.fgraph.inputs
    )
    fn()
    np.testing.assert_array_equal(W.get_value(), 1.0)


def test_update_reading_another_shared_variable():
    W = lucent.shared(np.ones(3), name="W")
    V = lucent.shared(np.full(3, 2.0), name="V")
    fn = lucent.function([], [], updates=[(W, V * 3), (V, V + W)], mode="FAST_RUN")
    fn()
    np.testing.assert_array_equal(W.get_value(), 6.0)
    np.testing.assert_array_equal(V.get_value(), 3.0)
    assert not np.shares_memory(W.get_value(borrow=True), V.get_value(borrow=True))


def test_update_aliasing_another_input_is_still_copied():
    W = lucent.shared(np.ones(3), name="W")
    V = lucent.shared(np.full(3, 2.0), name="V")
    fn = lucent.function([], [], updates=[(W, V)], mode="FAST_RUN")
    fn()
    assert not np.shares_memory(W.get_value(borrow=True), V.get_value(borrow=True))


def test_returned_update_value_is_a_copy():
    W = lucent.shared(np.ones(3), name="W")
    new_W = W * 2 + 1
    fn = lucent.function([], new_W, updates=[(W, new_W)], mode="FAST_RUN")
    out = fn()
    assert not np.shares_memory(out, W.get_value(borrow=True))
    np.testing.assert_array_equal(out, 3.0)
    fn()
    np.testing.assert_array_equal(out, 3.0)
    np.testing.assert_array_equal(W.get_value(), 7.0)


def test_mutable_input_may_be_overwritten():
    x = lt.dmatrix("x")
    fn = lucent.function([In(x, mutable=True)], lt.exp(x) * 2, mode="FAST_RUN")
    (node,) = [n for n in fn.maker.fgraph.apply_nodes if isinstance(n.op, Elemwise)]
    assert node.op.destroy_map == {0: [0]}
    v = np.zeros((2, 2))
    out = fn(v)
    np.testing.assert_array_equal(out, 2.0)
    # Without mutable=True the argument is left alone.
    fn2 = lucent.function([x], lt.exp(x) * 2, mode="FAST_RUN")
    v2 = np.zeros((2, 2))
    fn2(v2)
    np.testing.assert_array_equal(v2, 0.0)


def _inplace_add(x, y):
    return Elemwise(ps.add, inplace_pattern={0: 0})(x, y)


def test_user_inplace_op_needs_accept_inplace():
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    with pytest.raises(TypeError, match=r"in-place operation Add.*accept_inplace=True"):
        lucent.function([x, y], _inplace_add(x, y))


def test_accept_inplace_with_mutable_input():
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    fn = lucent.function([In(x, mutable=True), y], _inplace_add(x, y), accept_inplace=True,
                         mode="FAST_COMPILE")
    a = np.ones((2, 2))
    out = fn(a, np.ones((2, 2)))
    np.testing.assert_array_equal(out, 2.0)
    np.testing.assert_array_equal(a, 2.0)  # the mutable argument was overwritten


def test_accept_inplace_gives_up_the_inputs_the_graph_destroys():
    # As in PyTensor: with accept_inplace=True, an input that an in-place op of
    # the user's graph overwrites is no longer protected, mutable or not.
    x, y = lt.dmatrix("x"), lt.dmatrix("y")
    fn = lucent.function([x, y], _inplace_add(x, y), accept_inplace=True, mode="FAST_COMPILE")
    a = np.ones((2, 2))
    np.testing.assert_array_equal(fn(a, np.ones((2, 2))), 2.0)
    np.testing.assert_array_equal(a, 2.0)
    # Two destroyers of one input are still refused.
    with pytest.raises(InconsistencyError):
        lucent.function([x, y], [_inplace_add(x, y), _inplace_add(x, 2 * y)], accept_inplace=True)


def test_guard_needs_destroy_handler():
    from lucent.graph.fg import FunctionGraph

    x = lt.dmatrix("x")
    fg = FunctionGraph([x], [lt.exp(x)], clone=False)
    with pytest.raises(ValueError, match="DestroyHandler"):
        SharedUpdateGuard().on_attach(fg)


def test_copied_and_pickled_functions_keep_working():
    import pickle

    W = lucent.shared(np.ones(3), name="W")
    fn = lucent.function([], [], updates=[(W, W * 2 + 1)], mode="FAST_RUN")
    fn()
    fn2 = pickle.loads(pickle.dumps(fn))
    fn2()
    np.testing.assert_array_equal(fn2.get_shared()[0].get_value(), 7.0)
    np.testing.assert_array_equal(W.get_value(), 3.0)
    fn3 = fn.copy()  # a copy shares the shared variable W (as in PyTensor)
    fn3()
    np.testing.assert_array_equal(W.get_value(), 7.0)


def test_every_shared_writer_check_gives_the_same_message_on_both_paths():
    """The compiled function checks all writers with one raise; the message is the failed check's."""
    W = lucent.shared(np.ones((2, 2)), name="W")
    V = lucent.shared(np.ones((2, 2)), name="V")
    g1, g2 = lt.dmatrix("g1"), lt.dmatrix("g2")
    fns = {m: lucent.function([g1, g2], [], updates=[(W, W - g1), (V, V + g2)], mode=m) for m in ("FAST_RUN", "PY")}
    for bad in [(np.ones((2, 3)), np.ones((2, 2))), (np.ones((3, 2)), np.ones((2, 2))),
                (np.ones((2, 2)), np.ones((3, 2))), (np.ones((2, 2)), np.ones((2, 3)))]:
        messages = {}
        for mode, fn in fns.items():
            with pytest.raises(ValueError) as info:
                fn(*bad)
            messages[mode] = str(info.value).split("\n")[0]
        assert messages["FAST_RUN"] == messages["PY"], messages
        np.testing.assert_array_equal(W.get_value(), 1.0)
        np.testing.assert_array_equal(V.get_value(), 1.0)
