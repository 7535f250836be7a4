"""The None marker type at its PyTensor path."""

import pytest

from lucent.graph.basic import Constant
from lucent.tensor.shape import NoneConst as shape_none_const
from lucent.tensor.type_other import NoneConst, NoneTypeT, none_type_t


def test_none_const_is_the_shape_ops_marker():
    assert NoneConst is shape_none_const and isinstance(NoneConst, Constant)
    assert NoneConst.type == none_type_t == NoneTypeT() and NoneConst.data is None
    with pytest.raises(TypeError, match="only accepts None"):
        none_type_t.filter(0)


def test_slice_type_and_make_slice():
    import numpy as np

    import lucent
    import lucent.tensor as lt
    from lucent.tensor.type_other import (
        MakeSlice,
        NoneSliceConst,
        SliceConstant,
        SliceType,
        as_symbolic_slice,
        make_slice,
        slicetype,
    )

    assert SliceType() == slicetype and hash(SliceType()) == hash(slicetype)
    assert slicetype.filter(slice(1, 2)) == slice(1, 2)
    with pytest.raises(TypeError, match="expected a slice"):
        slicetype.filter(3)
    c = as_symbolic_slice(slice(np.int64(1), None))
    assert isinstance(c, SliceConstant) and c.data == slice(1, None) and type(c.data.start) is int
    assert c.equals(as_symbolic_slice(slice(1, None))) and NoneSliceConst.data == slice(None)
    i, j = lt.lscalar(), lt.lscalar()
    s = make_slice(i, None, j)
    assert isinstance(s.owner.op, MakeSlice) and s.type == slicetype
    assert as_symbolic_slice(slice(i, None)).owner.op == make_slice
    f = lucent.function([i, j], s, mode="FAST_COMPILE")
    assert f(1, 2) == slice(1, None, 2)
    with pytest.raises(TypeError, match="integer"):
        make_slice(lt.dscalar())
