"""Opening the inner graphs of a ``GraphView``: the level shown, the path to it, and its API (a mixin).

What an inner graph shows and where its values come from is
``lucent.widgets.inner_graphs``; this module is the view's side: which
level is shown (``inner_path``, the local ids opened, outermost first),
how a click, a breadcrumb, a selection from a linked widget or a script
move between levels, and which DebugMode problems sit in the level shown.
"""

from __future__ import annotations

from lucent.widgets.inner_graphs import InnerLevel, locate_inner_problems, opens_inner_graph


class OpensInnerGraphs:
    """``open_inner``, ``close_inner``, ``inner_step``, ``inner_location`` of ``GraphView``.

    It uses the view's ``_drawing``, ``_static``, ``_values``, ``_svg_cache``
    (the outer graph), ``_levels``, ``_level_cache``, ``_pinned``,
    ``_copies``, ``_replays``, ``_located``, ``_report()``, ``_profile()``, ``_render`` and
    the ``inner_path``, ``crumbs``, ``id_prefix`` and ``selected`` traits.
    """

    def _shown(self):
        """``(drawing, entries, values, svg cache, id prefix)`` of the graph shown (outer or opened)."""
        if self._levels:
            level = self._levels[-1]
            return level.drawing, level.static, level.values, level.svg_cache, level.prefix
        return self._drawing, self._static, self._values, self._svg_cache, ""

    def _levels_for(self, path):
        """The ``InnerLevel`` of each step of ``path`` (local ids), made or reused; ``ValueError`` if it does not open."""
        levels, drawing = [], self._drawing
        for k, local in enumerate(path):
            node = drawing.objects.get(local)
            if drawing.kinds.get(local) != "apply" or not opens_inner_graph(node):
                where = "/".join(path[:k]) or "the outer graph"
                raise ValueError(f"{local!r} is not a node of {where} that has an inner graph to open "
                                 f"(those are: {', '.join(sorted(drawing.openable)) or 'none'})")
            key = tuple(path[: k + 1])
            level = self._level_cache.get(key)
            if level is None or level.node is not node or level.pinned_step != self._pinned.get(key):
                level = InnerLevel(node, key, step=self._pinned.get(key))
                level.drawing.hidden = level.drawing.bookkeeping_ids() if self.hide_bookkeeping else frozenset()
                level.drawing.regroup(self.group_by or None)
                self._level_cache[key] = level
            levels.append(level)
            drawing = level.drawing
        return levels

    def _run_levels(self):
        """Recompute the opened levels' values when the outer replay is newer than theirs."""
        copies = self._copies
        for level in self._levels:
            if level.stamp != self._replays:
                level.run(copies.inputs_of(level.node) if self._replays else None)
                level.stamp = self._replays
            copies = level.copies

    def _inner_profiles(self):
        """The nested profile (``InnerProfileStats``) of each opened level, outermost first, or ``None``.

        The outer profile keys its children by the outer graph's nodes; a
        child keys its own (a loop in the loop) by the nodes of the graph it
        profiled, a compiled copy of the drawn one, so each level goes
        through its match of drawn to profiled nodes (``InnerLevel.profiled``).
        """
        out, profile, match = [], self._profile(), None
        for level in self._levels:
            key = level.node if match is None else match.get(level.node)
            children = getattr(profile, "inner_profiles", None) or {}
            child = children.get(key) if key is not None else None
            out.append(child)
            profile, match = child, (level.profiled(child) if child is not None else {})
        return out

    def _on_inner_path(self, change):
        # A pinned step lasts while its level is open: a level closed (a breadcrumb) and
        # opened again (a click on the box) shows the last step, as the box promises.
        new = list(change["new"])
        for key in [k for k in self._pinned if list(k) != new[: len(k)]]:
            del self._pinned[key]
        try:
            levels = self._levels_for(new)
        except ValueError:  # a stale path from the browser: stay where we were
            self.set_trait("inner_path", list(change["old"]))
            return
        self._levels = levels
        prefix = levels[-1].prefix if levels else ""
        with self.hold_sync():
            self.crumbs = ["outer graph"] + [level.title for level in levels]
            self.id_prefix = prefix
            selected = self.selected
            if selected and (selected.rsplit("/", 1)[0] + "/" if "/" in selected else "") != prefix:
                self.set_trait("selected", "")
            self._render(force=True)

    def _on_selected(self, change):
        """A selection in another level (from a linked widget, a problem, a search) opens that level."""
        ident = change["new"]
        if not ident:
            return
        path = ident.split("/")[:-1]
        if path != list(self.inner_path):
            try:
                self._levels_for(path)
            except ValueError:
                return
            self.inner_path = path

    def _located_problems(self):
        """``locate_inner_problems`` of the report shown, computed once per report."""
        report = self._report()
        if self._located[0] is not report:
            fgraph = getattr(report, "fgraph", None) or (
                self._fn.maker.fgraph if self._fn is not None else self._source_fgraph)
            self._located = (report, locate_inner_problems(fgraph, report) if report is not None else {})
        return self._located[1]

    def _inner_problems_by_id(self, level):
        """``{qualified id: [problem dicts]}`` of the report's problems DebugMode placed in ``level``'s graph."""
        out = {}
        for problem, path in self._located_problems().items():
            for loop, step, inner in path:
                ident = level.drawing.ids.get(inner) if loop is level.node else None
                if ident is not None:
                    out.setdefault(level.prefix + ident, []).append({
                        "kind": problem.kind, "summary": problem.summary,
                        "path": getattr(problem, "path", None), "step": step,
                    })
        return out

    def inner_location(self, problem):
        """``(qualified id, steps)`` of the inner node where DebugMode placed ``problem``, or ``None``.

        The id is ``<loop id>/<inner id>`` (``n7/n2``; deeper for a loop in
        a loop), ``steps`` the loop step at each level, outermost first;
        ``show_inner_node(id, steps)`` opens it. ``problem`` is one of the
        report's problems.
        """
        path = self._located_problems().get(problem)
        if not path:
            return None
        ids, steps, drawing = [], [], self._drawing
        for loop, step, inner in path:
            loop_id = drawing.ids.get(loop)
            if loop_id is None:
                return None
            ids.append(loop_id)
            steps.append(step)
            drawing = self._levels_for(ids)[-1].drawing
            if inner not in drawing.ids:
                return None
        return "/".join(ids + [drawing.ids[inner]]), steps

    def show_inner_node(self, ident, steps=None):
        """Open the levels to the inner node ``ident`` (``n7/n2``) and select it; returns ``ident``.

        ``steps`` pins the loop step shown at each level, outermost first
        (``None`` entries, or no list: the last step).
        """
        path = ident.split("/")[:-1]
        steps = list(steps or [])
        for k in range(len(path)):
            step = steps[k] if k < len(steps) else None
            if step is None:
                self._pinned.pop(tuple(path[: k + 1]), None)
            else:
                self._pinned[tuple(path[: k + 1])] = step
        self._levels_for(path)
        if path != list(self.inner_path):
            self.inner_path = path
        else:
            self._on_inner_path({"old": path, "new": path})
        self.select(ident)
        return ident

    def open_inner(self, node_or_id, step=None):
        """Open the inner graph of a node (a Scan, an OpFromGraph) and show it; returns ``inner_path``.

        ``node_or_id`` is an id of the graph shown (``"n7"``), a qualified
        id (``"n7/n2"``: node ``n2`` inside ``n7``), or an Apply node of the
        graph shown or of the outer graph. Inner nodes show the values of
        the last step of the last replayed call, or of loop step ``step``
        (counted from 0) when given. ``ValueError`` when it has no inner graph.
        (Not ``open``: that name is the widget's own, it opens the comm.)
        """
        path = self._path_of(node_or_id)
        key = tuple(path)
        if step is None:
            self._pinned.pop(key, None)
        elif not isinstance(step, int) or isinstance(step, bool) or step < 0:
            raise ValueError(f"step must be a loop step >= 0 (counted from 0) or None (the last), got {step!r}")
        else:
            self._pinned[key] = step
        self._levels_for(path)  # raises ValueError for a node without an inner graph
        if path == list(self.inner_path):
            self._on_inner_path({"old": path, "new": path})
        else:
            self.inner_path = path
        return list(self.inner_path)

    def _path_of(self, node_or_id):
        if isinstance(node_or_id, str):
            if "/" in node_or_id:
                return node_or_id.split("/")
            return list(self.inner_path) + [node_or_id]
        for level in reversed(self._levels):
            if node_or_id in level.drawing.ids:
                return level.path + [level.drawing.ids[node_or_id]]
        return [self._drawing.id_of(node_or_id)]

    def close_inner(self, all=False):
        """Go back one level (``all=True``: to the outer graph); returns ``inner_path``."""
        self.inner_path = [] if all else list(self.inner_path)[:-1]
        return list(self.inner_path)

    @property
    def inner_step(self):
        """``(step shown, steps run)`` of the opened loop (steps from 0), or ``None`` (not in a loop, no value)."""
        if not self._levels:
            return None
        self._run_levels()
        level = self._levels[-1]
        return None if level.step is None else (level.step, level.n_steps)

    @property
    def shown_drawing(self):
        """The ``GraphDot`` shown now: the outer graph's, or the opened inner graph's."""
        return self._shown()[0]


__all__ = ["OpensInnerGraphs"]
