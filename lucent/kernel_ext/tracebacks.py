"""Tracebacks in the notebook that stop at the user's code.

An error raised while a lucent function runs travels through lucent's own
code before it reaches the cell: the call wrapper, the linker's loop, the
op's ``perform``, a generated kernel file, the ``%%graph`` magic. Those
frames say nothing the user can act on, and they push the cell's line out
of sight; what lucent knows about the failure (which node, its input
shapes, the line that created it) is already in the error's notes. So,
once the extension is loaded, tracebacks shown in the notebook leave
lucent's frames out. ``config.exception_verbosity = "high"`` shows them all
again (to debug lucent itself).

The frames are dropped from the traceback of the error and of the errors it
was raised from (``__cause__`` and ``__context__``), so ``%debug`` after
such an error starts in the user's code too.
"""

from __future__ import annotations

import os
import types

import lucent

_LUCENT_DIR = os.path.dirname(os.path.abspath(lucent.__file__))


def is_internal_frame(filename):
    """Whether a frame of ``filename`` is lucent's code rather than the user's.

    lucent's package, the code it generates (``<lucent fast call>``) and the
    kernel files it compiles (``lucent_kernel_*.py`` in the compile cache).
    The ``%%graph`` cell's own code (``<%%graph NAME>``) is the user's.
    """
    if not filename:
        return False
    if filename.startswith("<lucent"):
        return True
    if os.path.basename(filename).startswith("lucent_kernel_"):
        return True
    return os.path.abspath(filename).startswith(_LUCENT_DIR + os.sep)


def without_internal_frames(tb):
    """``tb`` without lucent's frames (``tb`` itself when that would leave none)."""
    kept = []
    entry = tb
    while entry is not None:
        if not is_internal_frame(entry.tb_frame.f_code.co_filename):
            kept.append(entry)
        entry = entry.tb_next
    if not kept:
        return tb
    if len(kept) == _length(tb):
        return tb
    new = None
    for entry in reversed(kept):
        new = types.TracebackType(new, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return new


def _length(tb):
    n = 0
    while tb is not None:
        n += 1
        tb = tb.tb_next
    return n


def _strip_chain(value, seen):
    while value is not None and id(value) not in seen:
        seen.add(id(value))
        if value.__traceback__ is not None:
            value.__traceback__ = without_internal_frames(value.__traceback__)
        if value.__cause__ is not None:
            _strip_chain(value.__cause__, seen)
        value = value.__context__


def show_traceback(shell, etype, value, tb, tb_offset=None):
    """IPython custom exception handler: show the error without lucent's frames.

    Registered with ``shell.set_custom_exc((Exception,), show_traceback)``;
    IPython calls it for an error raised by a cell and expects it to show the
    traceback (its return value is only checked).
    """
    if str(lucent.config.exception_verbosity) != "high":
        tb = without_internal_frames(tb)
        value.__traceback__ = tb
        _strip_chain(value.__cause__, {id(value)})
        _strip_chain(value.__context__, {id(value)})
    shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
    return []


def install(shell):
    """Make ``shell`` show tracebacks without lucent's frames; ``False`` when another handler is set."""
    if getattr(shell, "custom_exceptions", ()) not in ((), None):
        return False
    shell.set_custom_exc((Exception,), show_traceback)
    return True


def uninstall(shell):
    """Undo ``install`` (only if lucent's handler is still the one set)."""
    current = getattr(getattr(shell, "CustomTB", None), "__func__", None)
    if shell.custom_exceptions == (Exception,) and current is not None and _is_ours(current):
        shell.set_custom_exc((), None)
        shell.custom_exceptions = ()


def _is_ours(wrapped):
    # IPython wraps the handler in a closure; look for ours among its cells.
    for cell in getattr(wrapped, "__closure__", None) or ():
        if cell.cell_contents is show_traceback:
            return True
    return False


__all__ = ["install", "is_internal_frame", "show_traceback", "uninstall", "without_internal_frames"]
