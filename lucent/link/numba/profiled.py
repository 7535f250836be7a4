"""The instrumented build the Numba linker uses when a function is profiled.

The Numba linker's speed comes from compiling the whole graph into one
function, and inside it nodes have no boundaries a timer could see. A
profiled function is therefore built differently: the same rewritten
graph, in the same schedule, runs node by node from Python, each node
calling its own compiled kernel (``NodeKernel``, the kernel the fused
function would inline). The node-by-node loop, storage cells, garbage
collection, error notes and the shape pre-check of in-place shared updates
are the Python linker's (``PythonLinker.make_all`` with a kernel thunk per
node), so results, output forms and shared-variable semantics are those of
both other builds.

Kernels are compiled for the values' types just before their first timed
run, and that time goes to ``ProfileStats.compile_time``. A node whose op
has no Numba kernel runs its ``perform`` and the report says so.

A node with an inner graph (a ``Scan`` loop, an ``OpFromGraph``) is not
run on its own kernel (the native loop, whose steps no timer sees): the
profile gives it a thunk running the inner graph through an inner
function built the same way as this one, under a child profile
(``ProfileStats.inner_graph_thunk``), so its inner nodes are timed on
their own kernels. The loop's kernel is then never compiled for the
profile, and each inner kernel is compiled once per process.
"""

from __future__ import annotations


HOW_MEASURED = (
    "Numba linker, profiled build: each node's compiled Numba kernel is called separately "
    "from Python in the schedule order and timed with time.perf_counter (so every node time "
    "includes a few microseconds of dispatch; the fused whole-graph function is not used "
    "while profiling, and an unprofiled call is usually faster than the sum of the node "
    "times). Kernel compilation is excluded and reported as compile time."
)


def _kernel_thunk(kernel, node, input_cells, output_cells):
    def thunk():
        values = kernel([cell[0] for cell in input_cells])
        for cell, value in zip(output_cells, values):
            cell[0] = value

    def warm_up():
        return kernel.compile_for([cell[0] for cell in input_cells])

    thunk.node = node
    thunk.inputs = input_cells
    thunk.outputs = output_cells
    thunk.warm_up = warm_up
    return thunk


def make_profiled_thunk(linker, input_storage=None, output_storage=None, storage_map=None):
    """The ``Linked`` running ``linker.fgraph`` node by node, each node on its kernel.

    ``linker`` is the ``NumbaLinker`` (already given its graph and profile);
    its ``fallback_ops`` lists the ops that run ``perform`` here.
    """
    from lucent.link.numba.node_kernels import NodeKernel
    from lucent.link.python import PythonLinker

    profile = linker.profile
    performed = {}

    inner_thunk = getattr(profile, "inner_graph_thunk", None)

    def node_thunk(node, input_cells, output_cells):
        if inner_thunk is not None:
            thunk = inner_thunk(node, input_cells, output_cells, "numba")
            if thunk is not None:
                return thunk
        kernel = NodeKernel(node)
        if not kernel.available:
            performed[node] = kernel.reason
            return None  # the Python linker's perform thunk
        return _kernel_thunk(kernel, node, input_cells, output_cells)

    runner = PythonLinker(allow_gc=linker.allow_gc).accept(linker.fgraph, linker.no_recycling, profile)
    linked = runner.link(input_storage, output_storage, storage_map, node_thunk=node_thunk)
    profile.how_measured = HOW_MEASURED
    for node, reason in performed.items():
        profile.node_notes[node] = f"ran {type(node.op).__name__}.perform, no Numba kernel: {reason}"
    linker.fallback_ops = sorted({str(node.op) for node in performed})
    return linked


__all__ = ["make_profiled_thunk", "HOW_MEASURED"]
