"""Every distribution, drawn on both paths: same numbers as NumPy/SciPy and as each other."""

import warnings

import numpy as np
import pytest
import scipy.stats as st

import lucent
import lucent.tensor as lt
import lucent.tensor.random as ltr
from lucent.tensor.random import basic as rb

#: name -> (draw(rng) returning (next_rng, draw), expected dtype, reference(np_generator) or None)
CASES = {
    "uniform": (lambda r: r.uniform(np.array([0.0, 1.0]), 3.0, size=(3, 2)), "float64",
                lambda g: g.uniform([0.0, 1.0], 3.0, size=(3, 2))),
    "triangular": (lambda r: r.triangular(0.0, np.array([0.5, 1.0]), 2.0, size=(2, 2)), "float64",
                   lambda g: g.triangular(0.0, [0.5, 1.0], 2.0, size=(2, 2))),
    "beta": (lambda r: r.beta(np.array([0.5, 2.0]), 3.0), "float64",
             lambda g: g.beta([0.5, 2.0], 3.0)),
    "normal": (lambda r: r.normal(np.array([[0.0], [5.0]]), np.array([1.0, 2.0, 3.0])), "float64",
               lambda g: g.normal([[0.0], [5.0]], [1.0, 2.0, 3.0])),
    "halfnormal": (lambda r: r.halfnormal(1.0, 2.0, size=(4,)), "float64", None),
    "lognormal": (lambda r: r.lognormal(0.5, 2.0, size=(4,)), "float64", None),
    "gamma": (lambda r: r.gamma(np.array([0.5, 2.5]), scale=1.5, size=(3, 2)), "float64",
              lambda g: g.gamma([0.5, 2.5], 1.5, size=(3, 2))),
    "chisquare": (lambda r: r.chisquare(3.0, size=4), "float64", None),
    "pareto": (lambda r: r.pareto(2.0, 3.0, size=5), "float64", None),
    "gumbel": (lambda r: r.gumbel(0.5, 2.0, size=5), "float64", None),
    "exponential": (lambda r: r.exponential(2.0, size=5), "float64", lambda g: g.exponential(2.0, size=5)),
    "weibull": (lambda r: r.weibull(2.0, size=5), "float64", None),
    "logistic": (lambda r: r.logistic(0.5, 2.0, size=5), "float64", None),
    "vonmises": (lambda r: r.vonmises(0.5, 2.0, size=5), "float64", None),
    "multivariate_normal": (lambda r: r.multivariate_normal(np.zeros(3), np.eye(3), size=(2,)), "float64", None),
    "dirichlet": (lambda r: r.dirichlet(np.array([[0.5, 1.0, 2.0], [0.05, 0.02, 0.01]])), "float64", None),
    "poisson": (lambda r: r.poisson(np.array([1.0, 40.0]), size=(3, 2)), "int64",
                lambda g: g.poisson([1.0, 40.0], size=(3, 2))),
    "geometric": (lambda r: r.geometric(0.3, size=5), "int64", None),
    "hypergeometric": (lambda r: r.hypergeometric(10, 5, 7, size=5), "int64",
                       lambda g: g.hypergeometric(10, 5, 7, size=5)),
    "cauchy": (lambda r: r.cauchy(0.5, 2.0, size=5), "float64", None),
    "halfcauchy": (lambda r: r.halfcauchy(0.5, 2.0, size=5), "float64", None),
    "invgamma": (lambda r: r.invgamma(2.0, 3.0, size=5), "float64", None),
    "wald": (lambda r: r.wald(1.0, 2.0, size=5), "float64", None),
    "truncexpon": (lambda r: r.truncexpon(2.0, 0.5, 2.0, size=5), "float64", None),
    "t": (lambda r: r.t(3.0, 0.5, 2.0, size=5), "float64", None),
    "bernoulli": (lambda r: r.bernoulli(np.array([0.1, 0.9]), size=(3, 2)), "int64", None),
    "laplace": (lambda r: r.laplace(0.5, 2.0, size=5), "float64", None),
    "binomial": (lambda r: r.binomial(np.array([10, 1000]), 0.3, size=(2, 2)), "int64",
                 lambda g: g.binomial([10, 1000], 0.3, size=(2, 2))),
    "negative_binomial": (lambda r: r.negative_binomial(3, 0.3, size=5), "int64", None),
    "betabinom": (lambda r: r.betabinom(10, 2.0, 3.0, size=5), "int64", None),
    "gengamma": (lambda r: r.gengamma(2.0, 1.5, 3.0, size=5), "float64", None),
    "multinomial": (lambda r: r.multinomial(np.array([10, 20]), np.array([0.2, 0.3, 0.5])), "int64", None),
    "categorical": (lambda r: r.categorical(np.array([[0.2, 0.3, 0.5], [0.9, 0.05, 0.05]]), size=(3, 2)),
                    "int64", None),
    "integers": (lambda r: r.integers(0, np.array([10, 1000]), size=(3, 2)), "int64",
                 lambda g: g.integers(0, [10, 1000], size=(3, 2))),
    "choice": (lambda r: r.choice(10, size=(3,), replace=False), "int8", None),
    "permutation": (lambda r: r.permutation(np.arange(6.0)), "float64", None),
}


def _draw_all(mode, seed=3):
    """One function drawing every case in sequence from one shared generator; two calls."""
    rng = ltr.shared_rng(seed=seed)
    r, outs = rng, []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for draw, _, _ in CASES.values():
            r, x = draw(r)
            outs.append(x)
    f = lucent.function([], outs, updates={rng: r}, mode=mode)
    first, second = f(), f()
    return first, second, rng.get_value().bit_generator.state


@pytest.fixture(scope="module")
def draws():
    return {mode: _draw_all(mode) for mode in ("FAST_COMPILE", "FAST_RUN")}


@pytest.mark.slow
def test_paths_draw_identical_numbers(draws):
    (a1, b1, s1), (a2, b2, s2) = draws["FAST_COMPILE"], draws["FAST_RUN"]
    assert s1 == s2
    for name, x, y, x2, y2 in zip(CASES, a1, a2, b1, b2):
        assert x.dtype == y.dtype == np.dtype(CASES[name][1]), name
        np.testing.assert_array_equal(x, y, err_msg=name)
        np.testing.assert_array_equal(x2, y2, err_msg=name)
        assert not np.array_equal(x, x2) or x.size == 1 or name in ("choice", "permutation"), name


def test_first_draw_is_numpys():
    """A draw alone from a fresh generator gives NumPy's numbers for the same call."""
    for name, (draw, _, ref) in CASES.items():
        if ref is None:
            continue
        rng = ltr.shared_rng(seed=11)
        _, x = draw(rng)
        f = lucent.function([], x, mode="FAST_COMPILE")
        np.testing.assert_array_equal(f(), ref(np.random.default_rng(11)), err_msg=name)


@pytest.mark.slow
def test_scipy_families_match_scipy():
    g = np.random.default_rng(5)
    ref = st.halfcauchy.rvs(loc=0.5, scale=np.float32(2.0), size=5, random_state=g)
    rng = ltr.shared_rng(seed=5)
    _, x = rng.halfcauchy(0.5, 2.0, size=5)
    np.testing.assert_array_equal(lucent.function([], x, mode="FAST_RUN")(), ref)


@pytest.mark.parametrize(
    "name, dist, args",
    [("normal", st.norm(1.0, 2.0), (1.0, 2.0)), ("gamma", st.gamma(2.0, scale=3.0), (2.0, 3.0)),
     ("beta", st.beta(2.0, 5.0), (2.0, 5.0)), ("exponential", st.expon(scale=2.0), (2.0,))],
)
def test_ks_against_scipy(name, dist, args):
    rng = ltr.shared_rng(seed=123)
    fn = rb._gamma if name == "gamma" else getattr(rb, name)
    _, x = fn(*args, size=4000, rng=rng, return_next_rng=True)
    sample = lucent.function([], x, mode="FAST_COMPILE")()
    assert st.kstest(sample, dist.cdf).pvalue > 0.01


def test_defaults_dtypes_and_shapes():
    rng = ltr.rng("r")
    _, x = rng.normal(size=(2, 3))
    assert x.type.shape == (2, 3) and x.type.dtype == lucent.config.floatX
    _, k = ltr.rng().poisson(np.ones(4))
    assert k.type.dtype == "int64" and k.type.shape == (4,)
    _, m = ltr.rng().multivariate_normal(np.zeros((5, 3)), np.eye(3))
    assert m.type.shape == (5, 3)
    _, i = ltr.rng().integers(5, size=2)
    f = lucent.function([ltr.rng("r2")], [], on_unused_input="ignore")
    assert f is not None
    with pytest.raises(ValueError, match="Cannot change the dtype"):
        rb.normal(0, 1, dtype="int64", rng=ltr.rng(), return_next_rng=True)
    with pytest.raises(ValueError, match="Must specify scale"):
        rb.gamma(1.0)


def test_gamma_rate_is_deprecated():
    with pytest.warns(FutureWarning):
        rb.gamma(2.0, rate=2.0, rng=ltr.rng(), return_next_rng=True)


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "FAST_RUN"])
def test_bad_parameters_name_the_distribution_and_keep_the_state(mode):
    s = lt.dscalar("s")
    p = lt.dvector("p")
    rng = ltr.shared_rng(seed=2)
    r1, x = rng.normal(0.0, s, size=3)
    r2, c = r1.multinomial(5, p)
    f = lucent.function([s, p], [x, c], updates={rng: r2}, mode=mode)
    state = rng.get_value().bit_generator.state
    with pytest.raises(ValueError, match="normal: parameter scale"):
        f(-1.0, np.array([0.5, 0.5]))
    assert rng.get_value().bit_generator.state == state
    with pytest.raises(ValueError, match="multinomial: parameter p"):
        f(1.0, np.array([0.9, 0.9]))  # NumPy itself would accept this
    with pytest.raises(ValueError, match="multinomial: parameter p"):
        f(1.0, np.array([1.5, -0.5]))
    assert rng.get_value().bit_generator.state == state
    f(1.0, np.array([0.5, 0.5]))
    assert rng.get_value().bit_generator.state != state


@pytest.mark.parametrize("mode", ["FAST_COMPILE", pytest.param("FAST_RUN", marks=pytest.mark.slow)])
def test_size_must_broadcast(mode):
    n = lt.lvector("n")
    mu = lt.dvector("mu")
    rng = ltr.shared_rng(seed=2)
    r, x = rng.normal(mu, 1.0, size=n.shape)
    f = lucent.function([mu, n], x, updates={rng: r}, mode=mode)
    assert f(np.zeros(3), np.zeros(3, "int64")).shape == (3,)
    with pytest.raises(ValueError, match="normal"):
        f(np.zeros(3), np.zeros(2, "int64"))


def test_rayleigh_and_standard_normal():
    rng = ltr.shared_rng(seed=1)
    r, x = rb.rayleigh(2.0, size=3, rng=rng, return_next_rng=True)
    r2, z = rb.standard_normal(size=2, rng=r, return_next_rng=True)
    a, b = lucent.function([], [x, z], mode="FAST_COMPILE")()
    g = np.random.default_rng(1)
    np.testing.assert_allclose(a, np.sqrt(g.gamma(1.0, 2.0, size=3)) * 2.0)
    np.testing.assert_array_equal(b, g.normal(size=2))


@pytest.mark.slow
def test_debugmode_runs_both_paths_from_the_same_state():
    rng = ltr.shared_rng(seed=1)
    nr, x = rng.normal(0.0, 1.0, size=3)
    f = lucent.function([], x, updates={rng: nr}, mode="DebugMode")
    g = np.random.default_rng(1)
    np.testing.assert_array_equal(f(), g.normal(size=3))
    np.testing.assert_array_equal(f(), g.normal(size=3))


def test_profiler_sizes_generators():
    from lucent.tensor.random.type import random_generator_type

    g = np.random.default_rng(0)
    info = random_generator_type.get_shape_info(g)
    assert random_generator_type.get_size(info) >= 32
