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
