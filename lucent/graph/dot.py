"""Drawing a graph: a Graphviz DOT description, rendered to SVG by the ``dot`` program.

``dprint`` shows a graph as text, which is exact but hard to take in once a
graph has more than a few nodes; a drawing shows its shape at a glance:
where the data comes in, which nodes a value flows through, what is updated.
This module builds the drawing once, for three consumers: the rich display
of variables, FunctionGraphs and Functions in a notebook (``_repr_html_``),
the ``GraphView`` widget, and anyone wanting the DOT text or an SVG file.

Why the ids are part of the drawing
-----------------------------------
Every Apply node gets the id ``n0, n1, ...`` (its position in the
toposort), every ownerless variable (graph input, shared variable,
constant) ``v0, v1, ...`` (graph inputs first, in order, then the others as
first used), and every graph output a marker ``o0, o1, ...``. The same graph
always gets the same ids, so a widget can refer to a node by a short string
that survives saving the notebook, and the SVG names each node by its id
(the ``<title>`` of its group, and a ``lucent-id-<id>`` class), so a script
in the browser can find the node a user clicked.

Why annotations are separate
----------------------------
What a node looks like depends on who draws it: a DebugMode report outlines
the faulty nodes in red, a profile fills nodes by their share of time. The
builder takes ``{id: Annotation}`` (fill, outline, extra label lines,
tooltip) instead of knowing about reports and profiles, so ``graph`` stays
below ``compile`` and ``debugmode``.

Rendering runs the ``dot`` program in a subprocess (the ``graphviz`` Python
package is not needed). Without it, ``render_svg`` raises
``GraphvizNotFoundError`` naming the program and how to install it; the
notebook displays fall back to the ``dprint`` text instead.
"""

from __future__ import annotations

import dataclasses
import html
import re
import shutil
import subprocess
import textwrap

from lucent.graph.basic import Apply, Constant, Variable

__all__ = [
    "Annotation",
    "GraphDot",
    "GraphvizNotFoundError",
    "GraphvizRenderError",
    "graph_html",
    "graph_svg",
    "op_label",
    "render_svg",
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

#: Outline colour for nodes with a problem (DebugMode).
PROBLEM_COLOR = "#d32f2f"

_FONT = "Helvetica,Arial,sans-serif"
_WRAP = 34          # characters per label line before an op's text is wrapped
_MAX_LINES = 3      # op text lines kept in a label; the tooltip has the rest


class GraphvizNotFoundError(RuntimeError):
    """The Graphviz ``dot`` program, which lays out and renders graphs, is not installed."""


class GraphvizRenderError(RuntimeError):
    """``dot`` ran but failed to render the description it was given."""


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
    """``float64 (?, 3)`` for a tensor type (dtype and static shape), ``str(type)`` otherwise."""
    dtype = getattr(type_, "dtype", None)
    shape = getattr(type_, "shape", None)
    if isinstance(dtype, str) and isinstance(shape, tuple):
        return f"{dtype} {_shape_text(shape)}"
    return str(type_)


def op_label(op):
    """A short, readable name for ``op``.

    Elementwise ops read as ``Elemwise{add}`` (``,inplace`` when they
    overwrite an input), fused ones as ``Composite{tanh(i0 + i1)}``; other
    ops as their ``str`` (``Dot22``, ``Sum{axis=1}``), like ``dprint``.
    """
    scalar_op = getattr(op, "scalar_op", None)
    if scalar_op is not None and type(op).__name__ == "Elemwise":
        if type(scalar_op).__name__ == "Composite":
            return str(scalar_op)
        name = getattr(scalar_op, "name", None) or type(scalar_op).__name__.lower()
        inplace = ",inplace" if getattr(op, "inplace_pattern", None) else ""
        return f"Elemwise{{{name}{inplace}}}"
    return str(op)


def _wrap(text):
    """``text`` as at most ``_MAX_LINES`` lines of about ``_WRAP`` characters."""
    if len(text) <= _WRAP + 6:
        return [text]
    lines = textwrap.wrap(text, _WRAP, break_long_words=True, break_on_hyphens=False) or [text]
    if len(lines) > _MAX_LINES:
        lines = lines[:_MAX_LINES]
        lines[-1] = lines[-1][: _WRAP - 1] + "…"
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


def _is_shared(var):
    # Duck-typed: SharedVariable lives in ``compile``, above this layer.
    return hasattr(var, "get_value") and getattr(var, "container", None) is not None


def _is_function(obj):
    return hasattr(obj, "maker") and hasattr(getattr(obj, "maker"), "fgraph")


# ---------------------------------------------------------------------------
# The graph to draw.

class GraphDot:
    """The drawable form of a graph: its nodes, their ids, and the DOT text.

    Parameters
    ----------
    graph
        A FunctionGraph, a compiled Function (its rewritten graph), a
        Variable, an Apply or a list of Variables (walked from the outputs
        back to the graph inputs).
    rankdir
        ``"TB"`` (top to bottom, the default: data flows down, which stays
        readable from a handful of nodes to about a hundred) or ``"LR"``.

    Attributes
    ----------
    nodes
        The Apply nodes in toposort order (``nodes[i]`` has the id ``n<i>``).
    inputs, outputs
        The graph inputs and outputs.
    ids
        ``{Apply or ownerless Variable: id}``.
    objects
        ``{id: Apply, Variable or ("output", index, variable)}``.
    kinds
        ``{id: "apply" | "input" | "shared" | "constant" | "output"}``.
    """

    def __init__(self, graph, rankdir="TB"):
        from lucent.graph.fg import FunctionGraph
        from lucent.graph.traversal import graph_inputs, io_toposort

        if rankdir not in ("TB", "LR", "BT", "RL"):
            raise ValueError(f"rankdir must be 'TB', 'LR', 'BT' or 'RL', got {rankdir!r}")
        self.rankdir = rankdir
        self.update_mapping = {}
        if _is_function(graph):
            graph = graph.maker.fgraph
        if isinstance(graph, FunctionGraph):
            self.inputs = list(graph.inputs)
            self.outputs = list(graph.outputs)
            self.nodes = list(graph.toposort())
            self.update_mapping = dict(getattr(graph, "update_mapping", None) or {})
        else:
            outputs = _output_list(graph)
            self.outputs = outputs
            self.inputs = [v for v in graph_inputs(outputs) if not isinstance(v, Constant)]
            self.nodes = list(io_toposort(self.inputs, outputs))
        self.ids, self.objects, self.kinds = {}, {}, {}
        for i, node in enumerate(self.nodes):
            self._add(node, f"n{i}", "apply")
        ownerless = list(self.inputs)
        for node in self.nodes:
            ownerless += [v for v in node.inputs if v.owner is None]
        ownerless += [v for v in self.outputs if v.owner is None]
        count = 0
        for var in ownerless:
            if var not in self.ids:
                kind = "constant" if isinstance(var, Constant) else "shared" if _is_shared(var) else "input"
                self._add(var, f"v{count}", kind)
                count += 1
        for j, var in enumerate(self.outputs):
            oid = f"o{j}"
            self.objects[oid] = ("output", j, var)
            self.kinds[oid] = "output"

    def _add(self, obj, ident, kind):
        self.ids[obj] = ident
        self.objects[ident] = obj
        self.kinds[ident] = kind

    # --- ids -------------------------------------------------------------------------
    def id_of(self, obj):
        """The id of an Apply node or a variable (a computed variable: its node's id).

        Raises ``KeyError`` when it is not part of the drawn graph.
        """
        if isinstance(obj, Variable) and obj.owner is not None:
            obj = obj.owner
        try:
            return self.ids[obj]
        except (KeyError, TypeError):
            raise KeyError(
                f"{obj!r} is not a node of this graph; expected one of its {len(self.nodes)} Apply nodes "
                "or one of their variables (a node of another graph, e.g. before rewriting, has no id here)"
            ) from None

    # --- labels ----------------------------------------------------------------------
    def output_label(self, index):
        """``"output 0"``, ``"output 0: cost"`` or ``"update W0"`` (a Function's update)."""
        var = self.outputs[index]
        if index in self.update_mapping:
            k = self.update_mapping[index]
            target = self.inputs[k] if k < len(self.inputs) else None
            return f"update {target.name if target is not None and target.name else f'input {k}'}"
        return f"output {index}" + (f": {var.name}" if var.name else "")

    def describe(self, ident):
        """``(title lines, detail lines, tooltip)`` of the node ``ident`` (plain text)."""
        obj, kind = self.objects[ident], self.kinds[ident]
        if kind == "apply":
            text = op_label(obj.op)
            many = len(obj.outputs) > 1
            details = [(f"{k}: " if many else "") + type_text(out.type) for k, out in enumerate(obj.outputs)]
            names = [out.name for out in obj.outputs if out.name]
            if names:
                details.append("'" + "', '".join(names) + "'")
            tip = f"{text}  [{ident}]\n" + "\n".join(details)
            return _wrap(text), details, tip
        if kind == "output":
            _, index, var = obj
            title = self.output_label(index)
            return [title], [], f"{title}  [{ident}]\n{type_text(var.type)}"
        if kind == "constant":
            title = _constant_text(obj)
            return [title], [type_text(obj.type)], f"constant {title}  [{ident}]\n{type_text(obj.type)}"
        name = obj.name if obj.name is not None else "(unnamed)"
        detail = ("shared " if kind == "shared" else "") + type_text(obj.type)
        return [name], [detail], f"{'shared variable' if kind == 'shared' else 'input'} {name}  [{ident}]\n{detail}"

    # --- DOT -------------------------------------------------------------------------
    def source(self, annotations=None, title=None):
        """The DOT text of the graph, with ``{id: Annotation}`` applied."""
        annotations = annotations or {}
        lines = [
            "digraph lucent {",
            f'  graph [rankdir={self.rankdir}, nodesep=0.25, ranksep=0.38, bgcolor="transparent", '
            f'fontname="{_FONT}", fontsize=12, pad=0.12' + (f', label="{_escape(title)}", labelloc=t' if title else "")
            + "];",
            f'  node [fontname="{_FONT}", fontsize=11.5, margin="0.12,0.05", height=0.3, penwidth=1.2];',
            f'  edge [color="#6b7280", arrowsize=0.65, penwidth=1.0, fontname="{_FONT}", fontsize=8.5, '
            'fontcolor="#6b7280"];',
        ]
        for ident in self.objects:
            lines.append(f"  {ident} [{_attrs(self._node_attrs(ident, annotations.get(ident)))}];")
        for ident in self.objects:
            obj = self.objects[ident]
            if self.kinds[ident] == "apply":
                for i, inp in enumerate(obj.inputs):
                    lines.append(f"  {self.producer_id(inp)} -> {ident} [{_attrs(self._edge_attrs(obj, i, inp))}];")
            elif self.kinds[ident] == "output":
                _, _, var = obj
                attrs = {"style": "dashed", "color": "#6a4c93"}
                if var.owner is not None and len(var.owner.outputs) > 1:
                    attrs["taillabel"] = f"{var.index}"
                lines.append(f"  {self.producer_id(var)} -> {ident} [{_attrs(attrs)}];")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def producer_id(self, var):
        """The id of the drawn node a variable comes out of: its Apply, or itself when ownerless."""
        return self.ids[var.owner] if var.owner is not None else self.ids[var]

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
        attrs["label"] = _html_lines(title, details, font_color)
        attrs["tooltip"] = tip
        attrs["class"] = f"lucent-{kind} lucent-id-{ident}"
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
        return attrs

    def svg(self, annotations=None, title=None):
        """The graph rendered as SVG text (needs the ``dot`` program)."""
        return render_svg(self.source(annotations, title))


def _escape(text):
    return str(text).replace("\\", "\\\\").replace('"', '\\"')


def _output_list(graph):
    if isinstance(graph, Variable):
        return [graph]
    if isinstance(graph, Apply):
        return list(graph.outputs)
    if isinstance(graph, (list, tuple)) and graph:
        out = []
        for item in graph:
            if isinstance(item, Variable):
                out.append(item)
            elif isinstance(item, Apply):
                out.extend(item.outputs)
            else:
                raise TypeError(
                    f"A graph to draw is given by Variables; the list holds {type(item).__name__} {item!r}"
                )
        return out
    raise TypeError(
        "A graph to draw must be a FunctionGraph, a compiled Function, a Variable, an Apply "
        f"or a non-empty list of Variables; got {type(graph).__name__} {graph!r}"
    )


# ---------------------------------------------------------------------------
# Rendering.

_INSTALL = (
    "Install Graphviz: on Debian/Ubuntu `apt install graphviz`, with conda `conda install graphviz` "
    "(the `graphviz` package from pip is only a Python binding and does not provide dot)."
)


def dot_program():
    """The path of the ``dot`` program; ``GraphvizNotFoundError`` when it is not on PATH."""
    path = shutil.which("dot")
    if path is None:
        raise GraphvizNotFoundError(
            "Drawing a graph needs the Graphviz 'dot' program, which was not found on PATH. " + _INSTALL
            + " Without it, lucent.dprint(...) shows the graph as text."
        )
    return path


def render_svg(source, timeout=60):
    """Render DOT text to SVG text (the ``<svg>`` element alone, ready to embed in HTML)."""
    program = dot_program()
    try:
        done = subprocess.run(
            [program, "-Tsvg"], input=source.encode("utf-8"), capture_output=True, timeout=timeout
        )
    except FileNotFoundError as e:  # removed between which() and run()
        raise GraphvizNotFoundError(f"The Graphviz 'dot' program could not be run ({e}). " + _INSTALL) from e
    except subprocess.TimeoutExpired as e:
        raise GraphvizRenderError(
            f"dot took more than {timeout} s to lay out the graph; draw a smaller part of it "
            "(a list of the variables of interest) or use lucent.dprint"
        ) from e
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip()
        raise GraphvizRenderError(f"dot failed (exit status {done.returncode}) to render the graph: {message}")
    text = done.stdout.decode("utf-8", "replace")
    start = text.find("<svg")
    if start < 0:
        raise GraphvizRenderError("dot returned no <svg> element")
    return _strip_comments(text[start:])


def _strip_comments(svg):
    return re.sub(r"<!--.*?-->\n?", "", svg, flags=re.S)


def graph_svg(graph, annotations=None, rankdir="TB"):
    """SVG text of ``graph`` (see ``GraphDot`` for what a graph may be)."""
    return GraphDot(graph, rankdir=rankdir).svg(annotations)


def responsive(svg):
    """``svg`` sized to its natural width but shrinking to the width of its container."""
    match = re.match(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"', svg)
    if not match:
        return svg
    width = float(match.group(1)) * 4 / 3  # pt to CSS px
    return (
        f'<svg width="{width:.0f}" style="max-width:100%;height:auto;display:block"'
        + svg[match.end():]
    )


#: Graphs with more Apply nodes than this are shown as text by ``_repr_html_``:
#: laying them out takes long and the drawing is too large to read.
MAX_DRAWN_NODES = 400


def graph_html(graph, header="", max_nodes=MAX_DRAWN_NODES):
    """HTML for a notebook: ``header`` then the drawing, or the ``dprint`` text when it cannot be drawn.

    Never raises: this is what ``_repr_html_`` returns, and an exception
    there would hide the object's display altogether.
    """
    note = ""
    try:
        drawing = GraphDot(graph)
        if len(drawing.nodes) > max_nodes:
            note = f"{len(drawing.nodes)} nodes: too many to draw; the graph as text:"
        else:
            body = responsive(drawing.svg())
            return (
                f'<div class="lucent-graph">{header}'
                f'<div style="overflow:auto;max-height:85vh">{body}</div></div>'
            )
    except GraphvizNotFoundError:
        note = "The Graphviz 'dot' program is not installed, so the graph is shown as text. " + _INSTALL
    except Exception as e:  # the display must still show something
        note = f"The graph could not be drawn ({type(e).__name__}: {e}); the graph as text:"
    return f'<div class="lucent-graph">{header}{_text_fallback(graph, note)}</div>'


def _text_fallback(graph, note):
    try:
        from lucent.printing import debugprint

        text = debugprint(graph, file="str", print_type=True)
    except Exception:
        text = repr(graph)
    return (
        f'<p style="color:#666;font-size:90%">{html.escape(note)}</p>'
        f"<pre>{html.escape(text)}</pre>"
    )
