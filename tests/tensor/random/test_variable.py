"""The functional API: generator variables' methods, return_next_rng, reuse warnings."""

import warnings

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
import lucent.tensor.random as ltr
from lucent.tensor.random.variable import RandomGeneratorVariable


def test_methods_return_next_rng_and_draw():
    r = ltr.rng("r")
    assert isinstance(r, RandomGeneratorVariable)
    nr, x = r.normal(1.0, 2.0, size=3)
    assert isinstance(nr, RandomGeneratorVariable) and nr.owner is x.owner
    f = lucent.function([lucent.In(r, mutable=True)], [nr, x], mode="FAST_COMPILE")
    g, d = f(np.random.default_rng(5))
    np.testing.assert_array_equal(d, np.random.default_rng(5).normal(1.0, 2.0, size=3))
    assert isinstance(g, np.random.Generator)


def test_reuse_warns():
    r = ltr.rng()
    r.normal()
    with pytest.warns(UserWarning, match="already been used"):
        r.normal()


def test_return_next_rng_flag_and_deprecations():
    r = ltr.rng()
    with pytest.warns(DeprecationWarning, match="return_next_rng"):
        ltr.normal(rng=r)
    nr, x = ltr.poisson(3.0, rng=ltr.rng(), return_next_rng=True)
    assert x.type.dtype == "int64"
    with pytest.warns(DeprecationWarning, match="explicit rng"):
        ltr.normal(return_next_rng=True)


def test_default_rng_op():
    gen = lucent.function([], ltr.default_rng(lt.constant(5)), mode="FAST_COMPILE")()
    assert ltr.type.random_generator_type.values_eq(gen, np.random.default_rng(5))


def test_shared_generator_advances_each_call_and_between_functions():
    r = ltr.shared_rng(seed=4)
    nr, x = r.uniform(size=2)
    f = lucent.function([], x, updates={r: nr}, mode="FAST_COMPILE")
    g = lucent.function([], x, updates={r: nr}, mode="FAST_COMPILE")
    ref = np.random.default_rng(4)
    np.testing.assert_array_equal(f(), ref.uniform(size=2))
    np.testing.assert_array_equal(g(), ref.uniform(size=2))
    np.testing.assert_array_equal(f(), ref.uniform(size=2))
