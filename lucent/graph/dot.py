"""Drawing a graph: a Graphviz DOT description, laid out and rendered to SVG by a Graphviz program.

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

Graphs of a few hundred nodes
-----------------------------
A training step is drawn in parts (forward, backward, updates), which can
be collapsed, its nodes grouped by the user's names or lines, its rows
wrapped: ``lucent.graph.dot_parts`` says what the parts and groups are,
``lucent.graph.dot_layout`` how they are drawn. Every view names a node
the same way: ``op_label`` (the op's ``str``, as ``dprint``, profiles and
rewrite histories print it) and ``node_label`` (the user's name first);
``lucent.graph.dot_nodes`` holds them with the rest of what one node shows.

Which program lays the graph out
--------------------------------
Rendering runs a Graphviz ``dot`` command line in a subprocess (the
``graphviz`` Python package is not needed). Two can serve: the system's
``dot`` (Debian's ``graphviz`` package), used when it is on PATH, and
``graphviz-pure``, a self-contained port of Graphviz's command line that
installs from PyPI with ``pip install -e '.[notebook]'``, so a notebook
needs nothing but Python. ``graphviz-pure`` is looked for on PATH and next
to the running Python (a kernel started as ``.venv/bin/python`` does not
have the venv's scripts folder on PATH).

The environment variable ``LUCENT_GRAPHVIZ`` chooses between them:
``auto`` (or unset) tries the system ``dot`` then ``graphviz-pure``;
``system`` only the system ``dot``; ``bundled`` only ``graphviz-pure``
(CI uses it to prove the drawings need no system package); ``none`` no
program at all (graphs are shown as text).

Without a program, ``render_svg`` raises ``GraphvizNotFoundError`` naming
what to install; the notebook displays and widgets never raise for that:
they show the ``dprint`` text under a one-line note instead.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
import sysconfig

from lucent.graph.basic import Apply, Constant, Variable
from lucent.graph.dot_layout import _PART_STYLES, PartsDrawing

# The text and look of each node live in ``dot_nodes``; their names stay
# importable from here, where the views and ``dot_layout`` import them.
from lucent.graph.dot_nodes import (  # noqa: F401
    _MAX_LINES,
    _WRAP,
    PROBLEM_COLOR,
    RANDOM_EDGE,
    RANDOM_FILL,
    STYLES,
    Annotation,
    NodeLooks,
    _attrs,
    _constant_text,
    _escape,
    _html_lines,
    _shape_text,
    _wrap,
    draws_random_numbers,
    holds_random_state,
    node_label,
    op_label,
    type_text,
)

__all__ = [
    "Annotation",
    "GraphDot",
    "GraphvizNotFoundError",
    "GraphvizRenderError",
    "BOOKKEEPING_OPS",
    "dot_program",
    "graph_html",
    "layout_programs",
    "graph_svg",
    "is_bookkeeping",
    "function_output_names",
    "node_label",
    "op_label",
    "render_svg",
    "type_text",
]

#: The drawing's font (``render_svg`` names one that graphviz-pure can measure).
_FONT = "Helvetica,Arial,sans-serif"


#: Ops that only move shapes around or broadcast a fill value: the
#: bookkeeping a gradient and the shape rewrites leave in a graph. A view
#: may hide them (``GraphDot(..., hide_bookkeeping=True)``).
BOOKKEEPING_OPS = frozenset({
    "Shape", "Shape_i", "SpecifyShape", "MakeVector", "Alloc", "AllocEmpty",
    "ScalarFromTensor", "TensorFromScalar",
})


def is_bookkeeping(node):
    """Whether an Apply node only handles shapes or fills (see ``BOOKKEEPING_OPS``).

    Elemwise ``second`` (PyTensor's ``fill``: the value of its second input
    broadcast to the first's shape) counts too.
    """
    op = node.op
    if type(op).__name__ in BOOKKEEPING_OPS:
        return True
    scalar_op = getattr(op, "scalar_op", None)
    return scalar_op is not None and type(scalar_op).__name__ == "Second"


class GraphvizNotFoundError(RuntimeError):
    """The Graphviz ``dot`` program, which lays out and renders graphs, is not installed."""


class GraphvizRenderError(RuntimeError):
    """``dot`` ran but failed to render the description it was given."""


def _is_shared(var):
    # Duck-typed: SharedVariable lives in ``compile``, above this layer.
    return hasattr(var, "get_value") and getattr(var, "container", None) is not None


def _is_function(obj):
    return hasattr(obj, "maker") and hasattr(getattr(obj, "maker"), "fgraph")


# ---------------------------------------------------------------------------
# The graph to draw.

class GraphDot(NodeLooks, PartsDrawing):
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
    hide_bookkeeping
        Leave out the shape and fill nodes (``is_bookkeeping``) and the
        constants only they use; an edge that went through them is drawn
        dotted from the visible nodes they came from. A node computing a
        graph output is always drawn. Hidden nodes keep their ids.
    group_by
        ``None``, ``"name"`` (a cluster per user variable name: a node's
        output name, else the name assigned on the line that created it) or
        ``"line"`` (a cluster per creating line); see ``dot_parts``.
    collapse
        Parts (``"backward"``, ``"update"``, ``"forward"``) drawn as one box
        each. A graph with nodes built by ``grad`` is drawn in clusters, one
        per part (see ``dot_parts.node_parts``).
    wrap
        Characters per label line before an op's text is wrapped (a
        narrower drawing folds long labels onto more lines).
    output_names
        Names of the outputs for their labels when the variables have none
        (a compiled function's rewritten outputs; found by itself when
        ``graph`` is the Function).
    max_row
        Wrap a row (the boxes at one depth of the graph) longer than this
        many boxes onto the following rows, so a wide graph folds into a
        narrower, taller drawing instead of shrinking; ``None``: no wrap.
    input_names
        Names of the graph inputs for their labels when the variables have
        none (an inner graph's inputs are nameless placeholders; a view
        names them after what feeds them, e.g. ``x[t]``).

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
    hidden
        The ids left out of the drawing.
    parts
        ``{id: "forward" | "backward" | "update"}`` of the Apply nodes
        (empty when no node was built by a gradient).
    groups
        ``{id: (key, title)}`` of the grouped Apply nodes (``group_by``).
    openable
        ``{id: marker}`` of the Apply nodes that hold an inner graph a
        view can open (a loop, an ``OpFromGraph``): drawn with a double
        border, the class ``lucent-opens`` and ``marker`` as a last label
        line. Empty unless a view sets it; the drawing does not decide
        what opens, the view does.
    """

    #: Above this many boxes, ``dot`` is asked for a faster, slightly less tidy layout.
    LARGE = 80

    def __init__(self, graph, rankdir="TB", hide_bookkeeping=False, group_by=None, collapse=(), wrap=_WRAP,
                 max_row=None, output_names=None, input_names=None):
        from lucent.graph.dot_parts import PARTS, group_keys, node_parts

        from lucent.graph.fg import FunctionGraph
        from lucent.graph.traversal import graph_inputs, io_toposort

        if rankdir not in ("TB", "LR", "BT", "RL"):
            raise ValueError(f"rankdir must be 'TB', 'LR', 'BT' or 'RL', got {rankdir!r}")
        self.rankdir = rankdir
        if not isinstance(wrap, int) or isinstance(wrap, bool) or wrap < 8:
            raise ValueError(f"wrap must be a number of characters >= 8, got {wrap!r}")
        self.wrap = wrap
        if max_row is not None and (not isinstance(max_row, int) or isinstance(max_row, bool) or max_row < 1):
            raise ValueError(f"max_row must be None or a number of boxes >= 1, got {max_row!r}")
        self.max_row = max_row
        #: ``{id: (row, x)}`` read from a previous layout (``rows_from_svg``): rows to wrap, as drawn.
        self.row_hint = None
        collapse = frozenset([collapse] if isinstance(collapse, str) else collapse)
        unknown = collapse - set(PARTS)
        if unknown:
            raise ValueError(f"collapse names parts among {', '.join(map(repr, PARTS))}; got {sorted(unknown)!r}")
        self.collapsed = collapse
        self.update_mapping = {}
        self.output_names = list(output_names) if output_names is not None else []
        self.input_names = list(input_names) if input_names is not None else []
        self.openable = {}
        if _is_function(graph):
            if output_names is None:
                self.output_names = function_output_names(graph)
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
        self.hidden = self.bookkeeping_ids() if hide_bookkeeping else frozenset()
        update_outputs = [self.outputs[j] for j in self.update_mapping]
        self.parts = {self.ids[n]: part for n, part in node_parts(self.nodes, self.outputs, update_outputs).items()}
        self.group_by = group_by
        self.groups = {self.ids[n]: key for n, key in group_keys(self.nodes, group_by).items()}

    def bookkeeping_ids(self):
        """Ids of the bookkeeping nodes to hide, and of the constants only they use."""
        producers = {var.owner for var in self.outputs if var.owner is not None}
        hidden = {self.ids[n] for n in self.nodes if n not in producers and is_bookkeeping(n)}
        users = {}
        for node in self.nodes:
            for var in node.inputs:
                if var.owner is None and isinstance(var, Constant):
                    users.setdefault(self.ids[var], []).append(self.ids[node])
        for ident, ids in users.items():
            if all(u in hidden for u in ids):
                hidden.add(ident)
        return frozenset(hidden)

    def _visible_sources(self, var, seen=None):
        """The drawn nodes ``var`` comes from, looking through hidden nodes."""
        ident = self.producer_id(var)
        if ident not in self.hidden:
            return [ident]
        seen = set() if seen is None else seen
        if ident in seen:
            return []
        seen.add(ident)
        obj = self.objects[ident]
        if self.kinds[ident] != "apply":
            return []
        out = []
        for inp in obj.inputs:
            for source in self._visible_sources(inp, seen):
                if source not in out:
                    out.append(source)
        return out

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

    # --- DOT -------------------------------------------------------------------------
    def source(self, annotations=None, title=None):
        """The DOT text of the graph, with ``{id: Annotation}`` applied.

        Apply nodes sit in one cluster per part (when the graph has a
        backward part) and, inside it, one cluster per group
        (``group_by``); a collapsed part is one box, ``part_<name>``.
        """
        from lucent.graph.dot_parts import PARTS

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
        shown = self._shown_ids()
        if len(shown) > self.LARGE:
            # Fewer rounds of crossing reduction and ranking: a drawing of a few
            # hundred boxes in seconds rather than a minute, barely less tidy.
            lines.append("  graph [mclimit=0.2, nslimit=1, nslimit1=1, searchsize=5];")
        # Nodes, in their clusters.
        clustered = {}
        homes = self._source_homes()
        copied = self._copied_constants()
        for (const, reader), name in copied.items():
            group = self.groups.get(reader)
            clustered.setdefault(self.parts.get(reader), {}).setdefault(group[0] if group else None, []).append(name)
        for ident in shown:
            part = self.parts.get(ident)
            if any(c == ident for c, _ in copied):
                continue
            if ident in homes:
                part = homes[ident][0]
                for other in homes[ident][1:]:
                    clustered.setdefault(other, {}).setdefault(None, []).append(f"{ident}__{other}")
            group = self.groups.get(ident)
            clustered.setdefault(part, {}).setdefault(group[0] if group else None, []).append(ident)
        titles = {key: title_ for key, title_ in self.groups.values()}
        counts = self.part_counts()
        for part in [None] + list(PARTS):
            if part is not None and part in self.collapsed and counts.get(part):
                lines.append(f"  {self._collapsed_node(part, counts[part])}")
                continue
            by_group = clustered.get(part)
            if not by_group:
                continue
            indent = "  "
            if part is not None:
                style = _PART_STYLES[part]
                lines.append(f"  subgraph cluster_{part} {{")
                lines.append(f'    graph [label="{_escape(PARTS[part])}", labeljust=l, style="{style[0]}", '
                             f'color="{style[1]}", bgcolor="{style[2]}", fontcolor="{style[1]}", fontsize=11];')
                indent = "    "
            for k, (group, idents) in enumerate(by_group.items()):
                inner = indent
                if group is not None:
                    name = f"cluster_{part or 'top'}_g{k}"
                    lines.append(f"{indent}subgraph {name} {{")
                    lines.append(f'{indent}  graph [label="{_escape(titles[group])}", labeljust=l, style="rounded,dashed", '
                                 'color="#9ca3af", bgcolor="transparent", fontcolor="#4b5563", fontsize=10];')
                    inner = indent + "  "
                for ident in idents:
                    base = ident.split("__")[0]
                    lines.append(f"{inner}{ident} [{_attrs(self._node_attrs(base, annotations.get(base)))}];")
                if group is not None:
                    lines.append(f"{indent}}}")
            if part is not None:
                lines.append("  }")
        # Edges, through hidden nodes and into collapsed parts.
        drawn = set()
        boxed = []  # edges into or out of a collapsed part
        for ident in self.objects:
            if ident in self.hidden:
                continue
            obj = self.objects[ident]
            head = self._drawn_as(ident)
            if head is None:
                continue
            if self.kinds[ident] == "apply":
                through = []
                for i, inp in enumerate(obj.inputs):
                    if self.producer_id(inp) in self.hidden:
                        through += [s for s in self._visible_sources(inp) if s not in through]
                        continue
                    tail = self._drawn_as(self.producer_id(inp))
                    if tail is None or tail == head:
                        continue
                    if (tail, ident) in copied and head == ident:
                        lines.append(f"  {copied[tail, ident]} -> {head} [{_attrs(self._edge_attrs(obj, i, inp))}];")
                        continue
                    where = homes.get(tail)
                    if where and self.parts.get(ident) in where[1:] and head == ident:
                        lines.append(f"  {tail}__{self.parts[ident]} -> {head} [{_attrs(self._edge_attrs(obj, i, inp))}];")
                        continue
                    if tail != self.producer_id(inp) or head != ident:
                        if (tail, head) not in drawn:
                            drawn.add((tail, head))
                            boxed.append((tail, head))
                        continue
                    lines.append(f"  {tail} -> {head} [{_attrs(self._edge_attrs(obj, i, inp))}];")
                for source in through:
                    tail = self._drawn_as(source)
                    if tail is None or tail == head or (tail, head) in drawn:
                        continue
                    drawn.add((tail, head))
                    attrs = {"style": "dotted", "tooltip": "through hidden shape/fill nodes"}
                    lines.append(f"  {tail} -> {head} [{_attrs(attrs)}];")
            elif self.kinds[ident] == "output":
                _, _, var = obj
                attrs = {"style": "dashed", "color": "#6a4c93"}
                if var.owner is not None and len(var.owner.outputs) > 1:
                    attrs["taillabel"] = f"{var.index}"
                tail = self._drawn_as(self.producer_id(var))
                if tail is not None and self._drawn_as(ident) is not None:
                    lines.append(f"  {tail} -> {ident} [{_attrs(attrs)}];")
        lines += self._boxed_edges(boxed)
        lines += self._ordering_edges()
        if self.max_row is not None:
            lines += self._row_wraps(lines)
        lines.append("}")
        return "\n".join(lines) + "\n"

    def producer_id(self, var):
        """The id of the drawn node a variable comes out of: its Apply, or itself when ownerless."""
        return self.ids[var.owner] if var.owner is not None else self.ids[var]

    def svg(self, annotations=None, title=None):
        """The graph rendered as SVG text (needs the ``dot`` program)."""
        return render_svg(self.source(annotations, title))


def function_output_names(fn):
    """The names the user gave a compiled function's outputs (rewriting makes new, unnamed variables)."""
    outs = getattr(fn.maker, "outputs", None) or []
    return [getattr(getattr(o, "variable", None), "name", None) for o in outs]


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
    "Install a Graphviz layout program: `pip install graphviz-pure` (part of lucent's `notebook` extra, "
    "`pip install -e '.[notebook]'` from lucent's checkout), or the system Graphviz (on Debian/Ubuntu "
    "`apt install graphviz`, with conda `conda install graphviz`). The `graphviz` package from pip is only "
    "a Python binding and does not provide dot."
)

#: Values of the ``LUCENT_GRAPHVIZ`` environment variable and the programs each allows, in order.
GRAPHVIZ_CHOICES = {
    "auto": ("dot", "graphviz-pure"),
    "system": ("dot",),
    "bundled": ("graphviz-pure",),
    "none": (),
}


def _graphviz_choice():
    value = os.environ.get("LUCENT_GRAPHVIZ", "").strip().lower() or "auto"
    if value in ("0", "off", "false", "no"):
        value = "none"
    if value not in GRAPHVIZ_CHOICES:
        raise ValueError(
            f"LUCENT_GRAPHVIZ must be one of {', '.join(map(repr, GRAPHVIZ_CHOICES))} (or unset for 'auto'); "
            f"got {os.environ['LUCENT_GRAPHVIZ']!r}"
        )
    return value


def _find_program(name):
    """``name`` on PATH, or in the scripts folder of the running Python (a venv's ``bin``)."""
    path = shutil.which(name)
    if path is not None:
        return path
    for folder in dict.fromkeys([sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]):
        if folder:
            path = shutil.which(name, path=folder)
            if path is not None:
                return path
    return None


def layout_programs():
    """``[(name, path)]`` of the layout programs found, in the order of preference of ``LUCENT_GRAPHVIZ``."""
    found = []
    for name in GRAPHVIZ_CHOICES[_graphviz_choice()]:
        path = _find_program(name)
        if path is not None:
            found.append((name, path))
    return found


def dot_program():
    """The path of the program that lays graphs out; ``GraphvizNotFoundError`` when there is none."""
    programs = layout_programs()
    if programs:
        return programs[0][1]
    choice = _graphviz_choice()
    if choice == "none":
        raise GraphvizNotFoundError(
            "Drawing graphs is turned off (LUCENT_GRAPHVIZ=none); unset LUCENT_GRAPHVIZ to draw them. "
            "lucent.dprint(...) shows a graph as text."
        )
    wanted = " or ".join(f"'{name}'" for name in GRAPHVIZ_CHOICES[choice])
    raise GraphvizNotFoundError(
        f"Drawing a graph needs the Graphviz {wanted} program, which was not found on PATH"
        + (" (LUCENT_GRAPHVIZ=" + choice + ")" if choice != "auto" else "") + ". " + _INSTALL
        + " Without it, lucent.dprint(...) shows the graph as text."
    )


def render_svg(source, timeout=60):
    """Render DOT text to SVG text (the ``<svg>`` element alone, ready to embed in HTML)."""
    program = dot_program()
    name = os.path.basename(program)
    if name.startswith("graphviz-pure"):
        # It measures text with built-in metrics of a few fonts, of which a
        # list of fallbacks is none (it would measure with Times, narrower than
        # the sans-serif font drawn, and text would overflow its box).
        source = source.replace(f'fontname="{_FONT}"', 'fontname="Helvetica"')
    try:
        done = subprocess.run(
            [program, "-Tsvg"], input=source.encode("utf-8"), capture_output=True, timeout=timeout
        )
    except (FileNotFoundError, PermissionError) as e:  # removed between the lookup and the run
        raise GraphvizNotFoundError(f"The Graphviz program {program!r} could not be run ({e}). " + _INSTALL) from e
    except subprocess.TimeoutExpired as e:
        raise GraphvizRenderError(
            f"{name} took more than {timeout} s to lay out the graph; draw a smaller part of it "
            "(a list of the variables of interest) or use lucent.dprint"
        ) from e
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip()
        raise GraphvizRenderError(
            f"dot failed ({name}, exit status {done.returncode}) to render the graph: {message}"
        )
    text = done.stdout.decode("utf-8", "replace")
    start = text.find("<svg")
    if start < 0:
        raise GraphvizRenderError(f"{name} returned no <svg> element")
    return _strip_comments(text[start:])


def _strip_comments(svg):
    return re.sub(r"<!--.*?-->\n?", "", svg, flags=re.S)


def graph_svg(graph, annotations=None, rankdir="TB", hide_bookkeeping=False):
    """SVG text of ``graph`` (see ``GraphDot`` for what a graph may be)."""
    return GraphDot(graph, rankdir=rankdir, hide_bookkeeping=hide_bookkeeping).svg(annotations)


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


def graph_html(graph, header="", max_nodes=MAX_DRAWN_NODES, **options):
    """HTML for a notebook: ``header`` then the drawing, or the ``dprint`` text when it cannot be drawn.

    ``options`` go to ``GraphDot``: ``collapse="backward"`` draws the
    gradient of a training step as one box, ``group_by="name"`` or
    ``"line"`` clusters the nodes, ``hide_bookkeeping=True``, ``max_row``,
    ``wrap``. Never raises for a drawing problem: this is what
    ``_repr_html_`` returns, and an exception there would hide the
    object's display altogether (a wrong option is still an error).
    """
    note = ""
    GraphDot.check_options(**options)
    try:
        drawing = GraphDot(graph, **options)
        if len(drawing.nodes) > max_nodes:
            note = f"{len(drawing.nodes)} nodes: too many to draw; the graph as text:"
        else:
            body = responsive(drawing.svg())
            return (
                f'<div class="lucent-graph">{header}'
                f'<div style="overflow:auto;max-height:85vh">{body}</div></div>'
            )
    except GraphvizNotFoundError:
        note = no_layout_note()
    except Exception as e:  # the display must still show something
        note = f"The graph could not be drawn ({type(e).__name__}: {e}); the graph as text:"
    return f'<div class="lucent-graph">{header}{text_fallback_html(graph, note)}</div>'


def no_layout_note():
    """The one-line note shown above the text of a graph that no program can lay out."""
    if os.environ.get("LUCENT_GRAPHVIZ", "").strip().lower() in ("none", "0", "off", "false", "no"):
        return "Graph drawing is off (LUCENT_GRAPHVIZ=none); the graph as text:"
    return (
        "No Graphviz layout program is installed, so the graph is shown as text "
        "(pip install graphviz-pure, or apt install graphviz):"
    )


def text_fallback_html(graph, note):
    """HTML of ``note`` (one line) above the ``dprint`` text of ``graph``."""
    try:
        from lucent.printing import debugprint

        text = debugprint(graph, file="str", print_type=True)
    except Exception:
        text = repr(graph)
    return (
        f'<p style="color:#666;font-size:90%">{html.escape(note)}</p>'
        f"<pre>{html.escape(text)}</pre>"
    )
