"""SharedVariable details beyond the seeds."""

import copy
import pickle

import numpy as np
import pytest

import lucent
from lucent.compile.sharedvalue import SharedVariable, shared


def test_clone_shares_container():
    s = shared(np.zeros(2), name="s")
    c = s.clone()
    assert isinstance(c, SharedVariable) and c.container is s.container and c.name == "s"


def test_pickle_shared_variable():
    s = shared(np.arange(3.0), name="s")
    t = pickle.loads(pickle.dumps(s))
    np.testing.assert_array_equal(t.get_value(), [0, 1, 2])
    t.set_value(np.ones(3))
    assert s.get_value()[0] == 0


@pytest.mark.both_modes
def test_function_sees_set_value_borrow():
    s = shared(np.zeros(2))
    f = lucent.function([], s + 1)
    s.set_value(np.ones(2), borrow=True)
    np.testing.assert_array_equal(f(), [2, 2])


def test_generic_shared_for_python_objects():
    try:
        from lucent.link.c.type import generic  # noqa: F401
    except ImportError:
        return
    s = shared([1, 2])
    v = s.get_value()
    v.append(3)
    assert s.get_value() == [1, 2]


def test_deepcopy_of_container_is_independent():
    s = shared(np.zeros(2))
    c = copy.deepcopy(s.container)
    c.value = np.ones(2)
    assert s.get_value()[0] == 0


def test_shared_constructors_is_the_list_tried_in_reverse_order():
    from lucent.compile.sharedvalue import shared_constructor

    calls = []

    def first(value, **kwargs):
        calls.append("first")
        raise TypeError("not mine")

    def last(value, **kwargs):
        calls.append("last")
        raise TypeError("not mine either")

    shared_constructor(first)
    shared_constructor(last)
    try:
        assert lucent.shared.constructors[-2:] == [first, last]
        lucent.shared(np.zeros(2))
        assert calls == ["last", "first"]
    finally:
        shared_constructor(first, remove=True)
        shared_constructor(last, remove=True)
    assert first not in lucent.shared.constructors


def test_shared_python_object_keeps_the_object():
    class Settings:
        pass

    obj = Settings()
    s = lucent.shared(obj)
    assert s.get_value(borrow=True) is obj
    assert s.get_value() is not obj and isinstance(s.get_value(), Settings)
