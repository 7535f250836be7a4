"""Seed 000: ``lucent.compile.sharedvalue`` (SharedVariable, shared, shared_constructor)."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.compile.sharedvalue import SharedVariable, shared, shared_constructor
from lucent.compile import sharedvalue
from lucent.link.basic import Container


def test_shared_is_lucent_shared():
    assert lucent.shared is shared


def test_get_value_copies_by_default():
    data = np.arange(3.0)
    s = shared(data)
    v = s.get_value()
    v[0] = 100
    assert s.get_value()[0] == 0


def test_get_value_borrow_returns_internal_memory():
    s = shared(np.arange(3.0), borrow=True)
    v = s.get_value(borrow=True)
    v[0] = 100
    assert s.get_value()[0] == 100
    internal = s.get_value(borrow=True, return_internal_type=True)
    assert internal is s.container.value


def test_set_value_copies_unless_borrow():
    s = shared(np.zeros(3))
    new = np.ones(3)
    s.set_value(new)
    new[0] = 5
    assert s.get_value()[0] == 1
    s.set_value(new, borrow=True)
    new[1] = 7
    assert s.get_value()[1] == 7


@pytest.mark.both_modes
def test_new_value_seen_by_all_functions():
    s = shared(np.float64(1.0))
    f = lucent.function([], s * 2)
    g = lucent.function([], s + 1)
    s.set_value(10.0)
    assert f() == 20.0 and g() == 11.0


def test_init_signature_value_and_container():
    t = lt.dvector().type
    s = SharedVariable("s", t, np.zeros(2), strict=False)
    assert s.name == "s" and s.type == t
    np.testing.assert_array_equal(s.get_value(), [0, 0])
    c = Container(t, [np.ones(2)])
    s2 = SharedVariable("s2", t, None, strict=False, container=c)
    assert s2.container is c
    np.testing.assert_array_equal(s2.get_value(), [1, 1])
    with pytest.raises(TypeError, match="both a value and a container"):
        SharedVariable("s3", t, np.zeros(2), strict=False, container=c)


def test_strict_forbids_casting():
    s = shared(np.zeros(2), strict=True)
    assert s.strict
    with pytest.raises(TypeError):
        s.set_value([1.0, 2.0])
    with pytest.raises(TypeError):
        s.set_value(np.zeros(2, dtype="int32"))
    s.set_value(np.ones(2))
    # Non-strict variables cast.
    t = shared(np.zeros(2))
    t.set_value([1, 2])
    assert t.get_value().dtype == np.float64


@pytest.mark.both_modes
def test_container_attribute_used_as_implicit_parameter():
    s = shared(np.float64(2.0), name="s")
    f = lucent.function([], s + 1)
    assert f.container[s] is s.container
    assert f.value["s"] == 2.0


def test_constructors_tried_in_reverse_order_first_accepting_wins():
    calls = []

    class Marker(Exception):
        pass

    def declining(value, name=None, strict=False, allow_downcast=None, **kwargs):
        calls.append("declining")
        raise TypeError("no")

    def accepting(value, name=None, strict=False, allow_downcast=None, **kwargs):
        calls.append("accepting")
        return SharedVariable(name, lt.dscalar().type, value, strict)

    shared_constructor(accepting)
    shared_constructor(declining)
    try:
        v = shared(np.float64(3.0), name="m")
        assert calls == ["declining", "accepting"]
        assert v.get_value() == 3.0
    finally:
        shared_constructor(declining, remove=True)
        shared_constructor(accepting, remove=True)


def test_kwargs_restrict_constructors():
    # Only the tensor constructor knows ``shape``; the scalar constructor
    # declines, so a Python float with shape= finds no constructor.
    with pytest.raises(TypeError, match="float"):
        shared(1.5, shape=(2,))
    s = shared(np.zeros((1, 3)), broadcastable=(True, False))
    assert s.type.shape == (1, None)


def test_unknown_value_type_clear_error():
    class Thing:
        pass

    with pytest.raises(TypeError, match="Thing"):
        shared(Thing(), shape=(2,))


def test_broadcastable_default_false_even_for_length_one():
    s = shared(np.zeros((1, 3)))
    assert s.broadcastable == (False, False)
    row = shared(np.zeros((1, 3)), broadcastable=(True, False))
    assert row.broadcastable == (True, False)


def test_constructor_list_exists():
    assert sharedvalue.generic_constructor in sharedvalue.shared_constructor_list
