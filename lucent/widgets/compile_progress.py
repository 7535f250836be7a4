"""A compile's progress in a notebook: a small bar and a line of text under the cell.

``lucent.progress`` shows a compile that runs longer than about a second
and asks its display factory for somewhere to show it; the notebook
extension (``%load_ext lucent.kernel_ext``) installs ``notebook_display``
as that factory. The widget is closed when the compile ends, so nothing is
left in the saved notebook.
"""

from __future__ import annotations

import re

from lucent.progress import Display

_COUNT = re.compile(r"(\d+) of (\d+)")


class NotebookProgressDisplay(Display):
    """An ipywidgets progress bar with the compile's current stage as its label."""

    def __init__(self):
        import ipywidgets as widgets
        from IPython.display import display

        self.bar = widgets.IntProgress(value=0, min=0, max=1, bar_style="info",
                                       layout=widgets.Layout(width="160px"))
        self.label = widgets.HTML(value="")
        self.box = widgets.HBox([self.bar, self.label])
        display(self.box)

    def update(self, text):
        counts = _COUNT.search(text)
        if counts:
            done, total = int(counts.group(1)), int(counts.group(2))
            self.bar.max = max(total, 1)
            self.bar.value = min(done, self.bar.max)
            self.bar.bar_style = "info"
        else:
            # A stage without counts: an indeterminate (striped, full) bar.
            self.bar.max, self.bar.value = 1, 1
            self.bar.bar_style = ""
        from html import escape

        self.label.value = f"<code>{escape(text)}</code>"

    def close(self):
        self.box.close()


def notebook_display():
    """A ``NotebookProgressDisplay``, or ``None`` outside a notebook kernel."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None:
        return None
    try:
        return NotebookProgressDisplay()
    except ImportError:
        return None


__all__ = ["NotebookProgressDisplay", "notebook_display"]
