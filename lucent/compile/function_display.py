"""A compiled function in a few lines: the header drawn above its graph in a notebook.

``Function._repr_html_`` and ``lucent.widgets.GraphView`` both show, above
the drawing of the rewritten graph, what the function takes and gives: its
inputs and outputs with their types, the shared variables it updates and
the mode it was compiled with.
"""

from __future__ import annotations

import html

from lucent.graph.dot import type_text


def function_summary(fn):
    """``{"name", "inputs", "outputs", "updates", "mode", "nodes"}`` of a compiled function, as text.

    Inputs and outputs read ``name: float64 (?, 3)``; updates name the
    shared variables the function writes.
    """
    fgraph = fn.maker.fgraph
    n_out = len(fn.maker.outputs)

    def named(var, fallback):
        return f"{var.name or fallback}: {type_text(var.type)}"

    inputs = [
        named(i.variable, f"input {k}") for k, i in enumerate(fn.inputs) if not getattr(i, "implicit", False)
    ]
    outputs = [named(v, f"output {j}") for j, v in enumerate(fgraph.outputs[:n_out])]
    mapping = getattr(fgraph, "update_mapping", None) or {}
    updates = []
    for j in sorted(mapping):
        target = fgraph.inputs[mapping[j]]
        updates.append(target.name or f"input {mapping[j]}")
    mode = fn.maker.mode
    return {
        "name": fn.name,
        "inputs": inputs,
        "outputs": outputs,
        "updates": updates,
        "mode": getattr(mode, "name", None) or str(mode),
        "mode_repr": str(mode),
        "nodes": len(fgraph.apply_nodes),
    }


def function_header_html(fn):
    """A small HTML header for a function's drawing: name, inputs, outputs, updates and mode."""
    info = function_summary(fn)
    esc = html.escape
    title = f"Function {esc(repr(info['name']))}" if info["name"] else "Function"
    rows = [
        ("Inputs", ", ".join(info["inputs"]) or "none"),
        ("Outputs", ", ".join(info["outputs"]) or "none"),
    ]
    if info["updates"]:
        rows.append(("Updates", ", ".join(info["updates"])))
    n = info["nodes"]
    rows.append(("Mode", f"{info['mode_repr']}, {n} node{'' if n == 1 else 's'} after rewriting"))
    body = "".join(
        f'<tr><th style="text-align:left;padding:1px 10px 1px 0;font-weight:600">{esc(k)}</th>'
        f'<td style="text-align:left;padding:1px 0;font-family:monospace">{esc(v)}</td></tr>'
        for k, v in rows
    )
    return f'<div style="margin-bottom:6px"><b>{title}</b><table style="margin:2px 0">{body}</table></div>'


__all__ = ["function_summary", "function_header_html"]
