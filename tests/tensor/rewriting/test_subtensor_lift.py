"""Tests of lucent/tensor/rewriting/subtensor_lift.py: an element of a filled array is a smaller one."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.tensor.basic import Alloc
from lucent.tensor.subtensor import Subtensor
from tests.tensor.rewriting.test_basic import canonicalize, check_values, ops_of


def _subtensors(out):
    return [node.op.idx_list for node in ops_of(out, Subtensor)]


def test_an_element_of_an_alloc_needs_an_index_provably_inside():
    xs = lt.dmatrix("xs")
    n = xs.shape[0]  # a length: at least 0
    c = lt.dscalar("c")
    inside = [lt.alloc(c, n + 1, 3)[0], lt.alloc(c, lt.maximum(n, 2), 3)[-2], lt.alloc(c, 4, n)[3, :]]
    maybe_outside = [lt.alloc(c, n, 3)[0], lt.alloc(c, n + 1, 3)[1], lt.alloc(c, n + 1, 3)[-2], lt.alloc(c, n + 1, 3)[0:1]]
    for out in inside:
        new = canonicalize(out * 1.5)
        assert _subtensors(new) == [], out
        check_values([xs, c], out * 1.5, new, [np.ones((2, 1)), np.array(0.5)])
    for out in maybe_outside:
        new = canonicalize(out * 1.5)
        assert len(_subtensors(new)) == 1, out
    # the original raises for n = 0 and index 0: so does the kept read
    f = lucent.function([xs, c], maybe_outside[0] * 1.5, mode="FAST_RUN")
    with pytest.raises(IndexError):
        f(np.zeros((0, 1)), np.array(1.0))
    # an index a plain integer input could push outside stays too (n may be negative)
    m = lt.lscalar("m")
    assert len(_subtensors(canonicalize(lt.alloc(c, m + 1, 3)[0] * 1.5))) == 1


def test_the_smaller_alloc_has_the_value_and_the_dtype():
    xs = lt.dmatrix("xs")
    out = lt.alloc(np.int32(7), xs.shape[0] + 2, 3, xs.shape[1])[1]
    new = canonicalize(out)
    assert _subtensors(new) == [] and len(ops_of(new, Alloc)) == 1
    got = lucent.function([xs], out, mode="FAST_RUN")(np.zeros((0, 4)))
    assert got.dtype == np.int32 and got.shape == (3, 4) and (got == 7).all()
    check_values([xs], out, new, [np.zeros((2, 5))])
