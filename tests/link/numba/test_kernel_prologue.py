"""Tests of lucent/link/numba/dispatch/kernel_prologue.py: shape checks and output choice as IR."""

import gc

import numpy as np
import pytest

pytest.importorskip("numba")

from numba import njit  # noqa: E402

from lucent.link.numba.dispatch.kernel_prologue import (  # noqa: E402
    broadcast_pattern,
    broadcast_shape,
    broadcast_shape_lines,
    inplace_output,
)


@njit
def _shape_2d_row(a, b):
    # b has a static length 1 in dimension 0
    return broadcast_shape((a, b), "Op", "..|1.")


@njit
def _shape_three(a, b, c):
    return broadcast_shape((a, b, c), "Elemwise", ".|.|.")


@njit
def _shape_0d(a, b):
    return broadcast_shape((a, b), "Sum", "|")


def test_pattern_marks_static_ones():
    assert broadcast_pattern([(None, 1), (3, None), ()]) == ".1|..|"
    lines = broadcast_shape_lines([(None, None), (1, None)], 2, "Sum")
    assert lines == ["shape = broadcast_shape((i0, i1, ), 'Sum', '..|1.')", "n0, n1, = shape"]
    assert broadcast_shape_lines([(), ()], 0) == ["shape = broadcast_shape((i0, i1, ), 'Elemwise', '|')"]


def test_shape_comes_from_the_inputs_without_static_ones():
    assert _shape_2d_row(np.ones((4, 3)), np.ones((1, 3))) == (4, 3)
    assert _shape_2d_row(np.ones((0, 3)), np.ones((1, 3))) == (0, 3)
    assert _shape_three(np.ones(5), np.ones(5), np.ones(5)) == (5,)
    assert _shape_0d(np.array(1.0), np.array(2.0)) == ()


def test_mismatches_raise_the_perform_messages():
    with pytest.raises(ValueError, match=r"^Op: input 1 has a static length 1 in dimension 0$"):
        _shape_2d_row(np.ones((4, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"^Op: input shapes are not compatible in dimension 1$"):
        _shape_2d_row(np.ones((4, 3)), np.ones((1, 4)))
    with pytest.raises(ValueError, match="dimension 1: an input has length 1 there at run time"):
        _shape_2d_row(np.ones((4, 3)), np.ones((1, 1)))
    # the first input that differs decides the message
    with pytest.raises(ValueError, match="dimension 0: an input has length 1"):
        _shape_three(np.ones(3), np.ones(1), np.ones(4))
    with pytest.raises(ValueError, match=r"not compatible in dimension 0$"):
        _shape_three(np.ones(3), np.ones(4), np.ones(1))


def test_a_pattern_that_does_not_fit_is_a_typing_error():
    from numba.core.errors import TypingError

    @njit
    def wrong(a):
        return broadcast_shape((a,), "Op", "...")

    with pytest.raises(TypingError):
        wrong(np.ones((2, 2)))


@njit
def _output(target, others):
    return inplace_output(target, target.shape, others, np.float64)


def test_the_target_is_written_when_nothing_overlaps_it():
    target, other = np.zeros((3, 4)), np.ones((3, 4))
    out = _output(target, (other,))
    assert np.shares_memory(out, target) and out.ctypes.data == target.ctypes.data
    assert _output(target, ()).ctypes.data == target.ctypes.data


def test_the_same_view_of_the_target_is_safe():
    target = np.zeros((3, 4))
    assert _output(target, (target,)).ctypes.data == target.ctypes.data
    # a row broadcast along its length-1 dimension reads each element before it is written
    assert _output(target, (target[:1],)).ctypes.data == target.ctypes.data


def _overlapping_pairs():
    base = np.arange(16.0).reshape(4, 4)
    return [
        ("transpose", base, base.T),
        ("reversed", base, base[::-1]),
        ("shifted", base[:3], base[1:]),
    ]


@pytest.mark.parametrize("name, target, other", _overlapping_pairs(), ids=[p[0] for p in _overlapping_pairs()])
def test_an_overlapping_input_in_another_layout_gets_a_new_output(name, target, other):
    before = target.copy()
    out = _output(target, (other,))
    assert not np.shares_memory(out, target)
    assert out.shape == target.shape and out.flags.c_contiguous
    np.testing.assert_array_equal(target, before)


def test_a_read_only_target_gets_a_new_output():
    target = np.zeros((2, 3))
    target.flags.writeable = False
    out = _output(target, ())
    assert not np.shares_memory(out, target) and out.flags.writeable and out.shape == (2, 3)


def test_the_result_is_typed_as_a_strided_target_when_the_target_is_not_c():
    import numba

    target = np.zeros((4, 6))[:, ::2]
    others = (np.ones((4, 3)),)
    out = _output(target, others)
    assert out.ctypes.data == target.ctypes.data and out.strides == target.strides
    signature = _output.overloads[(numba.typeof(target), numba.typeof(others))].signature
    assert signature.return_type.layout == "A"
    c_target = np.zeros((4, 3))
    _output(c_target, others)
    signature = _output.overloads[(numba.typeof(c_target), numba.typeof(others))].signature
    assert signature.return_type.layout == "C"


def test_the_chosen_target_keeps_its_memory_alive():
    out = _output(np.zeros((64, 64)), ())
    gc.collect()
    out[...] = 1.0
    assert out.sum() == 64 * 64
