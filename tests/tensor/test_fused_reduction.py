"""``FusedCAReduce``: same values, shape and gradient as the unfused pair on the reference path."""

import numpy as np

import lucent
import lucent.tensor as lt
from lucent.scalar import basic as ps
from lucent.scalar.composite import Composite
from lucent.tensor.elemwise import Elemwise
from lucent.tensor.fused_reduction import FusedCAReduce
from lucent.tensor.reduction import Max, Sum


def _perform(node, values):
    storage = [[None]]
    node.op.perform(node, values, storage)
    return storage[0][0]


def test_perform_equals_the_unfused_ops():
    a, b = ps.float64(), ps.float64()
    comp = Composite([a, b], [abs(a - b)])
    x, y = lt.matrix("x"), lt.matrix("y")
    node = FusedCAReduce(comp, Max(-1)).make_node(x, y)
    assert node.op.reduce_op.axis == (1,)  # normalised for the rank
    assert node.outputs[0].type.shape == (None,)
    va, vb = np.random.default_rng(0).standard_normal((2, 3, 4))
    np.testing.assert_array_equal(_perform(node, [va, vb]), np.max(np.abs(va - vb), axis=1))


def test_props_and_infer_shape():
    op1 = FusedCAReduce(ps.sqr, Sum(None))
    op2 = FusedCAReduce(ps.sqr, Sum(None))
    assert op1 == op2 and hash(op1) == hash(op2)
    x = lt.matrix("x")
    node = FusedCAReduce(ps.mul, Sum((0,))).make_node(x, x)
    assert node.op.infer_shape(None, node, [(3, 4), (3, 4)]) == [(4,)]


def test_gradient_is_the_unfused_gradient():
    x = lt.vector("x")
    out = FusedCAReduce(ps.mul, Sum(None))(x, x)
    g = lucent.grad(out, x)
    f = lucent.function([x], g, mode="FAST_COMPILE")
    v = np.array([1.0, -2.0, 3.0])
    np.testing.assert_allclose(f(v), 2 * v)


def test_elemwise_reference_unchanged_for_multi_output_refused():
    a = ps.float64()
    comp = Composite([a], [a + 1, a * 2])
    try:
        FusedCAReduce(comp, Sum(None))
    except ValueError as e:
        assert "one-output" in str(e)
    else:  # pragma: no cover
        raise AssertionError("a two-output scalar op must be refused")
    assert Elemwise(comp).nout == 2
