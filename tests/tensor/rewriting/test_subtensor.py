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
