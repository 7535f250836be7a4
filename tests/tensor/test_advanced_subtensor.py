"""Tests of ``lucent.tensor.advanced_subtensor``: indexing with integer arrays
and boolean masks, and the accumulating set/increment ops."""

import numpy as np
import pytest

import lucent.tensor as lt
import lucent.tensor.advanced_subtensor as A
import lucent.tensor.subtensor as ST
from lucent.gradient import verify_grad
from tests.helpers import run
from tests.tensor.test_shape import check_infer_shape
from tests.tensor.test_subtensor import _inputs


def test_advanced_names_stay_reachable_from_subtensor_and_the_package():
    for name in A.__all__:
        assert name in ST.__all__, name
        assert getattr(ST, name) is getattr(A, name), name
        assert getattr(lt, name) is getattr(A, name), name


@pytest.mark.parametrize("dtype", ["float64", "int32"])
@pytest.mark.parametrize("idx", [[0, 2, 2, -1], [], [1]])
def test_advanced_subtensor1(dtype, idx):
    x = lt.tensor3("x", dtype=dtype)
    il = lt.lvector("il")
    assert isinstance(x[il].owner.op, A.AdvancedSubtensor)  # x[vector] is the general op
    out_var = A.advanced_subtensor1(x, il)
    assert isinstance(out_var.owner.op, A.AdvancedSubtensor1)
    assert out_var.owner.op.view_map == {}
    data = _inputs(dtype, "strided")
    out = check_infer_shape(out_var, {x: data, il: np.array(idx, dtype="int64")})
    np.testing.assert_array_equal(out, data[np.array(idx, dtype=int)])
    assert not np.may_share_memory(out, data)
    assert x[idx].type.shape == (len(idx), None, None)


def test_advanced_subtensor1_errors():
    v = lt.vector("v")
    il = lt.ivector("il")
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with length 3"):
        run(v[il], {v: np.zeros(3), il: np.array([0, 3], "int32")})
    with pytest.raises(IndexError, match="index -4 is out of bounds"):
        run(v[il], {v: np.zeros(3), il: np.array([-4], "int32")})
    with pytest.raises(TypeError, match="integers"):
        v[lt.dvector()]
    with pytest.raises(TypeError):
        v[[1.5]]
    with pytest.raises(NotImplementedError):
        v[np.array(True)]


ADV_INDICES = [
    (slice(None), [0, 3]), ([0, 1], [1, 2]), ([[0], [2]], [1, 3]), (1, slice(None), [0, 4]),
    ([0, 2], slice(1, 3), 1), (slice(None), [1, 1], [0, 2]), (Ellipsis, [4, 0]), ([2, 0], Ellipsis, -1),
    ([0, 1], None, [1, 2]), (None, [0, 1], slice(None), 2), (slice(None, None, -1), [0], [[1], [2]]),
]


@pytest.mark.parametrize("index", ADV_INDICES, ids=repr)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_advanced_subtensor_matches_numpy(index, layout):
    x = lt.tensor3("x")
    data = _inputs("float64", layout)
    expected = data[index]
    out_var = x[index]
    out = run(out_var, {x: data})
    np.testing.assert_array_equal(out, expected)
    assert not np.may_share_memory(out, data)
    static = lt.tensor3(shape=(3, 4, 5))[index].type.shape
    assert static == expected.shape
    if isinstance(out_var.owner.op, A.AdvancedSubtensor):
        check_infer_shape(out_var, {x: data})


def test_boolean_masks():
    x = lt.matrix("x")
    m = lt.matrix("m", dtype="bool")
    data = np.arange(12.0).reshape(3, 4)
    mask = data % 3 == 0
    out_var = x[m]
    assert out_var.type.ndim == 1
    out = check_infer_shape(out_var, {x: data, m: mask})
    np.testing.assert_array_equal(out, data[mask])
    row = np.array([True, False, True])
    out = run(x[row, 1:], {x: data})
    np.testing.assert_array_equal(out, data[row, 1:])
    out = run(x[:, x[0] > 1], {x: data})
    np.testing.assert_array_equal(out, data[:, data[0] > 1])
    with pytest.raises(IndexError, match="did not match"):
        lt.matrix(shape=(3, 4))[np.array([True, False])]
    with pytest.raises(IndexError, match="does not match"):
        run(x[m], {x: data, m: np.ones((2, 2), bool)})
    verify_grad(lambda a: a[mask], [data])


def test_advanced_errors_name_index_and_length():
    x = lt.matrix("x")
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 1 with length 4"):
        run(x[:, [0, 7]], {x: np.zeros((3, 4))})
    with pytest.raises(IndexError, match="could not be broadcast"):
        lt.matrix(shape=(3, 4))[np.array([0, 1]), np.array([0, 1, 2])]


@pytest.mark.parametrize("index", [[0, 0, 2], ([0, 0], [1, 1]), (slice(None), [1, 1, 3]), (np.array([[1, 1]]),)], ids=repr)
def test_advanced_inc_accumulates_duplicates(index):
    x = lt.matrix("x")
    data = np.arange(12.0).reshape(3, 4)
    expected = data.copy()
    np.add.at(expected, index if isinstance(index, tuple) else (index,), 1.0)
    out = run(lt.inc_subtensor(x[index], 1.0), {x: data})
    np.testing.assert_array_equal(out, expected)
    expected = data.copy()
    expected[index] = -1.0
    out = run(lt.set_subtensor(x[index], -1.0), {x: data})
    np.testing.assert_array_equal(out, expected)
    assert data[0, 0] == 0.0


def test_advanced_inc_with_values_and_ignore_duplicates():
    v = lt.vector("v")
    y = lt.vector("y")
    out = run(lt.inc_subtensor(v[[1, 1, 0]], y), {v: np.zeros(3), y: np.array([1.0, 2.0, 4.0])})
    assert out.tolist() == [4.0, 3.0, 0.0]
    m = lt.matrix("m")
    op = lt.inc_subtensor(m[[0, 0], [1, 1]], 1.0, ignore_duplicates=True)
    assert run(op, {m: np.zeros((2, 2))}).tolist() == [[0.0, 1.0], [0.0, 0.0]]
    with pytest.raises(ValueError, match="indexed region"):
        run(lt.set_subtensor(v[[0, 1]], y), {v: np.zeros(3), y: np.zeros(3)})


def test_advanced_gradients():
    rng = np.random.default_rng(7)
    data = rng.normal(size=(3, 4))
    for fn in [lambda a: a[[0, 0, 2]], lambda a: a[:, [3, 3, 1]], lambda a: a[[0, 2], [1, 1]] * 2,
               lambda a: a[[[0], [1]], 1:], lambda a: lt.set_subtensor(a[[0, 1]], a[2:] * 3),
               lambda a: lt.inc_subtensor(a[[1, 1], [0, 0]], a[0, :2] ** 2)]:
        verify_grad(fn, [data], rng=rng)
    verify_grad(lambda a, b: lt.inc_subtensor(a[[2, 0, 2]], b), [data, rng.normal(size=(4,))], rng=rng)
