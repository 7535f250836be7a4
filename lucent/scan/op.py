"""The ``Scan`` op: a loop whose body is an inner graph.

``scan()`` (``lucent.scan.basic``) turns a user's step function into one
``Scan`` node; this module defines what that node means. The loop state is
laid out the way PyTensor lays it out, so programs and rewrites written
against PyTensor's ``Scan`` read the same fields:

outer inputs
    ``[n_steps, *sequences, *mit_mot, *mit_sot, *sit_sot, *untraced_sit_sot,
    *nit_sot_sizes, *non_sequences]``
outer outputs
    ``[*mit_mot, *mit_sot, *sit_sot, *nit_sot, *untraced_sit_sot]``
inner inputs
    ``[*sequence slices, *mit_sot taps, *sit_sot, *untraced_sit_sot,
    *non_sequences]``
inner outputs
    ``[*mit_sot, *sit_sot, *nit_sot, *untraced_sit_sot, (condition)]``

A traced recurrent output (``mit_sot``: several negative taps, ``sit_sot``:
the tap -1) lives in a *buffer*: its first ``-min(taps)`` rows are the
initial states, row ``init + t`` receives step ``t``. The output has the
length of the input buffer. A buffer shorter than ``init + n_steps`` is used
as a ring (only its last rows survive, returned oldest first): that is how
the memory-saving rewrite keeps only the taps that are read. A ``nit_sot``
output (not fed back) is stored the same way, its outer input giving the
number of rows to keep. An ``untraced_sit_sot`` (a state that is not a
tensor, such as a random generator) only keeps its last value. With a
condition (``as_while``) the loop stops after the first step where it holds
and the outputs keep only the steps that ran.

Mit-mot states (several output taps) are PyTensor's representation of its
gradient loop; lucent's gradient is itself an ordinary scan
(``lucent.scan.gradient``), so ``Scan`` has none.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from lucent.graph.basic import Apply, Variable
from lucent.graph.op import HasInnerGraph, Op, io_connection_pattern


#: The error of a step whose recurrent output does not have its buffer rows' shape (the
#: shape of the initial value), on every path: ``.format(k, shape, step, row shape)``.
STATE_SHAPE_MESSAGE = (
    "Scan: recurrent output {} has shape {} at step {}, but its initial value (and so every "
    "step's value) has shape {}"
)


@dataclasses.dataclass(frozen=True)
class ScanInfo:
    """How the inputs and outputs of a ``Scan`` are grouped (see the module docstring)."""

    n_seqs: int
    mit_mot_in_slices: tuple
    mit_mot_out_slices: tuple
    mit_sot_in_slices: tuple
    sit_sot_in_slices: tuple
    n_nit_sot: int
    n_untraced_sit_sot: int
    n_non_seqs: int
    as_while: bool

    @property
    def n_shared_outs(self):
        warnings.warn(
            "The 'n_shared_outs' property is deprecated. Use 'n_untraced_sit_sot' instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.n_untraced_sit_sot

    @property
    def n_mit_mot(self):
        return len(self.mit_mot_in_slices)

    @property
    def n_mit_mot_outs(self):
        return sum(len(x) for x in self.mit_mot_out_slices)

    @property
    def n_mit_sot(self):
        return len(self.mit_sot_in_slices)

    @property
    def n_sit_sot(self):
        return len(self.sit_sot_in_slices)

    @property
    def tap_array(self):
        return self.mit_mot_in_slices + self.mit_sot_in_slices + self.sit_sot_in_slices

    @property
    def n_inner_inputs(self):
        return (
            self.n_seqs
            + sum(len(x) for x in self.mit_mot_in_slices)
            + sum(len(x) for x in self.mit_sot_in_slices)
            + self.n_sit_sot
            + self.n_untraced_sit_sot
            + self.n_non_seqs
        )

    @property
    def n_inner_outputs(self):
        return (
            self.n_mit_mot_outs
            + self.n_mit_sot
            + self.n_sit_sot
            + self.n_nit_sot
            + self.n_untraced_sit_sot
            + int(self.as_while)
        )

    @property
    def n_outer_inputs(self):
        return (
            1
            + self.n_seqs
            + self.n_mit_mot
            + self.n_mit_sot
            + self.n_sit_sot
            + self.n_nit_sot
            + self.n_untraced_sit_sot
            + self.n_non_seqs
        )

    @property
    def n_outer_outputs(self):
        return (
            len(self.mit_mot_out_slices)
            + self.n_mit_sot
            + self.n_sit_sot
            + self.n_nit_sot
            + self.n_untraced_sit_sot
        )


class ScanLayout:
    """Index arithmetic over a ``ScanInfo``: where each group starts, per side.

    Kept apart from the op so ``perform``, ``infer_shape``, the gradient, the
    Numba kernel and the rewrites all read positions the same way.
    """

    def __init__(self, info):
        self.info = info
        self.state_taps = [tuple(t) for t in info.mit_sot_in_slices] + [
            tuple(t) for t in info.sit_sot_in_slices
        ]
        self.n_states = len(self.state_taps)  # traced recurrent outputs
        self.init_lens = [-min(taps) for taps in self.state_taps]
        # outer inputs
        self.o_seqs = 1
        self.o_states = self.o_seqs + info.n_seqs
        self.o_untraced = self.o_states + self.n_states
        self.o_nit = self.o_untraced + info.n_untraced_sit_sot
        self.o_non_seqs = self.o_nit + info.n_nit_sot
        # inner inputs
        self.i_states = info.n_seqs
        n_taps = sum(len(t) for t in self.state_taps)
        self.i_untraced = self.i_states + n_taps
        self.i_non_seqs = self.i_untraced + info.n_untraced_sit_sot
        # inner and outer outputs (same order; the condition is last inside)
        self.out_nit = self.n_states
        self.out_untraced = self.out_nit + info.n_nit_sot
        self.n_outputs = self.out_untraced + info.n_untraced_sit_sot

    def state_inner_inputs(self, k):
        """Positions of the inner inputs that are the taps of traced state ``k``."""
        start = self.i_states + sum(len(t) for t in self.state_taps[:k])
        return list(range(start, start + len(self.state_taps[k])))

    def outer_input_of_inner(self):
        """For every inner input, the position of the outer input it comes from."""
        info = self.info
        res = list(range(self.o_seqs, self.o_seqs + info.n_seqs))
        for k, taps in enumerate(self.state_taps):
            res += [self.o_states + k] * len(taps)
        res += list(range(self.o_untraced, self.o_untraced + info.n_untraced_sit_sot))
        res += list(range(self.o_non_seqs, self.o_non_seqs + info.n_non_seqs))
        return res


def _check_info(info, n_inner_inputs, n_inner_outputs):
    if info.n_mit_mot:
        raise NotImplementedError(
            "lucent's Scan has no mit_mot states (its gradient is an ordinary scan); "
            f"got mit_mot_in_slices={info.mit_mot_in_slices}"
        )
    for taps in info.mit_sot_in_slices + info.sit_sot_in_slices:
        if not taps or any(t >= 0 for t in taps):
            raise ValueError(f"Scan: the taps of a recurrent output must be negative, got {taps}")
    for taps in info.sit_sot_in_slices:
        if tuple(taps) != (-1,):
            raise ValueError(f"Scan: a sit_sot state has the single tap -1, got {taps}")
    if n_inner_inputs != info.n_inner_inputs:
        raise ValueError(
            f"Scan: {info} expects {info.n_inner_inputs} inner inputs, got {n_inner_inputs}"
        )
    if n_inner_outputs != info.n_inner_outputs:
        raise ValueError(
            f"Scan: {info} expects {info.n_inner_outputs} inner outputs, got {n_inner_outputs}"
        )


class Scan(Op, HasInnerGraph):
    """A loop over an inner graph (see the module docstring for the layout).

    Parameters
    ----------
    inputs, outputs
        The inner graph, ordered as the layout says.
    info
        A ``ScanInfo``.
    mode
        The mode the inner graph runs with on the reference path (``None``:
        the Python linker with light rewrites; the Numba path always compiles
        the inner graph into the outer kernel).
    truncate_gradient
        ``-1`` (full back-propagation) or the number of last steps the
        gradient goes through.
    name, profile, allow_gc, strict
        As for ``scan``.
    """

    #: What identifies the op besides its inner graph (``_key``); the Numba disk
    #: cache describes a scan by these and the inner graph's structure.
    __props__ = ("info", "truncate_gradient", "as_while")

    def __init__(
        self,
        inputs,
        outputs,
        info,
        mode=None,
        typeConstructor=None,
        truncate_gradient=-1,
        name=None,
        profile=False,
        allow_gc=True,
        strict=True,
    ):
        from lucent.compile.builders import construct_nominal_fgraph, graph_key

        if not isinstance(info, ScanInfo):
            raise TypeError(f"Scan: info must be a ScanInfo, got {type(info).__name__}")
        _check_info(info, len(inputs), len(outputs))
        if not (isinstance(truncate_gradient, (int, np.integer)) and (
            truncate_gradient == -1 or truncate_gradient > 0
        )):
            raise ValueError(
                f"Scan: truncate_gradient must be -1 or a positive int, got {truncate_gradient!r}"
            )
        self.info = info
        self.layout = ScanLayout(info)
        self.fgraph = construct_nominal_fgraph(list(inputs), list(outputs))
        self.mode = mode
        self.truncate_gradient = int(truncate_gradient)
        self.name = name
        self.profile = profile
        self.allow_gc = allow_gc
        self.strict = strict
        self.as_while = info.as_while
        self.destroy_map = {}
        self._key = graph_key(self.fgraph.inputs, self.fgraph.outputs)
        self._fn = None
        lay = self.layout
        outs = self.fgraph.outputs
        if info.as_while:
            cond = outs[-1]
            if getattr(cond.type, "ndim", None) != 0:
                raise ValueError(f"Scan: the condition must be a scalar, got {cond.type}")
        self.output_types = []
        from lucent.tensor.type import TensorType

        for j in range(lay.n_outputs):
            t = outs[j].type
            if j < lay.out_untraced:
                if not isinstance(t, TensorType):
                    raise TypeError(
                        f"Scan: traced output {j} must be a tensor, got {t}; a state that is "
                        "not a tensor is an untraced_sit_sot"
                    )
                t = TensorType(t.dtype, shape=(None, *t.shape))
            self.output_types.append(t)

    # --- identity ----------------------------------------------------------
    def _props_key(self):
        # ``destroy_map`` is not part of the identity: an in-place loop computes the same
        # values (``ScanInplaceOptimizer`` only changes where they are written).
        return (self.info, self._key, self.truncate_gradient, self.as_while, str(self.mode))

    def __eq__(self, other):
        return self is other or (type(self) is type(other) and self._props_key() == other._props_key())

    def __hash__(self):
        return hash((type(self), self.info, self._key, self.truncate_gradient))

    def __str__(self):
        name = self.name or "scan_fn"
        inplace = "none"
        if self.destroy_map:
            inplace = "(" + ",".join(str(k) for k in sorted(self.destroy_map)) + ")"
        return f"Scan{{{name}, while_loop={self.as_while}, inplace={inplace}}}"

    def clone(self):
        return self

    def clone_with_inner_graph(self, inner_fgraph, info=None):
        """A ``Scan`` computing ``inner_fgraph`` (same settings; ``info`` may change)."""
        return Scan(
            list(inner_fgraph.inputs),
            list(inner_fgraph.outputs),
            info or self.info,
            mode=self.mode,
            truncate_gradient=self.truncate_gradient,
            name=self.name,
            profile=self.profile,
            allow_gc=self.allow_gc,
            strict=self.strict,
        )

    # --- the inner graph by role ---------------------------------------------
    @property
    def n_tap_outs(self):
        """How many outputs are traced recurrent states (the first outputs)."""
        return self.layout.n_states

    @property
    def untraced_sit_sot_arg_offset(self):
        """Position of the first untraced state's starting value among the outer inputs."""
        return self.layout.o_untraced

    def get_oinp_iinp_iout_oout_mappings(self):
        """Position maps between outer/inner inputs/outputs (``lucent.scan.args.io_mappings``)."""
        from lucent.scan.args import io_mappings

        return io_mappings(self.info, len(self.fgraph.inputs))

    @property
    def var_mappings(self):
        return self.get_oinp_iinp_iout_oout_mappings()

    def inner_seqs(self, list_inputs):
        return list_inputs[: self.info.n_seqs]

    def outer_seqs(self, list_inputs):
        return list_inputs[1 : 1 + self.info.n_seqs]

    def inner_mitsot(self, list_inputs):
        lay = self.layout
        n = sum(len(t) for t in self.info.mit_sot_in_slices)
        return list_inputs[lay.i_states : lay.i_states + n]

    def outer_mitsot(self, list_inputs):
        lay = self.layout
        return list_inputs[lay.o_states : lay.o_states + self.info.n_mit_sot]

    def inner_mitsot_outs(self, list_outputs):
        return list_outputs[: self.info.n_mit_sot]

    def outer_mitsot_outs(self, list_outputs):
        return list_outputs[: self.info.n_mit_sot]

    def inner_sitsot(self, list_inputs):
        return list_inputs[self.layout.i_untraced - self.info.n_sit_sot : self.layout.i_untraced]

    def outer_sitsot(self, list_inputs):
        lay = self.layout
        return list_inputs[lay.o_untraced - self.info.n_sit_sot : lay.o_untraced]

    def inner_sitsot_outs(self, list_outputs):
        n = self.info.n_mit_sot
        return list_outputs[n : n + self.info.n_sit_sot]

    def outer_sitsot_outs(self, list_outputs):
        return self.inner_sitsot_outs(list_outputs)

    def outer_nitsot(self, list_inputs):
        lay = self.layout
        return list_inputs[lay.o_nit : lay.o_non_seqs]

    def inner_nitsot_outs(self, list_outputs):
        lay = self.layout
        return list_outputs[lay.out_nit : lay.out_untraced]

    def outer_nitsot_outs(self, list_outputs):
        return self.inner_nitsot_outs(list_outputs)

    def inner_untraced_sit_sot(self, list_inputs):
        lay = self.layout
        return list_inputs[lay.i_untraced : lay.i_non_seqs]

    def outer_untraced_sit_sot(self, list_inputs):
        lay = self.layout
        return list_inputs[lay.o_untraced : lay.o_nit]

    def inner_untraced_sit_sot_outs(self, list_outputs):
        lay = self.layout
        return list_outputs[lay.out_untraced : lay.n_outputs]

    def outer_untraced_sit_sot_outs(self, list_outputs):
        return self.inner_untraced_sit_sot_outs(list_outputs)

    def inner_non_seqs(self, list_inputs):
        return list_inputs[self.layout.i_non_seqs :]

    def outer_non_seqs(self, list_inputs):
        return list_inputs[self.layout.o_non_seqs :]

    # --- the inner function --------------------------------------------------
    @property
    def fn(self):
        """The inner graph compiled once for ``perform`` (Python linker unless ``mode`` says otherwise)."""
        if self._fn is None:
            from lucent.compile.io import In
            from lucent.compile.maker import function
            from lucent.compile.mode import Mode, get_mode

            mode = Mode(linker="py", optimizer="fast_compile") if self.mode is None else get_mode(self.mode)
            destroyed = _destroyed_inputs(self.fgraph)
            self._fn = function(
                [In(v, mutable=v in destroyed) for v in self.fgraph.inputs],
                list(self.fgraph.outputs),
                mode=mode,
                on_unused_input="ignore",
                accept_inplace=True,
                trust_input=True,
                name=f"{self} inner function",
            )
        return self._fn

    def step_mode_needs_perform(self):
        """Why the step must run through ``perform`` (its mode's linker does not compile
        the whole body, so a native loop would bypass it), or ``None``."""
        if self.mode is None:
            return None
        from lucent.compile.mode import get_mode
        from lucent.link.basic import JITLinker

        linker = get_mode(self.mode).linker
        if isinstance(linker, JITLinker):
            return None
        return (
            f"{self} runs its step with the mode {self.mode} (linker {type(linker).__name__}), "
            "which the native loop would bypass"
        )

    # --- graph building --------------------------------------------------------
    def make_node(self, *inputs):
        from lucent.tensor.basic import as_tensor_variable
        from lucent.tensor.type import TensorType

        info, lay = self.info, self.layout
        if len(inputs) != info.n_outer_inputs:
            raise ValueError(
                f"{self} expects {info.n_outer_inputs} inputs (n_steps, {info.n_seqs} sequences, "
                f"{lay.n_states} traced states, {info.n_untraced_sit_sot} untraced states, "
                f"{info.n_nit_sot} nit_sot sizes, {info.n_non_seqs} non-sequences), got {len(inputs)}"
            )
        inputs = list(inputs)
        inner = self.fgraph.inputs

        def as_int_scalar(v, what):
            v = as_tensor_variable(v)
            if v.type.ndim != 0 or not v.type.dtype.startswith(("int", "uint")):
                raise TypeError(f"{self}: {what} must be an integer scalar, got {v} of type {v.type}")
            return v

        inputs[0] = as_int_scalar(inputs[0], "n_steps")

        def check_stacked(k, inner_var, what):
            v = as_tensor_variable(inputs[k])
            it = inner_var.type
            if v.type.ndim != it.ndim + 1 or v.type.dtype != it.dtype:
                raise TypeError(
                    f"{self}: {what} (input {k}) must be a {it.ndim + 1}-d tensor of dtype {it.dtype} "
                    f"(one {it} per step), got {v} of type {v.type}"
                )
            for d, (s_out, s_in) in enumerate(zip(v.type.shape[1:], it.shape)):
                if s_out is not None and s_in is not None and s_out != s_in:
                    raise ValueError(
                        f"{self}: {what} (input {k}) has length {s_out} on axis {d + 1}, but the "
                        f"inner graph expects {s_in}"
                    )
            inputs[k] = v

        for i in range(info.n_seqs):
            check_stacked(lay.o_seqs + i, inner[i], f"sequence {i}")
        for k in range(lay.n_states):
            first = lay.state_inner_inputs(k)[0]
            check_stacked(lay.o_states + k, inner[first], f"the buffer of recurrent output {k}")
            out_t = self.fgraph.outputs[k].type
            if out_t.dtype != inner[first].type.dtype or out_t.ndim != inner[first].type.ndim:
                raise TypeError(
                    f"{self}: recurrent output {k} is {out_t} but its initial state / taps are "
                    f"{inner[first].type}; the step must return the type of its state"
                )
        for k in range(info.n_untraced_sit_sot):
            it = inner[lay.i_untraced + k].type
            inputs[lay.o_untraced + k] = it.filter_variable(inputs[lay.o_untraced + k])
        for k in range(info.n_nit_sot):
            inputs[lay.o_nit + k] = as_int_scalar(inputs[lay.o_nit + k], f"nit_sot size {k}")
        for k in range(info.n_non_seqs):
            it = inner[lay.i_non_seqs + k].type
            v = inputs[lay.o_non_seqs + k]
            if not isinstance(v, Variable):
                v = as_tensor_variable(v) if isinstance(it, TensorType) else it.filter_variable(v)
            if v.type != it:
                try:
                    v = it.filter_variable(v)
                except TypeError as e:
                    raise TypeError(
                        f"{self}: non-sequence {k} is {v} of type {v.type}; the inner graph "
                        f"expects {it}"
                    ) from e
            inputs[lay.o_non_seqs + k] = v
        return Apply(self, inputs, [t() for t in self.output_types])

    def connection_pattern(self, node):
        """Which outer inputs reach which outer outputs, following the loop-carried states."""
        info, lay = self.info, self.layout
        inner = io_connection_pattern(self.fgraph.inputs, self.fgraph.outputs)
        src = lay.outer_input_of_inner()
        n_in, n_out = info.n_outer_inputs, lay.n_outputs
        conn = [[False] * n_out for _ in range(n_in)]
        for ii, oi in enumerate(src):
            for j in range(n_out):
                if inner[ii][j]:
                    conn[oi][j] = True
        # A state's outer input only counts through the steps that read it (as in
        # PyTensor): its initial rows are not part of what ``scan`` returns, so a
        # state the step never reads is disconnected from its own output.
        for k in range(info.n_untraced_sit_sot):
            conn[lay.o_untraced + k][lay.out_untraced + k] = True
        # State outputs feed back: close over the recurrences.
        feeds = {}
        for k in range(lay.n_states):
            feeds[k] = lay.state_inner_inputs(k)
        for k in range(info.n_untraced_sit_sot):
            feeds[lay.out_untraced + k] = [lay.i_untraced + k]
        changed = True
        while changed:
            changed = False
            for oi in range(n_in):
                for s, inner_ins in feeds.items():
                    if not conn[oi][s]:
                        continue
                    for j in range(n_out):
                        if not conn[oi][j] and any(inner[ii][j] for ii in inner_ins):
                            conn[oi][j] = True
                            changed = True
        return conn

    # --- execution ---------------------------------------------------------------
    def perform(self, node, inputs, output_storage):
        """The loop in Python: one call of the compiled inner function per step."""
        self.run_reference(node, inputs, output_storage)

    def run_reference(self, node, inputs, output_storage=None, on_step=None, step=None):
        """``perform``'s loop; ``on_step(t, args)`` (if given) sees each step's inner input values first.

        Checking tools (DebugMode) use ``on_step`` to rerun one step's inner
        graph node by node and find where two paths part; it may raise to
        stop the loop. ``output_storage`` may be ``None`` (values discarded).
        ``step`` replaces the compiled inner function ``fn`` (called as it is,
        one positional argument per inner input): a profiled function passes
        an inner function that times its nodes (``compile.profiling_inner``).
        """
        if output_storage is None:
            output_storage = [[None] for _ in node.outputs]
        info, lay = self.info, self.layout
        n_steps = int(inputs[0])
        if n_steps < 0:
            raise ValueError(f"{self}: n_steps must be >= 0, got {n_steps}")
        seqs = inputs[lay.o_seqs : lay.o_states]
        for i, s in enumerate(seqs):
            if s.shape[0] < n_steps:
                raise ValueError(
                    f"{self}: sequence {i} has {s.shape[0]} entries, fewer than the {n_steps} "
                    "steps asked for"
                )
        bufs, stores = [], []
        for k in range(lay.n_states):
            init = lay.init_lens[k]
            given = inputs[lay.o_states + k]
            if given.shape[0] < init:
                raise ValueError(
                    f"{self}: recurrent output {k} needs {init} initial row(s) for its taps "
                    f"{lay.state_taps[k]}, its buffer has {given.shape[0]}"
                )
            # A buffer the op may destroy (``ScanInplaceOptimizer``) is written directly.
            in_place = k in self.destroy_map and given.flags.writeable
            bufs.append(given if in_place else np.array(given, copy=True))
            stores.append(given.shape[0])
        untraced = [inputs[lay.o_untraced + k] for k in range(info.n_untraced_sit_sot)]
        # the body may update an untraced state in place (a generator's draws, an
        # accumulator: ``scan_inner_graph``): the loop works on a copy of the
        # starting value unless it may destroy it
        destroyed = _destroyed_inputs(self.fgraph)
        for k, v in enumerate(untraced):
            if lay.out_untraced + k in self.destroy_map:
                continue
            if isinstance(v, np.random.Generator):
                from lucent.tensor.random.utils import custom_rng_deepcopy

                untraced[k] = custom_rng_deepcopy(v)
            elif isinstance(v, np.ndarray) and self.fgraph.inputs[lay.i_untraced + k] in destroyed:
                untraced[k] = v.copy()
        nit_stores = [int(inputs[lay.o_nit + k]) for k in range(info.n_nit_sot)]
        nit_bufs = [None] * info.n_nit_sot
        non_seqs = list(inputs[lay.o_non_seqs :])
        fn = self.fn if step is None else step
        n_done = 0
        for t in range(n_steps):
            # ``[i, ...]``: a row of a vector is a 0-d array, not a NumPy scalar, as the
            # inner function's inputs are (a compiled step trusts its inputs)
            args = [s[t, ...] for s in seqs]
            for k, taps in enumerate(lay.state_taps):
                init, store = lay.init_lens[k], stores[k]
                for tap in taps:
                    args.append(bufs[k][(init + t + tap) % store, ...])
            args += untraced
            args += non_seqs
            if on_step is not None:
                on_step(t, args)
            outs = fn(*args)
            for k in range(lay.n_states):
                row = (lay.init_lens[k] + t) % stores[k]
                value = np.asarray(outs[k])
                if value.ndim and value.shape != bufs[k].shape[1:]:
                    raise ValueError(STATE_SHAPE_MESSAGE.format(k, value.shape, t, bufs[k].shape[1:]))
                bufs[k][row] = value
            for k in range(info.n_nit_sot):
                value = np.asarray(outs[lay.out_nit + k])
                if nit_bufs[k] is None:
                    dtype = node.outputs[lay.out_nit + k].type.dtype
                    nit_bufs[k] = np.zeros((nit_stores[k], *value.shape), dtype=dtype)
                elif nit_bufs[k].shape[1:] != value.shape:
                    raise ValueError(
                        f"{self}: output {lay.out_nit + k} has shape {value.shape} at step {t}, "
                        f"but {nit_bufs[k].shape[1:]} at the first step; every step must give "
                        "the same shape"
                    )
                if nit_stores[k] > 0:
                    nit_bufs[k][t % nit_stores[k]] = value
            untraced = list(outs[lay.out_untraced : lay.n_outputs])
            n_done = t + 1
            if info.as_while and bool(np.asarray(outs[-1])):
                break
        for k in range(lay.n_states):
            output_storage[k][0] = _finish_ring(bufs[k], lay.init_lens[k] + n_done, info.as_while)
        for k in range(info.n_nit_sot):
            out = nit_bufs[k]
            if out is None:
                var = node.outputs[lay.out_nit + k]
                trailing = tuple(s if s is not None else 0 for s in var.type.shape[1:])
                out = np.zeros((0 if info.as_while else nit_stores[k], *trailing), dtype=var.type.dtype)
            else:
                out = _finish_ring(out, n_done, info.as_while)
            output_storage[lay.out_nit + k][0] = out
        for k in range(info.n_untraced_sit_sot):
            value = untraced[k]
            if n_done == 0 and isinstance(value, np.ndarray):
                value = value.copy()
            output_storage[lay.out_untraced + k][0] = value

    def infer_shape(self, fgraph, node, input_shapes):
        """Leading lengths from the buffers / nit_sot sizes; the rest from the inner graph."""
        from lucent.compile.builders import infer_shape as inner_infer_shape
        from lucent.graph.replace import clone_replace
        from lucent.graph.traversal import graph_inputs

        info, lay = self.info, self.layout
        inner_in = self.fgraph.inputs
        inner_shapes = []
        for ii, oi in enumerate(lay.outer_input_of_inner()):
            shp = input_shapes[oi]
            if shp is None:
                inner_shapes.append(None)
            elif oi < lay.o_untraced:  # a sequence or state: one row of it
                inner_shapes.append(tuple(shp[1:]))
            else:
                inner_shapes.append(tuple(shp))
        results = inner_infer_shape(self.fgraph.outputs[: lay.n_outputs], inner_in, inner_shapes)
        per_step = set(inner_in[: lay.i_non_seqs])
        mapping = dict(zip(inner_in[lay.i_non_seqs :], node.inputs[lay.o_non_seqs :]))
        out_shapes = []
        for j, shp in enumerate(results):
            out = node.outputs[j]
            if shp is None:
                out_shapes.append(None)
                continue
            dims = []
            for d, s in enumerate(shp):
                if isinstance(s, Variable):
                    # A length may use the outer inputs' shapes (a sequence's rows and a
                    # state's buffer rows have the same shape at every step) and the
                    # non-sequences; one that uses a per-step value is read from the output.
                    free = [v for v in graph_inputs([s]) if v.owner is None and not hasattr(v, "data")]
                    if not any(v in per_step for v in free):
                        s = clone_replace(s, replace=mapping) if free else s
                    else:
                        s = out.shape[d + (1 if j < lay.out_untraced else 0)]
                dims.append(s)
            if j < lay.n_states:
                lead = out.shape[0] if info.as_while else input_shapes[lay.o_states + j][0]
                dims = [lead, *dims]
            elif j < lay.out_untraced:
                k = j - lay.out_nit
                lead = out.shape[0] if info.as_while else node.inputs[lay.o_nit + k]
                dims = [lead, *dims]
            out_shapes.append(tuple(dims))
        return out_shapes

    # --- gradients -------------------------------------------------------------
    def L_op(self, inputs, outputs, output_grads):
        from lucent.scan.gradient import scan_pullback

        return scan_pullback(self, inputs, outputs, output_grads)

    def pullback(self, inputs, outputs, output_grads):
        return self.L_op(inputs, outputs, output_grads)


def _destroyed_inputs(fgraph):
    """The inputs of ``fgraph`` whose memory one of its nodes overwrites, directly or through a view."""
    inputs = set(fgraph.inputs)
    res = set()
    for node in fgraph.apply_nodes:
        for ins in (getattr(node.op, "destroy_map", None) or {}).values():
            for i in ins:
                root = _view_root(node.inputs[i])
                if root in inputs:
                    res.add(root)
    return res


def _view_root(var):
    """The variable whose memory ``var`` is (following the declared views and in-place outputs)."""
    while var.owner is not None:
        op = var.owner.op
        j = var.owner.outputs.index(var)
        through = (getattr(op, "view_map", None) or {}).get(j) or (getattr(op, "destroy_map", None) or {}).get(j)
        if not through:
            return var
        var = var.owner.inputs[through[0]]
    return var


def _finish_ring(buf, total, as_while):
    """The stored rows, oldest first: ``buf`` itself unless it was used as a ring.

    ``total`` rows were written (initial rows included). A while loop that
    stopped early keeps only the rows written.
    """
    store = buf.shape[0]
    if total <= store:
        return buf[:total] if as_while else buf
    shift = total % store
    if shift:
        # rotated within the buffer: the output is the buffer (an in-place loop's
        # output is its input's memory, as its destroy_map says)
        buf[...] = np.roll(buf, -shift, axis=0)
    return buf


__all__ = ["STATE_SHAPE_MESSAGE", "Scan", "ScanInfo"]
