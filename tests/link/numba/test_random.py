"""Tests of lucent/link/numba/dispatch/random.py: the generated draw kernels.

The kernels must give NumPy's own numbers (bit for bit) while avoiding
NumPy's per-call costs; these tests pin the fast paths that do so - the
binomial inversion for one trial (a Bernoulli draw), parameters converted
to double before the draw, the generator copy of a draw that is not in
place - against NumPy's ``Generator`` and against ``perform``.
"""

import sys

import numpy as np
import pytest

pytest.importorskip("numba")

import numba  # noqa: E402

import lucent  # noqa: E402
import lucent.tensor as lt  # noqa: E402
from lucent.link.numba.dispatch.random import generator_copy  # noqa: E402
from lucent.tensor import random as lr  # noqa: E402
from lucent.tensor.random.type import random_generator_type  # noqa: E402

#: Every branch of NumPy's binomial for one trial: no success possible (p = 0),
#: inversion with p (p <= 0.5) and 1 - inversion with 1 - p (p > 0.5), extreme tails.
PROBS = np.array([0.0, 1.0, 0.5, 0.3, 0.7, 1e-300, 1 - 1e-16, 0.9999999, 0.2])
COUNTS = np.array([0, 1, 5, 100, 1000, 1, 7, 3, 200])  # 100 and more: BTPE


def _draws():
    """One function drawing every case, from a generator argument (so not in place)."""
    rng = random_generator_type("rng")
    p, n = lt.dvector("p"), lt.lvector("n")
    ps, p32 = lt.dscalar("ps"), lt.fscalar("p32")
    r, per_column = lr.bernoulli(p, size=(2000, PROBS.size), rng=rng, return_next_rng=True)
    r, one_p = lr.bernoulli(ps, size=(5000,), rng=r, return_next_rng=True)
    r, binom = lr.binomial(n, p, size=(50, PROBS.size), rng=r, return_next_rng=True)
    r, normal32 = lr.normal(p32, p32, size=(1000,), rng=r, return_next_rng=True)
    return [rng, p, n, ps, p32], [r, per_column, one_p, binom, normal32]


@pytest.fixture(scope="module")
def compiled():
    inputs, outputs = _draws()
    return {mode: lucent.function(inputs, outputs, mode=mode) for mode in ("FAST_COMPILE", "FAST_RUN")}


def _numpy_draws(seed, ps):
    g = np.random.default_rng(seed)
    return [
        g.binomial(1, PROBS, size=(2000, PROBS.size)),
        g.binomial(1, ps, size=(5000,)),
        g.binomial(COUNTS, PROBS, size=(50, PROBS.size)),
        g.normal(np.float32(0.25), np.float32(0.25), size=(1000,)),
    ]


@pytest.mark.parametrize("ps", [0.5, 0.0, 1.0, 0.9999999, 1e-300])
def test_bernoulli_and_binomial_draws_are_numpys_on_both_paths(compiled, ps):
    for seed in (0, 5):
        expected = _numpy_draws(seed, ps)
        for mode, f in compiled.items():
            given = np.random.default_rng(seed)
            state = given.bit_generator.state
            next_rng, *draws = f(given, PROBS, COUNTS, ps, np.float32(0.25))
            for k, (got, want) in enumerate(zip(draws, expected)):
                assert got.dtype == want.dtype, (mode, k)
                np.testing.assert_array_equal(got, want, err_msg=f"{mode}, draw {k}")
            # The draws advanced a copy: the generator passed in is where it was.
            assert given.bit_generator.state == state and next_rng is not given
            want_state = np.random.default_rng(seed)
            _numpy_draws_from(want_state, ps)
            assert next_rng.bit_generator.state == want_state.bit_generator.state


def _numpy_draws_from(g, ps):
    g.binomial(1, PROBS, size=(2000, PROBS.size))
    g.binomial(1, ps, size=(5000,))
    g.binomial(COUNTS, PROBS, size=(50, PROBS.size))
    g.normal(np.float32(0.25), np.float32(0.25), size=(1000,))


def test_copying_kernels_keep_no_reference(compiled):
    f = compiled["FAST_RUN"]
    given = np.random.default_rng(3)
    f(given, PROBS, COUNTS, 0.5, np.float32(1.0))
    before = sys.getrefcount(given)
    for _ in range(200):
        next_rng = f(given, PROBS, COUNTS, 0.5, np.float32(1.0))[0]
    assert sys.getrefcount(given) == before
    assert sys.getrefcount(next_rng) == 2  # the name and getrefcount's argument


def test_generator_copy_makes_an_independent_generator_in_the_same_state():
    @numba.njit
    def copy_and_draw(g):
        c = generator_copy(g)
        return c, c.standard_normal()

    g = np.random.default_rng(9)
    state = g.bit_generator.state
    c, x = copy_and_draw(g)
    assert isinstance(c, np.random.Generator) and c is not g
    assert c.bit_generator is not g.bit_generator
    assert g.bit_generator.state == state  # the original did not move
    assert x == np.random.default_rng(9).standard_normal()
    assert c.bit_generator.state != state


def test_in_place_bernoulli_draws_with_a_shared_generator_match_numpy():
    """The dropout pattern: two masks chained on one shared generator, updated each call."""
    rng = lucent.shared(np.random.default_rng(7))
    r1, m1 = lr.bernoulli(0.5, size=(64, 33), rng=rng, return_next_rng=True)
    r2, m2 = lr.bernoulli(0.25, size=(64, 33), rng=r1, return_next_rng=True)
    f = lucent.function([], [m1.sum(0), m2], updates=[(rng, r2)], mode="FAST_RUN")
    g = np.random.default_rng(7)
    for _ in range(2):
        s1, mask2 = f()
        np.testing.assert_array_equal(s1, g.binomial(1, 0.5, size=(64, 33)).sum(0))
        np.testing.assert_array_equal(mask2, g.binomial(1, 0.25, size=(64, 33)))
    assert rng.get_value(borrow=True).bit_generator.state == g.bit_generator.state
