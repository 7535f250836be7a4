"""Rewriting the step graph of each loop with the outer graph's rewrites.

A ``Scan``'s inner graph is built from the user's step function as written.
The loop-level rewrites (``push_out``, ``merge``, ...) work on the loop as a
node; this pass, at the end of the pipeline, also gives the body itself the
``fast_run`` rewrites (canonicalisation, stabilisation, specialisation,
fusion, and the scan rewrites for loops nested in the body, which are
therefore merged, pushed out and shortened like outer ones). The node is
replaced by a ``Scan`` with the rewritten body, so the rewritten graph is
what every path runs and what ``dprint`` and the debugging tools show.

The in-place rewrites are included, for the values a step computes: an
element-wise node may write into the buffer of the product before it, so
a step allocates once per chain rather than once per node. A step's inputs
are views of the loop's buffers and sequences, which later steps still
read: they are protected (not in ``destroyable_inputs``), so the
``DestroyHandler`` refuses any rewrite that would write into one. The
exception is a state the loop carries without tracing it
(``untraced_sit_sot``: a random generator, or a tensor such as a gradient
accumulated over the steps): the loop owns it (both paths copy the
starting value unless the loop may destroy it) and only the next step
reads a step's value, so the body may update it in place. A generator's
draws then advance it instead of copying it, and an accumulator
(``gW += outer(da, h)`` in the gradient of a recurrence) is added to in
place instead of being copied into a new matrix at every step.

The body's rewriting is recorded in the cloned body's own
``RewriteHistory``; the new op keeps it (``inner_rewrite_history``, also
when served from ``_DONE``) and the outer history links it to the record
of the replacement (``InnerGraphRewriter.apply``), so ``str(history)`` and
``RewriteView`` show what happened inside each loop, nested loops too.
"""

from __future__ import annotations

import copy
import weakref

from lucent.compile.builders_rewriting import InnerGraphRewriter
from lucent.scan.op import Scan

#: ``Scan`` ops already rewritten (to the op with the rewritten body), so equal
#: loops met again (nested bodies, recompiles) are not rewritten twice.
_DONE = weakref.WeakKeyDictionary()


def scan_with_rewritten_body(op):
    """A ``Scan`` like ``op`` whose body has the ``fast_run`` rewrites (inputs protected)."""
    from lucent.graph.destroyhandler import DestroyHandler
    from lucent.graph.rewriting.db import RewriteDatabaseQuery, optdb

    if getattr(op, "_inner_rewritten", False):
        return op
    done = _DONE.get(op)  # equal ops may differ in destroy_map (not part of equality)
    if done is not None:
        if done.destroy_map != op.destroy_map:
            done = copy.copy(done)
            done._fn = None
            done.destroy_map = dict(op.destroy_map)
        return done
    fgraph = op.fgraph.clone()
    lay = op.layout
    fgraph.destroyable_inputs = set(fgraph.inputs[lay.i_untraced : lay.i_non_seqs])
    fgraph.attach_feature(DestroyHandler())
    optdb.query(RewriteDatabaseQuery(include=["fast_run"])).rewrite(fgraph)
    _draw_in_place(op, fgraph)
    new_op = op.clone_with_inner_graph(fgraph)
    new_op.destroy_map = dict(op.destroy_map)
    new_op._inner_rewritten = True
    new_op.inner_rewrite_history = getattr(fgraph, "rewrite_history", None)
    _DONE[op] = new_op
    return new_op


def _draw_in_place(op, fgraph):
    """Let the body's draws advance the random generators the loop carries.

    An untraced generator state is the loop's own (both paths copy the starting
    generator before the first step unless the loop may destroy it), and each
    step's value is only read by that step: a draw may advance it instead of
    copying it, which a loop of draws would otherwise do at every step. (The
    untraced states are destroyable inputs of the body, see
    ``scan_with_rewritten_body``.)
    """
    from lucent.tensor.random.rewriting.basic import random_make_inplace
    from lucent.tensor.random.type import RandomGeneratorType

    lay = op.layout
    gens = [
        v for v in fgraph.inputs[lay.i_untraced : lay.i_non_seqs] if isinstance(v.type, RandomGeneratorType)
    ]
    if gens:
        random_make_inplace.rewrite(fgraph)


class ScanInnerGraphRewriter(InnerGraphRewriter):
    """Replace every ``Scan`` by one whose body is rewritten (see the module docstring)."""

    name = "scan_inner_graph"
    kind = "scan"

    def rewritten(self, op):
        return scan_with_rewritten_body(op) if isinstance(op, Scan) else op


__all__ = ["ScanInnerGraphRewriter", "scan_with_rewritten_body"]
