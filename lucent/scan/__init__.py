"""Loops as graphs: ``scan`` and its views ``map``, ``reduce``, ``foldl``, ``foldr``.

A ``scan`` turns a Python function describing one step into a ``Scan``
node whose inner graph is that step; the node runs the loop (a Python loop
on the reference path, one native loop on the Numba path), has a gradient
(itself a scan, going backwards through the steps) and is simplified by the
rewrites in ``lucent.scan.rewriting``.
"""

from lucent.scan import rewriting  # noqa: F401  (registers the scan rewrites)
from lucent.scan.basic import scan
from lucent.scan.checkpoints import scan_checkpoints
from lucent.scan.utils import until
from lucent.scan.views import foldl, foldr, map, reduce

__all__ = ["foldl", "foldr", "map", "reduce", "scan", "scan_checkpoints", "until"]
