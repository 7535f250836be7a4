"""Small user-defined ops with Numba kernels (importable by the subprocesses of the cache tests).

Importing this module imports numba and registers the kernels.
"""

import numpy as np

import lucent.tensor as lt
from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.link.numba.dispatch import numba_funcify, numba_njit


class Double(Op):
    """``2 * x``, with a module-level kernel (so graphs using it are cacheable)."""

    __props__ = ()

    def make_node(self, x):
        x = lt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = np.asarray(inputs[0] * 2, dtype=node.outputs[0].type.dtype)


class Add2(Op):
    """``x + y`` for inputs of the same type."""

    __props__ = ()

    def make_node(self, x, y):
        x, y = lt.as_tensor_variable(x), lt.as_tensor_variable(y)
        return Apply(self, [x, y], [x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = np.asarray(inputs[0] + inputs[1])


@numba_njit
def double_kernel(x):
    return x + x  # keeps the dtype (x * 2 would widen int32)


@numba_njit
def add_kernel(x, y):
    return x + y


@numba_funcify.register(Double)
def _funcify_double(op, node=None, **kwargs):
    return double_kernel


@numba_funcify.register(Add2)
def _funcify_add2(op, node=None, **kwargs):
    return add_kernel
