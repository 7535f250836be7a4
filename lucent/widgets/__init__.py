"""Jupyter widgets that show what a lucent program does.

``GraphView`` draws a graph (graphviz layout, SVG) and lets you click a node
to see its ``dprint``, type and last value; ``SharedView`` is a live panel
of shared variables; ``ProfileView`` and ``DebugReportView`` present a
profile and a DebugMode report; ``RewriteView`` steps through what the
rewrites did to a compiled function. Their state lives in the widget models, so
they survive a kernel reconnect and render from a saved notebook.

Importing ``lucent`` does not import ipywidgets: the classes here are
loaded on first use (``pip install 'lucent[notebook]'`` provides them).
"""

from __future__ import annotations

import importlib

_CLASSES = {
    "GraphView": "lucent.widgets.graph_view",
    "DebugReportView": "lucent.widgets.debug_report_view",
    "SharedView": "lucent.widgets.shared_view",
    "ProfileView": "lucent.widgets.profile_view",
    "RewriteView": "lucent.widgets.rewrite_view",
}

__all__ = sorted(_CLASSES)


def __getattr__(name):
    module = _CLASSES.get(name)
    if module is None:
        raise AttributeError(f"module 'lucent.widgets' has no attribute {name!r}")
    try:
        value = getattr(importlib.import_module(module), name)
    except ImportError as e:
        if e.name in ("ipywidgets", "anywidget", "traitlets"):
            raise ImportError(
                f"lucent.widgets.{name} needs the notebook extras ({e.name} is missing): "
                "pip install 'lucent[notebook]'"
            ) from e
        raise
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_CLASSES))
