"""Graph utilities: scratchpads, traces and small sequence helpers."""

import pytest

from lucent.graph.utils import (
    MethodNotDefined,
    Scratchpad,
    ValidatingScratchpad,
    add_tag_trace,
    difference,
    flatten,
    format_trace,
    get_variable_trace_string,
    uniq,
    user_frame,
)


def test_method_not_defined_is_an_exception():
    with pytest.raises(MethodNotDefined):
        raise MethodNotDefined("filter")
    assert issubclass(MethodNotDefined, Exception)


def test_scratchpad():
    s = Scratchpad()
    s.a = 1
    assert "a" in str(s) and repr(s) == str(s)
    other = Scratchpad()
    other.b = 2
    s.__update__(other)
    assert s.b == 2
    s.clear()
    assert not hasattr(s, "a")


def test_validating_scratchpad_filters_one_attribute():
    s = ValidatingScratchpad("value", int)
    s.value = "3"
    s.other = "3"
    assert s.value == 3 and s.other == "3"
    with pytest.raises(ValueError):
        s.value = "x"


def test_trace_points_at_user_code():
    class Thing:
        tag = Scratchpad()

    thing = add_tag_trace(Thing())
    filename, lineno, name = thing.tag.trace[0]
    assert filename == __file__ and name == "test_trace_points_at_user_code"
    assert format_trace(thing.tag.trace).startswith(f'File "{__file__}"')
    assert get_variable_trace_string(thing) == format_trace(thing.tag.trace)
    assert format_trace([]) == "(no creation trace recorded)"
    assert user_frame()[0] == __file__


def test_sequence_helpers():
    assert flatten([1, [2, (3, [4])], 5]) == [1, 2, 3, 4, 5]
    assert uniq([3, 1, 3, 2, 1]) == [3, 1, 2]
    assert difference([1, 2, 3, 2], [2]) == [1, 3]
