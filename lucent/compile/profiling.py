"""Per-node time and memory profiles of compiled functions (``function(..., profile=True)``).

A compiled function is a schedule of Apply nodes; knowing which of them
takes the time and which allocate the memory is what tells a user where to
change the graph. ``ProfileStats`` collects that, call after call, from
whatever linker runs the function. The linker is the only party that
knows how nodes are executed, so it drives the profile:

* ``attach(fgraph, order)`` once, when the function is linked;
* per call: ``start_call(input_values)``, ``record_node(node, seconds,
  output_values)`` after each node, then ``end_call(seconds)`` with the
  call's wall time (or ``abort_call()`` when the call raised);
* ``how_measured``: one sentence saying what the times mean on this path.

Typical times, not averages
---------------------------
A mean per call is pulled up by one slow call: the first (caches cold,
memory allocated for the first time), or one the machine interrupted. So
the profile also keeps each node's time in each of the last
``SAMPLES_KEPT`` calls, and reports the median per call
(``time_median``, ``call_time_median``) with the number of calls it comes
from (``timed_calls``); a figure from fewer than ``FEW_CALLS`` calls is
flagged as noisy by the views.

Node records of a call are kept aside until ``end_call``, so a call that
raises adds nothing but a ``failed_calls`` count. Sizes are taken when a
node's outputs are recorded (``Type.get_size(Type.get_shape_info(v))``), so
the profile never keeps a computed value alive. Memory figures (created
bytes, peak, where it is reached) come from the last call's sizes and the
schedule; ``lucent.compile.profile_memory`` describes the model.

Inner graphs
------------
A node with an inner graph (a ``Scan`` loop, an ``OpFromGraph``) gets a
child profile, ``inner_profiles[node]``, when the linker asks the profile
to run it (``inner_graph_thunk``): its rows are the inner nodes, each
summed over the steps of one outer call, and they are committed or dropped
with the outer call. ``lucent.compile.profiling_inner`` describes it.

Reports: ``summary()`` (text), ``as_rows()`` (one dict per node, for
widgets; a node with an inner graph carries its inner rows as
``children``), ``_repr_html_()`` (a table for notebooks).
"""

from __future__ import annotations

import sys

from lucent.compile import profile_report
from lucent.compile.profile_memory import output_kind, schedule_memory
from lucent.compile.profile_report import COLUMNS, flatten_rows, format_bytes
from lucent.graph.utils import MethodNotDefined

SORT_KEYS = ("time", "bytes", "order")

#: Per-call times kept for the medians (the most recent calls).
SAMPLES_KEPT = 1000

#: Below this many calls, a median is noisy: views mark it.
FEW_CALLS = 5


def _median(values):
    if not values:
        return 0.0
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else 0.5 * (ordered[mid - 1] + ordered[mid])



class _ShapeInfo:
    """What a Type's ``get_shape_info`` returned for one value, kept until the report.

    The seed's contract: ``get_shape_info`` runs during the call (so it must
    be cheap, and the profile keeps no reference to the value), ``get_size``
    runs only when the report needs bytes.
    """

    __slots__ = ("type", "info")

    def __init__(self, type_, info):
        self.type = type_
        self.info = info

    def size(self):
        try:
            return int(self.type.get_size(self.info))
        except (MethodNotDefined, NotImplementedError, AttributeError, TypeError):
            return None


def _shape_info(var, value):
    """During a call: ``_ShapeInfo`` of ``value``, its ``nbytes`` if its type cannot tell, or ``None``."""
    if value is None:
        return None
    type_ = var.type
    try:
        return _ShapeInfo(type_, type_.get_shape_info(value))
    except (MethodNotDefined, NotImplementedError, AttributeError, TypeError):
        nbytes = getattr(value, "nbytes", None)
        return int(nbytes) if nbytes is not None else None


def _size_of(recorded):
    """Bytes from what ``_shape_info`` recorded (calls the Type's ``get_size``)."""
    if isinstance(recorded, _ShapeInfo):
        return recorded.size()
    return recorded


def _value_size(var, value):
    """Bytes of ``value`` as its type measures them, or ``None`` when it cannot tell."""
    return _size_of(_shape_info(var, value))


def _sparse_detail(node, infos):
    """``"output 0: csr, nnz 12 of 100 (density 12%)"`` for a node's sparse outputs, or ``None``.

    A sparse matrix's bytes depend on its stored entries, not its shape, so
    the node's details say how full it was (read from the shape information
    its ``SparseTensorType`` recorded: shape and nnz).
    """
    parts = []
    for j, (out, info) in enumerate(zip(node.outputs, infos)):
        fmt = getattr(out.type, "format", None)
        if fmt is None or not isinstance(info, _ShapeInfo):
            continue
        shape, nnz = info.info[0], info.info[-1]
        cells = int(shape[0]) * int(shape[1])
        density = 100.0 * nnz / cells if cells else 0.0
        parts.append(f"output {j}: {fmt}, nnz {nnz} of {cells} (density {density:.3g}%)")
    return "; ".join(parts) or None


def _value_shape(value):
    shape = getattr(value, "shape", None)
    return tuple(shape) if shape is not None else None


class ProfileStats:
    """Time and memory of one compiled function, node by node, over all its calls.

    The constructor takes PyTensor's arguments first, so
    ``ProfileStats(False, gpu_checks=False)`` works as there.

    Parameters
    ----------
    atexit_print
        Print this profile's summary when the interpreter exits (if it saw
        at least one call), as PyTensor does; ``False`` for a profile you
        read yourself.
    flag_time_thunks
        Whether node times are measured (``None``: yes). With ``False`` only
        the call times and memory are recorded.
    gpu_checks
        PyTensor checks GPU synchronisation when profiling; lucent runs on
        the CPU only, so there is nothing to check. Kept as an attribute.
    message
        A name for the report (``function(..., profile="name")`` sets it;
        ``profile=True`` uses the function's name).
    fgraph, order
        The graph and schedule profiled; normally given later by the linker
        through ``attach``.

    Attributes
    ----------
    calls, failed_calls
        Completed calls, and calls that raised.
    call_time
        Total wall time of the completed calls, as measured by the linker.
    compile_time
        Seconds spent compiling during calls (the Numba path compiles each
        node's kernel on first use), excluded from every other time.
    node_runs, node_time
        ``{node: count}`` and ``{node: seconds}``.
    node_call_times, call_times
        ``{node: [seconds in each call]}`` and ``[seconds of each call]``,
        for the last ``SAMPLES_KEPT`` calls (the medians come from them).
    output_sizes, output_shapes
        ``{node: [per output]}`` of the last completed call.
    input_bytes
        Total size of the graph inputs in the last call (``None`` when the
        linker did not pass them).
    node_notes
        ``{node: text}``: how a node ran when it differs from the rest
        (e.g. ``perform`` on the Numba path, for an op without a kernel).
    how_measured
        What the times mean, set by the linker.
    """

    def __init__(self, atexit_print=True, flag_time_thunks=None, gpu_checks=True, message=None,
                 fgraph=None, order=None, **kwargs):
        self.atexit_print = bool(atexit_print)
        self.flag_time_thunks = True if flag_time_thunks is None else bool(flag_time_thunks)
        self.gpu_checks = gpu_checks
        self.message = message
        self.how_measured = "not stated by the linker"
        self.calls = 0
        self.failed_calls = 0
        self.call_time = 0.0
        self.compile_time = 0.0
        self.node_runs = {}
        self.node_time = {}
        self.node_call_times = {}
        self.call_times = []
        self.output_shape_infos = {}
        self.output_shapes = {}
        self._input_infos = None
        self._sizes = None
        self.node_notes = {}
        self.sparse_details = {}
        #: ``{node: InnerProfileStats}``: the profiles of the nodes' inner graphs.
        self.inner_profiles = {}
        self.rewriter_profile = None
        self.fgraph = None
        self.order = None
        self._pending = None
        self._memory = None
        #: Copies of the graph input values of the last completed call (None before one).
        self.last_inputs = None
        for key, value in kwargs.items():
            if key.startswith("_") or callable(getattr(type(self), key, None)):
                raise TypeError(f"ProfileStats() got an unexpected keyword argument {key!r}")
            setattr(self, key, value)
        if fgraph is not None:
            self.attach(fgraph, order)
        if self.atexit_print:
            _atexit_print_list.append(self)
            _register_atexit()

    # --- set-up by the linker ------------------------------------------------------
    def attach(self, fgraph, order=None):
        """Profile ``fgraph``, run in ``order`` (default: ``fgraph.toposort()``).

        A ProfileStats describes one graph; attaching it to a second one is
        an error rather than a silent mix of two functions' numbers.
        """
        if self.fgraph is not None and self.fgraph is not fgraph:
            raise ValueError(
                f"This ProfileStats ({self.message or 'unnamed'}) already profiles another "
                "function's graph; give each function its own ProfileStats (profile=True or "
                "profile='name'), and print several with lucent.compile.profiling.print_profiles"
            )
        self.fgraph = fgraph
        self.order = list(order) if order is not None else list(fgraph.toposort())
        self._memory = None
        from lucent.configdefaults import config

        history = getattr(fgraph, "rewrite_history", None)
        if getattr(config, "profile_optimizer", False) and history is not None:
            self.rewriter_profile = dict(history.counts())
        return self

    def empty_copy(self):
        """A new, empty ProfileStats with the same message (for a copy of the function)."""
        return type(self)(
            atexit_print=self.atexit_print, flag_time_thunks=self.flag_time_thunks,
            gpu_checks=self.gpu_checks, message=self.message,
        )

    # --- recording, by the linker ----------------------------------------------------
    def start_call(self, input_values=None):
        """A call begins; ``input_values`` (one per graph input) lets the report size them."""
        if self._pending is not None:
            # The previous call never ended: it raised in a linker that did not say so.
            self.failed_calls += 1
            self._abort_children()
        input_infos = None
        if input_values is not None and self.fgraph is not None:
            input_infos = [_shape_info(var, v) for var, v in zip(self.fgraph.inputs, input_values)]
        self._pending = ([], input_infos)
        # Kept for views that show a profiled call's values without calling again.
        self._call_inputs = (
            None if input_values is None else [v.copy() if hasattr(v, "copy") else v for v in input_values]
        )

    def record_node(self, node, seconds, output_values):
        """``node`` ran in ``seconds`` and produced ``output_values`` (one per output)."""
        if self._pending is None:
            self.start_call()
        if len(output_values) != len(node.outputs):
            raise ValueError(
                f"record_node got {len(output_values)} output values for {node}, which has "
                f"{len(node.outputs)} outputs; pass one value per output"
            )
        infos = [_shape_info(var, value) for var, value in zip(node.outputs, output_values)]
        shapes = [_value_shape(value) for value in output_values]
        if not self.flag_time_thunks:
            seconds = 0.0
        self._pending[0].append((node, seconds, 1, infos, shapes))

    def end_call(self, seconds):
        """The call completed in ``seconds`` (wall time); its node records now count."""
        if self._pending is None:
            self.start_call()
        records, input_infos = self._pending
        self._pending = None
        self.last_inputs = getattr(self, "_call_inputs", None)
        self._commit(records, seconds, input_infos)

    def _commit(self, records, seconds, input_infos):
        """Count one completed call: ``records`` are ``(node, seconds, runs, infos, shapes)``.

        The inner graphs' profiles gathered during the call are committed
        with it.
        """
        self.calls += 1
        self.call_time += seconds
        _keep(self.call_times, seconds)
        in_call = {}
        for node, node_seconds, runs, infos, shapes in records:
            self.node_runs[node] = self.node_runs.get(node, 0) + runs
            self.node_time[node] = self.node_time.get(node, 0.0) + node_seconds
            in_call[node] = in_call.get(node, 0.0) + node_seconds
            self.output_shape_infos[node] = infos
            self.output_shapes[node] = shapes
            detail = _sparse_detail(node, infos)
            if detail:
                self.sparse_details[node] = detail
        for node, node_seconds in in_call.items():
            _keep(self.node_call_times.setdefault(node, []), node_seconds)
        if input_infos is not None:
            self._input_infos = input_infos
        self._memory = None
        self._sizes = None
        for child in self.inner_profiles.values():
            child._close(commit=True)

    def abort_call(self):
        """The call raised: forget its node records (and its inner graphs') and count it as failed."""
        if self._pending is not None:
            self._pending = None
            self.failed_calls += 1
        self._abort_children()

    def _abort_children(self):
        for child in self.inner_profiles.values():
            child._close(commit=False)

    # --- inner graphs, by the linker -------------------------------------------------
    def inner_profile(self, node, unit="step", linker_kind="py"):
        """The child profile of ``node``'s inner graph, made on first request.

        ``unit`` says what one inner run is (``"step"`` of a loop,
        ``"call"`` of an ``OpFromGraph``), ``linker_kind`` (``"py"``,
        ``"numba"``) which linker runs it; see ``profiling_inner``.
        """
        child = self.inner_profiles.get(node)
        if child is None:
            from lucent.compile.profiling_inner import InnerProfileStats

            child = InnerProfileStats(self, node, unit, linker_kind)
            self.inner_profiles[node] = child
        return child

    def inner_graph_thunk(self, node, input_cells, output_cells, linker_kind):
        """For a linker building a profiled run: a thunk running ``node``'s inner graph node by
        node under a child profile, or ``None`` when ``node`` has no inner graph to profile.

        The thunk's ``inner_profile`` is the child; the linker moves the
        compile time the child gathered during a run out of the node's time.
        """
        from lucent.compile.profiling_inner import inner_graph_thunk

        return inner_graph_thunk(self, node, input_cells, output_cells, linker_kind)

    # --- derived numbers -----------------------------------------------------------
    @property
    def output_sizes(self):
        """``{node: [bytes or None per output]}`` of the last completed call.

        Computed when first needed after a call, with each output Type's
        ``get_size`` on the shape information recorded during the call.
        """
        if self._sizes is None:
            self._sizes = {
                node: [_size_of(info) for info in infos]
                for node, infos in self.output_shape_infos.items()
            }
        return self._sizes

    @property
    def input_bytes(self):
        """Total size of the graph inputs in the last call (``None`` when not recorded)."""
        if self._input_infos is None:
            return None
        return sum(_size_of(info) or 0 for info in self._input_infos)

    def _nodes(self):
        if self.order is not None:
            known = set(self.order)
            extra = [n for n in self.node_runs if n not in known]
            return list(self.order) + extra
        return list(self.node_runs)

    @property
    def call_time_median(self):
        """The median wall time of a call (over the last ``SAMPLES_KEPT`` calls)."""
        return _median(self.call_times)

    @property
    def node_time_total(self):
        """Seconds spent in the nodes themselves (the rest of ``call_time`` is overhead)."""
        return sum(self.node_time.values())

    def memory(self):
        """The ``MemoryUsage`` of the last completed call (see ``profile_memory``)."""
        if self._memory is None:
            if self.fgraph is None:
                raise ValueError("This ProfileStats is not attached to a graph yet; call the function first")
            self._memory = schedule_memory(
                self.fgraph, self._nodes(), self.output_sizes, inner_peaks=self.inner_peaks()
            )
        return self._memory

    def inner_peaks(self):
        """``{node: bytes}``: the peak of one run of each profiled inner graph (its last run's sizes)."""
        peaks = {}
        for node, child in self.inner_profiles.items():
            if child.fgraph is not None and child.calls:
                peaks[node] = child.memory().peak
        return peaks

    def as_rows(self, sort_by="order"):
        """One dict per node of the schedule, sorted by ``"order"``, ``"time"`` or ``"bytes"``.

        Keys: ``position`` (in the schedule), ``node``, ``op``,
        ``output_shapes``, ``output_bytes``, ``output_kinds``, ``bytes`` (new
        bytes: created outputs only), ``kind`` (the kinds joined by ``,``),
        ``live_bytes`` (memory in use while it runs), ``is_peak``, ``runs``,
        ``time``, ``time_per_call`` (mean), ``time_median`` (median per
        call, robust to a slow call), ``timed_calls`` (the calls that
        median comes from), ``time_percent`` (of the time in nodes),
        ``median_percent`` (of the sum of the medians) and ``note``.

        Nesting: ``path`` (``"6"``; an inner node of node 6: ``"6.2"``),
        ``parent`` (the path of the enclosing row, ``None`` at the top),
        ``depth`` (0 at the top) and ``children``: for a node whose inner
        graph was profiled, its inner nodes' rows (same keys, sorted the
        same way, times summed over the steps of a call, runs counting the
        steps, percentages of this profile's totals), else ``[]``. Such a
        row also has ``steps`` (inner runs in the last call, else ``None``),
        ``steps_total``, ``inner_unit`` (``"step"`` or ``"call"``) and ``inner_peak`` (bytes one step keeps alive
        besides the stored outputs, part of ``live_bytes``).
        ``flatten_rows`` lists the rows with their children depth first.
        """
        if sort_by not in SORT_KEYS:
            raise ValueError(f"sort_by must be one of {', '.join(map(repr, SORT_KEYS))}, got {sort_by!r}")
        total_median = sum(_median(samples) for samples in self.node_call_times.values())
        return self._rows(sort_by, self.node_time_total, total_median, None, 0)

    def _rows(self, sort_by, total_time, total_median, parent_path, depth):
        """``as_rows`` of this graph, with percentages of the outermost profile's totals."""
        memory = self.memory() if self.fgraph is not None else None
        medians = {node: _median(samples) for node, samples in self.node_call_times.items()}
        rows = []
        for position, node in enumerate(self._nodes()):
            time_ = self.node_time.get(node, 0.0)
            median = medians.get(node, 0.0)
            kinds = [output_kind(node, j) for j in range(len(node.outputs))]
            path = str(position) if parent_path is None else f"{parent_path}.{position}"
            child = self.inner_profiles.get(node)
            children = []
            if child is not None and child.fgraph is not None:
                children = child._rows(sort_by, total_time, total_median, path, depth + 1)
            rows.append({
                "position": position,
                "path": path,
                "parent": parent_path,
                "depth": depth,
                "node": node,
                "op": str(node.op),
                "output_shapes": list(self.output_shapes.get(node, [None] * len(node.outputs))),
                "output_bytes": list(self.output_sizes.get(node, [None] * len(node.outputs))),
                "output_kinds": kinds,
                "kind": ",".join(kinds),
                "bytes": memory.created.get(node, 0) if memory else 0,
                "live_bytes": memory.live.get(node, 0) if memory else 0,
                "is_peak": memory is not None and memory.peak_node is node,
                "runs": self.node_runs.get(node, 0),
                "time": time_,
                "time_per_call": time_ / self.calls if self.calls else 0.0,
                "time_percent": 100.0 * time_ / total_time if total_time > 0 else 0.0,
                "time_median": median,
                "timed_calls": len(self.node_call_times.get(node, ())),
                "median_percent": 100.0 * median / total_median if total_median > 0 else 0.0,
                "note": "; ".join(
                    n for n in (self.node_notes.get(node), self.sparse_details.get(node)) if n
                ) or None,
                "children": children,
                "steps": child.steps_last_call if child is not None and child.calls else None,
                "steps_total": child.steps if child is not None else None,
                "inner_unit": child.unit if child is not None else None,
                "inner_peak": memory.inner.get(node, 0) if memory else 0,
            })
        if sort_by == "time":
            rows.sort(key=lambda r: (-r["time"], r["position"]))
        elif sort_by == "bytes":
            rows.sort(key=lambda r: (-r["bytes"], r["position"]))
        return rows

    # --- reports ---------------------------------------------------------------------
    def _header_lines(self):
        """The totals and memory lines above the tables (``profile_report.header_lines``)."""
        return profile_report.header_lines(self)

    def summary(self, file=None, n_ops_to_print=20, n_apply_to_print=20, sort_by="time", n=None):
        """Print the report: totals, memory, the ops, then the node table (inner rows indented).

        ``file`` defaults to ``sys.stderr`` (as PyTensor's); the op table
        shows ``n_ops_to_print`` ops and the node table ``n`` rows (default
        ``n_apply_to_print``; ``None`` for all), sorted by ``sort_by``
        (``"time"``, ``"bytes"`` or ``"order"``); the inner rows of a node
        with a profiled inner graph follow its row, indented.
        """
        if file is None:
            file = sys.stderr
        if n is None:
            n = n_apply_to_print
        print("\n".join(profile_report.summary_lines(self, n_ops_to_print, sort_by, n)), file=file)

    def _repr_html_(self):
        """An HTML table of the nodes in schedule order (inner rows nested); the peak-memory row is marked."""
        return profile_report.html_table(self)

    def __repr__(self):
        name = f" {self.message!r}" if self.message else ""
        return f"<ProfileStats{name}: {self.calls} calls, {self.call_time:.6f} s>"

    # --- names PyTensor users know ---------------------------------------------------
    @property
    def fct_callcount(self):
        return self.calls

    @property
    def fct_call_time(self):
        return self.call_time

    @property
    def apply_time(self):
        return dict(self.node_time)

    @property
    def apply_callcount(self):
        return dict(self.node_runs)


#: Profiles made with ``atexit_print=True``, printed when the interpreter exits.
_atexit_print_list = []
_atexit_registered = False


def _register_atexit():
    global _atexit_registered
    if not _atexit_registered:
        import atexit

        atexit.register(_atexit_print_fn)
        _atexit_registered = True


def _atexit_print_fn():
    """With ``config.profile`` on, print the summary of every at-exit profile that saw a call."""
    from lucent.configdefaults import config

    if not config.profile:
        return
    for profile in _atexit_print_list:
        if profile.calls or profile.failed_calls:
            try:
                profile.summary(file=sys.stderr)
                print(file=sys.stderr)
            except Exception as e:  # a broken profile must not hide the others
                print(f"lucent: cannot print the profile {profile!r}: {e}", file=sys.stderr)


def make_profile(profile, name=None):
    """The ``ProfileStats`` a function uses for its ``profile=`` argument, or ``None``.

    ``None`` follows ``config.profile``; ``True`` makes one named after the
    function, a string makes one with that name, a ``ProfileStats`` is used
    as it is and ``False`` turns profiling off.
    """
    if profile is None:
        from lucent.configdefaults import config

        profile = bool(config.profile)
    if profile is False:
        return None
    if profile is True:
        return ProfileStats(message=name)
    if isinstance(profile, str):
        return ProfileStats(message=profile)
    if isinstance(profile, ProfileStats):
        return profile
    raise TypeError(
        "profile must be None (follow config.profile), True, False, a name (str) or a "
        f"lucent.compile.profiling.ProfileStats, got {type(profile).__name__}: {profile!r}"
    )


def _keep(samples, value):
    """Append ``value`` to ``samples``, keeping the last ``SAMPLES_KEPT``."""
    samples.append(value)
    if len(samples) > SAMPLES_KEPT:
        del samples[: len(samples) - SAMPLES_KEPT]


def print_profiles(profiles, sort_by="time", n=None, file=None):
    """Print the summary of each profile, then their combined call count and time.

    ``file`` defaults to the ``sys.stdout`` of the moment of the call (not of
    the import), so ``contextlib.redirect_stdout`` captures the text.
    """
    if file is None:
        file = sys.stdout
    profiles = [p for p in profiles if p is not None]
    for profile in profiles:
        profile.summary(sort_by=sort_by, n=n, file=file)
        print(file=file)
    calls = sum(p.calls for p in profiles)
    total = sum(p.call_time for p in profiles)
    print(f"{len(profiles)} profiled functions: {calls} calls, {total:.6f} s in total", file=file)


__all__ = ["ProfileStats", "make_profile", "print_profiles", "format_bytes", "flatten_rows", "COLUMNS"]
