"""Tests of lucent/link/numba/dispatch/borrowed.py: views that hold no reference to their memory."""

import numpy as np
import pytest

pytest.importorskip("numba")

from numba import njit  # noqa: E402

from lucent.link.numba.dispatch.borrowed import (  # noqa: E402
    borrowed,
    borrowed_row,
    c_row_view,
    padded_c_view,
    row_is_contiguous,
)


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


@njit
def _padded_read(a, rows, ld, cols):
    v = padded_c_view(a, rows, ld)
    out = np.empty((rows, cols))
    for i in range(rows):
        for j in range(cols):
            out[i, j] = v[i, j]
    return out, v.shape, v.strides


@pytest.mark.parametrize("step", [1, 2])
def test_padded_c_view_reads_a_matrix_stored_by_rows(step):
    base = np.arange(48.0).reshape(4, 12)
    a = base[:, : 5 * step : step] if step == 1 else base[::1, :5]  # rows 12 items apart
    got, shape, strides = _padded_read(a, 4, 12, 5)
    np.testing.assert_array_equal(got, a)
    assert shape == (4, 12) and strides == (96, 8)


def test_padded_c_view_of_a_transposed_matrix_gives_its_columns():
    stored = np.arange(15.0).reshape(3, 5)
    a = stored.T  # 5 x 3, stored by columns, leading dimension 5
    got, _, _ = _padded_read(a, 3, 5, 5)
    np.testing.assert_array_equal(got, a.T)


def test_padded_c_view_float32():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)

    @njit
    def first_row_sum(a):
        v = padded_c_view(a, a.shape[0], a.shape[1])
        out = np.empty(2, a.dtype)
        out[0] = v[0, 0] + v[0, 3]
        out[1] = v[2, 1]
        return out

    got = first_row_sum(a)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [3.0, 9.0])
