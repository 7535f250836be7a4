"""Where the scan rewrites run in the compile pipeline (``optdb`` positions and tags).

Before the graph's own rewrites finish (positions 1.1-1.12, after
canonicalisation) work is moved out of loop bodies (accumulated products of
sequence slices become one product, 1.115) and unused loop inputs
and outputs are dropped; after stabilisation loops over the same steps are
merged (1.6) and cleaned again, then the steps after the last one read are
dropped (1.609), outputs of which only the last rows are read are
shortened to ring buffers (1.61) and states of which only the last
value is read become untraced states (1.62). Once the graph is final, the
in-place pass (50.5, before the element-wise in-place rewrites) lets loops
write into the buffers they were given, and last (100) each loop body gets
the ``fast_run`` rewrites itself (``inner_graph``).
"""

from __future__ import annotations

from lucent.graph.rewriting.basic import in2out
from lucent.graph.rewriting.db import optdb
from lucent.scan.rewriting.inner_graph import ScanInnerGraphRewriter
from lucent.scan.rewriting.inplace import ScanInplaceOptimizer
from lucent.scan.rewriting.io import (
    scan_inline_invariant_constants,
    scan_merge_duplicate_inputs,
    scan_remove_unused,
)
from lucent.scan.rewriting.merge import ScanMerge
from lucent.scan.rewriting.push_out import (
    scan_push_out_add,
    scan_push_out_non_seq,
    scan_push_out_seq,
)
from lucent.scan.rewriting.trace import (
    scan_reduce_nsteps,
    scan_reduce_trace_prealloc,
    scan_sit_sot_to_untraced,
)


def _cleanup(name):
    return in2out(
        scan_remove_unused, scan_inline_invariant_constants, scan_merge_duplicate_inputs, name=name
    )


optdb.register(
    "scan_input_and_output_cleanup0",
    _cleanup("scan_input_and_output_cleanup0"),
    "fast_run", "scan", "scan_inline_invariant_constants", "scan_merge_duplicate_inputs",
    position=1.09,
)
optdb.register(
    "scan_push_out_non_seq",
    in2out(scan_push_out_non_seq, name="scan_push_out_non_seq"),
    "fast_run", "scan", "scan_pushout", "scan_pushout_nonseqs_ops",
    position=1.1,
)
optdb.register(
    "scan_push_out_seq",
    in2out(scan_push_out_seq, name="scan_push_out_seq"),
    "fast_run", "scan", "scan_pushout", "scan_pushout_seqs_ops",
    position=1.11,
)
optdb.register(
    "scan_push_out_add",
    in2out(scan_push_out_add, name="scan_push_out_add"),
    "fast_run", "more_mem", "scan", "scan_pushout", "scan_pushout_add",
    position=1.115,
)
optdb.register(
    "scan_remove_unused",
    in2out(scan_remove_unused, name="scan_remove_unused"),
    "fast_run", "scan",
    position=1.12,
)
optdb.register("scan_merge", ScanMerge(), "fast_run", "scan", position=1.6)
optdb.register(
    "scan_input_and_output_cleanup2",
    _cleanup("scan_input_and_output_cleanup2"),
    "fast_run", "scan", "scan_remove_unused", "scan_inline_invariant_constants",
    "scan_merge_duplicate_inputs",
    position=1.605,
)
optdb.register(
    "scan_reduce_nsteps",
    in2out(scan_reduce_nsteps, name="scan_reduce_nsteps"),
    "fast_run", "scan", "scan_save_mem", "scan_reduce_nsteps",
    position=1.609,
)
optdb.register(
    "scan_save_mem",
    in2out(scan_reduce_trace_prealloc, name="scan_reduce_trace_prealloc"),
    "fast_run", "scan", "scan_save_mem", "scan_reduce_trace_prealloc", "scan_save_mem_prealloc",
    position=1.61,
)
optdb.register(
    "scan_sit_sot_to_untraced",
    in2out(scan_sit_sot_to_untraced, name="scan_sit_sot_to_untraced"),
    "fast_run", "scan",
    position=1.62,
)
# after the graph's last merge, loop inputs computed twice are one variable
optdb.register(
    "scan_input_and_output_cleanup3",
    _cleanup("scan_input_and_output_cleanup3"),
    "fast_run", "scan", "scan_remove_unused", "scan_inline_invariant_constants",
    "scan_merge_duplicate_inputs",
    position=49.7,
)
optdb.register(
    "scan_make_inplace", ScanInplaceOptimizer(), "fast_run", "inplace", "scan", position=50.5
)
# Not tagged "scan": like PyTensor's, the bodies are rewritten even when the loop-level
# rewrites are excluded (``excluding("scan")``), so equal bodies give equal ops.
optdb.register(
    "scan_inner_graph", ScanInnerGraphRewriter(), "fast_run", "compile_inner_graph",
    "scan_inner_graph",
    position=100,
)

__all__ = []
