"""NodeKernel: one node's Numba kernel called from Python (used by DebugMode and the profiler)."""

import numpy as np
import pytest

pytest.importorskip("numba")

import lucent.tensor as lt  # noqa: E402
from lucent.graph.basic import Apply  # noqa: E402
from lucent.graph.op import Op  # noqa: E402
from lucent.link.numba.node_kernels import NodeKernel, _memo  # noqa: E402


def test_elementwise_node_matches_numpy_and_is_memoised():
    x, y = lt.dmatrix("x"), lt.dvector("y")
    node = (lt.exp(x) * y).owner
    kernel = NodeKernel(node)
    assert kernel.available and kernel.reason is None
    a, b = np.random.default_rng(0).normal(size=(3, 4)), np.arange(4.0)
    ex = np.exp(a)
    np.testing.assert_allclose(kernel([ex, b[None, :]])[0], ex * b)  # y enters broadcast to (1, 4)
    # A second node with the same op and types reuses the compiled kernel.
    other = (lt.exp(lt.dmatrix("p")) * lt.dvector("q")).owner
    before = len(_memo)
    assert NodeKernel(other)._kernel is kernel._kernel
    assert len(_memo) == before


def test_zero_d_and_reduction_outputs_have_python_path_forms():
    x = lt.dvector("x")
    node = x.sum().owner
    out = NodeKernel(node)([np.array([1.0, 2.0, 3.5])])[0]
    assert isinstance(out, np.ndarray) and out.shape == () and out == 6.5


def test_constant_inputs_are_passed():
    x = lt.dvector("x")
    node = (x + np.arange(3.0)).owner
    out = NodeKernel(node)([np.ones(3), node.inputs[1].data])[0]
    np.testing.assert_array_equal(out, [1.0, 2.0, 3.0])


def test_op_without_implementation_is_unavailable_with_a_reason():
    class NoKernel(Op):
        __props__ = ()

        def make_node(self, x):
            return Apply(self, [x], [x.type()])

        def perform(self, node, inputs, out):
            out[0][0] = inputs[0]

    node = NoKernel()(lt.dvector()).owner
    kernel = NodeKernel(node)
    assert not kernel.available
    assert "no Numba implementation for NoKernel" in kernel.reason
    with pytest.raises(RuntimeError, match="no Numba kernel"):
        kernel([np.zeros(1)])
