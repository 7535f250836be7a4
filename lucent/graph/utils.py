"""Small utilities shared by the graph layer.

Kept free of numpy and of anything above ``lucent.graph`` so that every other
layer may import it.
"""

from __future__ import annotations

import functools
import os
import sys
import traceback


class MethodNotDefined(Exception):
    """Raised by an interface method that a subclass chose not to implement.

    The C-interface types (``CLinkerType``) raise it for every code-generation
    hook: lucent compiles with Numba, so those hooks only exist for API
    compatibility.
    """


class Scratchpad:
    """A free-form attribute bag (``variable.tag``) for annotations.

    Tags carry information that is not part of a variable's identity, such as
    the place in user code where it was created, so that errors can point there.
    """

    def clear(self):
        self.__dict__.clear()

    def __update__(self, other):
        self.__dict__.update(other.__dict__)
        return self

    def __str__(self):
        return "scratchpad" + str(self.__dict__)

    __repr__ = __str__


class ValidatingScratchpad(Scratchpad):
    """A Scratchpad whose one named attribute is checked on assignment."""

    def __init__(self, attr, attr_filter):
        super().__init__()
        object.__setattr__(self, "_attr", attr)
        object.__setattr__(self, "_attr_filter", attr_filter)

    def __setattr__(self, attr, obj):
        if getattr(self, "_attr", None) == attr:
            obj = self._attr_filter(obj)
        return object.__setattr__(self, attr, obj)


_LUCENT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def user_frame():
    """Return ``(filename, lineno, function)`` of the innermost frame outside lucent.

    Recorded on every Apply at creation so that DebugMode and error messages
    can say *where in the user's code* a node was built. The ``make_node``
    of a user-defined op is skipped too: the useful line is the one that
    applied the op, not the op's own code. Walking frames is cheap compared
    with building a node.
    """
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if (
            not _in_lucent(code.co_filename)
            and not _inside_op(frame)
            and not _inside_shell(frame)
        ):
            return (code.co_filename, frame.f_lineno, code.co_name)
        frame = frame.f_back
    return None


@functools.lru_cache(maxsize=4096)
def _in_lucent(filename):
    """Whether ``filename`` is a file of lucent (asked for each frame of each node made: cached)."""
    return os.path.abspath(filename).startswith(_LUCENT_DIR)


#: Modules of the notebook machinery: a node made while they run (a display
#: hook, a magic) was not written on a line of theirs.
_SHELL_MODULES = ("IPython.", "ipykernel.", "ipywidgets.", "anywidget.", "traitlets.")


def _inside_shell(frame):
    """Whether ``frame`` is code of IPython, the kernel or the widgets (not the user's cell)."""
    module = frame.f_globals.get("__name__") or ""
    return module.startswith(_SHELL_MODULES)


def _inside_op(frame):
    """Whether ``frame`` runs an op's own ``make_node`` (or ``__call__``)."""
    if frame.f_code.co_name not in ("make_node", "__call__"):
        return False
    owner = frame.f_locals.get("self")
    return owner is not None and hasattr(owner, "make_node") and hasattr(owner, "perform")


def add_tag_trace(thing):
    """Record the user code location that created ``thing`` on ``thing.tag.trace``.

    A node made while a gradient is built (``building_backward``) is also
    marked ``tag.backward = True``, so views can tell the backward part of
    a training graph from the forward one.
    """
    location = user_frame()
    thing.tag.trace = [location] if location is not None else []
    if _backward_depth[0]:
        thing.tag.backward = True
    return thing


#: How many ``building_backward`` calls are running (a gradient of a gradient nests).
_backward_depth = [0]


def building_backward(fn):
    """Decorate a function that builds gradient graphs: the nodes it makes are marked ``tag.backward``.

    ``lucent.grad`` is decorated, so every node a gradient adds (the seed,
    each op's pullback, the sums of terms) carries the mark; rewrites hand
    it on (``hand_on_backward``), so the compiled graph of a training step
    still tells which nodes compute the gradient.
    """
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        _backward_depth[0] += 1
        try:
            return fn(*args, **kwargs)
        finally:
            _backward_depth[0] -= 1

    return wrapper


def is_backward(node):
    """Whether an Apply node was built by a gradient (``tag.backward``; see ``building_backward``)."""
    return bool(getattr(node.tag, "backward", False))


def hand_on_backward(old_node, new_node):
    """Give a node a rewrite brought in the backward mark of the node it replaces.

    The first replaced node decides; a node that replaces a forward node
    too (a fused loop computing both the loss and its gradient) is forward:
    it is backward only when everything it replaces is.
    """
    old = is_backward(old_node)
    if "backward" not in new_node.tag.__dict__:
        new_node.tag.backward = old
    elif new_node.tag.backward and not old:
        new_node.tag.backward = False


def format_trace(trace):
    """Text form of a trace recorded by :func:`add_tag_trace`.

    Code run in a notebook lives in a temporary file of the kernel that
    means nothing to the user: a line of a cell reads ``In [7], line 3``
    (the execution count IPython shows), a line of a ``%%graph NAME`` cell
    ``%%graph NAME, line 5``, as tracebacks in the notebook say.
    """
    if not trace:
        return "(no creation trace recorded)"
    filename, lineno, name = trace[0]
    cell = notebook_cell_name(filename)
    if cell is not None:
        return f"{cell}, line {lineno}" + (f", in {name}" if name and name != "<module>" else "")
    return f'File "{filename}", line {lineno}, in {name}'


def notebook_cell_name(filename):
    """``"In [7]"`` for the code of IPython cell 7, ``"%%graph NAME"`` for a ``%%graph`` cell, else ``None``.

    IPython is never imported here: a cell exists only when it already runs.
    """
    if filename.startswith("<%%graph ") and filename.endswith(">"):
        return filename[1:-1]
    ipython = sys.modules.get("IPython")
    get_ipython = getattr(ipython, "get_ipython", None)
    if get_ipython is None:
        return None
    try:
        number = get_ipython().compile._filename_map.get(filename)
    except Exception:  # no shell running, or an IPython without that map
        return None
    return None if number is None else f"In [{number}]"


def get_variable_trace_string(variable):
    trace = getattr(variable.tag, "trace", None)
    return format_trace(trace)


def flatten(items):
    """Flatten nested lists/tuples into one list."""
    out = []
    for item in items:
        if isinstance(item, (list, tuple)):
            out.extend(flatten(item))
        else:
            out.append(item)
    return out


def uniq(seq):
    """Remove duplicates, keeping first-occurrence order."""
    seen = set()
    out = []
    for item in seq:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def difference(seq1, seq2):
    """Items of ``seq1`` not in ``seq2``, in order."""
    seq2 = set(seq2)
    return [item for item in seq1 if item not in seq2]


def stack_summary():
    return traceback.format_stack()


def __getattr__(name):
    # The graph errors live with FunctionGraph (lucent.graph.fg), which imports
    # this module through lucent.graph.basic; they are also reachable here, at
    # the path PyTensor code imports them from, without an import cycle.
    if name in ("MissingInputError", "InconsistencyError"):
        from lucent.graph import fg

        return getattr(fg, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
