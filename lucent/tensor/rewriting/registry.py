"""Registering tensor rewrites into the global database under stage tags.

``@register_canonicalize`` (and the stabilize / specialize variants) put a
node rewriter into the matching stage of ``optdb`` with the ``fast_run``
tag (and ``fast_compile`` when the rewrite is cheap enough for that mode,
``register_canonicalize(..., "fast_compile")``). Modes then pick rewrites
by tag, so adding a rewrite never means editing a mode.
"""

from __future__ import annotations

from lucent.graph.rewriting.db import (
    canonicalize_db,
    fusion_db,
    inplace_db,
    specialize_db,
    stabilize_db,
)


def _register(db, default_tags):
    def register(rewriter=None, *tags, name=None, **kwargs):
        if isinstance(rewriter, str):
            # Used as @register_x("tag", ...)
            tags = (rewriter, *tags)

            def decorator(inner):
                return register(inner, *tags, name=name, **kwargs)

            return decorator
        if rewriter is None:
            def decorator(inner):
                return register(inner, *tags, name=name, **kwargs)

            return decorator
        rw_name = name or getattr(rewriter, "name", None) or getattr(rewriter, "__name__", None)
        db.register(rw_name, rewriter, *default_tags, *tags, **kwargs)
        return rewriter

    return register


register_canonicalize = _register(canonicalize_db, ("fast_run", "canonicalize"))
register_stabilize = _register(stabilize_db, ("fast_run", "stabilize"))
register_specialize = _register(specialize_db, ("fast_run", "specialize"))
register_fusion = _register(fusion_db, ("fast_run", "fusion"))
register_inplace = _register(inplace_db, ("fast_run", "inplace"))

__all__ = [
    "register_canonicalize",
    "register_stabilize",
    "register_specialize",
    "register_fusion",
    "register_inplace",
]
