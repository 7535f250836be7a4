"""The ops that only change gradients: zero_grad, disconnected_grad, undefined_grad, grad_clip, grad_scale."""

import warnings

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.gradient import (
    GradClip,
    GradScale,
    NullTypeGradError,
    UndefinedGrad,
    grad,
    grad_clip,
    grad_scale,
    pushforward,
    undefined_grad,
    zero_grad,
    zero_grad_,
)
from tests.helpers import run

rng = np.random.default_rng(2)


def test_grad_clip():
    x = lt.dvector("x")
    xv = np.array([-3.0, 0.1, 2.0])
    g = grad(lt.sum(grad_clip(x, -1, 1) ** 2), x)
    np.testing.assert_allclose(run(g, {x: xv}), np.clip(2 * xv, -1, 1))
    np.testing.assert_allclose(run(grad_clip(x, -1, 1), {x: xv}), xv)  # values pass through
    assert isinstance(grad_clip(x, -1, 1).owner.op, GradClip)
    with pytest.raises(ValueError, match="clip_upper_bound"):
        grad_clip(x, 1, -1)


def test_grad_scale():
    x = lt.dscalar("x")
    g = grad(grad_scale(lt.sin(x), -2.0), x)
    assert run(g, {x: np.array(2.0)}) == pytest.approx(-2 * np.cos(2.0))
    assert isinstance(grad_scale(x, 2.0).owner.op, GradScale)


def test_undefined_grad():
    x = lt.dvector("x")
    y = undefined_grad(x)
    assert isinstance(y.owner.op, UndefinedGrad)
    with pytest.raises(NullTypeGradError, match="undefined"):
        grad(lt.sum(y), x)
    np.testing.assert_allclose(run(y * 2, {x: np.ones(2)}), [2.0, 2.0])


def test_zero_grad_pushforward():
    x, v = lt.dvector("x"), lt.dvector("v")
    assert zero_grad(x).owner.op is zero_grad_
    jvp = pushforward(zero_grad(x) * x, x, v, use_op_pushforward=True)
    xv, vv = rng.random(2), rng.random(2)
    np.testing.assert_allclose(run(jvp, {x: xv, v: vv}), xv * vv)


@pytest.mark.parametrize("keep", [False, True], ids=["removed", "kept"])
def test_barriers_compile_away_or_run_on_numba(keep):
    from lucent.compile.mode import get_mode

    x = lt.dvector("x")
    out = grad_clip(x, -1, 1) + grad_scale(x, 2) + zero_grad(x) + undefined_grad(x)
    mode = get_mode("FAST_RUN")
    if keep:
        mode = mode.excluding("local_remove_gradient_barrier")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no object-mode fallback warning
        f = lucent.function([x], out, mode=mode)
    ops = [type(node.op).__name__ for node in f.maker.fgraph.toposort()]
    assert any(name in ("GradClip", "ZeroGrad") for name in ops) == keep
    np.testing.assert_allclose(f(np.ones(2)), [4.0, 4.0])
