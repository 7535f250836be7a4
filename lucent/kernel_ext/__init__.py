"""IPython extension: ``%load_ext lucent.kernel_ext``.

It registers

* the cell magic ``%%graph NAME [--mode MODE] [--inputs a,b,...] [--updates]
  [--profile] [--no-show]``, which runs the cell (with the ``lucent.tensor``
  names at hand), compiles its last expression into a ``lucent.function``
  stored as ``NAME`` and shows its graph;
* the line magic ``%lucent_profile NAME``, which shows the profile of a
  function compiled with ``--profile``;

and makes the notebook's tracebacks leave lucent's own frames out
(``lucent.kernel_ext.tracebacks``; ``config.exception_verbosity="high"``
keeps them).

``lucent`` itself never imports this package, so IPython is only needed by
those who load the extension.
"""

from lucent.kernel_ext import tracebacks
from lucent.kernel_ext.cell import GraphCellError
from lucent.kernel_ext.graph_magic import GraphMagics, parse_graph_line, show_graph, show_profile

__all__ = [
    "GraphCellError",
    "GraphMagics",
    "load_ipython_extension",
    "parse_graph_line",
    "show_graph",
    "show_profile",
    "unload_ipython_extension",
]


def load_ipython_extension(ipython):
    """Register ``%%graph`` and ``%lucent_profile`` with ``ipython`` (``%load_ext``).

    In a notebook kernel, a compile that takes more than about a second also
    shows its progress under the running cell (``config.compile_progress``).
    """
    ipython.register_magics(GraphMagics)
    tracebacks.install(ipython)
    if getattr(ipython, "kernel", None) is not None:
        from lucent import progress
        from lucent.widgets.compile_progress import notebook_display

        global _previous_display
        _previous_display = progress.set_display(notebook_display)


_previous_display = None


def unload_ipython_extension(ipython):
    """Remove the magics ``load_ipython_extension`` registered (``%unload_ext``)."""
    manager = ipython.magics_manager
    for kind in ("line", "cell"):
        table = manager.magics[kind]
        for name in ("graph", "lucent_profile"):
            if isinstance(getattr(table.get(name), "__self__", None), GraphMagics):
                del table[name]
    manager.registry.pop(GraphMagics.__name__, None)
    tracebacks.uninstall(ipython)
    global _previous_display
    if _previous_display is not None:
        from lucent import progress

        progress.set_display(_previous_display)
        _previous_display = None
