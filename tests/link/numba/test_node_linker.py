"""Node-by-node Numba linkers: NodeKernelLinker and DualLinker (and their PyTensor names)."""

import numpy as np
import pytest

pytest.importorskip("numba")

import lucent.tensor as lt  # noqa: E402
from lucent.graph.basic import Apply  # noqa: E402
from lucent.graph.fg import FunctionGraph  # noqa: E402
from lucent.graph.op import Op  # noqa: E402
from lucent.link.numba.dispatch import numba_funcify, numba_njit  # noqa: E402
from lucent.link.numba.node_linker import DualLinker, NodeKernelLinker, NodeMismatchError  # noqa: E402


class WrongSquare(Op):
    """perform squares; the registered kernel cubes (a deliberate fault)."""

    __props__ = ()

    def make_node(self, x):
        x = lt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] ** 2


@numba_funcify.register(WrongSquare)
def _wrong_square(op, node=None, **kwargs):
    @numba_njit
    def cube(x):
        return x * x * x

    return cube


def _graph(op=None):
    x, y = lt.dvector("x"), lt.dvector("y")
    out = lt.exp(x) * y + 1
    if op is not None:
        out = op(out)
    return FunctionGraph([x, y], [out])


XV, YV = np.array([0.0, 1.0, -2.0]), np.array([2.0, 3.0, 0.5])


@pytest.mark.parametrize("linker", [NodeKernelLinker, DualLinker])
def test_node_linkers_compute_the_graph(linker):
    fn = linker().accept(_graph()).make_function()
    np.testing.assert_allclose(fn(XV, YV), np.exp(XV) * YV + 1)


def test_node_kernel_linker_runs_the_kernels():
    fn = NodeKernelLinker().accept(_graph(WrongSquare())).make_function()
    np.testing.assert_allclose(fn(XV, YV), (np.exp(XV) * YV + 1) ** 3)


def test_dual_linker_names_the_node_whose_paths_differ():
    fn = DualLinker().accept(_graph(WrongSquare())).make_function()
    with pytest.raises(NodeMismatchError, match="Output 0 of WrongSquare"):
        fn(XV, YV)


def test_dual_linker_takes_a_checker():
    seen = []

    def record(x, y):
        seen.append((x.variable.owner.op, x[0].copy(), y[0].copy()))

    fn = DualLinker(checker=record).accept(_graph(WrongSquare())).make_function()
    np.testing.assert_allclose(fn(XV, YV), (np.exp(XV) * YV + 1) ** 2)  # the reference's value
    op, ref, kernel = seen[-1]
    assert isinstance(op, WrongSquare)
    np.testing.assert_allclose(kernel, (np.exp(XV) * YV + 1) ** 3)


def test_pytensor_c_linker_names():
    from lucent.link.c.basic import CLinker, DualLinker as CDual, OpWiseCLinker
    from lucent.link.numba.linker import NumbaLinker

    assert CLinker is NumbaLinker and OpWiseCLinker is NodeKernelLinker and CDual is DualLinker
    fn = CLinker().accept(_graph()).make_function()
    np.testing.assert_allclose(fn(XV, YV), np.exp(XV) * YV + 1)
