"""RandomGeneratorType: filtering, comparing and sizing generator values; shared generators."""

import numpy as np
import pytest

import lucent
import lucent.tensor.random  # noqa: F401
from lucent.tensor.random.type import RandomGeneratorType, as_rng, random_generator_type
from lucent.tensor.random.variable import RandomGeneratorSharedVariable, rng, shared_rng


def test_filter_accepts_generators_and_state_dicts():
    g = np.random.default_rng(0)
    t = RandomGeneratorType()
    assert t == random_generator_type and hash(t) == hash(random_generator_type)
    assert t.filter(g) is g
    state = g.bit_generator.state
    assert t.filter(state) is state
    with pytest.raises(TypeError, match="Generator"):
        t.filter(state, strict=True)
    with pytest.raises(TypeError, match="bit_generator"):
        t.filter({"state": {}})
    with pytest.raises(TypeError, match="lacks"):
        t.filter({"bit_generator": "PCG64", "state": {}})
    with pytest.raises(TypeError, match="RandomState"):
        t.filter(np.random.RandomState(0))


def test_values_eq_compares_states_and_memory():
    t = random_generator_type
    a, b = np.random.default_rng(1), np.random.default_rng(1)
    assert t.values_eq(a, b) and t.values_eq_approx(a, b)
    assert t.values_eq(a, b.bit_generator.state)
    b.normal()
    assert not t.values_eq(a, b)
    assert t.may_share_memory(a, a) and not t.may_share_memory(a, np.random.default_rng(1))
    assert t.get_size(t.get_shape_info(a)) > 0


def test_shared_generators_copy_unless_borrowed():
    g = np.random.default_rng(42)
    s = lucent.shared(g, name="s")
    assert isinstance(s, RandomGeneratorSharedVariable) and s.type == random_generator_type
    assert s.get_value(borrow=True) is not g
    assert s.get_value() is not s.get_value(borrow=True)
    assert random_generator_type.values_eq(s.get_value(), g)
    sb = lucent.shared(g, borrow=True)
    assert sb.get_value(borrow=True) is g
    s.set_value(seed=3)
    assert random_generator_type.values_eq(s.get_value(), np.random.default_rng(3))
    with pytest.raises(ValueError, match="both"):
        shared_rng(g, seed=1)
    with pytest.raises(ValueError, match="one of"):
        shared_rng()
    # Declined (a generic shared variable holds it), and it is no generator.
    with pytest.raises(TypeError, match="RandomGeneratorType"):
        lucent.tensor.random.normal(rng=lucent.shared(np.random.RandomState(0)), return_next_rng=True)


def test_as_rng():
    r = rng("r")
    assert as_rng(r) is r
    with pytest.raises(TypeError, match="shared_rng"):
        as_rng(np.random.default_rng())
    with pytest.raises(TypeError, match="must not be None"):
        as_rng(None)
