"""What a graph view's details panel says about each drawn node that never changes between calls.

``GraphView`` shows one graph at a time: the function's own graph, or the
inner graph of a loop or of an ``OpFromGraph`` it opened. Every level gets
the same panel (op, types, inputs, ``dprint``, where the node was created),
so the entries are built here from a ``GraphDot`` alone, for any level.

Why ids get a prefix
--------------------
The ids of a ``GraphDot`` (``n3``, ``v0``) are only unique within one
graph. An inner graph's entries are keyed by the path of the nodes opened to
reach it (``n7/n2`` is node ``n2`` of the inner graph of outer node ``n7``),
so a selection names one node of the whole nested program, and a widget
linked to the view's ``selected`` trait can point into a loop.
"""

from __future__ import annotations

from lucent.graph.dot import draws_random_numbers, node_label, type_text
from lucent.graph.dot_parts import composite_formula, composite_tree, input_names


def node_entries(drawing, prefix=""):
    """``{prefix + id: entry}`` for every drawn node of ``drawing`` (see ``GraphView``'s docstring)."""
    from lucent.graph.utils import format_trace
    from lucent.printing import debugprint

    info = {}
    for ident, obj in drawing.objects.items():
        kind = drawing.kinds[ident]
        title, details, _ = drawing.describe(ident)
        entry = {"id": prefix + ident, "kind": kind, "label": " ".join(title), "problems": [], "profile": None}
        if kind == "apply":
            op = obj.op
            entry["op"] = str(op)
            entry["op_class"] = type(op).__name__
            entry["label"] = node_label(obj)
            entry["part"] = drawing.parts.get(ident)
            formula = composite_formula(obj)
            if formula is not None:
                entry["composite"] = {
                    "formula": formula,
                    "tree": composite_tree(obj),
                    "inputs": [f"{n} = input {k}" for k, n in enumerate(input_names(obj))],
                }
            entry["outputs"] = [output_info(v) for v in obj.outputs]
            entry["inputs"] = [
                {"id": prefix + drawing.producer_id(v), "text": f"{k}: {_input_text(drawing, v)} ({type_text(v.type)})"}
                for k, v in enumerate(obj.inputs)
            ]
            entry["aliasing"] = aliasing_text(op)
            entry["random"] = draws_random_numbers(obj)
            entry["created_at"] = format_trace(getattr(obj.tag, "trace", None))
            target = obj
        elif kind == "output":
            _, index, var = obj
            entry["outputs"] = [output_info(var)]
            entry["inputs"] = [{"id": prefix + drawing.producer_id(var), "text": _input_text(drawing, var)}]
            target = var
        else:
            entry["outputs"] = [output_info(obj)]
            if not obj.name and kind == "input":
                entry["outputs"][0]["name"] = " ".join(title)
            entry["inputs"] = []
            target = obj
        try:
            entry["dprint"] = debugprint(target, depth=3, print_type=True, file="str").rstrip()
        except Exception as e:  # a view must not fail on an op that prints badly
            entry["dprint"] = f"(dprint failed: {type(e).__name__}: {e})"
        info[prefix + ident] = entry
    return info


def _input_text(drawing, var):
    """``str(var)``, or the name the drawing gives an unnamed graph input (an inner graph's ``x[t]``)."""
    if var.owner is None and not var.name and drawing.kinds.get(drawing.ids.get(var)) == "input":
        return " ".join(drawing.describe(drawing.ids[var])[0])
    return str(var)


def output_info(var):
    """The panel's line for one output: name, type, dtype, static shape; ``summary`` is filled per call."""
    shape = getattr(var.type, "shape", None)
    return {
        "name": var.name,
        "type": str(var.type),
        "type_text": type_text(var.type),
        "dtype": getattr(var.type, "dtype", None),
        "shape": None if shape is None else ["?" if s is None else int(s) for s in shape],
        "summary": None,
    }


def aliasing_text(op):
    """Which outputs overwrite or view which inputs (``destroy_map``/``view_map``), in words."""
    parts = []
    for out, ins in sorted((getattr(op, "destroy_map", None) or {}).items()):
        parts.append(f"output {out} overwrites input {', '.join(map(str, ins))} in place")
    for out, ins in sorted((getattr(op, "view_map", None) or {}).items()):
        parts.append(f"output {out} is a view of input {', '.join(map(str, ins))}")
    return "; ".join(parts)


def search_text(entry):
    """What the search matches in a node's entry (kept in step with graph_view.js's ``searchText``)."""
    parts = [entry["id"], entry.get("label", ""), entry.get("op", ""), entry.get("created_at", "")]
    parts += [o.get("name") or "" for o in entry.get("outputs", [])]
    return " ".join(parts).lower()


def id_range(ids):
    """The ids of a graph, shortly (``n0..n11 (nodes); v0, v1, o0``), for error messages."""
    apply_ids = [i for i in ids if i.rsplit("/", 1)[-1].startswith("n")]
    other = [i for i in ids if not i.rsplit("/", 1)[-1].startswith("n")]
    parts = []
    if apply_ids:
        prefix = apply_ids[0].rsplit("/", 1)[0] + "/" if "/" in apply_ids[0] else ""
        parts.append(f"{prefix}n0..{prefix}n{len(apply_ids) - 1} (nodes)")
    if other:
        parts.append(", ".join(other[:8]) + (", ..." if len(other) > 8 else ""))
    return "; ".join(parts) or "none"


__all__ = ["node_entries", "output_info", "aliasing_text", "search_text", "id_range"]
