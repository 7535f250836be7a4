"""A tiny op set on ``TensorType`` used to test graph machinery on its own."""

import numpy as np

from lucent.graph.basic import Apply
from lucent.graph.op import Op
from lucent.tensor.type import TensorType

dvec = TensorType("float64", (None,))


class BinOp(Op):
    __props__ = ("name",)

    def __init__(self, name, fn):
        self.name = name
        self.fn = fn

    def make_node(self, a, b):
        return Apply(self, [a, b], [dvec()])

    def perform(self, node, inputs, out):
        out[0][0] = self.fn(*inputs)

    def __str__(self):
        return self.name


class UnOp(Op):
    __props__ = ("name",)

    def __init__(self, name, fn, destroy=False, view=False):
        self.name = name
        self.fn = fn
        if destroy:
            self.destroy_map = {0: [0]}
        if view:
            self.view_map = {0: [0]}

    def make_node(self, a):
        return Apply(self, [a], [dvec()])

    def perform(self, node, inputs, out):
        out[0][0] = self.fn(inputs[0])

    def __str__(self):
        return self.name


add = BinOp("add", np.add)
mul = BinOp("mul", np.multiply)
neg = UnOp("neg", np.negative)
exp = UnOp("exp", np.exp)
neg_inplace = UnOp("neg_inplace", lambda a: np.negative(a, out=a), destroy=True)
view = UnOp("view", lambda a: a[:], view=True)


def vec(name):
    return dvec(name)
