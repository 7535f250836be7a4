"""Being told when a function runs or a shared variable changes.

Live views in a notebook (a panel of shared variables, a graph showing the
last value of every node) must update when *another* cell calls a function
or sets a value, without the user re-running the view's cell. This module
is the one place that knows when that happens:

* ``watch_shared(variables, callback)``: ``callback(var)`` after ``var``'s
  value changed through ``set_value``/``zero`` or through the update of any
  compiled function (including functions compiled before the watch began);
* ``watch_calls(fn, callback)``: ``callback(fn, inputs, result)`` after each
  successful call of ``fn``, with the values of its graph inputs as they
  were when the call began.

Watching must cost nothing when nobody watches: a compiled function's
``__call__`` is the hot path (about 2 µs). So nothing is checked per call;
instead a function that becomes watched has its class swapped for a
subclass whose ``__call__`` wraps the original one. Every Function is
registered here when it is made (a weak reference), so a watch started on a
shared variable finds the functions that update it, and a function made
later is instrumented when it is made.

Callbacks that are bound methods are held weakly (a closed or deleted widget
does not keep receiving calls); ``Watch.stop()`` ends a watch explicitly. An
exception raised by a callback is reported as a warning, never raised into
the user's call: a view must not break the program it shows.
"""

from __future__ import annotations

import copy
import warnings
import weakref

import numpy as np

_all_functions: "weakref.WeakSet" = weakref.WeakSet()
# Container -> list of (Watch, SharedVariable the user watched)
_shared_watches: dict = {}
# Function -> list of Watch
_call_watches: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


class Watch:
    """A running watch; ``stop()`` ends it (and ``with`` ends it on exit)."""

    def __init__(self, callback):
        if not callable(callback):
            raise TypeError(f"A watch callback must be callable, got {callback!r}")
        try:
            self._ref = weakref.WeakMethod(callback)
        except TypeError:  # a plain function or other callable: held strongly
            self._ref = lambda cb=callback: cb
        self._stops = []
        self.active = True

    @property
    def callback(self):
        return self._ref() if self.active else None

    def stop(self):
        """Stop calling the callback (idempotent)."""
        if not self.active:
            return
        self.active = False
        for stop in self._stops:
            stop()
        self._stops.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def _fire(self, *args):
        callback = self.callback
        if callback is None:
            self.stop()
            return
        try:
            callback(*args)
        except Exception as e:  # a view must never break the call it observes
            warnings.warn(f"A lucent watch callback {callback!r} raised {type(e).__name__}: {e}", stacklevel=3)


# ---------------------------------------------------------------------------
# Registration of functions (called by Function.__init__).

def register_function(fn):
    """Remember ``fn`` (weakly); instrument it now if it updates a watched variable."""
    _all_functions.add(fn)
    if _shared_watches and _updated_containers(fn).intersection(_shared_watches):
        _instrument(fn)


def _updated_containers(fn):
    return {fn.input_storage[k] for k, _ in fn._updates}


def _instrument(fn):
    cls = type(fn)
    if getattr(cls, "_lucent_watched", False):
        return
    # One subclass per function: fast-call classes are already one per function,
    # and a shared cache would keep their compiled programs alive.
    fn.__class__ = _make_watched_class(cls)


def _make_watched_class(cls):
    original_call = cls.__call__

    def __call__(self, *args, **kwargs):
        watches = [w for w in _call_watches.get(self, ()) if w.active]
        inputs = _input_snapshot(self, args, kwargs) if any(w.wants_inputs for w in watches) else None
        result = original_call(self, *args, **kwargs)
        _notify_updated(self)
        for w in watches:
            w._fire(self, inputs, result)
        return result

    __call__.__doc__ = original_call.__doc__
    return type(cls.__name__, (cls,), {
        "__call__": __call__,
        "_lucent_watched": True,
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
    })


def _input_snapshot(fn, args, kwargs):
    """The graph inputs' values as the call will see them (copies: the call may update them)."""
    try:
        given = {k: fn._filter(k, v) for k, v in fn._bind(args, kwargs).items()}
    except Exception:
        return None  # the call itself will raise the proper error
    values = []
    for k, container in enumerate(fn.input_storage):
        value = given[k] if k in given else container.storage[0]
        values.append(copy.copy(value) if hasattr(value, "copy") else value)
    return values


def _notify_updated(fn):
    if not _shared_watches:
        return
    for k, _ in fn._updates:
        for w, var in list(_shared_watches.get(fn.input_storage[k], ())):
            w._fire(var)


def notify_shared_changed(var):
    """Tell the watchers of ``var`` that its value changed (``set_value`` calls this)."""
    notify_container_changed(var.container)


def notify_container_changed(container):
    """Tell the watchers of the shared variable(s) stored in ``container`` (``fn.value[k] = v``)."""
    for w, watched in list(_shared_watches.get(container, ())):
        w._fire(watched)


# ---------------------------------------------------------------------------
# Public API.

def watch_shared(variables, callback):
    """Call ``callback(var)`` whenever one of ``variables`` (SharedVariables) changes.

    Changes are ``set_value``, ``zero`` and the updates of any compiled
    function, called once per variable per call. Returns a ``Watch``.
    """
    from lucent.compile.sharedvalue import SharedVariable

    if isinstance(variables, SharedVariable):
        variables = [variables]
    variables = list(variables)
    for var in variables:
        if not isinstance(var, SharedVariable):
            raise TypeError(f"watch_shared needs shared variables, got {var!r} of type {type(var).__name__}")
    watch = Watch(callback)
    containers = []
    for var in variables:
        entry = (watch, var)
        _shared_watches.setdefault(var.container, []).append(entry)
        containers.append((var.container, entry))

    def stop():
        for container, entry in containers:
            entries = _shared_watches.get(container, [])
            if entry in entries:
                entries.remove(entry)
            if not entries:
                _shared_watches.pop(container, None)

    watch._stops.append(stop)
    wanted = {c for c, _ in containers}
    for fn in list(_all_functions):
        if _updated_containers(fn) & wanted:
            _instrument(fn)
    return watch


def watch_calls(fn, callback, inputs=True):
    """Call ``callback(fn, inputs, result)`` after each successful call of ``fn``.

    ``inputs`` has one value per graph input (``fn.maker.fgraph.inputs``),
    as it was when the call began (arrays are copies), or ``None`` if the
    arguments could not be read; ``result`` is what the call returned.
    With ``inputs=False`` the callback gets ``None`` and the call copies
    nothing (for watchers that only need to know a call happened).
    Returns a ``Watch``.
    """
    from lucent.compile.function_module import Function

    if not isinstance(fn, Function):
        raise TypeError(f"watch_calls needs a compiled lucent Function, got {type(fn).__name__}")
    watch = Watch(callback)
    watch.wants_inputs = bool(inputs)
    _call_watches.setdefault(fn, []).append(watch)
    fn_ref = weakref.ref(fn)

    def stop():
        target = fn_ref()
        if target is not None and watch in _call_watches.get(target, []):
            _call_watches[target].remove(watch)

    watch._stops.append(stop)
    _instrument(fn)
    return watch


def live_functions():
    """Every compiled Function still alive (for tools that must find the one owning a graph)."""
    return list(_all_functions)


def replay(fgraph, input_values, on_node):
    """Run ``fgraph`` node by node on the Python path, calling ``on_node(node, outputs)`` after each.

    ``outputs`` are the node's output values right after it ran (a later
    in-place node may overwrite them, so read them in the callback). The
    input values are copied first, so the caller's values are not changed;
    NumPy's floating-point warnings are silenced (the call being replayed
    already gave them).
    """
    from lucent.link.python import PythonLinker

    linker = PythonLinker(allow_gc=False).accept(fgraph)
    cells = [[copy.copy(v) if hasattr(v, "copy") else v] for v in input_values]
    _, _, _, thunks, order, storage_map = linker.make_all(input_storage=cells)
    # A replay serves a view: a NaN the user's call already produced must not
    # print NumPy's floating-point warnings a second time.
    with np.errstate(all="ignore"):
        for thunk, node in zip(thunks, order):
            thunk()
            on_node(node, [storage_map[v][0] for v in node.outputs])
    return storage_map


__all__ = [
    "Watch", "watch_shared", "watch_calls", "notify_shared_changed", "notify_container_changed",
    "live_functions", "replay", "register_function",
]
