"""DebugMode on random graphs: both paths draw from copies of the same generator state,
so a kernel that draws differently is caught, and a correct training step with
dropout runs clean."""

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
import lucent.tensor.random as ltr
from lucent.debugmode import DebugMode
from lucent.debugmode.errors import BadThunkOutput
from lucent.link.numba.dispatch import random as random_kernels
from lucent.link.numba.dispatch.basic import numba_funcify
from lucent.tensor.random.basic import NormalRV


class SkewedNormalRV(NormalRV):
    """A normal whose (deliberately wrong) Numba kernel scales every draw by 1.5."""

    name = "skewed_normal"

    def rng_fn(self, rng, loc, scale, size):
        return rng.normal(loc, scale, size=size)


@numba_funcify.register(SkewedNormalRV)
def _skewed_kernel(op, node, **kwargs):
    return random_kernels._scalar_kernel(op, node, "g.normal(x0, x1) * 1.5")


def test_wrong_kernel_is_a_bad_thunk_output_naming_the_distribution():
    rng = ltr.shared_rng(seed=3)
    nr, x = SkewedNormalRV()(0.0, 1.0, size=4, rng=rng, return_next_rng=True)
    f = lucent.function([], x, updates={rng: nr}, mode=DebugMode())
    with pytest.raises(BadThunkOutput) as info:
        f()
    message = str(info.value)
    assert "skewed_normal" in message
    # The generator was not advanced by the failed call.
    assert np.array_equal(rng.get_value().normal(size=2), np.random.default_rng(3).normal(size=2))


@pytest.mark.slow
def test_dropout_mlp_training_step_runs_clean_under_debugmode():
    rng = ltr.shared_rng(seed=0)
    init = np.random.default_rng(1)
    w1 = lucent.shared(init.normal(size=(6, 5)) * 0.3, name="w1")
    w2 = lucent.shared(init.normal(size=(5, 3)) * 0.3, name="w2")
    x = lt.matrix("x")
    y = lt.ivector("y")
    r1, mask = rng.bernoulli(0.8, size=(x.shape[0], 5))
    h = lt.maximum(lt.dot(x, w1), 0) * mask / 0.8
    logits = lt.dot(h, w2)
    log_p = logits - lt.log(lt.sum(lt.exp(logits), axis=1, keepdims=True))
    loss = -lt.mean(log_p[lt.arange(y.shape[0]), y])
    g1, g2 = lucent.grad(loss, [w1, w2])
    updates = [(w1, w1 - 0.1 * g1), (w2, w2 - 0.1 * g2), (rng, r1)]
    f = lucent.function([x, y], loss, updates=updates, mode=DebugMode())
    xv = init.normal(size=(4, 6))
    yv = np.array([0, 1, 2, 1], dtype="int32")
    before = w1.get_value().copy()
    state = rng.get_value().bit_generator.state
    losses = [float(f(xv, yv)) for _ in range(2)]
    assert all(np.isfinite(losses))
    assert not np.array_equal(before, w1.get_value())
    assert rng.get_value().bit_generator.state != state  # each step draws a new mask
