"""RandomVariable: node structure, shapes, rewrites that must not touch draws, gradients."""

import warnings

import numpy as np
import pytest

import lucent
import lucent.tensor as lt
from lucent.tensor.shape import shape_i
from lucent.tensor.random.basic import NormalRV, normal
from lucent.tensor.random.op import RandomVariable, parse_signature
from lucent.tensor.random.variable import rng, shared_rng


def test_signature_props_and_str():
    assert parse_signature("(n),(n,n)->(n)") == ([("n",), ("n", "n")], [("n",)])
    with pytest.raises(ValueError, match="signature"):
        parse_signature("(n")
    assert normal.ndim_supp == 0 and normal.ndims_params == [0, 0]
    assert normal == NormalRV() and hash(normal) == hash(NormalRV())
    assert normal != NormalRV(inplace=True)
    assert NormalRV(inplace=True).destroy_map == {0: [0]}
    assert str(normal) == 'normal_rv{"(),()->()"}'
    with pytest.raises(ValueError, match="signature must be provided"):
        RandomVariable(name="x")


@pytest.mark.parametrize(
    "params, size, shape",
    [((0.0, 1.0), None, ()), ((np.zeros(3), 1.0), None, (3,)), ((np.zeros((2, 1)), np.ones(4)), None, (2, 4)),
     ((0.0, 1.0), (2, 3), (2, 3)), ((np.zeros(3), 1.0), (2, 3), (2, 3))],
)
def test_static_and_inferred_shapes(params, size, shape):
    _, x = rng().normal(*params, size=size)
    assert x.type.shape == shape
    mu = lt.dmatrix("mu")
    n = lt.lscalar("n")
    _, y = shared_rng(seed=0).normal(mu, 1.0, size=(n, mu.shape[1]))
    f = lucent.function([mu, n], y.shape, mode="FAST_COMPILE")
    assert tuple(f(np.zeros((1, 3)), 4)) == (4, 3)
    _, z = shared_rng(seed=0).normal(mu, 2.0)
    node = z.owner
    lengths = node.op.infer_shape(None, node, [(), (), (shape_i(mu, 0), shape_i(mu, 1)), (1, 1)])[1]
    assert [ln.owner.inputs[0] for ln in lengths] == [mu, mu]


def test_size_shorter_than_parameter_batch_is_an_error():
    with pytest.raises(ValueError, match="Size length is incompatible"):
        rng().normal(np.zeros((2, 3)), 1.0, size=(3,))
    with pytest.raises(TypeError, match="takes 2 distribution parameter"):
        normal.make_node(rng(), None, 0.0)
    with pytest.raises(TypeError, match="RandomGeneratorType"):
        normal(0, 1, rng=np.random.default_rng(), return_next_rng=True)


def test_draws_are_not_constant_folded_and_equal_draws_merge():
    r = shared_rng(seed=1)
    r1, a = r.normal(0.0, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        _, b = r.normal(0.0, 1.0)
    _, c = r1.normal(0.0, 1.0)
    f = lucent.function([], [a, b, c], mode="FAST_RUN")
    nodes = [n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, RandomVariable)]
    assert len(nodes) == 2  # a and b are one draw; c draws from the next state
    va, vb, vc = f()
    assert va == vb != vc
    g = np.random.default_rng(1)
    assert va == g.normal() and vc == g.normal()


def test_gradient_is_undefined_and_names_the_rv():
    mu = lt.dscalar("mu")
    _, x = rng().normal(mu, 1.0)
    with pytest.raises(Exception, match="normal"):
        lucent.grad(x, mu)


def test_inplace_where_the_generator_is_updated():
    r = shared_rng(seed=1)
    nr, x = r.normal(0, 1, size=2)
    f = lucent.function([], x, updates={r: nr}, mode="FAST_COMPILE")
    assert not any(n.op.destroy_map for n in f.maker.fgraph.apply_nodes)
    g = lucent.function([], x, updates={r: nr}, mode=lucent.Mode(linker="py", optimizer="fast_run"))
    [node] = [n for n in g.maker.fgraph.apply_nodes if isinstance(n.op, RandomVariable)]
    assert node.op.inplace
    h = lucent.function([], x, mode=lucent.Mode(linker="py", optimizer="fast_run"))
    [node] = [n for n in h.maker.fgraph.apply_nodes if isinstance(n.op, RandomVariable)]
    assert not node.op.inplace  # the shared generator is not updated: it must not change
    before = r.get_value().bit_generator.state
    h()
    assert r.get_value().bit_generator.state == before


def test_perform_copies_unless_inplace():
    g = np.random.default_rng(3)
    state = g.bit_generator.state
    r = rng()
    node = normal.make_node(r, None, lt.constant(0.0), lt.constant(1.0))
    out = [[None], [None]]
    normal.perform(node, [g, None, np.array(0.0), np.array(1.0)], out)
    assert g.bit_generator.state == state and out[0][0] is not g
    NormalRV(inplace=True).perform(node, [g, None, np.array(0.0), np.array(1.0)], out)
    assert out[0][0] is g and g.bit_generator.state != state


def test_vectorize_prepends_new_batch_lengths_to_size():
    from lucent.graph import vectorize_graph

    mu = lt.dscalar("mu")
    _, x = shared_rng(seed=1).normal(mu, 1.0, size=(3,))
    mus = lt.tensor(dtype="float64", shape=(2,))
    y = vectorize_graph(x, {mu: mus})
    assert y.type.shape == (2, 3)
    out = lucent.function([mus], y, mode="FAST_COMPILE")(np.array([0.0, 100.0]))
    assert out.shape == (2, 3) and (out[1] > 50).all()
