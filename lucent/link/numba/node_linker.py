"""Linkers that run a graph node by node on Numba kernels.

The Numba linker compiles a whole graph into one function. Two other ways
of running the same kernels are useful for checking and for PyTensor's
node-by-node linker names:

``NodeKernelLinker``
    The Python linker's node-by-node loop (storage cells, garbage
    collection, error notes), with each node calling its own compiled
    kernel instead of ``perform``; a node whose op has no kernel runs
    ``perform``. PyTensor's ``OpWiseCLinker`` is this linker.
``DualLinker``
    Runs every node on both paths (``perform`` and the kernel), each path
    on its own storage, and compares the two results of each node with a
    checker (by default the output type's ``values_eq_approx``). It is the
    smallest form of DebugMode's comparison, without the rest of its
    checks, as a plain linker.
"""

from __future__ import annotations

from lucent.link.basic import Linker, WrapLinker
from lucent.link.python.linker import PythonLinker


def _kernel_node_thunk(node, input_cells, output_cells):
    from lucent.link.numba.node_kernels import NodeKernel

    kernel = NodeKernel(node)
    if not kernel.available:
        return None  # the Python linker's perform thunk

    def thunk():
        values = kernel([cell[0] for cell in input_cells])
        for cell, value in zip(output_cells, values):
            cell[0] = value

    thunk.node = node
    thunk.inputs = input_cells
    thunk.outputs = output_cells
    return thunk


class NodeKernelLinker(PythonLinker):
    """Node by node, each node on its own Numba kernel (``perform`` when it has none)."""

    def __repr__(self):
        return "NodeKernelLinker()"

    def make_all(self, input_storage=None, output_storage=None, storage_map=None, node_thunk=None):
        return super().make_all(
            input_storage, output_storage, storage_map, node_thunk=node_thunk or _kernel_node_thunk
        )


class NodeMismatchError(ValueError):
    """The two paths of ``DualLinker`` computed different values for one node."""


def values_agree(x, y):
    """The default checker of ``DualLinker``: raise unless both paths' outputs agree.

    ``x`` and ``y`` are one output's storage cells, reference path first;
    their type's ``values_eq_approx`` decides.
    """
    variable = x.variable
    if not variable.type.values_eq_approx(x[0], y[0]):
        node = variable.owner
        raise NodeMismatchError(
            f"Output {node.outputs.index(variable)} of {node.op}: the Numba kernel's value "
            f"{y[0]!r} differs from perform's {x[0]!r} beyond {variable.type}'s tolerance"
        )


class _Cell(list):
    """A storage cell that knows its variable, for the checker's messages."""

    def __init__(self, cell, variable):
        super().__init__(cell)
        self.variable = variable


class DualLinker(Linker):
    """Runs each node with ``perform`` and with its Numba kernel and compares them.

    Parameters
    ----------
    checker
        ``checker(x, y)`` for each output of each node, ``x`` and ``y`` its
        one-element storage on the reference and on the Numba path (each
        has ``.variable``); it raises to report a difference. Default:
        ``values_agree``.
    schedule
        Optional ``fgraph -> list of Apply`` giving the node order.

    The function's outputs are the reference path's.
    """

    _unpicklable = ("fgraph", "_wrap")

    def __init__(self, checker=values_agree, schedule=None):
        self.fgraph = None
        self.checker = checker
        self.schedule = schedule
        self.no_recycling = []

    def _bind(self, fgraph):
        checker = self.checker

        def compare(fgraph, i, node, reference, kernel):
            reference()
            kernel()
            for out, ref_cell, kernel_cell in zip(node.outputs, reference.outputs, kernel.outputs):
                checker(_Cell(ref_cell, out), _Cell(kernel_cell, out))

        self._wrap = WrapLinker(
            [
                PythonLinker(allow_gc=False, schedule=self.schedule),
                NodeKernelLinker(allow_gc=False, schedule=self.schedule),
            ],
            compare,
        ).accept(fgraph, self.no_recycling)

    def link(self, input_storage=None, output_storage=None, storage_map=None):
        if self.fgraph is None:
            raise RuntimeError("DualLinker.link called before accept(fgraph)")
        return self._wrap.link(input_storage, output_storage)
