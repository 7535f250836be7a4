"""``NanGuardMode``: run at full speed, and when a NaN/Inf comes out, say which node made it.

The graph runs on the Numba path as in FAST_RUN. After each call the
outputs and the update values are scanned; only when one holds a NaN or an
infinity (or, with ``big_is_error``, a huge value) is the call replayed
node by node on the Python path from the same input values, stopping at
the first node whose output is bad. The error names that node (its
``dprint``, where the user created it, its input shapes), and the call
changes no shared variable. When that node is a loop (a ``Scan``), the
loop is rerun and each step's inner graph replayed node by node, so the
error also names the step and the inner node (``scan "rnn", step 37:
Log1p``), following loops inside loops.

In-place updates: FAST_RUN writes updates such as ``W - lr*g`` straight
into ``W``'s buffer, so when the scan finds a NaN the shared variable has
already been overwritten. NanGuardMode keeps the same rewrites (so it runs
the graph that FAST_RUN would) and instead copies, before each call, the
graph inputs that some node destroys; on a bad result the copies are
written back into the original buffers (anyone holding them sees the old
values again) and serve as the replay's inputs. That costs one copy of the
destroyed inputs per call, small next to computing the updates.
"""

from __future__ import annotations

import numpy as np

from lucent.compile.mode import Mode, _make_linker
from lucent.link.basic import Linked, Linker


class NanGuardError(FloatingPointError, AssertionError):
    """A node produced NaN, Inf or a huge value (as configured in ``NanGuardMode``).

    It is also an ``AssertionError``, the exception PyTensor's NanGuardMode
    raises, so code catching that keeps working.

    Attributes: ``node`` (``None`` when the replay did not find it),
    ``output_index``, ``what`` (``"NaN"``, ``"Inf"`` or ``"big"``), and
    ``inner_location`` when ``node`` is a loop: the step and inner node
    that made the value (``scan "rnn", step 37: Log1p (created at ...),
    output 0``), else ``None``; ``inner_site``, the same place as a
    ``lucent.debugmode.inner.InnerLocation`` (loop node, step, inner node).
    """

    def __init__(self, message, node=None, output_index=None, what=None, inner_location=None):
        super().__init__(message)
        self.node = node
        self.output_index = output_index
        self.what = what
        self.inner_site = inner_location
        self.inner_location = None if inner_location is None else str(inner_location)


class NanGuardLinker(Linker):
    """Runs an inner (fast) linker's thunk and checks its results (see module docstring)."""

    def __init__(self, nan_is_error=True, inf_is_error=True, big_is_error=False, inner=None,
                 big_threshold=1e10):
        self.fgraph = None
        self.nan_is_error = nan_is_error
        self.inf_is_error = inf_is_error
        self.big_is_error = big_is_error
        self.big_threshold = big_threshold
        self.inner = inner if inner is not None else _make_linker("numba")[0]
        self.allow_gc = getattr(self.inner, "allow_gc", None)
        self.no_recycling = []
        self.profile = None

    def __repr__(self):
        return (
            f"NanGuardLinker(nan_is_error={self.nan_is_error}, inf_is_error={self.inf_is_error}, "
            f"big_is_error={self.big_is_error}, inner={self.inner!r})"
        )

    def _bind(self, fgraph):
        self.inner = self.inner.clone().accept(fgraph, self.no_recycling, self.profile)

    def clone(self, allow_gc=None):
        new = super().clone(allow_gc)
        new.inner = self.inner.clone()
        return new

    # ------------------------------------------------------------------
    def _bad(self, value):
        """``"NaN"``, ``"Inf"``, ``"big"`` or ``None`` for one value, per the enabled checks.

        Every enabled check runs (as in PyTensor), so an all-NaN array also
        goes through the infinity check, which warns as NumPy does.
        """
        arr = _float_array(value)
        if arr is None:
            return None
        found = []
        if self.nan_is_error and contains_nan(arr):
            found.append("NaN")
        if self.inf_is_error and contains_inf(arr):
            found.append("Inf")
        if self.big_is_error and not found:
            with np.errstate(invalid="ignore"):
                finite = arr if np.isfinite(arr).all() else arr[np.isfinite(arr)]
                if finite.size and np.abs(finite).max() > self.big_threshold:
                    found.append("big")
        return found[0] if found else None

    def link(self, input_storage=None, output_storage=None, storage_map=None):
        """The inner linker's graph, with every output checked after each call."""
        fgraph = self.fgraph
        if fgraph is None:
            raise RuntimeError("NanGuardLinker.link called before accept(fgraph)")
        fast = self.inner.link(input_storage, output_storage, storage_map)
        input_cells = [c.storage for c in fast.inputs]
        output_cells = [c.storage for c in fast.outputs]
        destroyers = getattr(fgraph, "destroyers", None)
        destroyed = [
            k for k, var in enumerate(fgraph.inputs) if destroyers is not None and destroyers(var)
        ]
        guard = self

        def run():
            saved = {k: _copy(input_cells[k][0]) for k in destroyed}
            originals = [cell[0] for cell in input_cells]
            try:
                fast()
            except BaseException:
                _restore(input_cells, originals, saved)
                raise
            for j, cell in enumerate(output_cells):
                what = guard._bad(cell[0])
                if what is not None:
                    _restore(input_cells, originals, saved)
                    values = [saved[k] if k in saved else originals[k] for k in range(len(originals))]
                    raise guard._locate(values, j, what)

        return Linked(
            run, fast.inputs, fast.outputs, storage_map=fast.storage_map, allow_gc=fast.allow_gc,
            thunks=fast.thunks, order=fast.order,
        )

    def _locate(self, values, output_index, what):
        """Replay on the Python path and build the error naming the first bad node."""
        from lucent.debugmode.describe import Origins, inputs_text, node_dprint, op_text
        from lucent.link.python import PythonLinker

        fgraph = self.fgraph
        out_var = fgraph.outputs[output_index]
        kind = _describe_output(fgraph, output_index)
        for var, value in zip(fgraph.inputs, values):
            bad = self._bad(value)
            if bad is not None:
                return NanGuardError(
                    f"NanGuardMode: {kind} ({out_var}) contains {bad}, and the graph input {var} "
                    f"already contains {bad}: expected finite inputs",
                    what=bad,
                )
        from lucent.link.python.branches import BranchPlan, guard_checks, guard_holds, has_branches

        linker = PythonLinker(allow_gc=False).accept(fgraph)
        _, _, _, thunks, order, storage_map = linker.make_all(
            input_storage=[[v] for v in values]
        )
        # the linker's branch plan: only a taken branch's nodes run, as in the call
        schedule = fgraph.toposort()
        plan = BranchPlan(fgraph, schedule) if has_branches(schedule) else None
        guards = guard_checks(plan, storage_map) if plan is not None else [None] * len(order)
        for thunk, node, guard in zip(thunks, order, guards):
            if guard is not None and not guard_holds(guard):
                continue
            # the inputs as the node reads them: an in-place node overwrites what it destroys
            destroyed = {i for ins in (getattr(node.op, "destroy_map", None) or {}).values() for i in ins}
            in_values = [
                _copy(storage_map[v][0]) if i in destroyed else storage_map[v][0]
                for i, v in enumerate(node.inputs)
            ]
            thunk()
            for j, var in enumerate(node.outputs):
                bad = self._bad(storage_map[var][0])
                if bad is None:
                    continue
                inputs_bad = [i for i, v in enumerate(in_values) if self._bad(v) is not None]
                note = (
                    f" (its inputs {inputs_bad} already contain {bad} or another checked value)"
                    if inputs_bad else " from inputs without any"
                )
                inside = self._locate_in_loop(node, in_values) if not inputs_bad else None
                within = f" Inside its loop, the first {bad} comes from {inside}." if inside else ""
                message = (
                    f"NanGuardMode: {kind} ({out_var}) contains {bad}. The first node producing "
                    f"{bad} (replayed on the Python path) is {node}, output {j}{note}.{within}\n"
                    f"  node:\n    " + node_dprint(node).replace("\n", "\n    ") + "\n"
                    f"  op: {op_text(node.op)}\n"
                    f"  created at: " + Origins(fgraph).creation_text(node).replace("\n", "\n    ") + "\n"
                    "  inputs:\n    " + inputs_text(node, in_values).replace("\n", "\n    ") + "\n"
                    "The call changed no shared variable."
                )
                return NanGuardError(message, node=node, output_index=j, what=bad, inner_location=inside)
        return NanGuardError(
            f"NanGuardMode: {kind} ({out_var}) contains {what} on the Numba path, but replaying "
            "the graph node by node on the Python path produced none: the two paths disagree. "
            "Compile with mode='DebugMode' to find the node whose Numba kernel differs.",
            what=what,
        )

    def _locate_in_loop(self, node, values):
        """Where inside ``node``'s loop the first bad value came from (an ``InnerLocation``), or
        ``None`` (not a loop, or no inner node made it); see ``lucent.debugmode.inner``."""
        from lucent.debugmode.inner import locate_nonfinite_in_loop

        return locate_nonfinite_in_loop(node, values, lambda v: self._bad(v) is not None)


def _copy(value):
    return value.copy() if isinstance(value, np.ndarray) else value


def _restore(input_cells, originals, saved):
    """Put destroyed inputs back as they were: into their own buffers when possible."""
    for k, before in saved.items():
        original = originals[k]
        if (
            isinstance(original, np.ndarray)
            and original.flags.writeable
            and isinstance(before, np.ndarray)
            and original.shape == before.shape
        ):
            original[...] = before
            input_cells[k][0] = original
        else:
            input_cells[k][0] = before
        saved[k] = _copy(before)  # the replay may overwrite its inputs


def _describe_output(fgraph, index):
    mapping = getattr(fgraph, "update_mapping", None) or {}
    if index in mapping:
        return f"the update of input {mapping[index]}"
    return f"output {index}"


def flatten(nested):
    """The leaves of nested lists/tuples (and dict views), in order; a non-sequence gives ``[it]``."""
    if not isinstance(nested, (list, tuple, type({}.values()))):
        return [nested]
    leaves = []
    for item in nested:
        leaves.extend(flatten(item) if isinstance(item, (list, tuple)) else [item])
    return leaves


def _float_array(value):
    """``value`` as a float/complex ndarray, or ``None`` when it cannot hold NaN/Inf."""
    if isinstance(value, np.ndarray):
        arr = value
    elif isinstance(value, (np.generic, float, complex)):
        arr = np.asarray(value)
    else:
        return None
    if arr.dtype.kind not in "fc" or arr.size == 0:
        return None
    return arr


def contains_nan(arr, node=None, var=None):
    """True when ``arr`` (an output value) holds a NaN; non-float values never do.

    ``node`` and ``var`` (the Apply and variable that produced it) are
    accepted for PyTensor compatibility; the value alone decides. ``min``
    propagates NaN, so one reduction answers without a boolean temporary.
    """
    values = _float_array(arr)
    return values is not None and bool(np.isnan(np.min(values)))


def contains_inf(arr, node=None, var=None):
    """True when ``arr`` holds +Inf or -Inf (NaNs are ignored); non-float values never do."""
    values = _float_array(arr)
    if values is None:
        return False
    # nanmax/nanmin skip NaNs (an all-NaN array gives NumPy's RuntimeWarning and False).
    return bool(np.isinf(np.nanmax(values)) or np.isinf(np.nanmin(values)))


class NanGuardMode(Mode):
    """FAST_RUN that stops at NaN/Inf and names the node that produced it.

    Parameters
    ----------
    nan_is_error, inf_is_error
        Treat NaN / infinities in an output or update as errors.
    big_is_error
        Also treat values larger than ``big_threshold`` (1e10) in magnitude
        as errors.
        The three default to ``config.NanGuardMode__nan_is_error`` /
        ``__inf_is_error`` / ``__big_is_error`` (all True, as in PyTensor).
    optimizer
        The rewrites (default: FAST_RUN's).
    db
        Accepted for PyTensor's signature (the rewrite database); lucent
        modes query ``optdb``.
    """

    def __init__(self, nan_is_error=None, inf_is_error=None, big_is_error=None, optimizer="default",
                 linker=None, db=None, big_threshold=1e10, name="NanGuardMode"):
        from lucent.configdefaults import config

        def flag(value, name):
            return bool(getattr(config, f"NanGuardMode__{name}", True)) if value is None else value

        inner = linker if isinstance(linker, Linker) else None
        guard = NanGuardLinker(
            flag(nan_is_error, "nan_is_error"), flag(inf_is_error, "inf_is_error"),
            flag(big_is_error, "big_is_error"), inner=inner, big_threshold=big_threshold,
        )
        super().__init__(linker=guard, optimizer=optimizer, db=db, name=name)

    def __repr__(self):
        g = self.linker
        return (
            f"NanGuardMode(nan_is_error={g.nan_is_error}, inf_is_error={g.inf_is_error}, "
            f"big_is_error={g.big_is_error}, optimizer={self.optimizer!r}, inner={type(g.inner).__name__})"
        )

    __str__ = __repr__


__all__ = ["NanGuardMode", "NanGuardLinker", "NanGuardError", "contains_nan", "contains_inf", "flatten"]
