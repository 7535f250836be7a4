"""``TypedListType``: the Type contract for lists of arrays."""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.typed_list import TypedListType


def test_equality_depth_and_str():
    t = TypedListType(lt.dvector)
    assert t == TypedListType(lt.dvector) and hash(t) == hash(TypedListType(lt.dvector))
    assert t != TypedListType(lt.fvector)
    assert t.get_depth() == 0 and t.dtype == lt.dvector
    nested = TypedListType(lt.dvector, depth=2)
    assert nested.get_depth() == 2 and nested.ttype.ttype.ttype == lt.dvector
    assert "TypedList" in str(t)


def test_bad_construction():
    with pytest.raises(TypeError, match="lucent Type"):
        TypedListType(np.float64)
    with pytest.raises(ValueError, match="depth"):
        TypedListType(lt.dvector, depth=-1)


def test_filter():
    t = TypedListType(lt.dvector)
    out = t.filter([[1, 2], (3.0,)])
    assert isinstance(out, list) and all(v.dtype == "float64" for v in out)
    with pytest.raises(TypeError, match="element 1"):
        t.filter([[1.0], [[1.0]]])
    with pytest.raises(TypeError, match="list"):
        t.filter(3)
    value = [np.ones(2)]
    assert t.filter(value, strict=True) is value
    with pytest.raises(TypeError):
        t.filter([np.ones(2, dtype="int64")], strict=True)
    with pytest.raises(TypeError, match="Python list"):
        t.filter((np.ones(2),), strict=True)


def test_values_eq_may_share_memory_and_size():
    t = TypedListType(lt.dvector)
    a = np.ones(3)
    assert t.values_eq([a, np.zeros(1)], [a.copy(), np.zeros(1)])
    assert not t.values_eq([a], [a, a])
    assert t.values_eq_approx([a], [a + 1e-12])
    assert t.may_share_memory([a], [a[1:]])
    assert not t.may_share_memory([a], [a.copy()])
    info = t.get_shape_info([a, np.zeros(2)])
    assert t.get_size(info) == 5 * 8
