"""Tests of lucent/tensor/rewriting/subtensor.py: slices that select everything are dropped."""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.tensor.subtensor import Subtensor
from tests.tensor.rewriting.test_basic import canonicalize, check_values, ops_of

M = np.arange(20.0).reshape(4, 5)


def _subtensors(out):
    return [node.op.idx_list for node in ops_of(out, Subtensor)]


def test_a_zero_start_a_unit_step_and_a_stop_past_the_static_length_select_everything():
    x = lt.tensor(dtype="float64", shape=(4, None), name="x")
    out = x[0:][::1][0:9:1] * 2.0
    new = canonicalize(out)
    assert _subtensors(new) == []
    check_values([x], out, new, [M])


def test_a_stop_at_the_sliced_variable_s_own_length_goes_another_s_stays():
    x = lt.dmatrix("x")
    y = lt.dmatrix("y")
    outs = [x[: x.shape[0]] * 2.0, x[:, : x.shape[1]] * 2.0, x[: y.shape[0]] * 2.0, x[: x.shape[1]] * 2.0]
    new = canonicalize(outs)
    kept = _subtensors(new)
    assert len(kept) == 2, kept
    check_values([x, y], outs, new, [M, np.ones((2, 3))], [np.zeros((0, 3)), np.ones((5, 1))])


def test_bounds_that_select_something_stay():
    x = lt.dmatrix("x")
    n = lt.iscalar("n")
    outs = [x[1:] * 2.0, x[:n] * 2.0, x[::2] * 2.0, x[::-1] * 2.0, x[0::-1] * 2.0, x[0:3] * 2.0]
    new = canonicalize(outs)
    kept = _subtensors(new)
    assert len(kept) == len(outs), kept
    check_values([x, n], outs, new, [M, 2], [M, -1], [np.zeros((0, 5)), 0])


def test_only_the_useless_bounds_of_a_slice_go():
    x = lt.dmatrix("x")
    n = lt.iscalar("n")
    out = x[0:n:1, 1:] * 2.0  # start 0 and step 1 of the first slice go, its stop stays
    new = canonicalize(out)
    assert _subtensors(new) == [((None, True, None), (True, None, None))]
    check_values([x, n], out, new, [M, 3], [M, 10], [M, -2])


def test_trailing_full_slices_go_and_integer_indices_stay():
    x = lt.dmatrix("x")
    i = lt.iscalar("i")
    out = x[i, 0:] * 2.0
    new = canonicalize(out)
    assert _subtensors(new) == [("i",)]
    check_values([x, i], out, new, [M, 1], [M, -1])


def test_a_graph_output_is_never_replaced_by_its_input():
    x = lt.dvector("x")
    out = x[0:]
    new = canonicalize(out)
    assert len(_subtensors(new)) == 1


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_other_dtypes_and_empty_arrays(dtype):
    x = lt.tensor(dtype=dtype, shape=(None, None), name="x")
    out = lt.concatenate([x[0:, ::1], x[0:]], axis=0)
    new = canonicalize(out)
    assert _subtensors(new) == []
    for value in (np.ones((3, 2), dtype), np.ones((0, 2), dtype)):
        check_values([x], out, new, [value])


# --------------------------------------------------------------------------- #
# Writes that change nothing; elements of filled arrays
# --------------------------------------------------------------------------- #
def _writes(out):
    from lucent.tensor.subtensor import IncSubtensor

    return ops_of(out, IncSubtensor)


def _allocs(out):
    from lucent.tensor.basic import Alloc

    return ops_of(out, Alloc)


def test_writing_zeros_into_zeros_and_reading_row_zero_is_one_alloc():
    """The zero state of a loop's gradient: zeros(n+1, 1, d) with zeros written into [:1], row 0 read."""
    xs = lt.dmatrix("xs")
    h = lt.dvector("h")
    n, d = xs.shape[0], h.shape[0]  # lengths: never negative
    buffer = lt.zeros((n + 1, 1, d))
    state = lt.set_subtensor(buffer[:1], lt.zeros((1, d))[None])[0]
    out = state * 2.0 + h
    new = canonicalize(out)
    assert _writes(new) == [] and _subtensors(new) == []
    assert len(_allocs(new)) == 1
    for nv, hv in [(3, np.array([1.0, -2.0, np.nan])), (0, np.zeros(0))]:
        check_values([xs, h], out, new, [np.ones((nv, 2)), hv])


def test_writing_a_filled_value_of_another_shape_source_proves_its_lengths():
    """``zeros_like(W)[None]`` written into zeros(m, W.shape[0], W.shape[1]): the lengths are W's."""
    W = lt.dmatrix("W")
    xs = lt.dmatrix("xs")
    buffer = lt.zeros((lt.minimum(0, xs.shape[0]) + 1, W.shape[0], W.shape[1]))
    out = lt.set_subtensor(buffer[:1], lt.zeros_like(W)[None])[0] + W
    new = canonicalize(out)
    assert _writes(new) == [] and _subtensors(new) == []
    check_values([W, xs], out, new, [M, np.ones((5, 1))], [np.zeros((0, 2)), np.zeros((0, 1))])


def test_incrementing_by_zeros_is_the_array():
    x = lt.dmatrix("x")
    out = lt.inc_subtensor(x[1:], lt.zeros_like(x[1:])) * 3.0
    new = canonicalize(out)
    assert _writes(new) == []
    check_values([x], out, new, [M], [np.zeros((0, 5))])


@pytest.mark.parametrize(
    "build",
    [
        # another value than the one the array holds
        lambda x, n, y: lt.set_subtensor(lt.zeros((n, 3))[:1], lt.ones((1, 3))),
        # NaN is not equal to itself: the write stays
        lambda x, n, y: lt.set_subtensor(lt.alloc(np.nan, n, 3)[:1], lt.alloc(np.nan, 1, 3)),
        # a value whose length may not fit the region (y's length vs 3): the error must stay
        lambda x, n, y: lt.set_subtensor(lt.zeros((n, 3))[:1], lt.zeros_like(y)),
        # an integer index may be out of bounds
        lambda x, n, y: lt.set_subtensor(lt.zeros((n, 3))[0], lt.zeros((3,))),
        # a stepped slice (a step of 0 raises)
        lambda x, n, y: lt.set_subtensor(lt.zeros((n, 3))[::2], lt.zeros((1, 3))),
        # the array is not filled with one value
        lambda x, n, y: lt.set_subtensor(x[:1], lt.zeros((1, 3))),
        # an increment by something else than zeros
        lambda x, n, y: lt.inc_subtensor(x[:1], lt.ones((1, 3))),
    ],
)
def test_writes_that_may_change_or_raise_stay(build):
    x = lt.dmatrix("x")
    n = lt.lscalar("n")
    y = lt.dmatrix("y")
    out = build(x, n, y) * 2.0
    new = canonicalize(out)
    assert len(_writes(new)) == 1
    check_values([x, n, y], out, new, [np.ones((2, 3)), np.array(2), np.ones((1, 3))])


def test_reading_back_the_rows_just_written_is_the_value():
    """The loop-gradient pattern: the output gradient written into zeros, the same rows read back."""
    h = lt.dmatrix("h")
    g = lt.exp(h[1:]) * 3.0  # provably the region's shape
    outs = [
        lt.inc_subtensor(lt.zeros_like(h)[1:], g)[1:] * 2.0,
        lt.set_subtensor(h[1:], lt.tanh(h[1:]))[1:] * 2.0,
    ]
    new = canonicalize(outs)
    assert _writes(new) == []
    assert all(idx == ((True, None, None),) for idx in _subtensors(new))  # only the h[1:] of the values
    check_values([h], outs, new, [M], [np.zeros((1, 2))], [np.zeros((0, 2))])


@pytest.mark.parametrize(
    "build",
    [
        # the value has one row less than the region: the write raises, and must still
        lambda h, g, v: lt.set_subtensor(h[1:], h[2:])[1:],
        # a value whose shape is not known to be the region's
        lambda h, g, v: lt.set_subtensor(h[1:], g)[1:],
        # a value broadcast along a dimension: what is read back is not the value
        lambda h, g, v: lt.set_subtensor(h[1:], v[None, :])[1:],
        # another region read back
        lambda h, g, v: lt.set_subtensor(h[1:], g)[2:],
        # an increment of something else than zeros
        lambda h, g, v: lt.inc_subtensor(h[1:], g)[1:],
        # an integer index may be out of bounds
        lambda h, g, v: lt.set_subtensor(h[0], v)[0],
    ],
)
def test_reads_of_writes_that_may_differ_or_raise_stay(build):
    h, g, v = lt.dmatrix("h"), lt.dmatrix("g"), lt.dvector("v")
    out = build(h, g, v) * 2.0
    new = canonicalize(out)
    assert len(_writes(new)) == 1
    args = [np.ones((4, 5)), np.ones((3, 5)), np.arange(5.0)]
    try:
        build(*[lt.constant(a) for a in args]).eval()
    except ValueError:
        # the write raises: it still does once rewritten, on both paths
        import lucent

        for mode in ("FAST_RUN", "FAST_COMPILE"):
            with pytest.raises(ValueError, match="cannot broadcast"):
                lucent.function([h, g, v], out, mode=mode, on_unused_input="ignore")(*args)
        return
    check_values([h, g, v], out, new, args)
