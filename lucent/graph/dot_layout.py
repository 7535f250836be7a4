"""The part of a drawing that organises a large graph: collapsed parts, copies of inputs, wrapped rows.

``GraphDot`` (``lucent.graph.dot``) draws every node; this mixin holds what
makes a training graph of a few hundred nodes readable at a notebook's
width (see ``lucent.graph.dot_parts`` for what the parts and groups are):

* a collapsed part is one box, and the many edges into it become one
  summary edge (each long edge would otherwise widen the drawing);
* invisible edges through one point per boundary put the parts one below
  the other (forward, backward, updates) instead of side by side;
* a graph input read in several parts is drawn in each of them;
* rows longer than ``max_row`` boxes wrap onto the next rows, using the
  rows ``dot`` actually made in a previous layout (``rows_from_svg``).
"""

from __future__ import annotations

import re

from lucent.graph.basic import Constant

#: Cluster style of each part: (Graphviz style, border and title colour, background).
_PART_STYLES = {
    "forward": ("rounded", "#4a6fa5", "#f7faff"),
    "backward": ("rounded", "#b45309", "#fffaf0"),
    "update": ("rounded", "#6a4c93", "#faf7ff"),
}



class PartsDrawing:
    """Methods of ``GraphDot`` for parts, groups and folding (a mixin: it uses GraphDot's attributes)."""

    @staticmethod
    def check_options(**options):
        """Raise ``TypeError`` naming an unknown drawing option (``graph_html`` forwards its keywords)."""
        known = ("rankdir", "hide_bookkeeping", "group_by", "collapse", "wrap", "max_row")
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise TypeError(f"unknown drawing option(s) {', '.join(unknown)}; expected some of {', '.join(known)}")

    def regroup(self, group_by):
        """Group the drawing's nodes by ``group_by`` (``None``, ``"name"`` or ``"line"``) from now on."""
        from lucent.graph.dot_parts import group_keys

        self.groups = {self.ids[n]: key for n, key in group_keys(self.nodes, group_by).items()}
        self.group_by = group_by

    def part_counts(self):
        """``{part: number of Apply nodes}`` (empty without a backward part)."""
        counts = {}
        for part in self.parts.values():
            counts[part] = counts.get(part, 0) + 1
        return counts

    #: A collapsed part with more edges than this on one side gets one summary edge on that side.
    MAX_BOX_EDGES = 4

    def _boxed_edges(self, boxed):
        """The edges into and out of collapsed parts.

        A part that reads many values (the backward part reads most forward
        nodes) would draw one long edge from each, and each long edge widens
        the drawing; past ``MAX_BOX_EDGES`` they become one edge from the
        part above (its ``after_<part>`` point) saying how many values flow.
        """
        from lucent.graph.dot import _attrs
        from lucent.graph.dot_parts import PARTS

        order = [p for p in PARTS if p in set(self.parts.values())]
        lines = []
        for part in self.collapsed:
            box = f"part_{part}"
            into = [t for t, h in boxed if h == box]
            out = [h for t, h in boxed if t == box]
            above = order[order.index(part) - 1] if part in order and order.index(part) > 0 else None
            for ends, summary in ((into, above), (out, None)):
                if len(ends) <= self.MAX_BOX_EDGES or (summary is None and ends is into):
                    for end in ends:
                        pair = (end, box) if ends is into else (box, end)
                        lines.append(f"  {pair[0]} -> {pair[1]} [{_attrs({'style': 'dashed'})}];")
                    continue
                if ends is into:
                    attrs = {"style": "dashed", "penwidth": "2", "label": f" reads {len(ends)} values",
                             "tooltip": f"the {part} part reads {len(ends)} values drawn above"}
                    lines.append(f"  after_{summary} -> {box} [{_attrs(attrs)}];")
                else:
                    below = [h for h in out if not h.startswith("part_")]
                    for end in out:
                        if end.startswith("part_"):
                            lines.append(f"  {box} -> {end} [{_attrs({'style': 'dashed'})}];")
                    if below:
                        attrs = {"style": "dashed", "penwidth": "2", "tooltip": f"{len(below)} values read below"}
                        lines.append(f"  {box} -> {below[0]} [{_attrs(dict(attrs, label=f' {len(below)} values'))}];")
        return lines

    def _ordering_edges(self):
        """Invisible edges that put the parts one below the other: forward, backward, updates.

        Without them Graphviz puts the backward nodes that only read
        parameters (``W.T``) on the first rank, beside the forward part,
        and the drawing grows wide instead of tall.
        """
        from lucent.graph.dot_parts import PARTS

        order = [p for p in PARTS if p in set(self.parts.values())]
        lines = []
        fed = set()  # Apply ids whose outputs feed a node of their own part
        feeds = {}  # Apply id -> parts its outputs feed
        for ident, part in self.parts.items():
            for var in self.objects[ident].inputs:
                if var.owner is not None:
                    feeds.setdefault(self.producer_id(var), set()).add(part)
                    if self.parts.get(self.producer_id(var)) == part:
                        fed.add(self.producer_id(var))
        for upper, lower in zip(order, order[1:]):
            anchor = f"after_{upper}"
            lines.append(f'  {anchor} [shape=point, style=invis, width=0, height=0, label=""];')
            sinks = [i for i, p in self.parts.items() if p == upper and i not in fed]
            roots = [
                i for i, p in self.parts.items()
                if p == lower and upper not in feeds.get(i, ()) and not any(
                    self.parts.get(self.producer_id(v)) == lower for v in self.objects[i].inputs if v.owner is not None
                )
            ]
            # Through one invisible point: as many edges as boxes, not their product.
            for tail in dict.fromkeys(filter(None, map(self._drawn_as, sinks))):
                lines.append(f"  {tail} -> {anchor} [style=invis, weight=10];")
            for head in dict.fromkeys(filter(None, map(self._drawn_as, roots))):
                lines.append(f"  {anchor} -> {head} [style=invis, weight=10];")
        return list(dict.fromkeys(lines))

    def _row_wraps(self, lines):
        """Invisible edges that wrap rows longer than ``max_row`` boxes onto the next rows.

        A box's row is its depth along the edges of ``lines`` (the DOT
        statements so far; sources: 0), as ``dot`` ranks it; the k-th box of
        a row gets an edge from the (k - max_row)-th, which moves it one row
        lower.
        """
        boxes, edges = [], []
        for line in lines:
            match = re.match(r"^\s*(\w+) -> (\w+) ", line)
            if match:
                edges.append(match.groups())
                continue
            match = re.match(r"^\s*(\w+) \[", line)
            if match and match.group(1) not in ("graph", "node", "edge"):
                boxes.append(match.group(1))
        preds = {}
        for tail, head in edges:
            preds.setdefault(head, []).append(tail)
        depth = {}

        def depth_of(ident, seen=()):
            if ident not in depth:
                tails = [t for t in preds.get(ident, ()) if t not in seen]
                depth[ident] = 1 + max((depth_of(t, seen + (ident,)) for t in tails), default=-1)
            return depth[ident]

        rows = {}
        hint = self.row_hint or {}
        for ident in boxes:
            if ident in hint:
                rows.setdefault(("laid out", hint[ident][0]), []).append(ident)
            else:
                rows.setdefault(depth_of(ident), []).append(ident)
        for key, row in rows.items():
            row.sort(key=lambda i: hint[i][1] if i in hint else 0.0)
        wraps = []
        for row in rows.values():
            for k in range(self.max_row, len(row)):
                wraps.append(f"  {row[k - self.max_row]} -> {row[k]} [style=invis, weight=0];")
        return wraps

    @staticmethod
    def rows_from_svg(svg):
        """``{id: (row, x)}`` of the boxes of an SVG drawing: the rows ``dot`` actually made.

        A box's row is the height of its label's centre (rounded), ``x`` its
        horizontal position; ``max_row`` wraps these rows in a next layout.
        """
        out = {}
        for match in re.finditer(r'<g id="node\d+" class="node[^"]*">\s*<title>(\w+)</title>(.*?)</g>\s*</g>', svg, re.S):
            points = re.findall(r'<text[^>]*\sx="(-?[\d.]+)" y="(-?[\d.]+)"', match.group(2))
            if not points:
                continue
            xs = [float(x) for x, _ in points]
            ys = [float(y) for _, y in points]
            out[match.group(1)] = (round(sum(ys) / len(ys) / 12), sum(xs) / len(xs))
        return out

    def _source_homes(self):
        """``{id: [parts]}`` of the graph inputs, shared variables and constants read in several drawn parts.

        Such a variable is drawn once in each part that reads it (a copy
        named ``<id>__<part>``, which views map back to ``<id>``): one edge
        from the top of the drawing to the updates at its bottom would cross
        every part and widen the drawing by a column for each parameter.
        """
        if not self.parts:
            return {}
        from lucent.graph.dot_parts import PARTS

        readers = {}
        for node in self.nodes:
            part = self.parts[self.ids[node]]
            if part in self.collapsed:
                continue
            for var in node.inputs:
                if var.owner is None:
                    readers.setdefault(self.ids[var], set()).add(part)
        order = list(PARTS)
        copied = {c for c, _ in self._copied_constants()}
        return {i: sorted(parts, key=order.index) for i, parts in readers.items() if i not in copied}

    def _copied_constants(self):
        """``{(constant id, reader id): copy id}`` for the constants several drawn nodes read.

        A constant like ``0.5`` read all over a graph would pull one edge
        from a single box to every reader; a copy next to each reader
        (``<id>__<reader>``, which views map back to ``<id>``) keeps the
        edges short.
        """
        readers = {}
        for node in self.nodes:
            ident = self.ids[node]
            if ident in self.hidden or self.parts.get(ident) in self.collapsed:
                continue
            for var in node.inputs:
                if var.owner is None and isinstance(var, Constant) and self.ids[var] not in self.hidden:
                    readers.setdefault(self.ids[var], []).append(ident)
        return {
            (const, reader): f"{const}__{reader}"
            for const, idents in readers.items() if len(set(idents)) > 1 for reader in dict.fromkeys(idents)
        }

    def _drawn_as(self, ident):
        """The id of the box ``ident`` is drawn in: itself, ``part_<name>`` when collapsed, None when left out."""
        part = self.parts.get(ident)
        if part is not None and part in self.collapsed:
            return f"part_{part}"
        if ident in self.hidden or ident in self._dropped():
            return None
        return ident

    def _dropped(self):
        """Constants read only by nodes of collapsed parts, and outputs they compute: inside their part's box."""
        if not self.collapsed:
            return frozenset()
        cached = getattr(self, "_dropped_cache", None)
        if cached is not None and cached[0] == self.collapsed:
            return cached[1]
        inside = {
            f"o{j}" for j, var in enumerate(self.outputs)
            if var.owner is not None and self.parts.get(self.ids[var.owner]) in self.collapsed
        }
        users = {}
        for node in self.nodes:
            for var in node.inputs:
                if var.owner is None and isinstance(var, Constant):
                    users.setdefault(self.ids[var], set()).add(self.parts.get(self.ids[node]))
        dropped = frozenset(i for i, parts in users.items() if parts and parts <= self.collapsed) | inside
        self._dropped_cache = (self.collapsed, dropped)
        return dropped

    def _shown_ids(self):
        """Ids drawn as their own box, in order."""
        dropped = self._dropped()
        return [
            i for i in self.objects
            if i not in self.hidden and i not in dropped and self.parts.get(i) not in self.collapsed
        ]

    def _collapsed_node(self, part, count):
        from lucent.graph.dot import _attrs, _html_lines
        from lucent.graph.dot_parts import PARTS

        style = _PART_STYLES[part]
        outputs = sum(
            1 for var in self.outputs if var.owner is not None and self.parts.get(self.ids[var.owner]) == part
        )
        what = f"{count} nodes" + (f", {outputs} output{'s' if outputs > 1 else ''}" if outputs else "")
        label = _html_lines([PARTS[part]], [f"{what}: collapsed, click to expand"])
        attrs = {
            "shape": "box3d", "style": "filled", "fillcolor": style[2], "color": style[1], "label": label,
            "tooltip": f"{count} nodes of the {part} part, collapsed", "class": f"lucent-part lucent-id-part_{part}",
        }
        return f"part_{part} [{_attrs(attrs)}];"

