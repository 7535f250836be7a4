"""PyTensor's C linker names, on lucent's Numba path.

lucent compiles with Numba, not a C compiler; a PyTensor program that names
a C linker gets the Numba linker that does the same job:

* ``CLinker``: the whole graph as one compiled function (``NumbaLinker``);
* ``OpWiseCLinker``: node by node, each node on its own compiled kernel
  (``NodeKernelLinker``);
* ``DualLinker``: each node on the reference path and on its compiled
  kernel, compared (``lucent.link.numba.node_linker.DualLinker``).
"""

from lucent.link.numba.linker import NumbaLinker as CLinker
from lucent.link.numba.node_linker import DualLinker, NodeKernelLinker as OpWiseCLinker

__all__ = ["CLinker", "OpWiseCLinker", "DualLinker"]
