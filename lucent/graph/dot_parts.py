"""How a large drawing is organised: parts, groups and fused formulas.

A training step of a small network is already a hundred nodes; drawn flat,
it is a wall of boxes. Three facts of the graph make it readable, and this
module computes them for ``lucent.graph.dot.GraphDot``:

* **Parts.** The nodes a gradient built (``tag.backward``, see
  ``lucent.graph.utils.building_backward``) form the *backward* part; the
  nodes that consume the gradient without being part of it (an optimiser's
  ``W - lr * g``) form the *update* part; the rest is the *forward* part.
  Each part is a Graphviz cluster, and the backward one can be collapsed
  into a single box.
* **Groups.** Nodes are grouped by the user's variable names (the name of
  the node's output, else the name assigned on the line that created it:
  ``z = lt.dot(h, W) + b`` groups its nodes under ``z``) or by that line
  itself (``In [3], line 9``).
* **Formulas.** A fused elementwise loop (``Composite``) reads as the
  formula it computes, with its inputs named after the variables it reads,
  and its expression tree is available for the details of a view.
"""

from __future__ import annotations

import linecache
import re

from lucent.graph.utils import format_trace, is_backward, notebook_cell_name

#: The parts of a drawing, in drawing order, with their cluster titles.
PARTS = {
    "forward": "forward",
    "backward": "backward (built by grad)",
    "update": "updates (use the gradient)",
}

GROUP_BY = (None, "name", "line")

_ASSIGNED = re.compile(r"^\s*([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*(?:\[[^\]]*\])?\s*(?::[^=]+)?=(?!=)")


def node_parts(nodes, outputs=(), update_outputs=()):
    """``{node: "forward" | "backward" | "update"}`` for Apply nodes in toposort order.

    Backward: built by a gradient. Update: the other nodes that only feed
    ``update_outputs`` (a function's updates, e.g. ``W - lr * g``). Forward:
    the rest, including a fused loop computing the loss together with a
    piece of its gradient. Empty when no node was built by a gradient: a
    graph without a backward part is not split.
    """
    if not any(is_backward(n) for n in nodes):
        return {}
    updates = {id(v) for v in update_outputs}
    feeds_result = set()
    stack = [v.owner for v in outputs if id(v) not in updates and v.owner is not None]
    while stack:
        node = stack.pop()
        if node in feeds_result:
            continue
        feeds_result.add(node)
        stack.extend(i.owner for i in node.inputs if i.owner is not None)
    parts = {}
    for node in nodes:
        if is_backward(node):
            parts[node] = "backward"
        elif updates and node not in feeds_result:
            parts[node] = "update"
        else:
            parts[node] = "forward"
    # A gradient piece a forward node reads (the seed ``1`` a loop fused with
    # the loss consumes) is drawn with the forward part: parts drawn one
    # below the other cannot feed upwards.
    readers = {}
    for node in nodes:
        for inp in node.inputs:
            if inp.owner is not None:
                readers.setdefault(inp.owner, []).append(node)
    for node in reversed(nodes):
        if parts[node] == "backward" and any(parts[r] == "forward" for r in readers.get(node, ())):
            parts[node] = "forward"
    return parts


def source_line(entry):
    """The stripped source text of a trace entry ``(filename, lineno, name)``, or ``""``."""
    filename, lineno = entry[0], entry[1]
    try:
        return linecache.getline(filename, lineno).strip()
    except Exception:  # an odd filename must not stop a drawing
        return ""


def assigned_name(entry):
    """The variable assigned on the line of a trace entry (``z`` for ``z = lt.dot(h, W)``), else None."""
    match = _ASSIGNED.match(source_line(entry))
    if match is None:
        return None
    names = [n.strip() for n in match.group(1).split(",")]
    return names[0] if len(names) == 1 else ", ".join(names)


def line_key(node):
    """``(key, title)`` of the line that created ``node``, or None without a trace.

    The title reads ``In [3], line 9: z = lt.dot(h, W) + b`` in a notebook.
    """
    trace = getattr(node.tag, "trace", None)
    if not trace:
        return None
    entry = trace[0]
    where = format_trace([entry])
    if notebook_cell_name(entry[0]) is None:
        where = f"{_short_file(entry[0])}, line {entry[1]}"
    text = source_line(entry)
    if len(text) > 48:
        text = text[:47] + "…"
    return (entry[0], entry[1]), f"{where}: {text}" if text else where


def name_key(node):
    """``(key, title)``: the user's name a node computes, or None.

    The first named output; else the variable assigned on the line that
    created the node.
    """
    for out in node.outputs:
        if out.name:
            return ("name", out.name), out.name
    trace = getattr(node.tag, "trace", None)
    if trace:
        name = assigned_name(trace[0])
        if name:
            return ("name", name), name
    return None


def group_keys(nodes, group_by):
    """``{node: (key, title)}`` for the nodes that belong to a group under ``group_by``."""
    if group_by not in GROUP_BY:
        raise ValueError(f"group_by must be None, 'name' or 'line', got {group_by!r}")
    if group_by is None:
        return {}
    keyer = name_key if group_by == "name" else line_key
    out = {}
    for node in nodes:
        key = keyer(node)
        if key is not None:
            out[node] = key
    return out


def _short_file(filename):
    parts = filename.replace("\\", "/").rsplit("/", 2)
    return "/".join(parts[-2:]) if len(parts) > 1 else filename


# ---------------------------------------------------------------------------
# Fused loops.

def composite_of(node):
    """The scalar ``Composite`` an elementwise node runs, or None."""
    scalar_op = getattr(node.op, "scalar_op", None)
    if scalar_op is not None and type(scalar_op).__name__ == "Composite":
        return scalar_op
    return None


def input_names(node):
    """Short names for a node's inputs: the variable's name, a small constant's value, else ``i<k>``."""
    names = []
    for k, var in enumerate(node.inputs):
        name = var.name
        if name and len(name) <= 16 and re.fullmatch(r"[\w.\[\]/()]+", name):
            names.append(name)
            continue
        data = getattr(var, "data", None)
        if data is not None and getattr(data, "size", 2) == 1:
            try:
                names.append(str(data.item()))
                continue
            except Exception:
                pass
        names.append(f"i{k}")
    return names


def composite_formula(node):
    """The formula of a fused node with its inputs named (``tanh(i0 + b0)``), or None."""
    comp = composite_of(node)
    if comp is None:
        return None
    return comp.formula(input_names(node))


def composite_tree(node):
    """The fused expression tree of a ``Composite`` node, one scalar op per line, inputs named."""
    comp = composite_of(node)
    if comp is None:
        return None
    names = dict(zip(comp.inputs, input_names(node)))
    lines = []

    def text_of(var):
        if var in names:
            return names[var]
        data = getattr(var, "data", None)
        if data is not None:
            try:
                return str(data.item())
            except Exception:
                return str(data)
        return str(var)

    def walk(var, prefix, last, top):
        branch = "" if top else ("└─ " if last else "├─ ")
        owner = var.owner
        if owner is None or var in names:
            lines.append(prefix + branch + text_of(var))
            return
        op = getattr(owner.op, "name", None) or str(owner.op)
        index = f".{owner.outputs.index(var)}" if len(owner.outputs) > 1 else ""
        lines.append(prefix + branch + op + index)
        inner = prefix + ("" if top else ("   " if last else "│  "))
        for k, inp in enumerate(owner.inputs):
            walk(inp, inner, k == len(owner.inputs) - 1, False)

    for j, out in enumerate(comp.outputs):
        if len(comp.outputs) > 1:
            lines.append(f"output {j}:")
        walk(out, "", True, True)
    return "\n".join(lines)


__all__ = [
    "GROUP_BY", "PARTS", "assigned_name", "composite_formula", "composite_of", "composite_tree",
    "group_keys", "input_names", "line_key", "name_key", "node_parts", "source_line",
]
