"""Profiles of inner graphs: the nodes of a loop body, or of an ``OpFromGraph``, under their node.

A ``Scan`` node runs its inner graph once per step, an ``OpFromGraph`` node
once per call; in a profile of the outer function either is one row, and
the time of a loop says nothing about which of its inner nodes take it.
So when a function is profiled, each such node runs its inner graph through
an inner function compiled for the profile (with the outer linker's kind,
so on the Numba path each inner node runs its own kernel, as the outer
nodes do) and profiled by an ``InnerProfileStats``: a ``ProfileStats`` of
the inner graph whose *call* is one call of the outer function.

How the numbers add up
----------------------
* The inner function's linker drives the child as any profile, once per
  step: ``start_call`` / ``record_node`` / ``end_call``. The child folds
  the steps of one outer call together: an inner node's time in that call
  is the sum over its steps, its ``runs`` count the steps, and the child's
  ``step_counts`` keep how many steps each outer call took (``steps_last_call``,
  ``steps_per_call_median``), the actual steps of a ``while`` loop.
* The outer call commits its children when it completes
  (``ProfileStats.end_call``) and drops them when it raises
  (``abort_call``): a failing step leaves every level unchanged, except
  for one more ``failed_calls``. Medians per call therefore work as for the
  outer profile. A loop inside a loop nests the same way: the grandchild
  sums over every inner step of one outer call.
* The outer node's time is the whole loop, so it includes the inner nodes'
  times plus the loop's own work (slicing the sequences, storing each
  step's outputs, the inner function's call); compilation during the loop
  (the Numba path compiles an inner kernel before its first timed run) is
  moved to ``compile_time`` at every level.
* Memory: the child's ``memory()`` replays one step (the last one's
  sizes); its peak is what the loop keeps alive *besides* its stored
  outputs while it runs, and the outer schedule adds it to the live bytes
  of the outer node (``profile_memory.schedule_memory``'s ``inner_peaks``).

The loop's own code (``Scan.run_reference``) is the same as unprofiled: it
is only given the profiled inner function as its step. ``IfElse`` has no
inner graph in lucent (its branches are nodes of the outer graph, run
lazily), so its branches are already rows of the outer profile.
"""

from __future__ import annotations

from lucent.compile.profiling import ProfileStats, _keep, _median, _shape_info, _value_shape
from lucent.graph.op import HasInnerGraph

#: What the child's times mean, before the linker's own sentence: by (unit, linker kind).
_CONTEXT = {
    ("step", "numba"): (
        "Inner graph of a loop, profiled step by step: each step runs the inner function node by "
        "node under the profiler, and an inner node's time is summed over the steps of one outer "
        "call (its runs count the steps). Unprofiled, the whole loop runs as one native compiled "
        "function, so it is faster than these times add up to."
    ),
    ("step", "py"): (
        "Inner graph of a loop, profiled step by step: each step runs the inner function node by "
        "node under the profiler, and an inner node's time is summed over the steps of one outer "
        "call (its runs count the steps). Unprofiled, the same steps run without the timers."
    ),
    ("call", "numba"): (
        "Inner graph of an OpFromGraph: each call of the node runs its inner function node by "
        "node under the profiler (times summed over the node's runs in one outer call). "
        "Unprofiled, the inner graph runs as one compiled function, so it is faster."
    ),
    ("call", "py"): (
        "Inner graph of an OpFromGraph: each call of the node runs its inner function node by "
        "node under the profiler (times summed over the node's runs in one outer call)."
    ),
}


class InnerProfileStats(ProfileStats):
    """The profile of one node's inner graph, nested in the profile of the function holding the node.

    Made by ``ProfileStats.inner_profile``; read it through the parent's
    ``inner_profiles[node]``, its rows' ``children``, or on its own
    (``summary()`` and ``as_rows()`` work as for any profile).

    Attributes
    ----------
    parent, owner_node
        The enclosing profile and the node (of the parent's graph) whose
        inner graph this profiles.
    unit
        ``"step"`` (a loop: one inner run per step) or ``"call"`` (an
        ``OpFromGraph``: one per run of the node).
    calls
        Outer calls in which the node ran (committed with the outer call).
    steps, step_counts
        Inner runs over all completed outer calls, and per outer call (the
        last ``SAMPLES_KEPT``).
    step_time
        Wall time of the inner function's runs (all steps, all calls), as
        its linker measured them; ``call_time`` is the same figure.
    """

    def __init__(self, parent, owner_node, unit, linker_kind):
        self.parent = parent
        self.owner_node = owner_node
        self.unit = unit
        self.linker_kind = linker_kind
        self._linker_how = "not stated by the linker"
        self.steps = 0
        self.step_counts = []
        self._open = False
        self._folded = {}
        self._open_steps = 0
        self._open_time = 0.0
        super().__init__(
            atexit_print=False, flag_time_thunks=parent.flag_time_thunks, gpu_checks=parent.gpu_checks,
            message=f"{owner_node.op} (inner graph, in {parent.message or 'unnamed function'})",
        )

    # --- what the times mean ------------------------------------------------------
    @property
    def how_measured(self):
        context = _CONTEXT.get((self.unit, self.linker_kind), _CONTEXT[(self.unit, "py")])
        return f"{context} Per inner node: {self._linker_how}"

    @how_measured.setter
    def how_measured(self, text):
        # The inner function's linker states how it times nodes; the loop's context is ours.
        self._linker_how = text

    @property
    def step_time(self):
        return self.call_time

    @property
    def steps_last_call(self):
        """Inner runs in the last completed outer call (0 before one)."""
        return self.step_counts[-1] if self.step_counts else 0

    @property
    def steps_per_call_median(self):
        return _median(self.step_counts)

    def steps_text(self):
        """``"1000 steps"`` (or ``"3 calls"``) in the last outer call, with the median when it differs."""
        noun = "step" if self.unit == "step" else "call"
        last = self.steps_last_call
        text = f"{last} {noun}{'' if last == 1 else 's'}"
        median = self.steps_per_call_median
        if self.calls > 1 and median != last:
            text += f" in the last call (median {median:g} per call)"
        return text

    # --- one outer call, folded from its steps ------------------------------------
    def open_call(self):
        """The node starts running in an outer call: its steps accumulate until the outer call ends."""
        if not self._open:
            self._open = True
            self._folded = {}
            self._open_steps = 0
            self._open_time = 0.0

    def start_call(self, input_values=None):
        """A step begins (the inner function's linker calls it once per step)."""
        self.open_call()

    def record_node(self, node, seconds, output_values):
        """An inner node ran in this step: its time joins the outer call's sum for it."""
        if not self._open:
            self.open_call()
        if len(output_values) != len(node.outputs):
            raise ValueError(
                f"record_node got {len(output_values)} output values for {node}, which has "
                f"{len(node.outputs)} outputs; pass one value per output"
            )
        if not self.flag_time_thunks:
            seconds = 0.0
        entry = self._folded.get(node)
        infos = [_shape_info(var, value) for var, value in zip(node.outputs, output_values)]
        shapes = [_value_shape(value) for value in output_values]
        if entry is None:
            self._folded[node] = [seconds, 1, infos, shapes]
        else:
            entry[0] += seconds
            entry[1] += 1
            entry[2] = infos  # the last step's sizes: what one step keeps alive
            entry[3] = shapes

    def end_call(self, seconds):
        """A step completed in ``seconds``."""
        if not self._open:
            self.open_call()
        self._open_steps += 1
        self._open_time += seconds

    def abort_call(self):
        """A step raised: the outer call fails with it, so drop what it gathered (and nested loops')."""
        self._close(commit=False)

    def _close(self, commit):
        """The outer call ended: commit the folded steps as one call, or drop them."""
        if not self._open:
            if not commit:
                self._abort_children()
            return
        self._open = False
        if not commit:
            self._folded = {}
            self.failed_calls += 1
            self._abort_children()
            return
        records = [(node, s, runs, infos, shapes) for node, (s, runs, infos, shapes) in self._folded.items()]
        self._folded = {}
        self._commit(records, self._open_time, None)
        self.steps += self._open_steps
        _keep(self.step_counts, self._open_steps)

    # --- reports -------------------------------------------------------------------
    def _header_lines(self):
        lines = super()._header_lines()
        parent_nodes = self.parent._nodes()
        where = parent_nodes.index(self.owner_node) if self.owner_node in parent_nodes else "?"
        noun = "steps" if self.unit == "step" else "runs"
        lines[1:1] = [
            f"  Inner graph of node {where} of {self.parent.message or 'the enclosing function'}",
            f"  {noun.capitalize()}: {self.steps_text()}; {self.steps} in all over {self.calls} outer "
            f"call{'' if self.calls == 1 else 's'}",
        ]
        return lines


def inner_graph_thunk(profile, node, input_cells, output_cells, linker_kind):
    """A thunk running ``node``'s inner graph under a child of ``profile``, or ``None``.

    ``None`` for a node without an inner graph this module knows how to run
    (a loop with ``run_reference``, an ``OpFromGraph``): the linker then
    builds its usual thunk. ``linker_kind`` is ``"py"`` or ``"numba"``, the
    outer linker's kind; the inner function is compiled once, here (at link
    time), so every call reuses it and its kernels.
    """
    op = node.op
    if not isinstance(op, HasInnerGraph):
        return None
    from lucent.compile.builders import OpFromGraph

    run_reference = getattr(op, "run_reference", None)
    if run_reference is not None and hasattr(op, "step_mode_needs_perform"):
        unit = "step"
    elif isinstance(op, OpFromGraph):
        unit = "call"
    else:
        return None
    child = profile.inner_profile(node, unit, linker_kind)
    fn = _profiled_inner_function(op, child, linker_kind, unit)

    if unit == "step":
        def thunk():
            child.open_call()
            run_reference(node, [cell[0] for cell in input_cells], output_cells, step=fn)
    else:
        def thunk():
            child.open_call()
            results = fn(*[cell[0] for cell in input_cells])
            for cell, value in zip(output_cells, results):
                cell[0] = value

    thunk.node = node
    thunk.inputs = input_cells
    thunk.outputs = output_cells
    thunk.inner_profile = child  # the outer linker moves the child's compile time out of the node's
    return thunk


def _profiled_inner_function(op, child, linker_kind, unit):
    """The inner graph of ``op`` compiled as its unprofiled run compiles it, profiled by ``child``.

    On the Numba path the inner graph is already rewritten (the outer
    pipeline's ``scan_inner_graph`` / ``ofg_inner_graph``), as the native
    loop compiles it, so it is linked without further rewriting; its nodes
    run on their own kernels, which are compiled once per process
    (``NodeKernel``). On the Python path it is compiled as the op's own
    ``fn`` is (its mode, else the Python linker with light rewrites).
    """
    from lucent.compile.io import In
    from lucent.compile.maker import function
    from lucent.compile.mode import Mode, get_mode

    fgraph = op.fgraph
    own_mode = getattr(op, "mode", None)
    needs_perform = op.step_mode_needs_perform() if unit == "step" else None
    if linker_kind == "numba" and (own_mode is None or needs_perform is None):
        mode = Mode(linker="numba", optimizer=None)
    elif own_mode is not None:
        mode = get_mode(own_mode)
    else:
        mode = Mode(linker="py", optimizer="fast_compile")
    if unit == "step":
        from lucent.scan.op import _destroyed_inputs

        destroyed = _destroyed_inputs(fgraph)
    else:
        destroyed = ()  # as ``OpFromGraph.fn``: its inputs are never overwritten
    return function(
        [In(v, mutable=v in destroyed) for v in fgraph.inputs],
        list(fgraph.outputs),
        mode=mode,
        on_unused_input="ignore",
        accept_inplace=True,
        trust_input=True,
        profile=child,
        name=f"{op} inner function (profiled)",
    )


__all__ = ["InnerProfileStats", "inner_graph_thunk"]
