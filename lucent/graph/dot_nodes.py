"""What one drawn node says and how it looks: its label, tooltip, colours and the style of its edges.

A node reads the same in every view: the drawing, the details a widget
shows for the node clicked, the search of a graph view, a compiled
function's summary. The words come from here (``node_label``,
``op_label``, ``type_text``), so they cannot drift apart between the views
that draw and the ones that only name nodes. How a node departs from its
kind's default look (``Annotation``: a DebugMode outline, a profile's fill)
is applied here too, one node at a time.

``GraphDot`` (``lucent.graph.dot``) decides which nodes there are, their
ids and how they are arranged; this module and its ``NodeLooks`` mixin
decide what each of them shows.
"""

from __future__ import annotations

import dataclasses
import html
import textwrap

__all__ = [
    "Annotation",
    "NodeLooks",
    "PROBLEM_COLOR",
    "RANDOM_EDGE",
    "RANDOM_FILL",
    "STYLES",
    "draws_random_numbers",
    "holds_random_state",
    "node_label",
    "op_label",
    "type_text",
]


#: Fill and border colours of each kind of node (light fills: text stays black).
STYLES = {
    "apply": dict(shape="box", style="rounded,filled", fillcolor="#e8f0fb", color="#4a6fa5"),
    "input": dict(shape="ellipse", style="filled", fillcolor="#e3f4e4", color="#2e7d32"),
    "shared": dict(shape="ellipse", style="filled", fillcolor="#fff3d6", color="#b7791f", peripheries="2"),
    "constant": dict(shape="box", style="filled,dashed", fillcolor="#f4f4f4", color="#9e9e9e"),
    "output": dict(shape="box", style="rounded,filled,bold", fillcolor="#ece6f6", color="#6a4c93"),
}

#: A node that draws random numbers (it reads a generator): its fill, and
#: the colour of the generator's edges into and out of it.
RANDOM_FILL = "#fdebd3"
RANDOM_EDGE = "#c05621"


def holds_random_state(var):
    """True for a variable whose value is a random generator (see ``RandomType``)."""
    return bool(getattr(var.type, "holds_random_state", False))


def draws_random_numbers(node):
    """True for an Apply that reads a random generator (a draw, or an op carrying one)."""
    return any(holds_random_state(v) for v in node.inputs)


#: Outline colour for nodes with a problem (DebugMode).
PROBLEM_COLOR = "#d32f2f"

_WRAP = 34          # characters per label line before an op's text is wrapped
_MAX_LINES = 3      # op text lines kept in a label; the tooltip has the rest


@dataclasses.dataclass
class Annotation:
    """How one drawn node departs from its kind's default look.

    ``fill`` and ``outline`` are Graphviz colours (``"#ffcc80"``,
    ``"red"``); an outline is drawn thick, for problems. ``extra`` lines are
    added to the label (e.g. ``"12.3 ms (41%)"``); ``tooltip`` replaces the
    default hover text; ``font_color`` suits a dark fill.
    """

    fill: str | None = None
    outline: str | None = None
    extra: tuple = ()
    tooltip: str | None = None
    font_color: str | None = None


# ---------------------------------------------------------------------------
# Text of labels.

def _shape_text(shape):
    dims = ", ".join("?" if s is None else str(s) for s in shape)
    return f"({dims}{',' if len(shape) == 1 else ''})"


def type_text(type_):
    """``float64 (?, 3)`` for a tensor type (dtype and static shape), ``str(type)`` otherwise.

    A sparse type names its format: ``csr float64 (?, ?)``.
    """
    dtype = getattr(type_, "dtype", None)
    shape = getattr(type_, "shape", None)
    if isinstance(dtype, str) and isinstance(shape, tuple):
        fmt = getattr(type_, "format", None)
        return (f"{fmt} " if isinstance(fmt, str) else "") + f"{dtype} {_shape_text(shape)}"
    return str(type_)


def op_label(op):
    """The one name of ``op`` in every view: its ``str``, as ``dprint``, profiles and rewrite histories print it.

    ``Add``, ``Dot22``, ``Sum{axis=1}``, ``Composite{tanh(i0 + i1)}``. Whether
    a node works in place is a property of the node, shown next to the
    name (``in place`` in a drawing), not a second spelling of it.
    """
    return str(op)


def node_label(node):
    """A node's name in views: the user's name of its output first, then the op (``z = Add``).

    Drawings, the widgets' details and their search use it, so a node reads
    the same everywhere; a fused loop reads as its formula with the inputs
    named after the variables it reads (``Composite{tanh(i0 + b)}``).
    """
    from lucent.graph.dot_parts import composite_formula

    formula = composite_formula(node)
    text = f"Composite{{{formula}}}" if formula is not None else op_label(node.op)
    names = [out.name for out in node.outputs if out.name]
    return f"{names[0]} = {text}" if names else text


def _wrap(text, width=_WRAP):
    """``text`` as at most ``_MAX_LINES`` lines of about ``width`` characters."""
    if len(text) <= width + 6:
        return [text]
    lines = textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False) or [text]
    if len(lines) > _MAX_LINES:
        lines = lines[:_MAX_LINES]
        lines[-1] = lines[-1][: width - 1] + "…"
    return lines


def _constant_text(var):
    if var.name is not None:
        return var.name
    data = getattr(var, "data", None)
    size = getattr(data, "size", 1)
    if size is not None and size <= 4:
        try:
            import numpy as np

            text = np.array2string(np.asarray(data), separator=", ", threshold=4)
        except Exception:
            text = str(data)
    else:
        text = f"array {_shape_text(getattr(data, 'shape', ()))}"
    return text if len(text) <= 24 else text[:21] + "..."


def _html_lines(first, rest, font_color=None):
    """A Graphviz HTML-like label: ``first`` in bold, then the smaller ``rest`` lines."""
    esc = lambda s: html.escape(str(s), quote=False)  # noqa: E731
    parts = [f"<B>{esc(line)}</B>" for line in first]
    parts += [f'<FONT POINT-SIZE="9.5">{esc(line)}</FONT>' for line in rest]
    body = "<BR/>".join(parts)
    if font_color:
        body = f'<FONT COLOR="{font_color}">{body}</FONT>'
    return f"<{body}>"


def _attrs(attrs):
    out = []
    for key, value in attrs.items():
        if value is None:
            continue
        if key == "label" and value.startswith("<"):
            out.append(f"{key}={value}")
        else:
            text = str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
            out.append(f'{key}="{text}"')
    return ", ".join(out)


def _escape(text):
    return str(text).replace("\\", "\\\\").replace('"', '\\"')


# ---------------------------------------------------------------------------
# Each node and edge of a drawing.

class NodeLooks:
    """Methods of ``GraphDot`` for the text and look of each node and edge (a mixin: it uses GraphDot's attributes)."""

    # --- labels ----------------------------------------------------------------------
    def output_label(self, index):
        """``"output 0"``, ``"output 0: cost"`` or ``"update W0"`` (a Function's update)."""
        var = self.outputs[index]
        if index in self.update_mapping:
            k = self.update_mapping[index]
            target = self.inputs[k] if k < len(self.inputs) else None
            return f"update {target.name if target is not None and target.name else f'input {k}'}"
        name = var.name or (self.output_names[index] if index < len(self.output_names) else None)
        return f"output {index}" + (f": {name}" if name else "")

    def describe(self, ident):
        """``(title lines, detail lines, tooltip)`` of the node ``ident`` (plain text)."""
        obj, kind = self.objects[ident], self.kinds[ident]
        if kind == "apply":
            text = node_label(obj)
            many = len(obj.outputs) > 1
            details = [(f"{k}: " if many else "") + type_text(out.type) for k, out in enumerate(obj.outputs)]
            names = [out.name for out in obj.outputs if out.name]
            if len(names) > 1:
                details.append("'" + "', '".join(names) + "'")
            if getattr(obj.op, "destroy_map", None):
                details.append("in place")
            if draws_random_numbers(obj):
                details.append("random: draws from a generator")
            tip = f"{text}  [{ident}]\n" + "\n".join(details)
            return _wrap(text, self.wrap), details, tip
        if kind == "output":
            _, index, var = obj
            title = self.output_label(index)
            return [title], [], f"{title}  [{ident}]\n{type_text(var.type)}"
        if kind == "constant":
            title = _constant_text(obj)
            return [title], [type_text(obj.type)], f"constant {title}  [{ident}]\n{type_text(obj.type)}"
        name = obj.name if obj.name is not None else self._input_name(obj)
        detail = ("shared " if kind == "shared" else "") + type_text(obj.type)
        return [name], [detail], f"{'shared variable' if kind == 'shared' else 'input'} {name}  [{ident}]\n{detail}"

    def _input_name(self, var):
        """The name ``input_names`` gives an unnamed graph input, else ``(unnamed)``."""
        try:
            k = self.inputs.index(var)
        except ValueError:
            return "(unnamed)"
        given = self.input_names[k] if k < len(self.input_names) else None
        return given or "(unnamed)"

    # --- DOT attributes --------------------------------------------------------------
    def _node_attrs(self, ident, note):
        kind = self.kinds[ident]
        attrs = dict(STYLES[kind])
        title, details, tip = self.describe(ident)
        font_color = None
        if note is not None:
            if note.fill:
                attrs["fillcolor"] = note.fill
            if note.outline:
                attrs["color"] = note.outline
                attrs["penwidth"] = "3"
            details = details + [str(line) for line in note.extra]
            if note.tooltip:
                tip = note.tooltip
            font_color = note.font_color
        if kind == "constant":
            attrs["fontsize"] = "10"
        random = kind == "apply" and draws_random_numbers(self.objects[ident])
        if random and (note is None or not note.fill):
            attrs["fillcolor"] = RANDOM_FILL
        attrs["label"] = _html_lines(title, details, font_color)
        attrs["tooltip"] = tip
        attrs["class"] = f"lucent-{kind} lucent-id-{ident}" + (" lucent-random" if random else "")
        if kind == "apply" and self.parts:
            attrs["class"] += f" lucent-part-{self.parts[ident]}"
        marker = self.openable.get(ident)
        if marker is not None:
            attrs["peripheries"] = "2"
            attrs["class"] += " lucent-opens"
            attrs["label"] = _html_lines(title, details + [marker], font_color)
            attrs["tooltip"] = f"{tip}\n{marker}"
        return attrs

    def _edge_attrs(self, node, i, inp):
        attrs = {}
        op = node.op
        destroyed = any(i in ins for ins in (getattr(op, "destroy_map", None) or {}).values())
        viewed = any(i in ins for ins in (getattr(op, "view_map", None) or {}).values())
        if len(node.inputs) > 1:
            attrs["headlabel"] = str(i)
            attrs["labeldistance"] = "1.3"
        if inp.owner is not None and len(inp.owner.outputs) > 1:
            attrs["taillabel"] = f"out {inp.index}"
        if destroyed:
            attrs.update(color="#c62828", penwidth="1.8", tooltip=f"input {i} is overwritten in place")
        elif viewed:
            attrs.update(style="dashed", tooltip=f"the output is a view of input {i}")
        if holds_random_state(inp):
            attrs.update(color=RANDOM_EDGE, style="bold", label="rng",
                         tooltip=f"input {i} is the random generator this node draws from"
                         + (" (advanced in place)" if destroyed else ""))
        return attrs
