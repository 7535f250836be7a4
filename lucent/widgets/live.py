"""Keeping a widget current without flooding the frontend.

A view that follows a training loop sees thousands of changes a second;
sending each to the browser would slow the loop and the page. Two small
tools shared by the live views of this package:

* ``CellHook`` runs a method after every IPython cell (the moment a user
  looks at the result), holding its owner weakly;
* ``Throttle`` pushes at most every ``min_interval`` seconds and flushes
  what waits after each cell.

There is no timer thread: the kernel runs one cell at a time, and a widget
touched from another thread while a loop runs would race with it.
"""

from __future__ import annotations

import math
import sys
import time
import weakref


class CellHook:
    """Calls ``owner.<method_name>()`` after every IPython cell while the owner lives (in IPython).

    The owner is held weakly, so a view nobody displays any more is
    collected and its hook removed; ``stop()`` removes it explicitly.
    """

    def __init__(self, owner, method_name):
        ipython = sys.modules.get("IPython")
        shell = ipython.get_ipython() if ipython is not None else None
        self._shell = shell
        self._hook = None
        if shell is None:
            return
        ref = weakref.ref(owner)

        def post_run_cell(result=None):
            target = ref()
            if target is None:
                self.stop()
            else:
                getattr(target, method_name)()

        shell.events.register("post_run_cell", post_run_cell)
        self._hook = post_run_cell

    @property
    def active(self):
        return self._hook is not None

    def stop(self):
        if self._hook is not None:
            try:
                self._shell.events.unregister("post_run_cell", self._hook)
            except ValueError:  # already removed
                pass
        self._shell = self._hook = None


class Throttle:
    """Calls ``push()`` at most every ``min_interval`` seconds; ``flush()`` pushes what waits.

    ``changed()`` says something changed: it pushes at once when the last
    push is older than ``min_interval`` (so a single change shows at once),
    otherwise it marks the change as waiting. ``follow_cells()`` asks
    IPython, when there is one, to flush after each cell; ``stop()`` undoes
    that. ``clock`` gives the time in seconds (tests pass their own).
    Shared by the live views of this package.
    """

    def __init__(self, push, min_interval, clock=time.monotonic):
        if not isinstance(min_interval, (int, float)) or isinstance(min_interval, bool) or min_interval < 0:
            raise ValueError(f"min_interval must be a number of seconds >= 0, got {min_interval!r}")
        self._push = push
        self._clock = clock
        self.min_interval = float(min_interval)
        self.pending = False
        self.pushes = 0
        self._last = -math.inf
        self._cell_hook = None

    def changed(self):
        if self._clock() - self._last >= self.min_interval:
            self.flush()
        else:
            self.pending = True

    def flush(self):
        self.pending = False
        self._last = self._clock()
        self.pushes += 1
        self._push()

    def flush_pending(self):
        if self.pending:
            self.flush()

    def follow_cells(self):
        """Flush after every IPython cell, if running inside IPython (held weakly)."""
        if self._cell_hook is None or not self._cell_hook.active:
            self._cell_hook = CellHook(self, "flush_pending")

    def stop(self):
        if self._cell_hook is not None:
            self._cell_hook.stop()
        self._cell_hook = None
        self.pending = False


def stop_following(view, *names):
    """Stop the watches, hooks and throttles ``view`` keeps under the attribute ``names``.

    Tolerates missing attributes: ``close()`` also runs for a view whose
    construction failed half-way.
    """
    for name in names:
        stopper = getattr(view, name, None)
        if stopper is not None:
            stopper.stop()


__all__ = ["CellHook", "Throttle", "stop_following"]
