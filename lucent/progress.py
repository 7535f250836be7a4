"""What a long compile is doing, shown while it does it.

A compile runs in stages: rewriting the graph, making each node's kernel,
compiling the graph function to machine code, linking. Most compiles take
a fraction of a second and show nothing. One that is still running after
``DELAY`` seconds gets a display - a progress line on a terminal, a small
widget in a notebook - that follows its stages and disappears when it ends
(normally, with an error, or interrupted).

The layers that do the work report to the compile in progress::

    with compiling("function f"):          # compile/: one per function
        progress.stage("rewriting")
        ...
        progress.stage("kernels", total=n)  # link/: per node
        progress.advance()

Nested ``compiling`` blocks (``eval`` compiling a ``function``, an inner
graph compiled inside an outer one) belong to the outermost one. Where the
display goes is pluggable: ``set_display(factory)`` (the notebook extension
installs its widget this way); by default a line on ``sys.stderr`` when it
is a terminal. ``config.compile_progress = False`` turns it all off.

A timer thread starts the display and refreshes the elapsed time, so a
single long step (Numba compiling one big function) still shows progress.
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager

#: Seconds a compile runs before it gets a display.
DELAY = 1.0
#: Seconds between refreshes of the elapsed time.
REFRESH = 0.5


class Display:
    """Where a compile's progress is shown: ``update(text)`` while it runs, ``close()`` after."""

    def update(self, text):  # pragma: no cover - interface
        raise NotImplementedError

    def close(self):  # pragma: no cover - interface
        raise NotImplementedError


class TerminalDisplay(Display):
    """One line on a terminal, rewritten in place and erased at the end."""

    def __init__(self, stream):
        self.stream = stream
        self.width = 0

    def update(self, text):
        text = text[:120]
        self.stream.write("\r" + text.ljust(self.width))
        self.stream.flush()
        self.width = max(self.width, len(text))

    def close(self):
        if self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()


def _terminal_display():
    stream = sys.stderr
    try:
        if stream is not None and stream.isatty():
            return TerminalDisplay(stream)
    except (AttributeError, ValueError):
        pass
    return None


_display_factory = _terminal_display


def set_display(factory):
    """Use ``factory()`` (returning a ``Display`` or ``None``) for the next compiles.

    Returns the previous factory, so a caller can put it back. ``None``
    restores the default (a terminal line when stderr is a terminal).
    """
    global _display_factory
    previous = _display_factory
    _display_factory = factory if factory is not None else _terminal_display
    return previous


class CompileProgress:
    """The state of one running compile: what it is, its stage and how far along."""

    def __init__(self, what):
        self.what = what
        self.stage_name = "starting"
        self.done = 0
        self.total = None
        self.start = time.perf_counter()
        self.display = None
        self.closed = False
        self.lock = threading.Lock()
        self.wake = threading.Event()
        self.thread = None

    def text(self):
        elapsed = time.perf_counter() - self.start
        step = self.stage_name
        if self.total:
            step += f" {self.done} of {self.total}"
        return f"lucent: compiling {self.what}: {step} ({elapsed:.1f} s)"

    def set_stage(self, name, total=None):
        with self.lock:
            self.stage_name = name
            self.total = total
            self.done = 0
        self._refresh()

    def advance(self, n=1):
        with self.lock:
            self.done += n
        if self.display is not None and self.total and (self.done == self.total or self.done % 8 == 0):
            self._refresh()

    def _refresh(self):
        display = self.display
        if display is not None and not self.closed:
            try:
                display.update(self.text())
            except Exception:  # a display that fails must not fail the compile
                self.display = None

    def _run(self):
        # Show only compiles still running after DELAY, then refresh the time.
        if self.wake.wait(DELAY):
            return
        try:
            display = _display_factory()
        except Exception:
            display = None
        if display is None:
            return
        with self.lock:
            if self.closed:
                return
            self.display = display
        while not self.wake.is_set():
            self._refresh()
            self.wake.wait(REFRESH)

    def begin(self):
        self.thread = threading.Thread(target=self._run, name="lucent-compile-progress", daemon=True)
        self.thread.start()

    def end(self):
        with self.lock:
            self.closed = True
            display, self.display = self.display, None
        self.wake.set()
        if self.thread is not None:
            self.thread.join(timeout=2 * REFRESH)
        if display is not None:
            try:
                display.close()
            except Exception:
                pass


_current = threading.local()


def _enabled():
    from lucent.configdefaults import config

    try:
        return bool(config.compile_progress)
    except AttributeError:
        return True


@contextmanager
def compiling(what):
    """Report the stages of the compile of ``what`` (nested compiles join the outer one)."""
    outer = getattr(_current, "progress", None)
    if outer is not None or not _enabled():
        yield outer
        return
    progress = CompileProgress(what)
    _current.progress = progress
    progress.begin()
    try:
        yield progress
    finally:
        _current.progress = None
        progress.end()


def stage(name, total=None):
    """The running compile (if any) is now at stage ``name`` (``total`` steps)."""
    progress = getattr(_current, "progress", None)
    if progress is not None:
        progress.set_stage(name, total)


def advance(n=1):
    """The running compile did ``n`` more steps of its stage."""
    progress = getattr(_current, "progress", None)
    if progress is not None:
        progress.advance(n)


__all__ = ["CompileProgress", "Display", "TerminalDisplay", "advance", "compiling", "set_display", "stage"]
