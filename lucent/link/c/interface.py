"""The C-linker interfaces, kept so that code written against them still imports.

``CLinkerObject``, ``CLinkerType`` and ``CLinkerOp`` are defined in
``lucent.graph.c_interface``: ``lucent.graph.type.Type`` is built on
``CLinkerType`` (as the Type specification requires) and the graph layer
cannot import this one. This module is their public home; the classes are
the same objects, so ``isinstance`` checks and subclasses agree whichever
path they were imported from.
"""

from lucent.graph.c_interface import CLinkerObject, CLinkerOp, CLinkerType, _undefined  # noqa: F401
from lucent.graph.utils import MethodNotDefined

__all__ = ["CLinkerObject", "CLinkerType", "CLinkerOp", "MethodNotDefined"]
