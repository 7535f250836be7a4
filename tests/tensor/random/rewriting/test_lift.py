"""Tests of lucent/tensor/random/rewriting/lift.py (and the core-shape wrapper): lifted draws
equal the draws of the lifted parameters, and the lifts stay away from shared draws and
core dimensions."""

import warnings

import pytest

import numpy as np

import lucent
import lucent.tensor as lt
from lucent.compile.mode import Mode, get_default_mode
from lucent.graph.fg import FunctionGraph
from lucent.graph.rewriting.basic import EquilibriumGraphRewriter, dfs_rewriter
from lucent.tensor.random.basic import NormalRV, dirichlet, normal
from lucent.tensor.random.op import RandomVariable, RandomVariableWithCoreShape
from lucent.tensor.random.rewriting import (
    local_dimshuffle_rv_lift,
    local_rv_size_lift,
    local_subtensor_rv_lift,
)
from lucent.tensor.random.rewriting.numba import introduce_explicit_core_shape_rv
from lucent.tensor.random.variable import shared_rng
from lucent.tensor.rewriting.shape import ShapeOptimizer

pytestmark = pytest.mark.filterwarnings("ignore:RandomVariable Ops will stop hiding:DeprecationWarning")


def _rewritten(rewrite, outputs, inputs=()):
    mode = Mode("py", EquilibriumGraphRewriter([ShapeOptimizer(), rewrite], max_use_ratio=100))
    return lucent.function(list(inputs), outputs, mode=mode)


def _rv_nodes(f):
    return [n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, RandomVariable)]


def test_subtensor_lift_draws_only_the_selected_values():
    mu = np.arange(5.0)
    rng = shared_rng(seed=7)
    nr, x = normal(mu, 1.0, rng=rng, return_next_rng=True)
    f = _rewritten(local_subtensor_rv_lift, [x[1:3], nr])
    [node] = _rv_nodes(f)
    assert node.outputs[1].type.shape == (2,) and node.inputs[2].owner is not None
    out, _ = f()
    np.testing.assert_array_equal(out, np.random.default_rng(7).normal(mu[1:3], 1.0))


def test_subtensor_lift_with_size_uses_the_shape_feature():
    rng = shared_rng(seed=3)
    n = lt.iscalar("n")
    x = normal(0.0, 1.0, size=(n, 4), rng=rng)
    f = _rewritten(local_subtensor_rv_lift, [x[0]], [n])
    [node] = _rv_nodes(f)
    assert node.outputs[1].type.ndim == 1
    np.testing.assert_array_equal(f(5)[0], np.random.default_rng(3).normal(0.0, 1.0, size=4))


def test_dimshuffle_lift_transposes_the_parameters():
    mu = np.arange(6.0).reshape(2, 3)
    rng = shared_rng(seed=2)
    x = normal(mu, 1.0, rng=rng, name="x")
    f = _rewritten(local_dimshuffle_rv_lift, x.T)
    [node] = _rv_nodes(f)
    assert node.outputs[1].name == "x_lifted"
    np.testing.assert_array_equal(f(), np.random.default_rng(2).normal(mu.T, 1.0))


def test_size_lift_moves_size_into_the_parameters():
    rng = shared_rng(seed=4)
    x = normal(0.0, 2.0, size=(2, 3), rng=rng)
    f = _rewritten(local_rv_size_lift, x)
    [node] = _rv_nodes(f)
    assert node.inputs[1].type.__class__.__name__ == "NoneTypeT"
    np.testing.assert_array_equal(f(), np.random.default_rng(4).normal(0.0, 2.0, size=(2, 3)))


def test_no_lift_when_the_draw_is_read_elsewhere_or_on_core_dimensions():
    rng = shared_rng(seed=1)
    x = normal(np.zeros(3), 1.0, rng=rng)
    f = _rewritten(local_subtensor_rv_lift, [x[0], x.sum()])
    assert all(n.outputs[1].type.shape == (3,) for n in _rv_nodes(f))
    d = dirichlet(np.ones((2, 3)), rng=shared_rng(seed=1))
    f = _rewritten(local_subtensor_rv_lift, d[:, 0])
    assert [n.outputs[1].type.shape for n in _rv_nodes(f)] == [(2, 3)]
    f = _rewritten(local_dimshuffle_rv_lift, d.T)
    assert [n.outputs[1].type.shape for n in _rv_nodes(f)] == [(2, 3)]


def test_unused_draw_is_sidestepped_unless_random_unsafe_is_excluded():
    rng = lucent.shared(np.random.default_rng(0))
    r1, _unused = normal(0.0, 1.0, size=3, rng=rng, return_next_rng=True)
    r2, z = normal(5.0, 1.0, rng=r1, return_next_rng=True)
    mode = get_default_mode().excluding("inplace")
    f = lucent.function([], z, mode=mode)
    assert len(_rv_nodes(f)) == 1
    assert f() == np.random.default_rng(0).normal(5.0, 1.0)
    f = lucent.function([], z, mode=mode.excluding("random_unsafe"))
    assert len(_rv_nodes(f)) == 2


@pytest.mark.parametrize("mode", ["FAST_COMPILE", pytest.param("FAST_RUN", marks=pytest.mark.slow)])
def test_core_shape_wrapper_draws_as_the_wrapped_op(mode):
    rng = shared_rng(seed=5)
    x = dirichlet(np.ones((2, 3)), rng=rng)
    y = normal(np.zeros(2), 1.0, rng=shared_rng(seed=6))
    fg = FunctionGraph(outputs=[x, y], clone=True)
    dfs_rewriter(introduce_explicit_core_shape_rv).rewrite(fg)
    wrapped = [n for n in fg.apply_nodes if isinstance(n.op, RandomVariableWithCoreShape)]
    assert len(wrapped) == 2
    assert any(isinstance(n.op.core_op, NormalRV) for n in wrapped)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # FAST_RUN: the wrapped kernels, no object mode
        a, b = lucent.function([], fg.outputs, mode=mode)()
    np.testing.assert_array_equal(a, np.random.default_rng(5).dirichlet(np.ones(3), size=2))
    np.testing.assert_array_equal(b, np.random.default_rng(6).normal(np.zeros(2), 1.0))
