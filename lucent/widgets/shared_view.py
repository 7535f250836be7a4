"""``SharedView``: a live panel of shared variables for a notebook.

Training a model is a loop of calls that move shared variables; what a user
wants to see is whether the weights move, how fast, and whether a NaN
appeared. ``SharedView`` shows one row per variable (dtype, shape, range,
mean, std, L2 norm, NaN/Inf counts, a histogram) and a sparkline of its
recent values (a random generator: its bit generator, a digest of its state
and how much it drew since the view opened), and updates itself when the
values change: through
``set_value``/``zero`` or through the updates of any compiled function, even
one compiled before the view (``lucent.compile.watch.watch_shared``).

Why the updates are throttled
-----------------------------
A training loop may change a variable 10,000 times in a few seconds. Each
change is recorded at once, but cheaply: one number for the sparkline (the
value of a scalar, the L2 norm of an array). The full row (statistics and
histogram, a pass over the whole array, and a message to the browser) is
pushed at most once every ``min_interval`` seconds: the first change after a
quiet period is pushed immediately, the ones that follow it closely wait.
What is still waiting is pushed when the notebook cell finishes (IPython's
``post_run_cell`` event, when running inside IPython) or by ``refresh()``,
so the panel always ends showing the final state, with every point of the
history. No timer thread is used: a thread would touch the widget while the
user's loop runs, and the end of the cell is when the user looks anyway.

All the state is in synced traits (``rows``, ``updates``, ``title``,
``history``), so the panel renders again after a kernel reconnect and from
a notebook saved with its widget state.
"""

from __future__ import annotations

import collections
import math
import pathlib

import anywidget
import numpy as np
import traitlets

from lucent.compile.function_module import Function
from lucent.compile.sharedvalue import SharedVariable
from lucent.compile.watch import watch_shared
from lucent.widgets.live import Throttle, stop_following
from lucent.widgets.value_summary import summarize, words_drawn

_JS = pathlib.Path(__file__).parent / "js"


def _history_point(value):
    """The sparkline's point for ``value``: the number for a scalar, the L2 norm for an array.

    ``None`` when it is not a finite number (a NaN shows as a gap: the NaN
    count of the row says why) or the value is not numeric.
    """
    if getattr(value, "format", None) in ("csr", "csc", "bsr") and hasattr(value, "nnz"):
        array = np.asarray(value.data)  # a sparse matrix: the norm of its stored entries
    elif isinstance(value, (int, float, complex, np.generic)) and not isinstance(value, (str, bytes)):
        array = np.asarray(value)
    elif isinstance(value, np.ndarray):
        array = value
    else:
        return None
    kind = array.dtype.kind
    if kind not in "biufc" or array.size == 0:
        return None
    if array.ndim == 0:
        point = abs(complex(array)) if kind == "c" else float(array)
    else:
        flat = array.ravel()
        if kind == "b":
            flat = flat.astype(np.float64)
        point = float(np.linalg.norm(flat))
    return point if math.isfinite(point) else None


def _is_sparse_matrix(value):
    return getattr(value, "format", None) in ("csr", "csc", "bsr") and hasattr(value, "nnz")


def _summarize_sparse(value):
    """A sparse matrix's row: statistics of its stored entries, and its format, nnz and density.

    The dtype column reads ``float64 csr · nnz 12 (density 3%)``: a sparse
    value's size is its stored entries, so the view says how many there are.
    """
    summary = summarize(np.asarray(value.data))
    rows, cols = value.shape
    cells = rows * cols
    density = 100.0 * value.nnz / cells if cells else 0.0
    summary.update(
        shape=[int(rows), int(cols)],
        size=int(cells),
        format=value.format,
        nnz=int(value.nnz),
        density=density,
        dtype=f"{value.dtype} {value.format} · nnz {value.nnz} (density {density:.3g}%)",
        text=f"{value.format} {rows}x{cols}, nnz {value.nnz} (density {density:.3g}%), "
        "statistics over the stored entries",
    )
    return summary


def _describe(obj):
    text = repr(obj)
    if len(text) > 80:
        text = text[:77] + "..."
    return f"{type(obj).__name__}: {text}"


_EXPECTED = "a SharedVariable, a list/tuple or dict of SharedVariables, or a compiled lucent Function"


def _collect(source):
    """``(title, [(name, variable, updated_by_function)])`` from what the user gave."""
    if isinstance(source, SharedVariable):
        return None, [(None, source, False)]
    if isinstance(source, Function):
        updated = {id(source.inputs[k].variable) for k in source.maker.update_inputs}
        shared = source.get_shared()
        ordered = [v for v in shared if id(v) in updated] + [v for v in shared if id(v) not in updated]
        title = f"Shared variables of {source.name}" if source.name else "Shared variables of the function"
        return title, [(None, v, id(v) in updated) for v in ordered]
    if isinstance(source, dict):
        items = []
        for key, var in source.items():
            if not isinstance(key, str):
                raise TypeError(f"SharedView needs a dict with str names as keys; got the key {_describe(key)}")
            if not isinstance(var, SharedVariable):
                raise TypeError(
                    f"SharedView needs shared variables as the dict's values; {key!r} is {_describe(var)}"
                )
            items.append((key, var, False))
        return None, items
    if isinstance(source, (list, tuple)):
        for position, var in enumerate(source):
            if not isinstance(var, SharedVariable):
                raise TypeError(
                    f"SharedView needs shared variables in the {type(source).__name__}; "
                    f"item {position} is {_describe(var)}"
                )
        return None, [(None, v, False) for v in source]
    raise TypeError(f"SharedView needs {_EXPECTED}; got {_describe(source)}")


class _Entry:
    """What the view keeps about one variable between pushes."""

    __slots__ = ("key", "name", "var", "updated", "history", "changes", "row", "dirty", "first_state")

    def __init__(self, key, name, var, updated, history):
        self.key = key
        self.name = name
        self.var = var
        self.updated = updated
        self.history = collections.deque(maxlen=history)
        self.changes = 0
        self.row = None
        self.dirty = True
        value = var.get_value(borrow=True)
        # A generator's row counts what it drew since the view opened.
        self.first_state = value.bit_generator.state if isinstance(value, np.random.Generator) else None


class SharedView(anywidget.AnyWidget):
    """A live panel of shared variables: statistics and a sparkline of recent values.

    Parameters
    ----------
    shared_variables_or_function
        A SharedVariable, a list/tuple of them, a dict ``name -> variable``
        (the names shown), or a compiled Function (its shared variables,
        those it updates first).
    history
        How many recent values each sparkline keeps.
    min_interval
        Seconds between two pushes of the full rows to the browser (see
        the module docstring); 0 pushes every change.

    Traits (synced): ``title``; ``rows``, one dict per variable with the
    keys of ``value_summary.summarize`` plus ``key``, ``name``, ``type``,
    ``history`` (recent points, ``None`` for a non-finite one),
    ``history_of`` (``"value"`` or ``"norm"``), ``latest``, ``changes``
    (changes seen of this variable) and ``updated`` (the function given
    updates it); ``updates``, the changes seen of all of them; ``history``,
    the sparkline length. Like the browser, these traits show the state of
    the last push: inside a loop, call ``refresh()`` to read the latest.
    """

    _esm = _JS / "shared_view.js"
    _css = _JS / "shared_view.css"

    title = traitlets.Unicode("Shared variables").tag(sync=True)
    rows = traitlets.List(traitlets.Dict()).tag(sync=True)
    updates = traitlets.Int(0).tag(sync=True)
    history = traitlets.Int(100).tag(sync=True)

    def __init__(self, shared_variables_or_function, *, history=100, min_interval=0.1, **kwargs):
        title, items = _collect(shared_variables_or_function)
        if not isinstance(history, int) or isinstance(history, bool) or history < 1:
            raise ValueError(f"history must be a number of points >= 1, got {history!r}")
        self._throttle = Throttle(self._push, min_interval)
        entries, seen = [], set()
        for name, var, updated in items:
            if id(var.container) in seen:  # a clone shares its value: one row is enough
                continue
            seen.add(id(var.container))
            name = name or var.name or getattr(var, "auto_name", None) or f"#{len(entries)}"
            entry = _Entry(len(entries), name, var, updated, history)
            entry.history.append(_history_point(var.get_value(borrow=True)))
            entries.append(entry)
        self._entries = entries
        self._by_container = {id(e.var.container): e for e in entries}
        self._changes = 0
        super().__init__(history=history, **kwargs)
        if title is not None:
            self.title = title
        self._push()
        self._watch = watch_shared([e.var for e in entries], self._on_change)
        self._throttle.follow_cells()

    # --- being told of changes -------------------------------------------------------
    def _on_change(self, var):
        entry = self._by_container.get(id(var.container))
        if entry is None:
            return
        entry.history.append(_history_point(var.get_value(borrow=True)))
        entry.changes += 1
        entry.dirty = True
        self._changes += 1
        self._throttle.changed()

    def _row(self, entry):
        value = entry.var.get_value(borrow=True)
        summary = _summarize_sparse(value) if _is_sparse_matrix(value) else summarize(value)
        if summary.get("kind") == "generator" and entry.first_state is not None:
            drawn = words_drawn(entry.first_state, value.bit_generator.state)
            summary["drawn"] = drawn
            if drawn is not None:
                summary["text"] += f" · {drawn:,} 64-bit words drawn since the view opened"
        scalar = summary.get("kind") == "array" and summary["shape"] == []
        return dict(
            summary,
            key=entry.key,
            name=entry.name,
            type=str(entry.var.type),
            history=list(entry.history),
            history_of="value" if scalar else "norm",
            latest=entry.history[-1],
            changes=entry.changes,
            updated=entry.updated,
        )

    def _push(self):
        for entry in self._entries:
            if entry.dirty or entry.row is None:
                entry.row = self._row(entry)
                entry.dirty = False
        with self.hold_sync():  # one message, one redraw
            self.rows = [e.row for e in self._entries]
            self.updates = self._changes

    # --- public API ------------------------------------------------------------------
    @property
    def variables(self):
        """The shared variables shown, in row order."""
        return [e.var for e in self._entries]

    def refresh(self):
        """Push the current state of every variable now (what waits, and anything changed in place)."""
        for entry in self._entries:
            entry.dirty = True
        self._throttle.flush()

    def close(self):
        """Stop following the variables and close the widget."""
        stop_following(self, "_watch", "_throttle")
        super().close()

    def __repr__(self):
        names = ", ".join(e.name for e in self._entries)
        return f"<SharedView of {len(self._entries)} variables ({names}): {self._changes} updates>"


__all__ = ["SharedView"]
