"""Reduction kernels (CAReduce, FusedCAReduce, Argmax/Argmin, ReducedSize) against ``perform``.

Covers every axis combination of a 3-d input in C and strided layouts,
integer accumulators (wrapping like NumPy), bool, NaN propagation, empty
inputs (the ValueError of Max/Min), and fused reductions with broadcasting
and with a libm fallback block.
"""

import functools

import numpy as np
import pytest

pytest.importorskip("numba")

import lucent.tensor as lt  # noqa: E402
from lucent.link.numba.dispatch import numba_funcify  # noqa: E402
from lucent.scalar import basic as ps  # noqa: E402
from lucent.scalar.composite import Composite  # noqa: E402
from lucent.tensor.fused_reduction import FusedCAReduce  # noqa: E402
from lucent.tensor.math import Argmax, Argmin, ReducedSize  # noqa: E402
from lucent.tensor.reduction import All, Any, Max, Min, Prod, Sum  # noqa: E402

RNG = np.random.default_rng(3)
AXES = [None, (0,), (1,), (2,), (0, 1), (1, 2), (0, 2)]


def perform(node, values):
    storage = [[None]]
    node.op.perform(node, values, storage)
    return storage[0][0]


def check(node, kernel, values, rtol=1e-12, atol=1e-12):
    got = kernel(*values)
    expected = perform(node, values)
    assert got.shape == expected.shape and got.dtype == expected.dtype, (got.shape, expected.shape, got.dtype, expected.dtype)
    if expected.dtype.kind == "f":
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, expected)


@functools.lru_cache(maxsize=None)
def kernel(op_class, axis, dtype, ndim=3):
    x = lt.tensor(dtype=dtype, shape=(None,) * ndim)
    node = op_class(axis).make_node(x)
    return node, numba_funcify(node.op, node)


@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("op_class", [Sum, Max, Min, Prod])
def test_float64_every_axis_and_layout(op_class, axis):
    node, k = kernel(op_class, axis, "float64")
    a = RNG.standard_normal((3, 4, 5))
    check(node, k, [a])
    check(node, k, [a.transpose(2, 1, 0).copy().transpose(2, 1, 0)])
    check(node, k, [RNG.standard_normal((3, 8, 5))[:, ::2]])


@pytest.mark.parametrize("op_class", [Sum, Max, Min, Prod, All, Any])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "bool", "float32"])
def test_other_dtypes_accumulate_like_perform(op_class, dtype):
    rng = np.random.default_rng(63)  # its own: the module's RNG depends on which tests ran first
    if dtype == "bool":
        a = rng.integers(0, 2, (6, 300)).astype(bool)
    elif dtype == "float32":
        a = rng.standard_normal((6, 300)).astype(dtype)
    else:
        a = rng.integers(0, 120, (6, 300)).astype(dtype)  # sums overflow int8: int64 accumulator
    for axis in (None, (1,), (0,)):
        node, k = kernel(op_class, axis, dtype, 2)
        # float32 sums of O(1) terms summed in another order differ by a few float32 ulps
        # of the terms, which is large relative to a sum that happens to be near 0.
        check(node, k, [a], rtol=1e-5, atol=1e-5 if dtype == "float32" else 1e-12)


def test_nan_propagates_through_max_min_and_sum():
    a = RNG.standard_normal((4, 700))
    a[1, 650] = np.nan
    a[2, 3] = np.inf
    for op_class in (Max, Min, Sum):
        for axis in (None, (1,), (0,)):
            node, k = kernel(op_class, axis, "float64", 2)
            with np.errstate(all="ignore"):
                check(node, k, [a])


def test_empty_inputs():
    for axis in (None, (1,), (0,)):
        node, k = kernel(Sum, axis, "float64", 2)
        check(node, k, [np.zeros((0, 3))])
        node, k = kernel(Max, axis, "float64", 2)
        for shape in [(0, 3), (3, 0), (0, 0)]:
            a = np.zeros(shape)
            try:
                expected = perform(node, [a])
            except ValueError:
                with pytest.raises(ValueError, match="empty"):
                    k(a)
            else:
                np.testing.assert_array_equal(k(a), expected)


def test_zero_d_input():
    node, k = kernel(Sum, None, "float64", 0)
    check(node, k, [np.array(2.5)])


@pytest.mark.parametrize("cls", [Argmax, Argmin])
def test_argmax_argmin(cls):
    x = lt.tensor3()
    a = RNG.standard_normal((3, 4, 5))
    a[1, 2, 3] = np.nan
    for axis in [None, (0,), (2,), (0, 2)]:
        node = cls(axis).make_node(x)
        k = numba_funcify(node.op, node)
        check(node, k, [a])
        check(node, k, [a.T.copy().T])
        with pytest.raises(ValueError, match="empty"):
            k(np.zeros({None: (3, 0, 5), (0,): (0, 4, 5), (2,): (3, 4, 0), (0, 2): (0, 4, 5)}[axis]))


def test_reduced_size():
    x = lt.tensor3()
    node = ReducedSize((0, 2)).make_node(x)
    k = numba_funcify(node.op, node)
    check(node, k, [np.zeros((3, 4, 5))])


@functools.lru_cache(maxsize=None)
def fused_kernels():
    a, b = ps.float64(), ps.float64()
    sq = Composite([a], [a * a])
    dist = Composite([a, b], [abs(a - b)])
    sinsum = Composite([a, b], [ps.sin(a) * b])
    x, y = lt.matrix("x"), lt.matrix("y")
    row = lt.tensor(dtype="float64", shape=(1, None))
    nodes = [
        FusedCAReduce(sq, Sum(None)).make_node(x),
        FusedCAReduce(dist, Max((1,))).make_node(x, y),
        FusedCAReduce(dist, Max((0,))).make_node(x, row),
        FusedCAReduce(sinsum, Sum((1,))).make_node(x, y),
    ]
    return [(n, numba_funcify(n.op, n)) for n in nodes]


def test_fused_reductions_match_perform():
    a, b = RNG.standard_normal((5, 1300)), RNG.standard_normal((5, 1300))
    r = RNG.standard_normal((1, 1300))
    a[2, 1000] = 5e8  # sin beyond the fast range: that block is recomputed with libm
    for (node, k), args in zip(fused_kernels(), [[a], [a, b], [a, r], [a, b]]):
        check(node, k, args)
        check(node, k, [v.T.copy().T for v in args])
