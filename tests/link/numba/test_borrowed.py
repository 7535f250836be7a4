"""Tests of lucent/link/numba/dispatch/borrowed.py: views that hold no reference to their memory."""

import numpy as np
import pytest

pytest.importorskip("numba")

from numba import njit  # noqa: E402

from lucent.link.numba.dispatch.borrowed import borrowed, borrowed_row, c_row_view, row_is_contiguous  # noqa: E402


@njit
def _row_sum(a, i):
    r = borrowed_row(a, i)
    s = 0.0
    for v in r.ravel():
        s += v
    return s, r.shape


@njit
def _row_write(a, i, value):
    r = borrowed_row(a, i)
    for j in range(r.shape[0]):
        r[j] = value


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.arange(12.0).reshape(3, 4),
        lambda: np.arange(24.0).reshape(4, 6)[::-1, ::2],  # typed A: negative and strided steps
        lambda: np.arange(60.0).reshape(3, 4, 5),
        lambda: np.asfortranarray(np.arange(12.0).reshape(3, 4)),
    ],
)
def test_borrowed_row_is_the_row(make):
    a = make()
    for i in range(a.shape[0]):
        total, shape = _row_sum(a, i)
        assert shape == a[i].shape and total == a[i].sum()


def test_writing_a_borrowed_row_writes_the_array():
    a = np.zeros((3, 5))[:, ::-1]
    _row_write(a, 2, 3.0)
    np.testing.assert_array_equal(a, [[0] * 5, [0] * 5, [3] * 5])


@njit
def _as_c_row(a, i):
    if row_is_contiguous(a, i):
        return c_row_view(a, i).copy(), True
    return a[i].copy(), False


@pytest.mark.parametrize(
    "a, contiguous",
    [
        (np.arange(12.0).reshape(3, 4), True),
        (np.arange(12.0).reshape(3, 4)[::-1], True),  # reversed rows: typed A, each row contiguous
        (np.arange(24.0).reshape(3, 8)[:, ::2], False),
        (np.asfortranarray(np.arange(12.0).reshape(3, 4)), False),
        (np.arange(60.0).reshape(3, 4, 5)[::-1], True),
        (np.arange(60.0).reshape(3, 4, 5)[:, :, ::-1], False),
        (np.arange(6.0).reshape(3, 2, 1)[:, :, ::-1], True),  # a length-1 axis may have any step
    ],
)
def test_c_row_view_of_contiguous_rows(a, contiguous):
    for i in range(a.shape[0]):
        row, was = _as_c_row(a, i)
        assert was == contiguous
        np.testing.assert_array_equal(row, a[i])


def test_borrowed_is_the_array_itself():
    @njit
    def second_name(a):
        b = borrowed(a)
        b[0] = 5.0
        return b.sum()

    a = np.arange(4.0)
    assert second_name(a) == 11.0 and a[0] == 5.0
