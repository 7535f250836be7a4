"""Rewrite databases: rewrites registered under names and tags, queried by modes.

A mode does not list rewrites; it asks a database for every rewrite tagged
``fast_run`` (say) except those tagged ``inplace``. That keeps modes, the
rewrites and user-registered rewrites independent: registering a rewrite with
the right tag is enough for every mode to pick it up.

* ``RewriteDatabaseQuery(include, require, exclude)`` says what to select;
* ``EquilibriumDB`` turns the selected node rewriters into one
  ``EquilibriumGraphRewriter`` (applied until nothing changes);
* ``SequenceDB`` orders its entries by ``position`` and runs them in sequence;
  an entry may itself be a database, queried with the same tags;
* ``TopoDB`` walks the graph once with the selected node rewriters.

``optdb`` is the global sequence every compiled function runs through.
"""

from __future__ import annotations

import math
from typing import Iterable

from lucent.graph.rewriting.basic import (
    EquilibriumGraphRewriter,
    GraphRewriter,
    MergeRewriter,
    NodeRewriter,
    NodeRewriterGroup,
    Rewriter,
    SequentialGraphRewriter,
    WalkingGraphRewriter,
)


class RewriteDatabaseQuery:
    """Which rewrites to select: any tag of ``include``, all of ``require``, none of ``exclude``."""

    def __init__(self, include: Iterable[str] = (), require: Iterable[str] = (),
                 exclude: Iterable[str] = (), subquery=None, position_cutoff=math.inf,
                 extra_rewrites=()):
        self.include = frozenset(include)
        self.require = frozenset(require)
        self.exclude = frozenset(exclude)
        self.subquery = dict(subquery or {})
        self.position_cutoff = position_cutoff
        self.extra_rewrites = tuple(extra_rewrites)

    def __repr__(self):
        parts = [f"include={sorted(self.include)}"]
        if self.require:
            parts.append(f"require={sorted(self.require)}")
        if self.exclude:
            parts.append(f"exclude={sorted(self.exclude)}")
        return f"RewriteDatabaseQuery({', '.join(parts)})"

    def _copy(self, **changes):
        kw = dict(include=self.include, require=self.require, exclude=self.exclude,
                  subquery=self.subquery, position_cutoff=self.position_cutoff,
                  extra_rewrites=self.extra_rewrites)
        kw.update(changes)
        return RewriteDatabaseQuery(**kw)

    def including(self, *tags):
        return self._copy(include=self.include | set(tags))

    def excluding(self, *tags):
        return self._copy(exclude=self.exclude | set(tags))

    def requiring(self, *tags):
        return self._copy(require=self.require | set(tags))

    def register(self, *rewrites):
        return self._copy(extra_rewrites=self.extra_rewrites + tuple(rewrites))

    def __eq__(self, other):
        return isinstance(other, RewriteDatabaseQuery) and repr(self) == repr(other)

    def __hash__(self):
        return hash(repr(self))


class RewriteDatabase:
    """Rewrites (or nested databases) by name, each with a set of tags."""

    def __init__(self):
        self._names: dict[str, object] = {}
        self._tags: dict[str, set[str]] = {}
        self.__position__: dict[str, float] = {}

    def register(self, name: str, rewriter, *tags: str, use_db_name_as_tag=True, position=None):
        """Register ``rewriter`` as ``name`` with ``tags`` (its name is a tag too)."""
        if not isinstance(rewriter, (Rewriter, RewriteDatabase)):
            raise TypeError(f"Cannot register {rewriter!r}: expected a rewriter or a database")
        if name in self._names:
            raise ValueError(f"A rewrite named {name!r} is already registered")
        self._names[name] = rewriter
        all_tags = set(tags) | {name}
        if use_db_name_as_tag and getattr(self, "name", None):
            all_tags.add(self.name)
        self._tags[name] = all_tags
        if position is not None:
            self.__position__[name] = position
        if getattr(rewriter, "name", None) is None and isinstance(rewriter, Rewriter):
            rewriter.name = name

    def add_tags(self, name, *tags):
        self._tags[name].update(tags)

    def remove_tags(self, name, *tags):
        self._tags[name].difference_update(tags)

    def __contains__(self, name):
        return name in self._names

    def __getitem__(self, name):
        return self._names[name]

    def names(self):
        return list(self._names)

    def tags_of(self, name):
        return set(self._tags[name])

    def _selected(self, q: RewriteDatabaseQuery):
        """Names whose tags match the query, with nested databases queried too."""
        out = []
        for name, rw in self._names.items():
            tags = self._tags[name]
            if self.__position__.get(name, 0) >= q.position_cutoff:
                continue
            if tags & q.exclude:
                continue
            if not q.require <= tags and not isinstance(rw, RewriteDatabase):
                continue
            if not (tags & q.include):
                continue
            if isinstance(rw, RewriteDatabase):
                sub_q = q.subquery.get(name, q)
                rw = rw.query(sub_q)
                if rw is None:
                    continue
            out.append((name, rw))
        return out

    def query(self, *tags, **kwargs):
        """The rewriter for ``query``: ``db.query('fast_run', '-inplace')`` or a query object."""
        if len(tags) == 1 and isinstance(tags[0], RewriteDatabaseQuery):
            q = tags[0]
        else:
            include = [t[1:] if t.startswith("+") else t for t in tags if not t.startswith(("-", "&"))]
            exclude = [t[1:] for t in tags if t.startswith("-")]
            require = [t[1:] for t in tags if t.startswith("&")]
            q = RewriteDatabaseQuery(include, require, exclude, **kwargs)
        return self._build(q)

    def _build(self, q):
        return SequentialGraphRewriter(*[rw for _, rw in self._selected(q)])

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(self._names)})"


class EquilibriumDB(RewriteDatabase):
    """Selected rewrites are applied together until the graph stops changing."""

    def __init__(self, max_use_ratio=20, name=None):
        super().__init__()
        self.max_use_ratio = max_use_ratio
        self.name = name

    def _build(self, q):
        selected = [rw for _, rw in self._selected(q)] + list(q.extra_rewrites)
        if not selected:
            return None
        flat = []
        for rw in selected:
            if isinstance(rw, SequentialGraphRewriter):
                flat.extend(rw.data)
            else:
                flat.append(rw)
        return EquilibriumGraphRewriter(flat, max_use_ratio=self.max_use_ratio, name=self.name)


class SequenceDB(RewriteDatabase):
    """Selected rewrites run once each, ordered by their registered ``position``."""

    def __init__(self, name=None):
        super().__init__()
        self.name = name

    def register(self, name, rewriter, *tags, position="last", **kwargs):
        if position == "last":
            position = max(self.__position__.values(), default=0) + 1
        super().register(name, rewriter, *tags, position=position, **kwargs)

    def _build(self, q):
        selected = sorted(self._selected(q), key=lambda item: self.__position__.get(item[0], 0))
        rewriters = []
        for name, rw in selected:
            if isinstance(rw, NodeRewriter):
                rw = WalkingGraphRewriter(rw, name=name)
            rewriters.append(rw)
        if not rewriters:
            return None
        return SequentialGraphRewriter(*rewriters, name=self.name)


class TopoDB(RewriteDatabase):
    """Selected node rewriters applied in one walk over the graph."""

    def __init__(self, order="in_to_out", name=None):
        super().__init__()
        self.order = order
        self.name = name

    def _build(self, q):
        selected = [rw for _, rw in self._selected(q) if isinstance(rw, NodeRewriter)]
        if not selected:
            return None
        group = selected[0] if len(selected) == 1 else NodeRewriterGroup(*selected)
        return WalkingGraphRewriter(group, self.order, name=self.name)


# The global database that modes query. Stages run in this order:
#   merge (0) -> canonicalize (1) -> stabilize (1.5) -> specialize (2)
#   -> merge (48.5) -> fusion (49) -> merge again (49.5) -> inplace (75)
# The merge before fusion matters: stabilize/specialize may rebuild equal
# subexpressions, and two fused nodes computing the same thing can no longer
# be merged.
optdb = SequenceDB(name="optdb")
optdb.register("merge1", MergeRewriter(), "fast_run", "fast_compile", "merge", position=0)
canonicalize_db = EquilibriumDB(name="canonicalize")
stabilize_db = EquilibriumDB(name="stabilize")
specialize_db = EquilibriumDB(name="specialize")
fusion_db = SequenceDB(name="fusion")
inplace_db = SequenceDB(name="inplace")
optdb.register("canonicalize", canonicalize_db, "fast_run", "fast_compile", position=1)
optdb.register("stabilize", stabilize_db, "fast_run", position=1.5)
optdb.register("specialize", specialize_db, "fast_run", position=2)
optdb.register("merge_before_fusion", MergeRewriter(), "fast_run", "merge", position=48.5)
optdb.register("fusion", fusion_db, "fast_run", position=49)
optdb.register("merge2", MergeRewriter(), "fast_run", "merge", position=49.5)
optdb.register("inplace", inplace_db, "fast_run", position=75)


__all__ = [
    "RewriteDatabaseQuery",
    "RewriteDatabase",
    "EquilibriumDB",
    "SequenceDB",
    "TopoDB",
    "optdb",
    "canonicalize_db",
    "stabilize_db",
    "specialize_db",
    "fusion_db",
    "inplace_db",
]
