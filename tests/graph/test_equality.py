"""equal_computations: are two expressions the same computation?"""

import numpy as np
import pytest

import lucent.tensor as lt
from lucent.graph.basic import NominalVariable, equal_computations


def test_same_ops_on_same_inputs():
    a, b = lt.iscalars(2)
    assert equal_computations([a + b], [a + b])
    assert not equal_computations([a + b], [b + a])
    assert not equal_computations([a + b], [a * b])
    assert equal_computations([a], [a]) and not equal_computations([a], [b])


def test_constants_and_plain_values():
    a = lt.iscalar()
    assert equal_computations([lt.as_tensor(1)], [lt.as_tensor(1)])
    assert not equal_computations([lt.as_tensor(1)], [lt.as_tensor(2)])
    assert equal_computations([2], [2]) and equal_computations([np.r_[2, 1]], [np.r_[2, 1]])
    assert equal_computations([np.r_[2, 1]], [lt.as_tensor(np.r_[2, 1])])
    assert equal_computations([lt.as_tensor(np.r_[2, 1])], [np.r_[2, 1]])
    assert not equal_computations([2], [a]) and not equal_computations([a], [np.r_[2, 1]])
    nan = lt.as_tensor(np.array([np.nan]))
    assert equal_computations([nan], [lt.as_tensor(np.array([np.nan]))])


def test_strict_dtype():
    x = lt.dvector("x")
    c64 = lt.constant(np.array(2, dtype="int64"))
    c8 = lt.constant(np.array(2, dtype="int8"))
    assert not equal_computations([x + c64], [x + c8])
    # the outputs' dtypes agree (float64); only the constants' dtypes differ
    assert equal_computations([x + c64], [x + c8], strict_dtype=False)


def test_declared_equivalent_inputs():
    a, b = lt.iscalars(2)
    c, d = lt.iscalars(2)
    assert not equal_computations([a + b], [c + d])
    assert equal_computations([a + b], [c + d], in_xs=[a, b], in_ys=[c, d])
    assert not equal_computations([a + b], [c + d], in_xs=[a], in_ys=[c, d])


def test_multiple_outputs_and_nominal_inputs():
    tt = lt.TensorType("float64", (None,))
    n0, n1 = NominalVariable(0, tt), NominalVariable(1, tt)
    assert equal_computations([n0 * n1, n0 + 1], [n0 * n1, n0 + 1])
    assert not equal_computations([n0 * n1], [n1 * n0])


def test_lengths_must_match():
    a = lt.iscalar()
    with pytest.raises(ValueError, match="as many graphs"):
        equal_computations([a], [a, a])


def test_deep_graphs_do_not_recurse():
    x = lt.dscalar("x")
    y1 = y2 = x
    for _ in range(3000):
        y1 = y1 + 1
        y2 = y2 + 1
    assert equal_computations([y1], [y2])
