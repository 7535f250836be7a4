"""Native Numba kernels of vonmises, wald, truncexpon and permutation: the same bits as
NumPy/SciPy on every branch of their algorithms, from the same generator state."""

import warnings

import numpy as np
import pytest

import lucent
import lucent.tensor.random as ltr
from lucent.link.numba.dispatch.basic import NoNumbaImplementation, numba_funcify
from lucent.tensor.random import basic as rb

CASES = [
    # every branch of NumPy's von Mises: uniform (kappa < 1e-8), Taylor (< 1e-5),
    # rejection, wrapped normal (> 1e6); means near +-pi wrap around.
    lambda r: rb.vonmises(np.array([0.3, -3.1, 3.1]), np.array([[1e-9], [1e-6], [0.5], [200.0], [1e7]]),
                          rng=r, return_next_rng=True),
    lambda r: rb.vonmises(np.float32(0.3), np.float32(2.5), size=(4,), rng=r, return_next_rng=True),
    lambda r: rb.wald(np.array([0.7, 2.0, 1e8]), np.array([[2.0], [0.1]]), rng=r, return_next_rng=True),
    lambda r: rb.truncexpon(np.array([0.5, 2.0, 7.0]), 1.0, 2.0, size=(4, 3), rng=r, return_next_rng=True),
    lambda r: rb.truncexpon(np.array([0.5, 7.0], dtype="float32"), np.float32(1.0), np.float32(2.0),
                            rng=r, return_next_rng=True),
    lambda r: rb.permutation(7, rng=r, return_next_rng=True),
    lambda r: rb.permutation(np.arange(12).reshape(4, 3), rng=r, return_next_rng=True),
    lambda r: rb.permutation(np.arange(6.0), size=(2,), rng=r, return_next_rng=True),
]


def _draw(mode):
    rng = ltr.shared_rng(seed=11)
    r, outs = rng, []
    for make in CASES:
        r, x = make(r)
        outs.append(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no object-mode fallback on FAST_RUN
        f = lucent.function([], outs, updates={rng: r}, mode=mode)
    return f(), f(), outs


@pytest.mark.slow
def test_new_kernels_match_perform_bit_for_bit():
    ref1, ref2, _ = _draw("FAST_COMPILE")
    fast1, fast2, outs = _draw("FAST_RUN")
    for k, (a, b, c, d) in enumerate(zip(ref1, fast1, ref2, fast2)):
        assert a.dtype == b.dtype and a.shape == b.shape, k
        np.testing.assert_array_equal(a, b, err_msg=str(k))
        np.testing.assert_array_equal(c, d, err_msg=str(k))
    # The first draws are NumPy's and SciPy's own.
    g = np.random.default_rng(11)
    np.testing.assert_array_equal(
        ref1[0], g.vonmises([0.3, -3.1, 3.1], [[1e-9], [1e-6], [0.5], [200.0], [1e7]])
    )
    for x in outs:
        node = x.owner
        numba_funcify(node.op, node)  # a native kernel: no NoNumbaImplementation


@pytest.mark.parametrize("make", [
    lambda r: rb.multivariate_normal(np.zeros(2), np.eye(2), rng=r),
    lambda r: rb.hypergeometric(10, 5, 7, rng=r),
    lambda r: rb.choice(10, size=(3,), replace=False, rng=r),
])
def test_families_without_exact_kernels_say_so(make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = make(ltr.shared_rng(seed=0))
    node = x.owner
    with pytest.raises(NoNumbaImplementation, match="no exact Numba kernel"):
        numba_funcify(node.op, node)
