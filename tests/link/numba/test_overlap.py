"""Tests of lucent/link/numba/dispatch/overlap.py: memory overlap decided inline in kernels."""

import numpy as np
import pytest

pytest.importorskip("numba")

from numba import njit  # noqa: E402

from lucent.link.numba.dispatch.overlap import conflicts, overlaps  # noqa: E402


@njit
def _overlaps(a, b):
    return overlaps(a, b)


@njit
def _conflicts(a, b):
    return conflicts(a, b)


def _cases():
    base = np.arange(24.0).reshape(4, 6)
    other = np.zeros((4, 6))
    return [
        (base, base, True),
        (base, other, False),
        (base[:2], base[2:], False),
        (base[:3], base[2:], True),
        (base[:, ::2], base[:, 1::2], True),  # interleaved: the byte ranges intersect
        (base[::-1], base[:1], True),  # negative strides
        (base[:0], base, False),  # empty
        (base.T, base, True),
        (base[0], base[1], False),
        (base[1:2, :], np.zeros(0), False),
    ]


@pytest.mark.parametrize("a, b, expected", _cases())
def test_overlaps_is_numpy_may_share_memory(a, b, expected):
    assert np.may_share_memory(a, b) == expected
    assert _overlaps(a, b) == expected
    assert _overlaps(b, a) == expected


def test_conflicts_spares_the_same_view_and_broadcast_reads():
    x = np.arange(12.0).reshape(3, 4)
    assert not _conflicts(x, x)  # element k is read before it is written
    assert not _conflicts(x, x[:1])  # same start, broadcast along the first axis
    assert _conflicts(x, x[::-1])
    assert _conflicts(x, x[:, ::-1])
    assert not _conflicts(x, np.ones((3, 4)))
    assert not _conflicts(x, x[:0])
