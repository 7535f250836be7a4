"""Softmax / LogSoftmax kernels against ``perform``: axes, layouts, inf/NaN rows, dtypes."""

import numpy as np
import pytest

pytest.importorskip("numba")

import lucent.tensor as lt  # noqa: E402
from lucent.link.numba.dispatch import numba_funcify  # noqa: E402
from lucent.tensor.special import LogSoftmax, Softmax  # noqa: E402

RNG = np.random.default_rng(11)


def perform(node, values):
    storage = [[None]]
    node.op.perform(node, values, storage)
    return storage[0][0]


@pytest.mark.parametrize("cls", [Softmax, LogSoftmax])
@pytest.mark.parametrize("axis", [0, -1, None])
def test_matches_perform(cls, axis):
    x = lt.matrix("x")
    node = cls(axis).make_node(x)
    k = numba_funcify(node.op, node)
    a = RNG.standard_normal((40, 700)) * 20
    a[3, 4] = np.inf
    a[5, 6] = np.nan
    a[7, :] = -np.inf
    for value in (a, a.T.copy().T, a[:, ::3], np.zeros((0, 4)), np.zeros((3, 0))):
        with np.errstate(all="ignore"):
            expected = perform(node, [value])
            got = k(value)
        assert got.shape == expected.shape and got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float32", "int16"])
def test_other_dtypes(dtype):
    x = lt.tensor3(dtype=dtype)
    node = Softmax(1).make_node(x)
    k = numba_funcify(node.op, node)
    a = (RNG.standard_normal((3, 20, 4)) * 5).astype(dtype)
    got, expected = k(a), perform(node, [a])
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-5)


@pytest.mark.parametrize("make", [
    lambda a: a,
    lambda a: a[:, ::2, 1:],
    lambda a: np.asfortranarray(a),
    lambda a: a[::-1],
], ids=["c", "strided", "fortran", "reversed"])
def test_last_axis_row_is_the_row_view(make):
    from numba import njit

    from lucent.link.numba.dispatch.special import last_axis_row

    @njit
    def rows(x):
        total = 0.0
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                r = last_axis_row(x, (i, j))
                for k in range(r.shape[0]):
                    total += r[k] * (k + 1)
        return total, last_axis_row(x, (x.shape[0] - 1, x.shape[1] - 1))

    x = make(np.arange(60.0).reshape(3, 4, 5))
    total, last = rows(x)
    assert total == pytest.approx(float((x * np.arange(1, x.shape[2] + 1)).sum()))
    np.testing.assert_array_equal(last, x[-1, -1, :])
    assert np.shares_memory(last, x)
