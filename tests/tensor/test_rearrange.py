"""``lucent.tensor.rearrange``: swapaxes, moveaxis, stacklists, mgrid / ogrid."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.gradient import verify_grad
from tests.helpers import run


def test_swapaxes_and_moveaxis_match_numpy():
    x = lt.tensor3("x")
    v = np.arange(24.0).reshape(2, 3, 4)
    got = run([lt.swapaxes(x, 0, 2), lt.moveaxis(x, 0, -1), lt.moveaxis(x, [0, 1], [-1, 0]), x.swapaxes(-1, 1)],
              {x: v})
    np.testing.assert_array_equal(got[0], np.swapaxes(v, 0, 2))
    np.testing.assert_array_equal(got[1], np.moveaxis(v, 0, -1))
    np.testing.assert_array_equal(got[2], np.moveaxis(v, [0, 1], [-1, 0]))
    np.testing.assert_array_equal(got[3], np.swapaxes(v, -1, 1))
    assert lt.moveaxis(x, 1, 1) is x


def test_axis_errors_name_the_argument():
    x = lt.matrix("x")
    with pytest.raises(np.exceptions.AxisError, match="axis2"):
        lt.swapaxes(x, 0, 2)
    with pytest.raises(ValueError, match="same number of elements"):
        lt.moveaxis(x, [0, 1], [1])
    with pytest.raises(ValueError, match="repeated axis in `source`"):
        lt.moveaxis(x, [0, 0], [0, 1])


def test_stacklists():
    a, b, c, d = lt.dscalars("abcd")
    out = run(lt.stacklists([[a, b], [c, d]]), {a: 1.0, b: 2.0, c: 3.0, d: 4.0})
    np.testing.assert_array_equal(out, [[1.0, 2.0], [3.0, 4.0]])
    m = lt.dmatrices("m")
    assert lt.stacklists([[m, m], [m, m]]).type.ndim == 4
    assert lt.stacklists(a) is a


def test_mgrid_and_ogrid_match_numpy():
    n = lt.lscalar("n")
    dense = lt.mgrid[0:n, 1:7:2]
    opened = lt.ogrid[0:n, 1:7:2]
    got = run([*dense, *opened, lt.mgrid[2:5]], {n: 4})
    ref = np.mgrid[0:4, 1:7:2]
    np.testing.assert_array_equal(got[0], ref[0])
    np.testing.assert_array_equal(got[1], ref[1])
    oref = np.ogrid[0:4, 1:7:2]
    np.testing.assert_array_equal(got[2], oref[0])
    np.testing.assert_array_equal(got[3], oref[1])
    np.testing.assert_array_equal(got[4], np.arange(2, 5))
    with pytest.raises(NotImplementedError, match="complex step"):
        lt.mgrid[0:1:5j]
    with pytest.raises(TypeError, match="slices"):
        lt.ogrid[3]


def test_gradients_flow_through():
    rng = np.random.default_rng(0)
    verify_grad(lambda x: lt.moveaxis(x, 0, 2) * np.arange(2.0), [rng.normal(size=(2, 3, 2))], rng=rng)
