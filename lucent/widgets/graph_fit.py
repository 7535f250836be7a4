"""Folding a drawing to fit the width of the output area, for ``GraphView`` (a mixin).

A drawing too wide to read at the width the browser sends (``fit_width``,
CSS pixels) is folded rather than shrunk: labels wrapped narrower, then the
rows ``dot`` made wrapped onto more rows, and as a last resort the backward
part collapsed; ``fit_note`` says what was folded. Each layout tried is
kept (a few per level), since the browser sends a new width on every
resize.
"""

from __future__ import annotations

import re
import time
from collections import Counter

from lucent.graph.dot import GraphDot

#: Text is legible down to this scale of the drawing (11.5 pt labels: about 11.5 px).
LEGIBLE_SCALE = 0.75



def svg_width_pt(svg):
    """The width in points Graphviz gave an SVG drawing (0 when it does not say)."""
    match = re.search(r'<svg[^>]*\swidth="([\d.]+)pt"', svg)
    return float(match.group(1)) if match else 0.0


class FitsWidth:
    """``_svg_with`` and ``_fitted_svg`` of ``GraphView``.

    It uses the view's ``_shown()`` (the drawing shown and its layout cache),
    ``fit_width``, ``collapse_backward``, ``has_parts``, ``_user_collapse``
    and sets ``fit_note``, ``auto_collapsed`` and ``_auto_collapsed``.
    """

    #: Layout time spent looking for a fold that fits, after which the narrowest found is shown.
    FIT_SECONDS = 15.0

    def _svg_with(self, annotations, wrap, max_row, collapsed, hint=None):
        drawing, _, _, cache, _ = self._shown()
        key = (repr(sorted((k, vars(a)) for k, a in annotations.items())), tuple(sorted(drawing.hidden)),
               drawing.group_by, wrap, max_row, tuple(sorted(collapsed)),
               None if hint is None or max_row is None else hash(frozenset(hint.items())))
        if key not in cache:
            drawing.wrap, drawing.max_row, drawing.collapsed = wrap, max_row, frozenset(collapsed)
            drawing.row_hint = hint
            try:
                cache[key] = drawing.svg(annotations)
            finally:
                drawing.wrap, drawing.max_row, drawing.row_hint = 34, None, None
            if len(cache) > 24:
                cache.pop(next(iter(cache)))
        return cache[key]

    def _fitted_svg(self, annotations):
        """The drawing, folded until it reads at ``fit_width`` (see the module docstring).

        Folds, in order: labels wrapped narrower, then the rows ``dot``
        made (read from the unfolded drawing) wrapped to as many boxes as
        the width holds, then the same with the backward part collapsed.
        """
        drawing = self._shown()[0]
        collapsed = {"backward"} if self.collapse_backward else set()
        drawing.collapsed = frozenset(collapsed)
        if not self.fit_width:
            self.fit_note = ""
            self.auto_collapsed = False
            return self._svg_with(annotations, 34, None, collapsed)
        # The widest drawing, in points, that shows at fit_width CSS pixels at the legible scale.
        limit = self.fit_width * 3 / 4 / LEGIBLE_SCALE
        choices = [collapsed]
        if self.has_parts and not self._user_collapse:
            counts = drawing.part_counts()
            choices += [c for c in ({"backward"}, {"backward", "update"}) if all(counts.get(p) for p in c)]
        deadline = time.monotonic() + self.FIT_SECONDS
        # First unfolded, each part choice in turn; then folded rows, least collapsed first.
        tries = []
        for parts in choices:
            plain = self._svg_with(annotations, 34, None, parts)
            tries.append((svg_width_pt(plain), plain, 34, None, parts))
            if tries[-1][0] <= limit or time.monotonic() > deadline:
                break
        if tries[-1][0] > limit:
            for (width, plain, _, _, parts) in list(tries):
                hint = GraphDot.rows_from_svg(plain)
                longest = max(Counter(r for r, _ in hint.values()).values(), default=1)
                per_row = max(2, int(limit * longest / max(width, 1.0)))
                for wrap, max_row in ((20, per_row), (14, max(2, per_row // 2))):
                    if time.monotonic() > deadline:
                        break
                    svg = self._svg_with(annotations, wrap, max_row, parts, hint)
                    tries.append((svg_width_pt(svg), svg, wrap, max_row, parts))
                    if tries[-1][0] <= limit:
                        break
                if tries[-1][0] <= limit or time.monotonic() > deadline:
                    break
        fitting = [t for t in tries if t[0] <= limit]
        best = fitting[0] if fitting else min(tries, key=lambda t: t[0])
        width, svg, wrap, max_row, parts = best
        folds = []
        if wrap != 34:
            folds.append(f"labels wrapped at {wrap} characters")
        if max_row:
            folds.append(f"rows of at most {max_row} boxes")
        self._auto_collapsed = parts != collapsed
        self.auto_collapsed = self._auto_collapsed
        if self._auto_collapsed:
            names = " and ".join(sorted(parts - collapsed))
            folds.append(f"{names} collapsed (click a collapsed box, or tick 'collapse backward', to choose)")
        drawing.collapsed = frozenset(parts)
        fits = width <= limit
        if folds:
            self.fit_note = f"Folded to fit {self.fit_width} px: " + ", ".join(folds) + (
                "." if fits else "; still wider: scroll sideways.")
        else:
            self.fit_note = "" if fits else f"Wider than {self.fit_width} px at a legible size: scroll sideways."
        return svg


__all__ = ["FitsWidth", "LEGIBLE_SCALE", "svg_width_pt"]
