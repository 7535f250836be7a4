"""DeepCopyOp, ViewOp and as_op."""

import pickle

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.compile.ops import DeepCopyOp, ViewOp, as_op, deep_copy_op, view_op

# Compiles with the default mode: run each test on both paths.
pytestmark = pytest.mark.both_modes


def test_deep_copy_op():
    x = lt.dvector("x")
    f = lucent.function([x], Out_borrow(deep_copy_op(x)))
    data = np.array([1.0, 2.0])
    out = f(data)
    np.testing.assert_array_equal(out, data)
    assert not np.may_share_memory(out, data)
    assert DeepCopyOp() == deep_copy_op


def Out_borrow(v):
    return lucent.Out(v, borrow=True)


def test_view_op():
    x = lt.dvector("x")
    y = view_op(x)
    assert y.type == x.type and ViewOp.view_map == {0: [0]}
    f = lucent.function([x], y)
    np.testing.assert_array_equal(f(np.array([3.0])), [3.0])


@as_op(itypes=[lt.dmatrix], otypes=[lt.dvector])
def diag_op(m):
    return np.diag(m).copy()


def test_as_op():
    x = lt.dmatrix("x")
    f = lucent.function([x], diag_op(x))
    np.testing.assert_array_equal(f(np.eye(2) * 3), [3.0, 3.0])
    with pytest.raises(TypeError):
        diag_op(lt.dvector())
    assert diag_op.__name__ == "diag_op"
    assert pickle.loads(pickle.dumps(diag_op)) is diag_op


def test_as_op_with_type_instances_and_multiple_outputs():
    t = lt.dvector().type

    @as_op([t, t], [t, t])
    def both(a, b):
        return a + b, a - b

    a, b = lt.dvectors("ab")
    s, d = both(a, b)
    f = lucent.function([a, b], [s, d])
    r = f(np.array([3.0]), np.array([1.0]))
    np.testing.assert_array_equal(r[0], [4.0])
    np.testing.assert_array_equal(r[1], [2.0])
