"""Seed 001 (the Theano version of the shared-variable documentation)."""

import numpy as np
import pytest

import lucent
from lucent.compile.sharedvalue import SharedVariable, shared, shared_constructor_list


def test_shared_returns_shared_variable_copy_of_value():
    data = np.arange(4.0)
    s = shared(data)
    assert isinstance(s, SharedVariable)
    data[0] = 9
    assert s.get_value()[0] == 0


def test_borrow_true_references_value():
    data = np.arange(4.0)
    s = shared(data, borrow=True)
    data[0] = 9
    assert s.get_value(borrow=True)[0] == 9


def test_get_value_borrow_cpu_returns_original():
    s = shared(np.arange(4.0))
    assert s.get_value(borrow=True) is s.get_value(borrow=True)
    assert s.get_value() is not s.get_value(borrow=True)


@pytest.mark.both_modes
def test_set_value_seen_by_functions():
    s = shared(np.zeros(2))
    f = lucent.function([], s)
    s.set_value(np.ones(2))
    np.testing.assert_array_equal(f(), [1, 1])


def test_strict_assignment_not_cast():
    s = shared(np.zeros(2, dtype="float32"), strict=True)
    with pytest.raises(TypeError):
        s.set_value(np.zeros(2, dtype="float64"))


def test_allow_downcast():
    s = shared(np.zeros(2, dtype="float32"))
    with pytest.raises(TypeError):
        s.set_value(np.zeros(2))
    d = shared(np.zeros(2, dtype="float32"), allow_downcast=True)
    d.set_value(np.ones(2))
    assert d.get_value().dtype == np.float32
    assert d.allow_downcast


def test_shared_constructor_list_is_tried_in_reverse():
    assert isinstance(shared_constructor_list, list)
    names = [c.__name__ for c in shared_constructor_list]
    assert names.index("tensor_constructor") > names.index("generic_constructor")


def test_broadcastable_kwarg_makes_row():
    s = shared(np.zeros((1, 4)), broadcastable=(True, False))
    assert s.broadcastable == (True, False)
    s.set_value(np.ones((1, 4)))
    with pytest.raises(TypeError):
        s.set_value(np.ones((2, 4)))
