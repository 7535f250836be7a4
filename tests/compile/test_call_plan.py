"""The call plan: what a call copies is decided from the graph when the function is made."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent import In, Out
from lucent.compile.call_plan import CallPlan, alias_root, aliasable_input_groups


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_output_that_is_an_input_is_copied(mode):
    x = lt.dvector("x")
    fn = lucent.function([x], [x, x * 2], mode=mode)
    assert fn.plan.copy_output[0]
    arg = np.arange(3.0)
    out = fn(arg)[0]
    assert not np.shares_memory(out, arg)
    out[0] = 99
    assert arg[0] == 0


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_same_value_returned_twice_is_copied_once(mode):
    x = lt.dvector("x")
    y = x * 2
    fn = lucent.function([x], [y, y], mode=mode)
    assert fn.plan.copy_output.count(True) == 1
    a, b = fn(np.arange(3.0))
    assert not np.shares_memory(a, b)
    np.testing.assert_array_equal(a, b)


def test_borrowed_input_returned_is_not_copied():
    x = lt.dvector("x")
    fn = lucent.function([In(x, borrow=True)], Out(x, borrow=True), mode="FAST_RUN")
    assert fn.plan.copy_output == [False]
    arg = np.arange(3.0)
    assert np.shares_memory(fn(arg), arg)


def test_view_of_kept_intermediate_is_copied_on_the_reference_path():
    """The node-by-node linker reuses its buffers, so a view of one must not be returned."""
    x = lt.dmatrix("x")
    fn = lucent.function([x], Out((x * 2).T, borrow=False), mode="FAST_COMPILE")
    plan = CallPlan(fn.maker, reuses_buffers=True)
    assert plan.copy_output == [True]
    first = fn(np.ones((2, 2)))
    fn(np.zeros((2, 2)))
    np.testing.assert_array_equal(first, 2.0)


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_swapping_two_shared_variables_copies_nothing(mode):
    a = lucent.shared(np.zeros(3), name="a")
    b = lucent.shared(np.ones(3), name="b")
    fn = lucent.function([], [], updates=[(a, b), (b, a)], mode=mode)
    assert fn.plan.copy_update == [False, False]
    fn()
    np.testing.assert_array_equal(a.get_value(), 1.0)
    np.testing.assert_array_equal(b.get_value(), 0.0)
    assert not np.shares_memory(a.get_value(borrow=True), b.get_value(borrow=True))


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_two_updates_with_one_value_are_not_one_buffer(mode):
    a = lucent.shared(np.zeros(3), name="a")
    b = lucent.shared(np.zeros(3), name="b")
    x = lt.dvector("x")
    fn = lucent.function([x], [], updates=[(a, x + 1), (b, x + 1)], mode=mode)
    fn(np.arange(3.0))
    assert not np.shares_memory(a.get_value(borrow=True), b.get_value(borrow=True))
    np.testing.assert_array_equal(a.get_value(), b.get_value())


def test_update_returned_as_output_is_copied():
    a = lucent.shared(np.zeros(3), name="a")
    new = a + 1
    fn = lucent.function([], new, updates=[(a, new)], mode="FAST_RUN")
    out = fn()
    out[:] = 50
    np.testing.assert_array_equal(a.get_value(), 1.0)


def test_alias_root_follows_views():
    x = lt.dmatrix("x")
    assert alias_root(x.T[0]) is x
    assert alias_root(x * 2) is not x


def test_only_borrowed_inputs_of_compatible_types_are_compared():
    x, y, z = lt.dvector("x"), lt.dvector("y"), lt.lvector("z")
    fn = lucent.function(
        [In(x, borrow=True, mutable=True), In(y, borrow=True), z], x + y + z, mode="FAST_RUN"
    )
    assert aliasable_input_groups(fn.maker.inputs) == ((0, 1),)
    arg = np.arange(3.0)
    np.testing.assert_array_equal(fn(arg, arg, np.ones(3, "int64")), 2 * np.arange(3.0) + 1)
