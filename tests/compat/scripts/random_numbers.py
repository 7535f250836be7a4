"""Random variables: generators as explicit state, distributions, RandomStream (PyTensor 3.3 API)."""

import warnings

import numpy as np

import pytensor
import pytensor.tensor as pt
import pytensor.tensor.random as ptr
from pytensor.tensor.random.basic import normal, poisson, multinomial, categorical, dirichlet
from pytensor.tensor.random.op import RandomVariable, default_rng
from pytensor.tensor.random.type import RandomGeneratorType, random_generator_type
from pytensor.tensor.random.utils import RandomStream, normalize_size_param
from pytensor.tensor.random.variable import (
    RandomGeneratorSharedVariable,
    RandomGeneratorVariable,
    rng as sym_rng,
    shared_rng,
)

warnings.simplefilter("ignore", DeprecationWarning)
warnings.simplefilter("ignore", FutureWarning)

# 1. The generator type and shared generators.
g = np.random.default_rng(42)
s = pytensor.shared(g)
assert isinstance(s, RandomGeneratorSharedVariable)
assert s.type == RandomGeneratorType() == random_generator_type
assert s.get_value() is not g and s.get_value(borrow=True) is not g
assert s.type.values_eq(s.get_value(), np.random.default_rng(42))
assert not s.type.values_eq(s.get_value(), np.random.default_rng(1))
assert s.type.may_share_memory(g, g) and not s.type.may_share_memory(g, np.random.default_rng(42))
assert s.type.filter(g) is g
assert s.type.filter(g.bit_generator.state) == g.bit_generator.state
try:
    s.type.filter(g.bit_generator.state, strict=True)
    raise AssertionError("strict filter accepted a dict")
except TypeError:
    pass
try:
    normal(rng=pytensor.shared(np.random.RandomState(0)))
    raise AssertionError("RandomState accepted")
except TypeError:
    pass
s2 = shared_rng(seed=42)
s2.set_value(seed=3)
assert s2.type.values_eq(s2.get_value(), np.random.default_rng(3))

# 2. The RandomVariable op: shapes, signature, dtype, next rng, no gradient.
r = sym_rng("r")
assert isinstance(r, RandomGeneratorVariable)
next_r, x = r.normal(np.zeros((2, 1)), np.ones(3))
assert isinstance(x.owner.op, RandomVariable)
assert x.owner.op.signature == "(),()->()" and x.owner.op.ndim_supp == 0
assert x.type.shape == (2, 3) and next_r.type == random_generator_type
assert str(x.owner.op) == 'normal_rv{"(),()->()"}'
assert normal.dtype == "floatX" and poisson.dtype == "int64"
_, m = sym_rng().multinomial(5, np.full((4, 3), 1 / 3))
assert m.type.shape == (4, 3) and multinomial.signature == "(),(p)->(p)"
assert categorical.signature == "(p)->()" and dirichlet.signature == "(a)->(a)"
mu = pt.dscalar("mu")
_, y = sym_rng().normal(mu, 1.0)
try:
    pytensor.grad(y, mu)
    raise AssertionError("a random draw has no gradient")
except Exception as e:
    assert "normal" in str(e) or "random" in str(e).lower()
size = normalize_size_param((2, 3))
assert size.type.dtype == "int64" and size.type.shape == (2,)

f = pytensor.function([pytensor.In(r, mutable=True)], [next_r, x])
new_state, draw = f(np.random.default_rng(1))
ref = np.random.default_rng(1).normal(np.zeros((2, 1)), np.ones(3))
np.testing.assert_array_equal(draw, ref)
assert isinstance(new_state, np.random.Generator)

# Bad parameters raise ValueError and leave the generator where it was.
sd = pt.dscalar("sd")
rng = shared_rng(seed=7)
nr, z = rng.normal(0.0, sd, size=3)
fz = pytensor.function([sd], z, updates={rng: nr}, mode="FAST_COMPILE")
before = rng.get_value().bit_generator.state
try:
    fz(-1.0)
    raise AssertionError("negative scale accepted")
except ValueError:
    pass
assert rng.get_value().bit_generator.state == before
np.testing.assert_array_equal(fz(1.0), np.random.default_rng(7).normal(0.0, 1.0, size=3))

# 3. Distributions: names, parameter order and defaults, dtypes.
rng = shared_rng(seed=0)
r1, u = rng.uniform(size=4)
r2, k = r1.integers(10, size=4)
r3, c = r2.choice(5, size=3, replace=False)
r4, p = r3.permutation(4)
r5, gm = r4.gamma(2.0, scale=3.0, size=2)
r6, b = r5.bernoulli(0.5, size=3)
fd = pytensor.function([], [u, k, c, p, gm, b], updates={rng: r6}, mode="FAST_COMPILE")
uv, kv, cv, pv, gv, bv = fd()
assert uv.shape == (4,) and ((0 <= uv) & (uv < 1)).all()
assert kv.dtype == np.int64 and ((0 <= kv) & (kv < 10)).all()
assert len(set(cv.tolist())) == 3 and sorted(pv.tolist()) == [0, 1, 2, 3]
assert (gv > 0).all() and set(bv.tolist()) <= {0, 1}
for name in ["bernoulli", "beta", "betabinom", "binomial", "categorical", "cauchy", "chisquare",
             "choice", "dirichlet", "exponential", "gamma", "gengamma", "geometric", "gumbel",
             "halfcauchy", "halfnormal", "hypergeometric", "integers", "invgamma", "laplace",
             "logistic", "lognormal", "multinomial", "multivariate_normal", "nbinom",
             "negative_binomial", "normal", "pareto", "permutation", "poisson", "standard_normal",
             "t", "triangular", "truncexpon", "uniform", "vonmises", "wald", "weibull"]:
    assert callable(getattr(ptr, name)), name

# 4. Functional API and RandomStream.
rng = shared_rng(np.random.default_rng(153), name="rng")
next_rng, x = rng.normal()
fx = pytensor.function([], x, updates={rng: next_rng}, mode="FAST_COMPILE")
first = fx()
assert first != fx()
rng.set_value(np.random.default_rng(153))
assert fx() == first
rng_reused = sym_rng()
rng_reused.normal()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    rng_reused.normal()
assert any("already been used" in str(w.message) for w in caught)

srs = RandomStream(seed=123)
v = srs.normal(0, 1, size=(2,))
fv = pytensor.function([], v, mode="FAST_COMPILE")
gv_ = pytensor.function([], v, mode="FAST_COMPILE")
v1, v2, v3 = fv(), gv_(), fv()
assert not np.array_equal(v1, v2) and not np.array_equal(v2, v3)
fixed = pytensor.function([], v, no_default_updates=True, mode="FAST_COMPILE")
assert np.array_equal(fixed(), fixed())
srs.seed(123)
np.testing.assert_array_equal(fv(), v1)
assert len(srs.updates()) == 1

# 5. Both execution paths draw the same numbers from the same state.
outs = {}
for mode in ["FAST_COMPILE", "FAST_RUN"]:
    rng = shared_rng(seed=9)
    ra, da = rng.gamma(np.array([0.5, 3.0]), scale=2.0, size=(3, 2))
    rb_, db = ra.binomial(10, 0.3, size=4)
    fm = pytensor.function([], [da, db], updates={rng: rb_}, mode=mode)
    outs[mode] = [fm(), fm()]
for x1, x2 in zip(outs["FAST_COMPILE"], outs["FAST_RUN"]):  # lucent: bit-identical
    for a_, b_ in zip(x1, x2):
        np.testing.assert_allclose(a_, b_, rtol=1e-12)

# default_rng op makes a generator from a seed.
gen = pytensor.function([], default_rng(pt.constant(5)), mode="FAST_COMPILE")()
assert isinstance(gen, np.random.Generator)
assert random_generator_type.values_eq(gen, np.random.default_rng(5))

# 6. Dropout masks: Bernoulli draws chained on one shared generator, a new mask each
#    call. The reference path draws NumPy's binomial(1, p) (p on every branch of its
#    one-trial algorithm: 0, below and above one half, 1); the fast path draws masks of
#    0s and 1s that the masked values agree with (lucent's are NumPy's numbers too).
probs = np.array([0.0, 0.2, 0.8, 1.0])
for mode in ["FAST_COMPILE", "FAST_RUN"]:
    rng = pytensor.shared(np.random.default_rng(7))
    x = pt.dmatrix("x")
    r1, m1 = ptr.bernoulli(0.5, size=x.shape, rng=rng, return_next_rng=True)
    r2, m2 = ptr.bernoulli(probs, size=x.shape, rng=r1, return_next_rng=True)
    fd = pytensor.function([x], [pt.tanh(x) * m1 / 0.5, m1, m2], updates={rng: r2}, mode=mode)
    g = np.random.default_rng(7)
    xv = np.linspace(-1, 1, 400).reshape(100, 4)
    first = fd(xv)
    second = fd(xv)
    assert not np.array_equal(first[1], second[1])  # the generator was advanced
    for h, mask1, mask2 in (first, second):
        assert mask1.dtype == mask2.dtype == np.int64
        np.testing.assert_allclose(h, np.tanh(xv) * mask1 / 0.5)
        assert set(np.unique(mask1)) <= {0, 1} and 0.3 < mask1.mean() < 0.7
        assert (mask2[:, 0] == 0).all() and (mask2[:, 3] == 1).all()
        if mode == "FAST_COMPILE":
            np.testing.assert_array_equal(mask1, g.binomial(1, 0.5, size=(100, 4)))
            np.testing.assert_array_equal(mask2, g.binomial(1, probs, size=(100, 4)))
