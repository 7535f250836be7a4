"""RandomStream: seeding, default updates, functions sharing a stream; both paths."""

import warnings

import numpy as np
import pytest

import lucent
from lucent.tensor.random.utils import RandomStream, normalize_size_param, params_broadcast_shapes


def _stream(seed=123):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return RandomStream(seed=seed)


@pytest.mark.parametrize("mode", ["FAST_COMPILE", pytest.param("FAST_RUN", marks=pytest.mark.slow)])
def test_stream_semantics(mode):
    s = _stream()
    x = s.normal(0, 1, size=(3,))
    f = lucent.function([], x, mode=mode)
    g = lucent.function([], x, mode=mode)
    a, b, c = f(), g(), f()
    assert not np.array_equal(a, b) and not np.array_equal(b, c)
    fixed = lucent.function([], x, no_default_updates=True, mode=mode)
    assert np.array_equal(fixed(), fixed())
    s.seed(123)
    np.testing.assert_array_equal(f(), a)
    [(shared, nxt)] = s.updates()
    assert shared.default_update is nxt
    # The numbers are NumPy's from the spawned seed.
    (seed,) = np.random.SeedSequence(123).spawn(1)
    np.testing.assert_array_equal(a, np.random.default_rng(seed).normal(0, 1, size=(3,)))


def test_stream_errors_and_deprecation():
    with pytest.warns(FutureWarning, match="deprecated"):
        RandomStream(1)
    s = _stream()
    with pytest.raises(AttributeError, match="No attribute"):
        s.not_a_distribution
    with pytest.raises(ValueError, match="rng"):
        s.normal(rng=None)


def test_size_and_broadcast_helpers():
    assert normalize_size_param(None).type.__class__.__name__ == "NoneTypeT"
    assert normalize_size_param(3).type.shape == (1,)
    assert normalize_size_param((2, 3)).type.dtype == "int64"
    with pytest.raises(TypeError, match="size"):
        normalize_size_param(2.5)
    assert params_broadcast_shapes([(3, 1), (4,)], [0, 0], use_pytensor=False) == [(3, 4), (3, 4)]
    assert params_broadcast_shapes([(2,), (5, 3, 3)], [1, 2], use_pytensor=False) == [(5, 2), (5, 3, 3)]
